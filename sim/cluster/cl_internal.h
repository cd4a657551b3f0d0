/* cl_internal.h -- what the files of the cluster share and nobody else
 * sees: the node, message slot, NIC and environment-item records, and the
 * calls between nodes and steps (cl_cluster.c), network (cl_net.c, and
 * the fair-sharing NIC in cl_net_fair.c) and slowdowns and availability
 * (cl_env.c).
 */
#ifndef CL_INTERNAL_H
#define CL_INTERNAL_H

#include "cl_cluster.h"

#include <stddef.h>
#include <gsl/gsl_rng.h>

/* A message in flight.  Lines 0 and 1 (128 bytes) hold everything the
 * FIFO path touches: a FIFO message is two cache lines, written from
 * scratch when it is sent (slot_alloc clears only them) and read at its
 * delivery.  Line 2 holds the fair discipline's own fields; under FIFO it
 * is neither cleared nor read (cl_net.c guards every call into the fair
 * code with c->nics).  The array is 64-byte aligned (slot_alloc). */
typedef struct msg_slot {
    /* line 0 */
    cl_msg   msg;
    double   up_start;    /* first bit left the sender */
    double   up_end;      /* last bit left the sender (fair: once known) */
    /* line 1 */
    double   lat;         /* propagation delay of this message */
    double   rx_start;    /* first bit at the receiver */
    double   mem;         /* bytes it holds (counted in cl_cluster.msg_mem) */
    union {
        struct {
            double rem, rate, t_last;   /* fair flow: bytes left at t_last, its rate */
        };
        struct {   /* FIFO: booked in its receiver's downlink queue (in_dq) */
            double   rx_end;    /* its delivery: last bit through the downlink */
            uint64_t tseq;      /* transmission order (ties of rx_start) */
            uint32_t dq_prev, dq_next;   /* neighbours in that queue */
        };
    };
    uint32_t cls;
    uint16_t retries;     /* transmissions after the first */
    uint8_t  live;
    uint8_t  ev_pending;  /* an ARRIVE or DELIVER event refers to it */
    uint8_t  rx_counted;  /* counted in the receiver's rx_active */
    uint8_t  dead;        /* lost: dropped at its pending event */
    uint8_t  lost;        /* lost on the wire: dropped at the receiver */
    uint8_t  up_known;    /* up_end is final */
    uint8_t  retry_wait;  /* dropped; a CL_EV_RETRY will send it again */
    uint8_t  in_dq;       /* FIFO: in its receiver's downlink queue */
    /* line 2: fair only */
    double   bw;          /* fair: its link's bandwidth */
    double   rx_done;     /* zero-byte fair message: when received, or -1 */
    double   mm_rate;     /* fair: the rate a max-min solve is computing */
    double   tag;         /* fair: its end in psr's per-flow service */
    uint32_t next_up;     /* fair: next message of the same link */
    uint32_t pos[2];      /* fair flow: index in its uplink's / downlink's act */
    int32_t  owner, mm_owner; /* fair flow: the resource whose event ends it */
    uint32_t mm_stamp;    /* fair: solve marks */
    int32_t  psr;         /* fair: the uniform resource holding it, or -1 */
    uint32_t ps_ser;      /* fair: its entries in psr's heaps (cl_net_ps.c) */
    uint8_t  in_res[2];   /* fair: a flow through its sender's uplink / receiver's downlink */
    uint8_t  queued_up;   /* fair: in its link's queue at a fair uplink */
    uint8_t  mm_fixed;    /* fair: its rate is fixed in the solve in progress */
} __attribute__((aligned(64))) msg_slot;
/* what a FIFO message touches, and slot_alloc clears under FIFO */
#define SLOT_FIFO_BYTES offsetof(msg_slot, bw)
_Static_assert(offsetof(msg_slot, lat) == 64 && SLOT_FIFO_BYTES == 128
               && sizeof(msg_slot) % 64 == 0, "msg_slot: the FIFO fields in lines 0 and 1");

