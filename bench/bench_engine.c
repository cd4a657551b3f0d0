/* bench_engine.c -- the classic hold model on the event engine: pop the
 * earliest event and schedule one at now + Exp(1), with a constant number of
 * pending events (10^3, 10^5, 10^6).  The same hold loop runs on three
 * queues in one process: A, the engine (a monotone radix queue) through
 * sim_engine_run, a handler and sim_engine_schedule_at; B, a bare binary
 * heap of the same 32-byte records with the layout and sift code the engine
 * had before the radix queue (sibling records in one cache line, bottom-up
 * removal, prefetch), fully inlined: the practical limit of a heap, so A/B
 * is what the radix queue buys net of the API, the cancellation check and
 * the run loop; C, a plain bare heap without the layout tricks.  The three
 * rotate their order run by run; each is timed in CPU time (getrusage, user
 * + sys) and wall time, reported as median, min and max over the runs.  The
 * exponential draws are pregenerated outside the timed loops and read
 * identically by all three, which must therefore end at the same simulated
 * time.  Output is a markdown table on stdout.  It does not measure
 * cancellation, growth of the queue or anything above the engine.
 */
/* For RUSAGE_THREAD (Linux), see cpu_now. */
#define _GNU_SOURCE

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
#define DEFAULT_OPS 10000000ull
#define BENCH_SEED 20240601u

static const size_t sizes[] = {1000, 100000, 1000000};

typedef struct timing {
    double cpu_s;
    double wall_s;
} timing;

/* The benchmark is single-threaded, so the calling thread's CPU time is the
 * measure.  RUSAGE_SELF would also bill other threads: the OpenBLAS that the
 * GSL link pulls in starts a worker thread that spins early in the process,
 * and RUSAGE_SELF charged ~0.07 s of it to whichever run came first.  Once
 * that thread exists, the kernel counts a thread's time in 4 ms ticks,
 * hence runs of about half a second or more (DEFAULT_OPS). */
#ifdef RUSAGE_THREAD
#define CPU_WHO RUSAGE_THREAD
#define CPU_WHO_NAME "RUSAGE_THREAD"
#else
#define CPU_WHO RUSAGE_SELF
#define CPU_WHO_NAME "RUSAGE_SELF"
#endif

