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
#include <gsl/gsl_rng.h>

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
    /* <= 1: a step's math runs inside trn_step_begin.  N >= 2: on N
     * threads (the caller's and N - 1 workers), on the parameters as
     * they were when the step began (see trn_params), joined when its
     * gradient is asked for; evaluations, optimizer updates and
     * round mixes are spread likewise.  Every result is the same bits for
     * every N. */
    int                  threads;
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
/* Node's samples per step: cfg.batch until trn_set_batch changes it.
 * trn_set_batch takes effect at node's next step begun: 1 <= b <= its
 * local samples (any b for the timing-only model, which draws none);
 * a batch above cfg.batch (the model's own bound) is taken in chunks of
 * cfg.batch and their gradients averaged by size (the same mean up to
 * rounding).  Returns 0; -1 when b is out of range; -2 when out of
 * memory (the first batch above cfg.batch takes n_nodes * n_params
 * doubles of chunk gradients).  Until a batch differs from cfg.batch
 * nothing is allocated and every draw is as before. */
size_t trn_node_batch(const trn_trainer *t, int node);
int    trn_set_batch(trn_trainer *t, int node, size_t b);
size_t trn_local_samples(const trn_trainer *t, int node);

/* Node's parameters (n_params doubles), owned by the trainer.  With
 * threads a step's job reads its node's parameters in place until a
 * caller first asks for them writable while a job is pending: that job is
 * then settled first, and from then on jobs read a copy taken at step
 * start (a protocol such as AD-PSGD writes mid-step; D-PSGD never does,
 * so it pays no copy).  Write only through a pointer obtained after the
 * job that might read them was begun, i.e. get it again in each hook. */
double       *trn_params(trn_trainer *t, int node);
const double *trn_params_const(const trn_trainer *t, int node);
/* After a mix that moved node's parameters into its out buffer
 * (trn_mix_terms.move), they live there (trn_params_const returns it)
 * until this call, or trn_params, copies them back into the trainer's own
 * storage (one model-sized copy; nothing when they are there already).
 * Call it before that buffer is released or changed by anyone else. */
void          trn_params_own(trn_trainer *t, int node);

/* Every node starts from the same model, as in the papers: node 0's is
 * drawn by the model from the SIM_RNG_INIT stream and copied to the
 * others.  -1 when out of memory.  Nothing to draw for the timing-only
 * model. */
int trn_init_params(trn_trainer *t);

/* The step that node begins now: draws its batch (reshuffling at an epoch
 * boundary) and computes the loss and gradient on its current parameters.
 * step is the node's step number (from 1) and time_s the simulated time,
 * both only for the divergence record.  Cost: one model gradient (with
 * threads: one copy of the parameters here, the gradient on a worker);
 * nothing for the timing-only model.  A step begun again (restarted) after
 * one that was aborted discards the first one's job once it has run. */
void trn_step_begin(trn_trainer *t, int node, uint64_t step, double time_s);
/* Protocols that compute a step's math themselves (split training,
 * alg_start_work): with math off (on = 0) node's steps draw no batch and
 * compute nothing when they begin; trn_grad then returns the last
 * gradient computed.  On by default. */
void trn_set_math(trn_trainer *t, int node, int on);
/* Node's next batch (trn_batch indices into the training set) from its
 * data stream, as a step would draw it; valid until the next draw.  NULL
 * for the timing-only model. */
const size_t *trn_draw_batch(trn_trainer *t, int node);
/* The model and training set (borrowed from the config; NULL for the
 * timing-only model). */
const mdl_model   *trn_model(const trn_trainer *t);
const mdl_dataset *trn_train_set(const trn_trainer *t);
/* A loss computed outside the trainer's steps (on the caller's thread):
 * recorded as a divergence when not finite, as a step's would be. */
void trn_check_loss(trn_trainer *t, int node, uint64_t step, double time_s, double loss);
/* Split training of the MLP at cut s (models/mdl_split.h; the model
 * must be an MLP and 1 <= s <= L; the workspace of a cut is made on
 * first use, on the caller's thread).  trn_split_front draws node's next
 * batch and runs the front part with the auxiliary head aux on node's
 * parameters: A_s to acts (batch x h_s), the labels to labels, the
 * gradient of layers 1 .. s to g[0 .. n_front) (g has n_params doubles)
 * and the head's to g_aux; returns the local loss.  trn_split_back runs
 * the back part of the whole-model vector x (its suffix) on a batch of
 * activations: gradient to the suffix of g; returns the loss.
 * trn_split_aux_init draws a head from rng. */
