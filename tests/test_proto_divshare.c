/* test_proto_divshare.c -- DivShare (alg_divshare.c) pinned by exact
 * outcomes: the bytes of a round are J x P x bytes per parameter per node
 * (fragments in buffers of their own length, with a model and timing
 * only); with lr 0 the per-coordinate average is the hand-computed one on
 * two nodes whose only link one way carries one fragment per 8 ms (the
 * fragments that have arrived at a round are averaged, the others not;
 * what is sent is the model before the round's averaging; the sender
 * hands over one pair at a time and a round replaces the pairs it has not
 * handed over yet: exactly one here); a newer copy of a fragment replaces
 * the older one; with every fragment sent to every neighbour the models
 * follow the hand-solved recurrence of one-round-old fragments; and the parameters are checked
 * with located errors.  Models are read at the end of the run through a
 * wrapper of the protocol's statistics hook.
 */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "alg.h"
#include "test_util.h"

extern const alg_type alg_divshare;

#define MAXN 8
#define MAXP 16

static alg_type wrapped;
static double cap_x[MAXN][MAXP];
static size_t cap_P;

static int capture(const alg_ctx *ctx, const char **keys, double *values, int max)
{
    ck_assert_int_le(ctx->n, MAXN);
    ck_assert_uint_le(ctx->P, MAXP);
    cap_P = ctx->P;
    for (int i = 0; i < ctx->n; i++)
        memcpy(cap_x[i], alg_params_const(ctx, i), ctx->P * sizeof(double));
    return alg_divshare.stats(ctx, keys, values, max);
}

/* Node i starts from a_i + k / 4 (lr 0 keeps only the averaging). */
static double init_of(int i, size_t k) { return 8.0 * i + 0.25 * (double)k; }
static void set_init(void *ctx, int node, double *x, size_t P)
{
    (void)ctx;
    for (size_t k = 0; k < P; k++)
        x[k] = init_of(node, k);
}

static void run_ds(const char *json, run_result *res)
{
    wrapped = alg_divshare;
    wrapped.stats = capture;
    run_options opt = { .algorithm = &wrapped, .init_params = set_init };
    run_json(json, &opt, res);
    ck_assert_msg(res->status == RUN_OK, "%s", res->message);
}

/* Two nodes, logistic on 3 features (P = 4), 10 ms steps, 2 fragments of
 * 2 parameters (8 bytes); link 1 -> 0 at 1000 B/s (8 ms a fragment), the
 * rest at 1 GB/s.  At 10 ms each queues both fragments for the other;
 * node 1's sender hands over the first at 10 ms and the second when the
 * first has left, at 18 ms (it leaves at 26 ms).  At 20 ms node 1 has both
 * of node 0's: x1 = (a + b) / 2; node 0 has the first of node 1's (in at
 * 18 ms): its 2 coordinates are (a + b) / 2, the other 2 still a.  Node
 * 1's round-2 pairs wait for its uplink: the first leaves from 26 ms to 34
 * ms, the second is still queued at 30 ms and is replaced by round 3's
 * (not sent).  At 30 ms node 1 averages node 0's round-2 fragments, taken
 * before node 0's averaging at 20 ms (a): x1 = ((a + b) / 2 + a) / 2; node
 * 0 has node 1's second round-1 fragment (in at 26 ms): x0 = (a + b) / 2
 * everywhere. */
#define TWO_NODES(stop) TWO_NODES_D(stop, "fifo")
#define TWO_NODES_D(stop, disc) \
    "{\"seed\": 3, \"nodes\": 2, \"model\": {\"kind\": \"logistic\"}," \
    " \"data\": {\"train\": 64, \"test\": 16, \"features\": 3}," \
    " \"compute\": {\"step_time_s\": 0.01}, \"topology\": {\"kind\": \"complete\"}," \
    " \"network\": {\"latency_s\": 0, \"bandwidth_Bps\": 1e9, \"bytes_per_param\": 4," \
    "   \"discipline\": \"" disc "\"," \
    "   \"links\": [{\"from\": [1], \"to\": [0], \"directed\": true, \"bandwidth_Bps\": 1000}]}," \
    " \"algorithm\": {\"name\": \"divshare\", \"lr\": 0, \"batch\": 4, \"fragments\": 2," \
    "   \"fanout\": 1}, \"stop\": {\"time_s\": " #stop "}}"

