/* alg_pipeline_int.h -- what the files of the pipeline protocol share
 * privately (alg_pipeline.c: events, messages and figures;
 * alg_pipeline_sched.c: the order of a stage's operations and the stage
 * partition; alg_pipeline_math.c: the MLP's stages; alg_pipeline_dp.c:
 * the replicas' all-reduce of a stage's gradient): the schedules, the per-stage and shared state and the
 * calls between them.  Not for other protocols; the tests read the
 * shared state through it.
 */
#ifndef ALG_PIPELINE_INT_H
#define ALG_PIPELINE_INT_H

#include "alg.h"
#include "alg_coll.h"

enum { PP_STAGES, PP_MICRO, PP_SCHEDULE, PP_PARTITION, PP_LAYERS, PP_ACT_BYTES, PP_REPLICAS,
       PP_COLLECTIVE };
enum { SCHED_GPIPE, SCHED_1F1B, SCHED_PIPEDREAM, SCHED_2BW };
enum { PART_BALANCED, PART_EQUAL };
enum { PTAG_ACT = 1, PTAG_GRAD = 2, PTAG_SUM = 3, PTAG_PARAMS = 4, PTAG_COLL = 5 };
#define PP_MAX_LAYERS 4096

/* One operation of a stage: the forward or the backward pass of its
 * layers on micro-batch mb (numbered from 0 over the whole run). */
typedef struct pp_op {
    int      backward;
    uint64_t mb;
} pp_op;

/* The k-th operation (k = 0, 1, ...) of stage s of p under schedule
 * sched with m micro-batches per mini-batch (alg_pipeline_sched.c;
 * docs/algorithms.md gives the rules). */
pp_op pp_op_at(int sched, int p, int m, int s, uint64_t k);

/* Contiguous layers to stages: lo[s] .. lo[s + 1] - 1 are stage s's
 * (0-based layers, lo[0] = 0, lo[p] = L), each stage at least one layer.
 * cost[l] is layer l's work (forward and backward), speed_s[s] the
 * seconds per unit of work of stage s's node.  Balanced: the exact
 * minimum of the slowest stage's time (dynamic programming, O(L^2 p));
 * of the partitions that reach it, the one whose stages take their
 * layers as early as possible (lexicographically largest lo).  Equal:
 * lo[s] = floor(s L / p).  Returns the slowest stage's time.  L >= p >= 1;
 * work: 2 (L + 1) (p + 1) doubles and ints of scratch as (L + 1) * (p + 1)
 * doubles then ints. */
double pp_partition(int balanced, int L, int p, const double *cost, const double *sec_s,
                    int *lo, double *work_d, int *work_i);

/* A stage's math (the MLP's layers a .. b), NULL for the timing-only
 * model: slots by micro-batch modulo K = m + p, wider than any window of
 * micro-batches in flight or drawn ahead (alg_pipeline_math.c). */
typedef struct pp_math {
    int      a, b;          /* weight layers, 1-based */
    size_t   off, len;      /* the stage's parameters: [off, off + len) */
    size_t   n, in_w, out_w, acts_len;
    double  *in;            /* stage 0: K x n x in_w rows drawn */
    int     *y;             /* stage 0: K x n labels */
    double  *acts;          /* K x acts_len: each micro-batch's outputs, kept for its backward */
    double  *gin;           /* s > 0: K x n x in_w gradients of the input, for stage s - 1 */
    double  *ws;            /* pipedream: K x len weights stashed by forward; 2bw: len, the
                               previous version */
    double  *ckpt;          /* gpipe, 1f1b with one replica: len, the weights before the
                               last update (a restart rolls a stage ahead back) */
    uint64_t *ver;          /* 2bw: K, the version each micro-batch's forward used */
    uint64_t v;             /* updates applied */
    double  *g, *acc;       /* P each: a backward's gradient, the sum of a mini-batch's */
    double  *scratch;
    double  *rows;          /* stage 0: a mini-batch drawn, batch x in_w */
    int     *rows_y;
    double   loss_sum;      /* last stage: sum of the micro-batch losses */
    uint64_t loss_n;
} pp_math;

