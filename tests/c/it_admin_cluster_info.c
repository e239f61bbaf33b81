/*
 * it_admin_cluster_info.c: describe_features and
 * describe_metadata_quorum against a real broker (KAFKA_BOOTSTRAP): the
 * finalized metadata.version inside the range the broker supports, and
 * the KRaft quorum with its leader among the voters.
 */
#include "kn_test.h"

#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "kafka_native.h"
#include "kafka_native_admin.h"

#define TIMEOUT_MS 30000

static int setup(void **state) {
    char errstr[512] = "";
    kn_conf *conf = kn_conf_new(KN_CLIENT_ADMIN);
    kn_test_conf_set(conf, "bootstrap.servers", kn_test_bootstrap());
    *state = kn_admin_new(conf, errstr, sizeof(errstr));
    kn_conf_destroy(conf);
    if (!*state)
        fail_msg("kn_admin_new: %s", errstr);
    return 0;
}

static int teardown(void **state) {
    kn_admin_destroy(*state);
    return 0;
}

static void test_features(void **state) {
    char errstr[512] = "";
    kn_features *f = NULL;
    if (kn_admin_describe_features(*state, TIMEOUT_MS, &f, errstr, sizeof(errstr)))
        fail_msg("describe_features: %s", errstr);
    assert_true(kn_features_finalized_epoch(f) >= 0);
    int16_t level = -1, lo = -1, hi = -1;
    for (size_t i = 0; i < kn_features_finalized_count(f); i++)
        if (strcmp(kn_features_finalized_name(f, i), "metadata.version") == 0)
            level = kn_features_finalized_max_level(f, i);
    for (size_t i = 0; i < kn_features_supported_count(f); i++)
        if (strcmp(kn_features_supported_name(f, i), "metadata.version") == 0) {
            lo = kn_features_supported_min_version(f, i);
            hi = kn_features_supported_max_version(f, i);
        }
    if (level < 1 || level < lo || level > hi)
        fail_msg("metadata.version %d outside the supported %d..%d", level, lo, hi);
    kn_features_destroy(f);
}

static void test_quorum(void **state) {
    char errstr[512] = "";
    kn_quorum_info *q = NULL;
    if (kn_admin_describe_metadata_quorum(*state, TIMEOUT_MS, &q, errstr, sizeof(errstr)))
        fail_msg("describe_metadata_quorum: %s", errstr);
    assert_true(kn_quorum_info_leader_id(q) >= 0);
    assert_true(kn_quorum_info_leader_epoch(q) >= 0);
    assert_true(kn_quorum_info_high_watermark(q) > 0);
    size_t n = kn_quorum_info_replica_count(q, 0);
    assert_true(n >= 1);
    bool leader_votes = false;
    for (size_t i = 0; i < n; i++) {
        if (kn_quorum_info_replica_id(q, 0, i) == kn_quorum_info_leader_id(q)) {
            leader_votes = true;
            assert_true(kn_quorum_info_replica_log_end_offset(q, 0, i) >= kn_quorum_info_high_watermark(q));
        }
    }
    assert_true(leader_votes);
    kn_quorum_info_destroy(q);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_features, setup, teardown),
        cmocka_unit_test_setup_teardown(test_quorum, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
