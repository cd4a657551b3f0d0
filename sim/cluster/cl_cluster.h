/* cl_cluster.h -- the simulated machines: nodes that compute in simulated
 * time, and a network that carries messages with opaque payloads.  A
 * node's k-th step has work base_i * noise_ik seconds (base_i already
 * includes its group's slowdown), done at rate 1/slowdown_i(t): when a
 * time-varying slowdown changes during a step, the remaining work proceeds
 * at the new rate (piecewise integration).  The cluster tells its caller
 * when a step begins (on_step_start: the moment its math is taken) and
 * when it ends (on_step_done); what a step computes is the caller's.  A message from i to j
 * passes i's uplink, propagates for the latency, then passes j's downlink
 * (cut-through: a message is never received faster than it was sent).  A
 * NIC serves its transfers one at a time (FIFO), or all transfers share
 * the NICs max-min fairly, each a flow through the sender's uplink and the
 * receiver's downlink at once (fair; cl_net_fair.c).  Nodes may go down and
 * come back: a down node computes, sends and receives nothing.
 *
 * The cluster schedules its own events on the engine and hands them to the
 * algorithm through callbacks; it knows nothing of which algorithm runs, of
 * models, gradients, JSON or graphs: it deals in time, bytes and payload
 * buffers.  It is split by job: cl_cluster.c (nodes and steps),
 * cl_net.c (links and NICs), cl_env.c (slowdowns and availability).
 */
#ifndef CL_CLUSTER_H
#define CL_CLUSTER_H

#include <stddef.h>
#include <stdint.h>
#include "sim_engine.h"
#include "cl_buf.h"

typedef struct cl_cluster cl_cluster;

/* Event kinds the cluster owns; the caller routes them to cl_handle_event.
 * Kinds >= CL_EV_USER are free for the caller. */
enum { CL_EV_STEP_DONE = 1, CL_EV_ARRIVE = 2, CL_EV_DELIVER = 3,
       CL_EV_TIMER = 4, CL_EV_ENV = 5, CL_EV_NIC = 6, CL_EV_RETRY = 7, CL_EV_MARK = 8,
       CL_EV_USER = 16 };

/* Step-time noise: a dimensionless factor on the base step time.  Every
 * distribution but uniform has mean 1 (normal: before truncation), so the
 * base step time is the mean step time. */
typedef enum cl_noise {
    CL_NOISE_CONSTANT = 0,  /* factor 1 */
    CL_NOISE_UNIFORM,       /* U(low, high) */
    CL_NOISE_EXPONENTIAL,   /* Exp(mean 1) */
    CL_NOISE_LOGNORMAL,     /* exp(N(-sigma^2/2, sigma^2)), mean 1 */
    CL_NOISE_NORMAL,        /* N(1, sigma^2) redrawn while < floor */
    CL_NOISE_SHIFTED_EXPONENTIAL, /* shift + (1 - shift) Exp(mean 1) */
    CL_NOISE_GAMMA,         /* Gamma(shape, scale 1/shape), mean 1 */
    CL_NOISE_PARETO         /* Pareto(alpha, x_m = (alpha-1)/alpha), mean 1 */
} cl_noise;

typedef struct cl_noise_spec {
    cl_noise dist;
    double   low, high;     /* uniform */
    double   sigma;         /* lognormal, normal */
    double   floor;         /* normal: 0 <= floor < 1 */
    double   shift;         /* shifted exponential: 0 <= shift < 1 */
    double   shape;         /* gamma: > 0 */
    double   alpha;         /* pareto: > 1 */
} cl_noise_spec;

/* One point of a trace: from time_s on, node's value is value (a slowdown
 * factor, or 1 = up / 0 = down for availability). */
typedef struct cl_point {
    int    node;
    double time_s;
    double value;
} cl_point;

/* A time-varying slowdown: the node's rate is divided by factor while the
 * process is active.  Several processes on one node multiply. */
