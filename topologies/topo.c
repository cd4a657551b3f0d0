/* topo.c -- builds communication topologies with igraph (ring, complete,
 * 2-D torus, Erdos-Renyi G(n,p), random regular), checks that they are
 * connected simple graphs, and converts them into sorted neighbour lists
 * (CSR) with Metropolis-Hastings mixing weights and a bipartition when one
 * exists; computes degree, diameter and spectral statistics of the mixing
 * matrix (dense GSL eigen-solver).  It is the only file that includes
 * <igraph.h>.  It does not read scenarios, derive seeds (the caller passes
 * the topology's seed), model time or messages, or build time-varying
 * topologies; and it is not thread-safe, because igraph's RNG and error
 * handler are process-wide.
 *
 * Small cases, so every kind is defined for every n >= 1: a ring of 1 node
 * has no edge and a ring of 2 nodes is one edge.  A torus dimension of
 * length 1 or 2 does not wrap around (the wrap would be a self-loop or a
 * second edge between the same pair), so 1 x c is a ring of c, 2 x 2 is a
 * 4-cycle and 2 x c (c >= 3) is two rings of c joined by rungs.  Node
 * r * cols + c of a torus sits at row r, column c.
 */
#include "topo.h"

#include <assert.h>
#include <ctype.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <gsl/gsl_eigen.h>
#include <gsl/gsl_errno.h>
#include <gsl/gsl_matrix.h>
#include <gsl/gsl_sort_vector.h>
#include <gsl/gsl_vector.h>
#include <igraph.h>

static const char *const kind_names[] = {
    [TOPO_RING]           = "ring",
    [TOPO_COMPLETE]       = "complete",
    [TOPO_TORUS2D]        = "torus2d",
    [TOPO_ERDOS_RENYI]    = "erdos_renyi",
    [TOPO_RANDOM_REGULAR] = "random_regular",
};
#define N_KINDS ((int)(sizeof kind_names / sizeof kind_names[0]))

const char *topo_kind_name(topo_kind k)
{
    if ((int)k < 0 || (int)k >= N_KINDS)
        return "unknown";
    return kind_names[k];
}

int topo_kind_from_name(const char *name)
{
    if (name == NULL)
        return -1;
    for (int k = 0; k < N_KINDS; k++)
        if (strcmp(name, kind_names[k]) == 0)
            return k;
    return -1;
}

const char *topo_kind_names(void)
{
    return "ring, complete, torus2d, erdos_renyi, random_regular";
}

/* ---- errors ------------------------------------------------------------ */

static void set_error(char *err, size_t err_size, const char *fmt, ...)
{
    if (err == NULL || err_size == 0)
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, err_size, fmt, ap);
    va_end(ap);
}

/* igraph calls its error handler once at the failing site with the real
 * reason, then once per unwinding level with an empty one; keep the first
 * non-empty reason.  The handler must free igraph's temporaries and return
 * (igraph's rule); we then see the error code returned by the call. */
static char recorded_reason[256];

static void record_igraph_error(const char *reason, const char *file, int line,
                                igraph_error_t code)
{
    (void)file;
    (void)line;
    (void)code;
    if (recorded_reason[0] == '\0' && reason != NULL && reason[0] != '\0')
        snprintf(recorded_reason, sizeof recorded_reason, "%s", reason);
    IGRAPH_FINALLY_FREE();
}

static igraph_error_handler_t *enter_igraph(void)
{
    recorded_reason[0] = '\0';
    return igraph_set_error_handler(record_igraph_error);
}

static void leave_igraph(igraph_error_handler_t *previous)
{
    igraph_set_error_handler(previous);
}

/* igraph's reasons read like sentences ("Invalid number of vertices.");
 * ours are GNU style: lowercase first letter, no trailing full stop. */
static const char *error_text(igraph_error_t code)
{
    static char msg[sizeof recorded_reason];
    if (code == IGRAPH_ENOMEM)
        return "out of memory";
    snprintf(msg, sizeof msg, "%s",
             recorded_reason[0] != '\0' ? recorded_reason : igraph_strerror(code));
    size_t len = strlen(msg);
    while (len > 0 && (msg[len - 1] == '.' || isspace((unsigned char)msg[len - 1])))
        msg[--len] = '\0';
    if (len > 1 && isupper((unsigned char)msg[0]) && !isupper((unsigned char)msg[1]))
        msg[0] = (char)tolower((unsigned char)msg[0]);
    return msg;
}

