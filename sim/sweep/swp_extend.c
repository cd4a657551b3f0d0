/* swp_extend.c -- a sweep folder that meets a different plan: a sweep
 * extended with more replicates or more grid values, or resumed by another
 * binary.  Every completed run in the folder is identified by what it ran
 * (the resolved scenario with its seed, as its run.json records it), not by
 * its name, since the names carry indices that move when the grid grows;
 * each must be a run of the new plan, or the folder holds another sweep and
 * is refused.  The runs found are renamed to their new names (through
 * hidden runs/.keep.NAME folders, so that two renames never meet) and the
 * new sweep.json and runs.csv are written, after which the sweep runs only
 * what is missing and the tables are what a sweep of the new plan from
 * scratch gives.  A folder made by another binary (dtsim version, git
 * commit or CBLAS) is refused unless forced; then each run keeps its own
 * commit in runs.csv.  It runs nothing itself and reads only the files the
 * sweep wrote.
 */
#define _GNU_SOURCE  /* strdup, strndup, open_memstream */
#include "swp.h"
#include "swp_internal.h"
#include "out.h"
#include "scn.h"

#include <dirent.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#define KEEP_PREFIX ".keep."

/* The string value of a top-level key in JSON that out_json indented
 * (sweep.json, run.json): "\n  \"KEY\": \"VALUE\""; NULL when absent. */
static char *top_string(const char *text, const char *key)
{
    char pat[64];
    snprintf(pat, sizeof pat, "\n  \"%s\": \"", key);
    const char *p = strstr(text, pat);
    if (!p)
        return NULL;
    p += strlen(pat);
    return strndup(p, strcspn(p, "\"\n"));
}

/* run.json's "scenario": its last key, the loader's canonical text
 * (out_json_raw), up to the closing brace of run.json. */
static char *run_scenario(const char *text)
{
    const char *p = NULL, *q;
    for (q = strstr(text, "\n  \"scenario\": "); q; q = strstr(q + 1, "\n  \"scenario\": "))
        p = q;
    if (!p)
        return NULL;
    p += strlen("\n  \"scenario\": ");
    size_t n = strlen(p);
    if (n < 3 || strcmp(p + n - 3, "\n}\n") != 0)
        return NULL;
    return strndup(p, n - 3);
}

static uint64_t fnv1a(const char *s)
{
    uint64_t h = UINT64_C(1469598103934665603);
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * UINT64_C(1099511628211);
    return h;
}

typedef struct keyed {
    uint64_t hash;
    size_t   run;
} keyed;

static int by_hash(const void *a, const void *b)
{
    const keyed *x = a, *y = b;
    return x->hash < y->hash ? -1 : x->hash > y->hash ? 1 : (x->run > y->run) - (x->run < y->run);
}

/* What run i of pl runs: the resolved scenario of its overrides, loaded
 * exactly as swp_i_run_one loads it. */
static char *run_key(const swp_spec *spec, const swp_plan *pl, const swp_run *run)
{
    size_t n_ov = spec->n_sets + pl->n_params + 1, n = 0;
    const char **ov = calloc(n_ov, sizeof *ov);
    char **kv = calloc(pl->n_params + 1, sizeof *kv);
    char seed[64], *key = NULL;
    if (!ov || !kv)
        goto out_free;
    for (size_t i = 0; i < spec->n_sets; i++)
        ov[n++] = spec->sets[i];
    for (size_t k = 0; k < pl->n_params; k++) {
        size_t len = strlen(pl->param_path[k]) + strlen(pl->point_value[run->point][k]) + 2;
        if (!(kv[k] = malloc(len)))
            goto out_free;
        snprintf(kv[k], len, "%s=%s", pl->param_path[k], pl->point_value[run->point][k]);
        ov[n++] = kv[k];
    }
    snprintf(seed, sizeof seed, "seed=%llu", (unsigned long long)run->seed);
    ov[n++] = seed;
    scn_scenario s;
    scn_error se;
    if (scn_load(spec->scenario, ov, n, &s, &se) == 0) {
        key = strdup(s.resolved_json);
        scn_fini(&s);
    }
out_free:
    for (size_t k = 0; kv && k < pl->n_params; k++)
        free(kv[k]);
    free(kv);
    free(ov);
    return key;
}

