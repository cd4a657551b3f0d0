/* alg_ps.h -- the parts every parameter-server protocol shares: one server
 * node (ctx->server, added by the runner beside the workers) whose
 * parameters are the global model, versioned by the number of updates
 * applied; workers push gradients tagged with the version they were
 * computed on and receive model snapshots tagged with the server's version;
 * the staleness of every applied gradient (updates applied between the
 * version it was computed on and its application) is recorded.  Applying an
 * update on the server takes no simulated time.  The policy (when to apply,
 * what to discard, whom to answer) is each protocol's own.
 *
 * Failures (docs/algorithms.md, "When a node fails"): the failure detector's
 * declarations (alg_type.on_failure) are the protocol's view; the server
 * acts on one through a timer of its own set at once (alg_ps_notify_server),
 * so a server that is itself down acts on nothing -- it catches up at its
 * next message or when it is declared back.  The server sends nothing to a
 * worker declared failed, and a worker declared back gets the current model
 * in a rejoin message (ALG_PS_TAG_REJOIN) on which it starts afresh.
 */
#ifndef ALG_PS_H
#define ALG_PS_H

#include <stdint.h>
#include "alg.h"

enum { ALG_PS_TAG_GRAD = 101, ALG_PS_TAG_MODEL = 102, ALG_PS_TAG_REJOIN = 103 };

/* Timer tags from here on are the protocol's own; below, a notice. */
#define ALG_PS_TIMER_OWN 0x80000000u

typedef struct alg_ps {
    uint64_t version;          /* updates applied by the server */
    uint64_t applied, discarded;
    double   staleness_sum;
    uint64_t staleness_max;
    double  *sum;              /* P: gradients gathered for one update */
    int      n_sum;
    double   w_sum;            /* their weights (1 each with alg_ps_gather) */
} alg_ps;

/* Allocates ctx->shared as an alg_ps plus `extra` zeroed bytes after it
 * (the protocol's own shared state, at (char *)ps + sizeof(alg_ps) rounded
 * up: use alg_ps_extra).  -1 when out of memory. */
int   alg_ps_shared_init(alg_ctx *ctx, size_t extra);
void  alg_ps_shared_fini(alg_ctx *ctx);
void *alg_ps_extra(alg_ps *ps);

/* Worker -> server: grad (P doubles) computed on model version. */
void alg_ps_push(alg_ctx *ctx, int worker, const double *grad, uint64_t version);
/* Server -> one worker / every worker not declared failed: a snapshot of
 * the server model. */
void alg_ps_send_model(alg_ctx *ctx, int worker);
void alg_ps_broadcast_model(alg_ctx *ctx);
/* Server -> a worker declared back: the current model, tag
 * ALG_PS_TAG_REJOIN. */
void alg_ps_send_rejoin(alg_ctx *ctx, int worker);

/* The detector's declaration about peer (a worker or the server) as a
 * server timer of delay 0 (dropped when the server is down): call it from
 * on_failure; alg_ps_notice decodes the tag in on_timer (0: a protocol
 * timer, tag >= ALG_PS_TIMER_OWN). */
void alg_ps_notify_server(alg_ctx *ctx, int peer, int failed);
int  alg_ps_notice(uint32_t tag, int *peer, int *failed);
/* Workers not declared failed, O(n). */
int  alg_ps_live_workers(const alg_ctx *ctx);

/* Server: applies g through the server's optimizer (x <- x - lr g with the
 * default one); version+1; records the staleness of a gradient computed on
 * `computed_on`. */
void alg_ps_apply(alg_ctx *ctx, const double *g, uint64_t computed_on);
/* As alg_ps_apply with the gradient divided by g_div > 0 (x <- x -
 * (lr / g_div) g with the default optimizer): a step size scaled per
 * gradient (delay-adaptive).  g_div 1.0 is alg_ps_apply. */
void alg_ps_apply_div(alg_ctx *ctx, const double *g, uint64_t computed_on, double g_div);
/* Server: accumulate g into ps->sum (in arrival order), or apply the mean
 * of the gathered gradients as one update through the server's optimizer (staleness recorded as 0 for
 * each: they were all computed on the current version). */
