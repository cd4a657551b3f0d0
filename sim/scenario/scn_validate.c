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

/* ---- compute (noise, groups and slowdowns: scn_hetero.c) --------------- */

static int v_compute(scn_ctx *c, json_t *root, scn_scenario *s)
{
    static const char *const keys[] = {"step_time_s", "flops_per_s", "noise", "groups",
                                       "slowdowns", NULL};
    char p[PTR_MAX];
    scn_noise_spec ns;
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

enum { TOPO_RING, TOPO_COMPLETE, TOPO_TORUS2D, TOPO_ERDOS_RENYI, TOPO_RANDOM_REGULAR };

static int v_topology(scn_ctx *c, json_t *root, scn_scenario *s)
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

    if (scn_i_opt_obj(c, root, "", "topology", &o, p) || scn_i_check_keys(c, o, p, keys) ||
        scn_i_opt_str(c, o, p, "kind", &kind, NULL))
        return -1;
    scn_i_ptr_key(kp, p, "kind");
    if ((k = scn_i_lookup(c, kp, "topology", kind, kinds)) < 0 ||
        scn_i_kind_keys(c, o, p, per_kind[k], "kind", kind))
        return -1;
    snprintf(why, sizeof why, "for kind \"%s\"", kind);
    switch (k) {
    case TOPO_TORUS2D:
        if (scn_i_need_key(c, o, p, "rows", why) || scn_i_need_key(c, o, p, "cols", why) ||
            scn_i_opt_int(c, o, p, "rows", 1, INT_MAX, &rows, NULL) ||
            scn_i_opt_int(c, o, p, "cols", 1, INT_MAX, &cols, NULL))
            return -1;
        if (rows * cols != n)
            return scn_i_fail(c, p, "rows * cols must equal nodes (%lld), got %lld * %lld = %lld",
                        n, rows, cols, rows * cols);
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
    default:
        break;
    }
    s->topo_rows = (int)rows;
    s->topo_cols = (int)cols;
    s->topo_degree = (int)degree;
    return scn_i_set_str(c, &s->topology, kinds[k]);
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
    static const char *const keys[] = {"seed", "nodes", "compute", "faults", "network",
                                       "topology", "model", "data", "algorithm", "stop",
                                       "metrics", "output", NULL};
    long long seed = 1, nodes = 0;

    if (scn_i_check_keys(c, root, "", keys) ||
        scn_i_opt_int(c, root, "", "seed", 0, LLONG_MAX, &seed, NULL) || scn_i_need_key(c, root, "", "nodes", NULL) ||
        scn_i_opt_int(c, root, "", "nodes", 1, INT_MAX, &nodes, NULL))
        return -1;
    s->seed = (uint64_t)seed;
    s->n_nodes = (int)nodes;
    if (v_compute(c, root, s) || scn_i_v_faults(c, root, s) || v_network(c, root, s) ||
        v_topology(c, root, s) || v_model(c, root, s) || v_data(c, root, s) ||
        v_algorithm(c, root, s) || v_stop(c, root, s) || v_metrics(c, root, s) ||
        scn_i_v_output(c, root, s))
        return -1;
    return 0;
}
