/*
 * kafka_native_producer.h: the public producer API (core/producer/).
 *
 * A kn_producer sends records to Kafka the way the Java KafkaProducer
 * does: kn_producer_send() appends a record to an in-memory batch and
 * returns at once; a background network thread groups ready batches into
 * Produce requests; the outcome of every accepted record comes back as a
 * delivery report served on the application's thread by
 * kn_producer_poll(), kn_producer_flush() or kn_producer_close().
 *
 * Threads: one application thread at a time calls a producer (like the
 * rest of the library). kn_producer_send() may block only while
 * buffer.memory is exhausted, or the first time a topic is used until
 * its metadata arrives, each at most max.block.ms. Delivery callbacks
 * run only inside poll/flush/close, never on a library thread.
 *
 * Included by kafka_native.h; do not include it on its own.
 */
#ifndef KAFKA_NATIVE_PRODUCER_H
#define KAFKA_NATIVE_PRODUCER_H

#include <stddef.h>
#include <stdint.h>

#include "kafka_native_export.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct kn_producer kn_producer;
/* From kafka_native_consumer.h (used by send_offsets_to_transaction). */
typedef struct kn_topic_partition_list kn_topic_partition_list;
typedef struct kn_group_metadata kn_group_metadata;
/* One record's outcome; only valid during the delivery callback. */
typedef struct kn_delivery kn_delivery;

/* Delivery callback: called once per accepted record, on the thread
 * that runs kn_producer_poll/flush/close. d and everything read through
 * it are only valid during the call. opaque is the producer-wide opaque
 * given at creation (kn_producer_conf_dr); the record's own opaque is
 * kn_delivery_opaque(d). It may call kn_producer_send; kn_producer_poll,
 * _flush and _close on the same producer return KN_ERR__STATE there
 * (doing nothing): close it once the serving call has returned. */
typedef void kn_delivery_cb(kn_producer *p, const kn_delivery *d, void *opaque);

/* Partition value meaning "let the partitioner choose". */
#define KN_PARTITION_ANY (-1)

/* A record header: key is a NUL-terminated string (never NULL); value
 * NULL is a null value (distinct from value_len 0 with a non-NULL
 * pointer, an empty one). */
typedef struct kn_header {
    const char *key;
    const void *value;
    size_t value_len;
} kn_header;

/* The record to send. All pointers are borrowed for the duration of the
 * kn_producer_send() call only: the bytes are copied into a batch.
 * Zero-initialise it (or use KN_RECORD_OUT_INIT) so later fields added
 * at the end of the struct keep their defaults. */
typedef struct kn_record_out {
    const char *topic;         /* required */
    int32_t partition;         /* KN_PARTITION_ANY (-1): the partitioner's choice */
    const void *key;           /* NULL: null key (distinct from key_len 0) */
    size_t key_len;
    const void *value;         /* NULL: null value (a tombstone) */
    size_t value_len;
    const kn_header *headers;  /* header_count entries, may be NULL if 0 */
    size_t header_count;
    int64_t timestamp;         /* CreateTime in ms since the epoch; 0 or -1: now */
    kn_delivery_cb *dr;        /* per-record callback; NULL: the producer's */
    void *opaque;              /* handed back by kn_delivery_opaque() */
} kn_record_out;

#define KN_RECORD_OUT_INIT {NULL, KN_PARTITION_ANY, NULL, 0, NULL, 0, NULL, 0, 0, NULL, NULL}

/* Creates a producer from conf (a KN_CLIENT_PRODUCER configuration):
 * finalises a private copy (Java's idempotence/acks rules), starts the
 * network thread. The caller keeps ownership of conf. dr (may be NULL)
 * is the default delivery callback, called with dr_opaque. Returns NULL
 * with errstr filled on a configuration or resource error (the code:
 * kn_last_error()). Owned by the caller: kn_producer_close then
 * kn_producer_destroy. */
KN_API kn_producer *kn_producer_new(const kn_conf *conf, kn_delivery_cb *dr, void *dr_opaque,
                                    char *errstr, size_t errstr_size);

