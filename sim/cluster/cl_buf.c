/* cl_buf.c -- the pool behind reference-counted parameter buffers: buffers
 * of one capacity are recycled through a free list, so the hot loop never
 * calls malloc once the pool has warmed up; a pool of capacity 0 (no
 * parameters) shares one buffer among all holders.  It does not know what
 * the doubles mean.
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
    p->shared = NULL;
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
    if (p->shared) {
        assert(p->shared->refs == 0);
        free(p->shared);
        p->shared = NULL;
        p->n_allocated--;
    }
}

cl_buf *cl_pool_get(cl_pool *p)
{
    if (p->capacity == 0) {
        if (!p->shared) {
            if (!(p->shared = malloc(sizeof *p->shared)))
                return NULL;
            p->shared->refs = 0;
            p->shared->len = 0;
            p->shared->next_free = NULL;
            p->shared->home = p;
            p->n_allocated++;
        }
        p->shared->refs++;
        return p->shared;
    }
    cl_buf *b = p->free_list;
    if (b) {
        p->free_list = b->next_free;
        p->n_free--;
    } else {
        b = malloc(sizeof *b + p->capacity * sizeof(double));
        if (!b)
            return NULL;
        p->n_allocated++;
    }
    b->refs = 1;
    b->len = p->capacity;
    b->next_free = NULL;
    b->home = p;
    return b;
}

void cl_pool_put(cl_pool *p, cl_buf *b)
{
    if (!b)
        return;
    p = b->home;
    assert(b->refs > 0);
    if (--b->refs > 0 || b == p->shared)
        return;
    b->next_free = p->free_list;
    p->free_list = b;
    p->n_free++;
}
