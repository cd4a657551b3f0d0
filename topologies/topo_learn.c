/* topo_learn.c -- learned topologies: STL-FW, the Sparse Topology Learning
 * by Frank-Wolfe of Le Bars, Bellet, Tommasi, Lavoie and Kermarrec
 * ("Refined Convergence and Topology Learning for Decentralized SGD with
 * Heterogeneous Data", AISTATS 2023, Algorithm 2 and Eq. 8).  From the
 * n x K matrix PI of the nodes' label proportions it minimises the
 * neighbourhood heterogeneity
 *     g(W) = (1/n) ||W PI - J PI||_F^2 + (lambda/n) ||W - J||_F^2,
 *     J = 1 1^T / n,
 * over the doubly stochastic matrices (the Birkhoff polytope), starting at
 * W_0 = I.  Step l: the gradient G = (2/n) ((W PI - J PI) PI^T +
 * lambda (W - J)); the linear minimisation oracle is the permutation
 * matrix P minimising <G, P>, a linear assignment problem solved by
 * igraph's weighted bipartite matching on K_{n,n} (weights 2 - normalised
 * cost, all positive, so the maximum-weight matching is perfect and
 * minimises the cost); the step is the exact line search of the quadratic,
 * gamma = -<G, P - W> n / (2 (||(P - W) PI||^2 + lambda ||P - W||^2))
 * clipped to [0, 1].  Each step adds at most one out- and one
 * in-neighbour per node.
 *
 * It stops at the first of: the next iterate's support would give some
 * node more than `budget` neighbours (counted undirected: j is i's
 * neighbour when W_ij > 0 or W_ji > 0, the links D-PSGD exchanges on);
 * the Frank-Wolfe gap <G, W - P> is not positive (W is optimal); the
 * objective, recomputed, does not decrease (rounding at the optimum);
 * max_iter steps.  So the objective strictly decreases at every accepted
 * step.  It also turns a learned W into the neighbour lists and weights of
 * a topo_graph (topo_build.c calls it); it does not check connectivity,
 * compute spectra or know where the proportions come from.
 */
#include "topo.h"
#include "topo_igraph.h"
#include "topo_internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

double topo_learn_objective(const double *W, const double *pi, int n, int K, double lambda)
{
    double het = 0.0, reg = 0.0, inv = 1.0 / n;
    for (int i = 0; i < n; i++) {
        for (int k = 0; k < K; k++) {
            double wp = 0.0, jp = 0.0;
            for (int j = 0; j < n; j++) {
                wp += W[(size_t)i * n + j] * pi[(size_t)j * K + k];
                jp += pi[(size_t)j * K + k];
            }
            double r = wp - jp * inv;
            het += r * r;
        }
        for (int j = 0; j < n; j++) {
            double d = W[(size_t)i * n + j] - inv;
            reg += d * d;
        }
    }
    return het * inv + lambda * inv * reg;
}

/* Workspace of one run: the complete bipartite graph K_{n,n} for the
 * oracle (edge i * n + j joins row i to column j), built once. */
typedef struct fw_ws {
    int n, K;
    const double *pi;
    double lambda;
    double *pibar;   /* K: column means of PI */
    double *R;       /* n K: W PI - 1 pibar^T */
    double *G;       /* n n: gradient */
    double *C;       /* n n: candidate iterate */
    int    *perm;    /* n: the oracle's permutation, row i -> column perm[i] */
    igraph_t graph;
    igraph_vector_bool_t types;
    igraph_vector_t weights;
    igraph_vector_int_t matching;
    int have_graph;
} fw_ws;

static void residual(fw_ws *w, const double *W)
{
    int n = w->n, K = w->K;
    for (int i = 0; i < n; i++)
        for (int k = 0; k < K; k++) {
            double s = 0.0;
            for (int j = 0; j < n; j++)
                s += W[(size_t)i * n + j] * w->pi[(size_t)j * K + k];
            w->R[(size_t)i * K + k] = s - w->pibar[k];
        }
}

