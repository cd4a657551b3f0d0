/* alg.h -- the protocol-facing header: everything a training protocol may
 * see and call, and nothing else.  A protocol is one table in the spirit of
 * GSL's *_type: the runner allocates state_size bytes per node (zeroed) and
 * calls the hooks as steps end, messages arrive and timers fire.  A
 * protocol asks for steps, messages, snapshots, parameter updates, timers
 * and random draws through the alg_ calls below, and reads the topology;
 * it never sees the event queue, the cluster, the trainer or the runner (a
 * protocol file compiles against this header alone).  The runner's side
 * (registry, parameter tables, the host behind these calls) is alg_host.h.
 */
#ifndef ALG_H
#define ALG_H

#include <stddef.h>
#include <stdint.h>
#include <gsl/gsl_rng.h>
#include "cl_buf.h"   /* cl_buf, cl_msg: the records that travel */
#include "topo.h"     /* topo_graph, topo_digraph, topo_schedule: the topology */

/* A protocol-specific parameter: a key of the scenario's algorithm object
 * besides name, lr and batch.  Integers and reals must lie in [min, max];
 * a choice is one of the NULL-terminated choices and is stored as its
 * index. */
typedef enum alg_param_kind {
    ALG_PARAM_INT, ALG_PARAM_REAL, ALG_PARAM_CHOICE,
    ALG_PARAM_PATH   /* a file, relative to the scenario's directory; absent: NULL */
} alg_param_kind;

typedef struct alg_param_spec {
    const char         *key;        /* NULL ends a table */
    alg_param_kind      kind;
    double              def, min, max;
    const char *const  *choices;    /* ALG_PARAM_CHOICE */
    const char         *help;       /* one line for `dtsim explain`: what it sets,
                                       lowercase, no full stop */
} alg_param_spec;

#define ALG_MAX_PARAMS 16
#define ALG_MAX_NODE_COLUMNS 16

/* The runner's side of the calls below: opaque to protocols. */
typedef struct alg_host alg_host;

/* What every hook may use.  Owned by the runner. */
typedef struct alg_ctx {
    alg_host         *host;
    const topo_graph *g;        /* neighbour lists and mixing weights */
    int               n;        /* workers: nodes 0 .. n-1 compute and hold data */
    int               n_all;    /* n plus the algorithm's servers */
    int               server;   /* node number of the first server (n), or -1 */
    size_t            P;        /* parameters per model */
    int               layers;   /* weight layers of the model (an MLP: hidden + 1),
                                   0 when it has none to cut (alg_model_layers) */
    double            lr;       /* base learning rate (the optimizer's) */
    double            momentum; /* the optimizer's momentum (0: plain SGD) */
    const void       *model;    /* the runner's model (opaque), once built: the layer
                                   queries (alg_layer_width, ...) answer from it
                                   before the run starts (model_memory_bytes) */
    int               nesterov; /* ... in Nesterov's form */
    size_t            batch;    /* samples per step (algorithm.batch; alg_batch) */
    uint64_t          seed;     /* the scenario seed the streams derive from */
    char             *states;   /* n * state_size bytes */
    size_t            state_size;
    double            param[ALG_MAX_PARAMS];  /* by position in alg_type.params */
    const char       *path[ALG_MAX_PARAMS];   /* ALG_PARAM_PATH values (resolved), or NULL */
    void             *shared;   /* the algorithm's state common to all nodes */
} alg_ctx;

static inline void *alg_state(const alg_ctx *ctx, int node)
{
    return ctx->states + (size_t)node * ctx->state_size;
}

enum { ALG_NEEDS_HESSIAN = 1u, ALG_NEEDS_PLAIN_SGD = 2u, ALG_CAN_FREEZE = 4u,
       ALG_FITS_MEMORY = 8u, ALG_CAN_GROW = 16u };

