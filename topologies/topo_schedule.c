/* topo_schedule.c -- time-varying topologies: one directed, weighted graph
 * per round.  One-peer exponential graphs (Ying et al. 2021: round r, node
 * j sends to j + 2^(r mod tau), tau = ceil(log2 n), both keep 1/2; or, for
 * protocols that exchange both ways, the undirected edges {j, j + 2^b}
 * with Metropolis-Hastings weights), random
 * perfect matchings (pairs average; with n odd one node sits out), random
 * k-out peer sampling (Epidemic Learning, de Vos et al. 2023: each node
 * sends to k distinct others drawn uniformly, each receiver averages its own
 * model with what it received, 1 / (1 + in-degree) each), and a cycle of
 * undirected graphs read from a file (weights from topo_mixing.c, an
 * isolated node keeps its value; every round without edges shares one
 * graph, so a file naming round 99999 alone costs two graphs, not 10^5).
 *
 * Round r's graph depends only on (seed, r): the random schemes reseed one
 * mt19937 from splitmix64(seed, r) at each round, so rounds can be asked in
 * any order.  A round costs O(n + arcs) and calls no igraph function.  It
 * does not decide when rounds happen (the algorithm does) and never
 * includes <igraph.h>.
 */
#include "topo_internal.h"
#include "sim_mix.h"

#include <stdlib.h>
#include <string.h>

#include <gsl/gsl_randist.h>
#include <gsl/gsl_rng.h>

struct topo_schedule {
    topo_sched_spec spec;
    uint64_t        seed;
    uint64_t        period;
    topo_digraph   *d;        /* the round handed out (generated schemes) */
    topo_digraph  **rounds;   /* file: one graph per round */
    topo_digraph   *empty;    /* file: the graph every empty round shares */
    gsl_rng        *rng;
    int            *perm;     /* n: shuffles and draws */
    int            *mark;     /* n: k-out, last sender that picked a node */
};

static const char *const sched_names[] = {
    [TOPO_SCHED_ONE_PEER_EXPONENTIAL] = "one_peer_exponential",
    [TOPO_SCHED_RANDOM_MATCHING]      = "random_matching",
    [TOPO_SCHED_RANDOM_K_OUT]         = "random_k_out",
    [TOPO_SCHED_FILE]                 = "file",
};
#define N_SCHED ((int)(sizeof sched_names / sizeof sched_names[0]))

const char *topo_sched_kind_name(topo_sched_kind k)
{
    if ((int)k < 0 || (int)k >= N_SCHED)
        return "unknown";
    return sched_names[k];
}

int topo_sched_kind_from_name(const char *name)
{
    if (name == NULL)
        return -1;
    for (int k = 0; k < N_SCHED; k++)
        if (strcmp(name, sched_names[k]) == 0)
            return k;
    return -1;
}

const char *topo_sched_kind_names(void)
{
    return "one_peer_exponential, random_matching, random_k_out, file";
}

/* One undirected round of the file as a digraph with the spec's weights. */
static topo_digraph *file_round(const topo_sched_spec *spec, const int *uv, size_t m)
{
    topo_graph g = { .n = spec->n, .mixing = spec->mixing, .lazy_alpha = spec->lazy_alpha };
    topo_digraph *d = NULL;
    if (topo_i_fill_csr(&g, uv, m) != 0 || topo_i_fill_weights(&g) != 0)
        goto out;
    d = topo_i_digraph_alloc(g.n, 2 * m);
    if (d == NULL)
        goto out;
    /* W[i][j] on the arc j -> i: the receiver's row */
    memcpy(d->in_off, g.off, ((size_t)g.n + 1) * sizeof *d->in_off);
    memcpy(d->in_nbr, g.nbr, 2 * m * sizeof *d->in_nbr);
    memcpy(d->in_w, g.w, 2 * m * sizeof *d->in_w);
    memcpy(d->self_w, g.self_w, (size_t)g.n * sizeof *d->self_w);
    /* sender lists: arc j -> i sits in j's list with W[i][j] */
    memcpy(d->out_off, g.off, ((size_t)g.n + 1) * sizeof *d->out_off);
    memcpy(d->out_nbr, g.nbr, 2 * m * sizeof *d->out_nbr);
    for (int j = 0; j < g.n; j++)
        for (size_t k = g.off[j]; k < g.off[j + 1]; k++) {
            int i = g.nbr[k];
            /* find W[i][j] in i's sorted row */
            size_t lo = g.off[i], hi = g.off[i + 1];
            while (lo + 1 < hi) {
                size_t mid = lo + (hi - lo) / 2;
                if (g.nbr[mid] <= j)
                    lo = mid;
                else
                    hi = mid;
            }
            d->out_w[k] = g.w[lo];
        }
    d->n_arcs = 2 * m;
    topo_i_digraph_flags(d);
out:
    free(g.off);
    free(g.nbr);
    free(g.w);
    free(g.self_w);
    return d;
}

