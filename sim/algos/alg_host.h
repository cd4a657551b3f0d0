/* alg_host.h -- the runner's side of the protocols: the registry of
 * protocol tables, their parameter tables, and the host that carries a
 * protocol's alg_ calls (alg.h) to the cluster (time, bytes, buffers) and
 * the trainer (parameters, gradients, optimizers).  Protocol files never
 * include it; the runner and tests that drive protocols do.
 */
#ifndef ALG_HOST_H
#define ALG_HOST_H

#include "alg.h"
#include "cl_cluster.h"
#include "trn.h"

extern const alg_type alg_adpsgd, alg_allreduce, alg_backup, alg_comdml, alg_divshare,
    alg_dpsgd, alg_eager, alg_easgd, alg_epidemic, alg_fedavg, alg_fednova, alg_gossip,
    alg_hogwild, alg_hop, alg_localsgd, alg_lsgd, alg_pipeline, alg_prague, alg_ps_adaptive, alg_ps_async,
    alg_ps_sync, alg_rennala, alg_ringmaster, alg_sdfeel, alg_sdfeel_async, alg_sgp, alg_ssp,
    alg_symsgd;

const alg_type *alg_find(const char *name);   /* NULL when unknown */
/* The registry in order (sorted by name, as alg_names lists them), for
 * `dtsim list` and `dtsim explain`: i in 0 .. alg_count() - 1. */
size_t          alg_count(void);
const alg_type *alg_at(size_t i);

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

/* What the host connects.  bytes_per_param (after compression) prices a
 * parameter message; message_bytes is the timing-only model's whole-model
 * message. */
typedef struct alg_host_config {
    cl_cluster  *cl;
    trn_trainer *trn;
    const unsigned char *failed;   /* n_all flags: declared failed (the runner's) */
    double       bytes_per_param;
    double       message_bytes;
    /* progressive freezing (the scenario's freeze.after_steps, borrowed):
     * layer k + 1 is frozen from protocol count freeze_after[k] on, k <
     * n_freeze (increasing); n_freeze 0: no freezing */
    const uint64_t *freeze_after;
    size_t          n_freeze;
    /* ... or the criterion (freeze_threshold > 0, freeze_after NULL):
     * every freeze_window counts the next layer (up to freeze_max) is
     * frozen when ||x - x_prev||^2 < threshold^2 ||x_prev||^2 over its
     * parameters, x_prev their values at the previous check */
    double          freeze_threshold;
    int             freeze_effective_movement;   /* the criterion's measure: 0
                                                    relative change, 1 effective
                                                    movement */
    uint64_t        freeze_window;
    size_t          freeze_max;
    /* the memory model (alg_memory_fits): n_all capacities in bytes (0: no
     * capacity), or NULL; optimizer values per trainable parameter and
     * bytes per value (models/mdl_freeze.h) */
    const double   *mem_capacity;
    int             mem_optim_slots;
    double          mem_bytes_per_value;
} alg_host_config;

/* Creates ctx->host for ctx->n_all nodes (ctx->seed, ctx->P and
 * ctx->n_all set); borrows cl and trn, which must outlive it.  -1 when out
 * of memory.  alg_host_detach frees it and the streams alg_rng created;
 * it accepts ctx->host == NULL. */
int  alg_host_attach(alg_ctx *ctx, const alg_host_config *cfg);
void alg_host_detach(alg_ctx *ctx);

#endif
