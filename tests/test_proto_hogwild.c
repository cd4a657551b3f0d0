/* test_proto_hogwild.c -- Hogwild! (alg_hogwild.c) pinned by exact
 * outcomes: one core is sequential SGD bit for bit (the same parameters as
 * allreduce on one node, with momentum and weight decay, in both write
 * modes); with disjoint supports (tests/data/text/disjoint.svm: each class
 * touches its own three features, no bias, one class per core) each core's
 * coordinates are exactly those of the core running alone, whatever the
 * interleaving and the write mode, with no conflict; on dense data two
 * cores stepping at the same instants conflict on every coordinate of every
 * write but the first (closed-form count), an overwrite loses the first
 * core's update (the parameters are the second core's alone) and an add
 * keeps both (the sum of the two changes).  The shared parameters are read
 * at the end through a stats wrapper.
 */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "alg.h"
#include "test_util.h"

extern const alg_type alg_hogwild, alg_allreduce;

#define MAXP 64

static alg_type wrapped;
static const alg_type *inner;
static double cap_x[MAXP], cap_x0[MAXP];
static size_t cap_P;

static void w_start(alg_ctx *ctx, void *state, int i)
{
    if (i == 0)
        memcpy(cap_x0, alg_params_const(ctx, 0), ctx->P * sizeof(double));
    inner->on_start(ctx, state, i);
}

/* The evaluated model at the end: hogwild's shared parameters, or node
 * 0's for the sequential reference. */
static int capture(const alg_ctx *ctx, const char **keys, double *values, int max)
{
    ck_assert_uint_le(ctx->P, MAXP);
    cap_P = ctx->P;
    const double *x = inner->eval_params ? inner->eval_params(ctx) : alg_params_const(ctx, 0);
    memcpy(cap_x, x, ctx->P * sizeof(double));
    return inner->stats ? inner->stats(ctx, keys, values, max) : 0;
}

static alg_param_spec spec[2];
/* Runs json with protocol a (hogwild: write mode `write`), capturing. */
static void run_with(const alg_type *a, int write, const char *json, run_result *res)
{
    inner = a;
    wrapped = *a;
    if (a == &alg_hogwild) {
        spec[0] = alg_hogwild.params[0];
        spec[0].def = write;
        spec[1] = alg_hogwild.params[1];
        wrapped.params = spec;
    }
    wrapped.on_start = a->on_start ? w_start : NULL;
    wrapped.stats = capture;
    run_options opt = { .algorithm = &wrapped };
    run_json(json, &opt, res);
    ck_assert_msg(res->status == RUN_OK, "%s", res->message);
}

#define DENSE \
    " \"model\": {\"kind\": \"linear\", \"l2\": 0.001}," \
    " \"data\": {\"kind\": \"synthetic-regression\", \"train\": 512, \"test\": 64," \
    "  \"features\": 12},"

/* One core against allreduce on one node: the same 40 steps, the same bits. */
START_TEST(test_one_core_is_sequential_sgd)
{
    const char *json = "{\"seed\": 4, \"nodes\": 1," DENSE
        " \"optimizer\": {\"momentum\": 0.9, \"weight_decay\": 0.01},"
        " \"compute\": {\"step_time_s\": 0.01},"
        " \"algorithm\": {\"name\": \"%s\", \"lr\": 0.05, \"batch\": 8},"
        " \"stop\": {\"steps\": 40}}";
    char j[2048];
    run_result res;
    double ref[MAXP];
    snprintf(j, sizeof j, json, "allreduce");
    run_with(&alg_allreduce, 0, j, &res);
    ck_assert_uint_eq(cap_P, 13);
    memcpy(ref, cap_x, sizeof ref);
    for (int write = 0; write < 2; write++) {
        snprintf(j, sizeof j, json, "hogwild");
        run_with(&alg_hogwild, write, j, &res);
        ck_assert_int_eq(memcmp(ref, cap_x, cap_P * sizeof(double)), 0);
        ck_assert_double_eq(stat_of(&res, "writes"), 40);
        ck_assert_double_eq(stat_of(&res, "coordinates_conflicted"), 0);
        /* momentum and decay move every coordinate at every step */
        ck_assert_double_eq(stat_of(&res, "coordinates_written"), 40 * 13);
    }
}
END_TEST

