/* cli_run.c -- `dtsim run`, `dtsim validate` and `dtsim resolve`, and the
 * argument parser they share with `dtsim topo`: loads the scenario with
 * its overrides, prepares it (every check a run makes before it starts)
 * and runs it, prints what validation found, or prints the resolved
 * scenario.  A loader error caused by a --set is followed by a note naming
 * that --set.  It holds no simulation logic (the runner does).
 */
#include "cli.h"
#include "out.h"
#include "run.h"
#include "scn.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int add_set(const char *cmd, cli_args *a, const char *v)
{
    if (a->n_sets >= CLI_MAX_SETS + 3)
        return cli_usage_error(cmd, "too many --set options (at most %d)", CLI_MAX_SETS);
    a->sets[a->n_sets++] = v;
    return -1;
}

int cli_cores(void)
{
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n >= 1 && n <= 4096 ? (int)n : 1;
}

int cli_parse_threads(const char *s)
{
    char *end;
    errno = 0;
    long v = s ? strtol(s, &end, 10) : 0;
    if (!s || errno || *end || s[0] < '0' || s[0] > '9' || v < 1 || v > 4096)
        return -1;
    return (int)v;
}

int cli_parse_progress(const char *s, double *period_s)
{
    if (!s)
        return -1;
    if (strcmp(s, "each") == 0) {
        *period_s = OUT_PROGRESS_EACH;
        return 0;
    }
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (s[0] < '0' || s[0] > '9' || errno || *end || !isfinite(v) || v < 0)
        return -1;
    *period_s = v;
    return 0;
}

int cli_args_parse(const char *cmd, int argc, char **argv, int allow, cli_args *a)
{
    memset(a, 0, sizeof *a);
    a->progress_s = NAN;
    a->files = calloc((size_t)argc + 1, sizeof *a->files);
    if (!a->files) {
        fprintf(stderr, "dtsim %s: error: out of memory\n", cmd);
        return 1;
    }
    for (int i = 0; i < argc; i++) {
        const char *s = argv[i];
        const char *next = i + 1 < argc ? argv[i + 1] : NULL;
        if (strcmp(s, "--set") == 0 || strncmp(s, "--set=", 6) == 0) {
            const char *val = s[5] == '=' ? s + 6 : next;
            if (s[5] != '=')
                i++;
            if (!val)
                return cli_usage_error(cmd, "--set needs PATH=VALUE");
            if (a->n_sets >= CLI_MAX_SETS)
                return cli_usage_error(cmd, "too many --set options (at most %d)", CLI_MAX_SETS);
            a->sets[a->n_sets++] = val;
        } else if ((allow & CLI_OPT_OUT) && (strcmp(s, "-o") == 0 || strcmp(s, "--output") == 0)) {
            if (!next)
                return cli_usage_error(cmd, "%s needs a %s", s,
                                       (allow & CLI_OPT_GRAPH) ? "file" : "directory");
            a->out = argv[++i];
        } else if ((allow & CLI_OPT_SEED) && strcmp(s, "--seed") == 0) {
            char *end;
            errno = 0;
            unsigned long long v = next ? strtoull(next, &end, 10) : 0;
            if (!next || errno || *end || next[0] < '0' || next[0] > '9')
                return cli_usage_error(cmd, "--seed needs a whole number >= 0");
            snprintf(a->seed_set, sizeof a->seed_set, "seed=%llu", v);
            i++;
        } else if (strcmp(s, "--quiet") == 0) {
            a->quiet = 1;
        } else if ((allow & CLI_OPT_PROGRESS) && strcmp(s, "--progress") == 0) {
            if (cli_parse_progress(next, &a->progress_s) != 0)
                return cli_usage_error(cmd, "--progress needs SECONDS >= 0 or \"each\"");
            i++;
        } else if ((allow & CLI_OPT_THREADS) && strcmp(s, "--threads") == 0) {
            if ((a->threads = cli_parse_threads(next)) < 0)
                return cli_usage_error(cmd, "--threads needs a whole number from 1 to 4096");
            i++;
        } else if ((allow & CLI_OPT_FORCE) && strcmp(s, "--force") == 0) {
            a->force = 1;   /* skip the memory and event checks (docs/reliability.md) */
        } else if ((allow & CLI_OPT_GRAPH) && strcmp(s, "--edges") == 0) {
            a->edges = 1;
        } else if ((allow & CLI_OPT_GRAPH) && strcmp(s, "--dot") == 0) {
            a->dot = 1;
        } else if (cli_std_option(cmd, s) == 0) {
            return 0;
        } else if (s[0] == '-' && s[1] != '\0') {
            return cli_usage_error(cmd, "unknown option '%s'", s);
        } else if (a->n_files && !(allow & CLI_OPT_FILES)) {
            return cli_usage_error(cmd, "one scenario file at a time");
        } else {
            a->files[a->n_files++] = s;
        }
    }
    if (!a->n_files)
        return cli_usage_error(cmd, "no scenario file given");
    if (a->edges && a->dot)
        return cli_usage_error(cmd, "--edges and --dot exclude each other");
    int rc;
    if (a->seed_set[0] && (rc = add_set(cmd, a, a->seed_set)) >= 0)
        return rc;
    if (a->force && ((rc = add_set(cmd, a, "limits.check_memory=false")) >= 0
                     || (rc = add_set(cmd, a, "limits.check_events=false")) >= 0))
        return rc;
    return -1;
}

