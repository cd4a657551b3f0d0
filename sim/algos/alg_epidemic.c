/* alg_epidemic.c -- Epidemic Learning (de Vos, Farhadkhani, Guerraoui,
 * Kermarrec, Pires, Sharma, "Epidemic Learning: Boosting Decentralized
 * Learning with Randomized Communication", NeurIPS 2023): in round r every
 * node trains locally, sends its model to s peers, and averages its model
 * with the round-r models it received, x <- (x + sum) / (1 + count).
 *
 * Who sends to whom in round r.  EL-Oracle (`variant` "oracle", the
 * default): one random s-regular graph per round, so every node sends and
 * receives exactly s models.  As the authors' code does (decentralizepy's
 * PeerSamplerDynamic and their simulator both call networkx's
 * random_regular_graph(s, n, seed + round) and use each edge both ways),
 * the graph is undirected (n * s must be even) and drawn like networkx:
 * pair up the n * s stubs at random, keep the pairs that make no loop or
 * double edge, re-pair the rest while a valid pair remains, else start
 * again (O(n s^2) per round, s <= (n - 1) / 2); for s > (n - 1) / 2 the
 * complement is drawn instead.  EL-Local
 * (`variant` "local"): every node samples s distinct peers uniformly, from
 * all other nodes (`peers` "all", the paper's) or from its topology
 * neighbours (`peers` "neighbours", a dtsim extension), so receivers get a
 * varying number of models.  Both graphs are functions of (seed, round)
 * through alg_hash64, so every node agrees on them; a node knows how many
 * models its round brings as the authors' simulator does (it reads the
 * round's graph; their decentralizepy sends a model-less notice to every
 * node not chosen instead, which dtsim does not model).
 *
 * Timing (`rounds` "sync", the default: the paper's synchronous rounds, as
 * the authors' simulator runs them): a round is `local_steps` SGD steps
 * back to back; then the node sends a snapshot to its round's peers and
 * waits until every round-r model addressed to it has arrived, aggregates
 * them (in arrival order) and starts round r + 1.  Models of later rounds
 * that arrive early wait in per-round accumulators.  A slow node therefore
 * delays the nodes that expect its model.  `rounds` "async" is dtsim's
 * earlier variant: a node never waits; after sending it aggregates every
 * model received since its last aggregation, whatever round it came from.
 *
 * Failures (neither the paper nor decentralizepy handles them: its
 * PeerSamplerDynamic draws over all processes).  When the failure
 * detector declares a node failed or back, the rounds that no node has
 * begun yet (from R = 1 + the highest round any node is in) are drawn over
 * the nodes not declared failed at that instant, so every node still
 * agrees on every round's graph: EL-Oracle an s-regular graph on the m
 * live nodes (the complete graph when m <= s; when m s is odd, where none
 * exists, an s-regular graph on m + 1 vertices with the extra one
 * dropped, so s nodes send and receive s - 1), EL-Local each live node's
 * s peers among its live candidates.  In the rounds already begun, a
 * receiver stops waiting for a failed sender (it still takes that
 * sender's model if it came before), nobody sends to a failed node, and a
 * model that comes after its round was aggregated is dropped.  A node
 * declared back keeps the model faults.rejoin gives it, drops what it
 * held for earlier rounds and rejoins at round R, which it is in the
 * graph of; it sends no model of an earlier round, so nobody waits for
 * one.  With every node live again the graphs are the plain ones.
 */
#include "alg.h"
#include "alg_epidemic_graph.h"

#include <assert.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <gsl/gsl_cblas.h>

enum { P_FANOUT, P_LOCAL_STEPS, P_PEERS, P_VARIANT, P_ROUNDS };
enum { PEERS_ALL, PEERS_NEIGHBOURS };
enum { VAR_ORACLE, VAR_LOCAL };
enum { ROUNDS_SYNC, ROUNDS_ASYNC };
enum { TAG_MODEL = 1 };

static const char *const peer_names[] = { "all", "neighbours", NULL };
static const char *const variant_names[] = { "oracle", "local", NULL };
static const char *const rounds_names[] = { "sync", "async", NULL };

