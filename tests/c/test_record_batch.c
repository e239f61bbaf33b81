/*
 * test_record_batch.c: record batch v2 encoder and decoder: a batch
 * built byte by byte from the format description, round trips through
 * every codec, null vs empty keys/values, headers, control and
 * LogAppendTime batches, truncation at every byte, CRC corruption, old
 * magic refused, and a Fetch records blob ending in a partial batch.
 */
#include "kn_test.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "codec/codec.h"
#include "crc32c.h"
#include "proto/record_batch.h"

#define B(s) ((kn_bytes){(const uint8_t *)(s), (int32_t)strlen(s)})
#define NULLB ((kn_bytes){NULL, -1})

static kn_wr scratch;

static int setup(void **state) {
    kn_wr_init(&scratch, 0, (size_t)16 << 20);
    return 0;
}
static int teardown(void **state) {
    kn_wr_free(&scratch);
    return 0;
}

/* The batch of test_hand_built, written out from the format: base offset
 * 5, leader epoch 7, one record at offset 5, timestamp 1000, key "k",
 * value "vv", header "h" -> null; producer id 42, epoch 3, sequence 9. */
static size_t hand_batch(uint8_t *out) {
    static const uint8_t head[] = {
        0, 0, 0, 0, 0, 0, 0, 5,       /* baseOffset */
        0, 0, 0, 0,                   /* batchLength: patched */
        0, 0, 0, 7,                   /* partitionLeaderEpoch */
        2,                            /* magic */
        0, 0, 0, 0,                   /* crc: patched */
        0, 0x10,                      /* attributes: transactional */
        0, 0, 0, 0,                   /* lastOffsetDelta */
        0, 0, 0, 0, 0, 0, 0x03, 0xe8, /* baseTimestamp 1000 */
        0, 0, 0, 0, 0, 0, 0x03, 0xe8, /* maxTimestamp 1000 */
        0, 0, 0, 0, 0, 0, 0, 42,      /* producerId */
        0, 3,                         /* producerEpoch */
        0, 0, 0, 9,                   /* baseSequence */
        0, 0, 0, 1,                   /* recordCount */
    };
    static const uint8_t rec[] = {
        0x18,          /* length 12 (zigzag 24) */
        0,             /* attributes */
        0,             /* timestampDelta 0 */
        0,             /* offsetDelta 0 */
        0x02, 'k',     /* key length 1 */
        0x04, 'v', 'v', /* value length 2 */
        0x02,          /* 1 header */
        0x02, 'h',     /* header key "h" */
        0x01,          /* header value null (-1) */
    };
    memcpy(out, head, sizeof head);
    memcpy(out + sizeof head, rec, sizeof rec);
    size_t n = sizeof head + sizeof rec;
    kn_wr_put_u32_at(out + 8, (uint32_t)(n - 12));
    kn_wr_put_u32_at(out + 17, kn_crc32c(0, out + 21, n - 21));
    return n;
}

