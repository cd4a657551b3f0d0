/* test_fail_dec.c -- the decentralized protocols (hop, adpsgd, gossip,
 * epidemic, divshare) when a worker fails (issue 13, section 3): with one worker
 * down for good from 30% of the run, and down from 30% to 50%, every run
 * ends at its stop time with status ok, every worker that never failed
 * keeps at least half its steps per simulated second, once the node is
 * back the live workers together keep 90% of their rate before (nobody
 * waits for it to catch up; also with a return 1 ms after the
 * declaration, while slow nodes are still in rounds drawn before it), and
 * nobody sends to a node while it is declared failed (seen at its return,
 * by the send times of what it is delivered).  Exact invariants with lr 0: Hop's
 * average over the live neighbours is W^k x0 for the live path's
 * equal-weight W; AD-PSGD keeps the sum of all models; EL-Oracle keeps
 * the sum of the live models in every round drawn over them, and with m s
 * odd gives s nodes s - 1 models.  The protocols run through a wrapper of
 * their hooks that records steps, models, deliveries and declarations.
 */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "alg.h"
#include "test_util.h"

extern const alg_type alg_hop, alg_adpsgd, alg_gossip, alg_epidemic, alg_divshare;

#define MAXN 8
#define MAXREC 400

/* ---- the recording wrapper ---- */

static const alg_type *real;
static alg_type wrapped;
static alg_param_spec spec[ALG_MAX_PARAMS + 1];

static int    fail_node;          /* the node that fails */
static double t_down;             /* when it goes down */
static double t_declared, t_back; /* when the detector said so (-1: never) */
static unsigned steps_before[MAXN], steps_after[MAXN], steps_back[MAXN];
static unsigned late_to_failed;   /* delivered to fail_node, sent while it was declared */
static double rec[MAXN][MAXREC];  /* node i's first parameter when its k-th step ends */
static int n_rec[MAXN];

static void w_step(alg_ctx *ctx, void *state, int i, const double *grad)
{
    if (alg_now(ctx) < t_down)
        steps_before[i]++;
    else
        steps_after[i]++;
    if (t_back >= 0)
        steps_back[i]++;
    if (n_rec[i] < MAXREC && ctx->P > 0)
        rec[i][n_rec[i]++] = alg_params_const(ctx, i)[0];
    real->on_step_done(ctx, state, i, grad);
}

static void w_message(alg_ctx *ctx, void *state, int i, const cl_msg *m)
{
    if (i == fail_node && t_declared >= 0 && m->sent_at >= t_declared
        && (t_back < 0 || m->sent_at < t_back))
        late_to_failed++;
    real->on_message(ctx, state, i, m);
}

static void w_failure(alg_ctx *ctx, int peer, int failed)
{
    ck_assert_int_eq(peer, fail_node);
    if (failed)
        t_declared = alg_now(ctx);
    else
        t_back = alg_now(ctx);
    if (real->on_failure)
        real->on_failure(ctx, peer, failed);
}

/* Wraps `alg`; keys/values set its parameters' defaults (the replacement
 * protocol takes its parameters from its own table), NULL-terminated. */
static const alg_type *wrap(const alg_type *alg, const char *const *keys, const double *vals)
{
    real = alg;
    wrapped = *alg;
    wrapped.on_step_done = w_step;
    wrapped.on_message = w_message;
    wrapped.on_failure = w_failure;   /* gossip has none: it records the declarations only */
    int k = 0;
    for (; alg->params && alg->params[k].key; k++) {
        spec[k] = alg->params[k];
        for (int j = 0; keys && keys[j]; j++)
            if (strcmp(keys[j], spec[k].key) == 0)
                spec[k].def = vals[j];
    }
    memset(&spec[k], 0, sizeof spec[k]);
    if (alg->params)
        wrapped.params = spec;
    fail_node = -1;
    t_down = 1e300;
    t_declared = t_back = -1;
    late_to_failed = 0;
    memset(steps_before, 0, sizeof steps_before);
    memset(steps_after, 0, sizeof steps_after);
    memset(steps_back, 0, sizeof steps_back);
    memset(n_rec, 0, sizeof n_rec);
    return &wrapped;
}

/* ---- the "Done when" runs ---- */

typedef struct proto_case {
    const alg_type *alg;
    const char     *name, *topo;
    const char     *keys[4];
    double          vals[4];
} proto_case;

