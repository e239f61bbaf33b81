/*
 * kafka_native_consumer.h: the public consumer API (core/consumer/).
 *
 * Owns three public object types:
 *  - kn_topic_partition_list: a list of (topic, partition) entries with an
 *    offset, leader epoch, metadata string and error per entry; the
 *    argument and result type of assign/assignment/pause/commit and of
 *    the admin calls that take partitions.
 *  - kn_records: the records one kn_consumer_poll() returned, read with
 *    per-record accessors. Key, value and header bytes point straight
 *    into the fetched (or decompressed) batches: no per-record copy.
 *  - kn_consumer: the consumer handle. One application thread at a time
 *    calls it (like Java's KafkaConsumer); kn_consumer_wakeup() is the
 *    one call that is safe from any thread.
 *
 * Partitions come either from manual assignment (kn_consumer_assign) or
 * from a consumer group (kn_consumer_subscribe / _subscribe_pattern /
 * _subscribe_regex; the classic protocol or KIP-848 per group.protocol). The two are mutually
 * exclusive. See docs/consumer.md and docs/groups.md.
 */
#ifndef KAFKA_NATIVE_CONSUMER_H
#define KAFKA_NATIVE_CONSUMER_H

#include <stddef.h>
#include <stdint.h>

#include "kafka_native_export.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- topic-partition list ------------------------------------------- */

typedef struct kn_topic_partition_list kn_topic_partition_list;

/* Offset values with a special meaning in a list entry. */
#define KN_OFFSET_INVALID (-1001) /* no offset (the default of a new entry) */
#define KN_OFFSET_BEGINNING (-2)  /* seek: earliest available */
#define KN_OFFSET_END (-1)        /* seek: the end of the log */

/* A new empty list. Owned by the caller: kn_topic_partition_list_destroy.
 * NULL on allocation failure. */
KN_API kn_topic_partition_list *kn_topic_partition_list_new(void);
/* Deep copy. Owned by the caller. NULL on allocation failure. */
KN_API kn_topic_partition_list *kn_topic_partition_list_copy(const kn_topic_partition_list *list);
KN_API void kn_topic_partition_list_destroy(kn_topic_partition_list *list);

/* Appends an entry (topic is copied) with offset KN_OFFSET_INVALID,
 * leader epoch -1, no metadata, error 0. Returns the entry's index
 * (>= 0), or KN_ERR__INVALID_ARG (NULL/empty topic, negative partition)
 * or KN_ERR__NOMEM. Duplicates are allowed in the list; the calls that
 * take a list reject them where they make no sense. */
KN_API int kn_topic_partition_list_add(kn_topic_partition_list *list, const char *topic,
                                       int32_t partition);
/* Index of the first entry for (topic, partition), or -1. */
KN_API int kn_topic_partition_list_find(const kn_topic_partition_list *list, const char *topic,
                                        int32_t partition);
KN_API size_t kn_topic_partition_list_count(const kn_topic_partition_list *list);

/* Entry accessors; i must be < count. The topic and metadata strings
 * are owned by the list. */
KN_API const char *kn_topic_partition_list_topic(const kn_topic_partition_list *list, size_t i);
KN_API int32_t kn_topic_partition_list_partition(const kn_topic_partition_list *list, size_t i);
KN_API int64_t kn_topic_partition_list_offset(const kn_topic_partition_list *list, size_t i);
KN_API void kn_topic_partition_list_set_offset(kn_topic_partition_list *list, size_t i, int64_t offset);
KN_API int32_t kn_topic_partition_list_leader_epoch(const kn_topic_partition_list *list, size_t i);
KN_API void kn_topic_partition_list_set_leader_epoch(kn_topic_partition_list *list, size_t i,
                                                     int32_t leader_epoch);
/* NULL when unset. */
KN_API const char *kn_topic_partition_list_metadata(const kn_topic_partition_list *list, size_t i);
/* Copies metadata (NULL clears it). Returns KN_OK or KN_ERR__NOMEM. */
KN_API int kn_topic_partition_list_set_metadata(kn_topic_partition_list *list, size_t i,
                                                const char *metadata);
