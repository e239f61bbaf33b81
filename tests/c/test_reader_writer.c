/*
 * test_reader_writer.c: the bounds-checked reader and capped writer:
 * round trips, varint edge cases, sticky errors with offsets.
 */
#include "kn_test.h"

#include <string.h>

#include "arena.h"
#include "kn_alloc.h"
#include "reader.h"
#include "writer.h"

static void test_round_trip(void **state) {
    kn_wr w;
    kn_wr_init(&w, 0, 0);
    kn_wr_i8(&w, -5);
    kn_wr_i16(&w, -300);
    kn_wr_i32(&w, 0x12345678);
    kn_wr_i64(&w, -1234567890123LL);
    kn_wr_varint(&w, -1);
    kn_wr_varlong(&w, INT64_MIN);
    kn_wr_uvarint(&w, UINT32_MAX);
    kn_wr_string(&w, kn_str_c("hello"));
    kn_wr_string(&w, (kn_str){NULL, -1});
    kn_wr_compact_string(&w, kn_str_c(""));
    kn_wr_compact_bytes(&w, (kn_bytes){NULL, -1});
    assert_true(kn_wr_ok(&w));

    kn_rd r;
    kn_rd_init(&r, w.buf, w.len);
    assert_int_equal(kn_rd_i8(&r), -5);
    assert_int_equal(kn_rd_i16(&r), -300);
    assert_int_equal(kn_rd_i32(&r), 0x12345678);
    assert_true(kn_rd_i64(&r) == -1234567890123LL);
    assert_int_equal(kn_rd_varint(&r), -1);
    assert_true(kn_rd_varlong(&r) == INT64_MIN);
    assert_true(kn_rd_uvarint(&r) == UINT32_MAX);
    assert_true(kn_str_eq(kn_rd_string(&r), "hello"));
    assert_int_equal(kn_rd_string(&r).len, -1);
    kn_str e = kn_rd_compact_string(&r);
    assert_int_equal(e.len, 0);
    assert_int_equal(kn_rd_compact_bytes(&r).len, -1);
    assert_true(kn_rd_ok(&r));
    assert_int_equal(kn_rd_remaining(&r), 0);
    kn_wr_free(&w);
}

static void test_varint_known_bytes(void **state) {
    /* Zigzag: 0->0, -1->1, 1->2, -64 -> 127 (one byte), 64 -> 128 (two). */
    const struct {
        int32_t v;
        uint8_t bytes[5];
        size_t n;
    } cases[] = {{0, {0x00}, 1}, {-1, {0x01}, 1}, {1, {0x02}, 1}, {-64, {0x7f}, 1},
                 {64, {0x80, 0x01}, 2}, {INT32_MAX, {0xfe, 0xff, 0xff, 0xff, 0x0f}, 5},
                 {INT32_MIN, {0xff, 0xff, 0xff, 0xff, 0x0f}, 5}};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        kn_wr w;
        kn_wr_init(&w, 0, 0);
        kn_wr_varint(&w, cases[i].v);
        assert_int_equal(w.len, cases[i].n);
        assert_memory_equal(w.buf, cases[i].bytes, cases[i].n);
        assert_int_equal(kn_varint_size(cases[i].v), cases[i].n);
        kn_wr_free(&w);
    }
}

/* kn_uvarint_size computes the length without a loop: at every 7-bit
 * boundary it must match what the writer actually writes. */
static void test_varint_size_boundaries(void **state) {
    for (int bits = 0; bits <= 64; bits++) {
        uint64_t top = bits == 64 ? UINT64_MAX : ((uint64_t)1 << bits) - 1;
        uint64_t vals[] = {top, top + 1, top ? top - 1 : 0};
        for (size_t i = 0; i < 3; i++) {
            kn_wr w;
            kn_wr_init(&w, 0, 0);
            kn_wr_uvarlong(&w, vals[i]);
            assert_int_equal(kn_uvarint_size(vals[i]), w.len);
            kn_wr_free(&w);
            kn_wr_init(&w, 0, 0);
            kn_wr_varlong(&w, (int64_t)vals[i]);
            assert_int_equal(kn_varint_size((int64_t)vals[i]), w.len);
            kn_wr_free(&w);
        }
    }
}

