/* alg_sdfeel.c -- SD-FEEL, semi-decentralized federated edge learning
 * (Sun, Shao, Mao, Zhang, "Semi-Decentralized Federated Edge Learning for
 * Fast Convergence on Non-IID Data", IEEE WCNC 2022 / arXiv 2104.12678;
 * Sun, Shao, Mao, Wang, Zhang, "Semi-Decentralized Federated Edge Learning
 * with Data and Device Heterogeneity", IEEE TNSM 2023 / arXiv 2112.10313):
 * clients train locally and aggregate at their edge server; edge servers
 * average with their neighbouring edge servers.
 *
 * Timing: the workers are split into `clusters` blocks of consecutive
 * nodes, each with its own edge server (one extra node per cluster, nodes
 * n .. n + clusters - 1).  A client takes `local_steps` SGD steps, sends its
 * model to its server and waits.  When a server has all its clients'
 * models it sets its model to their average weighted by sample counts.
 * After every `edge_rounds` such aggregations the servers run
 * `gossip_rounds` (alpha) gossip rounds among themselves on the server
 * graph (alg_sdgraph.c: any topology kind, a ring by default; each server
 * sends its model to its neighbour servers, waits for theirs of the same
 * round, and mixes y_c <- P_cc y_c + sum_d P_cd y_d with the graph's
 * Metropolis-Hastings weights -- 1/3 each on a ring, 1/2 each with two
 * clusters, nothing with one -- or weights by cluster data size).  Then the
 * server sends its model to its clients, who install it and start their
 * next local steps.  Evaluation: the average of the workers' models.
 *
 * When a node fails (docs/algorithms.md): a declared client leaves its
 * cluster's aggregation; a declared edge server is waited for by its
 * clients only: its graph neighbours' gossip moves its weight to their own
 * and it rejoins at an agreed gossip round.
 */
#include "alg.h"
#include "alg_sdgraph.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <gsl/gsl_cblas.h>

enum { P_CLUSTERS, P_LOCAL_STEPS, P_EDGE_ROUNDS, P_GOSSIP_ROUNDS, P_SDG };
enum { TAG_UP = 1, TAG_DOWN = 2, TAG_GOSSIP = 3 };

static const alg_param_spec params[] = {
    { "clusters", ALG_PARAM_INT, 2, 1, 1e9, NULL,
      "edge servers, each aggregating one cluster of clients" },
    { "local_steps", ALG_PARAM_INT, 2, 1, 1e9, NULL,
      "tau_1: local steps between two edge aggregations" },
    { "edge_rounds", ALG_PARAM_INT, 1, 1, 1e9, NULL,
      "tau_2: edge aggregations between two gossip phases of the servers" },
    { "gossip_rounds", ALG_PARAM_INT, 1, 1, 1e6, NULL,
      "alpha: gossip rounds of the servers in each gossip phase" },
    ALG_SDG_PARAMS,
    { NULL, 0, 0, 0, 0, NULL, NULL },
};

typedef struct sd_state {
    /* client */
    int      local;
    int      waiting;
    int      member;      /* in its server's aggregation (the server's view) */
    int      reported;    /* its model of this aggregation came (the server's view) */
    /* server */
    int      missing;     /* members not declared failed that have not reported */
    double  *sum;         /* weighted sum of client models */
    double   weight;
    int      received;
    uint64_t aggregations, gossip_round;
    int      gossiping;   /* in a gossip phase */
    int      phase_left;  /* gossip rounds of the phase after the current one */
    double  *gacc[2];     /* neighbour server models (weighted) by round parity */
    int      gcnt[2];
    char    *gfrom[2];    /* degree each: neighbour k's model of that round is in gacc */
    uint64_t join;        /* back: a member of gossip rounds >= join (every server's view) */
} sd_state;

static int n_clusters(const alg_ctx *ctx) { return (int)ctx->param[P_CLUSTERS]; }
static int sd_n_servers(const alg_ctx *ctx) { return n_clusters(ctx); }

