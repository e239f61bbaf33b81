/*
 * topic_metrics.c: the producer's per-topic sensors (topic_metrics.h),
 * named as Java's Sender names them.
 */
#include "producer/topic_metrics.h"

#define N(a) ((int)(sizeof(a) / sizeof((a)[0])))

static const knm_stat_def topic_send_stats[] = {
    {"record-send-rate", "The average number of records sent per second for a topic", KNM_RATE},
    {"record-send-total", "The total number of records sent for a topic", KNM_TOTAL},
};
static const knm_stat_def topic_bytes_stats[] = {
    {"byte-rate", "The average number of bytes sent per second for a topic", KNM_RATE},
    {"byte-total", "The total number of bytes sent for a topic", KNM_TOTAL},
};
static const knm_stat_def topic_compression_stats[] = {
    {"compression-rate", "The average compression rate of record batches for a topic", KNM_AVG},
};
static const knm_stat_def topic_retry_stats[] = {
    {"record-retry-rate", "The average per-second number of retried record sends for a topic", KNM_RATE},
    {"record-retry-total", "The total number of retried record sends for a topic", KNM_TOTAL},
};
static const knm_stat_def topic_error_stats[] = {
    {"record-error-rate", "The average per-second number of record sends that resulted in errors for a topic",
     KNM_RATE},
    {"record-error-total", "The total number of record sends that resulted in errors for a topic", KNM_TOTAL},
};

#define DEF(n) static const knm_sensor_def def_##n = {"producer-topic-metrics", "topic", NULL, n##_stats, N(n##_stats)}
DEF(topic_send);
DEF(topic_bytes);
DEF(topic_compression);
DEF(topic_retry);
DEF(topic_error);

void knp_topic_metrics_init(kn_metrics *m, knp_topic_metrics *tm, const char *topic) {
    tm->send = knm_sensor_get(m, &def_topic_send, topic, NULL);
    tm->bytes = knm_sensor_get(m, &def_topic_bytes, topic, NULL);
    tm->compression = knm_sensor_get(m, &def_topic_compression, topic, NULL);
    tm->retry = knm_sensor_get(m, &def_topic_retry, topic, NULL);
    tm->error = knm_sensor_get(m, &def_topic_error, topic, NULL);
}
