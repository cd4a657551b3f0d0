/* alg_lsgd.c -- LSGD, leader stochastic gradient descent (Teng, Gao,
 * Kerdreux, Choromanska et al., "Leader Stochastic Gradient Descent for
 * Distributed Training of Deep Learning Models", NeurIPS 2019, Algorithm 1,
 * and its code github.com/yunfei-teng/LSGD): the workers run SGD in groups;
 * every tau = `period` steps each worker is pulled toward its group's
 * leader, the member with the lowest recent loss, x <- x - lambda_L (x -
 * x~_local), and every `global_rounds` such rounds also toward the global
 * leader, the lowest over all groups, x <- x - lambda_G (x - x~_global),
 * local pull first (the paper code's order).  A leader does not pull toward
 * itself.  The recent loss is the mean minibatch loss of the worker's last
 * `loss_window` steps (the code's running average, avg_size = 10).
 *
 * Timing.  The workers are split into `groups` blocks of consecutive nodes,
 * each with a local server (nodes n .. n + groups - 1); the first one is
 * also the global server.  A worker's tau-th step since its last pull ends:
 * it sends its recent loss to its server (8 bytes) and waits.  When every
 * member not declared failed has reported, the server elects the leader
 * (argmin, NaN last, ties to the lowest node) and asks it for its model (0
 * bytes); the leader sends it (P parameters).  In a global round the
 * server at once reports its leader's loss to the global server (8 bytes),
 * which waits for every group holding a live worker, then names the
 * winning group's server (0 bytes); that server sends its leader's model
 * to every other server (P each).  The server then relays to each member
 * what it pulls toward: the local leader's model (P), and in a global
 * round the global leader's (P) unless it is the same; the leader of a
 * local round gets a 0-byte go.  So rounds are synchronous within a group,
 * global rounds across groups.  The relay through the local server is
 * dtsim's choice (the paper code broadcasts with NCCL inside a machine): it
 * makes every worker wait on one party, its server.
 *
 * Failures.  A worker declared failed leaves its group's round: the server
 * stops waiting for its loss and a leader declared failed before its model
 * came is replaced by the best live reporter (re-election), so a crashed
 * worker never stalls its group; the global server stops waiting for a
 * group with no live worker.  A worker back up sends its loss again if it
 * was waiting (duplicates are merged) and answers any leader request.  A
 * server is waited for; back up, it has its workers report again and the
 * servers waiting for a global verdict send their loss again, and a loss
 * for a global round already closed is told to skip it.  Not modelled:
 * the paper's proximal variant and its multi-GPU queues.
 */
#include "alg.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { P_GROUPS, P_PERIOD, P_GLOBAL_ROUNDS, P_LAMBDA_L, P_LAMBDA_G, P_WINDOW };
enum { TAG_LOSS = 1, TAG_LEAD, TAG_MODEL, TAG_PULL, TAG_GLOSS, TAG_WIN, TAG_GMODEL,
       TAG_GNONE, TAG_GSKIP, TAG_POKE };
enum { PH_COLLECT, PH_LEADER };
enum { GW_NONE, GW_WAIT, GW_MINE, GW_OTHER, GW_SKIP };
enum { PULL_L = 1, PULL_G = 2 };   /* a reply message's pulls; count in round >> 2 */
enum { TIMER_CHECK = 1 };

#define LOSS_BYTES 8.0   /* one double */

static const alg_param_spec params[] = {
    { "groups", ALG_PARAM_INT, 1, 1, 1e9, NULL,
      "groups of consecutive workers, each with its local server and leader" },
    { "period", ALG_PARAM_INT, 4, 1, 1e9, NULL,
      "tau: local steps between two pulls toward the group's leader" },
    { "global_rounds", ALG_PARAM_INT, 1, 1, 1e9, NULL,
      "local rounds per pull toward the global leader (its period is period x this)" },
    { "lambda_local", ALG_PARAM_REAL, 0.1, 0, 1, NULL,
      "lambda_L: pulling strength toward the group's leader" },
    { "lambda_global", ALG_PARAM_REAL, 0.1, 0, 1, NULL,
      "lambda_G: pulling strength toward the global leader" },
    { "loss_window", ALG_PARAM_INT, 10, 1, 1000, NULL,
      "minibatch losses averaged into the recent loss a worker reports" },
    { NULL, 0, 0, 0, 0, NULL, NULL },
};

