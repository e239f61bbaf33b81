/*
 * it_admin_oracle_reads.c: the admin's read-only calls whose answers the
 * broker makes deterministic, compared line by line with the Java Admin
 * client's (tools/java/admin-oracle reads). The scenario: a 2-partition
 * topic with five records of known timestamps on partition 0 (from our
 * idempotent producer), a simple group whose offsets our admin commits
 * (one with metadata), and a user our admin gives two quotas and two
 * SCRAM credentials. Then both sides print describe_cluster (id, nodes),
 * describe_features (finalized and supported ranges),
 * describe_metadata_quorum (leader, voter and observer ids),
 * list_topics (the topic's entry), describe_topics, list_offsets (earliest, latest, max-timestamp, a
 * timestamp), describe_log_dirs (the topic's replicas: size, lag,
 * future), describe_replica_log_dirs, describe_producers,
 * list_partition_reassignments, list_consumer_group_offsets,
 * list_groups (type classic), describe_classic_groups,
 * describe_client_quotas and describe_user_scram_credentials (with a
 * user that has none). Values that move on their own (quorum offsets and
 * fetch times, the finalized features' epoch, disk space, the KRaft
 * "controller" DescribeCluster names
 * at random among the brokers) are left out.
 */
#include "kn_test.h"
#include "oracle_lines.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "kafka_native.h"
#include "kafka_native_admin.h"

#define TIMEOUT_MS 30000
#define RECORDS    5

static const char *null_or(const char *s) { return s ? s : "null"; }

static void ints(const int32_t *v, size_t n, char *out, size_t size) {
    out[0] = '\0';
    for (size_t k = 0; k < n; k++) {
        size_t len = strlen(out);
        snprintf(out + len, size - len, "%s%d", k ? "," : "", (int)v[k]);
    }
}

static int cmp_i32(const void *a, const void *b) {
    int32_t x = *(const int32_t *)a, y = *(const int32_t *)b;
    return (x > y) - (x < y);
}

static void opt_i64(int64_t v, char *out, size_t size) {
    if (v < 0)
        snprintf(out, size, "-");
    else
        snprintf(out, size, "%lld", (long long)v);
}

static void cluster_lines(kn_admin *a, lines *out) {
    char es[512];
    kn_cluster_description *c = NULL;
    assert_int_equal(kn_admin_describe_cluster(a, TIMEOUT_MS, &c, es, sizeof es), KN_OK);
    add_line(out, "cluster id=%s nodes=%zu", kn_cluster_description_cluster_id(c),
             kn_cluster_description_broker_count(c));
    for (size_t i = 0; i < kn_cluster_description_broker_count(c); i++) /* sorted by id */
        add_line(out, "node %d %s:%d rack=%s", (int)kn_cluster_description_broker_id(c, i),
                 kn_cluster_description_broker_host(c, i), (int)kn_cluster_description_broker_port(c, i),
                 null_or(kn_cluster_description_broker_rack(c, i)));
    kn_cluster_description_destroy(c);

    kn_features *f = NULL;
    assert_int_equal(kn_admin_describe_features(a, TIMEOUT_MS, &f, es, sizeof es), KN_OK);
    /* The finalized epoch is the metadata log's offset: it moves. */
    lines l = {0};
    for (size_t i = 0; i < kn_features_finalized_count(f); i++)
        add_line(&l, "finalized %s %d..%d", kn_features_finalized_name(f, i), (int)kn_features_finalized_min_level(f, i),
                 (int)kn_features_finalized_max_level(f, i));
    move_sorted_lines(out, &l);
    for (size_t i = 0; i < kn_features_supported_count(f); i++)
        add_line(&l, "supported %s %d..%d", kn_features_supported_name(f, i),
                 (int)kn_features_supported_min_version(f, i), (int)kn_features_supported_max_version(f, i));
    move_sorted_lines(out, &l);
    kn_features_destroy(f);

    kn_quorum_info *q = NULL;
    assert_int_equal(kn_admin_describe_metadata_quorum(a, TIMEOUT_MS, &q, es, sizeof es), KN_OK);
    char kinds[2][256];
    for (int obs = 0; obs < 2; obs++) {
        int32_t v[64];
        size_t n = kn_quorum_info_replica_count(q, obs);
        assert_true(n <= 64);
        for (size_t k = 0; k < n; k++)
            v[k] = kn_quorum_info_replica_id(q, obs, k);
        qsort(v, n, sizeof v[0], cmp_i32);
        ints(v, n, kinds[obs], sizeof kinds[obs]);
    }
    add_line(out, "quorum leader=%d voters=%s observers=%s", (int)kn_quorum_info_leader_id(q), kinds[0], kinds[1]);
    kn_quorum_info_destroy(q);
}

