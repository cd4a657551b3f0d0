/* test_budget.c -- the event budget (limits.events, docs/reliability.md,
 * "Bounds every run obeys"): the estimate before the run with each of its
 * parts computed by hand (steps, their messages and retransmissions,
 * gossip's timer ticks, evaluations weighted by the samples they evaluate,
 * per-node rows), the key that raises it and the one that skips it, the
 * stop while the run goes on (exact event counts, status "limit", the same
 * stop on a rerun), and the scenario fuzzer's cases of this class replayed
 * from tests/fuzz/regressions/scenarios/ with their exact outcomes.  It
 * does not measure speed.
 */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "test_util.h"

#define REG_DIR DTSIM_SOURCE_DIR "/tests/fuzz/regressions/scenarios/"

static const char gossip[] =
    "{\"nodes\": 4, \"topology\": {\"kind\": \"ring\"},"
    " \"data\": {\"train\": 256, \"test\": 64, \"features\": 4, \"classes\": 2},"
    " \"algorithm\": {\"name\": \"gossip\", \"lr\": 0.1, \"batch\": 8}%s}";
static const char dpsgd[] =
    "{\"nodes\": 4, \"topology\": {\"kind\": \"ring\"},"
    " \"data\": {\"train\": 256, \"test\": 64, \"features\": 4, \"classes\": 2},"
    " \"algorithm\": {\"name\": \"dpsgd\", \"lr\": 0.1, \"batch\": 8}%s}";

static void expect_error(const char *base, const char *extra, const char *msg)
{
    char json[2048];
    snprintf(json, sizeof json, base, extra);
    expect_prepare_error(json, msg);
}

static void expect_ok(const char *base, const char *extra)
{
    char json[2048];
    scn_scenario s;
    scn_error err;
    run_sim *r;
    snprintf(json, sizeof json, base, extra);
    ck_assert_msg(prepare_json(json, &s, &r, &err) == 0, "%s: %s", extra, err.msg);
    run_destroy(r);
    scn_fini(&s);
}

/* 4 gossip nodes on a ring, 0.01 s steps, 10^7 s: 4e9 steps, 2 message
 * events each (mean degree 2, one event a message over FIFO NICs: its
 * delivery), 4 / 0.01 x 10^7 = 4e9 ticks, 102 evaluations of 256 + 64
 * samples (+1 each). */
START_TEST(estimate_by_hand)
{
    expect_error(gossip, ", \"stop\": {\"time_s\": 1e7}",
        "test.json: /stop/time_s: error: this run would make about 1.6e+10 events (4e+09 "
        "steps, 8e+09 message events, 4e+09 protocol timers, 102 evaluations x 321, 0 "
        "environment switches, over 1e+07 s of simulated time), more than the limit of 1e+09 "
        "(limits.events); shorten the run, evaluate less often, raise limits.events, or run "
        "with --force (the run then stops at the limit)");
    /* the ticks dominate once the steps are long: the pointer follows */
    expect_error(gossip, ", \"stop\": {\"time_s\": 1e8}, \"compute\": {\"step_time_s\": 1e6}",
        "test.json: /algorithm: error: this run would make about 4e+10 events (400 steps, "
        "800 message events, 4e+10 protocol timers, 102 evaluations x 321, 0 environment "
        "switches, over 1e+08 s of simulated time), more than the limit of 1e+09 "
        "(limits.events); shorten the run, evaluate less often, raise limits.events, or run "
        "with --force (the run then stops at the limit)");
    /* per-node evaluations: 256 + 64 + 4 x (1 + 64) = 580 more each */
    expect_error(gossip, ", \"stop\": {\"steps\": 10}, \"metrics\": "
                 "{\"every_s\": 1e-4, \"per_node\": true}, \"limits\": {\"events\": 1e5}",
        "test.json: /metrics/every_s: error: this run would make about 5.82e+05 events (40 "
        "steps, 80 message events, 40 protocol timers, 1e+03 evaluations x 581, 0 "
        "environment switches, over 0.1 s of simulated time, the least time stop.steps can "
        "take), more than the limit of 1e+05 (limits.events); shorten the run, evaluate less "
        "often, raise limits.events, or run with --force (the run then stops at the limit)");
    /* loss 0.5 with 15 retransmissions: (1 - 0.5^16) / 0.5 sends a message,
     * each but the one delivered an arrival and a retransmission timer */
    expect_error(dpsgd, ", \"stop\": {\"time_s\": 1e5}, \"network\": {\"loss\": 0.5}, "
                 "\"limits\": {\"events\": 1e8}",
        "test.json: /stop/time_s: error: this run would make about 2.8e+08 events (4e+07 "
        "steps, 2.4e+08 message events, 0 protocol timers, 102 evaluations x 321, 0 "
        "environment switches, over 100000 s of simulated time), more than the limit of 1e+08 "
        "(limits.events); shorten the run, evaluate less often, raise limits.events, or run "
        "with --force (the run then stops at the limit)");
    expect_error(dpsgd, ", \"stop\": {\"time_s\": 1e5}, \"network\": {\"loss\": 0.5, "
                 "\"retransmit\": false}, \"limits\": {\"events\": 1e8}",
        "test.json: /stop/time_s: error: this run would make about 1.2e+08 events (4e+07 "
        "steps, 8e+07 message events, 0 protocol timers, 102 evaluations x 321, 0 "
        "environment switches, over 100000 s of simulated time), more than the limit of 1e+08 "
        "(limits.events); shorten the run, evaluate less often, raise limits.events, or run "
        "with --force (the run then stops at the limit)");
    expect_error(dpsgd, ", \"stop\": {\"time_s\": 1}, \"limits\": {\"events\": 0.5}",
        "test.json: /limits/events: error: must be between 1 and 1e18 events, got 0.5");
    expect_error(dpsgd, ", \"stop\": {\"time_s\": 1}, \"limits\": {\"check_events\": 1}",
        "test.json: /limits/check_events: error: must be true or false, got number");
}
END_TEST

