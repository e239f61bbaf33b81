/*
 * request.c: building the consumer's partition-batched requests
 * (request.h) and matching their answers back to partitions.
 */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "consumer/assignment.h"
#include "consumer/request.h"
#include "kn_alloc.h"
#include "proto/generated/kp_apis.h"

void knc_req_free(knc_req *req) {
    if (!req)
        return;
    kn_arena_destroy(&req->arena);
    kn_free(req);
}

const knw_partition *knc_md_partition(const knw_topic *t, int32_t partition) {
    if (!t || partition < 0 || partition >= t->partition_count)
        return NULL;
    const knw_partition *kp = &t->partitions[partition];
    return kp->partition == partition ? kp : NULL;
}

/* The leader of p in md, or -1 (then *epoch is -1 too). */
int32_t knc_leader(const knw_metadata *md, const knc_part *p, int32_t *epoch,
                          kn_uuid *topic_id) {
    *epoch = -1;
    const knw_topic *t = knw_metadata_topic(md, p->topic);
    const knw_partition *kp = knc_md_partition(t, p->partition);
    if (!kp)
        return -1;
    *epoch = kp->leader_epoch;
    if (topic_id)
        *topic_id = t->topic_id;
    return kp->leader;
}

static bool knc_uuid_zero(const kn_uuid *u) {
    for (int i = 0; i < 16; i++)
        if (u->b[i])
            return false;
    return true;
}

/* The ListOffsets timestamp that resolves p's reset strategy: -2
 * earliest, -1 latest, or (by_duration) now - duration in epoch ms. */
