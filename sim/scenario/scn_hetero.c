/* scn_hetero.c -- the heterogeneity keys of a scenario: step-time noise,
 * node groups (lists, ranges or a seeded fraction) with their speed and
 * noise, time-varying slowdowns, faults, NIC capacities and disciplines,
 * the output switches, and the trace files (CSV) that slowdowns and faults
 * may name, read here so that `dtsim validate` reports their errors as
 * FILE:LINE.  It validates and fills plain structs; it builds nothing.
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

/* ---- noise ---------------------------------------------------------------- */

int scn_i_v_noise(scn_ctx *c, json_t *parent, const char *pptr, cl_noise_spec *out)
{
    static const char *const keys[] = {"dist", "low", "high", "sigma", "floor", "shift",
                                       "shape", "alpha", NULL};
    const char *const *dists = scn_i_noise_names;
    static const char *const per_dist[][4] = {
        {"dist", NULL}, {"dist", "low", "high", NULL}, {"dist", NULL}, {"dist", "sigma", NULL},
        {"dist", "sigma", "floor", NULL}, {"dist", "shift", NULL}, {"dist", "shape", NULL},
        {"dist", "alpha", NULL},
    };
    char p[PTR_MAX], dp[PTR_MAX], why[64];
    const char *dist = "constant";
    json_t *n;
    int k;

    memset(out, 0, sizeof *out);
    out->floor = 0.1;
    if (scn_i_opt_obj(c, parent, pptr, "noise", &n, p) || scn_i_check_keys(c, n, p, keys) ||
        scn_i_opt_str(c, n, p, "dist", &dist, NULL))
        return -1;
    scn_i_ptr_key(dp, p, "dist");
    if ((k = scn_i_lookup(c, dp, "dist", dist, dists)) < 0 ||
        scn_i_kind_keys(c, n, p, per_dist[k], "dist", dist))
        return -1;
    out->dist = (cl_noise)k;
    snprintf(why, sizeof why, "for dist \"%s\"", dist);
    switch (out->dist) {
    case CL_NOISE_UNIFORM:
        if (scn_i_need_key(c, n, p, "low", why) || scn_i_need_key(c, n, p, "high", why) ||
            scn_i_opt_num(c, n, p, "low", GT0, &out->low, NULL) ||
            scn_i_opt_num(c, n, p, "high", GT0, &out->high, NULL))
            return -1;
        if (out->low > out->high) {
            scn_i_ptr_key(dp, p, "low");
            return scn_i_fail(c, dp, "must be <= high (%g), got %g", out->high, out->low);
        }
        break;
    case CL_NOISE_LOGNORMAL:
    case CL_NOISE_NORMAL:
        if (scn_i_need_key(c, n, p, "sigma", why) ||
            scn_i_opt_num(c, n, p, "sigma", GE0, &out->sigma, NULL) ||
            scn_i_opt_num(c, n, p, "floor", GT0, &out->floor, NULL))
            return -1;
        if (out->floor >= 1) {
            scn_i_ptr_key(dp, p, "floor");
            return scn_i_fail(c, dp, "must be < 1, got %g", out->floor);
        }
        /* beyond these, factors leave the range of a double (lognormal:
         * exp(-sigma^2/2) underflows to 0 at sigma 39) or become
         * meaningless; docs/reliability.md */
        if (out->sigma > (out->dist == CL_NOISE_LOGNORMAL ? 10 : 1e3)) {
            scn_i_ptr_key(dp, p, "sigma");
            return scn_i_fail(c, dp, "must be <= %g, got %g",
                              out->dist == CL_NOISE_LOGNORMAL ? 10 : 1e3, out->sigma);
        }
        break;
    case CL_NOISE_SHIFTED_EXPONENTIAL:
        if (scn_i_need_key(c, n, p, "shift", why) ||
            scn_i_opt_num(c, n, p, "shift", GE0, &out->shift, NULL))
            return -1;
        if (out->shift >= 1) {
            scn_i_ptr_key(dp, p, "shift");
            return scn_i_fail(c, dp, "must be < 1, got %g", out->shift);
        }
        break;
    case CL_NOISE_GAMMA:
        if (scn_i_need_key(c, n, p, "shape", why) ||
            scn_i_opt_num(c, n, p, "shape", GT0, &out->shape, NULL))
            return -1;
        break;
    case CL_NOISE_PARETO:
        if (scn_i_need_key(c, n, p, "alpha", why) ||
            scn_i_opt_num(c, n, p, "alpha", GT0, &out->alpha, NULL))
            return -1;
        if (out->alpha <= 1) {
            scn_i_ptr_key(dp, p, "alpha");
            return scn_i_fail(c, dp, "must be > 1 (the mean is infinite otherwise), got %g",
                              out->alpha);
        }
        break;
    default:
        break;
    }
    if (out->dist != CL_NOISE_NORMAL)
        out->floor = 0;
    return 0;
}

/* ---- node selections ------------------------------------------------------ */

