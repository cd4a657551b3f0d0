/* test_sweep_data.c -- a sweep loads each distinct data set once: the
 * plan's data cache counts its loads (one for a learning-rate grid, one per
 * value of a grid over what decides the data: data.seed for generated data
 * or a seeded split, data.train for a file, none for data.seed over IDX
 * files, which it does not draw), and the runs of a sweep, which borrow the
 * planned data in their forked workers, write the same metrics.csv byte for
 * byte as `dtsim run` of the same point, which loads its own.
 */
#include "run.h"
#include "swp.h"

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "test_shell.h"

#define DATA DTSIM_SOURCE_DIR "/tests/data"
#define IDX_SCENARIO DATA "/fmnist-small.json"
#define QUICKSTART DTSIM_SOURCE_DIR "/scenarios/quickstart.json"

/* A CSV scenario split by a seeded test_fraction, written to tmpdir/csv.json. */
static void write_csv_scenario(void)
{
    char path[512];
    snprintf(path, sizeof path, "%s/csv.json", tmpdir);
    FILE *f = fopen(path, "w");
    ck_assert_ptr_nonnull(f);
    fprintf(f, "{\"seed\": 3, \"nodes\": 3, \"model\": {\"kind\": \"softmax\"},"
               " \"data\": {\"kind\": \"csv\", \"train_file\": \"%s/text/blobs.csv.gz\","
               "  \"header\": true, \"label_column\": 4, \"scale\": \"standard\","
               "  \"test_fraction\": 0.25},"
               " \"algorithm\": {\"name\": \"dpsgd\", \"lr\": 0.2, \"batch\": 8},"
               " \"stop\": {\"steps\": 40}, \"metrics\": {\"every_s\": 0.01}}\n", DATA);
    ck_assert_int_eq(fclose(f), 0);
}

/* The loads the plan of scenario with one --grid axis (and replicates) made. */
static size_t plan_loads(const char *scenario, const char *axis, int replicates)
{
    swp_axis_arg axes[] = { { axis, 0 } };
    swp_spec spec = { .scenario = scenario, .axes = axes, .n_axes = 1,
                      .replicates = replicates };
    swp_plan pl;
    char err[4096];
    ck_assert_msg(swp_plan_build(&spec, &pl, err, sizeof err) == 0, "%s", err);
    ck_assert_ptr_nonnull(pl.data);
    size_t n = run_data_cache_loads(pl.data);
    swp_plan_fini(&pl);
    return n;
}

START_TEST(test_planning_loads_each_data_set_once)
{
    make_tmp();
    write_csv_scenario();
    char csv[512];
    snprintf(csv, sizeof csv, "%s/csv.json", tmpdir);
    /* IDX files: the learning rate, the seed and data.seed (which IDX
     * data does not draw with) share one load; data.train cuts differently */
    ck_assert_uint_eq(plan_loads(IDX_SCENARIO, "algorithm.lr=0.05,0.1,0.2", 3), 1);
    ck_assert_uint_eq(plan_loads(IDX_SCENARIO, "data.seed=1,2,3", 1), 1);
    ck_assert_uint_eq(plan_loads(IDX_SCENARIO, "seed=1,2,3,4", 1), 1);
    ck_assert_uint_eq(plan_loads(IDX_SCENARIO, "data.train=100,200,100", 1), 2);
    ck_assert_uint_eq(plan_loads(IDX_SCENARIO, "data.scale=minmax,standard,none", 1), 3);
    ck_assert_uint_eq(plan_loads(IDX_SCENARIO, "nodes=2,4,6", 1), 1);
    /* a seeded split draws with data.seed: one load per value */
    ck_assert_uint_eq(plan_loads(csv, "algorithm.lr=0.05,0.1,0.2", 1), 1);
    ck_assert_uint_eq(plan_loads(csv, "data.seed=1,2,3", 1), 3);
    ck_assert_uint_eq(plan_loads(csv, "data.test_fraction=0.25,0.5", 1), 2);
    /* generated data: as many loads as distinct data seeds */
    ck_assert_uint_eq(plan_loads(QUICKSTART, "algorithm.lr=0.05,0.1,0.2", 1), 1);
    ck_assert_uint_eq(plan_loads(QUICKSTART, "data.seed=1,2,1", 1), 2);
    ck_assert_uint_eq(plan_loads(QUICKSTART, "data.features=8,16", 1), 2);
    remove_tmp();
}
END_TEST

