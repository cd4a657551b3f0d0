/* test_topo_gen.c -- Check suite for the generators and mixing weights of
 * topologies/ beyond the first slice: structure of ring lattices, 3-D tori,
 * hypercubes, stars, binary trees, Watts-Strogatz, Barabasi-Albert and
 * exponential graphs and edge-list files; closed-form spectra (hypercube
 * (d-1)/(d+1), star, lattice, 3-D torus, uniform and lazy weights); the
 * exact average after one round on the complete graph; consensus decaying
 * by the SLEM per round on static graphs; ARPACK agreeing with the dense
 * solver; the exact text of every error, including bad lines of files; and
 * the CSV and DOT writers.  The original kinds are covered by test_topo.c;
 * time-varying and directed graphs by test_topo_schedule.c.
 */
#define _POSIX_C_SOURCE 200809L   /* open_memstream */
#include "topo.h"

#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define TOL 1e-12
static const double PI = 3.14159265358979323846;
#define DATA DTSIM_SOURCE_DIR "/tests/data/topo/"

static topo_graph *build_ok(topo_spec spec, uint64_t seed)
{
    char err[512] = "";
    topo_graph *g = topo_build(&spec, seed, err, sizeof err);
    ck_assert_msg(g != NULL, "topo_build(%s, n=%d) failed: %s", topo_kind_name(spec.kind),
                  spec.n, err);
    ck_assert_int_eq(g->n, spec.n);
    return g;
}

static double slem_ok(const topo_graph *g, topo_solver solver)
{
    double l = -1.0;
    ck_assert_int_eq(topo_slem(g, solver, &l), 0);
    return l;
}

static int degree(const topo_graph *g, int i) { return (int)(g->off[i + 1] - g->off[i]); }

static int has_edge(const topo_graph *g, int i, int j)
{
    for (size_t k = g->off[i]; k < g->off[i + 1]; k++)
        if (g->nbr[k] == j)
            return 1;
    return 0;
}

static int same_graph(const topo_graph *a, const topo_graph *b)
{
    if (a->n != b->n || a->n_edges != b->n_edges)
        return 0;
    return memcmp(a->off, b->off, ((size_t)a->n + 1) * sizeof *a->off) == 0
        && memcmp(a->nbr, b->nbr, 2 * a->n_edges * sizeof *a->nbr) == 0;
}

/* CSR shape, sorted simple lists, undirected, rows summing to 1,
 * nonnegative weights, symmetry as flagged. */
static void check_shape(const topo_graph *g)
{
    int n = g->n;
    ck_assert_uint_eq(g->off[0], 0);
    ck_assert_uint_eq(g->off[n], 2 * g->n_edges);
    for (int i = 0; i < n; i++) {
        double sum = g->self_w[i];
        ck_assert(g->self_w[i] >= 0.0);
        for (size_t k = g->off[i]; k < g->off[i + 1]; k++) {
            int j = g->nbr[k];
            ck_assert(j >= 0 && j < n && j != i);
            if (k > g->off[i])
                ck_assert_int_lt(g->nbr[k - 1], j);
            ck_assert(has_edge(g, j, i));
            ck_assert(g->w[k] > 0.0);
            sum += g->w[k];
        }
        ck_assert_double_eq_tol(sum, 1.0, TOL);
    }
    if (g->symmetric) {
        for (int i = 0; i < n; i++)
            for (size_t k = g->off[i]; k < g->off[i + 1]; k++) {
                int j = g->nbr[k];
                for (size_t l = g->off[j]; l < g->off[j + 1]; l++)
                    if (g->nbr[l] == i)
                        ck_assert(g->w[l] == g->w[k]);
            }
    }
}

/* ---- structure --------------------------------------------------------- */

/* ring lattice, k per side: degree 2k; MH weights 1/(2k+1); eigenvalues
 * (1 + 2 sum_{s=1..k} cos(2 pi s j/n)) / (2k + 1). */
START_TEST(test_ring_lattice)
{
    static const int cases[][2] = { { 5, 1 }, { 10, 2 }, { 11, 3 }, { 30, 4 } };
    for (size_t t = 0; t < sizeof cases / sizeof cases[0]; t++) {
        int n = cases[t][0], k = cases[t][1];
        topo_graph *g = build_ok((topo_spec){ .kind = TOPO_RING_LATTICE, .n = n, .k = k }, 1);
        check_shape(g);
        ck_assert_uint_eq(g->n_edges, (size_t)n * k);
        for (int i = 0; i < n; i++) {
            ck_assert_int_eq(degree(g, i), 2 * k);
            for (int s = 1; s <= k; s++)
                ck_assert(has_edge(g, i, (i + s) % n) && has_edge(g, i, (i + n - s) % n));
        }
        double best = 0.0;
        for (int j = 1; j < n; j++) {
            double ev = 1.0;
            for (int s = 1; s <= k; s++)
                ev += 2.0 * cos(2.0 * PI * s * j / n);
            ev /= 2 * k + 1;
            best = fabs(ev) > best ? fabs(ev) : best;
        }
        ck_assert_double_eq_tol(slem_ok(g, TOPO_SOLVER_DENSE), best, TOL);
        topo_destroy(g);
    }
    /* k = 1 is the ring, node for node */
    topo_graph *a = build_ok((topo_spec){ .kind = TOPO_RING_LATTICE, .n = 9, .k = 1 }, 1);
    topo_graph *b = build_ok((topo_spec){ .kind = TOPO_RING, .n = 9 }, 1);
    ck_assert(same_graph(a, b));
    topo_destroy(a);
    topo_destroy(b);
}
END_TEST

