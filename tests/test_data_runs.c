/* test_data_runs.c -- whole runs on real data and the model, data and
 * optimizer keys as the runner uses them: a few hundred Fashion-MNIST
 * samples (tests/data/fmnist, paths relative to the scenario file) train
 * past a fixed accuracy; a missing or corrupt data file is an error naming
 * the file with exit status 2; run.json carries the partition statistics;
 * node_metrics.csv agrees with metrics.csv where the protocol makes every
 * node identical; a learning-rate schedule is applied per node inside the
 * protocol.  Runs stay small (well under a second each).
 */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "run.h"
#include "scn.h"

#include "test_shell.h"

#define SMALL DTSIM_SOURCE_DIR "/tests/data/fmnist-small.json"

/* Loads path with overrides and runs it; out_dir may be NULL. */
static void run_file(const char *path, const char *const *ov, size_t n_ov, const char *out_dir,
                     run_result *res)
{
    scn_scenario s;
    scn_error err;
    ck_assert_msg(scn_load(path, ov, n_ov, &s, &err) == 0, "%s", err.msg);
    run_sim *r = run_prepare(&s, &err);
    ck_assert_msg(r != NULL, "%s", err.msg);
    run_options opt = { .out_dir = out_dir };
    char msg[1024];
    ck_assert_msg(run_execute(r, &opt, res, msg, sizeof msg) == 0, "%s", msg);
    run_destroy(r);
    scn_fini(&s);
}

/* The message run_prepare gives for path with overrides. */
static void prepare_error(const char *path, const char *const *ov, size_t n_ov, char *msg,
                          size_t size)
{
    scn_scenario s;
    scn_error err;
    ck_assert_msg(scn_load(path, ov, n_ov, &s, &err) == 0, "%s", err.msg);
    run_sim *r = run_prepare(&s, &err);
    ck_assert_ptr_null(r);
    snprintf(msg, size, "%s", err.msg);
    scn_fini(&s);
}

START_TEST(test_fmnist_small_learns)
{
    run_result res;
    run_file(SMALL, NULL, 0, NULL, &res);
    ck_assert_int_eq(res.status, RUN_OK);
    ck_assert_uint_eq(res.n_params, 7850);
    /* 4 nodes x 150 steps x 8 samples = 16 epochs of 300 samples; chance
     * is 0.1 and the initial loss log(10) = 2.303. */
    ck_assert_msg(res.last.test_accuracy >= 0.7, "accuracy %g", res.last.test_accuracy);
    ck_assert_msg(res.last.train_loss < 0.8, "train loss %g", res.last.train_loss);

    /* The same with an MLP and tanh. */
    const char *mlp[] = { "model={\"kind\": \"mlp\", \"hidden\": [32], \"activation\": \"tanh\"}",
                          "algorithm.lr=0.05" };
    run_file(SMALL, mlp, 2, NULL, &res);
    ck_assert_uint_eq(res.n_params, 784 * 32 + 32 + 32 * 10 + 10);
    ck_assert_msg(res.last.test_accuracy >= 0.7, "mlp accuracy %g", res.last.test_accuracy);
}
END_TEST

