/* test_heterogeneity.c -- the cluster's heterogeneity models against closed
 * forms, driven directly through the cluster API: the first n of n+b
 * Exp(lambda) steps (backup workers), a parameter server behind FIFO and
 * fair-sharing NICs, processor sharing of one uplink, a slowdown window
 * that changes a step in progress, the long-run slow fraction of a Markov
 * straggler, and what a node that goes down loses, sends and receives.
 */
#include <check.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cl_cluster.h"
#include "mdl.h"
#include "sim_engine.h"

#define MAXN 16

typedef struct world world;
typedef void (*step_fn)(world *w, int node);
typedef void (*msg_fn)(world *w, int node, const cl_msg *m);
typedef void (*timer_fn)(world *w, int node, uint32_t tag);

struct world {
    mdl_dataset train, test;
    mdl_partition part;
    mdl_model *model;
    sim_engine *eng;
    cl_cluster *cl;
    double step[MAXN];
    step_fn on_step;
    msg_fn on_msg;
    timer_fn on_timer;
    /* protocol state of the tests */
    int n, b, done_in_round, rounds, got;
    double sum, round_start, t_mark[64];
    int n_msgs, msg_from[64];
    double msg_time[64];
    uint64_t steps[MAXN];
};

static void cb_step(void *ctx, int node, const double *grad)
{
    (void)grad;
    world *w = ctx;
    w->steps[node]++;
    if (w->on_step)
        w->on_step(w, node);
}

static void cb_msg(void *ctx, int node, const cl_msg *m)
{
    world *w = ctx;
    if (w->n_msgs < 64) {
        w->msg_from[w->n_msgs] = m->from;
        w->msg_time[w->n_msgs] = sim_engine_now(w->eng);
    }
    w->n_msgs++;
    if (w->on_msg)
        w->on_msg(w, node, m);
}

static void cb_timer(void *ctx, int node, uint32_t tag)
{
    world *w = ctx;
    if (w->on_timer)
        w->on_timer(w, node, tag);
}

/* n nodes with base step times step[i] (1 s where 0; the caller zeroes w
 * first); cfg fields beyond the basics come from extra (may be NULL). */
static void world_init(world *w, int n, const cl_config *extra)
{
    mdl_synth_spec sp = { .n_train = 64 * (size_t)n, .n_test = 8, .d = 3, .n_classes = 2,
                          .separation = 1 };
    ck_assert_int_eq(mdl_synth_generate(&sp, 3, &w->train, &w->test), 0);
    ck_assert_int_eq(mdl_partition_iid(w->train.n, n, 5, &w->part), 0);
    w->model = mdl_create(&mdl_softmax, 3, 2, 0.0, 4);
    ck_assert_ptr_nonnull(w->model);
    w->eng = sim_engine_create((uint32_t)n + 1, 64);
    cl_config cfg = { 0 };
    if (extra)
        cfg = *extra;
    for (int i = 0; i < n; i++)
        if (w->step[i] == 0)
            w->step[i] = 1.0;
    cfg.n_nodes = n;
    if (cfg.seed == 0)
        cfg.seed = 1;
    cfg.step_time_s = w->step;
    if (cfg.bandwidth_Bps == 0)
        cfg.bandwidth_Bps = 1000;
    cfg.bytes_per_param = 4;
    cfg.model = w->model;
    cfg.train = &w->train;
    cfg.part = &w->part;
    cfg.batch = 4;
    cl_callbacks cb = { .ctx = w, .on_step_done = cb_step, .on_message = cb_msg,
                        .on_timer = cb_timer };
    w->cl = cl_create(&cfg, w->eng, cb);
    ck_assert_ptr_nonnull(w->cl);
}

static int handle(void *ctx, const sim_event *ev)
{
    world *w = ctx;
    return cl_handle_event(w->cl, ev);
}

/* Runs to horizon; events after it stay queued. */
static void world_run(world *w, double horizon)
{
    sim_engine_run(w->eng, horizon, handle, w);
}

