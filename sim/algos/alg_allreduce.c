/* alg_allreduce.c -- synchronous data-parallel SGD whose gradient
 * all-reduce runs as real messages (alg_coll.c): ring (Patarasuk & Yuan
 * 2009), recursive doubling or binomial tree (Thakur, Rabenseifner & Gropp
 * 2005), chosen with the parameter `collective`.
 *
 * Timing: each node computes its gradient (alg_start_step); when its step
 * ends it joins the all-reduce of round k.  A node's part of the collective
 * waits only for the messages the pattern makes it wait for, so a slow node
 * or link holds the others back as far as it would in a real collective.
 * When a node has the sum it applies x <- x - lr * sum / n and starts its
 * next step at once.  On a homogeneous network one all-reduce of M bytes
 * over n nodes takes exactly 2(n-1)a + 2(n-1)/n M/B (ring),
 * log2(n)(a + M/B) (recursive doubling, n a power of two) and
 * 2 log2(n)(a + M/B) (tree, n a power of two).
 *
 * Overlap (`overlap` on, the default; PyTorch DDP's wait-free backward
 * pass): the gradient is cut into buckets of `bucket_bytes`, the last
 * parameters first; bucket k is released by a step mark when the backward
 * pass has passed it (forward_share + (1 - forward_share) C_k / P of the
 * step's work) and its all-reduce starts then (`bucket_collectives`
 * sequential: after the node's previous bucket, as one NCCL communicator
 * runs them; concurrent: at once, sharing the links).  The update is
 * applied once every bucket is reduced.  One bucket, or overlap off, is the
 * plain path above, event for event.  On a homogeneous ring one iteration
 * lasts max_k (r_k + A_k + ... + A_{m-1}), r_k the release time, A_k
 * bucket k's all-reduce time (docs/algorithms.md).
 *
 * Speed-proportional batches (`batching: "speed"`, alg_batchplan.c, the
 * same parameters as ps-sync): worker i computes on b_i samples in
 * proportion to its per-sample speed and contributes b_i g_i to the
 * all-reduce; a node with the sum applies x <- x - lr * sum / B, B the
 * sum of the batches of the round's members (every node knows the plan,
 * as a real job that planned it does), so the update is the batch-weighted
 * mean sum b_i g_i / sum b_i.  The plan changes when a round is first
 * completed, before any member starts its step of the next round, so
 * every member of a round computes on the same plan.
 *
 * Simplified: members are in node order 0..n-1 whatever the topology (the
 * topology is not used).
 */
#include "alg_coll.h"
#include "alg_batchplan.h"

#include <assert.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { P_COLLECTIVE, P_OVERLAP, P_BUCKET_BYTES, P_FORWARD_SHARE, P_BUCKET_COLL, P_BP };
enum { TAG_COLL = 1 };   /* bucket k's collective: TAG_COLL + 1 + k */
enum { TAG_SYNC = 0 };   /* a live member's model, to a worker taken back */
enum { OVL_OFF, OVL_ON };
enum { BC_SEQUENTIAL, BC_CONCURRENT };

static const char *const overlap_names[] = { "off", "on", NULL };
static const char *const bucket_coll_names[] = { "sequential", "concurrent", NULL };

static const alg_param_spec params[] = {
    { "collective", ALG_PARAM_CHOICE, ALG_COLL_RING, 0, 0, alg_coll_kind_names,
      "the all-reduce pattern" },
    { "overlap", ALG_PARAM_CHOICE, OVL_ON, 0, 0, overlap_names,
      "on: buckets are reduced during the backward pass; off: one all-reduce after the step" },
    { "bucket_bytes", ALG_PARAM_REAL, 26214400, 1, 1e300, NULL,
      "bytes per gradient bucket (DDP's bucket_cap_mb)" },
    /* backward costs about twice the forward (two matrix products per
     * layer against one), so the forward pass is a third of the step */
    { "forward_share", ALG_PARAM_REAL, 1.0 / 3.0, 0, 0.999999, NULL,
      "fraction of the step that is the forward pass (before any bucket is ready)" },
    { "bucket_collectives", ALG_PARAM_CHOICE, BC_SEQUENTIAL, 0, 0, bucket_coll_names,
      "bucket all-reduces one after another or all at once" },
    ALG_BP_PARAMS,
    { NULL, 0, 0, 0, 0, NULL, NULL },
};