KN_API int kn_topic_partition_list_err(const kn_topic_partition_list *list, size_t i);
KN_API void kn_topic_partition_list_set_err(kn_topic_partition_list *list, size_t i, int err);

/* ---- records ---------------------------------------------------------- */

typedef struct kn_records kn_records;

#define KN_TIMESTAMP_CREATE_TIME 0
#define KN_TIMESTAMP_LOG_APPEND_TIME 1

/* Number of records (may be 0). */
KN_API size_t kn_records_count(const kn_records *recs);
/* Per-record accessors; i must be < count. Strings and byte pointers
 * are owned by recs and valid until kn_records_free(recs). */
KN_API const char *kn_records_topic(const kn_records *recs, size_t i);
KN_API int32_t kn_records_partition(const kn_records *recs, size_t i);
KN_API int64_t kn_records_offset(const kn_records *recs, size_t i);
KN_API int64_t kn_records_timestamp(const kn_records *recs, size_t i);
/* KN_TIMESTAMP_CREATE_TIME or KN_TIMESTAMP_LOG_APPEND_TIME. */
KN_API int kn_records_timestamp_type(const kn_records *recs, size_t i);
/* The partition leader epoch of the record's batch, or -1 if unknown. */
KN_API int32_t kn_records_leader_epoch(const kn_records *recs, size_t i);
/* Key / value bytes: NULL for a null key/value (with *len = 0); an empty
 * one is a non-NULL pointer with *len = 0. len may be NULL. */
KN_API const void *kn_records_key(const kn_records *recs, size_t i, size_t *len);
KN_API const void *kn_records_value(const kn_records *recs, size_t i, size_t *len);
KN_API size_t kn_records_header_count(const kn_records *recs, size_t i);
/* Header h of record i: *key (not NUL-terminated, never NULL) and *value
 * (NULL for a null value). Returns KN_OK or KN_ERR__INVALID_ARG (h out of
 * range). */
KN_API int kn_records_header(const kn_records *recs, size_t i, size_t h, const char **key,
                             size_t *key_len, const void **value, size_t *value_len);
/* Frees recs and releases the fetched data it kept alive. NULL is a
 * no-op. May be called on any thread, also after the consumer is
 * closed. */
KN_API void kn_records_free(kn_records *recs);

/* ---- group metadata ---------------------------------------------------
 * A consumer's group identity at one moment (Java's ConsumerGroupMetadata):
 * what a transactional producer sends with the offsets it commits
 * (kn_producer_send_offsets_to_transaction), so the coordinator can fence
 * a zombie member. A plain value: the strings are copied in and owned. */

typedef struct kn_group_metadata kn_group_metadata;

/* generation: the classic generation id, or the KIP-848 member epoch; -1
 * when not in a group. member_id: "" when unknown (NULL reads as "").
 * group_instance_id: NULL for a dynamic member. Returns NULL on allocation
 * failure or a NULL/empty group_id. Owned by the caller:
 * kn_group_metadata_destroy. */
KN_API kn_group_metadata *kn_group_metadata_new(const char *group_id, int32_t generation,
                                                const char *member_id,
                                                const char *group_instance_id);
KN_API kn_group_metadata *kn_group_metadata_copy(const kn_group_metadata *gm);
KN_API void kn_group_metadata_destroy(kn_group_metadata *gm);
KN_API const char *kn_group_metadata_group_id(const kn_group_metadata *gm);
KN_API int32_t kn_group_metadata_generation(const kn_group_metadata *gm);
KN_API const char *kn_group_metadata_member_id(const kn_group_metadata *gm);
/* NULL for a dynamic member. */
KN_API const char *kn_group_metadata_group_instance_id(const kn_group_metadata *gm);

/* ---- consumer --------------------------------------------------------- */

typedef struct kn_conf kn_conf;
typedef struct kn_consumer kn_consumer;

