/* cl_cluster.c -- nodes that compute in simulated time (see cl_cluster.h
 * for the timing model): creation, one step at a time per node (the caller
 * is told when a step begins and when it ends, and when progress marks
 * of its work fall), step time noise, piecewise integration of a step's work when the node's
 * slowdown changes, what a node loses when it goes down and what it does
 * when it comes back, the per-node time accounting of nodes.csv, and event
 * dispatch.  The network lives in cl_net.c, slowdown and availability
 * processes in cl_env.c.  It does not decide what to send or when to step:
 * the algorithm does, through the calls in the header.
 */
#include "cl_internal.h"
#include "sim_mem.h"
#include "sim_rng.h"

#include <assert.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <gsl/gsl_randist.h>

void cl_i_schedule(cl_cluster *c, double at, uint32_t kind, int target, uint32_t data)
{
    if (sim_engine_schedule_at(c->eng, at, kind, (uint32_t)target, data) != 0)
        sim_die_oom();
    c->pending++;
    c->nodes[target].pending++;
}

void cl_i_trace(cl_cluster *c, int i, const char *kind, double start, double end,
                int peer, double bytes)
{
    if (!c->cb.on_trace)
        return;
    cl_trace_rec r = { i, kind, start, end, peer, bytes };
    c->cb.on_trace(c->cb.ctx, &r);
}

void cl_i_account(cl_cluster *c, int i)
{
    if (c->nodes[i].dq_cnt != NO_SLOT)
        cl_i_dq_count(c, i);
    cl_i_account_at(c, i, sim_engine_now(c->eng));
}

void cl_i_account_at(cl_cluster *c, int i, double now)
{
    node *nd = &c->nodes[i];
    double t0 = nd->acct_t;
    nd->acct_t = now;
    if (now <= t0)
        return;
    if (nd->n_down > 0) {
        nd->st.down_s += now - t0;
    } else if (!nd->computing) {
        if (nd->rx_active > 0 || cl_i_fair_up_busy(c, i))
            nd->st.network_s += now - t0;
        else if (nd->up_free > t0)   /* FIFO uplink still draining */
            nd->st.network_s += (nd->up_free < now ? nd->up_free : now) - t0;
    }
}

static int node_create(cl_cluster *c, const cl_config *cfg, int i)
{
    node *nd = &c->nodes[i];
    nd->base_s = cfg->step_time_s[i];
    nd->scale = 1.0;
    nd->work_scale = 1.0;
    if (cfg->noise_per_node)
        nd->noise = cfg->noise_per_node[i];
    else
        nd->noise = (cl_noise_spec){ .dist = cfg->noise, .low = cfg->noise_low,
                                     .high = cfg->noise_high, .sigma = cfg->noise_sigma };
    nd->factor = 1.0;
    /* Streams are seeded independently, so one that is never drawn from
     * need not exist: constant noise draws nothing (a Mersenne Twister is
     * 5 KB, the bulk of a node at 10^5 nodes). */
    nd->noisy = nd->noise.dist != CL_NOISE_CONSTANT;
    if (nd->noisy
        && !(nd->rng_compute = sim_rng_stream_create(cfg->seed, (uint32_t)i, SIM_RNG_COMPUTE)))
        return -1;
    return 0;
}

static int keep_event(void *vc, const sim_event *ev);

