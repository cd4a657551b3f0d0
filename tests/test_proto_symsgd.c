/* test_proto_symsgd.c -- SymSGD (alg_symsgd.c) pinned by exact outcomes:
 * one core is sequential SGD bit for bit (the parameters of allreduce on
 * one node); for least squares, three cores of different speeds combined
 * after a round give sequential SGD over core 0's batches, then core 1's,
 * then core 2's (the reference is computed here from each step's own
 * minibatch curvature H and offset q = H w - g, read through
 * alg_step_hessian, whose values tests/test_models.c checks against finite
 * differences); a core that fails is left out of its round and not
 * waited for (hand-counted rounds); what the combiner needs is refused
 * before the run with located errors.
 */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "alg.h"
#include "test_util.h"

extern const alg_type alg_symsgd, alg_allreduce;

#define MAXP 8
#define MAXSTEPS 64

static alg_type wrapped;
static const alg_type *inner;
static double cap_x[MAXP], cap_x0[MAXP];
static size_t cap_P;
/* per core and step: the curvature and offset of its minibatch loss */
static double Hs[3][MAXSTEPS][MAXP * MAXP], qs[3][MAXSTEPS][MAXP];
static int n_steps[3];

static void w_start(alg_ctx *ctx, void *state, int i)
{
    if (i == 0)
        memcpy(cap_x0, alg_params_const(ctx, 0), ctx->P * sizeof(double));
    inner->on_start(ctx, state, i);
}

static void w_step_done(alg_ctx *ctx, void *state, int i, const double *g)
{
    const size_t P = ctx->P;
    if (i < 3 && n_steps[i] < MAXSTEPS && P <= MAXP) {
        double I[MAXP * MAXP] = { 0 };
        for (size_t j = 0; j < P; j++)
            I[j * P + j] = 1.0;
        const double *w = alg_params_const(ctx, i);
        double *H = Hs[i][n_steps[i]], *q = qs[i][n_steps[i]];
        ck_assert_int_eq(alg_step_hessian(ctx, i, w, I, P, H), 0);
        for (size_t a = 0; a < P; a++) {
            double hw = 0;
            for (size_t b = 0; b < P; b++)
                hw += H[a * P + b] * w[b];
            q[a] = hw - g[a];
        }
        n_steps[i]++;
    }
    inner->on_step_done(ctx, state, i, g);
}

static int capture(const alg_ctx *ctx, const char **keys, double *values, int max)
{
    ck_assert_uint_le(ctx->P, MAXP);
    cap_P = ctx->P;
    const double *x = inner->eval_params ? inner->eval_params(ctx) : alg_params_const(ctx, 0);
    memcpy(cap_x, x, ctx->P * sizeof(double));
    return inner->stats ? inner->stats(ctx, keys, values, max) : 0;
}

static alg_param_spec spec[3];
static double combiner_cost;   /* 0 unless a test sets it */
static void run_with(const alg_type *a, double round_steps, const char *json, run_result *res)
{
    inner = a;
    wrapped = *a;
    if (a == &alg_symsgd) {
        for (int k = 0; k < 3; k++)
            spec[k] = alg_symsgd.params[k];
        spec[0].def = round_steps;
        spec[1].def = combiner_cost;   /* 0: steps back to back */
        wrapped.params = spec;
    }
    wrapped.on_start = w_start;
    wrapped.on_step_done = w_step_done;
    wrapped.stats = capture;
    memset(n_steps, 0, sizeof n_steps);
    run_options opt = { .algorithm = &wrapped };
    run_json(json, &opt, res);
    ck_assert_msg(res->status == RUN_OK, "%s", res->message);
}

#define LSQ \
    " \"model\": {\"kind\": \"linear\", \"l2\": 0.01}," \
    " \"data\": {\"kind\": \"synthetic-regression\", \"train\": 600, \"test\": 60," \
    "  \"features\": 5},"

/* One core, 8 steps a round: allreduce's parameters after 40 steps. */
START_TEST(test_one_core_is_sequential_sgd)
{
    const char *json = "{\"seed\": 4, \"nodes\": 1," LSQ
        " \"compute\": {\"step_time_s\": 0.01},"
        " \"algorithm\": {\"name\": \"%s\", \"lr\": 0.1, \"batch\": 4},"
        " \"stop\": {%s}}";
    char j[2048];
    run_result res;
    double ref[MAXP];
    snprintf(j, sizeof j, json, "allreduce", "\"steps\": 40");
    run_with(&alg_allreduce, 0, j, &res);
    ck_assert_uint_eq(cap_P, 6);
    memcpy(ref, cap_x, sizeof ref);
    /* the fifth combination comes at 400 ms, as the 40th step ends (a
     * zero-delay timer): a time stop lets it happen */
    snprintf(j, sizeof j, json, "symsgd", "\"time_s\": 0.405");
    run_with(&alg_symsgd, 8, j, &res);
    ck_assert_uint_eq(res.last.steps, 40);
    ck_assert_int_eq(memcmp(ref, cap_x, cap_P * sizeof(double)), 0);
    ck_assert_double_eq(stat_of(&res, "rounds"), 5);
}
END_TEST

/* Three cores, 10, 15 and 20 ms steps, 5 steps a round: the round
 * combines at 100 ms; by 105 ms w_g is that combination. */
