/* test_sweep.c -- sweeps as a user runs them: the plan's order, names,
 * zip pairing and replicate seeds (closed forms from sim_rng); bad grid
 * values rejected before anything runs with the loader's message; sweep.csv
 * byte-identical whatever -j and equal to the runs `dtsim run` gives; a
 * sweep killed with SIGKILL resumes to the same sweep.csv without redoing
 * finished runs; shards merged equal the single-machine sweep.
 */
#include "swp.h"
#include "sim_rng.h"

#include <check.h>
#include <dirent.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "test_shell.h"

static int starts_with(const char *s, const char *prefix)
{
    return strncmp(s, prefix, strlen(prefix)) == 0;
}

static size_t count_lines(const char *s)
{
    size_t n = 0;
    for (; *s; s++)
        n += *s == '\n';
    return n;
}

#define QUICKSTART DTSIM_SOURCE_DIR "/scenarios/quickstart.json"
/* 3 algorithms x 2 paired (lr, batch) x 2 replicates = 12 short runs */
#define SWEEP_ARGS QUICKSTART " --grid algorithm.name=dpsgd,adpsgd,allreduce" \
    " --zip algorithm.lr=0.05,0.1 --zip algorithm.batch=16,32 --replicates 2" \
    " --set stop.time_s=1 --quiet"

START_TEST(test_plan_order_names_seeds)
{
    swp_axis_arg axes[] = {
        { "algorithm.lr=0.05,0.1", 1 },
        { "algorithm.name=dpsgd,adpsgd,allreduce", 0 },
        { "algorithm.batch=16,32", 1 },
        /* commas inside brackets belong to the value: two values */
        { "compute.groups=[],[{\"nodes\":[\"0-1\"],\"slowdown\":2}]", 0 },
    };
    const char *sets[] = { "stop.time_s=1" };
    swp_spec spec = { .scenario = QUICKSTART, .sets = sets, .n_sets = 1, .axes = axes,
                      .n_axes = 4, .replicates = 3 };
    swp_plan pl;
    char err[4096];
    ck_assert_msg(swp_plan_build(&spec, &pl, err, sizeof err) == 0, "%s", err);
    /* the zip axes are one axis at the place of the first --zip */
    ck_assert_uint_eq(pl.n_params, 4);
    ck_assert_str_eq(pl.param_path[0], "algorithm.lr");
    ck_assert_str_eq(pl.param_path[1], "algorithm.batch");
    ck_assert_str_eq(pl.param_path[2], "algorithm.name");
    ck_assert_str_eq(pl.param_path[3], "compute.groups");
    ck_assert_uint_eq(pl.n_points, 2 * 3 * 2);
    ck_assert_uint_eq(pl.n_runs, 2 * 3 * 2 * 3);
    /* last axis fastest, replicates fastest of all */
    ck_assert_str_eq(pl.point_value[0][0], "0.05");
    ck_assert_str_eq(pl.point_value[0][1], "16");
    ck_assert_str_eq(pl.point_value[0][3], "[]");
    ck_assert_str_eq(pl.point_value[1][3], "[{\"nodes\":[\"0-1\"],\"slowdown\":2}]");
    ck_assert_str_eq(pl.point_value[2][2], "adpsgd");
    ck_assert_str_eq(pl.point_value[6][0], "0.1");
    ck_assert_str_eq(pl.point_value[6][1], "32");
    ck_assert_str_eq(pl.point_value[6][2], "dpsgd");
    for (size_t i = 0; i < pl.n_runs; i++) {
        const swp_run *r = &pl.runs[i];
        ck_assert_uint_eq(r->index, i);
        ck_assert_uint_eq(r->point, i / 3);
        ck_assert_int_eq(r->replicate, (int)(i % 3));
        /* replicate 0 keeps the scenario seed (7); the others are derived
         * from it by splitmix64 and kept to 53 bits */
        uint64_t want = r->replicate == 0 ? 7
            : sim_rng_derive(7, (uint32_t)r->replicate, SIM_RNG_REPLICATE)
              & ((UINT64_C(1) << 53) - 1);
        ck_assert_uint_eq(r->seed, want);
    }
    ck_assert_str_eq(pl.runs[0].name, "000_lr=0.05_batch=16_name=dpsgd_groups=___r0");
    ck_assert_str_eq(pl.runs[35].name,
                     "035_lr=0.1_batch=32_name=allreduce_groups=___nodes____0-1____slowdown__2___r2");
    ck_assert_ptr_nonnull(strstr(pl.runs_csv, "run,name,algorithm.lr,algorithm.batch,"
                                 "algorithm.name,compute.groups,replicate,seed,git_commit\n0,000_"));
    /* a CSV field with commas and quotes is quoted */
    ck_assert_ptr_nonnull(strstr(pl.runs_csv,
                                 ",\"[{\"\"nodes\"\":[\"\"0-1\"\"],\"\"slowdown\"\":2}]\",0,7,unknown\n"));
    swp_plan_fini(&pl);
}
END_TEST

