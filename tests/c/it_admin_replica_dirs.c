/*
 * it_admin_replica_dirs.c: describe_replica_log_dirs and
 * alter_replica_log_dirs against the real broker (one log dir): a
 * replica found in the broker's dir with no future dir, a partition the
 * broker has no replica of (no dir, no error, as Java), a broker not in
 * the cluster failing alone; moving a replica to the dir it is in
 * (accepted) and to a dir the broker does not have (LOG_DIR_NOT_FOUND).
 */
#include "kn_test.h"

#include <stdio.h>
#include <string.h>

#include "kafka_native.h"
#include "kafka_native_admin.h"

#define TIMEOUT_MS 30000

static void test_replica_dirs(void **state) {
    (void)state;
    char es[512] = "", topic[200];
    snprintf(topic, sizeof topic, "%s", kn_test_topic("replica-dirs"));
    kn_test_create_topic(topic, 1);
    kn_conf *conf = kn_conf_new(KN_CLIENT_ADMIN);
    kn_test_conf_set(conf, "bootstrap.servers", kn_test_bootstrap());
    kn_admin *admin = kn_admin_new(conf, es, sizeof es);
    kn_conf_destroy(conf);
    assert_non_null(admin);
    const char *names[1] = {topic};
    assert_int_equal(kn_admin_wait_for_topics(admin, names, 1, TIMEOUT_MS, es, sizeof es), KN_OK);
    kn_topic_descriptions *td = NULL;
    assert_int_equal(kn_admin_describe_topics(admin, names, 1, TIMEOUT_MS, &td, es, sizeof es), KN_OK);
    int32_t broker = kn_partition_info_leader(kn_topic_descriptions_partition(td, 0, 0));
    kn_topic_descriptions_destroy(td);

    const kn_replica_dir q[] = {{topic, 0, broker, NULL}, {topic, 5, broker, NULL}, {topic, 0, 9999, NULL}};
    kn_replica_log_dirs *d = NULL;
    if (kn_admin_describe_replica_log_dirs(admin, q, 3, TIMEOUT_MS, &d, es, sizeof es))
        fail_msg("describe_replica_log_dirs: %s", es);
    assert_int_equal(kn_replica_log_dirs_count(d), 3);
    if (kn_replica_log_dirs_error(d, 0))
        fail_msg("replica: %s", kn_replica_log_dirs_error_message(d, 0));
    char dir[1024];
    assert_non_null(kn_replica_log_dirs_current_dir(d, 0));
    snprintf(dir, sizeof dir, "%s", kn_replica_log_dirs_current_dir(d, 0));
    assert_true(dir[0] == '/');
    assert_int_equal(kn_replica_log_dirs_current_lag(d, 0), 0);
    assert_null(kn_replica_log_dirs_future_dir(d, 0));
    assert_int_equal(kn_replica_log_dirs_error(d, 1), KN_OK);
    assert_null(kn_replica_log_dirs_current_dir(d, 1));
    assert_int_equal(kn_replica_log_dirs_error(d, 2), KN_ERR_BROKER_NOT_AVAILABLE);
    kn_replica_log_dirs_destroy(d);

    const kn_replica_dir moves[] = {{topic, 0, broker, dir}};
    if (kn_admin_alter_replica_log_dirs(admin, moves, 1, TIMEOUT_MS, &d, es, sizeof es))
        fail_msg("alter_replica_log_dirs: %s", es);
    if (kn_replica_log_dirs_error(d, 0))
        fail_msg("move to its own dir: %s", kn_replica_log_dirs_error_message(d, 0));
    kn_replica_log_dirs_destroy(d);
    const kn_replica_dir nowhere[] = {{topic, 0, broker, "/no/such/kafka/log/dir"}};
    if (kn_admin_alter_replica_log_dirs(admin, nowhere, 1, TIMEOUT_MS, &d, es, sizeof es))
        fail_msg("alter_replica_log_dirs: %s", es);
    assert_int_equal(kn_replica_log_dirs_error(d, 0), KN_ERR_LOG_DIR_NOT_FOUND);
    kn_replica_log_dirs_destroy(d);
    const kn_replica_dir bad[] = {{topic, 0, broker, NULL}};
    assert_int_equal(kn_admin_alter_replica_log_dirs(admin, bad, 1, TIMEOUT_MS, &d, es, sizeof es),
                     KN_ERR__INVALID_ARG);
    kn_admin_destroy(admin);
}

int main(void) {
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_replica_dirs)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}
