/* test_reliability2.c -- the second reliability pass (issue 15), items 1,
 * 2 and the non-CLI findings of 10:
 * - the fair-sharing NIC no longer livelocks once simulated time is many
 *   transfer times (10^9 and more, and transfers below the clock's
 *   resolution), with exact counts and the parameter-server closed form,
 *   and the issue's three runs end with status ok;
 * - faults on a protocol's servers: a fault process without `nodes` covers
 *   them, a server that returns keeps its own model, rejoin "neighbour"
 *   copies a live topology neighbour (never a down one), every
 *   server-holding protocol runs clean (the old rejoin read past the
 *   topology's arrays for a server: ASan);
 * - the final metrics row counts the steps that end at the stop instant; a
 *   message handed over by a down node counts as sent and lost (nodes.csv's
 *   sent = received + lost); a quantity partition with a tiny exponent is
 *   computed without NaN; message sizes whose byte counts would overflow
 *   are refused with a located error.
 */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "alg_host.h"
#include "mdl.h"
#include "run.h"
#include "scn.h"
#include "topo.h"

#define SCN_DIR DTSIM_SOURCE_DIR "/scenarios/"

static void run_loaded(scn_scenario *s, const run_options *opt, run_result *res)
{
    scn_error err;
    run_sim *r = run_prepare(s, &err);
    ck_assert_msg(r != NULL, "%s", err.msg);
    char msg[1024];
    ck_assert_msg(run_execute(r, opt, res, msg, sizeof msg) == 0, "%s", msg);
    run_destroy(r);
}

static void run_string(const char *json, const run_options *opt, run_result *res)
{
    scn_scenario s;
    scn_error err;
    ck_assert_msg(scn_load_string(json, "test.json", NULL, 0, &s, &err) == 0, "%s", err.msg);
    run_loaded(&s, opt, res);
    scn_fini(&s);
}

static void run_file(const char *path, const char *const *set, size_t n_set, run_result *res)
{
    scn_scenario s;
    scn_error err;
    ck_assert_msg(scn_load(path, set, n_set, &s, &err) == 0, "%s", err.msg);
    run_loaded(&s, NULL, res);
    scn_fini(&s);
}

static void expect_error(const char *json, const char *msg)
{
    scn_scenario s;
    scn_error err;
    ck_assert_msg(scn_load_string(json, "test.json", NULL, 0, &s, &err) == 0, "%s", err.msg);
    run_sim *r = run_prepare(&s, &err);
    ck_assert_msg(r == NULL, "accepted: %s", json);
    ck_assert_str_eq(err.msg, msg);
    scn_fini(&s);
}

/* ---- 1. the fair NIC at large absolute times ---- */

/* Parameter server, 4 workers, 1 s steps, latency a = 1e-4 s, messages of
 * M bytes at B B/s, fair NICs, timing only, 1000 s.  An iteration lasts
 * 1 + 2a + 2nM/B (docs/heterogeneity.md), so the worker steps ending by
 * 1000 s are those of iterations 0 .. 998 (step k ends at k iter + 1):
 * 999 per worker, and 999 iterations of 8 messages are sent.  With
 * M/B = 1e-6 s the run lasts 10^9 transfer times (the old NIC was stopped
 * by the watchdog at t = 32 s); 1e-12 s is 10^15 of them, and 1e-20 s lies
 * below the clock's resolution at 1 s already (each transfer then takes
 * no time at all).  The timeline is the same in all three, and so are the
 * events: 20 per iteration (4 step ends, 8 deliveries, 2 completion
 * events -- the broadcast's 4 flows share the server's uplink equally and
 * end together, so do the gradients at its downlink -- and 6 superseded
 * ones: each flow that joins a shared NIC moves its earliest end) and 101
 * around them; 16 when transfers take no time (the earliest end stays at
 * now, so fewer completion events are superseded). */