/* The key raises the bound; check_events false skips the estimate. */
START_TEST(raised_or_skipped)
{
    expect_ok(gossip, ", \"stop\": {\"time_s\": 1e7}, \"limits\": {\"events\": 2.5e10}");
    expect_ok(gossip, ", \"stop\": {\"time_s\": 1e7}, \"limits\": {\"check_events\": false}");
    expect_ok(dpsgd, ", \"stop\": {\"time_s\": 1e5}, \"network\": {\"loss\": 0.5}, "
              "\"limits\": {\"events\": 2.81e8}");
    expect_error(dpsgd, ", \"stop\": {\"time_s\": 1e5}, \"network\": {\"loss\": 0.5}, "
                 "\"limits\": {\"events\": 2.7e8}",
        "test.json: /stop/time_s: error: this run would make about 2.8e+08 events (4e+07 "
        "steps, 2.4e+08 message events, 0 protocol timers, 102 evaluations x 321, 0 "
        "environment switches, over 100000 s of simulated time), more than the limit of "
        "2.7e+08 (limits.events); shorten the run, evaluate less often, raise limits.events, "
        "or run with --force (the run then stops at the limit)");
}
END_TEST

/* While the run goes on: a timing-only run (evaluations add nothing)
 * stops at exactly the budget's event, with status "limit"; a rerun stops
 * at the same event and instant. */
START_TEST(stops_at_the_budget)
{
    const char *json =
        "{\"nodes\": 4, \"topology\": {\"kind\": \"ring\"}, \"model\": {\"kind\": \"none\", "
        "\"message_bytes\": 1000}, \"algorithm\": {\"name\": \"dpsgd\"}, "
        "\"stop\": {\"time_s\": 100}, \"limits\": {\"events\": 5000, "
        "\"check_events\": false}}";
    run_result a, b;
    run_json(json, NULL, &a);
    ck_assert_int_eq(a.status, RUN_LIMIT);
    ck_assert_str_eq(a.stop_reason, "limit");
    ck_assert_uint_eq(a.events, 5000);
    ck_assert_msg(strstr(a.message, " s: 5000 events handled and 0 more counted for "
                         "evaluations (one per sample evaluated and per node row) reach the "
                         "limit of 5000 (limits.events); shorten the run, evaluate less often, "
                         "or raise limits.events") && strncmp(a.message, "event limit at t=",
                                                             17) == 0, "%s", a.message);
    run_json(json, NULL, &b);
    ck_assert_uint_eq(b.events, 5000);
    ck_assert(a.sim_time_s == b.sim_time_s);
    ck_assert_str_eq(a.message, b.message);
    /* run_options.max_events overrides the scenario's */
    run_options opt = { .max_events = 777 };
    run_json(json, &opt, &a);
    ck_assert_int_eq(a.status, RUN_LIMIT);
    ck_assert_uint_eq(a.events, 777);
    /* within the budget: untouched */
    opt.max_events = 0;
    const char *small =
        "{\"nodes\": 4, \"topology\": {\"kind\": \"ring\"}, \"model\": {\"kind\": \"none\", "
        "\"message_bytes\": 1000}, \"algorithm\": {\"name\": \"dpsgd\"}, "
        "\"stop\": {\"time_s\": 1}}";
    run_json(small, &opt, &a);
    ck_assert_int_eq(a.status, RUN_OK);
}
END_TEST

/* Evaluations count their samples: every_s 0.001 over 10 s of 4 dpsgd
 * nodes with 256 train and 64 test samples; each evaluation adds 320.
 * A budget of 100,000 is crossed by the evaluations' count: at the k-th
 * evaluation, events + 320 k >= 100,000. */
