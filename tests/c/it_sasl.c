/*
 * it_sasl.c: SASL against the real broker's secured listeners
 * (tools/kafka/broker: KAFKA_BOOTSTRAP_SASL_PLAINTEXT, KAFKA_BOOTSTRAP_REAUTH,
 * user KN_SASL_USER / KN_SASL_PASSWORD):
 *  - produce and consume as a group member with commits over
 *    SASL_PLAINTEXT with PLAIN, SCRAM-SHA-256 and SCRAM-SHA-512;
 *  - a wrong password and an unknown user fail within 2 s with the
 *    broker's reason as KN_ERR__AUTHENTICATION from send / poll / flush,
 *    and the client does not reconnect (connects counted in its stats);
 *  - the round trip over SASL_SSL with SCRAM-SHA-256 and SCRAM-SHA-512;
 *  - over REAUTH (SASL_SSL, connections.max.reauth.ms=10000): a 60 s
 *    consume and an idempotent produce through several
 *    re-authentications, nothing lost, duplicated or reordered.
 * Without the listeners: skipped (exit 77), or failed when
 * KN_TEST_REQUIRE_SECURE=1.
 */
#include "kn_test.h"
#include "secure.h"

#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "kafka_native.h"

static void jaas_for(const char *mech, const char *user, const char *password, char *out, size_t n) {
    const char *module = !strcmp(mech, "PLAIN") ? "org.apache.kafka.common.security.plain.PlainLoginModule"
                                                : "org.apache.kafka.common.security.scram.ScramLoginModule";
    snprintf(out, n, "%s required username=\"%s\" password=\"%s\";", module, user, password);
}

static kn_conf *sasl_conf(kn_client_type type, const char *bootstrap, const char *proto, const char *mech,
                          const char *user, const char *password) {
    kn_conf *conf = kn_conf_new(type);
    char jaas[512];
    jaas_for(mech, user, password, jaas, sizeof jaas);
    kn_test_conf_set(conf, "bootstrap.servers", bootstrap);
    kn_test_conf_set(conf, "security.protocol", proto);
    kn_test_conf_set(conf, "sasl.mechanism", mech);
    kn_test_conf_set(conf, "sasl.jaas.config", jaas);
    return conf;
}

/* sasl_conf over SASL_SSL with the harness user, trusting the harness CA. */
static kn_conf *sasl_ssl_conf(kn_client_type type, const char *bs, const char *mech) {
    kn_conf *conf = sasl_conf(type, bs, "SASL_SSL", mech, kn_secure_env("KN_SASL_USER"),
                              kn_secure_env("KN_SASL_PASSWORD"));
    kn_secure_conf_trust(conf);
    return conf;
}

/* One produce + group consume round trip over proto (SASL_SSL: with the
 * harness CA as the PEM trust store). */
static void roundtrip_over(const char *bs, const char *proto, const char *mech) {
    const char *topic = kn_test_topic("sasl");
    char topic_copy[128], group[160];
    snprintf(topic_copy, sizeof topic_copy, "%s", topic);
    snprintf(group, sizeof group, "%s-group", topic_copy);
    kn_test_create_topic(topic_copy, 1);
    bool tls = !strcmp(proto, "SASL_SSL");
    kn_conf *pc = tls ? sasl_ssl_conf(KN_CLIENT_PRODUCER, bs, mech)
                      : sasl_conf(KN_CLIENT_PRODUCER, bs, proto, mech, kn_secure_env("KN_SASL_USER"),
                                  kn_secure_env("KN_SASL_PASSWORD"));
    kn_conf *cc = tls ? sasl_ssl_conf(KN_CLIENT_CONSUMER, bs, mech)
                      : sasl_conf(KN_CLIENT_CONSUMER, bs, proto, mech, kn_secure_env("KN_SASL_USER"),
                                  kn_secure_env("KN_SASL_PASSWORD"));
    kn_secure_roundtrip(pc, cc, topic_copy, group, 0, 200);
    kn_conf_destroy(pc);
    kn_conf_destroy(cc);
}

static void roundtrip(const char *mech) {
    roundtrip_over(kn_secure_env("KAFKA_BOOTSTRAP_SASL_PLAINTEXT"), "SASL_PLAINTEXT", mech);
}

static void test_sasl_ssl_scram256(void **state) {
    (void)state;
    if (!kn_secure_env("KAFKA_BOOTSTRAP_SASL_SSL") || !kn_secure_env("KN_TLS_DIR"))
        fail_msg("KAFKA_BOOTSTRAP_SASL_SSL / KN_TLS_DIR not set");
    roundtrip_over(kn_secure_env("KAFKA_BOOTSTRAP_SASL_SSL"), "SASL_SSL", "SCRAM-SHA-256");
}

static void test_sasl_ssl_scram512(void **state) {
    (void)state;
    if (!kn_secure_env("KAFKA_BOOTSTRAP_SASL_SSL") || !kn_secure_env("KN_TLS_DIR"))
        fail_msg("KAFKA_BOOTSTRAP_SASL_SSL / KN_TLS_DIR not set");
    roundtrip_over(kn_secure_env("KAFKA_BOOTSTRAP_SASL_SSL"), "SASL_SSL", "SCRAM-SHA-512");
}