void swp_i_finish_adopt(const swp_plan *pl, const char *dir)
{
    for (size_t i = 0; i < pl->n_runs; i++) {
        char from[4096], to[4096];
        snprintf(from, sizeof from, "%s/runs/" KEEP_PREFIX "%s", dir, pl->runs[i].name);
        snprintf(to, sizeof to, "%s/runs/%s", dir, pl->runs[i].name);
        struct stat sb;
        if (stat(from, &sb) == 0 && !swp_i_complete(dir, pl->runs[i].name))
            rename(from, to);
    }
}

typedef struct found {
    char  *folder;   /* its name under runs/ now */
    size_t run;      /* the run of the new plan it is */
} found;

int swp_i_adopt(const swp_spec *spec, const swp_plan *pl, const char *dir, const char *old,
                int force, char *err, size_t es)
{
    const char *commit = out_provenance_commit(spec->provenance);
    char **keys = calloc(pl->n_runs ? pl->n_runs : 1, sizeof *keys);
    char **commits = calloc(pl->n_runs ? pl->n_runs : 1, sizeof *commits);
    keyed *index = malloc((pl->n_runs ? pl->n_runs : 1) * sizeof *index);
    found *fd = NULL;
    size_t n_found = 0, cap = 0;
    DIR *d = NULL;
    int rc = -1;
    if (!keys || !commits || !index)
        goto out_oom;

    /* the binary that made the folder */
    static const char *const bin_keys[] = { "dtsim_version", "git_commit", "cblas" };
    const char *now[3] = { DTSIM_VERSION, commit, DTSIM_CBLAS };
    for (int k = 0; k < 3 && !force; k++) {
        char *was = top_string(old, bin_keys[k]);
        int same = was && strcmp(was, now[k]) == 0;
        if (!same) {
            snprintf(err, es, "%s/sweep.json: error: %s was made by another dtsim binary (%s "
                     "%s, this one %s): its runs may differ from what this binary computes; "
                     "rerun with --force to go on with this one (each run's commit is kept in "
                     "runs.csv), or use the binary that made it", dir, dir, bin_keys[k],
                     was ? was : "absent", now[k]);
            free(was);
            goto out_free;
        }
        free(was);
    }

    /* what each run of the new plan runs */
    for (size_t i = 0; i < pl->n_runs; i++) {
        if (!(keys[i] = run_key(spec, pl, &pl->runs[i]))) {
            snprintf(err, es, "%s: error: cannot load the scenario of run %s again (changed "
                     "under the sweep?)", spec->scenario, pl->runs[i].name);
            goto out_free;
        }
        index[i] = (keyed){ fnv1a(keys[i]), i };
    }
    qsort(index, pl->n_runs, sizeof *index, by_hash);

    /* every completed run in the folder must be one of them */
    char runs[4096];
    snprintf(runs, sizeof runs, "%s/runs", dir);
    if (!(d = opendir(runs))) {
        snprintf(err, es, "%s: error: cannot read directory: %s", runs, strerror(errno));
        goto out_free;
    }
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        const char *name = e->d_name;
        if (name[0] == '.' && strncmp(name, KEEP_PREFIX, strlen(KEEP_PREFIX)) != 0)
            continue;   /* ".", "..", workers' .part. folders */
        if (!swp_i_complete(dir, name))
            continue;
        char p[4096 + 512];
        snprintf(p, sizeof p, "%s/%s/run.json", runs, name);
        char *text = swp_i_read_file(p), *scen = text ? run_scenario(text) : NULL;
        char *made_by = text ? top_string(text, "git_commit") : NULL;
        free(text);
        size_t lo = 0, hi = pl->n_runs, hit = SIZE_MAX;
        uint64_t h = scen ? fnv1a(scen) : 0;
        while (scen && lo < hi) {   /* the first entry of hash h */
            size_t mid = lo + (hi - lo) / 2;
            if (index[mid].hash < h)
                lo = mid + 1;
            else
                hi = mid;
        }
        for (size_t k = lo; scen && k < pl->n_runs && index[k].hash == h; k++)
            if (strcmp(keys[index[k].run], scen) == 0) {
                hit = index[k].run;
                break;
            }
        free(scen);
        if (hit == SIZE_MAX) {
            snprintf(err, es, "%s/sweep.json: error: %s holds a different sweep: its run "
                     "runs/%s is not a run of this one (a sweep folder grows by more "
                     "--replicates or grid values, everything else the same); choose another "
                     "-o or remove it", dir, dir, name);
            free(made_by);
            goto out_free;
        }
        if (!force && (!made_by || strcmp(made_by, commit) != 0)) {
            snprintf(err, es, "%s: error: made by another dtsim binary (git %s, this one %s); "
                     "rerun with --force to keep it beside this binary's runs (runs.csv names "
                     "each run's commit)", p, made_by ? made_by : "unknown", commit);
            free(made_by);
            goto out_free;
        }
        if (commits[hit]) {   /* a second copy of one run (an adoption cut short) */
            free(made_by);
            continue;
        }
        commits[hit] = made_by ? made_by : strdup("unknown");
        if (n_found == cap) {
            size_t nc = cap ? 2 * cap : 64;
            found *nf = realloc(fd, nc * sizeof *nf);
            if (!nf)
                goto out_oom;
            fd = nf;
            cap = nc;
        }
        if (!(fd[n_found].folder = strdup(name)))
            goto out_oom;
        fd[n_found++].run = hit;
    }
    closedir(d);
    d = NULL;

    /* each found run to a hidden name, the new plan's files, then each to
     * its name: a kill in between leaves .keep. folders that the next
     * execution of either plan finds again */
    for (size_t k = 0; k < n_found; k++) {
        const char *to_name = pl->runs[fd[k].run].name;
        if (strcmp(fd[k].folder, to_name) == 0)
            continue;
        char from[4096 + 512], to[4096 + 512];
        snprintf(from, sizeof from, "%s/%s", runs, fd[k].folder);
        snprintf(to, sizeof to, "%s/" KEEP_PREFIX "%s", runs, to_name);
        if (strcmp(fd[k].folder + (fd[k].folder[0] == '.' ? strlen(KEEP_PREFIX) : 0), to_name)
                != 0
            && rename(from, to) != 0) {
            snprintf(err, es, "%s: error: cannot rename to %s: %s", from, to, strerror(errno));
            goto out_free;
        }
    }
    char *text = swp_i_render_runs(pl, (const char *const *)commits, commit);
    if (!text)
        goto out_oom;
    out_file *o = out_file_open(dir, "runs.csv", err, es);
    if (o)
        fputs(text, out_file_stream(o));
    free(text);
    if (!o || out_file_commit(o, err, es) != 0
        || !(o = out_file_open(dir, "sweep.json", err, es)))
        goto out_free;
    fputs(pl->manifest, out_file_stream(o));
    if (out_file_commit(o, err, es) != 0)
        goto out_free;
    swp_i_finish_adopt(pl, dir);
    rc = 0;
    goto out_free;

out_oom:
    snprintf(err, es, "dtsim sweep: error: out of memory");
out_free:
    if (d)
        closedir(d);
    for (size_t k = 0; k < n_found; k++)
        free(fd[k].folder);
    free(fd);
    for (size_t i = 0; keys && i < pl->n_runs; i++)
        free(keys[i]);
    for (size_t i = 0; commits && i < pl->n_runs; i++)
        free(commits[i]);
    free(keys);
    free(commits);
    free(index);
    return rc;
}
