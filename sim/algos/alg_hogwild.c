/* alg_hogwild.c -- Hogwild! (Niu, Recht, Re, Wright, "HOGWILD!: a
 * lock-free approach to parallelizing stochastic gradient descent", NIPS
 * 2011): the k cores of one shared-memory machine run SGD on one shared
 * parameter vector without locks.  dtsim's nodes are the cores (their
 * speeds, slowdowns, stragglers and faults are the cluster's as for any
 * node; the network is not used: no message is ever sent).
 *
 * A core's step reads the shared parameters when it starts (its gradient
 * is taken on that copy, as in the paper's analysis, where the read
 * happens before the update) and writes its update when it ends.  The
 * update is the node's optimizer step (mdl_optim.h: momentum, weight
 * decay, schedule) applied to the copy it read, u = opt(x_read, g); its
 * support is the set of coordinates the step changes (u_j != x_read_j):
 * the nonzero features of a sparse batch for plain SGD without L2, every
 * coordinate once momentum or decay touch them all.  On each coordinate of
 * the support, the core's write lands as `write` says:
 *   "add"        the change u_j - x_read_j is added to the coordinate as
 *                it is now (an atomic fetch-and-add, the paper's model);
 *   "overwrite"  u_j is stored over whatever is there (a plain store: a
 *                change another core made since the read is lost).
 * A coordinate of the support that another core wrote after this core's
 * read is a conflict, counted per coordinate.  Where nobody wrote it in
 * between both modes store u_j itself, so one core (k = 1) is sequential
 * SGD bit for bit, and cores whose supports are disjoint give the same
 * parameters whatever the interleaving (both tested).  Write order at one
 * instant is the engine's (deterministic); a write is one event, the
 * memory system's own timing is not modelled (step_time covers it).
 *
 * Failures.  Nobody waits for anybody: a core that goes down loses its
 * step in progress (its update is never written) and, when it comes
 * back, reads the shared parameters afresh before its step restarts.  The
 * metrics evaluate the shared parameters.  algorithm_stats: the writes,
 * the coordinates written and conflicted, the coordinates with at least
 * one conflict and the most conflicts any coordinate had.
 */
#include "alg.h"

#include <stdlib.h>
#include <string.h>

enum { P_WRITE };
enum { WRITE_ADD, WRITE_OVERWRITE };

static const char *const writes[] = { "add", "overwrite", NULL };

static const alg_param_spec params[] = {
    { "write", ALG_PARAM_CHOICE, WRITE_ADD, 0, 1, writes,
      "how an update lands on a coordinate changed since its read: added, or "
      "stored over the change" },
    { NULL, 0, 0, 0, 0, NULL, NULL },
};

typedef struct hw_shared {
    double   *x;            /* the shared parameters (P) */
    double   *u;            /* the writing core's updated copy (P) */
    uint64_t *last_write;   /* per coordinate: number of its last write, 0 none */
    uint64_t *conflicts;    /* per coordinate */
    uint64_t  n_writes;     /* writes so far; a write's number is this after it */
    uint64_t  coords_written, coords_conflicted;
    int       ready;        /* x holds the initial parameters */
} hw_shared;

typedef struct hw_state {
    uint64_t read_at;       /* n_writes when the core last read */
} hw_state;

static int hw_shared_init(alg_ctx *ctx)
{
    hw_shared *sh = calloc(1, sizeof *sh);
    if (!sh)
        return -1;
    ctx->shared = sh;
    const size_t P = ctx->P ? ctx->P : 1;
    sh->x = malloc(P * sizeof *sh->x);
    sh->u = malloc(P * sizeof *sh->u);
    sh->last_write = calloc(P, sizeof *sh->last_write);
    sh->conflicts = calloc(P, sizeof *sh->conflicts);
    return sh->x && sh->u && sh->last_write && sh->conflicts ? 0 : -1;
}

static void hw_shared_fini(alg_ctx *ctx)
{
    hw_shared *sh = ctx->shared;
    if (!sh)
        return;
    free(sh->x);
    free(sh->u);
    free(sh->last_write);
    free(sh->conflicts);
    free(sh);
}

