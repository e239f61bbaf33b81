/*
 * it_admin_cluster_ops.c: update_features, unregister_broker and
 * list_config_resources against the real broker: group.version set to
 * the level it has (validate-only and applied), a level past the
 * broker's range and an unknown feature refused with the broker's
 * reason, bad updates refused before sending; unregistering a broker id
 * that was never registered (BROKER_ID_NOT_REGISTERED); a client-metrics
 * resource (matching no client) and a topic with a config listed by
 * type, and gone from the listing once its config is deleted.
 */
#include "kn_test.h"

#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "kafka_native.h"
#include "kafka_native_admin.h"

#define TIMEOUT_MS 30000

static int16_t finalized_level(kn_admin *admin, const char *feature) {
    char es[512] = "";
    kn_features *f = NULL;
    if (kn_admin_describe_features(admin, TIMEOUT_MS, &f, es, sizeof es))
        fail_msg("describe_features: %s", es);
    int16_t level = -1;
    for (size_t i = 0; i < kn_features_finalized_count(f); i++)
        if (!strcmp(kn_features_finalized_name(f, i), feature))
            level = kn_features_finalized_max_level(f, i);
    kn_features_destroy(f);
    return level;
}

static bool listed(kn_admin *admin, int8_t type, const char *name) {
    char es[512] = "";
    kn_config_resource_list *l = NULL;
    if (kn_admin_list_config_resources(admin, &type, 1, TIMEOUT_MS, &l, es, sizeof es))
        fail_msg("list_config_resources: %s", es);
    bool found = false;
    for (size_t i = 0; i < kn_config_resource_list_count(l) && !found; i++)
        found =
            kn_config_resource_list_type(l, i) == type && !strcmp(kn_config_resource_list_name(l, i), name);
    kn_config_resource_list_destroy(l);
    return found;
}

static void wait_listed(kn_admin *admin, int8_t type, const char *name, bool want) {
    int64_t until = kn_test_now_ms() + TIMEOUT_MS;
    while (listed(admin, type, name) != want) {
        if (kn_test_now_ms() > until)
            fail_msg("%s (type %d) %s listed", name, (int)type, want ? "never" : "still");
        struct timespec ts = {0, 100 * 1000000L};
        nanosleep(&ts, NULL);
    }
}