START_TEST(evaluations_count_their_samples)
{
    const char *json =
        "{\"nodes\": 4, \"topology\": {\"kind\": \"ring\"},"
        " \"data\": {\"train\": 256, \"test\": 64, \"features\": 4, \"classes\": 2},"
        " \"algorithm\": {\"name\": \"dpsgd\", \"lr\": 0.1, \"batch\": 8},"
        " \"stop\": {\"time_s\": 10}, \"metrics\": {\"every_s\": 0.001},"
        " \"limits\": {\"events\": 100000, \"check_events\": false}}";
    run_result a;
    run_json(json, NULL, &a);
    ck_assert_int_eq(a.status, RUN_LIMIT);
    unsigned long long ev = 0, more = 0;
    const char *m = strstr(a.message, " s: ");
    ck_assert_msg(m && sscanf(m, " s: %llu events handled and %llu more", &ev, &more) == 2,
                  "%s", a.message);
    ck_assert_uint_eq(ev, a.events);
    ck_assert_uint_eq(more % 320, 0);
    ck_assert_uint_ge(ev + more, 100000);
    ck_assert_uint_lt(ev + more - 320, 100000);   /* the evaluation before did not reach it */
    /* per node: 320 + 4 x (1 + 64) = 580 each */
    const char *pn =
        "{\"nodes\": 4, \"topology\": {\"kind\": \"ring\"},"
        " \"data\": {\"train\": 256, \"test\": 64, \"features\": 4, \"classes\": 2},"
        " \"algorithm\": {\"name\": \"dpsgd\", \"lr\": 0.1, \"batch\": 8},"
        " \"stop\": {\"time_s\": 10}, \"metrics\": {\"every_s\": 0.001, \"per_node\": true},"
        " \"limits\": {\"events\": 100000, \"check_events\": false}}";
    run_json(pn, NULL, &a);
    ck_assert_int_eq(a.status, RUN_LIMIT);
    m = strstr(a.message, " s: ");
    ck_assert_msg(m && sscanf(m, " s: %llu events handled and %llu more", &ev, &more) == 2,
                  "%s", a.message);
    ck_assert_uint_eq(more % 580, 0);
    ck_assert_uint_ge(ev + more, 100000);
}
END_TEST

/* ---- the fuzzer's cases (tests/fuzz/regressions/scenarios/) ------------- */

static void load_file(const char *name, const char *const *set, size_t n_set,
                      scn_scenario *s)
{
    char path[512];
    scn_error err;
    snprintf(path, sizeof path, "%s%s", REG_DIR, name);
    ck_assert_msg(scn_load(path, set, n_set, s, &err) == 0, "%s", err.msg);
}

/* Refused before the run, with the part that dominates named. */
static void expect_refused(const char *name, const char *const *set, size_t n_set,
                           const char *tail)
{
    scn_scenario s;
    scn_error err;
    load_file(name, set, n_set, &s);
    run_sim *r = run_prepare(&s, &err);
    ck_assert_msg(r == NULL, "%s accepted", name);
    const char *p = strstr(err.msg, ".json: ");
    ck_assert_msg(p && strcmp(p + 7, tail) == 0, "%s:\n%s\nexpected\n%s", name, err.msg, tail);
    scn_fini(&s);
}

/* Run to the budget: status "limit", the message's counts exact. */
static void expect_stopped(const char *name, const char *budget, const char *msg)
{
    const char *set[] = { budget };
    scn_scenario s;
    scn_error err;
    load_file(name, set, 1, &s);
    run_sim *r = run_prepare(&s, &err);
    ck_assert_msg(r != NULL, "%s: %s", name, err.msg);
    run_result res;
    char m[1024];
    ck_assert_msg(run_execute(r, NULL, &res, m, sizeof m) == 0, "%s", m);
    ck_assert_int_eq(res.status, RUN_LIMIT);
    ck_assert_msg(strcmp(res.message, msg) == 0, "%s:\n%s\nexpected\n%s", name, res.message,
                  msg);
    run_destroy(r);
    scn_fini(&s);
}

#define TAIL ", more than the limit of 1e+09 (limits.events); shorten the run, evaluate less " \
             "often, raise limits.events, or run with --force (the run then stops at the limit)"

/* Gossip's ticks: seed2-case915 (5e8 s, 2e11 ticks: hours), seed1-case15
 * (the watchdog's case, 4e11), seed3-case734 (stop.steps and time_s: the
 * least time 5 steps take, 8e9 ticks), seed3-case780 (5e10). */
