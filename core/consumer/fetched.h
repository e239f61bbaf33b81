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
#include "proto/record_batch.h"

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
