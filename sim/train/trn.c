/* trn.c -- every node's parameters, gradients, data cursors and optimizer
 * (see trn.h).  A step's math is a job taken at trn_step_begin: the batch
 * is the next B indices of the node's shuffled partition and the gradient
 * is the model's on the parameters as they are at that moment.  On one
 * thread the job runs at once on the parameters in place; on more it runs
 * on a worker pool (sim_pool) on a copy of the parameters and is joined
 * when anyone asks for the gradient, so what it computes is the same
 * bits.  Evaluations are cut into the model's chunks the same way.  It
 * does not know when steps happen, what the step time is, or who receives
 * what.
 */
#include "trn_internal.h"
#include "sim_engine.h"
#include "sim_rng.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <gsl/gsl_cblas.h>
#include <gsl/gsl_randist.h>
#include "mdl_freeze.h"


/* A batch larger than the model's (cfg.batch, its workspace bound) is
 * taken in chunks of cfg.batch: the mean over n samples is the sum of the
 * chunks' means weighted by their share n_c / n, the L2 term included
 * once (the shares sum to 1). */
static void run_job(mdl_model *m, const trn_trainer *t, job *j)
{
    size_t B = t->cfg.batch, n = j->n_batch;
    mdl_set_frozen(m, j->frozen);
    if (n <= B) {
        j->loss = mdl_loss_grad(m, j->params, t->cfg.train, j->batch, n, j->grad);
        return;
    }
    int P = (int)t->P;
    double loss = mdl_loss_grad(m, j->params, t->cfg.train, j->batch, B, j->grad);
    double w = (double)B / (double)n;
    cblas_dscal(P, w, j->grad, 1);
    loss *= w;
    for (size_t lo = B; lo < n; lo += B) {
        size_t nc = n - lo < B ? n - lo : B;
        double lc = mdl_loss_grad(m, j->params, t->cfg.train, j->batch + lo, nc, j->tmp);
        w = (double)nc / (double)n;
        cblas_daxpy(P, w, j->tmp, 1, j->grad, 1);
        loss += w * lc;
    }
    j->loss = loss;
}

/* The mix of trn_mix over [lo, hi), piece by piece: acc <- 0, acc += w_j
 * x_j for each term in order, acc += a own, x <- acc, then the optimizer
 * on that piece of x, and out <- x.  Every element goes through the same
 * operations as in the unfused passes over the whole vector (a zeroed
 * accumulator, one daxpy per term, memcpy + daxpy, the update), so the
 * bits are theirs whatever the pieces. */
static void run_mix(trn_trainer *t, int node, const trn_mix_terms *m, size_t lo, size_t hi)
{
    double *x = m->move ? m->out : t->px[node];
    if (m->lo) {   /* a frozen prefix: constant in x, so out's is a copy */
        if (lo <= m->lo && m->out && m->out != (m->move ? m->prev : x))   /* the first piece */
            memcpy(m->out, m->move ? m->prev : x, m->lo * sizeof(double));
        if (lo <= m->lo && m->clear)
            memset(m->clear, 0, m->lo * sizeof(double));
        if (lo < m->lo)
            lo = m->lo < hi ? m->lo : hi;
        if (lo >= hi)
            return;
    }
    if (t->fuse) {   /* the same bits in one pass */
        trn_fuse_mix(t, node, m, x, lo, hi);
        return;
    }
    /* a sum built as the models arrived goes in one piece: its passes are
     * those of the unfused round, whose long streams the hardware prefetches
     * (measured no slower on one thread than pieces) */
    const size_t piece = m->clear || t->P <= TRN_MIX_WHOLE ? hi - lo : TRN_MIX_PIECE;
    double buf[TRN_MIX_WHOLE];
    for (size_t a = lo; a < hi; a += piece) {
        const size_t b = a + piece < hi ? a + piece : hi;
        const int len = (int)(b - a);
        double *acc = buf;
        if (m->clear) {   /* the one term is the sum itself: used in place */
            acc = m->clear + a;
        } else {
            memset(acc, 0, (size_t)len * sizeof(double));
            for (int j = 0; j < m->n; j++)
                cblas_daxpy(len, m->w[j], m->x[j] + a, 1, acc, 1);
        }
        cblas_daxpy(len, m->own_w, m->own + a, 1, acc, 1);
        memcpy(x + a, acc, (size_t)len * sizeof(double));
        if (m->clear)
            memset(acc, 0, (size_t)len * sizeof(double));
        if (m->g)
            mdl_optim_step_range(t->opt, node, x, m->g, m->g_div, a, b);
        if (m->out && m->out != x)
            memcpy(m->out + a, x + a, (size_t)len * sizeof(double));
    }
}