/* One link (peer) at a node's uplink: in fair mode the messages of one
 * link pass the network one after the other (FIFO per link, sharing
 * between links); last_arrival and last_deliver keep jitter from
 * reordering the link. */
typedef struct pairq {
    int      peer;
    uint32_t head, tail;
    double   last_arrival, last_deliver;
} pairq;

typedef struct pairs {
    pairq  *p;      /* sorted by peer */
    size_t  n, cap;
} pairs;

#define NO_SLOT UINT32_MAX

/* A resource of the fair network (cl_net_fair.c): node i's uplink is
 * resource 2i, its downlink 2i + 1.  act holds the flows through it; the
 * rest is the max-min solver's and the completion event's state. */
typedef struct nic {
    uint32_t *act;        /* slot ids of its flows (order: see cl_net_fair.c) */
    uint32_t  n_act, cap_act;
    uint32_t  version;    /* completion events of older versions are stale */
    uint32_t  s_stamp, b_stamp, x_stamp, d_stamp;  /* solve and reschedule marks */
    uint32_t  cnt, hver;  /* solve: unfixed flows, heap entry version */
    uint32_t  frozen;     /* solve: its flows outside the region */
    double    rem;        /* solve: capacity not yet given out */
    double    share;      /* solve (small regions): its current fair share */
    double    max_frozen; /* solve: largest rate of its flows outside the region */
    double    sched_t;    /* time of its pending completion event, or INFINITY */
    double    busy_since; /* uplink: when its flows last went from 0 to 1 */
    struct cl_ps *ps;     /* uniform state, allocated when first uniform */
    uint8_t   uni;        /* uniform now (cl_net_ps.c) */
} nic;

#define UPQ_INLINE 2   /* last-bit times a node's uplink ring holds inline */

/* Laid out by who touches it: at 10^5 nodes and more the node array is
 * far larger than the last-level cache and nearly every event misses on
 * its node, so each kind of touch should cost one line.  Line 0 holds
 * what a message's receiver needs (booking in its downlink queue, the
 * delivery, the lazy arrival count, the accounting, the pending count),
 * so a neighbour's send and a delivery touch line 0 and, for the
 * delivery, the counters; line 1 holds the counters every step and
 * message writes (cl_node_stats's first 64 bytes); line 2 the rest of the
 * counters and the uplink; lines 3-4 the step in progress (a step
 * without marks or noise touches nothing after them); the marks, the
 * noise parameters, the other streams, link and availability fields after
 * them.  The array is 64-byte aligned and a node a whole number of lines
 * (cl_create), so no group straddles two lines. */
typedef struct node {
    /* line 0: the receiver's side and every event's dispatch */
    uint32_t pending;    /* its own scheduled events (target = node) */
    int      n_down;     /* fault processes holding it down */
    int      computing;
    int      rx_active;  /* transfers in the downlink stage */
    /* FIFO downlink: the messages booked and not yet delivered, in the
     * order their first bits arrive (rx_start, then tseq); dq_cnt is the
     * first of them not yet counted in rx_active (their arrivals are
     * counted lazily, at the next accounting at or after rx_start);
     * dq_base is when the downlink was last free of them */
    uint32_t dq_head, dq_tail, dq_cnt;
    uint32_t step_ver;
    double   acct_t;     /* time accounting (compute / network / idle / down) */
    double   dq_base;
    double   down_cap;
    double   up_free;    /* FIFO: when the uplink is free */
    /* lines 1-2: the counters, the hot ones in line 1 */
    cl_node_stats st;
    /* line 2: the uplink backlog: messages whose last bit has not left
     * (FIFO: a ring of their last-bit times, released lazily, in upq_in
     * while it holds at most UPQ_INLINE; fair: counted at entry and exit
     * of the uplink stage) */
    double   up_cap;
    double  *upq;
    uint32_t upq_head, upq_len, upq_cap;
    /* line 3: the step in progress: work left (seconds at factor 1) since
     * seg_start */
    uint64_t upq_n;
    double   upq_in[UPQ_INLINE];
    int      paused, want_step;
    int      seg_pending;   /* the STEP_DONE of step_ver may still be queued */
    int      n_marks, next_mark;
    int      noisy;      /* noise.dist is not constant (noise is read only then) */
    double   step_started;
    gsl_rng *rng_compute;
    /* line 4 */
    double   seg_start, seg_len, work_left;
    double   factor;     /* current slowdown factor */
    double   base_s;
    double   scale;      /* work of a step per base_s (its batch over the base batch) */
    double   work_scale;   /* the step's work in steps of base_s (1; cl_start_step_work) */
    double   work_total;
    /* line 5: progress marks of the step in progress (borrowed from the
     * caller; read only while n_marks > 0, so a step without marks does
     * not write it): mark k falls when marks[k] of the step's work_total
     * is done */
    const double *marks;
    cl_noise_spec noise;
    gsl_rng *rng_slow, *rng_fault;
    gsl_rng *rng_link, *rng_loss;
    pairs    upp;                  /* links by destination */
    /* availability */
    double   down_since;
    uint32_t env_first, env_end;   /* its environment items */
} __attribute__((aligned(64))) node;
_Static_assert(offsetof(node, st) == 64 && offsetof(node, up_cap) == 160
               && offsetof(node, upq_n) == 192 && offsetof(node, seg_start) == 256
               && offsetof(node, marks) == 320 && sizeof(node) % 64 == 0,
               "node: the groups of its lines");

