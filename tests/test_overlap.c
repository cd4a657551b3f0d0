/* test_overlap.c -- compute/communication overlap.  The cluster's step
 * marks in isolation (exact mark times under a slowdown window, a
 * resumed, a restarted and an aborted step); all-reduce with DDP's
 * gradient buckets against the closed form of its pipeline on a
 * homogeneous ring (one bucket and many, buckets sequential or concurrent
 * on the links); tau-overlap SGP: the push-sum average exact with lr 0,
 * the timeline of tau = 1 by hand, and the gain in a communication-bound
 * case.
 */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cl_cluster.h"
#include "run.h"
#include "scn.h"
#include "sim_engine.h"
#include "test_util.h"

/* ---- step marks at the cluster ---- */

typedef struct mworld {
    sim_engine *eng;
    cl_cluster *cl;
    double step[2];
    int    n_marks, mark_k[32], n_starts, n_done;
    double mark_t[32], done_t;
    double abort_at;   /* > 0: abort node 0's step then and start a plain one */
} mworld;

static void m_start(void *ctx, int node)
{
    (void)node;
    ((mworld *)ctx)->n_starts++;
}

static void m_mark(void *ctx, int node, int k)
{
    (void)node;
    mworld *w = ctx;
    w->mark_k[w->n_marks] = k;
    w->mark_t[w->n_marks++] = sim_engine_now(w->eng);
}

static void m_done(void *ctx, int node)
{
    (void)node;
    mworld *w = ctx;
    w->n_done++;
    w->done_t = sim_engine_now(w->eng);
}

static void m_timer(void *ctx, int node, uint32_t tag)
{
    (void)tag;
    mworld *w = ctx;
    cl_abort_step(w->cl, node);
    cl_start_step(w->cl, node);
}

static int m_handle(void *ctx, const sim_event *ev)
{
    mworld *w = ctx;
    return cl_handle_event(w->cl, ev);
}

static const double fracs[] = { 0.2, 0.4, 0.5, 0.8, 1.0 };

/* One node, a step of 1 s with the marks above, cfg's slowdowns and faults. */
static void marks_run(mworld *w, cl_config cfg)
{
    w->eng = sim_engine_create(2, 64);
    w->step[0] = 1.0;
    cfg.n_nodes = 1;
    cfg.seed = 1;
    cfg.step_time_s = w->step;
    cfg.bandwidth_Bps = 1000;
    cl_callbacks cb = { .ctx = w, .on_step_start = m_start, .on_step_done = m_done,
                        .on_step_mark = m_mark, .on_timer = m_timer };
    w->cl = cl_create(&cfg, w->eng, cb);
    ck_assert_ptr_nonnull(w->cl);
    cl_start_step_marks(w->cl, 0, fracs, 5);
    if (w->abort_at > 0)
        cl_set_timer(w->cl, 0, w->abort_at, 0);
    sim_engine_run(w->eng, 100, m_handle, w);
    cl_destroy(w->cl);
    sim_engine_destroy(w->eng);
}

static void expect_marks(const mworld *w, int n, const int *k, const double *t)
{
    ck_assert_int_eq(w->n_marks, n);
    for (int i = 0; i < n; i++) {
        ck_assert_int_eq(w->mark_k[i], k[i]);
        ck_assert_msg(fabs(w->mark_t[i] - t[i]) < 1e-12, "mark %d at %.17g, expected %.17g", i,
                      w->mark_t[i], t[i]);
    }
}

/* Rate 1 up to 0.3 s (0.3 of the work), 1/2 on [0.3, 0.6) (0.15 more),
 * 1 again: 0.2 at 0.2, 0.4 at 0.3 + 0.1 * 2, 0.5 at 0.6 + 0.05, 0.8 at
 * 0.95, the end (and the mark at 1, just before it) at 1.15. */
