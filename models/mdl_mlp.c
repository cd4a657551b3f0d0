/* mdl_mlp.c -- multilayer perceptron: L >= 1 hidden layers with ReLU or
 * tanh, then a softmax output, mean cross-entropy, L2 on every weight
 * matrix (biases excluded).  Parameters are, layer by layer from the input,
 * W_l (s_l x s_{l-1}, row-major) then b_l (s_l), with s_0 = d and s_{L+1}
 * the number of classes.  With block heads (arch.heads: progressive
 * training, docs/models.md) hidden layer k < L is followed by its output
 * head H_k (C x s_k, then C biases), so the layout is L_1 H_1 L_2 H_2 ..
 * L_L O, and the network a step computes is the stage's path (path()):
 * with f layers frozen, layers 1 .. t, t = min(f + 1, L), then H_t (t < L)
 * or O; the layers and heads off the path are not built (no forward, no
 * gradient, no L2 term).  On a gathered batch every layer's forward product
 * A_{l-1} W_l^T and both backward products G_l^T A_{l-1} and G_l W_l are
 * one CBLAS dgemm each; only the elementwise activations, the softmax and
 * the bias sums are loops.  This file does not gather rows, chunk
 * evaluation or allocate outside alloc: mdl.c does the first two.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <gsl/gsl_cblas.h>
#include "mdl_internal.h"

/* Scratch: the activations A_1 .. A_L (n x s_l each), the output
 * probabilities (n x C), and two n x max(s) buffers for the backward
 * pass. */
typedef struct mlp_ws {
    double *act[MDL_MAX_HIDDEN];
    double *out;
    double *g[2];
} mlp_ws;

/* Width of layer l, 0 (input) .. L + 1 (output). */
static size_t width(const mdl_arch *a, size_t l)
{
    if (l == 0)
        return a->d;
    if (l <= a->n_hidden)
        return a->hidden[l - 1];
    return (size_t)a->n_classes;
}

/* Parameters of hidden layer l's head (0 when l has none). */
static size_t head_params(const mdl_arch *a, size_t l)
{
    return a->heads && l < a->n_hidden ? (size_t)a->n_classes * (width(a, l) + 1) : 0;
}

/* Offset of weight layer l's W (1 .. L + 1, the output layer L + 1). */
static size_t layer_off(const mdl_arch *a, size_t l)
{
    size_t o = 0;
    for (size_t j = 1; j < l; j++)
        o += width(a, j) * width(a, j - 1) + width(a, j) + head_params(a, j);
    return o;
}

static size_t n_params(const mdl_arch *a) { return layer_off(a, a->n_hidden + 2); }

/* The network a step with f frozen layers runs: layers 1 .. top + 1, the
 * last the output module (the output layer, or top's head), each at
 * off[l] with in[l] inputs and out[l] outputs. */
typedef struct mlp_path {
    size_t top;
    size_t off[MDL_MAX_HIDDEN + 2], in[MDL_MAX_HIDDEN + 2], out[MDL_MAX_HIDDEN + 2];
} mlp_path;

static mlp_path path(const mdl_arch *a, size_t f)
{
    mlp_path p;
    const size_t L = a->n_hidden;
    p.top = a->heads && f + 1 < L ? f + 1 : L;
    for (size_t l = 1; l <= p.top; l++) {
        p.off[l] = layer_off(a, l);
        p.in[l] = width(a, l - 1);
        p.out[l] = width(a, l);
    }
    p.off[p.top + 1] = p.top < L ? layer_off(a, p.top) + width(a, p.top) * width(a, p.top - 1)
                                       + width(a, p.top)
                                 : layer_off(a, L + 1);
    p.in[p.top + 1] = width(a, p.top);
    p.out[p.top + 1] = (size_t)a->n_classes;
    return p;
}

size_t mdl_i_mlp_layer_off(const mdl_arch *a, size_t l) { return layer_off(a, l); }
size_t mdl_i_mlp_head_params(const mdl_arch *a, size_t l) { return head_params(a, l); }

static int supports(const mdl_arch *a)
{
    return a->n_classes >= 2 && a->n_hidden >= 1 && a->n_hidden <= MDL_MAX_HIDDEN
        && (a->act == MDL_ACT_RELU || a->act == MDL_ACT_TANH) && !a->no_bias;
}

