/* alg_pipeline.c -- pipeline parallelism: a model split into p stages of
 * contiguous layers on p nodes (node s runs stage s), m micro-batches per
 * mini-batch, a forward and a backward pass per stage and micro-batch as
 * the node's work, the activations sent forward and the activation
 * gradients sent backward as messages over the links.  Schedules: GPipe
 * (Huang et al. 2019: every forward, every backward, flush), 1F1B with a
 * flush (PipeDream-Flush, Narayanan et al. 2021; DAPPLE, Fan et al. 2021),
 * and the asynchronous 1F1B of PipeDream (Narayanan et al. 2019, weight
 * stashing) and PipeDream-2BW (2021, double-buffered weights); the order
 * of a stage's operations and the partition are alg_pipeline_sched.c's.
 *
 * Timing semantics.  A stage runs its operations strictly in its
 * schedule's order: the next one starts as soon as the stage is idle and
 * its input is in (stage 0 always has its forward's input; the last stage
 * its backward's, from its own forward).  A forward of stage s costs
 * stage_fwd[s] of a step of the node (the stage's layers' forward FLOPs
 * per sample over the whole model's, over m), a backward stage_bwd[s];
 * the node's speed, slowdowns and noise apply as to any step.  With the
 * timing-only model the layers are `layers` equal parts, a forward a
 * third and a backward two thirds of each (2 in out forward, 4 in out
 * backward, the MLP's ratio), and every activation or gradient message is
 * `act_bytes`; with an MLP the shares are its layers' FLOPs and the
 * messages n x width values (plus the labels, forward), and the math is
 * alg_pipeline_math.c's.
 *
 * Replicas (pipeline x data parallel): with algorithm.replicas r the
 * nodes are p r, node i running stage i mod p of replica i / p; each
 * replica is a whole pipeline on its own mini-batches, and the r nodes
 * of a stage all-reduce its gradient at each update (alg_pipeline_dp.c).
 * One partition serves every replica, priced at each stage's slowest
 * node.
 *
 * Failures (alg_pipeline_fail.c): with replicas, a failed node's replica
 * leaves the group and the others go on; with one replica, gpipe and
 * 1f1b halt and restart the mini-batch once the node is back.  With one
 * replica and an asynchronous schedule (or no replica left) a node that
 * goes down (declared failed, or back up) stops the pipeline for good:
 * every node abandons its work and starts no more, so the run ends as
 * stalled (at once, or at the frozen bound while the network retransmits
 * to the down node), each node's wait naming the stage and the instant
 * (docs/algorithms.md).
 */
#include "alg_pipeline_int.h"

#include <assert.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const sched_names[] = { "gpipe", "1f1b", "pipedream", "2bw", NULL };
static const char *const part_names[] = { "balanced", "equal", NULL };

static const alg_param_spec params[] = {
    { "stages", ALG_PARAM_INT, 0, 0, PP_MAX_LAYERS, NULL,
      "p: pipeline stages, node q p + s running stage s of replica q (0: nodes / replicas)" },
    { "micro_batches", ALG_PARAM_INT, 4, 1, 65536, NULL,
      "m: micro-batches per mini-batch" },
    { "schedule", ALG_PARAM_CHOICE, SCHED_GPIPE, 0, 0, sched_names,
      "gpipe, 1f1b (with a flush), pipedream (asynchronous, weight stashing) or 2bw" },
    { "partition", ALG_PARAM_CHOICE, PART_BALANCED, 0, 0, part_names,
      "balanced: least slowest stage for the nodes' speeds; equal: equal layer counts" },
    { "layers", ALG_PARAM_INT, 0, 0, PP_MAX_LAYERS, NULL,
      "timing-only model: equal layers the model is cut into (0: one per stage)" },
    { "act_bytes", ALG_PARAM_REAL, 1e5, 0, 1e15, NULL,
      "timing-only model: bytes of one activation (or activation gradient) message" },
    { "replicas", ALG_PARAM_INT, 1, 1, 65536, NULL,
      "r: data-parallel replicas of the pipeline, node i running stage i mod p of replica i / p" },
    { "collective", ALG_PARAM_CHOICE, ALG_COLL_RING, 0, 0, alg_coll_kind_names,
      "replicas > 1: the all-reduce pattern of a stage's gradient among its r nodes" },
    { NULL, 0, 0, 0, 0, NULL, NULL },
};

