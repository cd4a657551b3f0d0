/* scn.h -- scenario files: JSON -> plain C structs, with validation and
 * error reporting in GNU form.  The only code that includes <jansson.h>:
 * callers see the structs below and never a JSON value.  Loading rejects
 * duplicate keys, unknown keys and wrong types, fills documented defaults
 * (docs/scenario.md) and applies --set overrides before validation.
 * It does not build anything the scenario describes.
 */
#ifndef SCN_H
#define SCN_H

#include <stddef.h>
#include <stdint.h>

/* First error wins.  msg is the whole line the user sees, e.g.
 * "scenarios/ring8.json: /algorithm/lr: error: must be > 0, got -0.1" or
 * "scenarios/ring8.json:12:17: error: duplicate object key near '\"lr\"'". */
typedef struct scn_error {
    char msg[1024];
} scn_error;

typedef enum scn_noise {
    SCN_NOISE_CONSTANT = 0,  /* factor 1 */
    SCN_NOISE_UNIFORM,       /* factor ~ U(low, high) */
    SCN_NOISE_EXPONENTIAL,   /* factor ~ Exp(mean 1) */
    SCN_NOISE_LOGNORMAL      /* factor ~ LogNormal(-sigma^2/2, sigma): mean 1 */
} scn_noise;

typedef struct scn_group {
    int   *nodes;      /* node numbers, sorted, no duplicates */
    size_t n_nodes;
    double slowdown;   /* step time multiplier, > 0 */
} scn_group;

/* A protocol-specific key of the algorithm object (everything but name, lr
 * and batch), kept as written: the runner checks it against the chosen
 * algorithm's parameter table, which the scenario module does not know. */
typedef struct scn_param {
    char  *key;
    int    is_string;
    double num;        /* when !is_string */
    char  *str;        /* when is_string */
} scn_param;

