/* alg_allreduce.c -- synchronous data-parallel SGD whose gradient
 * all-reduce runs as real messages (alg_coll.c): ring (Patarasuk & Yuan
 * 2009), recursive doubling or binomial tree (Thakur, Rabenseifner & Gropp
 * 2005), chosen with the parameter `collective`.
 *
 * Timing: each node computes its gradient (cl_start_step); when its step
 * ends it joins the all-reduce of round k.  A node's part of the collective
 * waits only for the messages the pattern makes it wait for, so a slow node
 * or link holds the others back as far as it would in a real collective.
 * When a node has the sum it applies x <- x - lr * sum / n and starts its
 * next step at once.  On a homogeneous network one all-reduce of M bytes
 * over n nodes takes exactly 2(n-1)a + 2(n-1)/n M/B (ring),
 * log2(n)(a + M/B) (recursive doubling, n a power of two) and
 * 2 log2(n)(a + M/B) (tree, n a power of two).
 *
 * Simplified: members are in node order 0..n-1 whatever the topology (the
 * topology is not used).
 */
#include "alg_coll.h"

#include <assert.h>

#include <stdio.h>
#include <stdlib.h>
#include <gsl/gsl_cblas.h>

enum { P_COLLECTIVE };
enum { TAG_COLL = 1 };

static const alg_param_spec params[] = {
    { "collective", ALG_PARAM_CHOICE, ALG_COLL_RING, 0, 0, alg_coll_kind_names },
    { NULL, 0, 0, 0, 0, NULL },
};

typedef struct ar_shared {
    alg_coll *coll;
} ar_shared;

typedef struct ar_state {
    uint64_t round;
} ar_state;

static void reduced(alg_ctx *ctx, int node, const double *sum, size_t len)
{
    (void)len;   /* ctx->P: the whole gradient */
    ar_state *st = alg_state(ctx, node);
    alg_sgd_apply(ctx, node, alg_params(ctx, node), sum, (double)ctx->n);
    st->round++;
    alg_start_step(ctx, node);
}

static int ar_shared_init(alg_ctx *ctx)
{
    ar_shared *sh = calloc(1, sizeof *sh);
    if (!sh)
        return -1;
    ctx->shared = sh;
    sh->coll = alg_coll_create(ctx, (alg_coll_kind)ctx->param[P_COLLECTIVE], ctx->P, TAG_COLL,
                               reduced);
    if (!sh->coll)
        return -1;
    return 0;
}

static void ar_shared_fini(alg_ctx *ctx)
{
    ar_shared *sh = ctx->shared;
    if (!sh)
        return;
    alg_coll_destroy(ctx, sh->coll);
    free(sh);
}

static void ar_on_step_done(alg_ctx *ctx, void *state, int i, const double *grad)
{
    ar_state *st = state;
    ar_shared *sh = ctx->shared;
    alg_coll_start(ctx, sh->coll, i, st->round, alg_coll_everyone(sh->coll), ctx->n, grad);
}

static void ar_on_message(alg_ctx *ctx, void *state, int i, const cl_msg *m)
{
    (void)state;
    ar_shared *sh = ctx->shared;
    int mine = alg_coll_on_message(ctx, sh->coll, i, m);
    assert(mine && "allreduce got a message it did not send");
    (void)mine;
}

static void ar_describe_wait(const alg_ctx *ctx, const void *state, int i,
                             char *buf, size_t size)
{
    const ar_state *st = state;
    const ar_shared *sh = ctx->shared;
    if (alg_is_computing(ctx, i))
        snprintf(buf, size, "its step of round %llu", (unsigned long long)st->round);
    else
        alg_coll_describe_wait(sh->coll, i, buf, size);
}

const alg_type alg_allreduce = {
    .name = "allreduce",
    .state_size = sizeof(ar_state),
    .params = params,
    .shared_init = ar_shared_init,
    .shared_fini = ar_shared_fini,
    .on_step_done = ar_on_step_done,
    .on_message = ar_on_message,
    .describe_wait = ar_describe_wait,
};
