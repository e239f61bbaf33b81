/*
 * it_consumer_budget.c: the consumer's fetch-buffer budget against a
 * real broker (docs/consumer.md, "Memory"): raw fetched bytes held stay
 * within six times max.partition.fetch.bytes while every record still
 * arrives exactly once, in order; a record batch larger than the whole
 * budget is still delivered (the broker returns an oversized first
 * batch, and rotation brings every partition to the front); partitions
 * paused while holding buffered data never stall the others; with 400
 * partitions behind a small budget the Fetch window (window.h) lists a
 * few at a time and still brings every one to its end, in order, also
 * when new records land while part of them has a backlog.
 * Data comes from the Java producer perf tool.
 */
#include "kn_test.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kafka_native.h"

#define MAXP 400

static kn_consumer *new_consumer(const char *mpfb, const char *max_poll) {
    kn_conf *conf = kn_conf_new(KN_CLIENT_CONSUMER);
    kn_test_conf_set(conf, "bootstrap.servers", kn_test_bootstrap());
    kn_test_conf_set(conf, "auto.offset.reset", "earliest");
    kn_test_conf_set(conf, "max.partition.fetch.bytes", mpfb);
    kn_test_conf_set(conf, "max.poll.records", max_poll);
    char es[512];
    kn_consumer *c = kn_consumer_new(conf, es, sizeof es);
    kn_conf_destroy(conf);
    if (!c)
        fail_msg("kn_consumer_new: %s", es);
    return c;
}

static void assign_all(kn_consumer *c, const char *topic, int parts) {
    kn_topic_partition_list *l = kn_topic_partition_list_new();
    for (int p = 0; p < parts; p++)
        assert_true(kn_topic_partition_list_add(l, topic, p) >= 0);
    assert_int_equal(kn_consumer_assign(c, l), KN_OK);
    kn_topic_partition_list_destroy(l);
}

static void end_offsets(kn_consumer *c, const char *topic, int parts, int64_t *end) {
    kn_topic_partition_list *l = kn_topic_partition_list_new();
    for (int p = 0; p < parts; p++)
        kn_topic_partition_list_add(l, topic, p);
    assert_int_equal(kn_consumer_end_offsets(c, l, 30000), KN_OK);
    for (int p = 0; p < parts; p++) {
        assert_int_equal(kn_topic_partition_list_err(l, (size_t)p), 0);
        end[p] = kn_topic_partition_list_offset(l, (size_t)p);
    }
    kn_topic_partition_list_destroy(l);
}

static void produce_more(const char *topic, long n, int size) {
    kn_test_run("%s producer-perf --bootstrap-server %s --topic %s --num-records %ld --record-size %d "
                "--throughput -1 --command-property acks=1 >/dev/null",
                kn_test_java_tool(), kn_test_bootstrap(), topic, n, size);
}

static void produce(const char *topic, int parts, long n, int size) {
    kn_test_create_topic(topic, parts);
    produce_more(topic, n, size);
}

/* A fresh topic of parts partitions holding n records of size bytes, and
 * a consumer (max.partition.fetch.bytes mpfb, max.poll.records max_poll)
 * assigned all of it; end[] gets the end offsets. Returns their sum. */
static int64_t consume_new_topic(const char *topic, int parts, long n, int size, const char *mpfb,
                                 const char *max_poll, kn_consumer **c, int64_t *end) {
    produce(topic, parts, n, size);
    *c = new_consumer(mpfb, max_poll);
    assign_all(*c, topic, parts);
    end_offsets(*c, topic, parts, end);
    int64_t total = 0;
    for (int p = 0; p < parts; p++)
        total += end[p];
    return total;
}

/* Fails unless partitions from..to-1 were read to their end; when says
 * in which phase of the test. */
static void assert_at_end(const int64_t *next, const int64_t *end, int from, int to, const char *when) {
    for (int p = from; p < to; p++)
        if (next[p] != end[p])
            fail_msg("partition %d stopped at %lld of %lld%s", p, (long long)next[p], (long long)end[p],
                     when);
}

