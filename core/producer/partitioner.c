/*
 * partitioner.c: keyed, sticky (adaptive) and round-robin partition
 * choice; see partitioner.h. The sticky algorithm follows the behaviour
 * of Java's BuiltInPartitioner: a uniformly random pick among available
 * partitions, or, with load stats, a pick weighted by
 * (max queue depth + 1 - depth) through a cumulative frequency table.
 */
#include "producer/partitioner.h"

#include "kafka_native.h"
#include "kn_alloc.h"
#include "murmur2.h"

void knp_rng_seed(knp_rng *r, uint64_t seed) { r->s = seed ? seed : 0x9e3779b97f4a7c15ull; }

int32_t knp_rng_next(knp_rng *r) {
    uint64_t x = r->s;
    x ^= x >> 12;
    x ^= x << 25;
    x ^= x >> 27;
    r->s = x;
    return (int32_t)((x * 0x2545f4914f6cdd1dull) >> 33) & 0x7fffffff;
}

void knp_sticky_init(knp_sticky *s) {
    s->current = -1;
    s->produced_bytes = 0;
    s->cft = NULL;
    s->ids = NULL;
    s->len = 0;
    s->cap = 0;
}

void knp_sticky_free(knp_sticky *s) {
    kn_free(s->cft);
    kn_free(s->ids);
    knp_sticky_init(s);
}

int32_t knp_part_keyed(const void *key, size_t len, int32_t n) {
    return kn_murmur2_partition(key, len, n);
}

static int32_t sticky_next(knp_sticky *s, knp_rng *rng, const int32_t *avail, int32_t navail,
                           int32_t n) {
    int32_t random = knp_rng_next(rng);
    if (s->len <= 0) {
        if (navail > 0)
            return avail[random % navail];
        return random % n;
    }
    /* First slot whose running sum is strictly greater than the draw. */
    int32_t draw = random % s->cft[s->len - 1];
    int32_t lo = 0, hi = s->len - 1;
    while (lo < hi) {
        int32_t mid = lo + (hi - lo) / 2;
        if (s->cft[mid] > draw)
            hi = mid;
        else
            lo = mid + 1;
    }
    int32_t part = s->ids[lo];
    /* Stats may predate a partition-count shrink seen by the caller. */
    return part < n ? part : random % n;
}

/* knp_sticky_peek's slow half: no current partition (or one past a
 * partition-count shrink): choose one. */
int32_t knp_sticky_choose(knp_sticky *s, knp_rng *rng, const int32_t *avail, int32_t navail, int32_t n) {
    s->current = sticky_next(s, rng, avail, navail, n);
    s->produced_bytes = 0;
    return s->current;
}

/* knp_sticky_update's slow half: the partition had its bytes. */
void knp_sticky_switch(knp_sticky *s, knp_rng *rng, const int32_t *avail, int32_t navail, int32_t n) {
    s->current = sticky_next(s, rng, avail, navail, n);
    s->produced_bytes = 0;
}

int knp_sticky_load_stats(knp_sticky *s, int32_t *queue_sizes, const int32_t *ids, int32_t len,
                          int32_t total) {
    if (len < 1 || total < 2) {
        s->len = 0;
        return 0;
    }
    int32_t max_plus1 = queue_sizes[0];
    bool all_equal = true;
    for (int32_t i = 1; i < len; i++) {
        if (queue_sizes[i] != max_plus1)
            all_equal = false;
        if (queue_sizes[i] > max_plus1)
            max_plus1 = queue_sizes[i];
    }
    max_plus1++;
    if (all_equal && len == total) {
        s->len = 0;
        return 0;
    }
    if (s->cap < len) {
        int32_t *cft = kn_realloc(s->cft, (size_t)len * sizeof *cft);
        if (cft)
            s->cft = cft;
        int32_t *nids = kn_realloc(s->ids, (size_t)len * sizeof *nids);
        if (nids)
            s->ids = nids;
        if (!cft || !nids) {
            s->len = 0;
            return KN_ERR__NOMEM;
        }
        s->cap = len;
    }
    /* Invert (short queues weigh more) and fold into running sums. */
    s->cft[0] = max_plus1 - queue_sizes[0];
    s->ids[0] = ids[0];
    for (int32_t i = 1; i < len; i++) {
        s->cft[i] = max_plus1 - queue_sizes[i] + s->cft[i - 1];
        s->ids[i] = ids[i];
    }
    s->len = len;
    return 0;
}

int32_t knp_part_round_robin(uint32_t *counter, const int32_t *avail, int32_t navail, int32_t n) {
    uint32_t c = (*counter)++;
    if (navail > 0)
        return avail[c % (uint32_t)navail];
    return (int32_t)(c % (uint32_t)n);
}