/* Builds a consumer from a KN_CLIENT_CONSUMER configuration (copied;
 * the caller keeps conf) and starts its network thread. Returns NULL
 * with errstr filled on invalid configuration or resource failure.
 * Owned by the caller: kn_consumer_close then kn_consumer_destroy. On
 * NULL, kn_last_error() says why. */
KN_API kn_consumer *kn_consumer_new(const kn_conf *conf, char *errstr, size_t errstr_size);

/* Replaces the assignment with the partitions in list (offsets in the
 * list are ignored: use seek). Partitions kept from the previous
 * assignment keep their position, buffered records and paused state;
 * new ones start unpositioned (resolved from auto.offset.reset).
 * An empty list unassigns everything. Returns KN_OK,
 * KN_ERR__INVALID_ARG (duplicate entries), KN_ERR__NOMEM or
 * KN_ERR__CLOSED. */
KN_API int kn_consumer_assign(kn_consumer *c, const kn_topic_partition_list *list);
/* The current assignment (offsets = current positions, or
 * KN_OFFSET_INVALID when unpositioned). Owned by the caller; NULL on
 * allocation failure. */
KN_API kn_topic_partition_list *kn_consumer_assignment(kn_consumer *c);

/* The partitions of topic from the cluster metadata (like Java's
 * partitionsFor), as a list ready for kn_consumer_assign, waiting up to
 * timeout_ms (-1: default.api.timeout.ms) for the topic to appear.
 * Returns KN_OK with *list owned by the caller, KN_ERR__UNKNOWN_TOPIC
 * (not in the metadata when the time ran out), or another error. */
KN_API int kn_consumer_partitions_for(kn_consumer *c, const char *topic, int timeout_ms,
                                      kn_topic_partition_list **list);

/* Returns records from assigned, unpaused partitions: up to
 * max.poll.records, straight from buffered fetches when there are any
 * (then it does not wait), otherwise waiting up to timeout_ms for data
 * (0: never blocks; -1: no limit). On KN_OK *recs is a new kn_records
 * (possibly empty after a timeout) owned by the caller:
 * kn_records_free. On error *recs is NULL and errstr says what
 * happened:
 *  - KN_ERR__WAKEUP: kn_consumer_wakeup() interrupted the wait;
 *  - KN_ERR__NO_OFFSET: a partition has no position and
 *    auto.offset.reset=none (errstr names it);
 *  - KN_ERR__BAD_BATCH: a batch at a partition's position does not
 *    decode (errstr names topic, partition and offset; nothing is
 *    skipped: seek past it to go on);
 *  - KN_ERR_OFFSET_OUT_OF_RANGE under auto.offset.reset=none, or another
 *    partition-level Kafka error that retrying does not fix.
 *  - KN_ERR__AUTHENTICATION: SASL authentication failed (errstr has the
 *    broker's reason); fatal: every later poll says the same, close it.
 * A partition-level error is reported once; the partition then stays
 * stopped until it is seeked, while the other partitions keep flowing
 * on the next polls. KN_ERR__CLOSED after close. */
KN_API int kn_consumer_poll(kn_consumer *c, int timeout_ms, kn_records **recs, char *errstr,
                            size_t errstr_size);

/* Moves the fetch position of an assigned partition (discarding its
 * buffered records); offset >= 0, or KN_OFFSET_BEGINNING / KN_OFFSET_END.
 * Returns KN_OK, KN_ERR__INVALID_ARG, or KN_ERR__STATE (not assigned). */
KN_API int kn_consumer_seek(kn_consumer *c, const char *topic, int32_t partition, int64_t offset);
/* Seeks every partition of list (all assigned ones when list is NULL)
 * to the earliest / the end offset, resolved lazily by the next fetch. */
