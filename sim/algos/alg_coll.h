/* alg_coll.h -- all-reduce among a set of nodes as real messages, for the
 * protocols that need one (allreduce, local-sgd, prague, ...).  Three
 * patterns: ring (reduce-scatter + all-gather, Patarasuk & Yuan 2009),
 * recursive doubling (pairwise exchanges at distance 2^s, with a fold for
 * sizes that are not powers of two; Thakur et al. 2005) and binomial tree
 * (reduce to the first member, then broadcast).  Every member ends with a
 * bit-identical sum.  The collective sends through the cluster and never
 * touches the event queue; the owning protocol routes messages with the
 * collective's tag to alg_coll_on_message.
 */
#ifndef ALG_COLL_H
#define ALG_COLL_H

#include <stddef.h>
#include <stdint.h>
#include "alg.h"

typedef enum alg_coll_kind {
    ALG_COLL_RING = 0,
    ALG_COLL_RECURSIVE_DOUBLING,
    ALG_COLL_TREE
} alg_coll_kind;

/* "ring", "recursive_doubling", "tree", NULL: for parameter tables. */
extern const char *const alg_coll_kind_names[];

/* Called at node when its sum is complete; sum (len doubles) is valid
 * during the call only.  The node may start its next collective from it. */
typedef void (*alg_coll_done)(alg_ctx *ctx, int node, const double *sum, size_t len);

typedef struct alg_coll alg_coll;

/* A collective engine for ctx->n nodes and vectors of len doubles (<=
 * ctx->P), whose messages carry tag.  NULL when out of memory. */
alg_coll *alg_coll_create(const alg_ctx *ctx, alg_coll_kind kind, size_t len, uint32_t tag,
                          alg_coll_done done);
/* Called at node when part id's sum is complete (alg_coll_create_part). */
typedef void (*alg_coll_part_done)(alg_ctx *ctx, int node, int id, const double *sum,
                                   size_t len);

/* A collective over one part of a vector (a gradient bucket): len doubles,
 * the caller passing each contribution from where the part lies; done
 * gets id back.  Its messages are priced like any of len parameters,
 * except with the timing-only model (no parameters, len 0), where the
 * whole part is worth timing_bytes on the wire instead of the model's
 * message size.  Otherwise as alg_coll_create. */
alg_coll *alg_coll_create_part(const alg_ctx *ctx, alg_coll_kind kind, size_t len, uint32_t tag,
                               alg_coll_part_done done, int id, double timing_bytes);
/* Heap bytes of a collective for n nodes and vectors of len doubles whose
 * rounds run among k members (the memory check before a run; payloads in
 * flight are the runner's to count). */
double    alg_coll_memory_bytes(int n, size_t len, int k);
/* Releases held payloads too.  NULL is fine. */
void      alg_coll_destroy(alg_ctx *ctx, alg_coll *co);

/* node joins all-reduce `round` among members (k node numbers in the same
 * order at every member; copied) with its contribution (len doubles,
 * copied).  Rounds (< 2^31) must be distinct for the same node within an
 * epoch (e.g. an iteration counter).  Messages of this round that came early are used. */
void alg_coll_start(alg_ctx *ctx, alg_coll *co, int node, uint64_t round,
                    const int *members, int k, const double *contrib);

/* The same over the first len <= the collective's length doubles only (a
 * frozen model's trainable suffix: alg_freeze_round): every message of
 * the round is cut and priced from len, and done gets len.  Every member
 * of a round must give the same len. */
void alg_coll_start_len(alg_ctx *ctx, alg_coll *co, int node, uint64_t round,
                        const int *members, int k, const double *contrib, size_t len);
/* The same, with the timing-only model's bytes of this round's whole
 * vector given (>= 0; e.g. a pipeline stage's share of the model, stages
 * of different sizes sharing one collective); every member of a round
 * must give the same.  With a model, as alg_coll_start_len. */
void alg_coll_start_timed(alg_ctx *ctx, alg_coll *co, int node, uint64_t round,
                          const int *members, int k, const double *contrib, size_t len,
                          double timing_bytes);
/* Returns 1 when m is a message of this collective (consumed, payload
 * referenced as needed), 0 otherwise. */
int  alg_coll_on_message(alg_ctx *ctx, alg_coll *co, int node, const cl_msg *m);

int  alg_coll_active(const alg_coll *co, int node);

/* Re-formation (a member declared failed, or one back inside a
 * collective): every node abandons the collective it is in, its partial
 * sums dropped and the mail it holds released, and a new epoch begins;
 * messages of earlier epochs that arrive later (retransmissions included)
 * are dropped, so the owner may re-run the same round among other members.
 * The caller restarts what it wants with alg_coll_start.  O(n + mail). */
void     alg_coll_new_epoch(alg_ctx *ctx, alg_coll *co);
/* node alone abandons the round it is in (its mail of that round
 * released, of later rounds kept; no new epoch): for an owner that moves
 * the survivors to a round of another number.  Nothing when idle. */
void     alg_coll_abandon(alg_ctx *ctx, alg_coll *co, int node);
uint64_t alg_coll_epoch(const alg_coll *co);

