/* scn.c -- loads a scenario file into an scn_scenario: parses it with
 * Jansson (duplicate keys rejected), applies --set overrides to the tree,
 * validates every key against docs/scenario.md (unknown keys, types,
 * ranges, cross-key rules), fills defaults and renders the resolved
 * scenario as canonical JSON text for run.json.  Every error becomes one
 * line in GNU form in the caller's scn_error; the first error found ends
 * the load.  Validation runs in the documented key order, not in file
 * order, so the error reported does not depend on how a file is laid out
 * (except which of several unknown keys in one object is named).
 * This file does not know what an algorithm name means (the runner's
 * registry checks it) and builds nothing the scenario describes.
 */
#include "scn.h"

#include <jansson.h>

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define LOAD_FLAGS (JSON_REJECT_DUPLICATES | JSON_DECODE_ANY)
#define PTR_MAX 512

/* Where messages go; root pointer is "" internally and "/" when shown. */
typedef struct ctx {
    const char *path;
    scn_error  *err;
} ctx;

static int fail(ctx *c, const char *ptr, const char *fmt, ...)
{
    char msg[sizeof c->err->msg];
    va_list ap;

    va_start(ap, fmt);
    if (vsnprintf(msg, sizeof msg, fmt, ap) < 0)
        msg[0] = '\0';
    va_end(ap);
    if (snprintf(c->err->msg, sizeof c->err->msg, "%s: %s: error: %s", c->path,
                 ptr[0] ? ptr : "/", msg) < 0)
        c->err->msg[0] = '\0';
    return -1;
}

static int fail_oom(ctx *c)
{
    if (snprintf(c->err->msg, sizeof c->err->msg, "%s: error: out of memory", c->path) < 0)
        c->err->msg[0] = '\0';
    return -1;
}

/* JSON's two-character escape of ch, or NULL. */
static const char *short_escape(unsigned char ch)
{
    switch (ch) {
    case '"':  return "\\\"";
    case '\\': return "\\\\";
    case '\b': return "\\b";
    case '\f': return "\\f";
    case '\n': return "\\n";
    case '\r': return "\\r";
    case '\t': return "\\t";
    default:   return NULL;
    }
}

/* s as a JSON string literal (quotes, escapes), truncated to fit out. */
static const char *quoted(char *out, size_t n, const char *s)
{
    size_t k = 0;

    out[k++] = '"';
    for (; *s && k + 8 < n; s++) {
        unsigned char ch = (unsigned char)*s;
        const char *e = short_escape(ch);
        if (e) {
            out[k++] = e[0];
            out[k++] = e[1];
        } else if (ch < 0x20) {
            k += (size_t)snprintf(out + k, n - k, "\\u%04x", ch);
        } else {
            out[k++] = (char)ch;
        }
    }
    out[k++] = '"';
    out[k] = '\0';
    return out;
}

static void ptr_key(char *out, const char *base, const char *key)
{
    size_t k = strlen(base);

    memmove(out, base, k);   /* out may be base */
    if (k + 1 < PTR_MAX)
        out[k++] = '/';
    for (; *key && k + 2 < PTR_MAX; key++) {
        if (*key == '~' || *key == '/') {
            out[k++] = '~';
            out[k++] = *key == '~' ? '0' : '1';
        } else {
            out[k++] = *key;
        }
    }
    out[k] = '\0';
}

static void ptr_idx(char *out, const char *base, size_t i)
{
    if (snprintf(out, PTR_MAX, "%s/%zu", base, i) < 0)
        out[0] = '\0';
}

static const char *type_name(const json_t *v)
{
    switch (json_typeof(v)) {
    case JSON_OBJECT:  return "object";
    case JSON_ARRAY:   return "array";
    case JSON_STRING:  return "string";
    case JSON_INTEGER:
    case JSON_REAL:    return "number";
    case JSON_TRUE:
    case JSON_FALSE:   return "boolean";
    default:           return "null";
    }
}

static const char *type_with_article(const json_t *v)
{
    switch (json_typeof(v)) {
    case JSON_OBJECT:  return "an object";
    case JSON_ARRAY:   return "an array";
    case JSON_STRING:  return "a string";
    case JSON_INTEGER:
    case JSON_REAL:    return "a number";
    case JSON_TRUE:
    case JSON_FALSE:   return "a boolean";
    default:           return "null";
    }
}

static int in_list(const char *s, const char *const *list)
{
    for (; *list; list++)
        if (strcmp(s, *list) == 0)
            return 1;
    return 0;
}

static void join(char *out, size_t n, const char *const *list)
{
    size_t k = 0;

    out[0] = '\0';
    for (; *list && k < n; list++) {
        int w = snprintf(out + k, n - k, "%s%s", k ? ", " : "", *list);
        if (w < 0)
            break;
        k += (size_t)w;
    }
}

