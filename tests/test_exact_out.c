/* test_exact_out.c -- output files: trace.csv rows pinned on a tiny run, a
 * write error ends the run (exit 1 and a message) with no temporary and no
 * partial file left, for run folders and for the single files that
 * `dtsim topo -o` writes (issue 14; each test names the mutants of
 * tests/mutants.tsv it kills).
 */
#include "exact_util.h"

/* ---- output files ---- */

/* trace.csv of two nodes, three D-PSGD steps each (16-byte models over
 * 1e9 B/s: 16 ns on the wire after 0.1 ms latency), pinned row by row:
 * a send row is the sender's with its receiver as peer, a recv row the
 * receiver's with the sender as peer (out-trace-cols, out-trace-peer). */
START_TEST(test_trace_rows_pinned)
{
    char dir[] = "/tmp/dtsim-test-exact-XXXXXX", json[2048], path[600];
    ck_assert_ptr_nonnull(mkdtemp(dir));
    snprintf(json, sizeof json, BASE(2, "") " \"topology\": {\"kind\": \"complete\"},"
             " \"algorithm\": {\"name\": \"dpsgd\", \"lr\": 0.1}, \"stop\": {\"steps\": 3},"
             " \"output\": {\"trace\": true}}");
    run_options opt = { .out_dir = dir };
    run_result res;
    run_json(json, &opt, &res);
    snprintf(path, sizeof path, "%s/trace.csv", dir);
    FILE *f = fopen(path, "r");
    ck_assert_ptr_nonnull(f);
    static char got[4096];
    size_t len = fread(got, 1, sizeof got - 1, f);
    got[len] = '\0';
    fclose(f);
    ck_assert_str_eq(got,
        "node,kind,start_s,end_s,peer,bytes\n"
        "0,send,0,1.6e-08,1,16\n"
        "1,send,0,1.6e-08,0,16\n"
        "1,recv,0.0001,0.000100016,0,16\n"
        "0,recv,0.0001,0.000100016,1,16\n"
        "0,step,0,0.01,,0\n"
        "0,send,0.01,0.010000016,1,16\n"
        "1,step,0,0.01,,0\n"
        "1,send,0.01,0.010000016,0,16\n"
        "1,recv,0.0101,0.010100016,0,16\n"
        "0,recv,0.0101,0.010100016,1,16\n"
        "0,step,0.01,0.02,,0\n"
        "0,send,0.02,0.020000016,1,16\n"
        "1,step,0.01,0.02,,0\n"
        "1,send,0.02,0.020000016,0,16\n"
        "1,recv,0.0201,0.020100016,0,16\n"
        "0,recv,0.0201,0.020100016,1,16\n"
        "0,step,0.02,0.03,,0\n"
        "0,send,0.03,0.030000016,1,16\n"
        "1,step,0.02,0.03,,0\n"
        "1,send,0.03,0.030000016,0,16\n");
    rm_run_dir(dir);
}
END_TEST


/* A file-size limit of 8 KB makes trace.csv fail: the run reports the
 * write error (exit 1 for the command line) and leaves no temporary file
 * and no partial output behind (out-write-error, out-tmp-left). */
START_TEST(test_write_error_reported_and_cleaned)
{
    char dir[] = "/tmp/dtsim-test-exact-XXXXXX", json[2048];
    ck_assert_ptr_nonnull(mkdtemp(dir));
    signal(SIGXFSZ, SIG_IGN);
    struct rlimit rl;   /* the soft limit only: it can be raised again */
    ck_assert_int_eq(getrlimit(RLIMIT_FSIZE, &rl), 0);
    rl.rlim_cur = 8192;
    ck_assert_int_eq(setrlimit(RLIMIT_FSIZE, &rl), 0);
    snprintf(json, sizeof json, BASE(4, "") " \"topology\": {\"kind\": \"ring\"},"
             " \"algorithm\": {\"name\": \"dpsgd\", \"lr\": 0.1}, \"stop\": {\"steps\": 400},"
             " \"output\": {\"trace\": true}}");
    scn_scenario s;
    scn_error err;
    run_sim *r;
    ck_assert_msg(prepare_json(json, &s, &r, &err) == 0, "%s", err.msg);
    run_options opt = { .out_dir = dir };
    run_result res;
    char msg[1024] = "";
    int rc = run_execute(r, &opt, &res, msg, sizeof msg);
    struct rlimit big = { rl.rlim_max, rl.rlim_max };
    setrlimit(RLIMIT_FSIZE, &big);   /* for CK_FORK=no */
    run_destroy(r);
    scn_fini(&s);
    ck_assert_int_eq(rc, -1);
    ck_assert_msg(strstr(msg, "trace.csv: error: cannot write: File too large"), "%s", msg);
    ck_assert_int_eq(tmp_files_in(dir), 0);
    char path[600];
    snprintf(path, sizeof path, "%s/trace.csv", dir);
    ck_assert_int_eq(access(path, F_OK), -1);
    rm_run_dir(dir);
}
END_TEST

