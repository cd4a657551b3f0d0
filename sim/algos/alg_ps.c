/* alg_ps.c -- the shared mechanics of parameter-server protocols (see
 * alg_ps.h): versioned server model, gradient and model messages, and
 * staleness accounting, and the plumbing of failures (the server's notices
 * of the detector's declarations, rejoin messages).  It decides nothing
 * about when updates happen or whom a failure concerns.
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
    cl_buf *b = alg_buf_get(ctx);
    memcpy(b->data, grad, ctx->P * sizeof(double));
    alg_send(ctx, worker, ctx->server, ALG_PS_TAG_GRAD, version, b,
            alg_param_bytes(ctx, ctx->P));
    alg_buf_put(ctx, b);
}

void alg_ps_push_suffix(alg_ctx *ctx, int worker, const double *grad, uint64_t version,
                        size_t off)
{
    if (off == 0) {
        alg_ps_push(ctx, worker, grad, version);
        return;
    }
    cl_buf *b = alg_buf_get_len(ctx, ctx->P - off);
    memcpy(b->data, grad + off, (ctx->P - off) * sizeof(double));
    alg_send(ctx, worker, ctx->server, ALG_PS_TAG_GRAD, version, b,
             alg_param_bytes(ctx, ctx->P - off));
    alg_buf_put(ctx, b);
}

void alg_ps_broadcast_suffix(alg_ctx *ctx, size_t off)
{
    if (off == 0) {
        alg_ps_broadcast_model(ctx);
        return;
    }
    alg_ps *ps = ctx->shared;
    cl_buf *x = alg_buf_get_len(ctx, ctx->P - off);
    memcpy(x->data, alg_params_const(ctx, ctx->server) + off, (ctx->P - off) * sizeof(double));
    for (int w = 0; w < ctx->n; w++)
        if (!alg_is_failed(ctx, w))
            alg_send(ctx, ctx->server, w, ALG_PS_TAG_MODEL, ps->version, x,
                     alg_param_bytes(ctx, ctx->P - off));
    alg_buf_put(ctx, x);
}

void alg_ps_send_suffix(alg_ctx *ctx, int worker, size_t off)
{
    if (off == 0) {
        alg_ps_send_model(ctx, worker);
        return;
    }
    alg_ps *ps = ctx->shared;
    cl_buf *x = alg_buf_get_len(ctx, ctx->P - off);
    memcpy(x->data, alg_params_const(ctx, ctx->server) + off, (ctx->P - off) * sizeof(double));
    alg_send(ctx, ctx->server, worker, ALG_PS_TAG_MODEL, ps->version, x,
             alg_param_bytes(ctx, ctx->P - off));
    alg_buf_put(ctx, x);
}

void alg_ps_send_model(alg_ctx *ctx, int worker)
{
    alg_ps *ps = ctx->shared;
    cl_buf *x = alg_snapshot(ctx, ctx->server);
    alg_send(ctx, ctx->server, worker, ALG_PS_TAG_MODEL, ps->version, x,
            alg_param_bytes(ctx, ctx->P));
    alg_buf_put(ctx, x);
}

void alg_ps_broadcast_model(alg_ctx *ctx)
{
    alg_ps *ps = ctx->shared;
    cl_buf *x = alg_snapshot(ctx, ctx->server);
    for (int w = 0; w < ctx->n; w++)   /* the server's uplink sends them one by one */
        if (!alg_is_failed(ctx, w))
            alg_send(ctx, ctx->server, w, ALG_PS_TAG_MODEL, ps->version, x,
                    alg_param_bytes(ctx, ctx->P));
    alg_buf_put(ctx, x);
}

void alg_ps_send_rejoin(alg_ctx *ctx, int worker)
{
    alg_ps *ps = ctx->shared;
    cl_buf *x = alg_snapshot(ctx, ctx->server);
    alg_send(ctx, ctx->server, worker, ALG_PS_TAG_REJOIN, ps->version, x,
            alg_param_bytes(ctx, ctx->P));
    alg_buf_put(ctx, x);
}

void alg_ps_notify_server(alg_ctx *ctx, int peer, int failed)
{
    alg_set_timer(ctx, ctx->server, 0, (uint32_t)peer * 2u + (failed ? 1u : 0u));
}

int alg_ps_notice(uint32_t tag, int *peer, int *failed)
{
    if (tag >= ALG_PS_TIMER_OWN)
        return 0;
    *peer = (int)(tag / 2u);
    *failed = (int)(tag % 2u);
    return 1;
}

