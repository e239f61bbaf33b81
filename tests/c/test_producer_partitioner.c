/*
 * test_producer_partitioner.c: unit tests of the producer's partition
 * choice (core/producer/partitioner.c): keyed partitions against the
 * Java client's known answers, sticky switching rules, the adaptive
 * cumulative frequency table, availability and round-robin.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kn_test.h"
#include "producer/partitioner.h"

/* Keyed partitions of the fixed keys (byte i = i*7+3) equal the Java
 * client's toPositive(murmur2) % n for n = 1..64. */
static void test_keyed_matches_java(void **state) {
    (void)state;
    FILE *f = fopen(kn_test_source_path("tests/data/java-known-answers.txt"), "r");
    assert_non_null(f);
    char line[512];
    int in_section = 0, checked = 0;
    while (fgets(line, sizeof line, f)) {
        if (line[0] == '@') {
            in_section = strncmp(line, "@murmur2-fixed", 14) == 0;
            continue;
        }
        if (!in_section || line[0] == '#')
            continue;
        unsigned len, h, pos;
        if (sscanf(line, "%u %x %x", &len, &h, &pos) != 3)
            continue;
        uint8_t key[64];
        for (unsigned i = 0; i < len; i++)
            key[i] = (uint8_t)((i * 7 + 3) & 0xff);
        for (int32_t n = 1; n <= 64; n++) {
            assert_int_equal(knp_part_keyed(key, len, n), (int32_t)(pos % (unsigned)n));
            checked++;
        }
    }
    fclose(f);
    assert_int_equal(checked, 65 * 64);
}

/* Sticky: same partition until batch_size bytes with the switch
 * allowed; with the switch disallowed, until twice batch_size. */
static void test_sticky_switch_rules(void **state) {
    (void)state;
    knp_rng rng;
    knp_rng_seed(&rng, 42);
    knp_sticky s;
    knp_sticky_init(&s);
    int32_t avail[] = {0, 1, 2, 3, 4, 5, 6, 7};
    int32_t p = knp_sticky_peek(&s, &rng, avail, 8, 8);
    assert_true(p >= 0 && p < 8);
    /* 15 x 1000 bytes < 16384: no switch even when allowed. */
    for (int i = 0; i < 16; i++) {
        assert_int_equal(knp_sticky_peek(&s, &rng, avail, 8, 8), p);
        knp_sticky_update(&s, &rng, 1000, 16384, true, avail, 8, 8);
    }
    /* 16,000 produced; one more crosses batch.size with the switch disallowed: stays. */
    knp_sticky_update(&s, &rng, 1000, 16384, false, avail, 8, 8);
    assert_int_equal(s.current, p);
    assert_int_equal(s.produced_bytes, 17000);
    /* Reaching 2 x batch.size switches regardless (a new draw, counter reset). */
    knp_sticky_update(&s, &rng, 16000, 16384, false, avail, 8, 8);
    assert_int_equal(s.produced_bytes, 0);
    /* After a switch the next crossing with the switch allowed switches again. */
    int switches = 0, last = s.current;
    for (int round = 0; round < 200; round++) {
        knp_sticky_update(&s, &rng, 16384, 16384, true, avail, 8, 8);
        assert_int_equal(s.produced_bytes, 0);
        if (s.current != last)
            switches++;
        last = s.current;
    }
    /* A uniform draw among 8 repeats the same partition 1/8 of the time. */
    assert_true(switches > 150);
    knp_sticky_free(&s);
}

/* Only available partitions are chosen when there are any. */
static void test_sticky_available_only(void **state) {
    (void)state;
    knp_rng rng;
    knp_rng_seed(&rng, 7);
    knp_sticky s;
    knp_sticky_init(&s);
    int32_t avail[] = {2, 5};
    int seen2 = 0, seen5 = 0;
    for (int i = 0; i < 1000; i++) {
        knp_sticky_update(&s, &rng, 100, 50, true, avail, 2, 8);
        int32_t p = knp_sticky_peek(&s, &rng, avail, 2, 8);
        assert_true(p == 2 || p == 5);
        seen2 += p == 2;
        seen5 += p == 5;
    }
    assert_true(seen2 > 300 && seen5 > 300);
    /* No partition available: any of all. */
    knp_sticky_free(&s);
    knp_sticky_init(&s);
    int32_t p = knp_sticky_peek(&s, &rng, NULL, 0, 8);
    assert_true(p >= 0 && p < 8);
    knp_sticky_free(&s);
}

/* Java's documented example: queue sizes 0 3 1 -> table 4 5 8; draws
 * map 0..3 -> first, 4 -> second, 5..7 -> third. */
static void test_adaptive_table(void **state) {
    (void)state;
    knp_sticky s;
    knp_sticky_init(&s);
    int32_t q[] = {0, 3, 1};
    int32_t ids[] = {10, 11, 12};
    assert_int_equal(knp_sticky_load_stats(&s, q, ids, 3, 3), 0);
    assert_int_equal(s.len, 3);
    assert_int_equal(s.cft[0], 4);
    assert_int_equal(s.cft[1], 5);
    assert_int_equal(s.cft[2], 8);
    knp_rng rng;
    knp_rng_seed(&rng, 99);
    int counts[3] = {0, 0, 0};
    for (int i = 0; i < 80000; i++) {
        s.current = -1; /* force a new draw */
        int32_t p = knp_sticky_peek(&s, &rng, NULL, 0, 13);
        assert_true(p >= 10 && p <= 12);
        counts[p - 10]++;
    }
    /* Expected 40000, 10000, 30000. */
    assert_true(counts[0] > 38000 && counts[0] < 42000);
    assert_true(counts[1] > 9000 && counts[1] < 11000);
    assert_true(counts[2] > 28500 && counts[2] < 31500);

    /* Equal queues over every partition: back to uniform (no table). */
    int32_t eq[] = {2, 2, 2};
    assert_int_equal(knp_sticky_load_stats(&s, eq, ids, 3, 3), 0);
    assert_int_equal(s.len, 0);
    /* Equal queues but a partition excluded: the table stays. */
    int32_t eq2[] = {2, 2};
    assert_int_equal(knp_sticky_load_stats(&s, eq2, ids, 2, 3), 0);
    assert_int_equal(s.len, 2);
    assert_int_equal(s.cft[1], 2);
    /* A single-partition topic never uses stats. */
    int32_t one[] = {5};
    assert_int_equal(knp_sticky_load_stats(&s, one, ids, 1, 1), 0);
    assert_int_equal(s.len, 0);
    knp_sticky_free(&s);
}

static void test_round_robin(void **state) {
    (void)state;
    uint32_t c = 0;
    int32_t avail[] = {1, 3, 4};
    for (int i = 0; i < 9; i++)
        assert_int_equal(knp_part_round_robin(&c, avail, 3, 6), avail[i % 3]);
    c = 0;
    for (int i = 0; i < 12; i++)
        assert_int_equal(knp_part_round_robin(&c, NULL, 0, 6), i % 6);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_keyed_matches_java),
        cmocka_unit_test(test_sticky_switch_rules),
        cmocka_unit_test(test_sticky_available_only),
        cmocka_unit_test(test_adaptive_table),
        cmocka_unit_test(test_round_robin),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
