/* alg_pipeline_math.c -- the pipeline's math on the MLP: each stage's
 * forward and backward passes of a micro-batch through its layers
 * (alg_stage_forward / alg_stage_backward), the activations a stage reads
 * from the stage before (the doubles its forward kept: what the message
 * carried) and the gradients from the stage after, and the updates of
 * each schedule: GPipe and 1F1B sum the m micro-batch gradients and apply
 * their mean at the stage's last backward of the mini-batch (one SGD step
 * on the whole mini-batch); PipeDream stashes the weights each forward
 * used, computes the backward on them and applies every micro-batch's
 * gradient to the current weights at once (Narayanan et al. 2019); 2BW
 * keeps two versions, a micro-batch's backward on the version its forward
 * used, and applies the mean of every m micro-batches' gradients
 * (Narayanan et al. 2021).  With replicas each node of a stage holds
 * the stage's weights, the update applies the mean over the replicas
 * (alg_pipeline_dp.c reduces it).  It does not schedule, time or send
 * anything (alg_pipeline.c does).
 */
#include "alg_pipeline_int.h"

#include <assert.h>
#include <stdlib.h>
#include <string.h>

static pp_stage *stage(const alg_ctx *ctx, int s) { return alg_state(ctx, s); }

int pp_math_init(alg_ctx *ctx, pp_stage *st, int node)
{
    pp_shared *sh = ctx->shared;
    const int s = pp_stage_of(sh, node);
    pp_math *mt = st->mt = calloc(1, sizeof *mt);
    if (!mt)
        return -1;
    const size_t K = sh->K, P = ctx->P;
    mt->a = sh->lo[s] + 1;
    mt->b = sh->lo[s + 1];
    mt->off = alg_layer_param_off(ctx, mt->a);
    mt->len = alg_layer_param_off(ctx, mt->b + 1) - mt->off;
    mt->n = ctx->batch / (size_t)sh->m;
    mt->in_w = alg_layer_width(ctx, mt->a - 1);
    mt->out_w = alg_layer_width(ctx, mt->b);
    mt->acts_len = alg_stage_acts_doubles(ctx, mt->a, mt->b, mt->n);
    int ok = (mt->acts = malloc(K * mt->acts_len * sizeof *mt->acts)) != NULL
          && (mt->g = calloc(P, sizeof *mt->g)) != NULL
          && (mt->acc = calloc(P, sizeof *mt->acc)) != NULL
          && (mt->scratch = malloc(alg_stage_scratch_doubles(ctx, mt->n) * sizeof *mt->scratch));
    if (ok && s == 0)
        ok = (mt->in = malloc(K * mt->n * mt->in_w * sizeof *mt->in)) != NULL
          && (mt->y = malloc(K * mt->n * sizeof *mt->y)) != NULL
          && (mt->rows = malloc(ctx->batch * mt->in_w * sizeof *mt->rows)) != NULL
          && (mt->rows_y = malloc(ctx->batch * sizeof *mt->rows_y)) != NULL;
    if (ok && s > 0)
        ok = (mt->gin = malloc(K * mt->n * mt->in_w * sizeof *mt->gin)) != NULL;
    if (ok && sh->sched == SCHED_PIPEDREAM)
        ok = (mt->ws = malloc(K * mt->len * sizeof *mt->ws)) != NULL;
    if (ok && sh->sched == SCHED_2BW)
        ok = (mt->ws = malloc(mt->len * sizeof *mt->ws)) != NULL
          && (mt->ver = calloc(K, sizeof *mt->ver)) != NULL;
    if (ok && sh->r == 1 && (sh->sched == SCHED_GPIPE || sh->sched == SCHED_1F1B))
        ok = (mt->ckpt = malloc(mt->len * sizeof *mt->ckpt)) != NULL;
    return ok ? 0 : -1;
}

void pp_math_fini(pp_stage *st)
{
    pp_math *mt = st->mt;
    if (!mt)
        return;
    free(mt->in);
    free(mt->y);
    free(mt->acts);
    free(mt->gin);
    free(mt->ws);
    free(mt->ckpt);
    free(mt->ver);
    free(mt->g);
    free(mt->acc);
    free(mt->scratch);
    free(mt->rows);
    free(mt->rows_y);
    free(mt);
    st->mt = NULL;
}

/* Micro-batch mb's input rows at node (of its replica's stage 0: the
 * rows drawn; of a later stage: the previous node's output), and its
 * labels (the replica's stage 0's). */
static const double *input_of(const alg_ctx *ctx, int node, uint64_t mb)
{
    const pp_shared *sh = ctx->shared;
    const size_t k = (size_t)(mb % sh->K);
    if (pp_stage_of(sh, node) == 0) {
        const pp_math *m0 = stage(ctx, node)->mt;
        return m0->in + k * m0->n * m0->in_w;
    }
    const pp_math *mp = stage(ctx, node - 1)->mt;   /* the last layer's output of s - 1 */
    return mp->acts + k * mp->acts_len + (mp->acts_len - mp->n * mp->out_w);
}

static const int *labels_of(const alg_ctx *ctx, int node, uint64_t mb)
{
    const pp_shared *sh = ctx->shared;
    const pp_math *m0 = stage(ctx, node - pp_stage_of(sh, node))->mt;
    return m0->y + (size_t)(mb % sh->K) * m0->n;
}

