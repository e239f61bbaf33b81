/*
 * registry_source.c: telemetry reads the wire client's metrics registry
 * (see registry_source.h).
 */
#include "telemetry/registry_source.h"

#include "metrics/metrics.h"
#include "wire/wire.h"

void knt_registry_source(void *client, kn_metric_visit_fn visit, void *ctx) {
    (void)knm_visit(knw_client_metrics(client), visit, ctx);
}
