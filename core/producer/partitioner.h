/*
 * partitioner.h: how the producer picks a record's partition (knp_part_
 * prefix), as the Java 4.x client does:
 *  - keyed records: positive(murmur2(key)) % partition count;
 *  - null keys (or partitioner.ignore.keys=true): the built-in "sticky"
 *    partitioner: keep one partition until about batch.size bytes went
 *    to it, then pick the next one at random, weighted by how short each
 *    partition's queue is (adaptive partitioning), among partitions that
 *    have a leader and whose broker has not lagged for more than
 *    partitioner.availability.timeout.ms;
 *  - partitioner.class=...RoundRobinPartitioner: a per-topic counter
 *    over the available partitions.
 * The state below lives in the accumulator's topic entry and is guarded
 * by the accumulator lock; these functions never lock and own no memory
 * except the load-stats arrays inside knp_sticky.
 */
#ifndef KN_PRODUCER_PARTITIONER_H
#define KN_PRODUCER_PARTITIONER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* A small per-producer random source (xorshift64*): no global state. */
typedef struct knp_rng {
    uint64_t s;
} knp_rng;

void knp_rng_seed(knp_rng *r, uint64_t seed);
/* A non-negative 31-bit value, like Java's Utils.toPositive(nextInt()). */
int32_t knp_rng_next(knp_rng *r);

typedef struct knp_sticky {
    int32_t current;        /* -1: none chosen yet */
    int32_t produced_bytes; /* bytes appended to `current` since chosen */
    /* Adaptive load stats: when len > 0, a cumulative frequency table
     * (cft[len-1] is the range end) and the partition of each slot. */
    int32_t *cft;
    int32_t *ids;
    int32_t len;
    int32_t cap;
} knp_sticky;

void knp_sticky_init(knp_sticky *s);
void knp_sticky_free(knp_sticky *s);

/* The keyed partition, bit-for-bit Java's. n must be > 0. */
int32_t knp_part_keyed(const void *key, size_t len, int32_t n);

/* The sticky partition for the next null-key record: the current one,
 * or a newly chosen one. avail[0..navail) are the partitions with a
 * leader; n is the partition count (> 0). */
int32_t knp_sticky_choose(knp_sticky *s, knp_rng *rng, const int32_t *avail, int32_t navail, int32_t n);
static inline int32_t knp_sticky_peek(knp_sticky *s, knp_rng *rng, const int32_t *avail, int32_t navail,
                                      int32_t n) {
    /* Inline: per record this is only the test (a call cost more). */
    if (s->current >= 0 && s->current < n)
        return s->current;
    return knp_sticky_choose(s, rng, avail, navail, n);
}

/* Accounts `appended` bytes to the current partition and switches to a
 * new one once batch_size bytes went to it and enable_switch (the
 * partition's batches are all full), or unconditionally at twice
 * batch_size. */
void knp_sticky_switch(knp_sticky *s, knp_rng *rng, const int32_t *avail, int32_t navail, int32_t n);
static inline void knp_sticky_update(knp_sticky *s, knp_rng *rng, int32_t appended, int32_t batch_size,
                                     bool enable_switch, const int32_t *avail, int32_t navail, int32_t n) {
    if (s->current < 0)
        return;
    int64_t produced = (int64_t)s->produced_bytes + appended;
    s->produced_bytes = produced > INT32_MAX ? INT32_MAX : (int32_t)produced;
    /* The 2x cap keeps a partition from staying sticky forever when its
     * last batch never fills (e.g. keyed records interleaved). */
    if ((produced >= batch_size && enable_switch) || produced >= 2 * (int64_t)batch_size)
        knp_sticky_switch(s, rng, avail, navail, n);
}

/* New load stats from queue depths: queue_sizes[0..len) for partitions
 * ids[0..len) (the usable ones, in order), out of total partitions.
 * queue_sizes is consumed (rewritten in place). With len < 1, total < 2,
 * or equal sizes over every partition, stats are dropped (uniform
 * choice). Returns 0 or KN_ERR__NOMEM (stats dropped). */
int knp_sticky_load_stats(knp_sticky *s, int32_t *queue_sizes, const int32_t *ids, int32_t len,
                          int32_t total);

/* Round-robin: the next partition from a per-topic counter. */
int32_t knp_part_round_robin(uint32_t *counter, const int32_t *avail, int32_t navail, int32_t n);

#endif
