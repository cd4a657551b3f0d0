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
 * average_error).  The weights p are
 * column-stochastic (each sender splits what it has), so with no message
 * lost the weights in nodes, in flight and in early mailboxes always add up
 * to n (run.json: weight_sum_error, exactly 0 for dyadic weights).
 *
 * `graph` picks the graph of every round: "topology" (the scenario's graph,
 * each edge both ways, p_ji = 1/(1+outdeg_i)), "exponential" (the directed
 * exponential graph i -> i + 2^b), or a time-varying schedule:
 * "one_peer_exponential" (round k: i -> i + 2^(k mod log2 n), the paper's
 * choice), "random_matching", "random_k_out" (`peers` random out-neighbours
 * per round), "file" (the rounds of `graph_file`, cycled).
 */
#include "alg.h"

#include <assert.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <gsl/gsl_cblas.h>

enum { P_GRAPH, P_PEERS, P_GRAPH_FILE, P_OVERLAP };
enum { G_TOPOLOGY, G_EXPONENTIAL, G_ONE_PEER, G_MATCHING, G_K_OUT, G_FILE };
enum { TAG_PUSH = 1 };

static const char *const graph_names[] = { "topology", "exponential", "one_peer_exponential",
                                           "random_matching", "random_k_out", "file", NULL };

static const alg_param_spec params[] = {
    { "graph", ALG_PARAM_CHOICE, G_ONE_PEER, 0, 0, graph_names,
      "the directed graph of each round" },
    { "peers", ALG_PARAM_INT, 1, 1, 1e9, NULL, "out-neighbours per round with graph random_k_out" },
    { "graph_file", ALG_PARAM_PATH, 0, 0, 0, NULL,
      "with graph file: lines \"round u v\", relative to the scenario" },
    { "overlap", ALG_PARAM_INT, 0, 0, 1000, NULL,
      "tau: rounds of incoming shares a node may go on without; 0: synchronous" },   /* tau */
    { NULL, 0, 0, 0, 0, NULL, NULL },
};

/* One round's graph, copied out of the schedule (nodes may be in different
 * rounds at once). */
typedef struct round_graph {
    uint64_t round;
    int      valid;
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
} sgp_shared;

typedef struct slot {
    uint64_t round;
    int      count;
    double  *acc;       /* P + 1: numerator and weight */
} slot;

typedef struct sgp_state {
    double  *x;          /* numerator */
    double   w;
    uint64_t round;
    int      pushed;     /* this round's shares are sent */
    uint64_t next_full;  /* tau > 0: rounds before it have all their shares in */
    slot    *slots;
    int      n_slots;
} sgp_state;

static void copy_digraph(topo_digraph *dst, const topo_digraph *src)
{
    int n = src->n;
    size_t a = src->n_arcs;
    if (!dst->out_off) {   /* buffers sized for the largest round: n*n arcs is too
                              much, so grow as needed */
        dst->out_off = malloc((size_t)(n + 1) * sizeof(size_t));
        dst->in_off = malloc((size_t)(n + 1) * sizeof(size_t));
        dst->self_w = malloc((size_t)n * sizeof(double));
        if (!dst->out_off || !dst->in_off || !dst->self_w)
            alg_out_of_memory();
    }
    if (dst->n_arcs < a || !dst->out_nbr) {
        dst->out_nbr = realloc(dst->out_nbr, (a ? a : 1) * sizeof(int));
        dst->in_nbr = realloc(dst->in_nbr, (a ? a : 1) * sizeof(int));
        dst->out_w = realloc(dst->out_w, (a ? a : 1) * sizeof(double));
        dst->in_w = realloc(dst->in_w, (a ? a : 1) * sizeof(double));
        if (!dst->out_nbr || !dst->in_nbr || !dst->out_w || !dst->in_w)
            alg_out_of_memory();
    }
    dst->n = n;
    dst->n_arcs = a;
    memcpy(dst->out_off, src->out_off, (size_t)(n + 1) * sizeof(size_t));
    memcpy(dst->in_off, src->in_off, (size_t)(n + 1) * sizeof(size_t));
    memcpy(dst->self_w, src->self_w, (size_t)n * sizeof(double));
    memcpy(dst->out_nbr, src->out_nbr, a * sizeof(int));
    memcpy(dst->in_nbr, src->in_nbr, a * sizeof(int));
    memcpy(dst->out_w, src->out_w, a * sizeof(double));
    memcpy(dst->in_w, src->in_w, a * sizeof(double));
}

