/* test_proto_fednova.c -- heterogeneity-aware local steps and normalized
 * averaging (alg_fednova.c) pinned by exact outcomes:
 *   - one round with the target gradient (each step lands on t_i) on a
 *     skewed partition and four step times: the time budget gives
 *     tau = 10, 5, 3, 2, and the server holds the closed form
 *     x0 - tau_eff sum p_i (x0 - t_i) / tau_i (fednova) or sum p_i t_i
 *     (plain);
 *   - two quadratics f_i = |x - a_i|^2 with tau = 8 and 2: the server's
 *     model after R rounds is the hand-iterated map, and its fixed point
 *     the closed form: plain averaging is biased toward the node with
 *     more steps (toward the tau-weighted mean as lr -> 0), FedNova's bias
 *     is O(lr) and vanishes as lr -> 0;
 *   - heavy-ball momentum: a_i = sum (1 - rho^k) / (1 - rho), the buffer
 *     zeroed each round (two rounds of a constant gradient);
 *   - a slowdown window decides the count at step times (6, not 10);
 *   - aggregation plain with local_steps epochs is fedavg with fraction 1,
 *     bit for bit; with equal step counts fednova is plain up to rounding;
 *   - AdaComm's schedule: F_0 of a zero logistic model is log 2, and
 *     tau_last = ceil(sqrt(F_last / F_0) tau_0) < tau_0 once the loss fell;
 *   - timing-only runs; the parameters' located errors.
 */
#include "exact_util.h"

/* ---- the quadratic gradient: 2 (x - a_i) ---- */

static double quad_a[MAXN][MAXP];
static int quad_rounds_seen;

static void quad_step(alg_ctx *ctx, void *st, int i, const double *grad)
{
    (void)grad;
    const double *x = alg_params_const(ctx, i);
    for (size_t k = 0; k < ctx->P; k++)
        fake[i][k] = 2.0 * (x[k] - quad_a[i][k]);
    inner->on_step_done(ctx, st, i, fake[i]);
}

static double x0_of(size_t k) { return 2.0 - 0.5 * (double)k; }
static void x0_init(void *ctx, int node, double *x, size_t P)
{
    (void)ctx;
    (void)node;
    for (size_t k = 0; k < P; k++)
        x[k] = x0_of(k);
}

/* Four nodes of 10, 20, 30 and 50 ms steps on a quantity-skewed partition. */
#define HETERO4(extra_alg, stop) \
    "{\"seed\": 2, \"nodes\": 4, \"model\": {\"kind\": \"logistic\"}," \
    " \"data\": {\"train\": 480, \"test\": 60, \"features\": 3, \"partition\": \"quantity\"}," \
    " \"compute\": {\"step_time_s\": 0.01, \"groups\": [{\"nodes\": [1], \"step_time_s\": 0.02}," \
    "   {\"nodes\": [2], \"step_time_s\": 0.03}, {\"nodes\": [3], \"step_time_s\": 0.05}]}," \
    " \"network\": {\"latency_s\": 0.0001, \"bandwidth_Bps\": 1e9}," \
    " \"algorithm\": {\"name\": \"fednova\", \"lr\": 0.1, \"batch\": 4" extra_alg "}," \
    " \"stop\": {\"time_s\": " stop "}}"

/* Round 0 of budget 0.1 s closes at about 0.1003 s, round 1 at 0.2006: at
 * 0.15 s the server holds x_1. */
static void one_round(const char *agg, run_result *res)
{
    char spec[128];
    snprintf(spec, sizeof spec, "round_time_s=0.1,aggregation=%s", agg);
    set_targets(4, MAXP);
    const char *json = strcmp(agg, "plain") == 0
        ? HETERO4(", \"round_time_s\": 0.1, \"aggregation\": \"plain\"", "0.15")
        : HETERO4(", \"round_time_s\": 0.1", "0.15");
    run_wrapped(json, wrap_p("fednova", G_TARGET, 0.1, spec), x0_init, res);
    ck_assert_int_eq(res->status, RUN_OK);
    ck_assert_double_eq(stat_of(res, "rounds"), 1);
    ck_assert_double_eq(stat_of(res, "gradients_applied"), 4);
    ck_assert_double_eq(stat_of(res, "local_steps_min"), 2);
    ck_assert_double_eq(stat_of(res, "local_steps_max"), 10);
    ck_assert_double_eq(stat_of(res, "local_steps_mean"), (10 + 5 + 3 + 2) / 4.0);
    size_t lo = cap_samples[0], hi = cap_samples[0];
    for (int i = 1; i < 4; i++) {
        lo = cap_samples[i] < lo ? cap_samples[i] : lo;
        hi = cap_samples[i] > hi ? cap_samples[i] : hi;
    }
    ck_assert_msg(hi > 2 * lo, "the partition is not skewed: %zu .. %zu", lo, hi);
}

