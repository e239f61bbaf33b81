/*
 * test_sasl_units.c: the SASL pieces without a network: the
 * sasl.jaas.config parser (Java's grammar, quoting, escapes, comments,
 * flags, errors that never show a value), the mechanism table and the
 * configuration checks, PLAIN's token, SCRAM-SHA-256 against the RFC 7677
 * test vector, and the SCRAM parsers on bad input (nonce, salt,
 * iterations, signature, server errors).
 */
#include "kn_test.h"

#include <stdio.h>
#include <string.h>

#include "config/config.h"
#include "kn_alloc.h"
#include "wire/sasl/jaas.h"
#include "wire/sasl/sasl.h"

static void parse_ok(const char *text, knw_jaas *j) {
    char err[256];
    int rc = knw_jaas_parse(text, j, err, sizeof err);
    if (rc)
        fail_msg("%s: %s", text, err);
}

static void parse_fails(const char *text, const char *needle) {
    knw_jaas j;
    char err[256] = "";
    assert_int_equal(knw_jaas_parse(text, &j, err, sizeof err), KN_ERR__CONFIG);
    if (!strstr(err, needle))
        fail_msg("%s: error \"%s\" lacks \"%s\"", text, err, needle);
    /* Values are secrets: no error ever quotes one. */
    assert_null(strstr(err, "s3cret"));
    assert_null(j.login_module);
}

static void test_jaas_basic(void **state) {
    (void)state;
    knw_jaas j;
    parse_ok("org.apache.kafka.common.security.plain.PlainLoginModule required username=\"alice\" "
             "password=\"alice-secret\";",
             &j);
    assert_string_equal(j.login_module, "org.apache.kafka.common.security.plain.PlainLoginModule");
    assert_int_equal(j.flag, KNW_JAAS_REQUIRED);
    assert_string_equal(knw_jaas_get(&j, "username"), "alice");
    assert_string_equal(knw_jaas_get(&j, "password"), "alice-secret");
    assert_null(knw_jaas_get(&j, "nope"));
    knw_jaas copy;
    assert_int_equal(knw_jaas_copy(&copy, &j), 0);
    assert_string_equal(knw_jaas_get(&copy, "password"), "alice-secret");
    knw_jaas_free(&copy);
    knw_jaas_free(&j);
    assert_null(j.login_module);
}

static void test_jaas_quoting_and_escapes(void **state) {
    (void)state;
    knw_jaas j;
    /* Both quote characters, escapes, unquoted words, comments,
     * newlines, any-case flags, repeated keys (last wins as in a map). */
    parse_ok("// a comment\n"
             "org.apache.kafka.common.security.scram.ScramLoginModule /* inline */ OPTIONAL\n"
             "  username='bob' password=\"p\\\"a\\\\s;s=w\\td\\101\" extra=plain-word_1.2$x\n"
             "  tokenauth=\"false\" tokenauth=true ;  // trailing",
             &j);
    assert_int_equal(j.flag, KNW_JAAS_OPTIONAL);
    assert_string_equal(knw_jaas_get(&j, "username"), "bob");
    assert_string_equal(knw_jaas_get(&j, "password"), "p\"a\\s;s=w\tdA");
    assert_string_equal(knw_jaas_get(&j, "extra"), "plain-word_1.2$x");
    assert_string_equal(knw_jaas_get(&j, "tokenauth"), "true");
    knw_jaas_free(&j);
    static const char *const flags[] = {"required", "Requisite", "SUFFICIENT", "optional"};
    for (int i = 0; i < 4; i++) {
        char text[128];
        snprintf(text, sizeof text, "a.B %s;", flags[i]);
        parse_ok(text, &j);
        assert_int_equal(j.flag, i);
        assert_int_equal(j.option_count, 0);
        knw_jaas_free(&j);
    }
    /* UTF-8 in a quoted value stays as its bytes. */
    parse_ok("m.M required username=\"j\xc3\xb6rg\";", &j);
    assert_string_equal(knw_jaas_get(&j, "username"), "j\xc3\xb6rg");
    knw_jaas_free(&j);
}

