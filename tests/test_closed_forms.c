/* test_closed_forms.c -- whole simulations checked against closed forms:
 * the order statistics of synchronous steps (mean iteration time H_n /
 * lambda with Exp(lambda) step times), consensus decay by the mixing
 * matrix's second eigenvalue on a ring, and the ring all-reduce cost
 * 2(n-1)a + 2(n-1)/n * M/B.  Each runs a real scenario through the loader
 * and the runner.
 */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "run.h"
#include "scn.h"

#ifndef M_PI
#define M_PI 3.14159265358979323846
#endif

static void load(const char *json, scn_scenario *s)
{
    scn_error err;
    int rc = scn_load_string(json, "test.json", NULL, 0, s, &err);
    ck_assert_msg(rc == 0, "scenario: %s", err.msg);
}

static void run_scenario(const char *json, const run_options *opt, run_result *res)
{
    scn_scenario s;
    scn_error err;
    load(json, &s);
    run_sim *r = run_prepare(&s, &err);
    ck_assert_msg(r != NULL, "prepare: %s", err.msg);
    char msg[1024];
    ck_assert_msg(run_execute(r, opt, res, msg, sizeof msg) == 0, "execute: %s", msg);
    run_destroy(r);
    scn_fini(&s);
}

/* Synchronous all-reduce SGD with Exp(lambda) step times and (almost) free
 * communication: one iteration lasts max_i T_i, whose mean is H_n / lambda
 * and variance sum_k 1/(k lambda)^2. */
START_TEST(test_sync_iteration_harmonic)
{
    const int n = 8, K = 4000;
    const double lambda = 2.0;
    char json[2048];
    snprintf(json, sizeof json,
        "{\"seed\": 11, \"nodes\": %d,"
        " \"compute\": {\"step_time_s\": %.17g, \"noise\": {\"dist\": \"exponential\"}},"
        " \"network\": {\"latency_s\": 0, \"bandwidth_Bps\": 1e300},"
        " \"data\": {\"train\": 1024, \"test\": 64, \"features\": 4, \"classes\": 2},"
        " \"algorithm\": {\"name\": \"allreduce\", \"lr\": 0.01, \"batch\": 8},"
        " \"stop\": {\"steps\": %d}, \"metrics\": {\"every_s\": 1000}}",
        n, 1.0 / lambda, K);
    run_result res;
    run_scenario(json, NULL, &res);
    ck_assert_str_eq(res.stop_reason, "steps");
    double H = 0, V = 0;
    for (int k = 1; k <= n; k++) {
        H += 1.0 / k;
        V += 1.0 / ((double)k * k);
    }
    double mean = res.sim_time_s / K, expect = H / lambda;
    double se = sqrt(V) / lambda / sqrt((double)K);
    ck_assert_msg(fabs(mean - expect) < 3 * se, "mean iteration %.6g, H_n/lambda %.6g, se %.3g",
                  mean, expect, se);
    /* and it is not the mean of one step (1/lambda): the test can fail */
    ck_assert(fabs(mean - 1.0 / lambda) > 10 * se);
}
END_TEST

/* ---- consensus decay on a ring ---- */

typedef struct consensus_log {
    int    n, rows;
    double cd[512];
    double rounds[512];
} consensus_log;

static void init_on_eigenvector(void *ctx, int node, double *x, size_t P)
{
    const consensus_log *log = ctx;
    double v = cos(2 * M_PI * node / log->n);   /* eigenvector of the ring's W */
    for (size_t k = 0; k < P; k++)
        x[k] = v * (double)(k + 1);
}

static void log_row(void *ctx, const out_metrics_row *row)
{
    consensus_log *log = ctx;
    if (log->rows < 512) {
        log->cd[log->rows] = row->consensus_distance;
        log->rounds[log->rows] = (double)row->steps / log->n;
        log->rows++;
    }
}

START_TEST(test_consensus_decay_ring)
{
    static const int sizes[] = { 6, 8, 16 };
    for (size_t t = 0; t < sizeof sizes / sizeof sizes[0]; t++) {
        int n = sizes[t];
        char json[2048];
        snprintf(json, sizeof json,
            "{\"nodes\": %d, \"compute\": {\"step_time_s\": 1},"
            " \"network\": {\"latency_s\": 0.01, \"bandwidth_Bps\": 1e9},"
            " \"topology\": {\"kind\": \"ring\"},"
            " \"data\": {\"train\": 256, \"test\": 16, \"features\": 3, \"classes\": 3},"
            " \"algorithm\": {\"name\": \"dpsgd\", \"lr\": 0, \"batch\": 4},"
            " \"stop\": {\"steps\": 30}, \"metrics\": {\"every_s\": 0.5}}", n);
        consensus_log log = { .n = n };
        run_options opt = { .init_params = init_on_eigenvector, .on_metrics = log_row,
                            .hook_ctx = &log };
        run_result res;
        run_scenario(json, &opt, &res);
        double lambda2 = 1.0 / 3 + 2.0 / 3 * cos(2 * M_PI / n);
        ck_assert_double_eq_tol(res.topo.lambda2, lambda2, 1e-12);
        ck_assert_int_ge(log.rows, 30);
        double cd0 = log.cd[0];
        ck_assert(cd0 > 1.0);
        for (int k = 1; k < log.rows; k++) {
            double expect = cd0 * pow(lambda2, log.rounds[k]);
            ck_assert_msg(fabs(log.cd[k] - expect) <= 1e-9 * cd0,
                          "n=%d row %d: %.17g after %.0f rounds, expected %.17g", n, k,
                          log.cd[k], log.rounds[k], expect);
        }
        ck_assert_double_eq(log.rounds[log.rows - 1], 30);
    }
}
END_TEST

