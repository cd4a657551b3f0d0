/* scn_resolved_hetero.c -- the heterogeneity parts of the resolved
 * scenario: noise, slowdowns, faults, NIC settings and link entries, each
 * key written only where the resolved text has always had it (keys at
 * their defaults are left out).  It builds JSON values; scn_resolved.c
 * assembles the tree and scn_canon.c writes the text.
 */
#include "scn_internal.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

json_t *scn_i_resolved_noise(const cl_noise_spec *ns)
{
    const char *const *dists = scn_i_noise_names;
    json_t *g = json_object();
    int oom = 0;

    if (!g)
        return NULL;
    scn_i_add(g, "dist", json_string(dists[ns->dist]), &oom);
    switch (ns->dist) {
    case CL_NOISE_UNIFORM:
        scn_i_add(g, "low", json_real(ns->low), &oom);
        scn_i_add(g, "high", json_real(ns->high), &oom);
        break;
    case CL_NOISE_LOGNORMAL:
        scn_i_add(g, "sigma", json_real(ns->sigma), &oom);
        break;
    case CL_NOISE_NORMAL:
        scn_i_add(g, "sigma", json_real(ns->sigma), &oom);
        scn_i_add(g, "floor", json_real(ns->floor), &oom);
        break;
    case CL_NOISE_SHIFTED_EXPONENTIAL:
        scn_i_add(g, "shift", json_real(ns->shift), &oom);
        break;
    case CL_NOISE_GAMMA:
        scn_i_add(g, "shape", json_real(ns->shape), &oom);
        break;
    case CL_NOISE_PARETO:
        scn_i_add(g, "alpha", json_real(ns->alpha), &oom);
        break;
    default:
        break;
    }
    if (oom) {
        json_decref(g);
        return NULL;
    }
    return g;
}


void scn_i_resolved_slowdowns(json_t *o, const scn_scenario *s, int *oom)
{
    json_t *arr, *g;

    if (s->n_slowdowns == 0)
        return;
    const char *const *kinds = scn_i_slow_kind_names;
    arr = json_array();
    scn_i_add(o, "slowdowns", arr, oom);
    for (size_t i = 0; i < s->n_slowdowns && !*oom; i++) {
        const scn_slowdown *d = &s->slowdowns[i];
        if (!(g = scn_i_append_obj(arr, oom)))
            break;
        scn_i_add(g, "kind", json_string(kinds[d->kind]), oom);
        if (d->kind == CL_SLOW_TRACE) {
            scn_i_add(g, "file", json_string(d->file), oom);
            continue;
        }
        scn_i_add_nodes(g, d->nodes, d->n_nodes, d->fraction, oom);
        scn_i_add(g, "factor", json_real(d->factor), oom);
        if (d->kind == CL_SLOW_WINDOW) {
            scn_i_add(g, "start_s", json_real(d->start_s), oom);
            if (!isinf(d->end_s))
                scn_i_add(g, "end_s", json_real(d->end_s), oom);
        } else if (d->kind == CL_SLOW_MARKOV) {
            scn_i_add(g, "mean_slow_s", json_real(d->mean_slow_s), oom);
            scn_i_add(g, "mean_normal_s", json_real(d->mean_normal_s), oom);
        } else {
            scn_i_add(g, "period_s", json_real(d->period_s), oom);
            scn_i_add(g, "duration_s", json_real(d->duration_s), oom);
            scn_i_add(g, "phase_s", json_real(d->phase_s), oom);
        }
    }
}

void scn_i_resolved_faults(json_t *root, const scn_scenario *s, int *oom)
{
    const char *const *kinds = scn_i_fault_kind_names;
    json_t *o, *arr, *g;

    if (s->n_faults == 0)
        return;
    if (!(o = scn_i_section(root, "faults", oom)))
        return;
    scn_i_add(o, "step", json_string(scn_i_step_policy_names[s->fault_step]), oom);
    scn_i_add(o, "messages", json_string(scn_i_msg_policy_names[s->fault_messages]), oom);
    scn_i_add(o, "rejoin", json_string(scn_i_rejoin_names[s->fault_rejoin]), oom);
    if (s->fault_detect_s > 0)
        scn_i_add(o, "detect_s", json_real(s->fault_detect_s), oom);
    arr = json_array();
    scn_i_add(o, "events", arr, oom);
    for (size_t i = 0; i < s->n_faults && !*oom; i++) {
        const scn_fault *f = &s->faults[i];
        if (!(g = scn_i_append_obj(arr, oom)))
            break;
        scn_i_add(g, "kind", json_string(kinds[f->kind]), oom);
        if (f->kind == CL_FAULT_TRACE) {
            scn_i_add(g, "file", json_string(f->file), oom);
            continue;
        }
        scn_i_add_nodes(g, f->nodes, f->n_nodes, f->fraction, oom);
        if (f->kind == CL_FAULT_SCHEDULE) {
            scn_i_add(g, "down_s", json_real(f->down_s), oom);
            if (!isinf(f->up_s))
                scn_i_add(g, "up_s", json_real(f->up_s), oom);
        } else {
            scn_i_add(g, "mtbf_s", json_real(f->mtbf_s), oom);
            scn_i_add(g, "mttr_s", json_real(f->mttr_s), oom);
        }
    }
}

/* The keys of a link that differ from the default link (all of them for
 * the default link itself, except those at their defaults). */