/* 3-D torus r x c x l (all >= 3): degree 6, weights 1/7, eigenvalues
 * (1 + 2 cos(2 pi a/r) + 2 cos(2 pi b/c) + 2 cos(2 pi e/l)) / 7. */
START_TEST(test_torus3d)
{
    int r = 3, c = 4, l = 5, n = r * c * l;
    topo_graph *g = build_ok((topo_spec){ .kind = TOPO_TORUS3D, .n = n, .rows = r, .cols = c,
                                          .layers = l }, 1);
    check_shape(g);
    ck_assert_uint_eq(g->n_edges, 3 * (size_t)n);
    for (int z = 0; z < l; z++)
        for (int y = 0; y < r; y++)
            for (int x = 0; x < c; x++) {
                int i = (z * r + y) * c + x;
                ck_assert_int_eq(degree(g, i), 6);
                ck_assert(has_edge(g, i, (z * r + y) * c + (x + 1) % c));
                ck_assert(has_edge(g, i, (z * r + (y + 1) % r) * c + x));
                ck_assert(has_edge(g, i, (((z + 1) % l) * r + y) * c + x));
            }
    double best = 0.0;
    for (int a = 0; a < r; a++)
        for (int b = 0; b < c; b++)
            for (int e = 0; e < l; e++) {
                if (a == 0 && b == 0 && e == 0)
                    continue;
                double ev = (1.0 + 2.0 * cos(2.0 * PI * a / r) + 2.0 * cos(2.0 * PI * b / c)
                             + 2.0 * cos(2.0 * PI * e / l)) / 7.0;
                best = fabs(ev) > best ? fabs(ev) : best;
            }
    topo_stats st;
    ck_assert_int_eq(topo_compute_stats(g, &st), 0);
    ck_assert_double_eq_tol(st.lambda2, best, TOL);
    ck_assert_int_eq(st.diameter, r / 2 + c / 2 + l / 2);
    topo_destroy(g);

    /* a layer of one is the 2-D torus */
    topo_graph *a = build_ok((topo_spec){ .kind = TOPO_TORUS3D, .n = 12, .rows = 3, .cols = 4,
                                          .layers = 1 }, 1);
    topo_graph *b = build_ok((topo_spec){ .kind = TOPO_TORUS2D, .n = 12, .rows = 3, .cols = 4 },
                             1);
    ck_assert(same_graph(a, b));
    topo_destroy(a);
    topo_destroy(b);
}
END_TEST

/* Q_d: i ~ i xor 2^b; lambda2 = (d-1)/(d+1), and Q_4 is the 4 x 4 torus. */
START_TEST(test_hypercube)
{
    for (int d = 0; d <= 7; d++) {
        int n = 1 << d;
        topo_graph *g = build_ok((topo_spec){ .kind = TOPO_HYPERCUBE, .n = n }, 1);
        check_shape(g);
        ck_assert_uint_eq(g->n_edges, (size_t)n * d / 2);
        for (int i = 0; i < n; i++)
            for (int b = 0; b < d; b++)
                ck_assert(has_edge(g, i, i ^ (1 << b)));
        topo_stats st;
        ck_assert_int_eq(topo_compute_stats(g, &st), 0);
        ck_assert_msg(fabs(st.lambda2 - (d - 1.0) / (d + 1.0)) < TOL || d == 0,
                      "Q_%d: lambda2 %.17g", d, st.lambda2);
        ck_assert_int_eq(st.diameter, d);
        ck_assert_int_eq(g->bipartite, 1);
        topo_destroy(g);
    }
    topo_graph *q4 = build_ok((topo_spec){ .kind = TOPO_HYPERCUBE, .n = 16 }, 1);
    topo_graph *t44 = build_ok((topo_spec){ .kind = TOPO_TORUS2D, .n = 16, .rows = 4,
                                            .cols = 4 }, 1);
    double a = slem_ok(q4, TOPO_SOLVER_DENSE), b = slem_ok(t44, TOPO_SOLVER_DENSE);
    ck_assert_double_eq_tol(a, 0.6, TOL);
    ck_assert_double_eq_tol(a, b, TOL);
    topo_destroy(q4);
    topo_destroy(t44);
}
END_TEST

