/* scn_validate.c -- every key of a scenario, in the order of
 * docs/scenario.md: types, ranges, cross-key rules, defaults; the result is
 * the plain scn_scenario struct.  The first error ends validation.  It does
 * not know what an algorithm name means (the runner's registry checks it).
 */
#include "scn_internal.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- compute ---------------------------------------------------------- */

static int v_noise(scn_ctx *c, json_t *compute, const char *cptr, scn_scenario *s)
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

    if (scn_i_opt_obj(c, compute, cptr, "noise", &n, p) || scn_i_check_keys(c, n, p, keys) ||
        scn_i_opt_str(c, n, p, "dist", &dist, NULL))
        return -1;
    scn_i_ptr_key(dp, p, "dist");
    if ((k = scn_i_lookup(c, dp, "dist", dist, dists)) < 0 ||
        scn_i_kind_keys(c, n, p, per_dist[k], "dist", dist))
        return -1;
    s->noise = (scn_noise)k;
    snprintf(why, sizeof why, "for dist \"%s\"", dist);
    if (s->noise == SCN_NOISE_UNIFORM) {
        if (scn_i_need_key(c, n, p, "low", why) || scn_i_need_key(c, n, p, "high", why) ||
            scn_i_opt_num(c, n, p, "low", GT0, &s->noise_low, NULL) ||
            scn_i_opt_num(c, n, p, "high", GT0, &s->noise_high, NULL))
            return -1;
        if (s->noise_low > s->noise_high) {
            scn_i_ptr_key(dp, p, "low");
            return scn_i_fail(c, dp, "must be <= high (%g), got %g", s->noise_high, s->noise_low);
        }
    } else if (s->noise == SCN_NOISE_LOGNORMAL) {
        if (scn_i_need_key(c, n, p, "sigma", why) ||
            scn_i_opt_num(c, n, p, "sigma", GE0, &s->noise_sigma, NULL))
            return -1;
    }
    return 0;
}

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

static int v_group(scn_ctx *c, json_t *g, const char *gptr, int n_nodes, unsigned char *seen,
                   scn_group *out)
{
    static const char *const keys[] = {"nodes", "slowdown", NULL};
    char np[PTR_MAX], ep[PTR_MAX];
    json_t *list, *e;
    size_t j, count = 0;

    if (!json_is_object(g))
        return scn_i_fail(c, gptr, "must be an object, got %s", scn_i_type_name(g));
    if (scn_i_check_keys(c, g, gptr, keys) || scn_i_need_key(c, g, gptr, "nodes", NULL) ||
        scn_i_need_key(c, g, gptr, "slowdown", NULL))
        return -1;
    list = json_object_get(g, "nodes");
    scn_i_ptr_key(np, gptr, "nodes");
    if (!json_is_array(list))
        return scn_i_fail(c, np, "must be an array, got %s", scn_i_type_name(list));
    if (json_array_size(list) == 0)
        return scn_i_fail(c, np, "must not be empty");
    memset(seen, 0, (size_t)n_nodes);
    json_array_foreach(list, j, e) {
        int lo = 0, hi = -1;
        scn_i_ptr_idx(ep, np, j);
        if (node_entry(c, ep, e, n_nodes, &lo, &hi))
            return -1;
        for (int k = lo; k <= hi; k++) {
            if (seen[k])
                return scn_i_fail(c, ep, "node %d is already in this group", k);
            seen[k] = 1;
            count++;
        }
    }
    if (scn_i_opt_num(c, g, gptr, "slowdown", GT0, &out->slowdown, NULL))
        return -1;
    out->nodes = malloc(count * sizeof *out->nodes);
    if (!out->nodes)
        return scn_i_fail_oom(c);
    for (int k = 0; k < n_nodes; k++)
        if (seen[k])
            out->nodes[out->n_nodes++] = k;
    return 0;
}