/* The clusters (alg_sdgraph.h): workers [c n / C, (c+1) n / C). */
static int cluster_lo(const alg_ctx *ctx, int c) { return alg_sdc_lo(ctx->n, n_clusters(ctx), c); }
static int cluster_hi(const alg_ctx *ctx, int c) { return alg_sdc_hi(ctx->n, n_clusters(ctx), c); }
static int cluster_of(const alg_ctx *ctx, int w) { return alg_sdc_of(ctx->n, n_clusters(ctx), w); }
static int server_of(const alg_ctx *ctx, int c) { return ctx->n + c; }
static int is_server(const alg_ctx *ctx, int node) { return node >= ctx->n; }

static const alg_sdg *graph(const alg_ctx *ctx) { return ctx->shared; }
static int n_server_nbrs(const alg_ctx *ctx, int c) { return alg_sdg_degree(graph(ctx), c); }

static int sd_check(const alg_ctx *ctx, char *err, size_t size)
{
    return alg_sdc_check(ctx, "sdfeel", P_SDG, n_clusters(ctx), err, size);
}

static int sd_shared_init(alg_ctx *ctx) { return alg_sdc_shared_init(ctx, P_SDG, n_clusters(ctx)); }

static int sd_init(alg_ctx *ctx, void *state, int node)
{
    sd_state *st = state;
    if (!is_server(ctx, node)) {
        st->member = 1;
        return 0;
    }
    int c = node - ctx->n;
    st->missing = cluster_hi(ctx, c) - cluster_lo(ctx, c);
    size_t P = ctx->P ? ctx->P : 1;
    st->sum = calloc(P, sizeof(double));
    st->gacc[0] = calloc(P, sizeof(double));
    st->gacc[1] = calloc(P, sizeof(double));
    size_t deg = (size_t)n_server_nbrs(ctx, c);
    st->gfrom[0] = calloc(deg ? 2 * deg : 1, 1);
    st->gfrom[1] = st->gfrom[0] + deg;
    return st->sum && st->gacc[0] && st->gacc[1] && st->gfrom[0] ? 0 : -1;
}

static void sd_fini(alg_ctx *ctx, void *state, int node)
{
    (void)ctx;
    (void)node;
    sd_state *st = state;
    free(st->sum);
    free(st->gacc[0]);
    free(st->gacc[1]);
    free(st->gfrom[0]);
}

static void sd_on_start(alg_ctx *ctx, void *state, int node)
{
    (void)state;
    if (!is_server(ctx, node))
        alg_start_step(ctx, node);
}

static void send_model(alg_ctx *ctx, int from, int to, uint32_t tag, uint64_t round)
{
    cl_buf *x = alg_snapshot(ctx, from);
    alg_send(ctx, from, to, tag, round, x, alg_param_bytes(ctx, ctx->P));
    alg_buf_put(ctx, x);
}

/* The cluster model goes to every client not declared failed, which are
 * the members of the next aggregation (a client back from a failure
 * included). */
static void to_clients(alg_ctx *ctx, int c)
{
    sd_state *ss = alg_state(ctx, server_of(ctx, c));
    ss->missing = 0;
    for (int w = cluster_lo(ctx, c); w < cluster_hi(ctx, c); w++) {
        sd_state *ws = alg_state(ctx, w);
        ws->reported = 0;
        ws->member = !alg_is_failed(ctx, w);
        if (!ws->member)
            continue;
        ss->missing++;
        send_model(ctx, server_of(ctx, c), w, TAG_DOWN, 0);
    }
}

/* Server c's k-th neighbour on the server graph (in increasing cyclic
 * distance: on a ring the next cluster's, then the previous one's). */
static int nbr_server(const alg_ctx *ctx, int c, int k)
{
    const alg_sdg *g = graph(ctx);
    return server_of(ctx, g->nbr[g->off[c] + (size_t)k]);
}

