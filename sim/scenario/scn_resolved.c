/* scn_resolved.c -- the resolved scenario (defaults filled, overrides
 * applied) as canonical compact JSON with sorted keys and numbers in their
 * shortest exact form (written by sim/output's JSON writer), for run.json.
 * Loading the text again gives the same text.  It validates nothing.
 */
#include "scn_internal.h"
#include "out.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- resolved scenario -------------------------------------------------- */

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* Compact JSON with keys sorted bytewise (like JSON_SORT_KEYS), written
 * by sim/output's JSON writer. */
static void dump(out_json *j, const char *key, json_t *v, int *oom)
{
    switch (json_typeof(v)) {
    case JSON_OBJECT: {
        size_t n = json_object_size(v), i = 0;
        const char **keys = malloc((n ? n : 1) * sizeof *keys);
        const char *k;
        json_t *x;
        if (!keys) {
            *oom = 1;
            return;
        }
        json_object_foreach(v, k, x)
            keys[i++] = k;
        qsort(keys, n, sizeof *keys, cmp_str);
        out_json_begin_object(j, key);
        for (i = 0; i < n; i++)
            dump(j, keys[i], json_object_get(v, keys[i]), oom);
        out_json_end_object(j);
        free(keys);
        break;
    }
    case JSON_ARRAY: {
        size_t i;
        json_t *x;
        out_json_begin_array(j, key);
        json_array_foreach(v, i, x)
            dump(j, NULL, x, oom);
        out_json_end_array(j);
        break;
    }
    case JSON_STRING:
        out_json_string(j, key, json_string_value(v));
        break;
    case JSON_INTEGER:
        out_json_int(j, key, (int64_t)json_integer_value(v));
        break;
    case JSON_REAL:
        out_json_real(j, key, json_real_value(v));
        break;
    case JSON_TRUE:
    case JSON_FALSE:
        out_json_bool(j, key, json_is_true(v));
        break;
    default:
        out_json_raw(j, key, "null");
        break;
    }
}

/* Sets obj[key] = v; a NULL v (allocation failure) makes the result NULL. */
static void add(json_t *obj, const char *key, json_t *v, int *oom)
{
    if (!v || json_object_set_new(obj, key, v))
        *oom = 1;
}

static json_t *section(json_t *root, const char *key, int *oom)
{
    json_t *o = json_object();
    add(root, key, o, oom);
    return *oom ? NULL : o;
}

