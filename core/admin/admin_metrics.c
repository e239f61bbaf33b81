/*
 * admin_metrics.c: the admin client's metrics (Java's Admin.metrics()):
 * the network metrics every client has, in "admin-client-metrics" and
 * "admin-client-node-metrics" (core/wire/net_metrics.c records them).
 */
#include "admin/admin.h"
#include "metrics/metrics.h"

int kn_admin_metrics(kn_admin *admin, kn_metric_visit_fn fn, void *ctx) {
    if (!admin || !fn)
        return KN_ERR__INVALID_ARG;
    if (kn_admin_forked(admin))
        return KN_ERR__FORKED;
    return knm_visit(knw_client_metrics(admin->client), fn, ctx);
}
