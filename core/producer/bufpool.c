/*
 * bufpool.c: the producer's pool of batch-sized buffers (see bufpool.h).
 */
#include "producer/bufpool.h"

#include "error.h"
#include "kn_alloc.h"

int knp_bufpool_init(knp_bufpool *p, size_t size, int32_t max) {
    p->size = size;
    p->count = 0;
    p->max = max > 0 ? max : 0;
    p->free = NULL;
    if (p->max) {
        p->free = kn_calloc((size_t)p->max, sizeof *p->free);
        if (!p->free)
            return KN_ERR__NOMEM;
    }
    pthread_mutex_init(&p->lock, NULL);
    return 0;
}

void knp_bufpool_destroy(knp_bufpool *p) {
    for (int32_t i = 0; i < p->count; i++)
        kn_free(p->free[i]);
    kn_free(p->free);
    p->free = NULL;
    p->count = 0;
    pthread_mutex_destroy(&p->lock);
}

void knp_bufpool_wr_init(knp_bufpool *p, kn_wr *w, size_t need, size_t max_len) {
    kn_wr_init(w, 0, max_len);
    if (need > p->size || p->size > w->max) {
        if (need)
            kn_wr_grow(w, need);
        return;
    }
    uint8_t *buf = NULL;
    pthread_mutex_lock(&p->lock);
    if (p->count > 0)
        buf = p->free[--p->count];
    pthread_mutex_unlock(&p->lock);
    if (!buf)
        buf = kn_malloc(p->size);
    if (!buf)
        return; /* grows (or fails) on first use */
    w->buf = buf;
    w->cap = p->size;
}

void knp_bufpool_wr_release(knp_bufpool *p, kn_wr *w) {
    size_t cap = w->cap;
    uint8_t *buf = kn_wr_detach(w, NULL);
    if (!buf)
        return;
    if (cap == p->size) {
        pthread_mutex_lock(&p->lock);
        if (p->count < p->max) {
            p->free[p->count++] = buf;
            buf = NULL;
        }
        pthread_mutex_unlock(&p->lock);
    }
    kn_free(buf);
}
