/* test_pipeline_dp.c -- pipeline x data parallel (algorithm.replicas) on
 * the timing-only model, exact: r replicas of a homogeneous pipeline
 * iterate in GPipe's closed form plus the stage all-reduce's (ring:
 * 2 (r - 1) a + 2 (r - 1) / r M_s / B; recursive doubling: log2(r) (a +
 * M_s / B)), M_s a stage's share of the model's message; the bytes of k
 * iterations are k (r 2 (p - 1) m A + 2 (r - 1) M) (ring); one replica
 * is the plain pipeline event for event; the partition prices a stage at
 * its slowest replica's node; a crash still stops the run, naming the
 * node's stage and replica; the located errors.
 */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "alg_host.h"
#include "alg_pipeline_int.h"
#include "run_internal.h"
#include "test_util.h"

#define MAXN 64

static int      cap_lo[MAXN + 1];
static uint64_t cap_upd[MAXN];
static alg_type wrapped;

static int capture(const alg_ctx *ctx, const char **keys, double *values, int max)
{
    const pp_shared *sh = ctx->shared;
    memcpy(cap_lo, sh->lo, (size_t)(sh->p + 1) * sizeof *cap_lo);
    for (int i = 0; i < ctx->n && i < MAXN; i++)
        cap_upd[i] = ((const pp_stage *)alg_state(ctx, i))->updates;
    return alg_pipeline.stats(ctx, keys, values, max);
}

/* p x r nodes of step 0.3 s (node `slow` slowed by `factor`, none when
 * -1), links of latency 1 ms and 1e8 B/s, a model message of msg bytes. */
static void run_dp(int p, int r, int m, const char *sched, const char *extra, double msg,
                   int slow, double factor, double time_s, run_result *res)
{
    char groups[256] = "", json[2048];
    if (slow >= 0)
        snprintf(groups, sizeof groups, ", \"groups\": [{\"nodes\": [%d], \"slowdown\": %.17g}]",
                 slow, factor);
    snprintf(json, sizeof json,
        "{\"seed\": 1, \"nodes\": %d,"
        " \"compute\": {\"step_time_s\": 0.3%s},"
        " \"network\": {\"latency_s\": 0.001, \"bandwidth_Bps\": 1e8},"
        " \"topology\": {\"kind\": \"ring\"},"
        " \"model\": {\"kind\": \"none\", \"message_bytes\": %.17g},"
        " \"algorithm\": {\"name\": \"pipeline\", \"micro_batches\": %d, \"schedule\": \"%s\","
        "   \"replicas\": %d, \"act_bytes\": 1e4%s},"
        " \"stop\": {\"time_s\": %.17g}}", p * r, groups, msg, m, sched, r, extra, time_s);
    wrapped = alg_pipeline;
    wrapped.stats = capture;
    run_options opt = { .algorithm = &wrapped };
    run_json(json, &opt, res);
}

/* The single pipeline's iteration on these links (tests/test_pipeline.c,
 * test_gpipe_links): (m + p - 1)(tf + tb) + 2 (p - 1)(a + A / B). */
static double pipe_T(int p, int m)
{
    const double tf = 0.3 / (3.0 * p * m);
    return (m + p - 1) * 3 * tf + 2 * (p - 1) * (0.001 + 1e4 / 1e8);
}

