/* test_freeze.c -- progressive freezing and the per-node memory model
 * (models/mdl_freeze.h, sim/train/trn_freeze.c, the freeze section, the
 * allreduce protocol's suffix collective, nodes.csv's mem_ columns), all
 * pinned to exact values: the frozen gradient is the full one's suffix bit
 * for bit; a frozen trainer is a full one updating only the suffix; the
 * FLOP, memory and ring closed forms by hand for a 20-16-8-4 MLP; a run's
 * simulated time, compute seconds, bytes and memory columns against them;
 * frozen layers bit-constant in a run; the errors, word for word.
 */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "alg.h"
#include "alg_host.h"
#include "mdl.h"
#include "mdl_freeze.h"
#include "trn.h"
#include "test_util.h"

/* 20-16-8-4: layer 1 has 16*20 + 16 = 336 parameters, layer 2 8*16 + 8 =
 * 136, layer 3 4*8 + 4 = 36; P = 508. */
static mdl_model *mlp(size_t batch)
{
    mdl_arch a = { .d = 20, .n_classes = 4, .n_hidden = 2, .hidden = { 16, 8 },
                   .act = MDL_ACT_RELU };
    mdl_model *m = mdl_create_arch(&mdl_mlp, &a, 1e-3, batch);
    ck_assert_ptr_nonnull(m);
    ck_assert_uint_eq(mdl_n_params(m), 508);
    return m;
}

static void data(mdl_dataset *train, mdl_dataset *test)
{
    mdl_synth_spec sp = { .n_train = 256, .n_test = 16, .d = 20, .n_classes = 4,
                          .separation = 1 };
    ck_assert_int_eq(mdl_synth_generate(&sp, 3, train, test), 0);
}

START_TEST(frozen_gradient_is_the_full_suffix)
{
    mdl_dataset train, test;
    data(&train, &test);
    mdl_model *m = mlp(16);
    double x[508], g[508], gf[508];
    gsl_rng *rng = gsl_rng_alloc(gsl_rng_mt19937);
    mdl_init_params(m, x, rng);
    gsl_rng_free(rng);
    size_t batch[16];
    for (size_t k = 0; k < 16; k++)
        batch[k] = (k * 37) % train.n;
    const double loss = mdl_loss_grad(m, x, &train, batch, 16, g);
    const size_t off[3] = { 0, 336, 472 };
    for (size_t f = 1; f <= 2; f++) {
        ck_assert_int_eq(mdl_set_frozen(m, f), 0);
        for (size_t k = 0; k < 508; k++)
            gf[k] = 1.0;   /* the prefix must be written */
        const double lf = mdl_loss_grad(m, x, &train, batch, 16, gf);
        ck_assert_msg(memcmp(&lf, &loss, sizeof loss) == 0, "f=%zu: loss %.17g, full %.17g",
                      f, lf, loss);
        for (size_t k = 0; k < off[f]; k++)
            ck_assert_msg(gf[k] == 0.0, "f=%zu: frozen gradient [%zu] = %g", f, k, gf[k]);
        ck_assert_msg(memcmp(gf + off[f], g + off[f], (508 - off[f]) * sizeof(double)) == 0,
                      "f=%zu: the suffix differs from the full gradient's", f);
    }
    ck_assert_int_eq(mdl_set_frozen(m, 3), -1);   /* the output layer always trains */
    ck_assert_uint_eq(mdl_frozen(m), 2);
    mdl_destroy(m);
    mdl_dataset_fini(&train);
    mdl_dataset_fini(&test);
}
END_TEST

