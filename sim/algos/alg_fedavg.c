/* alg_fedavg.c -- Federated Averaging (McMahan, Moore, Ramage, Hampson,
 * Aguera y Arcas, "Communication-Efficient Learning of Deep Networks from
 * Decentralized Data", AISTATS 2017), with the round management of
 * Bonawitz et al., "Towards Federated Learning at Scale: System Design"
 * (SysML 2019): over-selection and a reporting deadline.
 *
 * Timing: round r wants m = max(1, round(fraction * n)) reports.  The
 * server draws k = min(live, ceil(over_selection * m)) clients uniformly
 * without replacement (its own seeded stream) among the clients not
 * declared failed, and sends each the global model through its uplink.  A
 * client installs it, runs local_epochs passes over its data (local_epochs
 * * floor(samples / batch) SGD steps back to back, each gradient applied
 * when its step ends) and sends its model back.  The round closes at the
 * first of: m reports in; every drawn client not declared failed has
 * reported; the deadline (deadline_s after the round began, when > 0).  The
 * server then sets the global model to the average of the reports received,
 * weighted by the clients' sample counts, and starts round r+1; reports that
 * come after their round closed are dropped (gradients_discarded), and a
 * round that closes with no report at all is abandoned (the model is
 * unchanged; rounds_abandoned) and a new one drawn.  Clients not drawn stay
 * idle; a client drawn again while it still computes a closed round's work
 * abandons that work and starts on the new model.  The server evaluates the
 * global model.  With the defaults (over_selection 1, no deadline) and no
 * failure this is McMahan et al.'s FedAvg exactly: k = m and every round
 * waits for its m clients.
 *
 * When a node fails: a drawn client that drops out costs its round its
 * share -- the round closes without it when it is declared failed (or at
 * the deadline, or as soon as m of the over-selected clients reported) --
 * and later rounds do not draw it.  A client declared back is drawable
 * again and gets the model of the round that draws it; a step it was
 * computing for a round still open restarts and its report counts, one for
 * a closed round is dropped.  The server failing: clients finish their local
 * work and their reports are retransmitted until it is back; the server's
 * deadline timer is lost while it is down and re-armed (or the round closed
 * if the deadline passed) when it is declared back.  A server down for good
 * leaves every client idle and the run ends as stalled.
 *
 * Progressive freezing (the freeze section; SmartFreeze is a federated
 * framework): the count is the server's round.  The server fixes round r's
 * stage as it draws the round (alg_freeze_round on itself) and a client
 * trains the round's local steps at the stage of the round it got.  The
 * server sends a client the model from the prefix it knows the client
 * holds bit for bit (held[c], the stage of the last round the client
 * reported for: a client not heard from yet, or back from a failure, gets
 * the whole model, one that reported at the current stage only the
 * trainable suffix); the
 * report carries the trainable suffix of its round, and the average is
 * taken over the suffix of the round's stage (reports of the round only).
 * Frozen layers are the server's, constant, bit for bit on every client.
 * SmartFreeze's participant selector, its memory part: the server draws
 * only clients whose device holds the round's stage (alg_memory_fits:
 * compute.memory_bytes against the memory model), so a client too small
 * for full training joins the rounds from the stage it fits on.  With
 * freeze.mode "grow" (SmartFreeze's progressive training: block and head,
 * models/mdl_freeze.h) the same with the stage's window [prefix, end)
 * in place of the suffix: a client gets the model from held[c] to the
 * stage's end (the heads of blocks frozen since it last held the model
 * are in the buffer but not in the message's bytes), reports the window,
 * and the server averages the window; what lies above is not built.
 */
#include "alg_ps.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <gsl/gsl_cblas.h>
#include <gsl/gsl_randist.h>

enum { P_FRACTION, P_LOCAL_EPOCHS, P_OVER_SELECTION, P_DEADLINE_S };