/* Before the first step: every core starts from the model's initial
 * parameters, node 0's. */
static hw_shared *ready(const alg_ctx *ctx)
{
    hw_shared *sh = ctx->shared;
    if (!sh->ready && ctx->P)
        memcpy(sh->x, alg_params_const(ctx, 0), ctx->P * sizeof(double));
    sh->ready = 1;
    return sh;
}

/* Core node reads the shared parameters into its own copy. */
static void read_shared(alg_ctx *ctx, hw_state *st, int node)
{
    hw_shared *sh = ready(ctx);
    if (ctx->P)
        memcpy(alg_params(ctx, node), sh->x, ctx->P * sizeof(double));
    st->read_at = sh->n_writes;
}

static void hw_on_start(alg_ctx *ctx, void *state, int node)
{
    read_shared(ctx, state, node);
    alg_start_step(ctx, node);
}

static void hw_on_step_done(alg_ctx *ctx, void *state, int node, const double *grad)
{
    hw_state *st = state;
    hw_shared *sh = ready(ctx);
    const double *r = alg_params_const(ctx, node);   /* what the core read */
    const int add = (int)ctx->param[P_WRITE] == WRITE_ADD;
    const uint64_t w = ++sh->n_writes;
    if (ctx->P) {
        memcpy(sh->u, r, ctx->P * sizeof(double));
        alg_sgd_apply(ctx, node, sh->u, grad, 1.0);
    }
    for (size_t j = 0; j < ctx->P; j++) {
        if (sh->u[j] == r[j])
            continue;   /* not in the update's support */
        sh->coords_written++;
        const int conflict = sh->last_write[j] > st->read_at;
        sh->last_write[j] = w;
        if (!conflict) {
            sh->x[j] = sh->u[j];   /* x_j is still what the core read */
            continue;
        }
        sh->conflicts[j]++;
        sh->coords_conflicted++;
        sh->x[j] = add ? sh->x[j] + (sh->u[j] - r[j]) : sh->u[j];
    }
    read_shared(ctx, st, node);
    alg_start_step(ctx, node);
}

static void hw_on_failure(alg_ctx *ctx, int peer, int failed)
{
    (void)ctx;   /* nobody waits for a core */
    (void)peer;
    (void)failed;
}

/* Back from a fault: a fresh read before the step restarts. */
static void hw_on_return(alg_ctx *ctx, void *state, int node)
{
    read_shared(ctx, state, node);
}

static const double *hw_eval_params(const alg_ctx *ctx)
{
    return ready(ctx)->x;
}

static int hw_stats(const alg_ctx *ctx, const char **keys, double *values, int max)
{
    const hw_shared *sh = ctx->shared;
    double touched = 0, most = 0;
    for (size_t j = 0; j < ctx->P; j++) {
        touched += sh->conflicts[j] > 0;
        most = (double)sh->conflicts[j] > most ? (double)sh->conflicts[j] : most;
    }
    const char *k[] = { "writes", "coordinates_written", "coordinates_conflicted",
                        "conflict_share", "coordinates_with_conflicts",
                        "most_conflicts_per_coordinate" };
    const double cw = (double)sh->coords_written;
    double v[] = { (double)sh->n_writes, cw, (double)sh->coords_conflicted,
                   cw > 0 ? (double)sh->coords_conflicted / cw : 0, touched, most };
    return alg_stats_copy(k, v, (int)(sizeof k / sizeof k[0]), keys, values, max);
}

const alg_type alg_hogwild = {
    .name = "hogwild",
    .summary = "lock-free asynchronous SGD of the cores of one shared-memory machine "
               "(Niu, Recht, Re, Wright 2011)",
    .state_size = sizeof(hw_state),
    .eval_params = hw_eval_params,
    .params = params,
    .shared_init = hw_shared_init,
    .shared_fini = hw_shared_fini,
    .on_start = hw_on_start,
    .on_step_done = hw_on_step_done,
    .on_failure = hw_on_failure,
    .on_return = hw_on_return,
    .stats = hw_stats,
};