/* metrics.csv is committed first: when it fails, trace.csv is still open
 * and is abandoned; its temporary file goes too (out-tmp-left).  And the
 * command line says so with exit 1. */
START_TEST(test_failed_run_leaves_no_temporary)
{
    char dir[] = "/tmp/dtsim-test-exact-XXXXXX", json[2048];
    ck_assert_ptr_nonnull(mkdtemp(dir));
    signal(SIGXFSZ, SIG_IGN);
    struct rlimit rl;   /* the soft limit only: it can be raised again */
    ck_assert_int_eq(getrlimit(RLIMIT_FSIZE, &rl), 0);
    rl.rlim_cur = 8192;
    snprintf(json, sizeof json, BASE(4, "") " \"topology\": {\"kind\": \"ring\"},"
             " \"algorithm\": {\"name\": \"dpsgd\", \"lr\": 0.1}, \"stop\": {\"steps\": 400},"
             " \"metrics\": {\"every_s\": 0.002}, \"output\": {\"trace\": true}}");
    scn_scenario s;
    scn_error err;
    run_sim *r;
    ck_assert_msg(prepare_json(json, &s, &r, &err) == 0, "%s", err.msg);
    ck_assert_int_eq(setrlimit(RLIMIT_FSIZE, &rl), 0);
    run_options opt = { .out_dir = dir };
    run_result res;
    char msg[1024] = "";
    int rc = run_execute(r, &opt, &res, msg, sizeof msg);
    struct rlimit big = { rl.rlim_max, rl.rlim_max };
    setrlimit(RLIMIT_FSIZE, &big);
    run_destroy(r);
    scn_fini(&s);
    ck_assert_int_eq(rc, -1);
    ck_assert_msg(strstr(msg, "metrics.csv: error: cannot write: File too large"), "%s", msg);
    ck_assert_int_eq(tmp_files_in(dir), 0);
    DIR *d = opendir(dir);   /* removed as a whole, or left empty */
    struct dirent *e;
    int files = 0;
    while (d && (e = readdir(d)))
        files += e->d_name[0] != '.';
    if (d) {
        closedir(d);
        ck_assert_int_eq(rmdir(dir), 0);
    }
    ck_assert_int_eq(files, 0);

    /* the command line: exit 1 and the message on stderr */
    char scn[] = "/tmp/dtsim-test-exact-XXXXXX", cmd[4096], path[600];
    ck_assert_ptr_nonnull(mkdtemp(scn));
    snprintf(path, sizeof path, "%s/s.json", scn);
    FILE *f = fopen(path, "w");
    ck_assert_ptr_nonnull(f);
    fputs(json, f);
    fclose(f);
    snprintf(cmd, sizeof cmd, "%s run %s -o %s/out --quiet 2>%s/err", DTSIM_BINARY, path, scn, scn);
    ck_assert_int_eq(setrlimit(RLIMIT_FSIZE, &rl), 0);
    int st = system(cmd);
    setrlimit(RLIMIT_FSIZE, &big);
    ck_assert_msg(WIFEXITED(st) && WEXITSTATUS(st) == 1, "status %d", st);
    snprintf(path, sizeof path, "%s/err", scn);
    f = fopen(path, "r");
    ck_assert_ptr_nonnull(f);
    char line[1024] = "";
    ck_assert_ptr_nonnull(fgets(line, sizeof line, f));
    fclose(f);
    ck_assert_msg(strstr(line, "metrics.csv: error: cannot write: File too large"), "%s", line);
    snprintf(path, sizeof path, "%s/out", scn);
    ck_assert_int_eq(tmp_files_in(path), 0);
    snprintf(cmd, sizeof cmd, "rm -rf %s", scn);
    ck_assert_int_eq(system(cmd), 0);
}
END_TEST

