/*
 * test_codec.c: the compression codecs: round trips at several levels
 * and sizes, the output cap stopping decompression bombs, truncated and
 * corrupt input rejected without reading out of bounds, snappy's xerial
 * framing and raw blocks, lz4 frame flags Java requires, gzip members.
 */
#include "kn_test.h"

#include <pthread.h>
#include <snappy-c.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "codec/codec.h"

/* Semi-compressible deterministic data. */
static uint8_t *make_data(size_t n, uint32_t seed) {
    uint8_t *d = malloc(n ? n : 1);
    assert_non_null(d);
    uint32_t x = seed;
    for (size_t i = 0; i < n; i++) {
        x = x * 1103515245u + 12345u;
        d[i] = (x >> 24) < 64 ? (uint8_t)(x >> 16) : (uint8_t)("kafka-native "[i % 13]);
    }
    return d;
}

static void round_trip(const kn_codec *c, int level, const uint8_t *in, size_t n) {
    char es[256] = "";
    kn_wr z, u;
    kn_wr_init(&z, 0, 0);
    kn_wr_i8(&z, 0x55); /* codecs append after existing content */
    assert_int_equal(c->compress(in, n, level, &z, es, sizeof es), 0);
    assert_true(z.buf[0] == 0x55);
    kn_wr_init(&u, 0, n + 1);
    kn_wr_i8(&u, 0x66);
    int rc = c->decompress(z.buf + 1, z.len - 1, &u, es, sizeof es);
    if (rc)
        fail_msg("%s level %d size %zu: %s", c->name, level, n, es);
    assert_int_equal(u.len, n + 1);
    assert_true(u.buf[0] == 0x66);
    assert_memory_equal(u.buf + 1, in, n);
    kn_wr_free(&z);
    kn_wr_free(&u);
}

static void test_registry(void **state) {
    (void)state;
    static const char *names[] = {"none", "gzip", "snappy", "lz4", "zstd"};
    for (int i = 0; i < KN_CODEC_COUNT; i++) {
        const kn_codec *c = kn_codec_get(i);
        assert_non_null(c);
        assert_int_equal(c->id, i);
        assert_string_equal(c->name, names[i]);
        assert_ptr_equal(kn_codec_by_name(names[i]), c);
        assert_true(kn_codec_level_valid(c, c->level_default));
    }
    assert_null(kn_codec_get(5));
    assert_null(kn_codec_get(-1));
    assert_null(kn_codec_by_name("brotli"));
    assert_true(kn_codec_level_valid(&kn_codec_gzip, -1));
    assert_false(kn_codec_level_valid(&kn_codec_gzip, 0));
    assert_false(kn_codec_level_valid(&kn_codec_gzip, 10));
    assert_int_equal(kn_codec_lz4.level_default, 9);
    assert_false(kn_codec_level_valid(&kn_codec_lz4, 18));
    assert_int_equal(kn_codec_zstd.level_default, 3);
    assert_true(kn_codec_level_valid(&kn_codec_zstd, -131072));
    assert_false(kn_codec_level_valid(&kn_codec_zstd, 23));
}

static void test_round_trips(void **state) {
    (void)state;
    static const size_t sizes[] = {0, 1, 13, 1000, 32768, 32769, 65536, 65537, 300000};
    for (int id = 0; id < KN_CODEC_COUNT; id++) {
        const kn_codec *c = kn_codec_get(id);
        int levels[4] = {c->level_default, c->level_min, c->level_max, c->level_default};
        for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++) {
            uint8_t *d = make_data(sizes[s], (uint32_t)(s + 1));
            for (int l = 0; l < 3; l++) {
                /* zstd's extreme levels are slow and add nothing here */
                if (c->id == KN_CODEC_ZSTD && l > 0)
                    levels[l] = l == 1 ? -5 : 19;
                round_trip(c, levels[l], d, sizes[s]);
            }
            free(d);
        }
    }
}

/* 64 MiB of zeros compress to a few KiB; decoding into a 1 MiB cap must
 * stop at the cap, not allocate 64 MiB. */