KN_API int kn_consumer_seek_to_beginning(kn_consumer *c, const kn_topic_partition_list *list);
KN_API int kn_consumer_seek_to_end(kn_consumer *c, const kn_topic_partition_list *list);
/* The offset of the next record poll will return for the partition,
 * waiting up to timeout_ms (-1: default.api.timeout.ms) for an
 * unpositioned partition to be resolved. Returns KN_OK with *offset,
 * KN_ERR__STATE (not assigned), KN_ERR__TIMED_OUT, KN_ERR__NO_OFFSET. */
KN_API int kn_consumer_position(kn_consumer *c, const char *topic, int32_t partition, int timeout_ms,
                                int64_t *offset);

/* Pause stops fetching and returning records for the listed assigned
 * partitions; records already buffered are kept and delivered after
 * resume. Returns KN_OK or KN_ERR__STATE (an entry is not assigned: then
 * nothing changes). */
KN_API int kn_consumer_pause(kn_consumer *c, const kn_topic_partition_list *list);
KN_API int kn_consumer_resume(kn_consumer *c, const kn_topic_partition_list *list);
/* The paused partitions. Owned by the caller; NULL on allocation
 * failure. */
KN_API kn_topic_partition_list *kn_consumer_paused(kn_consumer *c);


/* ---- consumer groups ----
 * kn_consumer_subscribe joins the group named by group.id (required)
 * with group.protocol (classic: partition.assignment.strategy decides
 * the assignor; consumer: KIP-848, the coordinator assigns with
 * group.remote.assignor). Group traffic (coordinator lookup, joins,
 * heartbeats) runs on the network thread, independent of the poll
 * cadence; rebalance steps that need the application run inside
 * kn_consumer_poll (and close / unsubscribe). A member that does not
 * poll within max.poll.interval.ms leaves the group (its partitions are
 * then reported lost and it rejoins on the next poll). */

typedef enum kn_rebalance_event {
    KN_REBALANCE_ASSIGNED = 1, /* parts: the partitions newly added */
    KN_REBALANCE_REVOKED = 2,  /* parts: the partitions handed back; still committable */
    KN_REBALANCE_LOST = 3      /* parts: ownership may already be elsewhere: no commit */
} kn_rebalance_event;

/* The rebalance listener. Runs on the application thread inside poll
 * (and close / unsubscribe), never concurrently with another consumer
 * call; it may call back into the consumer (commit_sync inside REVOKED,
 * position / seek / committed inside ASSIGNED), but poll, close and
 * unsubscribe return KN_ERR__STATE there (and destroy does nothing), as
 * from any callback of the consumer (commit callbacks, custom assignors
 * too). parts is valid only during the call. Returns 0, or an error
 * that the call that ran it returns once the rebalance step is
 * complete. */
typedef int kn_rebalance_cb(kn_consumer *c, kn_rebalance_event ev,
                            const kn_topic_partition_list *parts, void *opaque);

/* Subscribes to topics (count > 0; names copied). cb may be NULL.
 * Replaces an earlier subscription (a changed topic set rejoins).
 * Returns KN_OK, KN_ERR__INVALID_ARG, KN_ERR__STATE (no group.id, or
 * partitions were assigned manually: unassign with an empty
 * kn_consumer_assign first), KN_ERR__NOMEM or KN_ERR__CLOSED. */
KN_API int kn_consumer_subscribe(kn_consumer *c, const char *const *topics, size_t count,
                                 kn_rebalance_cb *cb, void *opaque);
/* Subscribes to every topic whose whole name matches regex (POSIX
 * extended syntax; like Java's Pattern.matcher(name).matches()),
 * re-matched against live metadata every metadata.max.age.ms; internal
 * topics are skipped under exclude.internal.topics. Both protocols
 * match on the client (under KIP-848 the matches are sent as topic
 * names, like Java's subscribe(Pattern)). KN_ERR__INVALID_ARG for a
 * regex that does not compile. */
KN_API int kn_consumer_subscribe_pattern(kn_consumer *c, const char *regex, kn_rebalance_cb *cb,
                                         void *opaque);