typedef enum cl_slow_kind {
    CL_SLOW_WINDOW = 0,   /* active on [start_s, end_s) */
    CL_SLOW_MARKOV,       /* two states, exponential sojourns */
    CL_SLOW_PERIODIC,     /* active on [phase + k period, + duration) */
    CL_SLOW_TRACE         /* factor given by points */
} cl_slow_kind;

typedef struct cl_slowdown {
    cl_slow_kind kind;
    const int *nodes;      /* sorted; NULL: every node (not used by TRACE) */
    size_t     n_nodes;
    double     factor;     /* > 0 */
    double     start_s, end_s;              /* window */
    double     mean_slow_s, mean_normal_s;  /* markov */
    double     period_s, duration_s, phase_s;  /* periodic, duration < period */
    const cl_point *points;   /* trace: sorted by node then time */
    size_t     n_points;
} cl_slowdown;

/* Availability: when nodes are down. */
typedef enum cl_fault_kind {
    CL_FAULT_SCHEDULE = 0, /* down on [down_s, up_s); up_s INFINITY: for good */
    CL_FAULT_EXPONENTIAL,  /* up for Exp(mtbf_s), down for Exp(mttr_s), ... */
    CL_FAULT_TRACE         /* points with value 1 (up) or 0 (down) */
} cl_fault_kind;

typedef struct cl_fault {
    cl_fault_kind kind;
    const int *nodes;      /* sorted; NULL: every node (not used by TRACE) */
    size_t     n_nodes;
    double     down_s, up_s;
    double     mtbf_s, mttr_s;
    const cl_point *points;
    size_t     n_points;
} cl_fault;

/* What a node that goes down loses. */
typedef enum cl_step_policy {
    CL_STEP_RESTART = 0,  /* the step's work is lost; it starts over on return */
    CL_STEP_RESUME        /* the remaining work continues on return */
} cl_step_policy;
typedef enum cl_msg_policy {
    CL_MSG_DROP = 0,      /* every undelivered message from or to it is lost */
    CL_MSG_KEEP_SENT      /* messages whose last bit had left it still arrive */
} cl_msg_policy;

/* Extra propagation delay per message, seconds. */
typedef enum cl_jitter {
    CL_JITTER_NONE = 0,
    CL_JITTER_UNIFORM,      /* U(a, b) */
    CL_JITTER_EXPONENTIAL   /* Exp(mean a) */
} cl_jitter;

typedef struct cl_window {
    double start_s, end_s;
} cl_window;

/* What links of one class do to a message. */
typedef struct cl_link_class {
    double    latency_s;
    double    bandwidth_Bps;   /* no transfer on such a link goes faster */
    cl_jitter jitter;
    double    jitter_a, jitter_b;
    double    loss;            /* probability that a message is lost, [0, 1) */
    const cl_window *outages;  /* a message whose first bit leaves during one is lost */
    size_t    n_outages;
} cl_link_class;

/* Links from a node of `from` to a node of `to` (and back unless
 * directed) belong to class cls; the last rule that matches a pair wins,
 * class 0 when none does. */
typedef struct cl_link_rule {
    const int *from, *to;      /* sorted; NULL: every node */
    size_t     n_from, n_to;
    int        directed;
    uint32_t   cls;
} cl_link_rule;

#define CL_RETRANSMIT_MAX_TIMEOUT_S 120.0   /* Linux's TCP_RTO_MAX */

typedef enum cl_discipline {
    CL_NIC_FIFO = 0,      /* one transfer at a time, in order */
    CL_NIC_FAIR           /* max-min fair sharing over the route (up, down) */
} cl_discipline;

/* One row of the timeline (trace.csv).  kind: "step" (a step computed,
 * possibly interrupted), "send" (a transfer through the node's uplink),
 * "recv" (first bit at the downlink to delivery), "down", "lost" (a
 * message dropped: end_s is when). peer -1 and bytes 0 when not a
 * transfer. */