/* Returns the leader of partition 0. */
static int32_t topic_lines(kn_admin *a, const char *topic, int64_t ts, lines *out) {
    char es[512], r[256], isr[256];
    kn_topic_list *tl = NULL;
    assert_int_equal(kn_admin_list_topics(a, 0, TIMEOUT_MS, &tl, es, sizeof es), KN_OK);
    for (size_t i = 0; i < kn_topic_list_count(tl); i++)
        if (!strcmp(kn_topic_list_name(tl, i), topic))
            add_line(out, "listed_topic %s id=%s internal=%s", topic, kn_topic_list_topic_id(tl, i),
                     kn_topic_list_is_internal(tl, i) ? "true" : "false");
    kn_topic_list_destroy(tl);
    kn_topic_descriptions *td = NULL;
    assert_int_equal(kn_admin_describe_topics(a, &topic, 1, TIMEOUT_MS, &td, es, sizeof es), KN_OK);
    assert_int_equal(kn_topic_descriptions_error(td, 0), 0);
    size_t np = kn_topic_descriptions_partition_count(td, 0);
    add_line(out, "topic %s id=%s internal=%s partitions=%zu", topic, kn_topic_descriptions_topic_id(td, 0),
             kn_topic_descriptions_is_internal(td, 0) ? "true" : "false", np);
    int32_t leader = -1;
    for (size_t p = 0; p < np; p++) {
        const kn_partition_info *pi = kn_topic_descriptions_partition(td, 0, p);
        size_t nr, ni;
        const int32_t *rv = kn_partition_info_replicas(pi, &nr), *iv = kn_partition_info_isr(pi, &ni);
        ints(rv, nr, r, sizeof r);
        ints(iv, ni, isr, sizeof isr);
        add_line(out, "tpart %s-%d leader=%d replicas=%s isr=%s", topic, (int)kn_partition_info_id(pi),
                 (int)kn_partition_info_leader(pi), r, isr);
        if (p == 0)
            leader = kn_partition_info_leader(pi);
    }
    kn_topic_descriptions_destroy(td);

    static const char *const names[4] = {"earliest", "latest", "max_timestamp", "timestamp"};
    const int64_t specs[4] = {KN_OFFSET_SPEC_EARLIEST, KN_OFFSET_SPEC_LATEST, KN_OFFSET_SPEC_MAX_TIMESTAMP, ts};
    for (int k = 0; k < 4; k++) {
        kn_topic_partition_list *l = kn_topic_partition_list_new();
        for (size_t p = 0; p < np; p++)
            kn_topic_partition_list_set_offset(l, (size_t)kn_topic_partition_list_add(l, topic, (int32_t)p),
                                               specs[k]);
        kn_offset_results *o = NULL;
        assert_int_equal(kn_admin_list_offsets(a, l, 0, TIMEOUT_MS, &o, es, sizeof es), KN_OK);
        lines ol = {0};
        for (size_t i = 0; i < kn_offset_results_count(o); i++) {
            char ep[24];
            opt_i64(kn_offset_results_leader_epoch(o, i), ep, sizeof ep);
            add_line(&ol, "offset %s-%d %s offset=%lld ts=%lld epoch=%s", topic,
                     (int)kn_offset_results_partition(o, i), names[k], (long long)kn_offset_results_offset(o, i),
                     (long long)kn_offset_results_timestamp(o, i), ep);
        }
        move_sorted_lines(out, &ol);
        kn_offset_results_destroy(o);
        kn_topic_partition_list_destroy(l);
    }

    kn_log_dirs *d = NULL;
    assert_int_equal(kn_admin_describe_log_dirs(a, &leader, 1, TIMEOUT_MS, &d, es, sizeof es), KN_OK);
    assert_int_equal(kn_log_dirs_broker_error(d, 0), 0);
    lines dl = {0};
    for (size_t k = 0; k < kn_log_dirs_dir_count(d, 0); k++)
        for (size_t i = 0; i < kn_log_dirs_replica_count(d, 0, k); i++)
            if (!strcmp(kn_log_dirs_replica_topic(d, 0, k, i), topic))
                add_line(&dl, "logdir %d %s %s-%d size=%lld lag=%lld future=%s", (int)leader,
                         kn_log_dirs_dir_path(d, 0, k), topic, (int)kn_log_dirs_replica_partition(d, 0, k, i),
                         (long long)kn_log_dirs_replica_size(d, 0, k, i),
                         (long long)kn_log_dirs_replica_offset_lag(d, 0, k, i),
                         kn_log_dirs_replica_is_future(d, 0, k, i) ? "true" : "false");
    move_sorted_lines(out, &dl);
    kn_log_dirs_destroy(d);

    kn_replica_dir reps[8];
    assert_true(np <= 8);
    for (size_t p = 0; p < np; p++)
        reps[p] = (kn_replica_dir){topic, (int32_t)p, leader, NULL};
    kn_replica_log_dirs *rd = NULL;
    assert_int_equal(kn_admin_describe_replica_log_dirs(a, reps, np, TIMEOUT_MS, &rd, es, sizeof es), KN_OK);
    for (size_t i = 0; i < kn_replica_log_dirs_count(rd); i++)
        add_line(out, "replicadir %s-%d-%d dir=%s lag=%lld future=%s future_lag=%lld", topic,
                 (int)kn_replica_log_dirs_partition(rd, i), (int)kn_replica_log_dirs_broker(rd, i),
                 null_or(kn_replica_log_dirs_current_dir(rd, i)), (long long)kn_replica_log_dirs_current_lag(rd, i),
                 null_or(kn_replica_log_dirs_future_dir(rd, i)), (long long)kn_replica_log_dirs_future_lag(rd, i));
    kn_replica_log_dirs_destroy(rd);

    kn_topic_partition_list *p0 = kn_topic_partition_list_new();
    kn_topic_partition_list_add(p0, topic, 0);
    kn_producer_states *ps = NULL;
    assert_int_equal(kn_admin_describe_producers(a, p0, TIMEOUT_MS, &ps, es, sizeof es), KN_OK);
    assert_int_equal(kn_producer_states_error(ps, 0), 0);
    for (size_t k = 0; k < kn_producer_states_producer_count(ps, 0); k++) {
        char ce[24], ts0[24];
        opt_i64(kn_producer_states_coordinator_epoch(ps, 0, k), ce, sizeof ce);
        opt_i64(kn_producer_states_txn_start_offset(ps, 0, k), ts0, sizeof ts0);
        add_line(out, "producer %s-0 id=%lld epoch=%d last_seq=%d last_ts=%lld coordinator_epoch=%s txn_start=%s",
                 topic, (long long)kn_producer_states_producer_id(ps, 0, k),
                 (int)kn_producer_states_producer_epoch(ps, 0, k), (int)kn_producer_states_last_sequence(ps, 0, k),
                 (long long)kn_producer_states_last_timestamp(ps, 0, k), ce, ts0);
    }
    kn_producer_states_destroy(ps);
    kn_reassignments *ra = NULL;
    assert_int_equal(kn_admin_list_partition_reassignments(a, p0, TIMEOUT_MS, &ra, es, sizeof es), KN_OK);
    add_line(out, "reassignments %zu", kn_reassignments_count(ra));
    kn_reassignments_destroy(ra);
    kn_topic_partition_list_destroy(p0);
    return leader;
}

