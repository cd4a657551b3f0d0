/* alg_coll.c -- all-reduce among a set of nodes as real messages (see
 * alg_coll.h).  Each member runs a small program: send what it can, wait
 * for the message it needs next (round, stage), combine, repeat.  Messages
 * that come before they are needed wait in the member's mailbox, so members
 * may start at different times and run at their own pace, as real ones do;
 * a slow member or link holds the others back exactly as far as the pattern
 * makes them depend on it.  Sums use only commutative pairwise additions or
 * copies of one member's result, so every member ends with the same bits.
 * It does not decide when to reduce or what to do with the sum.
 */
#include "alg_coll.h"

#include <assert.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <gsl/gsl_cblas.h>

const char *const alg_coll_kind_names[] = { "ring", "recursive_doubling", "tree", NULL };

/* cl_msg.round carries the stage in its low bits, the collective's round
 * above, and the epoch (alg_coll_new_epoch) modulo 2^EPOCH_BITS in the top
 * bits, so epoch 0 sends exactly what a collective without epochs sends. */
#define STAGE_BITS 21
#define STAGE_MASK ((1u << STAGE_BITS) - 1)
#define STAGE_FINAL STAGE_MASK   /* result handed back (fold, broadcast) */
#define EPOCH_BITS 12
#define ROUND_BITS (64 - STAGE_BITS - EPOCH_BITS)
#define ROUND_MASK ((UINT64_C(1) << ROUND_BITS) - 1)
#define EPOCH_MASK ((UINT64_C(1) << EPOCH_BITS) - 1)

typedef struct mail {
    uint64_t round;
    uint32_t stage;
    cl_buf  *payload;
} mail;

typedef struct cnode {
    int      active;
    uint64_t round;
    int      k, pos;
    int      identity;  /* members are 0 .. n-1 in order: no copy kept */
    int     *members;   /* otherwise a copy, capacity cap_members */
    int      cap_members;
    double  *acc;
    size_t   len;      /* this round's vector length (<= co->len) */
    double   tbytes;   /* this round's timing-only bytes (alg_coll_start_timed); < 0: none */
    int      pc;       /* the program counter: meaning per pattern */
    int      sent;     /* the send of the current pc is done */
    mail    *box;
    size_t   n_box, cap_box;
} cnode;

struct alg_coll {
    alg_coll_kind kind;
    size_t        len;
    uint32_t      tag;
    alg_coll_done done;
    alg_coll_part_done part_done;   /* parts: instead of done */
    int           part_id;
    double        timing_bytes;     /* parts, timing-only model; < 0: the model's */
    uint64_t      epoch;            /* membership changes so far */
    double        epoch_t;          /* when the current epoch began */
    int           n;
    cnode        *nodes;
    int          *everyone;   /* 0 .. n-1 */
    /* elastic membership (alg_coll_members) */
    uint64_t     *join;       /* NULL until a join is set */
    uint64_t      version;    /* membership changes; 0: everyone, always */
    uint64_t      cache_round, cache_version;
    int          *cache;      /* members of cache_round at cache_version */
    int           cache_k;
};

alg_coll *alg_coll_create(const alg_ctx *ctx, alg_coll_kind kind, size_t len, uint32_t tag,
                          alg_coll_done done)
{
    alg_coll *co = calloc(1, sizeof *co);
    if (!co)
        return NULL;
    co->kind = kind;
    co->len = len;
    co->tag = tag;
    co->done = done;
    co->timing_bytes = -1;
    co->n = ctx->n;
    co->nodes = calloc((size_t)ctx->n, sizeof(cnode));
    co->everyone = malloc((size_t)(ctx->n ? ctx->n : 1) * sizeof(int));
    if (!co->nodes || !co->everyone)
        goto out_free;
    for (int i = 0; i < ctx->n; i++)
        co->everyone[i] = i;
    for (int i = 0; i < ctx->n; i++) {
        cnode *c = &co->nodes[i];
        c->acc = malloc((len ? len : 1) * sizeof(double));
        if (!c->acc)
            goto out_free;
    }
    return co;

out_free:
    if (co->nodes)
        for (int i = 0; i < ctx->n; i++) {
            free(co->nodes[i].members);
            free(co->nodes[i].acc);
        }
    free(co->nodes);
    free(co->everyone);
    free(co);
    return NULL;
}