START_TEST(test_fair_nic_1e9_transfer_times)
{
    static const double sizes[][2] = { { 1000, 1e9 }, { 1, 1e12 }, { 1, 1e20 } };
    for (size_t c = 0; c < sizeof sizes / sizeof sizes[0]; c++) {
        const double M = sizes[c][0], B = sizes[c][1];
        char json[1024];
        snprintf(json, sizeof json,
            "{\"nodes\": 4, \"compute\": {\"step_time_s\": 1},"
            " \"network\": {\"discipline\": \"fair\", \"latency_s\": 1e-4,"
            "   \"bandwidth_Bps\": %.17g},"
            " \"model\": {\"kind\": \"none\", \"message_bytes\": %.17g},"
            " \"algorithm\": {\"name\": \"ps-sync\"}, \"stop\": {\"time_s\": 1000}}", B, M);
        run_result res;
        run_string(json, NULL, &res);
        ck_assert_msg(res.status == RUN_OK, "M/B = %g s: %s", M / B, res.message);
        ck_assert_str_eq(res.stop_reason, "time");
        ck_assert_double_eq(res.sim_time_s, 1000);
        ck_assert_uint_eq(res.last.steps, 4 * 999);
        ck_assert_double_eq(res.last.bytes_sent, 999 * 8 * M);
        ck_assert_uint_eq(res.events, 999 * (c < 2 ? 20 : 16) + 101);

        /* the 3996th step ends at 998 iterations + 1 s */
        snprintf(json, sizeof json,
            "{\"nodes\": 4, \"compute\": {\"step_time_s\": 1},"
            " \"network\": {\"discipline\": \"fair\", \"latency_s\": 1e-4,"
            "   \"bandwidth_Bps\": %.17g},"
            " \"model\": {\"kind\": \"none\", \"message_bytes\": %.17g},"
            " \"algorithm\": {\"name\": \"ps-sync\"}, \"stop\": {\"steps\": 999}}", B, M);
        run_string(json, NULL, &res);
        ck_assert_str_eq(res.stop_reason, "steps");
        double iter = 1 + 2e-4 + 2 * 4 * M / B;
        ck_assert_msg(fabs(res.sim_time_s - (998 * iter + 1)) < 1e-9, "M/B = %g s: %.17g s, "
                      "closed form %.17g s", M / B, res.sim_time_s, 998 * iter + 1);
    }
}
END_TEST

/* Unequal water-filling late in a run: D-PSGD on 8 fully connected nodes
 * whose cross-half links run at a tenth of the NICs (each uplink gives its
 * 4 cross-half transfers 1e8 B/s and the other 3 2e8 B/s), 1 us
 * transfers, 1000 s: 10^9 transfer times (the old NIC stopped at 128 s;
 * up to there both give the same files).  D-PSGD overlaps a round's
 * messages with the next step, so every node steps every second: 1000
 * steps each, and 1001 rounds of 7 messages sent (the first at 0);
 * 119 events a round (8 step ends, 56 deliveries, 55 completion events,
 * superseded ones included, and the flush events of the solves deferred
 * to the end of an instant: an uplink's 7 flows are more than solved at
 * once). */
START_TEST(test_fair_nic_waterfilling_1e9)
{
    run_result res;
    run_string("{\"nodes\": 8, \"compute\": {\"step_time_s\": 1},"
               " \"topology\": {\"kind\": \"complete\"},"
               " \"network\": {\"discipline\": \"fair\", \"latency_s\": 1e-5,"
               "   \"bandwidth_Bps\": 1e9,"
               "   \"links\": [{\"from\": [\"0-3\"], \"to\": [\"4-7\"], \"bandwidth_Bps\": 1e8}]},"
               " \"model\": {\"kind\": \"none\", \"message_bytes\": 1000},"
               " \"algorithm\": {\"name\": \"dpsgd\"}, \"stop\": {\"time_s\": 1000}}", NULL, &res);
    ck_assert_msg(res.status == RUN_OK, "%s", res.message);
    ck_assert_str_eq(res.stop_reason, "time");
    ck_assert_uint_eq(res.last.steps, 8 * 1000);
    ck_assert_double_eq(res.last.bytes_sent, 1001 * 8 * 7 * 1000.0);
    ck_assert_uint_eq(res.events, 1000 * 119 + 101);
}
END_TEST

/* The issue's three runs, each stopped by the watchdog before. */
START_TEST(test_fair_nic_issue_runs)
{
    static const char *const q[] = { "network.discipline=fair", "stop.time_s=100" };
    run_result res;
    run_file(SCN_DIR "quickstart.json", q, 2, &res);       /* was: no progress at t=64 s */
    ck_assert_msg(res.status == RUN_OK, "%s", res.message);
    ck_assert_str_eq(res.stop_reason, "time");
    ck_assert_double_eq(res.sim_time_s, 100);

    static const char *const h[] = { "stop.time_s=100" };
    run_file(SCN_DIR "hetero-racks.json", h, 1, &res);    /* was: t=40 s */
    ck_assert_msg(res.status == RUN_OK, "%s", res.message);
    ck_assert_str_eq(res.stop_reason, "time");
    ck_assert_double_eq(res.sim_time_s, 100);

    /* 4 kB messages at the default 1.25e9 B/s: 1 + 2e-4 + 8 x 4096 / 1.25e9
     * s an iteration, 199 steps per worker by 200 s (was: t=128 s) */
    run_string("{\"nodes\": 4, \"compute\": {\"step_time_s\": 1},"
               " \"network\": {\"discipline\": \"fair\"},"
               " \"model\": {\"kind\": \"none\", \"message_bytes\": 4096},"
               " \"algorithm\": {\"name\": \"ps-sync\"}, \"stop\": {\"time_s\": 200}}", NULL, &res);
    ck_assert_msg(res.status == RUN_OK, "%s", res.message);
    ck_assert_str_eq(res.stop_reason, "time");
    ck_assert_uint_eq(res.last.steps, 4 * 199);
}
END_TEST