static void expect_plan_error(swp_axis_arg *axes, size_t n, int replicates, const char *want)
{
    swp_spec spec = { .scenario = QUICKSTART, .axes = axes, .n_axes = n,
                      .replicates = replicates };
    swp_plan pl;
    char err[4096];
    ck_assert_int_eq(swp_plan_build(&spec, &pl, err, sizeof err), -1);
    ck_assert_str_eq(err, want);
}

START_TEST(test_plan_errors)
{
    swp_axis_arg a1[] = { { "algorithm.lr=0.1,-1", 0 } };
    expect_plan_error(a1, 1, 1, QUICKSTART ": /algorithm/lr: error: must be >= 0, got -1\n"
                      "dtsim sweep: note: at grid point --grid algorithm.lr=-1");
    swp_axis_arg a2[] = { { "algorithm.name=dpsgd", 0 }, { "algorithm.lr.x=1", 1 } };
    expect_plan_error(a2, 2, 1, "--zip algorithm.lr.x=1: error: /algorithm/lr is a number, "
                      "not an object or array\ndtsim sweep: note: at grid point "
                      "--grid algorithm.name=dpsgd, --zip algorithm.lr.x=1");
    swp_axis_arg a3[] = { { "algorithm.lr=1,2", 1 }, { "algorithm.batch=1,2,3", 1 } };
    expect_plan_error(a3, 2, 1, "dtsim sweep: error: --zip algorithm.batch has 3 values, the "
                      "first --zip has 2 (paired lists must have the same length)");
    swp_axis_arg a4[] = { { "algorithm.lr=1", 0 }, { "algorithm.lr=2", 0 } };
    expect_plan_error(a4, 2, 1, "dtsim sweep: error: parameter algorithm.lr is swept twice");
    swp_axis_arg a5[] = { { "algorithm.lr=1,,2", 0 } };
    expect_plan_error(a5, 1, 1, "dtsim sweep: error: --grid algorithm.lr=1,,2: empty value");
    swp_axis_arg a6[] = { { "algorithm.lr", 0 } };
    expect_plan_error(a6, 1, 1, "dtsim sweep: error: --grid algorithm.lr: expected PATH=V1,V2,...");
    swp_axis_arg a7[] = { { "algorithm.name=[\"a\",", 0 } };
    expect_plan_error(a7, 1, 1, "dtsim sweep: error: --grid algorithm.name=[\"a\",: unbalanced "
                      "quote or bracket");
    expect_plan_error(NULL, 0, 0, "dtsim sweep: error: --replicates must be >= 1, got 0");
}
END_TEST