static const alg_param_spec params[] = {
    { "fanout", ALG_PARAM_INT, 2, 1, 1e9, NULL, "s: peers each node sends its model to per round" },
    { "local_steps", ALG_PARAM_INT, 1, 1, 1e9, NULL, "local steps between two rounds" },
    { "peers", ALG_PARAM_CHOICE, PEERS_ALL, 0, 0, peer_names,
      "whom a node may pick: any other node or its topology neighbours" },
    { "variant", ALG_PARAM_CHOICE, VAR_ORACLE, 0, 0, variant_names,
      "oracle: an s-regular graph per round; local: each node samples s peers" },
    { "rounds", ALG_PARAM_CHOICE, ROUNDS_SYNC, 0, 0, rounds_names,
      "sync: wait for the round's models; async: aggregate what has arrived" },
    { NULL, 0, 0, 0, 0, NULL, NULL },
};

/* From round `from` on, the graphs are drawn over the m nodes of live[]
 * (increasing), the nodes not declared failed when the epoch began. */
typedef struct el_epoch {
    uint64_t from;
    int      m;
    int     *live;
} el_epoch;

#define CACHE 8          /* rounds kept; a miss recomputes (the graph is a pure function) */

typedef struct el_shared {
    el_round cache[CACHE];
    el_draw  dr;         /* the drawing's workspace; fanout dr.s */
    int     *all;        /* n: 0 .. n-1, the live list before any failure */
    el_epoch *epochs;    /* after the first failure; none: every node, always */
    int      n_epochs;
    uint64_t *joined;    /* n: the round a node rejoined at (it sends none before) */
    uint64_t changes;    /* failures and returns declared */
    /* figures for algorithm_stats */
    uint64_t aggregations, foreign, late, rejoins;
    int      round_min, round_max, sends_min, sends_max;
} el_shared;

/* A round's accumulated models (sync rounds) and who sent them. */
typedef struct el_slot {
    uint64_t round;
    int      used, count;
    double  *sum;
    int     *from;
    int      from_cap;
} el_slot;

typedef struct el_state {
    uint64_t round;
    int      local;      /* steps done in this round */
    int      waiting;    /* sent this round's model, waiting for the round's models */
    el_slot *slots;      /* sync: one per round with models in hand */
    int      n_slots;
    double  *inbox;      /* async: sum of models since the last aggregation */
    int      n_inbox;
    uint64_t received;
} el_state;

/* The epoch round r belongs to: -1 for "every node" (before any failure). */
static int epoch_of(const el_shared *sh, uint64_t r)
{
    int e = sh->n_epochs - 1;
    while (e >= 0 && sh->epochs[e].from > r)
        e--;
    return e;
}

static const el_round *graph_of(const alg_ctx *ctx, uint64_t r)
{
    el_shared *sh = ctx->shared;
    el_round *c = &sh->cache[r % CACHE];
    int e = epoch_of(sh, r);
    if (!c->valid || c->round != r || c->epoch != e) {
        const int *L = e < 0 ? sh->all : sh->epochs[e].live;
        int m = e < 0 ? ctx->n : sh->epochs[e].m;
        if ((int)ctx->param[P_VARIANT] == VAR_ORACLE)
            el_draw_oracle(&sh->dr, c, r, L, m);
        else
            el_draw_local(&sh->dr, c, r, L, m,
                          (int)ctx->param[P_PEERS] == PEERS_ALL ? NULL : ctx->g);
        c->round = r;
        c->epoch = e;
        c->valid = 1;
    }
    return c;
}

/* ---- the protocol ---- */

static int el_check(const alg_ctx *ctx, char *err, size_t size)
{
    int s = (int)ctx->param[P_FANOUT];
    if ((int)ctx->param[P_PEERS] == PEERS_ALL) {
        if (s > ctx->n - 1) {
            snprintf(err, size, "epidemic fanout %d needs at least %d nodes, got %d", s, s + 1,
                     ctx->n);
            return -1;
        }
    } else {
        if ((int)ctx->param[P_VARIANT] == VAR_ORACLE) {
            snprintf(err, size, "epidemic peers \"neighbours\" needs variant \"local\" (the "
                     "oracle's graph spans all nodes)");
            return -1;
        }
        for (int i = 0; i < ctx->n; i++) {
            int deg = (int)(ctx->g->off[i + 1] - ctx->g->off[i]);
            if (s > deg) {
                snprintf(err, size, "epidemic fanout %d with peers \"neighbours\" needs every "
                         "node to have at least %d neighbours; node %d has %d", s, s, i, deg);
                return -1;
            }
        }
    }
    if ((int)ctx->param[P_VARIANT] == VAR_ORACLE && (ctx->n * s) % 2) {
        snprintf(err, size, "epidemic variant \"oracle\" draws a %d-regular graph, which needs "
                 "nodes x fanout even; got %d x %d", s, ctx->n, s);
        return -1;
    }
    return 0;
}

