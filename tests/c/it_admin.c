/*
 * it_admin.c: the admin client against a real broker (KAFKA_BOOTSTRAP):
 * create (with configs, partition counts, explicit assignment,
 * validate_only), per-topic errors (TOPIC_ALREADY_EXISTS,
 * INVALID_TOPIC_EXCEPTION, UNKNOWN_TOPIC_OR_PARTITION) that leave the
 * other topics of the same call alone, list, describe, describe_cluster,
 * delete, and a whole-call timeout against an address nobody listens on.
 * Every test creates its own uniquely named topics and deletes them.
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

static kn_admin *new_admin(const char *bootstrap, const char *extra_key, const char *extra_val) {
    char errstr[512] = "";
    kn_conf *conf = kn_conf_new(KN_CLIENT_ADMIN);
    assert_non_null(conf);
    assert_int_equal(kn_conf_set(conf, "bootstrap.servers", bootstrap, errstr, sizeof(errstr)), KN_OK);
    if (extra_key)
        assert_int_equal(kn_conf_set(conf, extra_key, extra_val, errstr, sizeof(errstr)), KN_OK);
    kn_admin *admin = kn_admin_new(conf, errstr, sizeof(errstr));
    kn_conf_destroy(conf); /* the admin keeps its own copy */
    if (!admin)
        fail_msg("kn_admin_new: %s", errstr);
    return admin;
}

static int setup(void **state) {
    *state = new_admin(kn_test_bootstrap(), NULL, NULL);
    return 0;
}

static int teardown(void **state) {
    kn_admin_destroy(*state);
    return 0;
}

/* Index of name in results, or fails the test. */
static size_t result_index(const kn_topic_results *res, const char *name) {
    for (size_t i = 0; i < kn_topic_results_count(res); i++)
        if (strcmp(kn_topic_results_name(res, i), name) == 0)
            return i;
    fail_msg("no result for topic %s", name);
    return 0;
}

static kn_topic_results *create(kn_admin *admin, kn_new_topic **topics, size_t n, int flags) {
    char errstr[512] = "";
    kn_topic_results *res = NULL;
    int err = kn_admin_create_topics(admin, topics, n, flags, TIMEOUT_MS, &res, errstr, sizeof(errstr));
    if (err)
        fail_msg("create_topics: %s: %s", kn_err_name(err), errstr);
    assert_non_null(res);
    for (size_t i = 0; i < n; i++)
        kn_new_topic_destroy(topics[i]);
    return res;
}

static void delete_ok(kn_admin *admin, const char *const *names, size_t n) {
    char errstr[512] = "";
    kn_topic_results *res = NULL;
    int err = kn_admin_delete_topics(admin, names, n, TIMEOUT_MS, &res, errstr, sizeof(errstr));
    if (err)
        fail_msg("delete_topics: %s: %s", kn_err_name(err), errstr);
    for (size_t i = 0; i < n; i++) {
        size_t k = result_index(res, names[i]);
        if (kn_topic_results_error(res, k))
            fail_msg("delete %s: %s", names[i], kn_topic_results_error_message(res, k));
    }
    kn_topic_results_destroy(res);
}

static kn_topic_descriptions *describe(kn_admin *admin, const char *const *names, size_t n) {
    char errstr[512] = "";
    kn_topic_descriptions *desc = NULL;
    int err = kn_admin_describe_topics(admin, names, n, TIMEOUT_MS, &desc, errstr, sizeof(errstr));
    if (err)
        fail_msg("describe_topics: %s: %s", kn_err_name(err), errstr);
    assert_int_equal(kn_topic_descriptions_count(desc), n);
    return desc;
}

/* The topic's list entry index, or -1. */
static long list_find(const kn_topic_list *list, const char *name) {
    for (size_t i = 0; i < kn_topic_list_count(list); i++)
        if (strcmp(kn_topic_list_name(list, i), name) == 0)
            return (long)i;
    return -1;
}

