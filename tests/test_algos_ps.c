/* test_algos_ps.c -- the parameter-server protocols (ps-async, ps-sync,
 * ssp, ringmaster, rennala, backup, fedavg) end to end: each converges on
 * the small synthetic problem to a loss plain SGD reaches, and each keeps
 * its invariant: the server NIC's closed form for ps-sync, steady staleness
 * n-1 and update rate sum(1/tau_i) for ps-async, the clock gap bound for
 * ssp, the delay bound for ringmaster, fresh full batches for rennala,
 * dropped late gradients for backup.
 */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "test_util.h"

START_TEST(test_ps_converge)
{
    static const char *algs[] = { "ps-async", "ps-sync", "ssp", "ringmaster", "rennala",
                                  "backup" };
    for (int a = 0; a < 6; a++)
        check_converges(algs[a], "{\"kind\": \"ring\"}");
}
END_TEST

START_TEST(test_fedavg_converges)
{
    /* 400 steps per node on average with half the clients per round: each
     * drawn client runs one epoch of 512/32 = 16 steps */
    double bar = sgd_reference_loss();
    char json[2048];
    snprintf(json, sizeof json,
        "{\"seed\": 3, \"nodes\": 8, %s, \"algorithm\": {\"name\": \"fedavg\", \"lr\": 0.1,"
        " \"batch\": 32, \"fraction\": 0.5}, \"stop\": {\"steps\": 400}}", problem);
    run_result res;
    run_json(json, NULL, &res);
    ck_assert_str_eq(res.stop_reason, "steps");
    ck_assert_msg(res.last.train_loss < bar + 0.02, "fedavg loss %.4f, SGD %.4f",
                  res.last.train_loss, bar);
}
END_TEST

/* n equal workers finishing together at T push M bytes each through the
 * server's downlink, then the server sends n models through its uplink:
 * the first iteration lasts exactly T + 2a + 2nM/B for the last worker
 * served (later iterations desynchronise the workers). */
START_TEST(test_ps_sync_server_bottleneck)
{
    static const int sizes[] = { 1, 2, 4, 7 };
    const double T = 1.0, a = 1e-3, B = 1e5, M = 256;
    for (int t = 0; t < 4; t++) {
        int n = sizes[t];
        char json[2048];
        snprintf(json, sizeof json,
            "{\"nodes\": %d, \"compute\": {\"step_time_s\": %.17g},"
            " \"network\": {\"latency_s\": %.17g, \"bandwidth_Bps\": %.17g},"
            " \"data\": {\"train\": 512, \"test\": 16, \"features\": 15, \"classes\": 4},"
            " \"algorithm\": {\"name\": \"ps-sync\", \"batch\": 4}, \"stop\": {\"steps\": 2}}",
            n, T, a, B);
        run_result res;
        run_json(json, NULL, &res);
        double iter = T + 2 * a + 2 * n * M / B;
        /* stops when the last worker's second step ends */
        ck_assert_msg(fabs(res.sim_time_s - (iter + T)) < 1e-12, "n=%d: %.17g, expected %.17g",
                      n, res.sim_time_s, iter + T);
        ck_assert_double_eq(stat_of(&res, "staleness_max"), 0);
        ck_assert_double_eq(stat_of(&res, "gradients_applied"), n);
    }
}
END_TEST

/* Deterministic step times tau_i = 0.01 * slowdown_i and free
 * communication: the server applies sum_i 1/tau_i updates per second, and
 * with equal workers every steady-state gradient is n-1 updates stale. */
START_TEST(test_ps_async_rate_and_staleness)
{
    char json[2048];
    snprintf(json, sizeof json,
        "{\"nodes\": 4, \"compute\": {\"step_time_s\": 0.01, \"groups\": [{\"nodes\": [1],"
        " \"slowdown\": 2}, {\"nodes\": [2, 3], \"slowdown\": 4}]},"
        " \"network\": {\"latency_s\": 0, \"bandwidth_Bps\": 1e300},"
        " \"data\": {\"train\": 512, \"test\": 16, \"features\": 4, \"classes\": 2},"
        " \"algorithm\": {\"name\": \"ps-async\", \"batch\": 4}, \"stop\": {\"time_s\": 10}}");
    run_result res;
    run_json(json, NULL, &res);
    double rate = 1 / 0.01 + 1 / 0.02 + 2 / 0.04;   /* 200 per second */
    double applied = stat_of(&res, "gradients_applied");
    ck_assert_msg(fabs(applied - rate * 10) <= 4, "applied %.0f, expected %.0f", applied, rate * 10);

    snprintf(json, sizeof json,
        "{\"nodes\": 6, \"compute\": {\"step_time_s\": 0.01},"
        " \"network\": {\"latency_s\": 0, \"bandwidth_Bps\": 1e300},"
        " \"data\": {\"train\": 512, \"test\": 16, \"features\": 4, \"classes\": 2},"
        " \"algorithm\": {\"name\": \"ps-async\", \"batch\": 4}, \"stop\": {\"steps\": 100}}");
    run_json(json, NULL, &res);
    /* first round 0..5, then always 5 (the run stops before the server has
     * applied the gradients pushed at the stopping instant) */
    applied = stat_of(&res, "gradients_applied");
    ck_assert(applied > 500 && applied <= 600);
    ck_assert_double_eq(stat_of(&res, "staleness_max"), 5);
    ck_assert_double_eq_tol(stat_of(&res, "staleness_mean"), (15.0 + (applied - 6) * 5) / applied,
                            1e-12);
}
END_TEST

