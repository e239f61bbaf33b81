/*
 * it_consumer_volume.c: the consumer's volume acceptance run against a
 * real broker (KAFKA_BOOTSTRAP). The Java producer perf tool writes N
 * records (values from a payload file of known lines) across 8
 * partitions with a codec; the consumer must read every one exactly
 * once, in offset order per partition, each value byte-exact, and each
 * partition must end at its log end offset.
 *
 * A second pass over the same topic pauses, resumes and seeks
 * partitions back while reading (deterministic pseudo-random churn),
 * so read-ahead data is dropped and kept in every combination: the
 * records must still come in order from wherever each partition was
 * moved, with nothing skipped or repeated.
 *
 * Knobs (environment), so the full acceptance run can be done by hand:
 *   KN_IT_VOLUME_RECORDS  records per codec (default 1000000)
 *   KN_IT_VOLUME_CODECS   comma-separated codecs (default "zstd"; the
 *                         full run: none,gzip,snappy,lz4,zstd)
 */
#include "kn_test.h"

#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "kafka_native.h"

#define PARTS     8
#define PAYLOADS  1000
#define VALUE_LEN 100

/* Payload line i: "kn000042:" then letters that depend on i and the
 * column, VALUE_LEN bytes in all, so a value names the line it must
 * equal and any corrupted byte shows. */
static void payload(int i, char out[VALUE_LEN]) {
    char head[16];
    snprintf(head, sizeof head, "kn%06d:", i);
    memcpy(out, head, 9);
    for (int c = 9; c < VALUE_LEN; c++)
        out[c] = (char)('a' + (i * 31 + c * 7) % 26);
}

static void check_value(const void *v, size_t len, int32_t partition, int64_t offset) {
    if (!v || len != VALUE_LEN)
        fail_msg("partition %d offset %lld: value of %zu bytes, expected %d", (int)partition,
                 (long long)offset, v ? len : 0, VALUE_LEN);
    const char *s = v;
    int i = -1;
    if (memcmp(s, "kn", 2) != 0 || sscanf(s + 2, "%6d", &i) != 1 || i < 0 || i >= PAYLOADS)
        fail_msg("partition %d offset %lld: value does not start with a payload index", (int)partition,
                 (long long)offset);
    char want[VALUE_LEN];
    payload(i, want);
    if (memcmp(s, want, VALUE_LEN) != 0)
        fail_msg("partition %d offset %lld: value differs from payload line %d", (int)partition,
                 (long long)offset, i);
}

static kn_consumer *new_consumer(const char *first, ...) {
    kn_conf *conf = kn_conf_new(KN_CLIENT_CONSUMER);
    char es[512];
    assert_int_equal(kn_conf_set(conf, "bootstrap.servers", kn_test_bootstrap(), es, sizeof es), KN_OK);
    va_list ap;
    va_start(ap, first);
    for (const char *k = first; k; k = va_arg(ap, const char *)) {
        const char *v = va_arg(ap, const char *);
        if (kn_conf_set(conf, k, v, es, sizeof es) != KN_OK)
            fail_msg("%s", es);
    }
    va_end(ap);
    kn_consumer *c = kn_consumer_new(conf, es, sizeof es);
    if (!c)
        fail_msg("kn_consumer_new: %s", es);
    kn_conf_destroy(conf);
    return c;
}

static void assign_all(kn_consumer *c, const char *topic) {
    kn_topic_partition_list *l = kn_topic_partition_list_new();
    for (int p = 0; p < PARTS; p++)
        assert_true(kn_topic_partition_list_add(l, topic, p) >= 0);
    assert_int_equal(kn_consumer_assign(c, l), KN_OK);
    kn_topic_partition_list_destroy(l);
}

/* The log end offset of every partition, by a live ListOffsets. */
static void end_offsets(kn_consumer *c, const char *topic, int64_t end[PARTS]) {
    kn_topic_partition_list *l = kn_topic_partition_list_new();
    for (int p = 0; p < PARTS; p++)
        kn_topic_partition_list_add(l, topic, p);
    assert_int_equal(kn_consumer_end_offsets(c, l, 30000), KN_OK);
    for (int p = 0; p < PARTS; p++) {
        assert_int_equal(kn_topic_partition_list_err(l, (size_t)p), 0);
        end[p] = kn_topic_partition_list_offset(l, (size_t)p);
    }
    kn_topic_partition_list_destroy(l);
}

