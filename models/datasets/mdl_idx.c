/* mdl_idx.c -- the IDX file format of MNIST and Fashion-MNIST, read through
 * zlib so that gzipped and plain files load alike.  An image file and a
 * label file become one dataset of doubles, or with mdl_idx_load_compact
 * of the file's bytes when they are unsigned bytes (no scaling: mdl_prep.c
 * does that).  Every way a file can be wrong -- missing, not IDX, wrong element
 * type, truncated, trailing bytes, image and label counts that disagree --
 * is a one-line message in GNU form that names the file and says what was
 * expected; so is a float or double value that is NaN or infinite (image
 * and value named).  Only regular files are read (sim_file.h).  It does not know where Debian installs the data.
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

static int fail(char *err, size_t es, const char *path, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

static int fail(char *err, size_t es, const char *path, const char *fmt, ...)
{
    va_list ap;
    int k = snprintf(err, es, "%s: error: ", path);
    if (k >= 0 && (size_t)k < es) {
        va_start(ap, fmt);
        vsnprintf(err + k, es - (size_t)k, fmt, ap);
        va_end(ap);
    }
    return -1;
}

/* Reads exactly n bytes, the part of a `what` of `need` bytes that starts
 * after its first `before` bytes; on a short read says how many bytes of
 * the whole were expected and found.  Returns 0 or -1. */
static int read_span(gzFile f, void *buf, size_t n, size_t need, size_t before,
                     const char *path, const char *what, char *err, size_t es)
{
    size_t got = 0;
    while (got < n) {
        const unsigned chunk = n - got > (1u << 30) ? 1u << 30 : (unsigned)(n - got);
        const int k = gzread(f, (char *)buf + got, chunk);
        if (k < 0) {
            int code;
            const char *m = gzerror(f, &code);
            return fail(err, es, path, "corrupt gzip data: %s", m);
        }
        if (k == 0)
            return fail(err, es, path, "truncated: %s needs %zu bytes, the file ends after %zu",
                        what, need, before + got);
        got += (size_t)k;
    }
    return 0;
}

static int read_all(gzFile f, void *buf, size_t n, const char *path, const char *what,
                    char *err, size_t es)
{
    return read_span(f, buf, n, n, 0, path, what, err, es);
}

/* Half the machine's physical memory, in bytes (unbounded when unknown):
 * a gzip bomb or a huge file fails here instead of exhausting memory. */
static double half_memory(void)
{
    long pages = sysconf(_SC_PHYS_PAGES), psize = sysconf(_SC_PAGE_SIZE);
    return pages > 0 && psize > 0 ? 0.5 * (double)pages * (double)psize : 1e300;
}

static uint32_t be32(const unsigned char *b)
{
    return (uint32_t)b[0] << 24 | (uint32_t)b[1] << 16 | (uint32_t)b[2] << 8 | b[3];
}

/* Bytes per element of an IDX type code, 0 when unknown. */
static size_t elem_size(int type)
{
    switch (type) {
    case 0x08: case 0x09: return 1;
    case 0x0B: return 2;
    case 0x0C: case 0x0D: return 4;
    case 0x0E: return 8;
    default: return 0;
    }
}

static double elem_value(const unsigned char *p, int type)
{
    switch (type) {
    case 0x08: return (double)p[0];
    case 0x09: return (double)(signed char)p[0];
    case 0x0B: return (double)(int16_t)(uint16_t)(p[0] << 8 | p[1]);
    case 0x0C: return (double)(int32_t)be32(p);
    case 0x0D: {
        uint32_t u = be32(p);
        float f;
        memcpy(&f, &u, sizeof f);
        return (double)f;
    }
    default: {
        uint64_t u = (uint64_t)be32(p) << 32 | be32(p + 4);
        double v;
        memcpy(&v, &u, sizeof v);
        return v;
    }
    }
}

/* Opens path and reads its header.  *count is the first dimension and
 * *item the product of the others.  want_magic is what a file of this
 * role normally holds, quoted in errors; labels (want_dims 1) must match
 * it exactly. */
