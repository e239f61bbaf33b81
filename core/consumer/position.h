/*
 * position.h: knc_part, the per-partition state machine (position.c):
 * position, pause flag, buffered slices, pending error, and the Fetch
 * error policy table. A knc_part is only touched with the consumer's
 * lock held.
 */
#ifndef KN_CONSUMER_POSITION_H
#define KN_CONSUMER_POSITION_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "consumer/fetched.h"

/* ---- the partition state machine (position.c) ------------------------- */

typedef enum knc_pos_state {
    KNC_POS_NEED_COMMITTED, /* group.id set: look up the committed offset first */
    KNC_POS_NEED_RESET, /* no position: resolve with p->reset */
    KNC_POS_RESETTING,  /* ListOffsets in flight */
    KNC_POS_VALID,      /* positioned: fetchable unless paused */
    KNC_POS_FAILED      /* stopped by an error until the next seek */
} knc_pos_state;

typedef enum knc_reset {
    KNC_RESET_EARLIEST,
    KNC_RESET_LATEST,
    KNC_RESET_NONE,
    KNC_RESET_BY_DURATION /* KIP-1106: the first offset at or after now - duration */
} knc_reset;

/* The ISO-8601 duration of auto.offset.reset=by_duration:<iso> (as the
 * config catalog validated it: [+]P[nD][T[nH][nM][n[.n]S]], any case)
 * in ms. Returns 0, or KN_ERR__CONFIG if it does not parse or exceeds
 * the int64 ms range. */
int knc_parse_duration_ms(const char *iso, int64_t *ms);

typedef struct knc_part {
    char *topic; /* owned */
    int32_t partition;
    uint64_t id; /* unique per assignment of this partition */
    knc_pos_state state;
    knc_reset reset;
    /* by_duration found no record at or after its timestamp: the next
     * ListOffsets asks for the log end instead (as Java falls back). */
    bool reset_fallback;
    int64_t position;       /* next offset to return (VALID) */
    int32_t position_epoch; /* leader epoch of the last record returned, -1 */
    uint32_t gen;           /* bumped by seeks and resets: stale replies are dropped */
    bool paused;
    bool fetch_inflight;
    /* ListOffsets or OffsetFetch in flight for the current gen (a gen
     * bump orphans the request and clears it, see position.c) */
    bool reset_inflight;
    /* Pending revocation (a commit before a revoke is in flight): not
     * fetched, not returned, so the committed position stays the last
     * returned one (Java's markPendingRevocation). */
    bool revoking;
    int64_t retry_at_ms; /* backoff after a retriable error */
    knc_fetched *fetched; /* buffered data being drained, or NULL */
    /* Read-ahead: the answer to the Fetch sent while fetched was still
     * draining (at fetched->end_offset), queued behind it. Only set
     * when fetched is. */
    knc_fetched *ahead;
    uint32_t slices_drained; /* counts used-up slices: poll then frees a fetch slot */
    bool err_pending;     /* an error poll has not reported yet */
    int err;
    char errstr[256];
    /* KIP-320: the leader epoch (from metadata) the position was last
     * checked under; a higher one makes the position suspect until
     * OffsetForLeaderEpoch confirms it. */
    int32_t checked_leader_epoch; /* -1: not known yet */
    bool needs_validation;
    bool validate_inflight;
    int64_t high_watermark; /* from the last fetch response, -1 */
    /* Safety net (tick.c): Fetches sent to p's leader without p while
     * p was fetchable with nothing buffered and data known past its
     * fetch offset. Never expected above 0; logged when it grows. */
    uint32_t skipped_fetches;
    /* This tick left p out of its leader's Fetch on purpose: the Fetch
     * already lists enough data (window.h); the rotation lists p next. */
    bool windowed_out;
    int64_t last_stable_offset;
    /* KIP-392: the replica the leader named to fetch p from (it picks
     * one in client.rack), or -1 for the leader itself. Used until
     * read_replica_until_ms (metadata.max.age.ms after the leader said
     * so, as Java), while that broker is online in the metadata, and
     * until an error comes back from it; then p goes back to its leader,
     * which may name it again. */
    int32_t read_replica;
    int64_t read_replica_until_ms;
} knc_part;

