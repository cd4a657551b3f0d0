/* mdl_data.h -- datasets held once in memory and the partitions that give
 * each node a list of indices into them (no copies).  Features are a dense
 * row-major double matrix; labels are class numbers 0 .. n_classes-1.
 * This module loads and generates data; it knows nothing of models.
 */
#ifndef MDL_DATA_H
#define MDL_DATA_H

#include <stddef.h>
#include <stdint.h>

typedef struct mdl_dataset {
    size_t  n;          /* samples */
    size_t  d;          /* features per sample */
    int     n_classes;  /* labels are 0 .. n_classes-1; 0 for regression */
    double *x;          /* n * d, row-major, owned; NULL when held compactly (x8) */
    int    *y;          /* n class labels, owned; NULL for regression */
    double *t;          /* n real targets, owned; NULL for classification */
    /* Compact features, instead of x (IDX unsigned bytes, loaded with
     * mdl_idx_load_compact or from the cache, mdl_cache.h): n * d bytes,
     * row-major, an eighth of the memory of doubles.  Feature j of row r
     * is the double (double)x8[r d + j], or once scaled (x8[r d + j] -
     * sc[j]) * sc[d + j] (mdl_dataset_scale stores the statistics here
     * instead of rewriting the rows), computed as a row is read
     * (mdl_dataset_row): the same bits as scaling doubles in place. */
    const unsigned char *x8;
    double *sc;         /* NULL (unscaled), or 2 d: shift, mul; owned */
    void   *x8_mem;     /* what x8 lives in: malloc'd, or mapped when x8_map > 0 */
    size_t  x8_map;     /* bytes mapped (mmap), 0 when x8_mem is malloc'd */
} mdl_dataset;

/* Parameters of the synthetic Gaussian-mixture classification problem:
 * class k has mean mu_k ~ N(0, separation^2 I_d) and samples are
 * mu_y + N(0, I_d), labels uniform over the classes. */
typedef struct mdl_synth_spec {
    size_t n_train, n_test, d;
    int    n_classes;
    double separation;
} mdl_synth_spec;

/* Generates train and test sets from one seed (the same seed gives the same
 * bytes); both share the class means.  Both are caller-owned: free with
 * mdl_dataset_fini.  Returns 0, or -1 (both left empty) when out of memory
 * or when d is 0, n_classes < 2 or separation is negative or not finite.
 * O((n_train + n_test) * d). */
int  mdl_synth_generate(const mdl_synth_spec *spec, uint64_t seed,
                        mdl_dataset *train, mdl_dataset *test);
/* Known-weight problems, for tests and convergence studies.  Features are
 * x ~ N(0, I_d).  Logistic: w* ~ N(0, separation^2 / d I_d), b* = 0, labels
 * y ~ Bernoulli(sigmoid(w*.x)), so w*.x ~ N(0, separation^2).  Regression
 * (n_classes 0, targets in t, y NULL): w* ~ N(0, 1/d I_d), b* ~ N(0, 1),
 * t = w*.x + b* + N(0, noise^2).  w_true (d + 1: w* then b*) may be NULL.
 * One stream from seed: the weights, then the training samples, then the
 * test samples.  Returns 0, or -1 (both sets empty) when out of memory or
 * when d is 0 or a scale is negative or not finite.  O((n_train + n_test) d). */
typedef struct mdl_synth_linear_spec {
    size_t n_train, n_test, d;
    double separation;   /* logistic */
    double noise;        /* regression */
} mdl_synth_linear_spec;

int mdl_synth_logistic(const mdl_synth_linear_spec *spec, uint64_t seed, mdl_dataset *train,
                       mdl_dataset *test, double *w_true);
int mdl_synth_regression(const mdl_synth_linear_spec *spec, uint64_t seed, mdl_dataset *train,
                         mdl_dataset *test, double *w_true);

/* Frees (or unmaps) x, y, t and the compact features and empties ds;
 * NULL does nothing. */
void mdl_dataset_fini(mdl_dataset *ds);

/* ---- compact features (mdl_compact.c) ---------------------------------- */

/* Writes row r's d features as doubles to out: a copy of x, or the
 * compact bytes converted (and scaled).  O(d). */
void   mdl_dataset_row(const mdl_dataset *ds, size_t r, double *out);
/* Asks the cache for row r's features ahead of mdl_dataset_row (a hint:
 * it reads and changes nothing). */
void   mdl_dataset_prefetch_row(const mdl_dataset *ds, size_t r);
/* Turns compact features into doubles in x (scaled as they read, sc
 * dropped); nothing when ds holds doubles.  0, or -1 when out of memory
 * (ds unchanged). */
int    mdl_dataset_expand(mdl_dataset *ds);
/* Bytes ds holds: features (doubles or bytes, mapped included), labels,
 * targets and scale statistics. */
