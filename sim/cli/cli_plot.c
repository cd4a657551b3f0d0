/* cli_plot.c -- `dtsim plot DIR...`: checks its arguments and that each
 * directory is a readable run or sweep folder (the CSV files the figures
 * read exist, are complete tables with the columns the figures need and
 * at least one row; a bad one is named with its line, exit 2, before
 * gnuplot starts), then hands the directories to the gnuplot driver
 * plots/plot.sh (from $DTSIM_PLOTS, else the source tree this binary was
 * built from, else the installed copy) with the options it checked
 * (--spread, --label, --quiet), which draws the standard figures.  It
 * draws nothing itself.
 */
#include "cli.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* Fields of one CSV line (RFC 4180 quotes); *name_at set to the index of
 * the field equal to name, when given. */
static int count_fields(const char *line, size_t len, const char *name, int *name_at)
{
    int n = 0, q = 0;
    size_t start = 0;
    for (size_t i = 0; i <= len; i++) {
        if (i < len && line[i] == '"')
            q = !q;
        if (i == len || (!q && line[i] == ',')) {
            if (name && i - start == strlen(name) && strncmp(line + start, name, i - start) == 0)
                *name_at = n;
            n++;
            start = i + 1;
        }
    }
    return n;
}

/* Field k of a CSV line, unquoted fields only (the numbers dtsim writes). */
static int field_is_number(const char *line, size_t len, int k)
{
    size_t i = 0;
    for (int n = 0; n < k && i <= len; i++)
        if (i == len || line[i] == ',')
            n++;
    size_t end = i;
    while (end < len && line[end] != ',')
        end++;
    char buf[64], *e;
    if (end == i || end - i >= sizeof buf)
        return 0;
    memcpy(buf, line + i, end - i);
    buf[end - i] = '\0';
    double v = strtod(buf, &e);
    return *e == '\0' && v == v && buf[0] != ' ';
}

/* 0 when path is a complete table with every column of need (NULL-ended)
 * and at least one row, need[0] a number in every row; else 2 with the
 * place printed. */
static int check_table(const char *path, const char *const *need)
{
    int num_at = -1;
    FILE *f = fopen(path, "rb");
    if (!f) {
        fprintf(stderr, "dtsim plot: error: %s: cannot open: %s\n", path, strerror(errno));
        return 2;
    }
    char *line = NULL;
    size_t cap = 0;
    ssize_t len;
    long no = 0;
    int header = 0, rc = 0;
    while (rc == 0 && (len = getline(&line, &cap, f)) >= 0) {
        no++;
        if (len == 0 || line[len - 1] != '\n') {
            fprintf(stderr, "dtsim plot: error: %s:%ld: last line is not terminated (a run "
                    "still being written, or a truncated file)\n", path, no);
            rc = 2;
            break;
        }
        len--;
        for (ssize_t i = 0; i < len; i++)
            if ((unsigned char)line[i] < 0x20 && line[i] != '\t' && line[i] != '\r') {
                fprintf(stderr, "dtsim plot: error: %s:%ld: control character in a CSV "
                        "file\n", path, no);
                rc = 2;
                break;
            }
        if (rc)
            break;
        int n = count_fields(line, (size_t)len, NULL, NULL);
        if (no == 1) {
            header = n;
            for (int k = 0; need[k]; k++) {
                int at = -1;
                count_fields(line, (size_t)len, need[k], &at);
                if (k == 0)
                    num_at = at;
                if (at < 0) {
                    fprintf(stderr, "dtsim plot: error: %s:1: no column \"%s\" in the "
                            "header (not a file dtsim wrote)\n", path, need[k]);
                    rc = 2;
                    break;
                }
            }
        } else if (n != header) {
            fprintf(stderr, "dtsim plot: error: %s:%ld: %d fields, the header has %d\n",
                    path, no, n, header);
            rc = 2;
        } else if (!field_is_number(line, (size_t)len, num_at)) {
            fprintf(stderr, "dtsim plot: error: %s:%ld: %s is not a number\n", path, no,
                    need[0]);
            rc = 2;
        }
    }
    if (rc == 0 && ferror(f)) {
        fprintf(stderr, "dtsim plot: error: %s: cannot read\n", path);
        rc = 2;
    } else if (rc == 0 && no < 2) {
        fprintf(stderr, "dtsim plot: error: %s: %s\n", path,
                no ? "no rows below the header" : "empty");
        rc = 2;
    }
    free(line);
    fclose(f);
    return rc;
}

static int exists(const char *dir, const char *name)
{
    char p[4096];
    snprintf(p, sizeof p, "%s/%s", dir, name);
    return access(p, F_OK) == 0;
}

static int check_table_in(const char *dir, const char *name, const char *const *need)
{
    char p[4096];
    snprintf(p, sizeof p, "%s/%s", dir, name);
    return check_table(p, need);
}

