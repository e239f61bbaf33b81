/*
 * share_fetch.c: ShareFetch and ShareAcknowledge with share sessions,
 * on the network thread (the share consumer's ticker and response
 * callbacks).
 *
 * Share sessions: per partition leader, the first ShareFetch (epoch 0)
 * opens a session listing every partition fetched from it; each later
 * request carries the next epoch (1, 2, ... wrapping to 1) and lists
 * only partitions new to the session or carrying acknowledgements,
 * plus the ones to forget. The broker checks the epoch strictly, so a
 * node has one request (fetch or acknowledge) in flight at a time.
 * SHARE_SESSION_NOT_FOUND / INVALID_SHARE_SESSION_EPOCH, or a lost
 * connection, start over at epoch 0; acknowledgements that travelled
 * in the failed request are reported with that error (the broker
 * releases records of a lost session itself).
 *
 * Fetching is driven by the application: a leader is fetched when poll
 * wants records (sc->want_fetch) and nothing from it is buffered. The
 * broker has one request per session in flight, so a member reads at
 * most one answer per round trip: the answer's size (MaxRecords) is
 * what bounds a fast application. It starts at max.poll.records and
 * doubles while the application empties each answer within
 * KNS_FETCH_BUDGET_MS of its landing (halving when it takes longer), up
 * to KNS_FETCH_POLLS_MAX polls: acquisition locks run while records wait
 * in the buffer, so only an application that consumes them at once gets
 * more than a poll's worth ahead (kns_fetch_adapt).
 *
 * Acknowledgements ride on the next fetch, or go alone in a
 * ShareAcknowledge when no fetch is due (or at once for a commit). While
 * a grown answer is being emptied they wait for the fetch that follows
 * it, at most KNS_FETCH_BUDGET_MS: sent alone they would hold the
 * session (one request at a time) when that fetch is due.
 */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "error.h"
#include "kn_alloc.h"
#include "log.h"
#include "proto/generated/kp_apis.h"
#include "proto/generated/kp_share_acknowledge.h"
#include "proto/generated/kp_share_fetch.h"
#include "share/share_int.h"
#include "share/share_metrics.h"

#define KNS_MAX_PARTS_PER_REQ 4096
/* How long fetched records may wait in the buffer for a fetch to grow
 * (and acknowledgements for the next fetch): far below any acquisition
 * lock (the broker's group.share.min.record.lock.duration.ms is 15 s by
 * default, 1 s at the lowest tools/kafka/broker sets). */
#define KNS_FETCH_BUDGET_MS 100
/* The largest answer asked for, in max.poll.records: bounds the records
 * one member holds however fast it consumes (16 x 500 = 8000 by
 * default, 500 per partition of a 16-partition topic). */
#define KNS_FETCH_POLLS_MAX 16

void kns_fetch_adapt(kn_share_consumer *sc, int64_t now_ms) {
    int64_t took = now_ms - sc->landed_ms;
    sc->landed_ms = 0;
    /* record_limit asks the broker for exactly max.poll.records: the
     * application chose the fewest locks over fewer round trips. */
    if (sc->record_limit)
        return;
    int64_t n = sc->fetch_records;
    if (took * 2 <= KNS_FETCH_BUDGET_MS)
        n *= 2;
    else if (took > KNS_FETCH_BUDGET_MS)
        n /= 2;
    int64_t max = (int64_t)sc->max_poll_records * KNS_FETCH_POLLS_MAX;
    if (max > 0x7fffffff)
        max = 0x7fffffff;
    sc->fetch_records = (int)(n < sc->max_poll_records ? sc->max_poll_records : n > max ? max : n);
}

typedef struct kns_req {
    kn_share_consumer *sc;
    int32_t node;
    int32_t epoch;
    bool ack_only;
    bool final;
    bool renew; /* a ShareAcknowledge of lock renewals only (v2+, IsRenewAck) */
    kns_part **parts; /* the partitions whose acknowledgements it carries */
    int32_t part_count;
    int64_t ack_count; /* offsets acknowledged in it (gaps left out), for the metrics */
    kn_arena arena;
    union {
        kp_ShareFetchRequest fetch;
        kp_ShareAcknowledgeRequest ack;
    } u;
} kns_req;

static int32_t kns_next_epoch(int32_t e) { return e >= 0x7fffffff ? 1 : e + 1; }