/* Run k of sweep folder dir (its runs/ entry starting with the index)
 * against `dtsim run` of the same point: metrics.csv byte for byte. */
static void expect_same_as_run(const char *dir, const char *prefix, const char *scenario,
                               const char *sets)
{
    ck_assert_int_eq(sh("%s run %s %s --quiet -o %s/single", DTSIM_BINARY, scenario, sets,
                        tmpdir), 0);
    char *single = slurpf("%s/single/metrics.csv", tmpdir);
    ck_assert_int_eq(sh("cp %s/runs/%s*/metrics.csv %s/swept.csv", dir, prefix, tmpdir), 0);
    char *swept = slurpf("%s/swept.csv", tmpdir);
    ck_assert_str_eq(single, swept);
    free(single);
    free(swept);
    ck_assert_int_eq(sh("rm -rf %s/single", tmpdir), 0);
}

START_TEST(test_borrowed_data_runs_as_loaded)
{
    make_tmp();
    write_csv_scenario();
    /* two splits: the second run must borrow its own split, not the first */
    ck_assert_int_eq(sh("%s sweep %s/csv.json --grid data.seed=1,2 -j 1 --quiet -o %s/csv",
                        DTSIM_BINARY, tmpdir, tmpdir), 0);
    char scen[512], dir[512];
    snprintf(scen, sizeof scen, "%s/csv.json", tmpdir);
    snprintf(dir, sizeof dir, "%s/csv", tmpdir);
    expect_same_as_run(dir, "000_", scen, "--set data.seed=1");
    expect_same_as_run(dir, "001_", scen, "--set data.seed=2");
    /* IDX files scaled two ways, and two learning rates on one load */
    ck_assert_int_eq(sh("%s sweep %s --grid data.scale=standard,minmax "
                        "--grid algorithm.lr=0.05,0.2 --set stop.steps=30 -j 2 --quiet -o %s/idx",
                        DTSIM_BINARY, IDX_SCENARIO, tmpdir), 0);
    snprintf(dir, sizeof dir, "%s/idx", tmpdir);
    expect_same_as_run(dir, "000_", IDX_SCENARIO,
                       "--set stop.steps=30 --set data.scale=standard --set algorithm.lr=0.05");
    expect_same_as_run(dir, "003_", IDX_SCENARIO,
                       "--set stop.steps=30 --set data.scale=minmax --set algorithm.lr=0.2");
    remove_tmp();
}
END_TEST

/* A bad point found with borrowed data says what a fresh load says. */
START_TEST(test_borrowed_data_checks_nodes)
{
    /* the file's 300 samples (data.train 0: all), known only once loaded */
    swp_axis_arg axes[] = { { "nodes=4,400", 0 } };
    swp_spec spec = { .scenario = IDX_SCENARIO, .axes = axes, .n_axes = 1, .replicates = 1 };
    swp_plan pl;
    char err[4096];
    ck_assert_int_eq(swp_plan_build(&spec, &pl, err, sizeof err), -1);
    ck_assert_msg(strstr(err, "300 training samples for 400 nodes: every node must hold data")
                  != NULL, "%s", err);
    ck_assert_msg(strstr(err, "--grid nodes=400") != NULL, "%s", err);
}
END_TEST

static Suite *sweep_data_suite(void)
{
    Suite *s = suite_create("sweep_data");
    TCase *tc = tcase_create("core");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, test_planning_loads_each_data_set_once);
    tcase_add_test(tc, test_borrowed_data_runs_as_loaded);
    tcase_add_test(tc, test_borrowed_data_checks_nodes);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    SRunner *sr = srunner_create(sweep_data_suite());
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
