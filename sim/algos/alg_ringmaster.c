/* alg_ringmaster.c -- Ringmaster ASGD (Maranjyan, Tyurin, Richtarik,
 * "Ringmaster ASGD: The First Asynchronous SGD with Optimal Time
 * Complexity", ICML 2025): asynchronous SGD through a server that ignores
 * every gradient whose delay reaches the threshold R.
 *
 * Timing: as ps-async.  The delay of a gradient is the number of updates
 * the server applied since the version it was computed on.  As in the
 * paper (Algorithms 4 and 5: "if delta^k < R") and the authors' code, a
 * gradient with delay < R is applied, x <- x - lr g, one with delay >= R
 * is dropped (gradients_discarded); R >= 1, and R = 1 applies only fresh
 * gradients.  Invariant: every applied gradient has a delay of at most
 * R - 1 (staleness_max < R, tested).
 *
 * `stops` off (the default; the paper's Algorithm 4, without calculation
 * stops): the worker computes to the end, and gets the current model back
 * whether its gradient was applied or dropped.  `stops` on (Algorithm 5,
 * and what the authors' code runs): after each update the server stops
 * every worker whose computation has become R updates old -- it sends
 * that worker the current model, which aborts the step in progress and
 * restarts it on the new model (calculations_stopped) -- so no gradient
 * that reaches the server in time is ever too old.  The authors' code does
 * this instantly; here the stop is a model message from the server, so a
 * gradient already on its way when its worker was stopped still arrives:
 * the server drops it (counted in gradients_discarded) and does not answer
 * it, the stop message being that worker's answer.
 *
 * When a node fails: the server waits for no worker (Ringmaster, like every
 * asynchronous method of the paper, uses whichever gradients arrive), sends
 * nothing -- replies or stops -- to a worker declared failed, and sends one
 * declared back the current model (ALG_PS_TAG_REJOIN, recorded as what it
 * computes on), on which it starts afresh: its first gradient is fresh, not
 * one too old to apply.  The server failing: the workers wait for it
 * (gradients retransmitted until it is back); down for good, the run ends
 * as stalled.
 */
#include "alg_ps.h"

enum { P_MAX_DELAY, P_STOPS };

static const char *const on_off[] = { "off", "on", NULL };

static const alg_param_spec params[] = {
    { "max_delay", ALG_PARAM_INT, 8, 1, 1e9, NULL,
      "R: gradients delayed by R or more updates are dropped" },
    { "stops", ALG_PARAM_CHOICE, 0, 0, 0, on_off,
      "on: the server stops calculations that would be too late (Algorithm 5)" },
    { NULL, 0, 0, 0, 0, NULL, NULL },
};

/* The server's record, after alg_ps: per worker, the version of the last
 * model sent to it (what it computes on), and the stops sent. */
typedef struct rm_shared {
    uint64_t  stopped;
    uint64_t *sent;   /* n */
} rm_shared;

static rm_shared *rm(alg_ctx *ctx) { return alg_ps_extra(ctx->shared); }

static int rm_shared_init(alg_ctx *ctx)
{
    size_t n = (size_t)ctx->n;
    if (alg_ps_shared_init(ctx, sizeof(rm_shared) + n * sizeof(uint64_t)) != 0)
        return -1;
    rm_shared *r = rm(ctx);
    r->sent = (uint64_t *)(r + 1);
    return 0;
}

static void rm_send_model(alg_ctx *ctx, int w)
{
    rm(ctx)->sent[w] = ((alg_ps *)ctx->shared)->version;
    alg_ps_send_model(ctx, w);
}

/* Stops every worker whose computation is R updates old, in worker order
 * (the one just answered computes on the current version). */
static void stop_stale(alg_ctx *ctx)
{
    alg_ps *ps = ctx->shared;
    rm_shared *r = rm(ctx);
    const uint64_t R = (uint64_t)ctx->param[P_MAX_DELAY];
    for (int w = 0; w < ctx->n; w++)
        if (ps->version - r->sent[w] >= R && !alg_is_failed(ctx, w)) {
            r->stopped++;
            rm_send_model(ctx, w);
        }
}

static void worker_on_model(alg_ctx *ctx, void *state, int i, const cl_msg *m)
{
    alg_ps_worker *w = state;
    if (m->tag == ALG_PS_TAG_REJOIN)
        alg_ps_worker_rejoin(ctx, state, i, m);
    else if (w->waiting)
        alg_ps_worker_reply(ctx, state, i, m);
    else if (alg_is_computing(ctx, i) && m->round > w->version)
        alg_ps_worker_restart(ctx, state, i, m);   /* a stop: the step is too stale */
    /* else a late copy of an answer it no longer waits for */
}

static void rm_on_message(alg_ctx *ctx, void *state, int i, const cl_msg *m)
{
    if (i != ctx->server) {
        worker_on_model(ctx, state, i, m);
        return;
    }
    alg_ps *ps = ctx->shared;
    const int stops = (int)ctx->param[P_STOPS];
    if (stops && m->round < rm(ctx)->sent[m->from]) {
        ps->discarded++;   /* its worker was stopped and restarted meanwhile */
        return;
    }
    if (ps->version - m->round < (uint64_t)ctx->param[P_MAX_DELAY]) {
        alg_ps_apply(ctx, m->payload->data, m->round);
        if (!alg_is_failed(ctx, m->from))
            rm_send_model(ctx, m->from);
        if (stops)   /* after the reply, as the authors' code */
            stop_stale(ctx);
    } else {
        ps->discarded++;
        if (!alg_is_failed(ctx, m->from))
            rm_send_model(ctx, m->from);
    }
}

static void rm_on_failure(alg_ctx *ctx, int peer, int failed)
{
    if (peer != ctx->server)
        alg_ps_notify_server(ctx, peer, failed);
}

static void rm_on_timer(alg_ctx *ctx, void *state, int node, uint32_t tag)
{
    (void)state;
    (void)node;
    int peer, failed;
    if (alg_ps_notice(tag, &peer, &failed) && !failed && !alg_is_failed(ctx, peer)) {
        rm(ctx)->sent[peer] = ((alg_ps *)ctx->shared)->version;
        alg_ps_send_rejoin(ctx, peer);
    }
}

static int rm_stats(const alg_ctx *ctx, const char **keys, double *values, int max)
{
    int k = alg_ps_stats(ctx, keys, values, max);
    if (k == 0 || k >= max)
        return k;
    keys[k] = "calculations_stopped";
    values[k] = (double)((const rm_shared *)alg_ps_extra(ctx->shared))->stopped;
    return k + 1;
}

const alg_type alg_ringmaster = {
    .name = "ringmaster",
    .summary = "asynchronous, drops gradients delayed >= R (Maranjyan et al. 2025)",
    .state_size = sizeof(alg_ps_worker),
    .servers = 1,
    .params = params,
    .eval_params = alg_ps_eval_params,
    .shared_init = rm_shared_init,
    .shared_fini = alg_ps_shared_fini,
    .on_step_done = alg_ps_worker_step_done,
    .on_message = rm_on_message,
    .on_timer = rm_on_timer,
    .on_failure = rm_on_failure,
    .describe_wait = alg_ps_worker_describe_wait,
    .stats = rm_stats,
};
