/*
 * fetcher.c: the consumer's network side, run as a ticker on the
 * client's network thread. Each tick, under the consumer's lock:
 *
 *  1. partitions without a position get one ListOffsets per leader
 *     (earliest or latest, per their reset strategy);
 *  2. fetchable partitions (positioned, unpaused, nothing in flight,
 *     a free slot in their two-slice buffer) get one Fetch per leader,
 *     with at most one Fetch in flight per broker. A partition that is
 *     still draining one slice is fetched again from where that slice
 *     ends (read-ahead, its "fetch position"; the position poll
 *     reports stays behind), so the next answer is on its way while
 *     poll drains, instead of one round trip per buffer. Everything
 *     fetched lives inside the fetch-buffer budget (knc_budget_init:
 *     raw responses held plus Fetches in flight, six times
 *     max.partition.fetch.bytes), which sizes each Fetch's max_bytes and
 *     stops read-ahead below a low-water mark without ever stalling a
 *     partition (docs/consumer.md, "Memory"). No
 *     Fetch at all goes to a broker that leads a partition whose buffer
 *     is full (the buffered-node gate: fetching its other partitions
 *     alone could long-poll while that buffer drains and its refill
 *     waits behind). The partition that leads the request rotates so
 *     none is starved of fetch.max.bytes.
 *
 * Answers arrive on the same thread (knw_cb) and are matched back to the
 * partition by (id, gen, fetch position): anything requested for a
 * position the application has since moved is dropped. An error
 * answered to a read-ahead fetch is only a reason to back off: it is
 * acted on (reset, failure) when the partition fetches at its position
 * again, after the records before it were delivered. A Fetch response
 * is kept raw; each partition's records blob stays in it, referenced,
 * until poll drains it (drain.c).
 *
 * Requests are built under the lock and sent after it is released, so
 * a knw_send that fails (or completes) inline cannot deadlock.
 */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "consumer/consumer_int.h"
#include "error.h"
#include "kn_alloc.h"
#include "log.h"
#include "proto/generated/kp_apis.h"
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

static void knc_req_free(knc_req *req) {
    if (!req)
        return;
    kn_arena_destroy(&req->arena);
    kn_free(req);
}

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

static knc_node *knc_node_get(kn_consumer *c, int32_t node_id) {
    for (size_t i = 0; i < c->node_count; i++)
        if (c->nodes[i].node_id == node_id)
            return &c->nodes[i];
    if (c->node_count == c->node_cap) {
        size_t cap = c->node_cap ? c->node_cap * 2 : 8;
        knc_node *n = kn_realloc(c->nodes, cap * sizeof(*n));
        if (!n)
            return NULL;
        c->nodes = n;
        c->node_cap = cap;
    }
    knc_node *n = &c->nodes[c->node_count++];
    memset(n, 0, sizeof(*n));
    n->node_id = node_id;
    return n;
}

/* The leader of p in md, or -1 (then *epoch is -1 too). */
static int32_t knc_leader(const knw_metadata *md, const knc_part *p, int32_t *epoch,
                          kn_uuid *topic_id) {
    *epoch = -1;
    const knw_topic *t = knw_metadata_topic(md, p->topic);
    if (!t || p->partition >= t->partition_count)
        return -1;
    const knw_partition *kp = &t->partitions[p->partition];
    if (kp->partition != p->partition)
        return -1;
    *epoch = kp->leader_epoch;
    if (topic_id)
        *topic_id = t->topic_id;
    return kp->leader;
}

/* KIP-392: the broker p is fetched from: the read replica its leader
 * named, while that is fresh and the broker is online in md and one of
 * p's replicas (as Java, which otherwise falls back to the leader);
 * else the leader (-1 when unknown, *epoch -1 too). */
