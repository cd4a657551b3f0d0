/* topo.h -- communication topologies: igraph generates the graph, this
 * module turns it into neighbour lists (CSR) with mixing weights
 * (Metropolis-Hastings, max-degree, uniform, each optionally lazy), a
 * bipartition when one exists, statistics (degrees, diameter, second-largest
 * eigenvalue modulus and spectral gap of the mixing matrix), directed graphs
 * with column-stochastic weights for push-sum, time-varying schedules (one
 * graph per round) and edge-list/DOT output.  The only code that includes
 * <igraph.h>.  It knows nothing of time, messages or scenarios.
 */
#ifndef TOPO_H
#define TOPO_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* Static graph generators.  Append new kinds at the end. */
typedef enum topo_kind {
    TOPO_RING = 0,
    TOPO_COMPLETE,
    TOPO_TORUS2D,
    TOPO_ERDOS_RENYI,
    TOPO_RANDOM_REGULAR,
    TOPO_RING_LATTICE,      /* each node linked to the k nearest on each side */
    TOPO_TORUS3D,
    TOPO_HYPERCUBE,         /* n = 2^d; i ~ i xor 2^b */
    TOPO_STAR,              /* centre 0 */
    TOPO_BINARY_TREE,       /* node i's children 2i+1, 2i+2 */
    TOPO_WATTS_STROGATZ,    /* ring lattice (k per side), edges rewired with beta */
    TOPO_BARABASI_ALBERT,   /* preferential attachment, m edges per new node */
    TOPO_EXPONENTIAL,       /* i ~ i + 2^j mod n, j = 0 .. ceil(log2 n) - 1 */
    TOPO_EDGE_LIST,         /* from a file: one "u v" pair per line */
    TOPO_LEARNED            /* STL-FW from the label proportions (topo_learn.c) */
} topo_kind;

/* How the weights of the mixing matrix W are chosen (x <- W x). */
typedef enum topo_mixing {
    TOPO_MIX_METROPOLIS = 0,  /* w_ij = 1 / (1 + max(d_i, d_j)); symmetric */
    TOPO_MIX_MAX_DEGREE,      /* w_ij = 1 / (1 + d_max); symmetric */
    TOPO_MIX_UNIFORM          /* w_ij = 1 / d_i, no self weight (random walk);
                                 symmetric only on regular graphs */
} topo_mixing;

typedef struct topo_spec {
    topo_kind kind;
    int    n;           /* nodes */
    int    rows, cols;  /* torus2d: rows * cols == n; torus3d with layers */
    int    layers;      /* torus3d: rows * cols * layers == n */
    double p;           /* erdos_renyi: edge probability */
    int    degree;      /* random_regular: degree (n * degree even) */
    int    k;           /* ring_lattice, watts_strogatz: neighbours per side */
    double beta;        /* watts_strogatz: rewiring probability in [0, 1] */
    int    m;           /* barabasi_albert: edges per new node, >= 1 */
    const char *path;   /* edge_list: file name (borrowed) */
    /* learned: degree is the budget (neighbours per node, undirected),
     * label_props the n x n_labels row-major proportions (borrowed),
     * lambda the weight of ||W - J||^2; mixing and lazy_alpha unused */
    const double *label_props;
    int    n_labels;
    double lambda;
    topo_mixing mixing; /* default (0) Metropolis-Hastings */
    double lazy_alpha;  /* W <- alpha I + (1 - alpha) W, 0 <= alpha < 1 */
} topo_spec;

/* An undirected simple graph as sorted neighbour lists with mixing weights.
 * Node i's neighbours are nbr[off[i] .. off[i+1]-1] in increasing order, with
 * weight w[k] = W[i][nbr[k]]; self_w[i] = W[i][i].  Rows of W sum to 1;
 * W is symmetric except with uniform mixing on an irregular graph. */
typedef struct topo_graph {
    int     n;
    size_t  n_edges;  /* undirected edges */
    size_t *off;      /* n + 1 */
    int    *nbr;      /* 2 * n_edges */
    double *w;        /* 2 * n_edges */
    double *self_w;   /* n */
    int     bipartite;   /* 1 when the graph is bipartite */
    int    *side;        /* n; 0 or 1 when bipartite, else NULL */
    topo_mixing mixing;
    double  lazy_alpha;
    int     symmetric;   /* 1 when W == W^T (then doubly stochastic) */
    /* kind learned: W is STL-FW's (doubly stochastic, symmetric or not;
     * w[k] may be 0 on an edge used only the other way); mixing and
     * lazy_alpha are unread.  learn_objective[0 .. learn_iters] is g(W_l)
     * at each accepted Frank-Wolfe step, learn_stop why it stopped. */
    int     learned;
    int     learn_iters;
    double *learn_objective;
    const char *learn_stop;
    /* the generator that built it (topo_build): topo_kind + 1 and its
     * sides (ring and complete: n; torus2d, torus3d: rows, cols, layers;
     * hypercube: the dimension); 0 for a graph built otherwise */
    int     gen_kind, gen_dims[3];
} topo_graph;