static void run_vec(trn_trainer *t, size_t lo, size_t hi)
{
    const vec_op *v = &t->vec;
    if (v->kind == VEC_MIX) {
        run_mix(t, v->node, v->mix, lo, hi);
        return;
    }
    mdl_optim_step_range(t->opt, v->node, v->x, v->g, v->g_div, lo, hi);   /* VEC_OPTIM */
}

static void run_task(void *vt, int task, int thread)
{
    trn_trainer *t = vt;
    mdl_model *m = t->models[thread];
    if (task < t->n) {
        if (t->jobs[task].mix) {
            run_mix(t, task, &t->mix[task].m, 0, t->P);
            if (t->mix[task].m.g)
                mdl_optim_count(t->opt, task);   /* only this node's job counts its updates */
            sim_pool_part_done(t->pool, task);
        }
        run_job(m, t, &t->jobs[task]);
        return;
    }
    if (task >= t->vec_base) {
        const size_t b = (size_t)(task - t->vec_base), bs = t->vec.bs;
        const size_t lo = t->vec.base + b * bs, hi = lo + bs < t->P ? lo + bs : t->P;
        if (lo < hi)
            run_vec(t, lo, hi);
        return;
    }
    const eval_job *e = &t->ev;
    size_t k = (size_t)(task - t->n), E = (size_t)t->n_eval;
    mdl_set_frozen(m, e->frozen);
    for (size_t c = k * e->nc / E; c < (k + 1) * e->nc / E; c++)
        mdl_eval_chunk(m, e->params, e->ds, e->idx, e->n, c, &e->parts[c]);
}

static int pool_init(trn_trainer *t)
{
    int T = t->cfg.threads;
    size_t nP = (size_t)t->n * t->P;
    t->n_eval = T;
    t->vec_base = t->n + t->n_eval;
    t->n_vec = T;
    if (!(t->models = calloc((size_t)T, sizeof *t->models))
        || !(t->snap = malloc((nP ? nP : 1) * sizeof(double)))
        || !(t->jobs = calloc((size_t)t->n, sizeof *t->jobs))
        || !(t->mix = calloc((size_t)t->n, sizeof *t->mix))
        || !(t->pending = calloc((size_t)t->n, 1)))
        return -1;
    t->models[0] = t->cfg.model;
    for (int k = 1; k < T; k++)
        if (!(t->models[k] = mdl_clone(t->cfg.model)))
            return -1;
    t->pool = sim_pool_create(T, t->n + t->n_eval + t->n_vec, run_task, t);
    return t->pool ? 0 : -1;
}

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
    t->px = malloc((size_t)(t->n > 0 ? t->n : 1) * sizeof *t->px);
    for (int i = 0; t->px && t->params && i < t->n; i++)
        t->px[i] = t->params + (size_t)i * t->P;
    t->loss = malloc((size_t)(t->n > 0 ? t->n : 1) * sizeof(double));
    for (int i = 0; t->loss && i < t->n; i++)
        t->loss[i] = NAN;
    t->opt = mdl_optim_create(&cfg->optim, t->n, t->P);
    t->no_math = calloc((size_t)t->n, 1);
    t->fuse = trn_fuse_probe();
    if (!t->params || !t->px || !t->grads || !t->loss || !t->opt || !t->no_math)
        goto out_destroy;
    if (cfg->model) {
        if (!(t->cur = calloc((size_t)t->n, sizeof *t->cur)))
            goto out_destroy;
        for (int i = 0; i < t->n; i++)
            if (cursor_init(&t->cur[i], cfg, i) != 0)
                goto out_destroy;
        if (cfg->threads >= 2 && pool_init(t) != 0)
            goto out_destroy;
    }
    return t;

out_destroy:
    trn_destroy(t);
    return NULL;
}

/* DTSIM_POOL_STATS set: what the loop's joins met, on stderr (a
 * diagnostic for bench/, never part of a run's outputs). */
