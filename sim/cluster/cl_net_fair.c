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
 * Incremental solving.  When a flow starts or ends, only the resources it
 * crossed are re-solved at first (the region S), with every flow through S
 * free and every other flow frozen at its rate: a flow of S that also
 * crosses a resource outside S sees that resource's capacity minus the
 * frozen flows' rates.  The region grows by every outside resource where a
 * flow of S changed its rate or where a flow of S is capped below a frozen
 * flow (that resource would not be its max-min bottleneck), and is solved
 * again, until neither happens: then every flow has a max-min bottleneck
 * and the result is the global max-min allocation (the outside flows see
 * the same resources as before).  Cost per start or end: O((F + R) log F)
 * for the F flows and R resources of the final region (a handful on a ring;
 * every flow of a star's hub, where every rate changes).  A region that
 * starts with more than EAGER_FLOWS flows is solved once per instant, at a
 * flush event at now (a star's n simultaneous starts: one solve, not n).
 * Rates that do not change are left alone, bytes and all.
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
#include "cl_internal.h"

#include <assert.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#define VER_MASK 0x7fffffffu

/* One entry of the progressive filling heap: a resource's share (id <
 * 2n) or a flow's cap (id = 2n + slot). */
typedef struct mm_ent {
    double   share;
    uint32_t id, ver;
} mm_ent;

typedef struct cl_mm {
    uint32_t *S, *B, *F, *X, *D, *done;
    size_t    nS, nB, nF, nX, nD, ndone;
    size_t    capS, capB, capF, capX, capD, capdone;
    mm_ent   *h;
    size_t    nh, caph;
    uint32_t  epoch;      /* stamps: region, boundary, flows, expansion */
    uint32_t  d_epoch;    /* reschedule marks */
    int       flush_pending;  /* a flush event is queued at now */
} cl_mm;

static void push_u32(uint32_t **a, size_t *n, size_t *cap, uint32_t v)
{
    if (*n == *cap) {
        size_t nc = *cap ? 2 * *cap : 16;
        uint32_t *p = realloc(*a, nc * sizeof *p);
        if (!p)
            sim_die_oom();
        *a = p;
        *cap = nc;
    }
    (*a)[(*n)++] = v;
}

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
        for (size_t r = 0; r < 2 * (size_t)c->n; r++)
            free(c->nics[r].act);
    if (c->mm) {
        free(c->mm->S);
        free(c->mm->B);
        free(c->mm->F);
        free(c->mm->X);
        free(c->mm->D);
        free(c->mm->done);
        free(c->mm->h);
    }
    free(c->nics);
    free(c->mm);
}

static double res_cap(const cl_cluster *c, uint32_t r)
{
    const node *nd = &c->nodes[r >> 1];
    return (r & 1) ? nd->down_cap : nd->up_cap;
}

/* Resource d (0: uplink, 1: downlink) of flow k. */
static uint32_t flow_res(const cl_cluster *c, uint32_t k, int d)
{
    const msg_slot *s = &c->slots[k];
    return d ? 2 * (uint32_t)s->msg.to + 1 : 2 * (uint32_t)s->msg.from;
}

/* ---- the progressive filling heap: (share, id), smallest first ---- */

static int ent_less(const mm_ent *a, const mm_ent *b)
{
    return a->share < b->share || (a->share == b->share && a->id < b->id);
}

static void heap_push(cl_mm *m, double share, uint32_t id, uint32_t ver)
{
    if (m->nh == m->caph) {
        size_t nc = m->caph ? 2 * m->caph : 64;
        mm_ent *p = realloc(m->h, nc * sizeof *p);
        if (!p)
            sim_die_oom();
        m->h = p;
        m->caph = nc;
    }
    mm_ent e = { share, id, ver };
    size_t i = m->nh++;
    while (i > 0) {
        size_t p = (i - 1) / 2;
        if (!ent_less(&e, &m->h[p]))
            break;
        m->h[i] = m->h[p];
        i = p;
    }
    m->h[i] = e;
}

static mm_ent heap_pop(cl_mm *m)
{
    mm_ent top = m->h[0], last = m->h[--m->nh];
    size_t i = 0, n = m->nh;
    for (;;) {
        size_t ch = 2 * i + 1;
        if (ch >= n)
            break;
        if (ch + 1 < n && ent_less(&m->h[ch + 1], &m->h[ch]))
            ch++;
        if (!ent_less(&m->h[ch], &last))
            break;
        m->h[i] = m->h[ch];
        i = ch;
    }
    if (n > 0)
        m->h[i] = last;
    return top;
}

/* ---- the max-min solve ---- */

/* A fresh stamp for marks (0 is never current: on wrap every mark is
 * cleared). */
static uint32_t next_epoch(cl_cluster *c)
{
    cl_mm *m = c->mm;
    if (++m->epoch == 0) {
        for (size_t r = 0; r < 2 * (size_t)c->n; r++)
            c->nics[r].s_stamp = c->nics[r].b_stamp = c->nics[r].x_stamp = 0;
        for (uint32_t k = 0; k < c->n_slots; k++)
            c->slots[k].mm_stamp = 0;
        m->epoch = 1;
    }
    return m->epoch;
}

/* Resource r joins the region (seeds, and growth). */
static void region_add(cl_cluster *c, uint32_t r)
{
    cl_mm *m = c->mm;
    if (c->nics[r].s_stamp == m->epoch)
        return;
    c->nics[r].s_stamp = m->epoch;
    push_u32(&m->S, &m->nS, &m->capS, r);
}

static void mark_dirty(cl_cluster *c, int32_t r)
{
    if (r < 0)
        return;
    cl_mm *m = c->mm;
    nic *q = &c->nics[r];
    if (q->d_stamp == m->d_epoch)
        return;
    q->d_stamp = m->d_epoch;
    push_u32(&m->D, &m->nD, &m->capD, (uint32_t)r);
}

/* Fixes flow k at rate x, owned by resource owner; its resources other
 * than skip (the one being saturated) give out x. */
static void fix_flow(cl_cluster *c, uint32_t k, double x, int32_t owner, uint32_t skip)
{
    cl_mm *m = c->mm;
    msg_slot *s = &c->slots[k];
    s->mm_fixed = 1;
    s->mm_rate = x;
    s->mm_owner = owner;
    for (int d = 0; d < 2; d++) {
        if (!s->in_res[d])
            continue;
        uint32_t r = flow_res(c, k, d);
        if (r == skip)
            continue;
        nic *q = &c->nics[r];
        q->rem -= x;
        if (--q->cnt > 0)
            heap_push(m, q->rem > 0 ? q->rem / q->cnt : 0, r, ++q->hver);
    }
}

/* One progressive filling over the region's flows; returns 1 when the
 * region has to grow (the outside resources to add are in X). */
static int solve_region(cl_cluster *c)
{
    cl_mm *m = c->mm;
    uint32_t ep = next_epoch(c), n2 = 2 * (uint32_t)c->n;
    /* the flows through the region, and the resources they also cross */
    m->nF = m->nB = m->nh = m->nX = 0;
    for (size_t a = 0; a < m->nS; a++)
        c->nics[m->S[a]].s_stamp = ep;
    for (size_t a = 0; a < m->nS; a++) {
        nic *q = &c->nics[m->S[a]];
        for (uint32_t f = 0; f < q->n_act; f++) {
            uint32_t k = q->act[f];
            if (c->slots[k].mm_stamp != ep) {
                c->slots[k].mm_stamp = ep;
                c->slots[k].mm_fixed = 0;
                push_u32(&m->F, &m->nF, &m->capF, k);
            }
        }
    }
    for (size_t a = 0; a < m->nF; a++)
        for (int d = 0; d < 2; d++) {
            if (!c->slots[m->F[a]].in_res[d])
                continue;
            uint32_t r = flow_res(c, m->F[a], d);
            nic *q = &c->nics[r];
            if (q->s_stamp != ep && q->b_stamp != ep) {
                q->b_stamp = ep;
                push_u32(&m->B, &m->nB, &m->capB, r);
            }
        }
    for (size_t a = 0; a < m->nS; a++) {
        nic *q = &c->nics[m->S[a]];
        q->rem = res_cap(c, m->S[a]);
        q->cnt = q->n_act;
        q->max_frozen = 0;
        if (q->cnt > 0)
            heap_push(m, q->rem / q->cnt, m->S[a], ++q->hver);
    }
    for (size_t a = 0; a < m->nB; a++) {
        uint32_t r = m->B[a];
        nic *q = &c->nics[r];
        double used = 0, mx = 0;
        uint32_t cnt = 0;
        for (uint32_t f = 0; f < q->n_act; f++) {
            const msg_slot *s = &c->slots[q->act[f]];
            if (s->mm_stamp == ep) {
                cnt++;
            } else {
                used += s->rate;
                if (s->rate > mx)
                    mx = s->rate;
            }
        }
        q->rem = res_cap(c, r) - used;
        q->cnt = cnt;
        q->max_frozen = mx;
        q->frozen = q->n_act - cnt;
        if (!(q->rem > 0)) {   /* saturated by frozen flows: solve it too */
            q->x_stamp = ep;
            push_u32(&m->X, &m->nX, &m->capX, r);
        }
        heap_push(m, q->rem > 0 ? q->rem / cnt : 0, r, ++q->hver);
    }
    if (m->nX > 0)
        return 1;
    for (size_t a = 0; a < m->nF; a++) {   /* caps that can bind */
        const msg_slot *s = &c->slots[m->F[a]];
        double room = res_cap(c, flow_res(c, m->F[a], 0));
        if (s->in_res[1] && res_cap(c, flow_res(c, m->F[a], 1)) < room)
            room = res_cap(c, flow_res(c, m->F[a], 1));
        if (s->bw < room)
            heap_push(m, s->bw, n2 + m->F[a], 0);
    }
    /* raise the level: the smallest share saturates its resource next;
     * the level never goes down, so rounding cannot give a rate of 0 */
    double level = 0;
    size_t unfixed = m->nF;
    while (unfixed > 0 && m->nh > 0) {
        mm_ent e = heap_pop(m);
        double x = e.share > level ? e.share : level;
        if (e.id >= n2) {   /* a flow's cap */
            uint32_t k = e.id - n2;
            if (c->slots[k].mm_fixed)
                continue;
            level = x;
            fix_flow(c, k, c->slots[k].bw, (int32_t)(2 * (uint32_t)c->slots[k].msg.from),
                     UINT32_MAX);
            unfixed--;
            continue;
        }
        nic *q = &c->nics[e.id];
        if (e.ver != q->hver || q->cnt == 0)
            continue;
        level = x;
        for (uint32_t f = 0; f < q->n_act && q->cnt > 0; f++) {
            uint32_t k = q->act[f];
            if (c->slots[k].mm_stamp != ep || c->slots[k].mm_fixed)
                continue;
            q->cnt--;
            q->rem -= x;
            fix_flow(c, k, x, (int32_t)e.id, e.id);
            unfixed--;
        }
        q->cnt = 0;
    }
    assert(unfixed == 0);
    /* an outside resource joins when a flow of the region changed its
     * rate there, or is held there below a frozen flow (one without
     * frozen flows is solved exactly as if it were in S already) */
    for (size_t a = 0; a < m->nF; a++) {
        const msg_slot *s = &c->slots[m->F[a]];
        for (int d = 0; d < 2; d++) {
            if (!s->in_res[d])
                continue;
            uint32_t r = flow_res(c, m->F[a], d);
            nic *q = &c->nics[r];
            if (q->b_stamp != ep || q->x_stamp == ep || q->frozen == 0)
                continue;
            if (s->mm_rate != s->rate
                || (s->mm_owner == (int32_t)r && s->mm_rate < q->max_frozen)) {
                q->x_stamp = ep;
                push_u32(&m->X, &m->nX, &m->capX, r);
            }
        }
    }
    return m->nX > 0;
}

/* Re-solves after the flows of the resources in S changed (S filled by
 * region_add under the current epoch), commits the rates that changed and
 * reschedules the completion events that moved. */
static void solve(cl_cluster *c)
{
    cl_mm *m = c->mm;
    while (solve_region(c))
        for (size_t a = 0; a < m->nX; a++)
            push_u32(&m->S, &m->nS, &m->capS, m->X[a]);   /* not in S: x_stamp */
    double now = sim_engine_now(c->eng);
    for (size_t a = 0; a < m->nF; a++) {
        msg_slot *s = &c->slots[m->F[a]];
        if (s->mm_rate != s->rate) {
            if (s->rate > 0) {
                s->rem -= s->rate * (now - s->t_last);
                if (s->rem < 0)
                    s->rem = 0;
            }
            s->t_last = now;
            s->rate = s->mm_rate;
            mark_dirty(c, s->owner);
            mark_dirty(c, s->mm_owner);
        } else if (s->mm_owner != s->owner) {
            mark_dirty(c, s->owner);
            mark_dirty(c, s->mm_owner);
        }
        s->owner = s->mm_owner;
    }
    m->nS = 0;
    next_epoch(c);   /* S is empty again */
}

/* The completion event of resource r: the earliest end of its flows. */
static void reschedule(cl_cluster *c, uint32_t r)
{
    nic *q = &c->nics[r];
    double first = INFINITY;
    for (uint32_t f = 0; f < q->n_act; f++) {
        const msg_slot *s = &c->slots[q->act[f]];
        if (s->owner != (int32_t)r)
            continue;
        double t = s->t_last + s->rem / s->rate;
        if (t < first)
            first = t;
    }
    if (first == q->sched_t)
        return;   /* the pending event stands */
    q->version = (q->version + 1) & VER_MASK;
    q->sched_t = first;
    if (first < INFINITY)
        cl_i_schedule(c, first, CL_EV_NIC, (int)(r >> 1), (q->version << 1) | (r & 1));
}

static void reschedule_dirty(cl_cluster *c)
{
    cl_mm *m = c->mm;
    /* the list may grow while it is walked: reschedule adds nothing */
    for (size_t a = 0; a < m->nD; a++)
        reschedule(c, m->D[a]);
    m->nD = 0;
    if (++m->d_epoch == 0) {
        for (size_t r = 0; r < 2 * (size_t)c->n; r++)
            c->nics[r].d_stamp = 0;
        m->d_epoch = 1;
    }
}

/* ---- flows through resources ---- */

static void res_join(cl_cluster *c, uint32_t r, uint32_t k, int d)
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
    region_add(c, r);
}

