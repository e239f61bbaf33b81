/*
 * fake_metadata.h: the Metadata answer the consumer's fake-broker tests
 * share: one topic "t" with one partition 0, led by broker 1, replicated
 * on every fake broker listed. Each test keeps its own serve function and
 * only builds this answer here.
 */
#ifndef KN_TEST_FAKE_METADATA_H
#define KN_TEST_FAKE_METADATA_H

#include <stdint.h>

#include "arena.h"
#include "reader.h" /* kn_uuid */
#include "proto/generated/kp_metadata.h"

/* Fills r (allocating in a): brokers 1..nbrokers at 127.0.0.1:ports[i],
 * cluster "fake-cluster", controller 1, topic "t" (topic_id) partition 0
 * with leader 1 at leader_epoch, replicas and ISR every broker. */
void kn_fake_metadata_one_partition(kp_MetadataResponse *r, kn_arena *a, const int *ports, int nbrokers,
                                    const kn_uuid *topic_id, int32_t leader_epoch);

#endif
