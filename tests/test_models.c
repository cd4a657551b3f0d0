/* test_models.c -- Check suite for models/: every analytic gradient against
 * central finite differences, closed-form losses and accuracies, chunked
 * evaluation against one big batch, determinism of the synthetic data and
 * of the IID partition, and minibatch SGD against the optimum that
 * full-batch gradient descent finds on a strongly convex problem.  It does
 * not test loaders of real data or anything above the models module.
 */
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <check.h>
#include <gsl/gsl_errno.h>
#include <gsl/gsl_randist.h>
#include <gsl/gsl_rng.h>
#include "mdl.h"

/* A small random problem: n samples of d features, labels uniform over C
 * classes, features N(0, 1). */
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
    ds->t = NULL;
    ck_assert_ptr_nonnull(ds->x);
    ck_assert_ptr_nonnull(ds->y);
    for (size_t i = 0; i < n; i++) {
        ds->y[i] = (int)gsl_rng_uniform_int(r, (unsigned long)C);
        for (size_t j = 0; j < d; j++)
            ds->x[i * d + j] = gsl_ran_gaussian(r, 1.0);
    }
    gsl_rng_free(r);
}

/* Largest relative error |g - fd| / max(|g|, |fd|, 1e-2) over all
 * parameters, where g comes from model a and fd is the central difference
 * (h = 1e-6) of model b's loss.  Rounding the loss leaves about
 * eps * |f| / h = 2e-10 of noise in fd, so components below 1e-2 are held
 * to an absolute 1e-8 instead.  a and b differ only in the negative
 * control, which shows that the checker can fail. */
static double fd_max_rel_error(mdl_model *a, mdl_model *b, const double *params,
                               const mdl_dataset *ds, const size_t *batch, size_t nb)
{
    const size_t P = mdl_n_params(a);
    const double h = 1e-6;
    double *p = malloc(P * sizeof *p);
    double *g = malloc(P * sizeof *g);
    double *scratch = malloc(P * sizeof *scratch);
    double worst = 0.0;

    memcpy(p, params, P * sizeof *p);
    mdl_loss_grad(a, p, ds, batch, nb, g);
    for (size_t k = 0; k < P; k++) {
        p[k] = params[k] + h;
        const double fp = mdl_loss_grad(b, p, ds, batch, nb, scratch);
        p[k] = params[k] - h;
        const double fm = mdl_loss_grad(b, p, ds, batch, nb, scratch);
        p[k] = params[k];
        const double fd = (fp - fm) / (2.0 * h);
        const double scale = fmax(fmax(fabs(g[k]), fabs(fd)), 1e-2);
        const double rel = fabs(g[k] - fd) / scale;
        if (rel > worst)
            worst = rel;
    }
    free(scratch);
    free(g);
    free(p);
    return worst;
}

static void gradient_check_arch(const mdl_type *t, const mdl_arch *arch, double sd)
{
    const size_t d = arch->d, n = 9;
    const int C = arch->n_classes;
    /* Repeated index on purpose: a batch may sample with replacement. */
    const size_t batch[] = { 0, 1, 2, 3, 4, 5, 6, 7, 8, 3 };
    const size_t nb = sizeof batch / sizeof batch[0];
    mdl_dataset ds;
    small_dataset(&ds, n, d, C, 11);

    mdl_model *m = mdl_create_arch(t, arch, 0.1, 16);
    mdl_model *m0 = mdl_create_arch(t, arch, 0.0, 16);
    ck_assert_ptr_nonnull(m);
    ck_assert_ptr_nonnull(m0);
    const size_t P = mdl_n_params(m);
    double *params = malloc(P * sizeof *params);
    gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
    gsl_rng_set(r, 5);
    for (size_t k = 0; k < P; k++)
        params[k] = gsl_ran_gaussian(r, sd);

    const double err = fd_max_rel_error(m, m, params, &ds, batch, nb);
    ck_assert_msg(err < 1e-6, "%s: max relative gradient error %g", t->name, err);
    const double err0 = fd_max_rel_error(m0, m0, params, &ds, batch, nb);
    ck_assert_msg(err0 < 1e-6, "%s, l2 = 0: max relative gradient error %g", t->name, err0);
    /* Negative control: the gradient without its L2 term must be caught. */
    const double bad = fd_max_rel_error(m0, m, params, &ds, batch, nb);
    ck_assert_msg(bad > 1e-3, "%s: checker missed a missing L2 term (%g)", t->name, bad);

    /* Large logits: the loss and gradient must stay finite. */
    for (size_t k = 0; k < P; k++)
        params[k] *= 1000.0;
    double *g = malloc(P * sizeof *g);
    const double big = mdl_loss_grad(m, params, &ds, batch, nb, g);
    ck_assert(isfinite(big));
    for (size_t k = 0; k < P; k++)
        ck_assert(isfinite(g[k]));

    free(g);
    gsl_rng_free(r);
    free(params);
    mdl_destroy(m0);
    mdl_destroy(m);
    mdl_dataset_fini(&ds);
}

static void gradient_check(const mdl_type *t, int C)
{
    const mdl_arch a = { .d = 5, .n_classes = C };
    gradient_check_arch(t, &a, 0.7);
}

START_TEST(test_softmax_gradient_fd)
{
    gradient_check(&mdl_softmax, 3);
}
END_TEST

START_TEST(test_logistic_gradient_fd)
{
    gradient_check(&mdl_logistic, 2);
}
END_TEST

/* Every layer of MLPs of depth 1 to 3 with both activations: the checker
 * runs over all parameters, so a wrong product in any layer's backward
 * pass shows.  Each layer is also checked on its own slice to name the
 * layer in the message. */
