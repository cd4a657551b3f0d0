/* cl_net_ps.c -- the uniform resources of the fair network: a resource
 * whose flows are each alone at their other resource (a parameter
 * server's downlink during a gather, its uplink during a broadcast) and
 * all held at the same share cap / n, which is then their max-min rate.
 * It does not decide when the general solve runs (cl_net_fair.c) and does
 * not solve anything else (cl_net_maxmin.c).
 *
 * Virtual time (processor sharing).  Such a resource keeps the service v
 * that each of its flows has received since it became uniform, growing at
 * x = cap / n per second; a flow that joins with b bytes gets the tag v +
 * b and ends when v reaches it, at t + (tag - v) / x.  A start or an end
 * moves v, t and x and one heap entry, O(log n), instead of every flow's
 * bytes and rate (O(n) per event, O(n^2) per round for a server whose
 * workers send one after the other).  The rates are those of the general
 * solve exactly as long as the resource is uniform: a flow may join only
 * when its other resource was empty and its share is within its limit
 * (its link's cap and its other resource's capacity), a flow may leave
 * only when the share that grows stays within every remaining flow's
 * limit (a heap of limits), and a flow joining the other resource of one
 * of its flows makes it explicit again (cl_net_fair.c).  Otherwise the
 * resource is made explicit (bytes left, the same rate) and the general
 * solve takes over; after a solve a resource of PS_MIN_FLOWS flows or
 * more becomes uniform again when it qualifies.  Both heaps delete
 * lazily (an entry whose flow left is skipped, and the heap is compacted
 * when it holds more than four times its live entries).  Finish times agree
 * with the explicit bytes to rounding (about 1e-16 relative).
 */
#include "cl_fair_internal.h"

#include <assert.h>
#include <math.h>
#include <stdlib.h>

/* ---- a min-heap of (key, slot) ---- */

/* Keys alone: equal keys stay where they are (a broadcast's equal tags
 * push in O(1)); the layout is still a function of the calls, and ends
 * that tie are put in act's order by the caller. */
static int ent_less(const ps_ent *a, const ps_ent *b)
{
    return a->key < b->key;
}

static void sift_down(ps_ent *h, uint32_t n, uint32_t i)
{
    ps_ent e = h[i];
    for (;;) {
        uint32_t ch = 2 * i + 1;
        if (ch >= n)
            break;
        if (ch + 1 < n && ent_less(&h[ch + 1], &h[ch]))
            ch++;
        if (!ent_less(&h[ch], &e))
            break;
        h[i] = h[ch];
        i = ch;
    }
    h[i] = e;
}

static void ent_push(ps_ent **h, uint32_t *n, uint32_t *cap, ps_ent e)
{
    if (*n == *cap) {
        uint32_t nc = *cap ? 2 * *cap : 16;
        ps_ent *p = realloc(*h, nc * sizeof *p);
        if (!p)
            sim_die_oom();
        *h = p;
        *cap = nc;
    }
    uint32_t i = (*n)++;
    while (i > 0) {
        uint32_t p = (i - 1) / 2;
        if (!ent_less(&e, &(*h)[p]))
            break;
        (*h)[i] = (*h)[p];
        i = p;
    }
    (*h)[i] = e;
}

static void ent_pop(ps_ent *h, uint32_t *n)
{
    if (--*n > 0) {
        h[0] = h[*n];
        sift_down(h, *n, 0);
    }
}

static int ent_live(const cl_cluster *c, uint32_t r, const ps_ent *e)
{
    const msg_slot *s = &c->slots[e->k];
    return s->psr == (int32_t)r && s->ps_ser == e->ser;
}

/* Drops the entries of flows that left from the top. */
static void clean_top(const cl_cluster *c, uint32_t r, ps_ent *h, uint32_t *n)
{
    while (*n > 0 && !ent_live(c, r, &h[0]))
        ent_pop(h, n);
}

/* Keeps only live entries when stale ones are more than the live. */
static void compact(const cl_cluster *c, uint32_t r, ps_ent *h, uint32_t *n)
{
    uint32_t live = c->nics[r].n_act;
    if (*n <= 4 * live + 64)
        return;
    uint32_t w = 0;
    for (uint32_t a = 0; a < *n; a++)
        if (ent_live(c, r, &h[a]))
            h[w++] = h[a];
    *n = w;
    for (uint32_t i = w / 2; i-- > 0;)
        sift_down(h, w, i);
}

/* ---- virtual time ---- */

static void advance(cl_ps *p, double now)
{
    if (p->x > 0 && now > p->t)
        p->v += p->x * (now - p->t);
    p->t = now;
}

static double end_of(const cl_ps *p, double tag)
{
    double left = tag - p->v;
    return p->t + (left > 0 ? left : 0) / p->x;
}

/* Uniform resource u changed: its completion event moves, at once for
 * the first change of an instant, at the flush for the next ones (a
 * broadcast's n starts: three events, not n). */