static const proto_case cases[] = {
    { &alg_hop, "hop", "ring", { NULL }, { 0 } },
    { &alg_hop, "hop", "ring", { "staleness", "overlap", NULL }, { 0, 0 } },
    { &alg_hop, "hop", "ring", { "staleness", "backup", "skip", NULL }, { 1, 1, 1 } },
    { &alg_adpsgd, "adpsgd", "ring", { NULL }, { 0 } },
    { &alg_gossip, "gossip", "ring", { NULL }, { 0 } },
    { &alg_gossip, "gossip", "ring", { "send", NULL }, { 1 } },
    { &alg_epidemic, "epidemic", "complete", { NULL }, { 0 } },
    { &alg_epidemic, "epidemic", "complete", { "fanout", NULL }, { 3 } },
    { &alg_epidemic, "epidemic", "complete", { "variant", NULL }, { 1 } },
    { &alg_epidemic, "epidemic", "complete", { "rounds", NULL }, { 1 } },
    { &alg_divshare, "divshare", "complete", { NULL }, { 0 } },
    { &alg_divshare, "divshare", "complete", { "fragments", "fanout", "local_steps", NULL }, { 5, 3, 2 } },
};

#define T_STOP 3.0
#define T_DOWN 0.9   /* 30% */
#define T_UP   1.5   /* 50% */

/* 8 workers, node 3 down from T_DOWN (for good when up_s is NULL). */
static void run_failure(const proto_case *pc, const char *up_s, const char *extra,
                        run_result *res)
{
    const alg_type *t = wrap(pc->alg, pc->keys, pc->vals);
    fail_node = 3;
    t_down = T_DOWN;
    char json[4096];
    snprintf(json, sizeof json,
        "{\"seed\": 5, \"nodes\": 8, \"topology\": {\"kind\": \"%s\"},"
        " \"compute\": {\"step_time_s\": 0.01, \"noise\": {\"dist\": \"lognormal\", \"sigma\": 0.3}},"
        " \"network\": {\"latency_s\": 0.001, \"bandwidth_Bps\": 1e7},"
        " \"model\": {\"kind\": \"logistic\"},"
        " \"data\": {\"train\": 1024, \"test\": 128, \"features\": 4, \"classes\": 2},"
        " \"faults\": {%s \"events\": [{\"kind\": \"schedule\", \"nodes\": [3], \"down_s\": %g%s%s}]},"
        " \"algorithm\": {\"name\": \"%s\", \"batch\": 8}, \"stop\": {\"time_s\": %g},"
        " \"metrics\": {\"every_s\": 0.5}}",
        pc->topo, extra, T_DOWN, up_s ? ", \"up_s\": " : "", up_s ? up_s : "", pc->name, T_STOP);
    run_options opt = { .algorithm = t };
    run_json(json, &opt, res);
}

/* The run ends at its stop time, ok; every worker that never failed keeps
 * at least half its rate; nothing is sent to the failed node while it is
 * declared failed. */
static void check_keeps_training(const proto_case *pc, const char *up_s, const char *extra)
{
    run_result res;
    run_failure(pc, up_s, extra, &res);
    char what[160];
    snprintf(what, sizeof what, "%s %s=%g %s, %s", pc->name, pc->keys[0] ? pc->keys[0] : "",
             pc->keys[0] ? pc->vals[0] : 0.0, up_s ? "transient" : "permanent", extra);
    ck_assert_msg(res.status == RUN_OK, "%s: %s", what, res.message);
    ck_assert_str_eq(res.stop_reason, "time");
    ck_assert_msg(t_declared > T_DOWN, "%s: never declared", what);
    if (up_s)
        ck_assert_double_eq_tol(t_back, atof(up_s), 1e-12);
    if (strstr(extra, "detect_s"))
        ck_assert_double_eq_tol(t_declared, T_DOWN + 0.08, 1e-12);
    else   /* twice the worst round, about 0.08 s here */
        ck_assert(t_declared < T_DOWN + 0.1);
    double before = 0, after = 0, worst = 1e300;
    for (int i = 0; i < 8; i++) {
        if (i == fail_node)
            continue;
        double rb = steps_before[i] / T_DOWN, ra = steps_after[i] / (T_STOP - T_DOWN);
        before += rb;
        after += ra;
        if (ra / rb < worst)
            worst = ra / rb;
        ck_assert_msg(ra >= 0.5 * rb, "%s: node %d %.1f steps/s before, %.1f after", what, i,
                      rb, ra);
    }
    ck_assert_msg(late_to_failed == 0, "%s: %u messages sent to node %d while declared failed",
                  what, late_to_failed, fail_node);
    double back = 0;
    for (int i = 0; i < 8; i++)
        if (i != fail_node && t_back >= 0)
            back += steps_back[i] / (T_STOP - t_back);
    /* once the node is back its neighbours do not wait for it to catch up:
     * the live workers together keep 90% of their rate before */
    if (t_back >= 0)
        ck_assert_msg(back >= 0.9 * before, "%s: %.1f steps/s before, %.1f after the return",
                      what, before / 7, back / 7);
    if (getenv("DTSIM_TEST_VERBOSE"))
        fprintf(stderr, "%-60s live steps/s %.1f before, %.1f after (worst node %.3f), %.1f after return\n", what,
                before / 7, after / 7, worst, back / 7);
}

