/* alg_prague_static.h -- Prague's static Group Generator (alg_prague.c,
 * `groups` = "static"): one seeded random partition of the workers into
 * groups per phase, a worker's k-th request being for phase k, each
 * phase's partition drawn over the workers in the failure detector's view
 * when the phase's first request came.  A helper of one protocol, compiled
 * against alg.h alone; it knows nothing of models or collectives.
 */
#ifndef ALG_PRAGUE_STATIC_H
#define ALG_PRAGUE_STATIC_H

#include "alg.h"

typedef struct pr_static pr_static;

/* For ctx->n workers in groups of group_size (at most n); NULL when out
 * of memory. */
pr_static *pr_static_create(const alg_ctx *ctx, int group_size, uint64_t seed);
void       pr_static_destroy(pr_static *s);

/* The generator received worker w's request for phase p.  When every
 * member of w's group of phase p still counted has asked, writes the
 * group's members (those counted) to members and returns their count;
 * else 0 (also for a request of a worker the phase does not count: one
 * declared failed since). */
int pr_static_request(const alg_ctx *ctx, pr_static *s, int w, uint64_t p, int *members);

/* The detector declared peer failed (failed = 1) or back (0): the phases
 * no request has opened yet are drawn over the new view; a failed worker
 * stops counting in every phase it was in.  Returns the first such phase:
 * the one a worker back rejoins at. */
uint64_t pr_static_declared(const alg_ctx *ctx, pr_static *s, int peer, int failed);

/* After a failure: a group of an open phase whose counted members have
 * all asked now, in members, with its count; 0 when none is left (call
 * until 0).  Groups left with no member are dropped. */
int pr_static_take_complete(const alg_ctx *ctx, pr_static *s, int *members);

#endif
