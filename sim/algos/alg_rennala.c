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
 *
 * When a node fails: the batch of S needs no particular worker (the paper's
 * method takes the first S gradients at x_k from whoever computes them), so
 * the live workers fill it -- several gradients each if need be -- and a
 * dead worker costs only its share of the compute.  The server sends
 * nothing to a worker declared failed; one declared back gets the current
 * point (ALG_PS_TAG_REJOIN) and restarts its step on it.  The server
 * failing: workers never wait for an answer, so once the server is
 * declared failed each finishes its step, pushes it (retransmitted until
 * the server is back) and stops computing -- a worker whose gradients
 * cannot be delivered blocks, as it would on a full send buffer -- and all
 * resume when the server is declared back; a server down for good leaves
 * every worker idle and the run ends as stalled, never with the workers
 * computing gradients that no server applies.
 */
#include "alg_ps.h"

#include <stdio.h>

enum { P_BATCH_GRADIENTS, P_RESTART };

static const char *const onoff[] = { "off", "on", NULL };

static const alg_param_spec params[] = {
    { "gradients", ALG_PARAM_INT, 0, 0, 1e9, NULL,
      "S: fresh gradients the server batches per update; 0: the number of workers" },   /* 0: the number of workers */
    { "restart", ALG_PARAM_CHOICE, 1, 0, 0, onoff,
      "on: a worker restarts its step on a new point; off: its stale gradient is dropped" },
    { NULL, 0, 0, 0, 0, NULL, NULL },
};

typedef struct rn_state {
    uint64_t version;
    int      paused;    /* stopped while the server is declared failed */
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
    if (alg_is_failed(ctx, ctx->server))
        st->paused = 1;
    else
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
    if (m->tag == ALG_PS_TAG_REJOIN) {
        if (m->round < st->version)
            return;
        alg_abort_step(ctx, i);
        alg_ps_install(ctx, i, m);
        st->version = m->round;
        if (!st->paused)
            alg_start_step(ctx, i);
        return;
    }
    if (m->round <= st->version)
        return;   /* a late copy of a point it already has */
    alg_ps_install(ctx, i, m);
    st->version = m->round;
    if ((int)ctx->param[P_RESTART] && alg_is_computing(ctx, i)) {
        /* the step in progress is on the old point: drop it, start afresh */
        alg_abort_step(ctx, i);
        alg_start_step(ctx, i);
    }
}

static void rn_on_failure(alg_ctx *ctx, int peer, int failed)
{
    if (peer != ctx->server) {
        alg_ps_notify_server(ctx, peer, failed);
        return;
    }
    if (failed)
        return;   /* each worker stops after the step it computes */
    for (int w = 0; w < ctx->n; w++) {
        rn_state *st = alg_state(ctx, w);
        if (st->paused) {
            st->paused = 0;
            alg_start_step(ctx, w);   /* a down worker's starts when it is back */
        }
    }
}

static void rn_on_timer(alg_ctx *ctx, void *state, int node, uint32_t tag)
{
    (void)state;
    (void)node;
    int peer, failed;
    if (alg_ps_notice(tag, &peer, &failed) && !failed && !alg_is_failed(ctx, peer))
        alg_ps_send_rejoin(ctx, peer);
}

static void rn_describe_wait(const alg_ctx *ctx, const void *state, int i, char *buf,
                             size_t size)
{
    const alg_ps *ps = ctx->shared;
    if (i == ctx->server)
        snprintf(buf, size, "%d more gradients of version %llu", target(ctx) - ps->n_sum,
                 (unsigned long long)ps->version);
    else if (((const rn_state *)state)->paused)
        snprintf(buf, size, "the server, declared failed");
    else
        snprintf(buf, size, "%s", alg_is_computing(ctx, i) ? "its step" : "");
}

const alg_type alg_rennala = {
    .name = "rennala",
    .summary = "parameter server batching S fresh gradients (Tyurin & Richtarik 2023)",
    .state_size = sizeof(rn_state),
    .servers = 1,
    .params = params,
    .eval_params = alg_ps_eval_params,
    .shared_init = rn_shared_init,
    .shared_fini = alg_ps_shared_fini,
    .on_step_done = rn_on_step_done,
    .on_message = rn_on_message,
    .on_timer = rn_on_timer,
    .on_failure = rn_on_failure,
    .describe_wait = rn_describe_wait,
    .stats = alg_ps_stats,
};
