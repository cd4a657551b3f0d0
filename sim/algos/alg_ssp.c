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
 */
#include "alg_ps.h"

#include <stdio.h>
#include <stdlib.h>

enum { P_STALENESS };

static const alg_param_spec params[] = {
    { "staleness", ALG_PARAM_INT, 3, 0, 1e9, NULL },
    { NULL, 0, 0, 0, 0, NULL },
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

static uint64_t min_clock(const alg_ctx *ctx, const ssp_shared *sh)
{
    uint64_t m = sh->clock[0];
    for (int w = 1; w < ctx->n; w++)
        if (sh->clock[w] < m)
            m = sh->clock[w];
    return m;
}

/* Server: a gradient arrives; apply it, advance the sender's clock, answer
 * every worker (the sender included) that is now allowed to go on. */
static void server_receive(alg_ctx *ctx, const cl_msg *m)
{
    ssp_shared *sh = alg_ps_extra(ctx->shared);
    uint64_t s = (uint64_t)ctx->param[P_STALENESS];
    alg_ps_apply(ctx, m->payload->data, m->round);
    sh->clock[m->from]++;
    sh->held[m->from] = 1;
    uint64_t lo = min_clock(ctx, sh), hi = lo;
    for (int w = 0; w < ctx->n; w++) {
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

static void ssp_on_message(alg_ctx *ctx, void *state, int i, const cl_msg *m)
{
    if (i == ctx->server)
        server_receive(ctx, m);
    else
        alg_ps_worker_reply(ctx, state, i, m);
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
    .state_size = sizeof(alg_ps_worker),
    .servers = 1,
    .params = params,
    .eval_params = alg_ps_eval_params,
    .shared_init = ssp_shared_init,
    .shared_fini = ssp_shared_fini,
    .on_step_done = alg_ps_worker_step_done,
    .on_message = ssp_on_message,
    .describe_wait = ssp_describe_wait,
    .stats = ssp_stats,
};
