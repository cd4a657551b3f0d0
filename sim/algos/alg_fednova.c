/* alg_fednova.c -- federated rounds with heterogeneous local work and
 * normalized averaging: FedNova (Wang, Liu, Liang, Joshi, Poor, "Tackling
 * the Objective Inconsistency Problem in Heterogeneous Federated
 * Optimization", NeurIPS 2020; reference code github.com/JYWa/FedNova,
 * distoptim/FedNova.py), against plain weighted averaging, with three ways
 * to choose a client's local steps: a time budget per round, local epochs,
 * a fixed count, or the adaptive count of AdaComm (Wang & Joshi, "Adaptive
 * Communication Strategies to Achieve the Best Error-Runtime Trade-off in
 * Local-Update SGD", MLSys 2019).  It is a protocol of its own, not an
 * option of fedavg: fedavg's job is client sampling and round deadlines
 * (Bonawitz et al.), this file's is how much local work a client does and
 * how the server weighs unequal work; with "plain" and "epochs" it runs
 * fedavg's rounds with fraction 1, bit for bit (tested).
 *
 * Timing: round r goes to every client not declared failed.  The server
 * sends each the global model x_r (its uplink serialises them); a client
 * installs it and takes local SGD steps back to back, each gradient applied
 * when its step ends, until it has done its round's work:
 *   time      a step is started only if it is predicted to end within
 *             round_time_s of the model's arrival, the prediction being
 *             the duration of the step just taken (so fast nodes take more
 *             steps, and stragglers, noise, slowdowns and failures decide
 *             the count as the steps happen); at least one step;
 *   epochs    local_epochs * floor(samples / batch) steps (FedAvg's);
 *   fixed     tau steps;
 *   adaptive  tau_r steps, tau_0 = tau and, from the second round with a
 *             loss estimate on, tau_{r+1} = ceil(sqrt(F_r / F_0) tau_0),
 *             F_r the sample-weighted mean of the clients' first minibatch
 *             losses of round r (all taken on x_r): AdaComm's rule, one
 *             round late because the loss of x_r is known only when round
 *             r's reports are in.
 * It then sends its model x_i and its step count tau_i (message tag) with
 * the first step's loss (the payload's spare slot).  The round closes when
 * every client asked and not declared failed has reported.  With weights
 * p_i = n_i / sum n_j (sample counts over the reports received):
 *   plain     x_{r+1} = sum p_i x_i
 *   fednova   x_{r+1} = x_r - tau_eff sum p_i (x_r - x_i) / a_i,
 *             tau_eff = sum p_i a_i, a_i = tau_i for SGD, and with
 *             heavy-ball momentum rho (the client's buffer zeroed when a
 *             round's model arrives, as the reference does)
 *             a_i = (tau_i - rho (1 - rho^tau_i) / (1 - rho)) / (1 - rho).
 * The server evaluates the global model.
 *
 * When a node fails: a client that goes down mid-round is not waited for
 * once it is declared failed (the round closes on the reports of the
 * others, their weights renormalized), and later rounds do not ask it.  A
 * client declared back is asked from the next round on; a step it was
 * computing for a round still open restarts and its report counts, one for
 * a closed round is dropped (gradients_discarded).  The server failing:
 * clients finish and their reports are retransmitted until it is back; a
 * server down for good leaves the clients idle and the run ends as
 * stalled.  Not covered: Nesterov momentum (refused with "fednova";
 * the reference normalizes it as heavy ball), FedProx's mu, server
 * momentum.
 */
#include "alg_ps.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <gsl/gsl_cblas.h>

enum { P_AGGREGATION, P_LOCAL_STEPS, P_TAU, P_ROUND_TIME_S, P_LOCAL_EPOCHS };
enum { AGG_FEDNOVA, AGG_PLAIN };
enum { LS_TIME, LS_EPOCHS, LS_FIXED, LS_ADAPTIVE };

#define TAU_DEFAULT 10
#define ROUND_TIME_DEFAULT 1.0
#define TAU_MAX 1e9   /* a step count travels in a 32-bit message tag */
/* Control words beside the model (server -> client, tag tau or 0) and
 * the report (client -> server, tag tau_i >= 1). */
#define TAG_HELLO 0            /* client -> server: back and idle */
#define TAG_POLL  0xffffffffu  /* server -> client: back, still waiting for you */
#define ROUND_NONE UINT64_MAX  /* a hello's round: no report of the current round */

static const char *const agg_names[] = { "fednova", "plain", NULL };
static const char *const steps_names[] = { "time", "epochs", "fixed", "adaptive", NULL };