static void world_fini(world *w)
{
    cl_destroy(w->cl);
    sim_engine_destroy(w->eng);
    mdl_destroy(w->model);
    mdl_partition_fini(&w->part);
    mdl_dataset_fini(&w->train);
    mdl_dataset_fini(&w->test);
}

/* ---- backup workers: the first n of n+b ---- */

static void backup_step(world *w, int node)
{
    (void)node;
    if (++w->done_in_round < w->n)
        return;
    double now = sim_engine_now(w->eng);
    w->sum += now - w->round_start;
    w->rounds++;
    w->done_in_round = 0;
    w->round_start = now;
    for (int i = 0; i < w->n + w->b; i++) {
        cl_abort_step(w->cl, i);
        cl_start_step(w->cl, i);
    }
}

START_TEST(test_backup_workers_order_statistic)
{
    const int n = 4, b = 2, K = 6000;
    const double lambda = 2.0;
    world w;
    memset(&w, 0, sizeof w);
    for (int i = 0; i < n + b; i++)
        w.step[i] = 1.0 / lambda;   /* exponential noise of mean 1 */
    cl_config cfg = { .noise = CL_NOISE_EXPONENTIAL, .seed = 17 };
    world_init(&w, n + b, &cfg);
    w.n = n;
    w.b = b;
    w.on_step = backup_step;
    for (int i = 0; i < n + b; i++)
        cl_start_step(w.cl, i);
    sim_event ev;
    while (w.rounds < K && sim_engine_pop(w.eng, &ev))
        cl_handle_event(w.cl, &ev);
    /* T = sum_{k=b+1}^{n+b} E_k / k with E_k ~ Exp(lambda) independent:
     * mean (H_{n+b} - H_b) / lambda, variance sum 1/(k lambda)^2 */
    double mean_expect = 0, var = 0;
    for (int k = b + 1; k <= n + b; k++) {
        mean_expect += 1.0 / k;
        var += 1.0 / ((double)k * k);
    }
    mean_expect /= lambda;
    var /= lambda * lambda;
    double mean = w.sum / K, se = sqrt(var / K);
    ck_assert_msg(fabs(mean - mean_expect) < 3 * se, "mean %.6g expected %.6g se %.3g", mean,
                  mean_expect, se);
    /* and not the mean without backups, H_n / lambda */
    double hn = 0;
    for (int k = 1; k <= n; k++)
        hn += 1.0 / k;
    ck_assert(fabs(mean - hn / lambda) > 10 * se);
    world_fini(&w);
}
END_TEST

/* ---- parameter server behind one NIC ---- */

enum { TAG_MODEL = 1, TAG_GRAD = 2 };

static void ps_send_models(world *w)
{
    for (int k = 1; k <= w->n; k++)
        cl_send(w->cl, 0, k, TAG_MODEL, (uint64_t)w->rounds, NULL, 1000);
}

static void ps_msg(world *w, int node, const cl_msg *m)
{
    if (node != 0) {           /* a worker got the model: compute */
        cl_start_step(w->cl, node);
        return;
    }
    (void)m;
    if (++w->got < w->n)
        return;
    w->got = 0;
    w->t_mark[w->rounds++] = sim_engine_now(w->eng);
    if (w->rounds < 5)
        ps_send_models(w);
}

static void ps_step(world *w, int node)
{
    cl_send(w->cl, node, 0, TAG_GRAD, 0, NULL, 1000);
}

static double ps_iteration(cl_discipline d)
{
    world w;
    memset(&w, 0, sizeof w);
    for (int i = 0; i < 5; i++)
        w.step[i] = 0.5;
    cl_config cfg = { .latency_s = 0.1, .bandwidth_Bps = 1000, .discipline = d };
    world_init(&w, 5, &cfg);
    w.n = 4;
    w.on_msg = ps_msg;
    w.on_step = ps_step;
    ps_send_models(&w);
    world_run(&w, INFINITY);
    ck_assert_int_eq(w.rounds, 5);
    double it = w.t_mark[0];
    for (int r = 1; r < 5; r++)
        ck_assert_double_eq_tol(w.t_mark[r] - w.t_mark[r - 1], it, 1e-9);
    ck_assert_uint_eq(cl_in_flight(w.cl), 0);
    world_fini(&w);
    return it;
}

