/*
 * metrics.h: a client's metrics registry (knm_ prefix): Kafka's own
 * metric names and groups, read as kn_metric_views (metric_view.h).
 *
 * Two sources of metrics:
 *  - sensors: windowed stats (wstat.h) that modules record into as
 *    things happen (a batch sent, a Fetch answered). A sensor belongs to
 *    a definition (knm_sensor_def: its group and the metrics derived
 *    from it: rate, total, avg, max, ...) and to up to two tag values
 *    beyond client-id (topic, partition, node-id); it lives until the
 *    registry is destroyed, so modules keep pointers to theirs.
 *  - gauges: values read when someone looks (buffer-available-bytes,
 *    records-lag, assigned-partitions), written by providers the modules
 *    register at creation.
 *
 * Threads and locks: one registry per client, owned by its knw_client.
 * m->lock guards the sensors and the provider list and is a leaf: a
 * module may record while holding its own lock (acc.lock, the
 * consumer's lock), never the reverse. knm_visit takes m->lock only to
 * copy the sensors' values, then calls the providers (which take their
 * module's lock) and the visitor with no registry lock held: it may be
 * called from any thread holding no client lock (the application thread
 * through kn_*_metrics, the network thread for telemetry push), and the
 * visitor may call anything, the client's API included.
 */
#ifndef KN_METRICS_METRICS_H
#define KN_METRICS_METRICS_H

#include <stdbool.h>
#include <stdint.h>

#include "metrics/metric_view.h"

typedef struct kn_metrics kn_metrics;
typedef struct knm_sensor knm_sensor;
typedef struct knm_snap knm_snap;

/* What a metric reads off its sensor. */
typedef enum knm_stat {
    KNM_RATE,        /* windowed sum per second (Java Rate) */
    KNM_COUNT_RATE,  /* windowed count per second (Rate over WindowedCount) */
    KNM_COUNT_PER_HOUR, /* the same per hour (Java's *-rate-per-hour) */
    KNM_TOTAL,       /* cumulative sum (CumulativeSum): a SUM */
    KNM_COUNT_TOTAL, /* cumulative count (CumulativeCount): a SUM */
    KNM_AVG,
    KNM_MAX,
    KNM_MIN,
    KNM_VALUE,       /* the latest value recorded (Java Value) */
} knm_stat;

typedef struct knm_stat_def {
    const char *name;
    const char *description;
    knm_stat stat;
} knm_stat_def;

/* A sensor's shape. group: the full group name, or a suffix starting
 * with '-' that the registry prefixes with the client's kind
 * ("-metrics" -> "producer-metrics", "-node-metrics" ->
 * "admin-client-node-metrics"). tag keys: NULL when unused. */
typedef struct knm_sensor_def {
    const char *group;
    const char *tag1, *tag2;
    const knm_stat_def *stats;
    int nstats;
} knm_sensor_def;

/* A new registry for a client of kind "producer", "consumer",
 * "admin-client" with client.id, windows of window_ms ms and nsamples
 * samples (metrics.sample.window.ms, metrics.num.samples). NULL on
 * allocation failure. */
kn_metrics *knm_new(const char *kind, const char *client_id, int64_t window_ms, int nsamples);
/* Frees the registry and every sensor (no provider may run any more). */
void knm_destroy(kn_metrics *m);

/* The sensor of def with the tag values (NULL for unused tags), created
 * on first use; stable until knm_destroy. NULL if m is NULL or on
 * allocation failure (recording into NULL is a no-op). Takes m->lock. */
knm_sensor *knm_sensor_get(kn_metrics *m, const knm_sensor_def *def, const char *tag1,
                           const char *tag2);
/* The registry's clock: monotonic ms (the same as knw_now_ms). */
int64_t knm_now_ms(void);
/* Records v at now_ms. Takes m->lock. */
void knm_record(kn_metrics *m, knm_sensor *s, double v, int64_t now_ms);
/* Hides or shows a sensor's metrics (a partition no longer assigned:
 * Java removes its sensor; ours stays for the pointers held). */
void knm_sensor_hide(kn_metrics *m, knm_sensor *s, bool hidden);

/* ---- gauges -------------------------------------------------------- */

/* Called by knm_visit with no registry lock held; emits with knm_emit. */
typedef void knm_provider_fn(void *opaque, knm_snap *snap, int64_t now_ms);
/* Adds a provider (at most 8); 0 or KN_ERR__NOMEM. The opaque must stay
 * valid until knm_destroy. */
int knm_provider_add(kn_metrics *m, knm_provider_fn *fn, void *opaque);
/* The registry's group for a suffix ("-metrics" -> "consumer-metrics"),
 * or group itself; stable until knm_destroy. */
const char *knm_group(kn_metrics *m, const char *group);
/* One gauge: group (static, or from knm_group), name and description
 * static; tag values are copied. kind KN_METRIC_GAUGE or _SUM. */
void knm_emit(knm_snap *snap, const char *group, const char *name, const char *description,
              kn_metric_kind kind, double value, const char *k1, const char *v1, const char *k2,
              const char *v2);

/* ---- reading ------------------------------------------------------- */

/* Calls fn once per metric (hidden sensors left out), sensors first in
 * creation order, then the gauges. 0, or KN_ERR__NOMEM (fn not called).
 * See the header comment for threads. */
int knm_visit(kn_metrics *m, kn_metric_visit_fn fn, void *ctx);

#endif
