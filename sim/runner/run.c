/* run.c -- wires one simulation together (see run.h): data, partition,
 * model, topology, engine, cluster and algorithm from the scenario; the
 * event loop with its stop conditions and stall detection; periodic
 * evaluation of the average model; and the output files.  Event handling
 * itself belongs to the cluster and the algorithm; this file only routes.
 */
#include "run.h"
#include "alg.h"
#include "cl_cluster.h"
#include "mdl.h"
#include "sim_engine.h"
#include "sim_rng.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <gsl/gsl_cblas.h>
#include <gsl/gsl_randist.h>

enum { EV_METRICS = CL_EV_USER };
enum { STOP_STEPS = 1, STOP_TARGET_LOSS, STOP_TARGET_ACCURACY, STOP_STALL };

struct run_sim {
    const scn_scenario *s;
    mdl_dataset   train, test;
    mdl_partition part;
    mdl_model    *model;
    topo_graph   *g;
    const alg_type *alg;
    alg_ctx       ctx;
    double       *step_times;
    size_t       *eval_idx;
    size_t        n_eval;
    double       *avg;

    /* per execution */
    sim_engine   *eng;
    cl_cluster   *cl;
    const run_options *opt;
    FILE         *mf;
    out_metrics_row last;
    int           have_last;
    uint64_t      metrics_k, stop_steps_total;
};

static void value_error(scn_error *err, const scn_scenario *s, const char *ptr, const char *msg)
{
    snprintf(err->msg, sizeof err->msg, "%s: %s: error: %s", s->path, ptr, msg);
}

static int build_topology(run_sim *r, scn_error *err)
{
    const scn_scenario *s = r->s;
    topo_spec ts = { .n = s->n_nodes, .rows = s->topo_rows, .cols = s->topo_cols,
                     .layers = s->topo_layers, .p = s->topo_p, .degree = s->topo_degree,
                     .k = s->topo_k, .beta = s->topo_beta, .m = s->topo_m,
                     .path = s->topo_file, .lazy_alpha = s->topo_lazy_alpha };
    int kind = topo_kind_from_name(s->topology);
    int mixing = topo_mixing_from_name(s->topo_mixing ? s->topo_mixing : "metropolis_hastings");
    char m[512];
    if (kind < 0 || mixing < 0) {
        snprintf(m, sizeof m, "unknown %s \"%s\" (expected one of: %s)",
                 kind < 0 ? "topology" : "mixing", kind < 0 ? s->topology : s->topo_mixing,
                 kind < 0 ? topo_kind_names() : topo_mixing_names());
        value_error(err, s, kind < 0 ? "/topology/kind" : "/topology/mixing", m);
        return -1;
    }
    ts.kind = (topo_kind)kind;
    ts.mixing = (topo_mixing)mixing;
    r->g = topo_build(&ts, sim_rng_derive(s->seed, SIM_RNG_NO_NODE, SIM_RNG_TOPOLOGY), m, sizeof m);
    if (!r->g) {
        /* a bad line of an edge-list file is reported where it is:
         * "FILE:LINE: error: ..." */
        size_t len = s->topo_file ? strlen(s->topo_file) : 0;
        if (len > 0 && strncmp(m, s->topo_file, len) == 0 && m[len] == ':')
            snprintf(err->msg, sizeof err->msg, "%s", m);
        else
            value_error(err, s, "/topology", m);
        return -1;
    }
    return 0;
}

static int build_data(run_sim *r, scn_error *err)
{
    const scn_scenario *s = r->s;
    mdl_synth_spec sp = { .n_train = s->data_train, .n_test = s->data_test,
                          .d = s->data_features, .n_classes = s->data_classes,
                          .separation = s->data_separation };
    if (mdl_synth_generate(&sp, sim_rng_derive(s->seed, SIM_RNG_NO_NODE, SIM_RNG_DATAGEN),
                           &r->train, &r->test) != 0
        || mdl_partition_iid(r->train.n, s->n_nodes,
                             sim_rng_derive(s->seed, SIM_RNG_NO_NODE, SIM_RNG_PARTITION),
                             &r->part) != 0)
        goto out_oom;
    const mdl_type *t = mdl_type_find(s->model);
    if (!t) {
        char m[512];
        snprintf(m, sizeof m, "unknown model \"%s\" (expected one of: %s)", s->model,
                 mdl_type_names());
        value_error(err, s, "/model/kind", m);
        return -1;
    }
    r->model = mdl_create(t, r->train.d, r->train.n_classes, s->l2, s->batch);
    if (!r->model)
        goto out_oom;
    if (s->metrics_eval_samples > 0 && s->metrics_eval_samples < r->train.n) {
        mdl_partition pick;
        if (mdl_partition_iid(r->train.n, 1,
                              sim_rng_derive(s->seed, SIM_RNG_NO_NODE, SIM_RNG_EVAL), &pick) != 0)
            goto out_oom;
        r->n_eval = s->metrics_eval_samples;
        r->eval_idx = malloc(r->n_eval * sizeof(size_t));
        if (r->eval_idx)
            memcpy(r->eval_idx, pick.idx, r->n_eval * sizeof(size_t));
        mdl_partition_fini(&pick);
        if (!r->eval_idx)
            goto out_oom;
    }
    return 0;

out_oom:
    snprintf(err->msg, sizeof err->msg, "%s: error: out of memory building the data", s->path);
    return -1;
}

