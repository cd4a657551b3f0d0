/* test_proto_hop.c -- Hop as its paper runs it (Luo et al., ASPLOS 2019):
 * bounded staleness alone lets neighbours drift exactly s + 1 iterations
 * apart (no backup worker needed), backup workers are bounded by the token
 * queues (max_ig), and an iteration's update is sent while its gradient is
 * computed, so on a homogeneous ring an iteration takes max(c, a + 2M/B)
 * instead of c + a + 2M/B.  Whole timing-only runs, exact figures.
 */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "test_util.h"

/* A ring of 8, node 0 four times slower, a fast network; `alg` carries
 * the hop keys after the name. */
static void run_ring(const char *alg, const char *noise, run_result *res)
{
    char json[2048];
    snprintf(json, sizeof json,
        "{\"seed\": 1, \"nodes\": 8,"
        " \"compute\": {\"step_time_s\": 0.01, \"groups\": [{\"nodes\": [0], \"slowdown\": 4}]%s},"
        " \"network\": {\"latency_s\": 0.001, \"bandwidth_Bps\": 1e9},"
        " \"topology\": {\"kind\": \"ring\"},"
        " \"model\": {\"kind\": \"none\", \"message_bytes\": 100000},"
        " \"algorithm\": {\"name\": \"hop\"%s}, \"stop\": {\"time_s\": 2}}", noise, alg);
    run_json(json, NULL, res);
    ck_assert_int_eq(res->status, RUN_OK);
}

static void run_straggler_ring(const char *alg, run_result *res)
{
    run_ring(alg, "", res);
}

/* Without backup workers, staleness s lets the straggler's neighbours run
 * s + 1 iterations ahead of it, never more; s = 0 keeps them within one.
 * Today's (pre-fix) code gave gap 1 and byte-identical runs for every s. */
START_TEST(test_hop_gap_s_plus_one_without_backup)
{
    static const int stale[] = { 0, 1, 2, 5, 8 };
    for (int ov = 1; ov >= 0; ov--) {   /* on: the default, so no key */
        uint64_t prev_steps = 0;
        for (size_t t = 0; t < sizeof stale / sizeof stale[0]; t++) {
            char alg[256];
            snprintf(alg, sizeof alg, ", \"staleness\": %d, \"backup\": 0%s", stale[t],
                     ov ? "" : ", \"overlap\": \"off\"");
            run_result res;
            run_straggler_ring(alg, &res);
            ck_assert_msg(stat_of(&res, "neighbour_gap_max") == stale[t] + 1,
                          "s=%d overlap=%d: gap %g", stale[t], ov,
                          stat_of(&res, "neighbour_gap_max"));
            /* the fast nodes get further before they wait for the straggler */
            ck_assert_msg(res.last.steps > prev_steps, "s=%d overlap=%d: %llu steps", stale[t],
                          ov, (unsigned long long)res.last.steps);
            prev_steps = res.last.steps;
        }
    }
}
END_TEST

/* Skipping keeps the same bounds (a skip is a move the two conditions
 * allow) and lets the straggler jump to its neighbours' iteration; with
 * noisy step times too, so that the neighbours' iterations differ. */
START_TEST(test_hop_skip_within_bounds)
{
    for (int s = 0; s <= 8; s++)
        for (int b = 0; b <= 1; b++) {
            char alg[256];
            snprintf(alg, sizeof alg, ", \"staleness\": %d, \"backup\": %d, \"skip\": \"on\"",
                     s, b);
            run_result res;
            run_ring(alg, ", \"noise\": {\"dist\": \"lognormal\", \"sigma\": 0.5}", &res);
            double gap = stat_of(&res, "neighbour_gap_max");
            ck_assert_msg(gap >= 1 && gap <= (b ? s + 2 : s + 1), "s=%d b=%d: gap %g", s, b, gap);
            if (s + b > 0)
                ck_assert_msg(stat_of(&res, "iterations_skipped") > 0, "s=%d b=%d: no skip", s, b);
            else
                ck_assert_double_eq(stat_of(&res, "iterations_skipped"), 0);
        }
}
END_TEST

