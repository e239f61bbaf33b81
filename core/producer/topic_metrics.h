/*
 * topic_metrics.h: the producer's per-topic sensors
 * ("producer-topic-metrics", tag topic), made with each accumulator
 * topic and kept in it (immutable afterwards, so the sender reads them
 * without acc.lock). The producer-wide metrics are producer_metrics.h.
 */
#ifndef KN_PRODUCER_TOPIC_METRICS_H
#define KN_PRODUCER_TOPIC_METRICS_H

#include "metrics/metrics.h"

typedef struct knp_topic_metrics {
    knm_sensor *send, *bytes, *compression, *retry, *error;
} knp_topic_metrics;

/* Fills tm with topic's sensors in m (all NULL if m is NULL or memory
 * ran out: those record nothing). */
void knp_topic_metrics_init(kn_metrics *m, knp_topic_metrics *tm, const char *topic);

#endif