static int v_groups(scn_ctx *c, json_t *compute, const char *cptr, scn_scenario *s)
{
    json_t *arr = compute ? json_object_get(compute, "groups") : NULL;
    char p[PTR_MAX], gp[PTR_MAX];
    unsigned char *seen;
    size_t i, n;
    int rc = 0;

    if (!arr)
        return 0;
    scn_i_ptr_key(p, cptr, "groups");
    if (!json_is_array(arr))
        return scn_i_fail(c, p, "must be an array, got %s", scn_i_type_name(arr));
    n = json_array_size(arr);
    if (n == 0)
        return 0;
    s->groups = calloc(n, sizeof *s->groups);
    seen = malloc((size_t)s->n_nodes);
    if (!s->groups || !seen) {
        free(seen);
        return scn_i_fail_oom(c);
    }
    for (i = 0; i < n && rc == 0; i++) {
        scn_i_ptr_idx(gp, p, i);
        s->n_groups = i + 1;   /* so scn_fini frees a half-built group */
        rc = v_group(c, json_array_get(arr, i), gp, s->n_nodes, seen, &s->groups[i]);
    }
    free(seen);
    return rc;
}

static int v_compute(scn_ctx *c, json_t *root, scn_scenario *s)
{
    static const char *const keys[] = {"step_time_s", "noise", "groups", NULL};
    char p[PTR_MAX];
    json_t *o;

    s->step_time_s = 0.01;
    if (scn_i_opt_obj(c, root, "", "compute", &o, p) || scn_i_check_keys(c, o, p, keys) ||
        scn_i_opt_num(c, o, p, "step_time_s", GT0, &s->step_time_s, NULL) ||
        v_noise(c, o, p, s) || v_groups(c, o, p, s))
        return -1;
    return 0;
}

/* ---- network, topology, model ----------------------------------------- */

static int v_network(scn_ctx *c, json_t *root, scn_scenario *s)
{
    static const char *const keys[] = {"latency_s", "bandwidth_Bps", "bytes_per_param", NULL};
    char p[PTR_MAX];
    json_t *o;

    s->latency_s = 1e-4;
    s->bandwidth_Bps = 1.25e9;
    s->bytes_per_param = 4;
    if (scn_i_opt_obj(c, root, "", "network", &o, p) || scn_i_check_keys(c, o, p, keys) ||
        scn_i_opt_num(c, o, p, "latency_s", GE0, &s->latency_s, NULL) ||
        scn_i_opt_num(c, o, p, "bandwidth_Bps", GT0, &s->bandwidth_Bps, NULL) ||
        scn_i_opt_num(c, o, p, "bytes_per_param", GT0, &s->bytes_per_param, NULL))
        return -1;
    return 0;
}

enum {
    TOPO_RING, TOPO_COMPLETE, TOPO_TORUS2D, TOPO_ERDOS_RENYI, TOPO_RANDOM_REGULAR,
    TOPO_RING_LATTICE, TOPO_TORUS3D, TOPO_HYPERCUBE, TOPO_STAR, TOPO_BINARY_TREE,
    TOPO_WATTS_STROGATZ, TOPO_BARABASI_ALBERT, TOPO_EXPONENTIAL, TOPO_EDGE_LIST
};

/* A file named in the scenario is relative to the scenario's directory
 * (like an include), unless absolute or the scenario came from a string. */
static int scenario_relative(scn_ctx *c, char **dst, const char *scenario, const char *file)
{
    const char *slash = strrchr(scenario, '/');
    if (file[0] == '/' || slash == NULL || scenario[0] == '<')
        return scn_i_set_str(c, dst, file);
    size_t dir = (size_t)(slash - scenario) + 1, len = strlen(file);
    char *p = malloc(dir + len + 1);
    if (!p)
        return scn_i_fail_oom(c);
    memcpy(p, scenario, dir);
    memcpy(p + dir, file, len + 1);
    free(*dst);
    *dst = p;
    return 0;
}

