/* alg_comdml_fail.c -- ComDML's failures (see alg_comdml.c and
 * docs/algorithms.md): a pair broken by a declared failure, a catch-up or
 * a partner's return (the slow agent then trains its back part itself,
 * the helper drops it), and the all-reduce's re-formation among the live
 * members with catching up by a live member's model, as local-sgd's.  It
 * does not run a round's steps or price messages.
 */
#include "alg_comdml_int.h"

/* ---- pairs broken (failures) ---- */

/* Slow agent j loses its helper: it trains its back part itself. */
void comdml_fall_back(alg_ctx *ctx, int j)
{
    cd_state *st = alg_state(ctx, j);
    if (st->role != SLOW || st->fallback || st->weights_in)
        return;
    st->fallback = 1;
    ((cd_shared *)ctx->shared)->fallbacks++;
    comdml_next(ctx, j);
}

/* Helper k drops its slow partner. */
void comdml_drop(alg_ctx *ctx, int k)
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
    comdml_next(ctx, k);
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
        comdml_fall_back(ctx, p);
    else
        comdml_drop(ctx, p);
}

/* ---- failures, the all-reduce (as local-sgd's: alg_coll_catch.c) ---- */

/* Node `from` just entered its round: it hands its model (the fresh
 * average) to every agent waiting for that round's model. */
void comdml_serve(alg_ctx *ctx, int from)
{
    alg_catchup_serve(ctx, &((cd_shared *)ctx->shared)->cu, from);
}

/* Re-formation (alg_catchup_reform): every live member abandons the
 * averaging in progress and re-runs round R, the most advanced, among the
 * live members; one left behind leaves its pair, stops its step and takes
 * the model of the first member at R. */
static void behind(alg_ctx *ctx, int w, int was_catching)
{
    cd_state *st = alg_state(ctx, w);
    if (was_catching)
        return;
    leave_pair(ctx, w);
    alg_abort_step(ctx, w);
    st->busy = 0;
    st->syncing = 0;
}

static void rerun(alg_ctx *ctx, int w, uint64_t R, int restarting)
{
    (void)restarting;
    cd_shared *sh = ctx->shared;
    cd_state *st = alg_state(ctx, w);
    if (st->syncing) {
        const int *mem = alg_coll_members(ctx, sh->coll, R, &st->k);
        alg_coll_start(ctx, sh->coll, w, R, mem, st->k, alg_params(ctx, w));
    }
}

static void taken_back(alg_ctx *ctx, int w)
{
    ((cd_state *)alg_state(ctx, w))->syncing = 0;
}

const alg_catch_ops comdml_catch_ops = {
    .catch_off = offsetof(cd_state, cu),
    .round_off = offsetof(cd_state, round),
    .behind = behind,
    .rerun = rerun,
    .declared = leave_pair,   /* declared either way: its partner goes on alone */
    .taken_back = taken_back,
};

void comdml_on_failure(alg_ctx *ctx, int peer, int failed)
{
    alg_catchup_declared(ctx, &((cd_shared *)ctx->shared)->cu, peer, failed);
}

/* Back up: a pair still open is broken (what was sent to or by it while
 * it was down may be lost), the partner told so; the step it was in comes
 * back by itself (faults.step). */
void comdml_on_return(alg_ctx *ctx, void *state, int i)
{
    cd_state *st = state;
    st->tainted = 1;
    if (st->cu.catching) {
        alg_abort_step(ctx, i);
        st->busy = 0;
        return;
    }
    if (pair_open(st)) {
        alg_send(ctx, i, st->partner, TAG_BREAK, st->round, NULL, 0);
        if (st->role == SLOW)
            comdml_fall_back(ctx, i);
        else
            comdml_drop(ctx, i);
        return;
    }
    if (st->syncing)   /* what it sent inside the all-reduce may be lost */
        alg_catchup_reform(ctx, &((cd_shared *)ctx->shared)->cu, -1);
}