static void kns_req_free(kns_req *q) {
    if (!q)
        return;
    kn_arena_destroy(&q->arena);
    kn_free(q->parts);
    kn_free(q);
}

/* The leader of p from md, or -1. */
static int32_t kns_leader(const knw_metadata *md, const kns_part *p) {
    const knw_topic *t = md ? knw_metadata_topic(md, p->topic) : NULL;
    if (!t || p->partition < 0 || p->partition >= t->partition_count)
        return -1;
    return t->partitions[p->partition].leader;
}

/* Fills an acknowledgement batch array from p->acks, moving them to
 * p->sent. The array lives in the request's arena. Returns the count,
 * or -1 on NOMEM. */
static int32_t kns_fill_acks(kns_req *q, kns_part *p, kp_ShareFetchRequest_AcknowledgementBatch **out) {
    /* A renewal request carries p->renews instead (same path back). */
    kns_ranges *src = q->renew ? &p->renews : &p->acks;
    int32_t n = src->count;
    *out = NULL;
    if (!n)
        return 0;
    if (!q->renew)
        p->acks_held_ms = 0;
    kp_ShareFetchRequest_AcknowledgementBatch *b = kn_arena_calloc(&q->arena, (size_t)n, sizeof(*b));
    int8_t *types = kn_arena_alloc(&q->arena, (size_t)n);
    if (!b || !types)
        return -1;
    for (int32_t i = 0; i < n; i++) {
        b[i].first_offset = src->items[i].first;
        b[i].last_offset = src->items[i].last;
        types[i] = src->items[i].type;
        if (types[i] != KNS_ACK_GAP)
            q->ack_count += src->items[i].last - src->items[i].first + 1;
        b[i].acknowledge_types.items = &types[i];
        b[i].acknowledge_types.count = 1;
    }
    *out = b;
    kns_ranges_free(&p->sent);
    p->sent = *src;
    memset(src, 0, sizeof(*src));
    return n;
}

/* Groups parts[0..n) by topic id into a topics array of the request:
 * the generated structs differ per API, so this works on indexes. */
typedef struct kns_tgroup {
    kn_uuid id;
    int32_t first, count; /* into the sorted part list */
} kns_tgroup;

static int32_t kns_group_topics(kns_part **parts, int32_t n, kns_tgroup *groups) {
    /* parts are sorted by topic name, so one topic's parts are adjacent */
    int32_t g = 0;
    for (int32_t i = 0; i < n; i++) {
        if (g == 0 || memcmp(&groups[g - 1].id, &parts[i]->topic_id, sizeof(kn_uuid)) != 0) {
            groups[g].id = parts[i]->topic_id;
            groups[g].first = i;
            groups[g].count = 0;
            g++;
        }
        groups[g - 1].count++;
    }
    return g;
}

static int kns_part_cmp(const void *a, const void *b) {
    const kns_part *x = *(kns_part *const *)a, *y = *(kns_part *const *)b;
    int c = strcmp(x->topic, y->topic);
    return c ? c : (x->partition > y->partition) - (x->partition < y->partition);
}

/* Builds a ShareFetch for node over list[0..n) (sorted), with forgotten
 * partitions fgt[0..nf). */
