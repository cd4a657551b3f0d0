/* test_proto_comdml.c -- ComDML as its paper describes it (Mohammadabadi
 * et al., ICDCS 2024): the round makespan of a slow/fast pair against the
 * closed form of the pipelined split (front steps streaming activations,
 * the helper's own steps then its back steps, the back part returned),
 * the balance point where neither side idles, the wire size of the
 * activation and weight messages, the fallback when a partner fails, the
 * same figures on 1 and 3 threads, and the located error for a model that
 * cannot be cut.  Whole runs, exact figures computed by hand below.
 */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "test_util.h"

/* MLP 32-64-32-4, batch 16: per-sample FLOPs 4*32*64 = 8192 (layer 1),
 * 6*64*32 = 12288, 6*32*4 = 768; whole 21248.  Cut 1: front 8192 + head
 * 6*4*64 = 9728, back 4*64*32 + 768 = 8960; activations 16 x 64 x 4 bytes
 * + 16 labels x 4 = 4160 bytes; back part 64*32 + 32 + 32*4 + 4 = 2212
 * parameters = 8848 bytes.  Cut 2: front 21248 (no gain), back 512. */
#define FULL 21248.0
#define F1 (9728.0 / FULL)
#define B1 (8960.0 / FULL)
#define ACT1 4160.0
#define W1 8848.0

static void run_pair_net(const char *net, const char *extra_alg, const char *extra, double slow,
                         run_result *res)
{
    char json[3072];
    snprintf(json, sizeof json,
        "{\"seed\": 1, \"nodes\": 2,"
        " \"compute\": {\"step_time_s\": 0.01, \"groups\": [{\"nodes\": [0], \"slowdown\": %.17g}]},"
        " \"network\": {\"latency_s\": 0.001, %s, \"bytes_per_param\": 4},"
        " \"topology\": {\"kind\": \"complete\"},"
        " \"model\": {\"kind\": \"mlp\", \"hidden\": [64, 32]},"
        " \"data\": {\"train\": 2048, \"test\": 256, \"features\": 32, \"classes\": 4},"
        " \"algorithm\": {\"name\": \"comdml\", \"lr\": 0.05, \"batch\": 16,"
        "   \"local_steps\": 10%s}%s}", slow, net, extra_alg, extra);
    run_json(json, NULL, res);
}

static void run_pair(const char *extra_alg, const char *extra, double slow, run_result *res)
{
    run_pair_net("\"bandwidth_Bps\": 1e8", extra_alg, extra, slow, res);
}

/* Node 0 four times slower (Tj = 0.04 s, Tk = 0.01 s), H = 10: the
 * activations stream more slowly than the helper works, so the last
 * one binds: M = H Tj f1 + (a + A/B) + Tk b1 + (a + W/B), against H Tj =
 * 0.4 alone; cut 2 would save nothing (its front is the whole model). */
START_TEST(test_pair_closed_form)
{
    const double M = 10 * 0.04 * F1 + (0.001 + ACT1 / 1e8) + 0.01 * B1 + (0.001 + W1 / 1e8);
    run_result res;
    run_pair("", ", \"stop\": {\"time_s\": 1}", 4, &res);
    ck_assert_int_eq(res.status, RUN_OK);
    ck_assert_double_eq_tol(stat_of(&res, "first_predicted_work_s"), M, 1e-12);
    ck_assert_double_eq_tol(stat_of(&res, "first_work_s"), M, 1e-12);
    ck_assert_double_eq(stat_of(&res, "last_cut"), 1);
    ck_assert_double_eq(stat_of(&res, "fallbacks"), 0);

    /* the same through NICs of 1e8 B/s on links of 1e9: the slowest hop prices it */
    run_pair_net("\"bandwidth_Bps\": 1e9, \"up_Bps\": 1e8, \"down_Bps\": 1e8", "",
                 ", \"stop\": {\"time_s\": 1}", 4, &res);
    ck_assert_double_eq_tol(stat_of(&res, "first_predicted_work_s"), M, 1e-12);
    ck_assert_double_eq_tol(stat_of(&res, "first_work_s"), M, 1e-12);

    run_pair(", \"offload\": \"off\"", ", \"stop\": {\"time_s\": 1}", 4, &res);
    ck_assert_double_eq_tol(stat_of(&res, "first_work_s"), 0.4, 1e-12);
    ck_assert_double_eq(stat_of(&res, "pairs"), 0);
}
END_TEST

