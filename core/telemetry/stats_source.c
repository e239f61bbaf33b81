/*
 * stats_source.c: producer, consumer and admin stats as Kafka-named
 * metric views (see stats_source.h). Totals since the client started
 * are Sums; averages, maxima and current values are gauges. Time in ms
 * as Java reports it.
 */
#include "telemetry/stats_source.h"

#include "kafka_native.h"
#include "wire/wire.h"

static void emit(kn_metric_visit_fn visit, void *ctx, const char *group, const char *name,
                 const char *description, double value, kn_metric_kind kind) {
    kn_metric_view v = {
        .group = group,
        .name = name,
        .description = description,
        .tags = NULL,
        .n_tags = 0,
        .value = value,
        .kind = kind,
    };
    visit(ctx, &v);
}

#define SUM(g, n, d, v) emit(visit, ctx, g, n, d, (double)(v), KN_METRIC_SUM)
#define GAUGE(g, n, d, v) emit(visit, ctx, g, n, d, (double)(v), KN_METRIC_GAUGE)

void knt_producer_source(void *client, kn_metric_visit_fn visit, void *ctx) {
    kn_producer_stats s = {.size = sizeof s};
    if (kn_producer_get_stats(client, &s) != KN_OK)
        return;
    const char *g = "producer-metrics";
    SUM(g, "record-send-total", "Records sent and acknowledged (or sent, with acks=0).", s.records_sent);
    SUM(g, "record-error-total", "Records whose send failed.", s.records_failed);
    SUM(g, "record-retry-total", "Batches sent again after a retriable error.", s.retries);
    SUM(g, "request-total", "Produce requests sent.", s.requests_sent);
    GAUGE(g, "request-latency-avg", "Mean produce request latency in ms.", s.request_latency_avg_us / 1000.0);
    GAUGE(g, "request-latency-max", "Largest produce request latency in ms.", s.request_latency_max_us / 1000.0);
    if (s.batches_sent > 0)
        GAUGE(g, "batch-size-avg", "Mean bytes per record batch sent.",
              (double)s.bytes_sent / (double)s.batches_sent);
    GAUGE(g, "produce-throttle-time-avg", "Mean broker throttle time of produce responses in ms.",
          s.produce_throttle_time_avg_ms);
    GAUGE(g, "produce-throttle-time-max", "Largest broker throttle time of produce responses in ms.",
          s.produce_throttle_time_max_ms);
    SUM(g, "connection-creation-total", "Broker connections established.", s.connects);
    SUM(g, "successful-reauthentication-total", "SASL re-authentications that succeeded.",
        s.reauthentications);
}

void knt_consumer_source(void *client, kn_metric_visit_fn visit, void *ctx) {
    kn_consumer_stats s = {.size = sizeof s};
    if (kn_consumer_get_stats(client, &s) != KN_OK)
        return;
    const char *f = "consumer-fetch-manager-metrics";
    SUM(f, "records-consumed-total", "Records returned by poll.", s.records);
    SUM(f, "bytes-consumed-total", "Key and value bytes of the records returned by poll.", s.record_bytes);
    SUM(f, "fetch-total", "Fetch responses received.", s.fetch_requests);
    if (s.fetch_requests > 0)
        GAUGE(f, "fetch-latency-avg", "Mean fetch round trip in ms.",
              (double)s.fetch_latency_us_total / (double)s.fetch_requests / 1000.0);
    GAUGE(f, "fetch-latency-max", "Largest fetch round trip in ms.", s.fetch_latency_us_max / 1000.0);
    GAUGE(f, "fetch-throttle-time-avg", "Mean broker throttle time of fetch responses in ms.",
          s.fetch_throttle_time_avg_ms);
    GAUGE(f, "fetch-throttle-time-max", "Largest broker throttle time of fetch responses in ms.",
          s.fetch_throttle_time_max_ms);
    const char *c = "consumer-coordinator-metrics";
    SUM(c, "commit-total", "Offset commits that succeeded.", s.commits);
    SUM(c, "rebalance-total", "Rebalances the member took part in.", s.rebalances);
    SUM(c, "failed-rebalance-total", "Joins that failed and were retried.", s.rebalances_failed);
    SUM(c, "rebalance-latency-total", "Time spent rebalancing in ms.", s.join_latency_ms_total);
    const char *m = "consumer-metrics";
    SUM(m, "connection-creation-total", "Broker connections established.", s.connects);
    SUM(m, "successful-reauthentication-total", "SASL re-authentications that succeeded.",
        s.reauthentications);
}

void knt_admin_source(void *client, kn_metric_visit_fn visit, void *ctx) {
    knw_stats s;
    knw_get_stats(client, &s);
    const char *g = "admin-client-metrics";
    SUM(g, "connection-creation-total", "Broker connections established.", s.connects);
    SUM(g, "connection-close-total", "Broker connections closed.", s.disconnects);
    SUM(g, "request-total", "Requests sent.", s.requests_sent);
    SUM(g, "response-total", "Responses received.", s.responses_received);
    SUM(g, "outgoing-byte-total", "Bytes sent to brokers.", s.bytes_sent);
    SUM(g, "incoming-byte-total", "Bytes received from brokers.", s.bytes_received);
    SUM(g, "successful-reauthentication-total", "SASL re-authentications that succeeded.",
        s.reauthentications);
}
