/*
 * wstat.h: a windowed statistic, Kafka's SampledStat in our words.
 *
 * Values are recorded into a ring of samples, each covering
 * metrics.sample.window.ms; a sample older than num.samples windows is
 * forgotten. From the live samples come the windowed rate (sum or count
 * per second), average, maximum and minimum, as Java's Rate, Avg, Max
 * and Min report them; beside them the cumulative sum and count since
 * creation (Java's CumulativeSum / CumulativeCount) never forget.
 *
 * Not thread-safe: the registry (metrics.h) guards each one with its lock.
 */
#ifndef KN_METRICS_WSTAT_H
#define KN_METRICS_WSTAT_H

#include <stdint.h>

#define KN_WSTAT_MAX_SAMPLES 16

typedef struct kn_wstat_sample {
    int64_t start_ms; /* when this sample's window began */
    int64_t count;    /* values recorded in it */
    double sum, max, min;
} kn_wstat_sample;

typedef struct kn_wstat {
    kn_wstat_sample s[KN_WSTAT_MAX_SAMPLES];
    int n;            /* samples in the ring (metrics.num.samples, capped) */
    int cur;          /* the sample being filled */
    int64_t window_ms; /* metrics.sample.window.ms */
    double total;     /* cumulative sum */
    int64_t total_count;
    double last;      /* the latest value recorded */
} kn_wstat;

/* An empty stat whose first window starts at now_ms. nsamples is
 * clamped to 1..KN_WSTAT_MAX_SAMPLES, window_ms to >= 1. */
void kn_wstat_init(kn_wstat *w, int64_t window_ms, int nsamples, int64_t now_ms);
void kn_wstat_record(kn_wstat *w, double v, int64_t now_ms);

/* Windowed sum (or count) per second over the live samples; the window
 * counts as at least (nsamples - 1) full windows, as Java's Rate does,
 * so a young stat does not report a spike. */
double kn_wstat_rate(kn_wstat *w, int64_t now_ms);
double kn_wstat_count_rate(kn_wstat *w, int64_t now_ms);
/* Windowed average, maximum, minimum: NaN when no value was recorded
 * in the live samples (Java reports NaN too). */
double kn_wstat_avg(kn_wstat *w, int64_t now_ms);
double kn_wstat_max(kn_wstat *w, int64_t now_ms);
double kn_wstat_min(kn_wstat *w, int64_t now_ms);

#endif
