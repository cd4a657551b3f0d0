/* alg_batchplan.h -- speed-proportional batches for synchronous SGD
 * (heterogeneity-aware batch assignment; LB-BSP, Chen et al., "Semi-dynamic
 * load balancing: efficient distributed learning in non-dedicated
 * environments", SoCC 2020): each worker's batch is proportional to its
 * per-sample speed, so that all finish their step together, and the
 * gradients are averaged weighted by batch size, so that the update is the
 * gradient of the whole (total) batch.  A protocol helper, compiled against
 * alg.h alone: the synchronous protocols (ps-sync, allreduce) put its
 * parameters in their tables (ALG_BP_PARAMS at position `base`) and call
 * it around their steps.  It decides batch sizes only; when they apply
 * (which iteration, which members) is the protocol's.
 */
#ifndef ALG_BATCHPLAN_H
#define ALG_BATCHPLAN_H

#include <stddef.h>
#include <stdint.h>
#include "alg.h"

enum { ALG_BP_UNIFORM, ALG_BP_SPEED };
enum { ALG_BP_CONFIGURED, ALG_BP_MEASURED };
extern const char *const alg_bp_batching_names[], *const alg_bp_source_names[];

/* The five parameters, in this order, at position base of a table. */
#define ALG_BP_PARAMS \
    { "batching", ALG_PARAM_CHOICE, ALG_BP_UNIFORM, 0, 0, alg_bp_batching_names, \
      "uniform: every worker takes batch samples; speed: batches proportional to per-sample speed" }, \
    { "batch_source", ALG_PARAM_CHOICE, ALG_BP_CONFIGURED, 0, 0, alg_bp_source_names, \
      "speeds from the compute settings (configured) or from observed step times (measured)" }, \
    { "total_batch", ALG_PARAM_INT, 0, 0, 1e15, NULL, \
      "samples per iteration over all workers (0: batch x workers)" }, \
    { "rebalance_every", ALG_PARAM_INT, 1, 1, 1e9, NULL, \
      "measured: iterations between re-balancings of the batches" }, \
    { "speed_ewma", ALG_PARAM_REAL, 0.5, 1e-9, 1, NULL, \
      "measured: weight of the newest step in the per-sample time estimate" }
#define ALG_BP_N_PARAMS 5

typedef struct alg_bp {
    int       on;        /* batching: speed */
    int       measured;
    int       n, every;
    size_t    total;
    double    ewma;
    size_t   *batch;     /* n: the plan (each >= 1, summing to total over its members) */
    double   *est;       /* n: per-sample seconds estimated (0: not yet observed) */
    double   *started;   /* n: when the step in progress began */
    size_t   *got;       /* n: the batch of the step in progress */
    double   *w;         /* n: scratch speeds */
    char     *all;       /* n: every worker a member */
    char     *mem;       /* n: the members of the last plan */
    uint64_t  rebalances;
} alg_bp;

/* The parameters at ctx->param[base ..]: checks total_batch against the
 * workers (>= n and <= batch x n, what every partition holds); a reason
 * in err and -1 when not. */
int  alg_bp_check(const alg_ctx *ctx, int base, char *err, size_t size);
/* Reads the parameters and, for speed batches, computes the first plan
 * (configured: from alg_step_time_s; measured: uniform until observed).
 * -1 when out of memory.  Nothing is allocated for uniform batches. */
int  alg_bp_init(alg_bp *bp, alg_ctx *ctx, int base);
void alg_bp_fini(alg_bp *bp);

/* Worker i is about to start a step: gives it its planned batch (speed
 * batching only) and notes the instant.  Call just before alg_start_step. */
void alg_bp_step_start(alg_ctx *ctx, alg_bp *bp, int i);
/* Worker i's step ended: its per-sample time (elapsed / batch) goes into
 * its estimate (measured only), EWMA with weight speed_ewma. */
void alg_bp_step_done(alg_ctx *ctx, alg_bp *bp, int i);
/* The weight of worker i's gradient in the average: its batch of the
 * step (1 with uniform batches, so weighted sums are the plain ones). */
double alg_bp_weight(const alg_bp *bp, int i);
/* After iteration `iter` (1, 2, ...) closed: re-plans over the workers
 * not declared failed (the others keep their batch; the members' share of
 * the total is total x members / workers) when due -- configured: when
 * the members changed; measured: every rebalance_every-th iteration, once
 * each member has an estimate. */
void alg_bp_iteration_done(alg_ctx *ctx, alg_bp *bp, uint64_t iter);

/* The split itself: total samples over the n workers with weight w[i] > 0
 * (w[i] == 0: left out, out[i] untouched), proportional to w, each at
 * least 1 and at most cap[i] (caps that bind are water-filled: the rest
 * is split again over the others), integers summing exactly to total by
 * largest remainders (ties to the lower index).  -1 (out untouched) when
 * total < the workers taken or > the sum of their caps.  O(n log n); its
 * scratch is allocated here (out of memory: alg_out_of_memory). */
int alg_bp_split(const double *w, const size_t *cap, int n, size_t total, size_t *out);

/* With speed batches: batch_min, batch_max (the current plan) and
 * batch_rebalances (re-plans after the first) into keys/values from 0,
 * when max leaves room for the three; returns how many (0 when uniform). */
int alg_bp_stats(const alg_bp *bp, const char **keys, double *values, int max);

#endif
