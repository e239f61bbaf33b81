/*
 * test_bench_check.c: the benchmark consumers' proof of reading
 * (bench/bench_check.h): the checksum against known answers computed by
 * an independent implementation (Python, in the comment below), so the
 * C, Java and Lua versions that bench/run compares share one definition;
 * a skipped or repeated offset is caught and named; a re-read pass that
 * differs from the first is a mismatch.
 *
 * Known answers (Python 3, mod 2^64, P = 0x100000001b3):
 *   fold(h, w) = ((h ^ w) * P) & M;  bytes: 8-byte LE words, zero-padded
 *   tail, then fold(len) (-1 for null); record h0 = 0xcbf29ce484222325
 *   record(key "k", value "0123456789")            = 0xaa0da9eb85865641
 *   + record(null, 10240 x 'x') + record("", null) = 0xdc954660545c698b
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "../../bench/bench_check.h"

static bench_check check; /* 32 KiB: static, not on the stack */

static void test_known_answers(void **state) {
    (void)state;
    static char big[10240];
    memset(&check, 0, sizeof check);
    memset(big, 'x', sizeof big);
    bench_check_record(&check, 0, 0, "k", 1, "0123456789", 10);
    assert_int_equal(check.sum, 0xaa0da9eb85865641ULL);
    bench_check_record(&check, 0, 1, NULL, 0, big, (int64_t)sizeof big);
    bench_check_record(&check, 0, 2, "", 0, NULL, 0);
    assert_int_equal(check.sum, 0xdc954660545c698bULL);
    assert_int_equal(check.records, 3);
    assert_int_equal(check.offset_errors, 0);
}

static void test_order_across_partitions_does_not_matter(void **state) {
    (void)state;
    static bench_check a, b;
    memset(&a, 0, sizeof a);
    memset(&b, 0, sizeof b);
    bench_check_record(&a, 0, 0, NULL, 0, "aa", 2);
    bench_check_record(&a, 1, 0, NULL, 0, "bb", 2);
    bench_check_record(&b, 1, 0, NULL, 0, "bb", 2);
    bench_check_record(&b, 0, 0, NULL, 0, "aa", 2);
    assert_int_equal(a.sum, b.sum);
}

static void test_skip_and_repeat_are_errors(void **state) {
    (void)state;
    memset(&check, 0, sizeof check);
    bench_check_record(&check, 3, 10, NULL, 0, "v", 1);
    bench_check_record(&check, 3, 11, NULL, 0, "v", 1);
    bench_check_record(&check, 5, 0, NULL, 0, "v", 1); /* another partition: its own line */
    assert_int_equal(check.offset_errors, 0);
    bench_check_record(&check, 3, 13, NULL, 0, "v", 1); /* 12 skipped */
    assert_int_equal(check.offset_errors, 1);
    assert_non_null(strstr(check.first_error, "partition 3: offset 13 after 11 (records skipped)"));
    memset(&check, 0, sizeof check);
    bench_check_record(&check, 0, 0, NULL, 0, "v", 1);
    bench_check_record(&check, 0, 1, NULL, 0, "v", 1);
    bench_check_record(&check, 0, 1, NULL, 0, "v", 1); /* 1 again */
    assert_int_equal(check.offset_errors, 1);
    assert_non_null(strstr(check.first_error, "records repeated"));
    assert_int_equal(bench_check_report(&check), 1);
}

static void test_a_pass_that_differs_is_a_mismatch(void **state) {
    (void)state;
    static bench_window w;
    memset(&w, 0, sizeof w);
    bench_window_record(&w, 0, 0, NULL, 0, "a", 1);
    assert_int_equal(bench_window_pass_done(&w, 1e9), 0); /* window too short: read again */
    bench_window_record(&w, 0, 0, NULL, 0, "a", 1);
    assert_int_equal(bench_window_pass_done(&w, 1e9), 0);
    assert_int_equal(w.mismatch, 0);
    bench_window_record(&w, 0, 0, NULL, 0, "b", 1);       /* another value this time */
    assert_int_equal(bench_window_pass_done(&w, 1e9), 1); /* stops */
    assert_int_equal(w.mismatch, 1);
    assert_int_equal(bench_window_report(&w), 1);
    assert_int_equal(w.passes, 3);
    assert_int_equal(w.records, 3);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_known_answers),
        cmocka_unit_test(test_order_across_partitions_does_not_matter),
        cmocka_unit_test(test_skip_and_repeat_are_errors),
        cmocka_unit_test(test_a_pass_that_differs_is_a_mismatch),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
