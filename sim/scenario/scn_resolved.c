/* scn_resolved.c -- the resolved scenario (defaults filled, overrides
 * applied) as canonical compact JSON with sorted keys and numbers in their
 * shortest exact form, for run.json.  Loading the text again gives the
 * same text.  It validates nothing.
 */
#include "scn_internal.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- resolved scenario -------------------------------------------------- */

typedef struct buf {
    char  *p;
    size_t len, cap;
    int    oom;
} buf;

static void put(buf *b, const char *s, size_t n)
{
    if (b->oom)
        return;
    if (b->len + n + 1 > b->cap) {
        size_t cap = b->cap ? b->cap : 256;
        char *p;
        while (b->len + n + 1 > cap)
            cap *= 2;
        if (!(p = realloc(b->p, cap))) {
            b->oom = 1;
            return;
        }
        b->p = p;
        b->cap = cap;
    }
    memcpy(b->p + b->len, s, n);
    b->len += n;
    b->p[b->len] = '\0';
}

static void puts_(buf *b, const char *s)
{
    put(b, s, strlen(s));
}

static void put_string(buf *b, const char *s)
{
    puts_(b, "\"");
    for (; *s; s++) {
        unsigned char ch = (unsigned char)*s;
        const char *se = scn_i_short_escape(ch);
        char e[8];
        if (se) {
            put(b, se, 2);
        } else if (ch < 0x20) {
            snprintf(e, sizeof e, "\\u%04x", ch);
            puts_(b, e);
        } else {
            put(b, s, 1);
        }
    }
    puts_(b, "\"");
}

/* Shortest text that reads back as exactly x (so 0.1 prints as 0.1, not
 * 0.10000000000000001), in Jansson's style: always a '.' or an exponent,
 * exponent without '+' or leading zeros.  Plain notation from 1e-4 up to
 * below 1e7, exponent notation outside. */
