/* test_setup_costs.c -- what issue 17's set-up and fixed-cost work must
 * keep exact: the printf-free %.10g of the CSV writers against snprintf on
 * a million values (every magnitude, near-ties, neighbours of powers of
 * ten, time grids), trace.csv and nodes.csv rows byte for byte; the memory estimate's
 * formula to the byte on small cases and the refusal at the limit; the
 * bounded topology statistics against the full ones and closed forms,
 * and their cache across runs.
 */
#include <check.h>
#include <math.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "out.h"
#include "run_internal.h"
#include "test_util.h"

static void expect_g10(double v)
{
    char want[64], got[OUT_G10_MAX + 1];
    snprintf(want, sizeof want, "%.10g", v);
    if (isnan(v))
        strcpy(want, "nan");
    else if (isinf(v))
        strcpy(want, v > 0 ? "inf" : "-inf");
    size_t n = out_fmt_g10(got, v);
    got[n] = '\0';
    ck_assert_msg(strcmp(want, got) == 0, "%.17g: printf \"%s\", out_fmt_g10 \"%s\"", v, want,
                  got);
}

/* xorshift64*: the test's own reproducible stream */
static uint64_t next(uint64_t *s)
{
    *s ^= *s >> 12;
    *s ^= *s << 25;
    *s ^= *s >> 27;
    return *s * 2685821657736338717ull;
}

START_TEST(test_g10_matches_printf)
{
    static const double fixed[] = { 0.0, -0.0, 1, -1, 0.5, 1e-4, 9.99999999995e-5, 1e10,
                                    9999999999.5, 9999999999.4, 9999999999, 0.00012345678905,
                                    123456.78905, 0.1, 0.2, 0.3, 1.0 / 3, 2.0 / 3, 1e-5, 1e15,
                                    NAN, INFINITY, -INFINITY, 5e-324, 1.7976931348623157e308 };
    for (size_t i = 0; i < sizeof fixed / sizeof fixed[0]; i++)
        expect_g10(fixed[i]);
    /* neighbours of every power of ten and of every half-way 10-digit decimal */
    for (int e = -6; e <= 12; e++) {
        double p = pow(10, e);
        double v = p;
        for (int k = 0; k < 50; k++, v = nextafter(v, 0))
            expect_g10(v), expect_g10(-v);
        v = p;
        for (int k = 0; k < 50; k++, v = nextafter(v, INFINITY))
            expect_g10(v);
    }
    uint64_t s = 88172645463325252ull;
    char txt[64];
    for (int i = 0; i < 100000; i++) {
        /* a ten-digit decimal and a 5 after it: the ties printf must decide */
        int e = (int)(next(&s) % 19) - 6;
        uint64_t m = 1000000000u + next(&s) % 9000000000u;
        snprintf(txt, sizeof txt, "%" PRIu64 "5e%d", m, e - 10);
        double v = strtod(txt, NULL);
        expect_g10(v);
        expect_g10(nextafter(v, 0));
        expect_g10(nextafter(v, INFINITY));
    }
    for (int i = 0; i < 300000; i++) {
        /* random magnitudes, random bits */
        double u = (double)(next(&s) >> 11) / 9007199254740992.0;
        double v = pow(10, -7 + 19 * u);
        expect_g10(i & 1 ? -v : v);
        uint64_t bits = next(&s);
        double w;
        memcpy(&w, &bits, sizeof w);
        expect_g10(w);
    }
    /* what a trace holds: multiples of step times, byte counts */
    for (int i = 0; i < 300000; i++) {
        expect_g10(i * 0.01);
        expect_g10(i * 0.0105 + 0.0005);
        expect_g10((double)i * 1e6);
        expect_g10((double)i * 3.25);
    }
}
END_TEST

START_TEST(test_trace_row_bytes)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    ck_assert_ptr_nonnull(f);
    out_trace_row rows[] = {
        { 0, "compute", 0, 0.0105, -1, 0 },
        { 12345, "send", 1.25, 1.2500008, 7, 1e6 },
        { -3, "recv", 1e-5, 123456789012.5, 0, 256 },
        { 2, "a_kind_name_longer_than_thirty_two_bytes", 1.0 / 3, NAN, 99, INFINITY },
    };
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++)
        out_trace_write(f, &rows[i]);
    fclose(f);
    ck_assert_str_eq(buf, "0,compute,0,0.0105,,0\n"
                          "12345,send,1.25,1.2500008,7,1000000\n"
                          "-3,recv,1e-05,1.23456789e+11,0,256\n"
                          "2,a_kind_name_longer_than_thirty_two_bytes,0.3333333333,nan,99,inf\n");
    free(buf);
}
END_TEST


