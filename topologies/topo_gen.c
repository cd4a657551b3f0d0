/* topo_gen.c -- what each static topology kind is: the names of the kinds,
 * the checks of a topo_spec, and the generation of its graph with igraph
 * (ring, k-nearest ring lattice, complete, 2-D and 3-D torus, hypercube,
 * star, binary tree, Erdos-Renyi G(n,p), random regular, Watts-Strogatz,
 * Barabasi-Albert, exponential graph, edge-list file).  It does not check
 * connectivity or convert the graph (topo_build.c), derive seeds (the
 * caller passes the topology's seed), compute statistics (topo_spectrum.c),
 * or build directed and time-varying graphs (topo_digraph.c,
 * topo_schedule.c).
 *
 * Small cases, so every kind is defined for every n >= 1: a ring of 1 node
 * has no edge and a ring of 2 nodes is one edge.  A torus dimension of
 * length 1 or 2 does not wrap around (the wrap would be a self-loop or a
 * second edge between the same pair), so 1 x c is a ring of c, 2 x 2 is a
 * 4-cycle and 2 x c (c >= 3) is two rings of c joined by rungs.  Node
 * r * cols + c of a torus sits at row r, column c; node
 * (l * rows + r) * cols + c of a 3-D torus at layer l.
 */
#include "topo.h"
#include "topo_igraph.h"
#include "topo_internal.h"

#include <assert.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* "n=8, p=0.1" and the like: the parameters that define the graph. */
void topo_i_describe(const topo_spec *spec, char *buf, size_t size)
{
    switch (spec->kind) {
    case TOPO_TORUS2D:
        snprintf(buf, size, "n=%d, rows=%d, cols=%d", spec->n, spec->rows, spec->cols);
        break;
    case TOPO_TORUS3D:
        snprintf(buf, size, "n=%d, rows=%d, cols=%d, layers=%d", spec->n, spec->rows,
                 spec->cols, spec->layers);
        break;
    case TOPO_ERDOS_RENYI:
        snprintf(buf, size, "n=%d, p=%g", spec->n, spec->p);
        break;
    case TOPO_RANDOM_REGULAR:
        snprintf(buf, size, "n=%d, degree=%d", spec->n, spec->degree);
        break;
    case TOPO_RING_LATTICE:
        snprintf(buf, size, "n=%d, k=%d", spec->n, spec->k);
        break;
    case TOPO_WATTS_STROGATZ:
        snprintf(buf, size, "n=%d, k=%d, beta=%g", spec->n, spec->k, spec->beta);
        break;
    case TOPO_BARABASI_ALBERT:
        snprintf(buf, size, "n=%d, m=%d", spec->n, spec->m);
        break;
    case TOPO_EDGE_LIST:
        snprintf(buf, size, "n=%d from %s", spec->n, spec->path ? spec->path : "(null)");
        break;
    case TOPO_LEARNED:
        snprintf(buf, size, "n=%d, degree=%d, lambda=%g", spec->n, spec->degree, spec->lambda);
        break;
    default:
        snprintf(buf, size, "n=%d", spec->n);
        break;
    }
}

/* ---- validation and generation ----------------------------------------- */

static int is_power_of_two(int n) { return n > 0 && (n & (n - 1)) == 0; }

