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

#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "kafka_native.h"

#define MODULE "org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule"

static const char *env(const char *name) {
    const char *v = getenv(name);
    return v && *v ? v : NULL;
}

static kn_conf *ob_conf(kn_client_type type, const char *bootstrap, const char *jaas_opts) {
    kn_conf *conf = kn_conf_new(type);
    char jaas[512], ca[512];
    snprintf(jaas, sizeof jaas, MODULE " required %s;", jaas_opts);
    snprintf(ca, sizeof ca, "%s/ca.pem", env("KN_TLS_DIR"));
    kn_test_conf_set(conf, "bootstrap.servers", bootstrap);
    kn_test_conf_set(conf, "security.protocol", "SASL_SSL");
    kn_test_conf_set(conf, "ssl.truststore.type", "PEM");
    kn_test_conf_set(conf, "ssl.truststore.location", ca);
    kn_test_conf_set(conf, "sasl.mechanism", "OAUTHBEARER");
    kn_test_conf_set(conf, "sasl.jaas.config", jaas);
    return conf;
}

typedef struct dr_state {
    int ok, failed;
} dr_state;

static void on_dr(kn_producer *p, const kn_delivery *d, void *opaque) {
    (void)p;
    dr_state *st = opaque;
    if (kn_delivery_error(d))
        st->failed++;
    else
        st->ok++;
}

static void send_one(kn_producer *p, const char *topic, int i) {
    char v[32], es[512];
    int len = snprintf(v, sizeof v, "v%d", i);
    kn_record_out rec = KN_RECORD_OUT_INIT;
    rec.topic = topic;
    rec.partition = 0;
    rec.value = v;
    rec.value_len = (size_t)len;
    int rc = kn_producer_send(p, &rec, es, sizeof es);
    if (rc)
        fail_msg("send %d: %s: %s", i, kn_err_name(rc), es);
}

/* Checks records against v<*next>, v<*next+1>, ... */
static void check_records(kn_records *r, int *next) {
    for (size_t i = 0; i < kn_records_count(r); i++) {
        size_t len;
        const char *v = kn_records_value(r, i, &len);
        char want[32];
        int wl = snprintf(want, sizeof want, "v%d", *next);
        if ((size_t)wl != len || memcmp(v, want, len))
            fail_msg("record %d: got %.*s (lost, duplicated or reordered)", *next, (int)len, v);
        (*next)++;
    }
}

static void test_roundtrip_sasl_ssl(void **state) {
    (void)state;
    const char *bs = env("KAFKA_BOOTSTRAP_SASL_SSL");
    char t[128], group[160], es[512];
    snprintf(t, sizeof t, "%s", kn_test_topic("oauthbearer"));
    snprintf(group, sizeof group, "%s-group", t);
    kn_test_create_topic(t, 1);
    const char *opts = "unsecuredLoginStringClaim_sub=\"alice\" unsecuredLoginListClaim_scope=\",read,write\" "
                       "unsecuredLoginExtension_traceId=\"kn-test\"";
    kn_conf *pc = ob_conf(KN_CLIENT_PRODUCER, bs, opts);
    dr_state st = {0};
    kn_producer *p = kn_producer_new(pc, on_dr, &st, es, sizeof es);
    kn_conf_destroy(pc);
    if (!p)
        fail_msg("kn_producer_new: %s", es);
    for (int i = 0; i < 200; i++)
        send_one(p, t, i);
    assert_int_equal(kn_producer_flush(p, 30000), KN_OK);
    assert_int_equal(st.ok, 200);
    assert_int_equal(st.failed, 0);
    assert_int_equal(kn_producer_close(p, 5000), KN_OK);

    kn_conf *cc = ob_conf(KN_CLIENT_CONSUMER, bs, opts);
    kn_test_conf_set(cc, "group.id", group);
    kn_test_conf_set(cc, "auto.offset.reset", "earliest");
    kn_test_conf_set(cc, "enable.auto.commit", "false");
    kn_consumer *c = kn_consumer_new(cc, es, sizeof es);
    kn_conf_destroy(cc);
    if (!c)
        fail_msg("kn_consumer_new: %s", es);
    const char *topics[] = {t};
    assert_int_equal(kn_consumer_subscribe(c, topics, 1, NULL, NULL), KN_OK);
    int next = 0;
    int64_t deadline = kn_test_now_ms() + 60000;
    while (next < 200 && kn_test_now_ms() < deadline) {
        kn_records *r = NULL;
        int rc = kn_consumer_poll(c, 500, &r, es, sizeof es);
        if (rc)
            fail_msg("poll: %s: %s", kn_err_name(rc), es);
        check_records(r, &next);
        kn_records_free(r);
    }
    assert_int_equal(next, 200);
    assert_int_equal(kn_consumer_commit_sync(c, NULL, 10000), KN_OK);
    kn_consumer_stats cs;
    kn_consumer_get_stats(c, &cs);
    assert_int_equal(cs.connect_failures, 0);
    assert_int_equal(kn_consumer_close(c), KN_OK);
    kn_consumer_destroy(c);
}