static const alg_param_spec params[] = {
    { "fraction", ALG_PARAM_REAL, 0.1, 1e-9, 1, NULL,
      "clients reporting per round, as a fraction of the nodes" },
    { "local_epochs", ALG_PARAM_INT, 1, 1, 1e9, NULL, "epochs of local data per round" },
    { "over_selection", ALG_PARAM_REAL, 1, 1, 1e9, NULL,
      "clients drawn per round = ceil(over_selection x reports)" },
    { "deadline_s", ALG_PARAM_REAL, 0, 0, 1e300, NULL,
      "seconds a round waits for reports after it starts; 0: no deadline" },   /* 0: none */
    { NULL, 0, 0, 0, 0, NULL, NULL },
};

typedef struct fa_shared {
    int   *cand, *pick;
    char  *open;          /* per client: drawn this round, not yet reported */
    int    m, k, received;
    int    k_max;
    double weight;        /* samples of the models summed so far */
    double started_s;     /* when the round began */
    size_t *held;         /* per client: the frozen prefix it holds bit for bit */
    uint64_t round, abandoned;
} fa_shared;

typedef struct fa_state {
    long     steps_left;  /* client: local steps still to take this round */
    uint64_t round;       /* the round its work is for */
    int      active;
} fa_state;

static fa_shared *fa(const alg_ctx *ctx) { return alg_ps_extra(ctx->shared); }

static int fa_shared_init(alg_ctx *ctx)
{
    if (alg_ps_shared_init(ctx, sizeof(fa_shared)) != 0)
        return -1;
    fa_shared *sh = fa(ctx);
    sh->m = (int)lround(ctx->param[P_FRACTION] * ctx->n);
    if (sh->m < 1)
        sh->m = 1;
    double k = ceil(ctx->param[P_OVER_SELECTION] * sh->m - 1e-9);
    sh->k_max = k < ctx->n ? (int)k : ctx->n;
    sh->cand = malloc((size_t)ctx->n * sizeof(int));
    sh->pick = malloc((size_t)sh->k_max * sizeof(int));
    sh->open = calloc((size_t)ctx->n, 1);
    sh->held = calloc((size_t)ctx->n, sizeof *sh->held);
    if (!sh->cand || !sh->pick || !sh->open || !sh->held)
        return -1;
    return 0;
}

static void fa_shared_fini(alg_ctx *ctx)
{
    if (ctx->shared) {
        fa_shared *sh = fa(ctx);
        free(sh->cand);
        free(sh->pick);
        free(sh->open);
        free(sh->held);
    }
    alg_ps_shared_fini(ctx);
}

static void arm_deadline(alg_ctx *ctx, double delay_s)
{
    fa_shared *sh = fa(ctx);
    alg_set_timer(ctx, ctx->server, delay_s,
                  ALG_PS_TIMER_OWN | (uint32_t)(sh->round & 0x7fffffffu));
}

/* Freezing: round r's stage on the server, and each drawn client the
 * model from the prefix it holds on (a suffix buffer of P - held). */
static void send_stage(alg_ctx *ctx)
{
    fa_shared *sh = fa(ctx);
    const size_t lo = alg_freeze_round(ctx, ctx->server, sh->round);
    const size_t hi = alg_trainable_end(ctx, ctx->server);   /* "grow": the stage's end */
    const double *x = alg_params_const(ctx, ctx->server);
    for (int j = 0; j < sh->k; j++) {
        const int c = sh->pick[j];
        const size_t off = sh->held[c];
        cl_buf *b = alg_buf_get_len(ctx, hi - off);
        memcpy(b->data, x + off, (hi - off) * sizeof(double));
        sh->open[c] = 1;
        /* the heads of the blocks frozen since are in the buffer, not on the wire */
        alg_send(ctx, ctx->server, c, ALG_PS_TAG_MODEL, sh->round, b,
                 alg_param_bytes(ctx, hi - off - alg_freeze_heads_in(ctx, off, lo)));
        alg_buf_put(ctx, b);
    }
}

/* Draws the round's clients among those not declared failed; none live:
 * no round until one is back (k = 0). */