/* `dtsim topo -o FILE` writes one file through a temporary name.  Under a
 * file-size limit of 8 KB the edge list of a complete graph on 64 nodes
 * (2016 rows, about 60 KB) fails while it is written: exit 1, the message
 * "FILE: error: write failed", and neither the temporary file nor FILE
 * left (out-tmp-left: the abandoned temporary is the write path's, which
 * a run folder's removal as a whole does not cover).  Then without the
 * limit the same command writes the whole file and leaves no temporary. */
START_TEST(test_topo_write_error_leaves_no_temporary)
{
    char dir[] = "/tmp/dtsim-test-exact-XXXXXX", scn[600], err[600], graph[600], cmd[4096];
    ck_assert_ptr_nonnull(mkdtemp(dir));
    snprintf(scn, sizeof scn, "%s/s.json", dir);
    snprintf(err, sizeof err, "%s/err", dir);
    snprintf(graph, sizeof graph, "%s/g.csv", dir);
    FILE *f = fopen(scn, "w");
    ck_assert_ptr_nonnull(f);
    fputs(BASE(64, "") " \"topology\": {\"kind\": \"complete\"},"
          " \"algorithm\": {\"name\": \"dpsgd\", \"lr\": 0.1, \"batch\": 4},"
          " \"stop\": {\"steps\": 10}}", f);
    ck_assert_int_eq(fclose(f), 0);
    signal(SIGXFSZ, SIG_IGN);   /* inherited by the command: writes fail with EFBIG */
    struct rlimit rl;
    ck_assert_int_eq(getrlimit(RLIMIT_FSIZE, &rl), 0);
    struct rlimit small = { 8192, rl.rlim_max }, big = { rl.rlim_max, rl.rlim_max };
    snprintf(cmd, sizeof cmd, "%s topo %s -o %s >/dev/null 2>%s", DTSIM_BINARY, scn, graph, err);
    ck_assert_int_eq(setrlimit(RLIMIT_FSIZE, &small), 0);
    int st = system(cmd);
    setrlimit(RLIMIT_FSIZE, &big);
    ck_assert_msg(WIFEXITED(st) && WEXITSTATUS(st) == 1, "status %d", st);
    f = fopen(err, "r");
    ck_assert_ptr_nonnull(f);
    char line[1024] = "", want[700];
    ck_assert_ptr_nonnull(fgets(line, sizeof line, f));
    fclose(f);
    snprintf(want, sizeof want, "%s: error: write failed\n", graph);
    ck_assert_str_eq(line, want);
    ck_assert_int_eq(tmp_files_in(dir), 0);
    ck_assert_int_eq(access(graph, F_OK), -1);

    ck_assert_int_eq(system(cmd), 0);
    ck_assert_int_eq(tmp_files_in(dir), 0);
    f = fopen(graph, "r");
    ck_assert_ptr_nonnull(f);
    int rows = 0;
    while (fgets(line, sizeof line, f))
        rows++;
    fclose(f);
    ck_assert_int_eq(rows, 1 + 64 * 63 / 2);
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    ck_assert_int_eq(system(cmd), 0);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("exact_out");
    TCase *tc = tcase_create("exact_out");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, test_trace_rows_pinned);
    tcase_add_test(tc, test_write_error_reported_and_cleaned);
    tcase_add_test(tc, test_failed_run_leaves_no_temporary);
    tcase_add_test(tc, test_topo_write_error_leaves_no_temporary);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? 1 : 0;
}
