/* alg_prague.c -- Prague (Luo, He, Zhuo, Qian, "Prague: High-Performance
 * Heterogeneity-Aware Asynchronous Decentralized Training", ASPLOS 2020):
 * workers average their models in small groups by partial all-reduce
 * (P-Reduce), with groups formed by a Group Generator (GG).
 *
 * The worker's loop is the paper's: compute a step, apply the gradient, get
 * a group from the GG, P-Reduce with it (blocking), repeat.  So a worker
 * takes part in exactly one group per step, and a group runs when its last
 * member's step ends: a straggler delays the groups it belongs to.  The GG
 * is an extra node, as a parameter server is; its control messages carry 0
 * bytes, so they cost latency only.
 * - `groups` = "random" (default; the paper's random GG with its Group
 *   Buffer): the GG keeps, per worker, a FIFO of the groups it was drawn
 *   into.  A worker whose step ends asks the GG; if its buffer holds a
 *   group it is given the oldest one, else the GG forms a new group of the
 *   requester and group_size - 1 other workers drawn uniformly and appends
 *   it to every member's buffer.  Members drawn while computing join when
 *   their step ends.  Every buffer is in the GG's one order of creation,
 *   so the oldest unfinished group is first in all its members' buffers:
 *   no deadlock, and since a worker forms a group only with an empty
 *   buffer and then waits for that group, at most n groups are pending.
 *   A group is a conflict when a member has an earlier unfinished group
 *   (the new one then waits behind it).
 * - `groups` = "static": the GG holds one seeded random partition of the
 *   workers into groups of `group_size` per phase; a worker's k-th request
 *   is for phase k, and its group runs when all members have asked for that
 *   phase.  No conflicts are possible.
 * - `groups` = "random_pull" (not the paper; dtsim's earlier random mode,
 *   kept for comparison): the GG forms a group of the requester and drawn
 *   workers at every request and starts it as soon as no member is in an
 *   earlier running or queued group, pulling members in whatever they are
 *   doing (their communication runs beside their computation).  A member
 *   whose step ends during a group holds its gradient until the average is
 *   in, then applies it and asks for its own group; a requester continues
 *   when its own group is done (not any group that contains it), which is
 *   what bounds the queue at n pending groups here too.
 * The paper's Group Division (groups drawn within fixed divisions of the
 * workers) is not modelled.  Where the paper is silent (no public code):
 * the gradient is applied before the P-Reduce (as AD-PSGD and the paper's
 * Algorithm do), a request costs one round trip to the GG, and conflicts
 * are counted as above.  Evaluation: the average of the workers' models.
 *
 * When a worker is declared failed, in every mode the GG draws it no more
 * and the unfinished groups holding it re-form among their live members
 * (regroup); static phases opened later are partitioned without it
 * (alg_prague_static.c).  The GG itself is waited for (docs/algorithms.md).
 */
#include "alg_coll.h"
#include "alg_prague_static.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <gsl/gsl_cblas.h>
#include <gsl/gsl_randist.h>

enum { P_GROUP_SIZE, P_GROUPS, P_COLLECTIVE };
enum { GROUPS_RANDOM, GROUPS_STATIC, GROUPS_RANDOM_PULL };
enum { TAG_COLL = 1, TAG_REQUEST = 2, TAG_GROUP = 3, TAG_FREE = 4 };

static const char *const group_names[] = { "random", "static", "random_pull", NULL };

static const alg_param_spec params[] = {
    { "group_size", ALG_PARAM_INT, 3, 2, 1e9, NULL, "workers per partial all-reduce group" },
    { "groups", ALG_PARAM_CHOICE, GROUPS_RANDOM, 0, 0, group_names,
      "how groups form: random (Group Buffer), static blocks per phase, random_pull" },
    { "collective", ALG_PARAM_CHOICE, ALG_COLL_RING, 0, 0, alg_coll_kind_names,
      "the all-reduce pattern within a group" },
    { NULL, 0, 0, 0, 0, NULL, NULL },
};

typedef struct group {
    int *members;   /* sorted */
    int  k;
    int  creator;   /* the worker whose request formed it (-1: static) */
    int  queued;    /* random_pull, static: waiting for busy members */
    int  done;      /* members whose average has landed */
    int64_t moved;  /* re-formed without a failed member as this group, or -1 */
} group;

