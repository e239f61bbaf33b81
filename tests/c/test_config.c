/*
 * test_config.c: the configuration catalog and kn_conf values: every
 * default valid under its own validator, wrong values naming the key and
 * what is accepted, unknown-key suggestions, typed getters, dump with
 * masked passwords, dup/destroy, and allocation failures (no leaks under
 * ASan).
 */
#include "kn_test.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "config/catalog.h"
#include "config/config.h"
#include "kn_alloc.h"

static const kn_client_type all_types[] = {KN_CLIENT_PRODUCER, KN_CLIENT_CONSUMER, KN_CLIENT_ADMIN};

/* kn_conf_set must fail with KN_ERR__CONFIG and an errstr holding every
 * string in want (NULL-terminated). */
static void expect_error(kn_client_type type, const char *key, const char *value, const char *const *want) {
    char err[1024] = "";
    kn_conf *conf = kn_conf_new(type);
    assert_non_null(conf);
    int rc = kn_conf_set(conf, key, value, err, sizeof(err));
    if (rc != KN_ERR__CONFIG)
        fail_msg("%s=%s: expected KN_ERR__CONFIG, got %d", key, value, rc);
    for (size_t i = 0; want[i]; i++)
        if (!strstr(err, want[i]))
            fail_msg("%s=%s: error \"%s\" lacks \"%s\"", key, value, err, want[i]);
    kn_conf_destroy(conf);
}
#define EXPECT_ERROR(type, key, value, ...)                                                        \
    do {                                                                                           \
        const char *const want_[] = {__VA_ARGS__, NULL};                                           \
        expect_error(type, key, value, want_);                                                     \
    } while (0)

static void check_value(kn_conf *conf, const char *key, const char *want) {
    char buf[512];
    size_t n = sizeof(buf);
    int rc = kn_conf_get(conf, key, buf, &n);
    if (!want) {
        assert_int_equal(rc, KN_ERR__NOT_FOUND);
        return;
    }
    if (rc != KN_OK || strcmp(buf, want) != 0)
        fail_msg("%s: got rc %d value \"%s\", want \"%s\"", key, rc, buf, want);
    assert_int_equal(n, strlen(want) + 1);
}

static void set_ok(kn_conf *conf, const char *key, const char *value) {
    char err[512] = "";
    int rc = kn_conf_set(conf, key, value, err, sizeof(err));
    if (rc != KN_OK)
        fail_msg("%s=%s: %d %s", key, value, rc, err);
}

static void test_catalog_sorted_and_complete(void **state) {
    assert_true(kn_conf_catalog_count > 100);
    for (size_t i = 1; i < kn_conf_catalog_count; i++)
        if (strcmp(kn_conf_catalog[i - 1].name, kn_conf_catalog[i].name) >= 0)
            fail_msg("catalog not sorted at %s", kn_conf_catalog[i].name);
    for (size_t i = 0; i < kn_conf_catalog_count; i++) {
        const kn_conf_key *k = &kn_conf_catalog[i];
        assert_int_equal(kn_conf_key_find(k->name), (long)i);
        assert_true(k->clients != 0 && (k->clients & ~7u) == 0);
    }
    /* Keys every client has, and per-client membership. */
    const kn_conf_key *k = kn_conf_key_at((size_t)kn_conf_key_find("bootstrap.servers"));
    assert_int_equal(k->clients, KN_CLIENT_PRODUCER | KN_CLIENT_CONSUMER | KN_CLIENT_ADMIN);
    assert_int_equal(k->required, KN_CLIENT_PRODUCER | KN_CLIENT_CONSUMER);
    k = kn_conf_key_at((size_t)kn_conf_key_find("linger.ms"));
    assert_int_equal(k->clients, KN_CLIENT_PRODUCER);
    assert_int_equal(k->type, KN_CONF_LONG);
    assert_int_equal(kn_conf_key_find("no.such.key"), -1);
    /* Another client's runtime knobs in the catalog file are not Java
     * keys and must not be offered. */
    assert_int_equal(kn_conf_key_find("socket.tcp.nodelay"), -1);
}

