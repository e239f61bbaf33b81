/*
 * offsets.c: committed offsets for a consumer with group.id. A manually
 * assigned consumer's commits carry generation -1 and an empty member
 * id (as Java's do); a subscribed member's carry its generation or
 * member epoch and member id (group/). The coordinator found here is
 * also the one the group protocol talks to.
 *
 * Owns three flows, all against the group coordinator (found through
 * the client's coordinator table, core/wire/coordinator.h, forgotten
 * after an error kn_err_is_coordinator names or a lost connection,
 * retried while it loads):
 *
 *  - initial positions: partitions in NEED_COMMITTED are looked up with
 *    one OffsetFetch at a time, from the network-thread ticker;
 *  - commits: sync and async commits share ONE FIFO queue, and only its
 *    head is ever in flight, so commits land strictly in call order (a
 *    slow earlier commit can never overwrite a later one). Finished
 *    async commits wait on a done list until poll runs their callbacks
 *    on the application thread; a sync commit is finished in place for
 *    its waiter;
 *  - committed(): a blocking OffsetFetch on the application thread.
 *
 * Versions are capped at the name-keyed ones (FindCoordinator v3,
 * OffsetFetch v7, OffsetCommit v9): one group, topics by name.
 */
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "consumer/consumer_metrics.h"
#include "consumer/assignment.h"
#include "consumer/consumer_int.h"
#include "consumer/offsets.h"
#include "error.h"
#include "kn_alloc.h"
#include "log.h"
#include "proto/generated/kp_apis.h"
#include "wire/coordinator.h"
#include "proto/generated/kp_offset_commit.h"
#include "proto/generated/kp_offset_fetch.h"

#define KNC_OFFSET_FETCH_MAX     7
#define KNC_OFFSET_COMMIT_MAX    9

typedef struct knc_commit {
    kn_consumer *c;
    kn_topic_partition_list *offsets; /* owned; per-entry errors filled */
    kn_consumer_commit_cb *cb;
    void *opaque;
    bool sync;
    bool finished;    /* sync: the answer is in */
    bool abandoned;   /* sync: the waiter timed out; whoever finishes frees */
    bool retry_stale; /* the commit before a revoke: STALE_MEMBER_EPOCH is retried */
    bool auto_commit; /* queued by auto-commit (not by the application) */
    void (*pre_revoke)(kn_consumer *c, int err); /* the group waits for it before revoking */
    int err;
    int64_t deadline_ms;
    int32_t node_id;
    kn_arena arena;
    kp_OffsetCommitRequest req;
    struct knc_commit *next;
} knc_commit;

typedef struct knc_fetch_part {
    uint64_t part_id;
    uint32_t gen;
} knc_fetch_part;

typedef struct knc_ofetch_req {
    kn_consumer *c;
    kn_arena arena;
    kp_OffsetFetchRequest req;
    knc_fetch_part *parts; /* aligned with the request's partitions, topic by topic */
    int32_t node_id;
} knc_ofetch_req;

static kn_str knc_s(const char *s) {
    kn_str r = {s, s ? (int32_t)strlen(s) : -1};
    return r;
}

static bool knc_retry_error(int err) {
    return kn_err_is_coordinator(err) || err == KN_ERR_COORDINATOR_LOAD_IN_PROGRESS ||
           err == KN_ERR_UNSTABLE_OFFSET_COMMIT || err == KN_ERR_REQUEST_TIMED_OUT;
}

/* ---- the commit queue --------------------------------------------------- */

static void knc_commit_free(knc_commit *cm) {
    if (!cm)
        return;
    kn_topic_partition_list_destroy(cm->offsets);
    kn_arena_destroy(&cm->arena);
    kn_free(cm);
}

/* Puts the member's identity (generation or member epoch, member id,
 * group.instance.id) into cm's request, so the coordinator rejects a
 * fenced member's commit. The strings are copied into cm's arena. */
static int knc_commit_set_identity(kn_consumer *c, knc_commit *cm) {
    kp_OffsetCommitRequest *r = &cm->req;
    const char *member = c->member.member_id, *instance = c->member.instance_id;
    r->generation_id_or_member_epoch = c->member.epoch;
    size_t mlen = strlen(member), ilen = instance ? strlen(instance) : 0;
    char *mcopy = kn_arena_alloc(&cm->arena, mlen + ilen + 2);
    if (!mcopy)
        return KN_ERR__NOMEM;
    memcpy(mcopy, member, mlen + 1);
    r->member_id = knc_s(mcopy);
    r->group_instance_id.ptr = NULL;
    r->group_instance_id.len = -1;
    if (instance) {
        memcpy(mcopy + mlen + 1, instance, ilen + 1);
        r->group_instance_id = knc_s(mcopy + mlen + 1);
    }
    return 0;
}