static void test_hand_built(void **state) {
    uint8_t buf[128];
    size_t n = hand_batch(buf);
    assert_int_equal(n, 61 + 13);
    kn_rb b;
    char es[256] = "";
    assert_int_equal(kn_rb_parse(&b, buf, n, KN_RB_VERIFY_CRC, es, sizeof es), 0);
    assert_true(b.h.base_offset == 5);
    assert_int_equal(b.h.batch_length, n - 12);
    assert_int_equal(b.h.partition_leader_epoch, 7);
    assert_int_equal(b.h.magic, 2);
    assert_true(kn_rb_is_transactional(&b));
    assert_false(kn_rb_is_control(&b));
    assert_int_equal(kn_rb_codec(&b), 0);
    assert_true(b.h.producer_id == 42);
    assert_int_equal(b.h.producer_epoch, 3);
    assert_int_equal(b.h.base_sequence, 9);
    assert_int_equal(b.h.record_count, 1);
    assert_true(kn_rb_last_offset(&b) == 5);
    assert_int_equal(kn_rb_records_begin(&b, NULL, es, sizeof es), 0);
    kn_record r;
    assert_int_equal(kn_rb_next(&b, &r, es, sizeof es), 1);
    assert_true(r.offset == 5);
    assert_true(r.timestamp == 1000);
    assert_int_equal(r.key.len, 1);
    assert_memory_equal(r.key.ptr, "k", 1);
    assert_int_equal(r.value.len, 2);
    assert_memory_equal(r.value.ptr, "vv", 2);
    assert_int_equal(r.header_count, 1);
    kn_record_hdr_iter hi;
    kn_rb_kv kv = {0};
    kn_record_headers(&r, &hi);
    assert_true(kn_record_hdr_next(&hi, &kv));
    assert_true(kn_str_eq(kv.key, "h"));
    assert_int_equal(kv.value.len, -1);
    assert_false(kn_record_hdr_next(&hi, &kv));
    assert_int_equal(kn_rb_next(&b, &r, es, sizeof es), 0);

    /* The encoder produces exactly these bytes. */
    kn_rb_builder_conf c;
    kn_rb_builder_conf_init(&c);
    c.base_offset = 5;
    c.partition_leader_epoch = 7;
    c.transactional = true;
    c.producer_id = 42;
    c.producer_epoch = 3;
    c.base_sequence = 9;
    kn_rb_builder bld;
    kn_rb_builder_init(&bld, &c, 0);
    kn_rb_kv h = {kn_str_c("h"), NULLB};
    assert_int_equal(kn_rb_builder_append(&bld, 0, 1000, B("k"), B("vv"), &h, 1), 0);
    kn_wr out;
    kn_wr_init(&out, 0, 0);
    assert_int_equal(kn_rb_builder_finish(&bld, &out, es, sizeof es), 0);
    assert_int_equal(out.len, n);
    assert_memory_equal(out.buf, buf, n);
    kn_wr_free(&out);
    kn_rb_builder_free(&bld);

    /* Built in place (the producer's uncompressed batches): the same
     * bytes, batch.size accounting unchanged, the buffer handed over. */
    kn_rb_builder_init(&bld, &c, 0);
    assert_int_equal(kn_rb_builder_keep_header(&bld), 0);
    assert_int_equal(kn_rb_builder_size(&bld), KN_RB_HEADER_SIZE);
    assert_int_equal(kn_rb_builder_append(&bld, 0, 1000, B("k"), B("vv"), &h, 1), 0);
    assert_int_equal(kn_rb_builder_size(&bld), n);
    kn_wr_init(&out, 0, 0);
    assert_int_equal(kn_rb_builder_finish(&bld, &out, es, sizeof es), 0); /* the copying finish agrees */
    assert_memory_equal(out.buf, buf, n);
    assert_int_not_equal(kn_rb_builder_finish_in_place(&bld, &out, es, sizeof es), 0); /* out not empty */
    kn_wr_free(&out);
    kn_wr_init(&out, 0, 0);
    assert_int_equal(kn_rb_builder_finish_in_place(&bld, &out, es, sizeof es), 0);
    assert_int_equal(out.len, n);
    assert_memory_equal(out.buf, buf, n);
    assert_null(kn_rb_builder_buffer(&bld)->buf);
    kn_wr_free(&out);
    kn_rb_builder_free(&bld);
    /* Only before the first record, only uncompressed. */
    kn_rb_builder_init(&bld, &c, 0);
    assert_int_equal(kn_rb_builder_append(&bld, 0, 1000, B("k"), B("vv"), &h, 1), 0);
    assert_int_not_equal(kn_rb_builder_keep_header(&bld), 0);
    kn_wr_init(&out, 0, 0);
    assert_int_not_equal(kn_rb_builder_finish_in_place(&bld, &out, es, sizeof es), 0);
    kn_rb_builder_free(&bld);
    c.codec = 1;
    kn_rb_builder_init(&bld, &c, 0);
    assert_int_not_equal(kn_rb_builder_keep_header(&bld), 0);
    kn_rb_builder_free(&bld);
}

/* Record i's timestamp in the varied batch: every seventh one 2^40 ms
 * later, a varint too long for kn_rb_next's fast path (the checked
 * reader decodes it, between records the fast path reads). */
static int64_t varied_ts(int i) {
    if (i % 7 == 6)
        return 1700000000000LL + (1LL << 40) + i;
    return 1700000000000LL + (i % 3 == 2 ? -5000 : i * 1000);
}

/* Builds a varied batch: null/empty keys and values, headers, negative
 * and large timestamp deltas, gaps in offsets. */