typedef struct ls_state {
    /* worker */
    int      local;       /* steps since its last report */
    int      waiting;     /* reported, waiting for its server's reply */
    double  *win;         /* its last loss_window minibatch losses (ring) */
    uint64_t n_loss;      /* losses recorded */
    double   recent;      /* the loss it reported last */
    cl_buf  *got[2];      /* the reply's messages so far */
    int      got_bits[2], n_got;
    /* worker, as its server sees it */
    int      reported;    /* in the current round */
    double   rep_loss;
    /* server */
    int      phase, global, gw, gsent;
    int      leader;      /* elected, -1: none */
    cl_buf  *lmodel, *gmodel;
    uint64_t gk;          /* the global round it reports next / is in */
    uint64_t skip_to;     /* skipped: the global round the global server collects */
    uint64_t rounds, reelections, skips;
    int      last_leader;
    /* server, as the global server sees it */
    int      gin;
    double   gloss;
    /* the global server */
    uint64_t g_round;
    int      g_last;      /* the last global leader */
    double   g_loss;      /* the last global leader's reported loss */
} ls_state;

static int n_groups(const alg_ctx *ctx) { return (int)ctx->param[P_GROUPS]; }
static int ls_n_servers(const alg_ctx *ctx) { return n_groups(ctx); }
static int is_server(const alg_ctx *ctx, int node) { return node >= ctx->n; }
static int server_of(const alg_ctx *ctx, int g) { return ctx->n + g; }
static ls_state *st_of(const alg_ctx *ctx, int node) { return alg_state(ctx, node); }

/* Group g holds workers [g n / G, (g + 1) n / G). */
static int group_lo(const alg_ctx *ctx, int g) { return (int)((long)g * ctx->n / n_groups(ctx)); }
static int group_hi(const alg_ctx *ctx, int g) { return group_lo(ctx, g + 1); }
static int group_of(const alg_ctx *ctx, int w)
{
    int g = (int)((long)w * n_groups(ctx) / ctx->n);
    while (g + 1 < n_groups(ctx) && group_lo(ctx, g + 1) <= w)
        g++;
    while (group_lo(ctx, g) > w)
        g--;
    return g;
}

static int ls_check(const alg_ctx *ctx, char *err, size_t size)
{
    if (n_groups(ctx) > ctx->n) {
        snprintf(err, size, "lsgd needs at least one worker per group: %d groups, %d workers",
                 n_groups(ctx), ctx->n);
        return -1;
    }
    return 0;
}

static double ls_memory_bytes(const alg_ctx *ctx)
{
    return (double)ctx->n * ctx->param[P_WINDOW] * sizeof(double);
}

static int ls_init(alg_ctx *ctx, void *state, int node)
{
    ls_state *st = state;
    st->leader = st->last_leader = st->g_last = -1;
    if (is_server(ctx, node))
        return 0;
    st->win = calloc((size_t)ctx->param[P_WINDOW], sizeof(double));
    return st->win ? 0 : -1;
}

static void drop_reply(alg_ctx *ctx, ls_state *st)
{
    for (int k = 0; k < st->n_got; k++)
        if (st->got[k])
            alg_buf_put(ctx, st->got[k]);
    st->n_got = 0;
}

static void ls_fini(alg_ctx *ctx, void *state, int node)
{
    (void)node;
    ls_state *st = state;
    drop_reply(ctx, st);
    if (st->lmodel)
        alg_buf_put(ctx, st->lmodel);
    if (st->gmodel)
        alg_buf_put(ctx, st->gmodel);
    free(st->win);
}

static void send_model(alg_ctx *ctx, int from, int to, uint32_t tag, uint64_t round, cl_buf *x)
{
    alg_send(ctx, from, to, tag, round, x, alg_param_bytes(ctx, ctx->P));
}

/* A scalar message: the loss travels in a one-double buffer (none with
 * the timing-only model, whose losses are NaN). */
