/*
 * test_config_finalize.c: kn_conf_finalize's cross-key rules, each
 * checked both ways (the error when the user's explicit settings
 * conflict, the silent adjustment where Java adjusts a default).
 */
#include "kn_test.h"

#include <stdio.h>
#include <string.h>

#include "config/config.h"

/* A conf of type with the given key=value pairs set (NULL-terminated). */
static kn_conf *make(kn_client_type type, const char *const *kv) {
    kn_conf *conf = kn_conf_new(type);
    assert_non_null(conf);
    char err[512];
    for (size_t i = 0; kv[i]; i += 2)
        if (kn_conf_set(conf, kv[i], kv[i + 1], err, sizeof(err)) != KN_OK)
            fail_msg("%s=%s: %s", kv[i], kv[i + 1], err);
    return conf;
}

static void finalize_ok(kn_conf *conf) {
    char err[512] = "";
    int rc = kn_conf_finalize(conf, err, sizeof(err));
    if (rc != KN_OK)
        fail_msg("finalize: %d %s", rc, err);
}

static void finalize_fails(kn_client_type type, const char *const *kv, const char *want) {
    kn_conf *conf = make(type, kv);
    char err[512] = "";
    assert_int_equal(kn_conf_finalize(conf, err, sizeof(err)), KN_ERR__CONFIG);
    if (!strstr(err, want))
        fail_msg("error \"%s\" lacks \"%s\"", err, want);
    kn_conf_destroy(conf);
}

#define KV(...) ((const char *const[]){__VA_ARGS__, NULL})
#define BOOT "bootstrap.servers", "localhost:9092"

static void test_bootstrap(void **state) {
    finalize_fails(KN_CLIENT_PRODUCER, KV("linger.ms", "1"),
                   "missing required configuration \"bootstrap.servers\" which has no default value");
    finalize_fails(KN_CLIENT_CONSUMER, KV("bootstrap.servers", ""), "no bootstrap urls");
    finalize_fails(KN_CLIENT_CONSUMER, KV("bootstrap.servers", "localhost"), "invalid url in bootstrap.servers: \"localhost\"");
    finalize_fails(KN_CLIENT_CONSUMER, KV("bootstrap.servers", "a:1,b:99999"), "\"b:99999\"");
    finalize_fails(KN_CLIENT_CONSUMER, KV("bootstrap.servers", "a:1,b c:2"), "\"b c:2\"");
    kn_conf *c = make(KN_CLIENT_CONSUMER, KV("bootstrap.servers", "a.example:9092,[::1]:9093,10.0.0.1:1,PLAINTEXT://h:2"));
    finalize_ok(c);
    kn_conf_destroy(c);
    /* Admin: servers or controllers, exactly one. */
    finalize_fails(KN_CLIENT_ADMIN, KV("client.id", "x"), "either bootstrap.servers or bootstrap.controllers");
    finalize_fails(KN_CLIENT_ADMIN, KV(BOOT, "bootstrap.controllers", "c:9093"),
                   "cannot set both bootstrap.servers and bootstrap.controllers");
    finalize_fails(KN_CLIENT_ADMIN, KV("bootstrap.controllers", "c"), "invalid url in bootstrap.controllers");
    kn_conf *a = make(KN_CLIENT_ADMIN, KV("bootstrap.controllers", "c:9093"));
    finalize_ok(a);
    kn_conf_destroy(a);
}