/* One poll; each record must be the next offset of its partition. */
static size_t poll_in_order(kn_consumer *c, int parts, int64_t *next, const bool *paused) {
    char es[512];
    kn_records *r = NULL;
    int rc = kn_consumer_poll(c, 200, &r, es, sizeof es);
    if (rc != KN_OK)
        fail_msg("poll: %s: %s", kn_err_name(rc), es);
    size_t n = kn_records_count(r);
    for (size_t i = 0; i < n; i++) {
        int32_t p = kn_records_partition(r, i);
        int64_t off = kn_records_offset(r, i);
        assert_true(p >= 0 && p < parts);
        if (paused && paused[p])
            fail_msg("partition %d returned offset %lld while paused", (int)p, (long long)off);
        if (off != next[p])
            fail_msg("partition %d: offset %lld, expected %lld", (int)p, (long long)off, (long long)next[p]);
        next[p]++;
    }
    kn_records_free(r);
    return n;
}

/* 2,000,000 x 10 B over 8 partitions is about 34 MB of batches: with
 * max.partition.fetch.bytes 1 MiB the old read-ahead held up to two
 * slices per partition (16 MiB); the budget is 6 MiB. Small polls keep
 * the buffers full. */
static void test_budget_bounds_buffered_bytes(void **state) {
    (void)state;
    const int parts = 8;
    const long n = 2000000;
    const char *topic = kn_test_topic("budget");
    kn_consumer *c;
    int64_t end[MAXP], next[MAXP] = {0};
    int64_t total = consume_new_topic(topic, parts, n, 10, "1048576", "97", &c, end);
    assert_int_equal(total, n);
    int64_t got = 0, max_buffered = 0, deadline = kn_test_now_ms() + 120000;
    while (got < total && kn_test_now_ms() < deadline) {
        got += (int64_t)poll_in_order(c, parts, next, NULL);
        kn_consumer_stats st = {.size = sizeof st};
        kn_consumer_get_stats(c, &st);
        if (st.buffered_bytes > max_buffered)
            max_buffered = st.buffered_bytes;
    }
    assert_at_end(next, end, 0, parts, "");
    fprintf(stderr, "budget: %lld records in order, at most %lld bytes buffered (budget %d)\n",
            (long long)got, (long long)max_buffered, 6 << 20);
    if (max_buffered > (6 << 20))
        fail_msg("%lld bytes buffered, above the 6 MiB budget", (long long)max_buffered);
    assert_true(max_buffered > 0);
    assert_int_equal(kn_consumer_close(c, -1), KN_OK);
    kn_consumer_destroy(c);
}

/* Every record is its own ~20 KB batch and max.partition.fetch.bytes is
 * 1 KiB: each batch is larger than the whole budget (6 KiB). All four
 * partitions must still be read to their end. */
static void test_budget_oversized_batches(void **state) {
    (void)state;
    const int parts = 4;
    const long n = 200;
    const char *topic = kn_test_topic("budget-big");
    kn_consumer *c;
    int64_t end[MAXP], next[MAXP] = {0};
    int64_t total = consume_new_topic(topic, parts, n, 20000, "1024", "500", &c, end);
    assert_int_equal(total, n);
    int64_t got = 0, deadline = kn_test_now_ms() + 60000;
    while (got < total && kn_test_now_ms() < deadline)
        got += (int64_t)poll_in_order(c, parts, next, NULL);
    assert_at_end(next, end, 0, parts, " (batches above the budget)");
    assert_int_equal(kn_consumer_close(c, -1), KN_OK);
    kn_consumer_destroy(c);
}

/* Partitions 0 and 1 are paused once they delivered something, keeping
 * what they buffered (and the responses it pins). With a 96 KiB budget
 * that memory must not stop partitions 2 and 3 from reaching their end;
 * after resume 0 and 1 go on from where they stopped. */
