/*
 * kip848.c: the KIP-848 consumer group protocol (group.protocol=consumer)
 * on the network thread.
 *
 * One request does everything: ConsumerGroupHeartbeat. It joins (member
 * epoch 0, with a member id this client generated, a UUID string like
 * Java's), carries the subscription (topic names; a pattern is matched
 * here against metadata, as Java does for subscribe(Pattern), and its
 * matches are sent; a broker-side regex, Java's
 * subscribe(SubscriptionPattern), goes as SubscribedTopicRegex with an
 * empty name list and needs v1), the server assignor and the partitions
 * owned now; its answer carries the member epoch, the heartbeat interval and,
 * when it changed, the target assignment by topic id.
 *
 * Reconciliation: a target whose topic ids all resolve to names (the
 * metadata is refreshed for unknown ids) becomes g->pending and the
 * ASSIGNING step (rebalance.c, inside poll) revokes what left the target,
 * then adds what is new; the next heartbeat, sent right after, reports
 * the new owned set, which acknowledges the revocation to the
 * coordinator. The coordinator only ever hands out partitions their
 * previous owner released, so revoke and add can run in one step.
 *
 * Fencing (FENCED_MEMBER_EPOCH, UNKNOWN_MEMBER_ID) loses everything and
 * rejoins at epoch 0 with the same member id. Leaving sends epoch -1
 * (dynamic) or -2 (static member).
 */
#include <stdio.h>
#include <string.h>
#include <sys/random.h>

#include "consumer/consumer_metrics.h"
#include "consumer/group/group.h"
#include "error.h"
#include "kn_alloc.h"
#include "proto/generated/kp_apis.h"
#include "proto/generated/kp_consumer_group_heartbeat.h"

#define KNG_LEAVE_EPOCH        (-1)
#define KNG_LEAVE_STATIC_EPOCH (-2)

typedef struct kng_hb {
    kn_consumer *c;
    int32_t node;
    bool leaving;
    int16_t min_version; /* 1 when the regex field is set */
    bool regex_set;      /* the request carries the regex ... */
    bool regex_cleared;  /* ... or "" to drop the coordinator's one */
    kn_arena arena;
    kp_ConsumerGroupHeartbeatRequest req;
} kng_hb;

/* A target assignment whose topic ids wait for metadata. */
typedef struct kng_target {
    int32_t topic_cnt;
    kn_uuid *ids;
    int32_t **parts;
    int32_t *part_cnt;
} kng_target;

/* Java's Uuid.randomUuid().toString(): 16 random bytes, base64url
 * without padding (22 characters). */
