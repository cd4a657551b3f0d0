/* test_exact.c -- protocols, optimizers, faults, random streams and output
 * files against outcomes known exactly, so that a wrong weight, a wrong
 * mean, a missing de-bias or swapped columns changes a number (issue 14;
 * each test names the mutants of tests/mutants.tsv it kills).
 *
 * The protocols run wrapped: the wrapper replaces the trainer's gradient
 * by a chosen one and copies every node's parameters (and the mixing
 * weights, and the local sample counts) when the run asks the protocol for
 * its statistics at the end.  Two gradients make the math closed-form:
 *   zero    the models change only by averaging: after k synchronous
 *           rounds of D-PSGD or gossip local SGD, X = W^k X0;
 *   target  (x_i - t_i) / lr, so one SGD step from x_i lands on t_i
 *           exactly, whatever the number of local steps: a server that
 *           applies the mean of such gradients holds mean(t); FedAvg
 *           holds sum n_i t_i / sum n_i.
 */
#include <check.h>
#include <dirent.h>
#include <errno.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "alg.h"
#include "alg_host.h"
#include "mdl_optim.h"
#include "test_util.h"

#define MAXN 24
#define MAXP 16
#define MAXE 256

enum { G_REAL, G_ZERO, G_TARGET };

static const alg_type *inner;
static alg_type wrapped;
static int grad_mode;
static double lr_used;
static double target[MAXN][MAXP];
static double fake[MAXN][MAXP];
static long   steps_of[MAXN];

/* what the run left */
static int    cap_n, cap_n_all, cap_server;
static size_t cap_P;
static double cap_x[MAXN + 2][MAXP];
static size_t cap_samples[MAXN];
static size_t cap_off[MAXN + 1];
static int    cap_nbr[MAXE];
static double cap_w[MAXE], cap_self[MAXN];

static void fake_step(alg_ctx *ctx, void *st, int i, const double *grad)
{
    steps_of[i]++;
    if (grad_mode == G_REAL) {
        inner->on_step_done(ctx, st, i, grad);
        return;
    }
    const double *x = alg_params_const(ctx, i);
    for (size_t k = 0; k < ctx->P; k++)
        fake[i][k] = grad_mode == G_ZERO ? 0.0 : (x[k] - target[i][k]) / lr_used;
    inner->on_step_done(ctx, st, i, fake[i]);
}

static int capture(const alg_ctx *ctx, const char **keys, double *values, int max)
{
    ck_assert_int_le(ctx->n_all, MAXN + 2);
    ck_assert_uint_le(ctx->P, MAXP);
    cap_n = ctx->n;
    cap_n_all = ctx->n_all;
    cap_server = ctx->server;
    cap_P = ctx->P;
    for (int i = 0; i < ctx->n_all; i++)
        memcpy(cap_x[i], alg_params_const(ctx, i), ctx->P * sizeof(double));
    for (int i = 0; i < ctx->n; i++)
        cap_samples[i] = alg_local_samples(ctx, i);
    const topo_graph *g = ctx->g;
    if (g && g->n == ctx->n && g->off[g->n] <= MAXE) {
        memcpy(cap_off, g->off, (size_t)(g->n + 1) * sizeof(size_t));
        memcpy(cap_nbr, g->nbr, g->off[g->n] * sizeof(int));
        memcpy(cap_w, g->w, g->off[g->n] * sizeof(double));
        memcpy(cap_self, g->self_w, (size_t)g->n * sizeof(double));
    }
    return inner->stats ? inner->stats(ctx, keys, values, max) : 0;
}

/* A replacement algorithm runs with its parameters' defaults (run.h):
 * the wrapper sets the scenario's values again before the protocol starts. */
static struct { const char *key; double num; const char *str; } wparam[8];
static int n_wparam;

static int w_shared_init(alg_ctx *ctx)
{
    for (int q = 0; q < n_wparam; q++) {
        int k = alg_params_index(inner, wparam[q].key);
        ck_assert_msg(k >= 0, "no parameter %s", wparam[q].key);
        double v = wparam[q].num;
        if (wparam[q].str) {
            const char *const *c = inner->params[k].choices;
            int j = 0;
            while (c[j] && strcmp(c[j], wparam[q].str) != 0)
                j++;
            ck_assert_ptr_nonnull(c[j]);
            v = j;
        }
        ctx->param[k] = v;
    }
    return inner->shared_init ? inner->shared_init(ctx) : 0;
}

static void wset(const char *key, double num, const char *str)
{
    wparam[n_wparam].key = key;
    wparam[n_wparam].num = num;
    wparam[n_wparam].str = str;
    n_wparam++;
}

