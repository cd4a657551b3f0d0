/* cl_net.c -- the network of the cluster: link classes and rules, message
 * slots, the FIFO discipline, jitter, loss, outages, delivery, and what a
 * departing node takes with it.  It does not model the fair-sharing NIC
 * (cl_net_fair.c), and it does not decide what is sent.
 *
 * A message from i to j belongs to the class of link (i, j) (rules, last
 * match wins; class 0 otherwise), which gives its latency, bandwidth,
 * jitter, loss probability and outage windows.  Two disciplines per NIC.
 * FIFO: a NIC serves one transfer at a time in order at min(NIC capacity,
 * link bandwidth); the times are computed when a message is sent, with no
 * event of their own: the uplink's here, the downlink's (its queues, in
 * the order first bits arrive, and a message's delivery its only event)
 * in cl_net_fifo.c.  Fair (max-min sharing over the route):
 * cl_net_fair.c.  In both, a message is never received before its last
 * bit can have arrived (last bit sent + propagation), and jitter never
 * reorders one link unless cfg.reorder.
 */
#include "cl_internal.h"
#include "sim_mem.h"
#include "sim_rng.h"

#include <assert.h>
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
    c->upq_flood = -1;
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
    if (cfg->discipline == CL_NIC_FAIR && cl_i_fair_init(c) != 0)
        return -1;
    for (int i = 0; i < c->n; i++) {
        node *nd = &c->nodes[i];
        nd->dq_head = nd->dq_tail = nd->dq_cnt = NO_SLOT;
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
        free(nd->upp.p);
        if (nd->upq != nd->upq_in)
            free(nd->upq);
        gsl_rng_free(nd->rng_link);
        gsl_rng_free(nd->rng_loss);
    }
    cl_i_fair_fini(c);
    free(c->classes);
    free(c->rules);
}

static double min2(double a, double b);

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

double cl_link_time(const cl_cluster *c, int from, int to, double bytes)
{
    const cl_link_class *k = &c->classes[class_of(c, from, to)];
    double bw = min2(k->bandwidth_Bps, min2(c->nodes[from].up_cap, c->nodes[to].down_cap));
    return k->latency_s + (bytes > 0 ? bytes / bw : 0.0);
}

int cl_i_in_outage(const cl_link_class *k, double t)
{
    for (size_t w = 0; w < k->n_outages; w++)
        if (k->outages[w].start_s <= t && t < k->outages[w].end_s)
            return 1;
    return 0;
}

/* The link record of peer at a node (created when missing).  The pointer
 * is valid until the next creation in the same list. */
pairq *cl_i_pair_get(pairs *ps, int peer)
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
            sim_die_oom();
        ps->p = p;
        ps->cap = cap;
    }
    memmove(ps->p + lo + 1, ps->p + lo, (ps->n - lo) * sizeof *ps->p);
    ps->n++;
    ps->p[lo] = (pairq){ peer, NO_SLOT, NO_SLOT, -INFINITY, -INFINITY };
    return &ps->p[lo];
}

/* A slot as a fresh message finds it: under FIFO only its first two
 * lines, the only ones the FIFO path reads (msg_slot). */
static void slot_clear(const cl_cluster *c, msg_slot *s)
{
    if (!c->nics) {
        memset(s, 0, SLOT_FIFO_BYTES);
        return;
    }
    memset(s, 0, sizeof *s);
    s->rx_done = -1;
    s->next_up = NO_SLOT;
    s->owner = -1;
}

/* The free slots are a two-level bitmap beside the slots, and a send takes
 * the lowest free one.  Lowest-first keeps a node's messages where its
 * previous ones were: in a ring that steps in lockstep, node i's two
 * messages take slots 2i and 2i + 1 round after round, so the sweep of
 * sends and deliveries over the nodes walks the slots in order.  (A stack,
 * last freed first, shuffled them like a riffle: by round 10 of a 10^5-node
 * ring every send landed on a random slot, and the rate fell by a third
 * over the first 40 rounds; bench/RESULTS.md, "Message slots lowest
 * first".)  Taking one reads no cold slot, and the choice depends only on
 * which slots are free: deterministic. */
static void slot_bits_set(cl_cluster *c, uint32_t k)
{
    uint32_t w = k / 64;
    c->free_bits[w] |= (uint64_t)1 << (k % 64);
    c->free_sum[w / 64] |= (uint64_t)1 << (w % 64);
    if (w / 64 < c->free_lo)
        c->free_lo = w / 64;
}

