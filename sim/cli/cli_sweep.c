/* cli_sweep.c -- `dtsim sweep` and `dtsim merge`: argument parsing and
 * messages around the sweep module (sim/sweep/), which plans, runs and
 * gathers.  Exit status: 0 success; 1 a run failed or stalled, or runs are
 * missing at a merge; 2 bad usage, a bad grid point, a directory holding
 * another sweep, or merge folders that are not shards of one sweep; 130 interrupted by Ctrl-C (completed runs are kept).
 */
#include "cli.h"
#include "swp.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define MAX_ARGS 256

static int usage_error(const char *cmd, const char *msg)
{
    return cli_usage_error(cmd, "%s", msg);
}

/* Digits only: strtol alone would take " 1" and "+1". */
static int parse_int(const char *s, long min, long max, long *out)
{
    char *end;
    if (s[0] < '0' || s[0] > '9')
        return -1;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (errno || *end || end == s || v < min || v > max)
        return -1;
    *out = v;
    return 0;
}

static int count_cores(void)
{
    return cli_cores();
}

/* After the arguments: plan, run (here or over MPI ranks), gather. */
static int sweep_ranked(const swp_spec *sp, const swp_exec_options *eo_, int quiet, int rank, int size)
{
    swp_spec spec = *sp;
    swp_exec_options eo = *eo_;
    char err[8192];
    swp_plan plan;
    if (swp_plan_build(&spec, &plan, err, sizeof err) != 0) {
        if (rank == 0) {
            fprintf(stderr, "%s\n", err);
            cli_note_override("sweep", err, spec.sets, spec.n_sets);
        }
        return 2;
    }
    if (plan.n_skipped && rank == 0)
        fprintf(stderr, "%sdtsim sweep: note: --keep-going: %zu of %zu grid points skipped "
                "(listed in %s/sweep.json); %zu runs planned\n", plan.skipped, plan.n_skipped,
                plan.n_points, eo.out_dir, plan.n_runs);
    cli_interrupt_install();
    swp_exec_result xr;
    int rc = 0;
#ifdef DTSIM_MPI
    int xrc = size > 1 ? swp_execute_mpi(&spec, &plan, &eo, rank, size, &xr, err, sizeof err)
                       : swp_execute(&spec, &plan, &eo, &xr, err, sizeof err);
#else
    (void)size;
    int xrc = swp_execute(&spec, &plan, &eo, &xr, err, sizeof err);
#endif
    if (xrc == 0 && rank == 0 && spec.provenance) {
        const char *here[1] = { eo.out_dir };
        if (swp_provenance_append(eo.out_dir, here, 1, spec.provenance, err, sizeof err) != 0) {
            fprintf(stderr, "%s\n", err);
            swp_plan_fini(&plan);
            return 1;
        }
    }
    if (xrc != 0 || rank != 0) {
        if (xrc != 0 && rank == 0)
            fprintf(stderr, "%s\n", err);
        swp_plan_fini(&plan);
        return xrc != 0 ? 2 : 0;
    }
    if (xr.interrupted) {
        fprintf(stderr, "dtsim sweep: interrupted: %zu of %zu runs complete in %s; run the same "
                "command again to resume\n", xr.skipped + xr.done, xr.in_shard, eo.out_dir);
        swp_plan_fini(&plan);
        return cli_exit_interrupted();
    }
    if (xr.failed) {
        fprintf(stderr, "dtsim sweep: error: %zu of %zu runs failed; the others are kept in %s "
                "and the same command runs the failed ones again\n", xr.failed, xr.in_shard,
                eo.out_dir);
        swp_plan_fini(&plan);
        return 1;
    }
    swp_collect_result cr;
    const char *dirs[1] = { eo.out_dir };
    if (swp_collect(dirs, 1, eo.out_dir, &cr, err, sizeof err) != 0) {
        fprintf(stderr, "%s\n", err);
        rc = cr.bad_input ? 2 : 1;
    } else if (cr.missing) {
        if (!quiet)
            printf("dtsim sweep: shard %d/%d: %zu runs (%zu were complete); %zu of %zu runs "
                   "of the sweep are still missing in %s: run `dtsim merge` when every shard "
                   "is done\n", eo.shard_k, eo.shard_n, xr.in_shard, xr.skipped, cr.missing,
                   cr.n_runs, eo.out_dir);
    } else {
        if (!quiet)
            printf("dtsim sweep: %zu runs (%zu ran now, %zu were complete), wrote %s/sweep.csv "
                   "and summary.csv\n", cr.n_runs, xr.done, cr.n_runs - xr.done, eo.out_dir);
        if (cr.not_ok) {
            fprintf(stderr, "dtsim sweep: error: %zu of %zu runs stalled (status in "
                    "%s/summary.csv)\n", cr.not_ok, cr.n_runs, eo.out_dir);
            rc = 1;
        }
    }
    swp_plan_fini(&plan);
    return rc;
}

