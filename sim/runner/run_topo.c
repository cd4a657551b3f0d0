/* run_topo.c -- the topology statistics of run.json: bounded by default
 * (topo_compute_stats_bounded: set-up stays small beside the run at every
 * size), all of them with output.topology_stats "full", and, when the
 * caller names a cache folder (a sweep does: SWEEP/.topo-cache), read from
 * and written to a file keyed by everything the graph and the statistics
 * depend on, so that the runs of a sweep on one topology compute them
 * once.  It builds no graph and writes no run output.
 *
 * A cache file holds one line: the key (the topology's keys, nodes, the
 * derived topology seed, an edge list's size and modification time, the
 * mode), then the statistics with %.17g, so a value read back is the
 * value computed.  A file whose key differs (a hash collision) or that
 * does not parse is ignored and overwritten; one is written to a
 * temporary name and renamed, so a reader never sees half of it.
 */
#include "run_internal.h"

#include <errno.h>
#include <sys/stat.h>
#include <unistd.h>

static void cache_key(const run_sim *r, char *key, size_t n)
{
    const scn_scenario *s = r->s;
    struct stat st;
    long long size = -1, mtime = -1;
    if (s->topo_file && stat(s->topo_file, &st) == 0) {
        size = (long long)st.st_size;
        mtime = (long long)st.st_mtime;
    }
    snprintf(key, n, "v2|%s|n=%d|rows=%d|cols=%d|layers=%d|p=%.17g|degree=%d|k=%d|beta=%.17g|"
             "m=%d|file=%s|size=%lld|mtime=%lld|mixing=%d|lazy=%.17g|seed=%016llx|%s",
             topo_kind_name(s->topo_kind), s->n_nodes, s->topo_rows, s->topo_cols,
             s->topo_layers, s->topo_p, s->topo_degree, s->topo_k, s->topo_beta, s->topo_m,
             s->topo_file ? s->topo_file : "", size, mtime, (int)s->topo_mixing,
             s->topo_lazy_alpha,
             (unsigned long long)sim_rng_derive(s->seed, SIM_RNG_NO_NODE, SIM_RNG_TOPOLOGY),
             s->output_topology_full ? "full" : "bounded");
}

static uint64_t fnv1a(const char *t)
{
    uint64_t h = 1469598103934665603ull;
    for (; *t; t++)
        h = (h ^ (unsigned char)*t) * 1099511628211ull;
    return h;
}

static const char *solver_name(const char *t)
{
    return strcmp(t, "arpack") == 0   ? "arpack"
           : strcmp(t, "none") == 0   ? "none"
           : strcmp(t, "closed") == 0 ? "closed"
                                      : "dense";
}

/* 0 and st filled when path holds key's statistics. */
static int cache_read(const char *path, const char *key, topo_stats *st)
{
    FILE *f = fopen(path, "r");
    if (!f)
        return -1;
    char line[2048], solver[16];
    int ok = fgets(line, sizeof line, f) != NULL;
    fclose(f);
    size_t kl = strlen(key);
    if (!ok || strncmp(line, key, kl) != 0 || line[kl] != ' ')
        return -1;
    topo_stats t = { 0 };
    unsigned long long edges;
    if (sscanf(line + kl, " %d %llu %d %d %d %d %d %lf %lf %15s %d", &t.n, &edges,
               &t.degree_min, &t.degree_max, &t.diameter, &t.diameter_ok, &t.spectral_ok,
               &t.lambda2, &t.spectral_gap, solver, &t.bounded) != 11)
        return -1;
    t.n_edges = (size_t)edges;
    t.solver = solver_name(solver);
    *st = t;
    return 0;
}

/* Best effort: a cache that cannot be written costs the next run the
 * computation, nothing else. */
static void cache_write(const char *dir, const char *path, const char *key,
                        const topo_stats *st)
{
    char tmp[4200];
    if (mkdir(dir, 0777) != 0 && errno != EEXIST)
        return;
    snprintf(tmp, sizeof tmp, "%s.tmp.%ld", path, (long)getpid());
    FILE *f = fopen(tmp, "w");
    if (!f)
        return;
    fprintf(f, "%s %d %llu %d %d %d %d %d %.17g %.17g %s %d\n", key, st->n,
            (unsigned long long)st->n_edges, st->degree_min, st->degree_max, st->diameter,
            st->diameter_ok, st->spectral_ok, st->lambda2, st->spectral_gap,
            st->solver ? st->solver : "dense", st->bounded);
    if (fclose(f) != 0 || rename(tmp, path) != 0)
        unlink(tmp);
}

int run_i_topo_stats(const run_sim *r, const char *cache_dir, topo_stats *st)
{
    int full = r->s->output_topology_full;
    /* a learned W depends on the data too: not cached (at most 256 nodes,
     * the dense solver) */
    if (!cache_dir || r->s->topo_kind == TOPO_LEARNED)
        return full ? topo_compute_stats(r->g, st) : topo_compute_stats_bounded(r->g, st);
    char key[1024], path[4096];
    cache_key(r, key, sizeof key);
    snprintf(path, sizeof path, "%s/topo-%016llx.txt", cache_dir,
             (unsigned long long)fnv1a(key));
    if (cache_read(path, key, st) == 0)
        return 0;
    int rc = full ? topo_compute_stats(r->g, st) : topo_compute_stats_bounded(r->g, st);
    if (rc == 0)
        cache_write(cache_dir, path, key, st);
    return rc;
}