/* Rejects keys of obj (NULL: absent, nothing to check) not in keys. */
static int check_keys(ctx *c, json_t *obj, const char *ptr, const char *const *keys)
{
    const char *k;
    json_t *v;

    if (!obj)
        return 0;
    json_object_foreach(obj, k, v) {
        if (!in_list(k, keys)) {
            char q[256], list[512];
            join(list, sizeof list, keys);
            return fail(c, ptr, "unknown key %s (expected one of: %s)",
                        quoted(q, sizeof q, k), list);
        }
    }
    return 0;
}

/* Keys valid in the object but not with this kind (field "kind" or "dist"). */
static int kind_keys(ctx *c, json_t *obj, const char *ptr, const char *const *allowed,
                     const char *field, const char *kind)
{
    const char *k;
    json_t *v;

    if (!obj)
        return 0;
    json_object_foreach(obj, k, v) {
        if (!in_list(k, allowed)) {
            char q[256];
            return fail(c, ptr, "key \"%s\" is not allowed with %s %s", k, field,
                        quoted(q, sizeof q, kind));
        }
    }
    return 0;
}

/* why: NULL, or what makes the key required ("for kind \"torus2d\""). */
static int need_key(ctx *c, json_t *obj, const char *ptr, const char *key, const char *why)
{
    if (obj && json_object_get(obj, key))
        return 0;
    return fail(c, ptr, "missing required key \"%s\"%s%s", key, why ? " " : "", why ? why : "");
}

/* Index of name in names, or -1 with "unknown WHAT ..." reported at ptr. */
static int lookup(ctx *c, const char *ptr, const char *what, const char *name,
                  const char *const *names)
{
    char q[256], list[512];

    for (int i = 0; names[i]; i++)
        if (strcmp(name, names[i]) == 0)
            return i;
    join(list, sizeof list, names);
    fail(c, ptr, "unknown %s %s (expected one of: %s)", what, quoted(q, sizeof q, name), list);
    return -1;
}

/* Child object obj[key]; *out NULL when obj or the key is absent.  cptr
 * receives the child's pointer either way. */
static int opt_obj(ctx *c, json_t *obj, const char *optr, const char *key,
                   json_t **out, char *cptr)
{
    json_t *v = obj ? json_object_get(obj, key) : NULL;

    ptr_key(cptr, optr, key);
    *out = NULL;
    if (!v)
        return 0;
    if (!json_is_object(v))
        return fail(c, cptr, "must be an object, got %s", type_name(v));
    *out = v;
    return 0;
}

enum rule { GT0, GE0, UNIT };   /* > 0, >= 0, in (0, 1] */

static int check_rule(ctx *c, const char *ptr, double x, enum rule r)
{
    switch (r) {
    case GT0:
        if (!(x > 0))
            return fail(c, ptr, "must be > 0, got %g", x);
        break;
    case GE0:
        if (!(x >= 0))
            return fail(c, ptr, "must be >= 0, got %g", x);
        break;
    case UNIT:
        if (!(x > 0 && x <= 1))
            return fail(c, ptr, "must be in (0, 1], got %g", x);
        break;
    }
    return 0;
}

/* Number at obj[key]; *out keeps its default when absent.  present may
 * be NULL. */
static int opt_num(ctx *c, json_t *obj, const char *optr, const char *key, enum rule r,
                   double *out, int *present)
{
    json_t *v = obj ? json_object_get(obj, key) : NULL;
    char p[PTR_MAX];

    if (present)
        *present = v != NULL;
    if (!v)
        return 0;
    ptr_key(p, optr, key);
    if (!json_is_number(v))
        return fail(c, p, "must be a number, got %s", type_name(v));
    if (check_rule(c, p, json_number_value(v), r))
        return -1;
    *out = json_number_value(v);
    return 0;
}

/* An integer in [min, max] from v.  A real with an integral value (1e4)
 * is accepted: JSON does not distinguish them and people write 1e4. */
static int int_value(ctx *c, const char *ptr, json_t *v, long long min, long long max,
                     long long *out)
{
    if (json_is_integer(v)) {
        long long x = json_integer_value(v);
        if (x < min)
            return fail(c, ptr, "must be >= %lld, got %lld", min, x);
        if (x > max)
            return fail(c, ptr, "must be <= %lld, got %lld", max, x);
        *out = x;
        return 0;
    }
    if (json_is_real(v)) {
        double x = json_real_value(v);
        if (x != floor(x))
            return fail(c, ptr, "must be an integer, got %g", x);
        if (x < (double)min)
            return fail(c, ptr, "must be >= %lld, got %g", min, x);
        /* (double)LLONG_MAX rounds up to 2^63, which does not fit */
        if (x > (double)max || x >= 0x1p63)
            return fail(c, ptr, "must be <= %lld, got %g", max, x);
        *out = (long long)x;
        return 0;
    }
    return fail(c, ptr, "must be an integer, got %s", type_name(v));
}

