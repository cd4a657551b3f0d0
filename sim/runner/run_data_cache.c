/* run_data_cache.c -- the prepared data sets a caller keeps across runs
 * (a sweep's planning and its forked workers), so that grid points and
 * replicates that read the same data load, generate and scale it once.
 * An entry is keyed by everything that decides the training and test
 * sets as run_data.c builds them before partitioning: the source, its
 * resolved files, the sizes, the scaling, and the data seed where the
 * source draws with it (generated data, a seeded test split).  Runs
 * borrow an entry (a reference count) and never change it; entries are
 * evicted oldest first, when unreferenced, beyond the byte bound.  It
 * does not load or decide anything itself (run_data.c does, through
 * run_i_data_acquire) and is not shared between processes except by
 * fork, read-only.
 */
#include "run_internal.h"

#include <inttypes.h>

struct run_data_entry {
    char       *key;
    mdl_dataset train, test;
    double      load_check_bytes;  /* what the load's own memory check used */
    int         refs;
    struct run_data_entry *next;   /* oldest first */
};

struct run_data_cache {
    run_data_entry *head;
    double          max_bytes, bytes;
    size_t          loads;
};

run_data_cache *run_data_cache_create(double max_bytes)
{
    run_data_cache *c = calloc(1, sizeof *c);
    if (c)
        c->max_bytes = max_bytes;
    return c;
}

static void entry_free(run_data_entry *e)
{
    mdl_dataset_fini(&e->train);
    mdl_dataset_fini(&e->test);
    free(e->key);
    free(e);
}

void run_data_cache_destroy(run_data_cache *c)
{
    if (!c)
        return;
    for (run_data_entry *e = c->head, *nx; e; e = nx) {
        nx = e->next;
        entry_free(e);
    }
    free(c);
}

size_t run_data_cache_loads(const run_data_cache *c) { return c ? c->loads : 0; }

static double entry_bytes(const run_data_entry *e)
{
    return mdl_dataset_bytes(&e->train) + mdl_dataset_bytes(&e->test);
}

/* Appends to out the resolved path of name (under dir) as a key field. */
static void key_path(FILE *f, const scn_scenario *s, const char *dir, const char *name)
{
    char p[4096];
    run_i_data_path(s, dir, name ? name : "", p, sizeof p);
    fprintf(f, "%zu:%s;", strlen(p), p);
}

/* Everything run_i_data_acquire reads, as text ("%a" keeps doubles exact).
 * NULL when out of memory. */
static char *data_key(const scn_scenario *s)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    if (!f)
        return NULL;
    fprintf(f, "src=%d;train=%zu;test=%zu;scale=%d;", (int)s->data_source, s->data_train,
            s->data_test, (int)s->data_scale);
    switch (s->data_source) {
    case SCN_DATA_IDX:
        key_path(f, s, NULL, s->data_train_images);
        key_path(f, s, NULL, s->data_train_labels);
        key_path(f, s, NULL, s->data_test_images);
        key_path(f, s, NULL, s->data_test_labels);
        break;
    case SCN_DATA_LIBSVM:
    case SCN_DATA_CSV:
        key_path(f, s, NULL, s->data_train_file);
        fprintf(f, "d=%zu;label=%d;header=%d;", s->data_features, s->data_label_column,
                s->data_header);
        if (s->data_test_file)
            key_path(f, s, NULL, s->data_test_file);
        else   /* a seeded split */
            fprintf(f, "fraction=%a;seed=%" PRIu64 ";", s->data_test_fraction, s->data_seed);
        break;
    case SCN_DATA_FASHION_MNIST:   /* its four files in data_dir */
        key_path(f, s, s->data_dir, "train-images-idx3-ubyte.gz");
        key_path(f, s, s->data_dir, "train-labels-idx1-ubyte.gz");
        key_path(f, s, s->data_dir, "t10k-images-idx3-ubyte.gz");
        key_path(f, s, s->data_dir, "t10k-labels-idx1-ubyte.gz");
        break;
    case SCN_DATA_SYNTHETIC:
    case SCN_DATA_SYNTH_LOGISTIC:
    case SCN_DATA_SYNTH_REGRESSION:
        fprintf(f, "d=%zu;classes=%d;sep=%a;noise=%a;seed=%" PRIu64 ";", s->data_features,
                s->data_classes, s->data_separation, s->data_noise, s->data_seed);
        break;
    }
    if (fclose(f) != 0) {
        free(buf);
        return NULL;
    }
    return buf;
}

/* Drops unreferenced entries, oldest first, while the cache is above its
 * bound, keeping keep. */
static void evict(run_data_cache *c, const run_data_entry *keep)
{
    for (run_data_entry **pp = &c->head; *pp && c->bytes > c->max_bytes;) {
        run_data_entry *e = *pp;
        if (e == keep || e->refs > 0) {
            pp = &e->next;
            continue;
        }
        *pp = e->next;
        c->bytes -= entry_bytes(e);
        entry_free(e);
    }
}

int run_i_data_from_cache(run_sim *r, run_data_cache *c, scn_error *err)
{
    const scn_scenario *s = r->s;
    char *key = data_key(s);
    if (!key)
        goto out_oom;
    run_data_entry *e = c->head;
    while (e && strcmp(e->key, key) != 0)
        e = e->next;
    if (e) {
        free(key);
        /* the load's own check, as a fresh load would make it for this run */
        if (e->load_check_bytes > 0
            && run_i_check_memory(r, 0, e->load_check_bytes, err) != 0)
            return -1;
    } else {
        if (!(e = calloc(1, sizeof *e))) {
            free(key);
            goto out_oom;
        }
        e->key = key;
        if (run_i_data_acquire(r, &e->train, &e->test, &e->load_check_bytes, err) != 0) {
            entry_free(e);
            return -1;
        }
        c->loads++;
        run_data_entry **pp = &c->head;
        while (*pp)
            pp = &(*pp)->next;
        *pp = e;
        c->bytes += entry_bytes(e);
        evict(c, e);
    }
    e->refs++;
    r->data_entry = e;
    r->train = e->train;
    r->test = e->test;
    return 0;

out_oom:
    snprintf(err->msg, sizeof err->msg, "%s: error: out of memory building the data", s->path);
    return -1;
}

void run_i_data_release(run_sim *r)
{
    if (!r->data_entry)
        return;
    r->data_entry->refs--;
    r->data_entry = NULL;
    memset(&r->train, 0, sizeof r->train);
    memset(&r->test, 0, sizeof r->test);
}