/* ---- 2. faults on servers, rejoin ---- */

static const char *const server_algs[] = { "ps-sync", "ps-async", "ssp", "rennala",
                                           "ringmaster", "backup", "delay-adaptive", "fedavg",
                                           "sdfeel", "prague", "lsgd" };

static void server_json(char *json, size_t n, const char *alg, const char *events, double stop,
                        int seed)
{
    snprintf(json, n,
        "{\"seed\": %d, \"nodes\": 4, \"compute\": {\"step_time_s\": 0.01},"
        " \"topology\": {\"kind\": \"ring\"},"
        " \"data\": {\"train\": 256, \"test\": 64, \"features\": 4, \"classes\": 2},"
        " \"faults\": {\"rejoin\": \"neighbour\", \"events\": [%s]},"
        " \"algorithm\": {\"name\": \"%s\", \"lr\": 0.1, \"batch\": 8},"
        " \"stop\": {\"time_s\": %g}}", seed, events, alg, stop);
}

/* A fault process without `nodes` takes the servers down too.  Everyone
 * down on [0.05, 0.06) and back with rejoin "neighbour": every
 * server-holding protocol (parameter servers, fedavg's, sdfeel's edge
 * servers, prague's group generator) continues to its horizon.  Under
 * random failures of every node, servers included, each runs clean to its
 * horizon or a reported stall, deterministically.  (The old rejoin read
 * g->off[node + 1] past the topology for a server: ASan stopped here, and
 * the release build crashed or copied garbage into the server's model.) */
START_TEST(test_server_faults_every_protocol)
{
    for (size_t a = 0; a < sizeof server_algs / sizeof server_algs[0]; a++) {
        char json[2048];
        run_result res, again;
        server_json(json, sizeof json, server_algs[a],
                    "{\"kind\": \"schedule\", \"down_s\": 0.05, \"up_s\": 0.06}", 1, 3);
        run_string(json, NULL, &res);
        ck_assert_msg(res.status == RUN_OK, "%s: %s", server_algs[a], res.message);
        ck_assert_str_eq(res.stop_reason, "time");
        for (int seed = 1; seed <= 3; seed++) {
            server_json(json, sizeof json, server_algs[a],
                        "{\"kind\": \"exponential\", \"mtbf_s\": 0.3, \"mttr_s\": 0.05}", 3,
                        seed);
            run_string(json, NULL, &res);
            run_string(json, NULL, &again);
            ck_assert_msg(res.status == RUN_OK || res.status == RUN_STALLED, "%s: %s",
                          server_algs[a], res.message);
            if (res.status == RUN_STALLED)
                ck_assert_msg(strstr(res.message, "waiting: node ") != NULL, "%s", res.message);
            ck_assert_str_eq(res.message, again.message);
            ck_assert_double_eq(res.sim_time_s, again.sim_time_s);
            ck_assert_uint_eq(res.last.steps, again.last.steps);
            ck_assert_double_eq(res.last.train_loss, again.last.train_loss);
        }
    }
}
END_TEST

/* What each server-holding protocol does when its server alone is down on
 * [0.5, 0.6) of a 1 s run (docs/heterogeneity.md, "Faults on servers"):
 * none re-sends or times out, so what the outage lost stays lost.  Every
 * protocol that waits for the server stalls when it is back and nothing
 * else can happen; rennala's workers never wait and it runs on, as sdfeel
 * does (its edge servers' gossip goes on without a declared one).  (A
 * scenario's `nodes` names workers only, so the test points the process
 * at the first server, node 4, after loading.) */
