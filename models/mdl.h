/* mdl.h -- models behind one small table: parameter count, initialisation,
 * minibatch loss and gradient, evaluation.  Parameters are one contiguous
 * double array; batches are index lists into a shared dataset.  A model
 * instance owns a workspace sized for the largest batch, so loss_grad and
 * evaluate never allocate.  Models know nothing of nodes, time or messages.
 */
#ifndef MDL_H
#define MDL_H

#include <stddef.h>
#include <gsl/gsl_rng.h>
#include "datasets/mdl_data.h"

typedef struct mdl_model mdl_model;

/* Hidden-layer activations of the MLP. */
typedef enum mdl_activation { MDL_ACT_RELU = 0, MDL_ACT_TANH = 1 } mdl_activation;
/* "relu", "tanh": indexed by value, NULL-terminated (mdl_names.c). */
extern const char *const mdl_activation_name_list[];

#define MDL_MAX_HIDDEN 8

/* The shape of a model: d input features, n_classes outputs and, for the
 * MLP only, n_hidden hidden layers of the given widths (input first) with
 * one activation.  Types without hidden layers require n_hidden == 0. */
typedef struct mdl_arch {
    size_t d;
    int    n_classes;
    size_t n_hidden;
    size_t hidden[MDL_MAX_HIDDEN];
    mdl_activation act;
    int    no_bias;     /* linear and logistic: no bias term (P = d); the
                           other types do not support it */
    int    heads;       /* MLP only: an output head after each hidden layer
                           but the last, for progressive training
                           (freeze.mode "grow", mdl_freeze.h) */
} mdl_arch;

/* One model family, in the manner of GSL's *_type tables.  The public
 * functions below gather a batch's rows into the instance's workspace and
 * call the type on a dense matrix, so a type is pure arithmetic: X is n rows
 * of d features (row-major), y the n labels, 1 <= n <= max_batch.  Types
 * read the instance's sizes through models/mdl_internal.h.  A regression
 * type (n_classes 0) reads the batch's targets from the instance's
 * workspace (mdl_internal.h: m->t) and ignores y. */
typedef struct mdl_type {
    const char *name;   /* "softmax", "logistic", "mlp", "linear"; matched against the scenario */
    /* Number of parameters of the shape a. */
    size_t (*n_params)(const mdl_arch *a);
    /* Nonzero when the type can build the shape a (classes, hidden layers). */
    int    (*supports)(const mdl_arch *a);
    /* Type-private scratch for batches of at most max_batch samples; NULL
     * when out of memory or too large.  Released by free. */
    void  *(*alloc)(const mdl_arch *a, size_t max_batch);
    void   (*free)(void *ws);
    /* Random weights (scale chosen by the type), zero biases. */
    void   (*init)(const mdl_model *m, double *params, gsl_rng *rng);
    /* Mean loss over the n samples plus the L2 term; gradient to grad. */
    double (*loss_grad)(const mdl_model *m, void *ws, const double *params,
                        const double *X, const int *y, size_t n, double *grad);
    /* Sum of the n per-sample losses (no L2 term) to *loss_sum and the
     * number of correct predictions to *n_correct. */
    void   (*evaluate)(const mdl_model *m, void *ws, const double *params,
                       const double *X, const int *y, size_t n,
                       double *loss_sum, size_t *n_correct);
    /* The L2 term l2/2 * ||weights||^2 (biases excluded). */
    double (*penalty)(const mdl_model *m, const double *params);
    /* Floating-point operations of one forward and backward pass per
     * sample (multiply-adds count two), for compute-time models. */
    double (*flops)(const mdl_arch *a);
    /* The Hessian of the mean loss over the n samples (with the L2 term)
     * at params, applied to the k columns of V (n_params x k, row-major):
     * out (n_params x k) = H V; work holds n * k doubles.  NULL: the type
     * has none (softmax, mlp). */
    void   (*hess_apply)(const mdl_model *m, const double *params, const double *X,
                         const int *y, size_t n, const double *V, size_t k, double *out,
                         double *work);
} mdl_type;

extern const mdl_type mdl_softmax, mdl_logistic, mdl_mlp, mdl_linear;

/* Looks a model type up by name; NULL when unknown. */
const mdl_type *mdl_type_find(const char *name);
/* Comma-separated list of known names, for error messages. */
const char *mdl_type_names(void);

