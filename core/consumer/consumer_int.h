/*
 * consumer_int.h: the consumer's internal types, shared by the files of
 * core/consumer/ (prefix knc_):
 *
 *  - knc_buf: a reference-counted owner of fetched memory (a raw Fetch
 *    response, or one decompressed batch). kn_records keep the buffers
 *    their records point into alive, so records survive later polls,
 *    seeks and even close.
 *  - knc_fetched: one partition's slice of one Fetch response, kept raw
 *    and decoded lazily, one batch at a time (drain.c). A partition
 *    holds at most two: the one being drained and one read ahead.
 *  - knc_part: the per-partition state machine (position.c): position,
 *    pause flag, buffered data, pending error.
 *  - the kn_records layout (records.c).
 *
 * Threads: a knc_part is only touched with the consumer's lock held
 * (consumer.c, fetcher.c). kn_records are owned by one application
 * thread at a time and need no lock; knc_buf reference counts are
 * atomic because a buffer may be released on either thread.
 */
#ifndef KN_CONSUMER_INT_H
#define KN_CONSUMER_INT_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "consumer/window.h"
#include "fork.h"
#include "kafka_native.h"
#include "proto/record_batch.h"
#include "reader.h"
#include "wire/wire.h"

/* ---- reference-counted buffers (records.c) ---------------------------- */

typedef struct knc_buf {
    atomic_int refs;
    knw_resp *resp; /* a Fetch response (knw_resp_free), or NULL */
    uint8_t *mem;   /* kn_malloc'd bytes (kn_free), or NULL */
    /* Fetch-buffer accounting (fetcher.c), under the consumer's lock:
     * while at least one knc_fetched slice points into this buffer, its
     * size counts in *held (the consumer's held bytes). held NULL: not
     * counted (decompressed batches, tests). */
    size_t size;
    uint32_t slices;
    size_t *held;
} knc_buf;

/* Both take ownership of what they wrap (freed when the last reference
 * goes, also on failure: then NULL is returned). One reference. */
knc_buf *knc_buf_from_resp(knw_resp *resp);
knc_buf *knc_buf_from_mem(uint8_t *mem);
static inline knc_buf *knc_buf_retain(knc_buf *buf) {
    atomic_fetch_add_explicit(&buf->refs, 1, memory_order_relaxed);
    return buf;
}
void knc_buf_release(knc_buf *buf);

/* ---- kn_records (records.c) -------------------------------------------- */

typedef struct knc_rec {
    int64_t offset;
    int64_t timestamp;
    const uint8_t *key;
    const uint8_t *value;
    const uint8_t *headers; /* encoded headers (record_batch.h layout) */
    int32_t key_len;        /* < 0: null */
    int32_t value_len;      /* < 0: null */
    int32_t headers_len;
    int32_t header_count;
    int32_t partition;
    int32_t leader_epoch;
    uint16_t topic_idx;
    uint8_t ts_type;
} knc_rec;

struct kn_records {
    knc_rec *recs;
    size_t count, cap;
    char **topics; /* owned copies, indexed by knc_rec.topic_idx */
    size_t topic_count, topic_cap;
    const char *last_topic_src; /* interning cache: caller's pointer ... */
    uint16_t last_topic_idx;    /* ... and its index */
    knc_buf **bufs;             /* one reference each */
    size_t buf_count, buf_cap;
};

/* A new empty set with room for cap records. Owned by the caller
 * (kn_records_free). NULL on allocation failure. */
kn_records *knc_records_new(size_t cap);
/* Appends a record whose slices point into buf (retained once per
 * distinct consecutive buffer). topic is copied the first time it is
 * seen. Returns 0 or KN_ERR__NOMEM. */
int knc_records_add(kn_records *recs, const char *topic, int32_t partition, int32_t leader_epoch,
                    int ts_type, const kn_record *rec, knc_buf *buf);

/* ---- one partition's buffered fetch (drain.c) ------------------------ */

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
    /* Safety net (fetcher.c): Fetches sent to p's leader without p while
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

/* ---- incremental fetch sessions (session.c) ------------------------------ */