static void build_varied(kn_wr *out, int codec, int64_t base_offset, int nrec) {
    kn_rb_builder_conf c;
    kn_rb_builder_conf_init(&c);
    c.codec = codec;
    c.base_offset = base_offset;
    kn_rb_builder b;
    kn_rb_builder_init(&b, &c, 0);
    char key[32], val[64];
    for (int i = 0; i < nrec; i++) {
        snprintf(key, sizeof key, "key-%d", i);
        snprintf(val, sizeof val, "value-%d-%s", i, "payload payload payload");
        kn_bytes k = i % 4 == 0 ? NULLB : i % 4 == 1 ? (kn_bytes){(const uint8_t *)"", 0} : B(key);
        kn_bytes v = i % 5 == 0 ? NULLB : i % 5 == 1 ? (kn_bytes){(const uint8_t *)"", 0} : B(val);
        kn_rb_kv hs[2] = {{kn_str_c("trace"), B(key)}, {kn_str_c(""), NULLB}};
        int64_t ts = varied_ts(i);
        assert_int_equal(kn_rb_builder_append(&b, i * 2, ts, k, v, hs, (size_t)(i % 3)), 0);
    }
    char es[256];
    assert_int_equal(kn_rb_builder_finish(&b, out, es, sizeof es), 0);
    kn_rb_builder_free(&b);
}

static void check_varied(const uint8_t *buf, size_t len, int codec, int64_t base_offset,
                         int nrec) {
    kn_rb b;
    char es[256] = "";
    int rc = kn_rb_parse(&b, buf, len, KN_RB_VERIFY_CRC, es, sizeof es);
    if (rc)
        fail_msg("%s", es);
    assert_int_equal(kn_rb_codec(&b), codec);
    assert_int_equal(b.h.record_count, nrec);
    assert_true(b.h.base_timestamp == 1700000000000LL);
    assert_int_equal(b.h.last_offset_delta, (nrec - 1) * 2);
    assert_int_equal(kn_rb_records_begin(&b, &scratch, es, sizeof es), 0);
    kn_record r;
    char key[32], val[64];
    int64_t max_ts = INT64_MIN;
    for (int i = 0; i < nrec; i++) {
        rc = kn_rb_next(&b, &r, es, sizeof es);
        if (rc != 1)
            fail_msg("record %d: %d %s", i, rc, es);
        assert_true(r.offset == base_offset + i * 2);
        int64_t ts = varied_ts(i);
        assert_true(r.timestamp == ts);
        if (ts > max_ts)
            max_ts = ts;
        snprintf(key, sizeof key, "key-%d", i);
        snprintf(val, sizeof val, "value-%d-%s", i, "payload payload payload");
        if (i % 4 == 0)
            assert_int_equal(r.key.len, -1);
        else if (i % 4 == 1)
            assert_int_equal(r.key.len, 0);
        else {
            assert_int_equal(r.key.len, strlen(key));
            assert_memory_equal(r.key.ptr, key, strlen(key));
        }
        if (i % 5 == 0)
            assert_int_equal(r.value.len, -1);
        else if (i % 5 == 1)
            assert_int_equal(r.value.len, 0);
        else {
            assert_int_equal(r.value.len, strlen(val));
            assert_memory_equal(r.value.ptr, val, strlen(val));
        }
        assert_int_equal(r.header_count, i % 3);
        kn_record_hdr_iter hi;
        kn_rb_kv kv = {0};
        kn_record_headers(&r, &hi);
        for (int h = 0; h < i % 3; h++) {
            assert_true(kn_record_hdr_next(&hi, &kv));
            if (h == 0) {
                assert_true(kn_str_eq(kv.key, "trace"));
                assert_int_equal(kv.value.len, strlen(key));
            } else {
                assert_int_equal(kv.key.len, 0);
                assert_int_equal(kv.value.len, -1);
            }
        }
        assert_false(kn_record_hdr_next(&hi, &kv));
    }
    assert_true(b.h.max_timestamp == max_ts);
    assert_int_equal(kn_rb_next(&b, &r, es, sizeof es), 0);
}

static void test_round_trip_codecs(void **state) {
    for (int codec = 0; codec < KN_CODEC_COUNT; codec++) {
        static const int counts[] = {1, 2, 7, 1000};
        for (size_t k = 0; k < 4; k++) {
            kn_wr out;
            kn_wr_init(&out, 0, 0);
            build_varied(&out, codec, 1000 + codec, counts[k]);
            check_varied(out.buf, out.len, codec, 1000 + codec, counts[k]);
            kn_wr_free(&out);
        }
    }
}

