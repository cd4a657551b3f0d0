/* cl_cluster.c -- nodes that compute in simulated time and a network that
 * carries messages (see cl_cluster.h for the timing model).  Compute: one
 * step at a time per node, gradient taken when the step starts, handed over
 * when it ends.  Network: per-node uplink and downlink FIFOs with
 * cut-through delivery, two events per message (first bit reaches the
 * downlink; last bit received).  It does not decide what to send or when to
 * step: the algorithm does, through the calls in the header.
 */
#include "cl_cluster.h"
#include "sim_rng.h"

#include <assert.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <gsl/gsl_randist.h>

typedef struct msg_slot {
    cl_msg   msg;
    double   up_end;      /* when the last bit left the sender */
    uint32_t next_free;
} msg_slot;

#define NO_SLOT UINT32_MAX

typedef struct node {
    double   base_s;
    gsl_rng *rng_compute, *rng_data;
    size_t  *perm;       /* the node's sample indices, shuffled per epoch */
    size_t   n_local, cursor;
    int      computing;
    double   step_started, step_len;
    double   up_free, down_free;   /* when the uplink / downlink is free */
    cl_node_stats st;
} node;

struct cl_cluster {
    cl_config     cfg;
    sim_engine   *eng;
    cl_callbacks  cb;
    int           n;
    size_t        P;
    double       *params;   /* n * P */
    double       *grads;    /* n * P: gradient of the step in progress */
    node         *nodes;
    cl_pool       pool;
    msg_slot     *slots;
    uint32_t      n_slots, free_slot;
    uint64_t      pending, in_flight, total_steps;
};

static void die_oom(void)
{
    fputs("dtsim: error: out of memory\n", stderr);
    exit(1);
}

static void schedule(cl_cluster *c, double at, uint32_t kind, int target, uint32_t data)
{
    if (sim_engine_schedule_at(c->eng, at, kind, (uint32_t)target, data) != 0)
        die_oom();
    c->pending++;
}

cl_cluster *cl_create(const cl_config *cfg, sim_engine *e, cl_callbacks cb)
{
    cl_cluster *c = calloc(1, sizeof *c);
    if (!c)
        return NULL;
    c->cfg = *cfg;
    c->cfg.step_time_s = NULL;  /* copied below; the caller's array is not kept */
    c->eng = e;
    c->cb = cb;
    c->n = cfg->n_nodes;
    c->P = mdl_n_params(cfg->model);
    c->free_slot = NO_SLOT;
    cl_pool_init(&c->pool, c->P);
    size_t nP = (size_t)c->n * c->P;
    c->params = calloc(nP ? nP : 1, sizeof(double));
    c->grads = calloc(nP ? nP : 1, sizeof(double));
    c->nodes = calloc((size_t)c->n, sizeof(node));
    if (!c->params || !c->grads || !c->nodes)
        goto out_destroy;
    for (int i = 0; i < c->n; i++) {
        node *nd = &c->nodes[i];
        nd->base_s = cfg->step_time_s[i];
        nd->rng_compute = sim_rng_stream_create(cfg->seed, (uint32_t)i, SIM_RNG_COMPUTE);
        nd->rng_data = sim_rng_stream_create(cfg->seed, (uint32_t)i, SIM_RNG_DATA);
        nd->n_local = cfg->part->off[i + 1] - cfg->part->off[i];
        nd->perm = malloc((nd->n_local ? nd->n_local : 1) * sizeof(size_t));
        if (!nd->rng_compute || !nd->rng_data || !nd->perm)
            goto out_destroy;
        memcpy(nd->perm, cfg->part->idx + cfg->part->off[i], nd->n_local * sizeof(size_t));
        if (nd->n_local > 1)   /* gsl_ran_shuffle underflows on an empty array */
            gsl_ran_shuffle(nd->rng_data, nd->perm, nd->n_local, sizeof(size_t));
    }
    return c;

out_destroy:
    cl_destroy(c);
    return NULL;
}

void cl_destroy(cl_cluster *c)
{
    if (!c)
        return;
    if (c->nodes) {
        for (int i = 0; i < c->n; i++) {
            gsl_rng_free(c->nodes[i].rng_compute);
            gsl_rng_free(c->nodes[i].rng_data);
            free(c->nodes[i].perm);
        }
    }
    /* payloads of messages still in flight at the end of the run */
    for (uint32_t s = 0; s < c->n_slots; s++)
        if (c->slots[s].msg.payload)
            cl_pool_put(&c->pool, c->slots[s].msg.payload);
    cl_pool_fini(&c->pool);
    free(c->slots);
    free(c->nodes);
    free(c->grads);
    free(c->params);
    free(c);
}

