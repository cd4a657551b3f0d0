/* alg_eager.c -- eager-SGD (Li, Ben-Nun, Dryden, Hoefler et al., "Taming
 * Unbalanced Training Workloads in Deep Learning with Partial Collective
 * Operations", PPoPP 2020): synchronous data-parallel SGD whose all-reduce
 * starts without waiting for everyone.
 *
 * Timing: iteration r's partial all-reduce is activated
 * - `mode` = "solo": by the first node whose step for r ends;
 * - `mode` = "majority": by one initiator per iteration, drawn uniformly
 *   with a stream all nodes share (the paper's way of having, in
 *   expectation, half of the nodes ready when it starts).
 * The activator sends a 0-byte activation to every other node and joins at
 * once.  A node joins round r as soon as it knows of it: with the gradient
 * it finished for r if it has one, else with its stale gradient (the last
 * one it finished and has not contributed; zeros if none), so late nodes
 * never hold the others back.  The all-reduce itself is a real collective
 * (alg_coll, `collective`).  When a node has round r's sum it applies
 * x <- x - lr * sum / n.  A node computes only while it holds no
 * uncontributed gradient: a gradient that ends while its node is inside a
 * round, or before the next round is activated, waits for that round, and
 * the next step starts once it is contributed and the round is done.
 * run.json reports fresh, stale (finished during an earlier round) and
 * empty (zeros from a node still computing) contributions.
 */
#include "alg_coll.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <gsl/gsl_cblas.h>

enum { P_MODE, P_COLLECTIVE };
enum { MODE_SOLO, MODE_MAJORITY };
enum { TAG_COLL = 1, TAG_ACTIVATE = 2 };

static const char *const mode_names[] = { "solo", "majority", NULL };

static const alg_param_spec params[] = {
    { "mode", ALG_PARAM_CHOICE, MODE_SOLO, 0, 0, mode_names },
    { "collective", ALG_PARAM_CHOICE, ALG_COLL_RING, 0, 0, alg_coll_kind_names },
    { NULL, 0, 0, 0, 0, NULL },
};

typedef struct eg_shared {
    alg_coll *coll;
    uint64_t  seed;
    uint64_t  fresh, stale, empty;
} eg_shared;

typedef struct eg_state {
    uint64_t next_round;   /* the next round this node joins */
    uint64_t known;        /* rounds < known have been activated (as far as it knows) */
    uint64_t grad_for;     /* the round that was next when the step started */
    int      in_round;
    int      has_grad;     /* grad holds a finished, uncontributed gradient */
    double  *grad;
    double  *zero;
} eg_state;

static int initiator(const alg_ctx *ctx, uint64_t round)
{
    const eg_shared *sh = ctx->shared;
    return (int)(alg_hash64(sh->seed ^ alg_hash64(round)) % (uint64_t)ctx->n);
}

static void start_step(alg_ctx *ctx, eg_state *st, int i)
{
    st->grad_for = st->next_round;
    alg_start_step(ctx, i);
}

/* Joins round next_round with the finished gradient, or zeros while the
 * node is still computing (it is late: eager-SGD does not wait for it). */
static void join(alg_ctx *ctx, eg_state *st, int i)
{
    eg_shared *sh = ctx->shared;
    const double *c = st->zero;
    if (st->has_grad) {
        c = st->grad;
        if (st->grad_for < st->next_round)
            sh->stale++;
        else
            sh->fresh++;
    } else {
        sh->empty++;
    }
    st->in_round = 1;
    st->has_grad = 0;   /* the collective copied it */
    alg_coll_start(ctx, sh->coll, i, st->next_round, alg_coll_everyone(sh->coll), ctx->n, c);
}

/* Outside a round: join a round it knows was activated, or activate one
 * when it holds a gradient and may, else wait. */
static void advance(alg_ctx *ctx, eg_state *st, int i)
{
    if (st->in_round)
        return;
    if (st->known > st->next_round) {
        join(ctx, st, i);
        return;
    }
    int may = (int)ctx->param[P_MODE] == MODE_SOLO || initiator(ctx, st->next_round) == i;
    if (st->has_grad && may) {
        for (int j = 0; j < ctx->n; j++)
            if (j != i)
                alg_send(ctx, i, j, TAG_ACTIVATE, st->next_round, NULL, 0);
        st->known = st->next_round + 1;
        join(ctx, st, i);
    }
}