#define DISJOINT(slow0, slow1) \
    "{\"seed\": 6, \"nodes\": 2," \
    " \"model\": {\"kind\": \"logistic\", \"l2\": 0, \"bias\": false}," \
    " \"data\": {\"kind\": \"libsvm\", \"train_file\": \"" DTSIM_SOURCE_DIR \
    "/tests/data/text/disjoint.svm\", \"test_file\": \"" DTSIM_SOURCE_DIR \
    "/tests/data/text/disjoint.svm\", \"scale\": \"none\"," \
    "  \"partition\": \"shards\", \"shards_per_node\": 1}," \
    " \"compute\": {\"step_time_s\": 0.01, \"groups\": [" \
    "   {\"nodes\": [0], \"slowdown\": " slow0 "}, {\"nodes\": [1], \"slowdown\": " slow1 "}]}," \
    " \"algorithm\": {\"name\": \"hogwild\", \"lr\": 0.3, \"batch\": 4}," \
    " \"stop\": {\"time_s\": 0.205}}"

/* Which block (features 0-2 or 3-5) node 0's class touches: the block of
 * the coordinates it changed when running alone. */
START_TEST(test_disjoint_supports_any_order)
{
    run_result res;
    double alone0[MAXP], alone1[MAXP];
    /* each core alone: the other never ends a step */
    run_with(&alg_hogwild, 0, DISJOINT("1", "1e6"), &res);
    ck_assert_uint_eq(cap_P, 6);
    memcpy(alone0, cap_x, sizeof alone0);
    ck_assert_double_eq(stat_of(&res, "writes"), 20);
    run_with(&alg_hogwild, 0, DISJOINT("1e6", "1.3"), &res);
    memcpy(alone1, cap_x, sizeof alone1);
    ck_assert_double_eq(stat_of(&res, "writes"), 15);
    /* the blocks: node 0 changed exactly three coordinates, node 1 the others */
    int moved0 = 0, moved1 = 0;
    for (size_t k = 0; k < 6; k++) {
        moved0 += alone0[k] != cap_x0[k];
        moved1 += alone1[k] != cap_x0[k];
        ck_assert((alone0[k] != cap_x0[k]) != (alone1[k] != cap_x0[k]));
    }
    ck_assert_int_eq(moved0, 3);
    ck_assert_int_eq(moved1, 3);
    /* together, interleaved (10 and 13 ms steps) or at the same instants
     * (node 1 then alone at 10 ms too), added or stored: each block is
     * its core's alone */
    double alone1_fast[MAXP];
    run_with(&alg_hogwild, 0, DISJOINT("1e6", "1"), &res);
    memcpy(alone1_fast, cap_x, sizeof alone1_fast);
    const char *const together[] = { DISJOINT("1", "1.3"), DISJOINT("1", "1") };
    const double *const ref1[] = { alone1, alone1_fast };
    for (int t = 0; t < 2; t++)
        for (int write = 0; write < 2; write++) {
            run_with(&alg_hogwild, write, together[t], &res);
            ck_assert_double_eq(stat_of(&res, "coordinates_conflicted"), 0);
            for (size_t k = 0; k < 6; k++)
                ck_assert_double_eq(cap_x[k], alone0[k] != cap_x0[k] ? alone0[k] : ref1[t][k]);
        }
}
END_TEST

#define TWO_DENSE(slow0, stop) \
    "{\"seed\": 8, \"nodes\": 2," DENSE \
    " \"compute\": {\"step_time_s\": 0.01, \"groups\": [{\"nodes\": [0], \"slowdown\": " \
    slow0 "}]}," \
    " \"algorithm\": {\"name\": \"hogwild\", \"lr\": 0.05, \"batch\": 8}," \
    " \"stop\": {\"time_s\": " stop "}}"

/* Dense updates, both cores every 10 ms: write 1 (node 0 at 10 ms) finds
 * nothing written since the reads at 0, every later write finds the other
 * core's write after its own read: 2 x 10 - 1 conflicted writes of all 13
 * coordinates by 105 ms. */
START_TEST(test_dense_conflicts_closed_form)
{
    run_result res;
    run_with(&alg_hogwild, 0, TWO_DENSE("1", "0.105"), &res);
    ck_assert_double_eq(stat_of(&res, "writes"), 20);
    ck_assert_double_eq(stat_of(&res, "coordinates_written"), 20 * 13);
    ck_assert_double_eq(stat_of(&res, "coordinates_conflicted"), 19 * 13);
    ck_assert_double_eq(stat_of(&res, "coordinates_with_conflicts"), 13);
    ck_assert_double_eq(stat_of(&res, "most_conflicts_per_coordinate"), 19);
    ck_assert_double_eq_tol(stat_of(&res, "conflict_share"), 19.0 / 20, 1e-15);
}
END_TEST