/* Creates an instance for d features, n_classes classes (logistic needs 2;
 * linear regression takes 0: its data sets carry real targets, t),
 * L2 coefficient l2 (the loss adds l2/2 * ||w||^2, biases excluded) and
 * batches of at most max_batch samples.  Allocates the workspace, about
 * max_batch * (d + n_classes) doubles.  NULL when out of memory, when the
 * type does not support n_classes, or when d or max_batch is 0 or above
 * INT_MAX (the CBLAS limit) or l2 is negative or not finite.  Free with
 * mdl_destroy; mdl_destroy(NULL) does nothing. */
mdl_model *mdl_create(const mdl_type *t, size_t d, int n_classes, double l2,
                      size_t max_batch);
/* The same for any shape (the only way to build an MLP): NULL also when
 * the type does not support a (an MLP needs 1 .. MDL_MAX_HIDDEN hidden
 * layers of width >= 1, the others none). */
mdl_model *mdl_create_arch(const mdl_type *t, const mdl_arch *a, double l2,
                           size_t max_batch);
void       mdl_destroy(mdl_model *m);
/* A new instance of m's type, architecture, l2 and batch bound with its
 * own workspace: what a second thread needs to compute on the same model
 * (an instance's workspace serves one call at a time).  NULL when out of
 * memory.  Caller destroys. */
mdl_model *mdl_clone(const mdl_model *m);
const mdl_arch *mdl_get_arch(const mdl_model *m);
size_t     mdl_n_params(const mdl_model *m);
const mdl_type *mdl_get_type(const mdl_model *m);

/* Floating-point operations of one sample's forward and backward pass
 * (multiply-adds count two), as the type counts them: the step-time model
 * of compute.flops_per_s multiplies it by the batch. */
double     mdl_flops_per_sample(const mdl_model *m);

/* Fills params with random weights and zero biases: N(0, 0.01^2) for the
 * linear models; He (ReLU) or LeCun (tanh) normal scaling, N(0, g/fan_in)
 * with g = 2 or 1, for the MLP's layers. */
void mdl_init_params(const mdl_model *m, double *params, gsl_rng *rng);

/* Mean loss over the batch (plus the L2 term) and its gradient, written to
 * grad (n_params).  batch holds n_batch indices into ds, 1 <= n_batch <=
 * max_batch; an index may repeat.  ds must match the instance's d and
 * n_classes.  O(n_batch * n_params); no allocation. */
double mdl_loss_grad(mdl_model *m, const double *params, const mdl_dataset *ds,
                     const size_t *batch, size_t n_batch, double *grad);

/* The Hessian of mdl_loss_grad's loss on the same batch at params applied
 * to the k columns of V (n_params x k, row-major): out = H V (n_params x
 * k); work holds n_batch * k doubles.  For least squares H = X~^T X~ / n
 * (X~: the rows with a column of ones for the bias), for the logistic
 * model X~^T diag(s (1 - s)) X~ / n with s the sigmoid of each row's
 * logit, plus l2 on the weights' diagonal.  -1 (nothing written) for the
 * types without one (softmax, mlp); O(n_batch * n_params * k). */
int mdl_has_hessian(const mdl_model *m);
int mdl_hessian_apply(mdl_model *m, const double *params, const mdl_dataset *ds,
                      const size_t *batch, size_t n_batch, const double *V, size_t k,
                      double *out, double *work);

/* Mean loss (with the L2 term) and accuracy (NaN for regression) of params
 * over the samples idx
 * of ds (all samples when idx is NULL, n_idx ignored).  Works in chunks of
 * max_batch samples through the instance's workspace: O(n * n_params), no
 * allocation.  Both are NaN over an empty set.  loss or accuracy may be
 * NULL when not wanted. */
void mdl_evaluate(mdl_model *m, const double *params, const mdl_dataset *ds,
                  const size_t *idx, size_t n_idx, double *loss, double *accuracy);

/* mdl_evaluate in pieces, for callers that spread the chunks over
 * threads: mdl_eval_chunks is how many chunks of at most max_batch
 * samples an evaluation of n samples has; mdl_eval_chunk computes chunk c
 * (any instance of the same model may, each on its own thread) and
 * mdl_eval_finish adds the chunks' sums in chunk order, so the result is
 * bit-identical to mdl_evaluate's whatever computed each chunk. */
typedef struct mdl_eval_part { double loss; size_t correct; } mdl_eval_part;
size_t mdl_eval_chunks(const mdl_model *m, size_t n);
void   mdl_eval_chunk(mdl_model *m, const double *params, const mdl_dataset *ds,
                      const size_t *idx, size_t n, size_t c, mdl_eval_part *out);
void   mdl_eval_finish(const mdl_model *m, const double *params, size_t n,
                       const mdl_eval_part *parts, double *loss, double *accuracy);

#endif