START_TEST(test_one_round_normalized_closed_form)
{
    run_result res;
    one_round("fednova", &res);
    const double tau[4] = { 10, 5, 3, 2 };
    double W = 0, Wa = 0;
    for (int i = 0; i < 4; i++) {
        W += (double)cap_samples[i];
        Wa += (double)cap_samples[i] * tau[i];
    }
    double tau_eff = Wa / W;
    for (size_t k = 0; k < cap_P; k++) {
        double d = 0;
        for (int i = 0; i < 4; i++)
            d += (double)cap_samples[i] / W * (x0_of(k) - target[i][k]) / tau[i];
        double want = x0_of(k) - tau_eff * d;
        ck_assert_msg(fabs(cap_x[cap_server][k] - want) < 1e-12, "parameter %zu: %.17g, want "
                      "%.17g", k, cap_x[cap_server][k], want);
    }
}
END_TEST

START_TEST(test_one_round_plain_closed_form)
{
    run_result res;
    one_round("plain", &res);
    double W = 0;
    for (int i = 0; i < 4; i++)
        W += (double)cap_samples[i];
    for (size_t k = 0; k < cap_P; k++) {
        double want = 0;
        for (int i = 0; i < 4; i++)
            want += (double)cap_samples[i] * target[i][k];
        want /= W;
        ck_assert_msg(fabs(cap_x[cap_server][k] - want) < 1e-12, "parameter %zu: %.17g, want "
                      "%.17g", k, cap_x[cap_server][k], want);
    }
}
END_TEST

/* Heavy-ball momentum 0.5 and a constant gradient c_i per node: after tau
 * steps from a zero buffer x_i = x0 - lr a_i c_i with a_i = sum_{k=1..tau}
 * (1 - rho^k) / (1 - rho), so FedNova's round moves x by exactly
 * -lr tau_eff sum p_i c_i, tau_eff = sum p_i a_i.  The buffer is zeroed at
 * each round's model, so round 2 moves by the same again (stop at 0.25 s,
 * after round 1 closes at about 0.2006). */
static void const_step(alg_ctx *ctx, void *st, int i, const double *grad)
{
    (void)grad;
    for (size_t k = 0; k < ctx->P; k++)
        fake[i][k] = target[i][k];
    inner->on_step_done(ctx, st, i, fake[i]);
}

START_TEST(test_momentum_normalizer)
{
    set_targets(4, MAXP);
    const alg_type *a = wrap_p("fednova", G_TARGET, 0.1, "round_time_s=0.1");
    wrapped.on_step_done = const_step;
    run_result res;
    run_wrapped("{\"seed\": 2, \"nodes\": 4, \"model\": {\"kind\": \"logistic\"},"
                " \"data\": {\"train\": 480, \"test\": 60, \"features\": 3, \"partition\": \"quantity\"},"
                " \"compute\": {\"step_time_s\": 0.01, \"groups\": [{\"nodes\": [1], \"step_time_s\": 0.02},"
                "   {\"nodes\": [2], \"step_time_s\": 0.03}, {\"nodes\": [3], \"step_time_s\": 0.05}]},"
                " \"network\": {\"latency_s\": 0.0001, \"bandwidth_Bps\": 1e9},"
                " \"optimizer\": {\"momentum\": 0.5},"
                " \"algorithm\": {\"name\": \"fednova\", \"lr\": 0.1, \"batch\": 4, \"round_time_s\": 0.1},"
                " \"stop\": {\"time_s\": 0.25}}", a, x0_init, &res);
    ck_assert_int_eq(res.status, RUN_OK);
    ck_assert_double_eq(stat_of(&res, "rounds"), 2);
    const double tau[4] = { 10, 5, 3, 2 };
    double W = 0, Wa = 0;
    for (int i = 0; i < 4; i++) {
        double ai = 0;
        for (int k = 1; k <= tau[i]; k++)
            ai += (1 - pow(0.5, k)) / 0.5;
        W += (double)cap_samples[i];
        Wa += (double)cap_samples[i] * ai;
    }
    for (size_t k = 0; k < cap_P; k++) {
        double c = 0;
        for (int i = 0; i < 4; i++)
            c += (double)cap_samples[i] / W * target[i][k];
        double want = x0_of(k) - 2 * 0.1 * (Wa / W) * c;
        ck_assert_msg(fabs(cap_x[cap_server][k] - want) < 1e-12, "parameter %zu: %.17g, want "
                      "%.17g", k, cap_x[cap_server][k], want);
    }
}
END_TEST

