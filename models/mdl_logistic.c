/* mdl_logistic.c -- binary logistic regression: P(y = 1 | x) = sigmoid(w.x
 * + b), labels 0/1 (n_classes must be 2), mean log-loss, L2 on w only.
 * Parameters are w (d) then b, or w alone (arch.no_bias).  The loss and the residual sigmoid(z) - y are
 * computed in forms that neither overflow nor cancel for large |z|
 * (log1p(exp(-|z|)), sigmoid of a nonpositive argument).  Matrix-vector
 * products on a gathered batch go through CBLAS dgemv.  This file does not
 * gather rows, chunk evaluation or allocate outside alloc.
 */
#include <math.h>
#include <stdlib.h>
#include <gsl/gsl_cblas.h>
#include "mdl_internal.h"

static int supports(const mdl_arch *a)
{
    return a->n_classes == 2 && a->n_hidden == 0;
}


/* log(1 + exp(-s)) without overflow or loss of precision. */
static double softplus_neg(double s)
{
    return s >= 0.0 ? log1p(exp(-s)) : -s + log1p(exp(s));
}

/* 1 / (1 + exp(-t)) for t <= 0, where exp cannot overflow. */
static double sigmoid_nonpos(double t)
{
    const double e = exp(t);
    return e / (1.0 + e);
}

/* Writes the n logits w.x_i + b to z and returns the sum of the losses;
 * counts in *n_correct the rows where (z > 0) equals the label. */
static double forward(const mdl_model *m, double *z, const double *params,
                      const double *X, const int *y, size_t n, size_t *n_correct)
{
    const size_t d = m->d;
    const double *w = params, b = m->arch.no_bias ? 0.0 : params[d];
    double sum = 0.0;
    size_t correct = 0;

    for (size_t i = 0; i < n; i++)
        z[i] = b;
    cblas_dgemv(CblasRowMajor, CblasNoTrans, (int)n, (int)d, 1.0, X, (int)d,
                w, 1, 1.0, z, 1);
    for (size_t i = 0; i < n; i++) {
        /* s > 0 when the sample is on the side of its label. */
        const double s = y[i] == 1 ? z[i] : -z[i];
        sum += softplus_neg(s);
        correct += (z[i] > 0.0) == (y[i] == 1);
    }
    *n_correct = correct;
    return sum;
}

static double loss_grad(const mdl_model *m, void *ws, const double *params,
                        const double *X, const int *y, size_t n, double *grad)
{
    const size_t d = m->d;
    double *r = ws;
    const double inv_n = 1.0 / (double)n;
    size_t correct;

    const double sum = forward(m, r, params, X, y, n, &correct);
    /* sigmoid(z) - y is sigmoid(z) for y = 0 and -sigmoid(-z) for y = 1;
     * the small one of the two is always taken from a nonpositive
     * argument, so residuals near 0 keep their relative precision. */
    for (size_t i = 0; i < n; i++) {
        const double z = r[i];
        if (y[i] == 1)
            r[i] = z >= 0.0 ? -sigmoid_nonpos(-z) : -1.0 + sigmoid_nonpos(z);
        else
            r[i] = z <= 0.0 ? sigmoid_nonpos(z) : 1.0 - sigmoid_nonpos(-z);
    }

    cblas_dgemv(CblasRowMajor, CblasTrans, (int)n, (int)d, inv_n, X, (int)d,
                r, 1, 0.0, grad, 1);
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
    *loss_sum = forward(m, ws, params, X, y, n, n_correct);
}

/* H V with H = X~^T diag(s (1 - s)) X~ / n + l2 (weights): s (1 - s) is
 * taken as e / (1 + e)^2 with e = exp(-|z|), which neither overflows nor
 * cancels.  The per-row curvatures go to the type's scratch. */
static void hess_apply(const mdl_model *m, const double *params, const double *X,
                       const int *y, size_t n, const double *V, size_t k, double *out,
                       double *work)
{
    double *D = m->ws;
    size_t correct;
    forward(m, D, params, X, y, n, &correct);
    for (size_t i = 0; i < n; i++) {
        const double e = exp(-fabs(D[i]));
        D[i] = e / ((1.0 + e) * (1.0 + e));
    }
    mdl_i_one_output_hess(m, X, D, n, V, k, out, work);
}

/* Forward X w (2d) and backward X^T r (2d). */
static double flops(const mdl_arch *a)
{
    return 4.0 * (double)a->d;
}

const mdl_type mdl_logistic = {
    .name = "logistic",
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
