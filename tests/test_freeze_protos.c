/* test_freeze_protos.c -- progressive freezing in dpsgd, local-sgd (all-reduce
 * and gossip), fedavg and ps-async, pinned to exact values on a 20-16-8-4 MLP
 * (P = 508; layer 1 = parameters [0, 336), layer 2 = [336, 472)): every
 * message costs the trainable suffix of its stage, (P - prefix) x 4 bytes,
 * message by message (fedavg's models from the prefix the client holds,
 * ps-async's replies from the worker's version's prefix); a node's compute
 * seconds are its steps priced by their stage's FLOP share; frozen layers
 * are bit for bit constant from their freezing round on, on every node; a
 * crashed node does not stall a freezing run; fedavg draws a client only in
 * the rounds whose stage its whole memory model fits, sends a client back
 * from a failure the whole model, and freezes layer 1 at round 1's weighted
 * average bit for bit; dpsgd's moving mix with a frozen prefix gives the
 * same bytes on 1, 2 and 3 threads.
 */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <gsl/gsl_cblas.h>

#include "alg.h"
#include "alg_host.h"
#include "alg_ps.h"
#include "test_util.h"

enum { P = 508, L1 = 336, L2 = 472, MAXN = 5, MAXLOG = 40000 };

/* Per sample FLOPs 2240, 1344, 1024 by stage, batch 16 at 1e9 FLOP/s. */
static double step_s(int stage)
{
    static const double fl[3] = { 2240, 1344, 1024 };
    return 16 * fl[stage] / 1e9;
}
static const double suffix_bytes[3] = { 4.0 * P, 4.0 * (P - L1), 4.0 * (P - L2) };

/* ---- a wrapper around the protocol under test ---- */

typedef struct msg_rec {
    int      from, to;
    uint32_t tag;
    uint64_t round;
    double   bytes;
} msg_rec;

static alg_type wrapped;
static const alg_type *inner;
static msg_rec mlog[MAXLOG];
static int n_log;
static long steps[MAXN];
static long mark[2];                 /* step counts after which to copy a node's x */
static double at[MAXN][2][P], at_end[MAXN][P];
/* ps-async: the stage each worker's steps ran at, and the compute they cost */
static uint64_t pa_version[MAXN], pa_pushed[MAXN];
static double pa_busy[MAXN];
static uint64_t after[2];            /* the schedule */
static long server_grads;            /* gradients the server received */
static double server_at[2][P];       /* the server's x at the freezing versions/rounds */
/* fedavg: the weighted sum of round after[0] - 1's reports and their weight */
static double fa_sum[P], fa_weight;

static int stage_of(uint64_t count) { return count < after[0] ? 0 : count < after[1] ? 1 : 2; }

static void w_step_done(alg_ctx *ctx, void *st, int node, const double *grad)
{
    steps[node]++;
    for (int k = 0; k < 2; k++)
        if (steps[node] == mark[k])
            memcpy(at[node][k], alg_params_const(ctx, node), sizeof at[node][k]);
    if (inner == &alg_ps_async)
        pa_busy[node] += step_s(stage_of(pa_version[node]));
    inner->on_step_done(ctx, st, node, grad);
}

static void w_message(alg_ctx *ctx, void *st, int node, const cl_msg *m)
{
    if (n_log < MAXLOG)
        mlog[n_log++] = (msg_rec){ m->from, m->to, m->tag, m->round, m->bytes };
    if (inner == &alg_ps_async) {
        if (node == ctx->server) {
            /* the server at version 40 (80): the final values of layer 1 (2) */
            for (int k = 0; k < 2; k++)
                if ((uint64_t)server_grads == after[k])
                    memcpy(server_at[k], alg_params_const(ctx, node), sizeof server_at[k]);
            server_grads++;
            ck_assert_double_eq(m->bytes, suffix_bytes[stage_of(m->round)]);
            pa_pushed[m->from] = m->round;
        } else {
            /* the reply: the model from the pushed version's prefix on */
            ck_assert_double_eq(m->bytes, suffix_bytes[stage_of(pa_pushed[node])]);
            pa_version[node] = m->round;
        }
    }
    if (inner == &alg_fedavg && node == ctx->server && m->tag == ALG_PS_TAG_GRAD
        && m->round + 1 == after[0]) {   /* the last round that trains layer 1: all of x */
        const double w = (double)alg_local_samples(ctx, m->from);
        cblas_daxpy(P, w, m->payload->data, 1, fa_sum, 1);
        fa_weight += w;
    }
    if (inner == &alg_fedavg && node == ctx->server && m->round >= 1) {
        /* the first report of round after[k]: the model its layer froze at */
        for (int k = 0; k < 2; k++)
            if (m->round == after[k] && server_at[k][0] == 0)
                memcpy(server_at[k], alg_params_const(ctx, node), sizeof server_at[k]);
    }
    inner->on_message(ctx, st, node, m);
}

