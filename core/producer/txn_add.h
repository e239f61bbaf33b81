/*
 * txn_add.h: the transactional producer's per-partition work on the
 * sender's thread (txn_add.c): each partition is added to the open
 * transaction (AddPartitionsToTxn through the transaction coordinator,
 * core/wire/coordinator.h) before its first batch is sent. The rest of
 * the transaction (InitProducerId, offsets, EndTxn) is txn.c's.
 */
#ifndef KN_PRODUCER_TXN_ADD_H
#define KN_PRODUCER_TXN_ADD_H

#include <stdint.h>

#include "producer/sender_state.h"

typedef struct knp_add_req knp_add_req;

/* acc.lock held: what the transaction needs sent this tick (*add_req,
 * sent with knp_txn_add_send after the lock). */
void knp_txn_add_tick(knp_sender *s, int64_t now_ms, int64_t *next_ms, knp_add_req **add_req);
void knp_txn_add_send(knp_sender *s, knp_add_req *ar);

#endif