/* The buckets, DDP's order: bucket 0 holds the model's last parameters. */
typedef struct bucket {
    size_t    off, len;     /* parameters [off, off + len) */
    double    bytes;        /* timing-only model: its share of the message */
    alg_coll *coll;
} bucket;

typedef struct ar_shared {
    alg_coll *coll;         /* one collective of the whole gradient */
    int       m;            /* buckets when overlapping (>= 2), else 0 */
    bucket   *b;
    double   *marks;        /* m - 1 release fractions of the step */
    alg_catchup cu;         /* failures: re-formation, catching up */
    alg_bp    bp;           /* the workers' batches (uniform: alg_batch each) */
    uint64_t  planned;      /* rounds completed by some node (the plan's iterations) */
} ar_shared;

typedef struct ar_state {
    uint64_t round;
    /* buckets: released by the backward pass, started, reduced */
    int           released, started, reduced;
    const double *grad;     /* the step's gradient (valid until the next step) */
    double       *sum;      /* the reduced buckets, assembled (P doubles) */
    int           stepping; /* its step of `round` is in progress (or restarts) */
    int           k;        /* members of the round it reduces in */
    /* taken back, or behind at a re-formation: waits for a live member's
     * model of a round */
    alg_catch     cu;
    /* speed batches: its batch in rounds of each parity, and b g */
    size_t        bsz[2];
    double       *scaled;
} ar_state;

static void serve(alg_ctx *ctx, int from);
static alg_coll *mcoll(const ar_shared *sh);
static const alg_catch_ops catch_ops;
static const int *members(alg_ctx *ctx, uint64_t round, int *k);

/* What sum is divided by: the members (each contributed g), or with
 * speed batches the sum of their batches of the round (each contributed
 * b g). */
static double divisor(alg_ctx *ctx, const ar_state *st)
{
    ar_shared *sh = ctx->shared;
    if (!sh->bp.on)
        return (double)st->k;
    int k;
    const int *mem = members(ctx, st->round, &k);
    double B = 0;
    for (int j = 0; j < k; j++)
        B += (double)((const ar_state *)alg_state(ctx, mem[j]))->bsz[st->round & 1];
    return B;
}

/* Node completed its round: the first to complete a round re-plans the
 * batches (alg_batchplan.c), before any member starts the next step. */
static void round_done(alg_ctx *ctx, ar_state *st)
{
    ar_shared *sh = ctx->shared;
    st->round++;
    if (st->round > sh->planned) {
        sh->planned = st->round;
        alg_bp_iteration_done(ctx, &sh->bp, st->round);
    }
}

/* Node's contribution of parameters [off, off + len): its gradient, or
 * with speed batches b g (in its own buffer, kept until its next step). */
static const double *contrib(alg_ctx *ctx, ar_state *st, int i, size_t off, size_t len)
{
    ar_shared *sh = ctx->shared;
    if (!sh->bp.on)
        return st->grad + off;
    double b = alg_bp_weight(&sh->bp, i);
    for (size_t q = off; q < off + len; q++)
        st->scaled[q] = b * st->grad[q];
    return st->scaled + off;
}

static void start_step(alg_ctx *ctx, int i);