static void test_plain_roundtrip(void **state) {
    (void)state;
    roundtrip("PLAIN");
}
static void test_scram256_roundtrip(void **state) {
    (void)state;
    roundtrip("SCRAM-SHA-256");
}
static void test_scram512_roundtrip(void **state) {
    (void)state;
    roundtrip("SCRAM-SHA-512");
}

/* A producer's first send with bad credentials: KN_ERR__AUTHENTICATION
 * with the broker's reason within 2 s, later calls the same, and no
 * new connection after the failure. */
static void producer_fails_fast(const char *mech, const char *user, const char *password,
                                const char *reason) {
    kn_conf *conf = sasl_conf(KN_CLIENT_PRODUCER, kn_secure_env("KAFKA_BOOTSTRAP_SASL_PLAINTEXT"),
                              "SASL_PLAINTEXT", mech, user, password);
    char es[512];
    int64_t took;
    kn_producer *p = kn_secure_denied_send(conf, "kn-test-sasl-denied", es, sizeof es, &took);
    if (!strstr(es, reason))
        fail_msg("message does not carry the broker's reason \"%s\": %s", reason, es);
    fprintf(stderr, "  %s failed in %lld ms: %s\n", mech, (long long)took, es);
    /* Later calls say the same, at once. */
    assert_int_equal(kn_producer_flush(p, 5000), KN_ERR__AUTHENTICATION);
    assert_int_equal(kn_producer_poll(p, 0), KN_ERR__AUTHENTICATION);
    char fe[512];
    assert_int_equal(kn_producer_fatal_error(p, fe, sizeof fe), KN_ERR__AUTHENTICATION);
    assert_non_null(strstr(fe, reason));
    kn_producer_stats s1 = {.size = sizeof s1}, s2 = {.size = sizeof s2};
    kn_producer_get_stats(p, &s1);
    sleep(2); /* several reconnect backoffs (50 ms .. 1 s) */
    kn_producer_get_stats(p, &s2);
    assert_int_equal(s1.connects, 1);
    assert_int_equal(s2.connects, s1.connects);
    assert_int_equal(s2.connect_failures, s1.connect_failures);
    assert_int_equal(kn_producer_close(p, 1000), KN_ERR__AUTHENTICATION);
    kn_producer_destroy(p);
}

static void test_wrong_password_plain(void **state) {
    (void)state;
    producer_fails_fast("PLAIN", kn_secure_env("KN_SASL_USER"), "not-the-password",
                        "Invalid username or password");
}

static void test_wrong_password_scram(void **state) {
    (void)state;
    producer_fails_fast("SCRAM-SHA-256", kn_secure_env("KN_SASL_USER"), "not-the-password",
                        "invalid credentials");
}

static void test_unknown_user_consumer(void **state) {
    (void)state;
    kn_conf *conf = sasl_conf(KN_CLIENT_CONSUMER, kn_secure_env("KAFKA_BOOTSTRAP_SASL_PLAINTEXT"),
                              "SASL_PLAINTEXT", "SCRAM-SHA-512", "nobody-here", "whatever");
    kn_test_conf_set(conf, "group.id", "kn-test-sasl-unknown");
    char es[512];
    kn_consumer *c = kn_consumer_new(conf, es, sizeof es);
    kn_conf_destroy(conf);
    assert_non_null(c);
    const char *topics[] = {"kn-test-sasl-denied"};
    int64_t t0 = kn_test_now_ms();
    assert_int_equal(kn_consumer_subscribe(c, topics, 1, NULL, NULL), KN_OK);
    kn_records *r = NULL;
    int rc = KN_OK;
    while (rc == KN_OK && kn_test_now_ms() - t0 < 5000) {
        rc = kn_consumer_poll(c, 5000, &r, es, sizeof es);
        kn_records_free(r);
        r = NULL;
    }
    int64_t took = kn_test_now_ms() - t0;
    if (rc != KN_ERR__AUTHENTICATION)
        fail_msg("poll: expected _AUTHENTICATION, got %s: %s", kn_err_name(rc), es);
    if (took > 2000)
        fail_msg("authentication failure took %lld ms (bound 2000)", (long long)took);
    if (!strstr(es, "invalid credentials") || !strstr(es, "SCRAM-SHA-512"))
        fail_msg("message does not carry the broker's reason: %s", es);
    fprintf(stderr, "  unknown user failed in %lld ms: %s\n", (long long)took, es);
    assert_int_equal(kn_consumer_poll(c, 0, &r, es, sizeof es), KN_ERR__AUTHENTICATION);
    kn_consumer_stats s1 = {.size = sizeof s1}, s2 = {.size = sizeof s2};
    kn_consumer_get_stats(c, &s1);
    sleep(2);
    kn_consumer_get_stats(c, &s2);
    assert_int_equal(s1.connects, 1);
    assert_int_equal(s2.connects, s1.connects);
    kn_consumer_close(c, -1);
    kn_consumer_destroy(c);
}

/* The admin client: its calls return the failure too, at once once it
 * is known. */