/* A new partition: NEED_COMMITTED when use_committed, else NEED_RESET
 * with strategy reset (a NONE strategy fails it at once with
 * KN_ERR__NO_OFFSET). Owned by the caller: knc_part_free. NULL on
 * allocation failure. */
knc_part *knc_part_new(const char *topic, int32_t partition, uint64_t id, knc_reset reset,
                       bool use_committed);
/* The committed-offset lookup for generation gen answered: offset >= 0
 * positions the partition there, -1 (none committed) falls back to its
 * reset strategy. Returns true if applied. */
bool knc_part_committed_done(knc_part *p, uint32_t gen, int64_t offset, int32_t leader_epoch);
void knc_part_free(knc_part *p);
/* Moves the position to offset (>= 0), dropping buffered data and any
 * error. */
void knc_part_seek(knc_part *p, int64_t offset, int32_t leader_epoch);
/* Forgets the position: it is resolved again with strategy (NONE fails
 * the partition with KN_ERR__NO_OFFSET). Drops buffered data. */
void knc_part_reset(knc_part *p, knc_reset strategy);
/* A ListOffsets answer for generation gen: positions the partition if
 * it is still waiting for exactly that reset. Returns true if applied. */
bool knc_part_reset_done(knc_part *p, uint32_t gen, int64_t offset, int32_t leader_epoch);
/* Stops the partition with a pending error (printf-style message). */
void knc_part_fail(knc_part *p, int err, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;
/* The offset the next Fetch for p asks for (the "fetch position"): the
 * end of what is buffered, or the position when nothing is. The
 * position the application sees (p->position) stays behind it until
 * poll returns the buffered records. */
static inline int64_t knc_part_fetch_offset(const knc_part *p) {
    if (p->ahead)
        return p->ahead->end_offset;
    if (p->fetched)
        return p->fetched->end_offset;
    return p->position;
}
/* Whether p may be fetched now: positioned, unpaused, nothing in
 * flight, not awaiting validation, and room in its two-slot buffer
 * (a read-ahead needs a buffered slice that ends on a whole batch). */
static inline bool knc_part_fetchable(const knc_part *p) {
    if (p->state != KNC_POS_VALID || p->paused || p->revoking || p->fetch_inflight ||
        p->needs_validation || p->ahead)
        return false;
    return !p->fetched || p->fetched->end_offset > p->fetched->fetch_offset;
}
/* Raw bytes p still holds, undrained (fetched and ahead). */
size_t knc_part_buffered_bytes(const knc_part *p);
/* KIP-320: metadata shows leader epoch md_epoch for p. Returns true if
 * the position must now be validated (an epoch bump while the position
 * has a known epoch); records the epoch otherwise. */
bool knc_part_leader_epoch_seen(knc_part *p, int32_t md_epoch);
/* The OffsetForLeaderEpoch answer for generation gen: the leader's end
 * offset for the position's epoch (end_epoch: the largest epoch at or
 * below it). Below the position: the log was truncated, and the
 * position moves down to end_offset (under reset none the partition
 * fails instead, with KN_ERR_OFFSET_OUT_OF_RANGE naming the
 * divergence). Undefined (-1): reset per the partition's strategy.
 * Otherwise confirmed under md_epoch. Returns true if applied. */
bool knc_part_validated(knc_part *p, uint32_t gen, int32_t md_epoch, int64_t end_offset,
                        int32_t end_epoch);
static inline bool knc_part_wants_reset(const knc_part *p, int64_t now_ms) {
    return p->state == KNC_POS_NEED_RESET && !p->reset_inflight && now_ms >= p->retry_at_ms;
}
static inline bool knc_part_wants_committed(const knc_part *p, int64_t now_ms) {
    return p->state == KNC_POS_NEED_COMMITTED && !p->reset_inflight && now_ms >= p->retry_at_ms;
}

/* What a partition-level Fetch error does (the policy table). */
typedef enum knc_action {
    KNC_ACT_OK,               /* data */
    KNC_ACT_RETRY,            /* transient: back off, fetch again */
    KNC_ACT_REFRESH_METADATA, /* leadership moved: refresh, back off, retry */
    KNC_ACT_RESET,            /* the position is invalid: auto.offset.reset */
    KNC_ACT_FAIL              /* report once, stop the partition */
} knc_action;
knc_action knc_fetch_error_action(int16_t error_code);

#endif
