/* test_pipeline_math.c -- the pipeline protocol's math on an MLP cut into
 * stages, against references built here: GPipe and 1F1B give, after each
 * mini-batch, exactly one SGD step of the whole MLP on the whole
 * mini-batch (the mean of the m micro-batch gradients; mdl_loss_grad on
 * the concatenated rows, a path that never goes through the stage code),
 * to 1e-12; PipeDream's weights follow the trajectory of weight stashing
 * computed by hand (micro-batch j's forward and backward at stage s on
 * the version after max(0, j - (p - 1 - s)) updates, an update per
 * micro-batch), and 2BW's the double-buffered one (the version after
 * floor(max(0, j - (p - 1 - s)) / m) updates, an update per m
 * micro-batches); the two asynchronous schedules' staleness shows: their
 * weights differ from the synchronous ones.  The micro-batches' rows are
 * read from stage 0 as each forward ends (the data stream is the
 * trainer's); everything else is recomputed.
 */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "alg_host.h"
#include "alg_pipeline_int.h"
#include "run_internal.h"
#include "mdl.h"
#include "mdl_stage.h"
#include "test_util.h"

#define D 6
#define C 3
#define MAXMB 512
#define MAXP 400
#define MAXS 8
#define MAXN 16

static const size_t hidden[] = { 12, 10, 8 };
static int    n_mb_logged, cap_p, cap_m, cap_sched;
#define MAXR 3
static double rows_log[MAXR][MAXMB][MAXN * D];   /* by replica */
static int    y_log[MAXR][MAXMB][MAXN];
static double xall[MAXS * MAXR][MAXP];            /* every node's parameters at the end */
static uint64_t upd_cap[MAXS * MAXR];
static int alive_cap[MAXR];
static double x0[MAXP], xcap[MAXP];
static int    lo_cap[MAXS + 1];
static uint64_t bwd_cap[MAXS], fwd_cap[MAXS];
static size_t P_cap, n_cap;
static alg_type wrapped;

static void w_on_start(alg_ctx *ctx, void *state, int node)
{
    if (node == 0)
        memcpy(x0, alg_params_const(ctx, 0), ctx->P * sizeof *x0);
    alg_pipeline.on_start(ctx, state, node);
}

static void w_on_step_done(alg_ctx *ctx, void *state, int node, const double *grad)
{
    pp_stage *st = state;
    const pp_shared *sh = ctx->shared;
    const int fwd0 = node % sh->p == 0 && st->busy && !st->cur.backward;
    const int q = node / sh->p;
    const uint64_t mb = st->cur.mb;
    alg_pipeline.on_step_done(ctx, state, node, grad);
    if (fwd0 && mb < MAXMB && q < MAXR) {
        const pp_math *mt = st->mt;
        const size_t k = (size_t)(mb % sh->K);
        memcpy(rows_log[q][mb], mt->in + k * mt->n * mt->in_w, mt->n * D * sizeof(double));
        memcpy(y_log[q][mb], mt->y + k * mt->n, mt->n * sizeof(int));
        if (q == 0)
            n_mb_logged = (int)mb + 1;
    }
}

static int w_stats(const alg_ctx *ctx, const char **keys, double *values, int max)
{
    const pp_shared *sh = ctx->shared;
    cap_p = sh->p;
    cap_m = sh->m;
    cap_sched = sh->sched;
    P_cap = ctx->P;
    memcpy(xcap, alg_pipeline.eval_params(ctx), ctx->P * sizeof *xcap);
    memcpy(lo_cap, sh->lo, (size_t)(sh->p + 1) * sizeof *lo_cap);
    for (int s = 0; s < sh->p; s++) {
        bwd_cap[s] = ((const pp_stage *)alg_state(ctx, s))->bwd_done;
        fwd_cap[s] = ((const pp_stage *)alg_state(ctx, s))->fwd_done;
    }
    for (int q = 0; q < MAXR; q++)
        alive_cap[q] = !sh->alive || (q < sh->r && sh->alive[q]);
    for (int i = 0; i < ctx->n && i < MAXS * MAXR; i++) {
        memcpy(xall[i], alg_params_const(ctx, i), ctx->P * sizeof *xall[i]);
        upd_cap[i] = ((const pp_stage *)alg_state(ctx, i))->updates;
    }
    n_cap = ((const pp_stage *)alg_state(ctx, 0))->mt->n;
    return alg_pipeline.stats(ctx, keys, values, max);
}

