/*
 * test_tls_ctx.c: the ssl.* configuration -> SSL_CTX (tls_ctx.c) on a
 * throwaway PKI made by tools/kafka/make-pki: every store type (PEM and
 * PKCS12 files, inline PEM, the system store), client keys (PEM file,
 * PKCS12, inline, encrypted), JKS refused with the keytool command, and
 * bad input (missing file, wrong password, bad PEM, unknown type,
 * mismatched key, protocols, cipher suites) failing with the key and
 * the cause, never with a secret in the message.
 */
#include "kn_test.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <openssl/ssl.h>
#include <openssl/x509.h>

#include "config/config.h"
#include "error.h"
#include "tls/tls_ctx.h"

#define KEY_PASS   "client-key-pass" /* make-pki's */
#define STORE_PASS "store-pass"

static char dir[256];
static char key_line[2][80]; /* a line of key material per key file */

static const char *path(const char *name) {
    static char bufs[8][512];
    static int next;
    char *b = bufs[next++ % 8];
    snprintf(b, 512, "%s/%s", dir, name);
    return b;
}

static char *slurp(const char *p) {
    FILE *f = fopen(p, "rb");
    assert_non_null(f);
    char *buf = calloc(1, 1 << 16);
    size_t n = fread(buf, 1, (1 << 16) - 1, f);
    buf[n] = 0;
    fclose(f);
    return buf;
}

static void write_file(const char *p, const void *data, size_t len) {
    FILE *f = fopen(p, "wb");
    assert_non_null(f);
    assert_int_equal(fwrite(data, 1, len, f), len);
    fclose(f);
}

/* Builds a context from kv pairs: returns the library's code; *ctx
 * (freed by the caller) and err are filled. */
static int build(const char *const *kv, void **ctx, bool *verify, char *err, size_t n) {
    kn_conf *conf = kn_conf_new(KN_CLIENT_PRODUCER);
    for (int i = 0; kv[i]; i += 2)
        kn_test_conf_set(conf, kv[i], kv[i + 1]);
    bool v = false;
    err[0] = 0;
    int rc = knw_tls_ctx_new(conf, ctx, verify ? verify : &v, err, n);
    kn_conf_destroy(conf);
    return rc;
}

static void *ok(const char *const *kv) {
    void *ctx = NULL;
    char err[512];
    int rc = build(kv, &ctx, NULL, err, sizeof err);
    if (rc)
        fail_msg("expected success, got %s: %s", kn_err_name(rc), err);
    assert_non_null(ctx);
    return ctx;
}

/* Expects the error code want with every wanted substring, and no
 * secret: KN_ERR__CONFIG for settings wrong on their face (bad), and
 * KN_ERR__SSL for a store or key that cannot be loaded (bad_ssl). */
static void bad_code(int want, const char *const *kv, const char *want1, const char *want2) {
    void *ctx = NULL;
    char err[512];
    int rc = build(kv, &ctx, NULL, err, sizeof err);
    if (rc != want)
        fail_msg("expected %s, got %s: %s", kn_err_name(want), kn_err_name(rc), err);
    assert_null(ctx);
    printf("# %s\n", err);
    if (!strstr(err, want1) || (want2 && !strstr(err, want2)))
        fail_msg("message lacks \"%s\"/\"%s\": %s", want1, want2 ? want2 : "", err);
    assert_null(strstr(err, KEY_PASS));
    assert_null(strstr(err, STORE_PASS));
    assert_null(strstr(err, "wrong-pass"));
    for (int i = 0; i < 2; i++)
        assert_null(strstr(err, key_line[i]));
}

static void bad(const char *const *kv, const char *want1, const char *want2) {
    bad_code(KN_ERR__CONFIG, kv, want1, want2);
}

static void bad_ssl(const char *const *kv, const char *want1, const char *want2) {
    bad_code(KN_ERR__SSL, kv, want1, want2);
}

static int trust_count(void *ctx) {
    return sk_X509_OBJECT_num(X509_STORE_get0_objects(SSL_CTX_get_cert_store(ctx)));
}

