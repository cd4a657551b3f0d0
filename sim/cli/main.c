/* main.c -- the dtsim command line: `run`, `validate` and `topo`, and the
 * dispatch to `sweep`, `merge` (cli_sweep.c) and `plot` (cli_plot.c).  It
 * parses arguments, loads the scenario, hands it to the runner and prints a
 * short summary, with a progress line on a terminal (for `topo`: the
 * topology's statistics, and its edge list or DOT to stdout or a file).
 * Exit status: 0 success, 1 a run that failed (stalled, diverged, stopped
 * by the watchdog, out of memory, output not written; all but the last
 * with their outputs written and the status in run.json), 2 bad usage or a
 * bad scenario (or one too large for the memory limit), 130 (143) a run
 * ended by Ctrl-C (SIGTERM) (its outputs are written and marked
 * "interrupted").  It holds no simulation logic.
 */
#include "cli.h"
#include "out.h"
#include "run.h"
#include "scn.h"
#include "topo.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_SETS 256

static const char usage[] =
    "usage: dtsim run SCENARIO.json [-o DIR] [--set PATH=VALUE]... [--seed N] [--quiet] [--force]\n"
    "       dtsim validate SCENARIO.json...\n"
    "       dtsim topo SCENARIO.json [--set PATH=VALUE]... [--edges | --dot] [-o FILE]\n"
    "       dtsim sweep SCENARIO.json [--grid PATH=V1,V2,...]... [--zip PATH=V1,V2,...]...\n"
    "                   [--replicates R] [-j N] [--shard K/N] [--set PATH=VALUE]... [-o DIR]\n"
    "       dtsim merge DIR... [-o OUT]\n"
    "       dtsim plot RUN_OR_SWEEP_DIR...\n"
    "       dtsim --version\n";

static int bad_usage(const char *msg)
{
    fprintf(stderr, "dtsim: error: %s\n%s", msg, usage);
    return 2;
}

typedef struct args {
    const char *scenario;
    const char *out_dir;
    const char *sets[MAX_SETS];
    size_t      n_sets;
    char        seed_set[64];
    int         quiet, edges, dot, force;
} args;

/* Options common to run and topo; returns 0 or an exit status. */
static int parse(int argc, char **argv, args *a, int allow_run_opts)
{
    memset(a, 0, sizeof *a);
    for (int i = 0; i < argc; i++) {
        const char *s = argv[i];
        const char *val = NULL;
        if (strcmp(s, "--set") == 0 || strncmp(s, "--set=", 6) == 0) {
            val = s[5] == '=' ? s + 6 : (i + 1 < argc ? argv[++i] : NULL);
            if (!val)
                return bad_usage("--set needs PATH=VALUE");
            if (a->n_sets == MAX_SETS)
                return bad_usage("too many --set options");
            a->sets[a->n_sets++] = val;
        } else if (strcmp(s, "-o") == 0 || strcmp(s, "--output") == 0) {
            if (i + 1 >= argc)
                return bad_usage(allow_run_opts ? "-o needs a directory" : "-o needs a file");
            a->out_dir = argv[++i];
        } else if (allow_run_opts && strcmp(s, "--seed") == 0) {
            if (i + 1 >= argc)
                return bad_usage("--seed needs a number");
            char *end;
            errno = 0;
            unsigned long long v = strtoull(argv[++i], &end, 10);
            if (errno || *end || argv[i][0] == '-' || argv[i][0] == '\0')
                return bad_usage("--seed needs a whole number >= 0");
            snprintf(a->seed_set, sizeof a->seed_set, "seed=%llu", v);
        } else if (allow_run_opts && strcmp(s, "--quiet") == 0) {
            a->quiet = 1;
        } else if (allow_run_opts && strcmp(s, "--force") == 0) {
            a->force = 1;   /* skip the memory check (docs/reliability.md) */
        } else if (!allow_run_opts && strcmp(s, "--edges") == 0) {
            a->edges = 1;
        } else if (!allow_run_opts && strcmp(s, "--dot") == 0) {
            a->dot = 1;
        } else if (s[0] == '-' && s[1] != '\0') {
            char m[256];
            snprintf(m, sizeof m, "unknown option '%s'", s);
            return bad_usage(m);
        } else if (a->scenario) {
            return bad_usage("one scenario file at a time");
        } else {
            a->scenario = s;
        }
    }
    if (!a->scenario)
        return bad_usage("no scenario file given");
    if (a->edges && a->dot)
        return bad_usage("--edges and --dot exclude each other");
    if (a->seed_set[0]) {
        if (a->n_sets == MAX_SETS)
            return bad_usage("too many --set options");
        a->sets[a->n_sets++] = a->seed_set;
    }
    if (a->force) {
        if (a->n_sets == MAX_SETS)
            return bad_usage("too many --set options");
        a->sets[a->n_sets++] = "limits.check_memory=false";
    }
    return 0;
}