/* Star: MH weights 1/n everywhere; spectrum {1, 1 - 1/n (n - 2 times), 0}. */
START_TEST(test_star)
{
    for (int n = 3; n <= 12; n += 3) {
        topo_graph *g = build_ok((topo_spec){ .kind = TOPO_STAR, .n = n }, 1);
        check_shape(g);
        ck_assert_int_eq(degree(g, 0), n - 1);
        for (int i = 1; i < n; i++) {
            ck_assert_int_eq(degree(g, i), 1);
            ck_assert_int_eq(g->nbr[g->off[i]], 0);
            ck_assert_double_eq_tol(g->w[g->off[i]], 1.0 / n, TOL);
        }
        ck_assert_double_eq_tol(slem_ok(g, TOPO_SOLVER_DENSE), 1.0 - 1.0 / n, TOL);
        topo_destroy(g);
    }
}
END_TEST

START_TEST(test_binary_tree)
{
    int n = 12;
    topo_graph *g = build_ok((topo_spec){ .kind = TOPO_BINARY_TREE, .n = n }, 1);
    check_shape(g);
    ck_assert_uint_eq(g->n_edges, (size_t)n - 1);
    for (int i = 1; i < n; i++)
        ck_assert(has_edge(g, i, (i - 1) / 2));
    topo_stats st;
    ck_assert_int_eq(topo_compute_stats(g, &st), 0);
    ck_assert_int_eq(st.diameter, 6);   /* 7 - 3 - 1 - 0 - 2 - 5 - 11 */
    ck_assert_int_eq(st.degree_min, 1);
    ck_assert_int_eq(st.degree_max, 3);
    ck_assert_int_eq(g->bipartite, 1);
    topo_destroy(g);
}
END_TEST

/* j ~ i iff i - j or j - i is a power of two modulo n. */
START_TEST(test_exponential)
{
    static const int ns[] = { 2, 3, 8, 10, 16, 33 };
    for (size_t t = 0; t < sizeof ns / sizeof ns[0]; t++) {
        int n = ns[t];
        topo_graph *g = build_ok((topo_spec){ .kind = TOPO_EXPONENTIAL, .n = n }, 1);
        check_shape(g);
        for (int i = 0; i < n; i++)
            for (int j = 0; j < n; j++) {
                int want = 0;
                for (int b = 0; (1 << b) < n; b++)
                    if (j != i && ((i + (1 << b)) % n == j || (j + (1 << b)) % n == i))
                        want = 1;
                ck_assert_int_eq(has_edge(g, i, j), want);
            }
        topo_destroy(g);
    }
    topo_graph *g = build_ok((topo_spec){ .kind = TOPO_EXPONENTIAL, .n = 8 }, 1);
    ck_assert_int_eq(degree(g, 0), 5);   /* 1, 2, 4, 6, 7: +4 and -4 coincide */
    topo_destroy(g);
}
END_TEST

START_TEST(test_watts_strogatz)
{
    /* no rewiring: the ring lattice */
    topo_graph *a = build_ok((topo_spec){ .kind = TOPO_WATTS_STROGATZ, .n = 20, .k = 2,
                                          .beta = 0.0 }, 5);
    topo_graph *b = build_ok((topo_spec){ .kind = TOPO_RING_LATTICE, .n = 20, .k = 2 }, 5);
    ck_assert(same_graph(a, b));
    topo_destroy(a);
    topo_destroy(b);
    /* rewiring keeps the edge count, the seed fixes the graph */
    topo_spec s = { .kind = TOPO_WATTS_STROGATZ, .n = 40, .k = 3, .beta = 0.3 };
    a = build_ok(s, 11);
    b = build_ok(s, 11);
    topo_graph *c = build_ok(s, 12);
    check_shape(a);
    ck_assert_uint_eq(a->n_edges, 120);
    ck_assert(same_graph(a, b));
    ck_assert(!same_graph(a, c));
    topo_stats st;
    ck_assert_int_eq(topo_compute_stats(a, &st), 0);
    ck_assert(st.degree_min < st.degree_max);   /* rewired */
    topo_destroy(a);
    topo_destroy(b);
    topo_destroy(c);
}
END_TEST

/* psumtree: node 1 links to node 0, every later node to m distinct earlier
 * ones (all of them while fewer than m exist): edges = sum_i min(i, m);
 * m = 1 gives a tree. */