static int n_replicas(const alg_ctx *ctx) { return (int)ctx->param[PP_REPLICAS]; }

int pp_n_stages(const alg_ctx *ctx)
{
    return ctx->param[PP_STAGES] > 0 ? (int)ctx->param[PP_STAGES] : ctx->n / n_replicas(ctx);
}

int pp_n_layers(const alg_ctx *ctx)
{
    if (ctx->P != 0)
        return ctx->layers;
    return ctx->param[PP_LAYERS] > 0 ? (int)ctx->param[PP_LAYERS] : pp_n_stages(ctx);
}

size_t pp_ring_of(const alg_ctx *ctx)
{
    return 2 * ((size_t)ctx->param[PP_MICRO] + (size_t)pp_n_stages(ctx)) + 2;
}

static int check(const alg_ctx *ctx, char *err, size_t size)
{
    const int p = pp_n_stages(ctx), r = n_replicas(ctx);
    if (r > 1 && (p < 1 || (long long)p * r != ctx->n)) {
        snprintf(err, size, "algorithm.stages x algorithm.replicas is %d x %d but the scenario has "
                 "%d nodes (node = replica x stages + stage: set nodes to their product, or "
                 "stages to 0 with nodes a multiple of the replicas)", p, r, ctx->n);
        return -1;
    }
    if (p != ctx->n / r) {
        snprintf(err, size, "algorithm.stages is %d but the scenario has %d nodes (one stage per "
                 "node: set nodes to the stages, or stages to 0)", p, ctx->n);
        return -1;
    }
    /* the host is not attached yet: P is 0 for the timing-only model */
    if (ctx->P != 0 && ctx->layers < 1) {
        snprintf(err, size, "the pipeline cuts an MLP into stages of layers (model.kind \"mlp\") "
                 "or runs the timing-only model (\"none\"); this model has no layers");
        return -1;
    }
    if (pp_n_layers(ctx) < p) {
        snprintf(err, size, "%s is %d, fewer than the %d stages (each stage needs a layer)",
                 ctx->P ? "the MLP's weight layers (hidden + 1)" : "algorithm.layers",
                 pp_n_layers(ctx), p);
        return -1;
    }
    /* the dynamic programme's inner steps, p (L - p + 1)^2 at most: a second or two */
    const double dp = (double)p * (pp_n_layers(ctx) - p + 1) * (pp_n_layers(ctx) - p + 1);
    if ((int)ctx->param[PP_PARTITION] == PART_BALANCED && dp > 1e9) {
        snprintf(err, size, "a balanced partition of %d layers on %d stages costs p (L - p + 1)^2 "
                 "= %.3g steps, more than 1e9 (use fewer layers, or partition \"equal\")",
                 pp_n_layers(ctx), p, dp);
        return -1;
    }
    const int m = (int)ctx->param[PP_MICRO];
    if (ctx->P && ctx->batch % (size_t)m != 0) {
        snprintf(err, size, "algorithm.batch %zu is not a multiple of algorithm.micro_batches %d "
                 "(a micro-batch is batch / micro_batches samples)", ctx->batch, m);
        return -1;
    }
    if ((int)ctx->param[PP_SCHEDULE] == SCHED_2BW && m < p) {
        snprintf(err, size, "schedule 2bw needs algorithm.micro_batches >= the %d stages (m = %d): "
                 "with fewer, a micro-batch would need a third weight version", p, m);
        return -1;
    }
    return 0;
}

