/* test_split.c -- Check suite for models/mdl_split.c: the per-layer FLOP
 * model against the MLP's total and hand-computed figures, the plan of a
 * cut (parameter counts, FLOP shares), the back part's gradient bit for
 * bit equal to the unsplit MLP's for those layers on the front's
 * activations (which equal the MLP's), and the front part's local-loss
 * gradient (layers 1 .. s and the auxiliary head) against central finite
 * differences, with a negative control.  It does not test who runs which
 * part (the comdml protocol's tests do).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <check.h>
#include <gsl/gsl_errno.h>
#include <gsl/gsl_randist.h>
#include <gsl/gsl_rng.h>
#include "mdl.h"
#include "mdl_split.h"

static void small_dataset(mdl_dataset *ds, size_t n, size_t d, int C, unsigned long seed)
{
    gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
    gsl_rng_set(r, seed);
    memset(ds, 0, sizeof *ds);
    ds->n = n;
    ds->d = d;
    ds->n_classes = C;
    ds->x = malloc(n * d * sizeof *ds->x);
    ds->y = malloc(n * sizeof *ds->y);
    for (size_t i = 0; i < n; i++) {
        ds->y[i] = (int)gsl_rng_uniform_int(r, (unsigned long)C);
        for (size_t j = 0; j < d; j++)
            ds->x[i * d + j] = gsl_ran_gaussian(r, 1.0);
    }
    gsl_rng_free(r);
}

static double *random_vec(size_t n, double sd, unsigned long seed)
{
    double *v = malloc(n * sizeof *v);
    gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
    gsl_rng_set(r, seed);
    for (size_t k = 0; k < n; k++)
        v[k] = gsl_ran_gaussian(r, sd);
    gsl_rng_free(r);
    return v;
}

/* 784-100-10: layer 1 forward 2*78400, weight gradient 2*78400, no error
 * below it; layer 2 the same plus 2*1000 propagated. */
START_TEST(test_layer_flops_hand)
{
    mdl_arch a = { .d = 784, .n_classes = 10, .n_hidden = 1, .hidden = { 100 } };
    ck_assert_double_eq(mdl_mlp_layer_flops(&a, 1, 0), 4.0 * 78400);
    ck_assert_double_eq(mdl_mlp_layer_flops(&a, 1, 1), 6.0 * 78400);
    ck_assert_double_eq(mdl_mlp_layer_flops(&a, 2, 1), 6000.0);
    ck_assert_double_eq(mdl_mlp_layer_flops(&a, 2, 0), 4000.0);
}
END_TEST

/* The layers add up to the model's own count, for several shapes. */
START_TEST(test_layer_flops_sum)
{
    const mdl_arch shapes[] = {
        { .d = 784, .n_classes = 10, .n_hidden = 1, .hidden = { 100 } },
        { .d = 7, .n_classes = 3, .n_hidden = 3, .hidden = { 5, 9, 4 } },
        { .d = 20, .n_classes = 4, .n_hidden = 2, .hidden = { 16, 8 }, .act = MDL_ACT_TANH },
    };
    for (size_t i = 0; i < sizeof shapes / sizeof shapes[0]; i++) {
        mdl_model *m = mdl_create_arch(&mdl_mlp, &shapes[i], 0.0, 4);
        double f = 0.0;
        for (size_t l = 1; l <= shapes[i].n_hidden + 1; l++)
            f += mdl_mlp_layer_flops(&shapes[i], l, l > 1);
        ck_assert_double_eq(f, mdl_flops_per_sample(m));
        ck_assert_uint_eq(mdl_layers(m), shapes[i].n_hidden + 1);
        mdl_destroy(m);
    }
    mdl_model *sm = mdl_create(&mdl_softmax, 5, 3, 0.0, 4);
    mdl_split_plan p;
    ck_assert_uint_eq(mdl_layers(sm), 0);
    ck_assert_int_eq(mdl_split_plan_get(sm, 1, &p), -1);
    mdl_destroy(sm);
}
END_TEST

/* 20-16-8-4 cut at 1 and 2, counted by hand. */
START_TEST(test_plan_hand)
{
    mdl_arch a = { .d = 20, .n_classes = 4, .n_hidden = 2, .hidden = { 16, 8 } };
    mdl_model *m = mdl_create_arch(&mdl_mlp, &a, 0.0, 4);
    mdl_split_plan p;
    ck_assert_int_eq(mdl_split_plan_get(m, 0, &p), -1);
    ck_assert_int_eq(mdl_split_plan_get(m, 3, &p), -1);
    ck_assert_int_eq(mdl_split_plan_get(m, 1, &p), 0);
    ck_assert_uint_eq(p.width, 16);
    ck_assert_uint_eq(p.n_front, 20 * 16 + 16);
    ck_assert_uint_eq(p.n_back, 16 * 8 + 8 + 8 * 4 + 4);
    ck_assert_uint_eq(p.n_front + p.n_back, mdl_n_params(m));
    ck_assert_uint_eq(p.n_aux, 4 * 16 + 4);
    /* front: 4*320 + head 6*64; back: 4*128 (first, no error) + 6*32 */
    ck_assert_double_eq(p.flops_front, 1280.0 + 384.0);
    ck_assert_double_eq(p.flops_back, 512.0 + 192.0);
    ck_assert_double_eq(p.flops_full, 1280.0 + 768.0 + 192.0);
    ck_assert_int_eq(mdl_split_plan_get(m, 2, &p), 0);
    ck_assert_uint_eq(p.width, 8);
    ck_assert_double_eq(p.flops_front, 1280.0 + 768.0 + 6.0 * 32);
    ck_assert_double_eq(p.flops_back, 4.0 * 32);
    ck_assert_uint_eq(p.n_aux, 36);
    mdl_destroy(m);
}
END_TEST