START_TEST(flops_prefix_and_memory_closed_forms)
{
    mdl_model *m = mlp(16);
    /* per layer io: 320, 128, 32; full: 4*320 + 6*128 + 6*32 */
    ck_assert_double_eq(mdl_freeze_flops(m, 0), 2240);
    ck_assert_double_eq(mdl_flops_per_sample(m), 2240);
    ck_assert_double_eq(mdl_freeze_flops(m, 1), 2 * 320 + 4 * 128 + 6 * 32);
    ck_assert_double_eq(mdl_freeze_flops(m, 2), 2 * 320 + 2 * 128 + 4 * 32);
    ck_assert_uint_eq(mdl_freeze_max(m), 2);
    ck_assert_uint_eq(mdl_freeze_prefix(m, 0), 0);
    ck_assert_uint_eq(mdl_freeze_prefix(m, 1), 336);
    ck_assert_uint_eq(mdl_freeze_prefix(m, 2), 472);
    /* momentum (1 slot), 4 bytes a value, batch 16 */
    mdl_memory r = mdl_memory_of(m, 0, 16, 1, 4);
    ck_assert_double_eq(r.params, 4 * 508);
    ck_assert_double_eq(r.grads, 4 * 508);
    ck_assert_double_eq(r.optim, 4 * 508);
    ck_assert_double_eq(r.acts, 4 * 16 * (20 + 16 + 8 + 4));
    ck_assert_double_eq(r.total, 9168);
    r = mdl_memory_of(m, 1, 16, 1, 4);
    ck_assert_double_eq(r.grads, 4 * 172);
    ck_assert_double_eq(r.acts, 4 * 16 * (16 + 8 + 4));
    ck_assert_double_eq(r.total, 2032 + 688 + 688 + 1792);
    r = mdl_memory_of(m, 2, 16, 0, 8);   /* plain SGD, doubles */
    ck_assert_double_eq(r.optim, 0);
    ck_assert_double_eq(r.total, 8 * 508 + 8 * 36 + 8 * 16 * (8 + 4));
    mdl_destroy(m);
    /* a one-layer type: softmax 20 -> 4, 84 parameters */
    mdl_model *s = mdl_create(&mdl_softmax, 20, 4, 0, 8);
    ck_assert_uint_eq(mdl_freeze_max(s), 0);
    r = mdl_memory_of(s, 0, 8, 1, 4);
    ck_assert_double_eq(r.total, 3 * 4 * 84 + 4 * 8 * (20 + 4));
    mdl_destroy(s);
}
END_TEST

/* A trainer with layer 1 frozen is a full trainer whose updates touch only
 * layers 2 and 3: the same batches (same seed), the same parameters bit
 * for bit after 40 momentum steps, and layer 1 as it was initialised. */
START_TEST(frozen_trainer_is_fixed_layers)
{
    mdl_dataset train, test;
    data(&train, &test);
    mdl_partition part;
    ck_assert_int_eq(mdl_partition_iid(train.n, 1, 5, &part), 0);
    mdl_model *ma = mlp(16), *mb = mlp(16);
    const mdl_optim_spec opt = { .lr = 0.1, .momentum = 0.9, .weight_decay = 1e-3 };
    trn_config ca = { .n_nodes = 1, .seed = 9, .model = ma, .train = &train, .part = &part,
                      .batch = 16, .optim = opt };
    trn_config cb = ca;
    cb.model = mb;
    trn_trainer *a = trn_create(&ca), *b = trn_create(&cb);
    ck_assert_int_eq(trn_init_params(a), 0);
    ck_assert_int_eq(trn_init_params(b), 0);
    double x0[508];
    memcpy(x0, trn_params_const(a, 0), sizeof x0);
    ck_assert_int_eq(trn_set_frozen(a, 0, 1), 0);
    ck_assert_int_eq(trn_set_frozen(a, 0, 3), -1);
    ck_assert_uint_eq(trn_frozen(a, 0), 1);
    ck_assert_uint_eq(trn_frozen_prefix(a, 0), 336);
    for (int k = 0; k < 40; k++) {
        trn_step_begin(a, 0, (uint64_t)k + 1, 0);
        trn_apply(a, 0, trn_params(a, 0), trn_grad(a, 0), 1);
        trn_step_begin(b, 0, (uint64_t)k + 1, 0);
        trn_apply_range(b, 0, trn_params(b, 0), trn_grad(b, 0), 1, 336, 508, 1);
    }
    const double *xa = trn_params_const(a, 0), *xb = trn_params_const(b, 0);
    ck_assert_msg(memcmp(xa, xb, sizeof x0) == 0, "a frozen trainer differs from fixed layers");
    ck_assert_msg(memcmp(xa, x0, 336 * sizeof(double)) == 0, "layer 1 moved");
    ck_assert_msg(memcmp(xa + 336, x0 + 336, 172 * sizeof(double)) != 0, "nothing trained");
    trn_destroy(a);
    trn_destroy(b);
    mdl_destroy(ma);
    mdl_destroy(mb);
    mdl_partition_fini(&part);
    mdl_dataset_fini(&train);
    mdl_dataset_fini(&test);
}
END_TEST