static void release(void *v)
{
    mlp_ws *w = v;
    if (w == NULL)
        return;
    for (size_t l = 0; l < MDL_MAX_HIDDEN; l++)
        free(w->act[l]);
    free(w->out);
    free(w->g[0]);
    free(w->g[1]);
    free(w);
}

static double *rows(size_t n, size_t s)
{
    if (s != 0 && n > SIZE_MAX / sizeof(double) / s)
        return NULL;
    return malloc(n * s * sizeof(double));
}

static void *alloc(const mdl_arch *a, size_t max_batch)
{
    mlp_ws *w = calloc(1, sizeof *w);
    if (w == NULL)
        return NULL;
    size_t widest = (size_t)a->n_classes;
    for (size_t l = 0; l < a->n_hidden; l++) {
        if (a->hidden[l] > widest)
            widest = a->hidden[l];
        if ((w->act[l] = rows(max_batch, a->hidden[l])) == NULL)
            goto out_release;
    }
    if ((w->out = rows(max_batch, (size_t)a->n_classes)) == NULL
        || (w->g[0] = rows(max_batch, widest)) == NULL
        || (w->g[1] = rows(max_batch, widest)) == NULL)
        goto out_release;
    return w;

out_release:
    release(w);
    return NULL;
}

/* He (ReLU) or LeCun (tanh) normal initialisation: W_l ~ N(0, g / s_{l-1})
 * with g = 2 or 1 for hidden layers, g = 1 for the output layer and the
 * heads (N(0, 1 / s_l)); zero biases.  Draws in parameter order from rng. */
static void init(const mdl_model *m, double *params, gsl_rng *rng)
{
    const mdl_arch *a = &m->arch;
    double *p = params;
    for (size_t l = 1; l <= a->n_hidden + 1; l++) {
        const size_t out = width(a, l), in = width(a, l - 1);
        const double gain = l <= a->n_hidden && a->act == MDL_ACT_RELU ? 2.0 : 1.0;
        mdl_i_init_weights_scaled(p, out * in, out * in + out, sqrt(gain / (double)in), rng);
        p += out * in + out;
        if (head_params(a, l)) {
            const size_t C = (size_t)a->n_classes;
            mdl_i_init_weights_scaled(p, C * out, C * out + C, sqrt(1.0 / (double)out), rng);
            p += C * out + C;
        }
    }
}

/* Z (n x out) = A (n x in) W^T + b. */
static void affine(double *Z, const double *A, const double *W, const double *b,
                   size_t n, size_t in, size_t out)
{
    for (size_t i = 0; i < n; i++)
        memcpy(Z + i * out, b, out * sizeof *Z);
    cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasTrans, (int)n, (int)out, (int)in,
                1.0, A, (int)in, W, (int)in, 1.0, Z, (int)out);
}

/* Runs the network on the n rows of X: hidden activations into ws->act,
 * class probabilities into ws->out.  Returns the sum of the
 * cross-entropies; counts in *n_correct the rows whose first largest
 * logit is the label. */
static double forward(const mdl_model *m, mlp_ws *w, const double *params,
                      const double *X, const int *y, size_t n, size_t *n_correct)
{
    const mdl_arch *a = &m->arch;
    const mlp_path q = path(a, m->frozen);
    const double *A = X;
    for (size_t l = 1; l <= q.top; l++) {
        const size_t out = q.out[l], in = q.in[l];
        const double *p = params + q.off[l];
        double *Z = w->act[l - 1];
        affine(Z, A, p, p + out * in, n, in, out);
        if (a->act == MDL_ACT_RELU) {
            for (size_t k = 0; k < n * out; k++)
                Z[k] = Z[k] > 0.0 ? Z[k] : 0.0;
        } else {
            for (size_t k = 0; k < n * out; k++)
                Z[k] = tanh(Z[k]);
        }
        A = Z;
    }
    const size_t C = (size_t)a->n_classes, in = q.in[q.top + 1];
    const double *p = params + q.off[q.top + 1];
    affine(w->out, A, p, p + C * in, n, in, C);

    double sum = 0.0;
    size_t correct = 0;
    sum = mdl_i_softmax_xent(w->out, y, n, C, &correct);
    *n_correct = correct;
    return sum;
}

