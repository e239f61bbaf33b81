/*
 * test_telemetry_otlp.c: the KIP-714 payload pieces that need no broker:
 * metric names as Java's TelemetryMetricNamingConvention makes them,
 * tag keys, the protobuf writer's nested lengths (one- and two-byte
 * varints, hand-computed bytes), a tiny MetricsData checked byte by byte
 * against the opentelemetry-proto field numbers, the Uuid text form,
 * and the application metric object. it_telemetry shows the real
 * broker's plugin decoding what we push.
 */
#include "kn_test.h"

#include <string.h>

#include "kn_alloc.h"
#include "telemetry/app_metric.h"
#include "telemetry/otlp.h"
#include "telemetry/pb.h"
#include "telemetry/telemetry.h"

static void test_names(void **state) {
    (void)state;
    char b[128];
    assert_true(knt_otlp_name(b, sizeof b, "producer-metrics", "record-send-total"));
    assert_string_equal(b, "org.apache.kafka.producer.record.send.total");
    assert_true(knt_otlp_name(b, sizeof b, "consumer-fetch-manager-metrics", "records-lag-max"));
    assert_string_equal(b, "org.apache.kafka.consumer.fetch.manager.records.lag.max");
    assert_true(knt_otlp_name(b, sizeof b, "Admin-Client-Metrics", "Request-Total"));
    assert_string_equal(b, "org.apache.kafka.admin.client.request.total");
    assert_true(knt_otlp_name(b, sizeof b, "my-app", "x"));
    assert_string_equal(b, "org.apache.kafka.my.app.x");
    assert_false(knt_otlp_name(b, 20, "producer-metrics", "record-send-total"));
    assert_true(knt_otlp_tag_key(b, sizeof b, "client-id"));
    assert_string_equal(b, "client_id");
}

static void test_pb_lengths(void **state) {
    (void)state;
    kn_wr w;
    kn_wr_init(&w, 16, 0);
    size_t outer = knt_pb_begin(&w, 1);
    size_t inner = knt_pb_begin(&w, 2);
    char s[201];
    memset(s, 'a', 200);
    s[200] = '\0';
    knt_pb_string(&w, 3, s); /* 1 tag + 2 length + 200 */
    knt_pb_end(&w, inner);   /* body 203: length 0xcb 0x01 */
    knt_pb_end(&w, outer);   /* body 1 + 2 + 203 = 206: 0xce 0x01 */
    assert_int_equal(w.err, 0);
    assert_int_equal(w.len, 1 + 2 + 1 + 2 + 1 + 2 + 200);
    const uint8_t head[] = {0x0a, 0xce, 0x01, 0x12, 0xcb, 0x01, 0x1a, 0xc8, 0x01, 'a'};
    assert_memory_equal(w.buf, head, sizeof head);
    kn_wr_free(&w);
}

static void test_metrics_data(void **state) {
    (void)state;
    knt_otlp o;
    kn_metric_tag res[] = {{"group_id", "g"}};
    knt_otlp_begin(&o, res, 1, 0);
    kn_metric_tag attrs[] = {{"topic", "t"}};
    knt_point p = {.name = "n", .attrs = attrs, .n_attrs = 1, .value = 1.0, .sum = true,
                   .temporality = KNT_TEMPORALITY_DELTA, .start_ns = 1, .time_ns = 2};
    knt_otlp_add(&o, &p);
    uint8_t *out;
    size_t len;
    assert_int_equal(knt_otlp_finish(&o, &out, &len), 0);
    /* MetricsData{1: ResourceMetrics{1: Resource{1: KV{1:"group_id" 2:{1:"g"}}}
     *   2: ScopeMetrics{2: Metric{1:"n" 7: Sum{1: NDP{7: KV{"topic" {"t"}}
     *   2: fixed64 1, 3: fixed64 2, 4: double 1.0}, 2: 1 (DELTA), 3: 1}}}}} */
    const uint8_t want[] = {
        0x0a, 0x4b,                                                   /* resource_metrics */
        0x0a, 0x11, 0x0a, 0x0f, 0x0a, 0x08, 'g', 'r', 'o', 'u', 'p', '_', 'i', 'd', /* resource, kv, key */
        0x12, 0x03, 0x0a, 0x01, 'g',                                  /* value{string "g"} */
        0x12, 0x36,                                                   /* scope_metrics */
        0x12, 0x34,                                                   /* metric */
        0x0a, 0x01, 'n',                                              /* name */
        0x3a, 0x2f,                                                   /* sum */
        0x0a, 0x29,                                                   /* data_points */
        0x3a, 0x0c, 0x0a, 0x05, 't', 'o', 'p', 'i', 'c', 0x12, 0x03, 0x0a, 0x01, 't', /* attributes */
        0x11, 1, 0, 0, 0, 0, 0, 0, 0,                                 /* start_time_unix_nano */
        0x19, 2, 0, 0, 0, 0, 0, 0, 0,                                 /* time_unix_nano */
        0x21, 0, 0, 0, 0, 0, 0, 0xf0, 0x3f,                           /* as_double 1.0 */
        0x10, 0x01,                                                   /* aggregation_temporality DELTA */
        0x18, 0x01,                                                   /* is_monotonic */
    };
    assert_int_equal(len, sizeof want);
    assert_memory_equal(out, want, sizeof want);
    kn_free(out);
}

static void test_uuid_text(void **state) {
    (void)state;
    /* Kafka's Uuid.toString of 0x0102...10 (URL-safe base64, no padding). */
    kn_uuid id;
    for (int i = 0; i < 16; i++)
        id.b[i] = (uint8_t)(i + 1);
    char s[23];
    knt_uuid_str(&id, s);
    assert_string_equal(s, "AQIDBAUGBwgJCgsMDQ4PEA");
    memset(id.b, 0xff, 16);
    knt_uuid_str(&id, s);
    assert_string_equal(s, "_____________________w");
}

static void test_app_metric(void **state) {
    (void)state;
    assert_null(kn_app_metric_new("", "x", NULL, KN_APP_METRIC_GAUGE));
    assert_int_equal(kn_last_error(), KN_ERR__INVALID_ARG);
    assert_null(kn_app_metric_new("g", "x", NULL, 7));
    kn_app_metric *m = kn_app_metric_new("g-metrics", "x-total", "d", KN_APP_METRIC_SUM);
    assert_non_null(m);
    kn_app_metric_set(m, 1.5);
    kn_app_metric_add(m, 2);
    assert_true(kn_app_metric_value(m) == 3.5);
    assert_int_equal(kn_app_metric_add_tag(m, "k", "v"), KN_OK);
    kn_metric_view v;
    knt_app_metric_view(m, &v);
    assert_string_equal(v.group, "g-metrics");
    assert_int_equal(v.n_tags, 1);
    assert_int_equal(v.kind, KN_METRIC_SUM);
    knt_app_metric_retain(m); /* a client's reference */
    assert_int_equal(kn_app_metric_add_tag(m, "k2", "v"), KN_ERR__STATE);
    kn_app_metric_destroy(m);   /* the application's */
    assert_true(kn_app_metric_value(m) == 3.5); /* still held */
    knt_app_metric_release(m);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_names),       cmocka_unit_test(test_pb_lengths),
        cmocka_unit_test(test_metrics_data), cmocka_unit_test(test_uuid_text),
        cmocka_unit_test(test_app_metric),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
