/* test_datasets.c -- Check suite for the loaders, preprocessing and
 * partitions of models/datasets/: the IDX reader on a few hundred real
 * Fashion-MNIST samples shipped in tests/data/fmnist (gzipped and plain),
 * every error path of a bad file with its exact message, scaling and
 * splitting against closed forms, and every partition kind for
 * determinism, disjointness, completeness and its defining property.
 * It does not need the full dataset to be installed.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <check.h>
#include "mdl.h"

#define FM DTSIM_SOURCE_DIR "/tests/data/fmnist/"

START_TEST(test_idx_real_samples)
{
    mdl_dataset tr, te;
    char err[512] = "";
    ck_assert_int_eq(mdl_idx_load(FM "train-images-300.gz", FM "train-labels-300.gz", &tr,
                                  err, sizeof err), 0);
    ck_assert_uint_eq(tr.n, 300);
    ck_assert_uint_eq(tr.d, 784);
    ck_assert_int_eq(tr.n_classes, 10);
    /* The first Fashion-MNIST training image is an ankle boot (9), the
     * second a T-shirt (0); pixels are raw bytes. */
    ck_assert_int_eq(tr.y[0], 9);
    ck_assert_int_eq(tr.y[1], 0);
    double lo = 255, hi = 0;
    for (size_t k = 0; k < tr.n * tr.d; k++) {
        lo = fmin(lo, tr.x[k]);
        hi = fmax(hi, tr.x[k]);
        ck_assert_double_eq(tr.x[k], floor(tr.x[k]));
    }
    ck_assert_double_eq(lo, 0);
    ck_assert_double_eq(hi, 255);
    /* Plain (not gzipped) labels load the same as gzipped ones. */
    ck_assert_int_eq(mdl_idx_load(FM "test-images-100.gz", FM "test-labels-100.idx", &te,
                                  err, sizeof err), 0);
    mdl_dataset te2;
    ck_assert_int_eq(mdl_idx_load(FM "test-images-100.gz", FM "test-labels-100.gz", &te2,
                                  err, sizeof err), 0);
    ck_assert_uint_eq(te.n, 100);
    ck_assert_int_eq(memcmp(te.y, te2.y, 100 * sizeof(int)), 0);
    ck_assert_int_eq(memcmp(te.x, te2.x, 100 * 784 * sizeof(double)), 0);
    ck_assert_int_eq(te.y[0], 9);   /* first test image: ankle boot */
    mdl_dataset_fini(&te2);
    mdl_dataset_fini(&te);
    mdl_dataset_fini(&tr);
}
END_TEST

START_TEST(test_idx_errors)
{
    static const struct { const char *img, *lab, *msg; } cases[] = {
        { FM "missing.gz", FM "test-labels-100.gz",
          FM "missing.gz: error: cannot open: No such file or directory" },
        { FM "test-labels-100.gz", FM "test-labels-100.gz",
          FM "test-labels-100.gz: error: IDX magic 0x00000803 expected, got 0x00000801" },
        { FM "test-images-100.gz", FM "test-images-100.gz",
          FM "test-images-100.gz: error: IDX magic 0x00000801 expected, got 0x00000803" },
        { FM "not-idx.txt", FM "test-labels-100.gz",
          FM "not-idx.txt: error: IDX magic 0x00000803 expected, got 0x68656c6c" },
        { FM "truncated-images.gz", FM "test-labels-100.gz",
          FM "truncated-images.gz: error: truncated: image 100 of 100 needs 784 bytes, "
             "the file ends after 392" },
        { FM "test-images-100.gz", FM "train-labels-300.gz",
          FM "train-labels-300.gz: error: holds 300 labels but " FM "test-images-100.gz "
             "holds 100 images" },
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        mdl_dataset ds;
        char err[1024] = "";
        ck_assert_int_eq(mdl_idx_load(cases[i].img, cases[i].lab, &ds, err, sizeof err), -1);
        ck_assert_str_eq(err, cases[i].msg);
        ck_assert_ptr_null(ds.x);
        ck_assert_uint_eq(ds.n, 0);
    }
}
END_TEST

#define TX DTSIM_SOURCE_DIR "/tests/data/text/"