static void reduced(alg_ctx *ctx, int node, const double *sum, size_t len)
{
    ar_state *st = alg_state(ctx, node);
    if (len < ctx->P) {   /* the window [off, off + len) of its stage; the
                             update reads nothing outside it */
        memcpy(st->sum + alg_frozen_params(ctx, node), sum, len * sizeof(double));
        sum = st->sum;
    }
    alg_sgd_apply(ctx, node, alg_params(ctx, node), sum, divisor(ctx, st));
    round_done(ctx, st);
    serve(ctx, node);
    start_step(ctx, node);
}

/* Node's contribution of `round` into the one collective: its trainable
 * suffix only (alg_freeze_round), or with freeze.mode "grow" its stage's
 * block and head. */
static void start_coll(alg_ctx *ctx, ar_state *st, int i, uint64_t round, const double *grad)
{
    ar_shared *sh = ctx->shared;
    const int *mem = members(ctx, round, &st->k);
    const size_t off = alg_frozen_params(ctx, i);
    alg_coll_start_len(ctx, sh->coll, i, round, mem, st->k, grad + off,
                       alg_trainable_end(ctx, i) - off);
}

static void start_bucket(alg_ctx *ctx, ar_state *st, int i, int k)
{
    ar_shared *sh = ctx->shared;
    st->started++;
    const int *mem = members(ctx, st->round, &st->k);
    alg_coll_start(ctx, sh->b[k].coll, i, st->round, mem, st->k,
                   contrib(ctx, st, i, sh->b[k].off, sh->b[k].len));
}

static void start_step(alg_ctx *ctx, int i)
{
    ar_shared *sh = ctx->shared;
    ar_state *st = alg_state(ctx, i);
    st->stepping = 1;
    alg_freeze_round(ctx, i, st->round);   /* nothing without a freeze section */
    alg_bp_step_start(ctx, &sh->bp, i);
    st->bsz[st->round & 1] = (size_t)alg_bp_weight(&sh->bp, i);
    if (sh->m)
        alg_start_step_marks(ctx, i, sh->marks, sh->m - 1);
    else
        alg_start_step(ctx, i);
}

static void bucket_reduced(alg_ctx *ctx, int i, int k, const double *sum, size_t len)
{
    ar_shared *sh = ctx->shared;
    ar_state *st = alg_state(ctx, i);
    memcpy(st->sum + sh->b[k].off, sum, len * sizeof(double));
    st->reduced++;
    if (st->reduced == sh->m) {
        alg_sgd_apply(ctx, i, alg_params(ctx, i), st->sum, divisor(ctx, st));
        round_done(ctx, st);
        st->released = st->started = st->reduced = 0;
        serve(ctx, i);
        start_step(ctx, i);
        return;
    }
    /* sequential: the next released bucket goes once this one is done */
    if ((int)ctx->param[P_BUCKET_COLL] == BC_SEQUENTIAL && st->started < st->released)
        start_bucket(ctx, st, i, st->started);
}

/* The backward pass has released buckets 0 .. k. */
static void release(alg_ctx *ctx, ar_state *st, int i, int k, const double *grad)
{
    if (k < st->released)
        return;   /* a restarted step's mark: that bucket already went */
    st->grad = grad;
    st->released = k + 1;
    if ((int)ctx->param[P_BUCKET_COLL] == BC_CONCURRENT)
        while (st->started < st->released)
            start_bucket(ctx, st, i, st->started);
    else if (st->started == st->reduced)   /* none in progress */
        start_bucket(ctx, st, i, st->started);
}

/* DDP's buckets: filled from the last parameter backwards up to
 * bucket_bytes each (the first layers' remainder is the last bucket);
 * bucket k is released when the backward pass has passed it, at
 * forward_share + (1 - forward_share) (parameters of buckets 0..k) / P of
 * the step's work. */
