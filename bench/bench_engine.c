/* bench_engine.c -- the classic hold model on the event engine: pop the
 * earliest event and schedule one at now + Exp(1), with a constant number of
 * pending events (10^3, 10^5, 10^6).  The same hold loop also runs on a bare
 * binary heap of the same 32-byte records, written here with the same sift
 * code and fully inlined: the practical limit for this data layout, so the
 * ratio measures what the engine's API, cancellation check and run loop
 * cost.  Engine (A) and bare heap (B) alternate within one process, run by
 * run, and are timed in CPU time (getrusage, user + sys) and wall time;
 * each cell is the median of the runs with min and max.  The exponential
 * draws are pregenerated outside the timed loops and read identically by A
 * and B.  Output is a markdown table on stdout.  It does not measure
 * cancellation, growth of the heap or anything above the engine.
 */
#include "sim_engine.h"
#include "sim_rng.h"

#include <errno.h>
#include <gsl/gsl_randist.h>
#include <gsl/gsl_rng.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#define RUNS 5
#define N_DRAWS (1u << 20) /* 8 MiB: long enough not to impose a short cycle */
#define DEFAULT_OPS 5000000ull
#define BENCH_SEED 20240601u

static const size_t sizes[] = {1000, 100000, 1000000};

typedef struct timing {
    double cpu_s;
    double wall_s;
} timing;

static double
cpu_now(void)
{
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return (double)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec)
           + 1e-6 * (double)(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec);
}

static double
wall_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* ---- A: the engine ------------------------------------------------------ */

typedef struct hold {
    sim_engine   *e;
    const double *draws;
    size_t        next;
    uint64_t      left;
} hold;

static int
hold_handler(void *ctx, const sim_event *ev)
{
    hold *h = ctx;
    double dt = h->draws[h->next++ & (N_DRAWS - 1)];
    if (sim_engine_schedule_at(h->e, ev->time + dt, 0, 0, 0) != 0)
        return -1;
    return --h->left == 0;
}

/* Returns the simulated time reached, or -1 on failure. */
static double
run_engine(size_t n, uint64_t warmup, uint64_t ops, const double *draws, timing *t)
{
    sim_engine *e = sim_engine_create(1, n);
    if (e == NULL)
        return -1.0;
    hold h = {e, draws, 0, 0};
    for (size_t i = 0; i < n; i++)
        if (sim_engine_schedule_at(e, draws[h.next++ & (N_DRAWS - 1)], 0, 0, 0) != 0)
            goto out_fail;
    h.left = warmup;
    if (warmup > 0 && sim_engine_run(e, INFINITY, hold_handler, &h) != SIM_STOP_HANDLER)
        goto out_fail;

    h.left = ops;
    double c0 = cpu_now(), w0 = wall_now();
    sim_stop stop = sim_engine_run(e, INFINITY, hold_handler, &h);
    t->wall_s = wall_now() - w0;
    t->cpu_s = cpu_now() - c0;
    if (stop != SIM_STOP_HANDLER || sim_engine_stop_code(e) != 1)
        goto out_fail;
    double reached = sim_engine_now(e);
    sim_engine_destroy(e);
    return reached;

out_fail:
    sim_engine_destroy(e);
    return -1.0;
}

/* ---- B: a bare heap, everything inlined -------------------------------- */

typedef struct bare_event {
    double   time;
    uint64_t seq;
    uint32_t kind, target, gen, data;
} bare_event;

typedef struct bare_heap {
    bare_event *a;
    size_t      n;
    uint64_t    seq;
} bare_heap;

static inline int
bare_earlier(const bare_event *x, const bare_event *y)
{
    return (x->time < y->time) | ((x->time == y->time) & (x->seq < y->seq));
}

static inline void
bare_push(bare_heap *h, double time)
{
    bare_event ev = {time, h->seq++, 0, 0, 0, 0};
    size_t i = h->n++;
    while (i > 0) {
        size_t p = (i - 1) / 2;
        if (!bare_earlier(&ev, &h->a[p]))
            break;
        h->a[i] = h->a[p];
        i = p;
    }
    h->a[i] = ev;
}

static inline bare_event
bare_pop(bare_heap *h)
{
    bare_event *a = h->a;
    bare_event top = a[0];
    size_t n = --h->n;
    if (n == 0)
        return top;
    bare_event last = a[n];
    size_t i = 0;
    for (;;) {
        size_t c = 2 * i + 1;
        if (c >= n)
            break;
        if (c + 1 < n)
            c += (size_t)bare_earlier(&a[c + 1], &a[c]);
        if (!bare_earlier(&a[c], &last))
            break;
        a[i] = a[c];
        i = c;
    }
    a[i] = last;
    return top;
}

static double
run_bare(size_t n, uint64_t warmup, uint64_t ops, const double *draws, timing *t)
{
    bare_heap h = {malloc(n * sizeof(bare_event)), 0, 0};
    if (h.a == NULL)
        return -1.0;
    size_t next = 0;
    for (size_t i = 0; i < n; i++)
        bare_push(&h, draws[next++ & (N_DRAWS - 1)]);
    double now = 0.0;
    for (uint64_t k = 0; k < warmup; k++) {
        now = bare_pop(&h).time;
        bare_push(&h, now + draws[next++ & (N_DRAWS - 1)]);
    }

    double c0 = cpu_now(), w0 = wall_now();
    for (uint64_t k = 0; k < ops; k++) {
        now = bare_pop(&h).time;
        bare_push(&h, now + draws[next++ & (N_DRAWS - 1)]);
    }
    t->wall_s = wall_now() - w0;
    t->cpu_s = cpu_now() - c0;
    free(h.a);
    return now;
}