void alg_ps_gather(alg_ctx *ctx, const double *g);
void alg_ps_apply_gathered(alg_ctx *ctx);
/* As alg_ps_gather with weight w > 0: w g is accumulated and the update
 * applied is sum w_k g_k / sum w_k (a batch-size-weighted mean; weights
 * of 1 are alg_ps_gather). */
void alg_ps_gather_w(alg_ctx *ctx, const double *g, double w);

/* Progressive freezing (alg_freeze_round; ps-sync): a worker's gradient
 * of its trainable suffix only, grad[off .. P) in a message of P - off
 * parameters (alg_ps_push with off 0 otherwise); the server gathers a
 * suffix message into the sum at its offset (alg_ps_gather_w for a whole
 * one), and sends every worker not declared failed the suffix [off, P) of
 * its model, the part a worker that held the previous version may not
 * have (alg_ps_broadcast_model for off 0).  alg_ps_install copies a
 * suffix message into the suffix. */
void alg_ps_push_suffix(alg_ctx *ctx, int worker, const double *grad, uint64_t version,
                        size_t off);
void alg_ps_gather_msg(alg_ctx *ctx, const cl_buf *g, double w);
void alg_ps_broadcast_suffix(alg_ctx *ctx, size_t off);
/* Server -> one worker: the suffix [off, P) of its model (alg_ps_send_model
 * for off 0), for a worker that holds [0, off) bit for bit. */
void alg_ps_send_suffix(alg_ctx *ctx, int worker, size_t off);

/* Worker: installs a received model (a whole one, or a suffix).
 * alg_ps_install_to: the payload is the piece ending at parameter `end`
 * (alg_freeze_end_at with freeze.mode "grow"; P otherwise). */
void alg_ps_install(alg_ctx *ctx, int worker, const cl_msg *m);
void alg_ps_install_to(alg_ctx *ctx, int worker, const cl_msg *m, size_t end);

/* A worker that pushes each gradient and waits for the server's reply
 * (ps-async, ssp, ringmaster).  These functions take the node state, which
 * must be (or start with) an alg_ps_worker, so they serve directly as the
 * protocol's hooks. */
typedef struct alg_ps_worker {
    uint64_t version;   /* of the model it holds */
    int      waiting;
} alg_ps_worker;

int  alg_ps_shared_init_plain(alg_ctx *ctx);   /* alg_ps_shared_init(ctx, 0) */
void alg_ps_worker_step_done(alg_ctx *ctx, void *state, int i, const double *grad);
/* Installs the server's reply and starts the next step (at the frozen
 * stage of the version it got: alg_freeze_round, nothing without a freeze
 * section); a reply that comes while the worker is not waiting (a late
 * copy after a rejoin) is ignored. */
void alg_ps_worker_reply(alg_ctx *ctx, void *state, int i, const cl_msg *m);
/* Installs m, abandons the step in progress and starts afresh on m. */
void alg_ps_worker_restart(alg_ctx *ctx, void *state, int i, const cl_msg *m);
/* A rejoin message: restarts (alg_ps_worker_restart) unless the worker is
 * already computing on that version or a newer one. */
void alg_ps_worker_rejoin(alg_ctx *ctx, void *state, int i, const cl_msg *m);
/* The worker side of on_message: a rejoin, or a reply. */
void alg_ps_worker_model(alg_ctx *ctx, void *state, int i, const cl_msg *m);
void alg_ps_worker_describe_wait(const alg_ctx *ctx, const void *state, int i, char *buf,
                                 size_t size);

/* on_failure and on_timer of a protocol whose server only has to send a
 * worker declared back the current model (ps-async, delay-adaptive): it
 * waits for no worker. */
void alg_ps_rejoin_on_failure(alg_ctx *ctx, int peer, int failed);
void alg_ps_rejoin_on_timer(alg_ctx *ctx, void *state, int node, uint32_t tag);

/* The server's model, for metrics.csv. */
const double *alg_ps_eval_params(const alg_ctx *ctx);
/* applied, discarded, staleness_mean, staleness_max. */
int alg_ps_stats(const alg_ctx *ctx, const char **keys, double *values, int max);

#endif