double alg_coll_memory_bytes(int n, size_t len, int k)
{
    /* per node: its record, its sum, a copy of the members (when not all
     * nodes), a mailbox of 8 (doubled when a round brings more); the list
     * of everyone; malloc's 16 bytes a block */
    const double per = sizeof(cnode) + 8.0 * (double)(len ? len : 1) + 16
                     + (k < n ? 4.0 * k + 16 : 0) + 8.0 * sizeof(mail) + 16 + 4;
    return sizeof(alg_coll) + (double)n * per;
}

alg_coll *alg_coll_create_part(const alg_ctx *ctx, alg_coll_kind kind, size_t len, uint32_t tag,
                               alg_coll_part_done done, int id, double timing_bytes)
{
    alg_coll *co = alg_coll_create(ctx, kind, len, tag, NULL);
    if (!co)
        return NULL;
    co->part_done = done;
    co->part_id = id;
    co->timing_bytes = timing_bytes;
    return co;
}

void alg_coll_destroy(alg_ctx *ctx, alg_coll *co)
{
    if (!co)
        return;
    for (int i = 0; i < co->n; i++) {
        cnode *c = &co->nodes[i];
        for (size_t m = 0; m < c->n_box; m++)
            alg_buf_put(ctx, c->box[m].payload);
        free(c->box);
        free(c->members);
        free(c->acc);
    }
    free(co->nodes);
    free(co->everyone);
    free(co->join);
    free(co->cache);
    free(co);
}

const int *alg_coll_everyone(const alg_coll *co) { return co->everyone; }

int alg_coll_active(const alg_coll *co, int node) { return co->nodes[node].active; }

/* ---- sending and receiving ---- */

/* Sends acc[from .. from+count) to member to_pos; bytes on the wire. */
static void send_part(alg_ctx *ctx, alg_coll *co, int node, int to_pos, uint32_t stage,
                      size_t from, size_t count, double bytes)
{
    cnode *c = &co->nodes[node];
    cl_buf *b = alg_buf_get(ctx);
    b->len = count;
    memcpy(b->data, c->acc + from, count * sizeof(double));
    alg_send(ctx, node, c->identity ? to_pos : c->members[to_pos], co->tag,
             ((co->epoch & EPOCH_MASK) << (64 - EPOCH_BITS)) | (c->round << STAGE_BITS) | stage,
             b, bytes);
    alg_buf_put(ctx, b);
}

/* Wire bytes of node's whole vector this round. */
static double vec_bytes(const alg_ctx *ctx, const alg_coll *co, int node, size_t len)
{
    const double tb = co->nodes[node].tbytes >= 0 ? co->nodes[node].tbytes : co->timing_bytes;
    if (tb >= 0 && alg_timing_only(ctx))
        return tb;
    return alg_param_bytes(ctx, len);
}

static void send_all(alg_ctx *ctx, alg_coll *co, int node, int to_pos, uint32_t stage)
{
    const size_t len = co->nodes[node].len;
    send_part(ctx, co, node, to_pos, stage, 0, len, vec_bytes(ctx, co, node, len));
}

/* The mailed payload of (current round, stage), removed from the box with
 * its reference handed to the caller; NULL when it has not come yet. */
static cl_buf *take(cnode *c, uint32_t stage)
{
    for (size_t m = 0; m < c->n_box; m++)
        if (c->box[m].round == c->round && c->box[m].stage == stage) {
            cl_buf *p = c->box[m].payload;
            memmove(c->box + m, c->box + m + 1, (c->n_box - m - 1) * sizeof(mail));
            c->n_box--;
            return p;
        }
    return NULL;
}

static void add_into(double *acc, const cl_buf *p)
{
    cblas_daxpy((int)p->len, 1.0, p->data, 1, acc, 1);
}

static void finish(alg_ctx *ctx, alg_coll *co, int node)
{
    cnode *c = &co->nodes[node];
    c->active = 0;
    if (co->part_done)
        co->part_done(ctx, node, co->part_id, c->acc, c->len);
    else
        co->done(ctx, node, c->acc, c->len);   /* may start the next round */
}

