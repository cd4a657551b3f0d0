/* alg_eager.c -- eager-SGD (Li, Ben-Nun, Di Girolamo, Alistarh, Hoefler,
 * "Taming Unbalanced Training Workloads in Deep Learning with Partial
 * Collective Operations", PPoPP 2020): synchronous data-parallel SGD whose
 * all-reduce starts without waiting for everyone.
 *
 * Rounds are iterations.  Round r is the partial all-reduce of iteration r.
 * A step that starts on a node's model after r rounds computes its
 * gradient for iteration r; it is fresh in round r and stale in any later
 * round.  Every node applies x <- x - lr * sum / n when it has round r's
 * sum, so all models are identical once every node has left round r.
 *
 * Timing (the paper; the authors' fflib schedules ffsolo_allreduce and
 * ffrand_allreduce where the paper is silent):
 * - Activation: only a fresh gradient starts a round.  `solo`: the first
 *   node whose gradient for iteration r is done activates round r.
 *   `majority`: only r's initiator does, one node per round drawn
 *   uniformly with a stream all nodes share (in expectation half of the
 *   nodes are ready by then); the others wait for it.  The activator sends
 *   a 0-byte activation to every other node and joins at once.
 * - Joining: a node joins round r as soon as it knows r began, computing or
 *   not, with its send buffer: the sum of the gradients it finished and has
 *   not contributed (fresh when one is for iteration r, else stale), or
 *   zeros.  Late nodes contribute without waiting and hold no one back.
 *   The all-reduce is a real collective (alg_coll, `collective`).
 * - Blocking: a node waits for the round that carries its fresh gradient
 *   (the activator, and every node whose gradient was done when it
 *   learned of the round), and in `majority` for the initiator.  A gradient
 *   that missed its round stays in the buffer for the next one, and its
 *   node starts its next step at once: with `late` = "compute" (default)
 *   even inside the round it joined while computing (no node idles holding
 *   a finished gradient; the round's update lands during the next step);
 *   with `late` = "wait" it first waits for that round's result, as fflib's
 *   ffschedule_wait does.  Inside a round it joined while computing a node
 *   finishes at most two steps; when rounds outlast that it waits.
 * run.json reports rounds, fresh / stale / empty contributions and the
 * node-seconds spent idle holding an uncontributed gradient.
 *
 * Differences from fflib, on purpose: fflib zeroes the send buffer after
 * each round, so a gradient that misses its round is lost (here it goes
 * into the next round: the paper's stale gradient); fflib's solo schedule
 * makes every 33rd all-reduce a blocking one (ffsolo_limiter, LIMITER 32 in
 * the authors' runs) to bound how far a process's own iteration counter
 * lags, where here a node's iteration is the round its step started from
 * and no round blocks; fflib forwards an activation along a
 * recursive-doubling tree (log2 n hops), here the activator sends it to
 * every node (one hop).
 */
#include "alg_coll.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <gsl/gsl_cblas.h>

enum { P_MODE, P_COLLECTIVE, P_LATE };
enum { MODE_SOLO, MODE_MAJORITY };
enum { LATE_COMPUTE, LATE_WAIT };
enum { TAG_COLL = 1, TAG_ACTIVATE = 2, TAG_SYNC = 3 };

static const char *const mode_names[] = { "solo", "majority", NULL };
static const char *const late_names[] = { "compute", "wait", NULL };

static const alg_param_spec params[] = {
    { "mode", ALG_PARAM_CHOICE, MODE_SOLO, 0, 0, mode_names,
      "solo: the first fresh gradient starts a round; majority: a drawn initiator's" },
    { "collective", ALG_PARAM_CHOICE, ALG_COLL_RING, 0, 0, alg_coll_kind_names,
      "the all-reduce pattern" },
    { "late", ALG_PARAM_CHOICE, LATE_COMPUTE, 0, 0, late_names,
      "compute: a node that joined a round while computing steps on; wait: it waits" },
    { NULL, 0, 0, 0, 0, NULL, NULL },
};

typedef struct eg_shared {
    alg_coll *coll;
    uint64_t  seed;
    uint64_t  fresh, stale, empty;
    double    idle_holding_s;   /* summed over nodes */
    alg_catchup cu;   /* failures: re-formation, catching up */
} eg_shared;

