/*
 * it_admin_offsets.c: list_offsets against a real broker
 * (KAFKA_BOOTSTRAP): earliest, latest, max-timestamp, by timestamp (and
 * past the last record), earliest-local and latest-tiered on a topic
 * with known record timestamps; a missing topic and a missing partition
 * failing alone; and a group reset to a timestamp (list_offsets, then
 * alter_consumer_group_offsets) honoured by our consumer.
 */
#include "kn_test.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "kafka_native.h"
#include "kafka_native_admin.h"

#define TIMEOUT_MS 30000
#define RECORDS    10

static char topic[200];
static int64_t base_ts;

static int setup(void **state) {
    snprintf(topic, sizeof(topic), "%s", kn_test_topic("admin-offsets"));
    kn_test_create_topic(topic, 2);
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    base_ts = ((int64_t)ts.tv_sec * 1000) - 60000; /* recent: retention keeps it */
    char es[512];
    kn_conf *conf = kn_conf_new(KN_CLIENT_PRODUCER);
    kn_test_conf_set(conf, "bootstrap.servers", kn_test_bootstrap());
    kn_producer *p = kn_producer_new(conf, NULL, NULL, es, sizeof es);
    kn_conf_destroy(conf);
    if (!p)
        fail_msg("kn_producer_new: %s", es);
    for (int i = 0; i < RECORDS; i++) {
        kn_record_out rec = KN_RECORD_OUT_INIT;
        rec.topic = topic;
        rec.partition = 0;
        rec.value = "v";
        rec.value_len = 1;
        rec.timestamp = base_ts + i * 1000;
        if (kn_producer_send(p, &rec, es, sizeof es) != KN_OK)
            fail_msg("send: %s", es);
    }
    assert_int_equal(kn_producer_flush(p, TIMEOUT_MS), KN_OK);
    assert_int_equal(kn_producer_close(p, 10000), KN_OK);
    kn_producer_destroy(p);
    char errstr[512] = "";
    conf = kn_conf_new(KN_CLIENT_ADMIN);
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

static void add(kn_topic_partition_list *l, const char *t, int32_t p, int64_t spec) {
    int k = kn_topic_partition_list_add(l, t, p);
    assert_true(k >= 0);
    kn_topic_partition_list_set_offset(l, (size_t)k, spec);
}

static void test_specs(void **state) {
    kn_admin *admin = *state;
    char missing[200];
    snprintf(missing, sizeof(missing), "%s", kn_test_topic("offsets-missing"));
    kn_topic_partition_list *l = kn_topic_partition_list_new();
    add(l, topic, 0, KN_OFFSET_SPEC_EARLIEST); /* 0 */
    add(l, topic, 1, KN_OFFSET_SPEC_LATEST);   /* 1: empty partition */
    add(l, topic, 0, KN_OFFSET_SPEC_LATEST);   /* a repeat: first spec wins */
    add(l, missing, 0, KN_OFFSET_SPEC_LATEST); /* 2 */
    add(l, topic, 7, KN_OFFSET_SPEC_LATEST);   /* 3: no such partition */
    kn_offset_results *res = NULL;
    char errstr[512] = "";
    int err = kn_admin_list_offsets(admin, l, 0, TIMEOUT_MS, &res, errstr, sizeof(errstr));
    kn_topic_partition_list_destroy(l);
    if (err)
        fail_msg("list_offsets: %s", errstr);
    assert_int_equal(kn_offset_results_count(res), 4);
    assert_int_equal(kn_offset_results_error(res, 0), KN_OK);
    assert_int_equal(kn_offset_results_offset(res, 0), 0);
    assert_int_equal(kn_offset_results_error(res, 1), KN_OK);
    assert_int_equal(kn_offset_results_offset(res, 1), 0);
    assert_string_equal(kn_offset_results_topic(res, 2), missing);
    assert_int_equal(kn_offset_results_error(res, 2), KN_ERR_UNKNOWN_TOPIC_OR_PARTITION);
    assert_int_equal(kn_offset_results_partition(res, 3), 7);
    assert_int_equal(kn_offset_results_error(res, 3), KN_ERR_UNKNOWN_TOPIC_OR_PARTITION);
    assert_non_null(strstr(kn_offset_results_error_message(res, 3), "Partition 7"));
    kn_offset_results_destroy(res);

    /* One spec per call for the same partition. */
    static const struct {
        int64_t spec; /* a timestamp is base_ts + this when >= 0 */
        int64_t offset, ts_off;
    } cases[] = {
        {KN_OFFSET_SPEC_LATEST, RECORDS, -2},
        {KN_OFFSET_SPEC_MAX_TIMESTAMP, RECORDS - 1, (RECORDS - 1) * 1000},
        {3500, 4, 4000},
        {0, 0, 0},
        {RECORDS * 1000, -1, -2}, /* after the last record: none */
        {KN_OFFSET_SPEC_EARLIEST_LOCAL, 0, -2},
    };
    for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
        l = kn_topic_partition_list_new();
        add(l, topic, 0, cases[c].spec >= 0 ? base_ts + cases[c].spec : cases[c].spec);
        err = kn_admin_list_offsets(admin, l, KN_ADMIN_READ_COMMITTED, TIMEOUT_MS, &res, errstr,
                                    sizeof(errstr));
        kn_topic_partition_list_destroy(l);
        if (err)
            fail_msg("list_offsets case %zu: %s", c, errstr);
        if (kn_offset_results_error(res, 0))
            fail_msg("case %zu: %s", c, kn_offset_results_error_message(res, 0));
        if (kn_offset_results_offset(res, 0) != cases[c].offset)
            fail_msg("case %zu: offset %lld, want %lld", c, (long long)kn_offset_results_offset(res, 0),
                     (long long)cases[c].offset);
        if (cases[c].ts_off >= 0)
            assert_int_equal(kn_offset_results_timestamp(res, 0), base_ts + cases[c].ts_off);
        if (cases[c].offset >= 0)
            assert_true(kn_offset_results_leader_epoch(res, 0) >= 0);
        kn_offset_results_destroy(res);
    }

    /* Latest-tiered on a topic without tiered storage: no offset (-1). */
    l = kn_topic_partition_list_new();
    add(l, topic, 0, KN_OFFSET_SPEC_LATEST_TIERED);
    assert_int_equal(kn_admin_list_offsets(admin, l, 0, TIMEOUT_MS, &res, errstr, sizeof(errstr)), KN_OK);
    kn_topic_partition_list_destroy(l);
    assert_int_equal(kn_offset_results_error(res, 0), KN_OK);
    assert_int_equal(kn_offset_results_offset(res, 0), -1);
    kn_offset_results_destroy(res);

    /* A spec that is neither: refused, naming the partition. */
    l = kn_topic_partition_list_new();
    add(l, topic, 0, -9);
    assert_int_equal(kn_admin_list_offsets(admin, l, 0, TIMEOUT_MS, &res, errstr, sizeof(errstr)),
                     KN_ERR__INVALID_ARG);
    assert_non_null(strstr(errstr, "-0: -9"));
    kn_topic_partition_list_destroy(l);
}

