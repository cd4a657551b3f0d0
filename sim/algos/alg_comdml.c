/* alg_comdml.c -- ComDML (Mohammadabadi, Yang, Yan, Zhang, "Communication-
 * Efficient Training Workload Balancing for Decentralized Multi-Agent
 * Learning", ICDCS 2024): synchronous rounds of H local steps per agent
 * ended by an all-reduce average of the agents' models, in which a slow
 * agent offloads the back layers of its model to a fast agent through
 * local-loss split training.
 *
 * Timing semantics.  At the start of round r every agent finds the round's
 * schedule (the same at every agent: it is computed from what the
 * aggregation shared, each agent's measured seconds per whole-model step
 * in its last round).  The scheduler pairs the slowest unpaired agent j
 * with the fastest unpaired k and picks the cut s (after weight layer s)
 * that minimises the pair's predicted makespan, keeping the pair only if
 * that beats j training alone; it goes on inward until a pair does not
 * help (alg_comdml_sched.c gives the prediction).  Before an agent has a
 * measured round, its profile is the device's mean step time
 * (alg_step_time).  In a pair, j runs H front steps
 * (layers 1 .. s with an auxiliary head as local loss: work front_share of
 * a step) and after each sends its activations and labels to k; k runs
 * its own H steps, then one back step (layers s+1 .. L+1 on the received
 * activations, true labels; work back_share) per activation batch as they
 * are in, on its copy of j's model, and returns j's trained back part.
 * Neither waits for the other's backward pass.  An agent joins the
 * all-reduce once its own work is done (j: its front steps and its back
 * part back).  The activation message is priced batch x width x bytes
 * per parameter plus 4 bytes per label; the returned back part n_back
 * parameters (alg_param_bytes); the receiver reads the activations from
 * the sender's round store (the same doubles), the weights travel as
 * payload.  With the timing-only model the layers are `layers` equal
 * parts and an activation message is `act_bytes`.
 *
 * Failures (docs/algorithms.md): a helper declared failed, or a partner
 * that came back from being down (it says so with a control message),
 * breaks the pair: the slow agent trains its back part itself on its
 * stored activations, so nothing stalls; a slow agent lost so drops off
 * its helper's queue.  The all-reduce re-forms among the live members as
 * local-sgd's (alg_coll_catch.c), with catching up by a live member's model.
 */
#include "alg_comdml_int.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <gsl/gsl_cblas.h>

static const char *const offload_names[] = { "auto", "off", NULL };

static const alg_param_spec params[] = {
    { "local_steps", ALG_PARAM_INT, 10, 1, 1000, NULL,
      "H: steps per agent per round before the all-reduce" },
    { "offload", ALG_PARAM_CHOICE, OFFLOAD_AUTO, 0, 0, offload_names,
      "auto: the scheduler pairs slow and fast agents; off: every agent trains alone" },
    { "collective", ALG_PARAM_CHOICE, ALG_COLL_RING, 0, 0, alg_coll_kind_names,
      "the all-reduce pattern of the aggregation" },
    { "layers", ALG_PARAM_INT, 4, 2, MAX_CUTS, NULL,
      "timing-only model: equal layers a step is cut into" },
    { "act_bytes", ALG_PARAM_REAL, 1e5, 0, 1e15, NULL,
      "timing-only model: bytes of one activation message" },
    { NULL, 0, 0, 0, 0, NULL, NULL },
};


/* ---- the schedule ---- */

static void reset_round(cd_state *st, uint64_t r)
{
    st->role = SOLO;
    st->partner = -1;
    st->cut = 0;
    st->own = st->backs = 0;
    st->fallback = st->weights_in = st->weights_sent = st->in_back = 0;
    st->plan_round = r;
}

/* Round r's schedule over the live agents (alg_comdml_sched.c); it also
 * opens round r for every agent (its counters), including those still
 * finishing the all-reduce of r - 1. */