static void fail_igraph(char *err, size_t err_size, const char *name, const char *params,
                        igraph_error_t code)
{
    set_error(err, err_size, "%s graph with %s: %s%s", name, params,
              code == IGRAPH_ENOMEM ? "" : "igraph: ", error_text(code));
}

/* "n=8, p=0.1" and the like: the parameters that define the graph. */
static void describe(const topo_spec *spec, char *buf, size_t size)
{
    switch (spec->kind) {
    case TOPO_TORUS2D:
        snprintf(buf, size, "n=%d, rows=%d, cols=%d", spec->n, spec->rows, spec->cols);
        break;
    case TOPO_ERDOS_RENYI:
        snprintf(buf, size, "n=%d, p=%g", spec->n, spec->p);
        break;
    case TOPO_RANDOM_REGULAR:
        snprintf(buf, size, "n=%d, degree=%d", spec->n, spec->degree);
        break;
    default:
        snprintf(buf, size, "n=%d", spec->n);
        break;
    }
}

/* ---- validation and generation ----------------------------------------- */

static int check_spec(const topo_spec *spec, char *err, size_t err_size)
{
    if ((int)spec->kind < 0 || (int)spec->kind >= N_KINDS) {
        set_error(err, err_size, "unknown topology kind %d (expected one of: %s)",
                  (int)spec->kind, topo_kind_names());
        return -1;
    }
    const char *name = kind_names[spec->kind];
    if (spec->n < 1) {
        set_error(err, err_size, "%s graph needs n >= 1, got n=%d", name, spec->n);
        return -1;
    }
    switch (spec->kind) {
    case TOPO_TORUS2D:
        if (spec->rows < 1 || spec->cols < 1) {
            set_error(err, err_size,
                      "torus2d graph needs rows >= 1 and cols >= 1, got rows=%d, cols=%d",
                      spec->rows, spec->cols);
            return -1;
        }
        if ((long long)spec->rows * spec->cols != spec->n) {
            set_error(err, err_size,
                      "torus2d graph needs rows * cols == n, got rows=%d, cols=%d, n=%d",
                      spec->rows, spec->cols, spec->n);
            return -1;
        }
        break;
    case TOPO_ERDOS_RENYI:
        if (!(spec->p > 0.0 && spec->p <= 1.0)) {
            set_error(err, err_size, "erdos_renyi graph needs 0 < p <= 1, got p=%g", spec->p);
            return -1;
        }
        break;
    case TOPO_RANDOM_REGULAR:
        if (spec->degree < 0 || spec->degree >= spec->n) {
            set_error(err, err_size,
                      "random_regular graph needs 0 <= degree < n, got degree=%d, n=%d",
                      spec->degree, spec->n);
            return -1;
        }
        if (((long long)spec->n * spec->degree) % 2 != 0) {
            set_error(err, err_size,
                      "random_regular graph needs n * degree even, got n=%d, degree=%d",
                      spec->n, spec->degree);
            return -1;
        }
        break;
    default:
        break;
    }
    return 0;
}

/* igraph_uint_t is 64 bits on this build and PCG32, igraph 0.10's default,
 * uses all of them; on a 32-bit igraph fold the halves together. */
static igraph_error_t seed_igraph(uint64_t seed)
{
    igraph_uint_t s = (igraph_uint_t)seed;
    if (sizeof(igraph_uint_t) < sizeof(uint64_t))
        s = (igraph_uint_t)(seed ^ (seed >> 32));
    return igraph_rng_seed(igraph_rng_default(), s);
}

static igraph_error_t make_torus(igraph_t *graph, int rows, int cols)
{
    igraph_vector_int_t dims;
    igraph_vector_bool_t circular;
    igraph_error_t rc = igraph_vector_int_init(&dims, 2);
    if (rc != IGRAPH_SUCCESS)
        return rc;
    rc = igraph_vector_bool_init(&circular, 2);
    if (rc != IGRAPH_SUCCESS)
        goto out_free_dims;
    /* igraph's first dimension varies fastest, so (cols, rows) puts node
     * r * cols + c at row r, column c. */
    VECTOR(dims)[0] = cols;
    VECTOR(dims)[1] = rows;
    /* igraph 0.10.2 already drops the wrap of lengths 1 and 2 (igraph_ring
     * does not: it makes a loop at 1 and a double edge at 2); asking only
     * from 3 keeps the result independent of that */
    VECTOR(circular)[0] = cols >= 3;
    VECTOR(circular)[1] = rows >= 3;
    rc = igraph_square_lattice(graph, &dims, 1, IGRAPH_UNDIRECTED, false, &circular);
    igraph_vector_bool_destroy(&circular);
out_free_dims:
    igraph_vector_int_destroy(&dims);
    return rc;
}

