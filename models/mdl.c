/* mdl.c -- the model registry and the type-independent half of every model:
 * creating an instance and its workspace, gathering a batch's rows into that
 * workspace, evaluation in chunks, and the helpers the types share (L2 term,
 * weight initialisation, seeding).  It does no model arithmetic itself:
 * forward and backward passes live in one file per type (mdl_softmax.c,
 * mdl_logistic.c, mdl_mlp.c), and nothing here allocates after mdl_create.
 */
#include <assert.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <gsl/gsl_cblas.h>
#include <gsl/gsl_randist.h>
#include "mdl_internal.h"
#include "sim_mix.h"

/* Sorted by name, matching mdl_type_names. */
static const mdl_type *const all[] = { &mdl_linear, &mdl_logistic, &mdl_mlp, &mdl_softmax };

const mdl_type *mdl_type_find(const char *name)
{
    if (name == NULL)
        return NULL;
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
        if (strcmp(all[i]->name, name) == 0)
            return all[i];
    return NULL;
}

const char *mdl_type_names(void)
{
    return "linear, logistic, mlp, softmax";
}

mdl_model *mdl_create(const mdl_type *t, size_t d, int n_classes, double l2,
                      size_t max_batch)
{
    mdl_arch a = { .d = d, .n_classes = n_classes };
    return mdl_create_arch(t, &a, l2, max_batch);
}

mdl_model *mdl_create_arch(const mdl_type *t, const mdl_arch *a, double l2,
                           size_t max_batch)
{
    const size_t d = a->d;
    if (t == NULL || d == 0 || d > INT_MAX || max_batch == 0 || max_batch > INT_MAX
        || a->n_classes < 0 || a->n_classes == 1 || a->n_hidden > MDL_MAX_HIDDEN
        || !t->supports(a) || (a->heads && t != &mdl_mlp)
        || !(l2 >= 0.0) || !isfinite(l2))
        return NULL;
    for (size_t l = 0; l < a->n_hidden; l++)
        if (a->hidden[l] == 0 || a->hidden[l] > INT_MAX)
            return NULL;
    if (max_batch > SIZE_MAX / sizeof(double) / d)
        return NULL;

    mdl_model *m = calloc(1, sizeof *m);
    if (m == NULL)
        return NULL;
    m->type = t;
    m->arch = *a;
    m->d = d;
    m->n_classes = a->n_classes;
    m->l2 = l2;
    m->max_batch = max_batch;
    m->n_params = t->n_params(a);
    m->x = malloc(max_batch * d * sizeof *m->x);
    if (m->x == NULL)
        goto out_free_model;
    m->y = malloc(max_batch * sizeof *m->y);
    if (m->y == NULL)
        goto out_free_x;
    m->t = malloc(max_batch * sizeof *m->t);
    if (m->t == NULL)
        goto out_free_y;
    m->ws = t->alloc(a, max_batch);
    if (m->ws == NULL)
        goto out_free_t;
    return m;

out_free_t:
    free(m->t);
out_free_y:
    free(m->y);
out_free_x:
    free(m->x);
out_free_model:
    free(m);
    return NULL;
}

void mdl_destroy(mdl_model *m)
{
    if (m == NULL)
        return;
    m->type->free(m->ws);
    free(m->t);
    free(m->y);
    free(m->x);
    free(m);
}

mdl_model *mdl_clone(const mdl_model *m)
{
    return mdl_create_arch(m->type, &m->arch, m->l2, m->max_batch);
}

size_t mdl_n_params(const mdl_model *m)
{
    return m->n_params;
}

double mdl_flops_per_sample(const mdl_model *m)
{
    return m->type->flops(&m->arch);
}

const mdl_type *mdl_get_type(const mdl_model *m)
{
    return m->type;
}

const mdl_arch *mdl_get_arch(const mdl_model *m)
{
    return &m->arch;
}

void mdl_init_params(const mdl_model *m, double *params, gsl_rng *rng)
{
    m->type->init(m, params, rng);
}

/* Rows asked for ahead of their copy (a random row of a large set is a
 * memory access away). */
#define GATHER_AHEAD 4

/* Copies the rows idx[0 .. n-1] of ds (rows first .. first+n-1 when idx
 * is NULL), as doubles, and their labels or targets into the workspace. */