static void changed(cl_cluster *c, uint32_t u)
{
    cl_ps *p = c->nics[u].ps;
    double now = sim_engine_now(c->eng);
    cl_i_mm_mark_dirty(c, (int32_t)u);
    if (p->chg_t == now)
        c->mm->defer = 1;
    p->chg_t = now;
}

/* The most flow k may get at uniform resource r: its link's cap and its
 * other resource's capacity. */
static double flow_lim(const cl_cluster *c, uint32_t k, uint32_t r)
{
    const msg_slot *s = &c->slots[k];
    int o = 1 - (int)(r & 1);
    double lim = s->bw;
    if (s->in_res[o]) {
        double cap = cl_i_res_cap(c, cl_i_flow_res(c, k, o));
        if (cap < lim)
            lim = cap;
    }
    return lim;
}

/* Flow k alone at its other resource (or crossing none other). */
static int alone_elsewhere(const cl_cluster *c, uint32_t k, uint32_t r)
{
    int o = 1 - (int)(r & 1);
    if (!c->slots[k].in_res[o])
        return 1;
    const nic *q = &c->nics[cl_i_flow_res(c, k, o)];
    return q->n_act == 1 && !q->uni;
}

int cl_i_ps_try_enter(cl_cluster *c, uint32_t r)
{
    nic *q = &c->nics[r];
    if (q->uni || q->n_act == 0 || c->cfg.fair_general_only)
        return 0;
    double x = cl_i_res_cap(c, r) / q->n_act;
    for (uint32_t f = 0; f < q->n_act; f++) {
        uint32_t k = q->act[f];
        const msg_slot *s = &c->slots[k];
        if (s->psr >= 0 || !alone_elsewhere(c, k, r) || flow_lim(c, k, r) < x)
            return 0;   /* (alone and within its limit: its max-min rate is x) */
    }
    cl_ps *p = q->ps;
    if (!p) {
        p = calloc(1, sizeof *p);
        if (!p)
            sim_die_oom();
        p->chg_t = -1;
        q->ps = p;
    }
    double now = sim_engine_now(c->eng);
    p->v = 0;
    p->t = now;
    p->x = x;
    p->nth = p->nlh = 0;
    for (uint32_t f = 0; f < q->n_act; f++) {
        uint32_t k = q->act[f];
        msg_slot *s = &c->slots[k];
        double left = s->rem;
        if (s->rate > 0)
            left -= s->rate * (now - s->t_last);
        if (left < 0)
            left = 0;
        s->ps_ser++;
        s->psr = (int32_t)r;
        s->tag = left;
        ent_push(&p->th, &p->nth, &p->cth, (ps_ent){ left, k, s->ps_ser });
        ent_push(&p->lh, &p->nlh, &p->clh, (ps_ent){ flow_lim(c, k, r), k, s->ps_ser });
        if (s->owner != (int32_t)r) {
            cl_i_mm_mark_dirty(c, s->owner);
            s->owner = (int32_t)r;
        }
        s->rem = left;
        s->rate = x;
        s->t_last = now;
    }
    q->uni = 1;
    c->mm->work.ps_enters++;
    cl_i_mm_mark_dirty(c, (int32_t)r);
    return 1;
}

void cl_i_ps_materialize(cl_cluster *c, uint32_t r)
{
    nic *q = &c->nics[r];
    cl_ps *p = q->ps;
    assert(q->uni && p);
    double now = sim_engine_now(c->eng);
    advance(p, now);
    for (uint32_t f = 0; f < q->n_act; f++) {
        msg_slot *s = &c->slots[q->act[f]];
        if (s->psr != (int32_t)r)
            continue;   /* a flow joining now */
        double left = s->tag - p->v;
        s->rem = left > 0 ? left : 0;
        s->rate = p->x;
        s->t_last = now;
        s->owner = (int32_t)r;
        s->psr = -1;
    }
    q->uni = 0;
    p->nth = p->nlh = 0;
    c->mm->work.ps_exits++;
    cl_i_mm_mark_dirty(c, (int32_t)r);
}

/* The uniform resource new flow k may join (before it joins either of
 * its resources; two: it crosses both), or -1. */
int32_t cl_i_ps_pick(cl_cluster *c, uint32_t k, int two)
{
    if (c->mm->nS != 0)   /* a solve is pending: leave it the change */
        return -1;
    const msg_slot *s = &c->slots[k];
    for (int d = 0; d <= two; d++) {
        uint32_t u = cl_i_flow_res(c, k, d);
        const nic *q = &c->nics[u];
        if (!q->uni)
            continue;
        double lim = s->bw;
        uint32_t o = 0;
        if (two) {
            o = cl_i_flow_res(c, k, 1 - d);
            if (c->nics[o].n_act != 0)
                continue;
            if (cl_i_res_cap(c, o) < lim)
                lim = cl_i_res_cap(c, o);
        }
        if (cl_i_res_cap(c, u) / (q->n_act + 1) <= lim) {
            if (two && c->nics[o].uni)
                cl_i_ps_materialize(c, o);   /* empty: O(1) */
            return (int32_t)u;
        }
    }
    return -1;
}

