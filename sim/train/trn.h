/* trn.h -- the training state of every node: its parameters, the gradient
 * of its step in progress, its data cursor (a seeded shuffle of its
 * partition per epoch, drop-last) and its optimizer.  A step's math is one
 * self-contained job: the node's parameters as they are when the step
 * begins, the batch indices its data stream draws, and the model give the
 * loss and the gradient, which stays put until the node's next step
 * begins.  It knows nothing of time, messages or which protocol runs: the
 * caller says when a step begins and reads the gradient when it ends.
 */
#ifndef TRN_H
#define TRN_H

#include <stddef.h>
#include <stdint.h>
#include "mdl.h"
#include "mdl_optim.h"

typedef struct trn_trainer trn_trainer;

typedef struct trn_config {
    int      n_nodes;      /* every node holding parameters (workers and servers) */
    uint64_t seed;         /* scenario seed: the SIM_RNG_DATA and SIM_RNG_INIT streams */
    /* Borrowed, must outlive the trainer.  model NULL is the timing-only
     * "none" model: no parameters, no gradients, no data (train and part
     * are not read). */
    mdl_model           *model;
    const mdl_dataset   *train;
    const mdl_partition *part;    /* n_nodes parts (servers' empty) */
    size_t               batch;   /* samples per step, <= smallest worker's part */
    mdl_optim_spec       optim;   /* every node's optimizer (copied) */
} trn_config;

/* The first step whose minibatch loss was NaN or infinite when it began,
 * over all nodes: the node's parameters had already blown up or the loss
 * overflowed.  The step still runs; the caller decides to stop. */
typedef struct trn_divergence {
    int      diverged;  /* 0: every loss so far was finite */
    int      node;
    uint64_t step;      /* the node's step number, from 1 */
    double   time_s;    /* simulated time the step began */
    double   loss;      /* NaN or +-Inf */
} trn_divergence;

/* Every node's parameters start at zero (see trn_init_params).  NULL when
 * out of memory or the optimizer spec is out of range.  O(n_nodes *
 * n_params) memory for parameters and gradients, plus the optimizer's. */
trn_trainer *trn_create(const trn_config *cfg);
void         trn_destroy(trn_trainer *t);   /* NULL: nothing */

int    trn_n_nodes(const trn_trainer *t);
size_t trn_n_params(const trn_trainer *t);   /* 0 for the timing-only model */
int    trn_timing_only(const trn_trainer *t);
size_t trn_batch(const trn_trainer *t);
size_t trn_local_samples(const trn_trainer *t, int node);

/* Node's parameters (n_params doubles), owned by the trainer. */
double       *trn_params(trn_trainer *t, int node);
const double *trn_params_const(const trn_trainer *t, int node);

/* Every node starts from the same model, as in the papers: node 0's is
 * drawn by the model from the SIM_RNG_INIT stream and copied to the
 * others.  -1 when out of memory.  Nothing to draw for the timing-only
 * model. */
int trn_init_params(trn_trainer *t);

/* The step that node begins now: draws its batch (reshuffling at an epoch
 * boundary) and computes the loss and gradient on its current parameters.
 * step is the node's step number (from 1) and time_s the simulated time,
 * both only for the divergence record.  Cost: one model gradient; nothing
 * for the timing-only model. */
void trn_step_begin(trn_trainer *t, int node, uint64_t step, double time_s);
/* The gradient of node's last step begun; valid until its next begins. */
const double *trn_grad(const trn_trainer *t, int node);

/* Node's next optimizer update of x with the gradient g / g_div (see
 * mdl_optim_step): with the default optimizer exactly x <- x - (lr /
 * g_div) g. */
void trn_apply(trn_trainer *t, int node, double *x, const double *g, double g_div);

const trn_divergence *trn_divergence_get(const trn_trainer *t);

#endif