static kns_req *kns_build_fetch(kn_share_consumer *sc, kns_node *node, kns_part **list, int32_t n,
                                kns_part **fgt, int32_t nf) {
    kns_req *q = kn_calloc(1, sizeof(*q));
    if (!q)
        return NULL;
    kn_arena_init(&q->arena, 1024);
    q->sc = sc;
    q->node = node->node_id;
    q->epoch = node->epoch;
    q->parts = kn_calloc((size_t)(n ? n : 1), sizeof(*q->parts));
    kns_tgroup *groups = kn_arena_calloc(&q->arena, (size_t)(n ? n : 1), sizeof(*groups));
    kns_tgroup *fgroups = kn_arena_calloc(&q->arena, (size_t)(nf ? nf : 1), sizeof(*fgroups));
    if (!q->parts || !groups || !fgroups)
        goto fail;
    kp_ShareFetchRequest *r = &q->u.fetch;
    kp_ShareFetchRequest_init(r);
    r->group_id = kn_str_c(sc->group_id);
    r->member_id = kn_str_c(sc->grp.member_id);
    r->share_session_epoch = node->epoch;
    r->max_wait_ms = sc->fetch_max_wait_ms;
    r->min_bytes = sc->fetch_min_bytes;
    r->max_bytes = sc->fetch_max_bytes;
    r->max_records = sc->fetch_records;
    r->batch_size = sc->max_poll_records; /* acquired and acknowledged per poll */
    r->share_acquire_mode = sc->record_limit ? 1 : 0;
    int32_t g = kns_group_topics(list, n, groups);
    r->topics.items = kn_arena_calloc(&q->arena, (size_t)(g ? g : 1), sizeof(*r->topics.items));
    if (!r->topics.items)
        goto fail;
    r->topics.count = g;
    for (int32_t i = 0; i < g; i++) {
        kp_ShareFetchRequest_FetchTopic *t = &r->topics.items[i];
        kp_ShareFetchRequest_FetchTopic_init(t);
        t->topic_id = groups[i].id;
        t->partitions.items =
            kn_arena_calloc(&q->arena, (size_t)groups[i].count, sizeof(*t->partitions.items));
        if (!t->partitions.items)
            goto fail;
        t->partitions.count = groups[i].count;
        for (int32_t k = 0; k < groups[i].count; k++) {
            kns_part *p = list[groups[i].first + k];
            kp_ShareFetchRequest_FetchPartition *fp = &t->partitions.items[k];
            kp_ShareFetchRequest_FetchPartition_init(fp);
            fp->partition_index = p->partition;
            p->in_session = true;
            p->leader = node->node_id;
            if (node->epoch != 0 && p->acks.count && !p->sent.count) {
                kp_ShareFetchRequest_AcknowledgementBatch *b;
                int32_t nb = kns_fill_acks(q, p, &b);
                if (nb < 0)
                    goto fail;
                fp->acknowledgement_batches.items = b;
                fp->acknowledgement_batches.count = nb;
                q->parts[q->part_count++] = p;
            }
        }
    }
    int32_t fg = kns_group_topics(fgt, nf, fgroups);
    r->forgotten_topics_data.items =
        kn_arena_calloc(&q->arena, (size_t)(fg ? fg : 1), sizeof(*r->forgotten_topics_data.items));
    if (!r->forgotten_topics_data.items)
        goto fail;
    r->forgotten_topics_data.count = fg;
    for (int32_t i = 0; i < fg; i++) {
        kp_ShareFetchRequest_ForgottenTopic *t = &r->forgotten_topics_data.items[i];
        t->topic_id = fgroups[i].id;
        t->partitions.items = kn_arena_calloc(&q->arena, (size_t)fgroups[i].count, sizeof(int32_t));
        if (!t->partitions.items)
            goto fail;
        t->partitions.count = fgroups[i].count;
        for (int32_t k = 0; k < fgroups[i].count; k++) {
            t->partitions.items[k] = fgt[fgroups[i].first + k]->partition;
            fgt[fgroups[i].first + k]->in_session = false;
        }
    }
    return q;
fail:
    /* acknowledgements moved to sent go back */
    for (int32_t i = 0; q && i < q->part_count; i++) {
        kns_part *p = q->parts[i];
        kns_ranges_free(&p->acks);
        p->acks = p->sent;
        memset(&p->sent, 0, sizeof(p->sent));
    }
    kns_req_free(q);
    return NULL;
}

/* Builds a ShareAcknowledge for node carrying the acknowledgements of
 * list[0..n) (sorted); final: epoch -1 (closes the session). */