static void gradient(fw_ws *w, const double *W)
{
    int n = w->n, K = w->K;
    double inv = 1.0 / n;
    for (int i = 0; i < n; i++)
        for (int j = 0; j < n; j++) {
            double s = 0.0;
            for (int k = 0; k < K; k++)
                s += w->R[(size_t)i * K + k] * w->pi[(size_t)j * K + k];
            w->G[(size_t)i * n + j] = 2.0 * inv * (s + w->lambda * (W[(size_t)i * n + j] - inv));
        }
}

/* The permutation minimising sum_i G[i][perm[i]].  0, or an igraph code. */
static igraph_error_t oracle(fw_ws *w)
{
    int n = w->n;
    size_t nn = (size_t)n * n;
    double lo = w->G[0], hi = w->G[0];
    for (size_t e = 1; e < nn; e++) {
        if (w->G[e] < lo)
            lo = w->G[e];
        if (w->G[e] > hi)
            hi = w->G[e];
    }
    double span = hi > lo ? hi - lo : 1.0;
    for (size_t e = 0; e < nn; e++)
        VECTOR(w->weights)[e] = 2.0 - (w->G[e] - lo) / span;
    igraph_integer_t size = 0;
    igraph_real_t weight = 0.0;
    igraph_error_t rc = igraph_maximum_bipartite_matching(&w->graph, &w->types, &size, &weight,
                                                          &w->matching, &w->weights, 1e-13);
    if (rc != IGRAPH_SUCCESS)
        return rc;
    if (size != n)
        return IGRAPH_FAILURE;   /* positive weights on K_{n,n}: never */
    for (int i = 0; i < n; i++)
        w->perm[i] = (int)VECTOR(w->matching)[i] - n;
    return IGRAPH_SUCCESS;
}

/* Largest number of undirected neighbours in the support of W. */
static int support_degree(const double *W, int n)
{
    int most = 0;
    for (int i = 0; i < n; i++) {
        int d = 0;
        for (int j = 0; j < n; j++)
            if (j != i && (W[(size_t)i * n + j] > 0.0 || W[(size_t)j * n + i] > 0.0))
                d++;
        if (d > most)
            most = d;
    }
    return most;
}

static igraph_error_t ws_init(fw_ws *w, const double *pi, int n, int K, double lambda)
{
    memset(w, 0, sizeof *w);
    w->n = n;
    w->K = K;
    w->pi = pi;
    w->lambda = lambda;
    size_t nn = (size_t)n * n, nk = (size_t)n * K;
    w->pibar = calloc((size_t)K, sizeof *w->pibar);
    w->R = malloc(nk * sizeof *w->R);
    w->G = malloc(nn * sizeof *w->G);
    w->C = malloc(nn * sizeof *w->C);
    w->perm = malloc((size_t)n * sizeof *w->perm);
    if (!w->pibar || !w->R || !w->G || !w->C || !w->perm)
        return IGRAPH_ENOMEM;
    for (int j = 0; j < n; j++)
        for (int k = 0; k < K; k++)
            w->pibar[k] += pi[(size_t)j * K + k];
    for (int k = 0; k < K; k++)
        w->pibar[k] /= n;
    igraph_vector_int_t edges;
    igraph_error_t rc = igraph_vector_int_init(&edges, (igraph_integer_t)(2 * nn));
    if (rc != IGRAPH_SUCCESS)
        return rc;
    for (int i = 0; i < n; i++)
        for (int j = 0; j < n; j++) {
            size_t e = (size_t)i * n + j;
            VECTOR(edges)[2 * e] = i;
            VECTOR(edges)[2 * e + 1] = n + j;
        }
    rc = igraph_create(&w->graph, &edges, 2 * n, IGRAPH_UNDIRECTED);
    igraph_vector_int_destroy(&edges);
    if (rc != IGRAPH_SUCCESS)
        return rc;
    if ((rc = igraph_vector_bool_init(&w->types, 2 * n)) != IGRAPH_SUCCESS)
        goto out_graph;
    if ((rc = igraph_vector_init(&w->weights, (igraph_integer_t)nn)) != IGRAPH_SUCCESS)
        goto out_types;
    if ((rc = igraph_vector_int_init(&w->matching, 0)) != IGRAPH_SUCCESS)
        goto out_weights;
    for (int j = 0; j < n; j++)
        VECTOR(w->types)[n + j] = true;
    w->have_graph = 1;
    return IGRAPH_SUCCESS;
out_weights:
    igraph_vector_destroy(&w->weights);
out_types:
    igraph_vector_bool_destroy(&w->types);
out_graph:
    igraph_destroy(&w->graph);
    return rc;
}

