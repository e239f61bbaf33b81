/*
 * bench_lat.h: poll-call latency recorder shared by the consumer
 * benchmark programs (header only: every *.c in bench/ is a program).
 * Samples are microseconds; the array grows by doubling and stops
 * growing (keeping what it has) if memory runs out. Printed as
 *   poll latency p50 A ms, p99 B ms, p99.9 C ms, max D ms over N polls
 * which bench/run parses.
 */
#ifndef KN_BENCH_LAT_H
#define KN_BENCH_LAT_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

typedef struct bench_lat {
    int64_t *v;
    size_t n, cap;
} bench_lat;

static inline int64_t bench_lat_now_us(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

static inline void bench_lat_add(bench_lat *l, int64_t us) {
    if (l->n == l->cap) {
        size_t cap = l->cap ? l->cap * 2 : 65536;
        int64_t *v = realloc(l->v, cap * sizeof *v);
        if (!v)
            return;
        l->v = v;
        l->cap = cap;
    }
    l->v[l->n++] = us;
}

static inline int bench_lat_cmp(const void *a, const void *b) {
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

static inline double bench_lat_pct_ms(const bench_lat *l, double p) {
    if (!l->n)
        return 0.0;
    size_t i = (size_t)(p * (double)l->n);
    return (double)l->v[i < l->n ? i : l->n - 1] / 1000.0;
}

/* Sorts, prints the line above, frees the samples. */
static inline void bench_lat_report(bench_lat *l) {
    if (l->n)
        qsort(l->v, l->n, sizeof *l->v, bench_lat_cmp);
    printf("poll latency p50 %.3f ms, p99 %.3f ms, p99.9 %.3f ms, max %.3f ms over %zu polls\n",
           bench_lat_pct_ms(l, 0.5), bench_lat_pct_ms(l, 0.99), bench_lat_pct_ms(l, 0.999),
           l->n ? (double)l->v[l->n - 1] / 1000.0 : 0.0, l->n);
    free(l->v);
    l->v = NULL;
    l->n = l->cap = 0;
}

#endif
