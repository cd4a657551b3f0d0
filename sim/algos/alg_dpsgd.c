/* alg_dpsgd.c -- D-PSGD, decentralized parallel SGD (Lian et al., "Can
 * Decentralized Algorithms Outperform Centralized Algorithms?", NeurIPS
 * 2017): x_i^{k+1} = sum_j W_ij x_j^k - lr * g_i(x_i^k).
 *
 * Timing: at the start of round k a node snapshots x_i^k, sends it to every
 * neighbour (its uplink serialises the copies one after another) and starts
 * computing its gradient on x_i^k at the same time.  The round ends when the
 * gradient is done and the round-k snapshots of all neighbours have arrived;
 * then the node mixes, applies the gradient and starts round k+1 at once.
 * A neighbour can be at most one round ahead (it needs our round-k model to
 * finish round k), so two accumulators suffice.  W is the topology's mixing
 * matrix (Metropolis-Hastings).
 */
#include "alg.h"

#include <assert.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <gsl/gsl_cblas.h>

typedef struct dp_state {
    double       *acc[2];   /* sum of W_ij x_j for rounds of parity 0 and 1 */
    int           cnt[2];   /* neighbour models received into acc */
    uint64_t      round;
    cl_buf       *own;      /* x_i^k, also what was sent */
    const double *grad;     /* the finished step's gradient, or NULL */
} dp_state;

static double weight_of(const alg_ctx *ctx, int i, int j)
{
    const topo_graph *g = ctx->g;
    size_t lo = g->off[i], hi = g->off[i + 1];
    while (lo < hi) {    /* neighbour lists are sorted */
        size_t mid = lo + (hi - lo) / 2;
        if (g->nbr[mid] < j)
            lo = mid + 1;
        else
            hi = mid;
    }
    assert(lo < g->off[i + 1] && g->nbr[lo] == j);
    return g->w[lo];
}

static int degree(const alg_ctx *ctx, int i)
{
    return (int)(ctx->g->off[i + 1] - ctx->g->off[i]);
}

static void start_round(alg_ctx *ctx, dp_state *st, int i)
{
    const topo_graph *g = ctx->g;
    st->own = alg_snapshot(ctx, i);
    double bytes = alg_param_bytes(ctx, ctx->P);
    for (size_t k = g->off[i]; k < g->off[i + 1]; k++)
        alg_send(ctx, i, g->nbr[k], 0, st->round, st->own, bytes);
    st->grad = NULL;
    alg_start_step(ctx, i);
}

static void try_finish(alg_ctx *ctx, dp_state *st, int i)
{
    int p = (int)(st->round & 1);
    if (!st->grad || st->cnt[p] < degree(ctx, i))
        return;
    double *x = alg_params(ctx, i);
    int P = (int)ctx->P;
    memcpy(x, st->acc[p], ctx->P * sizeof(double));
    cblas_daxpy(P, ctx->g->self_w[i], st->own->data, 1, x, 1);
    alg_sgd_apply(ctx, i, x, st->grad, 1.0);
    memset(st->acc[p], 0, ctx->P * sizeof(double));
    st->cnt[p] = 0;
    alg_buf_put(ctx, st->own);
    st->own = NULL;
    st->round++;
    start_round(ctx, st, i);
}

static int dp_init(alg_ctx *ctx, void *state, int node)
{
    (void)node;
    dp_state *st = state;
    st->acc[0] = calloc(ctx->P ? ctx->P : 1, sizeof(double));
    st->acc[1] = calloc(ctx->P ? ctx->P : 1, sizeof(double));
    return st->acc[0] && st->acc[1] ? 0 : -1;
}

static void dp_fini(alg_ctx *ctx, void *state, int node)
{
    (void)node;
    dp_state *st = state;
    if (st->own)
        alg_buf_put(ctx, st->own);
    free(st->acc[0]);
    free(st->acc[1]);
}

static void dp_on_start(alg_ctx *ctx, void *state, int node)
{
    start_round(ctx, state, node);
}

static void dp_on_step_done(alg_ctx *ctx, void *state, int i, const double *grad)
{
    dp_state *st = state;
    st->grad = grad;   /* valid until this node's next step starts */
    try_finish(ctx, st, i);
}

static void dp_on_message(alg_ctx *ctx, void *state, int i, const cl_msg *m)
{
    dp_state *st = state;
    assert(m->round == st->round || m->round == st->round + 1);
    int p = (int)(m->round & 1);
    cblas_daxpy((int)ctx->P, weight_of(ctx, i, m->from), m->payload->data, 1, st->acc[p], 1);
    st->cnt[p]++;
    if (m->round == st->round)
        try_finish(ctx, st, i);
}

static void dp_describe_wait(const alg_ctx *ctx, const void *state, int i,
                             char *buf, size_t size)
{
    const dp_state *st = state;
    int p = (int)(st->round & 1);
    if (!st->grad)
        snprintf(buf, size, "its step of round %llu", (unsigned long long)st->round);
    else
        snprintf(buf, size, "%d of %d neighbour models of round %llu",
                 degree(ctx, i) - st->cnt[p], degree(ctx, i), (unsigned long long)st->round);
}

const alg_type alg_dpsgd = {
    .name = "dpsgd",
    .state_size = sizeof(dp_state),
    .check = NULL,
    .init = dp_init,
    .on_start = dp_on_start,
    .on_step_done = dp_on_step_done,
    .on_message = dp_on_message,
    .describe_wait = dp_describe_wait,
    .fini = dp_fini,
};
