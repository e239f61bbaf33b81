/*
 * it_tls.c: security.protocol=SSL against the real broker's secured
 * listeners (tools/kafka/broker: KAFKA_BOOTSTRAP_SSL, _MTLS, _WRONGHOST
 * and the PKI in KN_TLS_DIR). Produce and consume as a group member
 * with commits over SSL (PEM and PKCS12 trust stores, inline PEM) and
 * over mTLS (PEM key store file, PKCS12, inline PEM, encrypted key);
 * and the failures, each within 2 s with its reason: untrusted CA,
 * hostname mismatch, mTLS without a client certificate, a plaintext
 * client on the TLS port and a TLS client on the plaintext port.
 *
 * Without the listeners the test is skipped (exit 77), unless
 * KN_TEST_REQUIRE_SECURE=1 (CI), where that is a failure.
 */
#include "kn_test.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "kafka_native.h"
#include "kafka_native_admin.h"
#include "kafka_native_consumer.h"
#include "kafka_native_producer.h"

#define N_RECORDS 300
/* The bound for a TLS failure to reach the caller. */
#define FAIL_WITHIN_MS 2000

static const char *tls_dir;
static char tmp_dir[256];

static const char *env(const char *name) {
    const char *v = getenv(name);
    if (!v || !*v)
        fail_msg("%s is not set", name);
    return v;
}

/* A file in KN_TLS_DIR (static ring of buffers: several per config). */
static const char *pki(const char *name) {
    static char bufs[8][512];
    static int next;
    char *b = bufs[next++ % 8];
    snprintf(b, 512, "%s/%s", tls_dir, name);
    return b;
}

/* The whole of a file, NUL-terminated (caller frees). */
static char *slurp(const char *path) {
    FILE *f = fopen(path, "rb");
    if (!f)
        fail_msg("cannot open %s", path);
    char *buf = malloc(1 << 16);
    assert_non_null(buf);
    size_t n = fread(buf, 1, (1 << 16) - 1, f);
    fclose(f);
    buf[n] = 0;
    return buf;
}

static kn_conf *conf_for(kn_client_type type, const char *bootstrap, const char *const *kv) {
    kn_conf *conf = kn_conf_new(type);
    assert_non_null(conf);
    kn_test_conf_set(conf, "bootstrap.servers", bootstrap);
    for (int i = 0; kv && kv[i]; i += 2)
        kn_test_conf_set(conf, kv[i], kv[i + 1]);
    return conf;
}

typedef struct dr_count {
    int ok, failed;
    char first_err[256];
} dr_count;

static void on_dr(kn_producer *p, const kn_delivery *d, void *opaque) {
    (void)p;
    dr_count *c = opaque;
    if (kn_delivery_error(d)) {
        if (!c->failed++)
            snprintf(c->first_err, sizeof c->first_err, "%s", kn_delivery_errstr(d));
    } else {
        c->ok++;
    }
}

/* Produces N_RECORDS and reads them back as a group member, commits,
 * and checks the committed offsets: all over the given security kv. */
