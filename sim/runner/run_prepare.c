/* run_prepare.c -- turns a loaded scenario into the pieces of one run, in
 * order: the algorithm and its parameters, the topology, then the data and
 * model (run_data.c; for a learned topology the data first, since W is
 * learned from the partition's label proportions), the per-node settings in the cluster's terms
 * (run_hetero.c) and the memory and work limits (run_limits.c); and frees
 * them.  It runs nothing (run.c does) and writes nothing (run_output.c).
 */
#include "run_internal.h"
#include "mdl_split.h"   /* mdl_layers */

#include <float.h>

void run_i_value_error(scn_error *err, const scn_scenario *s, const char *ptr, const char *msg)
{
    snprintf(err->msg, sizeof err->msg, "%s: %s: error: %s", s->path, ptr, msg);
}

/* The graph of the scenario's topology; props (n x K label proportions)
 * for the learned kind, else NULL. */
static topo_graph *build_graph(const scn_scenario *s, const double *props, int K,
                               scn_error *err)
{
    topo_spec ts = { .n = s->n_nodes, .rows = s->topo_rows, .cols = s->topo_cols,
                     .layers = s->topo_layers, .p = s->topo_p, .degree = s->topo_degree,
                     .k = s->topo_k, .beta = s->topo_beta, .m = s->topo_m,
                     .path = s->topo_file, .lazy_alpha = s->topo_lazy_alpha,
                     .label_props = props, .n_labels = K, .lambda = s->topo_lambda,
                     .kind = s->topo_kind, .mixing = s->topo_mixing };
    char m[512];
    topo_graph *g = topo_build(&ts, sim_rng_derive(s->seed, SIM_RNG_NO_NODE, SIM_RNG_TOPOLOGY),
                               m, sizeof m);
    if (!g) {
        /* a bad line of an edge-list file is reported where it is:
         * "FILE:LINE: error: ..." */
        size_t len = s->topo_file ? strlen(s->topo_file) : 0;
        if (len > 0 && strncmp(m, s->topo_file, len) == 0 && m[len] == ':')
            snprintf(err->msg, sizeof err->msg, "%s", m);
        else
            run_i_value_error(err, s, "/topology", m);
    }
    return g;
}

/* The learned kind's input: the label proportions of the workers' slices
 * of the partition, n_nodes x K row-major (caller frees), or NULL with the
 * error (out of memory; data without class labels). */
static double *label_props(const run_sim *r, int *K, scn_error *err)
{
    const scn_scenario *s = r->s;
    const int n = s->n_nodes, C = r->train.n_classes;
    if (!r->train.y || C < 1) {
        run_i_value_error(err, s, "/topology/kind", "\"learned\" needs class labels, and the "
                          "data has none");
        return NULL;
    }
    double *pi = calloc((size_t)n * (size_t)C, sizeof *pi);
    if (!pi) {
        snprintf(err->msg, sizeof err->msg, "%s: error: out of memory", s->path);
        return NULL;
    }
    for (int i = 0; i < n; i++) {
        size_t lo = r->part.off[i], hi = r->part.off[i + 1];
        for (size_t k = lo; k < hi; k++)
            pi[(size_t)i * C + r->train.y[r->part.idx[k]]] += 1.0;
        for (int c = 0; c < C && hi > lo; c++)
            pi[(size_t)i * C + c] /= (double)(hi - lo);
    }
    *K = C;
    return pi;
}

static int build_topology(run_sim *r, scn_error *err)
{
    double *props = NULL;
    int K = 0;
    if (r->s->topo_kind == TOPO_LEARNED && !(props = label_props(r, &K, err)))
        return -1;
    r->g = build_graph(r->s, props, K, err);
    free(props);
    return r->g ? 0 : -1;
}

topo_graph *run_topology(const scn_scenario *s, scn_error *err)
{
    if (s->topo_kind != TOPO_LEARNED)
        return build_graph(s, NULL, 0, err);
    /* learned: the partition first (the data, as a run builds it) */
    run_sim *r = calloc(1, sizeof *r);
    if (!r) {
        snprintf(err->msg, sizeof err->msg, "%s: error: out of memory", s->path);
        return NULL;
    }
    r->s = s;
    r->n_all = s->n_nodes;
    r->timing_only = s->model_type == NULL;
    topo_graph *g = NULL;
    if (run_i_build_data(r, err) == 0 && build_topology(r, err) == 0) {
        g = r->g;
        r->g = NULL;
    }
    run_destroy(r);
    return g;
}

void run_i_data_path(const scn_scenario *s, const char *dir, const char *name, char *out,
                     size_t n)
{
    /* Pieces: the scenario's directory (for a relative result), dir, name.
     * A path longer than n is cut short, fails to open and says so. */
    const char *slash = strrchr(s->path, '/');
    const char *first = dir ? dir : name;
    size_t len = 0;
    out[0] = '\0';
    if (first[0] != '/' && slash) {
        size_t k = (size_t)(slash - s->path) + 1;
        if (k < n) {
            memcpy(out, s->path, k);
            len = k;
        }
    }
    const char *parts[2] = { dir, name };
    for (int p = 0; p < 2; p++) {
        if (!parts[p])
            continue;
        size_t k = strlen(parts[p]);
        if (len + k + 2 > n)
            k = n > len + 2 ? n - len - 2 : 0;
        memcpy(out + len, parts[p], k);
        len += k;
        if (p == 0)
            out[len++] = '/';
    }
    out[len] = '\0';
}