static void send_loss(alg_ctx *ctx, int from, int to, uint32_t tag, uint64_t round, double loss)
{
    cl_buf *b = NULL;
    if (ctx->P > 0) {
        b = alg_buf_get_len(ctx, 1);
        b->data[0] = loss;
    }
    alg_send(ctx, from, to, tag, round, b, LOSS_BYTES);
    if (b)
        alg_buf_put(ctx, b);
}

static double msg_loss(const cl_msg *m) { return m->payload && m->payload->len ? m->payload->data[0] : NAN; }

/* a before b: the lower loss, NaN last, ties to the first (lower node). */
static int better(double a, double b) { return !isnan(a) && (isnan(b) || a < b); }

/* ---- worker ---- */

static void report(alg_ctx *ctx, ls_state *st, int i)
{
    st->waiting = 1;
    send_loss(ctx, i, server_of(ctx, group_of(ctx, i)), TAG_LOSS, 0, st->recent);
}

static void ls_on_start(alg_ctx *ctx, void *state, int i)
{
    (void)state;
    if (!is_server(ctx, i))
        alg_start_step(ctx, i);
}

static void ls_on_step_done(alg_ctx *ctx, void *state, int i, const double *grad)
{
    ls_state *st = state;
    size_t w = (size_t)ctx->param[P_WINDOW];
    st->win[st->n_loss % w] = alg_step_loss(ctx, i);
    st->n_loss++;
    alg_sgd_apply(ctx, i, alg_params(ctx, i), grad, 1.0);
    if (++st->local < (int)ctx->param[P_PERIOD]) {
        alg_start_step(ctx, i);
        return;
    }
    st->local = 0;
    size_t m = st->n_loss < w ? (size_t)st->n_loss : w;
    double sum = 0;
    for (size_t k = 0; k < m; k++)
        sum += st->win[k];
    st->recent = sum / (double)m;
    report(ctx, st, i);
}

/* x <- x - lambda (x - a), element by element. */
static void pull(alg_ctx *ctx, int i, const cl_buf *a, double lambda)
{
    double *x = alg_params(ctx, i);
    for (size_t k = 0; k < ctx->P; k++)
        x[k] -= lambda * (x[k] - a->data[k]);
}

/* One message of the server's reply: when all have come, the local pull
 * and then the global one, and the next step. */
static void on_pull(alg_ctx *ctx, ls_state *st, int i, const cl_msg *m)
{
    if (!st->waiting)
        return;   /* the reply of a round it left */
    int bits = (int)(m->round & 3), count = (int)(m->round >> 2);
    if (bits) {
        cl_buf_ref(m->payload);
        st->got[st->n_got] = m->payload;
        st->got_bits[st->n_got++] = bits;
    } else {
        st->got_bits[st->n_got] = 0;
        st->got[st->n_got++] = NULL;
    }
    if (st->n_got < count)
        return;
    for (int pass = PULL_L; pass <= PULL_G; pass++)
        for (int k = 0; k < st->n_got; k++)
            if (st->got_bits[k] & pass)
                pull(ctx, i, st->got[k],
                     ctx->param[pass == PULL_L ? P_LAMBDA_L : P_LAMBDA_G]);
    drop_reply(ctx, st);
    st->waiting = 0;
    alg_start_step(ctx, i);
}

/* ---- local server ---- */

static void gl_report(alg_ctx *ctx, int g, uint64_t k, double loss);
static void global_again(alg_ctx *ctx, int g);

/* Elects the best live reporter of group g and asks it for its model;
 * -1 when none is left. */
static void elect(alg_ctx *ctx, int g)
{
    ls_state *ss = st_of(ctx, server_of(ctx, g));
    int best = -1;
    for (int w = group_lo(ctx, g); w < group_hi(ctx, g); w++) {
        const ls_state *ws = st_of(ctx, w);
        if (ws->reported && !alg_is_failed(ctx, w)
            && (best < 0 || better(ws->rep_loss, st_of(ctx, best)->rep_loss)))
            best = w;
    }
    ss->leader = best;
    if (best >= 0)
        alg_send(ctx, server_of(ctx, g), best, TAG_LEAD, ss->rounds, NULL, 0);
}

