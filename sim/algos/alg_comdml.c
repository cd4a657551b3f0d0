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
 * help (pair_makespan gives the prediction).  Before an agent has a
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
 * local-sgd's (alg_coll.c), with catching up by a live member's model.
 */
#include "alg_coll.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <gsl/gsl_cblas.h>

enum { P_LOCAL_STEPS, P_OFFLOAD, P_COLLECTIVE, P_LAYERS, P_ACT_BYTES };
enum { OFFLOAD_AUTO, OFFLOAD_OFF };
enum { TAG_COLL = 1, TAG_ACT = 2, TAG_WEIGHTS = 3, TAG_SYNC = 4, TAG_BREAK = 5 };
enum { SOLO = 0, SLOW, HELPER };
#define MAX_CUTS 16

static const char *const offload_names[] = { "auto", "off", NULL };

static const alg_param_spec params[] = {
    { "local_steps", ALG_PARAM_INT, 10, 1, 10000, NULL,
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

/* What a cut at s costs, the same for every pair. */
typedef struct cut_info {
    double front, back;        /* work shares of a step */
    double act_bytes, w_bytes; /* messages */
    size_t width, n_front, n_aux, aux_off;
} cut_info;

typedef struct cd_shared {
    alg_coll *coll;
    int       n_catching;
    int       n_cuts;          /* cuts 1 .. n_cuts */
    cut_info  cut[MAX_CUTS + 1];
    size_t    B, aux_len, store;   /* batch; heads of all cuts; doubles of a round store */
    uint64_t  sched_round;     /* the round the schedule below is for, UINT64_MAX: none */
    int      *order;           /* n: scratch */
    /* the work makespan of rounds >= 1: from the first entry into a round
     * to the last agent done with its work */
    double    t0, t_work;
    double    sum_work, sum_pred, n_timed, pairs, fallbacks, last_cut;
    double    pred;            /* this round's predicted makespan */
    double    first_work, first_pred;   /* round 0's */
} cd_shared;

typedef struct cd_state {
    uint64_t round;
    int      role, partner, cut;
    int      own;              /* own steps (full, or front for SLOW) done this round */
    int      backs;            /* back steps done: a helper's for its partner, a
                                  fallen-back slow agent's for itself */
    int      fallback;         /* SLOW: trains its back part itself */
    int      weights_in, weights_sent, in_back;
    int      syncing, k;
    int      catching, served;
    uint64_t want;
    uint64_t acts_round[2];    /* activation batches in, by round parity */
    int      acts_in[2];
    double   t_step, share;    /* the step in progress: start, work share */
    int      tainted;          /* went down during it */
    int      busy;             /* a step of its own is started and not done */
    uint64_t plan_round;       /* the round role, partner, cut and the flags are for */
    double   est_sum, est;     /* seconds per whole-model step: this round, last */
    int      est_n;
    double  *acts;             /* H x B x width of this round's front (SLOW) */
    int     *labels;           /* H x B */
    double  *g, *xb;           /* P: gradient scratch; a helper's copy of its partner's model */
    double  *aux, *gaux;       /* the heads of every cut, and a scratch */
} cd_state;

static void serve(alg_ctx *ctx, int from);
static void next(alg_ctx *ctx, int i);

static int H_of(const alg_ctx *ctx) { return (int)ctx->param[P_LOCAL_STEPS]; }

/* ---- the scheduler ---- */

/* Predicted makespan of slow j offloading cut s to helper k, Tj and Tk
 * their seconds per whole-model step, on idle FIFO links: j's H front
 * steps send one activation message each (j's uplink in order); k runs
 * its H own steps, then a back step per batch once it is in; k returns
 * the back part.  max(j's front work, k's last back step + return). */
static double pair_makespan(int H, double Tj, double Tk, double front, double back,
                            double lat_a, double ser_a, double t_w)
{
    const double tf = Tj * front, tb = Tk * back;
    double up = 0.0, be = H * Tk;
    for (int i = 1; i <= H; i++) {
        double ss = i * tf > up ? i * tf : up;
        up = ss + ser_a;
        double arr = up + lat_a;
        be = (be > arr ? be : arr) + tb;
    }
    be += t_w;
    return H * tf > be ? H * tf : be;
}

static double pair_time(const alg_ctx *ctx, int j, int k, int s)
{
    const cd_shared *sh = ctx->shared;
    const cut_info *c = &sh->cut[s];
    const double lat = alg_link_time(ctx, j, k, 0);
    const double ser = alg_link_time(ctx, j, k, c->act_bytes) - lat;
    const cd_state *a = alg_state(ctx, j), *b = alg_state(ctx, k);
    return pair_makespan(H_of(ctx), a->est, b->est, c->front, c->back, lat, ser,
                                alg_link_time(ctx, k, j, c->w_bytes));
}

static int slower(const alg_ctx *ctx, int a, int b)
{
    double ea = ((const cd_state *)alg_state(ctx, a))->est;
    double eb = ((const cd_state *)alg_state(ctx, b))->est;
    return ea > eb || (ea == eb && a < b);
}

static void reset_round(cd_state *st, uint64_t r)
{
    st->role = SOLO;
    st->partner = -1;
    st->cut = 0;
    st->own = st->backs = 0;
    st->fallback = st->weights_in = st->weights_sent = st->in_back = 0;
    st->plan_round = r;
}

/* Round r's schedule over the live agents that have a measurement; it
 * also opens round r for every agent (its counters), including those
 * still finishing the all-reduce of r - 1. */
static void schedule(alg_ctx *ctx, uint64_t r)
{
    cd_shared *sh = ctx->shared;
    sh->sched_round = r;
    int m = 0;
    double solo = 0.0;
    for (int w = 0; w < ctx->n; w++) {
        cd_state *st = alg_state(ctx, w);
        reset_round(st, r);
        if (alg_is_failed(ctx, w) || st->catching)
            continue;
        if (st->est == 0)   /* no round measured yet: the device's profile */
            st->est = alg_step_time(ctx, w);
        if (H_of(ctx) * st->est > solo)
            solo = H_of(ctx) * st->est;
        if (st->est > 0)
            sh->order[m++] = w;
    }
    for (int a = 1; a < m; a++)   /* insertion sort, slowest first */
        for (int b = a; b > 0 && slower(ctx, sh->order[b], sh->order[b - 1]); b--) {
            int t = sh->order[b];
            sh->order[b] = sh->order[b - 1];
            sh->order[b - 1] = t;
        }
    double worst = 0.0;
    int lo = 0, hi = m - 1;
    if ((int)ctx->param[P_OFFLOAD] == OFFLOAD_AUTO)
        for (; lo < hi; lo++, hi--) {
            int j = sh->order[lo], k = sh->order[hi], best = 0;
            double alone = H_of(ctx) * ((cd_state *)alg_state(ctx, j))->est, bt = alone;
            for (int s = 1; s <= sh->n_cuts; s++) {
                double t = pair_time(ctx, j, k, s);
                if (t < bt) {
                    bt = t;
                    best = s;
                }
            }
            if (!best)
                break;
            cd_state *sj = alg_state(ctx, j), *sk = alg_state(ctx, k);
            sj->role = SLOW;
            sk->role = HELPER;
            sj->partner = k;
            sk->partner = j;
            sj->cut = sk->cut = best;
            sh->pairs++;
            sh->last_cut = best;
            if (bt > worst)
                worst = bt;
        }
    for (int q = lo; q <= hi; q++) {
        double t = H_of(ctx) * ((cd_state *)alg_state(ctx, sh->order[q]))->est;
        if (t > worst)
            worst = t;
    }
    sh->pred = m > 0 ? worst : solo;
}

/* ---- a round's work ---- */

static void start(alg_ctx *ctx, cd_state *st, int i, double share)
{
    st->t_step = alg_now(ctx);
    st->share = share;
    st->tainted = 0;
    st->busy = 1;
    if (share == 1.0)
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

static void begin_round(alg_ctx *ctx, int i)
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
    next(ctx, i);
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
static void next(alg_ctx *ctx, int i)
{
    cd_shared *sh = ctx->shared;
    cd_state *st = alg_state(ctx, i);
    const int H = H_of(ctx);
    const cut_info *c = &sh->cut[st->cut];
    if (st->syncing || st->catching || st->busy)
        return;
    if (st->own < H) {
        start(ctx, st, i, st->role == SLOW ? c->front : 1.0);
        return;
    }
    if (st->role == HELPER && st->partner >= 0) {
        cd_state *pj = alg_state(ctx, st->partner);
        if (st->backs < H) {
            if (st->backs < acts_in(st, st->round) && pj->round == st->round) {
                st->in_back = 1;
                start(ctx, st, i, c->back);
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
        start(ctx, st, i, c->back);
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
    next(ctx, i);
}

/* ---- pairs broken (failures) ---- */

/* Slow agent j loses its helper: it trains its back part itself. */
static void fall_back(alg_ctx *ctx, int j)
{
    cd_state *st = alg_state(ctx, j);
    if (st->role != SLOW || st->fallback || st->weights_in)
        return;
    st->fallback = 1;
    ((cd_shared *)ctx->shared)->fallbacks++;
    next(ctx, j);
}

/* Helper k drops its slow partner. */
static void drop(alg_ctx *ctx, int k)
{
    cd_state *st = alg_state(ctx, k);
    if (st->role != HELPER || st->partner < 0)
        return;
    st->partner = -1;
    if (st->in_back) {
        alg_abort_step(ctx, k);
        st->in_back = 0;
        st->busy = 0;
    }
    next(ctx, k);
}

static int pair_open(const cd_state *st)
{
    return (st->role == SLOW && !st->fallback && !st->weights_in)
        || (st->role == HELPER && st->partner >= 0 && !st->weights_sent);
}

/* Node w leaves its pair (declared failed, catching up): its partner
 * goes on alone. */
static void leave_pair(alg_ctx *ctx, int w)
{
    cd_state *st = alg_state(ctx, w);
    int p = st->partner;
    int open = pair_open(st);
    st->role = SOLO;
    st->partner = -1;
    st->in_back = 0;
    if (!open || p < 0)
        return;
    cd_state *ps = alg_state(ctx, p);
    if (ps->partner != w && ps->role != SLOW)
        return;
    if (ps->role == SLOW)
        fall_back(ctx, p);
    else
        drop(ctx, p);
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
            next(ctx, i);
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
            next(ctx, i);
        }
        return;
    case TAG_BREAK:
        if (m->round == st->round && st->partner == m->from) {
            if (st->role == SLOW)
                fall_back(ctx, i);
            else
                drop(ctx, i);
        }
        return;
    case TAG_SYNC:
        if (st->catching && m->round == st->want) {
            memcpy(alg_params(ctx, i), m->payload->data, ctx->P * sizeof(double));
            st->round = st->want;
            st->catching = 0;
            sh->n_catching--;
            begin_round(ctx, i);
        }
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
    serve(ctx, i);
    begin_round(ctx, i);
}


/* ---- failures, the all-reduce (as local-sgd's; docs/algorithms.md) ---- */

/* Node `from` just entered its round: it hands its model (the fresh
 * average) to every agent waiting for that round's model. */
static void serve(alg_ctx *ctx, int from)
{
    cd_shared *sh = ctx->shared;
    const cd_state *fs = alg_state(ctx, from);
    if (!sh->n_catching)
        return;
    cl_buf *x = NULL;
    for (int w = 0; w < ctx->n; w++) {
        cd_state *st = alg_state(ctx, w);
        if (w == from || !st->catching || st->served || st->want != fs->round)
            continue;
        if (!x)
            x = alg_snapshot(ctx, from);
        alg_send(ctx, from, w, TAG_SYNC, st->want, x, alg_param_bytes(ctx, ctx->P));
        st->served = 1;
    }
    if (x)
        alg_buf_put(ctx, x);
}

/* Every live member abandons the averaging in progress and re-runs round
 * R, the most advanced, among the live members; one left behind takes the
 * model of the first member at R. */
static void reform(alg_ctx *ctx)
{
    cd_shared *sh = ctx->shared;
    alg_coll_new_epoch(ctx, sh->coll);
    int ahead = -1;
    for (int w = 0; w < ctx->n; w++) {
        const cd_state *st = alg_state(ctx, w);
        if (!alg_is_failed(ctx, w) && !st->catching
            && (ahead < 0 || st->round > ((const cd_state *)alg_state(ctx, ahead))->round))
            ahead = w;
    }
    if (ahead < 0)
        return;
    uint64_t R = ((const cd_state *)alg_state(ctx, ahead))->round;
    for (int w = 0; w < ctx->n; w++) {
        cd_state *st = alg_state(ctx, w);
        if (alg_is_failed(ctx, w))
            continue;
        if (st->catching || st->round < R) {
            if (!st->catching) {
                sh->n_catching++;
                leave_pair(ctx, w);
                alg_abort_step(ctx, w);
                st->busy = 0;
                st->syncing = 0;
            }
            if (!st->catching || st->want <= R) {
                st->catching = 1;
                st->want = R;
                st->served = 0;
                alg_coll_set_join(sh->coll, w, R);
            }
        } else if (st->syncing) {
            const int *mem = alg_coll_members(ctx, sh->coll, R, &st->k);
            alg_coll_start(ctx, sh->coll, w, R, mem, st->k, alg_params(ctx, w));
        }
    }
    serve(ctx, ahead);
}

static void cd_on_failure(alg_ctx *ctx, int peer, int failed)
{
    cd_shared *sh = ctx->shared;
    cd_state *st = alg_state(ctx, peer);
    alg_coll_members_changed(sh->coll);
    if (st->catching) {
        st->catching = 0;
        sh->n_catching--;
    }
    leave_pair(ctx, peer);
    if (failed) {
        reform(ctx);
        return;
    }
    int any = 0;
    uint64_t R = 0;
    for (int w = 0; w < ctx->n; w++) {
        const cd_state *o = alg_state(ctx, w);
        if (w != peer && !alg_is_failed(ctx, w) && !o->catching && (!any || o->round > R)) {
            R = o->round;
            any = 1;
        }
    }
    if (!any)
        return;
    st->catching = 1;
    st->served = 0;
    st->want = R + 1;
    st->syncing = 0;
    sh->n_catching++;
    alg_coll_set_join(sh->coll, peer, R + 1);
}

/* Back up: a pair still open is broken (what was sent to or by it while
 * it was down may be lost), the partner told so; the step it was in comes
 * back by itself (faults.step). */
static void cd_on_return(alg_ctx *ctx, void *state, int i)
{
    cd_state *st = state;
    st->tainted = 1;
    if (st->catching) {
        alg_abort_step(ctx, i);
        st->busy = 0;
        return;
    }
    if (pair_open(st)) {
        alg_send(ctx, i, st->partner, TAG_BREAK, st->round, NULL, 0);
        if (st->role == SLOW)
            fall_back(ctx, i);
        else
            drop(ctx, i);
        return;
    }
    if (st->syncing)   /* what it sent inside the all-reduce may be lost */
        reform(ctx);
}

static void cd_describe_wait(const alg_ctx *ctx, const void *state, int i, char *buf,
                             size_t size)
{
    const cd_state *st = state;
    const cd_shared *sh = ctx->shared;
    if (st->catching)
        snprintf(buf, size, "a live member's model of round %llu", (unsigned long long)st->want);
    else if (st->busy)
        snprintf(buf, size, "its step");
    else if (st->syncing)
        alg_coll_describe_wait(sh->coll, i, buf, size);
    else if (st->role == SLOW && !st->fallback && !st->weights_in)
        snprintf(buf, size, "its back part from node %d (round %llu)", st->partner,
                 (unsigned long long)st->round);
    else if (st->role == HELPER && st->partner >= 0)
        snprintf(buf, size, "activations %d of %d from node %d (round %llu)", st->backs + 1,
                 H_of(ctx), st->partner, (unsigned long long)st->round);
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
    if (!(sh->order = malloc((size_t)ctx->n * sizeof *sh->order)))
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
            if (p.width * sh->B * (size_t)H_of(ctx) > sh->store)
                sh->store = p.width * sh->B * (size_t)H_of(ctx);
        }
    }
    sh->coll = alg_coll_create(ctx, (alg_coll_kind)ctx->param[P_COLLECTIVE], ctx->P, TAG_COLL,
                               averaged);
    return sh->coll ? 0 : -1;
}

static void cd_shared_fini(alg_ctx *ctx)
{
    cd_shared *sh = ctx->shared;
    if (!sh)
        return;
    alg_coll_destroy(ctx, sh->coll);
    free(sh->order);
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
    const size_t HB = (size_t)H_of(ctx) * sh->B;
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
    begin_round(ctx, i);
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
    .on_failure = cd_on_failure,
    .on_return = cd_on_return,
    .describe_wait = cd_describe_wait,
    .stats = cd_stats,
    .fini = cd_fini,
};
