/* cli_table.c -- `dtsim table SWEEP_DIR METRIC...`: reads the sweep's
 * summary.csv, groups its rows by grid point (the parameter columns
 * between "run" and "replicate", in the order of first appearance), and
 * computes per grid point and metric the mean, standard deviation,
 * standard error, t-based 95% confidence half-width (GSL's t quantile),
 * minimum and maximum over the replicates whose value is finite, and, with
 * --baseline, the speedup (or ratio) of the means against the grid point
 * the baseline names.  Bad metric names, folders and baselines are
 * refused with the file and line, exit 2, before anything is written; a
 * table written to a file appears complete or not at all (out_file).
 * It formats nothing itself (cli_table_fmt.c does) and runs nothing.
 */
#include "cli.h"
#include "cli_table.h"
#include "out.h"

#include <errno.h>
#include <gsl/gsl_cdf.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#define MAX_METRICS 64
#define MAX_LABELS  64
#define MAX_BASE    16
#define MAX_BYTES   (256L << 20)   /* a summary.csv larger than this is refused */

enum { FMT_AUTO, FMT_MD, FMT_CSV, FMT_LATEX };

/* summary.csv in memory: every line split into fields (RFC 4180). */
typedef struct csv {
    char  *text;
    char **field;     /* all fields, row after row */
    int    n_cols, n_rows;   /* rows below the header */
} csv;

static const char *cell(const csv *c, int row, int col)   /* row -1: header */
{
    return c->field[(size_t)(row + 1) * (size_t)c->n_cols + (size_t)col];
}

static void csv_free(csv *c)
{
    free(c->text);
    free(c->field);
}

/* Splits one line in place; returns the number of fields, or -1 on an
 * unterminated quote.  fields NULL: counts only (no change to line). */
static int split_line(char *line, char **fields, int max)
{
    int n = 0, q = 0;
    char *w = line, *start = line;
    for (char *p = line;; p++) {
        if (q) {
            if (*p == '\0')
                return -1;
            if (*p == '"' && p[1] == '"') {
                if (fields)
                    *w++ = '"';
                p++;
            } else if (*p == '"') {
                q = 0;
            } else if (fields) {
                *w++ = *p;
            }
        } else if (*p == '"') {
            q = 1;
        } else if (*p == ',' || *p == '\0') {
            int end = *p == '\0';
            if (fields) {
                if (n < max)
                    fields[n] = start;
                *w = '\0';
                start = w = p + 1;
            }
            n++;
            if (end)
                return n;
        } else if (fields) {
            *w++ = *p;
        }
    }
}

/* Reads path; 0, or 2 with the place printed. */
static int csv_read(const char *path, csv *c)
{
    memset(c, 0, sizeof *c);
    FILE *f = fopen(path, "rb");
    if (!f) {
        fprintf(stderr, "dtsim table: error: %s: cannot open: %s\n", path, strerror(errno));
        return 2;
    }
    size_t cap = 1 << 16, len = 0;
    c->text = malloc(cap);
    for (size_t got; c->text && (got = fread(c->text + len, 1, cap - len - 1, f)) > 0;) {
        len += got;
        if ((long)len > MAX_BYTES) {
            fprintf(stderr, "dtsim table: error: %s: larger than %ld MiB\n", path,
                    MAX_BYTES >> 20);
            fclose(f);
            return 2;
        }
        if (cap - len - 1 == 0) {
            char *p = realloc(c->text, cap *= 2);
            if (!p) {
                free(c->text);
                c->text = NULL;
            }
            c->text = p;
        }
    }
    int bad = ferror(f);
    fclose(f);
    if (!c->text || bad) {
        fprintf(stderr, "dtsim table: error: %s: cannot read%s\n", path,
                c->text ? "" : " (out of memory)");
        return 2;
    }
    c->text[len] = '\0';
    if (len == 0) {
        fprintf(stderr, "dtsim table: error: %s: empty\n", path);
        return 2;
    }
    if (c->text[len - 1] != '\n') {
        fprintf(stderr, "dtsim table: error: %s: last line is not terminated (a sweep still "
                "being gathered, or a truncated file)\n", path);
        return 2;
    }
    int lines = 0;
    for (size_t i = 0; i < len; i++) {
        if (c->text[i] == '\n') {
            lines++;
            c->text[i] = '\0';
        } else if ((unsigned char)c->text[i] < 0x20 && c->text[i] != '\r') {
            fprintf(stderr, "dtsim table: error: %s:%d: control character\n", path, lines + 1);
            return 2;
        }
    }
    for (size_t i = 0; i < len; i++)   /* CRLF: drop the CR */
        if (c->text[i] == '\r' && c->text[i + 1] == '\0')
            c->text[i] = '\0';
    c->n_cols = split_line(c->text, NULL, 0);
    if (c->n_cols < 1) {
        fprintf(stderr, "dtsim table: error: %s:1: unterminated quote\n", path);
        return 2;
    }
    c->n_rows = lines - 1;
    c->field = malloc((size_t)lines * (size_t)c->n_cols * sizeof *c->field);
    if (!c->field) {
        fprintf(stderr, "dtsim table: error: %s: out of memory\n", path);
        return 2;
    }
    char *p = c->text;
    for (int l = 0; l < lines; l++) {
        size_t next = strlen(p) + 1;
        int n = split_line(p, NULL, 0);
        if (n != c->n_cols) {
            if (n < 0)
                fprintf(stderr, "dtsim table: error: %s:%d: unterminated quote\n", path, l + 1);
            else
                fprintf(stderr, "dtsim table: error: %s:%d: %d fields, the header has %d\n",
                        path, l + 1, n, c->n_cols);
            return 2;
        }
        split_line(p, c->field + (size_t)l * (size_t)c->n_cols, c->n_cols);
        p += next;
    }
    if (c->n_rows < 1) {
        fprintf(stderr, "dtsim table: error: %s: no rows below the header\n", path);
        return 2;
    }
    return 0;
}

