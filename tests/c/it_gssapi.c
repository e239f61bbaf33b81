/*
 * it_gssapi.c: SASL GSSAPI (Kerberos) against the real broker's GSSAPI
 * listeners and the harness's MIT KDC (tools/kafka/broker,
 * tools/kafka/make-kdc: KAFKA_BOOTSTRAP_GSSAPI, KAFKA_BOOTSTRAP_GSSAPI_SSL,
 * KRB5_CONFIG, KN_KRB5_DIR, KN_KRB5_KEYTAB, KN_KRB5_PRINCIPAL):
 *  - produce and consume as a group member with commits over
 *    SASL_PLAINTEXT and SASL_SSL, logging in from the client keytab;
 *  - from a ticket cache made by kinit (useTicketCache=true);
 *  - a wrong keytab (a replaced key), a missing keytab, a file that is
 *    not a keytab, an unreachable KDC and a wrong service name each fail
 *    the first send within 2 s as KN_ERR__AUTHENTICATION naming the
 *    Kerberos reason, with no second connect;
 *  - configuration errors name the key (no service name, no keyTab);
 *  - with 15 s tickets (kn-short) and 10 s broker sessions (GSSAPI_SSL,
 *    KIP-368) a producer and a group member run for 35 s: every record
 *    once and in order through re-authentications that need tickets
 *    from re-logins (the first TGT has expired by then).
 * Without the listeners: skipped (exit 77), or failed when
 * KN_TEST_REQUIRE_SECURE=1.
 */
#include "kn_test.h"
#include "secure.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "kafka_native.h"

static void jaas_keytab(char *out, size_t n, const char *keytab, const char *principal) {
    snprintf(out, n,
             "com.sun.security.auth.module.Krb5LoginModule required useKeyTab=true storeKey=true "
             "keyTab=\"%s\" principal=\"%s\";",
             keytab, principal);
}

static kn_conf *krb_conf(kn_client_type type, const char *bs, const char *keytab, const char *principal) {
    kn_conf *conf = kn_conf_new(type);
    char jaas[1024];
    jaas_keytab(jaas, sizeof jaas, keytab, principal);
    kn_test_conf_set(conf, "bootstrap.servers", bs);
    kn_test_conf_set(conf, "security.protocol",
                     strstr(bs, kn_secure_env("KAFKA_BOOTSTRAP_GSSAPI_SSL")) ? "SASL_SSL" : "SASL_PLAINTEXT");
    kn_test_conf_set(conf, "sasl.mechanism", "GSSAPI");
    kn_test_conf_set(conf, "sasl.kerberos.service.name", "kafka");
    kn_test_conf_set(conf, "sasl.jaas.config", jaas);
    if (strstr(bs, kn_secure_env("KAFKA_BOOTSTRAP_GSSAPI_SSL")))
        kn_secure_conf_trust(conf);
    return conf;
}

static kn_conf *client_conf(kn_client_type type, const char *bs) {
    return krb_conf(type, bs, kn_secure_env("KN_KRB5_KEYTAB"), kn_secure_env("KN_KRB5_PRINCIPAL"));
}

static void roundtrip_over(const char *bs, const char *tag) {
    char topic[128], group[160];
    snprintf(topic, sizeof topic, "%s", kn_test_topic(tag));
    snprintf(group, sizeof group, "%s-group", topic);
    kn_test_create_topic(topic, 1);
    kn_conf *pc = client_conf(KN_CLIENT_PRODUCER, bs);
    kn_conf *cc = client_conf(KN_CLIENT_CONSUMER, bs);
    kn_secure_roundtrip(pc, cc, topic, group, 0, 200);
    kn_conf_destroy(pc);
    kn_conf_destroy(cc);
}

static void test_roundtrip_sasl_plaintext(void **state) {
    (void)state;
    roundtrip_over(kn_secure_env("KAFKA_BOOTSTRAP_GSSAPI"), "gssapi");
}

