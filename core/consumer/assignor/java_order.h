/*
 * java_order.h: the iteration order of Java's HashMap/HashSet, so the
 * assignors can walk members, topics and partitions in the order the Java
 * client does where that order changes the result (sticky conflict
 * resolution, which owned partitions a member keeps, the sticky user
 * data's topic order).
 *
 * A java.util.HashMap iterates its table bucket by bucket; a key's bucket
 * is spread(hashCode) & (capacity - 1) with spread(h) = h ^ (h >>> 16);
 * inside a bucket, keys come in insertion order (a resize splits a bucket
 * keeping that relative order). The capacity of a map built by n puts
 * from new HashMap<>() is 16, doubled while n > 3/4 of it. Buckets never
 * hold the 8 colliding keys that would make Java turn one into a tree at
 * the sizes a consumer group has, so that case is not modelled.
 */
#ifndef KN_ASG_JAVA_ORDER_H
#define KN_ASG_JAVA_ORDER_H

#include <stdint.h>

/* java.lang.String.hashCode() of a UTF-8 string (hashed as UTF-16). */
uint32_t kn_jorder_str_hash(const char *s);
/* org.apache.kafka.common.TopicPartition.hashCode(). */
uint32_t kn_jorder_tp_hash(uint32_t topic_hash, int32_t partition);
/* Table capacity of a default HashMap/HashSet after n distinct puts. */
int32_t kn_jorder_cap(int32_t n);
/* Bucket of hash h in a table of capacity cap (a power of two). */
static inline uint32_t kn_jorder_bucket(uint32_t h, int32_t cap) {
    return (h ^ (h >> 16)) & (uint32_t)(cap - 1);
}
/* Sorts idx[0..n) (insertion order on entry) into the iteration order of
 * a HashMap of capacity cap whose key idx[i] has hash hashes[idx[i]].
 * Returns 0 or KN_ERR__NOMEM. */
int kn_jorder_sort(int32_t *idx, int32_t n, const uint32_t *hashes, int32_t cap);

#endif
