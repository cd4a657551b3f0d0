/* cl_buf.h -- what travels on the network: reference-counted payload
 * buffers and the message record that carries one.  A message carries a
 * buffer by reference, never a copy per hop; the last release returns it
 * to the pool it came from (a whole model's, or one of a partial model's
 * length: a fragment travels in a buffer of its own size).  This header only declares the records and the
 * pool (cl_buf.c); sending is cl_cluster.h's, and protocols see these
 * records through the protocol header alg.h.
 */
#ifndef CL_BUF_H
#define CL_BUF_H

#include <stddef.h>
#include <stdint.h>

typedef struct cl_buf {
    uint32_t        refs;
    size_t          len;       /* doubles in use, <= the pool's capacity */
    struct cl_buf  *next_free; /* pool link while free */
    struct cl_pool *home;      /* the pool it returns to */
    double          data[];
} cl_buf;

static inline void cl_buf_ref(cl_buf *b) { b->refs++; }

/* A pool of buffers of one capacity (doubles).  Capacity 0 (the
 * timing-only model: payloads carry no data) hands out one shared buffer
 * whose reference count counts every holder, so a message costs no
 * allocation and touches no cold memory for its payload. */
typedef struct cl_pool {
    size_t  capacity;
    cl_buf *free_list;
    size_t  n_allocated, n_free;
    cl_buf *shared;     /* capacity 0: the one buffer, or NULL */
} cl_pool;

void    cl_pool_init(cl_pool *p, size_t capacity);
void    cl_pool_fini(cl_pool *p);   /* frees the free list; live buffers are a bug */
cl_buf *cl_pool_get(cl_pool *p);    /* refs 1, len capacity; NULL when out of memory */
/* Drops a reference; recycles b at 0 into its own pool (b->home, which
 * may be another pool than p: a partial-model buffer). */
void    cl_pool_put(cl_pool *p, cl_buf *b);

/* A message as the receiving algorithm sees it.  The payload (may be NULL)
 * is borrowed for the duration of the callback: cl_buf_ref it to keep it. */
typedef struct cl_msg {
    int      from, to;
    uint32_t tag;       /* the algorithm's meaning */
    uint64_t round;     /* the algorithm's meaning, e.g. iteration number */
    double   bytes;
    double   sent_at;   /* seconds */
    cl_buf  *payload;
} cl_msg;

#endif
