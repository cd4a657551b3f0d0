/* alg_sdfeel_async.c -- asynchronous SD-FEEL with staleness-aware
 * aggregation (Sun, Shao, Mao, Zhang, "Asynchronous Semi-Decentralized
 * Federated Edge Learning for Heterogeneous Clients", IEEE ICC 2022 /
 * arXiv 2112.04737, and the journal version, Sun, Shao, Mao, Wang, Zhang,
 * "Semi-Decentralized Federated Edge Learning with Data and Device
 * Heterogeneity", IEEE TNSM 2023): edge servers aggregate on deadlines of
 * their own, whatever their clients have sent, weighting each model by its
 * data share and its staleness, and mix with each model a neighbour
 * server sends as it comes, without waiting for any.
 *
 * Timing: the workers are split into `clusters` blocks of consecutive
 * nodes as in sdfeel, one edge server each (nodes n .. n + clusters - 1).
 * A client takes `local_steps` SGD steps from the model of aggregation v
 * it last received, sends its model (tagged v) to its server and waits
 * for the next one.  Every `deadline_s` seconds server c aggregates the
 * models that came since its last aggregation t: a model of staleness
 * s = t - v weighs w_i = (m_i / m_c) (1 + s)^-a (a = `staleness_exponent`,
 * m_i the client's samples, m_c the cluster's; the papers' own staleness
 * rule could not be found, so this is FedAsync's polynomial function and
 * mixing form, Xie et al. 2019: docs/algorithms.md), and y_c <- (1 - sum w_i)
 * y_c + sum w_i x_i, so the share of the clients still computing stays
 * with the server's model; with every client fresh and in, it is sdfeel's
 * y_c = sum (m_i / m_c) x_i.  No model in: nothing happens until the next
 * deadline.  The server then sends its model to the clients that reported
 * (the others go on computing and report later, staler).  After every
 * `edge_rounds` aggregations it sends its model to its graph neighbours
 * (alg_sdgraph.c); a server that receives neighbour d's model mixes it in
 * at once, y_c <- (1 - P_cd) y_c + P_cd y_d (pairwise asynchronous gossip:
 * mixing at the deadline with the last copies instead would weigh the
 * neighbours' previous period by 1 - P_cc and keep only P_cc of each
 * period's progress).  Nothing waits for a neighbour.  Evaluation: the
 * workers' average.
 *
 * When a node fails (docs/algorithms.md): nothing waits for a client; a
 * client back while waiting sends its model again (the server counts one
 * per client and version).  A server down loses its deadline timer: back,
 * it sets it again and sends its model to every client of its cluster that
 * waits; its neighbours go on mixing with the others.
 */
#include "alg.h"
#include "alg_sdgraph.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <gsl/gsl_cblas.h>

enum { P_CLUSTERS, P_LOCAL_STEPS, P_EDGE_ROUNDS, P_DEADLINE, P_STALE_EXP, P_SDG };
enum { TAG_UP = 1, TAG_DOWN = 2, TAG_GOSSIP = 3 };

static const alg_param_spec params[] = {
    { "clusters", ALG_PARAM_INT, 2, 1, 1e9, NULL,
      "edge servers, each aggregating one cluster of clients" },
    { "local_steps", ALG_PARAM_INT, 2, 1, 1e9, NULL,
      "tau_1: local steps before a client sends its model" },
    { "edge_rounds", ALG_PARAM_INT, 1, 1, 1e9, NULL,
      "tau_2: edge aggregations between two mixings with the neighbour servers" },
    { "deadline_s", ALG_PARAM_REAL, 0.1, 1e-9, 1e300, NULL,
      "seconds between two aggregations of an edge server" },
    { "staleness_exponent", ALG_PARAM_REAL, 0.5, 0, 100, NULL,
      "a of FedAsync's (1 + s)^-a: a model of staleness s weighs that much of its data share" },
    ALG_SDG_PARAMS,
    { NULL, 0, 0, 0, 0, NULL, NULL },
};

typedef struct sa_state {
    /* client */
    int      local, waiting;
    uint64_t base;        /* the aggregation its model started from */
    /* server */
    uint64_t t;           /* aggregations */
    double  *acc;         /* sum w_i x_i of this period */
    double   wsum;
    char    *reported;    /* cluster size: reported this period */
    uint64_t *last_v;     /* cluster size: the version last counted, + 1 (0: none) */
    uint64_t applied;
    double   stale_sum;
    uint64_t stale_max;
} sa_state;

static int n_clusters(const alg_ctx *ctx) { return (int)ctx->param[P_CLUSTERS]; }
static int sa_n_servers(const alg_ctx *ctx) { return n_clusters(ctx); }
static const alg_sdg *graph(const alg_ctx *ctx) { return ctx->shared; }
static int is_server(const alg_ctx *ctx, int node) { return node >= ctx->n; }
static int server_of(const alg_ctx *ctx, int c) { return ctx->n + c; }

