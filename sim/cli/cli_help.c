/* cli_help.c -- the one text of the dtsim command line: a table of the
 * subcommands (synopsis, what they do, every option with its default,
 * exit status) from which `dtsim --help`, `dtsim help SUB`,
 * `dtsim SUB --help`, the man page (`dtsim help --man`, made at build time
 * into dtsim.1), the bash completion (which reads `--help`) and the
 * README's synopsis (checked by tests/test_cli2.sh) all come; the usage
 * error format; `--version`; and the check that stdout was written.  It
 * parses no subcommand's arguments (each subcommand's file does).
 */
#include "cli.h"
#include "dtsim_git.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SET_TEXT "override a scenario key before validation: PATH dotted " \
                 "(algorithm.lr) or a JSON pointer (/algorithm/lr), VALUE JSON " \
                 "or a bare word (a string); repeatable, the later wins"
#define SEED_TEXT "same as --set seed=N (default: the scenario's seed, 1 when absent)"
#define HELP_OPTS { "-h, --help", "print this help and exit" }, \
                  { "--version", "print the version and the git commit and exit" }
/* the commands whose --quiet has a meaning of their own list it with
 * HELP_OPTS; the others take it as every command does (cli_dispatch) */
#define STD_OPTS { "--quiet", "print only the result and the errors: no notes, no " \
                              "summary (accepted by every command)" }, HELP_OPTS
#define PROGRESS_TEXT "progress on stderr, never on stdout or in a file: on a terminal one " \
    "line redrawn in place; elsewhere (a log file, a Slurm log) one line every SECONDS of " \
    "wall time (default: 60; --quiet: none); 0 none; \"each\" a line at every "
#define SCEN_EXIT "0 ok, 2 bad usage or a bad scenario (the message names the " \
                  "file and the JSON pointer, and the --set that caused it)"

