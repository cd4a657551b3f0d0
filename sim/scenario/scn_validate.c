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

/* ---- compute (noise and groups: scn_compute.c; slowdowns: scn_env.c) --- */

static int v_compute(scn_ctx *c, json_t *root, scn_scenario *s)
{
    static const char *const keys[] = {"step_time_s", "flops_per_s", "noise", "groups",
                                       "slowdowns", NULL};
    char p[PTR_MAX];
    cl_noise_spec ns;
    int has_step, has_flops;
    json_t *o;

    s->step_time_s = 0.01;
    if (scn_i_opt_obj(c, root, "", "compute", &o, p) || scn_i_check_keys(c, o, p, keys) ||
        scn_i_opt_num(c, o, p, "step_time_s", GT0, &s->step_time_s, &has_step) ||
        scn_i_opt_num(c, o, p, "flops_per_s", GT0, &s->flops_per_s, &has_flops))
        return -1;
    if (has_step && has_flops)
        return scn_i_fail(c, p, "give \"step_time_s\" or \"flops_per_s\", not both");
    if (scn_i_v_noise(c, o, p, &ns))
        return -1;
    s->noise = ns.dist;
    s->noise_low = ns.low;
    s->noise_high = ns.high;
    s->noise_sigma = ns.sigma;
    s->noise_floor = ns.floor;
    s->noise_shift = ns.shift;
    s->noise_shape = ns.shape;
    s->noise_alpha = ns.alpha;
    if (scn_i_v_groups(c, o, p, s) || scn_i_v_slowdowns(c, o, p, s))
        return -1;
    return 0;
}

/* ---- network, topology, model ----------------------------------------- */

static int v_network(scn_ctx *c, json_t *root, scn_scenario *s)
{
    static const char *const keys[] = {"latency_s", "bandwidth_Bps", "bytes_per_param",
                                       "compression_ratio", "discipline", "up_Bps",
                                       "down_Bps", "nics", "jitter", "loss", "reorder",
                                       "outages", "links", NULL};
    char p[PTR_MAX];
    json_t *o;

    s->latency_s = 1e-4;
    s->bandwidth_Bps = 1.25e9;
    s->bytes_per_param = 4;
    if (scn_i_opt_obj(c, root, "", "network", &o, p) || scn_i_check_keys(c, o, p, keys) ||
        scn_i_opt_num(c, o, p, "latency_s", GE0, &s->latency_s, NULL) ||
        scn_i_opt_num(c, o, p, "bandwidth_Bps", GT0, &s->bandwidth_Bps, NULL) ||
        scn_i_opt_num(c, o, p, "bytes_per_param", GT0, &s->bytes_per_param, NULL) ||
        scn_i_v_network_nics(c, o, p, s) || scn_i_v_network_links(c, o, p, s))
        return -1;
    return 0;
}

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
    const char *const *kinds = topo_kind_name_list, *const *mixings = topo_mixing_name_list;
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
    s->topo_mixing = (topo_mixing)mi;
    s->topo_kind = (topo_kind)ki;
    s->topology = kinds[ki];
    return 0;
}

/* A boolean key; *out untouched when absent. */
static int opt_bool(scn_ctx *c, json_t *obj, const char *optr, const char *key, int *out)
{
    json_t *v = obj ? json_object_get(obj, key) : NULL;
    char p[PTR_MAX];

    if (!v)
        return 0;
    scn_i_ptr_key(p, optr, key);
    if (!json_is_boolean(v))
        return scn_i_fail(c, p, "must be true or false, got %s", scn_i_type_name(v));
    *out = json_is_true(v);
    return 0;
}

