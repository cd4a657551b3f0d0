/* test_proto_ps.c -- parameter-server protocols as their papers run them:
 * backup workers with cancellation of late steps against the K-sync SGD
 * closed form of Dutta et al. (and measurably above it without), Ringmaster
 * ASGD's delay threshold in the paper's convention (delay < R) with and
 * without calculation stops on a hand-checked timeline, and the step sizes
 * of Delay-Adaptive ASGD on the same timeline.
 */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "test_util.h"

/* ---- backup: K-sync SGD (Dutta et al. 2018) ---- */

/* 18 workers with Exp(1) steps, the server waits for the first 16
 * (backup 2), communication free (1 KB messages at 10^15 B/s). */
static void run_backup(const char *cancel, run_result *res)
{
    char json[1024];
    snprintf(json, sizeof json,
        "{\"seed\": 7, \"nodes\": 18,"
        " \"compute\": {\"step_time_s\": 1, \"noise\": {\"dist\": \"exponential\"}},"
        " \"network\": {\"latency_s\": 0, \"bandwidth_Bps\": 1e15},"
        " \"model\": {\"kind\": \"none\", \"message_bytes\": 1000},"
        " \"algorithm\": {\"name\": \"backup\", \"backup\": 2, \"cancel_late\": \"%s\"},"
        " \"stop\": {\"time_s\": 40000}, \"metrics\": {\"every_s\": 1000}}", cancel);
    run_json(json, NULL, res);
    ck_assert_int_eq(res->status, RUN_OK);
}

/* With cancellation every iteration starts all 18 workers afresh and ends
 * at the 16th of 18 i.i.d. Exp(1) times: mean H_18 - H_2, variance
 * sum_{j=3}^{18} 1/j^2 (Renyi's representation), independent across
 * iterations. */
static double ksync_mean(void)
{
    double h = 0;
    for (int j = 3; j <= 18; j++)
        h += 1.0 / j;
    return h;
}

static double ksync_se(double iterations)
{
    double v = 0;
    for (int j = 3; j <= 18; j++)
        v += 1.0 / ((double)j * j);
    return sqrt(v / iterations);
}

START_TEST(test_backup_cancel_late_dutta_closed_form)
{
    run_result res;
    run_backup("on", &res);
    double K = stat_of(&res, "iterations"), mean = stat_of(&res, "iteration_time_mean");
    ck_assert_double_gt(K, 19000);
    ck_assert_double_eq(stat_of(&res, "gradients_applied"), 16 * K);
    /* the two late workers are stopped each iteration, so nothing stale
     * reaches the server */
    ck_assert_double_eq(stat_of(&res, "gradients_discarded"), 0);
    ck_assert_double_eq(stat_of(&res, "steps_cancelled"), 2 * K);
    double se = ksync_se(K);
    ck_assert_msg(fabs(mean - ksync_mean()) < 3 * se, "iteration %.6f s, closed form %.6f s, "
                  "SE %.6f s", mean, ksync_mean(), se);
}
END_TEST

START_TEST(test_backup_finish_late_above_closed_form)
{
    run_result res;
    run_backup("off", &res);
    double K = stat_of(&res, "iterations"), mean = stat_of(&res, "iteration_time_mean");
    ck_assert_double_eq(stat_of(&res, "steps_cancelled"), 0);
    ck_assert_double_gt(stat_of(&res, "gradients_discarded"), 0);
    /* late workers finish their stale step first: about 11% slower */
    ck_assert_msg(mean > 1.08 * ksync_mean() && mean > ksync_mean() + 30 * ksync_se(K),
                  "iteration %.6f s, closed form %.6f s", mean, ksync_mean());
    ck_assert_double_lt(mean, 1.14 * ksync_mean());
}
END_TEST

/* ---- ringmaster: delay < R, with and without calculation stops ---- */

/* Three workers with fixed step times 1, 2.7 and 4.3 s, free
 * communication, 20.45 s (no two events within 0.05 s of each other or of
 * the end).  Timeline for R = 3 without stops: worker 0 pushes at 1, 2,
 * 3, ... (always fresh or 1 stale); worker 1's gradient at 2.7 was computed
 * on version 0 with 2 updates applied since: delay 2 < 3, applied (version
 * 3); worker 2's at 4.3 on version 0: delay 5, dropped; worker 1's at 5.4
 * on version 3 with updates at 3, 4, 5 since: delay 3, dropped (the old
 * delay <= R convention applied it); ...  With stops, after each update
 * the server restarts every worker whose computation has become R updates
 * old, so nothing is dropped.  The counts to 20.45 s come from the paper's
 * Algorithms 4 and 5 run by hand (a 30-line event loop). */
