/* alg_easgd.c -- asynchronous EASGD, elastic averaging SGD (Zhang,
 * Choromanska, LeCun, "Deep learning with Elastic Averaging SGD", NeurIPS
 * 2015, Algorithm 1): every worker runs SGD on its own model x_i, and
 * every `period` (tau) steps an elastic force of moving rate alpha pulls
 * x_i and the center variable x~, held by one server, toward each other:
 *   x_i <- x_i - alpha (x_i - x~),   x~ <- x~ + alpha (x_i - x~).
 * alpha = beta / n with the paper's beta = 0.9 by default (the paper's
 * choice alpha = beta / p keeps the center's total pull at beta).
 *
 * Timing.  A worker's step t (counted from 0) starts on x_i; when tau
 * divides t it first sends a snapshot of x_i to the server (P parameters)
 * and starts the step at once on that x_i (the gradient is taken at the
 * x of Algorithm 1's "x <- x_i"), so the exchange overlaps the step.  The
 * server, on receipt, computes d = alpha (x_i - x~) with its x~ as it is
 * then, sets x~ <- x~ + d and replies d (P parameters); the worker, on
 * receipt, sets x_i <- x_i - d, whenever in its step that is.  Its step
 * ends with x_i <- x_i - lr g.  A worker keeps one exchange outstanding:
 * one due before the previous reply came waits for it (the worker idles).
 * Making the exchange atomic at the server (the difference is taken with
 * the x~ the update is applied to) is dtsim's choice where the paper's
 * algorithm reads x~ and writes it back as two steps.  With lr 0 the sum
 * of every model and the center is kept exactly by each exchange, and an
 * exchange multiplies x_i - x~ by 1 - 2 alpha (tested).
 *
 * Failures.  Nobody waits for a worker: the server answers whoever asks.
 * A worker whose exchange is cut (it went down, or the server was
 * declared failed) abandons it when it is back or when the server is
 * declared back (a reply that still comes is ignored by its number), so
 * a lost message never stalls it; the server may then have applied d to
 * x~ while x_i did not move (the sum moves by d, as no real system
 * undoes).  A failed server is waited for by the workers at their next
 * exchange (a reported stall if it never comes back), as the other
 * parameter-server protocols do.  The metrics evaluate the center x~.
 */
#include "alg.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <gsl/gsl_cblas.h>

enum { P_PERIOD, P_BETA };
enum { TAG_X = 1, TAG_DIFF = 2 };

static const alg_param_spec params[] = {
    { "period", ALG_PARAM_INT, 4, 1, 1e9, NULL,
      "tau: steps between two elastic exchanges of a worker" },
    { "beta", ALG_PARAM_REAL, 0.9, 1e-9, 1, NULL,
      "beta: the moving rate is alpha = beta / nodes (the paper's 0.9)" },
    { NULL, 0, 0, 0, 0, NULL, NULL },
};

typedef struct ea_state {
    uint64_t steps;      /* steps done (t) */
    uint64_t n_ex;       /* exchanges begun: the next one's number */
    int      waiting;    /* an exchange is outstanding */
    int      blocked;    /* a step is due and waits for the reply */
    uint64_t done, abandoned, waits;
} ea_state;

static double alpha_of(const alg_ctx *ctx) { return ctx->param[P_BETA] / ctx->n; }

/* Sends x_i to the server and starts the step on it. */
static void exchange_and_step(alg_ctx *ctx, ea_state *st, int i)
{
    cl_buf *x = alg_snapshot(ctx, i);
    alg_send(ctx, i, ctx->server, TAG_X, st->n_ex, x, alg_param_bytes(ctx, ctx->P));
    alg_buf_put(ctx, x);
    st->waiting = 1;
    alg_start_step(ctx, i);
}

/* Step t begins: with an exchange when tau divides t. */
static void next_step(alg_ctx *ctx, ea_state *st, int i)
{
    if (st->steps % (uint64_t)ctx->param[P_PERIOD] != 0) {
        alg_start_step(ctx, i);
        return;
    }
    if (st->waiting) {   /* the previous exchange's reply first */
        st->blocked = 1;
        st->waits++;
        return;
    }
    exchange_and_step(ctx, st, i);
}