static int v_model(scn_ctx *c, json_t *root, scn_scenario *s)
{
    static const char *const keys[] = {"kind", "l2", "hidden", "activation", "message_bytes",
                                       NULL};
    static const char *const plain_keys[] = {"kind", "l2", NULL};
    static const char *const none_keys[] = {"kind", "message_bytes", NULL};
    const char *const *kinds = scn_i_model_names, *const *acts = mdl_activation_name_list;
    char p[PTR_MAX], kp[PTR_MAX], ep[PTR_MAX];
    const char *kind = "softmax", *act = "relu";
    json_t *o, *h;
    int k;

    s->l2 = 1e-4;
    if (scn_i_opt_obj(c, root, "", "model", &o, p) || scn_i_check_keys(c, o, p, keys) ||
        scn_i_opt_str(c, o, p, "kind", &kind, NULL))
        return -1;
    scn_i_ptr_key(kp, p, "kind");
    if ((k = scn_i_lookup(c, kp, "model", kind, kinds)) < 0)
        return -1;
    s->model = kinds[k];
    s->model_type = mdl_type_find(kinds[k]);   /* NULL for "none" */
    if (!s->model_type) {
        /* Timing only: no parameters, so nothing computes FLOPs. */
        s->l2 = 0;
        if (scn_i_kind_keys(c, o, p, none_keys, "kind", kind) ||
            scn_i_need_key(c, o, p, "message_bytes", "for kind \"none\"") ||
            scn_i_opt_num(c, o, p, "message_bytes", GT0, &s->model_message_bytes, NULL))
            return -1;
        if (s->flops_per_s > 0)
            return scn_i_fail(c, "/compute/flops_per_s", "model \"none\" has no FLOPs; give "
                              "\"step_time_s\"");
        for (size_t g = 0; g < s->n_groups; g++)
            if (s->groups[g].flops_per_s > 0) {
                char gp[PTR_MAX];
                snprintf(gp, sizeof gp, "/compute/groups/%zu/flops_per_s", g);
                return scn_i_fail(c, gp, "model \"none\" has no FLOPs; give \"step_time_s\"");
            }
        s->model_n_hidden = 0;
        return 0;
    }
    if (scn_i_opt_num(c, o, p, "l2", GE0, &s->l2, NULL))
        return -1;
    if (s->model_type != &mdl_mlp)
        return scn_i_kind_keys(c, o, p, plain_keys, "kind", kind);

    s->model_n_hidden = 1;
    s->model_hidden[0] = 100;
    if ((h = o ? json_object_get(o, "hidden") : NULL) != NULL) {
        size_t i;
        json_t *e;
        scn_i_ptr_key(kp, p, "hidden");
        if (!json_is_array(h))
            return scn_i_fail(c, kp, "must be an array of layer widths, got %s", scn_i_type_name(h));
        if (json_array_size(h) < 1 || json_array_size(h) > 8)
            return scn_i_fail(c, kp, "must hold 1 to 8 layer widths, got %zu", json_array_size(h));
        json_array_foreach(h, i, e) {
            long long w;
            scn_i_ptr_idx(ep, kp, i);
            if (scn_i_int_value(c, ep, e, 1, 1 << 20, &w))
                return -1;
            s->model_hidden[i] = (size_t)w;
        }
        s->model_n_hidden = json_array_size(h);
    }
    if (scn_i_opt_str(c, o, p, "activation", &act, NULL))
        return -1;
    scn_i_ptr_key(kp, p, "activation");
    if ((k = scn_i_lookup(c, kp, "activation", act, acts)) < 0)
        return -1;
    s->model_activation = (mdl_activation)k;
    return 0;
}

/* ---- data, algorithm, stop, metrics ------------------------------------ */

static int v_partition(scn_ctx *c, json_t *o, const char *p, scn_scenario *s)
{
    const char *const *partitions = mdl_partition_kind_name_list;
    static const char *const own[] = {"alpha", "shards_per_node", "exponent", NULL};
    char kp[PTR_MAX];
    const char *partition = "iid";
    long long shards = 2;
    int k;

    s->partition_alpha = 0.5;
    s->partition_exponent = 1.5;
    if (scn_i_opt_str(c, o, p, "partition", &partition, NULL))
        return -1;
    scn_i_ptr_key(kp, p, "partition");
    if ((k = scn_i_lookup(c, kp, "partition", partition, partitions)) < 0)
        return -1;
    /* Each partition kind's own key is refused with the others. */
    for (int i = 0; own[i]; i++) {
        if (o && json_object_get(o, own[i]) && i + 1 != k) {
            char q[64];
            scn_i_ptr_key(kp, p, own[i]);
            return scn_i_fail(c, kp, "is not allowed with partition %s",
                              scn_i_quoted(q, sizeof q, partition));
        }
    }
    if (scn_i_opt_num(c, o, p, "alpha", GT0, &s->partition_alpha, NULL) ||
        scn_i_opt_int(c, o, p, "shards_per_node", 1, INT_MAX, &shards, NULL) ||
        scn_i_opt_num(c, o, p, "exponent", GT0, &s->partition_exponent, NULL))
        return -1;
    s->partition_shards = (int)shards;
    s->partition_kind = (mdl_partition_kind)k;
    s->partition = partitions[k];
    return 0;
}

