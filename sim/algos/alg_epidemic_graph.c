/* alg_epidemic_graph.c -- Epidemic Learning's per-round communication
 * graphs (see alg_epidemic_graph.h): random draws from (seed, round,
 * node) through alg_hash64, so every node computes the same graph;
 * networkx's pairing for EL-Oracle's regular graph, Floyd's sampling for
 * EL-Local.  No rounds, models or failures here.
 */
#include "alg_epidemic_graph.h"

#include <stdlib.h>
#include <string.h>

#define MAX_TRIES 1000   /* pairing attempts before the fallback graph */

int el_draw_init(el_draw *dr, int n, int s, uint64_t seed)
{
    memset(dr, 0, sizeof *dr);
    dr->n = n;
    dr->s = s;
    dr->seed = seed;
    dr->d = 2 * s > n - 1 ? n - 1 - s : s;
    size_t nd = (size_t)n * (size_t)(dr->d > 1 ? dr->d : 1);
    dr->stubs = malloc((nd > (size_t)n ? nd : (size_t)n) * sizeof(int));
    dr->adj = malloc(nd * sizeof(int));
    dr->deg = calloc((size_t)n, sizeof(int));
    dr->mark = calloc((size_t)n, sizeof(int));
    dr->pool = malloc((size_t)n * sizeof(int));
    dr->live_mark = calloc((size_t)n, sizeof(int));
    return dr->stubs && dr->adj && dr->deg && dr->mark && dr->pool && dr->live_mark ? 0 : -1;
}

void el_draw_fini(el_draw *dr)
{
    free(dr->stubs);
    free(dr->adj);
    free(dr->deg);
    free(dr->mark);
    free(dr->pool);
    free(dr->live_mark);
}

int el_round_init(el_round *c, int n, int s)
{
    c->out = malloc((size_t)n * (size_t)s * sizeof(int));
    c->out_deg = malloc((size_t)n * sizeof(int));
    c->in_deg = malloc((size_t)n * sizeof(int));
    c->in_off = malloc((size_t)(n + 1) * sizeof(int));
    c->in_list = malloc((size_t)n * (size_t)s * sizeof(int));
    return c->out && c->out_deg && c->in_deg && c->in_off && c->in_list ? 0 : -1;
}

void el_round_fini(el_round *c)
{
    free(c->out);
    free(c->out_deg);
    free(c->in_deg);
    free(c->in_off);
    free(c->in_list);
}

/* ---- random draws from (seed, round, node) ---- */

typedef struct hstream {
    uint64_t key, k;
} hstream;

static hstream stream_of(uint64_t seed, uint64_t round, uint64_t node)
{
    uint64_t key = alg_hash64(alg_hash64(seed ^ UINT64_C(0x45504944454d4943)) + round);
    hstream h = { alg_hash64(key ^ (node * UINT64_C(0xd1b54a32d192ed03))), 0 };
    return h;
}

/* Uniform integer in [0, m). */
static int uniform(hstream *h, int m)
{
    uint64_t x = alg_hash64(h->key + (++h->k) * UINT64_C(0x9e3779b97f4a7c15));
    int v = (int)((double)(x >> 11) * (1.0 / 9007199254740992.0) * m);
    return v < m ? v : m - 1;
}

static void shuffle(hstream *h, int *a, int m)
{
    for (int i = m - 1; i > 0; i--) {
        int j = uniform(h, i + 1);
        int t = a[i];
        a[i] = a[j];
        a[j] = t;
    }
}

/* ---- EL-Oracle: a random d-regular undirected graph ---- */

static int adjacent(const el_draw *sh, int a, int b)
{
    for (int k = 0; k < sh->deg[a]; k++)
        if (sh->adj[a * sh->d + k] == b)
            return 1;
    return 0;
}

/* Whether some pair of the m left-over stubs can still become an edge. */
static int suitable(el_draw *sh, int m)
{
    for (int x = 0; x < m; x++)
        for (int y = x + 1; y < m; y++) {
            int a = sh->stubs[x], b = sh->stubs[y];
            if (a != b && !adjacent(sh, a, b))
                return 1;
        }
    return 0;
}

/* One attempt of networkx's pairing with repairs; 0 when complete. */
static int try_regular(el_draw *sh, int n, hstream *h)
{
    int d = sh->d, m = n * d;
    memset(sh->deg, 0, (size_t)n * sizeof(int));
    for (int v = 0; v < n; v++)
        for (int k = 0; k < d; k++)
            sh->stubs[v * d + k] = v;
    while (m > 0) {
        shuffle(h, sh->stubs, m);
        int left = 0;
        for (int q = 0; q + 1 < m; q += 2) {
            int a = sh->stubs[q], b = sh->stubs[q + 1];
            if (a != b && !adjacent(sh, a, b)) {
                sh->adj[a * d + sh->deg[a]++] = b;
                sh->adj[b * d + sh->deg[b]++] = a;
            } else {
                sh->stubs[left++] = a;
                sh->stubs[left++] = b;
            }
        }
        m = left;
        if (m > 0 && !suitable(sh, m))
            return -1;
    }
    return 0;
}

/* Never reached in practice: a circulant d-regular graph (offsets +-1 ..
 * +-d/2, and n/2 when d is odd) on a random relabelling of the nodes. */