static int make_buckets(alg_ctx *ctx, ar_shared *sh)
{
    double cap = ctx->param[P_BUCKET_BYTES], fs = ctx->param[P_FORWARD_SHARE];
    double total = alg_param_bytes(ctx, ctx->P);
    int timing = alg_timing_only(ctx);
    size_t per = 0;
    double mm;
    if (timing) {
        mm = ceil(total / cap);
    } else {
        double p = floor(cap / alg_param_bytes(ctx, 1));
        per = p < 1 ? 1 : p > (double)ctx->P ? ctx->P : (size_t)p;
        mm = ceil((double)ctx->P / (double)(per ? per : 1));
    }
    /* freezing: one collective over the trainable suffix (the buckets
     * are not cut at the frozen prefix) */
    if ((int)ctx->param[P_OVERLAP] == OVL_OFF || !(mm >= 2) || alg_freezing(ctx))
        return 0;
    if (mm > 65536)
        mm = 65536;   /* beyond this a bucket is smaller than any real layer */
    int m = (int)mm;
    if (timing)
        cap = total / m >= cap ? total / m : cap;
    else
        per = (ctx->P + (size_t)m - 1) / (size_t)m > per ? (ctx->P + (size_t)m - 1) / (size_t)m
                                                          : per;
    sh->b = calloc((size_t)m, sizeof *sh->b);
    sh->marks = malloc((size_t)m * sizeof *sh->marks);
    if (!sh->b || !sh->marks)
        return -1;
    sh->m = m;
    for (int k = 0; k < m; k++) {
        bucket *b = &sh->b[k];
        double cum;
        if (timing) {
            b->bytes = k < m - 1 ? cap : total - cap * (m - 1);
            cum = k < m - 1 ? cap * (k + 1) / total : 1.0;
        } else {
            size_t hi = ctx->P - (size_t)k * per;
            b->off = k < m - 1 ? hi - per : 0;
            b->len = hi - b->off;
            cum = (double)(ctx->P - b->off) / (double)ctx->P;
        }
        sh->marks[k] = fs + (1.0 - fs) * cum;
        b->coll = alg_coll_create_part(ctx, (alg_coll_kind)ctx->param[P_COLLECTIVE], b->len,
                                       TAG_COLL + 1 + (uint32_t)k, bucket_reduced, k, b->bytes);
        if (!b->coll)
            return -1;
    }
    return 0;
}

static int ar_check(const alg_ctx *ctx, char *err, size_t size)
{
    return alg_bp_check(ctx, P_BP, err, size);
}

static int ar_shared_init(alg_ctx *ctx)
{
    ar_shared *sh = calloc(1, sizeof *sh);
    if (!sh)
        return -1;
    ctx->shared = sh;
    if (alg_bp_init(&sh->bp, ctx, P_BP) != 0 || make_buckets(ctx, sh) != 0)
        return -1;
    if (!sh->m) {
        sh->coll = alg_coll_create(ctx, (alg_coll_kind)ctx->param[P_COLLECTIVE], ctx->P,
                                   TAG_COLL, reduced);
        if (!sh->coll)
            return -1;
    }
    alg_catchup_init(&sh->cu, &catch_ops, mcoll(sh), TAG_SYNC);
    return 0;
}

static void ar_shared_fini(alg_ctx *ctx)
{
    ar_shared *sh = ctx->shared;
    if (!sh)
        return;
    alg_coll_destroy(ctx, sh->coll);
    alg_bp_fini(&sh->bp);
    if (sh->b)
        for (int k = 0; k < sh->m; k++)
            alg_coll_destroy(ctx, sh->b[k].coll);
    free(sh->b);
    free(sh->marks);
    free(sh);
}

static int ar_init(alg_ctx *ctx, void *state, int node)
{
    (void)node;
    ar_state *st = state;
    const ar_shared *sh = ctx->shared;
    size_t P = ctx->P ? ctx->P : 1;
    if (sh->bp.on && !(st->scaled = malloc(P * sizeof(double))))
        return -1;
    if (!sh->m && !alg_freezing(ctx))
        return 0;
    st->sum = calloc(1, P * sizeof(double));   /* with freezing its frozen prefix stays 0 */
    return st->sum ? 0 : -1;
}