/* A directed graph with the mixing weights of one round, by sender and by
 * receiver.  Arc j -> i carries weight W[i][j] (what i takes from j):
 * out_nbr[out_off[j] ..] are j's receivers with out_w = W[receiver][j];
 * in_nbr[in_off[i] ..] are i's senders with in_w = W[i][sender]; both lists
 * sorted; self_w[i] = W[i][i].  An undirected edge is two arcs. */
typedef struct topo_digraph {
    int     n;
    size_t  n_arcs;
    size_t *out_off, *in_off;   /* n + 1 each */
    int    *out_nbr, *in_nbr;   /* n_arcs each */
    double *out_w, *in_w;       /* n_arcs each */
    double *self_w;             /* n */
    int     row_stochastic;     /* rows of W sum to 1 (x <- W x keeps constants) */
    int     col_stochastic;     /* columns sum to 1 (keeps the sum: push-sum) */
} topo_digraph;

/* Statistics reported in run.json and by `dtsim topo`. */
typedef struct topo_stats {
    int    n;
    size_t n_edges;
    int    degree_min, degree_max;
    int    diameter;
    int    diameter_ok;   /* 0 when skipped (n (n + 2 edges) > TOPO_DIAMETER_WORK);
                             diameter is then 0, unread */
    int    spectral_ok;   /* 0 when the iterative solver did not converge;
                             lambda2 and spectral_gap are then 0, unread */
    double lambda2;       /* second-largest eigenvalue modulus of W */
    double spectral_gap;  /* 1 - lambda2 */
    const char *solver;   /* "dense", "arpack", "closed" (the bounded
                             statistics' closed forms), or "none" when the
                             bounded statistics did not attempt it (static
                             string) */
    int    bounded;       /* 1: topo_compute_stats_bounded's budgets applied */
} topo_stats;

/* The diameter takes a breadth-first search from every node, n (n + 2 edges)
 * steps: about 3 s for a 4-regular graph of 10^4 nodes here.  Above this
 * many steps it is skipped (minutes at 10^5 nodes). */
#define TOPO_DIAMETER_WORK 3e9

/* topo_compute_stats: the dense solver up to TOPO_ARPACK_MIN nodes; ARPACK
 * above, falling back to the dense solver up to TOPO_DENSE_MAX nodes when
 * ARPACK does not converge. */
#define TOPO_ARPACK_MIN 256
#define TOPO_DENSE_MAX 1024   /* 0.5 s here; 2048 takes 8 s, 4096 a minute */

/* Builds the graph and its mixing weights.  Random generators seed igraph's
 * RNG with `seed` right before the call.  A disconnected graph, a mixing
 * matrix with eigenvalue -1 (uniform weights on a bipartite graph: the
 * iteration oscillates), or a spec that cannot be built, is an error:
 * returns NULL and writes a message (lowercase, no full stop, e.g.
 * "erdos_renyi graph with n=8, p=0.1 is disconnected (3 components); raise
 * p"; for a bad line of an edge-list file "FILE:LINE: error: ...") into err.
 * O(n + edges) after igraph's generator. */
topo_graph *topo_build(const topo_spec *spec, uint64_t seed, char *err, size_t err_size);
void        topo_destroy(topo_graph *g);

/* Degrees, diameter (O(n * edges), skipped above TOPO_DIAMETER_WORK) and
 * the spectrum of the mixing matrix: dense symmetric eigen-solver from GSL
 * for n <= TOPO_ARPACK_MIN (O(n^3)), ARPACK through igraph above (a few
 * hundred sparse products; gives up on very slowly mixing graphs such as a
 * ring of 10^4 nodes), with the dense solver as fallback up to
 * TOPO_DENSE_MAX.  Returns 0, or -1 when out of memory. */
int topo_compute_stats(const topo_graph *g, topo_stats *st);