/* nodes.csv rows: the buffer writer against the fprintf it replaced, on
 * extreme integers and every kind of double (negative, tiny, huge, nan,
 * inf, -0), and two rows pinned as text. */
static void nodes_row_printf(FILE *f, const out_node_row *r)
{
    fprintf(f, "%d,", r->node);
    out_fmt_double(f, r->slowdown);
    fprintf(f, ",%" PRIu64 ",", r->steps);
    out_fmt_double(f, r->compute_s);
    fputc(',', f);
    out_fmt_double(f, r->idle_s);
    fputc(',', f);
    out_fmt_double(f, r->uplink_busy_s);
    fputc(',', f);
    out_fmt_double(f, r->bytes_sent);
    fputc(',', f);
    out_fmt_double(f, r->bytes_received);
    fprintf(f, ",%" PRIu64 ",%" PRIu64 ",", r->msgs_sent, r->msgs_received);
    out_fmt_double(f, r->network_s);
    fputc(',', f);
    out_fmt_double(f, r->down_s);
    fprintf(f, ",%" PRIu64 ",%" PRIu64 "\n", r->msgs_lost, r->steps_lost);
}

/* The run's trace writer (block, memo) writes the bytes of out_trace_write
 * row after row: values repeated (memo hits), values whose bits collide in
 * the memo's slots, -0 next to 0, a long kind between buffered rows, and
 * more rows than one block holds. */
START_TEST(test_trace_writer_bytes)
{
    char *want = NULL, *got = NULL;
    size_t wl = 0, gl = 0;
    FILE *fw = open_memstream(&want, &wl), *fg = open_memstream(&got, &gl);
    ck_assert_ptr_nonnull(fw);
    ck_assert_ptr_nonnull(fg);
    static out_trace_writer w;   /* 66 KB: not on the stack */
    out_trace_header(fw);
    out_trace_begin(&w, fg);
    uint64_t s = 4101842887655102017ull;
    for (int i = 0; i < 20000; i++) {
        uint64_t u = next(&s);
        double t = (double)(u % 64) * 0.0008;            /* few values: memo hits */
        double t2 = (double)(next(&s) >> 11) * 0x1p-40;  /* many: misses, collisions */
        out_trace_row r = { (int)(u % 5) - 2, i % 3 ? "send" : "compute",
                            i % 7 ? t : -0.0, i % 2 ? t2 : t, (int)(u % 4) - 1,
                            i % 5 ? 1e6 : (double)i };
        if (i == 777 || i == 19999)
            r.kind = "a_kind_name_longer_than_thirty_two_bytes";
        out_trace_write(fw, &r);
        out_trace_add(&w, &r);
    }
    out_trace_flush(&w);
    fclose(fw);
    fclose(fg);
    ck_assert_uint_gt(wl, 2 * OUT_TRACE_BLOCK);
    ck_assert_uint_eq(gl, wl);
    ck_assert_msg(memcmp(want, got, wl) == 0, "the trace writer's bytes differ");
    free(want);
    free(got);
}
END_TEST

