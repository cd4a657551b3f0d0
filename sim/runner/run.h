/* run.h -- one simulation from a loaded scenario: builds the data, model,
 * topology, engine, cluster and algorithm the scenario describes, runs the
 * event loop to the stop condition, evaluates the average model every
 * metrics.every_s seconds of simulated time and writes metrics.csv,
 * nodes.csv and run.json.  The glue between modules; it holds no model,
 * network or protocol logic of its own.
 */
#ifndef RUN_H
#define RUN_H

#include <signal.h>
#include <stddef.h>
#include <stdint.h>
#include "scn.h"
#include "out.h"
#include "topo.h"

typedef struct run_sim run_sim;

typedef enum run_status {
    RUN_OK = 0,       /* a stop condition was reached */
    RUN_STALLED = 1,  /* no event left before the stop condition */
    RUN_INTERRUPTED = 2, /* *run_options.interrupt became nonzero */
    RUN_DIVERGED = 3, /* a loss or an evaluated metric became NaN or infinite */
    RUN_NO_PROGRESS = 4, /* the watchdog: events without simulated progress */
    RUN_LIMIT = 5,    /* an output limit (RUN_MAX_*_ROWS) was reached */
    RUN_FLOOD = 6     /* the uplink backlogs outgrew the memory left (a
                       * protocol sending faster than its links drain) */
} run_status;

/* "ok", "stalled", "interrupted", "diverged", "no_progress", "limit", "flood": the status
 * word of run.json and summary.csv. */
const char *run_status_name(run_status st);

struct alg_type;

typedef struct run_options {
    const char *out_dir;   /* NULL: write no files */
    /* NULL: the scenario's algorithm.  Tests use it to run protocols that
     * are not in the registry (e.g. one built to stall) or wrappers of a
     * registered one: a replacement whose parameter table is the scenario
     * protocol's keeps the scenario's values, any other runs with its own
     * defaults. */
    const struct alg_type *algorithm;
    /* Hooks for programs and tests; all may be NULL.  init_params runs
     * after the model's own initialisation, once per node. */
    void (*init_params)(void *ctx, int node, double *params, size_t n_params);
    void (*on_metrics)(void *ctx, const out_metrics_row *row);
    /* Called every RUN_PROGRESS_EVENTS events with the simulated time
     * reached (seconds) and the events processed so far. */
    void (*on_progress)(void *ctx, double sim_time_s, uint64_t events);
    void *hook_ctx;
    /* NULL, or a flag a signal handler sets: the run then ends after the
     * event in hand, evaluates once more and writes everything measured so
     * far, with status "interrupted" in run.json. */
    const volatile sig_atomic_t *interrupt;
    /* The watchdog's limit (see run_watchdog_limit); 0: the default.
     * Tests set a small one. */
    uint64_t watchdog_events;
    /* The output limits while the run goes on (RUN_MAX_*_ROWS); 0: the
     * default.  Tests set small ones. */
    uint64_t max_metrics_rows, max_node_rows, max_trace_rows;
    /* The event budget (limits.events, RUN_MAX_EVENTS) while the run goes
     * on; 0: the scenario's.  Tests set a small one. */
    uint64_t max_events;
    /* What built the binary and invoked the run, for run.json's
     * "git_commit" and "provenance"; NULL: "unknown" and null. */
    const out_provenance *provenance;
    /* Threads of the model math (steps and evaluations; see trn_config):
     * 0 or 1 one thread, N > 1 N threads, -N up to N: N when a step costs
     * at least RUN_THREADS_MIN_FLOPS, else one (the CLI's default, with
     * N the cores).  Outputs are byte-identical for every value. */
    int threads;
    /* A folder where the topology's statistics are cached across runs
     * (run_topo.c; a sweep passes SWEEP/.topo-cache); NULL: none. */
    const char *topo_cache_dir;
} run_options;

/* The watchdog ends a run with status RUN_NO_PROGRESS (exit 1) when an
 * algorithm has a bug that keeps the queue busy without progress: more
 * than `limit` events handled at one simulated instant, or more than
 * `limit` message and timer events since the last step completed anywhere.
 * The default limit is RUN_WATCHDOG_BASE + RUN_WATCHDOG_PER_NODE * nodes
 * (servers included): 10^7 for a small cluster, orders of magnitude above
 * what a correct protocol needs per step (a ring all-reduce round is about
 * 4 n message events per node's step); see docs/reliability.md. */
#define RUN_WATCHDOG_BASE     10000000u
#define RUN_WATCHDOG_PER_NODE 10000u
uint64_t run_watchdog_limit(int n_all);

/* A step's floating-point operations (the model's per sample times the
 * batch) from which run_options.threads = -N uses N threads: the 784-10
 * softmax at batch 32 costs 1.0e6 (gains), a 16-feature, 4-class one 8.2e3 (loses). */
#define RUN_THREADS_MIN_FLOPS 5e5

/* run_prepare refuses a run that would need more steps than this in all
 * (stop.steps x nodes, or stop.time_s / the fastest step time x nodes). */
#define RUN_MAX_STEPS 1e12

/* The work a run may do, limits.events' default (docs/reliability.md,
 * "Bounds every run obeys"): engine events, each evaluation counting one
 * more per sample it evaluates and per node_metrics.csv row it writes.
 * run_prepare refuses a run whose estimate exceeds it (exit 2; --force
 * skips the estimate); a run whose count reaches it stops with status
 * RUN_LIMIT (exit 1), its outputs written.  Counted, not timed: the
 * outputs stay byte-identical.  At the 0.3 to 1.1 million events per
 * second measured here, 15 to 55 minutes. */
#define RUN_MAX_EVENTS 1e9