/* gb (out) = column sums of G (n x out). */
static void column_sums(double *gb, const double *G, size_t n, size_t out)
{
    for (size_t k = 0; k < out; k++)
        gb[k] = 0.0;
    for (size_t i = 0; i < n; i++)
        for (size_t k = 0; k < out; k++)
            gb[k] += G[i * out + k];
}

static double loss_grad(const mdl_model *m, void *vws, const double *params,
                        const double *X, const int *y, size_t n, double *grad)
{
    const mdl_arch *a = &m->arch;
    mlp_ws *w = vws;
    const size_t C = (size_t)a->n_classes;
    const double inv_n = 1.0 / (double)n;
    size_t correct;

    const double sum = forward(m, w, params, X, y, n, &correct);

    /* G_{L+1} = (P - Y) / n. */
    double *G = w->g[0];
    for (size_t i = 0; i < n; i++) {
        for (size_t k = 0; k < C; k++)
            G[i * C + k] = w->out[i * C + k] * inv_n;
        G[i * C + (size_t)y[i]] -= inv_n;
    }

    /* The path's layers, back from the output module.  Frozen layers 1 ..
     * f (mdl_freeze.h): no gradient, no error passed below layer f + 1,
     * their L2 term still in the loss; what is off the path (block heads)
     * gets a zero gradient. */
    const mlp_path q = path(a, m->frozen);
    const size_t L = q.top, *off = q.off;
    const size_t f = m->frozen < L ? m->frozen : L;
    const size_t end = off[L + 1] + C * q.in[L + 1] + C;
    if (end < m->n_params)
        memset(grad + end, 0, (m->n_params - end) * sizeof(double));
    double penalty = 0.0;
    for (size_t l = L + 1; l >= 1; l--) {
        const size_t out = q.out[l], in = q.in[l];
        const double *A = l == 1 ? X : w->act[l - 2];
        const double *W = params + off[l];
        double *gW = grad + off[l], *gb = gW + out * in;

        /* grad W_l = G_l^T A_{l-1}, grad b_l = column sums of G_l. */
        cblas_dgemm(CblasRowMajor, CblasTrans, CblasNoTrans, (int)out, (int)in, (int)n,
                    1.0, G, (int)out, A, (int)in, 0.0, gW, (int)in);
        column_sums(gb, G, n, out);
        penalty += mdl_i_l2(m->l2, W, out * in, gW);
        if (l == f + 1) {
            memset(grad, 0, off[l] * sizeof(double));
            for (size_t k = l - 1; k >= 1; k--)   /* the full pass's order */
                penalty += mdl_i_l2(m->l2, params + off[k], q.out[k] * q.in[k], NULL);
            break;
        }

        /* G_{l-1} = (G_l W_l) .* act'(Z_{l-1}), act' read from A_{l-1}. */
        double *Gp = G == w->g[0] ? w->g[1] : w->g[0];
        cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, (int)n, (int)in, (int)out,
                    1.0, G, (int)out, W, (int)in, 0.0, Gp, (int)in);
        mdl_i_act_grad(a->act, Gp, A, n * in);
        G = Gp;
    }
    return sum * inv_n + penalty;
}

static void evaluate(const mdl_model *m, void *ws, const double *params,
                     const double *X, const int *y, size_t n,
                     double *loss_sum, size_t *n_correct)
{
    *loss_sum = forward(m, ws, params, X, y, n, n_correct);
}

static double penalty(const mdl_model *m, const double *params)
{
    const mlp_path q = path(&m->arch, m->frozen);
    double sum = 0.0;
    for (size_t l = 1; l <= q.top + 1; l++)
        sum += mdl_i_l2(m->l2, params + q.off[l], q.out[l] * q.in[l], NULL);
    return sum;
}

/* Per layer: forward 2 in out, backward 2 in out for the weight gradient
 * and, below the top layer, 2 in out for the propagated error.  The full
 * network's (block heads are not part of it: a stage's FLOPs are
 * mdl_freeze_flops'). */
static double flops(const mdl_arch *a)
{
    double f = 0.0;
    for (size_t l = 1; l <= a->n_hidden + 1; l++) {
        const double io = (double)width(a, l) * (double)width(a, l - 1);
        f += (l == 1 ? 4.0 : 6.0) * io;
    }
    return f;
}

const mdl_type mdl_mlp = {
    .name = "mlp",
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
