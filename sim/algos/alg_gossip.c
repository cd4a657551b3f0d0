/* alg_gossip.c -- gossip learning (Ormandi, Hegedus, Jelasity, "Gossip
 * Learning with Linear Models on Fully Distributed Data", Concurrency and
 * Computation 2013): models perform random walks over the network and are
 * merged and updated where they land.
 *
 * Sending.  With `send` "timer" (the default, the paper's GoLF skeleton:
 * loop { wait(delta); send the current model to a random peer }) a node
 * sends a snapshot of its model every `period_s` seconds of simulated
 * time, the first at period_s, whatever its compute speed, so a node sends
 * floor(T / period_s) models by time T -- unless its previous model has
 * not left its uplink at a tick: that tick sends nothing (coalescing to
 * the latest model; period_s below the transfer time sends one model per
 * ceil(transfer / period_s) ticks, and never queues more than one).  With `send` "steps" (dtsim's
 * earlier behaviour, kept as an option) it sends after every `send_every`
 * steps, so a slow node sends proportionally fewer.  The peer is a
 * neighbour drawn uniformly from the node's own seeded stream (use the
 * complete topology for the paper's uniform peer sampling).
 *
 * Failures.  The peer is drawn among the neighbours the failure detector
 * has not declared failed (alg_is_failed), as the paper's peer sampling
 * service (Newscast) hands out live peers; with every neighbour declared
 * failed the node keeps training and sends nothing that tick.  A node
 * that comes back takes part again at once; nobody waits for anybody, so
 * a failure costs only the models lost with it.
 *
 * Computing and merging.  Every node computes SGD steps back to back, each
 * on its parameters as they are when the step starts, applying the
 * gradient when the step ends (dtsim's mapping of the paper's "update on
 * the local example": the paper updates once per received model).  A
 * received model is merged at once, x <- (x + x_received) / 2 (the
 * merge-then-update "MU" scheme: the next gradient is taken on the merged
 * model).  Nobody waits, so the protocol cannot stall.  A node that goes
 * down loses its timer; it re-arms it at its first step end after it is
 * back.  Simplified: merging is a plain average (the paper's age-weighted
 * variants are not modelled).
 */
#include "alg.h"

#include <stdio.h>
#include <gsl/gsl_cblas.h>

enum { P_SEND_EVERY, P_SEND, P_PERIOD };
enum { SEND_TIMER, SEND_STEPS };
enum { TAG_MODEL = 1, TAG_TICK = 1 };

static const char *const send_names[] = { "timer", "steps", NULL };

static const alg_param_spec params[] = {
    { "send_every", ALG_PARAM_INT, 1, 1, 1e9, NULL, "with send steps: steps between two sends" },
    { "send", ALG_PARAM_CHOICE, SEND_TIMER, 0, 0, send_names,
      "timer: send every period_s; steps: after every send_every steps" },
    { "period_s", ALG_PARAM_REAL, 0.01, 1e-9, 1e9, NULL,
      "seconds between two sends with send timer" },
    { NULL, 0, 0, 0, 0, NULL, NULL },
};

typedef struct gl_state {
    uint64_t steps, sent, merged;
    uint64_t coalesced;   /* ticks skipped: the previous model still queued */
    double   tick_base;   /* send "timer": ticks at tick_base + k * period_s */
    uint64_t tick_k;
    double   next_tick;   /* when the timer is due */
} gl_state;

static int gl_check(const alg_ctx *ctx, char *err, size_t size)
{
    if (ctx->n < 2) {
        snprintf(err, size, "gossip needs at least 2 nodes, got %d", ctx->n);
        return -1;
    }
    return 0;
}

/* With send "timer", every node ticks every period_s whatever its steps. */
static double gl_timer_rate(const alg_ctx *ctx)
{
    return (int)ctx->param[P_SEND] == SEND_TIMER ? ctx->n / ctx->param[P_PERIOD] : 0;
}

/* The next tick at base + k * period (not a running sum of periods, whose
 * rounding would drift: the k-th send falls at k * period_s exactly). */
static void arm(alg_ctx *ctx, gl_state *st, int i)
{
    st->next_tick = st->tick_base + (double)++st->tick_k * ctx->param[P_PERIOD];
    double delay = st->next_tick - alg_now(ctx);
    alg_set_timer(ctx, i, delay > 0 ? delay : 0, TAG_TICK);
}