static uint32_t slot_bits_take(cl_cluster *c)
{
    uint32_t u = c->free_lo;
    while (c->free_sum[u] == 0)   /* n_free > 0: one word is nonzero */
        u++;
    c->free_lo = u;
    uint32_t w = 64 * u + (uint32_t)__builtin_ctzll(c->free_sum[u]);
    uint32_t b = (uint32_t)__builtin_ctzll(c->free_bits[w]);
    c->free_bits[w] &= c->free_bits[w] - 1;
    if (c->free_bits[w] == 0)
        c->free_sum[u] &= ~((uint64_t)1 << (w % 64));
    return 64 * w + b;
}

static uint32_t slot_alloc(cl_cluster *c)
{
    if (c->n_free == 0) {
        uint32_t old = c->n_slots, grow = old ? old : 64;
        /* 64-byte aligned (msg_slot's lines), which realloc cannot promise:
         * a new array and a copy, O(1) a slot with doubling */
        msg_slot *s = sim_alloc_lines((size_t)(old + grow) * sizeof *s);
        /* slot counts are powers of two from 64 on: whole words */
        size_t words = (size_t)(old + grow) / 64, sums = (words + 63) / 64;
        size_t old_words = old / 64, old_sums = (old_words + 63) / 64;
        uint64_t *bits = realloc(c->free_bits, words * sizeof *bits);
        uint64_t *sum = bits ? realloc(c->free_sum, sums * sizeof *sum) : NULL;
        if (!s || !bits || !sum)
            sim_die_oom();
        memset(bits + old_words, 0, (words - old_words) * sizeof *bits);
        memset(sum + old_sums, 0, (sums - old_sums) * sizeof *sum);
        c->free_bits = bits;
        c->free_sum = sum;
        if (old)
            memcpy(s, c->slots, (size_t)old * sizeof *s);
        free(c->slots);
        /* each slot's FIFO delivery has an engine target of its own, so
         * that it can be moved (slots and targets grow together) */
        uint32_t t = sim_engine_add_targets(c->eng, grow);
        if (t == UINT32_MAX)
            sim_die_oom();
        if (old == 0)
            c->slot_target0 = t;
        assert(t == c->slot_target0 + old);
        c->slots = s;
        c->n_slots = old + grow;
        memset(&s[old], 0, (size_t)grow * sizeof *s);
        for (uint32_t k = old; k < old + grow; k++)
            slot_bits_set(c, k);
        c->n_free = grow;
    }
    uint32_t k = slot_bits_take(c);
    c->n_free--;
    msg_slot *s = &c->slots[k];
    slot_clear(c, s);
    s->live = 1;
    return k;
}

static void slot_free(cl_cluster *c, uint32_t k)
{
    c->msg_mem -= c->slots[k].mem;
    if (c->in_flight <= 1)   /* no rounding residue outlives the messages */
        c->msg_mem = 0;
    c->slots[k].live = 0;
    c->slots[k].msg.payload = NULL;
    slot_bits_set(c, k);
    c->n_free++;
}

static double min2(double a, double b) { return a < b ? a : b; }

/* ---- delivery and loss ---- */

/* Both stages known: deliver at the later of reception and last bit. */
void cl_i_try_deliver(cl_cluster *c, uint32_t k)
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

/* The retransmission timeout after `retries` retransmissions. */
static double rto(const cl_cluster *c, unsigned retries)
{
    double t = c->cfg.retransmit_timeout_s;
    for (unsigned r = 0; r < retries && t < CL_RETRANSMIT_MAX_TIMEOUT_S; r++)
        t *= 2;
    return t < CL_RETRANSMIT_MAX_TIMEOUT_S ? t : CL_RETRANSMIT_MAX_TIMEOUT_S;
}

/* Drops message k now (no event refers to it any more): its sender sends
 * it again after the timeout when retransmission is on, it is up and
 * retries are left; else it is lost. */
