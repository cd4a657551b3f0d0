/* bench_models.c -- gradient throughput of dtsim's model code against the
 * same computation written directly against CBLAS.  For softmax regression
 * (784 x 10) and the MLP 784-100-10 (ReLU) at batch 32 and 128:
 *   A  mdl_loss_grad: gathers the batch's rows from a 60000-sample data set
 *      by index, then the model's forward and backward passes;
 *   B  the same mathematics inlined here on rows that are already
 *      contiguous (a random block of the data set): dgemm forward, softmax,
 *      dgemm backward, bias sums, L2 through daxpy/ddot -- the practical
 *      limit for this BLAS.
 *   A on doubles: A on the same values held as doubles (how runs held
 *      Fashion-MNIST before the bytes), for the cost of the gather;
 *   A+ A followed by the optimizer update a run applies (mdl_optim_step,
 *      momentum 0.9 and weight decay: one fused pass), on the data held
 *      as a run holds Fashion-MNIST (bytes, min-max scaled as rows are
 *      gathered): the in-run step, gradient + optimizer;
 *   B+ B followed by the same update written inline (one loop).
 * A and B alternate run by run in one process and are timed in CPU time
 * (getrusage) and wall time; each cell is the median of RUNS runs.  Both
 * compute the same loss on the same rows, checked once before timing.
 * Output is a markdown table on stdout.  It measures single steps, not
 * the simulator around them.  Arguments (optional): KIND [BATCH], the
 * cells of that model ("softmax" or "mlp") only, of that batch only, to
 * interleave one cell with whole runs (bench/RESULTS.md: the D-PSGD round
 * against B+).
 */
#include "mdl.h"
#include "mdl_optim.h"

#include <gsl/gsl_cblas.h>
#include <gsl/gsl_randist.h>
#include <gsl/gsl_rng.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#define RUNS 7
#define N_DATA 60000
#define D 784
#define C 10
#define H 100
#define L2 1e-4

static double cpu_now(void)
{
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return (double)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec)
           + 1e-6 * (double)(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec);
}

static double wall_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static int cmp_double(const void *a, const void *b)
{
    const double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Softmax rows of Z (n x c) in place; returns the summed cross-entropy. */
static double softmax_ce(double *Z, const int *y, size_t n, size_t c)
{
    double sum = 0.0;
    for (size_t i = 0; i < n; i++) {
        double *z = Z + i * c, zmax = z[0], s = 0.0;
        for (size_t k = 1; k < c; k++)
            zmax = z[k] > zmax ? z[k] : zmax;
        const double zy = z[y[i]] - zmax;
        for (size_t k = 0; k < c; k++) {
            z[k] = exp(z[k] - zmax);
            s += z[k];
        }
        for (size_t k = 0; k < c; k++)
            z[k] /= s;
        sum += log(s) - zy;
    }
    return sum;
}

static void add_bias(double *Z, const double *b, size_t n, size_t c)
{
    for (size_t i = 0; i < n; i++)
        memcpy(Z + i * c, b, c * sizeof *Z);
}

static void col_sums(double *g, const double *G, size_t n, size_t c)
{
    memset(g, 0, c * sizeof *g);
    for (size_t i = 0; i < n; i++)
        for (size_t k = 0; k < c; k++)
            g[k] += G[i * c + k];
}

/* Scratch of the direct versions. */
static double Z1[128 * H], Z2[128 * C], G1[128 * H];

static double direct_softmax(const double *p, const double *X, const int *y, size_t n,
                             double *g)
{
    const double *W = p, *b = p + C * D;
    add_bias(Z2, b, n, C);
    cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasTrans, (int)n, C, D, 1.0, X, D, W, D, 1.0,
                Z2, C);
    const double loss = softmax_ce(Z2, y, n, C) / (double)n;
    for (size_t i = 0; i < n; i++)
        Z2[i * C + (size_t)y[i]] -= 1.0;
    cblas_dgemm(CblasRowMajor, CblasTrans, CblasNoTrans, C, D, (int)n, 1.0 / (double)n, Z2, C,
                X, D, 0.0, g, D);
    col_sums(g + C * D, Z2, n, C);
    cblas_dscal(C, 1.0 / (double)n, g + C * D, 1);
    cblas_daxpy(C * D, L2, W, 1, g, 1);
    return loss + 0.5 * L2 * cblas_ddot(C * D, W, 1, W, 1);
}

