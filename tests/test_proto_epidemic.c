/* test_proto_epidemic.c -- Epidemic Learning and gossip learning as their
 * papers run them, pinned by exact counts and hand-computed models: in
 * EL-Oracle every node aggregates exactly s models per round (s x rounds
 * in all); in EL-Local every node sends exactly s models per round while
 * the models received vary; rounds are synchronous (with lr 0 the model
 * after round k is the hand-computed average of round k's models, and an
 * s-regular round keeps the sum of the models); with GoLF's timer every
 * gossip node sends floor(T / period) models whatever its compute speed.
 * Per-node models are read through a wrapper of the protocol's step hook.
 */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "alg.h"
#include "test_util.h"

extern const alg_type alg_epidemic;

/* 16 nodes on the complete graph with test_util.h's heterogeneous
 * `problem` (lognormal step times, node 0 three times slower). */
static void run_epidemic(const char *keys, double time_s, run_result *res)
{
    char json[2048];
    snprintf(json, sizeof json,
        "{\"nodes\": 16, %s, \"topology\": {\"kind\": \"complete\"},"
        " \"algorithm\": {\"name\": \"epidemic\", \"fanout\": 3%s},"
        " \"stop\": {\"time_s\": %g}}", problem, keys, time_s);
    run_json(json, NULL, res);
    ck_assert_int_eq(res->status, RUN_OK);
}

/* EL-Oracle: every round's graph is 3-regular, so every aggregation takes
 * exactly 3 models, all of its own round, and every node sends to 3
 * distinct peers, however slow some nodes are. */
START_TEST(test_oracle_exactly_s_per_round)
{
    run_result res;
    run_epidemic("", 1, &res);
    ck_assert_double_eq(stat_of(&res, "round_models_min"), 3);
    ck_assert_double_eq(stat_of(&res, "round_models_max"), 3);
    ck_assert_double_eq(stat_of(&res, "round_sends_min"), 3);
    ck_assert_double_eq(stat_of(&res, "round_sends_max"), 3);
    ck_assert_double_eq(stat_of(&res, "foreign_round_models"), 0);
    ck_assert_double_ge(stat_of(&res, "rounds_min"), 10);
    /* the asynchronous variant aggregates whatever came in */
    run_epidemic(", \"rounds\": \"async\"", 1, &res);
    ck_assert_double_lt(stat_of(&res, "round_models_min"), 3);
    ck_assert_double_gt(stat_of(&res, "round_models_max"), 3);
    ck_assert_double_gt(stat_of(&res, "foreign_round_models"), 0);
}
END_TEST

/* On equal nodes (10 ms steps, 0.5 ms latency, 132-byte models at
 * 125 MB/s) round k ends at k (10.5 ms + at most 10 us), and the 101st
 * step ends after 1.06 s: at 1.055 s every node has aggregated exactly 100
 * rounds and received exactly 300 models (dtsim before: 270 to 329). */
START_TEST(test_oracle_300_models_in_100_rounds)
{
    char json[2048];
    snprintf(json, sizeof json,
        "{\"nodes\": 16, \"seed\": 7, \"compute\": {\"step_time_s\": 0.01},"
        " \"network\": {\"latency_s\": 0.0005, \"bandwidth_Bps\": 1.25e8},"
        " \"model\": {\"kind\": \"softmax\"}, \"data\": {\"train\": 2048, \"test\": 256,"
        " \"features\": 10, \"classes\": 3}, \"topology\": {\"kind\": \"complete\"},"
        " \"algorithm\": {\"name\": \"epidemic\", \"fanout\": 3},"
        " \"stop\": {\"time_s\": 1.055}}");
    run_result res;
    run_json(json, NULL, &res);
    ck_assert_int_eq(res.n_params, 33);
    ck_assert_double_eq(stat_of(&res, "rounds_min"), 100);
    ck_assert_double_eq(stat_of(&res, "rounds_max"), 100);
    ck_assert_double_eq(stat_of(&res, "received_min"), 300);
    ck_assert_double_eq(stat_of(&res, "received_max"), 300);
}
END_TEST

/* EL-Local: each node sends exactly s models per round (s distinct peers;
 * s models per step in bytes), while the models a node receives in a
 * round vary; with the topology's neighbours on a ring and s = 2 every
 * node hears both neighbours, every round. */
