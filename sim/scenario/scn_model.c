/* scn_model.c -- the model and data sections of a scenario: the model
 * kind (a model type of models/, or "none" for timing only) with its
 * hidden layers and activation, the data kind with its files or generator
 * settings, scaling and partition, and the rules between model and data.
 * It loads no data and builds no model (the runner does).
 */
#include "scn_internal.h"

#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int scn_i_v_model(scn_ctx *c, json_t *root, scn_scenario *s)
{
    static const char *const keys[] = {"kind", "l2", "bias", "hidden", "activation",
                                       "message_bytes", "params", "profile",
                                       "flops_per_sample", NULL};
    static const char *const plain_keys[] = {"kind", "l2", NULL};
    static const char *const linear_keys[] = {"kind", "l2", "bias", NULL};
    static const char *const none_keys[] = {"kind", "message_bytes", "params", "profile",
                                            "flops_per_sample", NULL};
    const char *const *kinds = scn_i_model_names, *const *acts = mdl_activation_name_list;
    char p[PTR_MAX], kp[PTR_MAX], ep[PTR_MAX];
    const char *kind = "softmax", *act = "relu";
    json_t *o, *h;
    int k;

    s->l2 = 1e-4;
    if (scn_i_opt_obj(c, root, "", "model", &o, p) || scn_i_check_keys(c, o, p, keys) ||
        scn_i_opt_str(c, o, p, "kind", &kind, NULL))
        return -1;
    scn_i_ptr_key(kp, p, "kind");
    if ((k = scn_i_lookup(c, kp, "model", kind, kinds)) < 0)
        return -1;
    s->model = kinds[k];
    s->model_type = mdl_type_find(kinds[k]);   /* NULL for "none" */
    if (!s->model_type) {
        /* Timing only: no parameters, so the FLOPs of a sample are the
         * scenario's (flops_per_sample) or there are none. */
        int has_flops = 0, has_bytes = 0, has_params = 0, has_profile = 0;
        const char *profile = NULL;
        s->l2 = 0;
        if (scn_i_kind_keys(c, o, p, none_keys, "kind", kind) ||
            scn_i_opt_num(c, o, p, "message_bytes", GT0, &s->model_message_bytes, &has_bytes) ||
            scn_i_opt_num(c, o, p, "params", GT0, &s->model_params, &has_params) ||
            scn_i_opt_str(c, o, p, "profile", &profile, &has_profile) ||
            scn_i_opt_num(c, o, p, "flops_per_sample", GT0, &s->model_flops_per_sample,
                          &has_flops))
            return -1;
        /* the message size from exactly one of three keys; a profile
         * gives the FLOPs too, so it takes no flops_per_sample (decision:
         * an error rather than a silent override, docs/models.md) */
        if (has_bytes + has_params + has_profile == 0)
            return scn_i_fail(c, p[0] ? p : "/model", "missing required key "
                              "\"message_bytes\", \"params\" or \"profile\" for kind "
                              "\"none\"");
        if (has_bytes + has_params + has_profile > 1) {
            scn_i_ptr_key(ep, p, has_profile ? "profile" : "params");
            return scn_i_fail(c, ep, "excludes \"%s\": give one of message_bytes, params "
                              "or profile", has_bytes ? "message_bytes" : "params");
        }
        if (has_params && (s->model_params != floor(s->model_params) || s->model_params > 1e15)) {
            scn_i_ptr_key(ep, p, "params");
            return scn_i_fail(c, ep, "must be a whole number from 1 to 1e15, got %.17g",
                              s->model_params);
        }
        if (has_profile) {
            scn_i_ptr_key(ep, p, "profile");
            if ((k = scn_i_lookup(c, ep, "profile", profile, scn_i_profile_names)) < 0)
                return -1;
            if (has_flops) {
                scn_i_ptr_key(ep, p, "flops_per_sample");
                return scn_i_fail(c, ep, "not with \"profile\", which gives it (%s: %.6g "
                                  "FLOPs per sample); give params and flops_per_sample instead "
                                  "of a profile", scn_model_profiles[k].name,
                                  3 * scn_model_profiles[k].forward_flops);
            }
            s->model_profile = scn_model_profiles[k].name;
            s->model_params = scn_model_profiles[k].params;
            s->model_flops_per_sample = 3 * scn_model_profiles[k].forward_flops;
            has_flops = 1;
        }
        if (!has_bytes)
            s->model_message_bytes = s->model_params * s->bytes_per_param;
        if (!has_flops && s->flops_per_s > 0)
            return scn_i_fail(c, "/compute/flops_per_s", "model \"none\" has no FLOPs; give "
                              "\"step_time_s\" or model.flops_per_sample");
        for (size_t g = 0; g < s->n_groups && !has_flops; g++)
            if (s->groups[g].flops_per_s > 0) {
                char gp[PTR_MAX];
                snprintf(gp, sizeof gp, "/compute/groups/%zu/flops_per_s", g);
                return scn_i_fail(c, gp, "model \"none\" has no FLOPs; give \"step_time_s\" "
                                  "or model.flops_per_sample");
            }
        s->model_n_hidden = 0;
        return 0;
    }
    if (json_object_get(o, "flops_per_sample")) {
        scn_i_ptr_key(ep, p, "flops_per_sample");
        return scn_i_fail(c, ep, "only for kind \"none\" (a model type counts its own FLOPs)");
    }
    if (scn_i_opt_num(c, o, p, "l2", GE0, &s->l2, NULL))
        return -1;
    s->model_bias = 1;
    if (s->model_type == &mdl_linear || s->model_type == &mdl_logistic)
        return scn_i_kind_keys(c, o, p, linear_keys, "kind", kind)
            || scn_i_opt_bool(c, o, p, "bias", &s->model_bias) ? -1 : 0;
    if (s->model_type != &mdl_mlp)
        return scn_i_kind_keys(c, o, p, plain_keys, "kind", kind);

    s->model_n_hidden = 1;
    s->model_hidden[0] = 100;
    if ((h = o ? json_object_get(o, "hidden") : NULL) != NULL) {
        size_t i;
        json_t *e;
        scn_i_ptr_key(kp, p, "hidden");
        if (!json_is_array(h))
            return scn_i_fail(c, kp, "must be an array of layer widths, got %s", scn_i_type_name(h));
        if (json_array_size(h) < 1 || json_array_size(h) > 8)
            return scn_i_fail(c, kp, "must hold 1 to 8 layer widths, got %zu", json_array_size(h));
        json_array_foreach(h, i, e) {
            long long w;
            scn_i_ptr_idx(ep, kp, i);
            if (scn_i_int_value(c, ep, e, 1, 1 << 20, &w))
                return -1;
            s->model_hidden[i] = (size_t)w;
        }
        s->model_n_hidden = json_array_size(h);
    }
    if (scn_i_opt_str(c, o, p, "activation", &act, NULL))
        return -1;
    scn_i_ptr_key(kp, p, "activation");
    if ((k = scn_i_lookup(c, kp, "activation", act, acts)) < 0)
        return -1;
    s->model_activation = (mdl_activation)k;
    return 0;
}