int cl_n_nodes(const cl_cluster *c) { return c->n; }
size_t cl_n_params(const cl_cluster *c) { return c->P; }
double cl_now(const cl_cluster *c) { return sim_engine_now(c->eng); }
double *cl_params(cl_cluster *c, int i) { return c->params + (size_t)i * c->P; }
const double *cl_params_const(const cl_cluster *c, int i) { return c->params + (size_t)i * c->P; }
int cl_is_computing(const cl_cluster *c, int i) { return c->nodes[i].computing; }
size_t cl_local_samples(const cl_cluster *c, int i) { return c->nodes[i].n_local; }
size_t cl_batch(const cl_cluster *c) { return c->cfg.batch; }
uint64_t cl_pending(const cl_cluster *c) { return c->pending; }
uint64_t cl_in_flight(const cl_cluster *c) { return c->in_flight; }
const cl_node_stats *cl_stats(const cl_cluster *c, int i) { return &c->nodes[i].st; }

static double draw_noise(const cl_cluster *c, gsl_rng *r)
{
    switch (c->cfg.noise) {
    case CL_NOISE_UNIFORM:
        return gsl_ran_flat(r, c->cfg.noise_low, c->cfg.noise_high);
    case CL_NOISE_EXPONENTIAL:
        return gsl_ran_exponential(r, 1.0);
    case CL_NOISE_LOGNORMAL: {
        double s = c->cfg.noise_sigma;
        return gsl_ran_lognormal(r, -0.5 * s * s, s);
    }
    case CL_NOISE_CONSTANT:
    default:
        return 1.0;
    }
}

void cl_start_step(cl_cluster *c, int i)
{
    node *nd = &c->nodes[i];
    assert(!nd->computing);
    size_t B = c->cfg.batch;
    if (nd->cursor + B > nd->n_local) {
        /* epoch boundary: reshuffle; the tail shorter than a batch waits for
         * the next epoch (drop-last sampling) */
        gsl_ran_shuffle(nd->rng_data, nd->perm, nd->n_local, sizeof(size_t));
        nd->cursor = 0;
    }
    mdl_loss_grad(c->cfg.model, cl_params(c, i), c->cfg.train, nd->perm + nd->cursor, B,
                  c->grads + (size_t)i * c->P);
    nd->cursor += B;
    double len = nd->base_s * draw_noise(c, nd->rng_compute);
    double now = sim_engine_now(c->eng);
    nd->computing = 1;
    nd->step_started = now;
    nd->step_len = len;
    schedule(c, now + len, CL_EV_STEP_DONE, i, 0);
}

double cl_param_bytes(const cl_cluster *c, size_t n_params)
{
    return (double)n_params * c->cfg.bytes_per_param;
}

static uint32_t slot_alloc(cl_cluster *c)
{
    if (c->free_slot == NO_SLOT) {
        uint32_t old = c->n_slots, grow = old ? old : 64;
        msg_slot *s = realloc(c->slots, (size_t)(old + grow) * sizeof *s);
        if (!s)
            die_oom();
        c->slots = s;
        c->n_slots = old + grow;
        /* chain the new slots in increasing order so reuse is deterministic */
        for (uint32_t k = old; k < old + grow; k++) {
            s[k].next_free = (k + 1 < old + grow) ? k + 1 : NO_SLOT;
            s[k].msg.payload = NULL;
        }
        c->free_slot = old;
    }
    uint32_t k = c->free_slot;
    c->free_slot = c->slots[k].next_free;
    return k;
}

static void slot_free(cl_cluster *c, uint32_t k)
{
    c->slots[k].msg.payload = NULL;
    c->slots[k].next_free = c->free_slot;
    c->free_slot = k;
}

