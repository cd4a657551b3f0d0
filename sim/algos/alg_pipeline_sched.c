/* alg_pipeline_sched.c -- the two pure rules of the pipeline protocol:
 * the order in which a stage runs its forward and backward passes under
 * each schedule (GPipe, 1F1B with a flush, the asynchronous 1F1B of
 * PipeDream and PipeDream-2BW), and the partition of the model's layers
 * into contiguous stages (balanced by dynamic programming, or equal
 * layer counts).  No time, nodes or messages: alg_pipeline.c runs the
 * operations these rules name.
 */
#include "alg_pipeline_int.h"

pp_op pp_op_at(int sched, int p, int m, int s, uint64_t k)
{
    pp_op op = { 0, 0 };
    if (sched == SCHED_PIPEDREAM || sched == SCHED_2BW) {
        /* no flush: p - 1 - s forwards of warm-up, then one forward and
         * one backward in turn for ever (Narayanan et al. 2019, 2021) */
        const uint64_t W = (uint64_t)(p - 1 - s);
        if (k < W) {
            op.mb = k;
            return op;
        }
        const uint64_t u = k - W;
        op.backward = (int)(u & 1);
        op.mb = op.backward ? (u - 1) / 2 : W + u / 2;
        return op;
    }
    const uint64_t M = (uint64_t)m, i = k / (2 * M), t = k % (2 * M), base = i * M;
    if (sched == SCHED_GPIPE) {
        /* every forward, then every backward in reverse order, flush
         * (Huang et al. 2019; torchgpipe) */
        op.backward = t >= M;
        op.mb = base + (t < M ? t : 2 * M - 1 - t);
        return op;
    }
    /* 1F1B with a flush (PipeDream-Flush, DAPPLE): min(p - 1 - s, m)
     * forwards of warm-up, forward and backward in turn, then the
     * remaining backwards */
    const uint64_t W = (uint64_t)(p - 1 - s) < M ? (uint64_t)(p - 1 - s) : M;
    if (t < W) {
        op.mb = base + t;
    } else if (t < W + 2 * (M - W)) {
        const uint64_t u = t - W;
        op.backward = (int)(u & 1);
        op.mb = base + (op.backward ? (u - 1) / 2 : W + u / 2);
    } else {
        op.backward = 1;
        op.mb = base + t - M;
    }
    return op;
}

double pp_partition(int balanced, int L, int p, const double *cost, const double *sec_s,
                    int *lo, double *work_d, int *work_i)
{
    lo[0] = 0;
    lo[p] = L;
    if (!balanced) {
        for (int s = 1; s < p; s++)
            lo[s] = (int)(((long long)s * L) / p);
    } else {
        /* best[j][b]: the least slowest-stage time of layers 0 .. b - 1 on
         * stages 0 .. j - 1; arg[j][b] the first layer of stage j - 1 there */
        double *best = work_d;
        int *arg = work_i;
        const int W = L + 1;
        for (int j = 0; j <= p; j++)
            for (int b = 0; b <= L; b++) {
                best[j * W + b] = j == 0 && b == 0 ? 0.0 : -1.0;   /* -1: impossible */
                arg[j * W + b] = -1;
            }
        for (int j = 1; j <= p; j++)
            for (int b = j; b <= L - (p - j); b++) {
                double sum = 0, bv = -1;
                int ba = -1;
                for (int a = b - 1; a >= j - 1; a--) {
                    sum += cost[a];
                    const double prev = best[(j - 1) * W + a];
                    if (prev < 0)
                        continue;
                    const double t = sum * sec_s[j - 1];
                    const double v = prev > t ? prev : t;
                    if (bv < 0 || v < bv) {   /* strict: of equals, the latest a */
                        bv = v;
                        ba = a;
                    }
                }
                best[j * W + b] = bv;
                arg[j * W + b] = ba;
            }
        for (int j = p; j >= 1; j--)
            lo[j - 1] = arg[j * W + lo[j]];
    }
    double worst = 0;
    for (int s = 0; s < p; s++) {
        double sum = 0;
        for (int l = lo[s + 1] - 1; l >= lo[s]; l--)
            sum += cost[l];
        if (sum * sec_s[s] > worst)
            worst = sum * sec_s[s];
    }
    return worst;
}