/* Every default of every key, for every client that has it, passes the
 * key's own validator and comes back unchanged (it is canonical). */
static void test_defaults_pass_own_validator(void **state) {
    char err[1024];
    size_t checked = 0;
    for (size_t i = 0; i < kn_conf_key_count(); i++) {
        const kn_conf_key *k = kn_conf_key_at(i);
        for (size_t t = 0; t < 3; t++) {
            if (!(k->clients & all_types[t]))
                continue;
            const char *def = kn_conf_key_default(k, all_types[t]);
            if (!def)
                continue;
            char *canon = NULL;
            int rc = kn_conf_key_validate(k, def, &canon, err, sizeof(err));
            if (rc != KN_OK)
                fail_msg("default \"%s\" of %s rejected: %s", def, k->name, err);
            if (!canon ? def[0] != 0 : strcmp(canon, def) != 0)
                fail_msg("default \"%s\" of %s is not canonical (\"%s\")", def, k->name, canon ? canon : "null");
            kn_free(canon);
            checked++;
        }
    }
    fprintf(stderr, "checked %zu defaults\n", checked);
    assert_true(checked > 200);
}

static void test_resolved_defaults(void **state) {
    kn_conf *p = kn_conf_new(KN_CLIENT_PRODUCER);
    kn_conf *c = kn_conf_new(KN_CLIENT_CONSUMER);
    kn_conf *a = kn_conf_new(KN_CLIENT_ADMIN);
    /* Java expressions resolved by the generator. */
    check_value(p, "buffer.memory", "33554432");
    check_value(p, "delivery.timeout.ms", "120000");
    check_value(p, "retries", "2147483647");
    check_value(p, "compression.gzip.level", "-1");
    check_value(p, "compression.zstd.level", "3");
    check_value(p, "client.dns.lookup", "use_all_dns_ips");
    check_value(p, "metric.reporters", "org.apache.kafka.common.metrics.JmxReporter");
    check_value(p, "ssl.enabled.protocols", "TLSv1.2,TLSv1.3");
    check_value(p, "sasl.kerberos.ticket.renew.window.factor", "0.8");
    check_value(p, "linger.ms", "5");
    check_value(p, "metadata.recovery.strategy", "rebootstrap");
    check_value(c, "partition.assignment.strategy",
                 "org.apache.kafka.clients.consumer.RangeAssignor,"
                 "org.apache.kafka.clients.consumer.CooperativeStickyAssignor");
    check_value(c, "fetch.max.bytes", "52428800");
    check_value(c, "auto.offset.reset", "latest");
    check_value(c, "isolation.level", "read_uncommitted");
    check_value(c, "group.protocol", "classic");
    check_value(c, "group.id", NULL);
    check_value(c, "client.rack", "");
    /* The same key, different defaults per client type. */
    check_value(p, "receive.buffer.bytes", "32768");
    check_value(c, "receive.buffer.bytes", "65536");
    check_value(a, "connections.max.idle.ms", "300000");
    check_value(p, "connections.max.idle.ms", "540000");
    check_value(a, "enable.metrics.push", "false");
    check_value(p, "bootstrap.servers", NULL);
    check_value(a, "bootstrap.servers", "");
    kn_conf_destroy(p);
    kn_conf_destroy(c);
    kn_conf_destroy(a);
}