static void test_bomb_capped(void **state) {
    (void)state;
    size_t big = (size_t)64 << 20;
    uint8_t *zeros = calloc(1, big);
    assert_non_null(zeros);
    for (int id = 1; id < KN_CODEC_COUNT; id++) {
        const kn_codec *c = kn_codec_get(id);
        char es[256] = "";
        kn_wr z, u;
        kn_wr_init(&z, 0, 0);
        assert_int_equal(c->compress(zeros, big, c->level_default, &z, es, sizeof es), 0);
        kn_wr_init(&u, 0, (size_t)1 << 20);
        assert_int_equal(c->decompress(z.buf, z.len, &u, es, sizeof es), KN_ERR__BAD_BATCH);
        assert_non_null(strstr(es, "cap"));
        assert_true(u.cap <= ((size_t)1 << 20));
        kn_wr_free(&z);
        kn_wr_free(&u);
    }
    free(zeros);
}

/* Every truncation and a flipped byte at every position either fails
 * cleanly or yields bounded output; never reads out of bounds (ASan). */
static void test_truncated_and_corrupt(void **state) {
    (void)state;
    size_t n = 5000;
    uint8_t *d = make_data(n, 7);
    for (int id = 1; id < KN_CODEC_COUNT; id++) {
        const kn_codec *c = kn_codec_get(id);
        char es[256];
        kn_wr z;
        kn_wr_init(&z, 0, 0);
        assert_int_equal(c->compress(d, n, c->level_default, &z, es, sizeof es), 0);
        int failures = 0;
        for (size_t cut = 0; cut < z.len; cut++) {
            uint8_t *t = malloc(cut ? cut : 1); /* exact size so ASan sees overreads */
            memcpy(t, z.buf, cut);
            kn_wr u;
            kn_wr_init(&u, 0, n);
            int rc = c->decompress(t, cut, &u, es, sizeof es);
            if (rc)
                failures++;
            else
                assert_true(u.len < n && (u.len == 0 || memcmp(u.buf, d, u.len) == 0));
            kn_wr_free(&u);
            free(t);
        }
        /* Only snappy's framing can end cleanly at a chunk boundary. */
        assert_true(failures >= (int)z.len - 2);
        for (size_t pos = 0; pos < z.len; pos++) {
            uint8_t *t = malloc(z.len);
            memcpy(t, z.buf, z.len);
            t[pos] ^= 0x5a;
            kn_wr u;
            kn_wr_init(&u, 0, n * 2);
            (void)c->decompress(t, z.len, &u, es, sizeof es);
            assert_true(u.len <= n * 2);
            kn_wr_free(&u);
            free(t);
        }
        kn_wr_free(&z);
    }
    free(d);
}

/* Raw snappy block (librdkafka style, no framing) decodes too; the
 * framing we write starts with xerial's header. */
static void test_snappy_framing(void **state) {
    (void)state;
    const char *msg = "hello hello hello hello snappy";
    size_t n = strlen(msg), clen = snappy_max_compressed_length(n);
    char *raw = malloc(clen);
    assert_int_equal(snappy_compress(msg, n, raw, &clen), SNAPPY_OK);
    char es[256];
    kn_wr u;
    kn_wr_init(&u, 0, 1024);
    assert_int_equal(kn_codec_snappy.decompress((uint8_t *)raw, clen, &u, es, sizeof es), 0);
    assert_int_equal(u.len, n);
    assert_memory_equal(u.buf, msg, n);
    kn_wr_free(&u);

    /* An empty raw block into an empty writer (found by the fuzzer:
     * NULL + 0 pointer arithmetic). */
    kn_wr_init(&u, 0, 1024);
    assert_int_equal(kn_codec_snappy.decompress((const uint8_t *)"\0", 1, &u, es, sizeof es), 0);
    assert_int_equal(u.len, 0);
    kn_wr_free(&u);

    /* Hand-built xerial stream: header + two chunks. */
    kn_wr x;
    kn_wr_init(&x, 0, 0);
    static const uint8_t hdr[16] = {0x82, 'S', 'N', 'A', 'P', 'P', 'Y', 0, 0, 0, 0, 1, 0, 0, 0, 1};
    kn_wr_raw(&x, hdr, 16);
    for (int i = 0; i < 2; i++) {
        kn_wr_i32(&x, (int32_t)clen);
        kn_wr_raw(&x, raw, clen);
    }
    kn_wr_init(&u, 0, 1024);
    assert_int_equal(kn_codec_snappy.decompress(x.buf, x.len, &u, es, sizeof es), 0);
    assert_int_equal(u.len, 2 * n);
    assert_memory_equal(u.buf + n, msg, n);
    kn_wr_free(&u);
    /* A chunk length pointing past the end is corrupt. */
    kn_wr_put_u32_at(x.buf + 16, 0x7fffffff);
    kn_wr_init(&u, 0, 1024);
    assert_int_equal(kn_codec_snappy.decompress(x.buf, x.len, &u, es, sizeof es),
                     KN_ERR__BAD_BATCH);
    kn_wr_free(&u);
    kn_wr_free(&x);

    kn_wr z;
    kn_wr_init(&z, 0, 0);
    assert_int_equal(kn_codec_snappy.compress((const uint8_t *)msg, n, 0, &z, es, sizeof es), 0);
    assert_memory_equal(z.buf, hdr, 16);
    kn_wr_free(&z);
    free(raw);
}

