/* alg_epidemic_graph.h -- the per-round communication graphs of Epidemic
 * Learning (alg_epidemic.c), drawn as pure functions of (seed, round, the
 * nodes drawn over): EL-Oracle's random s-regular graph, EL-Local's s
 * peers per node.  A helper of one protocol, compiled against alg.h alone;
 * it knows nothing of rounds, models or failures.
 */
#ifndef ALG_EPIDEMIC_GRAPH_H
#define ALG_EPIDEMIC_GRAPH_H

#include "alg.h"

/* One round's communication graph: node j sends to out[j*s .. j*s +
 * out_deg[j] - 1] and receives in_deg[j] models, from in_list[in_off[j] ..
 * in_off[j + 1] - 1] (senders in node order).  The caller's cache fields
 * (round, valid, epoch) are not touched by the drawing. */
typedef struct el_round {
    uint64_t round;
    int      valid, epoch;
    int     *out, *out_deg;
    int     *in_deg, *in_off, *in_list;
} el_round;

/* The drawing's workspace for n nodes and fanout s. */
typedef struct el_draw {
    int      n, s, d;    /* d: the degree drawn last (s, or the complement's) */
    uint64_t seed;
    int     *stubs;      /* n * d */
    int     *adj, *deg;  /* n * d, n: the undirected graph being drawn */
    int     *mark;       /* n, stamps for membership tests (the protocol may use them) */
    int      stamp;
    int     *pool;       /* n: EL-Local's candidates among its neighbours */
    int     *live_mark;  /* n, stamps: in the node set being drawn over */
    int      live_stamp;
} el_draw;

/* Allocates the workspace (-1 when out of memory; el_draw_fini frees what
 * was allocated) and a round's arrays. */
int  el_draw_init(el_draw *dr, int n, int s, uint64_t seed);
void el_draw_fini(el_draw *dr);
int  el_round_init(el_round *c, int n, int s);
void el_round_fini(el_round *c);

/* Round r's graph over the m nodes L[] (increasing); the others neither
 * send nor receive.  Before any failure L is 0 .. n-1.  EL-Oracle: an
 * s-regular undirected graph drawn like networkx's random_regular_graph
 * (O(m s^2)), the complete graph when m <= s, and with m s odd an
 * s-regular graph on m + 1 vertices whose extra one is dropped.
 * EL-Local: every node of L samples s distinct peers among the other
 * nodes of L (nbrs NULL) or its neighbours in nbrs that are in L, all of
 * them when fewer. */
void el_draw_oracle(el_draw *dr, el_round *c, uint64_t r, const int *L, int m);
void el_draw_local(el_draw *dr, el_round *c, uint64_t r, const int *L, int m,
                   const topo_graph *nbrs);

#endif