int topo_i_check_spec(const topo_spec *spec, char *err, size_t err_size)
{
    if (topo_kind_from_name(topo_kind_name(spec->kind)) < 0) {   /* out of range */
        topo_i_set_error(err, err_size, "unknown topology kind %d (expected one of: %s)",
                         (int)spec->kind, topo_kind_names());
        return -1;
    }
    const char *name = topo_kind_name(spec->kind);
    if (spec->n < 1) {
        topo_i_set_error(err, err_size, "%s graph needs n >= 1, got n=%d", name, spec->n);
        return -1;
    }
    if (topo_mixing_name(spec->mixing)[0] == '?') {
        topo_i_set_error(err, err_size, "unknown mixing %d (expected one of: %s)",
                         (int)spec->mixing, topo_mixing_names());
        return -1;
    }
    if (!(spec->lazy_alpha >= 0.0 && spec->lazy_alpha < 1.0)) {
        topo_i_set_error(err, err_size, "lazy_alpha must be in [0, 1), got %g",
                         spec->lazy_alpha);
        return -1;
    }
    switch (spec->kind) {
    case TOPO_TORUS2D:
        if (spec->rows < 1 || spec->cols < 1) {
            topo_i_set_error(err, err_size,
                             "torus2d graph needs rows >= 1 and cols >= 1, got rows=%d, cols=%d",
                             spec->rows, spec->cols);
            return -1;
        }
        if ((long long)spec->rows * spec->cols != spec->n) {
            topo_i_set_error(err, err_size,
                             "torus2d graph needs rows * cols == n, got rows=%d, cols=%d, n=%d",
                             spec->rows, spec->cols, spec->n);
            return -1;
        }
        break;
    case TOPO_TORUS3D:
        if (spec->rows < 1 || spec->cols < 1 || spec->layers < 1) {
            topo_i_set_error(err, err_size,
                             "torus3d graph needs rows, cols and layers >= 1, got rows=%d, "
                             "cols=%d, layers=%d", spec->rows, spec->cols, spec->layers);
            return -1;
        }
        if ((long long)spec->rows * spec->cols * spec->layers != spec->n) {
            topo_i_set_error(err, err_size,
                             "torus3d graph needs rows * cols * layers == n, got rows=%d, "
                             "cols=%d, layers=%d, n=%d",
                             spec->rows, spec->cols, spec->layers, spec->n);
            return -1;
        }
        break;
    case TOPO_ERDOS_RENYI:
        if (!(spec->p > 0.0 && spec->p <= 1.0)) {
            topo_i_set_error(err, err_size, "erdos_renyi graph needs 0 < p <= 1, got p=%g",
                             spec->p);
            return -1;
        }
        break;
    case TOPO_RANDOM_REGULAR:
        if (spec->degree < 0 || spec->degree >= spec->n) {
            topo_i_set_error(err, err_size,
                             "random_regular graph needs 0 <= degree < n, got degree=%d, n=%d",
                             spec->degree, spec->n);
            return -1;
        }
        if (((long long)spec->n * spec->degree) % 2 != 0) {
            topo_i_set_error(err, err_size,
                             "random_regular graph needs n * degree even, got n=%d, degree=%d",
                             spec->n, spec->degree);
            return -1;
        }
        break;
    case TOPO_RING_LATTICE:
    case TOPO_WATTS_STROGATZ:
        /* 2k < n keeps the lattice simple: i + k and i - k stay distinct */
        if (spec->k < 1 || 2LL * spec->k >= spec->n) {
            topo_i_set_error(err, err_size,
                             "%s graph needs 1 <= k <= (n - 1) / 2, got k=%d, n=%d", name,
                             spec->k, spec->n);
            return -1;
        }
        if (spec->kind == TOPO_WATTS_STROGATZ && !(spec->beta >= 0.0 && spec->beta <= 1.0)) {
            topo_i_set_error(err, err_size,
                             "watts_strogatz graph needs 0 <= beta <= 1, got beta=%g",
                             spec->beta);
            return -1;
        }
        break;
    case TOPO_HYPERCUBE:
        if (!is_power_of_two(spec->n)) {
            topo_i_set_error(err, err_size,
                             "hypercube graph needs n a power of two, got n=%d", spec->n);
            return -1;
        }
        break;
    case TOPO_BARABASI_ALBERT:
        if (spec->m < 1 || (spec->n > 1 && spec->m >= spec->n)) {
            topo_i_set_error(err, err_size,
                             "barabasi_albert graph needs 1 <= m < n, got m=%d, n=%d",
                             spec->m, spec->n);
            return -1;
        }
        break;
    case TOPO_EDGE_LIST:
        if (spec->path == NULL || spec->path[0] == '\0') {
            topo_i_set_error(err, err_size, "edge_list graph needs a file name");
            return -1;
        }
        break;
    case TOPO_LEARNED:
        if (spec->label_props == NULL || spec->n_labels < 1) {
            topo_i_set_error(err, err_size, "learned graph needs the nodes' label proportions "
                             "(a data set with class labels)");
            return -1;
        }
        if (spec->n > TOPO_LEARN_MAX_NODES) {
            topo_i_set_error(err, err_size, "learned graph needs n <= %d, got n=%d",
                             TOPO_LEARN_MAX_NODES, spec->n);
            return -1;
        }
        if (spec->degree < 1 || spec->degree >= spec->n || !(spec->lambda > 0.0)) {
            topo_i_set_error(err, err_size, "learned graph needs 1 <= degree < n and lambda > 0, "
                             "got degree=%d, n=%d, lambda=%g", spec->degree, spec->n,
                             spec->lambda);
            return -1;
        }
        break;
    default:
        break;
    }
    return 0;
}