cl_cluster *cl_create(const cl_config *cfg, sim_engine *e, cl_callbacks cb)
{
    cl_cluster *c = calloc(1, sizeof *c);
    if (!c)
        return NULL;
    c->cfg = *cfg;
    /* copied or rebuilt below; the caller's arrays are not kept */
    c->cfg.step_time_s = NULL;
    c->cfg.noise_per_node = NULL;
    c->cfg.up_Bps = c->cfg.down_Bps = NULL;
    c->cfg.slowdowns = NULL;
    c->cfg.faults = NULL;
    c->cfg.classes = NULL;
    c->cfg.link_rules = NULL;
    c->eng = e;
    c->cb = cb;
    c->n = cfg->n_nodes;
    cl_pool_init(&c->pool, cfg->payload_doubles);
    /* 64-byte aligned (the layout of node, cl_internal.h), on huge pages
     * when large (sim_mem.h) */
    if ((size_t)c->n > SIZE_MAX / sizeof(node))
        goto out_destroy;
    c->nodes = sim_alloc_lines((c->n > 0 ? (size_t)c->n : 1) * sizeof(node));
    if (!c->nodes)
        goto out_destroy;
    memset(c->nodes, 0, (c->n > 0 ? (size_t)c->n : 1) * sizeof(node));
    for (int i = 0; i < c->n; i++)
        if (node_create(c, cfg, i) != 0)
            goto out_destroy;
    for (int i = 0; i < c->n; i++) {
        c->nodes[i].up_cap = cfg->up_Bps ? cfg->up_Bps[i] : cfg->bandwidth_Bps;
        c->nodes[i].down_cap = cfg->down_Bps ? cfg->down_Bps[i] : cfg->bandwidth_Bps;
    }
    if (cl_i_net_init(c, cfg) != 0)
        goto out_destroy;
    c->slows = cfg->n_slowdowns ? malloc(cfg->n_slowdowns * sizeof *c->slows) : NULL;
    c->faults = cfg->n_faults ? malloc(cfg->n_faults * sizeof *c->faults) : NULL;
    if ((cfg->n_slowdowns && !c->slows) || (cfg->n_faults && !c->faults))
        goto out_destroy;
    if (cfg->n_slowdowns)
        memcpy(c->slows, cfg->slowdowns, cfg->n_slowdowns * sizeof *c->slows);
    if (cfg->n_faults)
        memcpy(c->faults, cfg->faults, cfg->n_faults * sizeof *c->faults);
    if (cl_i_env_init(c) != 0)
        goto out_destroy;
    sim_engine_set_keep(e, keep_event, c);
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
            gsl_rng_free(c->nodes[i].rng_slow);
            gsl_rng_free(c->nodes[i].rng_fault);
        }
        cl_i_net_fini(c);
    }
    /* payloads of messages still in flight at the end of the run */
    for (uint32_t s = 0; s < c->n_slots; s++)
        if (c->slots[s].live && c->slots[s].msg.payload)
            cl_pool_put(&c->pool, c->slots[s].msg.payload);
    cl_i_env_fini(c);
    cl_pool_fini(&c->pool);
    for (int k = 0; k < CL_LEN_POOLS; k++)
        cl_pool_fini(&c->len_pools[k]);
    free(c->slows);
    free(c->faults);
    free(c->slots);
    free(c->free_bits);
    free(c->free_sum);
    free(c->nodes);
    free(c);
}

int cl_n_nodes(const cl_cluster *c) { return c->n; }
double cl_now(const cl_cluster *c) { return sim_engine_now(c->eng); }
int cl_is_computing(const cl_cluster *c, int i) { return c->nodes[i].computing; }
int cl_is_up(const cl_cluster *c, int i) { return c->nodes[i].n_down == 0; }
double cl_slowdown_factor(const cl_cluster *c, int i) { return c->nodes[i].factor; }
double cl_base_step_time(const cl_cluster *c, int i) { return c->nodes[i].base_s; }

void cl_set_step_scale(cl_cluster *c, int i, double scale)
{
    assert(scale > 0);
    c->nodes[i].scale = scale;
}
uint64_t cl_pending(const cl_cluster *c) { return c->pending; }
uint64_t cl_in_flight(const cl_cluster *c) { return c->in_flight; }
const cl_node_stats *cl_stats(const cl_cluster *c, int i) { return &c->nodes[i].st; }

static double draw_noise(const cl_noise_spec *ns, gsl_rng *r)
{
    double x;
    switch (ns->dist) {
    case CL_NOISE_UNIFORM:
        return gsl_ran_flat(r, ns->low, ns->high);
    case CL_NOISE_EXPONENTIAL:
        return gsl_ran_exponential(r, 1.0);
    case CL_NOISE_LOGNORMAL:
        return gsl_ran_lognormal(r, -0.5 * ns->sigma * ns->sigma, ns->sigma);
    case CL_NOISE_NORMAL:
        /* truncation by redrawing: floor < 1 keeps the acceptance >= 1/2 */
        do
            x = 1.0 + gsl_ran_gaussian(r, ns->sigma);
        while (x < ns->floor);
        return x;
    case CL_NOISE_SHIFTED_EXPONENTIAL:
        return ns->shift + (1.0 - ns->shift) * gsl_ran_exponential(r, 1.0);
    case CL_NOISE_GAMMA:
        return gsl_ran_gamma(r, ns->shape, 1.0 / ns->shape);
    case CL_NOISE_PARETO:
        return gsl_ran_pareto(r, ns->alpha, (ns->alpha - 1.0) / ns->alpha);
    case CL_NOISE_CONSTANT:
    default:
        return 1.0;
    }
}