static const cli_command commands[] = {
    { "run", "SCENARIO.json [-o DIR] [--set PATH=VALUE]... [--seed N] [--quiet] [--force]\n"
             "[--threads N] [--progress SECONDS]",
      "run one simulation",
      "Runs the scenario to its stop condition and writes metrics.csv, nodes.csv and "
      "run.json (and trace.csv when output.trace is true) into DIR, each file "
      "complete under its final name.  A summary goes to stdout and the progress to "
      "stderr.  A DIR holding a previous run is refused unless --force.",
      { { "-o, --output DIR", "output folder (default: results/NAME for NAME.json)" },
        { "--set PATH=VALUE", SET_TEXT },
        { "--seed N", SEED_TEXT },
        { "--quiet", "no progress line and no summary" },
        { "--progress SECONDS", PROGRESS_TEXT "evaluation, whatever stderr is (simulated "
                                "time, share of the stop condition done, test accuracy, train "
                                "loss, events per second, elapsed and left)" },
        { "--force", "replace the previous run in DIR (refused without it: exit 2), and skip "
                     "the memory check and the event estimate (same as --set "
                     "limits.check_memory=false --set limits.check_events=false)" },
        { "--threads N", "threads of the model math, 1 to 4096; the outputs are the same "
                         "bytes for every N (default: the number of cores when a step "
                         "costs at least 5e5 flops, else 1)" },
        HELP_OPTS },
      "0 the stop condition was reached; 1 the run failed (stalled, diverged, stopped "
      "by the watchdog, out of memory, an output not written); 2 bad usage or a bad "
      "scenario (nothing written); 130 (143) ended by SIGINT (SIGTERM), what was "
      "measured so far written and marked \"interrupted\"",
      cli_run },
    { "validate", "SCENARIO.json... [--set PATH=VALUE]... [--quiet]",
      "check scenarios without running them",
      "Loads each scenario with the overrides and makes every check a run makes "
      "before it starts (keys, types, ranges, algorithm names and parameters, data "
      "files, connected graphs, the protocol's needs, memory and work limits), and "
      "prints \"FILE: ok\" for each good one.  Nothing is run or written.",
      { { "--set PATH=VALUE", SET_TEXT "; applies to every file" },
        { "--quiet", "print nothing for good scenarios" },
        HELP_OPTS },
      "0 every scenario is good; 2 bad usage or at least one bad scenario (each "
      "bad one's message on stderr)",
      cli_validate },
    { "resolve", "SCENARIO.json [--set PATH=VALUE]... [--seed N]",
      "print the fully resolved scenario",
      "Loads and checks the scenario like validate and prints, as JSON on "
      "stdout, what run.json would record of it: \"scenario\", every key with its "
      "default filled in and the overrides applied, and \"algorithm_params\", every "
      "parameter of the protocol with its value or default.  Nothing is run or "
      "written.",
      { { "--set PATH=VALUE", SET_TEXT },
        { "--seed N", SEED_TEXT },
        { "--quiet", "no effect: the JSON is the result (taken like every command's)" },
        HELP_OPTS },
      SCEN_EXIT,
      cli_resolve },
    { "topo", "SCENARIO.json [--set PATH=VALUE]... [--edges | --dot] [-o FILE]",
      "describe the scenario's graph",
      "Builds the scenario's topology (and nothing else: no data, no model, none of "
      "the protocol's own checks) and prints its statistics: nodes, edges, degrees, "
      "diameter, bipartiteness, mixing rule, second eigenvalue and spectral gap of "
      "the mixing matrix.",
      { { "--set PATH=VALUE", SET_TEXT },
        { "--edges", "print the edge list (CSV: source,target,weight) instead of the statistics" },
        { "--dot", "print the graph in Graphviz DOT instead of the statistics" },
        { "-o, --output FILE", "write the graph to FILE (DOT when --dot or FILE ends in "
                               ".dot or .gv, else the edge list) and the statistics to "
                               "stdout" },
        { "--quiet", "with -o FILE, no statistics on stdout" },
        HELP_OPTS },
      "0 ok; 1 the graph or stdout could not be written; 2 bad usage or a bad "
      "scenario",
      cli_topo },
    { "sweep", "SCENARIO.json [--grid PATH=V1,V2,...]... [--zip PATH=V1,V2,...]...\n"
               "[--replicates R] [-j N] [--threads N] [--shard K/N]\n"
               "[--set PATH=VALUE]... [--seed N] [--quiet] [-o DIR]\n"
               "[--keep-going] [--force] [--progress SECONDS]",
      "run a grid of simulations",
      "Plans the grid (checking every point first), runs it in worker processes, "
      "one folder per run under DIR/runs/, and gathers DIR/sweep.csv and "
      "DIR/summary.csv.  Resumable: the same command again runs only what is "
      "missing.  Extensible: the same command with more --replicates or more grid values "
      "into the same DIR runs only the new runs (the completed ones are found by their "
      "resolved scenario and seed) and rewrites the tables as a sweep of the larger grid "
      "from scratch would.",
      { { "--grid PATH=V1,V2,...", "one axis; several --grid form the cartesian product" },
        { "--zip PATH=V1,V2,...", "paired lists: all --zip together form one axis whose "
                                  "i-th point takes the i-th value of each" },
        { "--replicates R", "runs per grid point, differing only in the seed (default: 1)" },
        { "-j, --jobs N", "worker processes (default: the number of cores)" },
        { "--threads N", "threads of each run's model math (default: the number of "
                         "cores / N of -j, at least 1, when a step costs at least 5e5 "
                         "flops, else 1)" },
        { "--shard K/N", "run only the K-th of N disjoint slices, 1 <= K <= N (default: 1/1)" },
        { "--set PATH=VALUE", SET_TEXT "; applies to every run, before the grid values" },
        { "--seed N", SEED_TEXT },
        { "--quiet", "no summary and no progress line" },
        { "-o, --output DIR", "the sweep folder (default: results/NAME-sweep for NAME.json)" },
        { "--keep-going", "skip the grid points that fail validation instead of refusing "
                          "the sweep: each is named with its error on stderr and in "
                          "sweep.json's \"skipped\"" },
        { "--force", "resume or extend a folder made by another dtsim binary (git commit, "
                     "version or CBLAS); the runs it made are kept and runs.csv names "
                     "each run's commit" },
        { "--progress SECONDS", PROGRESS_TEXT "finished run, whatever stderr is (runs done "
                                "of the total, running, elapsed, left)" },
        HELP_OPTS },
      "0 every run complete; 1 a run failed or stalled (the others are kept); 2 bad "
      "usage, a bad grid point (every point, with --keep-going), a folder holding "
      "another sweep or runs the new grid lacks, or a folder made by another binary "
      "without --force; 130 interrupted (completed runs are kept)",
      cli_sweep },
    { "merge", "DIR... [-o OUT] [--quiet]",
      "gather the shards of a sweep",
      "Checks that the folders hold shards of the same sweep and together every run, "
      "and writes sweep.csv and summary.csv into OUT.",
      { { "-o, --output OUT", "where to write (default: DIR when there is one DIR; "
                              "needed with several)" },
        { "--quiet", "no summary line" },
        HELP_OPTS },
      "0 written; 1 runs missing or an output not written; 2 bad usage or folders "
      "holding different sweeps (nothing written)",
      cli_merge },
    { "plot", "RUN_OR_SWEEP_DIR... [--spread KIND] [--label PATH=TEXT]... [--quiet]",
      "draw the standard figures",
      "Draws the standard figures of run and sweep folders with gnuplot "
      "(plots/plot.sh; DTSIM_PLOTS names another plots/ folder) as PNG and PDF into "
      "each folder's plots/, beside the gnuplot script and the data of each (rerun "
      "one with gnuplot NAME.gp in that folder).  A sweep's line is the mean over "
      "the replicates of its grid point; a replicate that stopped early counts with "
      "its last value from then on (marked by a circle).",
      { { "--spread KIND", "the band around a sweep's mean and the whiskers of its "
                           "bars: sd (standard deviation), se (standard error), ci95 "
                           "(t-based 95% confidence interval of the mean) or minmax "
                           "(smallest to largest replicate); the figure says which "
                           "(default: sd)" },
        { "--label PATH=TEXT", "call the swept parameter PATH TEXT in legends and axis "
                               "labels (default: the full path, algorithm.name=dpsgd); "
                               "an empty TEXT shows the values alone; repeatable" },
        STD_OPTS },
      "0 drawn; 1 gnuplot missing or a figure failed; 2 bad usage or a folder that "
      "is not a readable run or sweep",
      cli_plot },
    { "table", "SWEEP_DIR METRIC... [--spread KIND] [--baseline PATH=VALUE]...\n"
               "[--label PATH=TEXT]... [--format md|csv|latex] [-o FILE]",
      "tabulate a sweep for a paper",
      "Prints one row per grid point of the sweep's summary.csv, with the number of "
      "replicates n and for each METRIC (a numeric column of summary.csv, e.g. "
      "time_to_target_accuracy_s, steps_per_s, test_accuracy) the mean over the "
      "replicates and its spread.  A value that is not finite (inf: a target never "
      "reached) is left out and counted: \"(2/3)\" means 2 of the 3 replicates had "
      "one.  The spread is given to two significant digits and the mean to the same "
      "place.",
      { { "--spread KIND", "sd (standard deviation), se (standard error), ci95 (t-based "
                           "95% confidence interval, half-width) or minmax (the range); "
                           "CSV holds them all (default: sd)" },
        { "--baseline PATH=VALUE", "add per metric the speedup over the grid point with "
                                   "PATH=VALUE (the other parameters as in the row): "
                                   "baseline mean / mean for a time (a name ending in "
                                   "_s), mean / baseline mean for a rate (_per_s), the "
                                   "ratio mean / baseline mean otherwise; PATH "
                                   "protocol means algorithm.name; repeatable, to name "
                                   "a grid point in several parameters" },
        { "--label PATH=TEXT", "head the column of the swept parameter PATH with TEXT "
                               "(default: the full path); repeatable" },
        { "--format FORMAT", "md (Markdown), csv (every statistic at full precision) or "
                             "latex (a booktabs tabular) (default: from the name given "
                             "to -o, .csv or .tex, else md)" },
        { "-o, --output FILE", "write the table to FILE, complete or not at all (default: "
                               "stdout)" },
        { "--quiet", "accepted; the table is the only output" },
        STD_OPTS },
      "0 written; 1 the output could not be written; 2 bad usage, a folder that is not "
      "a sweep, an unknown or non-numeric metric, or a baseline no grid point has "
      "(nothing written)",
      cli_table },
    { "list", "[FAMILY]",
      "list protocols, topologies, models, ...",
      "Prints every name a scenario may give, with one line each: the protocols "
      "(algorithm.name), topologies, mixing rules, models, the timing-only model's "
      "profiles, datasets (data.kind), partitions, noise laws and disciplines, from the "
      "same tables the loader uses.  FAMILY (protocols, topologies, mixing, models, "
      "profiles, datasets, partitions, noise, disciplines) prints one family.",
      { STD_OPTS },
      "0 ok; 2 bad usage or an unknown family",
      cli_list },
    { "explain", "algorithm.NAME | KEY",
      "describe one protocol's parameters or one key",
      "For algorithm.NAME (or NAME): the protocol's summary and every parameter of "
      "its parameter table, with kind, default, range or choices and what it sets. "
      "For a scenario key (topology.kind): its type, unit, default, allowed values "
      "and, for a name, what each name means.",
      { STD_OPTS },
      "0 ok; 2 bad usage, an unknown protocol or an unknown key",
      cli_explain },
    { "keys", "[PREFIX]",
      "list the scenario keys",
      "Prints every scenario key under PREFIX (all without one) with its type, unit, "
      "default, allowed values and a line on what it sets, from the table that "
      "tests check against the loader.  PREFIX is a dotted path (compute, "
      "network.links); \"[]\" in a path stands for any element of an array.",
      { STD_OPTS },
      "0 ok; 2 bad usage or no key under PREFIX",
      cli_keys },
    { "help", "[COMMAND]",
      "describe a command",
      "Prints the help of COMMAND (the same as dtsim COMMAND --help), or of dtsim.",
      { { "--man", "print the man page (roff) made from this text" }, STD_OPTS },
      "0 ok; 2 unknown command",
      cli_help },
};

