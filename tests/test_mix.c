/* test_mix.c -- the fused mix of a decentralized round (trn_mix, behind
 * alg_mix_apply): x <- (0 + sum_j w_j x_j) + own_w own, the update, the
 * copy of the next snapshot, in one pass over L1-sized pieces, must be the
 * same bits as the passes it replaces (a zeroed accumulator, one daxpy per
 * term in order, memcpy + daxpy, the optimizer step), on a model of 2,084
 * parameters (two whole pieces and a tail that is no multiple of 64), with
 * signed zeros that tell "added to a zero" from "written".  With threads
 * the mix is deferred into the node's next step's job: the parameters,
 * the gradient computed after it and a second node's mix that reads the
 * first one's snapshot must be the same bits as on one thread.  Where the
 * machine allows it the mix is one fused loop (trn_fuse.c); every
 * optimizer form is compared there.
 */
#include <check.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <gsl/gsl_cblas.h>

#include "mdl.h"
#include "mdl_optim.h"
#include "trn.h"
#include "trn_internal.h"

#if DTSIM_OPENBLAS
void openblas_set_num_threads(int n);
#endif

enum { D = 520, C = 4, N = 2, TERMS = 3 };
#define P ((size_t)(D + 1) * C)

/* the warm-up makes each update's rate depend on the updates counted */
static const mdl_optim_spec opt = { .lr = 0.05, .momentum = 0.9, .weight_decay = 1e-3,
                                    .warmup_steps = 4 };

typedef struct fixture {
    mdl_dataset   train, test;
    mdl_partition part;
    mdl_model    *model;
    trn_trainer  *t;
} fixture;

static void setup_spec(fixture *f, int threads, const mdl_optim_spec *spec)
{
    memset(f, 0, sizeof *f);
    mdl_synth_spec sp = { .n_train = 64, .n_test = 8, .d = D, .n_classes = C, .separation = 1 };
    ck_assert_int_eq(mdl_synth_generate(&sp, 3, &f->train, &f->test), 0);
    ck_assert_int_eq(mdl_partition_iid(f->train.n, N, 5, &f->part), 0);
    f->model = mdl_create(&mdl_softmax, D, C, 1e-3, 8);
    ck_assert_ptr_nonnull(f->model);
    ck_assert_uint_eq(mdl_n_params(f->model), P);
    trn_config tc = { .n_nodes = N, .seed = 9, .model = f->model, .train = &f->train,
                      .part = &f->part, .batch = 8, .optim = *spec, .threads = threads };
    f->t = trn_create(&tc);
    ck_assert_ptr_nonnull(f->t);
    ck_assert_int_eq(trn_init_params(f->t), 0);
}

static void setup(fixture *f, int threads) { setup_spec(f, threads, &opt); }

static void teardown(fixture *f)
{
    trn_destroy(f->t);
    mdl_destroy(f->model);
    mdl_partition_fini(&f->part);
    mdl_dataset_fini(&f->train);
    mdl_dataset_fini(&f->test);
}

/* Values in [-1, 1) from a fixed LCG, with every 7th an exact zero of
 * either sign: where every term and own are -0 the accumulator's +0 start
 * makes the sum +0, a sum started from the first term would be -0. */
static void fill(double *v, size_t n, unsigned seed, int neg_zero_all)
{
    unsigned s = seed;
    for (size_t k = 0; k < n; k++) {
        s = s * 1103515245u + 12345u;
        v[k] = (double)(s >> 8) / (double)(1u << 24) * 2.0 - 1.0;
        if (k % 7 == 0)
            v[k] = neg_zero_all || (k / 7) % 2 ? -0.0 : 0.0;
    }
}

typedef struct round_in {
    double xs[TERMS][P], own[P], g[P];
    double w[TERMS], own_w;
} round_in;

static void make_round(round_in *in, unsigned seed)
{
    for (int j = 0; j < TERMS; j++)
        fill(in->xs[j], P, seed + 10 * (unsigned)j, 1);
    fill(in->own, P, seed + 100, 1);
    fill(in->g, P, seed + 200, 0);
    in->w[0] = 1.0 / 3;
    in->w[1] = 0.25;
    in->w[2] = 0.125;
    in->own_w = 1.0 - 1.0 / 3 - 0.25 - 0.125;
}