typedef struct alg_type {
    const char *name;          /* matched against the scenario */
    const char *summary;       /* one line for `dtsim list`: the kind of
                                  protocol and its paper, no full stop */
    size_t      state_size;    /* per node, servers included */
    /* Nodes the protocol adds beside the scenario's workers (a parameter
     * server): they hold no data, never step, are not in the topology, and
     * their links are like every other link. */
    int         servers;
    /* When the number of servers depends on the parameters (one per
     * cluster): called once the parameters are set (ctx->n and ctx->param
     * only).  NULL: `servers`. */
    int (*n_servers)(const alg_ctx *ctx);
    /* The model that metrics.csv evaluates (e.g. the server's).  NULL: the
     * average of the workers' models. */
    const double *(*eval_params)(const alg_ctx *ctx);
    /* 1 when every worker holds the same model after each update by
     * construction (all apply one common update: all-reduce, eager-SGD),
     * so consensus_distance is 0 but for evaluations that fall while an
     * update spreads.  With eval_params set (the evaluated model is a
     * server's, not the workers' average) it is taken as 1 too.  run.json
     * says "consensus_meaningful": false for both, and the figures leave
     * their consensus distance out.  0 (the default): the models are meant
     * to agree over time, and their distance is worth watching. */
    int         one_model;
    /* What the protocol's math needs of the run, checked before it
     * starts (a scenario error otherwise): ALG_NEEDS_HESSIAN, a model
     * with alg_step_hessian (linear or logistic) or the timing-only one;
     * ALG_NEEDS_PLAIN_SGD, the optimizer's x <- x - lr g with a constant
     * lr (no momentum, decay, schedule or warm-up).  ALG_CAN_FREEZE is a
     * capability, not a need: the protocol calls alg_freeze_round and
     * sends only the unfrozen suffix, so a scenario with a freeze section
     * may run it (refused otherwise).  ALG_FITS_MEMORY, with freezing: a
     * worker trains a round only when its memory at the round's stage fits
     * its capacity (alg_memory_fits), so a worker is refused only when it
     * fits no stage of the freeze section.  ALG_CAN_GROW, with
     * ALG_CAN_FREEZE: the protocol sends and updates the trainable window
     * [alg_frozen_params, alg_trainable_end) rather than the suffix, so
     * freeze.mode "grow" (block heads, models/mdl_freeze.h) may run it.
     * 0: nothing. */
    unsigned    needs;
    const alg_param_spec *params;  /* NULL, or a table ended by a NULL key */
    /* Creates and destroys ctx->shared (state common to all nodes), after
     * the parameters and the host are set and before any init; shared_fini must accept
     * ctx->shared == NULL (a start that failed early).  NULL: none. */
    int  (*shared_init)(alg_ctx *ctx);
    void (*shared_fini)(alg_ctx *ctx);
    /* Checks that the algorithm can run on this cluster and graph before
     * anything starts; writes a reason (lowercase, no full stop) and
     * returns -1 when not.  NULL: always fine. */
    int  (*check)(const alg_ctx *ctx, char *err, size_t err_size);
    /* Heap bytes the protocol will hold beyond its per-node state and the
     * model copies the runner counts (e.g. the round graphs of a schedule
     * file), for the memory check before anything is built; called once
     * the parameters are set (ctx->n, ctx->param, ctx->path only).  0 when
     * unknown (an unreadable file: check reports it).  NULL: none. */
    double (*memory_bytes)(const alg_ctx *ctx);
    /* Heap bytes beyond memory_bytes's that depend on the model (its
     * layers' widths: a pipeline's stashed activations), for the same
     * check once the model exists: called once with ctx->P, ctx->layers
     * and the layer queries (alg_layer_width, alg_layer_param_off,
     * alg_layer_cost, alg_stage_acts_doubles, alg_stage_scratch_doubles)
     * set, before the run starts (no host: nothing else may be called).
     * NULL: none. */
    double (*model_memory_bytes)(const alg_ctx *ctx);
    /* Whole models per node the memory check counts (their parameters
     * included): 0 for the runner's RUN_MEM_COPIES (parameters, gradient,
     * two in flight); a protocol whose nodes hold only part of a model
     * beyond their parameters (a pipeline stage) says 1 and counts the
     * parts in model_memory_bytes. */
    int    model_copies;
    /* Timer events per second of simulated time that the protocol sets
     * whatever its steps (periodic ticks, e.g. gossip's n / period_s), for
     * the estimate of the run's events before it starts (limits.events,
     * docs/reliability.md); called once the parameters are set (ctx->n,
     * ctx->param).  NULL: none (timers only per step or per round). */
    double (*timer_rate)(const alg_ctx *ctx);
    /* Samples trained on so far, for metrics.csv's epochs (this over the
     * training set's size), by a protocol whose steps are not whole steps
     * of alg_batch samples (a pipeline stage's pass of one micro-batch).
     * NULL: every node's steps times alg_batch. */
    double (*samples_done)(const alg_ctx *ctx);
    /* Time a node spends after each step before its next, on protocol
     * work outside the step (SymSGD's combiner update), as a multiple of
     * the step's duration, for the watchdog's bound on a round
     * (docs/reliability.md); called once the parameters and P are set.
     * NULL: none. */
    double (*step_overhead)(const alg_ctx *ctx);
    /* Hooks marked "may be NULL" have defaults: init does nothing, on_start
     * starts a step on every worker, describe_wait says "its step" while
     * the node computes, fini does nothing. */
    /* Allocates node's workspaces; -1 when out of memory.  May be NULL. */
    int  (*init)(alg_ctx *ctx, void *state, int node);
    /* Time 0: start the node's work (usually its first step).  May be NULL. */
    void (*on_start)(alg_ctx *ctx, void *state, int node);
    void (*on_step_done)(alg_ctx *ctx, void *state, int node, const double *grad);
    /* Mark k of a step started with alg_start_step_marks: that fraction
     * of the step's work is done (e.g. a gradient bucket's backward pass).
     * grad is the step's whole gradient, final since the step began (the
     * same buffer on_step_done gets).  May be NULL when the protocol never
     * asks for marks. */
    void (*on_step_mark)(alg_ctx *ctx, void *state, int node, int k, const double *grad);
    void (*on_message)(alg_ctx *ctx, void *state, int node, const cl_msg *msg);
    /* A timer node set with alg_set_timer fired.  May be NULL (then
     * setting a timer is a bug). */
    void (*on_timer)(alg_ctx *ctx, void *state, int node, uint32_t tag);
    /* The failure detector (every node's view, the same for all): peer
     * was declared failed (failed = 1) faults.detect_s after it went down,
     * or, once declared, is back (failed = 0; its model already rejoined
     * as faults.rejoin says, its interrupted step not yet restarted).  A
     * node back before the delay is never declared.  Called once per
     * change for the whole protocol, not per node.  May be NULL: the
     * protocol then waits for failed nodes (and a run whose training
     * stops ends as stalled). */
    void (*on_failure)(alg_ctx *ctx, int peer, int failed);
    /* Node itself is back up after being down (every return, declared
     * or not: a process knows it restarted), after its rejoin and its
     * on_failure(node, 0) if it was declared, before its interrupted step
     * restarts.  What it sent as it went down may be lost (faults.messages
     * drop).  May be NULL. */
    void (*on_return)(alg_ctx *ctx, void *state, int node);
    /* Writes what the node waits for, for stall reports ("round 3 from
     * node 2").  Empty string when it waits for nothing.  May be NULL. */
    void (*describe_wait)(const alg_ctx *ctx, const void *state, int node,
                          char *buf, size_t size);
    /* Figures for run.json's "algorithm_stats" (e.g. staleness): fills up
     * to max keys and values, returns how many.  NULL: none. */
    int  (*stats)(const alg_ctx *ctx, const char **keys, double *values, int max);
    /* Per-node figures for algorithm_nodes.csv, written beside nodes.csv
     * with one row per worker: the column names after `node` (at most
     * ALG_MAX_NODE_COLUMNS, NULL-terminated) and the call that fills a
     * row's values in that order.  NULL: no such file. */
    const char *const *node_columns;
    void (*node_figures)(const alg_ctx *ctx, int node, double *values);
    /* Frees what init allocated (may be called after a failed init).  May
     * be NULL. */
    void (*fini)(alg_ctx *ctx, void *state, int node);
} alg_type;

