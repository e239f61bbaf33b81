/*
 * test_record_batch_java.c: byte compatibility of record batches with
 * the Java client, both directions, through files (no broker needed):
 *  - batches we encode (every codec, headers, null vs empty, control
 *    and transactional batches, LogAppendTime) are parsed and validated
 *    by Java's MemoryRecords (tools/java/record-batch-check read), and
 *    Java's dump must equal ours;
 *  - batches Java's MemoryRecordsBuilder writes (every codec, markers,
 *    LogAppendTime) are decoded by us and our dump must equal Java's;
 *  - an uncompressed batch built by both from the same records is
 *    byte-identical.
 * Java and the Kafka jars are required: a missing JDK or jar fails the
 * test (CI runs tools/kafka/fetch-jars first).
 */
#include "kn_test.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "codec/codec.h"
#include "proto/record_batch.h"

/* A growable text buffer for the dumps. */
typedef struct txt {
    char *s;
    size_t len, cap;
} txt;

static void txt_add(txt *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void txt_add(txt *t, const char *fmt, ...) {
    for (;;) {
        va_list ap;
        va_start(ap, fmt);
        int n = vsnprintf(t->s ? t->s + t->len : NULL, t->s ? t->cap - t->len : 0, fmt, ap);
        va_end(ap);
        assert_true(n >= 0);
        if (t->s && (size_t)n < t->cap - t->len) {
            t->len += (size_t)n;
            return;
        }
        t->cap = t->cap * 2 + (size_t)n + 4096;
        t->s = realloc(t->s, t->cap);
        assert_non_null(t->s);
    }
}

static void txt_hex(txt *t, const uint8_t *p, int32_t len) {
    if (len < 0) {
        txt_add(t, "null");
        return;
    }
    if (len == 0) {
        txt_add(t, "-");
        return;
    }
    for (int32_t i = 0; i < len; i++)
        txt_add(t, "%02x", p[i]);
}

/* Our decoder's dump of a records blob, in RecordBatchCheck's format. */
static void dump_ours(const uint8_t *buf, size_t len, txt *t) {
    kn_wr scratch;
    kn_wr_init(&scratch, 0, (size_t)64 << 20);
    kn_records_iter it;
    kn_records_iter_init(&it, buf, len);
    kn_rb b;
    char es[256] = "";
    int rc, n = 0;
    while ((rc = kn_records_next(&it, &b, KN_RB_VERIFY_CRC, es, sizeof es)) == 1) {
        const kn_rb_header *h = &b.h;
        txt_add(t, "batch %lld %lld %d %d %d %d %d %lld %d %d %d %lld\n", (long long)h->base_offset,
                (long long)kn_rb_last_offset(&b), h->record_count, kn_rb_codec(&b),
                (h->attributes & KN_RB_ATTR_LOG_APPEND_TIME) ? 1 : 0,
                kn_rb_is_transactional(&b) ? 1 : 0, kn_rb_is_control(&b) ? 1 : 0,
                (long long)h->producer_id, h->producer_epoch, h->base_sequence,
                h->partition_leader_epoch, (long long)h->max_timestamp);
        if (kn_rb_records_begin(&b, &scratch, es, sizeof es) != 0)
            fail_msg("%s", es);
        kn_record r;
        while ((rc = kn_rb_next(&b, &r, es, sizeof es)) == 1) {
            txt_add(t, "record %lld %lld ", (long long)r.offset, (long long)r.timestamp);
            txt_hex(t, r.key.ptr, r.key.len);
            txt_add(t, " ");
            txt_hex(t, r.value.ptr, r.value.len);
            txt_add(t, " %d", r.header_count);
            kn_record_hdr_iter hi;
            kn_rb_kv kv = {0};
            kn_record_headers(&r, &hi);
            while (kn_record_hdr_next(&hi, &kv)) {
                txt_add(t, " ");
                txt_hex(t, (const uint8_t *)kv.key.ptr, kv.key.len);
                txt_add(t, "=");
                txt_hex(t, kv.value.ptr, kv.value.len);
            }
            txt_add(t, "\n");
        }
        if (rc != 0)
            fail_msg("%s", es);
        n++;
    }
    if (rc != 0)
        fail_msg("%s", es);
    assert_false(it.partial);
    txt_add(t, "end %d\n", n);
    kn_wr_free(&scratch);
}

/* Runs tools/java/record-batch-check MODE FILE, returns its stdout. */
static void run_java(const char *mode, const char *file, txt *out) {
    char cmd[8192];
    snprintf(cmd, sizeof cmd, "'%s' %s '%s'", kn_test_source_path("tools/java/record-batch-check"),
             mode, file);
    FILE *p = popen(cmd, "r");
    assert_non_null(p);
    char buf[65536];
    size_t n;
    while ((n = fread(buf, 1, sizeof buf - 1, p)) > 0) {
        buf[n] = 0;
        txt_add(out, "%s", buf);
    }
    int st = pclose(p);
    if (st != 0)
        fail_msg("%s failed (status %d): is a JDK installed and tools/kafka/fetch-jars run?", cmd,
                 st);
}

static void compare(const txt *java, const txt *ours) {
    if (java->len == ours->len && memcmp(java->s, ours->s, java->len) == 0)
        return;
    /* Show the first differing line. */
    size_t i = 0, line = 1, start = 0;
    while (i < java->len && i < ours->len && java->s[i] == ours->s[i]) {
        if (java->s[i] == '\n') {
            line++;
            start = i + 1;
        }
        i++;
    }
    fail_msg("dumps differ at line %zu:\n java: %.300s\n ours: %.300s", line, java->s + start,
             ours->s + start);
}

static void write_file(const char *path, const uint8_t *p, size_t n) {
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    assert_int_equal(fwrite(p, 1, n, f), n);
    assert_int_equal(fclose(f), 0);
}

static uint8_t *read_file(const char *path, size_t *n) {
    FILE *f = fopen(path, "rb");
    assert_non_null(f);
    fseek(f, 0, SEEK_END);
    long sz = ftell(f);
    fseek(f, 0, SEEK_SET);
    uint8_t *p = malloc(sz > 0 ? (size_t)sz : 1);
    assert_int_equal(fread(p, 1, (size_t)sz, f), (size_t)sz);
    fclose(f);
    *n = (size_t)sz;
    return p;
}

static void tmp_path(char *buf, size_t n, const char *tag) {
    snprintf(buf, n, "/tmp/kn-rbjava-%s-%d.bin", tag, (int)getpid());
}

static kn_bytes bs(const char *s) {
    kn_bytes b = {(const uint8_t *)s, s ? (int32_t)strlen(s) : -1};
    return b;
}

/* The record rule of RecordBatchCheck.appendRecords, record i. */
static void java_rule_append(kn_rb_builder *b, int i, char *kbuf, char *vbuf) {
    const char *key = NULL, *value = NULL;
    if (i % 3 != 0) {
        if (i == 1)
            key = "";
        else {
            sprintf(kbuf, "key-%d", i);
            key = kbuf;
        }
    }
    if (i % 4 != 0) {
        if (i == 2)
            value = "";
        else {
            int n = sprintf(vbuf, "value-%d-", i);
            memset(vbuf + n, 'x', (size_t)i * 10);
            vbuf[n + i * 10] = 0;
            value = vbuf;
        }
    }
    char hv[16];
    sprintf(hv, "v%d", i);
    kn_rb_kv hs[2] = {{kn_str_c("h1"), bs(hv)}, {kn_str_c("h2"), bs(NULL)}};
    int64_t ts = 1700000000000LL + i * 7 - (i == 3 ? 100 : 0);
    assert_int_equal(kn_rb_builder_append(b, i * 2, ts, bs(key), bs(value), hs, i % 2 ? 2 : 0), 0);
}

/* Java writes, we read: dumps equal; batch 0 byte-identical to ours. */
static void test_we_read_java(void **state) {
    char path[256];
    tmp_path(path, sizeof path, "java");
    txt java = {0}, ours = {0};
    run_java("write", path, &java);
    size_t n;
    uint8_t *data = read_file(path, &n);
    unlink(path);
    dump_ours(data, n, &ours);
    compare(&java, &ours);
    /* All five codecs and a control batch were in there. */
    assert_non_null(strstr(java.s, " 200 4 0 0 0 ")); /* zstd batch */
    assert_non_null(strstr(java.s, " 1 0 0 1 1 77 2 ")); /* commit marker */

    kn_rb_builder_conf c;
    kn_rb_builder_conf_init(&c);
    c.producer_id = 1234;
    c.producer_epoch = 5;
    c.base_sequence = 100;
    c.partition_leader_epoch = 11;
    kn_rb_builder b;
    kn_rb_builder_init(&b, &c, 0);
    char kbuf[32], vbuf[256];
    for (int i = 0; i < 10; i++)
        java_rule_append(&b, i, kbuf, vbuf);
    kn_wr out;
    kn_wr_init(&out, 0, 0);
    char es[256];
    assert_int_equal(kn_rb_builder_finish(&b, &out, es, sizeof es), 0);
    kn_rb_builder_free(&b);
    assert_true(out.len < n);
    assert_memory_equal(out.buf, data, out.len);
    kn_wr_free(&out);
    free(data);
    free(java.s);
    free(ours.s);
}

/* We write, Java reads and validates: dumps equal. */
static void test_java_reads_ours(void **state) {
    kn_wr out;
    kn_wr_init(&out, 0, 0);
    char es[256];
    char kbuf[32], vbuf[4096];
    int64_t base = 0;
    /* Every codec at its default and at one other level; 300 records
     * with growing values cross lz4's 64 KiB blocks and snappy's 32 KiB
     * chunks. */
    for (int codec = 0; codec < KN_CODEC_COUNT; codec++) {
        const kn_codec *cd = kn_codec_get(codec);
        for (int variant = 0; variant < 2; variant++) {
            kn_rb_builder_conf c;
            kn_rb_builder_conf_init(&c);
            c.codec = codec;
            c.base_offset = base;
            c.level = variant ? cd->level_max : cd->level_default;
            if (codec == KN_CODEC_ZSTD && variant)
                c.level = -3;
            c.producer_id = 4000 + codec;
            c.producer_epoch = (int16_t)variant;
            c.base_sequence = 7 * codec;
            c.partition_leader_epoch = codec;
            kn_rb_builder b;
            kn_rb_builder_init(&b, &c, 0);
            int nrec = variant ? 300 : 10;
            for (int i = 0; i < nrec; i++) {
                if (i < 10) {
                    java_rule_append(&b, i, kbuf, vbuf);
                    continue;
                }
                int vn = snprintf(vbuf, sizeof vbuf, "record %d of codec %d:", i, codec);
                for (int k = vn; k < 900; k++)
                    vbuf[k] = (char)('a' + (k * i) % 26);
                vbuf[900] = 0;
                snprintf(kbuf, sizeof kbuf, "k%d", i % 17);
                kn_rb_kv h = {kn_str_c("trace-id"), bs(kbuf)};
                assert_int_equal(kn_rb_builder_append(&b, i * 2, 1700000000000LL + i, bs(kbuf),
                                                      bs(vbuf), &h, 1),
                                 0);
            }
            assert_int_equal(kn_rb_builder_finish(&b, &out, es, sizeof es), 0);
            kn_rb_builder_free(&b);
            base += 1000;
        }
    }
    /* Transactional data, then COMMIT and ABORT markers (control batches). */
    kn_rb_builder_conf c;
    kn_rb_builder_conf_init(&c);
    c.base_offset = base;
    c.transactional = true;
    c.producer_id = 77;
    c.producer_epoch = 2;
    c.base_sequence = 0;
    kn_rb_builder b;
    kn_rb_builder_init(&b, &c, 0);
    for (int i = 0; i < 3; i++)
        java_rule_append(&b, i, kbuf, vbuf);
    assert_int_equal(kn_rb_builder_finish(&b, &out, es, sizeof es), 0);
    kn_rb_builder_free(&b);
    for (int type = 1; type >= 0; type--) {
        c.base_offset = base + 11 - type;
        c.control = true;
        c.base_sequence = -1;
        kn_rb_builder_init(&b, &c, 0);
        uint8_t key[4] = {0, 0, 0, (uint8_t)type}, val[6] = {0, 0, 0, 0, 0, 4};
        assert_int_equal(kn_rb_builder_append(&b, 0, 1700000009999LL, (kn_bytes){key, 4},
                                              (kn_bytes){val, 6}, NULL, 0),
                         0);
        assert_int_equal(kn_rb_builder_finish(&b, &out, es, sizeof es), 0);
        kn_rb_builder_free(&b);
    }
    /* LogAppendTime, lz4 */
    kn_rb_builder_conf_init(&c);
    c.base_offset = base + 20;
    c.codec = KN_CODEC_LZ4;
    c.log_append_time = true;
    c.log_append_time_ms = 1700000055555LL;
    kn_rb_builder_init(&b, &c, 0);
    for (int i = 0; i < 4; i++)
        java_rule_append(&b, i, kbuf, vbuf);
    assert_int_equal(kn_rb_builder_finish(&b, &out, es, sizeof es), 0);
    kn_rb_builder_free(&b);

    char path[256];
    tmp_path(path, sizeof path, "ours");
    write_file(path, out.buf, out.len);
    txt java = {0}, ours = {0};
    run_java("read", path, &java);
    unlink(path);
    dump_ours(out.buf, out.len, &ours);
    compare(&java, &ours);
    assert_non_null(strstr(java.s, "end 14\n"));
    kn_wr_free(&out);
    free(java.s);
    free(ours.s);
}

/* The comparison itself can fail: one corrupted byte in our file makes
 * Java reject it (non-zero exit). */
static void test_java_rejects_corrupt(void **state) {
    kn_rb_builder_conf c;
    kn_rb_builder_conf_init(&c);
    kn_rb_builder b;
    kn_rb_builder_init(&b, &c, 0);
    char kbuf[32], vbuf[256];
    for (int i = 0; i < 5; i++)
        java_rule_append(&b, i, kbuf, vbuf);
    kn_wr out;
    kn_wr_init(&out, 0, 0);
    char es[256];
    assert_int_equal(kn_rb_builder_finish(&b, &out, es, sizeof es), 0);
    kn_rb_builder_free(&b);
    out.buf[out.len - 3] ^= 0x40;
    char path[256], cmd[8192];
    tmp_path(path, sizeof path, "corrupt");
    write_file(path, out.buf, out.len);
    snprintf(cmd, sizeof cmd, "'%s' read '%s' >/dev/null 2>&1",
             kn_test_source_path("tools/java/record-batch-check"), path);
    int st = system(cmd);
    unlink(path);
    /* 1: Java threw (CorruptRecordException); 127 would mean no script. */
    assert_true(WIFEXITED(st));
    assert_int_equal(WEXITSTATUS(st), 1);
    kn_wr_free(&out);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_we_read_java),
        cmocka_unit_test(test_java_reads_ours),
        cmocka_unit_test(test_java_rejects_corrupt),
    };
    int rc = cmocka_run_group_tests(tests, NULL, NULL);
    kn_codec_thread_cleanup();
    return rc;
}
