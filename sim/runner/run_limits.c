/* run_limits.c -- refuses runs too large for the machine or for any
 * reasonable output before they are built or started: a memory estimate
 * (nodes, topology edges by kind, data, model copies, the protocol's
 * own structures such as a schedule file's rounds) against
 * limits.memory_bytes or half the physical memory; a bound on the total
 * number of steps and of environment events (slowdown and fault
 * switches), at the fastest pace the noise and slowdowns allow; the
 * output a run would write (evaluations, node_metrics.csv and trace.csv
 * rows); and the run's events in all against limits.events (steps, their
 * messages and retransmissions, protocol timers, evaluations weighted by
 * the samples they evaluate, environment switches; docs/reliability.md).
 * It only estimates and reports (exit 2 through the caller); it allocates
 * nothing of the run, and what is enforced while the run goes on is
 * run_watch.c's.
 */
#include "run_internal.h"

#include <sys/stat.h>

/* The default limit: half the machine's physical memory.  The estimate
 * leaves out what protocols keep per neighbour, and the machine is rarely
 * ours alone; limits.memory_bytes or --force go further. */
static double default_memory_limit(void)
{
    long pages = sysconf(_SC_PHYS_PAGES), size = sysconf(_SC_PAGE_SIZE);
    return pages > 0 && size > 0 ? 0.5 * (double)pages * (double)size : INFINITY;
}

static void fmt_bytes(char *buf, size_t n, double b)
{
    static const char *const unit[] = {"B", "KB", "MB", "GB", "TB", "PB", "EB"};
    int k = 0;
    while (b >= 1000 && k < 6) {
        b /= 1000;
        k++;
    }
    snprintf(buf, n, "%.3g %s", b, unit[k]);
}

/* Lines of a regular file (its last line counted without a newline): an
 * upper bound of an edge list's edges, read in 64 KB pieces.  What is not
 * a regular file counts 0 here; reading it is topo_file.c's to refuse. */
static double file_lines(const char *path)
{
    struct stat st;
    if (!path || stat(path, &st) != 0 || !S_ISREG(st.st_mode))
        return 0;
    FILE *f = fopen(path, "rb");
    if (!f)
        return 0;
    static char buf[65536];
    double lines = 0;
    off_t left = st.st_size;
    size_t got;
    char last = '\n';
    while (left > 0 && (got = fread(buf, 1, sizeof buf, f)) > 0) {
        for (size_t i = 0; i < got; i++)
            lines += buf[i] == '\n';
        last = buf[got - 1];
        left -= (off_t)got;
    }
    fclose(f);
    return lines + (last != '\n');
}

/* Edges of the topology: the built graph's own count once it exists;
 * before, the closed form of the kind as the scenario describes it (an
 * upper bound for the random kinds and the small cases), or the lines of
 * an edge-list file. */
static double edges_estimate(const run_sim *r)
{
    const scn_scenario *s = r->s;
    if (r->g)
        return (double)r->g->n_edges;
    double n = s->n_nodes;
    switch (s->topo_kind) {
    case TOPO_COMPLETE:
        return n * (n - 1) / 2;
    case TOPO_ERDOS_RENYI:
        return s->topo_p * n * (n - 1) / 2;
    case TOPO_RANDOM_REGULAR:
    case TOPO_LEARNED:
        return n * s->topo_degree / 2;
    case TOPO_RING_LATTICE:
    case TOPO_WATTS_STROGATZ:
        return n * s->topo_k;
    case TOPO_BARABASI_ALBERT:
        return n * s->topo_m;
    case TOPO_TORUS3D:
        return 3 * n;
    case TOPO_HYPERCUBE:
        return n * ceil(log2(fmax(n, 1))) / 2;
    case TOPO_EXPONENTIAL:
        return n * ceil(log2(fmax(n, 1)));
    case TOPO_EDGE_LIST:
        return file_lines(s->topo_file);
    case TOPO_STAR:
    case TOPO_BINARY_TREE:
        return n;
    case TOPO_RING:
    case TOPO_TORUS2D:
    default:
        return 2 * n;
    }
}

