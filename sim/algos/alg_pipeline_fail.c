/* alg_pipeline_fail.c -- what the pipeline does when a node fails or
 * comes back.  With replicas (r >= 2) a node declared failed drops its
 * whole replica from the data-parallel group: the replica's nodes abandon
 * their work (its in-flight micro-batches and its share of the current
 * mini-batch are lost), and every stage's all-reduce in progress
 * re-forms among the live replicas (a new epoch of the collective, as
 * alg_coll_catch.c does for one-model protocols, at the unit of a
 * replica): a survivor whose round another live node of its stage had
 * already completed gets that round's sum from it (one message of the
 * stage's gradient), the others re-run the round among the survivors, so
 * the survivors of a stage keep the same bits.  A node back up (its
 * replica's nodes all up and none declared failed) takes its replica
 * back with the synchronous schedules (gpipe, 1f1b): each of its stages
 * rejoins at round J, one past the most advanced stage 0's, waiting for
 * the stage's parameters after J updates from a live node of the stage
 * (one message; its momentum restarts at zero), its micro-batches from
 * mini-batch J on; the asynchronous schedules' dropped replicas stay out
 * (their weight versions cannot be handed over at a mini-batch boundary).
 * A node back before it was declared lost its stage's state: its replica
 * is dropped then (and taken back at once when the others are up).
 * With one replica and gpipe or 1f1b, a failure halts the pipeline (every
 * stage drops its in-flight micro-batches) and once every node is up and
 * none declared failed the mini-batch restarts from stage 0, each stage
 * on its weights of the last flush (a stage that had applied the lost
 * mini-batch's update rolls back to its checkpoint).  With one replica
 * and an asynchronous schedule, or when the last replica goes, the
 * pipeline stops for good (the run ends as stalled; alg_pipeline.c's
 * pp_stop_pipeline).  It decides no schedule, no math and no collective
 * pattern.
 */
#include "alg_pipeline_int.h"

#include <assert.h>
#include <stdlib.h>
#include <string.h>

static pp_stage *stage_st(const alg_ctx *ctx, int node) { return alg_state(ctx, node); }

int pp_fail_init(alg_ctx *ctx)
{
    pp_shared *sh = ctx->shared;
    if (sh->r == 1)
        return 0;
    sh->alive = malloc((size_t)sh->r);
    sh->join = calloc((size_t)sh->r, sizeof *sh->join);
    sh->last_sum = calloc((size_t)sh->p, sizeof *sh->last_sum);
    sh->last_round = calloc((size_t)sh->p, sizeof *sh->last_round);
    sh->last_k = calloc((size_t)sh->p, sizeof *sh->last_k);
    if (!sh->alive || !sh->join || !sh->last_sum || !sh->last_round || !sh->last_k)
        return -1;
    memset(sh->alive, 1, (size_t)sh->r);
    sh->live = sh->r;
    for (int s = 0; s < sh->p; s++) {
        size_t len = 1;
        if (ctx->P)
            len += alg_layer_param_off(ctx, sh->lo[s + 1] + 1) - alg_layer_param_off(ctx, sh->lo[s] + 1);
        if (!(sh->last_sum[s] = malloc(len * sizeof(double))))
            return -1;
    }
    return 0;
}

void pp_fail_fini(alg_ctx *ctx)
{
    pp_shared *sh = ctx->shared;
    if (sh->last_sum)
        for (int s = 0; s < sh->p; s++)
            free(sh->last_sum[s]);
    free(sh->last_sum);
    free(sh->alive);
    free(sh->join);
    free(sh->last_round);
    free(sh->last_k);
    sh->last_sum = NULL;
    sh->alive = NULL;
    sh->join = NULL;
    sh->last_round = NULL;
    sh->last_k = NULL;
}

void pp_fail_completed(alg_ctx *ctx, int node, const double *sum, size_t len, int k)
{
    pp_shared *sh = ctx->shared;
    if (!sh->last_sum)
        return;
    const int s = pp_stage_of(sh, node);
    const uint64_t u = stage_st(ctx, node)->updates;
    if (sh->last_round[s] == u + 1)
        return;   /* another member completed it first: the same bits */
    if (len)
        memcpy(sh->last_sum[s], sum, len * sizeof *sum);
    sh->last_round[s] = u + 1;
    sh->last_k[s] = k;
}

/* A live node of stage s whose updates reached u (it can serve a round
 * u - 1 sum or the parameters after u updates), or -1. */
static int live_at(const alg_ctx *ctx, int s, uint64_t u)
{
    const pp_shared *sh = ctx->shared;
    for (int q = 0; q < sh->r; q++) {
        const int node = q * sh->p + s;
        const pp_stage *st = stage_st(ctx, node);
        if (sh->alive[q] && !st->joining && st->updates >= u && alg_is_up(ctx, node))
            return node;
    }
    return -1;
}

/* Node, rejoining, gets its stage's parameters after join updates from
 * `from` (a whole stage: its parameters x bytes per parameter). */