static int32_t knc_fetch_node(const knw_metadata *md, const knc_part *p, int64_t now_ms,
                              int32_t *epoch) {
    int32_t leader = knc_leader(md, p, epoch, NULL);
    if (p->read_replica < 0 || leader < 0 || now_ms >= p->read_replica_until_ms ||
        !knw_metadata_broker(md, p->read_replica))
        return leader;
    const knw_partition *kp = &knw_metadata_topic(md, p->topic)->partitions[p->partition];
    bool listed = false;
    for (int32_t i = 0; i < kp->replica_count && !listed; i++)
        listed = kp->replicas[i] == p->read_replica;
    for (int32_t i = 0; i < kp->offline_count && listed; i++)
        listed = kp->offline[i] != p->read_replica;
    return listed ? p->read_replica : leader;
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
    return now > c->reset_duration_ms ? now - c->reset_duration_ms : 0;
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
static knc_req *knc_req_build(kn_consumer *c, const knw_metadata *md, int32_t node_id,
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

static int knc_fill_fetch(kn_consumer *c, const knw_metadata *md, knc_req *req, int max_wait_ms,
                          int32_t max_bytes) {
    kp_FetchRequest *f = &req->u.fetch;
    kp_FetchRequest_init(f);
    f->replica_id = -1;
    f->max_wait_ms = max_wait_ms;
    f->min_bytes = c->fetch_min_bytes;
    f->max_bytes = max_bytes;
    f->isolation_level = c->read_committed ? 1 : 0;
    f->rack_id.ptr = c->rack ? c->rack : "";
    f->rack_id.len = (int32_t)strlen(f->rack_id.ptr);
    knc_node *node = knc_node_get(c, req->node_id);
    if (!node)
        return KN_ERR__NOMEM;

    /* The session decides which partitions must be listed. */
    int32_t n = req->part_count;
    knc_sess_part *want = kn_arena_alloc(&req->arena, (size_t)n * sizeof(*want));
    bool *include = kn_arena_alloc(&req->arena, (size_t)n * sizeof(*include));
    if (!want || !include)
        return KN_ERR__NOMEM;
    for (int32_t i = 0; i < n; i++) {
        want[i].topic = req->names[req->parts[i].topic_idx];
        want[i].partition = req->parts[i].partition;
        want[i].offset = req->parts[i].offset;
    }
    knc_sess_part *forgotten;
    int32_t nforgotten;
    int rc = knc_session_plan(&node->session, want, n, req->ids_complete, include, &forgotten,
                              &nforgotten, &f->session_id, &f->session_epoch);
    if (rc != 0)
        return rc;
    req->sent_epoch = f->session_epoch;

    f->topics.items = kn_arena_calloc(&req->arena, (size_t)req->topic_count, sizeof(*f->topics.items));
    if (!f->topics.items)
        goto nomem;
    for (int32_t t = 0; t < req->topic_count; t++) {
        int32_t m = 0;
        for (int32_t i = req->topic_start[t]; i < req->topic_start[t + 1]; i++)
            m += include[i];
        if (!m)
            continue;
        kp_FetchRequest_FetchTopic *ft = &f->topics.items[f->topics.count++];
        ft->topic.ptr = req->names[t];
        ft->topic.len = (int32_t)strlen(req->names[t]);
        ft->topic_id = req->ids[t];
        ft->partitions.items = kn_arena_calloc(&req->arena, (size_t)m, sizeof(*ft->partitions.items));
        if (!ft->partitions.items)
            goto nomem;
        for (int32_t i = req->topic_start[t]; i < req->topic_start[t + 1]; i++) {
            if (!include[i])
                continue;
            const knc_req_part *rp = &req->parts[i];
            kp_FetchRequest_FetchPartition *fp = &ft->partitions.items[ft->partitions.count++];
            knc_part tmp = {.topic = req->names[t], .partition = rp->partition};
            int32_t epoch;
            knc_leader(md, &tmp, &epoch, NULL);
            fp->partition = rp->partition;
            fp->current_leader_epoch = epoch;
            fp->fetch_offset = rp->offset;
            fp->last_fetched_epoch = -1;
            fp->log_start_offset = -1;
            fp->partition_max_bytes = c->max_partition_fetch_bytes;
            fp->high_watermark = INT64_MAX;
        }
    }
    if (nforgotten) {
        f->forgotten_topics_data.items =
            kn_arena_calloc(&req->arena, (size_t)nforgotten, sizeof(*f->forgotten_topics_data.items));
        if (!f->forgotten_topics_data.items)
            goto nomem;
        for (int32_t i = 0; i < nforgotten; i++) {
            kp_FetchRequest_ForgottenTopic *ff = NULL;
            for (int32_t k = 0; k < f->forgotten_topics_data.count && !ff; k++)
                if (strcmp(f->forgotten_topics_data.items[k].topic.ptr, forgotten[i].topic) == 0)
                    ff = &f->forgotten_topics_data.items[k];
            if (!ff) {
                ff = &f->forgotten_topics_data.items[f->forgotten_topics_data.count++];
                size_t len = strlen(forgotten[i].topic);
                char *name = kn_arena_alloc(&req->arena, len + 1);
                ff->partitions.items = kn_arena_calloc(&req->arena, (size_t)nforgotten, sizeof(int32_t));
                if (!name || !ff->partitions.items)
                    goto nomem;
                memcpy(name, forgotten[i].topic, len + 1);
                ff->topic.ptr = name;
                ff->topic.len = (int32_t)len;
                const knw_topic *mt = knw_metadata_topic(md, name);
                if (mt)
                    ff->topic_id = mt->topic_id;
            }
            ff->partitions.items[ff->partitions.count++] = forgotten[i].partition;
        }
    }
    knc_session_forgotten_free(forgotten, nforgotten);
    return 0;
nomem:
    knc_session_forgotten_free(forgotten, nforgotten);
    knc_session_reset(&node->session); /* what we told nobody must not be assumed */
    return KN_ERR__NOMEM;
}

static int knc_fill_list_offsets(kn_consumer *c, knc_req *req) {
    kp_ListOffsetsRequest *r = &req->u.list_offsets;
    kp_ListOffsetsRequest_init(r);
    r->replica_id = -1;
    r->isolation_level = c->read_committed ? 1 : 0;
    r->timeout_ms = c->request_timeout_ms;
    r->topics.count = req->topic_count;
    r->topics.items = kn_arena_calloc(&req->arena, (size_t)req->topic_count, sizeof(*r->topics.items));
    if (!r->topics.items)
        return KN_ERR__NOMEM;
    for (int32_t t = 0; t < req->topic_count; t++) {
        kp_ListOffsetsRequest_ListOffsetsTopic *lt = &r->topics.items[t];
        lt->name.ptr = req->names[t];
        lt->name.len = (int32_t)strlen(req->names[t]);
        int32_t n = req->topic_start[t + 1] - req->topic_start[t];
        lt->partitions.count = n;
        lt->partitions.items = kn_arena_calloc(&req->arena, (size_t)n, sizeof(*lt->partitions.items));
        if (!lt->partitions.items)
            return KN_ERR__NOMEM;
        for (int32_t j = 0; j < n; j++) {
            const knc_req_part *rp = &req->parts[req->topic_start[t] + j];
            lt->partitions.items[j].partition_index = rp->partition;
            lt->partitions.items[j].current_leader_epoch = -1;
            /* The reset strategy travels in rp->offset (-2 earliest, -1 latest). */
            lt->partitions.items[j].timestamp = rp->offset;
        }
    }
    return 0;
}

/* The request part for (topic index, partition), or NULL: a binary
 * search in the topic's by-partition index (a scan per answered
 * partition made 1,000 partitions cost half a million compares). */
static const knc_req_part *knc_req_find(const knc_req *req, int32_t t, int32_t partition) {
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

static int32_t knc_req_topic_by_name(const knc_req *req, kn_str name) {
    if (name.len < 0)
        return -1;
    for (int32_t t = 0; t < req->topic_count; t++)
        if (strlen(req->names[t]) == (size_t)name.len &&
            memcmp(req->names[t], name.ptr, (size_t)name.len) == 0)
            return t;
    return -1;
}

static int32_t knc_req_topic_by_id(const knc_req *req, const kn_uuid *id) {
    for (int32_t t = 0; t < req->topic_count; t++)
        if (memcmp(req->ids[t].b, id->b, 16) == 0)
            return t;
    return -1;
}

/* The assigned partition a request part was for, if it is still the
 * same assignment of it. */
static knc_part *knc_req_owner(kn_consumer *c, const knc_req *req, const knc_req_part *rp) {
    const char *name = req->names[rp->topic_idx];
    knc_part *p = knc_find_part(c, name, strlen(name), rp->partition);
    return p && p->id == rp->part_id ? p : NULL;
}

/* ---- Fetch answers ------------------------------------------------------ */

/* KIP-392 bookkeeping for one partition of a Fetch answered by node.
 * A leader may name a read replica (it then returns no records): p is
 * fetched from there from the next tick on. An error from the read
 * replica sends p back to its leader without acting on it, as Java
 * does: the leader decides (a follower behind the leader answers
 * OFFSET_OUT_OF_RANGE for an offset that exists, which must not reset
 * the position). Returns true when the answer is to be ignored. */
static bool knc_read_replica_answer(kn_consumer *c, knc_part *p, int32_t node,
                                    const kp_FetchResponse_PartitionData *pd, knc_action act,
                                    int64_t now_ms) {
    if (p->read_replica >= 0 && p->read_replica == node) {
        if (act == KNC_ACT_OK)
            return false;
        kn_log(knc_logger(c), KN_LOG_INFO,
               "%s [%d]: read replica %d answered %s; fetching from the leader again",
               p->topic, (int)p->partition, (int)node, kn_err_name(pd->error_code));
        p->read_replica = -1;
        return true;
    }
    if (pd->preferred_read_replica >= 0 && pd->preferred_read_replica != node) {
        if (p->read_replica != pd->preferred_read_replica)
            kn_log(knc_logger(c), KN_LOG_DEBUG, "%s [%d]: leader %d names read replica %d (client.rack %s)",
                   p->topic, (int)p->partition, (int)node, (int)pd->preferred_read_replica,
                   c->rack ? c->rack : "");
        p->read_replica = pd->preferred_read_replica;
        p->read_replica_until_ms = now_ms + c->metadata_max_age_ms;
    }
    return false;
}

static void knc_fetch_done(knw_client *client, knw_resp *resp, void *opaque) {
    knc_req *req = opaque;
    kn_consumer *c = req->c;
    bool refresh = false;
    knc_buf *buf = NULL;
    int64_t now = knw_now_ms();

    pthread_mutex_lock(&c->lock);
    knc_node *node = knc_node_get(c, req->node_id);
    const kp_FetchResponse *r = resp->body;
    c->stats.fetch_requests++;
    c->stats.fetch_latency_us_total += resp->latency_us;
    if (resp->latency_us > c->stats.fetch_latency_us_max)
        c->stats.fetch_latency_us_max = resp->latency_us;
    c->stats.fetch_response_bytes += (int64_t)resp->raw_len;
    if (req->sent_epoch > 0)
        c->stats.fetch_incremental++;
    if (node) {
        node->fetch_inflight = false;
        node->inflight_bytes = 0;
        node->overdue_warned = false;
        int serr = resp->err ? resp->err : !r ? KN_ERR__PROTOCOL : r->error_code;
        knc_session_answer(&node->session, req->sent_epoch, serr, r ? r->session_id : 0);
    }
    /* A Fetch to a read replica that failed as a whole (the broker went
     * away, a session error) sends its partitions back to their leaders,
     * as Java does. */
    bool whole_failed = resp->err || !r || r->error_code != 0;
    bool via_replica = false;
    for (int32_t i = 0; i < req->part_count; i++) {
        knc_part *p = knc_req_owner(c, req, &req->parts[i]);
        if (!p)
            continue;
        p->fetch_inflight = false;
        if (p->read_replica >= 0 && p->read_replica == req->node_id) {
            via_replica = true;
            if (whole_failed)
                p->read_replica = -1;
        }
    }
    if (via_replica)
        c->stats.fetch_read_replica++;
    if (c->closed) {
        /* nothing to update */
    } else if (resp->err || !r || r->error_code != 0) {
        int err = resp->err ? resp->err : r ? r->error_code : KN_ERR__PROTOCOL;
        c->stats.fetch_errors++;
        if (node)
            node->backoff_until_ms = now + c->retry_backoff_ms;
        refresh = err != KN_ERR__CLOSED;
    } else {
        for (int32_t ti = 0; ti < r->responses.count; ti++) {
            const kp_FetchResponse_FetchableTopicResponse *tr = &r->responses.items[ti];
            int32_t t = resp->api_version >= 13 ? knc_req_topic_by_id(req, &tr->topic_id)
                                                 : knc_req_topic_by_name(req, tr->topic);
            if (t < 0)
                continue;
            for (int32_t pi = 0; pi < tr->partitions.count; pi++) {
                const kp_FetchResponse_PartitionData *pd = &tr->partitions.items[pi];
                const knc_req_part *rp = knc_req_find(req, t, pd->partition_index);
                knc_part *p = rp ? knc_req_owner(c, req, rp) : NULL;
                if (!p || p->gen != rp->gen || p->state != KNC_POS_VALID || p->needs_validation ||
                    p->ahead || knc_part_fetch_offset(p) != rp->offset)
                    continue;
                if (pd->high_watermark >= 0)
                    p->high_watermark = pd->high_watermark;
                if (pd->last_stable_offset >= 0)
                    p->last_stable_offset = pd->last_stable_offset;
                knc_action act = knc_fetch_error_action(pd->error_code);
                if (knc_read_replica_answer(c, p, req->node_id, pd, act, now)) {
                    refresh |= act == KNC_ACT_REFRESH_METADATA;
                    continue;
                }
                if (p->fetched && act != KNC_ACT_OK) {
                    /* Read-ahead: the buffered records come first. */
                    refresh |= act == KNC_ACT_REFRESH_METADATA;
                    p->retry_at_ms = now + c->retry_backoff_ms;
                    continue;
                }
                switch (act) {
                case KNC_ACT_OK:
                    if (pd->records.len <= 0)
                        break;
                    if (!buf) {
                        size_t size = resp->raw_len;
                        buf = knc_buf_from_resp(resp);
                        resp = NULL;
                        if (!buf)
                            goto done;
                        /* Counted against the fetch-buffer budget while
                         * any slice still points into it. */
                        buf->size = size;
                        buf->held = &c->fetch_held;
                    }
                    knc_aborted stack[16], *ab = stack;
                    int32_t nab = pd->aborted_transactions.count > 0 ? pd->aborted_transactions.count : 0;
                    if (nab > 16 && !(ab = kn_malloc((size_t)nab * sizeof(*ab))))
                        break;
                    for (int32_t k = 0; k < nab; k++) {
                        ab[k].producer_id = pd->aborted_transactions.items[k].producer_id;
                        ab[k].first_offset = pd->aborted_transactions.items[k].first_offset;
                    }
                    knc_fetched *f = knc_fetched_new(buf, pd->records.ptr,
                                                     (size_t)pd->records.len, rp->offset, ab, nab);
                    if (f)
                        knc_bpo_add(&c->fetch_bpo, f->len, f->fetch_offset, f->end_offset);
                    if (p->fetched)
                        p->ahead = f;
                    else
                        p->fetched = f;
                    if (ab != stack)
                        kn_free(ab);
                    break;
                case KNC_ACT_REFRESH_METADATA:
                    refresh = true;
                    /* fall through */
                case KNC_ACT_RETRY:
                    p->retry_at_ms = now + c->retry_backoff_ms;
                    break;
                case KNC_ACT_RESET:
                    if (c->reset == KNC_RESET_NONE)
                        knc_part_fail(p, KN_ERR_OFFSET_OUT_OF_RANGE,
                                      "%s [%d]: fetch offset %lld is out of range (log end %lld) "
                                      "and auto.offset.reset=none",
                                      p->topic, (int)p->partition, (long long)rp->offset,
                                      (long long)pd->high_watermark);
                    else
                        knc_part_reset(p, c->reset);
                    break;
                case KNC_ACT_FAIL:
                    knc_part_fail(p, pd->error_code, "%s [%d]: fetch at offset %lld failed: %s",
                                  p->topic, (int)p->partition, (long long)rp->offset,
                                  kn_err_name(pd->error_code));
                    break;
                }
            }
        }
    }
done:;
    bool closed = c->closed;
    knc_signal(c);
    pthread_mutex_unlock(&c->lock);
    if (buf)
        knc_buf_release(buf);
    else
        knw_resp_free(resp);
    if (refresh)
        knw_metadata_request_refresh(client, false, "consumer fetch error");
    /* Tick again right after this round of I/O: the node is free, and
     * the partitions just filled may already read ahead. */
    if (!closed)
        knw_wakeup(client);
    knc_req_free(req);
}

/* ---- ListOffsets answers ---------------------------------------------- */

static void knc_list_offsets_done(knw_client *client, knw_resp *resp, void *opaque) {
    knc_req *req = opaque;
    kn_consumer *c = req->c;
    bool refresh = false;
    int64_t now = knw_now_ms();
    const kp_ListOffsetsResponse *r = resp->body;

    pthread_mutex_lock(&c->lock);
    if (!resp->err && r && !c->closed) {
        for (int32_t ti = 0; ti < r->topics.count; ti++) {
            const kp_ListOffsetsResponse_ListOffsetsTopicResponse *tr = &r->topics.items[ti];
            int32_t t = knc_req_topic_by_name(req, tr->name);
            if (t < 0)
                continue;
            for (int32_t pi = 0; pi < tr->partitions.count; pi++) {
                const kp_ListOffsetsResponse_ListOffsetsPartitionResponse *pr =
                    &tr->partitions.items[pi];
                const knc_req_part *rp = knc_req_find(req, t, pr->partition_index);
                knc_part *p = rp ? knc_req_owner(c, req, rp) : NULL;
                if (!p || p->gen != rp->gen || p->state != KNC_POS_RESETTING)
                    continue;
                p->reset_inflight = false;
                if (pr->error_code == 0 && pr->offset >= 0) {
                    knc_part_reset_done(p, rp->gen, pr->offset, pr->leader_epoch);
                    p->reset_fallback = false;
                } else if (pr->error_code == 0 && rp->offset >= 0) {
                    /* by_duration: no record at or after the timestamp,
                     * so reading starts at the log end (asked at once). */
                    p->state = KNC_POS_NEED_RESET;
                    p->reset_fallback = true;
                    p->retry_at_ms = 0;
                } else if (pr->error_code == 0 || kn_err_is_retriable(pr->error_code)) {
                    p->state = KNC_POS_NEED_RESET;
                    p->retry_at_ms = now + c->retry_backoff_ms;
                    refresh = true;
                } else {
                    knc_part_fail(p, pr->error_code, "%s [%d]: looking up the %s offset failed: %s",
                                  p->topic, (int)p->partition,
                                  rp->offset == -2   ? "earliest"
                                  : rp->offset == -1 ? "latest"
                                                     : "by_duration",
                                  kn_err_name(pr->error_code));
                }
            }
        }
    }
    /* Whatever was not answered goes back to waiting for a reset. */
    for (int32_t i = 0; i < req->part_count; i++) {
        knc_part *p = knc_req_owner(c, req, &req->parts[i]);
        if (p && p->gen == req->parts[i].gen && p->state == KNC_POS_RESETTING) {
            p->state = KNC_POS_NEED_RESET;
            p->reset_inflight = false;
            p->retry_at_ms = now + c->retry_backoff_ms;
            refresh = true;
        }
    }
    bool closed = c->closed;
    knc_signal(c);
    pthread_mutex_unlock(&c->lock);
    knw_resp_free(resp);
    if (refresh)
        knw_metadata_request_refresh(client, false, "consumer offset reset retry");
    /* Positioned partitions can be fetched now, not at the next tick. */
    if (!closed)
        knw_wakeup(client);
    knc_req_free(req);
}

/* ---- the tick ------------------------------------------------------------ */

/* The fetch-buffer budget for one tick (Fetch planning only). */
typedef struct knc_budget {
    int64_t avail;     /* budget - held - in flight; may go negative */
    int32_t per_fetch; /* a Fetch's max_bytes when the budget allows */
    int32_t low;       /* below this, no read-ahead; the floor of a Fetch */
} knc_budget;

/* Adds one request per leader for the chosen partitions to *out,
 * marking them in flight. Consumes leaders[]. Fetches take their
 * max_bytes out of *budget. */
static void knc_plan(kn_consumer *c, const knw_metadata *md, int16_t api_key, knc_part **chosen,
                     int32_t *leaders, int32_t n, int max_wait_ms, knc_budget *budget,
                     int64_t now_ms, knc_req **out) {
    knc_part **group = n > 0 ? kn_malloc((size_t)n * sizeof(*group)) : NULL;
    if (!group)
        return;
    for (int32_t i = 0; i < n; i++) {
        if (leaders[i] < 0)
            continue;
        int32_t node = leaders[i];
        int32_t m = 0;
        for (int32_t j = i; j < n; j++)
            if (leaders[j] == node) {
                group[m++] = chosen[j];
                leaders[j] = -1;
            }
        int32_t max_bytes = 0;
        if (api_key == KP_API_FETCH) {
            /* What the budget has left, but never less than the floor:
             * the fetcher only plans a Fetch below it when nothing else
             * could free memory (see the tick). */
            int64_t mb = budget->avail < budget->per_fetch ? budget->avail : budget->per_fetch;
            max_bytes = (int32_t)(mb < budget->low ? budget->low : mb);
        }
        knc_req *req = knc_req_build(c, md, node, api_key, group, m);
        int rc = req ? (api_key == KP_API_FETCH ? knc_fill_fetch(c, md, req, max_wait_ms, max_bytes)
                                                 : knc_fill_list_offsets(c, req))
                     : KN_ERR__NOMEM;
        if (rc != 0) {
            knc_req_free(req);
            continue;
        }
        for (int32_t j = 0; j < m; j++) {
            if (api_key == KP_API_FETCH) {
                group[j]->fetch_inflight = true;
            } else {
                group[j]->state = KNC_POS_RESETTING;
                group[j]->reset_inflight = true;
            }
        }
        if (api_key == KP_API_FETCH) {
            knc_node *kn = knc_node_get(c, node);
            if (kn) {
                kn->fetch_inflight = true;
                kn->inflight_bytes = max_bytes;
                kn->sent_ms = now_ms;
                kn->overdue_warned = false;
            }
            budget->avail -= max_bytes;
        }
        req->next = *out;
        *out = req;
    }
    kn_free(group);
}

size_t knc_fetch_budget(int max_partition_fetch_bytes) {
    /* Six partition-sized slices: a Fetch of three (half the budget)
     * travels while the previous one drains. Measured on loopback (see
     * docs/consumer.md): four slices cost throughput, eight only memory. */
    size_t b = (size_t)(max_partition_fetch_bytes > 0 ? max_partition_fetch_bytes : 1) * 6;
    return b > (size_t)INT32_MAX ? (size_t)INT32_MAX : b;
}

/* This tick's budget: what the held slices and the Fetches in flight
 * leave of c->fetch_budget, and the per-Fetch size (half the budget, at
 * most fetch.max.bytes, so one Fetch can travel while one drains). */
static void knc_budget_init(const kn_consumer *c, knc_budget *b) {
    int64_t inflight = 0;
    for (size_t i = 0; i < c->node_count; i++)
        if (c->nodes[i].fetch_inflight)
            inflight += c->nodes[i].inflight_bytes;
    b->avail = (int64_t)c->fetch_budget - (int64_t)c->fetch_held - inflight;
    int64_t per = (int64_t)(c->fetch_budget / 2);
    if (per > c->fetch_max_bytes)
        per = c->fetch_max_bytes;
    b->per_fetch = (int32_t)(per > 0 ? per : 1);
    b->low = b->per_fetch / 4 > 0 ? b->per_fetch / 4 : 1;
}

/* Cheap checks that only log (they change nothing, so they can never
 * cause a double delivery): a Fetch unanswered long past
 * fetch.max.wait.ms (the wire layer's request timeout recovers it), and
 * a partition left out of Fetches to its leader while it had nothing
 * buffered, nothing in flight and data known past its fetch offset. */
static void knc_safety_checks(kn_consumer *c, const knw_metadata *md, int64_t now_ms, const knc_req *sent) {
    for (size_t i = 0; i < c->node_count; i++) {
        knc_node *node = &c->nodes[i];
        int64_t waited = now_ms - node->sent_ms;
        if (node->fetch_inflight && !node->overdue_warned && waited > (int64_t)c->fetch_max_wait_ms + 10000) {
            node->overdue_warned = true;
            kn_log(knc_logger(c), KN_LOG_WARN,
                   "Fetch to broker %d unanswered for %lld ms (fetch.max.wait.ms %d); "
                   "request.timeout.ms (%d) will fail and retry it",
                   (int)node->node_id, (long long)waited, c->fetch_max_wait_ms, c->request_timeout_ms);
        }
    }
    bool any = false;
    for (const knc_req *r = sent; r && !any; r = r->next)
        any = r->api_key == KP_API_FETCH;
    for (size_t i = 0; i < c->part_count; i++) {
        knc_part *p = c->parts[i];
        if (p->fetch_inflight) {
            p->skipped_fetches = 0;
            continue;
        }
        if (!any || p->fetched || p->windowed_out || !knc_part_fetchable(p) ||
            now_ms < p->retry_at_ms || p->high_watermark <= knc_part_fetch_offset(p))
            continue;
        int32_t epoch;
        int32_t leader = knc_fetch_node(md, p, now_ms, &epoch);
        bool skipped = false;
        for (const knc_req *r = sent; r && !skipped; r = r->next)
            skipped = r->api_key == KP_API_FETCH && r->node_id == leader;
        if (skipped && ++p->skipped_fetches == 3)
            kn_log(knc_logger(c), KN_LOG_WARN,
                   "%s [%d] left out of 3 Fetches to its broker %d while fetchable at "
                   "offset %lld with the log end at %lld",
                   p->topic, (int)p->partition, (int)leader, (long long)knc_part_fetch_offset(p),
                   (long long)p->high_watermark);
    }
}

static bool knc_node_gated(const int32_t *gated, int32_t ng, int32_t node) {
    for (int32_t i = 0; i < ng; i++)
        if (gated[i] == node)
            return true;
    return false;
}

int knc_fetcher_tick(knw_client *client, int64_t now_ms, void *opaque) {
    kn_consumer *c = opaque;
    knc_req *reqs = NULL;
    bool refresh = false;
    knc_offsets_plan plan;
    void *vplan = NULL;
    knw_metadata *md = knw_metadata_get(client);

    pthread_mutex_lock(&c->lock);
    if (c->closed || knw_client_fatal(client, NULL, 0)) {
        /* Fatal (authentication failed): wake a waiting poll to say so. */
        knc_signal(c);
        pthread_mutex_unlock(&c->lock);
        if (md)
            knw_metadata_release(md);
        return -1;
    }
    knc_offsets_tick(c, now_ms, &plan);
    if (c->part_count == 0) {
        pthread_mutex_unlock(&c->lock);
        if (md)
            knw_metadata_release(md);
        knc_offsets_send(c, client, &plan);
        return c->group_id ? 100 : -1;
    }
    if (!md) {
        pthread_mutex_unlock(&c->lock);
        knc_offsets_send(c, client, &plan);
        knw_metadata_request_refresh(client, false, "consumer needs leaders");
        return 100;
    }
    size_t n = c->part_count;
    knc_part **chosen = kn_malloc(n * sizeof(*chosen));
    int32_t *leaders = kn_malloc(n * sizeof(*leaders));
    int32_t *gated = kn_malloc(n * sizeof(*gated));
    if (!chosen || !leaders || !gated)
        goto out;

    /* 1. Offset resets, one ListOffsets per leader. */
    int32_t m = 0;
    for (size_t i = 0; i < n; i++) {
        knc_part *p = c->parts[i];
        if (!knc_part_wants_reset(p, now_ms))
            continue;
        int32_t epoch;
        int32_t leader = knc_leader(md, p, &epoch, NULL);
        if (leader < 0) {
            refresh = true;
            p->retry_at_ms = now_ms + c->retry_backoff_ms;
            continue;
        }
        chosen[m] = p;
        leaders[m++] = leader;
    }
    knc_plan(c, md, KP_API_LIST_OFFSETS, chosen, leaders, m, 0, NULL, now_ms, &reqs);

    /* 2. KIP-320: positions to validate after a leader epoch change. */
    vplan = knc_validate_plan(c, md, now_ms);

    /* 3. Fetches, within the fetch-buffer budget (knc_budget_init):
     * read-ahead only while the held and in-flight bytes leave at least
     * the low-water mark; a partition with nothing buffered is fetched
     * under the same rule, unless no unpaused partition has anything to
     * drain (then memory can only come back through fetching: paused or
     * failed partitions hold it), so the budget never stalls anyone.
     * Brokers leading an unpaused partition whose buffer cannot take
     * more wait (the gate). */
    knc_budget budget;
    knc_budget_init(c, &budget);
    bool drainable = false;
    for (size_t i = 0; i < n && !drainable; i++) {
        const knc_part *p = c->parts[i];
        drainable = p->fetched && !p->paused && p->state == KNC_POS_VALID;
    }
    bool ahead_ok = budget.avail >= budget.low;
    bool first_ok = ahead_ok || !drainable;
    int32_t ng = 0;
    for (size_t i = 0; i < n; i++) {
        knc_part *p = c->parts[i];
        if (p->fetched && !p->paused && p->state == KNC_POS_VALID &&
            !(ahead_ok && knc_part_fetchable(p)) && !p->fetch_inflight) {
            int32_t epoch;
            int32_t leader = knc_fetch_node(md, p, now_ms, &epoch);
            if (leader >= 0 && !knc_node_gated(gated, ng, leader))
                gated[ng++] = leader;
        }
    }
    /* The window (window.h): per leader, partitions with data waiting
     * are listed until their estimated bytes cover twice what a Fetch
     * may carry; the next Fetch starts at the first one left out. */
    for (size_t i = 0; i < c->node_count; i++)
        c->nodes[i].window_listed = 0;
    int64_t window_target = 2 * (int64_t)budget.per_fetch;
    size_t cut = n; /* rotation index of the first partition left out */
    m = 0;
    size_t start = c->fetch_next % n;
    for (size_t k = 0; k < n; k++) {
        knc_part *p = c->parts[(start + k) % n];
        p->windowed_out = false;
        if (!knc_part_fetchable(p) || now_ms < p->retry_at_ms || (p->fetched && !ahead_ok) ||
            (!p->fetched && !first_ok))
            continue;
        int32_t epoch;
        int32_t leader = knc_fetch_node(md, p, now_ms, &epoch);
        if (leader < 0) {
            refresh = true;
            p->retry_at_ms = now_ms + c->retry_backoff_ms;
            continue;
        }
        knc_node *node = knc_node_get(c, leader);
        if (!node || node->fetch_inflight || now_ms < node->backoff_until_ms ||
            knc_node_gated(gated, ng, leader))
            continue;
        int64_t log_end = c->read_committed && p->last_stable_offset >= 0 ? p->last_stable_offset
                                                                          : p->high_watermark;
        int64_t backlog = knc_backlog_bytes(&c->fetch_bpo, knc_part_fetch_offset(p), log_end,
                                            c->max_partition_fetch_bytes);
        if (!knc_window_take(&node->window_listed, window_target, backlog)) {
            p->windowed_out = true;
            if (cut == n)
                cut = k;
            continue;
        }
        chosen[m] = p;
        leaders[m++] = leader;
    }
    if (m > 0) {
        /* Past the window's end when it cut, else one step: either way
         * the lead moves, and a cut Fetch's successor lists what it left. */
        c->fetch_next = (start + (cut < n ? cut : 1)) % n;
        /* The full fetch.max.wait.ms always, as Java does: poll returns
         * at its own deadline without the Fetch, and an answer comes as
         * soon as data lands. Clamping it to poll's budget made an idle
         * consumer polling every 100 ms send ten Fetches a second. */
        knc_plan(c, md, KP_API_FETCH, chosen, leaders, m, c->fetch_max_wait_ms, &budget, now_ms, &reqs);
    }
    knc_safety_checks(c, md, now_ms, reqs);
out:
    pthread_mutex_unlock(&c->lock);
    knc_offsets_send(c, client, &plan);
    knc_validate_send(client, vplan);
    kn_free(chosen);
    kn_free(leaders);
    kn_free(gated);

    while (reqs) {
        knc_req *req = reqs;
        reqs = req->next;
        req->next = NULL;
        /* Each completes once through its callback, failures included,
         * which undoes the in-flight marks. */
        if (req->api_key == KP_API_FETCH) {
            /* Topic ids need v13+; without them stay at v12 (names). */
            int timeout = c->request_timeout_ms + req->u.fetch.max_wait_ms;
            knw_send(client, req->node_id, KP_API_FETCH, 4, req->ids_complete ? -1 : 12, &req->u.fetch,
                     timeout, knc_fetch_done, req);
        } else {
            knw_send(client, req->node_id, KP_API_LIST_OFFSETS, 1, -1, &req->u.list_offsets, -1,
                     knc_list_offsets_done, req);
        }
    }
    if (md)
        knw_metadata_release(md);
    if (refresh)
        knw_metadata_request_refresh(client, false, "consumer: partition leader unknown");
    return 50;
}