/* Heap bytes of one file round of n nodes and m edges (topo_i_digraph_alloc:
 * two offset arrays, the self weights, 24 bytes an arc, and seven blocks'
 * allocator overhead). */
static double round_bytes(int n, size_t m)
{
    return (double)sizeof(topo_digraph) + 3.0 * ((double)n + 1) * 8.0 + 48.0 * (double)m
         + 7 * 16.0;
}

int topo_schedule_file_bytes(const char *path, int n, double *bytes, char *err,
                             size_t err_size)
{
    topo_i_edges e;
    *bytes = 0;
    if (topo_i_read_edges(path, n, 3, &e, err, err_size) != 0)
        return -1;
    /* one graph per round that has edges, one shared by the empty ones,
     * the edges themselves, a pointer and a count per round */
    long n_rounds = 0, used = 0;
    unsigned char *seen = calloc(TOPO_SCHED_MAX_ROUNDS, 1);
    if (seen == NULL) {
        topo_i_edges_fini(&e);
        topo_i_set_error(err, err_size, "%s: error: out of memory", path);
        return -1;
    }
    for (size_t i = 0; i < e.m; i++) {
        if (e.round[i] + 1 > n_rounds)
            n_rounds = e.round[i] + 1;
        used += !seen[e.round[i]];
        seen[e.round[i]] = 1;
    }
    *bytes = (double)(used + (used < n_rounds)) * round_bytes(n, 0) + 48.0 * (double)e.m
           + 16.0 * (double)n_rounds;
    free(seen);
    topo_i_edges_fini(&e);
    return 0;
}

static int load_file(topo_schedule *s, char *err, size_t err_size)
{
    topo_i_edges e;
    if (topo_i_read_edges(s->spec.path, s->spec.n, 3, &e, err, err_size) != 0)
        return -1;
    long n_rounds = 0;
    for (size_t i = 0; i < e.m; i++)
        if (e.round[i] + 1 > n_rounds)
            n_rounds = e.round[i] + 1;
    if (n_rounds == 0) {
        topo_i_set_error(err, err_size, "%s: error: no edges (expected lines \"round u v\")",
                         s->spec.path);
        topo_i_edges_fini(&e);
        return -1;
    }
    int ret = -1;
    /* the edges grouped by round, in file order within a round (a counting
     * sort: O(edges + rounds), not one pass over the edges per round) */
    size_t *start = calloc((size_t)n_rounds + 1, sizeof *start);
    int *uv = malloc((e.m > 0 ? 2 * e.m : 1) * sizeof *uv);
    s->rounds = calloc((size_t)n_rounds, sizeof *s->rounds);
    if (start == NULL || uv == NULL || s->rounds == NULL)
        goto out_oom;
    for (size_t i = 0; i < e.m; i++)
        start[e.round[i] + 1]++;
    for (long r = 0; r < n_rounds; r++)
        start[r + 1] += start[r];
    for (size_t i = 0; i < e.m; i++) {
        size_t k = start[e.round[i]]++;
        uv[2 * k] = e.uv[2 * i];
        uv[2 * k + 1] = e.uv[2 * i + 1];
    }
    for (long r = n_rounds; r > 0; r--)   /* undo the shift the fill left */
        start[r] = start[r - 1];
    start[0] = 0;
    s->period = (uint64_t)n_rounds;
    for (long r = 0; r < n_rounds; r++) {
        size_t m = start[r + 1] - start[r];
        if (m == 0) {   /* every empty round is the one graph without arcs */
            if (s->empty == NULL && (s->empty = file_round(&s->spec, uv, 0)) == NULL)
                goto out_oom;
            s->rounds[r] = s->empty;
            continue;
        }
        s->rounds[r] = file_round(&s->spec, uv + 2 * start[r], m);
        if (s->rounds[r] == NULL)
            goto out_oom;
    }
    ret = 0;
    goto out;
out_oom:
    topo_i_set_error(err, err_size, "%s: error: out of memory", s->spec.path);
out:
    free(start);
    free(uv);
    topo_i_edges_fini(&e);
    return ret;
}

