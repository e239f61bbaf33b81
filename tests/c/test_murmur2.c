/*
 * test_murmur2.c: Kafka's murmur2 and default key partitioning against
 * Java's published test values and the Java-produced known answers in
 * tests/data/java-known-answers.txt.
 */
#include "kn_test.h"
#include "known_answers.h"

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

/* Java's Utils.murmur2 for fixed keys of every length 0..64. */
static void test_java_fixed_keys(void **state) {
    (void)state;
    uint8_t key[64];
    int count;
    FILE *f = ka_open_section("murmur2-fixed", &count);
    assert_int_equal(count, 65);
    for (int i = 0; i < count; i++) {
        unsigned len, h, pos;
        assert_int_equal(fscanf(f, "%u %x %x", &len, &h, &pos), 3);
        assert_int_equal(len, i);
        ka_fixed_key(key, len);
        assert_true(kn_murmur2(key, len) == h);
        assert_true((kn_murmur2(key, len) & 0x7fffffffu) == pos);
    }
    fclose(f);
}

/* 100,000 LCG keys: each hash, then the partition for n = 1..64 summed
 * and folded exactly as BuiltInPartitioner.partitionForKey picks it. */
static void test_java_lcg_keys(void **state) {
    (void)state;
    int count;
    FILE *f = ka_open_section("murmur2-lcg", &count);
    assert_int_equal(count, 100000);
    uint8_t(*keys)[64] = malloc((size_t)count * 64);
    uint8_t *lens = malloc((size_t)count);
    assert_non_null(keys);
    assert_non_null(lens);
    uint64_t x = KA_LCG_START;
    for (int k = 0; k < count; k++) {
        unsigned h;
        lens[k] = (uint8_t)ka_lcg_key(&x, keys[k]);
        assert_int_equal(fscanf(f, "%x", &h), 1);
        if (kn_murmur2(keys[k], lens[k]) != h)
            fail_msg("LCG key %d (len %u): murmur2 %08x, Java %08x", k, lens[k],
                     kn_murmur2(keys[k], lens[k]), h);
    }
    fclose(f);

    int nparts;
    f = ka_open_section("partition-lcg", &nparts);
    assert_int_equal(nparts, 64);
    for (int i = 0; i < nparts; i++) {
        int n;
        unsigned long long want_sum, want_fold;
        assert_int_equal(fscanf(f, "%d %llu %llx", &n, &want_sum, &want_fold), 3);
        uint64_t sum = 0, fold = 0;
        for (int k = 0; k < count; k++) {
            int32_t p = kn_murmur2_partition(keys[k], lens[k], n);
            assert_true(p >= 0 && p < n);
            sum += (uint64_t)p;
            fold = fold * 31 + (uint64_t)p;
        }
        if (sum != want_sum || fold != want_fold)
            fail_msg("n=%d: sum %llu fold %016llx, Java %llu %016llx", n, (unsigned long long)sum,
                     (unsigned long long)fold, want_sum, want_fold);
    }
    fclose(f);
    free(keys);
    free(lens);
}


int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_java_unit_values),
        cmocka_unit_test(test_partition),
        cmocka_unit_test(test_java_fixed_keys),
        cmocka_unit_test(test_java_lcg_keys),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