/* The same within a budget that keeps a run's set-up small beside the run
 * (a few tens of microseconds of CPU per node here; bench/RESULTS.md,
 * "Set-up"): the diameter only up to TOPO_BOUNDED_DIAMETER_WORK BFS steps
 * (about 0.07 s), the dense solver up to TOPO_ARPACK_MIN nodes, ARPACK
 * above with at most TOPO_BOUNDED_ARPACK_ITERS iterations and no dense
 * fallback up to TOPO_BOUNDED_SPECTRUM_MAX nodes, and no spectrum above
 * (solver "none").  What it leaves out has diameter_ok / spectral_ok 0, exactly
 * as the full statistics report what they could not compute; what it
 * reports has the full statistics' precision (the same solvers and
 * tolerance).  Graphs that topo_build made as a ring, a 2-D or 3-D torus
 * (every side >= 3), a hypercube or a complete graph get their diameter
 * and spectrum in closed form instead, at every size (O(1) after the
 * degrees; solver "closed": the eigenvalues of a regular graph's W are
 * affine in its adjacency's, known for these, exact to rounding).  bounded
 * is 1. */
#define TOPO_BOUNDED_DIAMETER_WORK 1e7
#define TOPO_BOUNDED_ARPACK_ITERS 60
#define TOPO_BOUNDED_SPECTRUM_MAX 32768
int topo_compute_stats_bounded(const topo_graph *g, topo_stats *st);

typedef enum topo_solver { TOPO_SOLVER_AUTO = 0, TOPO_SOLVER_DENSE, TOPO_SOLVER_ARPACK } topo_solver;

/* Second-largest eigenvalue modulus of W with the solver asked for.
 * Returns 0, -1 when out of memory or the solver failed, 1 when ARPACK did
 * not converge. */
int topo_slem(const topo_graph *g, topo_solver solver, double *out);

/* Writes the dense n x n mixing matrix, row-major, into W (n*n doubles). */
void topo_mixing_dense(const topo_graph *g, double *W);

/* One round out = W x (n doubles each, out != x).  O(n + edges). */
void topo_mix(const topo_graph *g, const double *x, double *out);
void topo_digraph_mix(const topo_digraph *d, const double *x, double *out);

/* Edge list "source,target,weight" (one line per undirected edge, source <
 * target, weight W[source][target]) or Graphviz DOT.  Returns 0 or -1 on a
 * write error. */
int topo_write_csv(const topo_graph *g, FILE *f);
int topo_write_dot(const topo_graph *g, const char *name, FILE *f);

/* Names of kinds and mixings ("unknown" and "?" for values out of range),
 * and the reverse (-1 when unknown). */
const char *topo_kind_name(topo_kind k);
int         topo_kind_from_name(const char *name);
const char *topo_kind_names(void);   /* comma-separated, for errors */
const char *topo_mixing_name(topo_mixing m);
int         topo_mixing_from_name(const char *name);
const char *topo_mixing_names(void);

/* The same names as NULL-terminated lists indexed by value, for code that
 * must not link igraph (the scenario loader): topologies/topo_names.c,
 * library dtsim_topo_names.  Append a name with its kind. */
extern const char *const topo_kind_name_list[];
extern const char *const topo_mixing_name_list[];
/* One line describing each name, indexed alike (`dtsim list`). */
extern const char *const topo_kind_help_list[];
extern const char *const topo_mixing_help_list[];

/* ---- learned topologies (STL-FW, topo_learn.c) ------------------------- */

/* Frank-Wolfe on the dense n x n matrix: an assignment problem on K_{n,n}
 * per step (0.17 s at n = 256 here), so n is bounded. */
#define TOPO_LEARN_MAX_NODES 256
#define TOPO_LEARN_MAX_ITER 100    /* steps at most, as the authors' code */
#define TOPO_LEARN_LAMBDA 0.1      /* default lambda */

typedef struct topo_learn {
    int     n, K;
    int     iters;       /* accepted Frank-Wolfe steps */
    double *W;           /* n * n row-major: the last accepted iterate */
    double *objective;   /* g(W_0 = I), g(W_1), ..., g(W_iters) */
    double *gamma;       /* the step size of each accepted step */
    int     degree;      /* largest undirected degree of W's support */
    const char *stop;    /* "budget", "optimal", "no decrease" or "iterations" */
} topo_learn;

/* g(W) = (1/n) ||W PI - J PI||_F^2 + (lambda/n) ||W - J||_F^2, J = 11^T/n,
 * for W n x n and PI n x K, row-major.  O(n^2 K). */
double topo_learn_objective(const double *W, const double *pi, int n, int K, double lambda);

