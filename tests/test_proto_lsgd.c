/* test_proto_lsgd.c -- LSGD (alg_lsgd.c) pinned by exact outcomes with
 * lr 0 on a hand-made case: the softmax model with zero weights has the
 * loss ln 3 on every batch (so does one whose biases are all 1: the
 * softmax subtracts the row maximum, the same bits), while the models
 * 4 (i + 1) - 0.5 k are far worse; so the leader, the argmin of the
 * reported losses, is known by hand.  Pinned: each pull multiplies the
 * distance to the leader by exactly 1 - lambda (three rounds: 1/8); two
 * groups and a global round (local pull, then global, the leader of the
 * losing group pulled globally only); the bytes of a local and a global
 * round; a leader that crashes after its election is replaced by the best
 * live worker and the group goes on; a group whose workers all failed is
 * not waited for by the global rounds; located parameter errors.  The
 * losses each worker's steps gave are read through a wrapper (they check
 * alg_step_loss too), the models at the end through the stats hook.
 */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "alg.h"
#include "test_util.h"

extern const alg_type alg_lsgd;

#define MAXN 8
#define MAXP 40
#define MAXSTEPS 16

static alg_type wrapped;
static double cap_x[MAXN][MAXP];
static double losses[MAXN][MAXSTEPS];
static int n_losses[MAXN];
static size_t cap_P;

enum { BIG, ZERO, SHIFTED };
static int kind[MAXN];

static double init_of(int i, size_t k)
{
    if (kind[i] == ZERO)
        return 0;
    if (kind[i] == SHIFTED)
        return k >= 30 ? 1 : 0;   /* W (3 x 10) zero, the 3 biases 1 */
    return 4.0 * (i + 1) - 0.5 * (double)k;
}

static void set_init(void *ctx, int node, double *x, size_t P)
{
    (void)ctx;
    for (size_t k = 0; k < P; k++)
        x[k] = node < MAXN ? init_of(node, k) : 0;
}

static void w_step_done(alg_ctx *ctx, void *state, int i, const double *grad)
{
    if (i < MAXN && n_losses[i] < MAXSTEPS)
        losses[i][n_losses[i]++] = alg_step_loss(ctx, i);
    alg_lsgd.on_step_done(ctx, state, i, grad);
}

static int capture(const alg_ctx *ctx, const char **keys, double *values, int max)
{
    ck_assert_int_le(ctx->n, MAXN);
    ck_assert_uint_le(ctx->P, MAXP);
    cap_P = ctx->P;
    for (int i = 0; i < ctx->n; i++)
        memcpy(cap_x[i], alg_params_const(ctx, i), ctx->P * sizeof(double));
    return alg_lsgd.stats(ctx, keys, values, max);
}

/* The replacement protocol takes its parameters from its own table: the
 * defaults are set to the scenario's values (groups, period,
 * global_rounds, lambda_local, lambda_global, loss_window). */
static alg_param_spec spec[7];
static void run_ls(const char *json, const double *p, run_result *res)
{
    wrapped = alg_lsgd;
    for (int k = 0; k < 7; k++)
        spec[k] = alg_lsgd.params[k];
    for (int k = 0; k < 6; k++)
        spec[k].def = p[k];
    wrapped.params = spec;
    wrapped.on_step_done = w_step_done;
    wrapped.stats = capture;
    memset(n_losses, 0, sizeof n_losses);
    run_options opt = { .algorithm = &wrapped, .init_params = set_init };
    run_json(json, &opt, res);
    ck_assert_msg(res->status == RUN_OK, "%s", res->message);
}

#define SOFTMAX \
    " \"model\": {\"kind\": \"softmax\"}, \"data\": {\"train\": 1024, \"test\": 128," \
    " \"features\": 10, \"classes\": 3},"
#define FAST " \"network\": {\"latency_s\": 0.0001, \"bandwidth_Bps\": 1e9},"

/* Every loss worker i's steps gave is ln 3 (a zero-weight model) or far
 * above it. */
