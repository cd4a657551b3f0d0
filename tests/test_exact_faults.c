/* test_exact_faults.c -- faults, random streams and the network against
 * closed forms: availability MTTR / (MTBF + MTTR), exponential episodes,
 * rejoin from a live neighbour, independent streams (loss, jitter, noise,
 * faults), the retransmission schedule, no timers on a down node (issue
 * 14; each test names the mutants of tests/mutants.tsv it kills).
 */
#include "exact_util.h"

/* ---- faults ---- */

/* Exponential faults of MTBF 1 s and MTTR 1/3 s: each node is down a
 * fraction MTTR / (MTBF + MTTR) = 1/4 of the time; the mean over 16 nodes
 * lies within 3 standard errors of it (flt-mtbf-mttr). */
START_TEST(test_availability_fraction)
{
    char dir[] = "/tmp/dtsim-test-exact-XXXXXX", path[600];
    ck_assert_ptr_nonnull(mkdtemp(dir));
    const char *json =
        "{\"seed\": 9, \"nodes\": 16, \"compute\": {\"step_time_s\": 0.1},"
        " \"topology\": {\"kind\": \"ring\"},"
        " \"faults\": {\"events\": [{\"kind\": \"exponential\", \"mtbf_s\": 1, \"mttr_s\": 0.333333333333}]},"
        " \"algorithm\": {\"name\": \"gossip\", \"period_s\": 0.5}, \"stop\": {\"time_s\": 300}}";
    run_options opt = { .out_dir = dir };
    run_result res;
    run_json(json, &opt, &res);
    ck_assert_int_eq(res.status, RUN_OK);
    snprintf(path, sizeof path, "%s/nodes.csv", dir);
    FILE *f = fopen(path, "r");
    ck_assert_ptr_nonnull(f);
    char line[1024];
    ck_assert_ptr_nonnull(fgets(line, sizeof line, f));
    /* the down_s column by name */
    int col = -1, c = 0;
    for (char *t = strtok(line, ",\n"); t; t = strtok(NULL, ",\n"), c++)
        if (strcmp(t, "down_s") == 0)
            col = c;
    ck_assert_int_ge(col, 0);
    double sum = 0, sq = 0;
    int n = 0;
    while (fgets(line, sizeof line, f)) {
        c = 0;
        for (char *t = strtok(line, ",\n"); t; t = strtok(NULL, ",\n"), c++)
            if (c == col) {
                double frac = atof(t) / res.sim_time_s;
                sum += frac;
                sq += frac * frac;
            }
        n++;
    }
    fclose(f);
    ck_assert_int_eq(n, 16);
    double mean = sum / n, sd = sqrt((sq - n * mean * mean) / (n - 1)), se = sd / sqrt(n);
    ck_assert_msg(fabs(mean - 0.25) < 3 * se, "down fraction %.4f, SE %.4f", mean, se);
    ck_assert_msg(se < 0.02, "SE %.4f too large to tell", se);
    const char *files[] = { "metrics.csv", "nodes.csv", "run.json" };
    for (int k = 0; k < 3; k++) {
        snprintf(path, sizeof path, "%s/%s", dir, files[k]);
        unlink(path);
    }
    ck_assert_int_eq(rmdir(dir), 0);
}
END_TEST

/* The same faults on 64 nodes for 10 s, episode by episode (the "down"
 * rows of trace.csv): the first failure comes after Exp(MTBF), mean 1 s,
 * and a repair takes Exp(MTTR), mean 1/3 s; each mean within 3 standard
 * errors (flt-first, flt-mtbf-mttr). */