static int threads_opt = 1;
static int replicas_opt = 1;
static const char *faults_opt = "";
static double latency_opt = 0.0002;
static double lr_opt = 0.2;

static char last_json[2048];   /* the scenario of the last run_math */

static void run_math(int p, int m, int batch, const char *sched, double time_s, run_result *res)
{
    char *json = last_json;
    snprintf(json, sizeof last_json,
        "{\"seed\": 4, \"nodes\": %d,"
        " \"compute\": {\"step_time_s\": 0.01, \"groups\": [{\"nodes\": [1], \"slowdown\": 1.7}]},"
        " \"network\": {\"latency_s\": %.17g, \"bandwidth_Bps\": 1e8, \"bytes_per_param\": 4},"
        " \"topology\": {\"kind\": \"ring\"}%s,"
        " \"model\": {\"kind\": \"mlp\", \"hidden\": [12, 10, 8], \"activation\": \"tanh\","
        "   \"l2\": 0.001},"
        " \"data\": {\"train\": 2048, \"test\": 256, \"features\": %d, \"classes\": %d},"
        " \"algorithm\": {\"name\": \"pipeline\", \"micro_batches\": %d, \"schedule\": \"%s\","
        "   \"batch\": %d, \"lr\": %.17g, \"replicas\": %d},"
        " \"stop\": {\"time_s\": %.17g}}", p * replicas_opt, latency_opt, faults_opt, D, C, m, sched, batch, lr_opt,
        replicas_opt, time_s);
    wrapped = alg_pipeline;
    wrapped.on_start = w_on_start;
    wrapped.on_step_done = w_on_step_done;
    wrapped.stats = w_stats;
    n_mb_logged = 0;
    run_options opt = { .algorithm = &wrapped, .threads = threads_opt };
    run_json(json, &opt, res);
    ck_assert_int_eq(res->status, RUN_OK);
}

static mdl_model *make_model(size_t max_batch)
{
    mdl_arch a = { .d = D, .n_classes = C, .n_hidden = 3, .act = MDL_ACT_TANH };
    for (int i = 0; i < 3; i++)
        a.hidden[i] = hidden[i];
    mdl_model *m = mdl_create_arch(&mdl_mlp, &a, 0.001, max_batch);
    ck_assert_ptr_nonnull(m);
    return m;
}

static double max_rel_diff(const double *a, const double *b, size_t lo, size_t hi)
{
    double w = 0;
    for (size_t i = lo; i < hi; i++) {
        const double d = fabs(a[i] - b[i]) / (1 + fabs(b[i]));
        if (d > w)
            w = d;
    }
    return w;
}

/* GPipe and 1F1B: stage s's part after u mini-batches is the whole MLP's
 * SGD trajectory's x^(u) (each stage may be one mini-batch ahead of
 * stage 0 at the end: each is compared with its own count). */
