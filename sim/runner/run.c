/* run.c -- wires one simulation together (see run.h): data, partition,
 * model, topology, engine, cluster and algorithm from the scenario; the
 * event loop with its stop conditions and stall detection; periodic
 * evaluation of the average model; and the output files.  Event handling
 * itself belongs to the cluster and the algorithm; this file only routes.
 */
#include "run.h"
#include "alg.h"
#include "cl_cluster.h"
#include "mdl.h"
#include "mdl_optim.h"
#include "sim_engine.h"
#include "sim_rng.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <gsl/gsl_cblas.h>
#include <gsl/gsl_randist.h>

enum { EV_METRICS = CL_EV_USER };
enum { STOP_STEPS = 1, STOP_TARGET_LOSS, STOP_TARGET_ACCURACY, STOP_STALL, STOP_INTERRUPT,
       STOP_DIVERGED, STOP_NO_PROGRESS };

struct run_sim {
    const scn_scenario *s;
    mdl_dataset   train, test;
    mdl_partition part;
    mdl_model    *model;
    topo_graph   *g;
    const alg_type *alg;
    int           timing_only;  /* model "none": no parameters, data or evaluation */
    alg_ctx       ctx;
    int           n_all;      /* workers and the algorithm's servers */
    double       *step_times;
    cl_noise_spec *noise;
    double       *up_Bps, *down_Bps;
    cl_slowdown  *slows;
    cl_fault     *faults;
    cl_point     *points;      /* every trace's points, converted */
    cl_link_class *classes;    /* 0: the default link; k + 1: links[k] */
    cl_link_rule *rules;
    cl_window    *windows;     /* every class's outages */
    size_t       *eval_idx;
    size_t        n_eval;
    size_t       *test_idx;     /* seeded test subset, or NULL for all */
    size_t        n_test_eval;
    double       *avg;
    mdl_partition_stats pstats;

