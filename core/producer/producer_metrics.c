/*
 * producer_metrics.c: the producer's metrics as Java's Sender and
 * RecordAccumulator name them (producer_metrics.h). The sensors are fed
 * by the sender (batches, requests, responses, retries), the
 * accumulator (failures, waits for buffer.memory) and the application
 * calls (KafkaProducerMetrics' *-time-ns-total: flush and the
 * transaction calls); the buffer gauges read the accumulator.
 */
#include "producer/producer_metrics.h"

#include <stdbool.h>
#include <time.h>

#include "kn_alloc.h"
#include "producer/sender_state.h"

#define N(a) ((int)(sizeof(a) / sizeof((a)[0])))

static const knm_stat_def send_stats[] = {
    {"record-send-rate", "The average number of records sent per second", KNM_RATE},
    {"record-send-total", "The total number of records sent", KNM_TOTAL},
};
static const knm_stat_def error_stats[] = {
    {"record-error-rate", "The average per-second number of record sends that resulted in errors", KNM_RATE},
    {"record-error-total", "The total number of record sends that resulted in errors", KNM_TOTAL},
};
static const knm_stat_def retry_stats[] = {
    {"record-retry-rate", "The average per-second number of retried record sends", KNM_RATE},
    {"record-retry-total", "The total number of retried record sends", KNM_TOTAL},
};
static const knm_stat_def split_stats[] = {
    {"batch-split-rate", "The average number of batch splits per second", KNM_COUNT_RATE},
    {"batch-split-total", "The total number of batch splits", KNM_COUNT_TOTAL},
};
static const knm_stat_def batch_size_stats[] = {
    {"batch-size-avg", "The average number of bytes sent per partition per request", KNM_AVG},
    {"batch-size-max", "The max number of bytes sent per partition per request", KNM_MAX},
};
static const knm_stat_def compression_stats[] = {
    {"compression-rate-avg",
     "The average compression rate of record batches: compressed size over uncompressed size", KNM_AVG},
};
static const knm_stat_def queue_time_stats[] = {
    {"record-queue-time-avg", "The average time in ms record batches spent in the send buffer", KNM_AVG},
    {"record-queue-time-max", "The maximum time in ms record batches spent in the send buffer", KNM_MAX},
};
static const knm_stat_def latency_stats[] = {
    {"request-latency-avg", "The average Produce request latency in ms", KNM_AVG},
    {"request-latency-max", "The maximum Produce request latency in ms", KNM_MAX},
};
static const knm_stat_def throttle_stats[] = {
    {"produce-throttle-time-avg", "The average time in ms a request was throttled by a broker", KNM_AVG},
    {"produce-throttle-time-max", "The maximum time in ms a request was throttled by a broker", KNM_MAX},
};
static const knm_stat_def per_request_stats[] = {
    {"records-per-request-avg", "The average number of records per request", KNM_AVG},
};
static const knm_stat_def record_size_stats[] = {
    {"record-size-avg", "The average record size", KNM_AVG},
    {"record-size-max", "The maximum record size", KNM_MAX},
};
/* Seconds waited per second: the fraction of time sends waited. */
static const knm_stat_def wait_ratio_stats[] = {
    {"bufferpool-wait-ratio", "The fraction of time an appender waits for space allocation.", KNM_RATE},
};
static const knm_stat_def wait_total_stats[] = {
    {"bufferpool-wait-time-ns-total", "The total time in nanoseconds an appender waits for space allocation.",
     KNM_TOTAL},
};
static const knm_stat_def exhausted_stats[] = {
    {"buffer-exhausted-rate", "The average per-second number of record sends that are dropped due to buffer exhaustion",
     KNM_COUNT_RATE},
    {"buffer-exhausted-total", "The total number of record sends that are dropped due to buffer exhaustion",
     KNM_COUNT_TOTAL},
};
static const knm_stat_def flush_stats[] = {
    {"flush-time-ns-total", "Total time producer has spent in flush in nanoseconds.", KNM_TOTAL},
};
static const knm_stat_def txn_init_stats[] = {
    {"txn-init-time-ns-total", "Total time producer has spent in initTransactions in nanoseconds.", KNM_TOTAL},
};
static const knm_stat_def txn_begin_stats[] = {
    {"txn-begin-time-ns-total", "Total time producer has spent in beginTransaction in nanoseconds.", KNM_TOTAL},
};
static const knm_stat_def txn_send_offsets_stats[] = {
    {"txn-send-offsets-time-ns-total", "Total time producer has spent in sendOffsetsToTransaction in nanoseconds.",
     KNM_TOTAL},
};
static const knm_stat_def txn_commit_stats[] = {
    {"txn-commit-time-ns-total", "Total time producer has spent in commitTransaction in nanoseconds.", KNM_TOTAL},
};
static const knm_stat_def txn_abort_stats[] = {
    {"txn-abort-time-ns-total", "Total time producer has spent in abortTransaction in nanoseconds.", KNM_TOTAL},
};
static const knm_stat_def metadata_wait_stats[] = {
    {"metadata-wait-time-ns-total",
     "Total time producer has spent waiting on topic metadata in nanoseconds.", KNM_TOTAL},
};
#define DEF(n, g, t) static const knm_sensor_def def_##n = {g, t, NULL, n##_stats, N(n##_stats)}
DEF(send, "-metrics", NULL);
DEF(error, "-metrics", NULL);
DEF(retry, "-metrics", NULL);
DEF(split, "-metrics", NULL);
DEF(batch_size, "-metrics", NULL);
DEF(compression, "-metrics", NULL);
DEF(queue_time, "-metrics", NULL);
DEF(latency, "-metrics", NULL);
DEF(throttle, "-metrics", NULL);
DEF(per_request, "-metrics", NULL);
DEF(record_size, "-metrics", NULL);
DEF(wait_ratio, "-metrics", NULL);
DEF(wait_total, "-metrics", NULL);
DEF(exhausted, "-metrics", NULL);
DEF(flush, "-metrics", NULL);
DEF(txn_init, "-metrics", NULL);
DEF(txn_begin, "-metrics", NULL);
DEF(txn_send_offsets, "-metrics", NULL);
DEF(txn_commit, "-metrics", NULL);
DEF(txn_abort, "-metrics", NULL);
DEF(metadata_wait, "-metrics", NULL);
/* In enum knp_api_timer order. */
static const knm_sensor_def *const api_time_defs[KNP_T_COUNT] = {
    &def_flush,      &def_txn_init,  &def_txn_begin,     &def_txn_send_offsets,
    &def_txn_commit, &def_txn_abort, &def_metadata_wait,
};