START_TEST(test_data_file_errors)
{
    char msg[1024], want[1024];
    const char *missing[] = { "data.test_labels=\"fmnist/nope.gz\"" };
    prepare_error(SMALL, missing, 1, msg, sizeof msg);
    ck_assert_str_eq(msg, DTSIM_SOURCE_DIR "/tests/data/fmnist/nope.gz: error: cannot open: "
                          "No such file or directory");
    const char *swapped[] = { "data.train_images=\"fmnist/train-labels-300.gz\"" };
    prepare_error(SMALL, swapped, 1, msg, sizeof msg);
    ck_assert_str_eq(msg, DTSIM_SOURCE_DIR "/tests/data/fmnist/train-labels-300.gz: error: IDX "
                          "magic 0x00000803 expected, got 0x00000801");
    /* Absolute paths are taken as they are. */
    const char *abs_[] = { "data.test_images=\"/nonexistent/t10k.gz\"" };
    prepare_error(SMALL, abs_, 1, msg, sizeof msg);
    ck_assert_str_eq(msg, "/nonexistent/t10k.gz: error: cannot open: No such file or directory");
    const char *fm[] = { "data={\"kind\": \"fashion-mnist\", \"dir\": \"/nonexistent\"}" };
    prepare_error(SMALL, fm, 1, msg, sizeof msg);
    ck_assert_str_eq(msg, "/nonexistent/train-images-idx3-ubyte.gz: error: cannot open: "
                          "No such file or directory");
    /* A partition that cannot give every node a batch. */
    const char *skew[] = { "data.alpha=0.001", "algorithm.batch=70" };
    prepare_error(SMALL, skew, 2, msg, sizeof msg);
    snprintf(want, sizeof want, "%s: /data/partition: error: dirichlet partition with alpha "
             "0.001 left a node with fewer than 70 samples in 1000 draws: raise alpha or "
             "lower the batch (algorithm.batch is 70)", SMALL);
    ck_assert_str_eq(msg, want);
    const char *logi[] = { "model.kind=logistic" };
    prepare_error(SMALL, logi, 1, msg, sizeof msg);
    snprintf(want, sizeof want, "%s: /model/kind: error: model \"logistic\" needs 2 classes, "
             "the data has 10", SMALL);
    ck_assert_str_eq(msg, want);

    /* Through the command line: exit status 2, the message on stderr. */
    make_tmp();
    char cmd[2048];
    snprintf(cmd, sizeof cmd, "%s run %s -o %s/out --set 'data.test_labels=\"fmnist/nope.gz\"' "
             "2>%s/err", DTSIM_BINARY, SMALL, tmpdir, tmpdir);
    int st = system(cmd);
    ck_assert(WIFEXITED(st));
    ck_assert_int_eq(WEXITSTATUS(st), 2);
    snprintf(cmd, sizeof cmd, "%s/err", tmpdir);
    char *err = slurp_path(cmd);
    ck_assert_str_eq(err, DTSIM_SOURCE_DIR "/tests/data/fmnist/nope.gz: error: cannot open: "
                          "No such file or directory\n");
    free(err);
    snprintf(cmd, sizeof cmd, "%s/out/run.json", tmpdir);
    ck_assert_int_ne(access(cmd, F_OK), 0);
    remove_tmp();
}
END_TEST

