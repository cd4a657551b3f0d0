/* alg_backup.c -- synchronous SGD with backup workers (Chen, Pan, Monga,
 * Bengio, Jozefowicz, "Revisiting Distributed Synchronous SGD", 2016): of
 * n workers the server waits for the first n - b gradients of the current
 * iteration, applies their mean and drops the b late ones.
 *
 * Timing: every worker computes on the model it holds and pushes the
 * gradient tagged with that model's version.  The server adds gradients of
 * the current version until it has n - b, steps x <- x - lr * mean(g) and
 * sends the new model to every worker through its uplink; gradients of an
 * older version are dropped (gradients_discarded).  A worker whose step
 * ends starts the next one at once if a newer model came in meanwhile,
 * else waits for it.
 *
 * What a late worker does when the new model arrives is `cancel_late`:
 * - off (the default): it finishes its step (the gradient is dropped) and
 *   only then joins the new iteration, as TensorFlow's SyncReplicasOptimizer
 *   that Chen et al. ran does.  The next iteration then starts with the late
 *   workers behind, so it lasts longer than the order statistic below.
 * - on: it abandons the step at once and starts afresh on the new model
 *   (steps_cancelled): K-sync SGD as Dutta, Joshi, Ghosh, Dube and Nagpurkar
 *   ("Slow and Stale Gradients Can Win the Race", AISTATS 2018) analyse it,
 *   where every iteration all n workers start together, so with i.i.d.
 *   Exp(lambda) steps and free communication an iteration lasts the
 *   (n-b)-th order statistic of n: mean (H_n - H_b) / lambda (tested).
 * b = 0 is ps-sync either way.  iteration_time_mean (time of the last
 * update / updates) reports the mean iteration.
 *
 * When a node fails: the quota counts over live workers.  The server steps
 * on the first min(n - b, live) gradients of the current version, live
 * being the workers not declared failed: a dead worker is the slowest
 * straggler there is, so it uses up one backup as in TensorFlow's
 * SyncReplicasOptimizer (replicas_to_aggregate stays n - b, the update's
 * batch unchanged), and the quota falls only when fewer than n - b workers
 * live (where SyncReplicasOptimizer would hang).  With b >= 1 one failure
 * therefore costs no waiting at all, before or after its declaration.  The
 * server sends nothing to a worker declared failed; one declared back gets
 * the current model (ALG_PS_TAG_REJOIN) and starts afresh on it, as a
 * restarted TensorFlow worker reads the variables of the current step.  The
 * server failing: the workers wait for it (gradients retransmitted until it
 * is back); down for good, the run ends as stalled.
 */
#include "alg_ps.h"

#include <stdio.h>

enum { P_BACKUP, P_CANCEL_LATE };

static const char *const on_off[] = { "off", "on", NULL };

static const alg_param_spec params[] = {
    { "backup", ALG_PARAM_INT, 1, 0, 1e9, NULL,
      "b: the server goes on without the b slowest workers of a round" },
    { "cancel_late", ALG_PARAM_CHOICE, 0, 0, 0, on_off,
      "on: a late worker abandons its step when the new model comes (K-sync SGD)" },
    { NULL, 0, 0, 0, 0, NULL, NULL },
};

/* After alg_ps: the server's iteration clock and the cancellations. */
typedef struct bk_shared {
    double   last_update_s;
    uint64_t cancelled;
    int      failed;    /* workers declared failed */
} bk_shared;

typedef struct bk_state {
    uint64_t version;    /* of the model the worker holds */
    uint64_t computing_on;
    int      waiting;
} bk_state;

static int bk_check(const alg_ctx *ctx, char *err, size_t size)
{
    if ((int)ctx->param[P_BACKUP] >= ctx->n) {
        snprintf(err, size, "backup needs fewer backup workers than workers, got %d of %d",
                 (int)ctx->param[P_BACKUP], ctx->n);
        return -1;
    }
    return 0;
}

static int bk_shared_init(alg_ctx *ctx) { return alg_ps_shared_init(ctx, sizeof(bk_shared)); }

static bk_shared *bk(const alg_ctx *ctx) { return alg_ps_extra(ctx->shared); }

/* Gradients an update needs: n - b, or every live worker's when fewer live. */
static int quota(const alg_ctx *ctx)
{
    int q = ctx->n - (int)ctx->param[P_BACKUP], live = ctx->n - bk(ctx)->failed;
    return live < q ? live : q;
}

static void try_update(alg_ctx *ctx)
{
    alg_ps *ps = ctx->shared;
    if (ps->n_sum == 0 || ps->n_sum < quota(ctx))
        return;
    alg_ps_apply_gathered(ctx);
    bk(ctx)->last_update_s = alg_now(ctx);
    alg_ps_broadcast_model(ctx);
}

