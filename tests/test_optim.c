/* test_optim.c -- Check suite for the per-node optimizers of
 * models/mdl_optim.h against closed forms: plain SGD bit-identical to one
 * daxpy, heavy-ball and Nesterov momentum under a constant gradient,
 * weight decay as geometric shrinkage, every schedule at its defining
 * points, and node independence of buffers and schedules.  It does not
 * run protocols (test_algos.c does).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <check.h>
#include <gsl/gsl_cblas.h>
#include "mdl_optim.h"

START_TEST(test_plain_is_daxpy)
{
    mdl_optim_spec sp = { .lr = 0.1 };
    mdl_optim *o = mdl_optim_create(&sp, 2, 5);
    ck_assert_ptr_nonnull(o);
    double x[5] = { 0.3, -1.7, 2.2, 1e-3, 5 }, y[5], g[5] = { 0.11, 0.37, -2.9, 7.1, 1.0 / 3 };
    memcpy(y, x, sizeof x);
    for (int k = 0; k < 3; k++) {
        mdl_optim_step(o, 1, x, g, 7.0);
        cblas_daxpy(5, -0.1 / 7.0, g, 1, y, 1);
    }
    ck_assert_int_eq(memcmp(x, y, sizeof x), 0);
    ck_assert_uint_eq(mdl_optim_updates(o, 1), 3);
    ck_assert_uint_eq(mdl_optim_updates(o, 0), 0);
    mdl_optim_destroy(o);
    mdl_optim_destroy(NULL);
}
END_TEST

/* Constant gradient g: the heavy-ball buffer after k updates is
 * g (1 - mu^k) / (1 - mu), so x_K = x_0 - lr g sum_{k=1..K} (1 - mu^k)/(1 - mu);
 * Nesterov uses g + mu b_k = g (1 - mu^{k+1}) / (1 - mu). */
START_TEST(test_momentum_closed_form)
{
    const double lr = 0.05, mu = 0.9, g = 2.0;
    for (int nest = 0; nest < 2; nest++) {
        mdl_optim_spec sp = { .lr = lr, .momentum = mu, .nesterov = nest };
        mdl_optim *o = mdl_optim_create(&sp, 3, 1);
        double x = 1.0, expect = 1.0;
        for (int k = 1; k <= 40; k++) {
            mdl_optim_step(o, 2, &x, &g, 1.0);
            expect -= lr * g * (1 - pow(mu, k + nest)) / (1 - mu);
            ck_assert_double_eq_tol(x, expect, 1e-12 * fabs(expect) + 1e-12);
        }
        /* Another node's buffer is untouched: its first update is plain. */
        double z = 0.0;
        mdl_optim_step(o, 0, &z, &g, 1.0);
        ck_assert_double_eq_tol(z, -lr * g * (nest ? 1 + mu : 1), 1e-15);
        mdl_optim_destroy(o);
    }
}
END_TEST

START_TEST(test_weight_decay)
{
    mdl_optim_spec sp = { .lr = 0.1, .weight_decay = 0.5 };
    mdl_optim *o = mdl_optim_create(&sp, 1, 2);
    double x[2] = { 3.0, -1.0 }, g[2] = { 0, 0 };
    for (int k = 0; k < 10; k++)
        mdl_optim_step(o, 0, x, g, 1.0);
    ck_assert_double_eq_tol(x[0], 3.0 * pow(0.95, 10), 1e-14);
    ck_assert_double_eq_tol(x[1], -pow(0.95, 10), 1e-14);
    mdl_optim_destroy(o);
}
END_TEST

START_TEST(test_schedules)
{
    mdl_optim_spec st = { .lr = 1.0, .schedule = MDL_SCHED_STEP, .step_every = 10, .gamma = 0.5 };
    ck_assert_double_eq(mdl_optim_lr(&st, 0), 1.0);
    ck_assert_double_eq(mdl_optim_lr(&st, 9), 1.0);
    ck_assert_double_eq(mdl_optim_lr(&st, 10), 0.5);
    ck_assert_double_eq(mdl_optim_lr(&st, 35), 0.125);

    mdl_optim_spec co = { .lr = 0.4, .schedule = MDL_SCHED_COSINE, .total_steps = 100,
                          .lr_min = 0.1 };
    ck_assert_double_eq(mdl_optim_lr(&co, 0), 0.4);
    ck_assert_double_eq_tol(mdl_optim_lr(&co, 50), 0.25, 1e-15);
    ck_assert_double_eq_tol(mdl_optim_lr(&co, 100), 0.1, 1e-15);
    ck_assert_double_eq_tol(mdl_optim_lr(&co, 1000), 0.1, 1e-15);
    ck_assert_double_lt(mdl_optim_lr(&co, 60), mdl_optim_lr(&co, 40));

    mdl_optim_spec wu = { .lr = 0.2, .warmup_steps = 4 };
    ck_assert_double_eq(mdl_optim_lr(&wu, 0), 0.05);
    ck_assert_double_eq(mdl_optim_lr(&wu, 1), 0.1);
    ck_assert_double_eq(mdl_optim_lr(&wu, 3), 0.2);
    ck_assert_double_eq(mdl_optim_lr(&wu, 4), 0.2);

    /* The schedule follows each node's own update count. */
    mdl_optim_spec sp = { .lr = 1.0, .schedule = MDL_SCHED_STEP, .step_every = 1, .gamma = 0.5 };
    mdl_optim *o = mdl_optim_create(&sp, 2, 1);
    double a = 0, b = 0, g = 1;
    for (int k = 0; k < 3; k++)
        mdl_optim_step(o, 0, &a, &g, 1.0);
    mdl_optim_step(o, 1, &b, &g, 1.0);
    ck_assert_double_eq(a, -(1 + 0.5 + 0.25));
    ck_assert_double_eq(b, -1.0);
    mdl_optim_destroy(o);
}
END_TEST

START_TEST(test_bad_specs)
{
    const mdl_optim_spec bad[] = {
        { .lr = -1 },
        { .lr = 0.1, .momentum = 1.0 },
        { .lr = 0.1, .nesterov = 1 },
        { .lr = 0.1, .weight_decay = -1 },
        { .lr = 0.1, .schedule = MDL_SCHED_STEP, .step_every = 0, .gamma = 0.1 },
        { .lr = 0.1, .schedule = MDL_SCHED_STEP, .step_every = 5, .gamma = 1.5 },
        { .lr = 0.1, .schedule = MDL_SCHED_COSINE, .total_steps = 0 },
        { .lr = 0.1, .warmup_steps = -1 },
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        ck_assert_msg(mdl_optim_create(&bad[i], 1, 4) == NULL, "spec %zu accepted", i);
    mdl_optim_spec ok = { .lr = 0.1 };
    ck_assert_ptr_null(mdl_optim_create(&ok, 0, 4));
}
END_TEST

static Suite *optim_suite(void)
{
    Suite *s = suite_create("optim");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, test_plain_is_daxpy);
    tcase_add_test(tc, test_momentum_closed_form);
    tcase_add_test(tc, test_weight_decay);
    tcase_add_test(tc, test_schedules);
    tcase_add_test(tc, test_bad_specs);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    SRunner *sr = srunner_create(optim_suite());
    srunner_run_all(sr, CK_NORMAL);
    const int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