START_TEST(test_two_nodes_per_coordinate)
{
    run_result res;
    run_ds(TWO_NODES(0.025), &res);
    ck_assert_uint_eq(cap_P, 4);
    int averaged = 0;
    for (size_t k = 0; k < 4; k++) {
        double a = init_of(0, k), b = init_of(1, k);
        ck_assert_double_eq(cap_x[1][k], (a + b) / 2);
        ck_assert_msg(cap_x[0][k] == a || cap_x[0][k] == (a + b) / 2,
                      "coordinate %zu of node 0 is %.17g: neither %g nor %g", k, cap_x[0][k], a,
                      (a + b) / 2);
        averaged += cap_x[0][k] != a;
    }
    ck_assert_int_eq(averaged, 2);   /* one fragment of two coordinates */
    ck_assert_double_eq(stat_of(&res, "fragments_not_sent"), 0);
    ck_assert_double_eq(stat_of(&res, "fragments_sent"), 2 + 2 + 2);
    ck_assert_double_eq(stat_of(&res, "fragments_averaged"), 2 + 1);

    /* the same with fair-sharing NICs: one message alone in an uplink
     * leaves when FIFO's would (alg_uplink_idle_s is exact for it) */
    for (int d = 0; d < 2; d++) {
        run_ds(d ? TWO_NODES_D(0.035, "fair") : TWO_NODES(0.035), &res);
        for (size_t k = 0; k < 4; k++) {
            double a = init_of(0, k), b = init_of(1, k);
            ck_assert_double_eq(cap_x[0][k], (a + b) / 2);
            ck_assert_double_eq(cap_x[1][k], ((a + b) / 2 + a) / 2);
        }
        ck_assert_double_eq(stat_of(&res, "fragments_averaged"), 3 + 2 + 1);
        /* node 0: 2 a round; node 1: its round-1 pair, then one a fragment's
         * transfer (26 ms, 34 ms: the latter of round 3) */
        ck_assert_double_eq(stat_of(&res, "fragments_sent"), 6 + 2 + 1 + 1);
        ck_assert_double_eq(stat_of(&res, "fragments_not_sent"), 1);
    }
}
END_TEST

/* Node 0 three times slower, one fragment (the whole model), fast links:
 * node 1's models of 10 ms and 20 ms are both in hand at node 0's round
 * end (30 ms); the newer replaces the older, so x0 = (a + b) / 2, not
 * (a + 2 b) / 3 (node 1 averaged nothing before 30 ms: x1 stays b). */
START_TEST(test_newer_fragment_replaces)
{
    run_result res;
    run_ds("{\"seed\": 3, \"nodes\": 2, \"model\": {\"kind\": \"logistic\"},"
           " \"data\": {\"train\": 64, \"test\": 16, \"features\": 3},"
           " \"compute\": {\"step_time_s\": 0.01, \"groups\": [{\"nodes\": [0], \"slowdown\": 3}]},"
           " \"topology\": {\"kind\": \"complete\"},"
           " \"network\": {\"latency_s\": 0.0001, \"bandwidth_Bps\": 1e9},"
           " \"algorithm\": {\"name\": \"divshare\", \"lr\": 0, \"batch\": 4, \"fragments\": 1,"
           "   \"fanout\": 1}, \"stop\": {\"time_s\": 0.035}}", &res);
    for (size_t k = 0; k < 4; k++) {
        double a = init_of(0, k), b = init_of(1, k);
        ck_assert_double_eq(cap_x[0][k], (a + b) / 2);
        ck_assert_double_eq(cap_x[1][k], b);
    }
    ck_assert_double_eq(stat_of(&res, "fragments_replaced"), 1);
}
END_TEST

/* Four nodes, every fragment to all three neighbours, equal speeds, fast
 * links.  Round r's fragments hold the model before round r's averaging
 * and are averaged at round r + 1, so with y_r node i's model after round
 * r (y_0 = y_1 = a: nothing has arrived at round 1):
 *   y_r,i = (y_{r-1},i + sum_{j != i} y_{r-2},j) / 4,
 * which gives y_2 = m (the mean), y_3,i = (5 m - a_i) / 4, y_4,i =
 * (17 m - a_i) / 16 and y_5,i = (61 m + 3 a_i) / 64 after the 5 rounds
 * that end by 55 ms (m = 12 + k / 4, a_i = 8 i + k / 4).  Averaging the
 * fragments a node sends after averaging would give m from round 2 on. */
START_TEST(test_all_neighbours_closed_form)
{
    run_result res;
    run_ds("{\"seed\": 4, \"nodes\": 4, \"model\": {\"kind\": \"logistic\"},"
           " \"data\": {\"train\": 64, \"test\": 16, \"features\": 7},"
           " \"compute\": {\"step_time_s\": 0.01}, \"topology\": {\"kind\": \"complete\"},"
           " \"network\": {\"latency_s\": 0.0001, \"bandwidth_Bps\": 1e9},"
           " \"algorithm\": {\"name\": \"divshare\", \"lr\": 0, \"batch\": 4, \"fragments\": 3,"
           "   \"fanout\": 3}, \"stop\": {\"time_s\": 0.055}}", &res);
    ck_assert_uint_eq(cap_P, 8);
    for (int i = 0; i < 4; i++)
        for (size_t k = 0; k < cap_P; k++) {
            double m = 12.0 + 0.25 * (double)k, a = init_of(i, k);
            ck_assert_double_eq_tol(cap_x[i][k], (61 * m + 3 * a) / 64, 1e-12);
        }
    ck_assert_double_eq(stat_of(&res, "rounds_min"), 5);
    /* every round a node receives 3 x 3 fragments from its 3 neighbours */
    ck_assert_double_eq(stat_of(&res, "fragments_averaged"), 4 * 4 * 9);
}
END_TEST

