/*
 * fetched.h: knc_fetched, one partition's slice of one Fetch response,
 * kept raw and decoded lazily, one batch at a time (drain.c). A
 * partition holds at most two: the one being drained and one read
 * ahead. fetched.c owns a slice's life and its share of the fetch
 * buffer budget (the buffer's held bytes).
 */
#ifndef KN_CONSUMER_FETCHED_H
#define KN_CONSUMER_FETCHED_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "consumer/records.h"
#include "consumer/window.h"
#include "proto/record_batch.h"

/* ---- the fetch buffer (fetched.c) ------------------------------------ */

/* The fetch-buffer budget: raw response bytes held by buffered slices
 * plus the max_bytes of Fetches in flight stay within budget,
 * read-ahead included (docs/consumer.md, "Memory"). Held by value in
 * struct kn_consumer (c->fbuf), guarded by c->lock. */
typedef struct knc_fetchbuf {
    size_t budget; /* six max.partition.fetch.bytes (knc_fetchbuf_init) */
    size_t held;   /* raw response bytes some slice still points into */
    knc_bpo bpo;   /* raw bytes per offset fetched: sizes the Fetch window */
} knc_fetchbuf;

/* Sizes the budget from max.partition.fetch.bytes. */
void knc_fetchbuf_init(knc_fetchbuf *fb, int max_partition_fetch_bytes);
static inline size_t knc_fetchbuf_budget(const knc_fetchbuf *fb) { return fb->budget; }
/* What the budget has left with inflight bytes reserved by Fetches in
 * flight (may be negative). */
static inline int64_t knc_fetchbuf_avail(const knc_fetchbuf *fb, int64_t inflight) {
    return (int64_t)fb->budget - (int64_t)fb->held - inflight;
}
/* Counts buf in the held bytes while any slice points into it (before
 * the first knc_fetched_new on it). */
static inline void knc_fetchbuf_track(knc_fetchbuf *fb, knc_buf *buf) { buf->held = &fb->held; }
/* The window's estimate (window.h) for a partition fetching from
 * fetch_offset with its readable end at log_end; and learning it from a
 * slice fetched. */
static inline int64_t knc_fetchbuf_backlog(const knc_fetchbuf *fb, int64_t fetch_offset,
                                           int64_t log_end, int32_t partition_max) {
    return knc_backlog_bytes(&fb->bpo, fetch_offset, log_end, partition_max);
}
static inline void knc_fetchbuf_learn(knc_fetchbuf *fb, size_t len, int64_t fetch_offset,
                                      int64_t end_offset) {
    knc_bpo_add(&fb->bpo, len, fetch_offset, end_offset);
}

/* ---- one partition's buffered fetch (fetched.c) ---------------------- */

typedef struct knc_aborted {
    int64_t producer_id;
    int64_t first_offset;
} knc_aborted;

typedef struct knc_fetched {
    knc_buf *buf;           /* keeps records alive (one reference) */
    const uint8_t *records; /* the partition's records blob in buf */
    size_t len;
    int64_t fetch_offset;
    /* Where the next fetch starts: one past the last offset of the last
     * whole batch in records (fetch_offset when there is none). Drained
     * to the end, the position lands exactly here (drain.c). */
    int64_t end_offset;
    /* read_committed: the response's aborted transactions sorted by
     * first_offset, and the producers currently inside an aborted one. */
    knc_aborted *aborted;
    int32_t aborted_count, aborted_next;
    int64_t *aborting_pids;
    int32_t aborting_count, aborting_cap;
    /* Lazy iteration: the batch being read and the buffer its record
     * slices point into (the response, or its decompressed copy). */
    kn_records_iter it;
    kn_rb batch;
    bool in_batch;
    knc_buf *batch_buf;
    /* Out of memory mid-drain loses nothing: a batch read but not yet
     * opened (batch_ready), or a record read but not yet added
     * (pending), is taken up again by the next drain. */
    bool batch_ready;
    bool has_pending;
    kn_record pending;
} knc_fetched;

/* Takes a reference on buf; copies aborted (count may be 0; the
 * response's list is not sorted by contract). NULL on allocation
 * failure. Owned by the caller: knc_fetched_free. */
knc_fetched *knc_fetched_new(knc_buf *buf, const uint8_t *records, size_t len,
                             int64_t fetch_offset, const knc_aborted *aborted,
                             int32_t aborted_count);
void knc_fetched_free(knc_fetched *f);

#endif
