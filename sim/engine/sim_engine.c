/* sim_engine.c -- the event queue and run loop: a binary min-heap of
 * sim_event records stored by value in one array, ordered by (time, seq),
 * with lazy cancellation through one generation number per target.  The
 * array doubles when full and never shrinks, so scheduling allocates nothing
 * in steady state.  Cancelled records stay in the heap until they reach its
 * top, unless the caller reports them (sim_engine_note_stale): once the
 * reported ones pass half the heap, one O(n) pass drops every cancelled
 * record and rebuilds the heap, so they never outnumber the live ones for
 * long.  This file does not interpret events (kind, target and
 * data belong to the caller), knows no stop condition other than a time
 * horizon, and does not report stalls: it says SIM_STOP_EMPTY and lets the
 * caller explain who was waiting for what.
 */
#include "sim_engine.h"

#include <assert.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The first growth of an engine created with a tiny hint; small enough not
 * to matter, large enough to skip the first few doublings. */
#define MIN_CAPACITY 16

#define CACHE_LINE 64

/* Below this many pending events the heap sits in L1/L2 and prefetching
 * only costs instructions (measured: a few percent at 10^3 pending). */
#define PREFETCH_MIN 4096

/* The cache-line layout below relies on two records per line. */
_Static_assert(sizeof(sim_event) == 32, "sim_event must stay 32 bytes");

struct sim_engine {
    /* heap[0] is the earliest; children of i are 2i+1 and 2i+2.  heap is
     * base + 1 with base cache-line aligned, so with 32-byte records the two
     * children of any node share one cache line: one miss per level of a
     * sift-down instead of two. */
    sim_event *heap;
    sim_event *base;
    size_t     n;         /* pending events, cancelled ones included */
    size_t     cap;       /* records heap can hold */
    uint32_t  *gen;       /* current generation of each target */
    uint32_t   n_targets;
    uint64_t   next_seq;
    uint64_t   processed; /* live events popped */
    size_t     stale;     /* reported cancelled since the last compaction (an
                             over-count: some have popped since) */
    uint64_t   compactions;
    sim_keep   keep;      /* the caller's own cancellation test, or NULL */
    void      *keep_ctx;
    double     now;
    int        stop_code;
};

/* (time, seq) as one 128-bit unsigned key: every time is >= 0 (at is
 * clamped to now, now starts at 0), and the bits of a non-negative double
 * order as it does, once -0.0 (which equals 0.0) has lost its sign bit.
 * One compare of two 128-bit integers (cmp, sbb) replaces two compares of
 * doubles and one of integers: about a third of a sift's instructions
 * (bench/RESULTS.md, "Start-up and the event path").  No branch: the
 * comparison of random times is unpredictable. */
__extension__ typedef unsigned __int128 key128;

static inline key128
key_of(const sim_event *a)
{
    uint64_t tb;
    memcpy(&tb, &a->time, sizeof tb);
    return ((key128)(tb & 0x7fffffffffffffffu) << 64) | a->seq;
}

static inline int
earlier(const sim_event *a, const sim_event *b)
{
    return key_of(a) < key_of(b);
}

/* Places ev in the hole at i, moving parents down until ev's parent is
 * earlier.  One copy per level instead of a swap. */
static inline void
sift_up(sim_event *heap, size_t i, sim_event ev)
{
    while (i > 0) {
        size_t p = (i - 1) / 2;
        if (!earlier(&ev, &heap[p]))
            break;
        heap[i] = heap[p];
        i = p;
    }
    heap[i] = ev;
}

/* Removes heap[0] bottom-up (Wegener): the hole at the top sinks to a
 * leaf along the earlier child of each level, one comparison a level, and
 * the last record then rises from that leaf.  The last record is usually
 * among the latest events (a simulation schedules into the future), so
 * it rises zero or one level, where the classic sift-down compares it at
 * every level on the way down.  The order in which events pop is that of
 * (time, seq), a total order, whatever the heap's shape. */