static int opt_int(ctx *c, json_t *obj, const char *optr, const char *key,
                   long long min, long long max, long long *out, int *present)
{
    json_t *v = obj ? json_object_get(obj, key) : NULL;
    char p[PTR_MAX];

    if (present)
        *present = v != NULL;
    if (!v)
        return 0;
    ptr_key(p, optr, key);
    return int_value(c, p, v, min, max, out);
}

static int opt_str(ctx *c, json_t *obj, const char *optr, const char *key,
                   const char **out, int *present)
{
    json_t *v = obj ? json_object_get(obj, key) : NULL;
    char p[PTR_MAX];

    if (present)
        *present = v != NULL;
    if (!v)
        return 0;
    ptr_key(p, optr, key);
    if (!json_is_string(v))
        return fail(c, p, "must be a string, got %s", type_name(v));
    *out = json_string_value(v);
    return 0;
}

static int set_str(ctx *c, char **dst, const char *src)
{
    *dst = strdup(src);
    return *dst ? 0 : fail_oom(c);
}

static const char *dflt(int present)
{
    return present ? "" : " (the default)";
}

/* ---- compute ---------------------------------------------------------- */

static int v_noise(ctx *c, json_t *compute, const char *cptr, scn_scenario *s)
{
    static const char *const keys[] = {"dist", "low", "high", "sigma", NULL};
    static const char *const dists[] = {"constant", "uniform", "exponential", "lognormal", NULL};
    static const char *const per_dist[][4] = {
        {"dist", NULL}, {"dist", "low", "high", NULL}, {"dist", NULL}, {"dist", "sigma", NULL},
    };
    char p[PTR_MAX], dp[PTR_MAX], why[64];
    const char *dist = "constant";
    json_t *n;
    int k;

    if (opt_obj(c, compute, cptr, "noise", &n, p) || check_keys(c, n, p, keys) ||
        opt_str(c, n, p, "dist", &dist, NULL))
        return -1;
    ptr_key(dp, p, "dist");
    if ((k = lookup(c, dp, "dist", dist, dists)) < 0 ||
        kind_keys(c, n, p, per_dist[k], "dist", dist))
        return -1;
    s->noise = (scn_noise)k;
    snprintf(why, sizeof why, "for dist \"%s\"", dist);
    if (s->noise == SCN_NOISE_UNIFORM) {
        if (need_key(c, n, p, "low", why) || need_key(c, n, p, "high", why) ||
            opt_num(c, n, p, "low", GT0, &s->noise_low, NULL) ||
            opt_num(c, n, p, "high", GT0, &s->noise_high, NULL))
            return -1;
        if (s->noise_low > s->noise_high) {
            ptr_key(dp, p, "low");
            return fail(c, dp, "must be <= high (%g), got %g", s->noise_high, s->noise_low);
        }
    } else if (s->noise == SCN_NOISE_LOGNORMAL) {
        if (need_key(c, n, p, "sigma", why) ||
            opt_num(c, n, p, "sigma", GE0, &s->noise_sigma, NULL))
            return -1;
    }
    return 0;
}

/* One entry of a group's node list: a node number or "a-b". */
static int node_entry(ctx *c, const char *ptr, json_t *v, int n_nodes, int *lo, int *hi)
{
    if (json_is_integer(v)) {
        long long x = json_integer_value(v);
        if (x < 0 || x >= n_nodes)
            return fail(c, ptr, "must be in 0..%d, got %lld", n_nodes - 1, x);
        *lo = *hi = (int)x;
        return 0;
    }
    if (json_is_real(v)) {
        double x = json_real_value(v);
        if (x != floor(x))
            return fail(c, ptr, "must be an integer, got %g", x);
        if (x < 0 || x >= n_nodes)
            return fail(c, ptr, "must be in 0..%d, got %g", n_nodes - 1, x);
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
            return fail(c, ptr, "must be a node number or a range \"a-b\", got %s",
                        quoted(qs, sizeof qs, t));
        if (a > b)
            return fail(c, ptr, "bad range %s: start is greater than end",
                        quoted(qs, sizeof qs, t));
        if (b >= n_nodes)
            return fail(c, ptr, "range %s is outside 0..%d", quoted(qs, sizeof qs, t),
                        n_nodes - 1);
        *lo = (int)a;
        *hi = (int)b;
        return 0;
    }
    return fail(c, ptr, "must be a node number or a range \"a-b\", got %s", type_name(v));
}