/* Subscribes to the topics a broker-side regular expression matches
 * (KIP-848 only; Java's subscribe(SubscriptionPattern)): the regex, RE2J
 * syntax, goes to the coordinator (ConsumerGroupHeartbeat v1, Kafka
 * 4.0+), which matches it against every topic, re-evaluates it as
 * topics are created and deleted, and assigns the matches. Not checked
 * here: a regex the broker rejects stops the group and poll returns
 * INVALID_REGULAR_EXPRESSION with the broker's message; a broker
 * without the field, KN_ERR__UNSUPPORTED_VERSION from poll.
 * kn_consumer_subscription lists the topics of the latest assignment.
 * Returns KN_OK, KN_ERR__INVALID_ARG (NULL or empty), KN_ERR__UNSUPPORTED
 * under group.protocol=classic (Java's UnsupportedOperationException),
 * or what kn_consumer_subscribe returns. */
KN_API int kn_consumer_subscribe_regex(kn_consumer *c, const char *regex, kn_rebalance_cb *cb,
                                       void *opaque);
/* Leaves the group: runs REVOKED (or LOST) for the owned partitions,
 * commits first under enable.auto.commit, sends LeaveGroup for a
 * dynamic member, and clears the subscription. Returns KN_OK, the
 * listener's error, or KN_ERR__STATE from a callback of the consumer. */
KN_API int kn_consumer_unsubscribe(kn_consumer *c);
/* The subscribed topics (for a pattern: the topics it matches now; for
 * a broker-side regex: the topics of the latest assignment), each
 * with partition -1.
 * Owned by the caller; NULL when not subscribed or out of memory. */
KN_API kn_topic_partition_list *kn_consumer_subscription(kn_consumer *c);
/* The member's group identity now (generation / member epoch, member
 * id, group.instance.id). Owned by the caller; NULL without group.id. */
KN_API kn_group_metadata *kn_consumer_group_metadata(kn_consumer *c);
/* Asks the group to rebalance (the member rejoins; reason, may be NULL,
 * goes to the coordinator). KN_ERR__STATE when not subscribed. Under
 * KIP-848 there is no client-triggered rebalance: KN_ERR__UNSUPPORTED,
 * like Java's. */
KN_API int kn_consumer_enforce_rebalance(kn_consumer *c, const char *reason);

/* ---- custom assignors (classic protocol) ----
 * Java's ConsumerPartitionAssignor: when this member leads the group
 * and the coordinator chose the assignor's name, assign runs on the
 * application thread inside poll (never on the network thread) with
 * every member's subscription and the partition counts, and records
 * its decision with kn_assignor_ctx_assign. */

typedef struct kn_assignor_ctx kn_assignor_ctx;
/* The members, in the coordinator's order. Strings are valid during
 * the assign call only. */
KN_API int32_t kn_assignor_ctx_member_count(const kn_assignor_ctx *ctx);
KN_API const char *kn_assignor_ctx_member_id(const kn_assignor_ctx *ctx, int32_t member);
/* NULL for a dynamic member. */
KN_API const char *kn_assignor_ctx_member_instance_id(const kn_assignor_ctx *ctx, int32_t member);
KN_API int32_t kn_assignor_ctx_member_topic_count(const kn_assignor_ctx *ctx, int32_t member);
KN_API const char *kn_assignor_ctx_member_topic(const kn_assignor_ctx *ctx, int32_t member, int32_t i);
/* The topic's partition count in the leader's metadata (0: unknown). */
KN_API int32_t kn_assignor_ctx_partition_count(const kn_assignor_ctx *ctx, const char *topic);
/* Gives topic/partition to member. KN_OK, KN_ERR__INVALID_ARG (member
 * out of range, topic nobody subscribes to, partition out of range) or
 * KN_ERR__NOMEM. */
KN_API int kn_assignor_ctx_assign(kn_assignor_ctx *ctx, int32_t member, const char *topic,
                                  int32_t partition);

/* Returns 0, or an error: the member then fails its join (the group
 * stops with that error, reported by poll). */