START_TEST(test_mlp_gradient_fd)
{
    const mdl_arch shapes[] = {
        { .d = 5, .n_classes = 3, .n_hidden = 1, .hidden = { 4 }, .act = MDL_ACT_RELU },
        { .d = 5, .n_classes = 3, .n_hidden = 1, .hidden = { 4 }, .act = MDL_ACT_TANH },
        { .d = 5, .n_classes = 4, .n_hidden = 2, .hidden = { 6, 3 }, .act = MDL_ACT_RELU },
        { .d = 4, .n_classes = 2, .n_hidden = 3, .hidden = { 5, 4, 3 }, .act = MDL_ACT_TANH },
    };
    for (size_t i = 0; i < sizeof shapes / sizeof shapes[0]; i++)
        gradient_check_arch(&mdl_mlp, &shapes[i], 0.5);
}
END_TEST

/* Per-layer control: zeroing one layer's weight gradient must be caught
 * by the finite differences of that layer, for every layer.  This shows
 * that the check above sees every layer, not only the last. */
START_TEST(test_mlp_every_layer_checked)
{
    const mdl_arch a = { .d = 4, .n_classes = 3, .n_hidden = 2, .hidden = { 5, 3 },
                         .act = MDL_ACT_TANH };
    const size_t batch[] = { 0, 1, 2, 3, 4, 5 };
    mdl_dataset ds;
    small_dataset(&ds, 6, a.d, a.n_classes, 17);
    mdl_model *m = mdl_create_arch(&mdl_mlp, &a, 0.0, 8);
    ck_assert_ptr_nonnull(m);
    const size_t P = mdl_n_params(m);
    ck_assert_uint_eq(P, 5 * 4 + 5 + 3 * 5 + 3 + 3 * 3 + 3);
    double *p = malloc(P * sizeof *p), *g = malloc(P * sizeof *g), *s = malloc(P * sizeof *s);
    gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
    gsl_rng_set(r, 9);
    for (size_t k = 0; k < P; k++)
        p[k] = gsl_ran_gaussian(r, 0.8);
    mdl_loss_grad(m, p, &ds, batch, 6, g);
    const size_t start[] = { 0, 25, 43, P };
    for (size_t l = 0; l < 3; l++) {
        double worst = 0.0, gmax = 0.0;
        for (size_t k = start[l]; k < start[l + 1]; k++) {
            const double h = 1e-6, keep = p[k];
            p[k] = keep + h;
            const double fp = mdl_loss_grad(m, p, &ds, batch, 6, s);
            p[k] = keep - h;
            const double fm = mdl_loss_grad(m, p, &ds, batch, 6, s);
            p[k] = keep;
            const double fd = (fp - fm) / (2 * h);
            worst = fmax(worst, fabs(fd - g[k]));
            gmax = fmax(gmax, fabs(fd));
        }
        ck_assert_msg(worst < 1e-7, "layer %zu: gradient error %g", l + 1, worst);
        ck_assert_msg(gmax > 1e-3, "layer %zu: finite differences all near zero (%g)", l + 1, gmax);
    }
    gsl_rng_free(r);
    free(s);
    free(g);
    free(p);
    mdl_destroy(m);
    mdl_dataset_fini(&ds);
}
END_TEST

/* model.bias false: logistic with d parameters, gradient against finite
 * differences, and the loss and gradient of the biased model whose bias
 * is 0; only the one-output models take it. */
START_TEST(test_no_bias)
{
    const mdl_arch a = { .d = 5, .n_classes = 2, .no_bias = 1 };
    gradient_check_arch(&mdl_logistic, &a, 0.7);
    mdl_dataset ds;
    small_dataset(&ds, 9, 5, 2, 13);
    mdl_model *nb = mdl_create_arch(&mdl_logistic, &a, 0.1, 16);
    mdl_model *wb = mdl_create_arch(&mdl_logistic, &(mdl_arch){ .d = 5, .n_classes = 2 }, 0.1, 16);
    ck_assert_uint_eq(mdl_n_params(nb), 5);
    ck_assert_uint_eq(mdl_n_params(wb), 6);
    const double p[6] = { 0.3, -0.2, 0.7, 0.1, -0.5, 0.0 };
    const size_t batch[] = { 0, 2, 4, 6, 8 };
    double g_nb[5], g_wb[6];
    const double f_nb = mdl_loss_grad(nb, p, &ds, batch, 5, g_nb);
    const double f_wb = mdl_loss_grad(wb, p, &ds, batch, 5, g_wb);
    ck_assert_double_eq(f_nb, f_wb);
    for (int k = 0; k < 5; k++)
        ck_assert_double_eq(g_nb[k], g_wb[k]);
    /* a bias of 1 moves the biased model, not the other */
    const double p1[6] = { 0.3, -0.2, 0.7, 0.1, -0.5, 1.0 };
    ck_assert_double_eq(mdl_loss_grad(nb, p1, &ds, batch, 5, g_nb), f_nb);
    ck_assert_double_ne(mdl_loss_grad(wb, p1, &ds, batch, 5, g_wb), f_wb);
    ck_assert_uint_eq(mdl_linear.n_params(&(mdl_arch){ .d = 7, .no_bias = 1 }), 7);
    ck_assert_ptr_null(mdl_create_arch(&mdl_softmax, &(mdl_arch){ .d = 5, .n_classes = 3,
                                                                  .no_bias = 1 }, 0.0, 8));
    ck_assert_ptr_null(mdl_create_arch(&mdl_mlp, &(mdl_arch){ .d = 5, .n_classes = 3,
                                       .n_hidden = 1, .hidden = { 4 }, .no_bias = 1 }, 0.0, 8));
    mdl_destroy(nb);
    mdl_destroy(wb);
    mdl_dataset_fini(&ds);
}
END_TEST

/* H V against central differences of the gradient, (g(w + h v) - g(w -
 * h v)) / 2h column by column, for least squares (exact up to rounding:
 * its gradient is affine) and the logistic model with and without bias;
 * the types without a Hessian say so. */