static void test_jaas_errors(void **state) {
    (void)state;
    parse_fails("", "Login module not specified");
    parse_fails("   // only a comment", "Login module not specified");
    parse_fails("a.B", "control flag not specified");
    parse_fails("a.B mandatory;", "Invalid login module control flag 'mandatory'");
    parse_fails("a.B required password=\"s3cret\"", "not terminated by semi-colon");
    parse_fails("a.B required password;", "Value not specified for key 'password'");
    parse_fails("a.B required password=;", "Value not specified for key 'password'");
    parse_fails("a.B required password=123s3cret;", "Value not specified for key 'password'");
    parse_fails("a.B required password=\"s3cret;", "unterminated quoted string");
    parse_fails("a.B required password=\"s3cret\n\";", "unterminated quoted string");
    parse_fails("a.B required /* s3cret", "unterminated /* comment");
    parse_fails("a.B required = \"s3cret\";", "expected an option name");
    parse_fails("a.B required; c.D required;", "more than one login module");
    parse_fails("; a.B required;", "expected a login module class name");
    /* The option count is capped. */
    char big[4096];
    size_t off = (size_t)snprintf(big, sizeof big, "a.B required");
    for (int i = 0; i < KNW_JAAS_MAX_OPTIONS + 1; i++)
        off += (size_t)snprintf(big + off, sizeof big - off, " k%d=v", i);
    snprintf(big + off, sizeof big - off, ";");
    parse_fails(big, "more than 64 options");
}

static int conf_sasl(const char *proto, const char *mech, const char *jaas, knw_sasl_conf **out, char *err,
                     size_t n) {
    kn_conf *conf = kn_conf_new(KN_CLIENT_PRODUCER);
    kn_test_conf_set(conf, "security.protocol", proto);
    if (mech)
        kn_test_conf_set(conf, "sasl.mechanism", mech);
    if (jaas)
        kn_test_conf_set(conf, "sasl.jaas.config", jaas);
    int rc = knw_sasl_conf_from(conf, out, err, n);
    kn_conf_destroy(conf);
    return rc;
}

static void test_conf_checks(void **state) {
    (void)state;
    knw_sasl_conf *sc = NULL;
    char err[512];
    assert_int_equal(conf_sasl("PLAINTEXT", "PLAIN", NULL, &sc, err, sizeof err), 0);
    assert_null(sc);
    assert_int_equal(conf_sasl("SASL_PLAINTEXT", "PLAIN",
                               "org.apache.kafka.common.security.plain.PlainLoginModule required "
                               "username=\"u\" password=\"p\";",
                               &sc, err, sizeof err),
                     0);
    assert_non_null(sc);
    assert_ptr_equal(sc->mech, &knw_sasl_plain);
    knw_sasl_conf *copy = NULL;
    assert_int_equal(knw_sasl_conf_copy(&copy, sc), 0);
    assert_string_equal(knw_jaas_get(&copy->jaas, "password"), "p");
    knw_sasl_conf_free(copy);
    knw_sasl_conf_free(sc);
    /* GSSAPI (the default mechanism) needs Kerberos at build time
     * (its checks: test_gssapi_units.c). */
    assert_int_equal(conf_sasl("SASL_PLAINTEXT", "GSSAPI", "x.Y required;", &sc, err, sizeof err),
                     KN_ERR__CONFIG);
#ifdef KN_HAVE_GSSAPI
    assert_non_null(strstr(err, "login module x.Y does not provide credentials for sasl.mechanism GSSAPI"));
#else
    assert_non_null(strstr(err, "sasl.mechanism GSSAPI is not in this build"));
#endif
    assert_int_equal(conf_sasl("SASL_PLAINTEXT", "NOPE", "x.Y required;", &sc, err, sizeof err), KN_ERR__CONFIG);
    assert_non_null(strstr(err, "sasl.mechanism NOPE is not supported (supported: PLAIN, SCRAM-SHA-256, "
                                "SCRAM-SHA-512, OAUTHBEARER"));
    assert_int_equal(conf_sasl("SASL_PLAINTEXT", "PLAIN", NULL, &sc, err, sizeof err), KN_ERR__CONFIG);
    assert_non_null(strstr(err, "sasl.jaas.config is required"));
    /* The login module must be the mechanism's. */
    assert_int_equal(conf_sasl("SASL_PLAINTEXT", "SCRAM-SHA-256",
                               "org.apache.kafka.common.security.plain.PlainLoginModule required "
                               "username=\"u\" password=\"s3cret\";",
                               &sc, err, sizeof err),
                     KN_ERR__CONFIG);
    assert_non_null(strstr(err, "does not provide credentials for sasl.mechanism SCRAM-SHA-256"));
    assert_non_null(strstr(err, "ScramLoginModule"));
    assert_null(strstr(err, "s3cret"));
    assert_int_equal(conf_sasl("SASL_PLAINTEXT", "SCRAM-SHA-512",
                               "org.apache.kafka.common.security.scram.ScramLoginModule required "
                               "username=\"u\";",
                               &sc, err, sizeof err),
                     KN_ERR__CONFIG);
    assert_non_null(strstr(err, "password missing"));
    assert_int_equal(conf_sasl("SASL_PLAINTEXT", "PLAIN",
                               "org.apache.kafka.common.security.plain.PlainLoginModule required "
                               "password=\"s3cret\";",
                               &sc, err, sizeof err),
                     KN_ERR__CONFIG);
    assert_non_null(strstr(err, "username missing"));
    char list[128];
#ifdef KN_HAVE_GSSAPI
    assert_string_equal(knw_sasl_mech_list(list, sizeof list),
                        "PLAIN, SCRAM-SHA-256, SCRAM-SHA-512, OAUTHBEARER, GSSAPI");
#else
    assert_string_equal(knw_sasl_mech_list(list, sizeof list), "PLAIN, SCRAM-SHA-256, SCRAM-SHA-512, OAUTHBEARER");
#endif
}