static int v_group(ctx *c, json_t *g, const char *gptr, int n_nodes, unsigned char *seen,
                   scn_group *out)
{
    static const char *const keys[] = {"nodes", "slowdown", NULL};
    char np[PTR_MAX], ep[PTR_MAX];
    json_t *list, *e;
    size_t j, count = 0;

    if (!json_is_object(g))
        return fail(c, gptr, "must be an object, got %s", type_name(g));
    if (check_keys(c, g, gptr, keys) || need_key(c, g, gptr, "nodes", NULL) ||
        need_key(c, g, gptr, "slowdown", NULL))
        return -1;
    list = json_object_get(g, "nodes");
    ptr_key(np, gptr, "nodes");
    if (!json_is_array(list))
        return fail(c, np, "must be an array, got %s", type_name(list));
    if (json_array_size(list) == 0)
        return fail(c, np, "must not be empty");
    memset(seen, 0, (size_t)n_nodes);
    json_array_foreach(list, j, e) {
        int lo = 0, hi = -1;
        ptr_idx(ep, np, j);
        if (node_entry(c, ep, e, n_nodes, &lo, &hi))
            return -1;
        for (int k = lo; k <= hi; k++) {
            if (seen[k])
                return fail(c, ep, "node %d is already in this group", k);
            seen[k] = 1;
            count++;
        }
    }
    if (opt_num(c, g, gptr, "slowdown", GT0, &out->slowdown, NULL))
        return -1;
    out->nodes = malloc(count * sizeof *out->nodes);
    if (!out->nodes)
        return fail_oom(c);
    for (int k = 0; k < n_nodes; k++)
        if (seen[k])
            out->nodes[out->n_nodes++] = k;
    return 0;
}

static int v_groups(ctx *c, json_t *compute, const char *cptr, scn_scenario *s)
{
    json_t *arr = compute ? json_object_get(compute, "groups") : NULL;
    char p[PTR_MAX], gp[PTR_MAX];
    unsigned char *seen;
    size_t i, n;
    int rc = 0;

    if (!arr)
        return 0;
    ptr_key(p, cptr, "groups");
    if (!json_is_array(arr))
        return fail(c, p, "must be an array, got %s", type_name(arr));
    n = json_array_size(arr);
    if (n == 0)
        return 0;
    s->groups = calloc(n, sizeof *s->groups);
    seen = malloc((size_t)s->n_nodes);
    if (!s->groups || !seen) {
        free(seen);
        return fail_oom(c);
    }
    for (i = 0; i < n && rc == 0; i++) {
        ptr_idx(gp, p, i);
        s->n_groups = i + 1;   /* so scn_fini frees a half-built group */
        rc = v_group(c, json_array_get(arr, i), gp, s->n_nodes, seen, &s->groups[i]);
    }
    free(seen);
    return rc;
}

static int v_compute(ctx *c, json_t *root, scn_scenario *s)
{
    static const char *const keys[] = {"step_time_s", "noise", "groups", NULL};
    char p[PTR_MAX];
    json_t *o;

    s->step_time_s = 0.01;
    if (opt_obj(c, root, "", "compute", &o, p) || check_keys(c, o, p, keys) ||
        opt_num(c, o, p, "step_time_s", GT0, &s->step_time_s, NULL) ||
        v_noise(c, o, p, s) || v_groups(c, o, p, s))
        return -1;
    return 0;
}

/* ---- network, topology, model ----------------------------------------- */

static int v_network(ctx *c, json_t *root, scn_scenario *s)
{
    static const char *const keys[] = {"latency_s", "bandwidth_Bps", "bytes_per_param", NULL};
    char p[PTR_MAX];
    json_t *o;

    s->latency_s = 1e-4;
    s->bandwidth_Bps = 1.25e9;
    s->bytes_per_param = 4;
    if (opt_obj(c, root, "", "network", &o, p) || check_keys(c, o, p, keys) ||
        opt_num(c, o, p, "latency_s", GE0, &s->latency_s, NULL) ||
        opt_num(c, o, p, "bandwidth_Bps", GT0, &s->bandwidth_Bps, NULL) ||
        opt_num(c, o, p, "bytes_per_param", GT0, &s->bytes_per_param, NULL))
        return -1;
    return 0;
}

enum { TOPO_RING, TOPO_COMPLETE, TOPO_TORUS2D, TOPO_ERDOS_RENYI, TOPO_RANDOM_REGULAR };

