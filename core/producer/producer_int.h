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

#include "kafka_native.h"
#include "producer/accumulator.h"
#include "wire/wire.h"

typedef struct knp_sender knp_sender;

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

struct kn_producer {
    knw_client *wire;
    kn_conf *conf; /* finalised private copy */
    knp_acc acc;
    knp_sender *sender;
    kn_delivery_cb *dr;
    void *dr_opaque;
    int efd;                   /* readiness eventfd, -1 if none */
    int64_t max_block_ms;
    bool closed;
    /* hooks (kn_producer_new_with_hooks), fixed at creation */
    kn_partitioner_cb *partitioner;
    void *partitioner_opaque;
    kn_producer_interceptor *interceptors; /* owned copy */
    size_t ninterceptors;
};

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