static void fallback_regular(el_draw *sh, int n, hstream *h)
{
    int d = sh->d, *perm = sh->stubs;
    for (int v = 0; v < n; v++)
        perm[v] = v;
    shuffle(h, perm, n);
    for (int p = 0; p < n; p++) {
        int a = perm[p], k = 0;
        for (int o = 1; o <= d / 2; o++) {
            sh->adj[a * d + k++] = perm[(p + o) % n];
            sh->adj[a * d + k++] = perm[(p + n - o) % n];
        }
        if (d % 2)
            sh->adj[a * d + k++] = perm[(p + n / 2) % n];
        sh->deg[a] = k;
    }
}

/* The in-lists (CSR, senders in node order) and in-degrees from the
 * out-lists. */
static void build_in_lists(const el_draw *sh, el_round *c)
{
    int n = sh->n, s = sh->s;
    memset(c->in_deg, 0, (size_t)n * sizeof(int));
    for (int j = 0; j < n; j++)
        for (int k = 0; k < c->out_deg[j]; k++)
            c->in_deg[c->out[(size_t)j * s + k]]++;
    c->in_off[0] = 0;
    for (int j = 0; j < n; j++)
        c->in_off[j + 1] = c->in_off[j] + c->in_deg[j];
    for (int j = 0; j < n; j++)   /* in_deg is reused as a fill cursor */
        c->in_deg[j] = c->in_off[j];
    for (int j = 0; j < n; j++)
        for (int k = 0; k < c->out_deg[j]; k++) {
            int v = c->out[(size_t)j * s + k];
            c->in_list[c->in_deg[v]++] = j;
        }
    for (int j = 0; j < n; j++)
        c->in_deg[j] -= c->in_off[j];
}

/* EL-Oracle over the m live nodes L[]: an s-regular graph on them.  When
 * fewer than s + 1 are live, the complete graph; when m s is odd (no
 * s-regular graph exists), an s-regular graph on m + 1 vertices whose
 * extra vertex is dropped, so that s of them send and receive s - 1. */
void el_draw_oracle(el_draw *sh, el_round *c, uint64_t r, const int *L, int m)
{
    int n = sh->n, s = sh->s;
    int se = s < m - 1 ? s : m - 1, mm = (m * se) % 2 ? m + 1 : m;
    int d = 2 * se > mm - 1 ? mm - 1 - se : se;
    sh->d = d;
    hstream h = stream_of(sh->seed, r, 0);
    int tries = 0;
    if (d > 0)
        while (try_regular(sh, mm, &h) != 0)
            if (++tries == MAX_TRIES) {
                fallback_regular(sh, mm, &h);
                break;
            }
    memset(c->out_deg, 0, (size_t)n * sizeof(int));
    for (int j = 0; j < m; j++) {
        int *o = c->out + (size_t)L[j] * s, k = 0;
        if (d == se) {
            for (int q = 0; q < d; q++)
                if (sh->adj[j * d + q] < m)
                    o[k++] = L[sh->adj[j * d + q]];
        } else {   /* complement of the drawn graph */
            sh->stamp++;
            sh->mark[j] = sh->stamp;
            for (int q = 0; q < d; q++)
                sh->mark[sh->adj[j * d + q]] = sh->stamp;
            for (int v = 0; v < m; v++)
                if (sh->mark[v] != sh->stamp)
                    o[k++] = L[v];
            shuffle(&h, o, k);
        }
        c->out_deg[L[j]] = k;
    }
    build_in_lists(sh, c);
}

/* ---- EL-Local: every node samples s distinct peers ---- */

/* Node j's idx-th candidate peer among the epoch's m live nodes L[]
 * (j at L[pos]): any other live node, or (`neighbours`) its live
 * neighbours, listed in sh->pool.  Before any failure L is 0 .. n-1 and
 * these are the plain candidates. */
static int cand(const el_draw *sh, const topo_graph *nbrs, const int *L, int pos, int idx)
{
    if (!nbrs)
        return L[idx < pos ? idx : idx + 1];
    return sh->pool[idx];
}

void el_draw_local(el_draw *sh, el_round *c, uint64_t r, const int *L, int m,
                   const topo_graph *nbrs)
{
    int n = sh->n, s = sh->s;
    memset(c->out_deg, 0, (size_t)n * sizeof(int));
    int all = nbrs == NULL;
    if (!all) {   /* who is live, for the neighbour pools */
        sh->live_stamp++;
        for (int q = 0; q < m; q++)
            sh->live_mark[L[q]] = sh->live_stamp;
    }
    for (int q = 0; q < m; q++) {
        int j = L[q], N = 0;
        if (all) {
            N = m - 1;
        } else {
            for (size_t e = nbrs->off[j]; e < nbrs->off[j + 1]; e++)
                if (sh->live_mark[nbrs->nbr[e]] == sh->live_stamp)
                    sh->pool[N++] = nbrs->nbr[e];
        }
        hstream h = stream_of(sh->seed, r, (uint64_t)j + 1);
        int se = s < N ? s : N, *o = c->out + (size_t)j * s, k = 0;
        sh->stamp++;
        for (int t = N - se; t < N; t++) {   /* Floyd's sample of se of N */
            int v = cand(sh, nbrs, L, q, uniform(&h, t + 1));
            if (sh->mark[v] == sh->stamp)
                v = cand(sh, nbrs, L, q, t);
            sh->mark[v] = sh->stamp;
            o[k++] = v;
        }
        shuffle(&h, o, se);
        c->out_deg[j] = se;
    }
    build_in_lists(sh, c);
}