static const alg_param_spec params[] = {
    { "aggregation", ALG_PARAM_CHOICE, AGG_FEDNOVA, 0, 0, agg_names,
      "fednova: normalized averaging of the updates; plain: weighted average of the models" },
    { "local_steps", ALG_PARAM_CHOICE, LS_TIME, 0, 0, steps_names,
      "a client's steps per round: as many as fit round_time_s, local_epochs of its data, "
      "tau, or AdaComm's adaptive tau" },
    { "tau", ALG_PARAM_INT, TAU_DEFAULT, 1, TAU_MAX, NULL,
      "local steps per round (fixed), the first rounds' tau_0 (adaptive)" },
    { "round_time_s", ALG_PARAM_REAL, ROUND_TIME_DEFAULT, 1e-9, 1e9, NULL,
      "seconds of local computing per round (local_steps time)" },
    { "local_epochs", ALG_PARAM_INT, 1, 1, 1e6, NULL,
      "epochs of local data per round (local_steps epochs)" },
    { NULL, 0, 0, 0, 0, NULL, NULL },
};

typedef struct fn_shared {
    double  *diff;        /* P: x_r - x_i of the report being added */
    char    *open;        /* per client: asked this round, not yet reported */
    int      asked, received;
    double   w, wa;       /* sums over the round's reports of n_i and n_i a_i */
    double   wl, wlw;     /* of n_i loss_i and n_i over the finite losses */
    double   f0;          /* adaptive: F_0 (0 until known) */
    double   f_last;      /* adaptive: the latest F_r (NaN until known) */
    long     tau;         /* fixed, adaptive: this round's steps */
    double   steps_sum;   /* over every report accepted */
    long     steps_min, steps_max;
    uint64_t reports, resent;
    uint64_t round, abandoned;
} fn_shared;

typedef struct fn_state {
    long     steps, target;  /* this round's steps so far; 0: the time budget */
    double   began_s;        /* when the round's model arrived */
    double   step_s;         /* when the step in progress started */
    double   loss0;          /* minibatch loss of the round's first step */
    uint64_t round;
    int      active;
    cl_buf  *report;         /* the last report sent (a reference), for a resend */
} fn_state;

static fn_shared *fn(const alg_ctx *ctx) { return alg_ps_extra(ctx->shared); }

static int fn_check(const alg_ctx *ctx, char *err, size_t size)
{
    int mode = (int)ctx->param[P_LOCAL_STEPS];
    if ((int)ctx->param[P_AGGREGATION] == AGG_FEDNOVA && ctx->nesterov) {
        snprintf(err, size, "fednova aggregation \"fednova\" normalizes heavy-ball momentum, "
                 "not Nesterov's (set optimizer nesterov false, or aggregation \"plain\")");
        return -1;
    }
    if (ctx->param[P_ROUND_TIME_S] != ROUND_TIME_DEFAULT && mode != LS_TIME) {
        snprintf(err, size, "fednova round_time_s applies to local_steps \"time\", not \"%s\"",
                 steps_names[mode]);
        return -1;
    }
    if (ctx->param[P_TAU] != TAU_DEFAULT && mode != LS_FIXED && mode != LS_ADAPTIVE) {
        snprintf(err, size, "fednova tau applies to local_steps \"fixed\" or \"adaptive\", "
                 "not \"%s\"", steps_names[mode]);
        return -1;
    }
    if (ctx->param[P_LOCAL_EPOCHS] != 1 && mode != LS_EPOCHS) {
        snprintf(err, size, "fednova local_epochs applies to local_steps \"epochs\", not \"%s\"",
                 steps_names[mode]);
        return -1;
    }
    return 0;
}

static int fn_shared_init(alg_ctx *ctx)
{
    if (alg_ps_shared_init(ctx, sizeof(fn_shared)) != 0)
        return -1;
    fn_shared *sh = fn(ctx);
    sh->tau = (long)ctx->param[P_TAU];
    sh->f_last = NAN;
    sh->diff = malloc((ctx->P ? ctx->P : 1) * sizeof(double));
    sh->open = calloc((size_t)ctx->n, 1);
    return sh->diff && sh->open ? 0 : -1;
}

static void fn_shared_fini(alg_ctx *ctx)
{
    if (ctx->shared) {
        fn_shared *sh = fn(ctx);
        free(sh->diff);
        free(sh->open);
    }
    alg_ps_shared_fini(ctx);
}

/* Sends x_r to every client not declared failed; none live: no round
 * until one is back (asked = 0).  The tag is the round's step count for
 * fixed and adaptive, 0 otherwise (the client decides). */