static gzFile open_idx(const char *path, uint32_t want_magic, int *type, size_t *count,
                       size_t *item, char *err, size_t es)
{
    const char *kind;
    int fd = sim_file_open_input(path, 0, &kind);
    if (fd < 0) {
        if (kind)
            fail(err, es, path, "cannot read: %s, not a regular file", kind);
        else
            fail(err, es, path, "cannot open: %s", strerror(errno));
        return NULL;
    }
    errno = 0;
    gzFile f = gzdopen(fd, "rb");
    if (f == NULL) {
        fail(err, es, path, "cannot open: %s", errno ? strerror(errno) : "out of memory");
        close(fd);
        return NULL;
    }
    unsigned char h[4];
    if (read_all(f, h, 4, path, "the IDX magic number", err, es) != 0)
        goto out_close;
    const uint32_t magic = be32(h);
    const int t = h[2], dims = h[3];
    const int labels = (want_magic & 0xff) == 1;
    if (h[0] != 0 || h[1] != 0 || elem_size(t) == 0
        || (labels ? magic != want_magic : dims < 2)) {
        fail(err, es, path, "IDX magic 0x%08x expected, got 0x%08x", (unsigned)want_magic,
             (unsigned)magic);
        goto out_close;
    }
    unsigned char d[4 * 255];
    if (read_all(f, d, 4 * (size_t)dims, path, "the IDX dimensions", err, es) != 0)
        goto out_close;
    size_t prod = 1;
    for (int k = 1; k < dims; k++) {
        const size_t v = be32(d + 4 * k);
        if (v == 0 || prod > (SIZE_MAX / 16) / v) {
            fail(err, es, path, "IDX dimension %d is %zu: must be between 1 and a size "
                 "that fits in memory", k, v);
            goto out_close;
        }
        prod *= v;
    }
    *type = t;
    *count = be32(d);
    *item = prod;
    return f;

out_close:
    gzclose(f);
    return NULL;
}

/* Nonzero when f has no byte left; otherwise reports trailing data. */
static int at_end(gzFile f, const char *path, char *err, size_t es)
{
    unsigned char c;
    const int k = gzread(f, &c, 1);
    if (k == 0)
        return 1;
    if (k < 0) {
        int code;
        fail(err, es, path, "corrupt gzip data: %s", gzerror(f, &code));
        return 0;
    }
    fail(err, es, path, "unexpected data after the last IDX item");
    return 0;
}

/* Reads the n images of d unsigned bytes into ds->x8, growing the buffer
 * as the bytes arrive (as load does for doubles). */
static int read_bytes(gzFile fi, mdl_dataset *ds, size_t n, size_t d, const char *path,
                      char *err, size_t es)
{
    const size_t total = n * d;
    size_t cap = 0, got = 0;
    unsigned char *x = NULL;
    char what[96];
    while (got < total) {
        const size_t k = total - got < ((size_t)1 << 20) ? total - got : (size_t)1 << 20;
        if (got + k > cap) {
            size_t nc = cap ? 2 * cap : (size_t)1 << 20;
            nc = nc < got + k ? got + k : nc > total ? total : nc;
            if ((double)nc > half_memory()) {
                free(x);
                return fail(err, es, path, "too large: %zu images of %zu values need more "
                            "than half this machine's memory", n, d);
            }
            unsigned char *nx = realloc(x, nc);
            if (!nx) {
                free(x);
                return fail(err, es, path, "out of memory for %zu images of %zu values", n, d);
            }
            x = nx;
            cap = nc;
        }
        /* read image by image, so that a short read names the image it
         * ends in, as the double path does */
        size_t done = 0;
        while (done < k) {
            const size_t r = got + done, in_img = d - r % d, part = k - done < in_img ? k - done
                                                                                      : in_img;
            snprintf(what, sizeof what, "image %zu of %zu", r / d + 1, n);
            if (read_span(fi, x + r, part, d, r % d, path, what, err, es)) {
                free(x);
                return -1;
            }
            done += part;
        }
        got += k;
    }
    ds->x8 = ds->x8_mem = x;
    return 0;
}