static void put_real(buf *b, double x)
{
    char t[40], out[40], *e;
    size_t k = 0;
    int prec = 1;

    for (; prec < 17; prec++) {
        snprintf(t, sizeof t, "%.*g", prec, x);
        if (strtod(t, NULL) == x)
            break;
    }
    snprintf(t, sizeof t, "%.*g", prec, x);
    e = strchr(t, 'e');
    if (e && atoi(e + 1) >= 0 && atoi(e + 1) < 7) {
        /* 10 as "10.0", not "1e1": plain notation below 10^7 */
        snprintf(t, sizeof t, "%.*g", atoi(e + 1) + 1, x);
        e = strchr(t, 'e');
    }
    if (!e) {
        puts_(b, t);
        if (!strchr(t, '.'))
            puts_(b, ".0");
        return;
    }
    memcpy(out, t, (size_t)(e - t));
    k = (size_t)(e - t);
    out[k++] = 'e';
    e++;
    if (*e == '+' || *e == '-') {
        if (*e == '-')
            out[k++] = '-';
        e++;
    }
    while (*e == '0' && e[1])
        e++;
    strcpy(out + k, e);
    puts_(b, out);
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* Compact JSON with keys sorted bytewise (like JSON_SORT_KEYS). */
static void dump(buf *b, json_t *v)
{
    char t[32];

    switch (json_typeof(v)) {
    case JSON_OBJECT: {
        size_t n = json_object_size(v), i = 0;
        const char **keys = malloc((n ? n : 1) * sizeof *keys);
        const char *k;
        json_t *x;
        if (!keys) {
            b->oom = 1;
            return;
        }
        json_object_foreach(v, k, x)
            keys[i++] = k;
        qsort(keys, n, sizeof *keys, cmp_str);
        puts_(b, "{");
        for (i = 0; i < n; i++) {
            if (i)
                puts_(b, ",");
            put_string(b, keys[i]);
            puts_(b, ":");
            dump(b, json_object_get(v, keys[i]));
        }
        puts_(b, "}");
        free(keys);
        break;
    }
    case JSON_ARRAY: {
        size_t i;
        json_t *x;
        puts_(b, "[");
        json_array_foreach(v, i, x) {
            if (i)
                puts_(b, ",");
            dump(b, x);
        }
        puts_(b, "]");
        break;
    }
    case JSON_STRING:
        put_string(b, json_string_value(v));
        break;
    case JSON_INTEGER:
        snprintf(t, sizeof t, "%" JSON_INTEGER_FORMAT, json_integer_value(v));
        puts_(b, t);
        break;
    case JSON_REAL:
        put_real(b, json_real_value(v));
        break;
    case JSON_TRUE:
        puts_(b, "true");
        break;
    case JSON_FALSE:
        puts_(b, "false");
        break;
    default:
        puts_(b, "null");
        break;
    }
}

/* Sets obj[key] = v; a NULL v (allocation failure) makes the result NULL. */
static void add(json_t *obj, const char *key, json_t *v, int *oom)
{
    if (!v || json_object_set_new(obj, key, v))
        *oom = 1;
}

static json_t *section(json_t *root, const char *key, int *oom)
{
    json_t *o = json_object();
    add(root, key, o, oom);
    return *oom ? NULL : o;
}

static json_t *resolved_tree(const scn_scenario *s, int *oom)
{
    static const char *const dists[] = {"constant", "uniform", "exponential", "lognormal"};
    json_t *root = json_object(), *o, *groups, *arr, *g;

    if (!root) {
        *oom = 1;
        return NULL;
    }
    add(root, "seed", json_integer((json_int_t)s->seed), oom);
    add(root, "nodes", json_integer(s->n_nodes), oom);

    if (!(o = section(root, "compute", oom)))
        return root;
    add(o, "step_time_s", json_real(s->step_time_s), oom);
    g = json_object();
    add(o, "noise", g, oom);
    if (*oom)
        return root;
    add(g, "dist", json_string(dists[s->noise]), oom);
    if (s->noise == SCN_NOISE_UNIFORM) {
        add(g, "low", json_real(s->noise_low), oom);
        add(g, "high", json_real(s->noise_high), oom);
    } else if (s->noise == SCN_NOISE_LOGNORMAL) {
        add(g, "sigma", json_real(s->noise_sigma), oom);
    }
    groups = json_array();
    add(o, "groups", groups, oom);
    for (size_t i = 0; i < s->n_groups && !*oom; i++) {
        g = json_object();
        if (json_array_append_new(groups, g)) {   /* takes g, even NULL */
            *oom = 1;
            break;
        }
        arr = json_array();
        add(g, "nodes", arr, oom);
        for (size_t j = 0; j < s->groups[i].n_nodes && !*oom; j++)
            if (json_array_append_new(arr, json_integer(s->groups[i].nodes[j])))
                *oom = 1;
        if (!*oom)
            add(g, "slowdown", json_real(s->groups[i].slowdown), oom);
    }

    if (!(o = section(root, "network", oom)))
        return root;
    add(o, "latency_s", json_real(s->latency_s), oom);
    add(o, "bandwidth_Bps", json_real(s->bandwidth_Bps), oom);
    add(o, "bytes_per_param", json_real(s->bytes_per_param), oom);

    if (!(o = section(root, "topology", oom)))
        return root;
    add(o, "kind", json_string(s->topology), oom);
    if (strcmp(s->topology, "torus2d") == 0) {
        add(o, "rows", json_integer(s->topo_rows), oom);
        add(o, "cols", json_integer(s->topo_cols), oom);
    } else if (strcmp(s->topology, "erdos_renyi") == 0) {
        add(o, "p", json_real(s->topo_p), oom);
    } else if (strcmp(s->topology, "random_regular") == 0) {
        add(o, "degree", json_integer(s->topo_degree), oom);
    } else if (strcmp(s->topology, "torus3d") == 0) {
        add(o, "rows", json_integer(s->topo_rows), oom);
        add(o, "cols", json_integer(s->topo_cols), oom);
        add(o, "layers", json_integer(s->topo_layers), oom);
    } else if (strcmp(s->topology, "ring_lattice") == 0) {
        add(o, "k", json_integer(s->topo_k), oom);
    } else if (strcmp(s->topology, "watts_strogatz") == 0) {
        add(o, "k", json_integer(s->topo_k), oom);
        add(o, "beta", json_real(s->topo_beta), oom);
    } else if (strcmp(s->topology, "barabasi_albert") == 0) {
        add(o, "m", json_integer(s->topo_m), oom);
    } else if (strcmp(s->topology, "edge_list") == 0) {
        add(o, "file", json_string(s->topo_file), oom);
    }
    add(o, "mixing", json_string(s->topo_mixing), oom);
    add(o, "lazy_alpha", json_real(s->topo_lazy_alpha), oom);

    if (!(o = section(root, "model", oom)))
        return root;
    add(o, "kind", json_string(s->model), oom);
    add(o, "l2", json_real(s->l2), oom);

    if (!(o = section(root, "data", oom)))
        return root;
    add(o, "kind", json_string("synthetic"), oom);
    add(o, "train", json_integer((json_int_t)s->data_train), oom);
    add(o, "test", json_integer((json_int_t)s->data_test), oom);
    add(o, "features", json_integer((json_int_t)s->data_features), oom);
    add(o, "classes", json_integer(s->data_classes), oom);
    add(o, "separation", json_real(s->data_separation), oom);
    add(o, "partition", json_string(s->partition), oom);

    if (!(o = section(root, "algorithm", oom)))
        return root;
    add(o, "name", json_string(s->algorithm), oom);
    add(o, "lr", json_real(s->lr), oom);
    add(o, "batch", json_integer((json_int_t)s->batch), oom);

    if (!(o = section(root, "stop", oom)))
        return root;
    if (!isinf(s->stop_time_s))
        add(o, "time_s", json_real(s->stop_time_s), oom);
    if (s->stop_steps > 0)
        add(o, "steps", json_integer(s->stop_steps), oom);
    if (!isnan(s->stop_target_loss))
        add(o, "target_loss", json_real(s->stop_target_loss), oom);
    if (!isnan(s->stop_target_accuracy))
        add(o, "target_accuracy", json_real(s->stop_target_accuracy), oom);

    if (!(o = section(root, "metrics", oom)))
        return root;
    add(o, "every_s", json_real(s->metrics_every_s), oom);
    add(o, "eval_samples", json_integer((json_int_t)s->metrics_eval_samples), oom);
    return root;
}

int scn_i_resolve(scn_ctx *c, scn_scenario *s)
{
    int oom = 0;
    json_t *tree = resolved_tree(s, &oom);
    buf b = {0};

    if (!oom)
        dump(&b, tree);
    json_decref(tree);
    if (oom || b.oom) {
        free(b.p);
        return scn_i_fail_oom(c);
    }
    s->resolved_json = b.p;
    return 0;
}