static void schedule(alg_ctx *ctx, uint64_t r)
{
    cd_shared *sh = ctx->shared;
    sh->sched_round = r;
    int m = 0;
    for (int w = 0; w < ctx->n; w++) {
        cd_state *st = alg_state(ctx, w);
        reset_round(st, r);
        sh->cut_of[w] = 0;
        sh->partner[w] = -1;
        if (alg_is_failed(ctx, w) || st->cu.catching)
            continue;
        if (st->est == 0)   /* no round measured yet: the device's profile */
            st->est = alg_step_time(ctx, w);
        sh->est[w] = st->est;
        sh->order[m++] = w;
    }
    /* without offloading no cut is tried: every agent alone */
    int cuts = (int)ctx->param[P_OFFLOAD] == OFFLOAD_AUTO ? sh->n_cuts : 0;
    sh->pred = comdml_schedule(ctx, comdml_H(ctx), sh->est, sh->order, m, sh->cost, cuts,
                               sh->partner, sh->cut_of, &sh->pairs);
    for (int w = 0; w < ctx->n; w++) {
        cd_state *st = alg_state(ctx, w);
        if (sh->partner[w] < 0)
            continue;
        st->partner = sh->partner[w];
        st->cut = sh->cut_of[w];
        int p = st->partner;   /* the slower of the two offloads */
        st->role = sh->est[w] > sh->est[p] || (sh->est[w] == sh->est[p] && w < p) ? SLOW : HELPER;
        sh->last_cut = st->cut;
    }
}

/* ---- a round's work ---- */

/* A whole step (the trainer's math) or a part (share; the math is ours). */
static void start(alg_ctx *ctx, cd_state *st, int i, int whole, double share)
{
    st->t_step = alg_now(ctx);
    st->share = whole ? 1.0 : share;
    st->tainted = 0;
    st->busy = 1;
    if (whole)
        alg_start_step(ctx, i);
    else
        alg_start_work(ctx, i, share);
}

/* The round scheduled last is over (every agent has begun the next). */
static void close_round(cd_shared *sh)
{
    if (sh->sched_round == UINT64_MAX)
        return;
    if (sh->n_timed == 0) {
        sh->first_work = sh->t_work - sh->t0;
        sh->first_pred = sh->pred;
    }
    sh->sum_work += sh->t_work - sh->t0;
    sh->sum_pred += sh->pred;
    sh->n_timed++;
}

void comdml_begin_round(alg_ctx *ctx, int i)
{
    cd_shared *sh = ctx->shared;
    cd_state *st = alg_state(ctx, i);
    if (sh->sched_round != st->round) {
        close_round(sh);
        sh->t0 = sh->t_work = alg_now(ctx);
        schedule(ctx, st->round);
    }
    if (st->plan_round != st->round)   /* not in the schedule: alone */
        reset_round(st, st->round);
    st->est_sum = 0;
    st->est_n = 0;
    if (st->role == HELPER && ctx->P)
        memcpy(st->xb, alg_params_const(ctx, i), ctx->P * sizeof(double));
    comdml_next(ctx, i);
}

static void enter_sync(alg_ctx *ctx, cd_state *st, int i)
{
    cd_shared *sh = ctx->shared;
    if (st->est_n > 0)
        st->est = st->est_sum / st->est_n;
    if (st->round == sh->sched_round && alg_now(ctx) > sh->t_work)
        sh->t_work = alg_now(ctx);
    st->syncing = 1;
    const int *mem = alg_coll_members(ctx, sh->coll, st->round, &st->k);
    alg_coll_start(ctx, sh->coll, i, st->round, mem, st->k, alg_params(ctx, i));
}

static int acts_in(const cd_state *st, uint64_t r)
{
    return st->acts_round[r & 1] == r ? st->acts_in[r & 1] : 0;
}

/* What node i does next in its round: its own steps, then (helper) the
 * back steps whose activations are in, (fallen back) its own back steps,
 * then the all-reduce once nothing is owed. */
