/* alg_host.c -- the host behind the protocol-facing calls of alg.h: each
 * alg_ call a protocol makes becomes a call on the cluster (steps, sends,
 * timers, payload buffers) or on the trainer (parameters, optimizer
 * updates), plus the per-node SIM_RNG_ALGO streams.  It is the only file
 * of sim/algos/ that includes the cluster's and the trainer's headers; it
 * holds no protocol logic and routes no events (the runner does).
 */
#include "alg_host.h"
#include "sim_engine.h"
#include "sim_rng.h"
#include "mdl_split.h"
#include "mdl_stage.h"
#include "mdl_freeze.h"

#include <assert.h>
#include <stdlib.h>
#include <string.h>

struct alg_host {
    cl_cluster  *cl;
    trn_trainer *trn;
    const unsigned char *failed;
    double       bytes_per_param, message_bytes;
    gsl_rng    **rng;   /* n_all SIM_RNG_ALGO streams, created on first use */
    int          n_all;
    const uint64_t *fz_after;   /* the freeze schedule (n_fz counts) */
    size_t       n_fz;
    /* the criterion: the counts decided so far (fz_after points here),
     * the next check, the candidate layer's values at the last one */
    double       fz_tau;
    uint64_t     fz_window, fz_next;
    size_t       fz_max;
    uint64_t     fz_dec[MDL_MAX_HIDDEN];
    double      *fz_snap;
    int          fz_have_snap;
    /* effective movement (fz_em): the candidate at the last count seen
     * (fz_seen) and its path length since the window began */
    int          fz_em;
    double      *fz_prev, fz_path;
    uint64_t     fz_seen;
    double      *fz_share;  /* n_all: step work of the node's frozen stage over
                               a full step's; NULL until a node freezes */
    const double *mem_cap;  /* the memory model's capacities, or NULL */
    int          mem_slots;
    double       mem_bpv;
};

static double step_scale(const alg_host *h, int node);

int alg_host_attach(alg_ctx *ctx, const alg_host_config *cfg)
{
    alg_host *h = calloc(1, sizeof *h);
    if (!h || !(h->rng = calloc((size_t)ctx->n_all, sizeof *h->rng))) {
        free(h);
        return -1;
    }
    h->cl = cfg->cl;
    h->trn = cfg->trn;
    h->failed = cfg->failed;
    h->bytes_per_param = cfg->bytes_per_param;
    h->message_bytes = cfg->message_bytes;
    h->n_all = ctx->n_all;
    h->fz_after = cfg->freeze_after;
    h->n_fz = cfg->n_freeze;
    h->mem_cap = cfg->mem_capacity;
    h->mem_slots = cfg->mem_optim_slots;
    h->mem_bpv = cfg->mem_bytes_per_value;
    if (cfg->freeze_threshold > 0) {
        h->fz_after = h->fz_dec;
        h->n_fz = 0;
        h->fz_tau = cfg->freeze_threshold;
        h->fz_window = cfg->freeze_window;
        h->fz_max = cfg->freeze_max < MDL_MAX_HIDDEN ? cfg->freeze_max : MDL_MAX_HIDDEN;
        h->fz_em = cfg->freeze_effective_movement;
    }
    ctx->host = h;
    /* progressive training: stage 1 is not the full step either */
    const mdl_model *m = h->trn ? trn_model(h->trn) : NULL;
    if (m && mdl_freeze_grows(m)) {
        if (!(h->fz_share = malloc((size_t)h->n_all * sizeof *h->fz_share)))
            return -1;
        for (int i = 0; i < h->n_all; i++) {
            h->fz_share[i] = mdl_freeze_flops(m, 0) / mdl_flops_per_sample(m);
            cl_set_step_scale(h->cl, i, step_scale(h, i));
        }
    }
    return 0;
}