static void test_wrong_values_name_key_and_accepted(void **state) {
    EXPECT_ERROR(KN_CLIENT_PRODUCER, "acks", "fast", "invalid value \"fast\" for acks: expected one of all, -1, 0, 1");
    EXPECT_ERROR(KN_CLIENT_PRODUCER, "acks", "ALL", "acks", "all, -1, 0, 1");
    EXPECT_ERROR(KN_CLIENT_PRODUCER, "enable.idempotence", "yes", "enable.idempotence", "true or false");
    EXPECT_ERROR(KN_CLIENT_PRODUCER, "compression.type", "brotli", "compression.type",
                 "none, gzip, snappy, lz4, zstd");
    EXPECT_ERROR(KN_CLIENT_PRODUCER, "compression.gzip.level", "10", "compression.gzip.level", "[1, 9] or -1");
    EXPECT_ERROR(KN_CLIENT_PRODUCER, "compression.gzip.level", "0", "[1, 9] or -1");
    EXPECT_ERROR(KN_CLIENT_PRODUCER, "batch.size", "-1", "batch.size", ">= 0");
    EXPECT_ERROR(KN_CLIENT_PRODUCER, "max.in.flight.requests.per.connection", "0", ">= 1");
    EXPECT_ERROR(KN_CLIENT_PRODUCER, "metadata.max.idle.ms", "4999", ">= 5000");
    /* Type overflow: int, short and long. */
    EXPECT_ERROR(KN_CLIENT_PRODUCER, "batch.size", "2147483648", "batch.size", "32-bit integer");
    EXPECT_ERROR(KN_CLIENT_PRODUCER, "linger.ms", "9223372036854775808", "linger.ms", "64-bit integer");
    EXPECT_ERROR(KN_CLIENT_PRODUCER, "sasl.login.refresh.buffer.seconds", "40000", "16-bit integer");
    EXPECT_ERROR(KN_CLIENT_PRODUCER, "sasl.login.refresh.buffer.seconds", "3601", "[0, 3600]");
    EXPECT_ERROR(KN_CLIENT_PRODUCER, "linger.ms", "5ms", "linger.ms", "64-bit integer");
    EXPECT_ERROR(KN_CLIENT_PRODUCER, "linger.ms", "", "linger.ms");
    EXPECT_ERROR(KN_CLIENT_PRODUCER, "linger.ms", "0x10", "linger.ms");
    EXPECT_ERROR(KN_CLIENT_PRODUCER, "sasl.login.refresh.window.factor", "0.3", "[0.5, 1]");
    EXPECT_ERROR(KN_CLIENT_PRODUCER, "sasl.kerberos.ticket.renew.jitter", "nan", "decimal number");
    EXPECT_ERROR(KN_CLIENT_PRODUCER, "transactional.id", "  ", "transactional.id", "non-empty");
    EXPECT_ERROR(KN_CLIENT_CONSUMER, "isolation.level", "READ_COMMITTED", "read_committed, read_uncommitted");
    EXPECT_ERROR(KN_CLIENT_CONSUMER, "auto.offset.reset", "smallest", "auto.offset.reset", "latest, earliest, none");
    EXPECT_ERROR(KN_CLIENT_CONSUMER, "auto.offset.reset", "by_duration:-PT1H", "auto.offset.reset");
    EXPECT_ERROR(KN_CLIENT_CONSUMER, "auto.offset.reset", "by_duration:P1H", "auto.offset.reset");
    EXPECT_ERROR(KN_CLIENT_CONSUMER, "auto.offset.reset", "by_duration:", "auto.offset.reset");
    EXPECT_ERROR(KN_CLIENT_CONSUMER, "auto.offset.reset", "EARLIEST", "auto.offset.reset");
    EXPECT_ERROR(KN_CLIENT_CONSUMER, "auto.offset.reset", "By_Duration:PT1H", "auto.offset.reset");
    EXPECT_ERROR(KN_CLIENT_CONSUMER, "auto.offset.reset", "by_duration:PT1H2D", "auto.offset.reset");
    EXPECT_ERROR(KN_CLIENT_CONSUMER, "auto.offset.reset", "by_duration:P1DT", "auto.offset.reset");
    EXPECT_ERROR(KN_CLIENT_CONSUMER, "share.acknowledgement.mode", "IMPLICIT", "implicit, explicit");
    EXPECT_ERROR(KN_CLIENT_CONSUMER, "sasl.oauthbearer.assertion.claim.exp.seconds", "86401", "[0, 86400]");
    EXPECT_ERROR(KN_CLIENT_CONSUMER, "group.protocol", "new", "classic, consumer");
    EXPECT_ERROR(KN_CLIENT_ADMIN, "security.protocol", "TLS", "PLAINTEXT, SSL, SASL_PLAINTEXT, SASL_SSL");
    /* Lists: empty items are mistakes. */
    EXPECT_ERROR(KN_CLIENT_PRODUCER, "bootstrap.servers", "a:1,,b:2", "bootstrap.servers", "empty item");
    EXPECT_ERROR(KN_CLIENT_PRODUCER, "bootstrap.servers", "a:1,", "empty item");
    EXPECT_ERROR(KN_CLIENT_PRODUCER, "bootstrap.servers", "a:1, b:2 ,a:1", "bootstrap.servers", "\"a:1\" is listed twice");
    EXPECT_ERROR(KN_CLIENT_CONSUMER, "partition.assignment.strategy",
                 "org.apache.kafka.clients.consumer.RangeAssignor,org.apache.kafka.clients.consumer.RangeAssignor",
                 "listed twice");
}

