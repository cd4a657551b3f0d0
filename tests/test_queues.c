/* test_queues.c -- bounded message queues and the watchdog on timer-driven
 * protocols (issue 15, items 5 and the scenario fuzzer's false alarm):
 * - gossip with a period far below its transfer time coalesces: a tick
 *   while its previous model has not left its uplink sends nothing, so it
 *   sends exactly one model per ceil(transfer / period) ticks and its
 *   uplink never holds more than one (FIFO and fair NICs);
 * - a protocol that floods without coalescing is stopped with status
 *   "flood" and a located message once its messages in flight pass the
 *   memory left by the run's estimate;
 * - the scenario fuzzer's watchdog-gossip-huge-step.json (gossip's timer
 *   sends before any step can end) is not stopped by the watchdog, while
 *   a message loop without steps still is (test_reliability's pingpong);
 * - environment switches are checked against the round of messages a
 *   protocol may wait for, not the step time alone (the fuzzer's
 *   env-faster-than-rounds-ssp.json is refused before the run);
 * - the other scenarios saved under tests/fuzz/regressions/scenarios/ run
 *   without the watchdog.
 */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "alg_host.h"
#include "run.h"
#include "scn.h"

#define REG_DIR DTSIM_SOURCE_DIR "/tests/fuzz/regressions/scenarios/"

static void run_string(const char *json, const run_options *opt, run_result *res)
{
    scn_scenario s;
    scn_error err;
    ck_assert_msg(scn_load_string(json, "test.json", NULL, 0, &s, &err) == 0, "%s", err.msg);
    run_sim *r = run_prepare(&s, &err);
    ck_assert_msg(r != NULL, "%s", err.msg);
    char msg[1024];
    ck_assert_msg(run_execute(r, opt, res, msg, sizeof msg) == 0, "%s", msg);
    run_destroy(r);
    scn_fini(&s);
}

static double stat_of(const run_result *res, const char *key)
{
    for (int k = 0; k < res->n_stats; k++)
        if (strcmp(res->stat_keys[k], key) == 0)
            return res->stat_values[k];
    ck_abort_msg("no stat %s", key);
    return NAN;
}

/* ---- gossip coalesces ---- */

/* gossip with a check after every tick: its uplink never holds more than
 * the one model it may just have sent. */
static alg_type gossip_checked;
static uint64_t max_queued;
static void checked_timer(alg_ctx *ctx, void *state, int i, uint32_t tag)
{
    alg_gossip.on_timer(ctx, state, i, tag);
    uint64_t q = alg_uplink_queued(ctx, i);
    if (q > max_queued)
        max_queued = q;
}

/* 4 nodes, complete graph, timing only: 256-byte models at 65536 B/s
 * take 2^-8 s to send; ticks every period (a power of two, so every time
 * is exact).  Sends fall on ticks 1, 1 + m, 1 + 2m, ... with m =
 * max(1, 2^-8 / period), the k-th at k x period: the previous model has
 * left at exactly that instant. */
static void gossip_run(double period, const char *discipline, run_result *res)
{
    char json[1024];
    snprintf(json, sizeof json,
             "{\"seed\": 3, \"nodes\": 4, \"topology\": {\"kind\": \"complete\"},"
             " \"compute\": {\"step_time_s\": 0.01},"
             " \"model\": {\"kind\": \"none\", \"message_bytes\": 256},"
             " \"network\": {\"latency_s\": 0.001, \"bandwidth_Bps\": 65536,"
             "               \"discipline\": \"%s\"},"
             " \"algorithm\": {\"name\": \"gossip\", \"period_s\": %.17g},"
             " \"stop\": {\"time_s\": 5}}", discipline, period);
    gossip_checked = alg_gossip;
    gossip_checked.on_timer = checked_timer;
    max_queued = 0;
    run_options opt = { .algorithm = &gossip_checked };
    run_string(json, &opt, res);
    ck_assert_int_eq(res->status, RUN_OK);
}

