/* topo_mixing.c -- neighbour lists and mixing weights of undirected graphs:
 * the CSR builder, Metropolis-Hastings, max-degree and uniform weights with
 * their lazy versions, the oscillation test (eigenvalue -1), the
 * stationary distribution, the dense matrix and one mixing round x <- W x.
 * It does not generate graphs or compute spectra, and never includes
 * <igraph.h>.
 *
 * Weights (d_i the degree of i, alpha = lazy_alpha):
 *   metropolis_hastings  w_ij = (1 - alpha) / (1 + max(d_i, d_j))
 *   max_degree           w_ij = (1 - alpha) / (1 + d_max)
 *   uniform              w_ij = (1 - alpha) / d_i, self weight alpha
 * and for the first two the self weight takes the rest of the row.  The
 * same expression from both ends keeps the first two exactly symmetric.
 */
#include "topo_internal.h"

#include <stdlib.h>
#include <string.h>

static int cmp_int(const void *a, const void *b)
{
    int x = *(const int *)a, y = *(const int *)b;
    return (x > y) - (x < y);
}

int topo_i_fill_csr(topo_graph *g, const int *uv, size_t m)
{
    int n = g->n;
    g->n_edges = m;
    g->off = calloc((size_t)n + 1, sizeof *g->off);
    g->nbr = malloc((2 * m > 0 ? 2 * m : 1) * sizeof *g->nbr);
    size_t *pos = malloc(((size_t)n > 0 ? (size_t)n : 1) * sizeof *pos);
    if (g->off == NULL || g->nbr == NULL || pos == NULL) {
        free(pos);
        return -1;
    }
    for (size_t e = 0; e < m; e++) {
        g->off[uv[2 * e] + 1]++;
        g->off[uv[2 * e + 1] + 1]++;
    }
    for (int i = 0; i < n; i++)
        g->off[i + 1] += g->off[i];
    memcpy(pos, g->off, (size_t)n * sizeof *pos);
    for (size_t e = 0; e < m; e++) {
        int a = uv[2 * e], b = uv[2 * e + 1];
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

static size_t deg(const topo_graph *g, int i) { return g->off[i + 1] - g->off[i]; }

int topo_i_fill_weights(topo_graph *g)
{
    size_t nnz = 2 * g->n_edges;
    g->w = malloc((nnz > 0 ? nnz : 1) * sizeof *g->w);
    g->self_w = malloc(((size_t)g->n > 0 ? (size_t)g->n : 1) * sizeof *g->self_w);
    if (g->w == NULL || g->self_w == NULL)
        return -1;
    double keep = 1.0 - g->lazy_alpha;
    size_t dmax = 0;
    int regular = 1;
    for (int i = 0; i < g->n; i++) {
        if (deg(g, i) > dmax)
            dmax = deg(g, i);
        if (i > 0 && deg(g, i) != deg(g, 0))
            regular = 0;
    }
    for (int i = 0; i < g->n; i++) {
        size_t di = deg(g, i);
        double sum = 0.0;
        for (size_t k = g->off[i]; k < g->off[i + 1]; k++) {
            size_t dj = deg(g, g->nbr[k]);
            switch (g->mixing) {
            case TOPO_MIX_METROPOLIS:
                g->w[k] = keep / (1.0 + (double)(di > dj ? di : dj));
                break;
            case TOPO_MIX_MAX_DEGREE:
                g->w[k] = keep / (1.0 + (double)dmax);
                break;
            case TOPO_MIX_UNIFORM:
                g->w[k] = keep / (double)di;
                break;
            }
            sum += g->w[k];
        }
        /* summed in neighbour order so the result is reproducible; uniform
         * keeps exactly alpha so that the oscillation test sees a true 0 */
        if (g->mixing == TOPO_MIX_UNIFORM)
            g->self_w[i] = di == 0 ? 1.0 : g->lazy_alpha;
        else
            g->self_w[i] = 1.0 - sum;
    }
    g->symmetric = g->mixing != TOPO_MIX_UNIFORM || regular;
    return 0;
}

int topo_i_oscillates(const topo_graph *g)
{
    if (!g->bipartite || g->n < 2)
        return 0;
    for (int i = 0; i < g->n; i++)
        if (g->self_w[i] != 0.0)
            return 0;
    return 1;
}

void topo_i_stationary(const topo_graph *g, double *pi)
{
    /* a learned W is doubly stochastic, symmetric or not */
    if (g->symmetric || g->learned || g->n_edges == 0) {
        for (int i = 0; i < g->n; i++)
            pi[i] = 1.0 / g->n;
        return;
    }
    for (int i = 0; i < g->n; i++)
        pi[i] = (double)deg(g, i) / (double)(2 * g->n_edges);
}

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

void topo_mix(const topo_graph *g, const double *x, double *out)
{
    for (int i = 0; i < g->n; i++) {
        double y = g->self_w[i] * x[i];
        for (size_t k = g->off[i]; k < g->off[i + 1]; k++)
            y += g->w[k] * x[g->nbr[k]];
        out[i] = y;
    }
}

void topo_digraph_mix(const topo_digraph *d, const double *x, double *out)
{
    for (int i = 0; i < d->n; i++) {
        double y = d->self_w[i] * x[i];
        for (size_t k = d->in_off[i]; k < d->in_off[i + 1]; k++)
            y += d->in_w[k] * x[d->in_nbr[k]];
        out[i] = y;
    }
}