START_TEST(test_permanent_failure)
{
    check_keeps_training(&cases[_i], NULL, "");
    check_keeps_training(&cases[_i], NULL, "\"rejoin\": \"neighbour\",");
}
END_TEST

START_TEST(test_transient_failure)
{
    check_keeps_training(&cases[_i], "1.5", "");
    check_keeps_training(&cases[_i], "1.5", "\"rejoin\": \"neighbour\",");
    check_keeps_training(&cases[_i], "1.5", "\"step\": \"resume\",");
    /* back 1 ms after its declaration (detect_s 0.08 s): the slowest nodes
     * are still in rounds drawn before it failed */
    check_keeps_training(&cases[_i], "0.981", "\"detect_s\": 0.08,");
}
END_TEST

/* ---- exact invariants with lr 0 ---- */

static double init_val[MAXN];
static void set_init(void *ctx, int node, double *x, size_t P)
{
    (void)ctx;
    for (size_t k = 0; k < P; k++)
        x[k] = init_val[node];
}

/* Hop, s = 0, on a ring of 4 whose node 2 is down for good from 0.5 ms,
 * before its first update can arrive (a node down at time 0 is never
 * declared failed: the cluster reports no going down for it):
 * the live nodes form the path 1 - 0 - 3, and once node 2 is declared
 * failed every iteration is x <- W x with the path's equal weights (1/3
 * each at node 0, 1/2 at the ends: node 2's weight went to the others).
 * With s = 0 iteration k takes exactly the neighbours' iteration-k
 * updates, so node i's model after k iterations is (W^k x0)_i; node 2's
 * model (100) never enters. */
START_TEST(test_hop_live_path_mixing)
{
    static const char *const keys[] = { "staleness", NULL };
    static const double vals[] = { 0 };
    for (int ov = 0; ov <= 1; ov++) {
        const alg_type *t = wrap(&alg_hop, keys, vals);
        spec[3].def = ov;   /* overlap */
        ck_assert_str_eq(spec[3].key, "overlap");
        fail_node = 2;
        init_val[0] = 0;
        init_val[1] = 3;
        init_val[2] = 100;
        init_val[3] = 9;
        char json[2048];
        snprintf(json, sizeof json,
            "{\"nodes\": 4, \"topology\": {\"kind\": \"ring\"}, \"compute\": {\"step_time_s\": 0.01},"
            " \"network\": {\"latency_s\": 0.001, \"bandwidth_Bps\": 1e7},"
            " \"model\": {\"kind\": \"logistic\"},"
            " \"data\": {\"train\": 256, \"test\": 64, \"features\": 4, \"classes\": 2},"
            " \"faults\": {\"events\": [{\"kind\": \"schedule\", \"nodes\": [2], \"down_s\": 0.0005}]},"
            " \"algorithm\": {\"name\": \"hop\", \"lr\": 0, \"batch\": 8}, \"stop\": {\"time_s\": 1}}");
        run_options opt = { .algorithm = t, .init_params = set_init };
        run_result res;
        run_json(json, &opt, &res);
        ck_assert_msg(res.status == RUN_OK, "%s", res.message);
        double x[4] = { 0, 3, 100, 9 };
        int live[3] = { 1, 0, 3 };
        int k_min = MAXREC;
        for (int q = 0; q < 3; q++)
            if (n_rec[live[q]] < k_min)
                k_min = n_rec[live[q]];
        ck_assert_int_ge(k_min, 40);
        ck_assert_int_eq(n_rec[2], 0);
        for (int k = 0; k < k_min; k++) {
            /* overlap on: the model at step end is x^k; off: x^k too
             * (lr 0: the step adds nothing before the send) */
            for (int q = 0; q < 3; q++)
                ck_assert_msg(fabs(rec[live[q]][k] - x[live[q]]) < 1e-12,
                              "overlap %d: node %d iteration %d: %.17g, expected %.17g", ov,
                              live[q], k, rec[live[q]][k], x[live[q]]);
            double n0 = (x[0] + x[1] + x[3]) / 3, n1 = (x[1] + x[0]) / 2, n3 = (x[3] + x[0]) / 2;
            x[0] = n0;
            x[1] = n1;
            x[3] = n3;
        }
    }
}
END_TEST

