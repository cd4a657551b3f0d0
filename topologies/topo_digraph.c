/* topo_digraph.c -- directed graphs with per-arc mixing weights, listed by
 * sender and by receiver: allocation, the receiver lists from the sender
 * lists, the stochasticity flags, and the static directed topologies that
 * push-sum needs (the directed exponential graph, the directed cycle, and
 * any undirected topology as arcs both ways) with column-stochastic
 * weights 1 / (1 + out-degree).  Time-varying graphs live in
 * topo_schedule.c.  It never includes <igraph.h>.
 */
#include "topo_internal.h"

#include <stdlib.h>
#include <string.h>
#include <math.h>

topo_digraph *topo_i_digraph_alloc(int n, size_t n_arcs)
{
    topo_digraph *d = calloc(1, sizeof *d);
    if (d == NULL)
        return NULL;
    size_t a = n_arcs > 0 ? n_arcs : 1;
    d->n = n;
    d->n_arcs = n_arcs;
    d->out_off = calloc((size_t)n + 1, sizeof *d->out_off);
    d->in_off = calloc((size_t)n + 1, sizeof *d->in_off);
    d->out_nbr = malloc(a * sizeof *d->out_nbr);
    d->in_nbr = malloc(a * sizeof *d->in_nbr);
    d->out_w = malloc(a * sizeof *d->out_w);
    d->in_w = malloc(a * sizeof *d->in_w);
    d->self_w = malloc(((size_t)n > 0 ? (size_t)n : 1) * sizeof *d->self_w);
    if (d->out_off == NULL || d->in_off == NULL || d->out_nbr == NULL || d->in_nbr == NULL ||
        d->out_w == NULL || d->in_w == NULL || d->self_w == NULL) {
        topo_digraph_destroy(d);
        return NULL;
    }
    return d;
}

void topo_digraph_destroy(topo_digraph *d)
{
    if (d == NULL)
        return;
    free(d->self_w);
    free(d->in_w);
    free(d->out_w);
    free(d->in_nbr);
    free(d->out_nbr);
    free(d->in_off);
    free(d->out_off);
    free(d);
}

/* Counting sort by receiver; senders come in increasing order, so each
 * receiver's list is sorted.  Uses in_off as the cursor. */
int topo_i_digraph_fill_in(topo_digraph *d)
{
    int n = d->n;
    memset(d->in_off, 0, ((size_t)n + 1) * sizeof *d->in_off);
    for (size_t k = 0; k < d->out_off[n]; k++)
        d->in_off[d->out_nbr[k] + 1]++;
    for (int i = 0; i < n; i++)
        d->in_off[i + 1] += d->in_off[i];
    for (int j = 0; j < n; j++)
        for (size_t k = d->out_off[j]; k < d->out_off[j + 1]; k++) {
            int i = d->out_nbr[k];
            size_t pos = d->in_off[i]++;
            d->in_nbr[pos] = j;
            d->in_w[pos] = d->out_w[k];
        }
    for (int i = n; i > 0; i--)
        d->in_off[i] = d->in_off[i - 1];
    d->in_off[0] = 0;
    d->n_arcs = d->out_off[n];
    return 0;
}

void topo_i_digraph_flags(topo_digraph *d)
{
    const double tol = 1e-12;
    d->row_stochastic = 1;
    d->col_stochastic = 1;
    for (int i = 0; i < d->n; i++) {
        double row = d->self_w[i], col = d->self_w[i];
        for (size_t k = d->in_off[i]; k < d->in_off[i + 1]; k++)
            row += d->in_w[k];
        for (size_t k = d->out_off[i]; k < d->out_off[i + 1]; k++)
            col += d->out_w[k];
        if (fabs(row - 1.0) > tol)
            d->row_stochastic = 0;
        if (fabs(col - 1.0) > tol)
            d->col_stochastic = 0;
    }
}

static int cmp_int(const void *a, const void *b)
{
    int x = *(const int *)a, y = *(const int *)b;
    return (x > y) - (x < y);
}

/* j -> j + 2^b mod n for b = 0 .. hops - 1 (all distinct since 2^b < n),
 * or the cycle j -> j + 1 with hops 1. */
static topo_digraph *circulant(int n, int hops)
{
    topo_digraph *d = topo_i_digraph_alloc(n, (size_t)n * (size_t)hops);
    if (d == NULL)
        return NULL;
    double share = 1.0 / (1.0 + hops);
    for (int j = 0; j < n; j++) {
        d->out_off[j + 1] = d->out_off[j] + (size_t)hops;
        for (int b = 0; b < hops; b++) {
            d->out_nbr[d->out_off[j] + (size_t)b] = (int)(((long long)j + (1LL << b)) % n);
            d->out_w[d->out_off[j] + (size_t)b] = share;
        }
        qsort(d->out_nbr + d->out_off[j], (size_t)hops, sizeof *d->out_nbr, cmp_int);
        d->self_w[j] = share;
    }
    return d;
}

topo_digraph *topo_build_directed(const topo_spec *spec, uint64_t seed, char *err,
                                  size_t err_size)
{
    if (err != NULL && err_size > 0)
        err[0] = '\0';
    topo_digraph *d = NULL;
    if (spec->kind == TOPO_EXPONENTIAL || spec->kind == TOPO_RING) {
        const char *name = topo_kind_name(spec->kind);
        if (spec->n < 1) {
            topo_i_set_error(err, err_size, "directed %s graph needs n >= 1, got n=%d", name,
                             spec->n);
            return NULL;
        }
        int hops = 0;
        if (spec->kind == TOPO_RING)
            hops = spec->n > 1;
        else
            while (hops < 31 && (1 << hops) < spec->n)
                hops++;
        d = circulant(spec->n, hops);
    } else {
        topo_graph *g = topo_build(spec, seed, err, err_size);
        if (g == NULL)
            return NULL;
        d = topo_i_digraph_alloc(g->n, 2 * g->n_edges);
        if (d != NULL) {
            memcpy(d->out_off, g->off, ((size_t)g->n + 1) * sizeof *d->out_off);
            memcpy(d->out_nbr, g->nbr, 2 * g->n_edges * sizeof *d->out_nbr);
            for (int j = 0; j < g->n; j++) {
                double share = 1.0 / (1.0 + (double)(g->off[j + 1] - g->off[j]));
                for (size_t k = g->off[j]; k < g->off[j + 1]; k++)
                    d->out_w[k] = share;
                d->self_w[j] = share;
            }
        }
        topo_destroy(g);
    }
    if (d == NULL) {
        topo_i_set_error(err, err_size, "directed %s graph with n=%d: out of memory",
                         topo_kind_name(spec->kind), spec->n);
        return NULL;
    }
    topo_i_digraph_fill_in(d);
    topo_i_digraph_flags(d);
    return d;
}