#define N_COMMANDS (sizeof commands / sizeof commands[0])

const cli_command *cli_command_find(const char *name)
{
    for (size_t i = 0; i < N_COMMANDS; i++)
        if (strcmp(commands[i].name, name) == 0)
            return &commands[i];
    return NULL;
}

static void print_synopsis(FILE *f, const char *lead, const cli_command *c)
{
    size_t indent = strlen(lead) + strlen("dtsim ") + strlen(c->name) + 1;
    fprintf(f, "%sdtsim %s ", lead, c->name);
    for (const char *p = c->synopsis; *p; p++) {
        fputc(*p, f);
        if (*p == '\n')
            fprintf(f, "%*s", (int)indent, "");
    }
    fputc('\n', f);
}

#define WIDTH   79
#define OPT_COL 24

void cli_print_filled(FILE *f, const char *text, int col, int indent)
{
    int first = 1;
    for (const char *p = text; *p;) {
        while (*p == ' ')
            p++;
        if (!*p)
            break;
        const char *w = p;
        while (*p && *p != ' ')
            p++;
        int len = (int)(p - w);
        if (!first && col + 1 + len > WIDTH) {
            fprintf(f, "\n%*s", indent, "");
            col = indent;
            first = 1;
        }
        if (!first) {
            fputc(' ', f);
            col++;
        }
        fprintf(f, "%.*s", len, w);
        col += len;
        first = 0;
    }
    fputc('\n', f);
}

