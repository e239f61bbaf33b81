/*
 * share_int.h: the share consumer's internal types, shared by the files
 * of core/share/ (prefix kns_):
 *
 *  - kns_range: a run of offsets with one acknowledgement type, the unit
 *    acknowledgements are kept and sent in (a broker's acquired range is
 *    never expanded offset by offset: its length is not trusted);
 *  - kns_part: one assigned partition: the buffered ShareFetch data
 *    being drained (share_drain.c), the records the last poll delivered
 *    and their acknowledgements (share.c), and the acknowledgements
 *    waiting to be sent (share_fetch.c);
 *  - kns_node: one partition leader: its share session (epoch) and the
 *    one request in flight to it (ShareFetch or ShareAcknowledge: the
 *    session epoch orders them, so never two at once);
 *  - kns_group: the ShareGroupHeartbeat membership (share_group.c);
 *  - kns_result: an answered batch of acknowledgements waiting for the
 *    application's callback.
 *
 * Threads: everything in kn_share_consumer behind sc->lock is shared by
 * the application thread (poll, acknowledge, commit, close) and the
 * network thread (the ticker and response callbacks of share_group.c
 * and share_fetch.c). Records handed out keep their fetched memory
 * alive through the consumer's knc_buf references.
 */
#ifndef KN_SHARE_INT_H
#define KN_SHARE_INT_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include "consumer/consumer_int.h"
#include "kafka_native.h"
#include "kafka_native_share.h"
#include "share/share_metrics_state.h"
#include "wire/wire.h"

#define KNS_ACK_GAP 0 /* an acquired offset that holds no record (control, compacted) */

typedef struct kns_range {
    int64_t first, last;
    int8_t type;
} kns_range;

/* A growable list of ranges, capped (kns_ranges_add). */
typedef struct kns_ranges {
    kns_range *items;
    int32_t count, cap;
} kns_ranges;

/* An acquired range from a ShareFetch answer. */
typedef struct kns_acq {
    int64_t first, last;
    int16_t delivery_count;
} kns_acq;

/* A record the last poll returned: ack 0 until acknowledged. */
typedef struct kns_deliv {
    int64_t offset;
    int8_t ack;
} kns_deliv;

typedef struct kns_part {
    char *topic; /* owned */
    kn_uuid topic_id;
    int32_t partition;
    bool assigned;   /* in the current assignment */
    int32_t leader;  /* node the last fetch went to, -1 */
    bool in_session; /* listed in the leader's share session */
    /* Buffered ShareFetch data (share_drain.c) */
    knc_buf *buf;
    const uint8_t *records;
    size_t len;
    kns_acq *acq; /* the response's acquired ranges, sorted */
    int32_t acq_count;
    int32_t acq_next; /* first acquired range not used up */
    int64_t cursor;   /* acquired offsets below it are delivered or gapped */
    int64_t data_end; /* one past the last batch read to its end: no record left below it */
    kn_records_iter it;
    kn_rb batch;
    bool in_batch;
    knc_buf *batch_buf;
    bool has_data;
    /* What the last poll returned from this partition (ascending). */
    kns_deliv *deliv;
    int32_t deliv_count, deliv_cap;
    /* Acknowledgements to send, and those sent in the request in flight. */
    kns_ranges acks;
    kns_ranges sent;
    /* When the fetch planner first held p->acks back for the next fetch
     * (share_fetch.c), 0 when none are held. */
    int64_t acks_held_ms;
    /* Lock renewals (KN_SHARE_RENEW, KIP-1222) to send: apart from acks,
     * as they go in their own ShareAcknowledge (IsRenewAck) at once and
     * may name an offset that is acknowledged later. */
    kns_ranges renews;
} kns_part;

typedef struct kns_node {
    int32_t node_id;
    int32_t epoch; /* next share session epoch: 0 opens a session */
    bool inflight;
    bool closed; /* close sent its final request */
    int64_t backoff_until_ms;
} kns_node;

typedef struct kns_result {
    struct kns_result *next;
    char *topic;
    int32_t partition;
    int err;
    int64_t *offsets;
    size_t count;
    uint64_t commit_id; /* the commit_sync it answers, 0 */
} kns_result;

typedef struct kns_group {
    char member_id[23];
    int32_t epoch; /* member epoch; 0 to join */
    bool joined;
    bool inflight;
    bool leaving;
    int64_t next_hb_ms;
    int heartbeat_interval_ms;
    /* Until then (the first heartbeat interval after joining), a
     * heartbeat that brought no partitions is followed by the next one
     * after a tenth of the interval (share_group.c, kns_hb_done). */
    int64_t early_until_ms;
    char **topics; /* subscription (owned) */
    int32_t topic_cnt;
    bool subscribed;
    bool send_topics; /* the subscription changed: send it */
    /* target assignment waiting for topic ids to resolve */
    kn_uuid *t_ids;
    int32_t **t_parts;
    int32_t *t_cnt;
    int32_t t_topics;
    bool has_target;
    int64_t retry_at_ms;
} kns_group;