static void roundtrip(const char *bootstrap, const char *const *kv) {
    char topic[128], group[160], es[512];
    snprintf(topic, sizeof topic, "%s", kn_test_topic("tls"));
    snprintf(group, sizeof group, "g-%s", topic);
    kn_test_create_topic(topic, 2);

    kn_conf *pc = conf_for(KN_CLIENT_PRODUCER, bootstrap, kv);
    kn_test_conf_set(pc, "linger.ms", "5");
    dr_count drc = {0};
    kn_producer *p = kn_producer_new(pc, on_dr, &drc, es, sizeof es);
    if (!p)
        fail_msg("kn_producer_new: %s", es);
    kn_conf_destroy(pc);
    for (int i = 0; i < N_RECORDS; i++) {
        char v[32];
        int vl = snprintf(v, sizeof v, "v%d", i);
        kn_record_out rec = KN_RECORD_OUT_INIT;
        rec.topic = topic;
        rec.value = v;
        rec.value_len = (size_t)vl;
        if (kn_producer_send(p, &rec, es, sizeof es))
            fail_msg("send: %s", es);
    }
    assert_int_equal(kn_producer_flush(p, 30000), KN_OK);
    if (drc.failed)
        fail_msg("%d deliveries failed: %s", drc.failed, drc.first_err);
    assert_int_equal(drc.ok, N_RECORDS);
    kn_producer_close(p, 10000);
    kn_producer_destroy(p);

    kn_conf *cc = conf_for(KN_CLIENT_CONSUMER, bootstrap, kv);
    kn_test_conf_set(cc, "group.id", group);
    kn_test_conf_set(cc, "auto.offset.reset", "earliest");
    kn_test_conf_set(cc, "enable.auto.commit", "false");
    kn_consumer *c = kn_consumer_new(cc, es, sizeof es);
    if (!c)
        fail_msg("kn_consumer_new: %s", es);
    kn_conf_destroy(cc);
    const char *topics[] = {topic};
    assert_int_equal(kn_consumer_subscribe(c, topics, 1, NULL, NULL), KN_OK);
    char *seen = calloc(N_RECORDS, 1);
    int got = 0;
    int64_t end = kn_test_now_ms() + 60000;
    while (got < N_RECORDS && kn_test_now_ms() < end) {
        kn_records *r = NULL;
        int rc = kn_consumer_poll(c, 500, &r, es, sizeof es);
        if (rc)
            fail_msg("poll: %s", es);
        for (size_t i = 0; i < kn_records_count(r); i++) {
            size_t len;
            const char *v = kn_records_value(r, i, &len);
            int n = atoi(v + 1);
            assert_true(n >= 0 && n < N_RECORDS);
            assert_false(seen[n]); /* nothing twice */
            seen[n] = 1;
            got++;
        }
        kn_records_free(r);
    }
    free(seen);
    assert_int_equal(got, N_RECORDS);
    assert_int_equal(kn_consumer_commit_sync(c, NULL, 10000), KN_OK);
    kn_topic_partition_list *tpl = kn_topic_partition_list_new();
    kn_topic_partition_list_add(tpl, topic, 0);
    kn_topic_partition_list_add(tpl, topic, 1);
    assert_int_equal(kn_consumer_committed(c, tpl, 10000), KN_OK);
    int64_t sum = 0;
    for (int i = 0; i < 2; i++)
        sum += kn_topic_partition_list_offset(tpl, (size_t)i);
    assert_int_equal(sum, N_RECORDS);
    kn_topic_partition_list_destroy(tpl);
    assert_int_equal(kn_consumer_close(c, -1), KN_OK);
    kn_consumer_destroy(c);
}

/* ---- success paths ---- */

static void test_ssl_pem_truststore(void **state) {
    (void)state;
    const char *kv[] = {"security.protocol", "SSL", "ssl.truststore.type", "PEM", "ssl.truststore.location",
                        pki("ca.pem"),       NULL};
    roundtrip(env("KAFKA_BOOTSTRAP_SSL"), kv);
}

static void test_ssl_pkcs12_truststore(void **state) {
    (void)state;
    const char *kv[] = {"security.protocol",
                        "SSL",
                        "ssl.truststore.type",
                        "PKCS12",
                        "ssl.truststore.location",
                        pki("truststore.p12"),
                        "ssl.truststore.password",
                        env("KN_TLS_STORE_PASSWORD"),
                        NULL};
    roundtrip(env("KAFKA_BOOTSTRAP_SSL"), kv);
}

static void test_ssl_inline_truststore(void **state) {
    (void)state;
    char *ca = slurp(pki("ca.pem"));
    const char *kv[] = {
        "security.protocol", "SSL", "ssl.truststore.type", "PEM", "ssl.truststore.certificates", ca, NULL};
    roundtrip(env("KAFKA_BOOTSTRAP_SSL"), kv);
    free(ca);
}

/* Java's PEM key store file: the private key and the chain together. */
static const char *keystore_pem(const char *key_file) {
    static char path[300];
    snprintf(path, sizeof path, "%s/keystore-%s", tmp_dir, key_file);
    kn_test_run("cat '%s' '%s' > '%s'", pki(key_file), pki("client.pem"), path);
    return path;
}

