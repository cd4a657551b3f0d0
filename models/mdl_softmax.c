/* mdl_softmax.c -- multinomial softmax regression: p = softmax(W x + b),
 * mean cross-entropy, L2 on W only.  Parameters are W (C x d, row-major)
 * then b (C).  Forward and backward passes on a gathered batch go through
 * CBLAS (two dgemm calls per step); the softmax subtracts each row's maximum
 * so no logit overflows.  This file does not gather rows, chunk evaluation
 * or allocate outside alloc: mdl.c does the first two.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <gsl/gsl_cblas.h>
#include "mdl_internal.h"

static size_t n_params(const mdl_arch *a)
{
    return (size_t)a->n_classes * a->d + (size_t)a->n_classes;
}

static int supports(const mdl_arch *a)
{
    return a->n_classes >= 2 && a->n_hidden == 0 && !a->no_bias;
}

/* The scratch is the n x C matrix of logits, then probabilities, then
 * P - Y. */
static void *alloc(const mdl_arch *a, size_t max_batch)
{
    if (max_batch > SIZE_MAX / sizeof(double) / (size_t)a->n_classes)
        return NULL;
    return malloc(max_batch * (size_t)a->n_classes * sizeof(double));
}

static void release(void *ws)
{
    free(ws);
}

static void init(const mdl_model *m, double *params, gsl_rng *rng)
{
    mdl_i_init_weights(params, (size_t)m->n_classes * m->d, m->n_params, rng);
}

/* Overwrites Z (n x C) with the class probabilities of the n rows of X,
 * returns the sum of their cross-entropies and counts in *n_correct the
 * rows whose first largest logit is the label. */
static double forward(const mdl_model *m, double *Z, const double *params,
                      const double *X, const int *y, size_t n, size_t *n_correct)
{
    const size_t d = m->d, C = (size_t)m->n_classes;
    const double *W = params, *b = params + C * d;
    double sum = 0.0;
    size_t correct = 0;

    for (size_t i = 0; i < n; i++)
        memcpy(Z + i * C, b, C * sizeof *Z);
    cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasTrans, (int)n, (int)C, (int)d,
                1.0, X, (int)d, W, (int)d, 1.0, Z, (int)C);

    sum = mdl_i_softmax_xent(Z, y, n, C, &correct);
    *n_correct = correct;
    return sum;
}

static double loss_grad(const mdl_model *m, void *ws, const double *params,
                        const double *X, const int *y, size_t n, double *grad)
{
    const size_t d = m->d, C = (size_t)m->n_classes;
    double *G = ws;
    double *gW = grad, *gb = grad + C * d;
    const double inv_n = 1.0 / (double)n;
    size_t correct;

    const double sum = forward(m, G, params, X, y, n, &correct);
    for (size_t i = 0; i < n; i++)
        G[i * C + (size_t)y[i]] -= 1.0;

    /* grad W = (P - Y)^T X / n, grad b = column means of P - Y. */
    cblas_dgemm(CblasRowMajor, CblasTrans, CblasNoTrans, (int)C, (int)d, (int)n,
                inv_n, G, (int)C, X, (int)d, 0.0, gW, (int)d);
    for (size_t k = 0; k < C; k++)
        gb[k] = 0.0;
    for (size_t i = 0; i < n; i++)
        for (size_t k = 0; k < C; k++)
            gb[k] += G[i * C + k];
    for (size_t k = 0; k < C; k++)
        gb[k] *= inv_n;

    return sum * inv_n + mdl_i_l2(m->l2, params, C * d, gW);
}

static void evaluate(const mdl_model *m, void *ws, const double *params,
                     const double *X, const int *y, size_t n,
                     double *loss_sum, size_t *n_correct)
{
    *loss_sum = forward(m, ws, params, X, y, n, n_correct);
}

static double penalty(const mdl_model *m, const double *params)
{
    return mdl_i_l2(m->l2, params, (size_t)m->n_classes * m->d, NULL);
}

/* Forward X W^T (2dC) and backward (P - Y)^T X (2dC). */
static double flops(const mdl_arch *a)
{
    return 4.0 * (double)a->d * (double)a->n_classes;
}

const mdl_type mdl_softmax = {
    .name = "softmax",
    .n_params = n_params,
    .supports = supports,
    .alloc = alloc,
    .free = release,
    .init = init,
    .loss_grad = loss_grad,
    .evaluate = evaluate,
    .penalty = penalty,
    .flops = flops,
};