static void run_ring3(const char *alg, int R, const char *stops, run_result *res)
{
    char json[1024];
    snprintf(json, sizeof json,
        "{\"seed\": 1, \"nodes\": 3,"
        " \"compute\": {\"step_time_s\": 1, \"groups\": [{\"nodes\": [1], \"step_time_s\": 2.7},"
        "   {\"nodes\": [2], \"step_time_s\": 4.3}]},"
        " \"network\": {\"latency_s\": 0, \"bandwidth_Bps\": 1e15},"
        " \"model\": {\"kind\": \"none\", \"message_bytes\": 1},"
        " \"algorithm\": {\"name\": \"%s\", %s%d%s%s%s},"
        " \"stop\": {\"time_s\": 20.45}, \"metrics\": {\"every_s\": 1}}", alg,
        stops ? "\"max_delay\": " : "\"threshold\": ", R, stops ? ", \"stops\": \"" : "",
        stops ? stops : "", stops ? "\"" : "");
    run_json(json, NULL, res);
    ck_assert_int_eq(res->status, RUN_OK);
}

START_TEST(test_ringmaster_paper_threshold)
{
    /* R = 1..6: applied, dropped, stopped, largest applied delay */
    static const int off[6][4] = {
        { 20, 11, 0, 0 }, { 20, 11, 0, 0 }, { 23, 8, 0, 2 },
        { 27, 4, 0, 3 }, { 27, 4, 0, 3 }, { 29, 2, 0, 5 },
    };
    static const int on[6][4] = {
        { 20, 0, 40, 0 }, { 20, 0, 20, 0 }, { 24, 0, 12, 2 },
        { 27, 0, 6, 3 }, { 27, 0, 5, 3 }, { 29, 0, 2, 5 },
    };
    for (int R = 1; R <= 6; R++)
        for (int s = 0; s <= 1; s++) {
            const int *want = s ? on[R - 1] : off[R - 1];
            run_result res;
            run_ring3("ringmaster", R, s ? "on" : "off", &res);
            ck_assert_msg(stat_of(&res, "gradients_applied") == want[0] &&
                          stat_of(&res, "gradients_discarded") == want[1] &&
                          stat_of(&res, "calculations_stopped") == want[2] &&
                          stat_of(&res, "staleness_max") == want[3],
                          "R %d stops %d: applied %g dropped %g stopped %g max delay %g, "
                          "expected %d %d %d %d", R, s, stat_of(&res, "gradients_applied"),
                          stat_of(&res, "gradients_discarded"),
                          stat_of(&res, "calculations_stopped"),
                          stat_of(&res, "staleness_max"), want[0], want[1], want[2], want[3]);
        }
    expect_prepare_error("{\"nodes\": 3, \"algorithm\": {\"name\": \"ringmaster\", \"max_delay\": 0},"
                         " \"stop\": {\"steps\": 5}}",
                         "test.json: /algorithm/max_delay: error: must be in [1, 1e+09], got 0");
}
END_TEST

/* With latency a stop can cross a gradient already on its way: the server
 * drops that gradient unanswered (the stop was the answer), so a worker
 * gets exactly one model per gradient applied or per stop, and the run
 * goes on.  Bytes (1 KB messages): one gradient per finished step, one
 * model per applied gradient and per stop. */
START_TEST(test_ringmaster_stops_with_latency)
{
    for (int R = 1; R <= 4; R++) {
        char json[2048];
        snprintf(json, sizeof json,
            "{\"seed\": 3, \"nodes\": 8, \"compute\": {\"step_time_s\": 0.01, \"noise\":"
            " {\"dist\": \"lognormal\", \"sigma\": 0.5}, \"groups\": [{\"nodes\": [0],"
            " \"slowdown\": 3}]}, \"network\": {\"latency_s\": 0.001, \"bandwidth_Bps\": 1e7},"
            " \"model\": {\"kind\": \"none\", \"message_bytes\": 1000},"
            " \"algorithm\": {\"name\": \"ringmaster\", \"max_delay\": %d, \"stops\": \"on\"},"
            " \"stop\": {\"time_s\": 2}, \"metrics\": {\"every_s\": 0.5}}", R);
        run_result res;
        run_json(json, NULL, &res);
        ck_assert_int_eq(res.status, RUN_OK);
        double applied = stat_of(&res, "gradients_applied");
        double stopped = stat_of(&res, "calculations_stopped");
        ck_assert_double_lt(stat_of(&res, "staleness_max"), R);
        ck_assert_double_gt(stopped, 0);
        ck_assert_double_gt(stat_of(&res, "gradients_discarded"), 0);   /* crossed stops */
        ck_assert_double_gt(applied, 200);
        ck_assert_double_eq(res.last.bytes_sent,
                            1000 * ((double)res.last.steps + applied + stopped));
    }
    char json[2048];
    snprintf(json, sizeof json,
        "{\"nodes\": 8, %s, \"algorithm\": {\"name\": \"ringmaster\", \"max_delay\": 2,"
        " \"stops\": \"on\"}, \"stop\": {\"time_s\": 2}}", problem);
    run_result res;
    run_json(json, NULL, &res);
    ck_assert(res.last.train_loss < 0.9);   /* from log 3 = 1.0986 */
}
END_TEST

