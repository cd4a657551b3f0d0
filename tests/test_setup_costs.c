/* test_setup_costs.c -- what issue 17's set-up and fixed-cost work must
 * keep exact: the printf-free %.10g of the CSV writers against snprintf on
 * millions of values (every magnitude, near-ties, neighbours of powers of
 * ten, time grids) and trace.csv rows byte for byte.
 */
#include <check.h>
#include <math.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "out.h"
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

int main(void)
{
    Suite *s = suite_create("setup_costs");
    TCase *tc = tcase_create("setup_costs");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, test_g10_matches_printf);
    tcase_add_test(tc, test_trace_row_bytes);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
