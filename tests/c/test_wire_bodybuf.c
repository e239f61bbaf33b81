/*
 * test_wire_bodybuf.c: the response body buffers (core/wire/bodybuf.c):
 * small bodies are plain blocks, large ones are cached on free and
 * reused without a new allocation while a client holds the cache, the
 * cache keeps at most KNW_BODY_CACHE_SLOTS of the largest spares, and
 * the last release (or a free with no holder) returns everything.
 * Under AddressSanitizer it also checks that a cached spare, and a
 * reused body past its length, stay poisoned.
 */
#include "kn_test.h"

#include <stdlib.h>
#include <string.h>

#include "kafka_native.h"
#include "wire/bodybuf.h"

#if defined(__SANITIZE_ADDRESS__)
#define TEST_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define TEST_ASAN 1
#endif
#endif
#ifdef TEST_ASAN
#include <sanitizer/asan_interface.h>
#endif

static int mallocs, frees;
static void *count_malloc(size_t n) {
    mallocs++;
    return malloc(n);
}
static void count_free(void *p) {
    frees++;
    free(p);
}
static const kn_allocator counting = {count_malloc, NULL, count_free};

static int setup(void **state) {
    (void)state;
    mallocs = frees = 0;
    kn_set_allocator(&counting);
    return 0;
}
static int teardown(void **state) {
    (void)state;
    kn_set_allocator(NULL);
    return 0;
}

static size_t cached_count(void) {
    size_t n;
    knw_body_cache_stats(&n, NULL);
    return n;
}

static void test_small_bodies_are_not_cached(void **state) {
    (void)state;
    knw_body_cache_hold();
    uint8_t *b = knw_body_alloc(100);
    assert_non_null(b);
    memset(b, 0xab, 100);
    knw_body_free(b);
    assert_int_equal(cached_count(), 0);
    assert_int_equal(mallocs, 1);
    assert_int_equal(frees, 1);
    knw_body_free(NULL);
    assert_null(knw_body_alloc(0));
    knw_body_cache_release();
}

static void test_large_body_is_reused_without_allocating(void **state) {
    (void)state;
    knw_body_cache_hold();
    /* Capacities are rounded up to KNW_BODY_CACHE_MIN: this one to
     * 3 MiB, with room for a bit more. */
    size_t len = (3u << 20) - 100000;
    uint8_t *a = knw_body_alloc(len);
    assert_non_null(a);
    memset(a, 1, len);
    knw_body_free(a);
    assert_int_equal(cached_count(), 1);
    assert_int_equal(frees, 0);
    /* A slightly smaller and a slightly larger response (same rounded
     * capacity) both land in the spare. */
    uint8_t *b = knw_body_alloc(len - 1000);
    assert_ptr_equal(b, a);
    assert_int_equal(mallocs, 1);
    knw_body_free(b);
    uint8_t *c = knw_body_alloc(len + 1000);
    assert_ptr_equal(c, a);
    memset(c, 2, len + 1000);
    assert_int_equal(mallocs, 1);
    assert_int_equal(cached_count(), 0);
    /* Too big for the spare: a new block. */
    uint8_t *d = knw_body_alloc(len * 2);
    assert_non_null(d);
    assert_int_equal(mallocs, 2);
    knw_body_free(c);
    knw_body_free(d);
    assert_int_equal(cached_count(), 2);
    knw_body_cache_release();
    assert_int_equal(cached_count(), 0);
    assert_int_equal(frees, 2);
}

static void test_cache_keeps_the_largest_spares(void **state) {
    (void)state;
    knw_body_cache_hold();
    size_t sizes[] = {1u << 20, 4u << 20, 2u << 20};
    uint8_t *b[3];
    for (int i = 0; i < 3; i++)
        b[i] = knw_body_alloc(sizes[i]);
    for (int i = 0; i < 3; i++)
        knw_body_free(b[i]);
    size_t n, bytes;
    knw_body_cache_stats(&n, &bytes);
    assert_int_equal(n, KNW_BODY_CACHE_SLOTS);
    assert_int_equal(bytes, (4u << 20) + (2u << 20));
    assert_int_equal(frees, 1); /* the 1 MiB one */
    /* A request the 2 MiB spare fits takes it, not the 4 MiB one. */
    uint8_t *t = knw_body_alloc((2u << 20) - 5);
    assert_ptr_equal(t, b[2]);
    knw_body_free(t);
    knw_body_cache_release();
    assert_int_equal(frees, 3);
    assert_int_equal(mallocs, 3);
}

static void test_no_holder_means_no_cache(void **state) {
    (void)state;
    knw_body_cache_hold();
    knw_body_cache_hold();
    uint8_t *a = knw_body_alloc(1u << 20);
    knw_body_cache_release(); /* one holder left: the cache stays */
    knw_body_free(a);
    assert_int_equal(cached_count(), 1);
    knw_body_cache_release(); /* the last one empties it */
    assert_int_equal(cached_count(), 0);
    /* A body freed after the last client (records outliving their
     * consumer) goes straight back to the allocator. */
    uint8_t *late = knw_body_alloc(1u << 20);
    knw_body_free(late);
    assert_int_equal(cached_count(), 0);
    assert_int_equal(mallocs, frees);
}

#ifdef TEST_ASAN
static void test_spares_are_poisoned(void **state) {
    (void)state;
    knw_body_cache_hold();
    size_t len = (1u << 20) + 100;
    uint8_t *a = knw_body_alloc(len);
    assert_false(__asan_address_is_poisoned(a + len - 1));
    assert_true(__asan_address_is_poisoned(a + len + 64));
    knw_body_free(a);
    assert_true(__asan_address_is_poisoned(a));
    assert_true(__asan_address_is_poisoned(a + 4096));
    uint8_t *b = knw_body_alloc(1000 * 1000);
    assert_ptr_equal(b, a);
    assert_false(__asan_address_is_poisoned(b));
    assert_false(__asan_address_is_poisoned(b + 1000 * 1000 - 1));
    assert_true(__asan_address_is_poisoned(b + 1000 * 1000 + 64));
    knw_body_free(b);
    knw_body_cache_release();
}
#endif

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_small_bodies_are_not_cached, setup, teardown),
        cmocka_unit_test_setup_teardown(test_large_body_is_reused_without_allocating, setup, teardown),
        cmocka_unit_test_setup_teardown(test_cache_keeps_the_largest_spares, setup, teardown),
        cmocka_unit_test_setup_teardown(test_no_holder_means_no_cache, setup, teardown),
#ifdef TEST_ASAN
        cmocka_unit_test_setup_teardown(test_spares_are_poisoned, setup, teardown),
#endif
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