static void test_idempotence_rules(void **state) {
    /* Defaults: idempotent, acks=all. */
    kn_conf *p = make(KN_CLIENT_PRODUCER, KV(BOOT));
    finalize_ok(p);
    assert_int_equal(kn_conf_get_bool(p, "enable.idempotence"), 1);
    kn_conf_destroy(p);

    /* A conflicting setting quietly turns the default idempotence off. */
    const char *const *conflicts[] = {KV(BOOT, "acks", "1"), KV(BOOT, "acks", "0"), KV(BOOT, "retries", "0"),
                                      KV(BOOT, "acks", "1", "max.in.flight.requests.per.connection", "5")};
    for (size_t i = 0; i < sizeof(conflicts) / sizeof(conflicts[0]); i++) {
        p = make(KN_CLIENT_PRODUCER, conflicts[i]);
        finalize_ok(p);
        assert_int_equal(kn_conf_get_bool(p, "enable.idempotence"), 0);
        assert_false(kn_conf_is_set(p, "enable.idempotence"));
        kn_conf_destroy(p);
    }
    /* acks=-1 is acks=all. */
    p = make(KN_CLIENT_PRODUCER, KV(BOOT, "acks", "-1", "enable.idempotence", "true"));
    finalize_ok(p);
    assert_int_equal(kn_conf_get_bool(p, "enable.idempotence"), 1);
    kn_conf_destroy(p);

    /* Explicit idempotence with a conflict is an error naming the key. */
    finalize_fails(KN_CLIENT_PRODUCER, KV(BOOT, "enable.idempotence", "true", "acks", "1"),
                   "must set acks to all in order to use the idempotent producer");
    finalize_fails(KN_CLIENT_PRODUCER, KV(BOOT, "enable.idempotence", "true", "retries", "0"),
                   "must set retries to non-zero");
    finalize_fails(KN_CLIENT_PRODUCER,
                   KV(BOOT, "enable.idempotence", "true", "max.in.flight.requests.per.connection", "6"),
                   "max.in.flight.requests.per.connection must be set to at most 5 (current value 6)");
    /* Java 4.x: more than 5 in flight is an error even with idempotence
     * only on by default, and even when acks=1 would turn it off. */
    finalize_fails(KN_CLIENT_PRODUCER, KV(BOOT, "max.in.flight.requests.per.connection", "6"), "at most 5");
    finalize_fails(KN_CLIENT_PRODUCER, KV(BOOT, "acks", "1", "max.in.flight.requests.per.connection", "10"),
                   "at most 5");
    p = make(KN_CLIENT_PRODUCER, KV(BOOT, "enable.idempotence", "false", "max.in.flight.requests.per.connection", "10"));
    finalize_ok(p);
    kn_conf_destroy(p);
    /* Explicitly off: anything goes, but no transactions. */
    p = make(KN_CLIENT_PRODUCER, KV(BOOT, "enable.idempotence", "false", "acks", "1", "retries", "0"));
    finalize_ok(p);
    kn_conf_destroy(p);
    finalize_fails(KN_CLIENT_PRODUCER, KV(BOOT, "enable.idempotence", "false", "transactional.id", "tx"),
                   "cannot set a transactional.id without also enabling idempotence");
    finalize_fails(KN_CLIENT_PRODUCER, KV(BOOT, "acks", "1", "transactional.id", "tx"),
                   "transactional.id without also enabling idempotence");
    p = make(KN_CLIENT_PRODUCER, KV(BOOT, "transactional.id", "tx"));
    finalize_ok(p);
    kn_conf_destroy(p);

    /* Two-phase commit: transactions never expire, so no timeout. */
    finalize_fails(KN_CLIENT_PRODUCER,
                   KV(BOOT, "transactional.id", "tx", "transaction.two.phase.commit.enable", "true",
                      "transaction.timeout.ms", "60000"),
                   "cannot set transaction.timeout.ms when transaction.two.phase.commit.enable is set to true");
    p = make(KN_CLIENT_PRODUCER, KV(BOOT, "transactional.id", "tx", "transaction.two.phase.commit.enable", "true"));
    finalize_ok(p);
    kn_conf_destroy(p);
}

static void test_delivery_timeout(void **state) {
    finalize_fails(KN_CLIENT_PRODUCER,
                   KV(BOOT, "delivery.timeout.ms", "30000", "linger.ms", "100", "request.timeout.ms", "30000"),
                   "delivery.timeout.ms should be equal to or larger than linger.ms + request.timeout.ms");
    /* Equal is fine. */
    kn_conf *p = make(KN_CLIENT_PRODUCER,
                      KV(BOOT, "delivery.timeout.ms", "30100", "linger.ms", "100", "request.timeout.ms", "30000"));
    finalize_ok(p);
    kn_conf_destroy(p);
    /* Not set explicitly: raised to the floor, like Java. */
    p = make(KN_CLIENT_PRODUCER, KV(BOOT, "linger.ms", "1000", "request.timeout.ms", "200000"));
    finalize_ok(p);
    assert_int_equal(kn_conf_get_int(p, "delivery.timeout.ms"), 201000);
    assert_false(kn_conf_is_set(p, "delivery.timeout.ms"));
    kn_conf_destroy(p);
    /* The sum saturates at Integer.MAX_VALUE instead of overflowing. */
    p = make(KN_CLIENT_PRODUCER, KV(BOOT, "linger.ms", "9223372036854775807"));
    finalize_ok(p);
    assert_int_equal(kn_conf_get_int(p, "delivery.timeout.ms"), 2147483647);
    kn_conf_destroy(p);
}

