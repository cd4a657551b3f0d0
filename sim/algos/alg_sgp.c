/* alg_sgp.c -- Stochastic Gradient Push (Assran, Loizou, Ballas, Rabbat,
 * "Stochastic Gradient Push for Distributed Deep Learning", ICML 2019):
 * push-sum gossip with SGD on directed and time-varying graphs.
 *
 * Each node holds a numerator x_i and a push-sum weight w_i (1 at start);
 * its model is z_i = x_i / w_i, which the cluster's parameters hold, so
 * gradients and metrics use the de-biased model.  Round k: the node
 * computes a gradient at z_i; when its step ends it applies it to the
 * numerator, x_i <- x_i - lr g (through its optimizer), keeps p_ii of
 * (x_i, w_i) and sends p_ji (x_i, w_i) to each out-neighbour j of round k's
 * graph (P + 1 numbers: the weight travels in the message), with
 * p = 1 / (1 + out-degree) for itself and each out-neighbour; it then waits
 * for the round-k messages of all its in-neighbours, adds them, sets
 * z_i = x_i / w_i and starts round k+1 (synchronous SGP, `overlap` 0).
 * With `overlap` tau >= 1 (the paper's tau-overlap SGP) it goes on as soon
 * as the shares of every round up to k - tau are in, adding every share
 * that has come for rounds up to k: shares still on the way are in flight
 * or in its mailbox, so the push-sum average stays exact (run.json:
 * average_error).  The weights p are column-stochastic (each sender splits
 * what it has), so with no message lost the weights in nodes, in flight
 * and in early mailboxes always add up to n (run.json: weight_sum_error,
 * exactly 0 for dyadic weights).
 *
 * `graph` picks the graph of every round: "topology" (the scenario's graph,
 * each edge both ways, p_ji = 1/(1+outdeg_i)), "exponential" (the directed
 * exponential graph i -> i + 2^b), or a time-varying schedule:
 * "one_peer_exponential" (round k: i -> i + 2^(k mod log2 n), the paper's
 * choice), "random_matching", "random_k_out" (`peers` random out-neighbours
 * per round), "file" (the rounds of `graph_file`, cycled).
 */
#include "alg_nbr.h"   /* the round-graph copies */

#include <assert.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <gsl/gsl_cblas.h>

enum { P_GRAPH, P_PEERS, P_GRAPH_FILE, P_OVERLAP };
enum { G_TOPOLOGY, G_EXPONENTIAL, G_ONE_PEER, G_MATCHING, G_K_OUT, G_FILE };
enum { TAG_PUSH = 1 };
enum { TIMER_DECLARED = 1 };

static const char *const graph_names[] = { "topology", "exponential", "one_peer_exponential",
                                           "random_matching", "random_k_out", "file", NULL };

static const alg_param_spec params[] = {
    { "graph", ALG_PARAM_CHOICE, G_ONE_PEER, 0, 0, graph_names, "the directed graph of each round" },
    { "peers", ALG_PARAM_INT, 1, 1, 1e9, NULL, "out-neighbours per round with graph random_k_out" },
    { "graph_file", ALG_PARAM_PATH, 0, 0, 0, NULL,
      "with graph file: lines \"round u v\", relative to the scenario" },
    { "overlap", ALG_PARAM_INT, 0, 0, 1000, NULL,
      "tau: rounds of incoming shares a node may go on without; 0: synchronous" },
    { NULL, 0, 0, 0, 0, NULL, NULL },
};

/* One round's graph, copied out of the schedule (nodes differ in rounds). */
typedef struct round_graph {
    uint64_t round;
    int      valid;
    size_t   cap;
    topo_digraph d;
} round_graph;

#define CACHE 8

typedef struct sgp_shared {
    topo_digraph  *fixed;        /* static graphs */
    topo_schedule *sched;        /* time-varying */
    round_graph    cache[CACHE];
    double         in_flight_w;  /* weight sent and not yet received */
    /* tau > 0 only, for the mass check of run.json: numerators sent and
     * not yet received, and the workers' initial models summed */
    double        *in_flight_x, *x0_sum;
    /* the failure detector's membership (the same view for every node) */
    int            failures;     /* a declaration ever happened */
    uint64_t      *join;         /* n: node j takes part in rounds >= join[j] */
    double        *live_ref;     /* P + 1: the live nodes' held numerator and weight
                                    at the last membership change */
} sgp_shared;

