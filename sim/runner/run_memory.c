/* run_memory.c -- the simulated device memory of every node and the
 * checks of progressive freezing (docs/models.md): before a run, that the
 * freeze section fits the model and the protocol, and that each node's
 * memory model (models/mdl_freeze.h) at its first step fits its capacity
 * (compute.memory_bytes and the groups'); during it, each node's peak as
 * its steps begin (its frozen stage and batch may change); at the end,
 * nodes.csv's memory columns.  It is not the process's own memory check
 * (run_limits.c) and does not decide when layers freeze (the protocol,
 * through alg_freeze_round).
 */
#include "run_internal.h"
#include "mdl_freeze.h"

#include <stdio.h>
#include <stdlib.h>

static int optim_slots(const scn_scenario *s) { return s->opt_momentum > 0 ? 1 : 0; }

/* Layers the schedule freezes at protocol count 0 (before any round). */
static size_t first_stage(const scn_scenario *s)
{
    size_t f = 0;
    while (f < s->n_freeze && s->freeze_after[f] == 0)
        f++;
    return f;
}

/* The last stage: every layer the schedule (or the criterion) freezes. */
static size_t last_stage(const run_sim *r)
{
    return r->s->freeze_threshold > 0 ? run_i_freeze_max(r) : r->s->n_freeze;
}

/* A protocol that lets a worker train only the stages its memory holds
 * (ALG_FITS_MEMORY, fedavg's selection), with a freeze section. */
static int selects(const run_sim *r)
{
    return r->s->has_freeze && (r->alg->needs & ALG_FITS_MEMORY);
}

/* Node i's memory with f frozen layers and batch b: a server (i >= the
 * workers) keeps the model, one gradient and the optimizer state, no
 * activations. */
static mdl_memory node_memory(const run_sim *r, int i, size_t f, size_t b)
{
    const scn_scenario *s = r->s;
    if (i >= s->n_nodes)
        b = 0;
    return mdl_memory_of(r->model, f, b, optim_slots(s), s->bytes_per_param);
}

/* The JSON pointer of the capacity that applies to node i. */
static void capacity_ptr(const scn_scenario *s, int i, char *out, size_t n)
{
    const int k = i < s->n_nodes ? scn_node_memory_group(s, i) : -1;
    if (k >= 0)
        snprintf(out, n, "/compute/groups/%d/memory_bytes", k);
    else
        snprintf(out, n, "/compute/memory_bytes");
}

size_t run_i_freeze_max(const run_sim *r)
{
    if (r->s->freeze_max_layers)
        return r->s->freeze_max_layers;
    return r->model ? mdl_freeze_max(r->model) : 0;
}

