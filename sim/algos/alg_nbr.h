/* alg_nbr.h -- the neighbours of each round for protocols that exchange
 * models with their neighbours both ways and wait for them (D-PSGD, local
 * SGD's gossip): the scenario's static topology, or a time-varying schedule
 * of undirected graphs (random perfect matchings, the undirected one-peer
 * exponential graph, the rounds of a file), each round with its symmetric
 * mixing weights; and a mailbox of per-round weighted sums, since with a
 * time-varying graph a neighbour may run several rounds ahead.  Compiled
 * against alg.h alone, like the protocols that use it.
 */
#ifndef ALG_NBR_H
#define ALG_NBR_H

#include <stddef.h>
#include <stdint.h>
#include "alg.h"

/* Values of a protocol's `schedule` parameter, by index. */
enum { ALG_NBR_STATIC = 0, ALG_NBR_MATCHING, ALG_NBR_ONE_PEER, ALG_NBR_FILE };
extern const char *const alg_nbr_schedule_names[];   /* NULL-terminated */

typedef struct alg_nbr alg_nbr;

/* Node i's neighbours in one round: deg of them, sorted, with the weights
 * W_ij of i's row (w[k] for nbr[k]) and W_ii.  Borrowed: valid until the
 * next call on the same alg_nbr. */
typedef struct alg_nbr_row {
    int           deg;
    const int    *nbr;
    const double *w;
    double        self_w;
} alg_nbr_row;

/* Checks a schedule before the run (reads the file, so that a bad line is
 * the scenario's error "FILE:LINE: error: ..."); `who` names the protocol
 * in messages.  0, or -1 with a message. */
int alg_nbr_check(const alg_ctx *ctx, const char *who, int schedule, const char *path,
                  char *err, size_t size);

/* The rounds' graphs.  STATIC borrows ctx->g; the others build the schedule
 * from seed (the random matchings depend on it).  NULL with a message when
 * the schedule cannot be built or memory runs out. */
alg_nbr *alg_nbr_create(const alg_ctx *ctx, int schedule, const char *path, uint64_t seed,
                        char *err, size_t size);
void     alg_nbr_destroy(alg_nbr *nb);

/* Node i's row of round r's graph.  O(1) for the static topology and for
 * files; the first ask of a generated round builds it (O(n)), a cache keeps
 * the last few rounds. */
alg_nbr_row alg_nbr_row_of(alg_nbr *nb, uint64_t r, int i);

/* W_ij of round r (j must be a neighbour of i in round r).  O(log deg). */
double alg_nbr_weight(alg_nbr *nb, uint64_t r, int i, int j);

/* dst <- src (one round of a schedule, which hands out one buffer),
 * growing dst's arrays as needed; *cap is the arcs they hold (0 at
 * first, dst zeroed).  Out of memory follows the run's policy.  _free
 * frees the arrays, not d. */
void alg_nbr_digraph_copy(topo_digraph *dst, size_t *cap, const topo_digraph *src);
void alg_nbr_digraph_free(topo_digraph *d);

/* A node's per-round neighbour models: a slot per round that has
 * received something and is not finished yet.  Either summing (each model
 * added into the slot's accumulator as it arrives: w x, one cblas_daxpy)
 * or keeping (the slot keeps a reference to each payload buffer and its
 * weight, in arrival order, for alg_mix_apply at the round's end: no
 * accumulator, so no pass over memory before the mix).  Two slots live
 * inside the mailbox itself (a static graph never needs more), each with
 * room for ALG_MBOX_INLINE senders (a ring's two), and the timing-only
 * model (len 0) has no accumulator: a timing-only node's mailbox is a few
 * cache lines of its protocol state, no allocation of its own.  More
 * slots, and more senders, are allocated when neighbours run further
 * ahead or degrees are larger (a slot's sender array, once allocated,
 * stays with it).  A slot is 32 bytes and the two inline ones come first,
 * so that a 64-byte aligned mailbox has them in one cache line.  The
 * mailbox must not move once initialised (it sits in a node's protocol
 * state, which does not). */
#define ALG_MBOX_INLINE 2
typedef struct alg_mbox_slot {
    uint64_t round;     /* UINT64_MAX: free */
    int      count;     /* models received */
    int      from_cap;  /* 0: the senders are in from_in, else in from */
    union {
        int  from_in[ALG_MBOX_INLINE];
        int *from;      /* from_cap senders, once more than ALG_MBOX_INLINE came */
    };
    union {
        double *acc;    /* summing: len doubles, sum of W_ij x_j */
        void   *keep;   /* keeping: one block, alg_mbox_mix's arrays */
    };
} alg_mbox_slot;
_Static_assert(sizeof(alg_mbox_slot) == 32, "alg_mbox_slot: two in a cache line");