void alg_host_detach(alg_ctx *ctx)
{
    alg_host *h = ctx->host;
    if (!h)
        return;
    for (int i = 0; i < h->n_all; i++)
        gsl_rng_free(h->rng[i]);
    free(h->rng);
    free(h->fz_share);
    free(h->fz_snap);
    free(h->fz_prev);
    free(h);
    ctx->host = NULL;
}

void alg_out_of_memory(void) { sim_die_oom(); }

uint64_t alg_hash64(uint64_t x) { return sim_rng_splitmix64(x); }

double alg_now(const alg_ctx *ctx) { return cl_now(ctx->host->cl); }
uint64_t alg_uplink_queued(alg_ctx *ctx, int node)
{
    return cl_uplink_queued(ctx->host->cl, node);
}
double alg_uplink_idle_s(alg_ctx *ctx, int node)
{
    return cl_uplink_idle_s(ctx->host->cl, node);
}
int alg_stats_copy(const char *const *k, const double *v, int n,
                   const char **keys, double *values, int max)
{
    int m = n < max ? n : max;
    for (int j = 0; j < m; j++) {
        keys[j] = k[j];
        values[j] = v[j];
    }
    return m;
}
void alg_start_step(alg_ctx *ctx, int node)
{
    trn_set_math(ctx->host->trn, node, 1);
    cl_start_step(ctx->host->cl, node);
}
void alg_start_step_marks(alg_ctx *ctx, int node, const double *fractions, int m)
{
    trn_set_math(ctx->host->trn, node, 1);
    cl_start_step_marks(ctx->host->cl, node, fractions, m);
}

void alg_start_work(alg_ctx *ctx, int node, double share)
{
    trn_set_math(ctx->host->trn, node, 0);
    cl_start_step_work(ctx->host->cl, node, share);
}

double alg_link_time(const alg_ctx *ctx, int from, int to, double bytes)
{
    return cl_link_time(ctx->host->cl, from, to, bytes);
}

double alg_step_time(const alg_ctx *ctx, int node)
{
    return cl_step_time_s(ctx->host->cl, node);
}

int alg_model_layers(const alg_ctx *ctx) { return ctx->layers; }

/* The model: the trainer's once the host is attached, the runner's before
 * (alg_type.model_memory_bytes). */
static const mdl_model *model_of(const alg_ctx *ctx)
{
    return ctx->host ? trn_model(ctx->host->trn) : ctx->model;
}

int alg_layer_cost(const alg_ctx *ctx, int l, double *fwd, double *bwd)
{
    const mdl_model *m = model_of(ctx);
    return m && l >= 1 ? mdl_layer_cost(m, (size_t)l, fwd, bwd) : -1;
}

size_t alg_layer_width(const alg_ctx *ctx, int l)
{
    const mdl_model *m = model_of(ctx);
    return m && l >= 0 ? mdl_layer_width(m, (size_t)l) : 0;
}

size_t alg_layer_param_off(const alg_ctx *ctx, int l)
{
    return mdl_stage_param_off(model_of(ctx), (size_t)l);
}

size_t alg_stage_acts_doubles(const alg_ctx *ctx, int a, int b, size_t n)
{
    return mdl_stage_acts_doubles(model_of(ctx), (size_t)a, (size_t)b, n);
}

size_t alg_stage_scratch_doubles(const alg_ctx *ctx, size_t n)
{
    return mdl_stage_scratch_doubles(model_of(ctx), n);
}

void alg_draw_rows(alg_ctx *ctx, int node, double *X, int *y)
{
    trn_trainer *t = ctx->host->trn;
    const size_t *b = trn_draw_batch(t, node);
    const mdl_dataset *ds = trn_train_set(t);
    assert(b && ds->y);
    for (size_t i = 0; i < ctx->batch; i++) {
        mdl_dataset_row(ds, b[i], X + i * ds->d);
        y[i] = ds->y[b[i]];
    }
}