static void test_cluster_ops(void **state) {
    (void)state;
    char es[512] = "", cm[200], topic[200];
    snprintf(cm, sizeof cm, "%s", kn_test_topic("cm"));
    snprintf(topic, sizeof topic, "%s", kn_test_topic("cfg-res"));
    kn_conf *conf = kn_conf_new(KN_CLIENT_ADMIN);
    kn_test_conf_set(conf, "bootstrap.servers", kn_test_bootstrap());
    kn_admin *admin = kn_admin_new(conf, es, sizeof es);
    kn_conf_destroy(conf);
    assert_non_null(admin);

    /* update_features: the level it has is accepted, applied or not. */
    int16_t level = finalized_level(admin, "group.version");
    assert_true(level >= 1);
    kn_feature_update same = {"group.version", level, KN_FEATURE_UPGRADE};
    if (kn_admin_update_features(admin, &same, 1, KN_ADMIN_VALIDATE_ONLY, TIMEOUT_MS, es, sizeof es))
        fail_msg("update_features (validate): %s", es);
    if (kn_admin_update_features(admin, &same, 1, 0, TIMEOUT_MS, es, sizeof es))
        fail_msg("update_features: %s", es);
    assert_int_equal(finalized_level(admin, "group.version"), level);
    kn_feature_update high = {"group.version", 99, KN_FEATURE_UPGRADE};
    int rc = kn_admin_update_features(admin, &high, 1, KN_ADMIN_VALIDATE_ONLY, TIMEOUT_MS, es, sizeof es);
    assert_int_not_equal(rc, KN_OK);
    assert_true(rc > 0); /* the broker's code, not ours */
    assert_non_null(strstr(es, "group.version"));
    kn_feature_update unknown = {"no.such.feature", 1, KN_FEATURE_UPGRADE};
    rc = kn_admin_update_features(admin, &unknown, 1, KN_ADMIN_VALIDATE_ONLY, TIMEOUT_MS, es, sizeof es);
    assert_true(rc > 0);
    assert_non_null(strstr(es, "no.such.feature"));
    /* A downgrade is sent as such (UpdateFeatures v1+ upgrade type):
     * the broker judges it (validate only), our encoder never refuses. */
    kn_feature_update down = {"group.version", (int16_t)(level - 1), KN_FEATURE_SAFE_DOWNGRADE};
    es[0] = '\0';
    rc = kn_admin_update_features(admin, &down, 1, KN_ADMIN_VALIDATE_ONLY, TIMEOUT_MS, es, sizeof es);
    print_message("safe downgrade of group.version to %d (validate only): %s %s\n", level - 1,
                  kn_err_name(rc), es);
    assert_true(rc >= 0);
    assert_int_equal(finalized_level(admin, "group.version"), level);
    kn_feature_update zero = {"group.version", 0, KN_FEATURE_UPGRADE};
    assert_int_equal(kn_admin_update_features(admin, &zero, 1, 0, TIMEOUT_MS, es, sizeof es),
                     KN_ERR__INVALID_ARG);

    /* unregister_broker of an id that never registered */
    assert_int_equal(kn_admin_unregister_broker(admin, 9999, TIMEOUT_MS, es, sizeof es),
                     KN_ERR_BROKER_ID_NOT_REGISTERED);

    /* list_config_resources: a client-metrics resource and a topic with a
     * config; the client-metrics one matches no client. */
    kn_test_create_topic(topic, 1);
    kn_config_op ops[] = {
        {KN_CONFIG_RESOURCE_CLIENT_METRICS, cm, KN_CONFIG_OP_SET, "metrics", "org.apache.kafka.producer."},
        {KN_CONFIG_RESOURCE_CLIENT_METRICS, cm, KN_CONFIG_OP_SET, "match", "client_id=kn-test-nobody"},
        {KN_CONFIG_RESOURCE_TOPIC, topic, KN_CONFIG_OP_SET, "retention.ms", "3600000"},
    };
    kn_config_results *cr = NULL;
    if (kn_admin_incremental_alter_configs(admin, ops, 3, 0, TIMEOUT_MS, &cr, es, sizeof es))
        fail_msg("incremental_alter_configs: %s", es);
    for (size_t i = 0; i < kn_config_results_count(cr); i++)
        if (kn_config_results_error(cr, i))
            fail_msg("alter %s: %s", kn_config_results_resource_name(cr, i),
                     kn_config_results_error_message(cr, i));
    kn_config_results_destroy(cr);
    wait_listed(admin, KN_CONFIG_RESOURCE_CLIENT_METRICS, cm, true);
    wait_listed(admin, KN_CONFIG_RESOURCE_TOPIC, topic, true);
    assert_false(listed(admin, KN_CONFIG_RESOURCE_TOPIC, cm)); /* by type */
    kn_config_resource_list *l = NULL;
    if (kn_admin_list_config_resources(admin, NULL, 0, TIMEOUT_MS, &l, es, sizeof es))
        fail_msg("list_config_resources (all): %s", es);
    assert_true(kn_config_resource_list_count(l) >= 2);
    kn_config_resource_list_destroy(l);
    const int8_t bad = 99;
    assert_int_equal(kn_admin_list_config_resources(admin, &bad, 1, TIMEOUT_MS, &l, es, sizeof es),
                     KN_ERR__INVALID_ARG);
    kn_config_op del[] = {
        {KN_CONFIG_RESOURCE_CLIENT_METRICS, cm, KN_CONFIG_OP_DELETE, "metrics", NULL},
        {KN_CONFIG_RESOURCE_CLIENT_METRICS, cm, KN_CONFIG_OP_DELETE, "match", NULL},
    };
    if (kn_admin_incremental_alter_configs(admin, del, 2, 0, TIMEOUT_MS, &cr, es, sizeof es))
        fail_msg("incremental_alter_configs (delete): %s", es);
    assert_int_equal(kn_config_results_error(cr, 0), KN_OK);
    kn_config_results_destroy(cr);
    wait_listed(admin, KN_CONFIG_RESOURCE_CLIENT_METRICS, cm, false);
    kn_admin_destroy(admin);
}

int main(void) {
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_cluster_ops)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}