static int setup(void **state) {
    (void)state;
    snprintf(dir, sizeof dir, "/tmp/kn-test-tls-XXXXXX");
    assert_non_null(mkdtemp(dir));
    kn_test_run("'%s' '%s' >/dev/null 2>&1", kn_test_source_path("tools/kafka/make-pki"), dir);
    kn_test_run("cat '%s/client.key' '%s/client.pem' > '%s/keystore.pem'", dir, dir, dir);
    kn_test_run("cat '%s/client-enc.key' '%s/client.pem' > '%s/keystore-enc.pem'", dir, dir, dir);
    const char *keys[] = {"client.key", "client-enc.key"};
    for (int i = 0; i < 2; i++) {
        char *k = slurp(path(keys[i]));
        const char *nl = strchr(k, '\n');
        assert_non_null(nl);
        snprintf(key_line[i], sizeof key_line[i], "%.40s", nl + 1);
        free(k);
    }
    /* A JKS file by its magic (keytool may be absent here). */
    static const unsigned char jks[] = {0xFE, 0xED, 0xFE, 0xED, 0, 0, 0, 2, 0, 0, 0, 1};
    write_file(path("store.jks"), jks, sizeof jks);
    return 0;
}

static int teardown(void **state) {
    (void)state;
    kn_test_run("rm -rf '%s'", dir);
    return 0;
}

/* ---- trust ---- */

static void test_trust_pem_file(void **state) {
    (void)state;
    bool verify = false;
    void *ctx = NULL;
    char err[512];
    const char *kv[] = {"ssl.truststore.type", "PEM", "ssl.truststore.location", path("ca.pem"), NULL};
    assert_int_equal(build(kv, &ctx, &verify, err, sizeof err), 0);
    assert_true(verify); /* https by default */
    assert_int_equal(trust_count(ctx), 1);
    assert_int_equal(SSL_CTX_get_verify_mode(ctx) & SSL_VERIFY_PEER, SSL_VERIFY_PEER);
    knw_tls_ctx_free(ctx);
    /* Type left unset (Java's default JKS): the file says PEM. */
    const char *kv2[] = {"ssl.truststore.location", path("ca.pem"), NULL};
    ctx = ok(kv2);
    assert_int_equal(trust_count(ctx), 1);
    knw_tls_ctx_free(ctx);
}

static void test_trust_pkcs12(void **state) {
    (void)state;
    const char *kv[] = {"ssl.truststore.type",
                        "PKCS12",
                        "ssl.truststore.location",
                        path("truststore.p12"),
                        "ssl.truststore.password",
                        STORE_PASS,
                        NULL};
    void *ctx = ok(kv);
    assert_int_equal(trust_count(ctx), 1);
    knw_tls_ctx_free(ctx);
    const char *wrong[] = {"ssl.truststore.type",
                           "PKCS12",
                           "ssl.truststore.location",
                           path("truststore.p12"),
                           "ssl.truststore.password",
                           "wrong-pass",
                           NULL};
    bad_ssl(wrong, "ssl.truststore.password", "wrong");
    const char *none[] = {"ssl.truststore.type", "PKCS12", "ssl.truststore.location", path("truststore.p12"),
                          NULL};
    bad_ssl(none, "password-protected", "set ssl.truststore.password");
    const char *notp12[] = {"ssl.truststore.type", "PKCS12", "ssl.truststore.location", path("ca.pem"), NULL};
    bad_ssl(notp12, "ssl.truststore.location", "is not a PKCS12 file");
}