static int v_data(scn_ctx *c, json_t *root, scn_scenario *s)
{
    static const char *const keys[] = {"kind", "train", "test", "features", "classes",
                                       "separation", "partition", "alpha", "shards_per_node",
                                       "exponent", "scale", "train_images", "train_labels",
                                       "test_images", "test_labels", "dir", "train_file",
                                       "test_file", "test_fraction", "label_column", "header",
                                       "noise", "seed", NULL};
    static const char *const per_kind[][15] = {
        {"kind", "train", "test", "features", "classes", "separation", "partition", "alpha",
         "shards_per_node", "exponent", "scale", "seed", NULL},
        {"kind", "train", "test", "train_images", "train_labels", "test_images", "test_labels",
         "partition", "alpha", "shards_per_node", "exponent", "scale", "seed", NULL},
        {"kind", "train", "test", "dir", "partition", "alpha", "shards_per_node", "exponent",
         "scale", "seed", NULL},
        {"kind", "train", "test", "train_file", "test_file", "test_fraction", "features",
         "partition", "alpha", "shards_per_node", "exponent", "scale", "seed", NULL},
        {"kind", "train", "test", "train_file", "test_file", "test_fraction", "label_column",
         "header", "partition", "alpha", "shards_per_node", "exponent", "scale", "seed", NULL},
        {"kind", "train", "test", "features", "separation", "partition", "alpha",
         "shards_per_node", "exponent", "scale", "seed", NULL},
        {"kind", "train", "test", "features", "noise", "partition", "exponent", "scale",
         "seed", NULL},
    };
    static const char *const files[] = {"train_images", "train_labels", "test_images",
                                        "test_labels", NULL};
    const char *const *kinds = scn_i_data_kind_names, *const *scales = mdl_scale_name_list;
    char p[PTR_MAX], kp[PTR_MAX], why[64];
    const char *kind = "synthetic", *scale = NULL, *dir = "/usr/share/datasets/fashion-mnist";
    int logistic = s->model_type == &mdl_logistic, has_train, k;
    long long train = 4096, test = 1024, features = 16, classes = logistic ? 2 : 4;
    json_t *o;

    s->data_separation = 2.0;
    if (scn_i_opt_obj(c, root, "", "data", &o, p) || scn_i_check_keys(c, o, p, keys) ||
        scn_i_opt_str(c, o, p, "kind", &kind, NULL))
        return -1;
    scn_i_ptr_key(kp, p, "kind");
    if ((k = scn_i_lookup(c, kp, "data kind", kind, kinds)) < 0 ||
        scn_i_kind_keys(c, o, p, per_kind[k], "kind", kind))
        return -1;
    const int generated = scn_data_generated((scn_data_kind)k);
    const int linear = s->model_type == &mdl_linear;
    s->data_noise = 0.1;
    if (!generated)
        train = test = 0;
    if (k == SCN_DATA_LIBSVM)
        features = 0;
    long long dseed = 0;
    int has_dseed = 0;
    if (scn_i_opt_int(c, o, p, "seed", 0, LLONG_MAX, &dseed, &has_dseed))
        return -1;
    s->has_data_seed = has_dseed;
    s->data_seed = has_dseed ? (uint64_t)dseed : s->seed;
    if (scn_i_opt_int(c, o, p, "train", generated ? 1 : 0, INT_MAX, &train, &has_train) ||
        scn_i_opt_int(c, o, p, "test", generated ? 1 : 0, INT_MAX, &test, NULL) ||
        scn_i_opt_num(c, o, p, "noise", GE0, &s->data_noise, NULL) ||
        scn_i_opt_int(c, o, p, "features", k == SCN_DATA_LIBSVM ? 0 : 1, 1 << 24, &features, NULL) ||
        scn_i_opt_int(c, o, p, "classes", 2, INT_MAX, &classes, NULL) ||
        scn_i_opt_num(c, o, p, "separation", GT0, &s->data_separation, NULL) ||
        v_partition(c, o, p, s) || scn_i_opt_str(c, o, p, "scale", &scale, NULL))
        return -1;
    if (linear != (k == SCN_DATA_SYNTH_REGRESSION)) {
        scn_i_ptr_key(kp, p, "kind");
        return linear ? scn_i_fail(c, kp, "model \"linear\" needs regression data (kind "
                                   "\"synthetic-regression\"), got \"%s\"", kind)
                      : scn_i_fail(c, kp, "regression data needs model \"linear\", got \"%s\"",
                                   s->model);
    }
    if (k == SCN_DATA_SYNTH_REGRESSION && s->partition_kind != MDL_PART_IID &&
        s->partition_kind != MDL_PART_QUANTITY) {
        scn_i_ptr_key(kp, p, "partition");
        return scn_i_fail(c, kp, "partition \"%s\" needs class labels; regression data has "
                          "none (use iid or quantity)", s->partition);
    }
    if (scale == NULL) {
        s->data_scale = generated ? MDL_SCALE_NONE : MDL_SCALE_MINMAX;
    } else {
        int sc;
        scn_i_ptr_key(kp, p, "scale");
        if ((sc = scn_i_lookup(c, kp, "scale", scale, scales)) < 0)
            return -1;
        s->data_scale = (mdl_scale)sc;
    }
    if (k == SCN_DATA_IDX) {
        snprintf(why, sizeof why, "for kind \"idx\"");
        for (int i = 0; files[i]; i++) {
            const char *f = NULL;
            char **dst = i == 0 ? &s->data_train_images : i == 1 ? &s->data_train_labels
                       : i == 2 ? &s->data_test_images : &s->data_test_labels;
            if (scn_i_need_key(c, o, p, files[i], why) || scn_i_opt_str(c, o, p, files[i], &f, NULL))
                return -1;
            if (f[0] == '\0') {
                scn_i_ptr_key(kp, p, files[i]);
                return scn_i_fail(c, kp, "must not be empty");
            }
            if (scn_i_set_str(c, dst, f))
                return -1;
        }
    } else if (k == SCN_DATA_LIBSVM || k == SCN_DATA_CSV) {
        const char *tf = NULL, *vf = NULL;
        long long col = 0;
        int has_frac = 0;
        snprintf(why, sizeof why, "for kind \"%s\"", kind);
        s->data_test_fraction = 0.2;
        if (scn_i_need_key(c, o, p, "train_file", why) ||
            scn_i_opt_str(c, o, p, "train_file", &tf, NULL) ||
            scn_i_opt_str(c, o, p, "test_file", &vf, NULL) ||
            scn_i_opt_num(c, o, p, "test_fraction", GT0, &s->data_test_fraction, &has_frac) ||
            scn_i_opt_int(c, o, p, "label_column", 0, INT_MAX, &col, NULL) ||
            opt_bool(c, o, p, "header", &s->data_header))
            return -1;
        if (tf[0] == '\0' || (vf && vf[0] == '\0')) {
            scn_i_ptr_key(kp, p, tf[0] == '\0' ? "train_file" : "test_file");
            return scn_i_fail(c, kp, "must not be empty");
        }
        scn_i_ptr_key(kp, p, "test_fraction");
        if (vf && has_frac)
            return scn_i_fail(c, kp, "is not allowed with \"test_file\" (the test set is "
                              "that file)");
        if (s->data_test_fraction >= 1.0)
            return scn_i_fail(c, kp, "must be < 1, got %g", s->data_test_fraction);
        if (vf)
            s->data_test_fraction = 0.0;
        s->data_label_column = (int)col;
        if (scn_i_set_str(c, &s->data_train_file, tf) ||
            (vf && scn_i_set_str(c, &s->data_test_file, vf)))
            return -1;
    } else if (k == SCN_DATA_FASHION_MNIST) {
        if (scn_i_opt_str(c, o, p, "dir", &dir, NULL))
            return -1;
        if (dir[0] == '\0') {
            scn_i_ptr_key(kp, p, "dir");
            return scn_i_fail(c, kp, "must not be empty");
        }
        if (scn_i_set_str(c, &s->data_dir, dir))
            return -1;
    }
    if (k == SCN_DATA_SYNTH_LOGISTIC)
        classes = 2;
    if (logistic && k == SCN_DATA_SYNTHETIC && classes != 2) {
        scn_i_ptr_key(kp, p, "classes");
        return scn_i_fail(c, kp, "must be 2 with model \"logistic\", got %lld", classes);
    }
    /* Model "none" reads no data: the section is checked but not used. */
    const int no_data = s->model_type == NULL;
    if (generated && !no_data && train < s->n_nodes) {
        scn_i_ptr_key(kp, p, "train");
        return scn_i_fail(c, kp, "must be >= nodes (%d) so that every node holds data, got %lld%s",
                    s->n_nodes, train, scn_i_dflt(has_train));
    }
    if (!generated && !no_data && train > 0 && train < s->n_nodes) {
        scn_i_ptr_key(kp, p, "train");
        return scn_i_fail(c, kp, "must be 0 (all) or >= nodes (%d) so that every node holds "
                          "data, got %lld", s->n_nodes, train);
    }
    s->data_train = (size_t)train;
    s->data_test = (size_t)test;
    s->data_features = generated || k == SCN_DATA_LIBSVM ? (size_t)features : 0;
    s->data_classes = k == SCN_DATA_SYNTHETIC || k == SCN_DATA_SYNTH_LOGISTIC ? (int)classes : 0;
    s->data_source = (scn_data_kind)k;
    s->data_kind = kinds[k];
    return 0;
}

