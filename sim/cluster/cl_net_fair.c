/* cl_net_fair.c -- the fair-sharing network of the cluster: per-link
 * queues at each sender, and the max-min fair sharing of the NICs between
 * the flows crossing them.  It does not classify links, draw jitter or
 * loss, or deliver messages (cl_net.c).
 *
 * Model (SimGrid's CM02 with a route of two shared resources).  The
 * messages of one link (i, j) pass the network one after the other (FIFO
 * per link, like one TCP connection); the one at the head of its link is a
 * flow through two resources, i's uplink and j's downlink (only the uplink
 * when the message is lost on the wire or its receiver is down: nothing
 * reaches the downlink), capped by its link's bandwidth.  The rates of all
 * flows are the max-min fair allocation (progressive filling: raise every
 * rate together, freeze the flows of a resource when it saturates or of a
 * flow when it reaches its cap).  A flow's last bit leaves when its bytes
 * are done; the message is delivered one propagation delay (latency plus
 * jitter) later.
 *
 * Solving.  A start or an end is placed in O(log n) when it happens at a
 * uniform resource (every flow there alone at its other resource and at
 * the same share: a parameter server's NIC; cl_net_ps.c); otherwise the
 * resources it crossed are re-solved, the region growing as far as the
 * change reaches (cl_net_maxmin.c).  A region that starts with more than
 * EAGER_FLOWS flows is solved once per instant, at a flush event at now
 * (a star's n simultaneous starts: one solve, not n).
 *
 * Completions.  Each flow belongs to the resource (or cap) that fixed its
 * rate; each resource has one completion event, at the earliest end among
 * its flows (t_last + rem / rate), versioned so that superseded events are
 * dropped.  The handler ends every flow of the resource whose end, by the
 * same expression, is not after now: at least the one it was scheduled
 * for, so every live completion event ends a flow and the network cannot
 * stall in floating point at any absolute time (the livelock of issue 15
 * came from re-testing a residue against now).
 */
#include "cl_fair_internal.h"

#include <assert.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

int cl_i_fair_init(cl_cluster *c)
{
    c->nics = calloc(2 * (size_t)c->n, sizeof *c->nics);
    c->mm = calloc(1, sizeof *c->mm);
    if (!c->nics || !c->mm)
        return -1;
    for (size_t r = 0; r < 2 * (size_t)c->n; r++)
        c->nics[r].sched_t = INFINITY;
    c->mm->epoch = c->mm->d_epoch = 1;   /* stamps start at 0: none current */
    return 0;
}

void cl_i_fair_fini(cl_cluster *c)
{
    if (c->nics)
        for (size_t r = 0; r < 2 * (size_t)c->n; r++) {
            free(c->nics[r].act);
            if (c->nics[r].ps) {
                free(c->nics[r].ps->th);
                free(c->nics[r].ps->lh);
                free(c->nics[r].ps);
            }
        }
    if (c->mm) {
        free(c->mm->S);
        free(c->mm->B);
        free(c->mm->F);
        free(c->mm->X);
        free(c->mm->D);
        free(c->mm->done);
        free(c->mm->h);
        free(c->mm->C);
    }
    free(c->nics);
    free(c->mm);
}

/* ---- flows through resources ---- */

/* Flow k joins resource r (d: 0 its uplink, 1 its downlink); r joins
 * the region to solve unless the flow was placed in virtual time. */
static void res_join(cl_cluster *c, uint32_t r, uint32_t k, int d, int solve)
{
    nic *q = &c->nics[r];
    if (q->n_act == q->cap_act) {
        uint32_t cap = q->cap_act ? 2 * q->cap_act : 4;
        uint32_t *a = realloc(q->act, cap * sizeof *a);
        if (!a)
            sim_die_oom();
        q->act = a;
        q->cap_act = cap;
    }
    if (d == 0 && q->n_act == 0)
        q->busy_since = sim_engine_now(c->eng);
    c->slots[k].pos[d] = q->n_act;
    q->act[q->n_act++] = k;
    c->slots[k].in_res[d] = 1;
    if (solve)
        cl_i_mm_region_add(c, r);
}

/* Takes flow k out of resource r (swap with the last: the order of act is
 * the history of joins and leaves, deterministic). */
static void res_leave(cl_cluster *c, uint32_t r, uint32_t k, int d, int solve)
{
    nic *q = &c->nics[r];
    uint32_t p = c->slots[k].pos[d], last = q->act[--q->n_act];
    assert(q->act[p] == k);
    if (p != q->n_act) {
        q->act[p] = last;
        msg_slot *l = &c->slots[last];
        l->pos[cl_i_flow_res(c, last, 0) == r ? 0 : 1] = p;
    }
    c->slots[k].in_res[d] = 0;
    if (d == 0 && q->n_act == 0)
        c->nodes[r >> 1].st.uplink_busy_s += sim_engine_now(c->eng) - q->busy_since;
    if (solve)
        cl_i_mm_region_add(c, r);
}

