/* scn_select.c -- which nodes an entry of the scenario names: a list of
 * node numbers and ranges "a-b", or a seeded fraction of the nodes, or all
 * of them; and the membership test the per-node queries use.  Groups,
 * slowdowns, faults, NIC and link entries share these readers.  It does not
 * know what an entry does to its nodes.
 */
#include "scn_internal.h"
#include "sim_rng.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <gsl/gsl_randist.h>

/* One entry of a group's node list: a node number or "a-b". */
static int node_entry(scn_ctx *c, const char *ptr, json_t *v, int n_nodes, int *lo, int *hi,
                      int servers)
{
    const char *what = servers ? "a node number, a range \"a-b\", \"server\", \"server:K\" or "
                                 "\"servers\""
                               : "a node number or a range \"a-b\"";
    if (json_is_integer(v)) {
        long long x = json_integer_value(v);
        if (x < 0 || x >= n_nodes)
            return scn_i_fail(c, ptr, "must be in 0..%d, got %lld", n_nodes - 1, x);
        *lo = *hi = (int)x;
        return 0;
    }
    if (json_is_real(v)) {
        double x = json_real_value(v);
        if (x != floor(x))
            return scn_i_fail(c, ptr, "must be an integer, got %g", x);
        if (x < 0 || x >= n_nodes)
            return scn_i_fail(c, ptr, "must be in 0..%d, got %g", n_nodes - 1, x);
        *lo = *hi = (int)x;
        return 0;
    }
    if (json_is_string(v)) {
        const char *t = json_string_value(v);
        long long a = 0, b = 0;
        const char *q = t;
        char qs[128];
        int da = 0, db = 0;

        for (; *q >= '0' && *q <= '9'; q++, da++)
            a = a < INT_MAX ? a * 10 + (*q - '0') : a;
        if (*q == '-')
            for (q++; *q >= '0' && *q <= '9'; q++, db++)
                b = b < INT_MAX ? b * 10 + (*q - '0') : b;
        if (!da || !db || *q)
            return scn_i_fail(c, ptr, "must be %s, got %s", what,
                        scn_i_quoted(qs, sizeof qs, t));
        if (a > b)
            return scn_i_fail(c, ptr, "bad range %s: start is greater than end",
                        scn_i_quoted(qs, sizeof qs, t));
        if (b >= n_nodes)
            return scn_i_fail(c, ptr, "range %s is outside 0..%d", scn_i_quoted(qs, sizeof qs, t),
                        n_nodes - 1);
        *lo = (int)a;
        *hi = (int)b;
        return 0;
    }
    return scn_i_fail(c, ptr, "must be %s, got %s", what, scn_i_type_name(v));
}


static int cmp_int(const void *a, const void *b)
{
    int x = *(const int *)a, y = *(const int *)b;
    return (x > y) - (x < y);
}

/* "server", "servers" or "server:K" at index j: 1 when v is one (recorded
 * into sv), 0 when it is not a server name, -1 on an error. */
static int server_entry(scn_ctx *c, const char *ptr, json_t *v, int j, scn_servers *sv)
{
    if (!sv || !json_is_string(v))
        return 0;
    const char *t = json_string_value(v);
    char qs[128];
    int k;
    if (strcmp(t, "servers") == 0) {
        if (sv->named)
            return scn_i_fail(c, ptr, "\"servers\" names every server; this list already names "
                              "one");
        sv->all = 1;
        k = -1;
    } else if (strcmp(t, "server") == 0) {
        k = 0;
    } else if (strncmp(t, "server:", 7) == 0) {
        const char *q = t + 7;
        long long x = 0;
        int digits = 0;
        for (; *q >= '0' && *q <= '9'; q++, digits++)
            x = x < INT_MAX ? x * 10 + (*q - '0') : x;
        if (!digits || *q || x >= INT_MAX)
            return scn_i_fail(c, ptr, "must be \"server:K\" with K a server number >= 0, got %s",
                              scn_i_quoted(qs, sizeof qs, t));
        k = (int)x;
    } else {
        return 0;
    }
    if (k >= 0) {
        if (sv->all)
            return scn_i_fail(c, ptr, "\"servers\" already names every server, got %s",
                              scn_i_quoted(qs, sizeof qs, t));
        if (scn_names_server(sv, k))
            return scn_i_fail(c, ptr, "server %d is already in this list", k);
        if (strcmp(t, "server") == 0) {
            sv->plain = 1;
            sv->plain_at = j;
        } else {
            int *ks = realloc(sv->ks, (sv->n_ks + 1) * sizeof *ks);
            if (!ks)
                return scn_i_fail_oom(c);
            sv->ks = ks;
            ks[sv->n_ks++] = k;
            qsort(ks, sv->n_ks, sizeof *ks, cmp_int);
        }
        if (!sv->named || k > sv->max_k) {
            sv->max_k = k;
            sv->max_at = j;
        }
    } else if (!sv->named) {
        sv->max_k = -1;
    }
    if (!sv->named)
        sv->first_at = j;
    sv->named = 1;
    return 1;
}

int scn_names_server(const scn_servers *sv, int k)
{
    if (sv->all || (sv->plain && k == 0))
        return 1;
    for (size_t i = 0; i < sv->n_ks; i++)
        if (sv->ks[i] == k)
            return 1;
    return 0;
}