static kns_req *kns_build_ack(kn_share_consumer *sc, kns_node *node, kns_part **list, int32_t n, bool final,
                              bool renew) {
    kns_req *q = kn_calloc(1, sizeof(*q));
    if (!q)
        return NULL;
    kn_arena_init(&q->arena, 1024);
    q->sc = sc;
    q->node = node->node_id;
    q->ack_only = true;
    q->final = final;
    q->renew = renew;
    q->epoch = final ? -1 : node->epoch;
    q->parts = kn_calloc((size_t)(n ? n : 1), sizeof(*q->parts));
    kns_tgroup *groups = kn_arena_calloc(&q->arena, (size_t)(n ? n : 1), sizeof(*groups));
    if (!q->parts || !groups)
        goto fail;
    kp_ShareAcknowledgeRequest *r = &q->u.ack;
    kp_ShareAcknowledgeRequest_init(r);
    r->group_id = kn_str_c(sc->group_id);
    r->member_id = kn_str_c(sc->grp.member_id);
    r->share_session_epoch = q->epoch;
    r->is_renew_ack = renew;
    int32_t g = kns_group_topics(list, n, groups);
    r->topics.items = kn_arena_calloc(&q->arena, (size_t)(g ? g : 1), sizeof(*r->topics.items));
    if (!r->topics.items)
        goto fail;
    r->topics.count = g;
    for (int32_t i = 0; i < g; i++) {
        kp_ShareAcknowledgeRequest_AcknowledgeTopic *t = &r->topics.items[i];
        t->topic_id = groups[i].id;
        t->partitions.items =
            kn_arena_calloc(&q->arena, (size_t)groups[i].count, sizeof(*t->partitions.items));
        if (!t->partitions.items)
            goto fail;
        t->partitions.count = groups[i].count;
        for (int32_t k = 0; k < groups[i].count; k++) {
            kns_part *p = list[groups[i].first + k];
            kp_ShareAcknowledgeRequest_AcknowledgePartition *ap = &t->partitions.items[k];
            ap->partition_index = p->partition;
            kp_ShareFetchRequest_AcknowledgementBatch *b;
            int32_t nb = kns_fill_acks(q, p, &b);
            if (nb < 0)
                goto fail;
            q->parts[q->part_count++] = p;
            /* Both APIs' batch structs have the same layout. */
            ap->acknowledgement_batches.items = (kp_ShareAcknowledgeRequest_AcknowledgementBatch *)b;
            ap->acknowledgement_batches.count = nb;
        }
    }
    return q;
fail:
    for (int32_t i = 0; q && i < q->part_count; i++) {
        kns_part *p = q->parts[i];
        kns_ranges *back = renew ? &p->renews : &p->acks;
        kns_ranges_free(back);
        *back = p->sent;
        memset(&p->sent, 0, sizeof(p->sent));
    }
    kns_req_free(q);
    return NULL;
}

/* Every acknowledgement q carried is answered with err (sc->lock held). */
static void kns_req_fail_acks(kn_share_consumer *sc, kns_req *q, int err) {
    for (int32_t i = 0; i < q->part_count; i++) {
        kns_part *p = q->parts[i];
        if (p->sent.count)
            kns_result_add(sc, p, &p->sent, err, 0);
        kns_ranges_free(&p->sent);
    }
}

/* The session with node is gone: the next fetch opens a new one. */
static void kns_session_reset(kn_share_consumer *sc, kns_node *node) {
    node->epoch = 0;
    for (size_t i = 0; i < sc->part_count; i++)
        if (sc->parts[i]->leader == node->node_id)
            sc->parts[i]->in_session = false;
}

static kns_part *kns_part_by_id(kn_share_consumer *sc, const kn_uuid *id, int32_t partition) {
    for (size_t i = 0; i < sc->part_count; i++)
        if (sc->parts[i]->partition == partition && memcmp(&sc->parts[i]->topic_id, id, sizeof(*id)) == 0)
            return sc->parts[i];
    return NULL;
}

/* The acknowledgement answer for p in q (sc->lock held). */
static void kns_ack_answer(kn_share_consumer *sc, kns_req *q, kns_part *p, int err) {
    for (int32_t i = 0; i < q->part_count; i++)
        if (q->parts[i] == p) {
            if (p->sent.count)
                kns_result_add(sc, p, &p->sent, err, 0);
            kns_ranges_free(&p->sent);
            q->parts[i] = q->parts[--q->part_count];
            return;
        }
}

