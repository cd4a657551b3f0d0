/* alg_prague.c -- Prague (Luo, Lin, Zhuo, Qian, "Prague: High-Performance
 * Heterogeneity-Aware Asynchronous Decentralized Training", ASPLOS 2020):
 * workers average their models in small groups by partial all-reduce
 * (P-Reduce), with groups formed by a Group Generator.
 *
 * Timing: a worker computes a step, applies its gradient, and asks the
 * Group Generator (an extra node, as a parameter server is; control
 * messages of 0 bytes, so latency only) for a group; it then waits.
 * - `groups` = "static": the generator holds one seeded random partition of
 *   the workers into groups of `group_size` per phase; a worker's k-th
 *   request is for phase k, and its group runs when all members have asked
 *   for that phase.  No conflicts are possible.
 * - `groups` = "random": the generator forms a group at once of the
 *   requester and group_size - 1 other workers drawn uniformly; members
 *   that did not ask are pulled in (their communication runs beside their
 *   computation).  A group that includes a worker already in a running or
 *   earlier queued group is a conflict: it waits, first come first served,
 *   until its members are free.  The conflict rate is reported.
 * The generator tells every member (control message); the members average
 * their parameters by all-reduce over the group (alg_coll, `collective`)
 * and tell the generator they are free.  A member whose step ends during a
 * group holds its gradient until the average is in, then applies it and
 * asks for its own group; a requester starts its next step when its group
 * is done.  Evaluation: the average of the workers' models.
 */
#include "alg_coll.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <gsl/gsl_cblas.h>
#include <gsl/gsl_randist.h>

enum { P_GROUP_SIZE, P_GROUPS, P_COLLECTIVE };
enum { GROUPS_RANDOM, GROUPS_STATIC };
enum { TAG_COLL = 1, TAG_REQUEST = 2, TAG_GROUP = 3, TAG_FREE = 4 };

static const char *const group_names[] = { "random", "static", NULL };

static const alg_param_spec params[] = {
    { "group_size", ALG_PARAM_INT, 3, 2, 1e9, NULL },
    { "groups", ALG_PARAM_CHOICE, GROUPS_RANDOM, 0, 0, group_names },
    { "collective", ALG_PARAM_CHOICE, ALG_COLL_RING, 0, 0, alg_coll_kind_names },
    { NULL, 0, 0, 0, 0, NULL },
};

typedef struct group {
    int *members;   /* sorted */
    int  k;
    int  queued;    /* waiting for busy members */
    int  done;      /* members whose average has landed */
} group;

typedef struct pr_shared {
    alg_coll *coll;
    group    *groups;         /* by group id */
    size_t    n_groups, cap_groups;
    char     *busy;           /* per worker: in a running group (generator's view) */
    size_t    queue_head;     /* first group id that may still be queued */
    uint64_t  conflicts, formed, completed, pending_max;
    int      *phase_group;    /* scratch: candidate workers */
    int      *perm;           /* scratch: a group's members */
} pr_shared;

typedef struct pr_state {
    int      in_group, requested;
    uint64_t phase;           /* requests made */
    double  *held;            /* gradient of a step that ended during a group */
    int      holding;
    uint64_t gid;             /* the group being averaged */
} pr_state;

static int group_size(const alg_ctx *ctx)
{
    int g = (int)ctx->param[P_GROUP_SIZE];
    return g < ctx->n ? g : ctx->n;
}

static int cmp_int(const void *a, const void *b)
{
    return (*(const int *)a > *(const int *)b) - (*(const int *)a < *(const int *)b);
}

