/* alg_pipeline_mem.c -- the pipeline's own memory, counted before the
 * run for the runner's memory check (run_limits.c; bench/memory.py
 * compares it with the measured peak): what alg_pipeline.c,
 * alg_pipeline_dp.c, alg_pipeline_fail.c and alg_pipeline_math.c
 * allocate.  Without the model: each node's two rings of flags, the
 * layer tables and the partition's scratch, and with replicas the
 * collective's records and the recovery's tables.  With the MLP: the
 * stage buffers.  The simulator keeps K = m + p slots of a stage's
 * micro-batches whatever the schedule (a ring wider than any window in
 * flight), so per replica K micro-batches of every layer's outputs
 * (n x width each, n = batch / m), of the stages' input gradients and of
 * stage 0's rows, PipeDream's K stashed weight versions of each stage
 * (K x P per replica), 2BW's one previous version (P), one replica's
 * GPipe and 1F1B checkpoint of the previous version (P), each node's
 * gradient and mini-batch sum (whole vectors, of which the stage's part
 * is ever written: P each per replica resident) and backward's scratch;
 * with replicas the collective's sum per node and two payloads in flight
 * (the largest stage each) and the last completed sums (P).  The runner
 * counts one model per node (alg_type.model_copies: the parameters; its
 * gradient buffer is never written, no whole model travels).  The schedules' own peaks
 * (GPipe m micro-batches in flight per stage, 1F1B min(p - s, m),
 * PipeDream p - s versions) are figures of the run (algorithm_nodes.csv),
 * not what the simulator holds.  Messages carry no payload (the
 * receiver reads the sender's stash) but the collective's, which the
 * runner counts as models in flight.  It allocates nothing.
 */
#include "alg_pipeline_int.h"

#define BLOCK 16.0   /* malloc's bookkeeping per block */

double pp_memory_bytes(const alg_ctx *ctx)
{
    const int p = pp_n_stages(ctx), L = pp_n_layers(ctx), r = (int)ctx->param[PP_REPLICAS];
    const double R = (double)pp_ring_of(ctx);
    double b = (double)sizeof(pp_shared) + 2 * (8.0 * L + BLOCK)
             /* the partition's scratch while it runs: costs, speeds, the table */
             + 8.0 * L + 8.0 * p + 12.0 * (L + 1) * (p + 1) + 4 * BLOCK
             + (double)ctx->n * 2 * (R + BLOCK);
    if (r > 1)
        b += 4.0 * p * r + BLOCK + alg_coll_memory_bytes(ctx->n, 0, r)
           + (double)r * 9 + 8.0 * p * (1 + 1 + 1) + 4.0 * p + (double)p * BLOCK + 5 * BLOCK;
    return b;
}

/* The parameters of the largest stage any partition could make: the
 * equal one's, or (balanced, the nodes' speeds unknown before the run)
 * the most parameters L - p + 1 contiguous layers hold. */
static size_t largest_stage(const alg_ctx *ctx, int p, int L)
{
    size_t best = 0;
    if ((int)ctx->param[PP_PARTITION] == PART_EQUAL) {
        for (int s = 0; s < p; s++) {
            const int a = (int)(((long long)s * L) / p), e = (int)(((long long)(s + 1) * L) / p);
            const size_t len = alg_layer_param_off(ctx, e + 1) - alg_layer_param_off(ctx, a + 1);
            if (len > best)
                best = len;
        }
        return best;
    }
    for (int a = 0; a + (L - p + 1) <= L; a++) {
        const size_t len = alg_layer_param_off(ctx, a + (L - p + 1) + 1)
                         - alg_layer_param_off(ctx, a + 1);
        if (len > best)
            best = len;
    }
    return best;
}

double pp_model_memory_bytes(const alg_ctx *ctx)
{
    if (!ctx->P || ctx->layers < 1)
        return 0;   /* the timing-only model: no stage buffers */
    const int p = pp_n_stages(ctx), L = ctx->layers, r = (int)ctx->param[PP_REPLICAS];
    const int m = (int)ctx->param[PP_MICRO], sched = (int)ctx->param[PP_SCHEDULE];
    const double n = (double)(ctx->batch / (size_t)m), K = (double)m + p, P = (double)ctx->P;
    double outs = 0, gins = 0;   /* widths of every layer's output, of layers 1 .. L - 1 */
    for (int l = 1; l <= L; l++) {
        outs += (double)alg_layer_width(ctx, l);
        if (l < L)
            gins += (double)alg_layer_width(ctx, l);
    }
    const double w0 = (double)alg_layer_width(ctx, 0), B = (double)ctx->batch;
    /* per replica: every stage's stashed outputs, the input gradients of
     * stages 1 .. p - 1 (an upper bound: the outputs of distinct layers),
     * stage 0's rows and labels */
    double rep = 8 * K * n * outs + 8 * K * n * gins + 8 * K * n * w0 + 4 * K * n + 8 * B * w0
               + 4 * B;
    if (sched == SCHED_PIPEDREAM)
        rep += 8 * K * P;
    if (sched == SCHED_2BW)
        rep += 8 * P + 8 * K * p;
    if (r == 1 && (sched == SCHED_GPIPE || sched == SCHED_1F1B))
        rep += 8 * P;   /* the restart's checkpoint: each stage's previous version */
    /* per replica, the stages' parts of the nodes' gradients and sums */
    rep += 2 * 8 * P;
    /* per node: the scratch, the record and its blocks */
    const double node = 8.0 * (double)alg_stage_scratch_doubles(ctx, (size_t)n)
                      + (double)sizeof(pp_math) + 10 * BLOCK;
    double b = r * rep + (double)ctx->n * node + 8 * P + BLOCK;   /* + the model evaluated */
    if (r > 1)
        b += 3 * 8.0 * (double)ctx->n * (double)largest_stage(ctx, p, L) + 8 * P;
    return b;
}
