/* metric_view.h: one metric as a reader sees it (name, group, tags,
 * value), the shape shared by the metrics registry (which produces
 * views) and the KIP-714 telemetry pusher (which consumes them), so
 * neither depends on the other's internals. */
#ifndef KN_METRIC_VIEW_H
#define KN_METRIC_VIEW_H

#include <stddef.h>

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

#endif