/* ---- data, algorithm, stop, metrics ------------------------------------ */

static int v_partition(scn_ctx *c, json_t *o, const char *p, scn_scenario *s)
{
    const char *const *partitions = mdl_partition_kind_name_list;
    static const char *const own[] = {"alpha", "shards_per_node", "exponent", NULL};
    char kp[PTR_MAX];
    const char *partition = "iid";
    long long shards = 2;
    int k;

    s->partition_alpha = 0.5;
    s->partition_exponent = 1.5;
    if (scn_i_opt_str(c, o, p, "partition", &partition, NULL))
        return -1;
    scn_i_ptr_key(kp, p, "partition");
    if ((k = scn_i_lookup(c, kp, "partition", partition, partitions)) < 0)
        return -1;
    /* Each partition kind's own key is refused with the others. */
    for (int i = 0; own[i]; i++) {
        if (o && json_object_get(o, own[i]) && i + 1 != k) {
            char q[64];
            scn_i_ptr_key(kp, p, own[i]);
            return scn_i_fail(c, kp, "is not allowed with partition %s",
                              scn_i_quoted(q, sizeof q, partition));
        }
    }
    if (scn_i_opt_num(c, o, p, "alpha", GT0, &s->partition_alpha, NULL) ||
        scn_i_opt_int(c, o, p, "shards_per_node", 1, INT_MAX, &shards, NULL) ||
        scn_i_opt_num(c, o, p, "exponent", GT0, &s->partition_exponent, NULL))
        return -1;
    s->partition_shards = (int)shards;
    s->partition_kind = (mdl_partition_kind)k;
    s->partition = partitions[k];
    return 0;
}