START_TEST(test_gpipe_replicas_ring)
{
    static const int prm[][3] = { { 4, 3, 8 }, { 2, 2, 4 }, { 3, 5, 6 } };
    for (size_t i = 0; i < sizeof prm / sizeof prm[0]; i++) {
        const int p = prm[i][0], r = prm[i][1], m = prm[i][2];
        const double M = 4e5, Ms = M / p;
        const double A = 2 * (r - 1) * 0.001 + 2.0 * (r - 1) / r * Ms / 1e8;
        const double T = pipe_T(p, m) + A;
        run_result res;
        run_dp(p, r, m, "gpipe", "", M, -1, 1, 5 * T + 0.3 / (6.0 * p * m), &res);
        ck_assert_int_eq(res.status, RUN_OK);
        ck_assert_double_eq(stat_of(&res, "replicas"), r);
        ck_assert_double_eq(stat_of(&res, "iterations"), 5);
        ck_assert_double_eq_tol(stat_of(&res, "first_iteration_s"), T, 1e-12);
        ck_assert_double_eq_tol(stat_of(&res, "mean_iteration_s"), T, 1e-12);
        /* every node applied five updates */
        for (int k = 0; k < p * r; k++)
            ck_assert_uint_eq(cap_upd[k], 5);
        /* per iteration: each replica's activations and gradients, and
         * each stage's ring (2 (r - 1) chunks of M_s / r per node) */
        ck_assert_double_eq_tol(res.last.bytes_sent,
                                5 * (r * 2.0 * (p - 1) * m * 1e4 + 2.0 * (r - 1) * M), 1e-6);
    }
}
END_TEST

/* Recursive doubling on 4 replicas: log2(4) (a + M_s / B) added to
 * GPipe's iteration; 1F1B with a flush (whose iteration on links with
 * latency is not GPipe's) gets the same all-reduce added to its own
 * single-pipeline iteration (each stage reduces after its last
 * backward, with slack before its next mini-batch's input). */
START_TEST(test_1f1b_replicas_rd)
{
    const int p = 4, r = 4, m = 8;
    const double Ms = 4e5 / p, A = 2 * (0.001 + Ms / 1e8);
    const double T = pipe_T(p, m) + A;
    run_result res;
    run_dp(p, r, m, "gpipe", ", \"collective\": \"recursive_doubling\"", 4e5, -1, 1, 4 * T + 1e-4,
           &res);
    ck_assert_double_eq(stat_of(&res, "iterations"), 4);
    ck_assert_double_eq_tol(stat_of(&res, "mean_iteration_s"), T, 1e-12);
    run_dp(p, 1, m, "1f1b", "", 4e5, -1, 1, 1, &res);
    const double T1 = stat_of(&res, "mean_iteration_s");
    ck_assert(T1 > pipe_T(p, m) + 1e-3);   /* not GPipe's on these links */
    run_dp(p, r, m, "1f1b", ", \"collective\": \"recursive_doubling\"", 4e5, -1, 1, 1, &res);
    ck_assert_double_eq_tol(stat_of(&res, "first_iteration_s"), T1 + A, 1e-12);
    ck_assert_double_eq_tol(stat_of(&res, "mean_iteration_s"), T1 + A, 1e-12);
}
END_TEST

/* One replica: no all-reduce, the plain pipeline's closed form. */
START_TEST(test_one_replica_plain)
{
    const int p = 4, m = 8;
    const double T = pipe_T(p, m);
    run_result res;
    run_dp(p, 1, m, "gpipe", "", 4e5, -1, 1, 5 * T + 1e-4, &res);
    ck_assert_double_eq(stat_of(&res, "iterations"), 5);
    ck_assert_double_eq_tol(stat_of(&res, "mean_iteration_s"), T, 1e-12);
    ck_assert_double_eq(res.last.bytes_sent, 5 * 2.0 * (p - 1) * m * 1e4);
}
END_TEST

/* The asynchronous schedules with replicas: 2BW's all-reduce per
 * mini-batch, PipeDream's per micro-batch, both blocking the stage; with
 * PipeDream every stage's every backward waits for the ring, so the
 * steady period is a stage's forward + backward + the ring of one
 * stage's gradient (+ the activation gradient queued before it). */
