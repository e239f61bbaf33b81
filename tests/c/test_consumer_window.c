/*
 * test_consumer_window.c: the Fetch window (core/consumer/window.c): the
 * bytes-per-offset estimate, the backlog of one partition, the take
 * rule, and a sweep that applies the rule in rotation order the way the
 * fetcher does (knc_fetcher_tick): every partition with data waiting is
 * listed within a bounded number of Fetches, partitions at their log
 * end and unknown ones are listed until the window is full, and a
 * Fetch never lists less backlog than the target while more is known.
 */
#include "kn_test.h"

#include <stdint.h>
#include <string.h>

#include "consumer/window.h"

static void test_bpo(void **state) {
    (void)state;
    knc_bpo e = {0};
    /* no evidence yet: every backlog is unknown */
    assert_int_equal(knc_backlog_bytes(&e, 0, 100, 1 << 20), -1);
    knc_bpo_add(&e, 0, 0, 10);    /* empty slice */
    knc_bpo_add(&e, 500, 10, 10); /* no whole batch */
    assert_int_equal(e.offsets, 0);
    knc_bpo_add(&e, 2000, 0, 100); /* 20 bytes an offset */
    assert_int_equal(knc_backlog_bytes(&e, 0, 100, 1 << 20), 2000);
    assert_int_equal(knc_backlog_bytes(&e, 50, 100, 1 << 20), 1000);
    /* capped at max.partition.fetch.bytes, never below one byte */
    assert_int_equal(knc_backlog_bytes(&e, 0, 1000000, 4096), 4096);
    knc_bpo tiny = {1, 1000};
    assert_int_equal(knc_backlog_bytes(&tiny, 0, 1, 4096), 1);
    /* at or past the log end: nothing; unknown log end or position: -1 */
    assert_int_equal(knc_backlog_bytes(&e, 100, 100, 1 << 20), 0);
    assert_int_equal(knc_backlog_bytes(&e, 120, 100, 1 << 20), 0);
    assert_int_equal(knc_backlog_bytes(&e, 0, -1, 1 << 20), -1);
    assert_int_equal(knc_backlog_bytes(&e, -1, 100, 1 << 20), -1);
    /* the estimate follows a change of record size: after many
     * offsets at 200 bytes, the old 20 bytes no longer dominate */
    for (int i = 0; i < 100; i++)
        knc_bpo_add(&e, (size_t)200 * 100000, (int64_t)i * 100000, (int64_t)(i + 1) * 100000);
    assert_true(e.offsets <= (1 << 20));
    int64_t b = knc_backlog_bytes(&e, 0, 1000, 1 << 30);
    assert_true(b > 190 * 1000 && b <= 200 * 1000);
}

static void test_take(void **state) {
    (void)state;
    int64_t listed = 0;
    assert_true(knc_window_take(&listed, 100, 60));
    assert_int_equal(listed, 60);
    assert_true(knc_window_take(&listed, 100, 0));  /* at its log end: free while open */
    assert_true(knc_window_take(&listed, 100, 60)); /* below the target: joins */
    assert_int_equal(listed, 120);
    assert_false(knc_window_take(&listed, 100, 1));
    assert_false(knc_window_take(&listed, 100, 0)); /* closed: waits its turn */
    assert_true(knc_window_take(&listed, 100, -1)); /* unknown: always */
    assert_int_equal(listed, 120);
}

/* One Fetch over n partitions from start, as the fetcher plans it:
 * listed[i] set for the partitions taken; returns where the next Fetch
 * starts (the first partition left out, else start + 1). */
static size_t plan(const int64_t *backlog, size_t n, size_t start, int64_t target, bool *listed) {
    int64_t sum = 0;
    size_t cut = n;
    for (size_t k = 0; k < n; k++) {
        size_t i = (start + k) % n;
        listed[i] = knc_window_take(&sum, target, backlog[i]);
        if (!listed[i] && cut == n)
            cut = k;
    }
    return (start + (cut < n ? cut : 1)) % n;
}

static void test_sweep(void **state) {
    (void)state;
    enum { N = 1000 };
    static int64_t backlog[N];
    static bool listed[N];
    static int seen[N];
    /* every partition has 86 KB waiting, a Fetch carries 3 MB: the
     * window holds ~70 and 15 Fetches list all of them */
    for (int i = 0; i < N; i++)
        backlog[i] = 86000;
    int64_t target = 2 * 3 * 1048576;
    size_t start = 0;
    memset(seen, 0, sizeof seen);
    for (int f = 0; f < 15; f++) {
        start = plan(backlog, N, start, target, listed);
        int count = 0;
        int64_t sum = 0;
        for (int i = 0; i < N; i++)
            if (listed[i]) {
                seen[i]++;
                count++;
                sum += backlog[i];
            }
        assert_true(sum >= target);
        assert_true(count < 80);
    }
    for (int i = 0; i < N; i++)
        assert_true(seen[i] >= 1);

    /* most partitions at their log end, a few with data: the window
     * still reaches past every idle one up to the data it needs */
    for (int i = 0; i < N; i++)
        backlog[i] = i % 100 == 7 ? 1048576 : 0;
    memset(seen, 0, sizeof seen);
    start = 0;
    for (int f = 0; f < 4; f++) {
        start = plan(backlog, N, start, target, listed);
        int64_t sum = 0;
        for (int i = 0; i < N; i++)
            if (listed[i]) {
                seen[i]++;
                sum += backlog[i];
            }
        assert_true(sum >= target);
    }
    for (int i = 0; i < N; i++)
        assert_true(seen[i] >= 1);

    /* nothing known to be waiting: one Fetch lists everything (the
     * long poll covers every partition) */
    for (int i = 0; i < N; i++)
        backlog[i] = i % 2 ? 0 : -1;
    start = plan(backlog, N, 123, target, listed);
    assert_int_equal(start, 124);
    for (int i = 0; i < N; i++)
        assert_true(listed[i]);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_bpo),
        cmocka_unit_test(test_take),
        cmocka_unit_test(test_sweep),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