typedef struct cl_trace_rec {
    int         node;
    const char *kind;
    double      start_s, end_s;
    int         peer;
    double      bytes;
} cl_trace_rec;

/* What the cluster calls; ctx is passed back untouched. */
typedef struct cl_callbacks {
    void *ctx;
    /* A step begins computing now (cl_start_step, or the node's return
     * when its step was deferred or restarted; not when a resumed step
     * continues).  May be NULL. */
    void (*on_step_start)(void *ctx, int node);
    void (*on_step_done)(void *ctx, int node);
    /* Mark k (0-based) of a step started with cl_start_step_marks: that
     * fraction of the step's work is done.  Every mark of a step comes
     * before its on_step_done, in order; a restarted step gives its marks
     * again from mark 0 (after its new on_step_start), a resumed one goes
     * on from the next; an aborted one gives no more.  May be NULL when no
     * step has marks. */
    void (*on_step_mark)(void *ctx, int node, int k);
    void (*on_message)(void *ctx, int node, const cl_msg *msg);
    void (*on_timer)(void *ctx, int node, uint32_t tag);
    /* Availability changes (may be NULL); on_up runs before the node's
     * interrupted step is resumed or restarted. */
    void (*on_down)(void *ctx, int node);
    void (*on_up)(void *ctx, int node);
    /* Timeline rows, in the order the cluster learns them (may be NULL). */
    void (*on_trace)(void *ctx, const cl_trace_rec *rec);
} cl_callbacks;

typedef struct cl_config {
    int      n_nodes;
    uint64_t seed;              /* scenario seed; streams derive from it */
    const double *step_time_s;  /* n_nodes base step times incl. slowdown, > 0 */
    cl_noise noise;             /* when noise_per_node is NULL */
    double   noise_low, noise_high, noise_sigma;
    const cl_noise_spec *noise_per_node;  /* n_nodes specs, or NULL */
    double   latency_s;         /* links of class 0 when classes is NULL */
    double   bandwidth_Bps;     /* likewise, bytes per second; NIC default */
    /* link classes (copied; outages borrowed) and the rules assigning them;
     * NULL: one class from latency_s and bandwidth_Bps */
    const cl_link_class *classes;
    size_t   n_classes;
    const cl_link_rule *link_rules;
    size_t   n_link_rules;
    int      reorder;           /* jitter may reorder messages on one link */
    /* Reliable transport: a message dropped on the wire or at a down
     * receiver is sent again by its sender (if up) retransmit_timeout_s
     * after its transmission started, the timeout doubling per retry up to
     * CL_RETRANSMIT_MAX_TIMEOUT_S, at most retransmit_max times; then it is
     * lost.  0: no retransmission (a drop is final). */
    double   retransmit_timeout_s;
    int      retransmit_max;
    /* NICs: capacities in bytes per second (NULL: bandwidth_Bps); a
     * transfer never goes faster than the link bandwidth either */
    const double *up_Bps, *down_Bps;
    cl_discipline discipline;
    /* fair: 1 places every start and end by the general max-min solve
     * (no uniform resources; the same rates, for tests that compare) */
    int      fair_general_only;
    /* fair: 1 fills every region through the heap, never by scanning a
     * small region (the same rates bit for bit, for tests that compare) */
    int      fair_heap_only;
    /* time-varying slowdowns and availability (copied; points borrowed) */
    const cl_slowdown *slowdowns;
    size_t   n_slowdowns;
    const cl_fault *faults;
    size_t   n_faults;
    cl_step_policy step_policy;
    cl_msg_policy  msg_policy;
    /* doubles a pooled payload buffer holds (0: payloads carry no data, one
     * shared buffer; see cl_pool) */
    size_t   payload_doubles;
} cl_config;

