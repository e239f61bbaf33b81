/*
 * it_admin_configs.c: describe_configs, incremental_alter_configs and
 * alter_configs against a real broker (KAFKA_BOOTSTRAP): entries with
 * source, type, documentation and synonyms; a broker resource routed to
 * its own broker; per-resource errors (missing topic, unknown config
 * key, a broker name that is no id, an unknown resource type) that leave
 * the other resources of the call alone; SET / APPEND / SUBTRACT /
 * DELETE; validate_only; the legacy call replacing a whole config.
 */
#include "kn_test.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "kafka_native.h"
#include "kafka_native_admin.h"

#define TIMEOUT_MS 30000

static int setup(void **state) {
    char errstr[512] = "";
    kn_conf *conf = kn_conf_new(KN_CLIENT_ADMIN);
    kn_test_conf_set(conf, "bootstrap.servers", kn_test_bootstrap());
    kn_admin *admin = kn_admin_new(conf, errstr, sizeof(errstr));
    kn_conf_destroy(conf);
    if (!admin)
        fail_msg("kn_admin_new: %s", errstr);
    *state = admin;
    return 0;
}

static int teardown(void **state) {
    kn_admin_destroy(*state);
    return 0;
}

/* The id of the first broker, as a string (a broker resource's name). */
static void first_broker(kn_admin *admin, char out[16]) {
    char errstr[512] = "";
    kn_cluster_description *cd = NULL;
    if (kn_admin_describe_cluster(admin, TIMEOUT_MS, &cd, errstr, sizeof(errstr)))
        fail_msg("describe_cluster: %s", errstr);
    snprintf(out, 16, "%d", (int)kn_cluster_description_broker_id(cd, 0));
    kn_cluster_description_destroy(cd);
}

static kn_config_descriptions *describe(kn_admin *admin, const kn_config_resource *res, size_t n, int flags) {
    char errstr[512] = "";
    kn_config_descriptions *desc = NULL;
    int err = kn_admin_describe_configs(admin, res, n, flags, TIMEOUT_MS, &desc, errstr, sizeof(errstr));
    if (err)
        fail_msg("describe_configs: %s: %s", kn_err_name(err), errstr);
    return desc;
}

/* Waits (bounded) until key on one resource shows want_value (NULL:
 * any) from want_source, and fails the test otherwise. An alteration is
 * committed by the controller before it answers, but a broker applies it
 * from the metadata log a moment later, so reads are eventually
 * consistent (for Java too). */
static void wait_value(kn_admin *admin, int8_t type, const char *name, const char *key, int want_source,
                       const char *want_value) {
    kn_config_resource r = {type, name};
    char seen[300] = "";
    int64_t until = kn_test_now_ms() + TIMEOUT_MS;
    for (;;) {
        kn_config_descriptions *desc = describe(admin, &r, 1, 0);
        assert_int_equal(kn_config_descriptions_error(desc, 0), KN_OK);
        const kn_config_entry *e = kn_config_descriptions_find(desc, 0, key);
        if (!e)
            fail_msg("%s has no config %s", name, key);
        const char *v = kn_config_entry_value(e) ? kn_config_entry_value(e) : "(null)";
        bool ok = kn_config_entry_source(e) == want_source && (!want_value || strcmp(v, want_value) == 0);
        snprintf(seen, sizeof(seen), "%s from %s", v, kn_config_source_name(kn_config_entry_source(e)));
        kn_config_descriptions_destroy(desc);
        if (ok)
            return;
        if (kn_test_now_ms() > until)
            fail_msg("%s %s: %s, want %s from %s", name, key, seen, want_value ? want_value : "any",
                     kn_config_source_name(want_source));
        struct timespec ts = {0, 100 * 1000000L};
        nanosleep(&ts, NULL);
    }
}

static void topic_value(kn_admin *admin, const char *topic, const char *key, int want_source,
                        const char *want_value) {
    wait_value(admin, KN_CONFIG_RESOURCE_TOPIC, topic, key, want_source, want_value);
}

