/* test_topo_learn.c -- Check suite for the learned topology (STL-FW,
 * topologies/topo_learn.c): the hand case of four nodes with two labels
 * split in pairs (one step of size 1/2 pairs every node with one of the
 * other label: g goes from 1/2 + 3 lambda/4 to lambda/4); every iterate
 * doubly stochastic to 1e-12, nonnegative, within the degree budget, with
 * the objective recomputed here strictly decreasing; each step equal to
 * the step worked here with a brute-force assignment (all n! permutations)
 * and the closed-form line search; the budget stop (one more step would
 * exceed it); the graph topo_build makes from W (W's own weights, rows and
 * columns summing to 1); the SLEM of a nonsymmetric doubly stochastic W
 * against its closed form; and the errors.
 */
#include "topo.h"

#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The objective, written again here from its definition (Eq. 8). */
static double g_ref(const double *W, const double *pi, int n, int K, double lambda)
{
    double het = 0.0, reg = 0.0;
    for (int k = 0; k < K; k++) {
        double mean = 0.0;
        for (int j = 0; j < n; j++)
            mean += pi[j * K + k];
        mean /= n;
        for (int i = 0; i < n; i++) {
            double r = -mean;
            for (int j = 0; j < n; j++)
                r += W[i * n + j] * pi[j * K + k];
            het += r * r;
        }
    }
    for (int i = 0; i < n * n; i++) {
        double d = W[i] - 1.0 / n;
        reg += d * d;
    }
    return (het + lambda * reg) / n;
}

/* Label proportions of n nodes over K labels from a fixed LCG, skewed so
 * that nodes differ (a few labels dominate each row). */
static void make_props(double *pi, int n, int K, unsigned seed)
{
    unsigned x = seed * 2654435761u + 12345u;
    for (int i = 0; i < n; i++) {
        double sum = 0.0;
        for (int k = 0; k < K; k++) {
            x = x * 1103515245u + 12345u;
            double u = (double)((x >> 8) & 0xffff) / 65536.0;
            double v = u * u * u * u;   /* skewed */
            pi[i * K + k] = v;
            sum += v;
        }
        for (int k = 0; k < K; k++)
            pi[i * K + k] /= sum;
    }
}

static topo_learn learn_ok(const double *pi, int n, int K, double lambda, int budget, int iters)
{
    topo_learn l;
    char err[256] = "";
    ck_assert_msg(topo_learn_stlfw(pi, n, K, lambda, budget, iters, &l, err, sizeof err) == 0,
                  "stlfw failed: %s", err);
    return l;
}

static int undirected_degree(const double *W, int n)
{
    int most = 0;
    for (int i = 0; i < n; i++) {
        int d = 0;
        for (int j = 0; j < n; j++)
            d += j != i && (W[i * n + j] > 0.0 || W[j * n + i] > 0.0);
        most = d > most ? d : most;
    }
    return most;
}

START_TEST(test_hand_pairs)
{
    /* nodes 0, 1 hold label 0, nodes 2, 3 label 1 */
    const double pi[] = { 1, 0, 1, 0, 0, 1, 0, 1 };
    const double lambda = 0.1;
    topo_learn l = learn_ok(pi, 4, 2, lambda, 3, 1);
    ck_assert_int_eq(l.iters, 1);
    /* g(I) = (1/4) 4 (1/4 + 1/4) + (lambda/4)(4 (3/4)^2 + 12 (1/4)^2) */
    ck_assert_double_eq_tol(l.objective[0], 0.5 + 0.75 * lambda, 1e-15);
    /* along I -> P (P with no fixed point, each node to the other label):
     * 2 (1/2 - gamma)^2 + lambda ((3/4 - gamma)^2 + (gamma - 1/4)^2 + 1/8),
     * minimal at gamma = 1/2 for every lambda, where it is lambda / 4 */
    ck_assert_double_eq_tol(l.gamma[0], 0.5, 1e-15);
    ck_assert_double_eq_tol(l.objective[1], lambda / 4, 1e-15);
    ck_assert_double_eq_tol(g_ref(l.W, pi, 4, 2, lambda), lambda / 4, 1e-15);
    for (int i = 0; i < 4; i++) {
        ck_assert_double_eq_tol(l.W[i * 4 + i], 0.5, 1e-15);
        int other = 0;
        for (int j = 0; j < 4; j++)
            if (j != i && l.W[i * 4 + j] > 0.0) {
                ck_assert_int_ne(j / 2, i / 2);   /* complementary label */
                ck_assert_double_eq_tol(l.W[i * 4 + j], 0.5, 1e-15);
                other++;
            }
        ck_assert_int_eq(other, 1);
    }
    topo_learn_fini(&l);
}
END_TEST