/* The clusters of sdfeel (alg_sdgraph.h). */
static int cluster_lo(const alg_ctx *ctx, int c) { return alg_sdc_lo(ctx->n, n_clusters(ctx), c); }
static int cluster_hi(const alg_ctx *ctx, int c) { return alg_sdc_hi(ctx->n, n_clusters(ctx), c); }
static int cluster_of(const alg_ctx *ctx, int w) { return alg_sdc_of(ctx->n, n_clusters(ctx), w); }
static double cluster_samples(const alg_ctx *ctx, int c)
{
    return alg_sdc_samples(ctx, n_clusters(ctx), c);
}

static int sa_check(const alg_ctx *ctx, char *err, size_t size)
{
    return alg_sdc_check(ctx, "sdfeel-async", P_SDG, n_clusters(ctx), err, size);
}

static int sa_shared_init(alg_ctx *ctx) { return alg_sdc_shared_init(ctx, P_SDG, n_clusters(ctx)); }

static int sa_init(alg_ctx *ctx, void *state, int node)
{
    sa_state *st = state;
    if (!is_server(ctx, node))
        return 0;
    int c = node - ctx->n;
    size_t P = ctx->P ? ctx->P : 1, k = (size_t)(cluster_hi(ctx, c) - cluster_lo(ctx, c));
    st->acc = calloc(P, sizeof(double));
    st->reported = calloc(k, 1);
    st->last_v = calloc(k, sizeof *st->last_v);
    return st->acc && st->reported && st->last_v ? 0 : -1;
}

static void sa_fini(alg_ctx *ctx, void *state, int node)
{
    (void)ctx;
    (void)node;
    sa_state *st = state;
    free(st->acc);
    free(st->reported);
    free(st->last_v);
}

static void send_model(alg_ctx *ctx, int from, int to, uint32_t tag, uint64_t round)
{
    cl_buf *x = alg_snapshot(ctx, from);
    alg_send(ctx, from, to, tag, round, x, alg_param_bytes(ctx, ctx->P));
    alg_buf_put(ctx, x);
}

static void sa_on_start(alg_ctx *ctx, void *state, int node)
{
    (void)state;
    if (is_server(ctx, node))
        alg_set_timer(ctx, node, ctx->param[P_DEADLINE], 0);
    else
        alg_start_step(ctx, node);
}

/* Server c's model to its graph neighbours not declared failed. */
static void send_to_neighbours(alg_ctx *ctx, const sa_state *st, int c)
{
    const alg_sdg *g = graph(ctx);
    for (size_t k = g->off[c]; k < g->off[c + 1]; k++) {
        int d = server_of(ctx, g->nbr[k]);
        if (!alg_is_failed(ctx, d))
            send_model(ctx, server_of(ctx, c), d, TAG_GOSSIP, st->t);
    }
}

/* The deadline: aggregate what came, answer those clients, send to the
 * neighbours every edge_rounds aggregations, set the next deadline. */
static void deadline(alg_ctx *ctx, sa_state *st, int c)
{
    int s = server_of(ctx, c), lo = cluster_lo(ctx, c), hi = cluster_hi(ctx, c);
    alg_set_timer(ctx, s, ctx->param[P_DEADLINE], 0);
    if (!(st->wsum > 0))
        return;
    double *x = alg_params(ctx, s);
    cblas_dscal((int)ctx->P, 1.0 - st->wsum, x, 1);
    cblas_daxpy((int)ctx->P, 1.0, st->acc, 1, x, 1);
    memset(st->acc, 0, ctx->P * sizeof(double));
    st->wsum = 0;
    st->t++;
    if (n_clusters(ctx) > 1 && st->t % (uint64_t)ctx->param[P_EDGE_ROUNDS] == 0)
        send_to_neighbours(ctx, st, c);
    for (int w = lo; w < hi; w++)
        if (st->reported[w - lo]) {
            st->reported[w - lo] = 0;
            if (!alg_is_failed(ctx, w))
                send_model(ctx, s, w, TAG_DOWN, st->t);
        }
}

static void sa_on_timer(alg_ctx *ctx, void *state, int i, uint32_t tag)
{
    (void)tag;
    deadline(ctx, state, i - ctx->n);
}

static void sa_on_step_done(alg_ctx *ctx, void *state, int i, const double *grad)
{
    sa_state *st = state;
    alg_sgd_apply(ctx, i, alg_params(ctx, i), grad, 1.0);
    if (++st->local < (int)ctx->param[P_LOCAL_STEPS]) {
        alg_start_step(ctx, i);
        return;
    }
    st->local = 0;
    st->waiting = 1;
    send_model(ctx, i, server_of(ctx, cluster_of(ctx, i)), TAG_UP, st->base);
}

