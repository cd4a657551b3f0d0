/* test_bounds.c -- every run ends in bounded time, memory and output
 * (docs/reliability.md, issue 15): the engine's compaction of cancelled
 * events (same pop order as without it, bounded heap), the work bound
 * with noise means, speed-up slowdowns and environment events, the
 * evaluation and row limits before a run (exact messages, exit 2) and
 * while it goes on (status "limit", exact messages and row counts), the
 * watchdog counting environment events, and the memory estimate's edge
 * count per topology kind.  It does not measure speed.
 */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "alg_host.h"
#include "sim_engine.h"
#include "test_util.h"

/* ---- the engine ------------------------------------------------------- */

/* A deterministic mix of schedules and cancellations of 64 targets on two
 * engines; one reports its cancellations (and compacts), the other does
 * not.  Both must pop the same (time, seq, data) sequence. */
static uint64_t lcg(uint64_t *x)
{
    *x = *x * 6364136223846793005ull + 1442695040888963407ull;
    return *x >> 33;
}

static size_t pending_of(sim_engine *e, uint32_t t, const uint32_t *live)
{
    (void)e;
    return live[t];
}

START_TEST(compaction_keeps_order)
{
    sim_engine *a = sim_engine_create(64, 16), *b = sim_engine_create(64, 16);
    uint32_t live[64] = {0};
    uint64_t x = 42, pending_max = 0;
    for (uint32_t k = 0; k < 200000; k++) {
        uint32_t t = (uint32_t)(lcg(&x) % 64);
        if (lcg(&x) % 4 == 0) {
            sim_engine_cancel_target(a, t);
            sim_engine_cancel_target(b, t);
            sim_engine_note_stale(a, pending_of(a, t, live));
            live[t] = 0;
        } else {
            double at = (double)(lcg(&x) % 1000);   /* many equal times: seq decides */
            ck_assert_int_eq(sim_engine_schedule_at(a, at, 1, t, k), 0);
            ck_assert_int_eq(sim_engine_schedule_at(b, at, 1, t, k), 0);
            live[t]++;
        }
        if (sim_engine_pending(a) > pending_max)
            pending_max = sim_engine_pending(a);
    }
    ck_assert_uint_gt(sim_engine_compactions(a), 0);
    ck_assert_uint_eq(sim_engine_compactions(b), 0);
    /* b holds every record scheduled (150,000 or so), a at most about
     * twice the live ones plus SIM_COMPACT_MIN */
    ck_assert_uint_gt(sim_engine_pending(b), 140000);
    ck_assert_uint_lt(pending_max, 2 * 64 * 4 + 2 * SIM_COMPACT_MIN);
    sim_event ea, eb;
    size_t n = 0;
    for (;;) {
        int ra = sim_engine_pop(a, &ea), rb = sim_engine_pop(b, &eb);
        ck_assert_int_eq(ra, rb);
        if (!ra)
            break;
        ck_assert(ea.time == eb.time);
        ck_assert_uint_eq(ea.seq, eb.seq);
        ck_assert_uint_eq(ea.data, eb.data);
        n++;
    }
    ck_assert_uint_eq(sim_engine_events_processed(a), n);
    sim_engine_destroy(a);
    sim_engine_destroy(b);
}
END_TEST

/* The caller's keep test: records with odd data are dead; it counts what
 * it dropped, as the cluster does. */
static int keep_even(void *ctx, const sim_event *ev)
{
    if (ev->data % 2 == 0)
        return 1;
    (*(size_t *)ctx)++;
    return 0;
}

START_TEST(compaction_keep_test)
{
    sim_engine *e = sim_engine_create(1, 16);
    size_t dropped = 0;
    sim_engine_set_keep(e, keep_even, &dropped);
    for (uint32_t k = 0; k < 10000; k++)
        ck_assert_int_eq(sim_engine_schedule_at(e, (double)(10000 - k), 1, 0, k), 0);
    ck_assert_uint_eq(sim_engine_compact(e), 5000);
    ck_assert_uint_eq(dropped, 5000);
    ck_assert_uint_eq(sim_engine_pending(e), 5000);
    sim_event ev;
    double last = 0;
    for (uint32_t k = 0; k < 5000; k++) {
        ck_assert_int_eq(sim_engine_pop(e, &ev), 1);
        ck_assert_uint_eq(ev.data % 2, 0);
        ck_assert(ev.time > last);
        last = ev.time;
    }
    ck_assert_int_eq(sim_engine_pop(e, &ev), 0);
    sim_engine_destroy(e);
}
END_TEST