START_TEST(test_run_json_partition_and_node_metrics)
{
    make_tmp();
    char out[512], path[600];
    snprintf(out, sizeof out, "%s/run", tmpdir);
    const char *ov[] = { "algorithm.name=allreduce", "metrics.per_node=true",
                         "metrics.test_samples=50",
                         "data={\"kind\": \"idx\", \"partition\": \"shards\", "
                         "\"shards_per_node\": 2, "
                         "\"train_images\": \"fmnist/train-images-300.gz\", "
                         "\"train_labels\": \"fmnist/train-labels-300.gz\", "
                         "\"test_images\": \"fmnist/test-images-100.gz\", "
                         "\"test_labels\": \"fmnist/test-labels-100.gz\"}" };
    run_result res;
    run_file(SMALL, ov, 4, out, &res);
    snprintf(path, sizeof path, "%s/run.json", out);
    char *js = slurp_path(path);
    /* 300 samples, 8 shards of 37 or 38 sorted by label, 2 per node: 74 to
     * 76 samples each; a shard of at most 38 consecutive labels spans at
     * most 3 classes (every class holds 25..33 samples), so at most 6 per
     * node where IID would give all 10. */
    ck_assert_ptr_nonnull(strstr(js, "\"partition\": {\n    \"kind\": \"shards\",\n"
                                     "    \"samples_min\": 74,\n    \"samples_mean\": 75,\n"
                                     "    \"samples_max\": 76,\n"));
    const char *cm = strstr(js, "\"classes_max\": ");
    ck_assert_ptr_nonnull(cm);
    ck_assert_int_le(atoi(cm + 15), 6);
    ck_assert_ptr_nonnull(strstr(js, "\"test_evaluated\": 50"));
    free(js);

    /* All-reduce keeps every node identical: each node's row equals the
     * average model's row at the same instant. */
    snprintf(path, sizeof path, "%s/metrics.csv", out);
    char *m = slurp_path(path);
    snprintf(path, sizeof path, "%s/node_metrics.csv", out);
    char *nm = slurp_path(path);
    ck_assert_str_eq(strtok(nm, "\n"), "time_s,node,steps,test_loss,test_accuracy");
    char *save = NULL, *line = strtok_r(m, "\n", &save);   /* header */
    int rows = 0;
    while ((line = strtok_r(NULL, "\n", &save)) != NULL) {
        double t, tl, acc, x;
        unsigned long long steps;
        ck_assert_int_eq(sscanf(line, "%lf,%llu,%lf,%lf,%lf,%lf", &t, &steps, &x, &x, &tl,
                                &acc), 6);
        for (int i = 0; i < 4; i++) {
            char *nl = strtok(NULL, "\n");
            double nt, ntl, nacc;
            int node;
            unsigned long long ns;
            ck_assert_ptr_nonnull(nl);
            ck_assert_int_eq(sscanf(nl, "%lf,%d,%llu,%lf,%lf", &nt, &node, &ns, &ntl, &nacc), 5);
            ck_assert_double_eq(nt, t);
            ck_assert_int_eq(node, i);
            ck_assert_double_eq(ntl, tl);
            ck_assert_double_eq(nacc, acc);
        }
        rows++;
    }
    ck_assert_int_gt(rows, 3);
    free(m);
    free(nm);
    remove_tmp();
}
END_TEST

/* A cosine schedule over one update: the learning rate is 0 from the
 * second update on, so under all-reduce (no mixing) the model is frozen
 * after step 1 and a run of 2 steps ends where a run of 30 does. */
START_TEST(test_schedule_applied_per_node)
{
    const char *two[] = { "algorithm.name=allreduce", "stop={\"steps\": 2}",
                          "optimizer={\"schedule\": \"cosine\", \"total_steps\": 1}" };
    const char *thirty[] = { "algorithm.name=allreduce", "stop={\"steps\": 30}",
                             "optimizer={\"schedule\": \"cosine\", \"total_steps\": 1}" };
    const char *plain[] = { "algorithm.name=allreduce", "stop={\"steps\": 30}",
                            "optimizer={}" };
    run_result a, b, c;
    run_file(SMALL, two, 3, NULL, &a);
    run_file(SMALL, thirty, 3, NULL, &b);
    run_file(SMALL, plain, 3, NULL, &c);
    ck_assert_double_eq(a.last.test_loss, b.last.test_loss);
    ck_assert_double_eq(a.last.train_loss, b.last.train_loss);
    ck_assert_double_lt(c.last.train_loss, b.last.train_loss - 0.1);
}
END_TEST

/* Runs a scenario given as text, as if it were a file in tests/data. */
static void run_text(const char *json, run_result *res)
{
    scn_scenario s;
    scn_error err;
    ck_assert_msg(scn_load_string(json, DTSIM_SOURCE_DIR "/tests/data/inline.json", NULL, 0, &s,
                                  &err) == 0, "%s", err.msg);
    run_sim *r = run_prepare(&s, &err);
    ck_assert_msg(r != NULL, "%s", err.msg);
    char msg[1024];
    ck_assert_msg(run_execute(r, NULL, res, msg, sizeof msg) == 0, "%s", msg);
    run_destroy(r);
    scn_fini(&s);
}