static void kns_done(knw_client *client, knw_resp *resp, void *opaque) {
    kns_req *q = opaque;
    kn_share_consumer *sc = q->sc;
    knc_buf *buf = NULL;
    int64_t now = knw_now_ms();
    pthread_mutex_lock(&sc->lock);
    kns_node *node = kns_node_get(sc, q->node);
    if (node)
        node->inflight = false;
    if (q->part_count)
        sc->inflight_acks--;
    int err = resp->err;
    int16_t top = 0;
    const kn_str *msg = NULL;
    if (!err && q->ack_only) {
        const kp_ShareAcknowledgeResponse *r = resp->body;
        top = r ? r->error_code : 0;
        msg = r ? &r->error_message : NULL;
        kns_metrics_ack_throttle(sc, r ? r->throttle_time_ms : -1, now);
    } else if (!err) {
        const kp_ShareFetchResponse *r = resp->body;
        top = r ? r->error_code : 0;
        msg = r ? &r->error_message : NULL;
        kns_metrics_fetch(sc, resp->latency_us, resp->raw_len, r ? r->throttle_time_ms : -1, now);
    }
    if (!err && !resp->body)
        err = KN_ERR__PROTOCOL;
    if (!err)
        err = top;
    if (err) {
        if (node && !q->final) {
            kns_session_reset(sc, node);
            node->backoff_until_ms = now + sc->retry_backoff_ms;
        }
        if (err == KN_ERR_GROUP_AUTHORIZATION_FAILED || err == KN_ERR_TOPIC_AUTHORIZATION_FAILED)
            kns_fail(sc, err, "%s failed: %s%s%.*s", q->ack_only ? "ShareAcknowledge" : "ShareFetch",
                     kn_err_name(err), msg && msg->len > 0 ? ": " : "",
                     msg && msg->len > 0 ? (int)msg->len : 0, msg && msg->len > 0 ? msg->ptr : "");
        else if (err != KN_ERR__CLOSED)
            kn_log(knw_client_logger(client), KN_LOG_INFO, "%s to node %d failed: %s %s",
                   q->ack_only ? "ShareAcknowledge" : "ShareFetch", (int)q->node, kn_err_name(err),
                   resp->errstr[0] ? resp->errstr : "");
        kns_req_fail_acks(sc, q, err);
        goto out;
    }
    if (q->ack_only) {
        const kp_ShareAcknowledgeResponse *r = resp->body;
        for (int32_t t = 0; t < r->responses.count; t++) {
            const kp_ShareAcknowledgeResponse_ShareAcknowledgeTopicResponse *tr = &r->responses.items[t];
            for (int32_t k = 0; k < tr->partitions.count; k++) {
                kns_part *p = kns_part_by_id(sc, &tr->topic_id, tr->partitions.items[k].partition_index);
                if (p)
                    kns_ack_answer(sc, q, p, tr->partitions.items[k].error_code);
            }
        }
        kns_req_fail_acks(sc, q, KN_ERR__PROTOCOL); /* any the broker did not answer */
        goto out;
    }
    const kp_ShareFetchResponse *r = resp->body;
    bool refresh = false;
    for (int32_t t = 0; t < r->responses.count; t++) {
        const kp_ShareFetchResponse_ShareFetchableTopicResponse *tr = &r->responses.items[t];
        for (int32_t k = 0; k < tr->partitions.count; k++) {
            const kp_ShareFetchResponse_PartitionData *pd = &tr->partitions.items[k];
            kns_part *p = kns_part_by_id(sc, &tr->topic_id, pd->partition_index);
            if (!p)
                continue;
            kns_ack_answer(sc, q, p, pd->acknowledge_error_code);
            if (pd->error_code) {
                if (pd->error_code == KN_ERR_NOT_LEADER_OR_FOLLOWER ||
                    pd->error_code == KN_ERR_UNKNOWN_TOPIC_OR_PARTITION ||
                    pd->error_code == KN_ERR_UNKNOWN_TOPIC_ID ||
                    pd->error_code == KN_ERR_FENCED_LEADER_EPOCH) {
                    refresh = true;
                    p->in_session = false;
                }
                kn_log(knw_client_logger(client), KN_LOG_INFO, "ShareFetch %s [%d]: %s", p->topic,
                       (int)p->partition, kn_err_name(pd->error_code));
                continue;
            }
            if (pd->acquired_records.count > 0)
                kn_log(knw_client_logger(client), KN_LOG_DEBUG,
                       "ShareFetch %s [%d]: acquired %d range(s) %lld..%lld, %d bytes%s", p->topic,
                       (int)p->partition, (int)pd->acquired_records.count,
                       (long long)pd->acquired_records.items[0].first_offset,
                       (long long)pd->acquired_records.items[pd->acquired_records.count - 1].last_offset,
                       (int)pd->records.len, p->assigned ? "" : " (no longer assigned: released)");
            if (pd->acquired_records.count <= 0 || !p->assigned) {
                /* Acquired for a partition taken away meanwhile: give
                 * the records back. */
                for (int32_t a = 0; p && !p->assigned && a < pd->acquired_records.count; a++)
                    (void)kns_ranges_add(&p->acks, pd->acquired_records.items[a].first_offset,
                                         pd->acquired_records.items[a].last_offset, KN_SHARE_RELEASE);
                continue;
            }
            if (!buf && !(buf = knc_buf_from_resp(resp))) {
                resp = NULL; /* freed by knc_buf_from_resp */
                break;
            }
            kns_acq *acq = kn_malloc((size_t)pd->acquired_records.count * sizeof(*acq));
            int rc = KN_ERR__NOMEM;
            if (acq) {
                for (int32_t a = 0; a < pd->acquired_records.count; a++) {
                    acq[a].first = pd->acquired_records.items[a].first_offset;
                    acq[a].last = pd->acquired_records.items[a].last_offset;
                    acq[a].delivery_count = pd->acquired_records.items[a].delivery_count;
                }
                rc = kns_part_take(p, buf, pd->records.ptr, pd->records.len > 0 ? (size_t)pd->records.len : 0,
                                   acq, pd->acquired_records.count);
                kn_free(acq);
                if (rc == 0 && !sc->landed_ms)
                    sc->landed_ms = now;
            }
            if (rc != 0) {
                kn_log(knw_client_logger(client), KN_LOG_WARN, "ShareFetch %s [%d]: %s acquired ranges",
                       p->topic, (int)p->partition, rc == KN_ERR__PROTOCOL ? "malformed" : "no memory for");
                for (int32_t a = 0; a < pd->acquired_records.count && rc == KN_ERR__NOMEM; a++)
                    (void)kns_ranges_add(&p->acks, pd->acquired_records.items[a].first_offset,
                                         pd->acquired_records.items[a].last_offset, KN_SHARE_RELEASE);
            }
        }
    }
    kns_req_fail_acks(sc, q, KN_ERR__PROTOCOL); /* partitions the answer left out */
    if (refresh)
        knw_metadata_request_refresh(client, false, "share fetch: leader moved");
out:
    kns_signal(sc);
    pthread_cond_broadcast(&sc->cond);
    pthread_mutex_unlock(&sc->lock);
    if (buf)
        knc_buf_release(buf);
    else
        knw_resp_free(resp);
    kns_req_free(q);
    knw_wakeup(client);
}

