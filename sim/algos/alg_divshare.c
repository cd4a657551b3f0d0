/* alg_divshare.c -- DivShare (Biswas, Kermarrec, Marouani, Pires, Sharma,
 * de Vos, "Boosting Asynchronous Decentralized Learning with
 * Model Fragmentation", WWW 2025; the authors' code: sacs-epfl/divshare,
 * async-dp/src/asyncNodes/node/DivShare.py and sharing/DivShareSharing.py):
 * every node splits its model into Omega fragments and sends each fragment
 * to J peers of its own, drawn per fragment, while it goes on computing;
 * a receiver averages every coordinate of its model with the values of
 * that coordinate it received.
 *
 * Fragments.  The parameters are split into Omega fixed index sets, the
 * same at every node: a permutation of 0 .. P-1 derived from the scenario
 * seed (the authors draw one permutation per tensor from the data set's
 * seed, common to all nodes; dtsim sees no tensors and permutes the flat
 * vector), fragment k holding positions k m .. k m + m - 1 of it with m =
 * floor(P / Omega), the last one the rest.  A fragment message carries
 * only its values, in a buffer of its own length (alg_buf_get_len); the
 * index set is known to every node, so the message's fragment id (tag =
 * 1 + k) says which coordinates it holds, and its size on the wire is the
 * fragment's parameters times the bytes per parameter (a 1/Omega share of
 * the whole-model message with the timing-only model).
 *
 * A round (the authors' main loop).  `local_steps` SGD steps back to back
 * (each on the parameters at its start); then the node (1) draws, for
 * every fragment, J distinct neighbours uniformly among those not declared
 * failed (all of them when fewer are live; use the complete topology for
 * the paper's uniform peers), shuffles the Omega J (peer, fragment) pairs
 * and hands them to the network in that order, each fragment's values
 * taken now, after the local steps; (2) averages per coordinate:
 * x[c] <- (x[c] + sum of the received values of c) / (1 + their count),
 * over the fragments received since its previous round, the latest one per
 * (sender, fragment) (a newer copy replaces an older one, as the authors'
 * receive queue does); (3) starts the next round at once.  Nobody ever
 * waits for a message: sending overlaps computation, the network's uplink
 * serialises a node's fragments.
 *
 * The send queue (a deliberate deviation).  The authors' sender thread
 * empties its queue at each round (empty_sending_queue), so the fragments
 * of a round that have not left by the next one are dropped and the new
 * round's replace them.  dtsim's network cannot take back a message handed
 * to it; with `backlog` "bound" (the default) a node instead hands over
 * only as many of the new round's pairs (first ones in the shuffled order)
 * as bring its uplink backlog (alg_uplink_queued) back to Omega J, so the
 * backlog of a node on a slow link never exceeds one round's fragments,
 * as in the authors' code, but what leaves next is the older round's
 * fragments rather than the newer's; with "grow" every pair is sent and a
 * slow link's backlog grows without bound (the runner's message bound
 * stops such a run).  The pairs not handed over are counted
 * (fragments_not_sent).
 *
 * Failures.  Nobody waits, so a failure costs only the fragments sent to
 * or by the failed node: peers are drawn among the neighbours not declared
 * failed, a fragment to a node that is down is lost by the network, and a
 * node that comes back drops the fragments it held (they predate the model
 * faults.rejoin gave it) and goes on with its round.
 */
#include "alg.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <gsl/gsl_randist.h>

enum { P_FRAGMENTS, P_FANOUT, P_LOCAL_STEPS, P_BACKLOG };
enum { BACKLOG_BOUND, BACKLOG_GROW };
enum { TAG_FRAGMENT = 1 };   /* tag = TAG_FRAGMENT + fragment id */

static const char *const backlog_names[] = { "bound", "grow", NULL };

static const alg_param_spec params[] = {
    { "fragments", ALG_PARAM_INT, 4, 1, 1e6, NULL,
      "omega: fragments each model is split into (at most the parameters)" },
    { "fanout", ALG_PARAM_INT, 2, 1, 1e9, NULL,
      "j: neighbours each fragment is sent to, drawn per fragment and round" },
    { "local_steps", ALG_PARAM_INT, 1, 1, 1e9, NULL, "local steps between two rounds" },
    { "backlog", ALG_PARAM_CHOICE, BACKLOG_BOUND, 0, 0, backlog_names,
      "bound: the uplink holds at most one round of fragments; grow: send every pair" },
    { NULL, 0, 0, 0, 0, NULL, NULL },
};

