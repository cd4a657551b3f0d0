/* alg_localsgd.c -- Local SGD (Stich, "Local SGD Converges Fast and
 * Communicates Little", ICLR 2019; Lin, Stich, Patel, Jaggi, "Don't Use
 * Large Mini-Batches, Use Local SGD", ICLR 2020): every node takes H local
 * SGD steps, then the nodes average their models; the decentralized
 * variant replaces the global average with one gossip round on the
 * topology's mixing matrix.
 *
 * Timing: a node applies each local gradient when its step ends and starts
 * the next step at once.  After its H-th step it joins the model
 * synchronisation of round r and starts no step until it has the result:
 * with `sync` = "allreduce" an all-reduce of its parameters (ring, recursive
 * doubling or tree, alg_coll.c) after which every node holds the same
 * average bit for bit; with `sync` = "gossip" it sends its model to every
 * neighbour, waits for all neighbours' round-r models and mixes
 * x <- sum_j W_ij x_j.  H = 1 with "allreduce" is model averaging after
 * every step.
 *
 * With "gossip", `schedule` picks the graph of synchronisation round r as
 * for D-PSGD (alg_nbr.c): the static topology (default), random matchings,
 * the undirected one-peer exponential graph, or the rounds of
 * `schedule_file`, each round mixed with Metropolis-Hastings weights on its
 * own graph; a node then waits only for its round-r neighbours and may run
 * rounds ahead of nodes it is not paired with (a mailbox slot per round).
 *
 * When a node fails (docs/algorithms.md): "allreduce" re-forms among the
 * live members as the all-reduce protocol does; "gossip" follows D-PSGD's
 * rule through alg_nbr.c (a declared neighbour is not waited for and its
 * weight moves to the node's own; one declared back rejoins at an agreed
 * round).
 *
 * Progressive freezing (the freeze section): the count is the
 * synchronisation round; round r's local steps compute at round r's stage
 * (alg_freeze_round as they begin) and its synchronisation carries the
 * trainable suffix only: the all-reduce reduces [prefix, P) (every member
 * of a round is at its stage), the gossip messages cost it and the mix runs
 * over it; a catch-up still copies the whole model.  Frozen layers stay
 * bit for bit as they were on every node.
 */
#include "alg_coll.h"
#include "alg_nbr.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <gsl/gsl_cblas.h>

enum { P_LOCAL_STEPS, P_SYNC, P_COLLECTIVE, P_SCHEDULE, P_SCHEDULE_FILE };
enum { SYNC_ALLREDUCE, SYNC_GOSSIP };
enum { TAG_COLL = 1, TAG_GOSSIP = 2, TAG_SYNC = 3 };
enum { TIMER_DECLARED = 1 };

static const char *const sync_names[] = { "allreduce", "gossip", NULL };

static const alg_param_spec params[] = {
    { "local_steps", ALG_PARAM_INT, 4, 1, 1e9, NULL,
      "H: local steps between two synchronisations" },
    { "sync", ALG_PARAM_CHOICE, SYNC_ALLREDUCE, 0, 0, sync_names,
      "allreduce: average over all nodes; gossip: mix with the round's neighbours" },
    { "collective", ALG_PARAM_CHOICE, ALG_COLL_RING, 0, 0, alg_coll_kind_names,
      "the all-reduce pattern (sync allreduce)" },
    { "schedule", ALG_PARAM_CHOICE, ALG_NBR_STATIC, 0, 0, alg_nbr_schedule_names,
      "the graph of each synchronisation round (sync gossip)" },
    { "schedule_file", ALG_PARAM_PATH, 0, 0, 0, NULL,
      "with schedule file: lines \"round u v\", relative to the scenario" },
    { NULL, 0, 0, 0, 0, NULL, NULL },
};

typedef struct ls_shared {
    alg_coll *coll;
    alg_nbr  *nbr;     /* gossip */
    alg_catchup cu;    /* all-reduce: re-formation, catching up */
} ls_shared;

typedef struct ls_state {
    int      local;      /* steps since the last synchronisation */
    uint64_t round;      /* synchronisation rounds done */
    int      syncing;
    int      k;          /* members of the all-reduce it is in */
    /* taken back, or behind at a re-formation: waits for a live member's
     * model of a round */
    alg_catch cu;
    alg_mbox mbox;       /* gossip: per round, sum of W_ij x_j */
} ls_state;