static void print_command_help(FILE *f, const cli_command *c)
{
    print_synopsis(f, "usage: ", c);
    fputc('\n', f);
    cli_print_filled(f, c->about, 0, 0);
    fputs("\noptions:\n", f);
    for (int i = 0; i < CLI_MAX_OPTS && c->opts[i].flags; i++) {
        int w = fprintf(f, "  %s", c->opts[i].flags);
        if (w >= OPT_COL - 1) {
            fprintf(f, "\n%*s", OPT_COL, "");
        } else {
            fprintf(f, "%*s", OPT_COL - w, "");
        }
        cli_print_filled(f, c->opts[i].text, OPT_COL, OPT_COL);
    }
    fputs("\nexit status: ", f);
    cli_print_filled(f, c->exit_status, 13, 0);
}

static void print_main_help(FILE *f)
{
    for (size_t i = 0; i < N_COMMANDS; i++)
        print_synopsis(f, i ? "       " : "usage: ", &commands[i]);
    fputs("       dtsim --version\n\ncommands:\n", f);
    for (size_t i = 0; i < N_COMMANDS; i++)
        fprintf(f, "  %-10s %s\n", commands[i].name, commands[i].summary);
    fputs("\n`dtsim help COMMAND` or `dtsim COMMAND --help` gives a command's options and\n"
          "their defaults; `man dtsim` all of them.  Every command takes --quiet, --help\n"
          "and --version.  Exit status: 0 success, 1 a run that failed, 2 bad usage or a\n"
          "bad scenario, 130 ended by Ctrl-C.\n", f);
}