typedef struct ds_shared {
    size_t  *perm;      /* P: the coordinates, fragment by fragment */
    size_t  *off;       /* Omega + 1: fragment k is perm[off[k] .. off[k+1]) */
    int      omega, fanout;
    uint64_t failures;  /* declared failures, for algorithm_stats */
} ds_shared;

/* A fragment in hand: the latest one from `from` with id `frag`. */
typedef struct ds_held {
    int     from, frag;
    cl_buf *buf;
} ds_held;

typedef struct ds_state {
    uint64_t round;     /* rounds done */
    int      local;     /* steps done in this round */
    ds_held *held;
    int      n_held, cap_held;
    int     *pairs;     /* Omega J: peer * Omega + fragment, shuffled */
    int     *cand;      /* the node's live neighbours, for the draw */
    int     *chosen;    /* J */
    cl_buf **frag_buf;  /* Omega: this round's fragment buffers, lazily */
    double  *acc, *cnt; /* P: per-coordinate sums and counts */
    uint64_t sent, not_sent, received, replaced, averaged, dropped;
} ds_state;

static size_t frag_len(const ds_shared *sh, int k) { return sh->off[k + 1] - sh->off[k]; }

static int ds_check(const alg_ctx *ctx, char *err, size_t size)
{
    int omega = (int)ctx->param[P_FRAGMENTS], J = (int)ctx->param[P_FANOUT];
    if (ctx->n < 2) {
        snprintf(err, size, "divshare needs at least 2 nodes, got %d", ctx->n);
        return -1;
    }
    if (ctx->P > 0 && (size_t)omega > ctx->P) {
        snprintf(err, size, "divshare fragments %d exceeds the model's %zu parameters", omega,
                 ctx->P);
        return -1;
    }
    for (int i = 0; i < ctx->n; i++) {
        int deg = (int)(ctx->g->off[i + 1] - ctx->g->off[i]);
        if (J > deg) {
            snprintf(err, size, "divshare fanout %d needs every node to have at least %d "
                     "neighbours; node %d has %d (use a denser or the complete topology)",
                     J, J, i, deg);
            return -1;
        }
    }
    return 0;
}

static void ds_shared_fini(alg_ctx *ctx)
{
    ds_shared *sh = ctx->shared;
    if (!sh)
        return;
    free(sh->perm);
    free(sh->off);
    free(sh);
    ctx->shared = NULL;
}

/* The fragments' index sets: a Fisher-Yates permutation of the
 * coordinates whose draws are hashes of (seed, position), so that every
 * node holds the same sets without a message. */
static int ds_shared_init(alg_ctx *ctx)
{
    ds_shared *sh = calloc(1, sizeof *sh);
    if (!sh)
        return -1;
    ctx->shared = sh;
    size_t P = ctx->P;
    sh->omega = (int)ctx->param[P_FRAGMENTS];
    sh->fanout = (int)ctx->param[P_FANOUT];
    sh->perm = malloc((P ? P : 1) * sizeof *sh->perm);
    sh->off = malloc((size_t)(sh->omega + 1) * sizeof *sh->off);
    if (!sh->perm || !sh->off)
        return -1;
    for (size_t c = 0; c < P; c++)
        sh->perm[c] = c;
    uint64_t base = alg_hash64(ctx->seed ^ 0x6469767368617265ULL);   /* "divshare" */
    for (size_t t = P; t > 1; t--) {
        size_t j = (size_t)(alg_hash64(base + t) % t);
        size_t tmp = sh->perm[t - 1];
        sh->perm[t - 1] = sh->perm[j];
        sh->perm[j] = tmp;
    }
    size_t m = P / (size_t)sh->omega;
    for (int k = 0; k < sh->omega; k++)
        sh->off[k] = (size_t)k * m;
    sh->off[sh->omega] = P;
    return 0;
}

