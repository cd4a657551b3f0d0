/* cl_net_fair.c -- the fair-sharing (processor sharing) NIC of the
 * cluster's network: per-link queues at each uplink and downlink, and the
 * water-filling of a NIC's capacity between the links active in it.  It does
 * not classify links, draw jitter or loss, or deliver messages (cl_net.c).
 *
 * The messages of one link pass a NIC one after the other, and the links
 * active in a NIC share its capacity by water-filling (each gets an equal
 * share, capped by its link bandwidth, the unused part going to the
 * others); whenever the set changes the remaining bytes are brought up to
 * date and the next completion rescheduled, older completion events being
 * dropped by a version number (lazy cancellation).
 */
#include "cl_internal.h"

#include <assert.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#define VER_MASK 0x7fffffffu

static double min2(double a, double b) { return a < b ? a : b; }

static nic *nic_of(cl_cluster *c, int i, int dir)
{
    return dir ? &c->nodes[i].down : &c->nodes[i].up;
}

/* Brings the remaining bytes of node i's NIC up to now. */
static void nic_advance(cl_cluster *c, int i, int dir)
{
    nic *q = nic_of(c, i, dir);
    double now = sim_engine_now(c->eng), dt = now - q->last_t;
    if (q->n_act > 0 && dt > 0) {
        for (size_t a = 0; a < q->n_act; a++) {
            msg_slot *s = &c->slots[q->act[a]];
            if (dir)
                s->rem_down -= s->rate_down * dt;
            else
                s->rem_up -= s->rate_up * dt;
        }
        if (!dir)
            c->nodes[i].st.uplink_busy_s += dt;
    }
    q->last_t = now;
}

static int cmp_wf(const void *a, const void *b)
{
    const struct wf *x = a, *y = b;
    if (x->bw != y->bw)
        return x->bw < y->bw ? -1 : 1;
    return x->k < y->k ? -1 : x->k > y->k;
}

/* Water-filling: the active transfers get equal shares of the capacity,
 * each capped by its link bandwidth; then the next completion. */
static void nic_reschedule(cl_cluster *c, int i, int dir)
{
    nic *q = nic_of(c, i, dir);
    q->version = (q->version + 1) & VER_MASK;
    if (q->n_act == 0)
        return;
    double cap = dir ? c->nodes[i].down_cap : c->nodes[i].up_cap;
    size_t k = q->n_act;
    int equal = 1;
    for (size_t a = 1; a < k; a++)
        equal &= c->slots[q->act[a]].bw == c->slots[q->act[0]].bw;
    if (equal) {
        double r = min2(cap / (double)k, c->slots[q->act[0]].bw);
        for (size_t a = 0; a < k; a++)
            *(dir ? &c->slots[q->act[a]].rate_down : &c->slots[q->act[a]].rate_up) = r;
    } else {
        if (k > c->wf_cap) {
            struct wf *w = realloc(c->wf, k * sizeof *w);
            if (!w)
                sim_die_oom();
            c->wf = w;
            c->wf_cap = k;
        }
        for (size_t a = 0; a < k; a++)
            c->wf[a] = (struct wf){ c->slots[q->act[a]].bw, q->act[a] };
        qsort(c->wf, k, sizeof *c->wf, cmp_wf);
        double left = cap;
        for (size_t a = 0; a < k; a++) {
            double r = min2(left / (double)(k - a), c->wf[a].bw);
            left -= r;
            *(dir ? &c->slots[c->wf[a].k].rate_down : &c->slots[c->wf[a].k].rate_up) = r;
        }
    }
    double first = INFINITY;
    for (size_t a = 0; a < k; a++) {
        const msg_slot *s = &c->slots[q->act[a]];
        double rem = dir ? s->rem_down : s->rem_up, rate = dir ? s->rate_down : s->rate_up;
        double t = (rem > 0 ? rem : 0) / rate;
        if (t < first)
            first = t;
    }
    cl_i_schedule(c, sim_engine_now(c->eng) + first, CL_EV_NIC, i,
                  (q->version << 1) | (uint32_t)dir);
}