static void default_out_dir(const char *scenario, char *buf, size_t size)
{
    const char *base = strrchr(scenario, '/');
    base = base ? base + 1 : scenario;
    size_t len = strlen(base);
    if (len > 5 && strcmp(base + len - 5, ".json") == 0)
        len -= 5;
    snprintf(buf, size, "results/%.*s", (int)len, base);
}

/* The progress line of one run: simulated time reached (and the share of
 * stop.time_s when there is one), events per second of wall time. */
typedef struct run_progress {
    out_progress pg;
    double horizon_s;
} run_progress;

static void on_progress(void *ctx, double t, uint64_t events)
{
    run_progress *p = ctx;
    double el = out_progress_elapsed(&p->pg);
    double eps = el > 0 ? (double)events / el : 0;
    char e[32];
    out_fmt_duration(e, sizeof e, el);
    if (isfinite(p->horizon_s) && p->horizon_s > 0)
        out_progress_draw(&p->pg, 0, "run: t=%.6g s simulated (%.0f%%), %.3g M events/s, %s",
                          t, 100 * t / p->horizon_s, eps / 1e6, e);
    else
        out_progress_draw(&p->pg, 0, "run: t=%.6g s simulated, %.3g M events/s, %s", t,
                          eps / 1e6, e);
}

static int cmd_run(int argc, char **argv)
{
    args a;
    int rc = parse(argc, argv, &a, 1);
    if (rc)
        return rc;
    char out_dir[4096];
    if (a.out_dir)
        snprintf(out_dir, sizeof out_dir, "%s", a.out_dir);
    else
        default_out_dir(a.scenario, out_dir, sizeof out_dir);

    scn_scenario s;
    scn_error err;
    if (scn_load(a.scenario, a.sets, a.n_sets, &s, &err) != 0) {
        fprintf(stderr, "%s\n", err.msg);
        return 2;
    }
    run_sim *r = run_prepare(&s, &err);
    if (!r) {
        fprintf(stderr, "%s\n", err.msg);
        scn_fini(&s);
        return 2;
    }
    run_progress prog = { .horizon_s = s.stop_time_s };
    out_progress_init(&prog.pg, stderr, !a.quiet);
    run_options opt = { .out_dir = out_dir, .interrupt = &cli_interrupted,
                        .on_progress = prog.pg.active ? on_progress : NULL, .hook_ctx = &prog };
    run_result res;
    char msg[4096];
    rc = 0;
    cli_interrupt_install();
    int xrc = run_execute(r, &opt, &res, msg, sizeof msg);
    out_progress_end(&prog.pg);
    if (xrc != 0) {
        fprintf(stderr, "%s\n", msg);
        rc = 1;
    } else {
        if (!a.quiet) {
            const run_result *x = &res;
            const int timing_only = s.model_type == NULL;
            if (timing_only)
                printf("dtsim: %s: %s on %d nodes (%s), timing only: messages of %.6g bytes\n",
                       s.path, s.algorithm, s.n_nodes, s.topology, s.model_message_bytes);
            else
                printf("dtsim: %s: %s on %d nodes (%s), %zu parameters per model\n", s.path,
                       s.algorithm, s.n_nodes, s.topology, x->n_params);
            printf("  stopped by %s at t=%.6g s simulated, %llu steps",
                   x->status != RUN_INTERRUPTED ? x->stop_reason
                   : cli_interrupted == SIGTERM ? "SIGTERM" : "ctrl-c", x->sim_time_s,
                   (unsigned long long)x->last.steps);
            if (timing_only)
                printf(", %.6g bytes sent\n", x->last.bytes_sent);
            else
                printf(", %.4g epochs\n  final: train loss %.6g, test loss %.6g, test accuracy "
                       "%.4f, consensus distance %.3g\n", x->last.epochs, x->last.train_loss,
                       x->last.test_loss, x->last.test_accuracy, x->last.consensus_distance);
            printf("  %llu events in %.3g s CPU (%.3g M events/s), %.3g s wall\n",
                   (unsigned long long)x->events, x->cpu_s,
                   x->cpu_s > 0 ? (double)x->events / x->cpu_s / 1e6 : 0.0, x->wall_s);
            printf("  wrote %s/metrics.csv, nodes.csv, run.json\n", out_dir);
        }
        if (res.status == RUN_STALLED || res.status == RUN_DIVERGED
            || res.status == RUN_NO_PROGRESS || res.status == RUN_LIMIT) {
            fprintf(stderr, "%s: error: %s\n", s.path, res.message);
            rc = 1;
        } else if (res.status == RUN_INTERRUPTED) {
            fprintf(stderr, "%s: interrupted at t=%.6g s simulated; %s/ holds everything "
                    "measured so far (status \"interrupted\" in run.json)\n", s.path,
                    res.sim_time_s, out_dir);
            rc = cli_exit_interrupted();
        }
    }
    run_destroy(r);
    scn_fini(&s);
    return rc;
}

