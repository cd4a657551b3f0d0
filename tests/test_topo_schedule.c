/* test_topo_schedule.c -- Check suite for directed and time-varying
 * topologies: the shape and weights of each round (sender and receiver
 * lists agree, stochasticity flags), one-peer exponential graphs giving the
 * exact average after log2(n) rounds for n a power of two, random
 * matchings and random k-out sampling reaching consensus, determinism by
 * seed and random access to rounds, schedules read from a file, and
 * push-sum on the directed exponential graph converging to the average.
 * No algorithm is involved: rounds are applied with topo_digraph_mix.
 */
#include "topo.h"

#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define TOL 1e-12
#define DATA DTSIM_SOURCE_DIR "/tests/data/topo/"

static topo_schedule *sched_ok(topo_sched_spec spec, uint64_t seed)
{
    char err[512] = "";
    topo_schedule *s = topo_schedule_create(&spec, seed, err, sizeof err);
    ck_assert_msg(s != NULL, "topo_schedule_create(%s) failed: %s",
                  topo_sched_kind_name(spec.kind), err);
    return s;
}

/* Sender and receiver lists describe the same arcs with the same weights;
 * lists sorted, no self-arc; flags match the sums. */
static void check_digraph(const topo_digraph *d)
{
    int n = d->n;
    ck_assert_uint_eq(d->out_off[n], d->n_arcs);
    ck_assert_uint_eq(d->in_off[n], d->n_arcs);
    int row_ok = 1, col_ok = 1;
    for (int j = 0; j < n; j++) {
        double col = d->self_w[j];
        for (size_t k = d->out_off[j]; k < d->out_off[j + 1]; k++) {
            int i = d->out_nbr[k];
            ck_assert(i >= 0 && i < n && i != j);
            if (k > d->out_off[j])
                ck_assert_int_lt(d->out_nbr[k - 1], i);
            int found = 0;
            for (size_t l = d->in_off[i]; l < d->in_off[i + 1]; l++)
                if (d->in_nbr[l] == j) {
                    ck_assert(d->in_w[l] == d->out_w[k]);
                    found = 1;
                }
            ck_assert(found);
            col += d->out_w[k];
        }
        double row = d->self_w[j];
        for (size_t l = d->in_off[j]; l < d->in_off[j + 1]; l++) {
            if (l > d->in_off[j])
                ck_assert_int_lt(d->in_nbr[l - 1], d->in_nbr[l]);
            row += d->in_w[l];
        }
        row_ok &= fabs(row - 1.0) < TOL;
        col_ok &= fabs(col - 1.0) < TOL;
    }
    ck_assert_int_eq(d->row_stochastic, row_ok);
    ck_assert_int_eq(d->col_stochastic, col_ok);
}

static int same_digraph(const topo_digraph *a, const topo_digraph *b)
{
    return a->n == b->n && a->n_arcs == b->n_arcs
        && memcmp(a->out_off, b->out_off, ((size_t)a->n + 1) * sizeof *a->out_off) == 0
        && memcmp(a->out_nbr, b->out_nbr, a->n_arcs * sizeof *a->out_nbr) == 0
        && memcmp(a->out_w, b->out_w, a->n_arcs * sizeof *a->out_w) == 0
        && memcmp(a->self_w, b->self_w, (size_t)a->n * sizeof *a->self_w) == 0;
}

/* A copy of a round's arcs (the schedule reuses its buffers). */
typedef struct arcs_copy {
    int     n;
    size_t  m;
    size_t *off;
    int    *nbr;
    double *w;
} arcs_copy;

static arcs_copy copy_round(const topo_digraph *d)
{
    arcs_copy c = { d->n, d->n_arcs, malloc(((size_t)d->n + 1) * sizeof(size_t)),
                    malloc((d->n_arcs + 1) * sizeof(int)), malloc((d->n_arcs + 1) * sizeof(double)) };
    ck_assert(c.off != NULL && c.nbr != NULL && c.w != NULL);
    memcpy(c.off, d->out_off, ((size_t)d->n + 1) * sizeof *c.off);
    memcpy(c.nbr, d->out_nbr, d->n_arcs * sizeof *c.nbr);
    memcpy(c.w, d->out_w, d->n_arcs * sizeof *c.w);
    return c;
}

static int same_as_copy(const topo_digraph *d, const arcs_copy *c)
{
    return d->n == c->n && d->n_arcs == c->m
        && memcmp(d->out_off, c->off, ((size_t)c->n + 1) * sizeof *c->off) == 0
        && memcmp(d->out_nbr, c->nbr, c->m * sizeof *c->nbr) == 0
        && memcmp(d->out_w, c->w, c->m * sizeof *c->w) == 0;
}

