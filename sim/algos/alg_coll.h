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
/* Releases held payloads too.  NULL is fine. */
void      alg_coll_destroy(alg_ctx *ctx, alg_coll *co);

/* node joins all-reduce `round` among members (k node numbers in the same
 * order at every member; copied) with its contribution (len doubles,
 * copied).  Rounds must be distinct for the same node over time (e.g. an
 * iteration counter).  Messages of this round that came early are used. */
void alg_coll_start(alg_ctx *ctx, alg_coll *co, int node, uint64_t round,
                    const int *members, int k, const double *contrib);

/* Returns 1 when m is a message of this collective (consumed, payload
 * referenced as needed), 0 otherwise. */
int  alg_coll_on_message(alg_ctx *ctx, alg_coll *co, int node, const cl_msg *m);

int  alg_coll_active(const alg_coll *co, int node);
/* The member list 0 .. ctx->n - 1 (every worker, in order), owned by co. */
const int *alg_coll_everyone(const alg_coll *co);
/* What node waits for, for stall reports; empty when not in a collective. */
void alg_coll_describe_wait(const alg_coll *co, int node, char *buf, size_t size);

#endif
