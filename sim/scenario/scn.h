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

/* One vocabulary: a concept's enum is declared by the module that owns it
 * and the loader fills it, so nothing downstream parses a name again.
 * These headers are included for their enums and name lists only. */
#include "cl_cluster.h"   /* noise, slowdown, fault, jitter, NIC, fault policies */
#include "topo.h"         /* topology kinds, mixing rules */
#include "mdl.h"          /* model types, activations, partitions, scalings */
#include "mdl_optim.h"    /* learning-rate schedules */

/* First error wins.  msg is the whole line the user sees, e.g.
 * "scenarios/ring8.json: /algorithm/lr: error: must be > 0, got -0.1" or
 * "scenarios/ring8.json:12:17: error: duplicate object key near '\"lr\"'". */
typedef struct scn_error {
    char msg[1024];
} scn_error;

/* A profile of the timing-only model (model.profile): a standard network's
 * parameter count and forward FLOPs per sample (2 per multiply-accumulate);
 * a step costs 3 x forward_flops per sample.  Indexed like the names of
 * `dtsim list profiles`; the sources are in scn_names.c and docs/models.md. */
typedef struct scn_model_profile {
    const char *name;
    double params;
    double forward_flops;
} scn_model_profile;
#define SCN_N_PROFILES 5
extern const scn_model_profile scn_model_profiles[SCN_N_PROFILES];

/* Where the data comes from (data.kind).  The scenario declares it: each
 * kind picks one loader of models/datasets/ (fashion-mnist is idx with the
 * standard file names in a directory), so no data module owns the list. */
typedef enum scn_data_kind {
    SCN_DATA_SYNTHETIC = 0,     /* "synthetic": mdl_synth_generate */
    SCN_DATA_IDX,               /* "idx": four files, mdl_idx_load */
    SCN_DATA_FASHION_MNIST,     /* "fashion-mnist": idx files in data_dir */
    SCN_DATA_LIBSVM,            /* "libsvm": mdl_libsvm_load */
    SCN_DATA_CSV,               /* "csv": mdl_csv_load */
    SCN_DATA_SYNTH_LOGISTIC,    /* "synthetic-logistic": mdl_synth_logistic */
    SCN_DATA_SYNTH_REGRESSION   /* "synthetic-regression": mdl_synth_regression */
} scn_data_kind;

/* What a node that comes back from a fault holds (faults.rejoin).  The
 * runner implements it (its on_up callback); it is declared here, the
 * lowest module that both the loader and the runner see, because the
 * runner's headers sit above the scenario's and the cluster does not know
 * topologies. */
typedef enum scn_rejoin {
    SCN_REJOIN_KEEP = 0,        /* "keep": its own parameters */
    SCN_REJOIN_NEIGHBOUR        /* "neighbour": its first neighbour up's */
} scn_rejoin;

/* Nonzero for the kinds whose samples are generated, not read. */
int scn_data_generated(scn_data_kind k);

/* A set of nodes: a list (sorted, no duplicates), or every node when
 * nodes is NULL.  fraction > 0 records that the list was drawn as that
 * fraction of the nodes (seeded); the list is then already drawn. */