static void free_copy(arcs_copy *c)
{
    free(c->off);
    free(c->nbr);
    free(c->w);
}

static double spread(const double *x, int n)
{
    double lo = x[0], hi = x[0];
    for (int i = 1; i < n; i++) {
        lo = x[i] < lo ? x[i] : lo;
        hi = x[i] > hi ? x[i] : hi;
    }
    return hi - lo;
}

/* ---- names ------------------------------------------------------------- */

START_TEST(test_names)
{
    ck_assert_str_eq(topo_sched_kind_names(),
                     "one_peer_exponential, random_matching, random_k_out, file");
    for (int k = 0; k <= TOPO_SCHED_FILE; k++)
        ck_assert_int_eq(topo_sched_kind_from_name(topo_sched_kind_name((topo_sched_kind)k)), k);
    ck_assert_str_eq(topo_sched_kind_name((topo_sched_kind)9), "unknown");
    ck_assert_int_eq(topo_sched_kind_from_name("one_peer"), -1);
    ck_assert_int_eq(topo_sched_kind_from_name(NULL), -1);
}
END_TEST

/* ---- one-peer exponential ---------------------------------------------- */

START_TEST(test_one_peer_structure)
{
    int n = 16;
    topo_schedule *s = sched_ok((topo_sched_spec){ .kind = TOPO_SCHED_ONE_PEER_EXPONENTIAL,
                                                   .n = n }, 1);
    ck_assert_uint_eq(topo_schedule_period(s), 4);
    for (uint64_t r = 0; r < 9; r++) {
        const topo_digraph *d = topo_schedule_round(s, r);
        check_digraph(d);
        ck_assert(d->row_stochastic && d->col_stochastic);
        ck_assert_uint_eq(d->n_arcs, (size_t)n);
        for (int j = 0; j < n; j++) {
            ck_assert_int_eq(d->out_nbr[d->out_off[j]], (j + (1 << (r % 4))) % n);
            ck_assert_double_eq(d->out_w[d->out_off[j]], 0.5);
            ck_assert_double_eq(d->self_w[j], 0.5);
        }
    }
    topo_schedule_destroy(s);
    /* n = 6: hops 1, 2, 4, still a permutation each round */
    s = sched_ok((topo_sched_spec){ .kind = TOPO_SCHED_ONE_PEER_EXPONENTIAL, .n = 6 }, 1);
    ck_assert_uint_eq(topo_schedule_period(s), 3);
    const topo_digraph *d = topo_schedule_round(s, 2);
    check_digraph(d);
    ck_assert(d->row_stochastic && d->col_stochastic);
    ck_assert_int_eq(d->out_nbr[d->out_off[5]], 3);
    topo_schedule_destroy(s);
    /* one node: no arc, keeps its value */
    s = sched_ok((topo_sched_spec){ .kind = TOPO_SCHED_ONE_PEER_EXPONENTIAL, .n = 1 }, 1);
    d = topo_schedule_round(s, 0);
    ck_assert_uint_eq(d->n_arcs, 0);
    ck_assert_double_eq(d->self_w[0], 1.0);
    topo_schedule_destroy(s);
}
END_TEST

/* n = 2^t: the product of the t rounds is J/n, so every node holds the
 * exact average (integers and halvings are exact in binary), and not one
 * round earlier. */
START_TEST(test_one_peer_exact_average)
{
    for (int t = 1; t <= 10; t++) {
        int n = 1 << t;
        topo_schedule *s = sched_ok((topo_sched_spec){
            .kind = TOPO_SCHED_ONE_PEER_EXPONENTIAL, .n = n }, 1);
        double *x = malloc((size_t)n * sizeof *x), *y = malloc((size_t)n * sizeof *y);
        ck_assert(x != NULL && y != NULL);
        double sum = 0.0;
        for (int i = 0; i < n; i++) {
            x[i] = (double)((i * 7919 + 13) % 1009);
            sum += x[i];
        }
        for (int r = 0; r < t; r++) {
            ck_assert_msg(spread(x, n) > 0.0, "n=%d: equal after %d rounds", n, r);
            topo_digraph_mix(topo_schedule_round(s, (uint64_t)r), x, y);
            memcpy(x, y, (size_t)n * sizeof *x);
        }
        for (int i = 0; i < n; i++)
            ck_assert_msg(x[i] == sum / n, "n=%d node %d: %.17g != %.17g", n, i, x[i], sum / n);
        free(x);
        free(y);
        topo_schedule_destroy(s);
    }
}
END_TEST