    /* per execution */
    sim_engine   *eng;
    cl_cluster   *cl;
    const run_options *opt;
    FILE         *mf;
    FILE         *nmf;          /* node_metrics.csv, or NULL */
    FILE         *tf;          /* trace.csv, or NULL */
    out_metrics_row last;
    int           have_last;
    uint64_t      metrics_k, stop_steps_total;
    char          diverged[512];  /* why the run diverged, or empty */
    /* watchdog: events at the current instant and message/timer events
     * since the last step; per-node counts once past half the limit */
    uint64_t      wd_limit, wd_instant, wd_nostep, wd_steps;
    double        wd_time;
    uint64_t     *wd_hits;
    int           wd_counting;
    char          stuck[1024];
};

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
                     .path = s->topo_file, .lazy_alpha = s->topo_lazy_alpha };
    int kind = topo_kind_from_name(s->topology);
    int mixing = topo_mixing_from_name(s->topo_mixing ? s->topo_mixing : "metropolis_hastings");
    char m[512];
    if (kind < 0 || mixing < 0) {
        snprintf(m, sizeof m, "unknown %s \"%s\" (expected one of: %s)",
                 kind < 0 ? "topology" : "mixing", kind < 0 ? s->topology : s->topo_mixing,
                 kind < 0 ? topo_kind_names() : topo_mixing_names());
        value_error(err, s, kind < 0 ? "/topology/kind" : "/topology/mixing", m);
        return -1;
    }
    ts.kind = (topo_kind)kind;
    ts.mixing = (topo_mixing)mixing;
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
    const int csv = strcmp(s->data_kind, "csv") == 0;
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
                                 sim_rng_derive(s->seed, SIM_RNG_NO_NODE, SIM_RNG_DATAGEN),
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
    if (strcmp(s->data_kind, "libsvm") == 0 || strcmp(s->data_kind, "csv") == 0) {
        if (load_text(r, m, sizeof m) != 0) {
            snprintf(err->msg, sizeof err->msg, "%s", m);
            return -1;
        }
        goto out_subsets;
    }
    if (strcmp(s->data_kind, "idx") == 0) {
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
    if (strcmp(s->data_kind, "synthetic") == 0) {
        mdl_synth_spec sp = { .n_train = s->data_train, .n_test = s->data_test,
                              .d = s->data_features, .n_classes = s->data_classes,
                              .separation = s->data_separation };
        if (mdl_synth_generate(&sp, sim_rng_derive(s->seed, SIM_RNG_NO_NODE, SIM_RNG_DATAGEN),
                               &r->train, &r->test) != 0)
            goto out_oom;
    } else if (strncmp(s->data_kind, "synthetic-", 10) == 0) {
        mdl_synth_linear_spec sp = { .n_train = s->data_train, .n_test = s->data_test,
                                     .d = s->data_features, .separation = s->data_separation,
                                     .noise = s->data_noise };
        const uint64_t seed = sim_rng_derive(s->seed, SIM_RNG_NO_NODE, SIM_RNG_DATAGEN);
        if ((strcmp(s->data_kind, "synthetic-logistic") == 0
                 ? mdl_synth_logistic(&sp, seed, &r->train, &r->test, NULL)
                 : mdl_synth_regression(&sp, seed, &r->train, &r->test, NULL)) != 0)
            goto out_oom;
    } else if (load_files(r, err) != 0) {
        return -1;
    }
    /* a file's size is known only now: check before touching it again */
    if (check_memory(r, 0, 0, err) != 0)
        return -1;
    if (mdl_dataset_scale(&r->train, &r->test, (mdl_scale)s->data_scale) != 0)
        goto out_oom;

    static const char *const kinds[] = {"iid", "dirichlet", "shards", "quantity"};
    mdl_partition_spec ps = { .n_nodes = s->n_nodes, .alpha = s->partition_alpha,
                              .shards_per_node = s->partition_shards,
                              .exponent = s->partition_exponent, .min_samples = s->batch };
    for (int k = 0; k < 4; k++)
        if (strcmp(s->partition, kinds[k]) == 0)
            ps.kind = (mdl_partition_kind)k;
    if (mdl_partition_build(&ps, &r->train,
                            sim_rng_derive(s->seed, SIM_RNG_NO_NODE, SIM_RNG_PARTITION),
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

    const mdl_type *t = mdl_type_find(s->model);
    if (!t) {
        snprintf(m, sizeof m, "unknown model \"%s\" (expected one of: %s)", s->model,
                 mdl_type_names());
        value_error(err, s, "/model/kind", m);
        return -1;
    }
    if (t == &mdl_logistic && r->train.n_classes != 2) {
        snprintf(m, sizeof m, "model \"logistic\" needs 2 classes, the data has %d",
                 r->train.n_classes);
        value_error(err, s, "/model/kind", m);
        return -1;
    }
    mdl_arch a = { .d = r->train.d, .n_classes = r->train.n_classes,
                   .n_hidden = s->model_n_hidden, .act = (mdl_activation)s->model_activation };
    for (size_t l = 0; l < s->model_n_hidden; l++)
        a.hidden[l] = s->model_hidden[l];
    r->model = mdl_create_arch(t, &a, s->l2, s->batch);
    if (!r->model)
        goto out_oom;
    /* The training subset keeps its historical stream; the test subset
     * takes node 0's evaluation stream so that neither shifts the other. */
    if (pick_subset(r->train.n, s->metrics_eval_samples,
                    sim_rng_derive(s->seed, SIM_RNG_NO_NODE, SIM_RNG_EVAL),
                    &r->eval_idx, &r->n_eval) != 0
        || pick_subset(r->test.n, s->metrics_test_samples,
                       sim_rng_derive(s->seed, 0, SIM_RNG_EVAL),
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
                            .jitter = (cl_jitter)p->jitter, .jitter_a = p->jitter_a,
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
        scn_noise_spec ns = scn_node_noise(s, i);
        r->noise[i] = (cl_noise_spec){ .dist = (cl_noise)ns.dist, .low = ns.low, .high = ns.high,
                                       .sigma = ns.sigma, .floor = ns.floor, .shift = ns.shift,
                                       .shape = ns.shape, .alpha = ns.alpha };
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
        *o = (cl_slowdown){ .kind = (cl_slow_kind)d->kind, .nodes = d->nodes,
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
        *o = (cl_fault){ .kind = (cl_fault_kind)f->kind, .nodes = f->nodes,
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
    if (strcmp(s->topology, "complete") == 0)
        return n * (n - 1) / 2;
    if (strcmp(s->topology, "erdos_renyi") == 0)
        return s->topo_p * n * (n - 1) / 2;
    if (strcmp(s->topology, "random_regular") == 0)
        return n * s->topo_degree / 2;
    return 2 * n;
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
        data = strncmp(s->data_kind, "synthetic", 9) == 0
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
    r->timing_only = strcmp(s->model, "none") == 0;
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

/* ---- callbacks from the cluster to the algorithm ---- */

static void cb_step_done(void *vr, int node, const double *grad)
{
    run_sim *r = vr;
    r->alg->on_step_done(&r->ctx, alg_state(&r->ctx, node), node, grad);
}

static void cb_message(void *vr, int node, const cl_msg *m)
{
    run_sim *r = vr;
    r->alg->on_message(&r->ctx, alg_state(&r->ctx, node), node, m);
}

/* A node that comes back with rejoin "neighbour" takes the parameters of
 * its first neighbour (in the topology's order) that is up; with none up,
 * or rejoin "keep", it keeps its own. */
static void cb_up(void *vr, int node)
{
    run_sim *r = vr;
    if (strcmp(r->s->fault_rejoin, "neighbour") != 0)
        return;
    const topo_graph *g = r->g;
    for (size_t e = g->off[node]; e < g->off[node + 1]; e++) {
        int j = g->nbr[e];
        if (cl_is_up(r->cl, j)) {
            memcpy(cl_params(r->cl, node), cl_params_const(r->cl, j), r->ctx.P * sizeof(double));
            return;
        }
    }
}

static void cb_trace(void *vr, const cl_trace_rec *t)
{
    run_sim *r = vr;
    out_trace_row row = { t->node, t->kind, t->start_s, t->end_s, t->peer, t->bytes };
    out_trace_write(r->tf, &row);
}

/* ---- evaluation ---- */

static void evaluate(run_sim *r, out_metrics_row *row)
{
    int n = r->ctx.n;
    size_t P = r->ctx.P;
    /* The mean is taken as x_0 + mean_i (x_i - x_0), in node order: exactly
     * x_0 when every node holds the same model, so a consensus distance of
     * zero means identical models, not a rounding coincidence. */
    const double *x0 = cl_params_const(r->cl, 0);
    memset(r->avg, 0, P * sizeof(double));
    for (int i = 1; i < n; i++) {
        const double *x = cl_params_const(r->cl, i);
        for (size_t k = 0; k < P; k++)
            r->avg[k] += x[k] - x0[k];
    }
    for (size_t k = 0; k < P; k++)
        r->avg[k] = x0[k] + r->avg[k] / n;
    double cd = 0;
    for (int i = 0; i < n; i++) {
        const double *x = cl_params_const(r->cl, i);
        for (size_t k = 0; k < P; k++) {
            double d = x[k] - r->avg[k];
            cd += d * d;
        }
    }
    double acc;
    const double *model = r->alg->eval_params ? r->alg->eval_params(&r->ctx) : r->avg;
    row->time_s = sim_engine_now(r->eng);
    row->steps = cl_total_steps(r->cl);
    if (r->timing_only) {
        /* no model to evaluate and no data to count epochs over */
        row->epochs = row->train_loss = row->test_loss = row->test_accuracy = NAN;
    } else {
        row->epochs = (double)cl_samples_processed(r->cl) / (double)r->train.n;
        mdl_evaluate(r->model, model, &r->train, r->eval_idx, r->n_eval, &row->train_loss,
                     &acc);
        mdl_evaluate(r->model, model, &r->test, r->test_idx, r->n_test_eval, &row->test_loss,
                     &row->test_accuracy);
    }
    row->consensus_distance = sqrt(cd / n);
    row->bytes_sent = cl_total_bytes_sent(r->cl);
}

/* node_metrics.csv: every node's own model on the same test samples as
 * the average model, one row per node per evaluation instant. */
static void record_nodes(run_sim *r, double time_s)
{
    for (int i = 0; i < r->ctx.n; i++) {
        double loss = NAN, acc = NAN;
        if (!r->timing_only)
            mdl_evaluate(r->model, cl_params_const(r->cl, i), &r->test, r->test_idx,
                         r->n_test_eval, &loss, &acc);
        out_fmt_double(r->nmf, time_s);
        fprintf(r->nmf, ",%d,%" PRIu64 ",", i, cl_stats(r->cl, i)->steps);
        out_fmt_double(r->nmf, loss);
        fputc(',', r->nmf);
        out_fmt_double(r->nmf, acc);
        fputc('\n', r->nmf);
    }
}

static void record(run_sim *r, const out_metrics_row *row)
{
    if (r->mf)
        out_metrics_write(r->mf, row);
    if (r->nmf)
        record_nodes(r, row->time_s);
    if (r->opt->on_metrics)
        r->opt->on_metrics(r->opt->hook_ctx, row);
    r->last = *row;
    r->have_last = 1;
}

/* An evaluation whose loss is NaN or infinite ends the run as diverged
 * before the row is written, so metrics.csv holds only finite rows.  It
 * names the first node (in node order) holding a parameter that is not
 * finite, or the average model when every node's parameters are finite
 * but the loss overflowed.  O(n P), only on this path. */
static int metrics_diverged(run_sim *r, const out_metrics_row *row)
{
    /* timing only: there is no loss (nan by design) */
    if (r->timing_only || (isfinite(row->train_loss) && isfinite(row->test_loss)))
        return 0;
    const char *what = isfinite(row->train_loss) ? "test loss" : "train loss";
    double v = isfinite(row->train_loss) ? row->test_loss : row->train_loss;
    for (int i = 0; i < r->n_all; i++) {
        const double *x = cl_params_const(r->cl, i);
        for (size_t k = 0; k < r->ctx.P; k++) {
            if (!isfinite(x[k])) {
                snprintf(r->diverged, sizeof r->diverged,
                         "diverged at t=%.10g s: the evaluated %s is %s; node %d (after %"
                         PRIu64 " steps) holds parameter %zu = %s", row->time_s, what,
                         isnan(v) ? "nan" : "inf", i, cl_stats(r->cl, i)->steps, k,
                         isnan(x[k]) ? "nan" : x[k] > 0 ? "inf" : "-inf");
                return 1;
            }
        }
    }
    snprintf(r->diverged, sizeof r->diverged,
             "diverged at t=%.10g s: the evaluated %s of the average model is %s "
             "(every parameter finite; the loss overflowed)", row->time_s, what,
             isnan(v) ? "nan" : "inf");
    return 1;
}

static int on_metrics_event(run_sim *r)
{
    out_metrics_row row;
    evaluate(r, &row);
    if (metrics_diverged(r, &row))
        return STOP_DIVERGED;
    record(r, &row);
    const scn_scenario *s = r->s;
    if (!isnan(s->stop_target_loss) && row.train_loss <= s->stop_target_loss)
        return STOP_TARGET_LOSS;
    if (!isnan(s->stop_target_accuracy) && row.test_accuracy >= s->stop_target_accuracy)
        return STOP_TARGET_ACCURACY;
    if (cl_pending(r->cl) == 0)
        return STOP_STALL;
    r->metrics_k++;
    if (sim_engine_schedule_at(r->eng, (double)r->metrics_k * s->metrics_every_s, EV_METRICS,
                               (uint32_t)r->n_all, 0) != 0) {
        fputs("dtsim: error: out of memory\n", stderr);
        exit(1);
    }
    return 0;
}

static int handle_event(run_sim *r, const sim_event *ev)
{
    if (ev->kind == EV_METRICS)
        return on_metrics_event(r);
    cl_handle_event(r->cl, ev);
    if (ev->kind == CL_EV_STEP_DONE && r->stop_steps_total
        && cl_total_steps(r->cl) >= r->stop_steps_total)
        return STOP_STEPS;
    if (cl_pending(r->cl) == 0)
        return STOP_STALL;
    return 0;
}

uint64_t run_watchdog_limit(int n_all)
{
    return RUN_WATCHDOG_BASE + RUN_WATCHDOG_PER_NODE * (uint64_t)(n_all > 0 ? n_all : 0);
}

/* The busiest nodes of the second half of a watchdog window, most events
 * first (ties by node number), up to 8 of them, with each one's own
 * description of what it waits for. */
static void describe_busy(run_sim *r, char *buf, size_t size)
{
    size_t len = 0;
    buf[0] = '\0';
    for (int shown = 0; shown < 8; shown++) {
        int best = -1;
        for (int i = 0; i < r->n_all; i++)
            if (r->wd_hits[i] && (best < 0 || r->wd_hits[i] > r->wd_hits[best]))
                best = i;
        if (best < 0 || len >= size)
            break;
        char what[256] = "";
        if (r->alg->describe_wait)
            r->alg->describe_wait(&r->ctx, alg_state(&r->ctx, best), best, what, sizeof what);
        len += (size_t)snprintf(buf + len, size - len, "%s node %d (%" PRIu64 " events%s%s)",
                                shown ? ";" : "", best, r->wd_hits[best],
                                what[0] ? ", waiting for " : "", what);
        r->wd_hits[best] = 0;
    }
}

static void watchdog_reset(run_sim *r)
{
    if (r->wd_counting) {
        memset(r->wd_hits, 0, (size_t)r->n_all * sizeof *r->wd_hits);
        r->wd_counting = 0;
    }
}

/* After each event: O(1) unless a window passes half the limit. */
static int watchdog(run_sim *r, const sim_event *ev)
{
    double now = sim_engine_now(r->eng);
    uint64_t steps = cl_total_steps(r->cl);
    int progress = 0;
    if (now > r->wd_time) {
        r->wd_time = now;
        r->wd_instant = 0;
        progress = 1;
    }
    if (steps != r->wd_steps) {
        r->wd_steps = steps;
        r->wd_nostep = 0;
        progress = 1;
    }
    if (progress && (r->wd_instant < r->wd_limit / 2 && r->wd_nostep < r->wd_limit / 2))
        watchdog_reset(r);
    r->wd_instant++;
    if (ev->kind == CL_EV_ARRIVE || ev->kind == CL_EV_DELIVER || ev->kind == CL_EV_TIMER
        || ev->kind == CL_EV_NIC)
        r->wd_nostep++;
    if (r->wd_instant > r->wd_limit / 2 || r->wd_nostep > r->wd_limit / 2) {
        r->wd_counting = 1;
        if (ev->target < (uint32_t)r->n_all)
            r->wd_hits[ev->target]++;
    }
    if (r->wd_instant <= r->wd_limit && r->wd_nostep <= r->wd_limit)
        return 0;
    char busy[768];
    describe_busy(r, busy, sizeof busy);
    if (r->wd_instant > r->wd_limit)
        snprintf(r->stuck, sizeof r->stuck,
                 "no progress at t=%.10g s: %" PRIu64 " events without simulated time "
                 "advancing (watchdog limit %" PRIu64 "); busiest:%s", now, r->wd_instant,
                 r->wd_limit, busy);
    else
        snprintf(r->stuck, sizeof r->stuck,
                 "no progress at t=%.10g s: %" PRIu64 " message and timer events without a "
                 "step completing (watchdog limit %" PRIu64 "); busiest:%s", now, r->wd_nostep,
                 r->wd_limit, busy);
    return STOP_NO_PROGRESS;
}

/* The interrupt flag is read after the event is handled, so the state an
 * interrupted run reports is that of a whole number of events. */
static int handle(void *vr, const sim_event *ev)
{
    run_sim *r = vr;
    int code = handle_event(r, ev);
    if (code == 0)
        code = watchdog(r, ev);
    if (code == 0 && cl_divergence_get(r->cl)->diverged) {
        const cl_divergence *d = cl_divergence_get(r->cl);
        snprintf(r->diverged, sizeof r->diverged,
                 "diverged at t=%.10g s: node %d's minibatch loss was %s at the start of its "
                 "step %" PRIu64, d->time_s, d->node, isnan(d->loss) ? "nan"
                 : d->loss > 0 ? "inf" : "-inf", d->step);
        code = STOP_DIVERGED;
    }
    if (code == 0 && r->opt->interrupt && *r->opt->interrupt)
        code = STOP_INTERRUPT;
    if (r->opt->on_progress) {
        uint64_t k = sim_engine_events_processed(r->eng);
        if (k % RUN_PROGRESS_EVENTS == 0)
            r->opt->on_progress(r->opt->hook_ctx, sim_engine_now(r->eng), k);
    }
    return code;
}

static void describe_stall(run_sim *r, run_result *res)
{
    size_t len = (size_t)snprintf(res->message, sizeof res->message,
        "stalled at t=%.10g s: no event left before the stop condition; waiting:",
        sim_engine_now(r->eng));
    int shown = 0, n = r->n_all;
    for (int i = 0; i < n && len < sizeof res->message; i++) {
        char what[256];
        int down = !cl_is_up(r->cl, i);
        if (r->alg->describe_wait)
            r->alg->describe_wait(&r->ctx, alg_state(&r->ctx, i), i, what, sizeof what);
        else
            snprintf(what, sizeof what, "%s", cl_is_computing(r->cl, i) ? "its step" : "");
        if (!what[0] && !down)
            continue;
        if (shown == 16) {
            snprintf(res->message + len, sizeof res->message - len, " ...");
            break;
        }
        len += (size_t)snprintf(res->message + len, sizeof res->message - len,
                                "%s node %d%s%s%s", shown ? ";" : "", i,
                                down ? " (down)" : "", what[0] ? " for " : "", what);
        shown++;
    }
}

static double seconds(clockid_t id)
{
    struct timespec ts;
    clock_gettime(id, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* ---- output ---- */

static int write_nodes(run_sim *r, const char *dir, double end, char *err, size_t es)
{
    out_file *f = out_file_open(dir, "nodes.csv", err, es);
    if (!f)
        return -1;
    FILE *fp = out_file_stream(f);
    out_nodes_header(fp);
    cl_stats_settle(r->cl);
    for (int i = 0; i < r->n_all; i++) {
        const cl_node_stats *st = cl_stats(r->cl, i);
        double busy = cl_compute_time(r->cl, i);
        out_node_row row = {
            .node = i, .slowdown = scn_node_slowdown(r->s, i), .steps = st->steps,
            .compute_s = busy, .idle_s = end - busy - st->network_s - st->down_s,
            .uplink_busy_s = st->uplink_busy_s,
            .bytes_sent = st->bytes_sent, .bytes_received = st->bytes_received,
            .msgs_sent = st->msgs_sent, .msgs_received = st->msgs_received,
            .network_s = st->network_s, .down_s = st->down_s,
            .msgs_lost = st->msgs_lost, .steps_lost = st->steps_lost,
        };
        out_nodes_write(fp, &row);
    }
    return out_file_commit(f, err, es);
}

static int write_run_json(run_sim *r, const char *dir, const run_result *res,
                          char *err, size_t es)
{
    out_file *f = out_file_open(dir, "run.json", err, es);
    if (!f)
        return -1;
    out_json j;
    out_json_init(&j, out_file_stream(f));
    out_json_begin_object(&j, NULL);
    out_json_string(&j, "dtsim_version", DTSIM_VERSION);
    out_json_string(&j, "cblas", DTSIM_CBLAS);
    out_json_string(&j, "scenario_file", r->s->path);
    out_json_int(&j, "seed", (int64_t)r->s->seed);
    out_json_string(&j, "status", run_status_name(res->status));
    out_json_string(&j, "stop_reason", res->stop_reason);
    if (res->message[0])
        out_json_string(&j, "message", res->message);
    out_json_number(&j, "sim_time_s", res->sim_time_s);
    out_json_int(&j, "events", (int64_t)res->events);
    out_json_number(&j, "wall_s", res->wall_s);
    out_json_number(&j, "cpu_s", res->cpu_s);
    out_json_number(&j, "events_per_cpu_s", res->cpu_s > 0 ? (double)res->events / res->cpu_s : NAN);
    out_json_int(&j, "n_params", (int64_t)res->n_params);
    out_json_begin_object(&j, "topology");
    out_json_string(&j, "kind", r->s->topology);
    out_json_int(&j, "nodes", res->topo.n);
    out_json_int(&j, "edges", (int64_t)res->topo.n_edges);
    out_json_int(&j, "degree_min", res->topo.degree_min);
    out_json_int(&j, "degree_max", res->topo.degree_max);
    if (res->topo.diameter_ok)
        out_json_int(&j, "diameter", res->topo.diameter);
    else
        out_json_raw(&j, "diameter", "null");
    out_json_bool(&j, "bipartite", r->g->bipartite);
    out_json_string(&j, "mixing", topo_mixing_name(r->g->mixing));
    out_json_number(&j, "lazy_alpha", r->g->lazy_alpha);
    out_json_bool(&j, "symmetric", r->g->symmetric);
    out_json_string(&j, "spectral_solver", res->topo.solver ? res->topo.solver : "dense");
    if (res->topo.spectral_ok) {
        out_json_number(&j, "lambda2", res->topo.lambda2);
        out_json_number(&j, "spectral_gap", res->topo.spectral_gap);
    } else {
        out_json_raw(&j, "lambda2", "null");
        out_json_raw(&j, "spectral_gap", "null");
    }
    out_json_end_object(&j);
    if (r->timing_only) {
        out_json_raw(&j, "data", "null");
        out_json_raw(&j, "partition", "null");
    } else {
        out_json_begin_object(&j, "data");
        out_json_string(&j, "kind", r->s->data_kind);
        out_json_int(&j, "train", (int64_t)r->train.n);
        out_json_int(&j, "test", (int64_t)r->test.n);
        out_json_int(&j, "features", (int64_t)r->train.d);
        out_json_int(&j, "classes", r->train.n_classes);
        out_json_int(&j, "test_evaluated", (int64_t)(r->test_idx ? r->n_test_eval : r->test.n));
        out_json_end_object(&j);
        out_json_begin_object(&j, "partition");
        out_json_string(&j, "kind", r->s->partition);
        out_json_int(&j, "samples_min", (int64_t)r->pstats.samples_min);
        out_json_number(&j, "samples_mean", r->pstats.samples_mean);
        out_json_int(&j, "samples_max", (int64_t)r->pstats.samples_max);
        out_json_int(&j, "classes_min", r->pstats.classes_min);
        out_json_number(&j, "classes_mean", r->pstats.classes_mean);
        out_json_int(&j, "classes_max", r->pstats.classes_max);
        out_json_end_object(&j);
    }
    out_json_begin_object(&j, "final");
    out_json_number(&j, "time_s", res->last.time_s);
    out_json_int(&j, "steps", (int64_t)res->last.steps);
    out_json_number(&j, "epochs", res->last.epochs);
    out_json_number(&j, "train_loss", res->last.train_loss);
    out_json_number(&j, "test_loss", res->last.test_loss);
    out_json_number(&j, "test_accuracy", res->last.test_accuracy);
    out_json_number(&j, "consensus_distance", res->last.consensus_distance);
    out_json_number(&j, "bytes_sent", res->last.bytes_sent);
    out_json_end_object(&j);
    out_json_begin_object(&j, "algorithm_params");
    for (int i = 0; r->alg->params && r->alg->params[i].key; i++) {
        const alg_param_spec *sp = &r->alg->params[i];
        if (sp->kind == ALG_PARAM_CHOICE)
            out_json_string(&j, sp->key, sp->choices[(int)r->ctx.param[i]]);
        else
            out_json_number(&j, sp->key, r->ctx.param[i]);
    }
    out_json_end_object(&j);
    if (res->n_stats > 0) {
        out_json_begin_object(&j, "algorithm_stats");
        for (int i = 0; i < res->n_stats; i++)
            out_json_number(&j, res->stat_keys[i], res->stat_values[i]);
        out_json_end_object(&j);
    }
    out_json_raw(&j, "scenario", r->s->resolved_json);
    out_json_end_object(&j);
    out_json_finish(&j);
    return out_file_commit(f, err, es);
}

/* ---- one execution ---- */

const char *run_status_name(run_status st)
{
    switch (st) {
    case RUN_OK:          return "ok";
    case RUN_STALLED:     return "stalled";
    case RUN_INTERRUPTED: return "interrupted";
    case RUN_DIVERGED:    return "diverged";
    case RUN_NO_PROGRESS: return "no_progress";
    }
    return "unknown";
}

static int start(run_sim *r)
{
    const scn_scenario *s = r->s;
    int n = r->n_all;
    r->eng = sim_engine_create((uint32_t)n + 1, 1024);
    cl_config cc = {
        .n_nodes = n, .seed = s->seed, .step_time_s = r->step_times,
        .noise_per_node = r->noise, .latency_s = s->latency_s,
        .bandwidth_Bps = s->bandwidth_Bps,
        .classes = r->classes, .n_classes = s->n_links + 1,
        .link_rules = r->rules, .n_link_rules = s->n_links, .reorder = s->reorder,
        .bytes_per_param = s->bytes_per_param / s->compression_ratio,
        .message_bytes = s->model_message_bytes / s->compression_ratio,
        .up_Bps = r->up_Bps, .down_Bps = r->down_Bps,
        .discipline = strcmp(s->discipline, "fair") == 0 ? CL_NIC_FAIR : CL_NIC_FIFO,
        .slowdowns = r->slows, .n_slowdowns = s->n_slowdowns,
        .faults = r->faults, .n_faults = s->n_faults,
        .step_policy = strcmp(s->fault_step, "resume") == 0 ? CL_STEP_RESUME : CL_STEP_RESTART,
        .msg_policy = strcmp(s->fault_messages, "keep_sent") == 0 ? CL_MSG_KEEP_SENT
                                                                 : CL_MSG_DROP,
        .model = r->model, .train = &r->train, .part = &r->part, .batch = s->batch,
    };
    cl_callbacks cb = { .ctx = r, .on_step_done = cb_step_done, .on_message = cb_message,
                        .on_up = cb_up,
                        .on_trace = r->tf ? cb_trace : NULL };
    if (!r->eng || !(r->cl = cl_create(&cc, r->eng, cb)))
        return -1;
    r->ctx.cl = r->cl;
    mdl_optim_spec os = {
        .lr = s->lr, .momentum = s->opt_momentum, .nesterov = s->opt_nesterov,
        .weight_decay = s->opt_weight_decay, .step_every = s->opt_step_every,
        .gamma = s->opt_step_gamma, .total_steps = s->opt_total_steps,
        .lr_min = s->opt_lr_min, .warmup_steps = s->opt_warmup_steps,
        .schedule = strcmp(s->opt_schedule, "step") == 0 ? MDL_SCHED_STEP
                  : strcmp(s->opt_schedule, "cosine") == 0 ? MDL_SCHED_COSINE
                  : MDL_SCHED_CONSTANT,
    };
    if (!(r->ctx.opt = mdl_optim_create(&os, n, r->ctx.P)))
        return -1;
    r->ctx.state_size = r->alg->state_size;
    r->ctx.states = calloc((size_t)n, r->alg->state_size ? r->alg->state_size : 1);
    r->ctx.rng = calloc((size_t)n, sizeof(gsl_rng *));
    if (!r->ctx.states || !r->ctx.rng)
        return -1;
    r->ctx.seed = s->seed;   /* the streams are created on first use (alg_rng) */
    if (r->alg->shared_init && r->alg->shared_init(&r->ctx) != 0)
        return -1;
    for (int i = 0; i < n; i++)
        if (r->alg->init && r->alg->init(&r->ctx, alg_state(&r->ctx, i), i) != 0)
            return -1;
    /* every node starts from the same model, as in the papers */
    gsl_rng *init = sim_rng_stream_create(s->seed, SIM_RNG_NO_NODE, SIM_RNG_INIT);
    if (!init)
        return -1;
    if (r->model)
        mdl_init_params(r->model, cl_params(r->cl, 0), init);
    gsl_rng_free(init);
    for (int i = 1; i < n; i++)
        memcpy(cl_params(r->cl, i), cl_params(r->cl, 0), r->ctx.P * sizeof(double));
    if (r->opt->init_params)
        for (int i = 0; i < n; i++)
            r->opt->init_params(r->opt->hook_ctx, i, cl_params(r->cl, i), r->ctx.P);
    return 0;
}

static void finish(run_sim *r)
{
    if (r->ctx.states)
        for (int i = 0; i < r->n_all && r->alg->fini; i++)
            r->alg->fini(&r->ctx, alg_state(&r->ctx, i), i);
    if (r->ctx.rng)
        for (int i = 0; i < r->n_all; i++)
            gsl_rng_free(r->ctx.rng[i]);
    free(r->ctx.rng);
    free(r->ctx.states);
    if (r->alg->shared_fini)
        r->alg->shared_fini(&r->ctx);
    r->ctx.shared = NULL;
    r->ctx.rng = NULL;
    r->ctx.states = NULL;
    mdl_optim_destroy(r->ctx.opt);
    r->ctx.opt = NULL;
    cl_destroy(r->cl);
    sim_engine_destroy(r->eng);
    r->cl = NULL;
    r->eng = NULL;
}

int run_execute(run_sim *r, const run_options *opt, run_result *res, char *err, size_t es)
{
    static const run_options none = { 0 };
    const scn_scenario *s = r->s;
    int rc = -1;
    out_file *mfile = NULL, *nfile = NULL, *tfile = NULL;
    memset(res, 0, sizeof *res);
    r->opt = opt ? opt : &none;
    if (r->opt->algorithm) {
        if (r->opt->algorithm->servers != r->n_all - s->n_nodes) {
            snprintf(err, es, "%s: error: the replacement algorithm needs the same number of "
                     "servers as the scenario's", s->path);
            return -1;
        }
        r->alg = r->opt->algorithm;
        alg_params_defaults(r->alg, &r->ctx);
    }
    r->have_last = 0;
    r->metrics_k = 0;
    r->diverged[0] = '\0';
    r->stuck[0] = '\0';
    r->wd_limit = r->opt->watchdog_events ? r->opt->watchdog_events
                                          : run_watchdog_limit(r->n_all);
    r->wd_instant = r->wd_nostep = r->wd_steps = 0;
    r->wd_time = 0;
    r->wd_counting = 1;
    watchdog_reset(r);
    r->mf = NULL;
    r->nmf = NULL;
    r->tf = NULL;
    r->stop_steps_total = s->stop_steps > 0 ? (uint64_t)s->stop_steps * (uint64_t)s->n_nodes : 0;

    if (topo_compute_stats(r->g, &res->topo) != 0) {
        snprintf(err, es, "%s: error: out of memory computing topology statistics", s->path);
        return -1;
    }
    if (r->opt->out_dir) {
        if (out_mkdirs(r->opt->out_dir, err, es) != 0)
            return -1;
        if (!(mfile = out_file_open(r->opt->out_dir, "metrics.csv", err, es)))
            return -1;
        r->mf = out_file_stream(mfile);
        out_metrics_header(r->mf);
        if (s->metrics_per_node) {
            if (!(nfile = out_file_open(r->opt->out_dir, "node_metrics.csv", err, es)))
                goto out_finish;
            r->nmf = out_file_stream(nfile);
            fputs("time_s,node,steps,test_loss,test_accuracy\n", r->nmf);
        }
        if (s->output_trace) {
            if (!(tfile = out_file_open(r->opt->out_dir, "trace.csv", err, es)))
                goto out_finish;
            r->tf = out_file_stream(tfile);
            out_trace_header(r->tf);
        }
    }
    if (start(r) != 0) {
        snprintf(err, es, "%s: error: out of memory starting the run", s->path);
        goto out_finish;
    }

    /* CPU time of this thread only: the simulation is single-threaded, and
     * OpenBLAS's idle worker threads spin at start-up (see bench/RESULTS.md) */
    double w0 = seconds(CLOCK_MONOTONIC), c0 = seconds(CLOCK_THREAD_CPUTIME_ID);
    if (sim_engine_schedule_at(r->eng, 0.0, EV_METRICS, (uint32_t)r->n_all, 0) != 0) {
        snprintf(err, es, "%s: error: out of memory", s->path);
        goto out_finish;
    }
    for (int i = 0; i < r->n_all; i++) {
        if (r->alg->on_start)
            r->alg->on_start(&r->ctx, alg_state(&r->ctx, i), i);
        else if (i < s->n_nodes)   /* by default every worker starts computing */
            cl_start_step(r->cl, i);
    }
    sim_stop why = sim_engine_run(r->eng, s->stop_time_s, handle, r);
    res->status = RUN_OK;
    if (why == SIM_STOP_HORIZON) {
        res->stop_reason = "time";
    } else {
        int code = why == SIM_STOP_HANDLER ? sim_engine_stop_code(r->eng) : STOP_STALL;
        res->stop_reason = code == STOP_STEPS ? "steps"
                         : code == STOP_TARGET_LOSS ? "target_loss"
                         : code == STOP_TARGET_ACCURACY ? "target_accuracy"
                         : code == STOP_INTERRUPT ? "interrupted"
                         : code == STOP_DIVERGED ? "diverged"
                         : code == STOP_NO_PROGRESS ? "no_progress" : "stalled";
        if (code == STOP_NO_PROGRESS) {
            res->status = RUN_NO_PROGRESS;
            snprintf(res->message, sizeof res->message, "%s", r->stuck);
        }
        if (code == STOP_INTERRUPT)
            res->status = RUN_INTERRUPTED;
        if (code == STOP_DIVERGED) {
            res->status = RUN_DIVERGED;
            snprintf(res->message, sizeof res->message, "%s", r->diverged);
        }
        if (code == STOP_STALL) {
            res->status = RUN_STALLED;
            describe_stall(r, res);
        }
    }
    /* a final row at the end instant, unless the models are no longer
     * finite: a diverged run keeps the rows written before */
    if (res->status != RUN_DIVERGED
        && (!r->have_last || r->last.time_s < sim_engine_now(r->eng))) {
        out_metrics_row row;
        evaluate(r, &row);
        if (metrics_diverged(r, &row)) {
            res->status = RUN_DIVERGED;
            res->stop_reason = "diverged";
            snprintf(res->message, sizeof res->message, "%s", r->diverged);
        } else {
            record(r, &row);
        }
    }
    res->wall_s = seconds(CLOCK_MONOTONIC) - w0;
    res->cpu_s = seconds(CLOCK_THREAD_CPUTIME_ID) - c0;
    res->sim_time_s = sim_engine_now(r->eng);
    res->events = sim_engine_events_processed(r->eng);
    res->last = r->last;
    res->n_params = r->ctx.P;
    if (r->alg->stats)
        res->n_stats = r->alg->stats(&r->ctx, res->stat_keys, res->stat_values, 16);

    if (r->opt->out_dir) {
        /* run.json last: its presence marks a complete run */
        if (out_file_commit(mfile, err, es) != 0) {
            mfile = NULL;
            goto out_finish;
        }
        mfile = NULL;
        if (nfile) {
            int c = out_file_commit(nfile, err, es);
            nfile = NULL;
            if (c != 0)
                goto out_finish;
        }
        if (tfile) {
            int trc = out_file_commit(tfile, err, es);
            tfile = NULL;
            r->tf = NULL;
            if (trc != 0)
                goto out_finish;
        }
        if (write_nodes(r, r->opt->out_dir, res->sim_time_s, err, es) != 0
            || write_run_json(r, r->opt->out_dir, res, err, es) != 0)
            goto out_finish;
    }
    rc = 0;

out_finish:
    out_file_abort(nfile);
    out_file_abort(mfile);
    out_file_abort(tfile);
    r->tf = NULL;
    finish(r);
    return rc;
}