static void hessian_check(mdl_model *m, const mdl_dataset *ds, double tol)
{
    const size_t P = mdl_n_params(m), k = 3;
    const size_t batch[] = { 0, 1, 2, 3, 4, 5, 6, 7, 1 };
    const size_t nb = sizeof batch / sizeof batch[0];
    double w[16], V[16 * 3], HV[16 * 3], work[16 * 3], gp[16], gm[16], x[16];
    ck_assert_uint_le(P, 16);
    gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
    gsl_rng_set(r, 17);
    for (size_t j = 0; j < P; j++)
        w[j] = gsl_ran_gaussian(r, 0.5);
    for (size_t j = 0; j < P * k; j++)
        V[j] = gsl_ran_gaussian(r, 1.0);
    ck_assert_int_eq(mdl_hessian_apply(m, w, ds, batch, nb, V, k, HV, work), 0);
    const double h = 1e-5;
    for (size_t c = 0; c < k; c++) {
        for (size_t j = 0; j < P; j++)
            x[j] = w[j] + h * V[j * k + c];
        mdl_loss_grad(m, x, ds, batch, nb, gp);
        for (size_t j = 0; j < P; j++)
            x[j] = w[j] - h * V[j * k + c];
        mdl_loss_grad(m, x, ds, batch, nb, gm);
        for (size_t j = 0; j < P; j++)
            ck_assert_double_eq_tol(HV[j * k + c], (gp[j] - gm[j]) / (2 * h), tol);
    }
    gsl_rng_free(r);
}

START_TEST(test_hessian_apply)
{
    mdl_dataset ds, te;
    small_dataset(&ds, 9, 5, 2, 19);
    for (int no_bias = 0; no_bias < 2; no_bias++) {
        mdl_model *m = mdl_create_arch(&mdl_logistic, &(mdl_arch){ .d = 5, .n_classes = 2,
                                       .no_bias = no_bias }, 0.1, 16);
        hessian_check(m, &ds, 1e-7);
        mdl_destroy(m);
    }
    mdl_synth_linear_spec sp = { .n_train = 20, .n_test = 5, .d = 5, .noise = 0.1 };
    mdl_dataset tr;
    ck_assert_int_eq(mdl_synth_regression(&sp, 3, &tr, &te, NULL), 0);
    mdl_model *lin = mdl_create_arch(&mdl_linear, &(mdl_arch){ .d = 5 }, 0.05, 16);
    hessian_check(lin, &tr, 1e-9);
    mdl_destroy(lin);
    mdl_model *sm = mdl_create_arch(&mdl_softmax, &(mdl_arch){ .d = 5, .n_classes = 2 }, 0, 16);
    double w[12] = { 0 }, V[12] = { 0 }, out[12], work[27];
    const size_t b[] = { 0 };
    ck_assert_int_eq(mdl_hessian_apply(sm, w, &ds, b, 1, V, 1, out, work), -1);
    mdl_destroy(sm);
    mdl_dataset_fini(&tr);
    mdl_dataset_fini(&te);
    mdl_dataset_fini(&ds);
}
END_TEST

START_TEST(test_mlp_shapes)
{
    mdl_arch a = { .d = 784, .n_classes = 10, .n_hidden = 1, .hidden = { 100 } };
    ck_assert_uint_eq(mdl_mlp.n_params(&a), 784 * 100 + 100 + 100 * 10 + 10);
    ck_assert_double_eq(mdl_mlp.flops(&a), 4.0 * 784 * 100 + 6.0 * 100 * 10);
    ck_assert_double_eq(mdl_softmax.flops(&(mdl_arch){ .d = 784, .n_classes = 10 }), 4.0 * 7840);
    mdl_model *m = mdl_create_arch(&mdl_mlp, &a, 1e-4, 32);
    ck_assert_ptr_nonnull(m);
    ck_assert_uint_eq(mdl_n_params(m), 79510);
    ck_assert_uint_eq(mdl_get_arch(m)->hidden[0], 100);
    /* He initialisation: first layer variance 2 / 784, zero biases. */
    double *p = malloc(79510 * sizeof *p);
    gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
    gsl_rng_set(r, 3);
    mdl_init_params(m, p, r);
    double ss = 0.0;
    for (size_t k = 0; k < 78400; k++)
        ss += p[k] * p[k];
    ck_assert_double_eq_tol(ss / 78400, 2.0 / 784, 0.03 * 2.0 / 784);
    for (size_t k = 78400; k < 78500; k++)
        ck_assert_double_eq(p[k], 0.0);
    free(p);
    gsl_rng_free(r);
    mdl_destroy(m);
    /* An MLP needs hidden layers; the linear models refuse them. */
    a.n_hidden = 0;
    ck_assert_ptr_null(mdl_create_arch(&mdl_mlp, &a, 0.0, 8));
    a.n_hidden = 1;
    a.hidden[0] = 0;
    ck_assert_ptr_null(mdl_create_arch(&mdl_mlp, &a, 0.0, 8));
    a.hidden[0] = 3;
    ck_assert_ptr_null(mdl_create_arch(&mdl_softmax, &a, 0.0, 8));
    a.n_hidden = MDL_MAX_HIDDEN + 1;
    ck_assert_ptr_null(mdl_create_arch(&mdl_mlp, &a, 0.0, 8));
}
END_TEST

/* Linear regression: gradient against finite differences (with L2), the
 * loss in closed form, NaN accuracy, and full-batch gradient descent on
 * noise-free generated data recovering the known true weights. */
