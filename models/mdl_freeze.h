/* mdl_freeze.h -- progressive freezing of a model's front layers and the
 * memory a node's device holds for training (the per-node memory model of
 * docs/models.md).  With f frozen layers (weight layers 1 .. f of the MLP,
 * the prefix of its parameter vector) a step still runs the forward pass
 * of every layer, but computes no weight gradient for layers 1 .. f and
 * passes no error below layer f + 1; the frozen layers hold no gradient
 * and no optimizer state.  Knows nothing of nodes, time or messages.
 */
#ifndef MDL_FREEZE_H
#define MDL_FREEZE_H

#include <stddef.h>
#include "mdl.h"

/* Layers that may be frozen: L for an MLP of L hidden layers (its output
 * layer always trains), 0 for every other type. */
size_t mdl_freeze_max(const mdl_model *m);

/* Parameters of weight layers 1 .. f (0 <= f <= mdl_freeze_max): the
 * frozen prefix params[0 .. n). */
size_t mdl_freeze_prefix(const mdl_model *m, size_t f);

/* Progressive training (an MLP built with block heads, arch.heads:
 * freeze.mode "grow"): stage f + 1 trains hidden layer f + 1 and its head
 * (the output layer for the last hidden layer), the frozen layers 1 .. f
 * run forward only and the layers above are not built yet.  Its trainable
 * parameters are the window [mdl_freeze_prefix(f), mdl_freeze_end(f)):
 * L_{f+1} H_{f+1} in the layout L_1 H_1 .. L_L O (mdl_mlp.c), L_L O for
 * the last stage, O alone with every hidden layer frozen.  Without heads
 * the end is P: the window is the suffix.  mdl_freeze_grows: the model has
 * heads.  mdl_freeze_heads_in: the parameters of the block heads lying
 * wholly in [lo, hi) (0 without heads): what a node holding a later stage
 * no longer needs. */
size_t mdl_freeze_end(const mdl_model *m, size_t f);
int    mdl_freeze_grows(const mdl_model *m);
size_t mdl_freeze_heads_in(const mdl_model *m, size_t lo, size_t hi);

/* FLOPs per sample of a step with f frozen layers: 2 in out per frozen
 * layer (forward only), 4 in out for layer f + 1 (forward and weight
 * gradient, no error passed down), 6 in out for the layers above (and
 * mdl_flops_per_sample when f is 0 or the type is not an MLP). */
double mdl_freeze_flops(const mdl_model *m, size_t f);

/* The model's steps from now on compute with f frozen layers (0: the full
 * gradient): mdl_loss_grad writes zeros to the frozen prefix of grad and
 * the suffix bit for bit as the full gradient's (the same products in the
 * same order); the loss is the same value (the frozen layers' L2 term
 * included).  -1 (nothing changed) when f > mdl_freeze_max. */
int    mdl_set_frozen(mdl_model *m, size_t f);
size_t mdl_frozen(const mdl_model *m);

/* A node's training memory in bytes, every value stored in bytes_per_value
 * bytes: parameters (all P: the forward pass needs the frozen layers too;
 * with block heads the built ones: up to the stage's end, without the
 * heads of frozen blocks),
 * gradients and optimizer state (optim_slots values per trainable
 * parameter: 1 with momentum, 0 for plain SGD) of the unfrozen
 * parameters, and the activations a batch of `batch` samples keeps for
 * the backward pass: for each unfrozen layer l, the batch x s_{l-1} inputs
 * it reads for its weight gradient, plus the batch x C outputs (the
 * softmax probabilities the error starts from).  A frozen layer's forward
 * output is consumed at once and kept only as the next layer's input.
 * For the one-layer types (softmax: C outputs, linear and logistic: one)
 * the same with one layer, f = 0. */
/* ||a - b||_1 over n values, summed in index order (the effective
 * movement criterion's path and net movement). */
double mdl_freeze_l1(const double *a, const double *b, size_t n);

typedef struct mdl_memory {
    double params, grads, optim, acts, total;
} mdl_memory;
mdl_memory mdl_memory_of(const mdl_model *m, size_t f, size_t batch, int optim_slots,
                         double bytes_per_value);

#endif
