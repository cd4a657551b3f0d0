/* exact_util.h -- what the exact-outcome suites (test_exact_*.c, issue 14)
 * share: the protocol wrapper that replaces the trainer's gradient by a
 * chosen one and captures every node's parameters at the end, the tiny
 * scenario BASE, the targets, and readers of trace.csv and of a run
 * folder's leftovers.  Header-only (static functions), included by those
 * test files only.
 *
 * The protocols run wrapped: the wrapper replaces the trainer's gradient
 * by a chosen one and copies every node's parameters (and the mixing
 * weights, and the local sample counts) when the run asks the protocol for
 * its statistics at the end.  Two gradients make the math closed-form:
 *   zero    the models change only by averaging: after k synchronous
 *           rounds of D-PSGD or gossip local SGD, X = W^k X0;
 *   target  (x_i - t_i) / lr, so one SGD step from x_i lands on t_i
 *           exactly, whatever the number of local steps: a server that
 *           applies the mean of such gradients holds mean(t); FedAvg
 *           holds sum n_i t_i / sum n_i.
 */
#ifndef EXACT_UTIL_H
#define EXACT_UTIL_H

#include <check.h>
#include <dirent.h>
#include <errno.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "alg.h"
#include "alg_host.h"
#include "mdl_optim.h"
#include "test_util.h"

#define MAXN 24
#define MAXP 16
#define MAXE 256

enum { G_REAL, G_ZERO, G_TARGET };

static const alg_type *inner;
static alg_type wrapped;
static int grad_mode;
static double lr_used;
static double target[MAXN][MAXP];
static double fake[MAXN][MAXP];
static long   steps_of[MAXN];

/* what the run left */
static int    cap_n, cap_n_all, cap_server;
static size_t cap_P;
static double cap_x[MAXN + 2][MAXP];
static size_t cap_samples[MAXN];
static size_t cap_off[MAXN + 1];
static int    cap_nbr[MAXE];
static double cap_w[MAXE], cap_self[MAXN];

static inline void fake_step(alg_ctx *ctx, void *st, int i, const double *grad)
{
    steps_of[i]++;
    if (grad_mode == G_REAL) {
        inner->on_step_done(ctx, st, i, grad);
        return;
    }
    const double *x = alg_params_const(ctx, i);
    for (size_t k = 0; k < ctx->P; k++)
        fake[i][k] = grad_mode == G_ZERO ? 0.0 : (x[k] - target[i][k]) / lr_used;
    inner->on_step_done(ctx, st, i, fake[i]);
}

static inline int capture(const alg_ctx *ctx, const char **keys, double *values, int max)
{
    ck_assert_int_le(ctx->n_all, MAXN + 2);
    ck_assert_uint_le(ctx->P, MAXP);
    cap_n = ctx->n;
    cap_n_all = ctx->n_all;
    cap_server = ctx->server;
    cap_P = ctx->P;
    for (int i = 0; i < ctx->n_all; i++)
        memcpy(cap_x[i], alg_params_const(ctx, i), ctx->P * sizeof(double));
    for (int i = 0; i < ctx->n; i++)
        cap_samples[i] = alg_local_samples(ctx, i);
    const topo_graph *g = ctx->g;
    if (g && g->n == ctx->n && g->off[g->n] <= MAXE) {
        memcpy(cap_off, g->off, (size_t)(g->n + 1) * sizeof(size_t));
        memcpy(cap_nbr, g->nbr, g->off[g->n] * sizeof(int));
        memcpy(cap_w, g->w, g->off[g->n] * sizeof(double));
        memcpy(cap_self, g->self_w, (size_t)g->n * sizeof(double));
    }
    return inner->stats ? inner->stats(ctx, keys, values, max) : 0;
}

/* A replacement algorithm runs with its parameters' defaults (run.h):
 * the wrapper sets the scenario's values again before the protocol starts. */
static struct { const char *key; double num; const char *str; } wparam[8];
static int n_wparam;

static inline int w_shared_init(alg_ctx *ctx)
{
    for (int q = 0; q < n_wparam; q++) {
        int k = alg_params_index(inner, wparam[q].key);
        ck_assert_msg(k >= 0, "no parameter %s", wparam[q].key);
        double v = wparam[q].num;
        if (wparam[q].str) {
            const char *const *c = inner->params[k].choices;
            int j = 0;
            while (c[j] && strcmp(c[j], wparam[q].str) != 0)
                j++;
            ck_assert_ptr_nonnull(c[j]);
            v = j;
        }
        ctx->param[k] = v;
    }
    return inner->shared_init ? inner->shared_init(ctx) : 0;
}

static inline void wset(const char *key, double num, const char *str)
{
    wparam[n_wparam].key = key;
    wparam[n_wparam].num = num;
    wparam[n_wparam].str = str;
    n_wparam++;
}

