/* mdl_split.c -- the MLP cut at a layer boundary (see mdl_split.h): the
 * per-layer FLOP model, the plan of a cut, and the two parts' losses and
 * gradients.  Each part is a chain of affine layers (hidden ones with the
 * MLP's activation) ending in a softmax cross-entropy: the front chain is
 * layers 1 .. s then the auxiliary head, the back chain layers s + 1 .. L +
 * 1.  Every product is the same CBLAS dgemm, and every loop the same
 * order, as in mdl_mlp.c, so a part computes bit for bit what the unsplit
 * network computes for its layers.  This file does not decide where to
 * cut or who computes which part.
 */
#include "mdl_split.h"
#include "mdl_internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <gsl/gsl_cblas.h>
#include <gsl/gsl_randist.h>

#define CHAIN_MAX (MDL_MAX_HIDDEN + 1)

/* A chain of nl layers: layer k maps in[k] to out[k] features. */
typedef struct chain {
    size_t nl;
    size_t in[CHAIN_MAX], out[CHAIN_MAX];
} chain;

struct mdl_split {
    mdl_split_plan plan;
    mdl_activation act;
    int     n_classes;
    size_t  d, max_batch;
    double  l2;
    chain   front, back;
    double *x;                  /* max_batch x d: the gathered rows */
    int    *y;                  /* max_batch labels */
    double *a[CHAIN_MAX];       /* hidden outputs of the chain being run */
    double *out;                /* max_batch x C probabilities */
    double *g[2];               /* max_batch x widest */
};

static size_t width(const mdl_arch *a, size_t l)
{
    if (l == 0)
        return a->d;
    if (l <= a->n_hidden)
        return a->hidden[l - 1];
    return (size_t)a->n_classes;
}

/* A plain MLP: the split and the stages know no block heads. */
static int is_mlp(const mdl_model *m) { return m->type == &mdl_mlp && !m->arch.heads; }

size_t mdl_layers(const mdl_model *m)
{
    return is_mlp(m) ? m->arch.n_hidden + 1 : 0;
}

double mdl_mlp_layer_flops(const mdl_arch *a, size_t l, int propagate)
{
    const double io = (double)width(a, l) * (double)width(a, l - 1);
    return (propagate ? 6.0 : 4.0) * io;
}

int mdl_layer_cost(const mdl_model *m, size_t l, double *fwd, double *bwd)
{
    const size_t L = mdl_layers(m);
    if (L == 0 || l < 1 || l > L)
        return -1;
    double full = 0;
    for (size_t k = 1; k <= L; k++)
        full += mdl_mlp_layer_flops(&m->arch, k, k > 1);
    const double f = mdl_mlp_layer_flops(&m->arch, l, 0) / 2;
    *fwd = f / full;
    *bwd = (mdl_mlp_layer_flops(&m->arch, l, l > 1) - f) / full;
    return 0;
}

size_t mdl_layer_width(const mdl_model *m, size_t l)
{
    return mdl_layers(m) > 0 && l <= mdl_layers(m) ? width(&m->arch, l) : 0;
}

int mdl_split_plan_get(const mdl_model *m, size_t s, mdl_split_plan *p)
{
    if (!is_mlp(m) || s < 1 || s > m->arch.n_hidden)
        return -1;
    const mdl_arch *a = &m->arch;
    const size_t C = (size_t)a->n_classes, L = a->n_hidden;
    *p = (mdl_split_plan){ .s = s, .width = width(a, s) };
    for (size_t l = 1; l <= L + 1; l++) {
        const size_t np = width(a, l) * width(a, l - 1) + width(a, l);
        if (l <= s) {
            p->n_front += np;
            p->flops_front += mdl_mlp_layer_flops(a, l, l > 1);
        } else {
            p->n_back += np;
            p->flops_back += mdl_mlp_layer_flops(a, l, l > s + 1);
        }
        p->flops_full += mdl_mlp_layer_flops(a, l, l > 1);
    }
    p->n_aux = C * p->width + C;
    p->flops_front += 6.0 * (double)C * (double)p->width;
    return 0;
}