START_TEST(test_nodes_row_bytes)
{
    char *a = NULL, *b = NULL;
    size_t la = 0, lb = 0;
    FILE *fa = open_memstream(&a, &la), *fb = open_memstream(&b, &lb);
    ck_assert_ptr_nonnull(fa);
    ck_assert_ptr_nonnull(fb);
    const double d[] = { 0, -0.0, 1, -1, 0.1, 1.0 / 3, -2.5e-7, 123456789012.5, 1e300,
                         -1e-300, NAN, INFINITY, -INFINITY, 6e6, 0.0048 };
    const uint64_t u[] = { 0, 1, 9, 10, 99999, UINT32_MAX, (uint64_t)1 << 53, UINT64_MAX };
    const int nd[] = { 0, 7, 99999, 2147483647, -1, -2147483647 - 1 };
    size_t D = sizeof d / sizeof d[0], U = sizeof u / sizeof u[0];
    for (size_t i = 0; i < 400; i++) {
        out_node_row r = {
            .node = nd[i % 6], .slowdown = d[i % D], .steps = u[i % U],
            .compute_s = d[(i + 1) % D], .idle_s = d[(i + 2) % D],
            .uplink_busy_s = d[(i + 3) % D], .bytes_sent = d[(i + 4) % D],
            .bytes_received = d[(i + 5) % D], .msgs_sent = u[(i + 1) % U],
            .msgs_received = u[(i + 2) % U], .network_s = d[(i + 6) % D],
            .down_s = d[(i / 3) % D], .msgs_lost = u[(i / 2) % U], .steps_lost = u[(i / 5) % U],
        };
        out_nodes_write(fa, &r);
        nodes_row_printf(fb, &r);
    }
    fclose(fa);
    fclose(fb);
    ck_assert_uint_eq(la, lb);
    ck_assert_str_eq(a, b);
    free(a);
    free(b);
    char *c = NULL;
    size_t lc = 0;
    FILE *fc = open_memstream(&c, &lc);
    out_node_row r1 = { 12, 1, 3, 0.02387408562, 0.0008636585091, 0.0048, 6e6, 5e6, 6, 5,
                        0, 0, 0, 0, .has_mem = 0 };
    out_node_row r2 = { -5, 10, UINT64_MAX, -0.25, NAN, INFINITY, 1e12, -0.0, 0, 42,
                        1.0 / 3, 1e-300, 7, 18446744073709551614u, .has_mem = 0 };
    /* the memory model's columns (progressive freezing) through the same row */
    out_node_row r3 = { 0, 1, 2, 0.5, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, .has_mem = 1,
                        .frozen_layers = 2, .mem_exceeded = 1, .mem_params = 8e3,
                        .mem_grads = 1.0 / 3, .mem_optim = 0, .mem_acts = 2.5e-7,
                        .mem_total = 1e20, .mem_peak = -1, .mem_capacity = 4096 };
    out_nodes_write(fc, &r1);
    out_nodes_write(fc, &r2);
    out_nodes_write(fc, &r3);
    fclose(fc);
    ck_assert_str_eq(c, "12,1,3,0.02387408562,0.0008636585091,0.0048,6000000,5000000,6,5,0,0,0,0\n"
                        "-5,10,18446744073709551615,-0.25,nan,inf,1e+12,-0,0,42,0.3333333333,"
                        "1e-300,7,18446744073709551614\n"
                        "0,1,2,0.5,0,0,0,0,0,0,0,0,0,0,2,8000,0.3333333333,0,2.5e-07,1e+20,-1,4096,1\n");
    free(c);
}
END_TEST


/* 12 MiB for the process, 1536 bytes a node, 64 an edge, 8-byte
 * parameters x copies per node, the data sets' arrays as held (doubles,
 * int labels, a size_t partition index per training sample). */
static double estimate_of(const char *json)
{
    scn_scenario s;
    scn_error err;
    run_sim *r;
    ck_assert_msg(prepare_json(json, &s, &r, &err) == 0, "%s", err.msg);
    double e = run_i_memory_estimate(r);
    run_destroy(r);
    scn_fini(&s);
    return e;
}