/* STL-FW (Le Bars et al., AISTATS 2023) from W_0 = I: at most max_iter
 * Frank-Wolfe steps with exact line search, each kept only when the
 * objective decreases and no node gets more than budget neighbours
 * (j with W_ij > 0 or W_ji > 0).  The result is doubly stochastic and
 * nonnegative; a row has at most budget + 1 nonzeros.  Caller-owned: free
 * with topo_learn_fini.  0, or -1 with a message (bad arguments, out of
 * memory).  O(max_iter (n^2 K + assignment)). */
int  topo_learn_stlfw(const double *pi, int n, int K, double lambda, int budget, int max_iter,
                      topo_learn *out, char *err, size_t err_size);
void topo_learn_fini(topo_learn *l);

/* ---- directed graphs (push-sum) ---------------------------------------- */

/* A directed graph with column-stochastic push-sum weights: node j keeps
 * 1 / (1 + outdeg_j) and sends the same share to each out-neighbour.
 * kind TOPO_EXPONENTIAL gives the directed exponential graph
 * (j -> j + 2^b mod n, b = 0 .. ceil(log2 n) - 1), TOPO_RING the directed
 * cycle j -> j + 1; every other kind its undirected graph with each edge as
 * two arcs.  A graph that is not strongly connected is an error. */
topo_digraph *topo_build_directed(const topo_spec *spec, uint64_t seed, char *err,
                                  size_t err_size);
void          topo_digraph_destroy(topo_digraph *d);

/* ---- time-varying schedules -------------------------------------------- */

typedef enum topo_sched_kind {
    TOPO_SCHED_ONE_PEER_EXPONENTIAL = 0, /* round r: j -> j + 2^(r mod tau), weights 1/2 */
    TOPO_SCHED_RANDOM_MATCHING,          /* random perfect matching, weights 1/2 */
    TOPO_SCHED_RANDOM_K_OUT,             /* each node sends to k random others;
                                            receivers average what they hold */
    TOPO_SCHED_FILE                      /* rounds of edges from a file, cycled */
} topo_sched_kind;

/* A schedule file's rounds are numbered 0 .. TOPO_SCHED_MAX_ROUNDS - 1. */
#define TOPO_SCHED_MAX_ROUNDS 100000

typedef struct topo_sched_spec {
    topo_sched_kind kind;
    int    n;
    int    k;            /* random_k_out: peers per node, 1 .. n - 1 */
    const char *path;    /* file: lines "round u v" (borrowed) */
    topo_mixing mixing;  /* file: weights of each round's undirected graph */
    double lazy_alpha;
    /* one_peer_exponential only: each round's arcs j -> j + 2^b become
     * undirected edges {j, j + 2^b}, so node j has the two neighbours
     * j +- 2^b (one when 2^b = n/2), with Metropolis-Hastings weights
     * 1/(1 + degree) (the graph is regular): symmetric and doubly
     * stochastic, for protocols that exchange both ways (D-PSGD).  0:
     * the directed graph.  Matchings and files are undirected already. */
    int    undirected;
} topo_sched_spec;

typedef struct topo_schedule topo_schedule;

/* A schedule whose round r graph depends only on (seed, r): rounds can be
 * asked in any order and the same seed gives the same sequence.  NULL and a
 * message in err on a bad spec or file. */
topo_schedule *topo_schedule_create(const topo_sched_spec *spec, uint64_t seed, char *err,
                                    size_t err_size);
void           topo_schedule_destroy(topo_schedule *s);

/* Heap bytes that topo_schedule_create will hold for the schedule file at
 * path on n nodes (about 24 (n + 1) bytes per round that has edges, one
 * more graph shared by the empty rounds, 48 bytes an edge and 16 a round),
 * so that a caller can refuse a schedule too large before it is built.  Reads
 * the file (O(file size)); 0, or -1 with the file's own error in err. */
int            topo_schedule_file_bytes(const char *path, int n, double *bytes, char *err,
                                        size_t err_size);

/* The graph of round r, owned by the schedule and valid until the next
 * call.  O(n + arcs) per round (O(n k) draws for random_k_out), no igraph
 * call and no allocation (buffers come from topo_schedule_create), so never
 * NULL. */
const topo_digraph *topo_schedule_round(topo_schedule *s, uint64_t r);

/* Rounds after which the sequence repeats: tau = log2 n rounded up for
 * one_peer_exponential, the file's round count, 0 for random schedules. */
uint64_t topo_schedule_period(const topo_schedule *s);

const char *topo_sched_kind_name(topo_sched_kind k);
int         topo_sched_kind_from_name(const char *name);
const char *topo_sched_kind_names(void);

#endif