START_TEST(test_libsvm)
{
    mdl_dataset ds;
    char err[512] = "";
    ck_assert_msg(mdl_libsvm_load(TX "two-class.svm", 0, &ds, err, sizeof err) == 0, "%s", err);
    ck_assert_uint_eq(ds.n, 171);
    ck_assert_uint_eq(ds.d, 6);
    /* First line: "+1 1:0.847 2:1.178 3:-0.23 4:0.258 5:-0.348 6:0.154";
     * second: "+1 1:0.239 2:-0.455 3:1.242 4:-0.423 6:0.521" (5 absent). */
    ck_assert_int_eq(ds.y[0], 1);
    ck_assert_double_eq(ds.x[0], 0.847);
    ck_assert_double_eq(ds.x[5], 0.154);
    ck_assert_double_eq(ds.x[6 + 4], 0.0);
    ck_assert_double_eq(ds.x[6 + 5], 0.521);
    /* -1/+1 become 0/1; the defining rule holds on every row. */
    ck_assert_int_eq(mdl_labels_compact(&ds, NULL), 2);
    ck_assert_int_eq(ds.n_classes, 2);
    for (size_t i = 0; i < ds.n; i++) {
        const double *x = ds.x + i * 6;
        ck_assert_int_eq(ds.y[i], x[0] + x[2] - x[5] > 0);
    }
    /* Widening pads with zeros and keeps the values. */
    ck_assert_int_eq(mdl_dataset_widen(&ds, 9), 0);
    ck_assert_uint_eq(ds.d, 9);
    ck_assert_double_eq(ds.x[9 + 5], 0.521);
    ck_assert_double_eq(ds.x[9 + 8], 0.0);
    mdl_dataset_fini(&ds);
    /* d_min forces a width. */
    ck_assert_int_eq(mdl_libsvm_load(TX "two-class.svm", 20, &ds, err, sizeof err), 0);
    ck_assert_uint_eq(ds.d, 20);
    mdl_dataset_fini(&ds);
}
END_TEST

START_TEST(test_csv)
{
    mdl_dataset ds, h;
    char err[512] = "";
    ck_assert_msg(mdl_csv_load(TX "blobs.csv.gz", 4, 1, &ds, err, sizeof err) == 0, "%s", err);
    ck_assert_uint_eq(ds.n, 150);
    ck_assert_uint_eq(ds.d, 4);
    ck_assert_int_eq(mdl_labels_compact(&ds, NULL), 3);
    for (size_t i = 0; i < ds.n; i++)
        ck_assert(ds.y[i] >= 0 && ds.y[i] <= 2);
    mdl_dataset_fini(&ds);
    /* Label column first: "a,b,label / 1,2,0 / 3,4,1" read with label 0. */
    ck_assert_int_eq(mdl_csv_load(TX "header.csv", 0, 1, &h, err, sizeof err), 0);
    ck_assert_uint_eq(h.n, 2);
    ck_assert_uint_eq(h.d, 2);
    ck_assert_int_eq(h.y[1], 3);
    ck_assert_double_eq(h.x[2], 4.0);
    ck_assert_double_eq(h.x[3], 1.0);
    /* Labels shared between a training and a test set. */
    mdl_dataset t2;
    ck_assert_int_eq(mdl_csv_load(TX "header.csv", 2, 1, &t2, err, sizeof err), 0);
    ck_assert_int_eq(mdl_labels_compact(&h, &t2), 3);   /* {1, 3} u {0, 1} */
    ck_assert_int_eq(h.y[0], 1);
    ck_assert_int_eq(h.y[1], 2);
    ck_assert_int_eq(t2.y[0], 0);
    ck_assert_int_eq(t2.n_classes, 3);
    mdl_dataset_fini(&t2);
    mdl_dataset_fini(&h);
}
END_TEST

