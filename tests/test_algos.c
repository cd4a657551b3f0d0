/* test_algos.c -- the three protocols of the first slice run end to end
 * through the runner: each converges on a small synthetic problem to a loss
 * that plain SGD reaches; their invariants hold (all-reduce keeps every node
 * identical, AD-PSGD refuses a graph it cannot split); a run is
 * deterministic; a protocol that cannot progress ends as a stall naming the
 * waiting nodes.
 */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "alg.h"
#include "test_util.h"

START_TEST(test_allreduce_converges) { check_converges("allreduce", "{\"kind\": \"ring\"}"); }
END_TEST
START_TEST(test_dpsgd_converges) { check_converges("dpsgd", "{\"kind\": \"ring\"}"); }
END_TEST
START_TEST(test_adpsgd_converges) { check_converges("adpsgd", "{\"kind\": \"ring\"}"); }
END_TEST
START_TEST(test_allreduce_tree_converges)
{
    check_converges("allreduce\", \"collective\": \"tree", "{\"kind\": \"ring\"}");
}
END_TEST
START_TEST(test_localsgd_converges)
{
    check_converges("local-sgd\", \"local_steps\": 4, \"collective\": \"recursive_doubling",
                    "{\"kind\": \"ring\"}");
    check_converges("local-sgd\", \"local_steps\": 2, \"sync\": \"gossip", "{\"kind\": \"ring\"}");
}
END_TEST
START_TEST(test_gossip_converges) { check_converges("gossip", "{\"kind\": \"complete\"}"); }
END_TEST
START_TEST(test_epidemic_converges)
{
    check_converges("epidemic", "{\"kind\": \"ring\"}");
    check_converges("epidemic\", \"local_steps\": 2, \"variant\": \"local\", \"peers\": \"neighbours",
                    "{\"kind\": \"torus2d\", \"rows\": 2, \"cols\": 4}");
}
END_TEST

START_TEST(test_prague_converges)
{
    check_converges("prague", "{\"kind\": \"ring\"}");
    check_converges("prague\", \"group_size\": 4, \"groups\": \"static", "{\"kind\": \"ring\"}");
}
END_TEST

/* Static groups never conflict; every phase forms floor(n/g) groups.
 * Random groups over busy workers do conflict, and the rate is reported. */
START_TEST(test_prague_groups)
{
    char json[2048];
    snprintf(json, sizeof json,
        "{\"nodes\": 8, %s, \"algorithm\": {\"name\": \"prague\", \"group_size\": 3,"
        " \"groups\": \"static\"}, \"stop\": {\"time_s\": 1}}", problem);
    run_result res;
    run_json(json, NULL, &res);
    ck_assert_double_eq(stat_of(&res, "group_conflicts"), 0);
    double formed = stat_of(&res, "groups_formed");
    ck_assert(formed > 10);
    /* each phase: blocks of 3, 3 and 2 + the remainder: 2 groups (3 and 5) */
    ck_assert_double_eq(fmod(formed, 2), 0);
    snprintf(json, sizeof json,
        "{\"nodes\": 8, %s, \"algorithm\": {\"name\": \"prague\", \"group_size\": 3},"
        " \"stop\": {\"time_s\": 1}}", problem);
    run_json(json, NULL, &res);
    double c = stat_of(&res, "group_conflicts"), f = stat_of(&res, "groups_formed");
    ck_assert(c > 0 && c <= f);
    ck_assert_double_eq_tol(stat_of(&res, "conflict_rate"), c / f, 1e-15);
}
END_TEST

START_TEST(test_eager_converges)
{
    check_converges("eager", "{\"kind\": \"ring\"}");
    check_converges("eager\", \"mode\": \"majority", "{\"kind\": \"ring\"}");
}
END_TEST

/* Every node joins every round with exactly one contribution (fresh, stale
 * or zeros), and all nodes hold the same model. */