START_TEST(test_async_replicas)
{
    const int p = 4, r = 2, m = 8;
    const double Ms = 4e5 / p, A = 2 * (r - 1) * 0.001 + 2.0 * (r - 1) / r * Ms / 1e8;
    run_result res;
    run_dp(p, r, m, "2bw", "", 4e5, -1, 1, 2, &res);
    ck_assert_int_eq(res.status, RUN_OK);
    for (int k = 0; k < p * r; k++)
        ck_assert_uint_ge(cap_upd[k], 3);
    run_dp(p, r, m, "pipedream", "", 4e5, -1, 1, 4, &res);
    ck_assert_int_eq(res.status, RUN_OK);
    const double tf = 0.3 / (3.0 * p * m);
    /* a stage s > 0 in the steady state: its forward, its backward, the
     * activation gradient's A / B on its uplink before the ring's first
     * chunk, the ring, then the next forward: 3 tf + A / B + A_ring per
     * micro-batch and replica */
    ck_assert_double_eq_tol(stat_of(&res, "throughput_mb_per_s"), r / (3 * tf + 1e4 / 1e8 + A),
                            1e-6);
}
END_TEST

/* One partition for every replica, a stage priced at its slowest node:
 * 8 layers on 4 stages, 2 replicas, node 6 (stage 2 of replica 1) three
 * times slower: stage 2 gets one layer, as with one replica and node 2
 * slowed (tests/test_pipeline.c, test_partition_runs). */
START_TEST(test_partition_slowest_replica)
{
    run_result res;
    run_dp(4, 2, 8, "gpipe", ", \"layers\": 8", 4e5, 6, 3, 0.5, &res);
    ck_assert_int_eq(res.status, RUN_OK);
    ck_assert_int_eq(cap_lo[1], 3);
    ck_assert_int_eq(cap_lo[2], 6);
    ck_assert_int_eq(cap_lo[3], 7);
    ck_assert_double_eq_tol(stat_of(&res, "slowest_stage_s"), 3 * 0.3 / 8 / 8, 1e-15);
}
END_TEST

/* p = 2, r = 2, m = 2, free links: tf = 0.3 / 12 = 0.025, T = 9 tf =
 * 0.225.  Node 3 (stage 1 of replica 1) goes down for good at T + 4 tf
 * = 0.325, in its backward of mini-batch 1; declared at 0.575.  Until
 * then replica 0 finished mini-batch 1's backwards (node 1 at T + 7 tf,
 * node 0 at 2 T) and waits in its stages' all-reduces; at 0.575 replica
 * 1 is dropped, each all-reduce re-forms over replica 0 alone (nobody
 * had completed it: re-run, k = 1, at once), so iteration 2 ends at
 * 0.575 and replica 0 goes on alone in T per iteration: stopped at
 * 0.575 + 3 T + tf / 2 the run ends by time with 5 iterations, every
 * node of replica 0 at 5 updates, 2 m micro-batches of replica 1's first
 * mini-batch and 5 m of replica 0's done. */
static const char *crash_json_node(int node, double down_s, double up_s, int r,
                                   const char *sched, double time_s)
{
    static char json[2048];
    char up[64] = "";
    if (up_s > 0)
        snprintf(up, sizeof up, ", \"up_s\": %.17g", up_s);
    snprintf(json, sizeof json,
        "{\"seed\": 1, \"nodes\": %d,"
        " \"compute\": {\"step_time_s\": 0.3},"
        " \"network\": {\"latency_s\": 0, \"bandwidth_Bps\": 1e15},"
        " \"topology\": {\"kind\": \"ring\"},"
        " \"model\": {\"kind\": \"none\", \"message_bytes\": 1000},"
        " \"faults\": {\"detect_s\": 0.25, \"events\": [{\"kind\": \"schedule\", \"nodes\": [%d],"
        "   \"down_s\": %.17g%s}]},"
        " \"algorithm\": {\"name\": \"pipeline\", \"micro_batches\": 2, \"replicas\": %d,"
        "   \"schedule\": \"%s\", \"act_bytes\": 0},"
        " \"stop\": {\"time_s\": %.17g}}", 2 * r, node, down_s, up, r, sched, time_s);
    return json;
}