typedef struct slot {
    uint64_t round;
    int      count;
    double  *acc;       /* P + 1: numerator and weight */
    int     *from;      /* the count senders */
    int      from_cap;
} slot;

typedef struct sgp_state {
    double  *x;          /* numerator */
    double   w;
    uint64_t round;
    int      pushed;     /* this round's shares are sent */
    uint64_t next_full;  /* tau > 0: rounds before it have all their shares in */
    slot    *slots;
    int      n_slots;
    cl_buf  *share;      /* the last round's pushed share (resent on a return), or NULL */
    uint64_t share_round;
} sgp_state;

/* The graph of round k. */
static const topo_digraph *graph_of(const alg_ctx *ctx, uint64_t k)
{
    sgp_shared *sh = ctx->shared;
    if (sh->fixed)
        return sh->fixed;
    round_graph *c = &sh->cache[k % CACHE];
    if (!c->valid || c->round != k) {
        alg_nbr_digraph_copy(&c->d, &c->cap, topo_schedule_round(sh->sched, k));
        c->round = k;
        c->valid = 1;
    }
    return &c->d;
}

/* The undirected topology as arcs both ways, push-sum weights. */
static topo_digraph *from_topology(const topo_graph *g)
{
    topo_digraph *d = calloc(1, sizeof *d);
    if (!d)
        return NULL;
    int n = g->n;
    size_t a = g->off[n];
    d->n = n;
    d->n_arcs = a;
    d->out_off = malloc((size_t)(n + 1) * sizeof(size_t));
    d->in_off = malloc((size_t)(n + 1) * sizeof(size_t));
    d->out_nbr = malloc((a ? a : 1) * sizeof(int));
    d->in_nbr = malloc((a ? a : 1) * sizeof(int));
    d->out_w = malloc((a ? a : 1) * sizeof(double));
    d->in_w = malloc((a ? a : 1) * sizeof(double));
    d->self_w = malloc((size_t)n * sizeof(double));
    if (!d->out_off || !d->in_off || !d->out_nbr || !d->in_nbr || !d->out_w || !d->in_w ||
        !d->self_w) {
        topo_digraph_destroy(d);
        return NULL;
    }
    memcpy(d->out_off, g->off, (size_t)(n + 1) * sizeof(size_t));
    memcpy(d->in_off, g->off, (size_t)(n + 1) * sizeof(size_t));
    memcpy(d->out_nbr, g->nbr, a * sizeof(int));
    memcpy(d->in_nbr, g->nbr, a * sizeof(int));
    for (int i = 0; i < n; i++) {
        double p = 1.0 / (1.0 + (double)(g->off[i + 1] - g->off[i]));
        d->self_w[i] = p;
        for (size_t e = g->off[i]; e < g->off[i + 1]; e++)
            d->out_w[e] = p;
    }
    for (int i = 0; i < n; i++)   /* in_w[e] for arc nbr -> i: the sender's share */
        for (size_t e = g->off[i]; e < g->off[i + 1]; e++)
            d->in_w[e] = 1.0 / (1.0 + (double)(g->off[g->nbr[e] + 1] - g->off[g->nbr[e]]));
    d->col_stochastic = 1;
    return d;
}

/* The time-varying schedule of `graph`; NULL with a message in err. */
static topo_schedule *make_schedule(const alg_ctx *ctx, uint64_t seed, char *err, size_t size)
{
    static const topo_sched_kind kinds[] = { 0, 0, TOPO_SCHED_ONE_PEER_EXPONENTIAL,
                                             TOPO_SCHED_RANDOM_MATCHING, TOPO_SCHED_RANDOM_K_OUT,
                                             TOPO_SCHED_FILE };
    int graph = (int)ctx->param[P_GRAPH];
    topo_sched_spec sp = { .kind = kinds[graph], .n = ctx->n, .k = (int)ctx->param[P_PEERS],
                           .path = ctx->path[P_GRAPH_FILE] };
    return topo_schedule_create(&sp, seed, err, size);
}

/* A schedule file builds every round up to its last: count them before. */
static double sgp_memory_bytes(const alg_ctx *ctx)
{
    char err[512];
    double b = 0;
    if ((int)ctx->param[P_GRAPH] == G_FILE && ctx->path[P_GRAPH_FILE]
        && topo_schedule_file_bytes(ctx->path[P_GRAPH_FILE], ctx->n, &b, err, sizeof err) != 0)
        return 0;
    return b;
}

