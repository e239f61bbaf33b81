/*
 * registry_source.h: the telemetry pusher's metric source (telemetry.h's
 * knt_source_fn) for every client kind: the client's metrics registry
 * (metrics/metrics.h), owned by its wire client, read as kn_metric_views
 * under Java's groups and names. One source for producer, consumer and
 * admin, so what is pushed is exactly what kn_*_metrics and Lua's
 * kafka_metrics() show.
 */
#ifndef KNT_REGISTRY_SOURCE_H
#define KNT_REGISTRY_SOURCE_H

#include "metrics/metric_view.h"

/* client: the client's knw_client *. Runs on the network thread, which
 * holds no client lock there (knm_visit's rule). */
void knt_registry_source(void *client, kn_metric_visit_fn visit, void *ctx);

#endif
