/*
 * offsets.h: committed offsets (offsets.c): the commit FIFO (one
 * OffsetCommit in flight, async callbacks served by poll), auto-commit,
 * and OffsetFetch for partitions that start from their committed
 * offset. The commit's member identity is what the group publishes in
 * c->member (consumer_int.h); nothing here reads the group itself. Its
 * state is c->offsets (offsets_state.h), which only offsets.c touches.
 * Its functions take the whole consumer because a commit spans pieces:
 * the positions it commits (the table), the identity it carries
 * (c->member), the client it is sent through, c->lock and the signal
 * that wakes poll for a due callback.
 */
#ifndef KN_CONSUMER_OFFSETS_H
#define KN_CONSUMER_OFFSETS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "consumer/consumer_int.h"

/* offsets.c, network side, c->lock held: plans the next OffsetFetch or
 * OffsetCommit request (at most one of each kind in flight) and sends
 * nothing; knc_offsets_send sends the plan after the lock is released.
 * The group coordinator is looked up through the client's coordinator
 * table (core/wire/coordinator.h) and mirrored in c->offsets (knc_coordinator). */
typedef struct knc_offsets_plan {
    void *offset_fetch;
    struct knc_commit *commit;
} knc_offsets_plan;
void knc_offsets_tick(kn_consumer *c, int64_t now_ms, knc_offsets_plan *plan);
void knc_offsets_send(kn_consumer *c, knw_client *client, knc_offsets_plan *plan);
/* offsets.c, c->lock held: a request to node (-1: whichever is current)
 * failed with err. If kn_err_is_coordinator(err), the group coordinator
 * is forgotten (here and in the client's table) and true returned. */
bool knc_coord_failed(kn_consumer *c, int32_t node, int err);
/* offsets.c, application side: runs due commit callbacks (takes and
 * drops c->lock itself; call without it). */
void knc_serve_commit_callbacks(kn_consumer *c);
/* offsets.c: the sync commit before a revoke under auto-commit (no
 * lock): like kn_consumer_commit_sync, but STALE_MEMBER_EPOCH is retried
 * with the newest member epoch until the timeout, as Java does. */
int knc_commit_sync_before_revoke(kn_consumer *c, kn_topic_partition_list *offsets,
                                  int timeout_ms);
/* Sets up c->offsets at creation, after the settings are read. */
void knc_offsets_init(kn_consumer *c, int64_t now_ms);
/* The group coordinator's node id as last found, -1 when unknown
 * (c->lock held): the group sends its JoinGroup, heartbeats and
 * LeaveGroup there. */
static inline int32_t knc_coordinator(const kn_consumer *c) { return c->offsets.coord_id; }
/* Whether async commit callbacks are due for poll to run (c->lock held). */
static inline bool knc_commit_callbacks_due(const kn_consumer *c) {
    return c->offsets.done_head != NULL;
}
/* Queues an auto-commit of every position when due (c->lock held). */
void knc_maybe_auto_commit(kn_consumer *c, int64_t now_ms);
/* close, no lock: serves commit callbacks until every queued and
 * in-flight commit finished or deadline_ms passes. Returns true when
 * none is left. */
bool knc_offsets_wait(kn_consumer *c, int64_t deadline_ms);
/* close, after the network thread is gone, no lock: completes every
 * commit still queued with KN_ERR__CLOSED and runs the callbacks, so
 * each runs exactly once. */
void knc_offsets_close(kn_consumer *c);
/* Frees commits still queued at close (c->lock held). */
void knc_offsets_destroy(kn_consumer *c);
/* offsets.c, application side (c->lock held): queues the asynchronous
 * commit of offsets (taken over) that the group waits for before it
 * revokes, with the deadline given; done(c, err) runs once when it
 * finishes (c->lock held, any thread). Returns 0 or an error (nothing
 * queued, done not called). */
int knc_commit_before_revoke(kn_consumer *c, kn_topic_partition_list *offsets, int64_t deadline_ms,
                             void (*done)(kn_consumer *c, int err));

#endif
