/* scn_resolved.c -- the resolved scenario (defaults filled, overrides
 * applied) for run.json: the tree of every section, its names written from
 * the same name lists the loader reads (the owners' and scn_names.c), as
 * canonical compact JSON text (scn_canon.c).  Loading the text again gives
 * the same text.  It validates nothing; the heterogeneity parts are
 * scn_resolved_hetero.c's.
 */
#include "scn_internal.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Sets obj[key] = v; a NULL v (allocation failure) makes the result NULL. */
void scn_i_add(json_t *obj, const char *key, json_t *v, int *oom)
{
    if (!v || json_object_set_new(obj, key, v))
        *oom = 1;
}

json_t *scn_i_section(json_t *root, const char *key, int *oom)
{
    json_t *o = json_object();
    scn_i_add(root, key, o, oom);
    return *oom ? NULL : o;
}

/* A node selection: the list, or the fraction it was drawn as; nothing
 * for every node. */
void scn_i_add_nodes(json_t *o, const int *nodes, size_t n, double fraction, int *oom)
{
    if (fraction > 0) {
        scn_i_add(o, "fraction", json_real(fraction), oom);
        return;
    }
    if (!nodes)
        return;
    json_t *arr = json_array();
    scn_i_add(o, "nodes", arr, oom);
    for (size_t j = 0; j < n && !*oom; j++)
        if (json_array_append_new(arr, json_integer(nodes[j])))
            *oom = 1;
}

/* Appends a new object to arr; NULL (and *oom) on failure. */
json_t *scn_i_append_obj(json_t *arr, int *oom)
{
    json_t *g = json_object();
    if (json_array_append_new(arr, g)) {   /* takes g, even NULL */
        *oom = 1;
        return NULL;
    }
    return g;
}