double trn_split_front(trn_trainer *t, int node, size_t s, const double *aux, double *acts,
                       int *labels, double *g, double *g_aux);
double trn_split_back(trn_trainer *t, size_t s, const double *x, const double *acts,
                      const int *labels, double *g);
void   trn_split_aux_init(trn_trainer *t, size_t s, double *aux, gsl_rng *rng);
/* Node's optimizer update on x[lo .. hi) only (x and g whole vectors;
 * mdl_optim_step_range), counted as one update when count is nonzero. */
void trn_apply_range(trn_trainer *t, int node, double *x, const double *g, double g_div,
                     size_t lo, size_t hi, int count);

/* Progressive freezing (trn_freeze.c, models/mdl_freeze.h): node's
 * steps begun from now on compute with its first f weight layers frozen
 * (no gradient for them: the prefix of its gradient is zero), and its
 * optimizer updates (trn_apply) leave that prefix, and its state, alone.
 * 0 unfreezes.  Protocols that freeze update through trn_apply (not the
 * fused trn_mix, which updates the whole vector).  0; -1 when f is more
 * than the model's hidden layers (or the timing-only model); -2 when out
 * of memory (the first freeze allocates 2 n sizes).  trn_frozen: node's
 * count (0 until set); trn_frozen_prefix: the parameters it covers. */
int    trn_set_frozen(trn_trainer *t, int node, size_t f);
size_t trn_frozen(const trn_trainer *t, int node);
size_t trn_frozen_prefix(const trn_trainer *t, int node);
/* The end of node's trainable window (models/mdl_freeze.h): P, or with
 * block heads the end of its stage's block and head; trn_apply updates
 * [trn_frozen_prefix, this) only. */
size_t trn_trainable_end(const trn_trainer *t, int node);
/* The gradient of node's last step begun; valid until its next begins.
 * With threads it first waits for the step's job (or runs it here when no
 * worker has taken it): call it at the step's end or marks, not before. */
const double *trn_grad(trn_trainer *t, int node);
/* The batch of node's last step begun (*n indices into the training
 * set), valid until its next step begins; NULL with *n = 0 before its
 * first step and for the timing-only model. */
const size_t *trn_step_batch(const trn_trainer *t, int node, size_t *n);
/* mdl_hessian_apply on node's last step's batch at params (the trainer's
 * own model instance, so it may run while jobs do): out = H V for the k
 * columns of V (n_params x k, row-major).  0; -1 when there is no such
 * batch or the model has no Hessian; -2 when out of memory. */
int trn_hessian_apply(trn_trainer *t, int node, const double *params, const double *V, size_t k,
                      double *out);
/* The minibatch loss of node's last step begun (the model's loss on the
 * step's batch at the parameters the step began on, the value its gradient
 * belongs to), as trn_grad settles it; NaN before its first step and for
 * the timing-only model. */
double trn_step_loss(trn_trainer *t, int node);
/* Waits for every job in progress (node order) so the divergence record
 * covers every step begun.  Nothing on one thread. */
void trn_join_all(trn_trainer *t);
/* Threads the math runs on (1: inline), and the CPU seconds its workers
 * have used so far (0 on one thread). */
int    trn_threads(const trn_trainer *t);
double trn_worker_cpu_s(const trn_trainer *t);
/* CPU seconds inside step and evaluation jobs so far, on every thread;
 * NaN on one thread (not measured there, to keep that path as it was). */
double trn_math_cpu_s(trn_trainer *t);

/* mdl_evaluate of the trainer's model on params, spread over the threads
 * in the model's chunks and summed in chunk order: the same bits as
 * mdl_evaluate.  Not while another evaluation is in progress.  -1 when out
 * of memory (the first evaluation of a larger set grows a buffer). */
int trn_evaluate(trn_trainer *t, const double *params, const mdl_dataset *ds,
                 const size_t *idx, size_t n_idx, double *loss, double *accuracy);
/* The same for the network of a stage with `frozen` layers frozen: with
 * block heads (freeze.mode "grow") the stage's path, layers 1 .. f + 1 and
 * their head; without heads every stage is the whole network, the same
 * bits as trn_evaluate. */
