/*
 * share_metrics_state.h: what the share consumer keeps for its metrics
 * (kns_metrics, a field of kn_share_consumer): the sensors and the poll
 * clock, apart from share_metrics.h (the functions) so share_int.h can
 * hold it without the metrics code depending on itself. Guarded by
 * sc->lock (the clock); the sensors by the registry's own lock.
 */
#ifndef KN_SHARE_METRICS_STATE_H
#define KN_SHARE_METRICS_STATE_H

#include <stdint.h>

typedef struct kn_metrics kn_metrics;
typedef struct knm_sensor knm_sensor;

typedef struct kns_metrics {
    kn_metrics *m;
    knm_sensor *fetch, *fetch_size, *throttle, *records, *bytes, *acks_sent, *acks_failed;
    knm_sensor *poll, *poll_idle;
    int64_t last_poll_ms;  /* start of the last poll, 0: none yet */
    int64_t poll_start_ms; /* start of the poll running now */
    int64_t since_last_ms; /* from the previous poll's start to this one's */
} kns_metrics;

#endif
