/* alg_sdgraph.c -- SD-FEEL's edge-server graph (see alg_sdgraph.h): the
 * topology spec from the protocol's parameters, the graph from
 * topologies/ (topo_build, with its seed derived from the scenario seed),
 * each server's neighbours in increasing cyclic distance (a ring's next
 * server first, then the previous one), and the mixing weights: the
 * graph's Metropolis-Hastings weights, or the Metropolis-Hastings chain
 * whose stationary distribution is the clusters' data shares pi,
 * P_cd = min(pi_c / (deg_c + 1), pi_d / (deg_d + 1)) / pi_c for a
 * neighbour d and P_cc = 1 - sum_d P_cd: pi_c P_cd = pi_d P_dc, so pi^T P
 * = pi^T and x <- P x tends to sum_c pi_c x_c on a connected graph (equal
 * shares give the graph's weights).  Also the clusters both SD-FEEL
 * protocols share: which workers a cluster holds, its data size, the
 * checks and the shared graph built from them.  It sends nothing.
 */
#include "alg_sdgraph.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *const alg_sdg_weight_names[] = { "graph", "data", NULL };

enum { Q_KIND, Q_P, Q_DEGREE, Q_EDGES, Q_WEIGHTS };

/* Two servers are one edge whatever the kind (a ring of two would be a
 * double edge). */
static topo_spec spec_of(const alg_ctx *ctx, int base, int C)
{
    topo_kind kind = (topo_kind)(int)ctx->param[base + Q_KIND];
    int d = (int)ctx->param[base + Q_DEGREE];
    topo_spec sp = { .kind = kind, .n = C, .p = ctx->param[base + Q_P], .degree = d, .k = d,
                     .beta = ctx->param[base + Q_P], .m = d, .path = ctx->path[base + Q_EDGES] };
    if (C == 2 && kind != TOPO_EDGE_LIST)
        sp.kind = TOPO_COMPLETE;
    return sp;
}

static uint64_t graph_seed(const alg_ctx *ctx)
{
    return alg_hash64(ctx->seed ^ 0x5d3e5e7e9a1f0c2bull);
}

int alg_sdg_check(const alg_ctx *ctx, int base, int C, char *err, size_t size)
{
    if (C < 2)
        return 0;   /* one server: no graph */
    topo_spec sp = spec_of(ctx, base, C);
    if (sp.kind == TOPO_TORUS2D || sp.kind == TOPO_TORUS3D) {
        snprintf(err, size, "server_topology \"%s\" is not available for the server graph "
                 "(no rows and cols): use another kind or an edge_list", topo_kind_name(sp.kind));
        return -1;
    }
    if (sp.kind == TOPO_EDGE_LIST && !sp.path) {
        snprintf(err, size, "server_topology \"edge_list\" needs server_edges (a file of "
                 "server pairs)");
        return -1;
    }
    char why[400];
    topo_graph *g = topo_build(&sp, graph_seed(ctx), why, sizeof why);
    if (!g) {
        snprintf(err, size, "the server graph (%d servers): %s", C, why);
        return -1;
    }
    topo_destroy(g);
    return 0;
}

int alg_sdg_index(const alg_sdg *s, int c, int d)
{
    for (size_t k = s->off[c]; k < s->off[c + 1]; k++)
        if (s->nbr[k] == d)
            return (int)(k - s->off[c]);
    return -1;
}