/* Refuses (exit 2, see docs/reliability.md) a run whose estimate exceeds
 * the limit.  Before anything is built (P == 0) only the process, the
 * nodes, the topology and generated data are counted; once the data and
 * model exist, the whole run: the process itself (RUN_MEM_BASE), P
 * doubles x RUN_MEM_COPIES (+1 with momentum) per node (servers
 * included), the data held (data_held), RUN_MEM_PER_NODE bytes of
 * per-node state, 64 bytes per edge and what the protocol says it holds
 * itself (alg_type.memory_bytes: the round graphs of a schedule file,
 * counted before the file's rounds are built) and the models kept for
 * time to target (metrics.target_snapshots).  bench/memory.py compares the
 * total with the measured peak resident set (bench/RESULTS.md, "Memory
 * estimate": within 1.5x either way from 10^3 to 10^6 nodes, every model
 * kind, generated and file data); tests/test_setup_costs.c pins the
 * formula. */
#define RUN_MEM_COPIES   4        /* parameters, gradient, two in flight or kept */
/* The process before any run: the binary, its libraries (OpenBLAS's pages
 * above all), stdio and the scenario: 11-14 MiB resident measured for
 * runs of 16 to 1000 nodes. */
#define RUN_MEM_BASE     (12.0 * 1048576)
/* A node's records in the cluster, the engine's event queue and message slots,
 * and the protocol's state: 1.4-1.5 KiB measured for a timing-only D-PSGD
 * node from 10^4 to 10^6 nodes, edges included.  What a protocol holds
 * beyond that it declares (alg_type.memory_bytes: AD-PSGD's random
 * streams, 2.5 KB a node). */
#define RUN_MEM_PER_NODE 1536.0
#define RUN_MEM_PER_EDGE 64.0     /* neighbour lists, weights, igraph's copy while built */
typedef struct mem_est { double base, model, data, nodes, edges, snaps, total, limit; int copies; } mem_est;

/* The data of the run: what the data sets hold once they exist, plus the
 * partition's index per training sample; before, a generated set's rows
 * at 8 bytes a feature (a file's size is not known before it is read:
 * counted once loaded, before the model is built). */
static double data_held(const run_sim *r, size_t P)
{
    const scn_scenario *s = r->s;
    if (r->train.x || r->train.x8)   /* loaded or generated: what it really holds
                                        (mdl_dataset_bytes: elements of their own size) */
        return mdl_dataset_bytes(&r->train) + mdl_dataset_bytes(&r->test)
             + (double)r->train.n * (double)sizeof(size_t);
    if (P == 0 && !r->timing_only && scn_data_generated(s->data_source))
        return ((double)s->data_train + (double)s->data_test) * ((double)s->data_features + 2) * 8;
    return 0;
}

static void estimate(const run_sim *r, size_t P, double data_bytes, mem_est *m)
{
    const scn_scenario *s = r->s;
    double data = data_bytes > 0 ? data_bytes : data_held(r, P);
    int copies = (r->alg && r->alg->model_copies ? r->alg->model_copies : RUN_MEM_COPIES)
               + (s->opt_momentum > 0);
    double model = (double)r->n_all * (double)P * copies * 8;
    double nodes = (double)r->n_all * RUN_MEM_PER_NODE;
    double edges = edges_estimate(r) * RUN_MEM_PER_EDGE;
    /* the models kept to place a target's crossing (run_target.c) */
    double snaps = (double)run_i_target_snapshots(r, P) * (double)P * 8;
    *m = (mem_est){ RUN_MEM_BASE, model, data, nodes, edges, snaps,
                    RUN_MEM_BASE + model + data + nodes + edges + r->alg_bytes + snaps,
                    s->limit_memory_bytes > 0 ? s->limit_memory_bytes : default_memory_limit(),
                    copies };
}

double run_i_memory_estimate(const run_sim *r)
{
    mem_est m;
    estimate(r, r->model ? mdl_n_params(r->model) : 0, 0, &m);
    return m.total;
}