/* A number at obj[key] in [0, 1) (upper_open) or [0, 1]. */
static int opt_fraction(scn_ctx *c, json_t *o, const char *p, const char *key, int upper_open,
                        double *out)
{
    char kp[PTR_MAX];
    if (scn_i_opt_num(c, o, p, key, GE0, out, NULL))
        return -1;
    scn_i_ptr_key(kp, p, key);
    if (upper_open ? !(*out < 1.0) : !(*out <= 1.0))
        return scn_i_fail(c, kp, "must be in [0, 1%s, got %g", upper_open ? ")" : "]", *out);
    return 0;
}

static int v_topology(scn_ctx *c, json_t *root, scn_scenario *s)
{
    static const char *const keys[] = {"kind", "rows", "cols", "layers", "p", "degree", "k",
                                       "beta", "m", "file", "mixing", "lazy_alpha", NULL};
    static const char *const kinds[] = {"ring", "complete", "torus2d", "erdos_renyi",
                                        "random_regular", "ring_lattice", "torus3d",
                                        "hypercube", "star", "binary_tree", "watts_strogatz",
                                        "barabasi_albert", "exponential", "edge_list", NULL};
    static const char *const mixings[] = {"metropolis_hastings", "max_degree", "uniform", NULL};
#define MIX "mixing", "lazy_alpha"
    static const char *const per_kind[][7] = {
        [TOPO_RING] = {"kind", MIX, NULL},
        [TOPO_COMPLETE] = {"kind", MIX, NULL},
        [TOPO_TORUS2D] = {"kind", "rows", "cols", MIX, NULL},
        [TOPO_ERDOS_RENYI] = {"kind", "p", MIX, NULL},
        [TOPO_RANDOM_REGULAR] = {"kind", "degree", MIX, NULL},
        [TOPO_RING_LATTICE] = {"kind", "k", MIX, NULL},
        [TOPO_TORUS3D] = {"kind", "rows", "cols", "layers", MIX, NULL},
        [TOPO_HYPERCUBE] = {"kind", MIX, NULL},
        [TOPO_STAR] = {"kind", MIX, NULL},
        [TOPO_BINARY_TREE] = {"kind", MIX, NULL},
        [TOPO_WATTS_STROGATZ] = {"kind", "k", "beta", MIX, NULL},
        [TOPO_BARABASI_ALBERT] = {"kind", "m", MIX, NULL},
        [TOPO_EXPONENTIAL] = {"kind", MIX, NULL},
        [TOPO_EDGE_LIST] = {"kind", "file", MIX, NULL},
    };
#undef MIX
    char p[PTR_MAX], kp[PTR_MAX], why[64];
    const char *kind = "ring", *mixing = "metropolis_hastings", *file = NULL;
    long long rows = 0, cols = 0, layers = 0, degree = 0, k = 0, m = 0, n = s->n_nodes;
    json_t *o;
    int ki, mi;

    s->topo_lazy_alpha = 0.0;
    s->topo_beta = 0.0;
    if (scn_i_opt_obj(c, root, "", "topology", &o, p) || scn_i_check_keys(c, o, p, keys) ||
        scn_i_opt_str(c, o, p, "kind", &kind, NULL))
        return -1;
    scn_i_ptr_key(kp, p, "kind");
    if ((ki = scn_i_lookup(c, kp, "topology", kind, kinds)) < 0 ||
        scn_i_kind_keys(c, o, p, per_kind[ki], "kind", kind))
        return -1;
    if (scn_i_opt_str(c, o, p, "mixing", &mixing, NULL))
        return -1;
    scn_i_ptr_key(kp, p, "mixing");
    if ((mi = scn_i_lookup(c, kp, "mixing", mixing, mixings)) < 0 ||
        opt_fraction(c, o, p, "lazy_alpha", 1, &s->topo_lazy_alpha))
        return -1;
    snprintf(why, sizeof why, "for kind \"%s\"", kind);
    switch (ki) {
    case TOPO_TORUS2D:
        if (scn_i_need_key(c, o, p, "rows", why) || scn_i_need_key(c, o, p, "cols", why) ||
            scn_i_opt_int(c, o, p, "rows", 1, INT_MAX, &rows, NULL) ||
            scn_i_opt_int(c, o, p, "cols", 1, INT_MAX, &cols, NULL))
            return -1;
        if (rows * cols != n)
            return scn_i_fail(c, p, "rows * cols must equal nodes (%lld), got %lld * %lld = %lld",
                        n, rows, cols, rows * cols);
        break;
    case TOPO_TORUS3D:
        if (scn_i_need_key(c, o, p, "rows", why) || scn_i_need_key(c, o, p, "cols", why) ||
            scn_i_need_key(c, o, p, "layers", why) ||
            scn_i_opt_int(c, o, p, "rows", 1, INT_MAX, &rows, NULL) ||
            scn_i_opt_int(c, o, p, "cols", 1, INT_MAX, &cols, NULL) ||
            scn_i_opt_int(c, o, p, "layers", 1, INT_MAX, &layers, NULL))
            return -1;
        if (rows * cols > n || rows * cols * layers != n)
            return scn_i_fail(c, p, "rows * cols * layers must equal nodes (%lld), got %lld * "
                              "%lld * %lld", n, rows, cols, layers);
        break;
    case TOPO_ERDOS_RENYI:
        if (scn_i_need_key(c, o, p, "p", why) || scn_i_opt_num(c, o, p, "p", UNIT, &s->topo_p, NULL))
            return -1;
        break;
    case TOPO_RANDOM_REGULAR:
        if (scn_i_need_key(c, o, p, "degree", why) ||
            scn_i_opt_int(c, o, p, "degree", 1, INT_MAX, &degree, NULL))
            return -1;
        scn_i_ptr_key(kp, p, "degree");
        /* no such simple graph exists otherwise */
        if (degree > n - 1)
            return scn_i_fail(c, kp, "must be <= nodes - 1 (%lld), got %lld", n - 1, degree);
        if ((n * degree) % 2 != 0)
            return scn_i_fail(c, kp, "nodes * degree must be even, got %lld * %lld", n, degree);
        break;
    case TOPO_RING_LATTICE:
    case TOPO_WATTS_STROGATZ:
        if (scn_i_need_key(c, o, p, "k", why) ||
            scn_i_opt_int(c, o, p, "k", 1, INT_MAX, &k, NULL))
            return -1;
        scn_i_ptr_key(kp, p, "k");
        /* 2k < nodes: otherwise i + k and i - k meet and the lattice is not simple */
        if (2 * k > n - 1)
            return scn_i_fail(c, kp, "must be <= (nodes - 1) / 2 (%lld), got %lld", (n - 1) / 2,
                              k);
        if (ki == TOPO_WATTS_STROGATZ &&
            (scn_i_need_key(c, o, p, "beta", why) ||
             opt_fraction(c, o, p, "beta", 0, &s->topo_beta)))
            return -1;
        break;
    case TOPO_HYPERCUBE:
        if ((n & (n - 1)) != 0) {
            scn_i_ptr_key(kp, "", "nodes");
            return scn_i_fail(c, kp, "must be a power of two for kind \"hypercube\", got %lld",
                              n);
        }
        break;
    case TOPO_BARABASI_ALBERT:
        if (scn_i_need_key(c, o, p, "m", why) ||
            scn_i_opt_int(c, o, p, "m", 1, INT_MAX, &m, NULL))
            return -1;
        scn_i_ptr_key(kp, p, "m");
        if (n > 1 && m > n - 1)
            return scn_i_fail(c, kp, "must be <= nodes - 1 (%lld), got %lld", n - 1, m);
        break;
    case TOPO_EDGE_LIST:
        if (scn_i_need_key(c, o, p, "file", why) || scn_i_opt_str(c, o, p, "file", &file, NULL))
            return -1;
        if (file[0] == '\0') {
            scn_i_ptr_key(kp, p, "file");
            return scn_i_fail(c, kp, "must not be empty");
        }
        if (scenario_relative(c, &s->topo_file, c->path, file))
            return -1;
        break;
    default:
        break;
    }
    s->topo_rows = (int)rows;
    s->topo_cols = (int)cols;
    s->topo_layers = (int)layers;
    s->topo_degree = (int)degree;
    s->topo_k = (int)k;
    s->topo_m = (int)m;
    return scn_i_set_str(c, &s->topo_mixing, mixings[mi]) ||
           scn_i_set_str(c, &s->topology, kinds[ki]);
}

