/* test_grow.c -- progressive training block by block (freeze.mode "grow",
 * SmartFreeze; models/mdl_freeze.h, the MLP's block heads in mdl_mlp.c,
 * allreduce's and fedavg's window), pinned to exact values on a 20-16-8-4-4
 * MLP with heads: each stage's loss, gradient and evaluation are bit for
 * bit those of the plain MLP its path is (layers 1 .. t and t's head), with
 * zeros off the window; the layout, FLOP and memory closed forms by hand;
 * an all-reduce run's simulated time, bytes and memory columns against
 * them, the layers above the stage untouched until it reaches them; FedAvg's
 * messages from the prefix a client holds without the heads of blocks
 * frozen since; the errors, word for word.
 */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <gsl/gsl_randist.h>

#include "alg.h"
#include "alg_host.h"
#include "alg_ps.h"
#include "mdl.h"
#include "mdl_freeze.h"
#include "sim_rng.h"
#include "test_util.h"

/* Layout L1 H1 L2 H2 L3 O: 336 + 68 + 136 + 36 + 36 + 20 = 632. */
enum { P = 632, H1 = 336, L2 = 404, H2 = 540, L3 = 576, O = 612, MAXN = 5, MAXLOG = 4000 };
static const size_t lo_of[4] = { 0, L2, L3, O }, hi_of[4] = { L2, L3, P, P };

static mdl_model *grow_mlp_l2(size_t batch, double l2)
{
    mdl_arch a = { .d = 20, .n_classes = 4, .n_hidden = 3, .hidden = { 16, 8, 4 },
                   .act = MDL_ACT_RELU, .heads = 1 };
    mdl_model *m = mdl_create_arch(&mdl_mlp, &a, l2, batch);
    ck_assert_ptr_nonnull(m);
    ck_assert_uint_eq(mdl_n_params(m), P);
    return m;
}

static mdl_model *grow_mlp(size_t batch) { return grow_mlp_l2(batch, 1e-3); }

static void data(mdl_dataset *train, mdl_dataset *test)
{
    mdl_synth_spec sp = { .n_train = 256, .n_test = 16, .d = 20, .n_classes = 4,
                          .separation = 1 };
    ck_assert_int_eq(mdl_synth_generate(&sp, 3, train, test), 0);
}

/* Stage f's path as a plain MLP: its hidden widths and where each of its
 * layers lies in the grown layout (from, len), in order. */
typedef struct plain_path {
    size_t n_hidden, hidden[3], n_seg, from[4], len[4];
} plain_path;

static plain_path path_of(size_t f)
{
    switch (f) {
    case 0:  return (plain_path){ 1, { 16 }, 2, { 0, H1 }, { 336, 68 } };
    case 1:  return (plain_path){ 2, { 16, 8 }, 3, { 0, L2, H2 }, { 336, 136, 36 } };
    default: return (plain_path){ 3, { 16, 8, 4 }, 4, { 0, L2, L3, O }, { 336, 136, 36, 20 } };
    }
}