/* Bytes: each node's round sends Omega J fragments that together hold J
 * models: J x P x 4 bytes a round, whatever Omega (P = 33 is not a
 * multiple of 4: the last fragment is larger).  Constant 10 ms steps, 8
 * nodes, stop at 105 ms: 10 rounds each, the last round's 12 pairs gone
 * 12 x 3.2 us after it.  With the timing-only model each fragment is
 * 1/Omega of message_bytes. */
START_TEST(test_bytes_per_round)
{
    run_result res;
    run_json("{\"nodes\": 8, \"model\": {\"kind\": \"softmax\"},"
             " \"data\": {\"train\": 2048, \"test\": 256, \"features\": 10, \"classes\": 3},"
             " \"compute\": {\"step_time_s\": 0.01}, \"topology\": {\"kind\": \"complete\"},"
             " \"network\": {\"latency_s\": 0.001, \"bandwidth_Bps\": 1e7},"
             " \"algorithm\": {\"name\": \"divshare\", \"fragments\": 4, \"fanout\": 3},"
             " \"stop\": {\"time_s\": 0.105}}", NULL, &res);
    ck_assert_int_eq(res.status, RUN_OK);
    ck_assert_int_eq(res.n_params, 33);
    ck_assert_double_eq(res.last.steps, 80);
    ck_assert_double_eq(stat_of(&res, "fragments_not_sent"), 0);
    ck_assert_double_eq(stat_of(&res, "fragments_sent"), 4.0 * 3 * 80);
    ck_assert_double_eq(res.last.bytes_sent, 3.0 * 33 * 4 * 80);

    run_json("{\"nodes\": 6, \"model\": {\"kind\": \"none\", \"message_bytes\": 1000},"
             " \"compute\": {\"step_time_s\": 0.01}, \"topology\": {\"kind\": \"complete\"},"
             " \"algorithm\": {\"name\": \"divshare\", \"fragments\": 8, \"fanout\": 2},"
             " \"stop\": {\"time_s\": 0.205}}", NULL, &res);
    ck_assert_int_eq(res.status, RUN_OK);
    ck_assert_double_eq(res.last.steps, 120);
    ck_assert_double_eq(res.last.bytes_sent, 2.0 * 1000 * 120);
}
END_TEST

START_TEST(test_divshare_options_checked)
{
    expect_prepare_error("{\"nodes\": 4, \"model\": {\"kind\": \"logistic\"},"
                         " \"data\": {\"train\": 64, \"test\": 16, \"features\": 3},"
                         " \"topology\": {\"kind\": \"complete\"},"
                         " \"algorithm\": {\"name\": \"divshare\", \"fragments\": 5, \"batch\": 4},"
                         " \"stop\": {\"steps\": 5}}",
                         "test.json: /algorithm/name: error: divshare fragments 5 exceeds the "
                         "model's 4 parameters");
    expect_prepare_error("{\"nodes\": 8, \"topology\": {\"kind\": \"ring\"},"
                         " \"algorithm\": {\"name\": \"divshare\", \"fanout\": 3},"
                         " \"stop\": {\"steps\": 5}}",
                         "test.json: /algorithm/name: error: divshare fanout 3 needs every node "
                         "to have at least 3 neighbours; node 0 has 2 (use a denser or the "
                         "complete topology)");
    expect_prepare_error("{\"nodes\": 4, \"algorithm\": {\"name\": \"divshare\","
                         " \"local_steps\": 1.5}, \"stop\": {\"steps\": 5}}",
                         "test.json: /algorithm/local_steps: error: must be an integer, got 1.5");
    expect_prepare_error("{\"nodes\": 4, \"algorithm\": {\"name\": \"divshare\","
                         " \"fragments\": 0}, \"stop\": {\"steps\": 5}}",
                         "test.json: /algorithm/fragments: error: must be in [1, 1e+06], got 0");
}
END_TEST

int main(void)
{
    Suite *su = suite_create("proto_divshare");
    TCase *tc = tcase_create("divshare");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, test_two_nodes_per_coordinate);
    tcase_add_test(tc, test_newer_fragment_replaces);
    tcase_add_test(tc, test_all_neighbours_closed_form);
    tcase_add_test(tc, test_bytes_per_round);
    tcase_add_test(tc, test_divshare_options_checked);
    suite_add_tcase(su, tc);
    SRunner *sr = srunner_create(su);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
