/*
 * inflight.h: the per-connection table of requests sent and awaiting a
 * response, keyed by correlation id.
 *
 * A broker answers requests on one connection in the order it received
 * them, so the table is a FIFO ring whose slot is the correlation id
 * modulo a power of two: push and match are O(1) with no hashing and no
 * allocation per request. A response whose correlation id is not the
 * oldest outstanding one is a protocol violation (the caller closes the
 * connection). The table stores opaque pointers; it owns none of them.
 */
#ifndef KNW_INFLIGHT_H
#define KNW_INFLIGHT_H

#include <stdbool.h>
#include <stdint.h>

typedef struct knw_iftab {
    void **slots;  /* owned array of cap entries */
    uint32_t mask; /* cap - 1 */
    int limit;     /* max.in.flight.requests.per.connection */
    int count;
    int32_t head_corr; /* correlation id of the oldest entry */
    int32_t next_corr; /* id the next push gets */
} knw_iftab;

/* limit >= 1. Returns 0 or KN_ERR__NOMEM. */
int knw_iftab_init(knw_iftab *t, int limit, int32_t first_corr);
void knw_iftab_destroy(knw_iftab *t);
static inline bool knw_iftab_full(const knw_iftab *t) { return t->count >= t->limit; }
/* Stores p, returns its correlation id (>= 0), or -1 if full. */
int32_t knw_iftab_push(knw_iftab *t, void *p);
/* The oldest entry if corr is its id (and removes it); otherwise NULL
 * and *expected set to the id that was due (-1 if none outstanding). */
void *knw_iftab_take(knw_iftab *t, int32_t corr, int32_t *expected);
/* Removes and returns the oldest entry (NULL if empty). */
void *knw_iftab_pop(knw_iftab *t);
/* i-th oldest entry, 0 <= i < count (for timeout scans). */
void *knw_iftab_at(const knw_iftab *t, int i);
/* Correlation id of the i-th oldest entry. */
static inline int32_t knw_iftab_corr_at(const knw_iftab *t, int i) {
    return (int32_t)(((uint32_t)t->head_corr + (uint32_t)i) & 0x7fffffffu);
}

#endif