START_TEST(each_stage_is_its_plain_path)
{
    mdl_dataset train, test;
    data(&train, &test);
    mdl_model *m = grow_mlp(16);
    double x[P], g[P];
    gsl_rng *rng = gsl_rng_alloc(gsl_rng_mt19937);
    mdl_init_params(m, x, rng);
    gsl_rng_free(rng);
    size_t batch[16];
    for (size_t k = 0; k < 16; k++)
        batch[k] = (k * 37) % train.n;
    for (size_t f = 0; f <= 3; f++) {
        const plain_path pp = path_of(f);
        mdl_arch a = { .d = 20, .n_classes = 4, .n_hidden = pp.n_hidden, .act = MDL_ACT_RELU };
        memcpy(a.hidden, pp.hidden, sizeof pp.hidden);
        mdl_model *q = mdl_create_arch(&mdl_mlp, &a, 1e-3, 16);
        ck_assert_ptr_nonnull(q);
        const size_t Q = mdl_n_params(q);
        double *y = malloc(Q * sizeof *y), *gq = malloc(Q * sizeof *gq);
        size_t at = 0;
        for (size_t s = 0; s < pp.n_seg; s++) {
            memcpy(y + at, x + pp.from[s], pp.len[s] * sizeof(double));
            at += pp.len[s];
        }
        ck_assert_uint_eq(at, Q);
        ck_assert_int_eq(mdl_set_frozen(m, f), 0);
        ck_assert_int_eq(mdl_set_frozen(q, f < pp.n_hidden ? f : pp.n_hidden), 0);
        for (size_t k = 0; k < P; k++)
            g[k] = 1.0;   /* every entry must be written */
        const double lg = mdl_loss_grad(m, x, &train, batch, 16, g);
        const double lq = mdl_loss_grad(q, y, &train, batch, 16, gq);
        ck_assert_msg(memcmp(&lg, &lq, sizeof lg) == 0, "stage %zu: loss %.17g vs %.17g", f,
                      lg, lq);
        /* the window is the plain gradient's trainable part, the rest 0 */
        const size_t lo = mdl_freeze_prefix(m, f), hi = mdl_freeze_end(m, f);
        ck_assert_uint_eq(lo, lo_of[f]);
        ck_assert_uint_eq(hi, hi_of[f]);
        for (size_t k = 0; k < P; k++)
            if (k < lo || k >= hi)
                ck_assert_msg(g[k] == 0.0 && !signbit(g[k]), "stage %zu: g[%zu] = %g", f, k,
                              g[k]);
        at = 0;
        for (size_t s = 0; s < pp.n_seg; s++) {
            for (size_t k = 0; k < pp.len[s]; k++) {
                const size_t gk = pp.from[s] + k;
                if (gk >= lo && gk < hi)
                    ck_assert_msg(memcmp(&g[gk], &gq[at + k], sizeof(double)) == 0,
                                  "stage %zu: g[%zu]", f, gk);
            }
            at += pp.len[s];
        }
        double el, ea, ql, qa;
        mdl_evaluate(m, x, &test, NULL, 0, &el, &ea);
        mdl_evaluate(q, y, &test, NULL, 0, &ql, &qa);
        ck_assert(memcmp(&el, &ql, sizeof el) == 0 && memcmp(&ea, &qa, sizeof ea) == 0);
        free(y);
        free(gq);
        mdl_destroy(q);
    }
    mdl_destroy(m);
    mdl_dataset_fini(&train);
    mdl_dataset_fini(&test);
}
END_TEST

/* By hand: FLOPs per sample of stage f (frozen layers 2 in out, the
 * stage's layer 4 in out, its head 6 C s_t or the output layer alone 4 C
 * s_L), heads in a range, and the memory model with momentum, batch 16,
 * 4 bytes: params held (the built layers without the frozen blocks'
 * heads), gradients and momentum of the window, the inputs of the window's
 * layers and the C outputs per sample. */
START_TEST(closed_forms)
{
    mdl_model *m = grow_mlp(16);
    ck_assert(mdl_freeze_grows(m));
    ck_assert_uint_eq(mdl_freeze_max(m), 3);
    static const double fl[4] = { 1280 + 384, 640 + 512 + 192, 640 + 256 + 128 + 96,
                                  640 + 256 + 64 + 64 };
    for (size_t f = 0; f <= 3; f++)
        ck_assert_double_eq(mdl_freeze_flops(m, f), fl[f]);
    ck_assert_double_eq(mdl_flops_per_sample(m), 1280 + 768 + 192 + 96);   /* the plain MLP */
    ck_assert_uint_eq(mdl_freeze_heads_in(m, 0, L2), 68);
    ck_assert_uint_eq(mdl_freeze_heads_in(m, 0, L3), 104);
    ck_assert_uint_eq(mdl_freeze_heads_in(m, L2, L3), 36);
    ck_assert_uint_eq(mdl_freeze_heads_in(m, L3, O), 0);
    ck_assert_uint_eq(mdl_freeze_heads_in(m, 0, H1 + 67), 0);   /* only whole heads */
    static const double params[4] = { 404, 508, 528, 528 }, win[4] = { 404, 172, 56, 20 },
                        acts[4] = { 16 * 40, 16 * 28, 16 * 16, 16 * 8 },
                        total[4] = { 7408, 5200, 3584, 2784 };
    for (size_t f = 0; f <= 3; f++) {
        const mdl_memory mm = mdl_memory_of(m, f, 16, 1, 4);
        ck_assert_double_eq(mm.params, 4 * params[f]);
        ck_assert_double_eq(mm.grads, 4 * win[f]);
        ck_assert_double_eq(mm.optim, 4 * win[f]);
        ck_assert_double_eq(mm.acts, 4 * acts[f]);
        ck_assert_double_eq(mm.total, total[f]);
    }
    mdl_destroy(m);
    /* without heads nothing changes: the suffix, the full step at stage 0 */
    mdl_arch a = { .d = 20, .n_classes = 4, .n_hidden = 3, .hidden = { 16, 8, 4 },
                   .act = MDL_ACT_RELU };
    mdl_model *q = mdl_create_arch(&mdl_mlp, &a, 1e-3, 16);
    ck_assert_uint_eq(mdl_n_params(q), 528);
    ck_assert(!mdl_freeze_grows(q));
    for (size_t f = 0; f <= 3; f++)
        ck_assert_uint_eq(mdl_freeze_end(q, f), 528);
    ck_assert_double_eq(mdl_freeze_flops(q, 0), mdl_flops_per_sample(q));
    ck_assert_double_eq(mdl_memory_of(q, 0, 16, 1, 4).total, 4 * (3 * 528 + 16 * 52));
    mdl_destroy(q);
    /* the initialisation draws in layout order, a head as the output
     * layer (N(0, 1 / s_l)): the same draws replayed by hand */
    {
        mdl_model *g = grow_mlp(16);
        double x[P];
        gsl_rng *r1 = gsl_rng_alloc(gsl_rng_mt19937), *r2 = gsl_rng_alloc(gsl_rng_mt19937);
        mdl_init_params(g, x, r1);
        static const size_t w_at[6] = { 0, H1, L2, H2, L3, O }, w_n[6] = { 320, 64, 128, 32, 32, 16 };
        static const double fan[6] = { 20, 16, 16, 8, 8, 4 }, gain[6] = { 2, 1, 2, 1, 2, 1 };
        for (int b = 0; b < 6; b++)
            for (size_t k = 0; k < w_n[b]; k++) {
                const double v = gsl_ran_gaussian(r2, sqrt(gain[b] / fan[b]));
                ck_assert_msg(memcmp(&v, &x[w_at[b] + k], sizeof v) == 0, "block %d draw %zu", b,
                              k);
            }
        gsl_rng_free(r1);
        gsl_rng_free(r2);
        mdl_destroy(g);
    }
    /* heads only on an MLP */
    mdl_arch s = { .d = 20, .n_classes = 4, .heads = 1 };
    ck_assert_ptr_null(mdl_create_arch(&mdl_softmax, &s, 0, 16));
}
END_TEST