static int cmp_param(const void *a, const void *b)
{
    return strcmp(((const scn_param *)a)->key, ((const scn_param *)b)->key);
}

/* Keys of the algorithm object other than the common ones: numbers or
 * strings, checked later against the algorithm's own table. */
static int v_alg_params(scn_ctx *c, json_t *o, const char *optr, const char *const *common,
                        scn_scenario *s)
{
    const char *k;
    json_t *v;
    size_t n = 0;

    json_object_foreach(o, k, v)
        n += !scn_i_in_list(k, common);
    if (n == 0)
        return 0;
    if (!(s->alg_params = calloc(n, sizeof *s->alg_params)))
        return scn_i_fail_oom(c);
    json_object_foreach(o, k, v) {
        if (scn_i_in_list(k, common))
            continue;
        scn_param *q = &s->alg_params[s->n_alg_params++];
        char p[PTR_MAX];
        scn_i_ptr_key(p, optr, k);
        if (!(q->key = strdup(k)))
            return scn_i_fail_oom(c);
        if (json_is_string(v)) {
            q->is_string = 1;
            if (!(q->str = strdup(json_string_value(v))))
                return scn_i_fail_oom(c);
        } else if (json_is_number(v)) {
            q->num = json_number_value(v);
        } else {
            return scn_i_fail(c, p, "must be a number or a string, got %s", scn_i_type_name(v));
        }
    }
    qsort(s->alg_params, s->n_alg_params, sizeof *s->alg_params, cmp_param);
    return 0;
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
        scn_i_opt_obj(c, root, "", "algorithm", &o, p) ||
        scn_i_need_key(c, o, p, "name", NULL) || scn_i_opt_str(c, o, p, "name", &name, NULL))
        return -1;
    if (name[0] == '\0') {
        scn_i_ptr_key(bp, p, "name");
        return scn_i_fail(c, bp, "must not be empty");
    }
    if (scn_i_opt_num(c, o, p, "lr", GE0, &s->lr, NULL) ||
        scn_i_opt_int(c, o, p, "batch", 1, INT_MAX, &batch, &has_batch))
        return -1;
    /* With file data the count is known only after loading: the runner
     * checks the batch against every node's share then. */
    if (s->model_type && s->data_train > 0 && scn_data_generated(s->data_source) &&
        batch > per_node) {
        scn_i_ptr_key(bp, p, "batch");
        return scn_i_fail(c, bp, "must be <= %lld (train %zu / nodes %d), got %lld%s", per_node,
                    s->data_train, s->n_nodes, batch, scn_i_dflt(has_batch));
    }
    s->batch = (size_t)batch;
    if (v_alg_params(c, o, p, keys, s))
        return -1;
    return scn_i_set_str(c, &s->algorithm, name);
}