START_TEST(test_linear_regression)
{
    const size_t d = 5;
    mdl_synth_linear_spec sp = { .n_train = 400, .n_test = 50, .d = d, .noise = 0.0 };
    mdl_dataset tr, te;
    double w_true[6];
    ck_assert_int_eq(mdl_synth_regression(&sp, 21, &tr, &te, w_true), 0);
    ck_assert_int_eq(tr.n_classes, 0);
    ck_assert_ptr_null(tr.y);
    ck_assert_ptr_nonnull(tr.t);
    /* Noise 0: every target is exactly the linear function (up to the
     * order of the sum). */
    for (size_t i = 0; i < tr.n; i++) {
        double z = w_true[d];
        for (size_t j = 0; j < d; j++)
            z += w_true[j] * tr.x[i * d + j];
        ck_assert_double_eq_tol(tr.t[i], z, 1e-12);
    }
    mdl_model *m = mdl_create(&mdl_linear, d, 0, 0.3, 400);
    ck_assert_ptr_nonnull(m);
    ck_assert_ptr_null(mdl_create(&mdl_linear, d, 2, 0.0, 8));
    ck_assert_ptr_null(mdl_create(&mdl_softmax, d, 0, 0.0, 8));
    double p[6] = { 0.3, -0.2, 0.5, 1.0, -1.5, 0.7 }, g[6], s6[6];
    const size_t batch[] = { 3, 1, 4, 1, 5, 9, 2, 6 };
    const double f = mdl_loss_grad(m, p, &tr, batch, 8, g);
    /* Closed form of the loss: mean of r^2/2 plus l2/2 ||w||^2. */
    double expect = 0.0, ww = 0.0;
    for (size_t b = 0; b < 8; b++) {
        double r = p[d] - tr.t[batch[b]];
        for (size_t j = 0; j < d; j++)
            r += p[j] * tr.x[batch[b] * d + j];
        expect += 0.5 * r * r / 8;
    }
    for (size_t j = 0; j < d; j++)
        ww += p[j] * p[j];
    ck_assert_double_eq_tol(f, expect + 0.15 * ww, 1e-12);
    for (size_t k = 0; k < 6; k++) {
        const double h = 1e-6, keep = p[k];
        p[k] = keep + h;
        const double fp = mdl_loss_grad(m, p, &tr, batch, 8, s6);
        p[k] = keep - h;
        const double fm = mdl_loss_grad(m, p, &tr, batch, 8, s6);
        p[k] = keep;
        ck_assert_double_eq_tol(g[k], (fp - fm) / (2 * h), 1e-7);
    }
    double loss_all, acc;
    mdl_evaluate(m, p, &te, NULL, 0, &loss_all, &acc);
    ck_assert(isnan(acc));
    size_t idx[50];
    for (size_t i = 0; i < 50; i++)
        idx[i] = i;
    double loss_idx;
    mdl_evaluate(m, p, &te, idx, 50, &loss_idx, NULL);
    ck_assert_double_eq(loss_all, loss_idx);
    mdl_destroy(m);

    /* Recovery: no L2, full batch, gradient descent. */
    m = mdl_create(&mdl_linear, d, 0, 0.0, 400);
    size_t all[400];
    for (size_t i = 0; i < 400; i++)
        all[i] = i;
    double w[6] = { 0 }, gw[6];
    for (int it = 0; it < 300; it++) {
        mdl_loss_grad(m, w, &tr, all, 400, gw);
        for (size_t k = 0; k < 6; k++)
            w[k] -= 0.5 * gw[k];
    }
    for (size_t k = 0; k < 6; k++)
        ck_assert_double_eq_tol(w[k], w_true[k], 1e-9);
    mdl_destroy(m);
    mdl_dataset_fini(&tr);
    mdl_dataset_fini(&te);
}
END_TEST

/* Logistic data with known weights: maximum likelihood (full-batch
 * gradient descent, no L2) points where the true weights point. */
START_TEST(test_synthetic_logistic_recovers_weights)
{
    const size_t d = 4, n = 4000;
    mdl_synth_linear_spec sp = { .n_train = n, .n_test = 10, .d = d, .separation = 4.0 };
    mdl_dataset tr, te;
    double w_true[5];
    ck_assert_int_eq(mdl_synth_logistic(&sp, 8, &tr, &te, w_true), 0);
    ck_assert_int_eq(tr.n_classes, 2);
    ck_assert_double_eq(w_true[d], 0.0);
    mdl_model *m = mdl_create(&mdl_logistic, d, 2, 0.0, n);
    size_t *all = malloc(n * sizeof *all);
    for (size_t i = 0; i < n; i++)
        all[i] = i;
    double w[5] = { 0 }, g[5];
    for (int it = 0; it < 400; it++) {
        mdl_loss_grad(m, w, &tr, all, n, g);
        for (size_t k = 0; k < 5; k++)
            w[k] -= 2.0 * g[k];
    }
    double dot = 0, nw = 0, nt = 0;
    for (size_t k = 0; k < d; k++) {
        dot += w[k] * w_true[k];
        nw += w[k] * w[k];
        nt += w_true[k] * w_true[k];
    }
    ck_assert_msg(dot / sqrt(nw * nt) > 0.99, "cosine %g", dot / sqrt(nw * nt));
    ck_assert_msg(fabs(sqrt(nw / nt) - 1) < 0.25, "norm ratio %g", sqrt(nw / nt));
    ck_assert_double_lt(fabs(w[d]), 0.15);
    free(all);
    mdl_destroy(m);
    mdl_dataset_fini(&tr);
    mdl_dataset_fini(&te);
}
END_TEST

START_TEST(test_registry)
{
    ck_assert_ptr_eq(mdl_type_find("softmax"), &mdl_softmax);
    ck_assert_ptr_eq(mdl_type_find("logistic"), &mdl_logistic);
    ck_assert_ptr_eq(mdl_type_find("mlp"), &mdl_mlp);
    ck_assert_ptr_null(mdl_type_find("softmx"));
    ck_assert_ptr_null(mdl_type_find(""));
    ck_assert_ptr_null(mdl_type_find(NULL));
    ck_assert_str_eq(mdl_type_names(), "linear, logistic, mlp, softmax");

    /* Every listed name is found. */
    char names[64];
    strcpy(names, mdl_type_names());
    for (char *tok = strtok(names, ", "); tok != NULL; tok = strtok(NULL, ", "))
        ck_assert_ptr_nonnull(mdl_type_find(tok));

    const mdl_arch a784x10 = { .d = 784, .n_classes = 10 }, a784x2 = { .d = 784, .n_classes = 2 };
    ck_assert_uint_eq(mdl_softmax.n_params(&a784x10), 7850);
    ck_assert_uint_eq(mdl_logistic.n_params(&a784x2), 785);

    mdl_model *m = mdl_create(&mdl_softmax, 784, 10, 1e-4, 32);
    ck_assert_ptr_nonnull(m);
    ck_assert_uint_eq(mdl_n_params(m), 7850);
    ck_assert_ptr_eq(mdl_get_type(m), &mdl_softmax);
    mdl_destroy(m);
    mdl_destroy(NULL);

    ck_assert_ptr_null(mdl_create(&mdl_logistic, 5, 3, 0.0, 8));
    ck_assert_ptr_null(mdl_create(&mdl_softmax, 5, 1, 0.0, 8));
    ck_assert_ptr_null(mdl_create(&mdl_softmax, 0, 3, 0.0, 8));
    ck_assert_ptr_null(mdl_create(&mdl_softmax, 5, 3, 0.0, 0));
    ck_assert_ptr_null(mdl_create(&mdl_softmax, 5, 3, -1.0, 8));
    ck_assert_ptr_null(mdl_create(&mdl_softmax, 5, 3, NAN, 8));
    ck_assert_ptr_null(mdl_create(NULL, 5, 3, 0.0, 8));
}
END_TEST