/* Flow k enters the network now (its region is solved by the caller). */
static void flow_start(cl_cluster *c, uint32_t k)
{
    msg_slot *s = &c->slots[k];
    int from = s->msg.from, to = s->msg.to;
    double now = sim_engine_now(c->eng);
    s->up_start = now;
    s->rem = s->msg.bytes;
    s->rate = 0;
    s->t_last = now;
    s->owner = -1;
    s->psr = -1;
    const cl_link_class *cls = &c->classes[s->cls];
    if (cl_i_in_outage(cls, now) || c->nodes[to].n_down > 0)
        s->lost = 1;
    /* propagation: latency and jitter, never reordering the link */
    s->lat = cls->latency_s;
    if (cls->jitter != CL_JITTER_NONE)
        s->lat += cl_i_draw_jitter(cls, c->nodes[from].rng_link);
    uint32_t up = 2 * (uint32_t)from, down = 2 * (uint32_t)to + 1;
    /* (no uniform resource on its route: none to pick, without the call) */
    int32_t u = c->nics[up].uni || (!s->lost && c->nics[down].uni) ? cl_i_ps_pick(c, k, !s->lost)
                                                                    : -1;
    cl_i_account(c, from);
    res_join(c, up, k, 0, u < 0);
    if (!s->lost) {
        s->rx_start = now + s->lat;
        cl_i_account(c, to);
        c->nodes[to].rx_active++;
        s->rx_counted = 1;
        res_join(c, down, k, 1, u < 0);
    }
    if (u >= 0)
        cl_i_ps_add(c, (uint32_t)u, k);
}

/* Takes flow k out of the resources it crosses (region seeded, unless it
 * leaves a uniform resource that stays uniform). */
static void flow_stop(cl_cluster *c, uint32_t k)
{
    msg_slot *s = &c->slots[k];
    int32_t u = s->psr;
    int fast = u >= 0 && c->mm->nS == 0;
    if (u >= 0 && !fast)
        cl_i_ps_materialize(c, (uint32_t)u);
    if (fast)
        cl_i_ps_remove(c, k);
    int in0 = s->in_res[0], in1 = s->in_res[1];
    cl_i_mm_mark_dirty(c, s->owner);
    if (in0) {
        cl_i_account(c, s->msg.from);
        res_leave(c, cl_i_flow_res(c, k, 0), k, 0, !fast);
    }
    if (in1)
        res_leave(c, cl_i_flow_res(c, k, 1), k, 1, !fast);
    if (fast && !cl_i_ps_settle(c, (uint32_t)u))
        for (int d = 0; d < 2; d++)
            if (d ? in1 : in0)
                cl_i_mm_region_add(c, cl_i_flow_res(c, k, d));
    s->owner = -1;
}

/* Solves what changed: at once when the region starts small (a handful
 * of flows, as on a ring), else once for every change of this instant,
 * at a flush event at now on the cluster's never-cancelled target (a
 * star's hub: the n flows that start or end together cost one solve, not
 * n).  Nothing moves in no time, so the rates are needed only once the
 * clock moves on. */
#define EAGER_FLOWS 16

static void flush_later(cl_cluster *c)
{
    cl_mm *m = c->mm;
    if (m->flush_pending)
        return;
    m->flush_pending = 1;
    if (sim_engine_schedule_at(c->eng, sim_engine_now(c->eng), CL_EV_NIC, (uint32_t)c->n, 0)
        != 0)
        sim_die_oom();
    c->pending++;
}

static void resolve(cl_cluster *c)
{
    cl_mm *m = c->mm;
    if (m->nS == 0 && m->nD == 0)
        return;
    size_t load = 0;
    for (size_t a = 0; a < m->nS && load <= EAGER_FLOWS; a++)
        load += c->nics[m->S[a]].n_act;
    if (load > EAGER_FLOWS) {
        flush_later(c);
        return;
    }
    if (m->nS > 0)
        cl_i_mm_solve(c);
    if (m->defer)   /* completion events of a uniform resource, at the flush */
        flush_later(c);
    else
        cl_i_mm_reschedule_dirty(c);
}

void cl_i_fair_flush(cl_cluster *c)
{
    cl_mm *m = c->mm;
    m->flush_pending = 0;
    m->defer = 0;
    if (m->nS > 0)
        cl_i_mm_solve(c);
    cl_i_mm_reschedule_dirty(c);
}

/* ---- per-link queues at the senders ---- */

static pairq *link_of(cl_cluster *c, uint32_t k)
{
    const msg_slot *s = &c->slots[k];
    return cl_i_pair_get(&c->nodes[s->msg.from].upp, s->msg.to);
}

/* Message k joins its link's queue; it starts at once when the link is
 * free. */
void cl_i_fair_enter(cl_cluster *c, uint32_t k)
{
    pairq *pq = link_of(c, k);
    c->slots[k].next_up = NO_SLOT;
    c->slots[k].queued_up = 1;
    cl_i_upq_fair(c, k, +1);
    if (pq->head == NO_SLOT) {
        pq->head = pq->tail = k;
        flow_start(c, k);
        resolve(c);
    } else {
        c->slots[k].next_up = NO_SLOT;
        c->slots[pq->tail].next_up = k;
        pq->tail = k;
    }
}

