/* topo_spectrum.c -- statistics of a built topology: degree range, diameter
 * (igraph), and the second-largest eigenvalue modulus (SLEM) and spectral
 * gap of the mixing matrix W, by GSL's dense symmetric eigen-solver for
 * small n and by ARPACK (igraph_arpack_rssolve) above (see
 * topo_compute_stats for the choice).  It
 * does not build graphs or weights.
 *
 * Both solvers work on the symmetric matrix S = P^(1/2) W P^(-1/2), P the
 * diagonal of W's stationary distribution pi: S is W itself for symmetric
 * weights, and has W's eigenvalues for uniform weights on an irregular
 * graph (a reversible random walk).  Its top eigenvector is sqrt(pi) with
 * eigenvalue 1.  The dense solver takes all eigenvalues and leaves the
 * largest out; ARPACK finds the largest-magnitude eigenvalue of
 * S - sqrt(pi) sqrt(pi)^T, which is the SLEM directly (deflation), with
 * matrix-vector products through the neighbour lists: O(edges) each.
 * A learned W that is not symmetric (topo_learn.c: doubly stochastic, not
 * reversible) goes to GSL's dense nonsymmetric solver instead, on W - J:
 * J = 11^T/n removes the eigenvalue 1 and leaves the others, so the
 * largest modulus is the SLEM.
 */
#include "topo.h"
#include "topo_igraph.h"
#include "topo_internal.h"

#include <assert.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <gsl/gsl_complex_math.h>
#include <gsl/gsl_eigen.h>
#include <gsl/gsl_errno.h>
#include <gsl/gsl_matrix.h>
#include <gsl/gsl_sort_vector.h>
#include <gsl/gsl_vector.h>

/* Unweighted diameter through igraph; the largest finite distance, so a
 * hand-made disconnected graph gives the largest component's diameter.
 * O(n * edges). */
static int diameter(const topo_graph *g, int *out)
{
    topo_i_igraph_state previous = topo_i_enter_igraph();
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
    topo_i_leave_igraph(previous);
    return ret;
}

/* sqrt(pi_i / pi_j) W_ij: exactly W_ij when pi is uniform. */
static double sym_entry(const double *sq, int i, int j, double w)
{
    return sq[i] == sq[j] ? w : w * sq[i] / sq[j];
}