/* ---- delay-adaptive ASGD: lr * min(1, C / delay) ---- */

START_TEST(test_delay_adaptive_step_sizes)
{
    /* The same timeline as ps-async: the 31 delays to 20.45 s are
     * 0 0 2 1 0 5 1 4 1 0 0 3 6 2 0 3 1 0 5 1 4 1 0 0 3 1 7 1 3 1 0, so
     * with C = 1 the scales are 1 except 1/2 (x2), 1/3 (x4), 1/4 (x2),
     * 1/5 (x2), 1/6, 1/7: mean 789/35/31; C = 2: 913/35/31; C = 3 (the
     * default, n): 3/5 x2, 3/4 x2, 1/2, 3/7 and 1 otherwise, 1002/35/31. */
    static const struct { int C, damped, min_den; double sum; } cases[] = {
        { 1, 12, 7, 789.0 / 35 }, { 2, 10, 7, 913.0 / 35 }, { 0, 6, 7, 1002.0 / 35 },
    };
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        run_result res;
        run_ring3("delay-adaptive", cases[k].C, NULL, &res);
        int C = cases[k].C ? cases[k].C : 3;
        ck_assert_double_eq(stat_of(&res, "gradients_applied"), 31);
        ck_assert_double_eq(stat_of(&res, "gradients_discarded"), 0);
        ck_assert_double_eq(stat_of(&res, "staleness_max"), 7);
        ck_assert_double_eq(stat_of(&res, "updates_damped"), cases[k].damped);
        ck_assert_double_eq_tol(stat_of(&res, "step_scale_min"), (double)C / cases[k].min_den,
                                1e-15);
        ck_assert_double_eq_tol(stat_of(&res, "step_scale_mean"), cases[k].sum / 31, 1e-14);
    }
}
END_TEST

/* No delay above C: exactly ps-async (same updates bit for bit); with a
 * small C the damped updates change the trajectory. */
START_TEST(test_delay_adaptive_is_ps_async_when_undamped)
{
    run_result ref, same, damped;
    char json[2048];
    snprintf(json, sizeof json, "{\"nodes\": 8, %s, \"algorithm\": {\"name\": \"ps-async\"},"
             " \"stop\": {\"time_s\": 1}}", problem);
    run_json(json, NULL, &ref);
    snprintf(json, sizeof json, "{\"nodes\": 8, %s, \"algorithm\": {\"name\": \"delay-adaptive\","
             " \"threshold\": 1000}, \"stop\": {\"time_s\": 1}}", problem);
    run_json(json, NULL, &same);
    snprintf(json, sizeof json, "{\"nodes\": 8, %s, \"algorithm\": {\"name\": \"delay-adaptive\","
             " \"threshold\": 1}, \"stop\": {\"time_s\": 1}}", problem);
    run_json(json, NULL, &damped);
    ck_assert_double_eq(stat_of(&same, "updates_damped"), 0);
    ck_assert(same.last.train_loss == ref.last.train_loss);
    ck_assert_uint_eq(same.events, ref.events);
    ck_assert_double_gt(stat_of(&damped, "updates_damped"), 100);
    ck_assert(damped.last.train_loss != ref.last.train_loss);
    ck_assert_uint_eq(damped.events, ref.events);   /* the timeline does not depend on lr */
}
END_TEST

int main(void)
{
    Suite *s = suite_create("proto_ps");
    TCase *tc = tcase_create("proto_ps");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, test_backup_cancel_late_dutta_closed_form);
    tcase_add_test(tc, test_backup_finish_late_above_closed_form);
    tcase_add_test(tc, test_ringmaster_paper_threshold);
    tcase_add_test(tc, test_ringmaster_stops_with_latency);
    tcase_add_test(tc, test_delay_adaptive_step_sizes);
    tcase_add_test(tc, test_delay_adaptive_is_ps_async_when_undamped);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