/* Message k leaves its link's queue pq (finished or lost); the next one
 * of the link starts when k was the one in the network. */
static void link_leave(cl_cluster *c, uint32_t k, pairq *pq)
{
    uint32_t nxt = c->slots[k].next_up;
    c->slots[k].queued_up = 0;
    cl_i_upq_fair(c, k, -1);
    if (pq->head == k) {
        pq->head = nxt;
        if (nxt == NO_SLOT)
            pq->tail = NO_SLOT;
        else if (!c->slots[nxt].dead)   /* a lost one is about to be dropped */
            flow_start(c, nxt);
        return;
    }
    uint32_t p = pq->head;
    while (c->slots[p].next_up != k)
        p = c->slots[p].next_up;
    c->slots[p].next_up = nxt;
    if (pq->tail == k)
        pq->tail = p;
}

/* Takes message k out of its flow and its link's queue. */
void cl_i_fair_leave(cl_cluster *c, uint32_t k)
{
    msg_slot *s = &c->slots[k];
    if (!s->in_res[0] && !s->in_res[1] && !s->queued_up)
        return;
    if (s->in_res[0] || s->in_res[1])
        flow_stop(c, k);
    if (s->rx_counted) {
        cl_i_account(c, s->msg.to);
        c->nodes[s->msg.to].rx_active--;
        s->rx_counted = 0;
    }
    if (s->queued_up)
        link_leave(c, k, link_of(c, k));
    resolve(c);
}

/* Message k's last bit has left: delivery one propagation later. */
static void flow_done(cl_cluster *c, uint32_t k)
{
    msg_slot *s = &c->slots[k];
    double now = sim_engine_now(c->eng);
    s->up_end = now;
    s->up_known = 1;
    cl_i_trace(c, s->msg.from, "send", s->up_start, now, s->msg.to, s->msg.bytes);
    pairq *pq = link_of(c, k);
    if (s->lost) {
        link_leave(c, k, pq);
        cl_i_drop(c, k);
        return;
    }
    double at = now + s->lat;
    if (c->classes[s->cls].jitter != CL_JITTER_NONE && !c->cfg.reorder) {
        if (at < pq->last_deliver)
            at = pq->last_deliver;
        pq->last_deliver = at;
    }
    link_leave(c, k, pq);
    s->ev_pending = 1;
    cl_i_schedule(c, at, CL_EV_DELIVER, s->msg.to, k);
}

void cl_i_on_nic(cl_cluster *c, int i, uint32_t data)
{
    uint32_t r = 2 * (uint32_t)i + (data & 1u);
    nic *q = &c->nics[r];
    if ((data >> 1) != q->version)
        return;   /* superseded */
    cl_mm *m = c->mm;
    double now = sim_engine_now(c->eng);
    q->sched_t = INFINITY;
    cl_i_mm_mark_dirty(c, (int32_t)r);
    /* every flow it owns whose end (the expression that scheduled this
     * event) is not after now ends now, in the order of act */
    m->ndone = 0;
    if (q->uni) {
        cl_i_ps_collect_done(c, r, now);
    } else {
        for (uint32_t f = 0; f < q->n_act; f++) {
            const msg_slot *s = &c->slots[q->act[f]];
            if (s->owner == (int32_t)r && s->t_last + s->rem / s->rate <= now)
                cl_i_push_u32(&m->done, &m->ndone, &m->capdone, q->act[f]);
        }
    }
    /* none when a change of this instant, not yet solved (a pending
     * flush), took away the flow it was scheduled for */
    for (size_t d = 0; d < m->ndone; d++)
        flow_stop(c, m->done[d]);
    /* the ends may start the next messages of their links (flow_done);
     * one solve covers them all */
    size_t nd = m->ndone;
    for (size_t d = 0; d < nd; d++)
        flow_done(c, m->done[d]);
    resolve(c);
}

/* Seconds until node i's fair uplink has sent what it holds, without
 * bringing its transfers up to date (a query changes no state): exact for
 * one message alone in the uplink while its max-min rate holds (nothing
 * joins its uplink or its receiver's downlink), otherwise the bytes left
 * of the active transfers at the whole capacity, a lower bound. */
double cl_i_fair_up_idle_s(const cl_cluster *c, int i)
{
    const node *nd = &c->nodes[i];
    const nic *q = &c->nics[2 * (size_t)i];   /* resource 2i: i's uplink */
    double now = sim_engine_now(c->eng), left = 0;
    if (nd->upq_n == 0 || q->n_act == 0)
        return 0;
    for (uint32_t a = 0; a < q->n_act; a++) {
        double rate;
        left += cl_i_ps_flow_left(c, q->act[a], now, &rate);
        if (nd->upq_n == 1 && q->n_act == 1 && rate > 0)
            return left / rate;
    }
    return left / nd->up_cap;
}

cl_fair_work cl_fair_work_done(const cl_cluster *c)
{
    return c->mm ? c->mm->work : (cl_fair_work){ 0 };
}