static json_t *resolved_tree(const scn_scenario *s, int *oom)
{
    json_t *root = json_object(), *o, *groups, *g, *arr;
    cl_noise_spec top = { s->noise, s->noise_low, s->noise_high, s->noise_sigma,
                           s->noise_floor, s->noise_shift, s->noise_shape, s->noise_alpha };

    if (!root) {
        *oom = 1;
        return NULL;
    }
    scn_i_add(root, "seed", json_integer((json_int_t)s->seed), oom);
    scn_i_add(root, "nodes", json_integer(s->n_nodes), oom);

    if (!(o = scn_i_section(root, "compute", oom)))
        return root;
    if (s->flops_per_s > 0)
        scn_i_add(o, "flops_per_s", json_real(s->flops_per_s), oom);
    else
        scn_i_add(o, "step_time_s", json_real(s->step_time_s), oom);
    if (s->memory_bytes > 0)
        scn_i_add(o, "memory_bytes", json_real(s->memory_bytes), oom);
    scn_i_add(o, "noise", scn_i_resolved_noise(&top), oom);
    if (*oom)
        return root;
    groups = json_array();
    scn_i_add(o, "groups", groups, oom);
    for (size_t i = 0; i < s->n_groups && !*oom; i++) {
        const scn_group *gr = &s->groups[i];
        if (!(g = scn_i_append_obj(groups, oom)))
            break;
        scn_i_add_nodes(g, gr->nodes, gr->n_nodes, gr->fraction, oom);
        if (gr->slowdown > 0)
            scn_i_add(g, "slowdown", json_real(gr->slowdown), oom);
        if (gr->step_time_s > 0)
            scn_i_add(g, "step_time_s", json_real(gr->step_time_s), oom);
        if (gr->flops_per_s > 0)
            scn_i_add(g, "flops_per_s", json_real(gr->flops_per_s), oom);
        if (gr->has_noise)
            scn_i_add(g, "noise", scn_i_resolved_noise(&gr->noise), oom);
        if (gr->memory_bytes > 0)
            scn_i_add(g, "memory_bytes", json_real(gr->memory_bytes), oom);
    }
    scn_i_resolved_slowdowns(o, s, oom);
    scn_i_resolved_faults(root, s, oom);

    if (!(o = scn_i_section(root, "network", oom)))
        return root;
    scn_i_add(o, "latency_s", json_real(s->latency_s), oom);
    scn_i_add(o, "bandwidth_Bps", json_real(s->bandwidth_Bps), oom);
    scn_i_add(o, "bytes_per_param", json_real(s->bytes_per_param), oom);
    scn_i_resolved_nics(o, s, oom);
    scn_i_resolved_links(o, s, oom);

    if (!(o = scn_i_section(root, "topology", oom)))
        return root;
    scn_i_add(o, "kind", json_string(topo_kind_name_list[s->topo_kind]), oom);
    switch (s->topo_kind) {
    case TOPO_TORUS2D:
        scn_i_add(o, "rows", json_integer(s->topo_rows), oom);
        scn_i_add(o, "cols", json_integer(s->topo_cols), oom);
        break;
    case TOPO_ERDOS_RENYI:
        scn_i_add(o, "p", json_real(s->topo_p), oom);
        break;
    case TOPO_RANDOM_REGULAR:
        scn_i_add(o, "degree", json_integer(s->topo_degree), oom);
        break;
    case TOPO_TORUS3D:
        scn_i_add(o, "rows", json_integer(s->topo_rows), oom);
        scn_i_add(o, "cols", json_integer(s->topo_cols), oom);
        scn_i_add(o, "layers", json_integer(s->topo_layers), oom);
        break;
    case TOPO_RING_LATTICE:
        scn_i_add(o, "k", json_integer(s->topo_k), oom);
        break;
    case TOPO_WATTS_STROGATZ:
        scn_i_add(o, "k", json_integer(s->topo_k), oom);
        scn_i_add(o, "beta", json_real(s->topo_beta), oom);
        break;
    case TOPO_BARABASI_ALBERT:
        scn_i_add(o, "m", json_integer(s->topo_m), oom);
        break;
    case TOPO_EDGE_LIST:
        scn_i_add(o, "file", json_string(s->topo_file), oom);
        break;
    case TOPO_LEARNED:
        scn_i_add(o, "degree", json_integer(s->topo_degree), oom);
        scn_i_add(o, "lambda", json_real(s->topo_lambda), oom);
        break;
    default:
        break;
    }
    if (s->topo_kind != TOPO_LEARNED) {   /* a learned W has its own weights */
        scn_i_add(o, "mixing", json_string(topo_mixing_name_list[s->topo_mixing]), oom);
        scn_i_add(o, "lazy_alpha", json_real(s->topo_lazy_alpha), oom);
    }

    if (!(o = scn_i_section(root, "model", oom)))
        return root;
    scn_i_add(o, "kind", json_string(s->model_type ? s->model_type->name : "none"), oom);
    if (!s->model_type) {
        /* the size as given: a profile, params, or message_bytes (a profile
         * implies its FLOPs, which are then not repeated) */
        if (s->model_profile)
            scn_i_add(o, "profile", json_string(s->model_profile), oom);
        else if (s->model_params > 0)
            scn_i_add(o, "params", json_integer((json_int_t)s->model_params), oom);
        else
            scn_i_add(o, "message_bytes", json_real(s->model_message_bytes), oom);
        if (s->model_flops_per_sample > 0 && !s->model_profile)
            scn_i_add(o, "flops_per_sample", json_real(s->model_flops_per_sample), oom);
    } else {
        scn_i_add(o, "l2", json_real(s->l2), oom);
        if (s->model_type == &mdl_linear || s->model_type == &mdl_logistic)
            scn_i_add(o, "bias", json_boolean(s->model_bias), oom);
    }
    if (s->model_n_hidden > 0) {
        arr = json_array();
        scn_i_add(o, "hidden", arr, oom);
        for (size_t i = 0; i < s->model_n_hidden && !*oom; i++)
            if (json_array_append_new(arr, json_integer((json_int_t)s->model_hidden[i])))
                *oom = 1;
        scn_i_add(o, "activation", json_string(mdl_activation_name_list[s->model_activation]), oom);
    }

    /* model "none" reads no data: no data section */
    if (s->model_type) {
        if (!(o = scn_i_section(root, "data", oom)))
            return root;
        if (s->has_data_seed)
            scn_i_add(o, "seed", json_integer((json_int_t)s->data_seed), oom);
        scn_i_add(o, "kind", json_string(scn_i_data_kind_names[s->data_source]), oom);
        scn_i_add(o, "train", json_integer((json_int_t)s->data_train), oom);
        scn_i_add(o, "test", json_integer((json_int_t)s->data_test), oom);
        const scn_data_kind dk = s->data_source;
        if (dk == SCN_DATA_SYNTHETIC) {
            scn_i_add(o, "features", json_integer((json_int_t)s->data_features), oom);
            scn_i_add(o, "classes", json_integer(s->data_classes), oom);
            scn_i_add(o, "separation", json_real(s->data_separation), oom);
        } else if (dk == SCN_DATA_SYNTH_LOGISTIC) {
            scn_i_add(o, "features", json_integer((json_int_t)s->data_features), oom);
            scn_i_add(o, "separation", json_real(s->data_separation), oom);
        } else if (dk == SCN_DATA_SYNTH_REGRESSION) {
            scn_i_add(o, "features", json_integer((json_int_t)s->data_features), oom);
            scn_i_add(o, "noise", json_real(s->data_noise), oom);
        } else if (dk == SCN_DATA_IDX) {
            scn_i_add(o, "train_images", json_string(s->data_train_images), oom);
            scn_i_add(o, "train_labels", json_string(s->data_train_labels), oom);
            scn_i_add(o, "test_images", json_string(s->data_test_images), oom);
            scn_i_add(o, "test_labels", json_string(s->data_test_labels), oom);
        } else if (dk == SCN_DATA_FASHION_MNIST) {
            scn_i_add(o, "dir", json_string(s->data_dir), oom);
        } else {
            scn_i_add(o, "train_file", json_string(s->data_train_file), oom);
            if (s->data_test_file)
                scn_i_add(o, "test_file", json_string(s->data_test_file), oom);
            else
                scn_i_add(o, "test_fraction", json_real(s->data_test_fraction), oom);
            if (dk == SCN_DATA_LIBSVM) {
                scn_i_add(o, "features", json_integer((json_int_t)s->data_features), oom);
            } else {
                scn_i_add(o, "label_column", json_integer(s->data_label_column), oom);
                scn_i_add(o, "header", json_boolean(s->data_header), oom);
            }
        }
        scn_i_add(o, "scale", json_string(mdl_scale_name_list[s->data_scale]), oom);
        scn_i_add(o, "partition", json_string(mdl_partition_kind_name_list[s->partition_kind]), oom);
        if (s->partition_kind == MDL_PART_DIRICHLET)
            scn_i_add(o, "alpha", json_real(s->partition_alpha), oom);
        else if (s->partition_kind == MDL_PART_SHARDS)
            scn_i_add(o, "shards_per_node", json_integer(s->partition_shards), oom);
        else if (s->partition_kind == MDL_PART_QUANTITY)
            scn_i_add(o, "exponent", json_real(s->partition_exponent), oom);
    }

    if (!(o = scn_i_section(root, "algorithm", oom)))
        return root;
    scn_i_add(o, "name", json_string(s->algorithm), oom);
    scn_i_add(o, "lr", json_real(s->lr), oom);
    scn_i_add(o, "batch", json_integer((json_int_t)s->batch), oom);
    for (size_t i = 0; i < s->n_alg_params; i++) {
        const scn_param *q = &s->alg_params[i];
        if (q->is_string)
            scn_i_add(o, q->key, json_string(q->str), oom);
        else if (q->num == floor(q->num) && fabs(q->num) < 0x1p53)
            scn_i_add(o, q->key, json_integer((json_int_t)q->num), oom);
        else
            scn_i_add(o, q->key, json_real(q->num), oom);
    }

    if (!(o = scn_i_section(root, "optimizer", oom)))
        return root;
    scn_i_add(o, "momentum", json_real(s->opt_momentum), oom);
    scn_i_add(o, "nesterov", json_boolean(s->opt_nesterov), oom);
    scn_i_add(o, "weight_decay", json_real(s->opt_weight_decay), oom);
    scn_i_add(o, "schedule", json_string(mdl_schedule_name_list[s->opt_schedule]), oom);
    if (s->opt_schedule == MDL_SCHED_STEP) {
        scn_i_add(o, "step_every", json_integer(s->opt_step_every), oom);
        scn_i_add(o, "gamma", json_real(s->opt_step_gamma), oom);
    } else if (s->opt_schedule == MDL_SCHED_COSINE) {
        scn_i_add(o, "total_steps", json_integer(s->opt_total_steps), oom);
        scn_i_add(o, "lr_min", json_real(s->opt_lr_min), oom);
    }
    scn_i_add(o, "warmup_steps", json_integer(s->opt_warmup_steps), oom);

    if (!(o = scn_i_section(root, "stop", oom)))
        return root;
    if (!isinf(s->stop_time_s))
        scn_i_add(o, "time_s", json_real(s->stop_time_s), oom);
    if (s->stop_steps > 0)
        scn_i_add(o, "steps", json_integer(s->stop_steps), oom);
    if (!isnan(s->stop_target_loss))
        scn_i_add(o, "target_loss", json_real(s->stop_target_loss), oom);
    if (!isnan(s->stop_target_accuracy))
        scn_i_add(o, "target_accuracy", json_real(s->stop_target_accuracy), oom);

    if (!(o = scn_i_section(root, "metrics", oom)))
        return root;
    scn_i_add(o, "every_s", json_real(s->metrics_every_s), oom);
    scn_i_add(o, "eval_samples", json_integer((json_int_t)s->metrics_eval_samples), oom);
    scn_i_add(o, "test_samples", json_integer((json_int_t)s->metrics_test_samples), oom);
    scn_i_add(o, "per_node", json_boolean(s->metrics_per_node), oom);
    /* only when given, so scenarios without targets resolve as before */
    if (s->metrics_n_targets > 0) {
        json_t *a = json_array();
        scn_i_add(o, "targets", a, oom);
        for (size_t i = 0; a && i < s->metrics_n_targets; i++) {
            json_t *t = json_object();
            if (!t || json_array_append_new(a, t)) {
                *oom = 1;
                break;
            }
            scn_i_add(t, "metric",
                      json_string(scn_target_metric_names[s->metrics_targets[i].metric]), oom);
            scn_i_add(t, "value", json_real(s->metrics_targets[i].value), oom);
        }
    }
    if (s->metrics_target_snapshots > 0)
        scn_i_add(o, "target_snapshots", json_integer(s->metrics_target_snapshots), oom);

    if (s->output_trace || s->output_topology_full) {
        if (!(o = scn_i_section(root, "output", oom)))
            return root;
        if (s->output_trace)
            scn_i_add(o, "trace", json_true(), oom);
        if (s->output_topology_full)
            scn_i_add(o, "topology_stats", json_string("full"), oom);
    }
    /* only when given: the default limit is the machine's, not the run's */
    if (s->limit_memory_bytes > 0 || !s->limit_check_memory || s->limit_events > 0
        || !s->limit_check_events) {
        if (!(o = scn_i_section(root, "limits", oom)))
            return root;
        if (s->limit_memory_bytes > 0)
            scn_i_add(o, "memory_bytes", json_real(s->limit_memory_bytes), oom);
        if (!s->limit_check_memory)
            scn_i_add(o, "check_memory", json_false(), oom);
        if (s->limit_events > 0)
            scn_i_add(o, "events", json_real(s->limit_events), oom);
        if (!s->limit_check_events)
            scn_i_add(o, "check_events", json_false(), oom);
    }
    scn_i_resolved_freeze(root, s, oom);
    return root;
}

int scn_i_resolve(scn_ctx *c, scn_scenario *s)
{
    int oom = 0;
    json_t *tree = resolved_tree(s, &oom);
    char *text = oom ? NULL : scn_i_canonical(tree);

    json_decref(tree);
    if (!text)
        return scn_i_fail_oom(c);
    s->resolved_json = text;
    return 0;
}