/* The count senders of s, in arrival order (alg_mbox_add). */
static inline const int *alg_mbox_from(const alg_mbox_slot *s)
{
    return s->from_cap ? s->from : s->from_in;
}

typedef struct alg_mbox {
    alg_mbox_slot  inl[2];
    alg_mbox_slot *slots;   /* inl, until a third round is open at once */
    /* Set before alg_mbox_init to keep instead of sum (len must then be
     * ctx->P; the buffers go back through it).  NULL: summing. */
    alg_ctx       *ctx;
    int            n;
    uint32_t       len;     /* doubles of a model (at most INT_MAX: cblas's int) */
} alg_mbox;
_Static_assert(sizeof(alg_mbox) == 88, "alg_mbox: its slots in 64 bytes, 24 of header");

/* -1 when out of memory or len is past INT_MAX; keeps mb->ctx */
int  alg_mbox_init(alg_mbox *mb, size_t len);
void alg_mbox_fini(alg_mbox *mb);               /* keeping: releases what the slots hold */
/* Models received for round r so far. */
int  alg_mbox_count(const alg_mbox *mb, uint64_t r);
/* Round r's slot, taken (zeroed) when it has none yet; out of memory
 * follows the run's policy. */
alg_mbox_slot *alg_mbox_slot_of(alg_mbox *mb, uint64_t r);
/* Adds w x (len doubles) from `from` to round r's slot and records the
 * sender (summing), or keeps a reference to the buffer b (b->data is x)
 * with w (keeping), unless the slot already has a model from it (a
 * sender that came back may send its round again): 1 when added, 0 for a
 * duplicate.  O(count) for the duplicate check.  Out of memory follows
 * the run's policy. */
int  alg_mbox_add(alg_mbox *mb, uint64_t r, int from, double w, cl_buf *b);
/* Whether s holds a model from `from` (slots filled with alg_mbox_add). */
int  alg_mbox_has(const alg_mbox_slot *s, int from);
/* Node's x <- (0 + the round's models in arrival order) + own_w own, then
 * its update with g / g_div and copy_to <- x, in one pass (move: copy_to
 * becomes node's parameters, as alg_mix_apply says).  Summing: from the
 * slot's sum (alg_mix_sum, the same bits), and s is released.  Keeping:
 * alg_mix_apply on the kept payloads, which may defer it: release s only
 * once node's next gradient is in or alg_params_const(node) has
 * returned. */
void alg_mbox_mix(const alg_ctx *ctx, alg_mbox *mb, alg_mbox_slot *s, int node, double own_w,
                  const double *own, const double *g, double g_div, double *copy_to,
                  int move);
/* Frees a finished round's slot (summing: zeroed for reuse; keeping: its
 * buffers released). */
void alg_mbox_release(alg_mbox *mb, alg_mbox_slot *s);

/* Members under failures (the detector's view, the same for every node),
 * for a protocol that keeps one alg_nbr for all nodes.  Until the first
 * declaration nothing is excluded and these cost nothing.  Neighbour j is
 * excluded from round r when declared failed now or back and rejoining at
 * a later round (r < its join round, 0 at first). */
int      alg_nbr_excluded(const alg_ctx *ctx, const alg_nbr *nb, int j, uint64_t r);
uint64_t alg_nbr_join(const alg_nbr *nb, int j);
/* Round-r models node i still waits for: its round-r neighbours not
 * excluded whose model is not in mb. */
int      alg_nbr_missing(const alg_ctx *ctx, alg_nbr *nb, const alg_mbox *mb, uint64_t r,
                         int i);
/* W_ii of round r plus the weight of every neighbour whose model s lacks
 * (a failed neighbour's weight moves to the node's own; s filled with
 * alg_mbox_add). */
double   alg_nbr_self_weight(alg_nbr *nb, const alg_mbox_slot *s, uint64_t r, int i);
/* Sends x (a model, alg_param_bytes(P)) to i's round-r neighbours not
 * excluded. */
void     alg_nbr_send(alg_ctx *ctx, alg_nbr *nb, int i, uint64_t r, uint32_t tag, cl_buf *x);
/* The protocol's on_failure: declared failed, every other live node gets
 * a timer `timer_tag` at once (to look again at the round it waits in);
 * back, peer rejoins at round furthest + 1 (furthest: the furthest round
 * any other live node has begun), so that every pair of live neighbours
 * agrees on the rounds in which they mix. */
void     alg_nbr_declared(alg_ctx *ctx, alg_nbr *nb, int peer, int failed, uint64_t furthest,
                          uint32_t timer_tag);

#endif
