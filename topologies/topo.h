/* topo.h -- communication topologies: igraph generates the graph, this
 * module turns it into neighbour lists (CSR), Metropolis-Hastings mixing
 * weights, a bipartition when one exists, and statistics (degrees, diameter,
 * second-largest eigenvalue modulus and spectral gap of the mixing matrix).
 * The only code that includes <igraph.h>.  It knows nothing of time or
 * messages.
 */
#ifndef TOPO_H
#define TOPO_H

#include <stddef.h>
#include <stdint.h>

typedef enum topo_kind {
    TOPO_RING = 0,
    TOPO_COMPLETE,
    TOPO_TORUS2D,
    TOPO_ERDOS_RENYI,
    TOPO_RANDOM_REGULAR
} topo_kind;

typedef struct topo_spec {
    topo_kind kind;
    int    n;        /* nodes */
    int    rows, cols;  /* torus2d: rows * cols == n */
    double p;        /* erdos_renyi: edge probability */
    int    degree;   /* random_regular: degree (n * degree even) */
} topo_spec;

/* An undirected simple graph as sorted neighbour lists with mixing weights.
 * Node i's neighbours are nbr[off[i] .. off[i+1]-1] in increasing order, with
 * weight w[k] for neighbour nbr[k]; self_w[i] is the weight on itself.  Rows
 * of the mixing matrix sum to 1 and it is symmetric. */
typedef struct topo_graph {
    int     n;
    size_t  n_edges;  /* undirected edges */
    size_t *off;      /* n + 1 */
    int    *nbr;      /* 2 * n_edges */
    double *w;        /* 2 * n_edges */
    double *self_w;   /* n */
    int     bipartite;   /* 1 when the graph is bipartite */
    int    *side;        /* n; 0 or 1 when bipartite, else NULL */
} topo_graph;

/* Statistics reported in run.json and by `dtsim topo`. */
typedef struct topo_stats {
    int    n;
    size_t n_edges;
    int    degree_min, degree_max;
    int    diameter;     /* -1: not computed (n > TOPO_DIAMETER_MAX) */
    int    spectral_ok;   /* 0 when n is too large for the dense solver;
                             lambda2 and spectral_gap are then 0, unread */
    double lambda2;       /* second-largest eigenvalue modulus of W */
    double spectral_gap;  /* 1 - lambda2 */
} topo_stats;

/* Largest n for which topo_stats computes the spectrum (dense solver). */
#define TOPO_DENSE_MAX 1024   /* 0.5 s here; 2048 takes 8 s, 4096 a minute */
/* Largest n for which topo_stats computes the diameter (a breadth-first
 * search from every node, O(n * edges): a ring of 16384 takes about 2 s
 * here, one of 10^5 over two minutes); above it diameter is -1. */
#define TOPO_DIAMETER_MAX 16384

/* Builds the graph and its Metropolis-Hastings weights
 * (w_ij = 1 / (1 + max(d_i, d_j)), self weight the rest of the row).
 * Random generators seed igraph's RNG with `seed` right before the call.
 * A disconnected graph, or a spec that cannot be built, is an error: returns
 * NULL and writes a message (lowercase, no full stop, e.g. "erdos_renyi graph
 * with n=8, p=0.1 is disconnected (3 components); raise p") into err. */
topo_graph *topo_build(const topo_spec *spec, uint64_t seed, char *err, size_t err_size);
void        topo_destroy(topo_graph *g);

/* Degrees, diameter and the spectrum of the mixing matrix (dense symmetric
 * eigen-solver from GSL; O(n^3), skipped above TOPO_DENSE_MAX). Returns 0, or
 * -1 when out of memory. */
int topo_compute_stats(const topo_graph *g, topo_stats *st);

/* Writes the dense n x n mixing matrix, row-major, into W (n*n doubles). */
void topo_mixing_dense(const topo_graph *g, double *W);

/* Name of a kind ("ring", "complete", "torus2d", "erdos_renyi",
 * "random_regular"), and the reverse; -1 when unknown. */
const char *topo_kind_name(topo_kind k);
int         topo_kind_from_name(const char *name);
const char *topo_kind_names(void);   /* comma-separated, for errors */

#endif