/* AD-PSGD's exchanges as the wrapper sees them: open[i] from the
 * delivery of active node i's request (its peer has averaged) to the
 * delivery of the reply; with none open the sum of all models is checked
 * at every step end. */
static int open_x[MAXN], sum_checks_after;
static double sum_err;

static void ad_message(alg_ctx *ctx, void *state, int i, const cl_msg *m)
{
    real->on_message(ctx, state, i, m);
    if (m->tag == 1)        /* alg_adpsgd.c's TAG_REQUEST */
        open_x[m->from] = 1;
    else if (m->tag == 2)   /* TAG_REPLY */
        open_x[i] = 0;
}

static void ad_step(alg_ctx *ctx, void *state, int i, const double *grad)
{
    int open = 0;
    for (int j = 0; j < ctx->n; j++)
        open += open_x[j];
    if (!open) {
        double sum = 0;
        for (int j = 0; j < ctx->n; j++)
            sum += alg_params_const(ctx, j)[0];
        if (fabs(sum - 28) > sum_err)
            sum_err = fabs(sum - 28);
        if (t_declared >= 0)
            sum_checks_after++;
    }
    real->on_step_done(ctx, state, i, grad);
}

/* AD-PSGD with lr 0, passive node 3 down for good from 0.3 s: its active
 * neighbours abandon the averagings it interrupted (x_i unchanged) and
 * average with their other neighbour; every completed averaging keeps the
 * pair's sum, so whenever no exchange is open the sum of all 8 models
 * (node 3's frozen) is 0 + 1 + ... + 7 = 28. */
START_TEST(test_adpsgd_abandon_keeps_sum)
{
    wrap(&alg_adpsgd, NULL, NULL);
    wrapped.on_message = ad_message;
    wrapped.on_step_done = ad_step;
    memset(open_x, 0, sizeof open_x);
    sum_checks_after = 0;
    sum_err = 0;
    fail_node = 3;
    for (int i = 0; i < 8; i++)
        init_val[i] = i;
    char json[2048];
    snprintf(json, sizeof json,
        "{\"seed\": 2, \"nodes\": 8, \"topology\": {\"kind\": \"ring\"},"
        " \"compute\": {\"step_time_s\": 0.01, \"noise\": {\"dist\": \"lognormal\", \"sigma\": 0.3}},"
        " \"network\": {\"latency_s\": 0.001, \"bandwidth_Bps\": 1e7},"
        " \"model\": {\"kind\": \"logistic\"},"
        " \"data\": {\"train\": 256, \"test\": 64, \"features\": 4, \"classes\": 2},"
        " \"faults\": {\"events\": [{\"kind\": \"schedule\", \"nodes\": [3], \"down_s\": 0.3}]},"
        " \"algorithm\": {\"name\": \"adpsgd\", \"lr\": 0, \"batch\": 8}, \"stop\": {\"time_s\": 1}}");
    run_options opt = { .algorithm = &wrapped, .init_params = set_init };
    run_result res;
    run_json(json, &opt, &res);
    ck_assert_msg(res.status == RUN_OK, "%s", res.message);
    ck_assert_double_ge(stat_of(&res, "averagings_abandoned"), 1);
    ck_assert_int_ge(sum_checks_after, 50);
    ck_assert_msg(sum_err < 1e-12, "sum off by %g", sum_err);
}
END_TEST