static void test_trust_inline(void **state) {
    (void)state;
    char *ca = slurp(path("ca.pem"));
    char *other = slurp(path("other-ca.pem"));
    size_t l1 = strlen(ca), l2 = strlen(other);
    char *both = malloc(l1 + l2 + 1);
    memcpy(both, ca, l1);
    memcpy(both + l1, other, l2 + 1);
    const char *kv[] = {"ssl.truststore.type", "PEM", "ssl.truststore.certificates", both, NULL};
    void *ctx = ok(kv);
    assert_int_equal(trust_count(ctx), 2);
    knw_tls_ctx_free(ctx);
    /* Java: inline certificates need the PEM type. */
    const char *p12[] = {"ssl.truststore.type", "PKCS12", "ssl.truststore.certificates", ca, NULL};
    bad(p12, "ssl.truststore.certificates", "ssl.truststore.type=PEM");
    const char *garbage[] = {"ssl.truststore.type", "PEM", "ssl.truststore.certificates", "not a certificate",
                             NULL};
    bad_ssl(garbage, "ssl.truststore.certificates", "no PEM certificate");
    /* A certificate cut in half. */
    ca[l1 / 2] = 0;
    char *cut = malloc(l1 / 2 + 64);
    snprintf(cut, l1 / 2 + 64, "%s\n-----END CERTIFICATE-----\n", ca);
    const char *trunc[] = {"ssl.truststore.type", "PEM", "ssl.truststore.certificates", cut, NULL};
    bad_ssl(trunc, "ssl.truststore.certificates", "bad PEM");
    const char *both_set[] = {"ssl.truststore.certificates", other, "ssl.truststore.location", path("ca.pem"),
                              NULL};
    bad(both_set, "both set", NULL);
    free(cut);
    free(both);
    free(ca);
    free(other);
}

static void test_trust_system(void **state) {
    (void)state;
    /* No trust store: the system's (as Java uses the JVM's). */
    const char *kv[] = {"ssl.endpoint.identification.algorithm", "", NULL};
    bool verify = true;
    void *ctx = NULL;
    char err[512];
    assert_int_equal(build(kv, &ctx, &verify, err, sizeof err), 0);
    assert_false(verify); /* empty turns hostname verification off */
    knw_tls_ctx_free(ctx);
}

static void test_jks_refused(void **state) {
    (void)state;
    const char *detected[] = {"ssl.truststore.location", path("store.jks"), NULL};
    bad(detected, "JKS", "keytool -importkeystore");
    const char *typed[] = {"ssl.truststore.type", "JKS", "ssl.truststore.location", path("ca.pem"), NULL};
    bad(typed, "ssl.truststore.type", "PKCS12");
    const char *ks[] = {
        "ssl.keystore.type", "JKS", "ssl.keystore.location", path("store.jks"), "ssl.keystore.password",
        STORE_PASS,          NULL};
    bad(ks, "ssl.keystore.type", "keytool");
}

static void test_bad_inputs(void **state) {
    (void)state;
    const char *missing[] = {"ssl.truststore.location", path("nope.pem"), NULL};
    bad_ssl(missing, "ssl.truststore.location", "No such file");
    const char *kmissing[] = {"ssl.keystore.location", path("nope.p12"), NULL};
    bad_ssl(kmissing, "ssl.keystore.location", "No such file");
    const char *type[] = {"ssl.truststore.type", "BKS", "ssl.truststore.location", path("ca.pem"), NULL};
    bad(type, "ssl.truststore.type", "unsupported store type");
    const char *pem_pw[] = {"ssl.truststore.location", path("ca.pem"), "ssl.truststore.password", STORE_PASS,
                            NULL};
    bad(pem_pw, "ssl.truststore.password", "PEM");
    const char *alg[] = {"ssl.endpoint.identification.algorithm", "ldaps", NULL};
    bad(alg, "ssl.endpoint.identification.algorithm", "ldaps");
    const char *prov[] = {"ssl.provider", "SunJSSE", NULL};
    bad(prov, "ssl.provider", "not supported");
}

/* ---- client certificates ---- */

