/* mdl_text.c -- text data sets: LIBSVM/svmlight ("label index:value ...")
 * and CSV with a label column, read through zlib so gzipped files load like
 * plain ones, into the same dense dataset as every other source; plus the
 * label compaction and widening that make a training and a test file agree.
 * Errors name the file and line in GNU form ("FILE:LINE: error: ...").
 * Only classification is supported: labels must be integers.  Only a
 * regular file is read (a FIFO or /dev/zero is refused before it is read);
 * the text is checked as it arrives, so a NUL byte, a line longer than
 * SIM_FILE_MAX_DATA_LINE or more text than half the machine's memory stops
 * the read at once (docs/reliability.md).  It does not scale, split or
 * partition.
 */
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>
#include "mdl_data.h"
#include "sim_file.h"

static int fail(char *err, size_t es, const char *path, size_t line, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));

static int fail(char *err, size_t es, const char *path, size_t line, const char *fmt, ...)
{
    va_list ap;
    int k = line ? snprintf(err, es, "%s:%zu: error: ", path, line)
                 : snprintf(err, es, "%s: error: ", path);
    if (k >= 0 && (size_t)k < es) {
        va_start(ap, fmt);
        vsnprintf(err + k, es - (size_t)k, fmt, ap);
        va_end(ap);
    }
    return -1;
}

/* Half the machine's physical memory, in bytes (unbounded when unknown). */
static double half_memory(void)
{
    long pages = sysconf(_SC_PHYS_PAGES), psize = sysconf(_SC_PAGE_SIZE);
    return pages > 0 && psize > 0 ? 0.5 * (double)pages * (double)psize : 1e300;
}

/* The whole (decompressed) file as one NUL-terminated string; a text
 * larger than half the machine's memory (a gzip bomb, or simply too big)
 * is an error rather than a machine brought to its knees. */
static char *slurp(const char *path, char *err, size_t es)
{
    const double max_text = half_memory();
    const char *kind;
    int fd = sim_file_open_input(path, 0, &kind);
    if (fd < 0) {
        if (kind)
            fail(err, es, path, 0, "cannot read: %s, not a regular file", kind);
        else
            fail(err, es, path, 0, "cannot open: %s", strerror(errno));
        return NULL;
    }
    errno = 0;
    gzFile f = gzdopen(fd, "rb");
    if (!f) {
        fail(err, es, path, 0, "cannot open: %s", errno ? strerror(errno) : "out of memory");
        close(fd);
        return NULL;
    }
    size_t len = 0, cap = 1 << 16, line_start = 0, line = 1;
    char *buf = malloc(cap);
    for (;;) {
        if (!buf) {
            fail(err, es, path, 0, "out of memory");
            break;
        }
        if (cap - len < 2) {
            if (2.0 * (double)cap > max_text) {
                fail(err, es, path, 0, "too large: more than %.3g GB of text, half this "
                     "machine's memory", (double)cap / 1e9);
                free(buf);
                buf = NULL;
                break;
            }
            char *nb = cap < SIZE_MAX / 2 ? realloc(buf, cap * 2) : NULL;
            if (!nb) {
                free(buf);
                buf = NULL;
                continue;
            }
            buf = nb;
            cap *= 2;
        }
        const unsigned want = cap - len - 1 > (1u << 30) ? 1u << 30 : (unsigned)(cap - len - 1);
        const int k = gzread(f, buf + len, want);
        if (k < 0) {
            int code;
            fail(err, es, path, 0, "corrupt gzip data: %s", gzerror(f, &code));
            free(buf);
            buf = NULL;
            break;
        }
        if (k == 0)
            break;
        /* what just arrived: no NUL byte, no line beyond the bound */
        const char *nul = memchr(buf + len, '\0', (size_t)k);
        int bad = 0;
        for (size_t i = len; i < len + (size_t)k; i++) {
            if (buf[i] == '\n') {
                line++;
                line_start = i + 1;
            } else if (buf + i == nul) {
                bad = fail(err, es, path, line, "not a text file (holds a NUL byte)");
                break;
            } else if (i - line_start >= SIM_FILE_MAX_DATA_LINE) {
                bad = fail(err, es, path, line, "line longer than %zu bytes",
                           SIM_FILE_MAX_DATA_LINE);
                break;
            }
        }
        len += (size_t)k;
        if (bad) {
            free(buf);
            buf = NULL;
            break;
        }
    }
    gzclose(f);
    if (buf)
        buf[len] = '\0';
    return buf;
}