static void start_round(alg_ctx *ctx)
{
    fa_shared *sh = fa(ctx);
    int live = 0;
    alg_freeze_round(ctx, ctx->server, sh->round);   /* the criterion decides it before the draw */
    for (int i = 0; i < ctx->n; i++)   /* freezing: only devices that hold the round's stage */
        if (!alg_is_failed(ctx, i) && alg_memory_fits(ctx, i, sh->round))
            sh->cand[live++] = i;
    sh->k = live < sh->k_max ? live : sh->k_max;
    sh->received = 0;
    sh->weight = 0;
    sh->started_s = alg_now(ctx);
    if (sh->k == 0)
        return;
    gsl_ran_choose(alg_rng(ctx, ctx->server), sh->pick, (size_t)sh->k, sh->cand, (size_t)live,
                   sizeof(int));
    if (alg_freezing(ctx)) {
        send_stage(ctx);
    } else {
        cl_buf *x = alg_snapshot(ctx, ctx->server);
        for (int j = 0; j < sh->k; j++) {
            sh->open[sh->pick[j]] = 1;
            alg_send(ctx, ctx->server, sh->pick[j], ALG_PS_TAG_MODEL, sh->round, x,
                    alg_param_bytes(ctx, ctx->P));
        }
        alg_buf_put(ctx, x);
    }
    if (ctx->param[P_DEADLINE_S] > 0)
        arm_deadline(ctx, ctx->param[P_DEADLINE_S]);
}

/* Server: averages what came in (or abandons an empty round) and draws the
 * next round. */
static void close_round(alg_ctx *ctx)
{
    alg_ps *ps = ctx->shared;
    fa_shared *sh = fa(ctx);
    if (sh->received > 0) {
        const size_t off = alg_frozen_params(ctx, ctx->server);   /* the round's stage */
        const size_t hi = alg_trainable_end(ctx, ctx->server);
        double *x = alg_params(ctx, ctx->server) + off;
        memcpy(x, ps->sum + off, (hi - off) * sizeof(double));
        cblas_dscal((int)(hi - off), 1.0 / sh->weight, x, 1);
        memset(ps->sum, 0, ctx->P * sizeof(double));
        ps->version++;
        ps->applied += (uint64_t)sh->received;
    } else {
        sh->abandoned++;
    }
    for (int j = 0; j < sh->k; j++)
        sh->open[sh->pick[j]] = 0;
    sh->round++;
    start_round(ctx);
}

/* Whether the round is over without its deadline: m reports in, or no
 * drawn client not declared failed still owes one. */
static int round_done(const alg_ctx *ctx)
{
    const fa_shared *sh = fa(ctx);
    if (sh->received >= sh->m)
        return 1;
    for (int j = 0; j < sh->k; j++)
        if (sh->open[sh->pick[j]] && !alg_is_failed(ctx, sh->pick[j]))
            return 0;
    return 1;
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
    const size_t off = alg_frozen_params(ctx, i);   /* its round's stage */
    const size_t hi = alg_trainable_end(ctx, i);
    cl_buf *x = off || hi < ctx->P ? alg_buf_get_len(ctx, hi - off) : alg_buf_get(ctx);
    memcpy(x->data, alg_params_const(ctx, i) + off, (hi - off) * sizeof(double));
    alg_send(ctx, i, ctx->server, ALG_PS_TAG_GRAD, st->round, x,
            alg_param_bytes(ctx, hi - off));
    alg_buf_put(ctx, x);
}

static void server_receive(alg_ctx *ctx, const cl_msg *m)
{
    alg_ps *ps = ctx->shared;
    fa_shared *sh = fa(ctx);
    /* a report proves the client installed its round's model: it holds
     * that round's frozen prefix from now on */
    const size_t got = alg_freeze_prefix_at(ctx, m->round);
    if (got > sh->held[m->from])
        sh->held[m->from] = got;
    if (m->round != sh->round || !sh->open[m->from]) {   /* its round has closed */
        ps->discarded++;
        return;
    }
    sh->open[m->from] = 0;
    double w = (double)alg_local_samples(ctx, m->from);
    const size_t len = alg_freeze_end_at(ctx, m->round) - got;   /* the round's window */
    cblas_daxpy((int)len, w, m->payload->data, 1, ps->sum + got, 1);
    sh->weight += w;
    sh->received++;
    if (round_done(ctx))
        close_round(ctx);
}