static int sgp_check(const alg_ctx *ctx, char *err, size_t size)
{
    int graph = (int)ctx->param[P_GRAPH];
    if (graph == G_FILE) {   /* read the file now, so that its errors are the scenario's */
        if (!ctx->path[P_GRAPH_FILE]) {
            snprintf(err, size, "sgp with graph \"file\" needs graph_file");
            return -1;
        }
        topo_schedule *sc = make_schedule(ctx, 0, err, size);
        if (!sc)
            return -1;
        topo_schedule_destroy(sc);
    }
    if (ctx->n < 2) {
        snprintf(err, size, "sgp needs at least 2 nodes, got %d", ctx->n);
        return -1;
    }
    if (graph == G_K_OUT && (int)ctx->param[P_PEERS] > ctx->n - 1) {
        snprintf(err, size, "sgp with random_k_out needs peers <= nodes - 1 (%d), got %d",
                 ctx->n - 1, (int)ctx->param[P_PEERS]);
        return -1;
    }
    return 0;
}

static int sgp_shared_init(alg_ctx *ctx)
{
    sgp_shared *sh = calloc(1, sizeof *sh);
    if (!sh)
        return -1;
    ctx->shared = sh;
    int graph = (int)ctx->param[P_GRAPH];
    uint64_t seed = gsl_rng_get(alg_rng(ctx, 0));
    char err[512];
    if (graph == G_TOPOLOGY) {
        sh->fixed = from_topology(ctx->g);
    } else if (graph == G_EXPONENTIAL) {
        topo_spec ts = { .kind = TOPO_EXPONENTIAL, .n = ctx->n };
        sh->fixed = topo_build_directed(&ts, seed, err, sizeof err);
    } else {
        sh->sched = make_schedule(ctx, seed, err, sizeof err);
    }
    sh->join = calloc((size_t)ctx->n, sizeof *sh->join);
    sh->live_ref = calloc(ctx->P + 1, sizeof(double));
    if (!sh->join || !sh->live_ref)
        return -1;
    if (ctx->param[P_OVERLAP] > 0 && ctx->P > 0) {
        sh->in_flight_x = calloc(ctx->P, sizeof(double));
        sh->x0_sum = calloc(ctx->P, sizeof(double));
        if (!sh->in_flight_x || !sh->x0_sum)
            return -1;
    }
    return sh->fixed || sh->sched ? 0 : -1;
}

static void sgp_shared_fini(alg_ctx *ctx)
{
    sgp_shared *sh = ctx->shared;
    if (!sh)
        return;
    topo_digraph_destroy(sh->fixed);
    topo_schedule_destroy(sh->sched);
    free(sh->in_flight_x);
    free(sh->x0_sum);
    free(sh->join);
    free(sh->live_ref);
    for (int c = 0; c < CACHE; c++)
        alg_nbr_digraph_free(&sh->cache[c].d);
    free(sh);
}

static int sgp_init(alg_ctx *ctx, void *state, int node)
{
    (void)node;
    sgp_state *st = state;
    st->x = malloc((ctx->P ? ctx->P : 1) * sizeof(double));
    st->w = 1.0;
    return st->x ? 0 : -1;
}

static void sgp_fini(alg_ctx *ctx, void *state, int node)
{
    (void)node;
    sgp_state *st = state;
    for (int k = 0; k < st->n_slots; k++) {
        free(st->slots[k].acc);
        free(st->slots[k].from);
    }
    free(st->slots);
    free(st->x);
    if (st->share)
        alg_buf_put(ctx, st->share);
}

static slot *slot_of(const alg_ctx *ctx, sgp_state *st, uint64_t round)
{
    for (int k = 0; k < st->n_slots; k++)
        if (st->slots[k].round == round && st->slots[k].acc)
            return &st->slots[k];
    for (int k = 0; k < st->n_slots; k++)   /* reuse a free one */
        if (st->slots[k].round == UINT64_MAX) {
            st->slots[k].round = round;
            return &st->slots[k];
        }
    slot *s = realloc(st->slots, (size_t)(st->n_slots + 1) * sizeof *s);
    if (!s)
        alg_out_of_memory();
    st->slots = s;
    slot *n = &st->slots[st->n_slots++];
    n->round = round;
    n->count = 0;
    n->from = NULL;
    n->from_cap = 0;
    n->acc = calloc(ctx->P + 1, sizeof(double));
    if (!n->acc)
        alg_out_of_memory();
    return n;
}