/* Schedules node i's next progress mark in the current segment.  A mark
 * at fraction 1 is left to the step's end (on_step_done gives every mark
 * still due first), so rounding can never put a mark after its step. */
static void schedule_mark(cl_cluster *c, int i)
{
    node *nd = &c->nodes[i];
    if (nd->next_mark >= nd->n_marks || nd->marks[nd->next_mark] >= 1.0)
        return;
    double done = nd->work_total - nd->work_left;   /* at seg_start */
    double at = nd->seg_start + (nd->marks[nd->next_mark] * nd->work_total - done) * nd->factor;
    double now = sim_engine_now(c->eng);
    cl_i_schedule(c, at > now ? at : now, CL_EV_MARK, i, nd->step_ver);
}

/* A STEP_DONE that a later segment or an interruption superseded is dead:
 * compaction drops it (sim_engine_set_keep) and this accounts for it as
 * cl_handle_event would have. */
static int keep_event(void *vc, const sim_event *ev)
{
    cl_cluster *c = vc;
    if (ev->kind != CL_EV_STEP_DONE)
        return 1;
    node *nd = &c->nodes[ev->target];
    if (nd->computing && ev->data == nd->step_ver)
        return 1;
    c->pending--;
    nd->pending--;
    return 0;
}

/* The rest of node i's work at its current factor, from now. */
static void schedule_segment(cl_cluster *c, int i)
{
    node *nd = &c->nodes[i];
    double now = sim_engine_now(c->eng);
    if (nd->seg_pending)   /* the segment it replaces is still in the queue */
        sim_engine_note_stale(c->eng, 1);
    nd->seg_pending = 1;
    nd->seg_start = now;
    nd->seg_len = nd->work_left * nd->factor;
    nd->step_ver++;
    cl_i_schedule(c, now + nd->seg_len, CL_EV_STEP_DONE, i, nd->step_ver);
    schedule_mark(c, i);
}

/* Starts node i's step with the marks already set on the node (a step
 * deferred or restarted keeps them and gives them again from mark 0). */
static void start_step(cl_cluster *c, int i)
{
    node *nd = &c->nodes[i];
    assert(!nd->computing && !nd->paused);
    if (nd->n_down > 0) {   /* starts when the node comes back */
        nd->want_step = 1;
        return;
    }
    if (c->cb.on_step_start)
        c->cb.on_step_start(c->cb.ctx, i);
    cl_i_account(c, i);
    nd->computing = 1;
    nd->want_step = 0;
    nd->step_started = sim_engine_now(c->eng);
    nd->work_left = nd->base_s * nd->scale * nd->work_scale
                  * (nd->noisy ? draw_noise(&nd->noise, nd->rng_compute) : 1.0);
    nd->work_total = nd->work_left;
    nd->next_mark = 0;
    schedule_segment(c, i);
}

void cl_start_step(cl_cluster *c, int i)
{
    cl_start_step_marks(c, i, NULL, 0);
}

void cl_start_step_marks(cl_cluster *c, int i, const double *fractions, int m)
{
    node *nd = &c->nodes[i];
    assert(m == 0 || (fractions && fractions[0] > 0 && fractions[m - 1] <= 1));
    assert(m == 0 || c->cb.on_step_mark);
    if (m > 0)   /* read only while n_marks > 0 */
        nd->marks = fractions;
    nd->n_marks = m;
    nd->work_scale = 1.0;
    start_step(c, i);
}

double cl_step_time_s(const cl_cluster *c, int i)
{
    return c->nodes[i].base_s * c->nodes[i].factor;
}

void cl_start_step_work(cl_cluster *c, int i, double scale)
{
    node *nd = &c->nodes[i];
    assert(scale > 0);
    nd->n_marks = 0;
    nd->work_scale = scale;
    start_step(c, i);
}