static void ws_fini(fw_ws *w)
{
    if (w->have_graph) {
        igraph_destroy(&w->graph);
        igraph_vector_bool_destroy(&w->types);
        igraph_vector_destroy(&w->weights);
        igraph_vector_int_destroy(&w->matching);
    }
    free(w->perm);
    free(w->C);
    free(w->G);
    free(w->R);
    free(w->pibar);
}

int topo_learn_stlfw(const double *pi, int n, int K, double lambda, int budget, int max_iter,
                     topo_learn *out, char *err, size_t err_size)
{
    memset(out, 0, sizeof *out);
    if (n < 1 || n > TOPO_LEARN_MAX_NODES || K < 1 || !(lambda > 0.0) || !isfinite(lambda)
        || budget < 1 || max_iter < 0) {
        topo_i_set_error(err, err_size, "learned graph needs 1 <= n <= %d, K >= 1, lambda > 0 "
                         "and degree >= 1, got n=%d, K=%d, lambda=%g, degree=%d",
                         TOPO_LEARN_MAX_NODES, n, K, lambda, budget);
        return -1;
    }
    size_t nn = (size_t)n * n;
    out->n = n;
    out->K = K;
    out->W = calloc(nn, sizeof *out->W);
    out->objective = malloc(((size_t)max_iter + 1) * sizeof *out->objective);
    out->gamma = malloc(((size_t)max_iter + 1) * sizeof *out->gamma);
    out->stop = "iterations";
    if (!out->W || !out->objective || !out->gamma) {
        topo_learn_fini(out);
        topo_i_set_error(err, err_size, "learned graph with n=%d: out of memory", n);
        return -1;
    }
    for (int i = 0; i < n; i++)
        out->W[(size_t)i * n + i] = 1.0;
    double f = topo_learn_objective(out->W, pi, n, K, lambda);
    out->objective[0] = f;

    topo_i_igraph_state previous = topo_i_enter_igraph();
    fw_ws w;
    igraph_error_t rc = ws_init(&w, pi, n, K, lambda);
    int ret = -1;
    if (rc != IGRAPH_SUCCESS)
        goto out_fail;
    double *W = out->W;
    while (out->iters < max_iter) {
        residual(&w, W);
        gradient(&w, W);
        if ((rc = oracle(&w)) != IGRAPH_SUCCESS)
            goto out_fail;
        /* num = -(n/2) <G, P - W> (half the Frank-Wolfe gap times n),
         * den = ||(P - W) PI||^2 + lambda ||P - W||^2 */
        double num = 0.0, den = 0.0, inv = 1.0 / n;
        for (int i = 0; i < n; i++) {
            for (int k = 0; k < K; k++) {
                double dp = pi[(size_t)w.perm[i] * K + k] - (w.R[(size_t)i * K + k] + w.pibar[k]);
                num -= w.R[(size_t)i * K + k] * dp;
                den += dp * dp;
            }
            for (int j = 0; j < n; j++) {
                double wij = W[(size_t)i * n + j];
                double d = (j == w.perm[i] ? 1.0 : 0.0) - wij;
                num -= lambda * (wij - inv) * d;
                den += lambda * d * d;
            }
        }
        if (!(num > 0.0) || !(den > 0.0)) {
            out->stop = "optimal";
            break;
        }
        double gamma = num / den;
        if (gamma > 1.0)
            gamma = 1.0;
        for (int i = 0; i < n; i++)
            for (int j = 0; j < n; j++) {
                size_t e = (size_t)i * n + j;
                w.C[e] = (1.0 - gamma) * W[e] + (j == w.perm[i] ? gamma : 0.0);
            }
        if (support_degree(w.C, n) > budget) {
            out->stop = "budget";
            break;
        }
        double fc = topo_learn_objective(w.C, pi, n, K, lambda);
        if (!(fc < f)) {
            out->stop = "no decrease";
            break;
        }
        memcpy(W, w.C, nn * sizeof *W);
        f = fc;
        out->gamma[out->iters] = gamma;
        out->iters++;
        out->objective[out->iters] = f;
    }
    out->degree = support_degree(W, n);
    ret = 0;
out_fail:
    if (ret != 0) {
        topo_i_set_error(err, err_size, "learned graph with n=%d: %s%s", n,
                         rc == IGRAPH_ENOMEM ? "" : "igraph: ", topo_i_igraph_error_text(rc));
        topo_learn_fini(out);
    }
    ws_fini(&w);
    topo_i_leave_igraph(previous);
    return ret;
}