/* ---- hooks: custom partitioner and interceptors ----------------------
 *
 * Java's Partitioner and ProducerInterceptor, as C function pointers set
 * once at creation (kn_producer_new_with_hooks). All of them run on the
 * application thread, inside the kn_producer_* call named, never on a
 * library thread and never under a library lock: they may call
 * kn_producer_outstanding or kn_producer_get_stats; send, poll, flush
 * and close on the same producer return KN_ERR__STATE from them. */

/* Chooses the partition of a record sent with KN_PARTITION_ANY (an
 * explicit partition is kept, as in Java): called inside
 * kn_producer_send with the record as it stands after the interceptors.
 * key NULL is a null key (distinct from key_len 0), likewise value.
 * partition_count is the topic's current count. Returns a partition in
 * [0, partition_count); anything else makes the send fail with
 * KN_ERR__INVALID_ARG naming the value (Java throws
 * IllegalArgumentException). */
typedef int32_t kn_partitioner_cb(const char *topic, const void *key, size_t key_len, const void *value,
                                  size_t value_len, int32_t partition_count, void *opaque);

/* A producer interceptor. Either function may be NULL.
 * on_send: called first thing in kn_producer_send, in interceptor order,
 *   each with the record as the previous one left it. *out starts as a
 *   copy of *in; the interceptor may change any field of *out (pointers
 *   it sets must stay valid until kn_producer_send returns). Returning
 *   non-zero is an error the interceptor keeps to itself, as Java's
 *   ProducerInterceptors do with an exception: it is logged, *out is
 *   discarded, and the record goes on as it was.
 * on_acknowledgement: called for every record's outcome before its
 *   delivery callback (inside poll/flush/close), and at once from
 *   kn_producer_send when the send fails after on_send ran (partition -1
 *   if none was chosen yet). It only observes. */
typedef struct kn_producer_interceptor {
    size_t size; /* sizeof(kn_producer_interceptor): see kn_producer_hooks */
    int (*on_send)(kn_producer *p, const kn_record_out *in, kn_record_out *out, void *opaque);
    void (*on_acknowledgement)(kn_producer *p, const kn_delivery *d, void *opaque);
    void *opaque;
} kn_producer_interceptor;

/* Hooks given at creation, read during the call and copied.
 * Size-versioned, like every struct the library and the caller exchange
 * by pointer (see "ABI policy" in docs/architecture.md): zero-initialise
 * it and set size to sizeof(kn_producer_hooks), and each interceptor's
 * size to sizeof(kn_producer_interceptor):
 *   kn_producer_hooks hooks = {.size = sizeof hooks};
 * The library reads only size bytes (fields added later in a newer
 * header keep their defaults for a program built against this one); a
 * struct larger than the library knows must have only zero bytes past
 * what it knows, else the constructor fails with KN_ERR__UNSUPPORTED
 * (a hook this library cannot honour), as Linux's openat2 does. New
 * fields are only ever added at the end. */
typedef struct kn_producer_hooks {
    size_t size;                    /* sizeof(kn_producer_hooks) */
    kn_partitioner_cb *partitioner; /* NULL: partitioner.class / built-in */
    void *partitioner_opaque;
    /* interceptor_count pointers, each to a size-versioned interceptor */
    const kn_producer_interceptor *const *interceptors;
    size_t interceptor_count;
} kn_producer_hooks;

/* kn_producer_new with hooks (may be NULL: none). A custom partitioner
 * replaces the built-in one (partitioner.ignore.keys and adaptive
 * partitioning then do not apply), as a Java Partitioner instance does.
 * KN_ERR__INVALID_ARG (kn_last_error) for a hooks or interceptor size
 * that is too small (under sizeof(size_t)) or absurd (over 4096), or
 * interceptor_count without interceptors; KN_ERR__UNSUPPORTED for
 * non-zero bytes past the struct this library knows. */
KN_API kn_producer *kn_producer_new_with_hooks(const kn_conf *conf, kn_delivery_cb *dr, void *dr_opaque,
                                               const kn_producer_hooks *hooks, char *errstr, size_t errstr_size);