/* ---- before the run: work, environment and output ---------------------- */

static const char base[] =
    "{\"nodes\": 4, \"topology\": {\"kind\": \"ring\"},"
    " \"data\": {\"train\": 256, \"test\": 64, \"features\": 4, \"classes\": 2},"
    " \"algorithm\": {\"name\": \"gossip\", \"lr\": 0.1, \"batch\": 8}%s}";

static void expect_error(const char *extra, const char *msg)
{
    char json[2048];
    snprintf(json, sizeof json, base, extra);
    expect_prepare_error(json, msg);
}

static void run_extra(const char *extra, const run_options *opt, run_result *res)
{
    char json[2048];
    snprintf(json, sizeof json, base, extra);
    run_json(json, opt, res);
}

START_TEST(refused_before_the_run)
{
    expect_error(", \"stop\": {\"time_s\": 10}, \"compute\": {\"step_time_s\": 0.01, \"noise\":"
                 " {\"dist\": \"uniform\", \"low\": 1e-12, \"high\": 1e-12}}",
        "test.json: /stop/time_s: error: reaching 10 s takes about 4e+15 steps at node 0's "
        "step time of 1e-14 s (base 0.01 s x noise mean 1e-12 x fastest slowdown factor 1) "
        "(4 nodes), more than 1e+12 in all; lower stop.time_s or set stop.steps");
    expect_error(", \"stop\": {\"time_s\": 10}, \"compute\": {\"step_time_s\": 0.01, "
                 "\"slowdowns\": [{\"kind\": \"window\", \"factor\": 1e-12, \"start_s\": 0}]}",
        "test.json: /stop/time_s: error: reaching 10 s takes about 4e+15 steps at node 0's "
        "step time of 1e-14 s (base 0.01 s x noise mean 1 x fastest slowdown factor 1e-12) "
        "(4 nodes), more than 1e+12 in all; lower stop.time_s or set stop.steps");
    expect_error(", \"stop\": {\"time_s\": 10}, \"compute\": {\"step_time_s\": 0.01, "
                 "\"slowdowns\": [{\"kind\": \"markov\", \"factor\": 2, \"mean_slow_s\": 1e-9,"
                 " \"mean_normal_s\": 1e-9}]}",
        "test.json: /compute/slowdowns/0: error: its switches make about 1e+07 environment "
        "events per step of the cluster (400 steps per second in all), more than the "
        "watchdog's limit of 10040000 events without a step / 10; lengthen its mean times");
    expect_error(", \"stop\": {\"time_s\": 1e9}, \"faults\": {\"events\": [{\"kind\": "
                 "\"exponential\", \"mtbf_s\": 0.001, \"mttr_s\": 0.001}]}",
        "test.json: /faults/events/0: error: its switches make about 4e+12 environment "
        "events in all over 1e+09 s of simulated time, more than 1e+12; lengthen its mean "
        "times or shorten the run");
    expect_error(", \"stop\": {\"steps\": 100000}, \"metrics\": {\"every_s\": 1e-6}",
        "test.json: /metrics/every_s: error: must be >= 0.001000001: with stop.steps alone the run "
        "lasts at least about 1000 s (100000 steps per node at the nodes' step times, nobody "
        "waiting), and metrics.csv holds at most 1000001 rows (a million evaluations and the "
        "last); got 1e-06");
    /* 10^4 nodes evaluated every second for 1000 s (the case of the issue, smaller) */
    expect_prepare_error("{\"nodes\": 10000, \"model\": {\"kind\": \"none\", "
        "\"message_bytes\": 1000}, \"algorithm\": {\"name\": \"gossip\"}, \"stop\": "
        "{\"time_s\": 1000}, \"metrics\": {\"every_s\": 1, \"per_node\": true}}",
        "test.json: /metrics/per_node: error: node_metrics.csv would hold about 1.002e+07 rows "
        "(1002 evaluations x 10000 nodes), more than its limit of 10000000; raise "
        "metrics.every_s or turn per_node off");
    expect_error(", \"stop\": {\"time_s\": 100000}, \"output\": {\"trace\": true}",
        "test.json: /output/trace: error: trace.csv would hold more than 4e+07 rows (one per "
        "step, at least), more than its limit of 10000000; shorten the run or turn the trace "
        "off");
}
END_TEST