static void test_keystore_pem_file(void **state) {
    (void)state;
    const char *kv[] = {"ssl.truststore.location",
                        path("ca.pem"),
                        "ssl.keystore.type",
                        "PEM",
                        "ssl.keystore.location",
                        path("keystore.pem"),
                        NULL};
    void *ctx = ok(kv);
    assert_non_null(SSL_CTX_get0_certificate(ctx));
    assert_non_null(SSL_CTX_get0_privatekey(ctx));
    knw_tls_ctx_free(ctx);
    /* A PEM key store has no store password (Java refuses it too). */
    const char *pw[] = {"ssl.keystore.location", path("keystore.pem"), "ssl.keystore.password", STORE_PASS,
                        NULL};
    bad(pw, "ssl.keystore.password", "ssl.key.password");
    /* Only certificates: no key. */
    const char *nokey[] = {"ssl.keystore.type", "PEM", "ssl.keystore.location", path("client.pem"), NULL};
    bad_ssl(nokey, "ssl.keystore.location", "private key");
}

static void test_keystore_encrypted_key(void **state) {
    (void)state;
    const char *kv[] = {"ssl.keystore.location", path("keystore-enc.pem"), "ssl.key.password", KEY_PASS,
                        NULL};
    void *ctx = ok(kv);
    assert_non_null(SSL_CTX_get0_privatekey(ctx));
    knw_tls_ctx_free(ctx);
    const char *nopw[] = {"ssl.keystore.location", path("keystore-enc.pem"), NULL};
    bad_ssl(nopw, "encrypted", "set ssl.key.password");
    const char *wrong[] = {"ssl.keystore.location", path("keystore-enc.pem"), "ssl.key.password",
                           "wrong-pass", NULL};
    bad_ssl(wrong, "ssl.key.password", "cannot decrypt");
}

static void test_keystore_pkcs12(void **state) {
    (void)state;
    const char *kv[] = {
        "ssl.keystore.type", "PKCS12", "ssl.keystore.location", path("client.p12"), "ssl.keystore.password",
        STORE_PASS,          NULL};
    void *ctx = ok(kv);
    assert_non_null(SSL_CTX_get0_certificate(ctx));
    knw_tls_ctx_free(ctx);
    const char *wrong[] = {
        "ssl.keystore.type", "PKCS12", "ssl.keystore.location", path("client.p12"), "ssl.keystore.password",
        "wrong-pass",        NULL};
    bad_ssl(wrong, "ssl.keystore.password", "wrong");
    /* A trust store is no key store. */
    const char *nokey[] = {"ssl.keystore.type",
                           "PKCS12",
                           "ssl.keystore.location",
                           path("truststore.p12"),
                           "ssl.keystore.password",
                           STORE_PASS,
                           NULL};
    bad_ssl(nokey, "ssl.keystore.location", "no private key");
}

static void test_keystore_inline(void **state) {
    (void)state;
    char *chain = slurp(path("client.pem")), *key = slurp(path("client-enc.key")),
         *plain = slurp(path("client.key"));
    char *cakey = slurp(path("ca.key"));
    const char *kv[] = {"ssl.keystore.type",
                        "PEM",
                        "ssl.keystore.certificate.chain",
                        chain,
                        "ssl.keystore.key",
                        key,
                        "ssl.key.password",
                        KEY_PASS,
                        NULL};
    void *ctx = ok(kv);
    assert_non_null(SSL_CTX_get0_certificate(ctx));
    knw_tls_ctx_free(ctx);
    const char *kv2[] = {"ssl.keystore.certificate.chain", chain, "ssl.keystore.key", plain, NULL};
    ctx = ok(kv2);
    knw_tls_ctx_free(ctx);
    const char *half[] = {"ssl.keystore.key", plain, NULL};
    bad(half, "ssl.keystore.certificate.chain", "both are needed");
    const char *mismatch[] = {"ssl.keystore.certificate.chain", chain, "ssl.keystore.key", cakey, NULL};
    bad_ssl(mismatch, "ssl.keystore.key", "does not match");
    const char *garbage[] = {"ssl.keystore.certificate.chain", chain, "ssl.keystore.key",
                             "-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----\n", NULL};
    bad_ssl(garbage, "ssl.keystore.key", "bad PEM private key");
    const char *p12[] = {"ssl.keystore.type",
                         "PKCS12",
                         "ssl.keystore.certificate.chain",
                         chain,
                         "ssl.keystore.key",
                         plain,
                         NULL};
    bad(p12, "ssl.keystore.type=PEM", NULL);
    free(chain);
    free(key);
    free(plain);
    free(cakey);
}