void cli_args_fini(cli_args *a)
{
    free(a->files);
    a->files = NULL;
}

/* The JSON pointer of an override's path ("algorithm.lr" -> "/algorithm/lr"). */
static void set_pointer(const char *set, char *buf, size_t size)
{
    const char *eq = strchr(set, '=');
    size_t n = eq ? (size_t)(eq - set) : strlen(set), len = 0;
    int dotted = set[0] != '/';
    if (dotted && size > 1)
        buf[len++] = '/';
    for (size_t i = 0; i < n && len + 3 < size; i++) {
        char ch = set[i];
        if (dotted && ch == '.')
            buf[len++] = '/';
        else if (dotted && (ch == '~' || ch == '/')) {
            buf[len++] = '~';
            buf[len++] = ch == '~' ? '0' : '1';
        } else
            buf[len++] = ch;
    }
    buf[len] = '\0';
}

void cli_note_override(const char *cmd, const char *err_msg, const char *const *sets,
                       size_t n_sets)
{
    const char *p = strstr(err_msg, ": /");
    if (!p)
        return;
    p += 2;
    const char *end = strstr(p, ": ");
    if (!end)
        return;
    size_t plen = (size_t)(end - p);
    for (size_t i = n_sets; i-- > 0;) {
        char sp[1024];
        set_pointer(sets[i], sp, sizeof sp);
        size_t slen = strlen(sp);
        if (plen >= slen && strncmp(p, sp, slen) == 0 && (p[slen] == ':' || p[slen] == '/')) {
            fprintf(stderr, "dtsim %s: note: the value at %.*s comes from --set %s\n", cmd,
                    (int)plen, p, sets[i]);
            return;
        }
        if (slen > plen && strncmp(p, sp, plen) == 0 && sp[plen] == '/') {
            fprintf(stderr, "dtsim %s: note: --set %s changed %.*s\n", cmd, sets[i], (int)plen,
                    p);
            return;
        }
    }
}

