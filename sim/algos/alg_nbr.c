/* alg_nbr.c -- per-round neighbourhoods for synchronous neighbour exchange
 * (D-PSGD, local SGD's gossip): the static topology with its mixing
 * weights, or one undirected graph per round from the topologies module's
 * schedules, with Metropolis-Hastings weights on each round's graph (a
 * matching's 1/2, the undirected one-peer exponential graph's 1/(1 +
 * degree), the file's rounds weighted by topo_mixing.c), so every round's
 * matrix is symmetric and doubly stochastic as D-PSGD assumes; and the
 * per-round mailboxes of weighted sums.  It decides neither when rounds
 * happen nor what is sent: the protocols do.
 */
#include "alg_nbr.h"

#include <assert.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <gsl/gsl_cblas.h>

const char *const alg_nbr_schedule_names[] = { "static", "random_matching",
                                               "one_peer_exponential", "file", NULL };

#define CACHE 8

typedef struct cached {
    uint64_t     round;
    int          valid;
    size_t       cap;     /* arcs the arrays hold */
    topo_digraph d;
} cached;

struct alg_nbr {
    const topo_graph *g;      /* static */
    topo_schedule    *sched;  /* time-varying */
    int               stored; /* file: the schedule keeps every round */
    cached            cache[CACHE];
    int               failures; /* a declaration ever happened: rounds check exclusions */
    uint64_t         *join;     /* n: node j takes part in rounds >= join[j] */
};

static topo_schedule *make_schedule(const alg_ctx *ctx, int schedule, const char *path,
                                    uint64_t seed, char *err, size_t size)
{
    static const topo_sched_kind kinds[] = { 0, TOPO_SCHED_RANDOM_MATCHING,
                                             TOPO_SCHED_ONE_PEER_EXPONENTIAL, TOPO_SCHED_FILE };
    topo_sched_spec sp = { .kind = kinds[schedule], .n = ctx->n, .path = path,
                           .mixing = TOPO_MIX_METROPOLIS, .undirected = 1 };
    return topo_schedule_create(&sp, seed, err, size);
}

int alg_nbr_check(const alg_ctx *ctx, const char *who, int schedule, const char *path,
                  char *err, size_t size)
{
    if (schedule != ALG_NBR_FILE) {
        if (path) {
            snprintf(err, size, "%s: schedule_file needs schedule \"file\", got \"%s\"", who,
                     alg_nbr_schedule_names[schedule]);
            return -1;
        }
        return 0;
    }
    if (!path) {
        snprintf(err, size, "%s with schedule \"file\" needs schedule_file", who);
        return -1;
    }
    topo_schedule *s = make_schedule(ctx, schedule, path, 0, err, size);
    if (!s)
        return -1;
    topo_schedule_destroy(s);
    return 0;
}

alg_nbr *alg_nbr_create(const alg_ctx *ctx, int schedule, const char *path, uint64_t seed,
                        char *err, size_t size)
{
    alg_nbr *nb = calloc(1, sizeof *nb);
    if (nb && !(nb->join = calloc((size_t)ctx->n, sizeof *nb->join))) {
        free(nb);
        nb = NULL;
    }
    if (!nb) {
        snprintf(err, size, "out of memory");
        return NULL;
    }
    if (schedule == ALG_NBR_STATIC) {
        nb->g = ctx->g;
        return nb;
    }
    nb->stored = schedule == ALG_NBR_FILE;
    if (!(nb->sched = make_schedule(ctx, schedule, path, seed, err, size))) {
        free(nb->join);
        free(nb);
        return NULL;
    }
    return nb;
}

void alg_nbr_digraph_free(topo_digraph *d)
{
    free(d->out_off);
    free(d->in_off);
    free(d->out_nbr);
    free(d->in_nbr);
    free(d->out_w);
    free(d->in_w);
    free(d->self_w);
}

void alg_nbr_destroy(alg_nbr *nb)
{
    if (!nb)
        return;
    topo_schedule_destroy(nb->sched);
    for (int c = 0; c < CACHE; c++)
        alg_nbr_digraph_free(&nb->cache[c].d);
    free(nb->join);
    free(nb);
}

