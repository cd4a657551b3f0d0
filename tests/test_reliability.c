/* test_reliability.c -- hostile and absurd input and runs that go wrong:
 * a table of absurd values (each with its exact error or its defined
 * behaviour, docs/reliability.md), divergence (NaN or Inf stops the run,
 * names the node, step and time, keeps only finite rows), the memory
 * estimate, and the watchdog against protocols that loop without
 * progress (built here, outside the registry, through run_options).
 */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "alg.h"
#include "run.h"
#include "scn.h"

static const char base[] =
    "{\"nodes\": 4, \"compute\": {\"step_time_s\": 0.01}, \"topology\": {\"kind\": \"ring\"},"
    " \"data\": {\"train\": 256, \"test\": 64, \"features\": 4, \"classes\": 2},"
    " \"algorithm\": {\"name\": \"dpsgd\", \"lr\": 0.1, \"batch\": 8}, \"stop\": {\"time_s\": 1}}";

/* One absurd value: the overrides, then either the exact error (load or
 * prepare; exit status 2) or, when err is NULL, the run's status and stop
 * reason (and message when given). */
typedef struct absurd {
    const char *set[3];
    const char *err;
    run_status  status;
    const char *reason;
    const char *message;
} absurd;

#define E(...) .err = "test.json: " __VA_ARGS__
static const absurd cases[] = {
    /* times */
    {{"compute.step_time_s=0"}, E("/compute/step_time_s: error: must be > 0, got 0")},
    {{"compute.step_time_s=-1"}, E("/compute/step_time_s: error: must be > 0, got -1")},
    {{"compute.step_time_s=1e999"}, .err = "--set compute.step_time_s=1e999: error: invalid "
                                           "JSON value: real number overflow near '1e999'"},
    {{"compute.step_time_s=1e-300"}, E("/stop/time_s: error: reaching 1 s takes about 4e+300 "
        "steps at node 0's step time of 1e-300 s (4 nodes), more than 1e+12 in all; lower "
        "stop.time_s or set stop.steps")},
    {{"compute.step_time_s=1e300"}, .status = RUN_OK, .reason = "time"},
    {{"compute.groups=[{\"nodes\":[0],\"slowdown\":1e-300}]"}, E("/stop/time_s: error: "
        "reaching 1 s takes about 4e+302 steps at node 0's step time of 1e-302 s (4 nodes), "
        "more than 1e+12 in all; lower stop.time_s or set stop.steps")},
    {{"compute.groups=[{\"nodes\":[0],\"slowdown\":1e300}]"}, .status = RUN_OK, .reason = "time"},
    {{"compute.noise={\"dist\":\"lognormal\",\"sigma\":11}"},
     E("/compute/noise/sigma: error: must be <= 10, got 11")},
    {{"compute.noise={\"dist\":\"uniform\",\"low\":0,\"high\":1}"},
     E("/compute/noise/low: error: must be > 0, got 0")},
    {{"stop.time_s=0"}, E("/stop/time_s: error: must be > 0, got 0")},
    {{"stop.time_s=-1"}, E("/stop/time_s: error: must be > 0, got -1")},
    {{"stop.time_s=1e300"}, E("/stop/time_s: error: reaching 1e+300 s takes about 4e+302 steps "
        "at node 0's step time of 0.01 s (4 nodes), more than 1e+12 in all; lower stop.time_s "
        "or set stop.steps")},
    {{"stop.time_s=null"}, E("/stop/time_s: error: must be a number, got null")},
    /* network */
    {{"network.bandwidth_Bps=0"}, E("/network/bandwidth_Bps: error: must be > 0, got 0")},
    {{"network.bandwidth_Bps=-5"}, E("/network/bandwidth_Bps: error: must be > 0, got -5")},
    {{"network.latency_s=-1"}, E("/network/latency_s: error: must be >= 0, got -1")},
    {{"network.latency_s=0"}, .status = RUN_OK, .reason = "time"},
    /* nothing ever arrives before the horizon: every node waits for ever */
    {{"network.latency_s=1e308"}, .status = RUN_OK, .reason = "time"},
    {{"network.bytes_per_param=0"}, E("/network/bytes_per_param: error: must be > 0, got 0")},
    {{"network.compression_ratio=0.5"},
     E("/network/compression_ratio: error: must be >= 1, got 0.5")},
    {{"network.loss=1"}, E("/network/loss: error: must be < 1, got 1")},
    {{"network.loss=0.999999", "network.retransmit=false"}, .status = RUN_STALLED, .reason = "stalled",
     .message = "stalled at t=0.01 s: no event left before the stop condition; waiting: node 0 "
                "for 2 of 2 neighbour models of round 0; node 1 for 2 of 2 neighbour models of "
                "round 0; node 2 for 2 of 2 neighbour models of round 0; node 3 for 2 of 2 "
                "neighbour models of round 0"},
    /* node counts */
    {{"nodes=0"}, E("/nodes: error: must be >= 1, got 0")},
    {{"nodes=-3"}, E("/nodes: error: must be >= 1, got -3")},
    {{"nodes=2.5"}, E("/nodes: error: must be an integer, got 2.5")},
    {{"/nodes=abc"}, E("/nodes: error: must be an integer, got string")},
    {{"nodes=1e999"}, .err = "--set nodes=1e999: error: invalid JSON value: real number "
                             "overflow near '1e999'"},
    {{"nodes=100000000000000000000000"}, .err = "--set nodes=100000000000000000000000: error: "
                                                "invalid JSON value: too big integer"},
    {{"nodes=1000000000"}, E("/data/train: error: must be >= nodes (1000000000) so that every "
                             "node holds data, got 256")},
    {{"nodes=1"}, .status = RUN_OK, .reason = "time"},
    {{"nodes=1", "topology.kind=complete"}, .status = RUN_OK, .reason = "time"},
    /* learning rates and batches */
    {{"algorithm.lr=-1"}, E("/algorithm/lr: error: must be >= 0, got -1")},
    {{"algorithm.lr=0"}, .status = RUN_OK, .reason = "time"},
    {{"algorithm.lr=1e300"}, .status = RUN_DIVERGED, .reason = "diverged",
     .message = "diverged at t=0.01 s: node 0's minibatch loss was inf at the start of its "
                "step 2"},
    {{"algorithm.lr=1e300", "model.kind=mlp"}, .status = RUN_DIVERGED, .reason = "diverged",
     .message = "diverged at t=0.01 s: node 0's minibatch loss was nan at the start of its "
                "step 2"},
    {{"algorithm.batch=0"}, E("/algorithm/batch: error: must be >= 1, got 0")},
    {{"algorithm.batch=65"}, E("/algorithm/batch: error: must be <= 64 (train 256 / nodes 4), "
                               "got 65")},
    {{"algorithm.batch=64"}, .status = RUN_OK, .reason = "time"},
    /* (an unknown name lists the registry: test_algos pins that) */
    {{"algorithm.name=42"}, E("/algorithm/name: error: must be a string, got number")},
    /* stop conditions */
    {{"stop.steps=0"}, E("/stop/steps: error: must be >= 1, got 0")},
    {{"stop.steps=-1"}, E("/stop/steps: error: must be >= 1, got -1")},
    {{"stop.steps=1000000000000"}, E("/stop/steps: error: 1000000000000 steps per node on 4 "
                                     "nodes is more than 1e+12 steps in all; lower stop.steps")},
    {{"stop.target_accuracy=1.01"}, E("/stop/target_accuracy: error: must be in (0, 1], got 1.01")},
    {{"stop.target_loss=-1"}, E("/stop/target_loss: error: must be > 0, got -1")},
    /* a target that can never be reached: the horizon ends the run */
    {{"stop.target_loss=1e-300"}, .status = RUN_OK, .reason = "time"},
    /* metrics */
    {{"metrics.every_s=0"}, E("/metrics/every_s: error: must be > 0, got 0")},
    {{"metrics.every_s=1e-12"}, E("/metrics/every_s: error: must be >= stop.time_s / 1000000 "
                                  "(1e-06): at most a million evaluations, got 1e-12")},
    {{"metrics.every_s=1e30"}, .status = RUN_OK, .reason = "time"},
    {{"metrics.eval_samples=0"}, .status = RUN_OK, .reason = "time"},
    {{"metrics.eval_samples=1000"}, E("/metrics/eval_samples: error: must be <= train (256), "
                                      "got 1000")},
    {{"metrics.test_samples=100"}, E("/metrics/test_samples: error: must be <= test (64), "
                                     "got 100")},
    /* seeds and data */
    {{"seed=-1"}, E("/seed: error: must be >= 0, got -1")},
    {{"seed=18446744073709551615"}, .err = "--set seed=18446744073709551615: error: invalid "
                                           "JSON value: too big integer near "
                                           "'18446744073709551615'"},
    {{"data.features=0"}, E("/data/features: error: must be >= 1, got 0")},
    {{"data.features=100000000"}, E("/data/features: error: must be <= 16777216, got 100000000")},
    {{"data.classes=1"}, E("/data/classes: error: must be >= 2, got 1")},
    {{"data.train=0"}, E("/data/train: error: must be >= 1, got 0")},
    {{"data.test=0"}, E("/data/test: error: must be >= 1, got 0")},
    {{"data.train=100000000000"}, E("/data/train: error: must be <= 2147483647, got "
                                    "100000000000")},
    /* memory */
    {{"limits.memory_bytes=0"}, E("/limits/memory_bytes: error: must be > 0, got 0")},
    {{"limits.memory_bytes=1000"}, E("error: this run needs about 12.6 MB of memory (process "
        "12.6 MB, data 15.4 KB, per-node state 6.14 KB, topology 512 B), more than the limit of "
        "1 KB "
        "(limits.memory_bytes); lower the size, set limits.memory_bytes, or run with --force")},
    {{"model.kind=mlp", "model.hidden=[1000,1000]", "limits.memory_bytes=1e8"},
     E("error: this run needs about 142 MB of memory (process 12.6 MB, models 4 nodes x 1008002 "
       "parameters x 4 copies = 129 MB, data 13.6 KB, per-node state 6.14 KB, topology 256 B), "
       "more than the "
       "limit of 100 MB (limits.memory_bytes); lower the size, set limits.memory_bytes, or run "
       "with --force")},
    {{"limits.memory_bytes=1000", "limits.check_memory=false"}, .status = RUN_OK,
     .reason = "time"},
};
#undef E