static int col_of(const csv *c, const char *name)
{
    for (int k = 0; k < c->n_cols; k++)
        if (strcmp(cell(c, -1, k), name) == 0)
            return k;
    return -1;
}

/* A number as dtsim writes it (%.10g, "inf", "nan"); 0 when v is not one. */
static int parse_number(const char *s, double *v)
{
    char *e;
    if (!*s || *s == ' ')
        return 0;
    errno = 0;
    *v = strtod(s, &e);
    return *e == '\0';
}

int tbl_metric_kind(const char *m)
{
    size_t n = strlen(m);
    if (n > 6 && strcmp(m + n - 6, "_per_s") == 0)
        return 2;
    if (n > 2 && strcmp(m + n - 2, "_s") == 0)
        return 1;
    return 0;
}

static void stats(tbl_stat *s, const double *v, int runs)
{
    memset(s, 0, sizeof *s);
    s->runs = runs;
    s->all_inf = runs > 0;
    double sum = 0;
    s->lo = INFINITY;
    s->hi = -INFINITY;
    for (int i = 0; i < runs; i++) {
        if (!(isinf(v[i]) && v[i] > 0))
            s->all_inf = 0;
        if (!isfinite(v[i]))
            continue;
        s->n++;
        sum += v[i];
        if (v[i] < s->lo)
            s->lo = v[i];
        if (v[i] > s->hi)
            s->hi = v[i];
    }
    s->mean = s->n ? sum / s->n : NAN;
    if (!s->n)
        s->lo = s->hi = NAN;
    s->sd = s->se = s->ci95 = NAN;
    s->rel = NAN;
    if (s->n >= 2) {
        double ss = 0;   /* two passes: no cancellation */
        for (int i = 0; i < runs; i++)
            if (isfinite(v[i]))
                ss += (v[i] - s->mean) * (v[i] - s->mean);
        s->sd = sqrt(ss / (s->n - 1));
        s->se = s->sd / sqrt(s->n);
        s->ci95 = gsl_cdf_tdist_Pinv(0.975, s->n - 1) * s->se;
    }
}

typedef struct base_pair {
    const char *path, *value;
    int         col;   /* parameter index */
} base_pair;

/* Whether a parameter value matches a --baseline value: the text as in
 * summary.csv, or its short form. */
static int value_matches(const char *v, const char *want)
{
    char buf[1024];
    return strcmp(v, want) == 0 || strcmp(tbl_short_value(v, buf, sizeof buf), want) == 0;
}

static int usage(const char *fmt, const char *arg)
{
    return cli_usage_error("table", fmt, arg);
}