/* Two nodes with complementary labels: one step of size 1/2 reaches
 * W = J, where g = 0 and the gradient vanishes: the gap is 0 and it stops
 * as optimal. */
START_TEST(test_optimal_stop)
{
    const double pi[] = { 1, 0, 0, 1 };
    topo_learn l = learn_ok(pi, 2, 2, 0.1, 1, TOPO_LEARN_MAX_ITER);
    ck_assert_int_eq(l.iters, 1);
    ck_assert_str_eq(l.stop, "optimal");
    ck_assert_double_eq(l.gamma[0], 0.5);
    ck_assert_double_eq(l.objective[0], 0.5 + 0.1 / 2 * 1.0);   /* 1/2 + (lambda/2)(4/4) */
    ck_assert_double_eq(l.objective[1], 0.0);
    for (int e = 0; e < 4; e++)
        ck_assert_double_eq(l.W[e], 0.5);
    topo_learn_fini(&l);
}
END_TEST

/* Six nodes, one class each of three, two per class.  Step 1 (by hand as
 * above): gamma = 1/2 for every lambda, g from 2/3 + 5 lambda/6 to 1/6 +
 * lambda/3.  Step 2: gamma = 1/3 gives every node 1/3 of itself and of one
 * node of each other class, so W PI = J PI and g = (lambda/6) 6 (3 (1/6)^2
 * + 3 (1/6)^2) = lambda/6. */
START_TEST(test_hand_three_classes)
{
    double pi[18] = { 0 };
    for (int i = 0; i < 6; i++)
        pi[i * 3 + i / 2] = 1.0;
    topo_learn l = learn_ok(pi, 6, 3, 0.1, 4, 2);
    ck_assert_int_eq(l.iters, 2);
    ck_assert_double_eq_tol(l.objective[0], 2.0 / 3.0 + 0.5 / 6.0, 1e-15);
    ck_assert_double_eq_tol(l.objective[1], 1.0 / 6.0 + 0.1 / 3.0, 1e-15);
    ck_assert_double_eq_tol(l.objective[2], 0.1 / 6.0, 1e-15);
    ck_assert_double_eq_tol(l.gamma[0], 0.5, 1e-15);
    ck_assert_double_eq_tol(l.gamma[1], 1.0 / 3.0, 1e-15);
    for (int i = 0; i < 6; i++) {
        int seen[3] = { 0 };
        for (int j = 0; j < 6; j++)
            if (l.W[i * 6 + j] > 0.0) {
                ck_assert_double_eq_tol(l.W[i * 6 + j], 1.0 / 3.0, 1e-15);
                seen[j / 2]++;
            }
        ck_assert_int_eq(seen[0] + seen[1] + seen[2], 3);
        ck_assert(seen[0] == 1 && seen[1] == 1 && seen[2] == 1);
    }
    topo_learn_fini(&l);
}
END_TEST

/* Every iterate: run with max_iter = 0, 1, ... (the method is
 * deterministic, so the run stopped after l steps holds W_l). */