void cl_i_drop(cl_cluster *c, uint32_t k)
{
    msg_slot *s = &c->slots[k];
    if (c->nics)
        cl_i_fair_leave(c, k);
    if (s->rx_counted) {
        cl_i_account(c, s->msg.to);
        c->nodes[s->msg.to].rx_active--;
        s->rx_counted = 0;
    }
    if (c->cfg.retransmit_timeout_s > 0 && s->retries < c->cfg.retransmit_max
        && c->nodes[s->msg.from].n_down == 0) {
        double now = sim_engine_now(c->eng), at = s->up_start + rto(c, s->retries);
        s->retry_wait = 1;
        /* on the cluster's never-cancelled target: a sender that goes down
         * meanwhile loses it when it is due */
        if (sim_engine_schedule_at(c->eng, at > now ? at : now, CL_EV_RETRY, (uint32_t)c->n, k)
            != 0)
            sim_die_oom();
        c->pending++;
        return;
    }
    c->nodes[s->msg.from].st.msgs_lost++;
    cl_i_trace(c, s->msg.from, "lost", s->msg.sent_at, sim_engine_now(c->eng), s->msg.to,
               s->msg.bytes);
    if (s->msg.payload)
        cl_pool_put(&c->pool, s->msg.payload);
    slot_free(c, k);
    c->in_flight--;
}

/* ---- messages ---- */

double cl_i_draw_jitter(const cl_link_class *k, gsl_rng *r)
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

/* When the first bit reaches the receiver: after the latency and jitter,
 * never before an earlier message of the same link (unless reordering is
 * allowed).  Sets s->lat (jitter included). */
static double arrival_time(cl_cluster *c, msg_slot *s)
{
    const cl_link_class *cls = &c->classes[s->cls];
    s->lat = cls->latency_s;
    double at = s->up_start + s->lat;
    if (cls->jitter != CL_JITTER_NONE) {
        at += cl_i_draw_jitter(cls, c->nodes[s->msg.from].rng_link);
        if (!c->cfg.reorder) {
            pairq *pq = cl_i_pair_get(&c->nodes[s->msg.from].upp, s->msg.to);
            if (at < pq->last_arrival)
                at = pq->last_arrival;
            pq->last_arrival = at;
        }
        s->lat = at - s->up_start;
    }
    return at;
}

/* An event at the first bit's arrival (FIFO: for a message lost on the
 * wire or sent to a node that is down; fair: a zero-byte message). */
static void schedule_arrive_at(cl_cluster *c, uint32_t k, double at)
{
    msg_slot *s = &c->slots[k];
    if (c->cfg.discipline == CL_NIC_FIFO)
        s->tseq = sim_engine_next_seq(c->eng);   /* the arrival event's own */
    s->ev_pending = 1;
    cl_i_schedule(c, at, CL_EV_ARRIVE, s->msg.to, k);
}

void cl_i_schedule_arrive(cl_cluster *c, uint32_t k)
{
    schedule_arrive_at(c, k, arrival_time(c, &c->slots[k]));
}

/* FIFO: message k, sent now, is booked at its receiver with its delivery
 * (one event), or has an arrival event when lost or its receiver is down. */
static void fifo_route(cl_cluster *c, uint32_t k)
{
    msg_slot *s = &c->slots[k];
    double at = arrival_time(c, s);
    if (s->lost || c->nodes[s->msg.to].n_down > 0) {
        schedule_arrive_at(c, k, at);
        return;
    }
    double now = sim_engine_now(c->eng);
    s->rx_start = at > now ? at : now;   /* as an event at `at` would see it */
    s->tseq = sim_engine_next_seq(c->eng);
    cl_i_dq_insert(c, k);
}

/* ---- the uplink backlog and the memory of messages ---- */

/* FIFO: the messages whose last bit has left by now leave the backlog. */
static void upq_release(cl_cluster *c, int i, double now)
{
    node *nd = &c->nodes[i];
    while (nd->upq_len > 0 && nd->upq[nd->upq_head] <= now) {
        nd->upq_head = (nd->upq_head + 1) % nd->upq_cap;
        nd->upq_len--;
        nd->upq_n--;
    }
}

