/*
 * producer_telemetry.c: the producer's KIP-714 calls (client instance
 * id, application metrics), forwarded to its telemetry (core/telemetry).
 */
#include "error.h"
#include "producer/producer_int.h"

int kn_producer_client_instance_id(kn_producer *p, int timeout_ms, char *out, size_t out_size,
                                   char *errstr, size_t errstr_size) {
    if (!p) {
        kn_errstr_set(errstr, errstr_size, "NULL producer");
        return KN_ERR__INVALID_ARG;
    }
    if (kn_producer_forked(p))
        return KN_ERR__FORKED;
    return knt_instance_id(p->telemetry, timeout_ms, out, out_size, errstr, errstr_size);
}

int kn_producer_register_metric_for_subscription(kn_producer *p, kn_app_metric *m) {
    if (!p)
        return KN_ERR__INVALID_ARG;
    if (kn_producer_forked(p))
        return KN_ERR__FORKED;
    return knt_register(p->telemetry, m);
}

int kn_producer_unregister_metric_from_subscription(kn_producer *p, kn_app_metric *m) {
    if (!p)
        return KN_ERR__INVALID_ARG;
    if (kn_producer_forked(p))
        return KN_ERR__FORKED;
    return knt_unregister(p->telemetry, m);
}