START_TEST(test_server_alone_down)
{
    for (size_t a = 0; a < sizeof server_algs / sizeof server_algs[0]; a++) {
        char json[2048];
        server_json(json, sizeof json, server_algs[a],
                    "{\"kind\": \"schedule\", \"nodes\": [0], \"down_s\": 0.5, \"up_s\": 0.6}", 1,
                    3);
        scn_scenario s;
        scn_error err;
        ck_assert_msg(scn_load_string(json, "test.json", NULL, 0, &s, &err) == 0, "%s", err.msg);
        ck_assert_uint_eq(s.faults[0].n_nodes, 1);
        s.faults[0].nodes[0] = s.n_nodes;
        run_result res;
        run_loaded(&s, NULL, &res);
        scn_fini(&s);
        /* rennala's workers never wait; sdfeel's other edge server stops
         * waiting for the declared one, which rejoins the gossip when back
         * (its clients' models come with retransmission); lsgd's server,
         * back, asks its workers for their losses again */
        if (strcmp(server_algs[a], "rennala") == 0 || strcmp(server_algs[a], "sdfeel") == 0
            || strcmp(server_algs[a], "lsgd") == 0) {
            ck_assert_msg(res.status == RUN_OK, "%s", res.message);
            ck_assert_str_eq(res.stop_reason, "time");
            continue;
        }
        ck_assert_msg(res.status == RUN_STALLED, "%s: %s (%s)", server_algs[a],
                      run_status_name(res.status), res.message);
        /* at its return (nothing left to happen) or within a round of it */
        ck_assert_msg(res.sim_time_s >= 0.6 && res.sim_time_s < 0.7, "%s: %s", server_algs[a],
                      res.message);
        ck_assert_msg(strstr(res.message, "; waiting: node ") != NULL, "%s", res.message);
    }
}
END_TEST

/* The parameters of every node, as the runner holds them: init_params
 * gives node i the value i + 1 everywhere and keeps the pointer, and
 * on_metrics copies everyone's first parameter at the instant `at`. */
typedef struct probe {
    int     n;
    double *x[8];
    size_t  P;
    double  at, seen[8];
    int     got;
} probe;

static void probe_init(void *ctx, int node, double *params, size_t P)
{
    probe *p = ctx;
    ck_assert_int_lt(node, 8);
    for (size_t k = 0; k < P; k++)
        params[k] = node + 1;
    p->x[node] = params;
    p->P = P;
    if (node + 1 > p->n)
        p->n = node + 1;
}

static void probe_row(void *ctx, const out_metrics_row *row)
{
    probe *p = ctx;
    if (row->time_s != p->at)
        return;
    for (int i = 0; i < p->n; i++) {
        for (size_t k = 1; k < p->P; k++)   /* every parameter the same value */
            ck_assert_double_eq(p->x[i][k], p->x[i][0]);
        p->seen[i] = p->x[i][0];
    }
    p->got = 1;
}

/* A server that goes down and comes back keeps its own model, with
 * rejoin "neighbour" too: ps-sync's parameter server, fedavg's server and
 * sdfeel's two edge servers, all down with the workers on [0.5, 0.6), hold
 * their own initial values at 0.75 (nothing has been aggregated yet: the
 * first steps, restarted at 0.6, end at 1.6). */
START_TEST(test_server_keeps_its_model)
{
    static const char *const algs[] = { "ps-sync", "fedavg", "sdfeel" };
    for (size_t a = 0; a < 3; a++) {
        char json[2048];
        snprintf(json, sizeof json,
            "{\"nodes\": 4, \"compute\": {\"step_time_s\": 1}, \"topology\": {\"kind\": \"ring\"},"
            " \"data\": {\"train\": 256, \"test\": 64, \"features\": 4, \"classes\": 2},"
            " \"faults\": {\"rejoin\": \"neighbour\","
            "   \"events\": [{\"kind\": \"schedule\", \"down_s\": 0.5, \"up_s\": 0.6}]},"
            " \"algorithm\": {\"name\": \"%s\", \"lr\": 0, \"batch\": 8},"
            " \"stop\": {\"time_s\": 0.8}, \"metrics\": {\"every_s\": 0.25}}", algs[a]);
        probe p = { .at = 0.75 };
        run_options opt = { .init_params = probe_init, .on_metrics = probe_row, .hook_ctx = &p };
        run_result res;
        run_string(json, &opt, &res);
        ck_assert_msg(res.status == RUN_OK, "%s: %s", algs[a], res.message);
        ck_assert(p.got);
        ck_assert_int_ge(p.n, 5);
        for (int i = 4; i < p.n; i++)
            ck_assert_msg(p.seen[i] == i + 1, "%s: server %d holds %g", algs[a], i, p.seen[i]);
    }
}
END_TEST

/* Rejoin "neighbour" copies the first topology neighbour that is up, never
 * one that is down (issue 14).  All-reduce with lr 0 on a ring of 4 keeps
 * every model as it was set (node i holds i + 1): node 1 is down on
 * [0, 5), so nobody completes a round; node 0 is down on [1.5, 2.5) and
 * comes back with its first neighbour (1) down: it takes node 3's model
 * (4), not node 1's (2) nor its own (1).  With node 3 down as well it
 * keeps its own; with rejoin "keep" too. */
