/*
 * adaptive.c: partitioner.adaptive.partitioning.enable: per topic, the
 * queue depth of each partition whose leader keeps up
 * (partitioner.availability.timeout.ms), handed to the partitioner's
 * load statistics (knp_sticky_load_stats) each sender tick.
 */
#include <stdbool.h>

#include "producer/adaptive.h"

void knp_adaptive_update(knp_sender *s, int64_t now_ms) {
    knp_acc *acc = s->acc;
    for (uint32_t bi = 0; bi < acc->nbuckets; bi++) {
        for (knp_topic *t = acc->buckets[bi]; t; t = t->hnext) {
            int32_t n = t->partition_count;
            if (n <= 0)
                continue;
            bool all = true;
            for (int32_t i = 0; i < n && all; i++)
                all = t->parts[i] != NULL;
            if (!s->conf.adaptive || !all) {
                t->sticky.len = 0;
                continue;
            }
            if (!knp_sender_scratch(s, n))
                continue;
            int32_t len = 0;
            for (int32_t i = 0; i < n; i++) {
                knp_partq *pq = t->parts[i];
                if (pq->leader < 0)
                    continue;
                if (s->conf.availability_timeout_ms > 0) {
                    knp_node *nd = knp_sender_node(s, pq->leader);
                    if (nd && nd->ready_ms - nd->drain_ms > s->conf.availability_timeout_ms)
                        continue;
                }
                s->scratch[len] = pq->depth;
                s->scratch2[len] = i;
                len++;
            }
            knp_sticky_load_stats(&t->sticky, s->scratch, s->scratch2, len, n);
        }
    }
    (void)now_ms;
}
