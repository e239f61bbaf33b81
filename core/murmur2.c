/*
 * murmur2.c: Kafka-compatible MurmurHash2 (see murmur2.h).
 *
 * Java computes on signed ints; every step used (multiply, xor, logical
 * shift right) has the same bits in uint32_t arithmetic, and the tail
 * switch only sees len % 4 of a non-negative length, so unsigned math
 * reproduces it exactly without signed-overflow undefined behaviour.
 */
#include "murmur2.h"

#define MURMUR2_SEED 0x9747b28cu
#define MURMUR2_M 0x5bd1e995u
#define MURMUR2_R 24

uint32_t kn_murmur2(const void *key, size_t len) {
    const uint8_t *d = (const uint8_t *)key;
    /* Java hashes byte[] whose length is an int. */
    uint32_t h = MURMUR2_SEED ^ (uint32_t)len;
    size_t n4 = len / 4;
    for (size_t i = 0; i < n4; i++) {
        const uint8_t *p = d + i * 4;
        uint32_t k = (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
        k *= MURMUR2_M;
        k ^= k >> MURMUR2_R;
        k *= MURMUR2_M;
        h *= MURMUR2_M;
        h ^= k;
    }
    const uint8_t *tail = d + (len & ~(size_t)3);
    switch (len % 4) {
    case 3:
        h ^= (uint32_t)tail[2] << 16;
        /* fall through */
    case 2:
        h ^= (uint32_t)tail[1] << 8;
        /* fall through */
    case 1:
        h ^= tail[0];
        h *= MURMUR2_M;
    }
    h ^= h >> 13;
    h *= MURMUR2_M;
    h ^= h >> 15;
    return h;
}

int32_t kn_murmur2_partition(const void *key, size_t len, int32_t num_partitions) {
    if (num_partitions <= 0)
        return 0;
    return (int32_t)((kn_murmur2(key, len) & 0x7fffffffu) % (uint32_t)num_partitions);
}
