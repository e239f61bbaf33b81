/*
 * it_admin_log_dirs.c: describe_log_dirs against a real broker
 * (KAFKA_BOOTSTRAP): the broker's log directory with its sizes and the
 * replicas of a fresh topic holding records; a broker id that is not in
 * the cluster failing alone (BROKER_NOT_AVAILABLE, not a timeout).
 */
#include "kn_test.h"

#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "kafka_native.h"
#include "kafka_native_admin.h"

#define TIMEOUT_MS 30000

static void test_log_dirs(void **state) {
    (void)state;
    char errstr[512] = "", es[512], topic[200];
    snprintf(topic, sizeof(topic), "%s", kn_test_topic("log-dirs"));
    kn_test_create_topic(topic, 2);
    kn_conf *conf = kn_conf_new(KN_CLIENT_PRODUCER);
    kn_test_conf_set(conf, "bootstrap.servers", kn_test_bootstrap());
    kn_producer *p = kn_producer_new(conf, NULL, NULL, es, sizeof es);
    kn_conf_destroy(conf);
    assert_non_null(p);
    kn_record_out rec = KN_RECORD_OUT_INIT;
    rec.topic = topic;
    rec.partition = 0;
    rec.value = "a record with some bytes in it";
    rec.value_len = strlen(rec.value);
    assert_int_equal(kn_producer_send(p, &rec, es, sizeof es), KN_OK);
    assert_int_equal(kn_producer_flush(p, TIMEOUT_MS), KN_OK);
    assert_int_equal(kn_producer_close(p, 10000), KN_OK);
    kn_producer_destroy(p);

    conf = kn_conf_new(KN_CLIENT_ADMIN);
    kn_test_conf_set(conf, "bootstrap.servers", kn_test_bootstrap());
    kn_admin *admin = kn_admin_new(conf, errstr, sizeof(errstr));
    kn_conf_destroy(conf);
    assert_non_null(admin);
    kn_cluster_description *cd = NULL;
    assert_int_equal(kn_admin_describe_cluster(admin, TIMEOUT_MS, &cd, errstr, sizeof(errstr)), KN_OK);
    int32_t ids[2] = {kn_cluster_description_broker_id(cd, 0), 4242};
    kn_cluster_description_destroy(cd);

    kn_log_dirs *d = NULL;
    assert_int_equal(kn_admin_describe_log_dirs(admin, ids, 2, TIMEOUT_MS, &d, errstr, sizeof(errstr)),
                     KN_OK);
    assert_int_equal(kn_log_dirs_broker_count(d), 2);
    assert_int_equal(kn_log_dirs_broker_id(d, 0), ids[0]);
    assert_int_equal(kn_log_dirs_broker_error(d, 0), KN_OK);
    assert_true(kn_log_dirs_dir_count(d, 0) >= 1);
    bool found0 = false, found1 = false;
    for (size_t i = 0; i < kn_log_dirs_dir_count(d, 0); i++) {
        assert_int_equal(kn_log_dirs_dir_error(d, 0, i), KN_OK);
        assert_non_null(kn_log_dirs_dir_path(d, 0, i));
        assert_true(kn_log_dirs_dir_total_bytes(d, 0, i) > 0);
        assert_true(kn_log_dirs_dir_usable_bytes(d, 0, i) > 0);
        assert_true(kn_log_dirs_dir_usable_bytes(d, 0, i) <= kn_log_dirs_dir_total_bytes(d, 0, i));
        for (size_t r = 0; r < kn_log_dirs_replica_count(d, 0, i); r++) {
            if (strcmp(kn_log_dirs_replica_topic(d, 0, i, r), topic) != 0)
                continue;
            int32_t part = kn_log_dirs_replica_partition(d, 0, i, r);
            assert_false(kn_log_dirs_replica_is_future(d, 0, i, r));
            assert_int_equal(kn_log_dirs_replica_offset_lag(d, 0, i, r), 0);
            if (part == 0) {
                found0 = true;
                assert_true(kn_log_dirs_replica_size(d, 0, i, r) > 30); /* the record's batch */
            } else {
                found1 = true;
                assert_int_equal(kn_log_dirs_replica_size(d, 0, i, r), 0);
            }
        }
    }
    assert_true(found0 && found1);
    assert_int_equal(kn_log_dirs_broker_error(d, 1), KN_ERR_BROKER_NOT_AVAILABLE);
    assert_non_null(strstr(kn_log_dirs_broker_error_message(d, 1), "4242"));
    assert_int_equal(kn_log_dirs_dir_count(d, 1), 0);
    kn_log_dirs_destroy(d);
    kn_admin_destroy(admin);
}

int main(void) {
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_log_dirs)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}