/* ---- whole runs ---- */

/* 4 nodes, ring all-reduce, FLOP-priced constant steps, 1 ms links at 10
 * MB/s; layer 1 frozen from round 10, layer 2 from round 20. */
#define RUN(extra) RUN_ALG("allreduce", extra)
#define RUN_ALG(alg, extra) \
    "{\"seed\": 3, \"nodes\": 4," \
    " \"compute\": {\"flops_per_s\": 1e9" extra "}," \
    " \"network\": {\"latency_s\": 0.001, \"bandwidth_Bps\": 1e7, \"bytes_per_param\": 4}," \
    " \"model\": {\"kind\": \"mlp\", \"hidden\": [16, 8], \"l2\": 0.0001}," \
    " \"data\": {\"train\": 2048, \"test\": 512, \"features\": 20, \"classes\": 4," \
    "   \"separation\": 1}," \
    " \"algorithm\": {\"name\": \"" alg "\", \"lr\": 0.1, \"batch\": 16}," \
    " \"optimizer\": {\"momentum\": 0.9},"

/* The wrapper: node 0's parameters after its 11th and 21st steps (the
 * frozen layers' final values, rounds 10 and 20 having begun) and at the
 * end. */
static alg_type wrapped;
static double at1[508], at11[508], at21[508], at_end[508];
static long steps0;

static void w_step_done(alg_ctx *ctx, void *st, int node, const double *grad)
{
    if (node == 0) {
        steps0++;
        if (steps0 == 1)
            memcpy(at1, alg_params_const(ctx, 0), sizeof at1);
        if (steps0 == 11)
            memcpy(at11, alg_params_const(ctx, 0), sizeof at11);
        if (steps0 == 21)
            memcpy(at21, alg_params_const(ctx, 0), sizeof at21);
    }
    alg_allreduce.on_step_done(ctx, st, node, grad);
}

static int w_stats(const alg_ctx *ctx, const char **keys, double *values, int max)
{
    (void)keys;
    (void)values;
    (void)max;
    memcpy(at_end, alg_params_const(ctx, 0), sizeof at_end);
    return 0;
}

/* nodes.csv's row of node 0 in dir, as numbers by column name. */
static double col(const char *dir, const char *name) { return test_nodes_col(dir, 0, name); }

static void run_to(const char *json, const char *dir, run_result *res, int threads)
{
    wrapped = alg_allreduce;
    wrapped.on_step_done = w_step_done;
    wrapped.stats = w_stats;
    steps0 = 0;
    run_options opt = { .out_dir = dir, .algorithm = &wrapped, .threads = threads };
    run_json(json, &opt, res);
}

static char *tmpdir(void)
{
    static char d[64];
    snprintf(d, sizeof d, "/tmp/dtsim-freeze-XXXXXX");
    ck_assert_ptr_nonnull(mkdtemp(d));
    return d;
}

static void rmdir_all(const char *d) { test_rm_run_dir(d); }

/* Per sample FLOPs 2240, 1344, 1024 by stage; a ring round over len
 * parameters: 6 stages of 1 ms and len/4 * 4 bytes at 1e7 B/s. */
static double step_s(int stage)
{
    static const double fl[3] = { 2240, 1344, 1024 };
    return 16 * fl[stage] / 1e9;
}
static double ring_s(size_t len) { return 6 * (0.001 + (double)len / 1e7); }

