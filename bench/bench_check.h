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
 */
#ifndef KN_BENCH_CHECK_H
#define KN_BENCH_CHECK_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define BENCH_CHECK_MAX_PARTS 4096

typedef struct bench_check {
    uint64_t sum;
    int64_t records, offset_errors;
    int64_t next[BENCH_CHECK_MAX_PARTS]; /* expected next offset + 1; 0: none seen */
    int32_t parts;
    char first_error[160];
} bench_check;

static inline uint64_t bench_check_fold(uint64_t h, uint64_t w) {
    return (h ^ w) * 0x100000001b3ULL;
}

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
static inline void bench_check_record(bench_check *c, int32_t partition, int64_t offset,
                                      const void *key, int64_t key_len, const void *value,
                                      int64_t value_len) {
    uint64_t h = 0xcbf29ce484222325ULL;
    h = bench_check_bytes(h, key, key ? key_len : -1);
    h = bench_check_bytes(h, value, value ? value_len : -1);
    c->sum += h;
    c->records++;
    if (partition < 0 || partition >= BENCH_CHECK_MAX_PARTS) {
        if (!c->offset_errors++)
            snprintf(c->first_error, sizeof c->first_error, "partition %d out of range",
                     (int)partition);
        return;
    }
    if (partition >= c->parts)
        c->parts = partition + 1;
    int64_t want = c->next[partition] - 1;
    if (c->next[partition] != 0 && offset != want && !c->offset_errors++)
        snprintf(c->first_error, sizeof c->first_error,
                 "partition %d: offset %lld after %lld (%s)", (int)partition, (long long)offset,
                 (long long)(want - 1), offset > want ? "records skipped" : "records repeated");
    c->next[partition] = offset + 2;
}

/* Prints the line bench/run compares; returns 0 when the offsets held. */
static inline int bench_check_report(const bench_check *c) {
    int32_t seen = 0;
    for (int32_t p = 0; p < c->parts; p++)
        seen += c->next[p] != 0;
    printf("checksum %lld records, sum 0x%016llx, partitions %d, offset errors %lld\n",
           (long long)c->records, (unsigned long long)c->sum, (int)seen,
           (long long)c->offset_errors);
    if (c->offset_errors)
        printf("OFFSET ERROR: %s\n", c->first_error);
    return c->offset_errors ? 1 : 0;
}

#endif
