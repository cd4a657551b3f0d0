/* alg_dpsgd.c -- D-PSGD, decentralized parallel SGD (Lian et al., "Can
 * Decentralized Algorithms Outperform Centralized Algorithms?", NeurIPS
 * 2017): x_i^{k+1} = sum_j W_ij x_j^k - lr * g_i(x_i^k).
 *
 * Timing: at the start of round k a node snapshots x_i^k, sends it to every
 * neighbour (its uplink serialises the copies one after another) and starts
 * computing its gradient on x_i^k at the same time.  The round ends when the
 * gradient is done and the round-k snapshots of all neighbours have arrived;
 * then the node mixes, applies the gradient and starts round k+1 at once.
 * W is the topology's mixing matrix (Metropolis-Hastings by default).
 *
 * `schedule` gives D-PSGD the time-varying graphs SGP takes, undirected
 * (D-PSGD exchanges both ways and its analysis needs a symmetric, doubly
 * stochastic W): "static" (the topology, the default), "random_matching",
 * "one_peer_exponential" (round k: i ~ i +- 2^(k mod ceil(log2 n))) or
 * "file" (`schedule_file`, rounds of undirected edges, cycled); round k's
 * W^k is Metropolis-Hastings on round k's graph (alg_nbr.c), which for a
 * matching is the schedule's own 1/2.  The semantics stay synchronous: in
 * round k a node sends to and waits for its round-k neighbours only, so a
 * node may run several rounds ahead of one it is not paired with; the
 * mailbox keeps a slot per round (two on a static graph, where neighbours
 * are at most one round apart).
 */
#include "alg_nbr.h"

#include <assert.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <gsl/gsl_cblas.h>

enum { P_SCHEDULE, P_SCHEDULE_FILE };

static const alg_param_spec params[] = {
    { "schedule", ALG_PARAM_CHOICE, ALG_NBR_STATIC, 0, 0, alg_nbr_schedule_names,
      "the graph of each round" },
    { "schedule_file", ALG_PARAM_PATH, 0, 0, 0, NULL,
      "with schedule file: lines \"round u v\", relative to the scenario" },
    { NULL, 0, 0, 0, 0, NULL, NULL },
};

typedef struct dp_state {
    alg_mbox      mbox;     /* per round: sum of W_ij x_j, neighbour models received */
    uint64_t      round;
    cl_buf       *own;      /* x_i^k, also what was sent */
    const double *grad;     /* the finished step's gradient, or NULL */
} dp_state;

static int degree(alg_ctx *ctx, uint64_t r, int i)
{
    return alg_nbr_row_of(ctx->shared, r, i).deg;
}

static void start_round(alg_ctx *ctx, dp_state *st, int i)
{
    alg_nbr_row row = alg_nbr_row_of(ctx->shared, st->round, i);
    st->own = alg_snapshot(ctx, i);
    double bytes = alg_param_bytes(ctx, ctx->P);
    for (int k = 0; k < row.deg; k++)
        alg_send(ctx, i, row.nbr[k], 0, st->round, st->own, bytes);
    st->grad = NULL;
    alg_start_step(ctx, i);
}

static void try_finish(alg_ctx *ctx, dp_state *st, int i)
{
    alg_nbr_row row = alg_nbr_row_of(ctx->shared, st->round, i);
    if (!st->grad || alg_mbox_count(&st->mbox, st->round) < row.deg)
        return;
    alg_mbox_slot *s = alg_mbox_slot_of(&st->mbox, st->round);
    double *x = alg_params(ctx, i);
    int P = (int)ctx->P;
    memcpy(x, s->acc, ctx->P * sizeof(double));
    cblas_daxpy(P, row.self_w, st->own->data, 1, x, 1);
    alg_sgd_apply(ctx, i, x, st->grad, 1.0);
    alg_mbox_release(&st->mbox, s);
    alg_buf_put(ctx, st->own);
    st->own = NULL;
    st->round++;
    start_round(ctx, st, i);
}

static int dp_check(const alg_ctx *ctx, char *err, size_t size)
{
    return alg_nbr_check(ctx, "dpsgd", (int)ctx->param[P_SCHEDULE], ctx->path[P_SCHEDULE_FILE],
                         err, size);
}

static int dp_shared_init(alg_ctx *ctx)
{
    int schedule = (int)ctx->param[P_SCHEDULE];
    /* only a random schedule draws: the static graph creates no stream */
    uint64_t seed = schedule == ALG_NBR_MATCHING ? gsl_rng_get(alg_rng(ctx, 0)) : 0;
    char err[512];
    ctx->shared = alg_nbr_create(ctx, schedule, ctx->path[P_SCHEDULE_FILE], seed, err,
                                 sizeof err);
    return ctx->shared ? 0 : -1;
}

static void dp_shared_fini(alg_ctx *ctx)
{
    alg_nbr_destroy(ctx->shared);
}

static int dp_init(alg_ctx *ctx, void *state, int node)
{
    (void)node;
    dp_state *st = state;
    return alg_mbox_init(&st->mbox, ctx->P);
}

static void dp_fini(alg_ctx *ctx, void *state, int node)
{
    (void)node;
    dp_state *st = state;
    if (st->own)
        alg_buf_put(ctx, st->own);
    alg_mbox_fini(&st->mbox);
}

static void dp_on_start(alg_ctx *ctx, void *state, int node)
{
    start_round(ctx, state, node);
}

static void dp_on_step_done(alg_ctx *ctx, void *state, int i, const double *grad)
{
    dp_state *st = state;
    st->grad = grad;   /* valid until this node's next step starts */
    try_finish(ctx, st, i);
}

static void dp_on_message(alg_ctx *ctx, void *state, int i, const cl_msg *m)
{
    dp_state *st = state;
    assert(m->round >= st->round);
    alg_mbox_slot *s = alg_mbox_slot_of(&st->mbox, m->round);
    cblas_daxpy((int)ctx->P, alg_nbr_weight(ctx->shared, m->round, i, m->from),
                m->payload->data, 1, s->acc, 1);
    s->count++;
    if (m->round == st->round)
        try_finish(ctx, st, i);
}

static void dp_describe_wait(const alg_ctx *ctx, const void *state, int i,
                             char *buf, size_t size)
{
    const dp_state *st = state;
    if (!st->grad) {
        snprintf(buf, size, "its step of round %llu", (unsigned long long)st->round);
    } else {
        int deg = degree((alg_ctx *)ctx, st->round, i);
        snprintf(buf, size, "%d of %d neighbour models of round %llu",
                 deg - alg_mbox_count(&st->mbox, st->round), deg,
                 (unsigned long long)st->round);
    }
}

const alg_type alg_dpsgd = {
    .name = "dpsgd",
    .summary = "synchronous averaging with the topology's neighbours (Lian et al. 2017)",
    .state_size = sizeof(dp_state),
    .params = params,
    .check = dp_check,
    .shared_init = dp_shared_init,
    .shared_fini = dp_shared_fini,
    .init = dp_init,
    .on_start = dp_on_start,
    .on_step_done = dp_on_step_done,
    .on_message = dp_on_message,
    .describe_wait = dp_describe_wait,
    .fini = dp_fini,
};