/* The secret key is hidden from kn_conf_dump (and so kafka.config()). */
static void dump_cb(const char *key, const char *value, int is_default, void *opaque) {
    (void)is_default;
    if (!strcmp(key, "sasl.jaas.config"))
        *(const char **)opaque = value;
    if (value)
        assert_null(strstr(value, "s3cret"));
}

static void test_jaas_hidden_in_dump(void **state) {
    (void)state;
    kn_conf *conf = kn_conf_new(KN_CLIENT_CONSUMER);
    kn_test_conf_set(conf, "sasl.jaas.config",
                     "org.apache.kafka.common.security.plain.PlainLoginModule required username=\"u\" "
                     "password=\"s3cret\";");
    const char *shown = NULL;
    assert_int_equal(kn_conf_dump(conf, dump_cb, &shown), KN_OK);
    assert_string_equal(shown, "[hidden]");
    kn_conf_destroy(conf);
}

static knw_sasl_conf *mk_conf(const char *mech, const char *user, const char *password) {
    char jaas[512], err[256];
    snprintf(jaas, sizeof jaas, "%s required username=\"%s\" password=\"%s\";",
             strcmp(mech, "PLAIN") ? "org.apache.kafka.common.security.scram.ScramLoginModule"
                                   : "org.apache.kafka.common.security.plain.PlainLoginModule",
             user, password);
    knw_sasl_conf *sc = NULL;
    if (conf_sasl("SASL_PLAINTEXT", mech, jaas, &sc, err, sizeof err))
        fail_msg("%s", err);
    return sc;
}

static void test_plain_token(void **state) {
    (void)state;
    knw_sasl_conf *sc = mk_conf("PLAIN", "alice", "pw");
    void *st = NULL;
    knw_sasl_buf out = {0};
    char err[256];
    assert_int_equal(knw_sasl_plain.start(sc, "h", &st, &out, err, sizeof err), 0);
    assert_int_equal(out.len, 9);
    assert_memory_equal(out.ptr, "\0alice\0pw", 9);
    kn_free(out.ptr);
    knw_sasl_buf next = {0};
    assert_int_equal(knw_sasl_plain.step(st, (const uint8_t *)"", 0, &next, err, sizeof err), KNW_SASL_DONE);
    assert_int_equal(knw_sasl_plain.step(st, (const uint8_t *)"x", 1, &next, err, sizeof err),
                     KN_ERR__AUTHENTICATION);
    knw_sasl_plain.free(st);
    knw_sasl_conf_free(sc);
}

/* RFC 7677 section 3. */
#define RFC_NONCE "rOprNGfwEbeRWgbNEkqO"
#define RFC_SERVER_FIRST                                                                                     \
    "r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0,s=W22ZaJ0SNY7soEsUEjb6gQ==,i=4096"
#define RFC_CLIENT_FINAL                                                                                     \
    "c=biws,r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0,p=dHzbZapWIk4jUhN+"                         \
    "Ute9ytag9zjfMHgsqmmiz7AndVQ="
#define RFC_SERVER_FINAL "v=6rriTRBi23WpRR/wtup+mMhUZUn/dB5nLTJRsjl95G4="

/* Runs SCRAM-SHA-256 against the RFC vector, with server_first and
 * server_final replaced when given; returns the first error (or 0). */