void comdml_next(alg_ctx *ctx, int i)
{
    cd_shared *sh = ctx->shared;
    cd_state *st = alg_state(ctx, i);
    const int H = comdml_H(ctx);
    const cut_info *c = &sh->cut[st->cut];
    if (st->syncing || st->cu.catching || st->busy)
        return;
    if (st->own < H) {
        start(ctx, st, i, st->role != SLOW, c->front);
        return;
    }
    if (st->role == HELPER && st->partner >= 0) {
        cd_state *pj = alg_state(ctx, st->partner);
        if (st->backs < H) {
            if (st->backs < acts_in(st, st->round) && pj->round == st->round) {
                st->in_back = 1;
                start(ctx, st, i, 0, c->back);
            }
            return;
        }
        if (!st->weights_sent) {
            cl_buf *b = NULL;
            if (ctx->P) {
                b = alg_buf_get_len(ctx, ctx->P - c->n_front);
                memcpy(b->data, st->xb + c->n_front, (ctx->P - c->n_front) * sizeof(double));
            }
            alg_send(ctx, i, st->partner, TAG_WEIGHTS, st->round, b, c->w_bytes);
            if (b)
                alg_buf_put(ctx, b);
            st->weights_sent = 1;
        }
    }
    if (st->role == SLOW && st->fallback && st->backs < H) {
        st->in_back = 1;
        start(ctx, st, i, 0, c->back);
        return;
    }
    if (st->role == SLOW && !st->fallback && !st->weights_in)
        return;
    enter_sync(ctx, st, i);
}

static void cd_on_step_done(alg_ctx *ctx, void *state, int i, const double *grad)
{
    cd_shared *sh = ctx->shared;
    cd_state *st = state;
    const cut_info *c = &sh->cut[st->cut];
    const size_t B = sh->B, w = c->width;
    st->busy = 0;
    if (!st->tainted && st->share > 0) {
        st->est_sum += (alg_now(ctx) - st->t_step) / st->share;
        st->est_n++;
    }
    if (st->in_back) {
        st->in_back = 0;
        int self = st->role == SLOW;
        const cd_state *owner = self ? st : alg_state(ctx, st->partner);
        int o = self ? i : st->partner;
        if (ctx->P) {
            double *x = self ? alg_params(ctx, i) : st->xb;
            const size_t at = (size_t)st->backs * B;
            alg_split_back(ctx, i, st->cut, x, owner->acts + at * w, owner->labels + at, st->g);
            /* the back part's optimizer state is its owner's */
            alg_sgd_apply_range(ctx, o, x, st->g, 1.0, c->n_front, ctx->P, 0);
        }
        st->backs++;
    } else if (st->role == SLOW) {
        if (ctx->P) {
            const size_t at = (size_t)st->own * B;
            double *aux = st->aux + c->aux_off;
            alg_split_front(ctx, i, st->cut, aux, st->acts + at * w, st->labels + at, st->g,
                            st->gaux);
            alg_sgd_apply_range(ctx, i, alg_params(ctx, i), st->g, 1.0, 0, c->n_front, 1);
            /* the head is the agent's own, not the model's: plain SGD */
            cblas_daxpy((int)c->n_aux, -ctx->lr, st->gaux, 1, aux, 1);
        }
        st->own++;
        if (!st->fallback)
            alg_send(ctx, i, st->partner, TAG_ACT, st->round, NULL, c->act_bytes);
    } else {
        alg_sgd_apply(ctx, i, alg_params(ctx, i), grad, 1.0);
        st->own++;
    }
    comdml_next(ctx, i);
}

static void cd_on_message(alg_ctx *ctx, void *state, int i, const cl_msg *m)
{
    cd_shared *sh = ctx->shared;
    cd_state *st = state;
    switch (m->tag) {
    case TAG_COLL:
        alg_coll_on_message(ctx, sh->coll, i, m);
        return;
    case TAG_ACT: {
        if (m->round < st->round)   /* a retransmission from a round gone by */
            return;
        int q = (int)(m->round & 1);
        if (st->acts_round[q] != m->round) {
            st->acts_round[q] = m->round;
            st->acts_in[q] = 0;
        }
        st->acts_in[q]++;
        if (m->round == st->round && st->role == HELPER && st->partner == m->from)
            comdml_next(ctx, i);
        return;
    }
    case TAG_WEIGHTS:
        if (m->round == st->round && st->role == SLOW && st->partner == m->from
            && !st->fallback && !st->weights_in) {
            const cut_info *c = &sh->cut[st->cut];
            if (ctx->P)
                memcpy(alg_params(ctx, i) + c->n_front, m->payload->data,
                       (ctx->P - c->n_front) * sizeof(double));
            st->weights_in = 1;
            comdml_next(ctx, i);
        }
        return;
    case TAG_BREAK:
        if (m->round == st->round && st->partner == m->from) {
            if (st->role == SLOW)
                comdml_fall_back(ctx, i);
            else
                comdml_drop(ctx, i);
        }
        return;
    case TAG_SYNC:
        if (alg_catchup_take(ctx, &sh->cu, i, m))
            comdml_begin_round(ctx, i);
        return;
    default:
        return;
    }
}