/* ---- ring: 2(k-1) stages of one chunk each ---- */

static size_t chunk_start(size_t len, int chunk, int k)
{
    return (size_t)chunk * len / (size_t)k;
}

static int mod(int a, int k) { return ((a % k) + k) % k; }

/* Wire bytes of chunk ch of k.  The timing-only model has no parameters
 * to cut, so its message size is cut the same way instead. */
static double chunk_bytes(const alg_ctx *ctx, const alg_coll *co, int node, size_t len, int ch,
                          int k)
{
    if (!alg_timing_only(ctx))
        return alg_param_bytes(ctx, chunk_start(len, ch + 1, k) - chunk_start(len, ch, k));
    const double full = vec_bytes(ctx, co, node, len);
    return full * (double)(ch + 1) / k - full * (double)ch / k;
}

static void ring_send(alg_ctx *ctx, alg_coll *co, int node, int s)
{
    cnode *c = &co->nodes[node];
    int k = c->k, p = c->pos;
    int ch = s < k - 1 ? mod(p - s, k) : mod(p + 1 - (s - (k - 1)), k);
    size_t a = chunk_start(c->len, ch, k), b = chunk_start(c->len, ch + 1, k);
    send_part(ctx, co, node, (p + 1) % k, (uint32_t)s, a, b - a,
              chunk_bytes(ctx, co, node, c->len, ch, k));
}

/* pc: stages received so far */
static void ring_progress(alg_ctx *ctx, alg_coll *co, int node)
{
    cnode *c = &co->nodes[node];
    int k = c->k, p = c->pos;
    cl_buf *m;
    while ((m = take(c, (uint32_t)c->pc)) != NULL) {
        int r = c->pc;
        int ch = r < k - 1 ? mod(p - 1 - r, k) : mod(p - (r - (k - 1)), k);
        size_t a = chunk_start(c->len, ch, k);
        if (r < k - 1)
            add_into(c->acc + a, m);
        else
            memcpy(c->acc + a, m->data, m->len * sizeof(double));
        alg_buf_put(ctx, m);
        c->pc++;
        if (c->pc == 2 * (k - 1)) {
            finish(ctx, co, node);
            return;
        }
        ring_send(ctx, co, node, c->pc);
    }
}

/* ---- recursive doubling ---- */

static int pow2_floor(int k)
{
    int m = 1;
    while (m * 2 <= k)
        m *= 2;
    return m;
}

static int log2_int(int m)
{
    int l = 0;
    while ((1 << l) < m)
        l++;
    return l;
}

/* Position of virtual rank v among the power-of-two core. */
static int rd_real(int v, int extra) { return v < extra ? 2 * v + 1 : v + extra; }

/* pc: -1 waiting for the fold (odd positions below 2*extra), 0..L-1 the
 * exchange at distance 2^pc, L done exchanging; even fold positions use
 * pc = -2 (wait for the result). */
static void rd_progress(alg_ctx *ctx, alg_coll *co, int node)
{
    cnode *c = &co->nodes[node];
    int k = c->k, p = c->pos, m2 = pow2_floor(k), extra = k - m2, L = log2_int(m2);
    cl_buf *m;
    if (c->pc == -2) {
        if ((m = take(c, STAGE_FINAL)) != NULL) {
            memcpy(c->acc, m->data, c->len * sizeof(double));
            alg_buf_put(ctx, m);
            finish(ctx, co, node);
        }
        return;
    }
    if (c->pc == -1) {
        if (!(m = take(c, 0)))
            return;
        add_into(c->acc, m);
        alg_buf_put(ctx, m);
        c->pc = 0;
        c->sent = 0;
    }
    int v = p < 2 * extra ? p / 2 : p - extra;
    while (c->pc < L) {
        int partner = rd_real(v ^ (1 << c->pc), extra);
        uint32_t stage = (uint32_t)c->pc + 1;
        if (!c->sent) {
            send_all(ctx, co, node, partner, stage);
            c->sent = 1;
        }
        if (!(m = take(c, stage)))
            return;
        add_into(c->acc, m);
        alg_buf_put(ctx, m);
        c->pc++;
        c->sent = 0;
    }
    if (p < 2 * extra)   /* hand the result back to the folded partner */
        send_all(ctx, co, node, p - 1, STAGE_FINAL);
    finish(ctx, co, node);
}