/* spec: the algorithm's own parameters again, "key=value,key=choice". */
static const alg_type *wrap_p(const char *name, int mode, double lr, const char *spec)
{
    static char buf[256];
    n_wparam = 0;
    snprintf(buf, sizeof buf, "%s", spec);
    for (char *t = strtok(buf, ","); t; t = strtok(NULL, ",")) {
        char *eq = strchr(t, '=');
        ck_assert_ptr_nonnull(eq);
        *eq = '\0';
        char *end;
        double v = strtod(eq + 1, &end);
        wset(t, v, *end ? eq + 1 : NULL);
    }
    inner = alg_find(name);
    ck_assert_ptr_nonnull(inner);
    wrapped = *inner;
    wrapped.on_step_done = fake_step;
    wrapped.stats = capture;
    wrapped.shared_init = w_shared_init;
    grad_mode = mode;
    lr_used = lr;
    memset(steps_of, 0, sizeof steps_of);
    return &wrapped;
}

static const alg_type *wrap(const char *name, int mode, double lr)
{
    return wrap_p(name, mode, lr, "");
}

/* Node i starts from x_i[k] = a_i + k / 8 with a_i spread and distinct. */
static double spread_of(int i, size_t k) { return (double)((i * 5) % 7) - 3.0 + 0.125 * (double)k; }
static void spread_init(void *ctx, int node, double *x, size_t P)
{
    (void)ctx;
    for (size_t k = 0; k < P; k++)
        x[k] = spread_of(node, k);
}
static void zero_init(void *ctx, int node, double *x, size_t P)
{
    (void)ctx;
    (void)node;
    memset(x, 0, P * sizeof *x);
}

static void set_targets(int n, size_t P)
{
    for (int i = 0; i < n; i++)
        for (size_t k = 0; k < P; k++)
            target[i][k] = 0.5 * (double)(i + 1) - 0.25 * (double)k + 0.1 * (double)(i * k % 3);
}

/* A logistic model of 4 parameters, equal 10 ms steps (no noise), fast links. */
#define BASE(n, extra) \
    "{\"seed\": 2, \"nodes\": " #n ", \"model\": {\"kind\": \"logistic\"}," \
    " \"data\": {\"train\": 480, \"test\": 60, \"features\": 3" extra "}," \
    " \"compute\": {\"step_time_s\": 0.01}," \
    " \"network\": {\"latency_s\": 0.0001, \"bandwidth_Bps\": 1e9},"

static void run_wrapped(const char *json, const alg_type *a, void (*init)(void *, int, double *, size_t),
                        run_result *res)
{
    run_options opt = { .algorithm = a, .init_params = init };
    run_json(json, &opt, res);
}

/* ---- servers: the mean of the gradients (ps-sync-sum, allreduce-mean, backup-count, ...) ---- */

/* Every worker's gradient points at its own target: a server applying the
 * mean lands on mean(t) after one round and stays there; the sum (or a
 * divisor off by one) lands elsewhere. */
static void expect_mean_of_targets(const char *alg, int node_to_check, int n_targets)
{
    double want[MAXP];
    for (size_t k = 0; k < cap_P; k++) {
        want[k] = 0;
        for (int i = 0; i < n_targets; i++)
            want[k] += target[i][k];
        want[k] /= n_targets;
    }
    for (size_t k = 0; k < cap_P; k++)
        ck_assert_msg(fabs(cap_x[node_to_check][k] - want[k]) < 1e-12,
                      "%s: parameter %zu is %.17g, the mean of the targets %.17g", alg, k,
                      cap_x[node_to_check][k], want[k]);
}

START_TEST(test_ps_sync_applies_the_mean)
{
    set_targets(4, MAXP);
    run_result res;
    run_wrapped(BASE(4, "") " \"algorithm\": {\"name\": \"ps-sync\", \"lr\": 0.1},"
                " \"stop\": {\"time_s\": 0.2}}", wrap("ps-sync", G_TARGET, 0.1), zero_init, &res);
    ck_assert_int_eq(res.status, RUN_OK);
    ck_assert_double_ge(stat_of(&res, "gradients_applied"), 8);
    expect_mean_of_targets("ps-sync", cap_server, 4);
}
END_TEST

START_TEST(test_allreduce_applies_the_mean)
{
    static const char *colls[] = { "ring", "recursive_doubling", "tree" };
    for (int c = 0; c < 3; c++) {
        char json[2048];
        snprintf(json, sizeof json, BASE(5, "") " \"algorithm\": {\"name\": \"allreduce\","
                 " \"lr\": 0.1, \"collective\": \"%s\"}, \"stop\": {\"time_s\": 0.2}}", colls[c]);
        set_targets(5, MAXP);
        run_result res;
        run_wrapped(json, wrap("allreduce", G_TARGET, 0.1), zero_init, &res);
        for (int i = 0; i < 5; i++)
            expect_mean_of_targets(colls[c], i, 5);
    }
}
END_TEST

/* Rennala with batch_gradients = n and backup with 0 backup workers are
 * synchronous SGD: the mean again.  Backup with equal targets: the mean of
 * any n - b of them is t. */