/* The headroom messages in flight may fill: the limit less the estimate,
 * at least an eighth of the limit.  A run that skips the memory check
 * (limits.check_memory false, --force) is bounded by half the physical
 * memory instead of limits.memory_bytes: it asked to go past its limit,
 * not to run out of memory. */
double run_i_queue_bound(const run_sim *r, size_t P)
{
    mem_est m;
    estimate(r, P, 0, &m);
    if (!r->s->limit_check_memory)
        m.limit = default_memory_limit();
    if (isinf(m.limit))
        return 0;
    return fmax(m.limit - m.total, m.limit / 8);
}

int run_i_check_memory(const run_sim *r, size_t P, double data_bytes, scn_error *err)
{
    const scn_scenario *s = r->s;
    if (!s->limit_check_memory)
        return 0;
    mem_est me;
    estimate(r, P, data_bytes, &me);
    double model = me.model, data = me.data, nodes = me.nodes, edges = me.edges,
           snaps = me.snaps, total = me.total, limit = me.limit;
    int copies = me.copies;
    if (total <= limit)
        return 0;
    char t[32], l[32], m[32], d[32], n[32], e[32], a[192] = "";
    fmt_bytes(t, sizeof t, total);
    fmt_bytes(l, sizeof l, limit);
    fmt_bytes(m, sizeof m, model);
    fmt_bytes(d, sizeof d, data);
    fmt_bytes(n, sizeof n, nodes);
    fmt_bytes(e, sizeof e, edges);
    if (r->alg_bytes > 0) {   /* e.g. sgp's round graphs of a schedule file */
        char b[32];
        fmt_bytes(b, sizeof b, r->alg_bytes);
        snprintf(a, sizeof a, ", %s's own %s", r->alg->name, b);
    }
    if (snaps > 0) {
        char b[32];
        size_t k = strlen(a);
        fmt_bytes(b, sizeof b, snaps);
        snprintf(a + k, sizeof a - k, ", %zu target models %s",
                 run_i_target_snapshots(r, P), b);
    }
    char models[160];
    if (P > 0)
        snprintf(models, sizeof models, "models %d nodes x %zu parameters x %d copies = %s, ",
                 r->n_all, P, copies, m);
    else
        models[0] = '\0';   /* before the model exists */
    char b[32];
    fmt_bytes(b, sizeof b, me.base);
    snprintf(err->msg, sizeof err->msg,
             "%s: error: this run needs about %s of memory (process %s, %sdata %s, per-node "
             "state %s, topology %s%s), more than the limit of %s (%s); lower the size, set "
             "limits.memory_bytes, or run with --force", s->path, t, b, models, d, n, e, a, l,
             s->limit_memory_bytes > 0 ? "limits.memory_bytes" : "half this machine's memory");
    return -1;
}

/* The mean of a noise factor: steps follow one another, so over a long run
 * a node makes time / (base x mean) of them whatever the spread (the
 * truncated normal's mean is above 1; 1 is taken). */
static double noise_mean(const cl_noise_spec *ns)
{
    return ns->dist == CL_NOISE_UNIFORM ? 0.5 * (ns->low + ns->high) : 1.0;
}

static int covers(const int *nodes, size_t n_nodes, int i)
{
    if (!nodes)
        return 1;
    for (size_t k = 0; k < n_nodes; k++)
        if (nodes[k] == i)
            return 1;
    return 0;
}

/* Node i's fastest step on average: base x noise mean x, for each
 * slowdown process covering it, its smallest factor when below 1 (a
 * "slowdown" of 1e-12 is a speed-up that the base step time hides). */
static double fastest_step(const run_sim *r, int i, double *speedup)
{
    double f = 1;
    for (size_t k = 0; k < r->s->n_slowdowns; k++) {
        const cl_slowdown *d = &r->slows[k];
        double m = d->kind == CL_SLOW_TRACE ? INFINITY : d->factor;
        if (d->kind == CL_SLOW_TRACE) {
            for (size_t q = 0; q < d->n_points; q++)
                if (d->points[q].node == i)
                    m = fmin(m, d->points[q].value);
        } else if (!covers(d->nodes, d->n_nodes, i)) {
            continue;
        }
        if (m < 1)
            f *= m;
    }
    *speedup = f;
    return r->step_times[i] * noise_mean(&r->noise[i]) * f;
}