/* All-reduce of M bytes among n nodes, latency a, bandwidth B, as each
 * collective's closed form: ring 2(n-1) stages of latency a and M/(nB);
 * recursive doubling log2(n) exchanges of a + M/B; binomial tree log2(n)
 * levels up and log2(n) down, each a + M/B. */
static double allreduce_time(const char *collective, int n, double T, double a, double B)
{
    char json[2048];
    /* softmax with 15 features and 4 classes: 64 parameters, M = 256 bytes */
    snprintf(json, sizeof json,
        "{\"nodes\": %d, \"compute\": {\"step_time_s\": %.17g},"
        " \"network\": {\"latency_s\": %.17g, \"bandwidth_Bps\": %.17g, \"bytes_per_param\": 4},"
        " \"data\": {\"train\": 512, \"test\": 16, \"features\": 15, \"classes\": 4},"
        " \"algorithm\": {\"name\": \"allreduce\", \"lr\": 0.1, \"batch\": 4,"
        " \"collective\": \"%s\"},"
        " \"stop\": {\"steps\": 2}}", n, T, a, B, collective);
    run_result res;
    run_scenario(json, NULL, &res);
    ck_assert_uint_eq(res.n_params, 64);
    /* every node ends with the same model, bit for bit */
    ck_assert_double_eq(res.last.consensus_distance, 0);
    return res.sim_time_s - 2 * T;   /* two steps, one all-reduce between them */
}

START_TEST(test_allreduce_cost_closed_forms)
{
    static const int sizes[] = { 2, 4, 8, 16 };
    const double a = 1e-3, B = 1e5, T = 1.0, M = 256;
    for (size_t t = 0; t < sizeof sizes / sizeof sizes[0]; t++) {
        int n = sizes[t];
        double L = log2(n);
        double ring = 2 * (n - 1) * a + 2.0 * (n - 1) / n * M / B;
        double rd = L * (a + M / B);
        double tree = 2 * L * (a + M / B);
        double got = allreduce_time("ring", n, T, a, B);
        ck_assert_msg(fabs(got - ring) < 1e-12, "ring n=%d: %.17g s, closed form %.17g s", n,
                      got, ring);
        got = allreduce_time("recursive_doubling", n, T, a, B);
        ck_assert_msg(fabs(got - rd) < 1e-12, "recursive doubling n=%d: %.17g s, closed form "
                      "%.17g s", n, got, rd);
        got = allreduce_time("tree", n, T, a, B);
        ck_assert_msg(fabs(got - tree) < 1e-12, "tree n=%d: %.17g s, closed form %.17g s", n,
                      got, tree);
    }
}
END_TEST

/* Sizes that are not powers of two: recursive doubling folds the extra
 * nodes in and out (at most two more transfers of a + M/B; the core nodes
 * that fold nothing start exchanging at once, so it can be less), the tree
 * is ceil(log2 n) levels deep.  Results stay identical on every node. */
START_TEST(test_allreduce_odd_sizes)
{
    const double a = 1e-3, B = 1e5, T = 1.0, M = 256;
    static const int sizes[] = { 3, 5, 6, 7, 12 };
    for (size_t t = 0; t < sizeof sizes / sizeof sizes[0]; t++) {
        int n = sizes[t];
        int L = (int)floor(log2(n));
        double got = allreduce_time("recursive_doubling", n, T, a, B);
        ck_assert_msg(got > L * (a + M / B) && got <= (L + 2) * (a + M / B) + 1e-12,
                      "recursive doubling n=%d: %.17g s", n, got);
        if (n == 3)   /* fold [a, a+T], exchange received at a+2T, result back at 2a+3T */
            ck_assert_double_eq_tol(got, 2 * a + 3 * M / B, 1e-12);
        double tree_max = 2 * ceil(log2(n)) * (a + M / B);
        got = allreduce_time("tree", n, T, a, B);
        ck_assert_msg(got <= tree_max + 1e-12 && got >= 2 * L * (a + M / B) - 1e-12,
                      "tree n=%d: %.17g s", n, got);
        allreduce_time("ring", n, T, a, B);
    }
}
END_TEST

int main(void)
{
    Suite *s = suite_create("closed_forms");
    TCase *tc = tcase_create("closed_forms");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, test_sync_iteration_harmonic);
    tcase_add_test(tc, test_consensus_decay_ring);
    tcase_add_test(tc, test_allreduce_cost_closed_forms);
    tcase_add_test(tc, test_allreduce_odd_sizes);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
