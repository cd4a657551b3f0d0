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

/* A protocol-specific parameter: a key of the scenario's algorithm object
 * besides name, lr and batch.  Integers and reals must lie in [min, max];
 * a choice is one of the NULL-terminated choices and is stored as its
 * index. */
typedef enum alg_param_kind {
    ALG_PARAM_INT, ALG_PARAM_REAL, ALG_PARAM_CHOICE,
    ALG_PARAM_PATH   /* a file, relative to the scenario's directory; absent: NULL */
} alg_param_kind;

typedef struct alg_param_spec {
    const char         *key;        /* NULL ends a table */
    alg_param_kind      kind;
    double              def, min, max;
    const char *const  *choices;    /* ALG_PARAM_CHOICE */
} alg_param_spec;

#define ALG_MAX_PARAMS 16

/* What every hook may use.  Owned by the runner. */
typedef struct alg_ctx {
    cl_cluster       *cl;
    const topo_graph *g;        /* neighbour lists and mixing weights */
    int               n;        /* workers: nodes 0 .. n-1 compute and hold data */
    int               n_all;    /* n plus the algorithm's servers */
    int               server;   /* node number of the first server (n), or -1 */
    size_t            P;        /* parameters per model */
    double            lr;       /* base learning rate (the optimizer's) */
    mdl_optim        *opt;      /* every node's optimizer state, owned by
                                   the runner; updates go through
                                   alg_sgd_apply */
    gsl_rng         **rng;      /* per-node SIM_RNG_ALGO streams, created on
                                   first use: read them through alg_rng */
    uint64_t          seed;     /* the scenario seed the streams derive from */
    char             *states;   /* n * state_size bytes */
    size_t            state_size;
    double            param[ALG_MAX_PARAMS];  /* by position in alg_type.params */
    const char       *path[ALG_MAX_PARAMS];   /* ALG_PARAM_PATH values (resolved), or NULL */
    void             *shared;   /* the algorithm's state common to all nodes */
} alg_ctx;

static inline void *alg_state(const alg_ctx *ctx, int node)
{
    return ctx->states + (size_t)node * ctx->state_size;
}

typedef struct alg_type {
    const char *name;          /* matched against the scenario */
    size_t      state_size;    /* per node, servers included */
    /* Nodes the protocol adds beside the scenario's workers (a parameter
     * server): they hold no data, never step, are not in the topology, and
     * their links are like every other link. */
    int         servers;
    /* When the number of servers depends on the parameters (one per
     * cluster): called once the parameters are set (ctx->n and ctx->param
     * only).  NULL: `servers`. */
    int (*n_servers)(const alg_ctx *ctx);
    /* The model that metrics.csv evaluates (e.g. the server's).  NULL: the
     * average of the workers' models. */
    const double *(*eval_params)(const alg_ctx *ctx);
    const alg_param_spec *params;  /* NULL, or a table ended by a NULL key */
    /* Creates and destroys ctx->shared (state common to all nodes), after
     * the parameters and ctx->rng are set and before any init; shared_fini must accept
     * ctx->shared == NULL (a start that failed early).  NULL: none. */
    int  (*shared_init)(alg_ctx *ctx);
    void (*shared_fini)(alg_ctx *ctx);
    /* Checks that the algorithm can run on this cluster and graph before
     * anything starts; writes a reason (lowercase, no full stop) and
     * returns -1 when not.  NULL: always fine. */
    int  (*check)(const alg_ctx *ctx, char *err, size_t err_size);
    /* Hooks marked "may be NULL" have defaults: init does nothing, on_start
     * starts a step on every worker, describe_wait says "its step" while
     * the node computes, fini does nothing. */
    /* Allocates node's workspaces; -1 when out of memory.  May be NULL. */
    int  (*init)(alg_ctx *ctx, void *state, int node);
    /* Time 0: start the node's work (usually its first step).  May be NULL. */
    void (*on_start)(alg_ctx *ctx, void *state, int node);
    void (*on_step_done)(alg_ctx *ctx, void *state, int node, const double *grad);
    void (*on_message)(alg_ctx *ctx, void *state, int node, const cl_msg *msg);
    /* Writes what the node waits for, for stall reports ("round 3 from
     * node 2").  Empty string when it waits for nothing.  May be NULL. */
    void (*describe_wait)(const alg_ctx *ctx, const void *state, int node,
                          char *buf, size_t size);
    /* Figures for run.json's "algorithm_stats" (e.g. staleness): fills up
     * to max keys and values, returns how many.  NULL: none. */
    int  (*stats)(const alg_ctx *ctx, const char **keys, double *values, int max);
    /* Frees what init allocated (may be called after a failed init).  May
     * be NULL. */
    void (*fini)(alg_ctx *ctx, void *state, int node);
} alg_type;

extern const alg_type alg_adpsgd, alg_allreduce, alg_backup, alg_dpsgd, alg_eager, alg_epidemic,
    alg_fedavg, alg_gossip, alg_hop, alg_localsgd, alg_prague, alg_ps_async, alg_ps_sync, alg_rennala,
    alg_ringmaster, alg_sdfeel, alg_sgp, alg_ssp;

const alg_type *alg_find(const char *name);   /* NULL when unknown */

/* Resolves one scenario value of key against t's table into
 * ctx->param[]: returns 0; 1 when t has no such key; -1 when the value is
 * not allowed (message in err, lowercase, e.g. "must be an integer >= 1,
 * got 0").  Unset parameters take their defaults from alg_params_defaults.
 * A path parameter is only checked here: the caller resolves it and sets
 * ctx->path[alg_params_index(t, key)]. */
void alg_params_defaults(const alg_type *t, alg_ctx *ctx);
int  alg_params_set(const alg_type *t, alg_ctx *ctx, const char *key, int is_string,
                    double num, const char *str, char *err, size_t err_size);
/* Position of key in t's table, or -1. */
int  alg_params_index(const alg_type *t, const char *key);
/* "name, lr, batch" plus the keys of t's table, for error messages. */
void alg_params_keys(const alg_type *t, char *buf, size_t size);
const char     *alg_names(void);   /* "adpsgd, allreduce, dpsgd, ...", sorted */

/* Node's parameter update with the gradient g / g_div, shared by all
 * protocols: it goes through node's optimizer (momentum, weight decay,
 * learning-rate schedule; see mdl_optim.h).  With the default optimizer it
 * is exactly x <- x - (lr / g_div) g (one CBLAS daxpy). */
void alg_sgd_apply(const alg_ctx *ctx, int node, double *x, const double *g, double g_div);

/* Node's SIM_RNG_ALGO stream, created on first use (streams are seeded
 * independently, so creating one late shifts nothing; a protocol that
 * draws nothing then costs no 5 KB generator per node).  Exits when out
 * of memory. */
gsl_rng *alg_rng(const alg_ctx *ctx, int node);

#endif