/* Builds the OffsetCommit request for cm->offsets (grouped by topic). */
static int knc_commit_build(kn_consumer *c, knc_commit *cm) {
    kp_OffsetCommitRequest *r = &cm->req;
    kp_OffsetCommitRequest_init(r);
    r->group_id = knc_s(c->member.group_id);
    int err = knc_commit_set_identity(c, cm);
    if (err)
        return err;
    size_t n = kn_topic_partition_list_count(cm->offsets);
    r->topics.items = kn_arena_calloc(&cm->arena, n ? n : 1, sizeof(*r->topics.items));
    if (!r->topics.items)
        return KN_ERR__NOMEM;
    r->topics.count = 0;
    for (size_t i = 0; i < n; i++) {
        const char *topic = kn_topic_partition_list_topic(cm->offsets, i);
        int32_t t;
        for (t = 0; t < r->topics.count; t++)
            if (strcmp(r->topics.items[t].name.ptr, topic) == 0)
                break;
        if (t < r->topics.count)
            continue;
        kp_OffsetCommitRequest_OffsetCommitRequestTopic *rt = &r->topics.items[r->topics.count++];
        rt->name = knc_s(topic);
        size_t m = 0;
        for (size_t j = i; j < n; j++)
            m += strcmp(kn_topic_partition_list_topic(cm->offsets, j), topic) == 0;
        rt->partitions.items = kn_arena_calloc(&cm->arena, m, sizeof(*rt->partitions.items));
        if (!rt->partitions.items)
            return KN_ERR__NOMEM;
        for (size_t j = i; j < n; j++) {
            if (strcmp(kn_topic_partition_list_topic(cm->offsets, j), topic) != 0)
                continue;
            kp_OffsetCommitRequest_OffsetCommitRequestPartition *rp =
                &rt->partitions.items[rt->partitions.count++];
            rp->partition_index = kn_topic_partition_list_partition(cm->offsets, j);
            rp->committed_offset = kn_topic_partition_list_offset(cm->offsets, j);
            rp->committed_leader_epoch = kn_topic_partition_list_leader_epoch(cm->offsets, j);
            const char *md = kn_topic_partition_list_metadata(cm->offsets, j);
            rp->committed_metadata = knc_s(md ? md : "");
        }
    }
    return 0;
}

static void knc_commit_complete(kn_consumer *c, knc_commit *cm, int err);

/* Every positioned partition's position (lock held). NULL on NOMEM. */
static kn_topic_partition_list *knc_positions(kn_consumer *c) {
    kn_topic_partition_list *l = kn_topic_partition_list_new();
    for (size_t i = 0; l && i < knc_table_count(&c->table); i++) {
        const knc_part *p = knc_table_at(&c->table, i);
        if (p->state != KNC_POS_VALID)
            continue;
        int at = kn_topic_partition_list_add(l, p->topic, p->partition);
        if (at < 0) {
            kn_topic_partition_list_destroy(l);
            return NULL;
        }
        kn_topic_partition_list_set_offset(l, (size_t)at, p->position);
        kn_topic_partition_list_set_leader_epoch(l, (size_t)at, p->position_epoch);
    }
    return l;
}

/* Queues a commit (lock held). offsets is taken over. */
static knc_commit *knc_commit_enqueue(kn_consumer *c, kn_topic_partition_list *offsets,
                                      kn_consumer_commit_cb *cb, void *opaque, bool sync, int timeout_ms,
                                      int *err) {
    knc_commit *cm = kn_calloc(1, sizeof(*cm));
    if (!cm) {
        kn_topic_partition_list_destroy(offsets);
        *err = KN_ERR__NOMEM;
        return NULL;
    }
    kn_arena_init(&cm->arena, 1024);
    cm->c = c;
    cm->offsets = offsets;
    cm->cb = cb;
    cm->opaque = opaque;
    cm->sync = sync;
    cm->node_id = -1;
    cm->deadline_ms = knw_now_ms() + (timeout_ms < 0 ? c->cfg.default_api_timeout_ms : timeout_ms);
    if ((*err = knc_commit_build(c, cm)) != 0) {
        knc_commit_free(cm);
        return NULL;
    }
    if (kn_topic_partition_list_count(offsets) == 0) {
        /* Nothing to commit: no request (Java's sendOffsetCommitRequest
         * answers an empty map with success at once); an async commit's
         * callback still runs, from the next poll. */
        knc_commit_complete(c, cm, 0);
        return cm;
    }
    if (c->offsets.commit_tail)
        c->offsets.commit_tail->next = cm;
    else
        c->offsets.commit_head = cm;
    c->offsets.commit_tail = cm;
    return cm;
}

/* cm (off the queue) finished with err (lock held): a sync commit's
 * waiter sees it, an async one goes on the done list for poll. */
static void knc_commit_complete(kn_consumer *c, knc_commit *cm, int err) {
    cm->next = NULL;
    cm->err = err;
    if (cm->pre_revoke)
        cm->pre_revoke(c, err);
    if (err)
        c->stats.commit_errors++;
    else
        c->stats.commits++;
    if (cm->sync) {
        cm->finished = true;
        if (cm->abandoned)
            knc_commit_free(cm);
        return;
    }
    if (c->offsets.done_tail)
        c->offsets.done_tail->next = cm;
    else
        c->offsets.done_head = cm;
    c->offsets.done_tail = cm;
    knc_signal(c); /* its callback is due at the next poll */
}