START_TEST(test_ssp_clock_gap)
{
    for (int s = 0; s <= 3; s++) {
        char json[2048];
        snprintf(json, sizeof json,
            "{\"nodes\": 6, %s, \"algorithm\": {\"name\": \"ssp\", \"staleness\": %d},"
            " \"stop\": {\"time_s\": 2}}", problem, s);
        run_result res;
        run_json(json, NULL, &res);
        /* node 0 is 3x slower: the bound is reached, never passed */
        ck_assert_double_eq(stat_of(&res, "clock_gap_max"), s + 1);
    }
}
END_TEST

START_TEST(test_ringmaster_delay_bound)
{
    for (int R = 1; R <= 7; R += 3) {
        char json[2048];
        snprintf(json, sizeof json,
            "{\"nodes\": 8, %s, \"algorithm\": {\"name\": \"ringmaster\", \"max_delay\": %d},"
            " \"stop\": {\"time_s\": 2}}", problem, R);
        run_result res;
        run_json(json, NULL, &res);
        ck_assert_double_lt(stat_of(&res, "staleness_max"), R);   /* delay < R, as the paper */
        ck_assert_double_gt(stat_of(&res, "gradients_discarded"), 0);
    }
}
END_TEST

START_TEST(test_rennala_fresh_batches)
{
    double dropped[2];
    for (int restart = 0; restart <= 1; restart++) {
        char json[2048];
        snprintf(json, sizeof json,
            "{\"nodes\": 8, %s, \"algorithm\": {\"name\": \"rennala\", \"gradients\": 5,"
            " \"restart\": \"%s\"}, \"stop\": {\"time_s\": 2}}", problem,
            restart ? "on" : "off");
        run_result res;
        run_json(json, NULL, &res);
        ck_assert_double_eq(stat_of(&res, "staleness_max"), 0);
        double applied = stat_of(&res, "gradients_applied");
        ck_assert(applied > 100);
        ck_assert_double_eq(fmod(applied, 5), 0);
        dropped[restart] = stat_of(&res, "gradients_discarded");
    }
    /* restarting abandons stale steps instead of finishing them: fewer
     * gradients reach the server only to be dropped */
    ck_assert_double_lt(dropped[1], dropped[0]);
}
END_TEST

START_TEST(test_backup_drops_late)
{
    char json[2048];
    snprintf(json, sizeof json,
        "{\"nodes\": 8, %s, \"algorithm\": {\"name\": \"backup\", \"backup\": 2},"
        " \"stop\": {\"time_s\": 2}}", problem);
    run_result res;
    run_json(json, NULL, &res);
    double applied = stat_of(&res, "gradients_applied");
    ck_assert_double_eq(fmod(applied, 6), 0);   /* n - b = 6 per update */
    ck_assert_double_gt(stat_of(&res, "gradients_discarded"), 0);
    ck_assert_double_eq(stat_of(&res, "staleness_max"), 0);
    expect_prepare_error("{\"nodes\": 3, \"algorithm\": {\"name\": \"backup\", \"backup\": 3},"
                         " \"stop\": {\"steps\": 5}}",
                         "test.json: /algorithm/name: error: backup needs fewer backup workers "
                         "than workers, got 3 of 3");
}
END_TEST

int main(void)
{
    Suite *s = suite_create("algos_ps");
    TCase *tc = tcase_create("algos_ps");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, test_ps_converge);
    tcase_add_test(tc, test_fedavg_converges);
    tcase_add_test(tc, test_ps_sync_server_bottleneck);
    tcase_add_test(tc, test_ps_async_rate_and_staleness);
    tcase_add_test(tc, test_ssp_clock_gap);
    tcase_add_test(tc, test_ringmaster_delay_bound);
    tcase_add_test(tc, test_rennala_fresh_batches);
    tcase_add_test(tc, test_backup_drops_late);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
