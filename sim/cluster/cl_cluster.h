/* cl_cluster.h -- the simulated machines: nodes that compute minibatch
 * gradients in simulated time, and a network that carries messages with
 * real payloads.  A node's k-th step takes base_i * noise_ik seconds
 * (base_i already includes its group's slowdown); the gradient is computed
 * on the node's parameters as they are when the step starts and handed to
 * the algorithm when it ends.  A message from i to j waits for i's uplink
 * (FIFO), is serialised at the link bandwidth, propagates for the latency,
 * then passes j's downlink (FIFO, cut-through: a message is never received
 * faster than it was sent).
 *
 * The cluster schedules its own events on the engine and hands them to the
 * algorithm through callbacks; it knows nothing of which algorithm runs, of
 * JSON or of graphs.
 */
#ifndef CL_CLUSTER_H
#define CL_CLUSTER_H

#include <stddef.h>
#include <stdint.h>
#include "sim_engine.h"
#include "mdl.h"
#include "cl_buf.h"

typedef struct cl_cluster cl_cluster;

/* Event kinds the cluster owns; the caller routes them to cl_handle_event.
 * Kinds >= CL_EV_USER are free for the caller. */
enum { CL_EV_STEP_DONE = 1, CL_EV_ARRIVE = 2, CL_EV_DELIVER = 3,
       CL_EV_TIMER = 4, CL_EV_USER = 16 };

typedef enum cl_noise {
    CL_NOISE_CONSTANT = 0,  /* factor 1 */
    CL_NOISE_UNIFORM,       /* U(low, high) */
    CL_NOISE_EXPONENTIAL,   /* Exp(mean 1) */
    CL_NOISE_LOGNORMAL      /* exp(N(-sigma^2/2, sigma^2)), mean 1 */
} cl_noise;

/* A message as the receiving algorithm sees it.  The payload (may be NULL)
 * is borrowed for the duration of the callback: cl_buf_ref it to keep it. */
typedef struct cl_msg {
    int      from, to;
    uint32_t tag;       /* the algorithm's meaning */
    uint64_t round;     /* the algorithm's meaning, e.g. iteration number */
    double   bytes;
    double   sent_at;   /* seconds */
    cl_buf  *payload;
} cl_msg;

/* What the cluster calls; ctx is passed back untouched. */
typedef struct cl_callbacks {
    void *ctx;
    void (*on_step_done)(void *ctx, int node, const double *grad);
    void (*on_message)(void *ctx, int node, const cl_msg *msg);
    void (*on_timer)(void *ctx, int node, uint32_t tag);
} cl_callbacks;

typedef struct cl_config {
    int      n_nodes;
    uint64_t seed;              /* scenario seed; streams derive from it */
    const double *step_time_s;  /* n_nodes base step times incl. slowdown, > 0 */
    cl_noise noise;
    double   noise_low, noise_high, noise_sigma;
    double   latency_s;         /* every link */
    double   bandwidth_Bps;     /* every link and NIC, bytes per second */
    double   bytes_per_param;
    /* model and data: borrowed, must outlive the cluster */
    mdl_model          *model;
    const mdl_dataset  *train;
    const mdl_partition *part;
    size_t   batch;             /* samples per step, <= smallest partition */
} cl_config;

/* Per-node totals for nodes.csv. */
typedef struct cl_node_stats {
    uint64_t steps;
    double   compute_s;      /* seconds spent computing (finished steps) */
    double   uplink_busy_s;  /* seconds the uplink spent serialising */
    double   bytes_sent, bytes_received;
    uint64_t msgs_sent, msgs_received;
} cl_node_stats;

/* Creates the cluster on engine e, whose targets 0 .. n_nodes-1 are the
 * nodes (cancelling target i drops node i's pending step, timers and the
 * messages addressed to it).  Parameters of every node start at zero.
 * NULL when out of memory. */
cl_cluster *cl_create(const cl_config *cfg, sim_engine *e, cl_callbacks cb);
void        cl_destroy(cl_cluster *c);

int     cl_n_nodes(const cl_cluster *c);
size_t  cl_n_params(const cl_cluster *c);
double  cl_now(const cl_cluster *c);
/* Node i's parameters (n_params doubles), owned by the cluster. */
double *cl_params(cl_cluster *c, int node);
const double *cl_params_const(const cl_cluster *c, int node);

/* Starts node's next step now: draws a minibatch from the node's partition
 * (a seeded shuffle per epoch), computes the gradient on the current
 * parameters, and schedules CL_EV_STEP_DONE after the step time.  A node
 * runs one step at a time (starting a second one is a bug).
 * Cost: one model gradient. */
void cl_start_step(cl_cluster *c, int node);
/* The gradient handed to on_step_done stays valid until the node's next
 * cl_start_step. */
int  cl_is_computing(const cl_cluster *c, int node);
/* Samples in node's partition. */
size_t cl_local_samples(const cl_cluster *c, int node);
/* Samples per step. */
size_t cl_batch(const cl_cluster *c);

/* Sends a message; bytes is the size on the wire (payload_params *
 * bytes_per_param for parameter messages: see cl_param_bytes).  payload is
 * referenced (not copied) and released after delivery; NULL for a control
 * message.  from != to. */
void   cl_send(cl_cluster *c, int from, int to, uint32_t tag, uint64_t round,
               cl_buf *payload, double bytes);
double cl_param_bytes(const cl_cluster *c, size_t n_params);

/* Calls on_timer(node, tag) after delay seconds. */
void cl_set_timer(cl_cluster *c, int node, double delay_s, uint32_t tag);

/* A pooled buffer of capacity n_params, refcount 1, len n_params. */
cl_buf *cl_buf_get(cl_cluster *c);
/* A new buffer holding a copy of node's parameters. */
cl_buf *cl_snapshot(cl_cluster *c, int node);
void    cl_buf_put(cl_cluster *c, cl_buf *b);   /* release one reference */

/* Handles an event of a cluster kind; returns 0. */
int cl_handle_event(cl_cluster *c, const sim_event *ev);

/* Cluster events scheduled and not yet handled (steps, messages, timers).
 * Zero before the stop condition means the run has stalled. */
uint64_t cl_pending(const cl_cluster *c);
/* Messages handed to the network and not yet delivered. */
uint64_t cl_in_flight(const cl_cluster *c);

const cl_node_stats *cl_stats(const cl_cluster *c, int node);
/* Seconds node has computed up to now, including the part of a step still
 * in progress. */
double   cl_compute_time(const cl_cluster *c, int node);
uint64_t cl_total_steps(const cl_cluster *c);
double   cl_total_bytes_sent(const cl_cluster *c);
uint64_t cl_samples_processed(const cl_cluster *c);

#endif