void alg_nbr_digraph_copy(topo_digraph *dst, size_t *cap, const topo_digraph *src)
{
    int n = src->n;
    size_t a = src->n_arcs;
    if (!dst->out_off) {
        dst->out_off = malloc((size_t)(n + 1) * sizeof(size_t));
        dst->in_off = malloc((size_t)(n + 1) * sizeof(size_t));
        dst->self_w = malloc((size_t)(n ? n : 1) * sizeof(double));
        if (!dst->out_off || !dst->in_off || !dst->self_w)
            alg_out_of_memory();
    }
    if (!dst->out_nbr || *cap < a) {
        size_t k = a ? a : 1;
        dst->out_nbr = realloc(dst->out_nbr, k * sizeof(int));
        dst->in_nbr = realloc(dst->in_nbr, k * sizeof(int));
        dst->out_w = realloc(dst->out_w, k * sizeof(double));
        dst->in_w = realloc(dst->in_w, k * sizeof(double));
        if (!dst->out_nbr || !dst->in_nbr || !dst->out_w || !dst->in_w)
            alg_out_of_memory();
        *cap = k;
    }
    dst->n = n;
    dst->n_arcs = a;
    dst->row_stochastic = src->row_stochastic;
    dst->col_stochastic = src->col_stochastic;
    memcpy(dst->out_off, src->out_off, (size_t)(n + 1) * sizeof(size_t));
    memcpy(dst->in_off, src->in_off, (size_t)(n + 1) * sizeof(size_t));
    memcpy(dst->self_w, src->self_w, (size_t)n * sizeof(double));
    memcpy(dst->out_nbr, src->out_nbr, a * sizeof(int));
    memcpy(dst->in_nbr, src->in_nbr, a * sizeof(int));
    memcpy(dst->out_w, src->out_w, a * sizeof(double));
    memcpy(dst->in_w, src->in_w, a * sizeof(double));
}

/* Round r's graph.  Nodes may be in different rounds at once, and a
 * generated schedule hands out one buffer, so rounds are copied into a
 * small cache. */
static const topo_digraph *graph_of(alg_nbr *nb, uint64_t r)
{
    if (nb->stored)
        return topo_schedule_round(nb->sched, r);
    cached *c = &nb->cache[r % CACHE];
    if (!c->valid || c->round != r) {
        alg_nbr_digraph_copy(&c->d, &c->cap, topo_schedule_round(nb->sched, r));
        c->round = r;
        c->valid = 1;
    }
    return &c->d;
}

alg_nbr_row alg_nbr_row_of(alg_nbr *nb, uint64_t r, int i)
{
    if (nb->g) {
        const topo_graph *g = nb->g;
        return (alg_nbr_row){ .deg = (int)(g->off[i + 1] - g->off[i]), .nbr = g->nbr + g->off[i],
                              .w = g->w + g->off[i], .self_w = g->self_w[i] };
    }
    const topo_digraph *d = graph_of(nb, r);
    /* undirected: i's senders are its neighbours, in_w is i's row */
    return (alg_nbr_row){ .deg = (int)(d->in_off[i + 1] - d->in_off[i]),
                          .nbr = d->in_nbr + d->in_off[i], .w = d->in_w + d->in_off[i],
                          .self_w = d->self_w[i] };
}

double alg_nbr_weight(alg_nbr *nb, uint64_t r, int i, int j)
{
    alg_nbr_row row = alg_nbr_row_of(nb, r, i);
    int lo = 0, hi = row.deg;
    while (lo < hi) {    /* neighbour lists are sorted */
        int mid = lo + (hi - lo) / 2;
        if (row.nbr[mid] < j)
            lo = mid + 1;
        else
            hi = mid;
    }
    assert(lo < row.deg && row.nbr[lo] == j);
    return row.w[lo];
}

/* ---- members under failures ------------------------------------------- */

int alg_nbr_excluded(const alg_ctx *ctx, const alg_nbr *nb, int j, uint64_t r)
{
    return alg_is_failed(ctx, j) || r < nb->join[j];
}

uint64_t alg_nbr_join(const alg_nbr *nb, int j)
{
    return nb->join[j];
}

int alg_nbr_missing(const alg_ctx *ctx, alg_nbr *nb, const alg_mbox *mb, uint64_t r, int i)
{
    alg_nbr_row row = alg_nbr_row_of(nb, r, i);
    int got = alg_mbox_count(mb, r);
    if (!nb->failures)
        return row.deg - got;
    const alg_mbox_slot *s = NULL;
    for (int k = 0; k < mb->n && !s; k++)
        if (mb->slots[k].round == r)
            s = &mb->slots[k];
    int live = 0, got_live = 0;
    for (int k = 0; k < row.deg; k++)
        live += !alg_nbr_excluded(ctx, nb, row.nbr[k], r);
    for (int k = 0; k < got; k++)
        got_live += !alg_nbr_excluded(ctx, nb, alg_mbox_from(s)[k], r);
    return live - got_live;
}