/* ---- random matchings -------------------------------------------------- */

START_TEST(test_matching)
{
    static const int ns[] = { 10, 11 };
    for (size_t t = 0; t < 2; t++) {
        int n = ns[t];
        topo_schedule *s = sched_ok((topo_sched_spec){ .kind = TOPO_SCHED_RANDOM_MATCHING,
                                                       .n = n }, 42);
        ck_assert_uint_eq(topo_schedule_period(s), 0);
        double *x = malloc((size_t)n * sizeof *x), *y = malloc((size_t)n * sizeof *y);
        ck_assert(x != NULL && y != NULL);
        double sum = 0.0;
        for (int i = 0; i < n; i++)
            sum += x[i] = (double)i;
        for (uint64_t r = 0; r < 300; r++) {
            const topo_digraph *d = topo_schedule_round(s, r);
            check_digraph(d);
            ck_assert(d->row_stochastic && d->col_stochastic);
            ck_assert_uint_eq(d->n_arcs, (size_t)(n / 2) * 2);
            int alone = 0;
            for (int j = 0; j < n; j++) {
                size_t deg = d->out_off[j + 1] - d->out_off[j];
                ck_assert_uint_le(deg, 1);
                if (deg == 1) {
                    int p = d->out_nbr[d->out_off[j]];
                    ck_assert_int_eq(d->out_nbr[d->out_off[p]], j);   /* mutual */
                    ck_assert_double_eq(d->self_w[j], 0.5);
                } else {
                    ck_assert_double_eq(d->self_w[j], 1.0);
                    alone++;
                }
            }
            ck_assert_int_eq(alone, n % 2);
            topo_digraph_mix(d, x, y);
            memcpy(x, y, (size_t)n * sizeof *x);
        }
        for (int i = 0; i < n; i++)
            ck_assert_double_eq_tol(x[i], sum / n, 1e-9);
        free(x);
        free(y);
        topo_schedule_destroy(s);
    }
}
END_TEST

/* ---- random k-out ------------------------------------------------------ */

START_TEST(test_k_out)
{
    static const int cases[][2] = { { 20, 3 }, { 9, 6 }, { 5, 4 } };   /* sparse and dense draws */
    for (size_t t = 0; t < 3; t++) {
        int n = cases[t][0], k = cases[t][1];
        topo_schedule *s = sched_ok((topo_sched_spec){ .kind = TOPO_SCHED_RANDOM_K_OUT, .n = n,
                                                       .k = k }, 7);
        double *x = malloc((size_t)n * sizeof *x), *y = malloc((size_t)n * sizeof *y);
        ck_assert(x != NULL && y != NULL);
        for (int i = 0; i < n; i++)
            x[i] = (double)(i * i % 17);
        int *hits = calloc((size_t)n, sizeof *hits);
        ck_assert_ptr_nonnull(hits);
        for (uint64_t r = 0; r < 200; r++) {
            const topo_digraph *d = topo_schedule_round(s, r);
            check_digraph(d);
            ck_assert(d->row_stochastic);
            ck_assert_uint_eq(d->n_arcs, (size_t)n * k);
            for (int j = 0; j < n; j++)
                ck_assert_uint_eq(d->out_off[j + 1] - d->out_off[j], (size_t)k);
            for (int i = 0; i < n; i++) {
                size_t indeg = d->in_off[i + 1] - d->in_off[i];
                ck_assert_double_eq(d->self_w[i], 1.0 / (1.0 + (double)indeg));
                for (size_t l = d->in_off[i]; l < d->in_off[i + 1]; l++)
                    ck_assert_double_eq(d->in_w[l], d->self_w[i]);
            }
            for (size_t a = 0; a < d->out_off[1]; a++)
                hits[d->out_nbr[a]]++;
            topo_digraph_mix(d, x, y);
            memcpy(x, y, (size_t)n * sizeof *x);
        }
        ck_assert_int_eq(hits[0], 0);   /* node 0 never picks itself */
        for (int i = 1; i < n; i++)
            ck_assert_int_gt(hits[i], 0);   /* and every other node some time */
        ck_assert(spread(x, n) < 1e-9);
        free(hits);
        free(x);
        free(y);
        topo_schedule_destroy(s);
    }
}
END_TEST

/* ---- determinism ------------------------------------------------------- */