static void check_sync(const char *sched)
{
    const int p = 4, m = 4, B = 16;
    run_result res;
    run_math(p, m, B, sched, 0.1, &res);
    int iters = 0;
    for (int s = 0; s < p; s++)
        if ((int)(bwd_cap[s] / (uint64_t)m) > iters)
            iters = (int)(bwd_cap[s] / (uint64_t)m);
    ck_assert_int_ge(iters, 5);
    ck_assert_int_le(iters * m, n_mb_logged);
    mdl_model *model = make_model((size_t)B);
    ck_assert_uint_eq(mdl_n_params(model), P_cap);
    static double hist[64][MAXP];
    double g[MAXP], X[MAXN * D * 4];
    int Y[MAXN * 4];
    size_t idx[MAXN * 4];
    ck_assert_int_lt(iters, 64);
    memcpy(hist[0], x0, P_cap * sizeof *x0);
    for (int u = 0; u < iters; u++) {
        for (int j = 0; j < m; j++) {
            memcpy(X + (size_t)j * n_cap * D, rows_log[0][u * m + j], n_cap * D * sizeof *X);
            memcpy(Y + (size_t)j * n_cap, y_log[0][u * m + j], n_cap * sizeof *Y);
        }
        for (int i = 0; i < B; i++)
            idx[i] = (size_t)i;
        mdl_dataset ds = { .n = (size_t)B, .d = D, .n_classes = C, .x = X, .y = Y };
        mdl_loss_grad(model, hist[u], &ds, idx, (size_t)B, g);
        for (size_t k = 0; k < P_cap; k++)
            hist[u + 1][k] = hist[u][k] - 0.2 * g[k];
    }
    for (int s = 0; s < p; s++) {
        /* a mini-batch whose backwards are not all done is not applied yet */
        const int u = (int)(bwd_cap[s] / (uint64_t)m);
        const size_t off = mdl_stage_param_off(model, (size_t)lo_cap[s] + 1);
        const size_t end = mdl_stage_param_off(model, (size_t)lo_cap[s + 1] + 1);
        ck_assert_msg(max_rel_diff(xcap, hist[u], off, end) < 1e-12, "%s stage %d: %g", sched, s,
                      max_rel_diff(xcap, hist[u], off, end));
        /* and it moved: the comparison is not of the initial weights */
        ck_assert(max_rel_diff(hist[u], x0, off, end) > 1e-6);
    }
    mdl_destroy(model);
}

START_TEST(test_gpipe_is_sgd) { check_sync("gpipe"); }
END_TEST

/* r replicas, GPipe or 1F1B: after every mini-batch each node's stage
 * holds the whole MLP's SGD step on the union of the r replicas' u-th
 * mini-batches (the mean gradient over r B samples; mdl_loss_grad on the
 * concatenated rows) to 1e-12, and the nodes of a stage with as many
 * updates hold the same bits; the replicas read different data. */
static void check_async(const char *sched, int m);

static void check_sync_dp(const char *sched, int R)
{
    const int p = 4, m = 4, B = 16;
    replicas_opt = R;
    run_result res;
    run_math(p, m, B, sched, 0.1, &res);
    replicas_opt = 1;
    int iters = 0;
    for (int i = 0; i < p * R; i++) {
        ck_assert_uint_ge(upd_cap[i], 4);
        if ((int)upd_cap[i] > iters)
            iters = (int)upd_cap[i];
    }
    ck_assert_int_le(iters * m, n_mb_logged);
    ck_assert(memcmp(rows_log[0][0], rows_log[1][0], n_cap * D * sizeof(double)) != 0);
    ck_assert_double_eq_tol(res.last.epochs, stat_of(&res, "micro_batches_done") * n_cap / 2048,
                            1e-15);
    ck_assert_double_ge(stat_of(&res, "micro_batches_done"), (double)bwd_cap[0] + 4 * m);
    mdl_model *model = make_model((size_t)(R * B));
    static double hist[64][MAXP];
    double g[MAXP], X[MAXR * MAXN * D * 4];
    int Y[MAXR * MAXN * 4];
    size_t idx[MAXR * MAXN * 4];
    memcpy(hist[0], x0, P_cap * sizeof *x0);
    for (int u = 0; u < iters; u++) {
        for (int q = 0; q < R; q++)
            for (int j = 0; j < m; j++) {
                const size_t at = (size_t)(q * m + j) * n_cap;
                memcpy(X + at * D, rows_log[q][u * m + j], n_cap * D * sizeof *X);
                memcpy(Y + at, y_log[q][u * m + j], n_cap * sizeof *Y);
            }
        for (int i = 0; i < R * B; i++)
            idx[i] = (size_t)i;
        mdl_dataset ds = { .n = (size_t)(R * B), .d = D, .n_classes = C, .x = X, .y = Y };
        mdl_loss_grad(model, hist[u], &ds, idx, (size_t)(R * B), g);
        for (size_t k = 0; k < P_cap; k++)
            hist[u + 1][k] = hist[u][k] - 0.2 * g[k];
    }
    for (int i = 0; i < p * R; i++) {
        const int s = i % p, u = (int)upd_cap[i];
        const size_t off = mdl_stage_param_off(model, (size_t)lo_cap[s] + 1);
        const size_t end = mdl_stage_param_off(model, (size_t)lo_cap[s + 1] + 1);
        ck_assert_msg(max_rel_diff(xall[i], hist[u], off, end) < 1e-12, "%s node %d: %g", sched,
                      i, max_rel_diff(xall[i], hist[u], off, end));
        ck_assert(max_rel_diff(hist[u], x0, off, end) > 1e-6);
        for (int j = s; j < i; j += p)
            if (upd_cap[j] == upd_cap[i])
                ck_assert_int_eq(memcmp(xall[i] + off, xall[j] + off,
                                        (end - off) * sizeof(double)), 0);
    }
    mdl_destroy(model);
}

