/*
 * test_oauthbearer.c: the OAUTHBEARER mechanism without a network: the
 * unsecured JWS (header, claims from the unsecuredLogin* options, exp
 * from the lifetime), the RFC 7628 client first message with
 * extensions, the configuration checks (principal claim, reserved
 * claims, extension syntax, lifetime) and the error round (%x01 answer,
 * then an authentication error).
 */
#include "kn_test.h"

#include <stdio.h>
#include <string.h>

#include "config/config.h"
#include "kn_alloc.h"
#include "wire/sasl/oauth_store.h"
#include "wire/sasl/oauthbearer_ext.h"
#include "wire/sasl/sasl.h"

#define MODULE "org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule"

static int conf_ob(const char *opts, knw_sasl_conf **out, char *err, size_t n) {
    char jaas[1024];
    snprintf(jaas, sizeof jaas, MODULE " required %s;", opts);
    kn_conf *conf = kn_conf_new(KN_CLIENT_PRODUCER);
    kn_test_conf_set(conf, "security.protocol", "SASL_SSL");
    kn_test_conf_set(conf, "sasl.mechanism", "OAUTHBEARER");
    kn_test_conf_set(conf, "sasl.jaas.config", jaas);
    int rc = knw_sasl_conf_from(conf, out, err, n);
    kn_conf_destroy(conf);
    return rc;
}