static const char *crash_json(double down_s, double up_s, int r, const char *sched,
                              double time_s)
{
    return crash_json_node(3, down_s, up_s, r, sched, time_s);
}

START_TEST(test_crash_drops_replica)
{
    const double tf = 0.025, T = 9 * tf, td = T + 4 * tf + 0.25, stop = td + 3 * T + tf / 2;
    run_result res;
    wrapped = alg_pipeline;
    wrapped.stats = capture;
    run_options opt = { .algorithm = &wrapped };
    run_json(crash_json(T + 4 * tf, 0, 2, "gpipe", stop), &opt, &res);
    ck_assert_int_eq(res.status, RUN_OK);
    ck_assert_double_eq_tol(res.last.time_s, stop, 1e-12);
    ck_assert_double_eq(stat_of(&res, "iterations"), 5);
    ck_assert_msg(fabs(stat_of(&res, "first_iteration_s") - T) < 1e-12, "%.17g",
                  stat_of(&res, "first_iteration_s") - T);
    ck_assert_double_eq_tol(stat_of(&res, "mean_iteration_s"), (td + 3 * T) / 5, 1e-12);
    ck_assert_double_eq(stat_of(&res, "micro_batches_done"), 2 + 5 * 2);
    ck_assert_double_eq(stat_of(&res, "replicas_live"), 1);
    ck_assert_double_eq(stat_of(&res, "replicas_dropped"), 1);
    ck_assert_double_eq(stat_of(&res, "stopped_by_stage"), -1);
    ck_assert_uint_eq(cap_upd[0], 5);
    ck_assert_uint_eq(cap_upd[1], 5);
    ck_assert_uint_eq(cap_upd[2], 1);   /* replica 1 applied mini-batch 0 only */
    ck_assert_uint_eq(cap_upd[3], 1);
}
END_TEST

/* The same crash with the node back at 1.0 (declared at 0.575): replica
 * 1 rejoins at once at round J = 1 + replica 0's stage 0 updates then
 * (iteration 3 ended at 0.8, so J = 4), each of its stages waiting for
 * its stage's parameters after 4 updates (a message on free links: at
 * once for stage 1, which has them; stage 0 gets them at 1.025, when
 * replica 0's stage 0 applies update 4); from mini-batch 4 on both
 * replicas all-reduce again (on free links at no cost): stage 0 of
 * replica 1 starts mini-batch 4 at 1.025 as replica 0's does, so every
 * later iteration is T again and both replicas apply the same updates. */
START_TEST(test_replica_rejoins)
{
    const double tf = 0.025, T = 9 * tf, td = T + 4 * tf + 0.25, stop = td + 5 * T + tf / 2;
    run_result res;
    wrapped = alg_pipeline;
    wrapped.stats = capture;
    run_options opt = { .algorithm = &wrapped };
    run_json(crash_json(T + 4 * tf, 1.0, 2, "gpipe", stop), &opt, &res);
    ck_assert_int_eq(res.status, RUN_OK);
    ck_assert_double_eq(stat_of(&res, "iterations"), 7);
    ck_assert_double_eq_tol(stat_of(&res, "mean_iteration_s"), (td + 5 * T) / 7, 1e-12);
    ck_assert_double_eq(stat_of(&res, "replicas_live"), 2);
    ck_assert_double_eq(stat_of(&res, "replicas_rejoined"), 1);
    for (int k = 0; k < 4; k++)
        ck_assert_uint_eq(cap_upd[k], 7);
    /* replica 0: mini-batches 0 .. 6; replica 1: 0, then 4 .. 6 */
    ck_assert_double_eq(stat_of(&res, "micro_batches_done"), 2 * 7 + 2 * (1 + 3));
    /* an asynchronous schedule's dropped replica stays out */
    run_json(crash_json(T + 4 * tf, 1.0, 2, "2bw", 3), &opt, &res);
    ck_assert_int_eq(res.status, RUN_OK);
    ck_assert_double_eq(stat_of(&res, "replicas_live"), 1);
    ck_assert_double_eq(stat_of(&res, "replicas_rejoined"), 0);
}
END_TEST

