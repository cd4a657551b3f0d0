/* test_freeze_pace.c -- the effective-movement criterion of progressive
 * freezing (freeze.criterion "effective_movement", docs/models.md), pinned
 * on hand-made parameter sequences: a test protocol on one node writes a
 * chosen value into the candidate layer after every step and reports the
 * step count as the round, so the freeze rounds follow from sums done by
 * hand (dyadic values: every sum exact).  Then whole runs: a threshold above
 * 1 freezes at every check, which is the schedule's run bit for bit (with
 * fedavg's memory-aware selection too); the default measure is
 * relative_change, unchanged.
 */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "alg.h"
#include "alg_host.h"
#include "mdl_freeze.h"
#include "test_util.h"

enum { P = 508, L1 = 336 };

/* The candidate layers' tracked values by round: layer 1's parameter 0
 * over rounds 0 .. 8 (window 4: a straight walk, net 4 = path 4, then a
 * walk back and forth, net 0 of path 4), then layer 2's parameter 336
 * over rounds 8 .. 16 (net 0.75 of path 1.25 = 0.6, then net 0 of 1). */
static const double seq1[9] = { 0, 1, 2, 3, 4, 5, 4, 5, 4 };
static const double seq2[9] = { 0, 0.5, 0.25, 0.5, 0.75, 1, 0.75, 1, 0.75 };
static uint64_t round_no;
static size_t frozen_at[24];

static void put(alg_ctx *ctx)
{
    double *x = alg_params(ctx, 0);
    memset(x, 0, P * sizeof(double));
    x[0] = seq1[round_no < 8 ? round_no : 8];
    x[L1] = round_no < 8 ? 0 : seq2[round_no - 8 < 8 ? round_no - 8 : 8];
}

static void t_start(alg_ctx *ctx, void *st, int node)
{
    (void)st;
    round_no = 0;
    put(ctx);
    frozen_at[0] = alg_freeze_round(ctx, node, 0);
    alg_start_step(ctx, node);
}

static void t_step_done(alg_ctx *ctx, void *st, int node, const double *grad)
{
    (void)st;
    (void)grad;
    round_no++;
    put(ctx);
    frozen_at[round_no < 24 ? round_no : 23] = alg_freeze_round(ctx, node, round_no);
    alg_start_step(ctx, node);
}

static const alg_type walker = {
    .name = "walker", .summary = "test", .state_size = 8, .on_start = t_start,
    .on_step_done = t_step_done,
};

static void run_walk(double threshold)
{
    char json[2048];
    snprintf(json, sizeof json,
             "{\"seed\": 3, \"nodes\": 1, \"compute\": {\"step_time_s\": 0.01},"
             " \"model\": {\"kind\": \"mlp\", \"hidden\": [16, 8]},"
             " \"data\": {\"train\": 256, \"test\": 16, \"features\": 20, \"classes\": 4},"
             " \"algorithm\": {\"name\": \"allreduce\", \"lr\": 0.1, \"batch\": 16},"
             " \"freeze\": {\"criterion\": \"effective_movement\", \"threshold\": %.17g,"
             " \"window\": 4}, \"stop\": {\"steps\": 20}}", threshold);
    memset(frozen_at, 0xff, sizeof frozen_at);
    run_options opt = { .algorithm = &walker };
    run_result res;
    run_json(json, &opt, &res);
}

/* First layer frozen from round r1, second from r2 (0: never, up to round 19). */
static void expect_rounds(int r1, int r2)
{
    for (int r = 0; r < 20; r++) {
        const size_t want = r2 && r >= r2 ? 472 : r1 && r >= r1 ? L1 : 0;
        ck_assert_msg(frozen_at[r] == want, "round %d: prefix %zu, expected %zu", r,
                      frozen_at[r], want);
    }
}

/* Threshold 0.5: round 4 (movement 1) keeps layer 1, round 8 (0) freezes
 * it; layer 2's first window (0.6) keeps it, its second (net 0) freezes it
 * at 16.  Threshold 0.625 > 0.6 freezes layer 2 at 12, as 1 does; a
 * straight walk (net = path) is kept by 1 but frozen by 1 + 2^-10, and a
 * layer that did not move (0 of 0) freezes. */
START_TEST(hand_made_walks_decide_the_rounds)
{
    run_walk(0.5);
    expect_rounds(8, 16);
    run_walk(0.625);
    expect_rounds(8, 12);
    run_walk(0.59375);   /* just below 0.6 */
    expect_rounds(8, 16);
    run_walk(1);
    expect_rounds(8, 12);
    run_walk(1 + 1.0 / 1024);
    expect_rounds(4, 8);
    ck_assert_double_eq(mdl_freeze_l1(seq1, seq2, 9), 0 + 0.5 + 1.75 + 2.5 + 3.25 + 4 + 3.25 + 4
                        + 3.25);
}
END_TEST

#define RUN \
    "{\"seed\": 3, \"nodes\": 4," \
    " \"compute\": {\"flops_per_s\": 1e9}," \
    " \"network\": {\"latency_s\": 0.001, \"bandwidth_Bps\": 1e7, \"bytes_per_param\": 4}," \
    " \"model\": {\"kind\": \"mlp\", \"hidden\": [16, 8], \"l2\": 0.0001}," \
    " \"data\": {\"train\": 2048, \"test\": 512, \"features\": 20, \"classes\": 4," \
    "   \"separation\": 1}," \
    " \"algorithm\": {\"name\": \"fedavg\", \"fraction\": 1, \"lr\": 0.1, \"batch\": 16}," \
    " \"stop\": {\"steps\": 320},"