/* A worker's Group Buffer (the GG's view): group ids, oldest first. */
typedef struct fifo {
    uint64_t *id;
    size_t    head, len, cap;
} fifo;

typedef struct pr_shared {
    alg_coll *coll;
    group    *groups;         /* by group id */
    size_t    n_groups, cap_groups;
    fifo     *buffer;         /* random: per worker */
    char     *busy;           /* random_pull, static: per worker, in a running group */
    size_t    queue_head;     /* first group id that may still be queued */
    uint64_t  conflicts, formed, completed, pending_max, joins, midstep_joins;
    int      *phase_group;    /* scratch: candidate workers */
    int      *perm;           /* scratch: a group's members */
    int64_t  *cur;            /* random: per worker, the group given it and not done, or -1 */
    uint64_t  reformed;
    pr_static *stat;          /* static: the phases' partitions */
} pr_shared;

typedef struct pr_state {
    int      in_group;        /* members of the group being averaged, or 0 */
    int      requested;       /* waiting for a group (its own, in random_pull) */
    uint64_t phase;           /* requests made */
    uint64_t gid;             /* the group being averaged */
    double  *held;            /* random_pull: gradient of a step that ended during a group */
    int      holding;
    int      rejoin;          /* static, random_pull: declared back, not yet returned */
} pr_state;

static int mode(const alg_ctx *ctx) { return (int)ctx->param[P_GROUPS]; }

static int group_size(const alg_ctx *ctx)
{
    int g = (int)ctx->param[P_GROUP_SIZE];
    return g < ctx->n ? g : ctx->n;
}

static int cmp_int(const void *a, const void *b)
{
    return (*(const int *)a > *(const int *)b) - (*(const int *)a < *(const int *)b);
}

/* A new group of k members (copied, then sorted): its id is its index. */
static size_t new_group(pr_shared *sh, const int *members, int k, int creator)
{
    if (sh->n_groups == sh->cap_groups) {
        size_t cap = sh->cap_groups ? 2 * sh->cap_groups : 64;
        group *g = realloc(sh->groups, cap * sizeof *g);
        if (!g)
            alg_out_of_memory();
        sh->groups = g;
        sh->cap_groups = cap;
    }
    group *g = &sh->groups[sh->n_groups];
    g->members = malloc((size_t)k * sizeof(int));
    if (!g->members)
        alg_out_of_memory();
    memcpy(g->members, members, (size_t)k * sizeof(int));
    qsort(g->members, (size_t)k, sizeof(int), cmp_int);
    g->k = k;
    g->creator = creator;
    g->queued = 1;
    g->done = 0;
    g->moved = -1;
    sh->formed++;
    if (sh->formed - sh->completed > sh->pending_max)
        sh->pending_max = sh->formed - sh->completed;
    return sh->n_groups++;
}

static void fifo_push(fifo *f, uint64_t id)
{
    if (f->head > 0 && f->head == f->len)
        f->head = f->len = 0;
    if (f->len == f->cap) {
        if (f->head > 0) {   /* reclaim the consumed front first */
            memmove(f->id, f->id + f->head, (f->len - f->head) * sizeof *f->id);
            f->len -= f->head;
            f->head = 0;
        } else {
            size_t cap = f->cap ? 2 * f->cap : 4;
            uint64_t *p = realloc(f->id, cap * sizeof *p);
            if (!p)
                alg_out_of_memory();
            f->id = p;
            f->cap = cap;
        }
    }
    f->id[f->len++] = id;
}

static int fifo_empty(const fifo *f) { return f->head == f->len; }

/* The requester plus group_size - 1 other workers drawn uniformly, in
 * sh->perm; returns the count. */
static int draw_group(alg_ctx *ctx, int requester)
{
    pr_shared *sh = ctx->shared;
    int k = group_size(ctx);
    int n_other = 0;
    for (int w = 0; w < ctx->n; w++)   /* the GG never draws a worker declared failed */
        if (w != requester && !alg_is_failed(ctx, w))
            sh->phase_group[n_other++] = w;
    if (k - 1 > n_other)
        k = n_other + 1;
    gsl_ran_choose(alg_rng(ctx, ctx->server), sh->perm + 1, (size_t)(k - 1), sh->phase_group,
                   (size_t)n_other, sizeof(int));
    sh->perm[0] = requester;
    return k;
}

