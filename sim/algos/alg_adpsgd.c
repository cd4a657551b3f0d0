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
    uint64_t n_avg;
} ad_state;

static int is_active(const alg_ctx *ctx, int i) { return ctx->g->side[i] == 0; }

static void request_average(alg_ctx *ctx, ad_state *st, int i)
{
    const topo_graph *g = ctx->g;
    size_t deg = g->off[i + 1] - g->off[i];
    int j = g->nbr[g->off[i] + gsl_rng_uniform_int(alg_rng(ctx, i), deg)];
    cl_buf *x = alg_snapshot(ctx, i);
    alg_send(ctx, i, j, TAG_REQUEST, st->n_avg, x, alg_param_bytes(ctx, ctx->P));
    alg_buf_put(ctx, x);
    st->waiting = 1;
    st->peer = j;
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
    /* reply: x_i has not changed since the request, so this completes an
     * atomic pairwise average */
    memcpy(x, m->payload->data, ctx->P * sizeof(double));
    alg_sgd_apply(ctx, i, x, st->gbuf, 1.0);
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
    .init = ad_init,
    .on_step_done = ad_on_step_done,
    .on_message = ad_on_message,
    .describe_wait = ad_describe_wait,
    .fini = ad_fini,
};