static void start_round(alg_ctx *ctx)
{
    fn_shared *sh = fn(ctx);
    int mode = (int)ctx->param[P_LOCAL_STEPS];
    uint32_t tag = mode == LS_FIXED || mode == LS_ADAPTIVE ? (uint32_t)sh->tau : 0;
    sh->asked = sh->received = 0;
    sh->w = sh->wa = sh->wl = sh->wlw = 0;
    cl_buf *x = NULL;
    for (int i = 0; i < ctx->n; i++) {
        if (alg_is_failed(ctx, i))
            continue;
        if (!x)
            x = alg_snapshot(ctx, ctx->server);
        sh->open[i] = 1;
        sh->asked++;
        alg_send(ctx, ctx->server, i, tag, sh->round, x, alg_param_bytes(ctx, ctx->P));
    }
    if (x)
        alg_buf_put(ctx, x);
}

/* AdaComm: tau_{r+1} from the loss estimate of x_r. */
static void adapt(alg_ctx *ctx)
{
    fn_shared *sh = fn(ctx);
    if (!(sh->wlw > 0))
        return;
    double f = sh->wl / sh->wlw;
    if (!isfinite(f))
        return;
    sh->f_last = f;
    if (sh->f0 == 0) {
        sh->f0 = f > 0 ? f : -1;   /* -1: a zero loss at the start, nothing to adapt */
        return;
    }
    if (sh->f0 < 0)
        return;
    double t = ceil(sqrt(f / sh->f0) * ctx->param[P_TAU]);
    sh->tau = t < 1 ? 1 : t > TAU_MAX ? (long)TAU_MAX : (long)t;
}

/* Server: aggregates what came in (or abandons an empty round) and starts
 * the next round. */
static void close_round(alg_ctx *ctx)
{
    alg_ps *ps = ctx->shared;
    fn_shared *sh = fn(ctx);
    if (sh->received > 0) {
        double *x = alg_params(ctx, ctx->server);
        if ((int)ctx->param[P_AGGREGATION] == AGG_PLAIN) {
            memcpy(x, ps->sum, ctx->P * sizeof(double));
            cblas_dscal((int)ctx->P, 1.0 / sh->w, x, 1);
        } else {   /* x - tau_eff sum p_i d_i, the sum holding n_i d_i */
            double tau_eff = sh->wa / sh->w;
            cblas_daxpy((int)ctx->P, -tau_eff / sh->w, ps->sum, 1, x, 1);
        }
        memset(ps->sum, 0, ctx->P * sizeof(double));
        ps->version++;
        ps->applied += (uint64_t)sh->received;
        if ((int)ctx->param[P_LOCAL_STEPS] == LS_ADAPTIVE)
            adapt(ctx);
    } else {
        sh->abandoned++;
    }
    memset(sh->open, 0, (size_t)ctx->n);
    sh->round++;
    start_round(ctx);
}

/* Whether no client asked and not declared failed still owes a report. */
static int round_done(const alg_ctx *ctx)
{
    const fn_shared *sh = fn(ctx);
    for (int i = 0; i < ctx->n; i++)
        if (sh->open[i] && !alg_is_failed(ctx, i))
            return 0;
    return 1;
}

static void fn_on_start(alg_ctx *ctx, void *state, int node)
{
    (void)state;
    if (node == ctx->server)
        start_round(ctx);
}

/* Whether client i, whose step just ended now, starts another. */
static int wants_more(const alg_ctx *ctx, const fn_state *st)
{
    if (st->target > 0)
        return st->steps < st->target;
    double now = alg_now(ctx);
    double budget = ctx->param[P_ROUND_TIME_S];
    /* the next step predicted to last as long as the last one; a relative
     * 1e-9 absorbs the rounding of summed step times */
    return (now - st->began_s) + (now - st->step_s) <= budget * (1 + 1e-9);
}

static void send_report(alg_ctx *ctx, const fn_state *st, int i)
{
    alg_send(ctx, i, ctx->server, (uint32_t)st->steps, st->round, st->report,
             alg_param_bytes(ctx, ctx->P));
}

static void send_hello(alg_ctx *ctx, const fn_state *st, int i)
{
    alg_send(ctx, i, ctx->server, TAG_HELLO, st->report ? st->round : ROUND_NONE, NULL, 0);
}

