/* test_maxmin.c -- the fair network's max-min sharing over the route
 * (sender's uplink and receiver's downlink, cl_net_fair.c) against
 * hand-computed completion times: flows with different routes sharing a
 * downlink while their uplink gives the rest to another flow, a link cap,
 * a change that has to travel two resources away from the flow that
 * ended, and a star whose max-min times differ from sharing the uplink
 * and then the downlink one after the other (the model before it).  The
 * long-run robustness (10^9 transfer times) is in test_reliability2.
 */
#include <check.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cl_cluster.h"
#include "sim_engine.h"

#define MAXN 32
#define MAXM 1024

typedef struct world {
    sim_engine *eng;
    cl_cluster *cl;
    double step[MAXN];
    int n, n_msgs, msg_from[MAXM], msg_to[MAXM];
    double msg_time[MAXM];
    double bcast;   /* timers: 0 send 500 B to node 1, else these bytes to all */
    double idle;    /* a timer's query of its node's uplink (tag 3) */
} world;

static void cb_step(void *ctx, int node) { (void)ctx; (void)node; }

static void cb_msg(void *ctx, int node, const cl_msg *m)
{
    world *w = ctx;
    (void)node;
    if (w->n_msgs < MAXM) {
        w->msg_from[w->n_msgs] = m->from;
        w->msg_to[w->n_msgs] = m->to;
        w->msg_time[w->n_msgs] = sim_engine_now(w->eng);
    }
    w->n_msgs++;
}

/* A timer of node n sends 500 B to node 1 (test_join_midway), or with
 * tag 1 w->bcast bytes to node 0, or with tag 2 w->bcast bytes to every
 * other node, or with tag 3 records cl_uplink_idle_s, or with tag >= 16 50 * (tag & 0xfff) B to node (tag >> 12) - 1. */
static void timer_send(void *ctx, int node, uint32_t tag)
{
    world *w = ctx;
    if (tag == 0)
        cl_send(w->cl, node, 1, 0, 0, NULL, 500);
    else if (tag == 1)
        cl_send(w->cl, node, 0, 0, 0, NULL, w->bcast);
    else if (tag == 3)
        w->idle = cl_uplink_idle_s(w->cl, node);
    else if (tag >= 16)
        cl_send(w->cl, node, (int)(tag >> 12) - 1, 0, 0, NULL, 50.0 * (tag & 0xfff));
    else
        for (int k = 0; k < w->n; k++)
            if (k != node)
                cl_send(w->cl, node, k, 0, 0, NULL, w->bcast);
}

static int handle(void *ctx, const sim_event *ev)
{
    world *w = ctx;
    return cl_handle_event(w->cl, ev);
}

/* n fair nodes, latency lat, NIC capacities up/down (NULL: 1000 B/s),
 * links at 1e9 B/s unless classes say otherwise. */
static void world_init(world *w, int n, cl_config cfg)
{
    memset(w, 0, sizeof *w);
    w->n = n;
    w->eng = sim_engine_create((uint32_t)n + 1, 64);
    for (int i = 0; i < n; i++)
        w->step[i] = 1.0;
    cfg.n_nodes = n;
    cfg.seed = 1;
    cfg.step_time_s = w->step;
    cfg.discipline = CL_NIC_FAIR;
    if (cfg.bandwidth_Bps == 0)
        cfg.bandwidth_Bps = 1000;
    cl_callbacks cb = { .ctx = w, .on_step_done = cb_step, .on_message = cb_msg,
                        .on_timer = timer_send };
    w->cl = cl_create(&cfg, w->eng, cb);
    ck_assert_ptr_nonnull(w->cl);
}

static void world_run(world *w)
{
    sim_engine_run(w->eng, INFINITY, handle, w);
    ck_assert_uint_eq(cl_in_flight(w->cl), 0);
}

static void world_fini(world *w)
{
    cl_destroy(w->cl);
    sim_engine_destroy(w->eng);
}