START_TEST(test_memory_estimate_formula)
{
    static const char *const fmt =
        "{\"seed\": 1, \"nodes\": 4, \"topology\": {\"kind\": \"ring\"},"
        " \"model\": {\"kind\": \"softmax\"}, \"data\": {\"train\": 100, \"test\": 20,"
        " \"features\": 10, \"classes\": 3}, \"algorithm\": {\"name\": \"dpsgd\", \"lr\": 0.1,"
        " \"batch\": 8}, %s \"stop\": {\"steps\": 5}}";
    char json[1024];
    snprintf(json, sizeof json, fmt, "");
    /* P = 10 x 3 + 3 = 33: models 4 x 33 x 4 x 8 = 4224; data 100 x 10 x 8 +
     * 100 x 4 + 20 x 10 x 8 + 20 x 4 + 100 x 8 = 10880; nodes 4 x 1536;
     * edges 4 x 64 */
    double base = 12.0 * 1048576;
    ck_assert_double_eq(estimate_of(json), base + 4224 + 10880 + 6144 + 256);
    snprintf(json, sizeof json, fmt, "\"optimizer\": {\"momentum\": 0.9},");
    ck_assert_double_eq(estimate_of(json), base + 5280 + 10880 + 6144 + 256);
    /* timing-only: no data, no model; the built ring's 1000 edges */
    ck_assert_double_eq(estimate_of(
        "{\"nodes\": 1000, \"topology\": {\"kind\": \"ring\"}, \"model\": {\"kind\": "
        "\"none\", \"message_bytes\": 100}, \"algorithm\": {\"name\": \"dpsgd\"},"
        " \"stop\": {\"steps\": 5}}"), base + 1000 * 1536.0 + 1000 * 64);
    /* AD-PSGD declares its active half's random streams: 500 x (5000 bytes
     * of mt19937 state + the 16-byte gsl_rng record) */
    ck_assert_double_eq(estimate_of(
        "{\"nodes\": 1000, \"topology\": {\"kind\": \"ring\"}, \"model\": {\"kind\": "
        "\"none\", \"message_bytes\": 100}, \"algorithm\": {\"name\": \"adpsgd\"},"
        " \"stop\": {\"steps\": 5}}"), base + 1000 * 1536.0 + 1000 * 64 + 500 * 5016.0);
}
END_TEST

START_TEST(test_memory_refusal_at_the_limit)
{
    /* before the graph exists a ring counts 2n edges: 12 MiB + 1000 x 1536
     * + 2000 x 64 = 14246912 bytes */
    static const char *const fmt =
        "{\"nodes\": %d, \"topology\": {\"kind\": \"ring\"}, \"model\": {\"kind\": "
        "\"none\", \"message_bytes\": 100}, \"algorithm\": {\"name\": \"dpsgd\"},"
        " \"limits\": {\"memory_bytes\": %.0f}, \"stop\": {\"steps\": 5}}";
    char json[1024];
    snprintf(json, sizeof json, fmt, 1000, 14246912.0);
    ck_assert_double_eq(estimate_of(json), 14182912.0);
    snprintf(json, sizeof json, fmt, 1000, 14246911.0);
    expect_prepare_error(json, "test.json: error: this run needs about 14.2 MB of memory (process "
                         "12.6 MB, data 0 B, per-node state 1.54 MB, topology 128 KB), more "
                         "than the limit of 14.2 MB (limits.memory_bytes); lower the size, set "
                         "limits.memory_bytes, or run with --force");
    /* a timing-only ring of 10^6 nodes (1.2 GB measured) fits in 4 GiB */
    snprintf(json, sizeof json, fmt, 1000000, 4294967296.0);
    ck_assert_double_eq(estimate_of(json), 12.0 * 1048576 + 1e6 * 1536 + 1e6 * 64);
}
END_TEST

static topo_graph *ring(int n)
{
    topo_spec sp = { .kind = TOPO_RING, .n = n };
    char m[256];
    topo_graph *g = topo_build(&sp, 1, m, sizeof m);
    ck_assert_msg(g != NULL, "%s", m);
    return g;
}

/* A ring built as a ring lattice of one neighbour per side: the same
 * graph, which the bounded statistics solve numerically (no closed form
 * for lattices). */
static topo_graph *lattice_ring(int n)
{
    topo_spec sp = { .kind = TOPO_RING_LATTICE, .n = n, .k = 1 };
    char m[256];
    topo_graph *g = topo_build(&sp, 1, m, sizeof m);
    ck_assert_msg(g != NULL, "%s", m);
    return g;
}

