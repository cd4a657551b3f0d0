/* alg_ps_adaptive.c -- Delay-Adaptive ASGD, the asynchronous baseline of
 * the Ringmaster ASGD paper (Maranjyan, Tyurin, Richtarik, ICML 2025):
 * asynchronous SGD through a server whose step size shrinks with the
 * gradient's delay (Mishchenko, Bach, Even, Woodworth, "Asynchronous SGD
 * Beats Minibatch SGD Under Arbitrary Delays", NeurIPS 2022; Koloskova,
 * Stich, Jaggi, NeurIPS 2022).
 *
 * Timing: as ps-async (every gradient applied on arrival, the sender gets
 * the new model back and starts its next step).  The step size of a
 * gradient with delay d (updates applied since the version it was computed
 * on) is lr * min(1, C / d), i.e. the update is x <- x - (lr / max(1,
 * d / C)) g through the server's optimizer, with C = `threshold`, by
 * default the number of workers n: the rule of the authors' code
 * (AsynchronousSGD with delay_adaptive: gamma * n / max(n, delay)), which
 * is Mishchenko et al.'s min(1/(2nL), 1/(2L d)) with lr = 1/(2nL).  A
 * gradient no older than C is applied exactly as ps-async applies it.
 * Nothing is dropped.  updates_damped counts the gradients older than C,
 * step_scale_min and step_scale_mean the factors min(1, C / d) applied.
 *
 * When a node fails: as ps-async (the server waits for no worker, answers
 * none declared failed and sends one declared back the current model, on
 * which it starts afresh; workers wait for a failed server, their gradients
 * retransmitted until it is back).  The rejoined worker's first gradient is
 * on the current model, so its return is not damped as one very stale
 * gradient would be.
 */
#include "alg_ps.h"

enum { P_THRESHOLD };

static const alg_param_spec params[] = {
    { "threshold", ALG_PARAM_INT, 0, 0, 1e9, NULL,
      "C: the step size is lr min(1, C / delay); 0: the number of workers" },
    { NULL, 0, 0, 0, 0, NULL, NULL },
};

typedef struct da_shared {
    uint64_t damped;
    double   scale_sum, scale_min;
} da_shared;

static int da_shared_init(alg_ctx *ctx)
{
    if (alg_ps_shared_init(ctx, sizeof(da_shared)) != 0)
        return -1;
    ((da_shared *)alg_ps_extra(ctx->shared))->scale_min = 1.0;
    return 0;
}

static void da_on_message(alg_ctx *ctx, void *state, int i, const cl_msg *m)
{
    if (i != ctx->server) {
        alg_ps_worker_model(ctx, state, i, m);
        return;
    }
    alg_ps *ps = ctx->shared;
    da_shared *da = alg_ps_extra(ps);
    const uint64_t C = ctx->param[P_THRESHOLD] > 0 ? (uint64_t)ctx->param[P_THRESHOLD]
                                                   : (uint64_t)ctx->n;
    const uint64_t d = ps->version - m->round;
    double g_div = 1.0, scale = 1.0;
    if (d > C) {
        g_div = (double)d / (double)C;
        scale = (double)C / (double)d;
        da->damped++;
        if (scale < da->scale_min)
            da->scale_min = scale;
    }
    da->scale_sum += scale;
    alg_ps_apply_div(ctx, m->payload->data, m->round, g_div);
    if (!alg_is_failed(ctx, m->from))
        alg_ps_send_model(ctx, m->from);
}

static int da_stats(const alg_ctx *ctx, const char **keys, double *values, int max)
{
    int k = alg_ps_stats(ctx, keys, values, max);
    if (k == 0 || k + 3 > max)
        return k;
    const alg_ps *ps = ctx->shared;
    const da_shared *da = alg_ps_extra(ctx->shared);
    keys[k] = "updates_damped";
    values[k++] = (double)da->damped;
    keys[k] = "step_scale_min";
    values[k++] = da->scale_min;
    keys[k] = "step_scale_mean";
    values[k++] = ps->applied ? da->scale_sum / (double)ps->applied : 1.0;
    return k;
}

const alg_type alg_ps_adaptive = {
    .name = "delay-adaptive",
    .summary = "asynchronous parameter server, step size lr min(1, C/delay) (Mishchenko et al. 2022)",
    .state_size = sizeof(alg_ps_worker),
    .servers = 1,
    .params = params,
    .eval_params = alg_ps_eval_params,
    .shared_init = da_shared_init,
    .shared_fini = alg_ps_shared_fini,
    .on_step_done = alg_ps_worker_step_done,
    .on_message = da_on_message,
    .on_timer = alg_ps_rejoin_on_timer,
    .on_failure = alg_ps_rejoin_on_failure,
    .describe_wait = alg_ps_worker_describe_wait,
    .stats = da_stats,
};