/* Whether server s is out of gossip round r: declared failed now, or back
 * and rejoining at a later round. */
static int excluded(const alg_ctx *ctx, int s, uint64_t r)
{
    return alg_is_failed(ctx, s) || r < ((const sd_state *)alg_state(ctx, s))->join;
}

/* The gossip round completes when the models of all its graph neighbours
 * not excluded are in; the weight of each excluded neighbour whose model
 * did not come moves to the server's own.  Rows of equal weights 1 / (1 +
 * degree) are mixed as (x (1 + absent) + sum of the models) / (1 +
 * degree); others as (P_cc + absent weights) x + sum of P_cd x_d.  The
 * phase goes on with its next round (alpha rounds in all), then the model
 * goes to the clients. */
static void send_gossip(alg_ctx *ctx, const sd_state *st, int c);

static int mix_round(alg_ctx *ctx, sd_state *st, int c)
{
    const alg_sdg *g = graph(ctx);
    int p = (int)(st->gossip_round & 1), need = n_server_nbrs(ctx, c), absent = 0;
    double moved = 0;
    for (int k = 0; k < need; k++) {
        if (st->gfrom[p][k])
            continue;
        if (!excluded(ctx, nbr_server(ctx, c, k), st->gossip_round))
            return 0;
        absent++;
        moved += g->w[g->off[c] + (size_t)k];
    }
    double *x = alg_params(ctx, server_of(ctx, c));
    if (g->uniform[c]) {
        if (absent)
            cblas_dscal((int)ctx->P, 1.0 + absent, x, 1);
        cblas_daxpy((int)ctx->P, 1.0, st->gacc[p], 1, x, 1);
        cblas_dscal((int)ctx->P, 1.0 / (1 + need), x, 1);
    } else {
        cblas_dscal((int)ctx->P, g->self[c] + moved, x, 1);
        cblas_daxpy((int)ctx->P, 1.0, st->gacc[p], 1, x, 1);
    }
    memset(st->gacc[p], 0, ctx->P * sizeof(double));
    st->gcnt[p] = 0;
    memset(st->gfrom[p], 0, (size_t)need);
    st->gossip_round++;
    return 1;
}

static void try_mix(alg_ctx *ctx, sd_state *st, int c)
{
    while (st->gossiping && mix_round(ctx, st, c)) {
        if (st->phase_left > 0) {   /* the phase's next round */
            st->phase_left--;
            send_gossip(ctx, st, c);
            continue;
        }
        st->gossiping = 0;
        to_clients(ctx, c);
    }
}

/* Server c's model of its gossip round to its graph neighbours not
 * excluded from it. */
static void send_gossip(alg_ctx *ctx, const sd_state *st, int c)
{
    for (int k = 0; k < n_server_nbrs(ctx, c); k++)
        if (!excluded(ctx, nbr_server(ctx, c, k), st->gossip_round))
            send_model(ctx, server_of(ctx, c), nbr_server(ctx, c, k), TAG_GOSSIP,
                       st->gossip_round);
}

static void aggregated(alg_ctx *ctx, sd_state *st, int c)
{
    int s = server_of(ctx, c), C = n_clusters(ctx);
    double *x = alg_params(ctx, s);
    memcpy(x, st->sum, ctx->P * sizeof(double));
    cblas_dscal((int)ctx->P, 1.0 / st->weight, x, 1);
    memset(st->sum, 0, ctx->P * sizeof(double));
    st->weight = 0;
    st->received = 0;
    if (++st->aggregations % (uint64_t)ctx->param[P_EDGE_ROUNDS] != 0 || C == 1) {
        to_clients(ctx, c);
        return;
    }
    st->gossiping = 1;
    st->phase_left = (int)ctx->param[P_GOSSIP_ROUNDS] - 1;
    send_gossip(ctx, st, c);
    try_mix(ctx, st, c);
}