static double
cpu_now(void)
{
    struct rusage ru;
    getrusage(CPU_WHO, &ru);
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

/* ---- B and C: bare heaps, everything inlined ---------------------------- */

typedef struct bare_event {
    double   time;
    uint64_t seq;
    uint32_t kind, target, gen, data;
} bare_event;

typedef struct bare_heap {
    bare_event *a;
    void       *mem;
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

/* tuned is a constant at each call site, so the compiler emits two loops:
 * B with the engine's former layout tricks (sibling records in one cache line,
 * prefetch of the great-grandchildren from 4096 pending on), C without. */
static inline double
bare_pop(bare_heap *h, const int tuned)
{
    bare_event *a = h->a;
    double top = a[0].time;
    size_t n = --h->n;
    if (n == 0)
        return top;
    bare_event last = a[n];
    int prefetch = tuned && n >= 4096;
    size_t i = 0;
    for (;;) {
        size_t c = 2 * i + 1;
        if (c >= n)
            break;
        if (prefetch && 8 * i + 14 < n) {
            const bare_event *g = &a[8 * i + 7];
            __builtin_prefetch(g);
            __builtin_prefetch(g + 2);
            __builtin_prefetch(g + 4);
            __builtin_prefetch(g + 6);
        }
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

static inline double
bare_hold(bare_heap *h, uint64_t ops, const double *draws, size_t *next, const int tuned)
{
    double now = 0.0;
    for (uint64_t k = 0; k < ops; k++) {
        now = bare_pop(h, tuned);
        bare_push(h, now + draws[(*next)++ & (N_DRAWS - 1)]);
    }
    return now;
}

static double
run_bare(size_t n, uint64_t warmup, uint64_t ops, const double *draws, timing *t,
         const int tuned)
{
    bare_heap h = {NULL, NULL, 0, 0};
    if (tuned) {
        size_t bytes = ((n + 1) * sizeof(bare_event) + 63) / 64 * 64;
        h.mem = aligned_alloc(64, bytes);
        h.a = (bare_event *)h.mem + 1;
    } else {
        h.mem = malloc(n * sizeof(bare_event));
        h.a = h.mem;
    }
    if (h.mem == NULL)
        return -1.0;
    size_t next = 0;
    for (size_t i = 0; i < n; i++)
        bare_push(&h, draws[next++ & (N_DRAWS - 1)]);
    if (tuned)
        bare_hold(&h, warmup, draws, &next, 1);
    else
        bare_hold(&h, warmup, draws, &next, 0);

    double c0 = cpu_now(), w0 = wall_now();
    double now = tuned ? bare_hold(&h, ops, draws, &next, 1)
                       : bare_hold(&h, ops, draws, &next, 0);
    t->wall_s = wall_now() - w0;
    t->cpu_s = cpu_now() - c0;
    free(h.mem);
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
        if (argv[1][0] < '0' || argv[1][0] > '9' || errno != 0 || *end != '\0' || v == 0) {
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
           " %d runs; A, B and C rotate their order from run to run.\n"
           "Exp(1) draws pregenerated (%u values, cycled), read identically by A, B and C.\n"
           "M ev/s = million hold operations (one pop + one push) per second:"
           " median [min, max].\n"
           "A = engine, a radix queue (sim_engine_run + handler + sim_engine_schedule_at);"
           " B = bare binary heap, the engine's former layout and sift code, inlined;"
           " C = plain bare heap (malloc'd array, no prefetch).\n"
           "CPU = getrusage(%s) user + sys; wall = CLOCK_MONOTONIC.\n\n",
           (unsigned long long)ops, RUNS, N_DRAWS, CPU_WHO_NAME);
    printf("| pending | A engine, CPU | B bare heap, CPU | A/B CPU time | C plain heap, CPU"
           " | A wall | B wall | C wall | peak RSS |\n");
    printf("|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n");
    fflush(stdout);

    int status = 0;
    for (size_t s = 0; s < sizeof(sizes) / sizeof(sizes[0]); s++) {
        size_t n = sizes[s];
        uint64_t warmup = n > 100000 ? n : 100000;
        timing t[3][RUNS];
        for (int run = 0; run < RUNS; run++) {
            /* Rotate who goes first so no variant always inherits a warm
             * or a cold cache and allocator from another. */
            double reached[3];
            for (int k = 0; k < 3; k++) {
                int v = (run + k) % 3;
                if (v == 0)
                    reached[v] = run_engine(n, warmup, ops, draws, &t[v][run]);
                else
                    reached[v] = run_bare(n, warmup, ops, draws, &t[v][run], v == 1);
            }
            if (reached[0] < 0.0 || reached[1] < 0.0 || reached[2] < 0.0) {
                fprintf(stderr, "bench_engine: error: run failed at %zu pending (out of memory?)\n",
                        n);
                free(draws);
                return 1;
            }
            /* Same draws and the same (time, seq) order: all must end at
             * the very same simulated time, or they did not do the same
             * work. */
            if (reached[0] != reached[1] || reached[0] != reached[2]) {
                fprintf(stderr, "bench_engine: error: variants diverged at %zu pending"
                        " (%.17g, %.17g, %.17g)\n", n, reached[0], reached[1], reached[2]);
                status = 1;
            }
        }
        summary c[3], w[3];
        for (int v = 0; v < 3; v++) {
            c[v] = rates(t[v], 1, ops);
            w[v] = rates(t[v], 0, ops);
        }
        struct rusage ru;
        getrusage(RUSAGE_SELF, &ru);
        printf("| %zu | %.1f [%.1f, %.1f] | %.1f [%.1f, %.1f] | %.2f | %.1f [%.1f, %.1f]",
               n, c[0].med, c[0].min, c[0].max, c[1].med, c[1].min, c[1].max,
               median_cpu(t[0]) / median_cpu(t[1]), c[2].med, c[2].min, c[2].max);
        for (int v = 0; v < 3; v++)
            printf(" | %.1f [%.1f, %.1f]", w[v].med, w[v].min, w[v].max);
        printf(" | %.0f MiB |\n", (double)ru.ru_maxrss / 1024.0);
        fflush(stdout);
    }
    printf("\nPeak RSS is the process's ru_maxrss after that row (it never decreases);"
           " the draws take 8 MiB of it.\n");
    free(draws);
    return status;
}