static int shared_init(alg_ctx *ctx)
{
    pp_shared *sh = calloc(1, sizeof *sh);
    if (!sh)
        return -1;
    ctx->shared = sh;
    sh->p = pp_n_stages(ctx);
    sh->m = (int)ctx->param[PP_MICRO];
    sh->sched = (int)ctx->param[PP_SCHEDULE];
    sh->L = pp_n_layers(ctx);
    sh->r = n_replicas(ctx);
    sh->R = pp_ring_of(ctx);
    const int L = sh->L, p = sh->p;
    sh->fwd = calloc((size_t)L, sizeof *sh->fwd);
    sh->bwd = calloc((size_t)L, sizeof *sh->bwd);
    double *cost = calloc((size_t)L, sizeof *cost);
    double *sec = calloc((size_t)p, sizeof *sec);
    double *wd = calloc((size_t)(L + 1) * (size_t)(p + 1), sizeof *wd);
    int *wi = calloc((size_t)(L + 1) * (size_t)(p + 1), sizeof *wi);
    int rc = sh->fwd && sh->bwd && cost && sec && wd && wi ? 0 : -1;
    if (rc == 0) {
        for (int l = 0; l < L; l++) {
            if (ctx->P == 0) {
                sh->fwd[l] = 1.0 / (3.0 * L);
                sh->bwd[l] = 2.0 / (3.0 * L);
            } else if (alg_layer_cost(ctx, l + 1, &sh->fwd[l], &sh->bwd[l]) != 0) {
                rc = -1;
            }
            cost[l] = sh->fwd[l] + sh->bwd[l];
        }
        /* one partition for every replica: a stage is as slow as its slowest node */
        for (int s = 0; s < p; s++)
            for (int q = 0; q < sh->r; q++) {
                const double t = alg_step_time_s(ctx, q * p + s) / sh->m;
                if (t > sec[s])
                    sec[s] = t;
            }
        sh->slowest_s = pp_partition((int)ctx->param[PP_PARTITION] == PART_BALANCED, L, p, cost,
                                     sec, sh->lo, wd, wi);
        for (int s = 0; s < p; s++) {
            double f = 0, b = 0;
            for (int l = sh->lo[s + 1] - 1; l >= sh->lo[s]; l--) {
                f += sh->fwd[l];
                b += sh->bwd[l];
            }
            sh->stage_fwd[s] = f / sh->m;
            sh->stage_bwd[s] = b / sh->m;
            if (ctx->P == 0) {
                /* the stage's whole gradient: its layers' share of the model's message */
                sh->stage_msg[s] = alg_part_bytes(ctx, 0, (double)(sh->lo[s + 1] - sh->lo[s]) / L);
                sh->act_bytes[s] = ctx->param[PP_ACT_BYTES];
                sh->in_bytes[s] = ctx->param[PP_ACT_BYTES];
            } else {
                /* n x width values, and the n labels (4 bytes each) riding along to the
                 * last stage; a gradient is n x width values */
                const size_t n = ctx->batch / (size_t)sh->m;
                sh->act_bytes[s] = alg_part_bytes(ctx, n * alg_layer_width(ctx, sh->lo[s + 1]), 1);
                sh->in_bytes[s] = alg_part_bytes(ctx, n * alg_layer_width(ctx, sh->lo[s]), 1);
                sh->lab_bytes = 4.0 * (double)n;
            }
        }
        sh->K = (size_t)sh->m + (size_t)p;
        if (ctx->P && !(sh->eval = calloc(ctx->P, sizeof *sh->eval)))
            rc = -1;
        if (rc == 0)
            rc = pp_dp_init(ctx);
        if (rc == 0)
            rc = pp_fail_init(ctx);
    }
    free(cost);
    free(sec);
    free(wd);
    free(wi);
    return rc;
}

static void shared_fini(alg_ctx *ctx)
{
    pp_shared *sh = ctx->shared;
    if (!sh)
        return;
    pp_dp_fini(ctx);
    pp_fail_fini(ctx);
    free(sh->fwd);
    free(sh->bwd);
    free(sh->eval);
    free(sh);
    ctx->shared = NULL;
}

static int init(alg_ctx *ctx, void *state, int node)
{
    (void)node;
    pp_stage *st = state;
    pp_shared *sh = ctx->shared;
    st->fwd_in = calloc(sh->R, 1);
    st->grad_in = calloc(sh->R, 1);
    if (!st->fwd_in || !st->grad_in)
        return -1;
    return ctx->P ? pp_math_init(ctx, st, node) : 0;
}

static void fini(alg_ctx *ctx, void *state, int node)
{
    (void)ctx;
    (void)node;
    pp_stage *st = state;
    free(st->fwd_in);
    free(st->grad_in);
    pp_math_fini(st);
}