static void print_pool_stats(trn_trainer *t)
{
    sim_pool_stats s = sim_pool_stats_get(t->pool);
    fprintf(stderr,
            "dtsim: pool: %d threads, %ld tasks, %ld run by the loop when joined, %ld helped"
            " while waiting; waits for a worker: %ld at a step's end, %ld for a neighbour's"
            " mix, %ld for the node's own parameters, %ld other; %.3f s asleep; mix %s\n",
            t->cfg.threads, s.submitted, s.ran_here, s.helped, t->waits[TRN_WAIT_STEP],
            t->waits[TRN_WAIT_NBR_MIX], t->waits[TRN_WAIT_PARAMS], t->waits[TRN_WAIT_OTHER],
            s.blocked_s, t->fuse ? "fused" : "in BLAS passes");
}

void trn_destroy(trn_trainer *t)
{
    if (!t)
        return;
    if (t->pool && getenv("DTSIM_POOL_STATS"))
        print_pool_stats(t);
    sim_pool_destroy(t->pool);   /* first: waits for the jobs in progress */
    if (t->models)
        for (int k = 1; k < t->cfg.threads; k++)
            mdl_destroy(t->models[k]);
    free(t->models);
    mdl_destroy(t->hess);
    free(t->hess_work);
    free(t->snap);
    free(t->jobs);
    for (int i = 0; t->mix && i < t->n; i++) {
        free(t->mix[i].x);
        free(t->mix[i].w);
        free(t->mix[i].from);
    }
    free(t->mix);
    free(t->pending);
    free(t->ev.parts);
    if (t->cur)
        for (int i = 0; i < t->n; i++) {
            gsl_rng_free(t->cur[i].rng);
            free(t->cur[i].perm);
        }
    free(t->cur);
    free(t->nb);
    free(t->fz);
    free(t->fz_off);
    free(t->tmp);
    mdl_optim_destroy(t->opt);
    for (size_t s = 0; s <= MDL_MAX_HIDDEN; s++)
        mdl_split_destroy(t->split[s]);
    free(t->no_math);
    free(t->grads);
    free(t->loss);
    free(t->px);
    free(t->params);
    free(t);
}

int    trn_n_nodes(const trn_trainer *t) { return t->n; }
size_t trn_n_params(const trn_trainer *t) { return t->P; }
int    trn_timing_only(const trn_trainer *t) { return t->cfg.model == NULL; }
size_t trn_batch(const trn_trainer *t) { return t->cfg.batch; }
size_t trn_node_batch(const trn_trainer *t, int i) { return t->nb ? t->nb[i] : t->cfg.batch; }

int trn_set_batch(trn_trainer *t, int i, size_t b)
{
    if (b == 0 || (t->cur && b > t->cur[i].n_local))
        return -1;
    if (!t->nb) {
        if (b == t->cfg.batch)
            return 0;
        if (!(t->nb = malloc((size_t)t->n * sizeof *t->nb)))
            return -2;
        for (int k = 0; k < t->n; k++)
            t->nb[k] = t->cfg.batch;
    }
    size_t nP = (size_t)t->n * t->P;
    if (b > t->cfg.batch && t->cfg.model && !t->tmp
        && !(t->tmp = malloc((nP ? nP : 1) * sizeof(double))))
        return -2;
    t->nb[i] = b;
    return 0;
}
size_t trn_local_samples(const trn_trainer *t, int i) { return t->cur ? t->cur[i].n_local : 0; }

int    trn_threads(const trn_trainer *t) { return t->pool ? t->cfg.threads : 1; }
double trn_worker_cpu_s(const trn_trainer *t) { return t->pool ? sim_pool_worker_cpu_s(t->pool) : 0; }
double trn_math_cpu_s(trn_trainer *t) { return t->pool ? sim_pool_task_cpu_s(t->pool) : NAN; }
const trn_divergence *trn_divergence_get(const trn_trainer *t) { return &t->div; }

int trn_init_params(trn_trainer *t)
{
    if (!t->cfg.model)
        return 0;
    gsl_rng *init = sim_rng_stream_create(t->cfg.seed, SIM_RNG_NO_NODE, SIM_RNG_INIT);
    if (!init)
        return -1;
    mdl_init_params(t->cfg.model, t->params, init);
    gsl_rng_free(init);
    t->px[0] = t->params;
    for (int i = 1; i < t->n; i++) {
        t->px[i] = t->params + (size_t)i * t->P;
        memcpy(t->px[i], t->params, t->P * sizeof(double));
    }
    return 0;
}

