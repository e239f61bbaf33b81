/*
 * it_admin_quotas.c: alter_client_quotas and describe_client_quotas
 * against a real broker (KAFKA_BOOTSTRAP): quotas set on a user, a
 * client id and a (user, client id) pair, an unknown quota key failing
 * its entity alone, validate_only, exact / any / strict filters, and
 * removal. Only entities named for this run are touched (no defaults,
 * which would throttle the other tests).
 */
#include "kn_test.h"

#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "kafka_native.h"
#include "kafka_native_admin.h"

#define TIMEOUT_MS 30000

static kn_quota_descriptions *describe(kn_admin *admin, const kn_quota_filter *f, size_t n, int strict) {
    char errstr[512] = "";
    kn_quota_descriptions *d = NULL;
    if (kn_admin_describe_client_quotas(admin, f, n, strict, TIMEOUT_MS, &d, errstr, sizeof(errstr)))
        fail_msg("describe_client_quotas: %s", errstr);
    return d;
}

/* The value of key for the entity at i, or -1. */
static double value_of(const kn_quota_descriptions *d, size_t i, const char *key) {
    for (size_t v = 0; v < kn_quota_descriptions_value_count(d, i); v++)
        if (strcmp(kn_quota_descriptions_value_key(d, i, v), key) == 0)
            return kn_quota_descriptions_value(d, i, v);
    return -1;
}

/* Waits (bounded) until the exact user filter shows `count` entities
 * (applied from the metadata log a moment after the alter). */
static kn_quota_descriptions *wait_user(kn_admin *admin, const char *user, size_t count, const char *key,
                                        double want) {
    kn_quota_filter f = {"user", KN_QUOTA_MATCH_EXACT, user};
    int64_t until = kn_test_now_ms() + TIMEOUT_MS;
    for (;;) {
        kn_quota_descriptions *d = describe(admin, &f, 1, 1);
        if (kn_quota_descriptions_count(d) == count && (!count || value_of(d, 0, key) == want))
            return d;
        kn_quota_descriptions_destroy(d);
        if (kn_test_now_ms() > until)
            fail_msg("user %s: the quota never showed as expected", user);
        struct timespec ts = {0, 100 * 1000000L};
        nanosleep(&ts, NULL);
    }
}

static void test_quotas(void **state) {
    (void)state;
    char errstr[512] = "", user[200], client[200], other[200];
    snprintf(user, sizeof(user), "%s", kn_test_topic("quota-user"));
    snprintf(client, sizeof(client), "%s", kn_test_topic("quota-client"));
    snprintf(other, sizeof(other), "%s", kn_test_topic("quota-other"));
    kn_conf *conf = kn_conf_new(KN_CLIENT_ADMIN);
    kn_test_conf_set(conf, "bootstrap.servers", kn_test_bootstrap());
    kn_admin *admin = kn_admin_new(conf, errstr, sizeof(errstr));
    kn_conf_destroy(conf);
    assert_non_null(admin);

    kn_quota_op ops[] = {
        {{{"user"}, {user}}, "producer_byte_rate", 1024, 0},
        {{{"client-id"}, {client}}, "request_percentage", 50, 0},
        {{{"user"}, {user}}, "consumer_byte_rate", 2048, 0},
        {{{"user", "client-id"}, {user, client}}, "producer_byte_rate", 4096, 0},
        {{{"user"}, {other}}, "no_such_quota", 1, 0},
    };
    kn_quota_descriptions *res = NULL;
    assert_int_equal(kn_admin_alter_client_quotas(admin, ops, 5, 0, TIMEOUT_MS, &res, errstr, sizeof(errstr)),
                     KN_OK);
    assert_int_equal(kn_quota_descriptions_count(res), 4); /* entities, first-appearance order */
    for (size_t i = 0; i < 3; i++)
        if (kn_quota_descriptions_error(res, i))
            fail_msg("entity %zu: %s", i, kn_quota_descriptions_error_message(res, i));
    assert_string_equal(kn_quota_descriptions_part_name(res, 3, 0), other);
    assert_int_not_equal(kn_quota_descriptions_error(res, 3), KN_OK);
    assert_non_null(strstr(kn_quota_descriptions_error_message(res, 3), "no_such_quota"));
    kn_quota_descriptions_destroy(res);

    kn_quota_descriptions *d = wait_user(admin, user, 1, "consumer_byte_rate", 2048);
    assert_int_equal(kn_quota_descriptions_part_count(d, 0), 1);
    assert_string_equal(kn_quota_descriptions_part_type(d, 0, 0), "user");
    assert_string_equal(kn_quota_descriptions_part_name(d, 0, 0), user);
    assert_true(value_of(d, 0, "producer_byte_rate") == 1024);
    kn_quota_descriptions_destroy(d);

    /* Not strict: the (user, client) entity matches the user filter too. */
    kn_quota_filter f = {"user", KN_QUOTA_MATCH_EXACT, user};
    d = describe(admin, &f, 1, 0);
    assert_int_equal(kn_quota_descriptions_count(d), 2);
    kn_quota_descriptions_destroy(d);
    /* Any client id, strict: our client entity is among them. */
    kn_quota_filter any = {"client-id", KN_QUOTA_MATCH_ANY, NULL};
    d = describe(admin, &any, 1, 1);
    bool found = false;
    for (size_t i = 0; i < kn_quota_descriptions_count(d); i++)
        found = found || (kn_quota_descriptions_part_name(d, i, 0) &&
                          strcmp(kn_quota_descriptions_part_name(d, i, 0), client) == 0 &&
                          value_of(d, i, "request_percentage") == 50);
    assert_true(found);
    kn_quota_descriptions_destroy(d);

    /* validate_only changes nothing; remove clears. */
    kn_quota_op bump = {{{"user"}, {user}}, "consumer_byte_rate", 9999, 0};
    assert_int_equal(kn_admin_alter_client_quotas(admin, &bump, 1, KN_ADMIN_VALIDATE_ONLY, TIMEOUT_MS, &res,
                                                  errstr, sizeof(errstr)),
                     KN_OK);
    assert_int_equal(kn_quota_descriptions_error(res, 0), KN_OK);
    kn_quota_descriptions_destroy(res);
    kn_quota_op rm[] = {
        {{{"user"}, {user}}, "producer_byte_rate", 0, 1},
        {{{"user"}, {user}}, "consumer_byte_rate", 0, 1},
        {{{"client-id", "user"}, {client, user}}, "producer_byte_rate", 0, 1}, /* any order */
        {{{"client-id"}, {client}}, "request_percentage", 0, 1},
    };
    assert_int_equal(kn_admin_alter_client_quotas(admin, rm, 4, 0, TIMEOUT_MS, &res, errstr, sizeof(errstr)),
                     KN_OK);
    assert_int_equal(kn_quota_descriptions_count(res), 3);
    for (size_t i = 0; i < 3; i++)
        assert_int_equal(kn_quota_descriptions_error(res, i), KN_OK);
    kn_quota_descriptions_destroy(res);
    kn_quota_descriptions_destroy(wait_user(admin, user, 0, NULL, 0));

    /* A filter the broker refuses fails the call, as in Java. */
    kn_quota_filter bad = {"no-such-type", KN_QUOTA_MATCH_ANY, NULL};
    d = NULL;
    assert_int_not_equal(
        kn_admin_describe_client_quotas(admin, &bad, 1, 0, TIMEOUT_MS, &d, errstr, sizeof(errstr)), KN_OK);
    assert_null(d);
    kn_admin_destroy(admin);
}

int main(void) {
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_quotas)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}
