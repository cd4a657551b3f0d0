/* run_prepare.c -- turns a loaded scenario into the pieces of one run:
 * the algorithm and its parameters, the topology, the data (generated or
 * loaded) with its partition and evaluation subsets, the model, the
 * per-node compute, NIC, slowdown, fault and link settings in the
 * cluster's terms, and the memory and work estimates that refuse a run
 * too large for the machine.  It runs nothing (run.c does).
 */
#include "run_internal.h"

static void value_error(scn_error *err, const scn_scenario *s, const char *ptr, const char *msg)
{
    snprintf(err->msg, sizeof err->msg, "%s: %s: error: %s", s->path, ptr, msg);
}

static int check_memory(const run_sim *r, size_t P, double data_bytes, scn_error *err);

static int build_topology(run_sim *r, scn_error *err)
{
    const scn_scenario *s = r->s;
    topo_spec ts = { .n = s->n_nodes, .rows = s->topo_rows, .cols = s->topo_cols,
                     .layers = s->topo_layers, .p = s->topo_p, .degree = s->topo_degree,
                     .k = s->topo_k, .beta = s->topo_beta, .m = s->topo_m,
                     .path = s->topo_file, .lazy_alpha = s->topo_lazy_alpha,
                     .kind = s->topo_kind, .mixing = s->topo_mixing };
    char m[512];
    r->g = topo_build(&ts, sim_rng_derive(s->seed, SIM_RNG_NO_NODE, SIM_RNG_TOPOLOGY), m, sizeof m);
    if (!r->g) {
        /* a bad line of an edge-list file is reported where it is:
         * "FILE:LINE: error: ..." */
        size_t len = s->topo_file ? strlen(s->topo_file) : 0;
        if (len > 0 && strncmp(m, s->topo_file, len) == 0 && m[len] == ':')
            snprintf(err->msg, sizeof err->msg, "%s", m);
        else
            value_error(err, s, "/topology", m);
        return -1;
    }
    return 0;
}

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

/* path as written in the scenario: absolute, or relative to the
 * scenario file's directory.  Writes to out (size n). */
static void data_path(const scn_scenario *s, const char *dir, const char *name, char *out,
                      size_t n)
{
    /* Pieces: the scenario's directory (for a relative result), dir, name.
     * A path longer than n is cut short, fails to open and says so. */
    const char *slash = strrchr(s->path, '/');
    const char *first = dir ? dir : name;
    size_t len = 0;
    out[0] = '\0';
    if (first[0] != '/' && slash) {
        size_t k = (size_t)(slash - s->path) + 1;
        if (k < n) {
            memcpy(out, s->path, k);
            len = k;
        }
    }
    const char *parts[2] = { dir, name };
    for (int p = 0; p < 2; p++) {
        if (!parts[p])
            continue;
        size_t k = strlen(parts[p]);
        if (len + k + 2 > n)
            k = n > len + 2 ? n - len - 2 : 0;
        memcpy(out + len, parts[p], k);
        len += k;
        if (p == 0)
            out[len++] = '/';
    }
    out[len] = '\0';
}

/* Keeps the first n samples when 0 < n < ds->n (the memory stays with ds). */
static void keep_first(mdl_dataset *ds, size_t n)
{
    if (n > 0 && n < ds->n)
        ds->n = n;
}

/* LIBSVM or CSV: a training file and a test file, or one file split by a
 * seeded test_fraction; labels compacted to 0 .. K-1 over both. */
