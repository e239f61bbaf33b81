/*
 * test_oidc.c: the OAUTHBEARER token endpoint pieces without a network:
 * the bounded JSON reader (core/json.c), the token endpoint answer and
 * JWT claims reader (jwt.c) with each malformed input, and which
 * configuration selects the token endpoint and what it requires
 * (oidc.c), errors naming keys and never a secret.
 */
#include "kn_test.h"

#include <stdio.h>
#include <string.h>
#include <time.h>

#include "config/config.h"
#include "json.h"
#include "kn_alloc.h"
#include "wire/sasl/jwt.h"
#include "wire/sasl/oidc.h"
#include "wire/sasl/sasl.h"

#define MODULE  "org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule"
#define HANDLER "org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginCallbackHandler"

static void b64url(const char *s, char *out) {
    static const char tab[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
    size_t n = strlen(s), o = 0, i = 0;
    const unsigned char *u = (const unsigned char *)s;
    for (; i + 3 <= n; i += 3) {
        uint32_t v = (uint32_t)u[i] << 16 | (uint32_t)u[i + 1] << 8 | u[i + 2];
        out[o++] = tab[v >> 18 & 63], out[o++] = tab[v >> 12 & 63], out[o++] = tab[v >> 6 & 63],
        out[o++] = tab[v & 63];
    }
    if (n - i == 1) {
        uint32_t v = (uint32_t)u[i] << 16;
        out[o++] = tab[v >> 18 & 63], out[o++] = tab[v >> 12 & 63];
    } else if (n - i == 2) {
        uint32_t v = (uint32_t)u[i] << 16 | (uint32_t)u[i + 1] << 8;
        out[o++] = tab[v >> 18 & 63], out[o++] = tab[v >> 12 & 63], out[o++] = tab[v >> 6 & 63];
    }
    out[o] = 0;
}

/* header.payload.sig with payload the given JSON. */
static void make_jwt(const char *claims, char *out) {
    char h[64], p[4096];
    b64url("{\"alg\":\"RS256\",\"kid\":\"k1\"}", h);
    b64url(claims, p);
    sprintf(out, "%s.%s.c2lnbmF0dXJl", h, p);
}

static void test_json_reader(void **state) {
    (void)state;
    char err[256];
    kn_json_val v;
    const char *doc =
        " {\"a\":1,\"s\":\"x\\u00e9\\ud83d\\ude00\\n\",\"arr\":[\"p\", \"q\"],\"o\":{\"a\":2},\"a\":3.5e1} ";
    assert_int_equal(kn_json_get(doc, strlen(doc), "a", &v, err, sizeof err), 0);
    double d;
    assert_int_equal(v.type, KN_JSON_NUMBER);
    assert_int_equal(kn_json_number(&v, &d), 0);
    assert_true(d == 35.0); /* the last "a" wins, not the nested one */
    char s[64];
    size_t sl;
    assert_int_equal(kn_json_get(doc, strlen(doc), "s", &v, err, sizeof err), 0);
    assert_int_equal(kn_json_string(&v, s, sizeof s, &sl), 0);
    assert_string_equal(s, "x\xc3\xa9\xf0\x9f\x98\x80\n");
    assert_int_equal(kn_json_get(doc, strlen(doc), "arr", &v, err, sizeof err), 0);
    size_t pos = 0;
    kn_json_val e;
    int count = 0;
    while (kn_json_array_next(&v, &pos, &e)) {
        assert_int_equal(e.type, KN_JSON_STRING);
        count++;
    }
    assert_int_equal(count, 2);
    assert_int_equal(kn_json_get(doc, strlen(doc), "missing", &v, err, sizeof err), 0);
    assert_int_equal(v.type, KN_JSON_NONE);

    /* Malformed documents: each names the byte offset. */
    static const struct {
        const char *doc;
        const char *msg;
    } bad[] = {
        {"", "byte 0: unexpected end"},
        {"{\"a\":1,}", "byte 7: expected a string"},
        {"{\"a\" 1}", "byte 5: expected ':'"},
        {"{\"a\":01}", "byte 6: expected ',' or '}'"},
        {"{\"a\":\"x\ty\"}", "a control character"},
        {"{\"a\":\"\\q\"}", "a bad escape"},
        {"{\"a\":\"\\u12g4\"}", "a bad \\u escape"},
        {"{\"a\":tru}", "an unexpected character"},
        {"{\"a\":\"open", "an unterminated string"},
        {"{} x", "text after the end"},
        {"[1,2", "expected ',' or ']'"},
        {"{\"a\":-}", "a bad number"},
        {"{'a':1}", "expected a string"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        err[0] = 0;
        assert_int_equal(kn_json_check(bad[i].doc, strlen(bad[i].doc), err, sizeof err), -1);
        if (!strstr(err, bad[i].msg))
            fail_msg("%s: got \"%s\", want \"%s\"", bad[i].doc, err, bad[i].msg);
    }
    /* Depth is capped. */
    char deep[200];
    memset(deep, '[', 100);
    memset(deep + 100, ']', 100);
    assert_int_equal(kn_json_check(deep, 200, err, sizeof err), -1);
    assert_non_null(strstr(err, "nested too deeply"));
    assert_int_equal(kn_json_check(deep + 70, 60, err, sizeof err), 0);
    /* A top-level array is not an object. */
    assert_int_equal(kn_json_get("[1]", 3, "a", &v, err, sizeof err), -1);
    assert_non_null(strstr(err, "not an object"));
}

static void test_token_response(void **state) {
    (void)state;
    char err[256], *jwt;
    const char *ok = "{\"token_type\":\"Bearer\",\"access_token\":\"aaa.bbb.ccc\",\"expires_in\":15}";
    assert_int_equal(knw_jwt_from_response(ok, strlen(ok), &jwt, err, sizeof err), 0);
    assert_string_equal(jwt, "aaa.bbb.ccc");
    kn_free(jwt);
    const char *id = "{\"id_token\":\"x.y.z\"}";
    assert_int_equal(knw_jwt_from_response(id, strlen(id), &jwt, err, sizeof err), 0);
    assert_string_equal(jwt, "x.y.z");
    kn_free(jwt);
    static const struct {
        const char *body;
        const char *msg;
    } bad[] = {
        {"{\"access_token\":\"secret.tok",
         "not a JSON object (malformed JSON at byte 27: an unterminated string)"},
        {"<html>oops</html>", "not a JSON object (malformed JSON at byte 0"},
        {"{\"token_type\":\"Bearer\"}", "has no access_token (nor id_token)"},
        {"{\"access_token\":42}", "access_token that is not a string"},
        {"{\"access_token\":\"  \"}", "access_token is empty"},
        {"[\"access_token\"]", "not a JSON object"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        jwt = NULL;
        assert_int_equal(knw_jwt_from_response(bad[i].body, strlen(bad[i].body), &jwt, err, sizeof err), -1);
        assert_null(jwt);
        if (!strstr(err, bad[i].msg))
            fail_msg("%s: got \"%s\"", bad[i].body, err);
        assert_null(strstr(err, "secret")); /* no excerpt of the body */
    }
}

static void test_jwt_claims(void **state) {
    (void)state;
    char err[256], jwt[8192];
    knw_jwt_claims cl;
    make_jwt("{\"sub\":\"svc\",\"exp\":2000000000,\"iat\":1999999000.7,\"scope\":[\"read\",\"write\"],"
             "\"aud\":\"kafka\"}",
             jwt);
    assert_int_equal(knw_jwt_read(jwt, "sub", "scope", &cl, err, sizeof err), 0);
    assert_string_equal(cl.sub, "svc");
    assert_true(cl.exp_ms == 2000000000000LL);
    assert_true(cl.iat_ms == 1999999000000LL);
    assert_int_equal(cl.scope_count, 2);
    /* Other claim names (sasl.oauthbearer.sub/scope.claim.name). */
    make_jwt("{\"client_id\":\"app\",\"exp\":2000000000,\"scp\":\"one\"}", jwt);
    assert_int_equal(knw_jwt_read(jwt, "client_id", "scp", &cl, err, sizeof err), 0);
    assert_string_equal(cl.sub, "app");
    assert_int_equal(cl.scope_count, 1);
    assert_true(cl.iat_ms == -1);

    static const struct {
        const char *claims; /* NULL: the jwt text itself is in .raw */
        const char *raw;
        const char *msg;
    } bad[] = {
        {NULL, "abc", "expected three sections"},
        {NULL, "a.b", "expected three sections"},
        {NULL, "a.b.", "expected three sections"},
        {NULL, "a..c", "expected three sections"},
        {NULL, "a.b.c.d", "expected three sections"},
        {NULL, "eyJ.!!!.c", "the payload section is not base64url"},
        {NULL, "eyJ.e.c", "not base64url"},
        {"[1]", NULL, "the payload is not a JSON object"},
        {"{\"sub\":\"x\",\"exp\":", NULL, "the payload is not a JSON object (malformed JSON at byte 17"},
        {"{\"exp\":2000000000}", NULL, "sub claim (sasl.oauthbearer.sub.claim.name) is missing"},
        {"{\"sub\":7,\"exp\":2000000000}", NULL,
         "sub claim (sasl.oauthbearer.sub.claim.name) is not a string"},
        {"{\"sub\":\" \",\"exp\":2000000000}", NULL, "is empty"},
        {"{\"sub\":\"x\"}", NULL, "the JWT has no exp claim"},
        {"{\"sub\":\"x\",\"exp\":\"soon\"}", NULL, "exp claim must be a non-negative number"},
        {"{\"sub\":\"x\",\"exp\":-5}", NULL, "exp claim must be a non-negative number"},
        {"{\"sub\":\"x\",\"exp\":2000000000,\"iat\":true}", NULL, "iat claim must be"},
        {"{\"sub\":\"x\",\"exp\":2000000000,\"scope\":[\"a\",\"\"]}", NULL, "scope claim"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        if (bad[i].claims)
            make_jwt(bad[i].claims, jwt);
        else
            strcpy(jwt, bad[i].raw);
        err[0] = 0;
        assert_int_equal(knw_jwt_read(jwt, "sub", "scope", &cl, err, sizeof err), -1);
        if (!strstr(err, bad[i].msg))
            fail_msg("%s: got \"%s\", want \"%s\"", bad[i].claims ? bad[i].claims : bad[i].raw, err,
                     bad[i].msg);
    }
}

static int conf_oidc(const char *handler, const char *url, const char *jaas_opts, const char *extra_key,
                     const char *extra_val, knw_sasl_conf **out, char *err, size_t n) {
    char jaas[1024];
    snprintf(jaas, sizeof jaas, MODULE " required %s;", jaas_opts);
    kn_conf *conf = kn_conf_new(KN_CLIENT_PRODUCER);
    kn_test_conf_set(conf, "security.protocol", "SASL_SSL");
    kn_test_conf_set(conf, "sasl.mechanism", "OAUTHBEARER");
    kn_test_conf_set(conf, "sasl.jaas.config", jaas);
    if (handler)
        kn_test_conf_set(conf, "sasl.login.callback.handler.class", handler);
    if (url)
        kn_test_conf_set(conf, "sasl.oauthbearer.token.endpoint.url", url);
    if (extra_key)
        kn_test_conf_set(conf, extra_key, extra_val);
    int rc = knw_sasl_conf_from(conf, out, err, n);
    kn_conf_destroy(conf);
    return rc;
}

static void test_selection_and_config(void **state) {
    (void)state;
    char err[512];
    knw_sasl_conf *sc = NULL;
    /* Java's class selects the token endpoint. */
    assert_int_equal(conf_oidc(HANDLER, "http://127.0.0.1:1/token", "clientId=\"c\" clientSecret=\"s3cr3t\"",
                               NULL, NULL, &sc, err, sizeof err),
                     0);
    assert_non_null(sc->oidc);
    assert_string_equal(knw_oidc_url(sc->oidc), "http://127.0.0.1:1/token");
    knw_sasl_conf *copy = NULL;
    assert_int_equal(knw_sasl_conf_copy(&copy, sc), 0); /* shares the retriever */
    knw_sasl_conf_free(sc);
    assert_non_null(copy->oidc);
    knw_sasl_conf_free(copy);
    /* The URL alone selects it too, unless the options are the unsecured login's. */
    assert_int_equal(conf_oidc(NULL, "http://127.0.0.1:1/token", "clientId=\"c\" clientSecret=\"s\"", NULL,
                               NULL, &sc, err, sizeof err),
                     0);
    assert_non_null(sc->oidc);
    knw_sasl_conf_free(sc);
    assert_int_equal(conf_oidc(NULL, "http://127.0.0.1:1/token", "unsecuredLoginStringClaim_sub=\"alice\"",
                               NULL, NULL, &sc, err, sizeof err),
                     0);
    assert_null(sc->oidc);
    knw_sasl_conf_free(sc);
    /* The client id and secret from the 4.x configuration keys. */
    assert_int_equal(conf_oidc(HANDLER, "https://127.0.0.1:1/token", "clientId=\"c\"",
                               "sasl.oauthbearer.client.credentials.client.secret", "s", &sc, err,
                               sizeof err),
                     0);

    knw_sasl_conf_free(sc);

    static const struct {
        const char *url, *opts, *key, *val, *msg;
    } bad[] = {
        {NULL, "clientId=\"c\" clientSecret=\"s3cr3t\"", NULL, NULL,
         "sasl.oauthbearer.token.endpoint.url is required"},
        {"ftp://x/token", "clientId=\"c\" clientSecret=\"s3cr3t\"", NULL, NULL,
         "must be an http:// or https:// URL"},
        {"file:/tmp/tok", "clientId=\"c\" clientSecret=\"s3cr3t\"", NULL, NULL,
         "FileJwtRetriever, is not supported"},
        {"http://h/t", "clientSecret=\"s3cr3t\"", NULL, NULL,
         "sasl.oauthbearer.client.credentials.client.id (or the clientId option"},
        {"http://h/t", "clientId=\"c\"", NULL, NULL, "client.secret (or the clientSecret option"},
        {"http://h/t", "clientId=\"c\" clientSecret=\"s3cr3t\"", "sasl.login.retry.backoff.max.ms", "10",
         "sasl.login.retry.backoff.ms (100) and sasl.login.retry.backoff.max.ms (10)"},
        {"http://h/t", "clientId=\"c\" clientSecret=\"s3cr3t\"", "sasl.login.read.timeout.ms", "0",
         "sasl.login.read.timeout.ms must be a positive"},
        {"http://h/t", "clientId=\"c\" clientSecret=\"s3cr3t\" extension_a1=\"x\"", NULL, NULL,
         "option extension_a1: an extension name"},
        {"https://h/t",
         "clientId=\"c\" clientSecret=\"s3cr3t\" ssl.truststore.location=\"/nonexistent/ca.pem\"", NULL, NULL,
         "the token endpoint's TLS settings (OAuthBearerLoginModule ssl.* options): ssl.truststore.location"},
        {"https://h/t", "clientId=\"c\" clientSecret=\"s3cr3t\" ssl.bogus=\"1\"", NULL, NULL,
         "option ssl.bogus (for the token endpoint)"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        sc = NULL;
        err[0] = 0;
        int rc = conf_oidc(HANDLER, bad[i].url, bad[i].opts, bad[i].key, bad[i].val, &sc, err, sizeof err);
        if (rc != KN_ERR__CONFIG || sc)
            fail_msg("case %zu: rc %d (%s)", i, rc, err);
        if (!strstr(err, bad[i].msg))
            fail_msg("case %zu: got \"%s\", want \"%s\"", i, err, bad[i].msg);
        assert_null(strstr(err, "s3cr3t"));
    }
}

/* The endpoint down: the fetch fails with the cause, bounded by the retry budget. */
static void test_fetch_refused(void **state) {
    (void)state;
    char err[512];
    knw_sasl_conf *sc = NULL;
    assert_int_equal(conf_oidc(HANDLER, "http://127.0.0.1:1/token", "clientId=\"c\" clientSecret=\"s3cr3t\"",
                               "sasl.login.retry.backoff.max.ms", "300", &sc, err, sizeof err),
                     0);
    char *jwt = NULL;
    knw_jwt_claims cl;
    int64_t t0 = kn_test_now_ms();
    assert_int_equal(knw_oidc_fetch(sc->oidc, &jwt, &cl, err, sizeof err), KN_ERR__AUTHENTICATION);
    int64_t took = kn_test_now_ms() - t0;
    assert_null(jwt);
    assert_non_null(strstr(err, "cannot get a token from http://127.0.0.1:1/token"));
    if (!strstr(err, "refused") && !strstr(err, "Could not connect"))
        fail_msg("%s", err);
    assert_non_null(strstr(err, "attempts in"));
    assert_null(strstr(err, "s3cr3t"));
    assert_true(took >= 250 && took < 5000);
    knw_sasl_conf_free(sc);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_json_reader),   cmocka_unit_test(test_token_response),
        cmocka_unit_test(test_jwt_claims),    cmocka_unit_test(test_selection_and_config),
        cmocka_unit_test(test_fetch_refused),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