START_TEST(test_local_sends_exactly_s)
{
    run_result res;
    run_epidemic(", \"variant\": \"local\"", 1, &res);
    ck_assert_double_eq(stat_of(&res, "round_sends_min"), 3);
    ck_assert_double_eq(stat_of(&res, "round_sends_max"), 3);
    ck_assert_double_eq(stat_of(&res, "foreign_round_models"), 0);
    ck_assert_double_lt(stat_of(&res, "round_models_min"), 3);
    ck_assert_double_gt(stat_of(&res, "round_models_max"), 3);
    ck_assert_double_lt(stat_of(&res, "received_min"), stat_of(&res, "received_max"));
    ck_assert_double_eq(res.last.bytes_sent, 3.0 * (double)res.last.steps * 33 * 4);

    char json[2048];
    snprintf(json, sizeof json,
        "{\"nodes\": 8, %s, \"topology\": {\"kind\": \"ring\"},"
        " \"algorithm\": {\"name\": \"epidemic\", \"variant\": \"local\","
        " \"peers\": \"neighbours\"}, \"stop\": {\"time_s\": 1}}", problem);
    run_json(json, NULL, &res);
    ck_assert_double_eq(stat_of(&res, "round_models_min"), 2);
    ck_assert_double_eq(stat_of(&res, "round_models_max"), 2);
}
END_TEST

START_TEST(test_epidemic_options_checked)
{
    expect_prepare_error("{\"nodes\": 8, \"topology\": {\"kind\": \"ring\"},"
                         " \"algorithm\": {\"name\": \"epidemic\", \"peers\": \"neighbours\"},"
                         " \"stop\": {\"steps\": 5}}",
                         "test.json: /algorithm/name: error: epidemic peers \"neighbours\" needs "
                         "variant \"local\" (the oracle's graph spans all nodes)");
    expect_prepare_error("{\"nodes\": 5, \"algorithm\": {\"name\": \"epidemic\", \"fanout\": 3},"
                         " \"stop\": {\"steps\": 5}}",
                         "test.json: /algorithm/name: error: epidemic variant \"oracle\" draws a "
                         "3-regular graph, which needs nodes x fanout even; got 5 x 3");
    expect_prepare_error("{\"nodes\": 5, \"algorithm\": {\"name\": \"epidemic\","
                         " \"rounds\": \"lockstep\"}, \"stop\": {\"steps\": 5}}",
                         "test.json: /algorithm/rounds: error: unknown value \"lockstep\" "
                         "(expected one of: sync, async)");
}
END_TEST

/* ---- per-node models through a wrapper of the step hook ---- */

#define MAXN 16
#define MAXREC 64

/* rec[i][m]: node i's first two parameters when its (m+1)-th step ends:
 * with lr 0 and one local step per round, its model after m rounds. */
static double rec[MAXN][MAXREC][2];
static int n_rec[MAXN];

static void rec_step_done(alg_ctx *ctx, void *state, int i, const double *grad)
{
    if (n_rec[i] < MAXREC) {
        const double *x = alg_params_const(ctx, i);
        rec[i][n_rec[i]][0] = x[0];
        rec[i][n_rec[i]][1] = x[1];
        n_rec[i]++;
    }
    alg_epidemic.on_step_done(ctx, state, i, grad);
}

static void integer_init(void *ctx, int node, double *x, size_t P)
{
    (void)ctx;
    for (size_t k = 0; k < P; k++)
        x[k] = (double)(node * 16 + (int)(k % 7));
}

/* Runs epidemic with lr 0 on `nodes` nodes and `topo`, recording models;
 * the replacement protocol takes its parameters from its own table, so
 * the defaults are set to the scenario's values. */