static void kns_send(kn_share_consumer *sc, kns_req *q) {
    if (q->ack_only)
        knw_send(sc->client, q->node, KP_API_SHARE_ACKNOWLEDGE, q->renew ? 2 : 1, -1, &q->u.ack,
                 sc->request_timeout_ms, kns_done, q);
    else
        knw_send(sc->client, q->node, KP_API_SHARE_FETCH, 1, -1, &q->u.fetch,
                 sc->request_timeout_ms + sc->fetch_max_wait_ms, kns_done, q);
}

/* Plans the request for one node (sc->lock held). */
static kns_req *kns_plan_node(kn_share_consumer *sc, kns_node *node, const knw_metadata *md, int64_t now_ms,
                              kns_part **tmp, kns_part **fgt, int *next_ms) {
    if (node->inflight || node->closed || now_ms < node->backoff_until_ms)
        return NULL;
    /* Lock renewals go first, alone (KIP-1222: a ShareAcknowledge with
     * IsRenewAck), so they never wait behind a long-polling fetch. */
    int32_t nr = 0;
    for (size_t i = 0; i < sc->part_count && nr < KNS_MAX_PARTS_PER_REQ; i++) {
        kns_part *p = sc->parts[i];
        if (p->renews.count && !p->sent.count && p->leader == node->node_id)
            tmp[nr++] = p;
    }
    if (nr && node->epoch == 0) {
        /* the session they were acquired in is gone, and the records with it */
        for (int32_t i = 0; i < nr; i++) {
            kns_result_add(sc, tmp[i], &tmp[i]->renews, KN_ERR_SHARE_SESSION_NOT_FOUND, 0);
            kns_ranges_free(&tmp[i]->renews);
        }
    } else if (nr) {
        qsort(tmp, (size_t)nr, sizeof(*tmp), kns_part_cmp);
        return kns_build_ack(sc, node, tmp, nr, false, true);
    }
    int32_t n = 0, nf = 0;
    bool buffered = false, want = false, stranded = false;
    for (size_t i = 0; i < sc->part_count && n < KNS_MAX_PARTS_PER_REQ; i++) {
        kns_part *p = sc->parts[i];
        int32_t leader = p->assigned ? kns_leader(md, p) : p->leader;
        if (leader != node->node_id) {
            if (p->in_session && p->leader == node->node_id && nf < KNS_MAX_PARTS_PER_REQ)
                fgt[nf++] = p; /* moved away or unassigned */
            continue;
        }
        if (!p->assigned) {
            if (p->in_session && nf < KNS_MAX_PARTS_PER_REQ)
                fgt[nf++] = p;
            /* A fetch cannot carry these (listing the partition would
             * fetch it again): they go first, alone. */
            if (p->acks.count && !p->sent.count)
                stranded = true;
            continue;
        }
        /* A commit waits: a fetch (long-polling up to fetch.max.wait.ms)
         * would hold its answer back. */
        if (sc->flush_acks && p->acks.count && !p->sent.count)
            stranded = true;
        if (p->has_data)
            buffered = true;
        tmp[n++] = p;
        want = true;
    }
    if (!sc->closing && sc->want_fetch && want && !buffered && !(stranded && node->epoch != 0)) {
        if (node->epoch == 0) {
            /* A new session cannot carry acknowledgements: those of an
             * ended session are answered with its loss. */
            for (int32_t i = 0; i < n; i++)
                if (tmp[i]->acks.count && !tmp[i]->sent.count) {
                    kns_result_add(sc, tmp[i], &tmp[i]->acks, KN_ERR_SHARE_SESSION_NOT_FOUND, 0);
                    kns_ranges_free(&tmp[i]->acks);
                }
            nf = 0;
        } else {
            /* incremental: only new partitions and those with acks */
            int32_t m = 0;
            for (int32_t i = 0; i < n; i++)
                if (!tmp[i]->in_session || (tmp[i]->acks.count && !tmp[i]->sent.count))
                    tmp[m++] = tmp[i];
            n = m;
        }
        qsort(tmp, (size_t)n, sizeof(*tmp), kns_part_cmp);
        qsort(fgt, (size_t)nf, sizeof(*fgt), kns_part_cmp);
        return kns_build_fetch(sc, node, tmp, n, fgt, nf);
    }
    /* No fetch now: acknowledgements go alone (partitions no longer
     * assigned included), unless a grown answer is still being emptied:
     * then they wait for the fetch that follows it, at most
     * KNS_FETCH_BUDGET_MS. */
    bool hold = buffered && !sc->flush_acks && !sc->closing && sc->fetch_records > sc->max_poll_records;
    int32_t m = 0;
    for (size_t i = 0; i < sc->part_count && m < KNS_MAX_PARTS_PER_REQ; i++) {
        kns_part *p = sc->parts[i];
        if (!p->acks.count || p->sent.count || p->leader != node->node_id)
            continue;
        if (hold && p->assigned) {
            if (!p->acks_held_ms)
                p->acks_held_ms = now_ms;
            int64_t left = p->acks_held_ms + KNS_FETCH_BUDGET_MS - now_ms;
            if (left > 0) {
                if (left < *next_ms)
                    *next_ms = (int)left;
                continue;
            }
        }
        tmp[m++] = p;
    }
    if (!m)
        return NULL;
    if (node->epoch == 0) {
        for (int32_t i = 0; i < m; i++) {
            kns_result_add(sc, tmp[i], &tmp[i]->acks, KN_ERR_SHARE_SESSION_NOT_FOUND, 0);
            kns_ranges_free(&tmp[i]->acks);
        }
        return NULL;
    }
    qsort(tmp, (size_t)m, sizeof(*tmp), kns_part_cmp);
    return kns_build_ack(sc, node, tmp, m, false, false);
}

