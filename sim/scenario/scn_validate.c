/* scn_validate.c -- validation of a scenario tree into the plain
 * scn_scenario struct, section by section in the order of docs/scenario.md
 * (later sections' rules read earlier ones): this file holds the order, the
 * top-level keys and the small sections (compute, network, algorithm,
 * optimizer, stop, metrics, output, limits); the others have their own
 * files (scn_compute.c, scn_env.c, scn_network.c, scn_topology.c,
 * scn_model.c).  The first error ends validation.  It does not know what an
 * algorithm name means (the runner's registry checks it).
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
                                       "slowdowns", "memory_bytes", NULL};
    char p[PTR_MAX];
    cl_noise_spec ns;
    int has_step, has_flops;
    json_t *o;

    s->step_time_s = 0.01;
    if (scn_i_opt_obj(c, root, "", "compute", &o, p) || scn_i_check_keys(c, o, p, keys) ||
        scn_i_opt_num(c, o, p, "step_time_s", GT0, &s->step_time_s, &has_step) ||
        scn_i_opt_num(c, o, p, "flops_per_s", GT0, &s->flops_per_s, &has_flops) ||
        scn_i_opt_num(c, o, p, "memory_bytes", GT0, &s->memory_bytes, NULL))
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

/* ---- network (NICs and links: scn_network.c) --------------------------- */

static int v_network(scn_ctx *c, json_t *root, scn_scenario *s)
{
    static const char *const keys[] = {"latency_s", "bandwidth_Bps", "bytes_per_param",
                                       "compression_ratio", "discipline", "up_Bps",
                                       "down_Bps", "nics", "jitter", "loss", "reorder",
                                       "outages", "links", "retransmit", NULL};
    char p[PTR_MAX];
    json_t *o;

    s->latency_s = 1e-4;
    s->bandwidth_Bps = 1.25e9;
    s->bytes_per_param = 4;
    if (scn_i_opt_obj(c, root, "", "network", &o, p) || scn_i_check_keys(c, o, p, keys) ||
        scn_i_opt_num(c, o, p, "latency_s", GE0, &s->latency_s, NULL) ||
        scn_i_opt_num(c, o, p, "bandwidth_Bps", GT0, &s->bandwidth_Bps, NULL) ||
        scn_i_opt_num(c, o, p, "bytes_per_param", GT0, &s->bytes_per_param, NULL) ||
        scn_i_v_network_nics(c, o, p, s) || scn_i_v_network_links(c, o, p, s) ||
        scn_i_v_network_retransmit(c, o, p, s))
        return -1;
    return 0;
}

/* ---- algorithm, optimizer, stop, metrics, output, limits --------------- */

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
        scn_i_opt_bool(c, o, p, "nesterov", &s->opt_nesterov) ||
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

const char *const scn_target_metric_names[] = {"train_loss", "test_loss", "test_accuracy",
                                               NULL};

/* metrics.targets: [{metric, value}, ...], each measured on the model the
 * evaluation measures; the same meaning rules as stop.target_*. */
static int v_targets(scn_ctx *c, json_t *o, const char *p, scn_scenario *s)
{
    static const char *const keys[] = {"metric", "value", NULL};
    char tp[PTR_MAX], ep[PTR_MAX], mp[PTR_MAX];
    json_t *a = o ? json_object_get(o, "targets") : NULL;
    size_t i;
    json_t *e;

    s->metrics_n_targets = 0;
    if (!a)
        return 0;
    scn_i_ptr_key(tp, p, "targets");
    if (!json_is_array(a))
        return scn_i_fail(c, tp, "must be an array of {\"metric\", \"value\"} objects, got %s",
                          scn_i_type_with_article(a));
    if (json_array_size(a) > SCN_MAX_TARGETS)
        return scn_i_fail(c, tp, "must have at most %d targets, got %zu", SCN_MAX_TARGETS,
                          json_array_size(a));
    json_array_foreach(a, i, e) {
        const char *name = NULL;
        scn_target *t = &s->metrics_targets[i];
        scn_i_ptr_idx(ep, tp, i);
        if (!json_is_object(e))
            return scn_i_fail(c, ep, "must be an object {\"metric\", \"value\"}, got %s",
                              scn_i_type_with_article(e));
        if (scn_i_check_keys(c, e, ep, keys) || scn_i_need_key(c, e, ep, "metric", NULL) ||
            scn_i_opt_str(c, e, ep, "metric", &name, NULL))
            return -1;
        scn_i_ptr_key(mp, ep, "metric");
        int k = scn_i_lookup(c, mp, "metric", name, scn_target_metric_names);
        if (k < 0)
            return -1;
        t->metric = (scn_target_metric)k;
        if (scn_i_need_key(c, e, ep, "value", NULL) ||
            scn_i_opt_num(c, e, ep, "value", t->metric == SCN_TARGET_TEST_ACCURACY ? UNIT : GT0,
                          &t->value, NULL))
            return -1;
        if (!s->model_type)
            return scn_i_fail(c, mp, "has no meaning for model \"none\" (timing only: "
                              "nothing is evaluated)");
        if (t->metric == SCN_TARGET_TEST_ACCURACY && s->model_type == &mdl_linear)
            return scn_i_fail(c, mp, "\"test_accuracy\" has no meaning for model \"linear\" "
                              "(regression); use train_loss or test_loss");
    }
    s->metrics_n_targets = json_array_size(a);
    return 0;
}