/* LIBSVM (labels -1/+1, sparse rows, split off a seeded quarter for
 * testing) and CSV (gzipped, header, label in the last column): both
 * problems are nearly separable, so a few epochs classify the held-out
 * samples almost perfectly. */
START_TEST(test_text_data_runs)
{
    run_result res;
    run_text("{\"nodes\": 2, \"model\": {\"kind\": \"logistic\", \"l2\": 0},"
             " \"data\": {\"kind\": \"libsvm\", \"train_file\": \"text/two-class.svm\","
             "  \"test_fraction\": 0.25},"
             " \"algorithm\": {\"name\": \"allreduce\", \"lr\": 0.5, \"batch\": 16},"
             " \"stop\": {\"steps\": 200}}", &res);
    ck_assert_uint_eq(res.n_params, 7);
    ck_assert_msg(res.last.test_accuracy >= 0.9, "libsvm accuracy %g", res.last.test_accuracy);
    run_text("{\"nodes\": 3, \"model\": {\"kind\": \"softmax\"},"
             " \"data\": {\"kind\": \"csv\", \"train_file\": \"text/blobs.csv.gz\","
             "  \"header\": true, \"label_column\": 4, \"scale\": \"standard\"},"
             " \"algorithm\": {\"name\": \"dpsgd\", \"lr\": 0.2, \"batch\": 8},"
             " \"stop\": {\"steps\": 100}}", &res);
    ck_assert_uint_eq(res.n_params, 4 * 3 + 3);
    ck_assert_msg(res.last.test_accuracy >= 0.9, "csv accuracy %g", res.last.test_accuracy);
}
END_TEST

/* Linear regression on generated data with target noise sd 0.1: the
 * test loss (half the mean squared error) falls to the noise floor
 * 0.1^2 / 2 = 0.005, and a logistic problem with known weights is
 * learned by the binary model. */
START_TEST(test_generated_linear_runs)
{
    run_result res;
    run_text("{\"nodes\": 4, \"model\": {\"kind\": \"linear\", \"l2\": 0},"
             " \"data\": {\"kind\": \"synthetic-regression\", \"train\": 2000, \"test\": 2000,"
             "  \"features\": 8, \"noise\": 0.1, \"partition\": \"quantity\"},"
             " \"algorithm\": {\"name\": \"allreduce\", \"lr\": 0.2, \"batch\": 16},"
             " \"optimizer\": {\"schedule\": \"cosine\"},"
             " \"stop\": {\"steps\": 300}}", &res);
    ck_assert(isnan(res.last.test_accuracy));
    ck_assert_msg(res.last.test_loss > 0.004 && res.last.test_loss < 0.006, "test loss %g",
                  res.last.test_loss);
    run_text("{\"nodes\": 4, \"model\": {\"kind\": \"logistic\", \"l2\": 0},"
             " \"data\": {\"kind\": \"synthetic-logistic\", \"train\": 2000, \"test\": 2000,"
             "  \"features\": 8, \"separation\": 8},"
             " \"algorithm\": {\"name\": \"dpsgd\", \"lr\": 0.5, \"batch\": 16},"
             " \"stop\": {\"steps\": 300}}", &res);
    ck_assert_msg(res.last.test_accuracy > 0.9, "accuracy %g", res.last.test_accuracy);
}
END_TEST

static Suite *data_runs_suite(void)
{
    Suite *s = suite_create("data_runs");
    TCase *tc = tcase_create("runs");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, test_fmnist_small_learns);
    tcase_add_test(tc, test_data_file_errors);
    tcase_add_test(tc, test_run_json_partition_and_node_metrics);
    tcase_add_test(tc, test_schedule_applied_per_node);
    tcase_add_test(tc, test_text_data_runs);
    tcase_add_test(tc, test_generated_linear_runs);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    SRunner *sr = srunner_create(data_runs_suite());
    srunner_run_all(sr, CK_NORMAL);
    const int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