/* Next line of *p (without its '\n' or "\r\n"), or NULL at the end. */
static char *next_line(char **p)
{
    if (**p == '\0')
        return NULL;
    char *s = *p, *e = strchr(s, '\n');
    if (e) {
        *e = '\0';
        *p = e + 1;
    } else {
        *p = s + strlen(s);
    }
    size_t n = strlen(s);
    if (n && s[n - 1] == '\r')
        s[n - 1] = '\0';
    return s;
}

static int blank(const char *s)
{
    while (*s == ' ' || *s == '\t')
        s++;
    return *s == '\0' || *s == '#';
}

static int grow(mdl_dataset *ds, size_t *cap, size_t d)
{
    if (ds->n < *cap)
        return 0;
    size_t nc = *cap ? *cap * 2 : 1024;
    if (d && nc > SIZE_MAX / sizeof(double) / d)
        return -1;
    double *x = realloc(ds->x, nc * (d ? d : 1) * sizeof *x);
    if (!x)
        return -1;
    ds->x = x;
    int *y = realloc(ds->y, nc * sizeof *y);
    if (!y)
        return -1;
    ds->y = y;
    *cap = nc;
    return 0;
}

/* An integer label from text t: "+1", "-1", "3", "2.0". */
static int parse_label(const char *t, const char **end, int *out)
{
    char *e;
    errno = 0;
    const double v = strtod(t, &e);
    if (e == t || errno == ERANGE)
        return -1;
    *end = e;
    if (v != floor(v) || v < INT_MIN || v > INT_MAX)
        return -2;
    *out = (int)v;
    return 0;
}