/* No pair when offloading does not pay: equal speeds, and a slow agent
 * whose helper could not beat it (the best cut's makespan is above H Tj). */
START_TEST(test_no_pair_when_it_does_not_pay)
{
    run_result res;
    run_pair("", ", \"stop\": {\"time_s\": 1}", 1, &res);
    ck_assert_double_eq(stat_of(&res, "pairs"), 0);
    ck_assert_double_eq_tol(stat_of(&res, "first_work_s"), 0.1, 1e-12);
    /* 1.5x: cut 1 would take 10*0.015*f1 + ... + the helper's 0.1 + 10 back
     * steps = 0.1 + 0.0421687 + a + W/B = 0.14326 < 0.15: it pays */
    run_pair("", ", \"stop\": {\"time_s\": 1}", 1.5, &res);
    ck_assert_double_eq(stat_of(&res, "pairs") > 0, 1);
    ck_assert_double_eq_tol(stat_of(&res, "first_work_s"),
                            0.1 + 10 * 0.01 * B1 + 0.001 + W1 / 1e8, 1e-12);
    /* 1.2x: the helper alone needs 0.1 + 0.042 + 0.001 > 0.12 */
    run_pair("", ", \"stop\": {\"time_s\": 1}", 1.2, &res);
    ck_assert_double_eq(stat_of(&res, "pairs"), 0);
    ck_assert_double_eq_tol(stat_of(&res, "first_work_s"), 0.12, 1e-12);
}
END_TEST

/* The balance point, timing-only model cut into 4 equal layers, H = 10,
 * Tk = 0.01, a = 1 ms, activations 1e5 bytes at 1e8 B/s (c_a = 2 ms), the
 * back half 1e5 bytes (c_w = 2 ms).  At cut 2 the slow agent's front
 * stream ends (with its last transfer) exactly when the helper is ready
 * for it: H Tj / 2 + c_a = H Tk + (H - 1) Tk / 2, i.e. Tj = 0.0286.  Both
 * finishing paths then give M = 0.143 + 0.002 + 0.005 + 0.002 = 0.1 +
 * 0.05 + 0.002 = 0.152; cuts 1 and 3 give 0.1775 and 0.2205, alone 0.286. */
START_TEST(test_balance_point)
{
    const char *json =
        "{\"seed\": 1, \"nodes\": 2,"
        " \"compute\": {\"step_time_s\": 0.01, \"groups\": [{\"nodes\": [0], \"slowdown\": 2.86}]},"
        " \"network\": {\"latency_s\": 0.001, \"bandwidth_Bps\": 1e8},"
        " \"topology\": {\"kind\": \"complete\"},"
        " \"model\": {\"kind\": \"none\", \"message_bytes\": 200000},"
        " \"algorithm\": {\"name\": \"comdml\", \"local_steps\": 10, \"layers\": 4,"
        "   \"act_bytes\": 100000}, \"stop\": {\"time_s\": 1}}";
    run_result res;
    run_json(json, NULL, &res);
    ck_assert_double_eq(stat_of(&res, "last_cut"), 2);
    ck_assert_double_eq_tol(10 * 0.0286 / 2 + 0.002 + 0.005 + 0.002, 0.152, 1e-15);
    ck_assert_double_eq_tol(stat_of(&res, "first_predicted_work_s"), 0.152, 1e-12);
    ck_assert_double_eq_tol(stat_of(&res, "first_work_s"), 0.152, 1e-12);
    ck_assert_double_eq_tol(stat_of(&res, "mean_work_s"), stat_of(&res, "mean_predicted_work_s"),
                            1e-3);
}
END_TEST

/* Wire bytes, 4x case: the slow agent's third front step ends at 3 *
 * 0.04 f1 = 0.0549 and the helper's seventh step at 0.07, the tenth step
 * of the run (stop.steps 5 on 2 nodes): 3 activation messages so far.  At
 * 0.1884 the helper has sent all 10, the back part and the first chunk
 * of its ring all-reduce (half of the 4324 parameters), the slow agent nothing
 * more. */
START_TEST(test_message_bytes)
{
    run_result res;
    run_pair("", ", \"stop\": {\"steps\": 5}", 4, &res);
    ck_assert_double_eq(res.last.bytes_sent, 3 * ACT1);
    run_pair("", ", \"stop\": {\"time_s\": 0.1884}", 4, &res);
    ck_assert_double_eq(res.last.bytes_sent, 10 * ACT1 + W1 + 2162 * 4);
}
END_TEST