static void serve_params(alg_ctx *ctx, int from, int node)
{
    pp_shared *sh = ctx->shared;
    pp_stage *st = stage_st(ctx, node);
    cl_buf *b = NULL;
    if (st->mt) {
        b = alg_buf_get_len(ctx, st->mt->len);
        memcpy(b->data, alg_params_const(ctx, from) + st->mt->off, st->mt->len * sizeof(double));
    }
    st->joining = 2;
    alg_send(ctx, from, node, PTAG_PARAMS, st->updates, b,
             pp_stage_bytes(ctx, pp_stage_of(sh, node)));
    if (b)
        alg_buf_put(ctx, b);
}

/* Stage s's all-reduce re-forms among the live replicas (the collective
 * in a new epoch: nobody is in it). */
static void reform(alg_ctx *ctx, int s)
{
    pp_shared *sh = ctx->shared;
    for (int q = 0; q < sh->r; q++) {
        const int node = q * sh->p + s;
        pp_stage *st = stage_st(ctx, node);
        if (!sh->alive[q])
            continue;
        if (st->joining) {   /* its donor may be gone: served again */
            const int from = live_at(ctx, s, st->updates);
            if (from >= 0)
                serve_params(ctx, from, node);
            else
                st->joining = 1;
            continue;
        }
        if (!st->reducing)
            continue;
        const int from = live_at(ctx, s, st->updates + 1);
        if (from >= 0 && sh->last_round[s] == st->updates + 1) {
            cl_buf *b = NULL;
            if (st->mt) {
                b = alg_buf_get_len(ctx, st->mt->len);
                memcpy(b->data, sh->last_sum[s], st->mt->len * sizeof(double));
            }
            alg_send(ctx, from, node, PTAG_SUM, st->updates, b, pp_stage_bytes(ctx, s));
            if (b)
                alg_buf_put(ctx, b);
            sh->sums_sent++;
        } else {
            pp_dp_start(ctx, node);
        }
    }
}

/* Replica q leaves the data-parallel group. */
static void drop_replica(alg_ctx *ctx, int q, int by)
{
    pp_shared *sh = ctx->shared;
    if (!sh->alive[q])
        return;
    sh->alive[q] = 0;
    sh->live--;
    sh->dropped++;
    for (int s = 0; s < sh->p; s++) {
        const int node = q * sh->p + s;
        pp_stage *st = stage_st(ctx, node);
        if (st->busy)
            alg_abort_step(ctx, node);
        st->busy = st->reducing = st->joining = 0;
        st->out = 1;
    }
    if (sh->live == 0) {
        pp_stop_pipeline(ctx, by);
        return;
    }
    alg_coll_new_epoch(ctx, sh->coll);
    for (int s = 0; s < sh->p; s++)
        reform(ctx, s);
}

/* Replica q is back: each of its stages rejoins at round J. */
static void try_rejoin(alg_ctx *ctx, int q)
{
    pp_shared *sh = ctx->shared;
    if (sh->alive[q] || sh->stopped || (sh->sched != SCHED_GPIPE && sh->sched != SCHED_1F1B))
        return;
    for (int s = 0; s < sh->p; s++)
        if (!alg_is_up(ctx, q * sh->p + s) || alg_is_failed(ctx, q * sh->p + s))
            return;
    uint64_t J = 0;
    for (int k = 0; k < sh->r; k++)
        if (sh->alive[k] && stage_st(ctx, k * sh->p)->updates + 1 > J)
            J = stage_st(ctx, k * sh->p)->updates + 1;
    sh->alive[q] = 1;
    sh->live++;
    sh->rejoined++;
    sh->join[q] = J;
    for (int s = 0; s < sh->p; s++) {
        const int node = q * sh->p + s;
        pp_stage *st = stage_st(ctx, node);
        st->out = 0;
        st->joining = 1;
        st->updates = J;
        st->next = J * 2 * (uint64_t)sh->m;
        st->mb_floor = J * (uint64_t)sh->m;
        st->in_flight = 0;
        memset(st->fwd_in, 0, sh->R);
        memset(st->grad_in, 0, sh->R);
        if (st->mt)
            memset(st->mt->acc + st->mt->off, 0, st->mt->len * sizeof(double));
        const int from = live_at(ctx, s, J);
        if (from >= 0)
            serve_params(ctx, from, node);
    }
}

/* After node's update: the joiners of its stage waiting for the
 * parameters of this many updates are served. */
static void serve_joiners(alg_ctx *ctx, int node)
{
    pp_shared *sh = ctx->shared;
    const int s = pp_stage_of(sh, node);
    const uint64_t u = stage_st(ctx, node)->updates;
    for (int q = 0; q < sh->r; q++) {
        pp_stage *st = stage_st(ctx, q * sh->p + s);
        if (sh->alive[q] && st->joining == 1 && st->updates == u)
            serve_params(ctx, node, q * sh->p + s);
    }
}

/* ---- one replica: halt, then restart the mini-batch ---- */

static int restartable(const pp_shared *sh)
{
    return sh->r == 1 && (sh->sched == SCHED_GPIPE || sh->sched == SCHED_1F1B);
}