START_TEST(test_barabasi_albert)
{
    for (int m = 1; m <= 3; m++)
        for (uint64_t seed = 1; seed <= 3; seed++) {
            topo_graph *g = build_ok((topo_spec){ .kind = TOPO_BARABASI_ALBERT, .n = 50,
                                                  .m = m }, seed);
            check_shape(g);
            size_t want = 0;
            for (int i = 1; i < 50; i++)
                want += (size_t)(i < m ? i : m);
            ck_assert_uint_eq(g->n_edges, want);
            if (m == 1)
                ck_assert_int_eq(g->bipartite, 1);
            topo_destroy(g);
        }
    topo_spec s = { .kind = TOPO_BARABASI_ALBERT, .n = 60, .m = 2 };
    topo_graph *a = build_ok(s, 3), *b = build_ok(s, 3), *c = build_ok(s, 4);
    ck_assert(same_graph(a, b));
    ck_assert(!same_graph(a, c));
    topo_destroy(a);
    topo_destroy(b);
    topo_destroy(c);
}
END_TEST

START_TEST(test_edge_list_file)
{
    topo_graph *a = build_ok((topo_spec){ .kind = TOPO_EDGE_LIST, .n = 5,
                                          .path = DATA "ring5.txt" }, 1);
    topo_graph *b = build_ok((topo_spec){ .kind = TOPO_RING, .n = 5 }, 1);
    ck_assert(same_graph(a, b));
    ck_assert_mem_eq(a->w, b->w, 10 * sizeof *a->w);
    topo_destroy(a);
    topo_destroy(b);
    a = build_ok((topo_spec){ .kind = TOPO_EDGE_LIST, .n = 4, .path = DATA "path4.txt" }, 1);
    check_shape(a);
    ck_assert_uint_eq(a->n_edges, 3);
    ck_assert(has_edge(a, 0, 1) && has_edge(a, 1, 2) && has_edge(a, 2, 3));
    topo_destroy(a);
}
END_TEST

/* ---- mixing ------------------------------------------------------------ */

START_TEST(test_mixing_names)
{
    ck_assert_str_eq(topo_mixing_name(TOPO_MIX_METROPOLIS), "metropolis_hastings");
    ck_assert_str_eq(topo_mixing_name(TOPO_MIX_MAX_DEGREE), "max_degree");
    ck_assert_str_eq(topo_mixing_name(TOPO_MIX_UNIFORM), "uniform");
    ck_assert_str_eq(topo_mixing_name((topo_mixing)7), "?");
    for (int m = 0; m < 3; m++)
        ck_assert_int_eq(topo_mixing_from_name(topo_mixing_name((topo_mixing)m)), m);
    ck_assert_int_eq(topo_mixing_from_name("metropolis"), -1);
    ck_assert_int_eq(topo_mixing_from_name(NULL), -1);
    ck_assert_str_eq(topo_mixing_names(), "metropolis_hastings, max_degree, uniform");
}
END_TEST

/* Max-degree weights on an irregular graph: 1/(1 + d_max) on every edge,
 * symmetric. */
START_TEST(test_max_degree)
{
    topo_graph *g = build_ok((topo_spec){ .kind = TOPO_BINARY_TREE, .n = 10,
                                          .mixing = TOPO_MIX_MAX_DEGREE }, 1);
    check_shape(g);
    ck_assert_int_eq(g->symmetric, 1);
    ck_assert_int_eq(g->mixing, TOPO_MIX_MAX_DEGREE);
    for (size_t k = 0; k < 2 * g->n_edges; k++)
        ck_assert_double_eq_tol(g->w[k], 0.25, TOL);
    ck_assert_double_eq_tol(g->self_w[9], 0.75, TOL);   /* a leaf */
    topo_destroy(g);
    /* on a regular graph max-degree and Metropolis-Hastings coincide */
    g = build_ok((topo_spec){ .kind = TOPO_RING, .n = 9, .mixing = TOPO_MIX_MAX_DEGREE }, 1);
    ck_assert_double_eq_tol(slem_ok(g, TOPO_SOLVER_DENSE),
                            1.0 / 3.0 + 2.0 / 3.0 * cos(2.0 * PI / 9), TOL);
    topo_destroy(g);
}
END_TEST

/* Uniform weights 1/d_i are the random walk: on an odd ring A/2, with
 * eigenvalues cos(2 pi j/n), SLEM cos(pi/n); lazy alpha shifts them to
 * alpha + (1 - alpha) cos(2 pi j/n). */
