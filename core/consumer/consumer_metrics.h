/*
 * consumer_metrics.h: the consumer's Kafka-named metrics (knc_metrics):
 * "consumer-fetch-manager-metrics" (records-consumed-rate,
 * fetch-latency-avg, records-lag-max, ...; per topic and, for
 * records-lag, per partition), "consumer-coordinator-metrics"
 * (commit-latency-avg, rebalance-total, assigned-partitions,
 * last-heartbeat-seconds-ago, ...) and the poll metrics of
 * "consumer-metrics", in the client's registry (metrics/metrics.h).
 * docs/metrics.md lists them.
 *
 * Every function here is called with the consumer's lock held (it
 * guards the last_* times); recording takes only the registry's leaf
 * lock. The gauges take the consumer's lock themselves.
 */
#ifndef KN_CONSUMER_METRICS_H
#define KN_CONSUMER_METRICS_H

#include <stdbool.h>
#include <stdint.h>

#include "consumer/metrics_state.h"

typedef struct kn_consumer kn_consumer;
typedef struct kn_records kn_records;


/* Makes the sensors and registers the gauges (c must outlive m). 0 or
 * KN_ERR__NOMEM. */
int knc_metrics_init(kn_consumer *c, kn_metrics *m);
/* A Fetch answered (any outcome): round trip, response bytes, the
 * broker's throttle_time_ms (< 0: none). */
void knc_metrics_fetch(kn_consumer *c, int64_t latency_us, size_t bytes, int32_t throttle_ms,
                       int64_t now_ms);
/* A partition's answer in a Fetch: the lag (offset bound - next offset
 * to fetch after these records) and lead (that offset - log start,
 * log_start < 0: unknown). */
void knc_metrics_partition(kn_consumer *c, int64_t lag, int64_t next, int64_t log_start,
                           int64_t now_ms);
/* A poll returning out (NULL or empty: nothing). */
void knc_metrics_poll(kn_consumer *c, const kn_records *out, int64_t now_ms);
/* An OffsetCommit answered: its round trip. */
void knc_metrics_commit(kn_consumer *c, int64_t latency_us, int64_t now_ms);
/* A heartbeat answered (classic or KIP-848): its round trip; ok: no error. */
void knc_metrics_heartbeat(kn_consumer *c, int64_t latency_us, bool ok, int64_t now_ms);
/* A rebalance finished (latency_ms < 0: unknown) or a join failed. */
void knc_metrics_rebalance(kn_consumer *c, int64_t latency_ms, int64_t now_ms);
void knc_metrics_rebalance_failed(kn_consumer *c, int64_t now_ms);

#endif
