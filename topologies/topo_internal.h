/* topo_internal.h -- shared between the files of topologies/ and nothing
 * else: error formatting, igraph's error handler, the CSR builder for an
 * undirected edge list, mixing weights, and the edge-list file reader.
 * Never included outside topologies/.
 */
#ifndef TOPO_INTERNAL_H
#define TOPO_INTERNAL_H

#include "topo.h"

#include <stdarg.h>

void topo_i_set_error(char *err, size_t err_size, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* 0 when spec names a known kind and mixing with parameters that define a
 * graph, else -1 with the reason in err (topo_gen.c). */
int  topo_i_check_spec(const topo_spec *spec, char *err, size_t err_size);
/* "n=8, p=0.1" and the like: the parameters that define the graph. */
void topo_i_describe(const topo_spec *spec, char *buf, size_t size);

/* An edge list read from a file: pairs (u, v) and, with three columns, the
 * round of each pair. */
typedef struct topo_i_edges {
    size_t m;
    int   *uv;      /* 2 * m */
    long  *round;   /* m, or NULL for two-column files */
} topo_i_edges;

/* Reads "u v" (cols 2) or "round u v" (cols 3) lines, separated by spaces,
 * tabs or one comma; '#' starts a comment; blank lines skipped.  Nodes must
 * be in 0 .. n-1, rounds >= 0, no self-loop; with cols 2 no edge twice.
 * Returns 0, or -1 with "FILE:LINE: error: ..." (or "FILE: error: ...") in
 * err. */
int  topo_i_read_edges(const char *path, int n, int cols, topo_i_edges *e, char *err,
                       size_t err_size);
void topo_i_edges_fini(topo_i_edges *e);

/* Allocates g->off and g->nbr for n nodes from m pairs and sorts each list.
 * Returns 0, -1 when out of memory, -2 on a self-loop or repeated edge. */
int topo_i_fill_csr(topo_graph *g, const int *uv, size_t m);

/* Allocates and fills g->w and g->self_w for g->mixing and g->lazy_alpha,
 * and sets g->symmetric.  Returns 0 or -1 when out of memory. */
int topo_i_fill_weights(topo_graph *g);

/* 1 when the mixing matrix of a connected graph has eigenvalue -1: it is
 * bipartite and no node keeps any weight on itself. */
int topo_i_oscillates(const topo_graph *g);

/* Stationary distribution pi of W (pi W = pi, sum 1) for the weights
 * topo_i_fill_weights makes: uniform for symmetric W, proportional to the
 * degree for uniform mixing.  pi has n doubles. */
void topo_i_stationary(const topo_graph *g, double *pi);

/* The undirected support of a learned W (pairs i < j with W_ij > 0 or
 * W_ji > 0) as 2 m ints (caller frees), and its weights into a graph whose
 * CSR came from those pairs (also sets learned, symmetric and the
 * objective trace).  0 or -1 when out of memory (topo_learn.c). */
int topo_i_learned_edges(const topo_learn *l, int **uv, size_t *m);
int topo_i_learned_weights(topo_graph *g, const topo_learn *l);

/* Digraph allocation and the in-lists from the out-lists. */
topo_digraph *topo_i_digraph_alloc(int n, size_t n_arcs);
int           topo_i_digraph_fill_in(topo_digraph *d);   /* 0 or -1 (memory) */
void          topo_i_digraph_flags(topo_digraph *d);     /* row/col_stochastic */

#endif