/* The unfused passes the mix replaces, over the whole vector. */
static void reference(mdl_optim *o, double *x, const round_in *in, int update, double *out)
{
    double *acc = calloc(P, sizeof *acc);
    ck_assert_ptr_nonnull(acc);
    for (int j = 0; j < TERMS; j++)
        cblas_daxpy((int)P, in->w[j], in->xs[j], 1, acc, 1);
    memcpy(x, acc, P * sizeof *x);
    cblas_daxpy((int)P, in->own_w, in->own, 1, x, 1);
    if (update)
        mdl_optim_step(o, 0, x, in->g, 1.0);
    if (out)
        memcpy(out, x, P * sizeof *out);
    free(acc);
}

static void mix(trn_trainer *t, int node, const round_in *in, const double *own, int update,
                double *out, const int *from)
{
    static const int nobody[TERMS] = { 1, 1, 1 };
    const double *xs[TERMS] = { in->xs[0], in->xs[1], in->xs[2] };
    trn_mix_terms m = { .n = TERMS, .x = xs, .w = in->w, .from = from ? from : nobody,
                        .own_w = in->own_w, .own = own, .g = update ? in->g : NULL,
                        .g_div = 1.0, .out = out };
    trn_mix(t, node, &m);
}

static int same(const double *a, const double *b)
{
    return memcmp(a, b, P * sizeof *a) == 0;
}

/* Two rounds (so the momentum buffer carries over), with and without the
 * update and the copy, on one thread and deferred on three. */
START_TEST(mix_is_the_unfused_passes)
{
    for (int threads = 1; threads <= 3; threads += 2) {
        fixture f;
        setup(&f, threads);
        mdl_optim *o = mdl_optim_create(&opt, 1, P);
        ck_assert_ptr_nonnull(o);
        static round_in in[2];
        static double ref[P], out[P], ref_out[P];
        make_round(&in[0], 1);
        make_round(&in[1], 2);
        for (int r = 0; r < 2; r++) {
            reference(o, ref, &in[r], 1, ref_out);
            mix(f.t, 0, &in[r], in[r].own, 1, out, NULL);
            ck_assert_msg(same(trn_params_const(f.t, 0), ref), "round %d, %d threads", r,
                          threads);
            ck_assert_msg(same(out, ref_out), "copy of round %d", r);
        }
        /* no update, no copy: the sum alone; own may be x itself */
        memcpy(in[0].own, trn_params_const(f.t, 0), P * sizeof(double));
        reference(o, ref, &in[0], 0, NULL);
        mix(f.t, 0, &in[0], trn_params_const(f.t, 0), 0, NULL, NULL);
        ck_assert(same(trn_params_const(f.t, 0), ref));
        /* the +0 start of the sum: where everything is -0 the sum is +0 */
        ck_assert(!signbit(trn_params_const(f.t, 0)[0]));
        mdl_optim_destroy(o);
        teardown(&f);
    }
}
END_TEST

/* Every form of the optimizer (plain SGD: daxpy; weight decay without
 * momentum; heavy ball; Nesterov), on one thread and deferred on two, and
 * on this machine the mix is the fused loop (trn_fuse.c), so that loop is
 * what the comparisons check: a wrong kernel fails its probe and the
 * assertion, one the probe misses fails the bits. */