static group *new_group(pr_shared *sh, const int *members, int k)
{
    if (sh->n_groups == sh->cap_groups) {
        size_t cap = sh->cap_groups ? 2 * sh->cap_groups : 64;
        group *g = realloc(sh->groups, cap * sizeof *g);
        if (!g)
            alg_out_of_memory();
        sh->groups = g;
        sh->cap_groups = cap;
    }
    group *g = &sh->groups[sh->n_groups++];
    g->members = malloc((size_t)k * sizeof(int));
    if (!g->members)
        alg_out_of_memory();
    memcpy(g->members, members, (size_t)k * sizeof(int));
    qsort(g->members, (size_t)k, sizeof(int), cmp_int);
    g->k = k;
    g->queued = 1;
    g->done = 0;
    sh->formed++;
    if (sh->formed - sh->completed > sh->pending_max)
        sh->pending_max = sh->formed - sh->completed;
    return g;
}

/* Generator: launch every queued group whose members are all free, oldest
 * first; a group that must wait blocks its members for later groups. */
static void launch_ready(alg_ctx *ctx)
{
    pr_shared *sh = ctx->shared;
    char *claimed = calloc((size_t)ctx->n, 1);
    if (!claimed)
        alg_out_of_memory();
    for (size_t id = sh->queue_head; id < sh->n_groups; id++) {
        group *g = &sh->groups[id];
        if (!g->queued)
            continue;
        int ok = 1;
        for (int m = 0; m < g->k; m++)
            if (sh->busy[g->members[m]] || claimed[g->members[m]])
                ok = 0;
        if (!ok) {
            for (int m = 0; m < g->k; m++)
                claimed[g->members[m]] = 1;
            continue;
        }
        g->queued = 0;
        for (int m = 0; m < g->k; m++) {
            sh->busy[g->members[m]] = 1;
            alg_send(ctx, ctx->server, g->members[m], TAG_GROUP, id, NULL, 0);
        }
    }
    while (sh->queue_head < sh->n_groups && !sh->groups[sh->queue_head].queued)
        sh->queue_head++;
    free(claimed);
}

static void random_group(alg_ctx *ctx, int requester)
{
    pr_shared *sh = ctx->shared;
    int k = group_size(ctx);
    int *pick = sh->perm;   /* others drawn from all workers but the requester */
    int n_other = 0;
    for (int w = 0; w < ctx->n; w++)
        if (w != requester)
            sh->phase_group[n_other++] = w;
    gsl_ran_choose(alg_rng(ctx, ctx->server), pick + 1, (size_t)(k - 1), sh->phase_group,
                   (size_t)n_other, sizeof(int));
    pick[0] = requester;
    int conflict = 0;
    for (int m = 0; m < k; m++)
        if (sh->busy[pick[m]])
            conflict = 1;
    for (size_t id = sh->queue_head; id < sh->n_groups && !conflict; id++)
        if (sh->groups[id].queued)
            for (int m = 0; m < sh->groups[id].k; m++)
                for (int q = 0; q < k; q++)
                    if (sh->groups[id].members[m] == pick[q])
                        conflict = 1;
    sh->conflicts += (uint64_t)conflict;
    new_group(sh, pick, k);
    launch_ready(ctx);
}

/* Static schedule: phase p's partition ranks the workers by a hash of
 * (seed, p, worker), so it is the same whichever request comes first;
 * worker w's group is the block of group_size ranks that holds it. */
typedef struct pending {
    uint64_t phase;
    int      block, count;
} pending;

static int rank_cmp(const void *a, const void *b)
{
    uint64_t x = ((const uint64_t *)a)[0], y = ((const uint64_t *)b)[0];
    return (x > y) - (x < y);
}

/* Members of worker w's group in phase p, in members (returns count). */
static int static_members(const alg_ctx *ctx, uint64_t seed, uint64_t p, int w, int *members,
                          int *block_out)
{
    int n = ctx->n, g = group_size(ctx);
    uint64_t (*key)[2] = malloc((size_t)n * sizeof *key);
    if (!key)
        alg_out_of_memory();
    for (int i = 0; i < n; i++) {
        key[i][0] = alg_hash64(seed ^ alg_hash64(p * 0x100000001b3ULL + (uint64_t)i));
        key[i][1] = (uint64_t)i;
    }
    qsort(key, (size_t)n, sizeof *key, rank_cmp);
    int rank = 0;
    while ((int)key[rank][1] != w)
        rank++;
    /* the last block takes the remainder when g does not divide n */
    int blocks = n / g, block = rank / g < blocks ? rank / g : blocks - 1;
    int lo = block * g, hi = block == blocks - 1 ? n : lo + g;
    int k = 0;
    for (int r = lo; r < hi; r++)
        members[k++] = (int)key[r][1];
    free(key);
    *block_out = block;
    return k;
}