static int64_t knc_reset_timestamp(const kn_consumer *c, const knc_part *p) {
    if (p->reset == KNC_RESET_EARLIEST)
        return -2;
    if (p->reset != KNC_RESET_BY_DURATION || p->reset_fallback)
        return -1;
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    int64_t now = (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
    return now > c->cfg.reset_duration_ms ? now - c->cfg.reset_duration_ms : 0;
}

/* Sort key of the request's by-partition index: topics in request
 * order (their runs stay where topic_start says), then partition. */
typedef struct knc_part_key {
    int32_t topic_idx, partition, idx;
} knc_part_key;

static int knc_part_key_cmp(const void *a, const void *b) {
    const knc_part_key *x = a, *y = b;
    if (x->topic_idx != y->topic_idx)
        return x->topic_idx < y->topic_idx ? -1 : 1;
    return x->partition < y->partition ? -1 : x->partition > y->partition;
}

/* Builds the request skeleton for chosen[0..n) (all led by node_id):
 * topics in first-seen order, partitions in chosen order within each.
 * Returns NULL on allocation failure. */
knc_req *knc_req_build(kn_consumer *c, const knw_metadata *md, int32_t node_id,
                              int16_t api_key, knc_part **chosen, int32_t n) {
    knc_req *req = kn_calloc(1, sizeof(*req));
    if (!req)
        return NULL;
    req->c = c;
    req->node_id = node_id;
    req->api_key = api_key;
    kn_arena_init(&req->arena, 4096);
    int32_t *tidx = kn_arena_alloc(&req->arena, (size_t)n * sizeof(int32_t));
    req->names = kn_arena_alloc(&req->arena, (size_t)n * sizeof(char *));
    req->ids = kn_arena_calloc(&req->arena, (size_t)n, sizeof(kn_uuid));
    req->parts = kn_arena_alloc(&req->arena, (size_t)n * sizeof(knc_req_part));
    req->topic_start = kn_arena_calloc(&req->arena, (size_t)n + 1, sizeof(int32_t));
    if (!tidx || !req->names || !req->ids || !req->parts || !req->topic_start)
        goto fail;
    req->ids_complete = true;
    for (int32_t i = 0; i < n; i++) {
        int32_t t;
        for (t = 0; t < req->topic_count; t++)
            if (strcmp(req->names[t], chosen[i]->topic) == 0)
                break;
        if (t == req->topic_count) {
            size_t len = strlen(chosen[i]->topic);
            char *name = kn_arena_alloc(&req->arena, len + 1);
            if (!name)
                goto fail;
            memcpy(name, chosen[i]->topic, len + 1);
            req->names[t] = name;
            const knw_topic *mt = knw_metadata_topic(md, name);
            if (mt)
                req->ids[t] = mt->topic_id;
            if (knc_uuid_zero(&req->ids[t]))
                req->ids_complete = false;
            req->topic_count++;
        }
        tidx[i] = t;
        req->topic_start[t + 1]++;
    }
    for (int32_t t = 0; t < req->topic_count; t++)
        req->topic_start[t + 1] += req->topic_start[t];
    /* Stable bucket by topic: fill cursor per topic. */
    int32_t *fill = kn_arena_calloc(&req->arena, (size_t)req->topic_count, sizeof(int32_t));
    if (!fill)
        goto fail;
    for (int32_t i = 0; i < n; i++) {
        int32_t t = tidx[i];
        knc_req_part *rp = &req->parts[req->topic_start[t] + fill[t]++];
        rp->part_id = chosen[i]->id;
        rp->gen = chosen[i]->gen;
        /* ListOffsets carries the reset strategy as its timestamp. */
        rp->offset = api_key == KP_API_FETCH ? knc_part_fetch_offset(chosen[i])
                                             : knc_reset_timestamp(c, chosen[i]);
        rp->partition = chosen[i]->partition;
        rp->topic_idx = t;
    }
    req->part_count = n;
    /* The lookup index: per topic, its parts sorted by partition. */
    req->by_partition = kn_arena_alloc(&req->arena, (size_t)n * sizeof(int32_t));
    knc_part_key *keys = n > 0 ? kn_malloc((size_t)n * sizeof(*keys)) : NULL;
    if (!req->by_partition || (n > 0 && !keys)) {
        kn_free(keys);
        goto fail;
    }
    for (int32_t i = 0; i < n; i++)
        keys[i] = (knc_part_key){req->parts[i].topic_idx, req->parts[i].partition, i};
    if (n > 1)
        qsort(keys, (size_t)n, sizeof(*keys), knc_part_key_cmp);
    for (int32_t i = 0; i < n; i++)
        req->by_partition[i] = keys[i].idx; /* topics keep their runs: same order */
    kn_free(keys);
    return req;
fail:
    knc_req_free(req);
    return NULL;
}

/* The request part for (topic index, partition), or NULL: a binary
 * search in the topic's by-partition index (a scan per answered
 * partition made 1,000 partitions cost half a million compares). */
const knc_req_part *knc_req_find(const knc_req *req, int32_t t, int32_t partition) {
    int32_t lo = req->topic_start[t], hi = req->topic_start[t + 1];
    while (lo < hi) {
        int32_t mid = lo + (hi - lo) / 2;
        const knc_req_part *rp = &req->parts[req->by_partition[mid]];
        if (rp->partition == partition)
            return rp;
        if (rp->partition < partition)
            lo = mid + 1;
        else
            hi = mid;
    }
    return NULL;
}

int32_t knc_req_topic_by_name(const knc_req *req, kn_str name) {
    if (name.len < 0)
        return -1;
    for (int32_t t = 0; t < req->topic_count; t++)
        if (strlen(req->names[t]) == (size_t)name.len &&
            memcmp(req->names[t], name.ptr, (size_t)name.len) == 0)
            return t;
    return -1;
}

int32_t knc_req_topic_by_id(const knc_req *req, const kn_uuid *id) {
    for (int32_t t = 0; t < req->topic_count; t++)
        if (memcmp(req->ids[t].b, id->b, 16) == 0)
            return t;
    return -1;
}

/* The assigned partition a request part was for, if it is still the
 * same assignment of it. */
knc_part *knc_req_owner(kn_consumer *c, const knc_req *req, const knc_req_part *rp) {
    const char *name = req->names[rp->topic_idx];
    knc_part *p = knc_table_find(&c->table, name, strlen(name), rp->partition);
    return p && p->id == rp->part_id ? p : NULL;
}
