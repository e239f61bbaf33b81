/*
 * share_group.c: share group membership (KIP-932) with
 * ShareGroupHeartbeat, on the network thread.
 *
 * A member joins with epoch 0 and a member id it made (a UUID string,
 * as Java), and its subscribed topic names; the answer carries its
 * epoch, the heartbeat interval and, when it changed, its assignment by
 * topic id. A share group has no revocation handshake: several members
 * may hold one partition, and the broker's acquisition locks keep
 * records apart, so an assignment is taken as it comes. Partitions that
 * leave it stop being fetched; records already delivered from them can
 * still be acknowledged. Fencing (FENCED_MEMBER_EPOCH,
 * UNKNOWN_MEMBER_ID) rejoins at epoch 0 with the same id; leaving sends
 * epoch -1.
 */
#include <stdio.h>
#include <string.h>
#include <sys/random.h>

#include "error.h"
#include "kn_alloc.h"
#include "log.h"
#include "proto/generated/kp_apis.h"
#include "proto/generated/kp_share_group_heartbeat.h"
#include "share/share_int.h"
#include "wire/coordinator.h"

typedef struct kns_hb {
    kn_share_consumer *sc;
    int32_t node;
    kn_arena arena;
    kp_ShareGroupHeartbeatRequest req;
} kns_hb;

/* Java's Uuid.randomUuid().toString(): 16 random bytes, base64url
 * without padding (22 characters). */
