/* alg_symsgd.c -- SymSGD (Maleki, Musuvathi, Mytkowicz, "Parallel
 * stochastic gradient descent with sound combiners", 2017): the k cores of
 * one shared-memory machine each run SGD from the same global model w_g
 * on their own samples and learn, beside their local model w_i, a model
 * combiner M_i, the product over their steps of the step's Jacobian
 * I - lr H_t (H_t the Hessian of the step's minibatch loss at the point
 * the step's gradient was taken).  At the end of a round the models are
 * combined in core order as if the cores had run one after another:
 *   w <- w_0;  w <- w_i + M_i (w - w_g)  for i = 1 .. k - 1;  w_g <- w.
 * For least squares every step is affine, so the combination is exactly
 * sequential SGD over core 0's batches, then core 1's, ... (tested); for
 * the logistic model it is its first-order version, as in the paper.
 * dtsim's nodes are the cores, as for hogwild; no message is sent.
 *
 * The combiner is the exact P x P matrix (the paper's random projection
 * to r << P columns, which trades exactness for cost, is not built: this
 * file keeps the sound combiner).  Keeping it costs a P-column Hessian
 * product per step, about P gradients' worth of FLOPs for the linear
 * models, so a core spends `combiner_cost` x P x its step's duration
 * more after each step (a timer) before its next: 1, the FLOP ratio, by
 * default; set it to a measured ratio for an optimized implementation,
 * 0 for none.  It needs plain SGD with a constant learning rate and a
 * model with a Hessian (linear, logistic; checked before the run).
 *
 * Rounds.  Each core takes `round_steps` steps, then waits for the other
 * live cores; the last to finish combines (instantly) and every core
 * starts the next round from the new w_g.  Failures: a core declared
 * failed is not waited for and its round's work is left out of the
 * combination; a core that comes back restarts the round in progress from
 * w_g (the others wait for it, as for any core of the round).  The metrics
 * evaluate w_g.  algorithm_stats: rounds, cores combined in all, cores
 * left out.
 */
#include "alg.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <gsl/gsl_cblas.h>

enum { P_ROUND_STEPS, P_COMBINER_COST };
enum { TAG_NEXT = 1 };

static const alg_param_spec params[] = {
    { "round_steps", ALG_PARAM_INT, 16, 1, 1e9, NULL,
      "steps each core takes between two combinations" },
    { "combiner_cost", ALG_PARAM_REAL, 1, 0, 1e6, NULL,
      "time to update the combiner per column, as a multiple of the step's duration" },
    { NULL, 0, 0, 0, 0, NULL, NULL },
};

typedef struct sy_state {
    double  *M;          /* P x P, row-major: the combiner of this round */
    double  *HM;         /* P x P scratch */
    uint64_t steps;      /* steps of this round */
    double   step_start; /* when the step in progress began */
    int      done;       /* its round's steps are taken */
} sy_state;

typedef struct sy_shared {
    double  *wg;         /* the global model */
    double  *w, *d;      /* the combination and w - w_g */
    uint64_t rounds, combined, left_out;
    int      ready;
} sy_shared;

static int sy_shared_init(alg_ctx *ctx)
{
    sy_shared *sh = calloc(1, sizeof *sh);
    if (!sh)
        return -1;
    ctx->shared = sh;
    const size_t P = ctx->P ? ctx->P : 1;
    sh->wg = malloc(P * sizeof *sh->wg);
    sh->w = malloc(P * sizeof *sh->w);
    sh->d = malloc(P * sizeof *sh->d);
    return sh->wg && sh->w && sh->d ? 0 : -1;
}

static void sy_shared_fini(alg_ctx *ctx)
{
    sy_shared *sh = ctx->shared;
    if (!sh)
        return;
    free(sh->wg);
    free(sh->w);
    free(sh->d);
    free(sh);
}

static int sy_init(alg_ctx *ctx, void *state, int node)
{
    (void)node;
    sy_state *st = state;
    const size_t PP = ctx->P ? ctx->P * ctx->P : 1;
    st->M = malloc(PP * sizeof *st->M);
    st->HM = malloc(PP * sizeof *st->HM);
    return st->M && st->HM ? 0 : -1;
}

static void sy_fini(alg_ctx *ctx, void *state, int node)
{
    (void)ctx;
    (void)node;
    sy_state *st = state;
    free(st->M);
    free(st->HM);
}

/* The exact combiner is 2 P^2 doubles a core: refused above 1 GiB in all. */
static int sy_check(const alg_ctx *ctx, char *err, size_t size)
{
    const double bytes = 2.0 * (double)ctx->P * (double)ctx->P * sizeof(double) * ctx->n;
    if (bytes > 1024.0 * 1024 * 1024) {
        snprintf(err, size, "symsgd's exact combiner needs 2 P^2 doubles per core: %.3g GB for "
                 "P = %zu and %d cores (at most 1 GiB)", bytes / 1e9, ctx->P, ctx->n);
        return -1;
    }
    return 0;
}

/* The combiner's time after each step, in step durations (the watchdog's). */
static double sy_step_overhead(const alg_ctx *ctx)
{
    return ctx->param[P_COMBINER_COST] * (ctx->P ? (double)ctx->P : 1.0);
}

static sy_shared *ready(const alg_ctx *ctx)
{
    sy_shared *sh = ctx->shared;
    if (!sh->ready && ctx->P)
        memcpy(sh->wg, alg_params_const(ctx, 0), ctx->P * sizeof(double));
    sh->ready = 1;
    return sh;
}

static void begin_step(alg_ctx *ctx, sy_state *st, int node)
{
    st->step_start = alg_now(ctx);
    alg_start_step(ctx, node);
}