static void test_value_forms(void **state) {
    kn_conf *c = kn_conf_new(KN_CLIENT_CONSUMER);
    /* Booleans any case, trimmed; numbers trimmed and canonical. */
    set_ok(c, "enable.auto.commit", " FALSE ");
    check_value(c, "enable.auto.commit", "false");
    assert_int_equal(kn_conf_get_bool(c, "enable.auto.commit"), 0);
    set_ok(c, "check.crcs", "True");
    assert_int_equal(kn_conf_get_bool(c, "check.crcs"), 1);
    set_ok(c, "fetch.min.bytes", " +042 ");
    check_value(c, "fetch.min.bytes", "42");
    assert_int_equal(kn_conf_get_int(c, "fetch.min.bytes"), 42);
    set_ok(c, "max.poll.interval.ms", "2147483647");
    assert_int_equal(kn_conf_get_int(c, "max.poll.interval.ms"), 2147483647);
    set_ok(c, "metadata.max.age.ms", "9223372036854775807");
    assert_true(kn_conf_get_int(c, "metadata.max.age.ms") == INT64_MAX);
    set_ok(c, "send.buffer.bytes", "-1");
    assert_int_equal(kn_conf_get_int(c, "send.buffer.bytes"), -1);
    /* Case-insensitive enums come back in the catalog's spelling. */
    set_ok(c, "security.protocol", "sasl_ssl");
    assert_string_equal(kn_conf_get_str(c, "security.protocol"), "SASL_SSL");
    set_ok(c, "group.protocol", "CONSUMER");
    assert_string_equal(kn_conf_get_str(c, "group.protocol"), "consumer");
    set_ok(c, "auto.offset.reset", " earliest ");
    assert_string_equal(kn_conf_get_str(c, "auto.offset.reset"), "earliest");
    set_ok(c, "auto.offset.reset", "by_duration:P1DT2H30M1.5S");
    assert_string_equal(kn_conf_get_str(c, "auto.offset.reset"), "by_duration:P1DT2H30M1.5S");
    set_ok(c, "auto.offset.reset", "by_duration:pt0s");
    set_ok(c, "sasl.oauthbearer.assertion.algorithm", "es256");
    assert_string_equal(kn_conf_get_str(c, "sasl.oauthbearer.assertion.algorithm"), "ES256");
    /* Strings trimmed like Java; doubles canonical. */
    set_ok(c, "group.id", "  my-group\t");
    assert_string_equal(kn_conf_get_str(c, "group.id"), "my-group");
    set_ok(c, "sasl.login.refresh.window.factor", "0.50");
    check_value(c, "sasl.login.refresh.window.factor", "0.5");
    assert_true(kn_conf_get_double(c, "sasl.login.refresh.window.factor") == 0.5);
    /* Passwords are trimmed like other strings (Java 4.x). */
    set_ok(c, "ssl.key.password", " s3cret ");
    assert_string_equal(kn_conf_get_str(c, "ssl.key.password"), "s3cret");
    /* Lists: trimmed items. */
    set_ok(c, "bootstrap.servers", " a:1 ,b:2,  c:3 ");
    check_value(c, "bootstrap.servers", "a:1,b:2,c:3");
    char **items;
    int n;
    assert_int_equal(kn_conf_get_list(c, "bootstrap.servers", &items, &n), KN_OK);
    assert_int_equal(n, 3);
    assert_string_equal(items[0], "a:1");
    assert_string_equal(items[2], "c:3");
    assert_null(items[3]);
    kn_conf_list_free(items, n);
    set_ok(c, "ssl.cipher.suites", "");
    assert_int_equal(kn_conf_get_list(c, "ssl.cipher.suites", &items, &n), KN_OK);
    assert_int_equal(n, 0);
    kn_conf_list_free(items, n);
    /* NULL resets to the default and forgets the explicit set. */
    assert_true(kn_conf_is_set(c, "group.id"));
    set_ok(c, "group.id", NULL);
    assert_false(kn_conf_is_set(c, "group.id"));
    assert_null(kn_conf_get_str(c, "group.id"));
    kn_conf_destroy(c);
}