/* base64url (no padding) decoder for checking the token's parts. */
static size_t b64url_decode(const char *s, size_t n, char *out) {
    static const char tab[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
    uint32_t acc = 0;
    int bits = 0;
    size_t o = 0;
    for (size_t i = 0; i < n; i++) {
        const char *p = strchr(tab, s[i]);
        assert_non_null(p);
        acc = acc << 6 | (uint32_t)(p - tab);
        bits += 6;
        if (bits >= 8) {
            bits -= 8;
            out[o++] = (char)(acc >> bits & 0xff);
        }
    }
    out[o] = 0;
    return o;
}

static void token_parts(const char *tok, char *header, char *claims) {
    const char *d1 = strchr(tok, '.');
    assert_non_null(d1);
    const char *d2 = strchr(d1 + 1, '.');
    assert_non_null(d2);
    assert_string_equal(d2 + 1, ""); /* unsigned: empty signature */
    b64url_decode(tok, (size_t)(d1 - tok), header);
    b64url_decode(d1 + 1, (size_t)(d2 - d1 - 1), claims);
}

static void test_unsecured_token(void **state) {
    (void)state;
    knw_sasl_conf *sc = NULL;
    char err[512];
    assert_int_equal(conf_ob("unsecuredLoginStringClaim_sub=\"al\\\"ice\" unsecuredLoginNumberClaim_n=\"42\" "
                             "unsecuredLoginListClaim_scope=\"|read|write||admin\" "
                             "unsecuredLoginLifetimeSeconds=\"15\"",
                             &sc, err, sizeof err),
                     0);
    assert_ptr_equal(sc->mech, &knw_sasl_oauthbearer);
    char *tok = NULL;
    assert_int_equal(knw_oauthbearer_unsecured_token(sc, 1700000000.5, &tok, err, sizeof err), 0);
    char header[256], claims[1024];
    token_parts(tok, header, claims);
    assert_string_equal(header, "{\"alg\":\"none\"}");
    assert_string_equal(claims, "{\"exp\":1700000015.500,\"iat\":1700000000.500,\"sub\":\"al\\\"ice\",\"n\":42,"
                                "\"scope\":[\"read\",\"write\",\"admin\"]}");
    kn_free(tok);
    knw_sasl_conf_free(sc);
}

static void test_default_lifetime_and_principal_name(void **state) {
    (void)state;
    knw_sasl_conf *sc = NULL;
    char err[512];
    assert_int_equal(conf_ob("unsecuredLoginPrincipalClaimName=\"user\" unsecuredLoginStringClaim_user=\"bob\"", &sc,
                             err, sizeof err),
                     0);
    char *tok = NULL;
    assert_int_equal(knw_oauthbearer_unsecured_token(sc, 1000.0, &tok, err, sizeof err), 0);
    char header[256], claims[1024];
    token_parts(tok, header, claims);
    assert_string_equal(claims, "{\"exp\":4600.000,\"iat\":1000.000,\"user\":\"bob\"}");
    kn_free(tok);
    knw_sasl_conf_free(sc);
}

static void test_client_first_message(void **state) {
    (void)state;
    knw_sasl_conf *sc = NULL;
    char err[512];
    assert_int_equal(conf_ob("unsecuredLoginStringClaim_sub=\"alice\" unsecuredLoginExtension_traceId=\"abc 1\" "
                             "unsecuredLoginExtension_tenant=\"t-9\"",
                             &sc, err, sizeof err),
                     0);
    knw_sasl_buf out = {0};
    assert_int_equal(knw_oauthbearer_client_first(sc, "TOKEN", &out, err, sizeof err), 0);
    static const char want[] = "n,,\x01" "auth=Bearer TOKEN\x01traceId=abc 1\x01tenant=t-9\x01\x01";
    assert_int_equal(out.len, sizeof want - 1);
    assert_memory_equal(out.ptr, want, out.len);
    kn_free(out.ptr);
    knw_sasl_conf_free(sc);
}

static void check_fails(const char *opts, const char *needle) {
    knw_sasl_conf *sc = NULL;
    char err[512] = "";
    assert_int_equal(conf_ob(opts, &sc, err, sizeof err), KN_ERR__CONFIG);
    assert_null(sc);
    if (!strstr(err, needle))
        fail_msg("%s: error \"%s\" lacks \"%s\"", opts, err, needle);
    assert_null(strstr(err, "s3cret"));
}

static void test_config_errors(void **state) {
    (void)state;
    check_fails("unsecuredLoginStringClaim_name=\"s3cret\"", "needs the principal claim");
    check_fails("unsecuredLoginNumberClaim_sub=\"1\"", "principal claim sub must be a non-empty");
    check_fails("unsecuredLoginStringClaim_sub=\"\"", "principal claim sub must be a non-empty");
    check_fails("unsecuredLoginStringClaim_sub=\"a\" unsecuredLoginNumberClaim_exp=\"1\"", "iat and exp");
    check_fails("unsecuredLoginStringClaim_sub=\"a\" unsecuredLoginNumberClaim_n=\"s3cret\"", "must be a number");
    check_fails("unsecuredLoginStringClaim_sub=\"a\" unsecuredLoginNumberClaim_n=\"nan\"", "must be a number");
    check_fails("unsecuredLoginStringClaim_sub=\"a\" unsecuredLoginLifetimeSeconds=\"1h\"",
                "unsecuredLoginLifetimeSeconds must be a whole number");
    check_fails("unsecuredLoginStringClaim_sub=\"a\" unsecuredLoginExtension_auth=\"x\"", "letters only");
    check_fails("unsecuredLoginStringClaim_sub=\"a\" unsecuredLoginExtension_a1=\"x\"", "letters only");
    check_fails("unsecuredLoginStringClaim_sub=\"a\" unsecuredLoginExtension_a=\"s3cret\x01\"",
                "non-empty printable ASCII");
    /* The wrong login module for the mechanism. */
    knw_sasl_conf *sc = NULL;
    char err[512];
    kn_conf *conf = kn_conf_new(KN_CLIENT_PRODUCER);
    kn_test_conf_set(conf, "security.protocol", "SASL_PLAINTEXT");
    kn_test_conf_set(conf, "sasl.mechanism", "OAUTHBEARER");
    kn_test_conf_set(conf, "sasl.jaas.config",
                     "org.apache.kafka.common.security.plain.PlainLoginModule required username=\"u\" password=\"p\";");
    assert_int_equal(knw_sasl_conf_from(conf, &sc, err, sizeof err), KN_ERR__CONFIG);
    assert_non_null(strstr(err, "use " MODULE));
    kn_conf_destroy(conf);
}

/* The exchange: an empty server answer ends it; a JSON error gets the
 * single byte %x01, and an answer after that is a failure naming the
 * server's error. */
static void test_exchange_and_error_round(void **state) {
    (void)state;
    knw_sasl_conf *sc = NULL;
    char err[512];
    assert_int_equal(conf_ob("unsecuredLoginStringClaim_sub=\"alice\"", &sc, err, sizeof err), 0);
    void *st = NULL;
    knw_sasl_buf out = {0};
    assert_int_equal(knw_sasl_oauthbearer.start(sc, "localhost", &st, &out, err, sizeof err), 0);
    assert_true(out.len > 20);
    assert_memory_equal(out.ptr, "n,,\x01" "auth=Bearer eyJ", 19);
    kn_free(out.ptr);
    out.ptr = NULL;
    assert_int_equal(knw_sasl_oauthbearer.step(st, (const uint8_t *)"", 0, &out, err, sizeof err), KNW_SASL_DONE);
    knw_sasl_oauthbearer.free(st);

    assert_int_equal(knw_sasl_oauthbearer.start(sc, "localhost", &st, &out, err, sizeof err), 0);
    kn_free(out.ptr);
    out.ptr = NULL;
    static const char json[] = "{\"status\":\"invalid_token\",\"scope\":\"admin\"}";
    assert_int_equal(knw_sasl_oauthbearer.step(st, (const uint8_t *)json, sizeof json - 1, &out, err, sizeof err),
                     KNW_SASL_SEND);
    assert_int_equal(out.len, 1);
    assert_int_equal(out.ptr[0], 0x01);
    kn_free(out.ptr);
    out.ptr = NULL;
    assert_int_equal(knw_sasl_oauthbearer.step(st, (const uint8_t *)"", 0, &out, err, sizeof err),
                     KN_ERR__AUTHENTICATION);
    assert_non_null(strstr(err, "invalid_token"));
    assert_non_null(strstr(err, "admin"));
    knw_sasl_oauthbearer.free(st);
    knw_sasl_conf_free(sc);
}

/* Java's refresh point: window factor plus jitter of the lifetime,
 * kept out of the buffer before expiry and no sooner than the minimum
 * period; a lifetime too short for both: the factor alone. */
static void test_refresh_point(void **state) {
    (void)state;
    knw_oauth_refresh r = {0.8, 0.05, 60000, 300000};
    /* one hour: 80 % = 48 min, inside the 5 min buffer and after 1 min */
    assert_int_equal(knw_oauth_refresh_at(&r, 0, 3600000, 0.0), 2880000);
    assert_int_equal(knw_oauth_refresh_at(&r, 0, 3600000, 1.0), 3060000);
    /* ten minutes: 80 % = 8 min falls in the buffer: 5 min before expiry */
    assert_int_equal(knw_oauth_refresh_at(&r, 0, 600000, 0.0), 300000);
    /* 15 s: no room for min period + buffer: 80..85 % */
    assert_int_equal(knw_oauth_refresh_at(&r, 1000, 16000, 0.0), 13000);
    assert_int_equal(knw_oauth_refresh_at(&r, 1000, 16000, 1.0), 13750);
    /* the minimum period wins over an early factor */
    knw_oauth_refresh early = {0.01, 0.0, 60000, 0};
    assert_int_equal(knw_oauth_refresh_at(&early, 0, 3600000, 0.5), 60000);
}

/* The message from a callback's token and key/value extensions. */
static void test_message_from_callback(void **state) {
    (void)state;
    const char *kv[] = {"a", "1", "bc", "x y"};
    knw_sasl_buf out = {0};
    char err[256];
    assert_int_equal(knw_oauthbearer_message("T.K.", kv, 2, &out, err, sizeof err), 0);
    static const char want[] = "n,,\x01" "auth=Bearer T.K.\x01" "a=1\x01" "bc=x y\x01\x01";
    assert_int_equal(out.len, sizeof want - 1);
    assert_memory_equal(out.ptr, want, out.len);
    kn_free(out.ptr);
    assert_true(knw_oauthbearer_ext_ok("abc", "v"));
    assert_false(knw_oauthbearer_ext_ok("auth", "v"));
    assert_false(knw_oauthbearer_ext_ok("a-b", "v"));
    assert_false(knw_oauthbearer_ext_ok("a", ""));
}

/* A client with a callback needs no sasl.jaas.config. */
static int dummy_cb(kn_oauthbearer_token *out, char *errstr, size_t n, void *opaque) {
    (void)out;
    (void)errstr;
    (void)n;
    (void)opaque;
    return -1;
}

static void test_callback_conf(void **state) {
    (void)state;
    kn_conf *conf = kn_conf_new(KN_CLIENT_PRODUCER);
    kn_test_conf_set(conf, "security.protocol", "SASL_SSL");
    kn_test_conf_set(conf, "sasl.mechanism", "OAUTHBEARER");
    knw_sasl_conf *sc = NULL;
    char err[512];
    assert_int_equal(knw_sasl_conf_from(conf, &sc, err, sizeof err), KN_ERR__CONFIG); /* no JAAS, no callback */
    assert_int_equal(kn_conf_set_oauthbearer_token_cb(conf, dummy_cb, NULL), KN_OK);
    kn_conf *dup = kn_conf_dup(conf);
    assert_int_equal(knw_sasl_conf_from(dup, &sc, err, sizeof err), 0);
    assert_ptr_equal(sc->token_fn, dummy_cb);
    assert_true(sc->refresh_window_factor > 0.79 && sc->refresh_window_factor < 0.81);
    assert_int_equal(sc->refresh_min_period_ms, 60000);
    assert_int_equal(sc->refresh_buffer_ms, 300000);
    knw_sasl_conf_free(sc);
    kn_conf_destroy(dup);
    assert_int_equal(kn_conf_set_oauthbearer_token_cb(NULL, dummy_cb, NULL), KN_ERR__INVALID_ARG);
    kn_conf_destroy(conf);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_unsecured_token),
        cmocka_unit_test(test_default_lifetime_and_principal_name),
        cmocka_unit_test(test_client_first_message),
        cmocka_unit_test(test_config_errors),
        cmocka_unit_test(test_exchange_and_error_round),
        cmocka_unit_test(test_refresh_point),
        cmocka_unit_test(test_message_from_callback),
        cmocka_unit_test(test_callback_conf),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
