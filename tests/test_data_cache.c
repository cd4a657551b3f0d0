/* test_data_cache.c -- compact pixels and the decoded-data cache change no
 * value: IDX bytes held as bytes and scaled as rows are read give every
 * feature the same double as doubles scaled in place (min-max, standard,
 * none; loss and gradient the same bits); the cache returns the data set
 * it was written from, a corrupt, truncated or foreign cache file is
 * detected and rebuilt (never used), an unwritable cache directory is no
 * error, and whole runs give the same CSV bytes with the cache off, cold
 * and warm.  On the Fashion-MNIST samples in tests/data/fmnist; the
 * cache lives in a temporary directory.
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "mdl.h"
#include "run.h"
#include "scn.h"

#define FM DTSIM_SOURCE_DIR "/tests/data/fmnist/"
#define TRI FM "train-images-300.gz"
#define TRL FM "train-labels-300.gz"
#define TEI FM "test-images-100.gz"
#define TEL FM "test-labels-100.gz"

static char tmpdir[256];

static void make_tmp(void)
{
    const char *t = getenv("TMPDIR");
    snprintf(tmpdir, sizeof tmpdir, "%s/dtsim-cache-XXXXXX", t && *t ? t : "/tmp");
    ck_assert_ptr_nonnull(mkdtemp(tmpdir));
}

static void rm_tmp(void)
{
    char cmd[600];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmpdir);
    ck_assert_int_eq(system(cmd), 0);
}

/* Every row of a (any kind) equals b's, bit for bit, and the labels. */
static void same_rows(const mdl_dataset *a, const mdl_dataset *b)
{
    ck_assert_uint_eq(a->n, b->n);
    ck_assert_uint_eq(a->d, b->d);
    ck_assert_int_eq(a->n_classes, b->n_classes);
    ck_assert_int_eq(memcmp(a->y, b->y, a->n * sizeof *a->y), 0);
    double *ra = malloc(a->d * sizeof *ra), *rb = malloc(a->d * sizeof *rb);
    for (size_t r = 0; r < a->n; r++) {
        mdl_dataset_row(a, r, ra);
        mdl_dataset_row(b, r, rb);
        ck_assert_msg(memcmp(ra, rb, a->d * sizeof *ra) == 0, "row %zu differs", r);
    }
    free(ra);
    free(rb);
}

START_TEST(compact_scaling_is_bit_identical)
{
    char err[512];
    for (int how = MDL_SCALE_NONE; how <= MDL_SCALE_STANDARD; how++) {
        mdl_dataset dtr, dte, ctr, cte;
        ck_assert_int_eq(mdl_idx_load(TRI, TRL, &dtr, err, sizeof err), 0);
        ck_assert_int_eq(mdl_idx_load(TEI, TEL, &dte, err, sizeof err), 0);
        ck_assert_int_eq(mdl_idx_load_compact(TRI, TRL, &ctr, err, sizeof err), 0);
        ck_assert_int_eq(mdl_idx_load_compact(TEI, TEL, &cte, err, sizeof err), 0);
        ck_assert_ptr_null(ctr.x);
        ck_assert_ptr_nonnull(ctr.x8);
        ck_assert_double_eq(mdl_dataset_bytes(&ctr), 300 * 784 + 300 * sizeof(int));
        /* the first 120 samples only, as data.train cuts them */
        dtr.n = ctr.n = 120;
        ck_assert_int_eq(mdl_dataset_scale(&dtr, &dte, how), 0);
        ck_assert_int_eq(mdl_dataset_scale(&ctr, &cte, how), 0);
        ck_assert_ptr_null(ctr.x);   /* stays compact */
        same_rows(&dtr, &ctr);
        same_rows(&dte, &cte);

        /* the model sees the same batch, whole-set evaluation included */
        mdl_model *m = mdl_create(&mdl_softmax, 784, 10, 1e-3, 16);
        size_t P = mdl_n_params(m), batch[16];
        double *p = malloc(P * sizeof *p), *g1 = malloc(P * sizeof *g1),
               *g2 = malloc(P * sizeof *g2);
        for (size_t k = 0; k < P; k++)
            p[k] = 1e-3 * (double)(k % 17) - 5e-3;
        for (size_t k = 0; k < 16; k++)
            batch[k] = (k * 37) % 120;
        const double l1 = mdl_loss_grad(m, p, &dtr, batch, 16, g1);
        const double l2 = mdl_loss_grad(m, p, &ctr, batch, 16, g2);
        ck_assert_int_eq(memcmp(&l1, &l2, sizeof l1), 0);
        ck_assert_int_eq(memcmp(g1, g2, P * sizeof *g1), 0);
        double e1[2], e2[2];
        mdl_evaluate(m, p, &dte, NULL, 0, &e1[0], &e1[1]);
        mdl_evaluate(m, p, &cte, NULL, 0, &e2[0], &e2[1]);
        ck_assert_int_eq(memcmp(e1, e2, sizeof e1), 0);

        /* expanding gives the doubles scaling in place gives */
        ck_assert_int_eq(mdl_dataset_expand(&ctr), 0);
        ck_assert_ptr_null(ctr.x8);
        ck_assert_int_eq(memcmp(ctr.x, dtr.x, 120 * 784 * sizeof(double)), 0);
        free(p);
        free(g1);
        free(g2);
        mdl_destroy(m);
        mdl_dataset_fini(&dtr);
        mdl_dataset_fini(&dte);
        mdl_dataset_fini(&ctr);
        mdl_dataset_fini(&cte);
    }
}
END_TEST