START_TEST(test_eager_contributions)
{
    static const char *modes[] = { "solo", "majority" };
    for (int m = 0; m < 2; m++) {
        char json[2048];
        snprintf(json, sizeof json,
            "{\"nodes\": 6, %s, \"algorithm\": {\"name\": \"eager\", \"mode\": \"%s\"},"
            " \"stop\": {\"time_s\": 1}}", problem, modes[m]);
        run_result res;
        run_json(json, NULL, &res);
        double total = stat_of(&res, "fresh_contributions") + stat_of(&res, "stale_contributions")
                     + stat_of(&res, "empty_contributions");
        ck_assert(total > 100);
        ck_assert_double_eq(res.last.consensus_distance, 0);
        /* solo never waits for a slow node: it has empty contributions */
        if (m == 0)
            ck_assert_double_gt(stat_of(&res, "empty_contributions"), 0);
    }
}
END_TEST

static void spread_init(void *ctx, int node, double *x, size_t P)
{
    (void)ctx;
    for (size_t k = 0; k < P; k++)
        x[k] = (double)(node * 7 % 5) - 2.0 + 0.001 * (double)k;
}

START_TEST(test_sgp_converges)
{
    static const char *graphs[] = { "topology", "exponential", "one_peer_exponential",
                                    "random_matching", "random_k_out" };
    for (int g = 0; g < 5; g++) {
        char alg[128];
        snprintf(alg, sizeof alg, "sgp\", \"peers\": 2, \"graph\": \"%s", graphs[g]);
        check_converges(alg, "{\"kind\": \"ring\"}");
    }
}
END_TEST

/* Push-sum weights are conserved: exactly with the dyadic weights of
 * one-peer exponential graphs and random matchings, to rounding otherwise. */
START_TEST(test_sgp_weights_conserved)
{
    static const char *graphs[] = { "one_peer_exponential", "random_matching", "topology",
                                    "exponential", "random_k_out" };
    for (int g = 0; g < 5; g++) {
        char json[2048];
        snprintf(json, sizeof json,
            "{\"nodes\": 8, %s, \"algorithm\": {\"name\": \"sgp\", \"graph\": \"%s\","
            " \"peers\": 3}, \"stop\": {\"time_s\": 1}}", problem, graphs[g]);
        run_result res;
        run_json(json, NULL, &res);
        if (g < 2)
            ck_assert_double_eq(stat_of(&res, "weight_sum_error"), 0);
        else
            ck_assert_double_le(stat_of(&res, "weight_sum_error"), 1e-12);
    }
}
END_TEST

/* Integer models: their averages by halves are exact in floating point. */
static void integer_init(void *ctx, int node, double *x, size_t P)
{
    (void)ctx;
    for (size_t k = 0; k < P; k++)
        x[k] = (double)(node * 16 + (int)(k % 7));
}

/* A schedule read from a file (rounds of matchings, cycled): push-sum
 * weights stay exact; a missing or bad file is a scenario error. */
START_TEST(test_sgp_file_schedule)
{
    char json[2048];
    snprintf(json, sizeof json,
        "{\"nodes\": 4, %s, \"algorithm\": {\"name\": \"sgp\", \"graph\": \"file\","
        " \"graph_file\": \"%s/tests/data/topo/sched4.txt\"}, \"stop\": {\"time_s\": 1}}",
        problem, DTSIM_SOURCE_DIR);
    run_result res;
    run_json(json, NULL, &res);
    ck_assert_double_eq(stat_of(&res, "weight_sum_error"), 0);
    ck_assert(res.last.steps > 100);
    expect_prepare_error("{\"nodes\": 4, \"algorithm\": {\"name\": \"sgp\", \"graph\": \"file\"},"
                         " \"stop\": {\"steps\": 5}}",
                         "test.json: /algorithm/name: error: sgp with graph \"file\" needs "
                         "graph_file");
    expect_prepare_error("{\"nodes\": 4, \"algorithm\": {\"name\": \"sgp\", \"graph_file\": 3},"
                         " \"stop\": {\"steps\": 5}}",
                         "test.json: /algorithm/graph_file: error: must be a file name, got a "
                         "number");
    scn_scenario sc;
    scn_error err;
    run_sim *r;
    snprintf(json, sizeof json,
        "{\"nodes\": 4, \"algorithm\": {\"name\": \"sgp\", \"graph\": \"file\","
        " \"graph_file\": \"%s/tests/data/topo/sched_fields.txt\"}, \"stop\": {\"steps\": 5}}",
        DTSIM_SOURCE_DIR);
    ck_assert_int_eq(prepare_json(json, &sc, &r, &err), -1);
    ck_assert_msg(strstr(err.msg, "sched_fields.txt:") != NULL, "%s", err.msg);
}
END_TEST

