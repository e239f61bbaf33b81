/*
 * share_metrics.h: the share consumer's Kafka-named metrics (kns_metrics),
 * as Java 4.3's KafkaShareConsumer has them: the
 * "consumer-share-fetch-manager-metrics" group (ShareFetchMetricsManager:
 * fetch-latency-avg, records-consumed-rate, acknowledgements-send-rate,
 * ...) and the poll metrics of "consumer-share-metrics"
 * (KafkaShareConsumerMetrics), in the client's registry
 * (metrics/metrics.h), beside the network metrics every client has.
 * docs/metrics.md lists them.
 *
 * Every function here is called with sc->lock held; recording takes
 * only the registry's leaf lock. The gauge takes sc->lock itself.
 */
#ifndef KN_SHARE_METRICS_H
#define KN_SHARE_METRICS_H

#include <stddef.h>
#include <stdint.h>

#include "share/share_metrics_state.h"

typedef struct kn_share_consumer kn_share_consumer;
typedef struct kn_records kn_records;

/* Makes the sensors and registers the gauge (sc must outlive m). 0 or
 * KN_ERR__NOMEM. Called once the client exists, before any thread can
 * record. */
int kns_metrics_init(kn_share_consumer *sc, kn_metrics *m);
/* A ShareFetch answered (any outcome): round trip, response bytes, the
 * broker's throttle_time_ms (< 0: none). */
void kns_metrics_fetch(kn_share_consumer *sc, int64_t latency_us, size_t bytes, int32_t throttle_ms,
                       int64_t now_ms);
/* A ShareAcknowledge answered: its throttle_time_ms (< 0: none). */
void kns_metrics_ack_throttle(kn_share_consumer *sc, int32_t throttle_ms, int64_t now_ms);
/* count acknowledgements (offsets) sent in a request / answered with an
 * error (by the broker, or lost with their request). */
void kns_metrics_acks_sent(kn_share_consumer *sc, int64_t count, int64_t now_ms);
void kns_metrics_acks_failed(kn_share_consumer *sc, int64_t count, int64_t now_ms);
/* A poll starts / returns out (NULL or empty: nothing). */
void kns_metrics_poll_start(kn_share_consumer *sc, int64_t now_ms);
void kns_metrics_poll_end(kn_share_consumer *sc, const kn_records *out, int64_t now_ms);

#endif