static inline void
remove_top(sim_engine *e)
{
    sim_event *heap = e->heap;
    size_t n = --e->n;
    if (n == 0)
        return;
    int prefetch = n >= PREFETCH_MIN;
    size_t i = 0;
    for (;;) {
        size_t c = 2 * i + 1;
        if (c >= n)
            break;
        /* A large heap misses cache on nearly every level.  Asking for the
         * great-grandchildren now (four lines, eight records) overlaps
         * those misses with the work of the next three levels.  With the
         * layout above this gave 1.3-1.5x the rate at 10^5 pending and
         * 2.2-2.7x at 10^6 (bench/RESULTS.md: B against C). */
        if (prefetch && 8 * i + 14 < n) {
            const sim_event *g = &heap[8 * i + 7];
            __builtin_prefetch(g);
            __builtin_prefetch(g + 2);
            __builtin_prefetch(g + 4);
            __builtin_prefetch(g + 6);
        }
        if (c + 1 < n)
            c += (size_t)earlier(&heap[c + 1], &heap[c]);
        heap[i] = heap[c];
        i = c;
    }
    sift_up(heap, i, heap[n]);   /* heap[n], the last record, was not moved */
}

static inline int
is_live(const sim_engine *e, const sim_event *ev)
{
    return ev->gen == e->gen[ev->target];
}

/* Points heap at room for cap records, keeping the layout described in
 * struct sim_engine.  realloc cannot promise the alignment, so this is
 * aligned_alloc and a copy; with doubling, each record is copied O(1) times
 * on average. */
static int
reserve(sim_engine *e, size_t cap)
{
    if (cap > SIZE_MAX / sizeof(sim_event) - 4)
        return -1;
    size_t bytes = (cap + 1) * sizeof(sim_event);
    bytes = (bytes + CACHE_LINE - 1) / CACHE_LINE * CACHE_LINE;
    sim_event *base = aligned_alloc(CACHE_LINE, bytes);
    if (base == NULL)
        return -1;
    if (e->n > 0)
        memcpy(base + 1, e->heap, e->n * sizeof(sim_event));
    free(e->base);
    e->base = base;
    e->heap = base + 1;
    e->cap = cap;
    return 0;
}

static int
grow(sim_engine *e)
{
    if (e->cap > SIZE_MAX / 2)
        return -1;
    return reserve(e, e->cap < MIN_CAPACITY / 2 ? MIN_CAPACITY : 2 * e->cap);
}

sim_engine *
sim_engine_create(uint32_t n_targets, size_t capacity_hint)
{
    sim_engine *e = calloc(1, sizeof(*e));
    if (e == NULL)
        return NULL;
    /* calloc(0) may legitimately return NULL; one spare slot avoids
     * mistaking that for a failure. */
    e->gen = calloc(n_targets > 0 ? n_targets : 1, sizeof(*e->gen));
    if (e->gen == NULL)
        goto out_free_engine;
    e->n_targets = n_targets;
    if (capacity_hint > 0 && reserve(e, capacity_hint) != 0)
        goto out_free_gen;
    return e;

out_free_gen:
    free(e->gen);
out_free_engine:
    free(e);
    return NULL;
}

void
sim_engine_destroy(sim_engine *e)
{
    if (e == NULL)
        return;
    free(e->base);
    free(e->gen);
    free(e);
}

double
sim_engine_now(const sim_engine *e)
{
    return e->now;
}

size_t
sim_engine_pending(const sim_engine *e)
{
    return e->n;
}

uint64_t
sim_engine_events_processed(const sim_engine *e)
{
    return e->processed;
}

int
sim_engine_schedule_at(sim_engine *e, double at, uint32_t kind,
                       uint32_t target, uint32_t data)
{
    assert(!isnan(at));
    assert(target < e->n_targets);
    if (e->n == e->cap && grow(e) != 0)
        return -1;
    /* Written so that a NaN slipping past a release build also lands on
     * now rather than breaking the heap order for every later event. */
    if (!(at >= e->now))
        at = e->now;
    sim_event ev = {
        .time = at,
        .seq = e->next_seq++,
        .kind = kind,
        .target = target,
        .gen = e->gen[target],
        .data = data,
    };
    sift_up(e->heap, e->n++, ev);
    return 0;
}

void
sim_engine_cancel_target(sim_engine *e, uint32_t target)
{
    assert(target < e->n_targets);
    /* Wraps after 2^32 cancellations of one target; an event would have to
     * stay pending through all of them to be revived. */
    e->gen[target]++;
}

