/* trn.c -- every node's parameters, gradients, data cursors and optimizer
 * (see trn.h).  A step's math is trn_step_begin: the batch is the next B
 * indices of the node's shuffled partition and the gradient is the
 * model's on the parameters as they are at that moment.  It does not know
 * when steps happen, what the step time is, or who receives what.
 */
#include "trn.h"
#include "sim_rng.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <gsl/gsl_randist.h>

typedef struct cursor {
    gsl_rng *rng;       /* SIM_RNG_DATA of the node */
    size_t  *perm;      /* the node's sample indices, shuffled per epoch */
    size_t   n_local, next;
} cursor;

struct trn_trainer {
    trn_config     cfg;
    int            n;
    size_t         P;
    double        *params;   /* n * P */
    double        *grads;    /* n * P: the gradient of the step in progress */
    cursor        *cur;      /* n, NULL for the timing-only model */
    mdl_optim     *opt;
    trn_divergence div;
};

static int cursor_init(cursor *c, const trn_config *cfg, int i)
{
    const mdl_partition *p = cfg->part;
    c->rng = sim_rng_stream_create(cfg->seed, (uint32_t)i, SIM_RNG_DATA);
    c->n_local = p->off[i + 1] - p->off[i];
    c->perm = malloc((c->n_local ? c->n_local : 1) * sizeof(size_t));
    if (!c->rng || !c->perm)
        return -1;
    memcpy(c->perm, p->idx + p->off[i], c->n_local * sizeof(size_t));
    if (c->n_local > 1)   /* gsl_ran_shuffle underflows on an empty array */
        gsl_ran_shuffle(c->rng, c->perm, c->n_local, sizeof(size_t));
    return 0;
}

trn_trainer *trn_create(const trn_config *cfg)
{
    trn_trainer *t = calloc(1, sizeof *t);
    if (!t)
        return NULL;
    t->cfg = *cfg;
    t->n = cfg->n_nodes;
    t->P = cfg->model ? mdl_n_params(cfg->model) : 0;
    size_t nP = (size_t)t->n * t->P;
    t->params = calloc(nP ? nP : 1, sizeof(double));
    t->grads = calloc(nP ? nP : 1, sizeof(double));
    t->opt = mdl_optim_create(&cfg->optim, t->n, t->P);
    if (!t->params || !t->grads || !t->opt)
        goto out_destroy;
    if (cfg->model) {
        if (!(t->cur = calloc((size_t)t->n, sizeof *t->cur)))
            goto out_destroy;
        for (int i = 0; i < t->n; i++)
            if (cursor_init(&t->cur[i], cfg, i) != 0)
                goto out_destroy;
    }
    return t;

out_destroy:
    trn_destroy(t);
    return NULL;
}

void trn_destroy(trn_trainer *t)
{
    if (!t)
        return;
    if (t->cur)
        for (int i = 0; i < t->n; i++) {
            gsl_rng_free(t->cur[i].rng);
            free(t->cur[i].perm);
        }
    free(t->cur);
    mdl_optim_destroy(t->opt);
    free(t->grads);
    free(t->params);
    free(t);
}

int    trn_n_nodes(const trn_trainer *t) { return t->n; }
size_t trn_n_params(const trn_trainer *t) { return t->P; }
int    trn_timing_only(const trn_trainer *t) { return t->cfg.model == NULL; }
size_t trn_batch(const trn_trainer *t) { return t->cfg.batch; }
size_t trn_local_samples(const trn_trainer *t, int i) { return t->cur ? t->cur[i].n_local : 0; }
double *trn_params(trn_trainer *t, int i) { return t->params + (size_t)i * t->P; }
const double *trn_params_const(const trn_trainer *t, int i) { return t->params + (size_t)i * t->P; }
const double *trn_grad(const trn_trainer *t, int i) { return t->grads + (size_t)i * t->P; }
const trn_divergence *trn_divergence_get(const trn_trainer *t) { return &t->div; }

int trn_init_params(trn_trainer *t)
{
    if (!t->cfg.model)
        return 0;
    gsl_rng *init = sim_rng_stream_create(t->cfg.seed, SIM_RNG_NO_NODE, SIM_RNG_INIT);
    if (!init)
        return -1;
    mdl_init_params(t->cfg.model, trn_params(t, 0), init);
    gsl_rng_free(init);
    for (int i = 1; i < t->n; i++)
        memcpy(trn_params(t, i), trn_params_const(t, 0), t->P * sizeof(double));
    return 0;
}

/* One step's math, self-contained: everything it reads is fixed when the
 * step begins (the node's parameters, the batch its data stream drew), so
 * it may run anywhere before the step ends.  Today it runs at once, on the
 * parameters in place (nothing can change them before it returns); a
 * thread pool would copy them into the job first. */
typedef struct job {
    const double *params;
    const size_t *batch;
    size_t        n_batch;
    double       *grad;     /* out */
    double        loss;     /* out */
} job;

/* Node i's next batch: the next B indices of its shuffled partition,
 * reshuffled at an epoch boundary (the tail shorter than a batch waits
 * for the next epoch: drop-last sampling).  Draws from its data stream. */
static job next_job(trn_trainer *t, int i)
{
    cursor *c = &t->cur[i];
    size_t B = t->cfg.batch;
    if (c->next + B > c->n_local) {
        gsl_ran_shuffle(c->rng, c->perm, c->n_local, sizeof(size_t));
        c->next = 0;
    }
    job j = { trn_params_const(t, i), c->perm + c->next, B, t->grads + (size_t)i * t->P, 0 };
    c->next += B;
    return j;
}

static void run_job(const trn_trainer *t, job *j)
{
    j->loss = mdl_loss_grad(t->cfg.model, j->params, t->cfg.train, j->batch, j->n_batch, j->grad);
}

void trn_step_begin(trn_trainer *t, int i, uint64_t step, double time_s)
{
    if (!t->cfg.model)
        return;
    job j = next_job(t, i);
    run_job(t, &j);
    if (!isfinite(j.loss) && !t->div.diverged)
        t->div = (trn_divergence){ .diverged = 1, .node = i, .step = step, .time_s = time_s,
                                   .loss = j.loss };
}

void trn_apply(trn_trainer *t, int i, double *x, const double *g, double g_div)
{
    mdl_optim_step(t->opt, i, x, g, g_div);
}