static kn_config_results *alter(kn_admin *admin, const kn_config_op *ops, size_t n, int flags, bool legacy) {
    char errstr[512] = "";
    kn_config_results *res = NULL;
    int err = legacy ? kn_admin_alter_configs(admin, ops, n, flags, TIMEOUT_MS, &res, errstr, sizeof(errstr))
                     : kn_admin_incremental_alter_configs(admin, ops, n, flags, TIMEOUT_MS, &res, errstr,
                                                          sizeof(errstr));
    if (err)
        fail_msg("alter configs: %s: %s", kn_err_name(err), errstr);
    return res;
}

static void expect_ok(const kn_config_results *res, size_t i) {
    if (kn_config_results_error(res, i))
        fail_msg("%s: %s", kn_config_results_resource_name(res, i), kn_config_results_error_message(res, i));
}

static void test_describe(void **state) {
    kn_admin *admin = *state;
    char topic[200], missing[200], broker[16];
    snprintf(topic, sizeof(topic), "%s", kn_test_topic("cfg-describe"));
    snprintf(missing, sizeof(missing), "%s", kn_test_topic("cfg-missing"));
    kn_test_create_topic(topic, 1);
    first_broker(admin, broker);

    kn_config_resource res[] = {
        {KN_CONFIG_RESOURCE_TOPIC, topic},
        {KN_CONFIG_RESOURCE_TOPIC, missing},
        {KN_CONFIG_RESOURCE_BROKER, broker},
        {KN_CONFIG_RESOURCE_BROKER, "abc"},
        {KN_CONFIG_RESOURCE_BROKER, ""},
        {KN_CONFIG_RESOURCE_TOPIC, topic}, /* twice: one entry */
        {99, "x"},
    };
    kn_config_descriptions *desc =
        describe(admin, res, 7, KN_ADMIN_CONFIG_SYNONYMS | KN_ADMIN_CONFIG_DOCUMENTATION);
    assert_int_equal(kn_config_descriptions_count(desc), 6);
    assert_string_equal(kn_config_descriptions_resource_name(desc, 0), topic); /* request order */
    assert_int_equal(kn_config_descriptions_resource_type(desc, 0), KN_CONFIG_RESOURCE_TOPIC);

    /* The topic: every topic config, defaults documented, typed, with
     * the broker default among its synonyms. */
    assert_int_equal(kn_config_descriptions_error(desc, 0), KN_OK);
    assert_null(kn_config_descriptions_error_message(desc, 0));
    assert_true(kn_config_descriptions_entry_count(desc, 0) > 20);
    const kn_config_entry *e = kn_config_descriptions_find(desc, 0, "retention.ms");
    assert_non_null(e);
    assert_string_equal(kn_config_entry_value(e), "604800000");
    assert_int_equal(kn_config_entry_source(e), KN_CONFIG_SOURCE_DEFAULT_CONFIG);
    assert_string_equal(kn_config_type_name(kn_config_entry_type(e)), "LONG");
    assert_false(kn_config_entry_is_read_only(e));
    assert_false(kn_config_entry_is_sensitive(e));
    assert_non_null(kn_config_entry_documentation(e));
    assert_non_null(strstr(kn_config_entry_documentation(e), "retain"));
    e = kn_config_descriptions_find(desc, 0, "cleanup.policy");
    assert_non_null(e);
    assert_string_equal(kn_config_type_name(kn_config_entry_type(e)), "LIST");
    assert_int_equal(kn_config_entry_synonym_count(e), 1);
    assert_string_equal(kn_config_entry_synonym_name(e, 0), "log.cleanup.policy");
    assert_string_equal(kn_config_entry_synonym_value(e, 0), "delete");
    assert_int_equal(kn_config_entry_synonym_source(e, 0), KN_CONFIG_SOURCE_DEFAULT_CONFIG);

    /* The missing topic fails alone. */
    assert_int_equal(kn_config_descriptions_error(desc, 1), KN_ERR_UNKNOWN_TOPIC_OR_PARTITION);
    assert_non_null(kn_config_descriptions_error_message(desc, 1));
    assert_int_equal(kn_config_descriptions_entry_count(desc, 1), 0);

    /* The broker by id (sent to that broker): its static settings show
     * as STATIC_BROKER_CONFIG; sensitive values are hidden. */
    assert_int_equal(kn_config_descriptions_error(desc, 2), KN_OK);
    e = kn_config_descriptions_find(desc, 2, "offsets.topic.replication.factor");
    assert_non_null(e);
    assert_int_equal(kn_config_entry_source(e), KN_CONFIG_SOURCE_STATIC_BROKER_CONFIG);
    assert_true(kn_config_entry_synonym_count(e) >= 1);
    assert_int_equal(kn_config_entry_synonym_source(e, 0), KN_CONFIG_SOURCE_STATIC_BROKER_CONFIG);
    for (size_t k = 0; k < kn_config_descriptions_entry_count(desc, 2); k++) {
        const kn_config_entry *x = kn_config_descriptions_entry(desc, 2, k);
        if (kn_config_entry_is_sensitive(x))
            assert_null(kn_config_entry_value(x));
    }

    /* A broker name that is no id fails alone, named, without a request. */
    assert_int_equal(kn_config_descriptions_error(desc, 3), KN_ERR_INVALID_REQUEST);
    assert_non_null(strstr(kn_config_descriptions_error_message(desc, 3), "'abc'"));

    /* The cluster-wide broker default "" answers (dynamic defaults only:
     * none set here, so it may be empty). */
    assert_int_equal(kn_config_descriptions_error(desc, 4), KN_OK);

    /* An unknown resource type fails alone (the broker would reject the
     * whole request for it, so it is never sent). */
    assert_int_equal(kn_config_descriptions_resource_type(desc, 5), 99);
    assert_int_equal(kn_config_descriptions_error(desc, 5), KN_ERR_INVALID_REQUEST);
    assert_non_null(strstr(kn_config_descriptions_error_message(desc, 5), "type 99"));
    kn_config_descriptions_destroy(desc);

    /* A broker's loggers (sent to that broker) and a group's configs. */
    kn_config_resource more[2] = {{KN_CONFIG_RESOURCE_BROKER_LOGGER, broker},
                                  {KN_CONFIG_RESOURCE_GROUP, "any-group"}};
    desc = describe(admin, more, 2, 0);
    assert_int_equal(kn_config_descriptions_error(desc, 0), KN_OK);
    assert_true(kn_config_descriptions_entry_count(desc, 0) > 10);
    assert_int_equal(kn_config_entry_source(kn_config_descriptions_entry(desc, 0, 0)),
                     KN_CONFIG_SOURCE_DYNAMIC_BROKER_LOGGER_CONFIG);
    assert_int_equal(kn_config_descriptions_error(desc, 1), KN_OK);
    const kn_config_entry *ge = kn_config_descriptions_find(desc, 1, "consumer.session.timeout.ms");
    assert_non_null(ge);
    assert_int_equal(kn_config_entry_source(ge), KN_CONFIG_SOURCE_DEFAULT_CONFIG);
    kn_config_descriptions_destroy(desc);

    /* Without the options: no synonyms, no documentation. */
    desc = describe(admin, res, 1, 0);
    e = kn_config_descriptions_find(desc, 0, "retention.ms");
    assert_non_null(e);
    assert_int_equal(kn_config_entry_synonym_count(e), 0);
    assert_null(kn_config_entry_documentation(e));
    kn_config_descriptions_destroy(desc);
}

