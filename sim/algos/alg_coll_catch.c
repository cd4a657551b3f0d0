/* alg_coll_catch.c -- the failure recovery every all-reduce protocol
 * shares (allreduce, eager, local-sgd, comdml; alg_coll.h and
 * docs/algorithms.md, "When a node fails"): re-forming the collective
 * among the live members in a new epoch, catching a node up by a live
 * member's model of a round (a node declared back, or one left behind at
 * a re-formation), serving that model from the first member to enter the
 * round, and taking it in.  What each protocol stops, restarts or resets
 * goes through its hooks (alg_catch_ops); this file runs no step, prices
 * nothing beyond the model message and owns no memory.
 */
#include <stdio.h>
#include <string.h>
#include "alg_coll.h"

static alg_catch *catch_of(const alg_ctx *ctx, const alg_catchup *cu, int node)
{
    return (alg_catch *)((char *)alg_state(ctx, node) + cu->ops->catch_off);
}

static uint64_t *round_of(const alg_ctx *ctx, const alg_catchup *cu, int node)
{
    return (uint64_t *)((char *)alg_state(ctx, node) + cu->ops->round_off);
}

void alg_catchup_init(alg_catchup *cu, const alg_catch_ops *ops, alg_coll *coll, uint32_t tag)
{
    cu->ops = ops;
    cu->coll = coll;
    cu->tag = tag;
    cu->n_catching = 0;
}

void alg_catchup_serve(alg_ctx *ctx, alg_catchup *cu, int from)
{
    if (!cu->n_catching)
        return;
    uint64_t r = *round_of(ctx, cu, from);
    cl_buf *x = NULL;
    for (int w = 0; w < ctx->n; w++) {
        alg_catch *c = catch_of(ctx, cu, w);
        if (w == from || !c->catching || c->served || c->want != r)
            continue;
        if (!x)
            x = alg_snapshot(ctx, from);
        alg_send(ctx, from, w, cu->tag, c->want, x, alg_param_bytes(ctx, ctx->P));
        c->served = 1;
    }
    if (x)
        alg_buf_put(ctx, x);
}

void alg_catchup_reform(alg_ctx *ctx, alg_catchup *cu, int restarting)
{
    const alg_catch_ops *ops = cu->ops;
    if (ops->new_epoch)
        ops->new_epoch(ctx);
    else
        alg_coll_new_epoch(ctx, cu->coll);
    int ahead = -1;
    for (int w = 0; w < ctx->n; w++)
        if (!alg_is_failed(ctx, w) && !catch_of(ctx, cu, w)->catching
            && (ahead < 0 || *round_of(ctx, cu, w) > *round_of(ctx, cu, ahead)))
            ahead = w;
    if (ahead < 0)
        return;
    uint64_t R = *round_of(ctx, cu, ahead);
    for (int w = 0; w < ctx->n; w++) {
        if (alg_is_failed(ctx, w))
            continue;
        alg_catch *c = catch_of(ctx, cu, w);
        if (c->catching || *round_of(ctx, cu, w) < R) {
            int was = c->catching;
            if (!was)
                cu->n_catching++;
            if (ops->behind)
                ops->behind(ctx, w, was);
            if (!was || c->want <= R) {   /* a model of R serves it */
                c->catching = 1;
                c->want = R;
                c->served = 0;
                alg_coll_set_join(cu->coll, w, R);
            }
        } else if (ops->rerun) {
            ops->rerun(ctx, w, R, w == restarting);
        }
        if (ops->after)
            ops->after(ctx, w);
    }
    alg_catchup_serve(ctx, cu, ahead);
}

void alg_catchup_declared(alg_ctx *ctx, alg_catchup *cu, int node, int failed)
{
    const alg_catch_ops *ops = cu->ops;
    alg_catch *c = catch_of(ctx, cu, node);
    alg_coll_members_changed(cu->coll);
    if (c->catching) {
        c->catching = 0;
        cu->n_catching--;
    }
    if (ops->declared)
        ops->declared(ctx, node);
    if (failed) {
        alg_catchup_reform(ctx, cu, -1);
        return;
    }
    int any = 0;
    uint64_t R = 0;
    for (int w = 0; w < ctx->n; w++) {
        if (w == node || alg_is_failed(ctx, w) || catch_of(ctx, cu, w)->catching)
            continue;
        uint64_t r = *round_of(ctx, cu, w);
        if (!any || r > R) {
            R = r;
            any = 1;
        }
    }
    if (!any)
        return;   /* nobody to take it back: it goes on alone */
    c->catching = 1;
    c->served = 0;
    c->want = R + 1;
    if (ops->taken_back)
        ops->taken_back(ctx, node);
    cu->n_catching++;
    alg_coll_set_join(cu->coll, node, R + 1);
}

int alg_catchup_take(alg_ctx *ctx, alg_catchup *cu, int node, const cl_msg *m)
{
    alg_catch *c = catch_of(ctx, cu, node);
    if (!c->catching || m->round != c->want)
        return 0;
    memcpy(alg_params(ctx, node), m->payload->data, ctx->P * sizeof(double));
    *round_of(ctx, cu, node) = c->want;
    c->catching = 0;
    cu->n_catching--;
    return 1;
}

int alg_catchup_describe(const alg_ctx *ctx, const alg_catchup *cu, int node, char *buf,
                         size_t size)
{
    const alg_catch *c = catch_of(ctx, cu, node);
    if (!c->catching)
        return 0;
    snprintf(buf, size, "a live member's model of round %llu", (unsigned long long)c->want);
    return 1;
}