/* When the message from -> to was delivered. */
static double when(const world *w, int from, int to)
{
    for (int k = 0; k < w->n_msgs && k < MAXM; k++)
        if (w->msg_from[k] == from && w->msg_to[k] == to)
            return w->msg_time[k];
    ck_abort_msg("no message %d -> %d", from, to);
    return NAN;
}

/* A: 0 -> 1, B: 0 -> 2, C: 3 -> 2, D: 4 -> 2, 1000 B each, every NIC at
 * 1000 B/s, latency 0.25 s.  Node 2's downlink is the bottleneck of B, C
 * and D (1000/3 each); node 0's uplink gives A the rest, 2000/3 (sharing
 * the uplink first would give A only 500: done at 2 s).  A ends at 1.5 s
 * with 500 B of each other flow done; they end together at 1.5 + 500 /
 * (1000/3) = 3 s. */
START_TEST(test_downlink_bottleneck_frees_uplink)
{
    world w;
    world_init(&w, 5, (cl_config){ .latency_s = 0.25, .bandwidth_Bps = 1000 });
    cl_send(w.cl, 0, 1, 0, 0, NULL, 1000);
    cl_send(w.cl, 0, 2, 0, 0, NULL, 1000);
    cl_send(w.cl, 3, 2, 0, 0, NULL, 1000);
    cl_send(w.cl, 4, 2, 0, 0, NULL, 1000);
    world_run(&w);
    ck_assert_int_eq(w.n_msgs, 4);
    ck_assert_double_eq_tol(when(&w, 0, 1), 1.75, 1e-12);
    ck_assert_double_eq_tol(when(&w, 0, 2), 3.25, 1e-12);
    ck_assert_double_eq_tol(when(&w, 3, 2), 3.25, 1e-12);
    ck_assert_double_eq_tol(when(&w, 4, 2), 3.25, 1e-12);
    ck_assert_double_eq_tol(cl_stats(w.cl, 0)->uplink_busy_s, 3.0, 1e-12);
    world_fini(&w);
}
END_TEST

/* A link cap and a downlink: E: 0 -> 1 (1000 B) over a 200 B/s link, F:
 * 0 -> 2 (1000 B), G: 3 -> 2 (500 B).  E is held at its cap, 200; F and G
 * share node 2's downlink, 500 each (node 0's uplink could give F 800).
 * G ends at 1 s; F, 500 B left, now gets node 0's uplink's 800: ends at
 * 1 + 500/800 = 1.625 s; E at 1000/200 = 5 s. */
START_TEST(test_cap_and_downlink)
{
    world w;
    cl_link_class cls[2] = { { .bandwidth_Bps = 1e9 }, { .bandwidth_Bps = 200 } };
    cl_link_rule rule = { .from = (const int[]){ 0 }, .n_from = 1, .to = (const int[]){ 1 },
                          .n_to = 1, .directed = 1, .cls = 1 };
    world_init(&w, 4, (cl_config){ .classes = cls, .n_classes = 2, .link_rules = &rule,
                                   .n_link_rules = 1 });
    cl_send(w.cl, 0, 1, 0, 0, NULL, 1000);
    cl_send(w.cl, 0, 2, 0, 0, NULL, 1000);
    cl_send(w.cl, 3, 2, 0, 0, NULL, 500);
    world_run(&w);
    ck_assert_int_eq(w.n_msgs, 3);
    ck_assert_double_eq_tol(when(&w, 3, 2), 1.0, 1e-12);
    ck_assert_double_eq_tol(when(&w, 0, 2), 1.625, 1e-12);
    ck_assert_double_eq_tol(when(&w, 0, 1), 5.0, 1e-12);
    world_fini(&w);
}
END_TEST