typedef struct pr_shared_static {
    uint64_t seed;
    pending *pend;
    size_t   n_pend, cap_pend;
} pr_shared_static;

static pr_shared_static *static_part(alg_ctx *ctx);

static void static_request(alg_ctx *ctx, int w, uint64_t phase)
{
    pr_shared *sh = ctx->shared;
    pr_shared_static *st = static_part(ctx);
    int block, k = static_members(ctx, st->seed, phase, w, sh->perm, &block);
    size_t i;
    for (i = 0; i < st->n_pend; i++)
        if (st->pend[i].phase == phase && st->pend[i].block == block)
            break;
    if (i == st->n_pend) {
        if (st->n_pend == st->cap_pend) {
            size_t cap = st->cap_pend ? 2 * st->cap_pend : 16;
            pending *pp = realloc(st->pend, cap * sizeof *pp);
            if (!pp)
                alg_out_of_memory();
            st->pend = pp;
            st->cap_pend = cap;
        }
        st->pend[st->n_pend++] = (pending){ phase, block, 0 };
    }
    if (++st->pend[i].count < k)
        return;
    st->pend[i] = st->pend[--st->n_pend];
    new_group(sh, sh->perm, k);
    launch_ready(ctx);
}

/* ---- members ---- */

static void averaged(alg_ctx *ctx, int node, const double *sum, size_t len);

static int pr_shared_init(alg_ctx *ctx)
{
    pr_shared *sh = calloc(1, sizeof *sh + sizeof(pr_shared_static));
    if (!sh)
        return -1;
    ctx->shared = sh;
    static_part(ctx)->seed = gsl_rng_get(alg_rng(ctx, ctx->server));
    sh->busy = calloc((size_t)ctx->n, 1);
    sh->phase_group = malloc((size_t)ctx->n * sizeof(int));
    sh->perm = malloc((size_t)ctx->n * sizeof(int));
    sh->coll = alg_coll_create(ctx, (alg_coll_kind)ctx->param[P_COLLECTIVE], ctx->P, TAG_COLL,
                               averaged);
    return sh->busy && sh->phase_group && sh->perm && sh->coll ? 0 : -1;
}

static pr_shared_static *static_part(alg_ctx *ctx)
{
    return (pr_shared_static *)((pr_shared *)ctx->shared + 1);
}

static void pr_shared_fini(alg_ctx *ctx)
{
    pr_shared *sh = ctx->shared;
    if (!sh)
        return;
    alg_coll_destroy(ctx, sh->coll);
    for (size_t i = 0; i < sh->n_groups; i++)
        free(sh->groups[i].members);
    free(sh->groups);
    free(sh->busy);
    free(sh->phase_group);
    free(sh->perm);
    free(static_part(ctx)->pend);
    free(sh);
}

static int pr_check(const alg_ctx *ctx, char *err, size_t size)
{
    if (ctx->n < 2) {
        snprintf(err, size, "prague needs at least 2 workers, got %d", ctx->n);
        return -1;
    }
    return 0;
}

static int pr_init(alg_ctx *ctx, void *state, int node)
{
    pr_state *st = state;
    if (node == ctx->server)
        return 0;
    st->held = malloc((ctx->P ? ctx->P : 1) * sizeof(double));
    return st->held ? 0 : -1;
}

static void pr_fini(alg_ctx *ctx, void *state, int node)
{
    (void)ctx;
    (void)node;
    free(((pr_state *)state)->held);
}

static void request(alg_ctx *ctx, pr_state *st, int i)
{
    st->requested = 1;
    alg_send(ctx, i, ctx->server, TAG_REQUEST, st->phase++, NULL, 0);
}

