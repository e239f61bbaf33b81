/*
 * it_admin_scram.c: alter_user_scram_credentials and
 * describe_user_scram_credentials against a real broker
 * (KAFKA_BOOTSTRAP): credentials for two mechanisms upserted (salted
 * here, a random salt and a given one), too few iterations failing its
 * user alone, deleting a credential that is not there, describing named
 * users (one without credentials failing alone) and all users, and a
 * deletion; and a SASL login over the broker's SASL_PLAINTEXT listener
 * as a fresh user whose SCRAM-SHA-256 and SCRAM-SHA-512 credentials our
 * admin salted and set (a wrong password refused; the harness user is
 * never touched).
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

static size_t user_index(const kn_scram_credentials *c, const char *user) {
    for (size_t i = 0; i < kn_scram_credentials_count(c); i++)
        if (strcmp(kn_scram_credentials_user(c, i), user) == 0)
            return i;
    fail_msg("no entry for %s", user);
    return 0;
}

/* Iterations of user's mechanism (0: none), waiting (bounded) until it
 * is want (applied from the metadata log after the answer). */
static void wait_iterations(kn_admin *admin, const char *user, int mechanism, int32_t want) {
    int64_t until = kn_test_now_ms() + TIMEOUT_MS;
    int32_t seen = -1;
    for (;;) {
        kn_scram_credentials *c = NULL;
        char errstr[512] = "";
        if (kn_admin_describe_user_scram_credentials(admin, &user, 1, TIMEOUT_MS, &c, errstr, sizeof(errstr)))
            fail_msg("describe: %s", errstr);
        seen = 0;
        for (size_t k = 0; k < kn_scram_credentials_mechanism_count(c, 0); k++)
            if (kn_scram_credentials_mechanism(c, 0, k) == mechanism)
                seen = kn_scram_credentials_iterations(c, 0, k);
        kn_scram_credentials_destroy(c);
        if (seen == want)
            return;
        if (kn_test_now_ms() > until)
            fail_msg("%s mechanism %d: %d iterations, want %d", user, mechanism, seen, want);
        struct timespec ts = {0, 100 * 1000000L};
        nanosleep(&ts, NULL);
    }
}

