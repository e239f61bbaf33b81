/*
 * coordinator.h: the group and transaction coordinators a client talks
 * to, found with FindCoordinator and cached per (key type, key). The one
 * lookup behind the consumer's offsets and group membership and the
 * transactional producer (issue #14 item 7).
 *
 * - Cached until a request to it fails with an error
 *   kn_err_is_coordinator() names (NOT_COORDINATOR,
 *   COORDINATOR_NOT_AVAILABLE, REQUEST_TIMED_OUT, a lost or refused
 *   connection: knw_coord_failed), its connection drops (the wire layer
 *   calls knw_coord_node_down), or a metadata snapshot newer than the
 *   answer no longer lists the node (a broker that left the cluster).
 * - Lookups due at the same time are batched into one FindCoordinator
 *   v4+ (KIP-699, coordinator_keys) when the broker serves it; else one
 *   key per request (v3). One lookup per key in flight at a time.
 * - A failed lookup is retried after retry.backoff.ms growing to
 *   retry.backoff.max.ms (±20 % jitter); the answer wakes the client's
 *   tickers and every knw_coord_wait.
 *
 * Threads: any thread. The table has its own lock, a leaf: nothing is
 * called with it held (knw_send runs after it is released), and the
 * lookup callback takes no other lock, so callers may hold their own
 * module lock around knw_coord_get / knw_coord_failed.
 */
#ifndef KNW_COORDINATOR_H
#define KNW_COORDINATOR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "wire/wire.h"

#define KNW_COORD_GROUP 0 /* FindCoordinator key_type: a group.id */
#define KNW_COORD_TXN 1   /* a transactional.id */

/* The cached coordinator of (key_type, key), or -1; never sends. */
int32_t knw_coord_known(knw_client *client, int8_t key_type, const char *key);

/* The coordinator of (key_type, key), or -1 while unknown: then a lookup
 * is started unless one is in flight or backing off. *err (if non-NULL)
 * is the last failed lookup's error while no lookup is in flight (0
 * otherwise), with its detail in errstr: a non-retriable one such as
 * GROUP_AUTHORIZATION_FAILED is the caller's to report. */
int32_t knw_coord_get(knw_client *client, int8_t key_type, const char *key, int *err, char *errstr,
                      size_t errstr_size);

/* A request to node for (key_type, key) failed with err. If
 * kn_err_is_coordinator(err), node is forgotten as that coordinator (if
 * it still is: a newer answer is kept) and true is returned. */
bool knw_coord_failed(knw_client *client, int8_t key_type, const char *key, int32_t node, int err);

/* Blocks the calling thread (never the network thread: _STATE) until the
 * coordinator is known (0, *node set), a lookup fails with an error that
 * neither retries nor names a coordinator problem (that error), or
 * deadline_ms (monotonic, knw_now_ms) passes (_TIMED_OUT). errstr names
 * the last lookup error. */
int knw_coord_wait(knw_client *client, int8_t key_type, const char *key, int64_t deadline_ms, int32_t *node,
                   char *errstr, size_t errstr_size);

/* Lookups sent so far, and how many of them were batched (tests). */
void knw_coord_stats(knw_client *client, int64_t *lookups, int64_t *batched);

#endif
