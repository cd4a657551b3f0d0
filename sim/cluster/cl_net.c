/* cl_net.c -- the network of the cluster: link classes, message slots,
 * each node's uplink and downlink, cut-through delivery, jitter, loss,
 * outages, and what a departing node takes with it.
 *
 * A message from i to j belongs to the class of link (i, j) (rules, last
 * match wins; class 0 otherwise), which gives its latency, bandwidth,
 * jitter, loss probability and outage windows.  Two disciplines per NIC.
 * FIFO: a NIC serves one transfer at a time in order at min(NIC capacity,
 * link bandwidth); the times are computed when a message is sent (uplink)
 * or its first bit arrives (downlink), with no event of their own.  Fair
 * (processor sharing between links): the messages of one link pass a NIC
 * one after the other, and the links active in a NIC share its capacity
 * by water-filling (each gets an equal share, capped by its link
 * bandwidth, the unused part going to the others); whenever the set
 * changes the remaining bytes are brought up to date and the next
 * completion rescheduled, older completion events being dropped by a
 * version number (lazy cancellation).  In both, a message is never
 * received before its last bit can have arrived (last bit sent +
 * propagation), and jitter never reorders one link unless cfg.reorder.
 * It does not decide what is sent.
 */
#include "cl_internal.h"
#include "sim_rng.h"

#include <assert.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <gsl/gsl_randist.h>

#define VER_MASK 0x7fffffffu

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

int cl_i_net_init(cl_cluster *c, const cl_config *cfg)
{
    size_t nc = cfg->n_classes ? cfg->n_classes : 1;
    c->classes = malloc(nc * sizeof *c->classes);
    if (!c->classes)
        return -1;
    if (cfg->n_classes)
        memcpy(c->classes, cfg->classes, nc * sizeof *c->classes);
    else
        c->classes[0] = (cl_link_class){ .latency_s = cfg->latency_s,
                                         .bandwidth_Bps = cfg->bandwidth_Bps };
    c->n_classes = nc;
    if (cfg->n_link_rules) {
        c->rules = malloc(cfg->n_link_rules * sizeof *c->rules);
        if (!c->rules)
            return -1;
        memcpy(c->rules, cfg->link_rules, cfg->n_link_rules * sizeof *c->rules);
        c->n_rules = cfg->n_link_rules;
    }
    int any_loss = 0;
    for (size_t k = 0; k < nc; k++) {
        c->any_jitter |= c->classes[k].jitter != CL_JITTER_NONE;
        any_loss |= c->classes[k].loss > 0;
    }
    for (int i = 0; i < c->n; i++) {
        node *nd = &c->nodes[i];
        if (c->any_jitter
            && !(nd->rng_link = sim_rng_stream_create(cfg->seed, (uint32_t)i, SIM_RNG_LINK)))
            return -1;
        if (any_loss
            && !(nd->rng_loss = sim_rng_stream_create(cfg->seed, (uint32_t)i, SIM_RNG_LOSS)))
            return -1;
    }
    return 0;
}

void cl_i_net_fini(cl_cluster *c)
{
    for (int i = 0; i < c->n; i++) {
        node *nd = &c->nodes[i];
        free(nd->up.act);
        free(nd->down.act);
        free(nd->upp.p);
        free(nd->downp.p);
        gsl_rng_free(nd->rng_link);
        gsl_rng_free(nd->rng_loss);
    }
    free(c->classes);
    free(c->rules);
    free(c->wf);
}

static uint32_t class_of(const cl_cluster *c, int from, int to)
{
    for (size_t r = c->n_rules; r-- > 0;) {
        const cl_link_rule *l = &c->rules[r];
        if ((in_list(l->from, l->n_from, from) && in_list(l->to, l->n_to, to))
            || (!l->directed && in_list(l->from, l->n_from, to) && in_list(l->to, l->n_to, from)))
            return l->cls;
    }
    return 0;
}

static int in_outage(const cl_link_class *k, double t)
{
    for (size_t w = 0; w < k->n_outages; w++)
        if (k->outages[w].start_s <= t && t < k->outages[w].end_s)
            return 1;
    return 0;
}

/* The link record of peer at a node (created when missing).  The pointer
 * is valid until the next creation in the same list. */
static pairq *pair_get(pairs *ps, int peer)
{
    size_t lo = 0, hi = ps->n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (ps->p[mid].peer < peer)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (lo < ps->n && ps->p[lo].peer == peer)
        return &ps->p[lo];
    if (ps->n == ps->cap) {
        size_t cap = ps->cap ? 2 * ps->cap : 4;
        pairq *p = realloc(ps->p, cap * sizeof *p);
        if (!p)
            cl_i_die_oom();
        ps->p = p;
        ps->cap = cap;
    }
    memmove(ps->p + lo + 1, ps->p + lo, (ps->n - lo) * sizeof *ps->p);
    ps->n++;
    ps->p[lo] = (pairq){ peer, NO_SLOT, NO_SLOT, -INFINITY };
    return &ps->p[lo];
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
    c->slots[k].next_up = c->slots[k].next_down = NO_SLOT;
    return k;
}

static void slot_free(cl_cluster *c, uint32_t k)
{
    c->slots[k].live = 0;
    c->slots[k].msg.payload = NULL;
    c->slots[k].next_free = c->free_slot;
    c->free_slot = k;
}

static double min2(double a, double b) { return a < b ? a : b; }

/* ---- fair NICs ---- */

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
                cl_i_die_oom();
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

/* ---- per-link queues at fair NICs ---- */

