/* out_progress.c -- the progress line on stderr: on a terminal one line
 * redrawn in place ("\r" and padding over the previous text) at most a few
 * times a second; on anything else (a log file, a Slurm log) one whole line
 * every period of wall time, so logs get a line a minute rather than a
 * stream of carriage returns; or one line per event the caller reports
 * (the "each" mode, for tests).  It formats what the caller measured; it
 * does not know what a run or a sweep is.
 */
#include "out.h"

#include <math.h>
#include <stdarg.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* Redraws closer together than this are skipped (seconds of wall time). */
#define REDRAW_S 0.2

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

void out_progress_init(out_progress *p, FILE *f, double period_s)
{
    memset(p, 0, sizeof *p);
    p->f = f;
    p->t0 = now_s();
    p->last = -1;
    if (period_s == OUT_PROGRESS_EACH) {
        p->active = 1;
        p->mode = 2;
    } else if (period_s > 0) {
        p->active = 1;
        p->mode = isatty(fileno(f)) ? 0 : 1;
        p->period = period_s;
    }
}

double out_progress_elapsed(const out_progress *p) { return now_s() - p->t0; }

int out_progress_due(const out_progress *p, int event)
{
    if (!p->active)
        return 0;
    if (p->mode == 2)
        return event;
    double t = now_s();
    if (p->mode == 1)
        return t - (p->last >= 0 ? p->last : p->t0) >= p->period;
    return event || p->last < 0 || t - p->last >= REDRAW_S;
}

void out_progress_draw(out_progress *p, int event, const char *fmt, ...)
{
    if (!out_progress_due(p, event))
        return;
    p->last = now_s();
    char line[256];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    if (n < 0)
        return;
    if (p->mode != 0) {
        fprintf(p->f, "%s\n", line);
        fflush(p->f);
        return;
    }
    size_t len = strlen(line);
    fprintf(p->f, "\r%s", line);
    for (size_t i = len; i < p->width; i++)
        fputc(' ', p->f);
    p->width = len;
    fflush(p->f);
}

void out_progress_end(out_progress *p)
{
    if (!p->active || p->mode != 0 || p->last < 0)
        return;
    fputc('\r', p->f);
    for (size_t i = 0; i < p->width; i++)
        fputc(' ', p->f);
    fputc('\r', p->f);
    fflush(p->f);
    p->width = 0;
    p->last = -1;
}

void out_fmt_duration(char *buf, size_t size, double s)
{
    if (!(s >= 0) || isinf(s)) {
        snprintf(buf, size, "?");
        return;
    }
    long t = (long)(s + 0.5);
    if (t < 60)
        snprintf(buf, size, "%lds", t);
    else if (t < 3600)
        snprintf(buf, size, "%ldm%02lds", t / 60, t % 60);
    else
        snprintf(buf, size, "%ldh%02ldm", t / 3600, (t % 3600) / 60);
}
