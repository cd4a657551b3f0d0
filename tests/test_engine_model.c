/* test_engine_model.c -- Check suite that runs the event queue against a
 * reference model under random operations, as a simulation would issue
 * them: schedules at now, a little after now, far ahead and at equal times
 * in bursts of up to 1,263 (so that buckets span many 63-record blocks and
 * refills cascade through many levels), pops, runs that stop at a horizon or
 * at a handler's request and resume, cancellations of a target, and
 * compactions with and without the caller's keep test.  The model is a
 * plain array searched for the smallest (time, seq) live record; every
 * delivered event (time, seq, data), now, the pending count and the records
 * a compaction drops must agree exactly, so a queue that surfaces an event
 * late, early, twice or never fails.  It does not measure speed
 * (bench/bench_engine.c does).
 */
#include "sim_engine.h"

#include <check.h>
#include <gsl/gsl_rng.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

enum { N_TARGETS = 8 };

/* Check writes every passing ck_assert to its pipe; in loops of millions of
 * checks that is most of the run, so these only call it on failure. */
#define REQUIRE(c)                                                       \
    do {                                                                 \
        if (!(c))                                                        \
            ck_abort_msg("%s:%d: %s", __FILE__, __LINE__, #c);           \
    } while (0)
#define REQUIRE_EQ(a, b)                                                 \
    do {                                                                 \
        unsigned long long a_ = (unsigned long long)(a);                 \
        unsigned long long b_ = (unsigned long long)(b);                 \
        if (a_ != b_)                                                    \
            ck_abort_msg("%s:%d: %s == %llu, %s == %llu", __FILE__,      \
                         __LINE__, #a, a_, #b, b_);                      \
    } while (0)

/* The model: every record scheduled and not yet popped or compacted away. */
typedef struct model {
    sim_event *ev;
    size_t     n, cap;
    uint32_t   gen[N_TARGETS];
    double     now;
    uint64_t   seq;
    uint32_t   keep_mod;   /* keep test: drop data % keep_mod == 0 (0: none) */
} model;

static void
model_push(model *m, double at, uint32_t target, uint32_t data)
{
    if (m->n == m->cap) {
        m->cap = m->cap ? 2 * m->cap : 1024;
        m->ev = realloc(m->ev, m->cap * sizeof *m->ev);
        REQUIRE((m->ev) != NULL);
    }
    if (!(at >= m->now))
        at = m->now;
    m->ev[m->n++] = (sim_event){ .time = at, .seq = m->seq++, .target = target,
                                 .gen = m->gen[target], .data = data };
}

static int
earlier(const sim_event *a, const sim_event *b)
{
    /* -0.0 and 0.0 tie, as in the engine. */
    if (a->time != b->time)
        return a->time < b->time;
    return a->seq < b->seq;
}

/* Index of the earliest record, dead or alive; SIZE_MAX when empty. */
static size_t
model_min(const model *m)
{
    size_t best = SIZE_MAX;
    for (size_t i = 0; i < m->n; i++)
        if (best == SIZE_MAX || earlier(&m->ev[i], &m->ev[best]))
            best = i;
    return best;
}

static void
model_remove(model *m, size_t i)
{
    m->ev[i] = m->ev[--m->n];   /* order in the array is irrelevant */
}

/* Pops the earliest live record up to horizon into *out: 1, or 0 when
 * none is left at or before it. */
static int
model_pop(model *m, double horizon, sim_event *out)
{
    for (;;) {
        size_t i = model_min(m);
        if (i == SIZE_MAX)
            return 0;
        sim_event ev = m->ev[i];
        /* A cancelled record is dropped when it reaches the front at or
         * before the horizon; one beyond it stays queued. */
        if (ev.time > horizon)
            return 0;
        if (ev.gen != m->gen[ev.target]) {
            model_remove(m, i);
            continue;
        }
        model_remove(m, i);
        m->now = ev.time;
        *out = ev;
        return 1;
    }
}

static size_t
model_compact(model *m)
{
    size_t k = 0, n = m->n;
    for (size_t i = 0; i < n; i++) {
        sim_event ev = m->ev[i];
        int live = ev.gen == m->gen[ev.target]
                   && !(m->keep_mod && ev.data % m->keep_mod == 0);
        if (live)
            m->ev[k++] = ev;
    }
    m->n = k;
    return n - k;
}

static int
keep_test(void *ctx, const sim_event *ev)
{
    const model *m = ctx;
    return !(m->keep_mod && ev->data % m->keep_mod == 0);
}

/* The harness: the engine's handler checks each delivery against the
 * model and sometimes schedules from inside the run, as protocols do. */
typedef struct harness {
    sim_engine *e;
    model       m;
    gsl_rng    *r;
    uint32_t    next_data;
    double      horizon;
    uint64_t    delivered;
    uint32_t    stop_after;   /* handler returns 1 after this many (0: never) */
} harness;

/* A time at or after now, from a mix that makes ties, near times, far
 * times and dyadic and non-dyadic fractions. */
static double
draw_time(harness *h)
{
    double now = sim_engine_now(h->e);
    switch (gsl_rng_uniform_int(h->r, 8)) {
    case 0: return now;
    case 1: return now + 0.01;
    case 2: return now + (double)gsl_rng_uniform_int(h->r, 16) / 8.0;
    case 3: return now + gsl_rng_uniform(h->r);
    case 4: return now + 1e6 * gsl_rng_uniform(h->r);
    case 5: return now * (1.0 + 1e-15);
    case 6: return now - 1.0;   /* clamped to now */
    default: return now + gsl_rng_uniform(h->r) * 1e-9;
    }
}

static void
schedule_both(harness *h, double at)
{
    uint32_t target = (uint32_t)gsl_rng_uniform_int(h->r, N_TARGETS);
    uint32_t data = h->next_data++;
    REQUIRE_EQ(sim_engine_schedule_at(h->e, at, 0, target, data), 0);
    model_push(&h->m, at, target, data);
    REQUIRE_EQ(sim_engine_pending(h->e), h->m.n);
}

static void
check_same(harness *h, const sim_event *ev)
{
    sim_event want;
    REQUIRE_EQ(model_pop(&h->m, h->horizon, &want), 1);
    REQUIRE_EQ(ev->data, want.data);
    REQUIRE_EQ(ev->seq, want.seq);
    REQUIRE_EQ(ev->target, want.target);
    REQUIRE(ev->time == want.time && signbit(ev->time) == signbit(want.time));
    REQUIRE(sim_engine_now(h->e) == h->m.now);
    h->delivered++;
}

static int
handler(void *ctx, const sim_event *ev)
{
    harness *h = ctx;
    check_same(h, ev);
    uint32_t k = (uint32_t)gsl_rng_uniform_int(h->r, 3);
    for (uint32_t i = 0; i < k && h->m.n < 3000; i++)
        schedule_both(h, draw_time(h));
    if (gsl_rng_uniform(h->r) < 0.02)
        sim_engine_cancel_target(h->e, (uint32_t)gsl_rng_uniform_int(h->r, N_TARGETS));
    for (uint32_t t = 0; t < N_TARGETS; t++)
        h->m.gen[t] = sim_engine_generation(h->e, t);
    if (h->stop_after && --h->stop_after == 0)
        return 1;
    return 0;
}

static void
run_ops(uint32_t seed, uint32_t keep_mod, int ops)
{
    harness h = {0};
    h.e = sim_engine_create(N_TARGETS, seed % 3 == 0 ? 0 : 100);
    REQUIRE((h.e) != NULL);
    h.r = gsl_rng_alloc(gsl_rng_mt19937);
    REQUIRE((h.r) != NULL);
    gsl_rng_set(h.r, seed);
    h.m.keep_mod = keep_mod;
    if (keep_mod)
        sim_engine_set_keep(h.e, keep_test, &h.m);
    for (int op = 0; op < ops; op++) {
        unsigned what = (unsigned)gsl_rng_uniform_int(h.r, 100);
        if (what < 40) {
            schedule_both(&h, draw_time(&h));
        } else if (what < 43 && h.m.n < 2000) {
            /* a burst at one time: a step end of many nodes at once */
            double at = draw_time(&h);
            uint32_t k = 64 + (uint32_t)gsl_rng_uniform_int(h.r, 1200);
            for (uint32_t i = 0; i < k; i++)
                schedule_both(&h, at);
        } else if (what < 75) {
            sim_event ev;
            h.horizon = INFINITY;
            if (sim_engine_pop(h.e, &ev))
                check_same(&h, &ev);
            else
                REQUIRE_EQ(model_pop(&h.m, INFINITY, &ev), 0);
        } else if (what < 90) {
            double now = sim_engine_now(h.e);
            h.horizon = gsl_rng_uniform(h.r) < 0.1 ? now - 1.0
                                                   : now + 2.0 * gsl_rng_uniform(h.r);
            h.stop_after = (uint32_t)gsl_rng_uniform_int(h.r, 60);
            sim_stop why = sim_engine_run(h.e, h.horizon, handler, &h);
            sim_event ev;
            if (why == SIM_STOP_HORIZON) {
                REQUIRE_EQ(model_pop(&h.m, h.horizon, &ev), 0);
                if (h.horizon > h.m.now)
                    h.m.now = h.horizon;
                REQUIRE(sim_engine_now(h.e) == h.m.now);
            } else if (why == SIM_STOP_EMPTY) {
                REQUIRE_EQ(model_pop(&h.m, INFINITY, &ev), 0);
                REQUIRE_EQ(h.m.n, 0);
            } else {
                REQUIRE_EQ(why, SIM_STOP_HANDLER);
                REQUIRE_EQ(sim_engine_stop_code(h.e), 1);
            }
            h.stop_after = 0;
        } else if (what < 95) {
            uint32_t t = (uint32_t)gsl_rng_uniform_int(h.r, N_TARGETS);
            sim_engine_cancel_target(h.e, t);
            h.m.gen[t]++;
        } else {
            REQUIRE_EQ(sim_engine_compact(h.e), model_compact(&h.m));
        }
        REQUIRE_EQ(sim_engine_pending(h.e), h.m.n);
    }
    /* drain */
    sim_event ev;
    h.horizon = INFINITY;
    while (sim_engine_pop(h.e, &ev))
        check_same(&h, &ev);
    REQUIRE_EQ(model_pop(&h.m, INFINITY, &ev), 0);
    REQUIRE_EQ(sim_engine_pending(h.e), 0);
    REQUIRE_EQ(sim_engine_events_processed(h.e), h.delivered);
    REQUIRE((h.delivered) > ((uint64_t)ops / 8));
    /* an emptied queue takes new events at now again */
    double now = sim_engine_now(h.e);
    REQUIRE_EQ(sim_engine_schedule_at(h.e, now, 0, 0, 7), 0);
    REQUIRE_EQ(sim_engine_pop(h.e, &ev), 1);
    REQUIRE_EQ(ev.data, 7);
    sim_engine_destroy(h.e);
    gsl_rng_free(h.r);
    free(h.m.ev);
}

START_TEST(test_random_ops_match_model)
{
    run_ops(1000u + (uint32_t)_i, 0, 4000);
}
END_TEST

START_TEST(test_random_ops_with_keep_match_model)
{
    run_ops(2000u + (uint32_t)_i, 5, 4000);
}
END_TEST

/* The ring's pattern at scale: N nodes end a step at the same time, each
 * then schedules its next step end and two deliveries; 30 rounds.  Pins
 * the exact order: by round, then deliveries before the step ends they
 * were scheduled before, in node order. */
START_TEST(test_lockstep_rounds_pop_in_seq_order)
{
    enum { N = 5000, ROUNDS = 30 };
    sim_engine *e = sim_engine_create(1, 0);
    REQUIRE((e) != NULL);
    for (uint32_t i = 0; i < N; i++)
        REQUIRE_EQ(sim_engine_schedule_at(e, 0.01, 0, 0, i), 0);
    sim_event ev;
    for (uint32_t r = 0; r < ROUNDS; r++) {
        double t = 0.01 * (r + 1);
        /* step ends of round r, then each node's deliveries at t + 0.0013 */
        for (uint32_t i = 0; i < N; i++) {
            REQUIRE_EQ(sim_engine_pop(e, &ev), 1);
            REQUIRE((ev.time) == (t));
            REQUIRE_EQ(ev.data, i);
            REQUIRE_EQ(sim_engine_schedule_at(e, t + 0.0013, 1, 0, 2 * i), 0);
            REQUIRE_EQ(sim_engine_schedule_at(e, t + 0.0013, 1, 0, 2 * i + 1), 0);
        }
        for (uint32_t i = 0; i < 2 * N; i++) {
            REQUIRE_EQ(sim_engine_pop(e, &ev), 1);
            REQUIRE((ev.time) == (t + 0.0013));
            REQUIRE_EQ(ev.kind, 1);
            REQUIRE_EQ(ev.data, i);
            if (i % 2 == 1)
                REQUIRE_EQ(sim_engine_schedule_at(e, 0.01 * (r + 2), 0, 0, i / 2), 0);
        }
    }
    REQUIRE_EQ(sim_engine_pending(e), N);
    sim_engine_destroy(e);
}
END_TEST

static Suite *
model_suite(void)
{
    Suite *s = suite_create("engine_model");
    TCase *tc = tcase_create("model");
    tcase_set_timeout(tc, 120);
    tcase_add_loop_test(tc, test_random_ops_match_model, 0, 8);
    tcase_add_loop_test(tc, test_random_ops_with_keep_match_model, 0, 4);
    tcase_add_test(tc, test_lockstep_rounds_pop_in_seq_order);
    suite_add_tcase(s, tc);
    return s;
}

int
main(void)
{
    SRunner *sr = srunner_create(model_suite());
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
