/* run.c -- drives one prepared simulation (see run.h): starts the engine,
 * cluster, trainer and algorithm, routes events and callbacks between
 * them, schedules an evaluation every metrics.every_s seconds, stops at
 * the first stop condition, stall, divergence, watchdog or signal, and
 * writes the outputs.  What an evaluation measures is run_eval.c's, how a
 * run that cannot progress is told apart is run_watch.c's, the files are
 * run_output.c's and building the run is run_prepare.c's.
 */
#include "run_internal.h"
#include "sim_mem.h"

/* ---- callbacks from the cluster to the trainer and the algorithm ---- */

/* A step's math is taken when it begins: on the parameters as they are
 * now.  With threads it runs on a worker; trn_grad joins it, so the two
 * callbacks below read the finished gradient. */
static void cb_step_start(void *vr, int node)
{
    run_sim *r = vr;
    trn_step_begin(r->trn, node, cl_stats(r->cl, node)->steps + 1, cl_now(r->cl));
    if (r->mem_peak)
        run_i_memory_step(r, node);
}

static void cb_step_done(void *vr, int node)
{
    run_sim *r = vr;
    r->alg->on_step_done(&r->ctx, alg_state(&r->ctx, node), node, trn_grad(r->trn, node));
}

static void cb_step_mark(void *vr, int node, int k)
{
    run_sim *r = vr;
    r->alg->on_step_mark(&r->ctx, alg_state(&r->ctx, node), node, k, trn_grad(r->trn, node));
}

static void cb_timer(void *vr, int node, uint32_t tag)
{
    run_sim *r = vr;
    r->alg->on_timer(&r->ctx, alg_state(&r->ctx, node), node, tag);
}

static void cb_message(void *vr, int node, const cl_msg *m)
{
    run_sim *r = vr;
    r->alg->on_message(&r->ctx, alg_state(&r->ctx, node), node, m);
}

/* A worker that comes back with rejoin "neighbour" takes the parameters of
 * its first topology neighbour (in the topology's order) that is up; with
 * none up, or rejoin "keep", it keeps its own.  A protocol's server (a node
 * past the topology's: parameter server, edge server, group generator) has
 * no topology neighbours and always keeps its own model. */
static void rejoin(run_sim *r, int node)
{
    const topo_graph *g = r->g;
    if (r->s->fault_rejoin != SCN_REJOIN_NEIGHBOUR || node >= g->n || r->ctx.P == 0)
        return;
    for (size_t e = g->off[node]; e < g->off[node + 1]; e++) {
        int j = g->nbr[e];
        if (cl_is_up(r->cl, j)) {
            memcpy(trn_params(r->trn, node), trn_params_const(r->trn, j), r->ctx.P * sizeof(double));
            return;
        }
    }
}

/* The failure detector: a node down for faults.detect_s is declared
 * failed (EV_DETECT), and declared back when it returns. */
static void cb_down(void *vr, int node)
{
    run_sim *r = vr;
    r->down_since[node] = cl_now(r->cl);
    if (sim_engine_schedule_at(r->eng, r->down_since[node] + r->detect_s, EV_DETECT,
                               (uint32_t)r->n_all, (uint32_t)node) != 0)
        sim_die_oom();
    /* pending work only for a protocol that reacts: else a run waiting
     * for the node stalls as soon as nothing else can happen */
    if (r->alg->on_failure) {
        r->detect_pending++;
        double due = r->down_since[node] + r->detect_s;
        if (due < r->s->stop_time_s && due > r->decl_due_s)
            r->decl_due_s = due;
    }
}

static void on_detect(run_sim *r, int node)
{
    if (r->alg->on_failure)
        r->detect_pending--;
    /* still down in the same episode (a node that came back and went down
     * again has a later event of its own) */
    if (cl_is_up(r->cl, node) || r->failed[node]
        || cl_now(r->cl) < r->down_since[node] + r->detect_s)
        return;
    r->failed[node] = 1;
    if (r->alg->on_failure)
        r->alg->on_failure(&r->ctx, node, 1);
}

static void cb_up(void *vr, int node)
{
    run_sim *r = vr;
    rejoin(r, node);
    if (r->failed[node]) {
        r->failed[node] = 0;
        if (r->alg->on_failure)
            r->alg->on_failure(&r->ctx, node, 0);
    }
    if (r->alg->on_return)
        r->alg->on_return(&r->ctx, alg_state(&r->ctx, node), node);
}