typedef int kn_assign_cb(kn_consumer *c, kn_assignor_ctx *ctx, void *opaque);

/* Offers a custom assignor under name, ahead of the ones in
 * partition.assignment.strategy (custom ones in the order added).
 * cooperative: it supports KIP-429 (it must never move a partition
 * straight from one member to another in one round). Call before
 * subscribe. Returns KN_OK, KN_ERR__STATE (no group.id, KIP-848, or
 * already subscribed), KN_ERR__INVALID_ARG (empty or duplicate name,
 * NULL cb) or KN_ERR__NOMEM. */
KN_API int kn_consumer_add_assignor(kn_consumer *c, const char *name, int cooperative, kn_assign_cb *cb,
                                    void *opaque);

/* ---- committed offsets (need group.id) ----
 * A manually assigned consumer's commits carry no generation or member
 * id (as Java's); a subscribed member's carry its generation (or member
 * epoch) and member id, so a fenced member cannot commit. With group.id set, a newly assigned
 * partition starts at its committed offset, else at auto.offset.reset.
 * With enable.auto.commit (Java's default), every position is committed
 * asynchronously every auto.commit.interval.ms from poll, and
 * synchronously at close. */

/* Called from kn_consumer_poll (or commit_sync / close) on the
 * application thread when an asynchronous commit finished. offsets has
 * per-entry errors (kn_topic_partition_list_err); it is valid only
 * during the call. */
typedef void kn_consumer_commit_cb(kn_consumer *c, int err,
                                   const kn_topic_partition_list *offsets, void *opaque);

/* Commits offsets (entries with offset >= 0, leader epoch and metadata
 * as set), or every positioned partition's position when offsets is
 * NULL. Commits are applied strictly in call order, after every earlier
 * commit_async. Waits up to timeout_ms (-1: default.api.timeout.ms),
 * retrying while the coordinator is loading or moves. Returns KN_OK,
 * KN_ERR__PARTIAL (see the per-entry errors in offsets, when given),
 * KN_ERR__TIMED_OUT, KN_ERR__STATE (no group.id) or a Kafka error. */
KN_API int kn_consumer_commit_sync(kn_consumer *c, kn_topic_partition_list *offsets, int timeout_ms);
/* Like commit_sync without waiting: cb (may be NULL) runs from a later
 * poll. Returns KN_OK (queued; cb will run exactly once) or an error
 * (cb will not run). offsets is copied. */
KN_API int kn_consumer_commit_async(kn_consumer *c, const kn_topic_partition_list *offsets,
                                    kn_consumer_commit_cb *cb, void *opaque);
/* Reads the committed offsets of the listed partitions into the list:
 * offset (KN_OFFSET_INVALID when none), leader epoch, metadata, and
 * per-entry error. Returns KN_OK, KN_ERR__TIMED_OUT, KN_ERR__WAKEUP
 * (kn_consumer_wakeup during a retry backoff), KN_ERR__STATE (no
 * group.id) or a Kafka error. */
KN_API int kn_consumer_committed(kn_consumer *c, kn_topic_partition_list *list, int timeout_ms);

/* ---- offset queries ----
 * Live ListOffsets to each partition's leader (blocking up to
 * timeout_ms; -1: default.api.timeout.ms). Results go into the list:
 * offset (KN_OFFSET_INVALID when there is none), leader epoch and a
 * per-entry error. Returns KN_OK, KN_ERR__PARTIAL (see the entries),
 * KN_ERR__TIMED_OUT or KN_ERR__INVALID_ARG. The partitions need not be
 * assigned. Under read_committed the end offset is the last stable
 * offset. */
KN_API int kn_consumer_beginning_offsets(kn_consumer *c, kn_topic_partition_list *list, int timeout_ms);
KN_API int kn_consumer_end_offsets(kn_consumer *c, kn_topic_partition_list *list, int timeout_ms);
/* Each entry's offset is a timestamp (ms since the epoch) on input; on
 * output, the earliest offset whose timestamp is at or after it
 * (KN_OFFSET_INVALID if none). */
