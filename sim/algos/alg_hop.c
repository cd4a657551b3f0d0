/* alg_hop.c -- Hop (Luo, Lin, Zhuo, Qian, "Hop: Heterogeneity-Aware
 * Decentralized Training", ASPLOS 2019): decentralized SGD whose
 * neighbours synchronise through update queues, with bounded staleness,
 * backup workers, token queues and iteration skipping.
 *
 * Timing (default, `overlap` on: the paper's queues, where sending an
 * update and computing the next gradient run side by side): node i enters
 * iteration k with its model x_i^k, puts x_i^k tagged k into every
 * neighbour's update queue (its uplink sends the copies one after another,
 * starting with the first neighbour numbered above i and wrapping around,
 * so that on a ring every node sends clockwise first and no node receives
 * both neighbours' second copies) and at the same time starts computing
 * its gradient g on x_i^k.  It leaves iteration k once its gradient is
 * done and the queues allow it: (a) bounded staleness and backup workers:
 * the latest updates of at least deg - b neighbours (b = `backup`) are of
 * iteration >= k - s (s = `staleness`), and (b) token queues: no neighbour
 * is more than max_ig - 1 iterations behind k, so that after the move no
 * neighbour is more than `max_ig` behind.  Then it takes from each
 * neighbour's queue the newest update of an iteration <= k (dropping older
 * ones and keeping later ones for later iterations; a neighbour that
 * skipped past k gives its oldest later one) if it is of iteration
 * >= k - s, and x_i^{k+1} = (x_i^k + those updates) / (1 + their count)
 * - lr g; iteration k + 1 starts at once.  So with s = 0 and b = 0 this is
 * D-PSGD with equal weights (tested against dpsgd on a ring).  The two
 * mechanisms are separate: with b = 0 a node waits for every neighbour's
 * update of iteration >= k - s, so neighbours may be s + 1 iterations
 * apart; with s = 0 it waits for deg - b current updates and the token
 * queues bound how far the ones it left behind may lag.  With `overlap`
 * off (dtsim's earlier timeline) the node sends x_i^k - lr g tagged k only
 * when its step is done, then waits, then averages that with the same
 * updates.  With `skip` on, a node that finds a neighbour ahead by more than
 * one iteration jumps its iteration counter up to that neighbour's, as far
 * as the same two conditions allow (the iterations in between are not
 * computed), as Hop's iteration skipping lets slow workers catch up.
 *
 * Where the paper is silent (no public reference code was found): the
 * updates are averaged with equal weights; max_ig 0 (the default)
 * means s + 2, the least bound at which a backup worker is ever left
 * behind.  Invariant: neighbours' iterations differ by at most
 * min(s + 1, max_ig) without backup workers and max_ig with them
 * (neighbour_gap_max, tested), hence by that times the distance for any two
 * nodes.
 *
 * Failures (the paper has no failure model; what follows keeps its two
 * conditions over the live neighbours).  A neighbour declared failed
 * (alg_is_failed) is no longer sent to, waited for or averaged: the
 * conditions count over the live neighbours (deg_live - b updates within
 * the staleness, at least 0; tokens from live neighbours only), its queued
 * updates are dropped, and the average takes the live neighbours' updates
 * with equal weights, x <- (x + sum) / (1 + count), so its weight goes to
 * the others and the node itself (the rule stays stochastic; it is Hop's
 * rule on the live subgraph).  A node declared back has its model from
 * faults.rejoin and resumes at the iteration of its first neighbour (in
 * neighbour-list order) not declared failed, the one whose model rejoin
 * "neighbour" copies (its own with none); it drops what its queues held,
 * its live neighbours put their latest update into its queue again (a
 * reconnecting peer is sent the queue head), and it begins that iteration:
 * it sends its model (with overlap) and steps (its interrupted step, if
 * any, restarts instead).  Its neighbours wait for its first update, as
 * for anyone's.  The gap invariant below holds without failures; after a
 * return the returning node may be further from a neighbour until the
 * conditions have brought them together again.
 */