/* Every live member has reported: the round's election. */
static void collect_check(alg_ctx *ctx, int g)
{
    ls_state *ss = st_of(ctx, server_of(ctx, g));
    int any = 0;
    if (ss->phase != PH_COLLECT)
        return;
    for (int w = group_lo(ctx, g); w < group_hi(ctx, g); w++) {
        const ls_state *ws = st_of(ctx, w);
        if (!ws->reported && !alg_is_failed(ctx, w))
            return;
        any |= ws->reported && !alg_is_failed(ctx, w);
    }
    if (!any)
        return;
    ss->phase = PH_LEADER;
    ss->global = (ss->rounds + 1) % (uint64_t)ctx->param[P_GLOBAL_ROUNDS] == 0;
    elect(ctx, g);
    if (!ss->global)
        return;   /* the leader's model ends the round */
    ss->gw = GW_WAIT;
    ss->gsent = 0;
    global_again(ctx, g);
}

/* Server g, waiting for a global verdict, sends its leader's loss again
 * (it or the global server was down: the message or the verdict may be
 * lost; the global server merges a copy). */
static void global_again(alg_ctx *ctx, int g)
{
    const ls_state *ss = st_of(ctx, server_of(ctx, g));
    if (ss->phase != PH_LEADER || !ss->global || ss->gw != GW_WAIT)
        return;
    double loss = ss->leader >= 0 ? st_of(ctx, ss->leader)->rep_loss : NAN;
    if (g == 0)
        gl_report(ctx, 0, ss->gk, loss);
    else
        send_loss(ctx, server_of(ctx, g), server_of(ctx, 0), TAG_GLOSS, ss->gk, loss);
}

/* One message to member w: the pulls in bits (payload x), count in all. */
static void to_member(alg_ctx *ctx, int g, int w, int bits, int count, cl_buf *x)
{
    uint64_t r = (uint64_t)bits | ((uint64_t)count << 2);
    if (bits)
        send_model(ctx, server_of(ctx, g), w, TAG_PULL, r, x);
    else
        alg_send(ctx, server_of(ctx, g), w, TAG_PULL, r, NULL, 0);
}

/* The round's replies to every live reporter, and the next round. */
static void reply(alg_ctx *ctx, int g)
{
    ls_state *ss = st_of(ctx, server_of(ctx, g));
    int glob = ss->global && (ss->gw == GW_MINE || ss->gw == GW_OTHER);
    cl_buf *b = ss->gw == GW_MINE ? ss->lmodel : ss->gmodel;
    for (int w = group_lo(ctx, g); w < group_hi(ctx, g); w++) {
        ls_state *ws = st_of(ctx, w);
        if (!ws->reported)
            continue;
        ws->reported = 0;
        if (alg_is_failed(ctx, w))
            continue;
        int lead = w == ss->leader;
        if (!ss->lmodel) {   /* no leader was left: a go */
            to_member(ctx, g, w, 0, 1, NULL);
        } else if (!glob || ss->gw == GW_MINE) {   /* one target at most */
            int bits = (lead ? 0 : PULL_L) | (glob && !lead ? PULL_G : 0);
            to_member(ctx, g, w, bits, 1, ss->lmodel);
        } else if (lead) {
            to_member(ctx, g, w, PULL_G, 1, b);
        } else {
            to_member(ctx, g, w, PULL_L, 2, ss->lmodel);
            to_member(ctx, g, w, PULL_G, 2, b);
        }
    }
    if (ss->global) {
        ss->gk++;
        if (ss->gk < ss->skip_to)
            ss->gk = ss->skip_to;
        if (ss->gw == GW_SKIP)
            ss->skips++;
    }
    if (ss->lmodel)
        alg_buf_put(ctx, ss->lmodel);
    if (ss->gmodel)
        alg_buf_put(ctx, ss->gmodel);
    ss->lmodel = ss->gmodel = NULL;
    ss->last_leader = ss->leader;
    ss->leader = -1;
    ss->phase = PH_COLLECT;
    ss->gw = GW_NONE;
    ss->rounds++;
}

