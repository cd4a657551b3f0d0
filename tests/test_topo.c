/* test_topo.c -- Check suite for topologies/: structure of each generator
 * (neighbour lists, torus layout, small-n conventions), Metropolis-Hastings
 * weights, closed-form spectra (ring, complete graph, torus), diameters,
 * bipartitions, seeding of the random generators, and the exact text of
 * every error a user can meet.  It does not test how the simulator uses a
 * topology, and it never includes <igraph.h>.
 */
#include "topo.h"

#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define TOL 1e-12
/* M_PI is XSI, not C11 or POSIX: -D_POSIX_C_SOURCE does not bring it in */
static const double PI = 3.14159265358979323846;

static topo_spec ring(int n)      { return (topo_spec){ .kind = TOPO_RING, .n = n }; }
static topo_spec complete(int n)  { return (topo_spec){ .kind = TOPO_COMPLETE, .n = n }; }
static topo_spec torus(int r, int c)
{
    return (topo_spec){ .kind = TOPO_TORUS2D, .n = r * c, .rows = r, .cols = c };
}
static topo_spec erdos(int n, double p)
{
    return (topo_spec){ .kind = TOPO_ERDOS_RENYI, .n = n, .p = p };
}
static topo_spec regular(int n, int d)
{
    return (topo_spec){ .kind = TOPO_RANDOM_REGULAR, .n = n, .degree = d };
}

static topo_graph *build_ok(topo_spec spec, uint64_t seed)
{
    char err[256] = "";
    topo_graph *g = topo_build(&spec, seed, err, sizeof err);
    ck_assert_msg(g != NULL, "topo_build(%s, n=%d) failed: %s",
                  topo_kind_name(spec.kind), spec.n, err);
    ck_assert_int_eq(g->n, spec.n);
    return g;
}

static topo_stats stats_ok(const topo_graph *g)
{
    topo_stats st;
    ck_assert_int_eq(topo_compute_stats(g, &st), 0);
    ck_assert_int_eq(st.n, g->n);
    ck_assert_uint_eq(st.n_edges, g->n_edges);
    return st;
}

static int degree(const topo_graph *g, int i) { return (int)(g->off[i + 1] - g->off[i]); }

static int has_edge(const topo_graph *g, int i, int j)
{
    for (size_t k = g->off[i]; k < g->off[i + 1]; k++)
        if (g->nbr[k] == j)
            return 1;
    return 0;
}

/* Everything a mixing matrix built by topo_build must satisfy: CSR shape,
 * sorted simple neighbour lists, the Metropolis-Hastings formula, exact
 * symmetry, nonnegative entries and rows summing to 1. */
static void check_mixing(const topo_graph *g)
{
    int n = g->n;
    ck_assert_uint_eq(g->off[0], 0);
    ck_assert_uint_eq(g->off[n], 2 * g->n_edges);
    for (int i = 0; i < n; i++) {
        double sum = g->self_w[i];
        ck_assert_msg(g->self_w[i] >= 0.0, "self weight of %d is %g", i, g->self_w[i]);
        for (size_t k = g->off[i]; k < g->off[i + 1]; k++) {
            int j = g->nbr[k];
            ck_assert_int_ge(j, 0);
            ck_assert_int_lt(j, n);
            ck_assert_int_ne(j, i);
            if (k > g->off[i])
                ck_assert_int_lt(g->nbr[k - 1], j);
            int dmax = degree(g, i) > degree(g, j) ? degree(g, i) : degree(g, j);
            ck_assert_double_eq(g->w[k], 1.0 / (1.0 + dmax));
            sum += g->w[k];
        }
        ck_assert_double_eq_tol(sum, 1.0, TOL);
    }
    double *W = malloc((size_t)n * (size_t)n * sizeof *W);
    ck_assert_ptr_nonnull(W);
    topo_mixing_dense(g, W);
    for (int i = 0; i < n; i++) {
        double sum = 0.0;
        for (int j = 0; j < n; j++) {
            ck_assert_msg(W[(size_t)i * n + j] == W[(size_t)j * n + i],
                          "W not symmetric at (%d, %d)", i, j);
            ck_assert_double_ge(W[(size_t)i * n + j], 0.0);
            ck_assert_int_eq(W[(size_t)i * n + j] != 0.0 || i == j, has_edge(g, i, j) || i == j);
            sum += W[(size_t)i * n + j];
        }
        ck_assert_double_eq_tol(sum, 1.0, TOL);
    }
    free(W);
}