START_TEST(test_rennala_backup_apply_the_mean)
{
    set_targets(4, MAXP);
    run_result res;
    run_wrapped(BASE(4, "") " \"algorithm\": {\"name\": \"rennala\", \"lr\": 0.1},"
                " \"stop\": {\"time_s\": 0.2}}", wrap("rennala", G_TARGET, 0.1), zero_init, &res);
    expect_mean_of_targets("rennala", cap_server, 4);
    run_wrapped(BASE(4, "") " \"algorithm\": {\"name\": \"backup\", \"lr\": 0.1, \"backup\": 0},"
                " \"stop\": {\"time_s\": 0.2}}", wrap_p("backup", G_TARGET, 0.1, "backup=0"), zero_init, &res);
    expect_mean_of_targets("backup 0", cap_server, 4);
    for (int i = 1; i < 4; i++)
        memcpy(target[i], target[0], sizeof target[0]);
    run_wrapped(BASE(4, "") " \"algorithm\": {\"name\": \"backup\", \"lr\": 0.1, \"backup\": 1},"
                " \"stop\": {\"time_s\": 0.2}}", wrap("backup", G_TARGET, 0.1), zero_init, &res);
    expect_mean_of_targets("backup 1", cap_server, 1);
    /* each round applied n - b = 3 gradients */
    double applied = stat_of(&res, "gradients_applied");
    ck_assert_double_eq(fmod(applied, 3.0), 0.0);
    ck_assert_double_ge(applied, 9);
}
END_TEST

/* Local SGD synchronised by all-reduce: after a round every node holds the
 * exact average of the models its local steps reached, mean(t). */
START_TEST(test_localsgd_allreduce_mean)
{
    set_targets(5, MAXP);
    run_result res;
    run_wrapped(BASE(5, "") " \"algorithm\": {\"name\": \"local-sgd\", \"lr\": 0.1,"
                " \"local_steps\": 2}, \"stop\": {\"time_s\": 0.035}}",
                wrap_p("local-sgd", G_TARGET, 0.1, "local_steps=2"), zero_init, &res);
    /* at 0.035 s: synchronised at 0.02 (+ the collective), then one local
     * step ends at 0.03 + ..., moving every node to its own target */
    ck_assert_int_eq(res.status, RUN_OK);
    for (int i = 0; i < 5; i++)
        ck_assert_double_eq_tol(cap_x[i][0], target[i][0], 1e-12);
    run_wrapped(BASE(5, "") " \"algorithm\": {\"name\": \"local-sgd\", \"lr\": 0.1,"
                " \"local_steps\": 2}, \"stop\": {\"time_s\": 0.025}}",
                wrap_p("local-sgd", G_TARGET, 0.1, "local_steps=2"), zero_init, &res);
    for (int i = 0; i < 5; i++)
        expect_mean_of_targets("local-sgd", i, 5);
}
END_TEST

/* ---- FedAvg weights by samples (fedavg-unweighted) ---- */

START_TEST(test_fedavg_weighted_by_samples)
{
    set_targets(5, MAXP);
    run_result res;
    run_wrapped(BASE(5, ", \"partition\": \"quantity\"") " \"algorithm\": {\"name\": \"fedavg\","
                " \"lr\": 0.1, \"batch\": 4, \"fraction\": 1}, \"stop\": {\"time_s\": 2}}",
                wrap_p("fedavg", G_TARGET, 0.1, "fraction=1"), zero_init, &res);
    ck_assert_int_eq(res.status, RUN_OK);
    /* the partition is skewed, else the test could not tell */
    size_t lo = cap_samples[0], hi = cap_samples[0], tot = 0;
    for (int i = 0; i < 5; i++) {
        lo = cap_samples[i] < lo ? cap_samples[i] : lo;
        hi = cap_samples[i] > hi ? cap_samples[i] : hi;
        tot += cap_samples[i];
    }
    ck_assert_uint_eq(tot, 480);
    ck_assert_msg(hi > 2 * lo, "samples %zu .. %zu", lo, hi);
    for (size_t k = 0; k < cap_P; k++) {
        double want = 0;
        for (int i = 0; i < 5; i++)
            want += (double)cap_samples[i] * target[i][k];
        want /= (double)tot;
        ck_assert_msg(fabs(cap_x[cap_server][k] - want) < 1e-12, "parameter %zu: %.17g, want %.17g",
                      k, cap_x[cap_server][k], want);
    }
}
END_TEST

/* ---- mixing: X = W^k X0 on an irregular graph ---- */

static void mix_rounds(int n, int rounds, double x[][MAXP])
{
    double y[MAXN][MAXP];
    for (int r = 0; r < rounds; r++) {
        for (int i = 0; i < n; i++)
            for (size_t k = 0; k < cap_P; k++) {
                double v = cap_self[i] * x[i][k];
                for (size_t e = cap_off[i]; e < cap_off[i + 1]; e++)
                    v += cap_w[e] * x[cap_nbr[e]][k];
                y[i][k] = v;
            }
        memcpy(x, y, sizeof(double) * MAXP * (size_t)n);
    }
}