/* Expected environment events (switches of slowdown and fault processes)
 * over horizon seconds, or (rates_only) per second of the recurring
 * processes alone, and the JSON pointer of the largest contributor. */
static double env_events(const run_sim *r, double horizon, int rates_only, char *who,
                         size_t wn)
{
    const scn_scenario *s = r->s;
    double total = 0, top = -1;
    for (size_t pass = 0; pass < 2; pass++) {
        size_t m = pass ? s->n_faults : s->n_slowdowns;
        for (size_t k = 0; k < m; k++) {
            double rate = 0, fixed = 0, nodes;
            if (pass == 0) {
                const cl_slowdown *d = &r->slows[k];
                nodes = d->nodes ? (double)d->n_nodes : r->n_all;
                rate = d->kind == CL_SLOW_MARKOV ? 2 / (d->mean_slow_s + d->mean_normal_s)
                     : d->kind == CL_SLOW_PERIODIC ? 2 / d->period_s : 0;
                fixed = d->kind == CL_SLOW_TRACE ? (double)d->n_points : 2 * nodes;
            } else {
                const cl_fault *d = &r->faults[k];
                nodes = d->nodes ? (double)d->n_nodes : r->n_all;
                rate = d->kind == CL_FAULT_EXPONENTIAL ? 2 / (d->mtbf_s + d->mttr_s) : 0;
                fixed = d->kind == CL_FAULT_TRACE ? (double)d->n_points : 2 * nodes;
            }
            double ev = rates_only ? rate * nodes : rate > 0 ? rate * nodes * horizon : fixed;
            total += ev;
            if (ev > top) {
                top = ev;
                snprintf(who, wn, pass ? "/faults/events/%zu" : "/compute/slowdowns/%zu", k);
            }
        }
    }
    return total;
}

uint64_t run_i_eval_events(const run_sim *r)
{
    const scn_scenario *s = r->s;
    /* n_eval 0: every sample (run_data.c's pick_subset) */
    uint64_t train = r->timing_only ? 0 : r->n_eval ? r->n_eval : r->train.n;
    uint64_t test = r->timing_only ? 0 : r->n_test_eval ? r->n_test_eval : r->test.n;
    uint64_t samples = train + test;
    if (s->metrics_per_node)
        samples += (uint64_t)s->n_nodes * (1 + test);
    return samples;
}

double run_i_events_limit(const run_sim *r)
{
    return r->s->limit_events > 0 ? r->s->limit_events : RUN_MAX_EVENTS;
}

/* The events a run makes, estimated before it starts and refused above
 * limits.events (exit 2) unless limits.check_events is false (--force):
 *   steps: one event each, and each sends to the node's neighbours on
 *     average (a server protocol: one message up, one down), a message
 *     making one event per transmission that is lost (its arrival, or
 *     with fair NICs its NIC) and one per retransmission's timer, and one
 *     for its delivery (two with fair NICs: its NIC's and the delivery),
 *     with the sends a lossy link takes on average with retransmissions;
 *   protocol timers: the protocol's rate (alg_type.timer_rate, gossip's
 *     ticks) over the horizon;
 *   evaluations: one event each plus run_i_eval_events;
 *   environment switches: env_events over the horizon.
 * A protocol whose rounds send more per step (ring all-reduce: about 2n)
 * is counted low here; the budget, enforced while the run goes on
 * (run_i_event_budget), stops what the estimate missed. */