/* The helper (node 1) goes down for good at 0.05, declared at 0.07: the
 * slow agent finishes its front steps, then trains its back part itself
 * on its stored activations, H Tj (f1 + b1); no stall.  The slow agent
 * down instead: the helper drops it and is done with its own steps at
 * 0.1. */
START_TEST(test_fallback)
{
    run_result res;
    run_pair("", ", \"faults\": {\"detect_s\": 0.02, \"events\": [{\"kind\": \"schedule\","
             " \"nodes\": [1], \"down_s\": 0.05}]}, \"stop\": {\"time_s\": 2}", 4, &res);
    ck_assert_int_eq(res.status, RUN_OK);
    ck_assert_double_eq(stat_of(&res, "fallbacks"), 1);
    ck_assert_double_eq_tol(stat_of(&res, "first_work_s"), 10 * 0.04 * (F1 + B1), 1e-12);
    ck_assert_msg(stat_of(&res, "rounds") >= 4, "rounds %g", stat_of(&res, "rounds"));

    run_pair("", ", \"faults\": {\"detect_s\": 0.02, \"events\": [{\"kind\": \"schedule\","
             " \"nodes\": [0], \"down_s\": 0.05}]}, \"stop\": {\"time_s\": 2}", 4, &res);
    ck_assert_int_eq(res.status, RUN_OK);
    ck_assert_double_eq(stat_of(&res, "fallbacks"), 0);
    ck_assert_double_eq_tol(stat_of(&res, "first_work_s"), 0.1, 1e-12);
    ck_assert_msg(stat_of(&res, "rounds") >= 10, "rounds %g", stat_of(&res, "rounds"));
}
END_TEST

/* Eight agents of four speeds with lognormal noise and random failures:
 * it trains (the loss falls well below log 4), and 1 and 3 threads give
 * the same bits. */
START_TEST(test_trains_and_threads)
{
    const char *json =
        "{\"seed\": 2, \"nodes\": 8,"
        " \"compute\": {\"step_time_s\": 0.01, \"noise\": {\"dist\": \"lognormal\", \"sigma\": 0.3},"
        "   \"groups\": [{\"nodes\": [0, 1], \"slowdown\": 8}, {\"nodes\": [2, 3], \"slowdown\": 2}]},"
        " \"network\": {\"latency_s\": 0.001, \"bandwidth_Bps\": 1e8, \"bytes_per_param\": 4},"
        " \"topology\": {\"kind\": \"complete\"},"
        " \"model\": {\"kind\": \"mlp\", \"hidden\": [64, 32]},"
        " \"data\": {\"train\": 4096, \"test\": 512, \"features\": 32, \"classes\": 4},"
        " \"faults\": {\"events\": [{\"kind\": \"exponential\", \"mtbf_s\": 3, \"mttr_s\": 0.3}]},"
        " \"algorithm\": {\"name\": \"comdml\", \"lr\": 0.05, \"batch\": 16, \"local_steps\": 5},"
        " \"stop\": {\"time_s\": 4}}";
    run_result a, b;
    run_options o1 = { .threads = 1 }, o3 = { .threads = 3 };
    run_json(json, &o1, &a);
    run_json(json, &o3, &b);
    ck_assert_int_eq(a.status, RUN_OK);
    ck_assert_msg(a.last.train_loss < 0.5, "loss %g", a.last.train_loss);
    ck_assert_msg(stat_of(&a, "pairs") > 0, "no pair");
    ck_assert(a.last.train_loss == b.last.train_loss);
    ck_assert(a.last.bytes_sent == b.last.bytes_sent);
    ck_assert(a.events == b.events);
    ck_assert(stat_of(&a, "mean_work_s") == stat_of(&b, "mean_work_s"));
}
END_TEST

/* The back part the helper trains comes back into the slow agent's model:
 * lr 0 and node i's model all i + 1 (set after initialisation), so only
 * the averaging and the returned part move anything.  The helper (node 1)
 * trains its copy of the model it holds at the round's start, so the slow
 * agent's back part becomes the helper's 2s and the average is 1.5 on the
 * front, 2 on the back; without offloading 1.5 everywhere.  n_front = 64 *
 * 32 + 64 = 2112 of 4324. */
