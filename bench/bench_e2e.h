/*
 * bench_e2e.h: the end-to-end latency measurement shared by
 * bench/kn_e2e_latency.c and bench/librdkafka_e2e_latency.c (header only:
 * every *.c in bench/ is a program); bench/java/BenchE2E.java does the
 * same in Java. One process, one clock: a producer thread sends N records
 * of 100 bytes at a fixed rate, each carrying its send time (CLOCK_MONOTONIC
 * microseconds, the value's first 8 bytes); the main thread's consumer
 * reads them and takes receipt - send. The first second of records is the
 * warm-up and not counted (connections, metadata, the first batches). The
 * samples live in one array sized up front (N entries) and are sorted
 * after the run, outside the measured path. Printed as
 *   e2e latency: N records at R records/sec, p50 A ms, p99 B ms, p99.9 C ms, max D ms
 */
#ifndef KN_BENCH_E2E_H
#define KN_BENCH_E2E_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define BENCH_E2E_SIZE 100

static inline int64_t bench_e2e_now_us(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

/* Sleeps until start_us + i / rate seconds (absolute, so delays do not
 * accumulate); returns the send time to stamp. */
static inline int64_t bench_e2e_pace(int64_t start_us, int64_t i, double rate) {
    int64_t due = start_us + (int64_t)((double)i * 1e6 / rate);
    int64_t now = bench_e2e_now_us();
    if (now < due) {
        struct timespec ts = {(time_t)((due - now) / 1000000), (long)((due - now) % 1000000) * 1000};
        nanosleep(&ts, NULL);
    }
    return bench_e2e_now_us();
}

static inline void bench_e2e_stamp(char *value, int64_t sent_us) {
    memset(value, 'x', BENCH_E2E_SIZE);
    memcpy(value, &sent_us, sizeof sent_us);
}

typedef struct bench_e2e {
    int64_t *lat_us;
    int64_t n, cap, received, skip;
} bench_e2e;

static inline int bench_e2e_init(bench_e2e *e, int64_t num, double rate) {
    memset(e, 0, sizeof *e);
    e->skip = (int64_t)rate; /* the first second */
    if (e->skip >= num)
        e->skip = num / 2;
    e->cap = num;
    e->lat_us = calloc((size_t)(num > 0 ? num : 1), sizeof *e->lat_us);
    return e->lat_us ? 0 : -1;
}

/* A record read: its value (as sent) at receipt time now. */
static inline void bench_e2e_received(bench_e2e *e, const void *value, size_t len, int64_t now_us) {
    int64_t sent;
    e->received++;
    if (len < sizeof sent || e->received <= e->skip || e->n >= e->cap)
        return;
    memcpy(&sent, value, sizeof sent);
    e->lat_us[e->n++] = now_us - sent;
}

static inline int bench_e2e_cmp(const void *a, const void *b) {
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

static inline double bench_e2e_pct(const bench_e2e *e, double p) {
    int64_t i = (int64_t)(p * (double)e->n);
    if (i >= e->n)
        i = e->n - 1;
    return e->n ? (double)e->lat_us[i] / 1000.0 : 0.0;
}

static inline void bench_e2e_report(bench_e2e *e, double rate) {
    qsort(e->lat_us, (size_t)e->n, sizeof *e->lat_us, bench_e2e_cmp);
    printf("e2e latency: %lld records at %.1f records/sec, p50 %.3f ms, p99 %.3f ms, p99.9 %.3f ms, "
           "max %.3f ms\n",
           (long long)e->n, rate, bench_e2e_pct(e, 0.5), bench_e2e_pct(e, 0.99), bench_e2e_pct(e, 0.999),
           e->n ? (double)e->lat_us[e->n - 1] / 1000.0 : 0.0);
    free(e->lat_us);
    e->lat_us = NULL;
}

#endif
