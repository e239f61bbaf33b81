/*
 * telemetry.h: client telemetry push (KIP-714), one per client with
 * enable.metrics.push=true. Owns the subscription state machine (as
 * Java's ClientTelemetryReporter: subscription needed -> in progress ->
 * push needed -> in progress -> ... -> terminating push), its ticker on
 * the client's network thread, the delta-temporality ledger and the
 * registered application metrics.
 *
 * Threads: the ticker and the request callbacks run on the network
 * thread, which alone builds payloads (it calls the metric source
 * there, so a source may take its client's locks but must not wait on
 * the application thread). The application thread calls
 * knt_instance_id (waits on a condition), knt_close (waits for the
 * terminating push) and knt_register/unregister; t->lock guards what
 * both sides touch.
 *
 * Lifecycle: knt_new after the network client is up; knt_close before
 * the network client stops (the last push needs it); knt_destroy after
 * the network client is stopped or destroyed (no callback still runs).
 */
#ifndef KNT_TELEMETRY_H
#define KNT_TELEMETRY_H

#include <stddef.h>
#include <stdint.h>

#include "kafka_native.h"
#include "metrics/metric_view.h"
#include "wire/wire.h"

typedef struct knt knt;

/* Visits every metric of the client (the pointer given to knt_new):
 * called on the network thread for each push. */
typedef void knt_source_fn(void *client, kn_metric_visit_fn visit, void *ctx);

/* Starts telemetry for a client: kind is "producer", "consumer" or
 * "admin"; conf the client's finalised conf (read at once: resource
 * attributes). *out is NULL (and 0 returned) when enable.metrics.push
 * is false. Returns 0 or KN_ERR__NOMEM. */
int knt_new(knw_client *wire, const kn_conf *conf, const char *kind, knt_source_fn *source,
            void *client, knt **out);
/* Application thread, before the network client stops: sends the
 * terminating push when a subscription is active and waits for its
 * answer until deadline_ms (monotonic ms), then stops the ticker.
 * Idempotent; NULL is a no-op. */
void knt_close(knt *t, int64_t deadline_ms);
/* Frees t (NULL: no-op). After the network client is stopped. */
void knt_destroy(knt *t);

/* The public kn_*_client_instance_id behaviour; t NULL means telemetry
 * is disabled (enable.metrics.push=false). */
int knt_instance_id(knt *t, int timeout_ms, char *out, size_t out_size, char *errstr,
                    size_t errstr_size);
/* Registration of application metrics; NULL t accepts and ignores. */
int knt_register(knt *t, kn_app_metric *m);
int knt_unregister(knt *t, kn_app_metric *m);

/* Kafka's text form of a Uuid (URL-safe base64, no padding). */
void knt_uuid_str(const kn_uuid *id, char out[23]);

#endif
