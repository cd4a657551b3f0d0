/* swp.h -- sweeps: a grid of runs over scenario parameters and replicate
 * seeds, run by worker processes into one folder per run, resumable after a
 * kill, sliceable into disjoint shards for several machines, and gathered
 * into one long sweep.csv and a summary.csv of one row per run.  It drives
 * the runner; it holds no simulation logic and parses no JSON (grid values
 * go through the scenario loader's --set machinery).
 *
 * A sweep directory DIR holds
 *   sweep.json   the identity of the sweep (dtsim version, resolved base
 *                scenario, --set, axes, replicates); a re-run or a shard
 *                must produce the same bytes or is refused
 *   runs.csv     the plan: run,name,<one column per parameter>,replicate,seed
 *   runs/NAME/   one folder per completed run: metrics.csv, nodes.csv,
 *                run.json, summary.csv (one row); it appears by rename when
 *                the run is complete, so its presence means complete
 *   sweep.csv    every metrics row of every run, prefixed by the run's
 *                run,<parameters>,replicate,seed; byte-identical whatever -j
 *   summary.csv  one row per run with the same prefix (contains wall time,
 *                so it is not byte-identical between executions)
 */
#ifndef SWP_H
#define SWP_H

#include <signal.h>
#include <stddef.h>
#include <stdint.h>

#include "out.h"   /* out_provenance */

/* One command-line axis, in the order given. */
typedef struct swp_axis_arg {
    const char *text;   /* "path=v1,v2,..." */
    int         zip;    /* 1: --zip (paired with the other --zip axes) */
} swp_axis_arg;

typedef struct swp_spec {
    const char *scenario;              /* scenario file */
    const char *const *sets;           /* fixed "path=value" overrides, applied first */
    size_t      n_sets;
    const swp_axis_arg *axes;
    size_t      n_axes;
    int         replicates;            /* >= 1 */
    /* 1: a grid point that fails validation is left out of the plan (and
     * listed in sweep.json's "skipped" and swp_plan.skipped) instead of
     * failing the plan; every point failing still fails it. */
    int         keep_going;
    /* The binary's commit and the invocation, for sweep.json's
     * "git_commit", runs.csv's git_commit column (hence sweep.csv's and
     * summary.csv's) and each run's run.json; NULL: "unknown". */
    const out_provenance *provenance;
} swp_spec;

typedef struct swp_run {
    size_t   index;      /* 0-based position in the plan */
    char    *name;       /* folder name under runs/ */
    size_t   point;      /* grid point (runs of one point differ only in seed) */
    int      replicate;  /* 0 .. replicates-1 */
    uint64_t seed;       /* the run's scenario seed */
} swp_run;

typedef struct swp_plan {
    size_t   n_params;
    char   **param_path;   /* column names: the paths as given */
    size_t   n_points;
    char  ***point_value;  /* point_value[p][k]: text of parameter k at point p */
    swp_run *runs;         /* n_points * replicates, replicate varying fastest */
    size_t   n_runs;
    char    *manifest;     /* sweep.json text */
    char    *runs_csv;     /* runs.csv text */
    size_t   n_skipped;    /* grid points left out by keep_going */
    char    *skipped;      /* their messages, one or more lines each, each
                              ending in a newline; NULL when none */
    struct run_data_cache *data;  /* the data sets planning loaded, for the
                              runs (forked workers borrow them); may be NULL */
} swp_plan;

/* Parses the axes, expands the grid (first axis slowest; the --zip axes
 * form one axis at the place of the first --zip; replicates fastest),
 * derives seeds and validates every grid point by loading and preparing it
 * as a run would.  Returns 0, or -1 with the user's message (one or more
 * lines, no trailing newline) in err: a bad axis, or the scenario error of
 * the first bad point followed by a note naming its --grid values.  On
 * success the caller owns *plan (swp_plan_fini). */
int  swp_plan_build(const swp_spec *spec, swp_plan *plan, char *err, size_t err_size);
void swp_plan_fini(swp_plan *plan);

