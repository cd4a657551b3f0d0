/* mdl_stage.h -- a pipeline stage of the MLP: the contiguous weight
 * layers a .. b (1 <= a <= b <= L + 1) run forward on a micro-batch of
 * input activations and backward on the gradient of their output, as
 * GPipe and PipeDream split a network (Huang et al. 2019; Narayanan et al.
 * 2019).  Chained over stages that cover 1 .. L + 1, forward then
 * backward, the stages' gradients are the whole MLP's (mdl_mlp.c) for the
 * same batch, up to the rounding of the last digit.  Knows nothing of
 * nodes, time or messages; allocates nothing (the caller's buffers).
 */
#ifndef MDL_STAGE_H
#define MDL_STAGE_H

#include <stddef.h>
#include "mdl.h"

/* Offset of weight layer l's parameters (W_l then b_l) in the MLP's
 * vector, 1 <= l <= L + 2 (L + 2: the number of parameters). */
size_t mdl_stage_param_off(const mdl_model *m, size_t l);

/* Doubles a stage's forward keeps for its backward, for n samples: the
 * outputs of its layers a .. b (n x width(l) each; the last layer's
 * class probabilities when b = L + 1). */
size_t mdl_stage_acts_doubles(const mdl_model *m, size_t a, size_t b, size_t n);

/* Doubles of scratch mdl_stage_backward needs: 2 n x the widest layer. */
size_t mdl_stage_scratch_doubles(const mdl_model *m, size_t n);

/* Forward of layers a .. b with the stage's parameters x (layer a's
 * first: the whole vector from mdl_stage_param_off(m, a)) on in (n x width(a - 1)) into acts
 * (mdl_stage_acts_doubles).  When b = L + 1 the output is the softmax of
 * the logits and the return value the sum of the n cross-entropies
 * against the labels y; 0 otherwise (y unused, may be NULL). */
double mdl_stage_forward(const mdl_model *m, const double *x, size_t a, size_t b,
                         const double *in, const int *y, size_t n, double *acts);

/* Backward of the same stage: gout (n x width(b)) is the gradient of the
 * loss with respect to its output, or, when b = L + 1, NULL, and the loss
 * is the mean cross-entropy of the n samples against y (gradient (P -
 * Y) / n).  Writes the gradient of layers a .. b (plus l2 W, as the MLP's
 * loss) into g (the stage's parameters' length, laid out as x), and, when
 * gin is not NULL (a > 1), the gradient with respect to in (n x width(a -
 * 1)).  Returns the L2 term l2/2 ||W||^2 of the stage's weights. */
double mdl_stage_backward(const mdl_model *m, const double *x, size_t a, size_t b,
                          const double *in, const double *acts, const int *y, size_t n,
                          const double *gout, double *g, double *gin, double *scratch);

#endif