void cl_i_ps_add(cl_cluster *c, uint32_t u, uint32_t k)
{
    nic *q = &c->nics[u];
    cl_ps *p = q->ps;
    msg_slot *s = &c->slots[k];
    double now = sim_engine_now(c->eng);
    if (q->n_act == 1) {   /* k alone: start the service afresh */
        p->v = 0;
        p->nth = p->nlh = 0;
    } else {
        advance(p, now);
    }
    p->t = now;
    s->ps_ser++;
    s->psr = (int32_t)u;
    s->tag = p->v + s->rem;
    ent_push(&p->th, &p->nth, &p->cth, (ps_ent){ s->tag, k, s->ps_ser });
    ent_push(&p->lh, &p->nlh, &p->clh, (ps_ent){ flow_lim(c, k, u), k, s->ps_ser });
    p->x = cl_i_res_cap(c, u) / q->n_act;
    s->rate = p->x;
    s->owner = (int32_t)u;
    s->t_last = now;
    c->mm->work.ps_starts++;
    changed(c, u);
}

void cl_i_ps_remove(cl_cluster *c, uint32_t k)
{
    msg_slot *s = &c->slots[k];
    cl_ps *p = c->nics[s->psr].ps;
    advance(p, sim_engine_now(c->eng));
    s->psr = -1;
}

int cl_i_ps_settle(cl_cluster *c, uint32_t u)
{
    nic *q = &c->nics[u];
    cl_ps *p = q->ps;
    changed(c, u);
    if (q->n_act == 0) {
        p->x = 0;
        p->v = 0;
        p->nth = p->nlh = 0;
        c->mm->work.ps_ends++;
        return 1;
    }
    double x = cl_i_res_cap(c, u) / q->n_act;
    /* the top bounds the live limits from below, stale or not */
    if (p->lh[0].key < x)
        clean_top(c, u, p->lh, &p->nlh);
    assert(p->nlh > 0);
    if (p->lh[0].key < x) {   /* a flow would pass its limit: not uniform */
        cl_i_ps_materialize(c, u);
        return 0;
    }
    p->x = x;
    c->mm->work.ps_ends++;
    compact(c, u, p->th, &p->nth);
    compact(c, u, p->lh, &p->nlh);
    return 1;
}

double cl_i_ps_first_end(cl_cluster *c, uint32_t r)
{
    cl_ps *p = c->nics[r].ps;
    clean_top(c, r, p->th, &p->nth);
    return p->nth > 0 ? end_of(p, p->th[0].key) : INFINITY;
}

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return (x > y) - (x < y);
}

void cl_i_ps_collect_done(cl_cluster *c, uint32_t r, double now)
{
    cl_mm *m = c->mm;
    nic *q = &c->nics[r];
    cl_ps *p = q->ps;
    int d = (int)(r & 1);
    /* from the heap while few end; when many do (equal flows of a
     * broadcast end together), by one pass over act as the explicit scan */
    size_t limit = 16 + q->n_act / 16;
    m->ndone = 0;
    for (;;) {
        clean_top(c, r, p->th, &p->nth);
        if (p->nth == 0 || end_of(p, p->th[0].key) > now)
            break;
        if (m->ndone == limit) {
            m->ndone = 0;
            for (uint32_t f = 0; f < q->n_act; f++) {
                const msg_slot *s = &c->slots[q->act[f]];
                if (s->psr == (int32_t)r && end_of(p, s->tag) <= now)
                    cl_i_push_u32(&m->done, &m->ndone, &m->capdone, q->act[f]);
            }
            return;   /* in act's order; their heap entries go stale */
        }
        cl_i_push_u32(&m->done, &m->ndone, &m->capdone, p->th[0].k);
        ent_pop(p->th, &p->nth);
    }
    if (m->ndone < 2)
        return;
    /* the order of act, as the explicit scan gives it */
    uint64_t *o = malloc(m->ndone * sizeof *o);
    if (!o)
        sim_die_oom();
    for (size_t a = 0; a < m->ndone; a++)
        o[a] = ((uint64_t)c->slots[m->done[a]].pos[d] << 32) | m->done[a];
    qsort(o, m->ndone, sizeof *o, cmp_u64);
    for (size_t a = 0; a < m->ndone; a++)
        m->done[a] = (uint32_t)o[a];
    free(o);
}

double cl_i_ps_flow_left(const cl_cluster *c, uint32_t k, double now, double *rate)
{
    const msg_slot *s = &c->slots[k];
    double left;
    if (s->psr >= 0) {
        const cl_ps *p = c->nics[s->psr].ps;
        double v = p->v + (now > p->t ? p->x * (now - p->t) : 0);
        left = s->tag - v;
        *rate = p->x;
    } else {
        double dt = now - s->t_last;
        left = s->rem - s->rate * (dt > 0 ? dt : 0);
        *rate = s->rate;
    }
    return left > 0 ? left : 0;
}