static int slem_dense(const topo_graph *g, const double *sq, double *out)
{
    size_t n = (size_t)g->n;
    int ret = -1;
    gsl_error_handler_t *previous = gsl_set_error_handler_off();
    gsl_matrix *A = gsl_matrix_alloc(n, n);
    gsl_vector *eval = gsl_vector_alloc(n);
    gsl_eigen_symm_workspace *ws = gsl_eigen_symm_alloc(n);
    if (A == NULL || eval == NULL || ws == NULL)
        goto out_free;
    topo_mixing_dense(g, A->data);   /* gsl_matrix_alloc: tda == n */
    for (size_t i = 0; i < n; i++)
        for (size_t k = g->off[i]; k < g->off[i + 1]; k++) {
            size_t j = (size_t)g->nbr[k];
            A->data[i * n + j] = sym_entry(sq, (int)i, (int)j, g->w[k]);
        }
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

/* max |eigenvalue| of W - 11^T/n for a doubly stochastic W, by GSL's
 * nonsymmetric solver (Francis QR), O(n^3). */
static int slem_nonsymm(const topo_graph *g, double *out)
{
    size_t n = (size_t)g->n;
    int ret = -1;
    gsl_error_handler_t *previous = gsl_set_error_handler_off();
    gsl_matrix *A = gsl_matrix_alloc(n, n);
    gsl_vector_complex *eval = gsl_vector_complex_alloc(n);
    gsl_eigen_nonsymm_workspace *ws = gsl_eigen_nonsymm_alloc(n);
    if (A == NULL || eval == NULL || ws == NULL)
        goto out_free;
    topo_mixing_dense(g, A->data);
    for (size_t e = 0; e < n * n; e++)
        A->data[e] -= 1.0 / (double)n;
    if (gsl_eigen_nonsymm(A, eval, ws) != GSL_SUCCESS)
        goto out_free;
    double most = 0.0;
    for (size_t i = 0; i < n; i++) {
        double m = gsl_complex_abs(gsl_vector_complex_get(eval, i));
        if (m > most)
            most = m;
    }
    *out = most;
    ret = 0;
out_free:
    if (ws != NULL)
        gsl_eigen_nonsymm_free(ws);
    if (eval != NULL)
        gsl_vector_complex_free(eval);
    if (A != NULL)
        gsl_matrix_free(A);
    gsl_set_error_handler(previous);
    return ret;
}

typedef struct deflated {
    const topo_graph *g;
    const double     *sq;   /* sqrt(pi) */
} deflated;

/* to = (S - sq sq^T) from */
static igraph_error_t deflated_product(igraph_real_t *to, const igraph_real_t *from, int n,
                                       void *extra)
{
    const deflated *d = extra;
    const topo_graph *g = d->g;
    double dot = 0.0;
    for (int i = 0; i < n; i++)
        dot += d->sq[i] * from[i];
    for (int i = 0; i < n; i++) {
        double y = g->self_w[i] * from[i];
        for (size_t k = g->off[i]; k < g->off[i + 1]; k++)
            y += sym_entry(d->sq, i, g->nbr[k], g->w[k]) * from[g->nbr[k]];
        to[i] = y - d->sq[i] * dot;
    }
    return IGRAPH_SUCCESS;
}

/* Returns 0, 1 when ARPACK did not converge, -1 on failure.  max_iter 0:
 * the budget of the full statistics (below). */
static int slem_arpack(const topo_graph *g, const double *sq, int max_iter, double *out)
{
    topo_i_igraph_state previous = topo_i_enter_igraph();
    int ret = -1;
    igraph_arpack_options_t opt;
    igraph_vector_t values;
    igraph_arpack_options_init(&opt);
    opt.n = g->n;
    opt.nev = 1;
    opt.which[0] = 'L';
    opt.which[1] = 'M';
    opt.ncv = g->n < 32 ? g->n : 32;
    /* a budget of 5e6 node-iterations, at least 100: expanders and tori
     * converge in tens of iterations (54 for a random 4-regular graph or a
     * 300 x 300 torus of 10^5 nodes, 4 s here), while a ring of 10^4 nodes,
     * whose gap is 1e-7, would need far more; it gives up after about 2 s
     * (10^4 nodes) to 8 s (10^5) and reports "not computed" */
    opt.mxiter = 5000000 / g->n < 100 ? 100 : 5000000 / g->n < 3000 ? 5000000 / g->n : 3000;
    if (max_iter > 0)
        opt.mxiter = max_iter;
    opt.start = 0;
    opt.tol = 1e-10;
    if (igraph_vector_init(&values, 0) != IGRAPH_SUCCESS)
        goto out_leave;
    /* ARPACK's random start vector comes from igraph's RNG: a fixed seed
     * makes the result reproducible */
    if (topo_i_seed_igraph(20260101) != IGRAPH_SUCCESS)
        goto out_free_values;
    deflated d = { g, sq };
    igraph_error_t rc = igraph_arpack_rssolve(deflated_product, &d, &opt, NULL, &values, NULL);
    if (rc != IGRAPH_SUCCESS) {
        ret = rc == IGRAPH_ARPACK_MAXIT || rc == IGRAPH_ARPACK_NOSHIFT ? 1 : -1;
        goto out_free_values;
    }
    if (opt.nconv < 1 || igraph_vector_size(&values) < 1) {
        ret = 1;
        goto out_free_values;
    }
    *out = fabs(VECTOR(values)[0]);
    ret = 0;
out_free_values:
    igraph_vector_destroy(&values);
out_leave:
    topo_i_leave_igraph(previous);
    return ret;
}

static int slem(const topo_graph *g, topo_solver solver, int max_iter, double *out)
{
    *out = 0.0;
    if (g->n <= 1)
        return 0;
    if (g->learned && !g->symmetric)
        return slem_nonsymm(g, out);   /* n <= TOPO_LEARN_MAX_NODES */
    double *sq = malloc((size_t)g->n * sizeof *sq);
    if (sq == NULL)
        return -1;
    topo_i_stationary(g, sq);
    for (int i = 0; i < g->n; i++)
        sq[i] = sqrt(sq[i]);
    if (solver == TOPO_SOLVER_AUTO)
        solver = g->n <= TOPO_DENSE_MAX ? TOPO_SOLVER_DENSE : TOPO_SOLVER_ARPACK;
    /* ARPACK needs more than 2 nodes (nev < ncv - 1 <= n - 1) */
    int ret = solver == TOPO_SOLVER_DENSE || g->n < 3 ? slem_dense(g, sq, out)
                                                      : slem_arpack(g, sq, max_iter, out);
    free(sq);
    return ret;
}

int topo_slem(const topo_graph *g, topo_solver solver, double *out)
{
    return slem(g, solver, 0, out);
}

/* ---- closed forms (bounded statistics) ---- */

#define TWO_PI 6.28318530717958647692

/* Second-largest and smallest adjacency eigenvalues of the cycle C_m
 * (2 cos(2 pi k / m), k = 1 .. m - 1), m >= 3, and 2 minus the first, 4
 * sin^2(pi / m), without the cancellation. */
static void cycle_ev(int m, double *second, double *least, double *gap)
{
    double h = sin(TWO_PI / 2 / m);
    *second = 2.0 * cos(TWO_PI / m);
    *least = 2.0 * cos(TWO_PI * (m / 2) / m);
    *gap = 4.0 * h * h;
}

/* The diameter and spectrum of a graph topo_build made as a ring, a torus
 * (sides >= 3), a hypercube or a complete graph: every degree d, so W = s I
 * + b A (Metropolis-Hastings and max-degree: s = b = 1 / (d + 1); uniform: s
 * = 0, b = 1 / d), then alpha I + (1 - alpha) W; its eigenvalues are
 * affine in the adjacency's mu, increasing, so the second-largest modulus
 * is at the second-largest or the smallest mu.  Returns 1 when it filled
 * st, 0 when the graph is none of these (or not as regular as it should
 * be). */
static int closed_form(const topo_graph *g, topo_stats *st)
{
    int kind = g->gen_kind - 1, d, diam;
    double second, least, dgap;   /* dgap = d - second, to full precision */
    const int *s = g->gen_dims;
    if (g->gen_kind == 0 || !g->symmetric)
        return 0;
    switch (kind) {
    case TOPO_RING:
        if (g->n < 3)
            return 0;
        d = 2;
        cycle_ev(g->n, &second, &least, &dgap);
        diam = g->n / 2;
        break;
    case TOPO_TORUS2D:
    case TOPO_TORUS3D: {
        int sides = kind == TOPO_TORUS2D ? 2 : 3;
        double top = -INFINITY;
        d = 2 * sides;
        least = 0;
        diam = 0;
        dgap = INFINITY;
        for (int i = 0; i < sides; i++) {
            double sc, lc, gc;
            if (s[i] < 3)
                return 0;
            cycle_ev(s[i], &sc, &lc, &gc);
            /* the others at their largest, 2 */
            if (sc + 2.0 * (sides - 1) > top) {
                top = sc + 2.0 * (sides - 1);
                dgap = gc;
            }
            least += lc;
            diam += s[i] / 2;
        }
        second = top;
        break;
    }
    case TOPO_HYPERCUBE:
        if (s[0] < 1 || g->n != 1 << s[0])
            return 0;
        d = s[0];
        second = d - 2;
        least = -d;
        dgap = 2;
        diam = d;
        break;
    case TOPO_COMPLETE:
        if (g->n < 3)
            return 0;
        d = g->n - 1;
        second = least = -1;
        dgap = d + 1;
        diam = 1;
        break;
    default:
        return 0;
    }
    if (st->degree_min != d || st->degree_max != d)
        return 0;
    double self = g->mixing == TOPO_MIX_UNIFORM ? 0.0 : 1.0 / (d + 1);
    double b = g->mixing == TOPO_MIX_UNIFORM ? 1.0 / d : 1.0 / (d + 1);
    double a = g->lazy_alpha;
    /* 1 - w2 = (1 - a) b (d - second), as self + b d = 1 */
    double w2 = a + (1 - a) * (self + b * second), wl = a + (1 - a) * (self + b * least);
    if (fabs(w2) >= fabs(wl) && w2 > 0) {
        st->spectral_gap = (1 - a) * b * dgap;
        st->lambda2 = 1.0 - st->spectral_gap;
    } else {
        st->lambda2 = fabs(w2) > fabs(wl) ? fabs(w2) : fabs(wl);
        st->spectral_gap = 1.0 - st->lambda2;
    }
    st->spectral_ok = 1;
    st->solver = "closed";
    st->diameter = diam;
    st->diameter_ok = 1;
    return 1;
}

/* When ARPACK does not converge, spectral_ok is 0 and lambda2 and
 * spectral_gap are 0 (not NaN, which JSON cannot carry): read them only
 * when spectral_ok is 1.  bounded: the budgets of
 * topo_compute_stats_bounded. */
static int compute_stats(const topo_graph *g, int bounded, topo_stats *st)
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
    st->bounded = bounded;
    if (bounded && closed_form(g, st))
        return 0;
    if ((double)g->n * ((double)g->n + 2.0 * (double)g->n_edges)
        <= (bounded ? TOPO_BOUNDED_DIAMETER_WORK : TOPO_DIAMETER_WORK)) {
        if (diameter(g, &st->diameter) != 0)
            return -1;
        st->diameter_ok = 1;
    }
    /* ARPACK first above TOPO_ARPACK_MIN nodes (0.005 s against 0.45 s for
     * the dense solver at 1024); where it does not converge (tiny gaps, as
     * on long rings) the dense solver still gives the answer up to
     * TOPO_DENSE_MAX */
    int rc;
    if (bounded && g->n > TOPO_BOUNDED_SPECTRUM_MAX) {
        st->solver = "none";   /* not attempted */
        return 0;
    }
    if (g->n <= TOPO_ARPACK_MIN) {
        st->solver = "dense";
        rc = topo_slem(g, TOPO_SOLVER_DENSE, &st->lambda2);
    } else {
        st->solver = "arpack";
        rc = slem(g, TOPO_SOLVER_ARPACK, bounded ? TOPO_BOUNDED_ARPACK_ITERS : 0, &st->lambda2);
        if (rc == 1 && g->n <= TOPO_DENSE_MAX && !bounded) {
            st->solver = "dense";
            rc = topo_slem(g, TOPO_SOLVER_DENSE, &st->lambda2);
        }
    }
    if (rc < 0)
        return -1;
    if (rc == 0) {
        st->spectral_ok = 1;
        st->spectral_gap = 1.0 - st->lambda2;
    } else {
        st->lambda2 = 0.0;
    }
    return 0;
}

int topo_compute_stats(const topo_graph *g, topo_stats *st)
{
    return compute_stats(g, 0, st);
}

int topo_compute_stats_bounded(const topo_graph *g, topo_stats *st)
{
    return compute_stats(g, 1, st);
}
