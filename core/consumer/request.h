/*
 * request.h: the partition-batched request the consumer's network side
 * sends to one broker, shared by Fetch (fetch.c) and ListOffsets
 * (reset.c): which partitions it lists, each remembered by (id, gen,
 * offset) so an answer is matched back to the same assignment and
 * position of the partition, or dropped. Built and planned under the
 * consumer's lock (tick.c), sent after it, answered on the network
 * thread.
 */
#ifndef KN_CONSUMER_REQUEST_H
#define KN_CONSUMER_REQUEST_H

#include <stdbool.h>
#include <stdint.h>

#include "arena.h"
#include "consumer/consumer_int.h"
#include "proto/generated/kp_fetch.h"
#include "proto/generated/kp_list_offsets.h"

/* One partition inside a request, remembered to match the answer. */
typedef struct knc_req_part {
    uint64_t part_id;
    uint32_t gen;
    int64_t offset;
    int32_t partition;
    int32_t topic_idx;
} knc_req_part;

typedef struct knc_req {
    kn_consumer *c;
    int32_t node_id;
    int16_t api_key;
    kn_arena arena; /* names, arrays: the request must outlive knw_send */
    char **names;   /* per request topic */
    kn_uuid *ids;
    int32_t topic_count;
    knc_req_part *parts; /* grouped by topic, in request order */
    int32_t part_count;
    int32_t *topic_start; /* first part of each topic; topic_start[topic_count] = part_count */
    int32_t *by_partition; /* parts indexes, each topic's run sorted by partition */
    union {
        kp_FetchRequest fetch;
        kp_ListOffsetsRequest list_offsets;
    } u;
    bool ids_complete; /* every topic has an id: topic-id Fetch is possible */
    int32_t sent_epoch; /* Fetch: the session epoch sent (0: full) */
    struct knc_req *next;
} knc_req;

/* Frees req and everything its arena holds (NULL: nothing). */
void knc_req_free(knc_req *req);
/* The leader of p in md, or -1 (then *epoch is -1 too); *topic_id (if
 * not NULL) gets the topic's id. */
int32_t knc_leader(const knw_metadata *md, const knc_part *p, int32_t *epoch, kn_uuid *topic_id);
/* Partition `partition` of t (NULL when t is NULL or lacks it): one
 * topic lookup serves all of a request's partitions of that topic. */
const knw_partition *knc_md_partition(const knw_topic *t, int32_t partition);
/* Builds the request skeleton for chosen[0..n) (all led by node_id),
 * remembering c for the answer (its callback takes c->lock):
 * topics in first-seen order, partitions in chosen order within each;
 * each part's offset is the fetch position (Fetch) or the reset
 * strategy's timestamp (ListOffsets). Owned by the caller
 * (knc_req_free). NULL on allocation failure. */
knc_req *knc_req_build(kn_consumer *c, const knw_metadata *md, int32_t node_id, int16_t api_key,
                       knc_part **chosen, int32_t n);
/* The request part for (topic index, partition), or NULL. */
const knc_req_part *knc_req_find(const knc_req *req, int32_t t, int32_t partition);
/* The request's index of an answered topic, by name or id; -1 if none. */
int32_t knc_req_topic_by_name(const knc_req *req, kn_str name);
int32_t knc_req_topic_by_id(const knc_req *req, const kn_uuid *id);
/* The assigned partition a request part was for, if it is still the
 * same assignment of it (c->lock held); NULL otherwise. */
knc_part *knc_req_owner(kn_consumer *c, const knc_req *req, const knc_req_part *rp);

#endif
