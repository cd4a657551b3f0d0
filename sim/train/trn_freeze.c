/* trn_freeze.c -- which of a node's front layers are frozen (trn.h,
 * progressive freezing): the count a node's next step begun computes
 * with, and the frozen prefix its optimizer updates leave alone (with
 * block heads also what lies above its stage's window).  Nothing
 * is allocated until a node first freezes, so runs without freezing are
 * unchanged.  It does not decide when a layer freezes (the protocol, from
 * the scenario's schedule) nor price a step (the cluster).
 */
#include "trn_internal.h"
#include "mdl_freeze.h"

#include <stdlib.h>

int trn_set_frozen(trn_trainer *t, int node, size_t f)
{
    if (!t->cfg.model || f > mdl_freeze_max(t->cfg.model))
        return -1;
    if (!t->fz) {
        if (f == 0)
            return 0;
        t->fz = calloc((size_t)t->n, sizeof *t->fz);
        t->fz_off = calloc((size_t)t->n, sizeof *t->fz_off);
        if (!t->fz || !t->fz_off) {
            free(t->fz);
            free(t->fz_off);
            t->fz = t->fz_off = NULL;
            return -2;
        }
    }
    t->fz[node] = f;
    t->fz_off[node] = mdl_freeze_prefix(t->cfg.model, f);
    return 0;
}

size_t trn_frozen(const trn_trainer *t, int node) { return t->fz ? t->fz[node] : 0; }

size_t trn_frozen_prefix(const trn_trainer *t, int node)
{
    return t->fz ? t->fz_off[node] : 0;
}

size_t trn_trainable_end(const trn_trainer *t, int node)
{
    return t->cfg.model ? mdl_freeze_end(t->cfg.model, trn_frozen(t, node)) : t->P;
}