static int w_stats(const alg_ctx *ctx, const char **keys, double *values, int max)
{
    for (int i = 0; i < ctx->n_all && i < MAXN; i++)
        memcpy(at_end[i], alg_params_const(ctx, i), sizeof at_end[i]);
    return inner->stats ? inner->stats(ctx, keys, values, max) : 0;
}

static char dir[64];

static void run_wrapped(const alg_type *alg, const char *json, run_result *res, int threads)
{
    inner = alg;
    wrapped = *alg;
    wrapped.on_step_done = w_step_done;
    wrapped.on_message = w_message;
    wrapped.stats = w_stats;
    n_log = 0;
    server_grads = 0;
    memset(steps, 0, sizeof steps);
    memset(pa_version, 0, sizeof pa_version);
    memset(pa_pushed, 0, sizeof pa_pushed);
    memset(pa_busy, 0, sizeof pa_busy);
    memset(server_at, 0, sizeof server_at);
    memset(fa_sum, 0, sizeof fa_sum);
    fa_weight = 0;
    snprintf(dir, sizeof dir, "/tmp/dtsim-freeze2-XXXXXX");
    ck_assert_ptr_nonnull(mkdtemp(dir));
    run_options opt = { .out_dir = dir, .algorithm = &wrapped, .threads = threads };
    run_json(json, &opt, res);
}

static void rm_dir(void) { test_rm_run_dir(dir); }

/* nodes.csv's value of column name for node. */
static double col(int node, const char *name) { return test_nodes_col(dir, node, name); }

#define RUN(alg, extra, stop) \
    "{\"seed\": 3, \"nodes\": 4, \"topology\": {\"kind\": \"ring\"}," \
    " \"compute\": {\"flops_per_s\": 1e9" extra "}," \
    " \"network\": {\"latency_s\": 0.001, \"bandwidth_Bps\": 1e7, \"bytes_per_param\": 4}," \
    " \"model\": {\"kind\": \"mlp\", \"hidden\": [16, 8], \"l2\": 0.0001}," \
    " \"data\": {\"train\": 2048, \"test\": 512, \"features\": 20, \"classes\": 4," \
    "   \"separation\": 1}," \
    " \"algorithm\": {\"name\": " alg ", \"lr\": 0.1, \"batch\": 16}," \
    " \"optimizer\": {\"momentum\": 0.9}, \"stop\": " stop ","

/* The compute seconds of node i in a protocol whose rounds are its own
 * steps (dpsgd) or every h of them (local-sgd): steps priced by their
 * round's stage. */
static double busy_of(long n, long h)
{
    double t = 0;
    for (long k = 0; k < n; k++)
        t += step_s(stage_of((uint64_t)(k / h)));
    return t;
}

static void check_busy(int i, double busy)
{
    ck_assert_msg(fabs(col(i, "compute_s") - busy) < 1e-12 * busy, "node %d compute %.17g, "
                  "closed form %.17g", i, col(i, "compute_s"), busy);
}

/* Layer 1 (2) of every listed node at the end is its values at mark[0]
 * (mark[1]); the output layer moved after mark[1]. */