KN_API int kn_consumer_offsets_for_times(kn_consumer *c, kn_topic_partition_list *list, int timeout_ms);
/* An assigned partition's lag from the last Fetch response, without a
 * request: log end (the last stable offset under read_committed) minus
 * the position. KN_ERR__NOT_FOUND before the first response (or while
 * unpositioned), KN_ERR__STATE if not assigned. May be stale: use
 * end_offsets for an exact answer. */
KN_API int kn_consumer_lag(kn_consumer *c, const char *topic, int32_t partition, int64_t *lag);
/* KIP-392: the broker an assigned partition is fetched from when its
 * leader named a read replica (with client.rack set and brokers running
 * a rack-aware replica.selector.class), or -1 while it is fetched from
 * its leader. The replica holds for metadata.max.age.ms, until it goes
 * offline, or until it answers with an error. KN_ERR__STATE if not
 * assigned. */
KN_API int kn_consumer_read_replica(kn_consumer *c, const char *topic, int32_t partition, int32_t *node_id);

/* ---- statistics ----
 * A consistent snapshot of counters since the consumer was created;
 * cheap (one lock, no allocation), so it can be read every poll.
 * Size-versioned like kn_producer_stats: set size first
 * (kn_consumer_stats st = {.size = sizeof st};); the library writes at
 * most size bytes and sets size to the bytes it wrote. New counters are
 * only ever added at the end. */
typedef struct kn_consumer_stats {
    size_t size;                 /* in: sizeof the caller's struct; out: bytes written */
    int64_t polls;               /* kn_consumer_poll calls */
    int64_t records;             /* records returned by poll */
    int64_t record_bytes;        /* key + value bytes of those records */
    int64_t fetch_requests;      /* Fetch responses received (any outcome) */
    int64_t fetch_errors;        /* ... that failed as a whole */
    int64_t fetch_incremental;   /* ... sent inside an incremental fetch session */
    int64_t fetch_read_replica;  /* ... sent to a preferred read replica, not the leader (KIP-392) */
    int64_t fetch_latency_us_total; /* sum of Fetch round trips (incl. broker wait) */
    int64_t fetch_latency_us_max;
    int64_t fetch_response_bytes;   /* raw Fetch response bytes */
    int64_t buffered_bytes;      /* raw fetched bytes buffered now */
    int64_t buffered_partitions; /* partitions holding buffered data now */
    int64_t commits;             /* commits finished without error */
    int64_t commit_errors;       /* commits finished with an error */
    int64_t validations;         /* positions checked after a leader epoch change (KIP-320) */
    int64_t truncations;         /* ... of which moved down to a divergence */
    int64_t rebalances;          /* group assignments applied (joins and reassignments) */
    int64_t rebalances_failed;   /* joins that failed and were retried */
    int64_t partitions_revoked;  /* partitions handed back in a rebalance */
    int64_t partitions_lost;     /* partitions dropped as lost (fenced, expired) */
    int64_t join_latency_ms_last;  /* rejoin start -> assignment applied, last rebalance */
    int64_t join_latency_ms_total; /* ... summed over all rebalances */
    int64_t connects;          /* broker connections established (TCP) */
    int64_t connect_failures;  /* connection attempts that failed (incl. authentication) */
    int64_t reauthentications; /* SASL re-authentications (KIP-368) */
    /* Quotas (KIP-219): throttle_time_ms of the Fetch responses, mean
     * over all of them (0 included) and largest, since creation (Java's
     * fetch-throttle-time-avg / -max, there over a time window). A
     * throttled broker gets no request until the time is up. */
    int64_t fetch_throttle_time_avg_ms;
    int64_t fetch_throttle_time_max_ms;
} kn_consumer_stats;
/* KN_OK, or KN_ERR__INVALID_ARG (NULL c or out, or out->size smaller
 * than a size_t: nothing written), or KN_ERR__FORKED (kn_consumer_forked:
 * nothing written). After close the connection counters read 0. */
