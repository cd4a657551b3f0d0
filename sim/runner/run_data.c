/* run_data.c -- the data and the model of a run: generated or loaded
 * (IDX, LIBSVM, CSV; IDX through the decoded-data cache, whose directory
 * it picks from the environment) as the scenario's data kind says, cut to size, scaled,
 * partitioned over the workers (servers get empty slices), the evaluation
 * subsets drawn and the model built for the data's shape.  It does not
 * decide what the data costs in time or memory (run_hetero.c, run_limits.c).
 */
#include "run_internal.h"

/* Servers hold no data: empty slices after the workers'. */
static int pad_partition(mdl_partition *p, int n_all)
{
    if (n_all == p->n_nodes)
        return 0;
    size_t *off = realloc(p->off, (size_t)(n_all + 1) * sizeof(size_t));
    if (!off)
        return -1;
    for (int i = p->n_nodes + 1; i <= n_all; i++)
        off[i] = off[p->n_nodes];
    p->off = off;
    p->n_nodes = n_all;
    return 0;
}

/* Keeps the first n samples when 0 < n < ds->n (the memory stays with ds). */
static void keep_first(mdl_dataset *ds, size_t n)
{
    if (n > 0 && n < ds->n)
        ds->n = n;
}

/* LIBSVM or CSV: a training file and a test file, or one file split by a
 * seeded test_fraction; labels compacted to 0 .. K-1 over both. */
static int load_text(run_sim *r, mdl_dataset *train, mdl_dataset *test, double *check_bytes,
                     char *m, size_t ms)
{
    const scn_scenario *s = r->s;
    const int csv = s->data_source == SCN_DATA_CSV;
    char tf[4096], vf[4096];
    mdl_dataset all;
    run_i_data_path(s, NULL, s->data_train_file, tf, sizeof tf);
    if (csv ? mdl_csv_load(tf, s->data_label_column, s->data_header, &all, m, ms)
            : mdl_libsvm_load(tf, s->data_features, &all, m, ms))
        return -1;
    /* Loading touched only the nonzero entries of sparse rows; splitting,
     * widening and scaling touch them all (twice, for the split) */
    scn_error me;
    *check_bytes = 2.0 * (double)all.n * ((double)all.d + 1) * 8;
    if (run_i_check_memory(r, 0, *check_bytes, &me) != 0) {
        snprintf(m, ms, "%s", me.msg);
        mdl_dataset_fini(&all);
        return -1;
    }
    if (s->data_test_file) {
        *train = all;
        run_i_data_path(s, NULL, s->data_test_file, vf, sizeof vf);
        if (csv ? mdl_csv_load(vf, s->data_label_column, s->data_header, test, m, ms)
                : mdl_libsvm_load(vf, train->d, test, m, ms))
            return -1;
        if (!csv && mdl_dataset_widen(train, test->d) != 0) {
            snprintf(m, ms, "%.400s: error: out of memory", tf);
            return -1;
        }
        if (test->d != train->d) {
            snprintf(m, ms, "%.400s: error: rows have %zu features, the training file's "
                     "(%.400s) %zu", vf, test->d, tf, train->d);
            return -1;
        }
    } else if (mdl_dataset_split(&all, s->data_test_fraction,
                                 sim_rng_derive(s->data_seed, SIM_RNG_NO_NODE, SIM_RNG_DATAGEN),
                                 train, test) != 0) {
        snprintf(m, ms, "%.400s: error: %zu samples cannot be split into non-empty training "
                 "and test sets by test_fraction %g", tf, all.n, s->data_test_fraction);
        mdl_dataset_fini(&all);
        return -1;
    }
    const int K = mdl_labels_compact(train, test);
    if (K < 0) {
        snprintf(m, ms, "%.400s: error: out of memory", tf);
        return -1;
    }
    if (K < 2) {
        snprintf(m, ms, "%.400s: error: every label is the same: a classification needs at "
                 "least 2 classes", tf);
        return -1;
    }
    return 0;
}

/* The directory of the decoded-data cache (docs/models.md, "Data-set
 * cache"): $DTSIM_CACHE_DIR ("" or "off": none), else
 * $XDG_CACHE_HOME/dtsim, else $HOME/.cache/dtsim.  NULL: no cache. */