/* The graph has a node whose neighbours carry different weights. */
static void assert_irregular(int n)
{
    int found = 0;
    for (int i = 0; i < n && !found; i++)
        for (size_t e = cap_off[i] + 1; e < cap_off[i + 1]; e++)
            if (cap_w[e] != cap_w[cap_off[i]])
                found = 1;
    ck_assert_msg(found, "every node's neighbours have equal weights: the test cannot tell");
}

/* Which k in 0..20 gives the captured models; -1 when none. */
static int rounds_matching(int n)
{
    double x[MAXN][MAXP];
    for (int i = 0; i < n; i++)
        for (size_t k = 0; k < cap_P; k++)
            x[i][k] = spread_of(i, k);
    for (int r = 0; r <= 20; r++) {
        int same = 1;
        for (int i = 0; i < n && same; i++)
            for (size_t k = 0; k < cap_P && same; k++)
                same = fabs(x[i][k] - cap_x[i][k]) < 1e-12;
        if (same)
            return r;
        mix_rounds(n, 1, x);
    }
    return -1;
}

static const char *const irregular =
    "\"topology\": {\"kind\": \"erdos_renyi\", \"p\": 0.4},";

START_TEST(test_dpsgd_mixing_closed_form)
{
    char json[2048];
    snprintf(json, sizeof json, BASE(8, "") " %s \"algorithm\": {\"name\": \"dpsgd\", \"lr\": 0.1},"
             " \"stop\": {\"time_s\": 0.035}}", irregular);
    run_result res;
    run_wrapped(json, wrap("dpsgd", G_ZERO, 0.1), spread_init, &res);
    assert_irregular(8);
    /* rounds end at 0.01, 0.02, 0.03 s */
    ck_assert_int_eq(rounds_matching(8), 3);
}
END_TEST

START_TEST(test_localsgd_gossip_mixing_closed_form)
{
    char json[2048];
    snprintf(json, sizeof json, BASE(8, "") " %s \"algorithm\": {\"name\": \"local-sgd\","
             " \"lr\": 0.1, \"sync\": \"gossip\"}, \"stop\": {\"time_s\": 0.035}}", irregular);
    run_result res;
    run_wrapped(json, wrap_p("local-sgd", G_ZERO, 0.1, "local_steps=1,sync=gossip"), spread_init, &res);
    assert_irregular(8);
    ck_assert_int_eq(rounds_matching(8), 3);
}
END_TEST

/* ---- averaging protocols keep the mean of the models (lr 0) ---- */

static void mean_of(int n, double *m, int captured)
{
    for (size_t k = 0; k < cap_P; k++) {
        m[k] = 0;
        for (int i = 0; i < n; i++)
            m[k] += captured ? cap_x[i][k] : spread_of(i, k);
        m[k] /= n;
    }
}

static void expect_mean_kept(const char *alg, const char *json, int n)
{
    run_result res;
    run_wrapped(json, wrap(alg, G_ZERO, 0.1), spread_init, &res);
    ck_assert_int_eq(res.status, RUN_OK);
    double m0[MAXP], m1[MAXP];
    mean_of(n, m0, 0);
    mean_of(n, m1, 1);
    for (size_t k = 0; k < cap_P; k++)
        ck_assert_msg(fabs(m0[k] - m1[k]) < 1e-12, "%s: mean parameter %zu went from %.17g to %.17g",
                      alg, k, m0[k], m1[k]);
    /* and they mixed: the models are no longer the initial ones */
    ck_assert_msg(fabs(cap_x[0][0] - spread_of(0, 0)) > 1e-6, "%s: node 0 never mixed", alg);
}

START_TEST(test_adpsgd_keeps_mean)
{
    expect_mean_kept("adpsgd", BASE(6, "") " \"topology\": {\"kind\": \"ring\"},"
                     " \"algorithm\": {\"name\": \"adpsgd\", \"lr\": 0.1}, \"stop\": {\"time_s\": 0.3}}", 6);
}
END_TEST

START_TEST(test_prague_keeps_mean)
{
    expect_mean_kept("prague", BASE(6, "") " \"algorithm\": {\"name\": \"prague\", \"lr\": 0.1},"
                     " \"stop\": {\"time_s\": 0.3}}", 6);
}
END_TEST