/* A change two resources away.  P: 0 -> 1 (250 B), Q: 2 -> 1 (1000 B),
 * R: 2 -> 3 (1000 B), S: 4 -> 3 (5000 B); node 2's uplink runs at
 * 1200 B/s, node 3's downlink at 2000, the rest at 1000.  At first node
 * 1's downlink holds P and Q at 500; R gets the 700 left of node 2's
 * uplink; S its own uplink's 1000.  P ends at 0.5 s; then node 2's uplink
 * binds Q and R at 600 each: R, 650 B left, ends at 0.5 + 650/600; Q, 100
 * B left then, at 1000 (node 1's downlink) 0.1 s later; S is never
 * touched: 5 s. */
START_TEST(test_change_travels)
{
    world w;
    double up[5] = { 1000, 1000, 1200, 1000, 1000 }, down[5] = { 1000, 1000, 1000, 2000, 1000 };
    world_init(&w, 5, (cl_config){ .bandwidth_Bps = 1e9, .up_Bps = up, .down_Bps = down });
    cl_send(w.cl, 0, 1, 0, 0, NULL, 250);
    cl_send(w.cl, 2, 1, 0, 0, NULL, 1000);
    cl_send(w.cl, 2, 3, 0, 0, NULL, 1000);
    cl_send(w.cl, 4, 3, 0, 0, NULL, 5000);
    world_run(&w);
    ck_assert_int_eq(w.n_msgs, 4);
    double r_end = 0.5 + 650.0 / 600.0;
    ck_assert_double_eq_tol(when(&w, 0, 1), 0.5, 1e-12);
    ck_assert_double_eq_tol(when(&w, 2, 3), r_end, 1e-12);
    ck_assert_double_eq_tol(when(&w, 2, 1), r_end + 0.1, 1e-12);
    ck_assert_double_eq_tol(when(&w, 4, 3), 5.0, 1e-12);
    world_fini(&w);
}
END_TEST

/* A star where max-min differs from sharing the uplink, then the
 * downlink: the server (node 0, 1000 B/s) sends 1000 B to each of three
 * workers, worker 1's downlink at 250 B/s.  Max-min: worker 1's flow is
 * held at 250 by its downlink, workers 2 and 3 share the other 750: done
 * at 1000/375 = 8/3 s, then worker 1's flow alone at 250: 4 s; latency
 * 0.1 s on top.  (Uplink first, then downlink: 1000/3 each, workers 2
 * and 3 done at 3 s.)  And the gather back: the same by symmetry. */
START_TEST(test_star_maxmin_not_sequential)
{
    world w;
    double up[4] = { 1000, 250, 1000, 1000 }, down[4] = { 1000, 250, 1000, 1000 };
    world_init(&w, 4, (cl_config){ .latency_s = 0.1, .bandwidth_Bps = 1e9, .up_Bps = up,
                                   .down_Bps = down });
    for (int k = 1; k <= 3; k++)
        cl_send(w.cl, 0, k, 0, 0, NULL, 1000);
    for (int k = 1; k <= 3; k++)
        cl_send(w.cl, k, 0, 0, 0, NULL, 1000);
    world_run(&w);
    ck_assert_int_eq(w.n_msgs, 6);
    for (int k = 2; k <= 3; k++) {
        ck_assert_double_eq_tol(when(&w, 0, k), 8.0 / 3 + 0.1, 1e-12);
        ck_assert_double_eq_tol(when(&w, k, 0), 8.0 / 3 + 0.1, 1e-12);
    }
    ck_assert_double_eq_tol(when(&w, 0, 1), 4.1, 1e-12);
    ck_assert_double_eq_tol(when(&w, 1, 0), 4.1, 1e-12);
    world_fini(&w);
}
END_TEST

/* A flow that starts while others run: 0 -> 1 (2000 B) alone at 1000 B/s
 * until 3 -> 1 (500 B) joins at 1 s (a timer); they share node 1's
 * downlink at 500: the joiner ends at 2 s, the first, 500 B left, at
 * 2.5 s.  Rates that do not change keep their bytes: a third flow 2 -> 0
 * elsewhere leaves the first one's end alone. */
