/*
 * kafka_native_metrics.h: the clients' metrics as Kafka names them
 * (docs/metrics.md lists every one): group ("producer-metrics",
 * "consumer-fetch-manager-metrics", ...), name ("record-send-rate",
 * "records-lag-max", ...), tags (client-id, and topic, partition or
 * node-id where Java has them) and a value, read by walking them with
 * a visitor.
 *
 * Rates, averages and maxima cover the last metrics.num.samples windows
 * of metrics.sample.window.ms (Java's defaults: 2 x 30 s); an average,
 * maximum or minimum with nothing recorded in that time is NaN, as in
 * Java. Totals (kind KN_METRIC_SUM) count since the client was created.
 *
 * The library's own code uses these view types too (through
 * core/metrics/metric_view.h): the registry produces them and the
 * telemetry pusher consumes them.
 */
#ifndef KAFKA_NATIVE_METRICS_H
#define KAFKA_NATIVE_METRICS_H

#include <stddef.h>

#include "kafka_native_export.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum kn_metric_kind {
  KN_METRIC_GAUGE = 0, /* a current value (rates, averages, maxima, counts now) */
  KN_METRIC_SUM = 1    /* a cumulative, monotonic total since the client started */
} kn_metric_kind;

typedef struct kn_metric_tag {
  const char *key;   /* "client-id", "topic", "partition", "node-id" */
  const char *value;
} kn_metric_tag;

typedef struct kn_metric_view {
  const char *group;       /* Java's group: "producer-metrics", "consumer-fetch-manager-metrics", ... */
  const char *name;        /* Java's name: "record-send-rate", "records-lag-max", ... */
  const char *description; /* Java's description text, in our words */
  const kn_metric_tag *tags;
  size_t n_tags;
  double value;
  kn_metric_kind kind;
} kn_metric_view;

/* Called once per metric; the view and its strings live only for the call. */
typedef void (*kn_metric_visit_fn)(void *ctx, const kn_metric_view *m);


typedef struct kn_producer kn_producer;
typedef struct kn_consumer kn_consumer;
typedef struct kn_admin kn_admin;
typedef struct kn_share_consumer kn_share_consumer;

/* Calls fn(ctx, view) once per metric of the client, in a stable order
 * (the client's sensors in creation order, then its gauges). The values
 * are a snapshot taken when the call starts; fn runs on the calling
 * thread with no library lock held, so it may call the client (even
 * these functions). A producer's or admin client's metrics may be read
 * from any thread; a consumer's from the thread that uses it, like its
 * other calls. KN_OK; KN_ERR__INVALID_ARG (NULL client or fn);
 * KN_ERR__NOMEM (fn not called); KN_ERR__FORKED (the client was made in
 * another process); KN_ERR__CLOSED for a consumer or share consumer
 * after close (its network client is gone), while a producer and an
 * admin client keep answering until destroy. */
KN_API int kn_producer_metrics(kn_producer *p, kn_metric_visit_fn fn, void *ctx);
KN_API int kn_consumer_metrics(kn_consumer *c, kn_metric_visit_fn fn, void *ctx);
KN_API int kn_admin_metrics(kn_admin *a, kn_metric_visit_fn fn, void *ctx);
KN_API int kn_share_consumer_metrics(kn_share_consumer *sc, kn_metric_visit_fn fn, void *ctx);

#ifdef __cplusplus
}
#endif
#endif