static void el_shared_fini(alg_ctx *ctx)
{
    el_shared *sh = ctx->shared;
    if (!sh)
        return;
    for (int k = 0; k < CACHE; k++)
        el_round_fini(&sh->cache[k]);
    for (int e = 0; e < sh->n_epochs; e++)
        free(sh->epochs[e].live);
    free(sh->epochs);
    el_draw_fini(&sh->dr);
    free(sh->all);
    free(sh->joined);
    free(sh);
    ctx->shared = NULL;
}

static int el_shared_init(alg_ctx *ctx)
{
    el_shared *sh = calloc(1, sizeof *sh);
    if (!sh)
        return -1;
    ctx->shared = sh;
    int n = ctx->n, s = (int)ctx->param[P_FANOUT];
    if (el_draw_init(&sh->dr, n, s, ctx->seed) != 0)
        return -1;
    for (int k = 0; k < CACHE; k++)
        if (el_round_init(&sh->cache[k], n, s) != 0)
            return -1;
    sh->all = malloc((size_t)n * sizeof(int));
    sh->joined = calloc((size_t)n, sizeof(uint64_t));
    if (!sh->all || !sh->joined)
        return -1;
    for (int v = 0; v < n; v++)
        sh->all[v] = v;
    sh->round_min = sh->sends_min = 1 << 30;
    sh->round_max = sh->sends_max = -1;
    return 0;
}

static int el_init(alg_ctx *ctx, void *state, int i)
{
    (void)i;
    el_state *st = state;
    if ((int)ctx->param[P_ROUNDS] == ROUNDS_ASYNC) {
        st->inbox = calloc(ctx->P ? ctx->P : 1, sizeof(double));
        if (!st->inbox)
            return -1;
    }
    return 0;
}

static void el_fini(alg_ctx *ctx, void *state, int node)
{
    (void)ctx;
    (void)node;
    el_state *st = state;
    for (int k = 0; k < st->n_slots; k++) {
        free(st->slots[k].sum);
        free(st->slots[k].from);
    }
    free(st->slots);
    free(st->inbox);
}

/* The accumulator of round r, created (from a free one) when asked to. */
static el_slot *slot_of(const alg_ctx *ctx, el_state *st, uint64_t r, int create)
{
    el_slot *free_slot = NULL;
    for (int k = 0; k < st->n_slots; k++) {
        if (st->slots[k].used && st->slots[k].round == r)
            return &st->slots[k];
        if (!st->slots[k].used && !free_slot)
            free_slot = &st->slots[k];
    }
    if (!create)
        return NULL;
    if (!free_slot) {
        el_slot *grown = realloc(st->slots, (size_t)(st->n_slots + 1) * sizeof *grown);
        if (!grown)
            alg_out_of_memory();
        st->slots = grown;
        free_slot = &st->slots[st->n_slots++];
        free_slot->sum = malloc((ctx->P ? ctx->P : 1) * sizeof(double));
        free_slot->from = NULL;
        free_slot->from_cap = 0;
        if (!free_slot->sum)
            alg_out_of_memory();
    }
    free_slot->used = 1;
    free_slot->round = r;
    free_slot->count = 0;
    memset(free_slot->sum, 0, ctx->P * sizeof(double));
    return free_slot;
}

/* x <- (x + sum) / (1 + count), and the round's figures. */
static void aggregate(alg_ctx *ctx, int i, const double *sum, int count)
{
    el_shared *sh = ctx->shared;
    if (count > 0) {
        double *p = alg_params(ctx, i);
        cblas_daxpy((int)ctx->P, 1.0, sum, 1, p, 1);
        cblas_dscal((int)ctx->P, 1.0 / (1 + count), p, 1);
    }
    sh->aggregations++;
    if (count < sh->round_min)
        sh->round_min = count;
    if (count > sh->round_max)
        sh->round_max = count;
}

static void next_round(alg_ctx *ctx, el_state *st, int i)
{
    st->round++;
    st->local = 0;
    st->waiting = 0;
    alg_start_step(ctx, i);
}

/* Whether j's model is among the slot's. */
static int arrived(const el_slot *sl, int j)
{
    for (int k = 0; sl && k < sl->count; k++)
        if (sl->from[k] == j)
            return 1;
    return 0;
}

/* The models node i waits for in round r: from each sender of the round's
 * graph that is not declared failed and has not rejoined after round r
 * (it skipped the round), and from a failed one whose model came before
 * it failed.  Before any failure: the graph's in-degree. */
