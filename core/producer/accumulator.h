/*
 * accumulator.h: the producer's record accumulator (knp_acc_ prefix).
 *
 * Owns every record between kn_producer_send() and its delivery report:
 * per-topic entries (name, partition count, partitioner state), a queue
 * of batches per partition, the buffer.memory budget, and the queue of
 * completed batches whose reports wait for kn_producer_poll().
 *
 * Records are encoded straight into the open batch's record buffer
 * (kn_rb_builder); per record only a 24-byte slot (callback, opaque,
 * timestamp) is kept, in a per-batch array grown by doubling.
 *
 * Locking: one mutex (acc->lock) guards everything here. The application
 * thread appends under it; the sender (network thread) drains, requeues
 * and completes batches under it. A batch taken off its queue by the
 * sender belongs to the sender until it is requeued or completed, so the
 * sender may compress it without the lock.
 */
#ifndef KN_PRODUCER_ACCUMULATOR_H
#define KN_PRODUCER_ACCUMULATOR_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "kafka_native.h"
#include "producer/bufpool.h"
#include "producer/partitioner.h"
#include "producer/topic_metrics.h"
#include "proto/record_batch.h"
#include "writer.h"

typedef struct knp_topic knp_topic;
typedef struct knp_partq knp_partq;

typedef struct knp_rec_meta {
    kn_delivery_cb *dr;
    void *opaque;
    int64_t timestamp;
} knp_rec_meta;

typedef struct knp_batch {
    struct knp_batch *next; /* queue, in-flight request or done list */
    knp_partq *pq;
    kn_rb_builder b;  /* records appended so far (freed once built) */
    bool full;        /* no further appends */
    bool built;       /* `wire` holds the finished batch */
    kn_wr wire;       /* the finished batch: header + (compressed) records */
    knp_rec_meta *meta;
    int32_t count;
    int32_t meta_cap;
    size_t mem;       /* bytes charged to buffer.memory */
    bool has_dr;      /* some record carries its own callback */
    int64_t created_ms;
    int64_t deadline_ms; /* created + delivery.timeout.ms */
    int64_t retry_at_ms; /* not before (backoff) */
    int32_t attempts;    /* Produce requests it went out in */
    int32_t base_seq;    /* idempotence: -1 until assigned */
    int32_t max_rec_size; /* encoded size of its largest record (record-size-*) */
    /* Outcome, set when completed. */
    int err;
    int64_t base_offset;
    int64_t log_append_time;
    char errstr[160];
} knp_batch;

struct knp_partq {
    knp_topic *topic;
    int32_t partition;
    knp_batch *head, *tail; /* queued batches, retries first (sequence order) */
    int32_t depth;
    int32_t inflight;       /* batches in requests not yet answered */
    int32_t inflight_node;  /* the node they went to */
    int32_t next_seq;       /* idempotence: next base sequence */
    int32_t leader;         /* from the sender's latest metadata, -1 unknown */
    int64_t stale_before_ms; /* leader unusable until metadata fetched after this */
    int32_t acked_next;     /* idempotence: sequence the broker expects next */
    bool acked_any;         /* idempotence: a batch was acknowledged in this epoch */
    uint32_t pid_gen;       /* idempotence: the sender's producer id/epoch generation
                             * its sequences belong to (switched when idle) */
    bool txn_added;         /* transactions: AddPartitionsToTxn done for this one */
    bool txn_adding;        /* transactions: in the AddPartitionsToTxn in flight */
    uint32_t drain_gen;     /* sender: request round that last took a batch */
};

struct knp_topic {
    char *name;
    int32_t partition_count; /* 0 until metadata */
    knp_partq **parts;       /* partition_count entries, created lazily */
    int32_t *avail;          /* partitions with a leader */
    int32_t navail;
    knp_sticky sticky;
    uint32_t rr_counter;
    int64_t metadata_error;  /* last topic-level metadata error, 0 */
    knp_partq *parked_pq;    /* partition -1 stand-in for failed parked records' reports, lazily */
    knp_topic_metrics metrics; /* producer-topic-metrics sensors, made with the topic */
    knp_topic *hnext;
};

/* A record sent while its topic had no metadata yet under
 * max.block.ms = 0 (knp_acc_park): a copy waiting, at most until its
 * deadline (delivery.timeout.ms after the send), for the sender to
 * place it once the topic's partition count is known. */