/* Takes the head off the queue with its final error (lock held). */
static void knc_commit_finish(kn_consumer *c, int err) {
    knc_commit *cm = c->offsets.commit_head;
    c->offsets.commit_head = cm->next;
    if (!c->offsets.commit_head)
        c->offsets.commit_tail = NULL;
    knc_commit_complete(c, cm, err);
}

void knc_serve_commit_callbacks(kn_consumer *c) {
    for (;;) {
        pthread_mutex_lock(&c->lock);
        knc_commit *cm = c->offsets.done_head;
        if (cm) {
            c->offsets.done_head = cm->next;
            if (!c->offsets.done_head)
                c->offsets.done_tail = NULL;
        }
        pthread_mutex_unlock(&c->lock);
        if (!cm)
            return;
        if (cm->cb) {
            knc_cb_enter(c);
            cm->cb(c, cm->err, cm->offsets, cm->opaque);
            knc_cb_leave(c);
        }
        knc_commit_free(cm);
    }
}

void knc_maybe_auto_commit(kn_consumer *c, int64_t now_ms) {
    if (!c->member.group_id || !c->cfg.auto_commit || now_ms < c->offsets.next_auto_commit_ms)
        return;
    c->offsets.next_auto_commit_ms = now_ms + c->cfg.auto_commit_interval_ms;
    /* Best effort, like Java's: one auto-commit queued at a time. */
    for (knc_commit *cm = c->offsets.commit_head; cm; cm = cm->next)
        if (cm->auto_commit)
            return;
    kn_topic_partition_list *l = knc_positions(c);
    if (!l || kn_topic_partition_list_count(l) == 0) {
        kn_topic_partition_list_destroy(l);
        return;
    }
    int err;
    knc_commit *cm = knc_commit_enqueue(c, l, NULL, NULL, false, -1, &err);
    if (cm)
        cm->auto_commit = true;
}

bool knc_offsets_wait(kn_consumer *c, int64_t deadline_ms) {
    for (;;) {
        knc_serve_commit_callbacks(c);
        pthread_mutex_lock(&c->lock);
        bool idle = !c->offsets.commit_head && !c->offsets.done_head;
        int64_t now = knw_now_ms();
        if (idle || now >= deadline_ms) {
            pthread_mutex_unlock(&c->lock);
            return idle;
        }
        if (!c->offsets.done_head) {
            struct timespec ts;
            int64_t at = deadline_ms < now + 50 ? deadline_ms : now + 50;
            ts.tv_sec = (time_t)(at / 1000);
            ts.tv_nsec = (long)(at % 1000) * 1000000L;
            pthread_cond_timedwait(&c->cond, &c->lock, &ts);
        }
        pthread_mutex_unlock(&c->lock);
    }
}

void knc_offsets_close(kn_consumer *c) {
    pthread_mutex_lock(&c->lock);
    while (c->offsets.commit_head)
        knc_commit_finish(c, KN_ERR__CLOSED);
    c->offsets.commit_inflight = false;
    pthread_mutex_unlock(&c->lock);
    knc_serve_commit_callbacks(c);
}

void knc_offsets_destroy(kn_consumer *c) {
    while (c->offsets.commit_head) {
        knc_commit *cm = c->offsets.commit_head;
        c->offsets.commit_head = cm->next;
        knc_commit_free(cm);
    }
    c->offsets.commit_tail = NULL;
    while (c->offsets.done_head) {
        knc_commit *cm = c->offsets.done_head;
        c->offsets.done_head = cm->next;
        knc_commit_free(cm);
    }
    c->offsets.done_tail = NULL;
}

/* ---- answers (network thread) ------------------------------------------ */

bool knc_coord_failed(kn_consumer *c, int32_t node, int err) {
    if (!c->member.group_id || !knw_coord_failed(c->client, KNW_COORD_GROUP, c->member.group_id, node, err))
        return false;
    if (node < 0 || c->offsets.coord_id == node)
        c->offsets.coord_id = -1;
    return true;
}

/* Whether a commit refused with STALE_MEMBER_EPOCH on every failed
 * partition is sent again (lock held). Java's CommitRequestManager does
 * so only for the auto-commit before a revocation, and only while the
 * member has an epoch: the retry carries the newest epoch the heartbeat
 * has seen by then (the identity is taken at send time), and the
 * partitions are still owned (the revocation waits for this commit), so
 * the coordinator accepts it once the epochs agree. A user's commit_sync
 * and commit_async get the error, as in Java (CommitFailedException). */
static bool knc_commit_stale_retry(kn_consumer *c, knc_commit *cm, int64_t now) {
    if (!cm->retry_stale || now >= cm->deadline_ms || knc_closed(c))
        return false;
    int32_t epoch = c->member.epoch;
    if (epoch < 0)
        return false; /* fenced or left: no epoch to retry with */
    kn_log(knc_logger(c), KN_LOG_DEBUG,
           "group %s: OffsetCommit with member epoch %d got STALE_MEMBER_EPOCH; "
           "retrying with the newest epoch (now %d)",
           c->member.group_id, (int)cm->req.generation_id_or_member_epoch, (int)epoch);
    return true;
}