static void test_topic_lifecycle(void **state) {
    kn_admin *admin = *state;
    char plain[200], compact[200], eight[200], extra[200], bad[] = "bad/name";
    snprintf(plain, sizeof(plain), "%s", kn_test_topic("admin-plain"));
    snprintf(compact, sizeof(compact), "%s", kn_test_topic("admin-compact"));
    snprintf(eight, sizeof(eight), "%s", kn_test_topic("admin-eight"));
    snprintf(extra, sizeof(extra), "%s", kn_test_topic("admin-extra"));

    /* Three topics, one with a config, one with 8 partitions. */
    kn_new_topic *topics[3] = {kn_new_topic_new(plain, 3, 1), kn_new_topic_new(compact, 1, -1),
                               kn_new_topic_new(eight, 8, -1)};
    assert_int_equal(kn_new_topic_set_config(topics[1], "cleanup.policy", "compact"), KN_OK);
    kn_topic_results *res = create(admin, topics, 3, 0);
    assert_int_equal(kn_topic_results_count(res), 3);
    for (size_t i = 0; i < 3; i++) {
        if (kn_topic_results_error(res, i))
            fail_msg("create %s: %s", kn_topic_results_name(res, i), kn_topic_results_error_message(res, i));
        assert_null(kn_topic_results_error_message(res, i));
        assert_non_null(kn_topic_results_topic_id(res, i));
        assert_int_equal(strlen(kn_topic_results_topic_id(res, i)), 22);
    }
    assert_string_equal(kn_topic_results_name(res, 0), plain); /* request order */
    assert_int_equal(kn_topic_results_partitions(res, 0), 3);
    assert_int_equal(kn_topic_results_partitions(res, result_index(res, eight)), 8);
    assert_int_equal(kn_topic_results_replication_factor(res, 0), 1);
    char eight_id[23];
    snprintf(eight_id, sizeof(eight_id), "%s", kn_topic_results_topic_id(res, result_index(res, eight)));
    kn_topic_results_destroy(res);

    const char *created[3] = {plain, compact, eight};
    char errstr[512] = "";
    int err = kn_admin_wait_for_topics(admin, created, 3, TIMEOUT_MS, errstr, sizeof(errstr));
    if (err)
        fail_msg("wait_for_topics: %s", errstr);

    /* A duplicate fails alone; the other topic of the call is created,
     * and "bad/name" fails alone with the broker's message. */
    kn_new_topic *again[3] = {kn_new_topic_new(plain, 1, -1), kn_new_topic_new(extra, -1, -1),
                              kn_new_topic_new(bad, 1, -1)};
    res = create(admin, again, 3, 0);
    size_t k = result_index(res, plain);
    assert_int_equal(kn_topic_results_error(res, k), KN_ERR_TOPIC_ALREADY_EXISTS);
    assert_non_null(kn_topic_results_error_message(res, k));
    assert_non_null(strstr(kn_topic_results_error_message(res, k), plain));
    assert_int_equal(kn_topic_results_error(res, result_index(res, extra)), KN_OK);
    /* partitions -1: the broker default (num.partitions) */
    assert_true(kn_topic_results_partitions(res, result_index(res, extra)) >= 1);
    k = result_index(res, bad);
    assert_int_equal(kn_topic_results_error(res, k), KN_ERR_INVALID_TOPIC_EXCEPTION);
    assert_non_null(kn_topic_results_error_message(res, k));
    kn_topic_results_destroy(res);

    /* Created is not yet visible everywhere: wait, as a producer would. */
    const char *extra_only[1] = {extra};
    err = kn_admin_wait_for_topics(admin, extra_only, 1, TIMEOUT_MS, errstr, sizeof(errstr));
    if (err)
        fail_msg("wait_for_topics: %s", errstr);

    /* list: our topics with ids, and no internal topic unless asked. */
    kn_topic_list *list = NULL;
    err = kn_admin_list_topics(admin, 0, TIMEOUT_MS, &list, errstr, sizeof(errstr));
    if (err)
        fail_msg("list_topics: %s", errstr);
    const char *all4[4] = {plain, compact, eight, extra};
    for (size_t i = 0; i < 4; i++) {
        long at = list_find(list, all4[i]);
        if (at < 0)
            fail_msg("list_topics misses %s", all4[i]);
        assert_non_null(kn_topic_list_topic_id(list, (size_t)at));
        assert_int_equal(kn_topic_list_is_internal(list, (size_t)at), 0);
        if (strcmp(all4[i], eight) == 0) /* the id CreateTopics gave */
            assert_string_equal(kn_topic_list_topic_id(list, (size_t)at), eight_id);
    }
    for (size_t i = 0; i < kn_topic_list_count(list); i++) {
        assert_int_equal(kn_topic_list_is_internal(list, i), 0);
        if (i > 0) /* sorted by name */
            assert_true(strcmp(kn_topic_list_name(list, i - 1), kn_topic_list_name(list, i)) < 0);
    }
    kn_topic_list_destroy(list);

    /* describe: 8 partitions led by the single broker, plus an unknown
     * topic that fails alone. */
    kn_cluster_description *cd = NULL;
    err = kn_admin_describe_cluster(admin, TIMEOUT_MS, &cd, errstr, sizeof(errstr));
    if (err)
        fail_msg("describe_cluster: %s", errstr);
    assert_true(kn_cluster_description_broker_count(cd) >= 1);
    int32_t broker = kn_cluster_description_broker_id(cd, 0);
    size_t brokers = kn_cluster_description_broker_count(cd);
    kn_cluster_description_destroy(cd);

    char unknown[200];
    snprintf(unknown, sizeof(unknown), "%s", kn_test_topic("admin-unknown"));
    const char *names[3] = {eight, unknown, compact};
    kn_topic_descriptions *desc = describe(admin, names, 3);
    assert_string_equal(kn_topic_descriptions_name(desc, 0), eight);
    assert_int_equal(kn_topic_descriptions_error(desc, 0), KN_OK);
    assert_string_equal(kn_topic_descriptions_topic_id(desc, 0), eight_id);
    assert_int_equal(kn_topic_descriptions_is_internal(desc, 0), 0);
    assert_int_equal(kn_topic_descriptions_partition_count(desc, 0), 8);
    for (size_t p = 0; p < 8; p++) {
        const kn_partition_info *pi = kn_topic_descriptions_partition(desc, 0, p);
        assert_non_null(pi);
        assert_int_equal(kn_partition_info_id(pi), (int32_t)p);
        assert_int_equal(kn_partition_info_error(pi), KN_OK);
        if (brokers == 1)
            assert_int_equal(kn_partition_info_leader(pi), broker);
        assert_true(kn_partition_info_leader_epoch(pi) >= 0);
        /* Replication factor -1: the broker default (1 on the one-node
         * harness). A fresh topic is led by its preferred (first)
         * replica, with every replica in sync. */
        size_t n, n_isr;
        const int32_t *ids = kn_partition_info_replicas(pi, &n);
        assert_true(n >= 1 && n <= brokers);
        if (brokers == 1)
            assert_int_equal(n, 1);
        assert_int_equal(ids[0], kn_partition_info_leader(pi));
        kn_partition_info_isr(pi, &n_isr);
        assert_int_equal(n_isr, n);
        kn_partition_info_offline(pi, &n);
        assert_int_equal(n, 0);
    }
    assert_null(kn_topic_descriptions_partition(desc, 0, 8));
    assert_int_equal(kn_topic_descriptions_error(desc, 1), KN_ERR_UNKNOWN_TOPIC_OR_PARTITION);
    assert_int_equal(kn_topic_descriptions_partition_count(desc, 1), 0);
    assert_int_equal(kn_topic_descriptions_error(desc, 2), KN_OK);
    assert_int_equal(kn_topic_descriptions_partition_count(desc, 2), 1);
    kn_topic_descriptions_destroy(desc);

    /* delete: ours succeed, the unknown one fails alone. */
    const char *del[5] = {plain, unknown, compact, eight, extra};
    res = NULL;
    err = kn_admin_delete_topics(admin, del, 5, TIMEOUT_MS, &res, errstr, sizeof(errstr));
    if (err)
        fail_msg("delete_topics: %s", errstr);
    assert_int_equal(kn_topic_results_count(res), 5);
    for (size_t i = 0; i < 5; i++) {
        int want = i == 1 ? KN_ERR_UNKNOWN_TOPIC_OR_PARTITION : KN_OK;
        if (kn_topic_results_error(res, i) != want)
            fail_msg("delete %s: got %s (%s)", kn_topic_results_name(res, i),
                     kn_err_name(kn_topic_results_error(res, i)), kn_topic_results_error_message(res, i));
    }
    kn_topic_results_destroy(res);

    /* Gone from the listing (deletion is asynchronous on the broker:
     * poll, bounded). */
    bool gone = false;
    for (int tries = 0; tries < 50 && !gone; tries++) {
        err = kn_admin_list_topics(admin, 0, TIMEOUT_MS, &list, errstr, sizeof(errstr));
        assert_int_equal(err, KN_OK);
        gone = true;
        for (size_t i = 0; i < 4; i++)
            gone = gone && list_find(list, all4[i]) < 0;
        kn_topic_list_destroy(list);
        if (!gone) {
            struct timespec ts = {0, 100 * 1000000L};
            nanosleep(&ts, NULL);
        }
    }
    assert_true(gone);
}