static void test_class_keys(void **state) {
    kn_conf *p = kn_conf_new(KN_CLIENT_PRODUCER);
    set_ok(p, "key.serializer", "org.apache.kafka.common.serialization.StringSerializer");
    set_ok(p, "value.serializer", " org.apache.kafka.common.serialization.ByteArraySerializer ");
    assert_string_equal(kn_conf_get_str(p, "value.serializer"),
                        "org.apache.kafka.common.serialization.ByteArraySerializer");
    /* The Java defaults are accepted silently. */
    set_ok(p, "metric.reporters", "org.apache.kafka.common.metrics.JmxReporter");
    set_ok(p, "metric.reporters", "");
    set_ok(p, "interceptor.classes", "");
    set_ok(p, "partitioner.class", "");
    assert_null(kn_conf_get_str(p, "partitioner.class"));
    set_ok(p, "sasl.oauthbearer.jwt.retriever.class",
           "org.apache.kafka.common.security.oauthbearer.DefaultJwtRetriever");
    kn_conf_destroy(p);

    EXPECT_ERROR(KN_CLIENT_PRODUCER, "partitioner.class", "org.apache.kafka.clients.producer.RoundRobinPartitioner",
                 "partitioner.class", "leave it unset");
    EXPECT_ERROR(KN_CLIENT_PRODUCER, "key.serializer", "org.apache.kafka.common.serialization.LongSerializer",
                 "key.serializer", "supports only", "org.apache.kafka.common.serialization.StringSerializer");
    EXPECT_ERROR(KN_CLIENT_CONSUMER, "interceptor.classes", "com.example.Audit", "interceptor.classes");
    EXPECT_ERROR(KN_CLIENT_CONSUMER, "partition.assignment.strategy",
                 "org.apache.kafka.clients.consumer.RangeAssignor,com.example.Mine", "\"com.example.Mine\"",
                 "org.apache.kafka.clients.consumer.CooperativeStickyAssignor");
    EXPECT_ERROR(KN_CLIENT_ADMIN, "metric.reporters", "com.example.Prometheus", "metric.reporters",
                 "org.apache.kafka.common.metrics.JmxReporter");
    EXPECT_ERROR(KN_CLIENT_ADMIN, "sasl.login.callback.handler.class", "com.example.Handler",
                 "sasl.login.callback.handler.class");
    EXPECT_ERROR(KN_CLIENT_ADMIN, "config.providers", "file", "config.providers");
}