static const char *cache_dir(char *buf, size_t n)
{
    const char *v = getenv("DTSIM_CACHE_DIR");
    if (v)
        return *v && strcmp(v, "off") != 0 ? v : NULL;
    if ((v = getenv("XDG_CACHE_HOME")) && v[0] == '/')
        return snprintf(buf, n, "%s/dtsim", v) < (int)n ? buf : NULL;
    if ((v = getenv("HOME")) && v[0] == '/')
        return snprintf(buf, n, "%s/.cache/dtsim", v) < (int)n ? buf : NULL;
    return NULL;
}

static int load_files(run_sim *r, mdl_dataset *train, mdl_dataset *test, double *check_bytes,
                      scn_error *err)
{
    const scn_scenario *s = r->s;
    char ti[4096], tl[4096], vi[4096], vl[4096];
    char m[sizeof err->msg];
    if (s->data_source == SCN_DATA_LIBSVM || s->data_source == SCN_DATA_CSV) {
        if (load_text(r, train, test, check_bytes, m, sizeof m) != 0) {
            snprintf(err->msg, sizeof err->msg, "%s", m);
            return -1;
        }
        return 0;
    }
    if (s->data_source == SCN_DATA_IDX) {
        run_i_data_path(s, NULL, s->data_train_images, ti, sizeof ti);
        run_i_data_path(s, NULL, s->data_train_labels, tl, sizeof tl);
        run_i_data_path(s, NULL, s->data_test_images, vi, sizeof vi);
        run_i_data_path(s, NULL, s->data_test_labels, vl, sizeof vl);
    } else {
        run_i_data_path(s, s->data_dir, "train-images-idx3-ubyte.gz", ti, sizeof ti);
        run_i_data_path(s, s->data_dir, "train-labels-idx1-ubyte.gz", tl, sizeof tl);
        run_i_data_path(s, s->data_dir, "t10k-images-idx3-ubyte.gz", vi, sizeof vi);
        run_i_data_path(s, s->data_dir, "t10k-labels-idx1-ubyte.gz", vl, sizeof vl);
    }
    char cd[4096];
    const char *dir = cache_dir(cd, sizeof cd);
    if (mdl_idx_load_cached(ti, tl, dir, train, NULL, m, sizeof m) != 0
        || mdl_idx_load_cached(vi, vl, dir, test, NULL, m, sizeof m) != 0) {
        snprintf(err->msg, sizeof err->msg, "%s", m);
        return -1;
    }
    if (test->d != train->d) {
        snprintf(err->msg, sizeof err->msg, "%.400s: error: images have %zu values, the training "
                 "images (%.400s) %zu", vi, test->d, ti, train->d);
        return -1;
    }
    const int C = train->n_classes > test->n_classes ? train->n_classes : test->n_classes;
    train->n_classes = test->n_classes = C;
    return 0;
}

/* The first n indices of a seeded shuffle of 0 .. n_all - 1, or NULL with
 * *n_out = 0 when n is 0 or covers everything. */
static int pick_subset(size_t n_all, size_t n, uint64_t seed, size_t **out, size_t *n_out)
{
    *out = NULL;
    *n_out = 0;
    if (n == 0 || n >= n_all)
        return 0;
    mdl_partition pick;
    if (mdl_partition_iid(n_all, 1, seed, &pick) != 0)
        return -1;
    *out = malloc(n * sizeof(size_t));
    if (*out) {
        memcpy(*out, pick.idx, n * sizeof(size_t));
        *n_out = n;
    }
    mdl_partition_fini(&pick);
    return *out ? 0 : -1;
}

