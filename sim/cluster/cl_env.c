/* cl_env.c -- the environment of the nodes: time-varying slowdowns
 * (windows, two-state Markov stragglers, periodic, traces) and
 * availability (schedules, exponential up and down times, traces).  Each
 * (process, node) pair is an item with its own state and at most one
 * pending event on the cluster's environment target (n_nodes, never
 * cancelled).  A node's factor is the product of its slowdown items' in
 * process order; a node is down while any fault item holds it.  Only an
 * event that brings a node back counts as pending work for stall
 * detection: slowdown changes and future failures alone cannot unblock a
 * run.  It does not decide what a change does to a step or a message
 * (cl_cluster.c and cl_net.c do).
 */
#include "cl_internal.h"
#include "sim_rng.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <gsl/gsl_randist.h>

static int in_list(const int *nodes, size_t n, int i)
{
    if (!nodes)
        return 1;
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (nodes[mid] < i)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < n && nodes[lo] == i;
}

/* First point of node i in a sorted trace, or n_points when none. */
static size_t first_point(const cl_point *p, size_t n, int i)
{
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (p[mid].node < i)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < n && p[lo].node == i ? lo : n;
}

static int slow_applies(const cl_slowdown *s, int i)
{
    if (s->kind == CL_SLOW_TRACE)
        return first_point(s->points, s->n_points, i) < s->n_points;
    return in_list(s->nodes, s->n_nodes, i);
}

static int fault_applies(const cl_fault *f, int i)
{
    if (f->kind == CL_FAULT_TRACE)
        return first_point(f->points, f->n_points, i) < f->n_points;
    return in_list(f->nodes, f->n_nodes, i);
}

static void env_schedule(cl_cluster *c, uint32_t k, double at)
{
    env_item *it = &c->items[k];
    if (!isfinite(at))
        return;
    /* a down node's return is progress; anything else is not */
    it->counted = it->is_fault && it->active;
    if (sim_engine_schedule_at(c->eng, at, CL_EV_ENV, (uint32_t)c->n, k) != 0)
        sim_die_oom();
    if (it->counted)
        c->pending++;
}

static double node_factor(const cl_cluster *c, int i)
{
    const node *nd = &c->nodes[i];
    double f = 1.0;
    for (uint32_t k = nd->env_first; k < nd->env_end; k++) {
        const env_item *it = &c->items[k];
        if (it->is_fault)
            continue;
        const cl_slowdown *s = &c->slows[it->proc];
        if (s->kind == CL_SLOW_TRACE)
            f *= it->value;
        else if (it->active)
            f *= s->factor;
    }
    return f;
}

/* Trace: applies every point of the item's node up to time t; returns
 * the time of the next one (INFINITY when none). */
static double trace_advance(const cl_point *p, size_t n, env_item *it, double t)
{
    while (it->next < n && p[it->next].node == it->node && p[it->next].time_s <= t)
        it->value = p[it->next++].value;
    return it->next < n && p[it->next].node == it->node ? p[it->next].time_s : INFINITY;
}

/* Sets the item's state at time 0 and schedules its first change. */
static void slow_start(cl_cluster *c, uint32_t k)
{
    env_item *it = &c->items[k];
    const cl_slowdown *s = &c->slows[it->proc];
    node *nd = &c->nodes[it->node];
    double at = INFINITY;
    switch (s->kind) {
    case CL_SLOW_WINDOW:
        it->active = s->start_s <= 0 && 0 < s->end_s;
        at = it->active ? s->end_s : (s->start_s > 0 ? s->start_s : INFINITY);
        break;
    case CL_SLOW_MARKOV: {
        /* start in the stationary distribution */
        double p_slow = s->mean_slow_s / (s->mean_slow_s + s->mean_normal_s);
        it->active = gsl_rng_uniform(nd->rng_slow) < p_slow;
        at = gsl_ran_exponential(nd->rng_slow, it->active ? s->mean_slow_s : s->mean_normal_s);
        break;
    }
    case CL_SLOW_PERIODIC:
        it->next = 0;
        it->active = s->phase_s == 0;
        at = it->active ? s->duration_s : s->phase_s;
        break;
    case CL_SLOW_TRACE:
        it->value = 1.0;
        it->next = first_point(s->points, s->n_points, it->node);
        at = trace_advance(s->points, s->n_points, it, 0.0);
        break;
    }
    env_schedule(c, k, at);
}

static void slow_change(cl_cluster *c, uint32_t k)
{
    env_item *it = &c->items[k];
    const cl_slowdown *s = &c->slows[it->proc];
    node *nd = &c->nodes[it->node];
    double now = sim_engine_now(c->eng), at = INFINITY;
    switch (s->kind) {
    case CL_SLOW_WINDOW:
        it->active = !it->active;
        at = it->active ? s->end_s : INFINITY;
        break;
    case CL_SLOW_MARKOV:
        it->active = !it->active;
        at = now + gsl_ran_exponential(nd->rng_slow,
                                       it->active ? s->mean_slow_s : s->mean_normal_s);
        break;
    case CL_SLOW_PERIODIC:
        /* cycle times by multiplication: no drift over many periods */
        if (it->active) {
            it->active = 0;
            it->next++;
            at = s->phase_s + (double)it->next * s->period_s;
        } else {
            it->active = 1;
            at = s->phase_s + (double)it->next * s->period_s + s->duration_s;
        }
        break;
    case CL_SLOW_TRACE:
        at = trace_advance(s->points, s->n_points, it, now);
        break;
    }
    cl_i_set_factor(c, it->node, node_factor(c, it->node));
    env_schedule(c, k, at);
}

