/*
 * kafka_native_share.h: the public share consumer API (core/share/),
 * KIP-932 share groups ("queues for Kafka").
 *
 * A share consumer joins a share group (group.id) with
 * ShareGroupHeartbeat and fetches with ShareFetch from the partition
 * leaders. Unlike a consumer group, several members may be assigned the
 * same partition: the broker hands each record to one member at a time
 * under an acquisition lock, and the member acknowledges it:
 *  - KN_SHARE_ACCEPT: processed; never delivered again;
 *  - KN_SHARE_RELEASE: back to the queue; delivered again (to any
 *    member) with its delivery count one higher;
 *  - KN_SHARE_REJECT: unprocessable; archived, never delivered again.
 * A record not acknowledged before its lock expires (the group's
 * share.record.lock.duration.ms) goes back to the queue by itself.
 *
 * share.acknowledgement.mode (Java 4.3's names and rules):
 *  - implicit (default): every record a poll returned is accepted by the
 *    next poll, commit or close; kn_share_consumer_acknowledge returns
 *    KN_ERR__STATE.
 *  - explicit: the application acknowledges each record; a poll while a
 *    record of the previous poll is still unacknowledged returns
 *    KN_ERR__STATE.
 * Acknowledgements travel with the next ShareFetch, or at once with
 * commit_sync / commit_async (ShareAcknowledge), or at close.
 *
 * Records are the consumer's kn_records (kafka_native_consumer.h) with
 * one more accessor, the delivery count. One application thread at a
 * time calls a share consumer; kn_share_consumer_wakeup is safe from
 * any thread. Callbacks run on the application thread inside poll,
 * commit_sync and close. See docs/share-groups.md.
 */
#ifndef KAFKA_NATIVE_SHARE_H
#define KAFKA_NATIVE_SHARE_H

#include <stddef.h>
#include <stdint.h>

#include "kafka_native.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct kn_share_consumer kn_share_consumer;

/* Acknowledgement types, by their wire numbers (AcknowledgeType). */
#define KN_SHARE_ACCEPT  1
#define KN_SHARE_RELEASE 2
#define KN_SHARE_REJECT  3
/* Not an acknowledgement: renews the acquisition lock of a record this
 * member still holds (KIP-1222, explicit mode only), so processing may
 * take longer than share.record.lock.duration.ms. Sent at once in a
 * ShareAcknowledge of version 2+ (Kafka 4.2+ brokers); the record must
 * still be accepted, released or rejected before the next poll. */
#define KN_SHARE_RENEW   4

/* How many times the broker has delivered record i (1 the first time),
 * for records a share consumer returned; 0 for a plain consumer's. */
KN_API int kn_records_delivery_count(const kn_records *recs, size_t i);

/* Builds a share consumer from a KN_CLIENT_CONSUMER configuration
 * (copied). group.id is required. Keys a share consumer does not use
 * are refused when set, as Java's ShareConsumerConfig does:
 * auto.offset.reset, enable.auto.commit, group.instance.id,
 * isolation.level, partition.assignment.strategy, session.timeout.ms,
 * heartbeat.interval.ms, group.protocol, group.remote.assignor (a share
 * group's start position is the group config share.auto.offset.reset,
 * set with the admin client). Returns NULL with errstr filled and the
 * reason in kn_last_error(). Owned by
 * the caller: kn_share_consumer_close then _destroy. */
KN_API kn_share_consumer *kn_share_consumer_new(const kn_conf *conf, char *errstr, size_t errstr_size);

/* Subscribes to topics (count > 0, names copied); replaces an earlier
 * subscription. The coordinator assigns partitions; more members than
 * partitions all receive records. Returns KN_OK, KN_ERR__INVALID_ARG,
 * KN_ERR__NOMEM or KN_ERR__CLOSED. */
KN_API int kn_share_consumer_subscribe(kn_share_consumer *sc, const char *const *topics, size_t count);
/* Leaves the group (records still acquired are released). */
KN_API int kn_share_consumer_unsubscribe(kn_share_consumer *sc);

/* Returns up to max.poll.records records, waiting up to timeout_ms
 * (0: never blocks; -1: no limit). In implicit mode it first accepts
 * the previous poll's records. Due acknowledgement-commit callbacks run
 * first. On KN_OK *recs is a new kn_records (possibly empty) owned by
 * the caller (kn_records_free). Errors: KN_ERR__WAKEUP,
 * KN_ERR__STATE (explicit mode: a record of the previous poll was not
 * acknowledged; from inside a callback), KN_ERR__CLOSED, or a group
 * error that retrying does not fix (GROUP_AUTHORIZATION_FAILED, ...). */
KN_API int kn_share_consumer_poll(kn_share_consumer *sc, int timeout_ms, kn_records **recs, char *errstr,
                           size_t errstr_size);