START_TEST(test_bad_grid_runs_nothing)
{
    make_tmp();
    ck_assert_int_eq(sh("%s sweep %s --grid algorithm.name=dpsgd,sgd -o %s/s 2>%s/err",
                        DTSIM_BINARY, QUICKSTART, tmpdir, tmpdir), 2);
    char p[512];
    snprintf(p, sizeof p, "%s/s", tmpdir);
    ck_assert(!exists(p));
    char *e = slurpf("%s/err", tmpdir);
    ck_assert_str_eq(e, QUICKSTART ": /algorithm/name: error: unknown algorithm \"sgd\" "
                     "(expected one of: adpsgd, allreduce, backup, comdml, delay-adaptive, divshare, dpsgd, eager, "
                     "easgd, epidemic, fedavg, gossip, hop, local-sgd, prague, ps-async, ps-sync, rennala, "
                     "ringmaster, sdfeel, sgp, ssp)\n"
                     "dtsim sweep: note: at grid point --grid algorithm.name=sgd\n");
    free(e);
    ck_assert_int_eq(sh("%s sweep %s --shard 3/2 2>/dev/null", DTSIM_BINARY, QUICKSTART), 2);
    ck_assert_int_eq(sh("%s sweep %s -j 0 2>/dev/null", DTSIM_BINARY, QUICKSTART), 2);
    remove_tmp();
}
END_TEST

/* sweep.csv is the same bytes at -j 1 and -j 2; its rows are the runs'
 * metrics.csv rows behind their prefix; replicate 0 of a point is exactly
 * what `dtsim run --set ...` writes; nothing goes to a stderr that is not
 * a terminal. */
START_TEST(test_deterministic_across_jobs)
{
    make_tmp();
    ck_assert_int_eq(sh("%s sweep " SWEEP_ARGS " -j 1 -o %s/a 2>%s/err", DTSIM_BINARY, tmpdir,
                        tmpdir), 0);
    ck_assert_int_eq(sh("%s sweep " SWEEP_ARGS " -j 2 -o %s/b", DTSIM_BINARY, tmpdir), 0);
    char *err = slurpf("%s/err", tmpdir);
    ck_assert_str_eq(err, "");
    free(err);
    char *a = slurpf("%s/a/sweep.csv", tmpdir), *b = slurpf("%s/b/sweep.csv", tmpdir);
    ck_assert_str_eq(a, b);
    ck_assert(starts_with(a, "run,algorithm.name,algorithm.lr,algorithm.batch,replicate,seed,"
                             "git_commit,time_s,steps,epochs,train_loss,"));
    /* the commit column is the binary's, as --version names it */
    ck_assert_int_eq(sh("%s --version >%s/version", DTSIM_BINARY, tmpdir), 0);
    char *ver = slurpf("%s/version", tmpdir), commit[128];
    char *g = strstr(ver, "(git ");
    ck_assert_ptr_nonnull(g);
    snprintf(commit, sizeof commit, "%.*s", (int)strcspn(g + 5, ","), g + 5);
    free(ver);
    ck_assert_str_ne(commit, "");
    /* 12 runs of 1 s evaluated every 0.25 s: 5 rows each */
    ck_assert_uint_eq(count_lines(a), 1 + 12 * 5);

    /* run 6: adpsgd, lr 0.1, batch 32, replicate 0, seed 7 */
    ck_assert_int_eq(sh("%s run %s --set stop.time_s=1 --set algorithm.name=adpsgd "
                        "--set algorithm.lr=0.1 --set algorithm.batch=32 --quiet -o %s/r",
                        DTSIM_BINARY, QUICKSTART, tmpdir), 0);
    char *single = slurpf("%s/r/metrics.csv", tmpdir);
    char *run6 = slurpf("%s/a/runs/006_name=adpsgd_lr=0.1_batch=32_r0/metrics.csv", tmpdir);
    ck_assert_str_eq(single, run6);
    /* each data row of the run appears in sweep.csv behind its prefix */
    char *row = strchr(single, '\n') + 1;
    size_t nrows = 0;
    for (char *nl; (nl = strchr(row, '\n')) != NULL; row = nl + 1, nrows++) {
        char want[1024];
        snprintf(want, sizeof want, "\n6,adpsgd,0.1,32,0,7,%s,%.*s\n", commit, (int)(nl - row),
                 row);
        ck_assert_msg(strstr(a, want) != NULL, "missing %s", want);
    }
    ck_assert_uint_eq(nrows, 5);
    char *sum = slurpf("%s/a/summary.csv", tmpdir);
    ck_assert_uint_eq(count_lines(sum), 13);
    ck_assert(starts_with(sum, "run,algorithm.name,algorithm.lr,algorithm.batch,replicate,seed,"
                               "git_commit,status,stop_reason,sim_time_s,"));
    char want6[256];
    snprintf(want6, sizeof want6, "\n6,adpsgd,0.1,32,0,7,%s,ok,time,1,", commit);
    ck_assert_ptr_nonnull(strstr(sum, want6));
    free(sum);
    free(single);
    free(run6);
    free(a);
    free(b);
    /* the same command again runs nothing and says so */
    ck_assert_int_eq(sh("%s sweep " SWEEP_ARGS " -j 2 -o %s/b >%s/out", DTSIM_BINARY, tmpdir,
                        tmpdir), 0);
    /* another sweep into the same folder is refused (more replicates
     * would extend it: tests/test_cli3.sh) */
    ck_assert_int_eq(sh("%s sweep " SWEEP_ARGS " --set stop.time_s=2 -o %s/b 2>%s/err",
                        DTSIM_BINARY, tmpdir, tmpdir), 2);
    err = slurpf("%s/err", tmpdir);
    ck_assert_ptr_nonnull(strstr(err, "/b holds a different sweep"));
    free(err);
    remove_tmp();
}
END_TEST

