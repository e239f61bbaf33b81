/*
 * validate.c: position validation after a leader epoch change (KIP-320).
 *
 * When metadata shows a partition's leader epoch above the one its
 * position was last checked under, and the position carries the epoch
 * of the last record returned, the partition stops fetching and its
 * leader is asked (OffsetForLeaderEpoch) for the end offset of that
 * epoch. An end offset below the position means the log was truncated
 * under us: the position moves down to it (knc_part_validated decides).
 * Requests are planned under the consumer's lock by the fetcher ticker
 * and sent after it; one per leader, matched back by (id, gen).
 */
#include <string.h>

#include "consumer/assignment.h"
#include "consumer/consumer_int.h"
#include "consumer/validate.h"
#include "kn_alloc.h"
#include "proto/generated/kp_apis.h"
#include "proto/generated/kp_offset_for_leader_epoch.h"

typedef struct knc_vpart {
    uint64_t part_id;
    uint32_t gen;
    int32_t md_epoch;
} knc_vpart;

typedef struct knc_vreq {
    kn_consumer *c;
    int32_t node_id;
    kn_arena arena;
    kp_OffsetForLeaderEpochRequest req;
    knc_vpart *parts; /* aligned with the request's partitions, topic by topic */
    struct knc_vreq *next;
} knc_vreq;

static void knc_vreq_free(knc_vreq *v) {
    if (!v)
        return;
    kn_arena_destroy(&v->arena);
    kn_free(v);
}

/* Leader and leader epoch of p in md (-1 when unknown). */
static int32_t knc_vleader(const knw_metadata *md, const knc_part *p, int32_t *epoch) {
    *epoch = -1;
    const knw_topic *t = knw_metadata_topic(md, p->topic);
    if (!t || p->partition >= t->partition_count)
        return -1;
    *epoch = t->partitions[p->partition].leader_epoch;
    return t->partitions[p->partition].leader;
}

static knc_part *knc_vowner(kn_consumer *c, const kp_OffsetForLeaderEpochRequest_OffsetForLeaderTopic *t,
                            int32_t partition, const knc_vpart *vp) {
    knc_part *p = knc_table_find(&c->table, t->topic.ptr, (size_t)t->topic.len, partition);
    return p && p->id == vp->part_id && p->gen == vp->gen ? p : NULL;
}

static void knc_validate_done(knw_client *client, knw_resp *resp, void *opaque) {
    knc_vreq *v = opaque;
    kn_consumer *c = v->c;
    const kp_OffsetForLeaderEpochResponse *r = resp->body;
    int64_t now = knw_now_ms();
    bool refresh = false;
    pthread_mutex_lock(&c->lock);
    if (!resp->err && r && !knc_closed(c)) {
        for (int32_t ti = 0; ti < r->topics.count; ti++) {
            const kp_OffsetForLeaderEpochResponse_OffsetForLeaderTopicResult *rt = &r->topics.items[ti];
            int32_t base = 0;
            for (int32_t t = 0; t < v->req.topics.count; t++) {
                const kp_OffsetForLeaderEpochRequest_OffsetForLeaderTopic *qt = &v->req.topics.items[t];
                if (qt->topic.len == rt->topic.len &&
                    memcmp(qt->topic.ptr, rt->topic.ptr, (size_t)rt->topic.len) == 0) {
                    for (int32_t k = 0; k < rt->partitions.count; k++) {
                        const kp_OffsetForLeaderEpochResponse_EpochEndOffset *eo = &rt->partitions.items[k];
                        for (int32_t q = 0; q < qt->partitions.count; q++) {
                            if (qt->partitions.items[q].partition != eo->partition)
                                continue;
                            knc_part *p = knc_vowner(c, qt, eo->partition, &v->parts[base + q]);
                            if (!p)
                                continue;
                            if (eo->error_code == 0) {
                                int64_t before = p->position;
                                if (knc_part_validated(p, p->gen, v->parts[base + q].md_epoch,
                                                       eo->end_offset, eo->leader_epoch)) {
                                    c->stats.validations++;
                                    if (p->position != before)
                                        c->stats.truncations++;
                                }
                            }
                            else if (kn_err_is_retriable(eo->error_code))
                                refresh = true;
                            else
                                knc_part_fail(p, eo->error_code,
                                              "%s [%d]: validating the position after a leader "
                                              "change failed: %s",
                                              p->topic, (int)p->partition,
                                              kn_err_name(eo->error_code));
                        }
                    }
                }
                base += qt->partitions.count;
            }
        }
    } else if (resp->err == KN_ERR__UNSUPPORTED_VERSION && !knc_closed(c)) {
        /* A broker without the API cannot tell: trust the position. */
        int32_t at = 0;
        for (int32_t t = 0; t < v->req.topics.count; t++)
            for (int32_t q = 0; q < v->req.topics.items[t].partitions.count; q++, at++) {
                knc_part *p = knc_vowner(c, &v->req.topics.items[t],
                                         v->req.topics.items[t].partitions.items[q].partition,
                                         &v->parts[at]);
                if (p) {
                    p->needs_validation = false;
                    p->checked_leader_epoch = v->parts[at].md_epoch;
                }
            }
    }
    /* Unanswered ones are asked again after the backoff. */
    int32_t at = 0;
    for (int32_t t = 0; t < v->req.topics.count; t++)
        for (int32_t q = 0; q < v->req.topics.items[t].partitions.count; q++, at++) {
            knc_part *p = knc_vowner(c, &v->req.topics.items[t],
                                     v->req.topics.items[t].partitions.items[q].partition,
                                     &v->parts[at]);
            if (p && p->validate_inflight) {
                p->validate_inflight = false;
                p->retry_at_ms = now + c->cfg.retry_backoff_ms;
                refresh = true;
            }
        }
    knc_signal(c);
    pthread_mutex_unlock(&c->lock);
    knw_resp_free(resp);
    knc_vreq_free(v);
    if (refresh)
        knw_metadata_request_refresh(client, false, "consumer position validation retry");
    knw_wakeup(client);
}