static int expected(const alg_ctx *ctx, const el_slot *sl, int i, uint64_t r)
{
    const el_shared *sh = ctx->shared;
    const el_round *c = graph_of(ctx, r);
    if (sh->changes == 0)
        return c->in_deg[i];
    int count = 0;
    for (int k = c->in_off[i]; k < c->in_off[i + 1]; k++) {
        int j = c->in_list[k];
        count += (!alg_is_failed(ctx, j) && r >= sh->joined[j]) || arrived(sl, j);
    }
    return count;
}

/* Sync rounds: aggregate once every model of the round is in. */
static void try_finish(alg_ctx *ctx, el_state *st, int i)
{
    if (!st->waiting)
        return;
    el_slot *sl = slot_of(ctx, st, st->round, 0);
    int expect = expected(ctx, sl, i, st->round);
    int have = sl ? sl->count : 0;
    if (have < expect)
        return;
    assert(have == expect);
    aggregate(ctx, i, sl ? sl->sum : NULL, have);
    if (sl)
        sl->used = 0;
    next_round(ctx, st, i);
}

static void send_round(alg_ctx *ctx, el_state *st, int i)
{
    el_shared *sh = ctx->shared;
    const el_round *c = graph_of(ctx, st->round);
    const int *to = c->out + (size_t)i * sh->dr.s;
    cl_buf *x = alg_snapshot(ctx, i);
    int distinct = 0;
    sh->dr.stamp++;
    for (int k = 0; k < c->out_deg[i]; k++) {
        if (alg_is_failed(ctx, to[k]))
            continue;   /* a round drawn before it failed */
        alg_send(ctx, i, to[k], TAG_MODEL, st->round, x, alg_param_bytes(ctx, ctx->P));
        if (to[k] != i && sh->dr.mark[to[k]] != sh->dr.stamp)
            distinct++;
        sh->dr.mark[to[k]] = sh->dr.stamp;
    }
    alg_buf_put(ctx, x);
    if (distinct < sh->sends_min)   /* distinct other nodes sent to this round */
        sh->sends_min = distinct;
    if (distinct > sh->sends_max)
        sh->sends_max = distinct;
}

static void el_on_step_done(alg_ctx *ctx, void *state, int i, const double *grad)
{
    el_state *st = state;
    alg_sgd_apply(ctx, i, alg_params(ctx, i), grad, 1.0);
    if (++st->local < (int)ctx->param[P_LOCAL_STEPS]) {
        alg_start_step(ctx, i);
        return;
    }
    send_round(ctx, st, i);
    if ((int)ctx->param[P_ROUNDS] == ROUNDS_ASYNC) {
        aggregate(ctx, i, st->inbox, st->n_inbox);
        memset(st->inbox, 0, ctx->P * sizeof(double));
        st->n_inbox = 0;
        next_round(ctx, st, i);
        return;
    }
    st->waiting = 1;
    try_finish(ctx, st, i);
}

static void el_on_message(alg_ctx *ctx, void *state, int i, const cl_msg *m)
{
    el_state *st = state;
    el_shared *sh = ctx->shared;
    st->received++;
    if ((int)ctx->param[P_ROUNDS] == ROUNDS_ASYNC) {
        cblas_daxpy((int)ctx->P, 1.0, m->payload->data, 1, st->inbox, 1);
        st->n_inbox++;
        if (m->round != st->round)
            sh->foreign++;
        return;
    }
    /* a round aggregated without it: its sender was declared failed, or
     * this node rejoined past the round */
    assert(m->round >= st->round || sh->changes > 0);
    if (m->round < st->round) {
        sh->late++;
        return;
    }
    el_slot *sl = slot_of(ctx, st, m->round, 1);
    cblas_daxpy((int)ctx->P, 1.0, m->payload->data, 1, sl->sum, 1);
    if (sl->count == sl->from_cap) {
        int cap = sl->from_cap ? 2 * sl->from_cap : 4;
        int *f = realloc(sl->from, (size_t)cap * sizeof(int));
        if (!f)
            alg_out_of_memory();
        sl->from = f;
        sl->from_cap = cap;
    }
    sl->from[sl->count++] = m->from;
    if (m->round == st->round)
        try_finish(ctx, st, i);
}

/* A failure or a return declared: the rounds nobody has begun yet (above
 * every node's current round) are drawn over the nodes not declared
 * failed now; a returning node rejoins at the first of them. */