static void test_budget_paused_hold_no_stall(void **state) {
    (void)state;
    const int parts = 4;
    const long n = 200000;
    const char *topic = kn_test_topic("budget-pause");
    kn_consumer *c;
    int64_t end[MAXP], next[MAXP] = {0};
    consume_new_topic(topic, parts, n, 10, "16384", "50", &c, end);
    bool paused[MAXP] = {false};
    int64_t deadline = kn_test_now_ms() + 60000;
    while (!(next[0] > 0 && next[1] > 0) && kn_test_now_ms() < deadline)
        poll_in_order(c, parts, next, NULL);
    assert_true(next[0] > 0 && next[1] > 0);
    kn_topic_partition_list *l = kn_topic_partition_list_new();
    kn_topic_partition_list_add(l, topic, 0);
    kn_topic_partition_list_add(l, topic, 1);
    assert_int_equal(kn_consumer_pause(c, l), KN_OK);
    paused[0] = paused[1] = true;
    while (!(next[2] == end[2] && next[3] == end[3]) && kn_test_now_ms() < deadline)
        poll_in_order(c, parts, next, paused);
    assert_at_end(next, end, 2, 4, " while 0 and 1 were paused");
    kn_consumer_stats st = {.size = sizeof st};
    kn_consumer_get_stats(c, &st);
    assert_true(st.buffered_partitions >= 1); /* the paused ones kept data */
    assert_int_equal(kn_consumer_resume(c, l), KN_OK);
    kn_topic_partition_list_destroy(l);
    paused[0] = paused[1] = false;
    while (!(next[0] == end[0] && next[1] == end[1]) && kn_test_now_ms() < deadline)
        poll_in_order(c, parts, next, paused);
    assert_at_end(next, end, 0, parts, " after resume");
    assert_int_equal(kn_consumer_close(c, -1), KN_OK);
    kn_consumer_destroy(c);
}

/* 400 partitions, ~17 KB each, max.partition.fetch.bytes 16 KiB: a
 * Fetch carries 48 KiB, so the window lists a handful of partitions
 * with data at a time (and those at their end while it is open). Every
 * partition must come to its end exactly once, in order, twice: from
 * scratch, and with new records while half of them has a backlog. */
static void test_budget_window_many_partitions(void **state) {
    (void)state;
    const int parts = 400;
    const long n = 400000;
    const char *topic = kn_test_topic("budget-window");
    kn_consumer *c;
    static int64_t end[MAXP], next[MAXP];
    static const bool paused[MAXP]; /* none: poll_in_order checks */
    memset(next, 0, sizeof next);
    int64_t total = consume_new_topic(topic, parts, n, 10, "16384", "500", &c, end);
    assert_int_equal(total, n);
    int64_t got = 0, deadline = kn_test_now_ms() + 120000;
    while (got < total && kn_test_now_ms() < deadline)
        got += (int64_t)poll_in_order(c, parts, next, NULL);
    assert_at_end(next, end, 0, parts, " (window over 400 partitions)");
    kn_consumer_stats st = {.size = sizeof st};
    kn_consumer_get_stats(c, &st);
    fprintf(stderr, "window: %lld records in order over %d partitions, %lld fetches\n", (long long)got,
            parts, (long long)st.fetch_requests);

    /* Seek the second half back to 0: it has a backlog again, read a
     * little so the fetcher knows its log ends; then new records land
     * on every partition. The first half's (after their log ends, so
     * listed only while a window is open) must arrive with the backlog,
     * and everything must end in order. */
    for (int p = parts / 2; p < parts; p++) {
        assert_int_equal(kn_consumer_seek(c, topic, p, 0), KN_OK);
        next[p] = 0;
    }
    while (got < total + 20000 && kn_test_now_ms() < deadline)
        got += (int64_t)poll_in_order(c, parts, next, NULL);
    produce_more(topic, 100000, 10);
    end_offsets(c, topic, parts, end);
    while (kn_test_now_ms() < deadline) {
        bool all = true;
        for (int p = 0; p < parts && all; p++)
            all = next[p] == end[p];
        if (all)
            break;
        poll_in_order(c, parts, next, paused);
    }
    assert_at_end(next, end, 0, parts, " (after the second round)");
    assert_int_equal(kn_consumer_close(c, -1), KN_OK);
    kn_consumer_destroy(c);
}

int main(void) {
    kn_test_bootstrap();
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_budget_bounds_buffered_bytes),
        cmocka_unit_test(test_budget_oversized_batches),
        cmocka_unit_test(test_budget_paused_hold_no_stall),
        cmocka_unit_test(test_budget_window_many_partitions),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