START_TEST(mix_every_optimizer_form)
{
    static const mdl_optim_spec specs[] = {
        { .lr = 0.05 },
        { .lr = 0.05, .weight_decay = 1e-3, .warmup_steps = 4 },
        { .lr = 0.05, .momentum = 0.9, .warmup_steps = 4 },
        { .lr = 0.05, .momentum = 0.9, .nesterov = 1, .weight_decay = 1e-3 },
    };
    /* passes 0: as this machine runs it; 1: the BLAS passes forced, so
     * that path is checked where the loop is fused too */
    for (int forced = 0; forced < 2; forced++)
    for (size_t k = 0; k < sizeof specs / sizeof *specs; k++)
        for (int threads = 1; threads <= 2; threads++) {
            fixture f;
            setup_spec(&f, threads, &specs[k]);
            /* the trainer fuses exactly where the probe passes (not on
             * every AVX2 machine: which daxpy kernel OpenBLAS picks
             * decides it) */
            ck_assert_msg(trn_mix_fused(f.t) == trn_fuse_probe(),
                          "spec %zu: fused %d, probe %d", k, trn_mix_fused(f.t),
                          trn_fuse_probe());
            if (forced)
                f.t->fuse = 0;
            mdl_optim *o = mdl_optim_create(&specs[k], 1, P);
            ck_assert_ptr_nonnull(o);
            static round_in in[3];
            static double ref[P], out[P], ref_out[P];
            for (int r = 0; r < 3; r++) {   /* the momentum and the warm-up carry over */
                make_round(&in[r], 40 + (unsigned)r);
                reference(o, ref, &in[r], 1, ref_out);
                mix(f.t, 1, &in[r], in[r].own, 1, out, NULL);
                ck_assert_msg(same(trn_params_const(f.t, 1), ref), "spec %zu round %d, %d threads"
                              "%s", k, r, threads, forced ? ", BLAS passes" : "");
                ck_assert_msg(same(out, ref_out), "spec %zu copy of round %d", k, r);
            }
            mdl_optim_destroy(o);
            teardown(&f);
        }
}
END_TEST

/* A mix run at once (a protocol that writes mid-step has turned the
 * trainer to copies) on a model of at least TRN_SPLIT_MIN parameters is
 * cut into blocks over the threads; with a frozen prefix whose end is no
 * multiple of 16 the blocks start there, so every daxpy tail (and the
 * fused loop's) falls where one call over [lo, P) has it: the same bits
 * on 1, 2 and 3 threads, the prefix copied, for every optimizer form. */
START_TEST(split_mix_over_a_frozen_suffix)
{
    enum { D2 = 4100, C2 = 4, LO = 1001 };
    const size_t P2 = (size_t)(D2 + 1) * C2;
    ck_assert_uint_ge(P2, TRN_SPLIT_MIN);
    double *xs[TERMS], *own = malloc(P2 * sizeof *own), *g = malloc(P2 * sizeof *g);
    double *ref = malloc(P2 * sizeof *ref), *ref_out = malloc(P2 * sizeof *ref_out);
    double *out = malloc(P2 * sizeof *out);
    for (int j = 0; j < TERMS; j++) {
        xs[j] = malloc(P2 * sizeof *xs[j]);
        fill(xs[j], P2, 70 + 10 * (unsigned)j, 1);
    }
    fill(own, P2, 170, 1);
    fill(g, P2, 270, 0);
    const double w[TERMS] = { 1.0 / 3, 0.25, 0.125 }, own_w = 1.0 - 1.0 / 3 - 0.25 - 0.125;
    static const int from[TERMS] = { 1, 1, 1 };
    for (int threads = 1; threads <= 3; threads++) {
        mdl_dataset train, test;
        mdl_partition part;
        mdl_synth_spec sp = { .n_train = 64, .n_test = 8, .d = D2, .n_classes = C2,
                              .separation = 1 };
        ck_assert_int_eq(mdl_synth_generate(&sp, 3, &train, &test), 0);
        ck_assert_int_eq(mdl_partition_iid(train.n, N, 5, &part), 0);
        mdl_model *model = mdl_create(&mdl_softmax, D2, C2, 1e-3, 8);
        trn_config tc = { .n_nodes = N, .seed = 9, .model = model, .train = &train,
                          .part = &part, .batch = 8, .optim = opt, .threads = threads };
        trn_trainer *t = trn_create(&tc);
        ck_assert_ptr_nonnull(t);
        ck_assert_int_eq(trn_init_params(t), 0);
        t->copy = 1;   /* the mix runs at once */
        const double *xc[TERMS] = { xs[0], xs[1], xs[2] };
        for (int r = 0; r < 2; r++) {
            for (size_t k = 0; k < P2; k++)
                out[k] = 7.0;
            trn_mix_terms m = { .n = TERMS, .x = xc, .w = w, .from = from, .own_w = own_w,
                                .own = own, .g = g, .g_div = 1.0, .out = out, .lo = LO };
            trn_mix(t, 1, &m);
            if (threads == 1 && r == 1) {
                memcpy(ref, trn_params_const(t, 1), P2 * sizeof *ref);
                memcpy(ref_out, out, P2 * sizeof *ref_out);
            }
        }
        ck_assert(memcmp(out, trn_params_const(t, 1), P2 * sizeof *out) == 0);
        if (threads > 1) {
            ck_assert_msg(memcmp(trn_params_const(t, 1), ref, P2 * sizeof *ref) == 0,
                          "%d threads: other bits", threads);
            ck_assert(memcmp(out, ref_out, P2 * sizeof *out) == 0);
        }
        trn_destroy(t);
        mdl_destroy(model);
        mdl_partition_fini(&part);
        mdl_dataset_fini(&train);
        mdl_dataset_fini(&test);
    }
    for (int j = 0; j < TERMS; j++)
        free(xs[j]);
    free(own);
    free(g);
    free(ref);
    free(ref_out);
    free(out);
}
END_TEST

