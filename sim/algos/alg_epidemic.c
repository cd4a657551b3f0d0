/* alg_epidemic.c -- Epidemic Learning (de Vos, Farhadkhani, Guerraoui,
 * Kermarrec, Pires, Sharma, "Epidemic Learning: Boosting Decentralized
 * Learning with Randomized Communication", NeurIPS 2023): every round each
 * node trains locally, sends its model to s peers drawn at random afresh
 * each round, and averages its model with the models it received.
 *
 * Timing: a round is `local_steps` SGD steps back to back (gradients
 * applied as steps end); then the node sends a snapshot of its model to
 * `fanout` distinct peers drawn uniformly without replacement (from all
 * other nodes with `peers` = "all", the paper's EL-Oracle; from its
 * topology neighbours with "neighbours", EL-Local) and at once aggregates
 * x <- (x + sum of models received since its last aggregation) / (1 + count)
 * before starting the next round.  Rounds are asynchronous: a node never
 * waits for models, so a slow node's model arrives in whichever round of
 * the receiver it arrives in, and the protocol cannot stall.
 */
#include "alg.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <gsl/gsl_cblas.h>
#include <gsl/gsl_randist.h>

enum { P_FANOUT, P_LOCAL_STEPS, P_PEERS };
enum { PEERS_ALL, PEERS_NEIGHBOURS };
enum { TAG_MODEL = 1 };

static const char *const peer_names[] = { "all", "neighbours", NULL };

static const alg_param_spec params[] = {
    { "fanout", ALG_PARAM_INT, 2, 1, 1e9, NULL },
    { "local_steps", ALG_PARAM_INT, 1, 1, 1e9, NULL },
    { "peers", ALG_PARAM_CHOICE, PEERS_ALL, 0, 0, peer_names },
    { NULL, 0, 0, 0, 0, NULL },
};

typedef struct el_state {
    double  *inbox;     /* sum of models received since the last aggregation */
    int      n_inbox;
    int      local;
    uint64_t round;
    int     *pool;      /* candidate peers */
    int     *pick;      /* this round's peers */
} el_state;

static int el_check(const alg_ctx *ctx, char *err, size_t size)
{
    int s = (int)ctx->param[P_FANOUT];
    if ((int)ctx->param[P_PEERS] == PEERS_ALL) {
        if (s > ctx->n - 1) {
            snprintf(err, size, "epidemic fanout %d needs at least %d nodes, got %d", s, s + 1,
                     ctx->n);
            return -1;
        }
        return 0;
    }
    for (int i = 0; i < ctx->n; i++) {
        int deg = (int)(ctx->g->off[i + 1] - ctx->g->off[i]);
        if (s > deg) {
            snprintf(err, size, "epidemic fanout %d with peers \"neighbours\" needs every "
                     "node to have at least %d neighbours; node %d has %d", s, s, i, deg);
            return -1;
        }
    }
    return 0;
}

static int el_init(alg_ctx *ctx, void *state, int i)
{
    el_state *st = state;
    int n_pool = (int)ctx->param[P_PEERS] == PEERS_ALL
                     ? ctx->n - 1 : (int)(ctx->g->off[i + 1] - ctx->g->off[i]);
    st->inbox = calloc(ctx->P ? ctx->P : 1, sizeof(double));
    st->pool = malloc((size_t)(n_pool ? n_pool : 1) * sizeof(int));
    st->pick = malloc((size_t)ctx->param[P_FANOUT] * sizeof(int));
    if (!st->inbox || !st->pool || !st->pick)
        return -1;
    if ((int)ctx->param[P_PEERS] == PEERS_ALL) {
        for (int j = 0, k = 0; j < ctx->n; j++)
            if (j != i)
                st->pool[k++] = j;
    } else {
        memcpy(st->pool, ctx->g->nbr + ctx->g->off[i], (size_t)n_pool * sizeof(int));
    }
    return 0;
}

static void el_fini(alg_ctx *ctx, void *state, int node)
{
    (void)ctx;
    (void)node;
    el_state *st = state;
    free(st->inbox);
    free(st->pool);
    free(st->pick);
}

static void end_round(alg_ctx *ctx, el_state *st, int i)
{
    int s = (int)ctx->param[P_FANOUT];
    size_t n_pool = (int)ctx->param[P_PEERS] == PEERS_ALL
                        ? (size_t)ctx->n - 1 : ctx->g->off[i + 1] - ctx->g->off[i];
    gsl_ran_choose(alg_rng(ctx, i), st->pick, (size_t)s, st->pool, n_pool, sizeof(int));
    cl_buf *x = alg_snapshot(ctx, i);
    for (int k = 0; k < s; k++)
        alg_send(ctx, i, st->pick[k], TAG_MODEL, st->round, x, alg_param_bytes(ctx, ctx->P));
    alg_buf_put(ctx, x);
    if (st->n_inbox > 0) {
        double *p = alg_params(ctx, i);
        cblas_daxpy((int)ctx->P, 1.0, st->inbox, 1, p, 1);
        cblas_dscal((int)ctx->P, 1.0 / (1 + st->n_inbox), p, 1);
        memset(st->inbox, 0, ctx->P * sizeof(double));
        st->n_inbox = 0;
    }
    st->round++;
    st->local = 0;
}

static void el_on_step_done(alg_ctx *ctx, void *state, int i, const double *grad)
{
    el_state *st = state;
    alg_sgd_apply(ctx, i, alg_params(ctx, i), grad, 1.0);
    if (++st->local == (int)ctx->param[P_LOCAL_STEPS])
        end_round(ctx, st, i);
    alg_start_step(ctx, i);
}

static void el_on_message(alg_ctx *ctx, void *state, int i, const cl_msg *m)
{
    (void)i;
    el_state *st = state;
    cblas_daxpy((int)ctx->P, 1.0, m->payload->data, 1, st->inbox, 1);
    st->n_inbox++;
}

const alg_type alg_epidemic = {
    .name = "epidemic",
    .state_size = sizeof(el_state),
    .params = params,
    .check = el_check,
    .init = el_init,
    .on_step_done = el_on_step_done,
    .on_message = el_on_message,
    .fini = el_fini,
};