static void test_validate_only_and_assignment(void **state) {
    kn_admin *admin = *state;
    char dry[200], placed[200];
    snprintf(dry, sizeof(dry), "%s", kn_test_topic("admin-dry"));
    snprintf(placed, sizeof(placed), "%s", kn_test_topic("admin-placed"));

    /* validate_only: accepted, nothing created. */
    kn_new_topic *t1[1] = {kn_new_topic_new(dry, 2, 1)};
    kn_topic_results *res = create(admin, t1, 1, KN_ADMIN_VALIDATE_ONLY);
    assert_int_equal(kn_topic_results_error(res, 0), KN_OK);
    kn_topic_results_destroy(res);
    /* A bad config is reported by validate_only too. */
    kn_new_topic *t2[1] = {kn_new_topic_new(dry, 2, 1)};
    assert_int_equal(kn_new_topic_set_config(t2[0], "cleanup.policy", "sideways"), KN_OK);
    res = create(admin, t2, 1, KN_ADMIN_VALIDATE_ONLY);
    assert_int_equal(kn_topic_results_error(res, 0), KN_ERR_INVALID_CONFIG);
    kn_topic_results_destroy(res);

    /* Explicit assignment: two partitions on the first broker. */
    kn_cluster_description *cd = NULL;
    char errstr[512] = "";
    assert_int_equal(kn_admin_describe_cluster(admin, TIMEOUT_MS, &cd, errstr, sizeof(errstr)), KN_OK);
    int32_t broker = kn_cluster_description_broker_id(cd, 0);
    kn_cluster_description_destroy(cd);
    kn_new_topic *t3[2] = {kn_new_topic_new(placed, -1, -1), kn_new_topic_new("", 1, 1)};
    assert_int_equal(kn_new_topic_set_replica_assignment(t3[0], 0, &broker, 1), KN_OK);
    assert_int_equal(kn_new_topic_set_replica_assignment(t3[0], 1, &broker, 1), KN_OK);
    res = create(admin, t3, 2, 0);
    assert_int_equal(kn_topic_results_count(res), 2);
    assert_int_equal(kn_topic_results_error(res, 0), KN_OK);
    assert_int_equal(kn_topic_results_partitions(res, 0), 2);
    /* An empty name is refused before sending, like Java. */
    assert_int_equal(kn_topic_results_error(res, 1), KN_ERR_INVALID_TOPIC_EXCEPTION);
    kn_topic_results_destroy(res);

    const char *names[2] = {dry, placed};
    assert_int_equal(kn_admin_wait_for_topics(admin, &names[1], 1, TIMEOUT_MS, errstr, sizeof(errstr)),
                     KN_OK);
    kn_topic_descriptions *desc = describe(admin, names, 2);
    assert_int_equal(kn_topic_descriptions_error(desc, 0), KN_ERR_UNKNOWN_TOPIC_OR_PARTITION);
    assert_int_equal(kn_topic_descriptions_error(desc, 1), KN_OK);
    assert_int_equal(kn_topic_descriptions_partition_count(desc, 1), 2);
    kn_topic_descriptions_destroy(desc);
    delete_ok(admin, &names[1], 1);
}