START_TEST(test_gpipe_replicas_sgd) { check_sync_dp("gpipe", 2); check_sync_dp("gpipe", 3); }
END_TEST

/* Replica q's mini-batch k is drawn from node q p + (k mod p)'s part of
 * the training set: every logged row is a training row that node holds
 * (the same scenario prepared again gives the same partition). */
START_TEST(test_replicas_own_data)
{
    const int p = 4, m = 4, R = 2;
    replicas_opt = R;
    run_result res;
    run_math(p, m, 16, "gpipe", 0.1, &res);
    replicas_opt = 1;
    scn_scenario sc;
    scn_error err;
    run_sim *rs;
    ck_assert_msg(prepare_json(last_json, &sc, &rs, &err) == 0, "%s", err.msg);
    ck_assert_ptr_nonnull(rs->train.x);
    for (int q = 0; q < R; q++)
        for (int k = 0; k < 6; k++) {
            const int node = q * p + k % p;
            for (int j = 0; j < m; j++)
                for (size_t i = 0; i < n_cap; i++) {
                    const double *row = rows_log[q][k * m + j] + i * D;
                    int found = 0;
                    for (size_t t = rs->part.off[node]; t < rs->part.off[node + 1] && !found; t++)
                        found = memcmp(rs->train.x + rs->part.idx[t] * D, row,
                                       D * sizeof(double)) == 0;
                    ck_assert_msg(found, "replica %d mini-batch %d: a row not of node %d", q, k,
                                  node);
                }
        }
    run_destroy(rs);
    scn_fini(&sc);
}
END_TEST

START_TEST(test_1f1b_replicas_sgd) { check_sync_dp("1f1b", 3); }
END_TEST

/* lr 0 with replicas: every node's parameters stay the initial ones, bit
 * for bit (the all-reduce and the updates change nothing). */
START_TEST(test_replicas_lr0)
{
    static const char *const sched[] = { "gpipe", "2bw", "pipedream" };
    for (int k = 0; k < 3; k++) {
        replicas_opt = 2;
        lr_opt = 0;
        run_result res;
        run_math(4, 4, 16, sched[k], 0.1, &res);
        replicas_opt = 1;
        lr_opt = 0.2;
        for (int i = 0; i < 8; i++) {
            ck_assert_uint_ge(upd_cap[i], 2);
            ck_assert_int_eq(memcmp(xall[i], x0, P_cap * sizeof *x0), 0);
        }
    }
}
END_TEST

/* A crash of a node of replica 2 (of 3) at many instants, some inside a
 * stage's all-reduce (latency 3 ms, 1e8 B/s): the run never stalls,
 * the survivors of a stage with as many updates hold the same bits
 * (those whose round another had completed took its sum: the path is
 * taken at some instants), and with the node back at 0.3 s the replica
 * rejoins (gpipe, 1f1b) and holds its stages' bits again; 2bw and
 * pipedream go on with two replicas. */