/* EL-Oracle, s = 2, lr 0, 8 nodes, node 3 down for good from 15 ms and
 * declared 15 ms later: the rounds drawn over the 7 live nodes are
 * 2-regular, so in each of them the live models' sum is kept exactly, from
 * a round at which the models are still far apart (spread > 1e-3: any
 * other rule would move the sum by far more than 1e-9); rounds before
 * (node 3 in the graph, its receivers not waiting for it) do not keep it.
 * With s = 3, 7 x 3 is odd: the graph on 8 vertices minus one gives three
 * nodes 2 models. */
START_TEST(test_epidemic_live_rounds_keep_sum)
{
    static const char *const keys[] = { "fanout", NULL };
    for (int s = 2; s <= 3; s++) {
        double vals[] = { s };
        const alg_type *t = wrap(&alg_epidemic, keys, vals);
        fail_node = 3;
        for (int i = 0; i < 8; i++)
            init_val[i] = 8 * i;
        char json[2048];
        snprintf(json, sizeof json,
            "{\"seed\": 3, \"nodes\": 8, \"topology\": {\"kind\": \"complete\"},"
            " \"compute\": {\"step_time_s\": 0.01, \"noise\": {\"dist\": \"lognormal\", \"sigma\": 0.3}},"
            " \"network\": {\"latency_s\": 0.001, \"bandwidth_Bps\": 1e7},"
            " \"model\": {\"kind\": \"logistic\"},"
            " \"data\": {\"train\": 256, \"test\": 64, \"features\": 4, \"classes\": 2},"
            " \"faults\": {\"events\": [{\"kind\": \"schedule\", \"nodes\": [3], \"down_s\": 0.015}],"
            " \"detect_s\": 0.015},"
            " \"algorithm\": {\"name\": \"epidemic\", \"lr\": 0, \"batch\": 8},"
            " \"stop\": {\"time_s\": 1.5}}");
        run_options opt = { .algorithm = t, .init_params = set_init };
        run_result res;
        run_json(json, &opt, &res);
        ck_assert_msg(res.status == RUN_OK, "%s", res.message);
        int k_min = MAXREC;
        for (int i = 0; i < 8; i++)
            if (i != 3 && n_rec[i] < k_min)
                k_min = n_rec[i];
        ck_assert_int_ge(k_min, 60);
        /* rec[i][k]: node i's model after k rounds */
        double last = 0, spread_from = 0;
        int from = -1;   /* the sum is kept from round `from` to the end */
        for (int k = 0; k < k_min; k++) {
            double sum = 0, lo = 1e300, hi = -1e300;
            for (int i = 0; i < 8; i++)
                if (i != 3) {
                    sum += rec[i][k];
                    lo = fmin(lo, rec[i][k]);
                    hi = fmax(hi, rec[i][k]);
                }
            if (k == 0 || fabs(sum - last) > 1e-9) {
                from = k;
                spread_from = hi - lo;
            }
            last = sum;
        }
        if (s == 2) {   /* a 2-regular graph on 7 nodes exists */
            ck_assert_msg(spread_from > 1e-3, "s=2: the live sum is kept only from round %d, "
                          "where the models are %g apart", from, spread_from);
            ck_assert_double_eq(stat_of(&res, "round_models_min"), 1);   /* waited-out rounds */
        } else {        /* 7 x 3 is odd: three nodes get 2 models in every live round */
            ck_assert_double_eq(stat_of(&res, "round_models_min"), 2);
        }
        ck_assert_double_eq(stat_of(&res, "round_models_max"), s);
    }
}
END_TEST

int main(void)
{
    Suite *su = suite_create("fail_dec");
    TCase *tc = tcase_create("fail_dec");
    tcase_set_timeout(tc, 60);
    int nc = (int)(sizeof cases / sizeof cases[0]);
    tcase_add_loop_test(tc, test_permanent_failure, 0, nc);
    tcase_add_loop_test(tc, test_transient_failure, 0, nc);
    tcase_add_test(tc, test_hop_live_path_mixing);
    tcase_add_test(tc, test_adpsgd_abandon_keeps_sum);
    tcase_add_test(tc, test_epidemic_live_rounds_keep_sum);
    suite_add_tcase(su, tc);
    SRunner *sr = srunner_create(su);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
