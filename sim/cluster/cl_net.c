/* cl_net.c -- the network of the cluster: message slots, each node's
 * uplink and downlink, cut-through delivery, and what a departing node
 * takes with it.  Two disciplines per NIC.  FIFO: a NIC serves one
 * transfer at a time in order at min(NIC capacity, link bandwidth); the
 * times are computed when a message is sent (uplink) or its first bit
 * arrives (downlink), with no event of its own.  Fair (processor sharing):
 * the k transfers in a NIC each progress at min(capacity / k, link
 * bandwidth); whenever the set changes the remaining bytes are brought up
 * to date and the next completion is rescheduled, older completion events
 * being dropped by a version number (lazy cancellation).  In both, a
 * message is never received before its last bit can have arrived (last
 * bit sent + latency).  It does not decide what is sent.
 */
#include "cl_internal.h"

#include <assert.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#define VER_MASK 0x7fffffffu

int cl_i_net_init(cl_cluster *c)
{
    (void)c;
    return 0;
}

void cl_i_net_fini(cl_cluster *c)
{
    for (int i = 0; i < c->n; i++) {
        free(c->nodes[i].up.act);
        free(c->nodes[i].down.act);
    }
}

static uint32_t slot_alloc(cl_cluster *c)
{
    if (c->free_slot == NO_SLOT) {
        uint32_t old = c->n_slots, grow = old ? old : 64;
        msg_slot *s = realloc(c->slots, (size_t)(old + grow) * sizeof *s);
        if (!s)
            cl_i_die_oom();
        c->slots = s;
        c->n_slots = old + grow;
        /* chain the new slots in increasing order so reuse is deterministic */
        for (uint32_t k = old; k < old + grow; k++) {
            memset(&s[k], 0, sizeof s[k]);
            s[k].next_free = (k + 1 < old + grow) ? k + 1 : NO_SLOT;
        }
        c->free_slot = old;
    }
    uint32_t k = c->free_slot;
    c->free_slot = c->slots[k].next_free;
    memset(&c->slots[k], 0, sizeof c->slots[k]);
    c->slots[k].live = 1;
    c->slots[k].rx_done = -1;
    return k;
}

static void slot_free(cl_cluster *c, uint32_t k)
{
    c->slots[k].live = 0;
    c->slots[k].msg.payload = NULL;
    c->slots[k].next_free = c->free_slot;
    c->free_slot = k;
}

static double link_rate(const cl_cluster *c, double cap)
{
    return cap < c->cfg.bandwidth_Bps ? cap : c->cfg.bandwidth_Bps;
}

/* ---- fair NICs ---- */

static nic *nic_of(cl_cluster *c, int i, int dir)
{
    return dir ? &c->nodes[i].down : &c->nodes[i].up;
}

static double *rem_of(msg_slot *s, int dir)
{
    return dir ? &s->rem_down : &s->rem_up;
}

/* Brings the remaining bytes of node i's NIC up to now. */
static void nic_advance(cl_cluster *c, int i, int dir)
{
    nic *q = nic_of(c, i, dir);
    double now = sim_engine_now(c->eng), dt = now - q->last_t;
    if (q->n_act > 0 && dt > 0) {
        for (size_t a = 0; a < q->n_act; a++)
            *rem_of(&c->slots[q->act[a]], dir) -= q->rate * dt;
        if (!dir)
            c->nodes[i].st.uplink_busy_s += dt;
    }
    q->last_t = now;
}