static void averaged(alg_ctx *ctx, int i, const double *sum, size_t len)
{
    cd_state *st = alg_state(ctx, i);
    double *x = alg_params(ctx, i);
    if (len) {
        memcpy(x, sum, len * sizeof(double));
        cblas_dscal((int)len, 1.0 / st->k, x, 1);
    }
    st->syncing = 0;
    st->round++;
    comdml_serve(ctx, i);
    comdml_begin_round(ctx, i);
}


static void cd_describe_wait(const alg_ctx *ctx, const void *state, int i, char *buf,
                             size_t size)
{
    const cd_state *st = state;
    const cd_shared *sh = ctx->shared;
    if (alg_catchup_describe(ctx, &sh->cu, i, buf, size))
        return;
    if (st->busy)
        snprintf(buf, size, "its step");
    else if (st->syncing)
        alg_coll_describe_wait(sh->coll, i, buf, size);
    else if (st->role == SLOW && !st->fallback && !st->weights_in)
        snprintf(buf, size, "its back part from node %d (round %llu)", st->partner,
                 (unsigned long long)st->round);
    else if (st->role == HELPER && st->partner >= 0)
        snprintf(buf, size, "activations %d of %d from node %d (round %llu)", st->backs + 1,
                 comdml_H(ctx), st->partner, (unsigned long long)st->round);
    else
        buf[0] = '\0';
}

/* ---- set-up ---- */

static int cd_check(const alg_ctx *ctx, char *err, size_t size)
{
    if (ctx->P > 0 && alg_model_layers(ctx) < 2) {
        snprintf(err, size, "comdml cuts the model at a layer boundary: it needs model \"mlp\" "
                 "(or the timing-only \"none\")");
        return -1;
    }
    if (alg_model_layers(ctx) - 1 > MAX_CUTS) {
        snprintf(err, size, "comdml: at most %d hidden layers", MAX_CUTS);
        return -1;
    }
    return 0;
}

static int cd_shared_init(alg_ctx *ctx)
{
    cd_shared *sh = calloc(1, sizeof *sh);
    if (!sh)
        return -1;
    ctx->shared = sh;
    sh->sched_round = UINT64_MAX;
    sh->B = alg_batch(ctx);
    const size_t n = (size_t)ctx->n;
    if (!(sh->order = malloc(n * sizeof *sh->order)) || !(sh->partner = malloc(n * sizeof(int)))
        || !(sh->cut_of = malloc(n * sizeof(int))) || !(sh->est = calloc(n, sizeof(double))))
        return -1;
    if (ctx->P == 0) {
        const int Lt = (int)ctx->param[P_LAYERS];
        sh->n_cuts = Lt - 1;
        for (int s = 1; s < Lt; s++) {
            cut_info *c = &sh->cut[s];
            c->front = (double)s / Lt;
            c->back = (double)(Lt - s) / Lt;
            c->act_bytes = ctx->param[P_ACT_BYTES];
            c->w_bytes = alg_part_bytes(ctx, 0, c->back);
        }
    } else {
        sh->n_cuts = alg_model_layers(ctx) - 1;
        for (int s = 1; s <= sh->n_cuts; s++) {
            alg_split_plan p;
            if (alg_split_plan_get(ctx, s, &p) != 0)
                return -1;
            cut_info *c = &sh->cut[s];
            c->front = p.front_share;
            c->back = p.back_share;
            c->width = p.width;
            c->n_front = p.n_front;
            c->n_aux = p.n_aux;
            c->aux_off = sh->aux_len;
            c->act_bytes = alg_param_bytes(ctx, sh->B * p.width) + 4.0 * (double)sh->B;
            c->w_bytes = alg_param_bytes(ctx, p.n_back);
            sh->aux_len += p.n_aux;
            if (p.width * sh->B * (size_t)comdml_H(ctx) > sh->store)
                sh->store = p.width * sh->B * (size_t)comdml_H(ctx);
        }
    }
    for (int s = 1; s <= sh->n_cuts; s++)
        sh->cost[s] = (comdml_cut){ sh->cut[s].front, sh->cut[s].back, sh->cut[s].act_bytes,
                                    sh->cut[s].w_bytes };
    sh->coll = alg_coll_create(ctx, (alg_coll_kind)ctx->param[P_COLLECTIVE], ctx->P, TAG_COLL,
                               averaged);
    alg_catchup_init(&sh->cu, &comdml_catch_ops, sh->coll, TAG_SYNC);
    return sh->coll ? 0 : -1;
}

