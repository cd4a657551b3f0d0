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
#include "sim_engine.h"

#define MAXN 16

typedef struct world world;
typedef void (*step_fn)(world *w, int node);
typedef void (*msg_fn)(world *w, int node, const cl_msg *m);
typedef void (*timer_fn)(world *w, int node, uint32_t tag);

struct world {
    sim_engine *eng;
    cl_cluster *cl;
    double step[MAXN];
    step_fn on_step;
    msg_fn on_msg;
    timer_fn on_timer;
    /* protocol state of the tests */
    int n, b, done_in_round, rounds, got;
    double sum, round_start, t_mark[64];
    int n_msgs, msg_from[64], msg_to[64];
    uint64_t msg_round[4096];
    double msg_time[64];
    uint64_t steps[MAXN];
};

static void cb_step(void *ctx, int node)
{
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
        w->msg_to[w->n_msgs] = m->to;
        w->msg_time[w->n_msgs] = sim_engine_now(w->eng);
    }
    if (w->n_msgs < 4096)
        w->msg_round[w->n_msgs] = m->round;
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

/* ---- noise distributions ---- */

/* Mean 1 within 3 standard errors over 20000 steps of 1 s (sd of each
 * distribution from its closed form), and the support respected. */
START_TEST(test_noise_means)
{
    struct { cl_noise_spec ns; double sd, min; } cases[] = {
        { { .dist = CL_NOISE_UNIFORM, .low = 0.5, .high = 1.5 }, 1 / sqrt(12.0), 0.5 },
        { { .dist = CL_NOISE_EXPONENTIAL }, 1, 0 },
        { { .dist = CL_NOISE_LOGNORMAL, .sigma = 0.5 }, sqrt(exp(0.25) - 1), 0 },
        { { .dist = CL_NOISE_NORMAL, .sigma = 0.2, .floor = 0.1 }, 0.2, 0.1 },
        { { .dist = CL_NOISE_SHIFTED_EXPONENTIAL, .shift = 0.4 }, 0.6, 0.4 },
        { { .dist = CL_NOISE_GAMMA, .shape = 4 }, 0.5, 0 },
        /* Pareto(2.5, 0.6): variance x_m^2 a / ((a-1)^2 (a-2)) = 0.8 */
        { { .dist = CL_NOISE_PARETO, .alpha = 2.5 }, sqrt(0.8), 0.6 },
    };
    const int K = 20000;
    for (size_t t = 0; t < sizeof cases / sizeof *cases; t++) {
        world w;
        memset(&w, 0, sizeof w);
        cl_config cfg = { .noise_per_node = &cases[t].ns, .seed = 31 };
        world_init(&w, 1, &cfg);
        double prev = 0, sum = 0, least = INFINITY;
        for (int k = 0; k < K; k++) {
            cl_start_step(w.cl, 0);
            world_run(&w, INFINITY);
            double now = sim_engine_now(w.eng), d = now - prev;
            prev = now;
            sum += d;
            if (d < least)
                least = d;
        }
        double mean = sum / K, se = cases[t].sd / sqrt((double)K);
        ck_assert_msg(fabs(mean - 1) < 3 * se, "dist %d: mean %.5f se %.4f",
                      (int)cases[t].ns.dist, mean, se);
        ck_assert_msg(least >= cases[t].min - 1e-12, "dist %d: %.5f below %.5f",
                      (int)cases[t].ns.dist, least, cases[t].min);
        world_fini(&w);
    }
}
END_TEST

