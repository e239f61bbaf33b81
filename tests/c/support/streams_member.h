/*
 * streams_member.h: one member of a streams group (KIP-1071) without
 * Kafka Streams, speaking StreamsGroupHeartbeat itself through an admin
 * client's network client: a topology of one subtopology ("0") reading
 * TOPIC, with a state store's changelog TOPIC-store-changelog (which the
 * caller creates, with TOPIC's partition count) declared with two
 * configs; the member joins with process id "kn-process-1", rack
 * "kn-rack-a", user endpoint iq.kn.example:8080 and client tags
 * zone=z1, tier=gold, and reports task offsets once it owns tasks. Used
 * by it_admin_streams.c and by kn_streams_member (for the Lua spec).
 * Failures fail the cmocka test (or end the helper process).
 */
#ifndef KN_TEST_STREAMS_MEMBER_H
#define KN_TEST_STREAMS_MEMBER_H

#include <stdint.h>

#include "kafka_native.h"
#include "kafka_native_admin.h"

/* One StreamsGroupHeartbeat of member: joins (epoch 0, with the
 * topology), acknowledges (epoch > 0, reporting `owned` tasks) or leaves
 * (epoch -1). Returns the new epoch; *tasks (room for 8) gets the
 * assigned active partitions of subtopology "0" when the answer has
 * them. */
int32_t streams_heartbeat(kn_admin *a, const char *group, const char *member, int32_t epoch, const char *topic,
                          const int32_t *owned, int owned_n, int32_t *tasks, int *task_n);

#endif