/* ---- what a protocol may call ---- */

/* Simulated time now, seconds. */
double alg_now(const alg_ctx *ctx);

/* Steps.  alg_start_step starts node's next step now: its minibatch
 * gradient is taken on node's parameters as they are now and handed to
 * on_step_done when the step ends (a down node's step starts when it comes
 * back).  One step at a time per node.  alg_abort_step abandons the step
 * in progress (no on_step_done comes for it; nothing when idle). */
void   alg_start_step(alg_ctx *ctx, int node);
/* Like alg_start_step, with m progress marks: on_step_mark(node, k) comes
 * when fractions[k] of the step's work is done (0 < fractions[0] < ... <
 * fractions[m-1] <= 1), and moves with the node's slowdown as the step's
 * end does; every mark comes before on_step_done.  A step restarted after
 * its node went down gives its marks again from k = 0 (on its new
 * gradient), a resumed one goes on, an aborted one gives no more.
 * fractions is borrowed until the step ends or is aborted. */
void   alg_start_step_marks(alg_ctx *ctx, int node, const double *fractions, int m);
void   alg_abort_step(alg_ctx *ctx, int node);
int    alg_is_computing(const alg_ctx *ctx, int node);
/* Whether node is up now: the truth, which no real node knows at once;
 * protocols that react to failures use alg_is_failed, the detector's
 * view, instead. */
