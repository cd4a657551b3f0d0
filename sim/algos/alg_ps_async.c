/* alg_ps_async.c -- asynchronous SGD through a parameter server (Dean et
 * al., "Large Scale Distributed Deep Networks", NIPS 2012, Downpour SGD with
 * one server and no local accumulation; the model analysed by Lian et al.,
 * NIPS 2015).
 *
 * Timing: a worker computes a gradient on the model it last received,
 * pushes it to the server (M bytes through its uplink and the server's
 * downlink) and waits.  The server applies every gradient on arrival,
 * x <- x - lr g, records its staleness (updates applied since the version
 * the gradient was computed on) and sends the new model back to that worker
 * (M bytes through the server's uplink), who then starts its next step.
 * With n equal workers and free communication every gradient in the steady
 * state is n-1 updates stale and the server applies n/tau updates per
 * second (sum of 1/tau_i in general).
 *
 * When a node fails (Downpour's workers are independent replicas: the
 * server never waits for one): a worker's failure costs only its own
 * gradients; the server does not answer a worker declared failed.  A worker
 * declared back gets the current model (ALG_PS_TAG_REJOIN) and starts
 * afresh on it, as a restarted Downpour replica fetches the parameters from
 * the server.  A failed server: the workers wait for it (their gradients
 * are retransmitted until it is back; then it answers them); a server down
 * for good leaves every worker waiting and the run ends as stalled.
 *
 * Progressive freezing (the freeze section): the count is the server's
 * version.  A worker computes at the stage of the version it pulled and
 * pushes that stage's trainable suffix; the server, at its own version's
 * stage (never earlier), applies the part of the gradient its stage still
 * trains (the layers frozen since the worker's version are left alone) and
 * answers with its model from the worker's version's prefix on, which the
 * worker holds bit for bit (the layers frozen since then included).  A
 * rejoin carries the whole model.  Frozen layers are the server's,
 * constant, bit for bit on every worker.
 */
#include "alg_ps.h"

#include <string.h>

static void pa_on_start(alg_ctx *ctx, void *state, int i)
{
    (void)state;
    if (i == ctx->server)
        return;
    alg_freeze_round(ctx, i, 0);   /* nothing without a freeze section */
    alg_start_step(ctx, i);
}

static void pa_on_step_done(alg_ctx *ctx, void *state, int i, const double *grad)
{
    alg_ps_worker *w = state;
    alg_ps_push_suffix(ctx, i, grad, w->version, alg_frozen_params(ctx, i));
    w->waiting = 1;
}

static void pa_on_message(alg_ctx *ctx, void *state, int i, const cl_msg *m)
{
    if (i != ctx->server) {
        alg_ps_worker_model(ctx, state, i, m);
        return;
    }
    alg_ps *ps = ctx->shared;
    const double *g = m->payload->data;
    size_t held = 0;   /* the prefix the worker's version froze */
    if (alg_freezing(ctx)) {
        alg_freeze_round(ctx, ctx->server, ps->version);
        held = alg_freeze_prefix_at(ctx, m->round);
        if (held > 0) {   /* a suffix message: placed at its offset in a whole vector */
            memcpy(ps->sum + held, g, (ctx->P - held) * sizeof(double));
            g = ps->sum;
        }
    }
    alg_ps_apply(ctx, g, m->round);
    if (!alg_is_failed(ctx, m->from))
        alg_ps_send_suffix(ctx, m->from, held);
}

const alg_type alg_ps_async = {
    .name = "ps-async",
    .needs = ALG_CAN_FREEZE,
    .summary = "asynchronous SGD through a parameter server (Dean et al. 2012)",
    .state_size = sizeof(alg_ps_worker),
    .servers = 1,
    .eval_params = alg_ps_eval_params,
    .shared_init = alg_ps_shared_init_plain,
    .shared_fini = alg_ps_shared_fini,
    .on_start = pa_on_start,
    .on_step_done = pa_on_step_done,
    .on_message = pa_on_message,
    .on_timer = alg_ps_rejoin_on_timer,
    .on_failure = alg_ps_rejoin_on_failure,
    .describe_wait = alg_ps_worker_describe_wait,
    .stats = alg_ps_stats,
};