static void group_lines(kn_admin *a, const char *group, lines *out) {
    char es[512];
    kn_group_offsets_spec spec = {group, NULL};
    kn_group_offsets *o = NULL;
    assert_int_equal(kn_admin_list_consumer_group_offsets(a, &spec, 1, 0, TIMEOUT_MS, &o, es, sizeof es), KN_OK);
    assert_int_equal(kn_group_offsets_error(o, 0), 0);
    const kn_topic_partition_list *l = kn_group_offsets_partitions(o, 0);
    lines gl = {0};
    for (size_t k = 0; k < kn_topic_partition_list_count(l); k++) {
        char ep[24];
        opt_i64(kn_topic_partition_list_leader_epoch(l, k), ep, sizeof ep);
        const char *md = kn_topic_partition_list_metadata(l, k);
        add_line(&gl, "goffset %s %s-%d offset=%lld epoch=%s metadata=%s", group, kn_topic_partition_list_topic(l, k),
                 (int)kn_topic_partition_list_partition(l, k), (long long)kn_topic_partition_list_offset(l, k), ep,
                 md ? md : "");
    }
    move_sorted_lines(out, &gl);
    kn_group_offsets_destroy(o);

    const char *types[1] = {"classic"};
    kn_group_list *list = NULL;
    assert_int_equal(kn_admin_list_groups(a, types, 1, NULL, 0, TIMEOUT_MS, &list, es, sizeof es), KN_OK);
    for (size_t i = 0; i < kn_group_list_count(list); i++)
        if (!strcmp(kn_group_list_group_id(list, i), group)) {
            /* Java prints GroupType's display name: "Classic" for "classic". */
            char type[32];
            snprintf(type, sizeof type, "%s", kn_group_list_type(list, i));
            type[0] = (char)(type[0] - 'a' + 'A');
            add_line(out, "listed %s type=%s protocol=%s state=%s", group, type, kn_group_list_protocol_type(list, i),
                     kn_group_list_state(list, i));
        }
    kn_group_list_destroy(list);

    kn_group_descriptions *d = NULL;
    assert_int_equal(kn_admin_describe_classic_groups(a, &group, 1, 0, TIMEOUT_MS, &d, es, sizeof es), KN_OK);
    assert_int_equal(kn_group_descriptions_error(d, 0), 0);
    add_line(out, "classic %s state=%s simple=%s protocol=%s members=%zu coordinator=%d", group,
             kn_group_descriptions_state(d, 0), kn_group_descriptions_is_simple(d, 0) ? "true" : "false",
             kn_group_descriptions_assignor(d, 0) ? kn_group_descriptions_assignor(d, 0) : "",
             kn_group_descriptions_member_count(d, 0), (int)kn_group_descriptions_coordinator(d, 0));
    kn_group_descriptions_destroy(d);
}