static void knc_commit_done(knw_client *client, knw_resp *resp, void *opaque) {
    knc_commit *cm = opaque;
    kn_consumer *c = cm->c;
    const kp_OffsetCommitResponse *r = resp->body;
    int64_t now = knw_now_ms();
    pthread_mutex_lock(&c->lock);
    c->offsets.commit_inflight = false;
    if (!resp->err)
        knc_metrics_commit(c, resp->latency_us, now);
    int err = resp->err;
    if (err && knc_closed(c))
        err = KN_ERR__CLOSED; /* failed by the client's shutdown (close timed out) */
    bool stale_retry = false;
    if (!err && !r)
        err = KN_ERR__PROTOCOL;
    if (!err) {
        /* Per-partition results into the list; a coordinator problem on
         * any partition means the whole commit is retried. */
        int first = 0;
        size_t failed = 0, stale = 0, n = kn_topic_partition_list_count(cm->offsets);
        for (int32_t t = 0; t < r->topics.count; t++) {
            const kp_OffsetCommitResponse_OffsetCommitResponseTopic *rt = &r->topics.items[t];
            char name[256];
            if (rt->name.len < 0 || (size_t)rt->name.len >= sizeof name)
                continue;
            memcpy(name, rt->name.ptr, (size_t)rt->name.len);
            name[rt->name.len] = '\0';
            for (int32_t k = 0; k < rt->partitions.count; k++) {
                int16_t e = rt->partitions.items[k].error_code;
                int at =
                    kn_topic_partition_list_find(cm->offsets, name, rt->partitions.items[k].partition_index);
                if (at >= 0)
                    kn_topic_partition_list_set_err(cm->offsets, (size_t)at, e);
                if (e) {
                    failed++;
                    stale += e == KN_ERR_STALE_MEMBER_EPOCH;
                    if (!first || kn_err_is_coordinator(e) || e == KN_ERR_COORDINATOR_LOAD_IN_PROGRESS)
                        first = e;
                }
            }
        }
        if (failed)
            err = failed < n && !knc_retry_error(first) ? KN_ERR__PARTIAL : first;
        /* the whole commit goes again, with the newest epoch */
        stale_retry = failed && stale == failed && knc_commit_stale_retry(c, cm, now);
    }
    /* Forgotten also when the commit gives up (deadline reached): the
     * next commit must not go to the same unreachable node. */
    knc_coord_failed(c, cm->node_id, err);
    if (err && (knc_retry_error(err) || stale_retry) && now < cm->deadline_ms && !knc_closed(c)) {
        c->offsets.commit_retry_at_ms = now + c->cfg.retry_backoff_ms;
        for (size_t i = 0; i < kn_topic_partition_list_count(cm->offsets); i++)
            kn_topic_partition_list_set_err(cm->offsets, i, 0);
    } else {
        knc_commit_finish(c, err);
    }
    knc_signal(c);
    pthread_mutex_unlock(&c->lock);
    knw_resp_free(resp);
    knw_wakeup(client);
}

static void knc_ofetch_free(knc_ofetch_req *fr) {
    if (!fr)
        return;
    kn_arena_destroy(&fr->arena);
    kn_free(fr);
}

/* The part a lookup was for, if still the same assignment and state. */
static knc_part *knc_ofetch_owner(kn_consumer *c, const knc_ofetch_req *fr, int32_t t, int32_t k,
                                  const knc_fetch_part *fp) {
    const kp_OffsetFetchRequest_OffsetFetchRequestTopic *rt = &fr->req.topics.items[t];
    knc_part *p = knc_table_find(&c->table, rt->name.ptr, (size_t)rt->name.len, rt->partition_indexes.items[k]);
    if (!p || p->id != fp->part_id || p->gen != fp->gen || p->state != KNC_POS_NEED_COMMITTED)
        return NULL;
    return p;
}