/* The algorithm object's protocol-specific keys against the algorithm's
 * table (the scenario module collects them without knowing what they mean). */
static int resolve_params(run_sim *r, scn_error *err)
{
    const scn_scenario *s = r->s;
    alg_params_defaults(r->alg, &r->ctx);
    for (size_t i = 0; i < s->n_alg_params; i++) {
        const scn_param *q = &s->alg_params[i];
        char ptr[300], m[512];
        snprintf(ptr, sizeof ptr, "/algorithm/%s", q->key);
        int rc = alg_params_set(r->alg, &r->ctx, q->key, q->is_string, q->num, q->str, m,
                                sizeof m);
        if (rc == 1) {
            char keys[400];
            alg_params_keys(r->alg, keys, sizeof keys);
            snprintf(m, sizeof m, "unknown key for algorithm \"%s\" (expected one of: %s)",
                     r->alg->name, keys);
        }
        if (rc != 0) {
            run_i_value_error(err, s, ptr, m);
            return -1;
        }
        int k = alg_params_index(r->alg, q->key);
        if (r->alg->params[k].kind == ALG_PARAM_PATH) {
            char full[4096];
            run_i_data_path(s, NULL, q->str, full, sizeof full);
            free(r->paths[k]);
            if (!(r->paths[k] = strdup(full))) {
                snprintf(err->msg, sizeof err->msg, "%s: error: out of memory", s->path);
                return -1;
            }
            r->ctx.path[k] = r->paths[k];
        }
    }
    return 0;
}

/* Refuses a message size whose byte counts could overflow to inf (a
 * message_bytes of 1e308 wrote "inf" to metrics.csv and cut chunks of NaN
 * bytes): the largest message, (P + 1) parameters (push-sum's weight rides
 * with the model) or the timing-only message_bytes, after compression,
 * must leave 2^64 messages (the counters' range) from each of the n_all
 * nodes finite.  That also bounds every chunk of a collective and every
 * total in nodes.csv and metrics.csv.  About 1e289 / n_all bytes: far
 * beyond any real model. */
static int check_message_size(const run_sim *r, scn_error *err)
{
    const scn_scenario *s = r->s;
    double most = DBL_MAX / ldexp(1.0, 64) / (double)r->n_all;
    double m = r->timing_only ? s->model_message_bytes / s->compression_ratio
             : (double)(r->ctx.P + 1) * (s->bytes_per_param / s->compression_ratio);
    if (m <= most)
        return 0;
    /* the bound on the key itself */
    double key = r->timing_only ? s->model_message_bytes : s->bytes_per_param;
    double bound = most * s->compression_ratio / (r->timing_only ? 1.0 : (double)(r->ctx.P + 1));
    char msg[512];
    snprintf(msg, sizeof msg, "must be <= %.6g so that byte counts stay finite (2^64 messages "
             "from each of %d nodes), got %g", bound, r->n_all, key);
    run_i_value_error(err, s, r->timing_only ? "/model/message_bytes" : "/network/bytes_per_param",
                      msg);
    return -1;
}

/* What the protocol's math needs (alg_type.needs): a model with a
 * Hessian, plain SGD with a constant learning rate. */
static int check_needs(const run_sim *r, scn_error *err)
{
    const scn_scenario *s = r->s;
    char m[512];
    if ((r->alg->needs & ALG_NEEDS_HESSIAN) && r->model && !mdl_has_hessian(r->model)) {
        snprintf(m, sizeof m, "%s needs a model with a Hessian (linear or logistic), not \"%s\"",
                 r->alg->name, s->model);
        run_i_value_error(err, s, "/model/kind", m);
        return -1;
    }
    if (!(r->alg->needs & ALG_NEEDS_PLAIN_SGD))
        return 0;
    const char *key = s->opt_momentum > 0 ? "/optimizer/momentum"
                    : s->opt_weight_decay > 0 ? "/optimizer/weight_decay"
                    : s->opt_schedule != MDL_SCHED_CONSTANT ? "/optimizer/schedule"
                    : s->opt_warmup_steps > 0 ? "/optimizer/warmup_steps" : NULL;
    if (!key)
        return 0;
    snprintf(m, sizeof m, "%s needs plain SGD with a constant learning rate (its combiner is "
             "the product of the steps' Jacobians I - lr H): no momentum, weight decay, "
             "schedule or warm-up", r->alg->name);
    run_i_value_error(err, s, key, m);
    return -1;
}

run_sim *run_prepare(const scn_scenario *s, scn_error *err)
{
    return run_prepare_cached(s, NULL, err);
}

