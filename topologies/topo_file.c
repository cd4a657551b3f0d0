/* topo_file.c -- reads edge lists from text files for the edge_list
 * topology ("u v" per line) and the file schedule ("round u v" per line),
 * with an error naming the file and line for anything it cannot take: a
 * malformed line, a node out of range, a self-loop, an edge given twice.
 * Only a regular file is read (a FIFO or /dev/zero is refused before it
 * is read), of at most SIM_FILE_MAX_BYTES, with lines of at most
 * SIM_FILE_MAX_LINE bytes (sim_file.h, docs/reliability.md).
 * It does not check connectivity or build graphs (topo_build.c,
 * topo_schedule.c do), and it never includes <igraph.h>.
 */
#include "topo_internal.h"
#include "sim_file.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

void topo_i_edges_fini(topo_i_edges *e)
{
    free(e->uv);
    free(e->round);
    memset(e, 0, sizeof *e);
}

/* Reads one non-negative integer field; fields are separated by blanks or
 * one comma.  Returns 0 and advances *p, or -1. */
static int read_field(const char **p, int first, long *out)
{
    const char *s = *p;
    while (*s == ' ' || *s == '\t')
        s++;
    if (!first) {
        if (*s == ',') {
            s++;
            while (*s == ' ' || *s == '\t')
                s++;
        } else if (s == *p) {
            return -1;   /* no separator */
        }
    }
    if (*s < '0' || *s > '9')
        return -1;
    char *end;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (errno != 0)
        return -1;
    *out = v;
    *p = end;
    return 0;
}

/* One pair for the duplicate check: sorted by (round, u, v, line). */
typedef struct rec {
    long round;
    int  u, v;
    long line;
} rec;

static int cmp_rec(const void *a, const void *b)
{
    const rec *x = a, *y = b;
    if (x->round != y->round)
        return (x->round > y->round) - (x->round < y->round);
    if (x->u != y->u)
        return (x->u > y->u) - (x->u < y->u);
    if (x->v != y->v)
        return (x->v > y->v) - (x->v < y->v);
    return (x->line > y->line) - (x->line < y->line);
}