START_TEST(compact_errors_match)
{
    /* the byte path reports a truncated image as the double path does */
    char e1[512], e2[512];
    mdl_dataset a, b;
    ck_assert_int_eq(mdl_idx_load(FM "truncated-images.gz", TEL, &a, e1, sizeof e1), -1);
    ck_assert_int_eq(mdl_idx_load_compact(FM "truncated-images.gz", TEL, &b, e2, sizeof e2), -1);
    ck_assert_str_eq(e1, e2);
    ck_assert_ptr_null(b.x8_mem);
}
END_TEST

/* The one cache file of the directory (after one load). */
static void cache_file(char *path, size_t n)
{
    char cmd[600];
    snprintf(cmd, sizeof cmd, "ls '%s'/idx-*.bin", tmpdir);
    FILE *p = popen(cmd, "r");
    ck_assert_ptr_nonnull(p);
    ck_assert_ptr_nonnull(fgets(path, (int)n, p));
    path[strcspn(path, "\n")] = '\0';
    ck_assert_ptr_null(fgets(cmd, sizeof cmd, p));   /* only one */
    pclose(p);
}

static void load_expect(mdl_cache_outcome want, const mdl_dataset *ref)
{
    char err[512];
    mdl_dataset ds;
    mdl_cache_outcome got;
    ck_assert_int_eq(mdl_idx_load_cached(TEI, TEL, tmpdir, &ds, &got, err, sizeof err), 0);
    ck_assert_int_eq(got, want);
    same_rows(&ds, ref);
    ck_assert_int_eq(memcmp(ds.x8, ref->x8, ref->n * ref->d), 0);
    if (want == MDL_CACHE_HIT)
        ck_assert_uint_gt(ds.x8_map, 0);   /* mapped, not decoded */
    mdl_dataset_fini(&ds);
}

/* Overwrites one byte of f at offset at (from the end when negative). */
static void poke(const char *f, long at, unsigned char v)
{
    FILE *fp = fopen(f, "r+b");
    ck_assert_ptr_nonnull(fp);
    fseek(fp, at, at < 0 ? SEEK_END : SEEK_SET);
    fputc(v, fp);
    fclose(fp);
}

