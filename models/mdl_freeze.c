/* mdl_freeze.c -- the frozen prefix of a model (its parameters and the
 * FLOPs of a step that leaves it out, from the per-layer model of
 * mdl_split.c) and the closed form of a node's training memory
 * (mdl_freeze.h).  The gradient itself is mdl_mlp.c's, which reads the
 * instance's frozen count; this file does not compute one, nor decide
 * when a layer freezes.
 */
#include "mdl_freeze.h"
#include "mdl_internal.h"
#include "mdl_split.h"

#include <math.h>

static size_t width(const mdl_arch *a, size_t l)
{
    if (l == 0)
        return a->d;
    if (l <= a->n_hidden)
        return a->hidden[l - 1];
    return (size_t)a->n_classes;
}

static int is_mlp(const mdl_model *m) { return m->type == &mdl_mlp; }

size_t mdl_freeze_max(const mdl_model *m) { return is_mlp(m) ? m->arch.n_hidden : 0; }

size_t mdl_freeze_prefix(const mdl_model *m, size_t f)
{
    if (!is_mlp(m))
        return 0;
    return mdl_i_mlp_layer_off(&m->arch, (f < mdl_freeze_max(m) ? f : mdl_freeze_max(m)) + 1);
}

/* The stage's top hidden layer: every one, or f + 1 with block heads. */
static size_t top_of(const mdl_arch *a, size_t f)
{
    return a->heads && f + 1 < a->n_hidden ? f + 1 : a->n_hidden;
}

size_t mdl_freeze_end(const mdl_model *m, size_t f)
{
    if (!is_mlp(m) || !m->arch.heads)
        return m->n_params;
    const size_t t = top_of(&m->arch, f);
    return t < m->arch.n_hidden ? mdl_i_mlp_layer_off(&m->arch, t + 1) : m->n_params;
}

int mdl_freeze_grows(const mdl_model *m) { return is_mlp(m) && m->arch.heads; }

size_t mdl_freeze_heads_in(const mdl_model *m, size_t lo, size_t hi)
{
    if (!mdl_freeze_grows(m))
        return 0;
    size_t n = 0;
    for (size_t l = 1; l < m->arch.n_hidden; l++) {
        const size_t h = mdl_i_mlp_layer_off(&m->arch, l + 1) - mdl_i_mlp_head_params(&m->arch, l);
        if (h >= lo && h + mdl_i_mlp_head_params(&m->arch, l) <= hi)
            n += mdl_i_mlp_head_params(&m->arch, l);
    }
    return n;
}

double mdl_freeze_flops(const mdl_model *m, size_t f)
{
    if (!is_mlp(m) || (f == 0 && !m->arch.heads))
        return mdl_flops_per_sample(m);
    const mdl_arch *a = &m->arch;
    const size_t t = top_of(a, f);
    double s = 0.0;
    for (size_t l = 1; l <= t; l++)
        s += l <= f ? 2.0 * (double)width(a, l) * (double)width(a, l - 1)
                    : (l > f + 1 ? 6.0 : 4.0) * (double)width(a, l) * (double)width(a, l - 1);
    /* the output module: the output layer, or layer t's head */
    s += (t > f ? 6.0 : 4.0) * (double)a->n_classes * (double)width(a, t);
    return s;
}

double mdl_freeze_l1(const double *a, const double *b, size_t n)
{
    double s = 0.0;
    for (size_t k = 0; k < n; k++)
        s += fabs(a[k] - b[k]);
    return s;
}

int mdl_set_frozen(mdl_model *m, size_t f)
{
    if (f > mdl_freeze_max(m))
        return -1;
    m->frozen = f;
    return 0;
}

size_t mdl_frozen(const mdl_model *m) { return m->frozen; }

mdl_memory mdl_memory_of(const mdl_model *m, size_t f, size_t batch, int optim_slots,
                         double bytes_per_value)
{
    const mdl_arch *a = &m->arch;
    const size_t lo = mdl_freeze_prefix(m, f), hi = mdl_freeze_end(m, f);
    const double v = bytes_per_value, B = (double)batch;
    const double trainable = (double)(hi - lo);
    /* held: everything up to the stage's end but the heads of blocks
     * frozen before (the forward pass runs the frozen layers) */
    const double P = (double)(hi - mdl_freeze_heads_in(m, 0, lo));
    double inputs = 0.0, outputs;
    if (is_mlp(m)) {
        const size_t t = top_of(a, f), ff = f < t ? f : t;
        for (size_t l = ff + 1; l <= t + 1; l++)
            inputs += (double)width(a, l - 1);
        outputs = (double)a->n_classes;
    } else {
        inputs = (double)a->d;
        outputs = m->type == &mdl_softmax ? (double)a->n_classes : 1.0;
    }
    mdl_memory r = { .params = v * P, .grads = v * trainable,
                     .optim = v * (double)optim_slots * trainable,
                     .acts = v * B * (inputs + outputs) };
    r.total = r.params + r.grads + r.optim + r.acts;
    return r;
}