static void check_losses(int i, int best)
{
    ck_assert_int_gt(n_losses[i], 0);
    for (int s = 0; s < n_losses[i]; s++)
        if (best)
            ck_assert_double_eq_tol(losses[i][s], log(3.0), 1e-14);
        else
            ck_assert_double_gt(losses[i][s], log(3.0) + 0.5);
}

/* One group of 4, tau = 1, lambda_L = 1/2, lambda_G = 0, 10 ms steps, fast
 * links: worker 2 holds the zero model, the best loss, so it leads every
 * round; the rounds end about 0.4 ms after each step (loss, request,
 * model, relay), so by 35 ms three are done and each moved every other
 * worker halfway to the leader: x_i = x_i(0) / 8, bit for bit.  Bytes per
 * round: 4 losses of 8 bytes, the leader's model to the server and the
 * server's to the 3 others (33 x 4 bytes each): 560. */
START_TEST(test_distance_to_leader_closed_form)
{
    for (int i = 0; i < 4; i++)
        kind[i] = i == 2 ? ZERO : BIG;
    run_result res;
    const double p[] = { 1, 1, 1, 0.5, 0, 1 };
    run_ls("{\"seed\": 2, \"nodes\": 4," SOFTMAX
           " \"compute\": {\"step_time_s\": 0.01}," FAST
           " \"algorithm\": {\"name\": \"lsgd\", \"lr\": 0, \"period\": 1, \"lambda_local\": 0.5,"
           "  \"lambda_global\": 0, \"loss_window\": 1},"
           " \"stop\": {\"time_s\": 0.035}}", p, &res);
    ck_assert_uint_eq(cap_P, 33);
    ck_assert_double_eq(stat_of(&res, "rounds"), 3);
    ck_assert_double_eq(stat_of(&res, "leader_last"), 2);
    ck_assert_double_eq(res.last.steps, 12);
    ck_assert_double_eq(res.last.bytes_sent, 3 * (4 * 8 + 4 * 33 * 4));
    for (int i = 0; i < 4; i++) {
        check_losses(i, i == 2);
        for (size_t k = 0; k < cap_P; k++)
            ck_assert_double_eq(cap_x[i][k], init_of(i, k) / 8);
    }
}
END_TEST

/* Two groups {0, 1} and {2, 3}, tau = 1, a global round every 2, lambda_L
 * = 1/2, lambda_G = 1/4; worker 3 holds the zero model.  Round 1 (local):
 * group 0's leader L (the lower loss of 0 and 1 at their first step) pulls
 * the other halfway; worker 2 halves.  Round 2 (global): group 1's leader
 * 3 has the lowest loss, so it is the global leader; group 0's new leader
 * L' pulls the other locally, then every worker of group 0 is pulled
 * toward 0 with 1/4 (L' globally only); worker 2 is pulled twice toward
 * 0 (1/2, then 1/4).  Bytes: round 1, 2 x (2 losses + 2 models) = 560;
 * round 2, 4 losses, 2 models up, group 1's loss to the global server
 * (8), the global model to server 0 (132), the relays 2 + 1 models to
 * group 0 and 1 to worker 2: 964. */
