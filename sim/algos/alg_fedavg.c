/* alg_fedavg.c -- Federated Averaging (McMahan, Moore, Ramage, Hampson,
 * Aguera y Arcas, "Communication-Efficient Learning of Deep Networks from
 * Decentralized Data", AISTATS 2017).
 *
 * Timing: round r: the server draws m = max(1, round(fraction * n)) clients
 * uniformly without replacement (its own seeded stream) and sends each the
 * global model through its uplink.  A client installs it, runs
 * local_epochs passes over its data (local_epochs * floor(samples / batch)
 * SGD steps back to back, each gradient applied when its step ends) and
 * sends its model back.  When all m models are in, the server sets the
 * global model to their average weighted by the clients' sample counts,
 * then starts round r+1.  Clients not drawn stay idle.  The server
 * evaluates the global model.
 */
#include "alg_ps.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <gsl/gsl_cblas.h>
#include <gsl/gsl_randist.h>

enum { P_FRACTION, P_LOCAL_EPOCHS };

static const alg_param_spec params[] = {
    { "fraction", ALG_PARAM_REAL, 0.1, 1e-9, 1, NULL },
    { "local_epochs", ALG_PARAM_INT, 1, 1, 1e9, NULL },
    { NULL, 0, 0, 0, 0, NULL },
};

typedef struct fa_shared {
    int   *all, *pick;
    int    m, received;
    double weight;        /* samples of the models summed so far */
    uint64_t round;
} fa_shared;

typedef struct fa_state {
    long steps_left;      /* client: local steps still to take this round */
    int  active;
} fa_state;

static int fa_shared_init(alg_ctx *ctx)
{
    if (alg_ps_shared_init(ctx, sizeof(fa_shared)) != 0)
        return -1;
    fa_shared *sh = alg_ps_extra(ctx->shared);
    sh->m = (int)lround(ctx->param[P_FRACTION] * ctx->n);
    if (sh->m < 1)
        sh->m = 1;
    sh->all = malloc((size_t)ctx->n * sizeof(int));
    sh->pick = malloc((size_t)sh->m * sizeof(int));
    if (!sh->all || !sh->pick)
        return -1;
    for (int i = 0; i < ctx->n; i++)
        sh->all[i] = i;
    return 0;
}

static void fa_shared_fini(alg_ctx *ctx)
{
    if (ctx->shared) {
        fa_shared *sh = alg_ps_extra(ctx->shared);
        free(sh->all);
        free(sh->pick);
    }
    alg_ps_shared_fini(ctx);
}

static void start_round(alg_ctx *ctx)
{
    alg_ps *ps = ctx->shared;
    fa_shared *sh = alg_ps_extra(ps);
    gsl_ran_choose(alg_rng(ctx, ctx->server), sh->pick, (size_t)sh->m, sh->all, (size_t)ctx->n,
                   sizeof(int));
    sh->received = 0;
    sh->weight = 0;
    cl_buf *x = alg_snapshot(ctx, ctx->server);
    for (int k = 0; k < sh->m; k++)
        alg_send(ctx, ctx->server, sh->pick[k], ALG_PS_TAG_MODEL, sh->round, x,
                alg_param_bytes(ctx, ctx->P));
    alg_buf_put(ctx, x);
}

static void fa_on_start(alg_ctx *ctx, void *state, int node)
{
    (void)state;
    if (node == ctx->server)
        start_round(ctx);
}

static void fa_on_step_done(alg_ctx *ctx, void *state, int i, const double *grad)
{
    fa_state *st = state;
    alg_sgd_apply(ctx, i, alg_params(ctx, i), grad, 1.0);
    if (--st->steps_left > 0) {
        alg_start_step(ctx, i);
        return;
    }
    st->active = 0;
    fa_shared *sh = alg_ps_extra(ctx->shared);
    cl_buf *x = alg_snapshot(ctx, i);
    alg_send(ctx, i, ctx->server, ALG_PS_TAG_GRAD, sh->round, x,
            alg_param_bytes(ctx, ctx->P));
    alg_buf_put(ctx, x);
}

static void server_receive(alg_ctx *ctx, const cl_msg *m)
{
    alg_ps *ps = ctx->shared;
    fa_shared *sh = alg_ps_extra(ps);
    double w = (double)alg_local_samples(ctx, m->from);
    cblas_daxpy((int)ctx->P, w, m->payload->data, 1, ps->sum, 1);
    sh->weight += w;
    if (++sh->received < sh->m)
        return;
    double *x = alg_params(ctx, ctx->server);
    memcpy(x, ps->sum, ctx->P * sizeof(double));
    cblas_dscal((int)ctx->P, 1.0 / sh->weight, x, 1);
    memset(ps->sum, 0, ctx->P * sizeof(double));
    ps->version++;
    ps->applied += (uint64_t)sh->m;
    sh->round++;
    start_round(ctx);
}

static void fa_on_message(alg_ctx *ctx, void *state, int i, const cl_msg *m)
{
    fa_state *st = state;
    if (i == ctx->server) {
        server_receive(ctx, m);
        return;
    }
    alg_ps_install(ctx, i, m);
    size_t per_epoch = alg_local_samples(ctx, i) / alg_batch(ctx);
    st->steps_left = (long)ctx->param[P_LOCAL_EPOCHS] * (long)(per_epoch ? per_epoch : 1);
    st->active = 1;
    alg_start_step(ctx, i);
}

static void fa_describe_wait(const alg_ctx *ctx, const void *state, int i, char *buf,
                             size_t size)
{
    const fa_state *st = state;
    if (i == ctx->server) {
        const fa_shared *sh = alg_ps_extra(ctx->shared);
        snprintf(buf, size, "%d of %d client models of round %llu", sh->m - sh->received, sh->m,
                 (unsigned long long)sh->round);
    } else {
        snprintf(buf, size, "%s", st->active ? "its step" : "");
    }
}

const alg_type alg_fedavg = {
    .name = "fedavg",
    .state_size = sizeof(fa_state),
    .servers = 1,
    .params = params,
    .eval_params = alg_ps_eval_params,
    .shared_init = fa_shared_init,
    .shared_fini = fa_shared_fini,
    .on_start = fa_on_start,
    .on_step_done = fa_on_step_done,
    .on_message = fa_on_message,
    .describe_wait = fa_describe_wait,
    .fini = NULL,
};