static void ar_fini(alg_ctx *ctx, void *state, int node)
{
    (void)ctx;
    (void)node;
    ar_state *st = state;
    free(st->sum);
    free(st->scaled);
}

static void ar_on_start(alg_ctx *ctx, void *state, int i)
{
    (void)state;
    start_step(ctx, i);
}

static void ar_on_step_mark(alg_ctx *ctx, void *state, int i, int k, const double *grad)
{
    release(ctx, state, i, k, grad);
}

static void ar_on_step_done(alg_ctx *ctx, void *state, int i, const double *grad)
{
    ar_state *st = state;
    ar_shared *sh = ctx->shared;
    st->stepping = 0;
    st->grad = grad;
    alg_bp_step_done(ctx, &sh->bp, i);
    if (sh->m) {
        release(ctx, st, i, sh->m - 1, grad);
        return;
    }
    /* what a re-formation restarts the round with, too */
    st->grad = contrib(ctx, st, i, 0, ctx->P);
    start_coll(ctx, st, i, st->round, st->grad);
}

static void ar_on_message(alg_ctx *ctx, void *state, int i, const cl_msg *m)
{
    (void)state;
    ar_shared *sh = ctx->shared;
    int mine;
    if (m->tag == TAG_SYNC) {
        if (alg_catchup_take(ctx, &sh->cu, i, m))
            start_step(ctx, i);
        return;
    }
    if (sh->m)
        mine = m->tag > TAG_COLL && m->tag <= TAG_COLL + (uint32_t)sh->m
               && alg_coll_on_message(ctx, sh->b[m->tag - TAG_COLL - 1].coll, i, m);
    else
        mine = alg_coll_on_message(ctx, sh->coll, i, m);
    assert(mine && "allreduce got a message it did not send");
    (void)mine;
}

/* ---- failures (docs/algorithms.md, "When a node fails") ---- */

/* The collective whose membership every bucket follows. */
static alg_coll *mcoll(const ar_shared *sh) { return sh->m ? sh->b[0].coll : sh->coll; }

static const int *members(alg_ctx *ctx, uint64_t round, int *k)
{
    return alg_coll_members(ctx, mcoll(ctx->shared), round, k);
}

/* Node `from` just entered its round: it serves the workers waiting for
 * that round's model (alg_catchup_serve). */
static void serve(alg_ctx *ctx, int from)
{
    alg_catchup_serve(ctx, &((ar_shared *)ctx->shared)->cu, from);
}

static void reset_buckets(ar_state *st) { st->released = st->started = st->reduced = 0; }

/* Re-formation (alg_catchup_reform: a new epoch of every collective, R
 * the most advanced round of the live members): a worker behind R (left
 * inside round R - 1 when some member had completed it) stops its step and
 * takes that member's model of round R. */
static void behind(alg_ctx *ctx, int w, int was_catching)
{
    ar_state *st = alg_state(ctx, w);
    if (was_catching)
        return;
    alg_abort_step(ctx, w);
    st->stepping = 0;
    reset_buckets(st);
}

/* A member at R re-runs round R among the live members with the same
 * contributions, or joins it when its step ends.  `restarting`: its
 * interrupted step starts over (its buckets go again with its marks). */
static void rerun(alg_ctx *ctx, int w, uint64_t R, int restarting)
{
    ar_shared *sh = ctx->shared;
    ar_state *st = alg_state(ctx, w);
    if (sh->m) {
        int released = restarting ? 0 : st->released;
        reset_buckets(st);
        if (released)
            release(ctx, st, w, released - 1, st->grad);
    } else if (!st->stepping) {
        start_coll(ctx, st, w, R, st->grad);
    }
}

/* Back: it is a member again from the round after the most advanced one
 * of the live members, on the model the first of them to complete that
 * round sends it (elastic Horovod's broadcast of the state to a new
 * worker); its own step is dropped. */