double mdl_dataset_bytes(const mdl_dataset *ds);

/* A partition: node i holds idx[off[i] .. off[i+1]-1], indices into one
 * dataset.  No index appears twice. */
typedef struct mdl_partition {
    int     n_nodes;
    size_t *off;   /* n_nodes + 1 */
    size_t *idx;   /* off[n_nodes] */
} mdl_partition;

/* IID: a seeded shuffle of 0 .. n-1 dealt into n_nodes contiguous blocks
 * whose sizes differ by at most one (the first n % n_nodes nodes hold one
 * more).  Caller-owned: free with mdl_partition_fini.  Returns 0, or -1
 * (p left empty) when out of memory, n_nodes < 1 or n > 2^32 - 1.  O(n). */
int  mdl_partition_iid(size_t n, int n_nodes, uint64_t seed, mdl_partition *p);
void mdl_partition_fini(mdl_partition *p);

typedef enum mdl_partition_kind {
    MDL_PART_IID = 0,     /* mdl_partition_iid */
    MDL_PART_DIRICHLET,   /* label skew: per class, node shares ~ Dir(alpha) */
    MDL_PART_SHARDS,      /* sorted by label, cut into shards, k per node */
    MDL_PART_QUANTITY     /* sizes proportional to Pareto(exponent) draws */
} mdl_partition_kind;
/* "iid", "dirichlet", "shards", "quantity": indexed by value,
 * NULL-terminated (models/mdl_names.c). */
extern const char *const mdl_partition_kind_name_list[];
/* One line per partition, indexed alike (`dtsim list`). */
extern const char *const mdl_partition_kind_help_list[];

typedef struct mdl_partition_spec {
    mdl_partition_kind kind;
    int    n_nodes;
    double alpha;            /* dirichlet: concentration, > 0 */
    int    shards_per_node;  /* shards: k >= 1 */
    double exponent;         /* quantity: Pareto tail exponent, > 0 */
    size_t min_samples;      /* every node holds at least this many (>= 1) */
} mdl_partition_spec;

/* Builds the partition spec describes over the labels of ds, every sample
 * assigned to exactly one node, deterministic by seed:
 * - iid: as mdl_partition_iid.
 * - dirichlet (Hsu et al. 2019): for each class in label order, a seeded
 *   shuffle of its samples is cut at the cumulative shares of a draw
 *   q ~ Dir(alpha, ..., alpha) over the nodes.  The whole draw is repeated
 *   (same stream, at most 1000 times) until every node holds min_samples.
 * - shards (McMahan et al. 2017): samples sorted by (label, index) are cut
 *   into n_nodes * k contiguous shards whose sizes differ by at most one;
 *   node i gets shards perm[i k .. i k + k - 1] of a seeded permutation.
 * - quantity: a seeded shuffle dealt in blocks of min_samples plus a share
 *   of the rest proportional to w_i ~ Pareto(exponent, 1), cut at the
 *   cumulative shares.
 * Returns 0, or -1 with a one-line reason in err (no file name, lowercase)
 * and p left empty.  O(n log n) for shards, O(n + n_nodes C) otherwise. */
/* dirichlet and shards need class labels: -1 on a regression set. */
int  mdl_partition_build(const mdl_partition_spec *spec, const mdl_dataset *ds,
                         uint64_t seed, mdl_partition *p, char *err, size_t err_size);

/* Samples and distinct classes per node, for run.json. */
typedef struct mdl_partition_stats {
    size_t samples_min, samples_max;
    double samples_mean;
    int    classes_min, classes_max;
    double classes_mean;
} mdl_partition_stats;

/* Computes the statistics of p over ds's labels (classes 0 for regression).  Returns 0, or -1 when
 * out of memory.  O(n + n_nodes C). */
int  mdl_partition_stats_compute(const mdl_partition *p, const mdl_dataset *ds,
                                 mdl_partition_stats *st);

/* ---- loaders (mdl_idx.c, mdl_text.c) ---------------------------------- */


/* Loads one IDX pair (the MNIST format, gzipped or plain: zlib reads both):
 * images with magic 0x00000803 (unsigned bytes, any number of dimensions
 * >= 2 after the count is also accepted, as are the other IDX element
 * types: 0x09 signed byte, 0x0B int16, 0x0C int32, 0x0D float32, 0x0E
 * float64), flattened to d features as doubles without scaling; labels
 * with magic 0x00000801 (unsigned bytes).  n_classes is max label + 1.
 * Returns 0, or -1 with err set to a whole message in GNU form naming the
 * file ("FILE: error: IDX magic 0x00000803 expected, got 0x00000801") and
 * ds left empty. */
int mdl_idx_load(const char *images_path, const char *labels_path, mdl_dataset *ds,
                 char *err, size_t err_size);