int    alg_is_up(const alg_ctx *ctx, int node);
/* Whether node is declared failed now (see alg_type.on_failure). */
int    alg_is_failed(const alg_ctx *ctx, int node);
/* Messages node sent whose last bit has not yet left its own uplink
 * (queued behind others or in transfer): what a real sender sees of its
 * send queue.  A protocol that sends on a timer can coalesce with it
 * (gossip); the runner stops a run whose backlogs outgrow memory
 * (docs/reliability.md). */
uint64_t alg_uplink_queued(alg_ctx *ctx, int node);
/* Seconds from now until node's uplink has sent everything handed to it
 * so far (0 when idle): exact with the FIFO discipline and, with fair
 * sharing, for one message alone in the uplink (a lower bound for
 * several).  A protocol that keeps its own send queue (a sender thread
 * that sends one message at a time, as DivShare's) hands over the next
 * message at that instant with a timer. */
double   alg_uplink_idle_s(alg_ctx *ctx, int node);
/* For a stats hook: copies the first min(n, max) of the n keys k and
 * values v into keys and values, and returns how many. */
int      alg_stats_copy(const char *const *k, const double *v, int n,
                        const char **keys, double *values, int max);
/* The minibatch loss of node's step that just ended: the model's loss on
 * the step's batch at the parameters the step began on (the loss its
 * gradient belongs to).  Meant for on_step_done; NaN with the timing-only
 * model and before node's first step. */
double   alg_step_loss(alg_ctx *ctx, int node);
/* Samples in node's partition, and samples per step. */
size_t alg_local_samples(const alg_ctx *ctx, int node);
size_t alg_batch(const alg_ctx *ctx);
/* Per-node batches (speed-proportional batching): node's samples per
 * step from its next step begun, 1 <= b <= alg_local_samples (any b >= 1
 * for the timing-only model).  Its steps then cost b / alg_batch times
 * the compute of a step of alg_batch samples (the step-time model is
 * linear in the batch: step_time_s is per alg_batch samples, FLOPs are
 * per sample), and its gradient is the mean over its b samples.  Call it
 * while node does not compute.  Out of memory follows the runner's
 * policy; a b out of range is a bug (assert).  alg_node_batch: node's
 * current batch (alg_batch until set). */