static void test_roundtrip_sasl_ssl(void **state) {
    (void)state;
    roundtrip_over(kn_secure_env("KAFKA_BOOTSTRAP_GSSAPI_SSL"), "gssapi-ssl");
}

/* useTicketCache=true: kinit fills a cache file of the test's own. */
static void test_ticket_cache(void **state) {
    (void)state;
    char cache[512], cmd[1536], jaas[1024];
    snprintf(cache, sizeof cache, "%s/test-ccache-%d", kn_secure_env("KN_KRB5_DIR"), (int)getpid());
    snprintf(cmd, sizeof cmd, "kinit -c 'FILE:%s' -kt '%s' '%s'", cache, kn_secure_env("KN_KRB5_KEYTAB"),
             kn_secure_env("KN_KRB5_PRINCIPAL"));
    if (system(cmd) != 0)
        fail_msg("kinit failed: %s", cmd);
    snprintf(
        jaas, sizeof jaas,
        "com.sun.security.auth.module.Krb5LoginModule required useTicketCache=true ticketCache=\"FILE:%s\";",
        cache);
    char topic[128], group[160];
    snprintf(topic, sizeof topic, "%s", kn_test_topic("gssapi-cache"));
    snprintf(group, sizeof group, "%s-group", topic);
    kn_test_create_topic(topic, 1);
    kn_conf *pc = client_conf(KN_CLIENT_PRODUCER, kn_secure_env("KAFKA_BOOTSTRAP_GSSAPI"));
    kn_conf *cc = client_conf(KN_CLIENT_CONSUMER, kn_secure_env("KAFKA_BOOTSTRAP_GSSAPI"));
    kn_test_conf_set(pc, "sasl.jaas.config", jaas);
    kn_test_conf_set(cc, "sasl.jaas.config", jaas);
    kn_secure_roundtrip(pc, cc, topic, group, 0, 50);
    kn_conf_destroy(pc);
    kn_conf_destroy(cc);
    unlink(cache);
}

/* The first send fails within 2 s naming reason; no reconnect after. */
static void denied(kn_conf *conf, const char *reason) {
    char es[1024];
    int64_t took;
    kn_producer *p = kn_secure_denied_send(conf, "kn-test-gssapi-denied", es, sizeof es, &took);
    fprintf(stderr, "  failed in %lld ms: %s\n", (long long)took, es);
    if (!strstr(es, reason))
        fail_msg("message does not name the reason \"%s\": %s", reason, es);
    if (!strstr(es, "GSSAPI"))
        fail_msg("message does not name the mechanism: %s", es);
    char fe[1024];
    assert_int_equal(kn_producer_fatal_error(p, fe, sizeof fe), KN_ERR__AUTHENTICATION);
    kn_producer_stats s1 = {.size = sizeof s1}, s2 = {.size = sizeof s2};
    kn_producer_get_stats(p, &s1);
    sleep(1);
    kn_producer_get_stats(p, &s2);
    assert_int_equal(s1.connects, 1);
    assert_int_equal(s2.connects, s1.connects);
    assert_int_equal(kn_producer_close(p, 1000), KN_ERR__AUTHENTICATION);
    kn_producer_destroy(p);
}

static void test_wrong_keytab(void **state) {
    (void)state;
    char kt[512];
    snprintf(kt, sizeof kt, "%s/wrong.keytab", kn_secure_env("KN_KRB5_DIR"));
    denied(krb_conf(KN_CLIENT_PRODUCER, kn_secure_env("KAFKA_BOOTSTRAP_GSSAPI"), kt,
                    kn_secure_env("KN_KRB5_PRINCIPAL")),
           "Preauthentication failed");
}

static void test_missing_keytab(void **state) {
    (void)state;
    char kt[512];
    snprintf(kt, sizeof kt, "%s/no-such.keytab", kn_secure_env("KN_KRB5_DIR"));
    denied(krb_conf(KN_CLIENT_PRODUCER, kn_secure_env("KAFKA_BOOTSTRAP_GSSAPI"), kt,
                    kn_secure_env("KN_KRB5_PRINCIPAL")),
           "no-such.keytab' not found");
}

