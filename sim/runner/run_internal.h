/* run_internal.h -- what the runner's files share and nobody else sees:
 * the run_sim record (what run_prepare builds and run_execute drives), the
 * stages of preparation and the output writers.  Only sim/runner/ includes it.
 */
#ifndef RUN_INTERNAL_H
#define RUN_INTERNAL_H

#include "run.h"
#include "alg_host.h"
#include "cl_cluster.h"
#include "mdl.h"
#include "mdl_optim.h"
#include "sim_engine.h"
#include "sim_rng.h"
#include "trn.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <gsl/gsl_cblas.h>
#include <gsl/gsl_cdf.h>
#include <gsl/gsl_randist.h>


enum { EV_METRICS = CL_EV_USER, EV_DETECT };
enum { STOP_STEPS = 1, STOP_TARGET_LOSS, STOP_TARGET_ACCURACY, STOP_STALL, STOP_INTERRUPT,
       STOP_DIVERGED, STOP_NO_PROGRESS, STOP_FROZEN, STOP_LIMIT, STOP_FLOOD };

typedef struct run_data_entry run_data_entry;

struct run_sim {
    const scn_scenario *s;
    mdl_dataset   train, test;  /* owned, or borrowed from data_entry */
    run_data_cache *data_cache; /* where train and test come from; NULL: loaded here */
    run_data_entry *data_entry; /* the borrowed entry, or NULL */
    mdl_partition part;
    mdl_model    *model;
    topo_graph   *g;
    const alg_type *alg;
    int           timing_only;  /* model "none": no parameters, data or evaluation */
    alg_ctx       ctx;
    int           n_all;      /* workers and the algorithm's servers */
    int           threads;    /* of the model math in this execution (run_execute) */
    char         *paths[ALG_MAX_PARAMS];  /* resolved file parameters (ctx.path) */
    double        alg_bytes;  /* the protocol's own heap (alg_type.memory_bytes) */
    double       *step_times;
    cl_noise_spec *noise;
    double       *up_Bps, *down_Bps;
    cl_slowdown  *slows;
    cl_fault     *faults;
    cl_point     *points;      /* every trace's points, converted */
    cl_link_class *classes;    /* 0: the default link; k + 1: links[k] */
    cl_link_rule *rules;
    cl_window    *windows;     /* every class's outages */
    int          *server_lists; /* rules' node lists that name servers, workers + servers */
    size_t       *eval_idx;
    size_t        n_eval;
    size_t       *test_idx;     /* seeded test subset, or NULL for all */
    size_t        n_test_eval;
    double       *avg;
    mdl_partition_stats pstats;

    /* per execution */
    sim_engine   *eng;
    cl_cluster   *cl;
    trn_trainer  *trn;
    const run_options *opt;
    FILE         *mf;
    FILE         *nmf;          /* node_metrics.csv, or NULL */
    FILE         *tf;          /* trace.csv, or NULL */
    out_trace_writer trace;    /* trace.csv's rows on their way to tf */
    out_metrics_row last;
    int           have_last;
    long          mf_last, nmf_last;   /* where the last row starts in mf and nmf, or -1 */
    uint64_t      metrics_k, stop_steps_total;
    char          diverged[512];  /* why the run diverged, or empty */
    /* watchdog: events at the current instant and message/timer events
     * since the last step; per-node counts once past half the limit */
    uint64_t      wd_limit, wd_instant, wd_nostep, wd_steps;
    double        wd_time;
    double        wd_tick;      /* the last protocol timer that counted as progress */
    uint64_t     *wd_hits;
    int           wd_counting;
    char          stuck[1024];
    /* training that stopped: no step completed anywhere for longer than
     * frozen_bound_s (see run_frozen_bound) */
    double        frozen_bound_s, last_step_s;
    /* the latest declaration of a failure the detector has scheduled
     * before the run's time stop, for a protocol that reacts to failures:
     * training is not frozen before it has had the bound to react */
    double        decl_due_s;
    uint64_t      last_steps;
    /* the failure detector: declared-failed flags, when each node last went
     * down, detection events not yet handled, the delay */
    unsigned char *failed;
    double       *down_since;
    uint64_t      detect_pending;
    double        detect_s;
    /* time to target (run_target.c): the targets, how many are not yet
     * reached, the kept models of this evaluation period (snap_n of
     * snap_cap, one change instant in snap_stride of the snap_count so
     * far, the last at snap_last_t), whether an event at snap_now may have
     * changed parameters, and the previous evaluation's instant */
    run_target    tg[RUN_MAX_TARGETS];
    int           n_tg, tg_pending, tg_have_prev, snap_dirty;
    double       *snap, *snap_t;
    size_t       *snap_f;     /* each kept model's stage (run_i_eval_stage) */
    size_t        snap_cap, snap_n;
    uint64_t      snap_stride, snap_count;
    double        snap_now, snap_last_t, tg_prev_s;
    /* output written so far, and the limits (run_i_output_limit) */
    uint64_t      rows_metrics, rows_nodes, rows_trace;
    uint64_t      max_metrics_rows, max_node_rows, max_trace_rows;
    /* the event budget (run_i_event_budget): evaluations' extra count so
     * far (one per sample evaluated and per node row), the budget */
    uint64_t      eval_events, max_events;
    /* the memory model (run_memory.c): every node's peak bytes so far, NULL
     * when the scenario does not report memory */
    double       *mem_peak;
    double       *mem_cap;      /* n_all capacities (0: none), with mem_peak */
};

