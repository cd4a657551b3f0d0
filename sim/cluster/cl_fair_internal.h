/* cl_fair_internal.h -- what the three files of the fair network share:
 * the flows, links and events (cl_net_fair.c), the general max-min solve
 * and the completion events (cl_net_maxmin.c), and the resources whose
 * flows all share them equally, kept in virtual time (cl_net_ps.c).
 * Nothing outside sim/cluster/cl_net_*.c includes it.
 */
#ifndef CL_FAIR_INTERNAL_H
#define CL_FAIR_INTERNAL_H

#include "cl_internal.h"

/* One entry of the progressive filling heap: a resource's share (id <
 * 2n) or a flow's cap (id = 2n + slot). */
typedef struct mm_ent {
    double   share;
    uint32_t id, ver;
} mm_ent;

/* The solver's scratch (cl_net_maxmin.c) and the lists the three files
 * fill: S the region to solve, D the resources whose completion event may
 * have moved. */
typedef struct cl_mm {
    uint32_t *S, *B, *F, *X, *D, *done, *C;   /* C: the region's flows whose cap can bind */
    size_t    nS, nB, nF, nX, nD, ndone, nC;
    size_t    capS, capB, capF, capX, capD, capdone, capC;
    mm_ent   *h;
    size_t    nh, caph;
    uint32_t  epoch;      /* stamps: region, boundary, flows, expansion */
    uint32_t  d_epoch;    /* reschedule marks */
    int       flush_pending;  /* a flush event is queued at now */
    uint32_t  s_max_act;  /* the most flows of a resource of the region solved */
    cl_fair_work work;    /* counters (cl_fair_work_done) */
    int       defer;      /* a uniform resource changed twice at now:
                           * completion events wait for the flush */
} cl_mm;

/* A uniform resource (cl_net_ps.c): every flow through it is alone at its
 * other resource and held here at cap / n_act.  Each flow's end is kept
 * as a tag in the per-flow service v of the resource (v grows by x per
 * second), so a start or an end changes three numbers and two heaps, not
 * every flow's bytes. */
typedef struct ps_ent {
    double   key;
    uint32_t k, ser;
} ps_ent;

typedef struct cl_ps {
    double   v, t, x;      /* per-flow service at t; per-flow rate */
    double   chg_t;        /* its last start or end (-1: none yet) */
    ps_ent  *th, *lh;      /* tags (ends) and limits (caps), lazily deleted */
    uint32_t nth, cth, nlh, clh;
} cl_ps;

/* Makes room for need entries in *a (capacity *cap), doubling. */
void cl_i_grow_u32(uint32_t **a, size_t *cap, size_t need);

static inline void cl_i_push_u32(uint32_t **a, size_t *n, size_t *cap, uint32_t v)
{
    if (*n == *cap)
        cl_i_grow_u32(a, cap, *n + 1);
    (*a)[(*n)++] = v;
}

static inline double cl_i_res_cap(const cl_cluster *c, uint32_t r)
{
    const node *nd = &c->nodes[r >> 1];
    return (r & 1) ? nd->down_cap : nd->up_cap;
}

/* Resource d (0: uplink, 1: downlink) of flow k. */
static inline uint32_t cl_i_flow_res(const cl_cluster *c, uint32_t k, int d)
{
    const msg_slot *s = &c->slots[k];
    return d ? 2 * (uint32_t)s->msg.to + 1 : 2 * (uint32_t)s->msg.from;
}

/* cl_net_maxmin.c: the solve of the region (and the uniform check of its
 * large resources); the completion events of the marked resources. */
void cl_i_mm_solve(cl_cluster *c);
void cl_i_mm_reschedule_dirty(cl_cluster *c);

/* cl_net_ps.c.  Resources with at least PS_MIN_FLOWS flows after a solve
 * are checked for uniformity (fewer are cheap to solve). */
#define PS_MIN_FLOWS 16
/* Makes r uniform when it qualifies (after a solve): 1 when it did. */
int  cl_i_ps_try_enter(cl_cluster *c, uint32_t r);
/* Gives r's flows explicit bytes and rates again (r stops being uniform;
 * rates unchanged). */
void cl_i_ps_materialize(cl_cluster *c, uint32_t r);
/* The uniform resource that new flow k (in no resource yet; two: it will
 * cross both its uplink and its receiver's downlink) may join with a fair
 * share within its limit, its other resource being empty; -1 when the
 * general solve has to place it.  cl_i_ps_add then puts k, which has
 * joined its resources, into u's virtual time. */
int32_t cl_i_ps_pick(cl_cluster *c, uint32_t k, int two);
void cl_i_ps_add(cl_cluster *c, uint32_t u, uint32_t k);
/* Flow k of a uniform resource u leaves: cl_i_ps_remove before it leaves
 * its resources, cl_i_ps_settle(u) after: 1 when u is still uniform, 0
 * when u had to be made explicit (the general solve does the rest). */
void cl_i_ps_remove(cl_cluster *c, uint32_t k);
int  cl_i_ps_settle(cl_cluster *c, uint32_t u);
/* Earliest end among the flows of uniform resource r (INFINITY: none). */
double cl_i_ps_first_end(cl_cluster *c, uint32_t r);
/* The flows of uniform r that end by now, in the order of r's act, into
 * c->mm->done. */
void cl_i_ps_collect_done(cl_cluster *c, uint32_t r, double now);
/* Bytes left of flow k at time now and its rate (uniform or not). */
double cl_i_ps_flow_left(const cl_cluster *c, uint32_t k, double now, double *rate);

/* cl_net_maxmin.c's marks, inline on the paths of every start and end:
 * resource r joins the region to solve; r's completion event may have
 * moved. */
static inline void cl_i_mm_region_add(cl_cluster *c, uint32_t r)
{
    cl_mm *m = c->mm;
    nic *q = &c->nics[r];
    if (q->uni)
        cl_i_ps_materialize(c, r);
    if (q->s_stamp == m->epoch)
        return;
    q->s_stamp = m->epoch;
    cl_i_push_u32(&m->S, &m->nS, &m->capS, r);
}

static inline void cl_i_mm_mark_dirty(cl_cluster *c, int32_t r)
{
    if (r < 0)
        return;
    cl_mm *m = c->mm;
    nic *q = &c->nics[r];
    if (q->d_stamp == m->d_epoch)
        return;
    q->d_stamp = m->d_epoch;
    cl_i_push_u32(&m->D, &m->nD, &m->capD, (uint32_t)r);
}

#endif
