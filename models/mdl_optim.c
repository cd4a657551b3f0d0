/* mdl_optim.c -- the per-node optimizers of mdl_optim.h: learning-rate
 * schedules as closed forms of the node's update count, and the update
 * itself.  The default spec takes a single cblas_daxpy so that plain SGD
 * stays bit-identical to the protocols' original update; every other
 * setting runs one fused loop over the parameters.  It does not decide
 * when updates happen: the protocols do.
 */
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <gsl/gsl_cblas.h>
#include "mdl_optim.h"

struct mdl_optim {
    mdl_optim_spec spec;
    int       n_nodes;
    size_t    P;
    double   *buf;      /* n_nodes * P momentum buffers, or NULL */
    uint64_t *k;        /* updates per node */
    int       plain;    /* default spec: one daxpy */
};

mdl_optim *mdl_optim_create(const mdl_optim_spec *sp, int n_nodes, size_t P)
{
    if (n_nodes < 1 || P > INT_MAX || !(sp->lr >= 0) || !(sp->momentum >= 0)
        || !(sp->momentum < 1) || !(sp->weight_decay >= 0) || sp->warmup_steps < 0
        || (sp->nesterov && sp->momentum == 0)
        || (sp->schedule == MDL_SCHED_STEP && (sp->step_every < 1 || !(sp->gamma > 0)
                                               || !(sp->gamma <= 1)))
        || (sp->schedule == MDL_SCHED_COSINE && (sp->total_steps < 1 || !(sp->lr_min >= 0))))
        return NULL;
    mdl_optim *o = calloc(1, sizeof *o);
    if (!o)
        return NULL;
    o->spec = *sp;
    o->n_nodes = n_nodes;
    o->P = P;
    o->k = calloc((size_t)n_nodes, sizeof *o->k);
    if (!o->k)
        goto out_free;
    if (sp->momentum > 0) {
        if (P > SIZE_MAX / sizeof(double) / (size_t)n_nodes
            || !(o->buf = calloc((size_t)n_nodes * (P ? P : 1), sizeof *o->buf)))
            goto out_free;
    }
    o->plain = sp->momentum == 0 && sp->weight_decay == 0 && sp->schedule == MDL_SCHED_CONSTANT
               && sp->warmup_steps == 0;
    return o;

out_free:
    free(o->k);
    free(o);
    return NULL;
}

void mdl_optim_destroy(mdl_optim *o)
{
    if (!o)
        return;
    free(o->buf);
    free(o->k);
    free(o);
}

double mdl_optim_lr(const mdl_optim_spec *sp, uint64_t k)
{
    double lr = sp->lr;
    if (sp->schedule == MDL_SCHED_STEP) {
        lr *= pow(sp->gamma, (double)(k / (uint64_t)sp->step_every));
    } else if (sp->schedule == MDL_SCHED_COSINE) {
        const double T = (double)sp->total_steps;
        const double t = (double)k < T ? (double)k : T;
        lr = sp->lr_min + (sp->lr - sp->lr_min) * 0.5 * (1.0 + cos(3.14159265358979323846 * t / T));
    }
    if (k < (uint64_t)sp->warmup_steps)
        lr *= (double)(k + 1) / (double)sp->warmup_steps;
    return lr;
}

void mdl_optim_step_range(mdl_optim *o, int node, double *x, const double *g, double g_div,
                          size_t lo, size_t hi)
{
    const mdl_optim_spec *sp = &o->spec;
    const size_t P = o->P;
    if (o->plain) {
        cblas_daxpy((int)(hi - lo), -sp->lr / g_div, g + lo, 1, x + lo, 1);
        return;
    }
    const double lr = mdl_optim_lr(sp, o->k[node]), wd = sp->weight_decay;
    const double mu = sp->momentum, inv = 1.0 / g_div;
    if (o->buf == NULL) {
        for (size_t i = lo; i < hi; i++)
            x[i] -= lr * (g[i] * inv + wd * x[i]);
    } else {
        double *b = o->buf + (size_t)node * P;
        if (sp->nesterov) {
            for (size_t i = lo; i < hi; i++) {
                const double d = g[i] * inv + wd * x[i];
                b[i] = mu * b[i] + d;
                x[i] -= lr * (d + mu * b[i]);
            }
        } else {
            for (size_t i = lo; i < hi; i++) {
                b[i] = mu * b[i] + g[i] * inv + wd * x[i];
                x[i] -= lr * b[i];
            }
        }
    }
}

void mdl_optim_count(mdl_optim *o, int node)
{
    o->k[node]++;
}

void mdl_optim_step(mdl_optim *o, int node, double *x, const double *g, double g_div)
{
    mdl_optim_step_range(o, node, x, g, g_div, 0, o->P);
    o->k[node]++;
}

void mdl_optim_reset_momentum(mdl_optim *o, int node)
{
    if (o->buf)
        memset(o->buf + (size_t)node * o->P, 0, o->P * sizeof(double));
}

uint64_t mdl_optim_updates(const mdl_optim *o, int node)
{
    return o->k[node];
}

mdl_optim_terms mdl_optim_terms_get(mdl_optim *o, int node, double g_div)
{
    const mdl_optim_spec *sp = &o->spec;
    mdl_optim_terms e = { .a = -sp->lr / g_div, .lr = mdl_optim_lr(sp, o->k[node]),
                          .inv = 1.0 / g_div, .wd = sp->weight_decay, .mu = sp->momentum };
    if (o->plain)
        e.kind = MDL_OPTIM_PLAIN;
    else if (!o->buf)
        e.kind = MDL_OPTIM_DECAY;
    else
        e.kind = sp->nesterov ? MDL_OPTIM_NESTEROV : MDL_OPTIM_MOMENTUM;
    if (o->buf)
        e.b = o->buf + (size_t)node * o->P;
    return e;
}