/* ---- two quadratics, tau 8 and 2 ---- */

/* Node 0 steps in 10 ms, node 1 in 40 ms, budget 80 ms: tau = 8 and 2;
 * an iid split of 480 samples, p = 1/2 each.  a_0 = k / 4, a_1 = a_0 + 1. */
static void run_quadratic(const char *agg, double lr, double stop_s, run_result *res)
{
    char json[2048], spec[128];
    snprintf(json, sizeof json,
        "{\"seed\": 2, \"nodes\": 2, \"model\": {\"kind\": \"logistic\"},"
        " \"data\": {\"train\": 480, \"test\": 60, \"features\": 3},"
        " \"compute\": {\"step_time_s\": 0.01, \"groups\": [{\"nodes\": [1], \"step_time_s\": 0.04}]},"
        " \"network\": {\"latency_s\": 0.0001, \"bandwidth_Bps\": 1e9},"
        " \"algorithm\": {\"name\": \"fednova\", \"lr\": %g, \"batch\": 4,"
        "   \"round_time_s\": 0.08, \"aggregation\": \"%s\"},"
        " \"stop\": {\"time_s\": %g}}", lr, agg, stop_s);
    snprintf(spec, sizeof spec, "round_time_s=0.08,aggregation=%s", agg);
    for (size_t k = 0; k < MAXP; k++) {
        quad_a[0][k] = 0.25 * (double)k;
        quad_a[1][k] = quad_a[0][k] + 1.0;
    }
    const alg_type *a = wrap_p("fednova", G_TARGET, lr, spec);
    wrapped.on_step_done = quad_step;
    run_wrapped(json, a, x0_init, res);
    ck_assert_int_eq(res->status, RUN_OK);
    ck_assert_uint_eq(cap_samples[0], cap_samples[1]);
    ck_assert_double_eq(stat_of(res, "local_steps_min"), 2);
    ck_assert_double_eq(stat_of(res, "local_steps_max"), 8);
    quad_rounds_seen = (int)stat_of(res, "rounds");
}

/* The server's map, step by step as the clients and the server do it. */
static double quad_map(double x, size_t k, double lr, int nova)
{
    const int tau[2] = { 8, 2 };
    double xi[2];
    for (int i = 0; i < 2; i++) {
        xi[i] = x;
        for (int s = 0; s < tau[i]; s++)
            xi[i] += -lr * (2.0 * (xi[i] - quad_a[i][k]));
    }
    if (!nova)
        return (240 * xi[0] + 240 * xi[1]) / 480.0;
    double d = 0;
    for (int i = 0; i < 2; i++)
        d += 0.5 * (x - xi[i]) / tau[i];
    return x - (0.5 * 8 + 0.5 * 2) * d;
}

/* The fixed point's share of the way from a_0 to a_1. */
static double quad_share(double lr, int nova)
{
    double q = 1 - 2 * lr, c0 = 1 - pow(q, 8), c1 = 1 - pow(q, 2);
    if (nova) {
        c0 /= 8;
        c1 /= 2;
    }
    return c1 / (c0 + c1);
}