static void test_mtls_pem_file(void **state) {
    (void)state;
    const char *kv[] = {"security.protocol",
                        "SSL",
                        "ssl.truststore.location",
                        pki("ca.pem"),
                        "ssl.keystore.type",
                        "PEM",
                        "ssl.keystore.location",
                        keystore_pem("client.key"),
                        NULL};
    roundtrip(env("KAFKA_BOOTSTRAP_MTLS"), kv);
}

static void test_mtls_encrypted_key(void **state) {
    (void)state;
    const char *kv[] = {"security.protocol",
                        "SSL",
                        "ssl.truststore.location",
                        pki("ca.pem"),
                        "ssl.keystore.type",
                        "PEM",
                        "ssl.keystore.location",
                        keystore_pem("client-enc.key"),
                        "ssl.key.password",
                        env("KN_TLS_KEY_PASSWORD"),
                        NULL};
    roundtrip(env("KAFKA_BOOTSTRAP_MTLS"), kv);
}

static void test_mtls_pkcs12(void **state) {
    (void)state;
    const char *kv[] = {"security.protocol",
                        "SSL",
                        "ssl.truststore.type",
                        "PKCS12",
                        "ssl.truststore.location",
                        pki("truststore.p12"),
                        "ssl.truststore.password",
                        env("KN_TLS_STORE_PASSWORD"),
                        "ssl.keystore.type",
                        "PKCS12",
                        "ssl.keystore.location",
                        pki("client.p12"),
                        "ssl.keystore.password",
                        env("KN_TLS_STORE_PASSWORD"),
                        NULL};
    roundtrip(env("KAFKA_BOOTSTRAP_MTLS"), kv);
}

static void test_mtls_inline_pem(void **state) {
    (void)state;
    char *ca = slurp(pki("ca.pem")), *chain = slurp(pki("client.pem")), *key = slurp(pki("client-enc.key"));
    const char *kv[] = {"security.protocol",
                        "SSL",
                        "ssl.truststore.type",
                        "PEM",
                        "ssl.truststore.certificates",
                        ca,
                        "ssl.keystore.type",
                        "PEM",
                        "ssl.keystore.certificate.chain",
                        chain,
                        "ssl.keystore.key",
                        key,
                        "ssl.key.password",
                        env("KN_TLS_KEY_PASSWORD"),
                        NULL};
    roundtrip(env("KAFKA_BOOTSTRAP_MTLS"), kv);
    free(ca);
    free(chain);
    free(key);
}

/* ---- failures: the code, the reason, and the time to learn it ---- */

/* An admin call (30 s budget) must fail within FAIL_WITHIN_MS with
 * want_err and every one of the wanted substrings in the message. */
static void expect_admin_failure(const char *bootstrap, const char *const *kv, int want_err,
                                 const char *const *want) {
    char es[1024];
    kn_conf *conf = conf_for(KN_CLIENT_ADMIN, bootstrap, kv);
    kn_admin *a = kn_admin_new(conf, es, sizeof es);
    if (!a)
        fail_msg("kn_admin_new: %s", es);
    kn_conf_destroy(conf);
    kn_topic_list *list = NULL;
    int64_t t0 = kn_test_now_ms();
    int rc = kn_admin_list_topics(a, 0, 30000, &list, es, sizeof es);
    int64_t took = kn_test_now_ms() - t0;
    kn_topic_list_destroy(list);
    kn_admin_destroy(a);
    printf("# %s -> %s in %lld ms: %s\n", bootstrap, kn_err_name(rc), (long long)took, es);
    if (rc != want_err)
        fail_msg("expected %s, got %s: %s", kn_err_name(want_err), kn_err_name(rc), es);
    for (int i = 0; want[i]; i++)
        if (!strstr(es, want[i]))
            fail_msg("message lacks \"%s\": %s", want[i], es);
    if (took > FAIL_WITHIN_MS)
        fail_msg("took %lld ms (bound %d ms)", (long long)took, FAIL_WITHIN_MS);
}

static void test_fail_untrusted_ca(void **state) {
    (void)state;
    const char *kv[] = {"security.protocol", "SSL", "ssl.truststore.location", pki("other-ca.pem"), NULL};
    /* The broker sends its CA along: OpenSSL names it self-signed. */
    const char *want[] = {"certificate verify failed", "self-signed certificate in certificate chain",
                          "ssl.truststore", "127.0.0.1:", NULL};
    expect_admin_failure(env("KAFKA_BOOTSTRAP_SSL"), kv, KN_ERR__SSL, want);
}