START_TEST(test_rejoin_copies_a_live_neighbour)
{
    static const struct { const char *rejoin, *more; double want; } cases[] = {
        { "neighbour", "", 4 },
        { "neighbour",
          ", {\"kind\": \"schedule\", \"nodes\": [3], \"down_s\": 0, \"up_s\": 5}", 1 },
        { "keep", "", 1 },
    };
    for (size_t c = 0; c < 3; c++) {
        char json[2048];
        snprintf(json, sizeof json,
            "{\"nodes\": 4, \"compute\": {\"step_time_s\": 1}, \"topology\": {\"kind\": \"ring\"},"
            " \"data\": {\"train\": 256, \"test\": 64, \"features\": 4, \"classes\": 2},"
            " \"faults\": {\"rejoin\": \"%s\", \"events\": ["
            "   {\"kind\": \"schedule\", \"nodes\": [1], \"down_s\": 0, \"up_s\": 5},"
            "   {\"kind\": \"schedule\", \"nodes\": [0], \"down_s\": 1.5, \"up_s\": 2.5}%s]},"
            " \"algorithm\": {\"name\": \"allreduce\", \"lr\": 0, \"batch\": 8},"
            " \"stop\": {\"time_s\": 3}, \"metrics\": {\"every_s\": 0.25}}",
            cases[c].rejoin, cases[c].more);
        scn_scenario s;
        scn_error err;
        ck_assert_msg(scn_load_string(json, "test.json", NULL, 0, &s, &err) == 0, "%s", err.msg);
        run_sim *r = run_prepare(&s, &err);
        ck_assert_msg(r != NULL, "%s", err.msg);
        /* node 0's neighbours in order: 1 (down) first, then 3 */
        const topo_graph *g = run_graph(r);
        ck_assert_uint_eq(g->off[1] - g->off[0], 2);
        ck_assert_int_eq(g->nbr[g->off[0]], 1);
        ck_assert_int_eq(g->nbr[g->off[0] + 1], 3);
        probe p = { .at = 2.75 };
        run_options opt = { .init_params = probe_init, .on_metrics = probe_row, .hook_ctx = &p };
        run_result res;
        char msg[1024];
        ck_assert_msg(run_execute(r, &opt, &res, msg, sizeof msg) == 0, "%s", msg);
        ck_assert_msg(res.status == RUN_OK, "%s", res.message);
        ck_assert(p.got);
        ck_assert_msg(p.seen[0] == cases[c].want, "case %zu: node 0 holds %g", c, p.seen[0]);
        ck_assert_double_eq(p.seen[1], 2);
        ck_assert_double_eq(p.seen[3], 4);
        run_destroy(r);
        scn_fini(&s);
    }
}
END_TEST

/* ---- 10. the smaller findings ---- */

static char tmpdir[256];

static void make_tmpdir(void)
{
    snprintf(tmpdir, sizeof tmpdir, "/tmp/dtsim-test-rel2-XXXXXX");
    ck_assert_ptr_nonnull(mkdtemp(tmpdir));
}

static void remove_tmpdir(void)
{
    char cmd[512];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmpdir);
    ck_assert_int_eq(system(cmd), 0);
}

/* Column `col` of every data row of a CSV file (at most max rows);
 * returns the number of rows. */
static int csv_column(const char *path, const char *col, double *out, int max)
{
    FILE *f = fopen(path, "r");
    ck_assert_msg(f != NULL, "cannot open %s", path);
    char line[4096];
    ck_assert_ptr_nonnull(fgets(line, sizeof line, f));
    int want = -1, k = 0;
    char *save = NULL;
    for (char *t = strtok_r(line, ",\n", &save); t; t = strtok_r(NULL, ",\n", &save), k++)
        if (strcmp(t, col) == 0)
            want = k;
    ck_assert_msg(want >= 0, "%s: no column %s", path, col);
    int rows = 0;
    while (rows < max && fgets(line, sizeof line, f)) {
        char *p = line;
        for (int j = 0; j < want; j++)
            p = strchr(p, ',') + 1;
        out[rows++] = strtod(p, NULL);
    }
    fclose(f);
    return rows;
}

static double column_sum(const char *path, const char *col)
{
    double v[64], sum = 0;
    int n = csv_column(path, col, v, 64);
    for (int i = 0; i < n; i++)
        sum += v[i];
    return sum;
}