/* Appends a record (copied) to its partition's open batch. Returns 0
 * when accepted: exactly one delivery report will follow. Otherwise an
 * error with errstr filled, and no report:
 *  KN_ERR__INVALID_ARG      missing topic, partition out of range
 *  KN_ERR_MESSAGE_TOO_LARGE the record is larger than max.request.size
 *                           or buffer.memory
 *  KN_ERR__QUEUE_FULL       buffer.memory stayed full for max.block.ms
 *  KN_ERR__TIMED_OUT        the topic's metadata did not arrive within
 *                           max.block.ms
 *  KN_ERR__FATAL            the producer hit a fatal error (e.g. its
 *                           producer id was fenced): close it
 *  KN_ERR__AUTHENTICATION   SASL authentication failed (wrong password,
 *                           unknown user, mechanism not enabled): the
 *                           broker's reason in errstr; fatal, close it
 *  KN_ERR__CLOSED           close has begun */
KN_API int kn_producer_send(kn_producer *p, const kn_record_out *rec, char *errstr, size_t errstr_size);

/* Serves queued delivery reports (calls the callbacks), waiting up to
 * timeout_ms (0: never blocks, -1: forever) for the first one. Returns
 * the number of reports served, or a negative error: KN_ERR__STATE when
 * called from a callback of the same producer, or, when no report was
 * served and the producer failed authentication, KN_ERR__AUTHENTICATION
 * (the reason from kn_producer_fatal_error). */
KN_API int kn_producer_poll(kn_producer *p, int timeout_ms);

/* Sends every accepted record now (ignoring linger.ms) and serves
 * reports until none is outstanding. Returns 0, KN_ERR__TIMED_OUT if
 * records were still outstanding after timeout_ms (-1: no limit), or
 * KN_ERR__AUTHENTICATION when authentication failed (the records then
 * failed with it), or KN_ERR__STATE from a callback of the same producer
 * (e.g. a delivery callback run by close). */
KN_API int kn_producer_flush(kn_producer *p, int timeout_ms);

/* The error that ended the producer's connectivity (authentication
 * failure: KN_ERR__AUTHENTICATION, with the broker's reason in errstr),
 * or 0. */
KN_API int kn_producer_fatal_error(kn_producer *p, char *errstr, size_t errstr_size);

/* Number of accepted records whose report has not been served yet. */
KN_API int64_t kn_producer_outstanding(kn_producer *p);

/* A file descriptor that polls readable while delivery reports are
 * queued (for external event loops: wait for it, then call
 * kn_producer_poll(p, 0)). Reports queued before the first call make it
 * readable at once. Owned by the producer; -1 if unavailable. */
KN_API int kn_producer_fd(kn_producer *p);

/* A readiness hook, for event loops that wait on something else than a
 * descriptor (OpenResty cosockets; the Lua binding's ready_listen).
 * fn is called on the client's network thread, with the producer's
 * internal lock held, each time delivery reports become available to
 * kn_producer_poll when none were waiting (the queue of reports went
 * from empty to not empty). It must return quickly and must not call
 * into the producer: write a byte, set a flag. After it fires, poll(0)
 * serves every report queued so far; the next report to arrive fires
 * it again. fn NULL removes the hook; once this returns the old fn is
 * not running and will not run again. */
typedef void kn_producer_ready_cb(kn_producer *p, void *opaque);
KN_API void kn_producer_set_ready_cb(kn_producer *p, kn_producer_ready_cb *fn, void *opaque);

/* Flushes for up to timeout_ms (-1: no limit), then fails what is left
 * with KN_ERR__CLOSED (reports served here) and stops the network
 * thread. The handle stays valid (stats, fatal_error, outstanding) until
 * kn_producer_destroy; send, poll, flush and the transaction calls
 * return KN_ERR__CLOSED after it. Returns 0, or KN_ERR__TIMED_OUT if
 * records had to be failed. Idempotent (a second close returns 0); NULL
 * is a no-op. From a callback of the same producer it does nothing and
 * returns KN_ERR__STATE (logged). Before 0.1 this also freed the
 * producer: call kn_producer_destroy now. See "Lifecycle" in
 * docs/architecture.md. */
KN_API int kn_producer_close(kn_producer *p, int timeout_ms);
/* Frees the producer, closing it first (kn_producer_close(p, -1)) if
 * that was not done. NULL is a no-op; so is a call from a callback of
 * the same producer (logged), and one in another process than the
 * creator's (kn_producer_forked). */