static void test_scram(void **state) {
    (void)state;
    char errstr[512] = "", alice[200], bob[200], carol[200];
    snprintf(alice, sizeof(alice), "%s", kn_test_topic("alice"));
    snprintf(bob, sizeof(bob), "%s", kn_test_topic("bob"));
    snprintf(carol, sizeof(carol), "%s", kn_test_topic("carol"));
    kn_conf *conf = kn_conf_new(KN_CLIENT_ADMIN);
    kn_test_conf_set(conf, "bootstrap.servers", kn_test_bootstrap());
    kn_admin *admin = kn_admin_new(conf, errstr, sizeof(errstr));
    kn_conf_destroy(conf);
    assert_non_null(admin);

    static const uint8_t salt[] = "fixed-salt";
    kn_scram_op ops[] = {
        {alice, KN_SCRAM_SHA_256, "secret-1", 4096, NULL, 0},
        {bob, KN_SCRAM_SHA_256, "weak", 100, NULL, 0}, /* too few iterations */
        {carol, KN_SCRAM_SHA_512, NULL, 0, NULL, 0},   /* delete what is not there */
    };
    kn_scram_credentials *res = NULL;
    assert_int_equal(
        kn_admin_alter_user_scram_credentials(admin, ops, 3, TIMEOUT_MS, &res, errstr, sizeof(errstr)),
        KN_OK);
    assert_int_equal(kn_scram_credentials_count(res), 3); /* one per user */
    size_t a = user_index(res, alice), b = user_index(res, bob), c = user_index(res, carol);
    if (kn_scram_credentials_error(res, a))
        fail_msg("alice: %s", kn_scram_credentials_error_message(res, a));
    assert_int_equal(kn_scram_credentials_error(res, b), KN_ERR_UNACCEPTABLE_CREDENTIAL);
    assert_non_null(kn_scram_credentials_error_message(res, b));
    assert_int_equal(kn_scram_credentials_error(res, c), KN_ERR_RESOURCE_NOT_FOUND);
    kn_scram_credentials_destroy(res);

    /* A user altered twice in one call: the broker refuses that user
     * (DUPLICATE_RESOURCE), as it does for Java. */
    kn_scram_op twice[] = {
        {carol, KN_SCRAM_SHA_256, "c1", 4096, NULL, 0},
        {carol, KN_SCRAM_SHA_512, "c2", 4096, NULL, 0},
    };
    assert_int_equal(
        kn_admin_alter_user_scram_credentials(admin, twice, 2, TIMEOUT_MS, &res, errstr, sizeof(errstr)),
        KN_OK);
    assert_int_equal(kn_scram_credentials_count(res), 1);
    assert_int_equal(kn_scram_credentials_error(res, 0), KN_ERR_DUPLICATE_RESOURCE);
    kn_scram_credentials_destroy(res);

    /* A second mechanism, with a given salt. */
    kn_scram_op more = {alice, KN_SCRAM_SHA_512, "secret-2", 8192, salt, sizeof(salt) - 1};
    assert_int_equal(
        kn_admin_alter_user_scram_credentials(admin, &more, 1, TIMEOUT_MS, &res, errstr, sizeof(errstr)),
        KN_OK);
    assert_int_equal(kn_scram_credentials_error(res, 0), KN_OK);
    kn_scram_credentials_destroy(res);

    wait_iterations(admin, alice, KN_SCRAM_SHA_256, 4096);
    wait_iterations(admin, alice, KN_SCRAM_SHA_512, 8192);

    /* Named users: bob has none and fails alone; all users include alice. */
    const char *both[2] = {alice, bob};
    assert_int_equal(
        kn_admin_describe_user_scram_credentials(admin, both, 2, TIMEOUT_MS, &res, errstr, sizeof(errstr)),
        KN_OK);
    assert_int_equal(kn_scram_credentials_mechanism_count(res, user_index(res, alice)), 2);
    assert_int_equal(kn_scram_credentials_error(res, user_index(res, bob)), KN_ERR_RESOURCE_NOT_FOUND);
    kn_scram_credentials_destroy(res);
    assert_int_equal(
        kn_admin_describe_user_scram_credentials(admin, NULL, 0, TIMEOUT_MS, &res, errstr, sizeof(errstr)),
        KN_OK);
    assert_int_equal(kn_scram_credentials_error(res, user_index(res, alice)), KN_OK);
    kn_scram_credentials_destroy(res);

    /* Deleting one mechanism leaves the other. */
    kn_scram_op del = {alice, KN_SCRAM_SHA_512, NULL, 0, NULL, 0};
    assert_int_equal(
        kn_admin_alter_user_scram_credentials(admin, &del, 1, TIMEOUT_MS, &res, errstr, sizeof(errstr)),
        KN_OK);
    assert_int_equal(kn_scram_credentials_error(res, 0), KN_OK);
    kn_scram_credentials_destroy(res);
    wait_iterations(admin, alice, KN_SCRAM_SHA_512, 0);
    wait_iterations(admin, alice, KN_SCRAM_SHA_256, 4096);
    kn_scram_op del2 = {alice, KN_SCRAM_SHA_256, NULL, 0, NULL, 0};
    assert_int_equal(
        kn_admin_alter_user_scram_credentials(admin, &del2, 1, TIMEOUT_MS, &res, errstr, sizeof(errstr)),
        KN_OK);
    kn_scram_credentials_destroy(res);

    kn_scram_op bad = {alice, KN_SCRAM_SHA_256, "x", 0, NULL, 0};
    assert_int_equal(
        kn_admin_alter_user_scram_credentials(admin, &bad, 1, TIMEOUT_MS, &res, errstr, sizeof(errstr)),
        KN_ERR__INVALID_ARG);
    kn_admin_destroy(admin);
}

/* A producer logging in as user/password with mechanism sends one
 * record to topic: 0, or the send's / flush's error. */