static int load(const char *images_path, const char *labels_path, int compact,
                mdl_dataset *ds, char *err, size_t es)
{
    int ti, tl, rc = -1;
    size_t n, d, nl, one;
    unsigned char *raw = NULL;
    gzFile fi = NULL, fl = NULL;

    memset(ds, 0, sizeof *ds);
    errno = 0;
    if (!(fi = open_idx(images_path, 0x00000803u, &ti, &n, &d, err, es)))
        return -1;
    errno = 0;
    if (!(fl = open_idx(labels_path, 0x00000801u, &tl, &nl, &one, err, es)))
        goto out_close;
    if (nl != n) {
        fail(err, es, labels_path, "holds %zu labels but %s holds %zu images", nl, images_path, n);
        goto out_close;
    }
    if (n == 0) {
        fail(err, es, images_path, "holds no images");
        goto out_close;
    }
    const size_t es_i = elem_size(ti);
    if (d > SIZE_MAX / sizeof(double) / n || d * es_i > SIZE_MAX / n) {
        fail(err, es, images_path, "too large: %zu images of %zu values", n, d);
        goto out_close;
    }
    /* Memory follows the bytes actually read, never the header's claim:
     * x grows by doubling and images are read in pieces of at most
     * RAW_BYTES, so a 50-byte file that announces 2^32 images fails as
     * truncated instead of allocating gigabytes. */
    enum { RAW_BYTES = 1 << 16 };
    const size_t total = n * d, per = RAW_BYTES / es_i;
    size_t cap = 0, n_read_images = 0;
    raw = malloc(RAW_BYTES);
    if (!raw) {
        fail(err, es, images_path, "out of memory for %zu images of %zu values", n, d);
        goto out_close;
    }
    char what[96];
    if (compact && ti == 0x08) {
        if (read_bytes(fi, ds, n, d, images_path, err, es) != 0)
            goto out_close;
        n_read_images = n;
    }
    for (size_t i = n_read_images; i < n; i++) {
        snprintf(what, sizeof what, "image %zu of %zu", i + 1, n);
        for (size_t j = 0; j < d;) {
            const size_t k = d - j < per ? d - j : per, at = i * d + j;
            if (at + k > cap) {
                size_t nc = cap ? 2 * cap : (size_t)1 << 16;
                if (nc < at + k)
                    nc = at + k;
                if (nc > total)
                    nc = total;
                if ((double)nc * sizeof(double) > half_memory()) {
                    fail(err, es, images_path, "too large: %zu images of %zu values need more "
                         "than half this machine's memory as doubles", n, d);
                    goto out_close;
                }
                double *nx = realloc(ds->x, nc * sizeof *nx);
                if (!nx) {
                    fail(err, es, images_path, "out of memory for %zu images of %zu values",
                         n, d);
                    goto out_close;
                }
                ds->x = nx;
                cap = nc;
            }
            if (read_span(fi, raw, k * es_i, d * es_i, j * es_i, images_path, what, err, es))
                goto out_close;
            for (size_t q = 0; q < k; q++) {
                const double v = elem_value(raw + q * es_i, ti);
                if (!isfinite(v)) {   /* float and double elements only */
                    fail(err, es, images_path, "image %zu of %zu, value %zu of %zu is %s: a "
                         "data set must hold finite numbers", i + 1, n, j + q + 1, d,
                         isnan(v) ? "nan" : v > 0 ? "inf" : "-inf");
                    goto out_close;
                }
                ds->x[at + q] = v;
            }
            j += k;
        }
    }
    /* n images were in the file, so n labels cost no more than it did */
    free(raw);
    ds->y = malloc(n * sizeof *ds->y);
    raw = malloc(n);
    if (!ds->y || !raw) {
        fail(err, es, images_path, "out of memory for %zu labels", n);
        goto out_close;
    }
    if (!at_end(fi, images_path, err, es))
        goto out_close;
    snprintf(what, sizeof what, "%zu labels", n);
    if (read_all(fl, raw, n, labels_path, what, err, es) != 0 || !at_end(fl, labels_path, err, es))
        goto out_close;
    int max = 0;
    for (size_t i = 0; i < n; i++) {
        ds->y[i] = raw[i];
        if (raw[i] > max)
            max = raw[i];
    }
    if (max < 1) {
        fail(err, es, labels_path, "every label is 0: a classification needs at least 2 classes");
        goto out_close;
    }
    ds->n = n;
    ds->d = d;
    ds->n_classes = max + 1;
    rc = 0;

out_close:
    free(raw);
    if (fl)
        gzclose(fl);
    gzclose(fi);
    if (rc != 0)
        mdl_dataset_fini(ds);
    return rc;
}

int mdl_idx_load(const char *images_path, const char *labels_path, mdl_dataset *ds,
                 char *err, size_t es)
{
    return load(images_path, labels_path, 0, ds, err, es);
}

int mdl_idx_load_compact(const char *images_path, const char *labels_path, mdl_dataset *ds,
                         char *err, size_t es)
{
    return load(images_path, labels_path, 1, ds, err, es);
}