/* One entry of a group's node list: a node number or "a-b". */
static int node_entry(scn_ctx *c, const char *ptr, json_t *v, int n_nodes, int *lo, int *hi)
{
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
            return scn_i_fail(c, ptr, "must be a node number or a range \"a-b\", got %s",
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
    return scn_i_fail(c, ptr, "must be a node number or a range \"a-b\", got %s", scn_i_type_name(v));
}


/* A list of node numbers and ranges at ptr into a sorted list. */
static int v_node_list(scn_ctx *c, json_t *list, const char *np, int n_nodes, int **nodes,
                       size_t *n_out)
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
        int lo = 0, hi = -1;
        scn_i_ptr_idx(ep, np, j);
        if (node_entry(c, ep, e, n_nodes, &lo, &hi))
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
    if (!(*nodes = malloc(count * sizeof **nodes))) {
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
static int v_select(scn_ctx *c, json_t *o, const char *ptr, const scn_scenario *s,
                    int allow_all, int **nodes, size_t *n_out, double *fraction)
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
    return v_node_list(c, list, np, n_nodes, nodes, n_out);
}

static int has_node(const int *nodes, size_t n, int node)
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

/* ---- groups --------------------------------------------------------------- */

static int v_group(scn_ctx *c, json_t *g, const char *gptr, const scn_scenario *s,
                   scn_group *out)
{
    static const char *const keys[] = {"nodes", "fraction", "slowdown", "step_time_s",
                                       "flops_per_s", "noise", NULL};
    int has_step, has_flops;

    if (!json_is_object(g))
        return scn_i_fail(c, gptr, "must be an object, got %s", scn_i_type_name(g));
    if (scn_i_check_keys(c, g, gptr, keys) ||
        v_select(c, g, gptr, s, 0, &out->nodes, &out->n_nodes, &out->fraction) ||
        scn_i_opt_num(c, g, gptr, "slowdown", GT0, &out->slowdown, NULL) ||
        scn_i_opt_num(c, g, gptr, "step_time_s", GT0, &out->step_time_s, &has_step) ||
        scn_i_opt_num(c, g, gptr, "flops_per_s", GT0, &out->flops_per_s, &has_flops))
        return -1;
    if (has_step && has_flops)
        return scn_i_fail(c, gptr, "give \"step_time_s\" or \"flops_per_s\", not both");
    if (json_object_get(g, "noise")) {
        out->has_noise = 1;
        if (scn_i_v_noise(c, g, gptr, &out->noise))
            return -1;
    }
    if (!out->slowdown && !has_step && !has_flops && !out->has_noise)
        return scn_i_fail(c, gptr, "sets nothing (give \"slowdown\", \"step_time_s\", "
                          "\"flops_per_s\" or \"noise\")");
    return 0;
}

int scn_i_v_groups(scn_ctx *c, json_t *compute, const char *cptr, scn_scenario *s)
{
    json_t *arr = compute ? json_object_get(compute, "groups") : NULL;
    char p[PTR_MAX], gp[PTR_MAX];
    size_t i, n;

    if (!arr)
        return 0;
    scn_i_ptr_key(p, cptr, "groups");
    if (!json_is_array(arr))
        return scn_i_fail(c, p, "must be an array, got %s", scn_i_type_name(arr));
    n = json_array_size(arr);
    if (n == 0)
        return 0;
    if (!(s->groups = calloc(n, sizeof *s->groups)))
        return scn_i_fail_oom(c);
    for (i = 0; i < n; i++) {
        scn_i_ptr_idx(gp, p, i);
        s->n_groups = i + 1;   /* so scn_fini frees a half-built group */
        if (v_group(c, json_array_get(arr, i), gp, s, &s->groups[i]))
            return -1;
    }
    return 0;
}

/* ---- trace files ---------------------------------------------------------- */

typedef struct line_pt {
    scn_point p;
    size_t    line;
} line_pt;

static int cmp_line_pt(const void *a, const void *b)
{
    const line_pt *x = a, *y = b;
    if (x->p.node != y->p.node)
        return x->p.node < y->p.node ? -1 : 1;
    return x->line < y->line ? -1 : x->line > y->line ? 1 : 0;
}

static char *trim(char *t)
{
    while (*t == ' ' || *t == '\t')
        t++;
    size_t k = strlen(t);
    while (k > 0 && (t[k - 1] == ' ' || t[k - 1] == '\t' || t[k - 1] == '\r' ||
                     t[k - 1] == '\n'))
        t[--k] = '\0';
    return t;
}

static int file_fail(scn_ctx *c, const char *file, size_t line, const char *msg)
{
    if (snprintf(c->err->msg, sizeof c->err->msg, "%s:%zu: error: %s", file, line, msg) < 0)
        c->err->msg[0] = '\0';
    return -1;
}

/* Reads a trace: "node,time_s,factor" (availability: "node,time_s,state"
 * with state up or down), one point a line, an optional header line, '#'
 * comments and blank lines skipped.  A relative file name is relative to
 * the scenario file's directory. */
static int read_trace(scn_ctx *c, const char *ptr, const char *file, int availability,
                      int n_nodes, scn_point **out, size_t *n_out)
{
    char path[4096], buf[1024], msg[512];
    const char *slash = strrchr(c->path, '/');
    size_t line = 0, n = 0, cap = 0;
    line_pt *pts = NULL;
    FILE *f;
    int rc = -1, header_done = 0;

    int w = file[0] != '/' && slash
        ? snprintf(path, sizeof path, "%.*s/%s", (int)(slash - c->path), c->path, file)
        : snprintf(path, sizeof path, "%s", file);
    if (w < 0 || (size_t)w >= sizeof path)
        return scn_i_fail(c, ptr, "file name too long");
    if (!(f = fopen(path, "r"))) {
        char q[512];
        return scn_i_fail(c, ptr, "cannot open %s: %s", scn_i_quoted(q, sizeof q, path),
                          strerror(errno));
    }
    while (fgets(buf, sizeof buf, f)) {
        char *t, *f1, *f2, *f3, *end;
        line++;
        t = trim(buf);
        if (!*t || *t == '#')
            continue;
        if (!header_done) {
            header_done = 1;
            if (!(*t >= '0' && *t <= '9')) {
                const char *want = availability ? "node,time_s,state" : "node,time_s,factor";
                char h[256];
                size_t k = 0;
                for (const char *q = t; *q && k + 1 < sizeof h; q++)
                    if (*q != ' ' && *q != '\t')
                        h[k++] = *q;
                h[k] = '\0';
                if (strcmp(h, want) != 0) {
                    snprintf(msg, sizeof msg, "header must be \"%s\", got \"%.200s\"", want, t);
                    file_fail(c, path, line, msg);
                    goto out;
                }
                continue;
            }
        }
        f1 = t;
        f2 = strchr(f1, ',');
        f3 = f2 ? strchr(f2 + 1, ',') : NULL;
        if (!f2 || !f3 || strchr(f3 + 1, ',')) {
            file_fail(c, path, line, availability ? "expected 3 fields: node,time_s,state"
                                                  : "expected 3 fields: node,time_s,factor");
            goto out;
        }
        *f2++ = '\0';
        *f3++ = '\0';
        f1 = trim(f1);
        f2 = trim(f2);
        f3 = trim(f3);
        errno = 0;
        long node = strtol(f1, &end, 10);
        if (!*f1 || *end || errno || node < 0 || node >= n_nodes) {
            snprintf(msg, sizeof msg, "node must be an integer in 0..%d, got \"%.100s\"",
                     n_nodes - 1, f1);
            file_fail(c, path, line, msg);
            goto out;
        }
        double t_s = strtod(f2, &end);
        if (!*f2 || *end || !isfinite(t_s) || t_s < 0) {
            snprintf(msg, sizeof msg, "time_s must be a number >= 0, got \"%.100s\"", f2);
            file_fail(c, path, line, msg);
            goto out;
        }
        double v;
        if (availability) {
            if (strcmp(f3, "up") == 0) {
                v = 1;
            } else if (strcmp(f3, "down") == 0) {
                v = 0;
            } else {
                snprintf(msg, sizeof msg, "state must be up or down, got \"%.100s\"", f3);
                file_fail(c, path, line, msg);
                goto out;
            }
        } else {
            v = strtod(f3, &end);
            if (!*f3 || *end || !isfinite(v) || v <= 0) {
                snprintf(msg, sizeof msg, "factor must be a number > 0, got \"%.100s\"", f3);
                file_fail(c, path, line, msg);
                goto out;
            }
        }
        /* one node's times may not go backwards */
        for (size_t k = n; k-- > 0;) {
            if (pts[k].p.node != (int)node)
                continue;
            if (pts[k].p.time_s > t_s) {
                snprintf(msg, sizeof msg, "time_s goes backwards for node %ld (%g after %g "
                         "on line %zu)", node, t_s, pts[k].p.time_s, pts[k].line);
                file_fail(c, path, line, msg);
                goto out;
            }
            break;
        }
        if (n == cap) {
            size_t nc = cap ? 2 * cap : 64;
            line_pt *np = realloc(pts, nc * sizeof *np);
            if (!np) {
                scn_i_fail_oom(c);
                goto out;
            }
            pts = np;
            cap = nc;
        }
        pts[n].p = (scn_point){ (int)node, t_s, v };
        pts[n].line = line;
        n++;
    }
    if (ferror(f)) {
        snprintf(msg, sizeof msg, "read error: %s", strerror(errno));
        file_fail(c, path, line, msg);
        goto out;
    }
    if (n == 0) {
        file_fail(c, path, line, "no points");
        goto out;
    }
    qsort(pts, n, sizeof *pts, cmp_line_pt);
    if (!(*out = malloc(n * sizeof **out))) {
        scn_i_fail_oom(c);
        goto out;
    }
    for (size_t k = 0; k < n; k++)
        (*out)[k] = pts[k].p;
    *n_out = n;
    rc = 0;
out:
    free(pts);
    fclose(f);
    return rc;
}

/* ---- slowdowns ------------------------------------------------------------ */

/* The start every kinded entry shares: an object with only known keys and
 * a required "kind" among kinds.  Returns the kind's index, or -1 with the
 * error reported; *kind is the name as written. */
static int kind_prologue(scn_ctx *c, json_t *o, const char *ptr, const char *const *keys,
                         const char *what, const char *const *kinds, const char **kind)
{
    char kp[PTR_MAX];

    if (!json_is_object(o))
        return scn_i_fail(c, ptr, "must be an object, got %s", scn_i_type_name(o));
    if (scn_i_check_keys(c, o, ptr, keys) || scn_i_need_key(c, o, ptr, "kind", NULL) ||
        scn_i_opt_str(c, o, ptr, "kind", kind, NULL))
        return -1;
    scn_i_ptr_key(kp, ptr, "kind");
    return scn_i_lookup(c, kp, what, *kind, kinds);
}

/* A "trace" entry: its required file, read now (up_down: availability
 * states instead of slowdown factors). */
static int trace_entry(scn_ctx *c, json_t *o, const char *ptr, const char *why, int up_down,
                       int n_nodes, char **file_out, scn_point **points, size_t *n_points)
{
    char kp[PTR_MAX];
    const char *file = NULL;

    if (scn_i_need_key(c, o, ptr, "file", why) || scn_i_opt_str(c, o, ptr, "file", &file, NULL) ||
        scn_i_set_str(c, file_out, file))
        return -1;
    scn_i_ptr_key(kp, ptr, "file");
    return read_trace(c, kp, file, up_down, n_nodes, points, n_points);
}

/* A required start and an optional end after it (INFINITY when absent). */
static int interval(scn_ctx *c, json_t *o, const char *ptr, const char *why, const char *lo_key,
                    const char *hi_key, double *lo, double *hi)
{
    char kp[PTR_MAX];

    if (scn_i_need_key(c, o, ptr, lo_key, why) ||
        scn_i_opt_num(c, o, ptr, lo_key, GE0, lo, NULL) ||
        scn_i_opt_num(c, o, ptr, hi_key, GT0, hi, NULL))
        return -1;
    if (*hi <= *lo) {
        scn_i_ptr_key(kp, ptr, hi_key);
        return scn_i_fail(c, kp, "must be > %s (%g), got %g", lo_key, *lo, *hi);
    }
    return 0;
}

static int v_slowdown(scn_ctx *c, json_t *o, const char *ptr, scn_scenario *s, scn_slowdown *out)
{
    static const char *const keys[] = {"kind", "nodes", "fraction", "factor", "start_s",
                                       "end_s", "mean_slow_s", "mean_normal_s", "period_s",
                                       "duration_s", "phase_s", "file", NULL};
    const char *const *kinds = scn_i_slow_kind_names;
    static const char *const per_kind[][8] = {
        {"kind", "nodes", "fraction", "factor", "start_s", "end_s", NULL},
        {"kind", "nodes", "fraction", "factor", "mean_slow_s", "mean_normal_s", NULL},
        {"kind", "nodes", "fraction", "factor", "period_s", "duration_s", "phase_s", NULL},
        {"kind", "file", NULL},
    };
    char kp[PTR_MAX], why[64];
    const char *kind = NULL;
    int k;

    if ((k = kind_prologue(c, o, ptr, keys, "slowdown kind", kinds, &kind)) < 0 ||
        scn_i_kind_keys(c, o, ptr, per_kind[k], "kind", kind))
        return -1;
    out->kind = (cl_slow_kind)k;
    out->end_s = INFINITY;
    snprintf(why, sizeof why, "for kind \"%s\"", kind);
    if (out->kind == CL_SLOW_TRACE)
        return trace_entry(c, o, ptr, why, 0, s->n_nodes, &out->file, &out->points,
                           &out->n_points);
    if (v_select(c, o, ptr, s, 1, &out->nodes, &out->n_nodes, &out->fraction) ||
        scn_i_need_key(c, o, ptr, "factor", why) ||
        scn_i_opt_num(c, o, ptr, "factor", GT0, &out->factor, NULL))
        return -1;
    switch (out->kind) {
    case CL_SLOW_WINDOW:
        if (interval(c, o, ptr, why, "start_s", "end_s", &out->start_s, &out->end_s))
            return -1;
        break;
    case CL_SLOW_MARKOV:
        if (scn_i_need_key(c, o, ptr, "mean_slow_s", why) ||
            scn_i_need_key(c, o, ptr, "mean_normal_s", why) ||
            scn_i_opt_num(c, o, ptr, "mean_slow_s", GT0, &out->mean_slow_s, NULL) ||
            scn_i_opt_num(c, o, ptr, "mean_normal_s", GT0, &out->mean_normal_s, NULL))
            return -1;
        break;
    case CL_SLOW_PERIODIC:
        if (scn_i_need_key(c, o, ptr, "period_s", why) ||
            scn_i_need_key(c, o, ptr, "duration_s", why) ||
            scn_i_opt_num(c, o, ptr, "period_s", GT0, &out->period_s, NULL) ||
            scn_i_opt_num(c, o, ptr, "duration_s", GT0, &out->duration_s, NULL) ||
            scn_i_opt_num(c, o, ptr, "phase_s", GE0, &out->phase_s, NULL))
            return -1;
        if (out->duration_s >= out->period_s) {
            scn_i_ptr_key(kp, ptr, "duration_s");
            return scn_i_fail(c, kp, "must be < period_s (%g), got %g", out->period_s,
                              out->duration_s);
        }
        if (out->phase_s >= out->period_s) {
            scn_i_ptr_key(kp, ptr, "phase_s");
            return scn_i_fail(c, kp, "must be < period_s (%g), got %g", out->period_s,
                              out->phase_s);
        }
        break;
    default:
        break;
    }
    return 0;
}

int scn_i_v_slowdowns(scn_ctx *c, json_t *compute, const char *cptr, scn_scenario *s)
{
    json_t *arr = compute ? json_object_get(compute, "slowdowns") : NULL;
    char p[PTR_MAX], ep[PTR_MAX];
    size_t n;

    if (!arr)
        return 0;
    scn_i_ptr_key(p, cptr, "slowdowns");
    if (!json_is_array(arr))
        return scn_i_fail(c, p, "must be an array, got %s", scn_i_type_name(arr));
    if ((n = json_array_size(arr)) == 0)
        return 0;
    if (!(s->slowdowns = calloc(n, sizeof *s->slowdowns)))
        return scn_i_fail_oom(c);
    for (size_t i = 0; i < n; i++) {
        scn_i_ptr_idx(ep, p, i);
        s->n_slowdowns = i + 1;
        if (v_slowdown(c, json_array_get(arr, i), ep, s, &s->slowdowns[i]))
            return -1;
    }
    return 0;
}

/* ---- faults --------------------------------------------------------------- */

static int v_fault(scn_ctx *c, json_t *o, const char *ptr, scn_scenario *s, scn_fault *out)
{
    static const char *const keys[] = {"kind", "nodes", "fraction", "down_s", "up_s",
                                       "mtbf_s", "mttr_s", "file", NULL};
    const char *const *kinds = scn_i_fault_kind_names;
    static const char *const per_kind[][6] = {
        {"kind", "nodes", "fraction", "down_s", "up_s", NULL},
        {"kind", "nodes", "fraction", "mtbf_s", "mttr_s", NULL},
        {"kind", "file", NULL},
    };
    char why[64];
    const char *kind = NULL;
    int k;

    if ((k = kind_prologue(c, o, ptr, keys, "fault kind", kinds, &kind)) < 0 ||
        scn_i_kind_keys(c, o, ptr, per_kind[k], "kind", kind))
        return -1;
    out->kind = (cl_fault_kind)k;
    out->up_s = INFINITY;
    snprintf(why, sizeof why, "for kind \"%s\"", kind);
    if (out->kind == CL_FAULT_TRACE)
        return trace_entry(c, o, ptr, why, 1, s->n_nodes, &out->file, &out->points,
                           &out->n_points);
    if (v_select(c, o, ptr, s, 1, &out->nodes, &out->n_nodes, &out->fraction))
        return -1;
    if (out->kind == CL_FAULT_SCHEDULE) {
        if (interval(c, o, ptr, why, "down_s", "up_s", &out->down_s, &out->up_s))
            return -1;
    } else {
        if (scn_i_need_key(c, o, ptr, "mtbf_s", why) || scn_i_need_key(c, o, ptr, "mttr_s", why) ||
            scn_i_opt_num(c, o, ptr, "mtbf_s", GT0, &out->mtbf_s, NULL) ||
            scn_i_opt_num(c, o, ptr, "mttr_s", GT0, &out->mttr_s, NULL))
            return -1;
    }
    return 0;
}

int scn_i_v_faults(scn_ctx *c, json_t *root, scn_scenario *s)
{
    static const char *const keys[] = {"step", "messages", "rejoin", "events", NULL};
    const char *step = "restart", *messages = "drop", *rejoin = "keep";
    char p[PTR_MAX], kp[PTR_MAX], ep[PTR_MAX];
    json_t *o, *arr;
    int a, b, d;

    if (scn_i_opt_obj(c, root, "", "faults", &o, p) || scn_i_check_keys(c, o, p, keys) ||
        scn_i_opt_str(c, o, p, "step", &step, NULL) ||
        scn_i_opt_str(c, o, p, "messages", &messages, NULL) ||
        scn_i_opt_str(c, o, p, "rejoin", &rejoin, NULL))
        return -1;
    scn_i_ptr_key(kp, p, "step");
    if ((a = scn_i_lookup(c, kp, "step policy", step, scn_i_step_policy_names)) < 0)
        return -1;
    scn_i_ptr_key(kp, p, "messages");
    if ((b = scn_i_lookup(c, kp, "message policy", messages, scn_i_msg_policy_names)) < 0)
        return -1;
    scn_i_ptr_key(kp, p, "rejoin");
    if ((d = scn_i_lookup(c, kp, "rejoin policy", rejoin, scn_i_rejoin_names)) < 0)
        return -1;
    s->fault_step = (cl_step_policy)a;
    s->fault_messages = (cl_msg_policy)b;
    s->fault_rejoin = (scn_rejoin)d;
    arr = o ? json_object_get(o, "events") : NULL;
    if (!arr)
        return 0;
    scn_i_ptr_key(kp, p, "events");
    if (!json_is_array(arr))
        return scn_i_fail(c, kp, "must be an array, got %s", scn_i_type_name(arr));
    size_t n = json_array_size(arr);
    if (n == 0)
        return 0;
    if (!(s->faults = calloc(n, sizeof *s->faults)))
        return scn_i_fail_oom(c);
    for (size_t i = 0; i < n; i++) {
        scn_i_ptr_idx(ep, kp, i);
        s->n_faults = i + 1;
        if (v_fault(c, json_array_get(arr, i), ep, s, &s->faults[i]))
            return -1;
    }
    return 0;
}

/* ---- network NICs, output ------------------------------------------------- */

int scn_i_v_network_nics(scn_ctx *c, json_t *o, const char *p, scn_scenario *s)
{
    static const char *const nic_keys[] = {"nodes", "fraction", "up_Bps", "down_Bps", NULL};
    const char *disc = "fifo";
    char kp[PTR_MAX], ep[PTR_MAX];
    json_t *arr;
    int k;

    s->compression_ratio = 1;
    s->up_Bps = s->down_Bps = s->bandwidth_Bps;
    if (scn_i_opt_num(c, o, p, "compression_ratio", GT0, &s->compression_ratio, NULL) ||
        scn_i_opt_str(c, o, p, "discipline", &disc, NULL) ||
        scn_i_opt_num(c, o, p, "up_Bps", GT0, &s->up_Bps, NULL) ||
        scn_i_opt_num(c, o, p, "down_Bps", GT0, &s->down_Bps, NULL))
        return -1;
    if (s->compression_ratio < 1) {
        scn_i_ptr_key(kp, p, "compression_ratio");
        return scn_i_fail(c, kp, "must be >= 1, got %g", s->compression_ratio);
    }
    scn_i_ptr_key(kp, p, "discipline");
    if ((k = scn_i_lookup(c, kp, "discipline", disc, scn_i_discipline_names)) < 0)
        return -1;
    s->discipline = (cl_discipline)k;
    arr = o ? json_object_get(o, "nics") : NULL;
    if (!arr)
        return 0;
    scn_i_ptr_key(kp, p, "nics");
    if (!json_is_array(arr))
        return scn_i_fail(c, kp, "must be an array, got %s", scn_i_type_name(arr));
    size_t n = json_array_size(arr);
    if (n == 0)
        return 0;
    if (!(s->nics = calloc(n, sizeof *s->nics)))
        return scn_i_fail_oom(c);
    for (size_t i = 0; i < n; i++) {
        json_t *e = json_array_get(arr, i);
        scn_nic *q = &s->nics[i];
        int hu, hd;
        scn_i_ptr_idx(ep, kp, i);
        s->n_nics = i + 1;
        if (!json_is_object(e))
            return scn_i_fail(c, ep, "must be an object, got %s", scn_i_type_name(e));
        if (scn_i_check_keys(c, e, ep, nic_keys) ||
            v_select(c, e, ep, s, 0, &q->nodes, &q->n_nodes, &q->fraction) ||
            scn_i_opt_num(c, e, ep, "up_Bps", GT0, &q->up_Bps, &hu) ||
            scn_i_opt_num(c, e, ep, "down_Bps", GT0, &q->down_Bps, &hd))
            return -1;
        if (!hu && !hd)
            return scn_i_fail(c, ep, "sets nothing (give \"up_Bps\" or \"down_Bps\")");
    }
    return 0;
}

static int v_jitter(scn_ctx *c, json_t *parent, const char *pptr, scn_link_props *out)
{
    static const char *const keys[] = {"dist", "low_s", "high_s", "mean_s", NULL};
    const char *const *dists = scn_i_jitter_names;
    static const char *const per_dist[][4] = {
        {"dist", NULL}, {"dist", "low_s", "high_s", NULL}, {"dist", "mean_s", NULL},
    };
    char p[PTR_MAX], dp[PTR_MAX], why[64];
    const char *dist = "none";
    json_t *n;
    int k;

    if (scn_i_opt_obj(c, parent, pptr, "jitter", &n, p) || scn_i_check_keys(c, n, p, keys) ||
        scn_i_opt_str(c, n, p, "dist", &dist, NULL))
        return -1;
    scn_i_ptr_key(dp, p, "dist");
    if ((k = scn_i_lookup(c, dp, "jitter dist", dist, dists)) < 0 ||
        scn_i_kind_keys(c, n, p, per_dist[k], "dist", dist))
        return -1;
    out->jitter = (cl_jitter)k;
    out->jitter_a = out->jitter_b = 0;
    snprintf(why, sizeof why, "for dist \"%s\"", dist);
    if (k == CL_JITTER_UNIFORM) {
        if (scn_i_need_key(c, n, p, "low_s", why) || scn_i_need_key(c, n, p, "high_s", why) ||
            scn_i_opt_num(c, n, p, "low_s", GE0, &out->jitter_a, NULL) ||
            scn_i_opt_num(c, n, p, "high_s", GE0, &out->jitter_b, NULL))
            return -1;
        if (out->jitter_a > out->jitter_b) {
            scn_i_ptr_key(dp, p, "low_s");
            return scn_i_fail(c, dp, "must be <= high_s (%g), got %g", out->jitter_b,
                              out->jitter_a);
        }
    } else if (k == CL_JITTER_EXPONENTIAL) {
        if (scn_i_need_key(c, n, p, "mean_s", why) ||
            scn_i_opt_num(c, n, p, "mean_s", GT0, &out->jitter_a, NULL))
            return -1;
    }
    return 0;
}

/* loss, jitter and outages of a link (class); absent keys keep *out
 * (whose outages must then be NULL or owned: they are replaced). */
static int v_link_props(scn_ctx *c, json_t *o, const char *ptr, scn_link_props *out,
                        int *has_loss, int *has_jitter, int *has_outages)
{
    char kp[PTR_MAX], ep[PTR_MAX];
    json_t *arr, *w;
    size_t j;

    if (scn_i_opt_num(c, o, ptr, "loss", GE0, &out->loss, has_loss))
        return -1;
    if (out->loss >= 1) {
        scn_i_ptr_key(kp, ptr, "loss");
        return scn_i_fail(c, kp, "must be < 1, got %g", out->loss);
    }
    *has_jitter = o && json_object_get(o, "jitter");
    if (*has_jitter && v_jitter(c, o, ptr, out))
        return -1;
    arr = o ? json_object_get(o, "outages") : NULL;
    *has_outages = arr != NULL;
    if (!arr)
        return 0;
    scn_i_ptr_key(kp, ptr, "outages");
    if (!json_is_array(arr))
        return scn_i_fail(c, kp, "must be an array, got %s", scn_i_type_name(arr));
    free(out->outages);
    out->outages = NULL;
    out->n_outages = 0;
    if (json_array_size(arr) == 0)
        return 0;
    if (!(out->outages = calloc(2 * json_array_size(arr), sizeof(double))))
        return scn_i_fail_oom(c);
    json_array_foreach(arr, j, w) {
        static const char *const wkeys[] = {"start_s", "end_s", NULL};
        double a = 0, b = INFINITY;
        scn_i_ptr_idx(ep, kp, j);
        if (!json_is_object(w))
            return scn_i_fail(c, ep, "must be an object, got %s", scn_i_type_name(w));
        if (scn_i_check_keys(c, w, ep, wkeys) || scn_i_need_key(c, w, ep, "start_s", NULL) ||
            scn_i_need_key(c, w, ep, "end_s", NULL) ||
            scn_i_opt_num(c, w, ep, "start_s", GE0, &a, NULL) ||
            scn_i_opt_num(c, w, ep, "end_s", GT0, &b, NULL))
            return -1;
        if (b <= a) {
            char bp[PTR_MAX];
            scn_i_ptr_key(bp, ep, "end_s");
            return scn_i_fail(c, bp, "must be > start_s (%g), got %g", a, b);
        }
        out->outages[2 * j] = a;
        out->outages[2 * j + 1] = b;
        out->n_outages = j + 1;
    }
    return 0;
}

static int v_link(scn_ctx *c, json_t *o, const char *ptr, scn_scenario *s, scn_link *out)
{
    static const char *const keys[] = {"from", "to", "directed", "latency_s", "bandwidth_Bps",
                                       "jitter", "loss", "outages", NULL};
    char kp[PTR_MAX];
    json_t *v;

    if (!json_is_object(o))
        return scn_i_fail(c, ptr, "must be an object, got %s", scn_i_type_name(o));
    if (scn_i_check_keys(c, o, ptr, keys))
        return -1;
    if ((v = json_object_get(o, "from"))) {
        scn_i_ptr_key(kp, ptr, "from");
        if (v_node_list(c, v, kp, s->n_nodes, &out->from, &out->n_from))
            return -1;
    }
    if ((v = json_object_get(o, "to"))) {
        scn_i_ptr_key(kp, ptr, "to");
        if (v_node_list(c, v, kp, s->n_nodes, &out->to, &out->n_to))
            return -1;
    }
    if ((v = json_object_get(o, "directed"))) {
        scn_i_ptr_key(kp, ptr, "directed");
        if (!json_is_boolean(v))
            return scn_i_fail(c, kp, "must be true or false, got %s", scn_i_type_name(v));
        out->directed = json_is_true(v);
    }
    /* what the entry does not give, it takes from the network's default */
    out->props = s->link;
    out->props.outages = NULL;
    out->props.n_outages = 0;
    if (scn_i_opt_num(c, o, ptr, "latency_s", GE0, &out->props.latency_s, &out->has_latency) ||
        scn_i_opt_num(c, o, ptr, "bandwidth_Bps", GT0, &out->props.bandwidth_Bps,
                      &out->has_bandwidth) ||
        v_link_props(c, o, ptr, &out->props, &out->has_loss, &out->has_jitter,
                     &out->has_outages))
        return -1;
    if (!out->has_outages && s->link.n_outages) {
        size_t n = s->link.n_outages;
        if (!(out->props.outages = malloc(2 * n * sizeof(double))))
            return scn_i_fail_oom(c);
        memcpy(out->props.outages, s->link.outages, 2 * n * sizeof(double));
        out->props.n_outages = n;
    }
    return 0;
}

int scn_i_v_network_links(scn_ctx *c, json_t *o, const char *p, scn_scenario *s)
{
    char kp[PTR_MAX], ep[PTR_MAX];
    json_t *arr, *v;
    int hl, hj, ho;

    s->link.latency_s = s->latency_s;
    s->link.bandwidth_Bps = s->bandwidth_Bps;
    if (v_link_props(c, o, p, &s->link, &hl, &hj, &ho))
        return -1;
    if ((v = o ? json_object_get(o, "reorder") : NULL)) {
        scn_i_ptr_key(kp, p, "reorder");
        if (!json_is_boolean(v))
            return scn_i_fail(c, kp, "must be true or false, got %s", scn_i_type_name(v));
        s->reorder = json_is_true(v);
    }
    arr = o ? json_object_get(o, "links") : NULL;
    if (!arr)
        return 0;
    scn_i_ptr_key(kp, p, "links");
    if (!json_is_array(arr))
        return scn_i_fail(c, kp, "must be an array, got %s", scn_i_type_name(arr));
    size_t n = json_array_size(arr);
    if (n == 0)
        return 0;
    if (!(s->links = calloc(n, sizeof *s->links)))
        return scn_i_fail_oom(c);
    for (size_t i = 0; i < n; i++) {
        scn_i_ptr_idx(ep, kp, i);
        s->n_links = i + 1;
        if (v_link(c, json_array_get(arr, i), ep, s, &s->links[i]))
            return -1;
    }
    return 0;
}

int scn_i_v_output(scn_ctx *c, json_t *root, scn_scenario *s)
{
    static const char *const keys[] = {"trace", NULL};
    char p[PTR_MAX], tp[PTR_MAX];
    json_t *o, *t;

    if (scn_i_opt_obj(c, root, "", "output", &o, p) || scn_i_check_keys(c, o, p, keys))
        return -1;
    t = o ? json_object_get(o, "trace") : NULL;
    if (!t)
        return 0;
    scn_i_ptr_key(tp, p, "trace");
    if (!json_is_boolean(t))
        return scn_i_fail(c, tp, "must be true or false, got %s", scn_i_type_name(t));
    s->output_trace = json_is_true(t);
    return 0;
}

/* ---- per-node queries ----------------------------------------------------- */

double scn_node_slowdown(const scn_scenario *s, int node)
{
    for (size_t i = s->n_groups; i-- > 0;) {
        const scn_group *g = &s->groups[i];
        if (g->slowdown > 0 && has_node(g->nodes, g->n_nodes, node))
            return g->slowdown;
    }
    return 1.0;
}

double scn_node_step_time(const scn_scenario *s, int node, double model_flops)
{
    for (size_t i = s->n_groups; i-- > 0;) {
        const scn_group *g = &s->groups[i];
        if (!has_node(g->nodes, g->n_nodes, node))
            continue;
        if (g->step_time_s > 0)
            return g->step_time_s;
        if (g->flops_per_s > 0)
            return model_flops / g->flops_per_s;
    }
    return s->flops_per_s > 0 ? model_flops / s->flops_per_s : s->step_time_s;
}

cl_noise_spec scn_node_noise(const scn_scenario *s, int node)
{
    for (size_t i = s->n_groups; i-- > 0;) {
        const scn_group *g = &s->groups[i];
        if (g->has_noise && has_node(g->nodes, g->n_nodes, node))
            return g->noise;
    }
    return (cl_noise_spec){ s->noise, s->noise_low, s->noise_high, s->noise_sigma,
                            s->noise_floor, s->noise_shift, s->noise_shape, s->noise_alpha };
}

void scn_node_nic(const scn_scenario *s, int node, double *up, double *down)
{
    *up = s->up_Bps;
    *down = s->down_Bps;
    for (size_t i = 0; i < s->n_nics; i++) {
        const scn_nic *q = &s->nics[i];
        if (!has_node(q->nodes, q->n_nodes, node))
            continue;
        if (q->up_Bps > 0)
            *up = q->up_Bps;
        if (q->down_Bps > 0)
            *down = q->down_Bps;
    }
}