static void test_unknown_keys(void **state) {
    EXPECT_ERROR(KN_CLIENT_CONSUMER, "bootstrap.server", "x",
                 "unknown configuration key \"bootstrap.server\" for a consumer (did you mean \"bootstrap.servers\"?)");
    EXPECT_ERROR(KN_CLIENT_CONSUMER, "gruop.id", "x", "did you mean \"group.id\"?");
    EXPECT_ERROR(KN_CLIENT_PRODUCER, "linger.sm", "x", "did you mean \"linger.ms\"?");
    EXPECT_ERROR(KN_CLIENT_PRODUCER, "enable.idempotency", "x", "did you mean \"enable.idempotence\"?");
    EXPECT_ERROR(KN_CLIENT_CONSUMER, "linger.ms", "5", "linger.ms is a producer setting");
    EXPECT_ERROR(KN_CLIENT_PRODUCER, "group.id", "g", "group.id is a consumer setting");
    EXPECT_ERROR(KN_CLIENT_PRODUCER, "default.api.timeout.ms", "1", "is a consumer and admin client setting");
    EXPECT_ERROR(KN_CLIENT_ADMIN, "acks", "1", "for an admin client", "acks is a producer setting");
    EXPECT_ERROR(KN_CLIENT_CONSUMER, "lingr.ms", "5", "\"linger.ms\" is close, but it is not a consumer setting");
    /* Far from everything: no suggestion. */
    char err[512];
    kn_conf *c = kn_conf_new(KN_CLIENT_CONSUMER);
    assert_int_equal(kn_conf_set(c, "completely.unrelated.setting.name", "1", err, sizeof(err)), KN_ERR__CONFIG);
    assert_null(strstr(err, "did you mean"));
    assert_int_equal(kn_conf_set(c, "", "1", err, sizeof(err)), KN_ERR__CONFIG);
    assert_int_equal(kn_conf_set(c, NULL, "1", err, sizeof(err)), KN_ERR__INVALID_ARG);
    /* conf unchanged by a failed set. */
    set_ok(c, "fetch.min.bytes", "7");
    assert_int_equal(kn_conf_set(c, "fetch.min.bytes", "-7", err, sizeof(err)), KN_ERR__CONFIG);
    assert_int_equal(kn_conf_get_int(c, "fetch.min.bytes"), 7);
    kn_conf_destroy(c);
    assert_null(kn_conf_new((kn_client_type)3));
}

static void test_get_sizes(void **state) {
    kn_conf *c = kn_conf_new(KN_CLIENT_CONSUMER);
    size_t n = 0;
    assert_int_equal(kn_conf_get(c, "auto.offset.reset", NULL, &n), KN_OK);
    assert_int_equal(n, 7);
    char small[4];
    n = sizeof(small);
    assert_int_equal(kn_conf_get(c, "auto.offset.reset", small, &n), KN_OK);
    assert_int_equal(n, 7);
    assert_string_equal(small, "lat");
    n = sizeof(small);
    assert_int_equal(kn_conf_get(c, "no.such", small, &n), KN_ERR__CONFIG);
    assert_int_equal(kn_conf_get(c, "linger.ms", small, &n), KN_ERR__CONFIG);
    kn_conf_destroy(c);
}

typedef struct dump_state {
    int count, user, saw_hidden, saw_secret, in_order;
    char last[128];
} dump_state;

static void dump_cb(const char *key, const char *value, int is_default, void *opaque) {
    dump_state *d = opaque;
    if (d->count && strcmp(d->last, key) >= 0)
        d->in_order = 0;
    snprintf(d->last, sizeof(d->last), "%s", key);
    d->count++;
    d->user += !is_default;
    if (value && strcmp(value, "[hidden]") == 0)
        d->saw_hidden++;
    if (value && strstr(value, "hunter2"))
        d->saw_secret++;
}

static void test_dump_and_dup(void **state) {
    kn_conf *p = kn_conf_new(KN_CLIENT_PRODUCER);
    set_ok(p, "sasl.jaas.config", "org.apache.kafka.common.security.plain.PlainLoginModule required "
                                  "username=\"u\" password=\"hunter2\";");
    set_ok(p, "linger.ms", "20");
    set_ok(p, "client.id", "original");
    kn_conf *d = kn_conf_dup(p);
    assert_non_null(d);
    set_ok(p, "client.id", "changed");
    check_value(d, "client.id", "original");
    check_value(d, "linger.ms", "20");
    assert_true(kn_conf_is_set(d, "linger.ms"));
    assert_false(kn_conf_is_set(d, "batch.size"));
    assert_int_equal(kn_conf_client_type(d), KN_CLIENT_PRODUCER);
    kn_conf_destroy(p);

    dump_state st = {.in_order = 1};
    assert_int_equal(kn_conf_dump(d, dump_cb, &st), KN_OK);
    assert_true(st.in_order);
    assert_int_equal(st.user, 3);
    assert_int_equal(st.saw_hidden, 1);
    assert_int_equal(st.saw_secret, 0);
    size_t producer_keys = 0;
    for (size_t i = 0; i < kn_conf_key_count(); i++)
        producer_keys += (kn_conf_key_at(i)->clients & KN_CLIENT_PRODUCER) != 0;
    assert_int_equal((size_t)st.count, producer_keys);
    /* kn_conf_get still returns the real password to the library. */
    char buf[256];
    size_t n = sizeof(buf);
    assert_int_equal(kn_conf_get(d, "sasl.jaas.config", buf, &n), KN_OK);
    assert_non_null(strstr(buf, "hunter2"));
    kn_conf_destroy(d);
    kn_conf_destroy(NULL);
    assert_null(kn_conf_dup(NULL));
    assert_int_equal(kn_conf_dump(NULL, dump_cb, &st), KN_ERR__INVALID_ARG);
}

