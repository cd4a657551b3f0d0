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
 *
 * When a node fails, as elastic synchronous training does it (TorchElastic
 * and elastic Horovod re-form the group without the dead member; Chen et
 * al.'s TensorFlow aggregates the replicas that are there): the iteration
 * waits for every worker not declared failed, so a worker declared failed
 * (faults.detect_s after it went down) stops being waited for -- the
 * iteration in progress closes with the gradients of the others, a gradient
 * it sent before failing included -- and gets no more models.  A worker
 * declared back is a member again at once: the server sends it the current
 * model (ALG_PS_TAG_REJOIN, the version in progress) and the iteration in
 * progress waits for its gradient on it.  A gradient of an older version
 * (from a worker that missed iterations) is dropped and answered with the
 * current model.  The server failing: the workers wait for it, their
 * gradients retransmitted until it is back; down for good, the run ends as
 * stalled (exit 1) with every worker waiting for it.
 */
#include "alg_ps.h"
#include "alg_batchplan.h"

#include <stdio.h>
#include <string.h>

static const alg_param_spec params[] = {
    ALG_BP_PARAMS,
    { NULL, 0, 0, 0, 0, NULL, NULL },
};

typedef struct psy_state {
    int      waiting;
    uint64_t version;    /* of the model the worker holds */
} psy_state;

/* After alg_ps: which workers gave a gradient of the current version, and
 * how many workers not declared failed have not. */
typedef struct psy_shared {
    int    missing;
    char  *got;          /* n */
    alg_bp bp;           /* the workers' batches (uniform: alg_batch each) */
} psy_shared;

static psy_shared *psy(const alg_ctx *ctx) { return alg_ps_extra(ctx->shared); }

static int psy_shared_init(alg_ctx *ctx)
{
    size_t n = (size_t)ctx->n;
    if (alg_ps_shared_init(ctx, sizeof(psy_shared) + n) != 0)
        return -1;
    psy_shared *sh = psy(ctx);
    sh->got = (char *)(sh + 1);
    sh->missing = ctx->n;
    return alg_bp_init(&sh->bp, ctx, 0);
}

static void psy_shared_fini(alg_ctx *ctx)
{
    if (ctx->shared)
        alg_bp_fini(&psy(ctx)->bp);
    alg_ps_shared_fini(ctx);
}

static int psy_check(const alg_ctx *ctx, char *err, size_t size)
{
    return alg_bp_check(ctx, 0, err, size);
}

/* A worker's next step, with its planned batch and the layers the
 * version it holds has frozen. */
static void start_step(alg_ctx *ctx, int i)
{
    alg_bp_step_start(ctx, &psy(ctx)->bp, i);
    alg_freeze_round(ctx, i, ((psy_state *)alg_state(ctx, i))->version);
    alg_start_step(ctx, i);
}

static void psy_on_start(alg_ctx *ctx, void *state, int i)
{
    (void)state;
    if (i < ctx->n)
        start_step(ctx, i);
}

/* Server: the iteration ends when no live worker is missing. */
static void try_close(alg_ctx *ctx)
{
    alg_ps *ps = ctx->shared;
    psy_shared *sh = psy(ctx);
    if (sh->missing > 0 || ps->n_sum == 0)
        return;
    /* freezing: the gradients of this version leave its frozen layers
     * alone, and the new model's suffix from there is what the workers
     * (who all held this version) lack */
    const size_t off = alg_freeze_round(ctx, ctx->server, ps->version);
    alg_ps_apply_gathered(ctx);
    memset(sh->got, 0, (size_t)ctx->n);
    sh->missing = alg_ps_live_workers(ctx);
    alg_bp_iteration_done(ctx, &sh->bp, ps->version);
    alg_ps_broadcast_suffix(ctx, off);
}

static void psy_on_step_done(alg_ctx *ctx, void *state, int i, const double *grad)
{
    psy_state *st = state;
    alg_bp_step_done(ctx, &psy(ctx)->bp, i);
    alg_ps_push_suffix(ctx, i, grad, st->version, alg_frozen_params(ctx, i));
    st->waiting = 1;
}

static void server_receive(alg_ctx *ctx, const cl_msg *m)
{
    alg_ps *ps = ctx->shared;
    psy_shared *sh = psy(ctx);
    int w = m->from;
    if (m->round != ps->version) {   /* it missed iterations: catch it up */
        ps->discarded++;
        if (!alg_is_failed(ctx, w))
            alg_ps_send_rejoin(ctx, w);
        return;
    }
    if (sh->got[w]) {   /* its second gradient of this version, after a rejoin */
        ps->discarded++;
        return;
    }
    sh->got[w] = 1;
    if (!alg_is_failed(ctx, w))
        sh->missing--;
    if (alg_freezing(ctx))
        alg_ps_gather_msg(ctx, m->payload, alg_bp_weight(&sh->bp, w));
    else
        alg_ps_gather_w(ctx, m->payload->data, alg_bp_weight(&sh->bp, w));
    try_close(ctx);
}

static void psy_on_message(alg_ctx *ctx, void *state, int i, const cl_msg *m)
{
    psy_state *st = state;
    if (i == ctx->server) {
        server_receive(ctx, m);
        return;
    }
    /* a newer model, or a rejoin while not computing on the current one */
    int rejoin = m->tag == ALG_PS_TAG_REJOIN;
    if (!(m->round > st->version
          || (rejoin && (st->waiting || !alg_is_computing(ctx, i)))))
        return;
    alg_abort_step(ctx, i);
    alg_ps_install(ctx, i, m);
    st->version = m->round;
    st->waiting = 0;
    start_step(ctx, i);
}

/* The detector's view is the protocol's bookkeeping (who is waited for);
 * what the server does about it waits for the server's timer. */
static void psy_on_failure(alg_ctx *ctx, int peer, int failed)
{
    psy_shared *sh = psy(ctx);
    if (peer != ctx->server && !sh->got[peer])
        sh->missing += failed ? -1 : 1;
    alg_ps_notify_server(ctx, peer, failed);
}

static void psy_on_timer(alg_ctx *ctx, void *state, int node, uint32_t tag)
{
    (void)state;
    (void)node;
    int peer, failed;
    if (!alg_ps_notice(tag, &peer, &failed))
        return;
    if (peer != ctx->server && !failed && !alg_is_failed(ctx, peer))
        alg_ps_send_rejoin(ctx, peer);
    try_close(ctx);
}

static void psy_describe_wait(const alg_ctx *ctx, const void *state, int i, char *buf,
                              size_t size)
{
    const psy_state *st = state;
    const alg_ps *ps = ctx->shared;
    if (i == ctx->server)
        snprintf(buf, size, "%d of %d gradients of version %llu", psy(ctx)->missing, ctx->n,
                 (unsigned long long)ps->version);
    else if (st->waiting)
        snprintf(buf, size, "the model of version %llu from the server%s",
                 (unsigned long long)ps->version + 1,
                 alg_is_failed(ctx, ctx->server) ? " (declared failed)" : "");
    else
        snprintf(buf, size, "its step");
}

/* alg_ps_stats, and with speed batches the plan's smallest and largest
 * batch and how many times it was re-planned after the first. */
static int psy_stats(const alg_ctx *ctx, const char **keys, double *values, int max)
{
    int k = alg_ps_stats(ctx, keys, values, max);
    return k + alg_bp_stats(&psy(ctx)->bp, keys + k, values + k, max - k);
}

const alg_type alg_ps_sync = {
    .name = "ps-sync",
    .summary = "synchronous SGD through a parameter server (baseline)",
    .needs = ALG_CAN_FREEZE,
    .state_size = sizeof(psy_state),
    .servers = 1,
    .params = params,
    .eval_params = alg_ps_eval_params,
    .check = psy_check,
    .shared_init = psy_shared_init,
    .shared_fini = psy_shared_fini,
    .on_start = psy_on_start,
    .on_step_done = psy_on_step_done,
    .on_message = psy_on_message,
    .on_timer = psy_on_timer,
    .on_failure = psy_on_failure,
    .describe_wait = psy_describe_wait,
    .stats = psy_stats,
};