/* Takes flow k out of resource r (swap with the last: the order of act is
 * the history of joins and leaves, deterministic). */
static void res_leave(cl_cluster *c, uint32_t r, uint32_t k, int d)
{
    nic *q = &c->nics[r];
    uint32_t p = c->slots[k].pos[d], last = q->act[--q->n_act];
    assert(q->act[p] == k);
    if (p != q->n_act) {
        q->act[p] = last;
        msg_slot *l = &c->slots[last];
        l->pos[flow_res(c, last, 0) == r ? 0 : 1] = p;
    }
    c->slots[k].in_res[d] = 0;
    if (d == 0 && q->n_act == 0)
        c->nodes[r >> 1].st.uplink_busy_s += sim_engine_now(c->eng) - q->busy_since;
    region_add(c, r);
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
    const cl_link_class *cls = &c->classes[s->cls];
    if (cl_i_in_outage(cls, now) || c->nodes[to].n_down > 0)
        s->lost = 1;
    /* propagation: latency and jitter, never reordering the link */
    s->lat = cls->latency_s;
    if (cls->jitter != CL_JITTER_NONE)
        s->lat += cl_i_draw_jitter(cls, c->nodes[from].rng_link);
    cl_i_account(c, from);
    res_join(c, 2 * (uint32_t)from, k, 0);
    if (!s->lost) {
        s->rx_start = now + s->lat;
        cl_i_account(c, to);
        c->nodes[to].rx_active++;
        s->rx_counted = 1;
        res_join(c, 2 * (uint32_t)to + 1, k, 1);
    }
}