typedef struct scn_scenario {
    char    *path;           /* as given on the command line */
    uint64_t seed;           /* default 1 */
    int      n_nodes;        /* required, >= 1 */

    /* compute */
    double    step_time_s;   /* base step time, seconds, > 0 (default 0.01) */
    scn_noise noise;         /* default constant */
    double    noise_low, noise_high;  /* uniform bounds, 0 < low <= high */
    double    noise_sigma;   /* lognormal sigma >= 0 */
    scn_group *groups;       /* later groups override earlier ones per node */
    size_t     n_groups;

    /* network: every link alike in this slice */
    double latency_s;        /* >= 0 (default 1e-4) */
    double bandwidth_Bps;    /* bytes per second, > 0 (default 1.25e9) */
    double bytes_per_param;  /* > 0 (default 4) */

    /* topology */
    char  *topology;         /* "ring" (default), "complete", "torus2d",
                                "erdos_renyi", "random_regular" */
    int    topo_rows, topo_cols;   /* torus2d: rows * cols == nodes */
    double topo_p;           /* erdos_renyi, in (0, 1] */
    int    topo_degree;      /* random_regular */

    /* model */
    char  *model;            /* "softmax" (default), "logistic", "mlp" or "linear" */
    double l2;               /* >= 0 (default 1e-4) */
    size_t model_hidden[8];  /* mlp: hidden widths, input side first */
    size_t model_n_hidden;   /* mlp: 1..8 (default 1 layer of 100); else 0 */
    int    model_activation; /* mlp: 0 relu (default), 1 tanh */

    /* data */
    char  *data_kind;        /* "synthetic" (default), "synthetic-logistic",
                                "synthetic-regression", "idx", "fashion-mnist",
                                "libsvm", "csv" */
    /* synthetic: samples generated; idx, fashion-mnist: the first so many
     * samples of each file are used, 0 meaning all (the default) */
    size_t data_train, data_test;
    size_t data_features;    /* synthetic: default 16; libsvm: at least so many
                                features, 0 = the largest index (default) */
    int    data_classes;     /* synthetic: default 4; logistic needs 2 */
    double data_separation;  /* synthetic, synthetic-logistic: default 2.0 */
    double data_noise;       /* synthetic-regression: target noise sd (default 0.1) */
    /* idx: the four files as written in the scenario (relative paths are
     * relative to the scenario file's directory); fashion-mnist: the
     * directory (default /usr/share/datasets/fashion-mnist) in data_dir */
    char  *data_train_images, *data_train_labels, *data_test_images, *data_test_labels;
    char  *data_dir;
    /* libsvm, csv: the training file, an optional test file (NULL: a seeded
     * test_fraction of the training file is held out, default 0.2) */
    char  *data_train_file, *data_test_file;
    double data_test_fraction;
    int    data_label_column; /* csv: field holding the label, from 0 (default 0) */
    int    data_header;       /* csv: the first line names the columns (default false) */
    int    data_scale;       /* 0 none, 1 minmax, 2 standard; default minmax for
                                files, none for synthetic */
    char  *partition;        /* "iid" (default), "dirichlet", "shards", "quantity" */
    double partition_alpha;  /* dirichlet: > 0 (default 0.5) */
    int    partition_shards; /* shards: shards per node >= 1 (default 2) */
    double partition_exponent; /* quantity: Pareto exponent > 0 (default 1.5) */

    /* optimizer, per node (defaults: plain SGD, constant learning rate) */
    double opt_momentum;     /* in [0, 1) (default 0) */
    int    opt_nesterov;     /* default false; needs momentum > 0 */
    double opt_weight_decay; /* >= 0 (default 0), added to the gradient */
    char  *opt_schedule;     /* "constant" (default), "step", "cosine" */
    long   opt_step_every;   /* step: updates between decays, >= 1 */
    double opt_step_gamma;   /* step: factor per decay, in (0, 1] (default 0.1) */
    long   opt_total_steps;  /* cosine: updates to reach lr_min (default stop.steps) */
    double opt_lr_min;       /* cosine: >= 0 (default 0) */
    long   opt_warmup_steps; /* linear warm-up from 0 over so many updates (default 0) */

    /* algorithm */
    char  *algorithm;        /* required: "allreduce", "dpsgd", "adpsgd" */
    double lr;               /* >= 0 (default 0.1) */
    size_t batch;            /* >= 1 (default 32), <= smallest node's data */
    scn_param *alg_params;   /* sorted by key */
    size_t     n_alg_params;

    /* stop: at least one of time_s or steps; the first reached ends the run */
    double stop_time_s;      /* seconds; INFINITY when absent */
    long   stop_steps;       /* mean steps per node; 0 when absent */
    double stop_target_loss; /* train loss; NAN when absent */
    double stop_target_accuracy; /* test accuracy; NAN when absent */

    /* metrics */
    double metrics_every_s;  /* > 0; default: the stop time / 100, or 100
                                step times when only steps are given */
    size_t metrics_eval_samples; /* training samples for train_loss; 0: all */
    size_t metrics_test_samples; /* test samples for test loss/accuracy; 0: all */
    int    metrics_per_node;     /* also evaluate every node's model (default 0) */

    /* the resolved scenario (defaults filled, overrides applied) as compact
     * JSON text, for run.json */
    char *resolved_json;
} scn_scenario;

/* Loads, overrides and validates.  overrides are "path=value" strings where
 * path is dotted (algorithm.lr) or a JSON pointer (/algorithm/lr) and value
 * is JSON (a bare word that is not JSON is taken as a string).
 * Returns 0, or -1 with err set; *s is then zeroed and owns nothing. */
int  scn_load(const char *path, const char *const *overrides, size_t n_overrides,
              scn_scenario *s, scn_error *err);
/* Same from a string; path is only used in messages. */
int  scn_load_string(const char *text, const char *path,
                     const char *const *overrides, size_t n_overrides,
                     scn_scenario *s, scn_error *err);
void scn_fini(scn_scenario *s);

/* Step-time slowdown of node i: the last group naming i wins; 1 when no
 * group does. */
double scn_node_slowdown(const scn_scenario *s, int node);

#endif