START_TEST(test_marks_under_slowdown)
{
    mworld w = { 0 };
    cl_slowdown sl = { .kind = CL_SLOW_WINDOW, .factor = 2, .start_s = 0.3, .end_s = 0.6 };
    marks_run(&w, (cl_config){ .slowdowns = &sl, .n_slowdowns = 1 });
    expect_marks(&w, 5, (const int[]){ 0, 1, 2, 3, 4 },
                 (const double[]){ 0.2, 0.5, 0.65, 0.95, 1.15 });
    ck_assert_int_eq(w.n_done, 1);
    ck_assert(fabs(w.done_t - 1.15) < 1e-12);
    ck_assert_int_eq(w.n_starts, 1);
}
END_TEST

/* Down on [0.45, 0.7): a resumed step goes on from 0.45 of its work; a
 * restarted one starts over at 0.7 and gives its marks again from 0. */
START_TEST(test_marks_resume_restart)
{
    cl_fault f = { .kind = CL_FAULT_SCHEDULE, .nodes = (const int[]){ 0 }, .n_nodes = 1,
                   .down_s = 0.45, .up_s = 0.7 };
    mworld w = { 0 };
    marks_run(&w, (cl_config){ .faults = &f, .n_faults = 1, .step_policy = CL_STEP_RESUME });
    expect_marks(&w, 5, (const int[]){ 0, 1, 2, 3, 4 },
                 (const double[]){ 0.2, 0.4, 0.75, 1.05, 1.25 });
    ck_assert_int_eq(w.n_done, 1);
    ck_assert(fabs(w.done_t - 1.25) < 1e-12);
    ck_assert_int_eq(w.n_starts, 1);

    mworld r = { 0 };
    marks_run(&r, (cl_config){ .faults = &f, .n_faults = 1, .step_policy = CL_STEP_RESTART });
    expect_marks(&r, 7, (const int[]){ 0, 1, 0, 1, 2, 3, 4 },
                 (const double[]){ 0.2, 0.4, 0.9, 1.1, 1.2, 1.5, 1.7 });
    ck_assert_int_eq(r.n_done, 1);
    ck_assert(fabs(r.done_t - 1.7) < 1e-12);
    ck_assert_int_eq(r.n_starts, 2);
}
END_TEST

/* Aborted at 0.45: no more marks; the plain step started then has none. */
START_TEST(test_marks_abort)
{
    mworld w = { .abort_at = 0.45 };
    marks_run(&w, (cl_config){ 0 });
    expect_marks(&w, 2, (const int[]){ 0, 1 }, (const double[]){ 0.2, 0.4 });
    ck_assert_int_eq(w.n_done, 1);
    ck_assert(fabs(w.done_t - 1.45) < 1e-12);
}
END_TEST

/* ---- all-reduce with gradient buckets ---- */

static void run_scn(const char *json, const run_options *opt, run_result *res)
{
    run_json(json, opt, res);
    ck_assert_str_eq(res->stop_reason, "steps");
}

/* The closed form of the bucket pipeline on a homogeneous ring of n nodes
 * (latency a, bandwidth B, step T, forward share fs), buckets of b[k]
 * bytes out of M in DDP's order: bucket k is released at
 * r_k = T (fs + (1 - fs) C_k / M), C_k = b_0 + ... + b_k (r_{m-1} = T),
 * and its ring all-reduce alone takes A_k = 2(n-1) a + 2(n-1)/n b_k/B.
 * Sequential buckets (each waits for the one before): D_k = max(r_k,
 * D_{k-1}) + A_k, so the iteration is D_{m-1} = max_k (r_k + sum_{j>=k}
 * A_j).  With a = 0 concurrent buckets give the same: the uplink then
 * never idles while a released bucket has a chunk left, and a work-
 * conserving server's last job ends at max_k (r_k + work released from
 * r_k on). */
static double pipeline(int n, double T, double fs, double a, double B, const double *b, int m)
{
    double M = 0, C = 0, D = -INFINITY;
    for (int k = 0; k < m; k++)
        M += b[k];
    for (int k = 0; k < m; k++) {
        C += b[k];
        double r = k == m - 1 ? T : T * (fs + (1 - fs) * C / M);
        double A = 2 * (n - 1) * a + 2.0 * (n - 1) / n * b[k] / B;
        D = (r > D ? r : D) + A;
    }
    return D;
}