static igraph_error_t generate(igraph_t *graph, const topo_spec *spec, uint64_t seed)
{
    igraph_error_t rc;
    switch (spec->kind) {
    case TOPO_RING:
        /* circular only from 3 nodes: igraph would add a self-loop at 1
         * and a second edge at 2 */
        return igraph_ring(graph, spec->n, IGRAPH_UNDIRECTED, false, spec->n >= 3);
    case TOPO_COMPLETE:
        return igraph_full(graph, spec->n, IGRAPH_UNDIRECTED, false);
    case TOPO_TORUS2D:
        return make_torus(graph, spec->rows, spec->cols);
    case TOPO_ERDOS_RENYI:
        rc = seed_igraph(seed);
        if (rc != IGRAPH_SUCCESS)
            return rc;
        return igraph_erdos_renyi_game_gnp(graph, spec->n, spec->p, IGRAPH_UNDIRECTED, false);
    case TOPO_RANDOM_REGULAR:
        rc = seed_igraph(seed);
        if (rc != IGRAPH_SUCCESS)
            return rc;
        return igraph_k_regular_game(graph, spec->n, spec->degree, IGRAPH_UNDIRECTED, false);
    }
    return IGRAPH_EINVAL;   /* unreachable: check_spec rejected the kind */
}

/* ---- conversion -------------------------------------------------------- */

static int cmp_int(const void *a, const void *b)
{
    int x = *(const int *)a, y = *(const int *)b;
    return (x > y) - (x < y);
}

/* Fills off, nbr (sorted per node) and n_edges from igraph's edge list.
 * Returns 0, -1 when out of memory, -2 on a self-loop or multiple edge. */
static int fill_csr(topo_graph *g, const igraph_vector_int_t *edges)
{
    size_t m = (size_t)igraph_vector_int_size(edges) / 2;
    int n = g->n;
    g->n_edges = m;
    g->off = calloc((size_t)n + 1, sizeof *g->off);
    g->nbr = malloc((2 * m > 0 ? 2 * m : 1) * sizeof *g->nbr);
    size_t *pos = malloc((size_t)n * sizeof *pos);
    if (g->off == NULL || g->nbr == NULL || pos == NULL) {
        free(pos);
        return -1;
    }
    for (size_t e = 0; e < m; e++) {
        g->off[VECTOR(*edges)[2 * e] + 1]++;
        g->off[VECTOR(*edges)[2 * e + 1] + 1]++;
    }
    for (int i = 0; i < n; i++)
        g->off[i + 1] += g->off[i];
    memcpy(pos, g->off, (size_t)n * sizeof *pos);
    for (size_t e = 0; e < m; e++) {
        int a = (int)VECTOR(*edges)[2 * e], b = (int)VECTOR(*edges)[2 * e + 1];
        g->nbr[pos[a]++] = b;
        g->nbr[pos[b]++] = a;
    }
    free(pos);
    for (int i = 0; i < n; i++) {
        size_t lo = g->off[i], hi = g->off[i + 1];
        qsort(g->nbr + lo, hi - lo, sizeof *g->nbr, cmp_int);
        for (size_t k = lo; k < hi; k++)
            if (g->nbr[k] == i || (k > lo && g->nbr[k] == g->nbr[k - 1]))
                return -2;
    }
    return 0;
}

/* Metropolis-Hastings: w_ij = 1 / (1 + max(d_i, d_j)).  The same expression
 * from both ends keeps W exactly symmetric; the self weight takes the rest,
 * summed in neighbour order so the result is reproducible. */
static int fill_weights(topo_graph *g)
{
    size_t nnz = 2 * g->n_edges;
    g->w = malloc((nnz > 0 ? nnz : 1) * sizeof *g->w);
    g->self_w = malloc((size_t)g->n * sizeof *g->self_w);
    if (g->w == NULL || g->self_w == NULL)
        return -1;
    for (int i = 0; i < g->n; i++) {
        size_t di = g->off[i + 1] - g->off[i];
        double sum = 0.0;
        for (size_t k = g->off[i]; k < g->off[i + 1]; k++) {
            int j = g->nbr[k];
            size_t dj = g->off[j + 1] - g->off[j];
            g->w[k] = 1.0 / (1.0 + (double)(di > dj ? di : dj));
            sum += g->w[k];
        }
        g->self_w[i] = 1.0 - sum;
    }
    return 0;
}