START_TEST(test_hop_keeps_mean_on_regular)
{
    /* Hop averages its own model with the neighbours' updates, 1 / (1 +
     * count): on a complete graph of 4 without backups or staleness every
     * node averages the same 4 models, so all hold the mean */
    run_result res;
    run_wrapped(BASE(4, "") " \"topology\": {\"kind\": \"complete\"},"
                " \"algorithm\": {\"name\": \"hop\", \"lr\": 0.1, \"staleness\": 0},"
                " \"stop\": {\"time_s\": 0.015}}", wrap_p("hop", G_ZERO, 0.1, "staleness=0"), spread_init, &res);
    double m0[MAXP];
    mean_of(4, m0, 0);
    for (int i = 0; i < 4; i++)
        for (size_t k = 0; k < cap_P; k++)
            ck_assert_msg(fabs(cap_x[i][k] - m0[k]) < 1e-12, "node %d parameter %zu: %.17g, want %.17g",
                          i, k, cap_x[i][k], m0[k]);
}
END_TEST

/* ---- push-sum de-bias on weights that drift (sgp-debias, sgp-share, sgp-weight) ---- */

/* Equal models and lr 0: the de-biased z_i = x_i / w_i stay equal to the
 * common model whatever the weights do; without the de-bias they spread
 * with the weights.  With spread models they converge to the exact mean. */
START_TEST(test_sgp_debias_on_irregular_graph)
{
    char json[2048];
    snprintf(json, sizeof json, BASE(8, "") " %s \"algorithm\": {\"name\": \"sgp\", \"lr\": 0.1,"
             " \"graph\": \"topology\"}, \"stop\": {\"time_s\": 0.05}}", irregular);
    run_result res;
    run_wrapped(json, wrap_p("sgp", G_ZERO, 0.1, "graph=topology"), NULL, &res);
    ck_assert_int_eq(res.status, RUN_OK);
    for (int i = 1; i < 8; i++)
        for (size_t k = 0; k < cap_P; k++)
            ck_assert_msg(fabs(cap_x[i][k] - cap_x[0][k]) < 1e-12 * (1 + fabs(cap_x[0][k])),
                          "node %d parameter %zu: %.17g, node 0 %.17g", i, k, cap_x[i][k], cap_x[0][k]);
    snprintf(json, sizeof json, BASE(8, "") " %s \"algorithm\": {\"name\": \"sgp\", \"lr\": 0.1,"
             " \"graph\": \"topology\"}, \"stop\": {\"time_s\": 1.5}}", irregular);
    run_wrapped(json, wrap_p("sgp", G_ZERO, 0.1, "graph=topology"), spread_init, &res);
    double m0[MAXP];
    mean_of(8, m0, 0);
    for (int i = 0; i < 8; i++)
        for (size_t k = 0; k < cap_P; k++)
            ck_assert_msg(fabs(cap_x[i][k] - m0[k]) < 1e-9, "node %d parameter %zu: %.17g, mean %.17g",
                          i, k, cap_x[i][k], m0[k]);
}
END_TEST

/* ---- gossip learning merges by halves (gossip-merge, gossip-period) ---- */

/* Two nodes send each other their models every period_s: each merge is
 * (x + x_received) / 2, so after the first exchange both hold (a + b) / 2
 * exactly and never change again (lr 0). */
START_TEST(test_gossip_merge_half)
{
    run_result res;
    run_wrapped(BASE(2, "") " \"topology\": {\"kind\": \"complete\"},"
                " \"algorithm\": {\"name\": \"gossip\", \"lr\": 0.1, \"period_s\": 0.025},"
                " \"stop\": {\"time_s\": 0.2}}", wrap_p("gossip", G_ZERO, 0.1, "period_s=0.025"), spread_init, &res);
    for (int i = 0; i < 2; i++)
        for (size_t k = 0; k < cap_P; k++)
            ck_assert_double_eq(cap_x[i][k], (spread_of(0, k) + spread_of(1, k)) / 2);
    /* sends at 0.025 k for k = 1..7 (0.2 is the stop, the 8th may go or not) */
    ck_assert_double_ge(stat_of(&res, "sent_min"), 7);
    ck_assert_double_le(stat_of(&res, "sent_max"), 8);
}
END_TEST

/* ---- optimizers against a hand-computed trajectory (opt-*) ---- */

/* f(x) = x^2 / 4 + x / 5, g = x / 2 + 1 / 5, x0 = 1, lr 0.1; the values
 * were worked by hand: e.g. momentum 0.9 with weight decay 0.01, step 1:
 * d = 0.5 + 0.2 + 0.01 = 0.71, b = 0.71, x = 1 - 0.071 = 0.929. */
static void trajectory(mdl_optim_spec sp, const double want[3])
{
    mdl_optim *o = mdl_optim_create(&sp, 2, 1);
    ck_assert_ptr_nonnull(o);
    double x[2] = { 1.0, 1.0 };
    for (int k = 0; k < 3; k++) {
        double g = 0.5 * x[1] + 0.2;
        mdl_optim_step(o, 1, &x[1], &g, 1.0);
        ck_assert_msg(fabs(x[1] - want[k]) < 1e-15, "step %d: %.17g, want %.17g", k + 1, x[1], want[k]);
    }
    /* node 0 untouched, its momentum buffer too */
    double g0 = 0.7, x0 = x[0];
    mdl_optim_step(o, 0, &x0, &g0, 2.0);
    ck_assert_uint_eq(mdl_optim_updates(o, 0), 1);
    ck_assert_uint_eq(mdl_optim_updates(o, 1), 3);
    mdl_optim_destroy(o);
}