static void test_control_and_log_append_time(void **state) {
    kn_rb_builder_conf c;
    kn_rb_builder_conf_init(&c);
    c.control = true;
    c.transactional = true;
    c.producer_id = 77;
    c.producer_epoch = 1;
    c.base_offset = 500;
    kn_rb_builder b;
    kn_rb_builder_init(&b, &c, 0);
    static const uint8_t key[4] = {0, 0, 0, 1};                 /* version 0, COMMIT */
    static const uint8_t val[6] = {0, 0, 0, 0, 0, 5};           /* version 0, coordinator epoch 5 */
    assert_int_equal(kn_rb_builder_append(&b, 0, 123, (kn_bytes){key, 4}, (kn_bytes){val, 6}, NULL, 0), 0);
    kn_wr out;
    kn_wr_init(&out, 0, 0);
    char es[256];
    assert_int_equal(kn_rb_builder_finish(&b, &out, es, sizeof es), 0);
    kn_rb_builder_free(&b);
    kn_rb rb;
    assert_int_equal(kn_rb_parse(&rb, out.buf, out.len, KN_RB_VERIFY_CRC, es, sizeof es), 0);
    assert_true(kn_rb_is_control(&rb));
    assert_int_equal(kn_rb_records_begin(&rb, &scratch, es, sizeof es), 0);
    kn_record r;
    assert_int_equal(kn_rb_next(&rb, &r, es, sizeof es), 1);
    assert_int_equal(kn_record_control_type(&r), KN_RB_CONTROL_COMMIT);
    r.key.len = 3;
    assert_int_equal(kn_record_control_type(&r), -1);
    kn_wr_free(&out);

    kn_rb_builder_conf_init(&c);
    c.log_append_time = true;
    c.log_append_time_ms = 99999;
    kn_rb_builder_init(&b, &c, 0);
    assert_int_equal(kn_rb_builder_append(&b, 0, 10, B("a"), B("b"), NULL, 0), 0);
    assert_int_equal(kn_rb_builder_append(&b, 1, 20, B("a"), B("b"), NULL, 0), 0);
    kn_wr_init(&out, 0, 0);
    assert_int_equal(kn_rb_builder_finish(&b, &out, es, sizeof es), 0);
    kn_rb_builder_free(&b);
    assert_int_equal(kn_rb_parse(&rb, out.buf, out.len, KN_RB_VERIFY_CRC, es, sizeof es), 0);
    assert_int_equal(kn_rb_records_begin(&rb, &scratch, es, sizeof es), 0);
    assert_int_equal(kn_rb_next(&rb, &r, es, sizeof es), 1);
    assert_true(r.timestamp == 99999);
    assert_true(r.timestamp_delta == 0);
    assert_int_equal(kn_rb_next(&rb, &r, es, sizeof es), 1);
    assert_true(r.timestamp == 99999);
    assert_true(r.timestamp_delta == 10);
    kn_wr_free(&out);
}

static void test_builder_rejects(void **state) {
    kn_rb_builder_conf c;
    kn_rb_builder_conf_init(&c);
    kn_rb_builder b;
    kn_rb_builder_init(&b, &c, 200);
    assert_int_equal(kn_rb_builder_append(&b, -1, 0, B("a"), B("b"), NULL, 0), KN_ERR__INVALID_ARG);
    assert_int_equal(kn_rb_builder_append(&b, 3, 0, B("a"), B("b"), NULL, 0), 0);
    assert_int_equal(kn_rb_builder_append(&b, 3, 0, B("a"), B("b"), NULL, 0), KN_ERR__INVALID_ARG);
    kn_rb_kv bad = {{NULL, -1}, B("x")};
    assert_int_equal(kn_rb_builder_append(&b, 4, 0, B("a"), B("b"), &bad, 1), KN_ERR__INVALID_ARG);
    /* Over the cap: refused, and the batch so far is intact. */
    char big[300];
    memset(big, 'x', sizeof big);
    assert_int_equal(kn_rb_builder_append(&b, 5, 0, NULLB, (kn_bytes){(uint8_t *)big, 300}, NULL, 0),
                     KN_ERR__INVALID_ARG);
    assert_int_equal(b.count, 1);
    assert_int_equal(kn_rb_builder_size(&b), 61 + kn_rb_record_size(3, 0, B("a"), B("b"), NULL, 0));
    kn_wr out;
    kn_wr_init(&out, 0, 0);
    char es[256];
    assert_int_equal(kn_rb_builder_finish(&b, &out, es, sizeof es), 0);
    kn_rb rb;
    assert_int_equal(kn_rb_parse(&rb, out.buf, out.len, KN_RB_VERIFY_CRC, es, sizeof es), 0);
    assert_int_equal(rb.h.record_count, 1);
    assert_int_equal(rb.h.last_offset_delta, 3);
    kn_wr_free(&out);
    b.conf.codec = 9;
    kn_wr_init(&out, 0, 0);
    assert_int_equal(kn_rb_builder_finish(&b, &out, es, sizeof es), KN_ERR__INVALID_ARG);
    kn_wr_free(&out);
    kn_rb_builder_free(&b);
}