static int ds_init(alg_ctx *ctx, void *state, int i)
{
    ds_state *st = state;
    const ds_shared *sh = ctx->shared;
    size_t P = ctx->P ? ctx->P : 1;
    int deg = (int)(ctx->g->off[i + 1] - ctx->g->off[i]);
    st->pairs = malloc((size_t)sh->omega * (size_t)sh->fanout * sizeof *st->pairs);
    st->cand = malloc((size_t)(deg ? deg : 1) * sizeof *st->cand);
    st->chosen = malloc((size_t)sh->fanout * sizeof *st->chosen);
    st->frag_buf = calloc((size_t)sh->omega, sizeof *st->frag_buf);
    st->acc = malloc(P * sizeof *st->acc);
    st->cnt = malloc(P * sizeof *st->cnt);
    return st->pairs && st->cand && st->chosen && st->frag_buf && st->acc && st->cnt ? 0 : -1;
}

static void drop_held(alg_ctx *ctx, ds_state *st)
{
    for (int h = 0; h < st->n_held; h++)
        alg_buf_put(ctx, st->held[h].buf);
    st->n_held = 0;
}

static void ds_fini(alg_ctx *ctx, void *state, int i)
{
    (void)i;
    ds_state *st = state;
    drop_held(ctx, st);
    free(st->held);
    free(st->pairs);
    free(st->cand);
    free(st->chosen);
    free(st->frag_buf);
    free(st->acc);
    free(st->cnt);
}

/* Fragment k of node i's parameters as they are now, in a buffer of its
 * own length (made once per round, shared by the fragment's J messages). */
static cl_buf *fragment(alg_ctx *ctx, ds_state *st, int i, int k)
{
    const ds_shared *sh = ctx->shared;
    if (!st->frag_buf[k]) {
        size_t len = frag_len(sh, k);
        cl_buf *b = alg_buf_get_len(ctx, len);
        const double *x = alg_params_const(ctx, i);
        const size_t *idx = sh->perm + sh->off[k];
        for (size_t t = 0; t < len; t++)
            b->data[t] = x[idx[t]];
        st->frag_buf[k] = b;
    }
    return st->frag_buf[k];
}

/* (1): the round's (peer, fragment) pairs, shuffled, handed to the network. */
static void send_round(alg_ctx *ctx, ds_state *st, int i)
{
    const ds_shared *sh = ctx->shared;
    const topo_graph *g = ctx->g;
    gsl_rng *r = alg_rng(ctx, i);
    int live = 0;
    for (size_t e = g->off[i]; e < g->off[i + 1]; e++)
        if (!alg_is_failed(ctx, g->nbr[e]))
            st->cand[live++] = g->nbr[e];
    int J = sh->fanout < live ? sh->fanout : live, n_pairs = 0;
    if (J == 0)
        return;
    for (int k = 0; k < sh->omega; k++) {
        gsl_ran_choose(r, st->chosen, (size_t)J, st->cand, (size_t)live, sizeof(int));
        for (int q = 0; q < J; q++)
            st->pairs[n_pairs++] = st->chosen[q] * sh->omega + k;
    }
    gsl_ran_shuffle(r, st->pairs, (size_t)n_pairs, sizeof(int));
    int allowed = n_pairs;
    if ((int)ctx->param[P_BACKLOG] == BACKLOG_BOUND) {
        uint64_t queued = alg_uplink_queued(ctx, i);
        allowed = queued >= (uint64_t)n_pairs ? 0 : n_pairs - (int)queued;
    }
    double share = 1.0 / sh->omega;
    for (int p = 0; p < allowed; p++) {
        int to = st->pairs[p] / sh->omega, k = st->pairs[p] % sh->omega;
        alg_send(ctx, i, to, TAG_FRAGMENT + (uint32_t)k, st->round, fragment(ctx, st, i, k),
                 alg_part_bytes(ctx, frag_len(sh, k), share));
    }
    st->sent += (uint64_t)allowed;
    st->not_sent += (uint64_t)(n_pairs - allowed);
    for (int k = 0; k < sh->omega; k++)
        if (st->frag_buf[k]) {
            alg_buf_put(ctx, st->frag_buf[k]);
            st->frag_buf[k] = NULL;
        }
}

/* (2): every coordinate averaged with the values of it in hand. */
static void average(alg_ctx *ctx, ds_state *st, int i)
{
    const ds_shared *sh = ctx->shared;
    if (st->n_held == 0)
        return;
    size_t P = ctx->P;
    memset(st->acc, 0, P * sizeof *st->acc);
    memset(st->cnt, 0, P * sizeof *st->cnt);
    for (int h = 0; h < st->n_held; h++) {
        const ds_held *f = &st->held[h];
        const size_t *idx = sh->perm + sh->off[f->frag];
        size_t len = frag_len(sh, f->frag);
        for (size_t t = 0; t < len; t++) {
            st->acc[idx[t]] += f->buf->data[t];
            st->cnt[idx[t]] += 1.0;
        }
    }
    double *x = alg_params(ctx, i);
    for (size_t c = 0; c < P; c++)
        if (st->cnt[c] > 0)
            x[c] = (x[c] + st->acc[c]) / (1.0 + st->cnt[c]);
    st->averaged += (uint64_t)st->n_held;
    drop_held(ctx, st);
}