static void nic_reschedule(cl_cluster *c, int i, int dir)
{
    nic *q = nic_of(c, i, dir);
    q->version = (q->version + 1) & VER_MASK;
    if (q->n_act == 0)
        return;
    double cap = dir ? c->nodes[i].down_cap : c->nodes[i].up_cap;
    q->rate = link_rate(c, cap / (double)q->n_act);
    double least = INFINITY;
    for (size_t a = 0; a < q->n_act; a++) {
        double r = *rem_of(&c->slots[q->act[a]], dir);
        if (r < least)
            least = r;
    }
    if (least < 0)
        least = 0;
    cl_i_schedule(c, sim_engine_now(c->eng) + least / q->rate, CL_EV_NIC, i,
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
            cl_i_die_oom();
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

/* Both stages known: deliver at the later of reception and last bit. */
static void try_deliver(cl_cluster *c, uint32_t k)
{
    msg_slot *s = &c->slots[k];
    if (s->rx_done < 0 || !s->up_known || s->ev_pending)
        return;
    double at = s->up_end + s->lat;
    if (s->rx_done > at)
        at = s->rx_done;
    s->ev_pending = 1;
    cl_i_schedule(c, at, CL_EV_DELIVER, s->msg.to, k);
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
     * joining order */
    size_t keep = 0, n_done = 0;
    uint32_t done[64];
    for (size_t a = 0; a < q->n_act; a++) {
        msg_slot *s = &c->slots[q->act[a]];
        if (*rem_of(s, dir) <= 1e-9 * s->msg.bytes && n_done < 64)
            done[n_done++] = q->act[a];
        else
            q->act[keep++] = q->act[a];
    }
    q->n_act = keep;
    nic_reschedule(c, i, dir);
    for (size_t d = 0; d < n_done; d++) {
        msg_slot *s = &c->slots[done[d]];
        if (dir) {
            s->in_down = 0;
            s->rx_done = now;
        } else {
            s->in_up = 0;
            s->up_end = now;
            s->up_known = 1;
            cl_i_trace(c, s->msg.from, "send", s->up_start, now, s->msg.to, s->msg.bytes);
        }
        try_deliver(c, done[d]);
    }
}

/* ---- messages ---- */

/* Drops message k now (nothing refers to it any more but the NICs). */
static void drop(cl_cluster *c, uint32_t k)
{
    msg_slot *s = &c->slots[k];
    if (s->in_up)
        nic_remove(c, s->msg.from, 0, k);
    if (s->in_down)
        nic_remove(c, s->msg.to, 1, k);
    if (s->rx_counted) {
        cl_i_account(c, s->msg.to);
        c->nodes[s->msg.to].rx_active--;
    }
    c->nodes[s->msg.from].st.msgs_lost++;
    cl_i_trace(c, s->msg.from, "lost", s->msg.sent_at, sim_engine_now(c->eng), s->msg.to,
               s->msg.bytes);
    if (s->msg.payload)
        cl_pool_put(&c->pool, s->msg.payload);
    slot_free(c, k);
    c->in_flight--;
}

/* Message k is lost: dropped at once, or at its pending event. */
static void kill(cl_cluster *c, uint32_t k)
{
    msg_slot *s = &c->slots[k];
    if (s->ev_pending) {
        s->dead = 1;
        if (s->in_up)
            nic_remove(c, s->msg.from, 0, k);
        if (s->in_down)
            nic_remove(c, s->msg.to, 1, k);
    } else {
        drop(c, k);
    }
}

void cl_send(cl_cluster *c, int from, int to, uint32_t tag, uint64_t round,
             cl_buf *payload, double bytes)
{
    assert(from != to && from >= 0 && to >= 0 && from < c->n && to < c->n);
    double now = sim_engine_now(c->eng);
    node *src = &c->nodes[from];
    if (src->n_down > 0) {   /* a down node sends nothing */
        src->st.msgs_lost++;
        cl_i_trace(c, from, "lost", now, now, to, bytes);
        return;
    }
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
    s->lat = c->cfg.latency_s;
    src->st.bytes_sent += bytes;
    src->st.msgs_sent++;
    c->in_flight++;

    if (c->cfg.discipline == CL_NIC_FIFO || bytes <= 0) {
        double ser = bytes / link_rate(c, src->up_cap);
        double up_start = src->up_free > now ? src->up_free : now;
        if (c->cfg.discipline != CL_NIC_FIFO)
            up_start = now;
        cl_i_account(c, from);
        if (c->cfg.discipline == CL_NIC_FIFO)
            src->up_free = up_start + ser;
        src->st.uplink_busy_s += ser;
        s->up_start = up_start;
        s->up_end = up_start + ser;
        s->up_known = 1;
        cl_i_trace(c, from, "send", up_start, s->up_end, to, bytes);
    } else {
        s->up_start = now;
        s->rem_up = bytes;
        nic_join(c, from, 0, k);
    }
    s->ev_pending = 1;
    cl_i_schedule(c, s->up_start + s->lat, CL_EV_ARRIVE, to, k);
}

/* First bit at the receiver's downlink. */
void cl_i_on_arrive(cl_cluster *c, uint32_t k)
{
    msg_slot *s = &c->slots[k];
    s->ev_pending = 0;
    int j = s->msg.to;
    node *dst = &c->nodes[j];
    if (s->dead || dst->n_down > 0) {
        drop(c, k);
        return;
    }
    double now = sim_engine_now(c->eng);
    s->rx_start = now;
    cl_i_account(c, j);
    dst->rx_active++;
    s->rx_counted = 1;
    if (c->cfg.discipline == CL_NIC_FIFO) {
        /* queue behind what it is receiving; cut-through */
        double rx_start = dst->down_free > now ? dst->down_free : now;
        double rx_end = rx_start + s->msg.bytes / link_rate(c, dst->down_cap);
        double last_bit = s->up_end + s->lat;
        if (rx_end < last_bit)
            rx_end = last_bit;
        dst->down_free = rx_end;
        s->ev_pending = 1;
        cl_i_schedule(c, rx_end, CL_EV_DELIVER, j, k);
    } else if (s->msg.bytes <= 0) {
        s->rx_done = now;
        try_deliver(c, k);
    } else {
        s->rem_down = s->msg.bytes;
        nic_join(c, j, 1, k);
    }
}

void cl_i_on_deliver(cl_cluster *c, uint32_t k)
{
    msg_slot *s = &c->slots[k];
    s->ev_pending = 0;
    if (s->dead || c->nodes[s->msg.to].n_down > 0) {
        drop(c, k);
        return;
    }
    cl_msg m = s->msg;
    double rx_start = s->rx_start;
    slot_free(c, k);
    c->in_flight--;
    node *dst = &c->nodes[m.to];
    cl_i_account(c, m.to);
    dst->rx_active--;
    dst->st.bytes_received += m.bytes;
    dst->st.msgs_received++;
    cl_i_trace(c, m.to, "recv", rx_start, sim_engine_now(c->eng), m.from, m.bytes);
    c->cb.on_message(c->cb.ctx, m.to, &m);
    if (m.payload)
        cl_pool_put(&c->pool, m.payload);
}

void cl_i_net_node_down(cl_cluster *c, int i)
{
    node *nd = &c->nodes[i];
    double now = sim_engine_now(c->eng);
    /* messages to it: their events were cancelled with its target */
    for (uint32_t k = 0; k < c->n_slots; k++) {
        msg_slot *s = &c->slots[k];
        if (!s->live || s->msg.to != i)
            continue;
        s->ev_pending = 0;
        s->rx_counted = 0;
        drop(c, k);
    }
    nd->rx_active = 0;
    /* messages from it: lost unless sent and the policy keeps them */
    for (uint32_t k = 0; k < c->n_slots; k++) {
        msg_slot *s = &c->slots[k];
        if (!s->live || s->dead || s->msg.from != i)
            continue;
        int sent = s->up_known && s->up_end <= now;
        if (c->cfg.msg_policy == CL_MSG_DROP || !sent)
            kill(c, k);
    }
    if (nd->up_free > now)
        nd->up_free = now;
    if (nd->down_free > now)
        nd->down_free = now;
}
