/*
 * it_admin_partitions.c: create_partitions and delete_records against a
 * real broker (KAFKA_BOOTSTRAP): growing a topic (also with an explicit
 * assignment and validate_only), a shrinking count and a missing topic
 * failing alone; deleting records before an offset and before the high
 * watermark (the new low watermark seen by list_offsets), an offset past
 * the end and a missing topic failing alone.
 */
#include "kn_test.h"

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

/* Waits (bounded) until metadata shows topic with want partitions. */
static void wait_partitions(kn_admin *admin, const char *topic, size_t want) {
    int64_t until = kn_test_now_ms() + TIMEOUT_MS;
    size_t seen = 0;
    while (kn_test_now_ms() < until) {
        kn_topic_descriptions *d = NULL;
        char errstr[512] = "";
        if (kn_admin_describe_topics(admin, &topic, 1, TIMEOUT_MS, &d, errstr, sizeof(errstr)))
            fail_msg("describe_topics: %s", errstr);
        seen = kn_topic_descriptions_partition_count(d, 0);
        kn_topic_descriptions_destroy(d);
        if (seen == want)
            return;
        struct timespec ts = {0, 100 * 1000000L};
        nanosleep(&ts, NULL);
    }
    fail_msg("%s has %zu partitions, want %zu", topic, seen, want);
}

static size_t index_of(const kn_topic_results *res, const char *name) {
    for (size_t i = 0; i < kn_topic_results_count(res); i++)
        if (strcmp(kn_topic_results_name(res, i), name) == 0)
            return i;
    fail_msg("no result for %s", name);
    return 0;
}

static void test_create_partitions(void **state) {
    kn_admin *admin = *state;
    char grow[200], shrink[200], missing[200], errstr[512] = "";
    snprintf(grow, sizeof(grow), "%s", kn_test_topic("parts-grow"));
    snprintf(shrink, sizeof(shrink), "%s", kn_test_topic("parts-shrink"));
    snprintf(missing, sizeof(missing), "%s", kn_test_topic("parts-missing"));
    kn_test_create_topic(grow, 2);
    kn_test_create_topic(shrink, 3);

    kn_new_partitions specs[4] = {
        {grow, 4, NULL, 0, 0}, {shrink, 2, NULL, 0, 0}, {missing, 3, NULL, 0, 0}, {grow, 9, NULL, 0, 0}};
    kn_topic_results *res = NULL;
    assert_int_equal(kn_admin_create_partitions(admin, specs, 4, 0, TIMEOUT_MS, &res, errstr, sizeof(errstr)),
                     KN_OK);
    assert_int_equal(kn_topic_results_count(res), 3); /* grow once: the first spec */
    size_t k = index_of(res, grow);
    if (kn_topic_results_error(res, k))
        fail_msg("grow: %s", kn_topic_results_error_message(res, k));
    k = index_of(res, shrink);
    assert_int_equal(kn_topic_results_error(res, k), KN_ERR_INVALID_PARTITIONS);
    if (!strstr(kn_topic_results_error_message(res, k), "would not be an increase"))
        fail_msg("shrink message: %s", kn_topic_results_error_message(res, k));
    assert_int_equal(kn_topic_results_error(res, index_of(res, missing)), KN_ERR_UNKNOWN_TOPIC_OR_PARTITION);
    kn_topic_results_destroy(res);
    wait_partitions(admin, grow, 4);

    /* validate_only: checked, nothing created. */
    kn_new_partitions check = {grow, 6, NULL, 0, 0};
    assert_int_equal(kn_admin_create_partitions(admin, &check, 1, KN_ADMIN_VALIDATE_ONLY, TIMEOUT_MS, &res,
                                                errstr, sizeof(errstr)),
                     KN_OK);
    assert_int_equal(kn_topic_results_error(res, 0), KN_OK);
    kn_topic_results_destroy(res);

    /* An explicit assignment for the one new partition. */
    kn_cluster_description *cd = NULL;
    assert_int_equal(kn_admin_describe_cluster(admin, TIMEOUT_MS, &cd, errstr, sizeof(errstr)), KN_OK);
    int32_t broker = kn_cluster_description_broker_id(cd, 0);
    kn_cluster_description_destroy(cd);
    kn_new_partitions placed = {grow, 5, &broker, 1, 1};
    assert_int_equal(
        kn_admin_create_partitions(admin, &placed, 1, 0, TIMEOUT_MS, &res, errstr, sizeof(errstr)), KN_OK);
    if (kn_topic_results_error(res, 0))
        fail_msg("placed: %s", kn_topic_results_error_message(res, 0));
    kn_topic_results_destroy(res);
    wait_partitions(admin, grow, 5);
    /* An assignment for a broker that does not exist fails the topic. */
    int32_t nobody = 4242;
    kn_new_partitions bad = {grow, 6, &nobody, 1, 1};
    assert_int_equal(kn_admin_create_partitions(admin, &bad, 1, 0, TIMEOUT_MS, &res, errstr, sizeof(errstr)),
                     KN_OK);
    assert_int_not_equal(kn_topic_results_error(res, 0), KN_OK);
    kn_topic_results_destroy(res);
}