static void test_describe_cluster(void **state) {
    kn_admin *admin = *state;
    char errstr[512] = "";
    kn_cluster_description *cd = NULL;
    int err = kn_admin_describe_cluster(admin, TIMEOUT_MS, &cd, errstr, sizeof(errstr));
    if (err)
        fail_msg("describe_cluster: %s", errstr);
    assert_non_null(kn_cluster_description_cluster_id(cd));
    assert_true(strlen(kn_cluster_description_cluster_id(cd)) > 0);
    assert_true(kn_cluster_description_controller_id(cd) >= 0);
    size_t n = kn_cluster_description_broker_count(cd);
    /* The harness's default cluster is one node; KN_TEST_BROKERS says
     * otherwise for a bigger one. */
    const char *want = getenv("KN_TEST_BROKERS");
    assert_int_equal(n, want ? (size_t)atoi(want) : 1);
    for (size_t i = 0; i < n; i++) {
        assert_non_null(kn_cluster_description_broker_host(cd, i));
        assert_true(kn_cluster_description_broker_port(cd, i) > 0);
        if (i > 0)
            assert_true(kn_cluster_description_broker_id(cd, i - 1) <
                        kn_cluster_description_broker_id(cd, i));
    }
    /* The bootstrap address is one of the brokers. */
    const char *bootstrap = kn_test_bootstrap();
    bool found = false;
    for (size_t i = 0; i < n; i++) {
        char hp[300];
        snprintf(hp, sizeof(hp), "%s:%d", kn_cluster_description_broker_host(cd, i),
                 (int)kn_cluster_description_broker_port(cd, i));
        found = found || strstr(bootstrap, hp) != NULL;
    }
    assert_true(found);
    kn_cluster_description_destroy(cd);
}