typedef struct knp_parked {
    struct knp_parked *next;
    knp_topic *t;
    int32_t partition;   /* the record's, or -1 */
    int64_t deadline_ms; /* monotonic */
    int64_t timestamp;
    kn_delivery_cb *dr;
    void *opaque;
    int64_t mem;         /* charged to buffer.memory */
    kn_bytes key, value; /* len < 0: null; into data */
    kn_rb_kv *headers;   /* header_count entries, into data */
    size_t header_count;
    char data[];
} knp_parked;

typedef struct knp_acc_conf {
    int32_t batch_size;
    int64_t linger_ms;
    int64_t buffer_memory;
    int32_t max_request_size;
    int64_t delivery_timeout_ms;
    int64_t max_block_ms; /* how long an append may wait for buffer memory */
    int codec;
    int level;
    bool ignore_keys;
    bool round_robin;
    bool adaptive;
    bool has_global_dr; /* reports must be queued even without per-record dr */
    bool transactional; /* batches carry the transactional attribute */
} knp_acc_conf;

typedef struct knp_acc {
    pthread_mutex_t lock;
    knp_bufpool pool; /* batch-sized record and wire buffers */
    pthread_cond_t mem_cond;  /* buffer memory released */
    pthread_cond_t done_cond; /* reports queued */
    knp_acc_conf conf;
    knp_rng rng;
    int64_t mem_used;
    int32_t mem_waiters;
    knp_topic **buckets;
    knp_topic *last_topic; /* the one knp_acc_topic found last (topics are never freed before the accumulator) */
    uint32_t nbuckets;
    int32_t ntopics;
    knp_partq **pqs; /* every partition queue, for the sender's scan */
    int32_t npqs;
    int32_t pqs_cap;
    knp_batch *done_head, *done_tail;
    knp_parked *parked_head, *parked_tail; /* waiting for their topic's metadata */
    int64_t outstanding; /* accepted records whose report is not served (parked ones included) */
    int32_t flushing;    /* > 0: linger ignored */
    bool wake_pending;   /* a sender wakeup is on its way (cleared by the tick) */
    int fatal_err;       /* set once: every later send fails */
    char fatal_errstr[256];
    bool closing;
    /* Called (lock held) when a batch becomes sendable or a new batch
     * starts its linger clock: wakes the sender. */
    void (*wake)(void *opaque);
    /* Called (lock held) when the done queue goes from empty to not. */
    void (*on_done)(void *opaque);
    void *hook_opaque;
    /* Metrics (set once at creation; NULL in unit tests): the client's
     * registry and record-error sensor, for the failures recorded here,
     * and the producer's knp_metrics (producer_metrics.h) for the sender. */
    kn_metrics *metrics;
    knm_sensor *m_error;
    /* bufferpool-wait-ratio, bufferpool-wait-time-ns-total and
     * buffer-exhausted-*: sends waiting for buffer.memory, recorded here */
    knm_sensor *m_wait_ratio, *m_wait_total, *m_exhausted;
    struct knp_metrics *pm;
    /* counters */
    int64_t records_sent, records_failed, batches_sent, bytes_sent, retries;
} knp_acc;

/* Initialises acc (conf copied). Returns 0 or KN_ERR__NOMEM. */
int knp_acc_init(knp_acc *acc, const knp_acc_conf *conf, uint64_t seed);
/* Frees everything, including batches still queued or done (without
 * reports: complete or fail them first). */
void knp_acc_destroy(knp_acc *acc);

/* Lock held. The entry for `name`, created if `create` (else NULL when
 * absent). Returns NULL on allocation failure. */
knp_topic *knp_acc_topic_find(knp_acc *acc, const char *name, bool create);
static inline knp_topic *knp_acc_topic(knp_acc *acc, const char *name, bool create) {
    /* Most producers send to one topic again and again: one strcmp
     * instead of hashing the name per record, and no call. */
    if (acc->last_topic && strcmp(acc->last_topic->name, name) == 0)
        return acc->last_topic;
    return knp_acc_topic_find(acc, name, create);
}
/* Lock held. Sets the partition count (only grows, as Kafka's does) and
 * the partitions that have a leader. Returns 0 or KN_ERR__NOMEM. */
int knp_acc_topic_update(knp_acc *acc, knp_topic *t, int32_t count, const int32_t *avail,
                         int32_t navail);
/* Lock held. The queue of t's partition p (< partition_count), created
 * on first use; NULL on allocation failure. */
knp_partq *knp_acc_partq_new(knp_acc *acc, knp_topic *t, int32_t p);
static inline knp_partq *knp_acc_partq(knp_acc *acc, knp_topic *t, int32_t p) {
    /* Inline: after a partition's first record this is one load. */
    if (p >= 0 && p < t->partition_count && t->parts[p])
        return t->parts[p];
    return knp_acc_partq_new(acc, t, p);
}