int trn_evaluate_at(trn_trainer *t, size_t frozen, const double *params,
                    const mdl_dataset *ds, const size_t *idx, size_t n_idx, double *loss,
                    double *accuracy);

/* Node's next optimizer update of x with the gradient g / g_div (see
 * mdl_optim_step): with the default optimizer exactly x <- x - (lr /
 * g_div) g.  With threads, and for models of at least 16,384 parameters,
 * it is cut into blocks spread over the threads (blocks start at
 * multiples of 64), each element computed as in one pass over the whole
 * vector, so the result is the same bits for every N. */
void trn_apply(trn_trainer *t, int node, double *x, const double *g, double g_div);

/* mdl_optim_reset_momentum of node's optimizer. */
void trn_reset_momentum(trn_trainer *t, int node);


/* One round's mix and update of node's parameters x in one pass:
 *   x <- (0 + w_0 x_0 + ... + w_{n-1} x_{n-1}) + own_w own
 * (the terms added in their order, as daxpys into a zeroed accumulator,
 * then the accumulator + own_w own, as memcpy + daxpy), then, when g is
 * not NULL, node's optimizer update of x with g / g_div (trn_apply), and
 * then, when out is not NULL, out <- x (the next round's snapshot).  The
 * same bits as those passes one after the other over the whole vector,
 * with no accumulator of the model's size: the model is cut into L1-sized
 * pieces, each summed, written to x, updated and copied while in cache.
 *
 * On one thread it runs here.  With threads it is deferred: node's next
 * step's job runs it before the gradient (so it is parallel work, not the
 * loop's), and anything that reads or writes x before (trn_params,
 * trn_params_const, trn_join_all) first makes it final.  So the caller
 * must keep the x_j, own, g and out unchanged and allocated until node's
 * next gradient is joined or trn_params_const(node) has returned.  The
 * x_j that are other nodes' out buffers of their own deferred mixes are
 * made final first (from[j] names x_j's node; they are compared by
 * pointer).  out, the x_j and x must not overlap; own may be x; g must be
 * node's gradient or stay put.  The term arrays are copied.
 *
 * move: out (not NULL) becomes node's parameters: the mix is written
 * there once and not to x, and trn_params_const returns out from now on
 * (with threads: once the deferred mix is final), until node's next
 * moving mix or trn_params_own; the caller keeps out allocated and
 * unwritten by others until then.  out may then be own (in place: the
 * old parameters are overwritten by the new, element by element), when
 * nothing else reads own any more. */
typedef struct trn_mix_terms {
    int                  n;
    const double *const *x;    /* n models */
    const double        *w;    /* n weights */
    const int           *from; /* n nodes whose buffers x holds */
    double               own_w;
    const double        *own;
    const double        *g;    /* or NULL */
    double               g_div;
    double              *out;  /* or NULL */
    /* or NULL; else the only term, of weight 1, a sum of the models
     * (summed from a zero): used in place, x <- clear + own_w own exactly
     * as memcpy + daxpy, and zeroed piece by piece once read, so it needs
     * no pass of its own to clear */
    double              *clear;
    /* the node's frozen prefix when the mix was asked for (progressive
     * freezing): parameters [0, lo) take no part (the mix, the update and
     * the copy run over [lo, P); out's prefix is copied from x, clear's
     * zeroed); 0: all of them */
    size_t               lo;
    int                  move;
    /* set by trn_mix: node's parameters before a moving mix (out's frozen
     * prefix is copied from them) */
    const double        *prev;
} trn_mix_terms;
void trn_mix(trn_trainer *t, int node, const trn_mix_terms *m);
/* Whether trn_mix defers (threads, and no protocol wrote parameters
 * mid-step so far); it runs at once otherwise. */
int  trn_mix_deferred(const trn_trainer *t);
/* Whether trn_mix runs as one loop per element (trn_fuse.c: this machine's
 * daxpy and optimizer were found to give that loop's bits) rather than as
 * BLAS passes; the results are the same bits either way. */
int  trn_mix_fused(const trn_trainer *t);

/* With threads, a step's loss is known when its job is joined, so the
 * record may come later than the step's start and need not be the first
 * over all nodes; the runner replays such a run on one thread. */
const trn_divergence *trn_divergence_get(const trn_trainer *t);

#endif
