/* mdl_synthetic.c -- the synthetic Gaussian-mixture classification problem
 * that tests and small scenarios train on: class means mu_k ~ N(0,
 * separation^2 I_d), labels uniform over the classes, x = mu_y + N(0, I_d).
 * One mt19937 stream, seeded from the 64-bit seed, draws in a fixed order
 * (all means, then each training sample's label and features, then the test
 * samples'), so a seed always gives the same bytes and train and test share
 * the means.  It does not partition, normalise or write data.
 */
#include <math.h>
#include <stdlib.h>
#include <gsl/gsl_randist.h>
#include "mdl_data.h"
#include "../mdl_internal.h"

/* Allocates an empty set of n samples; 0, or -1 when out of memory. */
static int dataset_alloc(mdl_dataset *ds, size_t n, size_t d, int n_classes)
{
    ds->n = n;
    ds->d = d;
    ds->n_classes = n_classes;
    ds->x = NULL;
    ds->y = NULL;
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