/* Java's Lz4BlockInputStream requires independent blocks and version 01:
 * FLG = 0x60 (no content size, no checksums), BD = 0x40 (64 KiB). */
static void test_lz4_frame_flags(void **state) {
    (void)state;
    char es[256];
    kn_wr z;
    kn_wr_init(&z, 0, 0);
    assert_int_equal(kn_codec_lz4.compress((const uint8_t *)"abcabcabc", 9, 9, &z, es, sizeof es),
                     0);
    static const uint8_t magic[4] = {0x04, 0x22, 0x4d, 0x18};
    assert_memory_equal(z.buf, magic, 4);
    assert_int_equal(z.buf[4], 0x60);
    assert_int_equal(z.buf[5], 0x40);
    kn_wr_free(&z);
}

/* Two gzip members back to back read as their concatenation. */
static void test_gzip_members(void **state) {
    (void)state;
    char es[256];
    kn_wr z, u;
    kn_wr_init(&z, 0, 0);
    assert_int_equal(kn_codec_gzip.compress((const uint8_t *)"abc", 3, 6, &z, es, sizeof es), 0);
    assert_true(z.buf[0] == 0x1f && z.buf[1] == 0x8b); /* gzip, not raw deflate */
    assert_int_equal(kn_codec_gzip.compress((const uint8_t *)"def", 3, 1, &z, es, sizeof es), 0);
    kn_wr_init(&u, 0, 100);
    assert_int_equal(kn_codec_gzip.decompress(z.buf, z.len, &u, es, sizeof es), 0);
    assert_int_equal(u.len, 6);
    assert_memory_equal(u.buf, "abcdef", 6);
    kn_wr_free(&z);
    kn_wr_free(&u);
}

/* zstd keeps a context pair per thread: several threads compressing
 * and decompressing at once must not share one. */
static void *zstd_worker(void *arg) {
    uint32_t seed = (uint32_t)(uintptr_t)arg;
    uint8_t *d = make_data(20000, seed);
    for (int i = 0; i < 50; i++)
        round_trip(&kn_codec_zstd, 1 + i % 5, d, 20000 - (size_t)i * 7);
    free(d);
    return NULL;
}

static void test_zstd_threads(void **state) {
    (void)state;
    pthread_t t[4];
    for (uintptr_t i = 0; i < 4; i++)
        assert_int_equal(pthread_create(&t[i], NULL, zstd_worker, (void *)(i + 1)), 0);
    for (int i = 0; i < 4; i++)
        assert_int_equal(pthread_join(t[i], NULL), 0);
    /* Reuse on this thread, then give the cached contexts back. */
    zstd_worker((void *)9);
    kn_codec_thread_cleanup();
    kn_codec_thread_cleanup();
    zstd_worker((void *)10);
    kn_codec_thread_cleanup();
}


int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_registry),
        cmocka_unit_test(test_round_trips),
        cmocka_unit_test(test_bomb_capped),
        cmocka_unit_test(test_truncated_and_corrupt),
        cmocka_unit_test(test_snappy_framing),
        cmocka_unit_test(test_lz4_frame_flags),
        cmocka_unit_test(test_gzip_members),
        cmocka_unit_test(test_zstd_threads),
    };
    int rc = cmocka_run_group_tests(tests, NULL, NULL);
    kn_codec_thread_cleanup();
    return rc;
}