static void serve(alg_ctx *ctx, int from);
static const alg_catch_ops catch_ops;

static int degree(const alg_ctx *ctx, uint64_t r, int i)
{
    const ls_shared *sh = ctx->shared;
    return alg_nbr_row_of(sh->nbr, r, i).deg;
}

/* The first local step of node's round: at the round's frozen stage. */
static void round_step(alg_ctx *ctx, ls_state *st, int node)
{
    alg_freeze_round(ctx, node, st->round);   /* nothing without a freeze section */
    alg_start_step(ctx, node);
}

static void synced(alg_ctx *ctx, int node)
{
    ls_state *st = alg_state(ctx, node);
    st->syncing = 0;
    st->local = 0;
    st->round++;
    serve(ctx, node);
    round_step(ctx, st, node);
}

/* The average of the trainable suffix (all of x without freezing). */
static void averaged(alg_ctx *ctx, int node, const double *sum, size_t len)
{
    double *x = alg_params(ctx, node) + (ctx->P - len);
    memcpy(x, sum, len * sizeof(double));
    cblas_dscal((int)len, 1.0 / ((ls_state *)alg_state(ctx, node))->k, x, 1);
    synced(ctx, node);
}

/* Gossip round complete when the models of all its neighbours not
 * excluded (alg_nbr.c) are in; the weight of those that did not come moves
 * to the node's own. */
static void gossip_try_mix(alg_ctx *ctx, ls_state *st, int i)
{
    ls_shared *sh = ctx->shared;
    if (!st->syncing || alg_nbr_missing(ctx, sh->nbr, &st->mbox, st->round, i) > 0)
        return;
    alg_mbox_slot *s = alg_mbox_slot_of(&st->mbox, st->round);
    const size_t off = alg_frozen_params(ctx, i);   /* the frozen prefix is not mixed */
    double *x = alg_params(ctx, i);
    cblas_dscal((int)(ctx->P - off), alg_nbr_self_weight(sh->nbr, s, st->round, i), x + off, 1);
    cblas_daxpy((int)(ctx->P - off), 1.0, s->acc + off, 1, x + off, 1);
    alg_mbox_release(&st->mbox, s);
    synced(ctx, i);
}

static void start_sync(alg_ctx *ctx, ls_state *st, int i)
{
    ls_shared *sh = ctx->shared;
    st->syncing = 1;
    if ((int)ctx->param[P_SYNC] == SYNC_ALLREDUCE) {
        const int *mem = alg_coll_members(ctx, sh->coll, st->round, &st->k);
        const size_t off = alg_frozen_params(ctx, i);
        alg_coll_start_len(ctx, sh->coll, i, st->round, mem, st->k, alg_params(ctx, i) + off,
                           ctx->P - off);
        return;
    }
    cl_buf *x = alg_snapshot(ctx, i);
    alg_nbr_send(ctx, sh->nbr, i, st->round, TAG_GOSSIP, x);
    alg_buf_put(ctx, x);
    gossip_try_mix(ctx, st, i);
}

static int ls_check(const alg_ctx *ctx, char *err, size_t size)
{
    int schedule = (int)ctx->param[P_SCHEDULE];
    if ((int)ctx->param[P_SYNC] != SYNC_GOSSIP &&
        (schedule != ALG_NBR_STATIC || ctx->path[P_SCHEDULE_FILE])) {
        snprintf(err, size, "local-sgd schedule \"%s\" needs sync \"gossip\" (an all-reduce "
                 "uses no graph)", alg_nbr_schedule_names[schedule]);
        return -1;
    }
    return alg_nbr_check(ctx, "local-sgd", schedule, ctx->path[P_SCHEDULE_FILE], err, size);
}

static int ls_shared_init(alg_ctx *ctx)
{
    ls_shared *sh = calloc(1, sizeof *sh);
    if (!sh)
        return -1;
    ctx->shared = sh;
    alg_catchup_init(&sh->cu, &catch_ops, NULL, TAG_SYNC);   /* its collective below */
    if ((int)ctx->param[P_SYNC] != SYNC_ALLREDUCE) {
        int schedule = (int)ctx->param[P_SCHEDULE];
        /* only a random schedule draws: the static graph creates no stream */
        uint64_t seed = schedule == ALG_NBR_MATCHING ? gsl_rng_get(alg_rng(ctx, 0)) : 0;
        char err[512];
        sh->nbr = alg_nbr_create(ctx, schedule, ctx->path[P_SCHEDULE_FILE], seed, err,
                                 sizeof err);
        return sh->nbr ? 0 : -1;
    }
    sh->coll = alg_coll_create(ctx, (alg_coll_kind)ctx->param[P_COLLECTIVE], ctx->P, TAG_COLL,
                               averaged);
    if (!sh->coll)
        return -1;
    sh->cu.coll = sh->coll;
    return 0;
}

