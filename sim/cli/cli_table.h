/* cli_table.h -- what the two files of `dtsim table` share: the table of
 * statistics cli_table.c computes from a sweep's summary.csv (one row per
 * grid point, one cell per metric) and the writers of cli_table_fmt.c that
 * print it as Markdown, CSV or LaTeX.  Nothing outside these two files
 * uses it.
 */
#ifndef CLI_TABLE_H
#define CLI_TABLE_H

#include <stdio.h>

/* What follows the mean in a text cell (CSV holds all of them). */
enum { TBL_SD, TBL_SE, TBL_CI95, TBL_MINMAX };

/* One metric at one grid point, over the replicates whose value is a
 * finite number (the others, e.g. "inf" for a target never reached, are
 * counted in runs but left out). */
typedef struct tbl_stat {
    int    runs, n;        /* rows of the grid point; finite values among them */
    int    all_inf;        /* every value is +inf (never reached) */
    double mean, sd, se, ci95, lo, hi;  /* sd, se, ci95 (half-width) NaN when n < 2 */
    double rel;            /* against the baseline (speedup or ratio); NaN: none */
} tbl_stat;

typedef struct tbl {
    int          n_par, n_met, n_grp;
    const char **par_label;   /* header of each parameter column */
    const char **met;         /* the metrics as named on the command line */
    const char **par_val;     /* n_grp * n_par, the values as in summary.csv */
    int         *runs;        /* n_grp: rows of each grid point */
    tbl_stat    *st;          /* n_grp * n_met */
    int          spread;      /* TBL_* */
    const char  *baseline;    /* the --baseline text ("a=x, b=y"); NULL: none */
    int         *rel_speedup; /* n_met: 1 the relative column is a speedup, 0 a ratio */
} tbl;

/* The relative column of a metric: a time (name ending in "_s", not
 * "_per_s") gives the speedup baseline / value, a rate ("_per_s") the
 * speedup value / baseline, anything else the ratio value / baseline. */
int tbl_metric_kind(const char *metric);   /* 1 time, 2 rate, 0 other */

/* A parameter value as a cell: a JSON object without braces, quotes and
 * its "name" key ({"name":"prague","groups":"static"} -> "prague
 * groups:static"), anything else as is.  Returns buf. */
const char *tbl_short_value(const char *v, char *buf, size_t size);

void tbl_write_markdown(FILE *f, const tbl *t);
void tbl_write_csv(FILE *f, const tbl *t);
void tbl_write_latex(FILE *f, const tbl *t);

#endif