static void clear_stage(const pp_shared *sh, pp_stage *st)
{
    st->busy = 0;
    st->in_flight = 0;
    st->cur_bwd = 0;
    memset(st->fwd_in, 0, sh->R);
    memset(st->grad_in, 0, sh->R);
    if (st->mt)
        memset(st->mt->acc + st->mt->off, 0, st->mt->len * sizeof(double));
}

/* Every stage drops its in-flight micro-batches (stage 0's backwards of
 * the lost mini-batch are not counted done: their gradients are lost). */
static void halt(alg_ctx *ctx, int by)
{
    pp_shared *sh = ctx->shared;
    if (sh->halted || sh->stopped)
        return;
    sh->halted = 1;
    sh->halted_by = by;
    sh->halted_at = alg_now(ctx);
    sh->done_mb -= stage_st(ctx, 0)->cur_bwd;
    for (int i = 0; i < sh->p; i++) {
        pp_stage *st = stage_st(ctx, i);
        if (st->busy)
            alg_abort_step(ctx, i);
        clear_stage(sh, st);
    }
}

/* Every node up and none declared failed: the stages go back to the last
 * flush (u updates: stage 0's, the fewest; a stage one ahead rolls back
 * to its checkpoint) and start a mini-batch numbered past any begun, so
 * that what was in flight before is ignored. */
static void try_restart(alg_ctx *ctx)
{
    pp_shared *sh = ctx->shared;
    if (!sh->halted || sh->stopped)
        return;
    for (int i = 0; i < sh->p; i++)
        if (!alg_is_up(ctx, i) || alg_is_failed(ctx, i))
            return;
    uint64_t u = UINT64_MAX, M = 0;
    const uint64_t two_m = 2 * (uint64_t)sh->m;
    for (int i = 0; i < sh->p; i++) {
        const pp_stage *st = stage_st(ctx, i);
        if (st->updates < u)
            u = st->updates;
        if (st->next / two_m + 1 > M)
            M = st->next / two_m + 1;
    }
    for (int i = 0; i < sh->p; i++) {
        pp_stage *st = stage_st(ctx, i);
        if (st->updates > u) {
            assert(st->updates == u + 1);
            if (st->mt)
                memcpy(alg_params(ctx, i) + st->mt->off, st->mt->ckpt,
                       st->mt->len * sizeof(double));
            st->updates = u;
        }
        clear_stage(sh, st);
        st->next = M * two_m;
        st->mb_floor = M * (uint64_t)sh->m;
    }
    sh->halted = 0;
    sh->restarts++;
    for (int i = 0; i < sh->p; i++)
        pp_try_run(ctx, i);
}

void pp_fail_declared(alg_ctx *ctx, int peer, int failed)
{
    pp_shared *sh = ctx->shared;
    if (sh->r == 1) {
        if (failed && restartable(sh))
            halt(ctx, peer);
        else if (failed)
            pp_stop_pipeline(ctx, peer);
        return;   /* back: its on_return restarts */
    }
    if (failed && !sh->stopped)
        drop_replica(ctx, pp_replica_of(sh, peer), peer);
}

void pp_fail_return(alg_ctx *ctx, int node)
{
    pp_shared *sh = ctx->shared;
    if (sh->r == 1 && restartable(sh)) {
        halt(ctx, node);   /* back before it was declared: its stage's state is gone */
        try_restart(ctx);
        return;
    }
    if (sh->r == 1) {
        pp_stop_pipeline(ctx, node);
        return;
    }
    if (sh->stopped)
        return;
    const int q = pp_replica_of(sh, node);
    drop_replica(ctx, q, node);   /* back before it was declared: its state is gone */
    try_rejoin(ctx, q);
}

int pp_fail_on_message(alg_ctx *ctx, int node, const cl_msg *msg)
{
    pp_shared *sh = ctx->shared;
    if (msg->tag != PTAG_SUM && msg->tag != PTAG_PARAMS)
        return 0;
    pp_stage *st = stage_st(ctx, node);
    const int s = pp_stage_of(sh, node);
    if (st->out || msg->round != st->updates)
        return 1;   /* stale: an earlier round's, or for a dropped replica */
    if (msg->tag == PTAG_SUM) {
        /* it re-ran the round since (its server went): the re-run decides */
        if (!st->reducing || alg_coll_active(sh->coll, node))
            return 1;
        pp_dp_reduced(ctx, node, st->mt ? msg->payload->data : NULL, sh->last_k[s]);
        return 1;
    }
    if (!st->joining)
        return 1;
    if (st->mt) {
        memcpy(alg_params(ctx, node) + st->mt->off, msg->payload->data,
               st->mt->len * sizeof(double));
        alg_reset_momentum(ctx, node);
    }
    st->joining = 0;
    pp_try_run(ctx, node);
    return 1;
}

void pp_fail_updated(alg_ctx *ctx, int node)
{
    const pp_shared *sh = ctx->shared;
    if (sh->alive)
        serve_joiners(ctx, node);
}