static void check_frozen_marks(int n)
{
    for (int i = 0; i < n; i++) {
        ck_assert_msg(memcmp(at[i][0], at_end[i], L1 * sizeof(double)) == 0, "node %d", i);
        ck_assert(memcmp(at[i][1] + L1, at_end[i] + L1, (L2 - L1) * sizeof(double)) == 0);
        ck_assert(memcmp(at[i][0] + L1, at[i][1] + L1, (L2 - L1) * sizeof(double)) != 0);
        ck_assert(memcmp(at[i][1] + L2, at_end[i] + L2, (P - L2) * sizeof(double)) != 0);
    }
}

/* D-PSGD: rounds are a node's own steps; the round-r model costs its
 * stage's suffix; each node's frozen layers are its own, constant. */
START_TEST(dpsgd_freezes_by_its_rounds)
{
    after[0] = 10, after[1] = 20;
    mark[0] = 11, mark[1] = 21;   /* round 10 (20) began: the mix of 9 (19) was final */
    run_result res;
    for (int threads = 1; threads <= 2; threads++) {
        run_wrapped(&alg_dpsgd, RUN("\"dpsgd\"", ", \"groups\": [{\"nodes\": [0], "
                    "\"slowdown\": 1.5}]", "{\"steps\": 40}")
                    " \"freeze\": {\"after_steps\": [10, 20]}}", &res, threads);
        int seen[3] = { 0, 0, 0 };
        for (int k = 0; k < n_log; k++) {
            ck_assert_double_eq(mlog[k].bytes, suffix_bytes[stage_of(mlog[k].round)]);
            seen[stage_of(mlog[k].round)]++;
        }
        ck_assert_int_eq(seen[0], 80);   /* 10 rounds x 4 nodes x 2 neighbours */
        ck_assert_int_eq(seen[1], 80);
        ck_assert_int_gt(seen[2], 80);
        for (int i = 0; i < 4; i++)
            check_busy(i, busy_of((long)col(i, "steps"), 1) * (i == 0 ? 1.5 : 1));
        check_frozen_marks(4);
        /* D-PSGD's nodes froze their own (different) layer 1 */
        ck_assert(memcmp(at_end[0], at_end[1], L1 * sizeof(double)) != 0);
        ck_assert_double_eq(col(0, "mem_bytes"), 3088);
        rm_dir();
    }
}
END_TEST

/* Local SGD, H = 2: rounds are synchronisations; the all-reduce reduces
 * the suffix (6 chunks of len/4 per node and round), the gossip messages
 * cost it; after an all-reduce every node holds the same frozen layers. */
START_TEST(localsgd_freezes_by_sync_rounds)
{
    after[0] = 3, after[1] = 6;
    mark[0] = 7, mark[1] = 13;   /* first step of round 3 (6) */
    run_result res;
    run_wrapped(&alg_localsgd, RUN("\"local-sgd\", \"local_steps\": 2", "", "{\"steps\": 24}")
                " \"freeze\": {\"after_steps\": [3, 6]}}", &res, 1);
    int chunks[3] = { 0, 0, 0 };
    for (int k = 0; k < n_log; k++)
        for (int s = 0; s < 3; s++)
            chunks[s] += mlog[k].bytes == suffix_bytes[s] / 4;
    ck_assert_int_eq(chunks[0], 3 * 4 * 6);
    ck_assert_int_eq(chunks[1], 3 * 4 * 6);
    ck_assert_int_ge(chunks[2], 5 * 4 * 6);
    ck_assert_int_eq(chunks[0] + chunks[1] + chunks[2], n_log);
    for (int i = 0; i < 4; i++)
        check_busy(i, busy_of((long)col(i, "steps"), 2));
    check_frozen_marks(4);
    for (int i = 1; i < 4; i++)
        ck_assert(memcmp(at_end[0], at_end[i], L2 * sizeof(double)) == 0);
    rm_dir();

    run_wrapped(&alg_localsgd, RUN("\"local-sgd\", \"local_steps\": 2, \"sync\": \"gossip\"",
                                   "", "{\"steps\": 24}")
                " \"freeze\": {\"after_steps\": [3, 6]}}", &res, 1);
    for (int k = 0; k < n_log; k++)
        ck_assert_double_eq(mlog[k].bytes, suffix_bytes[stage_of(mlog[k].round)]);
    ck_assert_int_ge(n_log, 11 * 4 * 2);
    check_frozen_marks(4);
    rm_dir();
}
END_TEST

