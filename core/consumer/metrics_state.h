/*
 * metrics_state.h: the consumer's metrics state (knc_metrics), kept in
 * struct kn_consumer under its lock; the functions that feed and read
 * it are consumer_metrics.h.
 */
#ifndef KN_CONSUMER_METRICS_STATE_H
#define KN_CONSUMER_METRICS_STATE_H

#include <stdint.h>

#include "metrics/metrics.h"

typedef struct knc_metrics {
    kn_metrics *m;
    knm_sensor *fetch, *fetch_size, *throttle, *records, *bytes, *lag, *lead, *poll, *commit,
        *rebalance, *failed_rebalance, *heartbeat;
    int64_t last_poll_ms;      /* 0: never */
    int64_t last_heartbeat_ms; /* 0: never (a heartbeat answered without error) */
    int64_t last_rebalance_ms; /* 0: never */
} knc_metrics;

#endif