void   alg_set_batch(alg_ctx *ctx, int node, size_t b);
size_t alg_node_batch(const alg_ctx *ctx, int node);
/* Node's configured step time for alg_batch samples: the scenario's
 * compute settings (step_time_s, or FLOPs per batch / flops_per_s) times
 * its static slowdown, before noise and time-varying slowdowns. */
double alg_step_time_s(const alg_ctx *ctx, int node);

/* Node's parameters (ctx->P doubles), owned by the runner's trainer. */
double       *alg_params(alg_ctx *ctx, int node);
const double *alg_params_const(const alg_ctx *ctx, int node);
/* Node's parameters back in the runner's own storage if a moving mix
 * (alg_mix_apply) left them in a payload buffer: call it before that
 * buffer is released. */
void          alg_params_own(alg_ctx *ctx, int node);

/* Node's parameter update with the gradient g / g_div, shared by all
 * protocols: it goes through node's optimizer (momentum, weight decay,
 * learning-rate schedule; see mdl_optim.h).  With the default optimizer it
 * is exactly x <- x - (lr / g_div) g (one CBLAS daxpy). */
void alg_sgd_apply(const alg_ctx *ctx, int node, double *x, const double *g, double g_div);

/* The Hessian of the minibatch loss of node's last step (the batch that
 * step drew; valid from its on_step_done until its next step begins) at
 * params (e.g. the parameters its gradient was taken on), applied to the
 * k columns of V (ctx->P x k doubles, row-major): out = H V.  0, or -1
 * when the model has no Hessian (softmax, mlp, the timing-only model) or
 * the node has not stepped.  O(batch * P * k). */
int  alg_step_hessian(alg_ctx *ctx, int node, const double *params, const double *V, size_t k,
                      double *out);
/* Zeroes node's momentum buffer (nothing without momentum); its
 * learning-rate schedule goes on. */
void alg_reset_momentum(alg_ctx *ctx, int node);

/* A round's mix and update of node's parameters x fused into one pass
 * over ctx->P doubles: x <- (0 + w[0] xs[0] + ... + w[n-1] xs[n-1]) +
 * own_w own, the terms added in their order, then node's update with g /
 * g_div (alg_sgd_apply; none when g is NULL), then copy_to <- x when
 * copy_to is not NULL (the next round's snapshot).  Bit for bit what a
 * zeroed accumulator, one cblas_daxpy per term, x <- acc + own_w own
 * and alg_sgd_apply give, without the accumulator and its passes over
 * memory.  With --threads it is deferred into node's next step's job
 * (parallel work) and made final before anyone reads or writes x: keep
 * xs, own, g and copy_to allocated and unchanged until node's next
 * gradient is in or alg_params_const(node) has returned (the payload
 * buffers of the terms are only safe to release then).  from[k] is the
 * node that sent xs[k] (its buffer may still be written by that node's
 * own deferred mix: it is made final first).  own may be x.
 *
 * move (with copy_to): x is not written; copy_to becomes node's
 * parameters (alg_params_const returns it) until its next moving mix,
 * alg_params_own or a write through alg_params copies them back, so a
 * round's snapshot is its parameters, with no copy of its own.  Keep
 * copy_to allocated and unchanged by anyone else until then.  copy_to
 * may be own (in place) when nothing else reads own any more. */
void alg_mix_apply(const alg_ctx *ctx, int node, double own_w, const double *own,
                   int n, const double *const *xs, const double *w, const int *from,
                   const double *g, double g_div, double *copy_to, int move);
/* Whether alg_mix_apply defers now (with --threads); at once otherwise.
 * A protocol may then sum its neighbours' models as they arrive (the
 * payloads are still in cache) and mix the sum: the same bits. */
int  alg_mix_deferred(const alg_ctx *ctx);
/* Whether a protocol should keep its neighbours' payloads for
 * alg_mix_apply rather than sum them as they arrive: when the mix is
 * deferred (--threads) or runs as one fused loop, which reads each kept
 * model once (cheaper than the sum's passes on arrival).  The same bits
 * either way. */
