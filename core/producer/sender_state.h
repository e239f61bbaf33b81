/*
 * sender_state.h: the producer sender's state (struct knp_sender),
 * shared by the files of its network-thread half: sender.c (drain,
 * Produce and its answers, expiry, the tick), idempotence.c (producer
 * id, epoch, sequences), txn_add.c (partitions added to the
 * transaction through its coordinator) and adaptive.c (the adaptive
 * partitioner's load input). sender_state.c holds the helpers they all
 * use: the per-broker node table, backoff, the fatal error.
 *
 * Threads: the fields are the network thread's, read and written with
 * acc.lock held (so the application-thread calls of producer_int.h see
 * them consistently).
 */
#ifndef KN_PRODUCER_SENDER_STATE_H
#define KN_PRODUCER_SENDER_STATE_H

#include <stdbool.h>
#include <stdint.h>

#include "producer/producer_int.h"
#include "proto/generated/kp_init_producer_id.h"

/* Idempotence: the producer id's state (idempotence.c). */
enum { PID_NONE, PID_REQUESTING, PID_READY };

typedef struct knp_node {
    int32_t id;
    int32_t inflight;   /* Produce requests not answered */
    int64_t ready_ms;   /* last time it had batches to send */
    int64_t drain_ms;   /* last time batches were drained to it */
} knp_node;

/* One node's request being assembled in a tick (sender.c). */
typedef struct knp_draft {
    int32_t node;
    knp_batch *head, *tail;
    int32_t count;
    int64_t size;
    int16_t produce_max; /* Produce version cap (transaction version) */
} knp_draft;

struct knp_sender {
    knw_client *wire;
    knp_acc *acc;
    knp_sender_conf conf;
    int ticker;
    /* network thread only */
    int pid_state;
    int64_t producer_id;
    int16_t epoch;
    int64_t pid_retry_at_ms;
    int32_t pid_attempts;
    bool need_bump;
    uint32_t pid_gen; /* bumped with every new producer id or epoch */
    kp_InitProducerIdRequest pid_req;
    int64_t md_seen_ms;
    knw_metadata *md;
    knp_node *nodes;
    int32_t nnodes, nodes_cap;
    int32_t inflight_reqs;
    uint32_t gen;
    int32_t drain_start;
    int32_t *scratch; /* avail / queue sizes */
    int32_t *scratch2;
    int32_t scratch_cap;
    knp_draft *drafts;
    int32_t ndrafts, drafts_cap;
    bool want_add; /* transactions: a queued partition is not added yet */
    /* stats (acc.lock) */
    int64_t lat_sum_us, lat_max_us, lat_n, requests;
};

/* The state of broker id (created on first use). NULL on
 * allocation failure. acc.lock held. */
knp_node *knp_sender_node(knp_sender *s, int32_t id);
/* Grows s->scratch and s->scratch2 to n entries. false on allocation
 * failure. */
bool knp_sender_scratch(knp_sender *s, int32_t n);
/* retry.backoff.ms doubled per attempt up to retry.backoff.max.ms,
 * +-20% jitter (Java's ExponentialBackoff). */
int64_t knp_backoff_ms(const knp_sender *s, int32_t attempts);
/* Errors that stop the producer for good. */
bool knp_is_fatal_err(int err);
/* acc.lock held: records the producer's fatal error (the first one
 * wins) / fails every queued batch with err. */
void knp_fatal_locked(knp_sender *s, int err, const char *msg);
void knp_fail_queued_locked(knp_sender *s, int err, const char *msg);

#endif
