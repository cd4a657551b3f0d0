/* sim_engine.h -- the discrete-event core: a monotone radix queue of events
 * stored by value, popped in (time, seq) order, with lazy cancellation by
 * generation number, and a run loop with a time horizon.  It knows nothing
 * of ML, JSON or graphs.
 *
 * Time is double seconds of simulated time.  seq is taken from a global
 * counter when an event is scheduled, so events with equal times pop in the
 * order they were scheduled.  Nothing depends on pointer values.
 */
#ifndef SIM_ENGINE_H
#define SIM_ENGINE_H

#include <stddef.h>
#include <stdint.h>

typedef struct sim_engine sim_engine;

/* One event, stored by value in the queue (32 bytes).  kind and data are the
 * caller's; target names a cancellation target (0 .. n_targets-1) and gen is
 * that target's generation when the event was scheduled. */
typedef struct sim_event {
    double   time;   /* seconds of simulated time */
    uint64_t seq;    /* scheduling order, breaks ties in time */
    uint32_t kind;
    uint32_t target;
    uint32_t gen;
    uint32_t data;
} sim_event;

/* Why sim_engine_run returned. */
typedef enum sim_stop {
    SIM_STOP_HORIZON = 0, /* next event lies beyond the horizon; now == horizon */
    SIM_STOP_HANDLER,     /* the handler asked to stop (its nonzero return) */
    SIM_STOP_EMPTY        /* no event left before the horizon: a stall */
} sim_stop;

/* Handler: returns 0 to go on, nonzero to stop the run loop (the value is
 * kept, see sim_engine_stop_code). */
typedef int (*sim_handler)(void *ctx, const sim_event *ev);

/* Creates an engine with n_targets cancellation targets, all at generation 0,
 * and room for capacity_hint pending events (it grows as needed).  Returns
 * NULL when out of memory.  Destroy with sim_engine_destroy. */
sim_engine *sim_engine_create(uint32_t n_targets, size_t capacity_hint);
void        sim_engine_destroy(sim_engine *e);

/* Current simulated time in seconds (time of the last popped event). */
double   sim_engine_now(const sim_engine *e);
size_t   sim_engine_pending(const sim_engine *e);   /* includes cancelled ones not yet popped */
/* Live events delivered so far, by sim_engine_pop or to a run's handler;
 * cancelled events dropped on the way are not counted. */
uint64_t sim_engine_events_processed(const sim_engine *e);

/* Schedules an event at absolute time `at` (>= now; an earlier time is
 * clamped to now, a NaN is a bug).  The event is cancelled if target's
 * generation changes before it pops.  O(1) (an append; the record moves
 * down a few buckets before it pops, at most 63 times).  Returns 0, or -1
 * when out of memory. */
int sim_engine_schedule_at(sim_engine *e, double at, uint32_t kind,
                           uint32_t target, uint32_t data);

/* Cancels every pending event of `target` (lazily: they are dropped when they
 * reach the front of the queue).  O(1). */
void     sim_engine_cancel_target(sim_engine *e, uint32_t target);
uint32_t sim_engine_generation(const sim_engine *e, uint32_t target);
/* Adds k cancellation targets at generation 0 and returns the first one's
 * number (the others follow it), or UINT32_MAX when out of memory or past
 * 2^32 - 1 targets.  O(targets) (the array is reallocated). */
uint32_t sim_engine_add_targets(sim_engine *e, uint32_t k);
/* The seq the next scheduled event will get (events scheduled since have
 * larger ones). */
uint64_t sim_engine_next_seq(const sim_engine *e);

/* The caller's own cancellation test (e.g. a version number in data): 0
 * for a record that is dead although its generation is current.  Called
 * only by compaction, once per record of a current generation; a record it
 * rejects is dropped without being delivered, so the caller must account
 * for it then as if it had handled it.  NULL (the default): generations
 * alone decide. */
typedef int (*sim_keep)(void *ctx, const sim_event *ev);
void sim_engine_set_keep(sim_engine *e, sim_keep keep, void *ctx);

/* Reports k pending records that just became dead (a cancel_target, or a
 * record the keep test will reject).  Once the reports since the last
 * compaction pass half the pending records, with at least SIM_COMPACT_MIN
 * pending, sim_engine_compact runs.  Amortised O(1) per record. */
#define SIM_COMPACT_MIN 4096
void sim_engine_note_stale(sim_engine *e, size_t k);
/* Drops every dead record now (each bucket filtered in place); the order
 * in which events pop is unchanged.  Returns the records dropped.  O(n). */
size_t   sim_engine_compact(sim_engine *e);
uint64_t sim_engine_compactions(const sim_engine *e);

/* Pops the earliest live event into *ev and advances now to its time.
 * Returns 1, or 0 when no live event is left. */
int sim_engine_pop(sim_engine *e, sim_event *ev);

/* Runs until the handler returns nonzero, the next event lies after
 * `horizon` (seconds; INFINITY for none), or no event is left.  An event
 * exactly at the horizon runs.  On SIM_STOP_HORIZON now becomes the horizon,
 * unless that would move time backwards. */
sim_stop sim_engine_run(sim_engine *e, double horizon, sim_handler h, void *ctx);
int      sim_engine_stop_code(const sim_engine *e);  /* handler's nonzero return; 0 if the last run stopped otherwise */

/* The one out-of-memory policy of a run in progress: a handler deep in
 * the event loop that cannot allocate (a message slot, a payload buffer,
 * a protocol's mailbox) has no caller it could hand an error to without
 * unwinding the loop, so it prints "dtsim: error: out of memory" on
 * stderr and exits with status 1 (the exit status of a failed run).
 * Everything before the loop starts returns errors instead. */
_Noreturn void sim_die_oom(void);

#endif
