/* alg_prague_static.c -- Prague's static Group Generator: phase p's
 * partition ranks the workers of p's view by a hash of (seed, p, worker),
 * so it is the same whichever request comes first, and worker w's group is
 * the block of group_size ranks that holds it (the last block takes the
 * remainder).  The view is the set of workers not declared failed when the
 * phase was first requested: a declaration starts a new view for the
 * phases not opened yet (views are kept as (first phase, failed set)
 * pairs; phases are opened in order, so a phase's view is the last one
 * whose first phase is not after it).  Without any declaration the view
 * is every worker.  A worker declared failed after a phase was opened
 * stops counting in it: its group completes when its other members have
 * asked.
 */
#include "alg_prague_static.h"

#include <stdlib.h>
#include <string.h>

typedef struct pending {
    uint64_t phase;
    int      block;
} pending;

typedef struct view {
    uint64_t from;     /* first phase */
    char    *failed;   /* n */
} view;

struct pr_static {
    int       n, g;
    uint64_t  seed;
    pending  *pend;          /* groups of open phases some member asked for */
    size_t    n_pend, cap_pend;
    uint64_t *asked;         /* n: requests received (the next phase asked) */
    int      *fail_view;     /* n: the view its last declaration as failed began, or 0 */
    uint64_t  opened;        /* phases opened: 1 + the furthest requested */
    view     *views;         /* views[0]: everyone, from phase 0 */
    int       n_views;
    uint64_t (*key)[2];      /* n: scratch */
};

pr_static *pr_static_create(const alg_ctx *ctx, int group_size, uint64_t seed)
{
    pr_static *s = calloc(1, sizeof *s);
    if (!s)
        return NULL;
    s->n = ctx->n;
    s->g = group_size;
    s->seed = seed;
    s->asked = calloc((size_t)s->n, sizeof *s->asked);
    s->fail_view = calloc((size_t)s->n, sizeof *s->fail_view);
    s->key = malloc((size_t)s->n * sizeof *s->key);
    s->views = calloc(1, sizeof *s->views);
    if (s->views)
        s->views[0].failed = calloc((size_t)s->n, 1);
    s->n_views = 1;
    if (!s->asked || !s->fail_view || !s->key || !s->views || !s->views[0].failed) {
        pr_static_destroy(s);
        return NULL;
    }
    return s;
}

void pr_static_destroy(pr_static *s)
{
    if (!s)
        return;
    for (int v = 0; s->views && v < s->n_views; v++)
        free(s->views[v].failed);
    free(s->views);
    free(s->pend);
    free(s->asked);
    free(s->fail_view);
    free(s->key);
    free(s);
}

static int view_of(const pr_static *s, uint64_t p)
{
    int v = s->n_views - 1;
    while (v > 0 && s->views[v].from > p)
        v--;
    return v;
}

static int rank_cmp(const void *a, const void *b)
{
    uint64_t x = ((const uint64_t *)a)[0], y = ((const uint64_t *)b)[0];
    return (x > y) - (x < y);
}

/* Members of phase p's block (worker w's when w >= 0, else *block), in
 * members; returns the count, 0 when w is not in p's view. */
static int partition(pr_static *s, uint64_t p, int w, int *block, int *members)
{
    const char *failed = s->views[view_of(s, p)].failed;
    int n = 0;
    for (int i = 0; i < s->n; i++)
        if (!failed[i]) {
            s->key[n][0] = alg_hash64(s->seed ^ alg_hash64(p * 0x100000001b3ULL + (uint64_t)i));
            s->key[n][1] = (uint64_t)i;
            n++;
        }
    if (n == 0)
        return 0;
    qsort(s->key, (size_t)n, sizeof *s->key, rank_cmp);
    int g = s->g < n ? s->g : n, blocks = n / g;
    if (w >= 0) {
        int rank = 0;
        while (rank < n && (int)s->key[rank][1] != w)
            rank++;
        if (rank == n)
            return 0;
        *block = rank / g < blocks ? rank / g : blocks - 1;
    }
    int lo = *block * g, hi = *block == blocks - 1 ? n : lo + g;
    int k = 0;
    for (int r = lo; r < hi; r++)
        members[k++] = (int)s->key[r][1];
    return k;
}

/* Whether worker m counts in phase p (in its view, not declared failed
 * since). */
static int counts(const pr_static *s, int m, uint64_t p)
{
    return s->fail_view[m] <= view_of(s, p);
}

/* Pending i's members still counted, in members; *all: whether they all
 * asked. */
static int counted(pr_static *s, size_t i, int *members, int *all)
{
    uint64_t p = s->pend[i].phase;
    int block = s->pend[i].block;
    int k = partition(s, p, -1, &block, members), c = 0;
    *all = 1;
    for (int m = 0; m < k; m++)
        if (counts(s, members[m], p)) {
            members[c++] = members[m];
            *all &= s->asked[members[m]] > p;
        }
    return c;
}

int pr_static_request(const alg_ctx *ctx, pr_static *s, int w, uint64_t p, int *members)
{
    (void)ctx;
    int block;
    if (!counts(s, w, p) || !partition(s, p, w, &block, members))
        return 0;   /* sent before it was declared failed */
    if (p >= s->opened)
        s->opened = p + 1;
    if (s->asked[w] < p + 1)
        s->asked[w] = p + 1;
    size_t i;
    for (i = 0; i < s->n_pend; i++)
        if (s->pend[i].phase == p && s->pend[i].block == block)
            break;
    if (i == s->n_pend) {
        if (s->n_pend == s->cap_pend) {
            size_t cap = s->cap_pend ? 2 * s->cap_pend : 16;
            pending *pp = realloc(s->pend, cap * sizeof *pp);
            if (!pp)
                alg_out_of_memory();
            s->pend = pp;
            s->cap_pend = cap;
        }
        s->pend[s->n_pend++] = (pending){ p, block };
    }
    int all, k = counted(s, i, members, &all);
    if (!all)
        return 0;
    s->pend[i] = s->pend[--s->n_pend];
    return k;
}

uint64_t pr_static_declared(const alg_ctx *ctx, pr_static *s, int peer, int failed)
{
    view *v = realloc(s->views, (size_t)(s->n_views + 1) * sizeof *v);
    if (!v)
        alg_out_of_memory();
    s->views = v;
    view *nv = &s->views[s->n_views];
    if (!(nv->failed = malloc((size_t)s->n)))
        alg_out_of_memory();
    for (int i = 0; i < s->n; i++)
        nv->failed[i] = (char)alg_is_failed(ctx, i);
    nv->failed[peer] = (char)failed;
    nv->from = s->opened;
    if (failed)
        s->fail_view[peer] = s->n_views;
    s->n_views++;
    return s->opened;
}

int pr_static_take_complete(const alg_ctx *ctx, pr_static *s, int *members)
{
    (void)ctx;
    size_t i = 0;
    while (i < s->n_pend) {
        int all, k = counted(s, i, members, &all);
        if (!all && k > 0) {
            i++;
            continue;
        }
        s->pend[i] = s->pend[--s->n_pend];
        if (k)
            return k;
    }
    return 0;
}