START_TEST(test_fault_episodes)
{
    char dir[] = "/tmp/dtsim-test-exact-XXXXXX", path[600];
    ck_assert_ptr_nonnull(mkdtemp(dir));
    const char *json =
        "{\"seed\": 11, \"nodes\": 64, \"compute\": {\"step_time_s\": 0.1},"
        " \"topology\": {\"kind\": \"ring\"},"
        " \"faults\": {\"events\": [{\"kind\": \"exponential\", \"mtbf_s\": 1, \"mttr_s\": 0.333333333333}]},"
        " \"algorithm\": {\"name\": \"gossip\", \"period_s\": 0.5}, \"stop\": {\"time_s\": 10},"
        " \"output\": {\"trace\": true}}";
    run_options opt = { .out_dir = dir };
    run_result res;
    run_json(json, &opt, &res);
    snprintf(path, sizeof path, "%s/trace.csv", dir);
    static trace_row r[200000];
    int n = read_trace(path, r, 200000);
    double first[64];
    for (int i = 0; i < 64; i++)
        first[i] = -1;
    double s1 = 0, q1 = 0, s2 = 0, q2 = 0;
    int n2 = 0;
    for (int i = 0; i < n; i++) {
        if (strcmp(r[i].kind, "down") != 0)
            continue;
        ck_assert(r[i].node >= 0 && r[i].node < 64);
        if (first[r[i].node] < 0 || r[i].start < first[r[i].node])
            first[r[i].node] = r[i].start;
        double d = r[i].end - r[i].start;
        s2 += d;
        q2 += d * d;
        n2++;
    }
    for (int i = 0; i < 64; i++) {
        ck_assert_msg(first[i] >= 0, "node %d never failed", i);
        s1 += first[i];
        q1 += first[i] * first[i];
    }
    double m1 = s1 / 64, se1 = sqrt((q1 / 64 - m1 * m1) / 63);
    double m2 = s2 / n2, se2 = sqrt((q2 / n2 - m2 * m2) / (n2 - 1));
    ck_assert_msg(fabs(m1 - 1.0) < 3 * se1, "first failure after %.4f s on average, SE %.4f", m1, se1);
    ck_assert_msg(fabs(m2 - 1.0 / 3) < 3 * se2, "repairs last %.4f s on average, SE %.4f (%d)", m2, se2, n2);
    ck_assert_int_gt(n2, 200);
    rm_run_dir(dir);
}
END_TEST

/* Node 1 of a ring of 4 (neighbours 0 and 2) is down on [0.05, 0.2); node
 * 0 on [0.1, 0.3).  With lr 0 and gossip that never sends, models change
 * only by rejoining: node 1 comes back at 0.2 while node 0 is down, so it
 * takes node 2's model; node 0 comes back at 0.3 and takes node 1's, which
 * is node 2's.  (flt-rejoin-down, flt-rejoin-keep) */
START_TEST(test_rejoin_takes_a_live_neighbour)
{
    run_result res;
    run_wrapped(BASE(4, "") " \"topology\": {\"kind\": \"ring\"},"
                " \"faults\": {\"rejoin\": \"neighbour\", \"events\": ["
                "  {\"kind\": \"schedule\", \"nodes\": [1], \"down_s\": 0.05, \"up_s\": 0.2},"
                "  {\"kind\": \"schedule\", \"nodes\": [0], \"down_s\": 0.1, \"up_s\": 0.3}]},"
                " \"algorithm\": {\"name\": \"gossip\", \"lr\": 0.1, \"period_s\": 100},"
                " \"stop\": {\"time_s\": 0.5}}", wrap_p("gossip", G_ZERO, 0.1, "period_s=100"), spread_init, &res);
    for (size_t k = 0; k < cap_P; k++) {
        ck_assert_double_eq(cap_x[1][k], spread_of(2, k));
        ck_assert_double_eq(cap_x[0][k], spread_of(2, k));
        ck_assert_double_eq(cap_x[2][k], spread_of(2, k));
        ck_assert_double_eq(cap_x[3][k], spread_of(3, k));
    }
}
END_TEST

/* ---- random streams are independent (rng-loss-jitter, rng-derive) ---- */