/* The front's activations are the MLP's A_s, and the back's gradient on
 * them is the MLP's gradient for layers s+1 .. L+1, bit for bit, with L2
 * and both activations, at every cut. */
static void back_equals_full(mdl_activation act)
{
    mdl_arch a = { .d = 7, .n_classes = 3, .n_hidden = 3, .hidden = { 5, 9, 4 }, .act = act };
    const size_t batch[] = { 0, 1, 2, 3, 4, 5, 6, 7, 8, 3 }, nb = 10;
    mdl_dataset ds;
    small_dataset(&ds, 9, a.d, a.n_classes, 11);
    mdl_model *m = mdl_create_arch(&mdl_mlp, &a, 0.05, 16);
    const size_t P = mdl_n_params(m);
    double *x = random_vec(P, 0.5, 5), *g = malloc(P * sizeof *g), *gs = malloc(P * sizeof *gs);
    mdl_loss_grad(m, x, &ds, batch, nb, g);
    for (size_t s = 1; s <= a.n_hidden; s++) {
        mdl_split *w = mdl_split_create(m, s, 16);
        ck_assert_ptr_nonnull(w);
        const mdl_split_plan *p = mdl_split_plan_of(w);
        double *aux = random_vec(p->n_aux, 0.3, 9), *gaux = malloc(p->n_aux * sizeof *gaux);
        double *acts = malloc(nb * p->width * sizeof *acts);
        int labels[10];
        mdl_split_front(w, x, aux, &ds, batch, nb, acts, labels, gs, gaux);
        for (size_t i = 0; i < nb; i++)
            ck_assert_int_eq(labels[i], ds.y[batch[i]]);
        mdl_split_back(w, x + p->n_front, acts, labels, nb, gs + p->n_front);
        for (size_t k = p->n_front; k < P; k++)
            ck_assert_msg(gs[k] == g[k], "s=%zu k=%zu: %.17g != %.17g", s, k, gs[k], g[k]);
        free(acts);
        free(gaux);
        free(aux);
        mdl_split_destroy(w);
    }
    free(gs);
    free(g);
    free(x);
    mdl_destroy(m);
    mdl_dataset_fini(&ds);
}

START_TEST(test_back_equals_full_relu) { back_equals_full(MDL_ACT_RELU); }
END_TEST
START_TEST(test_back_equals_full_tanh) { back_equals_full(MDL_ACT_TANH); }
END_TEST

/* Largest relative error of the front's gradient (front layers and head)
 * against central differences of the front's loss; drop_l2 computes the
 * analytic gradient without the L2 term (negative control). */
static double front_fd(mdl_activation act, size_t s, double l2, int drop_l2)
{
    mdl_arch a = { .d = 6, .n_classes = 3, .n_hidden = 2, .hidden = { 5, 4 }, .act = act };
    const size_t batch[] = { 0, 1, 2, 3, 4, 5, 6, 7 }, nb = 8;
    mdl_dataset ds;
    small_dataset(&ds, 8, a.d, a.n_classes, 3);
    mdl_model *m = mdl_create_arch(&mdl_mlp, &a, l2, 8);
    mdl_model *m0 = mdl_create_arch(&mdl_mlp, &a, drop_l2 ? 0.0 : l2, 8);
    mdl_split *w = mdl_split_create(m, s, 8), *w0 = mdl_split_create(m0, s, 8);
    const mdl_split_plan *p = mdl_split_plan_of(w);
    const size_t nf = p->n_front, na = p->n_aux, n = nf + na;
    double *v = random_vec(n, 0.5, 7), *g = malloc(n * sizeof *g), *sc = malloc(n * sizeof *sc);
    mdl_split_front(w0, v, v + nf, &ds, batch, nb, NULL, NULL, g, g + nf);
    const double h = 1e-6;
    double worst = 0.0;
    for (size_t k = 0; k < n; k++) {
        const double v0 = v[k];
        v[k] = v0 + h;
        const double fp = mdl_split_front(w, v, v + nf, &ds, batch, nb, NULL, NULL, sc, sc + nf);
        v[k] = v0 - h;
        const double fm = mdl_split_front(w, v, v + nf, &ds, batch, nb, NULL, NULL, sc, sc + nf);
        v[k] = v0;
        const double fd = (fp - fm) / (2 * h);
        const double rel = fabs(g[k] - fd) / fmax(fmax(fabs(g[k]), fabs(fd)), 1e-2);
        if (rel > worst)
            worst = rel;
    }
    free(sc);
    free(g);
    free(v);
    mdl_split_destroy(w0);
    mdl_split_destroy(w);
    mdl_destroy(m0);
    mdl_destroy(m);
    mdl_dataset_fini(&ds);
    return worst;
}

START_TEST(test_front_fd)
{
    for (size_t s = 1; s <= 2; s++) {
        ck_assert_msg(front_fd(MDL_ACT_TANH, s, 0.1, 0) < 1e-6, "tanh s=%zu", s);
        ck_assert_msg(front_fd(MDL_ACT_RELU, s, 0.1, 0) < 1e-6, "relu s=%zu", s);
        ck_assert_msg(front_fd(MDL_ACT_TANH, s, 0.1, 1) > 1e-3, "control s=%zu", s);
    }
}
END_TEST

int main(void)
{
    gsl_set_error_handler_off();
    Suite *s = suite_create("split");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, test_layer_flops_hand);
    tcase_add_test(tc, test_layer_flops_sum);
    tcase_add_test(tc, test_plan_hand);
    tcase_add_test(tc, test_back_equals_full_relu);
    tcase_add_test(tc, test_back_equals_full_tanh);
    tcase_add_test(tc, test_front_fd);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