static int v_topology(ctx *c, json_t *root, scn_scenario *s)
{
    static const char *const keys[] = {"kind", "rows", "cols", "p", "degree", NULL};
    static const char *const kinds[] = {"ring", "complete", "torus2d", "erdos_renyi",
                                        "random_regular", NULL};
    static const char *const per_kind[][4] = {
        {"kind", NULL}, {"kind", NULL}, {"kind", "rows", "cols", NULL}, {"kind", "p", NULL},
        {"kind", "degree", NULL},
    };
    char p[PTR_MAX], kp[PTR_MAX], why[64];
    const char *kind = "ring";
    long long rows = 0, cols = 0, degree = 0, n = s->n_nodes;
    json_t *o;
    int k;

    if (opt_obj(c, root, "", "topology", &o, p) || check_keys(c, o, p, keys) ||
        opt_str(c, o, p, "kind", &kind, NULL))
        return -1;
    ptr_key(kp, p, "kind");
    if ((k = lookup(c, kp, "topology", kind, kinds)) < 0 ||
        kind_keys(c, o, p, per_kind[k], "kind", kind))
        return -1;
    snprintf(why, sizeof why, "for kind \"%s\"", kind);
    switch (k) {
    case TOPO_TORUS2D:
        if (need_key(c, o, p, "rows", why) || need_key(c, o, p, "cols", why) ||
            opt_int(c, o, p, "rows", 1, INT_MAX, &rows, NULL) ||
            opt_int(c, o, p, "cols", 1, INT_MAX, &cols, NULL))
            return -1;
        if (rows * cols != n)
            return fail(c, p, "rows * cols must equal nodes (%lld), got %lld * %lld = %lld",
                        n, rows, cols, rows * cols);
        break;
    case TOPO_ERDOS_RENYI:
        if (need_key(c, o, p, "p", why) || opt_num(c, o, p, "p", UNIT, &s->topo_p, NULL))
            return -1;
        break;
    case TOPO_RANDOM_REGULAR:
        if (need_key(c, o, p, "degree", why) ||
            opt_int(c, o, p, "degree", 1, INT_MAX, &degree, NULL))
            return -1;
        ptr_key(kp, p, "degree");
        /* no such simple graph exists otherwise */
        if (degree > n - 1)
            return fail(c, kp, "must be <= nodes - 1 (%lld), got %lld", n - 1, degree);
        if ((n * degree) % 2 != 0)
            return fail(c, kp, "nodes * degree must be even, got %lld * %lld", n, degree);
        break;
    default:
        break;
    }
    s->topo_rows = (int)rows;
    s->topo_cols = (int)cols;
    s->topo_degree = (int)degree;
    return set_str(c, &s->topology, kinds[k]);
}

static int v_model(ctx *c, json_t *root, scn_scenario *s)
{
    static const char *const keys[] = {"kind", "l2", NULL};
    static const char *const kinds[] = {"softmax", "logistic", NULL};
    char p[PTR_MAX], kp[PTR_MAX];
    const char *kind = "softmax";
    json_t *o;
    int k;

    s->l2 = 1e-4;
    if (opt_obj(c, root, "", "model", &o, p) || check_keys(c, o, p, keys) ||
        opt_str(c, o, p, "kind", &kind, NULL))
        return -1;
    ptr_key(kp, p, "kind");
    if ((k = lookup(c, kp, "model", kind, kinds)) < 0 ||
        opt_num(c, o, p, "l2", GE0, &s->l2, NULL))
        return -1;
    return set_str(c, &s->model, kinds[k]);
}

/* ---- data, algorithm, stop, metrics ------------------------------------ */

static int v_data(ctx *c, json_t *root, scn_scenario *s)
{
    static const char *const keys[] = {"kind", "train", "test", "features", "classes",
                                       "separation", "partition", NULL};
    static const char *const kinds[] = {"synthetic", NULL};
    static const char *const partitions[] = {"iid", NULL};
    char p[PTR_MAX], kp[PTR_MAX];
    const char *kind = "synthetic", *partition = "iid";
    int logistic = strcmp(s->model, "logistic") == 0, has_train, k;
    long long train = 4096, test = 1024, features = 16, classes = logistic ? 2 : 4;
    json_t *o;

    s->data_separation = 2.0;
    if (opt_obj(c, root, "", "data", &o, p) || check_keys(c, o, p, keys) ||
        opt_str(c, o, p, "kind", &kind, NULL))
        return -1;
    ptr_key(kp, p, "kind");
    if (lookup(c, kp, "data kind", kind, kinds) < 0 ||
        opt_int(c, o, p, "train", 1, INT_MAX, &train, &has_train) ||
        opt_int(c, o, p, "test", 1, INT_MAX, &test, NULL) ||
        opt_int(c, o, p, "features", 1, INT_MAX, &features, NULL) ||
        opt_int(c, o, p, "classes", 2, INT_MAX, &classes, NULL) ||
        opt_num(c, o, p, "separation", GT0, &s->data_separation, NULL) ||
        opt_str(c, o, p, "partition", &partition, NULL))
        return -1;
    ptr_key(kp, p, "partition");
    if ((k = lookup(c, kp, "partition", partition, partitions)) < 0)
        return -1;
    if (logistic && classes != 2) {
        ptr_key(kp, p, "classes");
        return fail(c, kp, "must be 2 with model \"logistic\", got %lld", classes);
    }
    if (train < s->n_nodes) {
        ptr_key(kp, p, "train");
        return fail(c, kp, "must be >= nodes (%d) so that every node holds data, got %lld%s",
                    s->n_nodes, train, dflt(has_train));
    }
    s->data_train = (size_t)train;
    s->data_test = (size_t)test;
    s->data_features = (size_t)features;
    s->data_classes = (int)classes;
    return set_str(c, &s->partition, partitions[k]);
}

