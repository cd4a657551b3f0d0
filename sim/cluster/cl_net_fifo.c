/* cl_net_fifo.c -- the FIFO downlink with one event per message: a
 * message is booked in its receiver's downlink queue when it is sent, and
 * its delivery is the only event it has.  A FIFO downlink serves messages
 * in the order their first bits arrive (rx_start; ties in the order they
 * were sent, tseq), so a message's delivery is known once every message
 * whose first bit arrives before it is known.  A message sent later whose
 * first bit arrives earlier (a neighbour's first transfer overtaking one's
 * second, held in its sender's uplink) is inserted before it, and the
 * deliveries it delays are moved: each slot's delivery has an engine
 * target of its own, so moving one is a cancellation and a new event.
 * What the first bit's own event did is done without it: the receiver's
 * rx_active counts an arrival at its first accounting at or after it,
 * accounted at the arrival's instant (cl_i_dq_count), so nodes.csv is the
 * same as with an event at the arrival.  A message lost on the wire, or
 * sent to a node that is down, keeps an arrival event (cl_net.c; it is
 * dropped there, or booked then if its receiver is back), and so does one
 * whose sender goes down before its first bit arrives (cl_i_dq_unbook).
 * The uplink, loss, jitter and what a departing node takes with it are
 * cl_net.c's.
 */
#include "cl_internal.h"

#include <assert.h>

static double min2(double a, double b) { return a < b ? a : b; }

/* Its delivery after its predecessor in the queue frees the downlink at
 * prev: cut-through, never before its last bit can have arrived. */
static double dq_rx_end(const cl_cluster *c, const node *nd, const msg_slot *s, double prev)
{
    double start = prev > s->rx_start ? prev : s->rx_start;
    double rx_end = start + s->msg.bytes / min2(nd->down_cap, c->classes[s->cls].bandwidth_Bps);
    double last_bit = s->up_end + s->lat;
    return rx_end < last_bit ? last_bit : rx_end;
}

static void dq_schedule(cl_cluster *c, uint32_t k)
{
    msg_slot *s = &c->slots[k];
    if (sim_engine_schedule_at(c->eng, s->rx_end, CL_EV_DELIVER, c->slot_target0 + k, k) != 0)
        sim_die_oom();
    c->pending++;
    c->nodes[s->msg.to].pending++;
    s->ev_pending = 1;
}

/* Cancels message k's delivery event; `counted`: still counted as pending
 * (not when its receiver's going down has discounted it already). */
void cl_i_dq_cancel(cl_cluster *c, uint32_t k, int counted)
{
    msg_slot *s = &c->slots[k];
    sim_engine_cancel_target(c->eng, c->slot_target0 + k);
    s->ev_pending = 0;
    if (counted) {
        c->pending--;
        c->nodes[s->msg.to].pending--;
        sim_engine_note_stale(c->eng, 1);
    }
}

/* The downlink frees at prev before message m: m and those after it are
 * delivered again from there, until one's delivery does not change. */
static void dq_reflow(cl_cluster *c, const node *nd, uint32_t m, double prev)
{
    while (m != NO_SLOT) {
        msg_slot *s = &c->slots[m];
        double e = dq_rx_end(c, nd, s, prev);
        if (e == s->rx_end)
            return;
        s->rx_end = e;
        cl_i_dq_cancel(c, m, 1);
        dq_schedule(c, m);
        prev = e;
        m = s->dq_next;
    }
}

/* a's first bit comes after b's (or with it, sent after it) */
static int dq_after(const msg_slot *a, const msg_slot *b)
{
    return a->rx_start > b->rx_start || (a->rx_start == b->rx_start && a->tseq > b->tseq);
}

/* Books message k (rx_start and tseq set) in its receiver's queue and
 * schedules its delivery. */
void cl_i_dq_insert(cl_cluster *c, uint32_t k)
{
    msg_slot *s = &c->slots[k];
    node *nd = &c->nodes[s->msg.to];
    uint32_t p = nd->dq_tail;
    while (p != NO_SLOT && dq_after(&c->slots[p], s))
        p = c->slots[p].dq_prev;
    uint32_t nx = p == NO_SLOT ? nd->dq_head : c->slots[p].dq_next;
    s->dq_prev = p;
    s->dq_next = nx;
    if (p == NO_SLOT)
        nd->dq_head = k;
    else
        c->slots[p].dq_next = k;
    if (nx == NO_SLOT)
        nd->dq_tail = k;
    else
        c->slots[nx].dq_prev = k;
    s->in_dq = 1;
    /* the counted ones are a prefix of the queue */
    if (!s->rx_counted && (p == NO_SLOT || c->slots[p].rx_counted))
        nd->dq_cnt = k;
    s->rx_end = dq_rx_end(c, nd, s, p == NO_SLOT ? nd->dq_base : c->slots[p].rx_end);
    dq_schedule(c, k);
    dq_reflow(c, nd, nx, s->rx_end);
}

/* Takes message k out of its receiver's queue; with `reflow`, those after
 * it are delivered again without it (it never held the downlink). */
void cl_i_dq_unlink(cl_cluster *c, uint32_t k, int reflow)
{
    msg_slot *s = &c->slots[k];
    node *nd = &c->nodes[s->msg.to];
    uint32_t p = s->dq_prev, nx = s->dq_next;
    if (p == NO_SLOT) {
        nd->dq_head = nx;
        if (!reflow)   /* delivered (or dropped) first: the downlink is free after it */
            nd->dq_base = s->rx_end;
    } else {
        c->slots[p].dq_next = nx;
    }
    if (nx == NO_SLOT)
        nd->dq_tail = p;
    else
        c->slots[nx].dq_prev = p;
    if (nd->dq_cnt == k)
        nd->dq_cnt = nx;
    s->in_dq = 0;
    if (reflow && nx != NO_SLOT)
        dq_reflow(c, nd, nx, p == NO_SLOT ? nd->dq_base : c->slots[p].rx_end);
}

void cl_i_dq_count(cl_cluster *c, int i)
{
    node *nd = &c->nodes[i];
    double now = sim_engine_now(c->eng);
    while (nd->dq_cnt != NO_SLOT) {
        msg_slot *s = &c->slots[nd->dq_cnt];
        if (s->rx_start > now)
            return;
        cl_i_account_at(c, i, s->rx_start);
        nd->rx_active++;
        s->rx_counted = 1;
        nd->dq_cnt = s->dq_next;
    }
}

/* A booked message whose sender went down before its first bit arrived
 * (and lost it): out of its receiver's queue (it never holds the
 * downlink), dropped at an arrival event instead. */
void cl_i_dq_unbook(cl_cluster *c, uint32_t k)
{
    msg_slot *s = &c->slots[k];
    if (s->rx_counted) {   /* counted at this very instant: not yet arrived */
        c->nodes[s->msg.to].rx_active--;
        s->rx_counted = 0;
    }
    cl_i_dq_unlink(c, k, 1);
    cl_i_dq_cancel(c, k, 1);
    s->ev_pending = 1;
    cl_i_schedule(c, s->rx_start, CL_EV_ARRIVE, s->msg.to, k);
}
