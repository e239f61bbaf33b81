/*
 * window.h: the breadth of one Fetch (window.c). Pure functions, no
 * lock, no I/O: the fetch planner (tick.c) calls them under the consumer's
 * lock while it plans a tick.
 *
 * A broker answers a Fetch by reading every partition listed in it (its
 * session), one log lookup each, even after max_bytes is used up. With
 * 1,000 partitions behind, most of those lookups return nothing and
 * only slow the answer. So the partitions known to have data waiting
 * are listed only until their estimated bytes cover the Fetch twice
 * over; the rest wait for the next Fetch, which starts where this one
 * stopped (the rotation), so every partition is listed once per sweep.
 * Partitions whose log end is unknown are always listed (the answer
 * tells); partitions at their log end join while the window is still
 * open (a read at the log end costs the broker little) and otherwise
 * wait for their turn in the rotation like the rest, so new data on
 * them is seen within one sweep. With nothing known to wait, the
 * fetcher lists every partition (long poll).
 */
#ifndef KN_CONSUMER_WINDOW_H
#define KN_CONSUMER_WINDOW_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Raw fetched bytes per offset, learnt from the slices fetched so far. */
typedef struct knc_bpo {
    int64_t bytes;
    int64_t offsets;
} knc_bpo;

/* Learns from one fetched slice: len raw bytes covering the offsets
 * [fetch_offset, end_offset). Older slices weigh less over time. */
void knc_bpo_add(knc_bpo *e, size_t len, int64_t fetch_offset, int64_t end_offset);

/* The bytes a partition whose fetch position is fetch_offset and whose
 * readable end (high watermark, or last stable offset under
 * read_committed) is log_end may return, capped at partition_max:
 * 0 at or past the log end, -1 when unknown (no log end or no estimate
 * yet). */
int64_t knc_backlog_bytes(const knc_bpo *e, int64_t fetch_offset, int64_t log_end, int32_t partition_max);

/* Whether the next partition (its knc_backlog_bytes is backlog) joins a
 * Fetch whose listed backlog so far is *listed, with target bytes to
 * cover; adds it to *listed when it does. Partitions without a known
 * backlog (0 or -1) always join. */
bool knc_window_take(int64_t *listed, int64_t target, int64_t backlog);

#endif
