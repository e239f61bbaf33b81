/*
 * assignment.c: the partition table (assignment.h): finding and
 * replacing the assigned partitions. It knows nothing of the consumer
 * around it: locking, metadata and wake-ups are the caller's
 * (knc_set_assignment, consumer.c).
 */
#include <stdlib.h>
#include <string.h>

#include "consumer/assignment.h"
#include "kn_alloc.h"

knc_part *knc_table_find(const knc_table *t, const char *topic, size_t topic_len,
                         int32_t partition) {
    size_t lo = 0, hi = t->count;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        const knc_part *p = t->parts[mid];
        int cmp = strncmp(p->topic, topic, topic_len);
        if (cmp == 0 && p->topic[topic_len] != '\0')
            cmp = 1;
        if (cmp == 0)
            cmp = p->partition < partition ? -1 : p->partition > partition;
        if (cmp == 0)
            return t->parts[mid];
        if (cmp < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return NULL;
}

static int knc_part_cmp(const void *a, const void *b) {
    const knc_part *x = *(knc_part *const *)a, *y = *(knc_part *const *)b;
    int cmp = strcmp(x->topic, y->topic);
    if (cmp)
        return cmp;
    return x->partition < y->partition ? -1 : x->partition > y->partition;
}

bool knc_tplist_has_duplicates(const kn_topic_partition_list *list) {
    size_t n = kn_topic_partition_list_count(list);
    for (size_t i = 0; i < n; i++)
        if (kn_topic_partition_list_find(list, kn_topic_partition_list_topic(list, i),
                                         kn_topic_partition_list_partition(list, i)) != (int)i)
            return true;
    return false;
}

int knc_table_replace(knc_table *t, const kn_topic_partition_list *list, knc_reset reset,
                      bool has_group) {
    size_t n = kn_topic_partition_list_count(list);
    knc_part **parts = n ? kn_calloc(n, sizeof(*parts)) : NULL;
    if (n && !parts)
        return KN_ERR__NOMEM;
    /* Kept partitions move over with their state; new ones start
     * unpositioned. */
    for (size_t i = 0; i < n; i++) {
        const char *topic = kn_topic_partition_list_topic(list, i);
        int32_t partition = kn_topic_partition_list_partition(list, i);
        knc_part *old = knc_table_find(t, topic, strlen(topic), partition);
        if (old) {
            parts[i] = old;
            continue;
        }
        parts[i] = knc_part_new(topic, partition, t->next_id + 1, reset, has_group);
        if (!parts[i]) {
            for (size_t j = 0; j < i; j++)
                if (!knc_table_find(t, parts[j]->topic, strlen(parts[j]->topic),
                                    parts[j]->partition))
                    knc_part_free(parts[j]);
            kn_free(parts);
            return KN_ERR__NOMEM;
        }
        t->next_id++;
    }
    /* Committed: kept partitions are kept after all (a revoke that
     * marked them is over), the others go with their buffers. */
    for (size_t i = 0; i < n; i++)
        parts[i]->revoking = false;
    for (size_t i = 0; i < t->count; i++) {
        bool kept = false;
        for (size_t j = 0; j < n && !kept; j++)
            kept = parts[j] == t->parts[i];
        if (!kept)
            knc_part_free(t->parts[i]);
    }
    kn_free(t->parts);
    if (n)
        qsort(parts, n, sizeof(*parts), knc_part_cmp);
    t->parts = parts;
    t->count = n;
    t->drain_next = 0;
    t->fetch_next = 0;
    return KN_OK;
}

void knc_table_clear(knc_table *t) {
    for (size_t i = 0; i < t->count; i++)
        knc_part_free(t->parts[i]);
    kn_free(t->parts);
    t->parts = NULL;
    t->count = 0;
    t->drain_next = 0;
    t->fetch_next = 0;
}