static int scram_run(const char *server_first, const char *server_final, char *err, size_t n) {
    knw_sasl_conf *sc = mk_conf("SCRAM-SHA-256", "user", "pencil");
    knw_scram_set_test_nonce(RFC_NONCE);
    void *st = NULL;
    knw_sasl_buf out = {0};
    assert_int_equal(knw_sasl_scram_sha256.start(sc, "h", &st, &out, err, n), 0);
    knw_scram_set_test_nonce(NULL);
    assert_int_equal(out.len, strlen("n,,n=user,r=" RFC_NONCE));
    assert_memory_equal(out.ptr, "n,,n=user,r=" RFC_NONCE, out.len);
    kn_free(out.ptr);
    const char *sf = server_first ? server_first : RFC_SERVER_FIRST;
    int rc = knw_sasl_scram_sha256.step(st, (const uint8_t *)sf, strlen(sf), &out, err, n);
    if (rc == KNW_SASL_SEND) {
        if (!server_first) {
            assert_int_equal(out.len, strlen(RFC_CLIENT_FINAL));
            assert_memory_equal(out.ptr, RFC_CLIENT_FINAL, out.len);
        }
        kn_free(out.ptr);
        const char *fin = server_final ? server_final : RFC_SERVER_FINAL;
        rc = knw_sasl_scram_sha256.step(st, (const uint8_t *)fin, strlen(fin), &out, err, n);
        if (rc == KNW_SASL_DONE) /* one more message after done is an error */
            assert_int_equal(knw_sasl_scram_sha256.step(st, (const uint8_t *)"x", 1, &out, err, n),
                             KN_ERR__AUTHENTICATION);
    }
    knw_sasl_scram_sha256.free(st);
    knw_sasl_conf_free(sc);
    return rc;
}

static void scram_fails(const char *sf, const char *fin, const char *needle) {
    char err[512] = "";
    int rc = scram_run(sf, fin, err, sizeof err);
    assert_int_equal(rc, KN_ERR__AUTHENTICATION);
    if (!strstr(err, needle))
        fail_msg("error \"%s\" lacks \"%s\"", err, needle);
}

static void test_scram_rfc7677(void **state) {
    (void)state;
    char err[256];
    assert_int_equal(scram_run(NULL, NULL, err, sizeof err), KNW_SASL_DONE);
}

static void test_scram_extension_accepted(void **state) {
    (void)state;
    /* Extensions after the mandatory attributes are parsed past: the
     * exchange goes on (and the RFC's signature, computed without the
     * extension, no longer matches). */
    scram_fails(RFC_SERVER_FIRST ",x=1", NULL, "invalid server signature");
}

static void test_scram_bad_server(void **state) {
    (void)state;
    /* nonce that does not extend ours, or is ours exactly */
    scram_fails("r=XXXXNGfwEbeRWgbNEkqO%hvYDpW,s=W22ZaJ0SNY7soEsUEjb6gQ==,i=4096", NULL,
                "server nonce does not extend the client nonce");
    scram_fails("r=" RFC_NONCE ",s=W22ZaJ0SNY7soEsUEjb6gQ==,i=4096", NULL,
                "server nonce does not extend the client nonce");
    /* iteration counts */
    scram_fails("r=" RFC_NONCE "abc,s=W22ZaJ0SNY7soEsUEjb6gQ==,i=4095", NULL,
                "iteration count 4095 is outside");
    scram_fails("r=" RFC_NONCE "abc,s=W22ZaJ0SNY7soEsUEjb6gQ==,i=4000000000", NULL,
                "iteration count 4000000000 is outside");
    scram_fails("r=" RFC_NONCE "abc,s=W22ZaJ0SNY7soEsUEjb6gQ==,i=99999999999", NULL,
                "invalid iteration count");
    scram_fails("r=" RFC_NONCE "abc,s=W22ZaJ0SNY7soEsUEjb6gQ==,i=-1", NULL, "invalid iteration count");
    scram_fails("r=" RFC_NONCE "abc,s=W22ZaJ0SNY7soEsUEjb6gQ==", NULL, "iteration count (i=)");
    /* salt */
    scram_fails("r=" RFC_NONCE "abc,s=***,i=4096", NULL, "invalid salt");
    scram_fails("r=" RFC_NONCE "abc,s=,i=4096", NULL, "invalid salt");
    scram_fails("r=" RFC_NONCE "abc,i=4096", NULL, "invalid salt");
    /* order, garbage, mandatory extension, empty */
    scram_fails("s=W22ZaJ0SNY7soEsUEjb6gQ==,r=" RFC_NONCE "abc,i=4096", NULL, "no nonce");
    scram_fails("m=ext,r=" RFC_NONCE "abc,s=W22ZaJ0SNY7soEsUEjb6gQ==,i=4096", NULL, "mandatory extension");
    scram_fails("", NULL, "no nonce");
    scram_fails("\xff\xfe garbage", NULL, "no nonce");
    scram_fails(RFC_SERVER_FIRST ",,", NULL, "malformed extension");
    /* server-final: wrong signature, garbage, the server's error */
    scram_fails(NULL, "v=AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=", "invalid server signature");
    scram_fails(NULL, "v=6rriTRBi23WpRR/wtup+mMhUZUn/dB5nLTJRsjl95G4", "malformed");
    scram_fails(NULL, "garbage", "malformed");
    scram_fails(NULL, "", "malformed");
    scram_fails(NULL, "e=invalid-proof", "rejected the client proof: invalid-proof");
}

