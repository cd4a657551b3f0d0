/* mdl_cache.c -- a cache of decoded IDX data sets, so that a sweep's runs
 * (and every later run) skip the gunzip and parse of Fashion-MNIST: one
 * file per pair of image and label files, named by a hash of both files'
 * whole content and of the decoding (format version), holding the labels
 * and the image bytes exactly as mdl_idx_load_compact returns them.  A
 * hit is memory-mapped, read-only, so concurrent runs share the pages.  A
 * cache file is written to a temporary name and renamed, so a reader
 * never sees half of one, and it is trusted only after its header, its
 * size and a hash of its whole payload check out; anything else (a
 * truncated, corrupt or foreign file) is rebuilt from the input files.
 * Only unsigned-byte images are cached (other IDX types load as
 * doubles, uncached).  Scaling is not cached: it is stored with the
 * compact rows and applied as they are read (mdl_compact.c), so the cache
 * never depends on the scenario.  It does not decide where the cache
 * lives: the caller passes the directory.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include "mdl_data.h"
#include "sim_file.h"

#define MAGIC   "DTSIMIDX"
#define VERSION 1u   /* of the file layout and of the decoding it caches */

/* The header, then n labels (bytes), then n d image bytes. */
typedef struct header {
    char     magic[8];
    uint32_t version, header_bytes;
    uint64_t key;           /* hash of the inputs' content */
    uint64_t n, d;
    uint64_t n_classes;
    uint64_t payload_hash;  /* of the labels and image bytes */
} header;

/* A 64-bit hash of a byte stream: four lanes of multiply-rotate over
 * 8-byte words, as xxHash64 mixes them, with the tail and the length
 * folded in.  Not cryptographic: it finds corrupt or changed files. */
typedef struct hasher {
    uint64_t v[4], len;
    unsigned char buf[32];
    size_t   nbuf;
} hasher;

static const uint64_t P1 = 0x9E3779B185EBCA87u, P2 = 0xC2B2AE3D27D4EB4Fu,
                      P3 = 0x165667B19E3779F9u;

static uint64_t rotl(uint64_t x, int r) { return x << r | x >> (64 - r); }
static uint64_t lane(uint64_t acc, uint64_t w) { return rotl(acc + w * P2, 31) * P1; }

static void h_init(hasher *h, uint64_t seed)
{
    h->v[0] = seed + P1 + P2;
    h->v[1] = seed + P2;
    h->v[2] = seed;
    h->v[3] = seed - P1;
    h->len = 0;
    h->nbuf = 0;
}

static void h_block(hasher *h, const unsigned char *p)
{
    for (int k = 0; k < 4; k++) {
        uint64_t w;
        memcpy(&w, p + 8 * k, 8);
        h->v[k] = lane(h->v[k], w);
    }
}

static void h_add(hasher *h, const void *data, size_t n)
{
    const unsigned char *p = data;
    h->len += n;
    if (h->nbuf) {
        const size_t k = 32 - h->nbuf < n ? 32 - h->nbuf : n;
        memcpy(h->buf + h->nbuf, p, k);
        h->nbuf += k;
        p += k;
        n -= k;
        if (h->nbuf < 32)
            return;
        h_block(h, h->buf);
        h->nbuf = 0;
    }
    for (; n >= 32; p += 32, n -= 32)
        h_block(h, p);
    memcpy(h->buf, p, n);
    h->nbuf = n;
}

static uint64_t h_end(const hasher *h)
{
    uint64_t x = rotl(h->v[0], 1) + rotl(h->v[1], 7) + rotl(h->v[2], 12) + rotl(h->v[3], 18);
    x += h->len;
    for (size_t i = 0; i < h->nbuf; i++)
        x = rotl(x ^ (h->buf[i] * P3), 11) * P1;
    x ^= x >> 33;
    x *= P2;
    x ^= x >> 29;
    x *= P3;
    return x ^ x >> 32;
}

/* Adds the whole content of path (and its length) to h.  -1 when it
 * cannot be read (the loader then reports why). */
static int hash_file(hasher *h, const char *path)
{
    const char *kind;
    int fd = sim_file_open_input(path, 0, &kind);
    if (fd < 0)
        return -1;
    enum { CHUNK = 1 << 20 };
    unsigned char *buf = malloc(CHUNK);
    uint64_t total = 0;
    ssize_t k = -1;
    while (buf && (k = read(fd, buf, CHUNK)) > 0) {
        h_add(h, buf, (size_t)k);
        total += (uint64_t)k;
    }
    free(buf);
    close(fd);
    if (k != 0)
        return -1;
    h_add(h, &total, sizeof total);
    return 0;
}

static uint64_t payload_hash(const unsigned char *labels, size_t n, const unsigned char *x,
                             size_t nd)
{
    hasher h;
    h_init(&h, VERSION);
    h_add(&h, labels, n);
    h_add(&h, x, nd);
    return h_end(&h);
}

/* Opens and checks the cache file; on success ds holds it (mapped).  0 or
 * -1 (missing, unreadable or not valid: the caller rebuilds it). */