/* An expired token: Kafka's validator answers the first message with
 * {"status":"invalid_token"}, we answer %x01, the broker fails the
 * exchange: fatal KN_ERR__AUTHENTICATION carrying that status. */
static void test_expired_token_fails_fast(void **state) {
    (void)state;
    kn_conf *conf = ob_conf(KN_CLIENT_PRODUCER, env("KAFKA_BOOTSTRAP_SASL_SSL"),
                            "unsecuredLoginStringClaim_sub=\"alice\" unsecuredLoginLifetimeSeconds=\"-60\"");
    char es[512];
    dr_state st = {0};
    int64_t t0 = kn_test_now_ms();
    kn_producer *p = kn_producer_new(conf, on_dr, &st, es, sizeof es);
    kn_conf_destroy(conf);
    assert_non_null(p);
    kn_record_out rec = KN_RECORD_OUT_INIT;
    rec.topic = "kn-test-oauthbearer-denied";
    rec.value = "x";
    rec.value_len = 1;
    int rc = kn_producer_send(p, &rec, es, sizeof es);
    int64_t took = kn_test_now_ms() - t0;
    if (rc != KN_ERR__AUTHENTICATION)
        fail_msg("send: expected _AUTHENTICATION, got %s: %s", kn_err_name(rc), es);
    if (took > 2000)
        fail_msg("authentication failure took %lld ms (bound 2000)", (long long)took);
    if (!strstr(es, "invalid_token") || !strstr(es, "OAUTHBEARER"))
        fail_msg("message does not carry the broker's status: %s", es);
    /* The token is a credential: never in the message. */
    assert_null(strstr(es, "eyJ"));
    fprintf(stderr, "  expired token failed in %lld ms: %s\n", (long long)took, es);
    assert_int_equal(kn_producer_flush(p, 5000), KN_ERR__AUTHENTICATION);
    kn_producer_stats s1, s2;
    kn_producer_get_stats(p, &s1);
    sleep(2);
    kn_producer_get_stats(p, &s2);
    assert_int_equal(s1.connects, 1);
    assert_int_equal(s2.connects, s1.connects);
    assert_int_equal(kn_producer_close(p, 1000), KN_ERR__AUTHENTICATION);
}

/* REAUTH: 10 s sessions, 15 s tokens. A token made once would expire
 * by the second re-authentication; each exchange makes a fresh one. */
typedef struct prod_thread {
    const char *bootstrap, *topic;
    int sent;
    dr_state st;
    kn_producer_stats stats;
    char err[512];
} prod_thread;

#define REAUTH_OPTS "unsecuredLoginStringClaim_sub=\"alice\" unsecuredLoginLifetimeSeconds=\"15\""

static void *producer_main(void *arg) {
    prod_thread *pt = arg;
    kn_conf *pc = ob_conf(KN_CLIENT_PRODUCER, pt->bootstrap, REAUTH_OPTS);
    kn_test_conf_set(pc, "enable.idempotence", "true");
    kn_test_conf_set(pc, "linger.ms", "5");
    kn_producer *p = kn_producer_new(pc, on_dr, &pt->st, pt->err, sizeof pt->err);
    kn_conf_destroy(pc);
    if (!p)
        return NULL;
    int64_t end = kn_test_now_ms() + 35000;
    while (kn_test_now_ms() < end) {
        for (int k = 0; k < 10; k++) {
            char v[32];
            int len = snprintf(v, sizeof v, "v%d", pt->sent);
            kn_record_out rec = KN_RECORD_OUT_INIT;
            rec.topic = pt->topic;
            rec.partition = 0;
            rec.value = v;
            rec.value_len = (size_t)len;
            if (kn_producer_send(p, &rec, pt->err, sizeof pt->err))
                goto out;
            pt->sent++;
        }
        kn_producer_poll(p, 50);
    }
    if (kn_producer_flush(p, 30000))
        snprintf(pt->err, sizeof pt->err, "flush timed out");
out:
    kn_producer_get_stats(p, &pt->stats);
    kn_producer_close(p, 5000);
    return NULL;
}