static void sd_on_step_done(alg_ctx *ctx, void *state, int i, const double *grad)
{
    sd_state *st = state;
    alg_sgd_apply(ctx, i, alg_params(ctx, i), grad, 1.0);
    if (++st->local < (int)ctx->param[P_LOCAL_STEPS]) {
        alg_start_step(ctx, i);
        return;
    }
    st->local = 0;
    st->waiting = 1;
    send_model(ctx, i, server_of(ctx, cluster_of(ctx, i)), TAG_UP, 0);
}

static void sd_on_message(alg_ctx *ctx, void *state, int i, const cl_msg *m)
{
    sd_state *st = state;
    if (!is_server(ctx, i)) {   /* the cluster model */
        if (!st->waiting)
            return;   /* sent before it was declared failed */
        memcpy(alg_params(ctx, i), m->payload->data, ctx->P * sizeof(double));
        st->waiting = 0;
        alg_start_step(ctx, i);
        return;
    }
    int c = i - ctx->n;
    if (m->tag == TAG_GOSSIP) {
        const alg_sdg *g = graph(ctx);
        int p = (int)(m->round & 1), k = alg_sdg_index(g, c, m->from - ctx->n);
        /* a round it mixed without its sender (excluded) or from before it
         * rejoined, or a copy sent again after its sender's return */
        if (k < 0 || m->round < st->gossip_round || st->gfrom[p][k])
            return;
        st->gfrom[p][k] = 1;
        cblas_daxpy((int)ctx->P, g->uniform[c] ? 1.0 : g->w[g->off[c] + (size_t)k],
                    m->payload->data, 1, st->gacc[p], 1);
        st->gcnt[p]++;
        if (m->round == st->gossip_round)
            try_mix(ctx, st, c);
        return;
    }
    sd_state *from = alg_state(ctx, m->from);
    if (!from->member || from->reported)
        return;   /* not in this aggregation, or sent again after a return */
    from->reported = 1;
    double w = (double)alg_local_samples(ctx, m->from);
    cblas_daxpy((int)ctx->P, w, m->payload->data, 1, st->sum, 1);
    st->weight += w;
    st->received++;
    if (!alg_is_failed(ctx, m->from))
        st->missing--;
    if (st->missing == 0)
        aggregated(ctx, st, c);
}

/* A client declared failed leaves its cluster's aggregation (its model is
 * in it if it came); back, it waits for the next cluster model and is a
 * member from the aggregation after.  An edge server declared failed is
 * waited for by its clients (their messages are retransmitted), not by the
 * other servers' gossip (try_mix); back, it is a member of the gossip round
 * after the furthest any other live server has reached. */
static void sd_on_failure(alg_ctx *ctx, int peer, int failed)
{
    if (is_server(ctx, peer)) {
        if (failed) {   /* its neighbours look again at the round they wait in */
            for (int k = 0; k < n_server_nbrs(ctx, peer - ctx->n); k++) {
                int s = nbr_server(ctx, peer - ctx->n, k);
                if (!alg_is_failed(ctx, s))
                    alg_set_timer(ctx, s, 0, 0);
            }
            return;
        }
        uint64_t r = 0;
        for (int c = 0; c < n_clusters(ctx); c++) {
            const sd_state *o = alg_state(ctx, server_of(ctx, c));
            if (server_of(ctx, c) != peer && !alg_is_failed(ctx, server_of(ctx, c))
                && o->gossip_round > r)
                r = o->gossip_round;
        }
        ((sd_state *)alg_state(ctx, peer))->join = r + 1;
        return;
    }
    if (!failed)
        return;
    sd_state *ws = alg_state(ctx, peer);
    int c = cluster_of(ctx, peer);
    sd_state *ss = alg_state(ctx, server_of(ctx, c));
    if (!ws->member || ws->reported)
        return;
    ws->member = 0;
    if (--ss->missing == 0 && ss->received > 0)
        aggregated(ctx, ss, c);
}