KN_API void kn_producer_destroy(kn_producer *p);

/* Non-zero when p was created in another process (this one is a
 * fork() child of it). Its network thread exists only in the parent, so
 * send, poll, flush, the transaction calls and close return
 * KN_ERR__FORKED without flushing, waiting or touching its locks
 * (destroy leaves the copy alone: leaked); outstanding is 0 and
 * get_stats returns KN_ERR__FORKED. Create clients after forking (nginx: in each
 * worker, from init_worker_by_lua). */
KN_API int kn_producer_forked(const kn_producer *p);

/* ---- transactions (transactional.id set) --------------------------------
 *
 * Java's KafkaProducer transaction calls, with its state machine: call
 * init_transactions once, then for each transaction begin_transaction,
 * any number of send (and send_offsets_to_transaction), then
 * commit_transaction or abort_transaction. A send outside a transaction
 * fails with KN_ERR__STATE. Each call returns 0, or an error with errstr
 * filled:
 *  KN_ERR__STATE       not transactional, or the call is invalid in the
 *                      current state (errstr names the state);
 *  KN_ERR__TIMED_OUT   timeout_ms (-1: max.block.ms) passed: the same
 *                      call may be repeated;
 *  KN_ERR_TRANSACTION_ABORTABLE (or the Kafka error that caused it): a
 *                      record or offset of this transaction failed; only
 *                      abort_transaction is allowed now;
 *  KN_ERR__FATAL / KN_ERR_PRODUCER_FENCED / KN_ERR_INVALID_PRODUCER_EPOCH
 *  / KN_ERR_TRANSACTIONAL_ID_AUTHORIZATION_FAILED
 *  / KN_ERR_INVALID_PRODUCER_ID_MAPPING: fatal (e.g. another producer
 *                      with the same transactional.id fenced this one,
 *                      or the id expired on the coordinator): close the
 *                      producer.
 * The protocol follows the cluster's finalized feature
 * transaction.version (KIP-890), as Java decides it: read when
 * init_transactions completes and when each transaction ends.
 *  - version 2 (level >= 2, a new Kafka 4.x cluster's default): no
 *    AddPartitionsToTxn nor AddOffsetsToTxn (Produce v12 and
 *    TxnOffsetCommit v5 let the partition leader and the group
 *    coordinator add them), and every commit or abort bumps the producer
 *    epoch (EndTxn v5), so a late write of an ended transaction is
 *    refused by its old epoch;
 *  - version 1 otherwise: partitions and offsets are added explicitly
 *    before their first batch or commit; the epoch stays.
 * kn_producer_stats tells the version in use and the epoch. */

/* Gets the producer id and epoch for transactional.id from its
 * transaction coordinator, fencing older producers with the same id and
 * completing (aborting) a transaction they left open. */
KN_API int kn_producer_init_transactions(kn_producer *p, int timeout_ms, char *errstr, size_t errstr_size);
/* Starts a transaction (local only; the coordinator hears of it with the
 * first partition or offsets). */
KN_API int kn_producer_begin_transaction(kn_producer *p, char *errstr, size_t errstr_size);
/* Adds consumer offsets to the transaction: committed to the group of gm
 * (its generation, member id and instance id are checked by the group
 * coordinator) only if the transaction commits. offsets: topic,
 * partition and the offset to commit (the next record to read), with
 * optional leader epoch and metadata; borrowed for the call. */
KN_API int kn_producer_send_offsets_to_transaction(kn_producer *p, const kn_topic_partition_list *offsets,
                                                   const kn_group_metadata *gm, int timeout_ms, char *errstr,
                                                   size_t errstr_size);
/* Flushes every record of the transaction, then commits it (EndTxn). A
 * failed record makes it fail with KN_ERR_TRANSACTION_ABORTABLE. */
KN_API int kn_producer_commit_transaction(kn_producer *p, int timeout_ms, char *errstr, size_t errstr_size);
/* Aborts the transaction: records not sent yet fail (KN_ERR__STATE,
 * "aborted"), records already sent are awaited and then marked aborted
 * for read_committed readers (EndTxn). */