static void test_scram_parsers_direct(void **state) {
    (void)state;
    knw_scram_server_first sf;
    char err[256];
    const char *m = RFC_SERVER_FIRST;
    assert_int_equal(knw_scram_parse_server_first(m, strlen(m), &sf, err, sizeof err), 0);
    assert_int_equal(sf.iterations, 4096);
    assert_int_equal(sf.salt_len, 16);
    assert_int_equal(sf.nonce_len, strlen("rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0"));
    /* Truncated at every length: an error or (at full length) success,
     * never a read past the end (ASan). */
    for (size_t i = 0; i < strlen(m); i++) {
        char *cut = kn_malloc(i ? i : 1);
        memcpy(cut, m, i);
        knw_scram_parse_server_first(cut, i, &sf, err, sizeof err);
        kn_free(cut);
    }
    uint8_t sig[64];
    size_t sl;
    const char *f = RFC_SERVER_FINAL;
    assert_int_equal(knw_scram_parse_server_final(f, strlen(f), sig, &sl, err, sizeof err), 0);
    assert_int_equal(sl, 32);
    /* NUL inside the message */
    const char nul[] = "r=abc\0def,s=W22ZaJ0SNY7soEsUEjb6gQ==,i=4096";
    assert_int_equal(knw_scram_parse_server_first(nul, sizeof nul - 1, &sf, err, sizeof err),
                     KN_ERR__AUTHENTICATION);
    char esc[64];
    assert_int_equal(knw_scram_escape_name("a,b=c", esc), 9);
    assert_string_equal(esc, "a=2Cb=3Dc");
}

/* SCRAM user names go out escaped; tokenauth adds the extension. */
static void test_scram_client_first_escaping(void **state) {
    (void)state;
    char jaas[256], err[256];
    snprintf(jaas, sizeof jaas,
             "org.apache.kafka.common.security.scram.ScramLoginModule required username=\"a,b=c\" "
             "password=\"p\" tokenauth=\"true\";");
    knw_sasl_conf *sc = NULL;
    assert_int_equal(conf_sasl("SASL_PLAINTEXT", "SCRAM-SHA-512", jaas, &sc, err, sizeof err), 0);
    knw_scram_set_test_nonce("NONCE");
    void *st = NULL;
    knw_sasl_buf out = {0};
    assert_int_equal(knw_sasl_scram_sha512.start(sc, "h", &st, &out, err, sizeof err), 0);
    knw_scram_set_test_nonce(NULL);
    const char *want = "n,,n=a=2Cb=3Dc,r=NONCE,tokenauth=true";
    assert_int_equal(out.len, strlen(want));
    assert_memory_equal(out.ptr, want, out.len);
    kn_free(out.ptr);
    knw_sasl_scram_sha512.free(st);
    /* A random nonce otherwise: 32 printable characters, no comma. */
    assert_int_equal(knw_sasl_scram_sha512.start(sc, "h", &st, &out, err, sizeof err), 0);
    const char *r = memchr(out.ptr, 'r', out.len);
    assert_non_null(r);
    assert_int_equal(out.len - (size_t)((const uint8_t *)r + 2 - out.ptr), strlen(",tokenauth=true") + 32);
    kn_free(out.ptr);
    knw_sasl_scram_sha512.free(st);
    knw_sasl_conf_free(sc);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_jaas_basic),
        cmocka_unit_test(test_jaas_quoting_and_escapes),
        cmocka_unit_test(test_jaas_errors),
        cmocka_unit_test(test_conf_checks),
        cmocka_unit_test(test_jaas_hidden_in_dump),
        cmocka_unit_test(test_plain_token),
        cmocka_unit_test(test_scram_rfc7677),
        cmocka_unit_test(test_scram_extension_accepted),
        cmocka_unit_test(test_scram_bad_server),
        cmocka_unit_test(test_scram_parsers_direct),
        cmocka_unit_test(test_scram_client_first_escaping),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