START_TEST(test_uniform_ring)
{
    int n = 9;
    topo_graph *g = build_ok((topo_spec){ .kind = TOPO_RING, .n = n,
                                          .mixing = TOPO_MIX_UNIFORM }, 1);
    check_shape(g);
    ck_assert_int_eq(g->symmetric, 1);
    for (int i = 0; i < n; i++) {
        ck_assert_double_eq(g->self_w[i], 0.0);
        ck_assert_double_eq(g->w[g->off[i]], 0.5);
    }
    ck_assert_double_eq_tol(slem_ok(g, TOPO_SOLVER_DENSE), cos(PI / n), TOL);
    topo_destroy(g);

    double alpha = 0.25;
    n = 10;
    g = build_ok((topo_spec){ .kind = TOPO_RING, .n = n, .mixing = TOPO_MIX_UNIFORM,
                              .lazy_alpha = alpha }, 1);
    check_shape(g);
    ck_assert_double_eq(g->self_w[0], alpha);
    double best = 0.0;
    for (int j = 1; j < n; j++) {
        double ev = fabs(alpha + (1 - alpha) * cos(2.0 * PI * j / n));
        best = ev > best ? ev : best;
    }
    ck_assert_double_eq_tol(slem_ok(g, TOPO_SOLVER_DENSE), best, TOL);
    topo_destroy(g);
}
END_TEST

/* Lazy Metropolis-Hastings on the ring: alpha + (1 - alpha)(1/3 + 2/3 cos). */
START_TEST(test_lazy_metropolis)
{
    int n = 12;
    double alpha = 0.5;
    topo_graph *g = build_ok((topo_spec){ .kind = TOPO_RING, .n = n, .lazy_alpha = alpha }, 1);
    check_shape(g);
    ck_assert_double_eq_tol(g->w[0], (1 - alpha) / 3.0, TOL);
    ck_assert_double_eq_tol(slem_ok(g, TOPO_SOLVER_DENSE),
                            alpha + (1 - alpha) * (1.0 / 3.0 + 2.0 / 3.0 * cos(2.0 * PI / n)),
                            TOL);
    topo_destroy(g);
}
END_TEST

/* Uniform weights on an irregular graph: W is not symmetric but its
 * stationary distribution is proportional to the degree.  Lazy 1/2 on the
 * star: the walk's eigenvalues {1, -1, 0...} become {1, 0, 1/2...}. */
START_TEST(test_uniform_irregular)
{
    int n = 7;
    topo_graph *g = build_ok((topo_spec){ .kind = TOPO_STAR, .n = n,
                                          .mixing = TOPO_MIX_UNIFORM, .lazy_alpha = 0.5 }, 1);
    check_shape(g);
    ck_assert_int_eq(g->symmetric, 0);
    ck_assert_double_eq_tol(g->w[g->off[0]], 0.5 / (n - 1), TOL);
    ck_assert_double_eq_tol(g->w[g->off[1]], 0.5, TOL);
    /* pi W = pi with pi_i = d_i / 2m */
    double *pi = malloc((size_t)n * sizeof *pi), *W = malloc((size_t)n * n * sizeof *W);
    ck_assert(pi != NULL && W != NULL);
    for (int i = 0; i < n; i++)
        pi[i] = degree(g, i) / (2.0 * g->n_edges);
    topo_mixing_dense(g, W);
    for (int j = 0; j < n; j++) {
        double s = 0.0;
        for (int i = 0; i < n; i++)
            s += pi[i] * W[i * n + j];
        ck_assert_double_eq_tol(s, pi[j], TOL);
    }
    free(pi);
    free(W);
    ck_assert_double_eq_tol(slem_ok(g, TOPO_SOLVER_DENSE), 0.5, TOL);
    topo_destroy(g);
}
END_TEST

/* ---- consensus --------------------------------------------------------- */

/* Complete graph, MH weights 1/n: one round gives every node the average,
 * exactly when n is a power of two (1/n and the sums are exact). */
START_TEST(test_complete_one_round)
{
    static const int ns[] = { 2, 4, 8, 32, 5, 7 };
    for (size_t t = 0; t < sizeof ns / sizeof ns[0]; t++) {
        int n = ns[t];
        topo_graph *g = build_ok((topo_spec){ .kind = TOPO_COMPLETE, .n = n }, 1);
        double *x = malloc((size_t)n * sizeof *x), *y = malloc((size_t)n * sizeof *y);
        ck_assert(x != NULL && y != NULL);
        double sum = 0.0;
        for (int i = 0; i < n; i++) {
            x[i] = (double)((i * 37 + 11) % 101);
            sum += x[i];
        }
        topo_mix(g, x, y);
        for (int i = 0; i < n; i++) {
            if ((n & (n - 1)) == 0)
                ck_assert_msg(y[i] == sum / n, "n=%d node %d: %.17g != %.17g", n, i, y[i],
                              sum / n);
            else
                ck_assert_double_eq_tol(y[i], sum / n, 1e-13);
        }
        free(x);
        free(y);
        topo_destroy(g);
    }
}
END_TEST

static double dev_norm(const double *x, int n)
{
    double mean = 0.0, s = 0.0;
    for (int i = 0; i < n; i++)
        mean += x[i];
    mean /= n;
    for (int i = 0; i < n; i++)
        s += (x[i] - mean) * (x[i] - mean);
    return sqrt(s);
}