START_TEST(test_optimizer_trajectories)
{
    mdl_optim_spec sp = { .lr = 0.1, .schedule = MDL_SCHED_CONSTANT, .step_every = 1, .gamma = 1,
                          .total_steps = 1 };
    mdl_optim_spec m = sp;
    m.momentum = 0.9;
    m.weight_decay = 0.01;
    trajectory(m, (const double[3]){ 0.929, 0.797721, 0.618886129 });
    m.nesterov = 1;
    trajectory(m, (const double[3]){ 0.8651, 0.68576181, 0.477615209611 });
    mdl_optim_spec w = sp;
    w.weight_decay = 0.01;
    trajectory(w, (const double[3]){ 0.929, 0.861621, 0.797678329 });
    mdl_optim_spec h = sp;
    h.momentum = 0.9;
    trajectory(h, (const double[3]){ 0.93, 0.8005, 0.623925 });
    mdl_optim_spec u = sp;
    u.warmup_steps = 2;   /* lr 0.05, 0.1, 0.1 */
    trajectory(u, (const double[3]){ 0.965, 0.89675, 0.8319125 });
    /* the divisor of a summed gradient: lr * g / 4 */
    mdl_optim *o = mdl_optim_create(&sp, 1, 1);
    double x = 1, g = 2;
    mdl_optim_step(o, 0, &x, &g, 4.0);
    ck_assert_double_eq_tol(x, 0.95, 1e-15);
    mdl_optim_destroy(o);
    /* cosine: lr_min + (lr - lr_min) (1 + cos(pi k / T)) / 2 */
    mdl_optim_spec c = sp;
    c.schedule = MDL_SCHED_COSINE;
    c.total_steps = 4;
    c.lr_min = 0.02;
    ck_assert_double_eq_tol(mdl_optim_lr(&c, 0), 0.1, 1e-15);
    ck_assert_double_eq_tol(mdl_optim_lr(&c, 2), 0.06, 1e-15);
    ck_assert_double_eq_tol(mdl_optim_lr(&c, 4), 0.02, 1e-15);
    ck_assert_double_eq_tol(mdl_optim_lr(&c, 9), 0.02, 1e-15);
}
END_TEST

/* ---- trace.csv rows, read back ---- */

typedef struct trace_row { int node; char kind[8]; double start, end; int peer; } trace_row;

static int read_trace(const char *path, trace_row *rows, int max)
{
    FILE *f = fopen(path, "r");
    ck_assert_ptr_nonnull(f);
    char line[512];
    int n = 0;
    ck_assert_ptr_nonnull(fgets(line, sizeof line, f));
    while (n < max && fgets(line, sizeof line, f)) {
        trace_row *r = &rows[n];
        char *fld[6], *p = line;
        int nf = 0;
        while (nf < 6 && p) {   /* strsep: empty fields count */
            fld[nf++] = p;
            p = strchr(p, ',');
            if (p)
                *p++ = '\0';
        }
        if (nf < 6)
            continue;
        r->node = atoi(fld[0]);
        snprintf(r->kind, sizeof r->kind, "%s", fld[1]);
        r->start = atof(fld[2]);
        r->end = atof(fld[3]);
        r->peer = fld[4][0] ? atoi(fld[4]) : -1;
        n++;
    }
    fclose(f);
    return n;
}

static void rm_run_dir(const char *dir)
{
    const char *files[] = { "trace.csv", "metrics.csv", "nodes.csv", "run.json" };
    char path[600];
    for (int k = 0; k < 4; k++) {
        snprintf(path, sizeof path, "%s/%s", dir, files[k]);
        unlink(path);
    }
    ck_assert_int_eq(rmdir(dir), 0);
}

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

/* ---- output files ---- */

/* trace.csv of two nodes, three D-PSGD steps each (16-byte models over
 * 1e9 B/s: 16 ns on the wire after 0.1 ms latency), pinned row by row:
 * a send row is the sender's with its receiver as peer, a recv row the
 * receiver's with the sender as peer (out-trace-cols, out-trace-peer). */
