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
    char  *topology;         /* "ring" (default) or another kind of
                                docs/topologies.md */
    int    topo_rows, topo_cols;   /* torus2d: rows * cols == nodes */
    int    topo_layers;      /* torus3d: rows * cols * layers == nodes */
    double topo_p;           /* erdos_renyi, in (0, 1] */
    int    topo_degree;      /* random_regular */
    int    topo_k;           /* ring_lattice, watts_strogatz: 1 .. (nodes-1)/2 */
    double topo_beta;        /* watts_strogatz: rewiring probability in [0, 1] */
    int    topo_m;           /* barabasi_albert: edges per new node */
    char  *topo_file;        /* edge_list: path, relative to the scenario's
                                directory already resolved; else NULL */
    char  *topo_mixing;      /* "metropolis_hastings" (default), "max_degree",
                                "uniform" */
    double topo_lazy_alpha;  /* in [0, 1), default 0 */

    /* model */
    char  *model;            /* "softmax" (default) or "logistic" */
    double l2;               /* >= 0 (default 1e-4) */

    /* data (synthetic Gaussian mixture in this slice) */
    size_t data_train, data_test, data_features;  /* defaults 4096, 1024, 16 */
    int    data_classes;     /* default 4; logistic needs 2 */
    double data_separation;  /* default 2.0 */
    char  *partition;        /* "iid" (default) */

    /* algorithm */
    char  *algorithm;        /* required: "allreduce", "dpsgd", "adpsgd" */
    double lr;               /* >= 0 (default 0.1) */
    size_t batch;            /* >= 1 (default 32), <= smallest node's data */

    /* stop: at least one of time_s or steps; the first reached ends the run */
    double stop_time_s;      /* seconds; INFINITY when absent */
    long   stop_steps;       /* mean steps per node; 0 when absent */
    double stop_target_loss; /* train loss; NAN when absent */
    double stop_target_accuracy; /* test accuracy; NAN when absent */

    /* metrics */
    double metrics_every_s;  /* > 0; default: the stop time / 100, or 100
                                step times when only steps are given */
    size_t metrics_eval_samples; /* training samples for train_loss; 0: all */

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
