/* alg.h -- training protocols behind one small table, in the spirit of GSL's
 * *_type: the runner allocates state_size bytes per node (zeroed) and calls
 * the hooks as the cluster reports steps and messages.  Algorithms ask the
 * cluster to start steps and send messages; they never touch the event
 * queue.  This header also holds the registry.
 */
#ifndef ALG_H
#define ALG_H

#include <stddef.h>
#include <stdint.h>
#include <gsl/gsl_rng.h>
#include "cl_cluster.h"
#include "mdl_optim.h"
#include "topo.h"

/* What every hook may use.  Owned by the runner. */
typedef struct alg_ctx {
    cl_cluster       *cl;
    const topo_graph *g;        /* neighbour lists and mixing weights */
    int               n;        /* nodes */
    size_t            P;        /* parameters per model */
    double            lr;       /* base learning rate (the optimizer's) */
    mdl_optim        *opt;      /* every node's optimizer state, owned by
                                   the runner; updates go through
                                   alg_sgd_apply */
    gsl_rng         **rng;      /* per-node SIM_RNG_ALGO streams */
    char             *states;   /* n * state_size bytes */
    size_t            state_size;
} alg_ctx;

static inline void *alg_state(const alg_ctx *ctx, int node)
{
    return ctx->states + (size_t)node * ctx->state_size;
}

typedef struct alg_type {
    const char *name;          /* matched against the scenario */
    size_t      state_size;    /* per node */
    /* Checks that the algorithm can run on this cluster and graph before
     * anything starts; writes a reason (lowercase, no full stop) and
     * returns -1 when not.  NULL: always fine. */
    int  (*check)(const alg_ctx *ctx, char *err, size_t err_size);
    /* Allocates node's workspaces; -1 when out of memory. */
    int  (*init)(alg_ctx *ctx, void *state, int node);
    /* Time 0: start the node's work (usually its first step). */
    void (*on_start)(alg_ctx *ctx, void *state, int node);
    void (*on_step_done)(alg_ctx *ctx, void *state, int node, const double *grad);
    void (*on_message)(alg_ctx *ctx, void *state, int node, const cl_msg *msg);
    /* Writes what the node waits for, for stall reports ("round 3 from
     * node 2").  Empty string when it waits for nothing. */
    void (*describe_wait)(const alg_ctx *ctx, const void *state, int node,
                          char *buf, size_t size);
    /* Frees what init allocated (may be called after a failed init). */
    void (*fini)(alg_ctx *ctx, void *state, int node);
} alg_type;

extern const alg_type alg_allreduce, alg_dpsgd, alg_adpsgd;

const alg_type *alg_find(const char *name);   /* NULL when unknown */
const char     *alg_names(void);              /* "adpsgd, allreduce, dpsgd" */

/* Node's parameter update with the gradient g / g_div, shared by all
 * protocols: it goes through node's optimizer (momentum, weight decay,
 * learning-rate schedule; see mdl_optim.h).  With the default optimizer it
 * is exactly x <- x - (lr / g_div) g (one CBLAS daxpy). */
void alg_sgd_apply(const alg_ctx *ctx, int node, double *x, const double *g, double g_div);

#endif