START_TEST(test_trace_rows_pinned)
{
    char dir[] = "/tmp/dtsim-test-exact-XXXXXX", json[2048], path[600];
    ck_assert_ptr_nonnull(mkdtemp(dir));
    snprintf(json, sizeof json, BASE(2, "") " \"topology\": {\"kind\": \"complete\"},"
             " \"algorithm\": {\"name\": \"dpsgd\", \"lr\": 0.1}, \"stop\": {\"steps\": 3},"
             " \"output\": {\"trace\": true}}");
    run_options opt = { .out_dir = dir };
    run_result res;
    run_json(json, &opt, &res);
    snprintf(path, sizeof path, "%s/trace.csv", dir);
    FILE *f = fopen(path, "r");
    ck_assert_ptr_nonnull(f);
    static char got[4096];
    size_t len = fread(got, 1, sizeof got - 1, f);
    got[len] = '\0';
    fclose(f);
    ck_assert_str_eq(got,
        "node,kind,start_s,end_s,peer,bytes\n"
        "0,send,0,1.6e-08,1,16\n"
        "1,send,0,1.6e-08,0,16\n"
        "1,recv,0.0001,0.000100016,0,16\n"
        "0,recv,0.0001,0.000100016,1,16\n"
        "0,step,0,0.01,,0\n"
        "0,send,0.01,0.010000016,1,16\n"
        "1,step,0,0.01,,0\n"
        "1,send,0.01,0.010000016,0,16\n"
        "1,recv,0.0101,0.010100016,0,16\n"
        "0,recv,0.0101,0.010100016,1,16\n"
        "0,step,0.01,0.02,,0\n"
        "0,send,0.02,0.020000016,1,16\n"
        "1,step,0.01,0.02,,0\n"
        "1,send,0.02,0.020000016,0,16\n"
        "1,recv,0.0201,0.020100016,0,16\n"
        "0,recv,0.0201,0.020100016,1,16\n"
        "0,step,0.02,0.03,,0\n"
        "0,send,0.03,0.030000016,1,16\n"
        "1,step,0.02,0.03,,0\n"
        "1,send,0.03,0.030000016,0,16\n");
    rm_run_dir(dir);
}
END_TEST

/* Temporary files in dir; a folder the failed run removed has none (a run
 * folder holds no run.json or nothing: docs/outputs.md). */
static int tmp_files_in(const char *dir)
{
    DIR *d = opendir(dir);
    if (!d && errno == ENOENT)
        return 0;
    ck_assert_ptr_nonnull(d);
    int n = 0;
    struct dirent *e;
    while ((e = readdir(d)))
        if (strstr(e->d_name, ".tmp."))
            n++;
    closedir(d);
    return n;
}

/* A file-size limit of 8 KB makes trace.csv fail: the run reports the
 * write error (exit 1 for the command line) and leaves no temporary file
 * and no partial output behind (out-write-error, out-tmp-left). */
START_TEST(test_write_error_reported_and_cleaned)
{
    char dir[] = "/tmp/dtsim-test-exact-XXXXXX", json[2048];
    ck_assert_ptr_nonnull(mkdtemp(dir));
    signal(SIGXFSZ, SIG_IGN);
    struct rlimit rl;   /* the soft limit only: it can be raised again */
    ck_assert_int_eq(getrlimit(RLIMIT_FSIZE, &rl), 0);
    rl.rlim_cur = 8192;
    ck_assert_int_eq(setrlimit(RLIMIT_FSIZE, &rl), 0);
    snprintf(json, sizeof json, BASE(4, "") " \"topology\": {\"kind\": \"ring\"},"
             " \"algorithm\": {\"name\": \"dpsgd\", \"lr\": 0.1}, \"stop\": {\"steps\": 400},"
             " \"output\": {\"trace\": true}}");
    scn_scenario s;
    scn_error err;
    run_sim *r;
    ck_assert_msg(prepare_json(json, &s, &r, &err) == 0, "%s", err.msg);
    run_options opt = { .out_dir = dir };
    run_result res;
    char msg[1024] = "";
    int rc = run_execute(r, &opt, &res, msg, sizeof msg);
    struct rlimit big = { rl.rlim_max, rl.rlim_max };
    setrlimit(RLIMIT_FSIZE, &big);   /* for CK_FORK=no */
    run_destroy(r);
    scn_fini(&s);
    ck_assert_int_eq(rc, -1);
    ck_assert_msg(strstr(msg, "trace.csv: error: cannot write: File too large"), "%s", msg);
    ck_assert_int_eq(tmp_files_in(dir), 0);
    char path[600];
    snprintf(path, sizeof path, "%s/trace.csv", dir);
    ck_assert_int_eq(access(path, F_OK), -1);
    rm_run_dir(dir);
}
END_TEST

/* metrics.csv is committed first: when it fails, trace.csv is still open
 * and is abandoned; its temporary file goes too (out-tmp-left).  And the
 * command line says so with exit 1. */
