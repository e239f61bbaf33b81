/*
 * it_consumer_leader.c: a leader change under a consumer that reads
 * ahead. The test starts its own three-node cluster (tools/kafka/broker
 * --nodes 3, loopback, in a private directory, stopped at the end), has
 * the Java producer perf tool fill a replication-factor-3 topic, and
 * reads it with small fetches; a third of the way through, the leader
 * of partition 0 is killed (SIGKILL). Leadership moves to a follower,
 * the consumer sees the leader epoch change (KIP-320 validation drops
 * its buffered and read-ahead data, confirms the position) and goes on:
 * every offset of every partition exactly once, in order.
 *
 * KAFKA_BOOTSTRAP is required like in every broker test (the suite's
 * broker is not used: one node cannot move leadership).
 */
#include "kn_test.h"

#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "kafka_native.h"

#define PARTS   3
#define RECORDS 150000

static char dir[256], bootstrap[512], topic[256];

/* The first line of a command's output that starts with prefix, after
 * the prefix, into out. */
static void capture(const char *cmd, const char *prefix, char *out, size_t n) {
    FILE *f = popen(cmd, "r");
    assert_non_null(f);
    char line[1024];
    out[0] = '\0';
    while (fgets(line, sizeof line, f)) {
        char *at = strstr(line, prefix);
        if (at && !out[0]) {
            snprintf(out, n, "%s", at + strlen(prefix));
            out[strcspn(out, " \t\r\n")] = '\0';
        }
    }
    pclose(f);
    if (!out[0])
        fail_msg("no \"%s\" in the output of: %s", prefix, cmd);
}

static int setup(void **state) {
    kn_test_bootstrap(); /* fail clearly without the suite's broker */
    snprintf(dir, sizeof dir, "/tmp/kn-it-leader-%d", (int)getpid());
    kn_test_run("%s start --nodes 3 --dir %s >/dev/null", kn_test_source_path("tools/kafka/broker"), dir);
    char cmd[1024];
    snprintf(cmd, sizeof cmd, "%s env --dir %s", kn_test_source_path("tools/kafka/broker"), dir);
    capture(cmd, "KAFKA_BOOTSTRAP=", bootstrap, sizeof bootstrap);
    /* env may quote the value */
    if (bootstrap[0] == '"' || bootstrap[0] == '\'') {
        memmove(bootstrap, bootstrap + 1, strlen(bootstrap));
        bootstrap[strcspn(bootstrap, "\"'")] = '\0';
    }
    snprintf(topic, sizeof topic, "%s", kn_test_topic("leader"));
    kn_test_run("%s topics --bootstrap-server %s --create --topic %s --partitions %d "
                "--replication-factor 3 >/dev/null",
                kn_test_source_path("tools/kafka/java-tool"), bootstrap, topic, PARTS);
    kn_test_run("%s producer-perf --bootstrap-server %s --topic %s --num-records %d --record-size 512 "
                "--throughput -1 --command-property acks=all --command-property linger.ms=5 >/dev/null",
                kn_test_source_path("tools/kafka/java-tool"), bootstrap, topic, RECORDS);
    return 0;
}

static int teardown(void **state) {
    char cmd[1024];
    snprintf(cmd, sizeof cmd, "%s stop --dir %s >/dev/null 2>&1; rm -rf %s",
             kn_test_source_path("tools/kafka/broker"), dir, dir);
    if (system(cmd) != 0)
        fprintf(stderr, "could not stop the cluster in %s\n", dir);
    return 0;
}

static void test_leader_killed_mid_read(void **state) {
    kn_conf *conf = kn_conf_new(KN_CLIENT_CONSUMER);
    char es[512];
    if (kn_conf_set(conf, "bootstrap.servers", bootstrap, es, sizeof es) != KN_OK ||
        kn_conf_set(conf, "auto.offset.reset", "earliest", es, sizeof es) != KN_OK ||
        kn_conf_set(conf, "max.partition.fetch.bytes", "65536", es, sizeof es) != KN_OK ||
        kn_conf_set(conf, "max.poll.records", "200", es, sizeof es) != KN_OK)
        fail_msg("%s", es);
    kn_consumer *c = kn_consumer_new(conf, es, sizeof es);
    kn_conf_destroy(conf);
    if (!c)
        fail_msg("kn_consumer_new: %s", es);
    kn_topic_partition_list *l = NULL;
    assert_int_equal(kn_consumer_partitions_for(c, topic, 20000, &l), KN_OK);
    assert_int_equal(kn_topic_partition_list_count(l), PARTS);
    assert_int_equal(kn_consumer_assign(c, l), KN_OK);
    kn_topic_partition_list_destroy(l);

    int64_t next[PARTS] = {0}, got = 0;
    bool killed = false;
    int errors = 0;
    int64_t deadline = kn_test_now_ms() + 120000;
    while (got < RECORDS && kn_test_now_ms() < deadline) {
        kn_records *r = NULL;
        int rc = kn_consumer_poll(c, 1000, &r, es, sizeof es);
        if (rc != KN_OK) {
            /* nothing partition-level is expected; say what came */
            fprintf(stderr, "poll: %s: %s\n", kn_err_name(rc), es);
            assert_true(++errors < 20);
            continue;
        }
        for (size_t i = 0; i < kn_records_count(r); i++) {
            int32_t p = kn_records_partition(r, i);
            int64_t off = kn_records_offset(r, i);
            assert_true(p >= 0 && p < PARTS);
            if (off != next[p])
                fail_msg("partition %d: offset %lld, expected %lld (killed: %d)", (int)p, (long long)off,
                         (long long)next[p], killed);
            next[p]++;
            got++;
        }
        kn_records_free(r);
        if (!killed && got > RECORDS / 3) {
            char cmd[1024], leader[32];
            snprintf(cmd, sizeof cmd,
                     "%s topics --bootstrap-server %s --describe --topic %s 2>/dev/null | "
                     "grep -E 'Partition: 0[[:space:]]'",
                     kn_test_source_path("tools/kafka/java-tool"), bootstrap, topic);
            capture(cmd, "Leader: ", leader, sizeof leader);
            fprintf(stderr, "read %lld records; killing node %s, the leader of partition 0\n", (long long)got,
                    leader);
            kn_test_run("%s stop-node %s --kill --dir %s >/dev/null",
                        kn_test_source_path("tools/kafka/broker"), leader, dir);
            killed = true;
        }
    }
    assert_true(killed);
    assert_int_equal(got, RECORDS);
    int64_t sum = 0;
    for (int p = 0; p < PARTS; p++) {
        int64_t pos = -1;
        assert_int_equal(kn_consumer_position(c, topic, p, 0, &pos), KN_OK);
        assert_int_equal(pos, next[p]);
        sum += next[p];
    }
    assert_int_equal(sum, RECORDS);
    kn_consumer_stats st = {.size = sizeof st};
    kn_consumer_get_stats(c, &st);
    fprintf(stderr,
            "%lld records exactly once across the leader change: %lld fetch errors, "
            "%lld validations, %lld truncations\n",
            (long long)got, (long long)st.fetch_errors, (long long)st.validations, (long long)st.truncations);
    /* The new leader's epoch was seen and the position confirmed. */
    assert_true(st.validations >= 1);
    assert_int_equal(st.truncations, 0);
    assert_int_equal(kn_consumer_close(c, -1), KN_OK);
    kn_consumer_destroy(c);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_leader_killed_mid_read),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
