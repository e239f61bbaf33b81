/*
 * stats_source.h: metric sources for telemetry (telemetry.h's
 * knt_source_fn) that read each client's existing stats structs and
 * name the values as Java names the closest metric. A stop-gap: the
 * metrics registry will produce the same kn_metric_view shape, and
 * then replaces these three functions without touching telemetry.
 */
#ifndef KNT_STATS_SOURCE_H
#define KNT_STATS_SOURCE_H

#include "metrics/metric_view.h"

/* client: a kn_producer *. */
void knt_producer_source(void *client, kn_metric_visit_fn visit, void *ctx);
/* client: a kn_consumer *. */
void knt_consumer_source(void *client, kn_metric_visit_fn visit, void *ctx);
/* client: the admin's knw_client * (the admin has no stats struct). */
void knt_admin_source(void *client, kn_metric_visit_fn visit, void *ctx);

#endif