struct kn_share_consumer {
    knw_client *client;
    int ticker_id;
    pthread_mutex_t lock;
    pthread_cond_t cond;
    kns_part **parts; /* assigned, then parts kept for their acknowledgements */
    size_t part_count, part_cap;
    size_t drain_next;
    kns_node *nodes;
    size_t node_count, node_cap;
    kns_group grp;
    char *group_id;
    bool explicit_mode;
    bool record_limit; /* share.acquire.mode=record_limit */
    int max_poll_records;
    /* ShareFetch MaxRecords: adapts between max.poll.records and
     * KNS_FETCH_POLLS_MAX polls (kns_fetch_adapt). */
    int fetch_records;
    int64_t landed_ms; /* when records landed in an empty buffer, 0 while it is empty */
    int fetch_max_wait_ms, fetch_min_bytes, fetch_max_bytes;
    int retry_backoff_ms, request_timeout_ms, default_api_timeout_ms;
    size_t scratch_max;
    bool verify_crc;
    bool want_fetch;     /* the application waits for (or made room for) records */
    bool flush_acks;     /* a commit: acknowledgements go now, alone, not with a long-polling fetch */
    uint64_t commit_seq; /* commits started; a result carries the one it belongs to */
    int inflight_acks;   /* requests in flight that carry acknowledgements */
    bool wakeup;
    bool closing, closed;
    int fatal_err;
    char fatal_str[256];
    kns_result *res_head, *res_tail;
    kn_share_ack_commit_cb *ack_cb;
    void *ack_opaque;
    kn_share_ready_cb *ready_fn;
    void *ready_opaque;
    int cb_depth;
    int64_t close_deadline_ms;
    kns_metrics metrics; /* share_metrics.h */
};

/* share_ranges (share_drain.c): appends [first, last] with type,
 * merging with the last range when adjacent and of the same type.
 * Returns 0 or KN_ERR__NOMEM (cap: 1M ranges). */
int kns_ranges_add(kns_ranges *r, int64_t first, int64_t last, int8_t type);
void kns_ranges_free(kns_ranges *r);

/* share_drain.c, sc->lock held: takes a ShareFetch partition answer
 * (buf retained; acquired ranges copied, sorted and checked). Returns
 * 0, KN_ERR__PROTOCOL (a bad acquired range) or KN_ERR__NOMEM. */
int kns_part_take(kns_part *p, knc_buf *buf, const uint8_t *records, size_t len, const kns_acq *acq,
                  int32_t acq_count);
/* Drops buffered data; the acquired offsets not delivered yet get type
 * (KN_SHARE_RELEASE) as acknowledgements, or none with type < 0. */
void kns_part_drop(kns_part *p, int type);
/* Moves up to max records into out (noting each in p->deliv); acquired
 * offsets inside the data without a record (control records,
 * compaction) become GAP acknowledgements, acquired offsets past the
 * data are released. A batch that does not decode releases the rest
 * of the partition's acquired records (logged): the broker delivers
 * them again until its delivery count limit archives them. Returns the
 * count added or KN_ERR__NOMEM. */
int kns_drain(kn_share_consumer *sc, kns_part *p, kn_records *out, int max);
void kns_part_free(kns_part *p);

/* share_group.c: the heartbeat half of the ticker (sc->lock held):
 * returns a request to send after the lock is dropped, or NULL. */
void *kns_group_tick(kn_share_consumer *sc, const knw_metadata *md, int64_t now_ms, int *next_ms);
void kns_group_send(kn_share_consumer *sc, void *plan);
/* Application thread, no lock: leaves the group (epoch -1), waiting up
 * to timeout_ms. */
void kns_group_leave(kn_share_consumer *sc, int timeout_ms);
void kns_group_free(kns_group *g);

/* share_fetch.c, sc->lock held, application thread: the buffer was just
 * emptied by poll; sizes the next fetch from how long the application
 * took to empty it since records landed (sc->landed_ms). */
void kns_fetch_adapt(kn_share_consumer *sc, int64_t now_ms);
/* share_fetch.c: the network-thread ticker (takes sc->lock itself). */
int kns_tick(knw_client *client, int64_t now_ms, void *opaque);
/* close, application thread, no lock: sends each session's final
 * ShareAcknowledge (epoch -1) with the pending acknowledgements and
 * waits for them until deadline_ms. */
void kns_close_sessions(kn_share_consumer *sc, int64_t deadline_ms);

/* share.c, sc->lock held */
kns_part *kns_find_part(kn_share_consumer *sc, const char *topic, int32_t partition);
/* Adds (or re-marks) an assigned partition. NULL on NOMEM. */
kns_part *kns_part_add(kn_share_consumer *sc, const char *topic, const kn_uuid *id, int32_t partition);
kns_node *kns_node_get(kn_share_consumer *sc, int32_t node_id);
/* Queues the callback of a sent batch answered with err. */
void kns_result_add(kn_share_consumer *sc, kns_part *p, const kns_ranges *sent, int err, uint64_t commit_id);
/* Wakes poll and the readiness hook. */
void kns_signal(kn_share_consumer *sc);
/* Stops the consumer with a fatal error (printf-style). */
void kns_fail(kn_share_consumer *sc, int err, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;

#endif