START_TEST(test_join_midway)
{
    world w;
    world_init(&w, 4, (cl_config){ .bandwidth_Bps = 1000 });
    cl_send(w.cl, 0, 1, 0, 0, NULL, 2000);
    cl_send(w.cl, 2, 0, 0, 0, NULL, 700);
    cl_set_timer(w.cl, 3, 1.0, 0);
    world_run(&w);
    ck_assert_int_eq(w.n_msgs, 3);
    ck_assert_double_eq_tol(when(&w, 2, 0), 0.7, 1e-12);
    ck_assert_double_eq_tol(when(&w, 3, 1), 2.0, 1e-12);
    ck_assert_double_eq_tol(when(&w, 0, 1), 2.5, 1e-12);
    world_fini(&w);
}
END_TEST


/* ---- uniform resources (cl_net_ps.c): a hub whose flows are each alone
 * at their other NIC and held at cap / n, kept in virtual time ---- */

static void check_work(const world *w, uint64_t starts, uint64_t ends, uint64_t enters,
                       uint64_t exits)
{
    cl_fair_work k = cl_fair_work_done(w->cl);
    ck_assert_uint_eq(k.ps_starts, starts);
    ck_assert_uint_eq(k.ps_ends, ends);
    ck_assert_uint_eq(k.ps_enters, enters);
    ck_assert_uint_eq(k.ps_exits, exits);
}

/* Processor sharing in closed form: workers 1..20 send 1000 k B to node 0
 * at time 0, every NIC at 1000 B/s, no latency.  Node 0's downlink holds
 * the 20 flows at 50 B/s; the k-th smallest ends when 1000 more bytes
 * have passed each of the 21 - k left: t_k = t_(k-1) + (21 - k), so t_k
 * = 21 k - k (k + 1) / 2 (t_1 = 20, t_20 = 210).  The downlink is made
 * uniform after the solve of time 0 (20 flows) and every end is placed in
 * virtual time: 20 ends, no general solve after time 0. */
START_TEST(test_uniform_gather_sizes)
{
    world w;
    world_init(&w, 21, (cl_config){ .bandwidth_Bps = 1000 });
    for (int k = 1; k <= 20; k++)
        cl_send(w.cl, k, 0, 0, 0, NULL, 1000.0 * k);
    world_run(&w);
    ck_assert_int_eq(w.n_msgs, 20);
    for (int k = 1; k <= 20; k++)
        ck_assert_double_eq_tol(when(&w, k, 0), 21.0 * k - k * (k + 1) / 2.0, 1e-9);
    check_work(&w, 0, 20, 1, 0);
    ck_assert_uint_eq(cl_fair_work_done(w.cl).solves, 16);   /* 15 eager, 1 flush */
    world_fini(&w);
}
END_TEST

/* A flow joins a uniform hub: workers 1..20 send 1000 B to node 0 at 0
 * (50 B/s each); worker 21 sends 1000 B at 4 s (a timer), when each has
 * 800 B left.  21 flows at 1000/21: the 20 end at 4 + 800 * 21 / 1000 =
 * 20.8 s with the joiner's first 800 B done; its last 200 B alone take
 * 0.2 s: 21 s.  Latency 0.5 s on top.  One start and 21 ends in virtual
 * time. */
START_TEST(test_uniform_join)
{
    world w;
    world_init(&w, 22, (cl_config){ .bandwidth_Bps = 1000, .latency_s = 0.5 });
    w.bcast = 1000;
    for (int k = 1; k <= 20; k++)
        cl_send(w.cl, k, 0, 0, 0, NULL, 1000);
    cl_set_timer(w.cl, 21, 4.0, 1);
    world_run(&w);
    ck_assert_int_eq(w.n_msgs, 21);
    for (int k = 1; k <= 20; k++)
        ck_assert_double_eq_tol(when(&w, k, 0), 21.3, 1e-9);
    ck_assert_double_eq_tol(when(&w, 21, 0), 21.5, 1e-9);
    check_work(&w, 1, 21, 1, 0);
    world_fini(&w);
}
END_TEST