START_TEST(test_text_errors)
{
    static const struct { int csv; const char *path; int col, header; const char *msg; } cases[] = {
        { 0, TX "bad-index.svm", 0, 0,
          TX "bad-index.svm:2: error: feature indices must ascend, got 2 after 2" },
        { 0, TX "bad-label.svm", 0, 0,
          TX "bad-label.svm:1: error: label must be an integer (class), got 0.5" },
        { 0, TX "header.csv", 0, 0,
          TX "header.csv:1: error: expected a label at the start of the line" },
        { 0, TX "nope.svm", 0, 0, TX "nope.svm: error: cannot open: No such file or directory" },
        { 1, TX "ragged.csv", 2, 0, TX "ragged.csv:3: error: has 2 fields, line 1 has 3" },
        { 1, TX "header.csv", 2, 0,
          TX "header.csv:1: error: field 1: expected a finite number, got \"a\" (set "
             "\"header\": true if the first line names the columns)" },
        { 1, TX "header.csv", 3, 1,
          TX "header.csv:2: error: label_column 3 is not among the 3 fields" },
        { 1, TX "two-class.svm", 0, 1,
          TX "two-class.svm:2: error: needs at least 2 fields (features and a label), got 1" },
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        mdl_dataset ds;
        char err[1024] = "";
        const int rc = cases[i].csv
            ? mdl_csv_load(cases[i].path, cases[i].col, cases[i].header, &ds, err, sizeof err)
            : mdl_libsvm_load(cases[i].path, 0, &ds, err, sizeof err);
        ck_assert_int_eq(rc, -1);
        ck_assert_str_eq(err, cases[i].msg);
        ck_assert_ptr_null(ds.x);
    }
}
END_TEST

static void tiny(mdl_dataset *ds, size_t n, size_t d, int C)
{
    memset(ds, 0, sizeof *ds);
    ds->n = n;
    ds->d = d;
    ds->n_classes = C;
    ds->x = malloc(n * d * sizeof *ds->x);
    ds->y = malloc(n * sizeof *ds->y);
    ds->t = NULL;
    for (size_t i = 0; i < n; i++) {
        ds->y[i] = (int)(i % (size_t)C);
        for (size_t j = 0; j < d; j++)
            ds->x[i * d + j] = (double)(i * (j + 1)) + (double)j;
    }
}

START_TEST(test_scale)
{
    mdl_dataset tr, te;
    tiny(&tr, 5, 3, 2);      /* column j: i (j+1) + j, i = 0..4 */
    tiny(&te, 2, 3, 2);
    for (size_t j = 0; j < 3; j++)
        te.x[3 + j] = 100.0;
    tr.x[0 * 3 + 0] = tr.x[1 * 3 + 0] = tr.x[2 * 3 + 0] = tr.x[3 * 3 + 0] = tr.x[4 * 3 + 0] = 7;
    ck_assert_int_eq(mdl_dataset_scale(&tr, &te, MDL_SCALE_MINMAX), 0);
    /* column 1: values 1, 3, 5, 7, 9 -> (v - 1) / 8 */
    for (size_t i = 0; i < 5; i++)
        ck_assert_double_eq_tol(tr.x[i * 3 + 1], (double)(2 * i) / 8.0, 1e-15);
    ck_assert_double_eq(tr.x[0], 0.0);      /* constant column -> 0 */
    ck_assert_double_eq_tol(te.x[3 + 1], (100.0 - 1.0) / 8.0, 1e-13);  /* train statistics */
    mdl_dataset_fini(&tr);
    mdl_dataset_fini(&te);

    tiny(&tr, 5, 3, 2);
    ck_assert_int_eq(mdl_dataset_scale(&tr, NULL, MDL_SCALE_STANDARD), 0);
    for (size_t j = 0; j < 3; j++) {
        double m = 0, v = 0;
        for (size_t i = 0; i < 5; i++)
            m += tr.x[i * 3 + j];
        for (size_t i = 0; i < 5; i++)
            v += (tr.x[i * 3 + j] - m / 5) * (tr.x[i * 3 + j] - m / 5);
        ck_assert_double_eq_tol(m / 5, 0.0, 1e-14);
        ck_assert_double_eq_tol(v / 5, 1.0, 1e-14);
    }
    mdl_dataset_fini(&tr);
}
END_TEST