/* ---- whole runs ---- */

#define RUN(alg, stop) \
    "{\"seed\": 3, \"nodes\": 4," \
    " \"compute\": {\"flops_per_s\": 1e9}," \
    " \"network\": {\"latency_s\": 0.001, \"bandwidth_Bps\": 1e7, \"bytes_per_param\": 4}," \
    " \"model\": {\"kind\": \"mlp\", \"hidden\": [16, 8, 4], \"l2\": 0.0001}," \
    " \"data\": {\"train\": 2048, \"test\": 512, \"features\": 20, \"classes\": 4," \
    "   \"separation\": 1}," \
    " \"algorithm\": {\"name\": " alg ", \"lr\": 0.1, \"batch\": 16}," \
    " \"optimizer\": {\"momentum\": 0.9, \"weight_decay\": 0.001}, \"stop\": " stop ","

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
static long steps0;
static double at[4][P], at_end[MAXN][P];   /* node 0 after steps 1, 11, 21, 31 */

static void w_step_done(alg_ctx *ctx, void *st, int node, const double *grad)
{
    if (node == 0) {
        steps0++;
        for (int k = 0; k < 4; k++)
            if (steps0 == 1 + 10 * k)
                memcpy(at[k], alg_params_const(ctx, 0), sizeof at[k]);
    }
    inner->on_step_done(ctx, st, node, grad);
}

static void w_message(alg_ctx *ctx, void *st, int node, const cl_msg *m)
{
    if (n_log < MAXLOG)
        mlog[n_log++] = (msg_rec){ m->from, m->to, m->tag, m->round, m->bytes };
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
    steps0 = 0;
    snprintf(dir, sizeof dir, "/tmp/dtsim-grow-XXXXXX");
    ck_assert_ptr_nonnull(mkdtemp(dir));
    run_options opt = { .out_dir = dir, .algorithm = &wrapped, .threads = threads };
    run_json(json, &opt, res);
}

static void rm_dir(void) { test_rm_run_dir(dir); }

/* nodes.csv's value of column name for node. */
static double col(int node, const char *name) { return test_nodes_col(dir, node, name); }

static const double flops[4] = { 1664, 1344, 1120, 1024 };
static double step_s(int f) { return 16 * flops[f] / 1e9; }
static int stage_of(uint64_t r) { return r < 10 ? 0 : r < 20 ? 1 : r < 30 ? 2 : 3; }

/* Ring all-reduce of 4 nodes, stages ending at rounds 10, 20, 30: round r
 * costs its stage's step and a ring over its window (6 hops of 1 ms and a
 * quarter of the window's bytes at 10 MB/s); the peak is stage 1's 7408
 * bytes, the last stage holds 2784; layers above the stage keep their
 * initial bits until it reaches them, a finished block keeps its own. */