void pp_try_run(alg_ctx *ctx, int node)
{
    pp_shared *sh = ctx->shared;
    pp_stage *st = alg_state(ctx, node);
    const int s = pp_stage_of(sh, node);
    if (sh->stopped || sh->halted || st->busy || st->reducing || st->out || st->joining)
        return;
    pp_op op = pp_op_at(sh->sched, sh->p, sh->m, s, st->next);
    unsigned char *flag = NULL;
    if (!op.backward && s > 0)
        flag = &st->fwd_in[op.mb % sh->R];
    if (op.backward && s < sh->p - 1)
        flag = &st->grad_in[op.mb % sh->R];
    if (flag) {
        if (!*flag)
            return;
        *flag = 0;
    }
    st->cur = op;
    st->busy = 1;
    st->t_start = alg_now(ctx);
    alg_start_work(ctx, node, op.backward ? sh->stage_bwd[s] : sh->stage_fwd[s]);
}

static void on_start(alg_ctx *ctx, void *state, int node)
{
    (void)state;
    pp_try_run(ctx, node);
}

static void iteration_done(pp_shared *sh, double now)
{
    sh->iters++;
    const double d = now - sh->t_iter0;
    if (sh->iters == 1)
        sh->first_iter_s = d;
    sh->sum_iter_s += d;
    sh->t_iter0 = now;
}

/* Node applied an update: replica 0's stage 0 ends an iteration at its
 * mini-batch's last. */
void pp_updated(alg_ctx *ctx, int node)
{
    pp_shared *sh = ctx->shared;
    pp_stage *st = alg_state(ctx, node);
    st->updates++;
    st->cur_bwd = 0;
    pp_fail_updated(ctx, node);
    /* the first stage 0 (of any replica) to apply its mini-batch's last update */
    if (pp_stage_of(sh, node) != 0)
        return;
    const uint64_t it = sh->sched == SCHED_PIPEDREAM ? st->updates / (uint64_t)sh->m : st->updates;
    if (it > sh->iters && (sh->sched != SCHED_PIPEDREAM || st->updates % (uint64_t)sh->m == 0))
        iteration_done(sh, alg_now(ctx));
}

static void on_step_done(alg_ctx *ctx, void *state, int node, const double *grad)
{
    (void)grad;
    pp_shared *sh = ctx->shared;
    pp_stage *st = state;
    if (!st->busy || sh->stopped)
        return;
    const int s = pp_stage_of(sh, node);
    const double now = alg_now(ctx);
    st->busy = 0;
    if (st->cur.mb < (uint64_t)sh->m)
        st->busy_first += now - st->t_start;
    st->busy_s += now - st->t_start;
    if (st->mt) {
        if (st->cur.backward)
            pp_math_backward(ctx, node, st->cur.mb);
        else
            pp_math_forward(ctx, node, st->cur.mb);
    }
    if (!st->cur.backward) {
        st->fwd_done++;
        if (++st->in_flight > st->peak_in_flight)
            st->peak_in_flight = st->in_flight;
        if (s < sh->p - 1)
            alg_send(ctx, node, node + 1, PTAG_ACT, st->cur.mb, NULL,
                     sh->act_bytes[s] + sh->lab_bytes);
    } else {
        st->bwd_done++;
        st->cur_bwd++;
        st->in_flight--;
        assert(st->in_flight >= 0);
        if (s > 0)
            alg_send(ctx, node, node - 1, PTAG_GRAD, st->cur.mb, NULL, sh->act_bytes[s - 1]);
        else {
            sh->done_mb++;
            if ((sh->done_mb & (sh->done_mb - 1)) == 0) {
                int k = 0;
                while ((1ull << k) < sh->done_mb)
                    k++;
                sh->t_pow[k] = now;
            }
        }
    }
    st->next++;
    /* the update point: the mini-batch's last operation (a backward: every
     * 2 m of gpipe and 1f1b, every m-th backward of 2bw), PipeDream's every
     * backward */
    if (st->cur.backward
        && (sh->sched == SCHED_PIPEDREAM
            || (sh->sched == SCHED_2BW ? st->bwd_done % (uint64_t)sh->m == 0
                                       : st->next % (2 * (uint64_t)sh->m) == 0)))
        pp_dp_update(ctx, node);
    pp_try_run(ctx, node);
}

