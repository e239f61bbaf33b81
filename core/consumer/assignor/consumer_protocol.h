/*
 * consumer_protocol.h: the consumer protocol's blobs, byte for byte as
 * the Java client writes them (ConsumerProtocol, StickyAssignor,
 * CooperativeStickyAssignor):
 *
 *  - Subscription (JoinGroup member metadata): int16 version, then the
 *    ConsumerProtocolSubscription body (v0 topics + user data, v1 owned
 *    partitions, v2 generation, v3 rack). Topics are written sorted,
 *    owned partitions sorted by (topic, partition) and grouped by topic.
 *  - Assignment (SyncGroup member assignment): int16 version, then the
 *    ConsumerProtocolAssignment body; partitions grouped by topic in the
 *    order each topic first appears.
 *  - The "sticky" assignor's subscription user data (its previous
 *    assignment and generation; the eager protocol has no owned
 *    partitions) and the "cooperative-sticky" one (the generation, for
 *    subscriptions older than v2).
 *
 * Java's client writes both blobs at version 3 (KN_CP_VERSION). A blob of
 * a newer version is read as version 3 (fields we know, the rest ignored),
 * like Java.
 *
 * Memory: encoders return a buffer owned by the caller (kn_free).
 * Decoders put everything (strings copied and NUL-terminated, arrays, user
 * data) in the caller's arena, so the result does not point into buf.
 */
#ifndef KN_CONSUMER_PROTOCOL_H
#define KN_CONSUMER_PROTOCOL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "arena.h"
#include "consumer/assignor/assignor.h"

#define KN_CP_VERSION 3

/* Encodes sub's topics, owned partitions, generation, rack and user data
 * (member and instance ids are not part of the blob) at version
 * (0..3; fields a version cannot carry are dropped, like Java). Returns 0,
 * KN_ERR__INVALID_ARG (bad version or arguments) or KN_ERR__NOMEM. */
int kn_cp_subscription_encode(const kn_asg_member *sub, int16_t version, uint8_t **buf, size_t *len);
/* Decodes a Subscription blob into sub (member_id and group_instance_id
 * left NULL for the caller; an empty rack reads as NULL, like Java).
 * version gets the blob's version (may be > 3). Returns 0,
 * KN_ERR__PROTOCOL (errstr names the offset), KN_ERR__UNSUPPORTED_VERSION
 * (negative version) or KN_ERR__NOMEM. */
int kn_cp_subscription_decode(const uint8_t *buf, size_t len, kn_arena *a, kn_asg_member *sub,
                              int16_t *version, char *errstr, size_t errstr_size);

/* Encodes an Assignment (user_data_len -1: null). */
int kn_cp_assignment_encode(const kn_asg_tp *parts, int32_t part_cnt, const uint8_t *user_data,
                            int32_t user_data_len, int16_t version, uint8_t **buf, size_t *len);
/* Decodes an Assignment; *parts lives in a. */
int kn_cp_assignment_decode(const uint8_t *buf, size_t len, kn_arena *a, kn_asg_tp **parts, int32_t *part_cnt,
                            const uint8_t **user_data, int32_t *user_data_len, int16_t *version, char *errstr,
                            size_t errstr_size);

/* StickyAssignor user data v1 (topic partitions + generation), topics in
 * the order Java's HashMap groups them. Returns 0 or KN_ERR__NOMEM. */
int kn_cp_sticky_user_data_encode(const kn_asg_tp *parts, int32_t part_cnt, int32_t generation, uint8_t **buf,
                                  size_t *len);
/* Reads sticky user data like Java: v1, else v0 (no generation), else
 * (unparseable) no partitions and generation -1. Null or empty data: no
 * partitions, no generation. *parts lives in a. Returns 0 or
 * KN_ERR__NOMEM; never fails on content. */
int kn_cp_sticky_user_data_decode(const uint8_t *data, int32_t len, kn_arena *a, kn_asg_tp **parts,
                                  int32_t *part_cnt, bool *has_generation, int32_t *generation);

/* CooperativeStickyAssignor user data: the int32 generation. */
void kn_cp_coop_user_data_encode(int32_t generation, uint8_t out[4]);
/* Null data: no generation; unreadable (< 4 bytes): generation -1;
 * otherwise the first int32. */
void kn_cp_coop_user_data_decode(const uint8_t *data, int32_t len, bool *has_generation, int32_t *generation);

#endif