static void send_group(alg_ctx *ctx, int to, size_t id)
{
    pr_shared *sh = ctx->shared;
    sh->joins++;
    sh->cur[to] = (int64_t)id;
    alg_send(ctx, ctx->server, to, TAG_GROUP, id, NULL, 0);
}

/* ---- random: the Group Buffer ---- */

/* GG: worker w's step ended.  It gets the oldest group of its buffer, or a
 * new one formed for it. */
static void buffer_request(alg_ctx *ctx, int w)
{
    pr_shared *sh = ctx->shared;
    fifo *f = &sh->buffer[w];
    if (fifo_empty(f)) {
        int k = draw_group(ctx, w), conflict = 0;
        size_t id = new_group(sh, sh->perm, k, w);
        const group *g = &sh->groups[id];
        for (int m = 0; m < k; m++) {
            conflict |= !fifo_empty(&sh->buffer[g->members[m]]);
            fifo_push(&sh->buffer[g->members[m]], id);
        }
        sh->conflicts += (uint64_t)conflict;
    }
    uint64_t id = f->id[f->head++];
    sh->groups[id].queued = 0;
    send_group(ctx, w, id);
}

/* ---- random_pull and static: groups start when their members are free ---- */

/* GG: launch every queued group whose members are all free, oldest first;
 * a group that must wait blocks its members for later groups. */
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
            send_group(ctx, g->members[m], id);
        }
    }
    while (sh->queue_head < sh->n_groups && !sh->groups[sh->queue_head].queued)
        sh->queue_head++;
    free(claimed);
}

static void pull_request(alg_ctx *ctx, int requester)
{
    pr_shared *sh = ctx->shared;
    int k = draw_group(ctx, requester);
    const int *pick = sh->perm;
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
    new_group(sh, pick, k, requester);
    launch_ready(ctx);
}

/* Static schedule (alg_prague_static.c): a group forms when its members
 * of the phase have all asked. */
static void static_request(alg_ctx *ctx, int w, uint64_t phase)
{
    pr_shared *sh = ctx->shared;
    int k = pr_static_request(ctx, sh->stat, w, phase, sh->perm);
    if (!k)
        return;
    new_group(sh, sh->perm, k, -1);
    launch_ready(ctx);
}

/* ---- members ---- */

static void averaged(alg_ctx *ctx, int node, const double *sum, size_t len);

