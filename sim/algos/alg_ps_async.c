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
 */
#include "alg_ps.h"

static void pa_on_message(alg_ctx *ctx, void *state, int i, const cl_msg *m)
{
    if (i != ctx->server) {
        alg_ps_worker_model(ctx, state, i, m);
        return;
    }
    alg_ps_apply(ctx, m->payload->data, m->round);
    if (!alg_is_failed(ctx, m->from))
        alg_ps_send_model(ctx, m->from);
}

const alg_type alg_ps_async = {
    .name = "ps-async",
    .summary = "asynchronous SGD through a parameter server (Dean et al. 2012)",
    .state_size = sizeof(alg_ps_worker),
    .servers = 1,
    .eval_params = alg_ps_eval_params,
    .shared_init = alg_ps_shared_init_plain,
    .shared_fini = alg_ps_shared_fini,
    .on_step_done = alg_ps_worker_step_done,
    .on_message = pa_on_message,
    .on_timer = alg_ps_rejoin_on_timer,
    .on_failure = alg_ps_rejoin_on_failure,
    .describe_wait = alg_ps_worker_describe_wait,
    .stats = alg_ps_stats,
};
