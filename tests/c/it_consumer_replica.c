/*
 * it_consumer_replica.c: fetching from the closest replica (KIP-392)
 * against the real three-node cluster, whose node n runs with
 * broker.rack=rack<n> and the rack-aware replica selector
 * (tools/kafka/broker).
 *
 * A one-partition topic with replication 3 is filled by our producer
 * (acks=all). A consumer whose client.rack is a follower's rack:
 *  - is told by the leader to read from that follower, and does: the
 *    partition reports it as its read replica and Fetches go there
 *    (kn_consumer_stats.fetch_read_replica), every record once, in order;
 *  - when that follower is stopped, goes back to the leader by itself
 *    and reads what is produced meanwhile, again exactly once, in order.
 * A consumer without client.rack never leaves the leader.
 * The stopped node is started again at the end (also on failure).
 *
 * ctest label broker3 (tools/test's 3-node phase); against one broker it
 * exits 77 (skipped, never passed) saying what it needs.
 */
#include "kn_test.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "kafka_native.h"

#define FIRST  3000 /* records before the follower stops */
#define SECOND 2000 /* records produced while it is down */

static int stopped_node = -1;

static const char *broker_dir(void) {
    const char *d = getenv("KN_BROKER_DIR");
    return d && *d ? d : "/tmp/kafka-native-broker";
}

static int restart_node(void **s) {
    (void)s;
    if (stopped_node > 0) {
        char cmd[1024];
        snprintf(cmd, sizeof cmd, "%s start-node %d --dir %s", kn_test_source_path("tools/kafka/broker"),
                 stopped_node, broker_dir());
        if (system(cmd) != 0) {
            fprintf(stderr, "it_consumer_replica: could not restart node %d\n", stopped_node);
            return -1;
        }
        stopped_node = -1;
    }
    return 0;
}

/* The leader and replicas of partition 0, from a fresh Metadata. */
static int32_t describe(const char *topic, int32_t *replicas, size_t *nrep) {
    kn_conf *conf = kn_conf_new(KN_CLIENT_ADMIN);
    kn_test_conf_set(conf, "bootstrap.servers", kn_test_bootstrap());
    char err[512];
    kn_admin *a = kn_admin_new(conf, err, sizeof err);
    kn_conf_destroy(conf);
    if (!a)
        fail_msg("kn_admin_new: %s", err);
    kn_topic_descriptions *d = NULL;
    int32_t leader = -1;
    for (int tries = 0; tries < 50 && leader < 0; tries++) {
        if (kn_admin_describe_topics(a, &topic, 1, 10000, &d, err, sizeof err) != KN_OK)
            fail_msg("describe_topics: %s", err);
        const kn_partition_info *p =
            kn_topic_descriptions_partition_count(d, 0) ? kn_topic_descriptions_partition(d, 0, 0) : NULL;
        if (p && kn_partition_info_leader(p) >= 0) {
            size_t n = 0;
            const int32_t *r = kn_partition_info_replicas(p, &n);
            for (size_t i = 0; i < n && i < 3; i++)
                replicas[i] = r[i];
            *nrep = n;
            leader = kn_partition_info_leader(p);
        }
        kn_topic_descriptions_destroy(d);
        if (leader < 0)
            usleep(200 * 1000);
    }
    kn_admin_destroy(a);
    if (leader < 0)
        fail_msg("%s [0] has no leader", topic);
    return leader;
}

/* Produces values "from".."from+n-1" (decimal) with acks=all. */
static void produce(const char *topic, int from, int n) {
    kn_conf *conf = kn_conf_new(KN_CLIENT_PRODUCER);
    kn_test_conf_set(conf, "bootstrap.servers", kn_test_bootstrap());
    kn_test_conf_set(conf, "acks", "all");
    kn_test_conf_set(conf, "linger.ms", "5");
    char err[512];
    kn_producer *p = kn_producer_new(conf, NULL, NULL, err, sizeof err);
    kn_conf_destroy(conf);
    if (!p)
        fail_msg("kn_producer_new: %s", err);
    for (int i = from; i < from + n; i++) {
        char value[16];
        snprintf(value, sizeof value, "%d", i);
        kn_record_out r = KN_RECORD_OUT_INIT;
        r.topic = topic;
        r.partition = 0;
        r.value = value;
        r.value_len = strlen(value);
        int rc = kn_producer_send(p, &r, err, sizeof err);
        if (rc)
            fail_msg("send %d: %s: %s", i, kn_err_name(rc), err);
    }
    assert_int_equal(kn_producer_flush(p, 60000), KN_OK);
    kn_producer_stats st = {.size = sizeof st};
    kn_producer_get_stats(p, &st);
    assert_int_equal(st.records_failed, 0);
    assert_int_equal(kn_producer_close(p, 10000), KN_OK);
    kn_producer_destroy(p);
}

static kn_consumer *new_consumer(const char *topic, const char *rack) {
    kn_conf *conf = kn_conf_new(KN_CLIENT_CONSUMER);
    kn_test_conf_set(conf, "bootstrap.servers", kn_test_bootstrap());
    kn_test_conf_set(conf, "auto.offset.reset", "earliest");
    kn_test_conf_set(conf, "max.partition.fetch.bytes", "4096"); /* many Fetches */
    kn_test_conf_set(conf, "reconnect.backoff.max.ms", "1000");
    if (rack)
        kn_test_conf_set(conf, "client.rack", rack);
    char err[512];
    kn_consumer *c = kn_consumer_new(conf, err, sizeof err);
    kn_conf_destroy(conf);
    if (!c)
        fail_msg("kn_consumer_new: %s", err);
    kn_topic_partition_list *l = kn_topic_partition_list_new();
    assert_true(kn_topic_partition_list_add(l, topic, 0) >= 0);
    assert_int_equal(kn_consumer_assign(c, l), KN_OK);
    kn_topic_partition_list_destroy(l);
    return c;
}

