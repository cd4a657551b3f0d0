/* mdl_prep.c -- preprocessing of loaded datasets: per-feature scaling with
 * training statistics only (so nothing about the test set leaks into
 * training) and a seeded train/test split for sources that come as one
 * file.  Scaling cannot overflow: a feature with values beyond 2^480 in
 * magnitude (or all below 2^-480) is first divided by a power of two,
 * exactly, so finite values near 1e308 scale to finite values.  It does not load, generate or partition data.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "mdl_data.h"
#include "../mdl_internal.h"

/* x becomes (x / pow[j] - shift[j]) * mul[j].  pow[j] is a power of two,
 * so dividing by it is exact (1 for every feature of ordinary size: the
 * result is then bit for bit (x - shift) * mul). */
static void apply(mdl_dataset *ds, const double *pow2, const double *shift, const double *mul)
{
    if (ds == NULL)
        return;
    for (size_t i = 0; i < ds->n; i++) {
        double *x = ds->x + i * ds->d;
        for (size_t j = 0; j < ds->d; j++)
            x[j] = (x[j] / pow2[j] - shift[j]) * mul[j];
    }
}

/* The power of two by which feature j is divided before its statistics
 * are taken: 1 when every value of train and test has a magnitude within
 * [2^-480, 2^480] (or is 0), so sums, squares and ranges cannot overflow
 * or lose everything to underflow; otherwise 2^(e-1) with 2^(e-1) <= the
 * largest magnitude < 2^e (2^e itself may not be a double), which brings
 * the feature into (-2, 2). */
#define SCALE_SAFE_EXP 480
static double feature_pow2(const mdl_dataset *train, const mdl_dataset *test, size_t j)
{
    double big = 0.0;
    const mdl_dataset *sets[2] = { train, test };
    for (int k = 0; k < 2; k++)
        for (size_t i = 0; sets[k] && i < sets[k]->n; i++) {
            const double a = fabs(sets[k]->x[i * sets[k]->d + j]);
            big = a > big ? a : big;
        }
    if (big == 0.0 || (big <= ldexp(1.0, SCALE_SAFE_EXP) && big >= ldexp(1.0, -SCALE_SAFE_EXP)))
        return 1.0;
    int e;
    frexp(big, &e);
    return ldexp(1.0, e - 1);
}

/* Compact train and test (or no test): the statistics of the bytes, in
 * one pass over the rows, kept with both sets (mdl_compact.c applies them
 * as rows are read).  Every feature's power of two is 1 (bytes are at
 * most 255) and x / 1 is x, so each statistic is the same double the
 * column passes below compute: the minimum and maximum exactly, the sums
 * of the standard scaling in the same order of rows. */
static int scale_compact(mdl_dataset *train, mdl_dataset *test, mdl_scale how)
{
    const size_t d = train->d, n = train->n;
    double *sc = calloc(2 * d, sizeof *sc), *hi = malloc(d * sizeof *hi);
    double *tsc = test ? malloc(2 * d * sizeof *tsc) : NULL;
    if (!sc || !hi || (test && !tsc)) {
        free(sc);
        free(hi);
        free(tsc);
        return -1;
    }
    double *shift = sc, *mul = sc + d;
    const unsigned char *x = train->x8;
    if (how == MDL_SCALE_MINMAX) {
        for (size_t j = 0; j < d; j++)
            shift[j] = hi[j] = (double)x[j];
        for (size_t i = 1; i < n; i++)
            for (size_t j = 0; j < d; j++) {
                const double v = (double)x[i * d + j];
                shift[j] = v < shift[j] ? v : shift[j];
                hi[j] = v > hi[j] ? v : hi[j];
            }
        for (size_t j = 0; j < d; j++)
            mul[j] = hi[j] > shift[j] ? 1.0 / (hi[j] - shift[j]) : 0.0;
    } else {
        for (size_t i = 0; i < n; i++)
            for (size_t j = 0; j < d; j++)
                shift[j] += (double)x[i * d + j];
        for (size_t j = 0; j < d; j++) {
            shift[j] /= (double)n;
            hi[j] = 0.0;   /* the sum of squared deviations */
        }
        for (size_t i = 0; i < n; i++)
            for (size_t j = 0; j < d; j++) {
                const double e = (double)x[i * d + j] - shift[j];
                hi[j] += e * e;
            }
        for (size_t j = 0; j < d; j++) {
            const double sd = sqrt(hi[j] / (double)n);
            mul[j] = sd > 0.0 ? 1.0 / sd : 0.0;
        }
    }
    free(hi);
    free(train->sc);
    train->sc = sc;
    if (test) {
        memcpy(tsc, sc, 2 * d * sizeof *tsc);
        free(test->sc);
        test->sc = tsc;
    }
    return 0;
}