static void test_delete_records(void **state) {
    kn_admin *admin = *state;
    char topic[200], missing[200], errstr[512] = "", es[512];
    snprintf(topic, sizeof(topic), "%s", kn_test_topic("records"));
    snprintf(missing, sizeof(missing), "%s", kn_test_topic("records-missing"));
    kn_test_create_topic(topic, 2);
    kn_conf *conf = kn_conf_new(KN_CLIENT_PRODUCER);
    kn_test_conf_set(conf, "bootstrap.servers", kn_test_bootstrap());
    kn_producer *p = kn_producer_new(conf, NULL, NULL, es, sizeof es);
    kn_conf_destroy(conf);
    assert_non_null(p);
    for (int i = 0; i < 20; i++) {
        kn_record_out rec = KN_RECORD_OUT_INIT;
        rec.topic = topic;
        rec.partition = i % 2;
        rec.value = "v";
        rec.value_len = 1;
        assert_int_equal(kn_producer_send(p, &rec, es, sizeof es), KN_OK);
    }
    assert_int_equal(kn_producer_flush(p, TIMEOUT_MS), KN_OK);
    assert_int_equal(kn_producer_close(p, 10000), KN_OK);
    kn_producer_destroy(p);

    kn_topic_partition_list *l = kn_topic_partition_list_new();
    int k = kn_topic_partition_list_add(l, topic, 0);
    kn_topic_partition_list_set_offset(l, (size_t)k, 4);
    k = kn_topic_partition_list_add(l, topic, 1);
    kn_topic_partition_list_set_offset(l, (size_t)k, 50); /* past the end */
    k = kn_topic_partition_list_add(l, missing, 0);
    kn_topic_partition_list_set_offset(l, (size_t)k, 1);
    kn_offset_results *res = NULL;
    assert_int_equal(kn_admin_delete_records(admin, l, TIMEOUT_MS, &res, errstr, sizeof(errstr)), KN_OK);
    kn_topic_partition_list_destroy(l);
    assert_int_equal(kn_offset_results_count(res), 3);
    if (kn_offset_results_error(res, 0))
        fail_msg("delete p0: %s", kn_offset_results_error_message(res, 0));
    assert_int_equal(kn_offset_results_offset(res, 0), 4); /* the new low watermark */
    assert_int_equal(kn_offset_results_error(res, 1), KN_ERR_OFFSET_OUT_OF_RANGE);
    assert_int_equal(kn_offset_results_error(res, 2), KN_ERR_UNKNOWN_TOPIC_OR_PARTITION);
    kn_offset_results_destroy(res);

    /* list_offsets sees the new log start. */
    l = kn_topic_partition_list_new();
    k = kn_topic_partition_list_add(l, topic, 0);
    kn_topic_partition_list_set_offset(l, (size_t)k, KN_OFFSET_SPEC_EARLIEST);
    assert_int_equal(kn_admin_list_offsets(admin, l, 0, TIMEOUT_MS, &res, errstr, sizeof(errstr)), KN_OK);
    assert_int_equal(kn_offset_results_offset(res, 0), 4);
    kn_offset_results_destroy(res);

    /* Before the high watermark: everything. */
    kn_topic_partition_list_set_offset(l, 0, KN_OFFSET_END);
    assert_int_equal(kn_admin_delete_records(admin, l, TIMEOUT_MS, &res, errstr, sizeof(errstr)), KN_OK);
    assert_int_equal(kn_offset_results_error(res, 0), KN_OK);
    assert_int_equal(kn_offset_results_offset(res, 0), 10);
    kn_offset_results_destroy(res);
    kn_topic_partition_list_destroy(l);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_create_partitions, setup, teardown),
        cmocka_unit_test_setup_teardown(test_delete_records, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
