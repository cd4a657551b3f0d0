/* bench_timing.c -- timing-only runs (model "none") at growing node counts:
 * events per CPU second (median, min and max of several runs), wall time,
 * peak resident memory per node, and the allocations of the steady state.
 * Each node count runs in its own child process, so peak RSS belongs to
 * that size alone.  Allocations are counted by wrapping malloc, calloc and
 * realloc at link time (-Wl,--wrap): the steady-state figure is the count
 * of a run of 200 steps minus that of a run of 100 steps, the same
 * scenario otherwise, so start-up allocations cancel and what remains is
 * what the extra 100 steps allocated.  Run by `make bench`; tests never time
 * anything.
 *
 * usage: bench_timing SCENARIO RUNS N1,N2,... [PATH=VALUE ...]
 *   (the overrides are applied as by dtsim --set; nodes=N is added)
 */
#define _GNU_SOURCE   /* RUSAGE_THREAD */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include "run.h"
#include "scn.h"

/* ---- allocation counting (the link wraps these symbols) ---- */

static uint64_t n_allocs;

void *__real_malloc(size_t n);
void *__real_calloc(size_t k, size_t n);
void *__real_realloc(void *p, size_t n);

void *__wrap_malloc(size_t n)
{
    n_allocs++;
    return __real_malloc(n);
}

void *__wrap_calloc(size_t k, size_t n)
{
    n_allocs++;
    return __real_calloc(k, n);
}

void *__wrap_realloc(void *p, size_t n)
{
    n_allocs++;
    return __real_realloc(p, n);
}

/* ---- one node count ---- */

static int cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static long max_rss_kib(void)
{
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return ru.ru_maxrss;
}

/* Loads the scenario with the overrides plus nodes=n (and stop.steps when
 * steps > 0). */
static int load(const char *path, char **ov, int n_ov, int n, long steps, scn_scenario *s)
{
    const char *all[64];
    char nodes[64], st[64];
    int k = 0;
    for (int i = 0; i < n_ov && k < 62; i++)
        all[k++] = ov[i];
    snprintf(nodes, sizeof nodes, "nodes=%d", n);
    all[k++] = nodes;
    if (steps > 0) {
        snprintf(st, sizeof st, "stop.steps=%ld", steps);
        all[k++] = st;
    }
    scn_error err;
    if (scn_load(path, all, (size_t)k, s, &err) != 0) {
        fprintf(stderr, "%s\n", err.msg);
        return -1;
    }
    return 0;
}

/* Allocations of one execution of s (prepare included). */
static int count_allocs(const scn_scenario *s, uint64_t *allocs, uint64_t *events)
{
    scn_error err;
    char msg[1024];
    run_result res;
    uint64_t a0 = n_allocs;
    run_sim *r = run_prepare(s, &err);
    if (!r || run_execute(r, NULL, &res, msg, sizeof msg) != 0) {
        fprintf(stderr, "%s\n", r ? msg : err.msg);
        run_destroy(r);
        return -1;
    }
    run_destroy(r);
    *allocs = n_allocs - a0;
    *events = res.events;
    return 0;
}

static int one_size(const char *path, int runs, int n, char **ov, int n_ov)
{
    long base_kib = max_rss_kib();
    scn_scenario s;
    scn_error err;
    if (load(path, ov, n_ov, n, 0, &s) != 0)
        return -1;
    double cpu[100], wall[100], rate[100];
    uint64_t events = 0;
    double sim_time = 0;
    run_sim *r = run_prepare(&s, &err);
    if (!r) {
        fprintf(stderr, "%s\n", err.msg);
        return -1;
    }
    for (int k = 0; k < runs; k++) {
        run_result res;
        char msg[1024];
        if (run_execute(r, NULL, &res, msg, sizeof msg) != 0) {
            fprintf(stderr, "%s\n", msg);
            return -1;
        }
        cpu[k] = res.cpu_s;
        wall[k] = res.wall_s;
        rate[k] = (double)res.events / res.cpu_s / 1e6;
        events = res.events;
        sim_time = res.sim_time_s;
    }
    run_destroy(r);
    long peak_kib = max_rss_kib();

    /* steady state: 100 more steps, no more allocations */
    scn_scenario s1, s2;
    uint64_t a1, a2, e1, e2;
    if (load(path, ov, n_ov, n, 100, &s1) != 0 || load(path, ov, n_ov, n, 200, &s2) != 0
        || count_allocs(&s1, &a1, &e1) != 0 || count_allocs(&s2, &a2, &e2) != 0)
        return -1;
    scn_fini(&s1);
    scn_fini(&s2);

    qsort(cpu, (size_t)runs, sizeof cpu[0], cmp);
    qsort(wall, (size_t)runs, sizeof wall[0], cmp);
    qsort(rate, (size_t)runs, sizeof rate[0], cmp);
    int m = runs / 2;
    printf("| %s | %d | %.6g | %" PRIu64 " | %.3f [%.3f, %.3f] | %.3f [%.3f, %.3f] | "
           "%.2f [%.2f, %.2f] | %.1f | %.2f | %" PRId64 " in %" PRIu64 " events |\n",
           s.algorithm, n, sim_time, events, cpu[m], cpu[0], cpu[runs - 1], wall[m], wall[0],
           wall[runs - 1], rate[m], rate[0], rate[runs - 1], (double)peak_kib / 1024.0,
           (double)(peak_kib - base_kib) / n, (int64_t)(a2 - a1), e2 - e1);
    fflush(stdout);
    scn_fini(&s);
    return 0;
}

int main(int argc, char **argv)
{
    if (argc < 4) {
        fprintf(stderr, "usage: bench_timing SCENARIO RUNS N1,N2,... [PATH=VALUE ...]\n");
        return 2;
    }
    int runs = atoi(argv[2]);
    if (runs < 1 || runs > 100) {
        fprintf(stderr, "bench_timing: error: RUNS must be in 1..100\n");
        return 2;
    }
    printf("| algorithm | nodes | simulated s | events | CPU s median [min, max] | "
           "wall s median [min, max] | M events per CPU s | peak RSS MiB | "
           "KiB per node | steady-state allocations |\n"
           "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n");
    fflush(stdout);
    char *list = strdup(argv[3]);
    int rc = 0;
    for (char *save = NULL, *t = strtok_r(list, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
        int n = atoi(t);
        pid_t pid = fork();
        if (pid == 0)
            _exit(one_size(argv[1], runs, n, argv + 4, argc - 4) == 0 ? 0 : 1);
        int st;
        if (pid < 0 || waitpid(pid, &st, 0) < 0 || !WIFEXITED(st) || WEXITSTATUS(st) != 0) {
            fprintf(stderr, "bench_timing: error: %d nodes failed\n", n);
            rc = 1;
        }
    }
    free(list);
    return rc;
}