/* Sides 0/1 with node 0 on side 0; a connected bipartite graph has exactly
 * two such colourings, so the result does not depend on igraph's search. */
static igraph_error_t fill_bipartition(topo_graph *g, const igraph_t *graph)
{
    igraph_vector_bool_t types;
    igraph_bool_t is_bip = false;
    igraph_error_t rc = igraph_vector_bool_init(&types, 0);
    if (rc != IGRAPH_SUCCESS)
        return rc;
    rc = igraph_is_bipartite(graph, &is_bip, &types);
    if (rc != IGRAPH_SUCCESS)
        goto out_free_types;
    g->bipartite = is_bip ? 1 : 0;
    if (is_bip) {
        g->side = malloc((size_t)g->n * sizeof *g->side);
        if (g->side == NULL) {
            rc = IGRAPH_ENOMEM;
            goto out_free_types;
        }
        int flip = VECTOR(types)[0] ? 1 : 0;
        for (int i = 0; i < g->n; i++)
            g->side[i] = (VECTOR(types)[i] ? 1 : 0) ^ flip;
    }
out_free_types:
    igraph_vector_bool_destroy(&types);
    return rc;
}

topo_graph *topo_build(const topo_spec *spec, uint64_t seed, char *err, size_t err_size)
{
    assert(spec != NULL);
    if (err != NULL && err_size > 0)
        err[0] = '\0';
    if (check_spec(spec, err, err_size) != 0)
        return NULL;

    const char *name = kind_names[spec->kind];
    char params[96];
    describe(spec, params, sizeof params);

    topo_graph *result = NULL;
    topo_graph *g = calloc(1, sizeof *g);
    if (g == NULL) {
        set_error(err, err_size, "%s graph with %s: out of memory", name, params);
        return NULL;
    }
    g->n = spec->n;

    igraph_error_handler_t *previous = enter_igraph();
    igraph_t graph;
    igraph_vector_int_t edges;
    igraph_integer_t n_comp = 0;
    igraph_error_t rc = generate(&graph, spec, seed);
    if (rc != IGRAPH_SUCCESS) {
        fail_igraph(err, err_size, name, params, rc);
        goto out_free_g;
    }
    rc = igraph_connected_components(&graph, NULL, NULL, &n_comp, IGRAPH_WEAK);
    if (rc != IGRAPH_SUCCESS) {
        fail_igraph(err, err_size, name, params, rc);
        goto out_free_graph;
    }
    if (n_comp > 1) {
        const char *advice = spec->kind == TOPO_ERDOS_RENYI    ? "; raise p"
                           : spec->kind == TOPO_RANDOM_REGULAR ? "; raise degree"
                           : "";
        set_error(err, err_size, "%s graph with %s is disconnected (%lld components)%s",
                  name, params, (long long)n_comp, advice);
        goto out_free_graph;
    }
    rc = igraph_vector_int_init(&edges, 0);
    if (rc != IGRAPH_SUCCESS) {
        fail_igraph(err, err_size, name, params, rc);
        goto out_free_graph;
    }
    rc = igraph_get_edgelist(&graph, &edges, false);
    if (rc != IGRAPH_SUCCESS) {
        igraph_vector_int_destroy(&edges);
        fail_igraph(err, err_size, name, params, rc);
        goto out_free_graph;
    }
    int csr = fill_csr(g, &edges);
    igraph_vector_int_destroy(&edges);
    if (csr == -2) {
        set_error(err, err_size, "%s graph with %s has a self-loop or multiple edge",
                  name, params);
        goto out_free_graph;
    }
    if (csr != 0 || fill_weights(g) != 0) {
        set_error(err, err_size, "%s graph with %s: out of memory", name, params);
        goto out_free_graph;
    }
    rc = fill_bipartition(g, &graph);
    if (rc != IGRAPH_SUCCESS) {
        fail_igraph(err, err_size, name, params, rc);
        goto out_free_graph;
    }
    result = g;
    g = NULL;

out_free_graph:
    igraph_destroy(&graph);
out_free_g:
    leave_igraph(previous);
    topo_destroy(g);
    return result;
}

void topo_destroy(topo_graph *g)
{
    if (g == NULL)
        return;
    free(g->side);
    free(g->self_w);
    free(g->w);
    free(g->nbr);
    free(g->off);
    free(g);
}

/* ---- statistics -------------------------------------------------------- */