/* A threshold above 1 freezes at every check: FedAvg with window 2 is the
 * schedule [2, 4]'s run, bit for bit; relative_change named is the
 * default. */
START_TEST(threshold_above_one_is_the_schedule)
{
    run_result a, b, c, d;
    run_json(RUN " \"freeze\": {\"after_steps\": [2, 4]}}", NULL, &a);
    run_json(RUN " \"freeze\": {\"criterion\": \"effective_movement\", \"threshold\": 2,"
             " \"window\": 2}}", NULL, &b);
    ck_assert(memcmp(&a.sim_time_s, &b.sim_time_s, sizeof(double)) == 0);
    ck_assert(memcmp(&a.last.train_loss, &b.last.train_loss, sizeof(double)) == 0);
    run_json(RUN " \"freeze\": {\"threshold\": 0.01, \"window\": 2}}", NULL, &c);
    run_json(RUN " \"freeze\": {\"criterion\": \"relative_change\", \"threshold\": 0.01,"
             " \"window\": 2}}", NULL, &d);
    ck_assert(memcmp(&c.sim_time_s, &d.sim_time_s, sizeof(double)) == 0);
    ck_assert(memcmp(&c.last.train_loss, &d.last.train_loss, sizeof(double)) == 0);
    ck_assert(memcmp(&a.sim_time_s, &c.sim_time_s, sizeof(double)) != 0);
}
END_TEST

/* The same with memory-aware selection: client 3's 5200 bytes hold stage
 * 1 only, so the schedule's run draws it from round 2; the criterion's
 * must too (the round's stage decided before the round's clients are
 * drawn), bit for bit. */
START_TEST(threshold_above_one_selects_as_the_schedule)
{
#define MEM \
    "{\"seed\": 3, \"nodes\": 4," \
    " \"compute\": {\"flops_per_s\": 1e9, \"groups\": [{\"nodes\": [3], \"memory_bytes\": 5200}]}," \
    " \"network\": {\"latency_s\": 0.001, \"bandwidth_Bps\": 1e7, \"bytes_per_param\": 4}," \
    " \"model\": {\"kind\": \"mlp\", \"hidden\": [16, 8], \"l2\": 0.0001}," \
    " \"data\": {\"train\": 2048, \"test\": 512, \"features\": 20, \"classes\": 4," \
    "   \"separation\": 1}," \
    " \"algorithm\": {\"name\": \"fedavg\", \"fraction\": 1, \"lr\": 0.1, \"batch\": 16}," \
    " \"stop\": {\"steps\": 320},"
    run_result a, b;
    run_json(MEM " \"freeze\": {\"after_steps\": [2, 4]}}", NULL, &a);
    run_json(MEM " \"freeze\": {\"criterion\": \"effective_movement\", \"threshold\": 2,"
             " \"window\": 2}}", NULL, &b);
    ck_assert_msg(a.status == RUN_OK && b.status == RUN_OK, "%s %s", a.message, b.message);
    ck_assert(memcmp(&a.sim_time_s, &b.sim_time_s, sizeof(double)) == 0);
    ck_assert(memcmp(&a.last.train_loss, &b.last.train_loss, sizeof(double)) == 0);
    ck_assert_double_eq(stat_of(&a, "rounds"), stat_of(&b, "rounds"));
#undef MEM
}
END_TEST

START_TEST(criterion_errors_are_located)
{
    scn_scenario s;
    scn_error err;
    ck_assert_int_eq(scn_load_string("{\"nodes\": 2, \"algorithm\": {\"name\": \"fedavg\"},"
                                     " \"stop\": {\"steps\": 1}, \"freeze\": {\"criterion\":"
                                     " \"movement\", \"threshold\": 0.1}}", "t.json", NULL, 0,
                                     &s, &err), -1);
    ck_assert_str_eq(err.msg, "t.json: /freeze/criterion: error: unknown criterion \"movement\""
                     " (expected one of: relative_change, effective_movement)");
    ck_assert_int_eq(scn_load_string("{\"nodes\": 2, \"algorithm\": {\"name\": \"fedavg\"},"
                                     " \"stop\": {\"steps\": 1}, \"freeze\": {\"criterion\":"
                                     " \"effective_movement\"}}", "t.json", NULL, 0, &s, &err),
                     -1);
    ck_assert_str_eq(err.msg, "t.json: /freeze/criterion: error: is a key of the criterion: "
                     "give \"threshold\" too");
    ck_assert_int_eq(scn_load_string("{\"nodes\": 2, \"algorithm\": {\"name\": \"fedavg\"},"
                                     " \"stop\": {\"steps\": 1}, \"freeze\": {\"after_steps\":"
                                     " [3], \"criterion\": \"effective_movement\"}}", "t.json",
                                     NULL, 0, &s, &err), -1);
    ck_assert_str_eq(err.msg, "t.json: /freeze/criterion: error: is a key of the criterion, "
                     "not of a schedule (\"after_steps\")");
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("freeze_pace");
    TCase *tc = tcase_create("freeze_pace");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, hand_made_walks_decide_the_rounds);
    tcase_add_test(tc, threshold_above_one_is_the_schedule);
    tcase_add_test(tc, threshold_above_one_selects_as_the_schedule);
    tcase_add_test(tc, criterion_errors_are_located);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    SRunner *sr = srunner_create(suite());
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
