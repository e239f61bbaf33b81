/*
 * test_crc32c.c: CRC-32C known answers (RFC 3720 vectors and the
 * Java-produced values in tests/data/java-known-answers.txt), and the
 * SSE4.2 and table paths agreeing on every length and alignment.
 */
#include "kn_test.h"

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

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_sw_known),
        cmocka_unit_test(test_hw_known),
        cmocka_unit_test(test_paths_agree),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