static double quad_check(const char *agg, double lr, double stop_s)
{
    int nova = strcmp(agg, "fednova") == 0;
    run_result res;
    run_quadratic(agg, lr, stop_s, &res);
    ck_assert_int_ge(quad_rounds_seen, 100);
    for (size_t k = 0; k < cap_P; k++) {
        double x = x0_of(k);
        for (int r = 0; r < quad_rounds_seen; r++)
            x = quad_map(x, k, lr, nova);
        ck_assert_msg(fabs(cap_x[cap_server][k] - x) < 1e-12, "%s lr %g parameter %zu: %.17g, "
                      "hand-iterated %.17g", agg, lr, k, cap_x[cap_server][k], x);
        double star = quad_a[0][k] + quad_share(lr, nova);
        ck_assert_msg(fabs(x - star) < 1e-9, "%s lr %g parameter %zu: %.17g after %d rounds, "
                      "fixed point %.17g", agg, lr, k, x, quad_rounds_seen, star);
    }
    return cap_x[cap_server][0] - quad_a[0][0];   /* the share reached */
}

START_TEST(test_quadratic_fixed_points)
{
    /* lr 0.05 (q = 0.9): plain 0.19 / (0.19 + 0.5695) = 0.2502, biased
     * toward node 0 (8 steps, a_0); FedNova 0.095 / (0.095 + 0.0712) =
     * 0.5716; the true minimizer is at 1/2 */
    double plain = quad_check("plain", 0.05, 10);
    double nova = quad_check("fednova", 0.05, 10);
    ck_assert_double_eq_tol(plain, 0.19 / (0.19 + (1 - pow(0.9, 8))), 1e-9);
    ck_assert_double_eq_tol(nova, 0.095 / (0.095 + (1 - pow(0.9, 8)) / 8), 1e-9);
    ck_assert_double_lt(plain, 0.26);
    ck_assert_double_gt(nova, 0.57);
    ck_assert_double_lt(nova, 0.572);
    /* lr 0.005: plain tends to the tau-weighted 2 / (8 + 2) = 0.2, FedNova
     * to 1/2, its bias about a tenth of lr 0.05's */
    double plain_s = quad_check("plain", 0.005, 45);
    double nova_s = quad_check("fednova", 0.005, 45);
    ck_assert_double_lt(fabs(plain_s - 0.2), 0.006);
    ck_assert_double_lt(fabs(nova_s - 0.5), 0.008);
    ck_assert_double_gt(fabs(nova_s - 0.5), fabs(nova - 0.5) / 12);
    ck_assert_double_lt(fabs(nova_s - 0.5), fabs(nova - 0.5) / 8);
}
END_TEST

/* ---- the count is decided at step times ---- */

/* Node 0's steps take 10 ms, three times that from 50 ms on: 5 steps to
 * 0.05, the sixth ends at 0.08 and predicts the next to end at 0.11 > 0.1:
 * 6 steps.  Node 1 is not slowed: 10. */
START_TEST(test_slowdown_decides_the_count)
{
    run_result res;
    run_wrapped("{\"seed\": 2, \"nodes\": 2, \"model\": {\"kind\": \"logistic\"},"
                " \"data\": {\"train\": 480, \"test\": 60, \"features\": 3},"
                " \"compute\": {\"step_time_s\": 0.01, \"slowdowns\": [{\"kind\": \"window\","
                "   \"nodes\": [0], \"start_s\": 0.0501, \"factor\": 3}]},"
                " \"network\": {\"latency_s\": 0, \"bandwidth_Bps\": 1e15},"
                " \"algorithm\": {\"name\": \"fednova\", \"lr\": 0.1, \"batch\": 4,"
                "   \"round_time_s\": 0.1}, \"stop\": {\"time_s\": 0.15}}",
                wrap_p("fednova", G_ZERO, 0.1, "round_time_s=0.1"), x0_init, &res);
    ck_assert_int_eq(res.status, RUN_OK);
    ck_assert_double_eq(stat_of(&res, "rounds"), 1);
    ck_assert_double_eq(stat_of(&res, "local_steps_min"), 6);
    ck_assert_double_eq(stat_of(&res, "local_steps_max"), 10);
}
END_TEST