/* Cut a small batch at every byte: parse fails cleanly (exact-size
 * copies so ASan catches any overread), and a records blob holding it
 * reports a partial batch. */
static void test_truncation_every_byte(void **state) {
    for (int codec = 0; codec < KN_CODEC_COUNT; codec++) {
        kn_wr out;
        kn_wr_init(&out, 0, 0);
        build_varied(&out, codec, 0, 5);
        for (size_t cut = 0; cut < out.len; cut++) {
            uint8_t *t = malloc(cut ? cut : 1);
            memcpy(t, out.buf, cut);
            kn_rb b;
            char es[256] = "";
            int rc = kn_rb_parse(&b, t, cut, KN_RB_VERIFY_CRC, es, sizeof es);
            assert_int_equal(rc, KN_ERR__BAD_BATCH);
            assert_non_null(strstr(es, "record batch at offset 0"));
            kn_records_iter it;
            kn_records_iter_init(&it, t, cut);
            assert_int_equal(kn_records_next(&it, &b, KN_RB_VERIFY_CRC, es, sizeof es), 0);
            assert_int_equal(it.off, 0);
            assert_true(it.partial == (cut > 0));
            free(t);
        }
        kn_wr_free(&out);
    }
}

/* A flipped bit anywhere after the CRC field is caught by the CRC; with
 * CRC checking off, iteration must still stay in bounds. */
static void test_crc_corruption(void **state) {
    for (int codec = 0; codec < KN_CODEC_COUNT; codec++) {
        kn_wr out;
        kn_wr_init(&out, 0, 0);
        build_varied(&out, codec, 42, 6);
        uint8_t *t = malloc(out.len);
        for (size_t pos = 0; pos < out.len; pos++) {
            memcpy(t, out.buf, out.len);
            t[pos] ^= 0x01;
            kn_rb b;
            char es[256] = "";
            int rc = kn_rb_parse(&b, t, out.len, KN_RB_VERIFY_CRC, es, sizeof es);
            if (pos >= 21) {
                assert_int_equal(rc, KN_ERR__BAD_BATCH);
                assert_non_null(strstr(es, "record batch at offset 42: CRC mismatch (stored"));
            } else if (pos >= 17) {
                assert_int_equal(rc, KN_ERR__BAD_BATCH); /* the stored CRC itself */
            }
            if (kn_rb_parse(&b, t, out.len, 0, es, sizeof es) == 0 &&
                kn_rb_records_begin(&b, &scratch, es, sizeof es) == 0) {
                kn_record r;
                for (int i = 0; i < 100 && kn_rb_next(&b, &r, es, sizeof es) == 1; i++)
                    ;
            }
        }
        free(t);
        kn_wr_free(&out);
    }
}

static void test_old_magic_unsupported(void **state) {
    uint8_t buf[64] = {0};
    buf[11] = 40; /* size */
    for (int magic = 0; magic <= 1; magic++) {
        buf[16] = (uint8_t)magic;
        kn_rb b;
        char es[256] = "";
        assert_int_equal(kn_rb_parse(&b, buf, sizeof buf, KN_RB_VERIFY_CRC, es, sizeof es),
                         KN_ERR__UNSUPPORTED);
        assert_non_null(strstr(es, "magic"));
        kn_records_iter it;
        kn_records_iter_init(&it, buf, sizeof buf);
        assert_int_equal(kn_records_next(&it, &b, 0, es, sizeof es), KN_ERR__UNSUPPORTED);
    }
    buf[16] = 3;
    kn_rb b;
    char es[256];
    assert_int_equal(kn_rb_parse(&b, buf, sizeof buf, 0, es, sizeof es), KN_ERR__BAD_BATCH);
}