START_TEST(test_absurd_values)
{
    const absurd *c = &cases[_i];
    size_t n = 0;
    while (n < 3 && c->set[n])
        n++;
    scn_scenario s;
    scn_error err;
    err.msg[0] = '\0';
    run_sim *r = NULL;
    if (scn_load_string(base, "test.json", c->set, n, &s, &err) == 0) {
        r = run_prepare(&s, &err);
        if (!r)
            scn_fini(&s);
    }
    if (c->err) {
        ck_assert_msg(r == NULL, "case %d (%s): accepted", _i, c->set[0]);
        ck_assert_str_eq(err.msg, c->err);
        return;
    }
    ck_assert_msg(r != NULL, "case %d (%s): %s", _i, c->set[0], err.msg);
    run_result res;
    char msg[1024];
    ck_assert_msg(run_execute(r, NULL, &res, msg, sizeof msg) == 0, "%s", msg);
    ck_assert_int_eq(res.status, c->status);
    ck_assert_str_eq(res.stop_reason, c->reason);
    if (c->message)
        ck_assert_str_eq(res.message, c->message);
    run_destroy(r);
    scn_fini(&s);
}
END_TEST

/* ---- divergence ---- */

static char tmpdir[256];

static char *slurp(const char *path)
{
    FILE *f = fopen(path, "rb");
    ck_assert_msg(f != NULL, "cannot open %s", path);
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *buf = malloc((size_t)n + 1);
    ck_assert_ptr_nonnull(buf);
    ck_assert_uint_eq(fread(buf, 1, (size_t)n, f), (size_t)n);
    buf[n] = '\0';
    fclose(f);
    return buf;
}