static int v_metrics(scn_ctx *c, json_t *root, scn_scenario *s)
{
    static const char *const keys[] = {"every_s", "eval_samples", "test_samples", "per_node",
                                       "targets", "target_snapshots", NULL};
    char p[PTR_MAX], ep[PTR_MAX];
    long long eval = 0, test = 0, snaps = 0;
    json_t *o;

    s->metrics_every_s = isinf(s->stop_time_s) ? 100 * s->step_time_s : s->stop_time_s / 100;
    if (scn_i_opt_obj(c, root, "", "metrics", &o, p) || scn_i_check_keys(c, o, p, keys) ||
        scn_i_opt_num(c, o, p, "every_s", GT0, &s->metrics_every_s, NULL) ||
        scn_i_opt_int(c, o, p, "eval_samples", 0, LLONG_MAX, &eval, NULL) ||
        scn_i_opt_int(c, o, p, "test_samples", 0, LLONG_MAX, &test, NULL) ||
        scn_i_opt_bool(c, o, p, "per_node", &s->metrics_per_node) ||
        v_targets(c, o, p, s) ||
        scn_i_opt_int(c, o, p, "target_snapshots", 2, SCN_MAX_TARGET_SNAPSHOTS, &snaps, NULL))
        return -1;
    s->metrics_target_snapshots = (long)snaps;
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
    static const char *const keys[] = {"trace", "topology_stats", NULL};
    static const char *const stats[] = {"bounded", "full", NULL};
    char p[PTR_MAX], tp[PTR_MAX];
    const char *mode = "bounded";
    json_t *o, *t;
    int mi;

    s->output_topology_full = 0;
    if (scn_i_opt_obj(c, root, "", "output", &o, p) || scn_i_check_keys(c, o, p, keys) ||
        scn_i_opt_str(c, o, p, "topology_stats", &mode, NULL))
        return -1;
    scn_i_ptr_key(tp, p, "topology_stats");
    if ((mi = scn_i_lookup(c, tp, "topology_stats", mode, stats)) < 0)
        return -1;
    s->output_topology_full = mi == 1;
    t = o ? json_object_get(o, "trace") : NULL;
    if (!t)
        return 0;
    scn_i_ptr_key(tp, p, "trace");
    if (!json_is_boolean(t))
        return scn_i_fail(c, tp, "must be true or false, got %s", scn_i_type_name(t));
    s->output_trace = json_is_true(t);
    return 0;
}

/* limits: the memory check and the event budget of the runner
 * (docs/reliability.md). */
static int opt_bool(scn_ctx *c, json_t *o, const char *p, const char *key, int *out)
{
    char tp[PTR_MAX];
    json_t *t = o ? json_object_get(o, key) : NULL;
    if (!t)
        return 0;
    scn_i_ptr_key(tp, p, key);
    if (!json_is_boolean(t))
        return scn_i_fail(c, tp, "must be true or false, got %s", scn_i_type_name(t));
    *out = json_is_true(t);
    return 0;
}

static int v_limits(scn_ctx *c, json_t *root, scn_scenario *s)
{
    static const char *const keys[] = {"memory_bytes", "check_memory", "events",
                                       "check_events", NULL};
    char p[PTR_MAX], tp[PTR_MAX];
    json_t *o;
    int given = 0;

    s->limit_memory_bytes = 0;
    s->limit_check_memory = 1;
    s->limit_events = 0;
    s->limit_check_events = 1;
    if (scn_i_opt_obj(c, root, "", "limits", &o, p) || scn_i_check_keys(c, o, p, keys) ||
        scn_i_opt_num(c, o, p, "memory_bytes", GT0, &s->limit_memory_bytes, NULL) ||
        scn_i_opt_num(c, o, p, "events", GT0, &s->limit_events, &given))
        return -1;
    if (given && !(s->limit_events >= 1 && s->limit_events <= 1e18)) {
        scn_i_ptr_key(tp, p, "events");
        return scn_i_fail(c, tp, "must be between 1 and 1e18 events, got %g", s->limit_events);
    }
    if (given)
        s->limit_events = floor(s->limit_events);
    return opt_bool(c, o, p, "check_memory", &s->limit_check_memory)
        || opt_bool(c, o, p, "check_events", &s->limit_check_events);
}

int scn_i_validate(scn_ctx *c, json_t *root, scn_scenario *s)
{
    static const char *const keys[] = {"seed", "nodes", "compute", "faults", "network",
                                       "topology", "model", "data", "algorithm", "optimizer",
                                       "stop", "metrics", "output", "limits", "freeze", NULL};
    long long seed = 1, nodes = 0;

    if (scn_i_check_keys(c, root, "", keys) ||
        scn_i_opt_int(c, root, "", "seed", 0, LLONG_MAX, &seed, NULL) || scn_i_need_key(c, root, "", "nodes", NULL) ||
        scn_i_opt_int(c, root, "", "nodes", 1, INT_MAX, &nodes, NULL))
        return -1;
    s->seed = (uint64_t)seed;
    s->n_nodes = (int)nodes;
    if (v_compute(c, root, s) || scn_i_v_faults(c, root, s) || v_network(c, root, s) ||
        scn_i_v_topology(c, root, s) || scn_i_v_model(c, root, s) || scn_i_v_data(c, root, s) ||
        scn_i_v_topology_data(c, s) || v_algorithm(c, root, s) || v_stop(c, root, s) || v_optimizer(c, root, s) ||
        v_metrics(c, root, s) || v_output(c, root, s) || v_limits(c, root, s) ||
        scn_i_v_freeze(c, root, s))
        return -1;
    return 0;
}