int cli_table(int argc, char **argv)
{
    const char *dir = NULL, *out = NULL, *met[MAX_METRICS];
    const char *label_path[MAX_LABELS], *label_text[MAX_LABELS];
    base_pair base[MAX_BASE];
    static char paths[MAX_LABELS + MAX_BASE][256];
    int n_met = 0, n_lab = 0, n_base = 0, fmt = FMT_AUTO, spread = TBL_SD;
    for (int i = 0; i < argc; i++) {
        const char *a = argv[i];
        if (cli_std_option("table", a) == 0)
            return 0;
        int has = i + 1 < argc;
        if (strcmp(a, "--format") == 0 || strcmp(a, "--spread") == 0 || strcmp(a, "-o") == 0
            || strcmp(a, "--output") == 0 || strcmp(a, "--baseline") == 0
            || strcmp(a, "--label") == 0) {
            if (!has)
                return usage("option '%s' needs a value", a);
            const char *v = argv[++i];
            if (strcmp(a, "--format") == 0) {
                fmt = strcmp(v, "md") == 0 || strcmp(v, "markdown") == 0 ? FMT_MD
                      : strcmp(v, "csv") == 0                            ? FMT_CSV
                      : strcmp(v, "latex") == 0 || strcmp(v, "tex") == 0 ? FMT_LATEX
                                                                         : -1;
                if (fmt < 0)
                    return usage("--format '%s': expected one of: md, csv, latex", v);
            } else if (strcmp(a, "--spread") == 0) {
                spread = strcmp(v, "sd") == 0       ? TBL_SD
                         : strcmp(v, "se") == 0     ? TBL_SE
                         : strcmp(v, "ci95") == 0   ? TBL_CI95
                         : strcmp(v, "minmax") == 0 ? TBL_MINMAX
                                                    : -1;
                if (spread < 0)
                    return usage("--spread '%s': expected one of: sd, se, ci95, minmax", v);
            } else if (a[1] == 'o' || strcmp(a, "--output") == 0) {
                out = v;
            } else {
                const char *eq = strchr(v, '=');
                if (!eq || eq == v)
                    return usage("'%s': expected PATH=VALUE", v);
                if (eq - v >= (long)sizeof paths[0])
                    return usage("'%s': the path is too long", v);
                if (n_lab + n_base == MAX_LABELS + MAX_BASE)
                    return usage("too many --label and --baseline ('%s')", v);
                char *path = paths[n_lab + n_base];
                snprintf(path, sizeof paths[0], "%.*s", (int)(eq - v), v);
                if (strcmp(a, "--label") == 0) {
                    if (n_lab == MAX_LABELS)
                        return usage("more than 64 --label ('%s')", v);
                    label_path[n_lab] = path;
                    label_text[n_lab++] = eq + 1;
                } else {
                    if (n_base == MAX_BASE)
                        return usage("more than 16 --baseline ('%s')", v);
                    base[n_base].path = path;
                    base[n_base].value = eq + 1;
                    base[n_base++].col = -1;
                }
            }
        } else if (a[0] == '-' && a[1] != '\0' && strcmp(a, "--quiet") != 0) {
            return usage("unknown option '%s'", a);
        } else if (strcmp(a, "--quiet") == 0) {
            /* nothing to silence: the table is the output */
        } else if (!dir) {
            dir = a;
        } else if (n_met == MAX_METRICS) {
            return usage("more than 64 metrics ('%s')", a);
        } else {
            met[n_met++] = a;
        }
    }
    int rc = 2;
    if (!dir)
        return usage("%s", "no sweep folder given");
    if (n_met == 0)
        return usage("%s", "no metric given (a numeric column of summary.csv, e.g. "
                           "time_to_target_accuracy_s)");
    if (fmt == FMT_AUTO) {
        size_t n = out ? strlen(out) : 0;
        fmt = n > 4 && strcmp(out + n - 4, ".csv") == 0   ? FMT_CSV
              : n > 4 && strcmp(out + n - 4, ".tex") == 0 ? FMT_LATEX
                                                          : FMT_MD;
    }
    struct stat sb;
    char path[4096];
    if (stat(dir, &sb) != 0 || !S_ISDIR(sb.st_mode)) {
        fprintf(stderr, "dtsim table: error: %s: %s\n", dir,
                stat(dir, &sb) != 0 ? strerror(errno) : "not a directory");
        return 2;
    }
    snprintf(path, sizeof path, "%s/summary.csv", dir);
    if (stat(path, &sb) != 0) {
        fprintf(stderr, "dtsim table: error: %s: not a sweep folder (no summary.csv)\n", dir);
        return 2;
    }
    csv c;
    if (csv_read(path, &c) != 0) {
        csv_free(&c);
        return 2;
    }
    tbl t = { 0 };
    double *vals = NULL;
    int *grp = NULL, *mcol = NULL;
    int rep = col_of(&c, "replicate");
    if (col_of(&c, "run") != 0 || rep < 1) {
        fprintf(stderr, "dtsim table: error: %s:1: no \"run\" and \"replicate\" columns (not a "
                "summary.csv dtsim wrote)\n", path);
        goto out;
    }
    t.n_par = rep - 1;
    t.n_met = n_met;
    t.met = met;
    t.spread = spread;
    mcol = malloc((size_t)n_met * sizeof *mcol);
    t.par_label = calloc((size_t)t.n_par + 1, sizeof *t.par_label);
    t.rel_speedup = calloc((size_t)n_met, sizeof *t.rel_speedup);
    grp = malloc((size_t)c.n_rows * sizeof *grp);
    vals = malloc((size_t)c.n_rows * (size_t)n_met * sizeof *vals);
    t.par_val = malloc(((size_t)c.n_rows * (size_t)t.n_par + 1) * sizeof *t.par_val);
    t.runs = calloc((size_t)c.n_rows, sizeof *t.runs);
    if (!mcol || !t.par_label || !t.rel_speedup || !grp || !vals || !t.par_val || !t.runs) {
        fprintf(stderr, "dtsim table: error: out of memory\n");
        rc = 1;
        goto out;
    }
    /* metrics: numeric columns after the prefix */
    for (int j = 0; j < n_met; j++) {
        mcol[j] = col_of(&c, met[j]);
        if (mcol[j] <= rep + 2) {
            fprintf(stderr, "dtsim table: error: %s:1: no metric column \"%s\" (expected one "
                    "of:", path, met[j]);
            for (int k = rep + 3, first = 1; k < c.n_cols; k++) {
                double v;
                if (parse_number(cell(&c, 0, k), &v)) {
                    fprintf(stderr, "%s %s", first ? "" : ",", cell(&c, -1, k));
                    first = 0;
                }
            }
            fputs(")\n", stderr);
            goto out;
        }
        for (int r = 0; r < c.n_rows; r++)
            if (!parse_number(cell(&c, r, mcol[j]), &vals[(size_t)r * n_met + j])) {
                fprintf(stderr, "dtsim table: error: %s:%d: %s: \"%s\" is not a number (a "
                        "metric is a numeric column)\n", path, r + 2, met[j],
                        cell(&c, r, mcol[j]));
                goto out;
            }
        t.rel_speedup[j] = tbl_metric_kind(met[j]) != 0;
    }
    for (int k = 0; k < t.n_par; k++) {
        t.par_label[k] = cell(&c, -1, k + 1);
        for (int l = 0; l < n_lab; l++)
            if (strcmp(label_path[l], t.par_label[k]) == 0)
                t.par_label[k] = label_text[l];
    }
    for (int l = 0; l < n_lab; l++) {
        int found = 0;
        for (int k = 0; k < t.n_par; k++)
            found |= strcmp(label_path[l], cell(&c, -1, k + 1)) == 0;
        if (!found) {
            fprintf(stderr, "dtsim table: error: --label %s=%s: %s is not a swept parameter of "
                    "%s (", label_path[l], label_text[l], label_path[l], path);
            for (int k = 0; k < t.n_par; k++)
                fprintf(stderr, "%s%s", k ? ", " : "", cell(&c, -1, k + 1));
            fputs(t.n_par ? ")\n" : "none)\n", stderr);
            goto out;
        }
    }
    /* group rows by their parameter values, in order of first appearance */
    for (int r = 0; r < c.n_rows; r++) {
        int g = 0;
        for (; g < t.n_grp; g++) {
            int same = 1;
            for (int k = 0; k < t.n_par && same; k++)
                same = strcmp(t.par_val[(size_t)g * t.n_par + k], cell(&c, r, k + 1)) == 0;
            if (same)
                break;
        }
        if (g == t.n_grp) {
            for (int k = 0; k < t.n_par; k++)
                t.par_val[(size_t)g * t.n_par + k] = cell(&c, r, k + 1);
            t.n_grp++;
        }
        grp[r] = g;
        t.runs[g]++;
    }
    t.st = calloc((size_t)t.n_grp * (size_t)n_met, sizeof *t.st);
    double *v = malloc((size_t)c.n_rows * sizeof *v);
    if (!t.st || !v) {
        free(v);
        fprintf(stderr, "dtsim table: error: out of memory\n");
        rc = 1;
        goto out;
    }
    for (int g = 0; g < t.n_grp; g++)
        for (int j = 0; j < n_met; j++) {
            int m = 0;
            for (int r = 0; r < c.n_rows; r++)
                if (grp[r] == g)
                    v[m++] = vals[(size_t)r * n_met + j];
            stats(&t.st[(size_t)g * n_met + j], v, m);
        }
    free(v);
    /* the baseline: the grid point with the named values, the others as
     * in the row */
    char base_text[2048] = "";
    for (int b = 0; b < n_base; b++) {
        const char *p = base[b].path;
        if (strcmp(p, "protocol") == 0 && col_of(&c, "algorithm.name") > 0
            && col_of(&c, "algorithm.name") < rep)
            p = "algorithm.name";
        for (int k = 0; k < t.n_par; k++)
            if (strcmp(cell(&c, -1, k + 1), p) == 0)
                base[b].col = k;
        if (base[b].col < 0) {
            fprintf(stderr, "dtsim table: error: --baseline %s=%s: %s is not a swept parameter "
                    "of %s (", base[b].path, base[b].value, base[b].path, path);
            for (int k = 0; k < t.n_par; k++)
                fprintf(stderr, "%s%s", k ? ", " : "", cell(&c, -1, k + 1));
            fputs(t.n_par ? ")\n" : "none)\n", stderr);
            goto out;
        }
        int found = 0;
        for (int g = 0; g < t.n_grp && !found; g++)
            found = value_matches(t.par_val[(size_t)g * t.n_par + base[b].col], base[b].value);
        if (!found) {
            fprintf(stderr, "dtsim table: error: --baseline %s=%s: no grid point of %s has "
                    "that value (%s:", base[b].path, base[b].value, path, p);
            for (int g = 0; g < t.n_grp; g++) {
                const char *pv = t.par_val[(size_t)g * t.n_par + base[b].col];
                int seen = 0;
                for (int h = 0; h < g && !seen; h++)
                    seen = strcmp(t.par_val[(size_t)h * t.n_par + base[b].col], pv) == 0;
                if (!seen)
                    fprintf(stderr, " %s", pv);
            }
            fputs(")\n", stderr);
            goto out;
        }
        size_t len = strlen(base_text);
        snprintf(base_text + len, sizeof base_text - len, "%s%s=%s", b ? ", " : "",
                 t.par_label[base[b].col], base[b].value);
    }
    if (n_base) {
        t.baseline = base_text;
        for (int g = 0; g < t.n_grp; g++) {
            int bg = -1;
            for (int h = 0; h < t.n_grp && bg < 0; h++) {
                int ok = 1;
                for (int k = 0; k < t.n_par && ok; k++) {
                    const char *hv = t.par_val[(size_t)h * t.n_par + k];
                    int fixed = -1;
                    for (int b = 0; b < n_base; b++)
                        if (base[b].col == k)
                            fixed = b;
                    ok = fixed >= 0 ? value_matches(hv, base[fixed].value)
                                    : strcmp(hv, t.par_val[(size_t)g * t.n_par + k]) == 0;
                }
                if (ok)
                    bg = h;
            }
            for (int j = 0; bg >= 0 && j < n_met; j++) {
                tbl_stat *s = &t.st[(size_t)g * n_met + j];
                const tbl_stat *bs = &t.st[(size_t)bg * n_met + j];
                int kind = tbl_metric_kind(met[j]);
                if (s->n && bs->n)
                    s->rel = kind == 1 ? bs->mean / s->mean : s->mean / bs->mean;
            }
        }
    }
    /* write */
    out_file *of = NULL;
    FILE *f = stdout;
    char err[4200];
    if (out) {
        char d[4096];
        const char *slash = strrchr(out, '/');
        if (slash)
            snprintf(d, sizeof d, "%.*s", (int)(slash - out), out);
        else
            snprintf(d, sizeof d, ".");
        if (slash && slash == out)
            snprintf(d, sizeof d, "/");
        if (!(of = out_file_open(d, slash ? slash + 1 : out, err, sizeof err))) {
            fprintf(stderr, "dtsim table: %s\n", err);
            rc = 1;
            goto out;
        }
        f = out_file_stream(of);
    }
    if (fmt == FMT_CSV)
        tbl_write_csv(f, &t);
    else if (fmt == FMT_LATEX)
        tbl_write_latex(f, &t);
    else
        tbl_write_markdown(f, &t);
    rc = 0;
    if (of && out_file_commit(of, err, sizeof err) != 0) {
        fprintf(stderr, "dtsim table: %s\n", err);
        rc = 1;
    }
out:
    free(mcol);
    free(grp);
    free(vals);
    free(t.par_label);
    free(t.par_val);
    free(t.runs);
    free(t.st);
    free(t.rel_speedup);
    csv_free(&c);
    return rc;
}
