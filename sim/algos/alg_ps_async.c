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
 */
#include "alg_ps.h"

#include <stdio.h>

typedef struct pa_state {
    uint64_t version;    /* worker: version of the model it holds */
    int      waiting;
} pa_state;

static int pa_shared_init(alg_ctx *ctx) { return alg_ps_shared_init(ctx, 0); }

static void pa_on_step_done(alg_ctx *ctx, void *state, int i, const double *grad)
{
    pa_state *st = state;
    alg_ps_push(ctx, i, grad, st->version);
    st->waiting = 1;
}

static void pa_on_message(alg_ctx *ctx, void *state, int i, const cl_msg *m)
{
    pa_state *st = state;
    if (i == ctx->server) {
        alg_ps_apply(ctx, m->payload->data, m->round);
        alg_ps_send_model(ctx, m->from);
        return;
    }
    alg_ps_install(ctx, i, m);
    st->version = m->round;
    st->waiting = 0;
    cl_start_step(ctx->cl, i);
}

static void pa_describe_wait(const alg_ctx *ctx, const void *state, int i, char *buf,
                             size_t size)
{
    const pa_state *st = state;
    if (i == ctx->server)
        buf[0] = '\0';
    else if (st->waiting)
        snprintf(buf, size, "the model after its gradient on version %llu from the server",
                 (unsigned long long)st->version);
    else
        snprintf(buf, size, "its step");
}

const alg_type alg_ps_async = {
    .name = "ps-async",
    .state_size = sizeof(pa_state),
    .servers = 1,
    .eval_params = alg_ps_eval_params,
    .shared_init = pa_shared_init,
    .shared_fini = alg_ps_shared_fini,
    .on_step_done = pa_on_step_done,
    .on_message = pa_on_message,
    .describe_wait = pa_describe_wait,
    .stats = alg_ps_stats,
};
