/*
 * test_gssapi_units.c: the GSSAPI mechanism's configuration, without a
 * KDC: sasl.kerberos.service.name required (the JAAS serviceName option
 * wins), Krb5LoginModule's credential options checked (useKeyTab needs
 * keyTab and principal; without useKeyTab, useTicketCache), the
 * sasl.kerberos.* re-login settings read and copied, no value in an
 * error message, and the GSS status text. A build without Kerberos
 * refuses the mechanism with that reason. The exchange itself is
 * proven against the broker and the harness KDC (it_gssapi.c).
 */
#include "kn_test.h"

#include <stdio.h>
#include <string.h>

#include "config/config.h"
#include "wire/sasl/gssapi_worker.h"
#include "wire/sasl/jaas.h"
#include "wire/sasl/sasl.h"

#define KT "com.sun.security.auth.module.Krb5LoginModule required "

static int conf_gssapi(const char *service, const char *jaas, const char *factor, knw_sasl_conf **out,
                       char *err, size_t n) {
    kn_conf *conf = kn_conf_new(KN_CLIENT_CONSUMER);
    kn_test_conf_set(conf, "security.protocol", "SASL_SSL");
    kn_test_conf_set(conf, "sasl.mechanism", "GSSAPI");
    if (service)
        kn_test_conf_set(conf, "sasl.kerberos.service.name", service);
    if (factor)
        kn_test_conf_set(conf, "sasl.kerberos.ticket.renew.window.factor", factor);
    kn_test_conf_set(conf, "sasl.kerberos.min.time.before.relogin", "1234");
    kn_test_conf_set(conf, "sasl.jaas.config", jaas);
    int rc = knw_sasl_conf_from(conf, out, err, n);
    kn_conf_destroy(conf);
    return rc;
}

#ifdef KN_HAVE_GSSAPI

static void test_keytab_conf(void **state) {
    (void)state;
    knw_sasl_conf *sc = NULL, *copy = NULL;
    char err[512];
    assert_int_equal(conf_gssapi("kafka", KT "useKeyTab=true keyTab=\"/k.keytab\" principal=\"app@R\";",
                                 "0.7", &sc, err, sizeof err),
                     0);
    assert_ptr_equal(sc->mech, &knw_sasl_gssapi);
    assert_string_equal(sc->krb_service, "kafka");
    assert_true(sc->krb_renew_factor > 0.69 && sc->krb_renew_factor < 0.71);
    assert_true(sc->krb_renew_jitter > 0.049 && sc->krb_renew_jitter < 0.051); /* Java's default */
    assert_int_equal(sc->krb_min_relogin_ms, 1234);
    assert_int_equal(knw_sasl_conf_copy(&copy, sc), 0);
    assert_string_equal(copy->krb_service, "kafka");
    assert_int_equal(copy->krb_min_relogin_ms, 1234);
    knw_sasl_conf_free(copy);
    knw_sasl_conf_free(sc);
    /* Java: the JAAS serviceName option wins over the key, and stands
     * in for it. */
    assert_int_equal(
        conf_gssapi("kafka", KT "useTicketCache=true serviceName=\"other\";", NULL, &sc, err, sizeof err), 0);
    assert_string_equal(sc->krb_service, "other");
    knw_sasl_conf_free(sc);
    assert_int_equal(
        conf_gssapi(NULL, KT "useTicketCache=true serviceName=\"k2\";", NULL, &sc, err, sizeof err), 0);
    assert_string_equal(sc->krb_service, "k2");
    knw_sasl_conf_free(sc);
}