static void test_incremental_alter(void **state) {
    kn_admin *admin = *state;
    char topic[200], other[200], missing[200], broker[16];
    snprintf(topic, sizeof(topic), "%s", kn_test_topic("cfg-alter"));
    snprintf(other, sizeof(other), "%s", kn_test_topic("cfg-other"));
    snprintf(missing, sizeof(missing), "%s", kn_test_topic("cfg-missing"));
    kn_test_create_topic(topic, 1);
    kn_test_create_topic(other, 1);
    first_broker(admin, broker);

    /* One good resource, one with an unknown key, one missing topic, one
     * broker: each answered for itself. */
    kn_config_op ops[] = {
        {KN_CONFIG_RESOURCE_TOPIC, topic, KN_CONFIG_OP_SET, "retention.ms", "123456"},
        {KN_CONFIG_RESOURCE_TOPIC, other, KN_CONFIG_OP_SET, "no.such.config", "1"},
        {KN_CONFIG_RESOURCE_TOPIC, topic, KN_CONFIG_OP_SET, "cleanup.policy", "delete"},
        {KN_CONFIG_RESOURCE_TOPIC, missing, KN_CONFIG_OP_SET, "retention.ms", "1"},
        {KN_CONFIG_RESOURCE_BROKER, broker, KN_CONFIG_OP_SET, "log.cleaner.backoff.ms", "16000"},
    };
    kn_config_results *res = alter(admin, ops, 5, 0, false);
    assert_int_equal(kn_config_results_count(res), 4);
    assert_string_equal(kn_config_results_resource_name(res, 0), topic);
    expect_ok(res, 0);
    assert_string_equal(kn_config_results_resource_name(res, 1), other);
    assert_int_equal(kn_config_results_error(res, 1), KN_ERR_INVALID_CONFIG);
    assert_non_null(strstr(kn_config_results_error_message(res, 1), "no.such.config"));
    assert_int_equal(kn_config_results_error(res, 2), KN_ERR_UNKNOWN_TOPIC_OR_PARTITION);
    assert_int_equal(kn_config_results_resource_type(res, 3), KN_CONFIG_RESOURCE_BROKER);
    expect_ok(res, 3);
    kn_config_results_destroy(res);

    topic_value(admin, topic, "retention.ms", KN_CONFIG_SOURCE_DYNAMIC_TOPIC_CONFIG, "123456");

    /* The broker's dynamic setting shows on that broker, first among the
     * synonyms, above its default. */
    wait_value(admin, KN_CONFIG_RESOURCE_BROKER, broker, "log.cleaner.backoff.ms",
               KN_CONFIG_SOURCE_DYNAMIC_BROKER_CONFIG, "16000");
    kn_config_resource br = {KN_CONFIG_RESOURCE_BROKER, broker};
    kn_config_descriptions *desc = describe(admin, &br, 1, KN_ADMIN_CONFIG_SYNONYMS);
    const kn_config_entry *e = kn_config_descriptions_find(desc, 0, "log.cleaner.backoff.ms");
    assert_non_null(e);
    assert_string_equal(kn_config_entry_value(e), "16000");
    assert_int_equal(kn_config_entry_source(e), KN_CONFIG_SOURCE_DYNAMIC_BROKER_CONFIG);
    assert_int_equal(kn_config_entry_synonym_source(e, 0), KN_CONFIG_SOURCE_DYNAMIC_BROKER_CONFIG);
    assert_int_equal(kn_config_entry_synonym_source(e, kn_config_entry_synonym_count(e) - 1),
                     KN_CONFIG_SOURCE_DEFAULT_CONFIG);
    kn_config_descriptions_destroy(desc);

    /* APPEND and SUBTRACT work on list configs. */
    kn_config_op append = {KN_CONFIG_RESOURCE_TOPIC, topic, KN_CONFIG_OP_APPEND, "cleanup.policy", "compact"};
    res = alter(admin, &append, 1, 0, false);
    expect_ok(res, 0);
    kn_config_results_destroy(res);
    topic_value(admin, topic, "cleanup.policy", KN_CONFIG_SOURCE_DYNAMIC_TOPIC_CONFIG, "delete,compact");
    kn_config_op subtract = {KN_CONFIG_RESOURCE_TOPIC, topic, KN_CONFIG_OP_SUBTRACT, "cleanup.policy",
                             "delete"};
    res = alter(admin, &subtract, 1, 0, false);
    expect_ok(res, 0);
    kn_config_results_destroy(res);
    topic_value(admin, topic, "cleanup.policy", KN_CONFIG_SOURCE_DYNAMIC_TOPIC_CONFIG, "compact");

    /* validate_only checks (an invalid value fails) and changes nothing. */
    kn_config_op check[] = {
        {KN_CONFIG_RESOURCE_TOPIC, topic, KN_CONFIG_OP_SET, "retention.ms", "999"},
        {KN_CONFIG_RESOURCE_TOPIC, other, KN_CONFIG_OP_SET, "retention.ms", "not-a-number"},
    };
    res = alter(admin, check, 2, KN_ADMIN_VALIDATE_ONLY, false);
    expect_ok(res, 0);
    assert_int_equal(kn_config_results_error(res, 1), KN_ERR_INVALID_CONFIG);
    assert_non_null(strstr(kn_config_results_error_message(res, 1), "retention.ms"));
    kn_config_results_destroy(res);
    topic_value(admin, topic, "retention.ms", KN_CONFIG_SOURCE_DYNAMIC_TOPIC_CONFIG, "123456");

    /* DELETE goes back to the default (the value, if any, is ignored). */
    kn_config_op del[] = {
        {KN_CONFIG_RESOURCE_TOPIC, topic, KN_CONFIG_OP_DELETE, "retention.ms", "ignored"},
        {KN_CONFIG_RESOURCE_BROKER, broker, KN_CONFIG_OP_DELETE, "log.cleaner.backoff.ms", NULL},
    };
    res = alter(admin, del, 2, 0, false);
    expect_ok(res, 0);
    expect_ok(res, 1);
    kn_config_results_destroy(res);
    topic_value(admin, topic, "retention.ms", KN_CONFIG_SOURCE_DEFAULT_CONFIG, "604800000");
    wait_value(admin, KN_CONFIG_RESOURCE_BROKER, broker, "log.cleaner.backoff.ms",
               KN_CONFIG_SOURCE_DEFAULT_CONFIG, "15000");
}