/* ---- binomial tree ---- */

static int low_bit(int p, int levels)
{
    if (p == 0)
        return levels;
    int s = 0;
    while (!(p & (1 << s)))
        s++;
    return s;
}

/* pc: 0..lb-1 children received (stage = pc), lb sent to the parent and
 * waiting for the result. */
static void tree_progress(alg_ctx *ctx, alg_coll *co, int node)
{
    cnode *c = &co->nodes[node];
    int k = c->k, p = c->pos, L = log2_int(k), lb = low_bit(p, L);
    cl_buf *m;
    while (c->pc < lb) {
        if (p + (1 << c->pc) < k) {
            if (!(m = take(c, (uint32_t)c->pc)))
                return;
            add_into(c->acc, m);
            alg_buf_put(ctx, m);
        }
        c->pc++;
    }
    if (p != 0) {
        if (!c->sent) {
            send_all(ctx, co, node, p - (1 << lb), (uint32_t)lb);
            c->sent = 1;
        }
        if (!(m = take(c, STAGE_FINAL)))
            return;
        memcpy(c->acc, m->data, c->len * sizeof(double));
        alg_buf_put(ctx, m);
    }
    for (int s = lb - 1; s >= 0; s--)   /* larger subtrees first */
        if (p + (1 << s) < k)
            send_all(ctx, co, node, p + (1 << s), STAGE_FINAL);
    finish(ctx, co, node);
}

/* ---- entry points ---- */

static void progress(alg_ctx *ctx, alg_coll *co, int node)
{
    switch (co->kind) {
    case ALG_COLL_RING:
        ring_progress(ctx, co, node);
        break;
    case ALG_COLL_RECURSIVE_DOUBLING:
        rd_progress(ctx, co, node);
        break;
    case ALG_COLL_TREE:
        tree_progress(ctx, co, node);
        break;
    }
}

void alg_coll_start(alg_ctx *ctx, alg_coll *co, int node, uint64_t round,
                    const int *members, int k, const double *contrib)
{
    alg_coll_start_len(ctx, co, node, round, members, k, contrib, co->len);
}

void alg_coll_start_len(alg_ctx *ctx, alg_coll *co, int node, uint64_t round,
                        const int *members, int k, const double *contrib, size_t len)
{
    alg_coll_start_timed(ctx, co, node, round, members, k, contrib, len, -1);
}

void alg_coll_start_timed(alg_ctx *ctx, alg_coll *co, int node, uint64_t round,
                          const int *members, int k, const double *contrib, size_t len,
                          double timing_bytes)
{
    cnode *c = &co->nodes[node];
    assert(!c->active && k >= 1 && round <= ROUND_MASK && len <= co->len);
    c->len = len;
    c->tbytes = timing_bytes;
    c->active = 1;
    c->round = round;
    c->k = k;
    c->pos = -1;
    /* Every member of an all-reduce of all nodes keeping its own copy of
     * the list would be n^2 integers (40 GB at 10^5 nodes): the identity
     * list is recognised and not copied. */
    c->identity = k == co->n;
    for (int i = 0; i < k && c->identity; i++)
        c->identity = members[i] == i;
    if (c->identity) {
        c->pos = node;
    } else {
        if (k > c->cap_members) {
            int *m = realloc(c->members, (size_t)k * sizeof(int));
            if (!m)
                alg_out_of_memory();
            c->members = m;
            c->cap_members = k;
        }
        for (int i = 0; i < k; i++) {
            c->members[i] = members[i];
            if (members[i] == node)
                c->pos = i;
        }
    }
    assert(c->pos >= 0);
    memcpy(c->acc, contrib, c->len * sizeof(double));
    c->sent = 0;
    c->pc = 0;
    if (k == 1) {
        finish(ctx, co, node);
        return;
    }
    switch (co->kind) {
    case ALG_COLL_RING:
        ring_send(ctx, co, node, 0);
        break;
    case ALG_COLL_RECURSIVE_DOUBLING: {
        int extra = k - pow2_floor(k);
        if (c->pos < 2 * extra && c->pos % 2 == 0) {
            send_all(ctx, co, node, c->pos + 1, 0);
            c->pc = -2;
        } else if (c->pos < 2 * extra) {
            c->pc = -1;
        }
        break;
    }
    case ALG_COLL_TREE:
        break;
    }
    progress(ctx, co, node);
}