int  alg_mix_keeps(const alg_ctx *ctx);
/* alg_mix_apply with one term, sum (weight 1), zeroed in the same pass:
 * x <- sum + own_w own, the update and the copy, never deferred when
 * alg_mix_deferred is 0. */
void alg_mix_sum(const alg_ctx *ctx, int node, double own_w, const double *own, double *sum,
                 const double *g, double g_div, double *copy_to, int move);

/* Messages.  bytes is the size on the wire (alg_param_bytes for
 * parameter messages).  payload is referenced, not copied, and released
 * after delivery; NULL for a control message.  from != to.  A message
 * from a down node is dropped at once; one to a down node when it
 * arrives. */
void   alg_send(alg_ctx *ctx, int from, int to, uint32_t tag, uint64_t round,
                cl_buf *payload, double bytes);
/* Wire bytes of a message of n_params parameters: n_params times the
 * scenario's bytes per parameter (after compression).  With the
 * timing-only model every parameter message is a whole model of the
 * scenario's message_bytes and n_params is ignored. */
double alg_param_bytes(const alg_ctx *ctx, size_t n_params);
/* Wire bytes of a partial-model message (a fragment) of n_params of the
 * model's parameters: n_params times the bytes per parameter, as
 * alg_param_bytes; with the timing-only model (no parameters) the share
 * (in (0, 1]) of the scenario's whole-model message_bytes instead. */
double alg_part_bytes(const alg_ctx *ctx, size_t n_params, double share);
/* Nonzero for the timing-only "none" model (no parameters, payloads of
 * length 0). */
int    alg_timing_only(const alg_ctx *ctx);

/* Payload buffers: a pooled buffer of length ctx->P with one spare slot
 * (capacity P + 1: a scalar may travel with a model, e.g. a push-sum
 * weight), refcount 1; a new buffer holding a copy of node's parameters;
 * releasing one reference (cl_buf_ref in cl_buf.h takes one). */
cl_buf *alg_buf_get(alg_ctx *ctx);
cl_buf *alg_snapshot(alg_ctx *ctx, int node);
/* A pooled buffer of len <= ctx->P doubles, refcount 1, for a partial
 * model (a fragment travels in a buffer of its own size, never a whole
 * model's); what its doubles mean (which coordinates) is the protocol's.
 * Released with alg_buf_put like the others. */
cl_buf *alg_buf_get_len(alg_ctx *ctx, size_t len);
void    alg_buf_put(alg_ctx *ctx, cl_buf *b);

/* Calls on_timer(node, tag) after delay_s seconds (>= 0); a node that
 * goes down loses its timers. */
void alg_set_timer(alg_ctx *ctx, int node, double delay_s, uint32_t tag);

/* Node's SIM_RNG_ALGO stream, created on first use (streams are seeded
 * independently, so creating one late shifts nothing; a protocol that
 * draws nothing then costs no 5 KB generator per node).  Out of memory
 * follows the runner's policy (docs/architecture.md). */
gsl_rng *alg_rng(const alg_ctx *ctx, int node);

/* splitmix64 of x (the engine's seed mixer, sim_rng.h): a well-mixed
 * 64-bit hash for choices a protocol derives from (seed, round) rather
 * than draws from a stream, so that every node computes the same one. */
uint64_t alg_hash64(uint64_t x);

/* ---- layer-split training (comdml) ---- */

/* A step of share (> 0) times node's step work, as alg_start_step in
 * every other way (noise, slowdowns, failures, one at a time), whose math
 * the protocol computes itself: it draws no batch and computes no
 * gradient (on_step_done's grad is then meaningless).  alg_start_step
 * and alg_start_step_marks start full steps with the trainer's math. */
void   alg_start_work(alg_ctx *ctx, int node, double share);
/* Seconds a message of bytes from `from` to `to` takes on idle links
 * (latency + bytes over the smallest bandwidth on its path; no jitter):
 * what a scheduler that knows the links predicts. */
double alg_link_time(const alg_ctx *ctx, int from, int to, double bytes);