static int v_model(scn_ctx *c, json_t *root, scn_scenario *s)
{
    static const char *const keys[] = {"kind", "l2", NULL};
    static const char *const kinds[] = {"softmax", "logistic", NULL};
    char p[PTR_MAX], kp[PTR_MAX];
    const char *kind = "softmax";
    json_t *o;
    int k;

    s->l2 = 1e-4;
    if (scn_i_opt_obj(c, root, "", "model", &o, p) || scn_i_check_keys(c, o, p, keys) ||
        scn_i_opt_str(c, o, p, "kind", &kind, NULL))
        return -1;
    scn_i_ptr_key(kp, p, "kind");
    if ((k = scn_i_lookup(c, kp, "model", kind, kinds)) < 0 ||
        scn_i_opt_num(c, o, p, "l2", GE0, &s->l2, NULL))
        return -1;
    return scn_i_set_str(c, &s->model, kinds[k]);
}

/* ---- data, algorithm, stop, metrics ------------------------------------ */

static int v_data(scn_ctx *c, json_t *root, scn_scenario *s)
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
    if (scn_i_opt_obj(c, root, "", "data", &o, p) || scn_i_check_keys(c, o, p, keys) ||
        scn_i_opt_str(c, o, p, "kind", &kind, NULL))
        return -1;
    scn_i_ptr_key(kp, p, "kind");
    if (scn_i_lookup(c, kp, "data kind", kind, kinds) < 0 ||
        scn_i_opt_int(c, o, p, "train", 1, INT_MAX, &train, &has_train) ||
        scn_i_opt_int(c, o, p, "test", 1, INT_MAX, &test, NULL) ||
        scn_i_opt_int(c, o, p, "features", 1, INT_MAX, &features, NULL) ||
        scn_i_opt_int(c, o, p, "classes", 2, INT_MAX, &classes, NULL) ||
        scn_i_opt_num(c, o, p, "separation", GT0, &s->data_separation, NULL) ||
        scn_i_opt_str(c, o, p, "partition", &partition, NULL))
        return -1;
    scn_i_ptr_key(kp, p, "partition");
    if ((k = scn_i_lookup(c, kp, "partition", partition, partitions)) < 0)
        return -1;
    if (logistic && classes != 2) {
        scn_i_ptr_key(kp, p, "classes");
        return scn_i_fail(c, kp, "must be 2 with model \"logistic\", got %lld", classes);
    }
    if (train < s->n_nodes) {
        scn_i_ptr_key(kp, p, "train");
        return scn_i_fail(c, kp, "must be >= nodes (%d) so that every node holds data, got %lld%s",
                    s->n_nodes, train, scn_i_dflt(has_train));
    }
    s->data_train = (size_t)train;
    s->data_test = (size_t)test;
    s->data_features = (size_t)features;
    s->data_classes = (int)classes;
    return scn_i_set_str(c, &s->partition, partitions[k]);
}

