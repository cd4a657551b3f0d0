/* test_proto_prague.c -- Prague as its paper runs it (Luo et al., ASPLOS
 * 2020): a worker takes part in one group per step and joins it when its
 * step ends, so a straggler delays the groups it belongs to; a requester
 * continues when its own group is done, so at most n groups are ever
 * pending (the Group Buffer).  Timelines are the timing-only model's, so
 * counts are exact.  The earlier behaviour (members pulled in mid-step) is
 * the named option groups = "random_pull"; its queue is bounded too.
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>

#include "test_util.h"

/* n workers, worker 0 (or none) slowed, timing-only model of `bytes`. */
static void run_cluster(int n, int group, const char *groups, double slowdown, double latency,
                        double bandwidth, double bytes, double time_s, run_result *res)
{
    char json[2048];
    snprintf(json, sizeof json,
        "{\"seed\": 1, \"nodes\": %d,"
        " \"compute\": {\"step_time_s\": 0.01,"
        "   \"groups\": [{\"nodes\": [%d], \"slowdown\": %g}]},"
        " \"network\": {\"latency_s\": %g, \"bandwidth_Bps\": %g},"
        " \"topology\": {\"kind\": \"ring\"},"
        " \"model\": {\"kind\": \"none\", \"message_bytes\": %g},"
        " \"algorithm\": {\"name\": \"prague\", \"group_size\": %d, \"groups\": \"%s\"},"
        " \"stop\": {\"time_s\": %g}}",
        n, n - 1, slowdown, latency, bandwidth, bytes, group, groups, time_s);
    run_json(json, NULL, res);
    ck_assert_int_eq(res->status, RUN_OK);
}

/* Two workers, worker 1 10x slower (T = 10 ms, 100 ms), latency a = 1 ms,
 * free bandwidth.  Worker 0's step ends, it asks the GG (a), gets the
 * group {0, 1} (a) and waits for worker 1, which joins 2a after its own
 * step ends at J; the 2-member ring ends at J + a for worker 0 and J + 2a
 * for worker 1.  Worker 1 restarts every 0.1 + 4a = 0.104 s: 9 steps end
 * by t = 1 (at 0.1 + 0.104 j, j = 0..8); worker 0 steps at 0 and at
 * 0.103 + 0.104 j: 10 steps, 10 requests, 10 groups formed (worker 1 finds
 * worker 0's group in its buffer every time), 9 completed, 19 joins. */
START_TEST(test_straggler_paces_its_group)
{
    run_result res;
    run_cluster(2, 2, "random", 10, 0.001, 1e12, 8, 1, &res);
    ck_assert_uint_eq(res.last.steps, 19);
    ck_assert_double_eq(stat_of(&res, "groups_formed"), 10);
    ck_assert_double_eq(stat_of(&res, "groups_completed"), 9);
    ck_assert_double_eq(stat_of(&res, "group_joins"), 19);
    ck_assert_double_eq(stat_of(&res, "midstep_joins"), 0);
    ck_assert_double_eq(stat_of(&res, "pending_groups_max"), 1);
    /* static groups of 2 among 2: the same timeline, one group per phase */
    run_cluster(2, 2, "static", 10, 0.001, 1e12, 8, 1, &res);
    ck_assert_uint_eq(res.last.steps, 19);
    ck_assert_double_eq(stat_of(&res, "groups_completed"), 9);
    /* random_pull: worker 0 pulls worker 1 in mid-step and runs ahead */
    run_cluster(2, 2, "random_pull", 10, 0.001, 1e12, 8, 1, &res);
    ck_assert_uint_gt(res.last.steps, 60);
    ck_assert_double_gt(stat_of(&res, "midstep_joins"), 0);
}
END_TEST

/* 16 workers in groups of 4, one 100x slower (1 s steps), 400 KB models at
 * 10 Gbit/s for 2 s.  Every group the straggler is drawn into waits for its
 * step, and the workers in those groups wait with it: the other 15 workers
 * lose most of their steps (69 in 2 s, where all 16 make 1136 without
 * it).  With random_pull they keep them all. */
START_TEST(test_straggler_delays_the_groups_it_belongs_to)
{
    run_result fast, slow;
    run_cluster(16, 4, "random", 1, 1e-4, 1.25e9, 4e5, 2, &fast);
    run_cluster(16, 4, "random", 100, 1e-4, 1.25e9, 4e5, 2, &slow);
    /* the straggler (node 15) steps at most twice in 2 s */
    double others_fast = (double)fast.last.steps, others_slow = (double)slow.last.steps - 2;
    ck_assert_msg(others_slow < 0.1 * others_fast, "others: %g steps with the straggler, %g without",
                  others_slow, others_fast);
    /* one join per step: each step end is followed by one join, bar the
     * requests still in flight at the stop */
    double joins = stat_of(&slow, "group_joins"), steps = (double)slow.last.steps;
    ck_assert(joins <= steps && joins >= steps - 16);
    ck_assert_double_eq(stat_of(&slow, "midstep_joins"), 0);
    run_cluster(16, 4, "random_pull", 1, 1e-4, 1.25e9, 4e5, 2, &fast);
    run_cluster(16, 4, "random_pull", 100, 1e-4, 1.25e9, 4e5, 2, &slow);
    ck_assert_double_gt((double)slow.last.steps, 0.9 * (double)fast.last.steps);
}
END_TEST