/* n = 4 workers, M = 1000 B, B = 1000 B/s, a = 0.1 s, tau = 0.5 s.
 * FIFO: the PS's uplink serves the workers one after the other, worker k
 * computes while k+1 waits, and the gradients reach an idle downlink
 * M/B apart: 2a + (n+1) M/B + tau = 5.7 s.  Fair: every model arrives at
 * nM/B, every gradient shares the downlink: 2a + 2nM/B + tau = 8.7 s. */
START_TEST(test_parameter_server_fifo_and_fair)
{
    ck_assert_double_eq_tol(ps_iteration(CL_NIC_FIFO), 0.2 + 5 * 1.0 + 0.5, 1e-9);
    ck_assert_double_eq_tol(ps_iteration(CL_NIC_FAIR), 0.2 + 8 * 1.0 + 0.5, 1e-9);
}
END_TEST

/* Processor sharing of one uplink: 1000 and 2000 bytes at 1000 B/s start
 * together: both at 500 B/s until the first ends at 2 s, then the second
 * alone: 3 s.  FIFO: 1 s and 3 s.  Latency 0.25 s on top. */
START_TEST(test_fair_uplink_shares)
{
    for (int d = 0; d < 2; d++) {
        world w;
        memset(&w, 0, sizeof w);
        cl_config cfg = { .latency_s = 0.25, .bandwidth_Bps = 1000,
                          .discipline = d ? CL_NIC_FAIR : CL_NIC_FIFO };
        world_init(&w, 3, &cfg);
        cl_send(w.cl, 0, 1, 0, 0, NULL, 1000);
        cl_send(w.cl, 0, 2, 0, 0, NULL, 2000);
        world_run(&w, INFINITY);
        ck_assert_int_eq(w.n_msgs, 2);
        ck_assert_int_eq(w.msg_from[0], 0);
        ck_assert_double_eq_tol(w.msg_time[0], (d ? 2.0 : 1.0) + 0.25, 1e-9);
        ck_assert_double_eq_tol(w.msg_time[1], 3.25, 1e-9);
        ck_assert_double_eq_tol(cl_stats(w.cl, 0)->uplink_busy_s, 3.0, 1e-9);
        world_fini(&w);
    }
}
END_TEST

/* A NIC capacity below the link bandwidth limits the transfer. */
START_TEST(test_nic_capacity)
{
    world w;
    memset(&w, 0, sizeof w);
    double up[3] = { 250, 1000, 1000 }, down[3] = { 1000, 1000, 1000 };
    cl_config cfg = { .latency_s = 0, .bandwidth_Bps = 1000, .up_Bps = up, .down_Bps = down };
    world_init(&w, 3, &cfg);
    cl_send(w.cl, 0, 1, 0, 0, NULL, 1000);
    world_run(&w, INFINITY);
    ck_assert_double_eq_tol(w.msg_time[0], 4.0, 1e-12);
    world_fini(&w);
}
END_TEST

/* ---- time-varying slowdowns ---- */

/* Work 1 s from t = 0; 5x slower on [0.5, 1.5): 0.5 done by 0.5, 0.2 in
 * the window, the last 0.3 at full speed: ends at 1.8 s. */
START_TEST(test_window_changes_step_in_progress)
{
    world w;
    memset(&w, 0, sizeof w);
    cl_slowdown win = { .kind = CL_SLOW_WINDOW, .factor = 5, .start_s = 0.5, .end_s = 1.5 };
    cl_config cfg = { .slowdowns = &win, .n_slowdowns = 1 };
    world_init(&w, 2, &cfg);
    cl_start_step(w.cl, 0);
    world_run(&w, INFINITY);
    ck_assert_uint_eq(w.steps[0], 1);
    ck_assert_double_eq_tol(cl_stats(w.cl, 0)->compute_s, 1.8, 1e-12);
    ck_assert_double_eq(cl_slowdown_factor(w.cl, 0), 1.0);
    world_fini(&w);
}
END_TEST

