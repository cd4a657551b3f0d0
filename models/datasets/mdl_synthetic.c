/* mdl_synthetic.c -- the synthetic Gaussian-mixture classification problem
 * that tests and small scenarios train on: class means mu_k ~ N(0,
 * separation^2 I_d), labels uniform over the classes, x = mu_y + N(0, I_d).
 * One mt19937 stream, seeded from the 64-bit seed, draws in a fixed order
 * (all means, then each training sample's label and features, then the test
 * samples'), so a seed always gives the same bytes and train and test share
 * the means.  Also the known-weight logistic and regression problems of
 * mdl_data.h.  It does not partition, normalise or write data.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <gsl/gsl_randist.h>
#include "mdl_data.h"
#include "../mdl_internal.h"

/* Allocates an empty set of n samples; 0, or -1 when out of memory. */
static int dataset_alloc(mdl_dataset *ds, size_t n, size_t d, int n_classes)
{
    memset(ds, 0, sizeof *ds);
    ds->n = n;
    ds->d = d;
    ds->n_classes = n_classes;
    if (n == 0)
        return 0;
    if (n > SIZE_MAX / sizeof(double) / d)
        return -1;
    ds->x = malloc(n * d * sizeof *ds->x);
    ds->y = malloc(n * sizeof *ds->y);
    if (ds->x == NULL || ds->y == NULL) {
        mdl_dataset_fini(ds);
        return -1;
    }
    return 0;
}

static void draw(mdl_dataset *ds, const double *mu, gsl_rng *r)
{
    const size_t d = ds->d;
    for (size_t i = 0; i < ds->n; i++) {
        const int k = (int)gsl_rng_uniform_int(r, (unsigned long)ds->n_classes);
        const double *m = mu + (size_t)k * d;
        double *x = ds->x + i * d;
        ds->y[i] = k;
        for (size_t j = 0; j < d; j++)
            x[j] = m[j] + gsl_ran_gaussian_ziggurat(r, 1.0);
    }
}

int mdl_synth_generate(const mdl_synth_spec *spec, uint64_t seed,
                       mdl_dataset *train, mdl_dataset *test)
{
    const size_t d = spec->d;
    const size_t C = (size_t)spec->n_classes;
    int rc = -1;

    train->x = test->x = NULL;
    train->y = test->y = NULL;
    train->t = test->t = NULL;
    train->n = test->n = 0;
    if (d == 0 || spec->n_classes < 2 || !(spec->separation >= 0.0)
        || !isfinite(spec->separation) || C > SIZE_MAX / sizeof(double) / d)
        return -1;

    double *mu = malloc(C * d * sizeof *mu);
    if (mu == NULL)
        return -1;
    gsl_rng *r = mdl_i_rng_create(seed);
    if (r == NULL)
        goto out_free_mu;
    if (dataset_alloc(train, spec->n_train, d, spec->n_classes) != 0)
        goto out_free_rng;
    if (dataset_alloc(test, spec->n_test, d, spec->n_classes) != 0)
        goto out_fini_train;

    for (size_t i = 0; i < C * d; i++)
        mu[i] = gsl_ran_gaussian_ziggurat(r, spec->separation);
    draw(train, mu, r);
    draw(test, mu, r);
    rc = 0;
    goto out_free_rng;

out_fini_train:
    mdl_dataset_fini(train);
out_free_rng:
    gsl_rng_free(r);
out_free_mu:
    free(mu);
    return rc;
}

/* Features N(0, I), then a label or a target from w (d + 1). */
static int draw_linear(mdl_dataset *ds, const double *w, int regression, double noise,
                       gsl_rng *r)
{
    const size_t d = ds->d;
    for (size_t i = 0; i < ds->n; i++) {
        double *x = ds->x + i * d, z = w[d];
        for (size_t j = 0; j < d; j++) {
            x[j] = gsl_ran_gaussian_ziggurat(r, 1.0);
            z += w[j] * x[j];
        }
        if (regression)
            ds->t[i] = z + gsl_ran_gaussian_ziggurat(r, noise);
        else
            ds->y[i] = gsl_rng_uniform(r) < 1.0 / (1.0 + exp(-z));
    }
    return 0;
}

static int synth_linear(const mdl_synth_linear_spec *sp, uint64_t seed, mdl_dataset *train,
                        mdl_dataset *test, double *w_true, int regression)
{
    const size_t d = sp->d;
    const double scale = regression ? sp->noise : sp->separation;
    int rc = -1;
    memset(train, 0, sizeof *train);
    memset(test, 0, sizeof *test);
    if (d == 0 || !(scale >= 0.0) || !isfinite(scale) || d > SIZE_MAX / sizeof(double) - 1)
        return -1;
    double *w = malloc((d + 1) * sizeof *w);
    gsl_rng *r = mdl_i_rng_create(seed);
    if (!w || !r)
        goto out_free;
    if (dataset_alloc(train, sp->n_train, d, regression ? 0 : 2) != 0
        || dataset_alloc(test, sp->n_test, d, regression ? 0 : 2) != 0)
        goto out_fini;
    for (int s = 0; s < 2; s++) {
        mdl_dataset *ds = s == 0 ? train : test;
        if (regression && ds->n > 0) {
            free(ds->y);
            ds->y = NULL;
            if (!(ds->t = malloc(ds->n * sizeof *ds->t)))
                goto out_fini;
        }
    }
    for (size_t j = 0; j < d; j++)
        w[j] = gsl_ran_gaussian_ziggurat(r, regression ? 1.0 / sqrt((double)d)
                                                       : sp->separation / sqrt((double)d));
    w[d] = regression ? gsl_ran_gaussian_ziggurat(r, 1.0) : 0.0;
    draw_linear(train, w, regression, sp->noise, r);
    draw_linear(test, w, regression, sp->noise, r);
    if (w_true)
        memcpy(w_true, w, (d + 1) * sizeof *w);
    rc = 0;
    goto out_free;

out_fini:
    mdl_dataset_fini(train);
    mdl_dataset_fini(test);
out_free:
    if (r)
        gsl_rng_free(r);
    free(w);
    return rc;
}

int mdl_synth_logistic(const mdl_synth_linear_spec *spec, uint64_t seed, mdl_dataset *train,
                       mdl_dataset *test, double *w_true)
{
    return synth_linear(spec, seed, train, test, w_true, 0);
}

int mdl_synth_regression(const mdl_synth_linear_spec *spec, uint64_t seed, mdl_dataset *train,
                         mdl_dataset *test, double *w_true)
{
    return synth_linear(spec, seed, train, test, w_true, 1);
}