/* Two nodes stepping every 0.125 s exactly (free communication), metrics
 * every 0.25 s, 1 s: 8 steps each end at 0.125, ..., 1.  The metrics
 * event at t = 1 came before the last two steps, which end at the stop
 * instant: the final row said 14 steps where nodes.csv says 16.  The
 * final row is now taken after every event of the stop instant and
 * replaces the earlier row of that instant (times stay increasing);
 * node_metrics.csv's last rows likewise.  The same when stop.steps ends
 * the run at a metrics instant (t = 0.5: 6 against 8). */
START_TEST(test_final_row_counts_steps_at_stop_instant)
{
    static const struct { const char *stop; double end; uint64_t steps; } cases[] = {
        { "\"time_s\": 1", 1, 16 },
        { "\"steps\": 4", 0.5, 8 },
    };
    for (size_t c = 0; c < 2; c++) {
        make_tmpdir();
        char json[1024], path[512];
        snprintf(json, sizeof json,
            "{\"nodes\": 2, \"compute\": {\"step_time_s\": 0.125},"
            " \"topology\": {\"kind\": \"ring\"},"
            " \"network\": {\"latency_s\": 0, \"bandwidth_Bps\": 1e300},"
            " \"data\": {\"train\": 256, \"test\": 64, \"features\": 4, \"classes\": 2},"
            " \"algorithm\": {\"name\": \"adpsgd\", \"lr\": 0.1, \"batch\": 8},"
            " \"stop\": {%s}, \"metrics\": {\"every_s\": 0.25, \"per_node\": true}}",
            cases[c].stop);
        run_options opt = { .out_dir = tmpdir };
        run_result res;
        run_string(json, &opt, &res);
        ck_assert_int_eq(res.status, RUN_OK);
        ck_assert_double_eq(res.sim_time_s, cases[c].end);
        ck_assert_uint_eq(res.last.steps, cases[c].steps);
        snprintf(path, sizeof path, "%s/nodes.csv", tmpdir);
        ck_assert_double_eq(column_sum(path, "steps"), (double)cases[c].steps);
        double bytes = column_sum(path, "bytes_sent");
        double t[64], steps[64], b[64];
        snprintf(path, sizeof path, "%s/metrics.csv", tmpdir);
        int n = csv_column(path, "time_s", t, 64);
        ck_assert_int_eq(csv_column(path, "steps", steps, 64), n);
        ck_assert_int_eq(csv_column(path, "bytes_sent", b, 64), n);
        ck_assert_int_eq(n, (int)(cases[c].end / 0.25) + 1);
        for (int i = 1; i < n; i++)
            ck_assert_double_lt(t[i - 1], t[i]);
        ck_assert_double_eq(t[n - 1], cases[c].end);
        ck_assert_double_eq(steps[n - 1], (double)cases[c].steps);
        ck_assert_double_eq(b[n - 1], bytes);
        /* node_metrics.csv: two rows per instant, the last two at the end */
        snprintf(path, sizeof path, "%s/node_metrics.csv", tmpdir);
        n = csv_column(path, "time_s", t, 64);
        ck_assert_int_eq(csv_column(path, "steps", steps, 64), n);
        ck_assert_int_eq(n, 2 * ((int)(cases[c].end / 0.25) + 1));
        ck_assert_double_eq(t[n - 3], cases[c].end - 0.25);
        ck_assert_double_eq(t[n - 1], cases[c].end);
        ck_assert_double_eq(steps[n - 2] + steps[n - 1], (double)cases[c].steps);
        remove_tmpdir();
    }
}
END_TEST

/* D-PSGD on a ring of 4 with node 1 down on [0, 0.05) and 0.1 s links:
 * every node sends its model to both neighbours as the run starts, node 1
 * while down.  Those two count as sent and lost (they were lost but not
 * sent); the others' messages reach node 1 after it is back.  nodes.csv's
 * messages add up: sent = received + lost (nothing is in flight once the
 * run has stalled: nodes 0 and 2 wait for node 1's lost models), and the
 * bytes of the lost ones are what sent has over received. */