static int run_sweep(const swp_spec *spec, const swp_exec_options *eo, int quiet)
{
    const char *ws = getenv("OMPI_COMM_WORLD_SIZE");
    if (!ws)
        ws = getenv("PMI_SIZE");
    int launched = ws && atoi(ws) > 1;
#ifdef DTSIM_MPI
    if (launched) {
        int rank, size;
        if (swp_mpi_begin(&rank, &size) != 0) {
            fputs("dtsim sweep: error: MPI_Init failed\n", stderr);
            return 1;
        }
        int rc = sweep_ranked(spec, eo, quiet, rank, size);
        swp_mpi_end();
        return rc;
    }
#else
    if (launched) {
        fputs("dtsim sweep: error: started as one of several MPI ranks, but this dtsim was "
              "built without MPI (install libopenmpi-dev and rebuild, or use --shard K/N)\n",
              stderr);
        return 2;
    }
#endif
    return sweep_ranked(spec, eo, quiet, 0, 1);
}

int cli_sweep(int argc, char **argv)
{
    static swp_axis_arg axes[MAX_ARGS];
    static const char *sets[MAX_ARGS + 1];
    char seed_set[64] = "", out_buf[4096], m[512];
    swp_spec spec = { .axes = axes, .sets = sets, .replicates = 1 };
    swp_exec_options eo = { .jobs = count_cores(), .shard_k = 1, .shard_n = 1,
                            .interrupt = &cli_interrupted };
    int quiet = 0;
    double progress_s = NAN;
    size_t n_sets = 0;
    for (int i = 0; i < argc; i++) {
        const char *s = argv[i];
        const char *val = i + 1 < argc ? argv[i + 1] : NULL;
        long v;
        if (strcmp(s, "--grid") == 0 || strcmp(s, "--zip") == 0 || strcmp(s, "--set") == 0) {
            if (!val) {
                snprintf(m, sizeof m, "%s needs PATH=VALUE", s);
                return usage_error("sweep", m);
            }
            if (spec.n_axes == MAX_ARGS || n_sets == MAX_ARGS)
                return usage_error("sweep", "too many options");
            if (s[2] == 's')
                sets[n_sets++] = val;
            else
                axes[spec.n_axes++] = (swp_axis_arg){ val, s[2] == 'z' };
            i++;
        } else if (strcmp(s, "--replicates") == 0) {
            if (!val || parse_int(val, 1, 1000000, &v) != 0)
                return usage_error("sweep", "--replicates needs a whole number >= 1");
            spec.replicates = (int)v;
            i++;
        } else if (strcmp(s, "-j") == 0 || strcmp(s, "--jobs") == 0) {
            if (!val || parse_int(val, 1, 4096, &v) != 0)
                return usage_error("sweep", "-j needs a whole number >= 1");
            eo.jobs = (int)v;
            i++;
        } else if (strcmp(s, "--threads") == 0) {
            if ((eo.threads = cli_parse_threads(val)) < 0)
                return usage_error("sweep", "--threads needs a whole number from 1 to 4096");
            i++;
        } else if (strcmp(s, "--shard") == 0) {
            const char *slash = val ? strchr(val, '/') : NULL;
            long k, n;
            char kt[32];
            if (!slash || (size_t)(slash - val) >= sizeof kt)
                return usage_error("sweep", "--shard needs K/N with 1 <= K <= N");
            snprintf(kt, sizeof kt, "%.*s", (int)(slash - val), val);
            if (parse_int(kt, 1, 1000000, &k) != 0 || parse_int(slash + 1, 1, 1000000, &n) != 0
                || k > n)
                return usage_error("sweep", "--shard needs K/N with 1 <= K <= N");
            eo.shard_k = (int)k;
            eo.shard_n = (int)n;
            i++;
        } else if (strcmp(s, "--seed") == 0) {
            char *end;
            errno = 0;
            unsigned long long sv = val ? strtoull(val, &end, 10) : 0;
            if (!val || errno || *end || val[0] < '0' || val[0] > '9')
                return usage_error("sweep", "--seed needs a whole number >= 0");
            snprintf(seed_set, sizeof seed_set, "seed=%llu", sv);
            i++;
        } else if (strcmp(s, "-o") == 0 || strcmp(s, "--output") == 0) {
            if (!val)
                return usage_error("sweep", "-o needs a directory");
            eo.out_dir = val;
            i++;
        } else if (strcmp(s, "--quiet") == 0) {
            quiet = 1;
        } else if (strcmp(s, "--progress") == 0) {
            if (cli_parse_progress(val, &progress_s) != 0)
                return usage_error("sweep", "--progress needs SECONDS >= 0 or \"each\"");
            i++;
        } else if (strcmp(s, "--keep-going") == 0) {
            spec.keep_going = 1;
        } else if (strcmp(s, "--force") == 0) {
            eo.force = 1;
        } else if (cli_std_option("sweep", s) == 0) {
            return 0;
        } else if (s[0] == '-' && s[1] != '\0') {
            snprintf(m, sizeof m, "unknown option '%s'", s);
            return usage_error("sweep", m);
        } else if (spec.scenario) {
            return usage_error("sweep", "one scenario file at a time");
        } else {
            spec.scenario = s;
        }
    }
    if (!spec.scenario)
        return usage_error("sweep", "no scenario file given");
    /* --quiet turns the default progress off; an explicit --progress wins */
    eo.progress_s = !isnan(progress_s) ? progress_s : quiet ? 0 : OUT_PROGRESS_DEFAULT_S;
    if (seed_set[0])
        sets[n_sets++] = seed_set;
    spec.n_sets = n_sets;
    if (!eo.out_dir) {
        const char *base = strrchr(spec.scenario, '/');
        base = base ? base + 1 : spec.scenario;
        size_t len = strlen(base);
        if (len > 5 && strcmp(base + len - 5, ".json") == 0)
            len -= 5;
        snprintf(out_buf, sizeof out_buf, "results/%.*s-sweep", (int)len, base);
        eo.out_dir = out_buf;
    }
    if (!eo.threads)   /* the cores shared among the worker processes, when worth it */
        eo.threads = -(count_cores() / eo.jobs > 1 ? count_cores() / eo.jobs : 1);

    out_provenance prov;
    cli_provenance(&prov, "sweep", spec.sets, spec.n_sets);
    spec.provenance = &prov;
    return run_sweep(&spec, &eo, quiet);
}