/* Per-node totals for nodes.csv. */
typedef struct cl_node_stats {
    /* the first 64 bytes: what every step and message updates (the
     * cluster keeps them in one cache line of its node record) */
    uint64_t steps;
    double   compute_s;      /* seconds spent computing (finished steps and
                                interrupted parts) */
    double   uplink_busy_s;  /* seconds the uplink spent serialising */
    double   bytes_sent, bytes_received;
    uint64_t msgs_sent, msgs_received;
    double   network_s;      /* up, not computing, a transfer in its NICs */
    uint64_t msgs_lost;      /* sent by this node and never delivered */
    uint64_t msgs_retransmitted; /* transmissions after the first (each also
                                in msgs_sent and bytes_sent) */
    uint64_t steps_lost;     /* steps interrupted and restarted */
    double   down_s;         /* seconds down */
} cl_node_stats;

/* Creates the cluster on engine e, whose targets 0 .. n_nodes-1 are the
 * nodes; the cluster cancels target i when node i goes down.  Target
 * n_nodes carries the cluster's slowdown and availability events and is
 * never cancelled (the caller may share it, but not cancel it): the engine
 * needs n_nodes + 1 targets.  Slowdowns and faults in force at time 0
 * apply at once.  NULL when out of memory. */
cl_cluster *cl_create(const cl_config *cfg, sim_engine *e, cl_callbacks cb);
void        cl_destroy(cl_cluster *c);

int     cl_n_nodes(const cl_cluster *c);
double  cl_now(const cl_cluster *c);

/* Starts node's next step now: on_step_start, then the step time is
 * drawn and CL_EV_STEP_DONE scheduled; a down node's step starts when it
 * comes back.  A node runs one step at a time (starting a second one is a
 * bug). */
void cl_start_step(cl_cluster *c, int node);
/* Like cl_start_step, with m progress marks: on_step_mark(node, k) comes
 * when fractions[k] of the step's work is done (0 < fractions[0] < ... <
 * fractions[m-1] <= 1), moving with the node's slowdown as the step's end
 * does (a mark at 1 comes just before on_step_done).  fractions is
 * borrowed: it must stay valid until the step ends or is aborted.  m = 0
 * is cl_start_step.  O(1) events per mark. */
void cl_start_step_marks(cl_cluster *c, int node, const double *fractions, int m);
/* Like cl_start_step, for a step of scale (> 0) times the node's base
 * work (a part of a model's pass: split training), noise and slowdowns
 * applying as to any step; no marks.  A restarted step keeps its scale. */
void cl_start_step_work(cl_cluster *c, int node, double scale);
int  cl_is_computing(const cl_cluster *c, int node);
/* Abandons node's step in progress (e.g. a backup worker that lost the
 * race): no on_step_done comes for it.  Nothing happens when idle. */
void cl_abort_step(cl_cluster *c, int node);
int  cl_is_up(const cl_cluster *c, int node);
/* Node's mean step time now: its base step time times its current
 * slowdown factor (the noise has mean 1). */
double cl_step_time_s(const cl_cluster *c, int node);
/* Node's current slowdown factor (product of its active processes). */
double cl_slowdown_factor(const cl_cluster *c, int node);
/* Node's base step time (cl_config.step_time_s): a step of scale 1
 * before noise and time-varying slowdowns. */
double cl_base_step_time(const cl_cluster *c, int node);
/* The work of node's steps from its next one on, per base step time
 * (> 0; 1 at creation): a step lasts base * scale * noise at factor 1.
 * The trainer's per-node batch sets it to batch / base batch (compute is
 * linear in the samples of a step).  A step in progress keeps its work. */
void   cl_set_step_scale(cl_cluster *c, int node, double scale);

/* Sends a message of bytes on the wire.  payload is referenced (not
 * copied) and released after delivery; NULL for a control message.  from
 * != to.  A message from a down node is dropped at once; one to a down
 * node is dropped when it arrives. */
void   cl_send(cl_cluster *c, int from, int to, uint32_t tag, uint64_t round,
               cl_buf *payload, double bytes);