uint32_t
sim_engine_generation(const sim_engine *e, uint32_t target)
{
    assert(target < e->n_targets);
    return e->gen[target];
}

uint32_t
sim_engine_add_targets(sim_engine *e, uint32_t k)
{
    uint32_t first = e->n_targets;
    if (k == 0)
        return first;
    if (k >= UINT32_MAX - first)
        return UINT32_MAX;
    uint32_t *g = realloc(e->gen, (size_t)(first + k) * sizeof *g);
    if (g == NULL)
        return UINT32_MAX;
    memset(g + first, 0, (size_t)k * sizeof *g);
    e->gen = g;
    e->n_targets = first + k;
    return first;
}

uint64_t
sim_engine_next_seq(const sim_engine *e)
{
    return e->next_seq;
}

int
sim_engine_pop(sim_engine *e, sim_event *ev)
{
    while (e->n > 0) {
        sim_event top = e->heap[0];
        remove_top(e);
        if (!is_live(e, &top))
            continue;
        e->now = top.time;
        e->processed++;
        *ev = top;
        return 1;
    }
    return 0;
}

void
sim_engine_set_keep(sim_engine *e, sim_keep keep, void *ctx)
{
    e->keep = keep;
    e->keep_ctx = ctx;
}

/* Moves heap[i] down to its place below (Floyd's heap construction). */
static void
sift_down_at(sim_event *heap, size_t n, size_t i)
{
    sim_event ev = heap[i];
    for (;;) {
        size_t c = 2 * i + 1;
        if (c >= n)
            break;
        if (c + 1 < n)
            c += (size_t)earlier(&heap[c + 1], &heap[c]);
        if (!earlier(&heap[c], &ev))
            break;
        heap[i] = heap[c];
        i = c;
    }
    heap[i] = ev;
}

/* Drops every cancelled record: a stale generation, or the caller's keep
 * saying so (it then accounts for the record as if it had been handled).
 * (time, seq) is a total order, so the rebuilt heap pops exactly the same
 * sequence as the old one would have.  O(n). */
size_t
sim_engine_compact(sim_engine *e)
{
    size_t k = 0, n = e->n;
    for (size_t i = 0; i < n; i++) {
        const sim_event *ev = &e->heap[i];
        if (is_live(e, ev) && (!e->keep || e->keep(e->keep_ctx, ev)))
            e->heap[k++] = *ev;
    }
    e->n = k;
    for (size_t i = k / 2; i-- > 0;)
        sift_down_at(e->heap, k, i);
    e->stale = 0;
    e->compactions++;
    return n - k;
}

void
sim_engine_note_stale(sim_engine *e, size_t k)
{
    e->stale += k;
    /* Each compaction follows at least n/2 reports since the last one, so
     * its O(n) is O(1) per cancelled record. */
    if (e->n >= SIM_COMPACT_MIN && e->stale > e->n / 2)
        sim_engine_compact(e);
}

uint64_t
sim_engine_compactions(const sim_engine *e)
{
    return e->compactions;
}

sim_stop
sim_engine_run(sim_engine *e, double horizon, sim_handler h, void *ctx)
{
    assert(!isnan(horizon));
    e->stop_code = 0;
    for (;;) {
        if (e->n == 0)
            return SIM_STOP_EMPTY;
        const sim_event *top = &e->heap[0];
        if (!is_live(e, top)) {
            remove_top(e);
            continue;
        }
        if (top->time > horizon) {
            /* Time never runs backwards, even for a horizon in the past. */
            if (horizon > e->now)
                e->now = horizon;
            return SIM_STOP_HORIZON;
        }
        /* The handler gets a copy: it may schedule, which can move the
         * heap array. */
        sim_event ev = *top;
        remove_top(e);
        e->now = ev.time;
        e->processed++;
        int rc = h(ctx, &ev);
        if (rc != 0) {
            e->stop_code = rc;
            return SIM_STOP_HANDLER;
        }
    }
}

int
sim_engine_stop_code(const sim_engine *e)
{
    return e->stop_code;
}

void sim_die_oom(void)
{
    fputs("dtsim: error: out of memory\n", stderr);
    exit(1);
}