typedef struct eg_state {
    uint64_t next_round;   /* the round this node is in, or joins next */
    uint64_t known;        /* rounds < known have begun, as far as it knows */
    uint64_t grad_for;     /* the iteration of the step in progress */
    uint64_t fresh_for;    /* buf holds a gradient of this iteration (UINT64_MAX: none) */
    int      in_round;
    int      held;         /* finished gradients summed in buf, not contributed */
    double   holding_since;   /* idle with held > 0 since then, or -1 */
    double  *buf;          /* the send buffer */
    double  *zero;
    double  *sent;         /* its contribution to the round it is in */
    int      k;            /* members of that round */
    /* taken back, or behind at a re-formation: waits for a live member's
     * model of a round */
    alg_catch cu;
} eg_state;

static void serve(alg_ctx *ctx, int from);
static const alg_catch_ops catch_ops;

static const int *members(const alg_ctx *ctx, uint64_t round, int *k)
{
    const eg_shared *sh = ctx->shared;
    return alg_coll_members(ctx, sh->coll, round, k);
}

/* Drawn among the round's members (everyone, without failures); -1 for a
 * round without members (every worker declared failed). */
static int initiator(const alg_ctx *ctx, uint64_t round)
{
    const eg_shared *sh = ctx->shared;
    int k;
    const int *mem = members(ctx, round, &k);
    if (k == 0)
        return -1;
    return mem[alg_hash64(sh->seed ^ alg_hash64(round)) % (uint64_t)k];
}

/* Called when a hook for node i is done with it (its state changes only
 * inside hooks): accounts the time it spends idle holding a gradient. */
static void account(alg_ctx *ctx, eg_state *st, int i)
{
    eg_shared *sh = ctx->shared;
    int holding = st->held > 0 && !alg_is_computing(ctx, i);
    if (holding && st->holding_since < 0) {
        st->holding_since = alg_now(ctx);
    } else if (!holding && st->holding_since >= 0) {
        sh->idle_holding_s += alg_now(ctx) - st->holding_since;
        st->holding_since = -1;
    }
}

static void start_step(alg_ctx *ctx, eg_state *st, int i)
{
    st->grad_for = st->next_round;
    alg_start_step(ctx, i);
}

/* Joins round next_round with the send buffer, or zeros when it is empty. */
static void join(alg_ctx *ctx, eg_state *st, int i)
{
    eg_shared *sh = ctx->shared;
    const double *c = st->zero;
    if (st->held) {
        c = st->buf;
        if (st->fresh_for == st->next_round)
            sh->fresh++;
        else
            sh->stale++;
    } else {
        sh->empty++;
    }
    st->in_round = 1;
    st->held = 0;   /* the collective copied the buffer */
    st->fresh_for = UINT64_MAX;
    memcpy(st->sent, c, ctx->P * sizeof(double));   /* for a re-run */
    const int *mem = members(ctx, st->next_round, &st->k);
    alg_coll_start(ctx, sh->coll, i, st->next_round, mem, st->k, c);
}

/* i's fresh gradient activates round next_round. */
static void activate(alg_ctx *ctx, eg_state *st, int i)
{
    for (int j = 0; j < ctx->n; j++)
        if (j != i && !alg_is_failed(ctx, j))
            alg_send(ctx, i, j, TAG_ACTIVATE, st->next_round, NULL, 0);
    st->known = st->next_round + 1;
    join(ctx, st, i);
}

/* The round ended at node i: the next one may have begun already; a node
 * that is not computing starts its next step. */
static void reduced(alg_ctx *ctx, int i, const double *sum, size_t len)
{
    (void)len;   /* ctx->P: the whole gradient */
    eg_state *st = alg_state(ctx, i);
    alg_sgd_apply(ctx, i, alg_params(ctx, i), sum, (double)st->k);
    st->in_round = 0;
    st->next_round++;
    serve(ctx, i);
    if (!alg_is_computing(ctx, i))
        start_step(ctx, st, i);
    if (st->known > st->next_round)
        join(ctx, st, i);
    account(ctx, st, i);
}