topo_schedule *topo_schedule_create(const topo_sched_spec *spec, uint64_t seed, char *err,
                                    size_t err_size)
{
    if (err != NULL && err_size > 0)
        err[0] = '\0';
    const char *name = topo_sched_kind_name(spec->kind);
    if ((int)spec->kind < 0 || (int)spec->kind >= N_SCHED) {
        topo_i_set_error(err, err_size, "unknown schedule kind %d (expected one of: %s)",
                         (int)spec->kind, topo_sched_kind_names());
        return NULL;
    }
    if (spec->n < 1) {
        topo_i_set_error(err, err_size, "%s schedule needs n >= 1, got n=%d", name, spec->n);
        return NULL;
    }
    if (spec->kind == TOPO_SCHED_RANDOM_K_OUT && (spec->k < 1 || spec->k > spec->n - 1)) {
        topo_i_set_error(err, err_size,
                         "random_k_out schedule needs 1 <= k <= n - 1, got k=%d, n=%d",
                         spec->k, spec->n);
        return NULL;
    }
    if (spec->kind == TOPO_SCHED_FILE) {
        if (spec->path == NULL || spec->path[0] == '\0') {
            topo_i_set_error(err, err_size, "file schedule needs a file name");
            return NULL;
        }
        if (topo_mixing_name(spec->mixing)[0] == '?' ||
            !(spec->lazy_alpha >= 0.0 && spec->lazy_alpha < 1.0)) {
            topo_i_set_error(err, err_size,
                             "file schedule needs a known mixing and 0 <= lazy_alpha < 1");
            return NULL;
        }
    }
    topo_schedule *s = calloc(1, sizeof *s);
    if (s == NULL)
        goto out_oom;
    s->spec = *spec;
    s->seed = seed;
    int n = spec->n;
    size_t arcs = 0;
    switch (spec->kind) {
    case TOPO_SCHED_ONE_PEER_EXPONENTIAL: {
        int tau = 0;
        while (tau < 31 && (1 << tau) < n)
            tau++;
        s->period = tau > 0 ? (uint64_t)tau : 1;
        arcs = n > 1 ? (size_t)n * (spec->undirected ? 2 : 1) : 0;
        break;
    }
    case TOPO_SCHED_RANDOM_MATCHING:
        arcs = (size_t)n;
        break;
    case TOPO_SCHED_RANDOM_K_OUT:
        arcs = (size_t)n * (size_t)spec->k;
        break;
    case TOPO_SCHED_FILE:
        if (load_file(s, err, err_size) != 0) {
            topo_schedule_destroy(s);
            return NULL;
        }
        return s;
    }
    s->d = topo_i_digraph_alloc(n, arcs);
    s->rng = gsl_rng_alloc(gsl_rng_mt19937);
    s->perm = malloc((size_t)n * sizeof *s->perm);
    s->mark = malloc((size_t)n * sizeof *s->mark);
    if (s->d == NULL || s->rng == NULL || s->perm == NULL || s->mark == NULL)
        goto out_oom;
    return s;

out_oom:
    topo_schedule_destroy(s);
    topo_i_set_error(err, err_size, "%s schedule with n=%d: out of memory", name, spec->n);
    return NULL;
}

void topo_schedule_destroy(topo_schedule *s)
{
    if (s == NULL)
        return;
    if (s->rounds != NULL)
        for (uint64_t r = 0; r < s->period; r++)
            if (s->rounds[r] != s->empty)
                topo_digraph_destroy(s->rounds[r]);
    topo_digraph_destroy(s->empty);
    free(s->rounds);
    free(s->mark);
    free(s->perm);
    if (s->rng != NULL)
        gsl_rng_free(s->rng);
    topo_digraph_destroy(s->d);
    free(s);
}

uint64_t topo_schedule_period(const topo_schedule *s)
{
    return s->spec.kind == TOPO_SCHED_ONE_PEER_EXPONENTIAL || s->spec.kind == TOPO_SCHED_FILE
               ? s->period : 0;
}

static void seed_round(topo_schedule *s, uint64_t r)
{
    uint64_t x = sim_rng_mix64(s->seed ^ sim_rng_splitmix64(r));
    gsl_rng_set(s->rng, sim_rng_fold32(x));
}

static void one_peer(topo_schedule *s, uint64_t r)
{
    topo_digraph *d = s->d;
    int n = d->n;
    int hop = n > 1 ? (int)(1LL << (r % s->period)) : 0;
    for (int j = 0; j < n; j++) {
        d->out_off[j + 1] = d->out_off[j] + (n > 1);
        d->self_w[j] = n > 1 ? 0.5 : 1.0;
        if (n > 1) {
            d->out_nbr[j] = (int)(((long long)j + hop) % n);
            d->out_w[j] = 0.5;
        }
    }
}

/* The undirected form: j ~ j + hop and j ~ j - hop, neighbours sorted,
 * weights 1 / (1 + degree) on a regular graph (Metropolis-Hastings). */