/* With all-zero parameters every class is equally likely: the loss is
 * log(C) whatever the data and the L2 term vanishes; the bias gradient is
 * 1/C minus the class frequencies and the weight gradient of class k is the
 * mean of x / C minus the mean of x over class k, both divided by n. */
static void zero_params(const mdl_type *t, int C)
{
    const size_t d = 5, n = 13;
    const size_t batch[] = { 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12 };
    mdl_dataset ds;
    small_dataset(&ds, n, d, C, 3);
    mdl_model *m = mdl_create(t, d, C, 0.5, 16);
    ck_assert_ptr_nonnull(m);
    const size_t P = mdl_n_params(m);
    double *params = calloc(P, sizeof *params);
    double *g = malloc(P * sizeof *g);

    const double loss = mdl_loss_grad(m, params, &ds, batch, n, g);
    const double expect = t == &mdl_logistic ? log(2.0) : log((double)C);
    ck_assert_msg(fabs(loss - expect) <= 4 * DBL_EPSILON * expect,
                  "%s C=%d: loss %.17g, expected %.17g", t->name, C, loss, expect);
    double eloss, acc;
    mdl_evaluate(m, params, &ds, NULL, 0, &eloss, &acc);
    ck_assert(fabs(eloss - expect) <= 4 * DBL_EPSILON * expect);

    if (t == &mdl_softmax) {
        for (int k = 0; k < C; k++) {
            double freq = 0.0;
            for (size_t i = 0; i < n; i++)
                freq += ds.y[i] == k;
            freq /= (double)n;
            ck_assert(fabs(g[(size_t)C * d + (size_t)k] - (1.0 / C - freq)) < 1e-15);
            for (size_t j = 0; j < d; j++) {
                double gw = 0.0;
                for (size_t i = 0; i < n; i++)
                    gw += ds.x[i * d + j] * (1.0 / C - (ds.y[i] == k));
                ck_assert(fabs(g[(size_t)k * d + j] - gw / (double)n) < 1e-14);
            }
        }
        /* Ties go to class 0. */
        double zeros = 0.0;
        for (size_t i = 0; i < n; i++)
            zeros += ds.y[i] == 0;
        ck_assert_double_eq(acc, zeros / (double)n);
    } else {
        double gb = 0.0;
        for (size_t i = 0; i < n; i++)
            gb += 0.5 - ds.y[i];
        ck_assert(fabs(g[d] - gb / (double)n) < 1e-15);
        /* z = 0 predicts class 0. */
        double zeros = 0.0;
        for (size_t i = 0; i < n; i++)
            zeros += ds.y[i] == 0;
        ck_assert_double_eq(acc, zeros / (double)n);
    }
    free(g);
    free(params);
    mdl_destroy(m);
    mdl_dataset_fini(&ds);
}

START_TEST(test_zero_params_loss)
{
    zero_params(&mdl_softmax, 3);
    zero_params(&mdl_softmax, 10);
    zero_params(&mdl_logistic, 2);
}
END_TEST

/* Closed-form accuracy and loss on four hand-made points. */
START_TEST(test_evaluate_closed_form)
{
    double x[] = { 2.0, 0.0, -1.0, 5.0, 3.0, 1.0, -4.0, -2.0 };
    int y[] = { 1, 0, 0, 0 };
    mdl_dataset ds = { .n = 4, .d = 2, .n_classes = 2, .x = x, .y = y };
    /* logistic: w = (1, 0), b = 0.5, l2 = 0.2: z = 2.5, -0.5, 3.5, -3.5. */
    double pl[] = { 1.0, 0.0, 0.5 };
    mdl_model *m = mdl_create(&mdl_logistic, 2, 2, 0.2, 3);
    double loss, acc;
    mdl_evaluate(m, pl, &ds, NULL, 0, &loss, &acc);
    ck_assert_double_eq(acc, 0.75);
    const double expect = (log1p(exp(-2.5)) + log1p(exp(-0.5)) + log1p(exp(3.5))
                           + log1p(exp(-3.5))) / 4.0 + 0.1;
    ck_assert_msg(fabs(loss - expect) < 1e-14, "loss %.17g, expected %.17g", loss, expect);
    /* A subset through idx: samples 2 and 1. */
    const size_t idx[] = { 2, 1 };
    mdl_evaluate(m, pl, &ds, idx, 2, &loss, &acc);
    ck_assert_double_eq(acc, 0.5);
    ck_assert(fabs(loss - ((log1p(exp(3.5)) + log1p(exp(-0.5))) / 2.0 + 0.1)) < 1e-14);
    mdl_evaluate(m, pl, &ds, idx, 0, &loss, &acc);
    ck_assert(isnan(loss) && isnan(acc));
    mdl_destroy(m);

    /* softmax with 2 classes, W = ((0, 0), (1, 0)), b = (0.5, 0): the
     * margin z1 - z0 = x0 - 0.5 is 1.5, -1.5, 2.5, -4.5. */
    double ps[] = { 0.0, 0.0, 1.0, 0.0, 0.5, 0.0 };
    m = mdl_create(&mdl_softmax, 2, 2, 0.0, 3);
    mdl_evaluate(m, ps, &ds, NULL, 0, &loss, &acc);
    ck_assert_double_eq(acc, 0.75);
    const double e2 = (log1p(exp(-1.5)) + log1p(exp(-1.5)) + log1p(exp(2.5))
                       + log1p(exp(-4.5))) / 4.0;
    ck_assert_msg(fabs(loss - e2) < 1e-14, "loss %.17g, expected %.17g", loss, e2);
    mdl_destroy(m);
}
END_TEST