static int v_algorithm(scn_ctx *c, json_t *root, scn_scenario *s)
{
    static const char *const keys[] = {"name", "lr", "batch", NULL};
    char p[PTR_MAX], bp[PTR_MAX];
    const char *name = NULL;
    long long batch = 32, per_node = (long long)s->data_train / s->n_nodes;
    int has_batch;
    json_t *o;

    s->lr = 0.1;
    if (scn_i_need_key(c, root, "", "algorithm", NULL) ||
        scn_i_opt_obj(c, root, "", "algorithm", &o, p) || scn_i_check_keys(c, o, p, keys) ||
        scn_i_need_key(c, o, p, "name", NULL) || scn_i_opt_str(c, o, p, "name", &name, NULL))
        return -1;
    if (name[0] == '\0') {
        scn_i_ptr_key(bp, p, "name");
        return scn_i_fail(c, bp, "must not be empty");
    }
    if (scn_i_opt_num(c, o, p, "lr", GE0, &s->lr, NULL) ||
        scn_i_opt_int(c, o, p, "batch", 1, INT_MAX, &batch, &has_batch))
        return -1;
    if (batch > per_node) {
        scn_i_ptr_key(bp, p, "batch");
        return scn_i_fail(c, bp, "must be <= %lld (train %zu / nodes %d), got %lld%s", per_node,
                    s->data_train, s->n_nodes, batch, scn_i_dflt(has_batch));
    }
    s->batch = (size_t)batch;
    return scn_i_set_str(c, &s->algorithm, name);
}

