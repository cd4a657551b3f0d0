/* alg_adpsgd.c -- AD-PSGD, asynchronous decentralized parallel SGD (Lian,
 * Zhang, Zhang, Liu, "Asynchronous Decentralized Parallel Stochastic
 * Gradient Descent", ICML 2018), with the active/passive bipartite split
 * that the paper uses to avoid deadlock: only active nodes start an
 * averaging, and only with passive neighbours.
 *
 * Timing: every node computes gradients back to back, each on its
 * parameters as they are when the step starts (so averagings that land
 * during a step make the gradient stale, as in the paper).  A passive node
 * applies x <- x - lr g when its step ends.  An active node, when its step
 * ends, keeps the gradient, sends x_i to a neighbour j chosen uniformly at
 * random and starts its next step at once (computation overlaps
 * communication).  j, on receipt, sets x_j <- (x_j + x_i)/2 atomically and
 * replies with the average; i then sets x_i <- average - lr g.  An active
 * node has at most one averaging outstanding: a step that ends before the
 * reply waits for it, and the node idles until then.
 *
 * Failures (the paper has no failure model; this follows its atomic
 * averaging as far as a failure lets it).  An active node draws its peer
 * among the neighbours not declared failed (alg_is_failed: the k-th live
 * one for a uniform k, the plain draw when none has failed); with none
 * left it applies x <- x - lr g alone and goes on.  An averaging that a
 * declared failure of either side interrupts is abandoned: the active
 * node applies x_i <- x_i - lr g to its own model (unchanged since the
 * request) and goes on, so it never waits for a failed peer; a reply that
 * still comes later is ignored (it carries the averaging's number).  If
 * the passive side had averaged before it failed (its reply lost), it
 * keeps x_j = (x_j + x_i)/2 while x_i did not move: the pair's sum changes
 * by (x_i - x_j)/2, which no real system undoes either.  An active node
 * that comes back after being declared failed abandons its own pending
 * averaging the same way; its model is what faults.rejoin gives.
 */
#include "alg.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <gsl/gsl_cblas.h>

enum { TAG_REQUEST = 1, TAG_REPLY = 2 };

typedef struct ad_state {
    double  *gbuf;      /* active: gradient waiting for its averaging */
    double  *gnext;     /* active: gradient of a step that ended while waiting */
    int      waiting;   /* an averaging is outstanding */
    int      blocked;   /* gnext holds a gradient */
    int      peer;      /* who the outstanding averaging is with */
    uint64_t n_avg;     /* averagings completed or abandoned: the next one's number */
    uint64_t abandoned; /* averagings given up because of a declared failure */
    uint64_t alone;     /* gradients applied without averaging (no live neighbour) */
} ad_state;

static int is_active(const alg_ctx *ctx, int i) { return ctx->g->side[i] == 0; }

/* A neighbour drawn uniformly among those not declared failed, or -1
 * (no draw) when all are. */
static int live_peer(alg_ctx *ctx, int i)
{
    const topo_graph *g = ctx->g;
    size_t live = 0;
    for (size_t e = g->off[i]; e < g->off[i + 1]; e++)
        live += !alg_is_failed(ctx, g->nbr[e]);
    if (live == 0)
        return -1;
    size_t k = gsl_rng_uniform_int(alg_rng(ctx, i), live);
    for (size_t e = g->off[i];; e++)
        if (!alg_is_failed(ctx, g->nbr[e]) && k-- == 0)
            return g->nbr[e];
}

/* Starts an averaging of gbuf's step with a live neighbour; with none,
 * applies the gradient alone.  Returns whether an averaging is pending. */
static int request_average(alg_ctx *ctx, ad_state *st, int i)
{
    int j = live_peer(ctx, i);
    if (j < 0) {
        alg_sgd_apply(ctx, i, alg_params(ctx, i), st->gbuf, 1.0);
        st->alone++;
        return 0;
    }
    cl_buf *x = alg_snapshot(ctx, i);
    alg_send(ctx, i, j, TAG_REQUEST, st->n_avg, x, alg_param_bytes(ctx, ctx->P));
    alg_buf_put(ctx, x);
    st->waiting = 1;
    st->peer = j;
    return 1;
}

/* The averaging is over (its reply applied, or abandoned): a step that
 * ended meanwhile starts the next one. */
static void averaging_over(alg_ctx *ctx, ad_state *st, int i)
{
    st->waiting = 0;
    st->n_avg++;
    if (st->blocked) {
        double *t = st->gbuf;
        st->gbuf = st->gnext;
        st->gnext = t;
        st->blocked = 0;
        request_average(ctx, st, i);
        alg_start_step(ctx, i);
    }
}

/* Gives up the pending averaging: the kept gradient goes to i's own model. */
static void abandon(alg_ctx *ctx, ad_state *st, int i)
{
    alg_sgd_apply(ctx, i, alg_params(ctx, i), st->gbuf, 1.0);
    st->abandoned++;
    averaging_over(ctx, st, i);
}

static int ad_check(const alg_ctx *ctx, char *err, size_t size)
{
    if (ctx->n < 2) {
        snprintf(err, size, "adpsgd needs at least 2 nodes, got %d", ctx->n);
        return -1;
    }
    if (!ctx->g->bipartite) {
        snprintf(err, size, "adpsgd needs a bipartite topology for its active/passive "
                            "split (Lian et al. 2018); this one is not (use an even ring "
                            "or a torus with even sides)");
        return -1;
    }
    return 0;
}