/* Takes flow k out of the resources it crosses (region seeded). */
static void flow_stop(cl_cluster *c, uint32_t k)
{
    msg_slot *s = &c->slots[k];
    mark_dirty(c, s->owner);
    if (s->in_res[0]) {
        cl_i_account(c, s->msg.from);
        res_leave(c, flow_res(c, k, 0), k, 0);
    }
    if (s->in_res[1])
        res_leave(c, flow_res(c, k, 1), k, 1);
    s->owner = -1;
}

/* Solves what changed: at once when the region starts small (a handful
 * of flows, as on a ring), else once for every change of this instant,
 * at a flush event at now on the cluster's never-cancelled target (a
 * star's hub: the n flows that start or end together cost one solve, not
 * n).  Nothing moves in no time, so the rates are needed only once the
 * clock moves on. */
#define EAGER_FLOWS 16

static void resolve(cl_cluster *c)
{
    cl_mm *m = c->mm;
    if (m->nS == 0 && m->nD == 0)
        return;
    size_t load = 0;
    for (size_t a = 0; a < m->nS && load <= EAGER_FLOWS; a++)
        load += c->nics[m->S[a]].n_act;
    if (load > EAGER_FLOWS) {
        if (!m->flush_pending) {
            m->flush_pending = 1;
            if (sim_engine_schedule_at(c->eng, sim_engine_now(c->eng), CL_EV_NIC,
                                       (uint32_t)c->n, 0) != 0)
                sim_die_oom();
            c->pending++;
        }
        return;
    }
    if (m->nS > 0)
        solve(c);
    reschedule_dirty(c);
}