/* Two nodes gossip every 0.1 s over a link of 1 ms latency and uniform
 * jitter on [0, 50 ms).  Message k from node 0 leaves at 0.1 k and
 * arrives at 0.1 k + 0.001 + jitter_k.  Turning loss on (1/2) must leave
 * every delivered message's jitter as it was, and which messages are lost
 * must not depend on their jitter: some delivered message has a jitter
 * below the median.  Jitter and loss drawn from one seed fail the second;
 * a shared stream fails the first.  No retransmission: a retransmitted
 * message is a new transmission with draws of its own. */
START_TEST(test_loss_leaves_jitter_alone)
{
    static trace_row a[4096], b[4096];
    int na = 0, nb = 0;
    for (int with = 0; with < 2; with++) {
        char dir[] = "/tmp/dtsim-test-exact-XXXXXX", json[2048], path[600];
        ck_assert_ptr_nonnull(mkdtemp(dir));
        snprintf(json, sizeof json,
            "{\"seed\": 3, \"nodes\": 2, \"compute\": {\"step_time_s\": 0.05},"
            " \"topology\": {\"kind\": \"complete\"},"
            " \"network\": {\"latency_s\": 0.001, \"bandwidth_Bps\": 1e9,"
            "   \"retransmit\": false,"
            "   \"jitter\": {\"dist\": \"uniform\", \"low_s\": 0, \"high_s\": 0.05}%s},"
            " \"algorithm\": {\"name\": \"gossip\", \"period_s\": 0.1},"
            " \"stop\": {\"time_s\": 20.05}, \"output\": {\"trace\": true}}",
            with ? ", \"loss\": 0.5" : "");
        run_options opt = { .out_dir = dir };
        run_result res;
        run_json(json, &opt, &res);
        snprintf(path, sizeof path, "%s/trace.csv", dir);
        if (with)
            nb = read_trace(path, b, 4096);
        else
            na = read_trace(path, a, 4096);
        rm_run_dir(dir);
    }
    /* jitter of node 0's k-th message, seen at node 1 */
    double ja[256], jb[256];
    for (int k = 0; k < 256; k++)
        ja[k] = jb[k] = -1;
    for (int pass = 0; pass < 2; pass++) {
        trace_row *r = pass ? b : a;
        int n = pass ? nb : na;
        double *j = pass ? jb : ja;
        for (int i = 0; i < n; i++)
            if (strcmp(r[i].kind, "recv") == 0 && r[i].node == 1 && r[i].peer == 0) {
                int k = (int)floor(r[i].start / 0.1);
                ck_assert_int_lt(k, 256);
                j[k] = r[i].start - 0.1 * k - 0.001;
            }
    }
    int delivered = 0, low = 0, all = 0;
    for (int k = 1; k < 200; k++) {
        ck_assert_msg(ja[k] >= 0, "message %d not delivered without loss", k);
        all++;
        if (jb[k] < 0)
            continue;
        delivered++;
        ck_assert_msg(fabs(jb[k] - ja[k]) < 1e-9, "message %d: jitter %.9g with loss, %.9g without", k,
                      jb[k], ja[k]);
        if (jb[k] < 0.025)
            low++;
    }
    ck_assert_msg(delivered > all / 4 && delivered < 3 * all / 4, "%d of %d delivered", delivered, all);
    ck_assert_msg(low > delivered / 4, "only %d of %d delivered messages had a jitter below the median",
                  low, delivered);
}
END_TEST

/* Compute noise, data sampling and faults: turning faults on for node 3
 * only leaves the step times of nodes 0-2 as they were (compute_s of
 * nodes.csv); turning jitter on leaves every step time as it was. */
