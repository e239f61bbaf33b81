/*
 * producer_metrics.h: the producer's Kafka-named metrics (knp_metrics):
 * "producer-metrics" (record-send-rate, batch-size-avg,
 * record-queue-time-max, buffer-available-bytes, ...) and
 * "producer-topic-metrics" (tag topic), in the client's registry
 * (metrics/metrics.h). docs/metrics.md lists them.
 *
 * Recording takes only the registry's leaf lock, so the sender calls
 * these with or without acc.lock. The gauges are read under acc.lock. A NULL knp_metrics (or a sensor that could not be
 * made) records nothing.
 */
#ifndef KN_PRODUCER_METRICS_H
#define KN_PRODUCER_METRICS_H

#include <stddef.h>
#include <stdint.h>

#include "metrics/metrics.h"

typedef struct knp_acc knp_acc;
typedef struct knp_batch knp_batch;
typedef struct knp_sender knp_sender;

typedef struct knp_metrics {
    kn_metrics *m;
    knp_acc *acc;
    knp_sender *sender;
    knm_sensor *send, *error, *retry, *split, *batch_size, *compression, *queue_time, *latency,
        *throttle, *per_request;
} knp_metrics;

/* A new knp_metrics over m: makes the sensors and registers the gauges
 * (pm, acc and sender must outlive m: free pm after the wire client).
 * Also hands acc the registry and the error sensor, for the failures it
 * records itself. NULL on allocation failure. */
knp_metrics *knp_metrics_new(kn_metrics *m, knp_acc *acc);
void knp_metrics_free(knp_metrics *pm);
/* The sender, once made (for the in-flight and metadata gauges). */
void knp_metrics_set_sender(knp_metrics *pm, knp_sender *sender);

/* A batch going out in a Produce request (each attempt, as Java counts):
 * raw is its uncompressed size (0 unknown), now_ms the send time. */
void knp_metrics_batch_sent(knp_metrics *pm, const knp_batch *b, size_t raw, int64_t now_ms);
/* A Produce request of nbatches... records went out. */
void knp_metrics_request(knp_metrics *pm, int64_t records, int64_t now_ms);
/* A Produce response: round trip and the broker's throttle_time_ms. */
void knp_metrics_response(knp_metrics *pm, int64_t latency_us, int32_t throttle_ms, int64_t now_ms);
/* A batch goes back for a retry / was split. (Failures are recorded
 * by the accumulator itself: knp_acc's error sensor.) */
void knp_metrics_retry(knp_metrics *pm, const knp_batch *b, int64_t now_ms);
void knp_metrics_split(knp_metrics *pm, int64_t now_ms);

#endif