static void test_records_blob(void **state) {
    kn_wr out;
    kn_wr_init(&out, 0, 0);
    size_t ends[3];
    for (int i = 0; i < 3; i++) {
        build_varied(&out, i * 2 % KN_CODEC_COUNT, 100 * i, 3 + i);
        ends[i] = out.len;
    }
    /* Tail: the start of a 4th batch, as a Fetch size limit cuts it. */
    build_varied(&out, 0, 300, 4);
    size_t full = out.len;
    out.len = ends[2] + 30;
    kn_records_iter it;
    kn_records_iter_init(&it, out.buf, out.len);
    kn_rb b;
    char es[256];
    int n = 0;
    int rc;
    while ((rc = kn_records_next(&it, &b, KN_RB_VERIFY_CRC, es, sizeof es)) == 1) {
        assert_true(b.h.base_offset == 100 * n);
        assert_int_equal(it.off, ends[n]);
        check_varied(b.batch, b.size, n * 2 % KN_CODEC_COUNT, 100 * n, 3 + n);
        n++;
    }
    assert_int_equal(rc, 0);
    assert_int_equal(n, 3);
    assert_true(it.partial);
    assert_int_equal(it.off, ends[2]);
    /* Whole blob: 4 batches, nothing partial. */
    kn_records_iter_init(&it, out.buf, full);
    for (n = 0; kn_records_next(&it, &b, KN_RB_VERIFY_CRC, es, sizeof es) == 1; n++)
        ;
    assert_int_equal(n, 4);
    assert_false(it.partial);
    assert_int_equal(it.off, full);
    /* A declared batch length below the header size is corrupt, not partial. */
    kn_wr_put_u32_at(out.buf + ends[0] + 8, 10);
    kn_records_iter_init(&it, out.buf, full);
    assert_int_equal(kn_records_next(&it, &b, 0, es, sizeof es), 1);
    assert_int_equal(kn_records_next(&it, &b, 0, es, sizeof es), KN_ERR__BAD_BATCH);
    assert_non_null(strstr(es, "record batch at offset 100"));
    kn_wr_free(&out);
}

/* Record-level corruption with a valid CRC: counts that disagree with
 * the bytes, lengths past the end, negative header key length. */
static void reseal(uint8_t *p, size_t n) { kn_wr_put_u32_at(p + 17, kn_crc32c(0, p + 21, n - 21)); }

static int iterate_all(uint8_t *p, size_t n, char *es, size_t esz) {
    kn_rb b;
    int rc = kn_rb_parse(&b, p, n, KN_RB_VERIFY_CRC, es, esz);
    if (rc)
        return rc;
    rc = kn_rb_records_begin(&b, &scratch, es, esz);
    if (rc)
        return rc;
    kn_record r;
    while ((rc = kn_rb_next(&b, &r, es, esz)) == 1)
        ;
    return rc;
}

static void test_record_corruption(void **state) {
    uint8_t buf[128];
    char es[256];
    size_t n = hand_batch(buf);
    assert_int_equal(iterate_all(buf, n, es, sizeof es), 0);
    /* recordCount 2 with one record's bytes */
    buf[60] = 2;
    reseal(buf, n);
    assert_int_equal(iterate_all(buf, n, es, sizeof es), KN_ERR__BAD_BATCH);
    assert_non_null(strstr(es, "record 1"));
    /* recordCount 0 with one record's bytes: trailing data */
    buf[60] = 0;
    reseal(buf, n);
    assert_int_equal(iterate_all(buf, n, es, sizeof es), KN_ERR__BAD_BATCH);
    assert_non_null(strstr(es, "left after"));
    buf[60] = 1;
    /* record length larger than the section */
    buf[61] = 0x7e;
    reseal(buf, n);
    assert_int_equal(iterate_all(buf, n, es, sizeof es), KN_ERR__BAD_BATCH);
    buf[61] = 0x18;
    /* header key length -1 */
    buf[71] = 0x01;
    reseal(buf, n);
    assert_int_equal(iterate_all(buf, n, es, sizeof es), KN_ERR__BAD_BATCH);
    assert_non_null(strstr(es, "negative key length"));
    buf[71] = 0x02;
    /* record length one less than its fields */
    buf[61] = 0x16;
    reseal(buf, n);
    assert_int_equal(iterate_all(buf, n, es, sizeof es), KN_ERR__BAD_BATCH);
    buf[61] = 0x18;
    /* negative record count */
    buf[57] = 0xff;
    reseal(buf, n);
    assert_int_equal(iterate_all(buf, n, es, sizeof es), KN_ERR__BAD_BATCH);
    assert_non_null(strstr(es, "negative record count"));
}

/* A compressed batch whose records decompress past the scratch cap. */
static void test_decompress_cap(void **state) {
    kn_wr out, small;
    kn_wr_init(&out, 0, 0);
    build_varied(&out, KN_CODEC_ZSTD, 9, 1000);
    kn_wr_init(&small, 0, 4096);
    kn_rb b;
    char es[256];
    assert_int_equal(kn_rb_parse(&b, out.buf, out.len, KN_RB_VERIFY_CRC, es, sizeof es), 0);
    assert_int_equal(kn_rb_records_begin(&b, &small, es, sizeof es), KN_ERR__BAD_BATCH);
    assert_non_null(strstr(es, "record batch at offset 9: zstd: decompressed data exceeds"));
    assert_int_equal(kn_rb_records_begin(&b, NULL, es, sizeof es), KN_ERR__INVALID_ARG);
    kn_wr_free(&small);
    kn_wr_free(&out);
}