void cli_print_version(FILE *f)
{
    fprintf(f, "dtsim %s (git %s, cblas: %s)\n", DTSIM_VERSION, DTSIM_GIT, DTSIM_CBLAS);
}

const char *cli_git_commit(void)
{
    return DTSIM_GIT;
}

int          cli_argc;
char *const *cli_argv;

void cli_provenance(out_provenance *p, const char *cmd, const char *const *sets,
                    size_t n_sets)
{
    memset(p, 0, sizeof *p);
    p->command = cmd;
    p->git_commit = DTSIM_GIT;
    p->argc = cli_argc;
    p->argv = (const char *const *)cli_argv;
    p->sets = sets;
    p->n_sets = n_sets;
    out_provenance_init(p);
}

int cli_std_option(const char *cmd, const char *arg)
{
    if (strcmp(arg, "--help") == 0 || strcmp(arg, "-h") == 0) {
        const cli_command *c = cmd ? cli_command_find(cmd) : NULL;
        if (c)
            print_command_help(stdout, c);
        else
            print_main_help(stdout);
        return 0;
    }
    if (strcmp(arg, "--version") == 0) {
        cli_print_version(stdout);
        return 0;
    }
    return -1;
}

int cli_usage_error(const char *cmd, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, cmd ? "dtsim %s: error: " : "dtsim: error: ", cmd);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
    const cli_command *c = cmd ? cli_command_find(cmd) : NULL;
    if (c)
        print_synopsis(stderr, "usage: ", c);
    if (c)
        fprintf(stderr, "Try 'dtsim %s --help' for more information.\n", c->name);
    else
        fputs("Try 'dtsim --help' for more information.\n", stderr);
    return 2;
}

/* roff: a backslash, a leading dot or quote and '-' need escapes */
static void roff(FILE *f, const char *s, int bold)
{
    int bol = 1;
    if (bold)
        fputs("\\fB", f);
    for (const char *p = s; *p; p++) {
        if (bol && (*p == '.' || *p == '\''))
            fputs("\\&", f);
        bol = *p == '\n';
        if (*p == '\\')
            fputs("\\e", f);
        else if (*p == '-')
            fputs("\\-", f);
        else
            fputc(*p, f);
    }
    if (bold)
        fputs("\\fR", f);
}

static void print_man(FILE *f)
{
    fprintf(f, ".TH DTSIM 1 \"\" \"dtsim %s\" \"User Commands\"\n.SH NAME\n"
            "dtsim \\- simulate heterogeneous, decentralized and asynchronous training\n"
            ".SH SYNOPSIS\n.nf\n", DTSIM_VERSION);
    for (size_t i = 0; i < N_COMMANDS; i++) {
        fputs("\\fBdtsim ", f);
        roff(f, commands[i].name, 0);
        fputs("\\fR ", f);
        roff(f, commands[i].synopsis, 0);
        fputc('\n', f);
    }
    fputs("\\fBdtsim \\-\\-version\\fR\n.fi\n.SH DESCRIPTION\n"
          "dtsim runs a training protocol on a simulated cluster described by a JSON\n"
          "scenario and reports how the model converges against simulated wall-clock\n"
          "time.  Each command below prints the same text with \\fB\\-\\-help\\fR.\n"
          ".SH COMMANDS\n", f);
    for (size_t i = 0; i < N_COMMANDS; i++) {
        const cli_command *c = &commands[i];
        fputs(".SS ", f);
        fprintf(f, "\"dtsim %s\"\n", c->name);
        fputs(".nf\n\\fBdtsim ", f);
        roff(f, c->name, 0);
        fputs("\\fR ", f);
        roff(f, c->synopsis, 0);
        fputs("\n.fi\n.PP\n", f);
        roff(f, c->about, 0);
        fputc('\n', f);
        for (int k = 0; k < CLI_MAX_OPTS && c->opts[k].flags; k++) {
            fputs(".TP\n", f);
            roff(f, c->opts[k].flags, 1);
            fputc('\n', f);
            roff(f, c->opts[k].text, 0);
            fputc('\n', f);
        }
        fputs(".PP\nExit status: ", f);
        roff(f, c->exit_status, 0);
        fputc('\n', f);
    }
    fputs(".SH FILES\nScenario keys: \\fBdtsim keys\\fR and docs/scenario.md;\n"
          "outputs: docs/outputs.md; the command line: docs/cli.md.\n"
          ".SH VERSION\n", f);
    fprintf(f, "dtsim %s, git %s.\n", DTSIM_VERSION, DTSIM_GIT);
}