static void server_receive(alg_ctx *ctx, sa_state *st, int c, const cl_msg *m)
{
    if (m->tag == TAG_GOSSIP) {
        const alg_sdg *g = graph(ctx);
        int k = alg_sdg_index(g, c, m->from - ctx->n);
        if (k < 0)
            return;
        double p = g->w[g->off[c] + (size_t)k], *x = alg_params(ctx, server_of(ctx, c));
        cblas_dscal((int)ctx->P, 1.0 - p, x, 1);
        cblas_daxpy((int)ctx->P, p, m->payload->data, 1, x, 1);
        return;
    }
    int j = m->from - cluster_lo(ctx, c);
    if (st->last_v[j] == m->round + 1)
        return;   /* a copy sent again after a return */
    st->last_v[j] = m->round + 1;
    uint64_t s = st->t - m->round;
    /* its data share (the timing-only model holds no data: equal shares) */
    double mi = (double)alg_local_samples(ctx, m->from), mc = cluster_samples(ctx, c);
    if (!(mc > 0)) {
        mi = 1;
        mc = cluster_hi(ctx, c) - cluster_lo(ctx, c);
    }
    double w = mi / mc * pow(1.0 + (double)s, -ctx->param[P_STALE_EXP]);
    cblas_daxpy((int)ctx->P, w, m->payload->data, 1, st->acc, 1);
    st->wsum += w;
    st->reported[j] = 1;
    st->applied++;
    st->stale_sum += (double)s;
    if (s > st->stale_max)
        st->stale_max = s;
}

static void sa_on_message(alg_ctx *ctx, void *state, int i, const cl_msg *m)
{
    sa_state *st = state;
    if (is_server(ctx, i)) {
        server_receive(ctx, st, i - ctx->n, m);
        return;
    }
    if (!st->waiting)
        return;   /* computing: it reports on its own model first */
    memcpy(alg_params(ctx, i), m->payload->data, ctx->P * sizeof(double));
    st->base = m->round;
    st->waiting = 0;
    alg_start_step(ctx, i);
}

/* A server back: its deadline again, and its model to every waiting
 * client of its cluster (what they sent may have been lost while it was
 * down).  A client back while waiting: its model again. */
static void sa_on_return(alg_ctx *ctx, void *state, int i)
{
    sa_state *st = state;
    if (!is_server(ctx, i)) {
        if (st->waiting)
            send_model(ctx, i, server_of(ctx, cluster_of(ctx, i)), TAG_UP, st->base);
        return;
    }
    int c = i - ctx->n;
    alg_set_timer(ctx, i, ctx->param[P_DEADLINE], 0);
    for (int w = cluster_lo(ctx, c); w < cluster_hi(ctx, c); w++)
        if (((const sa_state *)alg_state(ctx, w))->waiting && !alg_is_failed(ctx, w))
            send_model(ctx, i, w, TAG_DOWN, st->t);
}

static void sa_describe_wait(const alg_ctx *ctx, const void *state, int i, char *buf,
                             size_t size)
{
    const sa_state *st = state;
    if (is_server(ctx, i))
        snprintf(buf, size, "its next deadline");
    else if (st->waiting)
        snprintf(buf, size, "the model of its edge server after aggregation %llu",
                 (unsigned long long)st->base);
    else
        snprintf(buf, size, "its step");
}

/* Every server's deadline timer, whatever the steps. */
static double sa_timer_rate(const alg_ctx *ctx)
{
    return n_clusters(ctx) / ctx->param[P_DEADLINE];
}

/* Models aggregated, their mean and largest staleness, the fewest and
 * most aggregations over the servers. */
static int sa_stats(const alg_ctx *ctx, const char **keys, double *values, int max)
{
    double n = 0, sum = 0, smax = 0, tmin = 0, tmax = 0;
    for (int c = 0; c < n_clusters(ctx); c++) {
        const sa_state *st = alg_state(ctx, server_of(ctx, c));
        double t = (double)st->t;
        n += (double)st->applied;
        sum += st->stale_sum;
        smax = (double)st->stale_max > smax ? (double)st->stale_max : smax;
        tmin = c == 0 || t < tmin ? t : tmin;
        tmax = c == 0 || t > tmax ? t : tmax;
    }
    static const char *const k[5] = { "models_aggregated", "staleness_mean", "staleness_max",
                                      "aggregations_min", "aggregations_max" };
    double v[5] = { n, n > 0 ? sum / n : 0, smax, tmin, tmax };
    return alg_stats_copy(k, v, 5, keys, values, max);
}

const alg_type alg_sdfeel_async = {
    .name = "sdfeel-async",
    .summary = "SD-FEEL with deadline-driven edge aggregation (Sun et al. 2022), FedAsync's "
               "staleness weight",
    .state_size = sizeof(sa_state),
    .params = params,
    .n_servers = sa_n_servers,
    .check = sa_check,
    .shared_init = sa_shared_init,
    .shared_fini = alg_sdc_shared_fini,
    .init = sa_init,
    .timer_rate = sa_timer_rate,
    .on_start = sa_on_start,
    .on_step_done = sa_on_step_done,
    .on_message = sa_on_message,
    .on_timer = sa_on_timer,
    .on_return = sa_on_return,
    .describe_wait = sa_describe_wait,
    .stats = sa_stats,
    .fini = sa_fini,
};