int topo_i_read_edges(const char *path, int n, int cols, topo_i_edges *e, char *err,
                      size_t err_size)
{
    memset(e, 0, sizeof *e);
    const char *kind;
    int fd = sim_file_open_input(path, SIM_FILE_MAX_BYTES, &kind);
    FILE *f = fd >= 0 ? fdopen(fd, "r") : NULL;
    if (f == NULL) {
        if (fd >= 0)
            close(fd);
        if (kind != NULL)
            topo_i_set_error(err, err_size, "%s: error: cannot read: %s, not a regular file",
                             path, kind);
        else if (errno == EFBIG)
            topo_i_set_error(err, err_size, "%s: error: larger than %zu bytes (the limit for "
                             "%s files)", path, SIM_FILE_MAX_BYTES,
                             cols == 3 ? "schedule" : "edge-list");
        else
            topo_i_set_error(err, err_size, "%s: error: cannot open: %s", path,
                             strerror(errno));
        return -1;
    }
    int ret = -1;
    char line[SIM_FILE_MAX_LINE + 1];
    size_t cap = 0, m = 0, total = 0;
    rec *recs = NULL;
    long lineno = 0, got;
    const char *what = cols == 3 ? "a round and 2 node numbers" : "2 node numbers";
    while ((got = sim_file_read_line(f, line, sizeof line)) != -1) {
        lineno++;
        if (got == -2) {
            topo_i_set_error(err, err_size, "%s:%ld: error: line longer than %d bytes", path,
                             lineno, SIM_FILE_MAX_LINE);
            goto out;
        }
        total += (size_t)got + 1;
        if (total > SIM_FILE_MAX_BYTES) {   /* a file that grew after the check */
            topo_i_set_error(err, err_size, "%s:%ld: error: file longer than %zu bytes", path,
                             lineno, SIM_FILE_MAX_BYTES);
            goto out;
        }
        char *hash = strchr(line, '#');
        if (hash != NULL)
            *hash = '\0';
        size_t len = strlen(line);
        while (len > 0 && (line[len - 1] == '\n' || line[len - 1] == '\r' ||
                           line[len - 1] == ' ' || line[len - 1] == '\t'))
            line[--len] = '\0';
        const char *p = line;
        while (*p == ' ' || *p == '\t')
            p++;
        if (*p == '\0')
            continue;
        long v[3];
        int ok = 1;
        for (int c = 0; c < cols && ok; c++)
            ok = read_field(&p, c == 0, &v[c]) == 0;
        if (!ok || *p != '\0') {
            topo_i_set_error(err, err_size, "%s:%ld: error: expected %s, got '%s'", path,
                             lineno, what, line);
            goto out;
        }
        long r = cols == 3 ? v[0] : 0, a = v[cols - 2], b = v[cols - 1];
        /* every round up to the last is built (empty ones too): a bound
         * keeps a typo such as 22221110 from building millions of graphs */
        if (cols == 3 && r >= TOPO_SCHED_MAX_ROUNDS) {
            topo_i_set_error(err, err_size, "%s:%ld: error: round %ld too large (at most %d)",
                             path, lineno, r, TOPO_SCHED_MAX_ROUNDS - 1);
            goto out;
        }
        for (int c = 0; c < 2; c++) {
            long x = c == 0 ? a : b;
            if (x >= n) {
                topo_i_set_error(err, err_size,
                                 "%s:%ld: error: node %ld out of range (nodes are 0..%d)", path,
                                 lineno, x, n - 1);
                goto out;
            }
        }
        if (a == b) {
            topo_i_set_error(err, err_size, "%s:%ld: error: self-loop on node %ld", path,
                             lineno, a);
            goto out;
        }
        if (m == cap) {
            size_t nc = cap ? 2 * cap : 64;
            rec *nr = realloc(recs, nc * sizeof *nr);
            if (nr == NULL)
                goto out_oom;
            recs = nr;
            cap = nc;
        }
        recs[m++] = (rec){ r, (int)(a < b ? a : b), (int)(a < b ? b : a), lineno };
    }
    if (ferror(f)) {
        topo_i_set_error(err, err_size, "%s: error: read error", path);
        goto out;
    }

    /* the repeated edge on the earliest line is the error reported */
    rec *sorted = malloc((m > 0 ? m : 1) * sizeof *sorted);
    if (sorted == NULL)
        goto out_oom;
    if (m > 0)   /* recs is NULL for a file without edges */
        memcpy(sorted, recs, m * sizeof *sorted);
    qsort(sorted, m, sizeof *sorted, cmp_rec);
    long dup_line = 0, first_line = 0;
    for (size_t i = 1; i < m; i++)
        if (sorted[i].round == sorted[i - 1].round && sorted[i].u == sorted[i - 1].u &&
            sorted[i].v == sorted[i - 1].v && (dup_line == 0 || sorted[i].line < dup_line)) {
            dup_line = sorted[i].line;
            first_line = sorted[i - 1].line;
        }
    free(sorted);
    if (dup_line != 0) {
        topo_i_set_error(err, err_size, "%s:%ld: error: edge given twice (first on line %ld)%s",
                         path, dup_line, first_line, cols == 3 ? " in the same round" : "");
        goto out;
    }

    e->m = m;
    e->uv = malloc((m > 0 ? 2 * m : 1) * sizeof *e->uv);
    e->round = cols == 3 ? malloc((m > 0 ? m : 1) * sizeof *e->round) : NULL;
    if (e->uv == NULL || (cols == 3 && e->round == NULL))
        goto out_oom;
    for (size_t i = 0; i < m; i++) {
        e->uv[2 * i] = recs[i].u;
        e->uv[2 * i + 1] = recs[i].v;
        if (e->round != NULL)
            e->round[i] = recs[i].round;
    }
    ret = 0;
    goto out;

out_oom:
    topo_i_set_error(err, err_size, "%s: error: out of memory", path);
out:
    if (ret != 0)
        topo_i_edges_fini(e);
    free(recs);
    fclose(f);
    return ret;
}
