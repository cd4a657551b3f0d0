/* test_sdfeel_async.c -- asynchronous SD-FEEL (sdfeel-async, issue 18
 * item 7) by hand: with the zero gradient the models change only by the
 * aggregations, so the staleness-aware weights are visible exactly.  One
 * cluster, a fast client (10 ms steps) and a slow one (25 ms), deadlines
 * every 20 ms, staleness exponent 1: at 0.02 s the server takes the fast
 * client's fresh model with weight m0/M, y1 = (1 - m0/M) y0 + (m0/M) x0;
 * at 0.04 s the slow client's model of aggregation 0 (staleness 1, weight
 * (m1/M) / 2) and the fast one's fresh y1: y2 = (1 - w1 - m0/M) y1 + w1
 * x1 + (m0/M) y1.  Every client fresh and in at the deadline, it is the
 * synchronous data-weighted average; two servers exchanging their models
 * mix them pairwise at once.  A client down for good stalls nothing.
 */
#include "exact_util.h"

#define ONE_CLUSTER(n, compute, alg) \
    "{\"seed\": 2, \"nodes\": " #n ", \"model\": {\"kind\": \"logistic\"}," \
    " \"data\": {\"train\": 480, \"test\": 60, \"features\": 3, \"partition\": \"quantity\"}," \
    " \"compute\": " compute "," \
    " \"network\": {\"latency_s\": 0.0001, \"bandwidth_Bps\": 1e9}," \
    " \"algorithm\": {\"name\": \"sdfeel-async\", \"lr\": 0.1, \"batch\": 4, \"local_steps\": 1," \
    alg "},"

static void expect_node(int node, const double *want, const char *what)
{
    for (size_t k = 0; k < cap_P; k++)
        ck_assert_msg(fabs(cap_x[node][k] - want[k]) < 1e-12, "%s: node %d parameter %zu is "
                      "%.17g, want %.17g", what, node, k, cap_x[node][k], want[k]);
}

START_TEST(test_staleness_weights_by_hand)
{
    run_result res;
    run_wrapped(ONE_CLUSTER(2, "{\"step_time_s\": 0.01, \"groups\": [{\"nodes\": [1],"
                " \"step_time_s\": 0.025}]}", " \"clusters\": 1, \"deadline_s\": 0.02,"
                " \"staleness_exponent\": 1") " \"stop\": {\"time_s\": 0.05}}",
                wrap_p("sdfeel-async", G_ZERO, 0.1,
                       "clusters=1,local_steps=1,deadline_s=0.02,staleness_exponent=1"),
                spread_init, &res);
    ck_assert_int_eq(res.status, RUN_OK);
    ck_assert_double_eq(stat_of(&res, "aggregations_max"), 2);
    ck_assert_double_eq(stat_of(&res, "models_aggregated"), 3);
    ck_assert_double_eq(stat_of(&res, "staleness_max"), 1);
    double M = (double)(cap_samples[0] + cap_samples[1]), a0 = (double)cap_samples[0] / M;
    double w1 = (double)cap_samples[1] / M / 2, y1[MAXP], y2[MAXP];
    ck_assert_msg(fabs(a0 - 0.5) > 0.05, "shares %g", a0);
    for (size_t k = 0; k < cap_P; k++) {
        y1[k] = (1 - a0) * spread_of(2, k) + a0 * spread_of(0, k);
        y2[k] = (1 - w1 - a0) * y1[k] + w1 * spread_of(1, k) + a0 * y1[k];
    }
    expect_node(2, y2, "the server after two deadlines");
    expect_node(0, y2, "the fast client holds the server's model");
}
END_TEST

/* Four equal clients in by the deadline, all fresh: sum m_i x_i / M. */
START_TEST(test_all_fresh_is_the_synchronous_average)
{
    run_result res;
    run_wrapped(ONE_CLUSTER(4, "{\"step_time_s\": 0.01}", " \"clusters\": 1,"
                " \"deadline_s\": 0.015") " \"stop\": {\"time_s\": 0.02}}",
                wrap_p("sdfeel-async", G_ZERO, 0.1, "clusters=1,local_steps=1,deadline_s=0.015"),
                spread_init, &res);
    ck_assert_int_eq(res.status, RUN_OK);
    ck_assert_double_eq(stat_of(&res, "staleness_max"), 0);
    double want[MAXP] = { 0 }, M = 0;
    for (int i = 0; i < 4; i++) {
        M += (double)cap_samples[i];
        for (size_t k = 0; k < cap_P; k++)
            want[k] += (double)cap_samples[i] * spread_of(i, k);
    }
    for (size_t k = 0; k < cap_P; k++)
        want[k] /= M;
    expect_node(4, want, "one deadline, all fresh");
}
END_TEST

/* Two clusters of one client: each server takes its client's model at the
 * deadline, sends it to the other and mixes the other's in as it comes,
 * (1 - 1/2) y_c + 1/2 y_d: both hold (x0 + x1) / 2. */
START_TEST(test_servers_mix_pairwise_on_arrival)
{
    run_result res;
    run_wrapped(ONE_CLUSTER(2, "{\"step_time_s\": 0.01}", " \"clusters\": 2,"
                " \"deadline_s\": 0.015") " \"stop\": {\"time_s\": 0.02}}",
                wrap_p("sdfeel-async", G_ZERO, 0.1, "clusters=2,local_steps=1,deadline_s=0.015"),
                spread_init, &res);
    ck_assert_int_eq(res.status, RUN_OK);
    double want[MAXP];
    for (size_t k = 0; k < cap_P; k++)
        want[k] = (spread_of(0, k) + spread_of(1, k)) / 2;
    expect_node(2, want, "server 0");
    expect_node(3, want, "server 1");
    /* the clients got their own server's model before the exchange came */
    for (size_t k = 0; k < cap_P; k++)
        want[k] = spread_of(0, k);
    expect_node(0, want, "client 0");
}
END_TEST

/* A client down for good from 0.05 s: nothing waits for it, the others
 * keep stepping to the horizon. */
START_TEST(test_a_failed_client_stalls_nothing)
{
    run_result res;
    run_json(ONE_CLUSTER(6, "{\"step_time_s\": 0.01}", " \"clusters\": 2, \"deadline_s\": 0.015")
             " \"faults\": {\"events\": [{\"kind\": \"schedule\", \"nodes\": [1], \"down_s\": 0.05}]},"
             " \"stop\": {\"time_s\": 1}}", NULL, &res);
    ck_assert_int_eq(res.status, RUN_OK);
    ck_assert_str_eq(res.stop_reason, "time");
    /* 5 live clients, one step per 15 ms deadline each: about 330 steps */
    ck_assert_uint_ge(res.last.steps, 300);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("sdfeel_async");
    TCase *tc = tcase_create("sdfeel_async");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, test_staleness_weights_by_hand);
    tcase_add_test(tc, test_all_fresh_is_the_synchronous_average);
    tcase_add_test(tc, test_servers_mix_pairwise_on_arrival);
    tcase_add_test(tc, test_a_failed_client_stalls_nothing);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? 1 : 0;
}