run_sim *run_prepare(const scn_scenario *s, scn_error *err)
{
    run_sim *r = calloc(1, sizeof *r);
    if (!r) {
        snprintf(err->msg, sizeof err->msg, "%s: error: out of memory", s->path);
        return NULL;
    }
    r->s = s;
    r->alg = alg_find(s->algorithm);
    if (!r->alg) {
        char m[512];
        snprintf(m, sizeof m, "unknown algorithm \"%s\" (expected one of: %s)", s->algorithm,
                 alg_names());
        value_error(err, s, "/algorithm/name", m);
        goto out_destroy;
    }
    if (build_topology(r, err) != 0 || build_data(r, err) != 0)
        goto out_destroy;

    r->ctx.g = r->g;
    r->ctx.n = s->n_nodes;
    r->ctx.P = mdl_n_params(r->model);
    r->ctx.lr = s->lr;
    if (r->alg->check) {
        char m[512];
        if (r->alg->check(&r->ctx, m, sizeof m) != 0) {
            value_error(err, s, "/algorithm/name", m);
            goto out_destroy;
        }
    }
    r->step_times = malloc((size_t)s->n_nodes * sizeof(double));
    r->avg = malloc((r->ctx.P ? r->ctx.P : 1) * sizeof(double));
    if (!r->step_times || !r->avg) {
        snprintf(err->msg, sizeof err->msg, "%s: error: out of memory", s->path);
        goto out_destroy;
    }
    for (int i = 0; i < s->n_nodes; i++)
        r->step_times[i] = s->step_time_s * scn_node_slowdown(s, i);
    return r;

out_destroy:
    run_destroy(r);
    return NULL;
}

void run_destroy(run_sim *r)
{
    if (!r)
        return;
    free(r->avg);
    free(r->step_times);
    free(r->eval_idx);
    topo_destroy(r->g);
    mdl_destroy(r->model);
    mdl_partition_fini(&r->part);
    mdl_dataset_fini(&r->train);
    mdl_dataset_fini(&r->test);
    free(r);
}

const topo_graph *run_graph(const run_sim *r) { return r->g; }

/* ---- callbacks from the cluster to the algorithm ---- */

static void cb_step_done(void *vr, int node, const double *grad)
{
    run_sim *r = vr;
    r->alg->on_step_done(&r->ctx, alg_state(&r->ctx, node), node, grad);
}

static void cb_message(void *vr, int node, const cl_msg *m)
{
    run_sim *r = vr;
    r->alg->on_message(&r->ctx, alg_state(&r->ctx, node), node, m);
}

/* ---- evaluation ---- */

static void evaluate(run_sim *r, out_metrics_row *row)
{
    int n = r->ctx.n;
    size_t P = r->ctx.P;
    /* The mean is taken as x_0 + mean_i (x_i - x_0), in node order: exactly
     * x_0 when every node holds the same model, so a consensus distance of
     * zero means identical models, not a rounding coincidence. */
    const double *x0 = cl_params_const(r->cl, 0);
    memset(r->avg, 0, P * sizeof(double));
    for (int i = 1; i < n; i++) {
        const double *x = cl_params_const(r->cl, i);
        for (size_t k = 0; k < P; k++)
            r->avg[k] += x[k] - x0[k];
    }
    for (size_t k = 0; k < P; k++)
        r->avg[k] = x0[k] + r->avg[k] / n;
    double cd = 0;
    for (int i = 0; i < n; i++) {
        const double *x = cl_params_const(r->cl, i);
        for (size_t k = 0; k < P; k++) {
            double d = x[k] - r->avg[k];
            cd += d * d;
        }
    }
    double acc;
    row->time_s = sim_engine_now(r->eng);
    row->steps = cl_total_steps(r->cl);
    row->epochs = (double)cl_samples_processed(r->cl) / (double)r->train.n;
    mdl_evaluate(r->model, r->avg, &r->train, r->eval_idx, r->n_eval, &row->train_loss, &acc);
    mdl_evaluate(r->model, r->avg, &r->test, NULL, 0, &row->test_loss, &row->test_accuracy);
    row->consensus_distance = sqrt(cd / n);
    row->bytes_sent = cl_total_bytes_sent(r->cl);
}