static void test_truncated_is_sticky_with_offset(void **state) {
    const uint8_t buf[] = {0x00, 0x05, 'a', 'b'}; /* string says 5, has 2 */
    kn_rd r;
    kn_rd_init(&r, buf, sizeof buf);
    kn_str s = kn_rd_string(&r);
    assert_int_equal(s.len, -1);
    assert_false(kn_rd_ok(&r));
    assert_int_equal(r.err, KN_ERR__PROTOCOL);
    assert_int_equal(r.err_off, 2);
    assert_non_null(r.err_what);
    /* Later reads return zero and keep the first error's offset. */
    assert_int_equal(kn_rd_i32(&r), 0);
    assert_int_equal(r.err_off, 2);
}

static void test_overlong_varint(void **state) {
    const uint8_t buf[] = {0xff, 0xff, 0xff, 0xff, 0xff, 0x01};
    kn_rd r;
    kn_rd_init(&r, buf, sizeof buf);
    (void)kn_rd_uvarint(&r);
    assert_false(kn_rd_ok(&r));
}

static void test_negative_length_bytes_is_null_not_huge(void **state) {
    const uint8_t buf[] = {0x80, 0x00, 0x00, 0x00}; /* INT32_MIN */
    kn_rd r;
    kn_rd_init(&r, buf, sizeof buf);
    kn_bytes b = kn_rd_bytes(&r);
    assert_true(b.len < 0);
    assert_true(kn_rd_ok(&r));
    const uint8_t big[] = {0x7f, 0xff, 0xff, 0xff};
    kn_rd_init(&r, big, sizeof big);
    b = kn_rd_bytes(&r);
    assert_false(kn_rd_ok(&r));
}

static void test_writer_cap(void **state) {
    kn_wr w;
    kn_wr_init(&w, 0, 8);
    kn_wr_i64(&w, 1);
    assert_true(kn_wr_ok(&w));
    kn_wr_i8(&w, 1);
    assert_int_equal(w.err, KN_ERR__INVALID_ARG);
    assert_int_equal(w.len, 8);
    kn_wr_free(&w);
}

static void test_arena(void **state) {
    kn_arena a;
    kn_arena_init(&a, 128);
    for (int i = 0; i < 100; i++) {
        int *p = kn_arena_calloc(&a, 10, sizeof(int));
        assert_non_null(p);
        assert_int_equal(p[9], 0);
        p[9] = i;
    }
    assert_non_null(kn_arena_alloc(&a, 100000));
    assert_null(kn_arena_calloc(&a, SIZE_MAX / 2, 4));
    kn_arena_destroy(&a);
}

static void test_error_names(void **state) {
    assert_string_equal(kn_err_name(3), "UNKNOWN_TOPIC_OR_PARTITION");
    assert_string_equal(kn_err_name(KN_ERR__TIMED_OUT), "_TIMED_OUT");
    assert_true(kn_err_is_retriable(KN_ERR_NOT_LEADER_OR_FOLLOWER));
    assert_false(kn_err_is_retriable(KN_ERR_TOPIC_AUTHORIZATION_FAILED));
    assert_string_equal(kn_err_name(99999), "UNKNOWN_ERROR_CODE");
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_round_trip),
        cmocka_unit_test(test_varint_known_bytes),
        cmocka_unit_test(test_varint_size_boundaries),
        cmocka_unit_test(test_truncated_is_sticky_with_offset),
        cmocka_unit_test(test_overlong_varint),
        cmocka_unit_test(test_negative_length_bytes_is_null_not_huge),
        cmocka_unit_test(test_writer_cap),
        cmocka_unit_test(test_arena),
        cmocka_unit_test(test_error_names),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