/* Output limits (docs/reliability.md): metrics.csv rows (a million
 * evaluations and the final one), node_metrics.csv and trace.csv rows
 * (about half a gigabyte each).  Checked before the run from its
 * estimate (run_prepare, exit 2) and enforced while it goes on: the run
 * then ends with status RUN_LIMIT (exit 1) and its outputs written. */
#define RUN_MAX_METRICS_ROWS 1000001
#define RUN_MAX_NODE_ROWS    10000000
#define RUN_MAX_TRACE_ROWS   10000000

/* Environment events (slowdown and fault switches) per step of the whole
 * cluster may reach at most the watchdog's limit / this (run_prepare
 * refuses more): they count towards the watchdog, and a correct run must
 * never meet it. */
#define RUN_ENV_MARGIN 10

#define RUN_PROGRESS_EVENTS 4096

/* A run in which no node completes a step for longer than this many times
 * its worst round (the slowest step at the noise factor one step in
 * 1/RUN_FROZEN_TAIL exceeds and the largest slowdown, plus one whole-model
 * message per node through the slowest NIC or link, plus the largest
 * latency) has stopped training: it ends as stalled, whatever the stop
 * condition (docs/reliability.md). */
#define RUN_FROZEN_FACTOR 10.0
#define RUN_FROZEN_TAIL   1e-6

/* One target's outcome (docs/outputs.md, "Time to target"): the stop
 * targets first (train loss, then test accuracy), then metrics.targets in
 * the scenario's order.  The evaluated model's metric went from not
 * reached at lo_s to reached at time_s, two instants at which parameters
 * changed (or evaluations) with `unchecked` such instants between them:
 * when 0, time_s is exact (err_s 0); else the crossing is one of those
 * instants, err_s = time_s - lo_s. */
#define RUN_MAX_TARGETS (SCN_MAX_TARGETS + 2)
typedef struct run_target {
    scn_target_metric metric;
    double   value;
    int      stop;         /* stop.target_*: the run ends at the evaluation that finds it */
    double   time_s;       /* seconds; INFINITY: never reached */
    double   lo_s;         /* -INFINITY: reached at the first evaluation; NAN: never */
    double   err_s;        /* 0: exact; NAN: never reached */
    uint64_t unchecked;
    int      evaluations;  /* of the metric, to place it */
} run_target;

#define RUN_MAX_STATS 24   /* figures of run.json's algorithm_stats */

typedef struct run_result {
    run_status status;
    const char *stop_reason;  /* "time", "steps", "target_loss",
                                 "target_accuracy", "stalled",
                                 "interrupted", "diverged", "no_progress",
                                 "limit" */
    char     message[8192];   /* the stall, divergence or watchdog report,
                                 or empty */
    double   sim_time_s;
    uint64_t events;
    double   wall_s, cpu_s;   /* of the event loop (cpu_s: its thread and the workers) */
    int      threads;         /* of the model math (run_options.threads, 1 after a replay) */
    double   math_cpu_s;      /* CPU inside step and evaluation jobs; NaN on one thread */
    out_metrics_row last;     /* the final evaluation */
    topo_stats topo;
    size_t   n_params;
    int      n_stats;           /* the algorithm's own figures (run.json) */
    const char *stat_keys[RUN_MAX_STATS];
    double   stat_values[RUN_MAX_STATS];
    int      n_targets;
    run_target targets[RUN_MAX_TARGETS];
} run_result;

/* Builds everything and checks what the loader cannot: algorithm names
 * against the registry, graph connectivity, the algorithm's needs (e.g.
 * adpsgd's bipartite graph).  Returns NULL with err set (in the scenario's
 * error form; exit status 2) on a bad scenario, or on out of memory. */
run_sim *run_prepare(const scn_scenario *s, scn_error *err);
void     run_destroy(run_sim *r);

/* Prepared data sets kept across runs (run_data_cache.c): runs prepared
 * with run_prepare_cached borrow the training and test sets of an earlier
 * run whose data keys match (source, files, sizes, scaling, and the data
 * seed where the source draws with it) instead of loading them again;
 * partitions, evaluation subsets and models are still each run's own, so
 * a run is the same whether its data came from the cache or not.  Entries
 * beyond max_bytes are dropped, oldest first, when no run holds them.
 * The cache outlives every run prepared from it. */
typedef struct run_data_cache run_data_cache;
run_data_cache *run_data_cache_create(double max_bytes);
void            run_data_cache_destroy(run_data_cache *c);
/* How many times the cache loaded or generated data (its misses). */
size_t          run_data_cache_loads(const run_data_cache *c);
/* run_prepare with the data from c (NULL: run_prepare). */
run_sim *run_prepare_cached(const scn_scenario *s, run_data_cache *c, scn_error *err);

/* The scenario's graph alone, built as run_prepare builds it (same seed,
 * same checks of the graph itself: connectivity, the kind's parameters)
 * but without model or the algorithm's own checks, and without data
 * except for a learned topology, which is learned from the partition's
 * label proportions (the data is built and freed): what `dtsim topo`
 * describes.  NULL with err set; the caller topo_destroys it. */
topo_graph *run_topology(const scn_scenario *s, scn_error *err);

/* "algorithm_params": every parameter of the prepared run's protocol
 * with its value (the default where the scenario gives none), as run.json
 * records it; j is the caller's, inside an object. */
void run_algorithm_params_json(const run_sim *r, out_json *j);

/* Topology statistics of a prepared run (degrees, diameter, spectrum). */
const topo_graph *run_graph(const run_sim *r);

/* Runs to the stop condition and writes the outputs when opt->out_dir is
 * set.  Returns 0 (see res->status for a stall), or -1 with err set when an
 * output could not be written. */
int run_execute(run_sim *r, const run_options *opt, run_result *res,
                char *err, size_t err_size);

#endif