typedef struct pp_stage {
    uint64_t next;        /* index of the next operation (pp_op_at) */
    pp_op    cur;         /* the operation in progress when busy */
    int      busy;
    double   t_start;     /* when it began */
    unsigned char *fwd_in, *grad_in;   /* ring of R flags: activation / gradient of mb in */
    int64_t  in_flight;   /* forwards done whose backward is not */
    int64_t  peak_in_flight;
    uint64_t fwd_done, bwd_done;
    double   busy_first;  /* seconds of work on mini-batch 0's micro-batches */
    double   busy_s;      /* seconds of work done */
    int      reducing;    /* in its stage's all-reduce (replicas > 1): blocked */
    int      red_k;       /* ... among this many replicas */
    uint64_t updates;     /* updates applied (the all-reduce's round) */
    int      out;         /* its replica was dropped (alg_pipeline_fail.c) */
    int      joining;     /* its replica rejoins: it waits for its stage's parameters */
    uint64_t mb_floor;    /* micro-batches below it are of before a rejoin or restart: ignored */
    uint64_t cur_bwd;     /* backwards since its last update */
    pp_math *mt;
} pp_stage;

/* Node i runs stage i mod p of replica i / p (alg_pipeline.c). */
typedef struct pp_shared {
    int     p, m, sched, L;
    int     r;            /* replicas: nodes = p r */
    int     lo[PP_MAX_LAYERS + 1];
    double *fwd, *bwd;    /* L: per-sample work shares of each layer */
    double  stage_fwd[PP_MAX_LAYERS], stage_bwd[PP_MAX_LAYERS];  /* shares of a step */
    double  act_bytes[PP_MAX_LAYERS];   /* the message stage s sends forward (s < p - 1) */
    double  in_bytes[PP_MAX_LAYERS];    /* one micro-batch's input activations of stage s */
    double  lab_bytes;    /* the labels riding with each activation message (MLP) */
    double  slowest_s;    /* the partition's predicted slowest stage, s per micro-batch */
    double  stage_msg[PP_MAX_LAYERS];   /* timing-only: bytes of stage s's whole gradient */
    alg_coll *coll;       /* replicas > 1: the stages' all-reduces, each among its r nodes */
    int     *members;     /* p x r: the nodes of each stage, in replica order */
    /* failures with replicas (alg_pipeline_fail.c) */
    unsigned char *alive; /* r: the replica is in the data-parallel group */
    uint64_t *join;       /* r: a rejoined replica's first round */
    int      live;        /* replicas alive */
    int      dropped, rejoined;   /* replicas dropped and taken back so far */
    double **last_sum;    /* p: the last round a stage completed, its sum (len doubles) */
    uint64_t *last_round; /* p: that round + 1 (0: none) */
    int     *last_k;      /* p: among how many replicas */
    uint64_t sums_sent;   /* completed sums sent to a survivor left behind */
    int      halted;      /* one replica: stopped until every stage is up (a restart) */
    int      halted_by;
    double   halted_at;
    uint64_t restarts;
    size_t  R;            /* ring of flags per stage */
    int     stopped;      /* a stage went down: the pipeline stopped for good */
    int     stopped_by;
    double  stopped_at;
    size_t  K;            /* math slots */
    double *eval;         /* P: the stages' parts assembled, the model evaluated */
    /* figures */
    uint64_t done_mb;     /* micro-batches whose backward stage 0 finished (every replica) */
    uint64_t done_mb0;    /* ... replica 0's */
    double   t_pow[64];   /* time of the 2^k-th of them */
    double   t_iter0, first_iter_s, sum_iter_s;
    uint64_t iters;
} pp_shared;

/* alg_pipeline.c: node's stage and replica; node starts its next
 * operation if it is idle, not reducing, and the input is in; node
 * applied an update (its iteration's figures). */
static inline int pp_stage_of(const pp_shared *sh, int node) { return node % sh->p; }
static inline int pp_replica_of(const pp_shared *sh, int node) { return node / sh->p; }
void pp_try_run(alg_ctx *ctx, int node);
/* The parameters read: p, the layers the model is cut into, the flags'
 * ring per node (2 (m + p) + 2). */