/* Explicit mode: acknowledges record i of recs (a poll's result) with
 * type (KN_SHARE_ACCEPT / _RELEASE / _REJECT). It may be changed until
 * it is sent (the next poll or commit). Returns KN_OK,
 * KN_ERR__INVALID_ARG (bad type or index), KN_ERR__STATE (implicit mode,
 * or the record is not one this member holds from its last poll:
 * already sent, or from an older poll).
 * type KN_SHARE_RENEW renews the record's lock instead (see above): the
 * record must be unacknowledged (else KN_ERR__STATE), and
 * KN_ERR__UNSUPPORTED_VERSION when its leader lacks ShareAcknowledge
 * v2 (brokers before 4.2) or its version is not known yet. The
 * broker's answer reaches the acknowledgement-commit callback like an
 * acknowledgement's (INVALID_RECORD_STATE: the lock had already
 * expired). */
KN_API int kn_share_consumer_acknowledge(kn_share_consumer *sc, const kn_records *recs, size_t i, int type);
/* The same by coordinates. */
KN_API int kn_share_consumer_acknowledge_offset(kn_share_consumer *sc, const char *topic, int32_t partition,
                                         int64_t offset, int type);

/* The acknowledgement commit callback (Java's
 * AcknowledgementCommitCallback): called once per partition for every
 * batch of acknowledgements the broker answered (sent with a fetch, a
 * commit or close), with the offsets of the records acknowledged
 * (ascending) and err: 0, or the partition's error
 * (INVALID_RECORD_STATE: a lock had expired or the record was not
 * acquired by this member; a transport error, ...). Runs on the
 * application thread inside poll, commit_sync and close; topic and
 * offsets are valid only during the call. fn NULL removes it. */
typedef void kn_share_ack_commit_cb(kn_share_consumer *sc, const char *topic, int32_t partition,
                                    const int64_t *offsets, size_t count, int err, void *opaque);
KN_API void kn_share_consumer_set_ack_commit_cb(kn_share_consumer *sc, kn_share_ack_commit_cb *fn, void *opaque);

/* Sends every pending acknowledgement now (implicit mode: the last
 * poll's records are accepted first) and waits up to timeout_ms (-1:
 * default.api.timeout.ms) for the answers. *results (optional, owned by
 * the caller) lists each partition acknowledged with its error (0 on
 * success). Returns KN_OK when every partition succeeded, else the
 * first partition's error (then check *results), KN_ERR__TIMED_OUT,
 * KN_ERR__WAKEUP or KN_ERR__CLOSED. */
KN_API int kn_share_consumer_commit_sync(kn_share_consumer *sc, int timeout_ms, kn_topic_partition_list **results,
                                  char *errstr, size_t errstr_size);
/* Sends every pending acknowledgement now without waiting; the results
 * reach the acknowledgement commit callback from a later poll (or
 * commit_sync / close). Returns KN_OK or KN_ERR__CLOSED. */
KN_API int kn_share_consumer_commit_async(kn_share_consumer *sc);

/* The member id (a UUID string the client made) and epoch, for tools
 * and tests: copied into buf. Returns the member epoch (0 before the
 * first answer, -1 after leaving). */
KN_API int32_t kn_share_consumer_member(kn_share_consumer *sc, char *buf, size_t size);

/* Interrupts a blocking poll or commit_sync (any thread); if none is
 * running, the next one returns KN_ERR__WAKEUP. */
KN_API void kn_share_consumer_wakeup(kn_share_consumer *sc);

/* Readiness hook for event loops (as kn_consumer_set_ready_cb): called
 * on the network thread, with an internal lock held, when poll may now
 * return something without waiting (records landed, an acknowledgement
 * answer is due, an error, a wakeup). It must return quickly and must
 * not call the share consumer. fn NULL removes it. */
typedef void kn_share_ready_cb(kn_share_consumer *sc, void *opaque);
KN_API void kn_share_consumer_set_ready_cb(kn_share_consumer *sc, kn_share_ready_cb *fn, void *opaque);

/* Closes within timeout_ms (-1: 30 s): implicit mode accepts the last
 * poll's records; acknowledgements still pending are sent with the
 * request that closes each share session (ShareAcknowledge, epoch -1),
 * which releases every record this member still holds, so they go to
 * other members at once with their delivery count one higher; then
 * leaves the group (ShareGroupHeartbeat epoch -1). Every outstanding
 * acknowledgement reaches the callback (at the latest here, with
 * KN_ERR__CLOSED when unanswered). With timeout 0 nothing is sent: the
 * broker releases the records when the connection drops. Idempotent.
 * KN_ERR__STATE from a callback. The handle stays valid (reads work,
 * actions return KN_ERR__CLOSED) until kn_share_consumer_destroy; NULL
 * is a no-op. The lifecycle every client shares: see "Lifecycle" in
 * docs/architecture.md. */
KN_API int kn_share_consumer_close(kn_share_consumer *sc, int timeout_ms);
/* Frees the handle, closing it first with the default timeout
 * (kn_share_consumer_close(sc, -1)) if that was not done. NULL is a
 * no-op; so is a call from a callback of the same consumer (logged). */
KN_API void kn_share_consumer_destroy(kn_share_consumer *sc);

#ifdef __cplusplus
}
#endif
#endif