/* One thread sums the models as they arrive and mixes the sum: in place,
 * x <- sum + own_w own (memcpy + daxpy, as before the fusion), the update,
 * the copy, and the sum zeroed for the next round. */
START_TEST(sum_is_the_old_passes)
{
    fixture f;
    setup(&f, 1);
    mdl_optim *o = mdl_optim_create(&opt, 1, P);
    ck_assert_ptr_nonnull(o);
    static round_in in;
    static double sum[P], ref[P], out[P], ref_out[P];
    for (int r = 0; r < 2; r++) {
        make_round(&in, 11 + (unsigned)r);
        fill(sum, P, 30 + (unsigned)r, 1);   /* -0 where own is -0: the sum's sign stays */
        memcpy(ref, sum, sizeof sum);
        cblas_daxpy((int)P, in.own_w, in.own, 1, ref, 1);
        mdl_optim_step(o, 0, ref, in.g, 1.0);
        memcpy(ref_out, ref, sizeof ref);
        const double *xs[1] = { sum };
        const double one = 1.0;
        const int me = 0;
        trn_mix_terms m = { .n = 1, .x = xs, .w = &one, .from = &me, .own_w = in.own_w,
                            .own = in.own, .g = in.g, .g_div = 1.0, .out = out, .clear = sum };
        trn_mix(f.t, 0, &m);
        ck_assert_msg(same(trn_params_const(f.t, 0), ref), "round %d", r);
        ck_assert(same(out, ref_out));
        for (size_t k = 0; k < P; k++)
            ck_assert_msg(sum[k] == 0 && !signbit(sum[k]), "sum[%zu] not cleared", k);
    }
    ck_assert(signbit(trn_params_const(f.t, 0)[0]) == signbit(ref[0]));
    mdl_optim_destroy(o);
    teardown(&f);
}
END_TEST

/* Deferred into the next step's job: the gradient of that step is the one
 * computed on the mixed parameters, as on one thread. */
START_TEST(deferred_mix_runs_before_the_gradient)
{
    fixture a, b;
    setup(&a, 1);
    setup(&b, 2);
    static round_in in;
    make_round(&in, 5);
    static double out_a[P], out_b[P];
    for (int r = 0; r < 3; r++) {
        mix(a.t, 0, &in, trn_params_const(a.t, 0), 1, out_a, NULL);
        mix(b.t, 0, &in, trn_params_const(b.t, 0), 1, out_b, NULL);
        trn_step_begin(a.t, 0, (uint64_t)r + 1, r);
        trn_step_begin(b.t, 0, (uint64_t)r + 1, r);
        ck_assert_msg(same(trn_grad(b.t, 0), trn_grad(a.t, 0)), "gradient of step %d", r + 1);
        ck_assert(same(trn_params_const(b.t, 0), trn_params_const(a.t, 0)));
        ck_assert(same(out_b, out_a));
    }
    teardown(&a);
    teardown(&b);
}
END_TEST

/* Node 1 mixes node 0's snapshot while node 0's own mix, which writes it,
 * is deferred (no step begun) or in node 0's pending job: it must be
 * final before node 1 reads it. */