/* One replica, GPipe: p = 2, m = 2, T = 9 tf as above.  Node 1 down at T
 * + 4 tf (in its backward of mini-batch 1), declared at 0.575 (the
 * pipeline halts, every stage dropping mini-batch 1), back at 1.0: the
 * mini-batch restarts from stage 0 at 1.0, so at 1.0 + 3 T + tf / 2 the
 * run has 4 iterations (T, then 1.0 + T, + 2 T, + 3 T), 4 updates per
 * stage, 2 + 3 x 2 micro-batches done.  Node 0 down at T + 8 tf instead
 * (in its last backward of mini-batch 1: stage 1 had applied mini-batch
 * 1's update at T + 7 tf, stage 0 had not): at the restart stage 1 rolls
 * back to its checkpoint, so both end with 4 updates again (5 without the
 * rollback), and stage 0's one backward of the lost mini-batch is not
 * counted done. */
START_TEST(test_restart_one_replica)
{
    const double tf = 0.025, T = 9 * tf, stop = 1.0 + 3 * T + tf / 2;
    wrapped = alg_pipeline;
    wrapped.stats = capture;
    run_options opt = { .algorithm = &wrapped };
    const double down[2] = { T + 8 * tf, T + 4 * tf };
    for (int node = 0; node < 2; node++) {
        run_result res;
        run_json(crash_json_node(node, down[node], 1.0, 1, "gpipe", stop), &opt, &res);
        ck_assert_int_eq(res.status, RUN_OK);
        ck_assert_double_eq(stat_of(&res, "restarts"), 1);
        ck_assert_double_eq(stat_of(&res, "iterations"), 4);
        ck_assert_double_eq_tol(stat_of(&res, "mean_iteration_s"), (1.0 + 3 * T) / 4, 1e-12);
        ck_assert_double_eq(stat_of(&res, "micro_batches_done"), 2 + 3 * 2);
        ck_assert_uint_eq(cap_upd[0], 4);
        ck_assert_uint_eq(cap_upd[1], 4);
    }
}
END_TEST

/* With one replica a crash still stops the run (tests/test_pipeline.c);
 * with every replica gone too, the report naming the last node's stage
 * and replica. */
START_TEST(test_last_replica_stops)
{
    const char *json =
        "{\"seed\": 1, \"nodes\": 8,"
        " \"compute\": {\"step_time_s\": 0.3},"
        " \"network\": {\"latency_s\": 0, \"bandwidth_Bps\": 1e15},"
        " \"topology\": {\"kind\": \"ring\"},"
        " \"model\": {\"kind\": \"none\", \"message_bytes\": 1000},"
        " \"faults\": {\"detect_s\": 0.25, \"events\": [{\"kind\": \"schedule\", \"nodes\": [6],"
        "   \"down_s\": 0.5}, {\"kind\": \"schedule\", \"nodes\": [1], \"down_s\": 0.9}]},"
        " \"algorithm\": {\"name\": \"pipeline\", \"micro_batches\": 8, \"replicas\": 2},"
        " \"stop\": {\"time_s\": 100}}";
    run_result res;
    run_json(json, NULL, &res);
    ck_assert_int_eq(res.status, RUN_STALLED);
    ck_assert_double_eq(stat_of(&res, "stopped_by_stage"), 1);
    ck_assert_double_eq(stat_of(&res, "replicas_dropped"), 2);
    ck_assert_msg(strstr(res.message, "node 1 (stage 1 of replica 0) went down") != NULL, "%s",
                  res.message);
}
END_TEST

