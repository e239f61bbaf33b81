/*
 * producer_metrics.h: the producer's Kafka-named metrics (knp_metrics):
 * "producer-metrics" (record-send-rate, batch-size-avg, record-size-max,
 * record-queue-time-max, buffer-available-bytes, bufferpool-wait-ratio,
 * flush-time-ns-total, txn-commit-time-ns-total, ...) and
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

/* The application calls timed in *-time-ns-total (Java's
 * KafkaProducerMetrics), indexes of knp_metrics.api_time. */
enum knp_api_timer {
    KNP_T_FLUSH,
    KNP_T_TXN_INIT,
    KNP_T_TXN_BEGIN,
    KNP_T_TXN_SEND_OFFSETS,
    KNP_T_TXN_COMMIT,
    KNP_T_TXN_ABORT,
    KNP_T_METADATA_WAIT, /* a send waiting for its topic's first metadata */
    KNP_T_COUNT
};

typedef struct knp_metrics {
    kn_metrics *m;
    knp_acc *acc;
    knp_sender *sender;
    knm_sensor *send, *error, *retry, *split, *batch_size, *compression, *queue_time, *latency,
        *throttle, *per_request, *record_size, *wait_ratio, *wait_total, *exhausted;
    knm_sensor *api_time[KNP_T_COUNT];
} knp_metrics;

/* A monotonic clock in ns, for the *-ns-total timers. */
int64_t knp_metrics_now_ns(void);

/* A new knp_metrics over m: makes the sensors and registers the gauges
 * (pm, acc and sender must outlive m: free pm after the wire client).
 * Also hands acc the registry and the error and buffer-wait sensors,
 * for what it records itself. NULL on allocation failure. */
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
/* An application call (flush, a transaction call) took ns. */
void knp_metrics_api_time(knp_metrics *pm, enum knp_api_timer which, int64_t ns);

#endif
