/*
 * drain.h: turning a partition's buffered slices into records on the
 * application thread (drain.c): decoding, and read_committed
 * filtering.
 */
#ifndef KN_CONSUMER_DRAIN_H
#define KN_CONSUMER_DRAIN_H

#include <stdbool.h>
#include <stddef.h>

#include "consumer/position.h"
#include "consumer/records.h"

/* ---- draining (drain.c) ----------------------------------------------- */

typedef struct knc_drain_opts {
    bool verify_crc;
    bool read_committed;
    size_t scratch_max; /* cap on one decompressed batch */
} knc_drain_opts;

/* Moves up to max records from p's buffered fetch into out, advancing
 * p->position past each (control records and aborted transactions are
 * skipped, and so are offsets below the position). Releases the
 * buffered data once it is used up and goes on with the read-ahead
 * slice (p->ahead), which starts where the drained one ended. A batch
 * that does not decode fails the partition (knc_part_fail,
 * KN_ERR__BAD_BATCH, naming topic, partition and offset) after the
 * records before it were added; the read-ahead slice is dropped.
 * Returns the number of records added, or KN_ERR__NOMEM: then the
 * records added by this call stay in out (their positions moved: the
 * caller must hand them out) and the batch or record that could not be
 * taken is taken up again by the next call, so nothing is skipped. */
int knc_drain(knc_part *p, kn_records *out, int max, const knc_drain_opts *opts);

#endif
