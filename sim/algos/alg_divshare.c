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
 * the paper's uniform peers), takes every fragment's values now (after the
 * local steps), shuffles the Omega J (peer, fragment) pairs and makes them
 * its send queue, replacing the previous round's pairs not sent yet; (2)
 * averages per coordinate: x[c] <- (x[c] + sum of the received values of
 * c) / (1 + their count), over the fragments received since its previous
 * round, the latest one per (sender, fragment) (a newer copy replaces an
 * older one, as the authors' receive queue does); (3) starts the next
 * round at once.  Nobody ever waits for a message.
 *
 * The send queue (the authors' sender thread, empty_sending_queue on, as
 * in their configuration): the node hands its queue's pairs to the network
 * one at a time, the next one when the previous has left its uplink
 * (alg_uplink_idle_s, a timer), while it goes on computing; at a round the
 * pairs not handed over yet are dropped (fragments_not_sent) and the new
 * round's replace them, so what a slow uplink carries is always its
 * latest round's fragments.  The one in transfer finishes.
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

enum { P_FRAGMENTS, P_FANOUT, P_LOCAL_STEPS };
enum { TAG_FRAGMENT = 1 };   /* tag = TAG_FRAGMENT + fragment id */
enum { TIMER_SEND = 1 };     /* the uplink is free: hand over the next pair */

static const alg_param_spec params[] = {
    { "fragments", ALG_PARAM_INT, 4, 1, 1e6, NULL,
      "omega: fragments each model is split into (at most the parameters)" },
    { "fanout", ALG_PARAM_INT, 2, 1, 1e9, NULL,
      "j: neighbours each fragment is sent to, drawn per fragment and round" },
    { "local_steps", ALG_PARAM_INT, 1, 1, 1e9, NULL, "local steps between two rounds" },
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
    int     *pairs;     /* the send queue: Omega J of peer * Omega + fragment, shuffled */
    int      n_pairs, next_pair;   /* queued, and the next one to hand over */
    uint64_t pairs_round;          /* the round the queue's fragments are of */
    int      timer_armed;          /* a TIMER_SEND is pending */
    int     *cand;      /* the node's live neighbours, for the draw */
    int     *chosen;    /* J */
    cl_buf **frag_buf;  /* Omega: the queue's fragment buffers */
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

static void drop_fragments(alg_ctx *ctx, ds_state *st);

static void ds_fini(alg_ctx *ctx, void *state, int i)
{
    (void)i;
    ds_state *st = state;
    drop_held(ctx, st);
    drop_fragments(ctx, st);
    free(st->held);
    free(st->pairs);
    free(st->cand);
    free(st->chosen);
    free(st->frag_buf);
    free(st->acc);
    free(st->cnt);
}

/* The queue's fragment buffers are released. */
static void drop_fragments(alg_ctx *ctx, ds_state *st)
{
    const ds_shared *sh = ctx->shared;
    for (int k = 0; k < sh->omega; k++)
        if (st->frag_buf[k]) {
            alg_buf_put(ctx, st->frag_buf[k]);
            st->frag_buf[k] = NULL;
        }
}

/* Hands the queue's next pair to the network and arms the timer for the
 * instant it has left the uplink. */
static void send_next(alg_ctx *ctx, ds_state *st, int i)
{
    const ds_shared *sh = ctx->shared;
    if (st->next_pair >= st->n_pairs)
        return;
    int to = st->pairs[st->next_pair] / sh->omega, k = st->pairs[st->next_pair] % sh->omega;
    st->next_pair++;
    alg_send(ctx, i, to, TAG_FRAGMENT + (uint32_t)k, st->pairs_round, st->frag_buf[k],
             alg_part_bytes(ctx, frag_len(sh, k), 1.0 / sh->omega));
    st->sent++;
    alg_set_timer(ctx, i, alg_uplink_idle_s(ctx, i), TIMER_SEND);
    st->timer_armed = 1;
}

/* (1): the round's (peer, fragment) pairs, shuffled, replace the queue. */
static void queue_round(alg_ctx *ctx, ds_state *st, int i)
{
    const ds_shared *sh = ctx->shared;
    const topo_graph *g = ctx->g;
    st->not_sent += (uint64_t)(st->n_pairs - st->next_pair);
    drop_fragments(ctx, st);
    st->n_pairs = st->next_pair = 0;
    st->pairs_round = st->round;
    gsl_rng *r = alg_rng(ctx, i);
    int live = 0;
    for (size_t e = g->off[i]; e < g->off[i + 1]; e++)
        if (!alg_is_failed(ctx, g->nbr[e]))
            st->cand[live++] = g->nbr[e];
    int J = sh->fanout < live ? sh->fanout : live;
    if (J == 0)
        return;
    for (int k = 0; k < sh->omega; k++) {
        gsl_ran_choose(r, st->chosen, (size_t)J, st->cand, (size_t)live, sizeof(int));
        for (int q = 0; q < J; q++)
            st->pairs[st->n_pairs++] = st->chosen[q] * sh->omega + k;
    }
    gsl_ran_shuffle(r, st->pairs, (size_t)st->n_pairs, sizeof(int));
    const double *x = alg_params_const(ctx, i);
    for (int k = 0; k < sh->omega; k++) {
        size_t len = frag_len(sh, k);
        cl_buf *b = alg_buf_get_len(ctx, len);
        const size_t *idx = sh->perm + sh->off[k];
        for (size_t t = 0; t < len; t++)
            b->data[t] = x[idx[t]];
        st->frag_buf[k] = b;
    }
    if (!st->timer_armed)   /* the uplink is free: the sender starts at once */
        send_next(ctx, st, i);
}

static void ds_on_timer(alg_ctx *ctx, void *state, int i, uint32_t tag)
{
    (void)tag;
    ds_state *st = state;
    st->timer_armed = 0;
    send_next(ctx, st, i);
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
    queue_round(ctx, st, i);
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

/* Back up: the fragments it held predate its model; it lost its timer
 * (a down node has none) and what it was sending. */
static void ds_on_return(alg_ctx *ctx, void *state, int i)
{
    ds_state *st = state;
    st->dropped += (uint64_t)st->n_held;
    drop_held(ctx, st);
    st->timer_armed = 0;
    send_next(ctx, st, i);
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
    return alg_stats_copy(k, v, (int)(sizeof k / sizeof k[0]), keys, values, max);
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
    .on_timer = ds_on_timer,
    .on_failure = ds_on_failure,
    .on_return = ds_on_return,
    .stats = ds_stats,
    .fini = ds_fini,
};