/* Server g's round ends once its leader's model is in (or no leader is
 * left) and, in a global round, the global verdict. */
static void try_finish(alg_ctx *ctx, int g)
{
    ls_state *ss = st_of(ctx, server_of(ctx, g));
    if (ss->phase != PH_LEADER || (!ss->lmodel && ss->leader >= 0))
        return;
    if (ss->global) {
        if (ss->gw == GW_WAIT || (ss->gw == GW_OTHER && !ss->gmodel))
            return;
        if (ss->gw == GW_MINE && !ss->gsent) {   /* the global leader's model to the others */
            ss->gsent = 1;
            for (int h = 0; h < n_groups(ctx); h++)
                if (h != g && !alg_is_failed(ctx, server_of(ctx, h))) {
                    if (ss->lmodel)
                        send_model(ctx, server_of(ctx, g), server_of(ctx, h), TAG_GMODEL,
                                   ss->gk, ss->lmodel);
                    else
                        alg_send(ctx, server_of(ctx, g), server_of(ctx, h), TAG_GNONE,
                                 ss->gk, NULL, 0);
                }
            st_of(ctx, server_of(ctx, 0))->g_last = ss->leader;
        }
        if (ss->gw == GW_MINE && !ss->lmodel)
            ss->gw = GW_SKIP;
    }
    reply(ctx, g);
}

/* Re-checks after a declaration: the election's wait, and a leader that
 * failed before its model came. */
static void server_check(alg_ctx *ctx, int g)
{
    ls_state *ss = st_of(ctx, server_of(ctx, g));
    collect_check(ctx, g);
    if (ss->phase == PH_LEADER && !ss->lmodel && ss->leader >= 0
        && alg_is_failed(ctx, ss->leader)) {
        ss->reelections++;
        elect(ctx, g);
        try_finish(ctx, g);
    }
}

static void on_report(alg_ctx *ctx, int g, int w, double loss)
{
    ls_state *ss = st_of(ctx, server_of(ctx, g)), *ws = st_of(ctx, w);
    int again = ws->reported;
    ws->reported = 1;
    if (ss->phase == PH_COLLECT) {
        ws->rep_loss = loss;
        collect_check(ctx, g);
        return;
    }
    if (again) {   /* sent again after a return: a request that may be lost */
        if (w == ss->leader && !ss->lmodel)
            alg_send(ctx, server_of(ctx, g), w, TAG_LEAD, ss->rounds, NULL, 0);
        return;
    }
    ws->rep_loss = loss;   /* late: it gets this round's reply */
    if (ss->leader < 0 && !ss->lmodel)
        elect(ctx, g);
}

/* ---- global server ---- */

static int group_live(const alg_ctx *ctx, int g)
{
    if (alg_is_failed(ctx, server_of(ctx, g)))
        return 0;
    for (int w = group_lo(ctx, g); w < group_hi(ctx, g); w++)
        if (!alg_is_failed(ctx, w))
            return 1;
    return 0;
}

static void verdict(alg_ctx *ctx, int g, uint32_t tag, uint64_t k, uint64_t now);

static void gl_check(alg_ctx *ctx)
{
    ls_state *gs = st_of(ctx, server_of(ctx, 0));
    int best = -1;
    for (int g = 0; g < n_groups(ctx); g++) {
        const ls_state *ss = st_of(ctx, server_of(ctx, g));
        if (!ss->gin && group_live(ctx, g))
            return;
        if (ss->gin && (best < 0 || better(ss->gloss, st_of(ctx, server_of(ctx, best))->gloss)))
            best = g;
    }
    if (best < 0)
        return;
    gs->g_loss = st_of(ctx, server_of(ctx, best))->gloss;
    for (int g = 0; g < n_groups(ctx); g++)
        st_of(ctx, server_of(ctx, g))->gin = 0;
    verdict(ctx, best, TAG_WIN, gs->g_round, gs->g_round + 1);
    gs->g_round++;
}