/* Starting from an eigenvector of the SLEM (known in closed form), the
 * distance to the average shrinks by exactly the SLEM each round. */
START_TEST(test_consensus_eigenvector_decay)
{
    struct { topo_spec spec; double lambda; } cases[] = {
        { { .kind = TOPO_HYPERCUBE, .n = 32 }, 4.0 / 6.0 },
        { { .kind = TOPO_TORUS2D, .n = 30, .rows = 5, .cols = 6 }, 0.0 },
        { { .kind = TOPO_RING_LATTICE, .n = 20, .k = 2 }, 0.0 },
    };
    /* torus: mode cos(2 pi c/6) has eigenvalue 1/5 + 2/5 + 2/5 cos(2 pi/6) = 0.8;
     * ring lattice: mode cos(2 pi i/20) has (1 + 2cos(2pi/20) + 2cos(4pi/20))/5 */
    cases[1].lambda = 0.2 + 0.4 + 0.4 * cos(2.0 * PI / 6);
    cases[2].lambda = (1.0 + 2.0 * cos(2.0 * PI / 20) + 2.0 * cos(4.0 * PI / 20)) / 5.0;
    for (size_t t = 0; t < sizeof cases / sizeof cases[0]; t++) {
        topo_graph *g = build_ok(cases[t].spec, 1);
        int n = g->n;
        ck_assert_double_eq_tol(slem_ok(g, TOPO_SOLVER_DENSE), cases[t].lambda, TOL);
        double *x = malloc((size_t)n * sizeof *x), *y = malloc((size_t)n * sizeof *y);
        ck_assert(x != NULL && y != NULL);
        for (int i = 0; i < n; i++) {
            if (t == 0)
                x[i] = (i & 1) ? -1.0 : 1.0;
            else if (t == 1)
                x[i] = cos(2.0 * PI * (i % 6) / 6);
            else
                x[i] = cos(2.0 * PI * i / 20);
        }
        double e0 = dev_norm(x, n);
        for (int r = 1; r <= 20; r++) {
            topo_mix(g, x, y);
            memcpy(x, y, (size_t)n * sizeof *x);
            ck_assert_msg(fabs(dev_norm(x, n) / e0 - pow(cases[t].lambda, r)) < 1e-12,
                          "%s round %d: %.17g vs %.17g", topo_kind_name(cases[t].spec.kind), r,
                          dev_norm(x, n) / e0, pow(cases[t].lambda, r));
        }
        free(x);
        free(y);
        topo_destroy(g);
    }
}
END_TEST

/* From a generic start on graphs without a closed form: every round the
 * distance to the average shrinks by at most the SLEM (W symmetric), and
 * after enough rounds by the SLEM itself (the slowest mode is left).  The
 * deviation is rescaled to norm 1 after each round, so that rounding in the
 * average never dominates however many rounds run. */
START_TEST(test_consensus_generic_decay)
{
    topo_spec specs[] = {
        { .kind = TOPO_RANDOM_REGULAR, .n = 40, .degree = 3 },
        { .kind = TOPO_ERDOS_RENYI, .n = 40, .p = 0.15 },
        { .kind = TOPO_WATTS_STROGATZ, .n = 40, .k = 2, .beta = 0.2 },
        { .kind = TOPO_BARABASI_ALBERT, .n = 40, .m = 2 },
        { .kind = TOPO_EXPONENTIAL, .n = 24 },
        { .kind = TOPO_STAR, .n = 9, .mixing = TOPO_MIX_MAX_DEGREE },
    };
    for (size_t t = 0; t < sizeof specs / sizeof specs[0]; t++) {
        topo_graph *g = build_ok(specs[t], 3);
        int n = g->n;
        double lambda = slem_ok(g, TOPO_SOLVER_DENSE);
        double *x = malloc((size_t)n * sizeof *x), *y = malloc((size_t)n * sizeof *y);
        ck_assert(x != NULL && y != NULL);
        for (int i = 0; i < n; i++)
            x[i] = sin(1.0 + 1.7 * i) + 0.3 * cos(0.37 * i * i);
        double ratio = 0.0;
        for (int r = 0; r < 3000; r++) {
            double e = dev_norm(x, n);
            topo_mix(g, x, y);
            double e1 = dev_norm(y, n), mean = 0.0;
            ratio = e1 / e;
            ck_assert_msg(ratio <= lambda + 1e-12, "%s: round %d shrinks by %.17g > %.17g",
                          topo_kind_name(specs[t].kind), r, ratio, lambda);
            for (int i = 0; i < n; i++)
                mean += y[i];
            mean /= n;
            for (int i = 0; i < n; i++)
                x[i] = (y[i] - mean) / e1;
        }
        ck_assert_msg(fabs(ratio - lambda) < 1e-9, "%s: last ratio %.17g, SLEM %.17g",
                      topo_kind_name(specs[t].kind), ratio, lambda);
        free(x);
        free(y);
        topo_destroy(g);
    }
}
END_TEST