START_TEST(allreduce_trains_block_by_block)
{
    const char *json = RUN("\"allreduce\"", "{\"steps\": 60}")
                       " \"freeze\": {\"mode\": \"grow\", \"after_steps\": [10, 20, 30]}}";
    run_result res;
    run_wrapped(&alg_allreduce, json, &res, 1);
    const double win[4] = { 404, 172, 56, 20 };
    double t = 0, busy = 0;
    for (int r = 0; r < 60; r++) {
        const int f = stage_of((uint64_t)r);
        t += step_s(f) + (r < 59 ? 6 * (0.001 + 4 * win[f] / 4 / 1e7) : 0);
        busy += step_s(f);
    }
    ck_assert_msg(fabs(res.sim_time_s - t) < 1e-12 * t, "time %.17g, closed form %.17g",
                  res.sim_time_s, t);
    ck_assert_msg(fabs(col(0, "compute_s") - busy) < 1e-12 * busy, "compute %.17g vs %.17g",
                  col(0, "compute_s"), busy);
    const double msgs = col(0, "msgs_sent");
    const double bytes = 10 * 6 * (101 + 43 + 14) * 4 + 29 * 6 * 5 * 4 + (msgs - 59 * 6) * 5 * 4;
    ck_assert_double_eq(col(0, "bytes_sent"), bytes);
    ck_assert_double_eq(col(0, "frozen_layers"), 3);
    ck_assert_double_eq(col(0, "mem_peak_bytes"), 7408);
    ck_assert_double_eq(col(0, "mem_bytes"), 2784);
    ck_assert_double_eq(col(0, "mem_params_bytes"), 4 * 528);
    /* untouched above the stage: L2 .. O through stage 1, L3 O through 2 */
    ck_assert(memcmp(at[0] + L2, at[1] + L2, (P - L2) * sizeof(double)) == 0);
    ck_assert(memcmp(at[1] + L3, at[2] + L3, (P - L3) * sizeof(double)) == 0);
    ck_assert(memcmp(at[1] + L2, at[2] + L2, (L3 - L2) * sizeof(double)) != 0);
    /* each block's own after its stage: L1 H1 from round 10, L2 H2 from 20,
     * L3 from 30; the output layer trains to the end */
    ck_assert(memcmp(at[1], at_end[0], L2 * sizeof(double)) == 0);
    ck_assert(memcmp(at[2] + L2, at_end[0] + L2, (L3 - L2) * sizeof(double)) == 0);
    ck_assert(memcmp(at[3] + L3, at_end[0] + L3, (O - L3) * sizeof(double)) == 0);
    ck_assert(memcmp(at[3] + O, at_end[0] + O, (P - O) * sizeof(double)) != 0);
    /* the evaluations run the last stage's network: its test loss is the
     * grown model's at stage 3 on the run's test set */
    mdl_synth_spec sp = { .n_train = 2048, .n_test = 512, .d = 20, .n_classes = 4,
                          .separation = 1 };
    mdl_dataset train, test;
    ck_assert_int_eq(mdl_synth_generate(&sp, sim_rng_derive(3, SIM_RNG_NO_NODE, SIM_RNG_DATAGEN),
                                        &train, &test), 0);
    mdl_model *m = grow_mlp_l2(16, 1e-4);   /* the scenario's l2 */
    double tl, ta;
    ck_assert_int_eq(mdl_set_frozen(m, 3), 0);
    mdl_evaluate(m, at_end[0], &test, NULL, 0, &tl, &ta);
    ck_assert_msg(memcmp(&tl, &res.last.test_loss, sizeof tl) == 0, "test loss %.17g, stage 3 "
                  "%.17g", res.last.test_loss, tl);
    ck_assert_int_eq(mdl_set_frozen(m, 0), 0);
    mdl_evaluate(m, at_end[0], &test, NULL, 0, &tl, &ta);
    ck_assert(tl != res.last.test_loss);
    mdl_destroy(m);
    mdl_dataset_fini(&train);
    mdl_dataset_fini(&test);
    const double loss = res.last.train_loss, acc = res.last.test_accuracy;
    rm_dir();
    run_wrapped(&alg_allreduce, json, &res, 2);   /* threads: the same bits */
    ck_assert(memcmp(&loss, &res.last.train_loss, sizeof loss) == 0);
    ck_assert(memcmp(&acc, &res.last.test_accuracy, sizeof acc) == 0);
    rm_dir();
}
END_TEST