int alg_coll_on_message(alg_ctx *ctx, alg_coll *co, int node, const cl_msg *msg)
{
    if (msg->tag != co->tag)
        return 0;
    /* a message of an abandoned collective (an earlier epoch), however
     * late its retransmission comes: dropped */
    if (msg->round >> (64 - EPOCH_BITS) != (co->epoch & EPOCH_MASK) || msg->sent_at < co->epoch_t)
        return 1;
    cnode *c = &co->nodes[node];
    if (c->n_box == c->cap_box) {
        size_t cap = c->cap_box ? 2 * c->cap_box : 8;
        mail *b = realloc(c->box, cap * sizeof *b);
        if (!b)
            alg_out_of_memory();
        c->box = b;
        c->cap_box = cap;
    }
    cl_buf_ref(msg->payload);
    c->box[c->n_box++] = (mail){ (msg->round >> STAGE_BITS) & ROUND_MASK,
                                 (uint32_t)(msg->round & STAGE_MASK), msg->payload };
    if (c->active && c->box[c->n_box - 1].round == c->round)
        progress(ctx, co, node);
    return 1;
}

void alg_coll_new_epoch(alg_ctx *ctx, alg_coll *co)
{
    co->epoch++;
    co->epoch_t = alg_now(ctx);
    for (int i = 0; i < co->n; i++) {
        cnode *c = &co->nodes[i];
        c->active = 0;
        for (size_t m = 0; m < c->n_box; m++)
            alg_buf_put(ctx, c->box[m].payload);
        c->n_box = 0;
    }
}

void alg_coll_abandon(alg_ctx *ctx, alg_coll *co, int node)
{
    cnode *c = &co->nodes[node];
    if (!c->active)
        return;
    c->active = 0;
    size_t keep = 0;
    for (size_t m = 0; m < c->n_box; m++)
        if (c->box[m].round == c->round)
            alg_buf_put(ctx, c->box[m].payload);
        else
            c->box[keep++] = c->box[m];
    c->n_box = keep;
}

uint64_t alg_coll_epoch(const alg_coll *co) { return co->epoch; }

void alg_coll_members_changed(alg_coll *co) { co->version++; }

void alg_coll_set_join(alg_coll *co, int node, uint64_t round)
{
    if (!co->join && !(co->join = calloc((size_t)co->n, sizeof *co->join)))
        alg_out_of_memory();
    co->join[node] = round;
    co->version++;
}

uint64_t alg_coll_join(const alg_coll *co, int node) { return co->join ? co->join[node] : 0; }

const int *alg_coll_members(const alg_ctx *ctx, alg_coll *co, uint64_t round, int *k)
{
    if (co->version == 0) {
        *k = co->n;
        return co->everyone;
    }
    if (!co->cache || co->cache_version != co->version || co->cache_round != round) {
        if (!co->cache && !(co->cache = malloc((size_t)co->n * sizeof(int))))
            alg_out_of_memory();
        co->cache_k = 0;
        for (int w = 0; w < co->n; w++)
            if (!alg_is_failed(ctx, w) && alg_coll_join(co, w) <= round)
                co->cache[co->cache_k++] = w;
        co->cache_round = round;
        co->cache_version = co->version;
    }
    *k = co->cache_k;
    return co->cache;
}

void alg_coll_describe_wait(const alg_coll *co, int node, char *buf, size_t size)
{
    const cnode *c = &co->nodes[node];
    if (!c->active) {
        buf[0] = '\0';
        return;
    }
    snprintf(buf, size, "%s all-reduce round %llu among %d nodes (step %d)",
             alg_coll_kind_names[co->kind], (unsigned long long)c->round, c->k, c->pc);
}
