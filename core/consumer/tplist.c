/*
 * tplist.c: kn_topic_partition_list, the public (topic, partition) list
 * shared by the consumer, groups and admin. A growable array of entries;
 * the list owns every string in it.
 */
#include <string.h>

#include "consumer/consumer_int.h"
#include "kafka_native.h"
#include "kn_alloc.h"

typedef struct kn_tp_entry {
    char *topic;
    int32_t partition;
    int32_t leader_epoch;
    int64_t offset;
    char *metadata;
    int err;
} kn_tp_entry;

struct kn_topic_partition_list {
    kn_tp_entry *items;
    size_t count;
    size_t cap;
};

kn_topic_partition_list *kn_topic_partition_list_new(void) {
    return kn_calloc(1, sizeof(kn_topic_partition_list));
}

void kn_topic_partition_list_destroy(kn_topic_partition_list *list) {
    if (!list)
        return;
    for (size_t i = 0; i < list->count; i++) {
        kn_free(list->items[i].topic);
        kn_free(list->items[i].metadata);
    }
    kn_free(list->items);
    kn_free(list);
}

kn_topic_partition_list *kn_topic_partition_list_copy(const kn_topic_partition_list *list) {
    kn_topic_partition_list *copy = kn_topic_partition_list_new();
    if (!copy || !list)
        return copy;
    for (size_t i = 0; i < list->count; i++) {
        const kn_tp_entry *e = &list->items[i];
        int at = kn_topic_partition_list_add(copy, e->topic, e->partition);
        if (at < 0 || kn_topic_partition_list_set_metadata(copy, (size_t)at, e->metadata) != KN_OK) {
            kn_topic_partition_list_destroy(copy);
            return NULL;
        }
        copy->items[at].offset = e->offset;
        copy->items[at].leader_epoch = e->leader_epoch;
        copy->items[at].err = e->err;
    }
    return copy;
}

int kn_topic_partition_list_add(kn_topic_partition_list *list, const char *topic,
                                int32_t partition) {
    if (partition < 0)
        return KN_ERR__INVALID_ARG;
    return knc_tplist_add_any(list, topic, partition);
}

int knc_tplist_add_any(kn_topic_partition_list *list, const char *topic, int32_t partition) {
    if (!list || !topic || !*topic)
        return KN_ERR__INVALID_ARG;
    if (list->count > 0x7ffffffe)
        return KN_ERR__INVALID_ARG;
    if (list->count == list->cap) {
        size_t cap = list->cap ? list->cap * 2 : 8;
        kn_tp_entry *items = kn_realloc(list->items, cap * sizeof(*items));
        if (!items)
            return KN_ERR__NOMEM;
        list->items = items;
        list->cap = cap;
    }
    char *name = kn_strdup(topic);
    if (!name)
        return KN_ERR__NOMEM;
    kn_tp_entry *e = &list->items[list->count];
    memset(e, 0, sizeof(*e));
    e->topic = name;
    e->partition = partition;
    e->leader_epoch = -1;
    e->offset = KN_OFFSET_INVALID;
    return (int)list->count++;
}

int kn_topic_partition_list_find(const kn_topic_partition_list *list, const char *topic,
                                 int32_t partition) {
    if (!list || !topic)
        return -1;
    for (size_t i = 0; i < list->count; i++)
        if (list->items[i].partition == partition && strcmp(list->items[i].topic, topic) == 0)
            return (int)i;
    return -1;
}

size_t kn_topic_partition_list_count(const kn_topic_partition_list *list) {
    return list ? list->count : 0;
}

const char *kn_topic_partition_list_topic(const kn_topic_partition_list *list, size_t i) {
    return list->items[i].topic;
}

int32_t kn_topic_partition_list_partition(const kn_topic_partition_list *list, size_t i) {
    return list->items[i].partition;
}

int64_t kn_topic_partition_list_offset(const kn_topic_partition_list *list, size_t i) {
    return list->items[i].offset;
}

void kn_topic_partition_list_set_offset(kn_topic_partition_list *list, size_t i, int64_t offset) {
    list->items[i].offset = offset;
}

int32_t kn_topic_partition_list_leader_epoch(const kn_topic_partition_list *list, size_t i) {
    return list->items[i].leader_epoch;
}

void kn_topic_partition_list_set_leader_epoch(kn_topic_partition_list *list, size_t i,
                                              int32_t leader_epoch) {
    list->items[i].leader_epoch = leader_epoch;
}

const char *kn_topic_partition_list_metadata(const kn_topic_partition_list *list, size_t i) {
    return list->items[i].metadata;
}

int kn_topic_partition_list_set_metadata(kn_topic_partition_list *list, size_t i,
                                         const char *metadata) {
    char *copy = NULL;
    if (metadata && !(copy = kn_strdup(metadata)))
        return KN_ERR__NOMEM;
    kn_free(list->items[i].metadata);
    list->items[i].metadata = copy;
    return KN_OK;
}

int kn_topic_partition_list_err(const kn_topic_partition_list *list, size_t i) {
    return list->items[i].err;
}

void kn_topic_partition_list_set_err(kn_topic_partition_list *list, size_t i, int err) {
    list->items[i].err = err;
}
