/* mdl_partition.c -- partitions that give each node a list of indices into
 * one shared dataset, their statistics, and the release of datasets and
 * partitions.  IID is a seeded Fisher-Yates shuffle dealt into contiguous
 * blocks; Dirichlet label skew, shards and quantity skew (see mdl_data.h)
 * look at labels but never copy samples.  Every partition draws from one
 * mt19937 stream seeded from the caller's seed, in a fixed order.
 */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <gsl/gsl_randist.h>
#include "mdl_data.h"
#include "../mdl_internal.h"

int mdl_partition_iid(size_t n, int n_nodes, uint64_t seed, mdl_partition *p)
{
    p->n_nodes = 0;
    p->off = NULL;
    p->idx = NULL;
    /* gsl_rng_uniform_int draws below at most 2^32 - 1 with mt19937. */
    if (n_nodes < 1 || (size_t)n_nodes >= SIZE_MAX / sizeof(size_t)
        || n > 0xffffffffu)
        return -1;

    size_t *off = malloc(((size_t)n_nodes + 1) * sizeof *off);
    size_t *idx = malloc((n > 0 ? n : 1) * sizeof *idx);
    gsl_rng *r = mdl_i_rng_create(seed);
    if (off == NULL || idx == NULL || r == NULL) {
        free(off);
        free(idx);
        if (r != NULL)
            gsl_rng_free(r);
        return -1;
    }

    for (size_t i = 0; i < n; i++)
        idx[i] = i;
    for (size_t i = n; i > 1; i--) {
        const size_t j = (size_t)gsl_rng_uniform_int(r, (unsigned long)i);
        const size_t t = idx[i - 1];
        idx[i - 1] = idx[j];
        idx[j] = t;
    }
    gsl_rng_free(r);

    /* The first n % n_nodes nodes take one sample more. */
    const size_t base = n / (size_t)n_nodes, extra = n % (size_t)n_nodes;
    off[0] = 0;
    for (size_t i = 0; i < (size_t)n_nodes; i++)
        off[i + 1] = off[i] + base + (i < extra);

    p->n_nodes = n_nodes;
    p->off = off;
    p->idx = idx;
    return 0;
}

void mdl_partition_fini(mdl_partition *p)
{
    if (p == NULL)
        return;
    free(p->off);
    free(p->idx);
    p->off = NULL;
    p->idx = NULL;
    p->n_nodes = 0;
}

/* ---- non-IID partitions ------------------------------------------------ */

static int say(char *err, size_t es, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static int say(char *err, size_t es, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, es, fmt, ap);
    va_end(ap);
    return -1;
}

static void shuffle(size_t *a, size_t n, gsl_rng *r)
{
    for (size_t i = n; i > 1; i--) {
        const size_t j = (size_t)gsl_rng_uniform_int(r, (unsigned long)i);
        const size_t t = a[i - 1];
        a[i - 1] = a[j];
        a[j] = t;
    }
}

/* Cuts total items into N counts at the cumulative shares of w (sum > 0):
 * cnt_i = floor(W_i total / W) - floor(W_{i-1} total / W), W_i the prefix
 * sums.  The counts add up to total exactly. */
static void cut(const double *w, int N, size_t total, size_t *cnt)
{
    double sum = 0.0, acc = 0.0;
    for (int i = 0; i < N; i++)
        sum += w[i];
    size_t prev = 0;
    for (int i = 0; i < N; i++) {
        acc += w[i];
        size_t c = i == N - 1 ? total : (size_t)((acc / sum) * (double)total);
        if (c > total)
            c = total;
        if (c < prev)
            c = prev;
        cnt[i] = c - prev;
        prev = c;
    }
}

/* Indices of each class, in index order: class k holds
 * by[cls_off[k] .. cls_off[k+1]-1]. */
static int by_class(const mdl_dataset *ds, size_t **by, size_t **cls_off)
{
    const size_t C = (size_t)ds->n_classes;
    size_t *off = calloc(C + 1, sizeof *off), *fill = calloc(C, sizeof *fill);
    size_t *idx = malloc((ds->n ? ds->n : 1) * sizeof *idx);
    if (!off || !fill || !idx) {
        free(off);
        free(fill);
        free(idx);
        return -1;
    }
    for (size_t i = 0; i < ds->n; i++)
        off[(size_t)ds->y[i] + 1]++;
    for (size_t k = 0; k < C; k++)
        off[k + 1] += off[k];
    for (size_t i = 0; i < ds->n; i++) {
        const size_t k = (size_t)ds->y[i];
        idx[off[k] + fill[k]++] = i;
    }
    free(fill);
    *by = idx;
    *cls_off = off;
    return 0;
}