static int v_algorithm(ctx *c, json_t *root, scn_scenario *s)
{
    static const char *const keys[] = {"name", "lr", "batch", NULL};
    char p[PTR_MAX], bp[PTR_MAX];
    const char *name = NULL;
    long long batch = 32, per_node = (long long)s->data_train / s->n_nodes;
    int has_batch;
    json_t *o;

    s->lr = 0.1;
    if (need_key(c, root, "", "algorithm", NULL) ||
        opt_obj(c, root, "", "algorithm", &o, p) || check_keys(c, o, p, keys) ||
        need_key(c, o, p, "name", NULL) || opt_str(c, o, p, "name", &name, NULL))
        return -1;
    if (name[0] == '\0') {
        ptr_key(bp, p, "name");
        return fail(c, bp, "must not be empty");
    }
    if (opt_num(c, o, p, "lr", GE0, &s->lr, NULL) ||
        opt_int(c, o, p, "batch", 1, INT_MAX, &batch, &has_batch))
        return -1;
    if (batch > per_node) {
        ptr_key(bp, p, "batch");
        return fail(c, bp, "must be <= %lld (train %zu / nodes %d), got %lld%s", per_node,
                    s->data_train, s->n_nodes, batch, dflt(has_batch));
    }
    s->batch = (size_t)batch;
    return set_str(c, &s->algorithm, name);
}

static int v_stop(ctx *c, json_t *root, scn_scenario *s)
{
    static const char *const keys[] = {"time_s", "steps", "target_loss", "target_accuracy",
                                       NULL};
    char p[PTR_MAX];
    long long steps = 0;
    int has_time, has_steps;
    json_t *o;

    s->stop_time_s = INFINITY;
    s->stop_target_loss = NAN;
    s->stop_target_accuracy = NAN;
    if (need_key(c, root, "", "stop", NULL) || opt_obj(c, root, "", "stop", &o, p) ||
        check_keys(c, o, p, keys) ||
        opt_num(c, o, p, "time_s", GT0, &s->stop_time_s, &has_time) ||
        opt_int(c, o, p, "steps", 1, LONG_MAX, &steps, &has_steps) ||
        opt_num(c, o, p, "target_loss", GT0, &s->stop_target_loss, NULL) ||
        opt_num(c, o, p, "target_accuracy", UNIT, &s->stop_target_accuracy, NULL))
        return -1;
    if (!has_time && !has_steps)
        return fail(c, p, "needs \"time_s\" or \"steps\" (or both) so that the run ends");
    s->stop_steps = (long)steps;
    return 0;
}

static int v_metrics(ctx *c, json_t *root, scn_scenario *s)
{
    static const char *const keys[] = {"every_s", "eval_samples", NULL};
    char p[PTR_MAX], ep[PTR_MAX];
    long long eval = 0;
    json_t *o;

    s->metrics_every_s = isinf(s->stop_time_s) ? 100 * s->step_time_s : s->stop_time_s / 100;
    if (opt_obj(c, root, "", "metrics", &o, p) || check_keys(c, o, p, keys) ||
        opt_num(c, o, p, "every_s", GT0, &s->metrics_every_s, NULL) ||
        opt_int(c, o, p, "eval_samples", 0, LLONG_MAX, &eval, NULL))
        return -1;
    if (eval > (long long)s->data_train) {
        ptr_key(ep, p, "eval_samples");
        return fail(c, ep, "must be <= train (%zu), got %lld", s->data_train, eval);
    }
    s->metrics_eval_samples = (size_t)eval;
    return 0;
}

static int validate(ctx *c, json_t *root, scn_scenario *s)
{
    static const char *const keys[] = {"seed", "nodes", "compute", "network", "topology",
                                       "model", "data", "algorithm", "stop", "metrics", NULL};
    long long seed = 1, nodes = 0;

    if (check_keys(c, root, "", keys) ||
        opt_int(c, root, "", "seed", 0, LLONG_MAX, &seed, NULL) || need_key(c, root, "", "nodes", NULL) ||
        opt_int(c, root, "", "nodes", 1, INT_MAX, &nodes, NULL))
        return -1;
    s->seed = (uint64_t)seed;
    s->n_nodes = (int)nodes;
    if (v_compute(c, root, s) || v_network(c, root, s) || v_topology(c, root, s) ||
        v_model(c, root, s) || v_data(c, root, s) || v_algorithm(c, root, s) ||
        v_stop(c, root, s) || v_metrics(c, root, s))
        return -1;
    return 0;
}

/* ---- --set overrides ---------------------------------------------------- */