json_t *scn_i_resolved_noise(const scn_noise_spec *ns)
{
    static const char *const dists[] = {"constant", "uniform", "exponential", "lognormal",
                                        "normal", "shifted_exponential", "gamma", "pareto"};
    json_t *g = json_object();
    int oom = 0;

    if (!g)
        return NULL;
    add(g, "dist", json_string(dists[ns->dist]), &oom);
    switch (ns->dist) {
    case SCN_NOISE_UNIFORM:
        add(g, "low", json_real(ns->low), &oom);
        add(g, "high", json_real(ns->high), &oom);
        break;
    case SCN_NOISE_LOGNORMAL:
        add(g, "sigma", json_real(ns->sigma), &oom);
        break;
    case SCN_NOISE_NORMAL:
        add(g, "sigma", json_real(ns->sigma), &oom);
        add(g, "floor", json_real(ns->floor), &oom);
        break;
    case SCN_NOISE_SHIFTED_EXPONENTIAL:
        add(g, "shift", json_real(ns->shift), &oom);
        break;
    case SCN_NOISE_GAMMA:
        add(g, "shape", json_real(ns->shape), &oom);
        break;
    case SCN_NOISE_PARETO:
        add(g, "alpha", json_real(ns->alpha), &oom);
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

/* A node selection: the list, or the fraction it was drawn as; nothing
 * for every node. */
static void add_nodes(json_t *o, const int *nodes, size_t n, double fraction, int *oom)
{
    if (fraction > 0) {
        add(o, "fraction", json_real(fraction), oom);
        return;
    }
    if (!nodes)
        return;
    json_t *arr = json_array();
    add(o, "nodes", arr, oom);
    for (size_t j = 0; j < n && !*oom; j++)
        if (json_array_append_new(arr, json_integer(nodes[j])))
            *oom = 1;
}

/* Appends a new object to arr; NULL (and *oom) on failure. */
static json_t *append_obj(json_t *arr, int *oom)
{
    json_t *g = json_object();
    if (json_array_append_new(arr, g)) {   /* takes g, even NULL */
        *oom = 1;
        return NULL;
    }
    return g;
}

static void resolved_hetero_compute(json_t *o, const scn_scenario *s, int *oom)
{
    json_t *arr, *g;

    if (s->n_slowdowns == 0)
        return;
    static const char *const kinds[] = {"window", "markov", "periodic", "trace"};
    arr = json_array();
    add(o, "slowdowns", arr, oom);
    for (size_t i = 0; i < s->n_slowdowns && !*oom; i++) {
        const scn_slowdown *d = &s->slowdowns[i];
        if (!(g = append_obj(arr, oom)))
            break;
        add(g, "kind", json_string(kinds[d->kind]), oom);
        if (d->kind == SCN_SLOW_TRACE) {
            add(g, "file", json_string(d->file), oom);
            continue;
        }
        add_nodes(g, d->nodes, d->n_nodes, d->fraction, oom);
        add(g, "factor", json_real(d->factor), oom);
        if (d->kind == SCN_SLOW_WINDOW) {
            add(g, "start_s", json_real(d->start_s), oom);
            if (!isinf(d->end_s))
                add(g, "end_s", json_real(d->end_s), oom);
        } else if (d->kind == SCN_SLOW_MARKOV) {
            add(g, "mean_slow_s", json_real(d->mean_slow_s), oom);
            add(g, "mean_normal_s", json_real(d->mean_normal_s), oom);
        } else {
            add(g, "period_s", json_real(d->period_s), oom);
            add(g, "duration_s", json_real(d->duration_s), oom);
            add(g, "phase_s", json_real(d->phase_s), oom);
        }
    }
}

static void resolved_faults(json_t *root, const scn_scenario *s, int *oom)
{
    static const char *const kinds[] = {"schedule", "exponential", "trace"};
    json_t *o, *arr, *g;

    if (s->n_faults == 0)
        return;
    if (!(o = section(root, "faults", oom)))
        return;
    add(o, "step", json_string(s->fault_step), oom);
    add(o, "messages", json_string(s->fault_messages), oom);
    add(o, "rejoin", json_string(s->fault_rejoin), oom);
    arr = json_array();
    add(o, "events", arr, oom);
    for (size_t i = 0; i < s->n_faults && !*oom; i++) {
        const scn_fault *f = &s->faults[i];
        if (!(g = append_obj(arr, oom)))
            break;
        add(g, "kind", json_string(kinds[f->kind]), oom);
        if (f->kind == SCN_FAULT_TRACE) {
            add(g, "file", json_string(f->file), oom);
            continue;
        }
        add_nodes(g, f->nodes, f->n_nodes, f->fraction, oom);
        if (f->kind == SCN_FAULT_SCHEDULE) {
            add(g, "down_s", json_real(f->down_s), oom);
            if (!isinf(f->up_s))
                add(g, "up_s", json_real(f->up_s), oom);
        } else {
            add(g, "mtbf_s", json_real(f->mtbf_s), oom);
            add(g, "mttr_s", json_real(f->mttr_s), oom);
        }
    }
}

/* The keys of a link that differ from the default link (all of them for
 * the default link itself, except those at their defaults). */
static void add_link_props(json_t *o, const scn_link_props *p, int jitter, int loss,
                           int outages, int *oom)
{
    static const char *const dists[] = {"none", "uniform", "exponential"};
    if (jitter) {
        json_t *j = json_object();
        add(o, "jitter", j, oom);
        if (*oom)
            return;
        add(j, "dist", json_string(dists[p->jitter]), oom);
        if (p->jitter == SCN_JITTER_UNIFORM) {
            add(j, "low_s", json_real(p->jitter_a), oom);
            add(j, "high_s", json_real(p->jitter_b), oom);
        } else if (p->jitter == SCN_JITTER_EXPONENTIAL) {
            add(j, "mean_s", json_real(p->jitter_a), oom);
        }
    }
    if (loss)
        add(o, "loss", json_real(p->loss), oom);
    if (outages) {
        json_t *arr = json_array(), *w;
        add(o, "outages", arr, oom);
        for (size_t k = 0; k < p->n_outages && !*oom; k++) {
            if (!(w = append_obj(arr, oom)))
                break;
            add(w, "start_s", json_real(p->outages[2 * k]), oom);
            add(w, "end_s", json_real(p->outages[2 * k + 1]), oom);
        }
    }
}

static void add_list(json_t *o, const char *key, const int *nodes, size_t n, int *oom)
{
    json_t *arr = json_array();
    add(o, key, arr, oom);
    for (size_t j = 0; j < n && !*oom; j++)
        if (json_array_append_new(arr, json_integer(nodes[j])))
            *oom = 1;
}

static void resolved_links(json_t *o, const scn_scenario *s, int *oom)
{
    json_t *arr, *g;

    add_link_props(o, &s->link, s->link.jitter != SCN_JITTER_NONE, s->link.loss > 0,
                   s->link.n_outages > 0, oom);
    if (s->reorder)
        add(o, "reorder", json_true(), oom);
    if (s->n_links == 0)
        return;
    arr = json_array();
    add(o, "links", arr, oom);
    for (size_t i = 0; i < s->n_links && !*oom; i++) {
        const scn_link *l = &s->links[i];
        if (!(g = append_obj(arr, oom)))
            break;
        if (l->from)
            add_list(g, "from", l->from, l->n_from, oom);
        if (l->to)
            add_list(g, "to", l->to, l->n_to, oom);
        if (l->directed)
            add(g, "directed", json_true(), oom);
        if (l->has_latency)
            add(g, "latency_s", json_real(l->props.latency_s), oom);
        if (l->has_bandwidth)
            add(g, "bandwidth_Bps", json_real(l->props.bandwidth_Bps), oom);
        add_link_props(g, &l->props, l->has_jitter, l->has_loss, l->has_outages, oom);
    }
}

static void resolved_nics(json_t *o, const scn_scenario *s, int *oom)
{
    json_t *arr, *g;

    /* at their defaults these keys are left out, so that scenarios that
     * do not use them resolve as they always did */
    if (s->compression_ratio != 1)
        add(o, "compression_ratio", json_real(s->compression_ratio), oom);
    if (strcmp(s->discipline, "fifo") != 0)
        add(o, "discipline", json_string(s->discipline), oom);
    if (s->up_Bps != s->bandwidth_Bps)
        add(o, "up_Bps", json_real(s->up_Bps), oom);
    if (s->down_Bps != s->bandwidth_Bps)
        add(o, "down_Bps", json_real(s->down_Bps), oom);
    if (s->n_nics == 0)
        return;
    arr = json_array();
    add(o, "nics", arr, oom);
    for (size_t i = 0; i < s->n_nics && !*oom; i++) {
        const scn_nic *q = &s->nics[i];
        if (!(g = append_obj(arr, oom)))
            break;
        add_nodes(g, q->nodes, q->n_nodes, q->fraction, oom);
        if (q->up_Bps > 0)
            add(g, "up_Bps", json_real(q->up_Bps), oom);
        if (q->down_Bps > 0)
            add(g, "down_Bps", json_real(q->down_Bps), oom);
    }
}

static json_t *resolved_tree(const scn_scenario *s, int *oom)
{
    json_t *root = json_object(), *o, *groups, *g, *arr;
    scn_noise_spec top = { s->noise, s->noise_low, s->noise_high, s->noise_sigma,
                           s->noise_floor, s->noise_shift, s->noise_shape, s->noise_alpha };

    if (!root) {
        *oom = 1;
        return NULL;
    }
    add(root, "seed", json_integer((json_int_t)s->seed), oom);
    add(root, "nodes", json_integer(s->n_nodes), oom);

    if (!(o = section(root, "compute", oom)))
        return root;
    if (s->flops_per_s > 0)
        add(o, "flops_per_s", json_real(s->flops_per_s), oom);
    else
        add(o, "step_time_s", json_real(s->step_time_s), oom);
    add(o, "noise", scn_i_resolved_noise(&top), oom);
    if (*oom)
        return root;
    groups = json_array();
    add(o, "groups", groups, oom);
    for (size_t i = 0; i < s->n_groups && !*oom; i++) {
        const scn_group *gr = &s->groups[i];
        if (!(g = append_obj(groups, oom)))
            break;
        add_nodes(g, gr->nodes, gr->n_nodes, gr->fraction, oom);
        if (gr->slowdown > 0)
            add(g, "slowdown", json_real(gr->slowdown), oom);
        if (gr->step_time_s > 0)
            add(g, "step_time_s", json_real(gr->step_time_s), oom);
        if (gr->flops_per_s > 0)
            add(g, "flops_per_s", json_real(gr->flops_per_s), oom);
        if (gr->has_noise)
            add(g, "noise", scn_i_resolved_noise(&gr->noise), oom);
    }
    resolved_hetero_compute(o, s, oom);
    resolved_faults(root, s, oom);

    if (!(o = section(root, "network", oom)))
        return root;
    add(o, "latency_s", json_real(s->latency_s), oom);
    add(o, "bandwidth_Bps", json_real(s->bandwidth_Bps), oom);
    add(o, "bytes_per_param", json_real(s->bytes_per_param), oom);
    resolved_nics(o, s, oom);
    resolved_links(o, s, oom);

    if (!(o = section(root, "topology", oom)))
        return root;
    add(o, "kind", json_string(s->topology), oom);
    if (strcmp(s->topology, "torus2d") == 0) {
        add(o, "rows", json_integer(s->topo_rows), oom);
        add(o, "cols", json_integer(s->topo_cols), oom);
    } else if (strcmp(s->topology, "erdos_renyi") == 0) {
        add(o, "p", json_real(s->topo_p), oom);
    } else if (strcmp(s->topology, "random_regular") == 0) {
        add(o, "degree", json_integer(s->topo_degree), oom);
    } else if (strcmp(s->topology, "torus3d") == 0) {
        add(o, "rows", json_integer(s->topo_rows), oom);
        add(o, "cols", json_integer(s->topo_cols), oom);
        add(o, "layers", json_integer(s->topo_layers), oom);
    } else if (strcmp(s->topology, "ring_lattice") == 0) {
        add(o, "k", json_integer(s->topo_k), oom);
    } else if (strcmp(s->topology, "watts_strogatz") == 0) {
        add(o, "k", json_integer(s->topo_k), oom);
        add(o, "beta", json_real(s->topo_beta), oom);
    } else if (strcmp(s->topology, "barabasi_albert") == 0) {
        add(o, "m", json_integer(s->topo_m), oom);
    } else if (strcmp(s->topology, "edge_list") == 0) {
        add(o, "file", json_string(s->topo_file), oom);
    }
    add(o, "mixing", json_string(s->topo_mixing), oom);
    add(o, "lazy_alpha", json_real(s->topo_lazy_alpha), oom);

    if (!(o = section(root, "model", oom)))
        return root;
    add(o, "kind", json_string(s->model), oom);
    if (strcmp(s->model, "none") == 0)
        add(o, "message_bytes", json_real(s->model_message_bytes), oom);
    else
        add(o, "l2", json_real(s->l2), oom);
    if (s->model_n_hidden > 0) {
        static const char *const acts[] = {"relu", "tanh"};
        arr = json_array();
        add(o, "hidden", arr, oom);
        for (size_t i = 0; i < s->model_n_hidden && !*oom; i++)
            if (json_array_append_new(arr, json_integer((json_int_t)s->model_hidden[i])))
                *oom = 1;
        add(o, "activation", json_string(acts[s->model_activation]), oom);
    }

    /* model "none" reads no data: no data section */
    if (strcmp(s->model, "none") != 0) {
        if (!(o = section(root, "data", oom)))
            return root;
        static const char *const scales[] = {"none", "minmax", "standard"};
        if (s->has_data_seed)
            add(o, "seed", json_integer((json_int_t)s->data_seed), oom);
        add(o, "kind", json_string(s->data_kind), oom);
        add(o, "train", json_integer((json_int_t)s->data_train), oom);
        add(o, "test", json_integer((json_int_t)s->data_test), oom);
        if (strcmp(s->data_kind, "synthetic") == 0) {
            add(o, "features", json_integer((json_int_t)s->data_features), oom);
            add(o, "classes", json_integer(s->data_classes), oom);
            add(o, "separation", json_real(s->data_separation), oom);
        } else if (strcmp(s->data_kind, "synthetic-logistic") == 0) {
            add(o, "features", json_integer((json_int_t)s->data_features), oom);
            add(o, "separation", json_real(s->data_separation), oom);
        } else if (strcmp(s->data_kind, "synthetic-regression") == 0) {
            add(o, "features", json_integer((json_int_t)s->data_features), oom);
            add(o, "noise", json_real(s->data_noise), oom);
        } else if (strcmp(s->data_kind, "idx") == 0) {
            add(o, "train_images", json_string(s->data_train_images), oom);
            add(o, "train_labels", json_string(s->data_train_labels), oom);
            add(o, "test_images", json_string(s->data_test_images), oom);
            add(o, "test_labels", json_string(s->data_test_labels), oom);
        } else if (strcmp(s->data_kind, "fashion-mnist") == 0) {
            add(o, "dir", json_string(s->data_dir), oom);
        } else {
            add(o, "train_file", json_string(s->data_train_file), oom);
            if (s->data_test_file)
                add(o, "test_file", json_string(s->data_test_file), oom);
            else
                add(o, "test_fraction", json_real(s->data_test_fraction), oom);
            if (strcmp(s->data_kind, "libsvm") == 0) {
                add(o, "features", json_integer((json_int_t)s->data_features), oom);
            } else {
                add(o, "label_column", json_integer(s->data_label_column), oom);
                add(o, "header", json_boolean(s->data_header), oom);
            }
        }
        add(o, "scale", json_string(scales[s->data_scale]), oom);
        add(o, "partition", json_string(s->partition), oom);
        if (strcmp(s->partition, "dirichlet") == 0)
            add(o, "alpha", json_real(s->partition_alpha), oom);
        else if (strcmp(s->partition, "shards") == 0)
            add(o, "shards_per_node", json_integer(s->partition_shards), oom);
        else if (strcmp(s->partition, "quantity") == 0)
            add(o, "exponent", json_real(s->partition_exponent), oom);
    }

    if (!(o = section(root, "algorithm", oom)))
        return root;
    add(o, "name", json_string(s->algorithm), oom);
    add(o, "lr", json_real(s->lr), oom);
    add(o, "batch", json_integer((json_int_t)s->batch), oom);
    for (size_t i = 0; i < s->n_alg_params; i++) {
        const scn_param *q = &s->alg_params[i];
        if (q->is_string)
            add(o, q->key, json_string(q->str), oom);
        else if (q->num == floor(q->num) && fabs(q->num) < 0x1p53)
            add(o, q->key, json_integer((json_int_t)q->num), oom);
        else
            add(o, q->key, json_real(q->num), oom);
    }

    if (!(o = section(root, "optimizer", oom)))
        return root;
    add(o, "momentum", json_real(s->opt_momentum), oom);
    add(o, "nesterov", json_boolean(s->opt_nesterov), oom);
    add(o, "weight_decay", json_real(s->opt_weight_decay), oom);
    add(o, "schedule", json_string(s->opt_schedule), oom);
    if (strcmp(s->opt_schedule, "step") == 0) {
        add(o, "step_every", json_integer(s->opt_step_every), oom);
        add(o, "gamma", json_real(s->opt_step_gamma), oom);
    } else if (strcmp(s->opt_schedule, "cosine") == 0) {
        add(o, "total_steps", json_integer(s->opt_total_steps), oom);
        add(o, "lr_min", json_real(s->opt_lr_min), oom);
    }
    add(o, "warmup_steps", json_integer(s->opt_warmup_steps), oom);

    if (!(o = section(root, "stop", oom)))
        return root;
    if (!isinf(s->stop_time_s))
        add(o, "time_s", json_real(s->stop_time_s), oom);
    if (s->stop_steps > 0)
        add(o, "steps", json_integer(s->stop_steps), oom);
    if (!isnan(s->stop_target_loss))
        add(o, "target_loss", json_real(s->stop_target_loss), oom);
    if (!isnan(s->stop_target_accuracy))
        add(o, "target_accuracy", json_real(s->stop_target_accuracy), oom);

    if (!(o = section(root, "metrics", oom)))
        return root;
    add(o, "every_s", json_real(s->metrics_every_s), oom);
    add(o, "eval_samples", json_integer((json_int_t)s->metrics_eval_samples), oom);
    add(o, "test_samples", json_integer((json_int_t)s->metrics_test_samples), oom);
    add(o, "per_node", json_boolean(s->metrics_per_node), oom);

    if (s->output_trace) {
        if (!(o = section(root, "output", oom)))
            return root;
        add(o, "trace", json_true(), oom);
    }
    /* only when given: the default limit is the machine's, not the run's */
    if (s->limit_memory_bytes > 0 || !s->limit_check_memory) {
        if (!(o = section(root, "limits", oom)))
            return root;
        if (s->limit_memory_bytes > 0)
            add(o, "memory_bytes", json_real(s->limit_memory_bytes), oom);
        if (!s->limit_check_memory)
            add(o, "check_memory", json_false(), oom);
    }
    return root;
}

int scn_i_resolve(scn_ctx *c, scn_scenario *s)
{
    int oom = 0;
    json_t *tree = resolved_tree(s, &oom);
    char *text = NULL;
    size_t len = 0;
    FILE *f = oom ? NULL : open_memstream(&text, &len);

    if (f) {
        out_json j;
        out_json_init_compact(&j, f);
        dump(&j, NULL, tree, &oom);
        if (ferror(f))
            oom = 1;
        if (fclose(f) != 0)
            oom = 1;
    } else {
        oom = 1;
    }
    json_decref(tree);
    if (oom) {
        free(text);
        return scn_i_fail_oom(c);
    }
    s->resolved_json = text;
    return 0;
}