/* With backup workers the token queues bound the gap: exactly max_ig is
 * reached with the straggler (s = 0: the paper's backup workers waiting
 * for deg - b current updates); max_ig 0 means s + 2; max_ig 1 leaves
 * nobody behind, so one backup worker changes nothing. */
START_TEST(test_hop_backup_bounded_by_tokens)
{
    static const int ig[] = { 1, 2, 3, 6 };
    for (size_t t = 0; t < sizeof ig / sizeof ig[0]; t++) {
        char alg[256];
        snprintf(alg, sizeof alg, ", \"staleness\": 0, \"backup\": 1, \"max_ig\": %d", ig[t]);
        run_result res;
        run_straggler_ring(alg, &res);
        ck_assert_msg(stat_of(&res, "neighbour_gap_max") == ig[t], "max_ig=%d: gap %g", ig[t],
                      stat_of(&res, "neighbour_gap_max"));
    }
    for (int s = 0; s <= 3; s += 3) {   /* default max_ig: s + 2 */
        char alg[256];
        snprintf(alg, sizeof alg, ", \"staleness\": %d, \"backup\": 1", s);
        run_result res;
        run_straggler_ring(alg, &res);
        ck_assert_double_eq(stat_of(&res, "neighbour_gap_max"), s + 2);
    }
    run_result one, none;
    run_straggler_ring(", \"staleness\": 0, \"backup\": 1, \"max_ig\": 1", &one);
    run_straggler_ring(", \"staleness\": 0, \"backup\": 0", &none);
    ck_assert_uint_eq(one.last.steps, none.last.steps);
    ck_assert_uint_eq(one.events, none.events);
    ck_assert_double_eq(one.last.bytes_sent, none.last.bytes_sent);
}
END_TEST

/* A homogeneous ring of n, step time c, latency a, M bytes at B bytes/s.
 * Every node sends clockwise first, so every node has both neighbours'
 * updates a + 2M/B after it sent its own (the uplink serialises two
 * copies; the second copy it receives is its other neighbour's second
 * send, queued behind the first on its downlink).  K steps end at
 *   overlap on,  s = 0:  (K - 1) max(c, a + 2M/B) + c
 *   overlap off, s = 0:  (K - 1) (c + a + 2M/B) + c
 *   overlap on,  s = 1:  K c  when 2M/B <= c and a + 2M/B <= 2c
 * (staleness one hides the latency behind the next step). */
static double run_homogeneous(int n, double c, double a, double M, double B, const char *alg,
                              int K)
{
    char json[2048];
    snprintf(json, sizeof json,
        "{\"nodes\": %d, \"compute\": {\"step_time_s\": %.17g},"
        " \"network\": {\"latency_s\": %.17g, \"bandwidth_Bps\": %.17g},"
        " \"topology\": {\"kind\": \"ring\"},"
        " \"model\": {\"kind\": \"none\", \"message_bytes\": %.17g},"
        " \"algorithm\": {\"name\": \"hop\"%s}, \"stop\": {\"steps\": %d}}",
        n, c, a, B, M, alg, K);
    run_result res;
    run_json(json, NULL, &res);
    ck_assert_int_eq(res.status, RUN_OK);
    ck_assert_str_eq(res.stop_reason, "steps");
    ck_assert_uint_eq(res.last.steps, (uint64_t)n * (uint64_t)K);
    ck_assert_double_eq(stat_of(&res, "neighbour_gap_max"), 1);
    return res.sim_time_s;
}

