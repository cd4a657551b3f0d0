/* mdl_optim.h -- per-node first-order optimizers: SGD with optional
 * momentum (heavy ball or Nesterov), weight decay and a learning-rate
 * schedule (constant, step, cosine, each with optional linear warm-up).
 * One object holds the state of every node (momentum buffer and update
 * count), so protocols apply their updates through one call and each node
 * follows its own schedule.  It knows nothing of messages or time.
 */
#ifndef MDL_OPTIM_H
#define MDL_OPTIM_H

#include <stddef.h>
#include <stdint.h>

typedef enum mdl_schedule {
    MDL_SCHED_CONSTANT = 0,  /* lr */
    MDL_SCHED_STEP,          /* lr * gamma^floor(k / step_every) */
    MDL_SCHED_COSINE         /* lr_min + (lr - lr_min) (1 + cos(pi min(k, T) / T)) / 2 */
} mdl_schedule;
/* "constant", "step", "cosine": indexed by value, NULL-terminated
 * (mdl_names.c). */
extern const char *const mdl_schedule_name_list[];

typedef struct mdl_optim_spec {
    double lr;            /* base learning rate, >= 0 */
    double momentum;      /* mu in [0, 1); 0: plain SGD */
    int    nesterov;      /* Nesterov's look-ahead form (needs momentum > 0) */
    double weight_decay;  /* wd >= 0: wd * x is added to the gradient */
    mdl_schedule schedule;
    long   step_every;    /* step: >= 1 */
    double gamma;         /* step: in (0, 1] */
    long   total_steps;   /* cosine: T >= 1 */
    double lr_min;        /* cosine: >= 0 */
    long   warmup_steps;  /* W >= 0: the first W updates scale by (k + 1) / W */
} mdl_optim_spec;

typedef struct mdl_optim mdl_optim;

/* State for n_nodes nodes of n_params parameters; the momentum buffers
 * (n_nodes * n_params doubles) are allocated only when momentum > 0.  The
 * spec is copied.  NULL when out of memory or the spec is out of range.
 * mdl_optim_destroy(NULL) does nothing. */
mdl_optim *mdl_optim_create(const mdl_optim_spec *spec, int n_nodes, size_t n_params);
void       mdl_optim_destroy(mdl_optim *o);

/* The learning rate of update k (0 for a node's first update). */
double mdl_optim_lr(const mdl_optim_spec *spec, uint64_t k);

/* Applies node's next update to x with the gradient g / g_div (g_div > 0;
 * e.g. the node count when g is a sum over nodes), in the form of
 * PyTorch's SGD:
 *   d = g / g_div + wd x;  b = mu b + d;  d = nesterov ? d + mu b : b;
 *   x = x - lr_k d
 * (without momentum d is used as is).  With the default spec (no momentum,
 * no weight decay, constant schedule, no warm-up) this is exactly
 * cblas_daxpy(-lr / g_div, g, x), bit for bit.  O(n_params). */
void mdl_optim_step(mdl_optim *o, int node, double *x, const double *g, double g_div);

/* The same update on x[lo .. hi) only (x and g are the whole vectors),
 * without counting it: callers that spread one update over threads call
 * it per block, then mdl_optim_count once.  Each element takes the same
 * operations as in mdl_optim_step, so the result is the same bits for
 * any cut into blocks whose bounds are multiples of MDL_OPTIM_BLOCK (the
 * default spec's daxpy then runs every element through the same kernel
 * path). */
#define MDL_OPTIM_BLOCK 64
void mdl_optim_step_range(mdl_optim *o, int node, double *x, const double *g, double g_div,
                          size_t lo, size_t hi);
void mdl_optim_count(mdl_optim *o, int node);

/* Zeroes node's momentum buffer (nothing without momentum): the next
 * update starts the heavy ball afresh, as an optimizer created anew would
 * (FedNova's clients at each round).  The update count is kept. */
void mdl_optim_reset_momentum(mdl_optim *o, int node);
/* Updates node has applied so far. */
uint64_t mdl_optim_updates(const mdl_optim *o, int node);

/* Node's next update (not counted) as its per-element terms, for a caller
 * that fuses it into a pass of its own (the trainer's mix): with
 * d = g[i] * inv + wd * x[i] evaluated left to right, as in
 * mdl_optim_step_range,
 *   PLAIN:    x[i] += a * g[i], one fused multiply-add (cblas_daxpy's
 *             element, a = -lr / g_div)
 *   DECAY:    x[i] -= lr * d                       (no momentum)
 *   MOMENTUM: b[i] = mu * b[i] + g[i] * inv + wd * x[i];  x[i] -= lr * b[i]
 *   NESTEROV: b[i] = mu * b[i] + d;  x[i] -= lr * (d + mu * b[i])
 * b is node's momentum buffer (NULL without momentum). */
typedef enum { MDL_OPTIM_PLAIN, MDL_OPTIM_DECAY, MDL_OPTIM_MOMENTUM, MDL_OPTIM_NESTEROV } mdl_optim_kind;
typedef struct mdl_optim_terms {
    mdl_optim_kind kind;
    double         a, lr, inv, wd, mu;
    double        *b;
} mdl_optim_terms;
mdl_optim_terms mdl_optim_terms_get(mdl_optim *o, int node, double g_div);

#endif