#include "alg.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <gsl/gsl_cblas.h>

enum { P_STALENESS, P_BACKUP, P_SKIP, P_OVERLAP, P_MAX_IG };
enum { TAG_MODEL = 1 };

static const char *const onoff[] = { "off", "on", NULL };

static const alg_param_spec params[] = {
    { "staleness", ALG_PARAM_INT, 2, 0, 1e9, NULL,
      "s: how stale a neighbour's update may be and still count" },
    { "backup", ALG_PARAM_INT, 0, 0, 1e9, NULL, "b: neighbour updates a node may go on without" },
    { "skip", ALG_PARAM_CHOICE, 0, 0, 0, onoff,
      "on: a node whose neighbour is ahead by more than one iteration jumps to it" },
    { "overlap", ALG_PARAM_CHOICE, 1, 0, 0, onoff,
      "on: send while computing; off: send after the step, then wait" },
    { "max_ig", ALG_PARAM_INT, 0, 0, 1e9, NULL,
      "token-queue bound on a neighbour's lag; 0: s + 2" },
    { NULL, 0, 0, 0, 0, NULL, NULL },
};

typedef struct hop_shared {
    uint64_t gap_max, skipped, rejoins;
    uint64_t s, max_ig;   /* resolved */
    int      backup, overlap, skip;
} hop_shared;

/* A neighbour's update queue: a ring of (iteration, update) in arrival
 * order, whose iterations increase.  It holds at most one update of an
 * iteration <= the node's own (the newest) plus the neighbour's updates of
 * later iterations, so at most gap + 1 entries; it grows when a neighbour
 * runs further ahead than ever before. */
typedef struct upd_queue {
    uint64_t *iter;
    cl_buf  **buf;
    int       head, len, cap;
} upd_queue;

typedef struct hop_state {
    uint64_t      iter;
    const double *grad;    /* overlap: this iteration's gradient, valid until the next step */
    int           stepped; /* this iteration's step is done */
    uint64_t     *known;   /* per neighbour slot: latest iteration heard, +1 (0: none) */
    upd_queue    *queue;   /* per neighbour slot: its update queue */
    uint64_t     *scratch; /* skip: the neighbours' iterations, sorted */
    cl_buf       *last;    /* the latest update sent (a reference), or NULL */
    uint64_t      last_iter;
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
    hop_shared *sh = calloc(1, sizeof(hop_shared));
    if (!sh)
        return -1;
    sh->s = (uint64_t)ctx->param[P_STALENESS];
    sh->max_ig = ctx->param[P_MAX_IG] > 0 ? (uint64_t)ctx->param[P_MAX_IG] : sh->s + 2;
    sh->backup = (int)ctx->param[P_BACKUP];
    sh->overlap = (int)ctx->param[P_OVERLAP];
    sh->skip = (int)ctx->param[P_SKIP];
    ctx->shared = sh;
    return 0;
}

static void hop_shared_fini(alg_ctx *ctx) { free(ctx->shared); }

static int hop_init(alg_ctx *ctx, void *state, int i)
{
    hop_state *st = state;
    size_t d = (size_t)degree(ctx, i);
    st->known = calloc(d ? d : 1, sizeof(uint64_t));
    st->queue = calloc(d ? d : 1, sizeof(upd_queue));
    st->scratch = calloc(d ? d : 1, sizeof(uint64_t));
    if (!st->known || !st->queue || !st->scratch)
        return -1;
    for (size_t q = 0; q < d; q++) {
        upd_queue *u = &st->queue[q];
        u->cap = 2;
        u->iter = malloc((size_t)u->cap * sizeof(uint64_t));
        u->buf = malloc((size_t)u->cap * sizeof(cl_buf *));
        if (!u->iter || !u->buf)
            return -1;
    }
    return 0;
}

static void queue_clear(alg_ctx *ctx, upd_queue *u)
{
    for (int e = 0; e < u->len; e++)
        alg_buf_put(ctx, u->buf[(u->head + e) % u->cap]);
    u->head = u->len = 0;
}