int kns_tick(knw_client *client, int64_t now_ms, void *opaque) {
    kn_share_consumer *sc = opaque;
    int next_ms = 1000;
    kns_req *reqs[64];
    int nreq = 0;
    knw_metadata *md = knw_metadata_get(client);
    pthread_mutex_lock(&sc->lock);
    void *hb = kns_group_tick(sc, md, now_ms, &next_ms);
    if (!sc->closed && !sc->fatal_err) {
        /* every leader of an assigned partition gets a node entry */
        for (size_t i = 0; i < sc->part_count; i++) {
            kns_part *p = sc->parts[i];
            int32_t l = p->assigned ? kns_leader(md, p) : -1;
            if (l >= 0)
                (void)kns_node_get(sc, l);
            else if (p->assigned && md)
                knw_metadata_request_refresh(client, false, "share fetch: partition without a leader");
            if (p->assigned && l >= 0 && p->leader != l && !p->in_session)
                p->leader = l;
        }
        size_t cap = sc->part_count ? sc->part_count : 1;
        kns_part **tmp = kn_malloc(cap * sizeof(*tmp));
        kns_part **fgt = kn_malloc(cap * sizeof(*fgt));
        for (size_t k = 0; tmp && fgt && k < sc->node_count && nreq < 64; k++) {
            kns_node *node = &sc->nodes[k];
            kns_req *q = kns_plan_node(sc, node, md, now_ms, tmp, fgt, &next_ms);
            if (!q)
                continue;
            node->inflight = true;
            if (q->part_count)
                sc->inflight_acks++;
            kns_metrics_acks_sent(sc, q->ack_count, now_ms);
            node->epoch = kns_next_epoch(node->epoch);
            reqs[nreq++] = q;
        }
        kn_free(tmp);
        kn_free(fgt);
        sc->flush_acks = false;
        for (size_t k = 0; k < sc->node_count; k++)
            if (sc->nodes[k].backoff_until_ms > now_ms && sc->nodes[k].backoff_until_ms - now_ms < next_ms)
                next_ms = (int)(sc->nodes[k].backoff_until_ms - now_ms);
    }
    pthread_mutex_unlock(&sc->lock);
    if (md)
        knw_metadata_release(md);
    kns_group_send(sc, hb);
    for (int i = 0; i < nreq; i++)
        kns_send(sc, reqs[i]);
    return next_ms;
}