static double direct_mlp(const double *p, const double *X, const int *y, size_t n, double *g)
{
    const double *W1 = p, *b1 = W1 + H * D, *W2 = b1 + H, *b2 = W2 + C * H;
    double *gW1 = g, *gb1 = gW1 + H * D, *gW2 = gb1 + H, *gb2 = gW2 + C * H;
    add_bias(Z1, b1, n, H);
    cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasTrans, (int)n, H, D, 1.0, X, D, W1, D, 1.0,
                Z1, H);
    for (size_t k = 0; k < n * H; k++)
        Z1[k] = Z1[k] > 0 ? Z1[k] : 0;
    add_bias(Z2, b2, n, C);
    cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasTrans, (int)n, C, H, 1.0, Z1, H, W2, H, 1.0,
                Z2, C);
    const double loss = softmax_ce(Z2, y, n, C) / (double)n;
    const double inv = 1.0 / (double)n;
    for (size_t i = 0; i < n; i++) {
        for (size_t k = 0; k < C; k++)
            Z2[i * C + k] *= inv;
        Z2[i * C + (size_t)y[i]] -= inv;
    }
    cblas_dgemm(CblasRowMajor, CblasTrans, CblasNoTrans, C, H, (int)n, 1.0, Z2, C, Z1, H, 0.0,
                gW2, H);
    col_sums(gb2, Z2, n, C);
    cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, (int)n, H, C, 1.0, Z2, C, W2, H, 0.0,
                G1, H);
    for (size_t k = 0; k < n * H; k++)
        if (!(Z1[k] > 0))
            G1[k] = 0;
    cblas_dgemm(CblasRowMajor, CblasTrans, CblasNoTrans, H, D, (int)n, 1.0, G1, H, X, D, 0.0,
                gW1, D);
    col_sums(gb1, G1, n, H);
    cblas_daxpy(H * D, L2, W1, 1, gW1, 1);
    cblas_daxpy(C * H, L2, W2, 1, gW2, 1);
    return loss + 0.5 * L2 * (cblas_ddot(H * D, W1, 1, W1, 1) + cblas_ddot(C * H, W2, 1, W2, 1));
}

typedef struct cell {
    const char *name;
    int mlp;
    size_t batch, iters;
} cell;