/* FedAvg, every client every round, 32 local steps a round, stages ending
 * at server rounds 2, 4, 6: a client's model goes from the prefix it holds
 * (none at round 0; the stage of its last report after) to the round's
 * stage's end, and its bytes leave out the heads of the blocks frozen in
 * between; the report is the round's window; every node ends with the
 * server's frozen blocks. */
START_TEST(fedavg_sends_windows)
{
    run_result res;
    run_wrapped(&alg_fedavg, RUN("\"fedavg\", \"fraction\": 1", "{\"steps\": 288}")
                " \"freeze\": {\"mode\": \"grow\", \"after_steps\": [2, 4, 6]}}", &res, 1);
    static const double model[9] = { 404, 404, 576 - 68, 172, 228 - 36, 56, 56, 20, 20 };
    static const double report[4] = { 404, 172, 56, 20 };
    int models = 0, reports = 0;
    for (int k = 0; k < n_log; k++) {
        const msg_rec *m = &mlog[k];
        if (m->tag == ALG_PS_TAG_MODEL) {
            ck_assert_msg(m->bytes == 4 * model[m->round], "round %d model %g bytes",
                          (int)m->round, m->bytes);
            models++;
        } else {
            ck_assert_double_eq(m->bytes, 4 * report[m->round / 2]);
            reports++;
        }
    }
    ck_assert_int_eq(models, 4 * 9);
    ck_assert_int_eq(reports, 4 * 8);
    for (int i = 0; i < 4; i++) {
        const double busy = 32 * (2 * step_s(0) + 2 * step_s(1) + 2 * step_s(2) + 3 * step_s(3));
        ck_assert_msg(fabs(col(i, "compute_s") - busy) < 1e-12 * busy, "node %d", i);
        ck_assert(memcmp(at_end[4], at_end[i], O * sizeof(double)) == 0);
    }
    ck_assert_double_eq(col(0, "mem_peak_bytes"), 7408);
    rm_dir();
}
END_TEST

/* Time to target with stages: a model kept between two evaluations is
 * evaluated as the network of its own stage, so the bisection between
 * sparse evaluations places the crossing where dense evaluations find it
 * (layer 1 trains 2 rounds, the target is crossed while block 2 trains). */
START_TEST(target_bisection_reads_each_models_stage)
{
    double t[2];
    for (int k = 0; k < 2; k++) {
        char json[4096];
        snprintf(json, sizeof json, "%s \"metrics\": {\"every_s\": %s},"
                 " \"freeze\": {\"mode\": \"grow\", \"after_steps\": [2, 40, 50]}}",
                 RUN("\"allreduce\"", "{\"steps\": 60, \"target_accuracy\": 0.8}"),
                 k == 0 ? "0.0001" : "0.1");
        run_result res;
        run_wrapped(&alg_allreduce, json, &res, 1);
        ck_assert_str_eq(res.stop_reason, "target_accuracy");
        ck_assert_int_eq(res.n_targets, 1);
        t[k] = res.targets[0].time_s;
        ck_assert_double_eq(res.targets[0].err_s, 0);
        rm_dir();
    }
    ck_assert_msg(t[0] > 16 * 1664 / 1e9 * 2, "crossed in stage 1 (%g s)", t[0]);
    ck_assert_msg(t[0] == t[1], "dense %.17g, bisected %.17g", t[0], t[1]);
}
END_TEST

START_TEST(errors_are_located)
{
    expect_prepare_error(RUN("\"dpsgd\"", "{\"steps\": 10}")
                         " \"topology\": {\"kind\": \"ring\"},"
                         " \"freeze\": {\"mode\": \"grow\", \"after_steps\": [2]}}",
                         "test.json: /freeze/mode: error: algorithm \"dpsgd\" does not train "
                         "block by block (mode \"grow\": the protocols that send only the "
                         "stage's block and head: allreduce, fedavg); mode \"freeze\" works "
                         "with it");
    scn_scenario s;
    scn_error err;
    ck_assert_int_eq(scn_load_string(RUN("\"allreduce\"", "{\"steps\": 10}")
                                     " \"freeze\": {\"mode\": \"grown\", \"after_steps\": [2]}}",
                                     "test.json", NULL, 0, &s, &err), -1);
    ck_assert_str_eq(err.msg, "test.json: /freeze/mode: error: unknown mode \"grown\" "
                              "(expected one of: freeze, grow)");
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("grow");
    TCase *tc = tcase_create("grow");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, each_stage_is_its_plain_path);
    tcase_add_test(tc, closed_forms);
    tcase_add_test(tc, allreduce_trains_block_by_block);
    tcase_add_test(tc, fedavg_sends_windows);
    tcase_add_test(tc, target_bisection_reads_each_models_stage);
    tcase_add_test(tc, errors_are_located);
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