/* The graph of round k. */
static const topo_digraph *graph_of(const alg_ctx *ctx, uint64_t k)
{
    sgp_shared *sh = ctx->shared;
    if (sh->fixed)
        return sh->fixed;
    round_graph *c = &sh->cache[k % CACHE];
    if (!c->valid || c->round != k) {
        copy_digraph(&c->d, topo_schedule_round(sh->sched, k));
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
    for (int c = 0; c < CACHE; c++) {
        topo_digraph *d = &sh->cache[c].d;
        free(d->out_off);
        free(d->in_off);
        free(d->out_nbr);
        free(d->in_nbr);
        free(d->out_w);
        free(d->in_w);
        free(d->self_w);
    }
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
    (void)ctx;
    (void)node;
    sgp_state *st = state;
    for (int k = 0; k < st->n_slots; k++)
        free(st->slots[k].acc);
    free(st->slots);
    free(st->x);
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
    n->acc = calloc(ctx->P + 1, sizeof(double));
    if (!n->acc)
        alg_out_of_memory();
    return n;
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

static slot *find_slot(sgp_state *st, uint64_t round)
{
    for (int k = 0; k < st->n_slots; k++)
        if (st->slots[k].round == round)
            return &st->slots[k];
    return NULL;
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
    while (st->next_full <= k) {
        const topo_digraph *d = graph_of(ctx, st->next_full);
        int need = (int)(d->in_off[i + 1] - d->in_off[i]);
        const slot *s = need > 0 ? find_slot(st, st->next_full) : NULL;
        if (need > 0 && (!s || s->count < need))
            break;
        st->next_full++;
    }
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
    const topo_digraph *d = graph_of(ctx, st->round);
    int need = (int)(d->in_off[i + 1] - d->in_off[i]);
    slot *s = NULL;
    if (need > 0) {
        s = slot_of(ctx, st, st->round);
        if (!st->pushed || s->count < need)
            return;
    } else if (!st->pushed) {
        return;
    }
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
    for (size_t e = d->out_off[i]; e < d->out_off[i + 1]; e++) {
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
        alg_buf_put(ctx, b);
    }
    cblas_dscal((int)ctx->P, p, st->x, 1);
    if (ctx->P > 0)
        st->w *= p;
    st->pushed = 1;
    try_finish(ctx, st, i);
}

static void sgp_on_message(alg_ctx *ctx, void *state, int i, const cl_msg *m)
{
    sgp_state *st = state;
    sgp_shared *sh = ctx->shared;
    int tau = (int)ctx->param[P_OVERLAP];
    assert(m->round >= (tau ? st->next_full : st->round));
    slot *s = slot_of(ctx, st, m->round);
    if (ctx->P > 0) {
        cblas_daxpy((int)ctx->P + 1, 1.0, m->payload->data, 1, s->acc, 1);
        sh->in_flight_w -= m->payload->data[ctx->P];
        if (sh->in_flight_x)
            cblas_daxpy((int)ctx->P, -1.0, m->payload->data, 1, sh->in_flight_x, 1);
    }
    s->count++;
    if (tau ? m->round <= st->round : m->round == st->round)
        try_finish(ctx, st, i);
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
    if (!sh->x0_sum || max < 2)
        return 1;
    /* the push-sum average (numerators in nodes, mailboxes and flight, over
     * n) against the initial mean: exact with lr 0 */
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
    keys[1] = "average_error";
    values[1] = worst;
    return 2;
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
    .describe_wait = sgp_describe_wait,
    .stats = sgp_stats,
    .fini = sgp_fini,
};