static int eg_shared_init(alg_ctx *ctx)
{
    eg_shared *sh = calloc(1, sizeof *sh);
    if (!sh)
        return -1;
    ctx->shared = sh;
    sh->coll = alg_coll_create(ctx, (alg_coll_kind)ctx->param[P_COLLECTIVE], ctx->P, TAG_COLL,
                               reduced);
    if (!sh->coll)
        return -1;
    alg_catchup_init(&sh->cu, &catch_ops, sh->coll, TAG_SYNC);
    sh->seed = gsl_rng_get(alg_rng(ctx, 0));
    return 0;
}

static void eg_shared_fini(alg_ctx *ctx)
{
    eg_shared *sh = ctx->shared;
    if (!sh)
        return;
    alg_coll_destroy(ctx, sh->coll);
    free(sh);
}

static int eg_init(alg_ctx *ctx, void *state, int node)
{
    (void)node;
    eg_state *st = state;
    st->buf = malloc((ctx->P ? ctx->P : 1) * sizeof(double));
    st->zero = calloc(ctx->P ? ctx->P : 1, sizeof(double));
    st->sent = malloc((ctx->P ? ctx->P : 1) * sizeof(double));
    st->fresh_for = UINT64_MAX;
    st->holding_since = -1;
    return st->buf && st->zero && st->sent ? 0 : -1;
}

static void eg_fini(alg_ctx *ctx, void *state, int node)
{
    (void)ctx;
    (void)node;
    eg_state *st = state;
    free(st->buf);
    free(st->zero);
    free(st->sent);
}

static void eg_on_start(alg_ctx *ctx, void *state, int i)
{
    start_step(ctx, state, i);
}

static void eg_on_step_done(alg_ctx *ctx, void *state, int i, const double *grad)
{
    eg_state *st = state;
    if (st->held)
        cblas_daxpy((int)ctx->P, 1.0, grad, 1, st->buf, 1);
    else
        memcpy(st->buf, grad, ctx->P * sizeof(double));
    st->held++;
    st->fresh_for = st->grad_for;
    if (st->cu.catching) {   /* behind at a re-formation: it goes on after the model */
        account(ctx, st, i);
        return;
    }
    if (st->in_round) {
        /* joined while computing: this gradient goes into the next round */
        if ((int)ctx->param[P_LATE] == LATE_COMPUTE && st->held < 2)
            start_step(ctx, st, i);
    } else if (st->grad_for != st->next_round) {
        start_step(ctx, st, i);   /* stale: it never starts a round */
    } else if ((int)ctx->param[P_MODE] == MODE_SOLO || initiator(ctx, st->next_round) == i) {
        activate(ctx, st, i);
    }   /* else majority: it waits for the initiator's activation */
    account(ctx, st, i);
}

static void eg_on_message(alg_ctx *ctx, void *state, int i, const cl_msg *m)
{
    eg_state *st = state;
    eg_shared *sh = ctx->shared;
    if (m->tag == TAG_COLL) {
        alg_coll_on_message(ctx, sh->coll, i, m);   /* may end a round: reduced */
        return;
    }
    if (m->tag == TAG_SYNC) {
        if (!alg_catchup_take(ctx, &sh->cu, i, m))
            return;
        if (!alg_is_computing(ctx, i))
            start_step(ctx, st, i);
    }
    if (m->tag == TAG_ACTIVATE && m->round + 1 > st->known)
        st->known = m->round + 1;
    if (!st->cu.catching && !st->in_round && st->known > st->next_round)
        join(ctx, st, i);
    account(ctx, st, i);
}

/* ---- failures (docs/algorithms.md, "When a node fails") ---- */

/* Node `from` just entered round next_round: its model is that round's,
 * for every worker waiting for it (alg_catchup_serve). */
static void serve(alg_ctx *ctx, int from)
{
    alg_catchup_serve(ctx, &((eg_shared *)ctx->shared)->cu, from);
}

/* Re-formation (alg_catchup_reform): every live member abandons the
 * partial all-reduce in progress (a new epoch) and re-runs round R, the
 * most advanced, among the live members with the contribution it had put
 * in; one left behind in round R - 1 takes the model of the first member
 * at R (its gradients since stay in its buffer for R); in majority mode
 * R's initiator, drawn again among the live members, activates R if it
 * holds its fresh gradient. */