/* FedAvg, every client every round (fraction 1), 32 local steps a round:
 * the server's round decides the stage; its model goes from the prefix
 * the client holds (round r's client reported round r - 1), the report is
 * the round's suffix; the frozen layers are the server's on every node. */
START_TEST(fedavg_freezes_by_server_rounds)
{
    after[0] = 2, after[1] = 4;
    mark[0] = mark[1] = 0;
    run_result res;
    run_wrapped(&alg_fedavg, RUN("\"fedavg\", \"fraction\": 1", "", "{\"steps\": 224}")
                " \"freeze\": {\"after_steps\": [2, 4]}}", &res, 1);
    int models = 0, reports = 0;
    for (int k = 0; k < n_log; k++) {
        const msg_rec *m = &mlog[k];
        if (m->tag == ALG_PS_TAG_MODEL) {
            const double want = m->round == 0 ? suffix_bytes[0]
                                              : suffix_bytes[stage_of(m->round - 1)];
            ck_assert_double_eq(m->bytes, want);
            models++;
        } else {
            ck_assert_double_eq(m->bytes, suffix_bytes[stage_of(m->round)]);
            reports++;
        }
    }
    ck_assert_int_eq(models, 4 * 7);
    ck_assert_int_eq(reports, 4 * 6);
    for (int i = 0; i < 4; i++)
        check_busy(i, 32 * (2 * step_s(0) + 2 * step_s(1) + 3 * step_s(2)));
    for (int i = 0; i < 5; i++) {
        ck_assert(memcmp(server_at[0], at_end[i], L1 * sizeof(double)) == 0);
        ck_assert(memcmp(server_at[1] + L1, at_end[i] + L1, (L2 - L1) * sizeof(double)) == 0);
    }
    ck_assert(memcmp(server_at[0] + L1, server_at[1] + L1, (L2 - L1) * sizeof(double)) != 0);
    ck_assert(memcmp(server_at[1] + L2, at_end[4] + L2, (P - L2) * sizeof(double)) != 0);
    /* round 1 still averages layer 1: the frozen values are round 1's
     * weighted average of the 4 reports, bit for bit (the server's daxpy
     * order, then 1/weight) */
    ck_assert_double_eq(fa_weight, 2048);
    cblas_dscal(P, 1.0 / fa_weight, fa_sum, 1);
    ck_assert(memcmp(fa_sum, server_at[0], L1 * sizeof(double)) == 0);
    rm_dir();
}
END_TEST

/* SmartFreeze's participant selection, its memory part: client 3's 5200
 * bytes hold stage 1 (5200 exactly) but not full training (9168), so the
 * server draws it from round 2 on (then the whole model: it holds no
 * prefix yet); its peak is stage 1's.  Without freezing the run is
 * refused naming it; a capacity below the last stage, or no client
 * holding the first, too. */