static void ds_on_step_done(alg_ctx *ctx, void *state, int i, const double *grad)
{
    ds_state *st = state;
    alg_sgd_apply(ctx, i, alg_params(ctx, i), grad, 1.0);
    if (++st->local < (int)ctx->param[P_LOCAL_STEPS]) {
        alg_start_step(ctx, i);
        return;
    }
    send_round(ctx, st, i);
    average(ctx, st, i);
    st->round++;
    st->local = 0;
    alg_start_step(ctx, i);
}

static void ds_on_message(alg_ctx *ctx, void *state, int i, const cl_msg *m)
{
    (void)i;
    ds_state *st = state;
    int frag = (int)(m->tag - TAG_FRAGMENT);
    st->received++;
    cl_buf_ref(m->payload);
    for (int h = 0; h < st->n_held; h++)
        if (st->held[h].from == m->from && st->held[h].frag == frag) {
            alg_buf_put(ctx, st->held[h].buf);   /* a newer copy replaces it */
            st->held[h].buf = m->payload;
            st->replaced++;
            return;
        }
    if (st->n_held == st->cap_held) {
        int cap = st->cap_held ? 2 * st->cap_held : 8;
        ds_held *grown = realloc(st->held, (size_t)cap * sizeof *grown);
        if (!grown)
            alg_out_of_memory();
        st->held = grown;
        st->cap_held = cap;
    }
    st->held[st->n_held++] = (ds_held){ m->from, frag, m->payload };
}

/* Nobody waits for a failed node: the draws skip it (alg_is_failed). */
static void ds_on_failure(alg_ctx *ctx, int peer, int failed)
{
    (void)peer;
    ds_shared *sh = ctx->shared;
    sh->failures += (uint64_t)(failed != 0);
}

static void ds_on_return(alg_ctx *ctx, void *state, int i)
{
    (void)i;
    ds_state *st = state;
    st->dropped += (uint64_t)st->n_held;
    drop_held(ctx, st);
}

static int ds_stats(const alg_ctx *ctx, const char **keys, double *values, int max)
{
    double rmin = 0, rmax = 0, sent = 0, not_sent = 0, recv = 0, repl = 0, avg = 0, drop = 0;
    for (int i = 0; i < ctx->n; i++) {
        const ds_state *st = alg_state(ctx, i);
        double r = (double)st->round;
        if (i == 0 || r < rmin)
            rmin = r;
        if (i == 0 || r > rmax)
            rmax = r;
        sent += (double)st->sent;
        not_sent += (double)st->not_sent;
        recv += (double)st->received;
        repl += (double)st->replaced;
        avg += (double)st->averaged;
        drop += (double)st->dropped;
    }
    const ds_shared *sh = ctx->shared;
    const char *k[] = { "rounds_min", "rounds_max", "fragments_sent", "fragments_not_sent",
                        "fragments_received", "fragments_replaced", "fragments_averaged",
                        "fragments_dropped", "failures_declared" };
    double v[] = { rmin, rmax, sent, not_sent, recv, repl, avg, drop, (double)sh->failures };
    int m = (int)(sizeof k / sizeof k[0]);
    if (m > max)
        m = max;
    for (int j = 0; j < m; j++) {
        keys[j] = k[j];
        values[j] = v[j];
    }
    return m;
}

const alg_type alg_divshare = {
    .name = "divshare",
    .summary = "asynchronous rounds sending model fragments to random peers (Biswas et al. 2025)",
    .state_size = sizeof(ds_state),
    .params = params,
    .check = ds_check,
    .shared_init = ds_shared_init,
    .shared_fini = ds_shared_fini,
    .init = ds_init,
    .on_step_done = ds_on_step_done,
    .on_message = ds_on_message,
    .on_failure = ds_on_failure,
    .on_return = ds_on_return,
    .stats = ds_stats,
    .fini = ds_fini,
};