/* The seed of replicate r of a grid point whose scenario seed is seed: the
 * seed itself for r = 0 (so a one-replicate sweep repeats `dtsim run`),
 * else splitmix64-derived from (seed, r), kept to 53 bits so that every
 * JSON or CSV reader holds it exactly. */
uint64_t swp_replicate_seed(uint64_t seed, int replicate);

typedef struct swp_exec_options {
    const char *out_dir;
    int   jobs;            /* worker processes, >= 1 */
    int   threads;         /* of each run's model math (run_options.threads, so
                              -N: up to N when a step is worth it) */
    int   shard_k, shard_n;/* run the runs with index % n == k - 1; 1/1: all */
    int   force;           /* accept a folder made by another binary (docs/sweeps.md) */
    double progress_s;     /* out_progress_init's period: 0 no progress, > 0 a
                              line redrawn on a terminal, else one every
                              progress_s of wall time; OUT_PROGRESS_EACH a
                              line per finished run */
    const volatile sig_atomic_t *interrupt;  /* set by a SIGINT handler */
} swp_exec_options;

typedef struct swp_exec_result {
    size_t in_shard;       /* runs of this shard */
    size_t skipped;        /* already complete before this execution */
    size_t done;           /* completed by this execution */
    size_t failed;         /* worker exited without completing its run */
    int    interrupted;
} swp_exec_result;

/* Writes (or checks) sweep.json and runs.csv in out_dir, removes leftovers
 * of this host's dead workers, then runs every incomplete run of the shard
 * in up to `jobs` forked workers.  Returns 0 (see res), or -1 with err set
 * when out_dir is unusable or holds a different sweep (exit status 2). */
int  swp_execute(const swp_spec *spec, const swp_plan *plan, const swp_exec_options *opt,
                 swp_exec_result *res, char *err, size_t err_size);

typedef struct swp_collect_result {
    size_t n_runs;
    size_t missing;        /* runs of the plan found in none of the dirs */
    size_t not_ok;         /* runs whose status is not "ok" (stalled) */
    int    bad_input;      /* on -1: a directory is not a sweep folder or
                              not a shard of the same sweep, or a file is
                              corrupt or inconsistent (exit status 2) */
} swp_collect_result;

/* Writes dir/provenance.jsonl: the lines of every from[k]/provenance.jsonl
 * in order (missing files are skipped), then p as one more line; through a
 * temporary file, so dir may be one of from.  The sweep's history of
 * invocations (sweep, resume, shard, merge), kept apart from sweep.json,
 * which shards compare byte for byte.  0, or -1 with err set. */
int  swp_provenance_append(const char *dir, const char *const *from, size_t n_from,
                           const out_provenance *p, char *err, size_t err_size);

/* Gathers the runs of the sweep in dirs (one directory, or the directories
 * of shards, which must hold byte-identical sweep.json and runs.csv) into
 * out_dir: sweep.json, runs.csv, sweep.csv and summary.csv.  When runs are
 * missing nothing is written, res->missing says how many and err names the
 * first.  Returns 0, or -1 with err set. */
int  swp_collect(const char *const *dirs, size_t n_dirs, const char *out_dir,
                 swp_collect_result *res, char *err, size_t err_size);

#ifdef DTSIM_MPI
/* ---- MPI (built when CMake finds MPI; see docs/cluster.md) ---- */

/* For a process started by mpirun/mpiexec with more than one rank
 * (the CLI checks OMPI_COMM_WORLD_SIZE or PMI_SIZE): MPI_Init and its rank and the world size; -1 on failure. */
int  swp_mpi_begin(int *rank, int *size);
void swp_mpi_end(void);
/* Every rank calls it: rank 0 prepares the folder and hands the shard's
 * incomplete runs to ranks 1..size-1 one at a time, as they ask; res is
 * meaningful on rank 0 only.  Returns 0, or -1 with err set (on rank 0:
 * the folder is unusable or holds another sweep). */
int  swp_execute_mpi(const swp_spec *spec, const swp_plan *plan, const swp_exec_options *opt,
                     int rank, int size, swp_exec_result *res, char *err, size_t err_size);
#endif

#endif