static void bk_on_start(alg_ctx *ctx, void *state, int node)
{
    bk_state *st = state;
    if (node == ctx->server)
        return;
    st->computing_on = st->version;
    alg_start_step(ctx, node);
}

static void bk_on_step_done(alg_ctx *ctx, void *state, int i, const double *grad)
{
    bk_state *st = state;
    alg_ps_push(ctx, i, grad, st->computing_on);
    if (st->version > st->computing_on) {
        st->computing_on = st->version;
        alg_start_step(ctx, i);
    } else {
        st->waiting = 1;
    }
}

static void bk_on_message(alg_ctx *ctx, void *state, int i, const cl_msg *m)
{
    bk_state *st = state;
    if (i == ctx->server) {
        alg_ps *ps = ctx->shared;
        if (m->round != ps->version) {
            ps->discarded++;
            return;
        }
        alg_ps_gather(ctx, m->payload->data);
        try_update(ctx);
        return;
    }
    if (m->tag == ALG_PS_TAG_REJOIN) {
        /* back from a failure: start afresh on the current model unless
         * already computing on it */
        if (!st->waiting && alg_is_computing(ctx, i) && st->computing_on >= m->round)
            return;
        alg_abort_step(ctx, i);
        alg_ps_install(ctx, i, m);
        st->version = st->computing_on = m->round;
        st->waiting = 0;
        alg_start_step(ctx, i);
        return;
    }
    if (m->round <= st->version)
        return;   /* a late copy of a model it already has */
    alg_ps_install(ctx, i, m);
    st->version = m->round;
    if (ctx->param[P_CANCEL_LATE] != 0 && !st->waiting && alg_is_computing(ctx, i) &&
        st->computing_on < st->version) {
        alg_abort_step(ctx, i);
        bk(ctx)->cancelled++;
        st->computing_on = st->version;
        alg_start_step(ctx, i);
    } else if (st->waiting) {
        st->waiting = 0;
        st->computing_on = st->version;
        alg_start_step(ctx, i);
    }
}

static void bk_describe_wait(const alg_ctx *ctx, const void *state, int i, char *buf,
                             size_t size)
{
    const bk_state *st = state;
    const alg_ps *ps = ctx->shared;
    if (i == ctx->server)
        snprintf(buf, size, "%d more gradients of version %llu",
                 quota(ctx) - ps->n_sum, (unsigned long long)ps->version);
    else if (st->waiting)
        snprintf(buf, size, "the model after version %llu from the server",
                 (unsigned long long)st->version);
    else
        snprintf(buf, size, "its step");
}

static void bk_on_failure(alg_ctx *ctx, int peer, int failed)
{
    if (peer != ctx->server)
        bk(ctx)->failed += failed ? 1 : -1;
    alg_ps_notify_server(ctx, peer, failed);
}

static void bk_on_timer(alg_ctx *ctx, void *state, int node, uint32_t tag)
{
    (void)state;
    (void)node;
    int peer, failed;
    if (!alg_ps_notice(tag, &peer, &failed))
        return;
    if (peer != ctx->server && !failed && !alg_is_failed(ctx, peer))
        alg_ps_send_rejoin(ctx, peer);
    try_update(ctx);
}

static int bk_stats(const alg_ctx *ctx, const char **keys, double *values, int max)
{
    int k = alg_ps_stats(ctx, keys, values, max);
    if (k == 0 || k + 3 > max)
        return k;
    const alg_ps *ps = ctx->shared;
    const bk_shared *b = alg_ps_extra(ctx->shared);
    keys[k] = "iterations";
    values[k++] = (double)ps->version;
    keys[k] = "iteration_time_mean";
    values[k++] = ps->version ? b->last_update_s / (double)ps->version : 0;
    keys[k] = "steps_cancelled";
    values[k++] = (double)b->cancelled;
    return k;
}

const alg_type alg_backup = {
    .name = "backup",
    .summary = "synchronous parameter server that drops the b slowest workers (Chen et al. 2016)",
    .state_size = sizeof(bk_state),
    .servers = 1,
    .params = params,
    .check = bk_check,
    .eval_params = alg_ps_eval_params,
    .shared_init = bk_shared_init,
    .shared_fini = alg_ps_shared_fini,
    .on_start = bk_on_start,
    .on_step_done = bk_on_step_done,
    .on_message = bk_on_message,
    .on_timer = bk_on_timer,
    .on_failure = bk_on_failure,
    .describe_wait = bk_describe_wait,
    .stats = bk_stats,
};