/* One (process, node) pair of a slowdown or fault process. */
typedef struct env_item {
    int      node;
    uint32_t proc;       /* index into slowdowns or faults */
    uint8_t  is_fault;
    uint8_t  active;     /* slowdown in force / node held down */
    uint8_t  counted;    /* its pending event counts as progress */
    size_t   next;       /* trace: next point; periodic: cycle */
    double   value;      /* trace: current factor */
} env_item;

struct cl_cluster {
    cl_config     cfg;
    sim_engine   *eng;
    cl_callbacks  cb;
    int           n;
    node         *nodes;
    cl_pool       pool;
    cl_pool       len_pools[CL_LEN_POOLS];   /* cl_buf_get_len's, capacity 0 unused */
    msg_slot     *slots;
    uint32_t      n_slots, n_free;
    uint64_t     *free_bits;      /* bit k % 64 of word k / 64: slot k is free */
    uint64_t     *free_sum;       /* bit w % 64 of word w / 64: free_bits[w] != 0 */
    uint32_t      free_lo;        /* no free_sum word below this one is nonzero */
    uint64_t      pending, in_flight, total_steps;
    cl_slowdown  *slows;
    cl_fault     *faults;
    env_item     *items;
    uint32_t      n_items;
    cl_link_class *classes;
    size_t        n_classes;
    cl_link_rule *rules;
    size_t        n_rules;
    int           any_jitter;
    nic          *nics;     /* fair: 2 n resources (NULL under FIFO) */
    struct cl_mm *mm;       /* fair: the max-min solver's scratch */
    uint32_t      slot_target0;   /* engine target of slot 0's delivery (FIFO) */
    uint64_t      cur_seq;        /* seq of the event being handled */
    uint32_t      ev_node;        /* receiver of the FIFO delivery last handled */
    double        msg_mem, upq_bound;   /* what live messages hold, its bound */
    int           upq_flood;            /* first sender past the bound, or -1 */
};

/* cl_net.c: message k enters (+1) or leaves (-1) a fair uplink stage */
void cl_i_upq_fair(cl_cluster *c, uint32_t k, int delta);
double cl_i_fair_up_idle_s(const cl_cluster *c, int i);

/* Schedules a cluster event targeted at node target (counted as pending). */
void cl_i_schedule(cl_cluster *c, double at, uint32_t kind, int target, uint32_t data);
/* Classifies the time since node i's last accounting as compute, network,
 * idle or down; call before anything that changes its state. */
void cl_i_account(cl_cluster *c, int i);
/* The same at time t (now or earlier, not before the last accounting). */
void cl_i_account_at(cl_cluster *c, int i, double t);
void cl_i_trace(cl_cluster *c, int node, const char *kind, double start, double end,
                int peer, double bytes);