/* One-peer exponential graphs average exactly in log2(n) rounds: with
 * lr = 0, different starting models and equal nodes (so that the stop after
 * the k-th steps falls after k-1 rounds everywhere), every node holds the
 * same model after 3 rounds on 8 nodes, and not after 2. */
START_TEST(test_sgp_one_peer_exact_average)
{
    for (int steps = 3; steps <= 4; steps++) {
        char json[2048];
        snprintf(json, sizeof json,
            "{\"nodes\": 8, \"data\": {\"train\": 512, \"test\": 64, \"features\": 4},"
            " \"algorithm\": {\"name\": \"sgp\", \"lr\": 0, \"batch\": 4},"
            " \"stop\": {\"steps\": %d}}", steps);
        run_options opt = { .init_params = integer_init };
        run_result res;
        run_json(json, &opt, &res);
        if (steps == 4)   /* the 4th steps end after 3 rounds everywhere */
            ck_assert_double_eq(res.last.consensus_distance, 0);
        else
            ck_assert_double_gt(res.last.consensus_distance, 0.1);
    }
}
END_TEST

START_TEST(test_hop_converges)
{
    check_converges("hop", "{\"kind\": \"ring\"}");
    check_converges("hop\", \"backup\": 1, \"staleness\": 3, \"skip\": \"on",
                    "{\"kind\": \"torus2d\", \"rows\": 2, \"cols\": 4}");
}
END_TEST

/* Neighbours' iterations never differ by more than staleness + 1 without
 * backup workers, nor by more than the token bound max_ig (s + 2 by
 * default) with them, skipping or not; node 0 is 3x slower, so the bound
 * is reached without skipping.  (Before Hop's staleness was separated from
 * its backup workers, b = 0 kept every gap at 1 whatever s.) */
START_TEST(test_hop_staleness_bound)
{
    for (int s = 0; s <= 4; s += 2)
        for (int b = 0; b <= 1; b++)
            for (int skip = 0; skip <= 1; skip++) {
                char json[2048];
                snprintf(json, sizeof json,
                    "{\"nodes\": 8, %s, \"algorithm\": {\"name\": \"hop\", \"staleness\": %d,"
                    " \"backup\": %d, \"skip\": \"%s\"}, \"stop\": {\"time_s\": 2}}", problem, s,
                    b, skip ? "on" : "off");
                run_result res;
                run_json(json, NULL, &res);
                double gap = stat_of(&res, "neighbour_gap_max");
                ck_assert_msg(gap <= (b ? s + 2 : s + 1), "s=%d b=%d skip=%d: gap %g", s, b, skip,
                              gap);
                if (!skip)   /* node 0 is 3x slower: the bound is reached */
                    ck_assert_double_eq(gap, b ? s + 2 : s + 1);
                if (b && skip && s > 0)   /* with s = 0 there is no room to jump */
                    ck_assert_double_gt(stat_of(&res, "iterations_skipped"), 0);
            }
    expect_prepare_error("{\"nodes\": 4, \"algorithm\": {\"name\": \"hop\", \"backup\": 2},"
                         " \"stop\": {\"steps\": 5}}",
                         "test.json: /algorithm/name: error: hop backup 2 must be below every "
                         "node's degree; node 0 has 2 neighbours");
}
END_TEST

START_TEST(test_sdfeel_converges)
{
    check_converges("sdfeel", "{\"kind\": \"ring\"}");   /* two clusters */
}
END_TEST

/* With lr = 0 the edge aggregation and, with two clusters, the gossip of
 * the two servers leave every client with the same model. */