static void node_compute(const char *extra, double *out, int n)
{
    char dir[] = "/tmp/dtsim-test-exact-XXXXXX", json[2048], path[600], line[1024];
    ck_assert_ptr_nonnull(mkdtemp(dir));
    snprintf(json, sizeof json,
        "{\"seed\": 4, \"nodes\": %d, \"compute\": {\"step_time_s\": 0.01,"
        "   \"noise\": {\"dist\": \"lognormal\", \"sigma\": 0.5}},"
        " \"topology\": {\"kind\": \"ring\"}, %s"
        " \"algorithm\": {\"name\": \"gossip\", \"period_s\": 0.05}, \"stop\": {\"time_s\": 2},"
        " \"output\": {\"trace\": true}}", n, extra);
    run_options opt = { .out_dir = dir };
    run_result res;
    run_json(json, &opt, &res);
    /* the first 50 step durations of each node from trace.csv */
    snprintf(path, sizeof path, "%s/trace.csv", dir);
    static trace_row r[65536];
    int m = read_trace(path, r, 65536), cnt[8] = { 0 };
    for (int i = 0; i < n * 50; i++)
        out[i] = -1;
    for (int i = 0; i < m; i++)
        if (strcmp(r[i].kind, "step") == 0 && cnt[r[i].node] < 50)
            out[r[i].node * 50 + cnt[r[i].node]++] = r[i].end - r[i].start;
    (void)line;
    rm_run_dir(dir);
}

START_TEST(test_streams_independent)
{
    static double base[200], jit[200], flt[200];
    node_compute("", base, 4);
    node_compute("\"network\": {\"jitter\": {\"dist\": \"exponential\", \"mean_s\": 0.01}, \"loss\": 0.2},",
                 jit, 4);
    node_compute("\"faults\": {\"events\": [{\"kind\": \"exponential\", \"nodes\": [3], \"mtbf_s\": 0.2,"
                 " \"mttr_s\": 0.05}]},", flt, 4);
    for (int i = 0; i < 200; i++) {
        ck_assert_msg(base[i] > 0, "node %d step %d missing", i / 50, i % 50);
        ck_assert_msg(jit[i] == base[i], "jitter/loss changed node %d step %d: %.17g vs %.17g", i / 50,
                      i % 50, jit[i], base[i]);
        if (i < 150)
            ck_assert_msg(flt[i] == base[i], "faults changed node %d step %d", i / 50, i % 50);
    }
}
END_TEST

/* ---- retransmission (rtx-*) ---- */


/* Node 0 sends one message at t = 0 over a link that loses everything,
 * (loss 1 - 1e-7) with retransmission after 0.1 s doubling, at most 3 retries: attempts
 * leave at 0, 0.1, 0.1 + 0.2, 0.3 + 0.4 (each timer counts from the
 * attempt's send), then the message is lost for good. */
static void one_start(alg_ctx *c, void *s, int n)
{
    (void)s;
    if (n == 0)
        alg_send(c, 0, 1, 1, 0, NULL, 1000);
    alg_start_step(c, n);   /* training goes on: the run is not frozen */
}
static void one_step(alg_ctx *c, void *s, int n, const double *g)
{
    (void)s;
    (void)g;
    alg_start_step(c, n);
}
static void one_msg(alg_ctx *c, void *s, int n, const cl_msg *m) { (void)c; (void)s; (void)n; (void)m; }
static const alg_type one_message = {
    .name = "one-message", .on_start = one_start, .on_step_done = one_step, .on_message = one_msg,
};

/* ---- jitter is the sender's stream (net-jitter-link) ---- */

static int jit_peer;
static double jit_at;
static void jit_start(alg_ctx *c, void *s, int n)
{
    (void)s;
    if (n == 0)
        alg_send(c, 0, jit_peer, 1, 0, NULL, 1000);
    alg_start_step(c, n);
}
static void jit_msg(alg_ctx *c, void *s, int n, const cl_msg *m)
{
    (void)s;
    (void)m;
    ck_assert_int_eq(n, jit_peer);
    jit_at = alg_now(c);
}
static const alg_type jitter_one = {
    .name = "jitter-one", .on_start = jit_start, .on_step_done = one_step, .on_message = jit_msg,
};