double alg_nbr_self_weight(alg_nbr *nb, const alg_mbox_slot *s, uint64_t r, int i)
{
    alg_nbr_row row = alg_nbr_row_of(nb, r, i);
    double self_w = row.self_w;
    if (nb->failures)
        for (int k = 0; k < row.deg; k++)
            if (!alg_mbox_has(s, row.nbr[k]))   /* only excluded ones can lack */
                self_w += row.w[k];
    return self_w;
}

void alg_nbr_send(alg_ctx *ctx, alg_nbr *nb, int i, uint64_t r, uint32_t tag, cl_buf *x)
{
    alg_nbr_row row = alg_nbr_row_of(nb, r, i);
    /* freezing: the receivers mix the trainable suffix only (alg_mix_apply
     * over [prefix, P)), so that is what the message carries */
    double bytes = alg_param_bytes(ctx, ctx->P - alg_frozen_params(ctx, i));
    for (int k = 0; k < row.deg; k++)
        if (!alg_nbr_excluded(ctx, nb, row.nbr[k], r))
            alg_send(ctx, i, row.nbr[k], tag, r, x, bytes);
}

void alg_nbr_declared(alg_ctx *ctx, alg_nbr *nb, int peer, int failed, uint64_t furthest,
                      uint32_t timer_tag)
{
    nb->failures = 1;
    if (failed) {
        /* each node learns it by a timer of its own (a down node's is
         * dropped: it looks again when it returns) */
        for (int i = 0; i < ctx->n; i++)
            if (i != peer && !alg_is_failed(ctx, i))
                alg_set_timer(ctx, i, 0, timer_tag);
        return;
    }
    nb->join[peer] = furthest + 1;
}

/* ---- mailboxes ---------------------------------------------------------- */

/* The accumulator of a timing-only slot (len 0): never read or written. */
static double no_acc[1];

/* Senders slot s has room for. */
static int cap_of(const alg_mbox_slot *s)
{
    return s->from_cap ? s->from_cap : ALG_MBOX_INLINE;
}

/* Keeping: the block's three arrays of cap_of(s) entries each: the held
 * payloads, their weights and alg_mbox_mix's scratch (their data). */
static cl_buf **kept(const alg_mbox_slot *s) { return s->keep; }
static double *kept_w(const alg_mbox_slot *s)
{
    return (double *)((cl_buf **)s->keep + cap_of(s));
}
static const double **kept_x(const alg_mbox_slot *s)
{
    return (const double **)(kept_w(s) + cap_of(s));
}

/* A keeping slot's block for cap senders, holding what it held. */
static void keep_alloc(alg_mbox_slot *s, int old_cap, int cap)
{
    char *b = malloc((size_t)cap * (sizeof(cl_buf *) + sizeof(double) + sizeof(double *)));
    if (!b)
        alg_out_of_memory();
    cl_buf **h = (cl_buf **)b;
    double *w = (double *)(h + cap);
    if (s->keep && s->count > 0) {
        cl_buf **oh = s->keep;
        double *ow = (double *)(oh + old_cap);
        memcpy(h, oh, (size_t)s->count * sizeof *h);
        memcpy(w, ow, (size_t)s->count * sizeof *w);
    }
    free(s->keep);
    s->keep = b;
}

static int slot_init(const alg_mbox *mb, alg_mbox_slot *s)
{
    *s = (alg_mbox_slot){ .round = UINT64_MAX };
    if (mb->ctx)
        return 0;   /* keeping: the block comes with the first model */
    if (mb->len == 0) {
        s->acc = no_acc;
        return 0;
    }
    s->acc = calloc(mb->len, sizeof(double));
    return s->acc ? 0 : -1;
}

int alg_mbox_init(alg_mbox *mb, size_t len)
{
    if (len > INT_MAX)
        return -1;
    mb->len = (uint32_t)len;
    mb->n = 0;
    mb->slots = mb->inl;
    for (; mb->n < 2; mb->n++)
        if (slot_init(mb, &mb->slots[mb->n]) != 0)
            return -1;
    return 0;
}