START_TEST(test_crash_survivors_agree)
{
    static char faults[256];
    int forwarded = 0;
    for (int k = 0; k < 48; k++) {
        const int back = (k / 6) % 2;
        snprintf(faults, sizeof faults,
                 ", \"faults\": {\"detect_s\": 0.01, \"events\": [{\"kind\": \"schedule\","
                 " \"nodes\": [9], \"down_s\": %.17g%s}]}", 0.05 + 0.0011 * k,
                 back ? ", \"up_s\": 0.3" : "");
        faults_opt = faults;
        replicas_opt = 3;
        latency_opt = 0.003;
        run_result res;
        static const char *const scheds[] = { "gpipe", "1f1b", "gpipe", "2bw", "gpipe", "pipedream" };
        const char *sched = scheds[k % 6];
        const int sync = sched[0] == 'g' || sched[0] == '1';
        run_math(4, 4, 16, sched, 0.6, &res);
        replicas_opt = 1;
        latency_opt = 0.0002;
        faults_opt = "";
        /* an asynchronous schedule's dropped replica stays out */
        ck_assert_double_eq(stat_of(&res, "replicas_live"), back && sync ? 3 : 2);
        ck_assert_int_eq(alive_cap[2], back && sync);
        forwarded += stat_of(&res, "sums_forwarded") > 0;
        for (int i = 0; i < 12; i++)
            if (alive_cap[i / 4])
                ck_assert_uint_ge(upd_cap[i], 5);
        mdl_model *model = make_model(16);
        for (int i = 0; i < 12; i++) {
            const int s = i % 4;
            const size_t off = mdl_stage_param_off(model, (size_t)lo_cap[s] + 1);
            const size_t end = mdl_stage_param_off(model, (size_t)lo_cap[s + 1] + 1);
            for (int j = s; j < i; j += 4)
                if (alive_cap[i / 4] && alive_cap[j / 4] && upd_cap[j] == upd_cap[i])
                    ck_assert_msg(memcmp(xall[i] + off, xall[j] + off,
                                         (end - off) * sizeof(double)) == 0,
                                  "crash %d: nodes %d and %d differ", k, i, j);
        }
        mdl_destroy(model);
    }
    ck_assert_int_gt(forwarded, 0);
}
END_TEST

/* The asynchronous schedules with 2 replicas: the hand-built
 * trajectories with each update the mean over the replicas. */
START_TEST(test_2bw_replicas)
{
    replicas_opt = 2;
    check_async("2bw", 4);
    replicas_opt = 1;
}
END_TEST

START_TEST(test_pipedream_replicas)
{
    replicas_opt = 2;
    check_async("pipedream", 2);
    replicas_opt = 1;
}
END_TEST

/* The wire: stage s (one layer each, widths 6-12-10-8-3) sends n x w_s
 * values of 4 bytes and n labels of 4 forward, n x w_(s-1) values back;
 * every message sent counts, delivered or not. */
START_TEST(test_math_bytes)
{
    run_result res;
    run_math(4, 4, 16, "1f1b", 0.1, &res);
    static const double w[] = { 12, 10, 8 };
    double want = 0;
    for (int s = 0; s < 3; s++)
        want += (double)fwd_cap[s] * (n_cap * w[s] * 4 + 4.0 * n_cap);
    for (int s = 1; s < 4; s++)
        want += (double)bwd_cap[s] * (n_cap * w[s - 1] * 4);
    ck_assert_uint_eq(n_cap, 4);
    ck_assert_double_eq(res.last.bytes_sent, want);
    /* epochs: the samples of the micro-batches done over the 2048 of the
     * training set (not the stages' operations times the batch) */
    ck_assert_double_eq(stat_of(&res, "micro_batches_done"), (double)bwd_cap[0]);
    ck_assert_double_eq_tol(res.last.epochs, (double)bwd_cap[0] * 4 / 2048, 1e-15);
}
END_TEST