static void add_link_props(json_t *o, const scn_link_props *p, int jitter, int loss,
                           int outages, int *oom)
{
    const char *const *dists = scn_i_jitter_names;
    if (jitter) {
        json_t *j = json_object();
        scn_i_add(o, "jitter", j, oom);
        if (*oom)
            return;
        scn_i_add(j, "dist", json_string(dists[p->jitter]), oom);
        if (p->jitter == CL_JITTER_UNIFORM) {
            scn_i_add(j, "low_s", json_real(p->jitter_a), oom);
            scn_i_add(j, "high_s", json_real(p->jitter_b), oom);
        } else if (p->jitter == CL_JITTER_EXPONENTIAL) {
            scn_i_add(j, "mean_s", json_real(p->jitter_a), oom);
        }
    }
    if (loss)
        scn_i_add(o, "loss", json_real(p->loss), oom);
    if (outages) {
        json_t *arr = json_array(), *w;
        scn_i_add(o, "outages", arr, oom);
        for (size_t k = 0; k < p->n_outages && !*oom; k++) {
            if (!(w = scn_i_append_obj(arr, oom)))
                break;
            scn_i_add(w, "start_s", json_real(p->outages[2 * k]), oom);
            scn_i_add(w, "end_s", json_real(p->outages[2 * k + 1]), oom);
        }
    }
}

static void add_list(json_t *o, const char *key, const int *nodes, size_t n,
                     const scn_servers *sv, int *oom)
{
    json_t *arr = json_array();
    scn_i_add(o, key, arr, oom);
    for (size_t j = 0; j < n && !*oom; j++)
        if (json_array_append_new(arr, json_integer(nodes[j])))
            *oom = 1;
    if (!*oom)
        scn_i_add_servers(arr, sv, oom);
}

void scn_i_add_servers(json_t *arr, const scn_servers *sv, int *oom)
{
    char name[32];
    if (sv->plain && json_array_append_new(arr, json_string("server")))
        *oom = 1;
    for (size_t k = 0; k < sv->n_ks && !*oom; k++) {
        snprintf(name, sizeof name, "server:%d", sv->ks[k]);
        if (json_array_append_new(arr, json_string(name)))
            *oom = 1;
    }
    if (sv->all && !*oom && json_array_append_new(arr, json_string("servers")))
        *oom = 1;
}

void scn_i_resolved_links(json_t *o, const scn_scenario *s, int *oom)
{
    json_t *arr, *g;

    add_link_props(o, &s->link, s->link.jitter != CL_JITTER_NONE, s->link.loss > 0,
                   s->link.n_outages > 0, oom);
    if (s->reorder)
        scn_i_add(o, "reorder", json_true(), oom);
    /* at its default left out, as the other rarely used keys */
    if (s->retransmit_timeout_s == 0) {
        scn_i_add(o, "retransmit", json_false(), oom);
    } else if (s->retransmit_timeout_s != 0.2 || s->retransmit_max != 15) {
        json_t *r = json_object();
        scn_i_add(o, "retransmit", r, oom);
        scn_i_add(r, "timeout_s", json_real(s->retransmit_timeout_s), oom);
        scn_i_add(r, "max_retries", json_integer(s->retransmit_max), oom);
    }
    if (s->n_links == 0)
        return;
    arr = json_array();
    scn_i_add(o, "links", arr, oom);
    for (size_t i = 0; i < s->n_links && !*oom; i++) {
        const scn_link *l = &s->links[i];
        if (!(g = scn_i_append_obj(arr, oom)))
            break;
        if (l->from)
            add_list(g, "from", l->from, l->n_from, &l->from_servers, oom);
        if (l->to)
            add_list(g, "to", l->to, l->n_to, &l->to_servers, oom);
        if (l->directed)
            scn_i_add(g, "directed", json_true(), oom);
        if (l->has_latency)
            scn_i_add(g, "latency_s", json_real(l->props.latency_s), oom);
        if (l->has_bandwidth)
            scn_i_add(g, "bandwidth_Bps", json_real(l->props.bandwidth_Bps), oom);
        add_link_props(g, &l->props, l->has_jitter, l->has_loss, l->has_outages, oom);
    }
}

void scn_i_resolved_nics(json_t *o, const scn_scenario *s, int *oom)
{
    json_t *arr, *g;

    /* at their defaults these keys are left out, so that scenarios that
     * do not use them resolve as they always did */
    if (s->compression_ratio != 1)
        scn_i_add(o, "compression_ratio", json_real(s->compression_ratio), oom);
    if (s->discipline != CL_NIC_FIFO)
        scn_i_add(o, "discipline", json_string(scn_i_discipline_names[s->discipline]), oom);
    if (s->up_Bps != s->bandwidth_Bps)
        scn_i_add(o, "up_Bps", json_real(s->up_Bps), oom);
    if (s->down_Bps != s->bandwidth_Bps)
        scn_i_add(o, "down_Bps", json_real(s->down_Bps), oom);
    if (s->n_nics == 0)
        return;
    arr = json_array();
    scn_i_add(o, "nics", arr, oom);
    for (size_t i = 0; i < s->n_nics && !*oom; i++) {
        const scn_nic *q = &s->nics[i];
        if (!(g = scn_i_append_obj(arr, oom)))
            break;
        if (q->servers.named)
            add_list(g, "nodes", q->nodes, q->n_nodes, &q->servers, oom);
        else
            scn_i_add_nodes(g, q->nodes, q->n_nodes, q->fraction, oom);
        if (q->up_Bps > 0)
            scn_i_add(g, "up_Bps", json_real(q->up_Bps), oom);
        if (q->down_Bps > 0)
            scn_i_add(g, "down_Bps", json_real(q->down_Bps), oom);
    }
}