static size_t count_complete(const char *runs)
{
    DIR *d = opendir(runs);
    if (!d)
        return 0;
    size_t n = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        char p[4096];
        snprintf(p, sizeof p, "%s/%s/summary.csv", runs, e->d_name);
        n += e->d_name[0] != '.' && exists(p);
    }
    closedir(d);
    return n;
}

static int has_part(const char *runs)
{
    DIR *d = opendir(runs);
    if (!d)
        return 0;
    int found = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL)
        found |= strncmp(e->d_name, ".part.", 6) == 0;
    closedir(d);
    return found;
}

/* kill -9 of the whole sweep (its process group) while a run is in
 * progress: the completed runs stay, the same command finishes the rest
 * without redoing them, and sweep.csv equals a clean sweep's. */
START_TEST(test_kill_and_resume)
{
    make_tmp();
    char runs[512], first[1024];
    snprintf(runs, sizeof runs, "%s/k/runs", tmpdir);
    char cmd[4096];
    snprintf(cmd, sizeof cmd, "exec %s sweep " SWEEP_ARGS " --set stop.time_s=5 -j 1 -o %s/k",
             DTSIM_BINARY, tmpdir);
    pid_t pid = fork();
    ck_assert_int_ge(pid, 0);
    if (pid == 0) {
        setpgid(0, 0);
        execl("/bin/sh", "sh", "-c", cmd, (char *)NULL);
        _exit(127);
    }
    setpgid(pid, pid);
    /* wait (by polling, not by sleeping a guessed time) until two runs are
     * complete and a third is being written */
    int st, gone = 0;
    while (!(count_complete(runs) >= 2 && has_part(runs))) {
        if (waitpid(pid, &st, WNOHANG) == pid) {
            gone = 1;
            break;
        }
        struct timespec ms = { 0, 1000000 };
        nanosleep(&ms, NULL);  /* a polling interval, not an assertion */
    }
    if (!gone) {
        kill(-pid, SIGKILL);
        ck_assert_int_eq(waitpid(pid, &st, 0), pid);
        ck_assert(WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL);
        /* until the killed worker is gone too (init reaps it) */
        while (kill(-pid, 0) == 0) {
            struct timespec ms = { 0, 1000000 };
            nanosleep(&ms, NULL);
        }
    }
    size_t done = count_complete(runs);
    ck_assert_uint_ge(done, 2);
    snprintf(first, sizeof first, "%s/000_name=dpsgd_lr=0.05_batch=16_r0", runs);
    struct stat before, after;
    ck_assert_int_eq(stat(first, &before), 0);
    snprintf(cmd, sizeof cmd, "%s/k/sweep.csv", tmpdir);
    ck_assert(gone || !exists(cmd));

    ck_assert_int_eq(sh("%s sweep " SWEEP_ARGS " --set stop.time_s=5 -j 2 -o %s/k", DTSIM_BINARY,
                        tmpdir), 0);
    ck_assert_int_eq(stat(first, &after), 0);
    ck_assert_uint_eq(before.st_ino, after.st_ino);   /* not run again */
    ck_assert(!has_part(runs));                       /* the dead worker's folder is gone */
    ck_assert_uint_eq(count_complete(runs), 12);

    ck_assert_int_eq(sh("%s sweep " SWEEP_ARGS " --set stop.time_s=5 -j 2 -o %s/clean",
                        DTSIM_BINARY, tmpdir), 0);
    char *a = slurpf("%s/k/sweep.csv", tmpdir), *b = slurpf("%s/clean/sweep.csv", tmpdir);
    ck_assert_str_eq(a, b);
    free(a);
    free(b);
    remove_tmp();
}
END_TEST