static int cmd_validate(int argc, char **argv)
{
    if (argc == 0)
        return bad_usage("validate needs at least one scenario file");
    int bad = 0;
    for (int i = 0; i < argc; i++) {
        scn_scenario s;
        scn_error err;
        if (scn_load(argv[i], NULL, 0, &s, &err) != 0) {
            fprintf(stderr, "%s\n", err.msg);
            bad = 1;
            continue;
        }
        run_sim *r = run_prepare(&s, &err);
        if (!r) {
            fprintf(stderr, "%s\n", err.msg);
            bad = 1;
        } else {
            printf("%s: ok\n", argv[i]);
        }
        run_destroy(r);
        scn_fini(&s);
    }
    return bad ? 2 : 0;
}

/* The edge list (CSV) or DOT of g to path, through a temporary file
 * renamed when complete.  Returns 0 or 1 with a message printed. */
static int write_graph_file(const topo_graph *g, const char *path, int dot, const char *name)
{
    char dir[4096], err[4200];
    const char *slash = strrchr(path, '/');
    const char *base = slash ? slash + 1 : path;
    if (*base == '\0') {
        fprintf(stderr, "%s: error: not a file name\n", path);
        return 1;
    }
    if (slash)
        snprintf(dir, sizeof dir, "%.*s", slash == path ? 1 : (int)(slash - path), path);
    else
        snprintf(dir, sizeof dir, ".");
    out_file *f = out_file_open(dir, base, err, sizeof err);
    if (!f) {
        fprintf(stderr, "%s\n", err);
        return 1;
    }
    FILE *fp = out_file_stream(f);
    if ((dot ? topo_write_dot(g, name, fp) : topo_write_csv(g, fp)) != 0) {
        out_file_abort(f);
        fprintf(stderr, "%s: error: write failed\n", path);
        return 1;
    }
    if (out_file_commit(f, err, sizeof err) != 0) {
        fprintf(stderr, "%s\n", err);
        return 1;
    }
    return 0;
}

static int ends_with(const char *s, const char *suffix)
{
    size_t a = strlen(s), b = strlen(suffix);
    return a >= b && strcmp(s + a - b, suffix) == 0;
}

/* Statistics to stdout; with --edges or --dot the graph instead, or with
 * -o FILE the graph to FILE (DOT when --dot or FILE ends in .dot or .gv)
 * and the statistics to stdout. */