int cli_merge(int argc, char **argv)
{
    const char **dirs = calloc((size_t)argc + 1, sizeof *dirs);
    const char *out = NULL;
    size_t n = 0;
    int quiet = 0, rc = 0;
    if (!dirs)
        return 1;
    for (int i = 0; i < argc; i++) {
        if (strcmp(argv[i], "-o") == 0 || strcmp(argv[i], "--output") == 0) {
            if (i + 1 >= argc) {
                free(dirs);
                return usage_error("merge", "-o needs a directory");
            }
            out = argv[++i];
        } else if (strcmp(argv[i], "--quiet") == 0) {
            quiet = 1;
        } else if (cli_std_option("merge", argv[i]) == 0) {
            free(dirs);
            return 0;
        } else if (argv[i][0] == '-' && argv[i][1] != '\0') {
            char m[512];
            snprintf(m, sizeof m, "unknown option '%s'", argv[i]);
            free(dirs);
            return usage_error("merge", m);
        } else {
            dirs[n++] = argv[i];
        }
    }
    if (n == 0 || (!out && n > 1)) {
        free(dirs);
        return usage_error("merge", n ? "-o OUT is needed with more than one directory"
                                      : "no sweep directory given");
    }
    if (!out)
        out = dirs[0];
    char err[8192];
    swp_collect_result cr;
    if (swp_collect(dirs, n, out, &cr, err, sizeof err) != 0) {
        fprintf(stderr, "%s\n", err);
        rc = cr.bad_input ? 2 : 1;
    } else if (cr.missing) {
        fprintf(stderr, "dtsim merge: error: %zu of %zu runs are missing (%s); nothing written\n",
                cr.missing, cr.n_runs, err);
        rc = 1;
    } else {
        out_provenance prov;
        cli_provenance(&prov, "merge", NULL, 0);
        if (swp_provenance_append(out, dirs, n, &prov, err, sizeof err) != 0) {
            fprintf(stderr, "%s\n", err);
            rc = 1;
        } else if (!quiet) {
            printf("dtsim merge: %zu runs from %zu director%s, wrote %s/sweep.csv and "
                   "summary.csv\n", cr.n_runs, n, n == 1 ? "y" : "ies", out);
        }
    }
    free(dirs);
    return rc;
}