START_TEST(fedavg_draws_the_devices_that_fit)
{
    after[0] = 2, after[1] = 4;
    mark[0] = mark[1] = 0;
    run_result res;
    /* rounds 0, 1 of 3 clients and 2 .. 6 of 4: 2 x 96 + 5 x 128 = 4 x 208 steps */
    run_wrapped(&alg_fedavg, RUN("\"fedavg\", \"fraction\": 1",
                                 ", \"groups\": [{\"nodes\": [3], \"memory_bytes\": 5200}]",
                                 "{\"steps\": 208}")
                " \"freeze\": {\"after_steps\": [2, 4]}}", &res, 1);
    const double to3[7] = { 0, 0, suffix_bytes[0], suffix_bytes[1], suffix_bytes[1],
                            suffix_bytes[2], suffix_bytes[2] };
    int models3 = 0;
    for (int k = 0; k < n_log; k++) {
        const msg_rec *m = &mlog[k];
        if (m->tag != ALG_PS_TAG_MODEL || m->to != 3)
            continue;
        ck_assert_msg(m->round >= 2 && m->round < 7, "round %d", (int)m->round);
        ck_assert_double_eq(m->bytes, to3[m->round]);
        models3++;
    }
    ck_assert_int_eq(models3, 5);
    check_busy(3, 32 * (2 * step_s(1) + 3 * step_s(2)));
    check_busy(0, 32 * (2 * step_s(0) + 2 * step_s(1) + 3 * step_s(2)));
    ck_assert_double_eq(col(3, "mem_peak_bytes"), 5200);
    ck_assert_double_eq(col(3, "mem_exceeded"), 0);
    ck_assert_double_eq(col(0, "mem_peak_bytes"), 9168);
    for (int i = 0; i < 4; i++)
        ck_assert(memcmp(at_end[4], at_end[i], L2 * sizeof(double)) == 0);
    rm_dir();

    expect_prepare_error(RUN("\"fedavg\"", ", \"groups\": [{\"nodes\": [3], "
                             "\"memory_bytes\": 5200}]", "{\"steps\": 8}") " \"metrics\": {}}",
        "test.json: /compute/groups/0/memory_bytes: error: node 3 needs 9168 bytes at its "
        "first step (parameters 2032, gradients 2032, optimizer 2032, activations 3072; 0 "
        "frozen layers, batch 16), its capacity is 5200");
    expect_prepare_error(RUN("\"fedavg\"", ", \"groups\": [{\"nodes\": [3], "
                             "\"memory_bytes\": 3000}]", "{\"steps\": 8}")
                         " \"freeze\": {\"after_steps\": [2, 4]}}",
        "test.json: /compute/groups/0/memory_bytes: error: node 3 needs 3088 bytes even at the "
        "last stage (parameters 2032, gradients 144, optimizer 144, activations 768; 2 frozen "
        "layers, batch 16), its capacity is 3000");
    expect_prepare_error(RUN("\"fedavg\"", ", \"groups\": [{\"nodes\": [\"0-3\"], "
                             "\"memory_bytes\": 5200}]", "{\"steps\": 8}")
                         " \"freeze\": {\"after_steps\": [2, 4]}}",
        "test.json: /compute/groups/0/memory_bytes: error: no worker's capacity holds the first stage (0 "
        "frozen layers, 9168 bytes with batch 16): no round could begin");
}
END_TEST

/* Asynchronous SGD: the count is the server's version; node 0 three
 * times slower, so gradients of an earlier stage reach a later one.  A
 * push is its version's suffix, a reply starts at the pushed version's
 * prefix; a step costs the stage of the version it computed on. */
START_TEST(ps_async_freezes_by_versions)
{
    after[0] = 40, after[1] = 80;
    mark[0] = mark[1] = 0;
    run_result res;
    run_wrapped(&alg_ps_async, RUN("\"ps-async\"", ", \"groups\": [{\"nodes\": [0], "
                "\"slowdown\": 3}]", "{\"steps\": 60}")
                " \"freeze\": {\"after_steps\": [40, 80]}}", &res, 1);
    ck_assert_int_gt(server_grads, 200);
    for (int i = 0; i < 4; i++)
        check_busy(i, pa_busy[i] * (i == 0 ? 3 : 1));
    for (int i = 0; i < 5; i++) {
        ck_assert(memcmp(server_at[0], at_end[i], L1 * sizeof(double)) == 0);
        ck_assert(memcmp(server_at[1] + L1, at_end[i] + L1, (L2 - L1) * sizeof(double)) == 0);
    }
    ck_assert(memcmp(server_at[0] + L1, server_at[1] + L1, (L2 - L1) * sizeof(double)) != 0);
    rm_dir();
}
END_TEST

/* A node that crashes for good while the others freeze does not stall
 * them: the run ends at its stop time, the survivors at the last stage. */
