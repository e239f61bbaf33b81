/*
 * it_admin_classic.c: describe_classic_groups against the real broker: a
 * live classic consumer group (protocol type "consumer", its member's
 * assignment decoded), a simple group (offsets only: protocol type "",
 * Empty), a KIP-848 group and an unknown group (each GROUP_ID_NOT_FOUND
 * alone).
 */
#include "kn_test.h"

#include <stdio.h>
#include <string.h>

#include "kafka_native.h"
#include "kafka_native_admin.h"

#define TIMEOUT_MS 30000

static kn_consumer *member(const char *group, const char *protocol, const char *topic) {
    char es[512] = "";
    kn_conf *cc = kn_conf_new(KN_CLIENT_CONSUMER);
    kn_test_conf_set(cc, "bootstrap.servers", kn_test_bootstrap());
    kn_test_conf_set(cc, "group.id", group);
    kn_test_conf_set(cc, "group.protocol", protocol);
    kn_consumer *c = kn_consumer_new(cc, es, sizeof es);
    kn_conf_destroy(cc);
    if (!c)
        fail_msg("kn_consumer_new: %s", es);
    const char *topics[1] = {topic};
    assert_int_equal(kn_consumer_subscribe(c, topics, 1, NULL, NULL), KN_OK);
    int64_t until = kn_test_now_ms() + 60000;
    for (;;) {
        kn_records *r = NULL;
        assert_int_equal(kn_consumer_poll(c, 100, &r, es, sizeof es), KN_OK);
        kn_records_free(r);
        kn_topic_partition_list *a = kn_consumer_assignment(c);
        size_t n = kn_topic_partition_list_count(a);
        kn_topic_partition_list_destroy(a);
        if (n == 1)
            return c;
        if (kn_test_now_ms() > until)
            fail_msg("%s member of %s got no assignment within 60 s", protocol, group);
    }
}

static void test_classic(void **state) {
    (void)state;
    char es[512] = "", topic[200], classic[200], simple[200], modern[200], none[200];
    snprintf(topic, sizeof topic, "%s", kn_test_topic("classic"));
    snprintf(classic, sizeof classic, "%s", kn_test_topic("classic-group"));
    snprintf(simple, sizeof simple, "%s", kn_test_topic("classic-simple"));
    snprintf(modern, sizeof modern, "%s", kn_test_topic("classic-848"));
    snprintf(none, sizeof none, "%s", kn_test_topic("classic-none"));
    kn_test_create_topic(topic, 1);
    kn_conf *conf = kn_conf_new(KN_CLIENT_ADMIN);
    kn_test_conf_set(conf, "bootstrap.servers", kn_test_bootstrap());
    kn_admin *admin = kn_admin_new(conf, es, sizeof es);
    kn_conf_destroy(conf);
    assert_non_null(admin);
    kn_topic_partition_list *l = kn_topic_partition_list_new();
    kn_topic_partition_list_add(l, topic, 0);
    kn_topic_partition_list_set_offset(l, 0, 0);
    kn_group_offsets *go = NULL;
    if (kn_admin_alter_consumer_group_offsets(admin, simple, l, TIMEOUT_MS, &go, es, sizeof es))
        fail_msg("commit: %s", es);
    kn_group_offsets_destroy(go);
    kn_topic_partition_list_destroy(l);
    kn_consumer *c1 = member(classic, "classic", topic), *c2 = member(modern, "consumer", topic);

    const char *groups[4] = {classic, simple, modern, none};
    kn_group_descriptions *d = NULL;
    if (kn_admin_describe_classic_groups(admin, groups, 4, 0, TIMEOUT_MS, &d, es, sizeof es))
        fail_msg("describe_classic_groups: %s", es);
    assert_int_equal(kn_group_descriptions_count(d), 4);
    if (kn_group_descriptions_error(d, 0))
        fail_msg("%s: %s", classic, kn_group_descriptions_error_message(d, 0));
    assert_string_equal(kn_group_descriptions_protocol_type(d, 0), "consumer");
    assert_string_equal(kn_group_descriptions_type(d, 0), "classic");
    assert_string_equal(kn_group_descriptions_state(d, 0), "Stable");
    assert_int_equal(kn_group_descriptions_member_count(d, 0), 1);
    const kn_topic_partition_list *a = kn_group_descriptions_member_assignment(d, 0, 0);
    assert_int_equal(kn_topic_partition_list_count(a), 1);
    assert_string_equal(kn_topic_partition_list_topic(a, 0), topic);
    assert_int_equal(kn_group_descriptions_error(d, 1), KN_OK);
    assert_string_equal(kn_group_descriptions_protocol_type(d, 1), "");
    assert_true(kn_group_descriptions_is_simple(d, 1));
    assert_string_equal(kn_group_descriptions_state(d, 1), "Empty");
    assert_int_equal(kn_group_descriptions_error(d, 2), KN_ERR_GROUP_ID_NOT_FOUND);
    assert_int_equal(kn_group_descriptions_error(d, 3), KN_ERR_GROUP_ID_NOT_FOUND);
    kn_group_descriptions_destroy(d);
    kn_consumer_close(c1, -1);
    kn_consumer_destroy(c1);
    kn_consumer_close(c2, -1);
    kn_consumer_destroy(c2);
    kn_admin_destroy(admin);
}

int main(void) {
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_classic)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}