/* Iteration time of a timing-only all-reduce of M bytes: K steps end at
 * (K - 1) iterations + T. */
static double ar_iteration(int n, double T, double a, double B, double M, const char *extra)
{
    const int K = 5;
    char json[2048];
    snprintf(json, sizeof json,
        "{\"nodes\": %d, \"compute\": {\"step_time_s\": %.17g},"
        " \"network\": {\"latency_s\": %.17g, \"bandwidth_Bps\": %.17g},"
        " \"model\": {\"kind\": \"none\", \"message_bytes\": %.17g},"
        " \"algorithm\": {\"name\": \"allreduce\", \"lr\": 0.1, \"batch\": 4%s},"
        " \"stop\": {\"steps\": %d}}", n, T, a, B, M, extra, K);
    run_result res;
    run_scn(json, NULL, &res);
    return (res.sim_time_s - T) / (K - 1);
}

START_TEST(test_buckets_closed_form)
{
    const double T = 1.0, a = 1e-3, B = 1e8;
    static const int sizes[] = { 2, 4, 5, 8 };
    for (size_t t = 0; t < sizeof sizes / sizeof sizes[0]; t++) {
        int n = sizes[t];
        /* one bucket: the model under 25 MiB */
        double M = 1e7, one[] = { M };
        double got = ar_iteration(n, T, a, B, M, "");
        double want = pipeline(n, T, 1.0 / 3, a, B, one, 1);
        ck_assert_msg(fabs(got - want) < 1e-9, "n=%d one bucket: %.17g, closed form %.17g", n,
                      got, want);
        ck_assert(fabs(want - (T + 2 * (n - 1) * a + 2.0 * (n - 1) / n * M / B)) < 1e-12);
        /* 100 MB in 25 MiB buckets: three full and the remainder */
        M = 1e8;
        double cap = 26214400, many[] = { cap, cap, cap, M - 3 * cap };
        got = ar_iteration(n, T, a, B, M, "");
        want = pipeline(n, T, 1.0 / 3, a, B, many, 4);
        ck_assert_msg(fabs(got - want) < 1e-9, "n=%d 4 buckets: %.17g, closed form %.17g", n,
                      got, want);
        /* a compute-bound pipeline: only the last bucket shows */
        got = ar_iteration(n, 10 * T, a, B, M, ", \"forward_share\": 0.5");
        want = pipeline(n, 10 * T, 0.5, a, B, many, 4);
        ck_assert_msg(fabs(got - want) < 1e-9, "n=%d fs 0.5: %.17g, closed form %.17g", n, got,
                      want);
        ck_assert(fabs(want - (10 * T + 2 * (n - 1) * a + 2.0 * (n - 1) / n * many[3] / B))
                  < 1e-12);
        /* no overlap: one all-reduce of M after the step */
        got = ar_iteration(n, T, a, B, M, ", \"overlap\": \"off\"");
        want = T + 2 * (n - 1) * a + 2.0 * (n - 1) / n * M / B;
        ck_assert_msg(fabs(got - want) < 1e-9, "n=%d off: %.17g, expected %.17g", n, got, want);
        /* small buckets, many of them */
        double small[13];
        for (int k = 0; k < 12; k++)
            small[k] = 8e6;
        small[12] = 4e6;
        got = ar_iteration(n, T, a, B, M, ", \"bucket_bytes\": 8e6, \"forward_share\": 0.25");
        want = pipeline(n, T, 0.25, a, B, small, 13);
        ck_assert_msg(fabs(got - want) < 1e-9, "n=%d 13 buckets: %.17g, closed form %.17g", n,
                      got, want);
        /* concurrent buckets without latency: the same closed form */
        got = ar_iteration(n, T, 0, B, M, ", \"bucket_bytes\": 8e6, \"forward_share\": 0.25,"
                           " \"bucket_collectives\": \"concurrent\"");
        want = pipeline(n, T, 0.25, 0, B, small, 13);
        ck_assert_msg(fabs(got - want) < 1e-9, "n=%d concurrent: %.17g, closed form %.17g", n,
                      got, want);
    }
}
END_TEST

