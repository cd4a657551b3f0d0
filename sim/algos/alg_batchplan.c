/* alg_batchplan.c -- speed-proportional batches for the synchronous
 * protocols (see alg_batchplan.h): the per-sample speed of each worker,
 * configured (alg_batch / alg_step_time_s) or measured (an EWMA of its
 * observed step time per sample, LB-BSP style), the split of the total
 * batch into integer batches in proportion to it (water-filled caps at the
 * local sample counts, at least one sample each, largest remainders), and
 * the weight of each gradient in the average.  It does not decide when an
 * iteration closes, who is a member, or how gradients travel: the protocol
 * calls it at its step starts, step ends and iteration ends.
 */
#include "alg_batchplan.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *const alg_bp_batching_names[] = { "uniform", "speed", NULL };
const char *const alg_bp_source_names[] = { "configured", "measured", NULL };

enum { Q_BATCHING, Q_SOURCE, Q_TOTAL, Q_EVERY, Q_EWMA };

int alg_bp_check(const alg_ctx *ctx, int base, char *err, size_t size)
{
    double total = ctx->param[base + Q_TOTAL];
    double most = (double)ctx->batch * (double)ctx->n;
    if (total != 0 && (total < ctx->n || total > most)) {
        snprintf(err, size,
                 "total_batch must be 0 (batch x workers) or between the %d workers and "
                 "batch x workers = %.0f (what every partition holds), got %.0f",
                 ctx->n, most, total);
        return -1;
    }
    return 0;
}

typedef struct rem { double r; int i; } rem;

/* Largest remainder first, then the lower index: a total order. */
static int by_rem(const void *a, const void *b)
{
    const rem *x = a, *y = b;
    if (x->r != y->r)
        return x->r > y->r ? -1 : 1;
    return (x->i > y->i) - (x->i < y->i);
}

int alg_bp_split(const double *w, const size_t *cap, int n, size_t total, size_t *out)
{
    size_t m = 0, capsum = 0;
    for (int i = 0; i < n; i++)
        if (w[i] > 0) {
            m++;
            capsum += cap[i];
        }
    if (m == 0 || total < m || total > capsum)
        return -1;
    double *q = malloc((size_t)n * sizeof *q);
    rem *r = malloc(m * sizeof *r);
    char *fixed = calloc((size_t)n, 1);
    size_t *b = malloc((size_t)n * sizeof *b);
    if (!q || !r || !fixed || !b)
        alg_out_of_memory();
    /* water-filling: a worker whose share exceeds its cap takes its cap,
     * and the rest is shared again among the others */
    for (;;) {
        double S = 0, R = (double)total;
        for (int i = 0; i < n; i++)
            if (w[i] > 0) {
                if (fixed[i])
                    R -= (double)cap[i];
                else
                    S += w[i];
            }
        int any = 0;
        for (int i = 0; i < n && S > 0; i++)
            if (w[i] > 0 && !fixed[i]) {
                q[i] = R * (w[i] / S);
                if (q[i] > (double)cap[i]) {
                    fixed[i] = 1;
                    any = 1;
                }
            }
        if (!any)
            break;
    }
    size_t sum = 0, k = 0;
    for (int i = 0; i < n; i++) {
        if (!(w[i] > 0))
            continue;
        if (fixed[i]) {
            b[i] = cap[i];
        } else {
            double f = floor(q[i]);
            b[i] = f < 1 ? 1 : f > (double)cap[i] ? cap[i] : (size_t)f;
            r[k++] = (rem){ q[i] - (double)b[i], i };
        }
        sum += b[i];
    }
    qsort(r, k, sizeof *r, by_rem);
    /* floors fall short by less than the workers: one each, largest
     * remainder first; the minimum of 1 may overshoot: one back each,
     * smallest remainder first (capped workers last) */
    while (sum < total)
        for (size_t j = 0; j < k && sum < total; j++)
            if (b[r[j].i] < cap[r[j].i]) {
                b[r[j].i]++;
                sum++;
            }
    while (sum > total) {
        size_t before = sum;
        for (size_t j = k; j-- > 0 && sum > total;)
            if (b[r[j].i] > 1) {
                b[r[j].i]--;
                sum--;
            }
        for (int i = 0; i < n && sum > total && sum == before; i++)
            if (w[i] > 0 && fixed[i] && b[i] > 1) {
                b[i]--;
                sum--;
            }
    }
    for (int i = 0; i < n; i++)
        if (w[i] > 0)
            out[i] = b[i];
    free(q);
    free(r);
    free(fixed);
    free(b);
    return 0;
}

