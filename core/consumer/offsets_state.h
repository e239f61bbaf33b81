/*
 * offsets_state.h: the state of committed offsets (knc_offsets), owned
 * by offsets.c and held by value in struct kn_consumer (c->offsets),
 * guarded by c->lock. It sits apart from offsets.h, as metrics_state.h
 * does from consumer_metrics.h, because offsets.c works on the whole
 * consumer: consumer_int.h can hold this struct without including
 * offsets.h, so the include graph keeps no cycle. The other files reach
 * it only through offsets.h.
 */
#ifndef KN_CONSUMER_OFFSETS_STATE_H
#define KN_CONSUMER_OFFSETS_STATE_H

#include <stdbool.h>
#include <stdint.h>

struct knc_commit; /* offsets.c */

/* All -1/NULL/false without group.id. */
typedef struct knc_offsets {
    int32_t coord_id; /* the group coordinator, -1 unknown */
    int64_t next_auto_commit_ms;
    bool offset_fetch_inflight;
    struct knc_commit *commit_head, *commit_tail; /* FIFO, head in flight */
    bool commit_inflight;
    int64_t commit_retry_at_ms;
    struct knc_commit *done_head, *done_tail; /* async commits whose callback is due */
} knc_offsets;

#endif