START_TEST(mix_waits_for_the_snapshot_it_reads)
{
    for (int stepped = 0; stepped <= 1; stepped++) {
        fixture a, b;
        setup(&a, 1);
        setup(&b, 3);
        static round_in in0, in1;
        make_round(&in0, 7);
        make_round(&in1, 8);
        static double snap_a[P], snap_b[P];
        memset(snap_b, 0, sizeof snap_b);
        mix(a.t, 0, &in0, in0.own, 1, snap_a, NULL);
        mix(b.t, 0, &in0, in0.own, 1, snap_b, NULL);
        if (stepped) {
            trn_step_begin(a.t, 0, 1, 0);
            trn_step_begin(b.t, 0, 1, 0);
        }
        static const int from[TERMS] = { 1, 0, 1 };   /* term 1 is node 0's snapshot */
        memcpy(in1.xs[1], snap_a, sizeof snap_a);
        mix(a.t, 1, &in1, in1.own, 1, NULL, from);
        const double *xs[TERMS] = { in1.xs[0], snap_b, in1.xs[2] };
        trn_mix_terms m = { .n = TERMS, .x = xs, .w = in1.w, .from = from, .own_w = in1.own_w,
                            .own = in1.own, .g = in1.g, .g_div = 1.0 };
        trn_mix(b.t, 1, &m);
        ck_assert_msg(same(trn_params_const(b.t, 1), trn_params_const(a.t, 1)),
                      "node 1 %s", stepped ? "with node 0's job pending" : "node 0 deferred");
        trn_join_all(b.t);
        ck_assert(same(trn_params_const(b.t, 0), trn_params_const(a.t, 0)));
        ck_assert(same(snap_b, snap_a));
        teardown(&a);
        teardown(&b);
    }
}
END_TEST

/* A moving mix (the round's snapshot is the parameters): the mix is
 * written once, to out, which trn_params_const returns from then on; the
 * trainer's own storage is left alone until trn_params_own (or a write
 * through trn_params) copies the parameters back.  In place (own == out)
 * the old parameters are overwritten by the new.  Two rounds, so the
 * momentum carries over; on one thread and deferred on three, where the
 * next step's gradient must be the one on the moved parameters. */
START_TEST(moving_mix_makes_out_the_parameters)
{
    for (int threads = 1; threads <= 3; threads += 2) {
        fixture a, f;
        setup(&a, 1);   /* the same mixes by copy, for the gradients */
        setup(&f, threads);
        mdl_optim *o = mdl_optim_create(&opt, 1, P);
        ck_assert_ptr_nonnull(o);
        static round_in in[2];
        static double ref[P], buf[2][P], copy_a[P];
        make_round(&in[0], 21);
        make_round(&in[1], 22);
        const double *home = trn_params_const(f.t, 0);
        for (int r = 0; r < 2; r++) {
            reference(o, ref, &in[r], 1, NULL);
            const double *xs[TERMS] = { in[r].xs[0], in[r].xs[1], in[r].xs[2] };
            static const int nobody[TERMS] = { 1, 1, 1 };
            /* round 0 into a fresh buffer, round 1 in place over own */
            double *out = buf[r];
            if (r == 1)
                memcpy(out, in[r].own, P * sizeof *out);
            trn_mix_terms m = { .n = TERMS, .x = xs, .w = in[r].w, .from = nobody,
                                .own_w = in[r].own_w, .own = r == 1 ? out : in[r].own,
                                .g = in[r].g, .g_div = 1.0, .out = out, .move = 1 };
            trn_mix(f.t, 0, &m);
            mix(a.t, 0, &in[r], in[r].own, 1, copy_a, NULL);
            trn_step_begin(f.t, 0, (uint64_t)r + 1, r);
            trn_step_begin(a.t, 0, (uint64_t)r + 1, r);
            ck_assert_msg(same(trn_grad(f.t, 0), trn_grad(a.t, 0)),
                          "gradient after moving mix %d, %d threads", r, threads);
            ck_assert_msg(trn_params_const(f.t, 0) == out, "round %d: out is not x", r);
            ck_assert_msg(same(out, ref), "round %d, %d threads", r, threads);
        }
        for (size_t k = 0; k < P; k++)   /* never written since the init */
            ck_assert(home[k] == trn_params_const(a.t, 1)[k]);
        /* back home: the same values, and out no longer theirs */
        trn_params_own(f.t, 0);
        ck_assert(trn_params_const(f.t, 0) == home);
        ck_assert(same(home, ref));
        double *x = trn_params(f.t, 0);
        ck_assert(x == home);
        x[0] += 1.0;
        ck_assert(buf[1][0] == ref[0]);
        /* a write through trn_params also brings them home first */
        const double *xs[TERMS] = { in[0].xs[0], in[0].xs[1], in[0].xs[2] };
        static const int nobody[TERMS] = { 1, 1, 1 };
        trn_mix_terms m = { .n = TERMS, .x = xs, .w = in[0].w, .from = nobody,
                            .own_w = in[0].own_w, .own = in[0].own, .out = buf[0], .move = 1 };
        trn_mix(f.t, 0, &m);
        memcpy(ref, trn_params_const(f.t, 0), sizeof ref);
        ck_assert(trn_params_const(f.t, 0) == buf[0]);
        x = trn_params(f.t, 0);
        ck_assert(x == home && same(x, ref));
        mdl_optim_destroy(o);
        teardown(&f);
        teardown(&a);
    }
}
END_TEST