START_TEST(test_determinism)
{
    static const topo_sched_kind kinds[] = { TOPO_SCHED_RANDOM_MATCHING, TOPO_SCHED_RANDOM_K_OUT };
    for (size_t t = 0; t < 2; t++) {
        topo_sched_spec spec = { .kind = kinds[t], .n = 30, .k = 2 };
        topo_schedule *a = sched_ok(spec, 5), *b = sched_ok(spec, 5), *c = sched_ok(spec, 6);
        /* rounds asked in another order give the same graphs */
        arcs_copy r7 = copy_round(topo_schedule_round(a, 7));
        arcs_copy r3 = copy_round(topo_schedule_round(a, 3));
        ck_assert(!same_as_copy(topo_schedule_round(a, 4), &r3));
        ck_assert(same_as_copy(topo_schedule_round(b, 3), &r3));
        ck_assert(same_as_copy(topo_schedule_round(b, 7), &r7));
        ck_assert(same_as_copy(topo_schedule_round(a, 7), &r7));
        ck_assert(same_digraph(topo_schedule_round(a, 1000000007ULL),
                               topo_schedule_round(b, 1000000007ULL)));
        ck_assert(!same_as_copy(topo_schedule_round(c, 7), &r7));
        free_copy(&r7);
        free_copy(&r3);
        topo_schedule_destroy(a);
        topo_schedule_destroy(b);
        topo_schedule_destroy(c);
    }
}
END_TEST

/* ---- file -------------------------------------------------------------- */

START_TEST(test_file_schedule)
{
    topo_schedule *s = sched_ok((topo_sched_spec){ .kind = TOPO_SCHED_FILE, .n = 4,
                                                   .path = DATA "sched4.txt" }, 1);
    ck_assert_uint_eq(topo_schedule_period(s), 2);
    const topo_digraph *d = topo_schedule_round(s, 0);
    check_digraph(d);
    ck_assert(d->row_stochastic && d->col_stochastic);
    ck_assert_uint_eq(d->n_arcs, 4);
    ck_assert_int_eq(d->out_nbr[d->out_off[0]], 1);
    ck_assert_int_eq(d->out_nbr[d->out_off[2]], 3);
    ck_assert_double_eq(d->out_w[0], 0.5);   /* MH on a matching */
    d = topo_schedule_round(s, 3);
    ck_assert_int_eq(d->out_nbr[d->out_off[0]], 3);
    ck_assert_int_eq(d->out_nbr[d->out_off[1]], 2);
    /* the two matchings of the 4-cycle average exactly in two rounds */
    double x[4] = { 1, 2, 5, 8 }, y[4];
    topo_digraph_mix(topo_schedule_round(s, 0), x, y);
    topo_digraph_mix(topo_schedule_round(s, 1), y, x);
    for (int i = 0; i < 4; i++)
        ck_assert_double_eq(x[i], 4.0);
    topo_schedule_destroy(s);
}
END_TEST

static const struct bad_sched {
    topo_sched_spec spec;
    const char     *msg;
} bad_scheds[] = {
    { { .kind = TOPO_SCHED_ONE_PEER_EXPONENTIAL, .n = 0 },
      "one_peer_exponential schedule needs n >= 1, got n=0" },
    { { .kind = TOPO_SCHED_RANDOM_K_OUT, .n = 5, .k = 5 },
      "random_k_out schedule needs 1 <= k <= n - 1, got k=5, n=5" },
    { { .kind = TOPO_SCHED_RANDOM_K_OUT, .n = 5, .k = 0 },
      "random_k_out schedule needs 1 <= k <= n - 1, got k=0, n=5" },
    { { .kind = TOPO_SCHED_FILE, .n = 4 }, "file schedule needs a file name" },
    { { .kind = (topo_sched_kind)8, .n = 4 },
      "unknown schedule kind 8 (expected one of: one_peer_exponential, random_matching, "
      "random_k_out, file)" },
    { { .kind = TOPO_SCHED_FILE, .n = 4, .path = DATA "sched_twice.txt" },
      DATA "sched_twice.txt:3: error: edge given twice (first on line 2) in the same round" },
    { { .kind = TOPO_SCHED_FILE, .n = 4, .path = DATA "sched_fields.txt" },
      DATA "sched_fields.txt:2: error: expected a round and 2 node numbers, got '1 2'" },
    { { .kind = TOPO_SCHED_FILE, .n = 2, .path = DATA "sched4.txt" },
      DATA "sched4.txt:3: error: node 2 out of range (nodes are 0..1)" },
};