/* Gives node i's next mark; 0 when the step was aborted or superseded
 * meanwhile (the callback may do either). */
static int give_mark(cl_cluster *c, int i, uint32_t ver)
{
    node *nd = &c->nodes[i];
    int k = nd->next_mark++;
    c->cb.on_step_mark(c->cb.ctx, i, k);
    return nd->computing && ver == nd->step_ver;
}

static void on_mark(cl_cluster *c, int i, uint32_t ver)
{
    node *nd = &c->nodes[i];
    if (!nd->computing || ver != nd->step_ver || nd->next_mark >= nd->n_marks)
        return;   /* superseded by a slowdown change, or aborted */
    if (give_mark(c, i, ver))
        schedule_mark(c, i);
}

/* Stops node i's step in progress now; returns the elapsed segment. */
static double interrupt_step(cl_cluster *c, int i, const char *kind)
{
    node *nd = &c->nodes[i];
    double now = sim_engine_now(c->eng), el = now - nd->seg_start;
    cl_i_account(c, i);
    nd->st.compute_s += el;
    nd->computing = 0;
    nd->step_ver++;   /* its STEP_DONE is now stale */
    cl_i_trace(c, i, kind, nd->step_started, now, -1, 0);
    return el;
}

void cl_abort_step(cl_cluster *c, int i)
{
    node *nd = &c->nodes[i];
    if (nd->computing)
        interrupt_step(c, i, "abort");
    nd->paused = 0;
    nd->want_step = 0;
    nd->marks = NULL;
    nd->n_marks = 0;
}

void cl_i_set_factor(cl_cluster *c, int i, double f)
{
    node *nd = &c->nodes[i];
    if (f == nd->factor)
        return;
    if (nd->computing) {
        double el = sim_engine_now(c->eng) - nd->seg_start;
        nd->st.compute_s += el;
        nd->work_left -= el / nd->factor;
        if (nd->work_left < 0)
            nd->work_left = 0;
        nd->factor = f;
        schedule_segment(c, i);
    } else {
        nd->factor = f;
    }
}

static void go_down(cl_cluster *c, int i)
{
    node *nd = &c->nodes[i];
    nd->down_since = sim_engine_now(c->eng);
    if (nd->computing) {
        double el = interrupt_step(c, i, "step");
        if (c->cfg.step_policy == CL_STEP_RESUME) {
            nd->work_left -= el / nd->factor;
            if (nd->work_left < 0)
                nd->work_left = 0;
            nd->paused = 1;
        } else {
            nd->want_step = 1;
            nd->st.steps_lost++;
        }
    }
    /* its step, timers and the messages addressed to it */
    sim_engine_cancel_target(c->eng, (uint32_t)i);
    sim_engine_note_stale(c->eng, nd->pending);
    nd->seg_pending = 0;
    c->pending -= nd->pending;
    nd->pending = 0;
    cl_i_net_node_down(c, i);
    if (c->cb.on_down)
        c->cb.on_down(c->cb.ctx, i);
}

static void go_up(cl_cluster *c, int i)
{
    node *nd = &c->nodes[i];
    double now = sim_engine_now(c->eng);
    cl_i_trace(c, i, "down", nd->down_since, now, -1, 0);
    if (c->cb.on_up)
        c->cb.on_up(c->cb.ctx, i);
    if (nd->paused) {
        nd->paused = 0;
        nd->computing = 1;
        nd->step_started = now;
        schedule_segment(c, i);
    } else if (nd->want_step) {
        start_step(c, i);
    }
}

void cl_i_hold(cl_cluster *c, int i, int delta)
{
    node *nd = &c->nodes[i];
    int was = nd->n_down;
    cl_i_account(c, i);
    nd->n_down += delta;
    assert(nd->n_down >= 0);
    if (was == 0 && nd->n_down > 0)
        go_down(c, i);
    else if (was > 0 && nd->n_down == 0)
        go_up(c, i);
}

void cl_set_timer(cl_cluster *c, int i, double delay_s, uint32_t tag)
{
    if (c->nodes[i].n_down > 0)
        return;   /* a down node has no timers */
    cl_i_schedule(c, sim_engine_now(c->eng) + delay_s, CL_EV_TIMER, i, tag);
}