typedef struct hold { double *x[2]; size_t P; double copy[2][4324]; int rows; } hold;

static void set_model(void *v, int node, double *params, size_t n)
{
    hold *h = v;
    for (size_t k = 0; k < n; k++)
        params[k] = node + 1;
    h->x[node] = params;
    h->P = n;
}

/* The models as they are at each evaluation (the run's own buffers are
 * gone once it has ended); the last one is the final model. */
static void keep_models(void *v, const out_metrics_row *row)
{
    (void)row;
    hold *h = v;
    for (int w = 0; w < 2; w++)
        memcpy(h->copy[w], h->x[w], h->P * sizeof(double));
    h->rows++;
}

START_TEST(test_back_part_returned)
{
    for (int off = 0; off <= 1; off++) {
        char json[2048];
        snprintf(json, sizeof json,
            "{\"seed\": 1, \"nodes\": 2,"
            " \"compute\": {\"step_time_s\": 0.01, \"groups\": [{\"nodes\": [0], \"slowdown\": 4}]},"
            " \"network\": {\"latency_s\": 0.001, \"bandwidth_Bps\": 1e8, \"bytes_per_param\": 4},"
            " \"topology\": {\"kind\": \"complete\"},"
            " \"model\": {\"kind\": \"mlp\", \"hidden\": [64, 32]},"
            " \"data\": {\"train\": 2048, \"test\": 256, \"features\": 32, \"classes\": 4},"
            " \"algorithm\": {\"name\": \"comdml\", \"lr\": 0, \"batch\": 16,"
            "   \"local_steps\": 10, \"offload\": \"%s\"}, \"stop\": {\"time_s\": 0.5}}",
            off ? "off" : "auto");
        scn_scenario s;
        scn_error err;
        run_sim *r;
        ck_assert_msg(prepare_json(json, &s, &r, &err) == 0, "%s", err.msg);
        static hold h;
        memset(&h, 0, sizeof h);
        run_options o = { .init_params = set_model, .on_metrics = keep_models, .hook_ctx = &h };
        run_result res;
        char msg[1024];
        ck_assert_msg(run_execute(r, &o, &res, msg, sizeof msg) == 0, "%s", msg);
        ck_assert_uint_eq(h.P, 4324);
        ck_assert_int_gt(h.rows, 1);
        ck_assert_msg(stat_of(&res, "rounds") >= 1, "rounds %g", stat_of(&res, "rounds"));
        for (int w = 0; w < 2; w++)
            for (size_t k = 0; k < h.P; k++) {
                double want = off || k < 2112 ? 1.5 : 2.0;
                ck_assert_msg(h.copy[w][k] == want, "off=%d node %d [%zu] = %.17g, want %g", off,
                              w, k, h.copy[w][k], want);
            }
        run_destroy(r);
        scn_fini(&s);
    }
}
END_TEST

START_TEST(test_needs_layers)
{
    expect_prepare_error(
        "{\"nodes\": 2, \"model\": {\"kind\": \"softmax\"},"
        " \"data\": {\"train\": 256, \"test\": 64, \"features\": 4, \"classes\": 3},"
        " \"algorithm\": {\"name\": \"comdml\"}, \"stop\": {\"time_s\": 1}}",
        "test.json: /algorithm/name: error: comdml cuts the model at a layer boundary: it "
        "needs model \"mlp\" (or the timing-only \"none\")");
    expect_prepare_error(
        "{\"nodes\": 2, \"model\": {\"kind\": \"none\", \"message_bytes\": 1000},"
        " \"algorithm\": {\"name\": \"comdml\", \"local_steps\": 0}, \"stop\": {\"time_s\": 1}}",
        "test.json: /algorithm/local_steps: error: must be in [1, 1000], got 0");
}
END_TEST

int main(void)
{
    Suite *s = suite_create("comdml");
    TCase *tc = tcase_create("exact");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, test_pair_closed_form);
    tcase_add_test(tc, test_no_pair_when_it_does_not_pay);
    tcase_add_test(tc, test_balance_point);
    tcase_add_test(tc, test_message_bytes);
    tcase_add_test(tc, test_fallback);
    tcase_add_test(tc, test_trains_and_threads);
    tcase_add_test(tc, test_back_part_returned);
    tcase_add_test(tc, test_needs_layers);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