static void record(run_sim *r, const out_metrics_row *row)
{
    if (r->mf)
        out_metrics_write(r->mf, row);
    if (r->opt->on_metrics)
        r->opt->on_metrics(r->opt->hook_ctx, row);
    r->last = *row;
    r->have_last = 1;
}

static int on_metrics_event(run_sim *r)
{
    out_metrics_row row;
    evaluate(r, &row);
    record(r, &row);
    const scn_scenario *s = r->s;
    if (!isnan(s->stop_target_loss) && row.train_loss <= s->stop_target_loss)
        return STOP_TARGET_LOSS;
    if (!isnan(s->stop_target_accuracy) && row.test_accuracy >= s->stop_target_accuracy)
        return STOP_TARGET_ACCURACY;
    if (cl_pending(r->cl) == 0)
        return STOP_STALL;
    r->metrics_k++;
    if (sim_engine_schedule_at(r->eng, (double)r->metrics_k * s->metrics_every_s, EV_METRICS,
                               (uint32_t)s->n_nodes, 0) != 0) {
        fputs("dtsim: error: out of memory\n", stderr);
        exit(1);
    }
    return 0;
}

static int handle(void *vr, const sim_event *ev)
{
    run_sim *r = vr;
    if (ev->kind == EV_METRICS)
        return on_metrics_event(r);
    cl_handle_event(r->cl, ev);
    if (ev->kind == CL_EV_STEP_DONE && r->stop_steps_total
        && cl_total_steps(r->cl) >= r->stop_steps_total)
        return STOP_STEPS;
    if (cl_pending(r->cl) == 0)
        return STOP_STALL;
    return 0;
}

static void describe_stall(run_sim *r, run_result *res)
{
    size_t len = (size_t)snprintf(res->message, sizeof res->message,
        "stalled at t=%.10g s: no event left before the stop condition; waiting:",
        sim_engine_now(r->eng));
    int shown = 0, n = r->ctx.n;
    for (int i = 0; i < n && len < sizeof res->message; i++) {
        char what[256];
        r->alg->describe_wait(&r->ctx, alg_state(&r->ctx, i), i, what, sizeof what);
        if (!what[0])
            continue;
        if (shown == 16) {
            snprintf(res->message + len, sizeof res->message - len, " ...");
            break;
        }
        len += (size_t)snprintf(res->message + len, sizeof res->message - len,
                                "%s node %d for %s", shown ? ";" : "", i, what);
        shown++;
    }
}