/* Node i's next batch: the next B indices of its shuffled partition,
 * reshuffled at an epoch boundary (the tail shorter than a batch waits
 * for the next epoch: drop-last sampling).  Draws from its data stream. */
static void check(trn_trainer *t, int i, const job *j);

const size_t *trn_i_next_batch(trn_trainer *t, int i)
{
    cursor *c = &t->cur[i];
    size_t B = t->nb ? t->nb[i] : t->cfg.batch;
    if (c->next + B > c->n_local) {
        gsl_ran_shuffle(c->rng, c->perm, c->n_local, sizeof(size_t));
        c->next = 0;
    }
    const size_t *b = c->perm + c->next;
    c->next += B;
    return b;
}

static job next_job(trn_trainer *t, int i)
{
    const size_t B = t->nb ? t->nb[i] : t->cfg.batch;
    const size_t *b = trn_i_next_batch(t, i);
    /* the parameters in place: a deferred mix may still be due (it runs
     * first in the job, t->mix) */
    job j = { .params = t->px[i], .batch = b, .n_batch = B,
              .grad = t->grads + (size_t)i * t->P,
              .tmp = t->tmp ? t->tmp + (size_t)i * t->P : NULL,
              .frozen = t->fz ? t->fz[i] : 0 };
    return j;
}

void trn_check_loss(trn_trainer *t, int i, uint64_t step, double time_s, double loss)
{
    job j = { .loss = loss, .step = step, .time_s = time_s };
    check(t, i, &j);
}

void trn_apply_range(trn_trainer *t, int i, double *x, const double *g, double g_div,
                     size_t lo, size_t hi, int count)
{
    mdl_optim_step_range(t->opt, i, x, g, g_div, lo, hi);
    if (count)
        mdl_optim_count(t->opt, i);
}

static void check(trn_trainer *t, int i, const job *j)
{
    t->loss[i] = j->loss;
    if (!isfinite(j->loss) && !t->div.diverged)
        t->div = (trn_divergence){ .diverged = 1, .node = i, .step = j->step,
                                   .time_s = j->time_s, .loss = j->loss };
}

/* Node i's job, if one is pending, has run and its loss is checked;
 * site: who asked (TRN_WAIT_*), counted when the job was on a worker. */
static void settle(trn_trainer *t, int i, int site)
{
    int rc = sim_pool_join(t->pool, i);
    if (rc == 2)
        t->waits[site]++;
    if (rc)
        check(t, i, &t->jobs[i]);
    t->pending[i] = 0;
    if (t->mix[i].state == MIX_IN_JOB)
        t->mix[i].state = MIX_NONE;
}

/* Node i's mix, if one is deferred or in its job, is done: run here when
 * no job has it, else waited for (the rest of the job may still run). */
static void mix_final(trn_trainer *t, int i, int site)
{
    mix_rec *r = &t->mix[i];
    if (r->state == MIX_DEFERRED) {
        if (t->pending[i])
            settle(t, i, site);   /* a job still reading x in place */
        run_mix(t, i, &r->m, 0, t->P);
        if (r->m.g)
            mdl_optim_count(t->opt, i);
    } else if (r->state == MIX_IN_JOB && sim_pool_wait_part(t->pool, i) == 2) {
        t->waits[site]++;
    }
    r->state = MIX_NONE;
}

const double *trn_params_const(const trn_trainer *t, int i)
{
    if (t->pool && t->mix[i].state != MIX_NONE)
        mix_final((trn_trainer *)t, i, TRN_WAIT_PARAMS);   /* the trainer itself is never const */
    return t->px[i];
}

/* Node i's parameters back in the trainer's own storage (from the buffer
 * a moving mix left them in), once no job reads that buffer. */
static void own_again(trn_trainer *t, int i)
{
    double *own = t->params + (size_t)i * t->P;
    if (t->px[i] == own)
        return;
    if (t->pool && t->pending[i] && t->jobs[i].params == t->px[i])
        settle(t, i, TRN_WAIT_PARAMS);
    memcpy(own, t->px[i], t->P * sizeof(double));
    t->px[i] = own;
}