static slot *find_slot(const sgp_state *st, uint64_t round)
{
    for (int k = 0; k < st->n_slots; k++)
        if (st->slots[k].round == round)
            return &st->slots[k];
    return NULL;
}

static int slot_has(const slot *s, int from)
{
    for (int k = 0; s->from && k < s->count; k++)
        if (s->from[k] == from)
            return 1;
    return 0;
}

/* Whether node j is out of round r: declared failed now, or back and
 * rejoining at a later round. */
static int excluded(const alg_ctx *ctx, int j, uint64_t r)
{
    const sgp_shared *sh = ctx->shared;
    return sh->failures && (alg_is_failed(ctx, j) || r < sh->join[j]);
}

/* In-neighbours of round r whose share node i still waits for (those not
 * excluded; a share that came from one excluded since stays). */
static int missing_in(const alg_ctx *ctx, const sgp_state *st, int i, uint64_t r)
{
    const topo_digraph *d = graph_of(ctx, r);
    int need = (int)(d->in_off[i + 1] - d->in_off[i]);
    const slot *s = need > 0 ? find_slot(st, r) : NULL;
    int got = s ? s->count : 0;
    if (!((const sgp_shared *)ctx->shared)->failures)
        return need - got;
    int live = 0, got_live = 0;
    for (size_t e = d->in_off[i]; e < d->in_off[i + 1]; e++)
        live += !excluded(ctx, d->in_nbr[e], r);
    for (int k = 0; k < got; k++)
        got_live += !excluded(ctx, s->from[k], r);
    return live - got_live;
}

static void sgp_on_start(alg_ctx *ctx, void *state, int i)
{
    sgp_state *st = state;
    sgp_shared *sh = ctx->shared;
    memcpy(st->x, alg_params(ctx, i), ctx->P * sizeof(double));
    if (sh->x0_sum)
        cblas_daxpy((int)ctx->P, 1.0, st->x, 1, sh->x0_sum, 1);
    alg_start_step(ctx, i);
}

/* tau-overlap (tau = ctx->param[P_OVERLAP] > 0): round k's shares are
 * pushed; the node goes on once every round up to k - tau has all its
 * in-neighbours' shares in, adding every share that has come for rounds
 * up to k (later rounds' wait for their own round). */
static void try_finish_overlap(alg_ctx *ctx, sgp_state *st, int i)
{
    uint64_t k = st->round, tau = (uint64_t)ctx->param[P_OVERLAP];
    if (!st->pushed)
        return;
    while (st->next_full <= k && missing_in(ctx, st, i, st->next_full) == 0)
        st->next_full++;
    if (k >= tau && st->next_full <= k - tau)
        return;   /* round k - tau still has shares on the way */
    for (int j = 0; j < st->n_slots; j++) {
        slot *s = &st->slots[j];
        if (s->round == UINT64_MAX || s->round > k)
            continue;
        cblas_daxpy((int)ctx->P, 1.0, s->acc, 1, st->x, 1);
        if (ctx->P > 0)
            st->w += s->acc[ctx->P];
        memset(s->acc, 0, (ctx->P + 1) * sizeof(double));
        if (s->round < st->next_full) {   /* complete: no share of it is left */
            s->count = 0;
            s->round = UINT64_MAX;
        }
    }
    double *z = alg_params(ctx, i);
    memcpy(z, st->x, ctx->P * sizeof(double));
    cblas_dscal((int)ctx->P, 1.0 / st->w, z, 1);
    st->round++;
    st->pushed = 0;
    alg_start_step(ctx, i);
}

