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
 * delays the nodes that expect its model, and with a node down its
 * receivers wait (the run stalls).  `rounds` "async" is dtsim's earlier
 * variant: a node never waits; after sending it aggregates every model
 * received since its last aggregation, whatever round it came from.
 */
#include "alg.h"

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

/* One round's communication graph: node j sends to out[j*s .. j*s+s-1]
 * and receives in_deg[j] models. */
typedef struct el_round {
    uint64_t round;
    int      valid;
    int     *out;
    int     *in_deg;
} el_round;

#define CACHE 8          /* rounds kept; a miss recomputes (the graph is a pure function) */
#define MAX_TRIES 1000   /* pairing attempts before the fallback graph */

typedef struct el_shared {
    el_round cache[CACHE];
    int      s, d;       /* fanout; degree actually drawn (s, or n-1-s for the complement) */
    int     *stubs;      /* n * d */
    int     *adj, *deg;  /* n * d, n: the undirected graph being drawn */
    int     *mark;       /* n, stamps for membership tests */
    int      stamp;
    /* figures for algorithm_stats */
    uint64_t aggregations, foreign;
    int      round_min, round_max, sends_min, sends_max;
} el_shared;

/* A round's accumulated models (sync rounds). */
typedef struct el_slot {
    uint64_t round;
    int      used, count;
    double  *sum;
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

/* ---- random draws from (seed, round, node) ---- */

typedef struct hstream {
    uint64_t key, k;
} hstream;

static hstream stream_of(const alg_ctx *ctx, uint64_t round, uint64_t node)
{
    uint64_t key = alg_hash64(alg_hash64(ctx->seed ^ UINT64_C(0x45504944454d4943)) + round);
    hstream h = { alg_hash64(key ^ (node * UINT64_C(0xd1b54a32d192ed03))), 0 };
    return h;
}

/* Uniform integer in [0, m). */
static int uniform(hstream *h, int m)
{
    uint64_t x = alg_hash64(h->key + (++h->k) * UINT64_C(0x9e3779b97f4a7c15));
    int v = (int)((double)(x >> 11) * (1.0 / 9007199254740992.0) * m);
    return v < m ? v : m - 1;
}

static void shuffle(hstream *h, int *a, int m)
{
    for (int i = m - 1; i > 0; i--) {
        int j = uniform(h, i + 1);
        int t = a[i];
        a[i] = a[j];
        a[j] = t;
    }
}

/* ---- EL-Oracle: a random d-regular undirected graph ---- */

static int adjacent(const el_shared *sh, int a, int b)
{
    for (int k = 0; k < sh->deg[a]; k++)
        if (sh->adj[a * sh->d + k] == b)
            return 1;
    return 0;
}

/* Whether some pair of the m left-over stubs can still become an edge. */
static int suitable(el_shared *sh, int m)
{
    for (int x = 0; x < m; x++)
        for (int y = x + 1; y < m; y++) {
            int a = sh->stubs[x], b = sh->stubs[y];
            if (a != b && !adjacent(sh, a, b))
                return 1;
        }
    return 0;
}

/* One attempt of networkx's pairing with repairs; 0 when complete. */
static int try_regular(el_shared *sh, int n, hstream *h)
{
    int d = sh->d, m = n * d;
    memset(sh->deg, 0, (size_t)n * sizeof(int));
    for (int v = 0; v < n; v++)
        for (int k = 0; k < d; k++)
            sh->stubs[v * d + k] = v;
    while (m > 0) {
        shuffle(h, sh->stubs, m);
        int left = 0;
        for (int q = 0; q + 1 < m; q += 2) {
            int a = sh->stubs[q], b = sh->stubs[q + 1];
            if (a != b && !adjacent(sh, a, b)) {
                sh->adj[a * d + sh->deg[a]++] = b;
                sh->adj[b * d + sh->deg[b]++] = a;
            } else {
                sh->stubs[left++] = a;
                sh->stubs[left++] = b;
            }
        }
        m = left;
        if (m > 0 && !suitable(sh, m))
            return -1;
    }
    return 0;
}

/* Never reached in practice: a circulant d-regular graph (offsets +-1 ..
 * +-d/2, and n/2 when d is odd) on a random relabelling of the nodes. */
static void fallback_regular(el_shared *sh, int n, hstream *h)
{
    int d = sh->d, *perm = sh->stubs;
    for (int v = 0; v < n; v++)
        perm[v] = v;
    shuffle(h, perm, n);
    for (int p = 0; p < n; p++) {
        int a = perm[p], k = 0;
        for (int o = 1; o <= d / 2; o++) {
            sh->adj[a * d + k++] = perm[(p + o) % n];
            sh->adj[a * d + k++] = perm[(p + n - o) % n];
        }
        if (d % 2)
            sh->adj[a * d + k++] = perm[(p + n / 2) % n];
        sh->deg[a] = k;
    }
}

static void build_oracle(const alg_ctx *ctx, el_shared *sh, el_round *c, uint64_t r)
{
    int n = ctx->n, s = sh->s, d = sh->d;
    hstream h = stream_of(ctx, r, 0);
    int tries = 0;
    if (d > 0)
        while (try_regular(sh, n, &h) != 0)
            if (++tries == MAX_TRIES) {
                fallback_regular(sh, n, &h);
                break;
            }
    for (int j = 0; j < n; j++) {
        int *o = c->out + (size_t)j * s;
        if (d == s) {
            memcpy(o, sh->adj + (size_t)j * d, (size_t)s * sizeof(int));
        } else {   /* complement of the drawn graph */
            sh->stamp++;
            sh->mark[j] = sh->stamp;
            for (int k = 0; k < d; k++)
                sh->mark[sh->adj[j * d + k]] = sh->stamp;
            for (int v = 0, k = 0; v < n; v++)
                if (sh->mark[v] != sh->stamp)
                    o[k++] = v;
            shuffle(&h, o, s);
        }
        c->in_deg[j] = s;
    }
}

/* ---- EL-Local: every node samples s distinct peers ---- */

static int pool_size(const alg_ctx *ctx, int j)
{
    return (int)ctx->param[P_PEERS] == PEERS_ALL ? ctx->n - 1
                                                 : (int)(ctx->g->off[j + 1] - ctx->g->off[j]);
}

static int pool_at(const alg_ctx *ctx, int j, int idx)
{
    if ((int)ctx->param[P_PEERS] == PEERS_ALL)
        return idx < j ? idx : idx + 1;
    return ctx->g->nbr[ctx->g->off[j] + (size_t)idx];
}

static void build_local(const alg_ctx *ctx, el_shared *sh, el_round *c, uint64_t r)
{
    int n = ctx->n, s = sh->s;
    memset(c->in_deg, 0, (size_t)n * sizeof(int));
    for (int j = 0; j < n; j++) {
        hstream h = stream_of(ctx, r, (uint64_t)j + 1);
        int N = pool_size(ctx, j), *o = c->out + (size_t)j * s, k = 0;
        sh->stamp++;
        for (int t = N - s; t < N; t++) {   /* Floyd's sample of s of N */
            int v = pool_at(ctx, j, uniform(&h, t + 1));
            if (sh->mark[v] == sh->stamp)
                v = pool_at(ctx, j, t);
            sh->mark[v] = sh->stamp;
            o[k++] = v;
        }
        shuffle(&h, o, s);
        for (k = 0; k < s; k++)
            c->in_deg[o[k]]++;
    }
}

static const el_round *graph_of(const alg_ctx *ctx, uint64_t r)
{
    el_shared *sh = ctx->shared;
    el_round *c = &sh->cache[r % CACHE];
    if (!c->valid || c->round != r) {
        if ((int)ctx->param[P_VARIANT] == VAR_ORACLE)
            build_oracle(ctx, sh, c, r);
        else
            build_local(ctx, sh, c, r);
        c->round = r;
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
    for (int k = 0; k < CACHE; k++) {
        free(sh->cache[k].out);
        free(sh->cache[k].in_deg);
    }
    free(sh->stubs);
    free(sh->adj);
    free(sh->deg);
    free(sh->mark);
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
    sh->s = s;
    sh->d = 2 * s > n - 1 ? n - 1 - s : s;
    size_t nd = (size_t)n * (size_t)(sh->d > 1 ? sh->d : 1);
    for (int k = 0; k < CACHE; k++) {
        sh->cache[k].out = malloc((size_t)n * (size_t)s * sizeof(int));
        sh->cache[k].in_deg = malloc((size_t)n * sizeof(int));
        if (!sh->cache[k].out || !sh->cache[k].in_deg)
            return -1;
    }
    sh->stubs = malloc((nd > (size_t)n ? nd : (size_t)n) * sizeof(int));
    sh->adj = malloc(nd * sizeof(int));
    sh->deg = calloc((size_t)n, sizeof(int));
    sh->mark = calloc((size_t)n, sizeof(int));
    if (!sh->stubs || !sh->adj || !sh->deg || !sh->mark)
        return -1;
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
    for (int k = 0; k < st->n_slots; k++)
        free(st->slots[k].sum);
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

/* Sync rounds: aggregate once every model of the round is in. */
static void try_finish(alg_ctx *ctx, el_state *st, int i)
{
    if (!st->waiting)
        return;
    int expect = graph_of(ctx, st->round)->in_deg[i];
    el_slot *sl = slot_of(ctx, st, st->round, 0);
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
    const int *to = graph_of(ctx, st->round)->out + (size_t)i * sh->s;
    cl_buf *x = alg_snapshot(ctx, i);
    int distinct = 0;
    sh->stamp++;
    for (int k = 0; k < sh->s; k++) {
        alg_send(ctx, i, to[k], TAG_MODEL, st->round, x, alg_param_bytes(ctx, ctx->P));
        if (to[k] != i && sh->mark[to[k]] != sh->stamp)
            distinct++;
        sh->mark[to[k]] = sh->stamp;
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
    assert(m->round >= st->round);   /* an earlier round was aggregated without it */
    el_slot *sl = slot_of(ctx, st, m->round, 1);
    cblas_daxpy((int)ctx->P, 1.0, m->payload->data, 1, sl->sum, 1);
    sl->count++;
    if (m->round == st->round)
        try_finish(ctx, st, i);
}

static void el_describe_wait(const alg_ctx *ctx, const void *state, int i, char *buf,
                             size_t size)
{
    const el_state *st = state;
    if (!st->waiting) {
        snprintf(buf, size, "its step of round %llu", (unsigned long long)st->round);
        return;
    }
    int expect = graph_of(ctx, st->round)->in_deg[i], have = 0;
    for (int k = 0; k < st->n_slots; k++)
        if (st->slots[k].used && st->slots[k].round == st->round)
            have = st->slots[k].count;
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
                        "round_sends_max", "foreign_round_models" };
    double v[] = { cmin, cmax, rmin, rmax, got ? sh->round_min : 0, got ? sh->round_max : 0,
                   sh->sends_max >= 0 ? sh->sends_min : 0, sh->sends_max >= 0 ? sh->sends_max : 0,
                   (double)sh->foreign };
    int m = (int)(sizeof k / sizeof k[0]);
    if (m > max)
        m = max;
    for (int j = 0; j < m; j++) {
        keys[j] = k[j];
        values[j] = v[j];
    }
    return m;
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
    .describe_wait = el_describe_wait,
    .stats = el_stats,
    .fini = el_fini,
};
