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

/* ---- failures, the all-reduce (as local-sgd's; docs/algorithms.md) ---- */

/* Node `from` just entered its round: it hands its model (the fresh
 * average) to every agent waiting for that round's model. */
void comdml_serve(alg_ctx *ctx, int from)
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
    comdml_serve(ctx, ahead);
}

void comdml_on_failure(alg_ctx *ctx, int peer, int failed)
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
void comdml_on_return(alg_ctx *ctx, void *state, int i)
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
            comdml_fall_back(ctx, i);
        else
            comdml_drop(ctx, i);
        return;
    }
    if (st->syncing)   /* what it sent inside the all-reduce may be lost */
        reform(ctx);
}

