/* test_fail_sgp.c -- the decentralized averaging protocols keep training
 * when a node fails (issue 13, section 3): D-PSGD (static ring and
 * time-varying schedules) and SGP (push-sum, synchronous and tau-overlap),
 * with node 3 of 8 down for good from 30% of the run and down from 30% to
 * 50%, end at their stop time with status ok and the live nodes step at
 * least half as fast after the failure as before.  With lr 0 the mixing
 * rules' invariants are pinned: D-PSGD's sum of the live models is the
 * same in every round once the failed node is out (the sum of all eight
 * before), SGP's live push-sum mass and de-biased average stay those of
 * the last membership change.  Steps are counted by wrapping the
 * protocol's table (on_step_done, timed by alg_now).
 */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "alg_host.h"
#include "test_util.h"

enum { N = 8, DEAD = 3, MAX_ROUNDS = 128 };

#define TAU     0.125
#define T_FAIL  2.994
#define T_BACK  4.99
#define T_STOP  9.98

static alg_type wrapped;
static const alg_type *inner;
static int before[N], after[N];
/* D-PSGD, lr 0: per round, the sum of the live nodes' models at the end
 * of their step (the round's x_i^k), first coordinates */
enum { K = 4 };
static double live_sum[MAX_ROUNDS][K], all_sum[MAX_ROUNDS][K];
static int steps_of[N];

static void count_step(alg_ctx *ctx, void *state, int node, const double *grad)
{
    if (alg_now(ctx) < T_FAIL)
        before[node]++;
    else
        after[node]++;
    int r = steps_of[node]++;
    if (ctx->P >= K && r < MAX_ROUNDS) {
        const double *x = alg_params_const(ctx, node);
        for (int k = 0; k < K; k++) {
            all_sum[r][k] += x[k];
            if (node != DEAD)
                live_sum[r][k] += x[k];
        }
    }
    inner->on_step_done(ctx, state, node, grad);
}

static void spread_init(void *ctx, int node, double *x, size_t P)
{
    (void)ctx;
    for (size_t k = 0; k < P; k++)
        x[k] = sin(1.0 + node * 7.0 + (double)k);
}

typedef struct rates {
    double before, after;   /* steps per simulated second per live node */
} rates;

/* Runs `alg` (its name, then more keys) on 8 equal nodes with node 3 down
 * from T_FAIL (for good, or until T_BACK when transient); `model` 0: the
 * timing-only model, 1: softmax with lr 0 and spread initial models;
 * detect is faults.detect_s (0: the default). */
static rates run_failure(const char *name, const char *alg, int transient, int model,
                         double detect, run_result *res)
{
    char json[2048], up[64] = "", det[64] = "";
    if (transient)
        snprintf(up, sizeof up, ", \"up_s\": %g", T_BACK);
    if (detect > 0)
        snprintf(det, sizeof det, "\"detect_s\": %g, ", detect);
    snprintf(json, sizeof json,
        "{\"seed\": 5, \"nodes\": %d, \"compute\": {\"step_time_s\": %g},"
        " \"topology\": {\"kind\": \"ring\"},"
        " \"network\": {\"latency_s\": 0, \"bandwidth_Bps\": 1e15},"
        " %s,"
        " \"faults\": {%s\"events\": [{\"kind\": \"schedule\", \"nodes\": [%d],"
        "   \"down_s\": %g%s}]},"
        " \"algorithm\": {\"name\": \"%s, \"lr\": 0, \"batch\": 4},"
        " \"stop\": {\"time_s\": %g}, \"metrics\": {\"every_s\": 1}}",
        N, TAU,
        model ? "\"data\": {\"train\": 512, \"test\": 16, \"features\": 7, \"classes\": 3}"
              : "\"model\": {\"kind\": \"none\", \"message_bytes\": 1000}",
        det, DEAD, T_FAIL, up, alg, T_STOP);
    inner = alg_find(name);
    ck_assert_ptr_nonnull(inner);
    wrapped = *inner;
    wrapped.on_step_done = count_step;
    memset(before, 0, sizeof before);
    memset(after, 0, sizeof after);
    memset(steps_of, 0, sizeof steps_of);
    memset(live_sum, 0, sizeof live_sum);
    memset(all_sum, 0, sizeof all_sum);
    run_options opt = { .algorithm = &wrapped, .init_params = model ? spread_init : NULL };
    run_json(json, &opt, res);
    ck_assert_msg(res->status == RUN_OK, "%s: %s", alg, res->message);
    ck_assert_str_eq(res->stop_reason, "time");
    rates r = { 0, 0 };
    for (int i = 0; i < N; i++)
        if (i != DEAD) {
            r.before += before[i];
            r.after += after[i];
        }
    r.before /= (N - 1) * T_FAIL;
    r.after /= (N - 1) * (T_STOP - T_FAIL);
    return r;
}