START_TEST(test_1f1b_is_sgd) { check_sync("1f1b"); }
END_TEST

/* The asynchronous schedules against the hand-built trajectory: every
 * stage's versions W_s^(0), W_s^(1), ...; micro-batch j runs forward and
 * backward at stage s on version v_s(j) and its gradient makes the next
 * (PipeDream) or joins the next m's mean (2BW). */
static double whist[MAXS][MAXMB + 1][MAXP];

static void check_async(const char *sched, int m)
{
    const int p = 4, B = 4 * m, R = replicas_opt;
    const int two = strcmp(sched, "2bw") == 0;
    run_result res;
    run_math(p, m, B, sched, 0.6, &res);
    mdl_model *model = make_model((size_t)B);
    size_t off[MAXS + 1];
    int a[MAXS], b[MAXS];
    for (int s = 0; s <= p; s++)
        off[s] = mdl_stage_param_off(model, (size_t)lo_cap[s] + 1);
    for (int s = 0; s < p; s++) {
        a[s] = lo_cap[s] + 1;
        b[s] = lo_cap[s + 1];
        memcpy(whist[s][0], x0 + off[s], (off[s + 1] - off[s]) * sizeof(double));
    }
    const size_t n = n_cap;
    int J = 0;
    for (int s = 0; s < p; s++)
        if ((int)bwd_cap[s] > J)
            J = (int)bwd_cap[s];
    ck_assert_int_ge(J, 3 * m);
    ck_assert_int_le(J, n_mb_logged);
    ck_assert_int_le(J, MAXMB);
    static double acts[MAXS][MAXN * 64], gin[MAXS][MAXN * 64], acc[MAXS][MAXP], gsum[MAXS][MAXP];
    double g[MAXP], scratch[2 * MAXN * 16];
    ck_assert_uint_le(mdl_stage_scratch_doubles(model, n), 2 * MAXN * 16);
    memset(acc, 0, sizeof acc);
    int upd[MAXS] = { 0 };
    for (int j = 0; j < J; j++) {
        int v[MAXS];
        for (int s = 0; s < p; s++) {
            const int before = j - (p - 1 - s) > 0 ? j - (p - 1 - s) : 0;
            v[s] = two ? before / m : before;
            ck_assert_int_le(v[s], upd[s]);
            if (two)
                ck_assert_int_ge(v[s], upd[s] - 1);   /* two versions are enough */
        }
        memset(gsum, 0, sizeof gsum);
        for (int q = 0; q < R; q++) {   /* every replica, on the same versions */
        const double *in = rows_log[q][j];
        for (int s = 0; s < p; s++) {
            ck_assert_uint_le(mdl_stage_acts_doubles(model, (size_t)a[s], (size_t)b[s], n),
                              MAXN * 64);
            mdl_stage_forward(model, whist[s][v[s]], (size_t)a[s], (size_t)b[s], in, y_log[q][j], n,
                              acts[s]);
            const size_t al = mdl_stage_acts_doubles(model, (size_t)a[s], (size_t)b[s], n);
            const size_t ow = (size_t)(b[s] <= 3 ? (int)hidden[b[s] - 1] : C);
            in = acts[s] + al - n * ow;
        }
        for (int s = p - 1; s >= 0; s--) {
            const double *sin = s == 0 ? rows_log[q][j] : NULL;
            if (s > 0) {
                const size_t al = mdl_stage_acts_doubles(model, (size_t)a[s - 1],
                                                         (size_t)b[s - 1], n);
                const size_t ow = (size_t)(int)hidden[b[s - 1] - 1];
                sin = acts[s - 1] + al - n * ow;
            }
            const size_t len = off[s + 1] - off[s];
            mdl_stage_backward(model, whist[s][v[s]], (size_t)a[s], (size_t)b[s], sin, acts[s],
                               y_log[q][j], n, s < p - 1 ? gin[s + 1] : NULL, g,
                               s > 0 ? gin[s] : NULL, scratch);
            for (size_t k = 0; k < len; k++)
                gsum[s][k] += g[k];
        }
        }
        /* the update: the mean over the replicas (and 2BW's m micro-batches) */
        for (int s = 0; s < p; s++) {
            const size_t len = off[s + 1] - off[s];
            if (!two) {
                for (size_t k = 0; k < len; k++)
                    whist[s][upd[s] + 1][k] = whist[s][upd[s]][k] - 0.2 / R * gsum[s][k];
                upd[s]++;
            } else {
                for (size_t k = 0; k < len; k++)
                    acc[s][k] += gsum[s][k];
                if (j % m == m - 1) {
                    for (size_t k = 0; k < len; k++) {
                        whist[s][upd[s] + 1][k] = whist[s][upd[s]][k] - 0.2 / (m * R) * acc[s][k];
                        acc[s][k] = 0;
                    }
                    upd[s]++;
                }
            }
        }
    }
    for (int i = 0; i < p * R; i++) {
        const int s = i % p, u = (int)upd_cap[i];
        if (i < p)
            ck_assert_int_eq(u, two ? (int)(bwd_cap[s] / (uint64_t)m) : (int)bwd_cap[s]);
        ck_assert_int_le(u, upd[s]);
        ck_assert_int_ge(u, 2);
        double w = 0;
        for (size_t k = 0; k < off[s + 1] - off[s]; k++) {
            const double d = fabs(xall[i][off[s] + k] - whist[s][u][k]) / (1 + fabs(whist[s][u][k]));
            if (d > w)
                w = d;
        }
        ck_assert_msg(w < 1e-12, "%s node %d (stage %d) after %d updates: %g", sched, i, s, u, w);
    }
    mdl_destroy(model);
}