static void kns_member_id(char out[23]) {
    static const char b64[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
    uint8_t b[18] = {0};
    if (getrandom(b, 16, 0) != 16) {
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

static void kns_target_free(kns_group *g) {
    for (int32_t i = 0; i < g->t_topics; i++)
        kn_free(g->t_parts[i]);
    kn_free(g->t_parts);
    kn_free(g->t_cnt);
    kn_free(g->t_ids);
    g->t_parts = NULL;
    g->t_cnt = NULL;
    g->t_ids = NULL;
    g->t_topics = 0;
    g->has_target = false;
}

void kns_group_free(kns_group *g) {
    kns_target_free(g);
    for (int32_t i = 0; i < g->topic_cnt; i++)
        kn_free(g->topics[i]);
    kn_free(g->topics);
    g->topics = NULL;
    g->topic_cnt = 0;
}

static int kns_target_copy(kns_group *g, const kp_ShareGroupHeartbeatResponse_Assignment *as) {
    kns_target_free(g);
    int32_t n = as->topic_partitions.count;
    size_t cap = (size_t)(n > 0 ? n : 1);
    g->t_ids = kn_calloc(cap, sizeof(*g->t_ids));
    g->t_parts = kn_calloc(cap, sizeof(*g->t_parts));
    g->t_cnt = kn_calloc(cap, sizeof(*g->t_cnt));
    if (!g->t_ids || !g->t_parts || !g->t_cnt)
        goto fail;
    for (int32_t i = 0; i < n; i++) {
        const kp_ShareGroupHeartbeatResponse_TopicPartitions *tp = &as->topic_partitions.items[i];
        int32_t m = tp->partitions.count > 0 ? tp->partitions.count : 0;
        g->t_parts[i] = kn_calloc((size_t)(m ? m : 1), sizeof(int32_t));
        if (!g->t_parts[i])
            goto fail;
        g->t_topics = i + 1;
        g->t_ids[i] = tp->topic_id;
        if (m)
            memcpy(g->t_parts[i], tp->partitions.items, (size_t)m * sizeof(int32_t));
        g->t_cnt[i] = m;
    }
    g->t_topics = n > 0 ? n : 0;
    g->has_target = true;
    return 0;
fail:
    kns_target_free(g);
    return KN_ERR__NOMEM;
}

/* Applies the target when every topic id resolves (sc->lock held).
 * Returns false while an id is unknown. */
static bool kns_target_apply(kn_share_consumer *sc, const knw_metadata *md) {
    kns_group *g = &sc->grp;
    for (int32_t i = 0; i < g->t_topics; i++)
        if (!md || !knw_metadata_topic_by_id(md, &g->t_ids[i]))
            return false;
    for (size_t k = 0; k < sc->part_count; k++)
        sc->parts[k]->assigned = false;
    for (int32_t i = 0; i < g->t_topics; i++) {
        const knw_topic *t = knw_metadata_topic_by_id(md, &g->t_ids[i]);
        for (int32_t k = 0; k < g->t_cnt[i]; k++)
            if (!kns_part_add(sc, t->name, &t->topic_id, g->t_parts[i][k]))
                return true; /* out of memory: the next assignment tries again */
    }
    /* Buffered records of partitions taken away go back to the queue. */
    for (size_t k = 0; k < sc->part_count; k++)
        if (!sc->parts[k]->assigned && sc->parts[k]->has_data)
            kns_part_drop(sc->parts[k], KN_SHARE_RELEASE);
    kn_log(knw_client_logger(sc->client), KN_LOG_INFO,
           "share group %s: member %s epoch %d assigned %d topic(s)", sc->group_id, g->member_id,
           (int)g->epoch, (int)g->t_topics);
    kns_target_free(g);
    kns_signal(sc);
    return true;
}

static kns_hb *kns_hb_build(kn_share_consumer *sc, int32_t epoch, int32_t node) {
    kns_group *g = &sc->grp;
    kns_hb *h = kn_calloc(1, sizeof(*h));
    if (!h)
        return NULL;
    h->sc = sc;
    h->node = node;
    kn_arena_init(&h->arena, 512);
    kp_ShareGroupHeartbeatRequest *r = &h->req;
    kp_ShareGroupHeartbeatRequest_init(r);
    r->group_id = kn_str_c(kn_arena_strdup(&h->arena, sc->group_id));
    r->member_id = kn_str_c(kn_arena_strdup(&h->arena, g->member_id));
    r->member_epoch = epoch;
    r->rack_id = kn_str_c(NULL);
    r->subscribed_topic_names.items = NULL;
    r->subscribed_topic_names.count = -1;
    if (epoch == 0 || (epoch > 0 && g->send_topics)) {
        r->subscribed_topic_names.items =
            kn_arena_calloc(&h->arena, (size_t)(g->topic_cnt ? g->topic_cnt : 1), sizeof(kn_str));
        if (!r->subscribed_topic_names.items) {
            kn_arena_destroy(&h->arena);
            kn_free(h);
            return NULL;
        }
        r->subscribed_topic_names.count = g->topic_cnt;
        for (int32_t i = 0; i < g->topic_cnt; i++)
            r->subscribed_topic_names.items[i] = kn_str_c(kn_arena_strdup(&h->arena, g->topics[i]));
        g->send_topics = false;
    }
    return h;
}

static void kns_hb_free(kns_hb *h) {
    if (!h)
        return;
    kn_arena_destroy(&h->arena);
    kn_free(h);
}

static void kns_hb_done(knw_client *client, knw_resp *resp, void *opaque) {
    kns_hb *h = opaque;
    kn_share_consumer *sc = h->sc;
    kns_group *g = &sc->grp;
    const kp_ShareGroupHeartbeatResponse *r = resp->body;
    int64_t now = knw_now_ms();
    pthread_mutex_lock(&sc->lock);
    g->inflight = false;
    if (sc->closed || g->leaving || !g->subscribed)
        goto out;
    int err = resp->err ? resp->err : !r ? KN_ERR__PROTOCOL : r->error_code;
    if (err == KN_ERR_FENCED_MEMBER_EPOCH || err == KN_ERR_UNKNOWN_MEMBER_ID) {
        kn_log(knw_client_logger(client), KN_LOG_WARN, "share group %s: %s, rejoining", sc->group_id,
               kn_err_name(err));
        g->epoch = 0;
        g->joined = false;
        g->next_hb_ms = 0;
        goto out;
    }
    if (err && knw_coord_failed(client, KNW_COORD_GROUP, sc->group_id, h->node, err)) {
        g->next_hb_ms = now + sc->retry_backoff_ms;
        goto out;
    }
    if (err && (kn_err_is_retriable(err) || err == KN_ERR_COORDINATOR_LOAD_IN_PROGRESS || err < -199)) {
        g->next_hb_ms = now + sc->retry_backoff_ms;
        goto out;
    }
    if (err) {
        char msg[200] = "";
        if (r && r->error_message.len > 0)
            snprintf(msg, sizeof msg, ": %.*s", (int)r->error_message.len, r->error_message.ptr);
        kns_fail(sc, err, "ShareGroupHeartbeat failed: %s%s", kn_err_name(err), msg);
        goto out;
    }
    g->epoch = r->member_epoch;
    if (r->heartbeat_interval_ms > 0)
        g->heartbeat_interval_ms = r->heartbeat_interval_ms;
    if (!g->joined)
        g->early_until_ms = now + g->heartbeat_interval_ms;
    g->joined = true;
    g->next_hb_ms = now + g->heartbeat_interval_ms;
    /* A new member's partitions come in a later heartbeat than its join
     * (the coordinator first initializes their share state): asking
     * again after a tenth of the interval, only within the first one,
     * starts a member seconds sooner for a few small requests more. */
    bool got_parts = false;
    for (int i = 0; r->assignment && i < r->assignment->topic_partitions.count; i++)
        got_parts |= r->assignment->topic_partitions.items[i].partitions.count > 0;
    if (got_parts)
        g->early_until_ms = 0;
    else if (now < g->early_until_ms)
        g->next_hb_ms = now + (g->heartbeat_interval_ms / 10 > sc->retry_backoff_ms ? g->heartbeat_interval_ms / 10
                                                                                     : sc->retry_backoff_ms);
    if (r->assignment && kns_target_copy(g, r->assignment) == 0) {
        knw_metadata *md = knw_metadata_get(client);
        if (!kns_target_apply(sc, md))
            knw_metadata_request_refresh(client, false, "share group assignment names an unknown topic id");
        if (md)
            knw_metadata_release(md);
    }
out:
    pthread_mutex_unlock(&sc->lock);
    knw_resp_free(resp);
    kns_hb_free(h);
    knw_wakeup(client);
}

void *kns_group_tick(kn_share_consumer *sc, const knw_metadata *md, int64_t now_ms, int *next_ms) {
    kns_group *g = &sc->grp;
    *next_ms = 1000;
    if (!g->subscribed || g->leaving || sc->closing || sc->fatal_err)
        return NULL;
    if (!g->member_id[0])
        kns_member_id(g->member_id);
    if (g->has_target && !kns_target_apply(sc, md) && now_ms >= g->retry_at_ms) {
        g->retry_at_ms = now_ms + sc->retry_backoff_ms;
        knw_metadata_request_refresh(sc->client, true, "share group assignment names an unknown topic id");
    }
    if (g->inflight)
        return NULL;
    if (now_ms < g->next_hb_ms) {
        *next_ms = (int)(g->next_hb_ms - now_ms);
        return NULL;
    }
    int err = 0;
    char es[200];
    int32_t node = knw_coord_get(sc->client, KNW_COORD_GROUP, sc->group_id, &err, es, sizeof es);
    if (node < 0) {
        if (err && !kn_err_is_retriable(err) && err != KN_ERR_COORDINATOR_NOT_AVAILABLE && err > -200)
            kns_fail(sc, err, "share group %s: coordinator lookup failed: %s", sc->group_id, es);
        *next_ms = 100;
        return NULL;
    }
    kns_hb *h = kns_hb_build(sc, g->joined ? g->epoch : 0, node);
    if (!h)
        return NULL;
    g->inflight = true;
    g->next_hb_ms = now_ms + g->heartbeat_interval_ms;
    return h;
}

void kns_group_send(kn_share_consumer *sc, void *plan) {
    kns_hb *h = plan;
    if (h)
        knw_send(sc->client, h->node, KP_API_SHARE_GROUP_HEARTBEAT, -1, -1, &h->req, sc->request_timeout_ms,
                 kns_hb_done, h);
}

void kns_group_leave(kn_share_consumer *sc, int timeout_ms) {
    pthread_mutex_lock(&sc->lock);
    kns_group *g = &sc->grp;
    bool joined = g->joined;
    g->leaving = true;
    g->joined = false;
    int32_t node = knw_coord_known(sc->client, KNW_COORD_GROUP, sc->group_id);
    kns_hb *h = joined && node >= 0 && timeout_ms > 0 ? kns_hb_build(sc, -1, node) : NULL;
    pthread_mutex_unlock(&sc->lock);
    if (!h)
        return;
    knw_resp *resp = knw_call(sc->client, h->node, KP_API_SHARE_GROUP_HEARTBEAT, -1, -1, &h->req, timeout_ms);
    knw_resp_free(resp);
    kns_hb_free(h);
}