KN_API int kn_producer_abort_transaction(kn_producer *p, int timeout_ms, char *errstr, size_t errstr_size);
/* The transaction state now, as Java's TransactionManager names it:
 * "UNINITIALIZED", "READY", "IN_TRANSACTION", "COMMITTING_TRANSACTION",
 * "ABORTING_TRANSACTION", "ABORTABLE_ERROR" (only abort_transaction is
 * allowed) or "FATAL_ERROR" (close the producer). Lets a caller tell an
 * abortable failure from a fatal one after any call failed. Static
 * storage; NULL for a producer without transactional.id (or NULL p).
 * Application thread only, like the transaction calls. */
KN_API const char *kn_producer_transaction_state(kn_producer *p);

/* Counters since creation (a consistent copy).
 * Size-versioned: set size to sizeof(kn_producer_stats) before the
 * call (kn_producer_stats st = {.size = sizeof st};). The library writes
 * at most size bytes, so a program built against an older, shorter
 * struct keeps working with a newer library; it sets size to the bytes
 * it wrote, so a program built against a newer, longer struct can tell
 * which fields an older library filled. New counters are only ever
 * added at the end. */
typedef struct kn_producer_stats {
    size_t size;               /* in: sizeof the caller's struct; out: bytes written */
    int64_t records_sent;      /* acknowledged (or sent with acks=0) */
    int64_t records_failed;
    int64_t bytes_sent;        /* record batch bytes on the wire, compressed */
    int64_t batches_sent;
    int64_t requests_sent;
    int64_t retries;           /* batches re-queued after an error */
    int64_t buffer_bytes;      /* buffer.memory in use now */
    int64_t request_latency_avg_us;
    int64_t request_latency_max_us;
    int64_t connects;          /* broker connections established (TCP) */
    int64_t connect_failures;  /* connection attempts that failed (incl. authentication) */
    int64_t reauthentications; /* SASL re-authentications (KIP-368) */
    /* Idempotence and transactions (KIP-890): */
    int64_t producer_id;       /* -1 until InitProducerId answered */
    int64_t producer_epoch;    /* -1 until then; under transaction version 2
                                * it grows with every commit and abort */
    int64_t transaction_version; /* 1 or 2 (KIP-890) for the current or
                                  * next transaction; 0 not transactional
                                  * or before init_transactions */
    int64_t txn_add_partitions_requests; /* AddPartitionsToTxn sent
                                          * (transaction version 1 only) */
    int64_t txn_add_offsets_requests;    /* AddOffsetsToTxn sent (version 1 only) */
    /* Quotas (KIP-219): throttle_time_ms of the Produce responses, mean
     * over all of them (0 included) and largest, since creation (Java's
     * produce-throttle-time-avg / -max, there over a time window). A
     * throttled broker gets no request until the time is up. */
    int64_t produce_throttle_time_avg_ms;
    int64_t produce_throttle_time_max_ms;
} kn_producer_stats;
/* KN_OK, KN_ERR__INVALID_ARG (NULL p or out, or out->size smaller
 * than a size_t: nothing written) or KN_ERR__FORKED (nothing written).
 * Valid after close, until destroy. */
KN_API int kn_producer_get_stats(kn_producer *p, kn_producer_stats *out);

/* ---- delivery report accessors (valid during the callback only) ---- */

/* The topic: borrowed, valid during the callback. */
KN_API const char *kn_delivery_topic(const kn_delivery *d);
KN_API int32_t kn_delivery_partition(const kn_delivery *d);
/* The record's offset, or -1 (failed, or acks=0). */
KN_API int64_t kn_delivery_offset(const kn_delivery *d);
/* CreateTime given or assigned at send, or the broker's LogAppendTime. */
KN_API int64_t kn_delivery_timestamp(const kn_delivery *d);
/* 0 (KN_OK) or the error that failed the record. */
KN_API int kn_delivery_error(const kn_delivery *d);
/* Human detail of the error ("" on success): borrowed. */
KN_API const char *kn_delivery_errstr(const kn_delivery *d);
/* The kn_record_out.opaque given to kn_producer_send. */
KN_API void *kn_delivery_opaque(const kn_delivery *d);

#ifdef __cplusplus
}
#endif
#endif