/* Root reads any file, so "unreadable" is a file that is not a keytab. */
static void test_unreadable_keytab(void **state) {
    (void)state;
    char kt[512];
    snprintf(kt, sizeof kt, "%s/garbage-%d.keytab", kn_secure_env("KN_KRB5_DIR"), (int)getpid());
    FILE *f = fopen(kt, "w");
    assert_non_null(f);
    fputs("this is not a keytab\n", f);
    fclose(f);
    denied(krb_conf(KN_CLIENT_PRODUCER, kn_secure_env("KAFKA_BOOTSTRAP_GSSAPI"), kt,
                    kn_secure_env("KN_KRB5_PRINCIPAL")),
           "Unsupported key table format version number");
    unlink(kt);
}

/* A KDC that is down: a krb5.conf naming a port nothing listens on
 * (KRB5_CONFIG is read when the client and each GSS call start). */
static void test_kdc_down(void **state) {
    (void)state;
    const char *orig = kn_secure_env("KRB5_CONFIG");
    char path[512], line[512];
    snprintf(path, sizeof path, "%s/krb5-dead-%d.conf", kn_secure_env("KN_KRB5_DIR"), (int)getpid());
    FILE *in = fopen(orig, "r"), *out = fopen(path, "w");
    assert_non_null(in);
    assert_non_null(out);
    while (fgets(line, sizeof line, in)) {
        if (strstr(line, "kdc = 127.0.0.1:"))
            fputs("    kdc = 127.0.0.1:9\n", out); /* discard: closed on loopback */
        else
            fputs(line, out);
    }
    fclose(in);
    fclose(out);
    char saved[512];
    snprintf(saved, sizeof saved, "%s", orig);
    setenv("KRB5_CONFIG", path, 1);
    denied(client_conf(KN_CLIENT_PRODUCER, kn_secure_env("KAFKA_BOOTSTRAP_GSSAPI")),
           "Cannot contact any KDC");
    setenv("KRB5_CONFIG", saved, 1);
    unlink(path);
}

static void test_wrong_service(void **state) {
    (void)state;
    kn_conf *conf = client_conf(KN_CLIENT_PRODUCER, kn_secure_env("KAFKA_BOOTSTRAP_GSSAPI"));
    kn_test_conf_set(conf, "sasl.kerberos.service.name", "nokafka");
    denied(conf, "Server nokafka/localhost@KN.TEST not found in Kerberos database");
}

static void config_error(kn_conf *conf, const char *what) {
    char es[512];
    kn_producer *p = kn_producer_new(conf, NULL, NULL, es, sizeof es);
    kn_conf_destroy(conf);
    if (p)
        fail_msg("the producer was built; expected an error naming %s", what);
    if (!strstr(es, what))
        fail_msg("error does not name %s: %s", what, es);
    fprintf(stderr, "  %s\n", es);
}

static void test_config_errors(void **state) {
    (void)state;
    kn_conf *conf = client_conf(KN_CLIENT_PRODUCER, kn_secure_env("KAFKA_BOOTSTRAP_GSSAPI"));
    kn_test_conf_set(conf, "sasl.kerberos.service.name", "");
    config_error(conf, "sasl.kerberos.service.name is required");
    conf = client_conf(KN_CLIENT_PRODUCER, kn_secure_env("KAFKA_BOOTSTRAP_GSSAPI"));
    kn_test_conf_set(conf, "sasl.jaas.config",
                     "com.sun.security.auth.module.Krb5LoginModule required useKeyTab=true principal=\"x\";");
    config_error(conf, "keyTab is required");
    conf = client_conf(KN_CLIENT_PRODUCER, kn_secure_env("KAFKA_BOOTSTRAP_GSSAPI"));
    kn_test_conf_set(conf, "sasl.jaas.config", "com.sun.security.auth.module.Krb5LoginModule required;");
    config_error(conf, "useTicketCache=true");
    conf = client_conf(KN_CLIENT_PRODUCER, kn_secure_env("KAFKA_BOOTSTRAP_GSSAPI"));
    kn_test_conf_set(
        conf, "sasl.jaas.config",
        "org.apache.kafka.common.security.plain.PlainLoginModule required username=\"a\" password=\"b\";");
    config_error(conf, "Krb5LoginModule");
}