static void run_recorded(int nodes, const char *topo, int fanout, int variant, int peers,
                         int rounds)
{
    static alg_param_spec spec[8];
    static alg_type t;
    int k = 0;
    for (; alg_epidemic.params[k].key; k++) {
        spec[k] = alg_epidemic.params[k];
        if (strcmp(spec[k].key, "fanout") == 0)
            spec[k].def = fanout;
        else if (strcmp(spec[k].key, "variant") == 0)
            spec[k].def = variant;
        else if (strcmp(spec[k].key, "peers") == 0)
            spec[k].def = peers;
        else if (strcmp(spec[k].key, "rounds") == 0)
            spec[k].def = rounds;
    }
    memset(&spec[k], 0, sizeof spec[k]);
    t = alg_epidemic;
    t.params = spec;
    t.on_step_done = rec_step_done;
    memset(n_rec, 0, sizeof n_rec);
    char json[2048];
    snprintf(json, sizeof json,
        "{\"nodes\": %d, %s, \"topology\": %s, \"algorithm\": {\"name\": \"epidemic\","
        " \"lr\": 0, \"fanout\": %d, \"variant\": \"%s\", \"peers\": \"%s\", \"rounds\": \"%s\"},"
        " \"stop\": {\"time_s\": 0.6}}", nodes, problem, topo, fanout,
        variant ? "local" : "oracle", peers ? "neighbours" : "all", rounds ? "async" : "sync");
    run_options opt = { .algorithm = &t, .init_params = integer_init };
    run_result res;
    run_json(json, &opt, &res);
    ck_assert_int_eq(res.status, RUN_OK);
    for (int i = 0; i < nodes; i++)
        ck_assert_int_ge(n_rec[i], 8);
}

/* EL-Oracle with s = n - 1 = 3: round 0 brings every node the three other
 * models, so after it every node holds the exact mean, 24 + k % 7, and
 * keeps it.  Asynchronous rounds do not. */
START_TEST(test_sync_round_exact_mean)
{
    run_recorded(4, "{\"kind\": \"complete\"}", 3, 0, 0, 0);
    for (int i = 0; i < 4; i++) {
        ck_assert_double_eq(rec[i][0][0], 16.0 * i);
        for (int m = 1; m < 8; m++) {
            ck_assert_double_eq(rec[i][m][0], 24);
            ck_assert_double_eq(rec[i][m][1], 25);
        }
    }
    run_recorded(4, "{\"kind\": \"complete\"}", 3, 0, 0, 1);
    int off = 0;
    for (int i = 0; i < 4; i++)
        off += rec[i][1][0] != 24;
    ck_assert_int_gt(off, 0);
}
END_TEST

/* EL-Local over a ring's neighbours with s = 2 is the fixed graph of both
 * neighbours: after round m node i holds (W^m x0)_i, W averaging each node
 * with its two neighbours (1/3 each), whatever the nodes' speeds. */
START_TEST(test_sync_rounds_ring_closed_form)
{
    run_recorded(8, "{\"kind\": \"ring\"}", 2, 1, 1, 0);
    double y[8], z[8];
    for (int i = 0; i < 8; i++)
        y[i] = 16.0 * i;
    for (int m = 0; m < 8; m++) {
        for (int i = 0; i < 8; i++)
            ck_assert_msg(fabs(rec[i][m][0] - y[i]) < 1e-12, "round %d node %d: %.17g vs %.17g",
                          m, i, rec[i][m][0], y[i]);
        for (int i = 0; i < 8; i++)
            z[i] = (y[(i + 7) % 8] + y[i] + y[(i + 1) % 8]) / 3;
        memcpy(y, z, sizeof y);
    }
}
END_TEST

/* An s-regular round mixes with a doubly stochastic matrix: EL-Oracle
 * keeps the sum of the models after every round (16 * 28 = 448 for the
 * first parameter on 8 nodes); EL-Local, whose in-degrees vary, does not. */
START_TEST(test_oracle_keeps_the_sum)
{
    run_recorded(8, "{\"kind\": \"complete\"}", 2, 0, 0, 0);
    for (int m = 0; m < 8; m++) {
        double sum = 0;
        for (int i = 0; i < 8; i++)
            sum += rec[i][m][0];
        ck_assert_msg(fabs(sum - 448) < 1e-9, "round %d: sum %.17g", m, sum);
    }
    ck_assert_double_ne(rec[0][1][0], rec[0][0][0]);   /* it did mix */
    run_recorded(8, "{\"kind\": \"complete\"}", 2, 1, 0, 0);
    double worst = 0;
    for (int m = 0; m < 8; m++) {
        double sum = 0;
        for (int i = 0; i < 8; i++)
            sum += rec[i][m][0];
        worst = fmax(worst, fabs(sum - 448));
    }
    ck_assert_double_gt(worst, 1);
}
END_TEST

/* ---- gossip ---- */

/* 8 nodes, node 0 four times slower.  With the timer (the default) every
 * node sends floor(T / period) models, the k-th at k * period: 100 with
 * period 0.01 s and 33 with 0.03 s by T = 1.005 s; tied to steps a node
 * sends one per step (node 0: about a quarter of the others). */
