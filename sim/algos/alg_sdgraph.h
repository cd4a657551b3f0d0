/* alg_sdgraph.h -- the graph of SD-FEEL's edge servers and its mixing
 * weights (Sun et al.'s inter-cluster aggregation): any topology kind of
 * topologies/ (built by topo_build, igraph behind it) over the C edge
 * servers, with either the graph's own Metropolis-Hastings weights
 * (doubly stochastic: the servers' models tend to their plain average) or
 * weights by the clusters' data sizes (a Metropolis-Hastings chain whose
 * stationary distribution is each cluster's share of the data: the
 * models tend to the data-size-weighted average, the global model of
 * FedAvg over all clients).  A protocol helper, compiled against alg.h
 * alone: the protocol puts ALG_SDG_PARAMS in its table at position base.
 * It sends nothing; the protocol runs the gossip rounds.
 */
#ifndef ALG_SDGRAPH_H
#define ALG_SDGRAPH_H

#include <stddef.h>
#include "alg.h"

enum { ALG_SDG_GRAPH, ALG_SDG_DATA };
extern const char *const alg_sdg_weight_names[];

/* The five parameters at position base of a table (server_topology's
 * choices are topologies/' kind names; the torus kinds are refused). */
#define ALG_SDG_PARAMS \
    { "server_topology", ALG_PARAM_CHOICE, TOPO_RING, 0, 0, topo_kind_name_list, \
      "the graph of the edge servers (a topology kind)" }, \
    { "server_p", ALG_PARAM_REAL, 0.5, 0, 1, NULL, \
      "server graph: erdos_renyi edge probability, watts_strogatz rewiring probability" }, \
    { "server_degree", ALG_PARAM_INT, 2, 1, 1e9, NULL, \
      "server graph: random_regular degree, ring_lattice and watts_strogatz k, barabasi_albert m" }, \
    { "server_edges", ALG_PARAM_PATH, 0, 0, 0, NULL, \
      "server graph: edge_list file of server pairs (0 .. clusters - 1)" }, \
    { "server_weights", ALG_PARAM_CHOICE, ALG_SDG_GRAPH, 0, 0, alg_sdg_weight_names, \
      "mixing weights of the servers: graph (Metropolis-Hastings) or data (by cluster data size)" }
#define ALG_SDG_N_PARAMS 5

typedef struct alg_sdg {
    int      C;
    size_t  *off;     /* C + 1: server c's neighbours are nbr[off[c] .. off[c + 1]) */
    int     *nbr;     /* cluster numbers, in increasing cyclic distance from c */
    double  *w;       /* their weights */
    double  *self;    /* C */
    char    *uniform; /* C: every weight of c's row 1 / (1 + degree) */
} alg_sdg;

/* Whether the server graph can be built on C servers with the
 * parameters at ctx->param[base ..] (a reason in err and -1 when not:
 * disconnected, a bad edge list, a torus kind). */
int  alg_sdg_check(const alg_ctx *ctx, int base, int C, char *err, size_t size);
/* Builds it; samples[c] is cluster c's data size (for data weights).
 * -1 when out of memory or the graph cannot be built (check said so). */
int  alg_sdg_init(alg_sdg *s, const alg_ctx *ctx, int base, int C, const double *samples);
void alg_sdg_fini(alg_sdg *s);

static inline int alg_sdg_degree(const alg_sdg *s, int c) { return (int)(s->off[c + 1] - s->off[c]); }
/* Position of server d among c's neighbours, or -1. */
int  alg_sdg_index(const alg_sdg *s, int c, int d);

/* ---- the clusters of sdfeel and sdfeel-async ----
 * The n workers are split into C blocks of consecutive nodes: cluster c
 * holds workers [floor(c n / C), floor((c + 1) n / C)); its edge server is
 * node n + c. */
int    alg_sdc_lo(int n, int C, int c);
int    alg_sdc_hi(int n, int C, int c);
int    alg_sdc_of(int n, int C, int w);
/* Cluster c's data: its workers' sample counts summed in worker order. */
double alg_sdc_samples(const alg_ctx *ctx, int C, int c);
/* At least one worker per cluster (the error names the protocol) and a
 * server graph alg_sdg_check accepts. */
int    alg_sdc_check(const alg_ctx *ctx, const char *protocol, int base, int C, char *err,
                     size_t size);
/* ctx->shared = the server graph (an alg_sdg) with the clusters' data
 * sizes as the data weights; -1 when out of memory. */
int    alg_sdc_shared_init(alg_ctx *ctx, int base, int C);
void   alg_sdc_shared_fini(alg_ctx *ctx);

#endif