static int v_optimizer(scn_ctx *c, json_t *root, scn_scenario *s)
{
    static const char *const keys[] = {"momentum", "nesterov", "weight_decay", "schedule",
                                       "step_every", "gamma", "total_steps", "lr_min",
                                       "warmup_steps", NULL};
    const char *const *schedules = mdl_schedule_name_list;
    static const char *const own[][3] = {
        {NULL}, {"step_every", "gamma", NULL}, {"total_steps", "lr_min", NULL},
    };
    char p[PTR_MAX], kp[PTR_MAX], why[64];
    const char *schedule = "constant";
    long long every = 0, total = 0, warmup = 0;
    int k;
    json_t *o;

    s->opt_step_gamma = 0.1;
    if (scn_i_opt_obj(c, root, "", "optimizer", &o, p) || scn_i_check_keys(c, o, p, keys) ||
        scn_i_opt_num(c, o, p, "momentum", GE0, &s->opt_momentum, NULL) ||
        opt_bool(c, o, p, "nesterov", &s->opt_nesterov) ||
        scn_i_opt_num(c, o, p, "weight_decay", GE0, &s->opt_weight_decay, NULL) ||
        scn_i_opt_str(c, o, p, "schedule", &schedule, NULL) ||
        scn_i_opt_int(c, o, p, "warmup_steps", 0, LONG_MAX, &warmup, NULL))
        return -1;
    if (s->opt_momentum >= 1.0) {
        scn_i_ptr_key(kp, p, "momentum");
        return scn_i_fail(c, kp, "must be < 1, got %g", s->opt_momentum);
    }
    if (s->opt_nesterov && s->opt_momentum == 0.0) {
        scn_i_ptr_key(kp, p, "nesterov");
        return scn_i_fail(c, kp, "needs momentum > 0");
    }
    scn_i_ptr_key(kp, p, "schedule");
    if ((k = scn_i_lookup(c, kp, "schedule", schedule, schedules)) < 0)
        return -1;
    for (int j = 1; j < 3; j++)
        for (int i = 0; own[j][i]; i++)
            if (o && json_object_get(o, own[j][i]) && j != k) {
                char q[64];
                scn_i_ptr_key(kp, p, own[j][i]);
                return scn_i_fail(c, kp, "is not allowed with schedule %s",
                                  scn_i_quoted(q, sizeof q, schedule));
            }
    snprintf(why, sizeof why, "for schedule \"%s\"", schedule);
    if (k == MDL_SCHED_STEP) {
        if (scn_i_need_key(c, o, p, "step_every", why) ||
            scn_i_opt_int(c, o, p, "step_every", 1, LONG_MAX, &every, NULL) ||
            scn_i_opt_num(c, o, p, "gamma", UNIT, &s->opt_step_gamma, NULL))
            return -1;
    } else if (k == MDL_SCHED_COSINE) {
        total = s->stop_steps;
        if (scn_i_opt_int(c, o, p, "total_steps", 1, LONG_MAX, &total, NULL) ||
            scn_i_opt_num(c, o, p, "lr_min", GE0, &s->opt_lr_min, NULL))
            return -1;
        if (total == 0)
            return scn_i_fail(c, p, "missing required key \"total_steps\" for schedule "
                              "\"cosine\" (or give stop.steps)");
    }
    s->opt_step_every = (long)every;
    s->opt_total_steps = (long)total;
    s->opt_warmup_steps = (long)warmup;
    s->opt_schedule = (mdl_schedule)k;
    return 0;
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
    if (!isnan(s->stop_target_accuracy) && s->model_type == &mdl_linear) {
        char tp[PTR_MAX];
        scn_i_ptr_key(tp, p, "target_accuracy");
        return scn_i_fail(c, tp, "has no meaning for model \"linear\" (regression); use "
                          "target_loss");
    }
    if (!s->model_type &&
        (!isnan(s->stop_target_accuracy) || !isnan(s->stop_target_loss))) {
        char tp[PTR_MAX];
        scn_i_ptr_key(tp, p, isnan(s->stop_target_loss) ? "target_accuracy" : "target_loss");
        return scn_i_fail(c, tp, "has no meaning for model \"none\" (timing only: nothing "
                          "is evaluated)");
    }
    s->stop_steps = (long)steps;
    return 0;
}