/* acc.lock: the buffer pool and the sender's in-flight requests. */
static void provide(void *opaque, knm_snap *snap, int64_t now_ms) {
    knp_metrics *pm = opaque;
    knp_acc *acc = pm->acc;
    const char *g = knm_group(pm->m, "-metrics");
    pthread_mutex_lock(&acc->lock);
    double total = (double)acc->conf.buffer_memory;
    double avail = (double)(acc->conf.buffer_memory - acc->mem_used);
    double waiting = acc->mem_waiters;
    double inflight = pm->sender ? pm->sender->inflight_reqs : 0;
    double md_age = pm->sender && pm->sender->md
                        ? (double)(now_ms - pm->sender->md->fetched_at_ms) / 1000.0
                        : 0;
    pthread_mutex_unlock(&acc->lock);
    knm_emit(snap, g, "buffer-total-bytes", "The maximum amount of buffer memory the client can use",
             KN_METRIC_GAUGE, total, NULL, NULL, NULL, NULL);
    knm_emit(snap, g, "buffer-available-bytes",
             "The total amount of buffer memory that is not being used (either unallocated or in the free list)",
             KN_METRIC_GAUGE, avail, NULL, NULL, NULL, NULL);
    knm_emit(snap, g, "waiting-threads", "The number of user threads blocked waiting for buffer memory",
             KN_METRIC_GAUGE, waiting, NULL, NULL, NULL, NULL);
    knm_emit(snap, g, "requests-in-flight", "The current number of in-flight requests awaiting a response",
             KN_METRIC_GAUGE, inflight, NULL, NULL, NULL, NULL);
    knm_emit(snap, g, "metadata-age", "The age in seconds of the current producer metadata being used",
             KN_METRIC_GAUGE, md_age, NULL, NULL, NULL, NULL);
}