static void test_consumer_rules(void **state) {
    finalize_fails(KN_CLIENT_CONSUMER,
                   KV(BOOT, "group.id", "g", "group.protocol", "consumer", "session.timeout.ms", "10000"),
                   "session.timeout.ms cannot be set when group.protocol=CONSUMER");
    finalize_fails(KN_CLIENT_CONSUMER,
                   KV(BOOT, "group.id", "g", "group.protocol", "CONSUMER", "heartbeat.interval.ms", "1000",
                      "partition.assignment.strategy", "org.apache.kafka.clients.consumer.RangeAssignor"),
                   "partition.assignment.strategy, heartbeat.interval.ms cannot be set when group.protocol=CONSUMER");
    kn_conf *c = make(KN_CLIENT_CONSUMER,
                      KV(BOOT, "group.id", "g", "group.protocol", "consumer", "group.remote.assignor", "uniform"));
    finalize_ok(c);
    kn_conf_destroy(c);
    finalize_fails(KN_CLIENT_CONSUMER, KV(BOOT, "group.id", "g", "group.remote.assignor", "uniform"),
                   "group.remote.assignor cannot be set when group.protocol=CLASSIC");
    /* share.* settings belong to share consumers only. */
    finalize_fails(KN_CLIENT_CONSUMER, KV(BOOT, "group.id", "g", "share.acknowledgement.mode", "explicit"),
                   "share.acknowledgement.mode cannot be set when group.protocol=CLASSIC");
    finalize_fails(KN_CLIENT_CONSUMER,
                   KV(BOOT, "group.id", "g", "group.protocol", "consumer", "share.acquire.mode", "record_limit"),
                   "share.acquire.mode cannot be set when group.protocol=CONSUMER");
    /* Blank values count as unset, as in Java. */
    c = make(KN_CLIENT_CONSUMER, KV(BOOT, "group.id", "g", "group.remote.assignor", " "));
    finalize_ok(c);
    kn_conf_destroy(c);

    /* No group.id: auto-commit off by default, an error if asked for. */
    c = make(KN_CLIENT_CONSUMER, KV(BOOT));
    finalize_ok(c);
    assert_int_equal(kn_conf_get_bool(c, "enable.auto.commit"), 0);
    kn_conf_destroy(c);
    finalize_fails(KN_CLIENT_CONSUMER, KV(BOOT, "enable.auto.commit", "true"),
                   "enable.auto.commit cannot be set to true when default group id (null) is used");
    c = make(KN_CLIENT_CONSUMER, KV(BOOT, "group.id", "g"));
    finalize_ok(c);
    assert_int_equal(kn_conf_get_bool(c, "enable.auto.commit"), 1);
    kn_conf_destroy(c);

    finalize_fails(KN_CLIENT_CONSUMER, KV(BOOT, "group.id", "g", "group.instance.id", "bad id"),
                   "group.instance.id \"bad id\" is illegal");
    finalize_fails(KN_CLIENT_CONSUMER, KV(BOOT, "group.id", "g", "group.instance.id", ".."), "is illegal");
    c = make(KN_CLIENT_CONSUMER, KV(BOOT, "group.id", "g", "group.instance.id", "host-1.a_b"));
    finalize_ok(c);
    kn_conf_destroy(c);

    finalize_fails(KN_CLIENT_CONSUMER,
                   KV(BOOT, "group.id", "g", "heartbeat.interval.ms", "45000", "session.timeout.ms", "45000"),
                   "heartbeat.interval.ms (45000) must be lower than session.timeout.ms (45000)");
}

static void test_common_rules(void **state) {
    finalize_fails(KN_CLIENT_ADMIN, KV(BOOT, "security.protocol", "sasl_plaintext", "sasl.mechanism", ""),
                   "sasl.mechanism must be a non-empty string when security.protocol is SASL_PLAINTEXT");
    kn_conf *a = make(KN_CLIENT_ADMIN, KV(BOOT, "security.protocol", "SASL_SSL", "sasl.mechanism", "PLAIN"));
    finalize_ok(a);
    kn_conf_destroy(a);
    /* Only the initial reconnect backoff set: the maximum follows it. */
    kn_conf *p = make(KN_CLIENT_PRODUCER, KV(BOOT, "reconnect.backoff.ms", "250"));
    finalize_ok(p);
    assert_int_equal(kn_conf_get_int(p, "reconnect.backoff.max.ms"), 250);
    /* Finalizing twice changes nothing. */
    finalize_ok(p);
    assert_int_equal(kn_conf_get_int(p, "reconnect.backoff.max.ms"), 250);
    kn_conf_destroy(p);
    p = make(KN_CLIENT_PRODUCER, KV(BOOT, "reconnect.backoff.ms", "250", "reconnect.backoff.max.ms", "5000"));
    finalize_ok(p);
    assert_int_equal(kn_conf_get_int(p, "reconnect.backoff.max.ms"), 5000);
    kn_conf_destroy(p);
    char err[64];
    assert_int_equal(kn_conf_finalize(NULL, err, sizeof(err)), KN_ERR__INVALID_ARG);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_bootstrap),        cmocka_unit_test(test_idempotence_rules),
        cmocka_unit_test(test_delivery_timeout), cmocka_unit_test(test_consumer_rules),
        cmocka_unit_test(test_common_rules),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