START_TEST(test_pipedream_stashing) { check_async("pipedream", 2); }
END_TEST

START_TEST(test_2bw_two_versions) { check_async("2bw", 4); }
END_TEST

/* Staleness is real: the asynchronous schedules' weights after the same
 * micro-batches are not the synchronous one's, and a wrong scheme (no
 * stash: the backward on the current weights) is caught by the test
 * above (tests/mutants.tsv). */
START_TEST(test_staleness_shows)
{
    run_result res;
    run_math(4, 4, 16, "2bw", 1.5, &res);
    const double l_2bw = res.last.train_loss;
    run_math(4, 4, 16, "gpipe", 1.5, &res);
    const double l_g = res.last.train_loss;
    ck_assert(isfinite(l_2bw) && isfinite(l_g));
    ck_assert(l_2bw != l_g);
}
END_TEST

/* The same bits on 1 and 3 threads (the stages' math runs in their
 * events; the evaluations are split over the threads). */
START_TEST(test_threads_same)
{
    static double x1[MAXP];
    run_result r1, r3;
    threads_opt = 1;
    run_math(4, 4, 16, "2bw", 0.3, &r1);
    memcpy(x1, xcap, P_cap * sizeof *x1);
    threads_opt = 3;
    run_math(4, 4, 16, "2bw", 0.3, &r3);
    threads_opt = 1;
    ck_assert_int_eq(memcmp(x1, xcap, P_cap * sizeof *x1), 0);
    ck_assert(r1.last.train_loss == r3.last.train_loss);
    ck_assert(r1.last.test_accuracy == r3.last.test_accuracy);
    ck_assert_uint_eq(r1.events, r3.events);
    /* replicas, a crash inside an all-reduce and a rejoin: the same bits */
    static double xr[MAXS * MAXR][MAXP];
    faults_opt = ", \"faults\": {\"detect_s\": 0.01, \"events\": [{\"kind\": \"schedule\","
                 " \"nodes\": [9], \"down_s\": 0.0731, \"up_s\": 0.2}]}";
    replicas_opt = 3;
    latency_opt = 0.003;
    run_math(4, 4, 16, "gpipe", 0.4, &r1);
    memcpy(xr, xall, sizeof xr);
    threads_opt = 3;
    run_math(4, 4, 16, "gpipe", 0.4, &r3);
    threads_opt = 1;
    replicas_opt = 1;
    latency_opt = 0.0002;
    faults_opt = "";
    ck_assert_double_eq(stat_of(&r1, "replicas_rejoined"), 1);
    ck_assert_int_eq(memcmp(xr, xall, sizeof xr), 0);
    ck_assert(r1.last.train_loss == r3.last.train_loss);
    ck_assert_uint_eq(r1.events, r3.events);
}
END_TEST