static int load_text(run_sim *r, char *m, size_t ms)
{
    const scn_scenario *s = r->s;
    const int csv = s->data_source == SCN_DATA_CSV;
    char tf[4096], vf[4096];
    mdl_dataset all;
    data_path(s, NULL, s->data_train_file, tf, sizeof tf);
    if (csv ? mdl_csv_load(tf, s->data_label_column, s->data_header, &all, m, ms)
            : mdl_libsvm_load(tf, s->data_features, &all, m, ms))
        return -1;
    /* Loading touched only the nonzero entries of sparse rows; splitting,
     * widening and scaling touch them all (twice, for the split) */
    scn_error me;
    if (check_memory(r, 0, 2.0 * (double)all.n * ((double)all.d + 1) * 8, &me) != 0) {
        snprintf(m, ms, "%s", me.msg);
        mdl_dataset_fini(&all);
        return -1;
    }
    if (s->data_test_file) {
        r->train = all;
        data_path(s, NULL, s->data_test_file, vf, sizeof vf);
        if (csv ? mdl_csv_load(vf, s->data_label_column, s->data_header, &r->test, m, ms)
                : mdl_libsvm_load(vf, r->train.d, &r->test, m, ms))
            return -1;
        if (!csv && mdl_dataset_widen(&r->train, r->test.d) != 0) {
            snprintf(m, ms, "%.400s: error: out of memory", tf);
            return -1;
        }
        if (r->test.d != r->train.d) {
            snprintf(m, ms, "%.400s: error: rows have %zu features, the training file's "
                     "(%.400s) %zu", vf, r->test.d, tf, r->train.d);
            return -1;
        }
    } else if (mdl_dataset_split(&all, s->data_test_fraction,
                                 sim_rng_derive(s->data_seed, SIM_RNG_NO_NODE, SIM_RNG_DATAGEN),
                                 &r->train, &r->test) != 0) {
        snprintf(m, ms, "%.400s: error: %zu samples cannot be split into non-empty training "
                 "and test sets by test_fraction %g", tf, all.n, s->data_test_fraction);
        mdl_dataset_fini(&all);
        return -1;
    }
    const int K = mdl_labels_compact(&r->train, &r->test);
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

static int load_files(run_sim *r, scn_error *err)
{
    const scn_scenario *s = r->s;
    char ti[4096], tl[4096], vi[4096], vl[4096];
    char m[sizeof err->msg], v[256];
    if (s->data_source == SCN_DATA_LIBSVM || s->data_source == SCN_DATA_CSV) {
        if (load_text(r, m, sizeof m) != 0) {
            snprintf(err->msg, sizeof err->msg, "%s", m);
            return -1;
        }
        goto out_subsets;
    }
    if (s->data_source == SCN_DATA_IDX) {
        data_path(s, NULL, s->data_train_images, ti, sizeof ti);
        data_path(s, NULL, s->data_train_labels, tl, sizeof tl);
        data_path(s, NULL, s->data_test_images, vi, sizeof vi);
        data_path(s, NULL, s->data_test_labels, vl, sizeof vl);
    } else {
        data_path(s, s->data_dir, "train-images-idx3-ubyte.gz", ti, sizeof ti);
        data_path(s, s->data_dir, "train-labels-idx1-ubyte.gz", tl, sizeof tl);
        data_path(s, s->data_dir, "t10k-images-idx3-ubyte.gz", vi, sizeof vi);
        data_path(s, s->data_dir, "t10k-labels-idx1-ubyte.gz", vl, sizeof vl);
    }
    if (mdl_idx_load(ti, tl, &r->train, m, sizeof m) != 0
        || mdl_idx_load(vi, vl, &r->test, m, sizeof m) != 0) {
        snprintf(err->msg, sizeof err->msg, "%s", m);
        return -1;
    }
    if (r->test.d != r->train.d) {
        snprintf(err->msg, sizeof err->msg, "%.400s: error: images have %zu values, the training "
                 "images (%.400s) %zu", vi, r->test.d, ti, r->train.d);
        return -1;
    }
    const int C = r->train.n_classes > r->test.n_classes ? r->train.n_classes
                                                         : r->test.n_classes;
    r->train.n_classes = r->test.n_classes = C;
out_subsets:
    keep_first(&r->train, s->data_train);
    keep_first(&r->test, s->data_test);
    if (r->train.n < (size_t)s->n_nodes) {
        snprintf(v, sizeof v, "%zu training samples for %d nodes: every node must hold data",
                 r->train.n, s->n_nodes);
        value_error(err, s, "/data", v);
        return -1;
    }
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

static int build_data(run_sim *r, scn_error *err)
{
    const scn_scenario *s = r->s;
    char m[512];
    if (r->timing_only)
        return 0;   /* no model, no data: nothing to build */
    if (s->data_source == SCN_DATA_SYNTHETIC) {
        mdl_synth_spec sp = { .n_train = s->data_train, .n_test = s->data_test,
                              .d = s->data_features, .n_classes = s->data_classes,
                              .separation = s->data_separation };
        if (mdl_synth_generate(&sp, sim_rng_derive(s->data_seed, SIM_RNG_NO_NODE, SIM_RNG_DATAGEN),
                               &r->train, &r->test) != 0)
            goto out_oom;
    } else if (scn_data_generated(s->data_source)) {
        mdl_synth_linear_spec sp = { .n_train = s->data_train, .n_test = s->data_test,
                                     .d = s->data_features, .separation = s->data_separation,
                                     .noise = s->data_noise };
        const uint64_t seed = sim_rng_derive(s->data_seed, SIM_RNG_NO_NODE, SIM_RNG_DATAGEN);
        if ((s->data_source == SCN_DATA_SYNTH_LOGISTIC
                 ? mdl_synth_logistic(&sp, seed, &r->train, &r->test, NULL)
                 : mdl_synth_regression(&sp, seed, &r->train, &r->test, NULL)) != 0)
            goto out_oom;
    } else if (load_files(r, err) != 0) {
        return -1;
    }
    /* a file's size is known only now: check before touching it again */
    if (check_memory(r, 0, 0, err) != 0)
        return -1;
    if (mdl_dataset_scale(&r->train, &r->test, s->data_scale) != 0)
        goto out_oom;

    mdl_partition_spec ps = { .kind = s->partition_kind, .n_nodes = s->n_nodes,
                              .alpha = s->partition_alpha,
                              .shards_per_node = s->partition_shards,
                              .exponent = s->partition_exponent, .min_samples = s->batch };
    if (mdl_partition_build(&ps, &r->train,
                            sim_rng_derive(s->data_seed, SIM_RNG_NO_NODE, SIM_RNG_PARTITION),
                            &r->part, m, sizeof m) != 0) {
        char full[600];
        snprintf(full, sizeof full, "%s (algorithm.batch is %zu)", m, s->batch);
        value_error(err, s, "/data/partition", full);
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
        value_error(err, s, "/model/kind", m);
        return -1;
    }
    mdl_arch a = { .d = r->train.d, .n_classes = r->train.n_classes,
                   .n_hidden = s->model_n_hidden, .act = s->model_activation };
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

/* The algorithm object's protocol-specific keys against the algorithm's
 * table (the scenario module collects them without knowing what they mean). */
static int resolve_params(run_sim *r, scn_error *err)
{
    const scn_scenario *s = r->s;
    alg_params_defaults(r->alg, &r->ctx);
    for (size_t i = 0; i < s->n_alg_params; i++) {
        const scn_param *q = &s->alg_params[i];
        char ptr[300], m[512];
        snprintf(ptr, sizeof ptr, "/algorithm/%s", q->key);
        int rc = alg_params_set(r->alg, &r->ctx, q->key, q->is_string, q->num, q->str, m,
                                sizeof m);
        if (rc == 1) {
            char keys[400];
            alg_params_keys(r->alg, keys, sizeof keys);
            snprintf(m, sizeof m, "unknown key for algorithm \"%s\" (expected one of: %s)",
                     r->alg->name, keys);
        }
        if (rc != 0) {
            value_error(err, s, ptr, m);
            return -1;
        }
        int k = alg_params_index(r->alg, q->key);
        if (r->alg->params[k].kind == ALG_PARAM_PATH) {
            char full[4096];
            data_path(s, NULL, q->str, full, sizeof full);
            free(r->paths[k]);
            if (!(r->paths[k] = strdup(full))) {
                snprintf(err->msg, sizeof err->msg, "%s: error: out of memory", s->path);
                return -1;
            }
            r->ctx.path[k] = r->paths[k];
        }
    }
    return 0;
}

/* FLOPs of one step of the model: 2 per parameter and sample forward, 4
 * backward (the usual 6 N per sample for dense layers). */
static double model_flops_per_step(const run_sim *r)
{
    return 6.0 * (double)r->ctx.P * (double)r->s->batch;
}

static cl_link_class link_class(const scn_link_props *p, cl_window *w)
{
    for (size_t k = 0; k < p->n_outages; k++)
        w[k] = (cl_window){ p->outages[2 * k], p->outages[2 * k + 1] };
    return (cl_link_class){ .latency_s = p->latency_s, .bandwidth_Bps = p->bandwidth_Bps,
                            .jitter = p->jitter, .jitter_a = p->jitter_a,
                            .jitter_b = p->jitter_b, .loss = p->loss, .outages = w,
                            .n_outages = p->n_outages };
}

/* Link classes: class 0 is the network's default link, class k + 1 the
 * k-th entry of network.links, which its rule assigns. */
static int build_links(run_sim *r)
{
    const scn_scenario *s = r->s;
    size_t n_w = s->link.n_outages, used = 0;
    for (size_t k = 0; k < s->n_links; k++)
        n_w += s->links[k].props.n_outages;
    r->classes = malloc((s->n_links + 1) * sizeof *r->classes);
    if (!r->classes || (s->n_links && !(r->rules = malloc(s->n_links * sizeof *r->rules))) ||
        (n_w && !(r->windows = malloc(n_w * sizeof *r->windows))))
        return -1;
    r->classes[0] = link_class(&s->link, r->windows);
    used = s->link.n_outages;
    for (size_t k = 0; k < s->n_links; k++) {
        const scn_link *l = &s->links[k];
        r->classes[k + 1] = link_class(&l->props, r->windows + used);
        used += l->props.n_outages;
        r->rules[k] = (cl_link_rule){ .from = l->from, .n_from = l->n_from, .to = l->to,
                                      .n_to = l->n_to, .directed = l->directed,
                                      .cls = (uint32_t)(k + 1) };
    }
    return 0;
}

/* Per-node compute and NIC settings, slowdowns and faults in the
 * cluster's terms. */
static int build_heterogeneity(run_sim *r)
{
    const scn_scenario *s = r->s;
    int n = r->n_all;
    double flops = model_flops_per_step(r);
    size_t n_pts = 0, k = 0;

    r->noise = malloc((size_t)n * sizeof *r->noise);
    r->up_Bps = malloc((size_t)n * sizeof(double));
    r->down_Bps = malloc((size_t)n * sizeof(double));
    if (!r->noise || !r->up_Bps || !r->down_Bps)
        return -1;
    for (int i = 0; i < n; i++) {
        if (i >= s->n_nodes) {   /* a protocol's server: never steps, default NIC */
            r->step_times[i] = 1.0;
            r->noise[i] = (cl_noise_spec){ .dist = CL_NOISE_CONSTANT };
            r->up_Bps[i] = s->up_Bps;
            r->down_Bps[i] = s->down_Bps;
            continue;
        }
        r->step_times[i] = scn_node_step_time(s, i, flops) * scn_node_slowdown(s, i);
        r->noise[i] = scn_node_noise(s, i);
        scn_node_nic(s, i, &r->up_Bps[i], &r->down_Bps[i]);
    }
    for (size_t j = 0; j < s->n_slowdowns; j++)
        n_pts += s->slowdowns[j].n_points;
    for (size_t j = 0; j < s->n_faults; j++)
        n_pts += s->faults[j].n_points;
    if ((s->n_slowdowns && !(r->slows = calloc(s->n_slowdowns, sizeof *r->slows))) ||
        (s->n_faults && !(r->faults = calloc(s->n_faults, sizeof *r->faults))) ||
        (n_pts && !(r->points = malloc(n_pts * sizeof *r->points))))
        return -1;
    for (size_t j = 0; j < s->n_slowdowns; j++) {
        const scn_slowdown *d = &s->slowdowns[j];
        cl_slowdown *o = &r->slows[j];
        *o = (cl_slowdown){ .kind = d->kind, .nodes = d->nodes,
                            .n_nodes = d->n_nodes, .factor = d->factor, .start_s = d->start_s,
                            .end_s = d->end_s, .mean_slow_s = d->mean_slow_s,
                            .mean_normal_s = d->mean_normal_s, .period_s = d->period_s,
                            .duration_s = d->duration_s, .phase_s = d->phase_s,
                            .points = r->points + k, .n_points = d->n_points };
        for (size_t q = 0; q < d->n_points; q++)
            r->points[k++] = (cl_point){ d->points[q].node, d->points[q].time_s,
                                         d->points[q].value };
    }
    if (build_links(r) != 0)
        return -1;
    for (size_t j = 0; j < s->n_faults; j++) {
        const scn_fault *f = &s->faults[j];
        cl_fault *o = &r->faults[j];
        *o = (cl_fault){ .kind = f->kind, .nodes = f->nodes,
                         .n_nodes = f->n_nodes, .down_s = f->down_s, .up_s = f->up_s,
                         .mtbf_s = f->mtbf_s, .mttr_s = f->mttr_s,
                         .points = r->points + k, .n_points = f->n_points };
        for (size_t q = 0; q < f->n_points; q++)
            r->points[k++] = (cl_point){ f->points[q].node, f->points[q].time_s,
                                         f->points[q].value };
    }
    return 0;
}

/* ---- memory estimate ---- */

/* The default limit: half the machine's physical memory.  The estimate
 * leaves out what protocols keep per neighbour, and the machine is rarely
 * ours alone; limits.memory_bytes or --force go further. */
static double default_memory_limit(void)
{
    long pages = sysconf(_SC_PHYS_PAGES), size = sysconf(_SC_PAGE_SIZE);
    return pages > 0 && size > 0 ? 0.5 * (double)pages * (double)size : INFINITY;
}

static void fmt_bytes(char *buf, size_t n, double b)
{
    static const char *const unit[] = {"B", "KB", "MB", "GB", "TB", "PB", "EB"};
    int k = 0;
    while (b >= 1000 && k < 6) {
        b /= 1000;
        k++;
    }
    snprintf(buf, n, "%.3g %s", b, unit[k]);
}

/* Edges of the topology as the scenario describes it (an upper bound for
 * the random kinds), before it is built. */
static double edges_estimate(const scn_scenario *s)
{
    double n = s->n_nodes;
    switch (s->topo_kind) {
    case TOPO_COMPLETE:
        return n * (n - 1) / 2;
    case TOPO_ERDOS_RENYI:
        return s->topo_p * n * (n - 1) / 2;
    case TOPO_RANDOM_REGULAR:
        return n * s->topo_degree / 2;
    default:
        return 2 * n;
    }
}

/* Refuses (exit 2, see docs/reliability.md) a run whose estimate exceeds
 * the limit.  Before anything is built (P == 0) only the nodes, the
 * topology and generated data are counted; once the data and model exist,
 * the whole run: P doubles x RUN_MEM_COPIES (+1 with momentum) per node
 * (servers included), the data held, RUN_MEM_PER_NODE bytes of per-node
 * state (RNG streams, queues, statistics) and 64 bytes per edge. */
#define RUN_MEM_COPIES   4        /* parameters, gradient, two in flight or kept */
#define RUN_MEM_PER_NODE 24576.0  /* four mt19937 streams and the node records */
static int check_memory(const run_sim *r, size_t P, double data_bytes, scn_error *err)
{
    const scn_scenario *s = r->s;
    if (!s->limit_check_memory)
        return 0;
    double data = 0;
    if (P == 0) {
        double rows = (double)s->data_train + (double)s->data_test;
        data = scn_data_generated(s->data_source)
             ? rows * ((double)s->data_features + 2) * 8 : 0;
    }
    if (r->train.x)   /* loaded or generated: what it really holds */
        data = ((double)r->train.n * ((double)r->train.d + 3)
                + (double)r->test.n * ((double)r->test.d + 2)) * 8;
    if (data_bytes > 0)
        data = data_bytes;
    int copies = RUN_MEM_COPIES + (s->opt_momentum > 0);
    double model = (double)r->n_all * (double)P * copies * 8;
    double nodes = (double)r->n_all * RUN_MEM_PER_NODE;
    double edges = edges_estimate(s) * 64;
    double total = model + data + nodes + edges;
    double limit = s->limit_memory_bytes > 0 ? s->limit_memory_bytes : default_memory_limit();
    if (total <= limit)
        return 0;
    char t[32], l[32], m[32], d[32], n[32], e[32];
    fmt_bytes(t, sizeof t, total);
    fmt_bytes(l, sizeof l, limit);
    fmt_bytes(m, sizeof m, model);
    fmt_bytes(d, sizeof d, data);
    fmt_bytes(n, sizeof n, nodes);
    fmt_bytes(e, sizeof e, edges);
    char models[160];
    if (P > 0)
        snprintf(models, sizeof models, "models %d nodes x %zu parameters x %d copies = %s, ",
                 r->n_all, P, copies, m);
    else
        models[0] = '\0';   /* before the model exists */
    snprintf(err->msg, sizeof err->msg,
             "%s: error: this run needs about %s of memory (%sdata %s, per-node state %s, "
             "topology %s), more than the limit of %s (%s); lower the size, set "
             "limits.memory_bytes, or run with --force", s->path, t, models, d, n, e, l,
             s->limit_memory_bytes > 0 ? "limits.memory_bytes" : "half this machine's memory");
    return -1;
}

/* Refuses a run that would take more than RUN_MAX_STEPS steps in all (at
 * a million steps per second, eleven days): a stop time far beyond the
 * step time (e.g. step_time_s 1e-300) or an absurd stop.steps would
 * otherwise look like a hang.  The bound counts steps at each worker's
 * base step time, as if nothing ever waited. */
static int check_work(const run_sim *r, scn_error *err)
{
    const scn_scenario *s = r->s;
    double fastest = INFINITY, steps;
    int who = 0;
    for (int i = 0; i < s->n_nodes; i++)
        if (r->step_times[i] < fastest) {
            fastest = r->step_times[i];
            who = i;
        }
    char m[512];
    if (s->stop_steps > 0 && (double)s->stop_steps * s->n_nodes > RUN_MAX_STEPS) {
        snprintf(m, sizeof m, "%ld steps per node on %d nodes is more than %.0e steps in all; "
                 "lower stop.steps", s->stop_steps, s->n_nodes, RUN_MAX_STEPS);
        value_error(err, s, "/stop/steps", m);
        return -1;
    }
    steps = s->stop_time_s / fastest * s->n_nodes;
    if (s->stop_steps == 0 && !(steps <= RUN_MAX_STEPS)) {
        snprintf(m, sizeof m, "reaching %g s takes about %.3g steps at node %d's step time of "
                 "%g s (%d nodes), more than %.0e in all; lower stop.time_s or set "
                 "stop.steps", s->stop_time_s, steps, who, fastest, s->n_nodes, RUN_MAX_STEPS);
        value_error(err, s, "/stop/time_s", m);
        return -1;
    }
    return 0;
}

run_sim *run_prepare(const scn_scenario *s, scn_error *err)
{
    run_sim *r = calloc(1, sizeof *r);
    if (!r) {
        snprintf(err->msg, sizeof err->msg, "%s: error: out of memory", s->path);
        return NULL;
    }
    r->s = s;
    r->alg = alg_find(s->algorithm);
    if (!r->alg) {
        char m[512];
        snprintf(m, sizeof m, "unknown algorithm \"%s\" (expected one of: %s)", s->algorithm,
                 alg_names());
        value_error(err, s, "/algorithm/name", m);
        goto out_destroy;
    }
    /* parameters first: they may decide how many servers the protocol adds */
    r->ctx.n = s->n_nodes;
    r->ctx.lr = s->lr;
    if (resolve_params(r, err) != 0)
        goto out_destroy;
    int servers = r->alg->n_servers ? r->alg->n_servers(&r->ctx) : r->alg->servers;
    r->n_all = s->n_nodes + servers;
    r->timing_only = s->model_type == NULL;
    if (check_memory(r, 0, 0, err) != 0 || build_topology(r, err) != 0
        || build_data(r, err) != 0
        || check_memory(r, r->model ? mdl_n_params(r->model) : 0, 0, err) != 0)
        goto out_destroy;

    r->ctx.g = r->g;
    r->ctx.n_all = r->n_all;
    r->ctx.server = servers ? s->n_nodes : -1;
    r->ctx.P = r->model ? mdl_n_params(r->model) : 0;
    if (r->alg->check) {
        char m[512];
        if (r->alg->check(&r->ctx, m, sizeof m) != 0) {
            value_error(err, s, "/algorithm/name", m);
            goto out_destroy;
        }
    }
    r->step_times = malloc((size_t)r->n_all * sizeof(double));
    r->avg = malloc((r->ctx.P ? r->ctx.P : 1) * sizeof(double));
    r->wd_hits = calloc((size_t)r->n_all, sizeof *r->wd_hits);
    if (!r->step_times || !r->avg || !r->wd_hits || build_heterogeneity(r) != 0) {
        snprintf(err->msg, sizeof err->msg, "%s: error: out of memory", s->path);
        goto out_destroy;
    }
    if (check_work(r, err) != 0)
        goto out_destroy;
    return r;

out_destroy:
    run_destroy(r);
    return NULL;
}

void run_destroy(run_sim *r)
{
    if (!r)
        return;
    for (int k = 0; k < ALG_MAX_PARAMS; k++)
        free(r->paths[k]);
    free(r->avg);
    free(r->wd_hits);
    free(r->step_times);
    free(r->noise);
    free(r->up_Bps);
    free(r->down_Bps);
    free(r->slows);
    free(r->faults);
    free(r->points);
    free(r->classes);
    free(r->rules);
    free(r->windows);
    free(r->eval_idx);
    free(r->test_idx);
    topo_destroy(r->g);
    mdl_destroy(r->model);
    mdl_partition_fini(&r->part);
    mdl_dataset_fini(&r->train);
    mdl_dataset_fini(&r->test);
    free(r);
}

const topo_graph *run_graph(const run_sim *r) { return r->g; }

