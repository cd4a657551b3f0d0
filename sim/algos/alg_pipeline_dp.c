/* alg_pipeline_dp.c -- pipeline x data parallel: r replicas of the
 * pipeline, node i running stage i mod p of replica i / p, each replica
 * on its own mini-batches; at a stage's update point (the last backward
 * of its mini-batch for gpipe, 1f1b and 2bw; every backward for
 * pipedream) the r nodes of the stage all-reduce the stage's summed
 * gradient over the network (alg_coll.c: ring, recursive doubling or
 * tree among those r nodes, messages of the stage's parameters x bytes
 * per parameter, or with the timing-only model the stage's share of
 * model.message_bytes) and each applies the mean over the replicas; the
 * stage starts its next operation only then (PipeDream-Flush and DAPPLE
 * with data parallelism; PipeDream-2BW's gradient averaged over the
 * stage's replicas per mini-batch, applied with its one-version delay).
 * With one replica the update is applied at once (no message).  It
 * decides neither the schedule nor the math (alg_pipeline.c,
 * alg_pipeline_math.c) nor what a failure does (alg_pipeline_fail.c:
 * the members of a round are the live replicas joined by then).
 */
#include "alg_pipeline_int.h"

#include <assert.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

double pp_stage_bytes(const alg_ctx *ctx, int s)
{
    const pp_shared *sh = ctx->shared;
    if (!ctx->P)
        return sh->stage_msg[s];
    return alg_param_bytes(ctx, alg_layer_param_off(ctx, sh->lo[s + 1] + 1)
                                - alg_layer_param_off(ctx, sh->lo[s] + 1));
}

void pp_dp_reduced(alg_ctx *ctx, int node, const double *sum, int k)
{
    pp_shared *sh = ctx->shared;
    pp_stage *st = alg_state(ctx, node);
    assert(st->reducing);
    st->reducing = 0;
    pp_fail_completed(ctx, node, sum, st->mt ? st->mt->len : 0, k);
    const double per = sh->sched == SCHED_PIPEDREAM ? 1.0 : (double)sh->m;
    if (st->mt)
        pp_math_apply(ctx, node, sum, per * k);
    pp_updated(ctx, node);
    pp_try_run(ctx, node);
}

/* The stage's all-reduce is complete at node: the mean is applied and
 * the node goes on. */
static void reduced(alg_ctx *ctx, int node, const double *sum, size_t len)
{
    (void)len;
    pp_dp_reduced(ctx, node, sum, ((pp_stage *)alg_state(ctx, node))->red_k);
}

int pp_dp_members(alg_ctx *ctx, int s, uint64_t round)
{
    pp_shared *sh = ctx->shared;
    int k = 0;
    for (int q = 0; q < sh->r; q++)
        if (!sh->alive || (sh->alive[q] && sh->join[q] <= round))
            sh->members[s * sh->r + k++] = q * sh->p + s;
    return k;
}

void pp_dp_start(alg_ctx *ctx, int node)
{
    pp_shared *sh = ctx->shared;
    pp_stage *st = alg_state(ctx, node);
    const int s = pp_stage_of(sh, node);
    static const double none = 0;
    size_t len = 0;
    const double *g = st->mt ? pp_math_contrib(ctx, node, &len) : &none;
    st->reducing = 1;
    st->red_k = pp_dp_members(ctx, s, st->updates);
    alg_coll_start_timed(ctx, sh->coll, node, st->updates, sh->members + (size_t)s * sh->r,
                         st->red_k, g, len, sh->stage_msg[s]);
}

int pp_dp_init(alg_ctx *ctx)
{
    pp_shared *sh = ctx->shared;
    if (sh->r == 1)
        return 0;
    sh->members = malloc((size_t)sh->p * (size_t)sh->r * sizeof *sh->members);
    if (!sh->members)
        return -1;
    /* one collective for every stage (a node is in its own stage's only),
     * as long as the largest stage */
    size_t len = 0;
    for (int s = 0; s < sh->p && ctx->P; s++) {
        const size_t ls = alg_layer_param_off(ctx, sh->lo[s + 1] + 1)
                        - alg_layer_param_off(ctx, sh->lo[s] + 1);
        if (ls > len)
            len = ls;
    }
    sh->coll = alg_coll_create(ctx, (alg_coll_kind)(int)ctx->param[PP_COLLECTIVE], len, PTAG_COLL,
                               reduced);
    return sh->coll ? 0 : -1;
}

void pp_dp_fini(alg_ctx *ctx)
{
    pp_shared *sh = ctx->shared;
    alg_coll_destroy(ctx, sh->coll);
    free(sh->members);
    sh->coll = NULL;
    sh->members = NULL;
}

void pp_dp_update(alg_ctx *ctx, int node)
{
    pp_shared *sh = ctx->shared;
    pp_stage *st = alg_state(ctx, node);
    if (sh->r == 1) {
        if (st->mt)
            pp_math_apply(ctx, node, NULL, sh->sched == SCHED_PIPEDREAM ? 1.0 : (double)sh->m);
        pp_updated(ctx, node);
        return;
    }
    pp_dp_start(ctx, node);
}

int pp_dp_on_message(alg_ctx *ctx, int node, const cl_msg *msg)
{
    pp_shared *sh = ctx->shared;
    if (!sh->coll || msg->tag != PTAG_COLL)
        return pp_fail_on_message(ctx, node, msg);
    return alg_coll_on_message(ctx, sh->coll, node, msg);
}

/* The run stopped: every collective abandoned (its mail released). */
void pp_dp_abort(alg_ctx *ctx)
{
    pp_shared *sh = ctx->shared;
    if (!sh->coll)
        return;
    alg_coll_new_epoch(ctx, sh->coll);
    for (int i = 0; i < ctx->n; i++)
        ((pp_stage *)alg_state(ctx, i))->reducing = 0;
}

void pp_dp_describe_wait(const alg_ctx *ctx, int node, char *buf, size_t size)
{
    const pp_shared *sh = ctx->shared;
    const pp_stage *st = alg_state(ctx, node);
    char w[256];
    alg_coll_describe_wait(sh->coll, node, w, sizeof w);
    snprintf(buf, size, "the all-reduce of stage %d's gradient (update %llu): %s",
             pp_stage_of(sh, node), (unsigned long long)st->updates, w);
}