/* The located errors of the MLP checks. */
START_TEST(test_math_errors)
{
    expect_prepare_error(
        "{\"nodes\": 2, \"topology\": {\"kind\": \"ring\"},"
        " \"model\": {\"kind\": \"mlp\", \"hidden\": [8]},"
        " \"data\": {\"train\": 256, \"test\": 64, \"features\": 4, \"classes\": 3},"
        " \"algorithm\": {\"name\": \"pipeline\", \"micro_batches\": 3, \"batch\": 16},"
        " \"stop\": {\"time_s\": 1}}",
        "test.json: /algorithm/name: error: algorithm.batch 16 is not a multiple of "
        "algorithm.micro_batches 3 (a micro-batch is batch / micro_batches samples)");
    expect_prepare_error(
        "{\"nodes\": 3, \"topology\": {\"kind\": \"ring\"},"
        " \"model\": {\"kind\": \"mlp\", \"hidden\": [8]},"
        " \"data\": {\"train\": 256, \"test\": 64, \"features\": 4, \"classes\": 3},"
        " \"algorithm\": {\"name\": \"pipeline\", \"batch\": 16},"
        " \"stop\": {\"time_s\": 1}}",
        "test.json: /algorithm/name: error: the MLP's weight layers (hidden + 1) is 2, fewer "
        "than the 3 stages (each stage needs a layer)");
    expect_prepare_error(
        "{\"nodes\": 2, \"topology\": {\"kind\": \"ring\"},"
        " \"model\": {\"kind\": \"softmax\"},"
        " \"data\": {\"train\": 256, \"test\": 64, \"features\": 4, \"classes\": 3},"
        " \"algorithm\": {\"name\": \"pipeline\", \"batch\": 16},"
        " \"stop\": {\"time_s\": 1}}",
        "test.json: /algorithm/name: error: the pipeline cuts an MLP into stages of layers "
        "(model.kind \"mlp\") or runs the timing-only model (\"none\"); this model has no layers");
    expect_prepare_error(
        "{\"nodes\": 4, \"topology\": {\"kind\": \"ring\"},"
        " \"model\": {\"kind\": \"none\", \"message_bytes\": 10},"
        " \"algorithm\": {\"name\": \"pipeline\", \"schedule\": \"2bw\", \"micro_batches\": 3},"
        " \"stop\": {\"time_s\": 1}}",
        "test.json: /algorithm/name: error: schedule 2bw needs algorithm.micro_batches >= the 4 "
        "stages (m = 3): with fewer, a micro-batch would need a third weight version");
}
END_TEST

int main(void)
{
    Suite *s = suite_create("pipeline_math");
    TCase *tc = tcase_create("exact");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, test_gpipe_is_sgd);
    tcase_add_test(tc, test_gpipe_replicas_sgd);
    tcase_add_test(tc, test_replicas_own_data);
    tcase_add_test(tc, test_1f1b_replicas_sgd);
    tcase_add_test(tc, test_replicas_lr0);
    tcase_add_test(tc, test_2bw_replicas);
    tcase_add_test(tc, test_crash_survivors_agree);
    tcase_add_test(tc, test_pipedream_replicas);
    tcase_add_test(tc, test_1f1b_is_sgd);
    tcase_add_test(tc, test_math_bytes);
    tcase_add_test(tc, test_pipedream_stashing);
    tcase_add_test(tc, test_2bw_two_versions);
    tcase_add_test(tc, test_staleness_shows);
    tcase_add_test(tc, test_threads_same);
    tcase_add_test(tc, test_math_errors);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