static int v_metrics(scn_ctx *c, json_t *root, scn_scenario *s)
{
    static const char *const keys[] = {"every_s", "eval_samples", "test_samples", "per_node",
                                       NULL};
    char p[PTR_MAX], ep[PTR_MAX];
    long long eval = 0, test = 0;
    json_t *o;

    s->metrics_every_s = isinf(s->stop_time_s) ? 100 * s->step_time_s : s->stop_time_s / 100;
    if (scn_i_opt_obj(c, root, "", "metrics", &o, p) || scn_i_check_keys(c, o, p, keys) ||
        scn_i_opt_num(c, o, p, "every_s", GT0, &s->metrics_every_s, NULL) ||
        scn_i_opt_int(c, o, p, "eval_samples", 0, LLONG_MAX, &eval, NULL) ||
        scn_i_opt_int(c, o, p, "test_samples", 0, LLONG_MAX, &test, NULL) ||
        opt_bool(c, o, p, "per_node", &s->metrics_per_node))
        return -1;
    /* Each evaluation writes a row and reads the evaluation sets: a million
     * of them is already far more than any plot needs. */
    if (!isinf(s->stop_time_s) && s->stop_time_s / s->metrics_every_s > 1e6) {
        scn_i_ptr_key(ep, p, "every_s");
        return scn_i_fail(c, ep, "must be >= stop.time_s / 1000000 (%g): at most a million "
                          "evaluations, got %g", s->stop_time_s / 1e6, s->metrics_every_s);
    }
    /* With file data the sizes are known only after loading: the runner
     * uses min(samples, set size) then. */
    if (s->data_train > 0 && eval > (long long)s->data_train) {
        scn_i_ptr_key(ep, p, "eval_samples");
        return scn_i_fail(c, ep, "must be <= train (%zu), got %lld", s->data_train, eval);
    }
    if (s->data_test > 0 && test > (long long)s->data_test) {
        scn_i_ptr_key(ep, p, "test_samples");
        return scn_i_fail(c, ep, "must be <= test (%zu), got %lld", s->data_test, test);
    }
    s->metrics_eval_samples = (size_t)eval;
    s->metrics_test_samples = (size_t)test;
    return 0;
}