/* All in-neighbours' shares of the current round are in: finish it. */
static void try_finish(alg_ctx *ctx, sgp_state *st, int i)
{
    if (ctx->param[P_OVERLAP] > 0) {
        try_finish_overlap(ctx, st, i);
        return;
    }
    if (!st->pushed || missing_in(ctx, st, i, st->round) > 0)
        return;
    slot *s = find_slot(st, st->round);
    if (s) {
        cblas_daxpy((int)ctx->P, 1.0, s->acc, 1, st->x, 1);
        if (ctx->P > 0)   /* timing only: no shares travel, the weight stays 1 */
            st->w += s->acc[ctx->P];
        memset(s->acc, 0, (ctx->P + 1) * sizeof(double));
        s->count = 0;
        s->round = UINT64_MAX;
    }
    double *z = alg_params(ctx, i);
    memcpy(z, st->x, ctx->P * sizeof(double));
    cblas_dscal((int)ctx->P, 1.0 / st->w, z, 1);
    st->round++;
    st->pushed = 0;
    alg_start_step(ctx, i);
}

static void sgp_on_step_done(alg_ctx *ctx, void *state, int i, const double *grad)
{
    sgp_state *st = state;
    sgp_shared *sh = ctx->shared;
    alg_sgd_apply(ctx, i, st->x, grad, 1.0);
    const topo_digraph *d = graph_of(ctx, st->round);
    /* push-sum shares from the out-degree, whatever weights the graph
     * carries for mixing: columns then always sum to 1 */
    double p = 1.0 / (1.0 + (double)(d->out_off[i + 1] - d->out_off[i]));
    int kept = 0;   /* shares of excluded out-neighbours, which the node keeps */
    if (st->share)
        alg_buf_put(ctx, st->share);
    st->share = NULL;
    for (size_t e = d->out_off[i]; e < d->out_off[i + 1]; e++) {
        if (excluded(ctx, d->out_nbr[e], st->round)) {
            kept++;
            continue;
        }
        cl_buf *b = alg_buf_get(ctx);
        if (ctx->P > 0) {   /* timing only (no parameters): an empty payload */
            b->len = ctx->P + 1;
            for (size_t k = 0; k < ctx->P; k++)
                b->data[k] = p * st->x[k];
            b->data[ctx->P] = p * st->w;
            sh->in_flight_w += p * st->w;
            if (sh->in_flight_x)
                cblas_daxpy((int)ctx->P, 1.0, b->data, 1, sh->in_flight_x, 1);
        }
        alg_send(ctx, i, d->out_nbr[e], TAG_PUSH, st->round, b,
                alg_param_bytes(ctx, ctx->P + 1));
        if (!st->share) {   /* every share is the same: keep one to send again */
            cl_buf_ref(b);
            st->share = b;
            st->share_round = st->round;
        }
        alg_buf_put(ctx, b);
    }
    double keep = kept ? p * (1.0 + kept) : p;
    cblas_dscal((int)ctx->P, keep, st->x, 1);
    if (ctx->P > 0)
        st->w *= keep;
    st->pushed = 1;
    try_finish(ctx, st, i);
}

static void sgp_on_message(alg_ctx *ctx, void *state, int i, const cl_msg *m)
{
    sgp_state *st = state;
    sgp_shared *sh = ctx->shared;
    int tau = (int)ctx->param[P_OVERLAP];
    if (ctx->P > 0) {   /* off the wire, whatever becomes of it */
        sh->in_flight_w -= m->payload->data[ctx->P];
        if (sh->in_flight_x)
            cblas_daxpy((int)ctx->P, -1.0, m->payload->data, 1, sh->in_flight_x, 1);
    }
    if (m->round < (tau ? st->next_full : st->round)) {
        /* a round closed without the sender, or one from before this node
         * rejoined (one of the two excluded then): its mass is kept; else
         * a copy resent by a sender that came back */
        if ((excluded(ctx, m->from, m->round) || excluded(ctx, i, m->round)) && ctx->P > 0) {
            cblas_daxpy((int)ctx->P, 1.0, m->payload->data, 1, st->x, 1);
            st->w += m->payload->data[ctx->P];
        }
        return;
    }
    slot *s = slot_of(ctx, st, m->round);
    if (slot_has(s, m->from))
        return;   /* resent after its sender came back */
    if (ctx->P > 0)
        cblas_daxpy((int)ctx->P + 1, 1.0, m->payload->data, 1, s->acc, 1);
    if (s->count >= s->from_cap) {
        int cap = s->from_cap ? 2 * s->from_cap : 4;
        int *f = realloc(s->from, (size_t)cap * sizeof *f);
        if (!f)
            alg_out_of_memory();
        s->from = f;
        s->from_cap = cap;
    }
    s->from[s->count++] = m->from;
    if (tau ? m->round <= st->round : m->round == st->round)
        try_finish(ctx, st, i);
}