/* A list of node numbers and ranges at ptr into a sorted list. */
int scn_i_v_node_list(scn_ctx *c, json_t *list, const char *np, int n_nodes, int **nodes,
                       size_t *n_out)
{
    return scn_i_v_node_list_sv(c, list, np, n_nodes, nodes, n_out, NULL);
}

int scn_i_v_node_list_sv(scn_ctx *c, json_t *list, const char *np, int n_nodes, int **nodes,
                         size_t *n_out, scn_servers *sv)
{
    char ep[PTR_MAX];
    size_t j, count = 0;
    unsigned char *seen;
    json_t *e;

    *nodes = NULL;
    *n_out = 0;
    if (!json_is_array(list))
        return scn_i_fail(c, np, "must be an array, got %s", scn_i_type_name(list));
    if (json_array_size(list) == 0)
        return scn_i_fail(c, np, "must not be empty");
    if (!(seen = calloc((size_t)n_nodes, 1)))
        return scn_i_fail_oom(c);
    json_array_foreach(list, j, e) {
        int lo = 0, hi = -1, named;
        scn_i_ptr_idx(ep, np, j);
        if ((named = server_entry(c, ep, e, (int)j, sv)) < 0)
            goto out_fail;
        if (named)
            continue;
        if (node_entry(c, ep, e, n_nodes, &lo, &hi, sv != NULL))
            goto out_fail;
        for (int k = lo; k <= hi; k++) {
            if (seen[k]) {
                scn_i_fail(c, ep, "node %d is already in this group", k);
                goto out_fail;
            }
            seen[k] = 1;
            count++;
        }
    }
    /* never NULL, which would mean every node: a list of servers alone
     * names no worker */
    if (!(*nodes = malloc((count ? count : 1) * sizeof **nodes))) {
        scn_i_fail_oom(c);
        goto out_fail;
    }
    for (int k = 0; k < n_nodes; k++)
        if (seen[k])
            (*nodes)[(*n_out)++] = k;
    free(seen);
    return 0;

out_fail:
    free(seen);
    return -1;
}

static uint32_t fnv1a(const char *s)
{
    uint32_t h = 2166136261u;
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 16777619u;
    return h;
}

/* "nodes" (a list of numbers and ranges) or "fraction" (that share of the
 * nodes, rounded, drawn with the seed; the stream depends on the seed and
 * the pointer of the object).  Neither: every node (*nodes NULL) when
 * allow_all, else an error. */
int scn_i_v_select(scn_ctx *c, json_t *o, const char *ptr, const scn_scenario *s,
                    int allow_all, int **nodes, size_t *n_out, double *fraction)
{
    return scn_i_v_select_sv(c, o, ptr, s, allow_all, nodes, n_out, fraction, NULL);
}

int scn_i_v_select_sv(scn_ctx *c, json_t *o, const char *ptr, const scn_scenario *s,
                      int allow_all, int **nodes, size_t *n_out, double *fraction,
                      scn_servers *sv)
{
    json_t *list = json_object_get(o, "nodes"), *fr = json_object_get(o, "fraction");
    char np[PTR_MAX];
    int n_nodes = s->n_nodes;

    *nodes = NULL;
    *n_out = 0;
    *fraction = 0;
    if (list && fr)
        return scn_i_fail(c, ptr, "give \"nodes\" or \"fraction\", not both");
    if (fr) {
        double f = 0;
        if (scn_i_opt_num(c, o, ptr, "fraction", UNIT, &f, NULL))
            return -1;
        size_t k = (size_t)floor(f * n_nodes + 0.5);
        if (k == 0) {
            scn_i_ptr_key(np, ptr, "fraction");
            return scn_i_fail(c, np, "selects no node (%g of %d nodes rounds to 0)", f, n_nodes);
        }
        int *all = malloc((size_t)n_nodes * sizeof *all);
        *nodes = malloc(k * sizeof **nodes);
        gsl_rng *r = sim_rng_stream_create(s->seed, fnv1a(ptr), SIM_RNG_GROUPS);
        if (!all || !*nodes || !r) {
            free(all);
            gsl_rng_free(r);
            return scn_i_fail_oom(c);
        }
        for (int i = 0; i < n_nodes; i++)
            all[i] = i;
        gsl_ran_choose(r, *nodes, k, all, (size_t)n_nodes, sizeof *all);  /* keeps order */
        gsl_rng_free(r);
        free(all);
        *n_out = k;
        *fraction = f;
        return 0;
    }
    if (!list) {
        if (allow_all)
            return 0;
        return scn_i_fail(c, ptr, "missing required key \"nodes\" (or \"fraction\")");
    }
    scn_i_ptr_key(np, ptr, "nodes");
    return scn_i_v_node_list_sv(c, list, np, n_nodes, nodes, n_out, sv);
}

int scn_i_has_node(const int *nodes, size_t n, int node)
{
    if (!nodes)
        return 1;
    size_t lo = 0, hi = n;
    while (lo < hi) {   /* nodes are sorted: binary search */
        size_t mid = lo + (hi - lo) / 2;
        if (nodes[mid] < node)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < n && nodes[lo] == node;
}
