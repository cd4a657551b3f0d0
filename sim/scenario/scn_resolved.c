/* scn_resolved.c -- the resolved scenario (defaults filled, overrides
 * applied) as canonical compact JSON with sorted keys and numbers in their
 * shortest exact form, for run.json.  Loading the text again gives the
 * same text.  It validates nothing.
 */
#include "scn_internal.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- resolved scenario -------------------------------------------------- */

typedef struct buf {
    char  *p;
    size_t len, cap;
    int    oom;
} buf;

static void put(buf *b, const char *s, size_t n)
{
    if (b->oom)
        return;
    if (b->len + n + 1 > b->cap) {
        size_t cap = b->cap ? b->cap : 256;
        char *p;
        while (b->len + n + 1 > cap)
            cap *= 2;
        if (!(p = realloc(b->p, cap))) {
            b->oom = 1;
            return;
        }
        b->p = p;
        b->cap = cap;
    }
    memcpy(b->p + b->len, s, n);
    b->len += n;
    b->p[b->len] = '\0';
}

static void puts_(buf *b, const char *s)
{
    put(b, s, strlen(s));
}

static void put_string(buf *b, const char *s)
{
    puts_(b, "\"");
    for (; *s; s++) {
        unsigned char ch = (unsigned char)*s;
        const char *se = scn_i_short_escape(ch);
        char e[8];
        if (se) {
            put(b, se, 2);
        } else if (ch < 0x20) {
            snprintf(e, sizeof e, "\\u%04x", ch);
            puts_(b, e);
        } else {
            put(b, s, 1);
        }
    }
    puts_(b, "\"");
}

/* Shortest text that reads back as exactly x (so 0.1 prints as 0.1, not
 * 0.10000000000000001), in Jansson's style: always a '.' or an exponent,
 * exponent without '+' or leading zeros.  Plain notation from 1e-4 up to
 * below 1e7, exponent notation outside. */