void alg_mbox_fini(alg_mbox *mb)
{
    for (int k = 0; mb->slots && k < mb->n; k++) {
        alg_mbox_slot *s = &mb->slots[k];
        if (mb->ctx && s->round != UINT64_MAX)
            alg_mbox_release(mb, s);
        if (mb->ctx || s->acc != no_acc)
            free(s->keep);   /* or acc: one member */
        if (s->from_cap)
            free(s->from);
    }
    if (mb->slots != mb->inl)
        free(mb->slots);
    mb->slots = NULL;
    mb->n = 0;
}

int alg_mbox_count(const alg_mbox *mb, uint64_t r)
{
    for (int k = 0; k < mb->n; k++)
        if (mb->slots[k].round == r)
            return mb->slots[k].count;
    return 0;
}

alg_mbox_slot *alg_mbox_slot_of(alg_mbox *mb, uint64_t r)
{
    alg_mbox_slot *free_slot = NULL;
    for (int k = 0; k < mb->n; k++) {
        if (mb->slots[k].round == r)
            return &mb->slots[k];
        if (!free_slot && mb->slots[k].round == UINT64_MAX)
            free_slot = &mb->slots[k];
    }
    if (!free_slot) {
        /* the first two are inline: the array moves out of the mailbox */
        alg_mbox_slot *s = mb->slots == mb->inl ? malloc((size_t)(mb->n + 1) * sizeof *s)
                         : realloc(mb->slots, (size_t)(mb->n + 1) * sizeof *s);
        if (!s)
            alg_out_of_memory();
        if (mb->slots == mb->inl)
            memcpy(s, mb->inl, (size_t)mb->n * sizeof *s);
        mb->slots = s;
        free_slot = &mb->slots[mb->n++];
        if (slot_init(mb, free_slot) != 0)
            alg_out_of_memory();
    }
    free_slot->round = r;
    return free_slot;
}

int alg_mbox_has(const alg_mbox_slot *s, int from)
{
    const int *f = alg_mbox_from(s);
    for (int k = 0; k < s->count; k++)
        if (f[k] == from)
            return 1;
    return 0;
}

/* Room for one more sender in s. */
static void grow(const alg_mbox *mb, alg_mbox_slot *s)
{
    if (mb->ctx && !s->keep)
        keep_alloc(s, 0, cap_of(s));
    int old = cap_of(s);
    if (s->count < old)
        return;
    int cap = 2 * old;
    int *f = s->from_cap ? realloc(s->from, (size_t)cap * sizeof *f)
                         : malloc((size_t)cap * sizeof *f);
    if (!f)
        alg_out_of_memory();
    if (!s->from_cap)
        memcpy(f, s->from_in, sizeof s->from_in);
    s->from = f;
    if (mb->ctx)
        keep_alloc(s, old, cap);
    s->from_cap = cap;
}

int alg_mbox_add(alg_mbox *mb, uint64_t r, int from, double w, cl_buf *b)
{
    alg_mbox_slot *s = alg_mbox_slot_of(mb, r);
    if (alg_mbox_has(s, from))
        return 0;
    grow(mb, s);
    if (mb->ctx) {
        cl_buf_ref(b);
        kept(s)[s->count] = b;
        kept_w(s)[s->count] = w;
    } else if (mb->len > 0) {
        cblas_daxpy((int)mb->len, w, b->data, 1, s->acc, 1);
    }
    (s->from_cap ? s->from : s->from_in)[s->count++] = from;
    return 1;
}

void alg_mbox_mix(const alg_ctx *ctx, alg_mbox *mb, alg_mbox_slot *s, int node, double own_w,
                  const double *own, const double *g, double g_div, double *copy_to, int move)
{
    if (!mb->ctx) {
        /* the sum is cleared by the mix itself: no memset */
        alg_mix_sum(ctx, node, own_w, own, s->acc, g, g_div, copy_to, move);
        s->count = 0;
        s->round = UINT64_MAX;
        return;
    }
    const double **x = s->keep ? kept_x(s) : NULL;
    for (int k = 0; k < s->count; k++)
        x[k] = kept(s)[k]->data;
    alg_mix_apply(ctx, node, own_w, own, s->count, x, s->keep ? kept_w(s) : NULL,
                  alg_mbox_from(s), g, g_div, copy_to,
                  move);
}

void alg_mbox_release(alg_mbox *mb, alg_mbox_slot *s)
{
    if (mb->ctx)
        for (int k = 0; k < s->count; k++)
            alg_buf_put(mb->ctx, kept(s)[k]);
    else if (mb->len > 0)
        memset(s->acc, 0, mb->len * sizeof(double));
    s->count = 0;
    s->round = UINT64_MAX;
}