typedef struct knc_sess_part {
    char *topic; /* owned */
    int32_t partition;
    int64_t offset; /* the fetch offset last sent */
} knc_sess_part;

typedef struct knc_session {
    int32_t id;     /* 0: none */
    int32_t epoch;  /* the next incremental epoch (>= 1) */
    bool topic_ids; /* opened with topic-id fetches */
    knc_sess_part *parts;
    int32_t count;
} knc_session;

/* Plans the next Fetch to the broker for the partitions want[0..n)
 * (topic strings are copied): include[i] tells whether partition i must
 * be listed (new to the session or moved; always for a full fetch);
 * *forgotten (owned by the caller: knc_session_forgotten_free) lists
 * the session's partitions no longer wanted. *session_id and *epoch go
 * into the request (epoch 0 with id 0: a full fetch opening a session).
 * The session then holds exactly want. Returns 0 or KN_ERR__NOMEM (the
 * session unchanged). */
int knc_session_plan(knc_session *s, const knc_sess_part *want, int32_t n, bool topic_ids,
                     bool *include, knc_sess_part **forgotten, int32_t *nforgotten,
                     int32_t *session_id, int32_t *epoch);
void knc_session_forgotten_free(knc_sess_part *forgotten, int32_t n);
/* The answer to a Fetch sent with sent_epoch: err is the request's
 * error (transport, or the response's top-level error_code). */
void knc_session_answer(knc_session *s, int32_t sent_epoch, int err, int32_t resp_session_id);
/* Forgets the session (the next fetch is full); frees its partitions. */
void knc_session_reset(knc_session *s);

/* ---- the consumer handle (consumer.c; fetcher.c runs its network side) */

typedef struct knc_node {
    int32_t node_id;
    bool fetch_inflight;
    int32_t inflight_bytes; /* the in-flight Fetch's max_bytes (budget reservation) */
    int64_t sent_ms;        /* when the in-flight Fetch was sent */
    bool overdue_warned;    /* the in-flight Fetch was reported as overdue */
    int64_t backoff_until_ms;
    knc_session session;
    int64_t window_listed; /* this tick: backlog bytes listed for it (window.h) */
} knc_node;

/* The consumer was created in another process (fork.h): the calls that
 * would take its locks or wait on its threads return `ret` instead. */
#define KNC_FORK_GUARD(c, ret)                        \
    do {                                              \
        if ((c) && kn_fork_changed(&(c)->fork))       \
            return ret;                               \
    } while (0)