/* Re-login: kn-short's tickets live 15 s; GSSAPI_SSL sessions 10 s. */
static kn_conf *short_conf(kn_client_type type) {
    char kt[512];
    snprintf(kt, sizeof kt, "%s/short.keytab", kn_secure_env("KN_KRB5_DIR"));
    kn_conf *conf = krb_conf(type, kn_secure_env("KAFKA_BOOTSTRAP_GSSAPI_SSL"), kt, "kn-short@KN.TEST");
    kn_test_conf_set(conf, "sasl.kerberos.min.time.before.relogin", "1000");
    return conf;
}

static kn_conf *short_producer_conf(void *ctx) {
    (void)ctx;
    return short_conf(KN_CLIENT_PRODUCER);
}

static void test_relogin_through_reauth(void **state) {
    (void)state;
    char t[128], group[160];
    snprintf(t, sizeof t, "%s", kn_test_topic("gssapi-relogin"));
    snprintf(group, sizeof group, "%s-group", t);
    kn_test_create_topic(t, 1);
    kn_conf *cc = short_conf(KN_CLIENT_CONSUMER);
    kn_consumer *c = kn_secure_group_consumer(cc, group, t);
    kn_conf_destroy(cc);
    kn_secure_prod rp = {
        .make_conf = short_producer_conf, .topic = t, .run_ms = 32000, .burst = 10, .pause_ms = 50};
    int next = kn_secure_consume_while_producing(c, &rp, 70000, 36000, 35000);
    fprintf(stderr, "  produced %d, consumed %d; producer: %lld re-authentications, %lld connects\n", rp.sent,
            next, (long long)rp.stats.reauthentications, (long long)rp.stats.connects);
    assert_int_equal(atomic_load(&rp.st.ok), rp.sent);
    assert_int_equal(atomic_load(&rp.st.failed), 0);
    assert_int_equal(next, rp.sent);
    /* Sessions of 10 s over 32 s, with tickets of 15 s: the later
     * re-authentications carry tickets from a re-login. */
    assert_true(rp.stats.reauthentications >= 2);
    assert_int_equal(rp.stats.connect_failures, 0);
    kn_consumer_stats cs = {.size = sizeof cs};
    kn_consumer_get_stats(c, &cs);
    fprintf(stderr, "  consumer: %lld re-authentications, %lld connects\n", (long long)cs.reauthentications,
            (long long)cs.connects);
    assert_true(cs.reauthentications >= 2);
    assert_int_equal(cs.connect_failures, 0);
    assert_int_equal(kn_consumer_close(c, -1), KN_OK);
    kn_consumer_destroy(c);
}

int main(void) {
    kn_test_bootstrap();
    static const char *const need[] = {
        "KAFKA_BOOTSTRAP_GSSAPI", "KAFKA_BOOTSTRAP_GSSAPI_SSL", "KRB5_CONFIG", "KN_KRB5_DIR",
        "KN_KRB5_KEYTAB",         "KN_KRB5_PRINCIPAL",          "KN_TLS_DIR",  NULL};
    int gate = kn_secure_need("it_gssapi", need);
    if (gate)
        return gate;
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_roundtrip_sasl_plaintext),
        cmocka_unit_test(test_roundtrip_sasl_ssl),
        cmocka_unit_test(test_ticket_cache),
        cmocka_unit_test(test_wrong_keytab),
        cmocka_unit_test(test_missing_keytab),
        cmocka_unit_test(test_unreadable_keytab),
        cmocka_unit_test(test_kdc_down),
        cmocka_unit_test(test_wrong_service),
        cmocka_unit_test(test_config_errors),
        cmocka_unit_test(test_relogin_through_reauth),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