/* A joiner that its own uplink holds below the hub's share: as in
 * test_uniform_join, but worker 21's uplink runs at 10 B/s, below 1000 /
 * 21.  Max-min: it gets 10 for its whole transfer (ends at 4 + 100 =
 * 104 s), the 20 others (1000 - 10) / 20 = 49.5: they end at 4 + 800 /
 * 49.5 s.  The hub is made explicit at the join and stays so (its rates
 * differ). */
START_TEST(test_uniform_join_below_share)
{
    world w;
    double up[22], down[22];
    for (int k = 0; k < 22; k++)
        up[k] = down[k] = 1000;
    up[21] = 10;
    world_init(&w, 22, (cl_config){ .bandwidth_Bps = 1e9, .up_Bps = up, .down_Bps = down });
    w.bcast = 1000;
    for (int k = 1; k <= 20; k++)
        cl_send(w.cl, k, 0, 0, 0, NULL, 1000);
    cl_set_timer(w.cl, 21, 4.0, 1);
    world_run(&w);
    ck_assert_int_eq(w.n_msgs, 21);
    for (int k = 1; k <= 20; k++)
        ck_assert_double_eq_tol(when(&w, k, 0), 4 + 800 / 49.5, 1e-9);
    ck_assert_double_eq_tol(when(&w, 21, 0), 104.0, 1e-9);
    check_work(&w, 0, 0, 1, 1);
    world_fini(&w);
}
END_TEST

/* An end that would raise the share past a flow's limit: workers 1..15
 * send 1000 B, workers 16..20 100 B, worker 21 (uplink at 60 B/s) 1000
 * B, all to node 0 at 0.  21 flows at 1000/21 (below 60): uniform.  The
 * five short ones end at 100 * 21 / 1000 = 2.1 s; after four of them the
 * share is 1000/17 (58.8, below 60), the fifth would make it 62.5 >
 * 60: the hub is made explicit and solved: worker 21 at 60 (its 900 B
 * left end at 2.1 + 15 = 17.1 s), the 15 others at 940/15 (their 900 B
 * at 2.1 + 900 * 15 / 940 s). */
START_TEST(test_uniform_end_past_limit)
{
    world w;
    double up[22], down[22];
    for (int k = 0; k < 22; k++)
        up[k] = down[k] = 1000;
    up[21] = 60;
    world_init(&w, 22, (cl_config){ .bandwidth_Bps = 1e9, .up_Bps = up, .down_Bps = down });
    for (int k = 1; k <= 21; k++)
        cl_send(w.cl, k, 0, 0, 0, NULL, k >= 16 && k <= 20 ? 100 : 1000);
    world_run(&w);
    ck_assert_int_eq(w.n_msgs, 21);
    for (int k = 16; k <= 20; k++)
        ck_assert_double_eq_tol(when(&w, k, 0), 2.1, 1e-9);
    for (int k = 1; k <= 15; k++)
        ck_assert_double_eq_tol(when(&w, k, 0), 2.1 + 900.0 * 15 / 940, 1e-9);
    ck_assert_double_eq_tol(when(&w, 21, 0), 17.1, 1e-9);
    check_work(&w, 0, 4, 1, 1);
    world_fini(&w);
}
END_TEST

/* A broadcast into a uniform uplink: node 0 sends 1000 B to each of 20
 * workers at 0 (solved, its uplink made uniform: 50 B/s each, all done at
 * 20 s) and again at 30 s (a timer): the second round's 20 starts and 20
 * ends are all in virtual time, done at 50 s, delivered in the order of
 * the first round.  At 35 s the uplink's idle time (a lower bound with
 * several flows: their bytes left at the whole capacity) is 20 * 750 /
 * 1000 = 15 s. */
