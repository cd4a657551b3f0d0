/* fuzz_entry.c -- feeds arbitrary bytes to the scenario loader and to
 * every file reader (trace CSVs, LIBSVM, CSV data, IDX, edge lists and
 * schedule files).  Readers that take
 * a path get the bytes through one scratch file per process, rewritten for
 * each input.  Nothing here judges the result: success and a clean error
 * are both fine; the sanitizers judge everything else.
 */
#include "fuzz_entry.h"
#include "mdl.h"
#include "scn.h"
#include "topo.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Accepted inputs stay small so that a loader's own limits, not the
 * machine's memory, decide: 1 MB is plenty for any structure. */
#define MAX_INPUT (1u << 20)

static char scratch[2][64];

/* Writes bytes to scratch file k (0 or 1) and returns its path. */
static const char *put(int k, const uint8_t *data, size_t size)
{
    if (!scratch[k][0])
        snprintf(scratch[k], sizeof scratch[k], "/tmp/dtsim-fuzz-%ld-%d", (long)getpid(), k);
    FILE *f = fopen(scratch[k], "wb");
    if (!f) {
        perror(scratch[k]);
        abort();
    }
    if (size && fwrite(data, 1, size, f) != size) {
        perror(scratch[k]);
        abort();
    }
    fclose(f);
    return scratch[k];
}

static char *text(const uint8_t *data, size_t size)
{
    char *t = malloc(size + 1);
    if (!t)
        abort();
    memcpy(t, data, size);
    t[size] = '\0';
    return t;
}

static int load(const char *json, const char *const *sets, size_t n_sets)
{
    scn_scenario s;
    scn_error err;
    err.msg[0] = '\0';
    if (scn_load_string(json, "fuzz.json", sets, n_sets, &s, &err) != 0) {
        if (!err.msg[0])
            abort();   /* an error must say something */
        return 1;
    }
    scn_fini(&s);
    return 0;
}

int fuzz_scenario(const uint8_t *data, size_t size)
{
    if (size > MAX_INPUT)
        return 1;
    char *t = text(data, size);
    int rc = load(t, NULL, 0);
    free(t);
    return rc;
}

static const char base_scenario[] =
    "{\"nodes\": 4, \"algorithm\": {\"name\": \"dpsgd\"}, \"stop\": {\"time_s\": 1},"
    " \"data\": {\"train\": 64, \"test\": 16}}";

int fuzz_scenario_set(const uint8_t *data, size_t size)
{
    if (size > MAX_INPUT)
        return 1;
    char *t = text(data, size);
    const char *json = base_scenario;
    size_t head = strlen(t);
    if (head < size)
        json = t + head + 1;
    const char *sets[16];
    size_t n = 0;
    for (char *p = t; n < 16 && p < t + head;) {
        char *nl = strchr(p, '\n');
        if (nl)
            *nl = '\0';
        sets[n++] = p;
        if (!nl)
            break;
        p = nl + 1;
    }
    int rc = load(json, sets, n);
    free(t);
    return rc;
}

int fuzz_trace(const uint8_t *data, size_t size)
{
    if (size > MAX_INPUT)
        return 1;
    const char *path = put(0, data, size);
    char json[512];
    int rc = 0;
    snprintf(json, sizeof json,
             "{\"nodes\": 8, \"algorithm\": {\"name\": \"dpsgd\"}, \"stop\": {\"time_s\": 1},"
             " \"compute\": {\"slowdowns\": [{\"kind\": \"trace\", \"file\": \"%s\"}]}}", path);
    rc |= load(json, NULL, 0);
    snprintf(json, sizeof json,
             "{\"nodes\": 8, \"algorithm\": {\"name\": \"dpsgd\"}, \"stop\": {\"time_s\": 1},"
             " \"faults\": {\"events\": [{\"kind\": \"trace\", \"file\": \"%s\"}]}}", path);
    rc |= load(json, NULL, 0);
    return rc;
}

/* What the runner does after loading a text file.  Scaling touches every
 * value: a file whose dense rows are larger than 32 MB (a legal, very
 * sparse LIBSVM file) is only compacted, so that the fuzzer's memory limit
 * judges the loader rather than the data's size. */
static int after_load(mdl_dataset *ds)
{
    int rc = 0;
    if (mdl_labels_compact(ds, NULL) < 0
        || (ds->n * ds->d <= (1u << 22) && mdl_dataset_scale(ds, NULL, MDL_SCALE_MINMAX) != 0))
        rc = 1;
    mdl_dataset_fini(ds);
    return rc;
}

static int text_failed(const char *err)
{
    if (!err[0])
        abort();
    return 1;
}

int fuzz_libsvm(const uint8_t *data, size_t size)
{
    if (size > MAX_INPUT)
        return 1;
    mdl_dataset ds;
    char err[1024] = "";
    if (mdl_libsvm_load(put(0, data, size), 0, &ds, err, sizeof err) != 0)
        return text_failed(err);
    return after_load(&ds);
}

int fuzz_csv(const uint8_t *data, size_t size)
{
    if (size < 1 || size > MAX_INPUT)
        return 1;
    mdl_dataset ds;
    char err[1024] = "";
    if (mdl_csv_load(put(0, data + 1, size - 1), data[0] & 3, (data[0] >> 2) & 1, &ds, err,
                     sizeof err) != 0)
        return text_failed(err);
    return after_load(&ds);
}

int fuzz_idx(const uint8_t *data, size_t size)
{
    if (size < 2 || size > MAX_INPUT)
        return 1;
    size_t k = (size_t)data[0] << 8 | data[1];
    if (k > size - 2)
        k = size - 2;
    const char *img = put(0, data + 2, k);
    const char *lab = put(1, data + 2 + k, size - 2 - k);
    mdl_dataset ds;
    char err[1024] = "";
    if (mdl_idx_load(img, lab, &ds, err, sizeof err) != 0)
        return text_failed(err);
    mdl_dataset_fini(&ds);
    return 0;
}

int fuzz_edges(const uint8_t *data, size_t size)
{
    if (size < 1 || size > MAX_INPUT)
        return 1;
    const int n = 1 + (data[0] & 63);
    const char *path = put(0, data + 1, size - 1);
    char err[1024] = "";
    if (data[0] & 64) {
        topo_sched_spec sp = { .kind = TOPO_SCHED_FILE, .n = n, .path = path };
        topo_schedule *sc = topo_schedule_create(&sp, 1, err, sizeof err);
        if (!sc)
            return text_failed(err);
        for (uint64_t r = 0; r < 4; r++)
            (void)topo_schedule_round(sc, r);
        topo_schedule_destroy(sc);
        return 0;
    }
    topo_spec sp = { .kind = TOPO_EDGE_LIST, .n = n, .path = path };
    topo_graph *g = topo_build(&sp, 1, err, sizeof err);
    if (!g)
        return text_failed(err);
    topo_stats st;
    int rc = topo_compute_stats(g, &st) != 0;
    topo_destroy(g);
    return rc;
}

fuzz_fn fuzz_entry_find(const char *name)
{
    static const struct { const char *name; fuzz_fn fn; } all[] = {
        {"scenario", fuzz_scenario}, {"scenario_set", fuzz_scenario_set},
        {"trace", fuzz_trace},       {"libsvm", fuzz_libsvm},
        {"csv", fuzz_csv},           {"idx", fuzz_idx},
        {"edges", fuzz_edges},
    };
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
        if (strcmp(all[i].name, name) == 0)
            return all[i].fn;
    return NULL;
}