static void cb_trace(void *vr, const cl_trace_rec *t)
{
    run_sim *r = vr;
    out_trace_row row = { t->node, t->kind, t->start_s, t->end_s, t->peer, t->bytes };
    out_trace_add(&r->trace, &row);
    r->rows_trace++;
}

static int on_metrics_event(run_sim *r)
{
    /* with threads, every step begun so far has its loss checked before a
     * row is written: a run replayed on one thread (run_execute) has shown
     * its hooks only rows the replay shows again */
    if (trn_threads(r->trn) > 1) {
        trn_join_all(r->trn);
        if (trn_divergence_get(r->trn)->diverged)
            return STOP_DIVERGED;
    }
    out_metrics_row row;
    run_i_evaluate(r, &row);
    if (run_i_metrics_diverged(r, &row))
        return STOP_DIVERGED;
    run_i_record(r, &row);
    const scn_scenario *s = r->s;
    /* a stop target ends the run here, at the evaluation that finds it;
     * its crossing instant is placed between evaluations (run_target.c) */
    int target = run_i_targets_eval(r, &row);
    if (target)
        return target;
    if (cl_pending(r->cl) == 0 && r->detect_pending == 0)
        return STOP_STALL;
    r->metrics_k++;
    if (sim_engine_schedule_at(r->eng, (double)r->metrics_k * s->metrics_every_s, EV_METRICS,
                               (uint32_t)r->n_all, 0) != 0) {
        sim_die_oom();
    }
    return 0;
}

static int handle_event(run_sim *r, const sim_event *ev)
{
    if (ev->kind == EV_METRICS)
        return on_metrics_event(r);
    if (ev->kind == EV_DETECT) {
        on_detect(r, (int)ev->data);
        return cl_pending(r->cl) == 0 && r->detect_pending == 0 ? STOP_STALL : 0;
    }
    cl_handle_event(r->cl, ev);
    if (ev->kind == CL_EV_STEP_DONE && r->stop_steps_total
        && cl_total_steps(r->cl) >= r->stop_steps_total)
        return STOP_STEPS;
    if (cl_pending(r->cl) == 0 && r->detect_pending == 0)
        return STOP_STALL;
    return 0;
}

static int handle(void *vr, const sim_event *ev)
{
    run_sim *r = vr;
    run_i_targets_event(r, ev);
    int code = handle_event(r, ev);
    if (code == 0)
        code = run_i_watchdog(r, ev);
    if (code == 0)
        code = run_i_output_limit(r, ev);
    if (code == 0)
        code = run_i_flood(r);
    if (code == 0)
        code = run_i_event_budget(r);
    if (code == 0 && trn_divergence_get(r->trn)->diverged) {
        const trn_divergence *d = trn_divergence_get(r->trn);
        snprintf(r->diverged, sizeof r->diverged,
                 "diverged at t=%.10g s: node %d's minibatch loss was %s at the start of its "
                 "step %" PRIu64, d->time_s, d->node, isnan(d->loss) ? "nan"
                 : d->loss > 0 ? "inf" : "-inf", d->step);
        code = STOP_DIVERGED;
    }
    if (code == 0 && run_i_frozen(r))
        code = STOP_FROZEN;
    if (code == 0 && r->opt->interrupt && *r->opt->interrupt)
        code = STOP_INTERRUPT;
    if (r->opt->on_progress) {
        uint64_t k = sim_engine_events_processed(r->eng);
        if (k % RUN_PROGRESS_EVENTS == 0)
            r->opt->on_progress(r->opt->hook_ctx, sim_engine_now(r->eng), k);
    }
    return code;
}

static int same_value(double a, double b) { return a == b || (isnan(a) && isnan(b)); }

static int same_row(const out_metrics_row *a, const out_metrics_row *b)
{
    return a->steps == b->steps && same_value(a->epochs, b->epochs)
        && same_value(a->train_loss, b->train_loss) && same_value(a->test_loss, b->test_loss)
        && same_value(a->test_accuracy, b->test_accuracy)
        && same_value(a->consensus_distance, b->consensus_distance)
        && same_value(a->bytes_sent, b->bytes_sent);
}