/* A lattice of lengths dims[0..nd-1] (the first varies fastest), each
 * dimension wrapping around from length 3 on. */
static igraph_error_t make_lattice(igraph_t *graph, const int *dims, int nd, int nei)
{
    igraph_vector_int_t dv;
    igraph_vector_bool_t circular;
    igraph_error_t rc = igraph_vector_int_init(&dv, nd);
    if (rc != IGRAPH_SUCCESS)
        return rc;
    rc = igraph_vector_bool_init(&circular, nd);
    if (rc != IGRAPH_SUCCESS)
        goto out_free_dims;
    for (int i = 0; i < nd; i++) {
        VECTOR(dv)[i] = dims[i];
        /* igraph 0.10.2 already drops the wrap of lengths 1 and 2 (igraph_ring
         * does not: it makes a loop at 1 and a double edge at 2); asking only
         * from 3 keeps the result independent of that */
        VECTOR(circular)[i] = dims[i] >= 3;
    }
    rc = igraph_square_lattice(graph, &dv, nei, IGRAPH_UNDIRECTED, false, &circular);
    igraph_vector_bool_destroy(&circular);
out_free_dims:
    igraph_vector_int_destroy(&dv);
    return rc;
}

/* A graph from pairs we computed ourselves (hypercube, exponential graph,
 * edge-list file, learned support): igraph only holds it, for the same
 * checks as the rest. */
igraph_error_t topo_i_graph_from_pairs(igraph_t *graph, int n, const int *uv, size_t m)
{
    igraph_vector_int_t edges;
    igraph_error_t rc = igraph_vector_int_init(&edges, (igraph_integer_t)(2 * m));
    if (rc != IGRAPH_SUCCESS)
        return rc;
    for (size_t e = 0; e < 2 * m; e++)
        VECTOR(edges)[e] = uv[e];
    rc = igraph_create(graph, &edges, n, IGRAPH_UNDIRECTED);
    igraph_vector_int_destroy(&edges);
    return rc;
}

static int cmp_pair(const void *a, const void *b)
{
    const int *x = a, *y = b;
    if (x[0] != y[0])
        return (x[0] > y[0]) - (x[0] < y[0]);
    return (x[1] > y[1]) - (x[1] < y[1]);
}

/* Undirected exponential graph: i ~ i + 2^j mod n for 2^j < n, each pair
 * once (for n = 2^t the hops 2^(t-1) forwards and backwards coincide). */
static int exponential_pairs(int n, int **uv_out, size_t *m_out)
{
    int hops = 0;
    while (hops < 31 && (1 << hops) < n)
        hops++;
    size_t cap = (size_t)n * (size_t)hops;
    int *uv = malloc((cap > 0 ? cap : 1) * 2 * sizeof *uv);
    if (uv == NULL)
        return -1;
    size_t m = 0;
    for (int i = 0; i < n; i++)
        for (int j = 0; j < hops; j++) {
            int t = (int)(((long long)i + (1LL << j)) % n);
            if (t == i)
                continue;
            uv[2 * m] = i < t ? i : t;
            uv[2 * m + 1] = i < t ? t : i;
            m++;
        }
    qsort(uv, m, 2 * sizeof *uv, cmp_pair);
    size_t u = 0;
    for (size_t e = 0; e < m; e++)
        if (u == 0 || cmp_pair(uv + 2 * e, uv + 2 * (u - 1)) != 0) {
            uv[2 * u] = uv[2 * e];
            uv[2 * u + 1] = uv[2 * e + 1];
            u++;
        }
    *uv_out = uv;
    *m_out = u;
    return 0;
}