/* The CLI: exit status 1, the message on stderr, run.json says
 * "diverged", and every row of metrics.csv is finite. */
START_TEST(test_divergence_cli)
{
    snprintf(tmpdir, sizeof tmpdir, "/tmp/dtsim-test-rel-XXXXXX");
    ck_assert_ptr_nonnull(mkdtemp(tmpdir));
    char cmd[2048], p[512];
    snprintf(cmd, sizeof cmd, "%s run %s/scenarios/quickstart.json --set algorithm.lr=1e6 -o %s/r "
             "--quiet 2>%s/err", DTSIM_BINARY, DTSIM_SOURCE_DIR, tmpdir, tmpdir);
    int st = system(cmd);
    ck_assert(WIFEXITED(st));
    ck_assert_int_eq(WEXITSTATUS(st), 1);
    snprintf(p, sizeof p, "%s/err", tmpdir);
    char *e = slurp(p);
    ck_assert_msg(strstr(e, "/scenarios/quickstart.json: error: diverged at t=") != NULL, "%s", e);
    ck_assert_msg(strstr(e, "'s minibatch loss was inf at the start of its step ") != NULL,
                  "%s", e);
    snprintf(p, sizeof p, "%s/r/run.json", tmpdir);
    char *j = slurp(p);
    ck_assert_ptr_nonnull(strstr(j, "\"status\": \"diverged\",\n"));
    ck_assert_ptr_nonnull(strstr(j, "\"stop_reason\": \"diverged\",\n"));
    ck_assert_ptr_nonnull(strstr(j, "\"message\": \"diverged at t="));
    snprintf(p, sizeof p, "%s/r/metrics.csv", tmpdir);
    char *m = slurp(p);
    int rows = 0;
    for (char *line = strchr(m, '\n') + 1; *line; line = strchr(line, '\n') + 1) {
        for (char *f = line; f && *f != '\n'; f = strchr(f, ',')) {
            if (*f == ',')
                f++;
            double v = strtod(f, NULL);
            ck_assert_msg(isfinite(v), "row %d: %.40s", rows, line);
        }
        rows++;
    }
    ck_assert_int_gt(rows, 1);
    free(m);
    free(j);
    free(e);
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmpdir);
    ck_assert_int_eq(system(cmd), 0);
}
END_TEST