static void hop_fini(alg_ctx *ctx, void *state, int i)
{
    hop_state *st = state;
    if (st->last)
        alg_buf_put(ctx, st->last);
    if (st->queue)
        for (int q = 0; q < degree(ctx, i); q++) {
            upd_queue *u = &st->queue[q];
            for (int e = 0; e < u->len; e++)
                alg_buf_put(ctx, u->buf[(u->head + e) % u->cap]);
            free(u->iter);
            free(u->buf);
        }
    free(st->queue);
    free(st->known);
    free(st->scratch);
}

/* Puts node i's model, tagged with its iteration, into the update queue of
 * every neighbour not declared failed: first the neighbour numbered above
 * i, wrapping around.  Keeps the update for a neighbour that rejoins. */
static void send_update(alg_ctx *ctx, hop_state *st, int i)
{
    const topo_graph *g = ctx->g;
    size_t lo = g->off[i], hi = g->off[i + 1], first = lo;
    while (first < hi && g->nbr[first] < i)   /* neighbour lists are sorted */
        first++;
    cl_buf *b = alg_snapshot(ctx, i);
    double bytes = alg_param_bytes(ctx, ctx->P);
    for (size_t e = 0; e < hi - lo; e++) {
        size_t at = first + e < hi ? first + e : first + e - (hi - lo);
        if (!alg_is_failed(ctx, g->nbr[at]))
            alg_send(ctx, i, g->nbr[at], TAG_MODEL, st->iter, b, bytes);
    }
    if (st->last)
        alg_buf_put(ctx, st->last);
    st->last = b;
    st->last_iter = st->iter;
}

static void begin_iteration(alg_ctx *ctx, hop_state *st, int i)
{
    const hop_shared *sh = ctx->shared;
    st->stepped = 0;
    st->grad = NULL;
    if (sh->overlap)
        send_update(ctx, st, i);
    alg_start_step(ctx, i);
}

static void hop_on_start(alg_ctx *ctx, void *state, int i)
{
    begin_iteration(ctx, state, i);
}

static void record_gaps(alg_ctx *ctx, int i)
{
    hop_shared *sh = ctx->shared;
    const hop_state *me = alg_state(ctx, i);
    const topo_graph *g = ctx->g;
    for (size_t e = g->off[i]; e < g->off[i + 1]; e++) {
        if (alg_is_failed(ctx, g->nbr[e]))
            continue;
        const hop_state *o = alg_state(ctx, g->nbr[e]);
        uint64_t gap = me->iter > o->iter ? me->iter - o->iter : o->iter - me->iter;
        if (gap > sh->gap_max)
            sh->gap_max = gap;
    }
}

/* Whether node i may leave iteration k (move to k + 1) given what it has
 * heard from its live neighbours: deg_live - b updates of iteration
 * >= k - s, none older than k + 1 - max_ig (known[] holds iteration + 1). */
static int may_leave(const alg_ctx *ctx, const hop_state *st, int i, uint64_t k)
{
    const hop_shared *sh = ctx->shared;
    const int *nbr = ctx->g->nbr + ctx->g->off[i];
    int d = degree(ctx, i), within = 0, live = 0;
    for (int q = 0; q < d; q++) {
        if (alg_is_failed(ctx, nbr[q]))
            continue;
        live++;
        uint64_t heard = st->known[q];
        if (heard + sh->max_ig < k + 2)   /* tokens: heard - 1 < k + 1 - max_ig */
            return 0;
        if (heard + sh->s >= k + 1)       /* heard - 1 >= k - s */
            within++;
    }
    return within >= live - sh->backup;
}

static int cmp_desc(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? 1 : x > y ? -1 : 0;
}

/* Skipping: the highest iteration t <= the fastest live neighbour's that
 * node i could have moved to from t - 1 (the same two conditions), or
 * st->iter. */