void kns_close_sessions(kn_share_consumer *sc, int64_t deadline_ms) {
    kns_req *reqs[64];
    int nreq = 0;
    pthread_mutex_lock(&sc->lock);
    /* wait for requests in flight: their answers may carry records to release */
    while (true) {
        bool busy = false;
        for (size_t k = 0; k < sc->node_count; k++)
            busy |= sc->nodes[k].inflight;
        int64_t now = knw_now_ms();
        if (!busy || now >= deadline_ms)
            break;
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        int64_t ms = deadline_ms - now < 100 ? deadline_ms - now : 100;
        ts.tv_sec += ms / 1000;
        ts.tv_nsec += (ms % 1000) * 1000000;
        if (ts.tv_nsec >= 1000000000) {
            ts.tv_sec++;
            ts.tv_nsec -= 1000000000;
        }
        pthread_cond_timedwait(&sc->cond, &sc->lock, &ts);
    }
    /* buffered, undelivered records go back too */
    for (size_t i = 0; i < sc->part_count; i++)
        if (sc->parts[i]->has_data)
            kns_part_drop(sc->parts[i], KN_SHARE_RELEASE);
    kns_part **tmp = kn_malloc((sc->part_count ? sc->part_count : 1) * sizeof(*tmp));
    for (size_t k = 0; tmp && k < sc->node_count && nreq < 64; k++) {
        kns_node *node = &sc->nodes[k];
        if (node->epoch == 0 || node->inflight)
            continue;
        int32_t m = 0;
        for (size_t i = 0; i < sc->part_count && m < KNS_MAX_PARTS_PER_REQ; i++)
            if (sc->parts[i]->acks.count && !sc->parts[i]->sent.count &&
                sc->parts[i]->leader == node->node_id)
                tmp[m++] = sc->parts[i];
        qsort(tmp, (size_t)m, sizeof(*tmp), kns_part_cmp);
        kns_req *q = kns_build_ack(sc, node, tmp, m, true, false);
        if (!q)
            continue;
        node->inflight = true;
        node->closed = true;
        if (q->part_count)
            sc->inflight_acks++;
        kns_metrics_acks_sent(sc, q->ack_count, knw_now_ms());
        reqs[nreq++] = q;
    }
    kn_free(tmp);
    pthread_mutex_unlock(&sc->lock);
    int64_t left = deadline_ms - knw_now_ms();
    for (int i = 0; i < nreq; i++) {
        kns_req *q = reqs[i];
        knw_resp *resp = knw_call(sc->client, q->node, KP_API_SHARE_ACKNOWLEDGE, 1, -1, &q->u.ack,
                                  (int)(left > 0 ? left : 1));
        kns_done(sc->client, resp, q);
        left = deadline_ms - knw_now_ms();
    }
}