/* Re-plans over the members from the speeds w (scratch filled here). */
static void plan(alg_ctx *ctx, alg_bp *bp, const char *member)
{
    size_t *cap = malloc((size_t)bp->n * sizeof *cap);
    if (!cap)
        alg_out_of_memory();
    int timing = alg_timing_only(ctx);
    for (int i = 0; i < bp->n; i++) {
        cap[i] = timing ? bp->total : alg_local_samples(ctx, i);
        if (!member[i])
            bp->w[i] = 0;
        else if (!bp->measured)
            bp->w[i] = (double)alg_batch(ctx) / alg_step_time_s(ctx, i);
        else
            bp->w[i] = bp->est[i] > 0 ? 1.0 / bp->est[i] : 1.0;
    }
    /* the members' share of the total: all of it with every worker */
    size_t m = 0, total = bp->total;
    for (int i = 0; i < bp->n; i++)
        m += member[i] != 0;
    if (m < (size_t)bp->n)
        total = (size_t)llround((double)bp->total * (double)m / (double)bp->n);
    if (total < m)
        total = m;
    if (m > 0 && alg_bp_split(bp->w, cap, bp->n, total, bp->batch) == 0)
        bp->rebalances++;
    free(cap);
}

int alg_bp_init(alg_bp *bp, alg_ctx *ctx, int base)
{
    memset(bp, 0, sizeof *bp);
    bp->on = (int)ctx->param[base + Q_BATCHING] == ALG_BP_SPEED;
    bp->measured = (int)ctx->param[base + Q_SOURCE] == ALG_BP_MEASURED;
    bp->n = ctx->n;
    bp->every = (int)ctx->param[base + Q_EVERY];
    bp->ewma = ctx->param[base + Q_EWMA];
    bp->total = ctx->param[base + Q_TOTAL] > 0 ? (size_t)ctx->param[base + Q_TOTAL]
                                                : alg_batch(ctx) * (size_t)ctx->n;
    if (!bp->on)
        return 0;
    size_t n = (size_t)ctx->n;
    bp->batch = malloc(n * sizeof *bp->batch);
    bp->est = calloc(n, sizeof *bp->est);
    bp->started = calloc(n, sizeof *bp->started);
    bp->got = calloc(n, sizeof *bp->got);
    bp->w = malloc(n * sizeof *bp->w);
    bp->all = malloc(n);
    bp->mem = malloc(n);
    if (!bp->batch || !bp->est || !bp->started || !bp->got || !bp->w || !bp->all || !bp->mem)
        return -1;
    memset(bp->all, 1, n);
    memset(bp->mem, 1, n);
    /* measured: uniform until observed (the total's split with equal speeds) */
    plan(ctx, bp, bp->all);
    bp->rebalances = 0;
    return 0;
}

void alg_bp_fini(alg_bp *bp)
{
    free(bp->batch);
    free(bp->est);
    free(bp->started);
    free(bp->got);
    free(bp->w);
    free(bp->all);
    free(bp->mem);
    memset(bp, 0, sizeof *bp);
}

void alg_bp_step_start(alg_ctx *ctx, alg_bp *bp, int i)
{
    if (!bp->on)
        return;
    if (alg_node_batch(ctx, i) != bp->batch[i])
        alg_set_batch(ctx, i, bp->batch[i]);
    bp->got[i] = bp->batch[i];
    bp->started[i] = alg_now(ctx);
}

void alg_bp_step_done(alg_ctx *ctx, alg_bp *bp, int i)
{
    if (!bp->on || !bp->measured)
        return;
    double per = (alg_now(ctx) - bp->started[i]) / (double)bp->got[i];
    bp->est[i] = bp->est[i] > 0 ? bp->ewma * per + (1.0 - bp->ewma) * bp->est[i] : per;
}

double alg_bp_weight(const alg_bp *bp, int i)
{
    return bp->on ? (double)bp->got[i] : 1.0;
}

void alg_bp_iteration_done(alg_ctx *ctx, alg_bp *bp, uint64_t iter)
{
    if (!bp->on)
        return;
    int same = 1;
    for (int i = 0; i < bp->n; i++) {
        char m = !alg_is_failed(ctx, i);
        same &= bp->mem[i] == m;
        bp->mem[i] = m;
    }
    if (bp->measured) {
        if (iter % (uint64_t)bp->every != 0)
            return;
        for (int i = 0; i < bp->n; i++)
            if (bp->mem[i] && !(bp->est[i] > 0))
                return;   /* a member not yet observed */
    } else if (same) {
        return;   /* configured speeds: the plan changes only with the members */
    }
    plan(ctx, bp, bp->mem);
}

int alg_bp_stats(const alg_bp *bp, const char **keys, double *values, int max)
{
    if (!bp->on || max < 3)
        return 0;
    size_t lo = bp->batch[0], hi = bp->batch[0];
    for (int i = 1; i < bp->n; i++) {
        lo = bp->batch[i] < lo ? bp->batch[i] : lo;
        hi = bp->batch[i] > hi ? bp->batch[i] : hi;
    }
    static const char *const k[3] = { "batch_min", "batch_max", "batch_rebalances" };
    double v[3] = { (double)lo, (double)hi, (double)bp->rebalances };
    return alg_stats_copy(k, v, 3, keys, values, max);
}
