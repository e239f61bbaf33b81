/*
 * it_admin_tokens.c: delegation tokens against the real broker's
 * SASL_PLAINTEXT listener, the admin logged in as the harness SASL user
 * (SCRAM-SHA-256): a token refused on the unauthenticated PLAINTEXT
 * listener (DELEGATION_TOKEN_REQUEST_NOT_ALLOWED); one created with a
 * renewer, described by owner, used for a SCRAM login with
 * tokenauth=true (our producer sends a record with it), renewed, then
 * expired: it is gone from describe and a login with it is refused.
 */
#include "kn_test.h"

#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "kafka_native.h"
#include "kafka_native_admin.h"
#include "secure.h"

#define TIMEOUT_MS 30000

static void sleep_ms(long ms) {
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

static kn_conf *scram_conf(kn_client_type type, const char *user, const char *password, bool token) {
    char jaas[1024];
    snprintf(jaas, sizeof jaas,
             "org.apache.kafka.common.security.scram.ScramLoginModule required username=\"%s\" "
             "password=\"%s\"%s;",
             user, password, token ? " tokenauth=\"true\"" : "");
    kn_conf *conf = kn_conf_new(type);
    kn_test_conf_set(conf, "bootstrap.servers", kn_secure_env("KAFKA_BOOTSTRAP_SASL_PLAINTEXT"));
    kn_test_conf_set(conf, "security.protocol", "SASL_PLAINTEXT");
    kn_test_conf_set(conf, "sasl.mechanism", "SCRAM-SHA-256");
    kn_test_conf_set(conf, "sasl.jaas.config", jaas);
    return conf;
}

/* One record to topic by a producer logging in with the token: 0 or the
 * error (send's or flush's). */
static int token_send(const char *topic, const char *id, const char *hmac_b64, char *es, size_t esn) {
    kn_conf *conf = scram_conf(KN_CLIENT_PRODUCER, id, hmac_b64, true);
    kn_test_conf_set(conf, "max.block.ms", "10000");
    kn_producer *p = kn_producer_new(conf, NULL, NULL, es, esn);
    kn_conf_destroy(conf);
    if (!p)
        fail_msg("kn_producer_new: %s", es);
    kn_record_out r = KN_RECORD_OUT_INIT;
    r.topic = topic;
    r.partition = 0;
    r.value = "t";
    r.value_len = 1;
    int rc = kn_producer_send(p, &r, es, esn);
    if (!rc)
        rc = kn_producer_flush(p, TIMEOUT_MS);
    kn_producer_close(p, 2000);
    kn_producer_destroy(p);
    return rc;
}

/* Whether describe (by owner) lists token id. */
static bool described(kn_admin *admin, const char *owner, const char *id, kn_delegation_tokens **keep) {
    char es[512] = "";
    kn_delegation_tokens *t = NULL;
    if (kn_admin_describe_delegation_tokens(admin, &owner, 1, TIMEOUT_MS, &t, es, sizeof es))
        fail_msg("describe_delegation_tokens: %s", es);
    bool found = false;
    for (size_t i = 0; i < kn_delegation_tokens_count(t) && !found; i++)
        found = strcmp(kn_delegation_tokens_id(t, i), id) == 0;
    if (keep && found)
        *keep = t;
    else
        kn_delegation_tokens_destroy(t);
    return found;
}

static void test_tokens(void **state) {
    (void)state;
    char es[512] = "", owner[200], renewer[220], topic[200];
    snprintf(owner, sizeof owner, "User:%s", kn_secure_env("KN_SASL_USER"));
    snprintf(renewer, sizeof renewer, "User:%s", kn_test_topic("renewer"));
    snprintf(topic, sizeof topic, "%s", kn_test_topic("token"));
    kn_test_create_topic(topic, 1);

    /* Unauthenticated (PLAINTEXT): the broker refuses. */
    kn_conf *conf = kn_conf_new(KN_CLIENT_ADMIN);
    kn_test_conf_set(conf, "bootstrap.servers", kn_test_bootstrap());
    kn_admin *plain = kn_admin_new(conf, es, sizeof es);
    kn_conf_destroy(conf);
    assert_non_null(plain);
    kn_delegation_tokens *t = NULL;
    assert_int_equal(
        kn_admin_create_delegation_token(plain, NULL, 0, NULL, -1, TIMEOUT_MS, &t, es, sizeof es),
        KN_ERR_DELEGATION_TOKEN_REQUEST_NOT_ALLOWED);
    assert_null(t);
    kn_admin_destroy(plain);

    conf =
        scram_conf(KN_CLIENT_ADMIN, kn_secure_env("KN_SASL_USER"), kn_secure_env("KN_SASL_PASSWORD"), false);
    kn_admin *admin = kn_admin_new(conf, es, sizeof es);
    kn_conf_destroy(conf);
    assert_non_null(admin);
    const char *renewers[] = {renewer};
    if (kn_admin_create_delegation_token(admin, renewers, 1, NULL, 3600000, TIMEOUT_MS, &t, es, sizeof es))
        fail_msg("create_delegation_token: %s", es);
    assert_int_equal(kn_delegation_tokens_count(t), 1);
    char id[128], hmac_b64[128];
    snprintf(id, sizeof id, "%s", kn_delegation_tokens_id(t, 0));
    snprintf(hmac_b64, sizeof hmac_b64, "%s", kn_delegation_tokens_hmac_base64(t, 0));
    size_t hlen = 0;
    uint8_t hmac[64];
    const uint8_t *h = kn_delegation_tokens_hmac(t, 0, &hlen);
    assert_true(hlen > 0 && hlen <= sizeof hmac);
    memcpy(hmac, h, hlen);
    assert_string_equal(kn_delegation_tokens_owner(t, 0), owner);
    assert_string_equal(kn_delegation_tokens_requester(t, 0), owner);
    int64_t issued = kn_delegation_tokens_issue_ms(t, 0), expiry = kn_delegation_tokens_expiry_ms(t, 0);
    assert_true(issued > 0 && expiry > issued);
    assert_true(kn_delegation_tokens_max_ms(t, 0) <= issued + 3600000);
    kn_delegation_tokens_destroy(t);

    /* Described by owner, with its renewer (bounded: from the metadata log). */
    t = NULL;
    int64_t until = kn_test_now_ms() + TIMEOUT_MS;
    while (!described(admin, owner, id, &t)) {
        if (kn_test_now_ms() > until)
            fail_msg("token %s never described", id);
        sleep_ms(100);
    }
    size_t i = 0;
    while (strcmp(kn_delegation_tokens_id(t, i), id) != 0)
        i++;
    assert_int_equal(kn_delegation_tokens_renewer_count(t, i), 1);
    assert_string_equal(kn_delegation_tokens_renewer(t, i, 0), renewer);
    assert_string_equal(kn_delegation_tokens_hmac_base64(t, i), hmac_b64);
    kn_delegation_tokens_destroy(t);

    /* The token logs in: SCRAM with tokenauth=true. */
    int rc;
    until = kn_test_now_ms() + TIMEOUT_MS;
    while ((rc = token_send(topic, id, hmac_b64, es, sizeof es)) != KN_OK) {
        if (kn_test_now_ms() > until)
            fail_msg("send with the token: %s: %s", kn_err_name(rc), es);
        sleep_ms(200);
    }

    int64_t renewed = 0;
    if (kn_admin_renew_delegation_token(admin, hmac, hlen, 600000, TIMEOUT_MS, &renewed, es, sizeof es))
        fail_msg("renew: %s", es);
    assert_true(renewed > issued);
    int64_t expired = 0;
    if (kn_admin_expire_delegation_token(admin, hmac, hlen, -1, TIMEOUT_MS, &expired, es, sizeof es))
        fail_msg("expire: %s", es);
    until = kn_test_now_ms() + TIMEOUT_MS;
    while (described(admin, owner, id, NULL)) {
        if (kn_test_now_ms() > until)
            fail_msg("expired token %s still described", id);
        sleep_ms(100);
    }
    until = kn_test_now_ms() + TIMEOUT_MS;
    while ((rc = token_send(topic, id, hmac_b64, es, sizeof es)) != KN_ERR__AUTHENTICATION) {
        if (kn_test_now_ms() > until)
            fail_msg("send with the expired token: %s (%s), want _AUTHENTICATION", kn_err_name(rc), es);
        sleep_ms(200);
    }
    /* Renewing what is gone is the broker's error, for the whole call. */
    assert_int_equal(
        kn_admin_renew_delegation_token(admin, hmac, hlen, 1000, TIMEOUT_MS, NULL, es, sizeof es),
        KN_ERR_DELEGATION_TOKEN_NOT_FOUND);
    assert_int_equal(
        kn_admin_create_delegation_token(admin, NULL, 0, "nocolon", -1, TIMEOUT_MS, &t, es, sizeof es),
        KN_ERR__INVALID_ARG);
    kn_admin_destroy(admin);
}

int main(void) {
    kn_test_bootstrap();
    static const char *const need[] = {"KAFKA_BOOTSTRAP_SASL_PLAINTEXT", "KN_SASL_USER", "KN_SASL_PASSWORD",
                                       NULL};
    int gate = kn_secure_need("it_admin_tokens", need);
    if (gate)
        return gate;
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_tokens)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}