/* ---- against fedavg and between the aggregations ---- */

static out_metrics_row rows[2][64];
static int n_rows[2], which;
static void keep_row(void *ctx, const out_metrics_row *row)
{
    (void)ctx;
    if (n_rows[which] < 64)
        rows[which][n_rows[which]++] = *row;
}

#define REAL(alg) \
    "{\"seed\": 4, \"nodes\": 6, \"model\": {\"kind\": \"softmax\", \"l2\": 0.0001}," \
    " \"data\": {\"train\": 2048, \"test\": 512, \"features\": 8, \"classes\": 3," \
    "   \"partition\": \"dirichlet\", \"alpha\": 0.5}," \
    " \"compute\": {\"step_time_s\": 0.01, \"noise\": {\"dist\": \"lognormal\", \"sigma\": 0.4}," \
    "   \"groups\": [{\"nodes\": [\"0-1\"], \"slowdown\": 3}]}," \
    " \"network\": {\"latency_s\": 0.001, \"bandwidth_Bps\": 1e7}," \
    " \"algorithm\": {\"name\": " alg "}, \"stop\": {\"time_s\": 6}, \"metrics\": {\"every_s\": 0.5}}"

static void run_rows(const char *json, int slot, run_result *res)
{
    which = slot;
    n_rows[slot] = 0;
    run_options opt = { .on_metrics = keep_row };
    run_json(json, &opt, res);
    ck_assert_int_eq(res->status, RUN_OK);
}

START_TEST(test_plain_epochs_is_fedavg)
{
    run_result a, b;
    run_rows(REAL("\"fedavg\", \"lr\": 0.05, \"batch\": 16, \"fraction\": 1"), 0, &a);
    run_rows(REAL("\"fednova\", \"lr\": 0.05, \"batch\": 16, \"aggregation\": \"plain\","
                  " \"local_steps\": \"epochs\""), 1, &b);
    ck_assert_int_eq(n_rows[0], 13);
    ck_assert_int_eq(n_rows[1], n_rows[0]);
    ck_assert_uint_eq(a.events, b.events);
    ck_assert_mem_eq(rows[0], rows[1], (size_t)n_rows[0] * sizeof rows[0][0]);
    ck_assert_double_eq(stat_of(&a, "gradients_applied"), stat_of(&b, "gradients_applied"));
    ck_assert_double_lt(stat_of(&b, "local_steps_min"), stat_of(&b, "local_steps_max"));
    ck_assert_double_lt(a.last.train_loss, rows[0][0].train_loss - 0.2);
}
END_TEST

START_TEST(test_equal_steps_fednova_is_plain)
{
    run_result a, b;
    run_rows(REAL("\"fednova\", \"lr\": 0.05, \"batch\": 16, \"aggregation\": \"plain\","
                  " \"local_steps\": \"fixed\", \"tau\": 7"), 0, &a);
    run_rows(REAL("\"fednova\", \"lr\": 0.05, \"batch\": 16, \"local_steps\": \"fixed\","
                  " \"tau\": 7"), 1, &b);
    ck_assert_int_eq(n_rows[1], n_rows[0]);
    ck_assert_double_eq(stat_of(&b, "local_steps_min"), 7);
    ck_assert_double_eq(stat_of(&b, "local_steps_max"), 7);
    for (int r = 0; r < n_rows[0]; r++) {
        ck_assert_double_eq_tol(rows[1][r].train_loss, rows[0][r].train_loss, 1e-10);
        ck_assert_double_eq_tol(rows[1][r].test_accuracy, rows[0][r].test_accuracy, 1e-12);
    }
    /* unequal counts (a time budget on this cluster): no longer the same */
    run_rows(REAL("\"fednova\", \"lr\": 0.05, \"batch\": 16, \"aggregation\": \"plain\","
                  " \"round_time_s\": 0.1"), 0, &a);
    run_rows(REAL("\"fednova\", \"lr\": 0.05, \"batch\": 16, \"round_time_s\": 0.1"), 1, &b);
    ck_assert_double_lt(stat_of(&b, "local_steps_min") * 2, stat_of(&b, "local_steps_max"));
    ck_assert_double_gt(fabs(rows[1][n_rows[1] - 1].train_loss
                             - rows[0][n_rows[0] - 1].train_loss), 1e-6);
}
END_TEST