START_TEST(test_groups_and_global_round)
{
    for (int i = 0; i < 4; i++)
        kind[i] = i == 3 ? ZERO : BIG;
    run_result res;
    const double p[] = { 2, 1, 2, 0.5, 0.25, 1 };
    const char *json0 = "{\"seed\": 2, \"nodes\": 4," SOFTMAX
           " \"compute\": {\"step_time_s\": 0.01}," FAST
           " \"algorithm\": {\"name\": \"lsgd\", \"lr\": 0, \"groups\": 2, \"period\": 1,"
           "  \"global_rounds\": 2, \"lambda_local\": 0.5, \"lambda_global\": 0.25,"
           "  \"loss_window\": 1},"
           " \"stop\": {\"time_s\": 0.015}}";
    run_ls(json0, p, &res);   /* round 1 only: local */
    ck_assert_double_eq(stat_of(&res, "rounds"), 2);
    ck_assert_double_eq(stat_of(&res, "global_rounds"), 0);
    ck_assert_double_eq(res.last.bytes_sent, 560);
    run_ls("{\"seed\": 2, \"nodes\": 4," SOFTMAX
           " \"compute\": {\"step_time_s\": 0.01}," FAST
           " \"algorithm\": {\"name\": \"lsgd\", \"lr\": 0, \"groups\": 2, \"period\": 1,"
           "  \"global_rounds\": 2, \"lambda_local\": 0.5, \"lambda_global\": 0.25,"
           "  \"loss_window\": 1},"
           " \"stop\": {\"time_s\": 0.025}}", p, &res);
    ck_assert_double_eq(stat_of(&res, "rounds"), 4);
    ck_assert_double_eq(stat_of(&res, "global_rounds"), 1);
    ck_assert_double_eq(stat_of(&res, "global_leader_last"), 3);
    ck_assert_double_eq(res.last.steps, 8);
    ck_assert_double_eq(res.last.bytes_sent, 560 + 964);
    ck_assert_int_eq(n_losses[0], 2);
    ck_assert_int_eq(n_losses[1], 2);
    check_losses(3, 1);
    check_losses(2, 0);
    int L = losses[1][0] < losses[0][0], N = 1 - L;
    double x[2][MAXP];
    for (size_t k = 0; k < cap_P; k++) {
        x[L][k] = init_of(L, k);
        x[N][k] = init_of(N, k);
        x[N][k] -= 0.5 * (x[N][k] - x[L][k]);   /* round 1 */
    }
    int L2 = losses[1][1] < losses[0][1], N2 = 1 - L2;
    for (size_t k = 0; k < cap_P; k++) {
        x[N2][k] -= 0.5 * (x[N2][k] - x[L2][k]);   /* round 2: local, then global */
        x[N2][k] -= 0.25 * (x[N2][k] - 0);
        x[L2][k] -= 0.25 * (x[L2][k] - 0);
        double x2 = init_of(2, k) / 2;
        x2 -= 0.5 * x2;
        x2 -= 0.25 * x2;
        ck_assert_double_eq(cap_x[0][k], x[0][k]);
        ck_assert_double_eq(cap_x[1][k], x[1][k]);
        ck_assert_double_eq(cap_x[2][k], x2);
        ck_assert_double_eq(cap_x[3][k], 0);
        ck_assert_double_ne(cap_x[N2][k], init_of(N2, k));
    }
}
END_TEST

/* One group of 4, tau = 1, lambda_L = 1/2, 5 ms latency, no
 * retransmission, detect_s 10 ms.  Workers 0 (biases 1) and 3 (zero) tie
 * at ln 3: worker 0, the lower node, is elected when the losses are in at
 * 15 ms; it goes down for good at 17 ms and the request (due at 20 ms) is
 * lost.  Declared failed at 27 ms, it is replaced by worker 3, the best
 * live one: its model reaches the server at 37 ms and the others' at 42
 * ms, so workers 1 and 2 halve toward 0 (not toward worker 0's biases).
 * The next round needs no worker 0: losses in at 57 ms, relays at 72 ms;
 * by 80 ms two rounds, one re-election, 4 + 3 steps. */
START_TEST(test_crashed_leader_replaced)
{
    for (int i = 0; i < 4; i++)
        kind[i] = i == 0 ? SHIFTED : i == 3 ? ZERO : BIG;
    run_result res;
    const double p[] = { 1, 1, 1, 0.5, 0, 1 };
    run_ls("{\"seed\": 2, \"nodes\": 4," SOFTMAX
           " \"compute\": {\"step_time_s\": 0.01},"
           " \"network\": {\"latency_s\": 0.005, \"bandwidth_Bps\": 1e9, \"retransmit\": false},"
           " \"faults\": {\"detect_s\": 0.01, \"events\": [{\"kind\": \"schedule\", \"nodes\": [0],"
           "   \"down_s\": 0.017}]},"
           " \"algorithm\": {\"name\": \"lsgd\", \"lr\": 0, \"period\": 1, \"lambda_local\": 0.5,"
           "  \"lambda_global\": 0, \"loss_window\": 1},"
           " \"stop\": {\"time_s\": 0.08}}", p, &res);
    ck_assert_str_eq(res.stop_reason, "time");
    ck_assert_double_eq(stat_of(&res, "reelections"), 1);
    ck_assert_double_eq(stat_of(&res, "rounds"), 2);
    ck_assert_double_eq(stat_of(&res, "leader_last"), 3);
    ck_assert_double_eq(res.last.steps, 7);
    check_losses(0, 1);
    check_losses(3, 1);
    for (size_t k = 0; k < cap_P; k++) {
        ck_assert_double_eq(cap_x[0][k], init_of(0, k));
        ck_assert_double_eq(cap_x[1][k], init_of(1, k) / 4);
        ck_assert_double_eq(cap_x[2][k], init_of(2, k) / 4);
        ck_assert_double_eq(cap_x[3][k], 0);
    }
}
END_TEST

