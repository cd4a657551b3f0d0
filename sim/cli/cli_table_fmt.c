/* cli_table_fmt.c -- the writers of `dtsim table`: one table of grid
 * points by metrics (cli_table.h) as Markdown, as CSV (every statistic,
 * full precision, for further processing) or as LaTeX with booktabs rules.
 * Text cells round the mean to the precision of what follows it: the
 * deviation (or interval) is given to two significant digits and the mean
 * to the same decimal place ("2.0 ± 1.0", "110 ± 25", "12300 ± 1200").
 * It computes no statistic (cli_table.c does).
 */
#include "cli_table.h"
#include "out.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

const char *tbl_short_value(const char *v, char *buf, size_t size)
{
    if (v[0] != '{') {
        snprintf(buf, size, "%s", v);
        return buf;
    }
    /* drop braces, quotes and spaces; "name": goes; commas become spaces */
    size_t n = 0;
    for (const char *p = v; *p && n + 1 < size; p++) {
        if (strncmp(p, "\"name\":", 7) == 0 && (p == v + 1 || p[-1] == ',')) {
            p += 6;
            continue;
        }
        if (*p == '{' || *p == '}' || *p == '"' || *p == ' ')
            continue;
        buf[n++] = *p == ',' ? ' ' : *p;
    }
    buf[n] = '\0';
    return buf;
}

static const char *spread_name(int spread, int latex)
{
    switch (spread) {
    case TBL_SE:     return latex ? "mean $\\pm$ se" : "mean ± se";
    case TBL_CI95:   return latex ? "mean $\\pm$ 95\\% CI" : "mean ± 95% CI";
    case TBL_MINMAX: return "mean [min, max]";
    default:         return latex ? "mean $\\pm$ sd" : "mean ± sd";
    }
}

/* "m ± u" with u to two significant digits and m to the same place; pm is
 * the separator (" ± " or " \pm "). */
static void fmt_pm(char *buf, size_t size, double m, double u, const char *pm)
{
    if (!isfinite(u)) {
        snprintf(buf, size, "%.4g", m);
        return;
    }
    if (u == 0) {
        snprintf(buf, size, "%.4g%s0", m, pm);
        return;
    }
    int d = 1 - (int)floor(log10(u));
    if (d > 15)
        d = 15;
    if (d > 0) {
        snprintf(buf, size, "%.*f%s%.*f", d, m, pm, d, u);
    } else {
        double scale = pow(10, -d);
        snprintf(buf, size, "%.0f%s%.0f", round(m / scale) * scale, pm, round(u / scale) * scale);
    }
}

/* The text of one cell; latex: in math mode where numbers are. */
static void fmt_cell(char *buf, size_t size, const tbl *t, const tbl_stat *s, int latex)
{
    if (s->n == 0) {
        if (s->all_inf)
            snprintf(buf, size, "never (0/%d)", s->runs);
        else
            snprintf(buf, size, "%s", latex ? "--" : "–");
        return;
    }
    char num[128];
    if (t->spread == TBL_MINMAX) {
        if (latex)
            snprintf(num, sizeof num, "$%.4g\\ [%.4g, %.4g]$", s->mean, s->lo, s->hi);
        else
            snprintf(num, sizeof num, "%.4g [%.4g, %.4g]", s->mean, s->lo, s->hi);
    } else {
        double u = t->spread == TBL_SE ? s->se : t->spread == TBL_CI95 ? s->ci95 : s->sd;
        char x[100];
        fmt_pm(x, sizeof x, s->mean, u, latex ? " \\pm " : " ± ");
        snprintf(num, sizeof num, latex ? "$%s$" : "%s", x);
    }
    if (s->n < s->runs)
        snprintf(buf, size, "%s (%d/%d)", num, s->n, s->runs);
    else
        snprintf(buf, size, "%s", num);
}

static void fmt_rel(char *buf, size_t size, double r, int latex)
{
    if (isfinite(r))
        snprintf(buf, size, latex ? "$%.3g$" : "%.3g", r);
    else
        snprintf(buf, size, "%s", latex ? "--" : "–");
}

static const char *rel_word(const tbl *t, int j)
{
    return t->rel_speedup[j] ? "speedup" : "ratio";
}

static void md_text(FILE *f, const char *s)   /* a pipe would end the cell */
{
    for (; *s; s++) {
        if (*s == '|')
            fputc('\\', f);
        fputc(*s, f);
    }
}