static int same_graph(const topo_graph *a, const topo_graph *b)
{
    if (a->n != b->n || a->n_edges != b->n_edges)
        return 0;
    return memcmp(a->off, b->off, ((size_t)a->n + 1) * sizeof *a->off) == 0
        && memcmp(a->nbr, b->nbr, 2 * a->n_edges * sizeof *a->nbr) == 0;
}

/* SLEM of the ring's MH matrix from its eigenvalues 1/3 + 2/3 cos(2 pi k/n). */
static double ring_slem(int n)
{
    double best = 0.0;
    for (int k = 1; k < n; k++) {
        double ev = fabs(1.0 / 3.0 + 2.0 / 3.0 * cos(2.0 * PI * k / n));
        if (ev > best)
            best = ev;
    }
    return best;
}

/* SLEM of an r x c torus (r, c >= 3, every degree 4, weights 1/5):
 * eigenvalues 1/5 + 2/5 cos(2 pi a/r) + 2/5 cos(2 pi b/c). */
static double torus_slem(int r, int c)
{
    double best = 0.0;
    for (int a = 0; a < r; a++)
        for (int b = 0; b < c; b++) {
            if (a == 0 && b == 0)
                continue;
            double ev = fabs(0.2 + 0.4 * cos(2.0 * PI * a / r) + 0.4 * cos(2.0 * PI * b / c));
            if (ev > best)
                best = ev;
        }
    return best;
}

/* ---- names ------------------------------------------------------------- */

START_TEST(test_kind_names)
{
    ck_assert_str_eq(topo_kind_name(TOPO_RING), "ring");
    ck_assert_str_eq(topo_kind_name(TOPO_COMPLETE), "complete");
    ck_assert_str_eq(topo_kind_name(TOPO_TORUS2D), "torus2d");
    ck_assert_str_eq(topo_kind_name(TOPO_ERDOS_RENYI), "erdos_renyi");
    ck_assert_str_eq(topo_kind_name(TOPO_RANDOM_REGULAR), "random_regular");
    ck_assert_str_eq(topo_kind_name((topo_kind)42), "unknown");
    for (int k = TOPO_RING; k <= TOPO_RANDOM_REGULAR; k++)
        ck_assert_int_eq(topo_kind_from_name(topo_kind_name((topo_kind)k)), k);
    ck_assert_int_eq(topo_kind_from_name("Ring"), -1);
    ck_assert_int_eq(topo_kind_from_name("torus"), -1);
    ck_assert_int_eq(topo_kind_from_name(""), -1);
    ck_assert_int_eq(topo_kind_from_name(NULL), -1);
    ck_assert_str_eq(topo_kind_names(),
                     "ring, complete, torus2d, erdos_renyi, random_regular, ring_lattice, "
                     "torus3d, hypercube, star, binary_tree, watts_strogatz, barabasi_albert, "
                     "exponential, edge_list, learned");
    for (int k = TOPO_RING; k <= TOPO_EDGE_LIST; k++)
        ck_assert_int_eq(topo_kind_from_name(topo_kind_name((topo_kind)k)), k);
}
END_TEST

/* ---- ring -------------------------------------------------------------- */

START_TEST(test_ring_structure)
{
    static const int ns[] = { 3, 4, 5, 8, 16, 33 };
    for (size_t t = 0; t < sizeof ns / sizeof ns[0]; t++) {
        int n = ns[t];
        topo_graph *g = build_ok(ring(n), 1);
        ck_assert_uint_eq(g->n_edges, (size_t)n);
        for (int i = 0; i < n; i++) {
            ck_assert_int_eq(degree(g, i), 2);
            int a = (i + n - 1) % n, b = (i + 1) % n;
            int lo = a < b ? a : b, hi = a < b ? b : a;
            ck_assert_int_eq(g->nbr[g->off[i]], lo);
            ck_assert_int_eq(g->nbr[g->off[i] + 1], hi);
            ck_assert_double_eq_tol(g->w[g->off[i]], 1.0 / 3.0, TOL);
            ck_assert_double_eq_tol(g->self_w[i], 1.0 / 3.0, TOL);
        }
        check_mixing(g);
        topo_destroy(g);
    }
}
END_TEST