static int v_stop(scn_ctx *c, json_t *root, scn_scenario *s)
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
    if (scn_i_need_key(c, root, "", "stop", NULL) || scn_i_opt_obj(c, root, "", "stop", &o, p) ||
        scn_i_check_keys(c, o, p, keys) ||
        scn_i_opt_num(c, o, p, "time_s", GT0, &s->stop_time_s, &has_time) ||
        scn_i_opt_int(c, o, p, "steps", 1, LONG_MAX, &steps, &has_steps) ||
        scn_i_opt_num(c, o, p, "target_loss", GT0, &s->stop_target_loss, NULL) ||
        scn_i_opt_num(c, o, p, "target_accuracy", UNIT, &s->stop_target_accuracy, NULL))
        return -1;
    if (!has_time && !has_steps)
        return scn_i_fail(c, p, "needs \"time_s\" or \"steps\" (or both) so that the run ends");
    s->stop_steps = (long)steps;
    return 0;
}

static int v_metrics(scn_ctx *c, json_t *root, scn_scenario *s)
{
    static const char *const keys[] = {"every_s", "eval_samples", NULL};
    char p[PTR_MAX], ep[PTR_MAX];
    long long eval = 0;
    json_t *o;

    s->metrics_every_s = isinf(s->stop_time_s) ? 100 * s->step_time_s : s->stop_time_s / 100;
    if (scn_i_opt_obj(c, root, "", "metrics", &o, p) || scn_i_check_keys(c, o, p, keys) ||
        scn_i_opt_num(c, o, p, "every_s", GT0, &s->metrics_every_s, NULL) ||
        scn_i_opt_int(c, o, p, "eval_samples", 0, LLONG_MAX, &eval, NULL))
        return -1;
    if (eval > (long long)s->data_train) {
        scn_i_ptr_key(ep, p, "eval_samples");
        return scn_i_fail(c, ep, "must be <= train (%zu), got %lld", s->data_train, eval);
    }
    s->metrics_eval_samples = (size_t)eval;
    return 0;
}

int scn_i_validate(scn_ctx *c, json_t *root, scn_scenario *s)
{
    static const char *const keys[] = {"seed", "nodes", "compute", "network", "topology",
                                       "model", "data", "algorithm", "stop", "metrics", NULL};
    long long seed = 1, nodes = 0;

    if (scn_i_check_keys(c, root, "", keys) ||
        scn_i_opt_int(c, root, "", "seed", 0, LLONG_MAX, &seed, NULL) || scn_i_need_key(c, root, "", "nodes", NULL) ||
        scn_i_opt_int(c, root, "", "nodes", 1, INT_MAX, &nodes, NULL))
        return -1;
    s->seed = (uint64_t)seed;
    s->n_nodes = (int)nodes;
    if (v_compute(c, root, s) || v_network(c, root, s) || v_topology(c, root, s) ||
        v_model(c, root, s) || v_data(c, root, s) || v_algorithm(c, root, s) ||
        v_stop(c, root, s) || v_metrics(c, root, s))
        return -1;
    return 0;
}