typedef struct scn_group {
    int   *nodes;      /* node numbers, sorted, no duplicates */
    size_t n_nodes;
    double fraction;   /* 0 when given as a list */
    double slowdown;   /* step time multiplier, > 0; 0 when not set */
    double step_time_s;  /* 0 when not set */
    double flops_per_s;  /* 0 when not set */
    int    has_noise;
    cl_noise_spec noise;
    double memory_bytes; /* device memory capacity, > 0; 0 when not set */
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

/* One point of a trace file (see docs/heterogeneity.md): from time_s on,
 * node's slowdown factor is value, or it is up (1) / down (0). */
typedef struct scn_point {
    int    node;
    double time_s;
    double value;
} scn_point;

typedef struct scn_slowdown {
    cl_slow_kind kind;
    int   *nodes;      /* NULL: every node (not with trace) */
    size_t n_nodes;
    double fraction;
    double factor;
    double start_s, end_s;                 /* window; end_s INFINITY: open */
    double mean_slow_s, mean_normal_s;     /* markov */
    double period_s, duration_s, phase_s;  /* periodic */
    char  *file;                           /* trace, as written */
    scn_point *points;                     /* trace: sorted by node, time */
    size_t n_points;
} scn_slowdown;

typedef struct scn_fault {
    cl_fault_kind kind;
    int   *nodes;
    size_t n_nodes;
    double fraction;
    double down_s, up_s;      /* schedule; up_s INFINITY: for good */
    double mtbf_s, mttr_s;    /* exponential */
    char  *file;
    scn_point *points;
    size_t n_points;
} scn_fault;

/* What a link does to a message (a link class). */
typedef struct scn_link_props {
    double     latency_s, bandwidth_Bps;
    cl_jitter  jitter;
    double     jitter_a, jitter_b;   /* uniform: low_s, high_s; exponential: mean_s */
    double     loss;                 /* probability per message, [0, 1) */
    double    *outages;              /* n_outages (start_s, end_s) pairs */
    size_t     n_outages;
} scn_link_props;

/* The protocol's servers a node list of network.nics or network.links
 * names: "server" (the protocol's one server), "server:K" (its K-th,
 * 0-based: node number nodes + K) or "servers" (all of them).  The loader
 * does not know the protocol, so it keeps the names apart from the
 * workers; the runner checks them against the protocol (run_hetero.c) and
 * resolves them.  All zero: no server named. */
typedef struct scn_servers {
    int    all;         /* "servers" */
    int    plain;       /* "server" (server 0, and the protocol must have one) */
    int   *ks;          /* "server:K" values, sorted, distinct (plain's 0 not among them) */
    size_t n_ks;
    int    named;       /* any of the above */
    int    first_at;    /* index in the JSON list of the first server name */
    int    plain_at;    /* of "server" */
    int    max_k;       /* the largest K named ("server" counts as 0); -1 with "servers" alone */
    int    max_at;      /* of the largest K */
} scn_servers;

/* Links from `from` to `to` (and back unless directed) take props; keys
 * not given in the entry keep the network's defaults. */
/* metrics.targets: a metric and the value that counts as reached (a loss
 * at or below it, an accuracy at or above it).  The names are
 * scn_target_metric_names, in the enum's order. */
typedef enum scn_target_metric {
    SCN_TARGET_TRAIN_LOSS, SCN_TARGET_TEST_LOSS, SCN_TARGET_TEST_ACCURACY
} scn_target_metric;
extern const char *const scn_target_metric_names[];  /* NULL-terminated */
#define SCN_MAX_TARGETS 16
#define SCN_MAX_TARGET_SNAPSHOTS 65536
typedef struct scn_target {
    scn_target_metric metric;
    double value;
} scn_target;

typedef struct scn_link {
    int   *from, *to;       /* sorted workers; NULL: every node, servers included */
    size_t n_from, n_to;
    scn_servers from_servers, to_servers;
    int    directed;
    scn_link_props props;
    int    has_latency, has_bandwidth, has_jitter, has_loss, has_outages;
} scn_link;

/* Per-node NIC capacities (0: not set by this entry). */
typedef struct scn_nic {
    int   *nodes;       /* workers; an empty list (not NULL) when only servers are named */
    size_t n_nodes;
    scn_servers servers;
    double fraction;
    double up_Bps, down_Bps;
} scn_nic;

/* freeze.criterion (scn_freeze.c) */
enum { SCN_FREEZE_RELATIVE_CHANGE, SCN_FREEZE_EFFECTIVE_MOVEMENT };

typedef struct scn_scenario {
    char    *path;           /* as given on the command line */
    uint64_t seed;           /* default 1 */
    uint64_t data_seed;      /* data.seed, or seed when absent: draws the data
                                (generation, split, partition, evaluation subsets) */
    int      has_data_seed;
    int      n_nodes;        /* required, >= 1 */

    /* compute */
    double    step_time_s;   /* base step time, seconds, > 0 (default 0.01) */
    double    flops_per_s;   /* > 0: base = model FLOPs per batch / this; 0: unset */
    cl_noise  noise;         /* default constant */
    double    noise_low, noise_high;  /* uniform bounds, 0 < low <= high */
    double    noise_sigma;   /* lognormal, normal sigma >= 0 */
    double    noise_floor, noise_shift, noise_shape, noise_alpha;
    scn_group *groups;       /* later groups override earlier ones per node */
    size_t     n_groups;
    scn_slowdown *slowdowns; /* time-varying; several on a node multiply */
    size_t     n_slowdowns;

    /* faults */
    scn_fault *faults;
    size_t     n_faults;
    cl_step_policy fault_step;     /* "restart" (default) or "resume" */
    cl_msg_policy  fault_messages; /* "drop" (default) or "keep_sent" */
    scn_rejoin     fault_rejoin;   /* "keep" (default) or "neighbour" */
    double         fault_detect_s; /* seconds from a node going down to the
                                      others declaring it failed; 0 when
                                      absent (the runner's default) */

    /* network: the default link, NIC capacities, link entries */
    double latency_s;        /* >= 0 (default 1e-4) */
    double bandwidth_Bps;    /* bytes per second, > 0 (default 1.25e9) */
    double bytes_per_param;  /* > 0 (default 4) */
    double compression_ratio;   /* >= 1 (default 1): wire bytes divided by it */
    scn_link_props link;     /* the default link: latency_s, bandwidth_Bps above,
                                jitter, loss, outages */
    int    reorder;          /* jitter may reorder a link (default false) */
    /* reliable transport (network.retransmit): a dropped message is sent
     * again after a timeout that doubles per retry (at most 120 s), up to
     * retransmit_max times; timeout 0: never (retransmit false) */
    double retransmit_timeout_s;  /* default 0.2 */
    int    retransmit_max;        /* default 15 */
    scn_link *links;         /* later entries win per pair */
    size_t    n_links;
    cl_discipline discipline;  /* "fifo" (default) or "fair" */
    double up_Bps, down_Bps; /* NIC capacities, default bandwidth_Bps */
    scn_nic *nics;           /* later entries override earlier ones per node */
    size_t   n_nics;

    /* output */
    int    output_trace;     /* write trace.csv (default false) */
    int    output_topology_full;  /* output.topology_stats "full" (1) or
                                     "bounded" (0, default) */

    /* topology */
    topo_kind topo_kind;     /* "ring" (default) or another kind of
                                docs/topologies.md */
    const char *topology;    /* topo_kind's name (topo_kind_name_list, static),
                                for messages and output only */
    int    topo_rows, topo_cols;   /* torus2d: rows * cols == nodes */
    int    topo_layers;      /* torus3d: rows * cols * layers == nodes */
    double topo_p;           /* erdos_renyi, in (0, 1] */
    int    topo_degree;      /* random_regular; learned: the budget */
    double topo_lambda;      /* learned: weight of ||W - J||^2, > 0, default 0.1 */
    int    topo_k;           /* ring_lattice, watts_strogatz: 1 .. (nodes-1)/2 */
    double topo_beta;        /* watts_strogatz: rewiring probability in [0, 1] */
    int    topo_m;           /* barabasi_albert: edges per new node */
    char  *topo_file;        /* edge_list: path, relative to the scenario's
                                directory already resolved; else NULL */
    topo_mixing topo_mixing; /* "metropolis_hastings" (default), "max_degree",
                                "uniform" */
    double topo_lazy_alpha;  /* in [0, 1), default 0 */

    /* model */
    const mdl_type *model_type;  /* "softmax" (default), "logistic", "mlp",
                                "linear"; NULL for "none" (timing only: no
                                parameters, no data) */
    const char *model;       /* the kind's name (static), for messages and
                                output only */
    double l2;               /* >= 0 (default 1e-4); 0 for "none" */
    double model_message_bytes;  /* "none": bytes of one model message, > 0 (given,
                                or params x bytes_per_param); else 0 */
    double model_params;     /* "none": model.params, or the profile's; else 0 */
    const char *model_profile; /* "none": the model.profile's name (static); else NULL */
    double model_flops_per_sample; /* "none": FLOPs of one sample's step for
                                flops_per_s, > 0; 0 when absent or another kind */
    size_t model_hidden[8];  /* mlp: hidden widths, input side first */
    size_t model_n_hidden;   /* mlp: 1..8 (default 1 layer of 100); else 0 */
    mdl_activation model_activation; /* mlp: relu (default) or tanh */
    int    model_bias;       /* linear, logistic: a bias term (default 1) */

    /* data */
    scn_data_kind data_source;  /* data.kind: "synthetic" (default),
                                "synthetic-logistic", "synthetic-regression",
                                "idx", "fashion-mnist", "libsvm", "csv" */
    const char *data_kind;   /* data_source's name (static), for messages and
                                output only */
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
    mdl_scale data_scale;    /* none, minmax or standard; default minmax for
                                files, none for synthetic */
    mdl_partition_kind partition_kind;  /* "iid" (default), "dirichlet",
                                "shards", "quantity" */
    const char *partition;   /* partition_kind's name (static), for messages
                                and output only */
    double partition_alpha;  /* dirichlet: > 0 (default 0.5) */
    int    partition_shards; /* shards: shards per node >= 1 (default 2) */
    double partition_exponent; /* quantity: Pareto exponent > 0 (default 1.5) */

    /* optimizer, per node (defaults: plain SGD, constant learning rate) */
    double opt_momentum;     /* in [0, 1) (default 0) */
    int    opt_nesterov;     /* default false; needs momentum > 0 */
    double opt_weight_decay; /* >= 0 (default 0), added to the gradient */
    mdl_schedule opt_schedule;  /* "constant" (default), "step", "cosine" */
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
    scn_target metrics_targets[SCN_MAX_TARGETS]; /* measured, never stopping the run */
    size_t metrics_n_targets;
    long   metrics_target_snapshots; /* models kept per evaluation period to place a
                                        crossing (docs/scenario.md); 0: by model size */

    /* limits (docs/reliability.md): the run is refused before anything is
     * built when its memory estimate exceeds memory_bytes */
    double limit_memory_bytes;  /* bytes, > 0; 0 when absent: half the
                                   machine's physical memory */
    int    limit_check_memory;  /* default true; false (or --force) skips it */
    /* the work a run may do (docs/reliability.md, "Bounds"): engine events,
     * an evaluation counting one per sample it evaluates; refused before the
     * run when the estimate exceeds it (unless check_events is false), and
     * stopped with status "limit" when the count reaches it */
    double limit_events;        /* > 0; 0 when absent: RUN_MAX_EVENTS */
    int    limit_check_events;  /* default true; false (or --force) skips the estimate */

    /* progressive freezing (freeze, scn_freeze.c): weight layer k + 1 is
     * frozen from the protocol's count freeze_after[k] on (strictly
     * increasing); has_freeze 0: the section is absent */
    int       has_freeze;
    uint64_t *freeze_after;
    size_t    n_freeze;
    /* ... or by the criterion (freeze_threshold > 0, freeze_after NULL):
     * every freeze_window rounds the next layer freezes when its
     * parameters moved by less than threshold (relative) since the last
     * check, up to freeze_max_layers layers (0: every hidden layer) */
    double    freeze_threshold;
    /* the criterion's measure: SCN_FREEZE_RELATIVE_CHANGE (ours, the
     * default) or SCN_FREEZE_EFFECTIVE_MOVEMENT (ProFL's and SmartFreeze's
     * pace controller, docs/models.md) */
    int       freeze_criterion;
    /* freeze.mode: 0 "freeze" (the whole MLP trains, front layers freeze
     * in turn), 1 "grow" (block by block with output heads: the model is
     * built with mdl_arch.heads) */
    int       freeze_grow;
    uint64_t  freeze_window;
    size_t    freeze_max_layers;
    /* device memory per node (compute.memory_bytes, groups override):
     * > 0, 0 when absent (no capacity) */
    double    memory_bytes;

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

/* Step-time slowdown of node i: the last group naming i and setting a
 * slowdown wins; 1 when no group does. */
double scn_node_slowdown(const scn_scenario *s, int node);
/* Node i's base step time in seconds before its slowdown: the last group
 * naming it with step_time_s or flops_per_s wins, else the compute
 * section's; flops_per_s is turned into seconds with model_flops (FLOPs
 * per step). */
double scn_node_step_time(const scn_scenario *s, int node, double model_flops);
/* Node i's device memory capacity in bytes: the last group naming it with
 * memory_bytes wins, else compute.memory_bytes; 0 when neither is set (a
 * protocol's server, node >= nodes, takes compute.memory_bytes). */
double scn_node_memory(const scn_scenario *s, int node);
/* The index of the group whose memory_bytes scn_node_memory takes, or -1
 * (compute.memory_bytes or none): for error messages. */
int    scn_node_memory_group(const scn_scenario *s, int node);
/* Whether the run reports its memory model (nodes.csv's mem_ columns):
 * a freeze section or a memory capacity anywhere. */
int    scn_reports_memory(const scn_scenario *s);
/* Node i's noise: the last group naming it with a noise wins. */
cl_noise_spec scn_node_noise(const scn_scenario *s, int node);
/* Node i's NIC capacities (bytes per second); a protocol's server (node >=
 * nodes) takes the entries that name it ("server", "server:K", "servers"). */
void   scn_node_nic(const scn_scenario *s, int node, double *up_Bps, double *down_Bps);
/* Whether a server list names the protocol's server k (node number
 * nodes + k).  O(servers named). */
int    scn_names_server(const scn_servers *sv, int k);

#endif