static double jittered_arrival(int peer, const char *jitter)
{
    char json[1024];
    snprintf(json, sizeof json,
        "{\"nodes\": 3, \"topology\": {\"kind\": \"complete\"},"
        " \"network\": {\"latency_s\": 0.001, \"bandwidth_Bps\": 1e6, \"jitter\": %s},"
        " \"compute\": {\"step_time_s\": 0.05}, \"algorithm\": {\"name\": \"dpsgd\"},"
        " \"stop\": {\"time_s\": 0.5}}", jitter);
    jit_peer = peer;
    jit_at = -1;
    run_options opt = { .algorithm = &jitter_one };
    run_result res;
    run_json(json, &opt, &res);
    ck_assert_double_ge(jit_at, 0);
    return jit_at;
}

/* One message from node 0 on identical links: to node 1 or to node 2 it
 * draws the same jitter (the first draw of node 0's link stream), and that
 * jitter is not zero. */
START_TEST(test_jitter_is_the_senders)
{
    const char *u = "{\"dist\": \"uniform\", \"low_s\": 0, \"high_s\": 0.01}";
    double none = jittered_arrival(1, "{\"dist\": \"none\"}");
    double a = jittered_arrival(1, u), b = jittered_arrival(2, u);
    ck_assert_double_eq_tol(none, 0.002, 1e-12);   /* latency + 1000 B at 1 MB/s */
    ck_assert_msg(a == b, "to node 1 at %.17g, to node 2 at %.17g", a, b);
    ck_assert_double_gt(a, none);
    ck_assert_double_lt(a, none + 0.01);
}
END_TEST

/* ---- a Markov slowdown starts in its stationary distribution (slow-markov-start) ---- */

static double first_end[64];
static void fe_start(alg_ctx *c, void *s, int n)
{
    (void)s;
    first_end[n] = -1;
    alg_start_step(c, n);
}
static void fe_step(alg_ctx *c, void *s, int n, const double *g)
{
    (void)s;
    (void)g;
    if (first_end[n] < 0)
        first_end[n] = alg_now(c);
    alg_start_step(c, n);
}
static const alg_type first_steps = {
    .name = "first-steps", .on_start = fe_start, .on_step_done = fe_step, .on_message = one_msg,
};

/* Mean sojourns 1 s slow and 3 s normal: a node starts slow with
 * probability 1 / (1 + 3) = 1/4, so of 64 nodes 16 +- 3 SE (3.46) start
 * with a 4x slower first step (0.04 s instead of 0.01 s). */
START_TEST(test_markov_starts_stationary)
{
    const char *json =
        "{\"nodes\": 64, \"topology\": {\"kind\": \"ring\"}, \"compute\": {\"step_time_s\": 0.01,"
        "   \"slowdowns\": [{\"kind\": \"markov\", \"factor\": 4, \"mean_slow_s\": 1,"
        "   \"mean_normal_s\": 3}]},"
        " \"algorithm\": {\"name\": \"dpsgd\"}, \"stop\": {\"time_s\": 0.1}}";
    run_options opt = { .algorithm = &first_steps };
    run_result res;
    run_json(json, &opt, &res);
    int slow = 0;
    for (int i = 0; i < 64; i++) {
        ck_assert_double_gt(first_end[i], 0);
        slow += first_end[i] > 0.015;
    }
    double se = sqrt(64 * 0.25 * 0.75);
    ck_assert_msg(fabs(slow - 16.0) <= 3 * se, "%d of 64 nodes start slow, expected 16 +- %.2f",
                  slow, 3 * se);
}
END_TEST

/* ---- the watchdog's count of events without a step (wd-timer) ---- */

