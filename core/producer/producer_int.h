/*
 * producer_int.h: the producer's internal state shared by producer.c
 * (the public API, on the application thread) and sender.c (the
 * network-thread side). Who owns what:
 *  - kn_producer owns the network client, the accumulator, the sender
 *    and the readiness eventfd;
 *  - the accumulator (accumulator.h) owns records and batches, guarded
 *    by acc.lock;
 *  - the sender owns the idempotence state (producer id, epoch), node
 *    bookkeeping and in-flight requests; it runs on the network thread
 *    only and touches batches under acc.lock.
 */
#ifndef KN_PRODUCER_INT_H
#define KN_PRODUCER_INT_H

#include <stdbool.h>
#include <stdint.h>

#include "fork.h"
#include "kafka_native.h"
#include "producer/accumulator.h"
#include "telemetry/telemetry.h"
#include "wire/wire.h"

typedef struct knp_sender knp_sender;

/* The transaction state the application thread (txn.c) shares with the
 * sender, guarded by acc.lock. Only for a transactional producer. */
typedef struct knp_txn_shared {
    const char *id;     /* transactional.id (the producer's conf owns it) */
    bool open;          /* in a transaction: partitions may be added */
    bool started;       /* the coordinator holds partitions or offsets of it
                         * (version 2: a batch or offsets were sent) */
    bool v2;            /* transaction version 2 (KIP-890): fixed from
                         * init_transactions or the end of the previous
                         * transaction until this one ends */
    int32_t coord;      /* transaction coordinator node, -1 unknown */
    bool adding;        /* sender: AddPartitionsToTxn in flight */
    int64_t add_retry_at_ms;
    int abortable_err; /* the transaction can only be aborted */
    char abortable_errstr[256];
    int64_t add_partitions_sent; /* AddPartitionsToTxn requests (stats) */
    int64_t add_offsets_sent;    /* AddOffsetsToTxn requests (stats) */
} knp_txn_shared;

/* Settings the sender reads (fixed at creation). */
typedef struct knp_sender_conf {
    int16_t acks;
    bool idempotent;
    int32_t request_timeout_ms;
    int64_t retries;
    int64_t retry_backoff_ms;
    int64_t retry_backoff_max_ms;
    int32_t max_in_flight;
    int64_t availability_timeout_ms;
    int32_t transaction_timeout_ms;
    bool adaptive;
    knp_txn_shared *txn; /* NULL unless transactional (owned by the producer) */
} knp_sender_conf;

/* Creates the sender for acc over wire and registers its ticker.
 * Returns NULL on allocation failure or if the ticker cannot be added.
 * Owned by the producer: knp_sender_destroy. */
knp_sender *knp_sender_new(knw_client *wire, knp_acc *acc, const knp_sender_conf *conf);
/* Removes the ticker (after this, the sender's tick no longer runs). */
void knp_sender_stop(knp_sender *s);
/* Frees the sender: only after knp_sender_stop and knw_client_destroy
 * (so no callback still refers to it). */
void knp_sender_destroy(knp_sender *s);
/* A fatal error stops the producer (e.g. fenced producer id): 0 or the
 * code, with the message copied into errstr. Any thread. */
int knp_sender_fatal(knp_sender *s, char *errstr, size_t errsize);
/* Request latency (us) average and max; requests sent. Any thread. */
void knp_sender_latency(knp_sender *s, int64_t *avg_us, int64_t *max_us, int64_t *requests);

/* ---- for txn.c (application thread; each takes acc.lock itself) ---- */

/* Installs a producer id and epoch from InitProducerId: a new id or
 * epoch restarts every partition's sequences at 0. */
void knp_sender_set_pid(knp_sender *s, int64_t producer_id, int16_t epoch);
/* The current id and epoch, and whether a sequence failed for good in
 * this epoch (the next InitProducerId must bump it). */
void knp_sender_get_pid(knp_sender *s, int64_t *producer_id, int16_t *epoch, bool *need_bump);
/* Sets the producer's fatal error (first one wins) and fails every
 * queued batch with it. */
void knp_sender_set_fatal(knp_sender *s, int err, const char *msg);
/* Fails every queued batch (e.g. an abort), in-flight ones are left to
 * answer. */
void knp_sender_fail_queued(knp_sender *s, int err, const char *msg);
/* End of a transaction: no partition counts as added any more. */
void knp_sender_txn_reset(knp_sender *s);

struct kn_producer {
    kn_fork_stamp fork; /* the creating process (fork.h): another one may not use it */
    knw_client *wire;
    kn_conf *conf; /* finalised private copy */
    knp_acc acc;
    knp_sender *sender;
    knt *telemetry; /* KIP-714 push; NULL with enable.metrics.push=false */
    struct knp_metrics *metrics; /* Kafka-named metrics (producer_metrics.h), owned */
    kn_delivery_cb *dr;
    void *dr_opaque;
    int efd;                   /* readiness eventfd, -1 if none */
    bool efd_used;             /* kn_producer_fd was called: signal efd (acc.lock) */
    kn_producer_ready_cb *ready_cb; /* readiness hook (acc.lock), NULL: none */
    void *ready_opaque;
    int64_t max_block_ms;
    bool closed;
    /* Re-entrancy (application thread only): user callbacks running now
     * (delivery callbacks and hooks), and hooks among them. poll, flush
     * and close inside any callback, and send inside a hook, return
     * KN_ERR__STATE instead of recursing or freeing the producer under
     * the call that runs the callback. */
    int cb_depth;
    int hook_depth;
    /* hooks (kn_producer_new_with_hooks), fixed at creation */
    kn_partitioner_cb *partitioner;
    void *partitioner_opaque;
    kn_producer_interceptor *interceptors; /* owned copy */
    size_t ninterceptors;
    /* transactions (txn.c), application thread */
    bool transactional;
    int txn_state;      /* knp_txn_state */
    knp_txn_shared txs; /* shared with the sender (acc.lock) */
    int64_t txn_failed; /* records of this transaction reported failed */
    int txn_first_err;
    char txn_first_errstr[200];
};

/* Java's TransactionManager states. */
enum knp_txn_state {
    KNP_TXN_UNINIT,     /* init_transactions not done yet */
    KNP_TXN_READY,      /* between transactions */
    KNP_TXN_IN_TXN,     /* begin_transaction done */
    KNP_TXN_COMMITTING, /* EndTxn(commit) not confirmed yet */
    KNP_TXN_ABORTING,   /* EndTxn(abort) not confirmed yet */
    KNP_TXN_ABORTABLE,  /* an error: only abort_transaction is allowed */
    KNP_TXN_FATAL,      /* fenced or similar: only close */
};

/* producer.c: kn_producer_flush without the flush-time metric (close
 * and the transaction calls flush through it). */
int knp_flush(kn_producer *p, int timeout_ms);

/* txn.c: send() admission for a transactional producer: 0, or the error
 * (state, abortable, fatal) with errstr filled. */
int knp_txn_check_send(kn_producer *p, char *errstr, size_t n);
/* txn.c: a served batch of reports of a transactional producer. */
void knp_txn_on_report(kn_producer *p, int err, const char *errstr, int64_t records);

struct kn_delivery {
    const char *topic;
    int32_t partition;
    int64_t offset;
    int64_t timestamp;
    int err;
    const char *errstr;
    void *opaque;
};

#endif
