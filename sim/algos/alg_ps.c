/* alg_ps.c -- the shared mechanics of parameter-server protocols (see
 * alg_ps.h): versioned server model, gradient and model messages, and
 * staleness accounting.  It decides nothing about when updates happen.
 */
#include "alg_ps.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <gsl/gsl_cblas.h>

#define ALIGNED(x) (((x) + 15) & ~(size_t)15)

int alg_ps_shared_init(alg_ctx *ctx, size_t extra)
{
    alg_ps *ps = calloc(1, ALIGNED(sizeof(alg_ps)) + extra);
    if (!ps)
        return -1;
    ctx->shared = ps;
    ps->sum = calloc(ctx->P ? ctx->P : 1, sizeof(double));
    return ps->sum ? 0 : -1;
}

void alg_ps_shared_fini(alg_ctx *ctx)
{
    alg_ps *ps = ctx->shared;
    if (!ps)
        return;
    free(ps->sum);
    free(ps);
}

void *alg_ps_extra(alg_ps *ps) { return (char *)ps + ALIGNED(sizeof(alg_ps)); }

void alg_ps_push(alg_ctx *ctx, int worker, const double *grad, uint64_t version)
{
    cl_buf *b = cl_buf_get(ctx->cl);
    memcpy(b->data, grad, ctx->P * sizeof(double));
    cl_send(ctx->cl, worker, ctx->server, ALG_PS_TAG_GRAD, version, b,
            cl_param_bytes(ctx->cl, ctx->P));
    cl_buf_put(ctx->cl, b);
}

void alg_ps_send_model(alg_ctx *ctx, int worker)
{
    alg_ps *ps = ctx->shared;
    cl_buf *x = cl_snapshot(ctx->cl, ctx->server);
    cl_send(ctx->cl, ctx->server, worker, ALG_PS_TAG_MODEL, ps->version, x,
            cl_param_bytes(ctx->cl, ctx->P));
    cl_buf_put(ctx->cl, x);
}

void alg_ps_broadcast_model(alg_ctx *ctx)
{
    alg_ps *ps = ctx->shared;
    cl_buf *x = cl_snapshot(ctx->cl, ctx->server);
    for (int w = 0; w < ctx->n; w++)   /* the server's uplink sends them one by one */
        cl_send(ctx->cl, ctx->server, w, ALG_PS_TAG_MODEL, ps->version, x,
                cl_param_bytes(ctx->cl, ctx->P));
    cl_buf_put(ctx->cl, x);
}

static void record(alg_ps *ps, uint64_t staleness)
{
    ps->applied++;
    ps->staleness_sum += (double)staleness;
    if (staleness > ps->staleness_max)
        ps->staleness_max = staleness;
}

void alg_ps_apply(alg_ctx *ctx, const double *g, uint64_t computed_on)
{
    alg_ps *ps = ctx->shared;
    alg_sgd_apply(ctx, ctx->server, cl_params(ctx->cl, ctx->server), g, 1.0);
    record(ps, ps->version - computed_on);
    ps->version++;
}

void alg_ps_gather(alg_ctx *ctx, const double *g)
{
    alg_ps *ps = ctx->shared;
    cblas_daxpy((int)ctx->P, 1.0, g, 1, ps->sum, 1);
    ps->n_sum++;
}

void alg_ps_apply_gathered(alg_ctx *ctx)
{
    alg_ps *ps = ctx->shared;
    alg_sgd_apply(ctx, ctx->server, cl_params(ctx->cl, ctx->server), ps->sum, (double)ps->n_sum);
    for (int k = 0; k < ps->n_sum; k++)
        record(ps, 0);
    ps->version++;
    memset(ps->sum, 0, ctx->P * sizeof(double));
    ps->n_sum = 0;
}

void alg_ps_install(alg_ctx *ctx, int worker, const cl_msg *m)
{
    memcpy(cl_params(ctx->cl, worker), m->payload->data, ctx->P * sizeof(double));
}

int alg_ps_shared_init_plain(alg_ctx *ctx) { return alg_ps_shared_init(ctx, 0); }

void alg_ps_worker_step_done(alg_ctx *ctx, void *state, int i, const double *grad)
{
    alg_ps_worker *w = state;
    alg_ps_push(ctx, i, grad, w->version);
    w->waiting = 1;
}

void alg_ps_worker_reply(alg_ctx *ctx, void *state, int i, const cl_msg *m)
{
    alg_ps_worker *w = state;
    alg_ps_install(ctx, i, m);
    w->version = m->round;
    w->waiting = 0;
    cl_start_step(ctx->cl, i);
}

void alg_ps_worker_describe_wait(const alg_ctx *ctx, const void *state, int i, char *buf,
                                 size_t size)
{
    const alg_ps_worker *w = state;
    if (i == ctx->server)
        buf[0] = '\0';
    else if (w->waiting)
        snprintf(buf, size, "the server's reply to its gradient on version %llu",
                 (unsigned long long)w->version);
    else
        snprintf(buf, size, "its step");
}

const double *alg_ps_eval_params(const alg_ctx *ctx)
{
    return cl_params_const(ctx->cl, ctx->server);
}

int alg_ps_stats(const alg_ctx *ctx, const char **keys, double *values, int max)
{
    const alg_ps *ps = ctx->shared;
    if (max < 4)
        return 0;
    keys[0] = "gradients_applied";
    values[0] = (double)ps->applied;
    keys[1] = "gradients_discarded";
    values[1] = (double)ps->discarded;
    keys[2] = "staleness_mean";
    values[2] = ps->applied ? ps->staleness_sum / (double)ps->applied : 0;
    keys[3] = "staleness_max";
    values[3] = (double)ps->staleness_max;
    return 4;
}