double alg_stage_forward(alg_ctx *ctx, int node, const double *x, int a, int b,
                         const double *in, const int *y, size_t n, double *acts)
{
    trn_trainer *t = ctx->host->trn;
    double sum = mdl_stage_forward(trn_model(t), x, (size_t)a, (size_t)b, in, y, n, acts);
    if (b < ctx->layers)
        return 0.0;
    trn_check_loss(t, node, cl_stats(ctx->host->cl, node)->steps, alg_now(ctx), sum / (double)n);
    return sum / (double)n;
}

void alg_stage_backward(alg_ctx *ctx, const double *x, int a, int b, const double *in,
                        const double *acts, const int *y, size_t n, const double *gout,
                        double *g, double *gin, double *scratch)
{
    mdl_stage_backward(trn_model(ctx->host->trn), x, (size_t)a, (size_t)b, in, acts, y, n, gout,
                       g, gin, scratch);
}

int alg_split_plan_get(const alg_ctx *ctx, int s, alg_split_plan *p)
{
    const mdl_model *m = trn_model(ctx->host->trn);
    mdl_split_plan q;
    if (!m || s < 1 || mdl_split_plan_get(m, (size_t)s, &q) != 0)
        return -1;
    *p = (alg_split_plan){ .width = q.width, .n_front = q.n_front, .n_back = q.n_back,
                           .n_aux = q.n_aux, .front_share = q.flops_front / q.flops_full,
                           .back_share = q.flops_back / q.flops_full };
    return 0;
}

double alg_split_front(alg_ctx *ctx, int node, int s, const double *aux, double *acts,
                       int *labels, double *g, double *g_aux)
{
    trn_trainer *t = ctx->host->trn;
    double loss = trn_split_front(t, node, (size_t)s, aux, acts, labels, g, g_aux);
    trn_check_loss(t, node, cl_stats(ctx->host->cl, node)->steps, alg_now(ctx), loss);
    return loss;
}

double alg_split_back(alg_ctx *ctx, int node, int s, const double *x, const double *acts,
                      const int *labels, double *g)
{
    trn_trainer *t = ctx->host->trn;
    double loss = trn_split_back(t, (size_t)s, x, acts, labels, g);
    trn_check_loss(t, node, cl_stats(ctx->host->cl, node)->steps, alg_now(ctx), loss);
    return loss;
}

void alg_split_aux_init(alg_ctx *ctx, int node, int s, double *aux)
{
    trn_split_aux_init(ctx->host->trn, (size_t)s, aux, alg_rng(ctx, node));
}

void alg_sgd_apply_range(const alg_ctx *ctx, int node, double *x, const double *g,
                         double g_div, size_t lo, size_t hi, int count)
{
    trn_apply_range(ctx->host->trn, node, x, g, g_div, lo, hi, count);
}

void alg_abort_step(alg_ctx *ctx, int node) { cl_abort_step(ctx->host->cl, node); }
int alg_is_computing(const alg_ctx *ctx, int node) { return cl_is_computing(ctx->host->cl, node); }
int alg_is_up(const alg_ctx *ctx, int node) { return cl_is_up(ctx->host->cl, node); }
int alg_is_failed(const alg_ctx *ctx, int node) { return ctx->host->failed[node]; }

size_t alg_local_samples(const alg_ctx *ctx, int node)
{
    return trn_local_samples(ctx->host->trn, node);
}

double alg_step_loss(alg_ctx *ctx, int node) { return trn_step_loss(ctx->host->trn, node); }

size_t alg_batch(const alg_ctx *ctx) { return trn_batch(ctx->host->trn); }
size_t alg_node_batch(const alg_ctx *ctx, int node)
{
    return trn_node_batch(ctx->host->trn, node);
}

/* Node's step work over a step of alg_batch samples with nothing frozen:
 * its batch's share times its frozen stage's (the step-time model is
 * linear in both). */
static double step_scale(const alg_host *h, int node)
{
    const double b = (double)trn_node_batch(h->trn, node) / (double)trn_batch(h->trn);
    return h->fz_share ? b * h->fz_share[node] : b;
}