/* ---- AdaComm ---- */

/* The full local partition per step (batch 80 = 480 / 6), a zero logistic
 * model: every first loss of round 0 is log 2 exactly, so F_0 = log 2. */
START_TEST(test_adaptive_schedule)
{
    run_result res;
    run_wrapped("{\"seed\": 2, \"nodes\": 6, \"model\": {\"kind\": \"logistic\"},"
                " \"data\": {\"train\": 480, \"test\": 60, \"features\": 3, \"separation\": 2},"
                " \"compute\": {\"step_time_s\": 0.01},"
                " \"network\": {\"latency_s\": 0.0001, \"bandwidth_Bps\": 1e9},"
                " \"algorithm\": {\"name\": \"fednova\", \"lr\": 0.5, \"batch\": 80,"
                "   \"local_steps\": \"adaptive\", \"tau\": 8}, \"stop\": {\"time_s\": 3}}",
                wrap_p("fednova", G_REAL, 0.5, "local_steps=adaptive,tau=8"), zero_init, &res);
    ck_assert_int_eq(res.status, RUN_OK);
    double f0 = stat_of(&res, "loss_first"), f = stat_of(&res, "loss_last");
    ck_assert_double_eq_tol(f0, log(2.0), 1e-15);
    ck_assert_double_lt(f, 0.6 * f0);
    double tau = stat_of(&res, "tau_last");
    ck_assert_double_eq(tau, ceil(sqrt(f / f0) * 8));
    ck_assert_double_lt(tau, 8);
    ck_assert_double_eq(stat_of(&res, "local_steps_max"), 8);
    ck_assert_double_le(stat_of(&res, "local_steps_min"), tau);
}
END_TEST

/* Timing only: no loss, tau stays tau_0; the time budget still counts. */
START_TEST(test_timing_only)
{
    run_result res;
    run_json("{\"seed\": 2, \"nodes\": 3, \"model\": {\"kind\": \"none\", \"message_bytes\": 1e4},"
             " \"compute\": {\"step_time_s\": 0.01, \"groups\": [{\"nodes\": [2], \"slowdown\": 4}]},"
             " \"network\": {\"latency_s\": 0.0001, \"bandwidth_Bps\": 1e9},"
             " \"algorithm\": {\"name\": \"fednova\", \"round_time_s\": 0.2},"
             " \"stop\": {\"time_s\": 2}}", NULL, &res);
    ck_assert_int_eq(res.status, RUN_OK);
    ck_assert_double_eq(stat_of(&res, "local_steps_min"), 5);
    ck_assert_double_eq(stat_of(&res, "local_steps_max"), 20);
    ck_assert_double_eq(stat_of(&res, "rounds"), 9);
    run_json("{\"seed\": 2, \"nodes\": 3, \"model\": {\"kind\": \"none\", \"message_bytes\": 1e4},"
             " \"compute\": {\"step_time_s\": 0.01},"
             " \"network\": {\"latency_s\": 0.0001, \"bandwidth_Bps\": 1e9},"
             " \"algorithm\": {\"name\": \"fednova\", \"local_steps\": \"adaptive\", \"tau\": 3},"
             " \"stop\": {\"time_s\": 1}}", NULL, &res);
    ck_assert_int_eq(res.status, RUN_OK);
    ck_assert_double_eq(stat_of(&res, "tau_last"), 3);
    ck_assert_double_eq(stat_of(&res, "local_steps_min"), 3);
}
END_TEST

/* Every node fails, the server too (Exp(0.5 s) up, Exp(0.2 s) down),
 * and the default detector (most outages end undeclared): a client back while idle has
 * lost the round's model or its report and says hello, the server back
 * polls the clients it waits for.  Without that the run stalls within a
 * few seconds. */
