/* sim_engine.c -- the event queue and run loop: a monotone radix queue of
 * sim_event records stored by value, ordered by (time, seq), with lazy
 * cancellation through one generation number per target.
 *
 * Why not a heap (docs/architecture.md, "The event queue"): a discrete-event
 * run never schedules before now, so the queue only ever has to hand out
 * keys at or after the last one it handed out.  A radix queue (Ahuja,
 * Mehlhorn, Orlin and Tarjan's radix heap, here over the 63 bits of a
 * non-negative double) keeps 64 buckets: bucket 0 holds the records whose
 * time equals `last`, the time of the last refill, and bucket b >= 1 those
 * whose time first differs from `last` in bit b - 1.  Scheduling appends to
 * a bucket (no sift); when bucket 0 runs dry, the lowest non-empty bucket is
 * re-bucketed against its own earliest time, and every record moves to a
 * strictly lower bucket.  Where a heap of 10^5-10^6 records walks 17-20
 * levels of scattered cache lines per event, this appends and scans
 * sequentially; a record moves a few times in all (once per bit in which
 * its time differs from the refills on its way down).
 *
 * Exact order: every bucket holds its records in seq order.  A schedule
 * appends the largest seq so far; a refill empties bucket b into buckets
 * below it, which are all empty at that moment (b is the lowest non-empty),
 * in bucket b's own order.  So bucket 0, where every record has the same
 * time, pops front to back in seq order, and every other bucket holds later
 * times: events pop in (time, seq) order, exactly as a heap pops them, and
 * equal times in scheduling order.  Keys never fall below `last` because
 * `last` never passes now (the time of the last live event), except while
 * the queue is empty (then it is reset) -- see refill and the run loop.
 *
 * Records live in 2 KiB blocks (63 records and a link) chained per bucket,
 * taken from and returned to one free list; blocks are never returned to the
 * system before sim_engine_destroy, so scheduling allocates nothing in
 * steady state.  Cancelled records stay queued until they reach the front,
 * unless the caller reports them (sim_engine_note_stale): once the reported
 * ones pass half the queue, one O(n) pass drops every cancelled record (each
 * bucket compacted in place, its order kept).  This file does not interpret
 * events (kind, target and data belong to the caller), knows no stop
 * condition other than a time horizon, and does not report stalls: it says
 * SIM_STOP_EMPTY and lets the caller explain who was waiting for what.
 */
#include "sim_engine.h"
#include "sim_mem.h"

#include <assert.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CACHE_LINE 64

/* Records per block: a 32-byte header (the link) and 63 records make 2 KiB,
 * two records to a cache line. */
#define BLK_RECS 63
#define N_BUCKETS 64

/* Free blocks kept in reserve, so that a refill, which may start a block
 * in each bucket below the one it empties before it frees the blocks it
 * reads, never allocates (it runs inside pop and run, which have no error
 * path): sim_engine_schedule_at tops the reserve up, and fails cleanly. */
#define RESERVE_BLKS (N_BUCKETS + 1)
/* Blocks allocated at a time (256 KiB). */
#define SLAB_BLKS 128

_Static_assert(sizeof(sim_event) == 32, "sim_event must stay 32 bytes");

typedef struct blk {
    struct blk *next;
    char        pad[32 - sizeof(struct blk *)];
    sim_event   ev[BLK_RECS];
} blk;

_Static_assert(sizeof(blk) == 2048, "a block is 2 KiB");

/* One slab of blocks, kept only to free them. */
typedef struct slab {
    struct slab *next;
    blk         *blocks;
} slab;

/* A bucket: a chain of blocks, read from (head, head_i), written at
 * (tail, tail_n).  min is the smallest time key in it (valid when n > 0). */
typedef struct bucket {
    blk     *head;
    blk     *tail;
    uint32_t head_i;
    uint32_t tail_n;
    size_t   n;
    uint64_t min;
} bucket;

