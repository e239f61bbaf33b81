/*
 * otlp.h: encodes metric points as an OTLP MetricsData protobuf
 * (opentelemetry-proto metrics v1), the payload KIP-714 pushes.
 *
 * Shape: one ResourceMetrics (the client's resource attributes) holding
 * one ScopeMetrics holding every Metric, each with one NumberDataPoint
 * (as_double). Java wraps each metric in its own ResourceMetrics with
 * the same resource; both are valid OTLP and a receiver merges them the
 * same way, and one wrapper keeps the payload smaller.
 *
 * Names follow KIP-714 / Java's TelemetryMetricNamingConvention:
 * "org.apache.kafka." + group (lower case, '-' -> '.', ".metrics"
 * dropped) + "." + name (lower case, '-' -> '.'); attribute keys are
 * lower case with '-' -> '_'.
 */
#ifndef KNT_OTLP_H
#define KNT_OTLP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "metrics/metric_view.h"
#include "writer.h"

/* OTLP AggregationTemporality values. */
#define KNT_TEMPORALITY_DELTA 1
#define KNT_TEMPORALITY_CUMULATIVE 2

typedef struct knt_point {
    const char *name;        /* telemetry name (knt_otlp_name) */
    const char *description; /* may be NULL */
    const kn_metric_tag *attrs; /* keys already cleaned (knt_otlp_tag_key) */
    size_t n_attrs;
    double value;
    bool sum;        /* a monotonic Sum; false: a Gauge */
    int temporality; /* for sums: KNT_TEMPORALITY_* */
    uint64_t start_ns; /* sums: start of the interval (unix ns) */
    uint64_t time_ns;  /* when the value was read (unix ns) */
} knt_point;

typedef struct knt_otlp {
    kn_wr w;
    size_t rm_off; /* ResourceMetrics body */
    size_t sm_off; /* ScopeMetrics body */
    size_t metrics; /* points added */
} knt_otlp;

/* Starts a payload with the resource attributes (string values; keys as
 * given). max caps the payload size (0: none beyond the writer's). */
void knt_otlp_begin(knt_otlp *o, const kn_metric_tag *resource, size_t n_resource, size_t max);
void knt_otlp_add(knt_otlp *o, const knt_point *p);
/* Closes the payload: 0 and *out (caller frees with kn_free) / *len, or
 * the writer's error (nothing to free). */
int knt_otlp_finish(knt_otlp *o, uint8_t **out, size_t *len);

/* Writes the telemetry name of (group, name) into buf; false if it does
 * not fit. */
bool knt_otlp_name(char *buf, size_t size, const char *group, const char *name);
/* Writes the attribute key for a Kafka tag key ("client-id" ->
 * "client_id"); false if it does not fit. */
bool knt_otlp_tag_key(char *buf, size_t size, const char *key);

#endif