void mdl_split_destroy(mdl_split *w)
{
    if (!w)
        return;
    for (size_t k = 0; k < CHAIN_MAX; k++)
        free(w->a[k]);
    free(w->x);
    free(w->y);
    free(w->out);
    free(w->g[0]);
    free(w->g[1]);
    free(w);
}

static double *rows(size_t n, size_t s)
{
    if (s != 0 && n > SIZE_MAX / sizeof(double) / s)
        return NULL;
    return malloc((n * s > 0 ? n * s : 1) * sizeof(double));
}

mdl_split *mdl_split_create(const mdl_model *m, size_t s, size_t max_batch)
{
    mdl_split_plan p;
    if (max_batch == 0 || mdl_split_plan_get(m, s, &p) != 0)
        return NULL;
    mdl_split *w = calloc(1, sizeof *w);
    if (!w)
        return NULL;
    const mdl_arch *a = &m->arch;
    const size_t L = a->n_hidden, C = (size_t)a->n_classes;
    w->plan = p;
    w->act = a->act;
    w->n_classes = a->n_classes;
    w->d = a->d;
    w->max_batch = max_batch;
    w->l2 = m->l2;
    for (size_t l = 1; l <= s; l++) {
        w->front.in[w->front.nl] = width(a, l - 1);
        w->front.out[w->front.nl++] = width(a, l);
    }
    w->front.in[w->front.nl] = p.width;
    w->front.out[w->front.nl++] = C;
    for (size_t l = s + 1; l <= L + 1; l++) {
        w->back.in[w->back.nl] = width(a, l - 1);
        w->back.out[w->back.nl++] = width(a, l);
    }
    size_t widest = C;
    for (size_t l = 1; l <= L; l++)
        if (a->hidden[l - 1] > widest)
            widest = a->hidden[l - 1];
    /* the longer chain has at most L hidden outputs */
    for (size_t k = 0; k < L; k++)
        if (!(w->a[k] = rows(max_batch, widest)))
            goto out_destroy;
    if (!(w->x = rows(max_batch, w->d)) || !(w->y = malloc(max_batch * sizeof *w->y))
        || !(w->out = rows(max_batch, C)) || !(w->g[0] = rows(max_batch, widest))
        || !(w->g[1] = rows(max_batch, widest)))
        goto out_destroy;
    return w;

out_destroy:
    mdl_split_destroy(w);
    return NULL;
}

const mdl_split_plan *mdl_split_plan_of(const mdl_split *w) { return &w->plan; }

void mdl_split_aux_init(const mdl_split *w, double *aux, gsl_rng *rng)
{
    const size_t nw = (size_t)w->n_classes * w->plan.width;
    const double sigma = sqrt(1.0 / (double)w->plan.width);
    for (size_t k = 0; k < nw; k++)
        aux[k] = gsl_ran_gaussian(rng, sigma);
    for (size_t k = nw; k < w->plan.n_aux; k++)
        aux[k] = 0.0;
}

/* Z (n x out) = A (n x in) W^T + b, as mdl_mlp.c's. */
static void affine(double *Z, const double *A, const double *W, const double *b,
                   size_t n, size_t in, size_t out)
{
    for (size_t i = 0; i < n; i++)
        memcpy(Z + i * out, b, out * sizeof *Z);
    cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasTrans, (int)n, (int)out, (int)in,
                1.0, A, (int)in, W, (int)in, 1.0, Z, (int)out);
}

/* Runs chain c on the n rows of X with layer k's weights at p[k] (bias
 * after them): hidden outputs into w->a, probabilities into w->out;
 * returns the sum of the cross-entropies. */
static double forward(mdl_split *w, const chain *c, const double *const *p, const double *X,
                      const int *y, size_t n)
{
    const double *A = X;
    for (size_t k = 0; k + 1 < c->nl; k++) {
        const size_t in = c->in[k], out = c->out[k];
        double *Z = w->a[k];
        affine(Z, A, p[k], p[k] + out * in, n, in, out);
        if (w->act == MDL_ACT_RELU) {
            for (size_t q = 0; q < n * out; q++)
                Z[q] = Z[q] > 0.0 ? Z[q] : 0.0;
        } else {
            for (size_t q = 0; q < n * out; q++)
                Z[q] = tanh(Z[q]);
        }
        A = Z;
    }
    const size_t C = (size_t)w->n_classes, in = c->in[c->nl - 1];
    affine(w->out, A, p[c->nl - 1], p[c->nl - 1] + C * in, n, in, C);
    return mdl_i_softmax_xent(w->out, y, n, C, NULL);
}

