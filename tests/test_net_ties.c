/* test_net_ties.c -- exact outcomes of the network model that no other
 * suite pinned (mutants ps-order and fifo-lazy-split of tests/mutants.tsv),
 * through the cluster's public API only: several flows ending at the same
 * instant at a uniform NIC of the fair discipline (a parameter server's
 * downlink during a gather, its uplink during a broadcast) are delivered
 * in the order the general max-min solve delivers them, at closed-form
 * times, with every node's bytes, messages, uplink and network time; and
 * under FIFO, the network time of a receiver whose first bit arrived while
 * it was idle is counted from that instant, not from its last event.
 */
#include <check.h>
#include <math.h>
#include <string.h>

#include "cl_cluster.h"
#include "sim_engine.h"

enum { MAXN = 24, MAXM = 64 };

typedef struct world {
    sim_engine *eng;
    cl_cluster *cl;
    double step[MAXN];
    int n, n_msgs, from[MAXM], to[MAXM];
    double at[MAXM], bytes[MAXM];
    double send_bytes;   /* a timer: its node sends this many bytes to node tag */
} world;

static void cb_step(void *ctx, int node) { (void)ctx; (void)node; }

static void cb_msg(void *ctx, int node, const cl_msg *m)
{
    world *w = ctx;
    (void)node;
    ck_assert_int_lt(w->n_msgs, MAXM);
    w->from[w->n_msgs] = m->from;
    w->to[w->n_msgs] = m->to;
    w->at[w->n_msgs] = sim_engine_now(w->eng);
    w->bytes[w->n_msgs] = m->bytes;
    w->n_msgs++;
}

static void cb_timer(void *ctx, int node, uint32_t tag)
{
    world *w = ctx;
    cl_send(w->cl, node, (int)tag, 0, 0, NULL, w->send_bytes);
}

static int handle(void *ctx, const sim_event *ev)
{
    world *w = ctx;
    return cl_handle_event(w->cl, ev);
}

/* n nodes, every NIC and link at 1000 B/s. */
static void world_init(world *w, int n, cl_discipline d, double latency, int general_only)
{
    memset(w, 0, sizeof *w);
    w->n = n;
    w->eng = sim_engine_create((uint32_t)n + 1, 64);
    for (int i = 0; i < n; i++)
        w->step[i] = 1.0;
    cl_config cfg = { .n_nodes = n, .seed = 1, .step_time_s = w->step, .discipline = d,
                      .bandwidth_Bps = 1000, .latency_s = latency,
                      .fair_general_only = general_only };
    cl_callbacks cb = { .ctx = w, .on_step_done = cb_step, .on_message = cb_msg,
                        .on_timer = cb_timer };
    w->cl = cl_create(&cfg, w->eng, cb);
    ck_assert_ptr_nonnull(w->cl);
}

static void world_run(world *w)
{
    sim_engine_run(w->eng, INFINITY, handle, w);
    ck_assert_uint_eq(cl_in_flight(w->cl), 0);
    cl_stats_settle(w->cl);
}

static void world_fini(world *w)
{
    cl_destroy(w->cl);
    sim_engine_destroy(w->eng);
}

/* ---- fair discipline: ties at a uniform NIC ---- */

/* Hub 0 and workers 1..20, no latency.  gather: worker k sends b_k to the
 * hub at 0; broadcast: the hub sends b_k to worker k at 0; b_k = 1000 B
 * for k <= 5, 2000 B for the others.  The hub's NIC holds the 20 flows at
 * 1000 / 20 = 50 B/s each (made uniform after the solve of time 0): the
 * five short ones end together at 20 s; the 15 left, 1000 B each to go, at
 * 1000 / 15 B/s, end together at 35 s. */
static void star(world *w, int gather, int general_only)
{
    world_init(w, 21, CL_NIC_FAIR, 0.0, general_only);
    for (int k = 1; k <= 20; k++) {
        double b = k <= 5 ? 1000 : 2000;
        if (gather)
            cl_send(w->cl, k, 0, 0, 0, NULL, b);
        else
            cl_send(w->cl, 0, k, 0, 0, NULL, b);
    }
    world_run(w);
}

