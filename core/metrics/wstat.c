/*
 * wstat.c: the windowed statistic (wstat.h). Samples advance when their
 * window is over; a sample whose window began num.samples windows ago
 * or more is reset before any reading, so readings only ever cover the
 * recent past (Java's purgeObsoleteSamples).
 */
#include "metrics/wstat.h"

#include <math.h>

static void sample_reset(kn_wstat_sample *s, int64_t now_ms) {
    s->start_ms = now_ms;
    s->count = 0;
    s->sum = 0;
    s->max = -INFINITY;
    s->min = INFINITY;
}

void kn_wstat_init(kn_wstat *w, int64_t window_ms, int nsamples, int64_t now_ms) {
    if (nsamples < 1)
        nsamples = 1;
    if (nsamples > KN_WSTAT_MAX_SAMPLES)
        nsamples = KN_WSTAT_MAX_SAMPLES;
    w->n = nsamples;
    w->cur = 0;
    w->window_ms = window_ms < 1 ? 1 : window_ms;
    w->total = 0;
    w->total_count = 0;
    w->last = NAN;
    for (int i = 0; i < w->n; i++)
        sample_reset(&w->s[i], now_ms);
}

static void purge(kn_wstat *w, int64_t now_ms) {
    int64_t expire = (int64_t)w->n * w->window_ms;
    for (int i = 0; i < w->n; i++)
        if (now_ms - w->s[i].start_ms >= expire)
            sample_reset(&w->s[i], now_ms);
}

void kn_wstat_record(kn_wstat *w, double v, int64_t now_ms) {
    kn_wstat_sample *s = &w->s[w->cur];
    if (now_ms >= s->start_ms + w->window_ms) {
        w->cur = (w->cur + 1) % w->n;
        s = &w->s[w->cur];
        sample_reset(s, now_ms);
    }
    s->count++;
    s->sum += v;
    if (v > s->max)
        s->max = v;
    if (v < s->min)
        s->min = v;
    w->total += v;
    w->total_count++;
    w->last = v;
}

/* Seconds the live samples cover (Java's Rate.windowSize). */
static double window_secs(kn_wstat *w, int64_t now_ms) {
    int64_t oldest = now_ms;
    for (int i = 0; i < w->n; i++)
        if (w->s[i].start_ms < oldest)
            oldest = w->s[i].start_ms;
    int64_t elapsed = now_ms - oldest;
    int64_t full = elapsed / w->window_ms, min_full = w->n - 1;
    if (full < min_full)
        elapsed += (min_full - full) * w->window_ms;
    if (elapsed < 1)
        elapsed = 1;
    return (double)elapsed / 1000.0;
}

double kn_wstat_rate(kn_wstat *w, int64_t now_ms) {
    purge(w, now_ms);
    double sum = 0;
    for (int i = 0; i < w->n; i++)
        sum += w->s[i].sum;
    return sum / window_secs(w, now_ms);
}

double kn_wstat_count_rate(kn_wstat *w, int64_t now_ms) {
    purge(w, now_ms);
    double n = 0;
    for (int i = 0; i < w->n; i++)
        n += (double)w->s[i].count;
    return n / window_secs(w, now_ms);
}

double kn_wstat_avg(kn_wstat *w, int64_t now_ms) {
    purge(w, now_ms);
    double sum = 0;
    int64_t n = 0;
    for (int i = 0; i < w->n; i++) {
        sum += w->s[i].sum;
        n += w->s[i].count;
    }
    return n ? sum / (double)n : NAN;
}

double kn_wstat_max(kn_wstat *w, int64_t now_ms) {
    purge(w, now_ms);
    double m = -INFINITY;
    int64_t n = 0;
    for (int i = 0; i < w->n; i++) {
        n += w->s[i].count;
        if (w->s[i].count && w->s[i].max > m)
            m = w->s[i].max;
    }
    return n ? m : NAN;
}

double kn_wstat_min(kn_wstat *w, int64_t now_ms) {
    purge(w, now_ms);
    double m = INFINITY;
    int64_t n = 0;
    for (int i = 0; i < w->n; i++) {
        n += w->s[i].count;
        if (w->s[i].count && w->s[i].min < m)
            m = w->s[i].min;
    }
    return n ? m : NAN;
}
