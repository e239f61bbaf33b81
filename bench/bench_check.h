/*
 * bench_check.h: the proof that a benchmark consumer read every record
 * exactly once (issue #17), shared by the C consumer programs (header
 * only: every *.c in bench/ is a program). Java (bench/java/
 * BenchConsumer.java) and Lua (bench/lua/consumer_perf.lua) compute the
 * same two things the same way.
 *
 * Checksum: per record, h starts at 0xcbf29ce484222325 and takes the key,
 * then the value, each as little-endian 64-bit words (the last one
 * zero-padded) and then its length (-1 for null, as a 64-bit two's
 * complement word), each word w folded in as h = (h ^ w) * 0x100000001b3
 * (mod 2^64). The run's checksum is the sum of every record's h (mod
 * 2^64), so it does not depend on the order partitions arrive in: every
 * client reading the same topic prints the same value, and bench/run
 * fails the run when they differ.
 *
 * Offsets: per partition, every record's offset must be the previous
 * one + 1 (the benchmark topics have no transaction markers and are not
 * compacted), so a skipped or repeated record fails the run. Printed as
 *   checksum N records, sum 0x%016llx, partitions P, offset errors E
 *
 * Windows (--min-seconds S): a program that read its N records sooner
 * than S seconds seeks back to the beginning and reads them again, as
 * often as it takes; each pass gets a fresh check that must equal the
 * first pass's (a mismatch fails the run). The window is the sum of the
 * passes' reading times (each pass's first record -> its last record),
 * so the wait after a seek (a Fetch already parked at the log end
 * answers after fetch.max.wait.ms) is not counted against any client:
 *   window P passes, R records, W s, X records/sec, Y MiB/sec
 * printed before the checksum line of the first pass.
 */
#ifndef KN_BENCH_CHECK_H
#define KN_BENCH_CHECK_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define BENCH_CHECK_MAX_PARTS 4096

typedef struct bench_check {
    uint64_t sum;
    int64_t records, offset_errors;
    int64_t next[BENCH_CHECK_MAX_PARTS]; /* expected next offset + 1; 0: none seen */
    int32_t parts;
    char first_error[160];
} bench_check;

static inline uint64_t bench_check_fold(uint64_t h, uint64_t w) { return (h ^ w) * 0x100000001b3ULL; }

static inline uint64_t bench_check_bytes(uint64_t h, const void *p, int64_t len) {
    const unsigned char *b = p;
    int64_t i = 0;
    if (len > 0) {
        for (; i + 8 <= len; i += 8) {
            uint64_t w;
            memcpy(&w, b + i, 8); /* x86-64 and arm64 Linux: little-endian */
            h = bench_check_fold(h, w);
        }
        if (i < len) {
            uint64_t w = 0;
            memcpy(&w, b + i, (size_t)(len - i));
            h = bench_check_fold(h, w);
        }
    }
    return bench_check_fold(h, (uint64_t)len);
}

/* One record: key/value may be NULL (then its length is -1). */
static inline void bench_check_record(bench_check *c, int32_t partition, int64_t offset, const void *key,
                                      int64_t key_len, const void *value, int64_t value_len) {
    uint64_t h = 0xcbf29ce484222325ULL;
    h = bench_check_bytes(h, key, key ? key_len : -1);
    h = bench_check_bytes(h, value, value ? value_len : -1);
    c->sum += h;
    c->records++;
    if (partition < 0 || partition >= BENCH_CHECK_MAX_PARTS) {
        if (!c->offset_errors++)
            snprintf(c->first_error, sizeof c->first_error, "partition %d out of range", (int)partition);
        return;
    }
    if (partition >= c->parts)
        c->parts = partition + 1;
    int64_t want = c->next[partition] - 1;
    if (c->next[partition] != 0 && offset != want && !c->offset_errors++)
        snprintf(c->first_error, sizeof c->first_error, "partition %d: offset %lld after %lld (%s)",
                 (int)partition, (long long)offset, (long long)(want - 1),
                 offset > want ? "records skipped" : "records repeated");
    c->next[partition] = offset + 2;
}

/* Prints the line bench/run compares; returns 0 when the offsets held. */
static inline int bench_check_report(const bench_check *c) {
    int32_t seen = 0;
    for (int32_t p = 0; p < c->parts; p++)
        seen += c->next[p] != 0;
    printf("checksum %lld records, sum 0x%016llx, partitions %d, offset errors %lld\n", (long long)c->records,
           (unsigned long long)c->sum, (int)seen, (long long)c->offset_errors);
    if (c->offset_errors)
        printf("OFFSET ERROR: %s\n", c->first_error);
    return c->offset_errors ? 1 : 0;
}

/* The passes over the topic of one run (see "Windows" above). */
typedef struct bench_window {
    bench_check first, cur;
    int passes, mismatch;
    int64_t pass_t0_us, read_us, records, bytes;
} bench_window;

static inline int64_t bench_window_now_us(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

static inline void bench_window_record(bench_window *w, int32_t partition, int64_t offset, const void *key,
                                       int64_t key_len, const void *value, int64_t value_len) {
    if (!w->cur.records)
        w->pass_t0_us = bench_window_now_us();
    bench_check_record(&w->cur, partition, offset, key, key_len, value, value_len);
    w->records++;
    w->bytes += (key ? key_len : 0) + (value ? value_len : 0);
}

/* Call when the current pass read its num records: returns 1 when the
 * window is long enough (stop), 0 when the caller must seek back to the
 * beginning and read another pass. */
static inline int bench_window_pass_done(bench_window *w, double min_seconds) {
    w->read_us += bench_window_now_us() - w->pass_t0_us;
    if (w->passes == 0) {
        w->first = w->cur;
    } else if (w->cur.sum != w->first.sum || w->cur.records != w->first.records || w->cur.offset_errors) {
        if (!w->mismatch++)
            printf("checksum mismatch: pass %d read %lld records, sum 0x%016llx, offset errors "
                   "%lld\n",
                   w->passes + 1, (long long)w->cur.records, (unsigned long long)w->cur.sum,
                   (long long)w->cur.offset_errors);
    }
    w->passes++;
    memset(&w->cur, 0, sizeof w->cur);
    return (double)w->read_us / 1e6 >= min_seconds || w->mismatch;
}

/* Prints the window and checksum lines; returns 0 when every pass agreed
 * and no offset was skipped or repeated. A pass cut short (timeout) is
 * checked as it stands. */
static inline int bench_window_report(bench_window *w) {
    if (w->cur.records) {
        w->read_us += bench_window_now_us() - w->pass_t0_us;
        if (!w->passes)
            w->first = w->cur;
    }
    double s = w->read_us > 0 ? (double)w->read_us / 1e6 : 1e-6;
    printf("window %d passes, %lld records, %.3f s, %.1f records/sec, %.4f MiB/sec\n", w->passes,
           (long long)w->records, s, (double)w->records / s, (double)w->bytes / 1048576.0 / s);
    int bad = bench_check_report(&w->first);
    return bad || w->mismatch || w->cur.offset_errors ? 1 : 0;
}

#endif