static void fa_on_message(alg_ctx *ctx, void *state, int i, const cl_msg *m)
{
    fa_state *st = state;
    if (i == ctx->server) {
        server_receive(ctx, m);
        return;
    }
    alg_abort_step(ctx, i);   /* drawn again while working for a closed round */
    /* the model up to the round's stage's end (P but with "grow") */
    alg_ps_install_to(ctx, i, m, alg_freeze_end_at(ctx, m->round));
    alg_freeze_round(ctx, i, m->round);   /* the round's stage (nothing without freezing) */
    size_t per_epoch = alg_local_samples(ctx, i) / alg_batch(ctx);
    st->steps_left = (long)ctx->param[P_LOCAL_EPOCHS] * (long)(per_epoch ? per_epoch : 1);
    st->round = m->round;
    st->active = 1;
    alg_start_step(ctx, i);
}

/* A client back up may hold other parameters (faults.rejoin "neighbour"):
 * the server sends it the whole model next (freezing; nothing else). */
static void fa_on_return(alg_ctx *ctx, void *state, int i)
{
    (void)state;
    if (i < ctx->n)
        fa(ctx)->held[i] = 0;
}

static void fa_on_failure(alg_ctx *ctx, int peer, int failed)
{
    alg_ps_notify_server(ctx, peer, failed);
}

static void fa_on_timer(alg_ctx *ctx, void *state, int node, uint32_t tag)
{
    (void)state;
    (void)node;
    fa_shared *sh = fa(ctx);
    int peer, failed;
    if (!alg_ps_notice(tag, &peer, &failed)) {   /* a deadline */
        if ((tag & 0x7fffffffu) == (uint32_t)(sh->round & 0x7fffffffu) && sh->k > 0)
            close_round(ctx);
        return;
    }
    if (sh->k == 0) {   /* no round while nobody was live */
        if (!failed && !alg_is_failed(ctx, peer))
            start_round(ctx);
        return;
    }
    if (peer == ctx->server && !failed && ctx->param[P_DEADLINE_S] > 0) {
        /* back: its deadline timer died with it */
        double left = sh->started_s + ctx->param[P_DEADLINE_S] - alg_now(ctx);
        if (left <= 0) {
            close_round(ctx);
            return;
        }
        arm_deadline(ctx, left);
    }
    if (round_done(ctx))
        close_round(ctx);
}

static void fa_describe_wait(const alg_ctx *ctx, const void *state, int i, char *buf,
                             size_t size)
{
    const fa_state *st = state;
    if (i == ctx->server) {
        const fa_shared *sh = fa(ctx);
        snprintf(buf, size, "%d of %d client models of round %llu", sh->m - sh->received, sh->m,
                 (unsigned long long)sh->round);
    } else {
        snprintf(buf, size, "%s", st->active ? "its step" : "");
    }
}

static int fa_stats(const alg_ctx *ctx, const char **keys, double *values, int max)
{
    int k = alg_ps_stats(ctx, keys, values, max);
    if (k == 0 || k + 2 > max)
        return k;
    const fa_shared *sh = alg_ps_extra(ctx->shared);
    keys[k] = "rounds";
    values[k++] = (double)sh->round;
    keys[k] = "rounds_abandoned";
    values[k++] = (double)sh->abandoned;
    return k;
}

const alg_type alg_fedavg = {
    .name = "fedavg",
    .needs = ALG_CAN_FREEZE | ALG_FITS_MEMORY | ALG_CAN_GROW,
    .summary = "federated rounds over sampled clients (McMahan et al. 2017)",
    .state_size = sizeof(fa_state),
    .servers = 1,
    .params = params,
    .eval_params = alg_ps_eval_params,
    .shared_init = fa_shared_init,
    .shared_fini = fa_shared_fini,
    .on_start = fa_on_start,
    .on_step_done = fa_on_step_done,
    .on_message = fa_on_message,
    .on_timer = fa_on_timer,
    .on_failure = fa_on_failure,
    .on_return = fa_on_return,
    .describe_wait = fa_describe_wait,
    .stats = fa_stats,
};