/* Seconds a message of bytes from `from` to `to` takes on idle NICs: the
 * link's latency plus bytes over the smallest of the link's bandwidth, the
 * sender's uplink and the receiver's downlink capacities (no jitter, loss
 * or outage): what a scheduler that knows the links predicts. */
double cl_link_time(const cl_cluster *c, int from, int to, double bytes);

/* Calls on_timer(node, tag) after delay seconds; a down node has none. */
void cl_set_timer(cl_cluster *c, int node, double delay_s, uint32_t tag);

/* A pooled buffer of cfg.payload_doubles doubles, refcount 1, len its
 * capacity. */
cl_buf *cl_buf_get(cl_cluster *c);
/* A pooled buffer of len doubles (len <= cfg.payload_doubles), refcount 1,
 * for a partial model: buffers of one length share a pool of that
 * capacity (up to CL_LEN_POOLS lengths; further lengths take a whole
 * buffer with len set), so a message holds only the memory it carries.
 * cl_buf_put returns it to its own pool. */
#define CL_LEN_POOLS 8
cl_buf *cl_buf_get_len(cl_cluster *c, size_t len);
void    cl_buf_put(cl_cluster *c, cl_buf *b);   /* release one reference */

/* Handles an event of a cluster kind; returns 0. */
int cl_handle_event(cl_cluster *c, const sim_event *ev);
/* The node the event being or last handled concerns: its target, or for
 * a FIFO delivery (which has a target of its own, past n_nodes) its
 * receiver. */
uint32_t cl_event_node(const cl_cluster *c, const sim_event *ev);

/* Cluster events scheduled and not yet handled (steps, messages, timers).
 * Zero before the stop condition means the run has stalled. */
uint64_t cl_pending(const cl_cluster *c);
/* Messages handed to the network and not yet delivered. */
uint64_t cl_in_flight(const cl_cluster *c);

const cl_node_stats *cl_stats(const cl_cluster *c, int node);
/* Seconds node has computed up to now, including the part of a step still
 * in progress. */
double   cl_compute_time(const cl_cluster *c, int node);
/* Brings network_s and down_s of every node up to now (call before
 * reading them at the end of a run). */
void     cl_stats_settle(cl_cluster *c);
uint64_t cl_total_steps(const cl_cluster *c);
double   cl_total_bytes_sent(const cl_cluster *c);

/* The fair network's work so far (all zero under FIFO): flow starts and
 * ends placed in a uniform resource's virtual time, O(log n) each; general
 * max-min solves; resources made uniform, and made explicit again. */
typedef struct cl_fair_work {
    uint64_t ps_starts, ps_ends, solves, ps_enters, ps_exits;
} cl_fair_work;
cl_fair_work cl_fair_work_done(const cl_cluster *c);

/* Node's uplink backlog now: the messages it sent whose last bit has not
 * left its uplink (queued or in transfer; retransmissions included).
 * O(1) amortised. */
uint64_t cl_uplink_queued(cl_cluster *c, int node);
/* Seconds from now until node's uplink has sent everything handed to it
 * so far (0 when idle): exact with the FIFO discipline, and with fair
 * sharing for one message alone in the uplink; with several under fair
 * sharing a lower bound (their bytes left at the NIC's whole capacity). */
double   cl_uplink_idle_s(cl_cluster *c, int node);
/* The bound on the memory that messages sent and not yet delivered or
 * lost hold together (bytes: each one's slot, and its payload unless a
 * broadcast shares it; 0, the default, for none).  The first send that
 * takes them past the bound marks its sender (cl_message_flood); the run
 * goes on: stopping is the caller's decision. */
void     cl_set_message_bound(cl_cluster *c, double bytes);
/* The first sender whose send took the messages past the bound, or -1; in
 * *mem_bytes and *n_msgs (each if not NULL) what they hold now and how
 * many they are. */
int      cl_message_flood(const cl_cluster *c, double *mem_bytes, uint64_t *n_msgs);

#endif
