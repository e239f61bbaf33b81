/*
 * it_oauthbearer.c: SASL OAUTHBEARER (unsecured JWS login) against the
 * real broker's secured listeners, whose default validator accepts
 * unsigned tokens with a sub claim and an unexpired exp
 * (tools/kafka/README.md):
 *  - produce and consume as a group member with commits over SASL_SSL
 *    as principal alice, with an extension in the client first message;
 *  - an expired token (unsecuredLoginLifetimeSeconds=-60): the broker's
 *    RFC 7628 JSON error round, then KN_ERR__AUTHENTICATION naming the
 *    broker's status within 2 s, and no reconnect;
 *  - over REAUTH (sessions of 10 s) with 15 s tokens: a producer and a
 *    group member through several KIP-368 re-authentications, each with
 *    a fresh token, nothing lost, duplicated or reordered.
 * Without the listeners: skipped (exit 77), or failed when
 * KN_TEST_REQUIRE_SECURE=1.
 */
#include "kn_test.h"
#include "secure.h"

#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "kafka_native.h"

#define MODULE "org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule"

static kn_conf *ob_conf(kn_client_type type, const char *bootstrap, const char *jaas_opts) {
    kn_conf *conf = kn_conf_new(type);
    char jaas[512];
    snprintf(jaas, sizeof jaas, MODULE " required %s;", jaas_opts);
    kn_test_conf_set(conf, "bootstrap.servers", bootstrap);
    kn_test_conf_set(conf, "security.protocol", "SASL_SSL");
    kn_secure_conf_trust(conf);
    kn_test_conf_set(conf, "sasl.mechanism", "OAUTHBEARER");
    kn_test_conf_set(conf, "sasl.jaas.config", jaas);
    return conf;
}

static void test_roundtrip_sasl_ssl(void **state) {
    (void)state;
    const char *bs = kn_secure_env("KAFKA_BOOTSTRAP_SASL_SSL");
    char t[128], group[160];
    snprintf(t, sizeof t, "%s", kn_test_topic("oauthbearer"));
    snprintf(group, sizeof group, "%s-group", t);
    kn_test_create_topic(t, 1);
    const char *opts =
        "unsecuredLoginStringClaim_sub=\"alice\" unsecuredLoginListClaim_scope=\",read,write\" "
        "unsecuredLoginExtension_traceId=\"kn-test\"";
    kn_conf *pc = ob_conf(KN_CLIENT_PRODUCER, bs, opts);
    kn_conf *cc = ob_conf(KN_CLIENT_CONSUMER, bs, opts);
    kn_secure_roundtrip(pc, cc, t, group, 0, 200);
    kn_conf_destroy(pc);
    kn_conf_destroy(cc);
}

/* An expired token: Kafka's validator answers the first message with
 * {"status":"invalid_token"}, we answer %x01, the broker fails the
 * exchange: fatal KN_ERR__AUTHENTICATION carrying that status. */
static void test_expired_token_fails_fast(void **state) {
    (void)state;
    kn_conf *conf = ob_conf(KN_CLIENT_PRODUCER, kn_secure_env("KAFKA_BOOTSTRAP_SASL_SSL"),
                            "unsecuredLoginStringClaim_sub=\"alice\" unsecuredLoginLifetimeSeconds=\"-60\"");
    char es[512];
    int64_t took;
    kn_producer *p = kn_secure_denied_send(conf, "kn-test-oauthbearer-denied", es, sizeof es, &took);
    if (!strstr(es, "invalid_token") || !strstr(es, "OAUTHBEARER"))
        fail_msg("message does not carry the broker's status: %s", es);
    /* The token is a credential: never in the message. */
    assert_null(strstr(es, "eyJ"));
    fprintf(stderr, "  expired token failed in %lld ms: %s\n", (long long)took, es);
    assert_int_equal(kn_producer_flush(p, 5000), KN_ERR__AUTHENTICATION);
    kn_producer_stats s1 = {.size = sizeof s1}, s2 = {.size = sizeof s2};
    kn_producer_get_stats(p, &s1);
    sleep(2);
    kn_producer_get_stats(p, &s2);
    assert_int_equal(s1.connects, 1);
    assert_int_equal(s2.connects, s1.connects);
    assert_int_equal(kn_producer_close(p, 1000), KN_ERR__AUTHENTICATION);
    kn_producer_destroy(p);
}

/* REAUTH: 10 s sessions, 15 s tokens. A token made once would expire
 * by the second re-authentication; each exchange makes a fresh one. */
#define REAUTH_OPTS "unsecuredLoginStringClaim_sub=\"alice\" unsecuredLoginLifetimeSeconds=\"15\""

static kn_conf *reauth_producer_conf(void *bootstrap) {
    return ob_conf(KN_CLIENT_PRODUCER, bootstrap, REAUTH_OPTS);
}

static void test_reauth_fresh_tokens(void **state) {
    (void)state;
    const char *bs = kn_secure_env("KAFKA_BOOTSTRAP_REAUTH");
    char t[128], group[160];
    snprintf(t, sizeof t, "%s", kn_test_topic("oauthbearer-reauth"));
    snprintf(group, sizeof group, "%s-group", t);
    kn_test_create_topic(t, 1);
    kn_conf *cc = ob_conf(KN_CLIENT_CONSUMER, bs, REAUTH_OPTS);
    kn_consumer *c = kn_secure_group_consumer(cc, group, t);
    kn_conf_destroy(cc);
    kn_secure_prod pt = {.make_conf = reauth_producer_conf,
                         .ctx = (void *)bs,
                         .topic = t,
                         .run_ms = 35000,
                         .burst = 10,
                         .pause_ms = 50};
    int next = kn_secure_consume_while_producing(c, &pt, 80000, 40000, 0);
    kn_consumer_stats cs = {.size = sizeof cs};
    kn_consumer_get_stats(c, &cs);
    fprintf(stderr, "  produced %d, consumed %d; re-authentications: producer %lld, consumer %lld\n", pt.sent,
            next, (long long)pt.stats.reauthentications, (long long)cs.reauthentications);
    assert_int_equal(atomic_load(&pt.st.ok), pt.sent);
    assert_int_equal(atomic_load(&pt.st.failed), 0);
    assert_int_equal(next, pt.sent);
    assert_true(pt.stats.reauthentications >= 2);
    assert_true(cs.reauthentications >= 2);
    assert_int_equal(pt.stats.connect_failures, 0);
    assert_int_equal(cs.connect_failures, 0);
    assert_int_equal(kn_consumer_commit_sync(c, NULL, 10000), KN_OK);
    assert_int_equal(kn_consumer_close(c, -1), KN_OK);
    kn_consumer_destroy(c);
}

int main(void) {
    kn_test_bootstrap();
    static const char *const need[] = {"KAFKA_BOOTSTRAP_SASL_SSL", "KAFKA_BOOTSTRAP_REAUTH", "KN_TLS_DIR",
                                       NULL};
    int gate = kn_secure_need("it_oauthbearer", need);
    if (gate)
        return gate;
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_roundtrip_sasl_ssl),
        cmocka_unit_test(test_expired_token_fails_fast),
        cmocka_unit_test(test_reauth_fresh_tokens),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