START_TEST(test_sent_while_down_counts_as_sent_and_lost)
{
    make_tmpdir();
    /* dpsgd without its failure hooks: with them node 1 re-sends when it
     * is back and the run goes on (test_fail_sgp) */
    alg_type waiting = alg_dpsgd;
    waiting.on_failure = NULL;
    waiting.on_return = NULL;
    run_options opt = { .out_dir = tmpdir, .algorithm = &waiting };
    run_result res;
    run_string("{\"nodes\": 4, \"compute\": {\"step_time_s\": 0.01},"
               " \"topology\": {\"kind\": \"ring\"}, \"network\": {\"latency_s\": 0.1},"
               " \"data\": {\"train\": 256, \"test\": 64, \"features\": 4, \"classes\": 2},"
               " \"faults\": {\"events\": [{\"kind\": \"schedule\", \"nodes\": [1], \"down_s\": 0,"
               "   \"up_s\": 0.05}]},"
               " \"algorithm\": {\"name\": \"dpsgd\", \"lr\": 0.1, \"batch\": 8},"
               " \"stop\": {\"time_s\": 5}}", &opt, &res);
    ck_assert_int_eq(res.status, RUN_STALLED);
    char path[512];
    snprintf(path, sizeof path, "%s/nodes.csv", tmpdir);
    double sent[4], lost[4], recv[4], bs[4], br[4];
    ck_assert_int_eq(csv_column(path, "msgs_sent", sent, 4), 4);
    ck_assert_int_eq(csv_column(path, "msgs_lost", lost, 4), 4);
    ck_assert_int_eq(csv_column(path, "msgs_received", recv, 4), 4);
    ck_assert_int_eq(csv_column(path, "bytes_sent", bs, 4), 4);
    ck_assert_int_eq(csv_column(path, "bytes_received", br, 4), 4);
    ck_assert_double_eq(lost[1], 2);   /* its own two, sent while down */
    ck_assert_double_ge(sent[1], 2);
    double S = 0, L = 0, R = 0, BS = 0, BR = 0;
    for (int i = 0; i < 4; i++) {
        S += sent[i];
        L += lost[i];
        R += recv[i];
        BS += bs[i];
        BR += br[i];
    }
    ck_assert_double_eq(L, 2);
    ck_assert_double_eq(S, R + L);
    /* 10 parameters x 4 bytes a message */
    ck_assert_double_eq(BS, BR + 40 * L);
    ck_assert_double_eq(res.last.bytes_sent, BS);
    remove_tmpdir();
}
END_TEST

/* Quantity skew with a tiny Pareto exponent: the weights u^(-1/a) (and
 * their sum) overflow, and the cut at inf / inf cast NaN to an integer.
 * The shares are now taken relative to the largest weight: the node with
 * the largest weight takes everything above the floor, the same node that
 * leads at a moderate exponent with the same draws.  Every sample is
 * dealt once, every node gets its floor. */
START_TEST(test_quantity_tiny_exponent)
{
    mdl_dataset ds = { .n = 2000 };
    mdl_partition p;
    char err[256];
    mdl_partition_spec qu = { .kind = MDL_PART_QUANTITY, .n_nodes = 16, .exponent = 0.05,
                              .min_samples = 10 };
    ck_assert_int_eq(mdl_partition_build(&qu, &ds, 5, &p, err, sizeof err), 0);
    int lead = 0;
    for (int i = 1; i < 16; i++)
        if (p.off[i + 1] - p.off[i] > p.off[lead + 1] - p.off[lead])
            lead = i;
    mdl_partition_fini(&p);
    ck_assert_int_ne(lead, 0);   /* a NaN cut would give everything to node 0 */
    static const double tiny[] = { 1e-3, 1e-30, 1e-300, 4.9e-324 };
    for (size_t e = 0; e < sizeof tiny / sizeof tiny[0]; e++) {
        qu.exponent = tiny[e];
        ck_assert_int_eq(mdl_partition_build(&qu, &ds, 5, &p, err, sizeof err), 0);
        ck_assert_uint_eq(p.off[16], 2000);
        for (int i = 0; i < 16; i++)
            ck_assert_uint_eq(p.off[i + 1] - p.off[i], i == lead ? 2000 - 15 * 10 : 10);
        /* every index once */
        char seen[2000] = { 0 };
        for (size_t k = 0; k < 2000; k++) {
            ck_assert_uint_lt(p.idx[k], 2000);
            ck_assert(!seen[p.idx[k]]);
            seen[p.idx[k]] = 1;
        }
        mdl_partition_fini(&p);
    }
    /* and through a scenario */
    run_result res;
    run_string("{\"nodes\": 4, \"compute\": {\"step_time_s\": 0.01},"
               " \"topology\": {\"kind\": \"ring\"},"
               " \"data\": {\"train\": 256, \"test\": 64, \"features\": 4, \"classes\": 2,"
               "   \"partition\": \"quantity\", \"exponent\": 1e-300},"
               " \"algorithm\": {\"name\": \"dpsgd\", \"lr\": 0.1, \"batch\": 8},"
               " \"stop\": {\"time_s\": 0.1}}", NULL, &res);
    ck_assert_int_eq(res.status, RUN_OK);
}
END_TEST