/* ---- statistics and report ---------------------------------------------- */

static int
dbl_cmp(const void *pa, const void *pb)
{
    double a = *(const double *)pa, b = *(const double *)pb;
    return (a > b) - (a < b);
}

typedef struct summary {
    double med, min, max;
} summary;

/* Million events per second over the runs: median, min, max. */
static summary
rates(const timing *t, int cpu, uint64_t ops)
{
    double r[RUNS];
    for (int i = 0; i < RUNS; i++)
        r[i] = (double)ops / (cpu ? t[i].cpu_s : t[i].wall_s) / 1e6;
    qsort(r, RUNS, sizeof(r[0]), dbl_cmp);
    return (summary){r[RUNS / 2], r[0], r[RUNS - 1]};
}

static double
median_cpu(const timing *t)
{
    double c[RUNS];
    for (int i = 0; i < RUNS; i++)
        c[i] = t[i].cpu_s;
    qsort(c, RUNS, sizeof(c[0]), dbl_cmp);
    return c[RUNS / 2];
}

static void
usage(FILE *f)
{
    fprintf(f, "usage: bench_engine [OPS]\n"
               "  OPS  timed hold operations per run (default %llu)\n",
            DEFAULT_OPS);
}

int
main(int argc, char **argv)
{
    uint64_t ops = DEFAULT_OPS;
    if (argc > 2 || (argc == 2 && strcmp(argv[1], "--help") == 0)) {
        usage(argc > 2 ? stderr : stdout);
        return argc > 2 ? 2 : 0;
    }
    if (argc == 2) {
        char *end;
        errno = 0;
        unsigned long long v = strtoull(argv[1], &end, 10);
        if (errno != 0 || *end != '\0' || end == argv[1] || v == 0) {
            fprintf(stderr, "bench_engine: error: OPS must be a positive integer, got '%s'\n",
                    argv[1]);
            return 2;
        }
        ops = v;
    }

    gsl_rng *r = sim_rng_stream_create(BENCH_SEED, SIM_RNG_NO_NODE, SIM_RNG_COMPUTE);
    double *draws = malloc(N_DRAWS * sizeof(*draws));
    if (r == NULL || draws == NULL) {
        fprintf(stderr, "bench_engine: error: out of memory\n");
        return 1;
    }
    for (size_t i = 0; i < N_DRAWS; i++)
        draws[i] = gsl_ran_exponential(r, 1.0);
    gsl_rng_free(r);

    printf("Hold model: %llu timed operations per run after a warm-up of max(n, 10^5),"
           " %d runs, A (engine) and B (bare heap) alternating.\n"
           "Exp(1) draws pregenerated (%u values, cycled), read identically by A and B.\n"
           "M ev/s = million hold operations (one pop + one push) per second:"
           " median [min, max].\n\n",
           (unsigned long long)ops, RUNS, N_DRAWS);
    printf("| pending | engine, CPU | bare heap, CPU | engine/bare CPU time"
           " | engine, wall | bare heap, wall | peak RSS |\n");
    printf("|---:|---:|---:|---:|---:|---:|---:|\n");
    fflush(stdout);

    int status = 0;
    for (size_t s = 0; s < sizeof(sizes) / sizeof(sizes[0]); s++) {
        size_t n = sizes[s];
        uint64_t warmup = n > 100000 ? n : 100000;
        timing ta[RUNS], tb[RUNS];
        for (int run = 0; run < RUNS; run++) {
            /* Alternate who goes first so neither always inherits a warm
             * or a cold cache and allocator from the other. */
            double ra, rb;
            if (run % 2 == 0) {
                ra = run_engine(n, warmup, ops, draws, &ta[run]);
                rb = run_bare(n, warmup, ops, draws, &tb[run]);
            } else {
                rb = run_bare(n, warmup, ops, draws, &tb[run]);
                ra = run_engine(n, warmup, ops, draws, &ta[run]);
            }
            if (ra < 0.0 || rb < 0.0) {
                fprintf(stderr, "bench_engine: error: run failed at %zu pending (out of memory?)\n",
                        n);
                free(draws);
                return 1;
            }
            /* Same draws and the same (time, seq) order: both must end
             * at the very same simulated time, or they did not do the
             * same work. */
            if (ra != rb) {
                fprintf(stderr, "bench_engine: error: engine and bare heap diverged at %zu"
                        " pending (%.17g vs %.17g)\n", n, ra, rb);
                status = 1;
            }
        }
        summary ac = rates(ta, 1, ops), bc = rates(tb, 1, ops);
        summary aw = rates(ta, 0, ops), bw = rates(tb, 0, ops);
        struct rusage ru;
        getrusage(RUSAGE_SELF, &ru);
        printf("| %zu | %.1f [%.1f, %.1f] | %.1f [%.1f, %.1f] | %.2f"
               " | %.1f [%.1f, %.1f] | %.1f [%.1f, %.1f] | %.0f MiB |\n",
               n, ac.med, ac.min, ac.max, bc.med, bc.min, bc.max,
               median_cpu(ta) / median_cpu(tb),
               aw.med, aw.min, aw.max, bw.med, bw.min, bw.max,
               (double)ru.ru_maxrss / 1024.0);
        fflush(stdout);
    }
    printf("\nPeak RSS is the process's ru_maxrss after that row (it never decreases);"
           " the draws take 8 MiB of it.\n");
    free(draws);
    return status;
}