START_TEST(test_ring_slem_closed_form)
{
    static const int ns[] = { 3, 4, 5, 6, 7, 8, 16, 33, 64 };
    for (size_t t = 0; t < sizeof ns / sizeof ns[0]; t++) {
        int n = ns[t];
        topo_graph *g = build_ok(ring(n), 1);
        topo_stats st = stats_ok(g);
        ck_assert_int_eq(st.spectral_ok, 1);
        ck_assert_msg(fabs(st.lambda2 - ring_slem(n)) < TOL,
                      "ring %d: lambda2 %.17g, expected %.17g", n, st.lambda2, ring_slem(n));
        ck_assert_double_eq_tol(st.spectral_gap, 1.0 - ring_slem(n), TOL);
        ck_assert_int_eq(st.degree_min, 2);
        ck_assert_int_eq(st.degree_max, 2);
        topo_destroy(g);
    }
    /* even n: the smallest eigenvalue (k = n/2) is -1/3, below the second
     * largest 1/3 + 2/3 cos(2 pi/n) in modulus once n >= 4 */
    topo_graph *g = build_ok(ring(16), 1);
    topo_stats st = stats_ok(g);
    ck_assert_double_eq_tol(st.lambda2, 1.0 / 3.0 + 2.0 / 3.0 * cos(2.0 * PI / 16), TOL);
    topo_destroy(g);
}
END_TEST

/* x_i = cos(2 pi i/n) is an eigenvector of the ring's W with eigenvalue
 * 1/3 + 2/3 cos(2 pi/n): one product through the CSR lists checks it. */
START_TEST(test_ring_eigenvector_csr)
{
    int n = 12;
    topo_graph *g = build_ok(ring(n), 1);
    double lambda = 1.0 / 3.0 + 2.0 / 3.0 * cos(2.0 * PI / n);
    for (int i = 0; i < n; i++) {
        double y = g->self_w[i] * cos(2.0 * PI * i / n);
        for (size_t k = g->off[i]; k < g->off[i + 1]; k++)
            y += g->w[k] * cos(2.0 * PI * g->nbr[k] / n);
        ck_assert_double_eq_tol(y, lambda * cos(2.0 * PI * i / n), TOL);
    }
    topo_destroy(g);
}
END_TEST

START_TEST(test_ring_small)
{
    topo_graph *g = build_ok(ring(1), 1);
    ck_assert_uint_eq(g->n_edges, 0);
    ck_assert_double_eq(g->self_w[0], 1.0);
    ck_assert_int_eq(g->bipartite, 1);
    ck_assert_int_eq(g->side[0], 0);
    topo_stats st = stats_ok(g);
    ck_assert_int_eq(st.degree_min, 0);
    ck_assert_int_eq(st.degree_max, 0);
    ck_assert_int_eq(st.diameter, 0);
    ck_assert_int_eq(st.spectral_ok, 1);
    ck_assert_double_eq(st.lambda2, 0.0);
    ck_assert_double_eq(st.spectral_gap, 1.0);
    topo_destroy(g);

    g = build_ok(ring(2), 1);
    ck_assert_uint_eq(g->n_edges, 1);
    ck_assert_int_eq(g->nbr[0], 1);
    ck_assert_int_eq(g->nbr[1], 0);
    ck_assert_double_eq(g->w[0], 0.5);
    ck_assert_double_eq(g->self_w[0], 0.5);
    check_mixing(g);
    ck_assert_int_eq(g->bipartite, 1);
    ck_assert_int_eq(g->side[0], 0);
    ck_assert_int_eq(g->side[1], 1);
    st = stats_ok(g);
    ck_assert_int_eq(st.diameter, 1);
    ck_assert_double_eq_tol(st.lambda2, 0.0, TOL);
    topo_destroy(g);
}
END_TEST