static void upq_push(cl_cluster *c, int i, double up_end, double now)
{
    node *nd = &c->nodes[i];
    upq_release(c, i, now);
    if (up_end <= now)   /* gone already (nothing to send) */
        return;
    if (nd->upq_cap == 0) {   /* the first UPQ_INLINE in the node itself (which never moves) */
        nd->upq = nd->upq_in;
        nd->upq_cap = UPQ_INLINE;
    }
    if (nd->upq_len == nd->upq_cap) {
        if (nd->upq_cap > UINT32_MAX / 2)
            sim_die_oom();
        uint32_t cap = nd->upq_cap < 4 ? 8 : 2 * nd->upq_cap;
        double *q = malloc(cap * sizeof *q);
        if (!q)
            sim_die_oom();
        for (uint32_t e = 0; e < nd->upq_len; e++)
            q[e] = nd->upq[(nd->upq_head + e) % nd->upq_cap];
        if (nd->upq != nd->upq_in)
            free(nd->upq);
        nd->upq = q;
        nd->upq_head = 0;
        nd->upq_cap = cap;
    }
    nd->upq[(nd->upq_head + nd->upq_len) % nd->upq_cap] = up_end;
    nd->upq_len++;
    nd->upq_n++;
}

void cl_i_upq_fair(cl_cluster *c, uint32_t k, int delta)
{
    node *nd = &c->nodes[c->slots[k].msg.from];
    nd->upq_n = delta > 0 ? nd->upq_n + 1 : nd->upq_n - 1;
}

/* What message k holds until it is delivered or lost: its slot, and its
 * payload unless another message holds the buffer too (a broadcast: the
 * protocol's reference and this one's are the only two on the first). */
static void mem_take(cl_cluster *c, msg_slot *s)
{
    const cl_buf *b = s->msg.payload;
    s->mem = (double)sizeof *s + (b && b->refs <= 2 ? (double)b->len * sizeof(double) : 0);
    c->msg_mem += s->mem;
    if (c->upq_bound > 0 && c->msg_mem > c->upq_bound && c->upq_flood < 0)
        c->upq_flood = s->msg.from;
}

uint64_t cl_uplink_queued(cl_cluster *c, int i)
{
    assert(i >= 0 && i < c->n);
    upq_release(c, i, sim_engine_now(c->eng));
    return c->nodes[i].upq_n;
}

double cl_uplink_idle_s(cl_cluster *c, int i)
{
    assert(i >= 0 && i < c->n);
    double now = sim_engine_now(c->eng);
    upq_release(c, i, now);
    if (c->nodes[i].upq_n == 0)
        return 0;
    if (c->cfg.discipline != CL_NIC_FIFO)
        return cl_i_fair_up_idle_s(c, i);
    double left = c->nodes[i].up_free - now;
    return left > 0 ? left : 0;
}

void cl_set_message_bound(cl_cluster *c, double bytes)
{
    c->upq_bound = bytes > 0 ? bytes : 0;
}

int cl_message_flood(const cl_cluster *c, double *mem_bytes, uint64_t *n_msgs)
{
    if (mem_bytes)
        *mem_bytes = c->msg_mem;
    if (n_msgs)
        *n_msgs = c->in_flight;
    return c->upq_flood;
}

static void transmit(cl_cluster *c, uint32_t k);