static void test_reauth_fresh_tokens(void **state) {
    (void)state;
    const char *bs = env("KAFKA_BOOTSTRAP_REAUTH");
    char t[128], group[160], es[512];
    snprintf(t, sizeof t, "%s", kn_test_topic("oauthbearer-reauth"));
    snprintf(group, sizeof group, "%s-group", t);
    kn_test_create_topic(t, 1);
    kn_conf *cc = ob_conf(KN_CLIENT_CONSUMER, bs, REAUTH_OPTS);
    kn_test_conf_set(cc, "group.id", group);
    kn_test_conf_set(cc, "auto.offset.reset", "earliest");
    kn_test_conf_set(cc, "enable.auto.commit", "false");
    kn_consumer *c = kn_consumer_new(cc, es, sizeof es);
    kn_conf_destroy(cc);
    if (!c)
        fail_msg("kn_consumer_new: %s", es);
    const char *topics[] = {t};
    assert_int_equal(kn_consumer_subscribe(c, topics, 1, NULL, NULL), KN_OK);
    prod_thread pt = {.bootstrap = bs, .topic = t};
    pthread_t th;
    assert_int_equal(pthread_create(&th, NULL, producer_main, &pt), 0);
    int next = 0;
    bool joined = false;
    int64_t t0 = kn_test_now_ms();
    while (kn_test_now_ms() - t0 < 80000) {
        kn_records *r = NULL;
        int rc = kn_consumer_poll(c, 200, &r, es, sizeof es);
        if (rc)
            fail_msg("poll at record %d: %s: %s", next, kn_err_name(rc), es);
        check_records(r, &next);
        kn_records_free(r);
        if (!joined && kn_test_now_ms() - t0 >= 40000) {
            pthread_join(th, NULL);
            joined = true;
        }
        if (joined && next >= pt.sent)
            break;
    }
    if (!joined)
        pthread_join(th, NULL);
    if (pt.err[0])
        fail_msg("producer: %s", pt.err);
    kn_consumer_stats cs;
    kn_consumer_get_stats(c, &cs);
    fprintf(stderr, "  produced %d, consumed %d; re-authentications: producer %lld, consumer %lld\n", pt.sent,
            next, (long long)pt.stats.reauthentications, (long long)cs.reauthentications);
    assert_int_equal(pt.st.ok, pt.sent);
    assert_int_equal(pt.st.failed, 0);
    assert_int_equal(next, pt.sent);
    assert_true(pt.stats.reauthentications >= 2);
    assert_true(cs.reauthentications >= 2);
    assert_int_equal(pt.stats.connect_failures, 0);
    assert_int_equal(cs.connect_failures, 0);
    assert_int_equal(kn_consumer_commit_sync(c, NULL, 10000), KN_OK);
    assert_int_equal(kn_consumer_close(c), KN_OK);
    kn_consumer_destroy(c);
}

int main(void) {
    kn_test_bootstrap();
    if (!env("KAFKA_BOOTSTRAP_SASL_SSL") || !env("KAFKA_BOOTSTRAP_REAUTH") || !env("KN_TLS_DIR")) {
        const char *req = getenv("KN_TEST_REQUIRE_SECURE");
        fprintf(stderr, "it_oauthbearer: KAFKA_BOOTSTRAP_SASL_SSL / KAFKA_BOOTSTRAP_REAUTH / KN_TLS_DIR not set "
                        "(tools/kafka/broker env)\n");
        return req && !strcmp(req, "1") ? 1 : 77;
    }
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_roundtrip_sasl_ssl),
        cmocka_unit_test(test_expired_token_fails_fast),
        cmocka_unit_test(test_reauth_fresh_tokens),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