START_TEST(test_uniform_broadcast)
{
    world w;
    world_init(&w, 21, (cl_config){ .bandwidth_Bps = 1000 });
    w.bcast = 1000;
    for (int k = 1; k <= 20; k++)
        cl_send(w.cl, 0, k, 0, 0, NULL, 1000);
    cl_set_timer(w.cl, 0, 30.0, 2);
    cl_set_timer(w.cl, 0, 35.0, 3);
    world_run(&w);
    ck_assert_int_eq(w.n_msgs, 40);
    ck_assert_double_eq_tol(w.idle, 15.0, 1e-9);
    for (int k = 0; k < 40; k++) {
        ck_assert_double_eq_tol(w.msg_time[k], k < 20 ? 20.0 : 50.0, 1e-9);
        ck_assert_int_eq(w.msg_to[k], w.msg_to[k % 20]);
    }
    check_work(&w, 20, 40, 1, 0);
    world_fini(&w);
}
END_TEST

/* A join whose other NIC is busy is not placed in virtual time: workers
 * 1..20 send 1000 B to node 0 at 0 (uniform, 50 B/s each) and node 21
 * sends 10000 B to node 22 (alone: 1000 B/s); at 4 s node 21 also sends
 * 1000 B to node 0.  Node 21's uplink then carries both: the new flow
 * gets the hub's 1000/21, the other the rest, 1000 - 1000/21, so its 6000
 * B left end at 4 + 6000 / (20000/21) = 10.3 s; the hub's flows end as in
 * test_uniform_join.  Latency 0.5 s. */
START_TEST(test_uniform_join_other_busy)
{
    world w;
    world_init(&w, 23, (cl_config){ .bandwidth_Bps = 1000, .latency_s = 0.5 });
    w.bcast = 1000;
    for (int k = 1; k <= 20; k++)
        cl_send(w.cl, k, 0, 0, 0, NULL, 1000);
    cl_send(w.cl, 21, 22, 0, 0, NULL, 10000);
    cl_set_timer(w.cl, 21, 4.0, 1);
    world_run(&w);
    ck_assert_int_eq(w.n_msgs, 22);
    ck_assert_double_eq_tol(when(&w, 21, 22), 10.8, 1e-9);
    for (int k = 1; k <= 20; k++)
        ck_assert_double_eq_tol(when(&w, k, 0), 21.3, 1e-9);
    ck_assert_double_eq_tol(when(&w, 21, 0), 21.5, 1e-9);
    world_fini(&w);
}
END_TEST

/* A flow of a uniform hub stops being alone at its uplink: workers 1..20
 * send 1000 B to node 0 at 0 (50 B/s each; worker 1's uplink runs at 60
 * B/s, above the share); at 4 s (800 B left each) worker 1 also sends
 * 10000 B to node 21.  Worker 1's uplink now binds its two flows at 30
 * each; the hub gives the 19 others (1000 - 30) / 19: they end at 4 + 800
 * * 19 / 970 s; worker 1's flow to the hub keeps 30 to the end (4 + 800 /
 * 30 s), and then the flow to node 21, 800 B done, has the uplink alone:
 * its 9200 B left take 9200 / 60 s more. */
START_TEST(test_uniform_flow_not_alone)
{
    world w;
    double up[22], down[22];
    for (int k = 0; k < 22; k++)
        up[k] = down[k] = 1000;
    up[1] = 60;
    world_init(&w, 22, (cl_config){ .bandwidth_Bps = 1e9, .up_Bps = up, .down_Bps = down });
    w.bcast = 1000;
    for (int k = 1; k <= 20; k++)
        cl_send(w.cl, k, 0, 0, 0, NULL, 1000);
    cl_set_timer(w.cl, 1, 4.0, (21 + 1) << 12 | 200);   /* 200 * 50 B to node 21 */
    world_run(&w);
    ck_assert_int_eq(w.n_msgs, 21);
    for (int k = 2; k <= 20; k++)
        ck_assert_double_eq_tol(when(&w, k, 0), 4 + 800.0 * 19 / 970, 1e-9);
    ck_assert_double_eq_tol(when(&w, 1, 0), 4 + 800.0 / 30, 1e-9);
    ck_assert_double_eq_tol(when(&w, 1, 21), 4 + 800.0 / 30 + 9200.0 / 60, 1e-9);
    check_work(&w, 0, 0, 1, 1);
    world_fini(&w);
}
END_TEST