static uint64_t skip_target(const alg_ctx *ctx, hop_state *st, int i)
{
    const hop_shared *sh = ctx->shared;
    const int *nbr = ctx->g->nbr + ctx->g->off[i];
    int d = 0;
    for (int q = 0; q < degree(ctx, i); q++)
        if (!alg_is_failed(ctx, nbr[q]))
            st->scratch[d++] = st->known[q];
    if (d == 0)
        return st->iter;
    qsort(st->scratch, (size_t)d, sizeof(uint64_t), cmp_desc);
    uint64_t fastest = st->scratch[0], slowest = st->scratch[d - 1];
    if (fastest == 0)
        return st->iter;
    uint64_t t = fastest - 1;                              /* its iteration */
    if (slowest + sh->max_ig - 1 < t)                      /* tokens */
        t = slowest + sh->max_ig - 1;
    if (d > sh->backup) {                                  /* staleness */
        uint64_t waited = st->scratch[d - 1 - sh->backup]; /* the (d - b)-th latest */
        if (waited + sh->s < t)
            t = waited + sh->s;
    }
    return t > st->iter ? t : st->iter;
}

static void queue_push(upd_queue *u, uint64_t iter, cl_buf *b)
{
    if (u->len == u->cap) {   /* unwrap into twice the room */
        int cap = 2 * u->cap;
        uint64_t *it = malloc((size_t)cap * sizeof(uint64_t));
        cl_buf **bu = malloc((size_t)cap * sizeof(cl_buf *));
        if (!it || !bu)
            alg_out_of_memory();
        for (int e = 0; e < u->len; e++) {
            it[e] = u->iter[(u->head + e) % u->cap];
            bu[e] = u->buf[(u->head + e) % u->cap];
        }
        free(u->iter);
        free(u->buf);
        u->iter = it;
        u->buf = bu;
        u->head = 0;
        u->cap = cap;
    }
    int at = (u->head + u->len) % u->cap;
    u->iter[at] = iter;
    u->buf[at] = b;
    u->len++;
}

/* The update node i uses from this queue at the end of iteration k: the
 * newest of iteration <= k (older ones are dropped), else the oldest of a
 * later one (a neighbour that skipped past k); NULL when it is older than
 * k - s or the queue is empty. */
static const cl_buf *queue_take(alg_ctx *ctx, upd_queue *u, uint64_t k, uint64_t s)
{
    while (u->len >= 2 && u->iter[(u->head + 1) % u->cap] <= k) {
        alg_buf_put(ctx, u->buf[u->head]);
        u->head = (u->head + 1) % u->cap;
        u->len--;
    }
    if (u->len == 0 || u->iter[u->head] + s < k)
        return NULL;
    return u->buf[u->head];
}

/* Leaves the current iteration when the step is done and the queues allow. */
static void try_advance(alg_ctx *ctx, hop_state *st, int i)
{
    hop_shared *sh = ctx->shared;
    int d = degree(ctx, i);
    const int *nbr = ctx->g->nbr + ctx->g->off[i];
    uint64_t k = st->iter;
    if (!st->stepped || !may_leave(ctx, st, i, k))
        return;
    double *x = alg_params(ctx, i);
    int used = 0;
    for (int q = 0; q < d; q++) {
        if (alg_is_failed(ctx, nbr[q]))
            continue;
        const cl_buf *b = queue_take(ctx, &st->queue[q], k, sh->s);
        if (b) {
            cblas_daxpy((int)ctx->P, 1.0, b->data, 1, x, 1);
            used++;
        }
    }
    cblas_dscal((int)ctx->P, 1.0 / (1 + used), x, 1);
    if (sh->overlap)
        alg_sgd_apply(ctx, i, x, st->grad, 1.0);
    st->iter = k + 1;
    if (sh->skip) {
        uint64_t t = skip_target(ctx, st, i);
        if (t > st->iter) {
            sh->skipped += t - st->iter;
            st->iter = t;
        }
    }
    record_gaps(ctx, i);
    begin_iteration(ctx, st, i);
}