/* Group g's leader's loss for global round k. */
static void gl_report(alg_ctx *ctx, int g, uint64_t k, double loss)
{
    ls_state *gs = st_of(ctx, server_of(ctx, 0)), *ss = st_of(ctx, server_of(ctx, g));
    if (k < gs->g_round) {   /* a round closed without it, or whose verdict it lost */
        verdict(ctx, g, TAG_GSKIP, k, gs->g_round);
        return;
    }
    ss->gin = 1;
    ss->gloss = loss;
    gl_check(ctx);
}

/* The global server's verdict to server g (WIN or GSKIP of round k; now is
 * the global round it collects next). */
static void on_verdict(alg_ctx *ctx, int g, uint32_t tag, uint64_t k, uint64_t now)
{
    ls_state *ss = st_of(ctx, server_of(ctx, g));
    if (ss->phase != PH_LEADER || !ss->global || ss->gk != k || ss->gw != GW_WAIT)
        return;   /* a copy, or the verdict of a round it is no longer in */
    ss->gw = tag == TAG_GSKIP ? GW_SKIP : GW_MINE;
    ss->skip_to = now;   /* a skip: its next global round is the one collected now */
    try_finish(ctx, g);
}

static void verdict(alg_ctx *ctx, int g, uint32_t tag, uint64_t k, uint64_t now)
{
    if (g == 0) {
        on_verdict(ctx, 0, tag, k, now);
        return;
    }
    /* the round field carries k, and for GSKIP also the round collected
     * now (32 bits each: 4e9 global rounds are beyond any run's bounds) */
    alg_send(ctx, server_of(ctx, 0), server_of(ctx, g), tag,
             tag == TAG_GSKIP ? k << 32 | (now & 0xffffffffu) : k, NULL, 0);
}

static void ls_on_message(alg_ctx *ctx, void *state, int i, const cl_msg *m)
{
    ls_state *st = state;
    if (!is_server(ctx, i)) {
        if (m->tag == TAG_LEAD) {   /* answered whatever it does: its server waits */
            cl_buf *x = alg_snapshot(ctx, i);
            send_model(ctx, i, m->from, TAG_MODEL, m->round, x);
            alg_buf_put(ctx, x);
        } else if (m->tag == TAG_POKE) {   /* its server was down: the loss again */
            if (st->waiting)
                report(ctx, st, i);
        } else if (m->tag == TAG_PULL) {
            on_pull(ctx, st, i, m);
        }
        return;
    }
    int g = i - ctx->n;
    switch (m->tag) {
    case TAG_LOSS:
        on_report(ctx, g, m->from, msg_loss(m));
        break;
    case TAG_MODEL:
        if (st->phase == PH_LEADER && m->from == st->leader && !st->lmodel
            && m->round == st->rounds) {
            cl_buf_ref(m->payload);
            st->lmodel = m->payload;
            try_finish(ctx, g);
        }
        break;
    case TAG_GLOSS:
        gl_report(ctx, m->from - ctx->n, m->round, msg_loss(m));
        break;
    case TAG_WIN:
        on_verdict(ctx, g, TAG_WIN, m->round, 0);
        break;
    case TAG_GSKIP:
        on_verdict(ctx, g, TAG_GSKIP, m->round >> 32, m->round & 0xffffffffu);
        break;
    case TAG_POKE:
        global_again(ctx, g);
        break;
    case TAG_GMODEL:
    case TAG_GNONE:
        if (st->phase == PH_LEADER && st->global && st->gk == m->round && st->gw == GW_WAIT) {
            if (m->tag == TAG_GMODEL) {
                cl_buf_ref(m->payload);
                st->gmodel = m->payload;
                st->gw = GW_OTHER;
            } else {
                st->gw = GW_SKIP;
            }
            try_finish(ctx, g);
        }
        break;
    default:
        break;
    }
}

/* A worker declared failed leaves its group's round (its server and the
 * global server look again, each through a timer of its own, so a server
 * that is down acts on nothing); a server declared failed is not waited
 * for by the global server. */
static void ls_on_failure(alg_ctx *ctx, int peer, int failed)
{
    if (!failed)
        return;
    if (!is_server(ctx, peer)) {
        st_of(ctx, peer)->reported = 0;
        int s = server_of(ctx, group_of(ctx, peer));
        if (!alg_is_failed(ctx, s))
            alg_set_timer(ctx, s, 0, TIMER_CHECK);
    }
    if (peer != server_of(ctx, 0) && !alg_is_failed(ctx, server_of(ctx, 0)))
        alg_set_timer(ctx, server_of(ctx, 0), 0, TIMER_CHECK + 1);
}

