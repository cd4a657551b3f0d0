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
 *
 * When a node fails: a neighbour declared failed (alg_is_failed) is
 * neither waited for nor sent to, and its weight moves to the node's own
 * (W on the live nodes stays symmetric and doubly stochastic, so with lr 0
 * the live sum is preserved); declared back, it rejoins at the round after
 * the furthest any live node has begun (docs/algorithms.md).
 *
 * Progressive freezing (the freeze section): a node's stage is that of its
 * own round (alg_freeze_round at the round's start), so the round-k models
 * a node mixes were all sent at round k's stage; a message costs the
 * trainable suffix and the mix and update run over it only, every node's
 * frozen layers staying its own, bit for bit (alg_mix_apply).
 */
#include "alg_nbr.h"

#include <assert.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { P_SCHEDULE, P_SCHEDULE_FILE };
enum { TAG_DECLARED = 1 };

static const alg_param_spec params[] = {
    { "schedule", ALG_PARAM_CHOICE, ALG_NBR_STATIC, 0, 0, alg_nbr_schedule_names,
      "the graph of each round" },
    { "schedule_file", ALG_PARAM_PATH, 0, 0, 0, NULL,
      "with schedule file: lines \"round u v\", relative to the scenario" },
    { NULL, 0, 0, 0, 0, NULL, NULL },
};

typedef struct dp_state {
    /* first: test_exact_mix reads whether it keeps */
    alg_mbox      mbox;     /* per round: the neighbour models received (kept) */
    uint64_t      round;
    cl_buf       *own;      /* x_i^k, also what was sent */
    const double *grad;     /* the finished step's gradient, or NULL */
    /* The last mix may still read its round's slot (UINT64_MAX: none) and
     * the own buffer of that round (or NULL): released once it is final. */
    uint64_t      mixed;
    cl_buf       *mixed_own;
} dp_state;
/* two cache lines (the runner aligns the states to 64 bytes): the
 * mailbox's two inline slots in line 0, its header and the rest in line 1,
 * so that a message or a step's end touches two lines of its node's state */
_Static_assert(offsetof(dp_state, mbox) == 0 && sizeof(dp_state) == 128,
               "dp_state: the mailbox first, two lines");

static alg_nbr *nbr_of(const alg_ctx *ctx) { return ctx->shared; }

static int degree(alg_ctx *ctx, uint64_t r, int i)
{
    return alg_nbr_row_of(nbr_of(ctx), r, i).deg;
}

/* Neighbour models node i still waits for in its round. */
static int missing(alg_ctx *ctx, const dp_state *st, int i)
{
    return alg_nbr_missing(ctx, nbr_of(ctx), &st->mbox, st->round, i);
}

/* Sends x_i^k to the round's neighbours not excluded. */
static void send_own(alg_ctx *ctx, dp_state *st, int i)
{
    alg_nbr_send(ctx, nbr_of(ctx), i, st->round, 0, st->own);
}

/* next: x_i^k already copied into a buffer, or NULL to take a snapshot. */
static void start_round(alg_ctx *ctx, dp_state *st, int i, cl_buf *next)
{
    alg_freeze_round(ctx, i, st->round);   /* nothing without a freeze section */
    st->own = next ? next : alg_snapshot(ctx, i);
    send_own(ctx, st, i);
    st->grad = NULL;
    alg_start_step(ctx, i);
}

/* Releases what the last mix read; only once it is final (its step's
 * gradient is in, or alg_params_const returned). */
static void release_mixed(alg_ctx *ctx, dp_state *st)
{
    if (st->mixed != UINT64_MAX)
        alg_mbox_release(&st->mbox, alg_mbox_slot_of(&st->mbox, st->mixed));
    st->mixed = UINT64_MAX;
    if (st->mixed_own)
        alg_buf_put(ctx, st->mixed_own);
    st->mixed_own = NULL;
}

/* The mix: x_i <- sum_j W_ij x_j over the models that came (in arrival
 * order), W_ii plus the weight of every excluded neighbour whose model did
 * not come on x_i itself (the failed neighbour's weight moves to the
 * node's own), then the update with the gradient, in one pass
 * (alg_mix_apply).  x_i^k is read from what was sent (the parameters
 * themselves since the last mix moved them there, unless a rejoin wrote
 * them since), and x_i^{k+1} is written once, into the buffer that is
 * sent next and that stays x_i (a moving mix): into x_i^k's own buffer
 * when no one else holds it any more (every neighbour has mixed it), else
 * into a fresh one, x_i^k's being released once the mix is final.  With
 * threads the pass runs in the next step's job, so the slot and own stay
 * held until then. */
static void try_finish(alg_ctx *ctx, dp_state *st, int i)
{
    if (!st->grad || missing(ctx, st, i) > 0)
        return;
    release_mixed(ctx, st);
    alg_mbox_slot *s = alg_mbox_slot_of(&st->mbox, st->round);
    double self_w = alg_nbr_self_weight(nbr_of(ctx), s, st->round, i);
    cl_buf *own = st->own, *next = own;
    st->own = NULL;
    if (own->refs > 1) {
        next = alg_buf_get(ctx);
        st->mixed_own = own;
    }
    alg_mbox_mix(ctx, &st->mbox, s, i, self_w, own->data, st->grad, 1.0, next->data, 1);
    if (st->mbox.ctx)   /* keeping: the mix may still read s */
        st->mixed = st->round;
    if (!alg_mix_deferred(ctx))   /* final: what it read goes back to the pool now */
        release_mixed(ctx, st);
    st->round++;
    start_round(ctx, st, i, next);
}

static int dp_check(const alg_ctx *ctx, char *err, size_t size)
{
    return alg_nbr_check(ctx, "dpsgd", (int)ctx->param[P_SCHEDULE], ctx->path[P_SCHEDULE_FILE],
                         err, size);
}

/* ctx->shared: the rounds' graphs with the membership the failure
 * detector gives (the same view for every node). */
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
    st->mixed = UINT64_MAX;
    /* with threads the mix runs in the next step's job and reads the kept
     * neighbour buffers there; on one thread too where the mix is one fused
     * loop (it reads each model once); else the models are summed as they
     * arrive, while still in cache (the same bits); the timing-only model
     * (P 0) has nothing to keep or sum: its mailbox only counts senders,
     * with no block of references and weights to write at each arrival */
    st->mbox.ctx = alg_mix_keeps(ctx) && ctx->P > 0 ? ctx : NULL;
    return alg_mbox_init(&st->mbox, ctx->P);
}

