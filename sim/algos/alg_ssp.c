/* alg_ssp.c -- stale synchronous parallel (Ho et al., "More Effective
 * Distributed ML via a Stale Synchronous Parallel Parameter Server", NIPS
 * 2013) with staleness bound s.
 *
 * Timing: as ps-async (every gradient applied on arrival, staleness
 * recorded), but a worker's clock is the number of gradients it has pushed,
 * and a worker may start computing with clock c only while
 * c - (slowest worker's clock) <= s.  The server holds back the reply (the
 * fresh model) of a worker that is too far ahead and releases it, with the
 * model current at that moment, as soon as the slowest worker catches up.
 * Invariant: at every instant the fastest and slowest clocks differ by at
 * most s + 1 (checked and reported as clock_gap_max).  s = 0 is bulk
 * synchronous with per-gradient updates.
 *
 * When a node fails: the slowest clock c_min is taken over the live workers
 * (not declared failed), so a dead worker stops holding the others back
 * once declared, and the invariant holds over live workers (clock_gap_max
 * is measured over them).  Ho et al. and Petuum's Bosen leave failures to
 * checkpoints; here, as elastic training does, the run continues without
 * the member.  A worker declared back restarts at the slowest live clock
 * (its clock is raised to c_min, so its return holds nobody back) and gets
 * the current model (ALG_PS_TAG_REJOIN), replacing any reply held for it.
 * The server failing: the workers wait for it (gradients retransmitted
 * until it is back); down for good, the run ends as stalled.
 */
#include "alg_ps.h"

#include <stdio.h>
#include <stdlib.h>

enum { P_STALENESS };

static const alg_param_spec params[] = {
    { "staleness", ALG_PARAM_INT, 3, 0, 1e9, NULL,
      "s: clock steps the fastest worker may run ahead of the slowest" },
    { NULL, 0, 0, 0, 0, NULL, NULL },
};

typedef struct ssp_shared {
    uint64_t *clock;     /* per worker */
    char     *held;      /* per worker: reply held back */
    uint64_t  gap_max;
} ssp_shared;


static int ssp_shared_init(alg_ctx *ctx)
{
    if (alg_ps_shared_init(ctx, sizeof(ssp_shared)) != 0)
        return -1;
    ssp_shared *sh = alg_ps_extra(ctx->shared);
    sh->clock = calloc((size_t)ctx->n, sizeof(uint64_t));
    sh->held = calloc((size_t)ctx->n, 1);
    return sh->clock && sh->held ? 0 : -1;
}

static void ssp_shared_fini(alg_ctx *ctx)
{
    if (ctx->shared) {
        ssp_shared *sh = alg_ps_extra(ctx->shared);
        free(sh->clock);
        free(sh->held);
    }
    alg_ps_shared_fini(ctx);
}

/* The slowest clock over live workers; 0 when none is live (*any = 0). */
static uint64_t min_clock(const alg_ctx *ctx, const ssp_shared *sh, int *any)
{
    uint64_t m = 0;
    *any = 0;
    for (int w = 0; w < ctx->n; w++)
        if (!alg_is_failed(ctx, w) && (!*any || sh->clock[w] < m)) {
            m = sh->clock[w];
            *any = 1;
        }
    return m;
}

/* Server: answer every live worker that is now allowed to go on. */
static void release(alg_ctx *ctx)
{
    ssp_shared *sh = alg_ps_extra(ctx->shared);
    uint64_t s = (uint64_t)ctx->param[P_STALENESS];
    int any;
    uint64_t lo = min_clock(ctx, sh, &any), hi = lo;
    if (!any)
        return;
    for (int w = 0; w < ctx->n; w++) {
        if (alg_is_failed(ctx, w))
            continue;
        if (sh->clock[w] > hi)
            hi = sh->clock[w];
        if (sh->held[w] && sh->clock[w] - lo <= s) {
            sh->held[w] = 0;
            alg_ps_send_model(ctx, w);
        }
    }
    if (hi - lo > sh->gap_max)
        sh->gap_max = hi - lo;
}

/* Server: a gradient arrives; apply it, advance the sender's clock, answer
 * every worker (the sender included) that is now allowed to go on. */
static void server_receive(alg_ctx *ctx, const cl_msg *m)
{
    ssp_shared *sh = alg_ps_extra(ctx->shared);
    alg_ps_apply(ctx, m->payload->data, m->round);
    sh->clock[m->from]++;
    sh->held[m->from] = 1;
    release(ctx);
}

static void ssp_on_failure(alg_ctx *ctx, int peer, int failed)
{
    alg_ps_notify_server(ctx, peer, failed);
}

/* Server: a worker declared failed no longer holds c_min down; one declared
 * back resumes at the slowest live clock with the current model. */
static void ssp_on_timer(alg_ctx *ctx, void *state, int node, uint32_t tag)
{
    (void)state;
    (void)node;
    ssp_shared *sh = alg_ps_extra(ctx->shared);
    int peer, failed;
    if (!alg_ps_notice(tag, &peer, &failed))
        return;
    if (peer != ctx->server && !failed && !alg_is_failed(ctx, peer)) {
        int any = 0;
        uint64_t lo = 0;
        for (int w = 0; w < ctx->n; w++)   /* the slowest of the others */
            if (w != peer && !alg_is_failed(ctx, w) && (!any || sh->clock[w] < lo)) {
                lo = sh->clock[w];
                any = 1;
            }
        if (any && sh->clock[peer] < lo)
            sh->clock[peer] = lo;
        sh->held[peer] = 0;
        alg_ps_send_rejoin(ctx, peer);
    }
    release(ctx);
}

static void ssp_on_message(alg_ctx *ctx, void *state, int i, const cl_msg *m)
{
    if (i == ctx->server)
        server_receive(ctx, m);
    else
        alg_ps_worker_model(ctx, state, i, m);
}

static void ssp_describe_wait(const alg_ctx *ctx, const void *state, int i, char *buf,
                              size_t size)
{
    const alg_ps_worker *st = state;
    if (i == ctx->server)
        buf[0] = '\0';
    else if (st->waiting)
        snprintf(buf, size, "the server's reply (held while it is more than the staleness "
                            "bound ahead)");
    else
        snprintf(buf, size, "its step");
}

static int ssp_stats(const alg_ctx *ctx, const char **keys, double *values, int max)
{
    int k = alg_ps_stats(ctx, keys, values, max);
    if (k < max) {
        keys[k] = "clock_gap_max";
        values[k++] = (double)((const ssp_shared *)alg_ps_extra(ctx->shared))->gap_max;
    }
    return k;
}

const alg_type alg_ssp = {
    .name = "ssp",
    .summary = "asynchronous parameter server with staleness bound s (Ho et al. 2013)",
    .state_size = sizeof(alg_ps_worker),
    .servers = 1,
    .params = params,
    .eval_params = alg_ps_eval_params,
    .shared_init = ssp_shared_init,
    .shared_fini = ssp_shared_fini,
    .on_step_done = alg_ps_worker_step_done,
    .on_message = ssp_on_message,
    .on_timer = ssp_on_timer,
    .on_failure = ssp_on_failure,
    .describe_wait = ssp_describe_wait,
    .stats = ssp_stats,
};