/* Elastic membership, the detector's view: the members of `round` are the
 * workers not declared failed (alg_is_failed) whose join round is <= round,
 * in node order; every worker's join round is 0 until set.  The list is
 * owned by co and valid until the next call; k gets its length.  While
 * nothing changed (no alg_coll_members_changed, no join set) it is
 * alg_coll_everyone.  O(n) when the membership or the round changed. */
const int *alg_coll_members(const alg_ctx *ctx, alg_coll *co, uint64_t round, int *k);
/* The detector's view changed (call from on_failure). */
void       alg_coll_members_changed(alg_coll *co);
/* node is a member from `round` on (a worker taken back). */
void       alg_coll_set_join(alg_coll *co, int node, uint64_t round);
uint64_t   alg_coll_join(const alg_coll *co, int node);
/* The member list 0 .. ctx->n - 1 (every worker, in order), owned by co. */
const int *alg_coll_everyone(const alg_coll *co);
/* What node waits for, for stall reports; empty when not in a collective. */
void alg_coll_describe_wait(const alg_coll *co, int node, char *buf, size_t size);

/* ---- catching up after failures (alg_coll_catch.c) ----
 * The recovery every all-reduce protocol shares (allreduce, eager,
 * local-sgd, comdml; docs/algorithms.md, "When a node fails"): a member
 * declared failed re-forms the collective among the live members; one
 * declared back, or left behind in a round the most advanced member had
 * completed, waits for a live member's model of a given round, which the
 * first member to enter that round sends it.  The protocol's per-node
 * state embeds an alg_catch and a uint64_t round (the round the node is
 * in: its model is that round's when it enters it); the hooks do what
 * differs. */

/* Per node, embedded in the protocol's state: waits for a live member's
 * model of round `want` while `catching` (sent once `served`). */
typedef struct alg_catch {
    int      catching, served;
    uint64_t want;
} alg_catch;

typedef struct alg_catch_ops {
    size_t catch_off;   /* offsetof the alg_catch in the node state */
    size_t round_off;   /* offsetof its round (uint64_t) */
    /* Re-formation, a live node behind the most advanced round (or still
     * waiting: was_catching), after the count of waiting nodes took it and
     * before it is set to wait for that round: it stops what it was
     * doing.  NULL: nothing. */
    void (*behind)(alg_ctx *ctx, int node, int was_catching);
    /* Re-formation, a live member at the most advanced round R: it re-runs
     * its part of R (restarting: it is the node whose interrupted step
     * starts over).  NULL: nothing. */
    void (*rerun)(alg_ctx *ctx, int node, uint64_t R, int restarting);
    /* Re-formation, after either of the two, for each live node.  NULL: nothing. */
    void (*after)(alg_ctx *ctx, int node);
    /* Declared (failed or back), once its wait was cancelled and before
     * anything else.  NULL: nothing. */
    void (*declared)(alg_ctx *ctx, int node);
    /* Declared back and taken back: it now waits for a model; it drops
     * what it was doing.  NULL: nothing. */
    void (*taken_back)(alg_ctx *ctx, int node);
    /* The collectives to start a new epoch of; NULL: the membership's. */
    void (*new_epoch)(alg_ctx *ctx);
} alg_catch_ops;

/* Owned by the protocol's shared state (no allocation): ops (static,
 * borrowed), the collective whose membership the join rounds follow, and
 * the tag of the model messages. */
typedef struct alg_catchup {
    const alg_catch_ops *ops;
    alg_coll            *coll;
    uint32_t             tag;
    int                  n_catching;   /* nodes waiting for a model */
} alg_catchup;

void alg_catchup_init(alg_catchup *cu, const alg_catch_ops *ops, alg_coll *coll, uint32_t tag);
/* Node `from` just entered its round: it sends its model (one snapshot)
 * to every node waiting for that round's model and not yet served. */
void alg_catchup_serve(alg_ctx *ctx, alg_catchup *cu, int from);
/* Every live member abandons the collective in progress (a new epoch);
 * R is the most advanced round of the live members not waiting: those
 * behind it (or waiting for a round <= R) wait for R's model, the others
 * re-run R (ops->rerun); the first member at R serves.  restarting: the
 * node passed to rerun as restarting, or -1.  Nothing when every live
 * node waits. */
void alg_catchup_reform(alg_ctx *ctx, alg_catchup *cu, int restarting);
/* on_failure: the membership changed, node's wait is cancelled; failed:
 * a re-formation; back: it waits for the model of the round after the
 * most advanced of the other live nodes not waiting, its member from that
 * round (nothing when there is none: it goes on alone). */
void alg_catchup_declared(alg_ctx *ctx, alg_catchup *cu, int node, int failed);
/* m (of cu's tag) at node: when it is the model node waits for, copies
 * it into node's parameters, sets node's round to it, ends the wait and
 * returns 1 (the protocol restarts the node); otherwise 0 (dropped). */
int  alg_catchup_take(alg_ctx *ctx, alg_catchup *cu, int node, const cl_msg *m);
/* The wait, for stall reports: 1 (and buf) when node waits for a model. */
int  alg_catchup_describe(const alg_ctx *ctx, const alg_catchup *cu, int node, char *buf,
                          size_t size);

#endif