void cl_send(cl_cluster *c, int from, int to, uint32_t tag, uint64_t round,
             cl_buf *payload, double bytes)
{
    assert(from != to && from >= 0 && to >= 0 && from < c->n && to < c->n);
    double now = sim_engine_now(c->eng);
    node *src = &c->nodes[from];
    double ser = bytes / c->cfg.bandwidth_Bps;
    double up_start = src->up_free > now ? src->up_free : now;
    double up_end = up_start + ser;
    src->up_free = up_end;
    src->st.uplink_busy_s += ser;
    src->st.bytes_sent += bytes;
    src->st.msgs_sent++;

    uint32_t k = slot_alloc(c);
    msg_slot *s = &c->slots[k];
    s->msg.from = from;
    s->msg.to = to;
    s->msg.tag = tag;
    s->msg.round = round;
    s->msg.bytes = bytes;
    s->msg.sent_at = now;
    s->msg.payload = payload;
    if (payload)
        cl_buf_ref(payload);
    s->up_end = up_end;
    c->in_flight++;
    schedule(c, up_start + c->cfg.latency_s, CL_EV_ARRIVE, to, k);
}

void cl_set_timer(cl_cluster *c, int node, double delay_s, uint32_t tag)
{
    schedule(c, sim_engine_now(c->eng) + delay_s, CL_EV_TIMER, node, tag);
}

cl_buf *cl_buf_get(cl_cluster *c)
{
    cl_buf *b = cl_pool_get(&c->pool);
    if (!b)
        die_oom();
    return b;
}

cl_buf *cl_snapshot(cl_cluster *c, int node)
{
    cl_buf *b = cl_buf_get(c);
    memcpy(b->data, cl_params(c, node), c->P * sizeof(double));
    return b;
}

void cl_buf_put(cl_cluster *c, cl_buf *b) { cl_pool_put(&c->pool, b); }

/* First bit at the receiver's downlink: queue behind what it is receiving.
 * Reception ends no earlier than the last bit can arrive (cut-through). */
static void on_arrive(cl_cluster *c, uint32_t k)
{
    msg_slot *s = &c->slots[k];
    node *dst = &c->nodes[s->msg.to];
    double now = sim_engine_now(c->eng);
    double rx_start = dst->down_free > now ? dst->down_free : now;
    double rx_end = rx_start + s->msg.bytes / c->cfg.bandwidth_Bps;
    double last_bit = s->up_end + c->cfg.latency_s;
    if (rx_end < last_bit)
        rx_end = last_bit;
    dst->down_free = rx_end;
    schedule(c, rx_end, CL_EV_DELIVER, s->msg.to, k);
}

static void on_deliver(cl_cluster *c, uint32_t k)
{
    cl_msg m = c->slots[k].msg;
    slot_free(c, k);
    c->in_flight--;
    node *dst = &c->nodes[m.to];
    dst->st.bytes_received += m.bytes;
    dst->st.msgs_received++;
    c->cb.on_message(c->cb.ctx, m.to, &m);
    if (m.payload)
        cl_pool_put(&c->pool, m.payload);
}

static void on_step_done(cl_cluster *c, int i)
{
    node *nd = &c->nodes[i];
    nd->computing = 0;
    nd->st.steps++;
    c->total_steps++;
    nd->st.compute_s += nd->step_len;
    c->cb.on_step_done(c->cb.ctx, i, c->grads + (size_t)i * c->P);
}

int cl_handle_event(cl_cluster *c, const sim_event *ev)
{
    c->pending--;
    switch (ev->kind) {
    case CL_EV_STEP_DONE:
        on_step_done(c, (int)ev->target);
        break;
    case CL_EV_ARRIVE:
        on_arrive(c, ev->data);
        break;
    case CL_EV_DELIVER:
        on_deliver(c, ev->data);
        break;
    case CL_EV_TIMER:
        if (c->cb.on_timer)
            c->cb.on_timer(c->cb.ctx, (int)ev->target, ev->data);
        break;
    default:
        assert(!"not a cluster event");
    }
    return 0;
}

double cl_compute_time(const cl_cluster *c, int i)
{
    const node *nd = &c->nodes[i];
    double t = nd->st.compute_s;
    if (nd->computing)
        t += sim_engine_now(c->eng) - nd->step_started;
    return t;
}

uint64_t cl_total_steps(const cl_cluster *c) { return c->total_steps; }

double cl_total_bytes_sent(const cl_cluster *c)
{
    double b = 0;
    for (int i = 0; i < c->n; i++)
        b += c->nodes[i].st.bytes_sent;
    return b;
}

uint64_t cl_samples_processed(const cl_cluster *c)
{
    return cl_total_steps(c) * (uint64_t)c->cfg.batch;
}