/* Ticks restart from now (at start, and after a failure killed the timer). */
static void rearm(alg_ctx *ctx, gl_state *st, int i)
{
    st->tick_base = alg_now(ctx);
    st->tick_k = 0;
    arm(ctx, st, i);
}

/* A neighbour drawn uniformly among those not declared failed (the k-th
 * live one for a uniform k < live, which is the plain uniform draw when
 * none has failed), or -1, without a draw, when every neighbour has. */
static int live_peer(alg_ctx *ctx, int i)
{
    const topo_graph *g = ctx->g;
    size_t live = 0;
    for (size_t e = g->off[i]; e < g->off[i + 1]; e++)
        live += !alg_is_failed(ctx, g->nbr[e]);
    if (live == 0)
        return -1;
    size_t k = gsl_rng_uniform_int(alg_rng(ctx, i), live);
    for (size_t e = g->off[i];; e++)
        if (!alg_is_failed(ctx, g->nbr[e]) && k-- == 0)
            return g->nbr[e];
}

static void send_model(alg_ctx *ctx, gl_state *st, int i)
{
    int j = live_peer(ctx, i);
    if (j < 0)
        return;
    cl_buf *x = alg_snapshot(ctx, i);
    alg_send(ctx, i, j, TAG_MODEL, st->sent++, x, alg_param_bytes(ctx, ctx->P));
    alg_buf_put(ctx, x);
}

static void gl_on_start(alg_ctx *ctx, void *state, int i)
{
    if ((int)ctx->param[P_SEND] == SEND_TIMER)
        rearm(ctx, state, i);
    alg_start_step(ctx, i);
}

/* A tick while the previous model has not left the uplink sends nothing:
 * the model sent at the next free tick is the latest (coalescing, as
 * GoLF implementations keep one outgoing model), so the queue holds at
 * most one model per node however short period_s is. */
static void gl_on_timer(alg_ctx *ctx, void *state, int i, uint32_t tag)
{
    (void)tag;
    gl_state *st = state;
    if (alg_uplink_queued(ctx, i) == 0)
        send_model(ctx, st, i);
    else
        st->coalesced++;
    arm(ctx, st, i);
}

static void gl_on_step_done(alg_ctx *ctx, void *state, int i, const double *grad)
{
    gl_state *st = state;
    alg_sgd_apply(ctx, i, alg_params(ctx, i), grad, 1.0);
    ++st->steps;
    if ((int)ctx->param[P_SEND] == SEND_STEPS) {
        if (st->steps % (uint64_t)ctx->param[P_SEND_EVERY] == 0)
            send_model(ctx, st, i);
    } else if (alg_now(ctx) > st->next_tick) {   /* the timer died with a failure */
        rearm(ctx, st, i);
    }
    alg_start_step(ctx, i);
}

static void gl_on_message(alg_ctx *ctx, void *state, int i, const cl_msg *m)
{
    gl_state *st = state;
    double *x = alg_params(ctx, i);
    cblas_daxpy((int)ctx->P, 1.0, m->payload->data, 1, x, 1);
    cblas_dscal((int)ctx->P, 0.5, x, 1);
    st->merged++;
}

/* Models sent per node (least and most), merged in all, and ticks that
 * sent nothing because the previous model was still queued. */
static int gl_stats(const alg_ctx *ctx, const char **keys, double *values, int max)
{
    double smin = 0, smax = 0, merged = 0, coalesced = 0;
    for (int i = 0; i < ctx->n; i++) {
        const gl_state *st = alg_state(ctx, i);
        double s = (double)st->sent;
        if (i == 0 || s < smin)
            smin = s;
        if (i == 0 || s > smax)
            smax = s;
        merged += (double)st->merged;
        coalesced += (double)st->coalesced;
    }
    const char *k[] = { "sent_min", "sent_max", "merged", "coalesced" };
    double v[] = { smin, smax, merged, coalesced };
    int m = max < 4 ? max : 4;
    for (int j = 0; j < m; j++) {
        keys[j] = k[j];
        values[j] = v[j];
    }
    return m;
}

const alg_type alg_gossip = {
    .name = "gossip",
    .summary = "asynchronous random walks of models, sent on a timer (Ormandi et al. 2013)",
    .state_size = sizeof(gl_state),
    .params = params,
    .check = gl_check,
    .timer_rate = gl_timer_rate,
    .on_start = gl_on_start,
    .on_step_done = gl_on_step_done,
    .on_message = gl_on_message,
    .on_timer = gl_on_timer,
    .stats = gl_stats,
};