static void knc_ofetch_done(knw_client *client, knw_resp *resp, void *opaque) {
    knc_ofetch_req *fr = opaque;
    kn_consumer *c = fr->c;
    const kp_OffsetFetchResponse *r = resp->body;
    int64_t now = knw_now_ms();
    pthread_mutex_lock(&c->lock);
    c->offsets.offset_fetch_inflight = false;
    int err = resp->err ? resp->err : !r ? KN_ERR__PROTOCOL : r->error_code;
    knc_coord_failed(c, fr->node_id, err);
    if (!err && !knc_closed(c)) {
        for (int32_t t = 0; t < r->topics.count; t++) {
            const kp_OffsetFetchResponse_OffsetFetchResponseTopic *rt = &r->topics.items[t];
            int32_t qt;
            for (qt = 0; qt < fr->req.topics.count; qt++)
                if (fr->req.topics.items[qt].name.len == rt->name.len &&
                    memcmp(fr->req.topics.items[qt].name.ptr, rt->name.ptr, (size_t)rt->name.len) == 0)
                    break;
            if (qt == fr->req.topics.count)
                continue;
            /* index of the topic's first part in fr->parts */
            int32_t base = 0;
            for (int32_t x = 0; x < qt; x++)
                base += fr->req.topics.items[x].partition_indexes.count;
            const kp_int32_array *qp = &fr->req.topics.items[qt].partition_indexes;
            for (int32_t k = 0; k < rt->partitions.count; k++) {
                const kp_OffsetFetchResponse_OffsetFetchResponsePartition *pr = &rt->partitions.items[k];
                int32_t qk;
                for (qk = 0; qk < qp->count; qk++)
                    if (qp->items[qk] == pr->partition_index)
                        break;
                if (qk == qp->count)
                    continue;
                knc_part *p = knc_ofetch_owner(c, fr, qt, qk, &fr->parts[base + qk]);
                if (!p)
                    continue;
                if (pr->error_code == 0) {
                    knc_part_committed_done(p, p->gen, pr->committed_offset, pr->committed_leader_epoch);
                } else if (!knc_retry_error(pr->error_code)) {
                    p->reset_inflight = false;
                    knc_part_fail(p, pr->error_code,
                                  "%s [%d]: reading the committed offset of group %s failed: %s", p->topic,
                                  (int)p->partition, c->member.group_id, kn_err_name(pr->error_code));
                } else {
                    knc_coord_failed(c, fr->node_id, pr->error_code);
                }
            }
        }
    } else if (err && !knc_retry_error(err) && !knc_closed(c)) {
        /* e.g. GROUP_AUTHORIZATION_FAILED: every partition asked for. */
        int32_t at = 0;
        for (int32_t t = 0; t < fr->req.topics.count; t++)
            for (int32_t k = 0; k < fr->req.topics.items[t].partition_indexes.count; k++, at++) {
                knc_part *p = knc_ofetch_owner(c, fr, t, k, &fr->parts[at]);
                if (p) {
                    p->reset_inflight = false;
                    knc_part_fail(p, err,
                                  "%s [%d]: reading the committed offset of group %s "
                                  "failed: %s",
                                  p->topic, (int)p->partition, c->member.group_id, kn_err_name(err));
                }
            }
    }
    /* Whatever is still waiting is asked again after the backoff. */
    int32_t at = 0;
    for (int32_t t = 0; t < fr->req.topics.count; t++)
        for (int32_t k = 0; k < fr->req.topics.items[t].partition_indexes.count; k++, at++) {
            knc_part *p = knc_ofetch_owner(c, fr, t, k, &fr->parts[at]);
            if (p) {
                p->reset_inflight = false;
                p->retry_at_ms = now + c->cfg.retry_backoff_ms;
            }
        }
    knc_signal(c);
    pthread_mutex_unlock(&c->lock);
    knw_resp_free(resp);
    knc_ofetch_free(fr);
    knw_wakeup(client);
}

/* ---- the network-thread plan --------------------------------------------- */

/* An OffsetFetch for every partition waiting for its committed offset. */
static knc_ofetch_req *knc_ofetch_build(kn_consumer *c, int64_t now_ms) {
    size_t n = 0;
    for (size_t i = 0; i < knc_table_count(&c->table); i++)
        n += knc_part_wants_committed(knc_table_at(&c->table, i), now_ms);
    if (!n)
        return NULL;
    knc_ofetch_req *fr = kn_calloc(1, sizeof(*fr));
    if (!fr)
        return NULL;
    fr->c = c;
    kn_arena_init(&fr->arena, 2048);
    kp_OffsetFetchRequest *r = &fr->req;
    kp_OffsetFetchRequest_init(r);
    r->group_id = knc_s(c->member.group_id);
    r->require_stable = true;
    r->topics.items = kn_arena_calloc(&fr->arena, n, sizeof(*r->topics.items));
    fr->parts = kn_arena_calloc(&fr->arena, n, sizeof(*fr->parts));
    int32_t *all = kn_arena_calloc(&fr->arena, n, sizeof(int32_t));
    if (!r->topics.items || !fr->parts || !all) {
        knc_ofetch_free(fr);
        return NULL;
    }
    /* The table is sorted by topic: runs of one topic are contiguous. */
    size_t used = 0;
    for (size_t i = 0; i < knc_table_count(&c->table); i++) {
        knc_part *p = knc_table_at(&c->table, i);
        if (!knc_part_wants_committed(p, now_ms))
            continue;
        kp_OffsetFetchRequest_OffsetFetchRequestTopic *rt =
            r->topics.count ? &r->topics.items[r->topics.count - 1] : NULL;
        if (!rt || strcmp(rt->name.ptr, p->topic) != 0) {
            rt = &r->topics.items[r->topics.count++];
            size_t len = strlen(p->topic);
            char *name = kn_arena_alloc(&fr->arena, len + 1);
            if (!name) {
                knc_ofetch_free(fr);
                return NULL;
            }
            memcpy(name, p->topic, len + 1);
            rt->name = knc_s(name);
            rt->partition_indexes.items = all + used;
        }
        rt->partition_indexes.items[rt->partition_indexes.count++] = p->partition;
        fr->parts[used].part_id = p->id;
        fr->parts[used].gen = p->gen;
        used++;
        p->reset_inflight = true;
    }
    return fr;
}