/* Polls until value `until - 1` arrived; every value must be the next
 * one (exactly once, in order). Records the read replica seen while
 * reading in *seen_replica (the last one other than -1). */
static void read_until(kn_consumer *c, const char *topic, int *next, int until, int32_t *seen_replica) {
    int64_t deadline = kn_test_now_ms() + 90000;
    char err[512];
    while (*next < until) {
        if (kn_test_now_ms() > deadline)
            fail_msg("only %d of %d records within 90 s", *next, until);
        kn_records *r = NULL;
        int rc = kn_consumer_poll(c, 500, &r, err, sizeof err);
        if (rc != KN_OK)
            fail_msg("poll: %s: %s", kn_err_name(rc), err);
        for (size_t i = 0; i < kn_records_count(r); i++) {
            size_t len;
            const char *v = kn_records_value(r, i, &len);
            char buf[16];
            assert_true(v && len > 0 && len < sizeof buf);
            memcpy(buf, v, len);
            buf[len] = '\0';
            if (atoi(buf) != *next)
                fail_msg("got value %s at offset %lld, expected %d", buf, (long long)kn_records_offset(r, i),
                         *next);
            assert_int_equal(kn_records_offset(r, i), *next);
            (*next)++;
        }
        kn_records_free(r);
        int32_t node = -1;
        assert_int_equal(kn_consumer_read_replica(c, topic, 0, &node), KN_OK);
        if (node >= 0 && seen_replica)
            *seen_replica = node;
    }
}

static void test_fetches_from_the_follower_in_its_rack(void **s) {
    (void)s;
    char topic[128];
    snprintf(topic, sizeof topic, "%s", kn_test_topic("replica"));
    kn_test_run("%s topics --bootstrap-server %s --create --topic %s --partitions 1 --replication-factor 3 "
                "--config min.insync.replicas=2 >/dev/null 2>&1",
                kn_test_java_tool(), kn_test_bootstrap(), topic);
    int32_t replicas[3] = {-1, -1, -1};
    size_t nrep = 0;
    int32_t leader = describe(topic, replicas, &nrep);
    assert_int_equal(nrep, 3);
    int32_t follower = replicas[0] != leader ? replicas[0] : replicas[1];
    char rack[32];
    snprintf(rack, sizeof rack, "rack%d", (int)follower);
    print_message("leader %d, consumer in %s (follower %d)\n", (int)leader, rack, (int)follower);
    produce(topic, 0, FIRST);

    /* No client.rack: the leader serves. */
    kn_consumer *plain = new_consumer(topic, NULL);
    int next = 0;
    int32_t seen = -1;
    read_until(plain, topic, &next, FIRST, &seen);
    kn_consumer_stats st = {.size = sizeof st};
    kn_consumer_get_stats(plain, &st);
    assert_int_equal(seen, -1);
    assert_int_equal(st.fetch_read_replica, 0);
    assert_int_equal(kn_consumer_close(plain, -1), KN_OK);
    kn_consumer_destroy(plain);

    /* In the follower's rack: the leader names it, and it serves. */
    kn_consumer *c = new_consumer(topic, rack);
    next = 0;
    read_until(c, topic, &next, FIRST, &seen);
    kn_consumer_get_stats(c, &st);
    print_message("rack consumer: %lld Fetches, %lld to the read replica\n", (long long)st.fetch_requests,
                  (long long)st.fetch_read_replica);
    assert_int_equal(seen, follower);
    assert_true(st.fetch_read_replica > 0);

    /* The follower stops: the consumer goes back to the leader. */
    char cmd[1024];
    snprintf(cmd, sizeof cmd, "%s stop-node %d --dir %s", kn_test_source_path("tools/kafka/broker"),
             (int)follower, broker_dir());
    stopped_node = follower;
    kn_test_run("%s", cmd);
    produce(topic, FIRST, SECOND);
    read_until(c, topic, &next, FIRST + SECOND, NULL);
    int32_t node = 0;
    assert_int_equal(kn_consumer_read_replica(c, topic, 0, &node), KN_OK);
    kn_consumer_get_stats(c, &st);
    print_message("after stopping node %d: read replica %d, %lld Fetches, %lld to a read replica\n",
                  (int)follower, (int)node, (long long)st.fetch_requests, (long long)st.fetch_read_replica);
    assert_int_equal(node, -1);
    assert_int_equal(next, FIRST + SECOND);
    /* Nothing more than what was produced. */
    kn_records *r = NULL;
    char err[256];
    assert_int_equal(kn_consumer_poll(c, 1000, &r, err, sizeof err), KN_OK);
    assert_int_equal(r ? kn_records_count(r) : 0, 0);
    kn_records_free(r);
    assert_int_equal(kn_consumer_close(c, -1), KN_OK);
    kn_consumer_destroy(c);
}

int main(void) {
    kn_test_bootstrap();
    int gate = kn_test_need_three_nodes("it_consumer_replica");
    if (gate)
        return gate;
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_teardown(test_fetches_from_the_follower_in_its_rack, restart_node),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
