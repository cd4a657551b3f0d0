/* test_proto_easgd.c -- asynchronous EASGD (alg_easgd.c) pinned by exact
 * outcomes with lr 0: one worker's distance to the center shrinks by
 * exactly 1 - 2 alpha per exchange, and the sum of worker and center is
 * kept; with four workers of different speeds and tau = 2 the sum of every
 * model and the center is kept and the exchanges (and so the bytes, two
 * models per exchange) are the hand-counted ones; a worker whose reply
 * takes longer than its step waits for it (hand-computed timeline); the
 * parameters are checked with located errors.  Models are read at time 0
 * (the server's initial center) and at the end through a wrapper.
 */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "alg.h"
#include "test_util.h"

extern const alg_type alg_easgd;

#define MAXN 8
#define MAXP 40

static alg_type wrapped;
static double x0_center[MAXP], cap_x[MAXN + 1][MAXP];
static size_t cap_P;
static int cap_n;

static void w_start(alg_ctx *ctx, void *state, int i)
{
    if (i == ctx->server)
        memcpy(x0_center, alg_params_const(ctx, i), ctx->P * sizeof(double));
    alg_easgd.on_start(ctx, state, i);
}

static int capture(const alg_ctx *ctx, const char **keys, double *values, int max)
{
    ck_assert_int_le(ctx->n_all, MAXN + 1);
    ck_assert_uint_le(ctx->P, MAXP);
    cap_P = ctx->P;
    cap_n = ctx->n;
    for (int i = 0; i < ctx->n_all; i++)
        memcpy(cap_x[i], alg_params_const(ctx, i), ctx->P * sizeof(double));
    return alg_easgd.stats(ctx, keys, values, max);
}

static double init_of(int i, size_t k) { return 4.0 * (i + 1) - 0.5 * (double)k; }
static void set_init(void *ctx, int node, double *x, size_t P)
{
    (void)ctx;
    for (size_t k = 0; k < P; k++)
        x[k] = init_of(node, k);
}

/* The replacement protocol takes its parameters from its own table: the
 * defaults are set to the scenario's values. */
static alg_param_spec spec[4];
static void run_ea(const char *json, double period, double beta, run_result *res)
{
    wrapped = alg_easgd;
    for (int k = 0; k < 3; k++)
        spec[k] = alg_easgd.params[k];
    spec[0].def = period;
    spec[1].def = beta;
    wrapped.params = spec;
    wrapped.on_start = w_start;
    wrapped.stats = capture;
    run_options opt = { .algorithm = &wrapped, .init_params = set_init };
    run_json(json, &opt, res);
    ck_assert_msg(res->status == RUN_OK, "%s", res->message);
}

#define SOFTMAX \
    " \"model\": {\"kind\": \"softmax\"}, \"data\": {\"train\": 1024, \"test\": 128," \
    " \"features\": 10, \"classes\": 3},"

/* One worker, beta 0.25 (alpha = 0.25), tau = 1, 10 ms steps, fast links:
 * exchanges begin at 0, 10, 20 and 30 ms and each reply is back 0.2 ms
 * later; each multiplies x - x~ by 1 - 2 alpha = 1/2, so by 35 ms x - x~
 * = (a - c) / 16, and x + x~ = a + c throughout. */
START_TEST(test_one_worker_closed_form)
{
    run_result res;
    run_ea("{\"seed\": 2, \"nodes\": 1," SOFTMAX
           " \"compute\": {\"step_time_s\": 0.01},"
           " \"network\": {\"latency_s\": 0.0001, \"bandwidth_Bps\": 1e9},"
           " \"algorithm\": {\"name\": \"easgd\", \"lr\": 0, \"period\": 1, \"beta\": 0.25},"
           " \"stop\": {\"time_s\": 0.035}}", 1, 0.25, &res);
    ck_assert_uint_eq(cap_P, 33);
    ck_assert_double_eq(stat_of(&res, "exchanges"), 4);
    for (size_t k = 0; k < cap_P; k++) {
        double a = init_of(0, k), c = x0_center[k];
        ck_assert_double_eq_tol(cap_x[0][k] - cap_x[1][k], (a - c) / 16, 1e-12);
        ck_assert_double_eq_tol(cap_x[0][k] + cap_x[1][k], a + c, 1e-12);
    }
}
END_TEST

/* Four workers, worker 0 three times slower, tau = 2, beta 0.9: workers
 * 1-3 exchange at steps 0, 2, ..., 10 (0 to 100 ms: 6 each), worker 0 at
 * steps 0 and 2 (0 and 60 ms; its step 4 would begin at 120 ms): 20
 * exchanges, 2 x 33 x 4 bytes each; every exchange keeps sum x_i + x~. */