int run_i_check_freeze(const run_sim *r, scn_error *err)
{
    const scn_scenario *s = r->s;
    char m[512];
    if (s->has_freeze && !(r->alg->needs & ALG_CAN_FREEZE)) {
        snprintf(m, sizeof m, "algorithm \"%s\" does not freeze layers (the protocols that "
                 "send only the unfrozen layers: allreduce, dpsgd, fedavg, local-sgd, ps-async, "
                 "ps-sync)", r->alg->name);
        run_i_value_error(err, s, "/freeze", m);
        return -1;
    }
    if (s->has_freeze && s->freeze_grow && !(r->alg->needs & ALG_CAN_GROW)) {
        snprintf(m, sizeof m, "algorithm \"%s\" does not train block by block (mode "
                 "\"grow\": the protocols that send only the stage's block and head: "
                 "allreduce, fedavg); mode \"freeze\" works with it", r->alg->name);
        run_i_value_error(err, s, "/freeze/mode", m);
        return -1;
    }
    if (!scn_reports_memory(s))
        return 0;
    if (!r->model) {
        run_i_value_error(err, s, s->has_freeze ? "/freeze" : "/compute/memory_bytes",
                          "the memory model and freezing need the model's layers: not "
                          "with model \"none\" (timing only)");
        return -1;
    }
    if (s->freeze_threshold > 0 && (run_i_freeze_max(r) > mdl_freeze_max(r->model) ||
                                    mdl_freeze_max(r->model) == 0)) {
        snprintf(m, sizeof m, "the criterion may freeze %zu layers, the model has %zu that "
                 "may freeze (an MLP's hidden layers; its output layer always trains)",
                 run_i_freeze_max(r), mdl_freeze_max(r->model));
        run_i_value_error(err, s, s->freeze_max_layers ? "/freeze/max_layers" : "/freeze", m);
        return -1;
    }
    if (s->has_freeze && s->n_freeze > mdl_freeze_max(r->model)) {
        snprintf(m, sizeof m, "freezes %zu layers, the model has %zu that may freeze (an "
                 "MLP's hidden layers; its output layer always trains)", s->n_freeze,
                 mdl_freeze_max(r->model));
        run_i_value_error(err, s, "/freeze/after_steps", m);
        return -1;
    }
    const size_t f0 = first_stage(s);
    int fit0 = 0;   /* workers that can train the first stage */
    for (int i = 0; i < r->n_all; i++) {
        const double cap = scn_node_memory(s, i);
        const int later = selects(r) && i < s->n_nodes;
        const size_t f = later ? last_stage(r) : f0;
        const mdl_memory mm = node_memory(r, i, f, s->batch);
        if (i < s->n_nodes)
            fit0 += !(cap > 0 && node_memory(r, i, f0, s->batch).total > cap);
        if (later && cap > 0 && mm.total > cap) {
            char ptr[128];
            capacity_ptr(s, i, ptr, sizeof ptr);
            snprintf(m, sizeof m, "node %d needs %.10g bytes even at the last stage (parameters "
                     "%.10g, gradients %.10g, optimizer %.10g, activations %.10g; %zu frozen "
                     "layers, batch %zu), its capacity is %.10g", i, mm.total, mm.params,
                     mm.grads, mm.optim, mm.acts, f, s->batch, cap);
            run_i_value_error(err, s, ptr, m);
            return -1;
        }
        if (!later && cap > 0 && mm.total > cap) {
            char ptr[128];
            capacity_ptr(s, i, ptr, sizeof ptr);
            snprintf(m, sizeof m, "node %d needs %.10g bytes at its first step (parameters "
                     "%.10g, gradients %.10g, optimizer %.10g, activations %.10g; %zu frozen "
                     "layers, batch %zu), its capacity is %.10g", i, mm.total, mm.params,
                     mm.grads, mm.optim, mm.acts, f0,
                     i < s->n_nodes ? s->batch : 0, cap);
            run_i_value_error(err, s, ptr, m);
            return -1;
        }
    }
    if (selects(r) && fit0 == 0) {
        snprintf(m, sizeof m, "no worker's capacity holds the first stage (%zu frozen layers, "
                 "%.10g bytes with batch %zu): no round could begin", f0,
                 node_memory(r, 0, f0, s->batch).total, s->batch);
        char ptr[128];
        capacity_ptr(s, 0, ptr, sizeof ptr);
        run_i_value_error(err, s, ptr, m);
        return -1;
    }
    return 0;
}

int run_i_memory_begin(run_sim *r)
{
    if (!scn_reports_memory(r->s))
        return 0;
    if (!(r->mem_peak = malloc((size_t)r->n_all * sizeof *r->mem_peak))
        || !(r->mem_cap = malloc((size_t)r->n_all * sizeof *r->mem_cap)))
        return -1;
    const size_t f0 = first_stage(r->s);
    /* a selecting protocol's worker holds nothing until its first round */
    for (int i = 0; i < r->n_all; i++) {
        r->mem_peak[i] = selects(r) && i < r->s->n_nodes
                       ? 0 : node_memory(r, i, f0, r->s->batch).total;
        r->mem_cap[i] = scn_node_memory(r->s, i);
    }
    return 0;
}

void run_i_memory_step(run_sim *r, int i)
{
    const double t = node_memory(r, i, trn_frozen(r->trn, i), trn_node_batch(r->trn, i)).total;
    if (t > r->mem_peak[i])
        r->mem_peak[i] = t;
}

void run_i_memory_row(const run_sim *r, int i, out_node_row *row)
{
    if (!r->mem_peak)
        return;
    const size_t f = trn_frozen(r->trn, i);
    const mdl_memory mm = node_memory(r, i, f, trn_node_batch(r->trn, i));
    const double cap = scn_node_memory(r->s, i);
    row->has_mem = 1;
    row->frozen_layers = (int)f;
    row->mem_params = mm.params;
    row->mem_grads = mm.grads;
    row->mem_optim = mm.optim;
    row->mem_acts = mm.acts;
    row->mem_total = mm.total;
    row->mem_peak = r->mem_peak[i];
    row->mem_capacity = cap;
    row->mem_exceeded = cap > 0 && r->mem_peak[i] > cap;
}

void run_i_memory_end(run_sim *r)
{
    free(r->mem_peak);
    free(r->mem_cap);
    r->mem_peak = r->mem_cap = NULL;
}
