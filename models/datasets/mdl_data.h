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
    int     n_classes;  /* labels are 0 .. n_classes-1 */
    double *x;          /* n * d, row-major, owned */
    int    *y;          /* n, owned */
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
/* Frees x and y and empties ds; NULL does nothing. */
void mdl_dataset_fini(mdl_dataset *ds);

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

#endif