static double seconds(clockid_t id)
{
    struct timespec ts;
    clock_gettime(id, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* ---- output ---- */

static int write_nodes(run_sim *r, const char *dir, double end, char *err, size_t es)
{
    out_file *f = out_file_open(dir, "nodes.csv", err, es);
    if (!f)
        return -1;
    FILE *fp = out_file_stream(f);
    out_nodes_header(fp);
    for (int i = 0; i < r->ctx.n; i++) {
        const cl_node_stats *st = cl_stats(r->cl, i);
        double busy = cl_compute_time(r->cl, i);
        out_node_row row = {
            .node = i, .slowdown = scn_node_slowdown(r->s, i), .steps = st->steps,
            .compute_s = busy, .idle_s = end - busy, .uplink_busy_s = st->uplink_busy_s,
            .bytes_sent = st->bytes_sent, .bytes_received = st->bytes_received,
            .msgs_sent = st->msgs_sent, .msgs_received = st->msgs_received,
        };
        out_nodes_write(fp, &row);
    }
    return out_file_commit(f, err, es);
}

static int write_run_json(run_sim *r, const char *dir, const run_result *res,
                          char *err, size_t es)
{
    out_file *f = out_file_open(dir, "run.json", err, es);
    if (!f)
        return -1;
    out_json j;
    out_json_init(&j, out_file_stream(f));
    out_json_begin_object(&j, NULL);
    out_json_string(&j, "dtsim_version", DTSIM_VERSION);
    out_json_string(&j, "cblas", DTSIM_CBLAS);
    out_json_string(&j, "scenario_file", r->s->path);
    out_json_int(&j, "seed", (int64_t)r->s->seed);
    out_json_string(&j, "status", res->status == RUN_OK ? "ok" : "stalled");
    out_json_string(&j, "stop_reason", res->stop_reason);
    if (res->message[0])
        out_json_string(&j, "message", res->message);
    out_json_number(&j, "sim_time_s", res->sim_time_s);
    out_json_int(&j, "events", (int64_t)res->events);
    out_json_number(&j, "wall_s", res->wall_s);
    out_json_number(&j, "cpu_s", res->cpu_s);
    out_json_number(&j, "events_per_cpu_s", res->cpu_s > 0 ? (double)res->events / res->cpu_s : NAN);
    out_json_int(&j, "n_params", (int64_t)res->n_params);
    out_json_begin_object(&j, "topology");
    out_json_string(&j, "kind", r->s->topology);
    out_json_int(&j, "nodes", res->topo.n);
    out_json_int(&j, "edges", (int64_t)res->topo.n_edges);
    out_json_int(&j, "degree_min", res->topo.degree_min);
    out_json_int(&j, "degree_max", res->topo.degree_max);
    if (res->topo.diameter_ok)
        out_json_int(&j, "diameter", res->topo.diameter);
    else
        out_json_raw(&j, "diameter", "null");
    out_json_bool(&j, "bipartite", r->g->bipartite);
    out_json_string(&j, "mixing", topo_mixing_name(r->g->mixing));
    out_json_number(&j, "lazy_alpha", r->g->lazy_alpha);
    out_json_bool(&j, "symmetric", r->g->symmetric);
    out_json_string(&j, "spectral_solver", res->topo.solver ? res->topo.solver : "dense");
    if (res->topo.spectral_ok) {
        out_json_number(&j, "lambda2", res->topo.lambda2);
        out_json_number(&j, "spectral_gap", res->topo.spectral_gap);
    } else {
        out_json_raw(&j, "lambda2", "null");
        out_json_raw(&j, "spectral_gap", "null");
    }
    out_json_end_object(&j);
    out_json_begin_object(&j, "final");
    out_json_number(&j, "time_s", res->last.time_s);
    out_json_int(&j, "steps", (int64_t)res->last.steps);
    out_json_number(&j, "epochs", res->last.epochs);
    out_json_number(&j, "train_loss", res->last.train_loss);
    out_json_number(&j, "test_loss", res->last.test_loss);
    out_json_number(&j, "test_accuracy", res->last.test_accuracy);
    out_json_number(&j, "consensus_distance", res->last.consensus_distance);
    out_json_number(&j, "bytes_sent", res->last.bytes_sent);
    out_json_end_object(&j);
    out_json_raw(&j, "scenario", r->s->resolved_json);
    out_json_end_object(&j);
    out_json_finish(&j);
    return out_file_commit(f, err, es);
}

/* ---- one execution ---- */

static int start(run_sim *r)
{
    const scn_scenario *s = r->s;
    int n = s->n_nodes;
    r->eng = sim_engine_create((uint32_t)n + 1, 1024);
    cl_config cc = {
        .n_nodes = n, .seed = s->seed, .step_time_s = r->step_times,
        .noise = (cl_noise)s->noise, .noise_low = s->noise_low, .noise_high = s->noise_high,
        .noise_sigma = s->noise_sigma, .latency_s = s->latency_s,
        .bandwidth_Bps = s->bandwidth_Bps, .bytes_per_param = s->bytes_per_param,
        .model = r->model, .train = &r->train, .part = &r->part, .batch = s->batch,
    };
    cl_callbacks cb = { .ctx = r, .on_step_done = cb_step_done, .on_message = cb_message };
    if (!r->eng || !(r->cl = cl_create(&cc, r->eng, cb)))
        return -1;
    r->ctx.cl = r->cl;
    r->ctx.state_size = r->alg->state_size;
    r->ctx.states = calloc((size_t)n, r->alg->state_size ? r->alg->state_size : 1);
    r->ctx.rng = calloc((size_t)n, sizeof(gsl_rng *));
    if (!r->ctx.states || !r->ctx.rng)
        return -1;
    for (int i = 0; i < n; i++) {
        r->ctx.rng[i] = sim_rng_stream_create(s->seed, (uint32_t)i, SIM_RNG_ALGO);
        if (!r->ctx.rng[i] || r->alg->init(&r->ctx, alg_state(&r->ctx, i), i) != 0)
            return -1;
    }
    /* every node starts from the same model, as in the papers */
    gsl_rng *init = sim_rng_stream_create(s->seed, SIM_RNG_NO_NODE, SIM_RNG_INIT);
    if (!init)
        return -1;
    mdl_init_params(r->model, cl_params(r->cl, 0), init);
    gsl_rng_free(init);
    for (int i = 1; i < n; i++)
        memcpy(cl_params(r->cl, i), cl_params(r->cl, 0), r->ctx.P * sizeof(double));
    if (r->opt->init_params)
        for (int i = 0; i < n; i++)
            r->opt->init_params(r->opt->hook_ctx, i, cl_params(r->cl, i), r->ctx.P);
    return 0;
}

static void finish(run_sim *r)
{
    if (r->ctx.states)
        for (int i = 0; i < r->ctx.n; i++)
            r->alg->fini(&r->ctx, alg_state(&r->ctx, i), i);
    if (r->ctx.rng)
        for (int i = 0; i < r->ctx.n; i++)
            gsl_rng_free(r->ctx.rng[i]);
    free(r->ctx.rng);
    free(r->ctx.states);
    r->ctx.rng = NULL;
    r->ctx.states = NULL;
    cl_destroy(r->cl);
    sim_engine_destroy(r->eng);
    r->cl = NULL;
    r->eng = NULL;
}

int run_execute(run_sim *r, const run_options *opt, run_result *res, char *err, size_t es)
{
    static const run_options none = { 0 };
    const scn_scenario *s = r->s;
    int rc = -1;
    out_file *mfile = NULL;
    memset(res, 0, sizeof *res);
    r->opt = opt ? opt : &none;
    if (r->opt->algorithm)
        r->alg = r->opt->algorithm;
    r->have_last = 0;
    r->metrics_k = 0;
    r->mf = NULL;
    r->stop_steps_total = s->stop_steps > 0 ? (uint64_t)s->stop_steps * (uint64_t)s->n_nodes : 0;

    if (topo_compute_stats(r->g, &res->topo) != 0) {
        snprintf(err, es, "%s: error: out of memory computing topology statistics", s->path);
        return -1;
    }
    if (r->opt->out_dir) {
        if (out_mkdirs(r->opt->out_dir, err, es) != 0)
            return -1;
        if (!(mfile = out_file_open(r->opt->out_dir, "metrics.csv", err, es)))
            return -1;
        r->mf = out_file_stream(mfile);
        out_metrics_header(r->mf);
    }
    if (start(r) != 0) {
        snprintf(err, es, "%s: error: out of memory starting the run", s->path);
        goto out_finish;
    }

    double w0 = seconds(CLOCK_MONOTONIC), c0 = seconds(CLOCK_PROCESS_CPUTIME_ID);
    if (sim_engine_schedule_at(r->eng, 0.0, EV_METRICS, (uint32_t)s->n_nodes, 0) != 0) {
        snprintf(err, es, "%s: error: out of memory", s->path);
        goto out_finish;
    }
    for (int i = 0; i < s->n_nodes; i++)
        r->alg->on_start(&r->ctx, alg_state(&r->ctx, i), i);
    sim_stop why = sim_engine_run(r->eng, s->stop_time_s, handle, r);
    res->status = RUN_OK;
    if (why == SIM_STOP_HORIZON) {
        res->stop_reason = "time";
    } else {
        int code = why == SIM_STOP_HANDLER ? sim_engine_stop_code(r->eng) : STOP_STALL;
        res->stop_reason = code == STOP_STEPS ? "steps"
                         : code == STOP_TARGET_LOSS ? "target_loss"
                         : code == STOP_TARGET_ACCURACY ? "target_accuracy" : "stalled";
        if (code == STOP_STALL) {
            res->status = RUN_STALLED;
            describe_stall(r, res);
        }
    }
    if (!r->have_last || r->last.time_s < sim_engine_now(r->eng)) {
        out_metrics_row row;
        evaluate(r, &row);
        record(r, &row);
    }
    res->wall_s = seconds(CLOCK_MONOTONIC) - w0;
    res->cpu_s = seconds(CLOCK_PROCESS_CPUTIME_ID) - c0;
    res->sim_time_s = sim_engine_now(r->eng);
    res->events = sim_engine_events_processed(r->eng);
    res->last = r->last;
    res->n_params = r->ctx.P;

    if (r->opt->out_dir) {
        /* run.json last: its presence marks a complete run */
        if (out_file_commit(mfile, err, es) != 0) {
            mfile = NULL;
            goto out_finish;
        }
        mfile = NULL;
        if (write_nodes(r, r->opt->out_dir, res->sim_time_s, err, es) != 0
            || write_run_json(r, r->opt->out_dir, res, err, es) != 0)
            goto out_finish;
    }
    rc = 0;

out_finish:
    out_file_abort(mfile);
    finish(r);
    return rc;
}