/* Loads and prepares; NULL with the messages printed. */
static run_sim *load(const char *cmd, const char *file, const cli_args *a, scn_scenario *s)
{
    scn_error err;
    if (scn_load(file, a->sets, a->n_sets, s, &err) != 0) {
        fprintf(stderr, "%s\n", err.msg);
        cli_note_override(cmd, err.msg, a->sets, a->n_sets);
        return NULL;
    }
    run_sim *r = run_prepare(s, &err);
    if (!r) {
        fprintf(stderr, "%s\n", err.msg);
        cli_note_override(cmd, err.msg, a->sets, a->n_sets);
        scn_fini(s);
    }
    return r;
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

/* The progress of one run: simulated time reached, the share of the stop
 * condition (stop.time_s, or stop.steps) done, the last evaluation's test
 * accuracy and train loss, events per second of wall time, elapsed and
 * an estimate of what is left (elapsed x left share / done share). */
typedef struct run_progress {
    out_progress pg;
    double horizon_s, steps_total;   /* INFINITY / 0 when the scenario has none */
    int    timing_only;
    int    have_row;
    out_metrics_row row;             /* the last evaluation */
    double t;                        /* simulated time reached */
    uint64_t events;
} run_progress;

static void draw_run(run_progress *p, int event)
{
    if (!out_progress_due(&p->pg, event))
        return;
    double el = out_progress_elapsed(&p->pg);
    double eps = el > 0 ? (double)p->events / el : 0;
    double done = NAN;
    if (isfinite(p->horizon_s) && p->horizon_s > 0)
        done = p->t / p->horizon_s;
    if (p->steps_total > 0 && p->have_row) {
        double ds = (double)p->row.steps / p->steps_total;
        done = isnan(done) || ds > done ? ds : done;
    }
    char share[32] = "", eval[96] = "", rate[48] = "", e[32], l[32];
    if (p->events > 0)
        snprintf(rate, sizeof rate, ", %.3g M events/s", eps / 1e6);
    if (!isnan(done))
        snprintf(share, sizeof share, " (%.0f%%)", 100 * fmin(done, 1));
    if (p->have_row && !p->timing_only)
        snprintf(eval, sizeof eval, ", test accuracy %.4f, train loss %.4g",
                 p->row.test_accuracy, p->row.train_loss);
    out_fmt_duration(e, sizeof e, el);
    out_fmt_duration(l, sizeof l, done > 0 ? el * (1 - fmin(done, 1)) / done : NAN);
    out_progress_draw(&p->pg, event, "run: t=%.6g s simulated%s%s%s, %s elapsed, ~%s left",
                      p->t, share, eval, rate, e, l);
}

static void on_progress(void *ctx, double t, uint64_t events)
{
    run_progress *p = ctx;
    p->t = t;
    p->events = events;
    draw_run(p, 0);
}

static void on_metrics(void *ctx, const out_metrics_row *row)
{
    run_progress *p = ctx;
    p->row = *row;
    p->have_row = 1;
    p->t = row->time_s;
    draw_run(p, 1);
}

static void print_summary(const scn_scenario *s, const run_result *x, const char *out_dir)
{
    const int timing_only = s->model_type == NULL;
    if (timing_only)
        printf("dtsim: %s: %s on %d nodes (%s), timing only: messages of %.6g bytes\n",
               s->path, s->algorithm, s->n_nodes, s->topology, s->model_message_bytes);
    else
        printf("dtsim: %s: %s on %d nodes (%s), %zu parameters per model\n", s->path,
               s->algorithm, s->n_nodes, s->topology, x->n_params);
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

int cli_run(int argc, char **argv)
{
    cli_args a;
    int rc = cli_args_parse("run", argc, argv,
                            CLI_OPT_OUT | CLI_OPT_SEED | CLI_OPT_FORCE | CLI_OPT_THREADS
                            | CLI_OPT_PROGRESS, &a);
    if (rc >= 0) {
        cli_args_fini(&a);
        return rc;
    }
    char out_dir[4096];
    if (a.out)
        snprintf(out_dir, sizeof out_dir, "%s", a.out);
    else
        default_out_dir(a.files[0], out_dir, sizeof out_dir);

    /* a folder of a previous run is replaced only when asked: refused
     * before anything is loaded, so nothing is touched */
    char prev[512];
    if (!a.force && out_rundir_previous(out_dir, prev, sizeof prev)) {
        fprintf(stderr, "%s: error: holds a previous run (%s); rerun with --force to replace "
                "it as a whole (no file of the old run is kept), or choose another -o\n",
                out_dir, prev);
        cli_args_fini(&a);
        return 2;
    }
    scn_scenario s;
    run_sim *r = load("run", a.files[0], &a, &s);
    if (!r) {
        cli_args_fini(&a);
        return 2;
    }
    run_progress prog = { .horizon_s = s.stop_time_s,
                          .steps_total = (double)s.stop_steps * s.n_nodes,
                          .timing_only = s.model_type == NULL };
    /* --quiet turns the default progress off; an explicit --progress wins */
    out_progress_init(&prog.pg, stderr, !isnan(a.progress_s) ? a.progress_s
                                        : a.quiet ? 0 : OUT_PROGRESS_DEFAULT_S);
    out_provenance prov;
    cli_provenance(&prov, "run", a.sets, a.n_sets);
    run_options opt = { .out_dir = out_dir, .interrupt = &cli_interrupted,
                        .on_progress = prog.pg.active ? on_progress : NULL,
                        .on_metrics = prog.pg.active ? on_metrics : NULL, .hook_ctx = &prog,
                        .provenance = &prov,
                        .threads = a.threads ? a.threads : -cli_cores() };
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
        if (!a.quiet)
            print_summary(&s, &res, out_dir);
        if (res.status == RUN_STALLED || res.status == RUN_DIVERGED
            || res.status == RUN_NO_PROGRESS || res.status == RUN_LIMIT
            || res.status == RUN_FLOOD) {
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
    cli_args_fini(&a);
    return rc;
}

int cli_validate(int argc, char **argv)
{
    cli_args a;
    int rc = cli_args_parse("validate", argc, argv, CLI_OPT_FILES, &a);
    if (rc >= 0) {
        cli_args_fini(&a);
        return rc;
    }
    int bad = 0;
    for (int i = 0; i < a.n_files; i++) {
        scn_scenario s;
        run_sim *r = load("validate", a.files[i], &a, &s);
        if (!r) {
            bad = 1;
            continue;
        }
        if (!a.quiet)
            printf("%s: ok\n", a.files[i]);
        run_destroy(r);
        scn_fini(&s);
    }
    cli_args_fini(&a);
    return bad ? 2 : 0;
}

/* Compact JSON (the loader's canonical text) indented by two spaces per
 * level; empty objects and arrays stay "{}" and "[]". */
static void print_indented_json(FILE *f, const char *t)
{
    int depth = 0, in_str = 0;
    for (const char *p = t; *p; p++) {
        char ch = *p;
        if (in_str) {
            fputc(ch, f);
            if (ch == '\\' && p[1])
                fputc(*++p, f);
            else if (ch == '"')
                in_str = 0;
            continue;
        }
        if (ch == '"') {
            in_str = 1;
            fputc(ch, f);
        } else if (ch == '{' || ch == '[') {
            if (p[1] == (ch == '{' ? '}' : ']')) {
                fputc(ch, f);
                fputc(*++p, f);
                continue;
            }
            fprintf(f, "%c\n%*s", ch, 2 * ++depth, "");
        } else if (ch == '}' || ch == ']') {
            fprintf(f, "\n%*s%c", 2 * --depth, "", ch);
        } else if (ch == ',') {
            fprintf(f, ",\n%*s", 2 * depth, "");
        } else if (ch == ':') {
            fputs(": ", f);
        } else if (ch == '\n' || ch == ' ') {
            continue;
        } else {
            fputc(ch, f);
        }
    }
    fputc('\n', f);
}

int cli_resolve(int argc, char **argv)
{
    cli_args a;
    int rc = cli_args_parse("resolve", argc, argv, CLI_OPT_SEED, &a);
    if (rc >= 0) {
        cli_args_fini(&a);
        return rc;
    }
    scn_scenario s;
    run_sim *r = load("resolve", a.files[0], &a, &s);
    if (!r) {
        cli_args_fini(&a);
        return 2;
    }
    /* run.json's two records of the configuration: the scenario with every
     * default filled in, and the protocol's parameters with theirs */
    char *text = NULL;
    size_t size = 0;
    FILE *m = open_memstream(&text, &size);
    if (m) {
        out_json j;
        out_json_init_compact(&j, m);
        out_json_begin_object(&j, NULL);
        out_json_raw(&j, "scenario", s.resolved_json);
        run_algorithm_params_json(r, &j);
        out_json_end_object(&j);
        out_json_finish(&j);
        rc = fclose(m) == 0 && text ? 0 : 1;
    } else {
        rc = 1;
    }
    if (rc == 0)
        print_indented_json(stdout, text);
    else
        fprintf(stderr, "dtsim resolve: error: out of memory\n");
    free(text);
    run_destroy(r);
    scn_fini(&s);
    cli_args_fini(&a);
    return rc;
}