int scn_i_v_data(scn_ctx *c, json_t *root, scn_scenario *s)
{
    static const char *const keys[] = {"kind", "train", "test", "features", "classes",
                                       "separation", "partition", "alpha", "shards_per_node",
                                       "exponent", "scale", "train_images", "train_labels",
                                       "test_images", "test_labels", "dir", "train_file",
                                       "test_file", "test_fraction", "label_column", "header",
                                       "noise", "seed", NULL};
    static const char *const per_kind[][15] = {
        {"kind", "train", "test", "features", "classes", "separation", "partition", "alpha",
         "shards_per_node", "exponent", "scale", "seed", NULL},
        {"kind", "train", "test", "train_images", "train_labels", "test_images", "test_labels",
         "partition", "alpha", "shards_per_node", "exponent", "scale", "seed", NULL},
        {"kind", "train", "test", "dir", "partition", "alpha", "shards_per_node", "exponent",
         "scale", "seed", NULL},
        {"kind", "train", "test", "train_file", "test_file", "test_fraction", "features",
         "partition", "alpha", "shards_per_node", "exponent", "scale", "seed", NULL},
        {"kind", "train", "test", "train_file", "test_file", "test_fraction", "label_column",
         "header", "partition", "alpha", "shards_per_node", "exponent", "scale", "seed", NULL},
        {"kind", "train", "test", "features", "separation", "partition", "alpha",
         "shards_per_node", "exponent", "scale", "seed", NULL},
        {"kind", "train", "test", "features", "noise", "partition", "exponent", "scale",
         "seed", NULL},
    };
    static const char *const files[] = {"train_images", "train_labels", "test_images",
                                        "test_labels", NULL};
    const char *const *kinds = scn_i_data_kind_names, *const *scales = mdl_scale_name_list;
    char p[PTR_MAX], kp[PTR_MAX], why[64];
    const char *kind = "synthetic", *scale = NULL, *dir = "/usr/share/datasets/fashion-mnist";
    int logistic = s->model_type == &mdl_logistic, has_train, k;
    long long train = 4096, test = 1024, features = 16, classes = logistic ? 2 : 4;
    json_t *o;

    s->data_separation = 2.0;
    if (scn_i_opt_obj(c, root, "", "data", &o, p) || scn_i_check_keys(c, o, p, keys) ||
        scn_i_opt_str(c, o, p, "kind", &kind, NULL))
        return -1;
    scn_i_ptr_key(kp, p, "kind");
    if ((k = scn_i_lookup(c, kp, "data kind", kind, kinds)) < 0 ||
        scn_i_kind_keys(c, o, p, per_kind[k], "kind", kind))
        return -1;
    const int generated = scn_data_generated((scn_data_kind)k);
    const int linear = s->model_type == &mdl_linear;
    s->data_noise = 0.1;
    if (!generated)
        train = test = 0;
    if (k == SCN_DATA_LIBSVM)
        features = 0;
    long long dseed = 0;
    int has_dseed = 0;
    if (scn_i_opt_int(c, o, p, "seed", 0, LLONG_MAX, &dseed, &has_dseed))
        return -1;
    s->has_data_seed = has_dseed;
    s->data_seed = has_dseed ? (uint64_t)dseed : s->seed;
    if (scn_i_opt_int(c, o, p, "train", generated ? 1 : 0, INT_MAX, &train, &has_train) ||
        scn_i_opt_int(c, o, p, "test", generated ? 1 : 0, INT_MAX, &test, NULL) ||
        scn_i_opt_num(c, o, p, "noise", GE0, &s->data_noise, NULL) ||
        scn_i_opt_int(c, o, p, "features", k == SCN_DATA_LIBSVM ? 0 : 1, 1 << 24, &features, NULL) ||
        scn_i_opt_int(c, o, p, "classes", 2, INT_MAX, &classes, NULL) ||
        scn_i_opt_num(c, o, p, "separation", GT0, &s->data_separation, NULL) ||
        v_partition(c, o, p, s) || scn_i_opt_str(c, o, p, "scale", &scale, NULL))
        return -1;
    if (linear != (k == SCN_DATA_SYNTH_REGRESSION)) {
        scn_i_ptr_key(kp, p, "kind");
        return linear ? scn_i_fail(c, kp, "model \"linear\" needs regression data (kind "
                                   "\"synthetic-regression\"), got \"%s\"", kind)
                      : scn_i_fail(c, kp, "regression data needs model \"linear\", got \"%s\"",
                                   s->model);
    }
    if (k == SCN_DATA_SYNTH_REGRESSION && s->partition_kind != MDL_PART_IID &&
        s->partition_kind != MDL_PART_QUANTITY) {
        scn_i_ptr_key(kp, p, "partition");
        return scn_i_fail(c, kp, "partition \"%s\" needs class labels; regression data has "
                          "none (use iid or quantity)", s->partition);
    }
    if (scale == NULL) {
        s->data_scale = generated ? MDL_SCALE_NONE : MDL_SCALE_MINMAX;
    } else {
        int sc;
        scn_i_ptr_key(kp, p, "scale");
        if ((sc = scn_i_lookup(c, kp, "scale", scale, scales)) < 0)
            return -1;
        s->data_scale = (mdl_scale)sc;
    }
    if (k == SCN_DATA_IDX) {
        snprintf(why, sizeof why, "for kind \"idx\"");
        for (int i = 0; files[i]; i++) {
            const char *f = NULL;
            char **dst = i == 0 ? &s->data_train_images : i == 1 ? &s->data_train_labels
                       : i == 2 ? &s->data_test_images : &s->data_test_labels;
            if (scn_i_need_key(c, o, p, files[i], why) || scn_i_opt_str(c, o, p, files[i], &f, NULL))
                return -1;
            if (f[0] == '\0') {
                scn_i_ptr_key(kp, p, files[i]);
                return scn_i_fail(c, kp, "must not be empty");
            }
            if (scn_i_set_str(c, dst, f))
                return -1;
        }
    } else if (k == SCN_DATA_LIBSVM || k == SCN_DATA_CSV) {
        const char *tf = NULL, *vf = NULL;
        long long col = 0;
        int has_frac = 0;
        snprintf(why, sizeof why, "for kind \"%s\"", kind);
        s->data_test_fraction = 0.2;
        if (scn_i_need_key(c, o, p, "train_file", why) ||
            scn_i_opt_str(c, o, p, "train_file", &tf, NULL) ||
            scn_i_opt_str(c, o, p, "test_file", &vf, NULL) ||
            scn_i_opt_num(c, o, p, "test_fraction", GT0, &s->data_test_fraction, &has_frac) ||
            scn_i_opt_int(c, o, p, "label_column", 0, INT_MAX, &col, NULL) ||
            scn_i_opt_bool(c, o, p, "header", &s->data_header))
            return -1;
        if (tf[0] == '\0' || (vf && vf[0] == '\0')) {
            scn_i_ptr_key(kp, p, tf[0] == '\0' ? "train_file" : "test_file");
            return scn_i_fail(c, kp, "must not be empty");
        }
        scn_i_ptr_key(kp, p, "test_fraction");
        if (vf && has_frac)
            return scn_i_fail(c, kp, "is not allowed with \"test_file\" (the test set is "
                              "that file)");
        if (s->data_test_fraction >= 1.0)
            return scn_i_fail(c, kp, "must be < 1, got %g", s->data_test_fraction);
        if (vf)
            s->data_test_fraction = 0.0;
        s->data_label_column = (int)col;
        if (scn_i_set_str(c, &s->data_train_file, tf) ||
            (vf && scn_i_set_str(c, &s->data_test_file, vf)))
            return -1;
    } else if (k == SCN_DATA_FASHION_MNIST) {
        if (scn_i_opt_str(c, o, p, "dir", &dir, NULL))
            return -1;
        if (dir[0] == '\0') {
            scn_i_ptr_key(kp, p, "dir");
            return scn_i_fail(c, kp, "must not be empty");
        }
        if (scn_i_set_str(c, &s->data_dir, dir))
            return -1;
    }
    if (k == SCN_DATA_SYNTH_LOGISTIC)
        classes = 2;
    if (logistic && k == SCN_DATA_SYNTHETIC && classes != 2) {
        scn_i_ptr_key(kp, p, "classes");
        return scn_i_fail(c, kp, "must be 2 with model \"logistic\", got %lld", classes);
    }
    /* Model "none" reads no data: the section is checked but not used. */
    const int no_data = s->model_type == NULL;
    if (generated && !no_data && train < s->n_nodes) {
        scn_i_ptr_key(kp, p, "train");
        return scn_i_fail(c, kp, "must be >= nodes (%d) so that every node holds data, got %lld%s",
                    s->n_nodes, train, scn_i_dflt(has_train));
    }
    if (!generated && !no_data && train > 0 && train < s->n_nodes) {
        scn_i_ptr_key(kp, p, "train");
        return scn_i_fail(c, kp, "must be 0 (all) or >= nodes (%d) so that every node holds "
                          "data, got %lld", s->n_nodes, train);
    }
    s->data_train = (size_t)train;
    s->data_test = (size_t)test;
    s->data_features = generated || k == SCN_DATA_LIBSVM ? (size_t)features : 0;
    s->data_classes = k == SCN_DATA_SYNTHETIC || k == SCN_DATA_SYNTH_LOGISTIC ? (int)classes : 0;
    s->data_source = (scn_data_kind)k;
    s->data_kind = kinds[k];
    return 0;
}
