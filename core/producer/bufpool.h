/*
 * bufpool.h: the producer's pool of batch-sized buffers. A batch's record
 * buffer and its built wire form are taken from here and given back when
 * the Produce answer arrives, as Java's BufferPool recycles batch.size
 * buffers. Without it every batch allocated fresh memory and grew it by
 * doubling: with 10 KiB records a fifth of the producer's time went to
 * the kernel zeroing newly faulted pages (docs/benchmarks.md, "Producer
 * profile"). Buffers of any other capacity (a record larger than the
 * batch, a buffer that had to grow) are allocated and freed as before.
 * Thread-safe: taken on the application thread, given back on the
 * network thread.
 */
#ifndef KNP_BUFPOOL_H
#define KNP_BUFPOOL_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>

#include "writer.h"

typedef struct knp_bufpool {
    pthread_mutex_t lock;
    size_t size;     /* capacity of every pooled buffer */
    uint8_t **free;  /* idle buffers (a stack) */
    int32_t count;   /* idle buffers held */
    int32_t max;     /* idle buffers kept at most */
} knp_bufpool;

/* Buffers of size bytes; at most max idle ones are kept (0: none, the
 * pool then only allocates). Returns 0 or KN_ERR__NOMEM. */
int knp_bufpool_init(knp_bufpool *p, size_t size, int32_t max);
/* Frees the idle buffers. */
void knp_bufpool_destroy(knp_bufpool *p);

/* Starts w empty with cap at most max_len: on a pooled buffer when
 * need <= the pool's size (need 0: always), otherwise as kn_wr_init(w,
 * need, max_len). A failed allocation leaves w empty, to grow (and fail
 * with its sticky error) on first use. */
void knp_bufpool_wr_init(knp_bufpool *p, kn_wr *w, size_t need, size_t max_len);
/* Gives w's buffer back (kept when its capacity is the pool's size and
 * the pool is not full, freed otherwise) and leaves w empty. */
void knp_bufpool_wr_release(knp_bufpool *p, kn_wr *w);

#endif