int cli_help(int argc, char **argv)
{
    const char *topic = NULL;
    int man = 0;
    for (int i = 0; i < argc; i++) {
        if (strcmp(argv[i], "--man") == 0)
            man = 1;
        else if (cli_std_option("help", argv[i]) == 0)
            return 0;
        else if (argv[i][0] == '-' && argv[i][1] != '\0')
            return cli_usage_error("help", "unknown option '%s'", argv[i]);
        else if (topic)
            return cli_usage_error("help", "one command at a time");
        else
            topic = argv[i];
    }
    if (man) {
        if (topic)
            return cli_usage_error("help", "--man takes no command");
        print_man(stdout);
        return 0;
    }
    if (!topic) {
        print_main_help(stdout);
        return 0;
    }
    const cli_command *c = cli_command_find(topic);
    if (!c) {
        fprintf(stderr, "dtsim help: error: unknown command '%s' (expected one of: ", topic);
        for (size_t i = 0; i < N_COMMANDS; i++)
            fprintf(stderr, "%s%s", i ? ", " : "", commands[i].name);
        fputs(")\n", stderr);
        return 2;
    }
    print_command_help(stdout, c);
    return 0;
}

int cli_quiet;

/* The commands that parse --quiet themselves (it means more there than
 * "no notes"); every other command has it taken out of its arguments by
 * cli_dispatch, so that scripts can pass --quiet to any command. */
static int own_quiet(const char *name)
{
    static const char *const own[] = { "run", "validate", "resolve", "topo", "sweep", "merge" };
    for (size_t i = 0; i < sizeof own / sizeof own[0]; i++)
        if (strcmp(own[i], name) == 0)
            return 1;
    return 0;
}

int cli_dispatch(int argc, char **argv)
{
    cli_argc = argc;
    cli_argv = argv;
    if (argc < 2)
        return cli_usage_error(NULL, "no command given");
    const char *cmd = argv[1];
    if (cli_std_option(NULL, cmd) == 0)
        return 0;
    const cli_command *c = cli_command_find(cmd);
    if (c && !own_quiet(c->name)) {
        /* argv[2..] without --quiet, kept in order; argv itself stays whole
         * for the provenance's command line */
        char **rest = calloc((size_t)argc, sizeof *rest);
        int n = 0;
        if (!rest) {
            fputs("dtsim: error: out of memory\n", stderr);
            return 1;
        }
        for (int i = 2; i < argc; i++) {
            if (strcmp(argv[i], "--quiet") == 0)
                cli_quiet = 1;
            else
                rest[n++] = argv[i];
        }
        int rc = c->run(n, rest);
        free(rest);
        return rc;
    }
    if (c)
        return c->run(argc - 2, argv + 2);
    fprintf(stderr, "dtsim: error: unknown command '%s' (expected one of: ", cmd);
    for (size_t i = 0; i < N_COMMANDS; i++)
        fprintf(stderr, "%s%s", i ? ", " : "", commands[i].name);
    fputs(")\nTry 'dtsim --help' for more information.\n", stderr);
    return 2;
}

int cli_close_stdout(void)
{
    static int reported;
    if (reported)
        return 1;
    if (fflush(stdout) != 0 || ferror(stdout)) {
        reported = 1;
        int e = errno;
        fprintf(stderr, "dtsim: error: writing to stdout failed: %s\n",
                e ? strerror(e) : "write error");
        return 1;
    }
    return 0;
}