static void on_message(alg_ctx *ctx, void *state, int node, const cl_msg *msg)
{
    pp_shared *sh = ctx->shared;
    pp_stage *st = state;
    if (pp_dp_on_message(ctx, node, msg))
        return;
    if (st->out || msg->round < st->mb_floor)
        return;   /* for a dropped replica, or from before it rejoined */
    unsigned char *flag = msg->tag == PTAG_ACT ? &st->fwd_in[msg->round % sh->R]
                                               : &st->grad_in[msg->round % sh->R];
    assert(msg->tag == PTAG_ACT || msg->tag == PTAG_GRAD);
    assert(!*flag);   /* the ring is wider than any window of pending inputs */
    *flag = 1;
    pp_try_run(ctx, node);
}

/* A stage lost: nothing more can run (its stashed activations, its
 * weights' place in the schedule are gone), so every stage stops. */
void pp_stop_pipeline(alg_ctx *ctx, int by)
{
    pp_shared *sh = ctx->shared;
    if (sh->stopped)
        return;
    sh->stopped = 1;
    sh->stopped_by = by;
    sh->stopped_at = alg_now(ctx);
    for (int i = 0; i < ctx->n; i++) {
        pp_stage *st = alg_state(ctx, i);
        if (st->busy)
            alg_abort_step(ctx, i);
        st->busy = 0;
    }
    pp_dp_abort(ctx);
}

static void on_failure(alg_ctx *ctx, int peer, int failed)
{
    pp_fail_declared(ctx, peer, failed);
}

static void on_return(alg_ctx *ctx, void *state, int node)
{
    (void)state;
    pp_fail_return(ctx, node);
}

static void describe_wait(const alg_ctx *ctx, const void *state, int node, char *buf,
                          size_t size)
{
    const pp_shared *sh = ctx->shared;
    const pp_stage *st = state;
    if (sh->stopped && sh->r == 1) {
        snprintf(buf, size, "nothing: the pipeline stopped when stage %d went down (t=%.10g s)",
                 sh->stopped_by, sh->stopped_at);
        return;
    }
    if (sh->stopped) {
        snprintf(buf, size, "nothing: the pipeline stopped when node %d (stage %d of replica %d) "
                 "went down (t=%.10g s)", sh->stopped_by, pp_stage_of(sh, sh->stopped_by),
                 pp_replica_of(sh, sh->stopped_by), sh->stopped_at);
        return;
    }
    if (st->out) {
        snprintf(buf, size, "nothing: replica %d left the data-parallel group (a node of it "
                 "failed)", pp_replica_of(sh, node));
        return;
    }
    if (sh->halted) {
        snprintf(buf, size, "the pipeline's restart once every stage is up (stage %d lost at "
                 "t=%.10g s)", sh->halted_by, sh->halted_at);
        return;
    }
    if (st->joining) {
        snprintf(buf, size, "stage %d's parameters after %llu updates from a live replica",
                 pp_stage_of(sh, node), (unsigned long long)st->updates);
        return;
    }
    if (st->reducing) {
        pp_dp_describe_wait(ctx, node, buf, size);
        return;
    }
    const int s = pp_stage_of(sh, node);
    pp_op op = pp_op_at(sh->sched, sh->p, sh->m, s, st->next);
    if (st->busy)
        snprintf(buf, size, "its %s of micro-batch %llu", st->cur.backward ? "backward" : "forward",
                 (unsigned long long)st->cur.mb);
    else
        snprintf(buf, size, "the %s of micro-batch %llu from stage %d",
                 op.backward ? "activation gradient" : "activations", (unsigned long long)op.mb,
                 op.backward ? s + 1 : s - 1);
}