cl_buf *cl_buf_get(cl_cluster *c)
{
    cl_buf *b = cl_pool_get(&c->pool);
    if (!b)
        sim_die_oom();
    return b;
}

cl_buf *cl_buf_get_len(cl_cluster *c, size_t len)
{
    assert(len <= c->pool.capacity);
    cl_pool *p = &c->pool;
    if (len > 0 && len < c->pool.capacity)
        for (int k = 0; k < CL_LEN_POOLS; k++) {
            cl_pool *q = &c->len_pools[k];
            if (q->capacity == len) {
                p = q;
                break;
            }
            if (q->capacity == 0) {   /* a length not seen yet */
                cl_pool_init(q, len);
                p = q;
                break;
            }
        }
    cl_buf *b = cl_pool_get(p);
    if (!b)
        sim_die_oom();
    b->len = len < b->len ? len : b->len;
    return b;
}

void cl_buf_put(cl_cluster *c, cl_buf *b) { cl_pool_put(&c->pool, b); }

static void on_step_done(cl_cluster *c, int i, uint32_t ver)
{
    node *nd = &c->nodes[i];
    if (ver == nd->step_ver)
        nd->seg_pending = 0;
    if (!nd->computing || ver != nd->step_ver)
        return;   /* superseded by a slowdown change, or aborted */
    while (nd->next_mark < nd->n_marks)   /* marks at 1, or rounded past the end */
        if (!give_mark(c, i, ver))
            return;
    nd->n_marks = 0;
    cl_i_account(c, i);
    nd->computing = 0;
    nd->st.steps++;
    c->total_steps++;
    nd->st.compute_s += nd->seg_len;
    cl_i_trace(c, i, "step", nd->step_started, sim_engine_now(c->eng), -1, 0);
    c->cb.on_step_done(c->cb.ctx, i);
}

int cl_handle_event(cl_cluster *c, const sim_event *ev)
{
    c->cur_seq = ev->seq;
    if (ev->target > (uint32_t)c->n) {   /* FIFO: a delivery on its slot's own target */
        assert(ev->kind == CL_EV_DELIVER);
        c->ev_node = (uint32_t)c->slots[ev->data].msg.to;
        c->pending--;
        c->nodes[c->ev_node].pending--;
        cl_i_on_deliver(c, ev->data);
        return 0;
    }
    if (ev->kind == CL_EV_ENV) {
        cl_i_on_env(c, ev->data);
        return 0;
    }
    if (ev->kind == CL_EV_NIC && ev->target == (uint32_t)c->n) {   /* fair: flush */
        c->pending--;
        cl_i_fair_flush(c);
        return 0;
    }
    if (ev->kind == CL_EV_RETRY) {   /* on the never-cancelled target n */
        c->pending--;
        cl_i_on_retry(c, ev->data);
        return 0;
    }
    c->pending--;
    c->nodes[ev->target].pending--;
    switch (ev->kind) {
    case CL_EV_STEP_DONE:
        on_step_done(c, (int)ev->target, ev->data);
        break;
    case CL_EV_MARK:
        on_mark(c, (int)ev->target, ev->data);
        break;
    case CL_EV_ARRIVE:
        cl_i_on_arrive(c, ev->data);
        break;
    case CL_EV_DELIVER:
        cl_i_on_deliver(c, ev->data);
        break;
    case CL_EV_NIC:
        cl_i_on_nic(c, (int)ev->target, ev->data);
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

uint32_t cl_event_node(const cl_cluster *c, const sim_event *ev)
{
    return ev->target > (uint32_t)c->n ? c->ev_node : ev->target;
}

double cl_compute_time(const cl_cluster *c, int i)
{
    const node *nd = &c->nodes[i];
    double t = nd->st.compute_s;
    if (nd->computing)
        t += sim_engine_now(c->eng) - nd->seg_start;
    return t;
}

void cl_stats_settle(cl_cluster *c)
{
    for (int i = 0; i < c->n; i++)
        cl_i_account(c, i);
}

uint64_t cl_total_steps(const cl_cluster *c) { return c->total_steps; }

double cl_total_bytes_sent(const cl_cluster *c)
{
    double b = 0;
    for (int i = 0; i < c->n; i++)
        b += c->nodes[i].st.bytes_sent;
    return b;
}