START_TEST(test_bad_schedule)
{
    char err[512];
    memset(err, 'x', sizeof err);
    err[sizeof err - 1] = '\0';
    ck_assert_ptr_null(topo_schedule_create(&bad_scheds[_i].spec, 1, err, sizeof err));
    ck_assert_str_eq(err, bad_scheds[_i].msg);
}
END_TEST

/* ---- directed static graphs -------------------------------------------- */

static topo_digraph *directed_ok(topo_spec spec)
{
    char err[512] = "";
    topo_digraph *d = topo_build_directed(&spec, 1, err, sizeof err);
    ck_assert_msg(d != NULL, "topo_build_directed failed: %s", err);
    return d;
}

/* Directed exponential graph: j -> j + 2^b; push-sum weights 1/(1 + tau).
 * Column-stochastic always; doubly stochastic as every in-degree is tau. */
START_TEST(test_directed_exponential)
{
    topo_digraph *d = directed_ok((topo_spec){ .kind = TOPO_EXPONENTIAL, .n = 8 });
    check_digraph(d);
    ck_assert_uint_eq(d->n_arcs, 24);
    ck_assert(d->col_stochastic && d->row_stochastic);
    ck_assert_int_eq(d->out_nbr[d->out_off[7]], 0);   /* 7+1, 7+2, 7+4 mod 8 sorted */
    ck_assert_int_eq(d->out_nbr[d->out_off[7] + 1], 1);
    ck_assert_int_eq(d->out_nbr[d->out_off[7] + 2], 3);
    for (size_t a = 0; a < d->n_arcs; a++)
        ck_assert_double_eq(d->out_w[a], 0.25);
    topo_digraph_destroy(d);

    d = directed_ok((topo_spec){ .kind = TOPO_RING, .n = 5 });
    check_digraph(d);
    ck_assert_uint_eq(d->n_arcs, 5);
    ck_assert_int_eq(d->out_nbr[d->out_off[4]], 0);
    ck_assert_uint_eq(d->in_off[1] - d->in_off[0], 1);
    ck_assert_int_eq(d->in_nbr[d->in_off[0]], 4);
    topo_digraph_destroy(d);
}
END_TEST

/* Push-sum on a column-stochastic graph whose rows do not sum to 1 (the
 * star: the centre keeps 1/n, leaves 1/2): the sums stay, the ratios
 * x_i / w_i converge to the average. */
START_TEST(test_push_sum)
{
    topo_spec specs[] = { { .kind = TOPO_STAR, .n = 6 }, { .kind = TOPO_EXPONENTIAL, .n = 12 },
                          { .kind = TOPO_RING, .n = 7 } };
    for (size_t t = 0; t < 3; t++) {
        topo_digraph *d = directed_ok(specs[t]);
        check_digraph(d);
        ck_assert(d->col_stochastic);
        if (t == 0)
            ck_assert(!d->row_stochastic);
        int n = d->n;
        double x[12], w[12], y[12], v[12], sum = 0.0;
        for (int i = 0; i < n; i++) {
            x[i] = (double)(i * 5 % 7);
            w[i] = 1.0;
            sum += x[i];
        }
        for (int r = 0; r < 400; r++) {
            topo_digraph_mix(d, x, y);
            topo_digraph_mix(d, w, v);
            memcpy(x, y, sizeof x);
            memcpy(w, v, sizeof w);
        }
        double s = 0.0;
        for (int i = 0; i < n; i++) {
            s += x[i];
            ck_assert_double_eq_tol(x[i] / w[i], sum / n, 1e-10);
        }
        ck_assert_double_eq_tol(s, sum, 1e-10);
        topo_digraph_destroy(d);
    }
    char err[256];
    topo_spec bad = { .kind = TOPO_EXPONENTIAL, .n = 0 };
    ck_assert_ptr_null(topo_build_directed(&bad, 1, err, sizeof err));
    ck_assert_str_eq(err, "directed exponential graph needs n >= 1, got n=0");
    topo_digraph_destroy(NULL);
    topo_schedule_destroy(NULL);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("topo_schedule");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, test_names);
    tcase_add_test(tc, test_one_peer_structure);
    tcase_add_test(tc, test_one_peer_exact_average);
    tcase_add_test(tc, test_matching);
    tcase_add_test(tc, test_k_out);
    tcase_add_test(tc, test_determinism);
    tcase_add_test(tc, test_file_schedule);
    tcase_add_loop_test(tc, test_bad_schedule, 0,
                        (int)(sizeof bad_scheds / sizeof bad_scheds[0]));
    tcase_add_test(tc, test_directed_exponential);
    tcase_add_test(tc, test_push_sum);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    SRunner *sr = srunner_create(suite());
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