static void test_legacy_alter(void **state) {
    kn_admin *admin = *state;
    char topic[200];
    snprintf(topic, sizeof(topic), "%s", kn_test_topic("cfg-legacy"));
    kn_test_create_topic(topic, 1);
    kn_config_op set[] = {
        {KN_CONFIG_RESOURCE_TOPIC, topic, KN_CONFIG_OP_SET, "cleanup.policy", "compact"},
        {KN_CONFIG_RESOURCE_TOPIC, topic, KN_CONFIG_OP_SET, "retention.ms", "300000"},
    };
    kn_config_results *res = alter(admin, set, 2, 0, true);
    assert_int_equal(kn_config_results_count(res), 1);
    expect_ok(res, 0);
    kn_config_results_destroy(res);
    topic_value(admin, topic, "cleanup.policy", KN_CONFIG_SOURCE_DYNAMIC_TOPIC_CONFIG, "compact");

    /* The legacy call replaces the whole set: cleanup.policy, not given,
     * goes back to its default. */
    kn_config_op replace = {KN_CONFIG_RESOURCE_TOPIC, topic, KN_CONFIG_OP_SET, "retention.ms", "200000"};
    res = alter(admin, &replace, 1, 0, true);
    expect_ok(res, 0);
    kn_config_results_destroy(res);
    topic_value(admin, topic, "retention.ms", KN_CONFIG_SOURCE_DYNAMIC_TOPIC_CONFIG, "200000");
    topic_value(admin, topic, "cleanup.policy", KN_CONFIG_SOURCE_DEFAULT_CONFIG, "delete");

    /* A name-less op clears the resource's dynamic config entirely. */
    kn_config_op clear = {KN_CONFIG_RESOURCE_TOPIC, topic, KN_CONFIG_OP_SET, NULL, NULL};
    res = alter(admin, &clear, 1, 0, true);
    expect_ok(res, 0);
    kn_config_results_destroy(res);
    topic_value(admin, topic, "retention.ms", KN_CONFIG_SOURCE_DEFAULT_CONFIG, NULL);

    /* Unknown key: the broker's error names it. */
    kn_config_op bad = {KN_CONFIG_RESOURCE_TOPIC, topic, KN_CONFIG_OP_SET, "no.such.config", "1"};
    res = alter(admin, &bad, 1, 0, true);
    assert_int_equal(kn_config_results_error(res, 0), KN_ERR_INVALID_CONFIG);
    assert_non_null(strstr(kn_config_results_error_message(res, 0), "no.such.config"));
    kn_config_results_destroy(res);
}

