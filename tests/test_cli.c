/* test_cli.c -- the dtsim command as a user runs it: the quickstart twice
 * gives byte-identical CSV; a bad scenario exits 2 with the loader's
 * message and writes nothing; validate and --set behave as documented;
 * outputs appear only under their final names.
 */
#include <check.h>
#include <glob.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "test_shell.h"

#define QUICKSTART DTSIM_SOURCE_DIR "/scenarios/quickstart.json"

START_TEST(test_quickstart_deterministic)
{
    make_tmp();
    ck_assert_int_eq(sh("%s run %s -o %s/a --quiet", DTSIM_BINARY, QUICKSTART, tmpdir), 0);
    ck_assert_int_eq(sh("%s run %s -o %s/b --quiet", DTSIM_BINARY, QUICKSTART, tmpdir), 0);
    char a[512], b[512];
    snprintf(a, sizeof a, "%s/a/metrics.csv", tmpdir);
    snprintf(b, sizeof b, "%s/b/metrics.csv", tmpdir);
    ck_assert(same_file(a, b));
    snprintf(a, sizeof a, "%s/a/nodes.csv", tmpdir);
    snprintf(b, sizeof b, "%s/b/nodes.csv", tmpdir);
    ck_assert(same_file(a, b));
    /* header, 41 evaluation rows (t = 0, 0.25, ..., 10) */
    snprintf(a, sizeof a, "%s/a/metrics.csv", tmpdir);
    char *m = slurp_path(a);
    int lines = 0;
    for (char *p = m; *p; p++)
        lines += *p == '\n';
    ck_assert_int_eq(lines, 42);
    ck_assert(strncmp(m, "time_s,steps,epochs,train_loss,test_loss,test_accuracy,"
                         "consensus_distance,bytes_sent\n0,0,0,", 88) == 0);
    free(m);
    snprintf(a, sizeof a, "%s/a/run.json", tmpdir);
    ck_assert(exists(a));
    /* no temporary file is left behind */
    ck_assert_int_eq(sh("ls -A %s/a | grep -q tmp", tmpdir), 1);
    /* a different seed changes the run */
    ck_assert_int_eq(sh("%s run %s -o %s/c --seed 8 --quiet", DTSIM_BINARY, QUICKSTART, tmpdir), 0);
    snprintf(b, sizeof b, "%s/c/metrics.csv", tmpdir);
    ck_assert(!same_file(a, b));
    remove_tmp();
}
END_TEST

START_TEST(test_bad_scenario_writes_nothing)
{
    make_tmp();
    int rc = sh("%s run %s -o %s/out --set algorithm.lr=-1 2>%s/err", DTSIM_BINARY, QUICKSTART,
                tmpdir, tmpdir);
    ck_assert_int_eq(rc, 2);
    char p[512];
    snprintf(p, sizeof p, "%s/out", tmpdir);
    ck_assert(!exists(p));
    snprintf(p, sizeof p, "%s/err", tmpdir);
    char *err = slurp_path(p);
    /* the loader's message, then the override that caused it (issue 16) */
    ck_assert_str_eq(err, QUICKSTART ": /algorithm/lr: error: must be >= 0, got -1\n"
                          "dtsim run: note: the value at /algorithm/lr comes from --set "
                          "algorithm.lr=-1\n");
    free(err);
    remove_tmp();
}
END_TEST

START_TEST(test_set_overrides)
{
    make_tmp();
    ck_assert_int_eq(sh("%s run %s -o %s/a --quiet --set stop.time_s=1 --set /algorithm/name=adpsgd",
                        DTSIM_BINARY, QUICKSTART, tmpdir), 0);
    char p[512];
    snprintf(p, sizeof p, "%s/a/run.json", tmpdir);
    char *j = slurp_path(p);
    ck_assert_ptr_nonnull(strstr(j, "\"name\":\"adpsgd\""));
    ck_assert_ptr_nonnull(strstr(j, "\"sim_time_s\": 1,"));
    free(j);
    remove_tmp();
}
END_TEST

START_TEST(test_validate_and_usage)
{
    make_tmp();
    ck_assert_int_eq(sh("%s validate %s >%s/out", DTSIM_BINARY, QUICKSTART, tmpdir), 0);
    ck_assert_int_eq(sh("%s validate %s %s/tests/scenarios_bad/nodes_zero.json 2>/dev/null >/dev/null",
                        DTSIM_BINARY, QUICKSTART, DTSIM_SOURCE_DIR), 2);
    ck_assert_int_eq(sh("%s frobnicate 2>/dev/null", DTSIM_BINARY), 2);
    ck_assert_int_eq(sh("%s run 2>/dev/null", DTSIM_BINARY), 2);
    ck_assert_int_eq(sh("%s run %s --bogus 2>/dev/null", DTSIM_BINARY, QUICKSTART), 2);
    ck_assert_int_eq(sh("%s topo %s >%s/topo", DTSIM_BINARY, QUICKSTART, tmpdir), 0);
    char p[512];
    snprintf(p, sizeof p, "%s/topo", tmpdir);
    char *t = slurp_path(p);
    /* 4x4 torus: 4-regular, diameter 4, lambda2 = 3/5 */
    ck_assert_ptr_nonnull(strstr(t, "nodes: 16\nedges: 32\ndegree: 4..4\ndiameter: 4\n"));
    ck_assert_ptr_nonnull(strstr(t, "lambda2: 0.6"));
    free(t);
    remove_tmp();
}
END_TEST

/* Small runs of each protocol against pinned CSV (tests/golden/NAME/, one
 * per tests/data/golden-NAME.json).  A change of semantics shows here byte
 * by byte; `make golden` shows the diff, and `make golden ACCEPT=1`
 * rewrites them only when the change is intended, named in the commit
 * (docs/testing.md). */
START_TEST(test_golden_runs)
{
    static const char *files[] = { "metrics.csv", "nodes.csv" };
    glob_t gl;
    ck_assert_int_eq(glob(DTSIM_SOURCE_DIR "/tests/data/golden-*.json", 0, NULL, &gl), 0);
    /* one per protocol at least (19), and local SGD's gossip mode */
    ck_assert_uint_ge(gl.gl_pathc, 20);
    make_tmp();
    for (size_t a = 0; a < gl.gl_pathc; a++) {
        char name[256];
        const char *b = strrchr(gl.gl_pathv[a], '/') + strlen("/golden-");
        snprintf(name, sizeof name, "%.*s", (int)(strlen(b) - strlen(".json")), b);
        ck_assert_int_eq(sh("%s run %s -o %s/%s --quiet", DTSIM_BINARY, gl.gl_pathv[a], tmpdir,
                            name), 0);
        for (int f = 0; f < 2; f++) {
            char got[1024], want[1024];
            snprintf(got, sizeof got, "%s/%s/%s", tmpdir, name, files[f]);
            snprintf(want, sizeof want, "%s/tests/golden/%s/%s", DTSIM_SOURCE_DIR, name, files[f]);
            ck_assert_msg(same_file(got, want), "%s differs from %s", got, want);
        }
    }
    globfree(&gl);
    remove_tmp();
}
END_TEST

int main(void)
{
    Suite *s = suite_create("cli");
    TCase *tc = tcase_create("cli");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, test_quickstart_deterministic);
    tcase_add_test(tc, test_bad_scenario_writes_nothing);
    tcase_add_test(tc, test_set_overrides);
    tcase_add_test(tc, test_validate_and_usage);
    tcase_add_test(tc, test_golden_runs);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