/* For the memory check (run_limits.c): each active node draws its peers
 * from a random stream of its own, created at its first draw: an
 * mt19937's state (5000 bytes) and the gsl_rng record.  The active side
 * is about half the nodes (exactly half on a ring or a torus); measured
 * 3.4 KiB a timing-only node against D-PSGD's 1.5 (bench/RESULTS.md). */
static double ad_memory_bytes(const alg_ctx *ctx)
{
    return 0.5 * ctx->n * (double)(gsl_rng_mt19937->size + sizeof(gsl_rng));
}

static int ad_init(alg_ctx *ctx, void *state, int node)
{
    ad_state *st = state;
    if (!is_active(ctx, node))
        return 0;
    st->gbuf = malloc((ctx->P ? ctx->P : 1) * sizeof(double));
    st->gnext = malloc((ctx->P ? ctx->P : 1) * sizeof(double));
    return st->gbuf && st->gnext ? 0 : -1;
}

static void ad_fini(alg_ctx *ctx, void *state, int node)
{
    (void)ctx;
    (void)node;
    ad_state *st = state;
    free(st->gbuf);
    free(st->gnext);
}

static void ad_on_step_done(alg_ctx *ctx, void *state, int i, const double *grad)
{
    ad_state *st = state;
    if (!is_active(ctx, i)) {
        alg_sgd_apply(ctx, i, alg_params(ctx, i), grad, 1.0);
        alg_start_step(ctx, i);
        return;
    }
    if (st->waiting) {
        memcpy(st->gnext, grad, ctx->P * sizeof(double));
        st->blocked = 1;
        return;
    }
    memcpy(st->gbuf, grad, ctx->P * sizeof(double));
    request_average(ctx, st, i);
    alg_start_step(ctx, i);
}

static void ad_on_message(alg_ctx *ctx, void *state, int i, const cl_msg *m)
{
    ad_state *st = state;
    double *x = alg_params(ctx, i);
    int P = (int)ctx->P;
    if (m->tag == TAG_REQUEST) {
        cblas_daxpy(P, 1.0, m->payload->data, 1, x, 1);
        cblas_dscal(P, 0.5, x, 1);
        cl_buf *avg = alg_snapshot(ctx, i);
        alg_send(ctx, i, m->from, TAG_REPLY, m->round, avg, alg_param_bytes(ctx, ctx->P));
        alg_buf_put(ctx, avg);
        return;
    }
    /* the reply of an averaging abandoned after a failure comes too late */
    if (!st->waiting || m->round != st->n_avg || m->from != st->peer)
        return;
    /* reply: x_i has not changed since the request, so this completes an
     * atomic pairwise average */
    memcpy(x, m->payload->data, ctx->P * sizeof(double));
    alg_sgd_apply(ctx, i, x, st->gbuf, 1.0);
    averaging_over(ctx, st, i);
}

/* A peer declared failed: the active nodes waiting for it give up; a
 * failed active node that is back gives up its own pending averaging. */
static void ad_on_failure(alg_ctx *ctx, int peer, int failed)
{
    if (!failed) {
        ad_state *st = alg_state(ctx, peer);
        if (is_active(ctx, peer) && st->waiting)
            abandon(ctx, st, peer);
        return;
    }
    const topo_graph *g = ctx->g;
    for (size_t e = g->off[peer]; e < g->off[peer + 1]; e++) {
        int i = g->nbr[e];
        ad_state *st = alg_state(ctx, i);
        if (is_active(ctx, i) && st->waiting && st->peer == peer && !alg_is_failed(ctx, i))
            abandon(ctx, st, i);
    }
}

static int ad_stats(const alg_ctx *ctx, const char **keys, double *values, int max)
{
    double avg = 0, ab = 0, alone = 0;
    for (int i = 0; i < ctx->n; i++) {
        const ad_state *st = alg_state(ctx, i);
        avg += (double)(st->n_avg - st->abandoned);
        ab += (double)st->abandoned;
        alone += (double)st->alone;
    }
    const char *k[] = { "averagings", "averagings_abandoned", "steps_alone" };
    double v[] = { avg, ab, alone };
    int m = max < 3 ? max : 3;
    for (int j = 0; j < m; j++) {
        keys[j] = k[j];
        values[j] = v[j];
    }
    return m;
}

static void ad_describe_wait(const alg_ctx *ctx, const void *state, int i,
                             char *buf, size_t size)
{
    const ad_state *st = state;
    if (st->waiting)
        snprintf(buf, size, "the reply of averaging %llu from node %d",
                 (unsigned long long)st->n_avg, st->peer);
    else if (alg_is_computing(ctx, i))
        snprintf(buf, size, "its step");
    else
        buf[0] = '\0';
}

const alg_type alg_adpsgd = {
    .name = "adpsgd",
    .summary = "asynchronous pairwise averaging with a random neighbour (Lian et al. 2018)",
    .state_size = sizeof(ad_state),
    .check = ad_check,
    .memory_bytes = ad_memory_bytes,
    .init = ad_init,
    .on_step_done = ad_on_step_done,
    .on_message = ad_on_message,
    .on_failure = ad_on_failure,
    .describe_wait = ad_describe_wait,
    .stats = ad_stats,
    .fini = ad_fini,
};