/* spec: the algorithm's own parameters again, "key=value,key=choice". */
static inline const alg_type *wrap_p(const char *name, int mode, double lr, const char *spec)
{
    static char buf[256];
    n_wparam = 0;
    snprintf(buf, sizeof buf, "%s", spec);
    for (char *t = strtok(buf, ","); t; t = strtok(NULL, ",")) {
        char *eq = strchr(t, '=');
        ck_assert_ptr_nonnull(eq);
        *eq = '\0';
        char *end;
        double v = strtod(eq + 1, &end);
        wset(t, v, *end ? eq + 1 : NULL);
    }
    inner = alg_find(name);
    ck_assert_ptr_nonnull(inner);
    wrapped = *inner;
    wrapped.on_step_done = fake_step;
    wrapped.stats = capture;
    wrapped.shared_init = w_shared_init;
    grad_mode = mode;
    lr_used = lr;
    memset(steps_of, 0, sizeof steps_of);
    return &wrapped;
}

static inline const alg_type *wrap(const char *name, int mode, double lr)
{
    return wrap_p(name, mode, lr, "");
}

/* Node i starts from x_i[k] = a_i + k / 8 with a_i spread and distinct. */
static inline double spread_of(int i, size_t k) { return (double)((i * 5) % 7) - 3.0 + 0.125 * (double)k; }
static inline void spread_init(void *ctx, int node, double *x, size_t P)
{
    (void)ctx;
    for (size_t k = 0; k < P; k++)
        x[k] = spread_of(node, k);
}
static inline void zero_init(void *ctx, int node, double *x, size_t P)
{
    (void)ctx;
    (void)node;
    memset(x, 0, P * sizeof *x);
}

static inline void set_targets(int n, size_t P)
{
    for (int i = 0; i < n; i++)
        for (size_t k = 0; k < P; k++)
            target[i][k] = 0.5 * (double)(i + 1) - 0.25 * (double)k + 0.1 * (double)(i * k % 3);
}

/* A logistic model of 4 parameters, equal 10 ms steps (no noise), fast links. */
#define BASE(n, extra) \
    "{\"seed\": 2, \"nodes\": " #n ", \"model\": {\"kind\": \"logistic\"}," \
    " \"data\": {\"train\": 480, \"test\": 60, \"features\": 3" extra "}," \
    " \"compute\": {\"step_time_s\": 0.01}," \
    " \"network\": {\"latency_s\": 0.0001, \"bandwidth_Bps\": 1e9},"

static inline void run_wrapped(const char *json, const alg_type *a, void (*init)(void *, int, double *, size_t),
                        run_result *res)
{
    run_options opt = { .algorithm = a, .init_params = init };
    run_json(json, &opt, res);
}


/* ---- trace.csv rows, read back ---- */

typedef struct trace_row { int node; char kind[8]; double start, end; int peer; } trace_row;

static inline int read_trace(const char *path, trace_row *rows, int max)
{
    FILE *f = fopen(path, "r");
    ck_assert_ptr_nonnull(f);
    char line[512];
    int n = 0;
    ck_assert_ptr_nonnull(fgets(line, sizeof line, f));
    while (n < max && fgets(line, sizeof line, f)) {
        trace_row *r = &rows[n];
        char *fld[6], *p = line;
        int nf = 0;
        while (nf < 6 && p) {   /* strsep: empty fields count */
            fld[nf++] = p;
            p = strchr(p, ',');
            if (p)
                *p++ = '\0';
        }
        if (nf < 6)
            continue;
        r->node = atoi(fld[0]);
        snprintf(r->kind, sizeof r->kind, "%s", fld[1]);
        r->start = atof(fld[2]);
        r->end = atof(fld[3]);
        r->peer = fld[4][0] ? atoi(fld[4]) : -1;
        n++;
    }
    fclose(f);
    return n;
}

static inline void rm_run_dir(const char *dir)
{
    const char *files[] = { "trace.csv", "metrics.csv", "nodes.csv", "run.json" };
    char path[600];
    for (int k = 0; k < 4; k++) {
        snprintf(path, sizeof path, "%s/%s", dir, files[k]);
        unlink(path);
    }
    ck_assert_int_eq(rmdir(dir), 0);
}

/* Temporary files in dir; a folder the failed run removed has none (a run
 * folder holds no run.json or nothing: docs/outputs.md). */
static inline int tmp_files_in(const char *dir)
{
    DIR *d = opendir(dir);
    if (!d && errno == ENOENT)
        return 0;
    ck_assert_ptr_nonnull(d);
    int n = 0;
    struct dirent *e;
    while ((e = readdir(d)))
        if (strstr(e->d_name, ".tmp."))
            n++;
    closedir(d);
    return n;
}

#endif