void topo_learn_fini(topo_learn *l)
{
    if (l == NULL)
        return;
    free(l->W);
    free(l->objective);
    free(l->gamma);
    l->W = l->objective = l->gamma = NULL;
}

int topo_i_learned_edges(const topo_learn *l, int **uv, size_t *m)
{
    int n = l->n;
    size_t count = 0;
    for (int i = 0; i < n; i++)
        for (int j = i + 1; j < n; j++)
            if (l->W[(size_t)i * n + j] > 0.0 || l->W[(size_t)j * n + i] > 0.0)
                count++;
    *uv = malloc((2 * count + 1) * sizeof **uv);
    if (*uv == NULL)
        return -1;
    size_t e = 0;
    for (int i = 0; i < n; i++)
        for (int j = i + 1; j < n; j++)
            if (l->W[(size_t)i * n + j] > 0.0 || l->W[(size_t)j * n + i] > 0.0) {
                (*uv)[2 * e] = i;
                (*uv)[2 * e + 1] = j;
                e++;
            }
    *m = count;
    return 0;
}

int topo_i_learned_weights(topo_graph *g, const topo_learn *l)
{
    int n = g->n;
    size_t nnz = 2 * g->n_edges;
    g->w = malloc((nnz > 0 ? nnz : 1) * sizeof *g->w);
    g->self_w = malloc(((size_t)n > 0 ? (size_t)n : 1) * sizeof *g->self_w);
    g->learn_objective = malloc(((size_t)l->iters + 1) * sizeof *g->learn_objective);
    if (g->w == NULL || g->self_w == NULL || g->learn_objective == NULL)
        return -1;
    int symmetric = 1;
    for (int i = 0; i < n; i++) {
        g->self_w[i] = l->W[(size_t)i * n + i];
        for (size_t k = g->off[i]; k < g->off[i + 1]; k++) {
            int j = g->nbr[k];
            g->w[k] = l->W[(size_t)i * n + j];
            if (g->w[k] != l->W[(size_t)j * n + i])
                symmetric = 0;
        }
    }
    memcpy(g->learn_objective, l->objective, ((size_t)l->iters + 1) * sizeof *g->learn_objective);
    g->learned = 1;
    g->learn_iters = l->iters;
    g->learn_stop = l->stop;
    g->symmetric = symmetric;
    return 0;
}