static double seconds(clockid_t id)
{
    struct timespec ts;
    clock_gettime(id, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* ---- one execution ---- */

const char *run_status_name(run_status st)
{
    switch (st) {
    case RUN_OK:          return "ok";
    case RUN_STALLED:     return "stalled";
    case RUN_INTERRUPTED: return "interrupted";
    case RUN_DIVERGED:    return "diverged";
    case RUN_NO_PROGRESS: return "no_progress";
    case RUN_LIMIT:       return "limit";
    case RUN_FLOOD:       return "flood";
    }
    return "unknown";
}

static int start(run_sim *r)
{
    const scn_scenario *s = r->s;
    int n = r->n_all;
    r->eng = sim_engine_create((uint32_t)n + 1, 1024);
    cl_config cc = {
        .n_nodes = n, .seed = s->seed, .step_time_s = r->step_times,
        .noise_per_node = r->noise, .latency_s = s->latency_s,
        .bandwidth_Bps = s->bandwidth_Bps,
        .classes = r->classes, .n_classes = s->n_links + 1,
        .link_rules = r->rules, .n_link_rules = s->n_links, .reorder = s->reorder,
        .retransmit_timeout_s = s->retransmit_timeout_s, .retransmit_max = s->retransmit_max,
        .up_Bps = r->up_Bps, .down_Bps = r->down_Bps,
        .discipline = s->discipline,
        .slowdowns = r->slows, .n_slowdowns = s->n_slowdowns,
        .faults = r->faults, .n_faults = s->n_faults,
        .step_policy = s->fault_step,
        .msg_policy = s->fault_messages,
        /* one spare slot: a scalar may travel with a model (push-sum
         * weight); timing-only runs keep capacity 0: one shared buffer */
        .payload_doubles = r->ctx.P ? r->ctx.P + 1 : 0,
    };
    cl_callbacks cb = { .ctx = r, .on_step_start = cb_step_start,
                        .on_step_done = cb_step_done,
                        .on_step_mark = r->alg->on_step_mark ? cb_step_mark : NULL,
                        .on_message = cb_message,
                        .on_timer = r->alg->on_timer ? cb_timer : NULL, .on_down = cb_down,
                        .on_up = cb_up,
                        .on_trace = r->tf ? cb_trace : NULL };
    trn_config tc = {
        .n_nodes = n, .seed = s->seed, .model = r->model, .train = &r->train,
        .part = &r->part, .batch = s->batch,
        .optim = {
            .lr = s->lr, .momentum = s->opt_momentum, .nesterov = s->opt_nesterov,
            .weight_decay = s->opt_weight_decay, .step_every = s->opt_step_every,
            .gamma = s->opt_step_gamma, .total_steps = s->opt_total_steps,
            .lr_min = s->opt_lr_min, .warmup_steps = s->opt_warmup_steps,
            .schedule = s->opt_schedule,
        },
        .threads = r->threads,
    };
    if (!r->eng || !(r->cl = cl_create(&cc, r->eng, cb)) || !(r->trn = trn_create(&tc)))
        return -1;
    cl_set_message_bound(r->cl, run_i_queue_bound(r, r->ctx.P));
    r->failed = calloc((size_t)n, 1);
    r->down_since = calloc((size_t)n, sizeof *r->down_since);
    r->detect_pending = 0;
    r->decl_due_s = 0;
    if (!r->failed || !r->down_since)
        return -1;
    alg_host_config hc = { .cl = r->cl, .trn = r->trn, .failed = r->failed,
                           .bytes_per_param = s->bytes_per_param / s->compression_ratio,
                           .message_bytes = s->model_message_bytes / s->compression_ratio,
                           .freeze_after = s->freeze_after, .n_freeze = s->n_freeze,
                           .freeze_threshold = s->freeze_threshold,
                           .freeze_effective_movement =
                               s->freeze_criterion == SCN_FREEZE_EFFECTIVE_MOVEMENT,
                           .freeze_window = s->freeze_window,
                           .freeze_max = run_i_freeze_max(r),
                           .mem_optim_slots = s->opt_momentum > 0 ? 1 : 0,
                           .mem_bytes_per_value = s->bytes_per_param };
    r->ctx.seed = s->seed;   /* the streams are created on first use (alg_rng) */
    if (run_i_memory_begin(r) != 0)
        return -1;
    hc.mem_capacity = r->mem_cap;
    if (alg_host_attach(&r->ctx, &hc) != 0)
        return -1;
    r->frozen_bound_s = run_i_frozen_bound(r);
    /* by default twice the worst round: well inside the frozen bound, so
     * a protocol that reacts to failures does so before the run is
     * declared stalled */
    r->detect_s = s->fault_detect_s > 0 ? s->fault_detect_s
                                        : 2 * r->frozen_bound_s / RUN_FROZEN_FACTOR;
    /* nodes down from time 0 went down before the cluster could say so */
    for (int i = 0; i < n; i++)
        if (!cl_is_up(r->cl, i))
            cb_down(r, i);
    /* 64-byte aligned, each node's state at a stride that keeps it in as
     * few cache lines as its size allows: a power of two up to 64 bytes, a
     * whole number of lines above (at 10^5 nodes and more nearly every
     * event misses on its node's state) */
    size_t stride = r->alg->state_size;
    if (stride > 64)
        stride = (stride + 63) & ~(size_t)63;
    else
        while (stride & (stride - 1))
            stride += stride & -stride;
    size_t bytes = ((((size_t)n * stride) | 1) + 63) & ~(size_t)63;
    r->ctx.state_size = stride;
    r->ctx.states = sim_alloc_lines(bytes);
    if (!r->ctx.states)
        return -1;
    memset(r->ctx.states, 0, bytes);
    if (r->alg->shared_init && r->alg->shared_init(&r->ctx) != 0)
        return -1;
    for (int i = 0; i < n; i++)
        if (r->alg->init && r->alg->init(&r->ctx, alg_state(&r->ctx, i), i) != 0)
            return -1;
    if (trn_init_params(r->trn) != 0 || run_i_targets_begin(r) != 0)
        return -1;
    if (r->opt->init_params)
        for (int i = 0; i < n; i++)
            r->opt->init_params(r->opt->hook_ctx, i, trn_params(r->trn, i), r->ctx.P);
    return 0;
}

static void finish(run_sim *r)
{
    if (r->ctx.states)
        for (int i = 0; i < r->n_all && r->alg->fini; i++)
            r->alg->fini(&r->ctx, alg_state(&r->ctx, i), i);
    free(r->ctx.states);
    if (r->alg->shared_fini)
        r->alg->shared_fini(&r->ctx);
    r->ctx.shared = NULL;
    r->ctx.states = NULL;
    alg_host_detach(&r->ctx);
    run_i_targets_end(r);
    free(r->failed);
    free(r->down_since);
    r->failed = NULL;
    r->down_since = NULL;
    run_i_memory_end(r);
    trn_destroy(r->trn);
    cl_destroy(r->cl);
    sim_engine_destroy(r->eng);
    r->trn = NULL;
    r->cl = NULL;
    r->eng = NULL;
}

/* One execution on r->threads threads: 0 done, -1 an error, 1 to be
 * replayed on one thread (see run_execute). */
static int execute(run_sim *r, const run_options *opt, run_result *res, char *err, size_t es)
{
    static const run_options none = { 0 };
    const scn_scenario *s = r->s;
    int rc = -1;
    out_file *mfile = NULL, *nfile = NULL, *tfile = NULL;
    out_rundir *od = NULL;
    const char *dir = NULL;   /* where the files go: out_dir or its hidden sibling */
    memset(res, 0, sizeof *res);
    r->opt = opt ? opt : &none;
    if (r->opt->algorithm) {
        const alg_type *rep = r->opt->algorithm;   /* its servers, as the scenario's count */
        if ((rep->n_servers ? rep->n_servers(&r->ctx) : rep->servers) != r->n_all - s->n_nodes) {
            snprintf(err, es, "%s: error: the replacement algorithm needs the same number of "
                     "servers as the scenario's", s->path);
            return -1;
        }
        /* a replacement sharing the scenario protocol's parameter table (a
         * wrapper of it) keeps the scenario's values; any other takes its
         * own defaults */
        const alg_type *scenario_alg = alg_find(s->algorithm);
        r->alg = r->opt->algorithm;
        if (!scenario_alg || r->alg->params != scenario_alg->params)
            alg_params_defaults(r->alg, &r->ctx);
    }
    r->have_last = 0;
    r->metrics_k = 0;
    r->diverged[0] = '\0';
    r->stuck[0] = '\0';
    r->wd_limit = r->opt->watchdog_events ? r->opt->watchdog_events
                                          : run_watchdog_limit(r->n_all);
    r->wd_instant = r->wd_nostep = r->wd_steps = 0;
    r->wd_time = 0;
    r->wd_tick = -INFINITY;
    r->wd_counting = 1;
    run_i_watchdog_reset(r);
    run_i_limits_reset(r);
    r->mf = NULL;
    r->nmf = NULL;
    r->tf = NULL;
    r->stop_steps_total = s->stop_steps > 0 ? (uint64_t)s->stop_steps * (uint64_t)s->n_nodes : 0;
    r->last_step_s = 0;
    r->last_steps = 0;

    if (run_i_topo_stats(r, r->opt->topo_cache_dir, &res->topo) != 0) {
        snprintf(err, es, "%s: error: out of memory computing topology statistics", s->path);
        return -1;
    }
    if (r->opt->out_dir) {
        /* the folder is locked and committed as a whole (out_file.c) */
        if (!(od = out_rundir_begin(r->opt->out_dir, err, es)))
            return -1;
        dir = out_rundir_path(od);
        if (!(mfile = out_file_open(dir, "metrics.csv", err, es)))
            goto out_finish;
        r->mf = out_file_stream(mfile);
        out_metrics_header(r->mf);
        if (s->metrics_per_node) {
            if (!(nfile = out_file_open(dir, "node_metrics.csv", err, es)))
                goto out_finish;
            r->nmf = out_file_stream(nfile);
            fputs("time_s,node,steps,test_loss,test_accuracy\n", r->nmf);
        }
        if (s->output_trace) {
            if (!(tfile = out_file_open(dir, "trace.csv", err, es)))
                goto out_finish;
            r->tf = out_file_stream(tfile);
            out_trace_begin(&r->trace, r->tf);
        }
    }
    if (start(r) != 0) {
        snprintf(err, es, "%s: error: out of memory starting the run", s->path);
        goto out_finish;
    }

    /* CPU time of this thread only: the simulation is single-threaded, and
     * OpenBLAS's idle worker threads spin at start-up (see bench/RESULTS.md) */
    double w0 = seconds(CLOCK_MONOTONIC), c0 = seconds(CLOCK_THREAD_CPUTIME_ID);
    double cw0 = trn_worker_cpu_s(r->trn), cm0 = trn_math_cpu_s(r->trn);
    if (sim_engine_schedule_at(r->eng, 0.0, EV_METRICS, (uint32_t)r->n_all, 0) != 0) {
        snprintf(err, es, "%s: error: out of memory", s->path);
        goto out_finish;
    }
    for (int i = 0; i < r->n_all; i++) {
        if (r->alg->on_start)
            r->alg->on_start(&r->ctx, alg_state(&r->ctx, i), i);
        else if (i < s->n_nodes)   /* by default every worker starts computing */
            alg_start_step(&r->ctx, i);
    }
    sim_stop why = sim_engine_run(r->eng, s->stop_time_s, handle, r);
    if (trn_threads(r->trn) > 1) {
        /* On one thread a step's non-finite loss stops the run after the
         * event in which the step began; here it is known only when its
         * job is joined, later.  Rather than stop at another instant, the
         * run is done again on one thread (deterministic: the same run up
         * to that event), so its outputs are the same for every thread
         * count; an interrupted run is kept as it is. */
        trn_join_all(r->trn);
        if (trn_divergence_get(r->trn)->diverged
            && !(why == SIM_STOP_HANDLER && sim_engine_stop_code(r->eng) == STOP_INTERRUPT)) {
            rc = 1;
            goto out_finish;
        }
    }
    res->status = RUN_OK;
    if (why == SIM_STOP_HORIZON && !run_i_frozen(r)) {
        res->stop_reason = "time";
    } else {
        int code = why == SIM_STOP_HORIZON ? STOP_FROZEN
                 : why == SIM_STOP_HANDLER ? sim_engine_stop_code(r->eng) : STOP_STALL;
        res->stop_reason = code == STOP_STEPS ? "steps"
                         : code == STOP_TARGET_LOSS ? "target_loss"
                         : code == STOP_TARGET_ACCURACY ? "target_accuracy"
                         : code == STOP_INTERRUPT ? "interrupted"
                         : code == STOP_DIVERGED ? "diverged"
                         : code == STOP_NO_PROGRESS ? "no_progress"
                         : code == STOP_LIMIT ? "limit"
                         : code == STOP_FLOOD ? "flood" : "stalled";
        if (code == STOP_NO_PROGRESS || code == STOP_LIMIT || code == STOP_FLOOD) {
            res->status = code == STOP_LIMIT ? RUN_LIMIT
                        : code == STOP_FLOOD ? RUN_FLOOD : RUN_NO_PROGRESS;
            snprintf(res->message, sizeof res->message, "%s", r->stuck);
        }
        if (code == STOP_INTERRUPT)
            res->status = RUN_INTERRUPTED;
        if (code == STOP_DIVERGED) {
            res->status = RUN_DIVERGED;
            snprintf(res->message, sizeof res->message, "%s", r->diverged);
        }
        if (code == STOP_STALL || code == STOP_FROZEN) {
            res->status = RUN_STALLED;
            run_i_describe_stall(r, res, code);
        }
    }
    /* a final row at the end instant, unless the models are no longer
     * finite: a diverged run keeps the rows written before.  A row taken
     * at this same instant (a metrics instant that is also the stop
     * instant) saw only the events before it; the final row comes after
     * every event of the instant and replaces it, so that the last row
     * counts the steps and bytes nodes.csv counts. */
    if (res->status != RUN_DIVERGED) {
        int again = r->have_last && r->last.time_s == sim_engine_now(r->eng);
        out_metrics_row row;
        run_i_evaluate(r, &row);
        if (again && same_row(&row, &r->last)) {
            /* nothing happened since: the row stands */
        } else if (run_i_metrics_diverged(r, &row)) {
            res->status = RUN_DIVERGED;
            res->stop_reason = "diverged";
            snprintf(res->message, sizeof res->message, "%s", r->diverged);
        } else if (again) {
            run_i_record_again(r, &row);
        } else {
            run_i_record(r, &row);
            run_i_targets_eval(r, &row);
        }
    }
    res->wall_s = seconds(CLOCK_MONOTONIC) - w0;
    res->cpu_s = seconds(CLOCK_THREAD_CPUTIME_ID) - c0 + (trn_worker_cpu_s(r->trn) - cw0);
    res->math_cpu_s = trn_math_cpu_s(r->trn) - cm0;
    res->threads = trn_threads(r->trn);
    res->sim_time_s = sim_engine_now(r->eng);
    res->events = sim_engine_events_processed(r->eng);
    res->last = r->last;
    res->n_params = r->ctx.P;
    res->n_targets = r->n_tg;
    memcpy(res->targets, r->tg, (size_t)r->n_tg * sizeof *r->tg);
    if (r->alg->stats)
        res->n_stats = r->alg->stats(&r->ctx, res->stat_keys, res->stat_values,
                                     RUN_MAX_STATS);

    if (r->opt->out_dir) {
        /* run.json last: its presence marks a complete run */
        if (out_file_commit(mfile, err, es) != 0) {
            mfile = NULL;
            goto out_finish;
        }
        mfile = NULL;
        if (nfile) {
            int c = out_file_commit(nfile, err, es);
            nfile = NULL;
            if (c != 0)
                goto out_finish;
        }
        if (tfile) {
            out_trace_flush(&r->trace);
            int trc = out_file_commit(tfile, err, es);
            tfile = NULL;
            r->tf = NULL;
            if (trc != 0)
                goto out_finish;
        }
        if (run_i_write_nodes(r, dir, res->sim_time_s, err, es) != 0
            || run_i_write_alg_nodes(r, dir, err, es) != 0
            || run_i_write_run_json(r, dir, res, err, es) != 0)
            goto out_finish;
        int dc = out_rundir_commit(od, err, es);
        od = NULL;
        if (dc != 0)
            goto out_finish;
    }
    rc = 0;

out_finish:
    out_file_abort(nfile);
    out_file_abort(mfile);
    out_file_abort(tfile);
    out_rundir_abort(od);   /* nothing of this run is left: the old folder stays */
    r->tf = NULL;
    finish(r);
    return rc;
}

int run_execute(run_sim *r, const run_options *opt, run_result *res, char *err, size_t es)
{
    int want = opt ? opt->threads : 0;
    /* up to -want threads when a step is worth a job: below that the
     * pool's hand-offs cost more than the step (bench/RESULTS.md) */
    if (want < 0)
        want = r->model && mdl_flops_per_sample(r->model) * (double)r->s->batch
                           >= RUN_THREADS_MIN_FLOPS ? -want : 1;
    r->threads = want > 1 ? want : 1;
    int rc = execute(r, opt, res, err, es);
    if (rc == 1) {
        r->threads = 1;
        rc = execute(r, opt, res, err, es);
    }
    return rc;
}
