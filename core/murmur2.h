/*
 * murmur2.h: MurmurHash2 exactly as Kafka's Java client computes it
 * (org.apache.kafka.common.utils.Utils.murmur2), used by the default
 * partitioner to map a record key to a partition. Pure functions, no
 * memory owned.
 */
#ifndef KN_MURMUR2_H
#define KN_MURMUR2_H

#include <stddef.h>
#include <stdint.h>

/* The 32-bit hash, bit-for-bit Java's (returned unsigned; Java's int is
 * the same bits). */
uint32_t kn_murmur2(const void *key, size_t len);

/* Java's default partition of a keyed record:
 * (murmur2(key) & 0x7fffffff) % num_partitions. num_partitions must be
 * > 0 (returns 0 otherwise). */
int32_t kn_murmur2_partition(const void *key, size_t len, int32_t num_partitions);

#endif