START_TEST(test_least_squares_combination_is_sequential)
{
    run_result res;
    run_with(&alg_symsgd, 5,
             "{\"seed\": 9, \"nodes\": 3," LSQ
             " \"compute\": {\"step_time_s\": 0.01, \"groups\": ["
             "   {\"nodes\": [1], \"slowdown\": 1.5}, {\"nodes\": [2], \"slowdown\": 2}]},"
             " \"algorithm\": {\"name\": \"symsgd\", \"lr\": 0.2, \"batch\": 4},"
             " \"stop\": {\"time_s\": 0.105}}", &res);
    ck_assert_double_eq(stat_of(&res, "rounds"), 1);
    ck_assert_double_eq(stat_of(&res, "cores_combined"), 3);
    const size_t P = cap_P;
    double w[MAXP], nw[MAXP];
    memcpy(w, cap_x0, sizeof w);
    for (int i = 0; i < 3; i++) {
        ck_assert_int_eq(n_steps[i], 5);
        for (int t = 0; t < 5; t++) {
            for (size_t a = 0; a < P; a++) {
                double g = -qs[i][t][a];
                for (size_t b = 0; b < P; b++)
                    g += Hs[i][t][a * P + b] * w[b];
                nw[a] = w[a] - 0.2 * g;
            }
            memcpy(w, nw, sizeof w);
        }
    }
    for (size_t a = 0; a < P; a++) {
        ck_assert_double_ne(cap_x[a], cap_x0[a]);
        ck_assert_msg(fabs(cap_x[a] - w[a]) <= 1e-12 * (1 + fabs(w[a])),
                      "coordinate %zu: combined %.17g, sequential %.17g", a, cap_x[a], w[a]);
    }
}
END_TEST

/* Three cores of 10 ms steps, 2 steps a round (rounds end at 20, 40,
 * ...); core 2 goes down at 25 ms and is declared failed at 35 ms: round 2
 * closes then without it, rounds 3 to 7 close every 20 ms (55 ... 135 ms);
 * back at 140 ms it restarts round 8 with the others (140 to 160 ms). */
START_TEST(test_failed_core_left_out)
{
    run_result res;
    run_with(&alg_symsgd, 2,
             "{\"seed\": 9, \"nodes\": 3," LSQ
             " \"compute\": {\"step_time_s\": 0.01},"
             " \"faults\": {\"detect_s\": 0.01, \"events\": [{\"kind\": \"schedule\","
             "   \"nodes\": [2], \"down_s\": 0.025, \"up_s\": 0.14}]},"
             " \"algorithm\": {\"name\": \"symsgd\", \"lr\": 0.2, \"batch\": 4},"
             " \"stop\": {\"time_s\": 0.165}}", &res);
    ck_assert_double_eq(stat_of(&res, "rounds"), 8);
    ck_assert_double_eq(stat_of(&res, "cores_left_out"), 6);
    ck_assert_double_eq(stat_of(&res, "cores_combined"), 3 + 6 * 2 + 3);
}
END_TEST

/* combiner_cost 2 with P = 6: 120 ms after each 10 ms step, so a round of
 * 2 steps takes 260 ms (rounds at 0.26, 0.52 and 0.78 s), and the
 * watchdog, told of the overhead, does not call the gaps a stall. */
START_TEST(test_combiner_time)
{
    run_result res;
    combiner_cost = 2;
    run_with(&alg_symsgd, 2,
             "{\"seed\": 9, \"nodes\": 2," LSQ
             " \"compute\": {\"step_time_s\": 0.01},"
             " \"algorithm\": {\"name\": \"symsgd\", \"lr\": 0.2, \"batch\": 4},"
             " \"stop\": {\"time_s\": 0.8}}", &res);
    combiner_cost = 0;
    ck_assert_double_eq(stat_of(&res, "rounds"), 3);
    ck_assert_uint_eq(res.last.steps, 2 * 7);   /* 6 in rounds, one more each at 0.79 s */
}
END_TEST

START_TEST(test_needs_refused)
{
    expect_prepare_error("{\"nodes\": 2, \"model\": {\"kind\": \"softmax\"},"
                         " \"algorithm\": {\"name\": \"symsgd\"}, \"stop\": {\"steps\": 10}}",
                         "test.json: /model/kind: error: symsgd needs a model with a Hessian "
                         "(linear or logistic), not \"softmax\"");
    expect_prepare_error("{\"nodes\": 2," LSQ " \"optimizer\": {\"momentum\": 0.9},"
                         " \"algorithm\": {\"name\": \"symsgd\"}, \"stop\": {\"steps\": 10}}",
                         "test.json: /optimizer/momentum: error: symsgd needs plain SGD with a "
                         "constant learning rate (its combiner is the product of the steps' "
                         "Jacobians I - lr H): no momentum, weight decay, schedule or warm-up");
    expect_prepare_error("{\"nodes\": 2, \"model\": {\"kind\": \"linear\"},"
                         " \"data\": {\"kind\": \"synthetic-regression\", \"train\": 100,"
                         "  \"test\": 10, \"features\": 6000},"
                         " \"algorithm\": {\"name\": \"symsgd\"}, \"stop\": {\"steps\": 10}}",
                         "test.json: /algorithm/name: error: symsgd's exact combiner needs 2 "
                         "P^2 doubles per core: 1.15 GB for P = 6001 and 2 cores (at most 1 GiB)");
    expect_prepare_error("{\"nodes\": 2," LSQ
                         " \"algorithm\": {\"name\": \"symsgd\", \"round_steps\": 0},"
                         " \"stop\": {\"steps\": 10}}",
                         "test.json: /algorithm/round_steps: error: must be in [1, 1e+09], got 0");
}
END_TEST

static Suite *symsgd_suite(void)
{
    Suite *s = suite_create("symsgd");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, test_one_core_is_sequential_sgd);
    tcase_add_test(tc, test_least_squares_combination_is_sequential);
    tcase_add_test(tc, test_failed_core_left_out);
    tcase_add_test(tc, test_combiner_time);
    tcase_add_test(tc, test_needs_refused);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    SRunner *sr = srunner_create(symsgd_suite());
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