static void user_lines(kn_admin *a, const char *user, lines *out) {
    char es[512];
    kn_quota_filter f = {"user", KN_QUOTA_MATCH_EXACT, user};
    kn_quota_descriptions *q = NULL;
    assert_int_equal(kn_admin_describe_client_quotas(a, &f, 1, 0, TIMEOUT_MS, &q, es, sizeof es), KN_OK);
    lines ql = {0};
    for (size_t i = 0; i < kn_quota_descriptions_count(q); i++) {
        lines parts = {0};
        for (size_t p = 0; p < kn_quota_descriptions_part_count(q, i); p++)
            add_line(&parts, "%s=%s", kn_quota_descriptions_part_type(q, i, p),
                     null_or(kn_quota_descriptions_part_name(q, i, p)));
        sort_lines(&parts);
        char entity[512] = "";
        for (size_t p = 0; p < parts.n; p++) {
            size_t len = strlen(entity);
            snprintf(entity + len, sizeof entity - len, "%s%s", p ? "," : "", parts.v[p]);
        }
        free_lines(&parts);
        /* Whole numbers of bytes: Java's Double.toString gives "N.0". */
        for (size_t v = 0; v < kn_quota_descriptions_value_count(q, i); v++)
            add_line(&ql, "quota %s %s=%.1f", entity, kn_quota_descriptions_value_key(q, i, v),
                     kn_quota_descriptions_value(q, i, v));
    }
    move_sorted_lines(out, &ql);
    kn_quota_descriptions_destroy(q);

    char none[256];
    snprintf(none, sizeof none, "%s-none", user);
    const char *users[2] = {user, none};
    kn_scram_credentials *c = NULL;
    assert_int_equal(kn_admin_describe_user_scram_credentials(a, users, 2, TIMEOUT_MS, &c, es, sizeof es), KN_OK);
    /* In the order asked (Java's prints do), whatever the broker's. */
    for (size_t u = 0; u < 2; u++)
        for (size_t i = 0; i < kn_scram_credentials_count(c); i++) {
            if (strcmp(kn_scram_credentials_user(c, i), users[u]))
                continue;
            if (kn_scram_credentials_error(c, i)) {
                add_line(out, "scram %s error=%s", kn_scram_credentials_user(c, i),
                         kn_err_name(kn_scram_credentials_error(c, i)));
                continue;
            }
            lines sl = {0};
            for (size_t k = 0; k < kn_scram_credentials_mechanism_count(c, i); k++)
                add_line(&sl, "scram %s %s iterations=%d", kn_scram_credentials_user(c, i),
                         kn_scram_credentials_mechanism(c, i, k) == KN_SCRAM_SHA_256 ? "SCRAM_SHA_256" : "SCRAM_SHA_512",
                         (int)kn_scram_credentials_iterations(c, i, k));
            move_sorted_lines(out, &sl);
        }
    kn_scram_credentials_destroy(c);
}