/* Core node starts the round in progress from w_g with M = I. */
static void begin_round(alg_ctx *ctx, sy_state *st, int node)
{
    sy_shared *sh = ready(ctx);
    const size_t P = ctx->P;
    if (P) {
        memcpy(alg_params(ctx, node), sh->wg, P * sizeof(double));
        memset(st->M, 0, P * P * sizeof(double));
        for (size_t j = 0; j < P; j++)
            st->M[j * P + j] = 1.0;
    }
    st->steps = 0;
    st->done = 0;
    begin_step(ctx, st, node);
}

/* Every live core is done: combine in core order, start the next round. */
static void maybe_combine(alg_ctx *ctx)
{
    sy_shared *sh = ready(ctx);
    const size_t P = ctx->P;
    int first = 1, any = 0;
    for (int i = 0; i < ctx->n; i++) {
        const sy_state *st = alg_state(ctx, i);
        if (alg_is_failed(ctx, i))
            continue;
        if (!st->done)
            return;
        any = 1;
    }
    if (!any)
        return;   /* every core is down: the round waits for one to return */
    for (int i = 0; i < ctx->n; i++) {
        const sy_state *st = alg_state(ctx, i);
        if (alg_is_failed(ctx, i)) {
            sh->left_out++;
            continue;
        }
        sh->combined++;
        const double *wi = alg_params_const(ctx, i);
        if (first) {
            if (P)
                memcpy(sh->w, wi, P * sizeof(double));
            first = 0;
            continue;
        }
        /* w <- w_i + M_i (w - w_g) */
        for (size_t j = 0; j < P; j++)
            sh->d[j] = sh->w[j] - sh->wg[j];
        if (P) {
            memcpy(sh->w, wi, P * sizeof(double));
            cblas_dgemv(CblasRowMajor, CblasNoTrans, (int)P, (int)P, 1.0, st->M, (int)P,
                        sh->d, 1, 1.0, sh->w, 1);
        }
    }
    if (P)
        memcpy(sh->wg, sh->w, P * sizeof(double));
    sh->rounds++;
    for (int i = 0; i < ctx->n; i++)
        if (!alg_is_failed(ctx, i) && alg_is_up(ctx, i))
            begin_round(ctx, alg_state(ctx, i), i);
}

static void sy_on_start(alg_ctx *ctx, void *state, int node)
{
    begin_round(ctx, state, node);
}

static void sy_on_step_done(alg_ctx *ctx, void *state, int node, const double *grad)
{
    sy_state *st = state;
    const size_t P = ctx->P;
    double *w = alg_params(ctx, node);
    if (P) {
        /* M <- (I - lr H) M, H at the point the gradient was taken */
        if (alg_step_hessian(ctx, node, w, st->M, P, st->HM) != 0)
            alg_out_of_memory();   /* checked before the run: cannot happen */
        cblas_daxpy((int)(P * P), -ctx->lr, st->HM, 1, st->M, 1);
        alg_sgd_apply(ctx, node, w, grad, 1.0);
    }
    st->steps++;
    alg_set_timer(ctx, node, sy_step_overhead(ctx) * (alg_now(ctx) - st->step_start), TAG_NEXT);
}

static void sy_on_timer(alg_ctx *ctx, void *state, int node, uint32_t tag)
{
    (void)tag;
    sy_state *st = state;
    if (st->steps < (uint64_t)ctx->param[P_ROUND_STEPS]) {
        begin_step(ctx, st, node);
        return;
    }
    st->done = 1;
    maybe_combine(ctx);
}

static void sy_on_failure(alg_ctx *ctx, int peer, int failed)
{
    (void)peer;
    if (failed)
        maybe_combine(ctx);   /* it may have been the one the round waited for */
}

/* Back up: its round's work (and its combiner timer) were lost with it. */
static void sy_on_return(alg_ctx *ctx, void *state, int node)
{
    alg_abort_step(ctx, node);
    begin_round(ctx, state, node);
}

static const double *sy_eval_params(const alg_ctx *ctx)
{
    return ready(ctx)->wg;
}

static void sy_describe_wait(const alg_ctx *ctx, const void *state, int node, char *buf,
                             size_t size)
{
    const sy_state *st = state;
    if (alg_is_computing(ctx, node))
        snprintf(buf, size, "its step");
    else if (st->done && alg_is_up(ctx, node))
        snprintf(buf, size, "the other cores' round %llu",
                 (unsigned long long)((const sy_shared *)ctx->shared)->rounds);
    else
        snprintf(buf, size, "its combiner update");
}

static int sy_stats(const alg_ctx *ctx, const char **keys, double *values, int max)
{
    const sy_shared *sh = ctx->shared;
    const char *k[] = { "rounds", "cores_combined", "cores_left_out" };
    double v[] = { (double)sh->rounds, (double)sh->combined, (double)sh->left_out };
    return alg_stats_copy(k, v, (int)(sizeof k / sizeof k[0]), keys, values, max);
}

const alg_type alg_symsgd = {
    .name = "symsgd",
    .summary = "shared-memory SGD whose cores' models are combined as if sequential "
               "(Maleki, Musuvathi, Mytkowicz 2017)",
    .state_size = sizeof(sy_state),
    .eval_params = sy_eval_params,
    .needs = ALG_NEEDS_HESSIAN | ALG_NEEDS_PLAIN_SGD,
    .params = params,
    .check = sy_check,
    .step_overhead = sy_step_overhead,
    .shared_init = sy_shared_init,
    .shared_fini = sy_shared_fini,
    .init = sy_init,
    .on_start = sy_on_start,
    .on_step_done = sy_on_step_done,
    .on_timer = sy_on_timer,
    .on_failure = sy_on_failure,
    .on_return = sy_on_return,
    .describe_wait = sy_describe_wait,
    .stats = sy_stats,
    .fini = sy_fini,
};
