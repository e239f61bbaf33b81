/*
 * java_order.c: Java String/TopicPartition hash codes and HashMap
 * iteration order (see java_order.h for the model).
 */
#include "consumer/assignor/java_order.h"

#include <stdlib.h>
#include <string.h>

#include "kafka_native.h"
#include "kn_alloc.h"

uint32_t kn_jorder_str_hash(const char *s) {
    /* Java hashes UTF-16 code units: decode UTF-8, split supplementary
     * characters into surrogates. Malformed bytes hash as themselves. */
    uint32_t h = 0;
    const unsigned char *p = (const unsigned char *)s;
    while (*p) {
        uint32_t cp = *p, n = 0;
        if (cp >= 0xf0 && cp < 0xf8)
            cp &= 0x07, n = 3;
        else if (cp >= 0xe0)
            cp &= 0x0f, n = 2;
        else if (cp >= 0xc0)
            cp &= 0x1f, n = 1;
        uint32_t i = 1;
        for (; i <= n && (p[i] & 0xc0) == 0x80; i++)
            cp = (cp << 6) | (p[i] & 0x3f);
        if (i <= n) { /* truncated sequence: take the lead byte alone */
            cp = *p;
            i = 1;
        }
        p += i;
        if (cp >= 0x10000) {
            cp -= 0x10000;
            h = h * 31 + (0xd800 + (cp >> 10));
            h = h * 31 + (0xdc00 + (cp & 0x3ff));
        } else {
            h = h * 31 + cp;
        }
    }
    return h;
}

uint32_t kn_jorder_tp_hash(uint32_t topic_hash, int32_t partition) {
    uint32_t r = 31u + (uint32_t)partition;
    return 31u * r + topic_hash;
}

int32_t kn_jorder_cap(int32_t n) {
    int32_t cap = 16;
    while (n > cap / 4 * 3 && cap < (1 << 30))
        cap *= 2;
    return cap;
}

typedef struct jo_key {
    uint32_t bucket;
    int32_t pos; /* insertion position */
    int32_t idx;
} jo_key;

static int jo_cmp(const void *a, const void *b) {
    const jo_key *x = a, *y = b;
    if (x->bucket != y->bucket)
        return x->bucket < y->bucket ? -1 : 1;
    return (x->pos > y->pos) - (x->pos < y->pos);
}

int kn_jorder_sort(int32_t *idx, int32_t n, const uint32_t *hashes, int32_t cap) {
    if (n <= 1)
        return 0;
    jo_key *k = kn_malloc((size_t)n * sizeof *k);
    if (!k)
        return KN_ERR__NOMEM;
    for (int32_t i = 0; i < n; i++)
        k[i] = (jo_key){kn_jorder_bucket(hashes[idx[i]], cap), i, idx[i]};
    qsort(k, (size_t)n, sizeof *k, jo_cmp);
    for (int32_t i = 0; i < n; i++)
        idx[i] = k[i].idx;
    kn_free(k);
    return 0;
}
