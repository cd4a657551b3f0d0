/* cli_topo.c -- `dtsim topo`: builds the scenario's graph alone (the
 * runner's run_topology: no data, no model, none of the protocol's own
 * checks, so the spectrum of a graph AD-PSGD would refuse can still be
 * seen) and prints its statistics, or its edge list or DOT to stdout or a
 * file written through a temporary name.  It computes no statistic itself
 * (topologies/ does).
 */
#include "cli.h"
#include "out.h"
#include "run.h"
#include "scn.h"
#include "topo.h"

#include <stdio.h>
#include <string.h>

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

static void print_stats(const scn_scenario *s, const topo_graph *g, const topo_stats *st)
{
    printf("topology: %s\nnodes: %d\nedges: %zu\ndegree: %d..%d\n", s->topology, st->n,
           st->n_edges, st->degree_min, st->degree_max);
    if (st->diameter_ok)
        printf("diameter: %d\n", st->diameter);
    else
        printf("diameter: not computed (%d searches of %zu steps)\n", st->n,
               (size_t)st->n + 2 * st->n_edges);
    if (g->learned) {
        printf("bipartite: %s\nmixing: learned\nlambda: %.17g\nsymmetric: %s\n",
               g->bipartite ? "yes" : "no", s->topo_lambda, g->symmetric ? "yes" : "no");
        printf("frank_wolfe_steps: %d (stopped: %s)\n", g->learn_iters, g->learn_stop);
        for (int l = 0; l <= g->learn_iters; l++)
            printf("objective[%d]: %.17g\n", l, g->learn_objective[l]);
    } else {
        printf("bipartite: %s\nmixing: %s\nlazy_alpha: %.17g\nsymmetric: %s\n",
               g->bipartite ? "yes" : "no", topo_mixing_name(g->mixing), g->lazy_alpha,
               g->symmetric ? "yes" : "no");
    }
    if (st->spectral_ok)
        printf("lambda2: %.17g\nspectral_gap: %.17g\nsolver: %s\n", st->lambda2,
               st->spectral_gap, st->solver);
    else
        printf("lambda2: not computed (%s did not converge)\n", st->solver);
}

/* Statistics to stdout; with --edges or --dot the graph instead, or with
 * -o FILE the graph to FILE (DOT when --dot or FILE ends in .dot or .gv)
 * and the statistics to stdout. */
int cli_topo(int argc, char **argv)
{
    cli_args a;
    int rc = cli_args_parse("topo", argc, argv, CLI_OPT_OUT | CLI_OPT_GRAPH, &a);
    if (rc >= 0) {
        cli_args_fini(&a);
        return rc;
    }
    scn_scenario s;
    scn_error err;
    if (scn_load(a.files[0], a.sets, a.n_sets, &s, &err) != 0) {
        fprintf(stderr, "%s\n", err.msg);
        cli_note_override("topo", err.msg, a.sets, a.n_sets);
        cli_args_fini(&a);
        return 2;
    }
    topo_graph *g = run_topology(&s, &err);
    if (!g) {
        fprintf(stderr, "%s\n", err.msg);
        cli_note_override("topo", err.msg, a.sets, a.n_sets);
        scn_fini(&s);
        cli_args_fini(&a);
        return 2;
    }
    int dot = a.dot || (a.out && !a.edges && (ends_with(a.out, ".dot") ||
                                              ends_with(a.out, ".gv")));
    topo_stats st;
    rc = 0;
    if (!a.out && (a.edges || a.dot)) {
        if ((dot ? topo_write_dot(g, s.path, stdout) : topo_write_csv(g, stdout)) != 0
            || cli_close_stdout() != 0)
            rc = 1;
    } else if (a.out && a.quiet) {
        rc = write_graph_file(g, a.out, dot, s.path);
    } else if (topo_compute_stats(g, &st) != 0) {
        fprintf(stderr, "%s: error: out of memory\n", s.path);
        rc = 1;
    } else {
        print_stats(&s, g, &st);
        if (a.out)
            rc = write_graph_file(g, a.out, dot, s.path);
    }
    topo_destroy(g);
    scn_fini(&s);
    cli_args_fini(&a);
    return rc;
}
