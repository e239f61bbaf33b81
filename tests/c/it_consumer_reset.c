/*
 * it_consumer_reset.c: auto.offset.reset=by_duration:<ISO-8601> (KIP-1106)
 * against a real broker (KAFKA_BOOTSTRAP). Records are written with
 * CreateTimes 3 h, 2 h and 30 min in the past; a consumer with no
 * position starts at the first record at or after now - duration, and
 * at the log end when nothing is that recent. The same strategy serves
 * a seek past the end (OFFSET_OUT_OF_RANGE), and a malformed duration
 * is refused at construction naming the key.
 */
#include "kn_test.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "kafka_native.h"

#define PER_AGE 10

static char topic[256];

static int64_t wall_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* 10 records 3 h old (offsets 0-9), 10 records 2 h old (10-19), 10
 * records 30 min old (20-29), all to partition 0, by our producer with
 * explicit CreateTimes. */
static int setup(void **state) {
    snprintf(topic, sizeof topic, "%s", kn_test_topic("by-duration"));
    char cmd[1024];
    snprintf(cmd, sizeof cmd,
             "%s topics --bootstrap-server %s --create --topic %s --partitions 1 "
             "--replication-factor 1 >/dev/null",
             kn_test_source_path("tools/kafka/java-tool"), kn_test_bootstrap(), topic);
    if (system(cmd) != 0)
        fail_msg("command failed: %s", cmd);
    kn_conf *conf = kn_conf_new(KN_CLIENT_PRODUCER);
    char es[512];
    assert_int_equal(kn_conf_set(conf, "bootstrap.servers", kn_test_bootstrap(), es, sizeof es), KN_OK);
    kn_producer *p = kn_producer_new(conf, NULL, NULL, es, sizeof es);
    kn_conf_destroy(conf);
    if (!p)
        fail_msg("kn_producer_new: %s", es);
    static const int64_t ages_ms[] = {3 * 3600000LL, 2 * 3600000LL, 30 * 60000LL};
    int64_t now = wall_ms();
    for (int a = 0; a < 3; a++)
        for (int i = 0; i < PER_AGE; i++) {
            char v[32];
            snprintf(v, sizeof v, "v%d", a * PER_AGE + i);
            kn_record_out rec = KN_RECORD_OUT_INIT;
            rec.topic = topic;
            rec.partition = 0;
            rec.value = v;
            rec.value_len = strlen(v);
            rec.timestamp = now - ages_ms[a] + i;
            if (kn_producer_send(p, &rec, es, sizeof es) != KN_OK)
                fail_msg("send: %s", es);
            /* one batch per age keeps the records in offset order */
        }
    assert_int_equal(kn_producer_flush(p, 30000), KN_OK);
    kn_producer_stats st = {.size = sizeof st};
    kn_producer_get_stats(p, &st);
    assert_int_equal(st.records_sent, 3 * PER_AGE);
    assert_int_equal(kn_producer_close(p, 10000), KN_OK);
    kn_producer_destroy(p);
    return 0;
}

static kn_consumer *new_consumer(const char *reset) {
    kn_conf *conf = kn_conf_new(KN_CLIENT_CONSUMER);
    char es[512];
    if (kn_conf_set(conf, "bootstrap.servers", kn_test_bootstrap(), es, sizeof es) != KN_OK ||
        kn_conf_set(conf, "auto.offset.reset", reset, es, sizeof es) != KN_OK)
        fail_msg("%s", es);
    kn_consumer *c = kn_consumer_new(conf, es, sizeof es);
    kn_conf_destroy(conf);
    if (!c)
        fail_msg("kn_consumer_new: %s", es);
    kn_topic_partition_list *l = kn_topic_partition_list_new();
    kn_topic_partition_list_add(l, topic, 0);
    assert_int_equal(kn_consumer_assign(c, l), KN_OK);
    kn_topic_partition_list_destroy(l);
    return c;
}

/* Reads until the log end (30), checking offsets run from first on. */
static void read_from(kn_consumer *c, int64_t first) {
    int64_t next = first;
    char es[512];
    int64_t deadline = kn_test_now_ms() + 20000;
    while (next < 3 * PER_AGE && kn_test_now_ms() < deadline) {
        kn_records *r = NULL;
        int rc = kn_consumer_poll(c, 300, &r, es, sizeof es);
        if (rc != KN_OK)
            fail_msg("poll: %s: %s", kn_err_name(rc), es);
        for (size_t i = 0; i < kn_records_count(r); i++) {
            char v[32];
            snprintf(v, sizeof v, "v%lld", (long long)next);
            size_t len;
            const void *val = kn_records_value(r, i, &len);
            assert_int_equal(kn_records_offset(r, i), next);
            assert_int_equal(len, strlen(v));
            assert_memory_equal(val, v, len);
            next++;
        }
        kn_records_free(r);
    }
    assert_int_equal(next, 3 * PER_AGE);
}

static void test_by_duration(void **state) {
    static const struct {
        const char *reset;
        int64_t position;
    } cases[] = {
        {"by_duration:P1D", 0},         /* older than everything */
        {"by_duration:PT150M", 10},     /* between 3 h and 2 h */
        {"by_duration:PT1H", 20},       /* between 2 h and 30 min */
        {"by_duration:pt1h0m0.5s", 20}, /* any case, fractions of a second */
        {"by_duration:PT1M", 30},       /* nothing that recent: the log end */
    };
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        kn_consumer *c = new_consumer(cases[k].reset);
        int64_t pos = -1;
        int rc = kn_consumer_position(c, topic, 0, 20000, &pos);
        if (rc != KN_OK || pos != cases[k].position)
            fail_msg("%s: position %lld (%s), expected %lld", cases[k].reset, (long long)pos, kn_err_name(rc),
                     (long long)cases[k].position);
        read_from(c, cases[k].position);
        assert_int_equal(kn_consumer_close(c, -1), KN_OK);
        kn_consumer_destroy(c);
    }
}

/* OFFSET_OUT_OF_RANGE resets with the same strategy. */
static void test_by_duration_out_of_range(void **state) {
    kn_consumer *c = new_consumer("by_duration:PT1H");
    assert_int_equal(kn_consumer_seek(c, topic, 0, 5000), KN_OK);
    read_from(c, 20);
    assert_int_equal(kn_consumer_close(c, -1), KN_OK);
    kn_consumer_destroy(c);
}

static void test_by_duration_invalid(void **state) {
    kn_conf *conf = kn_conf_new(KN_CLIENT_CONSUMER);
    char es[512];
    assert_int_equal(kn_conf_set(conf, "auto.offset.reset", "by_duration:1H", es, sizeof es), KN_ERR__CONFIG);
    assert_non_null(strstr(es, "auto.offset.reset"));
    assert_non_null(strstr(es, "by_duration"));
    assert_int_equal(kn_conf_set(conf, "auto.offset.reset", "by_duration:-PT1H", es, sizeof es),
                     KN_ERR__CONFIG);
    kn_conf_destroy(conf);
}

int main(void) {
    kn_test_bootstrap();
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_by_duration),
        cmocka_unit_test(test_by_duration_out_of_range),
        cmocka_unit_test(test_by_duration_invalid),
    };
    return cmocka_run_group_tests(tests, setup, NULL);
}