static void nic_join(cl_cluster *c, int i, int dir, uint32_t k)
{
    nic *q = nic_of(c, i, dir);
    cl_i_account(c, i);
    nic_advance(c, i, dir);
    if (q->n_act == q->cap_act) {
        size_t cap = q->cap_act ? 2 * q->cap_act : 8;
        uint32_t *a = realloc(q->act, cap * sizeof *a);
        if (!a)
            sim_die_oom();
        q->act = a;
        q->cap_act = cap;
    }
    q->act[q->n_act++] = k;
    if (dir)
        c->slots[k].in_down = 1;
    else
        c->slots[k].in_up = 1;
    nic_reschedule(c, i, dir);
}

static void nic_remove(cl_cluster *c, int i, int dir, uint32_t k)
{
    nic *q = nic_of(c, i, dir);
    cl_i_account(c, i);
    nic_advance(c, i, dir);
    size_t a = 0;
    while (a < q->n_act && q->act[a] != k)
        a++;
    assert(a < q->n_act);
    memmove(q->act + a, q->act + a + 1, (q->n_act - a - 1) * sizeof *q->act);
    q->n_act--;
    if (dir)
        c->slots[k].in_down = 0;
    else
        c->slots[k].in_up = 0;
    nic_reschedule(c, i, dir);
}

/* ---- per-link queues at fair NICs ---- */

static void stage_start(cl_cluster *c, int dir, uint32_t k)
{
    msg_slot *s = &c->slots[k];
    if (dir) {
        s->rem_down = s->msg.bytes;
        nic_join(c, s->msg.to, 1, k);
        return;
    }
    s->up_start = sim_engine_now(c->eng);
    s->rem_up = s->msg.bytes;
    if (cl_i_in_outage(&c->classes[s->cls], s->up_start))
        s->lost = 1;
    nic_join(c, s->msg.from, 0, k);
    cl_i_schedule_arrive(c, k);
}

static pairq *stage_pair(cl_cluster *c, int dir, uint32_t k)
{
    const msg_slot *s = &c->slots[k];
    return dir ? cl_i_pair_get(&c->nodes[s->msg.to].downp, s->msg.from)
               : cl_i_pair_get(&c->nodes[s->msg.from].upp, s->msg.to);
}

static uint32_t *next_of(cl_cluster *c, int dir, uint32_t k)
{
    return dir ? &c->slots[k].next_down : &c->slots[k].next_up;
}

/* Message k joins its link's queue at the sender's uplink (dir 0) or the
 * receiver's downlink (dir 1); it starts at once when the link is free. */
void cl_i_fair_enter(cl_cluster *c, int dir, uint32_t k)
{
    pairq *pq = stage_pair(c, dir, k);
    *next_of(c, dir, k) = NO_SLOT;
    if (dir) {
        c->slots[k].queued_down = 1;
    } else {
        c->slots[k].queued_up = 1;
        cl_i_upq_fair(c, k, +1);
    }
    if (pq->head == NO_SLOT) {
        pq->head = pq->tail = k;
        stage_start(c, dir, k);
    } else {
        *next_of(c, dir, pq->tail) = k;
        pq->tail = k;
    }
}

/* Message k leaves its link's queue (finished or lost); the next one of
 * the link starts when k was the one in the NIC. */
static void stage_leave(cl_cluster *c, int dir, uint32_t k)
{
    pairq *pq = stage_pair(c, dir, k);
    uint32_t nxt = *next_of(c, dir, k);
    if (dir) {
        c->slots[k].queued_down = 0;
    } else {
        c->slots[k].queued_up = 0;
        cl_i_upq_fair(c, k, -1);
    }
    if (pq->head == k) {
        pq->head = nxt;
        if (nxt == NO_SLOT)
            pq->tail = NO_SLOT;
        else if (!c->slots[nxt].dead)   /* a lost one is about to be dropped */
            stage_start(c, dir, nxt);
        return;
    }
    uint32_t p = pq->head;
    while (*next_of(c, dir, p) != k)
        p = *next_of(c, dir, p);
    *next_of(c, dir, p) = nxt;
    if (pq->tail == k)
        pq->tail = p;
}