static void ls_on_timer(alg_ctx *ctx, void *state, int i, uint32_t tag)
{
    (void)state;
    if (tag == TIMER_CHECK)
        server_check(ctx, i - ctx->n);
    else
        gl_check(ctx);
}

/* A worker back up: the reply it waited for may be lost, so it reports
 * again (its server merges a duplicate and asks a leader again). */
static void ls_on_return(alg_ctx *ctx, void *state, int i)
{
    ls_state *st = state;
    if (!is_server(ctx, i)) {
        drop_reply(ctx, st);
        if (st->waiting)
            report(ctx, st, i);
        return;
    }
    /* what it sent or was sent as it went down may be lost: its workers
     * report again, the servers waiting for a verdict ask again */
    int g = i - ctx->n;
    for (int w = group_lo(ctx, g); w < group_hi(ctx, g); w++)
        if (!alg_is_failed(ctx, w))
            alg_send(ctx, i, w, TAG_POKE, 0, NULL, 0);
    for (int h = 0; h < n_groups(ctx); h++)
        if (h != g && !alg_is_failed(ctx, server_of(ctx, h)))
            alg_send(ctx, i, server_of(ctx, h), TAG_POKE, 0, NULL, 0);
    global_again(ctx, g);
}

static void ls_describe_wait(const alg_ctx *ctx, const void *state, int i, char *buf,
                             size_t size)
{
    const ls_state *st = state;
    buf[0] = '\0';
    if (is_server(ctx, i)) {
        if (st->phase == PH_COLLECT)
            snprintf(buf, size, "the losses of its group's workers (round %llu)",
                     (unsigned long long)st->rounds + 1);
        else if (st->leader >= 0 && !st->lmodel)
            snprintf(buf, size, "the model of its leader, node %d", st->leader);
        else if (st->gw == GW_WAIT || st->gw == GW_OTHER)
            snprintf(buf, size, "the global leader of global round %llu",
                     (unsigned long long)st->gk + 1);
    } else if (st->waiting) {
        snprintf(buf, size, "the leader's model from its server %d",
                 server_of(ctx, group_of(ctx, i)));
    } else if (alg_is_computing(ctx, i)) {
        snprintf(buf, size, "its step");
    }
}

static int ls_stats(const alg_ctx *ctx, const char **keys, double *values, int max)
{
    double rounds = 0, re = 0, skips = 0;
    for (int g = 0; g < n_groups(ctx); g++) {
        const ls_state *ss = st_of(ctx, server_of(ctx, g));
        rounds += (double)ss->rounds;
        re += (double)ss->reelections;
        skips += (double)ss->skips;
    }
    const ls_state *gs = st_of(ctx, server_of(ctx, 0));
    const char *k[] = { "rounds", "global_rounds", "reelections", "global_skips",
                        "leader_last", "global_leader_last", "global_leader_loss" };
    double v[] = { rounds, (double)gs->g_round, re, skips, (double)gs->last_leader,
                   (double)gs->g_last, gs->g_round ? gs->g_loss : NAN };
    return alg_stats_copy(k, v, (int)(sizeof k / sizeof k[0]), keys, values, max);
}

const alg_type alg_lsgd = {
    .name = "lsgd",
    .summary = "workers pulled toward the lowest-loss worker of their group and of all "
               "(Teng et al. 2019)",
    .state_size = sizeof(ls_state),
    .params = params,
    .n_servers = ls_n_servers,
    .check = ls_check,
    .memory_bytes = ls_memory_bytes,
    .init = ls_init,
    .on_start = ls_on_start,
    .on_step_done = ls_on_step_done,
    .on_message = ls_on_message,
    .on_timer = ls_on_timer,
    .on_failure = ls_on_failure,
    .on_return = ls_on_return,
    .describe_wait = ls_describe_wait,
    .stats = ls_stats,
    .fini = ls_fini,
};