/* Node's mean seconds per whole-model step now (its base step time times
 * its current slowdown; noise has mean 1): what a profiler measuring the
 * device would report. */
double alg_step_time(const alg_ctx *ctx, int node);

/* Weight layers of the model (L + 1 for an MLP of L hidden layers); 0
 * when it has none to cut (other models, the timing-only model).  Set
 * before check is called (ctx->layers). */
int    alg_model_layers(const alg_ctx *ctx);
/* The cost of weight layer l (1 .. alg_model_layers) of the model per
 * sample, as shares of the whole model's FLOPs per sample (the step's
 * work, models/mdl_split.h): its forward pass (2 in out) to *fwd, its
 * backward pass (the weight gradient and, for l > 1, the error passed
 * down) to *bwd; *fwd + *bwd summed over the layers is 1.  -1 when l is
 * out of range or the model has no layers.  alg_layer_width: the
 * activations per sample that layer l outputs (l = 0: the features),
 * 0 when out of range. */
int    alg_layer_cost(const alg_ctx *ctx, int l, double *fwd, double *bwd);
size_t alg_layer_width(const alg_ctx *ctx, int l);
/* A cut after weight layer s, 1 <= s < alg_model_layers: the front
 * (layers 1 .. s) is the prefix [0, n_front) of the parameter vector and
 * trains against an auxiliary softmax head of n_aux parameters on the
 * width activations per sample it produces; the back is the rest.  The
 * shares are the parts' FLOPs per sample over the whole model's (front
 * with its head, back without passing an error down; models/mdl_split.h). */
typedef struct alg_split_plan {
    size_t width, n_front, n_back, n_aux;
    double front_share, back_share;
} alg_split_plan;
/* -1 when the model cannot be cut at s. */
int    alg_split_plan_get(const alg_ctx *ctx, int s, alg_split_plan *p);
/* Front step of node at cut s on its next batch (its data stream) and its
 * parameters as they are now, with head aux: writes the activations
 * (batch x width) to acts, the batch's labels to labels, the front's
 * gradient to g[0 .. n_front) (g: ctx->P doubles) and the head's to g_aux;
 * returns the local loss (a non-finite one is recorded as a divergence). */
double alg_split_front(alg_ctx *ctx, int node, int s, const double *aux, double *acts,
                       int *labels, double *g, double *g_aux);
/* Back step at cut s of the model x (ctx->P doubles; its suffix is read)
 * on a batch of activations and labels: the gradient to g[n_front .. P);
 * returns the loss. */
double alg_split_back(alg_ctx *ctx, int node, int s, const double *x, const double *acts,
                      const int *labels, double *g);
/* A random head for cut s from node's protocol stream. */
void   alg_split_aux_init(alg_ctx *ctx, int node, int s, double *aux);
/* Node's optimizer update on x[lo .. hi) only (x and g whole ctx->P
 * vectors), counted as one of node's updates when count is nonzero (the
 * learning-rate schedule's clock). */
void   alg_sgd_apply_range(const alg_ctx *ctx, int node, double *x, const double *g,
                           double g_div, size_t lo, size_t hi, int count);

/* ---- pipeline stages (pipeline) ---- */

/* A stage is the MLP's weight layers a .. b, 1 <= a <= b <=
 * alg_model_layers (models/mdl_stage.h).  alg_layer_param_off: where
 * layer l's parameters begin in the vector (l = layers + 1: ctx->P);
 * alg_stage_acts_doubles: the doubles one micro-batch of n samples
 * stashes between its forward and its backward (each layer's output);
 * alg_stage_scratch_doubles: the scratch of a backward. */
size_t alg_layer_param_off(const alg_ctx *ctx, int l);
size_t alg_stage_acts_doubles(const alg_ctx *ctx, int a, int b, size_t n);
size_t alg_stage_scratch_doubles(const alg_ctx *ctx, size_t n);
/* Node's next batch from its data stream, alg_batch samples as a step
 * draws them: their features to X (batch x alg_layer_width(ctx, 0)) and
 * labels to y. */
