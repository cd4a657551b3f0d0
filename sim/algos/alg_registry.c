/* alg_registry.c -- the table of known algorithms and the few helpers they
 * share.  Adding an algorithm means adding its file and one line here.
 */
#include "alg.h"

#include <string.h>

static const alg_type *const all[] = { &alg_adpsgd, &alg_allreduce, &alg_dpsgd };

const alg_type *alg_find(const char *name)
{
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
        if (strcmp(all[i]->name, name) == 0)
            return all[i];
    return NULL;
}

const char *alg_names(void) { return "adpsgd, allreduce, dpsgd"; }

void alg_sgd_apply(const alg_ctx *ctx, int node, double *x, const double *g, double g_div)
{
    mdl_optim_step(ctx->opt, node, x, g, g_div);
}