/* The "Done when" of issue 13 for both protocols, with the default
 * detector delay. */
static const char *const table[][2] = {
    { "dpsgd", "dpsgd\"" },
    { "dpsgd", "dpsgd\", \"schedule\": \"one_peer_exponential\"" },
    { "dpsgd", "dpsgd\", \"schedule\": \"random_matching\"" },
    { "sgp", "sgp\"" },
    { "sgp", "sgp\", \"overlap\": 1" },
    { "sgp", "sgp\", \"overlap\": 2, \"graph\": \"exponential\"" },
    { "sgp", "sgp\", \"graph\": \"topology\"" },
    { "sgp", "sgp\", \"graph\": \"random_k_out\", \"peers\": 2" },
};

START_TEST(test_rate_after_failure)
{
    for (int transient = 0; transient <= 1; transient++) {
        run_result res;
        rates r = run_failure(table[_i][0], table[_i][1], transient, 0, 0, &res);
        fprintf(stderr, "rate %-60s %-9s before %.3f after %.3f steps/s per live node\n",
                table[_i][1], transient ? "transient" : "permanent", r.before, r.after);
        ck_assert_msg(r.after >= 0.5 * r.before, "%s (%s): %.3f steps/s per live node after "
                      "the failure, %.3f before", table[_i][1],
                      transient ? "transient" : "permanent", r.after, r.before);
        if (transient)
            ck_assert_msg(after[DEAD] > 0, "%s: the returned node never stepped", table[_i][1]);
        else
            ck_assert_int_eq(after[DEAD], 0);
    }
}
END_TEST

/* D-PSGD, lr 0, node 3 down for good at 2.994 inside its round 23 (its
 * model of round 23 was sent at 2.875 and mixed by its neighbours), declared
 * at 3.494: rounds 0 .. 23 mix all eight models with a doubly stochastic W,
 * so the sum of all eight is the same in each; rounds from 24 on mix the
 * seven live ones (node 3's weight moved to its neighbours' own), so their
 * sum is the same in each: to rounding, 1e-12. */
static void expect_live_sum(const char *alg)
{
    run_result res;
    run_failure("dpsgd", alg, 0, 1, 0.5, &res);
    int rounds = MAX_ROUNDS;   /* every live node finished these */
    for (int i = 0; i < N; i++)
        if (i != DEAD && steps_of[i] < rounds)
            rounds = steps_of[i];
    ck_assert_int_ge(rounds, 70);
    ck_assert_int_eq(steps_of[DEAD], 23);
    for (int r = 1; r < rounds && r < MAX_ROUNDS; r++)
        for (int k = 0; k < K; k++) {
            if (r <= 22)
                ck_assert_msg(fabs(all_sum[r][k] - all_sum[0][k]) < 1e-12, "%s: round %d: "
                              "sum %.17g, %.17g at round 0", alg, r, all_sum[r][k],
                              all_sum[0][k]);
            if (r > 24)
                ck_assert_msg(fabs(live_sum[r][k] - live_sum[24][k]) < 1e-12, "%s: round %d: "
                              "live sum %.17g, %.17g at round 24", alg, r, live_sum[r][k],
                              live_sum[24][k]);
        }
    /* the live models reach consensus on the live average */
    ck_assert(fabs(live_sum[rounds - 1][0] / 7 - live_sum[24][0] / 7) < 1e-12);
}