static void gather(mdl_model *m, const mdl_dataset *ds, const size_t *idx, size_t first,
                   size_t n)
{
    const size_t d = m->d;
    for (size_t i = 0; i < n && i < GATHER_AHEAD; i++)
        mdl_dataset_prefetch_row(ds, idx ? idx[i] : first + i);
    for (size_t i = 0; i < n; i++) {
        const size_t r = idx ? idx[i] : first + i;
        assert(r < ds->n);
        if (i + GATHER_AHEAD < n)
            mdl_dataset_prefetch_row(ds, idx ? idx[i + GATHER_AHEAD] : first + i + GATHER_AHEAD);
        mdl_dataset_row(ds, r, m->x + i * d);
        if (ds->y) {
            assert(ds->y[r] >= 0 && ds->y[r] < m->n_classes);
            m->y[i] = ds->y[r];
        }
        if (ds->t)
            m->t[i] = ds->t[r];
    }
}

double mdl_loss_grad(mdl_model *m, const double *params, const mdl_dataset *ds,
                     const size_t *batch, size_t n_batch, double *grad)
{
    assert(n_batch >= 1 && n_batch <= m->max_batch);
    assert(ds->d == m->d && ds->n_classes == m->n_classes);
    gather(m, ds, batch, 0, n_batch);
    return m->type->loss_grad(m, m->ws, params, m->x, m->y, n_batch, grad);
}

int mdl_has_hessian(const mdl_model *m) { return m->type->hess_apply != NULL; }

int mdl_hessian_apply(mdl_model *m, const double *params, const mdl_dataset *ds,
                      const size_t *batch, size_t n_batch, const double *V, size_t k,
                      double *out, double *work)
{
    if (!m->type->hess_apply)
        return -1;
    assert(n_batch >= 1 && n_batch <= m->max_batch);
    assert(ds->d == m->d && ds->n_classes == m->n_classes);
    gather(m, ds, batch, 0, n_batch);
    m->type->hess_apply(m, params, m->x, m->y, n_batch, V, k, out, work);
    return 0;
}

void mdl_i_one_output_hess(const mdl_model *m, const double *X, const double *D, size_t n,
                           const double *V, size_t k, double *out, double *T)
{
    const size_t d = m->d;
    const int bias = !m->arch.no_bias;
    /* T = X~ V: the weights' rows of V, then the bias row added */
    cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, (int)n, (int)k, (int)d, 1.0, X,
                (int)d, V, (int)k, 0.0, T, (int)k);
    for (size_t i = 0; i < n; i++) {
        const double s = (D ? D[i] : 1.0) / (double)n;
        for (size_t c = 0; c < k; c++)
            T[i * k + c] = (T[i * k + c] + (bias ? V[d * k + c] : 0.0)) * s;
    }
    /* out = X~^T T, plus l2 on the weights */
    cblas_dgemm(CblasRowMajor, CblasTrans, CblasNoTrans, (int)d, (int)k, (int)n, 1.0, X,
                (int)d, T, (int)k, 0.0, out, (int)k);
    for (size_t j = 0; j < d * k; j++)
        out[j] += m->l2 * V[j];
    if (bias)
        for (size_t c = 0; c < k; c++) {
            double sb = 0.0;
            for (size_t i = 0; i < n; i++)
                sb += T[i * k + c];
            out[d * k + c] = sb;
        }
}

size_t mdl_eval_chunks(const mdl_model *m, size_t n)
{
    return (n + m->max_batch - 1) / m->max_batch;
}

void mdl_eval_chunk(mdl_model *m, const double *params, const mdl_dataset *ds,
                    const size_t *idx, size_t n, size_t c, mdl_eval_part *out)
{
    assert(ds->d == m->d && ds->n_classes == m->n_classes);
    const size_t start = c * m->max_batch;
    assert(start < n);
    const size_t k = n - start < m->max_batch ? n - start : m->max_batch;
    const double *X;
    const int *y;
    if (idx != NULL || ds->t != NULL || ds->x == NULL) {
        /* Regression targets and compact rows always travel through the
         * workspace. */
        gather(m, ds, idx ? idx + start : NULL, start, k);
        X = m->x;
        y = m->y;
    } else {
        /* Whole dataset: the rows are already contiguous. */
        X = ds->x + start * m->d;
        y = ds->y + start;
    }
    m->type->evaluate(m, m->ws, params, X, y, k, &out->loss, &out->correct);
}

