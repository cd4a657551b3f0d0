/* mdl_linear.c -- linear regression: prediction w.x + b, loss half the
 * mean squared error, L2 on w only.  Parameters are w (d) then b, or w
 * alone without a bias (arch.no_bias: prediction w.x).  The
 * data set has no classes (n_classes 0) and real targets, which mdl.c
 * gathers into the instance's workspace (m->t) with the rows; accuracy is
 * undefined (mdl_evaluate reports NaN).  The batch products are CBLAS
 * dgemv calls (one output: the matrix-vector form of dgemm).  This file
 * does not gather rows, chunk evaluation or allocate outside alloc.
 */
#include <stdlib.h>
#include <gsl/gsl_cblas.h>
#include "mdl_internal.h"

static int supports(const mdl_arch *a)
{
    return a->n_classes == 0 && a->n_hidden == 0;
}

/* The bias: params[d], or 0 without one (arch.no_bias). */
static double bias(const mdl_model *m, const double *params)
{
    return m->arch.no_bias ? 0.0 : params[m->d];
}


/* Writes the n residuals w.x_i + b - t_i to r and returns half their sum of
 * squares. */
static double forward(const mdl_model *m, double *r, const double *params, const double *X,
                      size_t n)
{
    const size_t d = m->d;
    const double b = bias(m, params);
    double sum = 0.0;
    for (size_t i = 0; i < n; i++)
        r[i] = b - m->t[i];
    cblas_dgemv(CblasRowMajor, CblasNoTrans, (int)n, (int)d, 1.0, X, (int)d, params, 1, 1.0,
                r, 1);
    for (size_t i = 0; i < n; i++)
        sum += 0.5 * r[i] * r[i];
    return sum;
}

static double loss_grad(const mdl_model *m, void *ws, const double *params,
                        const double *X, const int *y, size_t n, double *grad)
{
    (void)y;
    const size_t d = m->d;
    double *r = ws;
    const double inv_n = 1.0 / (double)n;
    const double sum = forward(m, r, params, X, n);
    cblas_dgemv(CblasRowMajor, CblasTrans, (int)n, (int)d, inv_n, X, (int)d, r, 1, 0.0, grad, 1);
    if (!m->arch.no_bias) {
        double gb = 0.0;
        for (size_t i = 0; i < n; i++)
            gb += r[i];
        grad[d] = gb * inv_n;
    }
    return sum * inv_n + mdl_i_l2(m->l2, params, d, grad);
}

static void evaluate(const mdl_model *m, void *ws, const double *params,
                     const double *X, const int *y, size_t n,
                     double *loss_sum, size_t *n_correct)
{
    (void)y;
    *loss_sum = forward(m, ws, params, X, n);
    *n_correct = 0;
}

static void hess_apply(const mdl_model *m, const double *params, const double *X,
                       const int *y, size_t n, const double *V, size_t k, double *out,
                       double *work)
{
    (void)params;
    (void)y;
    mdl_i_one_output_hess(m, X, NULL, n, V, k, out, work);
}

/* Forward X w (2d) and backward X^T r (2d). */
static double flops(const mdl_arch *a)
{
    return 4.0 * (double)a->d;
}

const mdl_type mdl_linear = {
    .name = "linear",
    .n_params = mdl_i_one_output_n_params,
    .supports = supports,
    .alloc = mdl_i_one_output_alloc,
    .free = mdl_i_one_output_free,
    .init = mdl_i_one_output_init,
    .loss_grad = loss_grad,
    .evaluate = evaluate,
    .penalty = mdl_i_one_output_penalty,
    .flops = flops,
    .hess_apply = hess_apply,
};
