/*
 * queries.c: the consumer's offset queries, answered live by the
 * partition leaders on the application thread (blocking, bounded by a
 * timeout): beginning_offsets, end_offsets and offsets_for_times, one
 * ListOffsets per leader; lag, answered from the last Fetch response
 * without any request; and the assignment and paused lists, read from
 * the partition table.
 */
#include <string.h>
#include <unistd.h>

#include "consumer/assignment.h"
#include "consumer/consumer_int.h"
#include "kn_alloc.h"
#include "proto/generated/kp_apis.h"
#include "proto/generated/kp_list_offsets.h"

/* Asks each entry's leader for the offset at timestamps[i] (-2
 * earliest, -1 end, else a time). Fills offsets, epochs and per-entry
 * errors; retries leadership errors until the deadline. */
static int knc_list_offsets(kn_consumer *c, kn_topic_partition_list *list,
                            const int64_t *timestamps, int timeout_ms) {
    size_t n = kn_topic_partition_list_count(list);
    if (timeout_ms < 0)
        timeout_ms = c->cfg.default_api_timeout_ms;
    int64_t deadline = knw_now_ms() + timeout_ms;
    bool *done = kn_calloc(n ? n : 1, sizeof(*done));
    int32_t *leader = kn_calloc(n ? n : 1, sizeof(*leader));
    if (!done || !leader) {
        kn_free(done);
        kn_free(leader);
        return KN_ERR__NOMEM;
    }
    for (size_t i = 0; i < n; i++) {
        const char *topic = kn_topic_partition_list_topic(list, i);
        knw_metadata_add_topics(c->client, &topic, 1);
    }
    int err = 0;
    size_t left = n;
    while (left > 0) {
        if (knw_now_ms() >= deadline) {
            err = KN_ERR__TIMED_OUT;
            break;
        }
        knw_metadata *md = knw_metadata_get(c->client);
        for (size_t i = 0; i < n; i++) {
            leader[i] = -1;
            if (done[i] || !md)
                continue;
            const knw_topic *t = knw_metadata_topic(md, kn_topic_partition_list_topic(list, i));
            int32_t p = kn_topic_partition_list_partition(list, i);
            if (t && p < t->partition_count) {
                leader[i] = t->partitions[p].leader;
            } else if (t && t->error == 0 && t->partition_count > 0) {
                /* the topic is known and has no such partition */
                done[i] = true;
                left--;
                kn_topic_partition_list_set_err(list, i, KN_ERR_UNKNOWN_TOPIC_OR_PARTITION);
                kn_topic_partition_list_set_offset(list, i, KN_OFFSET_INVALID);
            }
        }
        if (md)
            knw_metadata_release(md);
        bool progress = false;
        for (size_t i = 0; i < n; i++) {
            if (done[i] || leader[i] < 0)
                continue;
            int32_t node = leader[i];
            /* One request for every pending entry this leader leads. */
            kn_arena arena;
            kn_arena_init(&arena, 1024);
            kp_ListOffsetsRequest req;
            kp_ListOffsetsRequest_init(&req);
            req.replica_id = -1;
            req.isolation_level = c->cfg.read_committed ? 1 : 0;
            req.timeout_ms = c->cfg.request_timeout_ms;
            req.topics.items = kn_arena_calloc(&arena, n, sizeof(*req.topics.items));
            kp_ListOffsetsRequest_ListOffsetsPartition *parts =
                kn_arena_calloc(&arena, n, sizeof(*parts));
            if (!req.topics.items || !parts) {
                kn_arena_destroy(&arena);
                err = KN_ERR__NOMEM;
                goto out;
            }
            size_t used = 0;
            for (size_t j = i; j < n; j++) {
                if (done[j] || leader[j] != node)
                    continue;
                const char *topic = kn_topic_partition_list_topic(list, j);
                kp_ListOffsetsRequest_ListOffsetsTopic *rt = NULL;
                for (int32_t k = 0; k < req.topics.count && !rt; k++)
                    if (strcmp(req.topics.items[k].name.ptr, topic) == 0)
                        rt = &req.topics.items[k];
                if (!rt) {
                    rt = &req.topics.items[req.topics.count++];
                    rt->name.ptr = topic;
                    rt->name.len = (int32_t)strlen(topic);
                    rt->partitions.items = parts + used;
                    /* this topic's entries are contiguous in parts */
                    for (size_t x = j; x < n; x++)
                        if (!done[x] && leader[x] == node &&
                            strcmp(kn_topic_partition_list_topic(list, x), topic) == 0) {
                            kp_ListOffsetsRequest_ListOffsetsPartition *lp = &parts[used++];
                            lp->partition_index = kn_topic_partition_list_partition(list, x);
                            lp->current_leader_epoch = -1;
                            lp->timestamp = timestamps[x];
                            rt->partitions.count++;
                        }
                }
            }
            int64_t wait = deadline - knw_now_ms();
            knw_resp *resp = knw_call(c->client, node, KP_API_LIST_OFFSETS, 1, -1, &req,
                                      wait > 0 ? (int)wait : 1);
            const kp_ListOffsetsResponse *r = resp->body;
            if (!resp->err && r) {
                for (int32_t t = 0; t < r->topics.count; t++) {
                    const kp_ListOffsetsResponse_ListOffsetsTopicResponse *rt = &r->topics.items[t];
                    for (int32_t k = 0; k < rt->partitions.count; k++) {
                        const kp_ListOffsetsResponse_ListOffsetsPartitionResponse *pr =
                            &rt->partitions.items[k];
                        for (size_t x = 0; x < n; x++) {
                            const char *topic = kn_topic_partition_list_topic(list, x);
                            if (done[x] || leader[x] != node ||
                                kn_topic_partition_list_partition(list, x) != pr->partition_index ||
                                strlen(topic) != (size_t)rt->name.len ||
                                memcmp(topic, rt->name.ptr, (size_t)rt->name.len) != 0)
                                continue;
                            if (pr->error_code && kn_err_is_retriable(pr->error_code))
                                continue; /* asked again after a refresh */
                            done[x] = true;
                            left--;
                            progress = true;
                            kn_topic_partition_list_set_err(list, x, pr->error_code);
                            kn_topic_partition_list_set_offset(
                                list, x, pr->error_code || pr->offset < 0 ? KN_OFFSET_INVALID
                                                                         : pr->offset);
                            kn_topic_partition_list_set_leader_epoch(list, x, pr->leader_epoch);
                        }
                    }
                }
            }
            knw_resp_free(resp);
            kn_arena_destroy(&arena);
            /* later entries of this leader were in the same request */
            for (size_t j = i; j < n; j++)
                if (leader[j] == node)
                    leader[j] = -1;
        }
        if (left > 0 && !progress) {
            knw_metadata_request_refresh(c->client, false, "consumer offset query");
            if ((err = knc_backoff_wait(c, deadline)) != 0)
                break;
        }
    }
out:
    kn_free(done);
    kn_free(leader);
    if (err)
        return err;
    for (size_t i = 0; i < n; i++)
        if (kn_topic_partition_list_err(list, i))
            return KN_ERR__PARTIAL;
    return KN_OK;
}