struct sim_engine {
    bucket     b[N_BUCKETS];
    uint64_t   nonempty;  /* bit b set when bucket b holds records */
    uint64_t   last;      /* time key every queued record is at or after */
    size_t     n;         /* pending events, cancelled ones included */
    blk       *free_blk;  /* blocks not in any bucket */
    size_t     free_n;    /* blocks on free_blk */
    slab      *slabs;
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

/* A time's key: the bits of a non-negative double order as it does, once
 * -0.0 (which equals 0.0) has lost its sign bit.  Every time is >= 0 (at is
 * clamped to now, now starts at 0). */
static inline uint64_t
key_of(double t)
{
    uint64_t k;
    memcpy(&k, &t, sizeof k);
    return k & 0x7fffffffffffffffu;
}

static inline double
time_of(uint64_t k)
{
    double t;
    memcpy(&t, &k, sizeof t);
    return t;
}

/* The bucket of key k (>= last): 0 when equal, else one more than the
 * highest bit in which k and last differ (1 .. 63). */
static inline unsigned
bucket_of(uint64_t k, uint64_t last)
{
    uint64_t x = k ^ last;
    return x == 0 ? 0u : 64u - (unsigned)__builtin_clzll(x);
}

/* Adds `count` blocks to the free list; -1 when out of memory. */
static int
add_blocks(sim_engine *e, size_t count)
{
    if (count > SIZE_MAX / sizeof(blk))
        return -1;
    slab *s = malloc(sizeof *s);
    if (s == NULL)
        return -1;
    s->blocks = sim_alloc_lines(count * sizeof(blk));
    if (s->blocks == NULL) {
        free(s);
        return -1;
    }
    for (size_t i = count; i-- > 0;) {
        s->blocks[i].next = e->free_blk;
        e->free_blk = &s->blocks[i];
    }
    e->free_n += count;
    s->next = e->slabs;
    e->slabs = s;
    return 0;
}

static inline void
free_block(sim_engine *e, blk *k)
{
    k->next = e->free_blk;
    e->free_blk = k;
    e->free_n++;
}

/* Appends ev (key k) to bucket bi, taking a free block when its tail is
 * full (the caller has made sure one is there). */
static inline void
append(sim_engine *e, unsigned bi, const sim_event *ev, uint64_t k)
{
    bucket *b = &e->b[bi];
    if (b->tail == NULL || b->tail_n == BLK_RECS) {
        blk *nb = e->free_blk;
        if (nb == NULL)
            sim_die_oom();   /* unreachable: RESERVE_BLKS */
        e->free_blk = nb->next;
        e->free_n--;
        nb->next = NULL;
        if (b->tail == NULL) {
            b->head = nb;
            b->head_i = 0;
        } else {
            b->tail->next = nb;
        }
        b->tail = nb;
        b->tail_n = 0;
    }
    b->tail->ev[b->tail_n++] = *ev;
    if (b->n == 0 || k < b->min)
        b->min = k;
    b->n++;
    e->nonempty |= (uint64_t)1 << bi;
}

/* Empties bucket bi (> 0, the lowest non-empty one) into the buckets below
 * it, re-bucketed against its earliest time, which becomes `last`.  Every
 * record of bucket bi agrees with the old `last` above bit bi - 1 and has
 * that bit set, so against the new `last` (one of them) it differs only
 * below: each goes to a strictly lower bucket, which is empty now, in bucket
 * bi's order.  The blocks it reads are freed once read and the appends
 * reuse them; what the appends need beyond that (a block begun in each
 * bucket below) comes from the reserve. */
static void
refill(sim_engine *e, unsigned bi)
{
    bucket src = e->b[bi];
    e->b[bi] = (bucket){0};
    e->nonempty &= ~((uint64_t)1 << bi);
    uint64_t last = src.min;
    e->last = last;
    blk *k = src.head;
    uint32_t i = src.head_i;
    while (k != NULL) {
        uint32_t end = k == src.tail ? src.tail_n : BLK_RECS;
        for (; i < end; i++) {
            const sim_event *ev = &k->ev[i];
            uint64_t key = key_of(ev->time);
            append(e, bucket_of(key, last), ev, key);
        }
        blk *next = k->next;
        free_block(e, k);
        k = next;
        i = 0;
    }
}

/* Removes the front record of bucket 0 (which holds one). */
static inline void
drop_front(sim_engine *e)
{
    bucket *b = &e->b[0];
    e->n--;
    if (--b->n == 0) {
        free_block(e, b->head);
        *b = (bucket){0};
        e->nonempty &= ~(uint64_t)1;
        return;
    }
    if (++b->head_i == BLK_RECS) {
        blk *k = b->head;
        b->head = k->next;
        b->head_i = 0;
        free_block(e, k);
    }
}

static inline const sim_event *
front(const sim_engine *e)
{
    return &e->b[0].head->ev[e->b[0].head_i];
}

/* With nothing queued, `last` may move to now: every later schedule is at
 * or after now.  (It can have passed now only by a refill at a cancelled
 * record's time whose queue then ran dry.) */
static inline void
reset_if_empty(sim_engine *e)
{
    if (e->n == 0)
        e->last = key_of(e->now);
}

static inline int
is_live(const sim_engine *e, const sim_event *ev)
{
    return ev->gen == e->gen[ev->target];
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
    if (capacity_hint > 0 &&
        add_blocks(e, capacity_hint / BLK_RECS + 1 + RESERVE_BLKS) != 0)
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
    for (slab *s = e->slabs; s != NULL;) {
        slab *next = s->next;
        free(s->blocks);
        free(s);
        s = next;
    }
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
    /* Written so that a NaN slipping past a release build also lands on
     * now rather than breaking the order for every later event. */
    if (!(at >= e->now))
        at = e->now;
    sim_event ev = {
        .time = at,
        .seq = e->next_seq,
        .kind = kind,
        .target = target,
        .gen = e->gen[target],
        .data = data,
    };
    uint64_t k = key_of(at);
    assert(k >= e->last);
    if (e->free_n <= RESERVE_BLKS && add_blocks(e, SLAB_BLKS) != 0)
        return -1;
    append(e, bucket_of(k, e->last), &ev, k);
    e->next_seq++;
    e->n++;
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

/* The lowest non-empty bucket above 0 (the queue holds records, bucket 0
 * none). */
static inline unsigned
lowest_bucket(const sim_engine *e)
{
    return (unsigned)__builtin_ctzll(e->nonempty);
}

int
sim_engine_pop(sim_engine *e, sim_event *ev)
{
    while (e->n > 0) {
        if (e->b[0].n == 0)
            refill(e, lowest_bucket(e));
        sim_event top = *front(e);
        drop_front(e);
        if (!is_live(e, &top))
            continue;
        e->now = top.time;
        e->processed++;
        *ev = top;
        return 1;
    }
    reset_if_empty(e);
    return 0;
}

void
sim_engine_set_keep(sim_engine *e, sim_keep keep, void *ctx)
{
    e->keep = keep;
    e->keep_ctx = ctx;
}

/* Drops the dead records of bucket bi in place, keeping its order, and
 * frees the blocks left empty; returns the records dropped. */
static size_t
compact_bucket(sim_engine *e, unsigned bi)
{
    bucket *b = &e->b[bi];
    if (b->n == 0)
        return 0;
    blk *rk = b->head, *wk = b->head;
    uint32_t ri = b->head_i, wi = b->head_i;
    size_t kept = 0;
    uint64_t min = UINT64_MAX;
    while (rk != NULL) {
        uint32_t end = rk == b->tail ? b->tail_n : BLK_RECS;
        for (; ri < end; ri++) {
            const sim_event *ev = &rk->ev[ri];
            if (!is_live(e, ev) || (e->keep && !e->keep(e->keep_ctx, ev)))
                continue;
            if (wi == BLK_RECS) {
                wk = wk->next;
                wi = 0;
            }
            wk->ev[wi++] = *ev;
            uint64_t k = key_of(ev->time);
            if (k < min)
                min = k;
            kept++;
        }
        rk = rk->next;
        ri = 0;
    }
    size_t dropped = b->n - kept;
    if (kept == 0) {
        for (blk *k = b->head; k != NULL;) {
            blk *next = k->next;
            free_block(e, k);
            k = next;
        }
        *b = (bucket){0};
        e->nonempty &= ~((uint64_t)1 << bi);
        return dropped;
    }
    for (blk *k = wk->next; k != NULL;) {
        blk *next = k->next;
        free_block(e, k);
        k = next;
    }
    wk->next = NULL;
    b->tail = wk;
    b->tail_n = wi;
    b->n = kept;
    b->min = min;
    return dropped;
}

/* Drops every cancelled record: a stale generation, or the caller's keep
 * saying so (it then accounts for the record as if it had been handled).
 * A record's bucket depends on its time alone and each bucket keeps its
 * order, so the queue pops exactly the same sequence as before.  O(n). */
size_t
sim_engine_compact(sim_engine *e)
{
    size_t dropped = 0;
    for (unsigned bi = 0; bi < N_BUCKETS; bi++)
        dropped += compact_bucket(e, bi);
    e->n -= dropped;
    reset_if_empty(e);
    e->stale = 0;
    e->compactions++;
    return dropped;
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
        if (e->b[0].n == 0) {
            if (e->n == 0) {
                reset_if_empty(e);
                return SIM_STOP_EMPTY;
            }
            /* Refill only up to the horizon, so that `last` never passes
             * the now a horizon stop leaves behind. */
            unsigned bi = lowest_bucket(e);
            if (time_of(e->b[bi].min) > horizon)
                goto at_horizon;
            refill(e, bi);
        }
        const sim_event *top = front(e);
        if (top->time > horizon)
            goto at_horizon;
        if (!is_live(e, top)) {
            drop_front(e);
            continue;
        }
        /* The handler gets a copy: it may schedule, which can reuse the
         * block the record sits in. */
        sim_event ev = *top;
        drop_front(e);
        e->now = ev.time;
        e->processed++;
        int rc = h(ctx, &ev);
        if (rc != 0) {
            e->stop_code = rc;
            return SIM_STOP_HANDLER;
        }
    }
at_horizon:
    /* Time never runs backwards, even for a horizon in the past. */
    if (horizon > e->now)
        e->now = horizon;
    return SIM_STOP_HORIZON;
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