/* The bounds just inside: accepted. */
START_TEST(accepted_at_the_bounds)
{
    char json[2048];
    scn_scenario s;
    scn_error err;
    run_sim *r;
    const char *ok[] = {
        ", \"stop\": {\"steps\": 100000}, \"metrics\": {\"every_s\": 0.0010001}",
        ", \"stop\": {\"time_s\": 1000}, \"metrics\": {\"every_s\": 0.001, \"per_node\": true}",
        ", \"stop\": {\"time_s\": 25000}, \"output\": {\"trace\": true}",
        /* 4e9 switches: inside the environment bound (10^12) once the
         * event budget is raised past them (event_budget_refuses below) */
        ", \"stop\": {\"time_s\": 10}, \"compute\": {\"step_time_s\": 0.01, \"slowdowns\": "
        "[{\"kind\": \"markov\", \"factor\": 2, \"mean_slow_s\": 1e-8, \"mean_normal_s\": 1e-8}]}, "
        "\"limits\": {\"events\": 1e10}",
    };
    for (size_t k = 0; k < sizeof ok / sizeof *ok; k++) {
        snprintf(json, sizeof json, base, ok[k]);
        ck_assert_msg(prepare_json(json, &s, &r, &err) == 0, "%s", err.msg);
        run_destroy(r);
        scn_fini(&s);
    }
}
END_TEST

/* ---- while the run goes on ----------------------------------------------- */

START_TEST(metrics_rows_limit)
{
    run_options opt = { .max_metrics_rows = 5 };
    run_result res;
    run_extra(", \"stop\": {\"steps\": 100000}, \"metrics\": {\"every_s\": 0.5}", &opt, &res);
    ck_assert_int_eq(res.status, RUN_LIMIT);
    ck_assert_str_eq(res.stop_reason, "limit");
    ck_assert_str_eq(res.message, "output limit at t=2 s: metrics.csv holds 5 rows and the "
                     "next evaluation would take it past its limit of 5; raise "
                     "metrics.every_s or set stop.time_s");
    ck_assert(res.sim_time_s == 2.0);
    ck_assert(res.last.time_s == 2.0);
}
END_TEST

START_TEST(node_rows_limit)
{
    run_options opt = { .max_node_rows = 10 };
    run_result res;
    run_extra(", \"stop\": {\"time_s\": 5}, \"metrics\": {\"every_s\": 0.5, \"per_node\": true}",
              &opt, &res);
    ck_assert_int_eq(res.status, RUN_LIMIT);
    ck_assert_str_eq(res.message, "output limit at t=0.5 s: node_metrics.csv holds 8 rows "
                     "and the next evaluation would take it past its limit of 10; raise "
                     "metrics.every_s, turn metrics.per_node off or set stop.time_s");
    /* the stop time is an end, not a limit: 11 evaluations x 4 = 44 rows */
    opt.max_node_rows = 44;
    run_extra(", \"stop\": {\"time_s\": 5}, \"metrics\": {\"every_s\": 0.5, \"per_node\": true}",
              &opt, &res);
    ck_assert_int_eq(res.status, RUN_OK);
    ck_assert_str_eq(res.stop_reason, "time");
}
END_TEST

/* Counts trace.csv lines written by the CLI: the rows on disk. */
static long count_lines(const char *path)
{
    FILE *f = fopen(path, "r");
    ck_assert_ptr_nonnull(f);
    long n = 0;
    int ch;
    while ((ch = fgetc(f)) != EOF)
        n += ch == '\n';
    fclose(f);
    return n;
}

START_TEST(trace_rows_limit)
{
    char dir[] = "/tmp/dtsim-bounds-XXXXXX";
    ck_assert_ptr_nonnull(mkdtemp(dir));
    run_options opt = { .out_dir = dir, .max_trace_rows = 100 };
    run_result res;
    run_extra(", \"stop\": {\"time_s\": 5}, \"output\": {\"trace\": true}", &opt, &res);
    ck_assert_int_eq(res.status, RUN_LIMIT);
    ck_assert_msg(strncmp(res.message, "output limit at t=", 18) == 0, "%s", res.message);
    ck_assert_msg(strstr(res.message, " s: trace.csv reached 100 rows, its limit of 100; "
                         "shorten the run or turn output.trace off") != NULL, "%s",
                  res.message);
    char path[256];
    snprintf(path, sizeof path, "%s/trace.csv", dir);
    /* the header and the rows, up to the event that reached the limit */
    long lines = count_lines(path);
    ck_assert_int_ge(lines, 101);
    ck_assert_int_le(lines, 101 + 8);
    snprintf(path, sizeof path, "%s/run.json", dir);
    ck_assert_int_eq(access(path, F_OK), 0);
    const char *names[] = { "trace.csv", "metrics.csv", "nodes.csv", "run.json" };
    for (size_t k = 0; k < 4; k++) {
        snprintf(path, sizeof path, "%s/%s", dir, names[k]);
        unlink(path);
    }
    rmdir(dir);
}
END_TEST

