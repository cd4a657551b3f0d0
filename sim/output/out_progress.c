/* out_progress.c -- the progress line on stderr: one line redrawn in place
 * ("\r" and padding over the previous text), at most a few times a second,
 * and only when the stream is a terminal, so logs and pipes stay clean.  It
 * formats what the caller measured; it does not know what a run or a sweep
 * is.
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

void out_progress_init(out_progress *p, FILE *f, int enabled)
{
    memset(p, 0, sizeof *p);
    p->f = f;
    p->active = enabled && isatty(fileno(f));
    p->t0 = now_s();
    p->last = -1;
}

double out_progress_elapsed(const out_progress *p) { return now_s() - p->t0; }

void out_progress_draw(out_progress *p, int force, const char *fmt, ...)
{
    if (!p->active)
        return;
    double t = now_s();
    if (!force && p->last >= 0 && t - p->last < REDRAW_S)
        return;
    p->last = t;
    char line[256];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    if (n < 0)
        return;
    size_t len = strlen(line);
    fprintf(p->f, "\r%s", line);
    for (size_t i = len; i < p->width; i++)
        fputc(' ', p->f);
    p->width = len;
    fflush(p->f);
}

void out_progress_end(out_progress *p)
{
    if (!p->active || p->last < 0)
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