int run_i_data_acquire(run_sim *r, mdl_dataset *train, mdl_dataset *test, double *check_bytes,
                       scn_error *err)
{
    const scn_scenario *s = r->s;
    *check_bytes = 0;
    if (s->data_source == SCN_DATA_SYNTHETIC) {
        mdl_synth_spec sp = { .n_train = s->data_train, .n_test = s->data_test,
                              .d = s->data_features, .n_classes = s->data_classes,
                              .separation = s->data_separation };
        if (mdl_synth_generate(&sp, sim_rng_derive(s->data_seed, SIM_RNG_NO_NODE, SIM_RNG_DATAGEN),
                               train, test) != 0)
            goto out_oom;
    } else if (scn_data_generated(s->data_source)) {
        mdl_synth_linear_spec sp = { .n_train = s->data_train, .n_test = s->data_test,
                                     .d = s->data_features, .separation = s->data_separation,
                                     .noise = s->data_noise };
        const uint64_t seed = sim_rng_derive(s->data_seed, SIM_RNG_NO_NODE, SIM_RNG_DATAGEN);
        if ((s->data_source == SCN_DATA_SYNTH_LOGISTIC
                 ? mdl_synth_logistic(&sp, seed, train, test, NULL)
                 : mdl_synth_regression(&sp, seed, train, test, NULL)) != 0)
            goto out_oom;
    } else {
        if (load_files(r, train, test, check_bytes, err) != 0)
            return -1;
        keep_first(train, s->data_train);
        keep_first(test, s->data_test);
    }
    if (mdl_dataset_scale(train, test, s->data_scale) != 0)
        goto out_oom;
    return 0;

out_oom:
    snprintf(err->msg, sizeof err->msg, "%s: error: out of memory building the data", s->path);
    return -1;
}

int run_i_build_data(run_sim *r, scn_error *err)
{
    const scn_scenario *s = r->s;
    char m[512];
    if (r->timing_only)
        return 0;   /* no model, no data: nothing to build */
    double check_bytes;
    if ((r->data_cache ? run_i_data_from_cache(r, r->data_cache, err)
                       : run_i_data_acquire(r, &r->train, &r->test, &check_bytes, err)) != 0)
        return -1;
    if (r->train.n < (size_t)s->n_nodes) {
        snprintf(m, sizeof m, "%zu training samples for %d nodes: every node must hold data",
                 r->train.n, s->n_nodes);
        run_i_value_error(err, s, "/data", m);
        return -1;
    }
    /* a file's size is known only now: check before building on it */
    if (run_i_check_memory(r, 0, 0, err) != 0)
        return -1;

    mdl_partition_spec ps = { .kind = s->partition_kind, .n_nodes = s->n_nodes,
                              .alpha = s->partition_alpha,
                              .shards_per_node = s->partition_shards,
                              .exponent = s->partition_exponent, .min_samples = s->batch };
    if (mdl_partition_build(&ps, &r->train,
                            sim_rng_derive(s->data_seed, SIM_RNG_NO_NODE, SIM_RNG_PARTITION),
                            &r->part, m, sizeof m) != 0) {
        char full[600];
        snprintf(full, sizeof full, "%s (algorithm.batch is %zu)", m, s->batch);
        run_i_value_error(err, s, "/data/partition", full);
        return -1;
    }
    if (mdl_partition_stats_compute(&r->part, &r->train, &r->pstats) != 0)
        goto out_oom;
    if (pad_partition(&r->part, r->n_all) != 0)
        goto out_oom;

    const mdl_type *t = s->model_type;
    if (t == &mdl_logistic && r->train.n_classes != 2) {
        snprintf(m, sizeof m, "model \"logistic\" needs 2 classes, the data has %d",
                 r->train.n_classes);
        run_i_value_error(err, s, "/model/kind", m);
        return -1;
    }
    mdl_arch a = { .d = r->train.d, .n_classes = r->train.n_classes,
                   .n_hidden = s->model_n_hidden, .act = s->model_activation,
                   .no_bias = !s->model_bias,
                   .heads = s->has_freeze && s->freeze_grow && t == &mdl_mlp };
    for (size_t l = 0; l < s->model_n_hidden; l++)
        a.hidden[l] = s->model_hidden[l];
    r->model = mdl_create_arch(t, &a, s->l2, s->batch);
    if (!r->model)
        goto out_oom;
    /* The training subset keeps its historical stream; the test subset
     * takes node 0's evaluation stream so that neither shifts the other. */
    if (pick_subset(r->train.n, s->metrics_eval_samples,
                    sim_rng_derive(s->data_seed, SIM_RNG_NO_NODE, SIM_RNG_EVAL),
                    &r->eval_idx, &r->n_eval) != 0
        || pick_subset(r->test.n, s->metrics_test_samples,
                       sim_rng_derive(s->data_seed, 0, SIM_RNG_EVAL),
                       &r->test_idx, &r->n_test_eval) != 0)
        goto out_oom;
    return 0;

out_oom:
    snprintf(err->msg, sizeof err->msg, "%s: error: out of memory building the data", s->path);
    return -1;
}