START_TEST(test_ring_diameter)
{
    for (int n = 1; n <= 21; n++) {
        topo_graph *g = build_ok(ring(n), 1);
        topo_stats st = stats_ok(g);
        ck_assert_msg(st.diameter == n / 2, "ring %d: diameter %d", n, st.diameter);
        topo_destroy(g);
    }
}
END_TEST

/* ---- complete ---------------------------------------------------------- */

START_TEST(test_complete)
{
    for (int n = 1; n <= 9; n++) {
        topo_graph *g = build_ok(complete(n), 1);
        ck_assert_uint_eq(g->n_edges, (size_t)n * (n - 1) / 2);
        check_mixing(g);
        double *W = malloc((size_t)n * n * sizeof *W);
        ck_assert_ptr_nonnull(W);
        topo_mixing_dense(g, W);
        for (int k = 0; k < n * n; k++)
            ck_assert_double_eq_tol(W[k], 1.0 / n, TOL);
        free(W);
        topo_stats st = stats_ok(g);
        ck_assert_int_eq(st.degree_min, n - 1);
        ck_assert_int_eq(st.degree_max, n - 1);
        ck_assert_int_eq(st.diameter, n > 1 ? 1 : 0);
        ck_assert_double_eq_tol(st.lambda2, 0.0, TOL);
        ck_assert_double_eq_tol(st.spectral_gap, 1.0, TOL);
        topo_destroy(g);
    }
}
END_TEST

/* ---- torus ------------------------------------------------------------- */

START_TEST(test_torus_layout)
{
    int rows = 3, cols = 4;
    topo_graph *g = build_ok(torus(rows, cols), 1);
    ck_assert_uint_eq(g->n_edges, 2 * 12);
    for (int r = 0; r < rows; r++)
        for (int c = 0; c < cols; c++) {
            int i = r * cols + c;
            ck_assert_int_eq(degree(g, i), 4);
            ck_assert(has_edge(g, i, ((r + 1) % rows) * cols + c));
            ck_assert(has_edge(g, i, ((r + rows - 1) % rows) * cols + c));
            ck_assert(has_edge(g, i, r * cols + (c + 1) % cols));
            ck_assert(has_edge(g, i, r * cols + (c + cols - 1) % cols));
        }
    check_mixing(g);
    topo_destroy(g);
}
END_TEST

START_TEST(test_torus_4x4_slem)
{
    topo_graph *g = build_ok(torus(4, 4), 1);
    check_mixing(g);
    for (size_t k = 0; k < 2 * g->n_edges; k++)
        ck_assert_double_eq_tol(g->w[k], 0.2, TOL);
    topo_stats st = stats_ok(g);
    ck_assert_double_eq_tol(st.lambda2, 0.6, TOL);
    ck_assert_double_eq_tol(st.spectral_gap, 0.4, TOL);
    ck_assert_int_eq(st.degree_min, 4);
    ck_assert_int_eq(st.degree_max, 4);
    ck_assert_int_eq(st.diameter, 4);
    topo_destroy(g);
}
END_TEST

START_TEST(test_torus_slem_closed_form)
{
    static const int dims[][2] = { { 3, 3 }, { 3, 4 }, { 4, 3 }, { 5, 7 }, { 6, 6 }, { 8, 5 } };
    for (size_t t = 0; t < sizeof dims / sizeof dims[0]; t++) {
        int r = dims[t][0], c = dims[t][1];
        topo_graph *g = build_ok(torus(r, c), 1);
        check_mixing(g);
        topo_stats st = stats_ok(g);
        ck_assert_msg(fabs(st.lambda2 - torus_slem(r, c)) < TOL,
                      "torus %dx%d: lambda2 %.17g, expected %.17g", r, c, st.lambda2,
                      torus_slem(r, c));
        ck_assert_int_eq(st.diameter, r / 2 + c / 2);
        topo_destroy(g);
    }
}
END_TEST