static void test_fail_hostname_mismatch(void **state) {
    (void)state;
    /* The WRONGHOST certificate names only wrong.invalid; we connect to
     * 127.0.0.1, which is checked against the IP SANs. */
    const char *kv[] = {"security.protocol", "SSL", "ssl.truststore.location", pki("ca.pem"), NULL};
    const char *want[] = {"certificate verify failed", "IP address mismatch", NULL};
    expect_admin_failure(env("KAFKA_BOOTSTRAP_WRONGHOST"), kv, KN_ERR__SSL, want);

    /* A name: localhost is not wrong.invalid either. */
    char bs[256];
    const char *port = strrchr(env("KAFKA_BOOTSTRAP_WRONGHOST"), ':');
    snprintf(bs, sizeof bs, "localhost%s", port);
    const char *want_name[] = {"certificate verify failed", "hostname mismatch", NULL};
    expect_admin_failure(bs, kv, KN_ERR__SSL, want_name);
}

/* With verification off the same listener works (and the first
 * metadata answer's advertised 127.0.0.1 is not checked either). */
static void test_hostname_check_off(void **state) {
    (void)state;
    char es[512];
    const char *kv[] = {"security.protocol",
                        "SSL",
                        "ssl.truststore.location",
                        pki("ca.pem"),
                        "ssl.endpoint.identification.algorithm",
                        "",
                        NULL};
    kn_conf *conf = conf_for(KN_CLIENT_ADMIN, env("KAFKA_BOOTSTRAP_WRONGHOST"), kv);
    kn_admin *a = kn_admin_new(conf, es, sizeof es);
    assert_non_null(a);
    kn_conf_destroy(conf);
    kn_topic_list *list = NULL;
    if (kn_admin_list_topics(a, 0, 30000, &list, es, sizeof es))
        fail_msg("list_topics: %s", es);
    kn_topic_list_destroy(list);
    kn_admin_destroy(a);
}

static void test_fail_mtls_without_cert(void **state) {
    (void)state;
    const char *kv[] = {"security.protocol", "SSL", "ssl.truststore.location", pki("ca.pem"), NULL};
    const char *want[] = {"client certificate", NULL};
    expect_admin_failure(env("KAFKA_BOOTSTRAP_MTLS"), kv, KN_ERR__SSL, want);
}

static void test_fail_plaintext_client_on_tls_port(void **state) {
    (void)state;
    const char *want[] = {"TLS", "security.protocol=SSL", NULL};
    expect_admin_failure(env("KAFKA_BOOTSTRAP_SSL"), NULL, KN_ERR__SSL, want);
}

static void test_fail_tls_client_on_plaintext_port(void **state) {
    (void)state;
    const char *kv[] = {"security.protocol", "SSL", "ssl.truststore.location", pki("ca.pem"), NULL};
    const char *want[] = {"TLS handshake failed", "closed the connection", "security.protocol=PLAINTEXT",
                          NULL};
    expect_admin_failure(kn_test_bootstrap(), kv, KN_ERR__SSL, want);
}

/* A producer's send learns the TLS failure too, instead of waiting for
 * metadata until max.block.ms. */
static void test_fail_producer_send(void **state) {
    (void)state;
    char es[1024];
    const char *kv[] = {"security.protocol", "SSL", "ssl.truststore.location", pki("other-ca.pem"), NULL};
    kn_conf *conf = conf_for(KN_CLIENT_PRODUCER, env("KAFKA_BOOTSTRAP_SSL"), kv);
    kn_producer *p = kn_producer_new(conf, NULL, NULL, es, sizeof es);
    assert_non_null(p);
    kn_conf_destroy(conf);
    kn_record_out rec = KN_RECORD_OUT_INIT;
    rec.topic = "kn-test-tls-never";
    rec.value = "x";
    rec.value_len = 1;
    int64_t t0 = kn_test_now_ms();
    int rc = kn_producer_send(p, &rec, es, sizeof es);
    int64_t took = kn_test_now_ms() - t0;
    printf("# producer send -> %s in %lld ms: %s\n", kn_err_name(rc), (long long)took, es);
    assert_int_equal(rc, KN_ERR__SSL);
    assert_non_null(strstr(es, "certificate verify failed"));
    assert_true(took <= FAIL_WITHIN_MS);
    kn_producer_close(p, 1000);
    kn_producer_destroy(p);
}