/* The same, but unsigned-byte images (0x08, MNIST's and Fashion-MNIST's)
 * stay bytes: ds->x is NULL and ds->x8 holds them (see mdl_dataset).
 * Other element types load as doubles, as above. */
int mdl_idx_load_compact(const char *images_path, const char *labels_path, mdl_dataset *ds,
                         char *err, size_t err_size);

/* mdl_idx_load_compact through a cache directory (mdl_cache.c): a valid
 * cache file of the same two inputs (by a hash of their whole content) is
 * memory-mapped instead of decoding them; otherwise they are loaded and,
 * when the images are unsigned bytes, written to cache_dir (created when
 * missing) for the next run, atomically.  A cache file whose header, size
 * or payload hash does not check out is rebuilt, never used.  cache_dir
 * NULL or "": no cache.  The data set is the same, byte for byte, whether
 * it came from the cache or not.  A cache that cannot be written is no
 * error (outcome says so).  Returns as mdl_idx_load_compact. */
typedef enum mdl_cache_outcome {
    MDL_CACHE_OFF = 0,      /* no cache directory, or images not bytes */
    MDL_CACHE_HIT,          /* mapped from a valid cache file */
    MDL_CACHE_WRITTEN,      /* loaded, cache file written */
    MDL_CACHE_REBUILT,      /* a cache file was there but not valid: replaced */
    MDL_CACHE_UNWRITABLE    /* loaded, the cache file could not be written */
} mdl_cache_outcome;
int mdl_idx_load_cached(const char *images_path, const char *labels_path,
                        const char *cache_dir, mdl_dataset *ds, mdl_cache_outcome *outcome,
                        char *err, size_t err_size);

/* LIBSVM/svmlight text (gzipped or plain): per line "label index:value
 * ...", indices from 1 and ascending, absent features 0, '#' starts a
 * comment, blank lines are skipped.  Labels must be integers (e.g. -1/+1,
 * 0/1, 1..K) and stay raw in y (n_classes 0): call mdl_labels_compact.
 * d = max(d_min, largest index).  Returns 0, or -1 with err set to
 * "FILE:LINE: error: ..." (or "FILE: error: ...") and ds left empty. */
int mdl_libsvm_load(const char *path, size_t d_min, mdl_dataset *ds, char *err,
                    size_t err_size);

/* CSV (gzipped or plain): one sample per line, comma-separated numbers,
 * every line with the same number of fields; field label_column (from 0)
 * is the integer label (kept raw, as above), the others are the features
 * in order.  header: the first line names the columns and is skipped.
 * Blank lines and lines starting with '#' are skipped.  Returns 0, or -1
 * with err set as above and ds left empty. */
int mdl_csv_load(const char *path, int label_column, int header, mdl_dataset *ds,
                 char *err, size_t err_size);

/* Maps the distinct raw labels of train and test (test may be NULL) to
 * 0 .. K-1 in increasing order (so -1/+1 become 0/1) and sets n_classes
 * of both to K.  Returns K, or -1 when out of memory.  O(n log n). */
int mdl_labels_compact(mdl_dataset *train, mdl_dataset *test);

/* Pads every row of ds with zeros up to d features (nothing when d <=
 * ds->d).  Returns 0, or -1 when out of memory (ds unchanged). */
int mdl_dataset_widen(mdl_dataset *ds, size_t d);

/* ---- preprocessing (mdl_prep.c) ---------------------------------------- */

typedef enum mdl_scale {
    MDL_SCALE_NONE = 0,
    MDL_SCALE_MINMAX,     /* per feature to [0, 1] by the training min and max */
    MDL_SCALE_STANDARD    /* per feature to mean 0, sd 1 by training statistics */
} mdl_scale;
/* "none", "minmax", "standard": indexed by value, NULL-terminated
 * (models/mdl_names.c). */
extern const char *const mdl_scale_name_list[];

/* Scales every feature of train, and of test when not NULL, with
 * statistics of train only (no test information leaks into training).  A
 * constant feature becomes 0.  When both hold compact features the
 * statistics are stored with them (sc) and applied as rows are read, with
 * the same result bit for bit; a compact set beside one of doubles is
 * expanded first.  Returns 0, or -1 when out of memory. */
int mdl_dataset_scale(mdl_dataset *train, mdl_dataset *test, mdl_scale how);

/* Moves a seeded random fraction of all's samples into test and the rest
 * into train (both new, caller-owned; all is emptied).  The test set holds
 * round(fraction * n) samples, in the order of a seeded shuffle; the
 * training set keeps file order.  Returns 0, or -1 when out of memory or
 * when either part would be empty. */
int mdl_dataset_split(mdl_dataset *all, double test_fraction, uint64_t seed,
                      mdl_dataset *train, mdl_dataset *test);

#endif