static void test_admin_wrong_password(void **state) {
    (void)state;
    kn_conf *conf =
        sasl_conf(KN_CLIENT_ADMIN, kn_secure_env("KAFKA_BOOTSTRAP_SASL_PLAINTEXT"), "SASL_PLAINTEXT",
                  "SCRAM-SHA-512", kn_secure_env("KN_SASL_USER"), "not-the-password");
    char es[512];
    kn_admin *a = kn_admin_new(conf, es, sizeof es);
    kn_conf_destroy(conf);
    assert_non_null(a);
    int64_t t0 = kn_test_now_ms();
    kn_topic_list *l = NULL;
    int rc = kn_admin_list_topics(a, 0, 30000, &l, es, sizeof es);
    int64_t took = kn_test_now_ms() - t0;
    if (rc != KN_ERR__AUTHENTICATION)
        fail_msg("list_topics: expected _AUTHENTICATION, got %s: %s", kn_err_name(rc), es);
    if (took > 2000)
        fail_msg("authentication failure took %lld ms (bound 2000)", (long long)took);
    assert_non_null(strstr(es, "invalid credentials"));
    t0 = kn_test_now_ms();
    assert_int_equal(kn_admin_list_topics(a, 0, 30000, &l, es, sizeof es), KN_ERR__AUTHENTICATION);
    assert_true(kn_test_now_ms() - t0 < 500);
    kn_admin_destroy(a);
}

/* KIP-368 on REAUTH (sessions of 10 s): an idempotent producer sends
 * for 40 s on its own thread while a group member consumes for 60 s;
 * every record arrives once and in order, and both clients went
 * through several re-authentications on their connections. */
static kn_conf *reauth_producer_conf(void *bootstrap) {
    return sasl_ssl_conf(KN_CLIENT_PRODUCER, bootstrap, "SCRAM-SHA-512");
}

static void test_reauth(void **state) {
    (void)state;
    const char *bs = kn_secure_env("KAFKA_BOOTSTRAP_REAUTH");
    const char *tls = kn_secure_env("KN_TLS_DIR");
    if (!bs || !tls)
        fail_msg("KAFKA_BOOTSTRAP_REAUTH / KN_TLS_DIR not set");
    char t[128], group[160];
    snprintf(t, sizeof t, "%s", kn_test_topic("reauth"));
    snprintf(group, sizeof group, "%s-group", t);
    kn_test_create_topic(t, 1);

    kn_conf *cc = sasl_ssl_conf(KN_CLIENT_CONSUMER, bs, "SCRAM-SHA-256");
    kn_consumer *c = kn_secure_group_consumer(cc, group, t);
    kn_conf_destroy(cc);

    /* bursts of 20, one every 20 ms: the pipeline stays busy; 60 s of
     * consuming, then until the producer's last record. */
    kn_secure_prod rp = {.make_conf = reauth_producer_conf,
                         .ctx = (void *)bs,
                         .topic = t,
                         .run_ms = 40000,
                         .burst = 20,
                         .pause_ms = 20};
    int next = kn_secure_consume_while_producing(c, &rp, 90000, 45000, 60000);
    fprintf(stderr, "  produced %d, consumed %d; producer: %lld re-authentications, %lld connects\n", rp.sent,
            next, (long long)rp.stats.reauthentications, (long long)rp.stats.connects);
    assert_int_equal(atomic_load(&rp.st.ok), rp.sent);
    assert_int_equal(atomic_load(&rp.st.failed), 0);
    assert_int_equal(next, rp.sent);
    assert_true(rp.stats.reauthentications >= 3);
    assert_int_equal(rp.stats.connect_failures, 0);
    assert_int_equal(kn_consumer_commit_sync(c, NULL, 10000), KN_OK);
    kn_consumer_stats cs = {.size = sizeof cs};
    kn_consumer_get_stats(c, &cs);
    fprintf(stderr, "  consumer: %lld re-authentications, %lld connects\n", (long long)cs.reauthentications,
            (long long)cs.connects);
    assert_true(cs.reauthentications >= 4);
    assert_int_equal(cs.connect_failures, 0);
    assert_int_equal(kn_consumer_close(c, -1), KN_OK);
    kn_consumer_destroy(c);
}

int main(void) {
    kn_test_bootstrap();
    static const char *const need[] = {"KAFKA_BOOTSTRAP_SASL_PLAINTEXT", "KN_SASL_USER", "KN_SASL_PASSWORD",
                                       NULL};
    int gate = kn_secure_need("it_sasl", need);
    if (gate)
        return gate;
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_plain_roundtrip),      cmocka_unit_test(test_scram256_roundtrip),
        cmocka_unit_test(test_scram512_roundtrip),   cmocka_unit_test(test_sasl_ssl_scram256),
        cmocka_unit_test(test_sasl_ssl_scram512),    cmocka_unit_test(test_wrong_password_plain),
        cmocka_unit_test(test_wrong_password_scram), cmocka_unit_test(test_unknown_user_consumer),
        cmocka_unit_test(test_admin_wrong_password), cmocka_unit_test(test_reauth),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