/* The same cluster without a straggler, bandwidth-bound (1 Gbit/s: a group
 * of 4 takes about 5 ms for a 10 ms step) for 4 s, where pulling members in
 * whenever a group is formed used to pile up groups without bound (1,266
 * pending at 4 s): at most n groups are pending, in every mode, and every
 * step's join is accounted for. */
START_TEST(test_pending_groups_bounded)
{
    const char *modes[] = { "random", "random_pull", "static" };
    for (int i = 0; i < 3; i++) {
        run_result res;
        run_cluster(16, 4, modes[i], 1, 1e-4, 1.25e8, 4e5, 4, &res);
        double pending = stat_of(&res, "pending_groups_max");
        ck_assert_msg(pending >= 1 && pending <= 16, "%s: %g groups pending", modes[i], pending);
        double formed = stat_of(&res, "groups_formed"), done = stat_of(&res, "groups_completed");
        ck_assert_msg(done <= formed && formed - done <= 16, "%s: %g formed, %g done", modes[i],
                      formed, done);
        if (i != 1) {
            double joins = stat_of(&res, "group_joins"), steps = (double)res.last.steps;
            ck_assert(joins <= steps && joins >= steps - 16);
            ck_assert_double_eq(stat_of(&res, "midstep_joins"), 0);
        }
    }
}
END_TEST

/* The Group Buffer: a worker forms a group only when its buffer is empty,
 * so members drawn by others reuse the groups they are in (fewer groups
 * than joins / group size would need if everyone drew); conflicts (a member
 * with an earlier unfinished group) are counted and static groups have
 * none. */
START_TEST(test_group_buffer_counts)
{
    run_result res;
    run_cluster(16, 4, "random", 1, 1e-4, 1.25e9, 4e5, 1, &res);
    double formed = stat_of(&res, "groups_formed"), joins = stat_of(&res, "group_joins");
    double done = stat_of(&res, "groups_completed");
    /* every completed group had 4 joins; the pending ones had 1 to 4 */
    ck_assert(joins >= 4 * done + (formed - done) && joins <= 4 * formed);
    double c = stat_of(&res, "group_conflicts");
    ck_assert(c > 0 && c <= formed);
    ck_assert_double_eq_tol(stat_of(&res, "conflict_rate"), c / formed, 1e-15);
    run_cluster(16, 4, "static", 1, 1e-4, 1.25e9, 4e5, 1, &res);
    ck_assert_double_eq(stat_of(&res, "group_conflicts"), 0);
}
END_TEST

static void one_three_init(void *ctx, int node, double *params, size_t n)
{
    (void)ctx;
    for (size_t j = 0; j < n; j++)
        params[j] = node == 0 ? 1.0 : 3.0;
}

static void keep_first(void *ctx, const out_metrics_row *row)
{
    out_metrics_row *first = ctx;
    if (first->time_s < 0)
        *first = *row;
}

/* lr = 0: a P-Reduce replaces its members' models by their exact mean.
 * Two workers starting at 1 and 3 (every parameter) both hold 2 after their
 * first group (consensus distance exactly 0), and the evaluated average
 * stays 2, so the final training loss has the bits of the first
 * evaluation's, in every mode. */
START_TEST(test_lr0_group_average_is_exact)
{
    const char *modes[] = { "random", "random_pull", "static" };
    for (int i = 0; i < 3; i++) {
        char json[2048];
        snprintf(json, sizeof json,
            "{\"nodes\": 2, %s, \"topology\": {\"kind\": \"ring\"},"
            " \"algorithm\": {\"name\": \"prague\", \"lr\": 0, \"group_size\": 2,"
            " \"groups\": \"%s\"}, \"stop\": {\"time_s\": 0.5}, \"metrics\": {\"every_s\": 0.05}}",
            problem, modes[i]);
        out_metrics_row first = { .time_s = -1 };
        run_options opt = { .init_params = one_three_init, .on_metrics = keep_first,
                            .hook_ctx = &first };
        run_result res;
        run_json(json, &opt, &res);
        ck_assert_double_eq(first.time_s, 0);
        ck_assert_double_gt(first.consensus_distance, 0.5);
        ck_assert_double_eq(res.last.consensus_distance, 0);
        ck_assert_double_eq(res.last.train_loss, first.train_loss);
        ck_assert_uint_gt(res.last.steps, 10);
    }
}
END_TEST

int main(void)
{
    Suite *s = suite_create("proto_prague");
    TCase *tc = tcase_create("prague");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, test_straggler_paces_its_group);
    tcase_add_test(tc, test_straggler_delays_the_groups_it_belongs_to);
    tcase_add_test(tc, test_pending_groups_bounded);
    tcase_add_test(tc, test_group_buffer_counts);
    tcase_add_test(tc, test_lr0_group_average_is_exact);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