START_TEST(test_hop_overlap_closed_form)
{
    static const int sizes[] = { 3, 4, 8, 16 };
    /* (c, a, M/B): communication-bound, compute-bound, latency-bound */
    static const double cases[][3] = {
        { 0.01, 0.001, 0.01 }, { 0.05, 0.002, 0.004 }, { 0.01, 0.008, 0.004 },
    };
    const double B = 1e8;
    const int K = 20;
    for (size_t t = 0; t < sizeof sizes / sizeof sizes[0]; t++)
        for (size_t q = 0; q < sizeof cases / sizeof cases[0]; q++) {
            int n = sizes[t];
            double c = cases[q][0], a = cases[q][1], M = cases[q][2] * B;
            double m = a + 2 * M / B;
            double on = run_homogeneous(n, c, a, M, B, ", \"staleness\": 0", K);
            double want_on = (K - 1) * fmax(c, m) + c, want_off = (K - 1) * (c + m) + c;
            ck_assert_msg(fabs(on - want_on) < 1e-9, "n=%d case %zu: overlap %.17g s, "
                          "closed form %.17g s", n, q, on, want_on);
            double off = run_homogeneous(n, c, a, M, B,
                                         ", \"staleness\": 0, \"overlap\": \"off\"", K);
            ck_assert_msg(fabs(off - want_off) < 1e-9, "n=%d case %zu: no overlap %.17g s, "
                          "closed form %.17g s", n, q, off, want_off);
            if (2 * M / B <= c && m <= 2 * c) {
                double s1 = run_homogeneous(n, c, a, M, B, ", \"staleness\": 1", K);
                ck_assert_msg(fabs(s1 - K * c) < 1e-9, "n=%d case %zu: s=1 %.17g s, "
                              "closed form %.17g s", n, q, s1, K * c);
            }
        }
}
END_TEST

/* With s = 0 and no backup worker Hop is D-PSGD (Lian et al.) with equal
 * weights, which on a ring are its Metropolis weights 1/3: the same steps
 * and, up to the order of the sums, the same model, with noisy step times
 * and a straggler.  Using a fast neighbour's update of a later iteration
 * (instead of the queue's update of the current one) breaks this. */
START_TEST(test_hop_s0_is_dpsgd)
{
    run_result res[2];
    for (int a = 0; a < 2; a++) {
        char json[2048];
        snprintf(json, sizeof json,
            "{\"seed\": 3, \"nodes\": 8, %s, \"topology\": {\"kind\": \"ring\"},"
            " \"algorithm\": {\"name\": %s, \"lr\": 0.1, \"batch\": 32},"
            " \"stop\": {\"time_s\": 1}}", problem,
            a ? "\"hop\", \"staleness\": 0" : "\"dpsgd\"");
        run_json(json, NULL, &res[a]);
    }
    ck_assert_uint_eq(res[0].last.steps, res[1].last.steps);
    ck_assert_msg(fabs(res[0].last.train_loss - res[1].last.train_loss) < 1e-12,
                  "dpsgd %.17g, hop %.17g", res[0].last.train_loss, res[1].last.train_loss);
    ck_assert_msg(fabs(res[0].last.consensus_distance - res[1].last.consensus_distance) < 1e-12,
                  "dpsgd %.17g, hop %.17g", res[0].last.consensus_distance,
                  res[1].last.consensus_distance);
}
END_TEST

/* Bad values are located errors. */
START_TEST(test_hop_params_checked)
{
    expect_prepare_error("{\"nodes\": 4, \"algorithm\": {\"name\": \"hop\", \"overlap\": \"yes\"},"
                         " \"stop\": {\"steps\": 5}}",
                         "test.json: /algorithm/overlap: error: unknown value \"yes\" "
                         "(expected one of: off, on)");
    expect_prepare_error("{\"nodes\": 4, \"algorithm\": {\"name\": \"hop\", \"max_ig\": -1},"
                         " \"stop\": {\"steps\": 5}}",
                         "test.json: /algorithm/max_ig: error: must be in [0, 1e+09], got -1");
}
END_TEST

int main(void)
{
    Suite *s = suite_create("proto_hop");
    TCase *tc = tcase_create("hop");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, test_hop_gap_s_plus_one_without_backup);
    tcase_add_test(tc, test_hop_skip_within_bounds);
    tcase_add_test(tc, test_hop_backup_bounded_by_tokens);
    tcase_add_test(tc, test_hop_overlap_closed_form);
    tcase_add_test(tc, test_hop_s0_is_dpsgd);
    tcase_add_test(tc, test_hop_params_checked);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
