/* run_watch.c -- how the runner tells a run that cannot progress from one
 * that is slow, and keeps every run within its bounds while it goes on:
 * the watchdog on events without progress (environment events included),
 * the bound on training that stopped (no step completed for too long), the
 * output limits (rows of metrics.csv, node_metrics.csv and trace.csv), the
 * bound on the memory of the uplink backlogs (a protocol that floods), the
 * event budget (limits.events), and the report of who waits for what.  It
 * handles no event and writes no file; the limits checked before a run are
 * run_limits.c's.
 */
#include "run_internal.h"
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

void run_i_watchdog_reset(run_sim *r)
{
    if (r->wd_counting) {
        memset(r->wd_hits, 0, (size_t)r->n_all * sizeof *r->wd_hits);
        r->wd_counting = 0;
    }
}

/* The rest of run_i_watchdog once a window has passed half the limit:
 * the events counted per node, and the stop past the limit.  Out of line
 * (cold): the check after every event stays a few compares. */
__attribute__((noinline, cold))
static int watchdog_window(run_sim *r, const sim_event *ev, double now)
{
    r->wd_counting = 1;
    uint32_t node = cl_event_node(r->cl, ev);
    if (node < (uint32_t)r->n_all)
        r->wd_hits[node]++;
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
                 "no progress at t=%.10g s: %" PRIu64 " message, timer and environment events "
                 "without a step completing (watchdog limit %" PRIu64 "); busiest:%s", now, r->wd_nostep,
                 r->wd_limit, busy);
    return STOP_NO_PROGRESS;
}

/* After each event: O(1) unless a window passes half the limit (within
 * half of it, neither count can be past the limit). */
int run_i_watchdog(run_sim *r, const sim_event *ev)
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
    /* A protocol timer due later than the last one is the protocol's own
     * clock moving on (gossip sends on a timer whatever its steps): it
     * restarts the count of events without a step, once per instant.  A
     * loop of messages, or of timers at one instant, is still caught; a
     * protocol that loops on timers with a positive delay advances
     * simulated time, which the stop condition and the bound on training
     * that stopped (run_i_frozen) bound. */
    if (ev->kind == CL_EV_TIMER && now > r->wd_tick) {
        r->wd_tick = now;
        r->wd_nostep = 0;
        progress = 1;
    }
    if (progress && (r->wd_instant < r->wd_limit / 2 && r->wd_nostep < r->wd_limit / 2))
        run_i_watchdog_reset(r);
    r->wd_instant++;
    /* environment events too: run_prepare refuses a process switching so
     * fast that a correct run would meet the limit (RUN_ENV_MARGIN) */
    if (ev->kind == CL_EV_ARRIVE || ev->kind == CL_EV_DELIVER || ev->kind == CL_EV_TIMER
        || ev->kind == CL_EV_NIC || ev->kind == CL_EV_RETRY || ev->kind == CL_EV_ENV)
        r->wd_nostep++;
    if (r->wd_instant > r->wd_limit / 2 || r->wd_nostep > r->wd_limit / 2)
        return watchdog_window(r, ev, now);
    return 0;
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
double run_i_frozen_bound(const run_sim *r)
{
    return RUN_FROZEN_FACTOR * run_i_round_bound(r, alg_param_bytes(&r->ctx, r->ctx.P), 1);
}

/* The worst round of run_i_frozen_bound with messages of msg_bytes, its
 * step part left out when with_step is 0. */
double run_i_round_bound(const run_sim *r, double msg_bytes, int with_step)
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
    double msg = msg_bytes / bw;
    const double over = r->alg->step_overhead ? r->alg->step_overhead(&r->ctx) : 0;
    return (with_step ? step * slow * (1 + over) : 0) + (double)r->n_all * msg + lat;
}

/* Training stopped: steps were completed before, none for longer than the
 * bound, and none of the failure declarations the detector has scheduled
 * before the time stop is less than the bound ago (a protocol that waits
 * for a down node until it is declared failed is waiting for a known
 * event, however long faults.detect_s is).  O(1) per event. */
int run_i_frozen(run_sim *r)
{
    double now = sim_engine_now(r->eng);
    uint64_t steps = cl_total_steps(r->cl);
    if (steps != r->last_steps) {
        r->last_steps = steps;
        r->last_step_s = now;
        return 0;
    }
    return now - r->last_step_s > r->frozen_bound_s && now - r->decl_due_s > r->frozen_bound_s;
}

/* The interrupt flag is read after the event is handled, so the state an
 * interrupted run reports is that of a whole number of events. */
void run_i_describe_stall(run_sim *r, run_result *res, int code)
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