run_sim *run_prepare_cached(const scn_scenario *s, run_data_cache *data, scn_error *err)
{
    run_sim *r = calloc(1, sizeof *r);
    if (!r) {
        snprintf(err->msg, sizeof err->msg, "%s: error: out of memory", s->path);
        return NULL;
    }
    r->s = s;
    r->data_cache = data;
    r->alg = alg_find(s->algorithm);
    if (!r->alg) {
        char m[512];
        snprintf(m, sizeof m, "unknown algorithm \"%s\" (expected one of: %s)", s->algorithm,
                 alg_names());
        run_i_value_error(err, s, "/algorithm/name", m);
        goto out_destroy;
    }
    /* parameters first: they may decide how many servers the protocol adds */
    r->ctx.n = s->n_nodes;
    r->ctx.lr = s->lr;
    r->ctx.momentum = s->opt_momentum;
    r->ctx.nesterov = s->opt_nesterov;
    r->ctx.batch = s->batch;
    r->ctx.seed = s->seed;   /* for a check that draws (a protocol's own graph) */
    if (resolve_params(r, err) != 0)
        goto out_destroy;
    int servers = r->alg->n_servers ? r->alg->n_servers(&r->ctx) : r->alg->servers;
    r->n_all = s->n_nodes + servers;
    if (run_i_check_servers(r, servers, err) != 0)
        goto out_destroy;
    r->timing_only = s->model_type == NULL;
    r->alg_bytes = r->alg->memory_bytes ? r->alg->memory_bytes(&r->ctx) : 0;
    /* a learned topology is learned from the partition: data first */
    const int learned = s->topo_kind == TOPO_LEARNED;
    if (run_i_check_memory(r, 0, 0, err) != 0 || (!learned && build_topology(r, err) != 0)
        || run_i_build_data(r, err) != 0 || (learned && build_topology(r, err) != 0))
        goto out_destroy;
    /* the model exists: what the protocol holds by its layers' widths too */
    r->ctx.P = r->model ? mdl_n_params(r->model) : 0;
    r->ctx.layers = r->model ? (int)mdl_layers(r->model) : 0;
    r->ctx.model = r->model;
    if (r->alg->model_memory_bytes)
        r->alg_bytes += r->alg->model_memory_bytes(&r->ctx);
    if (run_i_check_memory(r, r->ctx.P, 0, err) != 0)
        goto out_destroy;

    r->ctx.g = r->g;
    r->ctx.n_all = r->n_all;
    r->ctx.server = servers ? s->n_nodes : -1;
    r->ctx.P = r->model ? mdl_n_params(r->model) : 0;
    r->ctx.layers = r->model ? (int)mdl_layers(r->model) : 0;
    if (check_message_size(r, err) != 0)
        goto out_destroy;
    if (check_needs(r, err) != 0 || run_i_check_freeze(r, err) != 0)
        goto out_destroy;
    if (r->alg->check) {
        char m[512];
        if (r->alg->check(&r->ctx, m, sizeof m) != 0) {
            /* a bad line of a file parameter (a schedule) is reported where
             * it is: "FILE:LINE: error: ..." */
            int in_file = 0;
            for (int k = 0; k < ALG_MAX_PARAMS && !in_file; k++) {
                size_t len = r->ctx.path[k] ? strlen(r->ctx.path[k]) : 0;
                in_file = len > 0 && strncmp(m, r->ctx.path[k], len) == 0 && m[len] == ':';
            }
            if (in_file)
                snprintf(err->msg, sizeof err->msg, "%s", m);
            else
                run_i_value_error(err, s, "/algorithm/name", m);
            goto out_destroy;
        }
    }
    r->step_times = malloc((size_t)r->n_all * sizeof(double));
    r->avg = malloc((r->ctx.P ? r->ctx.P : 1) * sizeof(double));
    r->wd_hits = calloc((size_t)r->n_all, sizeof *r->wd_hits);
    if (!r->step_times || !r->avg || !r->wd_hits || run_i_build_heterogeneity(r) != 0) {
        snprintf(err->msg, sizeof err->msg, "%s: error: out of memory", s->path);
        goto out_destroy;
    }
    if (run_i_check_work(r, err) != 0)
        goto out_destroy;
    return r;

out_destroy:
    run_destroy(r);
    return NULL;
}

void run_destroy(run_sim *r)
{
    if (!r)
        return;
    for (int k = 0; k < ALG_MAX_PARAMS; k++)
        free(r->paths[k]);
    free(r->avg);
    free(r->wd_hits);
    free(r->step_times);
    free(r->noise);
    free(r->up_Bps);
    free(r->down_Bps);
    free(r->slows);
    free(r->faults);
    free(r->points);
    free(r->classes);
    free(r->rules);
    free(r->windows);
    free(r->server_lists);
    free(r->eval_idx);
    free(r->test_idx);
    topo_destroy(r->g);
    mdl_destroy(r->model);
    mdl_partition_fini(&r->part);
    run_i_data_release(r);
    mdl_dataset_fini(&r->train);
    mdl_dataset_fini(&r->test);
    free(r);
}

const topo_graph *run_graph(const run_sim *r) { return r->g; }