START_TEST(test_split)
{
    mdl_dataset all, tr, te;
    tiny(&all, 10, 2, 3);
    ck_assert_int_eq(mdl_dataset_split(&all, 0.3, 4, &tr, &te), 0);
    ck_assert_ptr_null(all.x);
    ck_assert_uint_eq(te.n, 3);
    ck_assert_uint_eq(tr.n, 7);
    /* Every original row appears once; training rows keep file order. */
    int seen[10] = { 0 };
    for (size_t i = 0; i < 10; i++) {
        const mdl_dataset *s = i < 7 ? &tr : &te;
        const size_t k = i < 7 ? i : i - 7;
        const size_t row = (size_t)s->x[k * 2];   /* x[.,0] = row index */
        ck_assert_uint_lt(row, 10);
        ck_assert_int_eq(s->y[k], (int)(row % 3));
        seen[row]++;
        if (i > 0 && i < 7)
            ck_assert_double_lt(tr.x[(k - 1) * 2], tr.x[k * 2]);
    }
    for (size_t i = 0; i < 10; i++)
        ck_assert_int_eq(seen[i], 1);
    mdl_dataset_fini(&tr);
    mdl_dataset_fini(&te);
    tiny(&all, 10, 2, 3);
    ck_assert_int_eq(mdl_dataset_split(&all, 0.01, 4, &tr, &te), -1);
    ck_assert_ptr_nonnull(all.x);
    mdl_dataset_fini(&all);
}
END_TEST

/* Each index of 0 .. n-1 appears exactly once. */
static void assert_exact_cover(const mdl_partition *p, size_t n)
{
    unsigned char *seen = calloc(n, 1);
    ck_assert_uint_eq(p->off[0], 0);
    ck_assert_uint_eq(p->off[p->n_nodes], n);
    for (int i = 0; i < p->n_nodes; i++)
        ck_assert_uint_le(p->off[i], p->off[i + 1]);
    for (size_t k = 0; k < n; k++) {
        ck_assert_uint_lt(p->idx[k], n);
        ck_assert_msg(!seen[p->idx[k]], "sample %zu assigned twice", p->idx[k]);
        seen[p->idx[k]] = 1;
    }
    free(seen);
}

/* Labels: n samples, class i % C. */
static void labels_only(mdl_dataset *ds, size_t n, int C)
{
    tiny(ds, n, 1, C);
}

static void check_kind(const mdl_partition_spec *sp, const mdl_dataset *ds)
{
    mdl_partition a, b, c;
    char err[256];
    ck_assert_msg(mdl_partition_build(sp, ds, 42, &a, err, sizeof err) == 0, "%s", err);
    ck_assert_int_eq(mdl_partition_build(sp, ds, 42, &b, err, sizeof err), 0);
    ck_assert_int_eq(mdl_partition_build(sp, ds, 43, &c, err, sizeof err), 0);
    assert_exact_cover(&a, ds->n);
    assert_exact_cover(&c, ds->n);
    ck_assert_int_eq(memcmp(a.off, b.off, ((size_t)a.n_nodes + 1) * sizeof(size_t)), 0);
    ck_assert_int_eq(memcmp(a.idx, b.idx, ds->n * sizeof(size_t)), 0);
    ck_assert_int_ne(memcmp(a.idx, c.idx, ds->n * sizeof(size_t)), 0);
    for (int i = 0; i < a.n_nodes; i++)
        ck_assert_uint_ge(a.off[i + 1] - a.off[i], sp->min_samples);
    mdl_partition_fini(&a);
    mdl_partition_fini(&b);
    mdl_partition_fini(&c);
}

START_TEST(test_partition_kinds_cover)
{
    mdl_dataset ds;
    labels_only(&ds, 2000, 10);
    mdl_partition_spec sp[] = {
        { .kind = MDL_PART_IID, .n_nodes = 7, .min_samples = 8 },
        { .kind = MDL_PART_DIRICHLET, .n_nodes = 8, .alpha = 0.1, .min_samples = 8 },
        { .kind = MDL_PART_DIRICHLET, .n_nodes = 8, .alpha = 100, .min_samples = 8 },
        { .kind = MDL_PART_SHARDS, .n_nodes = 7, .shards_per_node = 2, .min_samples = 8 },
        { .kind = MDL_PART_QUANTITY, .n_nodes = 8, .exponent = 1.0, .min_samples = 8 },
    };
    for (size_t i = 0; i < sizeof sp / sizeof sp[0]; i++)
        check_kind(&sp[i], &ds);
    mdl_dataset_fini(&ds);
}
END_TEST