static void again(world *w, int node) { cl_start_step(w->cl, node); }

/* Periodic 2x slowdown of duration 1 every 4 s, phase 1: over [0, 8) a
 * node works 6 s at full speed and 2 s at half: 7 steps of 1 s. */
START_TEST(test_periodic_slowdown)
{
    world w;
    memset(&w, 0, sizeof w);
    cl_slowdown per = { .kind = CL_SLOW_PERIODIC, .factor = 2, .period_s = 4,
                        .duration_s = 1, .phase_s = 1 };
    cl_config cfg = { .slowdowns = &per, .n_slowdowns = 1 };
    world_init(&w, 1, &cfg);
    w.on_step = again;
    cl_start_step(w.cl, 0);
    world_run(&w, 8.0 + 1e-9);
    ck_assert_uint_eq(w.steps[0], 7);
    world_fini(&w);
}
END_TEST

/* Trace points multiply with a window on the same node. */
START_TEST(test_trace_slowdown)
{
    world w;
    memset(&w, 0, sizeof w);
    cl_point pts[] = { { 0, 0.0, 2.0 }, { 0, 3.0, 1.0 }, { 1, 1.0, 4.0 } };
    cl_slowdown s[2] = {
        { .kind = CL_SLOW_TRACE, .points = pts, .n_points = 3 },
        { .kind = CL_SLOW_WINDOW, .factor = 3, .start_s = 0, .end_s = 10 },
    };
    cl_config cfg = { .slowdowns = s, .n_slowdowns = 2 };
    world_init(&w, 2, &cfg);
    ck_assert_double_eq(cl_slowdown_factor(w.cl, 0), 6.0);
    ck_assert_double_eq(cl_slowdown_factor(w.cl, 1), 3.0);
    world_run(&w, 5);
    ck_assert_double_eq(cl_slowdown_factor(w.cl, 0), 3.0);
    ck_assert_double_eq(cl_slowdown_factor(w.cl, 1), 12.0);
    world_fini(&w);
}
END_TEST

/* A node computing back to back for T does work W = T_normal + T_slow/F,
 * so the slow time is (T - W) F/(F-1).  Two-state Markov chain with
 * exponential sojourns: slow fraction m_s/(m_s+m_n); the time average over
 * T has variance 2 m_s^2 m_n^2 / ((m_s+m_n)^3 T). */
START_TEST(test_markov_slow_fraction)
{
    const double ms = 0.2, mn = 0.8, F = 5, T = 4000, base = 0.01;
    world w;
    memset(&w, 0, sizeof w);
    w.step[0] = base;
    cl_slowdown mk = { .kind = CL_SLOW_MARKOV, .factor = F, .mean_slow_s = ms,
                       .mean_normal_s = mn };
    cl_config cfg = { .slowdowns = &mk, .n_slowdowns = 1, .seed = 23 };
    world_init(&w, 1, &cfg);
    w.on_step = again;
    cl_start_step(w.cl, 0);
    world_run(&w, T);
    double W = (double)w.steps[0] * base;
    double frac = (T - W) * F / (F - 1) / T, expect = ms / (ms + mn);
    double se = sqrt(2 * ms * ms * mn * mn / pow(ms + mn, 3) / T);
    ck_assert_msg(fabs(frac - expect) < 3 * se + base * F / T, "slow fraction %.5f, expected "
                  "%.5f, se %.4f", frac, expect, se);
    ck_assert(fabs(frac) > 10 * se);   /* the slowdown did happen */
    world_fini(&w);
}
END_TEST

/* ---- availability ---- */

static void send_at(world *w, int node, uint32_t tag)
{
    /* tag: destination */
    cl_send(w->cl, node, (int)tag, 0, 0, NULL, 0);
}