int alg_sdg_init(alg_sdg *s, const alg_ctx *ctx, int base, int C, const double *samples)
{
    memset(s, 0, sizeof *s);
    s->C = C;
    s->off = calloc((size_t)C + 1, sizeof *s->off);
    s->self = malloc((size_t)C * sizeof *s->self);
    s->uniform = malloc((size_t)C);
    if (!s->off || !s->self || !s->uniform)
        return -1;
    if (C < 2) {
        s->self[0] = 1;
        s->uniform[0] = 1;
        return 0;
    }
    topo_spec sp = spec_of(ctx, base, C);
    char why[400];
    topo_graph *g = topo_build(&sp, graph_seed(ctx), why, sizeof why);
    if (!g)
        return -1;
    size_t E2 = g->off[C];
    s->nbr = malloc((E2 ? E2 : 1) * sizeof *s->nbr);
    s->w = malloc((E2 ? E2 : 1) * sizeof *s->w);
    if (!s->nbr || !s->w) {
        topo_destroy(g);
        return -1;
    }
    double total = 0;
    for (int c = 0; c < C; c++)
        total += samples[c];
    for (int c = 0; c < C; c++) {
        size_t lo = g->off[c], hi = g->off[c + 1];
        s->off[c + 1] = hi;
        /* cyclic distance order, by insertion (degrees are small) */
        for (size_t k = lo; k < hi; k++) {
            int d = g->nbr[k];
            double wk = g->w[k];
            size_t j = k;
            while (j > lo && (s->nbr[j - 1] - c + C) % C > (d - c + C) % C) {
                s->nbr[j] = s->nbr[j - 1];
                s->w[j] = s->w[j - 1];
                j--;
            }
            s->nbr[j] = d;
            s->w[j] = wk;
        }
        s->self[c] = g->self_w[c];
    }
    if ((int)ctx->param[base + Q_WEIGHTS] == ALG_SDG_DATA && total > 0) {
        for (int c = 0; c < C; c++) {
            double pc = samples[c] / total, sum = 0;
            int dc = alg_sdg_degree(s, c);
            for (size_t k = s->off[c]; k < s->off[c + 1]; k++) {
                int d = s->nbr[k], dd = alg_sdg_degree(s, d);
                double pd = samples[d] / total, a = pc / (dc + 1), b = pd / (dd + 1);
                s->w[k] = (a < b ? a : b) / pc;
                sum += s->w[k];
            }
            s->self[c] = 1.0 - sum;
        }
    }
    /* rows of equal weights 1 / (1 + degree) (the self weight may differ
     * from it in the last bit) are mixed as one sum scaled once */
    for (int c = 0; c < C; c++) {
        double e = 1.0 / (1 + alg_sdg_degree(s, c));
        int u = fabs(s->self[c] - e) < 1e-12;
        for (size_t k = s->off[c]; k < s->off[c + 1]; k++)
            u &= s->w[k] == e;
        s->uniform[c] = (char)u;
    }
    topo_destroy(g);
    return 0;
}

void alg_sdg_fini(alg_sdg *s)
{
    free(s->off);
    free(s->nbr);
    free(s->w);
    free(s->self);
    free(s->uniform);
    memset(s, 0, sizeof *s);
}

int alg_sdc_lo(int n, int C, int c) { return (int)((long)c * n / C); }

int alg_sdc_hi(int n, int C, int c) { return c + 1 < C ? alg_sdc_lo(n, C, c + 1) : n; }

int alg_sdc_of(int n, int C, int w)
{
    int c = (int)((long)w * C / n);
    while (c + 1 < C && alg_sdc_lo(n, C, c + 1) <= w)
        c++;
    while (alg_sdc_lo(n, C, c) > w)
        c--;
    return c;
}

double alg_sdc_samples(const alg_ctx *ctx, int C, int c)
{
    double m = 0;
    for (int w = alg_sdc_lo(ctx->n, C, c); w < alg_sdc_hi(ctx->n, C, c); w++)
        m += (double)alg_local_samples(ctx, w);
    return m;
}

int alg_sdc_check(const alg_ctx *ctx, const char *protocol, int base, int C, char *err,
                  size_t size)
{
    if (C > ctx->n) {
        snprintf(err, size, "%s needs at least one worker per cluster: %d clusters, %d workers",
                 protocol, C, ctx->n);
        return -1;
    }
    return alg_sdg_check(ctx, base, C, err, size);
}

int alg_sdc_shared_init(alg_ctx *ctx, int base, int C)
{
    alg_sdg *g = calloc(1, sizeof *g);
    double *m = calloc((size_t)C, sizeof *m);
    ctx->shared = g;
    if (!g || !m) {
        free(m);
        return -1;
    }
    for (int c = 0; c < C; c++)
        m[c] = alg_sdc_samples(ctx, C, c);
    int rc = alg_sdg_init(g, ctx, base, C, m);
    free(m);
    return rc;
}

void alg_sdc_shared_fini(alg_ctx *ctx)
{
    if (ctx->shared)
        alg_sdg_fini(ctx->shared);
    free(ctx->shared);
    ctx->shared = NULL;
}