START_TEST(test_sdfeel_clusters_agree)
{
    for (int c = 1; c <= 2; c++) {
        char json[2048];
        snprintf(json, sizeof json,
            "{\"nodes\": 8, %s, \"algorithm\": {\"name\": \"sdfeel\", \"lr\": 0,"
            " \"clusters\": %d}, \"stop\": {\"time_s\": 0.5}}", problem, c);
        run_options opt = { .init_params = spread_init };
        run_result res;
        run_json(json, &opt, &res);
        ck_assert_double_eq(res.last.consensus_distance, 0);
    }
    for (int c = 2; c <= 4; c += 2) {
        char json[2048];
        snprintf(json, sizeof json,
            "{\"nodes\": 8, %s, \"algorithm\": {\"name\": \"sdfeel\", \"clusters\": %d,"
            " \"local_steps\": 3, \"edge_rounds\": 2}, \"stop\": {\"steps\": 300}}", problem, c);
        run_result res;
        run_json(json, NULL, &res);
        ck_assert_msg(res.last.test_accuracy > 0.8, "clusters %d: %g", c, res.last.test_accuracy);
    }
    expect_prepare_error("{\"nodes\": 3, \"algorithm\": {\"name\": \"sdfeel\", \"clusters\": 4},"
                         " \"stop\": {\"steps\": 5}}",
                         "test.json: /algorithm/name: error: sdfeel needs at least one worker per "
                         "cluster: 4 clusters, 3 workers");
}
END_TEST

/* data.seed fixes the data (generation, partition, evaluation subsets)
 * while seed varies the rest: with the same starting model and lr = 0 two
 * seeds then evaluate to the same losses; without data.seed they do not. */
static void zero_init(void *ctx, int node, double *x, size_t P)
{
    (void)ctx;
    (void)node;
    memset(x, 0, P * sizeof *x);
    for (size_t k = 0; k < P; k += 3)
        x[k] = 0.01 * (double)(k % 5);
}

START_TEST(test_data_seed)
{
    double loss[2][2];
    for (int with = 0; with < 2; with++)
        for (int seed = 0; seed < 2; seed++) {
            char json[2048];
            snprintf(json, sizeof json,
                "{\"seed\": %d, \"nodes\": 4, \"data\": {\"train\": 512, \"test\": 128,"
                " \"features\": 6%s}, \"algorithm\": {\"name\": \"dpsgd\", \"lr\": 0, \"batch\": 8},"
                " \"stop\": {\"steps\": 3}, \"metrics\": {\"eval_samples\": 100}}",
                seed + 1, with ? ", \"seed\": 5" : "");
            run_options opt = { .init_params = zero_init };
            run_result res;
            run_json(json, &opt, &res);
            loss[with][seed] = res.last.train_loss;
        }
    ck_assert(loss[0][0] != loss[0][1]);
    ck_assert_double_eq(loss[1][0], loss[1][1]);
}
END_TEST

/* ---- invariants ---- */

typedef struct rows {
    int n;
    out_metrics_row r[256];
} rows;

static void keep_row(void *ctx, const out_metrics_row *row)
{
    rows *k = ctx;
    if (k->n < 256)
        k->r[k->n++] = *row;
}



/* With lr = 0 a local-SGD synchronisation by all-reduce replaces every
 * model by the exact average: after the first one, all nodes hold the same
 * bits (consensus distance exactly 0) whatever the collective. */
START_TEST(test_localsgd_sync_makes_identical)
{
    static const char *colls[] = { "ring", "recursive_doubling", "tree" };
    for (int c = 0; c < 3; c++) {
        char json[2048];
        snprintf(json, sizeof json,
            "{\"nodes\": 6, %s, \"algorithm\": {\"name\": \"local-sgd\", \"lr\": 0,"
            " \"local_steps\": 3, \"collective\": \"%s\"},"
            " \"stop\": {\"time_s\": 0.5}, \"metrics\": {\"every_s\": 0.01}}",
            problem, colls[c]);
        rows *x = calloc(1, sizeof *x);
        run_options opt = { .init_params = spread_init, .on_metrics = keep_row, .hook_ctx = x };
        run_result res;
        run_json(json, &opt, &res);
        ck_assert_double_eq(x->r[0].consensus_distance > 1.0, 1);
        ck_assert_double_eq(res.last.consensus_distance, 0.0);
        ck_assert_double_eq(x->r[x->n / 2].consensus_distance, 0.0);
        free(x);
    }
}
END_TEST

/* Epidemic learning with one local step per round sends exactly `fanout`
 * models per step: total bytes = fanout * steps * parameters * 4. */
START_TEST(test_epidemic_fanout)
{
    char json[2048];
    snprintf(json, sizeof json,
        "{\"nodes\": 8, %s, \"algorithm\": {\"name\": \"epidemic\", \"fanout\": 3},"
        " \"stop\": {\"steps\": 20}}", problem);
    run_result res;
    run_json(json, NULL, &res);
    ck_assert_double_eq(res.last.bytes_sent, 3.0 * (double)res.last.steps * (double)res.n_params * 4);
}
END_TEST