/* Takes message k out of every NIC and queue it is in. */
void cl_i_fair_leave(cl_cluster *c, uint32_t k)
{
    msg_slot *s = &c->slots[k];
    if (s->in_up)
        nic_remove(c, s->msg.from, 0, k);
    if (s->queued_up)
        stage_leave(c, 0, k);
    if (s->in_down)
        nic_remove(c, s->msg.to, 1, k);
    if (s->queued_down)
        stage_leave(c, 1, k);
}


void cl_i_on_nic(cl_cluster *c, int i, uint32_t data)
{
    int dir = (int)(data & 1u);
    nic *q = nic_of(c, i, dir);
    if ((data >> 1) != q->version)
        return;   /* superseded */
    double now = sim_engine_now(c->eng);
    cl_i_account(c, i);
    nic_advance(c, i, dir);
    /* every transfer with (up to rounding) nothing left ends now, in
     * joining order: nothing left but a residue of 1e-9 of its bytes, or
     * a remaining time below the clock's resolution at now (now + rem /
     * rate == now).  Without the second test a residue whose time rounds
     * to now is rescheduled at now for ever: dt stays 0 and nothing
     * drains (the livelock of issue 15 once now is about 10^7 transfer
     * times).  A transfer that passes neither test has a completion time
     * after now, so every event here ends a transfer or moves the clock:
     * the fair NIC cannot stall at any absolute time. */
    size_t keep = 0, n_done = 0;
    uint32_t done[64];
    for (size_t a = 0; a < q->n_act; a++) {
        msg_slot *s = &c->slots[q->act[a]];
        double rem = dir ? s->rem_down : s->rem_up, rate = dir ? s->rate_down : s->rate_up;
        if ((rem <= 1e-9 * s->msg.bytes || now + rem / rate <= now) && n_done < 64) {
            done[n_done++] = q->act[a];
            if (dir)
                s->in_down = 0;
            else
                s->in_up = 0;
        } else {
            q->act[keep++] = q->act[a];
        }
    }
    q->n_act = keep;
    nic_reschedule(c, i, dir);
    for (size_t d = 0; d < n_done; d++) {
        uint32_t k = done[d];
        msg_slot *s = &c->slots[k];
        if (dir) {
            s->rx_done = now;
            stage_leave(c, 1, k);
            cl_i_try_deliver(c, k);
        } else {
            s->up_end = now;
            s->up_known = 1;
            cl_i_trace(c, s->msg.from, "send", s->up_start, now, s->msg.to, s->msg.bytes);
            stage_leave(c, 0, k);
            if (s->lost && !s->ev_pending)
                cl_i_drop(c, k);   /* its first bit already reached the receiver */
            else
                cl_i_try_deliver(c, k);
        }
    }
}

/* Seconds until node i's fair uplink has sent what it holds, without
 * bringing its transfers up to date (a query changes no state): exact for
 * one message alone in the uplink (its rate is fixed while nothing
 * joins), otherwise the bytes left of the active transfers at the whole
 * capacity, a lower bound. */
double cl_i_fair_up_idle_s(const cl_cluster *c, int i)
{
    const node *nd = &c->nodes[i];
    const nic *q = &nd->up;
    double dt = sim_engine_now(c->eng) - q->last_t, left = 0;
    if (nd->upq_n == 0 || q->n_act == 0)
        return 0;
    for (size_t a = 0; a < q->n_act; a++) {
        const msg_slot *s = &c->slots[q->act[a]];
        double rem = s->rem_up - s->rate_up * (dt > 0 ? dt : 0);
        left += rem > 0 ? rem : 0;
        if (nd->upq_n == 1 && q->n_act == 1 && s->rate_up > 0)
            return left / s->rate_up;
    }
    return left / nd->up_cap;
}