void cl_send(cl_cluster *c, int from, int to, uint32_t tag, uint64_t round,
             cl_buf *payload, double bytes)
{
    assert(from != to && from >= 0 && to >= 0 && from < c->n && to < c->n);
    double now = sim_engine_now(c->eng);
    node *src = &c->nodes[from];
    if (src->n_down > 0) {   /* a down node sends nothing: handed over, lost at once */
        src->st.bytes_sent += bytes;
        src->st.msgs_sent++;
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
    c->in_flight++;
    mem_take(c, s);
    transmit(c, k);
}

/* Message k (a new one, or one due again) enters its sender's uplink now. */
static void transmit(cl_cluster *c, uint32_t k)
{
    msg_slot *s = &c->slots[k];
    int from = s->msg.from, to = s->msg.to;
    double bytes = s->msg.bytes, now = sim_engine_now(c->eng);
    node *src = &c->nodes[from];
    s->cls = class_of(c, from, to);
    const cl_link_class *cls = &c->classes[s->cls];
    double bw = cls->bandwidth_Bps;
    if (c->nics)
        s->bw = bw;
    if (cls->loss > 0 && gsl_rng_uniform(src->rng_loss) < cls->loss)
        s->lost = 1;
    src->st.bytes_sent += bytes;
    src->st.msgs_sent++;

    if (c->cfg.discipline == CL_NIC_FIFO || bytes <= 0) {
        double ser = bytes / min2(src->up_cap, bw);
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
        if (cl_i_in_outage(cls, up_start))
            s->lost = 1;
        cl_i_trace(c, from, "send", up_start, s->up_end, to, bytes);
        upq_push(c, from, s->up_end, now);
        if (c->cfg.discipline == CL_NIC_FIFO)
            fifo_route(c, k);
        else
            cl_i_schedule_arrive(c, k);
    } else {
        cl_i_fair_enter(c, k);
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
        cl_i_drop(c, k);
        return;
    }
    if (s->lost) {
        /* lost on the wire: gone once its last bit has left the sender */
        if (!c->nics || !s->queued_up)
            cl_i_drop(c, k);
        return;
    }
    double now = sim_engine_now(c->eng);
    s->rx_start = now;
    cl_i_account(c, j);
    dst->rx_active++;
    s->rx_counted = 1;
    if (c->cfg.discipline == CL_NIC_FIFO) {
        /* queue behind what it is receiving; cut-through */
        cl_i_dq_insert(c, k);
    } else {   /* fair: only a zero-byte message has an ARRIVE */
        assert(s->msg.bytes <= 0);
        s->rx_done = now;
        cl_i_try_deliver(c, k);
    }
}

void cl_i_on_deliver(cl_cluster *c, uint32_t k)
{
    msg_slot *s = &c->slots[k];
    s->ev_pending = 0;
    if (s->in_dq) {
        /* its arrival is counted by now (an event at it would have
         * accounted the receiver), then it leaves the downlink */
        cl_i_account(c, s->msg.to);
        cl_i_dq_unlink(c, k, 0);
    }
    if (s->dead || c->nodes[s->msg.to].n_down > 0) {
        cl_i_drop(c, k);
        return;
    }
    cl_msg m = s->msg;
    double rx_start = s->rx_start;
    int counted = s->rx_counted;
    slot_free(c, k);
    c->in_flight--;
    node *dst = &c->nodes[m.to];
    cl_i_account(c, m.to);
    if (counted)
        dst->rx_active--;
    dst->st.bytes_received += m.bytes;
    dst->st.msgs_received++;
    cl_i_trace(c, m.to, "recv", rx_start, sim_engine_now(c->eng), m.from, m.bytes);
    c->cb.on_message(c->cb.ctx, m.to, &m);
    if (m.payload)
        cl_pool_put(&c->pool, m.payload);
}

void cl_i_on_retry(cl_cluster *c, uint32_t k)
{
    msg_slot *s = &c->slots[k];
    node *src = &c->nodes[s->msg.from];
    s->retry_wait = 0;
    if (src->n_down > 0) {   /* a sender that went down forgot it */
        cl_i_drop(c, k);
        return;
    }
    /* a fresh transmission of the same message (its payload and sent_at
     * kept): every transfer state of the last attempt is cleared */
    cl_msg m = s->msg;
    uint16_t retries = (uint16_t)(s->retries + 1);
    double mem = s->mem;
    slot_clear(c, s);
    s->msg = m;
    s->mem = mem;
    s->retries = retries;
    s->live = 1;
    src->st.msgs_retransmitted++;
    transmit(c, k);
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
        if (!s->live || s->retry_wait)   /* its retry decides when due */
            continue;
        if (s->msg.to == i) {
            if (s->in_dq) {   /* discounted from pending with the node's events */
                cl_i_dq_cancel(c, k, 0);
                s->in_dq = 0;
            }
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
        if (!s->live || s->retry_wait || !s->dead || (s->msg.to != i && s->msg.from != i))
            continue;
        if (s->in_dq && !(s->rx_start < now || (s->rx_start == now && s->tseq < c->cur_seq)))
            cl_i_dq_unbook(c, k);   /* dropped where its first bit arrives, as before booking */
        if (!s->ev_pending)
            cl_i_drop(c, k);
        else if (c->nics)
            cl_i_fair_leave(c, k);   /* dropped at its event */
    }
    /* FIFO: what had not left its uplink is lost (marked dead above) */
    upq_release(c, i, now);
    nd->upq_n -= nd->upq_len;
    nd->upq_len = 0;
    nd->rx_active = 0;
    if (nd->up_free > now)
        nd->up_free = now;
    nd->dq_head = nd->dq_tail = nd->dq_cnt = NO_SLOT;   /* what it received is lost */
    if (nd->dq_base > now)
        nd->dq_base = now;
}