static void hop_on_step_done(alg_ctx *ctx, void *state, int i, const double *grad)
{
    hop_state *st = state;
    const hop_shared *sh = ctx->shared;
    if (sh->overlap) {
        st->grad = grad;   /* valid until this node's next step starts */
    } else {
        alg_sgd_apply(ctx, i, alg_params(ctx, i), grad, 1.0);
        send_update(ctx, st, i);
    }
    st->stepped = 1;
    try_advance(ctx, st, i);
}

static void hop_on_message(alg_ctx *ctx, void *state, int i, const cl_msg *m)
{
    hop_state *st = state;
    int q = slot_of(ctx, i, m->from);
    if (alg_is_failed(ctx, m->from))
        return;   /* sent before it failed; its slot is cleared */
    if (m->round + 1 > st->known[q]) {
        st->known[q] = m->round + 1;
        cl_buf_ref(m->payload);
        queue_push(&st->queue[q], m->round, m->payload);
    }
    try_advance(ctx, st, i);
}

/* A neighbour declared failed: its neighbours drop its updates and stop
 * waiting for it.  Declared back: it rejoins (see the file's comment). */
static void hop_on_failure(alg_ctx *ctx, int p, int failed)
{
    hop_shared *sh = ctx->shared;
    const topo_graph *g = ctx->g;
    if (failed) {
        for (size_t e = g->off[p]; e < g->off[p + 1]; e++) {
            int i = g->nbr[e];
            if (alg_is_failed(ctx, i))
                continue;
            hop_state *st = alg_state(ctx, i);
            int q = slot_of(ctx, i, p);
            queue_clear(ctx, &st->queue[q]);
            st->known[q] = 0;
            try_advance(ctx, st, i);
        }
        return;
    }
    hop_state *me = alg_state(ctx, p);
    int d = degree(ctx, p), have_iter = 0;
    for (int q = 0; q < d; q++) {
        queue_clear(ctx, &me->queue[q]);
        me->known[q] = 0;
    }
    double bytes = alg_param_bytes(ctx, ctx->P);
    for (size_t e = g->off[p]; e < g->off[p + 1]; e++) {
        int j = g->nbr[e];
        if (alg_is_failed(ctx, j))
            continue;
        hop_state *o = alg_state(ctx, j);
        if (!have_iter) {
            me->iter = o->iter;
            have_iter = 1;
        }
        if (o->last)
            alg_send(ctx, j, p, TAG_MODEL, o->last_iter, o->last, bytes);
    }
    sh->rejoins++;
    if (me->stepped) {
        begin_iteration(ctx, me, p);
    } else {   /* its interrupted step restarts: the iteration begins with it */
        me->grad = NULL;
        if (sh->overlap)
            send_update(ctx, me, p);
    }
}

static void hop_describe_wait(const alg_ctx *ctx, const void *state, int i, char *buf,
                              size_t size)
{
    const hop_state *st = state;
    if (alg_is_computing(ctx, i))
        snprintf(buf, size, "its step of iteration %llu", (unsigned long long)st->iter);
    else
        snprintf(buf, size, "neighbour updates of iteration %llu minus staleness (or tokens)",
                 (unsigned long long)st->iter);
}

static int hop_stats(const alg_ctx *ctx, const char **keys, double *values, int max)
{
    const hop_shared *sh = ctx->shared;
    if (max < 3)
        return 0;
    keys[0] = "neighbour_gap_max";
    values[0] = (double)sh->gap_max;
    keys[1] = "iterations_skipped";
    values[1] = (double)sh->skipped;
    keys[2] = "rejoins";
    values[2] = (double)sh->rejoins;
    return 3;
}

const alg_type alg_hop = {
    .name = "hop",
    .summary = "decentralized with bounded staleness, backup workers, skipping (Luo et al. 2019)",
    .state_size = sizeof(hop_state),
    .params = params,
    .check = hop_check,
    .shared_init = hop_shared_init,
    .shared_fini = hop_shared_fini,
    .init = hop_init,
    .on_start = hop_on_start,
    .on_step_done = hop_on_step_done,
    .on_message = hop_on_message,
    .on_failure = hop_on_failure,
    .describe_wait = hop_describe_wait,
    .stats = hop_stats,
    .fini = hop_fini,
};
