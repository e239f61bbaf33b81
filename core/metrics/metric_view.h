/* metric_view.h: one metric as a reader sees it (name, group, tags,
 * value), the shape shared by the metrics registry (which produces
 * views) and the KIP-714 telemetry pusher (which consumes them), so
 * neither depends on the other's internals. The types are the public
 * ones (include/kafka_native_metrics.h: kn_metric_view, kn_metric_tag,
 * kn_metric_kind, kn_metric_visit_fn), defined once. */
#ifndef KN_CORE_METRIC_VIEW_H
#define KN_CORE_METRIC_VIEW_H

#include "kafka_native_metrics.h"

#endif
