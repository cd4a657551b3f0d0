/* test_util.h -- what the whole-run Check suites share: load a scenario
 * from a JSON string, prepare and run it through the runner, expect an
 * exact preparation error, and the small synthetic problem and plain-SGD
 * bar the convergence tests use.  Header-only (static functions), included
 * by test files only.
 */
#ifndef TEST_UTIL_H
#define TEST_UTIL_H

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "run.h"
#include "scn.h"

/* A 3-class softmax problem on 4096 samples, lognormal step times with node
 * 0 three times slower, 1 ms links at 10 MB/s. */
static const char *const problem =
    "\"model\": {\"kind\": \"softmax\", \"l2\": 0.0001},"
    " \"data\": {\"train\": 4096, \"test\": 1024, \"features\": 10, \"classes\": 3,"
    " \"separation\": 1.5},"
    " \"compute\": {\"step_time_s\": 0.01, \"noise\": {\"dist\": \"lognormal\", \"sigma\": 0.5},"
    "   \"groups\": [{\"nodes\": [0], \"slowdown\": 3}]},"
    " \"network\": {\"latency_s\": 0.001, \"bandwidth_Bps\": 1e7}";

/* nodes.csv's value of column `name` for `node` in the run directory dir
 * (a whole-run test's reader, by column name). */
static inline double test_nodes_col(const char *dir, int node, const char *name)
{
    char path[512], head[1024], row[1024];
    snprintf(path, sizeof path, "%s/nodes.csv", dir);
    FILE *f = fopen(path, "r");
    ck_assert_ptr_nonnull(f);
    ck_assert_ptr_nonnull(fgets(head, sizeof head, f));
    for (int i = 0; i <= node; i++)
        ck_assert_ptr_nonnull(fgets(row, sizeof row, f));
    fclose(f);
    char *hs, *rs, *h = strtok_r(head, ",\n", &hs), *v = strtok_r(row, ",\n", &rs);
    while (h && v && strcmp(h, name) != 0) {
        h = strtok_r(NULL, ",\n", &hs);
        v = strtok_r(NULL, ",\n", &rs);
    }
    ck_assert_msg(h && v, "no column %s", name);
    return strtod(v, NULL);
}

/* Removes a run directory holding metrics.csv, nodes.csv and run.json. */
static inline void test_rm_run_dir(const char *dir)
{
    char p[512];
    const char *files[] = { "metrics.csv", "nodes.csv", "run.json" };
    for (int k = 0; k < 3; k++) {
        snprintf(p, sizeof p, "%s/%s", dir, files[k]);
        unlink(p);
    }
    rmdir(dir);
}

static inline int prepare_json(const char *json, scn_scenario *s, run_sim **r, scn_error *err)
{
    if (scn_load_string(json, "test.json", NULL, 0, s, err) != 0)
        return -1;
    *r = run_prepare(s, err);
    if (!*r) {
        scn_fini(s);
        return -1;
    }
    return 0;
}

static inline void run_json(const char *json, const run_options *opt, run_result *res)
{
    scn_scenario s;
    scn_error err;
    run_sim *r;
    ck_assert_msg(prepare_json(json, &s, &r, &err) == 0, "%s", err.msg);
    char msg[1024];
    ck_assert_msg(run_execute(r, opt, res, msg, sizeof msg) == 0, "%s", msg);
    run_destroy(r);
    scn_fini(&s);
}

static inline void expect_prepare_error(const char *json, const char *msg)
{
    scn_scenario s;
    scn_error err;
    run_sim *r;
    ck_assert_int_eq(prepare_json(json, &s, &r, &err), -1);
    ck_assert_str_eq(err.msg, msg);
}

/* Train loss of plain minibatch SGD on one node, 400 steps: the bar each
 * protocol must reach on `problem`. */
static inline double sgd_reference_loss(void)
{
    char json[2048];
    snprintf(json, sizeof json,
        "{\"seed\": 3, \"nodes\": 1, %s, \"topology\": {\"kind\": \"ring\"},"
        " \"algorithm\": {\"name\": \"allreduce\", \"lr\": 0.1, \"batch\": 32},"
        " \"stop\": {\"steps\": 400}}", problem);
    run_result res;
    run_json(json, NULL, &res);
    return res.last.train_loss;
}

/* `alg` may carry more keys after the name: "local-sgd\", \"sync\": \"gossip". */
static inline void check_converges(const char *alg, const char *topo)
{
    double bar = sgd_reference_loss();
    char json[2048];
    snprintf(json, sizeof json,
        "{\"seed\": 3, \"nodes\": 8, %s, \"topology\": %s,"
        " \"algorithm\": {\"name\": \"%s\", \"lr\": 0.1, \"batch\": 32},"
        " \"stop\": {\"steps\": 400}}", problem, topo, alg);
    run_result res;
    run_json(json, NULL, &res);
    ck_assert_int_eq(res.status, RUN_OK);
    ck_assert_str_eq(res.stop_reason, "steps");
    /* the initial loss is log(3) = 1.0986; SGD gets far below it */
    ck_assert_msg(bar < 0.5, "reference SGD loss %.4f", bar);
    ck_assert_msg(res.last.train_loss < bar + 0.02, "%s: loss %.4f, SGD reaches %.4f", alg,
                  res.last.train_loss, bar);
    ck_assert_msg(res.last.test_accuracy > 0.8, "%s: accuracy %.4f", alg, res.last.test_accuracy);
}

/* The value of the algorithm's figure `key` in res (run.json's
 * algorithm_stats); fails the test when absent. */
static inline double stat_of(const run_result *res, const char *key)
{
    for (int i = 0; i < res->n_stats; i++)
        if (strcmp(res->stat_keys[i], key) == 0)
            return res->stat_values[i];
    ck_abort_msg("no algorithm stat \"%s\"", key);
    return 0;
}

#endif
