/* alg_ringmaster.c -- Ringmaster ASGD (Maranjyan, Tyurin, Richtarik,
 * "Ringmaster ASGD: The First Asynchronous SGD with Optimal Time
 * Complexity", 2025): asynchronous SGD through a server that discards
 * every gradient whose delay exceeds R.
 *
 * Timing: as ps-async.  The delay of a gradient is the number of updates
 * the server applied since the version it was computed on; a gradient with
 * delay <= R is applied, x <- x - lr g, one with delay > R is dropped
 * (counted in gradients_discarded).  Either way the worker gets the current
 * model back and starts afresh on it.  Invariant: no applied gradient has a
 * delay above R (staleness_max <= R, tested).  Simplified: a worker
 * finishes a computation that will be discarded instead of being stopped
 * early (the paper's variant that interrupts stale work needs preemptible
 * steps).
 */
#include "alg_ps.h"


enum { P_MAX_DELAY };

static const alg_param_spec params[] = {
    { "max_delay", ALG_PARAM_INT, 8, 0, 1e9, NULL },
    { NULL, 0, 0, 0, 0, NULL },
};

static void rm_on_message(alg_ctx *ctx, void *state, int i, const cl_msg *m)
{
    if (i != ctx->server) {
        alg_ps_worker_reply(ctx, state, i, m);
        return;
    }
    alg_ps *ps = ctx->shared;
    if (ps->version - m->round <= (uint64_t)ctx->param[P_MAX_DELAY])
        alg_ps_apply(ctx, m->payload->data, m->round);
    else
        ps->discarded++;
    alg_ps_send_model(ctx, m->from);
}

const alg_type alg_ringmaster = {
    .name = "ringmaster",
    .state_size = sizeof(alg_ps_worker),
    .servers = 1,
    .params = params,
    .eval_params = alg_ps_eval_params,
    .shared_init = alg_ps_shared_init_plain,
    .shared_fini = alg_ps_shared_fini,
    .on_step_done = alg_ps_worker_step_done,
    .on_message = rm_on_message,
    .describe_wait = alg_ps_worker_describe_wait,
    .stats = alg_ps_stats,
};
