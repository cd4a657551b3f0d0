/* bench_topo.c -- times topology statistics at sizes the tests do not
 * reach: building the graph (igraph), the second-largest eigenvalue modulus
 * of the mixing matrix by the dense solver (n <= 1024) and by ARPACK, and
 * the whole topo_compute_stats (degrees, diameter, spectrum) where its
 * automatic solver choice is the one in the row.  Medians of
 * CPU time (getrusage) and wall time over RUNS runs, as a markdown table
 * for bench/RESULTS.md.  Run by `make bench`; tests never time anything.
 *
 * usage: bench_topo [RUNS]
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <time.h>

#include "topo.h"

static double cpu_now(void)
{
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
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

static double median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof *v, cmp);
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

typedef struct bench_case {
    const char *label;
    topo_spec   spec;
    topo_solver solver;
} bench_case;

int main(int argc, char **argv)
{
    int runs = argc > 1 ? atoi(argv[1]) : 3;
    if (runs < 1 || runs > 50) {
        fprintf(stderr, "bench_topo: error: RUNS must be in 1..50\n");
        return 2;
    }
    const bench_case cases[] = {
        { "random_regular d=4, dense", { .kind = TOPO_RANDOM_REGULAR, .n = 1024, .degree = 4 },
          TOPO_SOLVER_DENSE },
        { "random_regular d=4, arpack", { .kind = TOPO_RANDOM_REGULAR, .n = 1024, .degree = 4 },
          TOPO_SOLVER_ARPACK },
        { "random_regular d=4", { .kind = TOPO_RANDOM_REGULAR, .n = 10000, .degree = 4 },
          TOPO_SOLVER_ARPACK },
        { "random_regular d=8", { .kind = TOPO_RANDOM_REGULAR, .n = 10000, .degree = 8 },
          TOPO_SOLVER_ARPACK },
        { "erdos_renyi p=0.002", { .kind = TOPO_ERDOS_RENYI, .n = 10000, .p = 0.002 },
          TOPO_SOLVER_ARPACK },
        { "exponential", { .kind = TOPO_EXPONENTIAL, .n = 10000 }, TOPO_SOLVER_ARPACK },
        { "hypercube d=13", { .kind = TOPO_HYPERCUBE, .n = 8192 }, TOPO_SOLVER_ARPACK },
        { "torus2d 100x100", { .kind = TOPO_TORUS2D, .n = 10000, .rows = 100, .cols = 100 },
          TOPO_SOLVER_ARPACK },
        { "ring (gap 1.3e-7)", { .kind = TOPO_RING, .n = 10000 }, TOPO_SOLVER_ARPACK },
        { "random_regular d=4", { .kind = TOPO_RANDOM_REGULAR, .n = 100000, .degree = 4 },
          TOPO_SOLVER_ARPACK },
    };
    printf("| graph | n | edges | build CPU s | solver | SLEM CPU s | lambda2 "
           "| all stats CPU s | all stats wall s | diameter |\n");
    printf("|---|---:|---:|---:|---|---:|---:|---:|---:|---:|\n");
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        const bench_case *bc = &cases[c];
        double t_build[50], t_slem[50], t_stats[50], w_stats[50];
        double lambda2 = NAN;
        topo_stats st = { 0 };
        size_t edges = 0;
        int slem_rc = 0;
        /* whole statistics only where the automatic choice is this solver */
        int with_stats = (bc->solver == TOPO_SOLVER_DENSE) == (bc->spec.n <= TOPO_DENSE_MAX);
        for (int k = 0; k < runs; k++) {
            char err[512];
            double c0 = cpu_now();
            topo_graph *g = topo_build(&bc->spec, 7, err, sizeof err);
            t_build[k] = cpu_now() - c0;
            if (g == NULL) {
                fprintf(stderr, "bench_topo: error: %s\n", err);
                return 1;
            }
            edges = g->n_edges;
            c0 = cpu_now();
            slem_rc = topo_slem(g, bc->solver, &lambda2);
            t_slem[k] = cpu_now() - c0;
            if (slem_rc < 0) {
                fprintf(stderr, "bench_topo: error: %s: solver failed\n", bc->label);
                return 1;
            }
            c0 = cpu_now();
            double w0 = wall_now();
            if (with_stats && topo_compute_stats(g, &st) != 0) {
                fprintf(stderr, "bench_topo: error: out of memory\n");
                return 1;
            }
            t_stats[k] = cpu_now() - c0;
            w_stats[k] = wall_now() - w0;
            topo_destroy(g);
        }
        printf("| %s | %d | %zu | %.3f | %s | %.3f | ", bc->label, bc->spec.n, edges,
               median(t_build, runs), bc->solver == TOPO_SOLVER_DENSE ? "dense" : "arpack",
               median(t_slem, runs));
        if (slem_rc == 0)
            printf("%.12f |", lambda2);
        else
            printf("not converged |");
        if (!with_stats)
            printf(" | | |\n");
        else if (st.diameter_ok)
            printf(" %.3f | %.3f | %d |\n", median(t_stats, runs), median(w_stats, runs),
                   st.diameter);
        else
            printf(" %.3f | %.3f | skipped |\n", median(t_stats, runs), median(w_stats, runs));
        fflush(stdout);
    }
    return 0;
}