START_TEST(cache_written_hit_and_rebuilt)
{
    char err[512], f[512];
    mdl_dataset ref;
    ck_assert_int_eq(mdl_idx_load_compact(TEI, TEL, &ref, err, sizeof err), 0);
    make_tmp();
    load_expect(MDL_CACHE_WRITTEN, &ref);
    load_expect(MDL_CACHE_HIT, &ref);
    cache_file(f, sizeof f);

    poke(f, -1, 0x5a);            /* the last pixel */
    load_expect(MDL_CACHE_REBUILT, &ref);
    load_expect(MDL_CACHE_HIT, &ref);
    poke(f, 56 + 3, 0xff);        /* a label */
    load_expect(MDL_CACHE_REBUILT, &ref);
    poke(f, 0, 'X');              /* the magic */
    load_expect(MDL_CACHE_REBUILT, &ref);
    poke(f, 24, 0x01);            /* n in the header */
    load_expect(MDL_CACHE_REBUILT, &ref);
    FILE *ap = fopen(f, "ab");    /* a byte too many */
    fputc(0, ap);
    fclose(ap);
    load_expect(MDL_CACHE_REBUILT, &ref);
    ck_assert_int_eq(truncate(f, 1000), 0);
    load_expect(MDL_CACHE_REBUILT, &ref);
    ck_assert_int_eq(truncate(f, 0), 0);
    load_expect(MDL_CACHE_REBUILT, &ref);
    load_expect(MDL_CACHE_HIT, &ref);
    cache_file(f, sizeof f);      /* no temporary left behind */

    /* other inputs, another file; the first one is still a hit */
    mdl_dataset tr;
    mdl_cache_outcome got;
    ck_assert_int_eq(mdl_idx_load_cached(TRI, TRL, tmpdir, &tr, &got, err, sizeof err), 0);
    ck_assert_int_eq(got, MDL_CACHE_WRITTEN);
    ck_assert_uint_eq(tr.n, 300);
    mdl_dataset_fini(&tr);
    load_expect(MDL_CACHE_HIT, &ref);

    /* off, and a directory that cannot be made: loaded all the same */
    mdl_dataset ds;
    ck_assert_int_eq(mdl_idx_load_cached(TEI, TEL, NULL, &ds, &got, err, sizeof err), 0);
    ck_assert_int_eq(got, MDL_CACHE_OFF);
    same_rows(&ds, &ref);
    mdl_dataset_fini(&ds);
    char bad[600];
    snprintf(bad, sizeof bad, "%s/sub", f);   /* under a regular file */
    ck_assert_int_eq(mdl_idx_load_cached(TEI, TEL, bad, &ds, &got, err, sizeof err), 0);
    ck_assert_int_eq(got, MDL_CACHE_UNWRITABLE);
    same_rows(&ds, &ref);
    mdl_dataset_fini(&ds);
    /* a missing input is the loader's error, cache or not */
    ck_assert_int_eq(mdl_idx_load_cached(FM "missing.gz", TEL, tmpdir, &ds, &got, err,
                                         sizeof err), -1);
    ck_assert_str_eq(err, FM "missing.gz: error: cannot open: No such file or directory");
    mdl_dataset_fini(&ref);
    rm_tmp();
}
END_TEST

static char *slurp(const char *path)
{
    FILE *f = fopen(path, "rb");
    ck_assert_msg(f != NULL, "%s", path);
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *s = malloc((size_t)n + 1);
    ck_assert_int_eq(fread(s, 1, (size_t)n, f), (size_t)n);
    s[n] = '\0';
    fclose(f);
    return s;
}

/* Runs the small Fashion-MNIST scenario into tmpdir/name. */
static void run_small(const char *name)
{
    scn_scenario s;
    scn_error err;
    char out[512];
    ck_assert_msg(scn_load(DTSIM_SOURCE_DIR "/tests/data/fmnist-small.json", NULL, 0, &s,
                           &err) == 0, "%s", err.msg);
    run_sim *r = run_prepare(&s, &err);
    ck_assert_msg(r != NULL, "%s", err.msg);
    snprintf(out, sizeof out, "%s/%s", tmpdir, name);
    run_options opt = { .out_dir = out };
    run_result res;
    char msg[1024];
    ck_assert_msg(run_execute(r, &opt, &res, msg, sizeof msg) == 0, "%s", msg);
    run_destroy(r);
    scn_fini(&s);
}

START_TEST(runs_same_cold_warm_off)
{
    make_tmp();
    char dir[400], f[600];
    snprintf(dir, sizeof dir, "%s/cache", tmpdir);
    setenv("DTSIM_CACHE_DIR", "off", 1);
    run_small("off");
    setenv("DTSIM_CACHE_DIR", dir, 1);
    run_small("cold");
    run_small("warm");
    snprintf(f, sizeof f, "%s/cache", tmpdir);
    struct stat sb;
    ck_assert_int_eq(stat(f, &sb), 0);   /* the cold run wrote it */
    static const char *const files[] = { "metrics.csv", "nodes.csv" };
    for (int k = 0; k < 2; k++) {
        char p[600];
        snprintf(p, sizeof p, "%s/off/%s", tmpdir, files[k]);
        char *a = slurp(p);
        snprintf(p, sizeof p, "%s/cold/%s", tmpdir, files[k]);
        char *b = slurp(p);
        snprintf(p, sizeof p, "%s/warm/%s", tmpdir, files[k]);
        char *c = slurp(p);
        ck_assert_str_eq(a, b);
        ck_assert_str_eq(a, c);
        free(a);
        free(b);
        free(c);
    }
    rm_tmp();
}
END_TEST

int main(void)
{
    Suite *s = suite_create("data_cache");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, compact_scaling_is_bit_identical);
    tcase_add_test(tc, compact_errors_match);
    tcase_add_test(tc, cache_written_hit_and_rebuilt);
    tcase_add_test(tc, runs_same_cold_warm_off);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
