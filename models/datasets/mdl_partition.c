/* mdl_partition.c -- partitions that give each node a list of indices into
 * one shared dataset, and the release of datasets and partitions.  IID is a
 * seeded Fisher-Yates shuffle dealt into contiguous blocks.  Nothing here
 * copies samples or looks at labels.
 */
#include <stdlib.h>
#include "mdl_data.h"
#include "../mdl_internal.h"

int mdl_partition_iid(size_t n, int n_nodes, uint64_t seed, mdl_partition *p)
{
    p->n_nodes = 0;
    p->off = NULL;
    p->idx = NULL;
    /* gsl_rng_uniform_int draws below at most 2^32 - 1 with mt19937. */
    if (n_nodes < 1 || (size_t)n_nodes >= SIZE_MAX / sizeof(size_t)
        || n > 0xffffffffu)
        return -1;

    size_t *off = malloc(((size_t)n_nodes + 1) * sizeof *off);
    size_t *idx = malloc((n > 0 ? n : 1) * sizeof *idx);
    gsl_rng *r = mdl_i_rng_create(seed);
    if (off == NULL || idx == NULL || r == NULL) {
        free(off);
        free(idx);
        if (r != NULL)
            gsl_rng_free(r);
        return -1;
    }

    for (size_t i = 0; i < n; i++)
        idx[i] = i;
    for (size_t i = n; i > 1; i--) {
        const size_t j = (size_t)gsl_rng_uniform_int(r, (unsigned long)i);
        const size_t t = idx[i - 1];
        idx[i - 1] = idx[j];
        idx[j] = t;
    }
    gsl_rng_free(r);

    /* The first n % n_nodes nodes take one sample more. */
    const size_t base = n / (size_t)n_nodes, extra = n % (size_t)n_nodes;
    off[0] = 0;
    for (size_t i = 0; i < (size_t)n_nodes; i++)
        off[i + 1] = off[i] + base + (i < extra);

    p->n_nodes = n_nodes;
    p->off = off;
    p->idx = idx;
    return 0;
}

void mdl_partition_fini(mdl_partition *p)
{
    if (p == NULL)
        return;
    free(p->off);
    free(p->idx);
    p->off = NULL;
    p->idx = NULL;
    p->n_nodes = 0;
}

void mdl_dataset_fini(mdl_dataset *ds)
{
    if (ds == NULL)
        return;
    free(ds->x);
    free(ds->y);
    ds->x = NULL;
    ds->y = NULL;
    ds->n = 0;
}
