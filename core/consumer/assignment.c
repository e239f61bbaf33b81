/*
 * assignment.c: the partition table (c->parts, sorted by topic and
 * partition): finding, replacing and listing the assigned partitions.
 */
#include <stdlib.h>
#include <string.h>

#include "consumer/assignment.h"
#include "kn_alloc.h"

knc_part *knc_find_part(const kn_consumer *c, const char *topic, size_t topic_len,
                        int32_t partition) {
    size_t lo = 0, hi = c->part_count;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        const knc_part *p = c->parts[mid];
        int cmp = strncmp(p->topic, topic, topic_len);
        if (cmp == 0 && p->topic[topic_len] != '\0')
            cmp = 1;
        if (cmp == 0)
            cmp = p->partition < partition ? -1 : p->partition > partition;
        if (cmp == 0)
            return c->parts[mid];
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

int knc_set_assignment(kn_consumer *c, const kn_topic_partition_list *list) {
    size_t n = kn_topic_partition_list_count(list);
    for (size_t i = 0; i < n; i++)
        if (kn_topic_partition_list_find(list, kn_topic_partition_list_topic(list, i),
                                         kn_topic_partition_list_partition(list, i)) != (int)i)
            return KN_ERR__INVALID_ARG;
    knc_part **parts = n ? kn_calloc(n, sizeof(*parts)) : NULL;
    const char **topics = n ? kn_calloc(n, sizeof(*topics)) : NULL;
    if (n && (!parts || !topics)) {
        kn_free(parts);
        kn_free(topics);
        return KN_ERR__NOMEM;
    }
    int topic_count = 0;
    pthread_mutex_lock(&c->lock);
    if (c->closed) {
        pthread_mutex_unlock(&c->lock);
        kn_free(parts);
        kn_free(topics);
        return KN_ERR__CLOSED;
    }
    /* Kept partitions move over with their state; new ones start
     * unpositioned. */
    for (size_t i = 0; i < n; i++) {
        const char *topic = kn_topic_partition_list_topic(list, i);
        int32_t partition = kn_topic_partition_list_partition(list, i);
        knc_part *old = knc_find_part(c, topic, strlen(topic), partition);
        if (old) {
            parts[i] = old;
            old->revoking = false; /* kept after all */
        } else {
            parts[i] = knc_part_new(topic, partition, ++c->next_part_id, c->reset,
                                    c->group_id != NULL);
            if (!parts[i]) {
                for (size_t j = 0; j < i; j++)
                    if (!knc_find_part(c, parts[j]->topic, strlen(parts[j]->topic),
                                       parts[j]->partition))
                        knc_part_free(parts[j]);
                pthread_mutex_unlock(&c->lock);
                kn_free(parts);
                kn_free(topics);
                return KN_ERR__NOMEM;
            }
        }
        int t;
        for (t = 0; t < topic_count; t++)
            if (strcmp(topics[t], topic) == 0)
                break;
        if (t == topic_count)
            topics[topic_count++] = topic;
    }
    /* Drop the partitions no longer assigned (their buffers with them). */
    for (size_t i = 0; i < c->part_count; i++) {
        bool kept = false;
        for (size_t j = 0; j < n && !kept; j++)
            kept = parts[j] == c->parts[i];
        if (!kept)
            knc_part_free(c->parts[i]);
    }
    kn_free(c->parts);
    if (n)
        qsort(parts, n, sizeof(*parts), knc_part_cmp);
    c->parts = parts;
    c->part_count = n;
    c->drain_next = 0;
    c->fetch_next = 0;
    pthread_mutex_unlock(&c->lock);
    if (topic_count) {
        knw_metadata_add_topics(c->client, topics, topic_count);
        knw_metadata_request_refresh(c->client, false, "consumer assignment");
    }
    kn_free(topics);
    knw_wakeup(c->client);
    return KN_OK;
}

/* A list of the partitions matching pred (c->lock held). */
static kn_topic_partition_list *knc_list(kn_consumer *c, bool only_paused) {
    kn_topic_partition_list *list = kn_topic_partition_list_new();
    if (!list)
        return NULL;
    pthread_mutex_lock(&c->lock);
    for (size_t i = 0; i < c->part_count; i++) {
        const knc_part *p = c->parts[i];
        if (only_paused && !p->paused)
            continue;
        int at = kn_topic_partition_list_add(list, p->topic, p->partition);
        if (at < 0) {
            pthread_mutex_unlock(&c->lock);
            kn_topic_partition_list_destroy(list);
            return NULL;
        }
        if (p->state == KNC_POS_VALID) {
            kn_topic_partition_list_set_offset(list, (size_t)at, p->position);
            kn_topic_partition_list_set_leader_epoch(list, (size_t)at, p->position_epoch);
        }
    }
    pthread_mutex_unlock(&c->lock);
    return list;
}

kn_topic_partition_list *kn_consumer_assignment(kn_consumer *c) {
    return c ? knc_list(c, false) : NULL;
}

kn_topic_partition_list *kn_consumer_paused(kn_consumer *c) {
    return c ? knc_list(c, true) : NULL;
}
