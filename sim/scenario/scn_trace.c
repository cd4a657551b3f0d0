/* scn_trace.c -- reads the trace files (CSV) that slowdown and fault
 * entries may name, at load time, so that `dtsim validate` reports a bad
 * line as FILE:LINE: points "node,time_s,value" sorted by node and time.
 * Only a regular file is read (a FIFO or /dev/zero named as a trace is
 * refused before it is read); a line may hold SIM_FILE_MAX_LINE bytes and
 * the file SIM_FILE_MAX_BYTES (sim_file.h, docs/reliability.md), and a
 * longer line is an error at its FILE:LINE rather than several points.
 * It does not decide what the points mean (scn_env.c, the cluster).
 */
#include "scn_internal.h"
#include "sim_file.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

typedef struct line_pt {
    scn_point p;
    size_t    line;
} line_pt;

static int cmp_line_pt(const void *a, const void *b)
{
    const line_pt *x = a, *y = b;
    if (x->p.node != y->p.node)
        return x->p.node < y->p.node ? -1 : 1;
    return x->line < y->line ? -1 : x->line > y->line ? 1 : 0;
}

static char *trim(char *t)
{
    while (*t == ' ' || *t == '\t')
        t++;
    size_t k = strlen(t);
    while (k > 0 && (t[k - 1] == ' ' || t[k - 1] == '\t' || t[k - 1] == '\r' ||
                     t[k - 1] == '\n'))
        t[--k] = '\0';
    return t;
}

static int file_fail(scn_ctx *c, const char *file, size_t line, const char *msg)
{
    if (snprintf(c->err->msg, sizeof c->err->msg, "%s:%zu: error: %s", file, line, msg) < 0)
        c->err->msg[0] = '\0';
    return -1;
}

/* Reads a trace: "node,time_s,factor" (availability: "node,time_s,state"
 * with state up or down), one point a line, an optional header line, '#'
 * comments and blank lines skipped.  A relative file name is relative to
 * the scenario file's directory. */