static void sd_on_timer(alg_ctx *ctx, void *state, int i, uint32_t tag)
{
    (void)tag;
    try_mix(ctx, state, i - ctx->n);
}

/* An edge server back: declared and back, it drops the gossip round it was
 * in (its neighbours mixed without it) and sends its model to its clients
 * if it was gossiping, or goes on aggregating (its clients' models come
 * with retransmission); back before it was declared, it sends its gossip
 * model again if it was gossiping (what it sent may be lost; receivers
 * drop copies). */
static void server_return(alg_ctx *ctx, sd_state *st, int i)
{
    int c = i - ctx->n;
    if (st->gossip_round < st->join) {
        st->gossip_round = st->join;
        for (int p = 0; p < 2; p++) {
            memset(st->gacc[p], 0, ctx->P * sizeof(double));
            memset(st->gfrom[p], 0, (size_t)n_server_nbrs(ctx, c));
            st->gcnt[p] = 0;
        }
        if (st->gossiping) {
            st->gossiping = 0;
            st->phase_left = 0;
            to_clients(ctx, c);
        }
    } else if (st->gossiping) {
        send_gossip(ctx, st, c);
        try_mix(ctx, st, c);
    }
}

static void sd_on_return(alg_ctx *ctx, void *state, int i)
{
    sd_state *st = state;
    if (is_server(ctx, i)) {
        server_return(ctx, st, i);
        return;
    }
    if (!st->member) {   /* declared meanwhile: it waits for the next cluster model */
        alg_abort_step(ctx, i);
        st->local = 0;
        st->waiting = 1;
    } else if (st->waiting && !st->reported) {   /* its model may be lost: again */
        send_model(ctx, i, server_of(ctx, cluster_of(ctx, i)), TAG_UP, 0);
    }
}

static void sd_describe_wait(const alg_ctx *ctx, const void *state, int i, char *buf,
                             size_t size)
{
    const sd_state *st = state;
    if (is_server(ctx, i))
        snprintf(buf, size, st->gossiping ? "neighbour edge servers' models"
                                          : "its clients' models");
    else if (st->waiting)
        snprintf(buf, size, "the cluster model from its edge server");
    else
        snprintf(buf, size, "its step");
}

/* The fewest and most gossip rounds and edge aggregations over the
 * servers. */
static int sd_stats(const alg_ctx *ctx, const char **keys, double *values, int max)
{
    double v[4] = { 0, 0, 0, 0 };
    for (int c = 0; c < n_clusters(ctx); c++) {
        const sd_state *st = alg_state(ctx, server_of(ctx, c));
        double r = (double)st->gossip_round, a = (double)st->aggregations;
        v[0] = c == 0 || r < v[0] ? r : v[0];
        v[1] = c == 0 || r > v[1] ? r : v[1];
        v[2] = c == 0 || a < v[2] ? a : v[2];
        v[3] = c == 0 || a > v[3] ? a : v[3];
    }
    static const char *const k[4] = { "gossip_rounds_min", "gossip_rounds_max",
                                      "aggregations_min", "aggregations_max" };
    return alg_stats_copy(k, v, 4, keys, values, max);
}

const alg_type alg_sdfeel = {
    .name = "sdfeel",
    .summary = "clusters aggregate at edge servers, edge servers gossip (Sun et al. 2021)",
    .state_size = sizeof(sd_state),
    .params = params,
    .n_servers = sd_n_servers,
    .check = sd_check,
    .shared_init = sd_shared_init,
    .shared_fini = alg_sdc_shared_fini,
    .init = sd_init,
    .on_start = sd_on_start,
    .on_step_done = sd_on_step_done,
    .on_message = sd_on_message,
    .on_timer = sd_on_timer,
    .on_failure = sd_on_failure,
    .on_return = sd_on_return,
    .describe_wait = sd_describe_wait,
    .stats = sd_stats,
    .fini = sd_fini,
};