/* A wide normal truncated at 0.5: nothing below the floor. */
START_TEST(test_normal_floor)
{
    world w;
    memset(&w, 0, sizeof w);
    cl_noise_spec ns = { .dist = CL_NOISE_NORMAL, .sigma = 2, .floor = 0.5 };
    cl_config cfg = { .noise_per_node = &ns, .seed = 3 };
    world_init(&w, 1, &cfg);
    double prev = 0;
    for (int k = 0; k < 2000; k++) {
        cl_start_step(w.cl, 0);
        world_run(&w, INFINITY);
        ck_assert(sim_engine_now(w.eng) - prev >= 0.5 - 1e-12);
        prev = sim_engine_now(w.eng);
    }
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
    /* sent while down: handed to the network and lost at once (sent = received by the
     * others + lost + in flight) */
    ck_assert_uint_eq(cl_stats(w.cl, 1)->msgs_sent, 1);
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

/* ---- link classes, jitter, loss, outages ---- */

/* Class 1 (latency 2 s, 500 B/s) between 0 and 2 in both directions,
 * class 2 (latency 1 s) from 1 to 3 only. */
START_TEST(test_link_classes)
{
    world w;
    memset(&w, 0, sizeof w);
    cl_link_class cls[3] = {
        { .latency_s = 0.5, .bandwidth_Bps = 1000 },
        { .latency_s = 2, .bandwidth_Bps = 500 },
        { .latency_s = 1, .bandwidth_Bps = 1000 },
    };
    cl_link_rule rules[2] = {
        { .from = (const int[]){ 0 }, .n_from = 1, .to = (const int[]){ 2 }, .n_to = 1, .cls = 1 },
        { .from = (const int[]){ 1 }, .n_from = 1, .to = (const int[]){ 3 }, .n_to = 1,
          .directed = 1, .cls = 2 },
    };
    cl_config cfg = { .classes = cls, .n_classes = 3, .link_rules = rules, .n_link_rules = 2,
                      .bandwidth_Bps = 1000 };
    world_init(&w, 4, &cfg);
    cl_send(w.cl, 0, 2, 0, 0, NULL, 1000);   /* 2 + 2 = 4 */
    cl_send(w.cl, 3, 1, 0, 0, NULL, 1000);   /* default: 0.5 + 1 */
    cl_send(w.cl, 1, 3, 0, 0, NULL, 1000);   /* class 2: 1 + 1 */
    cl_send(w.cl, 2, 0, 0, 0, NULL, 500);    /* class 1 backwards: 2 + 1 */
    world_run(&w, INFINITY);
    ck_assert_int_eq(w.n_msgs, 4);
    double want[4][3] = { { 3, 1, 1.5 }, { 1, 3, 2 }, { 2, 0, 3 }, { 0, 2, 4 } };
    for (int k = 0; k < 4; k++) {
        ck_assert_int_eq(w.msg_from[k], (int)want[k][0]);
        ck_assert_int_eq(w.msg_to[k], (int)want[k][1]);
        ck_assert_double_eq_tol(w.msg_time[k], want[k][2], 1e-12);
    }
    world_fini(&w);
}
END_TEST

static int inversions(const world *w)
{
    int inv = 0;
    for (int k = 1; k < w->n_msgs; k++)
        inv += w->msg_round[k] < w->msg_round[k - 1];
    return inv;
}

/* Exponential jitter of mean 1 s on 200 back-to-back messages: in order
 * unless reordering is asked for. */
START_TEST(test_jitter_keeps_link_order)
{
    for (int reorder = 0; reorder < 2; reorder++) {
        world w;
        memset(&w, 0, sizeof w);
        cl_link_class cls = { .latency_s = 0.1, .bandwidth_Bps = 1000,
                              .jitter = CL_JITTER_EXPONENTIAL, .jitter_a = 1.0 };
        cl_config cfg = { .classes = &cls, .n_classes = 1, .bandwidth_Bps = 1000,
                          .reorder = reorder, .seed = 5 };
        world_init(&w, 2, &cfg);
        for (int k = 0; k < 200; k++)
            cl_send(w.cl, 0, 1, 0, (uint64_t)k, NULL, 1);
        world_run(&w, INFINITY);
        ck_assert_int_eq(w.n_msgs, 200);
        if (reorder) {
            ck_assert_int_gt(inversions(&w), 10);
        } else {
            ck_assert_int_eq(inversions(&w), 0);
            /* the jitter did delay: the 64th arrival waited for the largest
             * of 64 Exp(1) jitters (about ln 64 = 4.2 s) */
            ck_assert(w.msg_time[63] > 2.0);
        }
        world_fini(&w);
    }
}
END_TEST

/* Loss 0.3 on 4000 messages: delivered within 3 standard errors of 2800;
 * every message is delivered or counted lost. */
START_TEST(test_loss_probability)
{
    world w;
    memset(&w, 0, sizeof w);
    cl_link_class cls = { .latency_s = 0.01, .bandwidth_Bps = 1e6, .loss = 0.3 };
    cl_config cfg = { .classes = &cls, .n_classes = 1, .bandwidth_Bps = 1e6, .seed = 8 };
    world_init(&w, 2, &cfg);
    const int N = 4000;
    for (int k = 0; k < N; k++)
        cl_send(w.cl, 0, 1, 0, (uint64_t)k, NULL, 10);
    world_run(&w, INFINITY);
    double se = sqrt(N * 0.3 * 0.7);
    ck_assert_msg(fabs(w.n_msgs - 0.7 * N) < 3 * se, "delivered %d", w.n_msgs);
    ck_assert_uint_eq(cl_stats(w.cl, 0)->msgs_lost + (uint64_t)w.n_msgs, (uint64_t)N);
    ck_assert_uint_eq(cl_in_flight(w.cl), 0);
    ck_assert_int_eq(inversions(&w), 0);
    world_fini(&w);
}
END_TEST

/* A message whose first bit leaves during an outage [1, 2) is lost. */
static void send_round(world *w, int node, uint32_t tag)
{
    cl_send(w->cl, node, 1, 0, tag, NULL, 10);
}

START_TEST(test_link_outage)
{
    for (int d = 0; d < 2; d++) {
        world w;
        memset(&w, 0, sizeof w);
        cl_window out = { 1.0, 2.0 };
        cl_link_class cls = { .latency_s = 0.1, .bandwidth_Bps = 1000, .outages = &out,
                              .n_outages = 1 };
        cl_config cfg = { .classes = &cls, .n_classes = 1, .bandwidth_Bps = 1000,
                          .discipline = d ? CL_NIC_FAIR : CL_NIC_FIFO };
        world_init(&w, 2, &cfg);
        w.on_timer = send_round;
        cl_set_timer(w.cl, 0, 0.5, 1);
        cl_set_timer(w.cl, 0, 1.5, 2);
        cl_set_timer(w.cl, 0, 2.5, 3);
        world_run(&w, INFINITY);
        ck_assert_int_eq(w.n_msgs, 2);
        ck_assert_uint_eq(w.msg_round[0], 1);
        ck_assert_uint_eq(w.msg_round[1], 3);
        ck_assert_uint_eq(cl_stats(w.cl, 0)->msgs_lost, 1);
        ck_assert_uint_eq(cl_in_flight(w.cl), 0);
        world_fini(&w);
    }
}
END_TEST

/* Water-filling: node 0's uplink (1000 B/s) carries 1000 B to node 1
 * over a 200 B/s link and 1000 B to node 2 over a 1000 B/s link.  Fair:
 * 200 and 800 B/s, node 2 done at 1.25 s, node 1 at 5 s.  FIFO: 5 s, 6 s. */
START_TEST(test_fair_water_filling)
{
    for (int d = 0; d < 2; d++) {
        world w;
        memset(&w, 0, sizeof w);
        cl_link_class cls[2] = { { .bandwidth_Bps = 1000 }, { .bandwidth_Bps = 200 } };
        cl_link_rule rule = { .from = (const int[]){ 0 }, .n_from = 1, .to = (const int[]){ 1 },
                              .n_to = 1, .cls = 1 };
        cl_config cfg = { .classes = cls, .n_classes = 2, .link_rules = &rule,
                          .n_link_rules = 1, .bandwidth_Bps = 1000,
                          .discipline = d ? CL_NIC_FAIR : CL_NIC_FIFO };
        world_init(&w, 3, &cfg);
        cl_send(w.cl, 0, 1, 0, 0, NULL, 1000);
        cl_send(w.cl, 0, 2, 0, 0, NULL, 1000);
        world_run(&w, INFINITY);
        ck_assert_int_eq(w.n_msgs, 2);
        if (d) {
            ck_assert_int_eq(w.msg_to[0], 2);
            ck_assert_double_eq_tol(w.msg_time[0], 1.25, 1e-9);
            ck_assert_double_eq_tol(w.msg_time[1], 5.0, 1e-9);
        } else {
            ck_assert_int_eq(w.msg_to[0], 1);
            ck_assert_double_eq_tol(w.msg_time[0], 5.0, 1e-9);
            ck_assert_double_eq_tol(w.msg_time[1], 6.0, 1e-9);
        }
        world_fini(&w);
    }
}
END_TEST

/* Fair sharing is between links: two messages on one link stay in order
 * (1000 B then 10 B at 1000 B/s: 1 s and 1.01 s), while a message on
 * another link shares the NIC with them. */
START_TEST(test_fair_fifo_per_link)
{
    world w;
    memset(&w, 0, sizeof w);
    cl_config cfg = { .bandwidth_Bps = 1000, .discipline = CL_NIC_FAIR };
    world_init(&w, 3, &cfg);
    cl_send(w.cl, 0, 1, 0, 1, NULL, 1000);
    cl_send(w.cl, 0, 1, 0, 2, NULL, 10);
    world_run(&w, INFINITY);
    ck_assert_int_eq(w.n_msgs, 2);
    ck_assert_uint_eq(w.msg_round[0], 1);
    ck_assert_double_eq_tol(w.msg_time[0], 1.0, 1e-9);
    ck_assert_double_eq_tol(w.msg_time[1], 1.01, 1e-9);
    world_fini(&w);
}
END_TEST

/* ---- retransmission ---- */

static void send_kb(world *w, int node, uint32_t tag)
{
    cl_send(w->cl, node, (int)tag, 0, 0, NULL, 1000);
}

/* Node 1 is down on [0.1, 2); node 0 sends it 1000 B at 0.15 over a 0.5 s,
 * 1000 B/s link with a 0.2 s retransmission timeout.  Attempt 1 occupies
 * the uplink on [0.15, 1.15) and is dropped when its first bit arrives at
 * 0.65; it is due again at max(0.65, 0.15 + 0.2) and queues behind itself:
 * [1.15, 2.15), dropped at 1.65; due at max(1.65, 1.15 + 0.4), sent on
 * [2.15, 3.15), first bit at 2.65 with node 1 back: delivered at 3.65.
 * With one retry allowed the second drop is final. */
START_TEST(test_retransmission_timeline)
{
    for (int max = 15; max >= 1; max -= 14) {
        world w;
        memset(&w, 0, sizeof w);
        cl_fault f = { .kind = CL_FAULT_SCHEDULE, .nodes = (const int[]){ 1 }, .n_nodes = 1,
                       .down_s = 0.1, .up_s = 2 };
        cl_config cfg = { .faults = &f, .n_faults = 1, .latency_s = 0.5,
                          .retransmit_timeout_s = 0.2, .retransmit_max = max };
        world_init(&w, 2, &cfg);
        w.on_timer = send_kb;
        cl_set_timer(w.cl, 0, 0.15, 1);
        world_run(&w, INFINITY);
        const cl_node_stats *st = cl_stats(w.cl, 0);
        if (max == 15) {
            ck_assert_int_eq(w.n_msgs, 1);
            ck_assert_double_eq_tol(w.msg_time[0], 3.65, 1e-12);
            ck_assert_uint_eq(st->msgs_sent, 3);
            ck_assert_uint_eq(st->msgs_retransmitted, 2);
            ck_assert_double_eq(st->bytes_sent, 3000);
            ck_assert_uint_eq(st->msgs_lost, 0);
            ck_assert_double_eq_tol(st->uplink_busy_s, 3.0, 1e-12);
        } else {
            ck_assert_int_eq(w.n_msgs, 0);
            ck_assert_uint_eq(st->msgs_sent, 2);
            ck_assert_uint_eq(st->msgs_retransmitted, 1);
            ck_assert_uint_eq(st->msgs_lost, 1);
        }
        ck_assert_uint_eq(cl_in_flight(w.cl), 0);
        ck_assert_uint_eq(cl_pending(w.cl), 0);
        world_fini(&w);
    }
}
END_TEST

/* A timeout that doubles: down for good, 3 retries of a 0-byte message
 * with 0.5 s latency and a 1 s timeout leave at 0, 1, 3 and 7 s; the last
 * drop, at 7.5 s, is final. */
START_TEST(test_retransmission_backoff)
{
    world w;
    memset(&w, 0, sizeof w);
    cl_fault f = { .kind = CL_FAULT_SCHEDULE, .nodes = (const int[]){ 1 }, .n_nodes = 1,
                   .down_s = 0, .up_s = INFINITY };
    cl_config cfg = { .faults = &f, .n_faults = 1, .latency_s = 0.5,
                      .retransmit_timeout_s = 1, .retransmit_max = 3 };
    world_init(&w, 2, &cfg);
    cl_send(w.cl, 0, 1, 0, 0, NULL, 0);
    world_run(&w, INFINITY);
    ck_assert_double_eq_tol(sim_engine_now(w.eng), 7.5, 1e-12);
    ck_assert_uint_eq(cl_stats(w.cl, 0)->msgs_sent, 4);
    ck_assert_uint_eq(cl_stats(w.cl, 0)->msgs_lost, 1);
    world_fini(&w);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("heterogeneity");
    TCase *tc = tcase_create("heterogeneity");
    tcase_add_test(tc, test_noise_means);
    tcase_add_test(tc, test_normal_floor);
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
    tcase_add_test(tc, test_link_classes);
    tcase_add_test(tc, test_jitter_keeps_link_order);
    tcase_add_test(tc, test_loss_probability);
    tcase_add_test(tc, test_link_outage);
    tcase_add_test(tc, test_fair_water_filling);
    tcase_add_test(tc, test_fair_fifo_per_link);
    tcase_add_test(tc, test_retransmission_timeline);
    tcase_add_test(tc, test_retransmission_backoff);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