/* At t = 0 node 0 fires 301 timers (one, then 300 more of delay 0: one
 * instant), the last sends a message of 0 bytes, and the two nodes then
 * bounce it for ever over a 1 ms link (one event a leg over FIFO NICs: its
 * delivery) while no step completes (100 s steps).  A timer restarts the
 * count only when it is due later than the last (a timer loop at one
 * instant is no progress), so with a limit of 1000 the watchdog stops the
 * run at the 1001st event: 301 timers and 700 legs, at t = 0.7 s, with
 * 700 messages delivered.  Restarting it at every timer would give 1000
 * legs. */
static int wt_fired, wt_delivered;
static void wt_start(alg_ctx *c, void *s, int n)
{
    (void)s;
    if (n == 0)
        alg_set_timer(c, 0, 0.0, 1);
    alg_start_step(c, n);
}
static void wt_timer(alg_ctx *c, void *s, int n, uint32_t tag)
{
    (void)s;
    (void)tag;
    if (wt_fired++ < 300)
        alg_set_timer(c, n, 0.0, 1);
    else
        alg_send(c, 0, 1, 2, 0, NULL, 0);
}
static void wt_msg(alg_ctx *c, void *s, int n, const cl_msg *m)
{
    (void)s;
    (void)m;
    wt_delivered++;
    alg_send(c, n, 1 - n, 2, 0, NULL, 0);
}
static const alg_type timer_burst = {
    .name = "timer-burst", .on_start = wt_start, .on_step_done = one_step, .on_message = wt_msg,
    .on_timer = wt_timer,
};

START_TEST(test_watchdog_timers_of_one_instant)
{
    const char *json =
        "{\"nodes\": 2, \"topology\": {\"kind\": \"complete\"}, \"compute\": {\"step_time_s\": 100},"
        " \"network\": {\"latency_s\": 0.001, \"bandwidth_Bps\": 1e9},"
        " \"algorithm\": {\"name\": \"dpsgd\"}, \"stop\": {\"time_s\": 50}}";
    wt_fired = wt_delivered = 0;
    run_options opt = { .algorithm = &timer_burst, .watchdog_events = 1000 };
    run_result res;
    scn_scenario s;
    scn_error err;
    run_sim *r;
    ck_assert_msg(prepare_json(json, &s, &r, &err) == 0, "%s", err.msg);
    char msg[1024];
    run_execute(r, &opt, &res, msg, sizeof msg);
    run_destroy(r);
    scn_fini(&s);
    ck_assert_int_eq(res.status, RUN_NO_PROGRESS);
    ck_assert_int_eq(wt_fired, 301);
    ck_assert_int_eq(wt_delivered, 700);
    ck_assert_msg(strstr(res.message, "no progress at t=0.7 s: 1001 message, timer and environment "
                         "events without a step completing (watchdog limit 1000)") != NULL,
                  "%s", res.message);
}
END_TEST

static void retransmissions(const char *faults, const double *want, int n_want)
{
    char dir[] = "/tmp/dtsim-test-exact-XXXXXX", path[600], json[2048];
    ck_assert_ptr_nonnull(mkdtemp(dir));
    snprintf(json, sizeof json,
        "{\"nodes\": 2, \"topology\": {\"kind\": \"complete\"},"
        " \"network\": {\"latency_s\": 0.001, \"bandwidth_Bps\": 1e6, \"loss\": 0.9999999,"
        "   \"retransmit\": {\"timeout_s\": 0.1, \"max_retries\": 3}},"
        " \"compute\": {\"step_time_s\": 0.05}, %s"
        " \"algorithm\": {\"name\": \"dpsgd\"}, \"stop\": {\"time_s\": 2},"
        " \"output\": {\"trace\": true}}", faults);
    run_options opt = { .out_dir = dir, .algorithm = &one_message };
    run_result res;
    run_json(json, &opt, &res);
    ck_assert_int_eq(res.status, RUN_OK);
    snprintf(path, sizeof path, "%s/trace.csv", dir);
    static trace_row r[512];
    int n = read_trace(path, r, 512), sends = 0, lost = 0;
    for (int i = 0; i < n; i++) {
        if (strcmp(r[i].kind, "send") == 0) {
            ck_assert_int_lt(sends, n_want);
            ck_assert_int_eq(r[i].node, 0);
            ck_assert_int_eq(r[i].peer, 1);
            ck_assert_double_eq_tol(r[i].start, want[sends], 1e-12);
            ck_assert_double_eq_tol(r[i].end, want[sends] + 0.001, 1e-12);
            sends++;
        } else if (strcmp(r[i].kind, "lost") == 0) {
            ck_assert_int_eq(r[i].node, 0);
            lost++;
        }
    }
    ck_assert_int_eq(sends, n_want);
    ck_assert_int_eq(lost, 1);
    rm_run_dir(dir);
}

