/*
 * it_telemetry.c: client telemetry (KIP-714) against the real broker,
 * read back through the harness's recorder plugin
 * (tools/java/TelemetryRecorder.java, which decodes every push it gets
 * and appends it to KN_BROKER_DIR/telemetry.log):
 *  - with a client-metrics subscription for our client ids (prefixes
 *    org.apache.kafka.producer. and org.apache.kafka.kntest., 1 s
 *    interval), a producer that sends 25 records pushes OTLP with
 *    org.apache.kafka.producer.record.send.total adding up to 25, its
 *    registered application metric (KIP-1076) with its value, nothing
 *    outside the prefixes, under the client instance id the producer
 *    reports, and a terminating push when it is closed;
 *  - with enable.metrics.push=false no push arrives and
 *    client_instance_id says telemetry is not enabled;
 *  - the consumer and (opted in) admin client get their own ids; the
 *    admin's default (false) refuses; a negative timeout is refused.
 */
#include "kn_test.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "kafka_native.h"

#define TIMEOUT_MS 30000

static char sub_name[64], id_prefix[64], log_path[512];

static void sleep_ms(int ms) {
    struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

static kn_admin *admin_new(bool push) {
    char es[512] = "";
    kn_conf *conf = kn_conf_new(KN_CLIENT_ADMIN);
    kn_test_conf_set(conf, "bootstrap.servers", kn_test_bootstrap());
    if (push)
        kn_test_conf_set(conf, "enable.metrics.push", "true");
    char cid[96];
    snprintf(cid, sizeof cid, "%sadmin%s", id_prefix, push ? "-push" : "");
    kn_test_conf_set(conf, "client.id", cid);
    kn_admin *a = kn_admin_new(conf, es, sizeof es);
    kn_conf_destroy(conf);
    if (!a)
        fail_msg("admin: %s", es);
    return a;
}

static void alter_subscription(bool set) {
    char es[512] = "", match[96];
    snprintf(match, sizeof match, "client_id=%s.*", id_prefix);
    kn_config_op ops[] = {
        {KN_CONFIG_RESOURCE_CLIENT_METRICS, sub_name, set ? KN_CONFIG_OP_SET : KN_CONFIG_OP_DELETE, "metrics",
         set ? "org.apache.kafka.producer.,org.apache.kafka.kntest." : NULL},
        {KN_CONFIG_RESOURCE_CLIENT_METRICS, sub_name, set ? KN_CONFIG_OP_SET : KN_CONFIG_OP_DELETE,
         "interval.ms", set ? "1000" : NULL},
        {KN_CONFIG_RESOURCE_CLIENT_METRICS, sub_name, set ? KN_CONFIG_OP_SET : KN_CONFIG_OP_DELETE, "match",
         set ? match : NULL},
    };
    kn_admin *a = admin_new(false);
    kn_config_results *cr = NULL;
    if (kn_admin_incremental_alter_configs(a, ops, 3, 0, TIMEOUT_MS, &cr, es, sizeof es))
        fail_msg("incremental_alter_configs: %s", es);
    for (size_t i = 0; i < kn_config_results_count(cr); i++)
        if (kn_config_results_error(cr, i))
            fail_msg("alter %s: %s", kn_config_results_resource_name(cr, i),
                     kn_config_results_error_message(cr, i));
    kn_config_results_destroy(cr);
    kn_admin_close(a, 5000);
    kn_admin_destroy(a);
}

static int setup(void **state) {
    (void)state;
    const char *dir = getenv("KN_BROKER_DIR");
    if (!dir || !*dir) {
        fprintf(stderr, "KN_BROKER_DIR unset: run under the harness (tools/kafka/broker env)\n");
        return -1;
    }
    snprintf(log_path, sizeof log_path, "%s/telemetry.log", dir);
    snprintf(sub_name, sizeof sub_name, "kn-test-telemetry-%d", (int)getpid());
    snprintf(id_prefix, sizeof id_prefix, "kn-tel-%d-", (int)getpid());
    alter_subscription(true);
    return 0;
}

static int teardown(void **state) {
    (void)state;
    alter_subscription(false);
    return 0;
}

/* What the recorder saw for one client instance. */
typedef struct seen {
    int pushes, terminating;
    char client_id[128];
    bool protobuf;
    double send_total;   /* record.send.total, summed over deltas / last cumulative */
    double retry_total;  /* record.retry.total: sends count per attempt, as Java's */
    int retry_points;
    int send_points;
    double app_total;
    int app_points;
    int outside; /* points whose name is outside the subscribed prefixes */
    int bad;
} seen;

static const char *field(const char *line, const char *key, char *buf, size_t size) {
    char k[64];
    snprintf(k, sizeof k, " %s=", key);
    const char *p = strstr(line, k);
    buf[0] = '\0';
    if (!p)
        return NULL;
    p += strlen(k);
    size_t n = strcspn(p, " \n");
    if (n >= size)
        n = size - 1;
    memcpy(buf, p, n);
    buf[n] = '\0';
    return buf;
}

static void add_value(const char *line, double *total, int *points) {
    char v[64], t[32];
    field(line, "value", v, sizeof v);
    field(line, "temporality", t, sizeof t);
    if (!strcmp(t, "DELTA"))
        *total += atof(v);
    else
        *total = atof(v); /* cumulative: the latest is the total */
    (*points)++;
}

static seen read_log(const char *instance) {
    seen s;
    memset(&s, 0, sizeof s);
    FILE *f = fopen(log_path, "r");
    if (!f)
        return s;
    char line[8192], id[64], name[256];
    while (fgets(line, sizeof line, f)) {
        if (!field(line, "instance", id, sizeof id) || strcmp(id, instance) != 0)
            continue;
        if (!strncmp(line, "PUSH ", 5)) {
            char term[16], type[128];
            s.pushes++;
            field(line, "client_id", s.client_id, sizeof s.client_id);
            field(line, "terminating", term, sizeof term);
            field(line, "type", type, sizeof type);
            s.terminating += !strcmp(term, "true");
            /* Kafka 4.3 names the OTLP protobuf content type "OTLP" */
            s.protobuf = !strcmp(type, "OTLP") || strstr(type, "protobuf") != NULL;
        } else if (!strncmp(line, "POINT ", 6)) {
            field(line, "name", name, sizeof name);
            if (!strcmp(name, "org.apache.kafka.producer.record.send.total"))
                add_value(line, &s.send_total, &s.send_points);
            else if (!strcmp(name, "org.apache.kafka.producer.record.retry.total"))
                add_value(line, &s.retry_total, &s.retry_points);
            else if (!strcmp(name, "org.apache.kafka.kntest.orders.total"))
                add_value(line, &s.app_total, &s.app_points);
            if (strncmp(name, "org.apache.kafka.producer.", 26) && strncmp(name, "org.apache.kafka.kntest.", 24))
                s.outside++;
        } else if (!strncmp(line, "BAD ", 4)) {
            s.bad++;
        }
    }
    fclose(f);
    return s;
}

static kn_producer *producer_new(const char *suffix, bool push) {
    char es[512] = "", cid[96];
    kn_conf *conf = kn_conf_new(KN_CLIENT_PRODUCER);
    kn_test_conf_set(conf, "bootstrap.servers", kn_test_bootstrap());
    snprintf(cid, sizeof cid, "%s%s", id_prefix, suffix);
    kn_test_conf_set(conf, "client.id", cid);
    kn_test_conf_set(conf, "linger.ms", "0");
    if (!push)
        kn_test_conf_set(conf, "enable.metrics.push", "false");
    kn_producer *p = kn_producer_new(conf, NULL, NULL, es, sizeof es);
    kn_conf_destroy(conf);
    if (!p)
        fail_msg("producer: %s", es);
    return p;
}

static void send_records(kn_producer *p, const char *topic, int n) {
    char es[512] = "";
    for (int i = 0; i < n; i++) {
        kn_record_out r = {.topic = topic, .partition = -1, .value = "v", .value_len = 1};
        if (kn_producer_send(p, &r, es, sizeof es))
            fail_msg("send: %s", es);
    }
    assert_int_equal(kn_producer_flush(p, TIMEOUT_MS), KN_OK);
}

static void test_producer_push(void **state) {
    (void)state;
    char es[512] = "", id[KN_CLIENT_INSTANCE_ID_SIZE];
    const char *topic = kn_test_topic("telemetry");
    kn_test_create_topic(topic, 1);
    kn_producer *p = producer_new("p1", true);
    kn_app_metric *m = kn_app_metric_new("kntest-metrics", "orders-total", "Orders taken.", KN_APP_METRIC_SUM);
    assert_non_null(m);
    assert_int_equal(kn_app_metric_add_tag(m, "shop-name", "north"), KN_OK);
    assert_int_equal(kn_producer_register_metric_for_subscription(p, m), KN_OK);
    assert_int_equal(kn_producer_register_metric_for_subscription(p, m), KN_OK); /* no-op */
    assert_int_equal(kn_app_metric_add_tag(m, "late", "x"), KN_ERR__STATE);
    kn_app_metric_add(m, 40);
    kn_app_metric_add(m, 2);
    assert_int_equal(kn_producer_client_instance_id(p, -1, id, sizeof id, es, sizeof es), KN_ERR__INVALID_ARG);
    if (kn_producer_client_instance_id(p, TIMEOUT_MS, id, sizeof id, es, sizeof es))
        fail_msg("client_instance_id: %s", es);
    assert_int_equal(strlen(id), 22);
    send_records(p, topic, 25);

    /* Pushes every second: wait until the sent records show. */
    int64_t until = kn_test_now_ms() + TIMEOUT_MS;
    seen s;
    for (;;) {
        s = read_log(id);
        /* a record retried (a fresh topic's leader not elected yet) is
         * sent twice and counted in record.retry.total too */
        if (s.send_total == 25 + s.retry_total && s.app_total == 42)
            break;
        if (kn_test_now_ms() > until)
            fail_msg("after %d pushes of %s: record.send.total %.0f (want 25 + %.0f retried), orders.total %.0f (want 42)",
                     s.pushes, id, s.send_total, s.retry_total, s.app_total);
        sleep_ms(200);
    }
    char want_cid[96];
    snprintf(want_cid, sizeof want_cid, "%sp1", id_prefix);
    assert_string_equal(s.client_id, want_cid);
    assert_true(s.protobuf);
    assert_int_equal(s.bad, 0);
    assert_int_equal(s.outside, 0);
    assert_int_equal(s.terminating, 0);

    /* Close: one last push marked terminating, answered before close returns. */
    assert_int_equal(kn_producer_close(p, 10000), KN_OK);
    s = read_log(id);
    assert_int_equal(s.terminating, 1);
    assert_true(s.send_total == 25);
    /* After close the id is still known. */
    char id2[KN_CLIENT_INSTANCE_ID_SIZE];
    assert_int_equal(kn_producer_client_instance_id(p, 0, id2, sizeof id2, es, sizeof es), KN_OK);
    assert_string_equal(id, id2);
    kn_producer_destroy(p);
    /* The metric outlives the producer that held it. */
    assert_true(kn_app_metric_value(m) == 42);
    kn_app_metric_destroy(m);
}

static void test_push_disabled(void **state) {
    (void)state;
    char es[512] = "", id[KN_CLIENT_INSTANCE_ID_SIZE];
    const char *topic = kn_test_topic("telemetry-off");
    kn_test_create_topic(topic, 1);
    kn_producer *p = producer_new("off", false);
    assert_int_equal(kn_producer_client_instance_id(p, 1000, id, sizeof id, es, sizeof es), KN_ERR__STATE);
    assert_non_null(strstr(es, "enable.metrics.push"));
    kn_app_metric *m = kn_app_metric_new("kntest-metrics", "ignored", NULL, KN_APP_METRIC_GAUGE);
    assert_int_equal(kn_producer_register_metric_for_subscription(p, m), KN_OK); /* accepted, never pushed */
    send_records(p, topic, 5);
    /* A pushing producer started now gets pushed within a few intervals;
     * this one must not be seen in that time. */
    kn_producer *on = producer_new("on", true);
    if (kn_producer_client_instance_id(on, TIMEOUT_MS, id, sizeof id, es, sizeof es))
        fail_msg("client_instance_id: %s", es);
    int64_t until = kn_test_now_ms() + TIMEOUT_MS;
    while (read_log(id).pushes == 0) {
        if (kn_test_now_ms() > until)
            fail_msg("no push from the enabled producer %s", id);
        sleep_ms(200);
    }
    sleep_ms(2000); /* two more intervals */
    kn_producer_close(p, 5000);
    kn_producer_close(on, 5000);
    FILE *f = fopen(log_path, "r");
    assert_non_null(f);
    char line[8192], want[128];
    snprintf(want, sizeof want, " client_id=%soff ", id_prefix);
    while (fgets(line, sizeof line, f))
        if (strstr(line, want))
            fail_msg("a push from the disabled producer: %s", line);
    fclose(f);
    kn_producer_destroy(p);
    kn_producer_destroy(on);
    kn_app_metric_destroy(m);
}

static void test_consumer_and_admin_ids(void **state) {
    (void)state;
    char es[512] = "", cid[96], idc[KN_CLIENT_INSTANCE_ID_SIZE], ida[KN_CLIENT_INSTANCE_ID_SIZE];
    kn_conf *conf = kn_conf_new(KN_CLIENT_CONSUMER);
    kn_test_conf_set(conf, "bootstrap.servers", kn_test_bootstrap());
    snprintf(cid, sizeof cid, "%sc1", id_prefix);
    kn_test_conf_set(conf, "client.id", cid);
    kn_consumer *c = kn_consumer_new(conf, es, sizeof es);
    kn_conf_destroy(conf);
    if (!c)
        fail_msg("consumer: %s", es);
    if (kn_consumer_client_instance_id(c, TIMEOUT_MS, idc, sizeof idc, es, sizeof es))
        fail_msg("consumer client_instance_id: %s", es);
    kn_admin *a = admin_new(true);
    if (kn_admin_client_instance_id(a, TIMEOUT_MS, ida, sizeof ida, es, sizeof es))
        fail_msg("admin client_instance_id: %s", es);
    assert_string_not_equal(idc, ida);
    kn_admin *off = admin_new(false); /* Java's admin default: no push */
    assert_int_equal(kn_admin_client_instance_id(off, 0, ida, sizeof ida, es, sizeof es), KN_ERR__STATE);
    kn_consumer_close(c, 5000);
    kn_consumer_destroy(c);
    kn_admin_close(a, 5000);
    kn_admin_destroy(a);
    kn_admin_close(off, 5000);
    kn_admin_destroy(off);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_producer_push),
        cmocka_unit_test(test_push_disabled),
        cmocka_unit_test(test_consumer_and_admin_ids),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
