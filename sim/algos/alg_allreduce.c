/* alg_allreduce.c -- synchronous data-parallel SGD whose gradient
 * all-reduce runs as real messages around a ring (Patarasuk & Yuan 2009:
 * reduce-scatter then all-gather, 2(n-1) stages of M/n bytes).
 *
 * Timing: each node computes its gradient (cl_start_step); when its step
 * ends it starts the ring.  Stage s sends one chunk to node i+1; a node
 * sends stage s+1 only after it has received stage s from node i-1, so a
 * slow node or link holds the whole ring back, as in real collectives.
 * After the last all-gather stage every node holds the same sum, applies
 * x <- x - lr * sum / n (through its optimizer) and starts its next step.  On a homogeneous network
 * one all-reduce takes exactly 2(n-1) a + 2(n-1)/n * M/B.
 *
 * Simplified: the ring order is node order 0..n-1 whatever the topology
 * (the topology is not used); chunks are uneven by one parameter when n
 * does not divide the parameter count.
 */
#include "alg.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <gsl/gsl_cblas.h>

typedef struct queued {
    uint64_t round;
    cl_buf  *payload;
} queued;

typedef struct ar_state {
    double  *acc;        /* P: the gradient being reduced */
    uint64_t round;      /* iteration number */
    int      ready;      /* acc holds this round's gradient */
    int      recvd;      /* stages received this round */
    queued  *q;          /* messages that came before the gradient was ready */
    size_t   q_head, q_len, q_cap;
} ar_state;

static size_t chunk_start(const alg_ctx *ctx, int c)
{
    return (size_t)c * ctx->P / (size_t)ctx->n;
}

static int send_chunk_of(int i, int s, int n)
{
    int c = s < n - 1 ? i - s : i + 1 - (s - (n - 1));
    return ((c % n) + n) % n;
}

static int recv_chunk_of(int i, int r, int n)
{
    int c = r < n - 1 ? i - 1 - r : i - (r - (n - 1));
    return ((c % n) + n) % n;
}

static void send_stage(alg_ctx *ctx, ar_state *st, int i, int s)
{
    int n = ctx->n, c = send_chunk_of(i, s, n);
    size_t a = chunk_start(ctx, c), b = chunk_start(ctx, c + 1);
    cl_buf *buf = cl_buf_get(ctx->cl);
    buf->len = b - a;
    memcpy(buf->data, st->acc + a, (b - a) * sizeof(double));
    cl_send(ctx->cl, i, (i + 1) % n, (uint32_t)s, st->round, buf,
            cl_param_bytes(ctx->cl, b - a));
    cl_buf_put(ctx->cl, buf);
}

static void finish_round(alg_ctx *ctx, ar_state *st, int i)
{
    double *x = cl_params(ctx->cl, i);
    alg_sgd_apply(ctx, i, x, st->acc, (double)ctx->n);
    st->round++;
    st->ready = 0;
    st->recvd = 0;
    cl_start_step(ctx->cl, i);
}

static void receive(alg_ctx *ctx, ar_state *st, int i, const cl_buf *payload)
{
    int n = ctx->n, r = st->recvd, c = recv_chunk_of(i, r, n);
    size_t a = chunk_start(ctx, c);
    if (r < n - 1)
        cblas_daxpy((int)payload->len, 1.0, payload->data, 1, st->acc + a, 1);
    else
        memcpy(st->acc + a, payload->data, payload->len * sizeof(double));
    st->recvd = r + 1;
    if (st->recvd < 2 * (n - 1))
        send_stage(ctx, st, i, st->recvd);
    else
        finish_round(ctx, st, i);
}

static int ar_init(alg_ctx *ctx, void *state, int node)
{
    (void)node;
    ar_state *st = state;
    st->acc = calloc(ctx->P ? ctx->P : 1, sizeof(double));
    st->q_cap = (size_t)(2 * ctx->n);
    st->q = calloc(st->q_cap, sizeof(queued));
    return st->acc && st->q ? 0 : -1;
}

static void ar_fini(alg_ctx *ctx, void *state, int node)
{
    (void)node;
    ar_state *st = state;
    for (size_t k = 0; k < st->q_len; k++)
        cl_buf_put(ctx->cl, st->q[(st->q_head + k) % st->q_cap].payload);
    free(st->q);
    free(st->acc);
}

static void ar_on_start(alg_ctx *ctx, void *state, int node)
{
    (void)state;
    cl_start_step(ctx->cl, node);
}

static void ar_on_step_done(alg_ctx *ctx, void *state, int i, const double *grad)
{
    ar_state *st = state;
    memcpy(st->acc, grad, ctx->P * sizeof(double));
    if (ctx->n == 1) {
        finish_round(ctx, st, i);
        return;
    }
    st->ready = 1;
    send_stage(ctx, st, i, 0);
    /* stages that arrived while this node was still computing */
    while (st->ready && st->q_len > 0) {
        queued qm = st->q[st->q_head];
        st->q_head = (st->q_head + 1) % st->q_cap;
        st->q_len--;
        receive(ctx, st, i, qm.payload);
        cl_buf_put(ctx->cl, qm.payload);
    }
}

static void ar_on_message(alg_ctx *ctx, void *state, int i, const cl_msg *m)
{
    ar_state *st = state;
    if (st->ready && m->round == st->round) {
        receive(ctx, st, i, m->payload);
        return;
    }
    /* The ring is FIFO and node i-1 cannot get more than one round ahead,
     * so at most 2(n-1) stages wait here. */
    if (st->q_len == st->q_cap) {
        fputs("dtsim: internal error: all-reduce queue overflow\n", stderr);
        abort();
    }
    cl_buf_ref(m->payload);
    st->q[(st->q_head + st->q_len) % st->q_cap] = (queued){ m->round, m->payload };
    st->q_len++;
}

static void ar_describe_wait(const alg_ctx *ctx, const void *state, int i,
                             char *buf, size_t size)
{
    const ar_state *st = state;
    if (cl_is_computing(ctx->cl, i))
        snprintf(buf, size, "its step of round %llu", (unsigned long long)st->round);
    else if (st->ready)
        snprintf(buf, size, "all-reduce stage %d of round %llu from node %d", st->recvd,
                 (unsigned long long)st->round, (i + ctx->n - 1) % ctx->n);
    else
        buf[0] = '\0';
}

const alg_type alg_allreduce = {
    .name = "allreduce",
    .state_size = sizeof(ar_state),
    .check = NULL,
    .init = ar_init,
    .on_start = ar_on_start,
    .on_step_done = ar_on_step_done,
    .on_message = ar_on_message,
    .describe_wait = ar_describe_wait,
    .fini = ar_fini,
};