/* Two groups, a global round every round, timing-only model; group 1's
 * workers (2, 3) are down for good from 5 ms: once both are declared
 * failed (15 ms) the global server stops waiting for group 1 and group 0
 * goes on alone: 10 ms steps and free links, so its rounds end every 10
 * ms from 20 ms (the first waited for the declarations): 2 workers x 9
 * steps by 100 ms, plus nothing from the dead group. */
START_TEST(test_dead_group_not_waited_for)
{
    for (int i = 0; i < 4; i++)
        kind[i] = BIG;
    run_result res;
    const double p[] = { 2, 1, 1, 0.1, 0.1, 10 };
    run_ls("{\"seed\": 2, \"nodes\": 4, \"model\": {\"kind\": \"none\", \"message_bytes\": 1000},"
           " \"compute\": {\"step_time_s\": 0.01},"
           " \"network\": {\"latency_s\": 0, \"bandwidth_Bps\": 1e15},"
           " \"faults\": {\"detect_s\": 0.01, \"events\": [{\"kind\": \"schedule\", \"nodes\": [2, 3],"
           "   \"down_s\": 0.005}]},"
           " \"algorithm\": {\"name\": \"lsgd\", \"lr\": 0, \"groups\": 2, \"period\": 1},"
           " \"stop\": {\"time_s\": 0.1}, \"metrics\": {\"every_s\": 0.05}}", p, &res);
    ck_assert_str_eq(res.stop_reason, "time");
    ck_assert_int_eq(n_losses[2] + n_losses[3], 0);
    ck_assert_int_eq(n_losses[0], 9);
    ck_assert_int_eq(n_losses[1], 9);
    ck_assert(isnan(losses[0][0]));   /* no loss without a model */
    ck_assert_double_eq(stat_of(&res, "global_rounds"), 9);
}
END_TEST

/* Two workers in one group, tau = 3, loss_window 4, lr 0 (a global round
 * every round): the loss each reports is the mean of its last
 * min(steps, 4) minibatch losses, and the global leader's is the lower
 * one: after round 1 the mean of 3, after round 3 of steps 6-9. */
START_TEST(test_recent_loss_window)
{
    for (int i = 0; i < 2; i++)
        kind[i] = BIG;
    const double p[] = { 1, 3, 1, 0, 0, 4 };
    for (int rounds = 1; rounds <= 3; rounds += 2) {
        run_result res;
        char json[1024];
        snprintf(json, sizeof json, "{\"seed\": 2, \"nodes\": 2," SOFTMAX
                 " \"compute\": {\"step_time_s\": 0.01}," FAST
                 " \"algorithm\": {\"name\": \"lsgd\", \"lr\": 0, \"period\": 3,"
                 "  \"lambda_local\": 0, \"lambda_global\": 0, \"loss_window\": 4},"
                 " \"stop\": {\"time_s\": %g}}", 0.0305 * rounds + 0.001);
        run_ls(json, p, &res);
        ck_assert_double_eq(stat_of(&res, "global_rounds"), rounds);
        ck_assert_int_eq(n_losses[0], 3 * rounds);
        double best = INFINITY;
        for (int i = 0; i < 2; i++) {
            int hi = 3 * rounds, lo = hi > 4 ? hi - 4 : 0;
            double sum = 0;
            for (int s = lo; s < hi; s++)
                sum += losses[i][s];
            best = fmin(best, sum / (hi - lo));
        }
        ck_assert_double_eq_tol(stat_of(&res, "global_leader_loss"), best, 1e-12);
    }
}
END_TEST