/* Dimensions of length 1 or 2 do not wrap: no self-loop, no double edge. */
START_TEST(test_torus_small)
{
    topo_graph *g = build_ok(torus(1, 1), 1);
    ck_assert_uint_eq(g->n_edges, 0);
    topo_destroy(g);

    g = build_ok(torus(1, 2), 1);
    ck_assert_uint_eq(g->n_edges, 1);
    check_mixing(g);
    topo_destroy(g);

    g = build_ok(torus(2, 2), 1);            /* the 4-cycle 0-1-3-2 */
    ck_assert_uint_eq(g->n_edges, 4);
    check_mixing(g);
    ck_assert(has_edge(g, 0, 1) && has_edge(g, 1, 3) && has_edge(g, 3, 2) && has_edge(g, 2, 0));
    topo_destroy(g);

    g = build_ok(torus(2, 3), 1);            /* triangular prism */
    ck_assert_uint_eq(g->n_edges, 9);
    check_mixing(g);
    topo_stats st = stats_ok(g);
    ck_assert_int_eq(st.degree_min, 3);
    ck_assert_int_eq(st.degree_max, 3);
    ck_assert_int_eq(st.diameter, 2);
    ck_assert_int_eq(g->bipartite, 0);
    ck_assert_double_eq_tol(st.lambda2, 0.5, TOL);   /* (I + A) / 4, A of C3 x K2 */
    topo_destroy(g);

    /* 1 x n is the ring of n, node for node */
    topo_graph *a = build_ok(torus(1, 7), 1);
    topo_graph *b = build_ok(ring(7), 1);
    ck_assert(same_graph(a, b));
    topo_destroy(a);
    topo_destroy(b);
    a = build_ok(torus(7, 1), 1);
    b = build_ok(ring(7), 1);
    ck_assert(same_graph(a, b));
    topo_destroy(a);
    topo_destroy(b);
}
END_TEST

/* ---- random generators ------------------------------------------------- */

START_TEST(test_random_regular_degrees)
{
    static const int cases[][2] = { { 20, 3 }, { 30, 4 }, { 16, 5 }, { 10, 9 }, { 50, 6 } };
    for (size_t t = 0; t < sizeof cases / sizeof cases[0]; t++)
        for (uint64_t seed = 1; seed <= 4; seed++) {
            int n = cases[t][0], d = cases[t][1];
            topo_graph *g = build_ok(regular(n, d), seed);
            ck_assert_uint_eq(g->n_edges, (size_t)n * d / 2);
            for (int i = 0; i < n; i++)
                ck_assert_int_eq(degree(g, i), d);
            check_mixing(g);
            for (size_t k = 0; k < 2 * g->n_edges; k++)
                ck_assert_double_eq_tol(g->w[k], 1.0 / (d + 1), TOL);
            topo_stats st = stats_ok(g);
            ck_assert_int_eq(st.degree_min, d);
            ck_assert_int_eq(st.degree_max, d);
            ck_assert(st.lambda2 < 1.0 - 1e-9);
            topo_destroy(g);
        }
}
END_TEST

START_TEST(test_random_regular_small)
{
    topo_graph *g = build_ok(regular(1, 0), 1);
    ck_assert_uint_eq(g->n_edges, 0);
    topo_destroy(g);
    g = build_ok(regular(2, 1), 1);
    ck_assert_uint_eq(g->n_edges, 1);
    topo_destroy(g);
}
END_TEST

/* The two 3-regular graphs on 6 nodes both have lambda2 = 1/2, but from
 * opposite ends of the spectrum: the prism's second largest eigenvalue is
 * 1/2, K_{3,3}'s are 1/4 and -1/2.  K_{3,3} thus checks that the smallest
 * eigenvalue counts in the modulus. */