static void test_list_internal(void **state) {
    kn_admin *admin = *state;
    char errstr[512] = "";
    kn_topic_list *all = NULL, *user = NULL;
    assert_int_equal(
        kn_admin_list_topics(admin, KN_ADMIN_LIST_INTERNAL, TIMEOUT_MS, &all, errstr, sizeof(errstr)), KN_OK);
    assert_int_equal(kn_admin_list_topics(admin, 0, TIMEOUT_MS, &user, errstr, sizeof(errstr)), KN_OK);
    /* Internal topics only with the flag; the user list holds none. */
    for (size_t i = 0; i < kn_topic_list_count(user); i++)
        assert_int_equal(kn_topic_list_is_internal(user, i), 0);
    for (size_t i = 0; i < kn_topic_list_count(all); i++)
        if (kn_topic_list_is_internal(all, i))
            assert_int_equal(list_find(user, kn_topic_list_name(all, i)), -1);
    kn_topic_list_destroy(all);
    kn_topic_list_destroy(user);
}

/* No broker listens on the address: the whole call times out (nil on
 * the Lua side), within a bounded time. */
static void test_whole_call_timeout(void **state) {
    (void)state;
    kn_admin *admin = new_admin("127.0.0.1:1", "reconnect.backoff.max.ms", "200");
    char errstr[512] = "";
    kn_topic_list *list = NULL;
    int64_t t0 = kn_test_now_ms();
    int err = kn_admin_list_topics(admin, 0, 1500, &list, errstr, sizeof(errstr));
    int64_t took = kn_test_now_ms() - t0;
    assert_int_equal(err, KN_ERR__TIMED_OUT);
    assert_null(list);
    assert_true(strlen(errstr) > 0);
    assert_true(took >= 1000 && took < 10000);

    kn_new_topic *t[1] = {kn_new_topic_new("never-created", 1, 1)};
    kn_topic_results *res = NULL;
    err = kn_admin_create_topics(admin, t, 1, 0, 500, &res, errstr, sizeof(errstr));
    assert_int_equal(err, KN_ERR__TIMED_OUT);
    assert_null(res);
    kn_new_topic_destroy(t[0]);
    kn_admin_destroy(admin);
}

static void test_argument_checks(void **state) {
    kn_admin *admin = *state;
    char errstr[512] = "";
    kn_topic_results *res = NULL;
    assert_int_equal(kn_admin_create_topics(admin, NULL, 1, 0, 1000, &res, errstr, sizeof(errstr)),
                     KN_ERR__INVALID_ARG);
    assert_null(kn_new_topic_new(NULL, 1, 1));
    kn_new_topic *nt = kn_new_topic_new("x", 1, 1);
    assert_int_equal(kn_new_topic_set_config(nt, "", "v"), KN_ERR__INVALID_ARG);
    assert_int_equal(kn_new_topic_set_replica_assignment(nt, -1, NULL, 0), KN_ERR__INVALID_ARG);
    kn_new_topic_destroy(nt);
    /* A conf made for another client type is refused. */
    kn_conf *conf = kn_conf_new(KN_CLIENT_PRODUCER);
    assert_int_equal(kn_conf_set(conf, "bootstrap.servers", kn_test_bootstrap(), errstr, sizeof(errstr)),
                     KN_OK);
    assert_null(kn_admin_new(conf, errstr, sizeof(errstr)));
    assert_non_null(strstr(errstr, "admin"));
    kn_conf_destroy(conf);
    /* Empty requests succeed with empty results. */
    assert_int_equal(kn_admin_delete_topics(admin, NULL, 0, 1000, &res, errstr, sizeof(errstr)), KN_OK);
    assert_int_equal(kn_topic_results_count(res), 0);
    kn_topic_results_destroy(res);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_topic_lifecycle, setup, teardown),
        cmocka_unit_test_setup_teardown(test_validate_only_and_assignment, setup, teardown),
        cmocka_unit_test_setup_teardown(test_describe_cluster, setup, teardown),
        cmocka_unit_test_setup_teardown(test_list_internal, setup, teardown),
        cmocka_unit_test(test_whole_call_timeout),
        cmocka_unit_test_setup_teardown(test_argument_checks, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