/* One write each at 10 ms, node 0's first: overwrite leaves node 1's
 * update alone (node 0's is lost), add leaves x0 + both changes. */
START_TEST(test_lost_and_added_updates)
{
    run_result res;
    double only0[MAXP], only1[MAXP], x0[MAXP];
    run_with(&alg_hogwild, 0, TWO_DENSE("1e6", "0.015"), &res);   /* node 1 alone */
    memcpy(only1, cap_x, sizeof only1);
    memcpy(x0, cap_x0, sizeof x0);
    /* node 0 alone: the slow one is node 1 */
    run_with(&alg_hogwild, 0,
             "{\"seed\": 8, \"nodes\": 2," DENSE
             " \"compute\": {\"step_time_s\": 0.01, \"groups\": [{\"nodes\": [1],"
             "  \"slowdown\": 1e6}]},"
             " \"algorithm\": {\"name\": \"hogwild\", \"lr\": 0.05, \"batch\": 8},"
             " \"stop\": {\"time_s\": 0.015}}", &res);
    memcpy(only0, cap_x, sizeof only0);
    run_with(&alg_hogwild, 1, TWO_DENSE("1", "0.015"), &res);
    ck_assert_double_eq(stat_of(&res, "coordinates_conflicted"), 13);
    for (size_t k = 0; k < cap_P; k++)
        ck_assert_double_eq(cap_x[k], only1[k]);
    run_with(&alg_hogwild, 0, TWO_DENSE("1", "0.015"), &res);
    for (size_t k = 0; k < cap_P; k++) {
        ck_assert_double_ne(only0[k], x0[k]);
        ck_assert_double_eq(cap_x[k], only0[k] + (only1[k] - x0[k]));
    }
}
END_TEST

/* A core that crashes loses its step and reads afresh when back; the
 * other never waits: 2 cores, node 1 down from 25 to 52 ms, 10 ms steps:
 * node 0 writes 10 times by 105 ms, node 1 at 10, 20 and then (restarted
 * at 52) 62, 72, 82, 92, 102 ms. */
START_TEST(test_crashed_core_is_not_waited_for)
{
    run_result res;
    run_with(&alg_hogwild, 0,
             "{\"seed\": 8, \"nodes\": 2," DENSE
             " \"compute\": {\"step_time_s\": 0.01},"
             " \"faults\": {\"events\": [{\"kind\": \"schedule\", \"nodes\": [1],"
             "  \"down_s\": 0.025, \"up_s\": 0.052}]},"
             " \"algorithm\": {\"name\": \"hogwild\", \"lr\": 0.05, \"batch\": 8},"
             " \"stop\": {\"time_s\": 0.105}}", &res);
    ck_assert_double_eq(stat_of(&res, "writes"), 10 + 7);
    /* conflicted: writes 2-5 (both cores, then node 0 at 30 ms over node
     * 1's last), none while node 1 is down or before its first new write,
     * then every write from 62 ms on (9): 13 writes of 13 coordinates */
    ck_assert_double_eq(stat_of(&res, "coordinates_conflicted"), 13 * 13);
}
END_TEST

START_TEST(test_bad_parameters)
{
    expect_prepare_error("{\"nodes\": 2," DENSE
                         " \"algorithm\": {\"name\": \"hogwild\", \"write\": \"swap\"},"
                         " \"stop\": {\"steps\": 10}}",
                         "test.json: /algorithm/write: error: unknown value \"swap\" "
                         "(expected one of: add, overwrite)");
    expect_prepare_error("{\"nodes\": 2, \"model\": {\"kind\": \"softmax\", \"bias\": false},"
                         " \"algorithm\": {\"name\": \"hogwild\"}, \"stop\": {\"steps\": 10}}",
                         "test.json: /model: error: key \"bias\" is not allowed with kind "
                         "\"softmax\"");
}
END_TEST

static Suite *hogwild_suite(void)
{
    Suite *s = suite_create("hogwild");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, test_one_core_is_sequential_sgd);
    tcase_add_test(tc, test_disjoint_supports_any_order);
    tcase_add_test(tc, test_dense_conflicts_closed_form);
    tcase_add_test(tc, test_lost_and_added_updates);
    tcase_add_test(tc, test_crashed_core_is_not_waited_for);
    tcase_add_test(tc, test_bad_parameters);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    SRunner *sr = srunner_create(hogwild_suite());
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