static int open_cached(const char *path, uint64_t key, mdl_dataset *ds)
{
    const char *kind;
    int fd = sim_file_open_input(path, 0, &kind);
    if (fd < 0)
        return -1;
    struct stat sb;
    header h;
    if (fstat(fd, &sb) != 0 || (size_t)sb.st_size < sizeof h
        || pread(fd, &h, sizeof h, 0) != (ssize_t)sizeof h || memcmp(h.magic, MAGIC, 8) != 0
        || h.version != VERSION || h.header_bytes != sizeof h || h.key != key || h.n == 0
        || h.d == 0 || h.n_classes < 2 || h.n_classes > 256 || h.n > SIZE_MAX / h.d
        || h.n * h.d > SIZE_MAX - sizeof h - h.n
        || (uint64_t)sb.st_size != sizeof h + h.n + h.n * h.d) {
        close(fd);
        return -1;
    }
    const size_t len = (size_t)sb.st_size;
    void *map = mmap(NULL, len, PROT_READ, MAP_PRIVATE, fd, 0);
    close(fd);
    if (map == MAP_FAILED)
        return -1;
    const unsigned char *labels = (const unsigned char *)map + sizeof h;
    const unsigned char *x = labels + h.n;
    int *y = malloc(h.n * sizeof *y);
    int ok = y && payload_hash(labels, h.n, x, h.n * h.d) == h.payload_hash;
    for (size_t i = 0; ok && i < h.n; i++) {
        y[i] = labels[i];
        ok = labels[i] < h.n_classes;
    }
    if (!ok) {
        free(y);
        munmap(map, len);
        return -1;
    }
    memset(ds, 0, sizeof *ds);
    ds->n = h.n;
    ds->d = h.d;
    ds->n_classes = (int)h.n_classes;
    ds->y = y;
    ds->x8 = x;
    ds->x8_mem = map;
    ds->x8_map = len;
    return 0;
}

static int write_all(int fd, const void *p, size_t n)
{
    const char *c = p;
    while (n > 0) {
        ssize_t k = write(fd, c, n);
        if (k < 0 && errno == EINTR)
            continue;
        if (k <= 0)
            return -1;
        c += k;
        n -= (size_t)k;
    }
    return 0;
}

/* mkdir -p. */
static int make_dirs(const char *dir)
{
    char p[4096];
    const size_t n = strlen(dir);
    if (n == 0 || n >= sizeof p)
        return -1;
    memcpy(p, dir, n + 1);
    for (size_t i = 1; i <= n; i++)
        if (p[i] == '/' || p[i] == '\0') {
            const char c = p[i];
            p[i] = '\0';
            if (mkdir(p, 0777) != 0 && errno != EEXIST)
                return -1;
            p[i] = c;
        }
    return 0;
}

/* Writes ds to path through a temporary file in the same directory,
 * renamed when complete.  0, or -1 (nothing left behind). */
static int write_cached(const char *dir, const char *path, uint64_t key, const mdl_dataset *ds)
{
    if (make_dirs(dir) != 0)
        return -1;
    unsigned char *labels = malloc(ds->n);
    if (!labels)
        return -1;
    for (size_t i = 0; i < ds->n; i++)
        labels[i] = (unsigned char)ds->y[i];
    header h;
    memset(&h, 0, sizeof h);
    memcpy(h.magic, MAGIC, 8);
    h.version = VERSION;
    h.header_bytes = sizeof h;
    h.key = key;
    h.n = ds->n;
    h.d = ds->d;
    h.n_classes = (uint64_t)ds->n_classes;
    h.payload_hash = payload_hash(labels, ds->n, ds->x8, ds->n * ds->d);
    char tmp[4200];
    int fd = -1;
    if (snprintf(tmp, sizeof tmp, "%s.tmp-XXXXXX", path) < (int)sizeof tmp)
        fd = mkstemp(tmp);
    int rc = -1;
    if (fd >= 0) {
        int ok = write_all(fd, &h, sizeof h) == 0 && write_all(fd, labels, ds->n) == 0
                 && write_all(fd, ds->x8, ds->n * ds->d) == 0 && fchmod(fd, 0644) == 0;
        ok = close(fd) == 0 && ok && rename(tmp, path) == 0;
        if (!ok)
            unlink(tmp);
        rc = ok ? 0 : -1;
    }
    free(labels);
    return rc;
}

int mdl_idx_load_cached(const char *images_path, const char *labels_path,
                        const char *cache_dir, mdl_dataset *ds, mdl_cache_outcome *outcome,
                        char *err, size_t es)
{
    mdl_cache_outcome dummy;
    outcome = outcome ? outcome : &dummy;
    *outcome = MDL_CACHE_OFF;
    if (!cache_dir || !*cache_dir)
        return mdl_idx_load_compact(images_path, labels_path, ds, err, es);
    hasher hk;
    h_init(&hk, VERSION);
    h_add(&hk, MAGIC, 8);
    char path[4096];
    if (hash_file(&hk, images_path) != 0 || hash_file(&hk, labels_path) != 0)
        return mdl_idx_load_compact(images_path, labels_path, ds, err, es);   /* says why */
    const uint64_t key = h_end(&hk);
    const int pl = snprintf(path, sizeof path, "%s/idx-%016llx.bin", cache_dir,
                            (unsigned long long)key);
    if (pl < 0 || (size_t)pl >= sizeof path)
        return mdl_idx_load_compact(images_path, labels_path, ds, err, es);
    if (open_cached(path, key, ds) == 0) {
        *outcome = MDL_CACHE_HIT;
        return 0;
    }
    const int existed = access(path, F_OK) == 0;
    if (mdl_idx_load_compact(images_path, labels_path, ds, err, es) != 0)
        return -1;
    if (!ds->x8)
        return 0;   /* not bytes: not cached */
    *outcome = write_cached(cache_dir, path, key, ds) != 0 ? MDL_CACHE_UNWRITABLE
             : existed ? MDL_CACHE_REBUILT : MDL_CACHE_WRITTEN;
    return 0;
}