START_TEST(test_partition_properties)
{
    mdl_dataset ds;
    labels_only(&ds, 2000, 10);
    char err[256];
    mdl_partition p;
    mdl_partition_stats st;

    /* Shards: 20 shards of 100 sorted-by-label samples = exactly one class
     * each, so every node holds at most k = 2 classes, 200 samples. */
    mdl_partition_spec sh = { .kind = MDL_PART_SHARDS, .n_nodes = 10, .shards_per_node = 2,
                              .min_samples = 1 };
    ck_assert_int_eq(mdl_partition_build(&sh, &ds, 1, &p, err, sizeof err), 0);
    ck_assert_int_eq(mdl_partition_stats_compute(&p, &ds, &st), 0);
    ck_assert_uint_eq(st.samples_min, 200);
    ck_assert_uint_eq(st.samples_max, 200);
    ck_assert_int_ge(st.classes_min, 1);
    ck_assert_int_le(st.classes_max, 2);
    mdl_partition_fini(&p);

    /* Dirichlet: small alpha concentrates each class on few nodes, large
     * alpha approaches IID (every node sees every class). */
    mdl_partition_spec di = { .kind = MDL_PART_DIRICHLET, .n_nodes = 10, .alpha = 0.05,
                              .min_samples = 1 };
    ck_assert_int_eq(mdl_partition_build(&di, &ds, 1, &p, err, sizeof err), 0);
    ck_assert_int_eq(mdl_partition_stats_compute(&p, &ds, &st), 0);
    ck_assert_double_lt(st.classes_mean, 5.0);
    mdl_partition_fini(&p);
    di.alpha = 1000;
    ck_assert_int_eq(mdl_partition_build(&di, &ds, 1, &p, err, sizeof err), 0);
    ck_assert_int_eq(mdl_partition_stats_compute(&p, &ds, &st), 0);
    ck_assert_int_eq(st.classes_min, 10);
    ck_assert_uint_ge(st.samples_min, 150);
    ck_assert_uint_le(st.samples_max, 250);
    ck_assert_double_eq(st.samples_mean, 200.0);
    mdl_partition_fini(&p);

    /* Quantity skew: sizes spread far more than IID's. */
    mdl_partition_spec qu = { .kind = MDL_PART_QUANTITY, .n_nodes = 10, .exponent = 0.8,
                              .min_samples = 10 };
    ck_assert_int_eq(mdl_partition_build(&qu, &ds, 3, &p, err, sizeof err), 0);
    ck_assert_int_eq(mdl_partition_stats_compute(&p, &ds, &st), 0);
    ck_assert_uint_ge(st.samples_min, 10);
    ck_assert_uint_gt(st.samples_max, 2 * st.samples_min);
    mdl_partition_fini(&p);

    /* Impossible requests say why. */
    di.alpha = 0.01;
    di.min_samples = 190;
    ck_assert_int_eq(mdl_partition_build(&di, &ds, 1, &p, err, sizeof err), -1);
    ck_assert_str_eq(err, "dirichlet partition with alpha 0.01 left a node with fewer than 190 "
                          "samples in 1000 draws: raise alpha or lower the batch");
    ck_assert_ptr_null(p.idx);
    sh.shards_per_node = 300;
    ck_assert_int_eq(mdl_partition_build(&sh, &ds, 1, &p, err, sizeof err), -1);
    ck_assert_str_eq(err, "shards partition needs at least nodes * shards_per_node (3000) "
                          "samples, got 2000");
    qu.min_samples = 201;
    ck_assert_int_eq(mdl_partition_build(&qu, &ds, 1, &p, err, sizeof err), -1);
    ck_assert_str_eq(err, "quantity partition needs at least nodes * 201 = 2010 samples, "
                          "got 2000");
    mdl_dataset_fini(&ds);
}
END_TEST

static Suite *datasets_suite(void)
{
    Suite *s = suite_create("datasets");
    TCase *idx = tcase_create("idx");
    tcase_add_test(idx, test_idx_real_samples);
    tcase_add_test(idx, test_idx_errors);
    tcase_add_test(idx, test_libsvm);
    tcase_add_test(idx, test_csv);
    tcase_add_test(idx, test_text_errors);
    suite_add_tcase(s, idx);
    TCase *prep = tcase_create("prep");
    tcase_add_test(prep, test_scale);
    tcase_add_test(prep, test_split);
    suite_add_tcase(s, prep);
    TCase *part = tcase_create("partitions");
    tcase_add_test(part, test_partition_kinds_cover);
    tcase_add_test(part, test_partition_properties);
    suite_add_tcase(s, part);
    return s;
}

int main(void)
{
    SRunner *sr = srunner_create(datasets_suite());
    srunner_run_all(sr, CK_NORMAL);
    const int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