/* The memory check's stage buffers (alg_pipeline_mem.c), by difference:
 * an MLP 6-12-10-8-3 (P = 84 + 130 + 88 + 27 = 329) on 4 stages x 2
 * replicas, m = 4 (K = m + p = 8): PipeDream stashes K versions of every
 * stage, K P doubles per replica more than GPipe; 2BW one version and K
 * version numbers per stage, P + K p. */
static double estimate_of(const char *sched, int r)
{
    char json[1024];
    snprintf(json, sizeof json,
        "{\"seed\": 1, \"nodes\": %d, \"topology\": {\"kind\": \"ring\"},"
        " \"model\": {\"kind\": \"mlp\", \"hidden\": [12, 10, 8]},"
        " \"data\": {\"train\": 256, \"test\": 64, \"features\": 6, \"classes\": 3},"
        " \"algorithm\": {\"name\": \"pipeline\", \"micro_batches\": 4, \"batch\": 16,"
        "   \"schedule\": \"%s\", \"replicas\": %d}, \"stop\": {\"time_s\": 1}}",
        4 * r, sched, r);
    scn_scenario s;
    scn_error err;
    run_sim *rs;
    ck_assert_msg(prepare_json(json, &s, &rs, &err) == 0, "%s", err.msg);
    const double e = run_i_memory_estimate(rs);
    run_destroy(rs);
    scn_fini(&s);
    return e;
}

START_TEST(test_memory_stage_buffers)
{
    const double P = 329, K = 8;
    ck_assert_double_eq(estimate_of("pipedream", 2) - estimate_of("gpipe", 2), 2 * 8 * K * P);
    ck_assert_double_eq(estimate_of("2bw", 2) - estimate_of("gpipe", 2), 2 * (8 * P + 8 * K * 4));
    /* one replica: GPipe keeps each stage's previous version for a restart */
    ck_assert_double_eq(estimate_of("pipedream", 1) - estimate_of("gpipe", 1), 8 * K * P - 8 * P);
}
END_TEST

START_TEST(test_dp_errors)
{
    expect_prepare_error(
        "{\"nodes\": 6, \"model\": {\"kind\": \"none\", \"message_bytes\": 10},"
        " \"topology\": {\"kind\": \"ring\"},"
        " \"algorithm\": {\"name\": \"pipeline\", \"stages\": 4, \"replicas\": 2},"
        " \"stop\": {\"time_s\": 1}}",
        "test.json: /algorithm/name: error: algorithm.stages x algorithm.replicas is 4 x 2 but the "
        "scenario has 6 nodes (node = replica x stages + stage: set nodes to their product, or "
        "stages to 0 with nodes a multiple of the replicas)");
    expect_prepare_error(
        "{\"nodes\": 7, \"model\": {\"kind\": \"none\", \"message_bytes\": 10},"
        " \"topology\": {\"kind\": \"ring\"},"
        " \"algorithm\": {\"name\": \"pipeline\", \"replicas\": 2},"
        " \"stop\": {\"time_s\": 1}}",
        "test.json: /algorithm/name: error: algorithm.stages x algorithm.replicas is 3 x 2 but the "
        "scenario has 7 nodes (node = replica x stages + stage: set nodes to their product, or "
        "stages to 0 with nodes a multiple of the replicas)");
}
END_TEST

int main(void)
{
    Suite *s = suite_create("pipeline_dp");
    TCase *tc = tcase_create("exact");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, test_gpipe_replicas_ring);
    tcase_add_test(tc, test_1f1b_replicas_rd);
    tcase_add_test(tc, test_one_replica_plain);
    tcase_add_test(tc, test_async_replicas);
    tcase_add_test(tc, test_partition_slowest_replica);
    tcase_add_test(tc, test_crash_drops_replica);
    tcase_add_test(tc, test_replica_rejoins);
    tcase_add_test(tc, test_last_replica_stops);
    tcase_add_test(tc, test_restart_one_replica);
    tcase_add_test(tc, test_memory_stage_buffers);
    tcase_add_test(tc, test_dp_errors);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