int scn_i_read_trace(scn_ctx *c, const char *ptr, const char *file, int availability,
                      int n_nodes, scn_point **out, size_t *n_out)
{
    char path[4096], buf[SIM_FILE_MAX_LINE + 2], msg[512];
    const char *slash = strrchr(c->path, '/');
    size_t line = 0, n = 0, cap = 0;
    line_pt *pts = NULL;
    FILE *f;
    int rc = -1, header_done = 0;
    size_t total = 0;
    long len;

    int w = file[0] != '/' && slash
        ? snprintf(path, sizeof path, "%.*s/%s", (int)(slash - c->path), c->path, file)
        : snprintf(path, sizeof path, "%s", file);
    if (w < 0 || (size_t)w >= sizeof path)
        return scn_i_fail(c, ptr, "file name too long");
    const char *kind;
    int fd = sim_file_open_input(path, SIM_FILE_MAX_BYTES, &kind);
    if (fd < 0 || !(f = fdopen(fd, "r"))) {
        char q[512];
        scn_i_quoted(q, sizeof q, path);
        if (fd >= 0)
            close(fd);
        if (kind)
            return scn_i_fail(c, ptr, "cannot read %s: %s, not a regular file", q, kind);
        if (errno == EFBIG)
            return scn_i_fail(c, ptr, "cannot read %s: larger than %zu bytes (the limit for "
                              "trace files)", q, SIM_FILE_MAX_BYTES);
        return scn_i_fail(c, ptr, "cannot open %s: %s", q, strerror(errno));
    }
    while ((len = sim_file_read_line(f, buf, sizeof buf - 1)) != -1) {
        char *t, *f1, *f2, *f3, *end;
        line++;
        if (len == -2) {
            snprintf(msg, sizeof msg, "line longer than %d bytes", SIM_FILE_MAX_LINE);
            file_fail(c, path, line, msg);
            goto out;
        }
        total += (size_t)len + 1;
        if (total > SIM_FILE_MAX_BYTES) {   /* a file that grew after the check */
            snprintf(msg, sizeof msg, "file longer than %zu bytes", SIM_FILE_MAX_BYTES);
            file_fail(c, path, line, msg);
            goto out;
        }
        t = trim(buf);
        if (!*t || *t == '#')
            continue;
        if (!header_done) {
            header_done = 1;
            if (!(*t >= '0' && *t <= '9')) {
                const char *want = availability ? "node,time_s,state" : "node,time_s,factor";
                char h[256];
                size_t k = 0;
                for (const char *q = t; *q && k + 1 < sizeof h; q++)
                    if (*q != ' ' && *q != '\t')
                        h[k++] = *q;
                h[k] = '\0';
                if (strcmp(h, want) != 0) {
                    snprintf(msg, sizeof msg, "header must be \"%s\", got \"%.200s\"", want, t);
                    file_fail(c, path, line, msg);
                    goto out;
                }
                continue;
            }
        }
        f1 = t;
        f2 = strchr(f1, ',');
        f3 = f2 ? strchr(f2 + 1, ',') : NULL;
        if (!f2 || !f3 || strchr(f3 + 1, ',')) {
            file_fail(c, path, line, availability ? "expected 3 fields: node,time_s,state"
                                                  : "expected 3 fields: node,time_s,factor");
            goto out;
        }
        *f2++ = '\0';
        *f3++ = '\0';
        f1 = trim(f1);
        f2 = trim(f2);
        f3 = trim(f3);
        errno = 0;
        long node = strtol(f1, &end, 10);
        if (!*f1 || *end || errno || node < 0 || node >= n_nodes) {
            snprintf(msg, sizeof msg, "node must be an integer in 0..%d, got \"%.100s\"",
                     n_nodes - 1, f1);
            file_fail(c, path, line, msg);
            goto out;
        }
        double t_s = strtod(f2, &end);
        if (!*f2 || *end || !isfinite(t_s) || t_s < 0) {
            snprintf(msg, sizeof msg, "time_s must be a number >= 0, got \"%.100s\"", f2);
            file_fail(c, path, line, msg);
            goto out;
        }
        double v;
        if (availability) {
            if (strcmp(f3, "up") == 0) {
                v = 1;
            } else if (strcmp(f3, "down") == 0) {
                v = 0;
            } else {
                snprintf(msg, sizeof msg, "state must be up or down, got \"%.100s\"", f3);
                file_fail(c, path, line, msg);
                goto out;
            }
        } else {
            v = strtod(f3, &end);
            if (!*f3 || *end || !isfinite(v) || v <= 0) {
                snprintf(msg, sizeof msg, "factor must be a number > 0, got \"%.100s\"", f3);
                file_fail(c, path, line, msg);
                goto out;
            }
        }
        /* one node's times may not go backwards */
        for (size_t k = n; k-- > 0;) {
            if (pts[k].p.node != (int)node)
                continue;
            if (pts[k].p.time_s > t_s) {
                snprintf(msg, sizeof msg, "time_s goes backwards for node %ld (%g after %g "
                         "on line %zu)", node, t_s, pts[k].p.time_s, pts[k].line);
                file_fail(c, path, line, msg);
                goto out;
            }
            break;
        }
        if (n == cap) {
            size_t nc = cap ? 2 * cap : 64;
            line_pt *np = realloc(pts, nc * sizeof *np);
            if (!np) {
                scn_i_fail_oom(c);
                goto out;
            }
            pts = np;
            cap = nc;
        }
        pts[n].p = (scn_point){ (int)node, t_s, v };
        pts[n].line = line;
        n++;
    }
    if (ferror(f)) {
        snprintf(msg, sizeof msg, "read error: %s", strerror(errno));
        file_fail(c, path, line, msg);
        goto out;
    }
    if (n == 0) {
        file_fail(c, path, line, "no points");
        goto out;
    }
    qsort(pts, n, sizeof *pts, cmp_line_pt);
    if (!(*out = malloc(n * sizeof **out))) {
        scn_i_fail_oom(c);
        goto out;
    }
    for (size_t k = 0; k < n; k++)
        (*out)[k] = pts[k].p;
    *n_out = n;
    rc = 0;
out:
    free(pts);
    fclose(f);
    return rc;
}