/* --force skips the memory check; without it the same run is refused
 * with exit status 2 and nothing written. */
START_TEST(test_force_cli)
{
    snprintf(tmpdir, sizeof tmpdir, "/tmp/dtsim-test-rel-XXXXXX");
    ck_assert_ptr_nonnull(mkdtemp(tmpdir));
    char cmd[2048], p[512];
    snprintf(cmd, sizeof cmd, "%s run %s/scenarios/quickstart.json --set limits.memory_bytes=1000 "
             "--set stop.time_s=0.5 -o %s/a --quiet 2>%s/err", DTSIM_BINARY, DTSIM_SOURCE_DIR,
             tmpdir, tmpdir);
    int st = system(cmd);
    ck_assert(WIFEXITED(st));
    ck_assert_int_eq(WEXITSTATUS(st), 2);
    snprintf(p, sizeof p, "%s/err", tmpdir);
    char *e = slurp(p);
    ck_assert_msg(strstr(e, "more than the limit of 1 KB (limits.memory_bytes); lower the size, "
                         "set limits.memory_bytes, or run with --force\n") != NULL, "%s", e);
    free(e);
    snprintf(p, sizeof p, "%s/a", tmpdir);
    ck_assert_int_ne(access(p, F_OK), 0);
    snprintf(cmd, sizeof cmd, "%s run %s/scenarios/quickstart.json --set limits.memory_bytes=1000 "
             "--set stop.time_s=0.5 --force -o %s/b --quiet", DTSIM_BINARY, DTSIM_SOURCE_DIR,
             tmpdir);
    st = system(cmd);
    ck_assert(WIFEXITED(st));
    ck_assert_int_eq(WEXITSTATUS(st), 0);
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmpdir);
    ck_assert_int_eq(system(cmd), 0);
}
END_TEST

/* A NaN planted in node 2's starting parameters: the evaluation at t=0
 * finds it before any step ends and names the node and the parameter. */
static void plant_nan(void *ctx, int node, double *params, size_t n)
{
    (void)ctx;
    (void)n;
    if (node == 2)
        params[3] = NAN;
}

START_TEST(test_divergence_nan_parameter)
{
    scn_scenario s;
    scn_error err;
    ck_assert_int_eq(scn_load_string(base, "test.json", NULL, 0, &s, &err), 0);
    run_sim *r = run_prepare(&s, &err);
    ck_assert_ptr_nonnull(r);
    run_options opt = { .init_params = plant_nan };
    run_result res;
    char msg[512];
    ck_assert_int_eq(run_execute(r, &opt, &res, msg, sizeof msg), 0);
    ck_assert_int_eq(res.status, RUN_DIVERGED);
    ck_assert_str_eq(res.message, "diverged at t=0 s: the evaluated train loss is nan; node 2 "
                                  "(after 0 steps) holds parameter 3 = nan");
    run_destroy(r);
    scn_fini(&s);
}
END_TEST