/* The backward pass of chain c after forward: layer k's gradient to g[k]
 * (weights, then biases); no error is propagated below the first layer.
 * Returns the L2 term of the chain's weights. */
static double backward(mdl_split *w, const chain *c, const double *const *p, double *const *g,
                       const double *X, const int *y, size_t n)
{
    const size_t C = (size_t)w->n_classes;
    const double inv_n = 1.0 / (double)n;
    double *G = w->g[0];
    for (size_t i = 0; i < n; i++) {
        for (size_t k = 0; k < C; k++)
            G[i * C + k] = w->out[i * C + k] * inv_n;
        G[i * C + (size_t)y[i]] -= inv_n;
    }
    double penalty = 0.0;
    for (size_t k = c->nl; k-- > 0;) {
        const size_t out = c->out[k], in = c->in[k];
        const double *A = k == 0 ? X : w->a[k - 1];
        const double *W = p[k];
        double *gW = g[k], *gb = gW + out * in;
        cblas_dgemm(CblasRowMajor, CblasTrans, CblasNoTrans, (int)out, (int)in, (int)n,
                    1.0, G, (int)out, A, (int)in, 0.0, gW, (int)in);
        for (size_t q = 0; q < out; q++)
            gb[q] = 0.0;
        for (size_t i = 0; i < n; i++)
            for (size_t q = 0; q < out; q++)
                gb[q] += G[i * out + q];
        penalty += mdl_i_l2(w->l2, W, out * in, gW);
        if (k == 0)
            break;
        double *Gp = G == w->g[0] ? w->g[1] : w->g[0];
        cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, (int)n, (int)in, (int)out,
                    1.0, G, (int)out, W, (int)in, 0.0, Gp, (int)in);
        mdl_i_act_grad(w->act, Gp, A, n * in);
        G = Gp;
    }
    return penalty;
}

/* Layer k's parameters in a part's vector (layers back to back). */
static void offsets(const chain *c, size_t nl, const double *base, double *gbase,
                    const double **p, double **g)
{
    size_t off = 0;
    for (size_t k = 0; k < nl; k++) {
        p[k] = base + off;
        g[k] = gbase + off;
        off += c->out[k] * c->in[k] + c->out[k];
    }
}

double mdl_split_front(mdl_split *w, const double *front, const double *aux,
                       const mdl_dataset *ds, const size_t *batch, size_t n,
                       double *acts, int *labels, double *g_front, double *g_aux)
{
    const chain *c = &w->front;
    const double *p[CHAIN_MAX];
    double *g[CHAIN_MAX];
    offsets(c, c->nl - 1, front, g_front, p, g);
    p[c->nl - 1] = aux;
    g[c->nl - 1] = g_aux;
    for (size_t i = 0; i < n; i++) {
        mdl_dataset_row(ds, batch[i], w->x + i * w->d);
        w->y[i] = ds->y[batch[i]];
    }
    const double sum = forward(w, c, p, w->x, w->y, n);
    if (acts)
        memcpy(acts, w->a[c->nl - 2], n * w->plan.width * sizeof *acts);
    if (labels)
        memcpy(labels, w->y, n * sizeof *labels);
    const double penalty = backward(w, c, p, g, w->x, w->y, n);
    return sum * (1.0 / (double)n) + penalty;
}

double mdl_split_back(mdl_split *w, const double *back, const double *acts,
                      const int *labels, size_t n, double *g_back)
{
    const chain *c = &w->back;
    const double *p[CHAIN_MAX];
    double *g[CHAIN_MAX];
    offsets(c, c->nl, back, g_back, p, g);
    const double sum = forward(w, c, p, acts, labels, n);
    const double penalty = backward(w, c, p, g, acts, labels, n);
    return sum * (1.0 / (double)n) + penalty;
}