START_TEST(test_failed_run_leaves_no_temporary)
{
    char dir[] = "/tmp/dtsim-test-exact-XXXXXX", json[2048];
    ck_assert_ptr_nonnull(mkdtemp(dir));
    signal(SIGXFSZ, SIG_IGN);
    struct rlimit rl;   /* the soft limit only: it can be raised again */
    ck_assert_int_eq(getrlimit(RLIMIT_FSIZE, &rl), 0);
    rl.rlim_cur = 8192;
    snprintf(json, sizeof json, BASE(4, "") " \"topology\": {\"kind\": \"ring\"},"
             " \"algorithm\": {\"name\": \"dpsgd\", \"lr\": 0.1}, \"stop\": {\"steps\": 400},"
             " \"metrics\": {\"every_s\": 0.002}, \"output\": {\"trace\": true}}");
    scn_scenario s;
    scn_error err;
    run_sim *r;
    ck_assert_msg(prepare_json(json, &s, &r, &err) == 0, "%s", err.msg);
    ck_assert_int_eq(setrlimit(RLIMIT_FSIZE, &rl), 0);
    run_options opt = { .out_dir = dir };
    run_result res;
    char msg[1024] = "";
    int rc = run_execute(r, &opt, &res, msg, sizeof msg);
    struct rlimit big = { rl.rlim_max, rl.rlim_max };
    setrlimit(RLIMIT_FSIZE, &big);
    run_destroy(r);
    scn_fini(&s);
    ck_assert_int_eq(rc, -1);
    ck_assert_msg(strstr(msg, "metrics.csv: error: cannot write: File too large"), "%s", msg);
    ck_assert_int_eq(tmp_files_in(dir), 0);
    DIR *d = opendir(dir);   /* removed as a whole, or left empty */
    struct dirent *e;
    int files = 0;
    while (d && (e = readdir(d)))
        files += e->d_name[0] != '.';
    if (d) {
        closedir(d);
        ck_assert_int_eq(rmdir(dir), 0);
    }
    ck_assert_int_eq(files, 0);

    /* the command line: exit 1 and the message on stderr */
    char scn[] = "/tmp/dtsim-test-exact-XXXXXX", cmd[4096], path[600];
    ck_assert_ptr_nonnull(mkdtemp(scn));
    snprintf(path, sizeof path, "%s/s.json", scn);
    FILE *f = fopen(path, "w");
    ck_assert_ptr_nonnull(f);
    fputs(json, f);
    fclose(f);
    snprintf(cmd, sizeof cmd, "%s run %s -o %s/out --quiet 2>%s/err", DTSIM_BINARY, path, scn, scn);
    ck_assert_int_eq(setrlimit(RLIMIT_FSIZE, &rl), 0);
    int st = system(cmd);
    setrlimit(RLIMIT_FSIZE, &big);
    ck_assert_msg(WIFEXITED(st) && WEXITSTATUS(st) == 1, "status %d", st);
    snprintf(path, sizeof path, "%s/err", scn);
    f = fopen(path, "r");
    ck_assert_ptr_nonnull(f);
    char line[1024] = "";
    ck_assert_ptr_nonnull(fgets(line, sizeof line, f));
    fclose(f);
    ck_assert_msg(strstr(line, "metrics.csv: error: cannot write: File too large"), "%s", line);
    snprintf(path, sizeof path, "%s/out", scn);
    ck_assert_int_eq(tmp_files_in(path), 0);
    snprintf(cmd, sizeof cmd, "rm -rf %s", scn);
    ck_assert_int_eq(system(cmd), 0);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("exact");
    TCase *tc = tcase_create("exact");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, test_ps_sync_applies_the_mean);
    tcase_add_test(tc, test_allreduce_applies_the_mean);
    tcase_add_test(tc, test_rennala_backup_apply_the_mean);
    tcase_add_test(tc, test_localsgd_allreduce_mean);
    tcase_add_test(tc, test_fedavg_weighted_by_samples);
    tcase_add_test(tc, test_dpsgd_mixing_closed_form);
    tcase_add_test(tc, test_localsgd_gossip_mixing_closed_form);
    tcase_add_test(tc, test_adpsgd_keeps_mean);
    tcase_add_test(tc, test_prague_keeps_mean);
    tcase_add_test(tc, test_hop_keeps_mean_on_regular);
    tcase_add_test(tc, test_sgp_debias_on_irregular_graph);
    tcase_add_test(tc, test_gossip_merge_half);
    tcase_add_test(tc, test_optimizer_trajectories);
    tcase_add_test(tc, test_availability_fraction);
    tcase_add_test(tc, test_fault_episodes);
    tcase_add_test(tc, test_rejoin_takes_a_live_neighbour);
    tcase_add_test(tc, test_loss_leaves_jitter_alone);
    tcase_add_test(tc, test_streams_independent);
    tcase_add_test(tc, test_retransmission_schedule);
    tcase_add_test(tc, test_down_node_has_no_timers);
    tcase_add_test(tc, test_trace_rows_pinned);
    tcase_add_test(tc, test_write_error_reported_and_cleaned);
    tcase_add_test(tc, test_failed_run_leaves_no_temporary);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? 1 : 0;
}