int mdl_libsvm_load(const char *path, size_t d_min, mdl_dataset *ds, char *err, size_t es)
{
    memset(ds, 0, sizeof *ds);
    char *text = slurp(path, err, es);
    if (!text)
        return -1;
    const double text_bytes = (double)strlen(text);

    /* Pass 1: the largest index, so rows can be dense from the start. */
    size_t d = d_min, line = 0, rows = 0;
    char *p = text, *s;
    int rc = -1;
    while ((s = next_line(&p)) != NULL) {
        line++;
        if (blank(s))
            continue;
        const char *t;
        int lab, k = parse_label(s, &t, &lab);
        if (k == -1) {
            fail(err, es, path, line, "expected a label at the start of the line");
            goto out_free;
        }
        if (k == -2) {
            fail(err, es, path, line, "label must be an integer (class), got %.*s",
                 (int)(t - s), s);
            goto out_free;
        }
        unsigned long prev = 0;
        for (;;) {
            while (*t == ' ' || *t == '\t')
                t++;
            if (*t == '\0' || *t == '#')
                break;
            char *e;
            errno = 0;
            const unsigned long idx = strtoul(t, &e, 10);
            if (e == t || *e != ':' || *t == '-' || errno == ERANGE) {
                fail(err, es, path, line, "expected index:value, got \"%.*s\"",
                     (int)strcspn(t, " \t"), t);
                goto out_free;
            }
            if (idx < 1) {
                fail(err, es, path, line, "feature index must be >= 1, got 0");
                goto out_free;
            }
            if (idx <= prev) {
                fail(err, es, path, line, "feature indices must ascend, got %lu after %lu",
                     idx, prev);
                goto out_free;
            }
            if (idx > (1ul << 24)) {
                fail(err, es, path, line, "feature index %lu is above the limit %lu", idx,
                     1ul << 24);
                goto out_free;
            }
            const char *v = e + 1;
            errno = 0;
            const double val = strtod(v, &e);
            if (e == v || !isfinite(val) || (*e != '\0' && *e != ' ' && *e != '\t')) {
                fail(err, es, path, line, "feature %lu: expected a finite number, got \"%.*s\"",
                     idx, (int)strcspn(v, " \t"), v);
                goto out_free;
            }
            prev = idx;
            if (idx > d)
                d = idx;
            t = e;
        }
        rows++;
    }
    if (rows == 0) {
        fail(err, es, path, 0, "holds no samples");
        goto out_free;
    }
    if (d == 0)
        d = 1;
    if (rows > SIZE_MAX / sizeof(double) / d) {
        fail(err, es, path, 0, "too large: %zu samples of %zu features", rows, d);
        goto out_free;
    }
    /* Rows are dense: a small sparse file can name a feature index that
     * makes them huge.  Refuse rows more than 4096 times the size of the
     * text (below 0.02% nonzeros: such data is not for dense rows) once
     * they pass 256 MB, and anything larger than this machine's memory,
     * rather than let the allocation or the first pass over it fail. */
    {
        long pages = sysconf(_SC_PHYS_PAGES), psize = sysconf(_SC_PAGE_SIZE);
        double need = (double)rows * (double)d * sizeof(double);
        if (need > 256e6 && need > 4096 * text_bytes) {
            fail(err, es, path, 0, "too sparse: %zu samples of %zu features need %.3g GB as "
                 "dense rows, more than 4096 times the file's %.0f bytes", rows, d,
                 need / 1e9, text_bytes);
            goto out_free;
        }
        if (pages > 0 && psize > 0 && need > (double)pages * (double)psize) {
            fail(err, es, path, 0, "too large: %zu samples of %zu features need %.3g GB as "
                 "dense rows, more than this machine's memory (%.3g GB)", rows, d, need / 1e9,
                 (double)pages * (double)psize / 1e9);
            goto out_free;
        }
    }

    /* Pass 2 over the same text: pass 1 already validated every token.
     * next_line left NULs where the newlines were. */
    ds->x = calloc(rows * d, sizeof *ds->x);
    ds->y = malloc(rows * sizeof *ds->y);
    if (!ds->x || !ds->y) {
        fail(err, es, path, 0, "out of memory for %zu samples of %zu features", rows, d);
        goto out_free;
    }
    p = text;
    for (size_t i = 0; i < rows;) {
        s = p;
        p = s + strlen(s) + 1;
        if (blank(s))
            continue;
        const char *t = s;
        parse_label(s, &t, &ds->y[i]);
        for (;;) {
            while (*t == ' ' || *t == '\t')
                t++;
            if (*t == '\0' || *t == '#')
                break;
            char *e;
            const unsigned long idx = strtoul(t, &e, 10);
            ds->x[i * d + idx - 1] = strtod(e + 1, &e);
            t = e;
        }
        i++;
    }
    ds->n = rows;
    ds->d = d;
    rc = 0;

out_free:
    free(text);
    if (rc != 0)
        mdl_dataset_fini(ds);
    return rc;
}

