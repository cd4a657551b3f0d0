/* mdl_stage.c -- the MLP's weight layers a .. b as a pipeline stage: the
 * forward pass of a micro-batch of input activations (keeping each
 * layer's output for the backward pass) and the backward pass from the
 * gradient of the stage's output (or, for the last stage, from the
 * labels), with the same products, activations and softmax as mdl_mlp.c,
 * so that chained stages give the whole MLP's loss and gradient.  It does
 * not draw batches, hold state or allocate: the caller keeps the stashed
 * activations (one buffer per micro-batch in flight) and the scratch.
 */
#include "mdl_stage.h"
#include "mdl_internal.h"

#include <math.h>
#include <string.h>
#include <gsl/gsl_cblas.h>

static size_t width(const mdl_arch *a, size_t l)
{
    if (l == 0)
        return a->d;
    if (l <= a->n_hidden)
        return a->hidden[l - 1];
    return (size_t)a->n_classes;
}

size_t mdl_stage_param_off(const mdl_model *m, size_t l)
{
    size_t off = 0;
    for (size_t k = 1; k < l; k++)
        off += width(&m->arch, k) * width(&m->arch, k - 1) + width(&m->arch, k);
    return off;
}

size_t mdl_stage_acts_doubles(const mdl_model *m, size_t a, size_t b, size_t n)
{
    size_t s = 0;
    for (size_t l = a; l <= b; l++)
        s += n * width(&m->arch, l);
    return s;
}

size_t mdl_stage_scratch_doubles(const mdl_model *m, size_t n)
{
    size_t w = 0;
    for (size_t l = 0; l <= m->arch.n_hidden + 1; l++)
        if (width(&m->arch, l) > w)
            w = width(&m->arch, l);
    return 2 * n * w;
}

/* Where layer l's output lies in acts. */
static double *acts_of(const mdl_arch *ar, double *acts, size_t a, size_t l, size_t n)
{
    for (size_t k = a; k < l; k++)
        acts += n * width(ar, k);
    return acts;
}

double mdl_stage_forward(const mdl_model *m, const double *x, size_t a, size_t b,
                         const double *in, const int *y, size_t n, double *acts)
{
    const mdl_arch *ar = &m->arch;
    const size_t L = ar->n_hidden;
    const size_t base = mdl_stage_param_off(m, a);
    const double *A = in;
    double *Z = acts;
    for (size_t l = a; l <= b; l++) {
        const size_t out = width(ar, l), inw = width(ar, l - 1);
        const double *W = x + (mdl_stage_param_off(m, l) - base), *bias = W + out * inw;
        for (size_t i = 0; i < n; i++)
            memcpy(Z + i * out, bias, out * sizeof *Z);
        cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasTrans, (int)n, (int)out, (int)inw, 1.0, A,
                    (int)inw, W, (int)inw, 1.0, Z, (int)out);
        if (l <= L) {
            if (ar->act == MDL_ACT_RELU) {
                for (size_t k = 0; k < n * out; k++)
                    Z[k] = Z[k] > 0.0 ? Z[k] : 0.0;
            } else {
                for (size_t k = 0; k < n * out; k++)
                    Z[k] = tanh(Z[k]);
            }
        }
        A = Z;
        Z += n * out;
    }
    if (b != L + 1)
        return 0.0;
    /* the softmax in place and the cross-entropies, as mdl_mlp.c's forward */
    const size_t C = (size_t)ar->n_classes;
    return mdl_i_softmax_xent(acts_of(ar, acts, a, b, n), y, n, C, NULL);
}

/* G .*= act'(A), act' read from the activation A. */
double mdl_stage_backward(const mdl_model *m, const double *x, size_t a, size_t b,
                          const double *in, const double *acts, const int *y, size_t n,
                          const double *gout, double *g, double *gin, double *scratch)
{
    const mdl_arch *ar = &m->arch;
    const size_t L = ar->n_hidden;
    const size_t base = mdl_stage_param_off(m, a);
    const size_t half = mdl_stage_scratch_doubles(m, n) / 2;
    double *buf[2] = { scratch, scratch + half };
    double *G = buf[0];
    const double *Ab = acts_of(ar, (double *)acts, a, b, n);
    const size_t wb = width(ar, b);
    if (b == L + 1) {
        /* G_{L+1} = (P - Y) / n */
        const double inv_n = 1.0 / (double)n;
        for (size_t i = 0; i < n; i++) {
            for (size_t k = 0; k < wb; k++)
                G[i * wb + k] = Ab[i * wb + k] * inv_n;
            G[i * wb + (size_t)y[i]] -= inv_n;
        }
    } else {
        memcpy(G, gout, n * wb * sizeof *G);
        mdl_i_act_grad(ar->act, G, Ab, n * wb);
    }
    double penalty = 0.0;
    for (size_t l = b; l >= a; l--) {
        const size_t out = width(ar, l), inw = width(ar, l - 1);
        const double *A = l == a ? in : acts_of(ar, (double *)acts, a, l - 1, n);
        const size_t off = mdl_stage_param_off(m, l) - base;
        const double *W = x + off;
        double *gW = g + off, *gb = gW + out * inw;
        cblas_dgemm(CblasRowMajor, CblasTrans, CblasNoTrans, (int)out, (int)inw, (int)n, 1.0, G,
                    (int)out, A, (int)inw, 0.0, gW, (int)inw);
        for (size_t k = 0; k < out; k++)
            gb[k] = 0.0;
        for (size_t i = 0; i < n; i++)
            for (size_t k = 0; k < out; k++)
                gb[k] += G[i * out + k];
        penalty += mdl_i_l2(m->l2, W, out * inw, gW);
        if (l == a) {
            if (gin)
                cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, (int)n, (int)inw, (int)out,
                            1.0, G, (int)out, W, (int)inw, 0.0, gin, (int)inw);
            break;
        }
        double *Gp = G == buf[0] ? buf[1] : buf[0];
        cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, (int)n, (int)inw, (int)out, 1.0, G,
                    (int)out, W, (int)inw, 0.0, Gp, (int)inw);
        mdl_i_act_grad(ar->act, Gp, A, n * inw);
        G = Gp;
    }
    return penalty;
}