/* Ctrl-C at a terminal signals the whole process group: the sweep stops
 * handing out runs, its workers die, their hidden folders are removed, it
 * exits 130 without tables, and the same command resumes.  _i 1: SIGTERM
 * to the sweep alone (as `kill PID` sends it), which stops its workers
 * itself and exits 143. */
START_TEST(test_ctrl_c)
{
    make_tmp();
    char runs[512], cmd[4096];
    snprintf(runs, sizeof runs, "%s/c/runs", tmpdir);
    snprintf(cmd, sizeof cmd, "exec %s sweep " SWEEP_ARGS " --set stop.time_s=5 -j 1 -o %s/c",
             DTSIM_BINARY, tmpdir);
    pid_t pid = fork();
    ck_assert_int_ge(pid, 0);
    if (pid == 0) {
        setpgid(0, 0);
        execl("/bin/sh", "sh", "-c", cmd, (char *)NULL);
        _exit(127);
    }
    setpgid(pid, pid);
    int st;
    while (!(count_complete(runs) >= 1 && has_part(runs))) {
        ck_assert_int_eq(waitpid(pid, &st, WNOHANG), 0);
        struct timespec ms = { 0, 1000000 };
        nanosleep(&ms, NULL);  /* a polling interval, not an assertion */
    }
    if (_i == 0)
        kill(-pid, SIGINT);
    else
        kill(pid, SIGTERM);
    ck_assert_int_eq(waitpid(pid, &st, 0), pid);
    ck_assert(WIFEXITED(st));
    ck_assert_int_eq(WEXITSTATUS(st), _i == 0 ? 130 : 143);
    ck_assert(!has_part(runs));
    ck_assert_uint_lt(count_complete(runs), 12);
    snprintf(cmd, sizeof cmd, "%s/c/sweep.csv", tmpdir);
    ck_assert(!exists(cmd));
    ck_assert_int_eq(sh("%s sweep " SWEEP_ARGS " --set stop.time_s=5 -j 2 -o %s/c", DTSIM_BINARY,
                        tmpdir), 0);
    ck_assert(exists(cmd));
    remove_tmp();
}
END_TEST