START_TEST(crash_does_not_stall)
{
    const char *algs[] = { "\"dpsgd\"", "\"fedavg\", \"fraction\": 1", "\"ps-async\"",
                           "\"local-sgd\"" };
    const alg_type *types[] = { &alg_dpsgd, &alg_fedavg, &alg_ps_async, &alg_localsgd };
    after[0] = 3, after[1] = 6;
    mark[0] = mark[1] = 0;
    for (int a = 0; a < 4; a++) {
        char json[4096];
        snprintf(json, sizeof json,
                 "{\"seed\": 3, \"nodes\": 4, \"topology\": {\"kind\": \"ring\"},"
                 " \"compute\": {\"flops_per_s\": 1e9},"
                 " \"network\": {\"latency_s\": 0.001, \"bandwidth_Bps\": 1e7},"
                 " \"model\": {\"kind\": \"mlp\", \"hidden\": [16, 8]},"
                 " \"data\": {\"train\": 1024, \"test\": 128, \"features\": 20, \"classes\": 4},"
                 " \"faults\": {\"detect_s\": 0.05, \"events\": [{\"kind\": \"schedule\","
                 " \"nodes\": [3], \"down_s\": 0.02}]},"
                 " \"algorithm\": {\"name\": %s, \"lr\": 0.1, \"batch\": 16},"
                 " \"freeze\": {\"after_steps\": [3, 6]}, \"stop\": {\"time_s\": 1}}", algs[a]);
        run_result res;
        run_wrapped(types[a], json, &res, 1);
        ck_assert_msg(res.status == RUN_OK && strcmp(res.stop_reason, "time") == 0,
                      "%s: %s %s", algs[a], res.stop_reason, res.message);
        ck_assert_double_eq(col(0, "frozen_layers"), 2);
        rm_dir();
    }
}
END_TEST

/* Which stage a client's memory holds is its whole memory model: client
 * 3's 7136 bytes hold stage 1 (5200) but not stage 0 (9168: without the
 * activations, 3072, or without the optimizer state, 2032, it would fit),
 * so its first model comes in round 2, the whole model.  The server keeps
 * no activations: its peak is stage 0's 3 x 2032, its end stage 2's
 * 2032 + 144 + 144. */
START_TEST(fedavg_fits_the_whole_memory_model)
{
    after[0] = 2, after[1] = 4;
    mark[0] = mark[1] = 0;
    run_result res;
    run_wrapped(&alg_fedavg, RUN("\"fedavg\", \"fraction\": 1",
                                 ", \"groups\": [{\"nodes\": [3], \"memory_bytes\": 7136}]",
                                 "{\"steps\": 208}")
                " \"freeze\": {\"after_steps\": [2, 4]}}", &res, 1);
    uint64_t first = UINT64_MAX;
    for (int k = 0; k < n_log; k++)
        if (mlog[k].tag == ALG_PS_TAG_MODEL && mlog[k].to == 3 && mlog[k].round < first) {
            first = mlog[k].round;
            ck_assert_double_eq(mlog[k].bytes, suffix_bytes[0]);
        }
    ck_assert_int_eq((int)first, 2);
    ck_assert_double_eq(col(3, "mem_peak_bytes"), 5200);
    ck_assert_double_eq(col(3, "mem_capacity_bytes"), 7136);
    ck_assert_double_eq(col(4, "mem_peak_bytes"), 3 * 2032);
    ck_assert_double_eq(col(4, "mem_bytes"), 2032 + 144 + 144);
    ck_assert_double_eq(col(4, "frozen_layers"), 2);
    rm_dir();
}
END_TEST

/* A client back from a failure may hold other parameters (faults.rejoin
 * "neighbour"): the server's next model to it is the whole model, then
 * the suffix again.  Client 2 is down from 0.02 s to 0.03 s (declared
 * after 0.005 s, in round 5): from round 3 on (a round-r model goes from
 * round r - 1's prefix) it gets the whole model once, in the first round
 * that draws it back, and the suffix otherwise. */