START_TEST(run_time_bytes_memory_exact)
{
    const char *json = RUN("") " \"freeze\": {\"after_steps\": [10, 20]},"
                       " \"stop\": {\"steps\": 120}}";
    char *dir = tmpdir();
    run_result res;
    run_to(json, dir, &res, 1);
    /* 120 rounds: steps 1-10 full, 11-20 one layer frozen, 21-120 two;
     * the run stops as the 120th steps end, before their all-reduce */
    double t = 0, busy = 0;
    size_t len[3] = { 508, 172, 36 };
    for (int r = 0; r < 120; r++) {
        int st = r < 10 ? 0 : r < 20 ? 1 : 2;
        t += step_s(st) + (r < 119 ? ring_s(len[st]) : 0);
        busy += step_s(st);
    }
    ck_assert_msg(fabs(res.sim_time_s - t) < 1e-12 * t, "time %.17g, closed form %.17g",
                  res.sim_time_s, t);
    ck_assert_msg(fabs(col(dir, "compute_s") - busy) < 1e-12 * busy, "compute %.17g vs %.17g",
                  col(dir, "compute_s"), busy);
    /* bytes: 6 chunks of len/4 parameters per round; the 120th round's
     * messages sent when the run stopped are 9-parameter chunks */
    const double msgs = col(dir, "msgs_sent");
    const double bytes = 10 * 6 * 127 * 4 + 10 * 6 * 43 * 4 + 99 * 6 * 9 * 4
                         + (msgs - 119 * 6) * 9 * 4;
    ck_assert_double_eq(col(dir, "bytes_sent"), bytes);
    /* memory: the peak at the first stage, the parts at the last */
    ck_assert_double_eq(col(dir, "frozen_layers"), 2);
    ck_assert_double_eq(col(dir, "mem_peak_bytes"), 9168);
    ck_assert_double_eq(col(dir, "mem_params_bytes"), 2032);
    ck_assert_double_eq(col(dir, "mem_grads_bytes"), 144);
    ck_assert_double_eq(col(dir, "mem_optim_bytes"), 144);
    ck_assert_double_eq(col(dir, "mem_acts_bytes"), 4 * 16 * 12);
    ck_assert_double_eq(col(dir, "mem_bytes"), 2032 + 144 + 144 + 768);
    ck_assert_double_eq(col(dir, "mem_capacity_bytes"), 0);
    ck_assert_double_eq(col(dir, "mem_exceeded"), 0);
    /* layer 1 fixed from round 10, layer 2 from round 20, layer 3 trains */
    ck_assert(memcmp(at11, at_end, 336 * sizeof(double)) == 0);
    ck_assert(memcmp(at21 + 336, at_end + 336, 136 * sizeof(double)) == 0);
    ck_assert(memcmp(at11 + 336, at21 + 336, 136 * sizeof(double)) != 0);
    ck_assert(memcmp(at21 + 472, at_end + 472, 36 * sizeof(double)) != 0);
    const double loss = res.last.train_loss;
    rmdir_all(dir);
    /* threads: the same bits */
    dir = tmpdir();
    run_to(json, dir, &res, 2);
    ck_assert(memcmp(&loss, &res.last.train_loss, sizeof loss) == 0);
    ck_assert(memcmp(at11, at_end, 336 * sizeof(double)) == 0);
    rmdir_all(dir);
}
END_TEST

/* ps-sync: a worker pushes its version's trainable suffix and gets back
 * the suffix the server's update of that version changed: 30 rounds,
 * pushes 2032, 688, 144 bytes by stage, models of the 29 answered rounds
 * likewise; the server holds params, gradient and momentum of the suffix. */
START_TEST(ps_sync_sends_the_suffix)
{
    char *dir = tmpdir();
    run_result res;
    run_options opt = { .out_dir = dir };
    run_json(RUN_ALG("ps-sync", "") " \"freeze\": {\"after_steps\": [10, 20]},"
             " \"stop\": {\"steps\": 30}}", &opt, &res);
    ck_assert_double_eq(col(dir, "bytes_sent"), 10 * 2032 + 10 * 688 + 10 * 144);
    ck_assert_double_eq(col(dir, "bytes_received"), 10 * 2032 + 10 * 688 + 9 * 144);
    const double busy = 10 * step_s(0) + 10 * step_s(1) + 10 * step_s(2);
    ck_assert_msg(fabs(col(dir, "compute_s") - busy) < 1e-12 * busy, "compute %.17g vs %.17g",
                  col(dir, "compute_s"), busy);
    ck_assert_double_eq(col(dir, "mem_bytes"), 3088);
    rmdir_all(dir);
}
END_TEST

/* The criterion: every `window` rounds the next layer freezes when
 * ||x - x_prev||^2 < threshold^2 ||x_prev||^2.  A huge threshold freezes
 * at every check: the run is the schedule [10, 20]'s, time for time.  At
 * the first check (round 10) layer 1 moved by r = ||x10 - x0|| / ||x0||
 * (measured on a run without freezing): a threshold just above r freezes
 * it there, just below it does not. */