static int login_send(const char *mechanism, const char *user, const char *password, const char *topic) {
    char jaas[512], es[512] = "";
    snprintf(
        jaas, sizeof jaas,
        "org.apache.kafka.common.security.scram.ScramLoginModule required username=\"%s\" password=\"%s\";",
        user, password);
    kn_conf *conf = kn_conf_new(KN_CLIENT_PRODUCER);
    kn_test_conf_set(conf, "bootstrap.servers", kn_secure_env("KAFKA_BOOTSTRAP_SASL_PLAINTEXT"));
    kn_test_conf_set(conf, "security.protocol", "SASL_PLAINTEXT");
    kn_test_conf_set(conf, "sasl.mechanism", mechanism);
    kn_test_conf_set(conf, "sasl.jaas.config", jaas);
    kn_test_conf_set(conf, "max.block.ms", "10000");
    kn_producer *p = kn_producer_new(conf, NULL, NULL, es, sizeof es);
    kn_conf_destroy(conf);
    if (!p)
        fail_msg("kn_producer_new: %s", es);
    kn_record_out r = KN_RECORD_OUT_INIT;
    r.topic = topic;
    r.partition = 0;
    r.value = "s";
    r.value_len = 1;
    int rc = kn_producer_send(p, &r, es, sizeof es);
    if (!rc)
        rc = kn_producer_flush(p, TIMEOUT_MS);
    kn_producer_close(p, 2000);
    kn_producer_destroy(p);
    return rc;
}

static void test_scram_login(void **state) {
    (void)state;
    if (!kn_secure_env("KAFKA_BOOTSTRAP_SASL_PLAINTEXT")) {
        if (kn_secure_env("KN_TEST_REQUIRE_SECURE") && !strcmp(kn_secure_env("KN_TEST_REQUIRE_SECURE"), "1"))
            fail_msg("KAFKA_BOOTSTRAP_SASL_PLAINTEXT not set (tools/kafka/broker env)");
        skip();
    }
    char errstr[512] = "", user[200], topic[200];
    snprintf(user, sizeof(user), "%s", kn_test_topic("scram-login"));
    snprintf(topic, sizeof(topic), "%s", kn_test_topic("scram-login-topic"));
    kn_test_create_topic(topic, 1);
    kn_conf *conf = kn_conf_new(KN_CLIENT_ADMIN);
    kn_test_conf_set(conf, "bootstrap.servers", kn_test_bootstrap());
    kn_admin *admin = kn_admin_new(conf, errstr, sizeof(errstr));
    kn_conf_destroy(conf);
    assert_non_null(admin);
    kn_scram_op up[] = {{user, KN_SCRAM_SHA_256, "pw-256", 4096, NULL, 0}};
    kn_scram_op up512 = {user, KN_SCRAM_SHA_512, "pw-512", 4096, NULL, 0};
    kn_scram_credentials *res = NULL;
    for (int k = 0; k < 2; k++) { /* one call per mechanism: the broker refuses a user twice in one */
        assert_int_equal(kn_admin_alter_user_scram_credentials(admin, k ? &up512 : up, 1, TIMEOUT_MS, &res,
                                                               errstr, sizeof(errstr)),
                         KN_OK);
        assert_int_equal(kn_scram_credentials_error(res, 0), KN_OK);
        kn_scram_credentials_destroy(res);
    }
    wait_iterations(admin, user, KN_SCRAM_SHA_256, 4096);
    wait_iterations(admin, user, KN_SCRAM_SHA_512, 4096);
    /* Every broker applies credentials from the metadata log: bounded. */
    const char *mechs[2] = {"SCRAM-SHA-256", "SCRAM-SHA-512"}, *pws[2] = {"pw-256", "pw-512"};
    for (int k = 0; k < 2; k++) {
        int64_t until = kn_test_now_ms() + TIMEOUT_MS;
        int rc;
        while ((rc = login_send(mechs[k], user, pws[k], topic)) != KN_OK) {
            if (kn_test_now_ms() > until)
                fail_msg("%s login as %s: %s", mechs[k], user, kn_err_name(rc));
            struct timespec ts = {0, 200 * 1000000L};
            nanosleep(&ts, NULL);
        }
    }
    assert_int_equal(login_send("SCRAM-SHA-256", user, "pw-512", topic), KN_ERR__AUTHENTICATION);
    kn_scram_op del[2] = {{user, KN_SCRAM_SHA_256, NULL, 0, NULL, 0},
                          {user, KN_SCRAM_SHA_512, NULL, 0, NULL, 0}};
    for (int k = 0; k < 2; k++) {
        assert_int_equal(kn_admin_alter_user_scram_credentials(admin, &del[k], 1, TIMEOUT_MS, &res, errstr,
                                                               sizeof(errstr)),
                         KN_OK);
        kn_scram_credentials_destroy(res);
    }
    kn_admin_destroy(admin);
}

int main(void) {
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_scram), cmocka_unit_test(test_scram_login)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}