static void kng_new_member_id(char out[23]) {
    static const char b64[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
    uint8_t b[18] = {0};
    if (getrandom(b, 16, 0) != 16) {
        /* getrandom never fails for 16 bytes on Linux >= 3.17; keep an
         * id unique enough for a group anyway. */
        int64_t t = knw_now_us();
        memcpy(b, &t, sizeof t);
        memcpy(b + 8, &out, sizeof(void *));
    }
    int o = 0;
    for (int i = 0; i < 18 && o < 22; i += 3) {
        uint32_t v = (uint32_t)b[i] << 16 | (uint32_t)b[i + 1] << 8 | b[i + 2];
        out[o++] = b64[(v >> 18) & 63];
        out[o++] = b64[(v >> 12) & 63];
        if (o < 22)
            out[o++] = b64[(v >> 6) & 63];
        if (o < 22)
            out[o++] = b64[v & 63];
    }
    out[22] = '\0';
}

static void kng_target_free(kng_target *t) {
    if (!t)
        return;
    for (int32_t i = 0; i < t->topic_cnt; i++)
        kn_free(t->parts[i]);
    kn_free(t->parts);
    kn_free(t->part_cnt);
    kn_free(t->ids);
    kn_free(t);
}

static kng_target *kng_target_copy(const kp_ConsumerGroupHeartbeatResponse_Assignment *as) {
    kng_target *t = kn_calloc(1, sizeof(*t));
    int32_t n = as->topic_partitions.count;
    if (!t)
        return NULL;
    t->ids = kn_calloc((size_t)(n ? n : 1), sizeof(*t->ids));
    t->parts = kn_calloc((size_t)(n ? n : 1), sizeof(*t->parts));
    t->part_cnt = kn_calloc((size_t)(n ? n : 1), sizeof(*t->part_cnt));
    if (!t->ids || !t->parts || !t->part_cnt) {
        kng_target_free(t);
        return NULL;
    }
    for (int32_t i = 0; i < n; i++) {
        const kp_ConsumerGroupHeartbeatResponse_TopicPartitions *tp = &as->topic_partitions.items[i];
        t->ids[i] = tp->topic_id;
        int32_t m = tp->partitions.count;
        t->parts[i] = kn_calloc((size_t)(m ? m : 1), sizeof(int32_t));
        if (!t->parts[i]) {
            t->topic_cnt = i;
            kng_target_free(t);
            return NULL;
        }
        memcpy(t->parts[i], tp->partitions.items, (size_t)m * sizeof(int32_t));
        t->part_cnt[i] = m;
        t->topic_cnt = i + 1;
    }
    return t;
}

/* The target by name, or NULL while a topic id is unknown (then the
 * metadata is asked for every topic). */
static kn_topic_partition_list *kng_target_resolve(kn_consumer *c, const kng_target *t,
                                                   const knw_metadata *md, bool *unknown) {
    *unknown = false;
    for (int32_t i = 0; i < t->topic_cnt; i++)
        if (!md || !knw_metadata_topic_by_id(md, &t->ids[i])) {
            *unknown = true;
            return NULL;
        }
    kn_topic_partition_list *l = kn_topic_partition_list_new();
    for (int32_t i = 0; l && i < t->topic_cnt; i++) {
        const knw_topic *tp = knw_metadata_topic_by_id(md, &t->ids[i]);
        for (int32_t k = 0; k < t->part_cnt[i]; k++)
            if (kn_topic_partition_list_add(l, tp->name, t->parts[i][k]) < 0) {
                kn_topic_partition_list_destroy(l);
                return NULL;
            }
    }
    (void)c;
    return l;
}

/* Whether l holds exactly the partitions the member owns now. */
static bool kng_same_as_owned(const kn_consumer *c, const kn_topic_partition_list *l) {
    size_t n = l ? kn_topic_partition_list_count(l) : 0;
    if (n != knc_table_count(&c->table))
        return false;
    for (size_t i = 0; i < knc_table_count(&c->table); i++) {
        const knc_part *p = knc_table_at(&c->table, i);
        if (kn_topic_partition_list_find(l, p->topic, p->partition) < 0)
            return false;
    }
    return true;
}

/* Tries to turn the waiting target into a pending assignment. */
static void kng_target_apply(kn_consumer *c, const knw_metadata *md) {
    kng_group *g = c->grp;
    kng_target *t = g->target;
    if (!t)
        return;
    bool unknown;
    kn_topic_partition_list *l = kng_target_resolve(c, t, md, &unknown);
    if (unknown) {
        g->target_unresolved = true;
        return;
    }
    if (!l)
        return; /* out of memory: try again next tick */
    g->target_unresolved = false;
    kng_target_free(t);
    g->target = NULL;
    if (g->regex)
        kng_regex_topics(g, l); /* what the broker's regex matched */
    /* The coordinator repeats the assignment whenever we report our
     * partitions: only a change (or the first one after joining, so
     * ASSIGNED runs once per join) is reconciled. */
    if (g->assigned_once && g->state != KNG_ASSIGNING && kng_same_as_owned(c, l)) {
        kn_topic_partition_list_destroy(l);
        return;
    }
    g->assigned_once = true;
    kn_topic_partition_list_destroy(g->pending);
    g->pending = l;
    kng_set_state(c, KNG_ASSIGNING);
}

/* ---- the heartbeat request --------------------------------------------------- */

static kng_hb *kng_hb_build(kn_consumer *c, int32_t epoch) {
    kng_group *g = c->grp;
    kng_hb *h = kn_calloc(1, sizeof(*h));
    if (!h)
        return NULL;
    h->c = c;
    h->node = knc_coordinator(c);
    h->min_version = -1;
    kn_arena_init(&h->arena, 1024);
    kp_ConsumerGroupHeartbeatRequest *r = &h->req;
    kp_ConsumerGroupHeartbeatRequest_init(r);
    r->group_id = kn_str_c(kn_arena_strdup(&h->arena, c->cfg.group_id));
    r->member_id = kn_str_c(kn_arena_strdup(&h->arena, g->member_id));
    r->member_epoch = epoch;
    r->instance_id = kn_str_c(kn_arena_strdup(&h->arena, g->instance_id));
    r->rack_id = kn_str_c(kn_arena_strdup(&h->arena, g->rack));
    r->rebalance_timeout_ms = g->rebalance_timeout_ms;
    r->server_assignor = kn_str_c(kn_arena_strdup(&h->arena, g->remote_assignor));
    r->subscribed_topic_names.items = NULL;
    r->subscribed_topic_names.count = -1;
    r->subscribed_topic_regex = kn_str_c(NULL);
    if (epoch < 0)
        return h; /* leaving: the rest is ignored */
    if (g->regex) {
        /* The broker resolves it (RE2J); no names beside it. */
        r->subscribed_topic_regex = kn_str_c(kn_arena_strdup(&h->arena, g->regex));
        r->subscribed_topic_names.items = kn_arena_calloc(&h->arena, 1, sizeof(kn_str));
        if (!r->subscribed_topic_regex.ptr || !r->subscribed_topic_names.items)
            goto fail;
        r->subscribed_topic_names.count = 0;
        h->min_version = 1;
        h->regex_set = true;
    } else {
        /* A pattern is resolved here, against metadata (POSIX ERE, like
         * Java's subscribe(Pattern) with this protocol); the matches go
         * out as topic names. An earlier broker-side regex is dropped
         * with "" (the coordinator keeps it otherwise). */
        if (g->regex_sent) {
            r->subscribed_topic_regex = kn_str_c("");
            h->min_version = 1;
            h->regex_cleared = true;
        }
        r->subscribed_topic_names.items =
            kn_arena_calloc(&h->arena, (size_t)(g->topic_cnt ? g->topic_cnt : 1), sizeof(kn_str));
        if (!r->subscribed_topic_names.items)
            goto fail;
        r->subscribed_topic_names.count = g->topic_cnt;
        for (int32_t i = 0; i < g->topic_cnt; i++)
            r->subscribed_topic_names.items[i] = kn_str_c(kn_arena_strdup(&h->arena, g->topics[i]));
    }
    /* The partitions owned now, by topic id (the acknowledgement), sent
     * when they changed since the last heartbeat (null: unchanged). */
    if (!g->send_full && g->acked && kng_same_as_owned(c, g->acked))
        return h;
    kn_topic_partition_list *acked = kn_topic_partition_list_new();
    for (size_t i = 0; acked && i < knc_table_count(&c->table); i++) {
        const knc_part *p = knc_table_at(&c->table, i);
        kn_topic_partition_list_add(acked, p->topic, p->partition);
    }
    kn_topic_partition_list_destroy(g->acked);
    g->acked = acked;
    g->send_full = false;
    knw_metadata *md = knw_metadata_get(c->client);
    size_t parts_n = knc_table_count(&c->table);
    r->topic_partitions.items =
        kn_arena_calloc(&h->arena, parts_n ? parts_n : 1, sizeof(*r->topic_partitions.items));
    int32_t *all = kn_arena_calloc(&h->arena, parts_n ? parts_n : 1, sizeof(int32_t));
    if (!r->topic_partitions.items || !all) {
        if (md)
            knw_metadata_release(md);
        goto fail;
    }
    r->topic_partitions.count = 0;
    size_t used = 0;
    for (size_t i = 0; i < knc_table_count(&c->table); i++) {
        const knc_part *p = knc_table_at(&c->table, i);
        const knw_topic *t = md ? knw_metadata_topic(md, p->topic) : NULL;
        if (!t)
            continue; /* owned partitions always came from a resolved id */
        kp_ConsumerGroupHeartbeatRequest_TopicPartitions *tp =
            r->topic_partitions.count ? &r->topic_partitions.items[r->topic_partitions.count - 1] : NULL;
        if (!tp || memcmp(&tp->topic_id, &t->topic_id, sizeof(kn_uuid)) != 0) {
            tp = &r->topic_partitions.items[r->topic_partitions.count++];
            tp->topic_id = t->topic_id;
            tp->partitions.items = all + used;
            tp->partitions.count = 0;
        }
        tp->partitions.items[tp->partitions.count++] = p->partition;
        used++;
    }
    if (md)
        knw_metadata_release(md);
    return h;
fail:
    kn_arena_destroy(&h->arena);
    kn_free(h);
    return NULL;
}

static void kng_hb_free(kng_hb *h) {
    if (!h)
        return;
    kn_arena_destroy(&h->arena);
    kn_free(h);
}


static void kng_848_done(knw_client *client, knw_resp *resp, void *opaque) {
    kng_hb *h = opaque;
    kn_consumer *c = h->c;
    kng_group *g = c->grp;
    const kp_ConsumerGroupHeartbeatResponse *r = resp->body;
    int64_t now = knw_now_ms();
    pthread_mutex_lock(&c->lock);
    g->inflight = false;
    if (!h->leaving)
        knc_metrics_heartbeat(c, resp->latency_us, !resp->err && r && !r->error_code, now);
    if (knc_closed(c) || h->leaving || g->state == KNG_IDLE || g->state == KNG_FATAL)
        goto out;
    int err = resp->err ? resp->err : !r ? KN_ERR__PROTOCOL : r->error_code;
    if (err)
        g->send_full = true; /* the next heartbeat repeats everything */
    if (err == KN_ERR_FENCED_MEMBER_EPOCH || err == KN_ERR_UNKNOWN_MEMBER_ID) {
        /* Fenced: everything is lost; rejoin at epoch 0, same id. */
        g->joined = false;
        kng_set_generation(c, 0); /* publishes the identity (group.h) */
        g->assigned_once = false;
        g->send_full = true;
        kng_target_free(g->target);
        g->target = NULL;
        kn_topic_partition_list_destroy(g->pending);
        g->pending = NULL;
        c->stats.rebalances_failed++;
        knc_metrics_rebalance_failed(c, now);
        snprintf(g->reason, sizeof g->reason, "heartbeat: %s", kn_err_name(err));
        kng_set_state(c, knc_table_count(&c->table) ? KNG_LOST : KNG_UNJOINED);
        g->next_hb_ms = 0;
        goto out;
    }
    if (knc_coord_failed(c, h->node, err)) {
        g->next_hb_ms = now + c->cfg.retry_backoff_ms;
        goto out;
    }
    if (err == KN_ERR_COORDINATOR_LOAD_IN_PROGRESS || err == KN_ERR_UNRELEASED_INSTANCE_ID) {
        g->next_hb_ms = now + c->cfg.retry_backoff_ms;
        goto out;
    }
    if (err) {
        char msg[200] = "";
        if (r && r->error_message.len > 0)
            snprintf(msg, sizeof msg, ": %.*s", (int)r->error_message.len, r->error_message.ptr);
        if (err == KN_ERR_INVALID_REGULAR_EXPRESSION)
            /* Java's wording: the regex given to subscribe is wrong. */
            kng_fail(c, err, "Invalid RE2J SubscriptionPattern provided in the call to subscribe%s", msg);
        else if (err == KN_ERR__UNSUPPORTED_VERSION && h->min_version > 0)
            kng_fail(c, err,
                     "the broker does not resolve regular expressions (ConsumerGroupHeartbeat v1, "
                     "Kafka 4.0+): %s",
                     resp->errstr);
        else
            kng_fail(c, err, "ConsumerGroupHeartbeat failed: %s%s", kn_err_name(err), msg);
        goto out;
    }
    if (h->regex_set)
        g->regex_sent = true;
    else if (h->regex_cleared)
        g->regex_sent = false;
    if (r->member_id.len > 0 && kng_set_member_id(c, r->member_id.ptr, r->member_id.len) != 0) {
        kng_fail(c, KN_ERR__NOMEM, "ConsumerGroupHeartbeat: out of memory storing the member id");
        goto out;
    }
    g->joined = true;
    kng_set_generation(c, r->member_epoch); /* publishes the identity (group.h) */
    if (r->heartbeat_interval_ms > 0)
        g->heartbeat_interval_ms = r->heartbeat_interval_ms;
    g->next_hb_ms = now + g->heartbeat_interval_ms;
    if (r->assignment) {
        kng_target *t = kng_target_copy(r->assignment);
        if (t) {
            kng_target_free(g->target);
            g->target = t;
            knw_metadata *md = knw_metadata_get(client);
            kng_target_apply(c, md);
            if (md)
                knw_metadata_release(md);
        }
    }
out:
    knc_signal(c);
    pthread_mutex_unlock(&c->lock);
    knw_resp_free(resp);
    kng_hb_free(h);
    knw_wakeup(client);
}

static void *kng_848_tick(kn_consumer *c, const knw_metadata *md, int64_t now_ms, int *next_ms) {
    kng_group *g = c->grp;
    *next_ms = 1000;
    if (!g->member_id || !g->member_id[0]) {
        char id[23];
        kng_new_member_id(id);
        if (kng_set_member_id(c, id, 22) != 0)
            return NULL; /* no id, no heartbeat: the next tick tries again */
        kng_set_generation(c, 0);
    }
    if (g->has_pattern && md && md->all_topics && kng_match_pattern(g, md))
        knw_metadata_add_topics(c->client, (const char *const *)g->topics, g->topic_cnt);
    if (g->target && g->target_unresolved) {
        kng_target_apply(c, md);
        if (g->target_unresolved && now_ms >= g->retry_at_ms) {
            g->retry_at_ms = now_ms + c->cfg.retry_backoff_ms;
            g->want_all_topics = true;
        }
    }
    /* max.poll.interval.ms: leave (epoch -1 / -2), lose everything on
     * the next poll, then rejoin at epoch 0. */
    if (g->joined && !knc_in_poll(c) && now_ms - g->last_poll_ms > g->rebalance_timeout_ms &&
        g->state != KNG_LOST && g->state != KNG_UNJOINED) {
        kng_hb *h = knc_coordinator(c) >= 0
                        ? kng_hb_build(c, g->instance_id ? KNG_LEAVE_STATIC_EPOCH : KNG_LEAVE_EPOCH)
                        : NULL;
        if (h)
            h->leaving = true;
        g->joined = false;
        g->assigned_once = false;
        g->send_full = true;
        kng_set_generation(c, 0);
        g->poll_expired = true;
        kng_set_state(c, knc_table_count(&c->table) ? KNG_LOST : KNG_UNJOINED);
        return h;
    }
    if (g->state == KNG_UNJOINED && g->poll_expired)
        return NULL; /* wait for the next poll */
    if (g->state == KNG_UNJOINED) {
        if (!g->join_started_ms)
            g->join_started_ms = now_ms;
        g->state = KNG_STABLE;
        g->next_hb_ms = 0;
    }
    if (g->state == KNG_LOST || g->state == KNG_FATAL || g->state == KNG_IDLE)
        return NULL;
    if (knc_coordinator(c) < 0) {
        *next_ms = 100;
        return NULL;
    }
    if (g->inflight)
        return NULL;
    if (now_ms < g->next_hb_ms) {
        *next_ms = (int)(g->next_hb_ms - now_ms);
        return NULL;
    }
    kng_hb *h = kng_hb_build(c, g->joined ? g->generation : 0);
    if (!h)
        return NULL;
    g->inflight = true;
    g->next_hb_ms = now_ms + g->heartbeat_interval_ms;
    return h;
}

static void kng_848_send(kn_consumer *c, knw_client *client, void *plan) {
    kng_hb *h = plan;
    if (!h)
        return;
    knw_send(client, h->node, KP_API_CONSUMER_GROUP_HEARTBEAT, h->min_version, -1, &h->req, c->cfg.request_timeout_ms,
             kng_848_done, h);
}

/* Blocking leave heartbeat (epoch -1, or -2 for a static member); the
 * heartbeat carries no reason. */
static void kng_848_leave(kn_consumer *c, const char *reason) {
    (void)reason;
    pthread_mutex_lock(&c->lock);
    kng_group *g = c->grp;
    kng_hb *h = NULL;
    if (g->joined && knc_coordinator(c) >= 0)
        h = kng_hb_build(c, g->instance_id ? KNG_LEAVE_STATIC_EPOCH : KNG_LEAVE_EPOCH);
    g->joined = false;
    g->assigned_once = false;
    g->send_full = true;
    kng_set_generation(c, 0);
    g->regex_sent = false; /* the member is gone, its regex with it */
    kng_target_free(g->target);
    g->target = NULL;
    pthread_mutex_unlock(&c->lock);
    int timeout = knc_call_timeout(c, c->cfg.request_timeout_ms);
    if (h && timeout <= 0) {
        /* close with no time left: the coordinator expires the member */
        kng_hb_free(h);
        return;
    }
    if (!h)
        return;
    knw_resp *resp =
        knw_call(c->client, h->node, KP_API_CONSUMER_GROUP_HEARTBEAT, -1, -1, &h->req, timeout);
    knw_resp_free(resp);
    kng_hb_free(h);
}

static void kng_848_destroy(kng_group *g) {
    kng_target_free(g->target);
    g->target = NULL;
}

const kng_ops kng_848_ops = {
    .tick = kng_848_tick,
    .send = kng_848_send,
    .leave = kng_848_leave,
    .leader_step = NULL, /* the coordinator assigns (KIP-848) */
    .destroy = kng_848_destroy,
};
