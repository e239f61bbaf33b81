/*
 * inflight.c: FIFO ring of outstanding requests (see inflight.h).
 */
#include "wire/inflight.h"

#include "kafka_native.h"
#include "kn_alloc.h"

int knw_iftab_init(knw_iftab *t, int limit, int32_t first_corr) {
    if (limit < 1)
        limit = 1;
    uint32_t cap = 1;
    while (cap < (uint32_t)limit)
        cap <<= 1;
    t->slots = kn_calloc(cap, sizeof *t->slots);
    if (!t->slots)
        return KN_ERR__NOMEM;
    t->mask = cap - 1;
    t->limit = limit;
    t->count = 0;
    t->head_corr = t->next_corr = first_corr & 0x7fffffff;
    return 0;
}

void knw_iftab_destroy(knw_iftab *t) {
    kn_free(t->slots);
    t->slots = NULL;
    t->count = 0;
}

/* Correlation ids stay non-negative and wrap from INT32_MAX to 0; the
 * slot index stays consecutive across the wrap because the ring size is
 * a power of two dividing 2^31. */
static inline int32_t next_id(int32_t c) { return (int32_t)(((uint32_t)c + 1) & 0x7fffffffu); }

int32_t knw_iftab_push(knw_iftab *t, void *p) {
    if (t->count >= t->limit)
        return -1;
    int32_t corr = t->next_corr;
    t->slots[(uint32_t)corr & t->mask] = p;
    t->next_corr = next_id(corr);
    t->count++;
    return corr;
}

void *knw_iftab_take(knw_iftab *t, int32_t corr, int32_t *expected) {
    if (t->count == 0 || corr != t->head_corr) {
        if (expected)
            *expected = t->count ? t->head_corr : -1;
        return NULL;
    }
    return knw_iftab_pop(t);
}

void *knw_iftab_pop(knw_iftab *t) {
    if (t->count == 0)
        return NULL;
    uint32_t slot = (uint32_t)t->head_corr & t->mask;
    void *p = t->slots[slot];
    t->slots[slot] = NULL;
    t->head_corr = next_id(t->head_corr);
    t->count--;
    return p;
}

void *knw_iftab_at(const knw_iftab *t, int i) {
    if (i < 0 || i >= t->count)
        return NULL;
    return t->slots[(uint32_t)knw_iftab_corr_at(t, i) & t->mask];
}