/* Random stars, with and without uniform resources (cl_config's
 * fair_general_only): 24 nodes, hub 0, NICs at 1000 B/s but for a few
 * slow uplinks or downlinks (20-80 B/s), links at 1e9 or 80 B/s (then a
 * link's cap and the hub's share cross as flows come and go), 0.01 s
 * latency; 200 messages of 50-5000 B sent by timers at multiples of 0.01
 * s over 40 s, a fifth of them in two bursts (t = 5 s and 10 s): 30% from
 * the hub, 60% to it, 10% between workers (which makes a hub flow's other
 * NIC shared).  Every delivery time agrees to 1e-9 (relative) with the
 * general solve's, message for message; the shortcut is taken, and left,
 * in these runs. */
static uint64_t lcg(uint64_t *x)
{
    *x = *x * 6364136223846793005ull + 1442695040888963407ull;
    return *x >> 33;
}

static void random_traffic(world *w, uint64_t seed, int general_only, int heap_only, int mesh)
{
    enum { N = 24 };
    static double up[N], down[N];
    uint64_t x = seed;
    for (int k = 0; k < N; k++) {
        up[k] = down[k] = 1000;
        uint64_t r = lcg(&x) % 8;
        if (k > 0 && r == 0)
            up[k] = 20 + (double)(lcg(&x) % 61);
        else if (k > 0 && r == 1)
            down[k] = 20 + (double)(lcg(&x) % 61);
    }
    double bw = lcg(&x) % 2 ? 1e9 : 80;
    world_init(w, N, (cl_config){ .bandwidth_Bps = bw, .up_Bps = up, .down_Bps = down,
                                  .latency_s = 0.01, .fair_general_only = general_only,
                                  .fair_heap_only = heap_only });
    for (int m = 0; m < 200; m++) {
        uint64_t r = mesh ? 9 : lcg(&x) % 10, b = 1 + lcg(&x) % 100;
        int from, to;
        if (r < 3) {
            from = 0;
            to = 1 + (int)(lcg(&x) % (N - 1));
        } else if (r < 9) {
            from = 1 + (int)(lcg(&x) % (N - 1));
            to = 0;
        } else {
            from = (mesh ? 0 : 1) + (int)(lcg(&x) % (N - !mesh));
            to = (mesh ? 0 : 1) + (int)(lcg(&x) % (N - 1 - !mesh));
            if (to >= from)
                to++;
        }
        uint64_t when_r = lcg(&x) % 10;
        double at = when_r == 0 ? 5.0 : when_r == 1 ? 10.0 : (double)(lcg(&x) % 4000) / 100;
        cl_set_timer(w->cl, from, at, (uint32_t)(to + 1) << 12 | (uint32_t)b);
    }
    world_run(w);
    ck_assert_int_eq(w->n_msgs, 200);
}

static void random_star(world *w, uint64_t seed, int general_only)
{
    random_traffic(w, seed, general_only, 0, 0);
}

static int by_pair_time(const void *a, const void *b)
{
    const double *x = a, *y = b;
    for (int i = 0; i < 3; i++)
        if (x[i] != y[i])
            return x[i] < y[i] ? -1 : 1;
    return 0;
}