/* Allocation failure at every point of building and decoding a gzip
 * batch: each call reports KN_ERR__NOMEM (or succeeds), nothing crashes
 * and nothing leaks (ASan build). */
static int alloc_countdown;
static void *fail_malloc(size_t n) { return alloc_countdown-- == 0 ? NULL : malloc(n); }
static void *fail_realloc(void *p, size_t n) {
    return alloc_countdown-- == 0 ? NULL : realloc(p, n);
}

static void test_alloc_failures(void **state) {
    kn_allocator a = {fail_malloc, fail_realloc, free};
    int saw_nomem = 0;
    for (int fail_at = 0; fail_at < 60; fail_at++) {
        kn_set_allocator(&a);
        alloc_countdown = fail_at;
        kn_rb_builder_conf c;
        kn_rb_builder_conf_init(&c);
        c.codec = KN_CODEC_GZIP;
        kn_rb_builder b;
        kn_rb_builder_init(&b, &c, 0);
        int rc = 0;
        for (int i = 0; i < 20 && rc == 0; i++)
            rc = kn_rb_builder_append(&b, i, i, B("key"), B("value value value"), NULL, 0);
        kn_wr out, scr;
        kn_wr_init(&out, 0, 0);
        kn_wr_init(&scr, 0, 1 << 20);
        char es[256];
        if (rc == 0)
            rc = kn_rb_builder_finish(&b, &out, es, sizeof es);
        if (rc == 0) {
            kn_rb rb;
            assert_int_equal(kn_rb_parse(&rb, out.buf, out.len, KN_RB_VERIFY_CRC, es, sizeof es), 0);
            rc = kn_rb_records_begin(&rb, &scr, es, sizeof es);
            kn_record r;
            int n = 0;
            while (rc == 0 && kn_rb_next(&rb, &r, es, sizeof es) == 1)
                n++;
            if (rc == 0)
                assert_int_equal(n, 20);
        }
        if (rc != 0) {
            assert_int_equal(rc, KN_ERR__NOMEM);
            saw_nomem++;
        }
        kn_set_allocator(NULL);
        kn_wr_free(&out);
        kn_wr_free(&scr);
        kn_rb_builder_free(&b);
    }
    assert_true(saw_nomem > 3);
}


/* Hostile base offsets wrap like Java's long arithmetic (found by the
 * fuzzer as signed overflow, undefined in C). */
static void test_offset_wraps(void **state) {
    kn_rb_builder_conf c;
    kn_rb_builder_conf_init(&c);
    c.base_offset = INT64_MIN;
    kn_rb_builder b;
    kn_rb_builder_init(&b, &c, 0);
    assert_int_equal(kn_rb_builder_append(&b, 5, INT64_MIN, B("k"), B("v"), NULL, 0), 0);
    assert_int_equal(kn_rb_builder_append(&b, 9, INT64_MAX, B("k"), B("v"), NULL, 0), 0);
    kn_wr out;
    kn_wr_init(&out, 0, 0);
    char es[256];
    assert_int_equal(kn_rb_builder_finish(&b, &out, es, sizeof es), 0);
    kn_rb_builder_free(&b);
    /* a negative offset delta, as only a corrupt batch would carry */
    kn_wr_put_u32_at(out.buf + 23, 0xfffffff0u);
    kn_rb rb;
    assert_int_equal(kn_rb_parse(&rb, out.buf, out.len, 0, es, sizeof es), 0);
    assert_true(kn_rb_last_offset(&rb) == INT64_MAX - 15);
    assert_int_equal(kn_rb_records_begin(&rb, NULL, es, sizeof es), 0);
    kn_record r;
    assert_int_equal(kn_rb_next(&rb, &r, es, sizeof es), 1);
    assert_true(r.offset == INT64_MIN + 5);
    assert_true(r.timestamp == INT64_MIN);
    assert_int_equal(kn_rb_next(&rb, &r, es, sizeof es), 1);
    assert_true(r.timestamp == INT64_MAX);
    assert_true(r.timestamp_delta == -1); /* wrapped delta */
    kn_wr_free(&out);
}


/* The encoder writes each record into room reserved for its computed
 * size: lengths, deltas and counts at every varint-length boundary must
 * come out as the reader reads them, and the sized append
 * (kn_rb_builder_append_body, the producer's) must write the same
 * bytes as the plain one. */