void mdl_eval_finish(const mdl_model *m, const double *params, size_t n,
                     const mdl_eval_part *parts, double *loss, double *accuracy)
{
    double sum = 0.0;
    size_t correct = 0;
    for (size_t c = 0, nc = mdl_eval_chunks(m, n); c < nc; c++) {
        sum += parts[c].loss;
        correct += parts[c].correct;
    }
    if (loss != NULL)
        *loss = n > 0 ? sum / (double)n + m->type->penalty(m, params) : NAN;
    if (accuracy != NULL)
        *accuracy = n > 0 && m->n_classes > 0 ? (double)correct / (double)n : NAN;
}

void mdl_evaluate(mdl_model *m, const double *params, const mdl_dataset *ds,
                  const size_t *idx, size_t n_idx, double *loss, double *accuracy)
{
    assert(ds->d == m->d && ds->n_classes == m->n_classes);
    const size_t n = idx != NULL ? n_idx : ds->n;
    double sum = 0.0;
    size_t correct = 0;

    for (size_t c = 0, nc = mdl_eval_chunks(m, n); c < nc; c++) {
        mdl_eval_part part;
        mdl_eval_chunk(m, params, ds, idx, n, c, &part);
        sum += part.loss;
        correct += part.correct;
    }
    if (loss != NULL)
        *loss = n > 0 ? sum / (double)n + m->type->penalty(m, params) : NAN;
    if (accuracy != NULL)
        *accuracy = n > 0 && m->n_classes > 0 ? (double)correct / (double)n : NAN;
}

void mdl_i_act_grad(mdl_activation act, double *G, const double *A, size_t len)
{
    if (act == MDL_ACT_RELU) {
        for (size_t k = 0; k < len; k++)
            if (!(A[k] > 0.0))
                G[k] = 0.0;
    } else {
        for (size_t k = 0; k < len; k++)
            G[k] *= 1.0 - A[k] * A[k];
    }
}

double mdl_i_softmax_xent(double *Z, const int *y, size_t n, size_t C, size_t *n_correct)
{
    double sum = 0.0;
    size_t correct = 0;
    for (size_t i = 0; i < n; i++) {
        double *z = Z + i * C;
        size_t best = 0;
        for (size_t k = 1; k < C; k++)
            if (z[k] > z[best])
                best = k;
        const double zmax = z[best];
        const double zy = z[y[i]] - zmax;
        double s = 0.0;
        for (size_t k = 0; k < C; k++) {
            z[k] = exp(z[k] - zmax);
            s += z[k];
        }
        for (size_t k = 0; k < C; k++)
            z[k] /= s;
        sum += log(s) - zy;
        correct += best == (size_t)y[i];
    }
    if (n_correct)
        *n_correct = correct;
    return sum;
}

double mdl_i_l2(double l2, const double *w, size_t n, double *grad)
{
    if (l2 == 0.0)
        return 0.0;
    assert(n <= INT_MAX);
    if (grad != NULL)
        cblas_daxpy((int)n, l2, w, 1, grad, 1);
    return 0.5 * l2 * cblas_ddot((int)n, w, 1, w, 1);
}

void mdl_i_init_weights(double *params, size_t n_weights, size_t n_params,
                        gsl_rng *rng)
{
    mdl_i_init_weights_scaled(params, n_weights, n_params, 0.01, rng);
}

size_t mdl_i_one_output_n_params(const mdl_arch *a) { return a->d + (a->no_bias ? 0 : 1); }

void *mdl_i_one_output_alloc(const mdl_arch *a, size_t max_batch)
{
    (void)a;
    return malloc((max_batch ? max_batch : 1) * sizeof(double));
}

void mdl_i_one_output_free(void *ws) { free(ws); }

void mdl_i_one_output_init(const mdl_model *m, double *params, gsl_rng *rng)
{
    mdl_i_init_weights(params, m->d, m->n_params, rng);
}

double mdl_i_one_output_penalty(const mdl_model *m, const double *params)
{
    return mdl_i_l2(m->l2, params, m->d, NULL);
}

void mdl_i_init_weights_scaled(double *params, size_t n_weights, size_t n_params,
                               double sigma, gsl_rng *rng)
{
    for (size_t i = 0; i < n_weights; i++)
        params[i] = gsl_ran_gaussian(rng, sigma);
    for (size_t i = n_weights; i < n_params; i++)
        params[i] = 0.0;
}

gsl_rng *mdl_i_rng_create(uint64_t seed)
{
    gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
    if (r == NULL)
        return NULL;
    /* Mix before folding so that seeds differing only in their high or
     * low half (1 and 1 << 32) do not fold to the same 32 bits. */
    gsl_rng_set(r, sim_rng_fold32(sim_rng_splitmix64(seed)));
    return r;
}