int mdl_dataset_scale(mdl_dataset *train, mdl_dataset *test, mdl_scale how)
{
    const size_t d = train->d, n = train->n;
    if (how == MDL_SCALE_NONE || n == 0)
        return 0;
    if (train->x8 && !train->sc && (!test || (test->x8 && !test->sc)))
        return scale_compact(train, test, how);
    /* anything else (mixed, or scaled twice) in doubles */
    if (mdl_dataset_expand(train) != 0 || (test && mdl_dataset_expand(test) != 0))
        return -1;
    double *shift = malloc(d * sizeof *shift), *mul = malloc(d * sizeof *mul),
           *pow2 = malloc(d * sizeof *pow2);
    if (!shift || !mul || !pow2) {
        free(shift);
        free(mul);
        free(pow2);
        return -1;
    }
    for (size_t j = 0; j < d; j++) {
        const double p = pow2[j] = feature_pow2(train, test, j);
        if (how == MDL_SCALE_MINMAX) {
            double lo = train->x[j] / p, hi = lo;
            for (size_t i = 1; i < n; i++) {
                const double v = train->x[i * d + j] / p;
                lo = v < lo ? v : lo;
                hi = v > hi ? v : hi;
            }
            shift[j] = lo;
            mul[j] = hi > lo ? 1.0 / (hi - lo) : 0.0;
        } else {
            /* Two passes: the mean, then the variance about it. */
            double m = 0.0, v = 0.0;
            for (size_t i = 0; i < n; i++)
                m += train->x[i * d + j] / p;
            m /= (double)n;
            for (size_t i = 0; i < n; i++) {
                const double e = train->x[i * d + j] / p - m;
                v += e * e;
            }
            const double sd = sqrt(v / (double)n);
            shift[j] = m;
            mul[j] = sd > 0.0 ? 1.0 / sd : 0.0;
        }
    }
    apply(train, pow2, shift, mul);
    apply(test, pow2, shift, mul);
    free(shift);
    free(mul);
    free(pow2);
    return 0;
}

/* Copies the rows idx[0 .. k-1] of src into a new dataset. */
static int take(const mdl_dataset *src, const size_t *idx, size_t k, mdl_dataset *dst)
{
    dst->n = k;
    dst->d = src->d;
    dst->n_classes = src->n_classes;
    dst->x = malloc(k * src->d * sizeof *dst->x);
    dst->y = src->y ? malloc(k * sizeof *dst->y) : NULL;
    dst->t = src->t ? malloc(k * sizeof *dst->t) : NULL;
    if (!dst->x || (src->y && !dst->y) || (src->t && !dst->t)) {
        mdl_dataset_fini(dst);
        return -1;
    }
    for (size_t i = 0; i < k; i++) {
        memcpy(dst->x + i * src->d, src->x + idx[i] * src->d, src->d * sizeof *dst->x);
        if (src->y)
            dst->y[i] = src->y[idx[i]];
        if (src->t)
            dst->t[i] = src->t[idx[i]];
    }
    return 0;
}

static int cmp_size(const void *a, const void *b)
{
    const size_t x = *(const size_t *)a, y = *(const size_t *)b;
    return (x > y) - (x < y);
}

int mdl_dataset_split(mdl_dataset *all, double test_fraction, uint64_t seed,
                      mdl_dataset *train, mdl_dataset *test)
{
    memset(train, 0, sizeof *train);
    memset(test, 0, sizeof *test);
    const size_t n = all->n, n_test = (size_t)llround(test_fraction * (double)n);
    if (!(test_fraction > 0.0 && test_fraction < 1.0) || n_test == 0 || n_test >= n)
        return -1;
    mdl_partition p;
    if (mdl_partition_iid(n, 1, seed, &p) != 0)
        return -1;
    /* The shuffle's head is the test set; the rest, sorted, keeps file
     * order for training. */
    qsort(p.idx + n_test, n - n_test, sizeof *p.idx, cmp_size);
    int rc = -1;
    if (take(all, p.idx, n_test, test) == 0) {
        if (take(all, p.idx + n_test, n - n_test, train) == 0)
            rc = 0;
        else
            mdl_dataset_fini(test);
    }
    mdl_partition_fini(&p);
    if (rc == 0)
        mdl_dataset_fini(all);
    return rc;
}