/* ---- solvers ----------------------------------------------------------- */

START_TEST(test_arpack_matches_dense)
{
    topo_spec specs[] = {
        { .kind = TOPO_RANDOM_REGULAR, .n = 300, .degree = 5 },
        { .kind = TOPO_ERDOS_RENYI, .n = 400, .p = 0.02 },
        { .kind = TOPO_BARABASI_ALBERT, .n = 300, .m = 2, .mixing = TOPO_MIX_UNIFORM,
          .lazy_alpha = 0.3 },
        { .kind = TOPO_HYPERCUBE, .n = 256 },   /* +-(d-1)/(d+1) tie at the ends */
        { .kind = TOPO_TORUS2D, .n = 400, .rows = 20, .cols = 20 },
    };
    for (size_t t = 0; t < sizeof specs / sizeof specs[0]; t++) {
        topo_graph *g = build_ok(specs[t], 9);
        double d = slem_ok(g, TOPO_SOLVER_DENSE), a = slem_ok(g, TOPO_SOLVER_ARPACK);
        ck_assert_msg(fabs(a - d) < 1e-12, "%s: arpack %.17g, dense %.17g",
                      topo_kind_name(specs[t].kind), a, d);
        topo_destroy(g);
    }
}
END_TEST

/* ---- errors ------------------------------------------------------------ */

static const struct bad_case {
    topo_spec   spec;
    const char *msg;   /* DATA-relative file errors start with '/' */
} bad_cases[] = {
    { { .kind = TOPO_RING_LATTICE, .n = 6, .k = 3 },
      "ring_lattice graph needs 1 <= k <= (n - 1) / 2, got k=3, n=6" },
    { { .kind = TOPO_RING_LATTICE, .n = 6, .k = 0 },
      "ring_lattice graph needs 1 <= k <= (n - 1) / 2, got k=0, n=6" },
    { { .kind = TOPO_WATTS_STROGATZ, .n = 10, .k = 2, .beta = 1.5 },
      "watts_strogatz graph needs 0 <= beta <= 1, got beta=1.5" },
    { { .kind = TOPO_WATTS_STROGATZ, .n = 10, .k = 5, .beta = 0.5 },
      "watts_strogatz graph needs 1 <= k <= (n - 1) / 2, got k=5, n=10" },
    { { .kind = TOPO_TORUS3D, .n = 27, .rows = 3, .cols = 3, .layers = 2 },
      "torus3d graph needs rows * cols * layers == n, got rows=3, cols=3, layers=2, n=27" },
    { { .kind = TOPO_TORUS3D, .n = 27, .rows = 3, .cols = 0, .layers = 3 },
      "torus3d graph needs rows, cols and layers >= 1, got rows=3, cols=0, layers=3" },
    { { .kind = TOPO_HYPERCUBE, .n = 12 }, "hypercube graph needs n a power of two, got n=12" },
    { { .kind = TOPO_BARABASI_ALBERT, .n = 10, .m = 0 },
      "barabasi_albert graph needs 1 <= m < n, got m=0, n=10" },
    { { .kind = TOPO_BARABASI_ALBERT, .n = 10, .m = 10 },
      "barabasi_albert graph needs 1 <= m < n, got m=10, n=10" },
    { { .kind = TOPO_STAR, .n = 0 }, "star graph needs n >= 1, got n=0" },
    { { .kind = TOPO_EDGE_LIST, .n = 4 }, "edge_list graph needs a file name" },
    { { .kind = TOPO_RING, .n = 8, .lazy_alpha = 1.0 }, "lazy_alpha must be in [0, 1), got 1" },
    { { .kind = TOPO_RING, .n = 8, .lazy_alpha = -0.1 },
      "lazy_alpha must be in [0, 1), got -0.1" },
    { { .kind = TOPO_RING, .n = 8, .mixing = (topo_mixing)5 },
      "unknown mixing 5 (expected one of: metropolis_hastings, max_degree, uniform)" },
    { { .kind = TOPO_RING, .n = 8, .mixing = TOPO_MIX_UNIFORM },
      "uniform mixing on the ring graph with n=8 oscillates: the graph is bipartite and no "
      "node keeps weight on itself, so the mixing matrix has eigenvalue -1 and consensus "
      "never converges; set lazy_alpha > 0 or use metropolis_hastings" },
    { { .kind = TOPO_STAR, .n = 5, .mixing = TOPO_MIX_UNIFORM },
      "uniform mixing on the star graph with n=5 oscillates: the graph is bipartite and no "
      "node keeps weight on itself, so the mixing matrix has eigenvalue -1 and consensus "
      "never converges; set lazy_alpha > 0 or use metropolis_hastings" },
    { { .kind = TOPO_EDGE_LIST, .n = 4, .path = DATA "split4.txt" },
      "edge_list graph with n=4 from " DATA "split4.txt is disconnected (2 components); "
      "node 2 cannot reach node 0" },
    { { .kind = TOPO_EDGE_LIST, .n = 5, .path = DATA "path4.txt" },
      "edge_list graph with n=5 from " DATA "path4.txt is disconnected (2 components); "
      "node 4 cannot reach node 0" },
    { { .kind = TOPO_EDGE_LIST, .n = 4, .path = DATA "bad_fields.txt" },
      DATA "bad_fields.txt:2: error: expected 2 node numbers, got '1 2 3'" },
    { { .kind = TOPO_EDGE_LIST, .n = 4, .path = DATA "bad_text.txt" },
      DATA "bad_text.txt:2: error: expected 2 node numbers, got '1 x'" },
    { { .kind = TOPO_EDGE_LIST, .n = 4, .path = DATA "bad_negative.txt" },
      DATA "bad_negative.txt:2: error: expected 2 node numbers, got '-1 2'" },
    { { .kind = TOPO_EDGE_LIST, .n = 4, .path = DATA "bad_range.txt" },
      DATA "bad_range.txt:2: error: node 5 out of range (nodes are 0..3)" },
    { { .kind = TOPO_EDGE_LIST, .n = 4, .path = DATA "bad_loop.txt" },
      DATA "bad_loop.txt:2: error: self-loop on node 2" },
    { { .kind = TOPO_EDGE_LIST, .n = 4, .path = DATA "bad_twice.txt" },
      DATA "bad_twice.txt:3: error: edge given twice (first on line 2)" },
    { { .kind = TOPO_EDGE_LIST, .n = 4, .path = DATA "missing.txt" },
      DATA "missing.txt: error: cannot open: No such file or directory" },
};