void knc_offsets_tick(kn_consumer *c, int64_t now_ms, knc_offsets_plan *plan) {
    memset(plan, 0, sizeof(*plan));
    if (!c->member.group_id || knc_closed(c))
        return;
    /* The client's coordinator table (core/wire/coordinator.h) caches the
     * answer and forgets it after a coordinator error, a lost connection
     * or when newer metadata no longer lists the node. */
    c->offsets.coord_id = knw_coord_known(c->client, KNW_COORD_GROUP, c->member.group_id);
    /* The group (group/classic.c) needs the coordinator too. */
    bool need_coord = c->member.subscribed && c->offsets.coord_id < 0;
    /* A queued commit that ran out of time before it could be sent. */
    while (c->offsets.commit_head && !c->offsets.commit_inflight && now_ms >= c->offsets.commit_head->deadline_ms)
        knc_commit_finish(c, KN_ERR__TIMED_OUT);
    if (!c->offsets.offset_fetch_inflight) {
        bool want = false;
        for (size_t i = 0; i < knc_table_count(&c->table) && !want; i++)
            want = knc_part_wants_committed(knc_table_at(&c->table, i), now_ms);
        if (want && c->offsets.coord_id < 0) {
            need_coord = true;
        } else if (want && (plan->offset_fetch = knc_ofetch_build(c, now_ms))) {
            ((knc_ofetch_req *)plan->offset_fetch)->node_id = c->offsets.coord_id;
            c->offsets.offset_fetch_inflight = true;
        }
    }
    if (c->offsets.commit_head && !c->offsets.commit_inflight && now_ms >= c->offsets.commit_retry_at_ms) {
        if (c->offsets.coord_id < 0) {
            need_coord = true;
        } else if (!c->member.identity_at_send || knc_commit_set_identity(c, c->offsets.commit_head) == 0) {
            plan->commit = c->offsets.commit_head;
            plan->commit->node_id = c->offsets.coord_id;
            c->offsets.commit_inflight = true;
        }
    }
    /* Looked up (batched, with backoff) unless in flight; the answer
     * wakes this ticker. */
    if (need_coord)
        c->offsets.coord_id = knw_coord_get(c->client, KNW_COORD_GROUP, c->member.group_id, NULL, NULL, 0);
}

/* The callback runs once whatever happens (so the in-flight flags are
 * cleared in one place). */
static void knc_send(knw_client *client, int32_t node, int16_t api, int16_t max_version, const void *req,
                     knw_cb *cb, void *opaque) {
    knw_send(client, node, api, -1, max_version, req, -1, cb, opaque);
}

void knc_offsets_send(kn_consumer *c, knw_client *client, knc_offsets_plan *plan) {
    (void)c;
    if (plan->offset_fetch) {
        knc_ofetch_req *fr = plan->offset_fetch;
        knc_send(client, fr->node_id, KP_API_OFFSET_FETCH, KNC_OFFSET_FETCH_MAX, &fr->req, knc_ofetch_done,
                 fr);
    }
    if (plan->commit)
        knc_send(client, plan->commit->node_id, KP_API_OFFSET_COMMIT, KNC_OFFSET_COMMIT_MAX,
                 &plan->commit->req, knc_commit_done, plan->commit);
}

/* ---- application-thread API --------------------------------------------- */

/* Copies the entries to commit: those with an offset >= 0. */
static kn_topic_partition_list *knc_commit_list(kn_consumer *c, const kn_topic_partition_list *offsets) {
    if (!offsets)
        return knc_positions(c);
    kn_topic_partition_list *l = kn_topic_partition_list_new();
    for (size_t i = 0; l && i < kn_topic_partition_list_count(offsets); i++) {
        if (kn_topic_partition_list_offset(offsets, i) < 0)
            continue;
        int at = kn_topic_partition_list_add(l, kn_topic_partition_list_topic(offsets, i),
                                             kn_topic_partition_list_partition(offsets, i));
        if (at < 0 || kn_topic_partition_list_set_metadata(
                          l, (size_t)at, kn_topic_partition_list_metadata(offsets, i)) != KN_OK) {
            kn_topic_partition_list_destroy(l);
            return NULL;
        }
        kn_topic_partition_list_set_offset(l, (size_t)at, kn_topic_partition_list_offset(offsets, i));
        kn_topic_partition_list_set_leader_epoch(l, (size_t)at,
                                                 kn_topic_partition_list_leader_epoch(offsets, i));
    }
    return l;
}

int kn_consumer_commit_async(kn_consumer *c, const kn_topic_partition_list *offsets,
                             kn_consumer_commit_cb *cb, void *opaque) {
    KNC_FORK_GUARD(c, KN_ERR__FORKED);
    if (!c)
        return KN_ERR__INVALID_ARG;
    pthread_mutex_lock(&c->lock);
    int err = knc_closed(c) ? KN_ERR__CLOSED : !c->member.group_id ? KN_ERR__STATE : 0;
    if (!err) {
        kn_topic_partition_list *l = knc_commit_list(c, offsets);
        if (!l)
            err = KN_ERR__NOMEM;
        else
            knc_commit_enqueue(c, l, cb, opaque, false, -1, &err);
    }
    pthread_mutex_unlock(&c->lock);
    if (!err)
        knw_wakeup(c->client);
    return err;
}