/* Evaluation in chunks of max_batch (n not a multiple) agrees with one
 * batch through loss_grad, and over NULL with the explicit index list. */
static void chunked(const mdl_type *t, int C)
{
    const size_t d = 7, n = 53;
    mdl_dataset ds;
    small_dataset(&ds, n, d, C, 17);
    mdl_model *small = mdl_create(t, d, C, 0.3, 8);
    mdl_model *big = mdl_create(t, d, C, 0.3, n);
    const size_t P = mdl_n_params(small);
    double *params = malloc(P * sizeof *params);
    double *g = malloc(P * sizeof *g);
    size_t *idx = malloc(n * sizeof *idx);
    gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
    gsl_rng_set(r, 23);
    for (size_t k = 0; k < P; k++)
        params[k] = gsl_ran_gaussian(r, 0.5);
    for (size_t i = 0; i < n; i++)
        idx[i] = n - 1 - i;

    const double one = mdl_loss_grad(big, params, &ds, idx, n, g);
    double l_all, a_all, l_idx, a_idx, l_big, a_big;
    mdl_evaluate(small, params, &ds, NULL, 0, &l_all, &a_all);
    mdl_evaluate(small, params, &ds, idx, n, &l_idx, &a_idx);
    mdl_evaluate(big, params, &ds, idx, n, &l_big, &a_big);
    ck_assert_msg(fabs(l_all - one) < 1e-13, "%s: %.17g vs %.17g", t->name, l_all, one);
    ck_assert(fabs(l_idx - one) < 1e-13);
    ck_assert(fabs(l_big - one) < 1e-13);
    ck_assert_double_eq(a_all, a_idx);
    ck_assert_double_eq(a_all, a_big);
    ck_assert(a_all > 0.0 && a_all < 1.0);
    mdl_evaluate(small, params, &ds, NULL, 0, NULL, NULL);

    gsl_rng_free(r);
    free(idx);
    free(g);
    free(params);
    mdl_destroy(big);
    mdl_destroy(small);
    mdl_dataset_fini(&ds);
}

START_TEST(test_evaluate_chunked)
{
    chunked(&mdl_softmax, 4);
    chunked(&mdl_logistic, 2);
}
END_TEST

START_TEST(test_init_params)
{
    mdl_model *m = mdl_create(&mdl_softmax, 100, 10, 0.0, 4);
    const size_t P = mdl_n_params(m), W = 1000;
    double *a = malloc(P * sizeof *a), *b = malloc(P * sizeof *b);
    gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
    gsl_rng_set(r, 99);
    mdl_init_params(m, a, r);
    gsl_rng_set(r, 99);
    mdl_init_params(m, b, r);
    ck_assert(memcmp(a, b, P * sizeof *a) == 0);
    double ss = 0.0;
    for (size_t k = 0; k < W; k++)
        ss += a[k] * a[k];
    const double sd = sqrt(ss / W);
    ck_assert_msg(sd > 0.009 && sd < 0.011, "weight sd %g", sd);
    for (size_t k = W; k < P; k++)
        ck_assert_double_eq(a[k], 0.0);
    gsl_rng_free(r);
    free(b);
    free(a);
    mdl_destroy(m);
}
END_TEST

static int same_dataset(const mdl_dataset *a, const mdl_dataset *b)
{
    return a->n == b->n && a->d == b->d && a->n_classes == b->n_classes
        && memcmp(a->x, b->x, a->n * a->d * sizeof *a->x) == 0
        && memcmp(a->y, b->y, a->n * sizeof *a->y) == 0;
}

START_TEST(test_synthetic_deterministic)
{
    const mdl_synth_spec spec = { 200, 50, 6, 4, 2.0 };
    mdl_dataset tr1, te1, tr2, te2, tr3, te3, tr4, te4;
    ck_assert_int_eq(mdl_synth_generate(&spec, 42, &tr1, &te1), 0);
    ck_assert_int_eq(mdl_synth_generate(&spec, 42, &tr2, &te2), 0);
    ck_assert_int_eq(mdl_synth_generate(&spec, 43, &tr3, &te3), 0);
    /* Differs from 42 only in the high half. */
    ck_assert_int_eq(mdl_synth_generate(&spec, 42 | (42ull << 32), &tr4, &te4), 0);

    ck_assert_uint_eq(tr1.n, 200);
    ck_assert_uint_eq(te1.n, 50);
    ck_assert_uint_eq(tr1.d, 6);
    ck_assert_int_eq(tr1.n_classes, 4);
    ck_assert(same_dataset(&tr1, &tr2));
    ck_assert(same_dataset(&te1, &te2));
    ck_assert(!same_dataset(&tr1, &tr3));
    ck_assert(!same_dataset(&te1, &te3));
    ck_assert(!same_dataset(&tr1, &tr4));

    int seen[4] = { 0 };
    for (size_t i = 0; i < tr1.n; i++) {
        ck_assert(tr1.y[i] >= 0 && tr1.y[i] < 4);
        seen[tr1.y[i]]++;
    }
    for (int k = 0; k < 4; k++)
        ck_assert_int_gt(seen[k], 20);

    mdl_dataset_fini(&tr3);
    mdl_dataset_fini(&te3);
    const mdl_synth_spec bad_d = { 10, 10, 0, 3, 1.0 };
    const mdl_synth_spec bad_c = { 10, 10, 2, 1, 1.0 };
    const mdl_synth_spec bad_sep = { 10, 10, 2, 3, -1.0 };
    ck_assert_int_eq(mdl_synth_generate(&bad_d, 1, &tr3, &te3), -1);
    ck_assert_int_eq(mdl_synth_generate(&bad_c, 1, &tr3, &te3), -1);
    ck_assert_int_eq(mdl_synth_generate(&bad_sep, 1, &tr3, &te3), -1);
    ck_assert_ptr_null(tr3.x);

    mdl_dataset_fini(&tr1);
    mdl_dataset_fini(&te1);
    mdl_dataset_fini(&tr2);
    mdl_dataset_fini(&te2);
    mdl_dataset_fini(&tr4);
    mdl_dataset_fini(&te4);
    mdl_dataset_fini(NULL);
}
END_TEST