START_TEST(test_sum_kept_and_exchanges_counted)
{
    run_result res;
    run_ea("{\"seed\": 2, \"nodes\": 4," SOFTMAX
           " \"compute\": {\"step_time_s\": 0.01, \"groups\": [{\"nodes\": [0], \"slowdown\": 3}]},"
           " \"network\": {\"latency_s\": 0.0001, \"bandwidth_Bps\": 1e9},"
           " \"algorithm\": {\"name\": \"easgd\", \"lr\": 0, \"period\": 2},"
           " \"stop\": {\"time_s\": 0.105}}", 2, 0.9, &res);
    ck_assert_double_eq(stat_of(&res, "exchanges"), 20);
    ck_assert_double_eq(stat_of(&res, "alpha"), 0.9 / 4);
    ck_assert_double_eq(res.last.bytes_sent, 20.0 * 2 * 33 * 4);
    for (size_t k = 0; k < cap_P; k++) {
        double want = x0_center[k], got = cap_x[4][k];
        for (int i = 0; i < 4; i++) {
            want += init_of(i, k);
            got += cap_x[i][k];
        }
        ck_assert_double_eq_tol(got, want, 1e-12);
        ck_assert_double_ne(cap_x[1][k], init_of(1, k));   /* the force did act */
    }
}
END_TEST

/* One worker, 12 ms latency each way: an exchange's reply comes 24 ms
 * after it began, so with tau = 1 the worker's step (10 ms) ends first and
 * it waits; exchanges begin every 24 ms (0, 24, 48, 72, 96 ms): by 100 ms
 * 4 are done, the worker waited 4 times and took 4 steps. */
START_TEST(test_waits_for_the_reply)
{
    run_result res;
    run_ea("{\"seed\": 2, \"nodes\": 1," SOFTMAX
           " \"compute\": {\"step_time_s\": 0.01},"
           " \"network\": {\"latency_s\": 0.012, \"bandwidth_Bps\": 1e9},"
           " \"algorithm\": {\"name\": \"easgd\", \"lr\": 0, \"period\": 1},"
           " \"stop\": {\"time_s\": 0.1}}", 1, 0.9, &res);
    ck_assert_double_eq(stat_of(&res, "exchanges"), 4);
    ck_assert_double_eq(stat_of(&res, "waits"), 4);
    ck_assert_double_eq(res.last.steps, 4);
}
END_TEST

/* Two workers, 12 ms latency, no retransmission; worker 1 is down from 5
 * ms to 50 ms, so the reply to its exchange of time 0 (due at 24 ms) is
 * lost: back up, it abandons that exchange and goes on (its step restarts
 * at 50 ms and ends at 60 ms, where its next exchange begins, then every
 * 24 ms: steps ending at 60, 70, 94, 118, 142, 166, 190 ms); worker 0's
 * end at 10, 34, ..., 178 ms (8 steps).  Kept waiting, worker 1 would
 * take one step. */
START_TEST(test_lost_reply_abandoned)
{
    run_result res;
    run_ea("{\"seed\": 2, \"nodes\": 2," SOFTMAX
           " \"compute\": {\"step_time_s\": 0.01},"
           " \"network\": {\"latency_s\": 0.012, \"bandwidth_Bps\": 1e9, \"retransmit\": false},"
           " \"faults\": {\"events\": [{\"kind\": \"schedule\", \"nodes\": [1],"
           "   \"down_s\": 0.005, \"up_s\": 0.05}]},"
           " \"algorithm\": {\"name\": \"easgd\", \"lr\": 0, \"period\": 1},"
           " \"stop\": {\"time_s\": 0.2}}", 1, 0.9, &res);
    ck_assert_double_eq(stat_of(&res, "exchanges_abandoned"), 1);
    ck_assert_double_eq(res.last.steps, 8 + 7);
}
END_TEST

START_TEST(test_easgd_options_checked)
{
    expect_prepare_error("{\"nodes\": 4, \"algorithm\": {\"name\": \"easgd\", \"beta\": 0},"
                         " \"stop\": {\"steps\": 5}}",
                         "test.json: /algorithm/beta: error: must be in [1e-09, 1], got 0");
    expect_prepare_error("{\"nodes\": 4, \"algorithm\": {\"name\": \"easgd\", \"period\": 0},"
                         " \"stop\": {\"steps\": 5}}",
                         "test.json: /algorithm/period: error: must be in [1, 1e+09], got 0");
}
END_TEST

int main(void)
{
    Suite *su = suite_create("proto_easgd");
    TCase *tc = tcase_create("easgd");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, test_one_worker_closed_form);
    tcase_add_test(tc, test_sum_kept_and_exchanges_counted);
    tcase_add_test(tc, test_waits_for_the_reply);
    tcase_add_test(tc, test_lost_reply_abandoned);
    tcase_add_test(tc, test_easgd_options_checked);
    suite_add_tcase(su, tc);
    SRunner *sr = srunner_create(su);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
