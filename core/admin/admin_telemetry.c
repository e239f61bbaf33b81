/*
 * admin_telemetry.c: the admin client's KIP-714 calls (client instance
 * id, application metrics), forwarded to its telemetry (core/telemetry).
 * Java's admin pushes only with enable.metrics.push=true (its default
 * is false).
 */
#include "admin/admin.h"
#include "error.h"

int kn_admin_client_instance_id(kn_admin *admin, int timeout_ms, char *out, size_t out_size,
                                char *errstr, size_t errstr_size) {
    if (!admin) {
        kn_errstr_set(errstr, errstr_size, "NULL admin client");
        return KN_ERR__INVALID_ARG;
    }
    if (kn_admin_forked(admin))
        return KN_ERR__FORKED;
    return knt_instance_id(admin->telemetry, timeout_ms, out, out_size, errstr, errstr_size);
}

int kn_admin_register_metric_for_subscription(kn_admin *admin, kn_app_metric *m) {
    if (!admin)
        return KN_ERR__INVALID_ARG;
    if (kn_admin_forked(admin))
        return KN_ERR__FORKED;
    return knt_register(admin->telemetry, m);
}

int kn_admin_unregister_metric_from_subscription(kn_admin *admin, kn_app_metric *m) {
    if (!admin)
        return KN_ERR__INVALID_ARG;
    if (kn_admin_forked(admin))
        return KN_ERR__FORKED;
    return knt_unregister(admin->telemetry, m);
}
