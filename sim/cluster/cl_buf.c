/* cl_buf.c -- the pool behind reference-counted parameter buffers: buffers
 * of one capacity are recycled through a free list, so the hot loop never
 * calls malloc once the pool has warmed up.  It does not know what the
 * doubles mean.
 */
#include "cl_buf.h"

#include <assert.h>
#include <stdlib.h>

void cl_pool_init(cl_pool *p, size_t capacity)
{
    p->capacity = capacity;
    p->free_list = NULL;
    p->n_allocated = 0;
    p->n_free = 0;
}

void cl_pool_fini(cl_pool *p)
{
    cl_buf *b = p->free_list;
    while (b) {
        cl_buf *next = b->next_free;
        free(b);
        b = next;
    }
    p->free_list = NULL;
    p->n_allocated -= p->n_free;
    p->n_free = 0;
}

cl_buf *cl_pool_get(cl_pool *p)
{
    cl_buf *b = p->free_list;
    if (b) {
        p->free_list = b->next_free;
        p->n_free--;
    } else {
        /* at least one double so that a zero-parameter model still works */
        size_t cap = p->capacity ? p->capacity : 1;
        b = malloc(sizeof *b + cap * sizeof(double));
        if (!b)
            return NULL;
        p->n_allocated++;
    }
    b->refs = 1;
    b->len = p->capacity;
    b->next_free = NULL;
    return b;
}

void cl_pool_put(cl_pool *p, cl_buf *b)
{
    if (!b)
        return;
    assert(b->refs > 0);
    if (--b->refs > 0)
        return;
    b->next_free = p->free_list;
    p->free_list = b;
    p->n_free++;
}