struct kn_consumer {
    kn_fork_stamp fork; /* the creating process (fork.h): another one may not use it */
    knw_client *client;
    int ticker_id;
    pthread_mutex_t lock; /* guards everything below */
    pthread_cond_t cond;  /* signalled when data, positions or errors change */
    knc_part **parts;     /* the assignment, sorted by (topic, partition) */
    size_t part_count;
    uint64_t next_part_id;
    size_t drain_next; /* rotation: where the next poll starts draining */
    size_t fetch_next; /* rotation: which partition leads the next Fetch */
    knc_node *nodes;
    size_t node_count, node_cap;
    bool wakeup;
    bool closed;
    /* settings, read once */
    int max_poll_records;
    int fetch_max_wait_ms;
    int fetch_min_bytes;
    int fetch_max_bytes;
    int max_partition_fetch_bytes;
    /* The fetch-buffer budget (fetcher.c): raw response bytes held by
     * buffered slices plus the max_bytes of Fetches in flight stay
     * within fetch_budget, read-ahead included; see docs/consumer.md. */
    size_t fetch_budget;
    size_t fetch_held;
    knc_bpo fetch_bpo; /* raw bytes per offset fetched: sizes the Fetch window */
    int retry_backoff_ms;
    int metadata_max_age_ms; /* how long a preferred read replica holds (KIP-392) */
    int request_timeout_ms;
    int default_api_timeout_ms;
    knc_reset reset;
    int64_t reset_duration_ms; /* KNC_RESET_BY_DURATION */
    bool read_committed;
    char *rack; /* client.rack, owned */
    knc_drain_opts drain_opts;
    /* committed offsets (offsets.c); all NULL/-1 without group.id */
    char *group_id; /* owned */
    bool auto_commit;
    int auto_commit_interval_ms;
    int64_t next_auto_commit_ms;
    int32_t coord_id; /* the group coordinator, -1 unknown */
    bool offset_fetch_inflight;
    struct knc_commit *commit_head, *commit_tail; /* FIFO, head in flight */
    bool commit_inflight;
    int64_t commit_retry_at_ms;
    struct knc_commit *done_head, *done_tail; /* async commits whose callback is due */
    kn_consumer_stats stats; /* buffered_* are computed when read */
    /* group membership (core/consumer/group/); NULL without group.id */
    struct kng_group *grp;
    int grp_ticker_id; /* -1 until the first subscribe */
    bool in_poll;      /* a poll is running: max.poll.interval.ms is met */
    /* kn_consumer_set_ready_cb: fn NULL for none; called with the lock held */
    kn_consumer_ready_cb *ready_fn;
    void *ready_opaque;
    /* close: set while close runs (its deadline) / once it has begun */
    int64_t close_deadline_ms; /* 0: not closing */
    bool closing;
    /* Re-entrancy (application thread only): user callbacks running now
     * (rebalance listener, commit callbacks, custom assignor). poll,
     * close, unsubscribe and destroy from inside one return
     * KN_ERR__STATE (destroy: logged, nothing freed) instead of
     * recursing into the step that runs it or freeing the consumer
     * under it. */
    int cb_depth;
};

/* tplist.c: kn_topic_partition_list_add without the partition >= 0
 * check (subscription lists name topics with partition -1). */
int knc_tplist_add_any(kn_topic_partition_list *list, const char *topic, int32_t partition);

/* consumer.c: replaces the assignment (c->lock NOT held); what
 * kn_consumer_assign does, without the subscription check. */
int knc_set_assignment(kn_consumer *c, const kn_topic_partition_list *list);
/* group/: creates c->grp when group.id is set (consumer construction). */
int kng_create(kn_consumer *c, const kn_conf *conf, char *errstr, size_t errstr_size);
/* group/rebalance.c, application thread, no lock: runs the parked group
 * step if any (listener included). Returns 0 or the error poll returns. */
int kng_serve(kn_consumer *c, char *errstr, size_t errstr_size);
/* c->lock held: whether poll has a group step to run / the member is
 * subscribed. */
bool kng_app_pending(const kn_consumer *c);
bool kng_subscribed(const kn_consumer *c);
/* Records a poll (max.poll.interval.ms), c->lock held. */
void kng_polled(kn_consumer *c, int64_t now_ms);
/* close: revoke, leave (dynamic), free. No lock. */
void kng_close(kn_consumer *c);
void kng_destroy(kn_consumer *c);
/* c->lock held: the generation, member id and group.instance.id commits
 * carry (-1 / "" / NULL when not a group member). The strings stay valid
 * until the lock is dropped. */
int32_t kng_commit_identity(const kn_consumer *c, const char **member_id,
                            const char **instance_id);
/* c->lock held: whether a commit takes that identity when it is sent
 * (KIP-848, like Java) rather than when it is queued (classic). */
bool kng_commit_identity_at_send(const kn_consumer *c);

/* The consumer's logger: its client's (NULL, stderr, once close has
 * destroyed the client). */
static inline struct kn_logger *knc_logger(const kn_consumer *c) {
    return c->client ? knw_client_logger(c->client) : NULL;
}

/* The backoff between two attempts of a blocking call (application
 * thread, no lock): waits retry.backoff.ms, cut to deadline_ms, and
 * returns early with KN_ERR__WAKEUP (consuming it) when
 * kn_consumer_wakeup is called, as Java's blocking calls throw
 * WakeupException. Returns 0 after the wait. */
int knc_backoff_wait(kn_consumer *c, int64_t deadline_ms);