/* The outstanding exchange is over (its reply applied, or abandoned). */
static void exchange_over(alg_ctx *ctx, ea_state *st, int i)
{
    st->waiting = 0;
    st->n_ex++;
    if (st->blocked) {
        st->blocked = 0;
        exchange_and_step(ctx, st, i);
    }
}

static void ea_on_start(alg_ctx *ctx, void *state, int i)
{
    if (i == ctx->server)
        return;
    next_step(ctx, state, i);
}

static void ea_on_step_done(alg_ctx *ctx, void *state, int i, const double *grad)
{
    ea_state *st = state;
    alg_sgd_apply(ctx, i, alg_params(ctx, i), grad, 1.0);
    st->steps++;
    next_step(ctx, st, i);
}

static void ea_on_message(alg_ctx *ctx, void *state, int i, const cl_msg *m)
{
    int P = (int)ctx->P;
    if (i == ctx->server) {   /* d = alpha (x_i - x~); x~ += d; reply d */
        double *c = alg_params(ctx, i);
        cl_buf *d = alg_buf_get(ctx);
        double a = alpha_of(ctx);
        for (int k = 0; k < P; k++) {
            d->data[k] = a * (m->payload->data[k] - c[k]);
            c[k] += d->data[k];
        }
        alg_send(ctx, i, m->from, TAG_DIFF, m->round, d, alg_param_bytes(ctx, ctx->P));
        alg_buf_put(ctx, d);
        return;
    }
    ea_state *st = state;
    if (!st->waiting || m->round != st->n_ex)
        return;   /* the reply of an abandoned exchange */
    cblas_daxpy(P, -1.0, m->payload->data, 1, alg_params(ctx, i), 1);
    st->done++;
    exchange_over(ctx, st, i);
}

static void abandon(alg_ctx *ctx, ea_state *st, int i)
{
    if (!st->waiting)
        return;
    st->abandoned++;
    exchange_over(ctx, st, i);
}

/* The server declared back: the exchanges it may have lost are given up. */
static void ea_on_failure(alg_ctx *ctx, int peer, int failed)
{
    if (peer != ctx->server || failed)
        return;
    for (int i = 0; i < ctx->n; i++)
        if (!alg_is_failed(ctx, i))
            abandon(ctx, alg_state(ctx, i), i);
}

/* A worker back up: the reply to its exchange may have been lost. */
static void ea_on_return(alg_ctx *ctx, void *state, int i)
{
    if (i != ctx->server)
        abandon(ctx, state, i);
}

static const double *ea_eval_params(const alg_ctx *ctx)
{
    return alg_params_const(ctx, ctx->server);
}

static void ea_describe_wait(const alg_ctx *ctx, const void *state, int i, char *buf,
                             size_t size)
{
    const ea_state *st = state;
    if (i == ctx->server)
        buf[0] = '\0';
    else if (st->blocked)
        snprintf(buf, size, "the reply of exchange %llu from the server %d",
                 (unsigned long long)st->n_ex, ctx->server);
    else if (alg_is_computing(ctx, i))
        snprintf(buf, size, "its step");
    else
        buf[0] = '\0';
}

static int ea_stats(const alg_ctx *ctx, const char **keys, double *values, int max)
{
    double done = 0, ab = 0, waits = 0;
    for (int i = 0; i < ctx->n; i++) {
        const ea_state *st = alg_state(ctx, i);
        done += (double)st->done;
        ab += (double)st->abandoned;
        waits += (double)st->waits;
    }
    const char *k[] = { "exchanges", "exchanges_abandoned", "waits", "alpha" };
    double v[] = { done, ab, waits, alpha_of(ctx) };
    return alg_stats_copy(k, v, (int)(sizeof k / sizeof k[0]), keys, values, max);
}

const alg_type alg_easgd = {
    .name = "easgd",
    .summary = "asynchronous elastic averaging with a center variable on a server "
               "(Zhang, Choromanska, LeCun 2015)",
    .state_size = sizeof(ea_state),
    .servers = 1,
    .eval_params = ea_eval_params,
    .params = params,
    .on_start = ea_on_start,
    .on_step_done = ea_on_step_done,
    .on_message = ea_on_message,
    .on_failure = ea_on_failure,
    .on_return = ea_on_return,
    .describe_wait = ea_describe_wait,
    .stats = ea_stats,
};