static void produce(const char *topic, int64_t n, const char *codec) {
    char file[256];
    snprintf(file, sizeof file, "/tmp/kn-it-volume-%d.txt", (int)getpid());
    FILE *f = fopen(file, "w");
    assert_non_null(f);
    for (int i = 0; i < PAYLOADS; i++) {
        char line[VALUE_LEN];
        payload(i, line);
        fwrite(line, 1, VALUE_LEN, f);
        fputc('\n', f);
    }
    fclose(f);
    kn_test_run("%s topics --bootstrap-server %s --create --topic %s --partitions %d "
                "--replication-factor 1 >/dev/null",
                kn_test_java_tool(), kn_test_bootstrap(), topic, PARTS);
    kn_test_run("%s producer-perf --bootstrap-server %s --topic %s --num-records %lld --payload-file %s "
                "--throughput -1 --command-property compression.type=%s --command-property linger.ms=20 "
                "--command-property batch.size=65536 >/dev/null",
                kn_test_java_tool(), kn_test_bootstrap(), topic, (long long)n, file, codec);
    unlink(file);
}

/* Reads the whole topic once: every offset of every partition exactly
 * once, in order, values checked; the total is n and each partition
 * ends at its log end. */
static void read_all(const char *topic, int64_t n, const char *codec) {
    kn_consumer *c = new_consumer("auto.offset.reset", "earliest", NULL);
    assign_all(c, topic);
    int64_t end[PARTS], next[PARTS] = {0}, got = 0, total = 0;
    end_offsets(c, topic, end);
    for (int p = 0; p < PARTS; p++)
        total += end[p];
    assert_int_equal(total, n);
    char es[512];
    int64_t t0 = kn_test_now_ms(), deadline = t0 + 120000;
    while (got < n && kn_test_now_ms() < deadline) {
        kn_records *r = NULL;
        int rc = kn_consumer_poll(c, 1000, &r, es, sizeof es);
        if (rc != KN_OK)
            fail_msg("poll: %s: %s", kn_err_name(rc), es);
        size_t cnt = kn_records_count(r);
        for (size_t i = 0; i < cnt; i++) {
            int32_t p = kn_records_partition(r, i);
            int64_t off = kn_records_offset(r, i);
            assert_true(p >= 0 && p < PARTS);
            if (off != next[p])
                fail_msg("%s: partition %d: offset %lld, expected %lld", codec, (int)p, (long long)off,
                         (long long)next[p]);
            next[p]++;
            size_t len;
            assert_null(kn_records_key(r, i, &len)); /* the perf tool sends no key */
            const void *v = kn_records_value(r, i, &len);
            check_value(v, len, p, off);
        }
        got += (int64_t)cnt;
        kn_records_free(r);
    }
    int64_t took = kn_test_now_ms() - t0;
    assert_int_equal(got, n);
    /* Nothing more, and every partition ends at its log end. */
    kn_records *r = NULL;
    assert_int_equal(kn_consumer_poll(c, 300, &r, es, sizeof es), KN_OK);
    assert_int_equal(kn_records_count(r), 0);
    kn_records_free(r);
    for (int p = 0; p < PARTS; p++) {
        int64_t pos = -1;
        assert_int_equal(next[p], end[p]);
        assert_int_equal(kn_consumer_position(c, topic, p, 0, &pos), KN_OK);
        assert_int_equal(pos, end[p]);
    }
    kn_consumer_stats st = {.size = sizeof st};
    kn_consumer_get_stats(c, &st);
    fprintf(stderr,
            "codec %-6s: %lld records exactly once in %lld ms, %lld fetches (%lld incremental, "
            "%lld failed), %lld polls\n",
            codec, (long long)n, (long long)took, (long long)st.fetch_requests,
            (long long)st.fetch_incremental, (long long)st.fetch_errors, (long long)st.polls);
    assert_int_equal(st.records, n);
    assert_int_equal(st.buffered_partitions, 0);
    assert_int_equal(kn_consumer_close(c, -1), KN_OK);
    kn_consumer_destroy(c);
}

/* Reads the topic while pausing, resuming and seeking partitions back
 * (deterministic churn). Small fetches keep read-ahead slices in play.
 * Each partition must deliver, from wherever it was last moved, the
 * next offset every time, until all reach their log end. */