static void dp_fini(alg_ctx *ctx, void *state, int node)
{
    dp_state *st = state;
    (void)alg_params_const(ctx, node);   /* the last mix is final */
    release_mixed(ctx, st);
    if (st->own) {
        alg_params_own(ctx, node);   /* x_i may live in it */
        alg_buf_put(ctx, st->own);
    }
    alg_mbox_fini(&st->mbox);
}

static void dp_on_start(alg_ctx *ctx, void *state, int node)
{
    start_round(ctx, state, node, NULL);
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
    /* a round already mixed without its sender (excluded), a resend of one
     * mixed with it, or a round from before this node itself rejoined */
    if (m->round < st->round)
        return;
    if (!alg_mbox_add(&st->mbox, m->round, m->from,
                      alg_nbr_weight(nbr_of(ctx), m->round, i, m->from), m->payload))
        return;   /* a resend after its sender came back */
    if (m->round == st->round)
        try_finish(ctx, st, i);
}

/* The detector declared peer failed (its neighbours stop waiting for it
 * and sending to it) or back: it rejoins at the round after the furthest
 * any live node has begun, so that every pair of live neighbours agrees on
 * the rounds in which they mix (no live node has finished that round nor
 * sent its model of it). */
static void dp_on_failure(alg_ctx *ctx, int peer, int failed)
{
    uint64_t r = 0;
    for (int i = 0; !failed && i < ctx->n; i++) {
        const dp_state *st = alg_state(ctx, i);
        if (i != peer && !alg_is_failed(ctx, i) && st->round > r)
            r = st->round;
    }
    alg_nbr_declared(ctx, nbr_of(ctx), peer, failed, r, TAG_DECLARED);
}

/* Back up: declared and back, it starts its join round afresh on its
 * parameters as faults.rejoin left them; back before it was declared, it
 * is still a member of its round and sends its model of it again (what it
 * sent as it went down may be lost; receivers drop copies). */
static void dp_on_return(alg_ctx *ctx, void *state, int i)
{
    dp_state *st = state;
    uint64_t join = alg_nbr_join(nbr_of(ctx), i);
    (void)alg_params_const(ctx, i);   /* the last mix is final */
    release_mixed(ctx, st);
    if (st->round < join) {
        alg_abort_step(ctx, i);
        for (int k = 0; k < st->mbox.n; k++)
            if (st->mbox.slots[k].round != UINT64_MAX)
                alg_mbox_release(&st->mbox, &st->mbox.slots[k]);
        if (st->own) {
            alg_params_own(ctx, i);   /* x_i may live in it */
            alg_buf_put(ctx, st->own);
        }
        st->round = join;
        start_round(ctx, st, i, NULL);
    } else if (st->own) {
        /* faults.rejoin may have written x_i: the mix reads own, as sent */
        send_own(ctx, st, i);
        try_finish(ctx, st, i);   /* a neighbour declared failed while it was down */
    }
}

static void dp_on_timer(alg_ctx *ctx, void *state, int i, uint32_t tag)
{
    (void)tag;
    dp_state *st = state;
    if (st->own)
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
                 missing((alg_ctx *)ctx, st, i), deg, (unsigned long long)st->round);
    }
}

const alg_type alg_dpsgd = {
    .name = "dpsgd",
    .needs = ALG_CAN_FREEZE,
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
    .on_timer = dp_on_timer,
    .on_failure = dp_on_failure,
    .on_return = dp_on_return,
    .describe_wait = dp_describe_wait,
    .fini = dp_fini,
};