static void ls_shared_fini(alg_ctx *ctx)
{
    ls_shared *sh = ctx->shared;
    if (!sh)
        return;
    alg_coll_destroy(ctx, sh->coll);
    alg_nbr_destroy(sh->nbr);
    free(sh);
}

static int ls_init(alg_ctx *ctx, void *state, int node)
{
    (void)node;
    ls_state *st = state;
    if ((int)ctx->param[P_SYNC] != SYNC_GOSSIP)
        return 0;
    return alg_mbox_init(&st->mbox, ctx->P);
}

static void ls_fini(alg_ctx *ctx, void *state, int node)
{
    (void)ctx;
    (void)node;
    ls_state *st = state;
    alg_mbox_fini(&st->mbox);
}

static void ls_on_start(alg_ctx *ctx, void *state, int node)
{
    round_step(ctx, state, node);
}

static void ls_on_step_done(alg_ctx *ctx, void *state, int i, const double *grad)
{
    ls_state *st = state;
    alg_sgd_apply(ctx, i, alg_params(ctx, i), grad, 1.0);
    if (++st->local < (int)ctx->param[P_LOCAL_STEPS])
        alg_start_step(ctx, i);
    else
        start_sync(ctx, st, i);
}

static void ls_on_message(alg_ctx *ctx, void *state, int i, const cl_msg *m)
{
    ls_state *st = state;
    ls_shared *sh = ctx->shared;
    if (m->tag == TAG_COLL) {
        alg_coll_on_message(ctx, sh->coll, i, m);
        return;
    }
    if (m->tag == TAG_SYNC) {
        if (alg_catchup_take(ctx, &sh->cu, i, m)) {
            st->local = 0;
            round_step(ctx, st, i);
        }
        return;
    }
    /* a round already mixed without its sender (excluded), a resend of one
     * mixed with it, or a round from before this node itself rejoined */
    if (m->round < st->round)
        return;
    if (!alg_mbox_add(&st->mbox, m->round, m->from,
                      alg_nbr_weight(sh->nbr, m->round, i, m->from), m->payload))
        return;   /* a resend after its sender came back */
    if (m->round == st->round)
        gossip_try_mix(ctx, st, i);
}

/* ---- failures (docs/algorithms.md) ---- */

/* Gossip, as D-PSGD (alg_nbr.c): a neighbour declared failed is neither
 * waited for nor sent to, its weight moves to the node's own; declared
 * back, it rejoins at the round after the furthest any other live node has
 * begun. */
static void gossip_on_failure(alg_ctx *ctx, int peer, int failed)
{
    uint64_t r = 0;
    for (int w = 0; !failed && w < ctx->n; w++) {
        const ls_state *st = alg_state(ctx, w);
        if (w != peer && !alg_is_failed(ctx, w) && st->round > r)
            r = st->round;
    }
    alg_nbr_declared(ctx, ((ls_shared *)ctx->shared)->nbr, peer, failed, r, TIMER_DECLARED);
}

/* Gossip, back up: declared and back, it starts the local steps of its
 * join round afresh on its parameters as faults.rejoin left them; back
 * before it was declared, it is still a member of its round and, if it
 * was synchronising, sends its model again (what it sent as it went down
 * may be lost; receivers drop copies). */
static void gossip_on_return(alg_ctx *ctx, ls_state *st, int i)
{
    ls_shared *sh = ctx->shared;
    uint64_t join = alg_nbr_join(sh->nbr, i);
    if (st->round < join) {
        alg_abort_step(ctx, i);
        for (int k = 0; k < st->mbox.n; k++)
            if (st->mbox.slots[k].round != UINT64_MAX)
                alg_mbox_release(&st->mbox, &st->mbox.slots[k]);
        st->round = join;
        st->local = 0;
        st->syncing = 0;
        round_step(ctx, st, i);
    } else if (st->syncing) {
        cl_buf *x = alg_snapshot(ctx, i);
        alg_nbr_send(ctx, sh->nbr, i, st->round, TAG_GOSSIP, x);
        alg_buf_put(ctx, x);
        gossip_try_mix(ctx, st, i);   /* a neighbour declared failed while it was down */
    }
}