/* run_prepare.c: "PATH: PTR: error: MSG" into err (a bad value of the
 * scenario, at JSON pointer ptr). */
void run_i_value_error(scn_error *err, const scn_scenario *s, const char *ptr, const char *msg);
/* A path as written in the scenario: absolute, or relative to the scenario
 * file's directory; dir (may be NULL) goes between.  Writes to out (size
 * n), cut short when too long (the open then fails and says so). */
void run_i_data_path(const scn_scenario *s, const char *dir, const char *name, char *out,
                     size_t n);

/* run_data.c: train, test, part, pstats, model, eval_idx and test_idx of
 * r (nothing for the timing-only model).  Returns 0, or -1 with err set. */
int run_i_build_data(run_sim *r, scn_error *err);
/* run_data.c: the training and test sets of r's scenario as loaded or
 * generated, cut to size and scaled, into train and test (the caller's,
 * finished with mdl_dataset_fini even on failure); *check_bytes receives
 * the data size the load's own memory check used (0: none).  0, or -1
 * with err set. */
int run_i_data_acquire(run_sim *r, mdl_dataset *train, mdl_dataset *test, double *check_bytes,
                       scn_error *err);
/* run_data_cache.c: r->train and r->test borrowed from c's entry for r's
 * scenario, acquired into it first when there is none (run_i_data_release
 * gives it back).  0, or -1 with err set. */
int run_i_data_from_cache(run_sim *r, run_data_cache *c, scn_error *err);
void run_i_data_release(run_sim *r);

/* run_hetero.c: step_times (allocated by the caller, n_all), noise, NIC
 * capacities, slowdowns, faults, their points, link classes, rules and
 * windows of r.  Returns 0, or -1 when out of memory. */
int run_i_build_heterogeneity(run_sim *r);

/* The servers named in network.nics and network.links against the
 * protocol's `servers` (n .. n + servers - 1): a located error when the
 * protocol has none, "server" is ambiguous or server:K does not exist.
 * Returns 0 or -1 with err set. */
int run_i_check_servers(const run_sim *r, int servers, scn_error *err);

/* run_limits.c: 0, or -1 with err set when the memory estimate exceeds the
 * limit.  Before the model exists P is 0 and only the nodes, the topology
 * and generated data count; data_bytes > 0 overrides the data's size. */
int run_i_check_memory(const run_sim *r, size_t P, double data_bytes, scn_error *err);
/* run_limits.c: the memory messages in flight may hold together (bytes;
 * the memory limit less the run's estimate, at least limit / 8; 0 for no
 * bound when the limit is unknown). */
double run_i_queue_bound(const run_sim *r, size_t P);
/* The memory estimate of the whole run as the check counts it (run.json's
 * memory_estimate_bytes), in bytes. */
double run_i_memory_estimate(const run_sim *r);
/* run_watch.c: STOP_FLOOD (r->stuck set) once the messages in flight
 * passed their bound (cl_set_message_bound). */
int run_i_flood(run_sim *r);
/* 0, or -1 with err set when the run would take more than RUN_MAX_STEPS
 * steps in all. */
int run_i_check_work(const run_sim *r, scn_error *err);
/* run_limits.c: what one evaluation adds to the event count beyond its
 * own event: the samples it evaluates (train, test, and test again per
 * node with per_node) and its node_metrics.csv rows. */
uint64_t run_i_eval_events(const run_sim *r);
/* run_limits.c: the event budget, limits.events or RUN_MAX_EVENTS. */
double run_i_events_limit(const run_sim *r);