static void check_iterates(int n, int K, double lambda, int budget, unsigned seed)
{
    double *pi = malloc((size_t)n * K * sizeof *pi);
    make_props(pi, n, K, seed);
    topo_learn full = learn_ok(pi, n, K, lambda, budget, TOPO_LEARN_MAX_ITER);
    ck_assert_int_ge(full.iters, 1);
    double prev = INFINITY;
    for (int l = 0; l <= full.iters; l++) {
        topo_learn t = learn_ok(pi, n, K, lambda, budget, l);
        ck_assert_int_eq(t.iters, l);
        double gl = g_ref(t.W, pi, n, K, lambda);
        ck_assert_double_eq_tol(t.objective[l], gl, 1e-12);
        ck_assert_double_eq_tol(full.objective[l], gl, 1e-12);
        ck_assert_msg(gl < prev, "step %d: g %.17g not below %.17g", l, gl, prev);
        prev = gl;
        for (int i = 0; i < n; i++) {
            double row = 0.0, col = 0.0;
            int nz = 0;
            for (int j = 0; j < n; j++) {
                ck_assert(t.W[i * n + j] >= 0.0);
                nz += t.W[i * n + j] > 0.0;
                row += t.W[i * n + j];
                col += t.W[j * n + i];
            }
            ck_assert_double_eq_tol(row, 1.0, 1e-12);
            ck_assert_double_eq_tol(col, 1.0, 1e-12);
            ck_assert_int_le(nz, budget + 1);
        }
        ck_assert_int_le(undirected_degree(t.W, n), budget);
        ck_assert_int_eq(t.degree, undirected_degree(t.W, n));
        topo_learn_fini(&t);
    }
    topo_learn_fini(&full);
    free(pi);
}

START_TEST(test_iterates)
{
    check_iterates(12, 5, 0.1, 6, 1);
    check_iterates(20, 10, 0.1, 8, 2);
    check_iterates(9, 3, 1.0, 8, 3);
}
END_TEST

/* ---- one step worked here: brute-force assignment, closed-form step --- */

static double best_cost;
static int best_perm[8], cur_perm[8], used_col[8];

static void search(const double *G, int n, int i, double cost)
{
    if (i == n) {
        if (cost < best_cost) {
            best_cost = cost;
            memcpy(best_perm, cur_perm, sizeof best_perm);
        }
        return;
    }
    for (int j = 0; j < n; j++)
        if (!used_col[j]) {
            used_col[j] = 1;
            cur_perm[i] = j;
            search(G, n, i + 1, cost + G[i * n + j]);
            used_col[j] = 0;
        }
}

/* W_{l+1} from W_l: gradient, the permutation perm (checked to cost no
 * more than the best of all n!), exact line search clipped to [0, 1]. */
static void step_ref(const double *W, const double *pi, int n, int K, double lambda,
                     const int *perm, double *next)
{
    double G[64], R[64 * 8];
    for (int i = 0; i < n; i++)
        for (int k = 0; k < K; k++) {
            double mean = 0.0, wp = 0.0;
            for (int j = 0; j < n; j++) {
                mean += pi[j * K + k] / n;
                wp += W[i * n + j] * pi[j * K + k];
            }
            R[i * K + k] = wp - mean;
        }
    for (int i = 0; i < n; i++)
        for (int j = 0; j < n; j++) {
            double s = 0.0;
            for (int k = 0; k < K; k++)
                s += R[i * K + k] * pi[j * K + k];
            G[i * n + j] = 2.0 / n * (s + lambda * (W[i * n + j] - 1.0 / n));
        }
    best_cost = INFINITY;
    memset(used_col, 0, sizeof used_col);
    search(G, n, 0, 0.0);
    /* the step's permutation: the library's when it costs the least (ties
     * between permutations do occur, to the last bit) */
    double lib_cost = 0.0;
    for (int i = 0; i < n; i++)
        lib_cost += G[i * n + perm[i]];
    ck_assert_msg(lib_cost <= best_cost + 1e-12, "assignment costs %.17g, the best %.17g",
                  lib_cost, best_cost);
    memcpy(best_perm, perm, (size_t)n * sizeof *perm);
    /* f(W + g D) = f(W) + g <G, D> + g^2 (||D PI||^2 + lambda ||D||^2) / n */
    double lin = 0.0, quad = 0.0;
    for (int i = 0; i < n; i++) {
        for (int j = 0; j < n; j++) {
            double d = (best_perm[i] == j) - W[i * n + j];
            lin += G[i * n + j] * d;
            quad += lambda * d * d;
        }
        for (int k = 0; k < K; k++) {
            double mean = 0.0;
            for (int j = 0; j < n; j++)
                mean += pi[j * K + k] / n;
            double dp = pi[best_perm[i] * K + k] - (R[i * K + k] + mean);   /* (D PI)_ik */
            quad += dp * dp;
        }
    }
    double gamma = -lin * n / (2.0 * quad);
    gamma = gamma > 1.0 ? 1.0 : gamma;
    for (int i = 0; i < n; i++)
        for (int j = 0; j < n; j++)
            next[i * n + j] = (1.0 - gamma) * W[i * n + j] + gamma * (best_perm[i] == j);
}