/* Random failures of every node, servers included (exponential, mean 0.3
 * s up, 10 ms down; no worker is declared before it is back), 6 workers
 * in 2 and 3 groups with a global round every round, 16 seeds: what a
 * down server lost is asked again when it is back (its workers report
 * again, the servers waiting for a verdict send their loss again and the
 * global server repeats the winner's verdict or says skip), so every run
 * reaches its stop time, deterministically. */
START_TEST(test_server_failures_survived)
{
    for (int groups = 2; groups <= 3; groups++)
        for (int seed = 1; seed <= 16; seed++) {
            char json[1024];
            run_result res, again;
            snprintf(json, sizeof json,
                     "{\"seed\": %d, \"nodes\": 6, \"compute\": {\"step_time_s\": 0.01},"
                     " \"data\": {\"train\": 256, \"test\": 64, \"features\": 4, \"classes\": 2},"
                     " \"faults\": {\"events\": [{\"kind\": \"exponential\", \"mtbf_s\": 0.3,"
                     "   \"mttr_s\": 0.01}]},"
                     " \"algorithm\": {\"name\": \"lsgd\", \"lr\": 0.1, \"batch\": 8,"
                     "  \"groups\": %d, \"period\": 1},"
                     " \"stop\": {\"time_s\": 3}, \"metrics\": {\"every_s\": 1}}", seed, groups);
            run_json(json, NULL, &res);
            ck_assert_msg(res.status == RUN_OK, "groups %d seed %d: %s", groups, seed, res.message);
            ck_assert_str_eq(res.stop_reason, "time");
            run_json(json, NULL, &again);
            ck_assert_double_eq(res.last.train_loss, again.last.train_loss);
            ck_assert_double_eq(res.last.steps, again.last.steps);
        }
}
END_TEST

START_TEST(test_lsgd_options_checked)
{
    expect_prepare_error("{\"nodes\": 4, \"algorithm\": {\"name\": \"lsgd\", \"groups\": 5},"
                         " \"stop\": {\"steps\": 5}}",
                         "test.json: /algorithm/name: error: lsgd needs at least one worker per "
                         "group: 5 groups, 4 workers");
    expect_prepare_error("{\"nodes\": 4, \"algorithm\": {\"name\": \"lsgd\", \"lambda_local\": 1.5},"
                         " \"stop\": {\"steps\": 5}}",
                         "test.json: /algorithm/lambda_local: error: must be in [0, 1], got 1.5");
    expect_prepare_error("{\"nodes\": 4, \"algorithm\": {\"name\": \"lsgd\", \"loss_window\": 0},"
                         " \"stop\": {\"steps\": 5}}",
                         "test.json: /algorithm/loss_window: error: must be in [1, 1000], got 0");
    expect_prepare_error("{\"nodes\": 4, \"algorithm\": {\"name\": \"lsgd\", \"global_rounds\": 0},"
                         " \"stop\": {\"steps\": 5}}",
                         "test.json: /algorithm/global_rounds: error: must be in [1, 1e+09], got 0");
}
END_TEST

int main(void)
{
    Suite *su = suite_create("proto_lsgd");
    TCase *tc = tcase_create("lsgd");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, test_distance_to_leader_closed_form);
    tcase_add_test(tc, test_groups_and_global_round);
    tcase_add_test(tc, test_crashed_leader_replaced);
    tcase_add_test(tc, test_dead_group_not_waited_for);
    tcase_add_test(tc, test_recent_loss_window);
    tcase_add_test(tc, test_server_failures_survived);
    tcase_add_test(tc, test_lsgd_options_checked);
    suite_add_tcase(su, tc);
    SRunner *sr = srunner_create(su);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
