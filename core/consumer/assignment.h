/*
 * assignment.h: the partition table (assignment.c): the assigned
 * partitions sorted by (topic, partition), each a knc_part
 * (position.h), and the two rotations over them (where the next poll
 * starts draining, which partition leads the next Fetch). Held by value
 * in struct kn_consumer (c->table) and guarded by c->lock; the other
 * files of the consumer reach it only through these functions.
 */
#ifndef KN_CONSUMER_ASSIGNMENT_H
#define KN_CONSUMER_ASSIGNMENT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "consumer/position.h"
#include "kafka_native.h"

typedef struct knc_table {
    knc_part **parts; /* sorted by (topic, partition); owned with the partitions */
    size_t count;
    uint64_t next_id;  /* the id the next new partition gets (knc_part.id) */
    size_t drain_next; /* rotation: where the next poll starts draining */
    size_t fetch_next; /* rotation: which partition leads the next Fetch */
} knc_table;

/* The number of assigned partitions, and the i-th in (topic, partition)
 * order (i < knc_table_count): a topic's partitions are adjacent. */
static inline size_t knc_table_count(const knc_table *t) { return t->count; }
static inline knc_part *knc_table_at(const knc_table *t, size_t i) { return t->parts[i]; }
/* Finds an assigned partition; NULL if not assigned. */
knc_part *knc_table_find(const knc_table *t, const char *topic, size_t topic_len,
                         int32_t partition);
/* Replaces the assignment with list (no duplicates: the caller checked,
 * knc_tplist_has_duplicates): kept partitions keep their state, new ones
 * start unpositioned with reset (has_group: they may start from a
 * committed offset), dropped ones are freed with their buffers; both
 * rotations restart. Returns 0 or KN_ERR__NOMEM (the table unchanged). */
int knc_table_replace(knc_table *t, const kn_topic_partition_list *list, knc_reset reset,
                      bool has_group);
/* Frees every partition (and its buffers); the table is then empty. */
void knc_table_clear(knc_table *t);
/* Whether list names a partition twice. */
bool knc_tplist_has_duplicates(const kn_topic_partition_list *list);

/* The rotations: the index to start from (always < count when count >
 * 0), and where the next round starts. */
static inline size_t knc_table_drain_start(const knc_table *t) {
    return t->count ? t->drain_next % t->count : 0;
}
static inline void knc_table_drain_from(knc_table *t, size_t i) { t->drain_next = i; }
static inline size_t knc_table_fetch_start(const knc_table *t) {
    return t->count ? t->fetch_next % t->count : 0;
}
static inline void knc_table_fetch_from(knc_table *t, size_t i) { t->fetch_next = i; }

#endif