knp_metrics *knp_metrics_new(kn_metrics *m, knp_acc *acc) {
    knp_metrics *pm = kn_calloc(1, sizeof *pm);
    if (!pm)
        return NULL;
    pm->m = m;
    pm->acc = acc;
    pm->send = knm_sensor_get(m, &def_send, NULL, NULL);
    pm->error = knm_sensor_get(m, &def_error, NULL, NULL);
    pm->retry = knm_sensor_get(m, &def_retry, NULL, NULL);
    pm->split = knm_sensor_get(m, &def_split, NULL, NULL);
    pm->batch_size = knm_sensor_get(m, &def_batch_size, NULL, NULL);
    pm->compression = knm_sensor_get(m, &def_compression, NULL, NULL);
    pm->queue_time = knm_sensor_get(m, &def_queue_time, NULL, NULL);
    pm->latency = knm_sensor_get(m, &def_latency, NULL, NULL);
    pm->throttle = knm_sensor_get(m, &def_throttle, NULL, NULL);
    pm->per_request = knm_sensor_get(m, &def_per_request, NULL, NULL);
    pm->record_size = knm_sensor_get(m, &def_record_size, NULL, NULL);
    pm->wait_ratio = knm_sensor_get(m, &def_wait_ratio, NULL, NULL);
    pm->wait_total = knm_sensor_get(m, &def_wait_total, NULL, NULL);
    pm->exhausted = knm_sensor_get(m, &def_exhausted, NULL, NULL);
    bool timers = true;
    for (int i = 0; i < KNP_T_COUNT; i++)
        timers = (pm->api_time[i] = knm_sensor_get(m, api_time_defs[i], NULL, NULL)) != NULL && timers;
    if (!pm->send || !pm->error || !pm->retry || !pm->split || !pm->batch_size || !pm->compression ||
        !pm->queue_time || !pm->latency || !pm->throttle || !pm->per_request || !pm->record_size ||
        !pm->wait_ratio || !pm->wait_total || !pm->exhausted || !timers ||
        knm_provider_add(m, provide, pm) != 0) {
        kn_free(pm);
        return NULL;
    }
    pthread_mutex_lock(&acc->lock);
    acc->metrics = m;
    acc->m_error = pm->error;
    acc->m_wait_ratio = pm->wait_ratio;
    acc->m_wait_total = pm->wait_total;
    acc->m_exhausted = pm->exhausted;
    acc->pm = pm;
    pthread_mutex_unlock(&acc->lock);
    return pm;
}

void knp_metrics_free(knp_metrics *pm) { kn_free(pm); }

void knp_metrics_set_sender(knp_metrics *pm, knp_sender *sender) {
    pthread_mutex_lock(&pm->acc->lock);
    pm->sender = sender;
    pthread_mutex_unlock(&pm->acc->lock);
}

void knp_metrics_batch_sent(knp_metrics *pm, const knp_batch *b, size_t raw, int64_t now_ms) {
    if (!pm || !pm->m)
        return;
    const knp_topic_metrics *tm = &b->pq->topic->metrics;
    double len = (double)b->wire.len;
    knm_record(pm->m, pm->send, b->count, now_ms);
    knm_record(pm->m, tm->send, b->count, now_ms);
    knm_record(pm->m, tm->bytes, len, now_ms);
    knm_record(pm->m, pm->batch_size, len, now_ms);
    knm_record(pm->m, pm->queue_time, (double)(now_ms - b->created_ms), now_ms);
    knm_record(pm->m, pm->record_size, (double)b->max_rec_size, now_ms);
    if (raw > 0) {
        knm_record(pm->m, pm->compression, len / (double)raw, now_ms);
        knm_record(pm->m, tm->compression, len / (double)raw, now_ms);
    }
}

void knp_metrics_request(knp_metrics *pm, int64_t records, int64_t now_ms) {
    if (pm)
        knm_record(pm->m, pm->per_request, (double)records, now_ms);
}

void knp_metrics_response(knp_metrics *pm, int64_t latency_us, int32_t throttle_ms, int64_t now_ms) {
    if (!pm)
        return;
    knm_record(pm->m, pm->latency, (double)latency_us / 1000.0, now_ms);
    if (throttle_ms >= 0)
        knm_record(pm->m, pm->throttle, throttle_ms, now_ms);
}

void knp_metrics_retry(knp_metrics *pm, const knp_batch *b, int64_t now_ms) {
    if (!pm)
        return;
    knm_record(pm->m, pm->retry, b->count, now_ms);
    knm_record(pm->m, b->pq->topic->metrics.retry, b->count, now_ms);
}

void knp_metrics_split(knp_metrics *pm, int64_t now_ms) {
    if (pm)
        knm_record(pm->m, pm->split, 1, now_ms);
}

int64_t knp_metrics_now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

void knp_metrics_api_time(knp_metrics *pm, enum knp_api_timer which, int64_t ns) {
    if (pm && (unsigned)which < (unsigned)KNP_T_COUNT)
        knm_record(pm->m, pm->api_time[which], (double)ns, knm_now_ms());
}