static void fn_on_step_done(alg_ctx *ctx, void *state, int i, const double *grad)
{
    fn_state *st = state;
    if (st->steps == 0)
        st->loss0 = alg_step_loss(ctx, i);
    alg_sgd_apply(ctx, i, alg_params(ctx, i), grad, 1.0);
    st->steps++;
    if (wants_more(ctx, st)) {
        st->step_s = alg_now(ctx);
        alg_start_step(ctx, i);
        return;
    }
    st->active = 0;
    cl_buf *x = alg_snapshot(ctx, i);
    if (!alg_timing_only(ctx))
        x->data[ctx->P] = st->loss0;   /* the spare slot */
    if (st->report)
        alg_buf_put(ctx, st->report);
    st->report = x;   /* the reference taken by alg_snapshot */
    send_report(ctx, st, i);
}

/* A client back from a failure (or answering a poll) while idle: it lost
 * the round's model or its report if either was on the way.  The server
 * answers a client it still waits for with a poll when the client has the
 * round's report, else with the round's model again. */
static void server_hello(alg_ctx *ctx, int i, uint64_t reported)
{
    fn_shared *sh = fn(ctx);
    if (!sh->open[i])
        return;
    if (reported == sh->round) {   /* its report was lost: ask for it again */
        alg_send(ctx, ctx->server, i, TAG_POLL, sh->round, NULL, 0);
        return;
    }
    int mode = (int)ctx->param[P_LOCAL_STEPS];
    uint32_t tag = mode == LS_FIXED || mode == LS_ADAPTIVE ? (uint32_t)sh->tau : 0;
    cl_buf *x = alg_snapshot(ctx, ctx->server);
    alg_send(ctx, ctx->server, i, tag, sh->round, x, alg_param_bytes(ctx, ctx->P));
    alg_buf_put(ctx, x);
    sh->resent++;
}

/* a_i of a client that took tau steps: tau for SGD; with heavy-ball
 * momentum rho, restarted each round, sum_{k=1..tau} (1 - rho^k) / (1 - rho)
 * = (tau - rho (1 - rho^tau) / (1 - rho)) / (1 - rho) (the reference's
 * local_normalizing_vec). */
static double normalizer(const alg_ctx *ctx, double tau)
{
    double rho = ctx->momentum;
    if (rho == 0)
        return tau;
    return (tau - rho * (1 - pow(rho, tau)) / (1 - rho)) / (1 - rho);
}

static void server_receive(alg_ctx *ctx, const cl_msg *m)
{
    alg_ps *ps = ctx->shared;
    fn_shared *sh = fn(ctx);
    if (m->tag == TAG_HELLO) {
        server_hello(ctx, m->from, m->round);
        return;
    }
    if (m->round != sh->round || !sh->open[m->from]) {   /* its round has closed */
        ps->discarded++;
        if (sh->open[m->from])   /* and it missed this round's model */
            server_hello(ctx, m->from, ROUND_NONE);
        return;
    }
    sh->open[m->from] = 0;
    double w = (double)alg_local_samples(ctx, m->from);
    double a = normalizer(ctx, (double)m->tag);   /* tau_i >= 1 */
    if ((int)ctx->param[P_AGGREGATION] == AGG_PLAIN) {
        cblas_daxpy((int)ctx->P, w, m->payload->data, 1, ps->sum, 1);
    } else {
        memcpy(sh->diff, alg_params_const(ctx, ctx->server), ctx->P * sizeof(double));
        cblas_daxpy((int)ctx->P, -1.0, m->payload->data, 1, sh->diff, 1);
        cblas_daxpy((int)ctx->P, w / a, sh->diff, 1, ps->sum, 1);
    }
    sh->w += w;
    sh->wa += w * a;
    if (!alg_timing_only(ctx) && isfinite(m->payload->data[ctx->P])) {
        sh->wl += w * m->payload->data[ctx->P];
        sh->wlw += w;
    }
    long tau = (long)m->tag;
    sh->steps_sum += (double)tau;
    if (sh->reports++ == 0 || tau < sh->steps_min)
        sh->steps_min = tau;
    if (tau > sh->steps_max)
        sh->steps_max = tau;
    sh->received++;
    if (round_done(ctx))
        close_round(ctx);
}

static void fn_on_message(alg_ctx *ctx, void *state, int i, const cl_msg *m)
{
    fn_state *st = state;
    if (i == ctx->server) {
        server_receive(ctx, m);
        return;
    }
    if (m->tag == TAG_POLL) {   /* the server is back and waits for this round */
        if (st->active)
            return;   /* the report will come */
        if (st->report && st->round == m->round)
            send_report(ctx, st, i);
        else
            send_hello(ctx, st, i);
        return;
    }
    alg_abort_step(ctx, i);   /* asked again while working for a closed round */
    alg_ps_install(ctx, i, m);
    if ((int)ctx->param[P_AGGREGATION] == AGG_FEDNOVA)
        alg_reset_momentum(ctx, i);   /* the reference's reset at each round */
    if (st->report) {
        alg_buf_put(ctx, st->report);
        st->report = NULL;
    }
    st->target = (long)m->tag;
    if ((int)ctx->param[P_LOCAL_STEPS] == LS_EPOCHS) {
        size_t per_epoch = alg_local_samples(ctx, i) / alg_batch(ctx);
        st->target = (long)ctx->param[P_LOCAL_EPOCHS] * (long)(per_epoch ? per_epoch : 1);
    }
    st->steps = 0;
    st->round = m->round;
    st->active = 1;
    st->began_s = st->step_s = alg_now(ctx);
    alg_start_step(ctx, i);
}

