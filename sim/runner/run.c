/* run.c -- drives one prepared simulation (see run.h): starts the engine,
 * cluster and algorithm, routes events between them, evaluates the model
 * every metrics.every_s seconds, stops at the first stop condition, a
 * stall, a divergence, the watchdog or a signal, and writes the outputs
 * (through run_output.c).  Building the run from the scenario is
 * run_prepare.c's; event handling itself belongs to the cluster and the
 * algorithm.
 */
#include "run_internal.h"

/* ---- callbacks from the cluster to the trainer and the algorithm ---- */

/* A step's math is taken when it begins: on the parameters as they are now. */
static void cb_step_start(void *vr, int node)
{
    run_sim *r = vr;
    trn_step_begin(r->trn, node, cl_stats(r->cl, node)->steps + 1, cl_now(r->cl));
}

static void cb_step_done(void *vr, int node)
{
    run_sim *r = vr;
    r->alg->on_step_done(&r->ctx, alg_state(&r->ctx, node), node, trn_grad(r->trn, node));
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

/* A node that comes back with rejoin "neighbour" takes the parameters of
 * its first neighbour (in the topology's order) that is up; with none up,
 * or rejoin "keep", it keeps its own. */
static void cb_up(void *vr, int node)
{
    run_sim *r = vr;
    if (r->s->fault_rejoin != SCN_REJOIN_NEIGHBOUR)
        return;
    const topo_graph *g = r->g;
    for (size_t e = g->off[node]; e < g->off[node + 1]; e++) {
        int j = g->nbr[e];
        if (cl_is_up(r->cl, j)) {
            memcpy(trn_params(r->trn, node), trn_params_const(r->trn, j), r->ctx.P * sizeof(double));
            return;
        }
    }
}

static void cb_trace(void *vr, const cl_trace_rec *t)
{
    run_sim *r = vr;
    out_trace_row row = { t->node, t->kind, t->start_s, t->end_s, t->peer, t->bytes };
    out_trace_write(r->tf, &row);
}

/* ---- evaluation ---- */

static void evaluate(run_sim *r, out_metrics_row *row)
{
    int n = r->ctx.n;
    size_t P = r->ctx.P;
    /* The mean is taken as x_0 + mean_i (x_i - x_0), in node order: exactly
     * x_0 when every node holds the same model, so a consensus distance of
     * zero means identical models, not a rounding coincidence. */
    const double *x0 = trn_params_const(r->trn, 0);
    memset(r->avg, 0, P * sizeof(double));
    for (int i = 1; i < n; i++) {
        const double *x = trn_params_const(r->trn, i);
        for (size_t k = 0; k < P; k++)
            r->avg[k] += x[k] - x0[k];
    }
    for (size_t k = 0; k < P; k++)
        r->avg[k] = x0[k] + r->avg[k] / n;
    double cd = 0;
    for (int i = 0; i < n; i++) {
        const double *x = trn_params_const(r->trn, i);
        for (size_t k = 0; k < P; k++) {
            double d = x[k] - r->avg[k];
            cd += d * d;
        }
    }
    double acc;
    const double *model = r->alg->eval_params ? r->alg->eval_params(&r->ctx) : r->avg;
    row->time_s = sim_engine_now(r->eng);
    row->steps = cl_total_steps(r->cl);
    if (r->timing_only) {
        /* no model to evaluate and no data to count epochs over */
        row->epochs = row->train_loss = row->test_loss = row->test_accuracy = NAN;
    } else {
        row->epochs = (double)(cl_total_steps(r->cl) * (uint64_t)trn_batch(r->trn))
                      / (double)r->train.n;
        mdl_evaluate(r->model, model, &r->train, r->eval_idx, r->n_eval, &row->train_loss,
                     &acc);
        mdl_evaluate(r->model, model, &r->test, r->test_idx, r->n_test_eval, &row->test_loss,
                     &row->test_accuracy);
    }
    row->consensus_distance = sqrt(cd / n);
    row->bytes_sent = cl_total_bytes_sent(r->cl);
}

/* node_metrics.csv: every node's own model on the same test samples as
 * the average model, one row per node per evaluation instant. */
static void record_nodes(run_sim *r, double time_s)
{
    for (int i = 0; i < r->ctx.n; i++) {
        double loss = NAN, acc = NAN;
        if (!r->timing_only)
            mdl_evaluate(r->model, trn_params_const(r->trn, i), &r->test, r->test_idx,
                         r->n_test_eval, &loss, &acc);
        out_fmt_double(r->nmf, time_s);
        fprintf(r->nmf, ",%d,%" PRIu64 ",", i, cl_stats(r->cl, i)->steps);
        out_fmt_double(r->nmf, loss);
        fputc(',', r->nmf);
        out_fmt_double(r->nmf, acc);
        fputc('\n', r->nmf);
    }
}

static void record(run_sim *r, const out_metrics_row *row)
{
    if (r->mf)
        out_metrics_write(r->mf, row);
    if (r->nmf)
        record_nodes(r, row->time_s);
    if (r->opt->on_metrics)
        r->opt->on_metrics(r->opt->hook_ctx, row);
    r->last = *row;
    r->have_last = 1;
}

/* An evaluation whose loss is NaN or infinite ends the run as diverged
 * before the row is written, so metrics.csv holds only finite rows.  It
 * names the first node (in node order) holding a parameter that is not
 * finite, or the average model when every node's parameters are finite
 * but the loss overflowed.  O(n P), only on this path. */
static int metrics_diverged(run_sim *r, const out_metrics_row *row)
{
    /* timing only: there is no loss (nan by design) */
    if (r->timing_only || (isfinite(row->train_loss) && isfinite(row->test_loss)))
        return 0;
    const char *what = isfinite(row->train_loss) ? "test loss" : "train loss";
    double v = isfinite(row->train_loss) ? row->test_loss : row->train_loss;
    for (int i = 0; i < r->n_all; i++) {
        const double *x = trn_params_const(r->trn, i);
        for (size_t k = 0; k < r->ctx.P; k++) {
            if (!isfinite(x[k])) {
                snprintf(r->diverged, sizeof r->diverged,
                         "diverged at t=%.10g s: the evaluated %s is %s; node %d (after %"
                         PRIu64 " steps) holds parameter %zu = %s", row->time_s, what,
                         isnan(v) ? "nan" : "inf", i, cl_stats(r->cl, i)->steps, k,
                         isnan(x[k]) ? "nan" : x[k] > 0 ? "inf" : "-inf");
                return 1;
            }
        }
    }
    snprintf(r->diverged, sizeof r->diverged,
             "diverged at t=%.10g s: the evaluated %s of the average model is %s "
             "(every parameter finite; the loss overflowed)", row->time_s, what,
             isnan(v) ? "nan" : "inf");
    return 1;
}

static int on_metrics_event(run_sim *r)
{
    out_metrics_row row;
    evaluate(r, &row);
    if (metrics_diverged(r, &row))
        return STOP_DIVERGED;
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
                               (uint32_t)r->n_all, 0) != 0) {
        sim_die_oom();
    }
    return 0;
}

