/*
 * kafka_native_telemetry.h: client telemetry (KIP-714) and application
 * metrics pushed with it (KIP-1076), for the producer, consumer and
 * admin client (core/telemetry/).
 *
 * With enable.metrics.push=true (the default for producers and
 * consumers, false for the admin client, as in Java 4.3) a client asks
 * a broker for its telemetry subscription (GetTelemetrySubscriptions)
 * and, when a subscription names some of its metrics, pushes them every
 * push interval (PushTelemetry) as OTLP protobuf, on its network thread,
 * plus a last push when it is closed. The broker assigns each client
 * instance an id; kn_*_client_instance_id returns it.
 *
 * Application metrics (Java's registerMetricForSubscription) are values
 * the application owns and sets; registered with a client, they are
 * pushed with the client's own metrics when the subscription asks for
 * their names. The library never calls application code to read them
 * (no library thread runs user code): the application sets the value.
 */
#ifndef KAFKA_NATIVE_TELEMETRY_H
#define KAFKA_NATIVE_TELEMETRY_H

#include <stddef.h>

#include "kafka_native.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Size of the text form of a client instance id (Kafka's Uuid text:
 * 22 characters of URL-safe base64, no padding) with its NUL. */
#define KN_CLIENT_INSTANCE_ID_SIZE 23

/* The id the broker assigned to this client instance for telemetry
 * (Java's clientInstanceId(Duration)), written to out as Kafka's text
 * form. Waits up to timeout_ms (>= 0) for the first subscription.
 * Returns KN_OK, or:
 *  - KN_ERR__STATE: enable.metrics.push is false (errstr says so), or
 *    the client is closed before an id was assigned;
 *  - KN_ERR__INVALID_ARG: negative timeout, NULL handle or out;
 *  - KN_ERR__TIMED_OUT: no id within timeout_ms;
 *  - KN_ERR__UNSUPPORTED_VERSION: the brokers do not offer telemetry
 *    (no client telemetry plugin on the cluster);
 *  - KN_ERR__FORKED.
 * Blocks the calling thread only; the network thread goes on. */
KN_API int kn_producer_client_instance_id(kn_producer *p, int timeout_ms, char *out, size_t out_size,
                                          char *errstr, size_t errstr_size);
KN_API int kn_consumer_client_instance_id(kn_consumer *c, int timeout_ms, char *out, size_t out_size,
                                          char *errstr, size_t errstr_size);
KN_API int kn_admin_client_instance_id(kn_admin *admin, int timeout_ms, char *out, size_t out_size,
                                       char *errstr, size_t errstr_size);

/* ---- application metrics (KIP-1076) ---------------------------------- */

typedef struct kn_app_metric kn_app_metric;

#define KN_APP_METRIC_GAUGE 0 /* a current value */
#define KN_APP_METRIC_SUM 1   /* a monotonic total (pushed as a cumulative or delta Sum) */

/* A new metric named as Kafka names metrics: group ("my-app-metrics"),
 * name ("orders-total"); it is pushed as
 * "org.apache.kafka.<group minus -metrics>.<name>" with '-' -> '.'
 * (so a subscription's prefixes select it like the client's own).
 * description may be NULL. kind: KN_APP_METRIC_GAUGE or _SUM. Strings
 * are copied. Returns NULL with kn_last_error() set (KN_ERR__INVALID_ARG
 * for a NULL or empty group/name or a bad kind, KN_ERR__NOMEM). */
KN_API kn_app_metric *kn_app_metric_new(const char *group, const char *name, const char *description,
                                        int kind);
/* Adds a tag (Kafka's tag key, e.g. "topic"), pushed as a data point
 * attribute ("-" -> "_" in the key). Only before the metric is first
 * registered: KN_ERR__STATE after. KN_OK, KN_ERR__INVALID_ARG, NOMEM. */
KN_API int kn_app_metric_add_tag(kn_app_metric *m, const char *key, const char *value);
/* Sets / adds to the value. Any thread, lock-free. */
KN_API void kn_app_metric_set(kn_app_metric *m, double value);
KN_API void kn_app_metric_add(kn_app_metric *m, double delta);
KN_API double kn_app_metric_value(const kn_app_metric *m);
/* Drops the application's reference: the metric lives on while a
 * client still has it registered. NULL is a no-op. */
KN_API void kn_app_metric_destroy(kn_app_metric *m);

/* Adds m to what the client pushes (Java's registerMetricForSubscription);
 * registering it again is a no-op. With enable.metrics.push false it
 * is accepted and never pushed, as in Java. KN_OK, KN_ERR__INVALID_ARG
 * (NULL), KN_ERR__NOMEM, KN_ERR__FORKED. */
KN_API int kn_producer_register_metric_for_subscription(kn_producer *p, kn_app_metric *m);
KN_API int kn_consumer_register_metric_for_subscription(kn_consumer *c, kn_app_metric *m);
KN_API int kn_admin_register_metric_for_subscription(kn_admin *admin, kn_app_metric *m);
/* Removes m (Java's unregisterMetricFromSubscription); a metric not
 * registered is a no-op. KN_OK, KN_ERR__INVALID_ARG, KN_ERR__FORKED. */
KN_API int kn_producer_unregister_metric_from_subscription(kn_producer *p, kn_app_metric *m);
KN_API int kn_consumer_unregister_metric_from_subscription(kn_consumer *c, kn_app_metric *m);
KN_API int kn_admin_unregister_metric_from_subscription(kn_admin *admin, kn_app_metric *m);

#ifdef __cplusplus
}
#endif
#endif
