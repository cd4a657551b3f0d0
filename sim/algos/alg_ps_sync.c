/* alg_ps_sync.c -- synchronous SGD through a parameter server (the
 * synchronous baseline of Chen et al., "Revisiting Distributed Synchronous
 * SGD", 2016, with no backup workers).
 *
 * Timing: every worker computes a gradient on the current model and pushes
 * it (M bytes; the server's downlink takes them one after another).  When
 * the server has all n gradients of the current version it applies their
 * mean, x <- x - lr * mean(g), and sends the new model to every worker
 * through its uplink, one copy after another; a worker starts its next step
 * when its copy arrives.  With equal workers finishing together at T, no
 * contention elsewhere, latency a and bandwidth B one iteration lasts
 * exactly T + 2a + 2nM/B: the server's NIC is the bottleneck.
 */
#include "alg_ps.h"

#include <stdio.h>

typedef struct psy_state {
    int waiting;
} psy_state;

static int psy_shared_init(alg_ctx *ctx) { return alg_ps_shared_init(ctx, 0); }

static void psy_on_step_done(alg_ctx *ctx, void *state, int i, const double *grad)
{
    psy_state *st = state;
    alg_ps *ps = ctx->shared;
    alg_ps_push(ctx, i, grad, ps->version);
    st->waiting = 1;
}

static void psy_on_message(alg_ctx *ctx, void *state, int i, const cl_msg *m)
{
    psy_state *st = state;
    if (i == ctx->server) {
        alg_ps_gather(ctx, m->payload->data);
        if (((alg_ps *)ctx->shared)->n_sum == ctx->n) {
            alg_ps_apply_gathered(ctx);
            alg_ps_broadcast_model(ctx);
        }
        return;
    }
    alg_ps_install(ctx, i, m);
    st->waiting = 0;
    alg_start_step(ctx, i);
}

static void psy_describe_wait(const alg_ctx *ctx, const void *state, int i, char *buf,
                              size_t size)
{
    const psy_state *st = state;
    const alg_ps *ps = ctx->shared;
    if (i == ctx->server)
        snprintf(buf, size, "%d of %d gradients of version %llu", ctx->n - ps->n_sum, ctx->n,
                 (unsigned long long)ps->version);
    else if (st->waiting)
        snprintf(buf, size, "the model of version %llu from the server",
                 (unsigned long long)ps->version + 1);
    else
        snprintf(buf, size, "its step");
}

const alg_type alg_ps_sync = {
    .name = "ps-sync",
    .state_size = sizeof(psy_state),
    .servers = 1,
    .eval_params = alg_ps_eval_params,
    .shared_init = psy_shared_init,
    .shared_fini = alg_ps_shared_fini,
    .on_step_done = psy_on_step_done,
    .on_message = psy_on_message,
    .describe_wait = psy_describe_wait,
    .stats = alg_ps_stats,
};