int alg_ps_live_workers(const alg_ctx *ctx)
{
    int live = 0;
    for (int w = 0; w < ctx->n; w++)
        live += !alg_is_failed(ctx, w);
    return live;
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
    alg_ps_apply_div(ctx, g, computed_on, 1.0);
}

void alg_ps_apply_div(alg_ctx *ctx, const double *g, uint64_t computed_on, double g_div)
{
    alg_ps *ps = ctx->shared;
    alg_sgd_apply(ctx, ctx->server, alg_params(ctx, ctx->server), g, g_div);
    record(ps, ps->version - computed_on);
    ps->version++;
}

void alg_ps_gather(alg_ctx *ctx, const double *g)
{
    alg_ps_gather_w(ctx, g, 1.0);
}

void alg_ps_gather_w(alg_ctx *ctx, const double *g, double w)
{
    alg_ps *ps = ctx->shared;
    cblas_daxpy((int)ctx->P, w, g, 1, ps->sum, 1);
    ps->n_sum++;
    ps->w_sum += w;
}

void alg_ps_gather_msg(alg_ctx *ctx, const cl_buf *g, double w)
{
    alg_ps *ps = ctx->shared;
    const size_t len = g->len < ctx->P ? g->len : ctx->P;   /* a whole buffer has a spare slot */
    cblas_daxpy((int)len, w, g->data, 1, ps->sum + (ctx->P - len), 1);
    ps->n_sum++;
    ps->w_sum += w;
}

void alg_ps_apply_gathered(alg_ctx *ctx)
{
    alg_ps *ps = ctx->shared;
    alg_sgd_apply(ctx, ctx->server, alg_params(ctx, ctx->server), ps->sum, ps->w_sum);
    for (int k = 0; k < ps->n_sum; k++)
        record(ps, 0);
    ps->version++;
    memset(ps->sum, 0, ctx->P * sizeof(double));
    ps->n_sum = 0;
    ps->w_sum = 0;
}

void alg_ps_install_to(alg_ctx *ctx, int worker, const cl_msg *m, size_t end)
{
    const size_t len = m->payload->len < end ? m->payload->len : end;
    memcpy(alg_params(ctx, worker) + (end - len), m->payload->data, len * sizeof(double));
}

void alg_ps_install(alg_ctx *ctx, int worker, const cl_msg *m)
{
    alg_ps_install_to(ctx, worker, m, ctx->P);
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
    if (!w->waiting)
        return;
    alg_ps_install(ctx, i, m);
    w->version = m->round;
    w->waiting = 0;
    alg_freeze_round(ctx, i, w->version);   /* nothing without a freeze section */
    alg_start_step(ctx, i);
}

void alg_ps_worker_restart(alg_ctx *ctx, void *state, int i, const cl_msg *m)
{
    alg_ps_worker *w = state;
    alg_abort_step(ctx, i);
    alg_ps_install(ctx, i, m);
    w->version = m->round;
    w->waiting = 0;
    alg_freeze_round(ctx, i, w->version);
    alg_start_step(ctx, i);
}

void alg_ps_worker_rejoin(alg_ctx *ctx, void *state, int i, const cl_msg *m)
{
    alg_ps_worker *w = state;
    if (!w->waiting && alg_is_computing(ctx, i) && w->version >= m->round)
        return;
    alg_ps_worker_restart(ctx, state, i, m);
}

void alg_ps_worker_model(alg_ctx *ctx, void *state, int i, const cl_msg *m)
{
    if (m->tag == ALG_PS_TAG_REJOIN)
        alg_ps_worker_rejoin(ctx, state, i, m);
    else
        alg_ps_worker_reply(ctx, state, i, m);
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

void alg_ps_rejoin_on_failure(alg_ctx *ctx, int peer, int failed)
{
    if (peer != ctx->server)
        alg_ps_notify_server(ctx, peer, failed);
}

void alg_ps_rejoin_on_timer(alg_ctx *ctx, void *state, int node, uint32_t tag)
{
    (void)state;
    (void)node;
    int peer, failed;
    if (alg_ps_notice(tag, &peer, &failed) && !failed && !alg_is_failed(ctx, peer))
        alg_ps_send_rejoin(ctx, peer);
}

const double *alg_ps_eval_params(const alg_ctx *ctx)
{
    return alg_params_const(ctx, ctx->server);
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