static int handle_event(run_sim *r, const sim_event *ev)
{
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

uint64_t run_watchdog_limit(int n_all)
{
    return RUN_WATCHDOG_BASE + RUN_WATCHDOG_PER_NODE * (uint64_t)(n_all > 0 ? n_all : 0);
}

/* The busiest nodes of the second half of a watchdog window, most events
 * first (ties by node number), up to 8 of them, with each one's own
 * description of what it waits for. */
static void describe_busy(run_sim *r, char *buf, size_t size)
{
    size_t len = 0;
    buf[0] = '\0';
    for (int shown = 0; shown < 8; shown++) {
        int best = -1;
        for (int i = 0; i < r->n_all; i++)
            if (r->wd_hits[i] && (best < 0 || r->wd_hits[i] > r->wd_hits[best]))
                best = i;
        if (best < 0 || len >= size)
            break;
        char what[256] = "";
        if (r->alg->describe_wait)
            r->alg->describe_wait(&r->ctx, alg_state(&r->ctx, best), best, what, sizeof what);
        len += (size_t)snprintf(buf + len, size - len, "%s node %d (%" PRIu64 " events%s%s)",
                                shown ? ";" : "", best, r->wd_hits[best],
                                what[0] ? ", waiting for " : "", what);
        r->wd_hits[best] = 0;
    }
}

static void watchdog_reset(run_sim *r)
{
    if (r->wd_counting) {
        memset(r->wd_hits, 0, (size_t)r->n_all * sizeof *r->wd_hits);
        r->wd_counting = 0;
    }
}

/* After each event: O(1) unless a window passes half the limit. */
static int watchdog(run_sim *r, const sim_event *ev)
{
    double now = sim_engine_now(r->eng);
    uint64_t steps = cl_total_steps(r->cl);
    int progress = 0;
    if (now > r->wd_time) {
        r->wd_time = now;
        r->wd_instant = 0;
        progress = 1;
    }
    if (steps != r->wd_steps) {
        r->wd_steps = steps;
        r->wd_nostep = 0;
        progress = 1;
    }
    if (progress && (r->wd_instant < r->wd_limit / 2 && r->wd_nostep < r->wd_limit / 2))
        watchdog_reset(r);
    r->wd_instant++;
    if (ev->kind == CL_EV_ARRIVE || ev->kind == CL_EV_DELIVER || ev->kind == CL_EV_TIMER
        || ev->kind == CL_EV_NIC)
        r->wd_nostep++;
    if (r->wd_instant > r->wd_limit / 2 || r->wd_nostep > r->wd_limit / 2) {
        r->wd_counting = 1;
        if (ev->target < (uint32_t)r->n_all)
            r->wd_hits[ev->target]++;
    }
    if (r->wd_instant <= r->wd_limit && r->wd_nostep <= r->wd_limit)
        return 0;
    char busy[768];
    describe_busy(r, busy, sizeof busy);
    if (r->wd_instant > r->wd_limit)
        snprintf(r->stuck, sizeof r->stuck,
                 "no progress at t=%.10g s: %" PRIu64 " events without simulated time "
                 "advancing (watchdog limit %" PRIu64 "); busiest:%s", now, r->wd_instant,
                 r->wd_limit, busy);
    else
        snprintf(r->stuck, sizeof r->stuck,
                 "no progress at t=%.10g s: %" PRIu64 " message and timer events without a "
                 "step completing (watchdog limit %" PRIu64 "); busiest:%s", now, r->wd_nostep,
                 r->wd_limit, busy);
    return STOP_NO_PROGRESS;
}

/* The noise factor that one step in 10^6 exceeds (RUN_FROZEN_TAIL). */
static double noise_tail(const cl_noise_spec *ns)
{
    double z = gsl_cdf_ugaussian_Qinv(RUN_FROZEN_TAIL), e = -log(RUN_FROZEN_TAIL);
    switch (ns->dist) {
    case CL_NOISE_UNIFORM:     return ns->high;
    case CL_NOISE_EXPONENTIAL: return e;
    case CL_NOISE_LOGNORMAL:   return exp(-0.5 * ns->sigma * ns->sigma + z * ns->sigma);
    case CL_NOISE_NORMAL:      return 1.0 + z * ns->sigma;
    case CL_NOISE_SHIFTED_EXPONENTIAL: return ns->shift + (1.0 - ns->shift) * e;
    case CL_NOISE_GAMMA:       return gsl_cdf_gamma_Qinv(RUN_FROZEN_TAIL, ns->shape, 1.0 / ns->shape);
    case CL_NOISE_PARETO:
        return (ns->alpha - 1.0) / ns->alpha * pow(RUN_FROZEN_TAIL, -1.0 / ns->alpha);
    case CL_NOISE_CONSTANT:
    default:                   return 1.0;
    }
}

/* The longest a correct run goes without any node completing a step:
 * RUN_FROZEN_FACTOR times the worst round a protocol here can need, i.e.
 * the slowest worker's step (its base time at the noise factor one step in
 * 10^6 exceeds and at the largest slowdown any process can apply, several
 * on one node multiplying), plus n_all whole-model messages through the
 * slowest NIC or link, plus the largest latency and jitter.  A protocol
 * waiting for a node that is down, a message that was lost or a peer that
 * left for good passes it; see docs/reliability.md. */
static double frozen_bound(const run_sim *r)
{
    const scn_scenario *s = r->s;
    double step = 0, slow = 1, bw = INFINITY, lat = 0;
    for (int i = 0; i < s->n_nodes; i++)
        step = fmax(step, r->step_times[i] * noise_tail(&r->noise[i]));
    for (size_t k = 0; k < s->n_slowdowns; k++) {
        const cl_slowdown *d = &r->slows[k];
        double f = d->factor;
        for (size_t q = 0; q < d->n_points; q++)
            f = fmax(f, d->points[q].value);
        slow *= fmax(1.0, f);
    }
    for (size_t k = 0; k <= s->n_links; k++) {
        const cl_link_class *c = &r->classes[k];
        double j = c->jitter == CL_JITTER_UNIFORM ? c->jitter_b
                 : c->jitter == CL_JITTER_EXPONENTIAL ? -log(RUN_FROZEN_TAIL) * c->jitter_a : 0;
        bw = fmin(bw, c->bandwidth_Bps);
        lat = fmax(lat, c->latency_s + j);
    }
    for (int i = 0; i < r->n_all; i++)
        bw = fmin(bw, fmin(r->up_Bps[i], r->down_Bps[i]));
    double msg = alg_param_bytes(&r->ctx, r->ctx.P) / bw;
    return RUN_FROZEN_FACTOR * (step * slow + (double)r->n_all * msg + lat);
}

/* Training stopped: steps were completed before, none for longer than the
 * bound.  O(1) per event. */
static int frozen(run_sim *r)
{
    double now = sim_engine_now(r->eng);
    uint64_t steps = cl_total_steps(r->cl);
    if (steps != r->last_steps) {
        r->last_steps = steps;
        r->last_step_s = now;
        return 0;
    }
    return now - r->last_step_s > r->frozen_bound_s;
}

/* The interrupt flag is read after the event is handled, so the state an
 * interrupted run reports is that of a whole number of events. */
static int handle(void *vr, const sim_event *ev)
{
    run_sim *r = vr;
    int code = handle_event(r, ev);
    if (code == 0)
        code = watchdog(r, ev);
    if (code == 0 && trn_divergence_get(r->trn)->diverged) {
        const trn_divergence *d = trn_divergence_get(r->trn);
        snprintf(r->diverged, sizeof r->diverged,
                 "diverged at t=%.10g s: node %d's minibatch loss was %s at the start of its "
                 "step %" PRIu64, d->time_s, d->node, isnan(d->loss) ? "nan"
                 : d->loss > 0 ? "inf" : "-inf", d->step);
        code = STOP_DIVERGED;
    }
    if (code == 0 && frozen(r))
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

static void describe_stall(run_sim *r, run_result *res, int code)
{
    size_t len;
    if (code == STOP_FROZEN)
        len = (size_t)snprintf(res->message, sizeof res->message,
            "stalled at t=%.10g s: no step completed since t=%.10g s, longer than the bound "
            "of %.6g s; waiting:", sim_engine_now(r->eng), r->last_step_s, r->frozen_bound_s);
    else
        len = (size_t)snprintf(res->message, sizeof res->message,
            "stalled at t=%.10g s: no event left before the stop condition; waiting:",
            sim_engine_now(r->eng));
    int shown = 0, n = r->n_all;
    for (int i = 0; i < n && len < sizeof res->message; i++) {
        char what[256];
        int down = !cl_is_up(r->cl, i);
        if (r->alg->describe_wait)
            r->alg->describe_wait(&r->ctx, alg_state(&r->ctx, i), i, what, sizeof what);
        else
            snprintf(what, sizeof what, "%s", cl_is_computing(r->cl, i) ? "its step" : "");
        if (!what[0] && !down)
            continue;
        if (shown == 16) {
            snprintf(res->message + len, sizeof res->message - len, " ...");
            break;
        }
        len += (size_t)snprintf(res->message + len, sizeof res->message - len,
                                "%s node %d%s%s%s", shown ? ";" : "", i,
                                down ? " (down)" : "", what[0] ? " for " : "", what);
        shown++;
    }
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
                        .on_step_done = cb_step_done, .on_message = cb_message,
                        .on_timer = r->alg->on_timer ? cb_timer : NULL, .on_up = cb_up,
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
    };
    if (!r->eng || !(r->cl = cl_create(&cc, r->eng, cb)) || !(r->trn = trn_create(&tc)))
        return -1;
    alg_host_config hc = { .cl = r->cl, .trn = r->trn,
                           .bytes_per_param = s->bytes_per_param / s->compression_ratio,
                           .message_bytes = s->model_message_bytes / s->compression_ratio };
    r->ctx.seed = s->seed;   /* the streams are created on first use (alg_rng) */
    if (alg_host_attach(&r->ctx, &hc) != 0)
        return -1;
    r->frozen_bound_s = frozen_bound(r);
    r->ctx.state_size = r->alg->state_size;
    r->ctx.states = calloc((size_t)n, r->alg->state_size ? r->alg->state_size : 1);
    if (!r->ctx.states)
        return -1;
    if (r->alg->shared_init && r->alg->shared_init(&r->ctx) != 0)
        return -1;
    for (int i = 0; i < n; i++)
        if (r->alg->init && r->alg->init(&r->ctx, alg_state(&r->ctx, i), i) != 0)
            return -1;
    if (trn_init_params(r->trn) != 0)
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
    trn_destroy(r->trn);
    cl_destroy(r->cl);
    sim_engine_destroy(r->eng);
    r->trn = NULL;
    r->cl = NULL;
    r->eng = NULL;
}

int run_execute(run_sim *r, const run_options *opt, run_result *res, char *err, size_t es)
{
    static const run_options none = { 0 };
    const scn_scenario *s = r->s;
    int rc = -1;
    out_file *mfile = NULL, *nfile = NULL, *tfile = NULL;
    memset(res, 0, sizeof *res);
    r->opt = opt ? opt : &none;
    if (r->opt->algorithm) {
        if (r->opt->algorithm->servers != r->n_all - s->n_nodes) {
            snprintf(err, es, "%s: error: the replacement algorithm needs the same number of "
                     "servers as the scenario's", s->path);
            return -1;
        }
        r->alg = r->opt->algorithm;
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
    r->wd_counting = 1;
    watchdog_reset(r);
    r->mf = NULL;
    r->nmf = NULL;
    r->tf = NULL;
    r->stop_steps_total = s->stop_steps > 0 ? (uint64_t)s->stop_steps * (uint64_t)s->n_nodes : 0;
    r->last_step_s = 0;
    r->last_steps = 0;

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
        if (s->metrics_per_node) {
            if (!(nfile = out_file_open(r->opt->out_dir, "node_metrics.csv", err, es)))
                goto out_finish;
            r->nmf = out_file_stream(nfile);
            fputs("time_s,node,steps,test_loss,test_accuracy\n", r->nmf);
        }
        if (s->output_trace) {
            if (!(tfile = out_file_open(r->opt->out_dir, "trace.csv", err, es)))
                goto out_finish;
            r->tf = out_file_stream(tfile);
            out_trace_header(r->tf);
        }
    }
    if (start(r) != 0) {
        snprintf(err, es, "%s: error: out of memory starting the run", s->path);
        goto out_finish;
    }

    /* CPU time of this thread only: the simulation is single-threaded, and
     * OpenBLAS's idle worker threads spin at start-up (see bench/RESULTS.md) */
    double w0 = seconds(CLOCK_MONOTONIC), c0 = seconds(CLOCK_THREAD_CPUTIME_ID);
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
    res->status = RUN_OK;
    if (why == SIM_STOP_HORIZON && !frozen(r)) {
        res->stop_reason = "time";
    } else {
        int code = why == SIM_STOP_HORIZON ? STOP_FROZEN
                 : why == SIM_STOP_HANDLER ? sim_engine_stop_code(r->eng) : STOP_STALL;
        res->stop_reason = code == STOP_STEPS ? "steps"
                         : code == STOP_TARGET_LOSS ? "target_loss"
                         : code == STOP_TARGET_ACCURACY ? "target_accuracy"
                         : code == STOP_INTERRUPT ? "interrupted"
                         : code == STOP_DIVERGED ? "diverged"
                         : code == STOP_NO_PROGRESS ? "no_progress" : "stalled";
        if (code == STOP_NO_PROGRESS) {
            res->status = RUN_NO_PROGRESS;
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
            describe_stall(r, res, code);
        }
    }
    /* a final row at the end instant, unless the models are no longer
     * finite: a diverged run keeps the rows written before */
    if (res->status != RUN_DIVERGED
        && (!r->have_last || r->last.time_s < sim_engine_now(r->eng))) {
        out_metrics_row row;
        evaluate(r, &row);
        if (metrics_diverged(r, &row)) {
            res->status = RUN_DIVERGED;
            res->stop_reason = "diverged";
            snprintf(res->message, sizeof res->message, "%s", r->diverged);
        } else {
            record(r, &row);
        }
    }
    res->wall_s = seconds(CLOCK_MONOTONIC) - w0;
    res->cpu_s = seconds(CLOCK_THREAD_CPUTIME_ID) - c0;
    res->sim_time_s = sim_engine_now(r->eng);
    res->events = sim_engine_events_processed(r->eng);
    res->last = r->last;
    res->n_params = r->ctx.P;
    if (r->alg->stats)
        res->n_stats = r->alg->stats(&r->ctx, res->stat_keys, res->stat_values, 16);

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
            int trc = out_file_commit(tfile, err, es);
            tfile = NULL;
            r->tf = NULL;
            if (trc != 0)
                goto out_finish;
        }
        if (run_i_write_nodes(r, r->opt->out_dir, res->sim_time_s, err, es) != 0
            || run_i_write_run_json(r, r->opt->out_dir, res, err, es) != 0)
            goto out_finish;
    }
    rc = 0;

out_finish:
    out_file_abort(nfile);
    out_file_abort(mfile);
    out_file_abort(tfile);
    r->tf = NULL;
    finish(r);
    return rc;
}