static void test_varint_boundaries_sized(void **state) {
    static const int32_t lens[] = {-1, 0, 1, 63, 64, 127, 128, 8191, 8192, 16383, 16384, 70000};
    static const int64_t tsd[] = {0, 63, 64, -65, 8191, 8192, 1LL << 35, -(1LL << 40)};
    size_t nl = sizeof lens / sizeof lens[0], nt = sizeof tsd / sizeof tsd[0];
    uint8_t *big = calloc(70000 + 2, 1); /* values start up to 2 bytes in */
    assert_non_null(big);
    for (size_t i = 0; i < 70000 + 2; i++)
        big[i] = (uint8_t)(i * 7);
    kn_rb_builder_conf c;
    kn_rb_builder_conf_init(&c);
    kn_rb_builder plain, sized;
    kn_rb_builder_init(&plain, &c, 0);
    kn_rb_builder_init(&sized, &c, 0);
    const int64_t base = 1700000000000LL;
    int32_t n = 0;
    for (size_t i = 0; i < nl; i++) {
        for (size_t j = 0; j < nt; j++) {
            int32_t kl = lens[(i + j) % nl] < 0 ? -1 : lens[(i + j) % nl] % 300;
            kn_bytes key = {kl < 0 ? NULL : big, kl};
            kn_bytes val = {lens[i] < 0 ? NULL : big + 1, lens[i]};
            kn_rb_kv h = {{"h", 1}, {big + 2, lens[j % nl]}};
            size_t nh = (i + j) % 2;
            int64_t ts = n == 0 ? base : base + tsd[j];
            int32_t od = n * 37; /* offset deltas crossing varint lengths */
            assert_int_equal(kn_rb_builder_append(&plain, od, ts, key, val, &h, nh), 0);
            int64_t d = n == 0 ? 0 : ts - base;
            size_t body = kn_rb_record_body_size(od, d, key, val, &h, nh);
            assert_int_equal(kn_varint_size((int64_t)body) + body, kn_rb_record_size(od, d, key, val, &h, nh));
            size_t before = sized.records.len;
            assert_int_equal(kn_rb_builder_append_body(&sized, od, ts, key, val, &h, nh, body), 0);
            assert_int_equal(sized.records.len - before, kn_varint_size((int64_t)body) + body);
            n++;
        }
    }
    assert_int_equal(plain.records.len, sized.records.len);
    assert_memory_equal(plain.records.buf, sized.records.buf, plain.records.len);
    kn_wr out;
    kn_wr_init(&out, 0, 0);
    char es[256];
    assert_int_equal(kn_rb_builder_finish(&sized, &out, es, sizeof es), 0);
    kn_rb rb;
    assert_int_equal(kn_rb_parse(&rb, out.buf, out.len, 0, es, sizeof es), 0);
    assert_int_equal(kn_rb_records_begin(&rb, NULL, es, sizeof es), 0);
    kn_record r;
    int32_t k = 0;
    for (size_t i = 0; i < nl; i++) {
        for (size_t j = 0; j < nt; j++, k++) {
            assert_int_equal(kn_rb_next(&rb, &r, es, sizeof es), 1);
            assert_true(r.offset == (int64_t)k * 37);
            assert_true(r.timestamp == (k == 0 ? base : base + tsd[j]));
            int32_t kl = lens[(i + j) % nl] < 0 ? -1 : lens[(i + j) % nl] % 300;
            assert_int_equal(r.key.len, kl);
            assert_int_equal(r.value.len, lens[i]);
            if (lens[i] > 0)
                assert_memory_equal(r.value.ptr, big + 1, (size_t)lens[i]);
            assert_int_equal(r.header_count, (int32_t)((i + j) % 2));
        }
    }
    assert_int_equal(kn_rb_next(&rb, &r, es, sizeof es), 0);
    kn_wr_free(&out);
    kn_rb_builder_free(&plain);
    kn_rb_builder_free(&sized);
    free(big);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_hand_built),
        cmocka_unit_test(test_round_trip_codecs),
        cmocka_unit_test(test_control_and_log_append_time),
        cmocka_unit_test(test_builder_rejects),
        cmocka_unit_test(test_truncation_every_byte),
        cmocka_unit_test(test_crc_corruption),
        cmocka_unit_test(test_old_magic_unsupported),
        cmocka_unit_test(test_records_blob),
        cmocka_unit_test(test_record_corruption),
        cmocka_unit_test(test_decompress_cap),
        cmocka_unit_test(test_alloc_failures),
        cmocka_unit_test(test_offset_wraps),
        cmocka_unit_test(test_varint_boundaries_sized),
    };
    int rc = cmocka_run_group_tests(tests, setup, teardown);
    kn_codec_thread_cleanup();
    return rc;
}
