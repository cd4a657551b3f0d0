/* trn_batch.c -- the math a protocol asks of a node's batches outside its
 * step jobs: a batch drawn from its data stream without a step (and steps
 * that compute nothing, for protocols that do their own math), the split
 * model's front on the node's next batch and its back on received
 * activations (ComDML), and the Hessian of the node's last step's loss
 * applied to vectors (SymSGD's combiner).  Each uses a model instance or
 * workspace of its own, made on first use, so none disturbs a step job in
 * progress.  It does not start steps or touch the optimizer (trn.c).
 */
#include "trn_internal.h"
#include "sim_engine.h"   /* sim_die_oom */

#include <stdlib.h>

const size_t *trn_draw_batch(trn_trainer *t, int i)
{
    return t->cur ? trn_i_next_batch(t, i) : NULL;
}

void trn_set_math(trn_trainer *t, int i, int on)
{
    if (t->no_math)
        t->no_math[i] = (char)!on;
}

const mdl_model   *trn_model(const trn_trainer *t) { return t->cfg.model; }
const mdl_dataset *trn_train_set(const trn_trainer *t) { return t->cfg.train; }

static mdl_split *split_ws(trn_trainer *t, size_t s)
{
    if (!t->split[s] && !(t->split[s] = mdl_split_create(t->cfg.model, s, t->cfg.batch)))
        sim_die_oom();
    return t->split[s];
}

double trn_split_front(trn_trainer *t, int i, size_t s, const double *aux, double *acts,
                       int *labels, double *g, double *g_aux)
{
    const size_t *b = trn_i_next_batch(t, i);
    return mdl_split_front(split_ws(t, s), trn_params_const(t, i), aux, t->cfg.train, b,
                           t->cfg.batch, acts, labels, g, g_aux);
}

double trn_split_back(trn_trainer *t, size_t s, const double *x, const double *acts,
                      const int *labels, double *g)
{
    mdl_split *w = split_ws(t, s);
    const size_t nf = mdl_split_plan_of(w)->n_front;
    return mdl_split_back(w, x + nf, acts, labels, t->cfg.batch, g + nf);
}

void trn_split_aux_init(trn_trainer *t, size_t s, double *aux, gsl_rng *rng)
{
    mdl_split_aux_init(split_ws(t, s), aux, rng);
}

const size_t *trn_step_batch(const trn_trainer *t, int i, size_t *n)
{
    const cursor *c = t->cur ? &t->cur[i] : NULL;
    const size_t B = t->nb ? t->nb[i] : t->cfg.batch;
    if (!c || c->next < B) {   /* timing-only, or no step begun */
        *n = 0;
        return NULL;
    }
    *n = B;
    return c->perm + c->next - B;
}

int trn_hessian_apply(trn_trainer *t, int i, const double *params, const double *V, size_t k,
                      double *out)
{
    size_t n;
    const size_t *batch = trn_step_batch(t, i, &n);
    if (!batch)
        return -1;
    if (!t->hess && !(t->hess = mdl_clone(t->cfg.model)))
        return -2;
    if (n * k > t->hess_cap) {
        double *w = realloc(t->hess_work, n * k * sizeof *w);
        if (!w)
            return -2;
        t->hess_work = w;
        t->hess_cap = n * k;
    }
    return mdl_hessian_apply(t->hess, params, t->cfg.train, batch, n, V, k, out, t->hess_work);
}