static int cmd_topo(int argc, char **argv)
{
    args a;
    int rc = parse(argc, argv, &a, 0);
    if (rc)
        return rc;
    scn_scenario s;
    scn_error err;
    if (scn_load(a.scenario, a.sets, a.n_sets, &s, &err) != 0) {
        fprintf(stderr, "%s\n", err.msg);
        return 2;
    }
    run_sim *r = run_prepare(&s, &err);
    if (!r) {
        fprintf(stderr, "%s\n", err.msg);
        scn_fini(&s);
        return 2;
    }
    const topo_graph *g = run_graph(r);
    int dot = a.dot || (a.out_dir && !a.edges && (ends_with(a.out_dir, ".dot") ||
                                                   ends_with(a.out_dir, ".gv")));
    topo_stats st;
    if (!a.out_dir && (a.edges || a.dot)) {
        if ((dot ? topo_write_dot(g, s.path, stdout) : topo_write_csv(g, stdout)) != 0) {
            fprintf(stderr, "dtsim: error: writing to stdout failed\n");
            rc = 1;
        }
    } else if (topo_compute_stats(g, &st) != 0) {
        fprintf(stderr, "%s: error: out of memory\n", s.path);
        rc = 1;
    } else {
        printf("topology: %s\nnodes: %d\nedges: %zu\ndegree: %d..%d\n", s.topology, st.n,
               st.n_edges, st.degree_min, st.degree_max);
        if (st.diameter_ok)
            printf("diameter: %d\n", st.diameter);
        else
            printf("diameter: not computed (%d searches of %zu steps)\n", st.n,
                   (size_t)st.n + 2 * st.n_edges);
        printf("bipartite: %s\nmixing: %s\nlazy_alpha: %.17g\nsymmetric: %s\n",
               g->bipartite ? "yes" : "no", topo_mixing_name(g->mixing), g->lazy_alpha,
               g->symmetric ? "yes" : "no");
        if (st.spectral_ok)
            printf("lambda2: %.17g\nspectral_gap: %.17g\nsolver: %s\n", st.lambda2,
                   st.spectral_gap, st.solver);
        else
            printf("lambda2: not computed (%s did not converge)\n", st.solver);
        if (a.out_dir)
            rc = write_graph_file(g, a.out_dir, dot, s.path);
    }
    run_destroy(r);
    scn_fini(&s);
    return rc;
}

#if DTSIM_OPENBLAS
void openblas_set_num_threads(int n);   /* OpenBLAS's own API (cblas.h) */
#endif

int main(int argc, char **argv)
{
#if DTSIM_OPENBLAS
    /* A simulation is one thread: the model matrices are small, a second
     * OpenBLAS thread only spins on the other core (measured: the MLP
     * scenario 46 s on one thread, 75 s with the default), and sweeps get
     * their parallelism from worker processes. */
    openblas_set_num_threads(1);
#endif
    if (argc < 2)
        return bad_usage("no command given");
    const char *cmd = argv[1];
    if (strcmp(cmd, "run") == 0)
        return cmd_run(argc - 2, argv + 2);
    if (strcmp(cmd, "validate") == 0)
        return cmd_validate(argc - 2, argv + 2);
    if (strcmp(cmd, "topo") == 0)
        return cmd_topo(argc - 2, argv + 2);
    if (strcmp(cmd, "sweep") == 0)
        return cli_sweep(argc - 2, argv + 2);
    if (strcmp(cmd, "merge") == 0)
        return cli_merge(argc - 2, argv + 2);
    if (strcmp(cmd, "plot") == 0)
        return cli_plot(argc - 2, argv + 2);
    if (strcmp(cmd, "--version") == 0) {
        printf("dtsim %s (cblas: %s)\n", DTSIM_VERSION, DTSIM_CBLAS);
        return 0;
    }
    if (strcmp(cmd, "--help") == 0 || strcmp(cmd, "-h") == 0 || strcmp(cmd, "help") == 0) {
        fputs(usage, stdout);
        return 0;
    }
    char m[256];
    snprintf(m, sizeof m, "unknown command '%s' (expected one of: run, validate, topo, "
             "sweep, merge, plot)", cmd);
    return bad_usage(m);
}