START_TEST(test_uniform_random_stars)
{
    static world a, b;
    static double ra[200][3], rb[200][3];
    cl_fair_work sum = { 0 };
    for (uint64_t seed = 1; seed <= 40; seed++) {
        random_star(&a, seed, 0);
        random_star(&b, seed, 1);
        cl_fair_work k = cl_fair_work_done(a.cl), g = cl_fair_work_done(b.cl);
        ck_assert_uint_eq(g.ps_starts + g.ps_ends + g.ps_enters, 0);
        sum.ps_starts += k.ps_starts;
        sum.ps_ends += k.ps_ends;
        sum.ps_exits += k.ps_exits;
        for (int m = 0; m < 200; m++) {
            ra[m][0] = a.msg_from[m];
            ra[m][1] = a.msg_to[m];
            ra[m][2] = a.msg_time[m];
            rb[m][0] = b.msg_from[m];
            rb[m][1] = b.msg_to[m];
            rb[m][2] = b.msg_time[m];
        }
        qsort(ra, 200, sizeof ra[0], by_pair_time);
        qsort(rb, 200, sizeof rb[0], by_pair_time);
        for (int m = 0; m < 200; m++) {
            ck_assert(ra[m][0] == rb[m][0] && ra[m][1] == rb[m][1]);
            ck_assert_msg(fabs(ra[m][2] - rb[m][2]) <= 1e-9 * rb[m][2],
                          "seed %d: %g -> %g at %.17g, general solve %.17g", (int)seed,
                          ra[m][0], ra[m][1], ra[m][2], rb[m][2]);
        }
        world_fini(&a);
        world_fini(&b);
    }
    ck_assert_uint_gt(sum.ps_starts, 200);   /* 312, 413 and 17 here */
    ck_assert_uint_gt(sum.ps_ends, 200);
    ck_assert_uint_gt(sum.ps_exits, 10);
}
END_TEST

/* The general solve fills a small region (at most 12 resources and caps)
 * by scanning it for the least share, a larger one through a heap; both
 * take the same minimum at every step, so the rates are the same bits.
 * Random stars (regions of the hub's flows, through the heap, and small
 * ones) and random meshes (every node sends to random others: small
 * regions, chains of shared NICs) without uniform resources, filled as
 * usual and through the heap alone (cl_config's fair_heap_only): every
 * message is delivered at the same instant, in the same order. */
START_TEST(test_scan_equals_heap)
{
    static world a, b;
    for (uint64_t seed = 1; seed <= 40; seed++)
        for (int mesh = 0; mesh <= 1; mesh++) {
            random_traffic(&a, seed, 1, 0, mesh);
            random_traffic(&b, seed, 1, 1, mesh);
            for (int m = 0; m < 200; m++) {
                ck_assert_int_eq(a.msg_from[m], b.msg_from[m]);
                ck_assert_int_eq(a.msg_to[m], b.msg_to[m]);
                ck_assert_msg(a.msg_time[m] == b.msg_time[m],
                              "seed %d mesh %d message %d: %.17g, heap %.17g", (int)seed, mesh,
                              m, a.msg_time[m], b.msg_time[m]);
            }
            world_fini(&a);
            world_fini(&b);
        }
}
END_TEST

int main(void)
{
    Suite *s = suite_create("maxmin");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, test_downlink_bottleneck_frees_uplink);
    tcase_add_test(tc, test_cap_and_downlink);
    tcase_add_test(tc, test_change_travels);
    tcase_add_test(tc, test_star_maxmin_not_sequential);
    tcase_add_test(tc, test_join_midway);
    tcase_add_test(tc, test_uniform_gather_sizes);
    tcase_add_test(tc, test_uniform_join);
    tcase_add_test(tc, test_uniform_join_below_share);
    tcase_add_test(tc, test_uniform_end_past_limit);
    tcase_add_test(tc, test_uniform_broadcast);
    tcase_add_test(tc, test_uniform_join_other_busy);
    tcase_add_test(tc, test_uniform_flow_not_alone);
    tcase_add_test(tc, test_uniform_random_stars);
    tcase_add_test(tc, test_scan_equals_heap);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? 1 : 0;
}