static void read_with_churn(const char *topic) {
    kn_consumer *c = new_consumer("auto.offset.reset", "earliest", "max.poll.records", "700",
                                  "max.partition.fetch.bytes", "65536", NULL);
    assign_all(c, topic);
    int64_t end[PARTS], next[PARTS] = {0};
    end_offsets(c, topic, end);
    bool paused[PARTS] = {false};
    uint32_t rnd = 12345;
    int seeks = 0, pauses = 0;
    char es[512];
    int64_t deadline = kn_test_now_ms() + 120000;
    for (int poll = 0; kn_test_now_ms() < deadline; poll++) {
        bool done = true, rest_done = true;
        for (int p = 0; p < PARTS; p++) {
            done &= next[p] == end[p] && !paused[p];
            rest_done &= next[p] == end[p] || paused[p];
        }
        if (done)
            break;
        if (rest_done) {
            /* only paused partitions are left: resume them all */
            kn_topic_partition_list *l = kn_topic_partition_list_new();
            for (int p = 0; p < PARTS; p++)
                if (paused[p]) {
                    kn_topic_partition_list_add(l, topic, p);
                    paused[p] = false;
                }
            assert_int_equal(kn_consumer_resume(c, l), KN_OK);
            kn_topic_partition_list_destroy(l);
        }
        rnd = rnd * 1103515245u + 12345u;
        int p = (int)((rnd >> 8) % PARTS);
        kn_topic_partition_list *l = kn_topic_partition_list_new();
        kn_topic_partition_list_add(l, topic, p);
        switch ((rnd >> 16) % 16) {
        case 0: /* pause: what it buffered must come after resume */
            if (!paused[p]) {
                assert_int_equal(kn_consumer_pause(c, l), KN_OK);
                paused[p] = true;
                pauses++;
            }
            break;
        case 1:
        case 2:
            if (paused[p]) {
                assert_int_equal(kn_consumer_resume(c, l), KN_OK);
                paused[p] = false;
            }
            break;
        case 3: { /* seek back (or in place): buffered data is dropped */
            int64_t back = (int64_t)((rnd >> 4) % 3000);
            int64_t to = next[p] > back ? next[p] - back : 0;
            assert_int_equal(kn_consumer_seek(c, topic, p, to), KN_OK);
            next[p] = to;
            seeks++;
            break;
        }
        default:
            break;
        }
        kn_topic_partition_list_destroy(l);
        kn_records *r = NULL;
        int rc = kn_consumer_poll(c, 200, &r, es, sizeof es);
        if (rc != KN_OK)
            fail_msg("poll: %s: %s", kn_err_name(rc), es);
        for (size_t i = 0; i < kn_records_count(r); i++) {
            int32_t q = kn_records_partition(r, i);
            int64_t off = kn_records_offset(r, i);
            assert_true(q >= 0 && q < PARTS);
            if (paused[q])
                fail_msg("partition %d returned a record while paused", (int)q);
            if (off != next[q])
                fail_msg("churn: partition %d: offset %lld, expected %lld", (int)q, (long long)off,
                         (long long)next[q]);
            next[q]++;
            size_t len;
            const void *v = kn_records_value(r, i, &len);
            check_value(v, len, q, off);
        }
        kn_records_free(r);
    }
    for (int p = 0; p < PARTS; p++)
        assert_int_equal(next[p], end[p]);
    fprintf(stderr, "churn: every partition read to its end through %d seeks and %d pauses\n", seeks, pauses);
    assert_true(seeks > 0 && pauses > 0);
    assert_int_equal(kn_consumer_close(c, -1), KN_OK);
    kn_consumer_destroy(c);
}

static void test_volume(void **state) {
    const char *env_n = getenv("KN_IT_VOLUME_RECORDS");
    const char *env_codecs = getenv("KN_IT_VOLUME_CODECS");
    int64_t n = env_n && *env_n ? strtoll(env_n, NULL, 10) : 1000000;
    assert_true(n > 0);
    char codecs[256];
    snprintf(codecs, sizeof codecs, "%s", env_codecs && *env_codecs ? env_codecs : "zstd");
    bool churned = false;
    char *save = NULL;
    for (char *codec = strtok_r(codecs, ",", &save); codec; codec = strtok_r(NULL, ",", &save)) {
        char topic[256];
        snprintf(topic, sizeof topic, "%s", kn_test_topic(codec));
        int64_t t0 = kn_test_now_ms();
        produce(topic, n, codec);
        fprintf(stderr, "codec %-6s: %lld records written by the Java producer in %lld ms\n", codec,
                (long long)n, (long long)(kn_test_now_ms() - t0));
        read_all(topic, n, codec);
        if (!churned) {
            read_with_churn(topic);
            churned = true;
        }
    }
}

int main(void) {
    kn_test_bootstrap();
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_volume),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
