/* trn_internal.h -- what the trainer's two files share: the layout of a
 * trainer (its nodes' parameters, cursors, jobs, pool and workspaces) and
 * the drawing of a node's next batch.  Only sim/train/ includes it.
 */
#ifndef TRN_INTERNAL_H
#define TRN_INTERNAL_H

#include "trn.h"
#include "mdl_split.h"
#include "sim_pool.h"

#include <gsl/gsl_rng.h>

typedef struct cursor {
    gsl_rng *rng;       /* SIM_RNG_DATA of the node */
    size_t  *perm;      /* the node's sample indices, shuffled per epoch */
    size_t   n_local, next;
} cursor;

/* One step's math, self-contained: everything it reads is fixed when the
 * step begins (the node's parameters, the batch its data stream drew), so
 * it may run anywhere before the step ends.  On one thread it runs at
 * once, on the parameters in place (nothing can change them before it
 * returns); with a pool it reads the node's copy taken at step start. */
typedef struct job {
    const double *params;
    const size_t *batch;
    size_t        n_batch;
    double       *grad;     /* out */
    double       *tmp;      /* P: a chunk's gradient when n_batch > the model's batch */
    double        loss;     /* out */
    int           mix;      /* first the node's deferred mix (t->mix[node]) */
    size_t        frozen;   /* frozen layers (mdl_set_frozen) */
    uint64_t      step;     /* for the divergence record */
    double        time_s;
} job;

/* The evaluation in progress, spread over the pool's eval tasks: task e
 * computes chunks [e nc / E, (e + 1) nc / E). */
typedef struct eval_job {
    const double      *params;
    const mdl_dataset *ds;
    const size_t      *idx;
    size_t             n, nc, cap;
    size_t             frozen;  /* the stage evaluated (block heads) */
    mdl_eval_part     *parts;   /* nc, grown to the largest evaluation */
} eval_job;

/* An element-wise pass over a model (an optimizer update, a round's mix)
 * cut into blocks of bs elements, bs a multiple of MDL_OPTIM_BLOCK: block
 * b is pool task vec_base + b.  Every element takes the same operations
 * whatever the cut, so the result is the same bits for every N. */
enum { VEC_OPTIM, VEC_MIX };
typedef struct vec_op {
    int           kind;
    int           node;     /* VEC_OPTIM, VEC_MIX */
    double       *x;        /* VEC_OPTIM: updated */
    const double *g;
    double        g_div;
    const trn_mix_terms *mix;   /* VEC_MIX */
    size_t        base;     /* blocks cut [base, P) from base: a mix's frozen
                               prefix (its one-call bits, trn.c's spread) */
    size_t        bs;
} vec_op;

/* A node's mix (trn_mix) with threads: recorded (DEFERRED) until the
 * node's next step begins, then run by that step's job before its
 * gradient (IN_JOB), the job saying when it is done (sim_pool_part_done).
 * The term arrays are copies, so the caller's may change. */
enum { MIX_NONE, MIX_DEFERRED, MIX_IN_JOB };
typedef struct mix_rec {
    int            state, cap;
    trn_mix_terms  m;          /* m.x, m.w, m.from point to the arrays below */
    const double **x;
    double        *w;
    int           *from;
} mix_rec;

/* VEC_MIX works through its range in pieces of this many doubles (a
 * multiple of MDL_OPTIM_BLOCK): the sum of a piece stays in an L1-sized
 * buffer while every neighbour's term is added, then the piece of x is
 * written once and updated while it is in cache. */
#define TRN_MIX_PIECE 1024
/* Models up to this many parameters go in one piece (the buffer still fits
 * L2, and a small model's round pays a few calls, not a few per piece). */
#define TRN_MIX_WHOLE 8192

/* Where the loop waits for a job a worker runs (DTSIM_POOL_STATS): a
 * step's end (the gradient and loss), a neighbour's mix whose snapshot a
 * deferred mix will read, a read or write of the node's own parameters,
 * anything else (evaluations, split passes, aborted steps). */
enum { TRN_WAIT_STEP, TRN_WAIT_NBR_MIX, TRN_WAIT_PARAMS, TRN_WAIT_OTHER, TRN_WAIT_SITES };

/* Below this many parameters a pass stays on the caller's thread: handing
 * it over costs more than it saves. */
#define TRN_SPLIT_MIN 16384

struct trn_trainer {
    trn_config     cfg;
    int            n;
    size_t         P;
    double        *params;   /* n * P: the trainer's own storage of each node's parameters */
    /* n: where node i's parameters are: params + i P, or the out buffer of
     * its last mix that moved them there (trn_mix_terms.move), until
     * trn_params or trn_params_own copies them back */
    double       **px;
    double        *grads;    /* n * P: the gradient of the step in progress */
    double        *loss;     /* n: the minibatch loss of each node's last step begun */
    cursor        *cur;      /* n, NULL for the timing-only model */
    /* per-node batches (trn_set_batch), NULL while every node takes
     * cfg.batch; tmp: n * P chunk gradients, once a batch exceeds it */
    size_t        *nb;
    double        *tmp;
    mdl_optim     *opt;
    trn_divergence div;
    /* threads >= 2 only */
    sim_pool      *pool;     /* tasks 0 .. n-1 steps, n .. n + n_eval - 1 evaluation */
    int            n_eval;
    mdl_model    **models;   /* one per thread; [0] is cfg.model (the caller's) */
    double        *snap;     /* n * P: each node's parameters at its step start */
    job           *jobs;     /* n */
    char          *pending;  /* n: a job submitted and not yet settled */
    /* 0: a job reads its node's parameters in place, and a write to them
     * while it is pending (trn_params) first settles it and sets 1: from
     * then on every job reads a copy taken at step start, as a protocol
     * that writes mid-step (AD-PSGD) needs.  Either way the same bits. */
    int            copy;
    eval_job       ev;
    char          *no_math;  /* n: the node's steps compute nothing (trn_set_math) */
    mdl_split     *split[MDL_MAX_HIDDEN + 1];   /* by cut, created on first use */
    int            vec_base, n_vec;   /* tasks of the element-wise passes */
    vec_op         vec;
    mdl_model     *hess;     /* trn_hessian_apply's own instance, made on first use */
    double        *hess_work;
    size_t         hess_cap; /* doubles in hess_work */
    mix_rec       *mix;      /* n */
    /* progressive freezing (trn_freeze.c), NULL until a node freezes:
     * frozen layers and the frozen prefix's parameters per node */
    size_t        *fz, *fz_off;
    /* run_mix by trn_fuse_mix when nonzero: the daxpy block trn_fuse_probe
     * found (1: every element fused) */
    int            fuse;
    long           waits[TRN_WAIT_SITES];   /* the loop's waits for a worker, by site */
};

/* trn_fuse.c: run_mix over [lo, hi) in one loop per element (the same
 * bits), writing the mix to x (and m->out unless it is x), for a trainer
 * whose t->fuse is set; trn_fuse_probe: the block B (1, 8, 16 or 32) for
 * which this machine's cblas_daxpy and optimizer give the kernel's bits
 * (a daxpy of length len fuses its first len & -B elements; checked on
 * small vectors for every optimizer form), 0 when none does, so the
 * trainer may not fuse. */
void trn_fuse_mix(trn_trainer *t, int node, const trn_mix_terms *m, double *x, size_t lo,
                  size_t hi);
int  trn_fuse_probe(void);

/* trn.c: node i's next batch (the next B indices of its shuffled
 * partition, reshuffled at an epoch boundary); draws from its data
 * stream. */
const size_t *trn_i_next_batch(trn_trainer *t, int i);

#endif
