/*
 * test_metrics_wstat.c: the windowed statistic (core/metrics/wstat.h)
 * and the registry's views (core/metrics/metrics.h), on a fake clock:
 * rates over the live samples with Java's minimum window, averages and
 * maxima that forget old samples (NaN when empty), cumulative totals
 * that do not, and the registry's groups, tags and gauges.
 */
#include "kn_test.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "metrics/metrics.h"
#include "metrics/wstat.h"

static void test_rate_and_totals(void **state) {
    (void)state;
    kn_wstat w;
    kn_wstat_init(&w, 1000, 2, 0);
    /* 10 values of 5 within the first window. */
    for (int i = 0; i < 10; i++)
        kn_wstat_record(&w, 5, 100 * i);
    /* Young stat: 0.9 s elapsed, less than (2 - 1) full windows, so
     * one more window is added (Java's Rate.windowSize): 1.9 s. */
    assert_true(fabs(kn_wstat_rate(&w, 900) - 50.0 / 1.9) < 1e-9);
    assert_true(fabs(kn_wstat_count_rate(&w, 900) - 10.0 / 1.9) < 1e-9);
    assert_true(w.total == 50 && w.total_count == 10);
    /* At 1.5 s: 1.5 s elapsed since the oldest sample. */
    assert_true(fabs(kn_wstat_rate(&w, 1500) - 50.0 / 1.5) < 1e-9);
    /* Two windows later the first sample is forgotten, totals are not. */
    assert_true(kn_wstat_rate(&w, 2000) == 0);
    assert_true(w.total == 50 && w.total_count == 10);
}

static void test_avg_max_min_forget(void **state) {
    (void)state;
    kn_wstat w;
    kn_wstat_init(&w, 1000, 2, 0);
    assert_true(isnan(kn_wstat_avg(&w, 0)));
    assert_true(isnan(kn_wstat_max(&w, 0)));
    assert_true(isnan(kn_wstat_min(&w, 0)));
    kn_wstat_record(&w, 100, 10);
    kn_wstat_record(&w, 2, 20);
    kn_wstat_record(&w, 6, 1100); /* second sample */
    assert_true(kn_wstat_max(&w, 1200) == 100);
    assert_true(kn_wstat_min(&w, 1200) == 2);
    assert_true(fabs(kn_wstat_avg(&w, 1200) - 36.0) < 1e-9);
    /* At 2.0 s the first sample (began at 0) is 2 windows old: gone. */
    assert_true(kn_wstat_max(&w, 2000) == 6);
    assert_true(kn_wstat_avg(&w, 2000) == 6);
    /* A value recorded after both expired starts afresh. */
    kn_wstat_record(&w, 0, 5000);
    assert_true(kn_wstat_max(&w, 5000) == 0);
    assert_true(isnan(kn_wstat_max(&w, 8000)));
    assert_true(w.last == 0 && w.total_count == 4);
}

static void test_sample_count_clamped(void **state) {
    (void)state;
    kn_wstat w;
    kn_wstat_init(&w, 0, 1000, 0);
    assert_int_equal(w.n, KN_WSTAT_MAX_SAMPLES);
    assert_true(w.window_ms == 1);
    kn_wstat_init(&w, 10, 0, 0);
    assert_int_equal(w.n, 1);
}

/* ---- registry ---- */

static const knm_stat_def stats[] = {
    {"thing-rate", "things per second", KNM_RATE},
    {"thing-total", "things", KNM_TOTAL},
    {"thing-max", "largest thing", KNM_MAX},
};
static const knm_sensor_def def_main = {"-metrics", NULL, NULL, stats, 3};
static const knm_sensor_def def_topic = {"demo-topic-metrics", "topic", "partition", stats, 3};

typedef struct seen {
    int n;
    char lines[16][200];
} seen;

static void visit(void *ctx, const kn_metric_view *v) {
    seen *s = ctx;
    assert_true(s->n < 16);
    char *line = s->lines[s->n++];
    int len = snprintf(line, 200, "%s/%s=%g%s", v->group, v->name, v->value,
                       v->kind == KN_METRIC_SUM ? "(sum)" : "");
    for (size_t i = 0; i < v->n_tags; i++)
        len += snprintf(line + len, (size_t)(200 - len), " %s:%s", v->tags[i].key, v->tags[i].value);
}

static void provide(void *opaque, knm_snap *snap, int64_t now_ms) {
    (void)now_ms;
    kn_metrics *m = opaque;
    char topic[] = "t-gone"; /* copied: the view outlives this buffer */
    knm_emit(snap, knm_group(m, "-metrics"), "gauge-now", "a gauge", KN_METRIC_GAUGE, 7, "topic",
             topic, NULL, NULL);
    topic[0] = 'X';
}

static void test_registry_views(void **state) {
    (void)state;
    kn_metrics *m = knm_new("demo", "cid-1", 30000, 2);
    assert_non_null(m);
    knm_sensor *a = knm_sensor_get(m, &def_main, NULL, NULL);
    knm_sensor *b = knm_sensor_get(m, &def_topic, "t1", "0");
    assert_ptr_equal(knm_sensor_get(m, &def_main, NULL, NULL), a);
    assert_ptr_equal(knm_sensor_get(m, &def_topic, "t1", "0"), b);
    assert_ptr_not_equal(knm_sensor_get(m, &def_topic, "t1", "1"), b);
    int64_t now = knm_now_ms();
    knm_record(m, a, 3, now);
    knm_record(m, a, 4, now);
    knm_record(m, b, 9, now);
    knm_record(m, NULL, 1, now); /* no sensor: nothing */
    assert_int_equal(knm_provider_add(m, provide, m), 0);
    seen s = {0};
    assert_int_equal(knm_visit(m, visit, &s), KN_OK);
    /* 3 sensors x 3 metrics + 1 gauge. */
    assert_int_equal(s.n, 10);
    assert_true(strstr(s.lines[1], "demo-metrics/thing-total=7(sum) client-id:cid-1") == s.lines[1]);
    assert_true(strstr(s.lines[2], "demo-metrics/thing-max=4 client-id:cid-1") == s.lines[2]);
    assert_string_equal(s.lines[4], "demo-topic-metrics/thing-total=9(sum) client-id:cid-1 topic:t1 partition:0");
    assert_string_equal(s.lines[9], "demo-metrics/gauge-now=7 client-id:cid-1 topic:t-gone");
    /* Hidden sensors are left out. */
    knm_sensor_hide(m, b, true);
    s.n = 0;
    assert_int_equal(knm_visit(m, visit, &s), KN_OK);
    assert_int_equal(s.n, 7);
    assert_int_equal(knm_visit(m, NULL, &s), KN_ERR__INVALID_ARG);
    knm_destroy(m);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_rate_and_totals),
        cmocka_unit_test(test_avg_max_min_forget),
        cmocka_unit_test(test_sample_count_clamped),
        cmocka_unit_test(test_registry_views),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