/* The weights micro-batch mb's passes use at node. */
static double *weights_of(alg_ctx *ctx, int node, uint64_t mb)
{
    const pp_shared *sh = ctx->shared;
    pp_math *mt = stage(ctx, node)->mt;
    const size_t k = (size_t)(mb % sh->K);
    double *cur = alg_params(ctx, node) + mt->off;
    if (sh->sched == SCHED_PIPEDREAM)
        return mt->ws + k * mt->len;
    if (sh->sched == SCHED_2BW && mt->ver[k] != mt->v) {
        assert(mt->ver[k] + 1 == mt->v);   /* two versions suffice when m >= p */
        return mt->ws;
    }
    return cur;
}

void pp_math_forward(alg_ctx *ctx, int node, uint64_t mb)
{
    pp_shared *sh = ctx->shared;
    pp_math *mt = stage(ctx, node)->mt;
    const int s = pp_stage_of(sh, node);
    const size_t k = (size_t)(mb % sh->K);
    if (s == 0 && mb % (uint64_t)sh->m == 0) {
        /* a new mini-batch, cut into its m micro-batches: replica q's
         * mini-batch k from node q p + (k mod p)'s data stream, so that
         * each replica reads its own nodes' parts of the training set in
         * turn */
        alg_draw_rows(ctx, node + (int)((mb / (uint64_t)sh->m) % (uint64_t)sh->p), mt->rows,
                      mt->rows_y);
        for (int j = 0; j < sh->m; j++) {
            const size_t kj = (size_t)((mb + (uint64_t)j) % sh->K);
            memcpy(mt->in + kj * mt->n * mt->in_w, mt->rows + (size_t)j * mt->n * mt->in_w,
                   mt->n * mt->in_w * sizeof *mt->in);
            memcpy(mt->y + kj * mt->n, mt->rows_y + (size_t)j * mt->n, mt->n * sizeof *mt->y);
        }
    }
    if (sh->sched == SCHED_PIPEDREAM)   /* weight stashing: the version this forward uses */
        memcpy(mt->ws + k * mt->len, alg_params(ctx, node) + mt->off, mt->len * sizeof *mt->ws);
    if (sh->sched == SCHED_2BW)
        mt->ver[k] = mt->v;
    const double loss = alg_stage_forward(ctx, node, weights_of(ctx, node, mb), mt->a, mt->b,
                                          input_of(ctx, node, mb), labels_of(ctx, node, mb), mt->n,
                                          mt->acts + k * mt->acts_len);
    if (s == sh->p - 1) {
        mt->loss_sum += loss;
        mt->loss_n++;
    }
}

void pp_math_backward(alg_ctx *ctx, int node, uint64_t mb)
{
    pp_shared *sh = ctx->shared;
    pp_math *mt = stage(ctx, node)->mt;
    const int s = pp_stage_of(sh, node);
    const size_t k = (size_t)(mb % sh->K);
    const double *gout = NULL;
    if (s < sh->p - 1) {
        const pp_math *mn = stage(ctx, node + 1)->mt;
        gout = mn->gin + k * mn->n * mn->in_w;
    }
    alg_stage_backward(ctx, weights_of(ctx, node, mb), mt->a, mt->b, input_of(ctx, node, mb),
                       mt->acts + k * mt->acts_len, labels_of(ctx, node, mb), mt->n, gout,
                       mt->g + mt->off, s > 0 ? mt->gin + k * mt->n * mt->in_w : NULL,
                       mt->scratch);
    if (sh->sched == SCHED_PIPEDREAM)   /* applied alone (pp_math_apply) */
        return;
    for (size_t i = mt->off; i < mt->off + mt->len; i++)
        mt->acc[i] += mt->g[i];
}

/* PipeDream's sum is the one micro-batch's gradient. */
static double *sum_of(const pp_shared *sh, pp_math *mt)
{
    return sh->sched == SCHED_PIPEDREAM ? mt->g : mt->acc;
}

const double *pp_math_contrib(const alg_ctx *ctx, int node, size_t *len)
{
    pp_math *mt = stage(ctx, node)->mt;
    *len = mt->len;
    return sum_of(ctx->shared, mt) + mt->off;
}

void pp_math_apply(alg_ctx *ctx, int node, const double *sum, double g_div)
{
    pp_shared *sh = ctx->shared;
    pp_math *mt = stage(ctx, node)->mt;
    double *x = alg_params(ctx, node), *g = sum_of(sh, mt);
    const size_t lo = mt->off, hi = mt->off + mt->len;
    if (sum)   /* the replicas' sum, in place of the node's own */
        memcpy(g + lo, sum, mt->len * sizeof *g);
    if (sh->sched == SCHED_2BW)   /* the version in-flight micro-batches keep */
        memcpy(mt->ws, x + lo, mt->len * sizeof *mt->ws);
    if (mt->ckpt)   /* the version a restart rolls back to */
        memcpy(mt->ckpt, x + lo, mt->len * sizeof *mt->ckpt);
    alg_sgd_apply_range(ctx, node, x, g, g_div, lo, hi, 1);
    if (g == mt->acc)
        memset(mt->acc + lo, 0, mt->len * sizeof *mt->acc);
    mt->v++;
}

const double *pp_math_eval(const alg_ctx *ctx)
{
    const pp_shared *sh = ctx->shared;
    if (!sh->eval)   /* the timing-only model: nothing to evaluate */
        return NULL;
    for (int s = 0; s < sh->p; s++) {
        const pp_math *mt = stage(ctx, s)->mt;
        memcpy(sh->eval + mt->off, alg_params_const(ctx, s) + mt->off, mt->len * sizeof *sh->eval);
    }
    return sh->eval;
}
