/* alg_comdml_int.h -- what the two files of ComDML share privately
 * (alg_comdml.c: rounds, pairs and messages; alg_comdml_fail.c: broken
 * pairs and the all-reduce's re-formation): the per-node and shared
 * state and the calls between them.  Not for other protocols.
 */
#ifndef ALG_COMDML_INT_H
#define ALG_COMDML_INT_H

#include "alg_coll.h"
#include "alg_comdml_sched.h"

enum { P_LOCAL_STEPS, P_OFFLOAD, P_COLLECTIVE, P_LAYERS, P_ACT_BYTES };
enum { OFFLOAD_AUTO, OFFLOAD_OFF };
enum { TAG_COLL = 1, TAG_ACT = 2, TAG_WEIGHTS = 3, TAG_SYNC = 4, TAG_BREAK = 5 };
enum { SOLO = 0, SLOW, HELPER };
#define MAX_CUTS 16

/* What a cut at s costs, the same for every pair. */
typedef struct cut_info {
    double front, back;        /* work shares of a step */
    double act_bytes, w_bytes; /* messages */
    size_t width, n_front, n_aux, aux_off;
} cut_info;

typedef struct cd_shared {
    alg_coll *coll;
    alg_catchup cu;            /* failures: re-formation, catching up */
    int       n_cuts;          /* cuts 1 .. n_cuts */
    cut_info  cut[MAX_CUTS + 1];
    size_t    B, aux_len, store;   /* batch; heads of all cuts; doubles of a round store */
    uint64_t  sched_round;     /* the round the schedule below is for, UINT64_MAX: none */
    comdml_cut cost[MAX_CUTS + 1];   /* what the scheduler prices, by cut */
    int      *order, *partner, *cut_of;   /* n each: the scheduler's */
    double   *est;             /* n: the profiles it was given */
    /* the work makespan of rounds >= 1: from the first entry into a round
     * to the last agent done with its work */
    double    t0, t_work;
    double    sum_work, sum_pred, n_timed, pairs, fallbacks, last_cut;
    double    pred;            /* this round's predicted makespan */
    double    first_work, first_pred;   /* round 0's */
} cd_shared;

typedef struct cd_state {
    uint64_t round;
    int      role, partner, cut;
    int      own;              /* own steps (full, or front for SLOW) done this round */
    int      backs;            /* back steps done: a helper's for its partner, a
                                  fallen-back slow agent's for itself */
    int      fallback;         /* SLOW: trains its back part itself */
    int      weights_in, weights_sent, in_back;
    int      syncing, k;
    alg_catch cu;              /* waits for a live member's model */
    uint64_t acts_round[2];    /* activation batches in, by round parity */
    int      acts_in[2];
    double   t_step, share;    /* the step in progress: start, work share */
    int      tainted;          /* went down during it */
    int      busy;             /* a step of its own is started and not done */
    uint64_t plan_round;       /* the round role, partner, cut and the flags are for */
    double   est_sum, est;     /* seconds per whole-model step: this round, last */
    int      est_n;
    double  *acts;             /* H x B x width of this round's front (SLOW) */
    int     *labels;           /* H x B */
    double  *g, *xb;           /* P: gradient scratch; a helper's copy of its partner's model */
    double  *aux, *gaux;       /* the heads of every cut, and a scratch */
} cd_state;

static inline int comdml_H(const alg_ctx *ctx) { return (int)ctx->param[P_LOCAL_STEPS]; }

/* alg_comdml.c: what node i does next in its round; node i enters its
 * round (the schedule computed by the first to enter). */
void comdml_next(alg_ctx *ctx, int i);
void comdml_begin_round(alg_ctx *ctx, int i);

/* alg_comdml_fail.c */
extern const alg_catch_ops comdml_catch_ops;
void comdml_serve(alg_ctx *ctx, int from);
void comdml_fall_back(alg_ctx *ctx, int j);
void comdml_drop(alg_ctx *ctx, int k);
void comdml_on_failure(alg_ctx *ctx, int peer, int failed);
void comdml_on_return(alg_ctx *ctx, void *state, int i);

#endif