void cl_i_fair_flush(cl_cluster *c)
{
    cl_mm *m = c->mm;
    m->flush_pending = 0;
    if (m->nS > 0)
        solve(c);
    reschedule_dirty(c);
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

/* Message k leaves its link's queue (finished or lost); the next one of
 * the link starts when k was the one in the network. */
static void link_leave(cl_cluster *c, uint32_t k)
{
    pairq *pq = link_of(c, k);
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
        link_leave(c, k);
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
    if (s->lost) {
        link_leave(c, k);
        cl_i_drop(c, k);
        return;
    }
    double at = now + s->lat;
    pairq *pq = link_of(c, k);
    if (c->classes[s->cls].jitter != CL_JITTER_NONE && !c->cfg.reorder) {
        if (at < pq->last_deliver)
            at = pq->last_deliver;
        pq->last_deliver = at;
    }
    link_leave(c, k);
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
    mark_dirty(c, (int32_t)r);
    /* every flow it owns whose end (the expression that scheduled this
     * event) is not after now ends now, in the order of act */
    m->ndone = 0;
    for (uint32_t f = 0; f < q->n_act; f++) {
        const msg_slot *s = &c->slots[q->act[f]];
        if (s->owner == (int32_t)r && s->t_last + s->rem / s->rate <= now)
            push_u32(&m->done, &m->ndone, &m->capdone, q->act[f]);
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
        const msg_slot *s = &c->slots[q->act[a]];
        double dt = now - s->t_last;
        double rem = s->rem - s->rate * (dt > 0 ? dt : 0);
        left += rem > 0 ? rem : 0;
        if (nd->upq_n == 1 && q->n_act == 1 && s->rate > 0)
            return left / s->rate;
    }
    return left / nd->up_cap;
}