/* 0 when dir holds a run (metrics.csv) or a sweep (sweep.csv and
 * summary.csv) the figures can read; else 2 with the reason printed. */
static int check_folder(const char *dir)
{
    static const char *const run_cols[] = { "time_s", NULL };
    static const char *const sweep_cols[] = { "run", "replicate", "time_s", NULL };
    static const char *const summary_cols[] = { "run", "status", NULL };
    struct stat st;
    if (stat(dir, &st) != 0 || !S_ISDIR(st.st_mode)) {
        fprintf(stderr, "dtsim plot: error: %s: %s\n", dir,
                errno && stat(dir, &st) != 0 ? strerror(errno) : "not a directory");
        return 2;
    }
    if (exists(dir, "sweep.csv"))
        return check_table_in(dir, "sweep.csv", sweep_cols) ? 2
               : check_table_in(dir, "summary.csv", summary_cols);
    if (exists(dir, "metrics.csv"))
        return check_table_in(dir, "metrics.csv", run_cols);
    fprintf(stderr, "dtsim plot: error: %s: neither sweep.csv nor metrics.csv (not a run or "
            "sweep folder)\n", dir);
    return 2;
}

int cli_plot(int argc, char **argv)
{
    int n_dirs = 0;
    for (int i = 0; i < argc; i++) {
        const char *a = argv[i];
        if (cli_std_option("plot", a) == 0)
            return 0;
        if (strcmp(a, "--spread") == 0 || strcmp(a, "--label") == 0) {
            if (i + 1 == argc)
                return cli_usage_error("plot", "option '%s' needs a value", a);
            const char *v = argv[++i];
            if (a[2] == 's' && strcmp(v, "sd") != 0 && strcmp(v, "se") != 0
                && strcmp(v, "ci95") != 0 && strcmp(v, "minmax") != 0)
                return cli_usage_error("plot", "--spread '%s': expected one of: sd, se, ci95, "
                                       "minmax", v);
            const char *eq = strchr(v, '=');
            if (a[2] == 'l' && (!eq || eq == v))
                return cli_usage_error("plot", "--label '%s': expected PATH=TEXT", v);
        } else if (strcmp(a, "--quiet") == 0) {
            continue;
        } else if (a[0] == '-' && a[1] != '\0') {
            return cli_usage_error("plot", "unknown option '%s'", a);
        } else {
            n_dirs++;
        }
    }
    if (n_dirs == 0)
        return cli_usage_error("plot", "no directory given");
    for (int i = 0; i < argc; i++) {
        if (strcmp(argv[i], "--spread") == 0 || strcmp(argv[i], "--label") == 0)
            i++;
        else if (strcmp(argv[i], "--quiet") != 0 && check_folder(argv[i]) != 0)
            return 2;
    }
    const char *dir = getenv("DTSIM_PLOTS");
    char script[4096];
    if (dir && *dir) {
        snprintf(script, sizeof script, "%s/plot.sh", dir);
    } else {
        snprintf(script, sizeof script, "%s/plot.sh", DTSIM_PLOTS_DIR);
        if (access(script, R_OK) != 0)
            snprintf(script, sizeof script, "%s/plot.sh", DTSIM_PLOTS_INSTALL_DIR);
    }
    if (access(script, R_OK) != 0) {
        fprintf(stderr, "dtsim plot: error: %s: %s (set DTSIM_PLOTS to the plots/ directory)\n",
                script, strerror(errno));
        return 2;
    }
    /* sh plot.sh OPTIONS... -- DIR...: a directory named like an option
     * stays a directory */
    char **av = calloc((size_t)argc + 4, sizeof *av);
    if (!av)
        return 1;
    int k = 0;
    av[k++] = "sh";
    av[k++] = script;
    for (int i = 0; i < argc; i++) {
        if (strcmp(argv[i], "--spread") == 0 || strcmp(argv[i], "--label") == 0) {
            av[k++] = argv[i];
            av[k++] = argv[++i];
        } else if (strcmp(argv[i], "--quiet") == 0) {
            av[k++] = argv[i];
        }
    }
    av[k++] = "--";
    for (int i = 0; i < argc; i++) {
        if (strcmp(argv[i], "--spread") == 0 || strcmp(argv[i], "--label") == 0)
            i++;
        else if (strcmp(argv[i], "--quiet") != 0)
            av[k++] = argv[i];
    }
    fflush(NULL);
    if (cli_quiet) {   /* plot.sh's "wrote ..." lines; its errors still show */
        int fd = open("/dev/null", O_WRONLY);
        if (fd >= 0) {
            dup2(fd, STDOUT_FILENO);
            close(fd);
        }
    }
    execvp("sh", av);
    fprintf(stderr, "dtsim plot: error: cannot run sh: %s\n", strerror(errno));
    free(av);
    return 1;
}
