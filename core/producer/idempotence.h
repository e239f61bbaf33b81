/*
 * idempotence.h: the idempotent producer's identity (idempotence.c):
 * the producer id and epoch (InitProducerId, or txn.c's for a
 * transactional id), the local epoch bump after a sequence gap
 * (KIP-360), and the generation each partition's sequences belong to.
 * acc.lock held unless said.
 */
#ifndef KN_PRODUCER_IDEMPOTENCE_H
#define KN_PRODUCER_IDEMPOTENCE_H

#include <stdbool.h>
#include <stdint.h>

#include "producer/sender_state.h"

/* True if a queued retry of pq has a sequence before seq. */
bool knp_idem_lower_seq_queued(const knp_partq *pq, int32_t seq);
/* pq's sequences have a gap the broker will never fill: ask for a new
 * epoch (only for the current one). */
void knp_idem_request_bump(knp_sender *s, knp_partq *pq);
/* The idempotence part of a tick; true when InitProducerId is to be
 * sent (knp_idem_send, without the lock). *next_ms moves to a retry. */
bool knp_idem_tick(knp_sender *s, int64_t now_ms, int64_t *next_ms);
void knp_idem_send(knp_sender *s);

#endif