static void put_real(buf *b, double x)
{
    char t[40], out[40], *e;
    size_t k = 0;
    int prec = 1;

    for (; prec < 17; prec++) {
        snprintf(t, sizeof t, "%.*g", prec, x);
        if (strtod(t, NULL) == x)
            break;
    }
    snprintf(t, sizeof t, "%.*g", prec, x);
    e = strchr(t, 'e');
    if (e && atoi(e + 1) >= 0 && atoi(e + 1) < 7) {
        /* 10 as "10.0", not "1e1": plain notation below 10^7 */
        snprintf(t, sizeof t, "%.*g", atoi(e + 1) + 1, x);
        e = strchr(t, 'e');
    }
    if (!e) {
        puts_(b, t);
        if (!strchr(t, '.'))
            puts_(b, ".0");
        return;
    }
    memcpy(out, t, (size_t)(e - t));
    k = (size_t)(e - t);
    out[k++] = 'e';
    e++;
    if (*e == '+' || *e == '-') {
        if (*e == '-')
            out[k++] = '-';
        e++;
    }
    while (*e == '0' && e[1])
        e++;
    strcpy(out + k, e);
    puts_(b, out);
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* Compact JSON with keys sorted bytewise (like JSON_SORT_KEYS). */
static void dump(buf *b, json_t *v)
{
    char t[32];

    switch (json_typeof(v)) {
    case JSON_OBJECT: {
        size_t n = json_object_size(v), i = 0;
        const char **keys = malloc((n ? n : 1) * sizeof *keys);
        const char *k;
        json_t *x;
        if (!keys) {
            b->oom = 1;
            return;
        }
        json_object_foreach(v, k, x)
            keys[i++] = k;
        qsort(keys, n, sizeof *keys, cmp_str);
        puts_(b, "{");
        for (i = 0; i < n; i++) {
            if (i)
                puts_(b, ",");
            put_string(b, keys[i]);
            puts_(b, ":");
            dump(b, json_object_get(v, keys[i]));
        }
        puts_(b, "}");
        free(keys);
        break;
    }
    case JSON_ARRAY: {
        size_t i;
        json_t *x;
        puts_(b, "[");
        json_array_foreach(v, i, x) {
            if (i)
                puts_(b, ",");
            dump(b, x);
        }
        puts_(b, "]");
        break;
    }
    case JSON_STRING:
        put_string(b, json_string_value(v));
        break;
    case JSON_INTEGER:
        snprintf(t, sizeof t, "%" JSON_INTEGER_FORMAT, json_integer_value(v));
        puts_(b, t);
        break;
    case JSON_REAL:
        put_real(b, json_real_value(v));
        break;
    case JSON_TRUE:
        puts_(b, "true");
        break;
    case JSON_FALSE:
        puts_(b, "false");
        break;
    default:
        puts_(b, "null");
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

json_t *scn_i_resolved_noise(const cl_noise_spec *ns)
{
    static const char *const dists[] = {"constant", "uniform", "exponential", "lognormal",
                                        "normal", "shifted_exponential", "gamma", "pareto"};
    json_t *g = json_object();
    int oom = 0;

    if (!g)
        return NULL;
    add(g, "dist", json_string(dists[ns->dist]), &oom);
    switch (ns->dist) {
    case CL_NOISE_UNIFORM:
        add(g, "low", json_real(ns->low), &oom);
        add(g, "high", json_real(ns->high), &oom);
        break;
    case CL_NOISE_LOGNORMAL:
        add(g, "sigma", json_real(ns->sigma), &oom);
        break;
    case CL_NOISE_NORMAL:
        add(g, "sigma", json_real(ns->sigma), &oom);
        add(g, "floor", json_real(ns->floor), &oom);
        break;
    case CL_NOISE_SHIFTED_EXPONENTIAL:
        add(g, "shift", json_real(ns->shift), &oom);
        break;
    case CL_NOISE_GAMMA:
        add(g, "shape", json_real(ns->shape), &oom);
        break;
    case CL_NOISE_PARETO:
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
    const char *const *kinds = scn_i_slow_kind_names;
    arr = json_array();
    add(o, "slowdowns", arr, oom);
    for (size_t i = 0; i < s->n_slowdowns && !*oom; i++) {
        const scn_slowdown *d = &s->slowdowns[i];
        if (!(g = append_obj(arr, oom)))
            break;
        add(g, "kind", json_string(kinds[d->kind]), oom);
        if (d->kind == CL_SLOW_TRACE) {
            add(g, "file", json_string(d->file), oom);
            continue;
        }
        add_nodes(g, d->nodes, d->n_nodes, d->fraction, oom);
        add(g, "factor", json_real(d->factor), oom);
        if (d->kind == CL_SLOW_WINDOW) {
            add(g, "start_s", json_real(d->start_s), oom);
            if (!isinf(d->end_s))
                add(g, "end_s", json_real(d->end_s), oom);
        } else if (d->kind == CL_SLOW_MARKOV) {
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
    const char *const *kinds = scn_i_fault_kind_names;
    json_t *o, *arr, *g;

    if (s->n_faults == 0)
        return;
    if (!(o = section(root, "faults", oom)))
        return;
    add(o, "step", json_string(scn_i_step_policy_names[s->fault_step]), oom);
    add(o, "messages", json_string(scn_i_msg_policy_names[s->fault_messages]), oom);
    add(o, "rejoin", json_string(scn_i_rejoin_names[s->fault_rejoin]), oom);
    arr = json_array();
    add(o, "events", arr, oom);
    for (size_t i = 0; i < s->n_faults && !*oom; i++) {
        const scn_fault *f = &s->faults[i];
        if (!(g = append_obj(arr, oom)))
            break;
        add(g, "kind", json_string(kinds[f->kind]), oom);
        if (f->kind == CL_FAULT_TRACE) {
            add(g, "file", json_string(f->file), oom);
            continue;
        }
        add_nodes(g, f->nodes, f->n_nodes, f->fraction, oom);
        if (f->kind == CL_FAULT_SCHEDULE) {
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
    const char *const *dists = scn_i_jitter_names;
    if (jitter) {
        json_t *j = json_object();
        add(o, "jitter", j, oom);
        if (*oom)
            return;
        add(j, "dist", json_string(dists[p->jitter]), oom);
        if (p->jitter == CL_JITTER_UNIFORM) {
            add(j, "low_s", json_real(p->jitter_a), oom);
            add(j, "high_s", json_real(p->jitter_b), oom);
        } else if (p->jitter == CL_JITTER_EXPONENTIAL) {
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

    add_link_props(o, &s->link, s->link.jitter != CL_JITTER_NONE, s->link.loss > 0,
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
    if (s->discipline != CL_NIC_FIFO)
        add(o, "discipline", json_string(scn_i_discipline_names[s->discipline]), oom);
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
    cl_noise_spec top = { s->noise, s->noise_low, s->noise_high, s->noise_sigma,
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
    add(o, "kind", json_string(topo_kind_name_list[s->topo_kind]), oom);
    switch (s->topo_kind) {
    case TOPO_TORUS2D:
        add(o, "rows", json_integer(s->topo_rows), oom);
        add(o, "cols", json_integer(s->topo_cols), oom);
        break;
    case TOPO_ERDOS_RENYI:
        add(o, "p", json_real(s->topo_p), oom);
        break;
    case TOPO_RANDOM_REGULAR:
        add(o, "degree", json_integer(s->topo_degree), oom);
        break;
    case TOPO_TORUS3D:
        add(o, "rows", json_integer(s->topo_rows), oom);
        add(o, "cols", json_integer(s->topo_cols), oom);
        add(o, "layers", json_integer(s->topo_layers), oom);
        break;
    case TOPO_RING_LATTICE:
        add(o, "k", json_integer(s->topo_k), oom);
        break;
    case TOPO_WATTS_STROGATZ:
        add(o, "k", json_integer(s->topo_k), oom);
        add(o, "beta", json_real(s->topo_beta), oom);
        break;
    case TOPO_BARABASI_ALBERT:
        add(o, "m", json_integer(s->topo_m), oom);
        break;
    case TOPO_EDGE_LIST:
        add(o, "file", json_string(s->topo_file), oom);
        break;
    default:
        break;
    }
    add(o, "mixing", json_string(topo_mixing_name_list[s->topo_mixing]), oom);
    add(o, "lazy_alpha", json_real(s->topo_lazy_alpha), oom);

    if (!(o = section(root, "model", oom)))
        return root;
    add(o, "kind", json_string(s->model_type ? s->model_type->name : "none"), oom);
    if (!s->model_type)
        add(o, "message_bytes", json_real(s->model_message_bytes), oom);
    else
        add(o, "l2", json_real(s->l2), oom);
    if (s->model_n_hidden > 0) {
        arr = json_array();
        add(o, "hidden", arr, oom);
        for (size_t i = 0; i < s->model_n_hidden && !*oom; i++)
            if (json_array_append_new(arr, json_integer((json_int_t)s->model_hidden[i])))
                *oom = 1;
        add(o, "activation", json_string(mdl_activation_name_list[s->model_activation]), oom);
    }

    /* model "none" reads no data: no data section */
    if (s->model_type) {
        if (!(o = section(root, "data", oom)))
            return root;
        if (s->has_data_seed)
            add(o, "seed", json_integer((json_int_t)s->data_seed), oom);
        add(o, "kind", json_string(scn_i_data_kind_names[s->data_source]), oom);
        add(o, "train", json_integer((json_int_t)s->data_train), oom);
        add(o, "test", json_integer((json_int_t)s->data_test), oom);
        const scn_data_kind dk = s->data_source;
        if (dk == SCN_DATA_SYNTHETIC) {
            add(o, "features", json_integer((json_int_t)s->data_features), oom);
            add(o, "classes", json_integer(s->data_classes), oom);
            add(o, "separation", json_real(s->data_separation), oom);
        } else if (dk == SCN_DATA_SYNTH_LOGISTIC) {
            add(o, "features", json_integer((json_int_t)s->data_features), oom);
            add(o, "separation", json_real(s->data_separation), oom);
        } else if (dk == SCN_DATA_SYNTH_REGRESSION) {
            add(o, "features", json_integer((json_int_t)s->data_features), oom);
            add(o, "noise", json_real(s->data_noise), oom);
        } else if (dk == SCN_DATA_IDX) {
            add(o, "train_images", json_string(s->data_train_images), oom);
            add(o, "train_labels", json_string(s->data_train_labels), oom);
            add(o, "test_images", json_string(s->data_test_images), oom);
            add(o, "test_labels", json_string(s->data_test_labels), oom);
        } else if (dk == SCN_DATA_FASHION_MNIST) {
            add(o, "dir", json_string(s->data_dir), oom);
        } else {
            add(o, "train_file", json_string(s->data_train_file), oom);
            if (s->data_test_file)
                add(o, "test_file", json_string(s->data_test_file), oom);
            else
                add(o, "test_fraction", json_real(s->data_test_fraction), oom);
            if (dk == SCN_DATA_LIBSVM) {
                add(o, "features", json_integer((json_int_t)s->data_features), oom);
            } else {
                add(o, "label_column", json_integer(s->data_label_column), oom);
                add(o, "header", json_boolean(s->data_header), oom);
            }
        }
        add(o, "scale", json_string(mdl_scale_name_list[s->data_scale]), oom);
        add(o, "partition", json_string(mdl_partition_kind_name_list[s->partition_kind]), oom);
        if (s->partition_kind == MDL_PART_DIRICHLET)
            add(o, "alpha", json_real(s->partition_alpha), oom);
        else if (s->partition_kind == MDL_PART_SHARDS)
            add(o, "shards_per_node", json_integer(s->partition_shards), oom);
        else if (s->partition_kind == MDL_PART_QUANTITY)
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
    add(o, "schedule", json_string(mdl_schedule_name_list[s->opt_schedule]), oom);
    if (s->opt_schedule == MDL_SCHED_STEP) {
        add(o, "step_every", json_integer(s->opt_step_every), oom);
        add(o, "gamma", json_real(s->opt_step_gamma), oom);
    } else if (s->opt_schedule == MDL_SCHED_COSINE) {
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
    buf b = {0};

    if (!oom)
        dump(&b, tree);
    json_decref(tree);
    if (oom || b.oom) {
        free(b.p);
        return scn_i_fail_oom(c);
    }
    s->resolved_json = b.p;
    return 0;
}