START_TEST(test_undeclared_outages_do_not_stall)
{
    for (int ada = 0; ada <= 1; ada++) {
        run_result res;
        char json[1024];
        snprintf(json, sizeof json,
                 "{\"seed\": 7, \"nodes\": 16, \"model\": {\"kind\": \"none\", \"message_bytes\": 1e4},"
                 " \"compute\": {\"step_time_s\": 0.01, \"noise\": {\"dist\": \"lognormal\", \"sigma\": 0.3}},"
                 " \"network\": {\"latency_s\": 0.0005, \"bandwidth_Bps\": 1e8},"
                 " \"faults\": {\"events\": [{\"kind\": \"exponential\","
                 "   \"mtbf_s\": 0.3, \"mttr_s\": 0.05}]},"
                 " \"algorithm\": {\"name\": \"fednova\"%s},"
                 " \"stop\": {\"time_s\": 30}}",
                 ada ? ", \"local_steps\": \"adaptive\"" : "");
        run_json(json, NULL, &res);
        ck_assert_msg(res.status == RUN_OK, "%s", res.message);
        ck_assert_double_gt(stat_of(&res, "models_resent"), 10);
        ck_assert_double_ge(stat_of(&res, "rounds"), 10);
    }
}
END_TEST

/* ---- located errors ---- */

#define BAD(alg, more) \
    "{\"nodes\": 2, \"model\": {\"kind\": \"logistic\"}, \"data\": {\"train\": 64, \"test\": 8," \
    " \"features\": 2}" more ", \"stop\": {\"time_s\": 1}," \
    " \"algorithm\": {\"name\": \"fednova\"" alg "}}"

START_TEST(test_errors)
{
    expect_prepare_error(BAD(", \"aggregation\": \"mean\"", ""),
                         "test.json: /algorithm/aggregation: error: unknown value \"mean\" "
                         "(expected one of: fednova, plain)");
    expect_prepare_error(BAD(", \"local_steps\": 4", ""),
                         "test.json: /algorithm/local_steps: error: must be one of: time, "
                         "epochs, fixed, adaptive; got a number");
    expect_prepare_error(BAD(", \"round_time_s\": 0", ""),
                         "test.json: /algorithm/round_time_s: error: must be in [1e-09, "
                         "1e+09], got 0");
    expect_prepare_error(BAD(", \"tau\": 0", ""),
                         "test.json: /algorithm/tau: error: must be in [1, 1e+09], got 0");
    expect_prepare_error(BAD(", \"local_steps\": \"fixed\", \"round_time_s\": 2", ""),
                         "test.json: /algorithm/name: error: fednova round_time_s applies to "
                         "local_steps \"time\", not \"fixed\"");
    expect_prepare_error(BAD(", \"tau\": 4", ""),
                         "test.json: /algorithm/name: error: fednova tau applies to local_steps "
                         "\"fixed\" or \"adaptive\", not \"time\"");
    expect_prepare_error(BAD(", \"local_epochs\": 2, \"local_steps\": \"adaptive\"", ""),
                         "test.json: /algorithm/name: error: fednova local_epochs applies to "
                         "local_steps \"epochs\", not \"adaptive\"");
    expect_prepare_error(BAD("", ", \"optimizer\": {\"momentum\": 0.9, \"nesterov\": true}"),
                         "test.json: /algorithm/name: error: fednova aggregation \"fednova\" "
                         "normalizes heavy-ball momentum, not Nesterov's (set optimizer nesterov "
                         "false, or aggregation \"plain\")");
}
END_TEST

int main(void)
{
    Suite *s = suite_create("proto_fednova");
    TCase *tc = tcase_create("fednova");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, test_one_round_normalized_closed_form);
    tcase_add_test(tc, test_one_round_plain_closed_form);
    tcase_add_test(tc, test_momentum_normalizer);
    tcase_add_test(tc, test_quadratic_fixed_points);
    tcase_add_test(tc, test_slowdown_decides_the_count);
    tcase_add_test(tc, test_plain_epochs_is_fedavg);
    tcase_add_test(tc, test_equal_steps_fednova_is_plain);
    tcase_add_test(tc, test_adaptive_schedule);
    tcase_add_test(tc, test_timing_only);
    tcase_add_test(tc, test_undeclared_outages_do_not_stall);
    tcase_add_test(tc, test_errors);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