START_TEST(test_shards_and_merge)
{
    make_tmp();
    ck_assert_int_eq(sh("%s sweep " SWEEP_ARGS " -o %s/all", DTSIM_BINARY, tmpdir), 0);
    for (int k = 1; k <= 3; k++)
        ck_assert_int_eq(sh("%s sweep " SWEEP_ARGS " --shard %d/3 -j 1 -o %s/s%d", DTSIM_BINARY,
                            k, tmpdir, k), 0);
    /* shards are disjoint and cover the sweep: 12 runs, 4 each */
    for (int k = 1; k <= 3; k++) {
        char runs[512];
        snprintf(runs, sizeof runs, "%s/s%d/runs", tmpdir, k);
        ck_assert_uint_eq(count_complete(runs), 4);
        snprintf(runs, sizeof runs, "%s/s%d/sweep.csv", tmpdir, k);
        ck_assert(!exists(runs));
    }
    /* two of three shards: nothing written, exit 1 */
    ck_assert_int_eq(sh("%s merge %s/s1 %s/s2 -o %s/m 2>%s/err", DTSIM_BINARY, tmpdir, tmpdir,
                        tmpdir, tmpdir), 1);
    char *e = slurpf("%s/err", tmpdir);
    ck_assert_str_eq(e, "dtsim merge: error: 4 of 12 runs are missing (the first is "
                     "runs/002_name=dpsgd_lr=0.1_batch=32_r0); nothing written\n");
    free(e);
    char p[512];
    snprintf(p, sizeof p, "%s/m/sweep.csv", tmpdir);
    ck_assert(!exists(p));
    ck_assert_int_eq(sh("%s merge %s/s3 %s/s1 %s/s2 -o %s/m --quiet", DTSIM_BINARY, tmpdir,
                        tmpdir, tmpdir, tmpdir), 0);
    char *a = slurpf("%s/all/sweep.csv", tmpdir), *b = slurpf("%s/m/sweep.csv", tmpdir);
    ck_assert_str_eq(a, b);
    free(b);
    /* shards sharing one folder: the last one writes the tables */
    for (int k = 1; k <= 2; k++)
        ck_assert_int_eq(sh("%s sweep " SWEEP_ARGS " --shard %d/2 -o %s/shared", DTSIM_BINARY,
                            k, tmpdir), 0);
    b = slurpf("%s/shared/sweep.csv", tmpdir);
    ck_assert_str_eq(a, b);
    free(b);
    free(a);
    /* a shard of another sweep is refused: bad input, exit 2 as docs/sweeps.md says
     * (this pinned 1 before issue 16) */
    ck_assert_int_eq(sh("%s sweep %s --grid algorithm.lr=0.1,0.2 --set stop.time_s=1 --quiet "
                        "-o %s/other", DTSIM_BINARY, QUICKSTART, tmpdir), 0);
    ck_assert_int_eq(sh("%s merge %s/s1 %s/other -o %s/m2 2>/dev/null", DTSIM_BINARY, tmpdir,
                        tmpdir, tmpdir), 2);
    remove_tmp();
}
END_TEST

/* A sweep whose runs stall (every message lost, no retransmission) writes
 * its tables and still ends with exit 1 and the count of runs not "ok"
 * (mutant swp-not-ok). */
START_TEST(test_stalled_runs_fail_the_sweep)
{
    make_tmp();
    char p[512];
    snprintf(p, sizeof p, "%s/st.json", tmpdir);
    FILE *f = fopen(p, "w");
    ck_assert_ptr_nonnull(f);
    fputs("{\"nodes\": 4, \"topology\": {\"kind\": \"ring\"}, \"data\": {\"train\": 400, \"test\": 100},"
          " \"algorithm\": {\"name\": \"dpsgd\", \"batch\": 16}, \"stop\": {\"time_s\": 5},"
          " \"network\": {\"loss\": 0.999999, \"retransmit\": false}}\n", f);
    ck_assert_int_eq(fclose(f), 0);
    ck_assert_int_eq(sh("cd %s && %s sweep st.json --grid algorithm.lr=0.05,0.1 -o sw --quiet 2>err",
                        tmpdir, DTSIM_BINARY), 1);
    char *e = slurpf("%s/err", tmpdir);
    ck_assert_str_eq(e, "dtsim sweep: error: 2 of 2 runs stalled (status in sw/summary.csv)\n");
    free(e);
    char *sum = slurpf("%s/sw/summary.csv", tmpdir);
    ck_assert_ptr_nonnull(strstr(sum, "\n0,0.05,0,1,"));
    ck_assert_ptr_nonnull(strstr(sum, ",stalled,stalled,"));
    free(sum);
    remove_tmp();
}
END_TEST

int main(void)
{
    Suite *s = suite_create("sweep");
    TCase *tc = tcase_create("sweep");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, test_plan_order_names_seeds);
    tcase_add_test(tc, test_plan_errors);
    tcase_add_test(tc, test_bad_grid_runs_nothing);
    tcase_add_test(tc, test_stalled_runs_fail_the_sweep);
    tcase_add_test(tc, test_deterministic_across_jobs);
    tcase_add_test(tc, test_kill_and_resume);
    tcase_add_loop_test(tc, test_ctrl_c, 0, 2);
    tcase_add_test(tc, test_shards_and_merge);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