static void behind(alg_ctx *ctx, int w, int was_catching)
{
    (void)was_catching;
    ((eg_state *)alg_state(ctx, w))->in_round = 0;
}

static void rerun(alg_ctx *ctx, int w, uint64_t R, int restarting)
{
    (void)restarting;
    eg_shared *sh = ctx->shared;
    eg_state *st = alg_state(ctx, w);
    if (st->in_round) {
        const int *mem = members(ctx, R, &st->k);
        alg_coll_start(ctx, sh->coll, w, R, mem, st->k, st->sent);
    } else if (st->held && st->fresh_for == R && !alg_is_computing(ctx, w)
               && st->known <= R && initiator(ctx, R) == w) {
        activate(ctx, st, w);
    }
}

static void after(alg_ctx *ctx, int w)
{
    account(ctx, alg_state(ctx, w), w);
}

/* Taken back: it starts afresh, what it held is as old as its absence. */
static void taken_back(alg_ctx *ctx, int w)
{
    eg_state *st = alg_state(ctx, w);
    st->in_round = 0;
    st->held = 0;
    st->fresh_for = UINT64_MAX;
}

static const alg_catch_ops catch_ops = {
    .catch_off = offsetof(eg_state, cu),
    .round_off = offsetof(eg_state, next_round),
    .behind = behind,
    .rerun = rerun,
    .after = after,
    .taken_back = taken_back,
};

static void eg_on_failure(alg_ctx *ctx, int peer, int failed)
{
    alg_catchup_declared(ctx, &((eg_shared *)ctx->shared)->cu, peer, failed);
}

static void eg_on_return(alg_ctx *ctx, void *state, int i)
{
    eg_state *st = state;
    if (st->cu.catching)
        alg_abort_step(ctx, i);
    else if (st->in_round)   /* what it sent inside the round may be lost */
        alg_catchup_reform(ctx, &((eg_shared *)ctx->shared)->cu, -1);
    account(ctx, st, i);
}

static int eg_stats(const alg_ctx *ctx, const char **keys, double *values, int max)
{
    const eg_shared *sh = ctx->shared;
    if (max < 5)
        return 0;
    uint64_t rounds = 0;
    double holding = sh->idle_holding_s;
    for (int i = 0; i < ctx->n; i++) {
        const eg_state *st = alg_state(ctx, i);
        if (st->next_round > rounds)
            rounds = st->next_round;
        if (st->holding_since >= 0)
            holding += alg_now(ctx) - st->holding_since;
    }
    keys[0] = "rounds";
    values[0] = (double)rounds;
    keys[1] = "fresh_contributions";
    values[1] = (double)sh->fresh;
    keys[2] = "stale_contributions";
    values[2] = (double)sh->stale;
    keys[3] = "empty_contributions";
    values[3] = (double)sh->empty;
    keys[4] = "idle_holding_s";
    values[4] = holding;
    return 5;
}

static void eg_describe_wait(const alg_ctx *ctx, const void *state, int i, char *buf,
                             size_t size)
{
    const eg_state *st = state;
    const eg_shared *sh = ctx->shared;
    if (alg_catchup_describe(ctx, &sh->cu, i, buf, size))
        return;
    if (st->in_round)
        alg_coll_describe_wait(sh->coll, i, buf, size);
    else if (alg_is_computing(ctx, i))
        snprintf(buf, size, "its step");
    else
        snprintf(buf, size, "the activation of round %llu by node %d",
                 (unsigned long long)st->next_round, initiator(ctx, st->next_round));
}

const alg_type alg_eager = {
    .name = "eager",
    .one_model = 1,
    .summary = "partial solo or majority all-reduce (Li et al. 2020)",
    .state_size = sizeof(eg_state),
    .params = params,
    .shared_init = eg_shared_init,
    .shared_fini = eg_shared_fini,
    .init = eg_init,
    .on_start = eg_on_start,
    .on_step_done = eg_on_step_done,
    .on_message = eg_on_message,
    .on_failure = eg_on_failure,
    .on_return = eg_on_return,
    .describe_wait = eg_describe_wait,
    .stats = eg_stats,
    .fini = eg_fini,
};