START_TEST(test_algorithm_params_checked)
{
    expect_prepare_error("{\"nodes\": 4, \"algorithm\": {\"name\": \"local-sgd\", \"local_step\": 2},"
                         " \"stop\": {\"steps\": 5}}",
                         "test.json: /algorithm/local_step: error: unknown key for algorithm "
                         "\"local-sgd\" (expected one of: name, lr, batch, local_steps, sync, "
                         "collective, schedule, schedule_file)");
    expect_prepare_error("{\"nodes\": 4, \"algorithm\": {\"name\": \"dpsgd\", \"local_steps\": 2},"
                         " \"stop\": {\"steps\": 5}}",
                         "test.json: /algorithm/local_steps: error: unknown key for algorithm "
                         "\"dpsgd\" (expected one of: name, lr, batch, schedule, schedule_file)");
    expect_prepare_error("{\"nodes\": 4, \"algorithm\": {\"name\": \"local-sgd\", \"local_steps\": 0},"
                         " \"stop\": {\"steps\": 5}}",
                         "test.json: /algorithm/local_steps: error: must be in [1, 1e+09], got 0");
    expect_prepare_error("{\"nodes\": 4, \"algorithm\": {\"name\": \"local-sgd\", \"local_steps\": 1.5},"
                         " \"stop\": {\"steps\": 5}}",
                         "test.json: /algorithm/local_steps: error: must be an integer, got 1.5");
    expect_prepare_error("{\"nodes\": 4, \"algorithm\": {\"name\": \"allreduce\", \"collective\": \"star\"},"
                         " \"stop\": {\"steps\": 5}}",
                         "test.json: /algorithm/collective: error: unknown value \"star\" "
                         "(expected one of: ring, recursive_doubling, tree)");
    expect_prepare_error("{\"nodes\": 4, \"algorithm\": {\"name\": \"allreduce\", \"collective\": 2},"
                         " \"stop\": {\"steps\": 5}}",
                         "test.json: /algorithm/collective: error: must be one of: ring, "
                         "recursive_doubling, tree; got a number");
    expect_prepare_error("{\"nodes\": 3, \"algorithm\": {\"name\": \"epidemic\", \"fanout\": 3},"
                         " \"stop\": {\"steps\": 5}}",
                         "test.json: /algorithm/name: error: epidemic fanout 3 needs at least 4 "
                         "nodes, got 3");
}
END_TEST

START_TEST(test_allreduce_keeps_nodes_identical)
{
    char json[2048];
    snprintf(json, sizeof json,
        "{\"nodes\": 5, %s, \"algorithm\": {\"name\": \"allreduce\", \"lr\": 0.1, \"batch\": 16},"
        " \"stop\": {\"steps\": 50}}", problem);
    run_result res;
    run_json(json, NULL, &res);
    ck_assert_double_eq(res.last.consensus_distance, 0.0);
}
END_TEST

START_TEST(test_adpsgd_needs_bipartite)
{
    char json[2048];
    snprintf(json, sizeof json,
        "{\"nodes\": 5, %s, \"algorithm\": {\"name\": \"adpsgd\"}, \"stop\": {\"steps\": 5}}",
        problem);
    scn_scenario s;
    scn_error err;
    run_sim *r;
    ck_assert_int_eq(prepare_json(json, &s, &r, &err), -1);
    ck_assert_str_eq(err.msg, "test.json: /algorithm/name: error: adpsgd needs a bipartite "
                              "topology for its active/passive split (Lian et al. 2018); this "
                              "one is not (use an even ring or a torus with even sides)");
}
END_TEST

START_TEST(test_unknown_algorithm)
{
    scn_scenario s;
    scn_error err;
    run_sim *r;
    ck_assert_int_eq(prepare_json("{\"nodes\": 4, \"algorithm\": {\"name\": \"dpsdg\"},"
                                  " \"stop\": {\"steps\": 5}}", &s, &r, &err), -1);
    ck_assert_str_eq(err.msg, "test.json: /algorithm/name: error: unknown algorithm \"dpsdg\" "
                              "(expected one of: adpsgd, allreduce, backup, comdml, delay-adaptive, "
                              "divshare, dpsgd, eager, easgd, epidemic, fedavg, gossip, hop, local-sgd, prague, "
                              "ps-async, ps-sync, rennala, ringmaster, sdfeel, sgp, ssp)");
}
END_TEST