static void cd_shared_fini(alg_ctx *ctx)
{
    cd_shared *sh = ctx->shared;
    if (!sh)
        return;
    alg_coll_destroy(ctx, sh->coll);
    free(sh->order);
    free(sh->partner);
    free(sh->cut_of);
    free(sh->est);
    free(sh);
}

static int cd_init(alg_ctx *ctx, void *state, int i)
{
    cd_shared *sh = ctx->shared;
    cd_state *st = state;
    st->partner = -1;
    st->acts_round[0] = st->acts_round[1] = UINT64_MAX;
    if (ctx->P == 0)
        return 0;
    const size_t HB = (size_t)comdml_H(ctx) * sh->B;
    st->acts = malloc(sh->store * sizeof *st->acts);
    st->labels = malloc(HB * sizeof *st->labels);
    st->g = malloc(ctx->P * sizeof *st->g);
    st->xb = malloc(ctx->P * sizeof *st->xb);
    st->aux = malloc(sh->aux_len * sizeof *st->aux);
    st->gaux = malloc(sh->aux_len * sizeof *st->gaux);
    if (!st->acts || !st->labels || !st->g || !st->xb || !st->aux || !st->gaux)
        return -1;
    for (int s = 1; s <= sh->n_cuts; s++)
        alg_split_aux_init(ctx, i, s, st->aux + sh->cut[s].aux_off);
    return 0;
}

static void cd_fini(alg_ctx *ctx, void *state, int i)
{
    (void)ctx;
    (void)i;
    cd_state *st = state;
    free(st->acts);
    free(st->labels);
    free(st->g);
    free(st->xb);
    free(st->aux);
    free(st->gaux);
}

static void cd_on_start(alg_ctx *ctx, void *state, int i)
{
    (void)state;
    comdml_begin_round(ctx, i);
}

static int cd_stats(const alg_ctx *ctx, const char **keys, double *values, int max)
{
    const cd_shared *sh = ctx->shared;
    uint64_t rounds = 0;
    for (int w = 0; w < ctx->n; w++) {
        const cd_state *st = alg_state(ctx, w);
        if (st->round > rounds)
            rounds = st->round;
    }
    static const char *const k[] = { "rounds", "pairs", "fallbacks", "mean_work_s",
                                      "mean_predicted_work_s", "first_work_s",
                                      "first_predicted_work_s", "last_cut" };
    const double v[] = { (double)rounds, sh->pairs, sh->fallbacks,
                         sh->n_timed ? sh->sum_work / sh->n_timed : NAN,
                         sh->n_timed ? sh->sum_pred / sh->n_timed : NAN,
                         sh->n_timed ? sh->first_work : NAN, sh->n_timed ? sh->first_pred : NAN,
                         sh->last_cut };
    return alg_stats_copy(k, v, 8, keys, values, max);
}

const alg_type alg_comdml = {
    .name = "comdml",
    .summary = "rounds with slow agents offloading back layers to fast ones, local-loss split "
               "training, all-reduce (Mohammadabadi 2024)",
    .state_size = sizeof(cd_state),
    .params = params,
    .check = cd_check,
    .shared_init = cd_shared_init,
    .shared_fini = cd_shared_fini,
    .init = cd_init,
    .on_start = cd_on_start,
    .on_step_done = cd_on_step_done,
    .on_message = cd_on_message,
    .on_failure = comdml_on_failure,
    .on_return = comdml_on_return,
    .describe_wait = cd_describe_wait,
    .stats = cd_stats,
    .fini = cd_fini,
};
