/*
 * test_murmur2.c: Kafka's murmur2 and default key partitioning against
 * Java's published test values and the Java-produced known answers in
 * tests/data/java-known-answers.txt.
 */
#include "kn_test.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "murmur2.h"

static void test_java_unit_values(void **state) {
    (void)state;
    /* Values from Kafka's UtilsTest.testMurmur2 (Java ints). */
    static const struct {
        const char *key;
        int32_t h;
    } cases[] = {
        {"21", -973932308},
        {"foobar", -790332482},
        {"a-little-bit-long-string", -985981536},
        {"a-little-bit-longer-string", -1486304829},
        {"lkjh234lh9fiuh90y23oiuhsafujhadof229phr9h19h89h8", -58897971},
        {"abc", 479470107},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        assert_int_equal((int32_t)kn_murmur2(cases[i].key, strlen(cases[i].key)), cases[i].h);
}

static void test_partition(void **state) {
    (void)state;
    /* -973932308 & 0x7fffffff = 1173551340 */
    assert_int_equal(kn_murmur2_partition("21", 2, 1), 0);
    assert_int_equal(kn_murmur2_partition("21", 2, 7), 1173551340 % 7);
    assert_int_equal(kn_murmur2_partition("21", 2, 0), 0);
    for (int n = 1; n <= 64; n++) {
        int32_t p = kn_murmur2_partition("foobar", 6, n);
        assert_true(p >= 0 && p < n);
    }
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_java_unit_values),
        cmocka_unit_test(test_partition),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