START_TEST(test_dpsgd_live_average)
{
    expect_live_sum("dpsgd\"");
    expect_live_sum("dpsgd\", \"schedule\": \"one_peer_exponential\"");
    expect_live_sum("dpsgd\", \"schedule\": \"random_matching\"");
}
END_TEST

/* SGP, lr 0: down for good, from the declaration on the weight the live
 * nodes hold is the same (exactly with synchronous SGP's dyadic weights;
 * to 1e-12 with overlap, whose dyadic weights outgrow 53 bits), their de-biased
 * average too (1e-12), and the live models converge to it; back at 4.99,
 * node 3 gets the shares retransmitted to it and the live nodes hold all
 * n again, exactly.  The whole ledger (every node, mailbox and share on
 * the wire; with tau > 0 the numerators too, the rejoin's change of node
 * 3's numerator counted) still adds up to n.  Down for good, the live nodes hold less than n: node 3's weight,
 * and the shares pushed to it after it went down, are lost with it.  With
 * the one-peer exponential graph every weight is 1 until the failure (each
 * node keeps 1/2 and gets 1/2), and node 3 (its in-neighbour in round k is
 * 3 - 2^(k mod 3)) takes with it its 1 and the halves pushed to it by node
 * 7 (round 23), node 2 (round 24) and node 1 (round 25) before the
 * declaration at 3.494 (node 7, waiting for node 3's share of round 23,
 * pushes nothing more, and its out-neighbours wait for it): 8 - 2.5 = 5.5. */
START_TEST(test_sgp_mass)
{
    static const char *const algs[] = { "sgp\"", "sgp\", \"overlap\": 1",
                                         "sgp\", \"overlap\": 2", "sgp\", \"graph\": \"topology\"" };
    for (int a = 0; a < 4; a++)
        for (int transient = 0; transient <= 1; transient++) {
            run_result res;
            run_failure("sgp", algs[a], transient, 1, 0.5, &res);
            const char *how = transient ? "transient" : "permanent";
            if (!transient) {
                ck_assert_msg(stat_of(&res, "live_weight_error") < 1e-12, "%s %s: %.3g", algs[a],
                              how, stat_of(&res, "live_weight_error"));
                ck_assert_msg(stat_of(&res, "live_average_error") < 1e-12, "%s %s: %.3g",
                              algs[a], how, stat_of(&res, "live_average_error"));
            } else if (a == 1 || a == 2) {   /* the ledger of numerators, tau > 0 */
                ck_assert_msg(stat_of(&res, "average_error") < 1e-12, "%s %s: %.3g", algs[a],
                              how, stat_of(&res, "average_error"));
            }
            if (a < 3)   /* one-peer graphs mix fast; a ring of seven does not in 7 s */
                ck_assert_msg(stat_of(&res, "live_consensus_error") < 1e-6, "%s %s: %.3g", algs[a],
                          how, stat_of(&res, "live_consensus_error"));
            ck_assert_msg(stat_of(&res, "weight_sum_error") < 1e-12, "%s %s: %.3g", algs[a], how,
                          stat_of(&res, "weight_sum_error"));
            double w = stat_of(&res, "live_weight");
            if (transient)   /* its weight back, and the shares retransmitted to it */
                ck_assert_msg(fabs(w - N) < 1e-12, "%s: live weight %.17g after the return",
                              algs[a], w);
            else if (a == 0)   /* see above */
                ck_assert_msg(w == 5.5, "%s: live weight %.17g", algs[a], w);
            else
                ck_assert_msg(w < N - 1 && w > N - 4, "%s: live weight %.17g", algs[a], w);
        }
}
END_TEST

int main(void)
{
    Suite *s = suite_create("fail_sgp");
    TCase *tc = tcase_create("fail_sgp");
    tcase_set_timeout(tc, 60);
    tcase_add_loop_test(tc, test_rate_after_failure, 0, (int)(sizeof table / sizeof table[0]));
    tcase_add_test(tc, test_dpsgd_live_average);
    tcase_add_test(tc, test_sgp_mass);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