START_TEST(fedavg_rejoined_client_gets_the_whole_model)
{
    after[0] = 2, after[1] = 4;
    mark[0] = mark[1] = 0;
    run_result res;
    run_wrapped(&alg_fedavg, RUN("\"fedavg\", \"fraction\": 1", "", "{\"time_s\": 0.08}")
                " \"faults\": {\"detect_s\": 0.005, \"rejoin\": \"neighbour\", \"events\":"
                " [{\"kind\": \"schedule\", \"nodes\": [2], \"down_s\": 0.02, \"up_s\": 0.03}]},"
                " \"freeze\": {\"after_steps\": [2, 4]}}", &res, 1);
    ck_assert_msg(res.status == RUN_OK, "%s", res.message);
    int whole = 0, suffix = 0;
    for (int k = 0; k < n_log; k++) {
        const msg_rec *m = &mlog[k];
        if (m->tag != ALG_PS_TAG_MODEL || m->to != 2)
            continue;
        if (m->round <= 2)   /* before freezing (a round-r model: round r - 1's prefix) */
            continue;
        if (m->bytes == suffix_bytes[0])
            whole++;
        else
            suffix++;
    }
    ck_assert_int_eq(whole, 1);
    ck_assert_int_gt(suffix, 10);
    rm_dir();
}
END_TEST

/* D-PSGD's moving mix with a frozen prefix (sim/train/trn.c: the prefix
 * of the buffer the parameters move to is copied from those they move
 * from): on 1, 2 and 3 threads (the mix deferred into the next step's
 * job, in pieces) every byte of metrics.csv and nodes.csv is the one
 * thread's. */
static char *slurp(const char *d, const char *name)
{
    char p[512];
    snprintf(p, sizeof p, "%s/%s", d, name);
    FILE *f = fopen(p, "rb");
    ck_assert_ptr_nonnull(f);
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *b = malloc((size_t)n + 1);
    ck_assert_ptr_nonnull(b);
    ck_assert_int_eq((long)fread(b, 1, (size_t)n, f), n);
    b[n] = '\0';
    fclose(f);
    return b;
}

START_TEST(dpsgd_freeze_threads_same_bytes)
{
    const char *json = RUN("\"dpsgd\"", ", \"groups\": [{\"nodes\": [0], \"slowdown\": 1.5}]",
                           "{\"steps\": 40}")
        " \"metrics\": {\"every_s\": 0.002}, \"freeze\": {\"after_steps\": [10, 20]}}";
    char *ref[2] = { NULL, NULL };
    const char *names[2] = { "metrics.csv", "nodes.csv" };
    for (int threads = 1; threads <= 3; threads++) {
        snprintf(dir, sizeof dir, "/tmp/dtsim-freeze2-XXXXXX");
        ck_assert_ptr_nonnull(mkdtemp(dir));
        run_options opt = { .out_dir = dir, .threads = threads };
        run_result res;
        run_json(json, &opt, &res);
        ck_assert_msg(res.status == RUN_OK, "%s", res.message);
        ck_assert_double_eq(col(1, "frozen_layers"), 2);
        for (int k = 0; k < 2; k++) {
            char *b = slurp(dir, names[k]);
            if (threads == 1) {
                ref[k] = b;
                continue;
            }
            ck_assert_msg(strcmp(ref[k], b) == 0, "%s differs with %d threads", names[k],
                          threads);
            free(b);
        }
        rm_dir();
    }
    free(ref[0]);
    free(ref[1]);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("freeze_protos");
    TCase *tc = tcase_create("freeze_protos");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, dpsgd_freezes_by_its_rounds);
    tcase_add_test(tc, localsgd_freezes_by_sync_rounds);
    tcase_add_test(tc, fedavg_freezes_by_server_rounds);
    tcase_add_test(tc, fedavg_draws_the_devices_that_fit);
    tcase_add_test(tc, ps_async_freezes_by_versions);
    tcase_add_test(tc, crash_does_not_stall);
    tcase_add_test(tc, fedavg_fits_the_whole_memory_model);
    tcase_add_test(tc, fedavg_rejoined_client_gets_the_whole_model);
    tcase_add_test(tc, dpsgd_freeze_threads_same_bytes);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    SRunner *sr = srunner_create(suite());
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