/* Node 1 is down on [1, 3).  Its 2 s step started at 0 restarts at 3
 * (restart) or continues for its last second (resume).  A message to it
 * arriving at 1.5 and one sent at 2 are lost; node 1 sends nothing while
 * down; a message sent to it at 3.5 arrives. */
static void check_down(cl_step_policy pol)
{
    world w;
    memset(&w, 0, sizeof w);
    w.step[1] = 2.0;
    cl_fault f = { .kind = CL_FAULT_SCHEDULE, .nodes = (const int[]){ 1 }, .n_nodes = 1,
                   .down_s = 1, .up_s = 3 };
    cl_config cfg = { .faults = &f, .n_faults = 1, .latency_s = 1.0, .step_policy = pol };
    world_init(&w, 3, &cfg);
    cl_start_step(w.cl, 1);
    /* arrives at 1.0, after the failure scheduled at creation: lost */
    cl_send(w.cl, 0, 1, 0, 0, NULL, 0);
    w.on_timer = send_at;
    cl_set_timer(w.cl, 0, 1.25, 1);   /* node 0 sends to 1 at 1.25: lost at 2.25 */
    cl_set_timer(w.cl, 0, 3.5, 1);    /* at 3.5: arrives at 4.5 */
    cl_set_timer(w.cl, 2, 0.5, 1);    /* arrives at 1.5, 1 is down: lost */
    world_run(&w, 1.5);
    ck_assert(!cl_is_up(w.cl, 1));
    cl_send(w.cl, 1, 0, 0, 0, NULL, 0);   /* a down node sends nothing */
    world_run(&w, INFINITY);
    ck_assert(cl_is_up(w.cl, 1));
    ck_assert_int_eq(w.n_msgs, 1);
    ck_assert_int_eq(w.msg_from[0], 0);
    ck_assert_double_eq_tol(w.msg_time[0], 4.5, 1e-12);
    ck_assert_uint_eq(cl_stats(w.cl, 1)->msgs_received, 1);
    ck_assert_uint_eq(cl_stats(w.cl, 1)->msgs_sent, 0);
    ck_assert_uint_eq(cl_stats(w.cl, 1)->msgs_lost, 1);
    ck_assert_uint_eq(cl_stats(w.cl, 0)->msgs_lost, 2);
    ck_assert_uint_eq(cl_stats(w.cl, 2)->msgs_lost, 1);
    ck_assert_uint_eq(w.steps[1], 1);
    ck_assert_double_eq_tol(cl_stats(w.cl, 1)->compute_s, pol == CL_STEP_RESUME ? 2.0 : 3.0,
                            1e-12);
    ck_assert_uint_eq(cl_stats(w.cl, 1)->steps_lost, pol == CL_STEP_RESUME ? 0 : 1);
    cl_stats_settle(w.cl);
    ck_assert_double_eq_tol(cl_stats(w.cl, 1)->down_s, 2.0, 1e-12);
    ck_assert_uint_eq(cl_pending(w.cl), 0);
    ck_assert_uint_eq(cl_in_flight(w.cl), 0);
    world_fini(&w);
}

START_TEST(test_down_node_restart) { check_down(CL_STEP_RESTART); }
END_TEST
START_TEST(test_down_node_resume) { check_down(CL_STEP_RESUME); }
END_TEST

int main(void)
{
    Suite *s = suite_create("heterogeneity");
    TCase *tc = tcase_create("heterogeneity");
    tcase_add_test(tc, test_backup_workers_order_statistic);
    tcase_add_test(tc, test_parameter_server_fifo_and_fair);
    tcase_add_test(tc, test_fair_uplink_shares);
    tcase_add_test(tc, test_nic_capacity);
    tcase_add_test(tc, test_window_changes_step_in_progress);
    tcase_add_test(tc, test_periodic_slowdown);
    tcase_add_test(tc, test_trace_slowdown);
    tcase_add_test(tc, test_markov_slow_fraction);
    tcase_add_test(tc, test_down_node_restart);
    tcase_add_test(tc, test_down_node_resume);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