static void el_on_failure(alg_ctx *ctx, int p, int failed)
{
    el_shared *sh = ctx->shared;
    int n = ctx->n;
    uint64_t from = 0;
    for (int i = 0; i < n; i++) {
        const el_state *st = alg_state(ctx, i);
        if (st->round + 1 > from)
            from = st->round + 1;
    }
    el_epoch *e = sh->n_epochs > 0 ? &sh->epochs[sh->n_epochs - 1] : NULL;
    if (!e || e->from != from) {
        el_epoch *grown = realloc(sh->epochs, (size_t)(sh->n_epochs + 1) * sizeof *grown);
        if (!grown)
            alg_out_of_memory();
        sh->epochs = grown;
        e = &sh->epochs[sh->n_epochs++];
        e->from = from;
        e->live = malloc((size_t)n * sizeof(int));
        if (!e->live)
            alg_out_of_memory();
    }
    e->m = 0;
    for (int v = 0; v < n; v++)
        if (!alg_is_failed(ctx, v))
            e->live[e->m++] = v;
    for (int k = 0; k < CACHE; k++)
        if (sh->cache[k].round >= from)
            sh->cache[k].valid = 0;
    sh->changes++;
    if (failed) {   /* its receivers stop waiting for it */
        for (int i = 0; i < n; i++)
            if (!alg_is_failed(ctx, i))
                try_finish(ctx, alg_state(ctx, i), i);
        return;
    }
    el_state *st = alg_state(ctx, p);
    for (int k = 0; k < st->n_slots; k++)
        st->slots[k].used = 0;
    if (st->inbox) {
        memset(st->inbox, 0, ctx->P * sizeof(double));
        st->n_inbox = 0;
    }
    sh->joined[p] = from;
    int idle = st->waiting;
    st->round = from;
    st->local = 0;
    st->waiting = 0;
    sh->rejoins++;
    if (idle)   /* else its interrupted step restarts and begins the round */
        alg_start_step(ctx, p);
}

static void el_describe_wait(const alg_ctx *ctx, const void *state, int i, char *buf,
                             size_t size)
{
    const el_state *st = state;
    if (!st->waiting) {
        snprintf(buf, size, "its step of round %llu", (unsigned long long)st->round);
        return;
    }
    const el_slot *sl = NULL;
    for (int k = 0; k < st->n_slots; k++)
        if (st->slots[k].used && st->slots[k].round == st->round)
            sl = &st->slots[k];
    int expect = expected(ctx, sl, i, st->round), have = sl ? sl->count : 0;
    snprintf(buf, size, "%d of %d models of round %llu", expect - have, expect,
             (unsigned long long)st->round);
}

static int el_stats(const alg_ctx *ctx, const char **keys, double *values, int max)
{
    const el_shared *sh = ctx->shared;
    double rmin = 0, rmax = 0, cmin = 0, cmax = 0;
    for (int i = 0; i < ctx->n; i++) {
        const el_state *st = alg_state(ctx, i);
        double r = (double)st->received, c = (double)st->round;
        if (i == 0 || r < rmin)
            rmin = r;
        if (i == 0 || r > rmax)
            rmax = r;
        if (i == 0 || c < cmin)
            cmin = c;
        if (i == 0 || c > cmax)
            cmax = c;
    }
    int got = sh->aggregations > 0;
    const char *k[] = { "rounds_min", "rounds_max", "received_min", "received_max",
                        "round_models_min", "round_models_max", "round_sends_min",
                        "round_sends_max", "foreign_round_models", "late_models", "rejoins" };
    double v[] = { cmin, cmax, rmin, rmax, got ? sh->round_min : 0, got ? sh->round_max : 0,
                   sh->sends_max >= 0 ? sh->sends_min : 0, sh->sends_max >= 0 ? sh->sends_max : 0,
                   (double)sh->foreign, (double)sh->late, (double)sh->rejoins };
    return alg_stats_copy(k, v, (int)(sizeof k / sizeof k[0]), keys, values, max);
}

const alg_type alg_epidemic = {
    .name = "epidemic",
    .summary = "synchronous rounds sending to s random peers (de Vos et al. 2023)",
    .state_size = sizeof(el_state),
    .params = params,
    .check = el_check,
    .shared_init = el_shared_init,
    .shared_fini = el_shared_fini,
    .init = el_init,
    .on_step_done = el_on_step_done,
    .on_message = el_on_message,
    .on_failure = el_on_failure,
    .describe_wait = el_describe_wait,
    .stats = el_stats,
    .fini = el_fini,
};