static void run_gossip(const char *keys, double time_s, run_result *res)
{
    char json[2048];
    snprintf(json, sizeof json,
        "{\"nodes\": 8, \"seed\": 3, \"compute\": {\"step_time_s\": 0.01,"
        " \"noise\": {\"dist\": \"lognormal\", \"sigma\": 0.3},"
        " \"groups\": [{\"nodes\": [0], \"slowdown\": 4}]},"
        " \"network\": {\"latency_s\": 0.001, \"bandwidth_Bps\": 1e7},"
        " \"model\": {\"kind\": \"softmax\"}, \"data\": {\"train\": 2048, \"test\": 256,"
        " \"features\": 10, \"classes\": 3}, \"topology\": {\"kind\": \"complete\"},"
        " \"algorithm\": {\"name\": \"gossip\"%s}, \"stop\": {\"time_s\": %g}}", keys, time_s);
    run_json(json, NULL, res);
    ck_assert_int_eq(res->status, RUN_OK);
}

START_TEST(test_gossip_timer_sends_regardless_of_speed)
{
    run_result res;
    run_gossip("", 1.005, &res);
    ck_assert_double_eq(stat_of(&res, "sent_min"), 100);
    ck_assert_double_eq(stat_of(&res, "sent_max"), 100);
    ck_assert_double_eq(res.last.bytes_sent, 8.0 * 100 * 33 * 4);
    run_gossip(", \"period_s\": 0.03", 1.005, &res);
    ck_assert_double_eq(stat_of(&res, "sent_min"), 33);
    ck_assert_double_eq(stat_of(&res, "sent_max"), 33);
    /* the 100th send falls at 100 * 0.01 = 1 s exactly, which a stop at 1 s
     * still processes (a running sum of periods would put it past 1 s) */
    run_gossip("", 1, &res);
    ck_assert_double_eq(stat_of(&res, "sent_min"), 100);
    run_gossip(", \"send\": \"steps\"", 1.005, &res);
    ck_assert_double_eq(res.last.bytes_sent, (double)res.last.steps * 33 * 4);
    ck_assert_double_lt(stat_of(&res, "sent_min"), stat_of(&res, "sent_max") / 3);
}
END_TEST

/* A node that goes down loses its timer and re-arms it at its first step
 * end after it is back: node 1 (10 ms steps) sends at 0.01 .. 0.20 s, is
 * down from 0.205 to 0.505 s, restarts its step, which ends at 0.515 s,
 * and sends at 0.515 + k 0.01 s up to 1 s: 20 + 48 models. */
START_TEST(test_gossip_timer_after_failure)
{
    char json[2048];
    snprintf(json, sizeof json,
        "{\"nodes\": 4, \"compute\": {\"step_time_s\": 0.01},"
        " \"model\": {\"kind\": \"softmax\"}, \"data\": {\"train\": 2048, \"test\": 256,"
        " \"features\": 10, \"classes\": 3}, \"topology\": {\"kind\": \"complete\"},"
        " \"faults\": {\"events\": [{\"kind\": \"schedule\", \"nodes\": [1],"
        " \"down_s\": 0.205, \"up_s\": 0.505}]},"
        " \"algorithm\": {\"name\": \"gossip\"}, \"stop\": {\"time_s\": 1}}");
    run_result res;
    run_json(json, NULL, &res);
    ck_assert_int_eq(res.status, RUN_OK);
    ck_assert_double_eq(stat_of(&res, "sent_min"), 68);
    ck_assert_double_eq(stat_of(&res, "sent_max"), 100);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("proto_epidemic");
    TCase *tc = tcase_create("proto_epidemic");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, test_oracle_exactly_s_per_round);
    tcase_add_test(tc, test_oracle_300_models_in_100_rounds);
    tcase_add_test(tc, test_local_sends_exactly_s);
    tcase_add_test(tc, test_epidemic_options_checked);
    tcase_add_test(tc, test_sync_round_exact_mean);
    tcase_add_test(tc, test_sync_rounds_ring_closed_form);
    tcase_add_test(tc, test_oracle_keeps_the_sum);
    tcase_add_test(tc, test_gossip_timer_sends_regardless_of_speed);
    tcase_add_test(tc, test_gossip_timer_after_failure);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