/* A message of 1e308 bytes wrote "inf" bytes (and a ring all-reduce cut it
 * into NaN-byte chunks): a message size whose byte counts can overflow is
 * refused where it is given.  The bound leaves 2^64 messages from each
 * node finite: DBL_MAX / 2^64 / n_all bytes. */
START_TEST(test_message_size_overflow)
{
    expect_error("{\"nodes\": 4, \"compute\": {\"step_time_s\": 0.01},"
                 " \"model\": {\"kind\": \"none\", \"message_bytes\": 1e308},"
                 " \"algorithm\": {\"name\": \"dpsgd\"}, \"stop\": {\"time_s\": 1}}",
                 "test.json: /model/message_bytes: error: must be <= 2.43633e+288 so that byte "
                 "counts stay finite (2^64 messages from each of 4 nodes), got 1e+308");
    /* compression divides the wire size: 1e308 / 1e30 passes */
    run_result res;
    run_string("{\"nodes\": 4, \"compute\": {\"step_time_s\": 0.01},"
               " \"network\": {\"compression_ratio\": 1e30},"
               " \"model\": {\"kind\": \"none\", \"message_bytes\": 1e308},"
               " \"algorithm\": {\"name\": \"dpsgd\"}, \"stop\": {\"time_s\": 1}}", NULL, &res);
    ck_assert_int_eq(res.status, RUN_OK);
    ck_assert(isfinite(res.last.bytes_sent) && res.last.bytes_sent > 0);
    /* the parameter server is a node too: 5 */
    expect_error("{\"nodes\": 4, \"compute\": {\"step_time_s\": 0.01},"
                 " \"data\": {\"train\": 256, \"test\": 64, \"features\": 4, \"classes\": 2},"
                 " \"network\": {\"bytes_per_param\": 1e308},"
                 " \"algorithm\": {\"name\": \"ps-sync\"}, \"stop\": {\"time_s\": 1}}",
                 "test.json: /network/bytes_per_param: error: must be <= 1.77188e+287 so that "
                 "byte counts stay finite (2^64 messages from each of 5 nodes), got 1e+308");
    /* just below the bound: a ring all-reduce's chunks and every total finite */
    run_string("{\"nodes\": 4, \"compute\": {\"step_time_s\": 0.01},"
               " \"model\": {\"kind\": \"none\", \"message_bytes\": 2.4e288},"
               " \"algorithm\": {\"name\": \"allreduce\", \"collective\": \"ring\"},"
               " \"stop\": {\"time_s\": 1}}", NULL, &res);
    ck_assert_int_eq(res.status, RUN_OK);
    ck_assert(isfinite(res.last.bytes_sent) && res.last.bytes_sent > 0);
}
END_TEST

/* Fuzzer finding seed2-case721: one eager worker down long enough to be
 * declared failed leaves a round without members, whose initiator was
 * drawn modulo 0 (UBSan: division by zero).  It now ends as a stall that
 * says the round has no initiator. */
START_TEST(test_eager_round_without_members)
{
    run_result res;
    run_file(DTSIM_SOURCE_DIR "/tests/fuzz/regressions/scenarios/"
             "eager-one-node-division-by-zero.json", NULL, 0, &res);
    ck_assert_int_eq(res.status, RUN_STALLED);
    ck_assert_msg(strstr(res.message, "node 0 (down) for the activation of round 13 by node -1")
                  != NULL, "%s", res.message);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("reliability2");
    TCase *fair = tcase_create("fair_nic");
    tcase_set_timeout(fair, 600);
    tcase_add_test(fair, test_fair_nic_1e9_transfer_times);
    tcase_add_test(fair, test_fair_nic_waterfilling_1e9);
    tcase_add_test(fair, test_fair_nic_issue_runs);
    suite_add_tcase(s, fair);
    TCase *srv = tcase_create("servers");
    tcase_set_timeout(srv, 120);
    tcase_add_test(srv, test_server_faults_every_protocol);
    tcase_add_test(srv, test_server_alone_down);
    tcase_add_test(srv, test_server_keeps_its_model);
    tcase_add_test(srv, test_rejoin_copies_a_live_neighbour);
    suite_add_tcase(s, srv);
    TCase *small = tcase_create("smaller");
    tcase_set_timeout(small, 120);
    tcase_add_test(small, test_final_row_counts_steps_at_stop_instant);
    tcase_add_test(small, test_sent_while_down_counts_as_sent_and_lost);
    tcase_add_test(small, test_quantity_tiny_exponent);
    tcase_add_test(small, test_message_size_overflow);
    tcase_add_test(small, test_eager_round_without_members);
    suite_add_tcase(s, small);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