START_TEST(test_bounded_topology_stats)
{
    /* a ring of 256: everything within the budget, the closed form
     * 1/3 + 2/3 cos(2 pi / n) of Metropolis weights */
    topo_graph *g = lattice_ring(256);
    topo_stats b, f;
    ck_assert_int_eq(topo_compute_stats_bounded(g, &b), 0);
    ck_assert_int_eq(topo_compute_stats(g, &f), 0);
    ck_assert_int_eq(b.bounded, 1);
    ck_assert_int_eq(f.bounded, 0);
    ck_assert_int_eq(b.diameter_ok, 1);
    ck_assert_int_eq(b.diameter, 128);
    ck_assert_int_eq(b.spectral_ok, 1);
    ck_assert_double_eq_tol(b.lambda2, 1.0 / 3 + 2.0 / 3 * cos(2 * 3.14159265358979323846 / 256), 1e-12);
    ck_assert_double_eq(b.lambda2, f.lambda2);
    topo_destroy(g);
    /* 2048 nodes: n (n + 2 edges) = 1.26e7 BFS steps, over the bounded
     * 1e7; the full statistics compute 1024 */
    g = lattice_ring(2048);
    ck_assert_int_eq(topo_compute_stats_bounded(g, &b), 0);
    ck_assert_int_eq(topo_compute_stats(g, &f), 0);
    ck_assert_int_eq(b.diameter_ok, 0);
    ck_assert_int_eq(f.diameter_ok, 1);
    ck_assert_int_eq(f.diameter, 1024);
    ck_assert_str_eq(b.solver, "arpack");
    topo_destroy(g);
    /* 1800: 1800 x 5400 = 9.72e6 steps, within */
    g = lattice_ring(1800);
    ck_assert_int_eq(topo_compute_stats_bounded(g, &b), 0);
    ck_assert_int_eq(b.diameter_ok, 1);
    ck_assert_int_eq(b.diameter, 900);
    topo_destroy(g);
    /* above 32768 nodes no spectrum is attempted */
    g = lattice_ring(32769);
    ck_assert_int_eq(topo_compute_stats_bounded(g, &b), 0);
    ck_assert_int_eq(b.spectral_ok, 0);
    ck_assert_str_eq(b.solver, "none");
    ck_assert_int_eq(b.degree_min, 2);
    ck_assert_int_eq(b.degree_max, 2);
    ck_assert_uint_eq(b.n_edges, 32769);
    topo_destroy(g);
    /* the same ring built as a ring: closed forms at any size, exact */
    g = ring(100000);
    ck_assert_int_eq(topo_compute_stats_bounded(g, &b), 0);
    ck_assert_str_eq(b.solver, "closed");
    ck_assert_int_eq(b.diameter_ok, 1);
    ck_assert_int_eq(b.diameter, 50000);
    ck_assert_int_eq(b.spectral_ok, 1);
    /* gap 2/3 (1 - cos(2 pi / n)) = 4/3 sin^2(pi / n), to 1e-12 relative */
    double h = sin(3.14159265358979323846 / 1e5);
    ck_assert_double_eq_tol(b.spectral_gap / (4.0 / 3 * h * h), 1.0, 1e-12);
    topo_destroy(g);
}
END_TEST

/* The closed forms against the full statistics' numeric solvers (dense
 * below 256 nodes, ARPACK above), for every kind that has them, every
 * mixing rule and a lazy one; and the diameters.  Kinds without a closed
 * form, and sides below 3, stay numeric. */
START_TEST(test_closed_form_topology_stats)
{
    static const topo_spec specs[] = {
        { .kind = TOPO_RING, .n = 3 },
        { .kind = TOPO_RING, .n = 7 },
        { .kind = TOPO_RING, .n = 64 },
        { .kind = TOPO_RING, .n = 301 },
        { .kind = TOPO_TORUS2D, .n = 12, .rows = 3, .cols = 4 },
        { .kind = TOPO_TORUS2D, .n = 35, .rows = 5, .cols = 7 },
        { .kind = TOPO_TORUS2D, .n = 300, .rows = 20, .cols = 15 },
        { .kind = TOPO_TORUS3D, .n = 60, .rows = 3, .cols = 4, .layers = 5 },
        { .kind = TOPO_HYPERCUBE, .n = 2 },
        { .kind = TOPO_HYPERCUBE, .n = 32 },
        { .kind = TOPO_COMPLETE, .n = 9 },
    };
    static const topo_mixing mix[] = { TOPO_MIX_METROPOLIS, TOPO_MIX_MAX_DEGREE,
                                       TOPO_MIX_UNIFORM };
    int closed = 0;
    for (size_t i = 0; i < sizeof specs / sizeof specs[0]; i++)
        for (int x = 0; x < 3; x++)
            for (int lazy = 0; lazy < 2; lazy++) {
                topo_spec sp = specs[i];
                sp.mixing = mix[x];
                sp.lazy_alpha = lazy ? 0.3 : 0;
                char m[256];
                topo_graph *g = topo_build(&sp, 1, m, sizeof m);
                if (g == NULL)   /* uniform on a bipartite graph: refused */
                    continue;
                topo_stats b, f;
                ck_assert_int_eq(topo_compute_stats_bounded(g, &b), 0);
                ck_assert_int_eq(topo_compute_stats(g, &f), 0);
                ck_assert_int_eq(f.spectral_ok, 1);
                ck_assert_int_eq(f.diameter_ok, 1);
                if (strcmp(b.solver, "closed") == 0)
                    closed++;
                ck_assert_int_eq(b.diameter_ok, 1);
                ck_assert_int_eq(b.diameter, f.diameter);
                ck_assert_msg(fabs(b.lambda2 - f.lambda2) < 1e-11,
                              "%s n=%d mixing %d lazy %d: closed %.17g, %s %.17g",
                              topo_kind_name(sp.kind), sp.n, x, lazy, b.lambda2, f.solver,
                              f.lambda2);
                ck_assert_double_eq_tol(b.spectral_gap, f.spectral_gap, 1e-11);
                topo_destroy(g);
            }
    /* the 2-node hypercube (one edge) has no closed form; the others do */
    ck_assert_int_ge(closed, 50);
}
END_TEST