static void pr_on_step_done(alg_ctx *ctx, void *state, int i, const double *grad)
{
    pr_state *st = state;
    if (st->in_group) {   /* apply after the average lands */
        memcpy(st->held, grad, ctx->P * sizeof(double));
        st->holding = 1;
        return;
    }
    alg_sgd_apply(ctx, i, alg_params(ctx, i), grad, 1.0);
    request(ctx, st, i);
}

static void averaged(alg_ctx *ctx, int node, const double *sum, size_t len)
{
    pr_state *st = alg_state(ctx, node);
    pr_shared *sh = ctx->shared;
    double *x = alg_params(ctx, node);
    int k = 0;
    memcpy(x, sum, len * sizeof(double));
    k = st->in_group;
    cblas_dscal((int)len, 1.0 / k, x, 1);
    st->in_group = 0;
    if (++sh->groups[st->gid].done == sh->groups[st->gid].k)
        sh->completed++;
    alg_send(ctx, node, ctx->server, TAG_FREE, 0, NULL, 0);
    if (st->holding) {
        st->holding = 0;
        alg_sgd_apply(ctx, node, x, st->held, 1.0);
        request(ctx, st, node);
    } else if (st->requested) {
        st->requested = 0;
        alg_start_step(ctx, node);
    }
}

static void pr_on_message(alg_ctx *ctx, void *state, int i, const cl_msg *m)
{
    pr_state *st = state;
    pr_shared *sh = ctx->shared;
    if (i == ctx->server) {
        if (m->tag == TAG_REQUEST) {
            if ((int)ctx->param[P_GROUPS] == GROUPS_STATIC)
                static_request(ctx, m->from, m->round);
            else
                random_group(ctx, m->from);
        } else {   /* TAG_FREE */
            sh->busy[m->from] = 0;
            launch_ready(ctx);
        }
        return;
    }
    if (m->tag == TAG_COLL) {
        alg_coll_on_message(ctx, sh->coll, i, m);
        return;
    }
    /* TAG_GROUP: join the partial all-reduce of group m->round */
    const group *g = &sh->groups[m->round];
    st->in_group = g->k;
    st->gid = m->round;
    alg_coll_start(ctx, sh->coll, i, m->round, g->members, g->k, alg_params(ctx, i));
}

static void pr_describe_wait(const alg_ctx *ctx, const void *state, int i, char *buf,
                             size_t size)
{
    const pr_state *st = state;
    const pr_shared *sh = ctx->shared;
    if (i == ctx->server)
        buf[0] = '\0';
    else if (st->in_group)
        alg_coll_describe_wait(sh->coll, i, buf, size);
    else if (st->requested)
        snprintf(buf, size, "a group from the group generator");
    else
        snprintf(buf, size, "%s", alg_is_computing(ctx, i) ? "its step" : "");
}

static int pr_stats(const alg_ctx *ctx, const char **keys, double *values, int max)
{
    const pr_shared *sh = ctx->shared;
    if (max < 5)
        return 0;
    keys[0] = "groups_formed";
    values[0] = (double)sh->formed;
    keys[1] = "group_conflicts";
    values[1] = (double)sh->conflicts;
    keys[2] = "conflict_rate";
    values[2] = sh->formed ? (double)sh->conflicts / (double)sh->formed : 0;
    keys[3] = "groups_completed";
    values[3] = (double)sh->completed;
    keys[4] = "pending_groups_max";
    values[4] = (double)sh->pending_max;
    return 5;
}

const alg_type alg_prague = {
    .name = "prague",
    .state_size = sizeof(pr_state),
    .servers = 1,
    .params = params,
    .check = pr_check,
    .shared_init = pr_shared_init,
    .shared_fini = pr_shared_fini,
    .init = pr_init,
    .on_step_done = pr_on_step_done,
    .on_message = pr_on_message,
    .describe_wait = pr_describe_wait,
    .stats = pr_stats,
    .fini = pr_fini,
};