/* A node computes only while it holds no uncontributed gradient. */
static void reduced(alg_ctx *ctx, int i, const double *sum, size_t len)
{
    (void)len;   /* ctx->P: the whole gradient */
    eg_state *st = alg_state(ctx, i);
    alg_sgd_apply(ctx, i, alg_params(ctx, i), sum, (double)ctx->n);
    st->in_round = 0;
    st->next_round++;
    if (!st->has_grad && !alg_is_computing(ctx, i))
        start_step(ctx, st, i);
    advance(ctx, st, i);
}

static int eg_shared_init(alg_ctx *ctx)
{
    eg_shared *sh = calloc(1, sizeof *sh);
    if (!sh)
        return -1;
    ctx->shared = sh;
    sh->coll = alg_coll_create(ctx, (alg_coll_kind)ctx->param[P_COLLECTIVE], ctx->P, TAG_COLL,
                               reduced);
    if (!sh->coll)
        return -1;
    sh->seed = gsl_rng_get(alg_rng(ctx, 0));
    return 0;
}

static void eg_shared_fini(alg_ctx *ctx)
{
    eg_shared *sh = ctx->shared;
    if (!sh)
        return;
    alg_coll_destroy(ctx, sh->coll);
    free(sh);
}

static int eg_init(alg_ctx *ctx, void *state, int node)
{
    (void)node;
    eg_state *st = state;
    st->grad = malloc((ctx->P ? ctx->P : 1) * sizeof(double));
    st->zero = calloc(ctx->P ? ctx->P : 1, sizeof(double));
    return st->grad && st->zero ? 0 : -1;
}

static void eg_fini(alg_ctx *ctx, void *state, int node)
{
    (void)ctx;
    (void)node;
    eg_state *st = state;
    free(st->grad);
    free(st->zero);
}

static void eg_on_start(alg_ctx *ctx, void *state, int i)
{
    start_step(ctx, state, i);
}

static void eg_on_step_done(alg_ctx *ctx, void *state, int i, const double *grad)
{
    eg_state *st = state;
    memcpy(st->grad, grad, ctx->P * sizeof(double));
    st->has_grad = 1;
    advance(ctx, st, i);
}

static void eg_on_message(alg_ctx *ctx, void *state, int i, const cl_msg *m)
{
    eg_state *st = state;
    eg_shared *sh = ctx->shared;
    if (m->tag == TAG_COLL) {
        alg_coll_on_message(ctx, sh->coll, i, m);
        return;
    }
    if (m->round + 1 > st->known)
        st->known = m->round + 1;
    advance(ctx, st, i);
}

static int eg_stats(const alg_ctx *ctx, const char **keys, double *values, int max)
{
    const eg_shared *sh = ctx->shared;
    if (max < 3)
        return 0;
    keys[0] = "fresh_contributions";
    values[0] = (double)sh->fresh;
    keys[1] = "stale_contributions";
    values[1] = (double)sh->stale;
    keys[2] = "empty_contributions";
    values[2] = (double)sh->empty;
    return 3;
}

static void eg_describe_wait(const alg_ctx *ctx, const void *state, int i, char *buf,
                             size_t size)
{
    const eg_state *st = state;
    const eg_shared *sh = ctx->shared;
    if (st->in_round)
        alg_coll_describe_wait(sh->coll, i, buf, size);
    else if (alg_is_computing(ctx, i))
        snprintf(buf, size, "its step");
    else
        snprintf(buf, size, "the activation of round %llu", (unsigned long long)st->next_round);
}

const alg_type alg_eager = {
    .name = "eager",
    .state_size = sizeof(eg_state),
    .params = params,
    .shared_init = eg_shared_init,
    .shared_fini = eg_shared_fini,
    .init = eg_init,
    .on_start = eg_on_start,
    .on_step_done = eg_on_step_done,
    .on_message = eg_on_message,
    .describe_wait = eg_describe_wait,
    .stats = eg_stats,
    .fini = eg_fini,
};