static void test_argument_checks(void **state) {
    kn_admin *admin = *state;
    char errstr[512] = "";
    kn_config_results *res = NULL;
    kn_config_op legacy_delete = {KN_CONFIG_RESOURCE_TOPIC, "t", KN_CONFIG_OP_DELETE, "retention.ms", NULL};
    assert_int_equal(kn_admin_alter_configs(admin, &legacy_delete, 1, 0, 1000, &res, errstr, sizeof(errstr)),
                     KN_ERR__INVALID_ARG);
    assert_non_null(strstr(errstr, "retention.ms"));
    assert_null(res);
    kn_config_op no_value = {KN_CONFIG_RESOURCE_TOPIC, "t", KN_CONFIG_OP_SET, "retention.ms", NULL};
    assert_int_equal(
        kn_admin_incremental_alter_configs(admin, &no_value, 1, 0, 1000, &res, errstr, sizeof(errstr)),
        KN_ERR__INVALID_ARG);
    kn_config_op bad_op = {KN_CONFIG_RESOURCE_TOPIC, "t", 7, "retention.ms", "1"};
    assert_int_equal(
        kn_admin_incremental_alter_configs(admin, &bad_op, 1, 0, 1000, &res, errstr, sizeof(errstr)),
        KN_ERR__INVALID_ARG);
    kn_config_resource no_name = {KN_CONFIG_RESOURCE_TOPIC, NULL};
    kn_config_descriptions *desc = NULL;
    assert_int_equal(kn_admin_describe_configs(admin, &no_name, 1, 0, 1000, &desc, errstr, sizeof(errstr)),
                     KN_ERR__INVALID_ARG);
    /* Names of the enums, as Java spells them. */
    assert_string_equal(kn_config_source_name(KN_CONFIG_SOURCE_DYNAMIC_DEFAULT_BROKER_CONFIG),
                        "DYNAMIC_DEFAULT_BROKER_CONFIG");
    assert_string_equal(kn_config_source_name(42), "UNKNOWN");
    assert_string_equal(kn_config_type_name(9), "PASSWORD");
    assert_int_equal(kn_config_resource_type_from_name("broker_logger"), KN_CONFIG_RESOURCE_BROKER_LOGGER);
    assert_int_equal(kn_config_resource_type_from_name("cluster"), -1);
    assert_string_equal(kn_config_resource_type_name(KN_CONFIG_RESOURCE_GROUP), "group");
    /* Empty calls succeed with empty results. */
    assert_int_equal(kn_admin_describe_configs(admin, NULL, 0, 0, 1000, &desc, errstr, sizeof(errstr)),
                     KN_OK);
    assert_int_equal(kn_config_descriptions_count(desc), 0);
    kn_config_descriptions_destroy(desc);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_describe, setup, teardown),
        cmocka_unit_test_setup_teardown(test_incremental_alter, setup, teardown),
        cmocka_unit_test_setup_teardown(test_legacy_alter, setup, teardown),
        cmocka_unit_test_setup_teardown(test_argument_checks, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