/* Train and test share the class means; noise around them has unit
 * variance.  With 3000 samples per set the per-class means of train and
 * test differ by about sqrt(2 / 1000) = 0.045 per coordinate. */
START_TEST(test_synthetic_distribution)
{
    const size_t d = 4;
    const int C = 3;
    const mdl_synth_spec spec = { 3000, 3000, d, C, 5.0 };
    mdl_dataset tr, te;
    ck_assert_int_eq(mdl_synth_generate(&spec, 7, &tr, &te), 0);
    double mean[2][3][4] = { { { 0 } } }, cnt[2][3] = { { 0 } };
    const mdl_dataset *sets[2] = { &tr, &te };
    for (int s = 0; s < 2; s++)
        for (size_t i = 0; i < sets[s]->n; i++) {
            cnt[s][sets[s]->y[i]] += 1.0;
            for (size_t j = 0; j < d; j++)
                mean[s][sets[s]->y[i]][j] += sets[s]->x[i * d + j];
        }
    for (int s = 0; s < 2; s++)
        for (int k = 0; k < C; k++)
            for (size_t j = 0; j < d; j++)
                mean[s][k][j] /= cnt[s][k];
    double var = 0.0, spread = 0.0;
    for (int k = 0; k < C; k++)
        for (size_t j = 0; j < d; j++) {
            ck_assert_msg(fabs(mean[0][k][j] - mean[1][k][j]) < 0.2,
                          "class %d coord %zu: %g vs %g", k, j, mean[0][k][j], mean[1][k][j]);
            spread += mean[0][k][j] * mean[0][k][j];
        }
    for (size_t i = 0; i < tr.n; i++)
        for (size_t j = 0; j < d; j++) {
            const double e = tr.x[i * d + j] - mean[0][tr.y[i]][j];
            var += e * e;
        }
    var /= (double)(tr.n * d);
    ck_assert_msg(var > 0.93 && var < 1.07, "noise variance %g", var);
    /* Means have variance separation^2 = 25 per coordinate. */
    spread /= (double)(C * d);
    ck_assert_msg(spread > 5.0 && spread < 100.0, "mean spread %g", spread);
    mdl_dataset_fini(&tr);
    mdl_dataset_fini(&te);
}
END_TEST

static void check_partition(size_t n, int nodes, uint64_t seed)
{
    mdl_partition p, q;
    ck_assert_int_eq(mdl_partition_iid(n, nodes, seed, &p), 0);
    ck_assert_int_eq(mdl_partition_iid(n, nodes, seed, &q), 0);
    ck_assert_int_eq(p.n_nodes, nodes);
    ck_assert_uint_eq(p.off[0], 0);
    ck_assert_uint_eq(p.off[nodes], n);

    const size_t base = n / (size_t)nodes, extra = n % (size_t)nodes;
    for (int i = 0; i < nodes; i++) {
        const size_t size = p.off[i + 1] - p.off[i];
        ck_assert_uint_eq(size, base + ((size_t)i < extra));
    }
    int *count = calloc(n > 0 ? n : 1, sizeof *count);
    for (size_t k = 0; k < n; k++) {
        ck_assert_uint_lt(p.idx[k], n);
        count[p.idx[k]]++;
    }
    for (size_t k = 0; k < n; k++)
        ck_assert_msg(count[k] == 1, "sample %zu assigned %d times", k, count[k]);
    ck_assert(n == 0 || memcmp(p.idx, q.idx, n * sizeof *p.idx) == 0);
    ck_assert(memcmp(p.off, q.off, ((size_t)nodes + 1) * sizeof *p.off) == 0);
    free(count);
    mdl_partition_fini(&q);
    mdl_partition_fini(&p);
}

START_TEST(test_partition_iid)
{
    check_partition(103, 10, 1);
    check_partition(100, 10, 2);
    check_partition(5, 8, 3);
    check_partition(0, 4, 4);
    check_partition(1000, 1, 5);
    check_partition(1, 1, 0);

    /* The shuffle shuffles, and the seed matters. */
    mdl_partition a, b;
    ck_assert_int_eq(mdl_partition_iid(103, 10, 1, &a), 0);
    ck_assert_int_eq(mdl_partition_iid(103, 10, 2, &b), 0);
    size_t fixed = 0;
    for (size_t k = 0; k < 103; k++)
        fixed += a.idx[k] == k;
    ck_assert_uint_lt(fixed, 10);
    ck_assert(memcmp(a.idx, b.idx, 103 * sizeof *a.idx) != 0);
    mdl_partition_fini(&a);
    mdl_partition_fini(&b);
    mdl_partition_fini(NULL);

    ck_assert_int_eq(mdl_partition_iid(10, 0, 1, &a), -1);
    ck_assert_ptr_null(a.idx);
}
END_TEST

/* Full-batch Nesterov accelerated gradient descent for an L-smooth,
 * mu-strongly convex loss: step 1/L, momentum (sqrt L - sqrt mu) / (sqrt L +
 * sqrt mu) with mu = l2.  L bounds the Hessian by 1/2 * (mean of ||x||^2 +
 * 1) + l2 (Bohning's bound 1/2 on the softmax curvature, times the trace of
 * the second moment of (x, 1)).  Stops where the gradient norm falls below
 * 1e-8 and leaves that point in params; returns the norm there. */