START_TEST(test_steps_brute_force)
{
    static const int ns[] = { 5, 6, 7 };
    for (int c = 0; c < 3; c++) {
        int n = ns[c], K = 4;
        double pi[7 * 4], next[64];
        make_props(pi, n, K, 10 + (unsigned)c);
        topo_learn full = learn_ok(pi, n, K, 0.1, n - 1, 6);
        ck_assert_int_ge(full.iters, 3);
        for (int l = 0; l < full.iters; l++) {
            topo_learn a = learn_ok(pi, n, K, 0.1, n - 1, l);
            topo_learn b = learn_ok(pi, n, K, 0.1, n - 1, l + 1);
            /* the permutation the step took: where W_{l+1} - (1 - g) W_l is g */
            int perm[8];
            double gm = b.gamma[l];
            ck_assert(gm > 0.0 && gm <= 1.0);
            for (int i = 0; i < n; i++) {
                perm[i] = -1;
                for (int j = 0; j < n; j++)
                    if (fabs(b.W[i * n + j] - (1.0 - gm) * a.W[i * n + j] - gm) < 1e-9)
                        perm[i] = j;
                ck_assert_int_ge(perm[i], 0);
            }
            step_ref(a.W, pi, n, K, 0.1, perm, next);
            for (int e = 0; e < n * n; e++)
                ck_assert_msg(fabs(b.W[e] - next[e]) <= 1e-12, "n=%d step %d entry %d: %.17g, "
                              "worked here %.17g", n, l + 1, e, b.W[e], next[e]);
            topo_learn_fini(&a);
            topo_learn_fini(&b);
        }
        topo_learn_fini(&full);
    }
}
END_TEST

START_TEST(test_budget_stop)
{
    const int n = 16, K = 4;
    double pi[16 * 4];
    make_props(pi, n, K, 5);
    for (int d = 2; d <= 8; d += 2) {
        topo_learn l = learn_ok(pi, n, K, 0.1, d, TOPO_LEARN_MAX_ITER);
        ck_assert_str_eq(l.stop, "budget");
        ck_assert_int_le(l.degree, d);
        /* without the budget the next step exists and exceeds d */
        topo_learn more = learn_ok(pi, n, K, 0.1, n - 1, l.iters + 1);
        ck_assert_int_eq(more.iters, l.iters + 1);
        ck_assert_int_gt(more.degree, d);
        topo_learn_fini(&more);
        topo_learn_fini(&l);
    }
}
END_TEST

START_TEST(test_build_graph)
{
    const int n = 24, K = 6, d = 8;
    double pi[24 * 6];
    make_props(pi, n, K, 7);
    topo_spec spec = { .kind = TOPO_LEARNED, .n = n, .degree = d, .label_props = pi,
                       .n_labels = K, .lambda = 0.1 };
    char err[512] = "";
    topo_graph *g = topo_build(&spec, 1, err, sizeof err);
    ck_assert_msg(g != NULL, "%s", err);
    topo_learn l = learn_ok(pi, n, K, 0.1, d, TOPO_LEARN_MAX_ITER);
    ck_assert_int_eq(g->learned, 1);
    ck_assert_int_eq(g->learn_iters, l.iters);
    for (int s = 0; s <= l.iters; s++)
        ck_assert_double_eq(g->learn_objective[s], l.objective[s]);
    double *W = malloc((size_t)n * n * sizeof *W);
    topo_mixing_dense(g, W);
    for (int e = 0; e < n * n; e++)
        ck_assert_double_eq(W[e], l.W[e]);   /* W itself, not Metropolis on its support */
    for (int i = 0; i < n; i++)
        ck_assert_int_le((int)(g->off[i + 1] - g->off[i]), d);
    /* one round of x <- W x keeps the sum (doubly stochastic) */
    double x[24], y[24], sx = 0.0, sy = 0.0;
    for (int i = 0; i < n; i++)
        sx += x[i] = (double)(i * i % 7);
    topo_mix(g, x, y);
    for (int i = 0; i < n; i++)
        sy += y[i];
    ck_assert_double_eq_tol(sy, sx, 1e-12);
    topo_stats st;
    ck_assert_int_eq(topo_compute_stats(g, &st), 0);
    ck_assert_int_eq(st.spectral_ok, 1);
    ck_assert(st.lambda2 > 0.0 && st.lambda2 < 1.0);
    free(W);
    topo_learn_fini(&l);
    topo_destroy(g);
}
END_TEST