START_TEST(test_bad_spec)
{
    const struct bad_case *bc = &bad_cases[_i];
    char err[1024];
    memset(err, 'x', sizeof err);
    err[sizeof err - 1] = '\0';
    topo_graph *g = topo_build(&bc->spec, 1, err, sizeof err);
    ck_assert_ptr_null(g);
    ck_assert_str_eq(err, bc->msg);
}
END_TEST

/* ---- writers ----------------------------------------------------------- */

START_TEST(test_write)
{
    topo_graph *g = build_ok((topo_spec){ .kind = TOPO_STAR, .n = 3 }, 1);
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    ck_assert_ptr_nonnull(f);
    ck_assert_int_eq(topo_write_csv(g, f), 0);
    fclose(f);
    ck_assert_str_eq(buf, "source,target,weight\n"
                          "0,1,0.33333333333333331\n"
                          "0,2,0.33333333333333331\n");
    free(buf);
    f = open_memstream(&buf, &len);
    ck_assert_ptr_nonnull(f);
    ck_assert_int_eq(topo_write_dot(g, "a \"star\"", f), 0);
    fclose(f);
    ck_assert_str_eq(buf, "graph \"a \\\"star\\\"\" {\n"
                          "  node [shape=circle];\n"
                          "  0;\n  1;\n  2;\n"
                          "  0 -- 1 [label=\"0.3333\"];\n"
                          "  0 -- 2 [label=\"0.3333\"];\n"
                          "}\n");
    free(buf);
    topo_destroy(g);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("topo_gen");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, test_ring_lattice);
    tcase_add_test(tc, test_torus3d);
    tcase_add_test(tc, test_hypercube);
    tcase_add_test(tc, test_star);
    tcase_add_test(tc, test_binary_tree);
    tcase_add_test(tc, test_exponential);
    tcase_add_test(tc, test_watts_strogatz);
    tcase_add_test(tc, test_barabasi_albert);
    tcase_add_test(tc, test_edge_list_file);
    tcase_add_test(tc, test_mixing_names);
    tcase_add_test(tc, test_max_degree);
    tcase_add_test(tc, test_uniform_ring);
    tcase_add_test(tc, test_lazy_metropolis);
    tcase_add_test(tc, test_uniform_irregular);
    tcase_add_test(tc, test_complete_one_round);
    tcase_add_test(tc, test_consensus_eigenvector_decay);
    tcase_add_test(tc, test_consensus_generic_decay);
    tcase_add_test(tc, test_arpack_matches_dense);
    tcase_add_loop_test(tc, test_bad_spec, 0, (int)(sizeof bad_cases / sizeof bad_cases[0]));
    tcase_add_test(tc, test_write);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    SRunner *sr = srunner_create(suite());
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