static int v_output(scn_ctx *c, json_t *root, scn_scenario *s)
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

/* limits: the memory check of the runner (docs/reliability.md). */
static int v_limits(scn_ctx *c, json_t *root, scn_scenario *s)
{
    static const char *const keys[] = {"memory_bytes", "check_memory", NULL};
    char p[PTR_MAX], tp[PTR_MAX];
    json_t *o, *t;

    s->limit_memory_bytes = 0;
    s->limit_check_memory = 1;
    if (scn_i_opt_obj(c, root, "", "limits", &o, p) || scn_i_check_keys(c, o, p, keys) ||
        scn_i_opt_num(c, o, p, "memory_bytes", GT0, &s->limit_memory_bytes, NULL))
        return -1;
    t = o ? json_object_get(o, "check_memory") : NULL;
    if (!t)
        return 0;
    scn_i_ptr_key(tp, p, "check_memory");
    if (!json_is_boolean(t))
        return scn_i_fail(c, tp, "must be true or false, got %s", scn_i_type_name(t));
    s->limit_check_memory = json_is_true(t);
    return 0;
}

int scn_i_validate(scn_ctx *c, json_t *root, scn_scenario *s)
{
    static const char *const keys[] = {"seed", "nodes", "compute", "faults", "network",
                                       "topology", "model", "data", "algorithm", "optimizer",
                                       "stop", "metrics", "output", "limits", NULL};
    long long seed = 1, nodes = 0;

    if (scn_i_check_keys(c, root, "", keys) ||
        scn_i_opt_int(c, root, "", "seed", 0, LLONG_MAX, &seed, NULL) || scn_i_need_key(c, root, "", "nodes", NULL) ||
        scn_i_opt_int(c, root, "", "nodes", 1, INT_MAX, &nodes, NULL))
        return -1;
    s->seed = (uint64_t)seed;
    s->n_nodes = (int)nodes;
    if (v_compute(c, root, s) || scn_i_v_faults(c, root, s) || v_network(c, root, s) ||
        v_topology(c, root, s) || v_model(c, root, s) || v_data(c, root, s) ||
        v_algorithm(c, root, s) || v_stop(c, root, s) || v_optimizer(c, root, s) ||
        v_metrics(c, root, s) || v_output(c, root, s) || v_limits(c, root, s))
        return -1;
    return 0;
}
