/*
 * it_admin_reassign.c: elect_leaders, alter_partition_reassignments and
 * list_partition_reassignments against the real broker (one node is
 * enough for what they must answer): a preferred election where the
 * preferred replica leads already (ELECTION_NOT_NEEDED) and on a
 * partition that does not exist, each alone; an unclean election; a
 * reassignment onto the replica it has (done at once), onto a broker
 * that does not exist and of a missing topic, each failing alone;
 * cancelling with nothing in progress (NO_REASSIGNMENT_IN_PROGRESS);
 * listing shows nothing in progress for the topic.
 */
#include "kn_test.h"

#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "kafka_native.h"
#include "kafka_native_admin.h"

#define TIMEOUT_MS 30000

static int err_of(const kn_topic_partition_list *l, const char *topic, int32_t partition) {
    int k = kn_topic_partition_list_find(l, topic, partition);
    if (k < 0)
        fail_msg("no result for %s-%d", topic, (int)partition);
    return kn_topic_partition_list_err(l, (size_t)k);
}

static void test_reassign(void **state) {
    (void)state;
    char es[512] = "", topic[200], missing[200];
    snprintf(topic, sizeof topic, "%s", kn_test_topic("reassign"));
    snprintf(missing, sizeof missing, "%s", kn_test_topic("reassign-none"));
    kn_test_create_topic(topic, 2);
    kn_conf *conf = kn_conf_new(KN_CLIENT_ADMIN);
    kn_test_conf_set(conf, "bootstrap.servers", kn_test_bootstrap());
    kn_admin *admin = kn_admin_new(conf, es, sizeof es);
    kn_conf_destroy(conf);
    assert_non_null(admin);
    assert_int_equal(kn_admin_wait_for_topics(admin, (const char *[]){topic}, 1, TIMEOUT_MS, es, sizeof es),
                     KN_OK);
    kn_topic_descriptions *d = NULL;
    assert_int_equal(
        kn_admin_describe_topics(admin, (const char *[]){topic}, 1, TIMEOUT_MS, &d, es, sizeof es), KN_OK);
    int32_t leader = kn_partition_info_leader(kn_topic_descriptions_partition(d, 0, 0));
    kn_topic_descriptions_destroy(d);
    assert_true(leader >= 0);

    kn_topic_partition_list *parts = kn_topic_partition_list_new();
    kn_topic_partition_list_add(parts, topic, 0);
    kn_topic_partition_list_add(parts, topic, 9);
    kn_topic_partition_list *res = NULL;
    if (kn_admin_elect_leaders(admin, KN_ELECTION_PREFERRED, parts, TIMEOUT_MS, &res, es, sizeof es))
        fail_msg("elect_leaders: %s", es);
    assert_int_equal(kn_topic_partition_list_count(res), 2);
    assert_int_equal(err_of(res, topic, 0), KN_ERR_ELECTION_NOT_NEEDED);
    assert_int_equal(err_of(res, topic, 9), KN_ERR_UNKNOWN_TOPIC_OR_PARTITION);
    kn_topic_partition_list_destroy(res);
    /* Unclean: the partition has a leader, so nothing to elect either. */
    if (kn_admin_elect_leaders(admin, KN_ELECTION_UNCLEAN, parts, TIMEOUT_MS, &res, es, sizeof es))
        fail_msg("elect_leaders unclean: %s", es);
    assert_int_equal(err_of(res, topic, 0), KN_ERR_ELECTION_NOT_NEEDED);
    kn_topic_partition_list_destroy(res);
    /* Every partition: the call answers (which ones the broker lists is its choice). */
    if (kn_admin_elect_leaders(admin, KN_ELECTION_PREFERRED, NULL, TIMEOUT_MS, &res, es, sizeof es))
        fail_msg("elect_leaders (all): %s", es);
    kn_topic_partition_list_destroy(res);
    assert_int_equal(kn_admin_elect_leaders(admin, 7, parts, TIMEOUT_MS, &res, es, sizeof es),
                     KN_ERR__INVALID_ARG);

    const int32_t same[1] = {leader}, nobody[1] = {9999};
    const kn_reassignment changes[] = {
        {topic, 0, same, 1},
        {topic, 1, nobody, 1},
        {missing, 0, same, 1},
    };
    if (kn_admin_alter_partition_reassignments(admin, changes, 3, TIMEOUT_MS, &res, es, sizeof es))
        fail_msg("alter_partition_reassignments: %s", es);
    assert_int_equal(err_of(res, topic, 0), KN_OK);
    assert_int_not_equal(err_of(res, topic, 1), KN_OK);
    assert_int_equal(err_of(res, missing, 0), KN_ERR_UNKNOWN_TOPIC_OR_PARTITION);
    kn_topic_partition_list_destroy(res);
    const kn_reassignment cancel = {topic, 0, NULL, 0};
    if (kn_admin_alter_partition_reassignments(admin, &cancel, 1, TIMEOUT_MS, &res, es, sizeof es))
        fail_msg("cancel: %s", es);
    assert_int_equal(err_of(res, topic, 0), KN_ERR_NO_REASSIGNMENT_IN_PROGRESS);
    kn_topic_partition_list_destroy(res);
    const kn_reassignment empty = {topic, 0, same, 0};
    assert_int_equal(
        kn_admin_alter_partition_reassignments(admin, &empty, 1, TIMEOUT_MS, &res, es, sizeof es),
        KN_ERR__INVALID_ARG);

    kn_reassignments *l = NULL;
    if (kn_admin_list_partition_reassignments(admin, parts, TIMEOUT_MS, &l, es, sizeof es))
        fail_msg("list_partition_reassignments: %s", es);
    assert_int_equal(kn_reassignments_count(l), 0);
    kn_reassignments_destroy(l);
    if (kn_admin_list_partition_reassignments(admin, NULL, TIMEOUT_MS, &l, es, sizeof es))
        fail_msg("list_partition_reassignments (all): %s", es);
    for (size_t i = 0; i < kn_reassignments_count(l); i++)
        assert_string_not_equal(kn_reassignments_topic(l, i), topic);
    kn_reassignments_destroy(l);
    kn_topic_partition_list_destroy(parts);
    kn_admin_destroy(admin);
}

int main(void) {
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_reassign)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}