START_TEST(test_gossip_coalesces_fifo)
{
    run_result res;
    /* period 2^-10 s, a quarter of the transfer: ticks 1, 5, 9, ... of
     * the 5120 by t = 5 s send (the last send at tick 5117), 1280 each;
     * the other 3840 ticks of each node coalesce */
    gossip_run(0x1p-10, "fifo", &res);
    ck_assert_double_eq(stat_of(&res, "sent_min"), 1280);
    ck_assert_double_eq(stat_of(&res, "sent_max"), 1280);
    ck_assert_double_eq(stat_of(&res, "coalesced"), 4 * 3840);
    ck_assert_uint_le(max_queued, 1);
    /* period 2^-6 s, longer than the transfer: every tick sends, as
     * before (floor(5 / 2^-6) = 320) */
    gossip_run(0x1p-6, "fifo", &res);
    ck_assert_double_eq(stat_of(&res, "sent_min"), 320);
    ck_assert_double_eq(stat_of(&res, "sent_max"), 320);
    ck_assert_double_eq(stat_of(&res, "coalesced"), 0);
}
END_TEST

START_TEST(test_gossip_coalesces_fair)
{
    run_result res;
    /* fair sharing is max-min over the route (uplink and downlink): a
     * transfer into a receiver that k - 1 other senders also feed gets a
     * k-th of its downlink (k <= 3), and its end is learnt at its
     * completion event, which may come after a tick at the same instant:
     * between 1 send per 4 ticks and 1 per 13, and never more than one
     * model queued */
    gossip_run(0x1p-10, "fair", &res);
    ck_assert_double_le(stat_of(&res, "sent_max"), 1280);
    ck_assert_double_ge(stat_of(&res, "sent_min"), 5120 / 13);
    ck_assert_uint_le(max_queued, 1);
}
END_TEST

/* ---- a protocol that floods ---- */

/* Node 0 sends a whole-model message to node 1 every microsecond; each
 * takes 1 s to send: its uplink queue grows by 10^6 messages per second. */
static void fl_start(alg_ctx *c, void *s, int n)
{
    (void)s;
    if (n == 0)
        alg_set_timer(c, 0, 1e-6, 0);
    alg_start_step(c, n);
}
static void fl_timer(alg_ctx *c, void *s, int n, uint32_t tag)
{
    (void)s;
    cl_buf *x = alg_snapshot(c, n);
    alg_send(c, n, 1, 0, 0, x, alg_param_bytes(c, c->P));
    alg_buf_put(c, x);
    alg_set_timer(c, n, 1e-6, tag);
}
static void fl_step(alg_ctx *c, void *s, int n, const double *g)
{
    (void)s; (void)g;
    alg_start_step(c, n);
}
static void fl_msg(alg_ctx *c, void *s, int n, const cl_msg *m)
{
    (void)c; (void)s; (void)n; (void)m;
}
static const alg_type flood = {
    .name = "flood", .state_size = 1, .on_start = fl_start, .on_step_done = fl_step,
    .on_message = fl_msg, .on_timer = fl_timer,
};

START_TEST(test_flood_is_stopped)
{
    const char *json =
        "{\"seed\": 1, \"nodes\": 2, \"topology\": {\"kind\": \"complete\"},"
        " \"compute\": {\"step_time_s\": 0.01},"
        " \"model\": {\"kind\": \"softmax\"},"
        " \"data\": {\"kind\": \"synthetic\", \"train\": 256, \"test\": 64, \"features\": 16,"
        "            \"classes\": 4},"
        " \"network\": {\"latency_s\": 0.001, \"bandwidth_Bps\": 272},"
        " \"algorithm\": {\"name\": \"gossip\"},"
        " \"limits\": {\"memory_bytes\": 5e7},"
        " \"stop\": {\"time_s\": 100}}";
    run_options opt = { .algorithm = &flood };
    run_result res;
    run_string(json, &opt, &res);
    ck_assert_int_eq(res.status, RUN_FLOOD);
    ck_assert_str_eq(run_status_name(res.status), "flood");
    ck_assert_str_eq(res.stop_reason, "flood");
    ck_assert_msg(strstr(res.message, "queue limit at t=") == res.message, "%s", res.message);
    ck_assert_msg(strstr(res.message, "node 0, whose send crossed it"), "%s", res.message);
    ck_assert_msg(strstr(res.message, "the protocol sends faster than its links drain"),
                  "%s", res.message);
    /* stopped early: 5e7 bytes at some 700 bytes a message (slot and 68
     * doubles) is about 7e4 messages, 0.07 s of sending */
    ck_assert_double_lt(res.sim_time_s, 0.2);
    ck_assert_double_gt(res.sim_time_s, 0.01);
}
END_TEST