/* ---- protocols and cipher suites ---- */

static void test_protocols(void **state) {
    (void)state;
    const char *def[] = {"ssl.endpoint.identification.algorithm", "https", NULL};
    void *ctx = ok(def);
    assert_int_equal(SSL_CTX_get_min_proto_version(ctx), TLS1_2_VERSION);
    assert_int_equal(SSL_CTX_get_max_proto_version(ctx), TLS1_3_VERSION);
    knw_tls_ctx_free(ctx);
    const char *only13[] = {"ssl.enabled.protocols", "TLSv1.3", NULL};
    ctx = ok(only13);
    assert_int_equal(SSL_CTX_get_min_proto_version(ctx), TLS1_3_VERSION);
    knw_tls_ctx_free(ctx);
    const char *proto12[] = {"ssl.enabled.protocols", "", "ssl.protocol", "TLSv1.2", NULL};
    ctx = ok(proto12);
    assert_int_equal(SSL_CTX_get_max_proto_version(ctx), TLS1_2_VERSION);
    knw_tls_ctx_free(ctx);
    const char *old[] = {"ssl.enabled.protocols", "TLSv1.1,TLSv1.2", NULL};
    bad(old, "ssl.enabled.protocols", "TLSv1.1");
    const char *proto[] = {"ssl.protocol", "SSLv3", NULL};
    bad(proto, "ssl.protocol", "SSLv3");
}

static void test_cipher_suites(void **state) {
    (void)state;
    /* Java (IANA) names for TLS 1.2 and 1.3. */
    const char *kv[] = {"ssl.cipher.suites", "TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256,TLS_AES_256_GCM_SHA384",
                        NULL};
    void *ctx = ok(kv);
    STACK_OF(SSL_CIPHER) *sk = SSL_CTX_get_ciphers(ctx);
    bool has12 = false, has13 = false;
    for (int i = 0; i < sk_SSL_CIPHER_num(sk); i++) {
        const char *n = SSL_CIPHER_get_name(sk_SSL_CIPHER_value(sk, i));
        has12 |= !strcmp(n, "ECDHE-ECDSA-AES128-GCM-SHA256");
        has13 |= !strcmp(n, "TLS_AES_256_GCM_SHA384");
        assert_string_not_equal(n, "ECDHE-RSA-AES256-GCM-SHA384"); /* not asked for */
    }
    assert_true(has12 && has13);
    knw_tls_ctx_free(ctx);
    /* Only TLS 1.2 suites: TLS 1.3 cannot be negotiated. */
    const char *only12[] = {"ssl.cipher.suites", "TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256", NULL};
    ctx = ok(only12);
    assert_int_equal(SSL_CTX_get_max_proto_version(ctx), TLS1_2_VERSION);
    knw_tls_ctx_free(ctx);
    const char *unknown[] = {"ssl.cipher.suites", "TLS_NO_SUCH_SUITE", NULL};
    bad(unknown, "ssl.cipher.suites", "TLS_NO_SUCH_SUITE");
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_trust_pem_file),    cmocka_unit_test(test_trust_pkcs12),
        cmocka_unit_test(test_trust_inline),      cmocka_unit_test(test_trust_system),
        cmocka_unit_test(test_jks_refused),       cmocka_unit_test(test_bad_inputs),
        cmocka_unit_test(test_keystore_pem_file), cmocka_unit_test(test_keystore_encrypted_key),
        cmocka_unit_test(test_keystore_pkcs12),   cmocka_unit_test(test_keystore_inline),
        cmocka_unit_test(test_protocols),         cmocka_unit_test(test_cipher_suites),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
