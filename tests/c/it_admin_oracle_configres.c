/*
 * it_admin_oracle_configres.c: list_config_resources (KIP-1142) compared
 * with the Java Admin client's listConfigResources (tools/java/
 * admin-oracle configres). Our admin gives configs to a client-metrics
 * resource (matching no client), a group and a topic; once each is
 * listed, both sides list the resources of every type and of those
 * three types, one line per resource (type and name, sorted), and the
 * lines must be equal. The listing holds whatever else the broker has
 * (other tests' topics and groups, the brokers): the tests share the
 * broker one at a time (RUN_SERIAL), so it does not move between our
 * call and Java's. The configs are deleted at the end.
 */
#include "kn_test.h"
#include "oracle_lines.h"

#include <ctype.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "kafka_native.h"
#include "kafka_native_admin.h"

#define TIMEOUT_MS 30000

static const int8_t typed[3] = {KN_CONFIG_RESOURCE_CLIENT_METRICS, KN_CONFIG_RESOURCE_GROUP,
                                KN_CONFIG_RESOURCE_TOPIC};

/* Java prints ConfigResource.Type's names: CLIENT_METRICS for ours'
 * "client_metrics". */
static void upper_type(int type, char *out, size_t size) {
    const char *n = kn_config_resource_type_name(type);
    snprintf(out, size, "%s", n ? n : "UNKNOWN");
    for (char *p = out; *p; p++)
        *p = (char)toupper((unsigned char)*p);
}

static void list_lines(kn_admin *a, const char *const *args, size_t n, lines *out) {
    (void)args;
    (void)n;
    char es[512], type[32];
    for (int k = 0; k < 2; k++) {
        kn_config_resource_list *l = NULL;
        if (kn_admin_list_config_resources(a, k ? typed : NULL, k ? 3 : 0, TIMEOUT_MS, &l, es, sizeof es))
            fail_msg("list_config_resources: %s", es);
        lines s = {0};
        for (size_t i = 0; i < kn_config_resource_list_count(l); i++) {
            upper_type(kn_config_resource_list_type(l, i), type, sizeof type);
            add_line(&s, "configres %s %s %s", k ? "typed" : "all", type, kn_config_resource_list_name(l, i));
        }
        move_sorted_lines(out, &s);
        kn_config_resource_list_destroy(l);
    }
}

static void alter(kn_admin *a, const kn_config_op *ops, size_t n) {
    char es[512];
    kn_config_results *cr = NULL;
    if (kn_admin_incremental_alter_configs(a, ops, n, 0, TIMEOUT_MS, &cr, es, sizeof es))
        fail_msg("incremental_alter_configs: %s", es);
    for (size_t i = 0; i < kn_config_results_count(cr); i++)
        if (kn_config_results_error(cr, i))
            fail_msg("alter %s: %s", kn_config_results_resource_name(cr, i), kn_config_results_error_message(cr, i));
    kn_config_results_destroy(cr);
}

static void test_configres_oracle(void **state) {
    (void)state;
    char cm[200], group[200], topic[200], want[3][300];
    snprintf(cm, sizeof cm, "%s", kn_test_topic("configres-cm"));
    snprintf(group, sizeof group, "%s", kn_test_topic("configres-group"));
    snprintf(topic, sizeof topic, "%s", kn_test_topic("configres-topic"));
    kn_test_create_topic(topic, 1);
    kn_admin *a = oracle_admin_new();
    const kn_config_op ops[] = {
        {KN_CONFIG_RESOURCE_CLIENT_METRICS, cm, KN_CONFIG_OP_SET, "metrics", "org.apache.kafka.producer."},
        {KN_CONFIG_RESOURCE_CLIENT_METRICS, cm, KN_CONFIG_OP_SET, "match", "client_id=kn-test-nobody"},
        {KN_CONFIG_RESOURCE_GROUP, group, KN_CONFIG_OP_SET, "consumer.heartbeat.interval.ms", "6000"},
        {KN_CONFIG_RESOURCE_TOPIC, topic, KN_CONFIG_OP_SET, "retention.ms", "3600000"},
    };
    alter(a, ops, 4);
    snprintf(want[0], sizeof want[0], "configres typed CLIENT_METRICS %s", cm);
    snprintf(want[1], sizeof want[1], "configres typed GROUP %s", group);
    snprintf(want[2], sizeof want[2], "configres typed TOPIC %s", topic);

    /* Listed once the controller's record reached the broker (bounded). */
    lines ours = {0};
    int64_t until = kn_test_now_ms() + TIMEOUT_MS;
    for (;;) {
        list_lines(a, NULL, 0, &ours);
        bool all = has_line(&ours, want[0]) && has_line(&ours, want[1]) && has_line(&ours, want[2]);
        free_lines(&ours);
        if (all)
            break;
        if (kn_test_now_ms() > until)
            fail_msg("%s, %s, %s never all listed", cm, group, topic);
        usleep(100 * 1000);
    }

    const char *types[3] = {"CLIENT_METRICS", "GROUP", "TOPIC"};
    oracle_same_as_java(a, "configres", types, 3, list_lines, &ours);
    for (int k = 0; k < 3; k++)
        assert_true(has_line(&ours, want[k]));
    snprintf(want[0], sizeof want[0], "configres all CLIENT_METRICS %s", cm);
    assert_true(has_line(&ours, want[0]));
    free_lines(&ours);

    const kn_config_op del[] = {
        {KN_CONFIG_RESOURCE_CLIENT_METRICS, cm, KN_CONFIG_OP_DELETE, "metrics", NULL},
        {KN_CONFIG_RESOURCE_CLIENT_METRICS, cm, KN_CONFIG_OP_DELETE, "match", NULL},
        {KN_CONFIG_RESOURCE_GROUP, group, KN_CONFIG_OP_DELETE, "consumer.heartbeat.interval.ms", NULL},
    };
    alter(a, del, 3);
    kn_admin_destroy(a);
}

int main(void) {
    kn_test_bootstrap();
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_configres_oracle)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}
