/*
 * it_consumer_txn.c: transactional data from the Java producer, read
 * with both isolation levels against a real broker (KAFKA_BOOTSTRAP).
 *
 * tools/java/txn-producer runs three transactional producers at once
 * over four partitions, committing and aborting, so every partition
 * interleaves committed and aborted spans of several producers (the
 * rule for which transaction aborts is TxnProducer.aborted, mirrored
 * below). read_committed must yield exactly the committed records,
 * each once, in each producer's order; read_uncommitted all of them.
 * Both are read with default fetch sizes and with tiny ones, so
 * aborted spans and their markers are split across fetches and
 * read-ahead slices.
 */
#include "kn_test.h"

#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kafka_native.h"

#define PARTS     4
#define PRODUCERS 3
#define TXNS      30
#define RECORDS   40

/* TxnProducer.aborted: the last transaction always commits. */
static bool aborted(int producer, int txn) { return txn != TXNS - 1 && (producer + txn) % 3 == 0; }

static char topic[256];

static int setup(void **state) {
    snprintf(topic, sizeof topic, "%s", kn_test_topic("txn"));
    kn_test_run("%s topics --bootstrap-server %s --create --topic %s --partitions %d "
                "--replication-factor 1 >/dev/null",
                kn_test_source_path("tools/kafka/java-tool"), kn_test_bootstrap(), topic, PARTS);
    kn_test_run("%s %s %s %d %d %d %d >/dev/null", kn_test_source_path("tools/java/txn-producer"),
                kn_test_bootstrap(), topic, PARTS, PRODUCERS, TXNS, RECORDS);
    return 0;
}

static kn_consumer *new_consumer(const char *isolation, const char *part_bytes) {
    kn_conf *conf = kn_conf_new(KN_CLIENT_CONSUMER);
    char es[512];
    if (kn_conf_set(conf, "bootstrap.servers", kn_test_bootstrap(), es, sizeof es) != KN_OK ||
        kn_conf_set(conf, "auto.offset.reset", "earliest", es, sizeof es) != KN_OK ||
        kn_conf_set(conf, "isolation.level", isolation, es, sizeof es) != KN_OK ||
        kn_conf_set(conf, "max.poll.records", "77", es, sizeof es) != KN_OK ||
        kn_conf_set(conf, "max.partition.fetch.bytes", part_bytes, es, sizeof es) != KN_OK)
        fail_msg("%s", es);
    kn_consumer *c = kn_consumer_new(conf, es, sizeof es);
    if (!c)
        fail_msg("kn_consumer_new: %s", es);
    kn_conf_destroy(conf);
    kn_topic_partition_list *l = kn_topic_partition_list_new();
    for (int p = 0; p < PARTS; p++)
        kn_topic_partition_list_add(l, topic, p);
    assert_int_equal(kn_consumer_assign(c, l), KN_OK);
    kn_topic_partition_list_destroy(l);
    return c;
}

/* Reads everything with one isolation level and checks it against the
 * production rule. */
static void read_and_check(bool committed_only, const char *part_bytes) {
    kn_consumer *c = new_consumer(committed_only ? "read_committed" : "read_uncommitted", part_bytes);
    static bool seen[PRODUCERS][TXNS][RECORDS];
    memset(seen, 0, sizeof seen);
    /* per (producer, partition): the last (txn, record) seen, in order */
    int last_seq[PRODUCERS][PARTS];
    int64_t last_off[PARTS];
    for (int i = 0; i < PRODUCERS; i++)
        for (int p = 0; p < PARTS; p++)
            last_seq[i][p] = -1;
    for (int p = 0; p < PARTS; p++)
        last_off[p] = -1;
    int want = 0;
    for (int i = 0; i < PRODUCERS; i++)
        for (int t = 0; t < TXNS; t++)
            if (!committed_only || !aborted(i, t))
                want += RECORDS;
    /* the log end of each partition: the position reached at the end
     * (the last transactions commit, so the LSO is the log end) */
    kn_topic_partition_list *ends = kn_topic_partition_list_new();
    for (int p = 0; p < PARTS; p++)
        kn_topic_partition_list_add(ends, topic, p);
    assert_int_equal(kn_consumer_end_offsets(c, ends, 30000), KN_OK);
    int got = 0;
    char es[512];
    int64_t deadline = kn_test_now_ms() + 60000;
    for (;;) {
        bool at_end = true;
        for (int p = 0; p < PARTS && at_end; p++) {
            int64_t pos = -1;
            at_end = kn_consumer_position(c, topic, p, 0, &pos) == KN_OK &&
                     pos == kn_topic_partition_list_offset(ends, (size_t)p);
        }
        if ((got >= want && at_end) || kn_test_now_ms() > deadline)
            break;
        kn_records *r = NULL;
        int rc = kn_consumer_poll(c, 300, &r, es, sizeof es);
        if (rc != KN_OK)
            fail_msg("poll: %s: %s", kn_err_name(rc), es);
        for (size_t k = 0; k < kn_records_count(r); k++, got++) {
            int32_t p = kn_records_partition(r, k);
            int64_t off = kn_records_offset(r, k);
            assert_true(p >= 0 && p < PARTS);
            assert_true(off > last_off[p]);
            last_off[p] = off;
            size_t len;
            const char *v = kn_records_value(r, k, &len);
            char buf[64];
            assert_true(v && len < sizeof buf);
            memcpy(buf, v, len);
            buf[len] = '\0';
            int i, t, j;
            if (sscanf(buf, "p%d-t%d-r%d", &i, &t, &j) != 3 || i < 0 || i >= PRODUCERS || t < 0 ||
                t >= TXNS || j < 0 || j >= RECORDS)
                fail_msg("partition %d offset %lld: unexpected value %s", (int)p, (long long)off, buf);
            if (committed_only && aborted(i, t))
                fail_msg("read_committed returned %s (an aborted transaction) at %d/%lld", buf, (int)p,
                         (long long)off);
            if (seen[i][t][j])
                fail_msg("%s returned twice", buf);
            seen[i][t][j] = true;
            if ((i + t + j) % PARTS != p)
                fail_msg("%s in partition %d", buf, (int)p);
            int seq = t * RECORDS + j;
            if (seq <= last_seq[i][p])
                fail_msg("%s out of the producer's order in partition %d", buf, (int)p);
            last_seq[i][p] = seq;
        }
        kn_records_free(r);
    }
    assert_int_equal(got, want);
    for (int p = 0; p < PARTS; p++) {
        int64_t pos = -1;
        assert_int_equal(kn_consumer_position(c, topic, p, 0, &pos), KN_OK);
        assert_int_equal(pos, kn_topic_partition_list_offset(ends, (size_t)p));
    }
    fprintf(stderr, "%s, max.partition.fetch.bytes=%s: %d records, each once\n",
            committed_only ? "read_committed" : "read_uncommitted", part_bytes, got);
    kn_topic_partition_list_destroy(ends);
    assert_int_equal(kn_consumer_close(c, -1), KN_OK);
    kn_consumer_destroy(c);
}

static void test_read_committed(void **state) {
    read_and_check(true, "1048576");
    read_and_check(true, "300");
}

static void test_read_uncommitted(void **state) {
    read_and_check(false, "1048576");
    read_and_check(false, "300");
}

int main(void) {
    kn_test_bootstrap();
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_read_committed),
        cmocka_unit_test(test_read_uncommitted),
    };
    return cmocka_run_group_tests(tests, setup, NULL);
}