/* A run through the cache twice: the second reads the file (a value
 * planted in it comes back), a different seed of a random graph has a
 * file of its own, and "full" asked in the scenario gives full. */
START_TEST(test_topology_stats_cache)
{
    char dir[] = "/tmp/dtsim-topo-cache-XXXXXX";
    ck_assert_ptr_nonnull(mkdtemp(dir));
    static const char *const fmt =
        "{\"seed\": %d, \"nodes\": 64, \"topology\": {\"kind\": \"random_regular\","
        " \"degree\": 4}, \"model\": {\"kind\": \"none\", \"message_bytes\": 100},"
        " \"algorithm\": {\"name\": \"dpsgd\"}, %s \"stop\": {\"steps\": 2}}";
    char json[1024];
    run_options opt = { .topo_cache_dir = dir };
    run_result a, b, c;
    snprintf(json, sizeof json, fmt, 1, "");
    run_json(json, &opt, &a);
    ck_assert_int_eq(a.topo.spectral_ok, 1);
    ck_assert_int_eq(a.topo.bounded, 1);
    /* the one file: plant another lambda2 in it */
    char cmd[512];
    snprintf(cmd, sizeof cmd, "ls %s | wc -l | grep -qx 1 && sed -i 's/ %.17g / 0.25 /' %s/topo-*.txt",
             dir, a.topo.lambda2, dir);
    ck_assert_int_eq(system(cmd), 0);
    run_json(json, &opt, &b);
    ck_assert_double_eq(b.topo.lambda2, 0.25);
    ck_assert_int_eq(b.topo.diameter, a.topo.diameter);
    /* another seed: another graph, another file, its own statistics */
    snprintf(json, sizeof json, fmt, 2, "");
    run_json(json, &opt, &c);
    ck_assert(c.topo.lambda2 != 0.25);
    snprintf(cmd, sizeof cmd, "ls %s | wc -l | grep -qx 2", dir);
    ck_assert_int_eq(system(cmd), 0);
    snprintf(json, sizeof json, fmt, 1, "\"output\": {\"topology_stats\": \"full\"},");
    run_json(json, &opt, &c);
    ck_assert_int_eq(c.topo.bounded, 0);
    ck_assert_double_eq(c.topo.lambda2, a.topo.lambda2);
    snprintf(cmd, sizeof cmd, "rm -r %s", dir);
    ck_assert_int_eq(system(cmd), 0);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("setup_costs");
    TCase *tc = tcase_create("setup_costs");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, test_g10_matches_printf);
    tcase_add_test(tc, test_trace_row_bytes);
    tcase_add_test(tc, test_trace_writer_bytes);
    tcase_add_test(tc, test_nodes_row_bytes);
    tcase_add_test(tc, test_memory_estimate_formula);
    tcase_add_test(tc, test_memory_refusal_at_the_limit);
    tcase_add_test(tc, test_bounded_topology_stats);
    tcase_add_test(tc, test_closed_form_topology_stats);
    tcase_add_test(tc, test_topology_stats_cache);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