/* The numerator and weight the nodes not declared failed hold (their
 * own and their mailboxes'; shares on the wire are not counted) into
 * acc (P + 1). */
static void live_mass(const alg_ctx *ctx, double *acc)
{
    memset(acc, 0, (ctx->P + 1) * sizeof(double));
    for (int i = 0; i < ctx->n; i++) {
        if (alg_is_failed(ctx, i))
            continue;
        const sgp_state *st = alg_state(ctx, i);
        cblas_daxpy((int)ctx->P, 1.0, st->x, 1, acc, 1);
        acc[ctx->P] += st->w;
        for (int k = 0; k < st->n_slots; k++)
            if (st->slots[k].round != UINT64_MAX)
                cblas_daxpy((int)ctx->P + 1, 1.0, st->slots[k].acc, 1, acc, 1);
    }
}

/* The detector declared peer failed (nodes stop waiting for its shares
 * and keep the shares they would send it, each learning it by a timer of
 * its own: a down node's is dropped and it looks again when it returns),
 * or back: it rejoins at the round after the furthest any live node has
 * begun, so no live node has pushed to it or waited for it in a round it
 * does not take part in. */
static void sgp_on_failure(alg_ctx *ctx, int peer, int failed)
{
    sgp_shared *sh = ctx->shared;
    sh->failures = 1;
    if (failed) {
        for (int i = 0; i < ctx->n; i++)
            if (i != peer && !alg_is_failed(ctx, i))
                alg_set_timer(ctx, i, 0, TIMER_DECLARED);
        live_mass(ctx, sh->live_ref);
        return;
    }
    uint64_t r = 0;
    for (int i = 0; i < ctx->n; i++) {
        const sgp_state *st = alg_state(ctx, i);
        if (i != peer && !alg_is_failed(ctx, i) && st->round > r)
            r = st->round;
    }
    sh->join[peer] = r + 1;
}

/* Back up.  Declared and back: it starts its join round with the weight it
 * held and the numerator w z of its parameters as faults.rejoin left them
 * (its own last model, or its neighbour's), plus every share that had
 * reached it.  Back before it was declared: it is still in its round; the
 * shares it pushed as it went down may be lost, so it sends them again
 * (receivers drop copies). */
static void sgp_on_return(alg_ctx *ctx, void *state, int i)
{
    sgp_state *st = state;
    sgp_shared *sh = ctx->shared;
    int P = (int)ctx->P;
    if (st->round >= sh->join[i]) {
        const topo_digraph *d = st->share ? graph_of(ctx, st->share_round) : NULL;
        uint64_t open = ctx->param[P_OVERLAP] > 0 ? st->next_full : st->round;
        for (size_t e = d ? d->out_off[i] : 0; d && st->share_round >= open
                                               && e < d->out_off[i + 1]; e++) {
            if (excluded(ctx, d->out_nbr[e], st->share_round))
                continue;
            if (P > 0) {
                sh->in_flight_w += st->share->data[P];
                if (sh->in_flight_x)
                    cblas_daxpy(P, 1.0, st->share->data, 1, sh->in_flight_x, 1);
            }
            alg_send(ctx, i, d->out_nbr[e], TAG_PUSH, st->share_round, st->share,
                     alg_param_bytes(ctx, ctx->P + 1));
        }
        try_finish(ctx, st, i);
        return;
    }
    alg_abort_step(ctx, i);
    double *z = alg_params(ctx, i);
    for (int k = 0; k < P; k++) {
        double x = st->w * z[k];
        if (sh->x0_sum)   /* the mass the rejoin puts in or takes out */
            sh->x0_sum[k] += x - st->x[k];
        st->x[k] = x;
    }
    for (int k = 0; k < st->n_slots; k++) {
        slot *sl = &st->slots[k];
        if (sl->round == UINT64_MAX)
            continue;
        cblas_daxpy(P, 1.0, sl->acc, 1, st->x, 1);
        if (P > 0)
            st->w += sl->acc[P];
        memset(sl->acc, 0, (ctx->P + 1) * sizeof(double));
        sl->count = 0;
        sl->round = UINT64_MAX;
    }
    memcpy(z, st->x, ctx->P * sizeof(double));
    cblas_dscal(P, 1.0 / st->w, z, 1);
    st->round = st->next_full = sh->join[i];
    st->pushed = 0;
    live_mass(ctx, sh->live_ref);
    alg_start_step(ctx, i);
}