/* A subscribed consumer's poll returns the TLS failure (Java's poll
 * throws SslAuthenticationException) instead of empty batches. */
static void test_fail_consumer_poll(void **state) {
    (void)state;
    char es[1024];
    const char *kv[] = {
        "security.protocol",   "SSL", "ssl.truststore.location", pki("other-ca.pem"), "group.id",
        "kn-test-tls-nogroup", NULL};
    kn_conf *conf = conf_for(KN_CLIENT_CONSUMER, env("KAFKA_BOOTSTRAP_SSL"), kv);
    kn_consumer *c = kn_consumer_new(conf, es, sizeof es);
    assert_non_null(c);
    kn_conf_destroy(conf);
    const char *topics[] = {"kn-test-tls-never"};
    assert_int_equal(kn_consumer_subscribe(c, topics, 1, NULL, NULL), KN_OK);
    int64_t t0 = kn_test_now_ms();
    int rc = 0;
    while (!rc && kn_test_now_ms() - t0 < 10000) {
        kn_records *r = NULL;
        rc = kn_consumer_poll(c, 500, &r, es, sizeof es);
        kn_records_free(r);
    }
    int64_t took = kn_test_now_ms() - t0;
    printf("# consumer poll -> %s in %lld ms: %s\n", kn_err_name(rc), (long long)took, es);
    assert_int_equal(rc, KN_ERR__SSL);
    assert_non_null(strstr(es, "certificate verify failed"));
    assert_true(took <= FAIL_WITHIN_MS);
    kn_consumer_close(c, -1);
    kn_consumer_destroy(c);
}

int main(void) {
    const char *need[] = {"KAFKA_BOOTSTRAP_SSL", "KAFKA_BOOTSTRAP_MTLS", "KAFKA_BOOTSTRAP_WRONGHOST",
                          "KN_TLS_DIR",          "KN_TLS_KEY_PASSWORD",  "KN_TLS_STORE_PASSWORD"};
    for (size_t i = 0; i < sizeof need / sizeof *need; i++)
        if (!getenv(need[i]) || !*getenv(need[i])) {
            const char *req = getenv("KN_TEST_REQUIRE_SECURE");
            bool required = req && !strcmp(req, "1");
            fprintf(stderr,
                    "it_tls: %s is not set (start the broker with tools/kafka/broker and eval its env)%s\n",
                    need[i], required ? "; KN_TEST_REQUIRE_SECURE=1: failing" : "; skipped");
            return required ? 1 : 77;
        }
    tls_dir = getenv("KN_TLS_DIR");
    snprintf(tmp_dir, sizeof tmp_dir, "/tmp/kn-it-tls-XXXXXX");
    if (!mkdtemp(tmp_dir)) {
        perror("mkdtemp");
        return 1;
    }
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_ssl_pem_truststore),
        cmocka_unit_test(test_ssl_pkcs12_truststore),
        cmocka_unit_test(test_ssl_inline_truststore),
        cmocka_unit_test(test_mtls_pem_file),
        cmocka_unit_test(test_mtls_encrypted_key),
        cmocka_unit_test(test_mtls_pkcs12),
        cmocka_unit_test(test_mtls_inline_pem),
        cmocka_unit_test(test_fail_untrusted_ca),
        cmocka_unit_test(test_fail_hostname_mismatch),
        cmocka_unit_test(test_hostname_check_off),
        cmocka_unit_test(test_fail_mtls_without_cert),
        cmocka_unit_test(test_fail_plaintext_client_on_tls_port),
        cmocka_unit_test(test_fail_tls_client_on_plaintext_port),
        cmocka_unit_test(test_fail_producer_send),
        cmocka_unit_test(test_fail_consumer_poll),
    };
    int rc = cmocka_run_group_tests(tests, NULL, NULL);
    char cmd[400];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmp_dir);
    if (system(cmd) != 0)
        fprintf(stderr, "it_tls: cannot remove %s\n", tmp_dir);
    return rc;
}