START_TEST(test_disconnected_topology)
{
    scn_scenario s;
    scn_error err;
    run_sim *r;
    ck_assert_int_eq(prepare_json("{\"nodes\": 30, \"topology\": {\"kind\": \"erdos_renyi\","
                                  " \"p\": 0.01}, \"algorithm\": {\"name\": \"dpsgd\"},"
                                  " \"stop\": {\"steps\": 5}}", &s, &r, &err), -1);
    ck_assert_msg(strncmp(err.msg, "test.json: /topology: error: erdos_renyi graph with n=30, "
                                   "p=0.01 is disconnected (", 80) == 0, "%s", err.msg);
}
END_TEST

/* ---- determinism ---- */

START_TEST(test_same_seed_same_rows)
{
    static const char *algs[] = { "allreduce", "dpsgd", "adpsgd" };
    for (int a = 0; a < 3; a++) {
        char json[2048];
        snprintf(json, sizeof json,
            "{\"seed\": 99, \"nodes\": 8, %s, \"algorithm\": {\"name\": \"%s\"},"
            " \"stop\": {\"time_s\": 1}}", problem, algs[a]);
        rows *x = calloc(2, sizeof *x);
        for (int t = 0; t < 2; t++) {
            run_options opt = { .on_metrics = keep_row, .hook_ctx = &x[t] };
            run_result res;
            run_json(json, &opt, &res);
        }
        ck_assert_int_eq(x[0].n, 101);
        ck_assert_int_eq(x[0].n, x[1].n);
        ck_assert_int_eq(memcmp(x[0].r, x[1].r, sizeof x[0].r), 0);
        /* a different seed gives a different run */
        snprintf(json, sizeof json,
            "{\"seed\": 100, \"nodes\": 8, %s, \"algorithm\": {\"name\": \"%s\"},"
            " \"stop\": {\"time_s\": 1}}", problem, algs[a]);
        memset(&x[1], 0, sizeof x[1]);
        run_options opt = { .on_metrics = keep_row, .hook_ctx = &x[1] };
        run_result res;
        run_json(json, &opt, &res);
        ck_assert(memcmp(x[0].r, x[1].r, sizeof x[0].r) != 0);
        free(x);
    }
}
END_TEST

/* ---- stalls ---- */

/* Node 0 waits for a message that node 1 never sends after its first step. */
static int st_init(alg_ctx *c, void *s, int n) { (void)c; (void)s; (void)n; return 0; }
static void st_fini(alg_ctx *c, void *s, int n) { (void)c; (void)s; (void)n; }
static void st_start(alg_ctx *c, void *s, int n) { (void)s; alg_start_step(c, n); }
static void st_step(alg_ctx *c, void *s, int n, const double *g)
{
    (void)c; (void)s; (void)n; (void)g;
}
static void st_msg(alg_ctx *c, void *s, int n, const cl_msg *m)
{
    (void)c; (void)s; (void)n; (void)m;
}
static void st_wait(const alg_ctx *c, const void *s, int n, char *buf, size_t size)
{
    (void)c; (void)s;
    snprintf(buf, size, "a message from node %d", (n + 1) % 3);
}
static const alg_type stalling = {
    .name = "stalling", .state_size = 1, .init = st_init, .on_start = st_start,
    .on_step_done = st_step, .on_message = st_msg, .describe_wait = st_wait, .fini = st_fini,
};

START_TEST(test_stall_is_reported)
{
    char json[2048];
    snprintf(json, sizeof json,
        "{\"nodes\": 3, \"compute\": {\"step_time_s\": 0.5}, \"topology\": {\"kind\": \"complete\"},"
        " \"algorithm\": {\"name\": \"dpsgd\"}, \"stop\": {\"time_s\": 100}}");
    run_options opt = { .algorithm = &stalling };
    run_result res;
    run_json(json, &opt, &res);
    ck_assert_int_eq(res.status, RUN_STALLED);
    ck_assert_str_eq(res.stop_reason, "stalled");
    ck_assert_double_eq(res.sim_time_s, 0.5);
    ck_assert_str_eq(res.message, "stalled at t=0.5 s: no event left before the stop condition; "
                                  "waiting: node 0 for a message from node 1; node 1 for a "
                                  "message from node 2; node 2 for a message from node 0");
}
END_TEST