/* ---- the watchdog and timer-driven sends ---- */

static void run_file(const char *path, const char *const *set, size_t n_set,
                     const run_options *opt, run_result *res)
{
    scn_scenario s;
    scn_error err;
    ck_assert_msg(scn_load(path, set, n_set, &s, &err) == 0, "%s", err.msg);
    run_sim *r = run_prepare(&s, &err);
    ck_assert_msg(r != NULL, "%s", err.msg);
    char msg[1024];
    ck_assert_msg(run_execute(r, opt, res, msg, sizeof msg) == 0, "%s", msg);
    run_destroy(r);
    scn_fini(&s);
}

/* The fuzzer's case: 8 gossip nodes tick every 0.01 s for 10^5 s of
 * simulated time before the first step (5 x 10^5 s) can end.  Here 100 s
 * (80,000 ticks, and with latency 10^-3 s as many messages, one event
 * each over FIFO NICs) under a watchdog limit of 10^4 events: the old
 * count of events without a step stopped it at once. */
START_TEST(test_watchdog_gossip_huge_step)
{
    run_options opt = { .watchdog_events = 10000 };
    run_result res;
    const char *set[] = { "stop.time_s=100", "metrics.per_node=false" };
    run_file(REG_DIR "watchdog-gossip-huge-step.json", set, 2, &opt, &res);
    ck_assert_msg(res.status == RUN_OK, "%s", res.message);
    ck_assert_uint_eq(res.last.steps, 0);
    const char *set2[] = { "stop.time_s=100", "metrics.per_node=false",
                           "network.latency_s=0.001" };
    run_file(REG_DIR "watchdog-gossip-huge-step.json", set2, 3, &opt, &res);
    ck_assert_msg(res.status == RUN_OK, "%s", res.message);
    ck_assert_uint_ge(res.events, 2 * 80000 - 100);
}
END_TEST

/* Every scenario the fuzzer found, shortened to 10 s of simulated time
 * where it is longer, ends without the watchdog. */
START_TEST(test_regression_scenarios)
{
    const char *files[] = { "fair-nic-livelock-allreduce2.json",
                            "watchdog-gossip-huge-step.json" };
    for (size_t f = 0; f < sizeof files / sizeof *files; f++) {
        char path[512];
        snprintf(path, sizeof path, "%s%s", REG_DIR, files[f]);
        const char *set[] = { "stop.time_s=10" };
        run_result res;
        run_file(path, set, 1, NULL, &res);
        ck_assert_msg(res.status != RUN_NO_PROGRESS && res.status != RUN_FLOOD, "%s: %s",
                      files[f], res.message);
    }
}
END_TEST

/* The fuzzer's ssp case: 12 of 16 nodes fail and return every few
 * nanoseconds while a 104-byte message takes 0.104 s at 1000 B/s; the
 * switches were checked against the step time (1 ns) alone, so the run
 * started and met the watchdog before the first round of messages ended.
 * Refused before the run, the round named. */
START_TEST(test_env_against_message_rounds)
{
    scn_scenario s;
    scn_error err;
    ck_assert_msg(scn_load(REG_DIR "env-faster-than-rounds-ssp.json", NULL, 0, &s, &err) == 0,
                  "%s", err.msg);
    run_sim *r = run_prepare(&s, &err);
    ck_assert_msg(r == NULL, "accepted");
    ck_assert_msg(strstr(err.msg, "/faults/events/0: error: its switches make about 2.83e+09 "
                         "environment events per step of the cluster (a round of 17 "
                         "whole-model messages, 1.77 s), more than the watchdog's limit of "
                         "10170000 events without a step / 10; lengthen its mean times"),
                  "%s", err.msg);
    scn_fini(&s);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("queues");
    TCase *q = tcase_create("queues");
    tcase_set_timeout(q, 300);
    tcase_add_test(q, test_gossip_coalesces_fifo);
    tcase_add_test(q, test_gossip_coalesces_fair);
    tcase_add_test(q, test_flood_is_stopped);
    tcase_add_test(q, test_watchdog_gossip_huge_step);
    tcase_add_test(q, test_regression_scenarios);
    tcase_add_test(q, test_env_against_message_rounds);
    suite_add_tcase(s, q);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