static int knc_commit_sync(kn_consumer *c, kn_topic_partition_list *offsets, int timeout_ms,
                           bool retry_stale) {
    pthread_mutex_lock(&c->lock);
    int err = knc_closed(c) ? KN_ERR__CLOSED : !c->member.group_id ? KN_ERR__STATE : 0;
    knc_commit *cm = NULL;
    if (!err) {
        kn_topic_partition_list *l = knc_commit_list(c, offsets);
        if (!l)
            err = KN_ERR__NOMEM;
        else if ((cm = knc_commit_enqueue(c, l, NULL, NULL, true, timeout_ms, &err)))
            cm->retry_stale = retry_stale;
    }
    pthread_mutex_unlock(&c->lock);
    if (!cm)
        return err;
    knw_wakeup(c->client);
    /* Earlier async commits finish first (FIFO): their callbacks are run
     * here, as Java's commitSync does. */
    int64_t deadline = cm->deadline_ms;
    for (;;) {
        knc_serve_commit_callbacks(c);
        knw_client_app_service(c->client); /* the OAUTHBEARER token callback, if due */
        pthread_mutex_lock(&c->lock);
        /* Up to the deadline, not past it: a commit in flight to a
         * hung coordinator only ends at request.timeout.ms, and close
         * (its revoke commit, a manual consumer's commit) must return
         * within its own timeout (issue #19, it_close_bounded.c; this
         * once waited a second more). The commit is abandoned and freed
         * when its answer or failure arrives. */
        if (cm->finished || knw_now_ms() >= deadline) {
            bool done = cm->finished;
            if (!done)
                cm->abandoned = true;
            pthread_mutex_unlock(&c->lock);
            if (!done)
                return KN_ERR__TIMED_OUT;
            break;
        }
        if (!c->offsets.done_head) {
            struct timespec ts;
            int64_t at = knw_now_ms() + 50;
            if (at > deadline)
                at = deadline;
            ts.tv_sec = (time_t)(at / 1000);
            ts.tv_nsec = (long)(at % 1000) * 1000000L;
            pthread_cond_timedwait(&c->cond, &c->lock, &ts);
        }
        pthread_mutex_unlock(&c->lock);
    }
    knc_serve_commit_callbacks(c);
    err = cm->err;
    if (offsets)
        for (size_t i = 0; i < kn_topic_partition_list_count(offsets); i++) {
            int at = kn_topic_partition_list_find(cm->offsets, kn_topic_partition_list_topic(offsets, i),
                                                  kn_topic_partition_list_partition(offsets, i));
            if (at >= 0)
                kn_topic_partition_list_set_err(offsets, i,
                                                kn_topic_partition_list_err(cm->offsets, (size_t)at));
        }
    knc_commit_free(cm);
    return err;
}

int kn_consumer_commit_sync(kn_consumer *c, kn_topic_partition_list *offsets, int timeout_ms) {
    KNC_FORK_GUARD(c, KN_ERR__FORKED);
    if (!c)
        return KN_ERR__INVALID_ARG;
    return knc_commit_sync(c, offsets, timeout_ms, false);
}

int knc_commit_before_revoke(kn_consumer *c, kn_topic_partition_list *offsets, int64_t deadline_ms,
                             void (*done)(kn_consumer *c, int err)) {
    if (knc_closing(c)) {
        kn_topic_partition_list_destroy(offsets);
        return KN_ERR__CLOSED;
    }
    int64_t left = deadline_ms - knw_now_ms();
    int err;
    knc_commit *cm = knc_commit_enqueue(c, offsets, NULL, NULL, false,
                                        left < 0 ? 0 : left > 0x7fffffff ? 0x7fffffff : (int)left, &err);
    if (!cm)
        return err;
    /* As the sync commit before a revoke: the member epoch may move
     * while it waits (KIP-848), and the partitions are still owned. */
    cm->retry_stale = true;
    cm->pre_revoke = done;
    return 0;
}

int knc_commit_sync_before_revoke(kn_consumer *c, kn_topic_partition_list *offsets, int timeout_ms) {
    return knc_commit_sync(c, offsets, timeout_ms, true);
}

/* Finds the coordinator from the application thread (blocking, until
 * deadline), through the client's coordinator table. */
static int knc_coordinator_sync(kn_consumer *c, int64_t deadline, int32_t *node) {
    char errstr[256];
    int err;
    /* In slices of at most 100 ms, so wakeup() ends the wait (the
     * table's own wait knows nothing of this consumer's wakeup flag). */
    for (;;) {
        int64_t now = knw_now_ms();
        int64_t slice = now + 100 < deadline ? now + 100 : deadline;
        err = knw_coord_wait(c->client, KNW_COORD_GROUP, c->member.group_id, slice, node, errstr, sizeof errstr);
        if (err != KN_ERR__TIMED_OUT || knw_now_ms() >= deadline)
            break;
        pthread_mutex_lock(&c->lock);
        bool woken = knc_take_wakeup(c);
        pthread_mutex_unlock(&c->lock);
        if (woken) {
            err = KN_ERR__WAKEUP;
            break;
        }
    }
    pthread_mutex_lock(&c->lock);
    c->offsets.coord_id = err ? -1 : *node;
    pthread_mutex_unlock(&c->lock);
    return err;
}