/* ---- allocation failures: every allocation may fail; the API reports
 * KN_ERR__NOMEM / NULL and leaks nothing (ASan checks the leaks). ---- */

static long alloc_budget = -1;
static void *failing_malloc(size_t size) {
    if (alloc_budget == 0)
        return NULL;
    if (alloc_budget > 0)
        alloc_budget--;
    return malloc(size);
}
static void *failing_realloc(void *p, size_t size) {
    if (alloc_budget == 0)
        return NULL;
    if (alloc_budget > 0)
        alloc_budget--;
    return realloc(p, size);
}

static char props_path[64];

static int run_scenario(void) {
    char err[256];
    kn_conf *c = kn_conf_new(KN_CLIENT_CONSUMER);
    if (!c)
        return KN_ERR__NOMEM;
    int rc = kn_conf_load_properties(c, props_path, err, sizeof(err));
    if (!rc)
        rc = kn_conf_set(c, "bootstrap.servers", "a:1,b:2", err, sizeof(err));
    if (!rc)
        rc = kn_conf_set(c, "group.id", "g", err, sizeof(err));
    kn_conf *d = rc ? NULL : kn_conf_dup(c);
    if (!rc && !d)
        rc = KN_ERR__NOMEM;
    char **items = NULL;
    int n = 0;
    if (!rc)
        rc = kn_conf_get_list(d, "bootstrap.servers", &items, &n);
    if (!rc)
        rc = kn_conf_finalize(d, err, sizeof(err));
    kn_conf_list_free(items, n);
    kn_conf_destroy(d);
    kn_conf_destroy(c);
    return rc;
}

static void test_allocation_failures(void **state) {
    snprintf(props_path, sizeof(props_path), "/tmp/kn-test-alloc-%d-XXXXXX", (int)getpid());
    int fd = mkstemp(props_path);
    assert_true(fd >= 0);
    static const char props[] = "# alloc test\nclient.id = caf\\u00e9 \\\n   client\nfetch.min.bytes: 5\n";
    assert_int_equal(write(fd, props, sizeof(props) - 1), (ssize_t)(sizeof(props) - 1));
    close(fd);
    kn_allocator a = {failing_malloc, failing_realloc, NULL};
    kn_set_allocator(&a);
    int succeeded = 0;
    for (long budget = 0; budget < 200 && !succeeded; budget++) {
        alloc_budget = budget;
        int rc = run_scenario();
        if (rc == KN_OK)
            succeeded = 1;
        else
            assert_int_equal(rc, KN_ERR__NOMEM);
    }
    alloc_budget = -1;
    kn_set_allocator(NULL);
    unlink(props_path);
    assert_true(succeeded);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_catalog_sorted_and_complete),
        cmocka_unit_test(test_defaults_pass_own_validator),
        cmocka_unit_test(test_resolved_defaults),
        cmocka_unit_test(test_wrong_values_name_key_and_accepted),
        cmocka_unit_test(test_value_forms),
        cmocka_unit_test(test_class_keys),
        cmocka_unit_test(test_unknown_keys),
        cmocka_unit_test(test_get_sizes),
        cmocka_unit_test(test_dump_and_dup),
        cmocka_unit_test(test_allocation_failures),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