/* With a real model: 64 parameters of 4 bytes in buckets of 64 bytes (16
 * parameters, the last ones first); the models stay bit-identical across
 * nodes, the closed form holds, and one bucket is today's run bit for bit. */
static void ar_softmax(int n, const char *extra, run_result *res)
{
    char json[2048];
    snprintf(json, sizeof json,
        "{\"nodes\": %d, \"compute\": {\"step_time_s\": 1},"
        " \"network\": {\"latency_s\": 0.001, \"bandwidth_Bps\": 1000, \"bytes_per_param\": 4},"
        " \"data\": {\"train\": 512, \"test\": 16, \"features\": 15, \"classes\": 4},"
        " \"algorithm\": {\"name\": \"allreduce\", \"lr\": 0.1, \"batch\": 4%s},"
        " \"stop\": {\"steps\": 6}}", n, extra);
    run_scn(json, NULL, res);
    ck_assert_uint_eq(res->n_params, 64);
    ck_assert_double_eq(res->last.consensus_distance, 0);
}

START_TEST(test_buckets_softmax)
{
    const int n = 4;
    run_result on, off, many;
    ar_softmax(n, "", &on);
    ar_softmax(n, ", \"overlap\": \"off\"", &off);
    ck_assert_double_eq(on.sim_time_s, off.sim_time_s);
    ck_assert_double_eq(on.last.train_loss, off.last.train_loss);
    ck_assert_double_eq(on.last.test_loss, off.last.test_loss);
    ar_softmax(n, ", \"bucket_bytes\": 64", &many);
    double b[] = { 64, 64, 64, 64 };
    double want = pipeline(n, 1, 1.0 / 3, 0.001, 1000, b, 4);
    ck_assert_msg(fabs((many.sim_time_s - 1) / 5 - want) < 1e-9, "%.17g against %.17g",
                  (many.sim_time_s - 1) / 5, want);
    ck_assert(fabs(many.last.train_loss - off.last.train_loss) < 1e-9);
}
END_TEST

/* ---- tau-overlap SGP ---- */

static void spread_init(void *ctx, int node, double *x, size_t P)
{
    (void)ctx;
    for (size_t k = 0; k < P; k++)
        x[k] = sin(1.0 + node * 7.0 + (double)k);
}

/* lr 0 and different models per node, lognormal step times, messages in
 * flight at the end: the push-sum average (numerators everywhere over n)
 * stays the initial mean. */
START_TEST(test_sgp_overlap_average_exact)
{
    for (int tau = 1; tau <= 3; tau++) {
        char json[2048];
        snprintf(json, sizeof json,
            "{\"seed\": 5, \"nodes\": 8,"
            " \"compute\": {\"step_time_s\": 0.01, \"noise\": {\"dist\": \"lognormal\","
            " \"sigma\": 0.5}},"
            " \"network\": {\"latency_s\": 0.02, \"bandwidth_Bps\": 1e6},"
            " \"data\": {\"train\": 512, \"test\": 16, \"features\": 7, \"classes\": 3},"
            " \"algorithm\": {\"name\": \"sgp\", \"lr\": 1e-300, \"batch\": 4, \"overlap\": %d},"
            " \"stop\": {\"steps\": 60}}", tau);
        run_options opt = { .init_params = spread_init };
        run_result res;
        run_scn(json, &opt, &res);
        ck_assert_msg(stat_of(&res, "average_error") < 1e-12, "tau %d: %.3g", tau,
                      stat_of(&res, "average_error"));
        ck_assert(stat_of(&res, "weight_sum_error") < 1e-12);
    }
}
END_TEST