static int check_events(const run_sim *r, double steps, double horizon, double evals,
                        double env, scn_error *err)
{
    const scn_scenario *s = r->s;
    if (!s->limit_check_events)
        return 0;
    double per_step = r->n_all > s->n_nodes ? 2
                    : r->g && s->n_nodes > 0 ? 2.0 * (double)r->g->n_edges / s->n_nodes : 0;
    double sends = 1, worst = 0;
    for (size_t k = 0; k <= s->n_links; k++)
        worst = fmax(worst, r->classes[k].loss);
    if (worst > 0 && s->retransmit_timeout_s > 0)
        sends = (1 - pow(worst, s->retransmit_max + 1)) / (1 - worst);
    double msgs = steps * per_step * (2 * sends - (s->discipline == CL_NIC_FIFO));
    double ticks = r->alg->timer_rate ? r->alg->timer_rate(&r->ctx) * horizon : 0;
    double ev_evals = evals * (1 + (double)run_i_eval_events(r));
    double total = steps + msgs + ticks + ev_evals + env, limit = run_i_events_limit(r);
    if (total <= limit)
        return 0;
    /* the pointer of the largest part */
    const char *ptr = steps + msgs >= fmax(ticks, fmax(ev_evals, env))
                    ? (isinf(s->stop_time_s) ? "/stop/steps" : "/stop/time_s")
                    : ticks >= fmax(ev_evals, env) ? "/algorithm" : ev_evals >= env
                    ? "/metrics/every_s" : (s->n_faults ? "/faults" : "/compute/slowdowns");
    char m[768];
    snprintf(m, sizeof m, "this run would make about %.3g events (%.3g steps, %.3g message "
             "events, %.3g protocol timers, %.3g evaluations x %.0f, %.3g environment "
             "switches, over %g s of simulated time%s), more than the limit of %.3g "
             "(limits.events); shorten the run, evaluate less often, raise limits.events, "
             "or run with --force (the run then stops at the limit)", total, steps, msgs,
             ticks, evals, 1 + (double)run_i_eval_events(r), env, horizon,
             isinf(s->stop_time_s) ? ", the least time stop.steps can take" : "", limit);
    run_i_value_error(err, s, ptr, m);
    return -1;
}

/* Refuses a run that would take more than RUN_MAX_STEPS steps or as many
 * environment events in all (at a million events per second, eleven
 * days), or write more than the output limits: a stop time far beyond the
 * step time (e.g. step_time_s 1e-300, or a noise or slowdown factor of
 * 1e-12), an absurd stop.steps, a nanosecond Markov process, or a per-node
 * evaluation of 10^4 nodes every millisecond would otherwise look like a
 * hang or fill the disk.  Steps are counted at each worker's fastest
 * average pace, as if nothing ever waited; with stop.steps alone the run
 * is taken to last the least time those steps can take. */