void alg_set_batch(alg_ctx *ctx, int node, size_t b)
{
    trn_trainer *t = ctx->host->trn;
    assert(!cl_is_computing(ctx->host->cl, node));
    int rc = trn_set_batch(t, node, b);
    if (rc == -2)
        sim_die_oom();
    assert(rc == 0 && "a batch out of range");
    (void)rc;
    cl_set_step_scale(ctx->host->cl, node, step_scale(ctx->host, node));
}

int alg_freezing(const alg_ctx *ctx) { return ctx->host->n_fz > 0 || ctx->host->fz_tau > 0; }

/* The criterion at count: the first node to reach a check (every node
 * of a synchronous protocol holds the same model there) compares the
 * candidate layer with its values at the previous check; the decision is
 * the host's, so every node, one taken back too, reads the same counts. */
/* Effective movement (ProFL's and SmartFreeze's pace controller,
 * docs/models.md): at every count first reached the candidate layer's path
 * grows by ||x - x_prev||_1; at a check (every window counts) it freezes
 * when its net movement over the window, ||x - x_start||_1, is below
 * threshold x the path (0 / 0: it did not move, it freezes).  Every count
 * is first reached in increasing order (each node passes them in turn). */
static void decide_em(alg_host *h, int node, uint64_t count)
{
    if (h->n_fz >= h->fz_max || (h->fz_have_snap && count <= h->fz_seen))
        return;
    const mdl_model *m = trn_model(h->trn);
    const double *x = trn_params_const(h->trn, node);
    const size_t P = trn_n_params(h->trn);
    if ((!h->fz_snap && !(h->fz_snap = malloc(P * sizeof(double))))
        || (!h->fz_prev && !(h->fz_prev = malloc(P * sizeof(double)))))
        sim_die_oom();
    size_t lo = mdl_freeze_prefix(m, h->n_fz), hi = mdl_freeze_prefix(m, h->n_fz + 1);
    h->fz_seen = count;
    if (!h->fz_have_snap) {   /* count 0: the first window begins */
        memcpy(h->fz_snap + lo, x + lo, (hi - lo) * sizeof(double));
        memcpy(h->fz_prev + lo, x + lo, (hi - lo) * sizeof(double));
        h->fz_path = 0.0;
        h->fz_have_snap = 1;
        h->fz_next = count + h->fz_window;
        return;
    }
    h->fz_path += mdl_freeze_l1(x + lo, h->fz_prev + lo, hi - lo);
    memcpy(h->fz_prev + lo, x + lo, (hi - lo) * sizeof(double));
    if (count < h->fz_next)
        return;
    const double net = mdl_freeze_l1(x + lo, h->fz_snap + lo, hi - lo);
    if (net < h->fz_tau * h->fz_path || (net == 0.0 && h->fz_path == 0.0)) {
        h->fz_dec[h->n_fz++] = count;
        lo = hi;
        hi = mdl_freeze_prefix(m, h->n_fz + 1);
        memcpy(h->fz_prev + lo, x + lo, (hi - lo) * sizeof(double));
    }
    memcpy(h->fz_snap + lo, x + lo, (hi - lo) * sizeof(double));
    h->fz_path = 0.0;
    h->fz_next = count + h->fz_window;
}

static void decide(alg_host *h, int node, uint64_t count)
{
    if (h->fz_em) {
        decide_em(h, node, count);
        return;
    }
    if (h->n_fz >= h->fz_max || count != h->fz_next)
        return;
    const mdl_model *m = trn_model(h->trn);
    const double *x = trn_params_const(h->trn, node);
    if (!h->fz_snap && !(h->fz_snap = malloc(trn_n_params(h->trn) * sizeof(double))))
        sim_die_oom();
    size_t lo = mdl_freeze_prefix(m, h->n_fz), hi = mdl_freeze_prefix(m, h->n_fz + 1);
    if (h->fz_have_snap) {
        double d = 0.0, s = 0.0;
        for (size_t k = lo; k < hi; k++) {
            const double e = x[k] - h->fz_snap[k];
            d += e * e;
            s += h->fz_snap[k] * h->fz_snap[k];
        }
        if (d < h->fz_tau * h->fz_tau * s) {
            h->fz_dec[h->n_fz++] = count;
            lo = hi;
            hi = mdl_freeze_prefix(m, h->n_fz + 1);
        }
    }
    memcpy(h->fz_snap + lo, x + lo, (hi - lo) * sizeof(double));
    h->fz_have_snap = 1;
    h->fz_next += h->fz_window;
}