static int knc_query(kn_consumer *c, kn_topic_partition_list *list, int64_t fixed, int timeout_ms) {
    if (!c || !list)
        return KN_ERR__INVALID_ARG;
    if (knc_closed(c))
        return KN_ERR__CLOSED;
    size_t n = kn_topic_partition_list_count(list);
    int64_t *ts = kn_malloc((n ? n : 1) * sizeof(*ts));
    if (!ts)
        return KN_ERR__NOMEM;
    for (size_t i = 0; i < n; i++) {
        ts[i] = fixed != 0 ? fixed : kn_topic_partition_list_offset(list, i);
        if (ts[i] < 0 && fixed == 0) {
            kn_free(ts);
            return KN_ERR__INVALID_ARG;
        }
    }
    int err = knc_list_offsets(c, list, ts, timeout_ms);
    kn_free(ts);
    return err;
}

int kn_consumer_beginning_offsets(kn_consumer *c, kn_topic_partition_list *list, int timeout_ms) {
    KNC_FORK_GUARD(c, KN_ERR__FORKED);
    return knc_query(c, list, -2, timeout_ms);
}

int kn_consumer_end_offsets(kn_consumer *c, kn_topic_partition_list *list, int timeout_ms) {
    KNC_FORK_GUARD(c, KN_ERR__FORKED);
    return knc_query(c, list, -1, timeout_ms);
}

int kn_consumer_offsets_for_times(kn_consumer *c, kn_topic_partition_list *list, int timeout_ms) {
    KNC_FORK_GUARD(c, KN_ERR__FORKED);
    return knc_query(c, list, 0, timeout_ms);
}

int kn_consumer_read_replica(kn_consumer *c, const char *topic, int32_t partition, int32_t *node_id) {
    if (!c || !topic || !node_id)
        return KN_ERR__INVALID_ARG;
    pthread_mutex_lock(&c->lock);
    knc_part *p = knc_closed(c) ? NULL : knc_table_find(&c->table, topic, strlen(topic), partition);
    int err = p ? KN_OK : knc_closed(c) ? KN_ERR__CLOSED : KN_ERR__STATE;
    if (p)
        *node_id = p->read_replica >= 0 && knw_now_ms() < p->read_replica_until_ms ? p->read_replica : -1;
    pthread_mutex_unlock(&c->lock);
    return err;
}

int kn_consumer_lag(kn_consumer *c, const char *topic, int32_t partition, int64_t *lag) {
    KNC_FORK_GUARD(c, KN_ERR__FORKED);
    if (!c || !topic || !lag)
        return KN_ERR__INVALID_ARG;
    pthread_mutex_lock(&c->lock);
    knc_part *p = knc_closed(c) ? NULL : knc_table_find(&c->table, topic, strlen(topic), partition);
    int err = KN_OK;
    if (!p) {
        err = knc_closed(c) ? KN_ERR__CLOSED : KN_ERR__STATE;
    } else {
        int64_t end = c->cfg.read_committed ? p->last_stable_offset : p->high_watermark;
        if (end < 0 || p->state != KNC_POS_VALID)
            err = KN_ERR__NOT_FOUND;
        else
            *lag = end > p->position ? end - p->position : 0;
    }
    pthread_mutex_unlock(&c->lock);
    return err;
}

/* A list of the assigned partitions, or only the paused ones, with the
 * positions of those that have one. */
static kn_topic_partition_list *knc_list(kn_consumer *c, bool only_paused) {
    kn_topic_partition_list *list = kn_topic_partition_list_new();
    if (!list)
        return NULL;
    pthread_mutex_lock(&c->lock);
    for (size_t i = 0; i < knc_table_count(&c->table); i++) {
        const knc_part *p = knc_table_at(&c->table, i);
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