START_TEST(test_random_regular_6_3)
{
    int seen_k33 = 0;
    for (uint64_t seed = 1; seed <= 200; seed++) {
        topo_graph *g = build_ok(regular(6, 3), seed);
        topo_stats st = stats_ok(g);
        ck_assert_msg(fabs(st.lambda2 - 0.5) < TOL, "seed %llu: lambda2 %.17g",
                      (unsigned long long)seed, st.lambda2);
        if (g->bipartite) {
            int ones = 0;
            for (int i = 0; i < 6; i++)
                ones += g->side[i];
            ck_assert_int_eq(ones, 3);
            seen_k33++;
        }
        topo_destroy(g);
    }
    ck_assert_int_gt(seen_k33, 0);
}
END_TEST

/* Seeding right before each call: the same seed gives the same graph even
 * with other random builds in between, a different seed another graph. */
START_TEST(test_random_seeds)
{
    topo_spec specs[] = { regular(40, 4), erdos(40, 0.3) };
    for (size_t t = 0; t < sizeof specs / sizeof specs[0]; t++) {
        topo_graph *a = build_ok(specs[t], 12345);
        topo_graph *b = build_ok(specs[t], 99);
        topo_graph *c = build_ok(specs[t], 12345);
        topo_graph *d = build_ok(specs[t], 12345ULL + (1ULL << 40));   /* high bits count */
        ck_assert(same_graph(a, c));
        ck_assert(!same_graph(a, b));
        ck_assert(!same_graph(a, d));
        topo_destroy(a);
        topo_destroy(b);
        topo_destroy(c);
        topo_destroy(d);
    }
}
END_TEST

START_TEST(test_erdos_renyi_p1_is_complete)
{
    for (int n = 1; n <= 12; n += 11) {
        topo_graph *a = build_ok(erdos(n, 1.0), 7);
        topo_graph *b = build_ok(complete(n), 7);
        ck_assert(same_graph(a, b));
        for (size_t k = 0; k < 2 * a->n_edges; k++)
            ck_assert_double_eq_tol(a->w[k], 1.0 / n, TOL);
        topo_stats st = stats_ok(a);
        ck_assert_double_eq_tol(st.lambda2, 0.0, TOL);
        topo_destroy(a);
        topo_destroy(b);
    }
}
END_TEST

START_TEST(test_erdos_renyi_mixing)
{
    for (uint64_t seed = 1; seed <= 5; seed++) {
        topo_graph *g = build_ok(erdos(30, 0.3), seed);
        check_mixing(g);
        topo_stats st = stats_ok(g);
        int dmin = g->n, dmax = 0;
        for (int i = 0; i < g->n; i++) {
            dmin = degree(g, i) < dmin ? degree(g, i) : dmin;
            dmax = degree(g, i) > dmax ? degree(g, i) : dmax;
        }
        ck_assert_int_eq(st.degree_min, dmin);
        ck_assert_int_eq(st.degree_max, dmax);
        ck_assert(st.lambda2 > 0.0 && st.lambda2 < 1.0 - 1e-9);
        ck_assert(st.diameter >= 1);
        topo_destroy(g);
    }
}
END_TEST

/* ---- bipartition ------------------------------------------------------- */

START_TEST(test_bipartite)
{
    topo_graph *g = build_ok(ring(8), 1);
    ck_assert_int_eq(g->bipartite, 1);
    ck_assert_ptr_nonnull(g->side);
    for (int i = 0; i < 8; i++)
        ck_assert_int_eq(g->side[i], i % 2);
    topo_destroy(g);

    g = build_ok(torus(4, 6), 1);
    ck_assert_int_eq(g->bipartite, 1);
    for (int r = 0; r < 4; r++)
        for (int c = 0; c < 6; c++)
            ck_assert_int_eq(g->side[r * 6 + c], (r + c) % 2);
    topo_destroy(g);

    g = build_ok(complete(2), 1);
    ck_assert_int_eq(g->bipartite, 1);
    ck_assert_int_eq(g->side[0], 0);
    ck_assert_int_eq(g->side[1], 1);
    topo_destroy(g);

    topo_spec nots[] = { ring(3), ring(7), ring(33), complete(3), complete(6), torus(3, 4),
                         torus(5, 5) };
    for (size_t t = 0; t < sizeof nots / sizeof nots[0]; t++) {
        g = build_ok(nots[t], 1);
        ck_assert_int_eq(g->bipartite, 0);
        ck_assert_ptr_null(g->side);
        topo_destroy(g);
    }

    /* whatever the generator draws, a bipartition has node 0 on side 0 and
     * every edge across */
    for (uint64_t seed = 1; seed <= 20; seed++) {
        g = build_ok(regular(12, 3), seed);
        if (g->bipartite) {
            ck_assert_int_eq(g->side[0], 0);
            for (int i = 0; i < g->n; i++)
                for (size_t k = g->off[i]; k < g->off[i + 1]; k++)
                    ck_assert_int_ne(g->side[i], g->side[g->nbr[k]]);
        }
        topo_destroy(g);
    }
}
END_TEST

