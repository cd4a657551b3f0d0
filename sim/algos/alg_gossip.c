/* alg_gossip.c -- gossip learning (Ormandi, Hegedus, Jelasity, "Gossip
 * Learning with Linear Models on Fully Distributed Data", Concurrency and
 * Computation 2013): models perform random walks over the network and are
 * merged and updated where they land.
 *
 * Timing: every node computes SGD steps back to back, each on its
 * parameters as they are when the step starts, and applies the gradient
 * when the step ends.  After every `send_every` steps it sends a snapshot
 * of its model to one neighbour chosen uniformly at random (its own seeded
 * stream; use the complete topology for uniform peer sampling) and goes on
 * computing.  A node that receives a model merges it at once:
 * x <- (x + x_received) / 2 (the merge-then-update "MU" scheme: the next
 * gradient is taken on the merged model).  Nobody waits, so the protocol
 * cannot stall.  Simplified: merging is a plain average (the paper's
 * age-weighted variants are not modelled).
 */
#include "alg.h"

#include <stdio.h>
#include <gsl/gsl_cblas.h>

enum { P_SEND_EVERY };
enum { TAG_MODEL = 1 };

static const alg_param_spec params[] = {
    { "send_every", ALG_PARAM_INT, 1, 1, 1e9, NULL },
    { NULL, 0, 0, 0, 0, NULL },
};

typedef struct gl_state {
    uint64_t steps, sent, merged;
} gl_state;

static int gl_check(const alg_ctx *ctx, char *err, size_t size)
{
    if (ctx->n < 2) {
        snprintf(err, size, "gossip needs at least 2 nodes, got %d", ctx->n);
        return -1;
    }
    return 0;
}

static void gl_on_step_done(alg_ctx *ctx, void *state, int i, const double *grad)
{
    gl_state *st = state;
    alg_sgd_apply(ctx, i, alg_params(ctx, i), grad, 1.0);
    if (++st->steps % (uint64_t)ctx->param[P_SEND_EVERY] == 0) {
        const topo_graph *g = ctx->g;
        size_t deg = g->off[i + 1] - g->off[i];
        int j = g->nbr[g->off[i] + gsl_rng_uniform_int(alg_rng(ctx, i), deg)];
        cl_buf *x = alg_snapshot(ctx, i);
        alg_send(ctx, i, j, TAG_MODEL, st->sent++, x, alg_param_bytes(ctx, ctx->P));
        alg_buf_put(ctx, x);
    }
    alg_start_step(ctx, i);
}

static void gl_on_message(alg_ctx *ctx, void *state, int i, const cl_msg *m)
{
    gl_state *st = state;
    double *x = alg_params(ctx, i);
    cblas_daxpy((int)ctx->P, 1.0, m->payload->data, 1, x, 1);
    cblas_dscal((int)ctx->P, 0.5, x, 1);
    st->merged++;
}

const alg_type alg_gossip = {
    .name = "gossip",
    .state_size = sizeof(gl_state),
    .params = params,
    .check = gl_check,
    .on_step_done = gl_on_step_done,
    .on_message = gl_on_message,
};
