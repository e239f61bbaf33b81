/*
 * test_crc32c.c: CRC-32C known answers (RFC 3720 vectors and the
 * Java-produced values in tests/data/java-known-answers.txt), and the
 * SSE4.2 and table paths agreeing on every length and alignment.
 */
#include "kn_test.h"
#include "known_answers.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "crc32c.h"

typedef uint32_t (*crc_fn)(uint32_t, const void *, size_t);

static void check_standard_vectors(crc_fn fn) {
    uint8_t buf[48];
    assert_true(fn(0, "123456789", 9) == 0xE3069283u);
    assert_true(fn(0, "", 0) == 0);
    /* RFC 3720 appendix B.4 */
    memset(buf, 0, 32);
    assert_true(fn(0, buf, 32) == 0x8A9136AAu);
    memset(buf, 0xff, 32);
    assert_true(fn(0, buf, 32) == 0x62A8AB43u);
    for (int i = 0; i < 32; i++)
        buf[i] = (uint8_t)i;
    assert_true(fn(0, buf, 32) == 0x46DD794Eu);
    for (int i = 0; i < 32; i++)
        buf[i] = (uint8_t)(31 - i);
    assert_true(fn(0, buf, 32) == 0x113FDB5Cu);
    /* Chaining equals one pass. */
    assert_true(fn(fn(0, "12345", 5), "6789", 4) == 0xE3069283u);
}

static void test_sw_known(void **state) {
    (void)state;
    check_standard_vectors(kn_crc32c_sw);
    check_standard_vectors(kn_crc32c);
}

static void test_hw_known(void **state) {
    (void)state;
#if defined(__x86_64__)
    /* Every x86-64 CI machine has SSE4.2: the fast path must be tested,
     * not silently skipped. */
    assert_true(kn_crc32c_hw_available());
#endif
    if (kn_crc32c_hw_available())
        check_standard_vectors(kn_crc32c_hw);
}

/* Lengths that cross both interleave block sizes (3*256, 3*8192) and
 * every start alignment must agree between the two paths. */
static void test_paths_agree(void **state) {
    (void)state;
    size_t n = 3 * 8192 * 2 + 1000;
    uint8_t *buf = malloc(n + 16);
    assert_non_null(buf);
    uint32_t x = 12345;
    for (size_t i = 0; i < n + 16; i++) {
        x = x * 1103515245u + 12345u;
        buf[i] = (uint8_t)(x >> 16);
    }
    static const size_t lens[] = {0,    1,    7,    8,    9,     63,    64,    255,   256,   767,
                                  768,  769,  1000, 4096, 24575, 24576, 24577, 24583, 30000, 50152};
    for (size_t a = 0; a < 8; a++)
        for (size_t i = 0; i < sizeof lens / sizeof lens[0]; i++) {
            size_t len = lens[i] <= n ? lens[i] : n;
            uint32_t s = kn_crc32c_sw(0, buf + a, len);
            assert_true(kn_crc32c_hw(0, buf + a, len) == s);
            assert_true(kn_crc32c(0, buf + a, len) == s);
            /* split anywhere */
            size_t cut = len / 3;
            assert_true(kn_crc32c(kn_crc32c(0, buf + a, cut), buf + a + cut, len - cut) == s);
        }
    for (size_t len = 0; len < 2000; len++)
        assert_true(kn_crc32c_hw(7, buf + 3, len) == kn_crc32c_sw(7, buf + 3, len));
    free(buf);
}

/* Java's Crc32C.compute over fixed keys, LCG streams and 100,000 LCG
 * keys (folded), through every path. */
static void test_java_known_answers(void **state) {
    (void)state;
    crc_fn fns[3] = {kn_crc32c, kn_crc32c_sw, kn_crc32c_hw};
    int nfn = kn_crc32c_hw_available() ? 3 : 2;
    uint8_t key[64];
    int count, checked = 0;
    FILE *f = ka_open_section("crc32c-fixed", &count);
    assert_int_equal(count, 65);
    for (int i = 0; i < count; i++) {
        unsigned len, want;
        assert_int_equal(fscanf(f, "%u %x", &len, &want), 2);
        ka_fixed_key(key, len);
        for (int k = 0; k < nfn; k++)
            assert_true(fns[k](0, key, len) == want);
        checked++;
    }
    fclose(f);

    f = ka_open_section("crc32c-stream", &count);
    for (int i = 0; i < count; i++) {
        unsigned long n;
        unsigned want;
        assert_int_equal(fscanf(f, "%lu %x", &n, &want), 2);
        uint8_t *buf = malloc(n ? n : 1);
        assert_non_null(buf);
        uint64_t x = KA_LCG_START;
        for (unsigned long b = 0; b < n; b++)
            buf[b] = (uint8_t)(ka_step(&x) >> 56);
        for (int k = 0; k < nfn; k++)
            assert_true(fns[k](0, buf, n) == want);
        /* streamed in uneven pieces, as a batch is checked in parts */
        uint32_t c = 0;
        for (unsigned long off = 0, step = 1; off < n; off += step, step = step * 3 + 1)
            c = kn_crc32c(c, buf + off, off + step <= n ? step : n - off);
        assert_true(c == want);
        free(buf);
        checked++;
    }
    fclose(f);

    f = ka_open_section("crc32c-lcg", &count);
    unsigned nkeys;
    unsigned long long want_fold;
    assert_int_equal(fscanf(f, "%u %llx", &nkeys, &want_fold), 2);
    fclose(f);
    for (int k = 0; k < nfn; k++) {
        uint64_t x = KA_LCG_START, fold = 0;
        for (unsigned i = 0; i < nkeys; i++) {
            size_t len = ka_lcg_key(&x, key);
            fold = fold * 31 + fns[k](0, key, len);
        }
        assert_true(fold == want_fold);
    }
    checked++;
    assert_int_equal(checked, 65 + 5 + 1);
}


int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_sw_known),
        cmocka_unit_test(test_hw_known),
        cmocka_unit_test(test_paths_agree),
        cmocka_unit_test(test_java_known_answers),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