static void check_star(int gather)
{
    static world a, b;
    star(&a, gather, 0);
    star(&b, gather, 1);
    /* the shortcut was taken: every end placed in virtual time */
    cl_fair_work ka = cl_fair_work_done(a.cl), kb = cl_fair_work_done(b.cl);
    ck_assert_uint_eq(ka.ps_ends, 20);
    ck_assert_uint_eq(ka.ps_enters, 1);
    ck_assert_uint_eq(kb.ps_ends + kb.ps_starts + kb.ps_enters, 0);
    ck_assert_int_eq(a.n_msgs, 20);
    ck_assert_int_eq(b.n_msgs, 20);
    int seen[21] = { 0 };
    for (int m = 0; m < 20; m++) {
        int worker = gather ? a.from[m] : a.to[m];
        /* delivery order and times: the general solve's, message for message */
        ck_assert_msg(a.from[m] == b.from[m] && a.to[m] == b.to[m],
                      "delivery %d: %d -> %d, the general solve's %d -> %d", m, a.from[m],
                      a.to[m], b.from[m], b.to[m]);
        ck_assert_int_eq(gather ? a.to[m] : a.from[m], 0);
        ck_assert_int_ge(worker, 1);
        ck_assert_int_le(worker, 20);
        ck_assert_int_eq(seen[worker]++, 0);
        ck_assert_double_eq(a.bytes[m], worker <= 5 ? 1000 : 2000);
        ck_assert_double_eq_tol(a.at[m], worker <= 5 ? 20.0 : 35.0, 1e-9);
        ck_assert_double_eq_tol(a.at[m], b.at[m], 1e-9);
        /* the first five, which joined the NIC first, in joining order */
        if (m < 5)
            ck_assert_int_eq(worker, m + 1);
    }
    /* nodes.csv's fields */
    const cl_node_stats *hub = cl_stats(a.cl, 0);
    ck_assert_double_eq(gather ? hub->bytes_received : hub->bytes_sent, 35000);
    ck_assert_double_eq(gather ? hub->bytes_sent : hub->bytes_received, 0);
    ck_assert_uint_eq(gather ? hub->msgs_received : hub->msgs_sent, 20);
    ck_assert_double_eq_tol(hub->uplink_busy_s, gather ? 0 : 35.0, 1e-9);
    ck_assert_double_eq_tol(hub->network_s, 35.0, 1e-9);
    for (int k = 1; k <= 20; k++) {
        const cl_node_stats *s = cl_stats(a.cl, k), *g = cl_stats(b.cl, k);
        double t = k <= 5 ? 20.0 : 35.0;
        ck_assert_double_eq(gather ? s->bytes_sent : s->bytes_received, k <= 5 ? 1000 : 2000);
        ck_assert_uint_eq(gather ? s->msgs_sent : s->msgs_received, 1);
        ck_assert_double_eq_tol(s->uplink_busy_s, gather ? t : 0, 1e-9);
        ck_assert_double_eq_tol(s->network_s, t, 1e-9);
        ck_assert_double_eq_tol(s->network_s, g->network_s, 1e-9);
    }
    world_fini(&a);
    world_fini(&b);
}

START_TEST(test_gather_ties_in_solve_order) { check_star(1); }
END_TEST

START_TEST(test_broadcast_ties_in_solve_order) { check_star(0); }
END_TEST

/* ---- FIFO: the network time of an idle receiver ---- */

/* Node 0 sends 1000 B to node 1 at 0, latency 1 s: its uplink is busy 0 ..
 * 1 s; the first bit reaches node 1 at 1 s (cut-through), the last at 2 s,
 * when it is delivered.  Node 1, idle throughout, waited for the network
 * from 1 s to 2 s: network_s 1, not 2. */
START_TEST(test_fifo_idle_receiver_counts_from_first_bit)
{
    world w;
    world_init(&w, 2, CL_NIC_FIFO, 1.0, 0);
    cl_send(w.cl, 0, 1, 0, 0, NULL, 1000);
    world_run(&w);
    ck_assert_int_eq(w.n_msgs, 1);
    ck_assert_double_eq_tol(w.at[0], 2.0, 1e-12);
    const cl_node_stats *s0 = cl_stats(w.cl, 0), *s1 = cl_stats(w.cl, 1);
    ck_assert_double_eq_tol(s0->uplink_busy_s, 1.0, 1e-12);
    ck_assert_double_eq_tol(s0->network_s, 1.0, 1e-12);
    ck_assert_double_eq_tol(s1->network_s, 1.0, 1e-12);
    ck_assert_double_eq(s1->bytes_received, 1000);
    ck_assert_uint_eq(s1->msgs_received, 1);
    world_fini(&w);
}
END_TEST

/* Node 0 sends 1000 B to node 2 at 0 and node 1 (a timer) 1000 B to node
 * 2 at 0.5 s, latency 1 s: first bits reach node 2 at 1 and 1.5 s; its
 * downlink serves the first 1 .. 2 s, then the second 2 .. 3 s (its
 * sender's uplink was done at 1.5 s).  Node 2 waits for the network from
 * 1 to 3 s: 2 s.  Node 1's uplink is busy 0.5 .. 1.5 s, and it waits
 * for the network until its last bit left. */
START_TEST(test_fifo_two_arrivals_at_an_idle_receiver)
{
    world w;
    world_init(&w, 3, CL_NIC_FIFO, 1.0, 0);
    w.send_bytes = 1000;
    cl_send(w.cl, 0, 2, 0, 0, NULL, 1000);
    cl_set_timer(w.cl, 1, 0.5, 2);
    world_run(&w);
    ck_assert_int_eq(w.n_msgs, 2);
    ck_assert_int_eq(w.from[0], 0);
    ck_assert_double_eq_tol(w.at[0], 2.0, 1e-12);
    ck_assert_int_eq(w.from[1], 1);
    ck_assert_double_eq_tol(w.at[1], 3.0, 1e-12);
    ck_assert_double_eq_tol(cl_stats(w.cl, 2)->network_s, 2.0, 1e-12);
    ck_assert_double_eq_tol(cl_stats(w.cl, 1)->uplink_busy_s, 1.0, 1e-12);
    ck_assert_double_eq_tol(cl_stats(w.cl, 1)->network_s, 1.0, 1e-12);
    ck_assert_double_eq(cl_stats(w.cl, 2)->bytes_received, 2000);
    world_fini(&w);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("net_ties");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, test_gather_ties_in_solve_order);
    tcase_add_test(tc, test_broadcast_ties_in_solve_order);
    tcase_add_test(tc, test_fifo_idle_receiver_counts_from_first_bit);
    tcase_add_test(tc, test_fifo_two_arrivals_at_an_idle_receiver);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? 1 : 0;
}