static void test_reset_to_timestamp(void **state) {
    kn_admin *admin = *state;
    char group[200], errstr[512] = "";
    snprintf(group, sizeof(group), "%s", kn_test_topic("grp-ts"));
    kn_topic_partition_list *l = kn_topic_partition_list_new();
    add(l, topic, 0, base_ts + 6000);
    kn_offset_results *res = NULL;
    assert_int_equal(kn_admin_list_offsets(admin, l, 0, TIMEOUT_MS, &res, errstr, sizeof(errstr)), KN_OK);
    assert_int_equal(kn_offset_results_offset(res, 0), 6);
    kn_topic_partition_list_set_offset(l, 0, kn_offset_results_offset(res, 0));
    kn_offset_results_destroy(res);
    kn_group_offsets *go = NULL;
    assert_int_equal(
        kn_admin_alter_consumer_group_offsets(admin, group, l, TIMEOUT_MS, &go, errstr, sizeof(errstr)),
        KN_OK);
    assert_int_equal(kn_topic_partition_list_err(kn_group_offsets_partitions(go, 0), 0), KN_OK);
    kn_group_offsets_destroy(go);
    kn_topic_partition_list_destroy(l);

    char es[512];
    kn_conf *conf = kn_conf_new(KN_CLIENT_CONSUMER);
    kn_test_conf_set(conf, "bootstrap.servers", kn_test_bootstrap());
    kn_test_conf_set(conf, "group.id", group);
    kn_test_conf_set(conf, "auto.offset.reset", "earliest");
    kn_consumer *c = kn_consumer_new(conf, es, sizeof es);
    kn_conf_destroy(conf);
    if (!c)
        fail_msg("kn_consumer_new: %s", es);
    const char *topics[1] = {topic};
    assert_int_equal(kn_consumer_subscribe(c, topics, 1, NULL, NULL), KN_OK);
    int64_t first = -1, deadline = kn_test_now_ms() + 60000;
    while (first < 0 && kn_test_now_ms() < deadline) {
        kn_records *r = NULL;
        if (kn_consumer_poll(c, 200, &r, es, sizeof es) != KN_OK)
            fail_msg("poll: %s", es);
        if (kn_records_count(r))
            first = kn_records_offset(r, 0);
        kn_records_free(r);
    }
    kn_consumer_close(c, -1);
    kn_consumer_destroy(c);
    assert_int_equal(first, 6);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_specs),
        cmocka_unit_test(test_reset_to_timestamp),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