/* A mix over a suffix [lo, P) (a frozen prefix) is the passes of that
 * range: a daxpy's bits may depend on where its call starts and ends
 * (OpenBLAS's Haswell kernel fuses the first len & -16 elements and
 * rounds the product in the rest), so every suffix length from 1 to 80
 * is compared, the plain optimizer's daxpy and the heavy ball, on one
 * thread and deferred on two. */
START_TEST(mix_over_every_suffix_length)
{
    static const mdl_optim_spec specs[] = { { .lr = 0.05 }, opt };
    for (size_t k = 0; k < 2; k++)
        for (int threads = 1; threads <= 2; threads++) {
            fixture f;
            setup_spec(&f, threads, &specs[k]);
            mdl_optim *o = mdl_optim_create(&specs[k], 1, P);
            ck_assert_ptr_nonnull(o);
            static round_in in;
            static double ref[P], acc[P];
            make_round(&in, 60 + (unsigned)k);
            for (size_t len = 1; len <= 80; len++) {
                const size_t lo = P - len;
                memcpy(ref, trn_params_const(f.t, 0), sizeof ref);
                memset(acc, 0, sizeof acc);
                for (int j = 0; j < TERMS; j++)
                    cblas_daxpy((int)len, in.w[j], in.xs[j] + lo, 1, acc + lo, 1);
                memcpy(ref + lo, acc + lo, len * sizeof *ref);
                cblas_daxpy((int)len, in.own_w, in.own + lo, 1, ref + lo, 1);
                mdl_optim_step_range(o, 0, ref, in.g, 1.0, lo, P);
                mdl_optim_count(o, 0);
                const double *xs[TERMS] = { in.xs[0], in.xs[1], in.xs[2] };
                static const int nobody[TERMS] = { 1, 1, 1 };
                trn_mix_terms m = { .n = TERMS, .x = xs, .w = in.w, .from = nobody,
                                    .own_w = in.own_w, .own = in.own, .g = in.g,
                                    .g_div = 1.0, .lo = lo };
                trn_mix(f.t, 0, &m);
                ck_assert_msg(same(trn_params_const(f.t, 0), ref),
                              "spec %zu, suffix of %zu, %d threads", k, len, threads);
            }
            mdl_optim_destroy(o);
            teardown(&f);
        }
}
END_TEST

int main(void)
{
#if DTSIM_OPENBLAS
    openblas_set_num_threads(1);
#endif
    Suite *s = suite_create("mix");
    TCase *tc = tcase_create("mix");
    tcase_add_test(tc, mix_is_the_unfused_passes);
    tcase_add_test(tc, sum_is_the_old_passes);
    tcase_add_test(tc, split_mix_over_a_frozen_suffix);
    tcase_add_test(tc, mix_every_optimizer_form);
    tcase_add_test(tc, deferred_mix_runs_before_the_gradient);
    tcase_add_test(tc, mix_waits_for_the_snapshot_it_reads);
    tcase_add_test(tc, moving_mix_makes_out_the_parameters);
    tcase_add_test(tc, mix_over_every_suffix_length);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
