/* bench_quickstart.c -- times whole runs of a scenario end to end through
 * the runner (no output files): median, min and max of CPU time (getrusage)
 * and wall time over several runs, events per CPU second and peak resident
 * memory.  Run by `make bench`; tests never time anything.
 *
 * usage: bench_quickstart [SCENARIO.json] [RUNS]
 */
#define _GNU_SOURCE   /* RUSAGE_THREAD */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#include "run.h"
#include "scn.h"

static double cpu_now(void)
{
    struct rusage ru;
    /* this thread only: OpenBLAS's idle workers spin at start-up */
    getrusage(RUSAGE_THREAD, &ru);
    return (double)ru.ru_utime.tv_sec + 1e-6 * (double)ru.ru_utime.tv_usec
         + (double)ru.ru_stime.tv_sec + 1e-6 * (double)ru.ru_stime.tv_usec;
}

static double wall_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static int cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

int main(int argc, char **argv)
{
    const char *path = argc > 1 ? argv[1] : "scenarios/quickstart.json";
    int runs = argc > 2 ? atoi(argv[2]) : 5;
    if (runs < 1 || runs > 100) {
        fprintf(stderr, "bench_quickstart: error: RUNS must be in 1..100\n");
        return 2;
    }
    scn_scenario s;
    scn_error err;
    if (scn_load(path, NULL, 0, &s, &err) != 0) {
        fprintf(stderr, "%s\n", err.msg);
        return 2;
    }
    double cpu[100], wall[100];
    uint64_t events = 0;
    for (int k = 0; k < runs; k++) {
        double c0 = cpu_now(), w0 = wall_now();
        run_sim *r = run_prepare(&s, &err);
        if (!r) {
            fprintf(stderr, "%s\n", err.msg);
            return 2;
        }
        run_result res;
        char msg[1024];
        if (run_execute(r, NULL, &res, msg, sizeof msg) != 0) {
            fprintf(stderr, "%s\n", msg);
            return 1;
        }
        run_destroy(r);
        cpu[k] = cpu_now() - c0;
        wall[k] = wall_now() - w0;
        events = res.events;
    }
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    qsort(cpu, (size_t)runs, sizeof(double), cmp);
    qsort(wall, (size_t)runs, sizeof(double), cmp);
    double mc = cpu[runs / 2], mw = wall[runs / 2];
    printf("| scenario | runs | events | CPU s median (min-max) | wall s median (min-max) "
           "| events per CPU s | peak RSS MiB |\n|---|---|---|---|---|---|---|\n");
    printf("| %s | %d | %llu | %.4f (%.4f-%.4f) | %.4f (%.4f-%.4f) | %.3g | %.1f |\n", path, runs,
           (unsigned long long)events, mc, cpu[0], cpu[runs - 1], mw, wall[0], wall[runs - 1],
           (double)events / mc, (double)ru.ru_maxrss / 1024.0);
    scn_fini(&s);
    return 0;
}