size_t alg_freeze_round(alg_ctx *ctx, int node, uint64_t count)
{
    alg_host *h = ctx->host;
    if (h->fz_tau > 0)
        decide(h, node, count);
    size_t f = 0;
    while (f < h->n_fz && h->fz_after[f] <= count)
        f++;
    trn_trainer *t = h->trn;
    if (f != trn_frozen(t, node)) {
        assert(!cl_is_computing(h->cl, node));
        if (!h->fz_share) {
            if (!(h->fz_share = malloc((size_t)h->n_all * sizeof *h->fz_share)))
                sim_die_oom();
            for (int i = 0; i < h->n_all; i++)
                h->fz_share[i] = 1.0;
        }
        const int rc = trn_set_frozen(t, node, f);
        if (rc == -2)
            sim_die_oom();
        assert(rc == 0 && "the runner checked the schedule against the model");
        (void)rc;
        const mdl_model *m = trn_model(t);
        h->fz_share[node] = mdl_freeze_flops(m, f) / mdl_flops_per_sample(m);
        cl_set_step_scale(h->cl, node, step_scale(h, node));
    }
    return trn_frozen_prefix(t, node);
}

/* The layers frozen at count (decided so far, for the criterion). */
static size_t stage_at(const alg_host *h, uint64_t count)
{
    size_t f = 0;
    while (f < h->n_fz && h->fz_after[f] <= count)
        f++;
    return f;
}

size_t alg_freeze_prefix_at(const alg_ctx *ctx, uint64_t count)
{
    const size_t f = stage_at(ctx->host, count);
    return f ? mdl_freeze_prefix(trn_model(ctx->host->trn), f) : 0;
}

int alg_memory_fits(const alg_ctx *ctx, int node, uint64_t count)
{
    const alg_host *h = ctx->host;
    if (!h->mem_cap || !(h->mem_cap[node] > 0) || trn_timing_only(h->trn))
        return 1;
    const mdl_memory m = mdl_memory_of(trn_model(h->trn), stage_at(h, count),
                                       trn_node_batch(h->trn, node), h->mem_slots, h->mem_bpv);
    return m.total <= h->mem_cap[node];
}

size_t alg_frozen_params(const alg_ctx *ctx, int node)
{
    return trn_frozen_prefix(ctx->host->trn, node);
}

size_t alg_trainable_end(const alg_ctx *ctx, int node)
{
    return trn_trainable_end(ctx->host->trn, node);
}

size_t alg_freeze_end_at(const alg_ctx *ctx, uint64_t count)
{
    const mdl_model *m = trn_model(ctx->host->trn);
    return m ? mdl_freeze_end(m, stage_at(ctx->host, count)) : ctx->P;
}

size_t alg_freeze_heads_in(const alg_ctx *ctx, size_t lo, size_t hi)
{
    const mdl_model *m = trn_model(ctx->host->trn);
    return m ? mdl_freeze_heads_in(m, lo, hi) : 0;
}

double alg_step_time_s(const alg_ctx *ctx, int node)
{
    return cl_base_step_time(ctx->host->cl, node);
}
double *alg_params(alg_ctx *ctx, int node) { return trn_params(ctx->host->trn, node); }

const double *alg_params_const(const alg_ctx *ctx, int node)
{
    return trn_params_const(ctx->host->trn, node);
}
void alg_params_own(alg_ctx *ctx, int node) { trn_params_own(ctx->host->trn, node); }

void alg_sgd_apply(const alg_ctx *ctx, int node, double *x, const double *g, double g_div)
{
    trn_apply(ctx->host->trn, node, x, g, g_div);
}