START_TEST(fuzz_gossip_timers)
{
    expect_refused("timers-gossip-5e8s.json", NULL, 0,
        "/algorithm: error: this run would make about 2e+11 events (2e+03 steps, 3e+03 "
        "message events, 2e+11 protocol timers, 102 evaluations x 81, 0 environment switches, "
        "over 5e+08 s of simulated time)" TAIL);
    expect_refused("watchdog-gossip-huge-step.json", NULL, 0,
        "/algorithm: error: this run would make about 4e+11 events (8e+03 steps, 3.6e+04 "
        "message events, 4e+11 protocol timers, 1e+03 evaluations x 9, 0 environment "
        "switches, over 5e+08 s of simulated time)" TAIL);
    const char *deflt[] = { "limits.events=1e9" };
    expect_refused("timers-gossip-steps-and-time.json", deflt, 1,
        "/algorithm: error: this run would make about 8e+09 events (80 steps, 320 message "
        "events, 8e+09 protocol timers, 11 evaluations x 641, 0 environment switches, over "
        "5e+06 s of simulated time)" TAIL);
    expect_refused("timers-gossip-markov.json", deflt, 1,
        "/algorithm: error: this run would make about 5e+10 events (1e+03 steps, 4.08e+03 "
        "message events, 5e+10 protocol timers, 102 evaluations x 1, 25 environment "
        "switches, over 1e+08 s of simulated time)" TAIL);
}
END_TEST

/* Dense evaluations, and nanosecond faults (seed2-case304): refused. */
START_TEST(fuzz_refused)
{
    expect_refused("evals-sgp-per-node-fair.json", NULL, 0,
        "/metrics/every_s: error: this run would make about 2.49e+06 events (3.2e+03 steps, "
        "3.77e+04 message events, 0 protocol timers, 904 evaluations x 2705, 50 environment "
        "switches, over 1.61099 s of simulated time, the least time stop.steps can take), "
        "more than the limit of 2e+05 (limits.events); shorten the run, evaluate less often, "
        "raise limits.events, or run with --force (the run then stops at the limit)");
    expect_refused("slow-backup-nanosecond-faults.json", NULL, 0,
        "/faults/events/1: error: its switches make about 2.41e+09 environment events per "
        "step of the cluster (a round of 9 whole-model messages, 2.41 s), more than the "
        "watchdog's limit of 10090000 events without a step / 10; lengthen its mean times");
}
END_TEST

/* Runs that last far longer than the least time their stop.steps take
 * (slow links, 10^6 s latency) and evaluate every 100 step times: the
 * estimate cannot see it, the budget stops them (seed2-case150, 613, 987;
 * seed3-case58, 860), each at the same event every time.  (A FIFO
 * message is one event, its delivery, unless it is lost on the wire or
 * its receiver is down: the counts of the first three are those of one
 * event per message.) */
START_TEST(fuzz_stopped)
{
    expect_stopped("slow-ps-async-output-limit.json", "limits.events=2e5",
        "event limit at t=0.000163 s: 172 events handled and 200736 more counted for "
        "evaluations (one per sample evaluated and per node row) reach the limit of 200000 "
        "(limits.events); shorten the run, evaluate less often, or raise limits.events");
    expect_stopped("slow-ps-async-lossy-1ns.json", "limits.events=2e5",
        "event limit at t=0.0199996 s: 200000 events handled and 0 more counted for "
        "evaluations (one per sample evaluated and per node row) reach the limit of 200000 "
        "(limits.events); shorten the run, evaluate less often, or raise limits.events");
    expect_stopped("slow-eager-1ns-outage.json", "limits.events=2e5",
        "event limit at t=3.77e-05 s: 550 events handled and 199584 more counted for "
        "evaluations (one per sample evaluated and per node row) reach the limit of 200000 "
        "(limits.events); shorten the run, evaluate less often, or raise limits.events");
    expect_stopped("evals-sgp-mlp-1ns.json", "limits.events=2e5",
        "event limit at t=3.78e-05 s: 381 events handled and 200112 more counted for "
        "evaluations (one per sample evaluated and per node row) reach the limit of 200000 "
        "(limits.events); shorten the run, evaluate less often, or raise limits.events");
    expect_stopped("evals-prague-latency-1e6.json", "limits.events=2e5",
        "event limit at t=3939.693153 s: 1424 events handled and 198720 more counted for "
        "evaluations (one per sample evaluated and per node row) reach the limit of 200000 "
        "(limits.events); shorten the run, evaluate less often, or raise limits.events");
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("budget");
    TCase *tc = tcase_create("core");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, estimate_by_hand);
    tcase_add_test(tc, raised_or_skipped);
    tcase_add_test(tc, stops_at_the_budget);
    tcase_add_test(tc, evaluations_count_their_samples);
    tcase_add_test(tc, fuzz_gossip_timers);
    tcase_add_test(tc, fuzz_refused);
    tcase_add_test(tc, fuzz_stopped);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    SRunner *sr = srunner_create(suite());
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