int kn_consumer_committed(kn_consumer *c, kn_topic_partition_list *list, int timeout_ms) {
    KNC_FORK_GUARD(c, KN_ERR__FORKED);
    if (!c || !list)
        return KN_ERR__INVALID_ARG;
    if (knc_closed(c))
        return KN_ERR__CLOSED;
    if (!c->member.group_id)
        return KN_ERR__STATE;
    int64_t deadline = knw_now_ms() + (timeout_ms < 0 ? c->cfg.default_api_timeout_ms : timeout_ms);
    size_t n = kn_topic_partition_list_count(list);
    kn_arena arena;
    kn_arena_init(&arena, 1024);
    kp_OffsetFetchRequest req;
    kp_OffsetFetchRequest_init(&req);
    req.group_id = knc_s(c->member.group_id);
    req.require_stable = true;
    req.topics.items = kn_arena_calloc(&arena, n ? n : 1, sizeof(*req.topics.items));
    int32_t *all = kn_arena_calloc(&arena, n ? n : 1, sizeof(int32_t));
    if (!req.topics.items || !all) {
        kn_arena_destroy(&arena);
        return KN_ERR__NOMEM;
    }
    size_t used = 0;
    for (size_t i = 0; i < n; i++) {
        const char *topic = kn_topic_partition_list_topic(list, i);
        int32_t t;
        for (t = 0; t < req.topics.count; t++)
            if (strcmp(req.topics.items[t].name.ptr, topic) == 0)
                break;
        if (t < req.topics.count)
            continue;
        kp_OffsetFetchRequest_OffsetFetchRequestTopic *rt = &req.topics.items[req.topics.count++];
        rt->name = knc_s(topic);
        rt->partition_indexes.items = all + used;
        for (size_t j = i; j < n; j++)
            if (strcmp(kn_topic_partition_list_topic(list, j), topic) == 0)
                all[used++] = kn_topic_partition_list_partition(list, j), rt->partition_indexes.count++;
    }
    int err;
    for (;;) {
        int32_t node;
        if ((err = knc_coordinator_sync(c, deadline, &node)) != 0)
            break;
        int64_t left = deadline - knw_now_ms();
        if (left <= 0) {
            err = KN_ERR__TIMED_OUT;
            break;
        }
        knw_resp *resp =
            knw_call(c->client, node, KP_API_OFFSET_FETCH, -1, KNC_OFFSET_FETCH_MAX, &req, (int)left);
        const kp_OffsetFetchResponse *r = resp->body;
        err = resp->err ? resp->err : !r ? KN_ERR__PROTOCOL : r->error_code;
        for (int32_t t = 0; !err && t < r->topics.count; t++) {
            const kp_OffsetFetchResponse_OffsetFetchResponseTopic *rt = &r->topics.items[t];
            char name[256];
            if (rt->name.len < 0 || (size_t)rt->name.len >= sizeof name)
                continue;
            memcpy(name, rt->name.ptr, (size_t)rt->name.len);
            name[rt->name.len] = '\0';
            for (int32_t k = 0; k < rt->partitions.count && !err; k++) {
                const kp_OffsetFetchResponse_OffsetFetchResponsePartition *pr = &rt->partitions.items[k];
                if (knc_retry_error(pr->error_code)) {
                    err = pr->error_code;
                    break;
                }
                for (size_t i = 0; i < n; i++) {
                    if (kn_topic_partition_list_partition(list, i) != pr->partition_index ||
                        strcmp(kn_topic_partition_list_topic(list, i), name) != 0)
                        continue;
                    kn_topic_partition_list_set_err(list, i, pr->error_code);
                    kn_topic_partition_list_set_offset(
                        list, i, pr->committed_offset >= 0 ? pr->committed_offset : KN_OFFSET_INVALID);
                    kn_topic_partition_list_set_leader_epoch(list, i, pr->committed_leader_epoch);
                    char *md = NULL;
                    if (pr->metadata.len >= 0)
                        md = kn_strndup(pr->metadata.ptr, (size_t)pr->metadata.len);
                    kn_topic_partition_list_set_metadata(list, i, md);
                    kn_free(md);
                }
            }
        }
        knw_resp_free(resp);
        if (!err || !knc_retry_error(err))
            break;
        pthread_mutex_lock(&c->lock);
        knc_coord_failed(c, node, err);
        pthread_mutex_unlock(&c->lock);
        if ((err = knc_backoff_wait(c, deadline)) != 0)
            break;
    }
    kn_arena_destroy(&arena);
    return err;
}

void knc_offsets_init(kn_consumer *c, int64_t now_ms) {
    c->offsets.coord_id = -1;
    if (c->cfg.group_id)
        c->offsets.next_auto_commit_ms = now_ms + c->cfg.auto_commit_interval_ms;
}