KN_API int kn_consumer_get_stats(kn_consumer *c, kn_consumer_stats *out);

/* Any thread: makes the poll that is waiting (or the next poll that
 * would wait) return KN_ERR__WAKEUP. Exactly one poll is interrupted; a
 * poll that has records to return returns them instead and leaves the
 * wakeup pending. Also fires the readiness hook (kn_consumer_set_ready_cb),
 * on the calling thread, so an event loop waiting on it wakes. */
KN_API void kn_consumer_wakeup(kn_consumer *c);

/* Readiness hook, for event loops that cannot block in poll (OpenResty,
 * luv, cqueues). fn is called on the client's network thread (see below for
 * wakeup), with the
 * consumer's internal lock held, each time a poll may now return
 * something new without waiting: fetched records landed, a partition
 * failed (poll will return its error), an async commit finished (its
 * callback is due), or kn_consumer_wakeup() was called (then on the
 * thread that called it). It must return quickly and must not call into the
 * consumer: write a byte to a descriptor the loop watches, set a flag.
 * A poll that leaves something else ready behind it (records beyond
 * max.poll.records, a second partition's error, a due commit callback)
 * fires it again at its end, on the polling thread, so a loop may poll
 * once per wake and never stall. fn NULL removes the hook; once
 * this returns, the old fn is not running and will not run again. */
typedef void kn_consumer_ready_cb(kn_consumer *c, void *opaque);
KN_API void kn_consumer_set_ready_cb(kn_consumer *c, kn_consumer_ready_cb *fn, void *opaque);

/* Closes within timeout_ms (-1: 30 s, Java's default), like Java's
 * close(Duration): under enable.auto.commit commits the positions
 * (a subscribed member as part of its revoke), runs REVOKED and leaves
 * the group, and waits for every queued and in-flight commit; then
 * stops fetching, drops buffered data and closes the network thread.
 * Commits still unanswered when the time is up complete with
 * KN_ERR__CLOSED: every commit_async callback runs exactly once, at
 * the latest here. With timeout 0 nothing waits on the network (no
 * commit, no LeaveGroup: the coordinator expires the member). From a
 * callback of the same consumer: KN_ERR__STATE, nothing done.
 * Records handed out earlier stay valid until freed. Idempotent;
 * calls after it return KN_ERR__CLOSED; the handle stays valid (so a
 * wakeup racing with close is safe) until kn_consumer_destroy. NULL is
 * a no-op. In a fork() child of the creator: KN_ERR__FORKED
 * (kn_consumer_forked). Returns KN_OK. The lifecycle every client shares: see
 * "Lifecycle" in docs/architecture.md. */
KN_API int kn_consumer_close(kn_consumer *c, int timeout_ms);
/* Frees the handle, closing it first with the default timeout
 * (kn_consumer_close(c, -1)) if that was not done. NULL is a no-op; so
 * is a call from a callback of the same consumer (logged), and one in
 * another process than the creator's (kn_consumer_forked). */
KN_API void kn_consumer_destroy(kn_consumer *c);
/* Deprecated: the old name of kn_consumer_close(c, timeout_ms). */
KN_API int kn_consumer_close_timeout(kn_consumer *c, int timeout_ms)
    KN_DEPRECATED("use kn_consumer_close(c, timeout_ms)");
/* Non-zero when c was created in another process (this one is a fork()
 * child of it). Its network thread exists only in the parent, so poll,
 * commit, assign, subscribe, seek, position, the offset queries and
 * close (and get_stats) return KN_ERR__FORKED without waiting or
 * touching its locks; wakeup and set_ready_cb do nothing, and destroy leaves the
 * copy alone (leaked). Create clients after forking (nginx: in each
 * worker, from init_worker_by_lua). */
KN_API int kn_consumer_forked(const kn_consumer *c);

#ifdef __cplusplus
}
#endif
#endif