/* ---- timers ---- */

/* Node i's first timer fires at 0.25 (i + 1) s with tag 100 + i and starts
 * a 0.5 s step; each step's end sets a 1 s timer that starts the next one.
 * By t = 9.9 s node 0 has finished 7 steps (0.75 + 1.5 k <= 9.9), nodes 1
 * and 2 six each: 19.  A timer that fires late, early, with another tag
 * or not at all changes the count, and each firing checks its instant. */
typedef struct tm_state { uint32_t expect; int fired; } tm_state;
static void tm_start(alg_ctx *c, void *s, int n)
{
    ((tm_state *)s)->expect = 100u + (uint32_t)n;
    alg_set_timer(c, n, 0.25 * (n + 1), 100u + (uint32_t)n);
}
static void tm_timer(alg_ctx *c, void *s, int n, uint32_t tag)
{
    tm_state *st = s;
    ck_assert_uint_eq(tag, st->expect);
    /* the k-th firing (from 0) at 0.25 (n + 1) + 1.5 k */
    ck_assert_double_eq_tol(alg_now(c), 0.25 * (n + 1) + 1.5 * st->fired, 1e-12);
    st->fired++;
    st->expect = 7u;
    alg_start_step(c, n);
}
static void tm_step(alg_ctx *c, void *s, int n, const double *g)
{
    (void)s; (void)g;
    alg_set_timer(c, n, 1.0, 7u);
}
static const alg_type timed = {
    .name = "timed", .state_size = sizeof(tm_state), .on_start = tm_start,
    .on_step_done = tm_step, .on_message = st_msg, .on_timer = tm_timer,
};

START_TEST(test_timers_reach_the_protocol)
{
    const char *json =
        "{\"nodes\": 3, \"compute\": {\"step_time_s\": 0.5}, \"topology\": {\"kind\": \"complete\"},"
        " \"algorithm\": {\"name\": \"dpsgd\"}, \"stop\": {\"time_s\": 9.9}}";
    run_options opt = { .algorithm = &timed };
    run_result res;
    run_json(json, &opt, &res);
    ck_assert_int_eq(res.status, RUN_OK);
    ck_assert_uint_eq(res.last.steps, 19);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("algos");
    TCase *tc = tcase_create("algos");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, test_allreduce_converges);
    tcase_add_test(tc, test_dpsgd_converges);
    tcase_add_test(tc, test_adpsgd_converges);
    tcase_add_test(tc, test_allreduce_tree_converges);
    tcase_add_test(tc, test_localsgd_converges);
    tcase_add_test(tc, test_gossip_converges);
    tcase_add_test(tc, test_epidemic_converges);
    tcase_add_test(tc, test_localsgd_sync_makes_identical);
    tcase_add_test(tc, test_prague_converges);
    tcase_add_test(tc, test_prague_groups);
    tcase_add_test(tc, test_eager_converges);
    tcase_add_test(tc, test_eager_contributions);
    tcase_add_test(tc, test_sgp_converges);
    tcase_add_test(tc, test_hop_converges);
    tcase_add_test(tc, test_sdfeel_converges);
    tcase_add_test(tc, test_sdfeel_clusters_agree);
    tcase_add_test(tc, test_hop_staleness_bound);
    tcase_add_test(tc, test_sgp_weights_conserved);
    tcase_add_test(tc, test_sgp_file_schedule);
    tcase_add_test(tc, test_sgp_one_peer_exact_average);
    tcase_add_test(tc, test_epidemic_fanout);
    tcase_add_test(tc, test_algorithm_params_checked);
    tcase_add_test(tc, test_timers_reach_the_protocol);
    tcase_add_test(tc, test_allreduce_keeps_nodes_identical);
    tcase_add_test(tc, test_adpsgd_needs_bipartite);
    tcase_add_test(tc, test_unknown_algorithm);
    tcase_add_test(tc, test_disconnected_topology);
    tcase_add_test(tc, test_same_seed_same_rows);
    tcase_add_test(tc, test_data_seed);
    tcase_add_test(tc, test_stall_is_reported);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
