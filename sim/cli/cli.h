/* cli.h -- what the files of the dtsim command line share: the table of
 * subcommands and their help text (cli_help.c), the usage error format,
 * the SIGINT flag, and the subcommands.  Each subcommand takes the
 * arguments after its name and returns the process's exit status.
 */
#ifndef CLI_H
#define CLI_H

#include <signal.h>
#include <stddef.h>
#include <stdio.h>

#include "out.h"   /* out_provenance */

/* Set to the signal's number by the SIGINT and SIGTERM handler
 * cli_interrupt_install puts in place.  The handler is installed once
 * (SA_RESETHAND): a second Ctrl-C or SIGTERM kills. */
extern volatile sig_atomic_t cli_interrupted;
void cli_interrupt_install(void);

/* Exit status of a command ended by a signal, as shells report it: 130
 * after SIGINT, 143 after SIGTERM. */
int cli_exit_interrupted(void);

/* One option of a subcommand: its flags as the help shows them ("-o,
 * --output DIR") and what it does with its default, lines cut by '\n'. */
typedef struct cli_opt {
    const char *flags, *text;
} cli_opt;

#define CLI_MAX_OPTS 16

/* One subcommand: everything its --help, the man page and `dtsim --help`
 * print.  synopsis follows "dtsim NAME "; continuation lines are cut by
 * '\n' and indented under the first. */
typedef struct cli_command {
    const char *name, *synopsis, *summary, *about;
    cli_opt     opts[CLI_MAX_OPTS];   /* ended by a NULL flags */
    const char *exit_status;
    int (*run)(int argc, char **argv);
} cli_command;

const cli_command *cli_command_find(const char *name);   /* NULL when unknown */

/* Prints text filled to 79 columns from column col, continuation lines
 * indented by indent columns (words are cut at spaces only), and a
 * newline. */
void cli_print_filled(FILE *f, const char *text, int col, int indent);

/* argv[1] names the subcommand; returns the exit status. */
int cli_dispatch(int argc, char **argv);

/* --help, -h or --version as an argument of cmd (NULL: of dtsim itself):
 * prints the help or version to stdout and returns 0; -1 for any other
 * argument. */
int cli_std_option(const char *cmd, const char *arg);

/* Prints "dtsim CMD: error: MESSAGE", CMD's synopsis and where to find
 * more to stderr (GNU style); returns 2, the status of bad usage. */
int cli_usage_error(const char *cmd, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* "dtsim 0.1.0 (git e816810-dirty, cblas: openblas)" and the commit
 * alone ("unknown" when built outside a git checkout). */
void        cli_print_version(FILE *f);
const char *cli_git_commit(void);

/* The whole command line, argv[0] included, as main got it (set by
 * cli_dispatch). */
extern int          cli_argc;
extern char *const *cli_argv;

/* Fills p for an output of command cmd: the commit, the command line,
 * the --set list (borrowed), the start time and the host. */
void cli_provenance(out_provenance *p, const char *cmd, const char *const *sets,
                    size_t n_sets);

/* Flushes stdout; 0, or 1 with a message when anything written to it was
 * lost (a full disk, a closed pipe). */
int cli_close_stdout(void);

/* After a loader or preparation error message err_msg ("FILE: /a/b:
 * error: ..."): when the JSON pointer it names was set (or lies inside a
 * value set) by one of the overrides, a note naming that --set on stderr. */
void cli_note_override(const char *cmd, const char *err_msg, const char *const *sets,
                       size_t n_sets);

/* The arguments of run, validate, resolve and topo.  allow says which
 * options the command takes (CLI_OPT_*); --set, --quiet, --help and
 * --version are always taken.  Scenario files are collected in order (more than one only
 * with CLI_OPT_FILES). */
#define CLI_MAX_SETS 256
enum { CLI_OPT_OUT = 1, CLI_OPT_SEED = 2, CLI_OPT_FORCE = 8,
       CLI_OPT_GRAPH = 16, CLI_OPT_FILES = 32, CLI_OPT_THREADS = 64, CLI_OPT_PROGRESS = 128 };
typedef struct cli_args {
    const char **files;       /* argv entries; n_files of them */
    int          n_files;
    const char  *out;         /* -o */
    const char  *sets[CLI_MAX_SETS + 3];   /* --seed and --force (two) added */
    size_t       n_sets;
    char         seed_set[64];
    int          quiet, force, edges, dot;
    int          threads;     /* --threads; 0 when not given */
    double       progress_s;  /* --progress; NAN when not given */
} cli_args;
/* Returns -1 when the arguments are good and the command should go on,
 * else the exit status (0 after --help or --version, 2 after a usage
 * error, printed).  a->files is allocated; cli_args_fini frees it. */
int  cli_args_parse(const char *cmd, int argc, char **argv, int allow, cli_args *a);
void cli_args_fini(cli_args *a);

/* The cores online (1 .. 4096): the default of --threads and of -j. */
int cli_cores(void);
/* --threads N's value: 0 and N in 1 .. 4096, or -1 when not a whole
 * number in that range. */
int cli_parse_threads(const char *s);

/* --progress's value: seconds >= 0 (0: off) or "each"
 * (OUT_PROGRESS_EACH); -1 when neither. */
int cli_parse_progress(const char *s, double *period_s);

/* Set by cli_dispatch when a command that gives --quiet no meaning of its
 * own (list, keys, explain, help, plot, ...) was passed it: the argument is
 * taken out before the command sees its arguments. */
extern int cli_quiet;

int cli_run(int argc, char **argv);
int cli_validate(int argc, char **argv);
int cli_resolve(int argc, char **argv);
int cli_topo(int argc, char **argv);
int cli_sweep(int argc, char **argv);
int cli_merge(int argc, char **argv);
int cli_plot(int argc, char **argv);
int cli_table(int argc, char **argv);
int cli_help(int argc, char **argv);
int cli_list(int argc, char **argv);
int cli_explain(int argc, char **argv);
int cli_keys(int argc, char **argv);

#endif