void tbl_write_markdown(FILE *f, const tbl *t)
{
    char buf[1024];
    fputc('|', f);
    for (int k = 0; k < t->n_par; k++) {
        fputc(' ', f);
        md_text(f, t->par_label[k]);
        fputs(" |", f);
    }
    fputs(" n |", f);
    for (int j = 0; j < t->n_met; j++) {
        fputc(' ', f);
        md_text(f, t->met[j]);
        fprintf(f, " (%s) |", spread_name(t->spread, 0));
    }
    for (int j = 0; t->baseline && j < t->n_met; j++) {
        fprintf(f, " %s in ", rel_word(t, j));
        md_text(f, t->met[j]);
        fputs(" vs ", f);
        md_text(f, t->baseline);
        fputs(" |", f);
    }
    fputs("\n|", f);
    for (int k = 0; k < t->n_par; k++)
        fputs("---|", f);
    fputs("---:|", f);
    for (int j = 0; j < t->n_met * (t->baseline ? 2 : 1); j++)
        fputs("---:|", f);
    fputc('\n', f);
    for (int g = 0; g < t->n_grp; g++) {
        fputc('|', f);
        for (int k = 0; k < t->n_par; k++) {
            fputc(' ', f);
            md_text(f, tbl_short_value(t->par_val[(size_t)g * t->n_par + k], buf, sizeof buf));
            fputs(" |", f);
        }
        fprintf(f, " %d |", t->runs[g]);
        for (int j = 0; j < t->n_met; j++) {
            fmt_cell(buf, sizeof buf, t, &t->st[(size_t)g * t->n_met + j], 0);
            fprintf(f, " %s |", buf);
        }
        for (int j = 0; t->baseline && j < t->n_met; j++) {
            fmt_rel(buf, sizeof buf, t->st[(size_t)g * t->n_met + j].rel, 0);
            fprintf(f, " %s |", buf);
        }
        fputc('\n', f);
    }
}

void tbl_write_csv(FILE *f, const tbl *t)
{
    static const char *const col[] = { "mean", "sd", "se", "ci95", "min", "max", "n" };
    char buf[600];
    for (int k = 0; k < t->n_par; k++) {
        out_csv_field(f, t->par_label[k]);
        fputc(',', f);
    }
    fputs("runs", f);
    for (int j = 0; j < t->n_met; j++)
        for (int c = 0; c < 7; c++) {
            snprintf(buf, sizeof buf, "%s_%s", t->met[j], col[c]);
            fputc(',', f);
            out_csv_field(f, buf);
        }
    for (int j = 0; t->baseline && j < t->n_met; j++) {
        snprintf(buf, sizeof buf, "%s_%s", t->met[j], rel_word(t, j));
        fputc(',', f);
        out_csv_field(f, buf);
    }
    fputc('\n', f);
    for (int g = 0; g < t->n_grp; g++) {
        for (int k = 0; k < t->n_par; k++) {
            out_csv_field(f, t->par_val[(size_t)g * t->n_par + k]);
            fputc(',', f);
        }
        fprintf(f, "%d", t->runs[g]);
        for (int j = 0; j < t->n_met; j++) {
            const tbl_stat *s = &t->st[(size_t)g * t->n_met + j];
            double v[6] = { s->mean, s->sd, s->se, s->ci95, s->lo, s->hi };
            for (int c = 0; c < 6; c++) {
                fputc(',', f);
                out_fmt_double(f, v[c]);
            }
            fprintf(f, ",%d", s->n);
        }
        for (int j = 0; t->baseline && j < t->n_met; j++) {
            fputc(',', f);
            out_fmt_double(f, t->st[(size_t)g * t->n_met + j].rel);
        }
        fputc('\n', f);
    }
}

static void tex_text(FILE *f, const char *s)
{
    for (; *s; s++) {
        switch (*s) {
        case '\\': fputs("\\textbackslash{}", f); break;
        case '~':  fputs("\\textasciitilde{}", f); break;
        case '^':  fputs("\\textasciicircum{}", f); break;
        case '&': case '%': case '$': case '#': case '_': case '{': case '}':
            fputc('\\', f);
            fputc(*s, f);
            break;
        default:   fputc(*s, f);
        }
    }
}

void tbl_write_latex(FILE *f, const tbl *t)
{
    char buf[1024];
    int n_num = 1 + t->n_met * (t->baseline ? 2 : 1);
    fputs("\\begin{tabular}{", f);
    for (int k = 0; k < t->n_par; k++)
        fputc('l', f);
    for (int k = 0; k < n_num; k++)
        fputc('r', f);
    fputs("}\n\\toprule\n", f);
    for (int k = 0; k < t->n_par; k++) {
        tex_text(f, t->par_label[k]);
        fputs(" & ", f);
    }
    fputs("$n$", f);
    for (int j = 0; j < t->n_met; j++) {
        fputs(" & ", f);
        tex_text(f, t->met[j]);
        fprintf(f, " (%s)", spread_name(t->spread, 1));
    }
    for (int j = 0; t->baseline && j < t->n_met; j++) {
        fprintf(f, " & %s in ", rel_word(t, j));
        tex_text(f, t->met[j]);
        fputs(" vs ", f);
        tex_text(f, t->baseline);
    }
    fputs(" \\\\\n\\midrule\n", f);
    for (int g = 0; g < t->n_grp; g++) {
        for (int k = 0; k < t->n_par; k++) {
            tex_text(f, tbl_short_value(t->par_val[(size_t)g * t->n_par + k], buf, sizeof buf));
            fputs(" & ", f);
        }
        fprintf(f, "%d", t->runs[g]);
        for (int j = 0; j < t->n_met; j++) {
            fmt_cell(buf, sizeof buf, t, &t->st[(size_t)g * t->n_met + j], 1);
            fprintf(f, " & %s", buf);
        }
        for (int j = 0; t->baseline && j < t->n_met; j++) {
            fmt_rel(buf, sizeof buf, t->st[(size_t)g * t->n_met + j].rel, 1);
            fprintf(f, " & %s", buf);
        }
        fputs(" \\\\\n", f);
    }
    fputs("\\bottomrule\n\\end{tabular}\n", f);
}