static int pr_shared_init(alg_ctx *ctx)
{
    pr_shared *sh = calloc(1, sizeof *sh);
    if (!sh)
        return -1;
    ctx->shared = sh;
    sh->stat = pr_static_create(ctx, group_size(ctx), gsl_rng_get(alg_rng(ctx, ctx->server)));
    sh->busy = calloc((size_t)ctx->n, 1);
    sh->buffer = calloc((size_t)ctx->n, sizeof *sh->buffer);
    sh->phase_group = malloc((size_t)ctx->n * sizeof(int));
    sh->perm = malloc((size_t)ctx->n * sizeof(int));
    sh->cur = malloc((size_t)ctx->n * sizeof *sh->cur);
    if (!sh->cur)
        return -1;
    for (int w = 0; w < ctx->n; w++)
        sh->cur[w] = -1;
    sh->coll = alg_coll_create(ctx, (alg_coll_kind)ctx->param[P_COLLECTIVE], ctx->P, TAG_COLL,
                               averaged);
    return sh->busy && sh->buffer && sh->phase_group && sh->perm && sh->coll && sh->stat ? 0
                                                                                      : -1;
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
    if (sh->buffer)
        for (int w = 0; w < ctx->n; w++)
            free(sh->buffer[w].id);
    free(sh->buffer);
    free(sh->busy);
    free(sh->phase_group);
    free(sh->perm);
    free(sh->cur);
    pr_static_destroy(sh->stat);
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
    /* random_pull: a step may end inside a group; with failures any mode
     * may see it (a node back from a failure restarts its step while a
     * re-formed group still counts it) */
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
    if (st->in_group) {   /* random_pull: apply after the average lands */
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
    group *g = &sh->groups[st->gid];
    memcpy(x, sum, len * sizeof(double));
    cblas_dscal((int)len, 1.0 / st->in_group, x, 1);
    st->in_group = 0;
    if (sh->cur[node] == (int64_t)st->gid)
        sh->cur[node] = -1;
    if (++g->done == g->k)
        sh->completed++;
    if (mode(ctx) != GROUPS_RANDOM)   /* the GG tracks who is busy */
        alg_send(ctx, node, ctx->server, TAG_FREE, 0, NULL, 0);
    if (st->holding) {
        st->holding = 0;
        alg_sgd_apply(ctx, node, x, st->held, 1.0);
        request(ctx, st, node);
    } else if (st->requested && (mode(ctx) != GROUPS_RANDOM_PULL || g->creator == node)) {
        /* random_pull: a requester waits for its own group, not for any
         * group that pulled it in meanwhile */
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
            if (mode(ctx) == GROUPS_STATIC)
                static_request(ctx, m->from, m->round);
            else if (mode(ctx) == GROUPS_RANDOM)
                buffer_request(ctx, m->from);
            else if (!alg_is_failed(ctx, m->from))   /* not sent before it was declared */
                pull_request(ctx, m->from);
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
    /* TAG_GROUP: join the partial all-reduce of group m->round, or of
     * the group it was re-formed as */
    uint64_t id = m->round;
    while (sh->groups[id].moved >= 0)
        id = (uint64_t)sh->groups[id].moved;
    if (sh->cur[i] != (int64_t)id || st->in_group)
        return;   /* given before it failed: the GG gave it away since */
    const group *g = &sh->groups[id];
    if (alg_is_computing(ctx, i))
        sh->midstep_joins++;
    st->in_group = g->k;
    st->gid = id;
    alg_coll_start(ctx, sh->coll, i, id, g->members, g->k, alg_params(ctx, i));
}

/* ---- failures (docs/algorithms.md) ---- */

/* Whether worker w has left group id behind: averaged in it, or the GG
 * took it out. */
static int left(const pr_shared *sh, int w, uint64_t id)
{
    const fifo *f = &sh->buffer[w];
    for (size_t q = f->head; q < f->len; q++)
        if (f->id[q] == id)
            return 0;
    return sh->cur[w] != (int64_t)id;
}

/* Group id (unfinished, holding `without` or a member that must re-send)
 * re-forms as a new group of its members that are not declared failed,
 * have not averaged in it yet and are not `without`: it takes id's place in
 * their buffers; those already in it abandon it and join the new one, those
 * given it join the new one when the GG's message comes.  A group the GG
 * has not launched yet (static, random_pull) re-forms as a queued one. */
static void regroup(alg_ctx *ctx, uint64_t id, int without)
{
    pr_shared *sh = ctx->shared;
    int queued = mode(ctx) != GROUPS_RANDOM && sh->groups[id].queued;
    int k = 0;
    for (int m = 0; m < sh->groups[id].k; m++) {
        int w = sh->groups[id].members[m];
        if (w != without && !alg_is_failed(ctx, w) && (queued || !left(sh, w, id)))
            sh->perm[k++] = w;
    }
    sh->groups[id].done = sh->groups[id].k;   /* superseded */
    sh->completed++;
    sh->reformed++;
    if (k == 0)
        return;
    size_t nid = new_group(sh, sh->perm, k, sh->groups[id].creator);
    group *g = &sh->groups[nid], *old = &sh->groups[id];
    old->moved = (int64_t)nid;
    old->queued = 0;
    g->queued = queued;
    for (int m = 0; queued == 0 && m < g->k; m++) {
        int w = g->members[m];
        fifo *f = &sh->buffer[w];
        for (size_t q = f->head; q < f->len; q++)
            if (f->id[q] == id)
                f->id[q] = nid;
        if (sh->cur[w] != (int64_t)id)
            continue;
        sh->cur[w] = (int64_t)nid;
        pr_state *st = alg_state(ctx, w);
        if (st->in_group && st->gid == id) {
            alg_coll_abandon(ctx, sh->coll, w);
            st->in_group = g->k;
            st->gid = nid;
            alg_coll_start(ctx, sh->coll, w, nid, g->members, g->k, alg_params(ctx, w));
        }
    }
}

static int holds(const group *g, int w)
{
    for (int m = 0; m < g->k; m++)
        if (g->members[m] == w)
            return 1;
    return 0;
}

/* Declared failed: every unfinished group that holds it re-forms without
 * it (and with static groups, its groups of the phases open stop counting
 * it), its buffer empties and the GG no longer counts it busy.  Back: it is
 * drawn again (random, random_pull: a new group formed for its next
 * request; static: from the first phase no request has opened, where it
 * rejoins). */
static void pr_on_failure(alg_ctx *ctx, int peer, int failed)
{
    pr_shared *sh = ctx->shared;
    if (peer == ctx->server)
        return;   /* the GG: everyone waits for it (docs/algorithms.md) */
    pr_state *st = alg_state(ctx, peer);
    if (!failed) {
        if (mode(ctx) == GROUPS_STATIC)
            st->phase = pr_static_declared(ctx, sh->stat, peer, 0);
        st->rejoin = mode(ctx) != GROUPS_RANDOM;
        return;
    }
    size_t n = sh->n_groups;
    for (size_t id = 0; id < n; id++) {
        const group *g = &sh->groups[id];
        if (g->done < g->k && g->moved < 0 && holds(g, peer))
            regroup(ctx, id, peer);
    }
    sh->buffer[peer].head = sh->buffer[peer].len = 0;
    sh->cur[peer] = -1;
    alg_coll_abandon(ctx, sh->coll, peer);
    st->in_group = 0;
    st->requested = 0;
    if (mode(ctx) == GROUPS_RANDOM)
        return;
    st->holding = 0;
    sh->busy[peer] = 0;
    if (mode(ctx) == GROUPS_STATIC) {
        pr_static_declared(ctx, sh->stat, peer, 1);
        int k;
        while ((k = pr_static_take_complete(ctx, sh->stat, sh->perm)) > 0)
            new_group(sh, sh->perm, k, -1);
    }
    launch_ready(ctx);
}

/* Back: a worker that was declared starts a new step on the model it has
 * (faults.rejoin) and asks for a group after it; one that was in a group
 * when it went down (not declared) re-forms it, since what it sent may be
 * lost. */
static void pr_on_return(alg_ctx *ctx, void *state, int i)
{
    pr_state *st = state;
    pr_shared *sh = ctx->shared;
    if (i == ctx->server)
        return;
    if (st->rejoin) {
        st->rejoin = 0;
        alg_abort_step(ctx, i);
        alg_start_step(ctx, i);
    } else if (st->in_group) {
        regroup(ctx, st->gid, -1);
        if (mode(ctx) != GROUPS_RANDOM)
            launch_ready(ctx);
    } else if (!st->requested && sh->cur[i] < 0) {
        alg_abort_step(ctx, i);
        alg_start_step(ctx, i);
    }
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
    const char *k[] = { "groups_formed", "groups_completed", "pending_groups_max",
                        "group_joins", "midstep_joins", "group_conflicts", "conflict_rate",
                        "groups_reformed" };
    double v[] = { (double)sh->formed, (double)sh->completed, (double)sh->pending_max,
                   (double)sh->joins, (double)sh->midstep_joins, (double)sh->conflicts,
                   sh->formed ? (double)sh->conflicts / (double)sh->formed : 0,
                   (double)sh->reformed };
    int n = (int)(sizeof k / sizeof k[0]);
    if (max < n)
        return 0;
    for (int i = 0; i < n; i++) {
        keys[i] = k[i];
        values[i] = v[i];
    }
    return n;
}

const alg_type alg_prague = {
    .name = "prague",
    .summary = "partial all-reduce in generated groups (Luo et al. 2020)",
    .state_size = sizeof(pr_state),
    .servers = 1,
    .params = params,
    .check = pr_check,
    .shared_init = pr_shared_init,
    .shared_fini = pr_shared_fini,
    .init = pr_init,
    .on_step_done = pr_on_step_done,
    .on_message = pr_on_message,
    .on_failure = pr_on_failure,
    .on_return = pr_on_return,
    .describe_wait = pr_describe_wait,
    .stats = pr_stats,
    .fini = pr_fini,
};
