/*
 * validate.h: KIP-320 position validation (validate.c):
 * OffsetForLeaderEpoch after a leader epoch change.
 */
#ifndef KN_CONSUMER_VALIDATE_H
#define KN_CONSUMER_VALIDATE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "consumer/consumer_int.h"

/* validate.c: plans OffsetForLeaderEpoch requests (one per leader) for
 * partitions whose position awaits KIP-320 validation (c->lock held,
 * nothing sent); knc_validate_send sends them after the lock. It takes
 * the consumer, not only the table: the answer, on the network thread,
 * needs the lock, the settings, the stats and the readiness signal. */
void *knc_validate_plan(kn_consumer *c, const knw_metadata *md, int64_t now_ms);
void knc_validate_send(knw_client *client, void *plan);

#endif