void trn_params_own(trn_trainer *t, int i)
{
    if (t->pool && t->mix[i].state != MIX_NONE)
        mix_final(t, i, TRN_WAIT_PARAMS);
    own_again(t, i);
}

double *trn_params(trn_trainer *t, int i)
{
    if (t->pool && t->mix[i].state != MIX_NONE)
        mix_final(t, i, TRN_WAIT_PARAMS);
    /* a job reading these in place must have run before they change */
    if (t->pool && t->pending[i] && t->jobs[i].params != t->snap + (size_t)i * t->P) {
        t->copy = 1;
        settle(t, i, TRN_WAIT_PARAMS);
    }
    own_again(t, i);   /* a buffer the caller's mix moved them to is not theirs to write */
    return t->px[i];
}

void trn_step_begin(trn_trainer *t, int i, uint64_t step, double time_s)
{
    if (!t->cfg.model || t->no_math[i])
        return;
    if (!t->pool) {
        job j = next_job(t, i);
        j.step = step;
        j.time_s = time_s;
        run_job(t->cfg.model, t, &j);
        check(t, i, &j);
        return;
    }
    /* an aborted step's job is discarded only once it has run: it writes
     * the buffer the new one will */
    settle(t, i, TRN_WAIT_OTHER);
    job j = next_job(t, i);
    if (t->mix[i].state == MIX_DEFERRED && t->copy) {
        mix_final(t, i, TRN_WAIT_OTHER);   /* copies began since it was deferred: the copy needs it */
    } else if (t->mix[i].state == MIX_DEFERRED) {
        j.mix = 1;
        t->mix[i].state = MIX_IN_JOB;
    }
    if (t->copy) {
        double *snap = t->snap + (size_t)i * t->P;
        memcpy(snap, j.params, t->P * sizeof(double));
        j.params = snap;
    }
    j.step = step;
    j.time_s = time_s;
    t->jobs[i] = j;
    t->pending[i] = 1;
    sim_pool_submit(t->pool, i);
}

const double *trn_grad(trn_trainer *t, int i)
{
    if (t->pool)
        settle(t, i, TRN_WAIT_STEP);
    return t->grads + (size_t)i * t->P;
}

double trn_step_loss(trn_trainer *t, int i)
{
    if (t->pool)
        settle(t, i, TRN_WAIT_STEP);
    return t->loss[i];
}

void trn_join_all(trn_trainer *t)
{
    if (t->pool)
        for (int i = 0; i < t->n; i++) {
            settle(t, i, TRN_WAIT_OTHER);
            mix_final(t, i, TRN_WAIT_OTHER);
        }
}

int trn_evaluate(trn_trainer *t, const double *params, const mdl_dataset *ds,
                 const size_t *idx, size_t n_idx, double *loss, double *accuracy)
{
    return trn_evaluate_at(t, 0, params, ds, idx, n_idx, loss, accuracy);
}

int trn_evaluate_at(trn_trainer *t, size_t frozen, const double *params,
                    const mdl_dataset *ds, const size_t *idx, size_t n_idx, double *loss,
                    double *accuracy)
{
    mdl_set_frozen(t->cfg.model, frozen);   /* its jobs set their own */
    if (!t->pool) {
        mdl_evaluate(t->cfg.model, params, ds, idx, n_idx, loss, accuracy);
        return 0;
    }
    eval_job *e = &t->ev;
    e->frozen = frozen;
    e->n = idx != NULL ? n_idx : ds->n;
    e->nc = mdl_eval_chunks(t->cfg.model, e->n);
    if (e->nc > e->cap) {
        mdl_eval_part *p = realloc(e->parts, e->nc * sizeof *p);
        if (!p)
            return -1;
        e->parts = p;
        e->cap = e->nc;
    }
    e->params = params;
    e->ds = ds;
    e->idx = idx;
    for (int k = 0; k < t->n_eval; k++)
        sim_pool_submit(t->pool, t->n + k);
    for (int k = 0; k < t->n_eval; k++)
        if (sim_pool_join(t->pool, t->n + k) == 2)
            t->waits[TRN_WAIT_OTHER]++;
    mdl_eval_finish(t->cfg.model, params, e->n, e->parts, loss, accuracy);
    return 0;
}

/* Runs t->vec over the pool in n_vec blocks and returns when all are
 * done: the caller takes the blocks no worker has started (last first),
 * so it never waits for a worker busy with a step. */
