/* mdl_internal.h -- what the model types and datasets of the mdl module
 * share privately: the layout of an instance and a few helpers.  Not for use
 * outside models/.
 */
#ifndef MDL_INTERNAL_H
#define MDL_INTERNAL_H

#include <stddef.h>
#include <stdint.h>
#include <gsl/gsl_rng.h>
#include "mdl.h"

struct mdl_model {
    const mdl_type *type;
    mdl_arch arch;
    size_t d;           /* features (arch.d) */
    int    n_classes;   /* arch.n_classes */
    double l2;          /* the loss adds l2/2 * ||weights||^2 */
    size_t max_batch;
    size_t n_params;
    double *x;          /* max_batch * d: rows gathered for a batch */
    int    *y;          /* max_batch: their labels (classification) */
    double *t;          /* max_batch: their targets (regression); types
                           without classes read the batch's targets here */
    void   *ws;         /* the type's scratch, from type->alloc */
    size_t  frozen;     /* MLP: weight layers 1 .. frozen get no gradient
                           (mdl_set_frozen, mdl_freeze.h) */
};

/* The softmax of each of the n rows of Z (n x C) in place (the largest
 * logit subtracted first), returning the sum of the rows' cross-entropies
 * against the labels y and, when n_correct is not NULL, the number of rows
 * whose largest logit is the label.  The one sequence of operations every
 * softmax output of the models uses (softmax, MLP, its split and its
 * pipeline stages), so their losses are the same bits. */
double mdl_i_softmax_xent(double *Z, const int *y, size_t n, size_t C, size_t *n_correct);

/* G (len) <- G .* act'(Z), act' read from the activations A = act(Z):
 * ReLU zeroes G where A is not positive, tanh multiplies by 1 - A^2.  The
 * one backward step through a hidden activation (MLP, its split, its
 * pipeline stages). */
void mdl_i_act_grad(mdl_activation act, double *G, const double *A, size_t len);

/* Returns l2/2 * ||w||^2 over the n weights w and, when grad is not NULL,
 * adds l2 * w to grad (n).  O(n). */
double mdl_i_l2(double l2, const double *w, size_t n, double *grad);

/* Writes n_weights draws of N(0, 0.01^2) then zeros up to n_params. */
/* The table entries the one-output models (linear, logistic) share: d
 * weights and a bias; a scratch of one double per batch row; small random
 * weights and a zero bias; L2 on the weights only. */
size_t mdl_i_one_output_n_params(const mdl_arch *a);
void  *mdl_i_one_output_alloc(const mdl_arch *a, size_t max_batch);
void   mdl_i_one_output_free(void *ws);
void   mdl_i_one_output_init(const mdl_model *m, double *params, gsl_rng *rng);
double mdl_i_one_output_penalty(const mdl_model *m, const double *params);
/* The Hessian of a one-output model applied to V (mdl_type.hess_apply):
 * X~^T diag(D / n) X~ V plus l2 on the weights, with D NULL for all ones
 * (least squares); T holds n * k doubles. */
void   mdl_i_one_output_hess(const mdl_model *m, const double *X, const double *D, size_t n,
                             const double *V, size_t k, double *out, double *T);

/* The MLP's layout (mdl_mlp.c): the offset of weight layer l's W (1 ..
 * L + 1), block heads included; hidden layer l's head's parameters (0
 * without heads, and for the last hidden layer, whose head is the output
 * layer). */
size_t mdl_i_mlp_layer_off(const mdl_arch *a, size_t l);
size_t mdl_i_mlp_head_params(const mdl_arch *a, size_t l);

void mdl_i_init_weights(double *params, size_t n_weights, size_t n_params,
                        gsl_rng *rng);

/* Writes n_weights draws of N(0, sigma^2) then zeros up to n_params. */
void mdl_i_init_weights_scaled(double *params, size_t n_weights, size_t n_params,
                               double sigma, gsl_rng *rng);

/* A new mt19937 generator seeded from a 64-bit seed, mixed (splitmix64)
 * and folded to a nonzero 32-bit one (mt19937 uses 32 bits and silently
 * maps 0 to 4357).  Caller
 * frees with gsl_rng_free.  NULL when out of memory. */
gsl_rng *mdl_i_rng_create(uint64_t seed);

#endif