static int stats(const alg_ctx *ctx, const char **keys, double *values, int max)
{
    const pp_shared *sh = ctx->shared;
    double peak_max = 0, busy = 0, stash = 0;
    for (int i = 0; i < ctx->n; i++) {
        const pp_stage *st = alg_state(ctx, i);
        const int s = pp_stage_of(sh, i);
        if (st->peak_in_flight > peak_max)
            peak_max = (double)st->peak_in_flight;
        if (st->peak_in_flight * sh->in_bytes[s] > stash)
            stash = (double)st->peak_in_flight * sh->in_bytes[s];
        if (i < sh->p)   /* replica 0's stages: the iteration's bubble */
            busy += st->busy_first;
    }
    const pp_stage *s0 = alg_state(ctx, 0), *sl = alg_state(ctx, sh->p - 1);
    /* the throughput between the last two powers of two of completions */
    double thr = 0;
    if (sh->done_mb >= 2) {
        int k = 0;
        while ((2ull << k) <= sh->done_mb)
            k++;
        const int k0 = k / 2;
        if (k > k0 && sh->t_pow[k] > sh->t_pow[k0])
            thr = (double)((1ull << k) - (1ull << k0)) / (sh->t_pow[k] - sh->t_pow[k0]);
    }
    double versions = sh->sched == SCHED_PIPEDREAM ? peak_max : sh->sched == SCHED_2BW ? 2 : 1;
    const char *k[] = { "iterations", "first_iteration_s", "mean_iteration_s", "bubble_fraction",
                        "micro_batches_done", "throughput_mb_per_s", "peak_in_flight_first",
                        "peak_in_flight_last", "peak_in_flight_max", "stash_bytes_max",
                        "weight_versions_max", "slowest_stage_s", "stopped_by_stage", "replicas",
                        "replicas_live", "replicas_dropped", "replicas_rejoined",
                        "sums_forwarded", "restarts" };
    const double v[] = {
        (double)sh->iters, sh->first_iter_s, sh->iters ? sh->sum_iter_s / (double)sh->iters : 0,
        sh->iters ? 1.0 - busy / (sh->p * sh->first_iter_s) : 0, (double)sh->done_mb, thr,
        (double)s0->peak_in_flight, (double)sl->peak_in_flight, peak_max, stash, versions,
        sh->slowest_s,
        sh->stopped ? pp_stage_of(sh, sh->stopped_by) : sh->halted ? sh->halted_by : -1, sh->r,
        sh->alive ? sh->live : 1, sh->dropped, sh->rejoined, (double)sh->sums_sent,
        (double)sh->restarts };
    return alg_stats_copy(k, v, (int)(sizeof v / sizeof v[0]), keys, values, max);
}

static const char *const node_columns[] = {
    "first_layer", "last_layer", "forwards", "backwards", "peak_in_flight", "stash_bytes",
    "weight_versions", "busy_s", NULL };

static void node_figures(const alg_ctx *ctx, int node, double *v)
{
    const pp_shared *sh = ctx->shared;
    const pp_stage *st = alg_state(ctx, node);
    const int s = pp_stage_of(sh, node);
    const double peak = (double)st->peak_in_flight;
    v[0] = sh->lo[s] + 1;
    v[1] = sh->lo[s + 1];
    v[2] = (double)st->fwd_done;
    v[3] = (double)st->bwd_done;
    v[4] = peak;
    v[5] = peak * sh->in_bytes[s];
    v[6] = sh->sched == SCHED_PIPEDREAM ? peak : sh->sched == SCHED_2BW ? 2 : 1;
    v[7] = st->busy_s;
}

/* The samples of the micro-batches whose backward stage 0 finished, in
 * every replica: what the pipelines have trained on. */
static double samples_done(const alg_ctx *ctx)
{
    const pp_shared *sh = ctx->shared;
    return (double)sh->done_mb * (double)(ctx->batch / (size_t)sh->m);
}

static const double *eval_params(const alg_ctx *ctx)
{
    return pp_math_eval(ctx);
}

const alg_type alg_pipeline = {
    .name = "pipeline",
    .summary = "pipeline parallelism: GPipe, 1F1B, PipeDream, PipeDream-2BW on stages of layers "
               "(Huang et al. 2019; Narayanan et al. 2019, 2021)",
    .state_size = sizeof(pp_stage),
    .params = params,
    .check = check,
    .eval_params = eval_params,
    .memory_bytes = pp_memory_bytes,
    .model_memory_bytes = pp_model_memory_bytes,
    .model_copies = 1,
    .samples_done = samples_done,
    .shared_init = shared_init,
    .shared_fini = shared_fini,
    .init = init,
    .fini = fini,
    .on_start = on_start,
    .on_step_done = on_step_done,
    .on_message = on_message,
    .on_failure = on_failure,
    .on_return = on_return,
    .describe_wait = describe_wait,
    .stats = stats,
    .node_columns = node_columns,
    .node_figures = node_figures,
};