void run_i_limits_reset(run_sim *r)
{
    const run_options *o = r->opt;
    r->rows_metrics = r->rows_nodes = r->rows_trace = 0;
    r->max_metrics_rows = o->max_metrics_rows ? o->max_metrics_rows : RUN_MAX_METRICS_ROWS;
    r->max_node_rows = o->max_node_rows ? o->max_node_rows : RUN_MAX_NODE_ROWS;
    r->max_trace_rows = o->max_trace_rows ? o->max_trace_rows : RUN_MAX_TRACE_ROWS;
    r->eval_events = 0;
    r->max_events = o->max_events ? o->max_events : (uint64_t)run_i_events_limit(r);
}

/* The catch-all bound on a run's work: whatever the estimate before the
 * run missed (a protocol's messages per step, retransmissions, a process
 * the estimate does not model), the count of events handled, plus what
 * evaluations add (run_i_eval_events), cannot pass limits.events.  A count,
 * not a clock: a rerun stops at the same event. */
int run_i_event_budget(run_sim *r)
{
    uint64_t ev = sim_engine_events_processed(r->eng), all = ev + r->eval_events;
    if (all < r->max_events)
        return 0;
    snprintf(r->stuck, sizeof r->stuck, "event limit at t=%.10g s: %" PRIu64 " events "
             "handled and %" PRIu64 " more counted for evaluations (one per sample evaluated "
             "and per node row) reach the limit of %" PRIu64 " (limits.events); shorten the "
             "run, evaluate less often, or raise limits.events", sim_engine_now(r->eng), ev,
             r->eval_events, r->max_events);
    return STOP_LIMIT;
}

/* O(1) per event.  The evaluation limits apply only after an evaluation
 * (the only event that writes rows) and only before the stop time: a run
 * that reaches its stop time writes no more, and one with stop.time_s was
 * bounded before it started (scn_validate, run_limits.c). */
int run_i_output_limit(run_sim *r, const sim_event *ev)
{
    double now = sim_engine_now(r->eng);
    const char *file = NULL;
    uint64_t rows = 0, limit = 0;
    if (r->tf && r->rows_trace >= r->max_trace_rows) {
        file = "trace.csv";
        rows = r->rows_trace;
        limit = r->max_trace_rows;
        snprintf(r->stuck, sizeof r->stuck, "output limit at t=%.10g s: trace.csv reached "
                 "%" PRIu64 " rows, its limit of %" PRIu64 "; shorten the run or turn "
                 "output.trace off", now, rows, limit);
        return STOP_LIMIT;
    }
    if (ev->kind != EV_METRICS || !(now < r->s->stop_time_s))
        return 0;
    if (isinf(r->s->stop_time_s) && r->rows_metrics >= r->max_metrics_rows) {
        file = "metrics.csv";
        rows = r->rows_metrics;
        limit = r->max_metrics_rows;
    } else if (r->s->metrics_per_node && r->rows_nodes + (uint64_t)r->s->n_nodes > r->max_node_rows) {
        file = "node_metrics.csv";
        rows = r->rows_nodes;
        limit = r->max_node_rows;
    }
    if (!file)
        return 0;
    snprintf(r->stuck, sizeof r->stuck, "output limit at t=%.10g s: %s holds %" PRIu64
             " rows and the next evaluation would take it past its limit of %" PRIu64
             "; raise metrics.every_s%s or set stop.time_s", now, file, rows, limit,
             file[0] == 'n' ? ", turn metrics.per_node off" : "");
    return STOP_LIMIT;
}

static void fmt_mem(char *buf, size_t n, double b)
{
    static const char *const unit[] = {"B", "KB", "MB", "GB", "TB", "PB", "EB"};
    int k = 0;
    while (b >= 1000 && k < 6) {
        b /= 1000;
        k++;
    }
    snprintf(buf, n, "%.3g %s", b, unit[k]);
}

/* O(1) per event: the cluster marks the first send past the bound. */
int run_i_flood(run_sim *r)
{
    double mem;
    uint64_t n_msgs;
    int i = cl_message_flood(r->cl, &mem, &n_msgs);
    if (i < 0)
        return 0;
    char m[32], b[32];
    fmt_mem(m, sizeof m, mem);
    fmt_mem(b, sizeof b, run_i_queue_bound(r, r->ctx.P));
    snprintf(r->stuck, sizeof r->stuck,
             "queue limit at t=%.10g s: %" PRIu64 " messages sent and not yet delivered hold %s, "
             "past the bound of %s (the memory limit less the run's estimate); node %d, whose "
             "send crossed it, has %" PRIu64 " in its uplink: the protocol sends faster than its "
             "links drain; send less often, raise the bandwidth, or raise limits.memory_bytes",
             sim_engine_now(r->eng), n_msgs, m, b, i, cl_uplink_queued(r->cl, i));
    return STOP_FLOOD;
}