START_TEST(criterion_freezes_at_its_checks)
{
    char *dir = tmpdir();
    run_result res, sched;
    run_to(RUN("") " \"freeze\": {\"after_steps\": [10, 20]}, \"stop\": {\"steps\": 40}}",
           dir, &sched, 1);
    const double bytes = col(dir, "bytes_sent");
    rmdir_all(dir);
    dir = tmpdir();
    run_to(RUN("") " \"freeze\": {\"threshold\": 1e300, \"window\": 10},"
           " \"stop\": {\"steps\": 40}}", dir, &res, 1);
    ck_assert(memcmp(&res.sim_time_s, &sched.sim_time_s, sizeof(double)) == 0);
    ck_assert_double_eq(col(dir, "bytes_sent"), bytes);
    ck_assert_double_eq(col(dir, "frozen_layers"), 2);
    rmdir_all(dir);

    dir = tmpdir();
    run_to(RUN("") " \"stop\": {\"steps\": 13}}", dir, &res, 1);
    rmdir_all(dir);
    double d = 0, sq = 0;
    for (int k = 0; k < 336; k++) {
        d += (at11[k] - at1[k]) * (at11[k] - at1[k]);
        sq += at1[k] * at1[k];
    }
    const double r = sqrt(d / sq);
    ck_assert(r > 0);
    double x11[508];
    memcpy(x11, at11, sizeof x11);
    for (int above = 1; above >= 0; above--) {
        char json[4096];
        snprintf(json, sizeof json, "%s \"freeze\": {\"threshold\": %.17g, \"window\": 10},"
                 " \"stop\": {\"steps\": 13}}", RUN(""), r * (above ? 1 + 1e-6 : 1 - 1e-6));
        dir = tmpdir();
        run_to(json, dir, &res, 1);
        ck_assert(memcmp(at11, x11, sizeof x11) == 0);   /* the same run up to round 10 */
        ck_assert_double_eq(col(dir, "frozen_layers"), above);
        ck_assert_int_eq(memcmp(at_end, x11, 336 * sizeof(double)) == 0, above);
        rmdir_all(dir);
    }
}
END_TEST

/* Without freezing the same run trains every layer at full cost: the
 * freeze section is what the run above measured. */
START_TEST(run_without_freeze_is_full)
{
    char *dir = tmpdir();
    run_result res;
    run_to(RUN(", \"memory_bytes\": 9168") " \"stop\": {\"steps\": 13}}", dir, &res, 1);
    double t = 12 * (step_s(0) + ring_s(508)) + step_s(0);
    ck_assert_msg(fabs(res.sim_time_s - t) < 1e-12 * t, "time %.17g vs %.17g", res.sim_time_s,
                  t);
    ck_assert_double_eq(col(dir, "frozen_layers"), 0);
    ck_assert_double_eq(col(dir, "mem_peak_bytes"), 9168);
    ck_assert_double_eq(col(dir, "mem_bytes"), 9168);
    ck_assert_double_eq(col(dir, "mem_capacity_bytes"), 9168);
    ck_assert(memcmp(at_end, at11, 336 * sizeof(double)) != 0);
    rmdir_all(dir);
}
END_TEST

/* Frozen from the start, the first layer's gradient, optimizer state and
 * activations are never held: a node of 9000 bytes fits at 5200. */
START_TEST(freezing_from_the_start_fits)
{
    char *dir = tmpdir();
    run_result res;
    run_to(RUN(", \"memory_bytes\": 9000") " \"freeze\": {\"after_steps\": [0]},"
           " \"stop\": {\"steps\": 60}}", dir, &res, 1);
    ck_assert_double_eq(col(dir, "mem_peak_bytes"), 2032 + 688 + 688 + 1792);
    ck_assert_double_eq(col(dir, "mem_exceeded"), 0);
    ck_assert(memcmp(at_end, at11, 336 * sizeof(double)) == 0);
    ck_assert(memcmp(at_end + 336, at11 + 336, 172 * sizeof(double)) != 0);
    rmdir_all(dir);
}
END_TEST

#define ALG "\"algorithm\": {\"name\": \"allreduce\", \"lr\": 0.1}, \"stop\": {\"steps\": 1}, "