static void spread(trn_trainer *t)
{
    const size_t B = MDL_OPTIM_BLOCK;
    const size_t per = (t->P - t->vec.base + (size_t)t->n_vec - 1) / (size_t)t->n_vec;
    t->vec.bs = (per + B - 1) / B * B;
    for (int b = 0; b < t->n_vec; b++)
        sim_pool_submit(t->pool, t->vec_base + b);
    for (int b = t->n_vec - 1; b >= 0; b--)
        if (sim_pool_join(t->pool, t->vec_base + b) == 2)
            t->waits[TRN_WAIT_OTHER]++;
}

static int split(const trn_trainer *t)
{
    return t->pool && t->P >= TRN_SPLIT_MIN;
}

void trn_apply(trn_trainer *t, int i, double *x, const double *g, double g_div)
{
    const size_t hi = trn_trainable_end(t, i);
    if ((t->fz && t->fz_off[i] > 0) || hi < t->P) {   /* the frozen prefix holds no state,
                                                          nor what is not built */
        trn_apply_range(t, i, x, g, g_div, trn_frozen_prefix(t, i), hi, 1);
        return;
    }
    if (!split(t)) {
        mdl_optim_step(t->opt, i, x, g, g_div);
        return;
    }
    t->vec = (vec_op){ .kind = VEC_OPTIM, .node = i, .x = x, .g = g, .g_div = g_div };
    spread(t);
    mdl_optim_count(t->opt, i);
}

void trn_reset_momentum(trn_trainer *t, int i) { mdl_optim_reset_momentum(t->opt, i); }

/* With threads: keeps a copy of m as node i's deferred mix, once the
 * buffers it reads that other nodes' mixes write are final. */
static void defer(trn_trainer *t, int i, const trn_mix_terms *m)
{
    for (int k = 0; k < m->n; k++) {
        int p = m->from[k];
        if (p != i && t->mix[p].state != MIX_NONE && t->mix[p].m.out == m->x[k])
            mix_final(t, p, TRN_WAIT_NBR_MIX);
    }
    mix_rec *r = &t->mix[i];
    if (m->n > r->cap) {
        int cap = m->n > 2 * r->cap ? m->n : 2 * r->cap;
        const double **x = realloc(r->x, (size_t)cap * sizeof *x);
        if (x)
            r->x = x;
        double *w = realloc(r->w, (size_t)cap * sizeof *w);
        if (w)
            r->w = w;
        int *from = realloc(r->from, (size_t)cap * sizeof *from);
        if (from)
            r->from = from;
        if (!x || !w || !from)
            sim_die_oom();
        r->cap = cap;
    }
    for (int k = 0; k < m->n; k++) {
        r->x[k] = m->x[k];
        r->w[k] = m->w[k];
        r->from[k] = m->from[k];
    }
    r->m = *m;
    r->m.x = r->x;
    r->m.w = r->w;
    r->m.from = r->from;
    r->state = MIX_DEFERRED;
}

int trn_mix_deferred(const trn_trainer *t) { return t->pool && !t->copy; }
int trn_mix_fused(const trn_trainer *t) { return t->fuse; }

void trn_mix(trn_trainer *t, int i, const trn_mix_terms *terms)
{
    trn_mix_terms with_prev = *terms;   /* deferred: copied with the terms */
    with_prev.prev = t->px[i];
    const trn_mix_terms *m = &with_prev;
    if (t->pool && !t->copy) {
        if (t->mix[i].state != MIX_NONE)
            mix_final(t, i, TRN_WAIT_OTHER);   /* one deferred mix at a time */
        defer(t, i, m);
        if (m->move && t->P)   /* whoever reads them first makes the mix final */
            t->px[i] = m->out;
        return;
    }
    if (!split(t)) {
        run_mix(t, i, m, 0, t->P);
    } else {
        /* blocks from the frozen prefix's end: every one but the last a
         * multiple of 64 long from there, so the daxpy tails (and the fused
         * loop's, which reproduces them) fall where one call over [lo, P)
         * has them, whatever the thread count */
        t->vec = (vec_op){ .kind = VEC_MIX, .node = i, .mix = m, .base = m->lo };
        spread(t);
    }
    if (m->g)
        mdl_optim_count(t->opt, i);
    if (m->move && t->P)
        t->px[i] = m->out;
}