static void ls_on_timer(alg_ctx *ctx, void *state, int i, uint32_t tag)
{
    (void)tag;
    gossip_try_mix(ctx, state, i);
}

/* ---- failures, all-reduce synchronisation ---- */

/* Node `from` just entered its round: it hands its model (the fresh
 * average) to every worker waiting for that round's model
 * (alg_catchup_serve; nobody waits with gossip). */
static void serve(alg_ctx *ctx, int from)
{
    alg_catchup_serve(ctx, &((ls_shared *)ctx->shared)->cu, from);
}

/* As allreduce's (alg_catchup_reform): every live member abandons the
 * averaging in progress (new epoch) and re-runs round R, the most
 * advanced, among the live members with its model (unchanged while it
 * waits); a member left behind in round R - 1 stops its local steps and
 * takes the current model of the first member at R (the round's average
 * plus that member's local steps since). */
static void behind(alg_ctx *ctx, int w, int was_catching)
{
    if (was_catching)
        return;
    alg_abort_step(ctx, w);
    ((ls_state *)alg_state(ctx, w))->syncing = 0;
}

static void rerun(alg_ctx *ctx, int w, uint64_t R, int restarting)
{
    (void)restarting;
    ls_shared *sh = ctx->shared;
    ls_state *st = alg_state(ctx, w);
    if (st->syncing) {
        const int *mem = alg_coll_members(ctx, sh->coll, R, &st->k);
        const size_t off = alg_frozen_params(ctx, w);
        alg_coll_start_len(ctx, sh->coll, w, R, mem, st->k, alg_params(ctx, w) + off,
                           ctx->P - off);
    }
}

static void taken_back(alg_ctx *ctx, int w)
{
    ls_state *st = alg_state(ctx, w);
    st->syncing = 0;
    st->local = 0;
}

static const alg_catch_ops catch_ops = {
    .catch_off = offsetof(ls_state, cu),
    .round_off = offsetof(ls_state, round),
    .behind = behind,
    .rerun = rerun,
    .taken_back = taken_back,
};

static void ls_on_failure(alg_ctx *ctx, int peer, int failed)
{
    ls_shared *sh = ctx->shared;
    if (!sh->coll)
        gossip_on_failure(ctx, peer, failed);
    else
        alg_catchup_declared(ctx, &sh->cu, peer, failed);
}

static void ls_on_return(alg_ctx *ctx, void *state, int i)
{
    ls_state *st = state;
    ls_shared *sh = ctx->shared;
    if (!sh->coll) {
        gossip_on_return(ctx, st, i);
        return;
    }
    if (st->cu.catching)
        alg_abort_step(ctx, i);
    else if (st->syncing)   /* what it sent inside the all-reduce may be lost */
        alg_catchup_reform(ctx, &sh->cu, -1);
}

static void ls_describe_wait(const alg_ctx *ctx, const void *state, int i, char *buf,
                             size_t size)
{
    const ls_state *st = state;
    const ls_shared *sh = ctx->shared;
    if (alg_catchup_describe(ctx, &sh->cu, i, buf, size))
        return;
    if (alg_is_computing(ctx, i))
        snprintf(buf, size, "its step");
    else if (!st->syncing)
        buf[0] = '\0';
    else if (sh->coll)
        alg_coll_describe_wait(sh->coll, i, buf, size);
    else
        snprintf(buf, size, "%d of %d neighbour models of gossip round %llu",
                 alg_nbr_missing(ctx, sh->nbr, &st->mbox, st->round, i),
                 degree(ctx, st->round, i), (unsigned long long)st->round);
}

const alg_type alg_localsgd = {
    .name = "local-sgd",
    .needs = ALG_CAN_FREEZE,
    .summary = "synchronous every H local steps, all-reduce or gossip (Stich 2019)",
    .state_size = sizeof(ls_state),
    .params = params,
    .check = ls_check,
    .shared_init = ls_shared_init,
    .shared_fini = ls_shared_fini,
    .init = ls_init,
    .on_start = ls_on_start,
    .on_step_done = ls_on_step_done,
    .on_message = ls_on_message,
    .on_timer = ls_on_timer,
    .on_failure = ls_on_failure,
    .on_return = ls_on_return,
    .describe_wait = ls_describe_wait,
    .fini = ls_fini,
};