/* Four nodes, the one-peer exponential graph (one share in and one out
 * per round), steps of 1 s, a message 2.75 s of latency + 0.25 s on the
 * wire (C = 3).  tau = 0 waits for each round: step k ends at
 * (k + 1) + 3k.  tau = 1 needs round k - 1's share at the end of step k:
 * e_{k+1} = max(e_k, e_{k-1} + C) + 1, so steps end at 1, 2, 5, 6, 9,
 * 10, 13, 14: two steps per C + T, twice today's rate. */
static double sgp_time(int tau, int K)
{
    char json[2048];
    snprintf(json, sizeof json,
        "{\"nodes\": 4, \"compute\": {\"step_time_s\": 1},"
        " \"network\": {\"latency_s\": 2.75, \"bandwidth_Bps\": 4000},"
        " \"model\": {\"kind\": \"none\", \"message_bytes\": 1000},"
        " \"algorithm\": {\"name\": \"sgp\", \"lr\": 0.1, \"batch\": 4, \"overlap\": %d},"
        " \"stop\": {\"steps\": %d}}", tau, K);
    run_result res;
    run_scn(json, NULL, &res);
    return res.sim_time_s;
}

START_TEST(test_sgp_overlap_timeline)
{
    static const double tau1[] = { 1, 2, 5, 6, 9, 10, 13, 14 };
    for (int K = 1; K <= 8; K++) {
        ck_assert_double_eq_tol(sgp_time(1, K), tau1[K - 1], 1e-12);
        ck_assert_double_eq_tol(sgp_time(0, K), K + 3.0 * (K - 1), 1e-12);
    }
    /* tau = 2: e_{k+1} = max(e_k, e_{k-2} + C) + 1: 1, 2, 3, 5, 6, 7, 9 */
    static const double tau2[] = { 1, 2, 3, 5, 6, 7, 9 };
    for (int K = 1; K <= 7; K++)
        ck_assert_double_eq_tol(sgp_time(2, K), tau2[K - 1], 1e-12);
}
END_TEST

/* A communication-bound SGP run with a real model: tau = 1 needs fewer
 * seconds per iteration than tau = 0 and still trains. */
START_TEST(test_sgp_overlap_gain)
{
    double t[2], loss[2];
    for (int tau = 0; tau <= 1; tau++) {
        char json[2048];
        snprintf(json, sizeof json,
            "{\"seed\": 3, \"nodes\": 8, \"model\": {\"kind\": \"softmax\"},"
            " \"data\": {\"train\": 4096, \"test\": 1024, \"features\": 10, \"classes\": 3,"
            " \"separation\": 1.5},"
            " \"compute\": {\"step_time_s\": 0.01, \"noise\": {\"dist\": \"lognormal\","
            " \"sigma\": 0.3}},"
            " \"network\": {\"latency_s\": 0.02, \"bandwidth_Bps\": 1e7},"
            " \"algorithm\": {\"name\": \"sgp\", \"lr\": 0.1, \"batch\": 32, \"overlap\": %d},"
            " \"stop\": {\"steps\": 200}}", tau);
        run_result res;
        run_scn(json, NULL, &res);
        t[tau] = res.sim_time_s;
        loss[tau] = res.last.train_loss;
    }
    ck_assert_msg(t[1] < 0.8 * t[0], "tau 1: %.6g s, tau 0: %.6g s", t[1], t[0]);
    ck_assert(loss[1] < 1.2 * loss[0]);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("overlap");
    TCase *tc = tcase_create("core");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, test_marks_under_slowdown);
    tcase_add_test(tc, test_marks_resume_restart);
    tcase_add_test(tc, test_marks_abort);
    tcase_add_test(tc, test_buckets_closed_form);
    tcase_add_test(tc, test_buckets_softmax);
    tcase_add_test(tc, test_sgp_overlap_average_exact);
    tcase_add_test(tc, test_sgp_overlap_timeline);
    tcase_add_test(tc, test_sgp_overlap_gain);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
