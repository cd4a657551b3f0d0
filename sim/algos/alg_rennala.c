/* alg_rennala.c -- Rennala SGD (Tyurin & Richtarik, "Optimal Time
 * Complexities of Parallel Stochastic Optimization Methods Under a Fixed
 * Computation Model", NeurIPS 2023): the server collects S stochastic
 * gradients computed at its current point x_k, from whichever workers are
 * fastest, then steps x_{k+1} = x_k - lr * mean(g) and broadcasts x_{k+1}.
 *
 * Timing: workers compute back to back, each step on the model they hold,
 * and push every gradient tagged with that model's version; they never
 * wait.  The server adds a gradient of the current version to its batch
 * and drops one of an older version (gradients_discarded); with S in the
 * batch it steps and sends the new model to every worker through its
 * uplink.  A worker installs a model as it arrives and, with `restart` on
 * (the paper's method), abandons the step it is computing and starts afresh
 * on the new point; with it off, the step finishes and the server drops its
 * gradient of the old version.  Invariant: every update averages exactly S
 * gradients computed at the point it updates (staleness 0, tested).
 */
#include "alg_ps.h"

#include <stdio.h>

enum { P_BATCH_GRADIENTS, P_RESTART };

static const char *const onoff[] = { "off", "on", NULL };

static const alg_param_spec params[] = {
    { "gradients", ALG_PARAM_INT, 0, 0, 1e9, NULL },   /* 0: the number of workers */
    { "restart", ALG_PARAM_CHOICE, 1, 0, 0, onoff },
    { NULL, 0, 0, 0, 0, NULL },
};

typedef struct rn_state {
    uint64_t version;
} rn_state;

static int rn_shared_init(alg_ctx *ctx) { return alg_ps_shared_init(ctx, 0); }

static int target(const alg_ctx *ctx)
{
    int S = (int)ctx->param[P_BATCH_GRADIENTS];
    return S > 0 ? S : ctx->n;
}

static void rn_on_step_done(alg_ctx *ctx, void *state, int i, const double *grad)
{
    rn_state *st = state;
    alg_ps_push(ctx, i, grad, st->version);
    alg_start_step(ctx, i);
}

static void rn_on_message(alg_ctx *ctx, void *state, int i, const cl_msg *m)
{
    rn_state *st = state;
    if (i == ctx->server) {
        alg_ps *ps = ctx->shared;
        if (m->round != ps->version) {
            ps->discarded++;
            return;
        }
        alg_ps_gather(ctx, m->payload->data);
        if (ps->n_sum == target(ctx)) {
            alg_ps_apply_gathered(ctx);
            alg_ps_broadcast_model(ctx);
        }
        return;
    }
    alg_ps_install(ctx, i, m);
    st->version = m->round;
    if ((int)ctx->param[P_RESTART] && alg_is_computing(ctx, i)) {
        /* the step in progress is on the old point: drop it, start afresh */
        alg_abort_step(ctx, i);
        alg_start_step(ctx, i);
    }
}

static void rn_describe_wait(const alg_ctx *ctx, const void *state, int i, char *buf,
                             size_t size)
{
    (void)state;
    const alg_ps *ps = ctx->shared;
    if (i == ctx->server)
        snprintf(buf, size, "%d more gradients of version %llu", target(ctx) - ps->n_sum,
                 (unsigned long long)ps->version);
    else
        snprintf(buf, size, "%s", alg_is_computing(ctx, i) ? "its step" : "");
}

const alg_type alg_rennala = {
    .name = "rennala",
    .state_size = sizeof(rn_state),
    .servers = 1,
    .params = params,
    .eval_params = alg_ps_eval_params,
    .shared_init = rn_shared_init,
    .shared_fini = alg_ps_shared_fini,
    .on_step_done = rn_on_step_done,
    .on_message = rn_on_message,
    .describe_wait = rn_describe_wait,
    .stats = alg_ps_stats,
};