/* ---- errors ------------------------------------------------------------ */

static const struct bad_case {
    topo_spec   spec;
    const char *msg;
} bad_cases[] = {
    { { .kind = TOPO_RING, .n = 0 }, "ring graph needs n >= 1, got n=0" },
    { { .kind = TOPO_COMPLETE, .n = -3 }, "complete graph needs n >= 1, got n=-3" },
    { { .kind = TOPO_TORUS2D, .n = 10, .rows = 3, .cols = 4 },
      "torus2d graph needs rows * cols == n, got rows=3, cols=4, n=10" },
    { { .kind = TOPO_TORUS2D, .n = 4, .rows = 0, .cols = 4 },
      "torus2d graph needs rows >= 1 and cols >= 1, got rows=0, cols=4" },
    { { .kind = TOPO_TORUS2D, .n = 4, .rows = -2, .cols = -2 },
      "torus2d graph needs rows >= 1 and cols >= 1, got rows=-2, cols=-2" },
    { { .kind = TOPO_ERDOS_RENYI, .n = 8, .p = 0.0 },
      "erdos_renyi graph needs 0 < p <= 1, got p=0" },
    { { .kind = TOPO_ERDOS_RENYI, .n = 8, .p = 1.5 },
      "erdos_renyi graph needs 0 < p <= 1, got p=1.5" },
    { { .kind = TOPO_ERDOS_RENYI, .n = 8, .p = -0.25 },
      "erdos_renyi graph needs 0 < p <= 1, got p=-0.25" },
    { { .kind = TOPO_ERDOS_RENYI, .n = 8, .p = 1e-9 },
      "erdos_renyi graph with n=8, p=1e-09 is disconnected (8 components); raise p" },
    { { .kind = TOPO_RANDOM_REGULAR, .n = 8, .degree = 8 },
      "random_regular graph needs 0 <= degree < n, got degree=8, n=8" },
    { { .kind = TOPO_RANDOM_REGULAR, .n = 8, .degree = -1 },
      "random_regular graph needs 0 <= degree < n, got degree=-1, n=8" },
    { { .kind = TOPO_RANDOM_REGULAR, .n = 7, .degree = 3 },
      "random_regular graph needs n * degree even, got n=7, degree=3" },
    { { .kind = TOPO_RANDOM_REGULAR, .n = 8, .degree = 1 },
      "random_regular graph with n=8, degree=1 is disconnected (4 components); raise degree" },
    { { .kind = TOPO_RANDOM_REGULAR, .n = 8, .degree = 0 },
      "random_regular graph with n=8, degree=0 is disconnected (8 components); raise degree" },
    { { .kind = (topo_kind)99, .n = 8 },
      "unknown topology kind 99 (expected one of: ring, complete, torus2d, erdos_renyi, "
      "random_regular, ring_lattice, torus3d, hypercube, star, binary_tree, watts_strogatz, "
      "barabasi_albert, exponential, edge_list, learned)" },
};

START_TEST(test_bad_spec)
{
    const struct bad_case *bc = &bad_cases[_i];
    for (uint64_t seed = 1; seed <= 3; seed++) {
        char err[256];
        memset(err, 'x', sizeof err);
        err[sizeof err - 1] = '\0';
        topo_graph *g = topo_build(&bc->spec, seed, err, sizeof err);
        ck_assert_ptr_null(g);
        ck_assert_str_eq(err, bc->msg);
    }
}
END_TEST