/* W = (I + C) / 2 with C the cyclic shift: eigenvalues (1 + w^k) / 2,
 * moduli |cos(pi k / n)|, so the SLEM is cos(pi / n).  Built by hand as a
 * learned, nonsymmetric graph. */
START_TEST(test_slem_nonsymmetric)
{
    const int n = 7;
    topo_graph g = { 0 };
    size_t off[8];
    int nbr[14];
    double w[14], self[7];
    g.n = n;
    g.n_edges = 7;
    g.off = off;
    g.nbr = nbr;
    g.w = w;
    g.self_w = self;
    g.learned = 1;
    for (int i = 0; i < n; i++) {
        int a = (i + n - 1) % n, b = (i + 1) % n;   /* i takes from i + 1 */
        off[i] = (size_t)(2 * i);
        nbr[2 * i] = a < b ? a : b;
        nbr[2 * i + 1] = a < b ? b : a;
        w[2 * i] = nbr[2 * i] == b ? 0.5 : 0.0;
        w[2 * i + 1] = nbr[2 * i + 1] == b ? 0.5 : 0.0;
        self[i] = 0.5;
    }
    off[n] = (size_t)(2 * n);
    double l = 0.0;
    ck_assert_int_eq(topo_slem(&g, TOPO_SOLVER_DENSE, &l), 0);
    ck_assert_double_eq_tol(l, cos(3.14159265358979323846 / n), 1e-12);
}
END_TEST

START_TEST(test_errors)
{
    double pi[4] = { 1, 0, 0, 1 };
    char err[512];
    topo_learn l;
    ck_assert_int_eq(topo_learn_stlfw(pi, 2, 2, 0.0, 1, 10, &l, err, sizeof err), -1);
    ck_assert_str_eq(err, "learned graph needs 1 <= n <= 256, K >= 1, lambda > 0 and degree >= "
                     "1, got n=2, K=2, lambda=0, degree=1");
    topo_spec spec = { .kind = TOPO_LEARNED, .n = 2, .degree = 1, .lambda = 0.1 };
    ck_assert(topo_build(&spec, 1, err, sizeof err) == NULL);
    ck_assert_str_eq(err, "learned graph needs the nodes' label proportions (a data set with "
                     "class labels)");
    spec.label_props = pi;
    spec.n_labels = 2;
    spec.degree = 2;
    ck_assert(topo_build(&spec, 1, err, sizeof err) == NULL);
    ck_assert_str_eq(err, "learned graph needs 1 <= degree < n and lambda > 0, got degree=2, "
                     "n=2, lambda=0.1");
    spec.n = 300;
    ck_assert(topo_build(&spec, 1, err, sizeof err) == NULL);
    ck_assert_str_eq(err, "learned graph needs n <= 256, got n=300");
    /* four nodes, two labels, budget 1: two pairs, each balanced, apart */
    double four[] = { 1, 0, 1, 0, 0, 1, 0, 1 };
    topo_spec s4 = { .kind = TOPO_LEARNED, .n = 4, .degree = 1, .label_props = four,
                     .n_labels = 2, .lambda = 0.1 };
    ck_assert(topo_build(&s4, 1, err, sizeof err) == NULL);
    ck_assert_str_eq(err, "learned graph with n=4, degree=1, lambda=0.1 is disconnected "
                     "(2 components); raise degree");
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("topo_learn");
    TCase *tc = tcase_create("stlfw");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, test_hand_pairs);
    tcase_add_test(tc, test_hand_three_classes);
    tcase_add_test(tc, test_optimal_stop);
    tcase_add_test(tc, test_iterates);
    tcase_add_test(tc, test_steps_brute_force);
    tcase_add_test(tc, test_budget_stop);
    tcase_add_test(tc, test_build_graph);
    tcase_add_test(tc, test_slem_nonsymmetric);
    tcase_add_test(tc, test_errors);
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