START_TEST(errors_are_located)
{
    expect_prepare_error(RUN(", \"memory_bytes\": 9000") " \"stop\": {\"steps\": 8}}",
        "test.json: /compute/memory_bytes: error: node 0 needs 9168 bytes at its first step "
        "(parameters 2032, gradients 2032, optimizer 2032, activations 3072; 0 frozen layers, "
        "batch 16), its capacity is 9000");
    expect_prepare_error(RUN(", \"groups\": [{\"nodes\": [2], \"memory_bytes\": 5000}]")
                         " \"freeze\": {\"after_steps\": [0]}, \"stop\": {\"steps\": 8}}",
        "test.json: /compute/groups/0/memory_bytes: error: node 2 needs 5200 bytes at its "
        "first step (parameters 2032, gradients 688, optimizer 688, activations 1792; 1 "
        "frozen layers, batch 16), its capacity is 5000");
    expect_prepare_error(RUN("") " \"freeze\": {\"after_steps\": [1, 2, 3]},"
                         " \"stop\": {\"steps\": 8}}",
        "test.json: /freeze/after_steps: error: freezes 3 layers, the model has 2 that may "
        "freeze (an MLP's hidden layers; its output layer always trains)");
    expect_prepare_error("{\"nodes\": 4, \"topology\": {\"kind\": \"ring\"},"
                         " \"model\": {\"kind\": \"mlp\", \"hidden\": [8]},"
                         " \"algorithm\": {\"name\": \"adpsgd\", \"lr\": 0.1},"
                         " \"freeze\": {\"after_steps\": [5]}, \"stop\": {\"steps\": 8}}",
        "test.json: /freeze: error: algorithm \"adpsgd\" does not freeze layers (the "
        "protocols that send only the unfrozen layers: allreduce, dpsgd, fedavg, local-sgd, "
        "ps-async, ps-sync)");
    expect_prepare_error("{\"nodes\": 4, \"compute\": {\"memory_bytes\": 1e9},"
                         " \"model\": {\"kind\": \"none\", \"message_bytes\": 1000},"
                         " \"algorithm\": {\"name\": \"allreduce\", \"lr\": 0.1},"
                         " \"stop\": {\"steps\": 8}}",
        "test.json: /compute/memory_bytes: error: the memory model and freezing need the "
        "model's layers: not with model \"none\" (timing only)");
    scn_scenario s;
    scn_error err;
    ck_assert_int_eq(scn_load_string("{\"nodes\": 2, " ALG "\"freeze\": {\"after_steps\": [4, 4]}}",
                                     "t.json", NULL, 0, &s, &err), -1);
    ck_assert_str_eq(err.msg, "t.json: /freeze/after_steps/1: error: must be > the previous "
                     "count (4): layers freeze front first, one at a time, got 4");
    ck_assert_int_eq(scn_load_string("{\"nodes\": 2, " ALG "\"freeze\": {}}", "t.json", NULL, 0, &s,
                                     &err), -1);
    ck_assert_str_eq(err.msg, "t.json: /freeze: error: give \"after_steps\" (a schedule) or "
                     "\"threshold\" (the criterion)");
    ck_assert_int_eq(scn_load_string("{\"nodes\": 2, " ALG "\"freeze\": {\"after_steps\": [4],"
                                     " \"window\": 5}}", "t.json", NULL, 0, &s, &err), -1);
    ck_assert_str_eq(err.msg, "t.json: /freeze/window: error: is a key of the criterion, not of "
                     "a schedule (\"after_steps\")");
    expect_prepare_error(RUN("") " \"freeze\": {\"threshold\": 0.1, \"max_layers\": 3},"
                         " \"stop\": {\"steps\": 8}}",
        "test.json: /freeze/max_layers: error: the criterion may freeze 3 layers, the model has "
        "2 that may freeze (an MLP's hidden layers; its output layer always trains)");
    ck_assert_int_eq(scn_load_string("{\"nodes\": 2, " ALG "\"freeze\": {\"after_steps\": []}}",
                                     "t.json", NULL, 0, &s, &err), -1);
    ck_assert_str_eq(err.msg, "t.json: /freeze/after_steps: error: must list 1 to 8 step "
                     "counts (one per frozen layer), got 0");
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("freeze");
    TCase *tc = tcase_create("freeze");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, frozen_gradient_is_the_full_suffix);
    tcase_add_test(tc, flops_prefix_and_memory_closed_forms);
    tcase_add_test(tc, frozen_trainer_is_fixed_layers);
    tcase_add_test(tc, run_time_bytes_memory_exact);
    tcase_add_test(tc, ps_sync_sends_the_suffix);
    tcase_add_test(tc, criterion_freezes_at_its_checks);
    tcase_add_test(tc, run_without_freeze_is_full);
    tcase_add_test(tc, freezing_from_the_start_fits);
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