static int set_fail(ctx *c, const char *arg, const char *fmt, ...)
{
    char msg[sizeof c->err->msg];
    va_list ap;

    va_start(ap, fmt);
    if (vsnprintf(msg, sizeof msg, fmt, ap) < 0)
        msg[0] = '\0';
    va_end(ap);
    if (snprintf(c->err->msg, sizeof c->err->msg, "--set %s: error: %s", arg, msg) < 0)
        c->err->msg[0] = '\0';
    return -1;
}

/* Splits path in place into segments (dotted, or a JSON pointer with ~0
 * and ~1 escapes).  Returns the count, or -1 with the error set. */
static int split_path(ctx *c, const char *arg, char *path, char **seg, int max)
{
    int pointer = path[0] == '/', n = 0;
    char sep = pointer ? '/' : '.', *q = pointer ? path + 1 : path;

    for (;;) {
        char *end = strchr(q, sep);
        if (end)
            *end = '\0';
        if (*q == '\0')
            return set_fail(c, arg, "empty key in path");
        if (n == max)
            return set_fail(c, arg, "path is deeper than %d keys", max);
        if (pointer) {
            char *r = q, *w = q;
            for (; *r; r++) {
                if (*r != '~') {
                    *w++ = *r;
                } else if (r[1] == '0' || r[1] == '1') {
                    *w++ = r[1] == '0' ? '~' : '/';
                    r++;
                } else {
                    return set_fail(c, arg,
                                    "bad escape in JSON pointer (use ~0 for ~ and ~1 for /)");
                }
            }
            *w = '\0';
        }
        seg[n++] = q;
        if (!end)
            return n;
        q = end + 1;
    }
}

/* Array index per RFC 6901: digits, no leading zero. */
static int parse_index(const char *t, size_t *out)
{
    size_t x = 0;

    if (!*t || (t[0] == '0' && t[1]))
        return -1;
    for (; *t; t++) {
        if (*t < '0' || *t > '9' || x > (SIZE_MAX - 9) / 10)
            return -1;
        x = x * 10 + (size_t)(*t - '0');
    }
    *out = x;
    return 0;
}

/* The value of an override: JSON if it parses; otherwise the text as a
 * string, unless it starts like a JSON object, array or string. */
static json_t *override_value(ctx *c, const char *arg, const char *text)
{
    const char *t = text + strspn(text, " \t\n\r");
    json_error_t je;
    json_t *v = json_loads(text, LOAD_FLAGS, &je);

    if (v)
        return v;
    if (*t == '{' || *t == '[' || *t == '"') {
        set_fail(c, arg, "invalid JSON value: %s", je.text);
        return NULL;
    }
    v = json_string(text);
    if (!v)
        set_fail(c, arg, "value is not valid UTF-8");
    return v;
}

/* Index seg into array arr (at pointer ptr), which must have it. */
static int array_index(ctx *c, const char *arg, json_t *arr, const char *ptr,
                       const char *seg, size_t *idx)
{
    char q[128];

    if (parse_index(seg, idx))
        return set_fail(c, arg, "%s is an array, and %s is not an index", ptr,
                        quoted(q, sizeof q, seg));
    if (*idx >= json_array_size(arr))
        return set_fail(c, arg, "%s has no element %zu (it has %zu)", ptr, *idx,
                        json_array_size(arr));
    return 0;
}

/* The object or array that seg[n - 1] names a slot of: walks seg[0..n-2]
 * from root, creating missing objects; ptr receives its pointer.  NULL
 * with the error set. */
static json_t *walk(ctx *c, const char *arg, json_t *root, char *const *seg, int n,
                    char *ptr)
{
    json_t *cur = root;

    ptr[0] = '\0';
    for (int i = 0;; i++) {
        json_t *next;
        size_t idx;

        if (!json_is_object(cur) && !json_is_array(cur)) {
            set_fail(c, arg, "%s is %s, not an object or array", ptr, type_with_article(cur));
            return NULL;
        }
        if (i == n - 1)
            return cur;
        if (json_is_array(cur)) {
            if (array_index(c, arg, cur, ptr, seg[i], &idx))
                return NULL;
            next = json_array_get(cur, idx);
        } else if (!(next = json_object_get(cur, seg[i]))) {
            if (json_object_set_new(cur, seg[i], next = json_object())) {
                fail_oom(c);
                return NULL;
            }
        }
        ptr_key(ptr, ptr, seg[i]);
        cur = next;
    }
}

