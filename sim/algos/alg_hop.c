/* alg_hop.c -- Hop (Luo, Lin, Zhuo, Qian, "Hop: Heterogeneity-Aware
 * Decentralized Training", ASPLOS 2019): decentralized SGD whose
 * neighbours synchronise through update queues, with bounded staleness,
 * backup workers and iteration skipping.
 *
 * Timing: node i in iteration k computes a gradient on x_i; when the step
 * ends it applies it, x_i <- x_i - lr g, and sends x_i tagged k to every
 * neighbour (its uplink sends them one after another).  It may then leave
 * iteration k once (a) models of iteration >= k have arrived from at least
 * deg - b of its neighbours (b = `backup`: the slowest b are not waited
 * for) and (b) no neighbour is known to be more than `staleness` iterations
 * behind it (Hop's token queues); then it averages,
 * x_i <- (x_i + sum of the latest models of neighbours at iteration
 * >= k - staleness) / (1 + their count), and starts iteration k + 1 at once.
 * With `skip` on, a node that finds a neighbour ahead by more than one
 * iteration jumps its iteration counter up to that neighbour's, as far as
 * its slowest neighbour's tokens allow (the iterations in between are not
 * computed), as Hop's iteration skipping lets slow workers catch up.  Invariant: two neighbours' iterations never
 * differ by more than staleness + 1 (reported as neighbour_gap_max, tested),
 * hence by (staleness + 1) * distance for any two nodes.
 */
#include "alg.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <gsl/gsl_cblas.h>

enum { P_STALENESS, P_BACKUP, P_SKIP };
enum { TAG_MODEL = 1 };

static const char *const onoff[] = { "off", "on", NULL };

static const alg_param_spec params[] = {
    { "staleness", ALG_PARAM_INT, 2, 0, 1e9, NULL },
    { "backup", ALG_PARAM_INT, 0, 0, 1e9, NULL },
    { "skip", ALG_PARAM_CHOICE, 0, 0, 0, onoff },
    { NULL, 0, 0, 0, 0, NULL },
};

typedef struct hop_shared {
    uint64_t gap_max, skipped;
} hop_shared;

typedef struct hop_state {
    uint64_t  iter;
    int       stepped;     /* this iteration's gradient is applied and sent */
    uint64_t *known;       /* per neighbour slot: latest iteration heard, +1 (0: none) */
    cl_buf  **latest;      /* per neighbour slot: its latest model */
} hop_state;

static int degree(const alg_ctx *ctx, int i)
{
    return (int)(ctx->g->off[i + 1] - ctx->g->off[i]);
}

static int slot_of(const alg_ctx *ctx, int i, int j)
{
    const topo_graph *g = ctx->g;
    for (size_t e = g->off[i]; e < g->off[i + 1]; e++)
        if (g->nbr[e] == j)
            return (int)(e - g->off[i]);
    return -1;
}

static int hop_check(const alg_ctx *ctx, char *err, size_t size)
{
    int b = (int)ctx->param[P_BACKUP];
    for (int i = 0; i < ctx->n; i++)
        if (b >= degree(ctx, i) && degree(ctx, i) > 0) {
            snprintf(err, size, "hop backup %d must be below every node's degree; node %d has "
                     "%d neighbours", b, i, degree(ctx, i));
            return -1;
        }
    return 0;
}

static int hop_shared_init(alg_ctx *ctx)
{
    ctx->shared = calloc(1, sizeof(hop_shared));
    return ctx->shared ? 0 : -1;
}

static void hop_shared_fini(alg_ctx *ctx) { free(ctx->shared); }

static int hop_init(alg_ctx *ctx, void *state, int i)
{
    hop_state *st = state;
    int d = degree(ctx, i);
    st->known = calloc((size_t)(d ? d : 1), sizeof(uint64_t));
    st->latest = calloc((size_t)(d ? d : 1), sizeof(cl_buf *));
    return st->known && st->latest ? 0 : -1;
}

static void hop_fini(alg_ctx *ctx, void *state, int i)
{
    hop_state *st = state;
    if (st->latest)
        for (int k = 0; k < degree(ctx, i); k++)
            if (st->latest[k])
                alg_buf_put(ctx, st->latest[k]);
    free(st->latest);
    free(st->known);
}