static void test_conf_errors(void **state) {
    (void)state;
    knw_sasl_conf *sc = NULL;
    char err[512];
    assert_int_equal(conf_gssapi(NULL, KT "useTicketCache=true;", NULL, &sc, err, sizeof err),
                     KN_ERR__CONFIG);
    assert_null(sc);
    assert_non_null(strstr(err, "sasl.kerberos.service.name is required for sasl.mechanism GSSAPI"));
    assert_int_equal(conf_gssapi("", KT "useTicketCache=true;", NULL, &sc, err, sizeof err), KN_ERR__CONFIG);
    assert_non_null(strstr(err, "sasl.kerberos.service.name is required"));
    assert_int_equal(
        conf_gssapi("kafka", KT "useKeyTab=true principal=\"secret-name@R\";", NULL, &sc, err, sizeof err),
        KN_ERR__CONFIG);
    assert_non_null(strstr(err, "keyTab is required with useKeyTab=true"));
    assert_null(strstr(err, "secret-name"));
    assert_int_equal(
        conf_gssapi("kafka", KT "useKeyTab=true keyTab=\"/secret/k\";", NULL, &sc, err, sizeof err),
        KN_ERR__CONFIG);
    assert_non_null(strstr(err, "principal is required with useKeyTab=true"));
    assert_null(strstr(err, "/secret/k"));
    /* Neither source: Java would prompt for a password. */
    assert_int_equal(conf_gssapi("kafka", KT "storeKey=true;", NULL, &sc, err, sizeof err), KN_ERR__CONFIG);
    assert_non_null(strstr(err, "useKeyTab=true (with keyTab and principal) or useTicketCache=true"));
    assert_int_equal(
        conf_gssapi("kafka", KT "useKeyTab=false useTicketCache=false;", NULL, &sc, err, sizeof err),
        KN_ERR__CONFIG);
    /* Another mechanism's login module. */
    assert_int_equal(
        conf_gssapi("kafka",
                    "org.apache.kafka.common.security.plain.PlainLoginModule required username=\"u\" "
                    "password=\"p\";",
                    NULL, &sc, err, sizeof err),
        KN_ERR__CONFIG);
    assert_non_null(strstr(err, "use com.sun.security.auth.module.Krb5LoginModule"));
}

static void test_relogin_point(void **state) {
    (void)state;
    const int64_t h = 3600 * 1000;
    /* A 10 h TGT: at 80 % + up to 5 % of it (Java's defaults). */
    assert_int_equal(knw_krb_relogin_point(0.8, 0.05, 60000, 0.0, 0, 10 * h, 0), 8 * h);
    assert_int_equal(knw_krb_relogin_point(0.8, 0.05, 60000, 1.0, 0, 10 * h, 0), 8 * h + h / 2);
    /* A 15 s ticket with min.time.before.relogin 60 s: the minimum would
     * let it expire, so the factor's point stands (12 s). */
    assert_int_equal(knw_krb_relogin_point(0.8, 0.05, 60000, 0.0, 0, 15000, 0), 12000);
    /* 100 s ticket, 90 s minimum: 80 s is moved to 90 s (before expiry). */
    assert_int_equal(knw_krb_relogin_point(0.8, 0.0, 90000, 0.0, 0, 100000, 0), 90000);
    /* A ticket obtained earlier (start before now) keeps its own clock. */
    assert_int_equal(knw_krb_relogin_point(0.5, 0.0, 1000, 0.0, 0, 20000, 5000), 10000);
}

static void test_gss_status_text(void **state) {
    (void)state;
    char buf[300];
    /* GSS_S_FAILURE (0xd0000) with no minor code: the routine text only. */
    knw_gss_status(0xd0000u, 0, buf, sizeof buf);
    assert_non_null(strstr(buf, "Unspecified GSS failure"));
    /* A tiny buffer is filled, not overrun. */
    char tiny[8];
    knw_gss_status(0xd0000u, 0, tiny, sizeof tiny);
    assert_int_equal(strlen(tiny), sizeof tiny - 1);
}

#else

static void test_not_in_build(void **state) {
    (void)state;
    knw_sasl_conf *sc = NULL;
    char err[512];
    assert_int_equal(conf_gssapi("kafka", KT "useTicketCache=true;", NULL, &sc, err, sizeof err),
                     KN_ERR__CONFIG);
    assert_non_null(strstr(err, "sasl.mechanism GSSAPI is not in this build"));
}

#endif

int main(void) {
    const struct CMUnitTest tests[] = {
#ifdef KN_HAVE_GSSAPI
        cmocka_unit_test(test_keytab_conf),
        cmocka_unit_test(test_conf_errors),
        cmocka_unit_test(test_relogin_point),
        cmocka_unit_test(test_gss_status_text),
#else
        cmocka_unit_test(test_not_in_build),
#endif
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