static int apply_override(ctx *c, json_t *root, const char *arg)
{
    const char *eq = strchr(arg, '=');
    char *path, *seg[64], ptr[PTR_MAX];
    json_t *parent, *val;
    int n, rc = -1;
    size_t idx;

    if (!eq)
        return set_fail(c, arg, "expected PATH=VALUE");
    if (eq == arg)
        return set_fail(c, arg, "empty path");
    if (!(path = strndup(arg, (size_t)(eq - arg))))
        return fail_oom(c);
    if ((n = split_path(c, arg, path, seg, (int)(sizeof seg / sizeof *seg))) < 0 ||
        !(parent = walk(c, arg, root, seg, n, ptr)) || !(val = override_value(c, arg, eq + 1)))
        goto out_free_path;
    if (json_is_object(parent)) {
        /* the setters take val even when they fail */
        rc = json_object_set_new(parent, seg[n - 1], val) ? fail_oom(c) : 0;
    } else if (array_index(c, arg, parent, ptr, seg[n - 1], &idx) == 0) {
        rc = json_array_set_new(parent, idx, val) ? fail_oom(c) : 0;
    } else {
        json_decref(val);
    }
out_free_path:
    free(path);
    return rc;
}

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
        const char *se = short_escape(ch);
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
    }

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

static int resolve(ctx *c, scn_scenario *s)
{
    int oom = 0;
    json_t *tree = resolved_tree(s, &oom);
    buf b = {0};

    if (!oom)
        dump(&b, tree);
    json_decref(tree);
    if (oom || b.oom) {
        free(b.p);
        return fail_oom(c);
    }
    s->resolved_json = b.p;
    return 0;
}

/* ---- entry points ------------------------------------------------------- */

static void syntax_error(scn_error *err, const char *path, const json_error_t *je)
{
    int w;

    if (je->line > 0 && je->column > 0)
        w = snprintf(err->msg, sizeof err->msg, "%s:%d:%d: error: %s", path, je->line,
                     je->column, je->text);
    else if (je->line > 0)
        w = snprintf(err->msg, sizeof err->msg, "%s:%d: error: %s", path, je->line, je->text);
    else
        w = snprintf(err->msg, sizeof err->msg, "%s: error: %s", path, je->text);
    if (w < 0)
        err->msg[0] = '\0';
}

/* Takes ownership of root. */
static int load_tree(json_t *root, const char *path, const char *const *overrides,
                     size_t n_overrides, scn_scenario *s, scn_error *err)
{
    ctx c = {path, err};
    int rc = -1;

    if (!json_is_object(root)) {
        fail(&c, "", "must be an object, got %s", type_name(root));
        goto out;
    }
    for (size_t i = 0; i < n_overrides; i++)
        if (apply_override(&c, root, overrides[i]))
            goto out;
    if (set_str(&c, &s->path, path) || validate(&c, root, s) || resolve(&c, s))
        goto out;
    rc = 0;
out:
    json_decref(root);
    if (rc)
        scn_fini(s);
    return rc;
}

int scn_load_string(const char *text, const char *path, const char *const *overrides,
                    size_t n_overrides, scn_scenario *s, scn_error *err)
{
    json_error_t je;
    json_t *root;

    memset(s, 0, sizeof *s);
    err->msg[0] = '\0';
    if (!path)
        path = "<string>";
    if (!(root = json_loads(text, LOAD_FLAGS, &je))) {
        syntax_error(err, path, &je);
        return -1;
    }
    return load_tree(root, path, overrides, n_overrides, s, err);
}

int scn_load(const char *path, const char *const *overrides, size_t n_overrides,
             scn_scenario *s, scn_error *err)
{
    json_error_t je;
    json_t *root;
    FILE *f;
    int read_err;

    memset(s, 0, sizeof *s);
    err->msg[0] = '\0';
    if (!(f = fopen(path, "rb"))) {
        snprintf(err->msg, sizeof err->msg, "%s: error: cannot open: %s", path, strerror(errno));
        return -1;
    }
    errno = 0;
    root = json_loadf(f, LOAD_FLAGS, &je);
    read_err = ferror(f) ? (errno ? errno : EIO) : 0;
    fclose(f);
    if (read_err) {
        json_decref(root);
        snprintf(err->msg, sizeof err->msg, "%s: error: cannot read: %s", path,
                 strerror(read_err));
        return -1;
    }
    if (!root) {
        syntax_error(err, path, &je);
        return -1;
    }
    return load_tree(root, path, overrides, n_overrides, s, err);
}

void scn_fini(scn_scenario *s)
{
    for (size_t i = 0; i < s->n_groups; i++)
        free(s->groups[i].nodes);
    free(s->groups);
    free(s->path);
    free(s->topology);
    free(s->model);
    free(s->partition);
    free(s->algorithm);
    free(s->resolved_json);
    memset(s, 0, sizeof *s);
}

double scn_node_slowdown(const scn_scenario *s, int node)
{
    for (size_t i = s->n_groups; i-- > 0;) {
        const scn_group *g = &s->groups[i];
        size_t lo = 0, hi = g->n_nodes;
        while (lo < hi) {   /* nodes are sorted: binary search */
            size_t mid = lo + (hi - lo) / 2;
            if (g->nodes[mid] < node)
                lo = mid + 1;
            else
                hi = mid;
        }
        if (lo < g->n_nodes && g->nodes[lo] == node)
            return g->slowdown;
    }
    return 1.0;
}