int    pp_n_stages(const alg_ctx *ctx);
int    pp_n_layers(const alg_ctx *ctx);
size_t pp_ring_of(const alg_ctx *ctx);

/* alg_pipeline_mem.c: the memory check's count of the protocol's own
 * buffers (alg_type.memory_bytes, model_memory_bytes). */
double pp_memory_bytes(const alg_ctx *ctx);
double pp_model_memory_bytes(const alg_ctx *ctx);
void pp_updated(alg_ctx *ctx, int node);

/* alg_pipeline_math.c: a node's math, run as its forward or backward
 * of micro-batch mb ends (the weights then are those it began with: a
 * stage's weights change only at its own update).  pp_math_backward
 * computes the micro-batch's gradient and adds it to the mini-batch's
 * sum (PipeDream: the gradient alone); pp_math_contrib is that sum (the
 * stage's len parameters); pp_math_apply applies sum (len doubles; NULL:
 * the node's own) divided by g_div (micro-batches times replicas). */
int  pp_math_init(alg_ctx *ctx, pp_stage *st, int node);
void pp_math_fini(pp_stage *st);
void pp_math_forward(alg_ctx *ctx, int node, uint64_t mb);
void pp_math_backward(alg_ctx *ctx, int node, uint64_t mb);
const double *pp_math_contrib(const alg_ctx *ctx, int node, size_t *len);
void pp_math_apply(alg_ctx *ctx, int node, const double *sum, double g_div);
const double *pp_math_eval(const alg_ctx *ctx);

/* alg_pipeline_dp.c: the replicas' all-reduce of a stage's gradient.
 * pp_dp_init creates one collective per stage (replicas > 1; nothing
 * otherwise); pp_dp_update is node's update point (its mini-batch's last
 * backward; PipeDream's every backward): with one replica it applies the
 * update at once, with more it starts the stage's all-reduce and blocks
 * the node until the mean over the replicas is applied; pp_dp_on_message
 * takes the collective's messages (1) or not (0). */
int  pp_dp_init(alg_ctx *ctx);
void pp_dp_fini(alg_ctx *ctx);
void pp_dp_update(alg_ctx *ctx, int node);
int  pp_dp_on_message(alg_ctx *ctx, int node, const cl_msg *msg);
void pp_dp_abort(alg_ctx *ctx);
void pp_dp_describe_wait(const alg_ctx *ctx, int node, char *buf, size_t size);
/* The members of stage s's round (live replicas joined by then, in
 * replica order) into sh->members + s r; returns how many. */
int  pp_dp_members(alg_ctx *ctx, int s, uint64_t round);
/* Node starts (again) its stage's all-reduce of its current round. */
void pp_dp_start(alg_ctx *ctx, int node);
/* Node's all-reduce is complete with sum (len doubles) over k replicas. */
void pp_dp_reduced(alg_ctx *ctx, int node, const double *sum, int k);
/* Wire bytes of stage s's whole gradient (or parameters). */
double pp_stage_bytes(const alg_ctx *ctx, int s);

/* alg_pipeline_fail.c: failures with replicas.  pp_fail_init allocates
 * (replicas > 1); pp_fail_declared is on_failure's, pp_fail_return
 * on_return's; pp_fail_on_message takes PTAG_SUM and PTAG_PARAMS (1) or
 * not (0).  With one replica every failure stops the run
 * (pp_stop_pipeline). */
int  pp_fail_init(alg_ctx *ctx);
void pp_fail_fini(alg_ctx *ctx);
void pp_fail_declared(alg_ctx *ctx, int peer, int failed);
void pp_fail_return(alg_ctx *ctx, int node);
int  pp_fail_on_message(alg_ctx *ctx, int node, const cl_msg *msg);
void pp_fail_completed(alg_ctx *ctx, int node, const double *sum, size_t len, int k);
void pp_fail_updated(alg_ctx *ctx, int node);
void pp_stop_pipeline(alg_ctx *ctx, int by);

#endif