/* The topology statistics of run.json (run_topo.c): bounded or full as
 * output.topology_stats says, through the cache in cache_dir (NULL: none).
 * 0, or -1 out of memory. */
int run_i_topo_stats(const run_sim *r, const char *cache_dir, topo_stats *st);

/* run_eval.c: the metrics.csv row of the average model now (evaluate),
 * writing it and node_metrics.csv (record), and whether a row is no
 * longer finite (metrics_diverged: 1, with r->diverged set). */
void run_i_evaluate(run_sim *r, out_metrics_row *row);
void run_i_record(run_sim *r, const out_metrics_row *row);
/* The last recorded row (same instant) replaced by row in both files. */
void run_i_record_again(run_sim *r, const out_metrics_row *row);
int  run_i_metrics_diverged(run_sim *r, const out_metrics_row *row);

/* run_eval.c: the workers' average model into r->avg (O(n P)). */
/* The stage the evaluations of the average (or the protocol's) model
 * run (block heads: the network of that stage, trn_evaluate_at): the
 * largest frozen count of any node, servers included (0 without
 * freezing). */
size_t run_i_eval_stage(const run_sim *r);
void run_i_average(run_sim *r);

/* run_target.c: the targets of the scenario, ready for one execution
 * (begin: 0, or -1 out of memory; end frees); the models kept for a run
 * of P parameters (0 without targets); after each event is taken from
 * the queue, before it is handled (event); at each evaluation, after the
 * row is computed (eval: STOP_TARGET_LOSS or STOP_TARGET_ACCURACY when a
 * stop target is reached, else 0). */
int    run_i_targets_begin(run_sim *r);
void   run_i_targets_end(run_sim *r);
size_t run_i_target_snapshots(const run_sim *r, size_t P);
void   run_i_targets_event(run_sim *r, const sim_event *ev);
int    run_i_targets_eval(run_sim *r, const out_metrics_row *row);

/* run_watch.c: the watchdog after each event (nonzero: stop, r->stuck
 * set) and its reset; the frozen-training bound of the run and the check
 * after each event (nonzero: no step for longer than the bound); the
 * stall report of a stop code (STOP_STALL or STOP_FROZEN) into res. */
void   run_i_watchdog_reset(run_sim *r);
int    run_i_watchdog(run_sim *r, const sim_event *ev);
/* The worst round a protocol here can need with messages of msg_bytes
 * (the slowest step at its tail noise and largest slowdown, unless
 * with_step is 0, n_all such messages through the slowest link or NIC,
 * the largest latency): a correct run completes some step at least this
 * often (seconds). */
double run_i_round_bound(const run_sim *r, double msg_bytes, int with_step);
double run_i_frozen_bound(const run_sim *r);
int    run_i_frozen(run_sim *r);
void   run_i_describe_stall(run_sim *r, run_result *res, int code);
/* The output limits after each event: STOP_LIMIT (r->stuck set) when
 * trace.csv has reached its limit, or when the next evaluation would take
 * metrics.csv (stop.steps alone) or node_metrics.csv past theirs; else 0.
 * run_i_limits_reset sets the counts to 0 and the limits from opt. */
int    run_i_output_limit(run_sim *r, const sim_event *ev);
/* run_watch.c: STOP_LIMIT (r->stuck set) once the events handled plus the
 * evaluations' extra count reach the budget.  O(1). */
int    run_i_event_budget(run_sim *r);
void   run_i_limits_reset(run_sim *r);

/* run_output.c: nodes.csv and run.json, written to temporary names and
 * renamed.  Return 0, or -1 with err set. */
/* run_memory.c: the freeze section against the model and protocol, and
 * every node's memory at its first step against its capacity (0, or -1
 * with err set); per execution: begin (-1 when out of memory), each step
 * begun, a node's nodes.csv columns, end. */
int  run_i_check_freeze(const run_sim *r, scn_error *err);
/* The layers the criterion may freeze: freeze.max_layers, or every
 * hidden layer of the MLP (0 for other models). */
size_t run_i_freeze_max(const run_sim *r);
int  run_i_memory_begin(run_sim *r);
void run_i_memory_step(run_sim *r, int node);
void run_i_memory_row(const run_sim *r, int node, out_node_row *row);
void run_i_memory_end(run_sim *r);

int run_i_write_nodes(run_sim *r, const char *dir, double end, char *err, size_t es);
int run_i_write_alg_nodes(run_sim *r, const char *dir, char *err, size_t es);
int run_i_write_run_json(run_sim *r, const char *dir, const run_result *res, char *err,
                         size_t es);

#endif