/* The case: stop.steps alone, a node down until 1e9 s.  Training
 * stops; the frozen bound ends it at once rather than after 1e9 s of
 * evaluations. */
START_TEST(down_until_1e9_ends)
{
    run_result res;
    char extra[512];
    snprintf(extra, sizeof extra, ", \"stop\": {\"steps\": 1000}, \"faults\": {\"events\": "
             "[{\"kind\": \"schedule\", \"nodes\": [0], \"down_s\": 0.5, \"up_s\": 1e9}]}");
    char json[2048];
    snprintf(json, sizeof json, base, extra);
    /* dpsgd without its failure hooks waits for the node that is down */
    char *p = strstr(json, "gossip");
    memcpy(p, "dpsgd\"", 6);
    memmove(p + 5, p + 6, strlen(p + 6) + 1);
    alg_type waiting = alg_dpsgd;
    waiting.on_failure = NULL;
    waiting.on_return = NULL;
    run_options opt = { .algorithm = &waiting };
    run_json(json, &opt, &res);
    ck_assert_int_eq(res.status, RUN_STALLED);
    /* the first event past the bound: a retransmission to the down node */
    ck_assert_msg(strncmp(res.message, "stalled at t=0.7 s: no step completed since t=0.52 s",
                          52) == 0, "%s", res.message);
}
END_TEST

/* Environment events count for the watchdog: every node down for good,
 * a Markov slowdown still switching. */
START_TEST(watchdog_counts_environment)
{
    run_options opt = { .watchdog_events = 1000 };
    run_result res;
    run_extra(", \"stop\": {\"time_s\": 10}, \"faults\": {\"events\": [{\"kind\": \"schedule\","
              " \"down_s\": 0.05}]}, \"compute\": {\"step_time_s\": 0.01, \"slowdowns\": "
              "[{\"kind\": \"markov\", \"factor\": 2, \"mean_slow_s\": 1e-5, "
              "\"mean_normal_s\": 1e-5}]}", &opt, &res);
    ck_assert_int_eq(res.status, RUN_NO_PROGRESS);
    ck_assert_msg(strstr(res.message, " 1001 message, timer and environment events without a "
                         "step completing (watchdog limit 1000)") != NULL, "%s", res.message);
}
END_TEST

/* Compaction inside a run: a Markov slowdown switching every microsecond
 * leaves about 10^4 superseded step completions per step; dropping them
 * must keep the cluster's count of pending events exact, so that a
 * protocol waiting for lost messages is still seen to have no event left
 * (not, much later, by the frozen bound). */
START_TEST(compaction_in_a_run_keeps_stalls_exact)
{
    run_result res;
    char json[2048];
    snprintf(json, sizeof json, base, ", \"stop\": {\"time_s\": 1}, \"network\": "
             "{\"loss\": 0.999999, \"retransmit\": false}, \"compute\": {\"step_time_s\": 0.01, \"slowdowns\": "
             "[{\"kind\": \"markov\", \"factor\": 2, \"mean_slow_s\": 1e-6, "
             "\"mean_normal_s\": 1e-6}]}");
    char *p = strstr(json, "gossip");
    memcpy(p, "dpsgd\"", 6);
    memmove(p + 5, p + 6, strlen(p + 6) + 1);
    run_json(json, NULL, &res);
    ck_assert_int_eq(res.status, RUN_STALLED);
    ck_assert_msg(strstr(res.message, "no event left before the stop condition") != NULL,
                  "%s", res.message);
    ck_assert(res.sim_time_s < 0.05);
}
END_TEST

/* ---- the memory estimate's edges ----------------------------------------- */

static void expect_topology_bytes(const char *topo, int nodes, const char *bytes)
{
    char json[2048], msg[1024];
    snprintf(json, sizeof json,
             "{\"nodes\": %d, \"model\": {\"kind\": \"none\", \"message_bytes\": 1000}, \"topology\": %s,"
             " \"algorithm\": {\"name\": \"gossip\"}, \"stop\": {\"time_s\": 1},"
             " \"limits\": {\"memory_bytes\": 1000}}", nodes, topo);
    scn_scenario s;
    scn_error err;
    run_sim *r;
    ck_assert_int_eq(prepare_json(json, &s, &r, &err), -1);
    snprintf(msg, sizeof msg, "topology %s)", bytes);
    ck_assert_msg(strstr(err.msg, msg) != NULL, "%s: %s", topo, err.msg);
}

