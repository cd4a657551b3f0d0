/* cl_net_maxmin.c -- the general max-min solve of the fair network and
 * its completion events.  It does not start, end or queue flows
 * (cl_net_fair.c) and does not keep the uniform resources' virtual time
 * (cl_net_ps.c), which it only asks for a resource's earliest end.
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
 * the same resources as before).  Cost per solve: O((F + R) log F) for
 * the F flows and R resources of the final region.  Rates that do not
 * change are left alone, bytes and all.  A uniform resource that joins a
 * region is made explicit first (cl_i_ps_materialize); a large resource of
 * the final region is made uniform when it qualifies (cl_i_ps_try_enter),
 * so that the next starts and ends there cost O(log F).
 *
 * Completions.  Each flow belongs to the resource (or cap) that fixed its
 * rate; each resource has one completion event, at the earliest end among
 * its flows (t_last + rem / rate, or the uniform resource's tag
 * expression), versioned so that superseded events are dropped.
 */
#include "cl_fair_internal.h"

#include <assert.h>
#include <math.h>
#include <stdlib.h>

#define VER_MASK 0x7fffffffu

void cl_i_grow_u32(uint32_t **a, size_t *cap, size_t need)
{
    size_t nc = *cap ? 2 * *cap : 16;
    while (nc < need)
        nc *= 2;
    uint32_t *p = realloc(*a, nc * sizeof *p);
    if (!p)
        sim_die_oom();
    *a = p;
    *cap = nc;
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

/* A region with at most SCAN_MAX resources and binding caps is filled
 * by scanning them for the smallest share (each resource's current share
 * in nic.share); larger ones through the heap of (share, id), whose valid
 * entries are exactly those current shares: both take the same minimum
 * under the same order at every step, so the rates are the same bits
 * (cl_config.fair_heap_only forces the heap, for a test that compares). */
#define SCAN_MAX 12

/* The share of resource q after it gave out part of its capacity. */
static inline double share_of(const nic *q)
{
    return q->rem > 0 ? q->rem / q->cnt : 0;
}

/* Fixes flow k at rate x, owned by resource owner; its resources other
 * than skip (the one being saturated) give out x. */
static inline void fix_flow(cl_cluster *c, uint32_t k, double x, int32_t owner, uint32_t skip,
                            int scan)
{
    msg_slot *s = &c->slots[k];
    s->mm_fixed = 1;
    s->mm_rate = x;
    s->mm_owner = owner;
    for (int d = 0; d < 2; d++) {
        if (!s->in_res[d])
            continue;
        uint32_t r = cl_i_flow_res(c, k, d);
        if (r == skip)
            continue;
        nic *q = &c->nics[r];
        q->rem -= x;
        if (--q->cnt > 0) {
            if (scan)
                q->share = share_of(q);
            else
                heap_push(c->mm, share_of(q), r, ++q->hver);
        }
    }
}

/* Resource r saturates at level x: every unfixed flow of the region
 * through it is fixed at x. */
static void saturate(cl_cluster *c, uint32_t r, double x, uint32_t ep, size_t *unfixed,
                     int scan)
{
    nic *q = &c->nics[r];
    for (uint32_t f = 0; f < q->n_act && q->cnt > 0; f++) {
        uint32_t k = q->act[f];
        if (c->slots[k].mm_stamp != ep || c->slots[k].mm_fixed)
            continue;
        q->cnt--;
        q->rem -= x;
        fix_flow(c, k, x, (int32_t)r, r, scan);
        (*unfixed)--;
    }
    q->cnt = 0;
}

/* The least (share, id) of the resources of list l with flows left to
 * fix; *id stays UINT32_MAX when there is none. */
static inline void scan_min(const cl_cluster *c, const uint32_t *l, size_t n, double *best,
                            uint32_t *id)
{
    for (size_t a = 0; a < n; a++) {
        const nic *q = &c->nics[l[a]];
        if (q->cnt > 0
            && (*id == UINT32_MAX || q->share < *best || (q->share == *best && l[a] < *id))) {
            *best = q->share;
            *id = l[a];
        }
    }
}

/* One progressive filling over the region's flows; returns 1 when the
 * region has to grow (the outside resources to add are in X). */
static int solve_region(cl_cluster *c)
{
    cl_mm *m = c->mm;
    nic *nics = c->nics;
    msg_slot *sl = c->slots;
    uint32_t ep = next_epoch(c), n2 = 2 * (uint32_t)c->n;
    /* the flows through the region, and the resources they also cross */
    m->nF = m->nB = m->nh = m->nX = m->nC = 0;
    size_t tot = 0;
    uint32_t most = 0;
    for (size_t a = 0; a < m->nS; a++) {
        nic *q = &nics[m->S[a]];
        q->s_stamp = ep;
        tot += q->n_act;
        if (q->n_act > most)
            most = q->n_act;
        q->rem = cl_i_res_cap(c, m->S[a]);
        q->cnt = q->n_act;
        q->max_frozen = 0;
        if (q->cnt > 0)
            q->share = q->rem / q->cnt;
    }
    m->s_max_act = most;
    if (m->capF < tot)
        cl_i_grow_u32(&m->F, &m->capF, tot);
    for (size_t a = 0; a < m->nS; a++) {
        const nic *q = &nics[m->S[a]];
        for (uint32_t f = 0; f < q->n_act; f++) {
            uint32_t k = q->act[f];
            if (sl[k].mm_stamp != ep) {
                sl[k].mm_stamp = ep;
                sl[k].mm_fixed = 0;
                m->F[m->nF++] = k;
            }
        }
    }
    /* a flow crosses a resource of S, so at most one other each */
    if (m->capB < m->nF)
        cl_i_grow_u32(&m->B, &m->capB, m->nF);
    if (m->capC < m->nF)
        cl_i_grow_u32(&m->C, &m->capC, m->nF);
    for (size_t a = 0; a < m->nF; a++) {
        uint32_t k = m->F[a];
        const msg_slot *s = &sl[k];
        double room = INFINITY;
        for (int d = 0; d < 2; d++) {
            if (!s->in_res[d])
                continue;
            uint32_t r = cl_i_flow_res(c, k, d);
            nic *q = &nics[r];
            if (q->s_stamp != ep && q->b_stamp != ep) {
                if (q->uni)   /* a flow of it is no longer alone here */
                    cl_i_ps_materialize(c, r);
                q->b_stamp = ep;
                m->B[m->nB++] = r;
            }
            double cap = cl_i_res_cap(c, r);
            if (cap < room)
                room = cap;
        }
        if (s->bw < room)   /* a cap that can bind */
            m->C[m->nC++] = k;
    }
    int scan = m->nS + m->nB + m->nC <= SCAN_MAX && !c->cfg.fair_heap_only;
    uint32_t frozen = 0;   /* flows outside the region at its boundary */
    for (size_t a = 0; a < m->nB; a++) {
        uint32_t r = m->B[a];
        nic *q = &nics[r];
        double used = 0, mx = 0;
        uint32_t cnt = 0;
        for (uint32_t f = 0; f < q->n_act; f++) {
            const msg_slot *s = &sl[q->act[f]];
            if (s->mm_stamp == ep) {
                cnt++;
            } else {
                used += s->rate;
                if (s->rate > mx)
                    mx = s->rate;
            }
        }
        q->rem = cl_i_res_cap(c, r) - used;
        q->cnt = cnt;
        q->max_frozen = mx;
        q->frozen = q->n_act - cnt;
        frozen += q->frozen;
        if (!(q->rem > 0)) {   /* saturated by frozen flows: solve it too */
            q->x_stamp = ep;
            cl_i_push_u32(&m->X, &m->nX, &m->capX, r);
        }
        q->share = share_of(q);
    }
    if (m->nX > 0)
        return 1;
    if (!scan) {
        for (size_t a = 0; a < m->nS; a++)
            if (nics[m->S[a]].cnt > 0)
                heap_push(m, nics[m->S[a]].share, m->S[a], ++nics[m->S[a]].hver);
        for (size_t a = 0; a < m->nB; a++)
            heap_push(m, nics[m->B[a]].share, m->B[a], ++nics[m->B[a]].hver);
        for (size_t a = 0; a < m->nC; a++)
            heap_push(m, sl[m->C[a]].bw, n2 + m->C[a], 0);
    }
    /* raise the level: the smallest share saturates its resource next;
     * the level never goes down, so rounding cannot give a rate of 0 */
    double level = 0;
    size_t unfixed = m->nF;
    while (unfixed > 0) {
        double share = 0;
        uint32_t id = UINT32_MAX;
        if (scan) {
            scan_min(c, m->S, m->nS, &share, &id);
            scan_min(c, m->B, m->nB, &share, &id);
            for (size_t a = 0; a < m->nC; a++) {
                uint32_t k = m->C[a], cid = n2 + k;
                if (!sl[k].mm_fixed
                    && (id == UINT32_MAX || sl[k].bw < share || (sl[k].bw == share && cid < id))) {
                    share = sl[k].bw;
                    id = cid;
                }
            }
            if (id == UINT32_MAX)
                break;
        } else {
            if (m->nh == 0)
                break;
            mm_ent e = heap_pop(m);
            if (e.id < n2 && (e.ver != nics[e.id].hver || nics[e.id].cnt == 0))
                continue;
            if (e.id >= n2 && sl[e.id - n2].mm_fixed)
                continue;
            share = e.share;
            id = e.id;
        }
        double x = share > level ? share : level;
        level = x;
        if (id >= n2) {   /* a flow's cap */
            uint32_t k = id - n2;
            fix_flow(c, k, sl[k].bw, (int32_t)(2 * (uint32_t)sl[k].msg.from), UINT32_MAX, scan);
            unfixed--;
        } else {
            saturate(c, id, x, ep, &unfixed, scan);
        }
    }
    assert(unfixed == 0);
    /* an outside resource joins when a flow of the region changed its
     * rate there, or is held there below a frozen flow (one without
     * frozen flows is solved exactly as if it were in S already) */
    for (size_t a = 0; a < m->nF && frozen > 0; a++) {
        const msg_slot *s = &sl[m->F[a]];
        for (int d = 0; d < 2; d++) {
            if (!s->in_res[d])
                continue;
            uint32_t r = cl_i_flow_res(c, m->F[a], d);
            nic *q = &nics[r];
            if (q->b_stamp != ep || q->x_stamp == ep || q->frozen == 0)
                continue;
            if (s->mm_rate != s->rate
                || (s->mm_owner == (int32_t)r && s->mm_rate < q->max_frozen)) {
                q->x_stamp = ep;
                cl_i_push_u32(&m->X, &m->nX, &m->capX, r);
            }
        }
    }
    return m->nX > 0;
}

/* Re-solves after the flows of the resources in S changed (S filled by
 * region_add under the current epoch), commits the rates that changed and
 * reschedules the completion events that moved. */
void cl_i_mm_solve(cl_cluster *c)
{
    cl_mm *m = c->mm;
    m->work.solves++;
    while (solve_region(c))
        for (size_t a = 0; a < m->nX; a++)
            cl_i_push_u32(&m->S, &m->nS, &m->capS, m->X[a]);   /* not in S: x_stamp */
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
            cl_i_mm_mark_dirty(c, s->owner);
            cl_i_mm_mark_dirty(c, s->mm_owner);
        } else if (s->mm_owner != s->owner) {
            cl_i_mm_mark_dirty(c, s->owner);
            cl_i_mm_mark_dirty(c, s->mm_owner);
        }
        s->owner = s->mm_owner;
    }
    if (m->s_max_act >= PS_MIN_FLOWS)   /* (S is the last fill's region) */
        for (size_t a = 0; a < m->nS; a++)
            if (c->nics[m->S[a]].n_act >= PS_MIN_FLOWS)
                cl_i_ps_try_enter(c, m->S[a]);
    m->nS = 0;
    next_epoch(c);   /* S is empty again */
}

/* The completion event of resource r: the earliest end of its flows. */
static void reschedule(cl_cluster *c, uint32_t r)
{
    nic *q = &c->nics[r];
    double first = INFINITY;
    if (q->uni) {
        first = cl_i_ps_first_end(c, r);
    } else {
        for (uint32_t f = 0; f < q->n_act; f++) {
            const msg_slot *s = &c->slots[q->act[f]];
            if (s->owner != (int32_t)r)
                continue;
            double t = s->t_last + s->rem / s->rate;
            if (t < first)
                first = t;
        }
    }
    if (first == q->sched_t)
        return;   /* the pending event stands */
    q->version = (q->version + 1) & VER_MASK;
    q->sched_t = first;
    if (first < INFINITY)
        cl_i_schedule(c, first, CL_EV_NIC, (int)(r >> 1), (q->version << 1) | (r & 1));
}

void cl_i_mm_reschedule_dirty(cl_cluster *c)
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