static int dirichlet(const mdl_partition_spec *sp, const mdl_dataset *ds, gsl_rng *r,
                     size_t *off, size_t *idx, char *err, size_t es)
{
    const int N = sp->n_nodes;
    const size_t C = (size_t)ds->n_classes;
    size_t *by, *coff;
    if (by_class(ds, &by, &coff) != 0)
        return say(err, es, "out of memory");
    double *alpha = malloc((size_t)N * sizeof *alpha), *q = malloc((size_t)N * sizeof *q);
    size_t *cnt = malloc(C * (size_t)N * sizeof *cnt), *size = malloc((size_t)N * sizeof *size);
    int rc = -1;
    if (!alpha || !q || !cnt || !size) {
        say(err, es, "out of memory");
        goto out_free;
    }
    for (int i = 0; i < N; i++)
        alpha[i] = sp->alpha;
    for (int attempt = 0; attempt < 1000 && rc != 0; attempt++) {
        for (size_t k = 0; k < C; k++)
            shuffle(by + coff[k], coff[k + 1] - coff[k], r);
        memset(size, 0, (size_t)N * sizeof *size);
        for (size_t k = 0; k < C; k++) {
            gsl_ran_dirichlet(r, (size_t)N, alpha, q);
            /* Shares so small that they all underflow: give the class to
             * the node with the largest share. */
            double s = 0.0;
            for (int i = 0; i < N; i++)
                s += q[i];
            if (!(s > 0.0)) {
                for (int i = 0; i < N; i++)
                    q[i] = i == 0;
            }
            cut(q, N, coff[k + 1] - coff[k], cnt + k * (size_t)N);
            for (int i = 0; i < N; i++)
                size[i] += cnt[k * (size_t)N + (size_t)i];
        }
        rc = 0;
        for (int i = 0; i < N; i++)
            if (size[i] < sp->min_samples)
                rc = -1;
    }
    if (rc != 0) {
        say(err, es, "dirichlet partition with alpha %g left a node with fewer than %zu "
            "samples in 1000 draws: raise alpha or lower the batch", sp->alpha, sp->min_samples);
        goto out_free;
    }
    off[0] = 0;
    for (int i = 0; i < N; i++)
        off[i + 1] = off[i] + size[i];
    /* Node i's samples: its cut of each class, classes in order. */
    size_t *fill = size;
    memset(fill, 0, (size_t)N * sizeof *fill);
    for (size_t k = 0; k < C; k++) {
        size_t pos = coff[k];
        for (int i = 0; i < N; i++) {
            const size_t c = cnt[k * (size_t)N + (size_t)i];
            memcpy(idx + off[i] + fill[i], by + pos, c * sizeof *idx);
            fill[i] += c;
            pos += c;
        }
    }
out_free:
    free(size);
    free(cnt);
    free(q);
    free(alpha);
    free(by);
    free(coff);
    return rc;
}

static int shards(const mdl_partition_spec *sp, const mdl_dataset *ds, gsl_rng *r,
                  size_t *off, size_t *idx, char *err, size_t es)
{
    const size_t N = (size_t)sp->n_nodes, k = (size_t)sp->shards_per_node, S = N * k;
    const size_t n = ds->n;
    if (S > n || n / S < 1)
        return say(err, es, "shards partition needs at least nodes * shards_per_node (%zu) "
                   "samples, got %zu", S, n);
    size_t *by, *coff, *perm = malloc(S * sizeof *perm);
    if (!perm || by_class(ds, &by, &coff) != 0) {
        free(perm);
        return say(err, es, "out of memory");
    }
    for (size_t s = 0; s < S; s++)
        perm[s] = s;
    shuffle(perm, S, r);
    /* Shard s is by[start(s) .. start(s+1)-1], start(s) = s n / S. */
    off[0] = 0;
    for (size_t i = 0; i < N; i++) {
        size_t pos = off[i];
        for (size_t j = 0; j < k; j++) {
            const size_t s = perm[i * k + j];
            const size_t a = s * n / S, b = (s + 1) * n / S;
            memcpy(idx + pos, by + a, (b - a) * sizeof *idx);
            pos += b - a;
        }
        off[i + 1] = pos;
    }
    int rc = 0;
    for (size_t i = 0; i < N; i++)
        if (off[i + 1] - off[i] < sp->min_samples)
            rc = say(err, es, "shards partition gives node %zu %zu samples, fewer than %zu: "
                     "lower shards or the batch", i, off[i + 1] - off[i], sp->min_samples);
    free(perm);
    free(by);
    free(coff);
    return rc;
}