START_TEST(edges_by_kind)
{
    /* 64 bytes per edge */
    expect_topology_bytes("{\"kind\": \"ring_lattice\", \"k\": 10}", 1000, "640 KB");
    expect_topology_bytes("{\"kind\": \"watts_strogatz\", \"k\": 10, \"beta\": 0.1}", 1000,
                          "640 KB");
    expect_topology_bytes("{\"kind\": \"barabasi_albert\", \"m\": 5}", 1000, "320 KB");
    expect_topology_bytes("{\"kind\": \"hypercube\"}", 1024, "328 KB");   /* 5120 edges */
    expect_topology_bytes("{\"kind\": \"exponential\"}", 1000, "640 KB"); /* 10 x 1000 */
    expect_topology_bytes("{\"kind\": \"torus3d\", \"rows\": 10, \"cols\": 10, \"layers\": 10}",
                          1000, "192 KB");
    expect_topology_bytes("{\"kind\": \"ring\"}", 1000, "128 KB");
    /* a complete graph: n (n - 1) / 2 = 499500 edges (lim-complete) */
    expect_topology_bytes("{\"kind\": \"complete\"}", 1000, "32 MB");
    /* an edge list: its lines */
    char path[] = "/tmp/dtsim-edges-XXXXXX";
    int fd = mkstemp(path);
    ck_assert_int_ge(fd, 0);
    FILE *f = fdopen(fd, "w");
    for (int i = 0; i < 3000; i++)
        fprintf(f, "%d %d\n", i % 100, (i + 1) % 100);
    fclose(f);
    char topo[256];
    snprintf(topo, sizeof topo, "{\"kind\": \"edge_list\", \"file\": \"%s\"}", path);
    expect_topology_bytes(topo, 100, "192 KB");
    unlink(path);
}
END_TEST

/* Once the model exists the estimate counts its copies: 4 per node, 5
 * with momentum's buffer (lim-momentum).  13.05 MB passes the first check
 * (no model yet: the process's 12 MiB, the generated data, the nodes, about
 * 13.0 MB) and fails the second. */
static void expect_model_copies(double momentum, const char *want)
{
    char json[2048];
    snprintf(json, sizeof json,
             "{\"nodes\": 4, \"topology\": {\"kind\": \"ring\"}, \"model\": {\"kind\": \"softmax\"},"
             " \"data\": {\"train\": 400, \"test\": 100, \"features\": 100, \"classes\": 10},"
             " \"algorithm\": {\"name\": \"dpsgd\"}, \"optimizer\": {\"momentum\": %g},"
             " \"stop\": {\"steps\": 5}, \"limits\": {\"memory_bytes\": 13050000}}", momentum);
    scn_scenario s;
    scn_error err;
    run_sim *r;
    ck_assert_int_eq(prepare_json(json, &s, &r, &err), -1);
    ck_assert_msg(strstr(err.msg, want) != NULL, "%s", err.msg);
}

START_TEST(memory_counts_momentum)
{
    expect_model_copies(0.9, "models 4 nodes x 1010 parameters x 5 copies = 162 KB, data 405 KB,");
    expect_model_copies(0.0, "models 4 nodes x 1010 parameters x 4 copies = 129 KB, data 405 KB,");
}
END_TEST

int main(void)
{
    Suite *s = suite_create("bounds");
    TCase *tc = tcase_create("bounds");
    tcase_add_test(tc, compaction_keeps_order);
    tcase_add_test(tc, compaction_keep_test);
    tcase_add_test(tc, refused_before_the_run);
    tcase_add_test(tc, accepted_at_the_bounds);
    tcase_add_test(tc, metrics_rows_limit);
    tcase_add_test(tc, node_rows_limit);
    tcase_add_test(tc, trace_rows_limit);
    tcase_add_test(tc, down_until_1e9_ends);
    tcase_add_test(tc, watchdog_counts_environment);
    tcase_add_test(tc, edges_by_kind);
    tcase_add_test(tc, memory_counts_momentum);
    tcase_add_test(tc, compaction_in_a_run_keeps_stalls_exact);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? 1 : 0;
}