void *knc_validate_plan(kn_consumer *c, const knw_metadata *md, int64_t now_ms) {
    knc_vreq *plans = NULL;
    /* Note epoch changes first: that is what makes a position suspect. */
    for (size_t i = 0; i < knc_table_count(&c->table); i++) {
        int32_t epoch;
        if (knc_vleader(md, knc_table_at(&c->table, i), &epoch) >= 0)
            knc_part_leader_epoch_seen(knc_table_at(&c->table, i), epoch);
    }
    for (size_t i = 0; i < knc_table_count(&c->table); i++) {
        knc_part *p = knc_table_at(&c->table, i);
        if (!p->needs_validation || p->validate_inflight || now_ms < p->retry_at_ms ||
            p->state != KNC_POS_VALID)
            continue;
        int32_t epoch;
        int32_t leader = knc_vleader(md, p, &epoch);
        if (leader < 0)
            continue;
        knc_vreq *v;
        for (v = plans; v && v->node_id != leader; v = v->next)
            ;
        if (!v) {
            if (!(v = kn_calloc(1, sizeof(*v))))
                continue;
            v->c = c;
            v->node_id = leader;
            kn_arena_init(&v->arena, 1024);
            kp_OffsetForLeaderEpochRequest_init(&v->req);
            v->req.replica_id = -1; /* a consumer */
            size_t n = knc_table_count(&c->table);
            v->req.topics.items = kn_arena_calloc(&v->arena, n, sizeof(*v->req.topics.items));
            v->parts = kn_arena_calloc(&v->arena, n, sizeof(*v->parts));
            if (!v->req.topics.items || !v->parts) {
                knc_vreq_free(v);
                continue;
            }
            v->next = plans;
            plans = v;
        }
        /* The table is sorted by topic: a topic's partitions are adjacent. */
        kp_OffsetForLeaderEpochRequest_OffsetForLeaderTopic *t =
            v->req.topics.count ? &v->req.topics.items[v->req.topics.count - 1] : NULL;
        if (!t || strcmp(t->topic.ptr, p->topic) != 0) {
            size_t len = strlen(p->topic);
            char *name = kn_arena_alloc(&v->arena, len + 1);
            kp_OffsetForLeaderEpochRequest_OffsetForLeaderPartition *items =
                kn_arena_calloc(&v->arena, knc_table_count(&c->table), sizeof(*items));
            if (!name || !items)
                continue;
            memcpy(name, p->topic, len + 1);
            t = &v->req.topics.items[v->req.topics.count++];
            t->topic.ptr = name;
            t->topic.len = (int32_t)len;
            t->partitions.items = items;
        }
        int32_t at = 0;
        for (int32_t k = 0; k < v->req.topics.count; k++)
            at += v->req.topics.items[k].partitions.count;
        kp_OffsetForLeaderEpochRequest_OffsetForLeaderPartition *rp =
            &t->partitions.items[t->partitions.count++];
        rp->partition = p->partition;
        rp->current_leader_epoch = epoch;
        rp->leader_epoch = p->position_epoch;
        v->parts[at].part_id = p->id;
        v->parts[at].gen = p->gen;
        v->parts[at].md_epoch = epoch;
        p->validate_inflight = true;
    }
    return plans;
}

void knc_validate_send(knw_client *client, void *plan) {
    knc_vreq *v = plan;
    while (v) {
        knc_vreq *next = v->next;
        v->next = NULL;
        knw_send(client, v->node_id, KP_API_OFFSET_FOR_LEADER_EPOCH, -1, -1, &v->req, -1, knc_validate_done, v);
        v = next;
    }
}
