/* test_run_signals.c -- long single runs: Ctrl-C (SIGINT) ends `dtsim run`
 * with exit status 130 (SIGTERM: 143) and every output written, run.json marked
 * "interrupted" and its final row equal to metrics.csv's last; the progress
 * line appears on a terminal (a pseudo-terminal from script(1)) and never
 * on a stderr that is a file.
 */
#include <check.h>
#include <math.h>
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

/* A hidden temporary file in dir: the run has opened metrics.csv, so its
 * SIGINT handler is in place and the event loop is about to start. */
static int has_tmp(const char *dir)
{
    DIR *d = opendir(dir);
    if (!d)
        return 0;
    int found = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL)
        found |= strstr(e->d_name, ".tmp.") != NULL;
    closedir(d);
    return found;
}

#define QUICKSTART DTSIM_SOURCE_DIR "/scenarios/quickstart.json"

/* _i 0: SIGINT (exit 130); 1: SIGTERM (exit 143), handled the same way. */
START_TEST(test_sigint_writes_partial_run)
{
    const int sig = _i ? SIGTERM : SIGINT;
    make_tmp();
    char out[512];
    snprintf(out, sizeof out, "%s/run", tmpdir);
    pid_t pid = fork();
    ck_assert_int_ge(pid, 0);
    if (pid == 0) {
        /* a run far longer than any test: only SIGINT can end it (the
         * event estimate, 1.45e11, is skipped; the budget of 10^9 events
         * is minutes away) */
        execl(DTSIM_BINARY, "dtsim", "run", QUICKSTART, "--set", "stop.time_s=1e7", "--set",
              "metrics.every_s=100", "--set", "limits.check_events=false", "-o", out,
              "--quiet", (char *)NULL);
        _exit(127);
    }
    int st;
    while (!has_tmp(out)) {
        ck_assert_int_eq(waitpid(pid, &st, WNOHANG), 0);
        struct timespec ms = { 0, 1000000 };
        nanosleep(&ms, NULL);  /* a polling interval, not an assertion */
    }
    ck_assert_int_eq(kill(pid, sig), 0);
    ck_assert_int_eq(waitpid(pid, &st, 0), pid);
    ck_assert(WIFEXITED(st));
    ck_assert_int_eq(WEXITSTATUS(st), 128 + sig);

    char p[1024];
    snprintf(p, sizeof p, "%s/run.json", out);
    char *j = slurp_path(p);
    ck_assert_ptr_nonnull(strstr(j, "\"status\": \"interrupted\",\n"));
    ck_assert_ptr_nonnull(strstr(j, "\"stop_reason\": \"interrupted\",\n"));
    /* the final evaluation is metrics.csv's last row */
    const char *t = strstr(j, "\"final\": {\n    \"time_s\": ");
    ck_assert_ptr_nonnull(t);
    double final_t = strtod(t + strlen("\"final\": {\n    \"time_s\": "), NULL);
    ck_assert(final_t >= 0 && final_t < 1e7);
    snprintf(p, sizeof p, "%s/metrics.csv", out);
    char *m = slurp_path(p);
    size_t len = strlen(m);
    ck_assert(len > 2 && m[len - 1] == '\n');
    m[len - 1] = '\0';
    double last_t = strtod(strrchr(m, '\n') + 1, NULL);
    /* the same double, printed with %.10g and %.17g */
    ck_assert(fabs(last_t - final_t) <= 1e-9 * final_t);
    snprintf(p, sizeof p, "%s/nodes.csv", out);
    free(slurp_path(p));
    ck_assert(!has_tmp(out));
    free(m);
    free(j);
    remove_tmp();
}
END_TEST

START_TEST(test_progress_only_on_a_terminal)
{
    make_tmp();
    /* stderr a file: nothing but the summary on stdout */
    ck_assert_int_eq(sh("%s run %s --set stop.time_s=100 -o %s/a >%s/out 2>%s/err", DTSIM_BINARY,
                        QUICKSTART, tmpdir, tmpdir, tmpdir), 0);
    char p[512];
    snprintf(p, sizeof p, "%s/err", tmpdir);
    char *e = slurp_path(p);
    ck_assert_str_eq(e, "");
    free(e);
    /* a terminal: the run's line (drawn at the first 4096 events) and the
     * sweep's (drawn at the start) */
    ck_assert_int_eq(sh("script -qec \"%s run %s --set stop.time_s=100 -o %s/b\" /dev/null "
                        ">%s/tty", DTSIM_BINARY, QUICKSTART, tmpdir, tmpdir), 0);
    snprintf(p, sizeof p, "%s/tty", tmpdir);
    e = slurp_path(p);
    ck_assert_ptr_nonnull(strstr(e, "\rrun: t="));
    ck_assert_ptr_nonnull(strstr(e, "s simulated ("));
    ck_assert_ptr_nonnull(strstr(e, "M events/s"));
    free(e);
    ck_assert_int_eq(sh("script -qec \"%s sweep %s --grid algorithm.lr=0.1,0.2 --set "
                        "stop.time_s=1 -j 1 -o %s/s\" /dev/null >%s/tty", DTSIM_BINARY,
                        QUICKSTART, tmpdir, tmpdir), 0);
    e = slurp_path(p);
    ck_assert_ptr_nonnull(strstr(e, "\rsweep: 0/2 runs done, 0 running, 0s elapsed, ~? left"));
    ck_assert_ptr_nonnull(strstr(e, "dtsim sweep: 2 runs (2 ran now, 0 were complete)"));
    free(e);
    remove_tmp();
}
END_TEST

int main(void)
{
    Suite *s = suite_create("run_signals");
    TCase *tc = tcase_create("run_signals");
    tcase_set_timeout(tc, 120);
    tcase_add_loop_test(tc, test_sigint_writes_partial_run, 0, 2);
    tcase_add_test(tc, test_progress_only_on_a_terminal);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