static void schedule_arrive(cl_cluster *c, uint32_t k);

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
    if (in_outage(&c->classes[s->cls], s->up_start))
        s->lost = 1;
    nic_join(c, s->msg.from, 0, k);
    schedule_arrive(c, k);
}

static pairq *stage_pair(cl_cluster *c, int dir, uint32_t k)
{
    const msg_slot *s = &c->slots[k];
    return dir ? pair_get(&c->nodes[s->msg.to].downp, s->msg.from)
               : pair_get(&c->nodes[s->msg.from].upp, s->msg.to);
}

static uint32_t *next_of(cl_cluster *c, int dir, uint32_t k)
{
    return dir ? &c->slots[k].next_down : &c->slots[k].next_up;
}

/* Message k joins its link's queue at the sender's uplink (dir 0) or the
 * receiver's downlink (dir 1); it starts at once when the link is free. */
static void stage_enter(cl_cluster *c, int dir, uint32_t k)
{
    pairq *pq = stage_pair(c, dir, k);
    *next_of(c, dir, k) = NO_SLOT;
    if (dir)
        c->slots[k].queued_down = 1;
    else
        c->slots[k].queued_up = 1;
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
    if (dir)
        c->slots[k].queued_down = 0;
    else
        c->slots[k].queued_up = 0;
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
static void leave_stages(cl_cluster *c, uint32_t k)
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

/* Drops message k now (no event refers to it any more). */
static void drop(cl_cluster *c, uint32_t k)
{
    msg_slot *s = &c->slots[k];
    leave_stages(c, k);
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
        double rem = dir ? s->rem_down : s->rem_up;
        if (rem <= 1e-9 * s->msg.bytes && n_done < 64) {
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
            try_deliver(c, k);
        } else {
            s->up_end = now;
            s->up_known = 1;
            cl_i_trace(c, s->msg.from, "send", s->up_start, now, s->msg.to, s->msg.bytes);
            stage_leave(c, 0, k);
            if (s->lost && !s->ev_pending)
                drop(c, k);   /* its first bit already reached the receiver */
            else
                try_deliver(c, k);
        }
    }
}

/* ---- messages ---- */

static double draw_jitter(const cl_link_class *k, gsl_rng *r)
{
    switch (k->jitter) {
    case CL_JITTER_UNIFORM:
        return gsl_ran_flat(r, k->jitter_a, k->jitter_b);
    case CL_JITTER_EXPONENTIAL:
        return gsl_ran_exponential(r, k->jitter_a);
    default:
        return 0;
    }
}

/* First bit at the receiver after the latency and jitter, never before
 * an earlier message of the same link (unless reordering is allowed). */
static void schedule_arrive(cl_cluster *c, uint32_t k)
{
    msg_slot *s = &c->slots[k];
    const cl_link_class *cls = &c->classes[s->cls];
    s->lat = cls->latency_s;
    double at = s->up_start + s->lat;
    if (cls->jitter != CL_JITTER_NONE) {
        at += draw_jitter(cls, c->nodes[s->msg.from].rng_link);
        if (!c->cfg.reorder) {
            pairq *pq = pair_get(&c->nodes[s->msg.from].upp, s->msg.to);
            if (at < pq->last_arrival)
                at = pq->last_arrival;
            pq->last_arrival = at;
        }
        s->lat = at - s->up_start;
    }
    s->ev_pending = 1;
    cl_i_schedule(c, at, CL_EV_ARRIVE, s->msg.to, k);
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
    s->cls = class_of(c, from, to);
    const cl_link_class *cls = &c->classes[s->cls];
    s->bw = cls->bandwidth_Bps;
    if (cls->loss > 0 && gsl_rng_uniform(src->rng_loss) < cls->loss)
        s->lost = 1;
    src->st.bytes_sent += bytes;
    src->st.msgs_sent++;
    c->in_flight++;

    if (c->cfg.discipline == CL_NIC_FIFO || bytes <= 0) {
        double ser = bytes / min2(src->up_cap, s->bw);
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
        if (in_outage(cls, up_start))
            s->lost = 1;
        cl_i_trace(c, from, "send", up_start, s->up_end, to, bytes);
        schedule_arrive(c, k);
    } else {
        stage_enter(c, 0, k);
    }
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
    if (s->lost) {
        /* lost on the wire: gone once its last bit has left the sender */
        if (!s->queued_up)
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
        double rx_end = rx_start + s->msg.bytes / min2(dst->down_cap, s->bw);
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
        stage_enter(c, 1, k);
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
    /* First mark what is lost, so that taking one message out of a link's
     * queue never starts another lost one: every message to it (their
     * events were cancelled with its target), and those from it unless
     * sent and the policy keeps them. */
    for (uint32_t k = 0; k < c->n_slots; k++) {
        msg_slot *s = &c->slots[k];
        if (!s->live)
            continue;
        if (s->msg.to == i) {
            s->ev_pending = 0;
            s->rx_counted = 0;
            s->dead = 1;
        } else if (s->msg.from == i && !s->dead) {
            int sent = s->up_known && s->up_end <= now;
            if (c->cfg.msg_policy == CL_MSG_DROP || !sent)
                s->dead = 1;
        }
    }
    for (uint32_t k = 0; k < c->n_slots; k++) {
        msg_slot *s = &c->slots[k];
        if (!s->live || !s->dead || (s->msg.to != i && s->msg.from != i))
            continue;
        if (s->ev_pending)
            leave_stages(c, k);   /* dropped at its event */
        else
            drop(c, k);
    }
    nd->rx_active = 0;
    if (nd->up_free > now)
        nd->up_free = now;
    if (nd->down_free > now)
        nd->down_free = now;
}