static void record_gaps(alg_ctx *ctx, int i)
{
    hop_shared *sh = ctx->shared;
    const hop_state *me = alg_state(ctx, i);
    const topo_graph *g = ctx->g;
    for (size_t e = g->off[i]; e < g->off[i + 1]; e++) {
        const hop_state *o = alg_state(ctx, g->nbr[e]);
        uint64_t gap = me->iter > o->iter ? me->iter - o->iter : o->iter - me->iter;
        if (gap > sh->gap_max)
            sh->gap_max = gap;
    }
}

/* Leaves the current iteration when the queues allow it. */
static void try_advance(alg_ctx *ctx, hop_state *st, int i)
{
    if (!st->stepped)
        return;
    int d = degree(ctx, i), have = 0;
    uint64_t s = (uint64_t)ctx->param[P_STALENESS], k = st->iter, ahead = 0, slowest = UINT64_MAX;
    for (int q = 0; q < d; q++) {
        uint64_t it = st->known[q];   /* iteration + 1 */
        if (it >= k + 1)
            have++;
        /* token queues: nobody may be more than s behind the next iteration */
        if (it + s < k + 1)
            return;
        if (it > ahead)
            ahead = it;
        if (it < slowest)
            slowest = it;
    }
    if (have < d - (int)ctx->param[P_BACKUP])
        return;
    double *x = alg_params(ctx, i);
    int used = 0;
    for (int q = 0; q < d; q++)
        if (st->latest[q] && st->known[q] + s >= k + 1) {
            cblas_daxpy((int)ctx->P, 1.0, st->latest[q]->data, 1, x, 1);
            used++;
        }
    cblas_dscal((int)ctx->P, 1.0 / (1 + used), x, 1);
    st->iter = k + 1;
    /* skipping: catch up with the fastest neighbour, as far as the tokens of
     * the slowest allow (the same bound as a normal advance) */
    uint64_t target = ahead - 1 < slowest + s ? ahead - 1 : slowest + s;
    if ((int)ctx->param[P_SKIP] && d > 0 && target > st->iter) {
        ((hop_shared *)ctx->shared)->skipped += target - st->iter;
        st->iter = target;
    }
    st->stepped = 0;
    record_gaps(ctx, i);
    alg_start_step(ctx, i);
}

static void hop_on_step_done(alg_ctx *ctx, void *state, int i, const double *grad)
{
    hop_state *st = state;
    double *x = alg_params(ctx, i);
    alg_sgd_apply(ctx, i, x, grad, 1.0);
    const topo_graph *g = ctx->g;
    cl_buf *b = alg_snapshot(ctx, i);
    for (size_t e = g->off[i]; e < g->off[i + 1]; e++)
        alg_send(ctx, i, g->nbr[e], TAG_MODEL, st->iter, b, alg_param_bytes(ctx, ctx->P));
    alg_buf_put(ctx, b);
    st->stepped = 1;
    try_advance(ctx, st, i);
}

static void hop_on_message(alg_ctx *ctx, void *state, int i, const cl_msg *m)
{
    hop_state *st = state;
    int q = slot_of(ctx, i, m->from);
    if (m->round + 1 > st->known[q]) {
        st->known[q] = m->round + 1;
        if (st->latest[q])
            alg_buf_put(ctx, st->latest[q]);
        cl_buf_ref(m->payload);
        st->latest[q] = m->payload;
    }
    try_advance(ctx, st, i);
}

static void hop_describe_wait(const alg_ctx *ctx, const void *state, int i, char *buf,
                              size_t size)
{
    const hop_state *st = state;
    if (alg_is_computing(ctx, i))
        snprintf(buf, size, "its step of iteration %llu", (unsigned long long)st->iter);
    else
        snprintf(buf, size, "neighbour models of iteration %llu (or tokens)",
                 (unsigned long long)st->iter);
}

static int hop_stats(const alg_ctx *ctx, const char **keys, double *values, int max)
{
    const hop_shared *sh = ctx->shared;
    if (max < 2)
        return 0;
    keys[0] = "neighbour_gap_max";
    values[0] = (double)sh->gap_max;
    keys[1] = "iterations_skipped";
    values[1] = (double)sh->skipped;
    return 2;
}

const alg_type alg_hop = {
    .name = "hop",
    .state_size = sizeof(hop_state),
    .params = params,
    .check = hop_check,
    .shared_init = hop_shared_init,
    .shared_fini = hop_shared_fini,
    .init = hop_init,
    .on_step_done = hop_on_step_done,
    .on_message = hop_on_message,
    .describe_wait = hop_describe_wait,
    .stats = hop_stats,
    .fini = hop_fini,
};