/* cl_cluster.c: node i's slowdown factor becomes f; the step in progress
 * continues at the new rate */
void cl_i_set_factor(cl_cluster *c, int i, double f);
/* cl_cluster.c: one more (+1) or one fewer (-1) process holds node i down;
 * the node goes down or comes back when the count leaves or reaches 0 */
void cl_i_hold(cl_cluster *c, int i, int delta);

/* cl_net.c */
int  cl_i_net_init(cl_cluster *c, const cl_config *cfg);
void cl_i_net_fini(cl_cluster *c);
void cl_i_on_arrive(cl_cluster *c, uint32_t k);
void cl_i_on_deliver(cl_cluster *c, uint32_t k);
void cl_i_on_nic(cl_cluster *c, int node, uint32_t data);
/* The retransmission of message k is due (cl_net.c). */
void cl_i_on_retry(cl_cluster *c, uint32_t k);
/* Loses what node i's departure takes with it (see cl_msg_policy). */
void cl_i_net_node_down(cl_cluster *c, int i);
/* Link (i, j)'s record at a node's NIC, created when missing; valid until
 * the next creation in the same list. */
pairq *cl_i_pair_get(pairs *ps, int peer);
/* 1 when time t falls in one of link class k's outage windows. */
int  cl_i_in_outage(const cl_link_class *k, double t);
/* A jitter draw of class k (0 without jitter). */
double cl_i_draw_jitter(const cl_link_class *k, gsl_rng *r);
/* Schedules the first bit of message k at its receiver (latency, jitter). */
void cl_i_schedule_arrive(cl_cluster *c, uint32_t k);
/* Schedules delivery of message k once both of its stages are known. */
void cl_i_try_deliver(cl_cluster *c, uint32_t k);

/* cl_net_fifo.c: the FIFO downlink queues.  cl_i_dq_insert books message
 * k (rx_start and tseq set) at its receiver and schedules its delivery;
 * cl_i_dq_unlink takes it out (with reflow: it never held the downlink,
 * those after it are delivered again without it); cl_i_dq_cancel cancels
 * its delivery event (counted: still in the pending counts);
 * cl_i_dq_unbook turns a booked message whose sender went down before its
 * first bit arrived into one dropped at an arrival event; cl_i_dq_count
 * counts in node i's rx_active the booked arrivals due by now, each
 * accounted at its own instant (cl_i_account calls it). */
void cl_i_dq_insert(cl_cluster *c, uint32_t k);
void cl_i_dq_unlink(cl_cluster *c, uint32_t k, int reflow);
void cl_i_dq_cancel(cl_cluster *c, uint32_t k, int counted);
void cl_i_dq_unbook(cl_cluster *c, uint32_t k);
void cl_i_dq_count(cl_cluster *c, int i);
/* Drops message k now (no event refers to it any more). */
void cl_i_drop(cl_cluster *c, uint32_t k);

/* cl_net_fair.c (and cl_i_on_nic above): message k joins its link's queue
 * at the sender; cl_i_fair_leave takes it out of the network (its flow and
 * its link's queue); cl_i_fair_init / _fini hold the resources. */
int  cl_i_fair_init(cl_cluster *c);
void cl_i_fair_fini(cl_cluster *c);
void cl_i_fair_enter(cl_cluster *c, uint32_t k);
void cl_i_fair_leave(cl_cluster *c, uint32_t k);
/* The flush event (CL_EV_NIC on target n): solves this instant's changes. */
void cl_i_fair_flush(cl_cluster *c);
/* Node i's uplink carries a fair flow now. */
static inline int cl_i_fair_up_busy(const cl_cluster *c, int i)
{
    return c->nics && c->nics[2 * i].n_act > 0;
}

/* cl_env.c */
int  cl_i_env_init(cl_cluster *c);
void cl_i_env_fini(cl_cluster *c);
void cl_i_on_env(cl_cluster *c, uint32_t item);

#endif