static void fault_start(cl_cluster *c, uint32_t k)
{
    env_item *it = &c->items[k];
    const cl_fault *f = &c->faults[it->proc];
    node *nd = &c->nodes[it->node];
    double at = INFINITY;
    switch (f->kind) {
    case CL_FAULT_SCHEDULE:
        it->active = f->down_s <= 0 && 0 < f->up_s;
        at = it->active ? f->up_s : (f->down_s > 0 ? f->down_s : INFINITY);
        break;
    case CL_FAULT_EXPONENTIAL:
        it->active = 0;
        at = gsl_ran_exponential(nd->rng_fault, f->mtbf_s);
        break;
    case CL_FAULT_TRACE:
        it->value = 1.0;
        it->next = first_point(f->points, f->n_points, it->node);
        at = trace_advance(f->points, f->n_points, it, 0.0);
        it->active = it->value == 0.0;
        break;
    }
    /* down at time 0: no step has started and nothing is in flight */
    if (it->active)
        nd->n_down++;
    env_schedule(c, k, at);
}

static void fault_change(cl_cluster *c, uint32_t k)
{
    env_item *it = &c->items[k];
    const cl_fault *f = &c->faults[it->proc];
    node *nd = &c->nodes[it->node];
    double now = sim_engine_now(c->eng), at = INFINITY;
    int was = it->active;
    switch (f->kind) {
    case CL_FAULT_SCHEDULE:
        it->active = !it->active;
        at = it->active ? f->up_s : INFINITY;
        break;
    case CL_FAULT_EXPONENTIAL:
        it->active = !it->active;
        at = now + gsl_ran_exponential(nd->rng_fault, it->active ? f->mttr_s : f->mtbf_s);
        break;
    case CL_FAULT_TRACE:
        at = trace_advance(f->points, f->n_points, it, now);
        it->active = it->value == 0.0;
        break;
    }
    if (it->active != was)
        cl_i_hold(c, it->node, it->active ? 1 : -1);
    env_schedule(c, k, at);
}

void cl_i_on_env(cl_cluster *c, uint32_t k)
{
    env_item *it = &c->items[k];
    if (it->counted) {
        c->pending--;
        it->counted = 0;
    }
    if (it->is_fault)
        fault_change(c, k);
    else
        slow_change(c, k);
}

int cl_i_env_init(cl_cluster *c)
{
    size_t ns = c->cfg.n_slowdowns, nf = c->cfg.n_faults, total = 0;
    for (int i = 0; i < c->n; i++) {
        for (size_t p = 0; p < ns; p++)
            total += (size_t)slow_applies(&c->slows[p], i);
        for (size_t p = 0; p < nf; p++)
            total += (size_t)fault_applies(&c->faults[p], i);
    }
    if (total == 0)
        return 0;
    c->items = calloc(total, sizeof *c->items);
    if (!c->items)
        return -1;
    uint32_t k = 0;
    for (int i = 0; i < c->n; i++) {
        node *nd = &c->nodes[i];
        nd->env_first = k;
        for (size_t p = 0; p < ns; p++) {
            if (!slow_applies(&c->slows[p], i))
                continue;
            c->items[k++] = (env_item){ .node = i, .proc = (uint32_t)p, .is_fault = 0 };
            if (c->slows[p].kind == CL_SLOW_MARKOV && !nd->rng_slow
                && !(nd->rng_slow = sim_rng_stream_create(c->cfg.seed, (uint32_t)i,
                                                          SIM_RNG_SLOWDOWN)))
                return -1;
        }
        for (size_t p = 0; p < nf; p++) {
            if (!fault_applies(&c->faults[p], i))
                continue;
            c->items[k++] = (env_item){ .node = i, .proc = (uint32_t)p, .is_fault = 1 };
            if (c->faults[p].kind == CL_FAULT_EXPONENTIAL && !nd->rng_fault
                && !(nd->rng_fault = sim_rng_stream_create(c->cfg.seed, (uint32_t)i,
                                                           SIM_RNG_FAULT)))
                return -1;
        }
        nd->env_end = k;
    }
    c->n_items = k;
    /* item order: node by node, processes in scenario order */
    for (uint32_t j = 0; j < c->n_items; j++) {
        if (c->items[j].is_fault)
            fault_start(c, j);
        else
            slow_start(c, j);
    }
    for (int i = 0; i < c->n; i++)
        c->nodes[i].factor = node_factor(c, i);
    return 0;
}

void cl_i_env_fini(cl_cluster *c)
{
    free(c->items);
}