/* ---- the watchdog ---- */

/* Nodes 0 and 1 bounce a control message for ever and never step; with
 * latency 0 (and no bytes) simulated time never moves. */
static int pp_init(alg_ctx *c, void *s, int n) { (void)c; (void)s; (void)n; return 0; }
static void pp_fini(alg_ctx *c, void *s, int n) { (void)c; (void)s; (void)n; }
static void pp_start(alg_ctx *c, void *s, int n)
{
    (void)s;
    if (n == 0)
        alg_send(c, 0, 1, 0, 0, NULL, 0);
}
static void pp_step(alg_ctx *c, void *s, int n, const double *g)
{
    (void)c; (void)s; (void)n; (void)g;
}
static void pp_msg(alg_ctx *c, void *s, int n, const cl_msg *m)
{
    (void)s;
    alg_send(c, n, m->from, 0, m->round + 1, NULL, 0);
}
static void pp_wait(const alg_ctx *c, const void *s, int n, char *buf, size_t size)
{
    (void)c; (void)s;
    snprintf(buf, size, "the ball from node %d", 1 - n);
}
static const alg_type pingpong = {
    .name = "pingpong", .state_size = 1, .init = pp_init, .on_start = pp_start,
    .on_step_done = pp_step, .on_message = pp_msg, .describe_wait = pp_wait, .fini = pp_fini,
};

static void run_pingpong(const char *json, run_result *res)
{
    scn_scenario s;
    scn_error err;
    ck_assert_msg(scn_load_string(json, "test.json", NULL, 0, &s, &err) == 0, "%s", err.msg);
    run_sim *r = run_prepare(&s, &err);
    ck_assert_msg(r != NULL, "%s", err.msg);
    run_options opt = { .algorithm = &pingpong, .watchdog_events = 1000 };
    char msg[512];
    ck_assert_int_eq(run_execute(r, &opt, res, msg, sizeof msg), 0);
    run_destroy(r);
    scn_fini(&s);
}

START_TEST(test_watchdog_same_instant)
{
    run_result res;
    run_pingpong("{\"nodes\": 2, \"network\": {\"latency_s\": 0}, \"algorithm\": {\"name\": "
                 "\"dpsgd\"}, \"stop\": {\"time_s\": 1}}", &res);
    ck_assert_int_eq(res.status, RUN_NO_PROGRESS);
    ck_assert_str_eq(res.stop_reason, "no_progress");
    ck_assert_double_eq(res.sim_time_s, 0);
    ck_assert_str_eq(res.message, "no progress at t=0 s: 1001 events without simulated time "
                     "advancing (watchdog limit 1000); busiest: node 0 (251 events, waiting for "
                     "the ball from node 1); node 1 (250 events, waiting for the ball from node 0)");
}
END_TEST

START_TEST(test_watchdog_no_step)
{
    run_result res;
    /* 1 s steps: the frozen-training bound (10 s) is far beyond the watchdog's window */
    run_pingpong("{\"nodes\": 2, \"compute\": {\"step_time_s\": 1}, \"network\": {\"latency_s\": "
                 "0.001}, \"algorithm\": {\"name\": \"dpsgd\"}, \"stop\": {\"steps\": 10}}", &res);
    ck_assert_int_eq(res.status, RUN_NO_PROGRESS);
    ck_assert_msg(strstr(res.message, " message, timer and environment events without a step "
                         "completing (watchdog limit 1000); busiest: node ") != NULL, "%s",
                  res.message);
    ck_assert(res.sim_time_s > 0.4);
}
END_TEST

/* The default limit grows with the cluster. */
START_TEST(test_watchdog_default)
{
    ck_assert_uint_eq(run_watchdog_limit(16), 10160000u);
    ck_assert_uint_eq(run_watchdog_limit(1000), 20000000u);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("reliability");
    TCase *tc = tcase_create("reliability");
    tcase_set_timeout(tc, 120);
    tcase_add_loop_test(tc, test_absurd_values, 0, (int)(sizeof cases / sizeof cases[0]));
    tcase_add_test(tc, test_divergence_cli);
    tcase_add_test(tc, test_divergence_nan_parameter);
    tcase_add_test(tc, test_force_cli);
    tcase_add_test(tc, test_watchdog_same_instant);
    tcase_add_test(tc, test_watchdog_no_step);
    tcase_add_test(tc, test_watchdog_default);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