void   alg_draw_rows(alg_ctx *ctx, int node, double *X, int *y);
/* The stage's forward with its parameters x (layer a's first: a whole
 * vector from alg_layer_param_off(ctx, a)) on in (n x width(a - 1)) into
 * acts; when b is the last layer the labels y give the loss, whose mean
 * is returned (a non-finite one is recorded as node's divergence), else
 * 0. */
double alg_stage_forward(alg_ctx *ctx, int node, const double *x, int a, int b,
                         const double *in, const int *y, size_t n, double *acts);
/* The stage's backward: gout (n x width(b)) the gradient of its output,
 * NULL for the last layer (the loss against y); the gradient of layers a
 * .. b into g (laid out as x), the gradient of in to
 * gin unless NULL; scratch of alg_stage_scratch_doubles. */
void   alg_stage_backward(alg_ctx *ctx, const double *x, int a, int b, const double *in,
                          const double *acts, const int *y, size_t n, const double *gout,
                          double *g, double *gin, double *scratch);
/* ---- progressive freezing (the scenario's freeze section) ---- */

/* Nonzero when the scenario freezes layers (only for protocols with
 * ALG_CAN_FREEZE). */
int    alg_freezing(const alg_ctx *ctx);
/* Sets node's frozen layers for its steps begun from now on to those the
 * schedule freezes by the protocol's count `count` (a round: every node
 * of a synchronous protocol passes the same counts, so all freeze
 * together): layer k is frozen once count >= freeze.after_steps[k - 1].
 * Their gradient is not computed (zero), node's updates (alg_sgd_apply)
 * leave them and their optimizer state alone, and its step costs the
 * frozen stage's share of a full step (models/mdl_freeze.h).  Call it
 * while node does not compute.  Returns the frozen prefix: parameters
 * [0, n) are frozen and the protocol sends only [n, P).  Without a freeze
 * section it does nothing and returns 0. */
size_t alg_freeze_round(alg_ctx *ctx, int node, uint64_t count);
/* The frozen prefix of count's stage, as alg_freeze_round would set it,
 * without setting any node: what a node that computed at count holds
 * bit for bit as every other node (the prefix of an earlier count is
 * never larger).  Only for a count the protocol already passed to
 * alg_freeze_round (the criterion decides a count when it is first
 * reached).  0 without a freeze section. */
size_t alg_freeze_prefix_at(const alg_ctx *ctx, uint64_t count);
/* Whether node's training memory at count's stage (models/mdl_freeze.h:
 * parameters, gradients and optimizer state of the unfrozen layers,
 * activations of its batch) fits its capacity (compute.memory_bytes): 1
 * without a capacity.  For a protocol with ALG_FITS_MEMORY, which lets
 * only such nodes train a round (fedavg's participant selection). */
int    alg_memory_fits(const alg_ctx *ctx, int node, uint64_t count);
/* Node's frozen prefix as last set (0 until then). */
size_t alg_frozen_params(const alg_ctx *ctx, int node);
/* The end of node's trainable window as last set: P, or with
 * freeze.mode "grow" the end of its stage's block and head (the layers
 * above are not built): node trains and sends [alg_frozen_params, this).
 * alg_freeze_end_at: the same for count's stage, as
 * alg_freeze_prefix_at.  alg_freeze_heads_in: the parameters of the block
 * heads lying wholly in [lo, hi) (0 without "grow"): a node that gets the
 * layers frozen since it last held the model does not need their heads,
 * which a message's bytes leave out. */
size_t alg_trainable_end(const alg_ctx *ctx, int node);
size_t alg_freeze_end_at(const alg_ctx *ctx, uint64_t count);
size_t alg_freeze_heads_in(const alg_ctx *ctx, size_t lo, size_t hi);

/* The run's one out-of-memory policy (docs/architecture.md): a hook that
 * cannot allocate mid-run has no caller to hand an error to, so the
 * process says so and exits with status 1. */
_Noreturn void alg_out_of_memory(void);

#endif