void topo_mixing_dense(const topo_graph *g, double *W)
{
    size_t n = (size_t)g->n;
    memset(W, 0, n * n * sizeof *W);
    for (size_t i = 0; i < n; i++) {
        W[i * n + i] = g->self_w[i];
        for (size_t k = g->off[i]; k < g->off[i + 1]; k++)
            W[i * n + (size_t)g->nbr[k]] = g->w[k];
    }
}

/* Unweighted diameter through igraph; the largest finite distance, so a
 * hand-made disconnected graph gives the largest component's diameter. */
static int diameter(const topo_graph *g, int *out)
{
    igraph_error_handler_t *previous = enter_igraph();
    int ret = -1;
    igraph_vector_int_t edges;
    igraph_t graph;
    igraph_real_t d = 0.0;
    if (igraph_vector_int_init(&edges, (igraph_integer_t)(2 * g->n_edges)) != IGRAPH_SUCCESS)
        goto out_leave;
    size_t e = 0;
    for (int i = 0; i < g->n; i++)
        for (size_t k = g->off[i]; k < g->off[i + 1]; k++)
            if (g->nbr[k] > i) {
                VECTOR(edges)[2 * e] = i;
                VECTOR(edges)[2 * e + 1] = g->nbr[k];
                e++;
            }
    assert(e == g->n_edges);
    if (igraph_create(&graph, &edges, g->n, IGRAPH_UNDIRECTED) != IGRAPH_SUCCESS)
        goto out_free_edges;
    if (igraph_diameter(&graph, &d, NULL, NULL, NULL, NULL, IGRAPH_UNDIRECTED, true)
        != IGRAPH_SUCCESS)
        goto out_free_graph;
    *out = isfinite(d) ? (int)d : 0;
    ret = 0;
out_free_graph:
    igraph_destroy(&graph);
out_free_edges:
    igraph_vector_int_destroy(&edges);
out_leave:
    leave_igraph(previous);
    return ret;
}

/* Second-largest eigenvalue modulus of W: the eigenvalues sorted
 * ascending, max(|second largest|, |smallest|).  The largest is 1 for any
 * connected graph, so it is the one left out. */
static int slem(const topo_graph *g, double *out)
{
    size_t n = (size_t)g->n;
    if (n <= 1) {
        *out = 0.0;
        return 0;
    }
    int ret = -1;
    gsl_error_handler_t *previous = gsl_set_error_handler_off();
    gsl_matrix *A = gsl_matrix_alloc(n, n);
    gsl_vector *eval = gsl_vector_alloc(n);
    gsl_eigen_symm_workspace *ws = gsl_eigen_symm_alloc(n);
    if (A == NULL || eval == NULL || ws == NULL)
        goto out_free;
    topo_mixing_dense(g, A->data);   /* gsl_matrix_alloc: tda == n */
    if (gsl_eigen_symm(A, eval, ws) != GSL_SUCCESS)
        goto out_free;
    gsl_sort_vector(eval);
    double second = fabs(gsl_vector_get(eval, n - 2));
    double smallest = fabs(gsl_vector_get(eval, 0));
    *out = second > smallest ? second : smallest;
    ret = 0;
out_free:
    if (ws != NULL)
        gsl_eigen_symm_free(ws);
    if (eval != NULL)
        gsl_vector_free(eval);
    if (A != NULL)
        gsl_matrix_free(A);
    gsl_set_error_handler(previous);
    return ret;
}

/* When n > TOPO_DENSE_MAX, spectral_ok is 0 and lambda2 and spectral_gap
 * are 0 (not NaN, which JSON cannot carry): read them only when
 * spectral_ok is 1. */
int topo_compute_stats(const topo_graph *g, topo_stats *st)
{
    memset(st, 0, sizeof *st);
    st->n = g->n;
    st->n_edges = g->n_edges;
    st->degree_min = g->n > 0 ? (int)(g->off[1] - g->off[0]) : 0;
    st->degree_max = st->degree_min;
    for (int i = 1; i < g->n; i++) {
        int d = (int)(g->off[i + 1] - g->off[i]);
        if (d < st->degree_min)
            st->degree_min = d;
        if (d > st->degree_max)
            st->degree_max = d;
    }
    if (g->n > TOPO_DIAMETER_MAX)
        st->diameter = -1;
    else if (diameter(g, &st->diameter) != 0)
        return -1;
    if (g->n <= TOPO_DENSE_MAX) {
        if (slem(g, &st->lambda2) != 0)
            return -1;
        st->spectral_ok = 1;
        st->spectral_gap = 1.0 - st->lambda2;
    }
    return 0;
}