/* The record being appended (borrowed slices). */
typedef struct knp_rec {
    kn_bytes key;   /* len < 0: null */
    kn_bytes value; /* len < 0: null */
    const kn_rb_kv *headers;
    size_t header_count;
    int64_t timestamp;
    kn_delivery_cb *dr;
    void *opaque;
} knp_rec;

/* Lock held. Picks the partition when partition < 0 (t must have a
 * partition count), waits for buffer memory until block_deadline_ms
 * (monotonic ms; the lock is released while waiting) and appends the
 * record. now_ms 0 and block_deadline_ms 0 mean "not read yet": the
 * clock is then read only when a batch is made or the buffer is full
 * (the deadline: max.block.ms from that read), so the usual append to an
 * open batch reads no clock. On success *out_partition is the partition used. Errors:
 * KN_ERR_MESSAGE_TOO_LARGE, KN_ERR__QUEUE_FULL (waited until the
 * deadline), KN_ERR__INVALID_ARG, KN_ERR__NOMEM, KN_ERR__CLOSED; errstr
 * says why. */
int knp_acc_append(knp_acc *acc, knp_topic *t, int32_t partition, const knp_rec *rec,
                   int64_t now_ms, int64_t block_deadline_ms, int32_t *out_partition,
                   char *errstr, size_t errsize);

/* Lock held. Keeps a copy of rec for topic t, which has no partition
 * count yet (max.block.ms = 0: the record waits instead of the caller),
 * until deadline_ms: it counts as outstanding and its bytes against
 * buffer.memory. Returns 0, KN_ERR__QUEUE_FULL (buffer.memory full),
 * KN_ERR_MESSAGE_TOO_LARGE or KN_ERR__NOMEM, with errstr. */
int knp_acc_park(knp_acc *acc, knp_topic *t, int32_t partition, const knp_rec *rec, int64_t deadline_ms,
                 char *errstr, size_t errsize);
/* Lock held (the sender's tick, after metadata was applied). Appends the
 * parked records whose topic now has partitions; fails with
 * KN_ERR__MSG_TIMED_OUT those past their deadline, and with the append's
 * error those it refuses (partition out of range, too large). *next_ms
 * is lowered to the earliest remaining deadline. Returns true when some
 * record is still parked (its topic's metadata is wanted). */
bool knp_acc_place_parked(knp_acc *acc, int64_t now_ms, int64_t *next_ms);
/* Lock held. Fails every parked record with err (close, fatal error). */
void knp_acc_fail_parked(knp_acc *acc, int err, const char *msg);

/* Lock held. True if the partition's head batch may be sent now
 * ignoring backoff and leaders: full, linger expired, flushing, closing
 * or memory waiters. *next_ms is lowered to when it will be. */
bool knp_acc_head_ready(knp_acc *acc, knp_partq *pq, int64_t now_ms, int64_t *next_ms);

/* Lock held. Takes the head batch off pq's queue (NULL if empty). */
knp_batch *knp_acc_pop(knp_acc *acc, knp_partq *pq);
/* Lock held. Puts a batch back for a retry: before every batch without
 * a sequence, in base-sequence order among the retries. */
void knp_acc_requeue(knp_acc *acc, knp_batch *b);

/* Builds b's wire form (compressing) if not yet built, or rewrites its
 * producer id/epoch/sequence fields and CRC. No lock needed (the caller
 * owns b). Returns 0 or an error with errstr. */
int knp_batch_build(knp_acc *acc, knp_batch *b, int64_t producer_id, int16_t epoch,
                    char *errstr, size_t errsize);

/* Lock held. Splits a built batch the broker refused as too large
 * (count > 1) into two halves, each rebuilt for producer_id/epoch and
 * requeued as a retry; the halves keep b's sequence range (first half
 * at b's base sequence), deadline and reports. Frees b on success.
 * Returns 0, or an error (b untouched). */
int knp_acc_split(knp_acc *acc, knp_batch *b, int64_t producer_id, int16_t epoch, char *errstr,
                  size_t errsize);

/* Lock held. Finishes b with err (0 = delivered at base_offset): frees
 * its record memory, releases its buffer.memory and queues its reports
 * (or frees it when nobody will read them). errstr may be NULL. */
void knp_acc_complete(knp_acc *acc, knp_batch *b, int err, int64_t base_offset,
                      int64_t log_append_time, const char *errstr);

/* Lock held. Takes the whole done list (caller serves and frees it with
 * knp_batch_free, then subtracts the served records from outstanding). */
knp_batch *knp_acc_take_done(knp_acc *acc);
void knp_batch_free(knp_batch *b);

#endif