int alg_step_hessian(alg_ctx *ctx, int node, const double *params, const double *V, size_t k,
                     double *out)
{
    const int rc = trn_hessian_apply(ctx->host->trn, node, params, V, k, out);
    if (rc == -2)
        alg_out_of_memory();
    return rc;
}
void alg_reset_momentum(alg_ctx *ctx, int node) { trn_reset_momentum(ctx->host->trn, node); }

void alg_mix_apply(const alg_ctx *ctx, int node, double own_w, const double *own,
                   int n, const double *const *xs, const double *w, const int *from,
                   const double *g, double g_div, double *copy_to, int move)
{
    trn_mix_terms m = { .n = n, .x = xs, .w = w, .from = from, .own_w = own_w, .own = own,
                        .g = g, .g_div = g_div, .out = copy_to, .move = move,
                        .lo = trn_frozen_prefix(ctx->host->trn, node) };
    trn_mix(ctx->host->trn, node, &m);
}

int alg_mix_deferred(const alg_ctx *ctx) { return trn_mix_deferred(ctx->host->trn); }
int alg_mix_keeps(const alg_ctx *ctx)
{
    return trn_mix_deferred(ctx->host->trn) || trn_mix_fused(ctx->host->trn);
}

void alg_mix_sum(const alg_ctx *ctx, int node, double own_w, const double *own, double *sum,
                 const double *g, double g_div, double *copy_to, int move)
{
    const double *xs[1] = { sum };
    const double one = 1.0;
    trn_mix_terms m = { .n = 1, .x = xs, .w = &one, .from = &node, .own_w = own_w, .own = own,
                        .g = g, .g_div = g_div, .out = copy_to, .move = move, .clear = sum,
                        .lo = trn_frozen_prefix(ctx->host->trn, node) };
    trn_mix(ctx->host->trn, node, &m);
}

void alg_send(alg_ctx *ctx, int from, int to, uint32_t tag, uint64_t round, cl_buf *payload,
              double bytes)
{
    cl_send(ctx->host->cl, from, to, tag, round, payload, bytes);
}

double alg_param_bytes(const alg_ctx *ctx, size_t n_params)
{
    const alg_host *h = ctx->host;
    if (trn_timing_only(h->trn))
        return h->message_bytes;
    return (double)n_params * h->bytes_per_param;
}

double alg_part_bytes(const alg_ctx *ctx, size_t n_params, double share)
{
    const alg_host *h = ctx->host;
    if (trn_timing_only(h->trn))
        return share * h->message_bytes;
    return (double)n_params * h->bytes_per_param;
}

int alg_timing_only(const alg_ctx *ctx) { return trn_timing_only(ctx->host->trn); }

cl_buf *alg_buf_get(alg_ctx *ctx)
{
    cl_buf *b = cl_buf_get(ctx->host->cl);
    b->len = ctx->P;
    return b;
}

cl_buf *alg_buf_get_len(alg_ctx *ctx, size_t len)
{
    return cl_buf_get_len(ctx->host->cl, len);
}

cl_buf *alg_snapshot(alg_ctx *ctx, int node)
{
    cl_buf *b = alg_buf_get(ctx);
    memcpy(b->data, alg_params_const(ctx, node), ctx->P * sizeof(double));
    return b;
}

void alg_buf_put(alg_ctx *ctx, cl_buf *b) { cl_buf_put(ctx->host->cl, b); }

void alg_set_timer(alg_ctx *ctx, int node, double delay_s, uint32_t tag)
{
    cl_set_timer(ctx->host->cl, node, delay_s, tag);
}

gsl_rng *alg_rng(const alg_ctx *ctx, int node)
{
    alg_host *h = ctx->host;
    if (!h->rng[node]
        && !(h->rng[node] = sim_rng_stream_create(ctx->seed, (uint32_t)node, SIM_RNG_ALGO)))
        sim_die_oom();
    return h->rng[node];
}