int run_i_check_work(const run_sim *r, scn_error *err)
{
    const scn_scenario *s = r->s;
    double fastest = INFINITY, rate = 0, speedup = 1;
    int who = 0;
    for (int i = 0; i < s->n_nodes; i++) {
        double f, t = fastest_step(r, i, &f);
        rate += 1 / t;
        if (t < fastest) {
            fastest = t;
            speedup = f;
            who = i;
        }
    }
    char m[768], how[256] = "";
    if (fastest != r->step_times[who])
        snprintf(how, sizeof how, " (base %g s x noise mean %g x fastest slowdown factor %g)",
                 r->step_times[who], noise_mean(&r->noise[who]), speedup);
    if (s->stop_steps > 0 && (double)s->stop_steps * s->n_nodes > RUN_MAX_STEPS) {
        snprintf(m, sizeof m, "%ld steps per node on %d nodes is more than %.0e steps in all; "
                 "lower stop.steps", s->stop_steps, s->n_nodes, RUN_MAX_STEPS);
        run_i_value_error(err, s, "/stop/steps", m);
        return -1;
    }
    double steps = s->stop_time_s / fastest * s->n_nodes;
    if (s->stop_steps == 0 && !(steps <= RUN_MAX_STEPS)) {
        snprintf(m, sizeof m, "reaching %g s takes about %.3g steps at node %d's step time of "
                 "%g s%s (%d nodes), more than %.0e in all; lower stop.time_s or set "
                 "stop.steps", s->stop_time_s, steps, who, fastest, how, s->n_nodes,
                 RUN_MAX_STEPS);
        run_i_value_error(err, s, "/stop/time_s", m);
        return -1;
    }
    /* the horizon: the stop time, or the least time stop.steps can take */
    double least = s->stop_steps > 0 ? (double)s->stop_steps * s->n_nodes / rate : INFINITY;
    double horizon = fmin(s->stop_time_s, least);
    if (s->stop_steps > 0)
        steps = fmin(steps, (double)s->stop_steps * s->n_nodes);
    char ptr[64] = "";
    double env = env_events(r, horizon, 0, ptr, sizeof ptr);
    if (!(env <= RUN_MAX_STEPS)) {
        snprintf(m, sizeof m, "its switches make about %.3g environment events in all over "
                 "%g s of simulated time%s, more than %.0e; lengthen its mean times or "
                 "shorten the run", env, horizon,
                 isinf(s->stop_time_s) ? " (the least time stop.steps can take)" : "",
                 RUN_MAX_STEPS);
        run_i_value_error(err, s, ptr, m);
        return -1;
    }
    /* environment events between two steps of the cluster, against the
     * watchdog's limit: a correct run must never meet it.  Steps come at
     * the cluster's pace, or a round of whole-model messages apart when a
     * protocol waits for them and they take longer */
    double msg = (s->model_message_bytes > 0 ? s->model_message_bytes
                  : (double)r->ctx.P * s->bytes_per_param) / s->compression_ratio;
    double round = run_i_round_bound(r, msg, 0), gap = fmax(1 / rate, round);
    double per_step = env_events(r, 1.0, 1, ptr, sizeof ptr) * gap;
    if (per_step > (double)run_watchdog_limit(r->n_all) / RUN_ENV_MARGIN) {
        char why[160];
        if (round > 1 / rate)
            snprintf(why, sizeof why, "a round of %d whole-model messages, %.3g s", r->n_all,
                     round);
        else
            snprintf(why, sizeof why, "%.3g steps per second in all", rate);
        snprintf(m, sizeof m, "its switches make about %.3g environment events per step of "
                 "the cluster (%s), more than the watchdog's limit of %" PRIu64 " events "
                 "without a step / %d; lengthen its mean times", per_step, why,
                 run_watchdog_limit(r->n_all), RUN_ENV_MARGIN);
        run_i_value_error(err, s, ptr, m);
        return -1;
    }
    /* output: evaluations (at 0, every every_s and at the end) and rows */
    double evals = floor(horizon / s->metrics_every_s) + 2;
    if (isinf(s->stop_time_s) && evals > RUN_MAX_METRICS_ROWS) {
        snprintf(m, sizeof m, "must be >= %.10g: with stop.steps alone the run lasts at least "
                 "about %g s (%ld steps per node at the nodes' step times, nobody waiting), "
                 "and metrics.csv holds at most %d rows (a million evaluations and the last); "
                 "got %g", least / (RUN_MAX_METRICS_ROWS - 2), least, s->stop_steps,
                 RUN_MAX_METRICS_ROWS, s->metrics_every_s);
        run_i_value_error(err, s, "/metrics/every_s", m);
        return -1;
    }
    if (s->metrics_per_node && evals * s->n_nodes > RUN_MAX_NODE_ROWS) {
        snprintf(m, sizeof m, "node_metrics.csv would hold about %.4g rows (%.0f evaluations "
                 "x %d nodes), more than its limit of %d; raise metrics.every_s or turn "
                 "per_node off", evals * s->n_nodes, evals, s->n_nodes, RUN_MAX_NODE_ROWS);
        run_i_value_error(err, s, "/metrics/per_node", m);
        return -1;
    }
    if (s->output_trace && steps > RUN_MAX_TRACE_ROWS) {
        snprintf(m, sizeof m, "trace.csv would hold more than %.3g rows (one per step, "
                 "at least), more than its limit of %d; shorten the run or turn the trace "
                 "off", steps, RUN_MAX_TRACE_ROWS);
        run_i_value_error(err, s, "/output/trace", m);
        return -1;
    }
    return check_events(r, steps, horizon, evals, env, err);
}