START_TEST(test_retransmission_schedule)
{
    const double want[] = { 0, 0.1, 0.3, 0.7 };
    retransmissions("", want, 4);
    /* a sender down on [0.05, 0.5) forgot the message: its first retry,
     * due at 0.1, finds it down and the message is lost (rtx-down-sender) */
    retransmissions("\"faults\": {\"events\": [{\"kind\": \"schedule\", \"nodes\": [0],"
                    " \"down_s\": 0.05, \"up_s\": 0.5}]},", want, 1);
}
END_TEST

/* ---- timers of a down node (cl-timer-down) ---- */

/* Node 0's timer fires at 0.1 s and sets one for node 1 (down on [0.05,
 * 1)) and one for itself, both 0.1 s later: a down node has no timers, so
 * only node 0's fires, at 0.2 s. */
static int tm_fired[2];
static double tm_at[2];
static void tm_start(alg_ctx *c, void *s, int n)
{
    (void)s;
    if (n == 0)
        alg_set_timer(c, 0, 0.1, 1);
    alg_start_step(c, n);
}
static void tm_timer(alg_ctx *c, void *s, int n, uint32_t tag)
{
    (void)s;
    tm_fired[n]++;
    tm_at[n] = alg_now(c);
    if (n == 0 && tag == 1) {
        alg_set_timer(c, 1, 0.1, 2);
        alg_set_timer(c, 0, 0.1, 2);
    }
}
static const alg_type timers_down = {
    .name = "timers-down", .on_start = tm_start, .on_step_done = one_step, .on_message = one_msg,
    .on_timer = tm_timer,
};

START_TEST(test_down_node_has_no_timers)
{
    const char *json =
        "{\"nodes\": 2, \"topology\": {\"kind\": \"complete\"}, \"compute\": {\"step_time_s\": 0.05},"
        " \"faults\": {\"events\": [{\"kind\": \"schedule\", \"nodes\": [1], \"down_s\": 0.05,"
        "   \"up_s\": 1}]},"
        " \"algorithm\": {\"name\": \"dpsgd\"}, \"stop\": {\"time_s\": 2}}";
    run_options opt = { .algorithm = &timers_down };
    run_result res;
    run_json(json, &opt, &res);
    ck_assert_int_eq(tm_fired[0], 2);
    ck_assert_double_eq_tol(tm_at[0], 0.2, 1e-12);
    ck_assert_int_eq(tm_fired[1], 0);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("exact_faults");
    TCase *tc = tcase_create("exact_faults");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, test_availability_fraction);
    tcase_add_test(tc, test_fault_episodes);
    tcase_add_test(tc, test_rejoin_takes_a_live_neighbour);
    tcase_add_test(tc, test_loss_leaves_jitter_alone);
    tcase_add_test(tc, test_streams_independent);
    tcase_add_test(tc, test_jitter_is_the_senders);
    tcase_add_test(tc, test_markov_starts_stationary);
    tcase_add_test(tc, test_retransmission_schedule);
    tcase_add_test(tc, test_watchdog_timers_of_one_instant);
    tcase_add_test(tc, test_down_node_has_no_timers);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? 1 : 0;
}
