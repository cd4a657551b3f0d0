/* mdl_split.h -- the MLP cut at a layer boundary, for split training with a
 * local loss (ComDML, Mohammadabadi et al., ICDCS 2024): the front part
 * (weight layers 1 .. s, producing the hidden activations A_s) trains
 * against a small auxiliary softmax head on A_s, so it never waits for
 * the back part's backward pass; the back part (weight layers s + 1 .. L +
 * 1) trains on received activations with the true labels.  The front's
 * parameters are the prefix of the MLP's parameter vector and the back's
 * the suffix, so a model is split and joined in place.  Also the
 * per-layer FLOP model that prices the two parts.  Knows nothing of nodes,
 * time or messages.
 */
#ifndef MDL_SPLIT_H
#define MDL_SPLIT_H

#include <stddef.h>
#include <gsl/gsl_rng.h>
#include "mdl.h"

/* Weight layers of the model: L + 1 for an MLP of L hidden layers, 0 for
 * every other type (nothing to split). */
size_t mdl_layers(const mdl_model *m);

/* Floating-point operations per sample of weight layer l (1 .. L + 1) of
 * the MLP a, forward and backward, multiply-adds counting two: 2 in out
 * forward, 2 in out for the weight gradient and, when propagate is
 * nonzero, 2 in out for the error passed to the layer below.  The sum
 * over l with propagate = (l > 1) is the MLP's mdl_flops_per_sample. */
double mdl_mlp_layer_flops(const mdl_arch *a, size_t l, int propagate);

/* Weight layer l (1 .. mdl_layers) of the MLP m as shares of its FLOPs
 * per sample: the forward pass (2 in out) to *fwd, the backward pass (the
 * rest of mdl_mlp_layer_flops with propagate = (l > 1)) to *bwd; -1 when
 * m is not an MLP or l is out of range.  mdl_layer_width: the width of
 * layer l's output (l = 0: the features), 0 when out of range. */
int    mdl_layer_cost(const mdl_model *m, size_t l, double *fwd, double *bwd);
size_t mdl_layer_width(const mdl_model *m, size_t l);

/* What a cut at boundary s (1 <= s <= L) gives. */
typedef struct mdl_split_plan {
    size_t s;
    size_t width;        /* h_s: activations per sample that cross the cut */
    size_t n_front;      /* parameters of layers 1 .. s: params[0 .. n_front) */
    size_t n_back;       /* parameters of layers s + 1 .. L + 1: the rest */
    size_t n_aux;        /* the auxiliary head: C h_s weights, C biases */
    double flops_front;  /* per sample: layers 1 .. s (the first propagating
                            no error) plus the auxiliary head (propagating) */
    double flops_back;   /* per sample: layers s + 1 .. L + 1, the first
                            propagating no error (nothing is sent back) */
    double flops_full;   /* per sample, the unsplit model */
} mdl_split_plan;

/* Fills *p for model m cut at s; -1 when m is not an MLP or s is not in
 * 1 .. L. */
int mdl_split_plan_get(const mdl_model *m, size_t s, mdl_split_plan *p);

typedef struct mdl_split mdl_split;

/* Workspace for model m cut at s, batches of at most max_batch samples
 * (its own gather buffer: it never touches m's workspace).  NULL when out
 * of memory or the cut is not possible.  mdl_split_destroy(NULL) does
 * nothing. */
mdl_split *mdl_split_create(const mdl_model *m, size_t s, size_t max_batch);
void       mdl_split_destroy(mdl_split *w);
const mdl_split_plan *mdl_split_plan_of(const mdl_split *w);

/* Random auxiliary head (n_aux doubles): N(0, 1/h_s) weights (LeCun, as
 * the MLP's output layer), zero biases. */
void mdl_split_aux_init(const mdl_split *w, double *aux, gsl_rng *rng);

/* Front step on the batch (n indices into ds, 1 <= n <= max_batch):
 * forward through layers 1 .. s with front = params[0 .. n_front), the
 * auxiliary head aux on A_s; returns the head's mean cross-entropy plus
 * l2/2 ||W||^2 over the front's and the head's weights; writes A_s (n x
 * h_s, row-major) to acts and the batch's labels to labels (either may be
 * NULL), the gradient of that loss to g_front (n_front) and g_aux
 * (n_aux).  A_s is bit for bit what the unsplit MLP computes.
 * O(n (flops_front)); no allocation. */
double mdl_split_front(mdl_split *w, const double *front, const double *aux,
                       const mdl_dataset *ds, const size_t *batch, size_t n,
                       double *acts, int *labels, double *g_front, double *g_aux);

/* Back step on n received activation rows acts (n x h_s) with labels:
 * forward through layers s + 1 .. L + 1 with back = params[n_front ..
 * P); returns the mean cross-entropy plus l2/2 ||W||^2 over the back's
 * weights and writes its gradient to g_back (n_back).  On the unsplit
 * MLP's A_s this is bit for bit the MLP's gradient for those layers.
 * No allocation. */
double mdl_split_back(mdl_split *w, const double *back, const double *acts,
                      const int *labels, size_t n, double *g_back);

#endif