int mdl_csv_load(const char *path, int label_column, int header, mdl_dataset *ds, char *err,
                 size_t es)
{
    memset(ds, 0, sizeof *ds);
    char *text = slurp(path, err, es);
    if (!text)
        return -1;
    size_t line = 0, fields = 0, first = 0, cap = 0;
    char *p = text, *s;
    int rc = -1;
    double *row = NULL;
    while ((s = next_line(&p)) != NULL) {
        line++;
        if (header && line == 1)
            continue;
        if (blank(s))
            continue;
        /* Count the fields of this line. */
        size_t nf = 1;
        for (const char *q = s; *q; q++)
            nf += *q == ',';
        if (fields == 0) {
            fields = nf;
            first = line;
            if (fields < 2) {
                fail(err, es, path, line, "needs at least 2 fields (features and a label), "
                     "got 1");
                goto out_free;
            }
            if ((size_t)label_column >= fields) {
                fail(err, es, path, line, "label_column %d is not among the %zu fields",
                     label_column, fields);
                goto out_free;
            }
            row = malloc(fields * sizeof *row);
            if (!row) {
                fail(err, es, path, 0, "out of memory");
                goto out_free;
            }
        } else if (nf != fields) {
            fail(err, es, path, line, "has %zu fields, line %zu has %zu", nf, first, fields);
            goto out_free;
        }
        const char *q = s;
        for (size_t f = 0; f < fields; f++) {
            char *e;
            while (*q == ' ' || *q == '\t')
                q++;
            errno = 0;
            row[f] = strtod(q, &e);
            const char *after = e;
            while (*after == ' ' || *after == '\t')
                after++;
            if (e == q || !isfinite(row[f]) || (*after != ',' && *after != '\0')) {
                fail(err, es, path, line, "field %zu: expected a finite number, got \"%.*s\"%s",
                     f + 1, (int)strcspn(q, ","), q,
                     line == 1 && !header ? " (set \"header\": true if the first line names "
                                            "the columns)" : "");
                goto out_free;
            }
            q = *after == ',' ? after + 1 : after;
        }
        const double lab = row[label_column];
        if (lab != floor(lab) || lab < INT_MIN || lab > INT_MAX) {
            fail(err, es, path, line, "label must be an integer (class), got %g", lab);
            goto out_free;
        }
        if (grow(ds, &cap, fields - 1) != 0) {
            fail(err, es, path, 0, "out of memory");
            goto out_free;
        }
        double *x = ds->x + ds->n * (fields - 1);
        for (size_t f = 0, j = 0; f < fields; f++)
            if (f != (size_t)label_column)
                x[j++] = row[f];
        ds->y[ds->n++] = (int)lab;
    }
    if (ds->n == 0) {
        fail(err, es, path, 0, "holds no samples");
        goto out_free;
    }
    ds->d = fields - 1;
    rc = 0;

out_free:
    free(row);
    free(text);
    if (rc != 0)
        mdl_dataset_fini(ds);
    return rc;
}

static int cmp_int(const void *a, const void *b)
{
    const int x = *(const int *)a, y = *(const int *)b;
    return (x > y) - (x < y);
}

int mdl_labels_compact(mdl_dataset *train, mdl_dataset *test)
{
    const size_t n = train->n + (test ? test->n : 0);
    int *all = malloc((n ? n : 1) * sizeof *all);
    if (!all)
        return -1;
    memcpy(all, train->y, train->n * sizeof *all);
    if (test)
        memcpy(all + train->n, test->y, test->n * sizeof *all);
    qsort(all, n, sizeof *all, cmp_int);
    size_t k = 0;
    for (size_t i = 0; i < n; i++)
        if (k == 0 || all[i] != all[k - 1])
            all[k++] = all[i];
    mdl_dataset *sets[2] = { train, test };
    for (int s = 0; s < 2; s++) {
        if (!sets[s])
            continue;
        for (size_t i = 0; i < sets[s]->n; i++) {
            const int *hit = bsearch(&sets[s]->y[i], all, k, sizeof *all, cmp_int);
            sets[s]->y[i] = (int)(hit - all);
        }
        sets[s]->n_classes = (int)k;
    }
    free(all);
    return (int)k;
}

int mdl_dataset_widen(mdl_dataset *ds, size_t d)
{
    if (d <= ds->d)
        return 0;
    if (ds->n > SIZE_MAX / sizeof(double) / d)
        return -1;
    double *x = calloc(ds->n * d, sizeof *x);
    if (!x)
        return -1;
    for (size_t i = 0; i < ds->n; i++)
        memcpy(x + i * d, ds->x + i * ds->d, ds->d * sizeof *x);
    free(ds->x);
    ds->x = x;
    ds->d = d;
    return 0;
}