/* args: topic, group, user, timestamp (the oracle's order). */
static void our_lines(kn_admin *a, const char *const *args, size_t n, lines *out) {
    assert_int_equal(n, 4);
    cluster_lines(a, out);
    topic_lines(a, args[0], strtoll(args[3], NULL, 10), out);
    group_lines(a, args[1], out);
    user_lines(a, args[2], out);
}

static void test_reads(void **state) {
    (void)state;
    char topic[200], group[220], user[220], ts_arg[32], es[512], want[512];
    snprintf(topic, sizeof topic, "%s", kn_test_topic("admin-reads"));
    snprintf(group, sizeof group, "%s-g", topic);
    snprintf(user, sizeof user, "%s-u", topic);
    kn_test_create_topic(topic, 2);
    struct timespec now;
    clock_gettime(CLOCK_REALTIME, &now);
    int64_t base_ts = (int64_t)now.tv_sec * 1000 - 60000; /* recent: retention keeps it */
    snprintf(ts_arg, sizeof ts_arg, "%lld", (long long)(base_ts + 2500)); /* between records 2 and 3 */

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

    kn_admin *a = oracle_admin_new();
    kn_topic_partition_list *l = kn_topic_partition_list_new();
    kn_topic_partition_list_set_offset(l, (size_t)kn_topic_partition_list_add(l, topic, 0), 3);
    assert_int_equal(kn_topic_partition_list_set_metadata(l, 0, "m1"), KN_OK);
    kn_topic_partition_list_set_offset(l, (size_t)kn_topic_partition_list_add(l, topic, 1), 0);
    kn_group_offsets *go = NULL;
    assert_int_equal(kn_admin_alter_consumer_group_offsets(a, group, l, TIMEOUT_MS, &go, es, sizeof es), KN_OK);
    assert_int_equal(kn_group_offsets_error(go, 0), 0);
    kn_group_offsets_destroy(go);
    kn_topic_partition_list_destroy(l);

    kn_quota_op qops[2] = {{{{"user"}, {user}}, "producer_byte_rate", 1048576, 0},
                           {{{"user"}, {user}}, "consumer_byte_rate", 2097152, 0}};
    kn_quota_descriptions *qr = NULL;
    assert_int_equal(kn_admin_alter_client_quotas(a, qops, 2, 0, TIMEOUT_MS, &qr, es, sizeof es), KN_OK);
    assert_int_equal(kn_quota_descriptions_error(qr, 0), 0);
    kn_quota_descriptions_destroy(qr);
    kn_scram_op sops[2] = {{user, KN_SCRAM_SHA_256, "pw-256", 4096, NULL, 0},
                           {user, KN_SCRAM_SHA_512, "pw-512", 8192, NULL, 0}};
    kn_scram_credentials *sr = NULL;
    /* One user twice in one call is refused (DUPLICATE_RESOURCE): two calls. */
    for (int k = 0; k < 2; k++) {
        assert_int_equal(kn_admin_alter_user_scram_credentials(a, &sops[k], 1, TIMEOUT_MS, &sr, es, sizeof es),
                         KN_OK);
        assert_int_equal(kn_scram_credentials_error(sr, 0), 0);
        kn_scram_credentials_destroy(sr);
    }

    /* Quotas and credentials are applied from the metadata log a moment
     * after the answer: wait (bounded) until ours show them all. */
    const char *args[4] = {topic, group, user, ts_arg};
    lines ours = {0};
    int64_t until = kn_test_now_ms() + TIMEOUT_MS;
    for (;;) {
        our_lines(a, args, 4, &ours);
        bool done = has_line(&ours, "consumer_byte_rate=2097152.0") && has_line(&ours, "producer_byte_rate=") &&
                    has_line(&ours, "SCRAM_SHA_512 iterations=8192") && has_line(&ours, "SCRAM_SHA_256");
        free_lines(&ours);
        if (done)
            break;
        if (kn_test_now_ms() > until)
            fail_msg("the quotas and SCRAM credentials never showed");
        usleep(300 * 1000);
    }
    oracle_same_as_java(a, "reads", args, 4, our_lines, &ours);

    /* What the scenario made, so a comparison of two empty answers
     * cannot pass. */
    snprintf(want, sizeof want, "offset %s-0 latest offset=%d ", topic, RECORDS);
    assert_true(has_line(&ours, want));
    snprintf(want, sizeof want, "offset %s-0 timestamp offset=3 ts=%lld ", topic, (long long)(base_ts + 3000));
    assert_true(has_line(&ours, want));
    snprintf(want, sizeof want, "offset %s-0 max_timestamp offset=4 ", topic);
    assert_true(has_line(&ours, want));
    snprintf(want, sizeof want, "producer %s-0 id=", topic);
    assert_true(has_line(&ours, want));
    assert_true(has_line(&ours, " last_seq=4 "));
    snprintf(want, sizeof want, "goffset %s %s-0 offset=3 epoch=- metadata=m1", group, topic);
    assert_true(has_line(&ours, want));
    snprintf(want, sizeof want, "listed %s type=Classic protocol= state=Empty", group);
    assert_true(has_line(&ours, want));
    snprintf(want, sizeof want, "classic %s state=Empty simple=true", group);
    assert_true(has_line(&ours, want));
    snprintf(want, sizeof want, "scram %s-none error=RESOURCE_NOT_FOUND", user);
    assert_true(has_line(&ours, want));
    assert_true(has_line(&ours, "reassignments 0"));
    snprintf(want, sizeof want, "replicadir %s-0-", topic);
    assert_true(has_line(&ours, want));
    assert_true(has_line(&ours, "finalized metadata.version "));
    snprintf(want, sizeof want, "listed_topic %s id=", topic);
    assert_true(has_line(&ours, want));
    free_lines(&ours);

    /* Leave nothing that throttles: the quotas go again. */
    kn_quota_op rm[2] = {{{{"user"}, {user}}, "producer_byte_rate", 0, 1}, {{{"user"}, {user}}, "consumer_byte_rate", 0, 1}};
    assert_int_equal(kn_admin_alter_client_quotas(a, rm, 2, 0, TIMEOUT_MS, &qr, es, sizeof es), KN_OK);
    kn_quota_descriptions_destroy(qr);
    kn_admin_destroy(a);
}

int main(void) {
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_reads)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}
