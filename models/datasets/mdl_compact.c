/* mdl_compact.c -- data sets whose features are held as the bytes of the
 * file (IDX unsigned bytes) rather than as doubles: reading a row converts
 * and scales it with the statistics mdl_dataset_scale stored, so that a
 * batch gathers 784 bytes per image instead of 784 doubles and the whole
 * training set of Fashion-MNIST takes 47 MB instead of 376 MB.  The
 * conversion does the operations scaling in place did, in the same order,
 * so every value is the same double.  Also the release of any data set
 * (malloc'd or memory-mapped features).  It does not load, scale or cache
 * data.
 */
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include "mdl_data.h"

void mdl_dataset_fini(mdl_dataset *ds)
{
    if (ds == NULL)
        return;
    free(ds->x);
    free(ds->y);
    free(ds->t);
    free(ds->sc);
    if (ds->x8_map > 0)
        munmap(ds->x8_mem, ds->x8_map);
    else
        free(ds->x8_mem);
    ds->x = NULL;
    ds->y = NULL;
    ds->t = NULL;
    ds->sc = NULL;
    ds->x8 = NULL;
    ds->x8_mem = NULL;
    ds->x8_map = 0;
    ds->n = 0;
}

void mdl_dataset_row(const mdl_dataset *ds, size_t r, double *out)
{
    const size_t d = ds->d;
    if (ds->x) {
        memcpy(out, ds->x + r * d, d * sizeof *out);
        return;
    }
    const unsigned char *u = ds->x8 + r * d;
    if (!ds->sc) {
        for (size_t j = 0; j < d; j++)
            out[j] = (double)u[j];
        return;
    }
    /* Scaling in place computed (x / 1 - shift) * mul: a byte's largest
     * magnitude never calls for a power of two other than 1 (mdl_prep.c),
     * and x / 1 is x. */
    const double *shift = ds->sc, *mul = ds->sc + d;
    for (size_t j = 0; j < d; j++)
        out[j] = ((double)u[j] - shift[j]) * mul[j];
}

void mdl_dataset_prefetch_row(const mdl_dataset *ds, size_t r)
{
    const size_t d = ds->d;
    const char *p = ds->x ? (const char *)(ds->x + r * d) : (const char *)(ds->x8 + r * d);
    const size_t bytes = ds->x ? d * sizeof(double) : d;
    for (size_t k = 0; k < bytes; k += 64)
        __builtin_prefetch(p + k, 0, 3);
    __builtin_prefetch(p + bytes - 1, 0, 3);
}

int mdl_dataset_expand(mdl_dataset *ds)
{
    if (ds->x || !ds->x8)
        return 0;
    const size_t n = ds->n, d = ds->d;
    if (n != 0 && d > SIZE_MAX / sizeof(double) / n)
        return -1;
    double *x = malloc((n * d > 0 ? n * d : 1) * sizeof *x);
    if (!x)
        return -1;
    for (size_t r = 0; r < n; r++)
        mdl_dataset_row(ds, r, x + r * d);
    free(ds->sc);
    if (ds->x8_map > 0)
        munmap(ds->x8_mem, ds->x8_map);
    else
        free(ds->x8_mem);
    ds->sc = NULL;
    ds->x8 = NULL;
    ds->x8_mem = NULL;
    ds->x8_map = 0;
    ds->x = x;
    return 0;
}

double mdl_dataset_bytes(const mdl_dataset *ds)
{
    const double n = (double)ds->n, d = (double)ds->d;
    double b = ds->x ? n * d * sizeof(double) : ds->x8 ? n * d : 0;
    b += ds->y ? n * sizeof(int) : 0;
    b += ds->t ? n * sizeof(double) : 0;
    b += ds->sc ? 2 * d * sizeof(double) : 0;
    return b;
}