static int hypercube_pairs(int n, int **uv_out, size_t *m_out)
{
    int d = 0;
    while ((1 << d) < n)
        d++;
    size_t m = (size_t)n * (size_t)d / 2;
    int *uv = malloc((m > 0 ? m : 1) * 2 * sizeof *uv);
    if (uv == NULL)
        return -1;
    size_t e = 0;
    for (int i = 0; i < n; i++)
        for (int b = 0; b < d; b++)
            if ((i ^ (1 << b)) > i) {
                uv[2 * e] = i;
                uv[2 * e + 1] = i ^ (1 << b);
                e++;
            }
    assert(e == m);
    *uv_out = uv;
    *m_out = m;
    return 0;
}

/* Returns an igraph code; a bad edge-list file is reported through err and
 * IGRAPH_EINVAL with *file_error set. */
igraph_error_t topo_i_generate(igraph_t *graph, const topo_spec *spec, uint64_t seed,
                               int *file_error, char *err, size_t err_size)
{
    igraph_error_t rc;
    int *uv = NULL;
    size_t m = 0;
    switch (spec->kind) {
    case TOPO_RING:
        /* circular only from 3 nodes: igraph would add a self-loop at 1
         * and a second edge at 2 */
        return igraph_ring(graph, spec->n, IGRAPH_UNDIRECTED, false, spec->n >= 3);
    case TOPO_RING_LATTICE:
        return make_lattice(graph, &spec->n, 1, spec->k);
    case TOPO_COMPLETE:
        return igraph_full(graph, spec->n, IGRAPH_UNDIRECTED, false);
    case TOPO_TORUS2D: {
        /* igraph's first dimension varies fastest, so (cols, rows) puts node
         * r * cols + c at row r, column c. */
        int dims[2] = { spec->cols, spec->rows };
        return make_lattice(graph, dims, 2, 1);
    }
    case TOPO_TORUS3D: {
        int dims[3] = { spec->cols, spec->rows, spec->layers };
        return make_lattice(graph, dims, 3, 1);
    }
    case TOPO_STAR:
        return igraph_star(graph, spec->n, IGRAPH_STAR_UNDIRECTED, 0);
    case TOPO_BINARY_TREE:
        return igraph_kary_tree(graph, spec->n, 2, IGRAPH_TREE_UNDIRECTED);
    case TOPO_ERDOS_RENYI:
        rc = topo_i_seed_igraph(seed);
        if (rc != IGRAPH_SUCCESS)
            return rc;
        return igraph_erdos_renyi_game_gnp(graph, spec->n, spec->p, IGRAPH_UNDIRECTED, false);
    case TOPO_RANDOM_REGULAR:
        rc = topo_i_seed_igraph(seed);
        if (rc != IGRAPH_SUCCESS)
            return rc;
        return igraph_k_regular_game(graph, spec->n, spec->degree, IGRAPH_UNDIRECTED, false);
    case TOPO_WATTS_STROGATZ:
        rc = topo_i_seed_igraph(seed);
        if (rc != IGRAPH_SUCCESS)
            return rc;
        return igraph_watts_strogatz_game(graph, 1, spec->n, spec->k, spec->beta, false, false);
    case TOPO_BARABASI_ALBERT:
        rc = topo_i_seed_igraph(seed);
        if (rc != IGRAPH_SUCCESS)
            return rc;
        /* psumtree never draws the same target twice: a simple graph */
        return igraph_barabasi_game(graph, spec->n, 1.0, spec->m, NULL, false, 1.0,
                                    IGRAPH_UNDIRECTED, IGRAPH_BARABASI_PSUMTREE, NULL);
    case TOPO_HYPERCUBE:
    case TOPO_EXPONENTIAL:
        if ((spec->kind == TOPO_HYPERCUBE ? hypercube_pairs : exponential_pairs)(spec->n, &uv,
                                                                                &m) != 0)
            return IGRAPH_ENOMEM;
        rc = topo_i_graph_from_pairs(graph, spec->n, uv, m);
        free(uv);
        return rc;
    case TOPO_EDGE_LIST: {
        topo_i_edges e;
        if (topo_i_read_edges(spec->path, spec->n, 2, &e, err, err_size) != 0) {
            *file_error = 1;
            return IGRAPH_EINVAL;
        }
        rc = topo_i_graph_from_pairs(graph, spec->n, e.uv, e.m);
        topo_i_edges_fini(&e);
        return rc;
    }
    case TOPO_LEARNED:
        break;   /* topo_build.c learns it (topo_learn.c) */
    }
    return IGRAPH_EINVAL;   /* unreachable: topo_i_check_spec rejected the kind */
}
