/*
 * consumer_telemetry.c: the consumer's KIP-714 calls (client instance
 * id, application metrics), forwarded to its telemetry (core/telemetry).
 */
#include "consumer/consumer_int.h"
#include "error.h"

int kn_consumer_client_instance_id(kn_consumer *c, int timeout_ms, char *out, size_t out_size,
                                   char *errstr, size_t errstr_size) {
    if (!c) {
        kn_errstr_set(errstr, errstr_size, "NULL consumer");
        return KN_ERR__INVALID_ARG;
    }
    if (kn_consumer_forked(c))
        return KN_ERR__FORKED;
    return knt_instance_id(c->telemetry, timeout_ms, out, out_size, errstr, errstr_size);
}

int kn_consumer_register_metric_for_subscription(kn_consumer *c, kn_app_metric *m) {
    if (!c)
        return KN_ERR__INVALID_ARG;
    if (kn_consumer_forked(c))
        return KN_ERR__FORKED;
    return knt_register(c->telemetry, m);
}

int kn_consumer_unregister_metric_from_subscription(kn_consumer *c, kn_app_metric *m) {
    if (!c)
        return KN_ERR__INVALID_ARG;
    if (kn_consumer_forked(c))
        return KN_ERR__FORKED;
    return knt_unregister(c->telemetry, m);
}