START_TEST(test_error_buffer)
{
    topo_spec spec = ring(0);
    char err[8];
    memset(err, 'x', sizeof err);
    ck_assert_ptr_null(topo_build(&spec, 1, err, sizeof err));
    ck_assert_str_eq(err, "ring gr");           /* truncated, terminated */
    ck_assert_ptr_null(topo_build(&spec, 1, NULL, 0));

    /* success clears the buffer */
    spec = ring(4);
    char ok[32] = "stale";
    topo_graph *g = topo_build(&spec, 1, ok, sizeof ok);
    ck_assert_ptr_nonnull(g);
    ck_assert_str_eq(ok, "");
    topo_destroy(g);
    topo_destroy(NULL);
}
END_TEST

/* Above TOPO_DENSE_MAX the spectrum comes from ARPACK: still the closed
 * form, to the accuracy of the eigenvalue (relative 1e-14 here). */
START_TEST(test_stats_large)
{
    topo_graph *g = build_ok(ring(TOPO_DENSE_MAX + 1), 1);
    topo_stats st = stats_ok(g);
    ck_assert_int_eq(st.spectral_ok, 1);
    ck_assert_str_eq(st.solver, "arpack");
    ck_assert_msg(fabs(st.lambda2 - ring_slem(TOPO_DENSE_MAX + 1)) < 1e-13,
                  "lambda2 %.17g, expected %.17g", st.lambda2, ring_slem(TOPO_DENSE_MAX + 1));
    ck_assert_double_eq(st.spectral_gap, 1.0 - st.lambda2);
    ck_assert_int_eq(st.diameter_ok, 1);
    ck_assert_int_eq(st.diameter, (TOPO_DENSE_MAX + 1) / 2);
    ck_assert_int_eq(st.degree_min, 2);
    ck_assert_int_eq(st.degree_max, 2);
    topo_destroy(g);

    /* the star of 40000 nodes: 40000 searches of 120000 steps exceed
     * TOPO_DIAMETER_WORK, so the diameter is skipped; its spectrum is
     * {1, 1 - 1/n (n - 2 times), 0} */
    topo_spec star = { .kind = TOPO_STAR, .n = 40000 };
    g = build_ok(star, 1);
    st = stats_ok(g);
    ck_assert_int_eq(st.diameter_ok, 0);
    ck_assert_int_eq(st.diameter, 0);
    ck_assert_int_eq(st.spectral_ok, 1);
    ck_assert_double_eq_tol(st.lambda2, 1.0 - 1.0 / 40000, 1e-12);
    ck_assert_int_eq(st.degree_max, 39999);
    topo_destroy(g);
}
END_TEST

static Suite *topo_suite(void)
{
    Suite *s = suite_create("topo");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, test_kind_names);
    tcase_add_test(tc, test_ring_structure);
    tcase_add_test(tc, test_ring_slem_closed_form);
    tcase_add_test(tc, test_ring_eigenvector_csr);
    tcase_add_test(tc, test_ring_small);
    tcase_add_test(tc, test_ring_diameter);
    tcase_add_test(tc, test_complete);
    tcase_add_test(tc, test_torus_layout);
    tcase_add_test(tc, test_torus_4x4_slem);
    tcase_add_test(tc, test_torus_slem_closed_form);
    tcase_add_test(tc, test_torus_small);
    tcase_add_test(tc, test_random_regular_degrees);
    tcase_add_test(tc, test_random_regular_small);
    tcase_add_test(tc, test_random_regular_6_3);
    tcase_add_test(tc, test_random_seeds);
    tcase_add_test(tc, test_erdos_renyi_p1_is_complete);
    tcase_add_test(tc, test_erdos_renyi_mixing);
    tcase_add_test(tc, test_bipartite);
    tcase_add_loop_test(tc, test_bad_spec, 0, (int)(sizeof bad_cases / sizeof bad_cases[0]));
    tcase_add_test(tc, test_error_buffer);
    tcase_add_test(tc, test_stats_large);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    SRunner *sr = srunner_create(topo_suite());
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