static int quantity(const mdl_partition_spec *sp, const mdl_dataset *ds, gsl_rng *r,
                    size_t *off, size_t *idx, char *err, size_t es)
{
    const int N = sp->n_nodes;
    const size_t n = ds->n, floor_n = sp->min_samples * (size_t)N;
    if (floor_n > n)
        return say(err, es, "quantity partition needs at least nodes * %zu = %zu samples, "
                   "got %zu", sp->min_samples, floor_n, n);
    double *w = malloc((size_t)N * sizeof *w), *u = malloc((size_t)N * sizeof *u);
    size_t *cnt = malloc((size_t)N * sizeof *cnt);
    if (!w || !u || !cnt) {
        free(w);
        free(u);
        free(cnt);
        return say(err, es, "out of memory");
    }
    for (size_t i = 0; i < n; i++)
        idx[i] = i;
    shuffle(idx, n, r);
    /* w_i = u_i^(-1/a), u_i uniform on (0, 1): gsl_ran_pareto(r, a, 1)
     * step for step, keeping u_i.  A small exponent overflows w_i or their
     * sum to inf, and inf / inf would cut at NaN; then the weights are
     * taken relative to the largest, in logarithms: w_i / w_max =
     * exp((log u_max - log u_i) / a), in (0, 1] and 1 for the largest,
     * the same shares (up to rounding) with no overflow at any a > 0. */
    double sum = 0;
    for (int i = 0; i < N; i++) {
        u[i] = gsl_rng_uniform_pos(r);
        w[i] = pow(u[i], -1 / sp->exponent);
        sum += w[i];
    }
    if (!isfinite(sum)) {
        double lmin = 0;
        for (int i = 0; i < N; i++)
            if (i == 0 || log(u[i]) < lmin)
                lmin = log(u[i]);
        for (int i = 0; i < N; i++)
            w[i] = exp((lmin - log(u[i])) / sp->exponent);
    }
    cut(w, N, n - floor_n, cnt);
    off[0] = 0;
    for (int i = 0; i < N; i++)
        off[i + 1] = off[i] + sp->min_samples + cnt[i];
    free(cnt);
    free(u);
    free(w);
    return 0;
}

int mdl_partition_build(const mdl_partition_spec *sp, const mdl_dataset *ds,
                        uint64_t seed, mdl_partition *p, char *err, size_t es)
{
    p->n_nodes = 0;
    p->off = NULL;
    p->idx = NULL;
    if (sp->kind == MDL_PART_IID) {
        if (mdl_partition_iid(ds->n, sp->n_nodes, seed, p) != 0)
            return say(err, es, "out of memory");
        if (ds->n / (size_t)sp->n_nodes < sp->min_samples) {
            mdl_partition_fini(p);
            return say(err, es, "iid partition gives %zu samples per node, fewer than %zu",
                       ds->n / (size_t)sp->n_nodes, sp->min_samples);
        }
        return 0;
    }
    if (sp->n_nodes < 1 || ds->n > 0xffffffffu)
        return say(err, es, "bad partition request");
    if (ds->y == NULL && sp->kind != MDL_PART_QUANTITY)
        return say(err, es, "%s partition needs class labels; the data set has none",
                   sp->kind == MDL_PART_DIRICHLET ? "dirichlet" : "shards");
    size_t *off = malloc(((size_t)sp->n_nodes + 1) * sizeof *off);
    size_t *idx = malloc((ds->n ? ds->n : 1) * sizeof *idx);
    gsl_rng *r = mdl_i_rng_create(seed);
    int rc;
    if (!off || !idx || !r)
        rc = say(err, es, "out of memory");
    else if (sp->kind == MDL_PART_DIRICHLET)
        rc = dirichlet(sp, ds, r, off, idx, err, es);
    else if (sp->kind == MDL_PART_SHARDS)
        rc = shards(sp, ds, r, off, idx, err, es);
    else
        rc = quantity(sp, ds, r, off, idx, err, es);
    if (r)
        gsl_rng_free(r);
    if (rc != 0) {
        free(off);
        free(idx);
        return -1;
    }
    p->n_nodes = sp->n_nodes;
    p->off = off;
    p->idx = idx;
    return 0;
}

int mdl_partition_stats_compute(const mdl_partition *p, const mdl_dataset *ds,
                                mdl_partition_stats *st)
{
    const size_t C = (size_t)ds->n_classes;
    unsigned char *seen = malloc(C ? C : 1);
    if (!seen)
        return -1;
    memset(st, 0, sizeof *st);
    double ssum = 0.0, csum = 0.0;
    for (int i = 0; i < p->n_nodes; i++) {
        const size_t s = p->off[i + 1] - p->off[i];
        memset(seen, 0, C);
        int c = 0;
        for (size_t k = p->off[i]; ds->y && k < p->off[i + 1]; k++) {
            const size_t y = (size_t)ds->y[p->idx[k]];
            c += !seen[y];
            seen[y] = 1;
        }
        if (i == 0 || s < st->samples_min)
            st->samples_min = s;
        if (i == 0 || s > st->samples_max)
            st->samples_max = s;
        if (i == 0 || c < st->classes_min)
            st->classes_min = c;
        if (i == 0 || c > st->classes_max)
            st->classes_max = c;
        ssum += (double)s;
        csum += c;
    }
    if (p->n_nodes > 0) {
        st->samples_mean = ssum / p->n_nodes;
        st->classes_mean = csum / p->n_nodes;
    }
    free(seen);
    return 0;
}