static void taken_back(alg_ctx *ctx, int w)
{
    ar_state *st = alg_state(ctx, w);
    st->stepping = 0;
    reset_buckets(st);
}

static void new_epoch(alg_ctx *ctx)
{
    ar_shared *sh = ctx->shared;
    if (sh->m)
        for (int b = 0; b < sh->m; b++)
            alg_coll_new_epoch(ctx, sh->b[b].coll);
    else
        alg_coll_new_epoch(ctx, sh->coll);
}

static const alg_catch_ops catch_ops = {
    .catch_off = offsetof(ar_state, cu),
    .round_off = offsetof(ar_state, round),
    .behind = behind,
    .rerun = rerun,
    .taken_back = taken_back,
    .new_epoch = new_epoch,
};

/* Declared failed: the collective re-forms without it; back: it catches
 * up (alg_catchup_declared). */
static void ar_on_failure(alg_ctx *ctx, int peer, int failed)
{
    alg_catchup_declared(ctx, &((ar_shared *)ctx->shared)->cu, peer, failed);
}

/* Back before it was declared: what it sent inside a collective as it
 * went down may be lost, so a worker that was in one re-forms it (as a
 * restarted Horovod worker's rendezvous resets every worker); one that was
 * computing only restarts its step. */
static void ar_on_return(alg_ctx *ctx, void *state, int i)
{
    ar_state *st = state;
    ar_shared *sh = ctx->shared;
    if (st->cu.catching) {
        alg_abort_step(ctx, i);   /* its old step: it waits for a model */
        return;
    }
    if (!st->stepping || (sh->m && st->started > 0))
        alg_catchup_reform(ctx, &sh->cu, st->stepping ? i : -1);
}

static void ar_describe_wait(const alg_ctx *ctx, const void *state, int i,
                             char *buf, size_t size)
{
    const ar_state *st = state;
    const ar_shared *sh = ctx->shared;
    if (alg_catchup_describe(ctx, &sh->cu, i, buf, size)) {
        return;
    } else if (alg_is_computing(ctx, i)) {
        snprintf(buf, size, "its step of round %llu", (unsigned long long)st->round);
    } else if (!sh->m) {
        alg_coll_describe_wait(sh->coll, i, buf, size);
    } else {
        int k = st->reduced;   /* the oldest bucket not reduced */
        for (int j = st->reduced; j < st->started; j++)
            if (alg_coll_active(sh->b[j].coll, i)) {
                k = j;
                break;
            }
        int w = snprintf(buf, size, "bucket %d of %d: ", k, sh->m);
        if (w >= 0 && (size_t)w < size)
            alg_coll_describe_wait(sh->b[k].coll, i, buf + w, size - (size_t)w);
    }
}

/* With speed batches: the plan's smallest and largest batch, re-plans. */
static int ar_stats(const alg_ctx *ctx, const char **keys, double *values, int max)
{
    const ar_shared *sh = ctx->shared;
    return alg_bp_stats(&sh->bp, keys, values, max);
}

const alg_type alg_allreduce = {
    .name = "allreduce",
    .one_model = 1,
    .needs = ALG_CAN_FREEZE | ALG_CAN_GROW,
    .summary = "synchronous data-parallel SGD over an all-reduce (Patarasuk & Yuan 2009)",
    .state_size = sizeof(ar_state),
    .params = params,
    .check = ar_check,
    .shared_init = ar_shared_init,
    .shared_fini = ar_shared_fini,
    .init = ar_init,
    .on_start = ar_on_start,
    .on_step_done = ar_on_step_done,
    .on_step_mark = ar_on_step_mark,
    .on_message = ar_on_message,
    .on_failure = ar_on_failure,
    .on_return = ar_on_return,
    .describe_wait = ar_describe_wait,
    .stats = ar_stats,
    .fini = ar_fini,
};