static void sgp_on_timer(alg_ctx *ctx, void *state, int i, uint32_t tag)
{
    (void)tag;
    try_finish(ctx, state, i);
}

static void sgp_describe_wait(const alg_ctx *ctx, const void *state, int i, char *buf,
                              size_t size)
{
    const sgp_state *st = state;
    if (alg_is_computing(ctx, i))
        snprintf(buf, size, "its step of round %llu", (unsigned long long)st->round);
    else if (ctx->param[P_OVERLAP] > 0)
        snprintf(buf, size, "push-sum shares of round %llu from its in-neighbours",
                 (unsigned long long)st->next_full);
    else
        snprintf(buf, size, "push-sum shares of round %llu from its in-neighbours",
                 (unsigned long long)st->round);
}

static int sgp_stats(const alg_ctx *ctx, const char **keys, double *values, int max)
{
    const sgp_shared *sh = ctx->shared;
    if (max < 1)
        return 0;
    double sum = sh->in_flight_w;
    for (int i = 0; i < ctx->n; i++) {
        const sgp_state *st = alg_state(ctx, i);
        sum += st->w;
        for (int k = 0; k < st->n_slots; k++)
            if (st->slots[k].round != UINT64_MAX)
                sum += st->slots[k].acc[ctx->P];
    }
    keys[0] = "weight_sum_error";
    values[0] = fabs(sum - ctx->n);
    int m = 1;
    if (sh->failures && ctx->P > 0 && max >= 5) {
        /* the live nodes' held mass: its weight, the weight and de-biased
         * average against the last membership change (exact with lr 0 and
         * nothing on the wire), and how far the live models are from that
         * average */
        double *now = calloc(ctx->P + 1, sizeof(double));
        if (!now)
            alg_out_of_memory();
        live_mass(ctx, now);
        double wl = now[ctx->P], wr = sh->live_ref[ctx->P], avg = 0, cons = 0;
        for (size_t k = 0; k < ctx->P; k++) {
            double a = now[k] / wl, e = fabs(a - sh->live_ref[k] / wr);
            if (e > avg)
                avg = e;
            for (int i = 0; i < ctx->n; i++) {
                double c = fabs(alg_params_const(ctx, i)[k] - a);
                if (!alg_is_failed(ctx, i) && c > cons)
                    cons = c;
            }
        }
        free(now);
        static const char *const live_keys[] = { "live_weight", "live_weight_error",
                                                 "live_average_error", "live_consensus_error" };
        const double live[4] = { wl, fabs(wl - wr), avg, cons };
        for (m = 1; m <= 4; m++) {
            keys[m] = live_keys[m - 1];
            values[m] = live[m - 1];
        }
    }
    if (!sh->x0_sum || max < m + 1)
        return m;
    /* the push-sum average (all numerators / n) against the initial mean */
    double worst = 0;
    for (size_t k = 0; k < ctx->P; k++) {
        double x = sh->in_flight_x[k];
        for (int i = 0; i < ctx->n; i++) {
            const sgp_state *st = alg_state(ctx, i);
            x += st->x[k];
            for (int j = 0; j < st->n_slots; j++)
                if (st->slots[j].round != UINT64_MAX)
                    x += st->slots[j].acc[k];
        }
        double e = fabs(x - sh->x0_sum[k]) / ctx->n;
        if (e > worst)
            worst = e;
    }
    keys[m] = "average_error";
    values[m] = worst;
    return m + 1;
}

const alg_type alg_sgp = {
    .name = "sgp",
    .summary = "push-sum on directed and time-varying graphs (Assran et al. 2019)",
    .state_size = sizeof(sgp_state),
    .params = params,
    .check = sgp_check,
    .memory_bytes = sgp_memory_bytes,
    .shared_init = sgp_shared_init,
    .shared_fini = sgp_shared_fini,
    .init = sgp_init,
    .on_start = sgp_on_start,
    .on_step_done = sgp_on_step_done,
    .on_message = sgp_on_message,
    .on_timer = sgp_on_timer,
    .on_failure = sgp_on_failure,
    .on_return = sgp_on_return,
    .describe_wait = sgp_describe_wait,
    .stats = sgp_stats,
    .fini = sgp_fini,
};