static double optimum(mdl_model *m, const mdl_dataset *ds, const size_t *all,
                      double *params, double l2)
{
    const size_t P = mdl_n_params(m);
    double *g = malloc(P * sizeof *g), *x = calloc(P, sizeof *x);
    double sq = 0.0;
    for (size_t k = 0; k < ds->n * ds->d; k++)
        sq += ds->x[k] * ds->x[k];
    const double L = 0.5 * (sq / (double)ds->n + 1.0) + l2;
    const double beta = (sqrt(L) - sqrt(l2)) / (sqrt(L) + sqrt(l2));
    double gn = INFINITY;
    for (size_t k = 0; k < P; k++)
        params[k] = 0.0;
    for (int it = 0; it < 100000; it++) {
        mdl_loss_grad(m, params, ds, all, ds->n, g);
        double s = 0.0;
        for (size_t k = 0; k < P; k++)
            s += g[k] * g[k];
        gn = sqrt(s);
        if (gn < 1e-8)
            break;
        for (size_t k = 0; k < P; k++) {
            const double next = params[k] - g[k] / L;
            params[k] = next + beta * (next - x[k]);
            x[k] = next;
        }
    }
    free(x);
    free(g);
    return gn;
}

static void sgd_vs_optimum(const mdl_type *t, int C)
{
    const double l2 = 0.01, lr = 0.05;
    const int steps = 4000;
    const size_t nb = 32;
    const mdl_synth_spec spec = { 1000, 500, 10, C, 1.5 };
    mdl_dataset tr, te;
    ck_assert_int_eq(mdl_synth_generate(&spec, 2024, &tr, &te), 0);

    mdl_model *full = mdl_create(t, spec.d, C, l2, tr.n);
    mdl_model *m = mdl_create(t, spec.d, C, l2, nb);
    const size_t P = mdl_n_params(m);
    size_t *all = malloc(tr.n * sizeof *all);
    for (size_t i = 0; i < tr.n; i++)
        all[i] = i;
    double *opt = malloc(P * sizeof *opt);
    const double gn = optimum(full, &tr, all, opt, l2);
    ck_assert_msg(gn < 1e-8, "%s: gradient descent stopped at |g| = %g", t->name, gn);
    double f_opt, acc_opt, f_test, acc_test;
    mdl_evaluate(m, opt, &tr, NULL, 0, &f_opt, &acc_opt);
    mdl_evaluate(m, opt, &te, NULL, 0, &f_test, &acc_test);
    ck_assert_msg(acc_opt > 0.9, "%s: train accuracy at optimum %g", t->name, acc_opt);
    ck_assert_msg(acc_test > 0.9, "%s: test accuracy at optimum %g", t->name, acc_test);

    double *w = malloc(P * sizeof *w), *g = malloc(P * sizeof *g);
    size_t batch[32];
    gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
    gsl_rng_set(r, 77);
    mdl_init_params(m, w, r);
    double f0;
    mdl_evaluate(m, w, &tr, NULL, 0, &f0, NULL);
    for (int s = 0; s < steps; s++) {
        for (size_t i = 0; i < nb; i++)
            batch[i] = gsl_rng_uniform_int(r, tr.n);
        mdl_loss_grad(m, w, &tr, batch, nb, g);
        for (size_t k = 0; k < P; k++)
            w[k] -= lr * g[k];
    }
    double f_sgd, acc_sgd;
    mdl_evaluate(m, w, &tr, NULL, 0, &f_sgd, &acc_sgd);
    ck_assert_msg(f_sgd > f_opt - 1e-9, "%s: SGD %.12g below the optimum %.12g",
                  t->name, f_sgd, f_opt);
    ck_assert_msg(f_sgd - f_opt < 0.01, "%s: SGD %.6g, optimum %.6g, start %.6g",
                  t->name, f_sgd, f_opt, f0);
    ck_assert(f0 - f_opt > 0.2); /* the test starts far from the answer */

    gsl_rng_free(r);
    free(g);
    free(w);
    free(opt);
    free(all);
    mdl_destroy(m);
    mdl_destroy(full);
    mdl_dataset_fini(&tr);
    mdl_dataset_fini(&te);
}

START_TEST(test_softmax_sgd_optimum)
{
    sgd_vs_optimum(&mdl_softmax, 3);
}
END_TEST

START_TEST(test_logistic_sgd_optimum)
{
    sgd_vs_optimum(&mdl_logistic, 2);
}
END_TEST

static Suite *models_suite(void)
{
    Suite *s = suite_create("models");
    TCase *tc = tcase_create("core");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, test_registry);
    tcase_add_test(tc, test_softmax_gradient_fd);
    tcase_add_test(tc, test_logistic_gradient_fd);
    tcase_add_test(tc, test_no_bias);
    tcase_add_test(tc, test_hessian_apply);
    tcase_add_test(tc, test_mlp_gradient_fd);
    tcase_add_test(tc, test_mlp_every_layer_checked);
    tcase_add_test(tc, test_mlp_shapes);
    tcase_add_test(tc, test_linear_regression);
    tcase_add_test(tc, test_synthetic_logistic_recovers_weights);
    tcase_add_test(tc, test_zero_params_loss);
    tcase_add_test(tc, test_evaluate_closed_form);
    tcase_add_test(tc, test_evaluate_chunked);
    tcase_add_test(tc, test_init_params);
    suite_add_tcase(s, tc);

    TCase *data = tcase_create("datasets");
    tcase_add_test(data, test_synthetic_deterministic);
    tcase_add_test(data, test_synthetic_distribution);
    tcase_add_test(data, test_partition_iid);
    suite_add_tcase(s, data);

    TCase *opt = tcase_create("optimum");
    tcase_set_timeout(opt, 60);
    tcase_add_test(opt, test_softmax_sgd_optimum);
    tcase_add_test(opt, test_logistic_sgd_optimum);
    suite_add_tcase(s, opt);
    return s;
}

int main(void)
{
    gsl_set_error_handler_off();
    SRunner *sr = srunner_create(models_suite());
    srunner_run_all(sr, CK_NORMAL);
    const int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