/* Brackets a user callback (application thread). */
static inline void knc_cb_enter(kn_consumer *c) { c->cb_depth++; }
static inline void knc_cb_leave(kn_consumer *c) { c->cb_depth--; }

/* The one way a state change is announced (c->lock held, called by
 * every path that changes what poll would return: network callbacks
 * and application calls alike): wakes a waiting poll, and fires the
 * readiness hook when poll has something to do now (knc_poll_ready),
 * so an event loop that only polls when woken never misses a change. */
void knc_signal(kn_consumer *c);
/* Whether poll(0) would make progress now (c->lock held): records on an
 * unpaused, non-revoking partition, an unreported partition error, a
 * due commit callback, a rebalance step, or a pending wakeup. */
bool knc_poll_ready(const kn_consumer *c);
/* The timeout a blocking request made on behalf of the consumer may
 * use: want_ms (-1: default.api.timeout.ms), cut to what is left of the
 * close timeout while close runs (0 when it is spent). */
int knc_call_timeout(const kn_consumer *c, int want_ms);

/* fetcher.c: the fetch-buffer budget (bytes of raw responses held by
 * buffered slices plus the max_bytes of Fetches in flight), derived
 * from max.partition.fetch.bytes. */
size_t knc_fetch_budget(int max_partition_fetch_bytes);
/* fetcher.c: the network-thread ticker (ListOffsets for unpositioned
 * partitions, then Fetch per leader). Takes c->lock itself. */
int knc_fetcher_tick(knw_client *client, int64_t now_ms, void *opaque);
/* validate.c: plans OffsetForLeaderEpoch requests (one per leader) for
 * partitions whose position awaits KIP-320 validation (c->lock held,
 * nothing sent); knc_validate_send sends them after the lock. */
void *knc_validate_plan(kn_consumer *c, const knw_metadata *md, int64_t now_ms);
void knc_validate_send(knw_client *client, void *plan);
/* offsets.c, network side, c->lock held: plans the next OffsetFetch or
 * OffsetCommit request (at most one of each kind in flight) and sends
 * nothing; knc_offsets_send sends the plan after the lock is released.
 * The group coordinator is looked up through the client's coordinator
 * table (core/wire/coordinator.h) and mirrored in c->coord_id. */
typedef struct knc_offsets_plan {
    void *offset_fetch;
    struct knc_commit *commit;
} knc_offsets_plan;
void knc_offsets_tick(kn_consumer *c, int64_t now_ms, knc_offsets_plan *plan);
void knc_offsets_send(kn_consumer *c, knw_client *client, knc_offsets_plan *plan);
/* offsets.c, c->lock held: a request to node (-1: whichever is current)
 * failed with err. If kn_err_is_coordinator(err), the group coordinator
 * is forgotten (c->coord_id and the client's table) and true returned. */
bool knc_coord_failed(kn_consumer *c, int32_t node, int err);
/* offsets.c, application side: runs due commit callbacks (takes and
 * drops c->lock itself; call without it). */
void knc_serve_commit_callbacks(kn_consumer *c);
/* offsets.c: the sync commit before a revoke under auto-commit (no
 * lock): like kn_consumer_commit_sync, but STALE_MEMBER_EPOCH is retried
 * with the newest member epoch until the timeout, as Java does. */
int knc_commit_sync_before_revoke(kn_consumer *c, kn_topic_partition_list *offsets,
                                  int timeout_ms);
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
 * revokes (kng_pre_revoke_done runs when it finishes), with the
 * deadline given. Returns 0 or an error (nothing queued). */
int knc_commit_before_revoke(kn_consumer *c, kn_topic_partition_list *offsets, int64_t deadline_ms);
/* group/rebalance.c (c->lock held): the commit before a revoke
 * finished with err; the parked rebalance step may go on. */
void kng_pre_revoke_done(kn_consumer *c, int err);

/* Finds an assigned partition (c->lock held); NULL if not assigned. */
knc_part *knc_find_part(const kn_consumer *c, const char *topic, size_t topic_len,
                        int32_t partition);

#endif
