/*
 * assignment.h: the partition table (assignment.c): c->parts, the
 * assigned partitions sorted by (topic, partition), each a knc_part
 * (position.h). Guarded by c->lock.
 */
#ifndef KN_CONSUMER_ASSIGNMENT_H
#define KN_CONSUMER_ASSIGNMENT_H

#include <stddef.h>
#include <stdint.h>

#include "consumer/consumer_int.h"

/* Finds an assigned partition (c->lock held); NULL if not assigned. */
knc_part *knc_find_part(const kn_consumer *c, const char *topic, size_t topic_len,
                        int32_t partition);
/* Replaces the assignment (c->lock NOT held): kept partitions keep
 * their state, new ones start unpositioned, dropped ones are freed with
 * their buffers. What kn_consumer_assign does, without the subscription
 * check. Returns 0, KN_ERR__INVALID_ARG (a duplicate), KN_ERR__NOMEM or
 * KN_ERR__CLOSED; the assignment is unchanged on error. */
int knc_set_assignment(kn_consumer *c, const kn_topic_partition_list *list);

#endif