/* Back from a failure: a client in the middle of its round goes on (its
 * step restarts); an idle one may have lost the round's model or its
 * report, and says hello (a control message). */
static void fn_on_return(alg_ctx *ctx, void *state, int i)
{
    fn_state *st = state;
    if (i != ctx->server) {
        if (!st->active)
            send_hello(ctx, st, i);
        return;
    }
    /* the server: the reports sent while it was down are lost, and it
     * missed the detector's notices */
    fn_shared *sh = fn(ctx);
    if (sh->asked == 0) {
        start_round(ctx);
        return;
    }
    for (int c = 0; c < ctx->n; c++)
        if (sh->open[c] && !alg_is_failed(ctx, c))
            alg_send(ctx, ctx->server, c, TAG_POLL, sh->round, NULL, 0);
    if (round_done(ctx))
        close_round(ctx);
}

static void fn_fini(alg_ctx *ctx, void *state, int i)
{
    fn_state *st = state;
    if (i != ctx->server && st->report)
        alg_buf_put(ctx, st->report);
    st->report = NULL;
}

static void fn_on_failure(alg_ctx *ctx, int peer, int failed)
{
    alg_ps_notify_server(ctx, peer, failed);
}

static void fn_on_timer(alg_ctx *ctx, void *state, int node, uint32_t tag)
{
    (void)state;
    (void)node;
    fn_shared *sh = fn(ctx);
    int peer, failed;
    if (!alg_ps_notice(tag, &peer, &failed))
        return;   /* sets no timer of its own */
    if (sh->asked == 0) {   /* no round while nobody was live */
        if (!failed && !alg_is_failed(ctx, peer))
            start_round(ctx);
        return;
    }
    if (round_done(ctx))
        close_round(ctx);
}

static void fn_describe_wait(const alg_ctx *ctx, const void *state, int i, char *buf,
                             size_t size)
{
    const fn_state *st = state;
    if (i == ctx->server) {
        const fn_shared *sh = fn(ctx);
        snprintf(buf, size, "%d of %d client models of round %llu", sh->asked - sh->received,
                 sh->asked, (unsigned long long)sh->round);
    } else {
        snprintf(buf, size, "%s", st->active ? "its step" : "");
    }
}

static int fn_stats(const alg_ctx *ctx, const char **keys, double *values, int max)
{
    int k = alg_ps_stats(ctx, keys, values, max);
    if (k == 0 || k + 9 > max)
        return k;
    const fn_shared *sh = alg_ps_extra(ctx->shared);
    const char *const key[] = { "rounds", "rounds_abandoned", "local_steps_mean",
                                "local_steps_min", "local_steps_max", "tau_last",
                                "loss_first", "loss_last", "models_resent" };
    double v[] = { (double)sh->round, (double)sh->abandoned,
                   sh->reports ? sh->steps_sum / (double)sh->reports : 0,
                   (double)sh->steps_min, (double)sh->steps_max, (double)sh->tau,
                   sh->f0 > 0 ? sh->f0 : NAN, sh->f_last, (double)sh->resent };
    return k + alg_stats_copy(key, v, 9, keys + k, values + k, max - k);
}

const alg_type alg_fednova = {
    .name = "fednova",
    .summary = "federated rounds with time-budget or adaptive local steps and normalized "
               "averaging (Wang et al. 2020)",
    .state_size = sizeof(fn_state),
    .servers = 1,
    .params = params,
    .eval_params = alg_ps_eval_params,
    .check = fn_check,
    .shared_init = fn_shared_init,
    .shared_fini = fn_shared_fini,
    .on_start = fn_on_start,
    .on_step_done = fn_on_step_done,
    .on_message = fn_on_message,
    .on_timer = fn_on_timer,
    .on_failure = fn_on_failure,
    .on_return = fn_on_return,
    .fini = fn_fini,
    .describe_wait = fn_describe_wait,
    .stats = fn_stats,
};