static void one_peer_undirected(topo_schedule *s, uint64_t r)
{
    topo_digraph *d = s->d;
    int n = d->n;
    int hop = n > 1 ? (int)(1LL << (r % s->period)) : 0;
    for (int j = 0; j < n; j++) {
        size_t at = d->out_off[j];
        if (n > 1) {
            int a = (int)(((long long)j + hop) % n), b = (int)(((long long)j - hop + n) % n);
            int lo = a < b ? a : b, hi = a < b ? b : a;
            d->out_nbr[at++] = lo;
            if (hi != lo)
                d->out_nbr[at++] = hi;
        }
        d->out_off[j + 1] = at;
    }
    for (int j = 0; j < n; j++) {
        double w = 1.0 / (1.0 + (double)(d->out_off[j + 1] - d->out_off[j]));
        d->self_w[j] = w;
        for (size_t k = d->out_off[j]; k < d->out_off[j + 1]; k++)
            d->out_w[k] = w;
    }
}

static void add_pair_arcs(topo_digraph *d, const int *partner)
{
    for (int j = 0; j < d->n; j++) {
        int p = partner[j];
        d->out_off[j + 1] = d->out_off[j] + (p >= 0);
        d->self_w[j] = p >= 0 ? 0.5 : 1.0;
        if (p >= 0) {
            d->out_nbr[d->out_off[j]] = p;
            d->out_w[d->out_off[j]] = 0.5;
        }
    }
}

static void matching(topo_schedule *s, uint64_t r)
{
    int n = s->d->n;
    seed_round(s, r);
    for (int i = 0; i < n; i++)
        s->perm[i] = i;
    gsl_ran_shuffle(s->rng, s->perm, (size_t)n, sizeof *s->perm);
    for (int i = 0; i < n; i++)
        s->mark[i] = -1;
    for (int t = 0; t + 1 < n; t += 2) {
        s->mark[s->perm[t]] = s->perm[t + 1];
        s->mark[s->perm[t + 1]] = s->perm[t];
    }
    add_pair_arcs(s->d, s->mark);
}

static int cmp_int(const void *a, const void *b)
{
    int x = *(const int *)a, y = *(const int *)b;
    return (x > y) - (x < y);
}

static void k_out(topo_schedule *s, uint64_t r)
{
    topo_digraph *d = s->d;
    int n = d->n, k = s->spec.k;
    seed_round(s, r);
    for (int i = 0; i < n; i++)
        s->mark[i] = -1;
    for (int j = 0; j < n; j++) {
        int *out = d->out_nbr + (size_t)j * (size_t)k;
        d->out_off[j + 1] = d->out_off[j] + (size_t)k;
        if (2 * k > n - 1) {
            /* dense: choose k of the n - 1 others in one pass */
            int c = 0;
            for (int i = 0; i < n; i++)
                if (i != j)
                    s->perm[c++] = i;
            gsl_ran_choose(s->rng, out, (size_t)k, s->perm, (size_t)(n - 1), sizeof *out);
        } else {
            /* sparse: rejection, about k draws; mark[i] == j means taken */
            for (int c = 0; c < k;) {
                int i = (int)gsl_rng_uniform_int(s->rng, (unsigned long)(n - 1));
                if (i >= j)
                    i++;   /* skip j itself */
                if (s->mark[i] == j)
                    continue;
                s->mark[i] = j;
                out[c++] = i;
            }
            qsort(out, (size_t)k, sizeof *out, cmp_int);
        }
    }
    /* receivers average: W[i][j] = 1 / (1 + in-degree of i) */
    for (int i = 0; i < n; i++)
        s->perm[i] = 0;
    for (size_t a = 0; a < (size_t)n * (size_t)k; a++)
        s->perm[d->out_nbr[a]]++;
    for (size_t a = 0; a < (size_t)n * (size_t)k; a++)
        d->out_w[a] = 1.0 / (1.0 + s->perm[d->out_nbr[a]]);
    for (int i = 0; i < n; i++)
        d->self_w[i] = 1.0 / (1.0 + s->perm[i]);
}

const topo_digraph *topo_schedule_round(topo_schedule *s, uint64_t r)
{
    switch (s->spec.kind) {
    case TOPO_SCHED_FILE:
        return s->rounds[r % s->period];
    case TOPO_SCHED_ONE_PEER_EXPONENTIAL:
        if (s->spec.undirected)
            one_peer_undirected(s, r);
        else
            one_peer(s, r);
        break;
    case TOPO_SCHED_RANDOM_MATCHING:
        matching(s, r);
        break;
    case TOPO_SCHED_RANDOM_K_OUT:
        k_out(s, r);
        break;
    }
    s->d->out_off[0] = 0;
    topo_i_digraph_fill_in(s->d);
    topo_i_digraph_flags(s->d);
    return s->d;
}