int main(int argc, char **argv)
{
    const char *only = argc > 1 ? argv[1] : NULL;
    const size_t only_batch = argc > 2 ? (size_t)strtoul(argv[2], NULL, 10) : 0;
    if (only && strcmp(only, "mlp") != 0 && strcmp(only, "softmax") != 0) {
        fprintf(stderr, "usage: bench_models [mlp|softmax [BATCH]]\n");
        return 2;
    }
    static const cell cells[] = {
        { "softmax 784x10", 0, 32, 4000 }, { "softmax 784x10", 0, 128, 1000 },
        { "MLP 784-100-10", 1, 32, 1000 }, { "MLP 784-100-10", 1, 128, 250 },
    };
    gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
    gsl_rng_set(r, 20240601u);
    /* Bytes like Fashion-MNIST's pixels, min-max scaled as a run scales
     * them (ds8: compact, scaled on gather); ds holds the same values as
     * doubles (the rows B reads). */
    unsigned char *u = malloc((size_t)N_DATA * D);
    mdl_dataset ds8 = { .n = N_DATA, .d = D, .n_classes = C, .x8 = u, .x8_mem = u,
                        .y = malloc(N_DATA * sizeof(int)) };
    for (size_t i = 0; i < (size_t)N_DATA * D; i++)
        u[i] = (unsigned char)gsl_rng_uniform_int(r, 256);
    for (size_t i = 0; i < N_DATA; i++)
        ds8.y[i] = (int)gsl_rng_uniform_int(r, C);
    if (mdl_dataset_scale(&ds8, NULL, MDL_SCALE_MINMAX) != 0)
        return 1;
    mdl_dataset ds = { .n = N_DATA, .d = D, .n_classes = C,
                       .x = malloc((size_t)N_DATA * D * sizeof(double)), .y = ds8.y };
    for (size_t i = 0; i < N_DATA; i++)
        mdl_dataset_row(&ds8, i, ds.x + i * D);
    const mdl_optim_spec os = { .lr = 0.01, .momentum = 0.9, .weight_decay = 1e-4 };

    const char *threads = getenv("OPENBLAS_NUM_THREADS");
    printf("CBLAS: %s, OPENBLAS_NUM_THREADS=%s; median of %d runs, A and B alternating\n\n",
           DTSIM_CBLAS, threads ? threads : "(unset)", RUNS);
    printf("| model | batch | A dtsim samples/s (CPU) | B direct CBLAS samples/s (CPU) | "
           "B/A | A wall samples/s | B wall samples/s | A us/step (CPU) | A on doubles "
           "us/step | A+ us/step | B+ us/step | A+/B+ |\n");
    printf("|---|---|---|---|---|---|---|---|---|---|---|---|\n");

    for (size_t c = 0; c < sizeof cells / sizeof cells[0]; c++) {
        const cell *ce = &cells[c];
        if ((only && ce->mlp != (strcmp(only, "mlp") == 0))
            || (only_batch && ce->batch != only_batch))
            continue;
        mdl_arch a = { .d = D, .n_classes = C, .n_hidden = ce->mlp ? 1 : 0, .hidden = { H },
                       .act = MDL_ACT_RELU };
        mdl_model *m = mdl_create_arch(ce->mlp ? &mdl_mlp : &mdl_softmax, &a, L2, ce->batch);
        const size_t P = mdl_n_params(m);
        double *p = malloc(P * sizeof *p), *g = malloc(P * sizeof *g);
        double *mom = calloc(P, sizeof *mom);
        mdl_optim *opt = mdl_optim_create(&os, 1, P);
        mdl_init_params(m, p, r);
        size_t *idx = malloc(ce->iters * ce->batch * sizeof *idx);
        size_t *start = malloc(ce->iters * sizeof *start);
        for (size_t i = 0; i < ce->iters * ce->batch; i++)
            idx[i] = gsl_rng_uniform_int(r, N_DATA);
        for (size_t i = 0; i < ce->iters; i++)
            start[i] = gsl_rng_uniform_int(r, N_DATA - ce->batch);

        /* Same rows, same loss: A on indices start..start+b-1, B on the block. */
        size_t blk[128];
        for (size_t i = 0; i < ce->batch; i++)
            blk[i] = start[0] + i;
        const double la = mdl_loss_grad(m, p, &ds8, blk, ce->batch, g);
        const double lb = (ce->mlp ? direct_mlp : direct_softmax)(p, ds.x + start[0] * D,
                                                                  ds.y + start[0], ce->batch, g);
        if (fabs(la - lb) > 1e-12 * fabs(la)) {
            fprintf(stderr, "bench_models: A and B disagree: %.17g vs %.17g\n", la, lb);
            return 1;
        }

        double ca[RUNS], cb[RUNS], wa[RUNS], wb[RUNS], cap[RUNS], cbp[RUNS], cad[RUNS];
        double sink = 0;
        for (int run = 0; run < RUNS; run++) {
            double c0 = cpu_now();
            for (size_t it = 0; it < ce->iters; it++)
                sink += mdl_loss_grad(m, p, &ds, idx + it * ce->batch, ce->batch, g);
            cad[run] = cpu_now() - c0;
            c0 = cpu_now();
            for (size_t it = 0; it < ce->iters; it++) {
                sink += mdl_loss_grad(m, p, &ds8, idx + it * ce->batch, ce->batch, g);
                mdl_optim_step(opt, 0, p, g, 1.0);
            }
            cap[run] = cpu_now() - c0;
            c0 = cpu_now();
            for (size_t it = 0; it < ce->iters; it++) {
                sink += (ce->mlp ? direct_mlp : direct_softmax)(p, ds.x + start[it] * D,
                                                                ds.y + start[it], ce->batch, g);
                for (size_t k = 0; k < P; k++) {
                    mom[k] = 0.9 * mom[k] + g[k] + 1e-4 * p[k];
                    p[k] -= 0.01 * mom[k];
                }
            }
            cbp[run] = cpu_now() - c0;
            c0 = cpu_now();
            double w0 = wall_now();
            for (size_t it = 0; it < ce->iters; it++)
                sink += mdl_loss_grad(m, p, &ds8, idx + it * ce->batch, ce->batch, g);
            ca[run] = cpu_now() - c0;
            wa[run] = wall_now() - w0;
            c0 = cpu_now();
            w0 = wall_now();
            for (size_t it = 0; it < ce->iters; it++)
                sink += (ce->mlp ? direct_mlp : direct_softmax)(p, ds.x + start[it] * D,
                                                                ds.y + start[it], ce->batch, g);
            cb[run] = cpu_now() - c0;
            wb[run] = wall_now() - w0;
        }
        qsort(ca, RUNS, sizeof *ca, cmp_double);
        qsort(cb, RUNS, sizeof *cb, cmp_double);
        qsort(wa, RUNS, sizeof *wa, cmp_double);
        qsort(wb, RUNS, sizeof *wb, cmp_double);
        qsort(cap, RUNS, sizeof *cap, cmp_double);
        qsort(cbp, RUNS, sizeof *cbp, cmp_double);
        qsort(cad, RUNS, sizeof *cad, cmp_double);
        const double samples = (double)(ce->iters * ce->batch);
        const double sa = samples / ca[RUNS / 2], sb = samples / cb[RUNS / 2];
        const double iters = (double)ce->iters;
        printf("| %s | %zu | %.0f | %.0f | %.2f | %.0f | %.0f | %.1f | %.1f | %.1f | %.1f | "
               "%.2f |\n",
               ce->name, ce->batch, sa, sb, sb / sa, samples / wa[RUNS / 2],
               samples / wb[RUNS / 2], 1e6 * ca[RUNS / 2] / iters, 1e6 * cad[RUNS / 2] / iters,
               1e6 * cap[RUNS / 2] / iters,
               1e6 * cbp[RUNS / 2] / iters, cap[RUNS / 2] / cbp[RUNS / 2]);
        mdl_optim_destroy(opt);
        free(mom);
        if (!isfinite(sink))
            fprintf(stderr, "bench_models: non-finite loss\n");
        free(start);
        free(idx);
        free(g);
        free(p);
        mdl_destroy(m);
    }
    free(ds.x);
    mdl_dataset_fini(&ds8);
    gsl_rng_free(r);
    return 0;
}
