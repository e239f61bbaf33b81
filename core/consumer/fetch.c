/*
 * fetch.c: the Fetch request of one broker and its answer, on the
 * network thread.
 *
 * Answers arrive on the network thread (knw_cb) and are matched back to
 * the partition by (id, gen, fetch position): anything requested for a
 * position the application has since moved is dropped. An error
 * answered to a read-ahead fetch is only a reason to back off: it is
 * acted on (reset, failure) when the partition fetches at its position
 * again, after the records before it were delivered. A Fetch response
 * is kept raw; each partition's records blob stays in it, referenced,
 * until poll drains it (drain.c). KIP-392: a leader may name a read
 * replica in client.rack; the partition is fetched from there until it
 * expires or errs.
 */
#include <stdlib.h>
#include <string.h>

#include "consumer/consumer_metrics.h"
#include "consumer/fetch.h"
#include "error.h"
#include "kn_alloc.h"
#include "log.h"
#include "proto/generated/kp_apis.h"

/* KIP-392: the broker p is fetched from: the read replica its leader
 * named, while that is fresh and the broker is online in md and one of
 * p's replicas (as Java, which otherwise falls back to the leader);
 * else the leader (-1 when unknown, *epoch -1 too). */
int32_t knc_fetch_node(const knw_metadata *md, const knc_part *p, int64_t now_ms,
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

int knc_fill_fetch(const knc_config *cfg, knc_node *node, const knw_metadata *md, knc_req *req,
                   int max_wait_ms, int32_t max_bytes) {
    kp_FetchRequest *f = &req->u.fetch;
    kp_FetchRequest_init(f);
    f->replica_id = -1;
    f->max_wait_ms = max_wait_ms;
    f->min_bytes = cfg->fetch_min_bytes;
    f->max_bytes = max_bytes;
    f->isolation_level = cfg->read_committed ? 1 : 0;
    f->rack_id.ptr = cfg->rack ? cfg->rack : "";
    f->rack_id.len = (int32_t)strlen(f->rack_id.ptr);

    /* The session decides which partitions must be listed. */
    int32_t n = req->part_count;
    knc_sess_part *want = kn_arena_alloc(&req->arena, (size_t)n * sizeof(*want));
    bool *include = kn_arena_alloc(&req->arena, (size_t)n * sizeof(*include));
    if (!want || !include)
        return KN_ERR__NOMEM;
    /* The leader epoch goes into the plan too (the broker checks the one
     * its session holds); one metadata lookup per topic. */
    for (int32_t t = 0; t < req->topic_count; t++) {
        const knw_topic *kt = knw_metadata_topic(md, req->names[t]);
        for (int32_t i = req->topic_start[t]; i < req->topic_start[t + 1]; i++) {
            const knw_partition *kp = knc_md_partition(kt, req->parts[i].partition);
            want[i].topic = req->names[t];
            want[i].partition = req->parts[i].partition;
            want[i].offset = req->parts[i].offset;
            want[i].leader_epoch = kp ? kp->leader_epoch : -1;
        }
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
            fp->partition = rp->partition;
            fp->current_leader_epoch = want[i].leader_epoch;
            fp->fetch_offset = rp->offset;
            fp->last_fetched_epoch = -1;
            fp->log_start_offset = -1;
            fp->partition_max_bytes = cfg->max_partition_fetch_bytes;
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
                   c->cfg.rack ? c->cfg.rack : "");
        p->read_replica = pd->preferred_read_replica;
        p->read_replica_until_ms = now_ms + c->cfg.metadata_max_age_ms;
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
    knc_node *node = knc_nodes_get(&c->nodes, req->node_id);
    const kp_FetchResponse *r = resp->body;
    c->stats.fetch_requests++;
    c->stats.fetch_latency_us_total += resp->latency_us;
    if (resp->latency_us > c->stats.fetch_latency_us_max)
        c->stats.fetch_latency_us_max = resp->latency_us;
    c->stats.fetch_response_bytes += (int64_t)resp->raw_len;
    knc_metrics_fetch(c, resp->latency_us, resp->raw_len, r ? r->throttle_time_ms : -1, now);
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
    if (knc_closed(c)) {
        /* nothing to update */
    } else if (resp->err || !r || r->error_code != 0) {
        int err = resp->err ? resp->err : r ? r->error_code : KN_ERR__PROTOCOL;
        c->stats.fetch_errors++;
        kn_log(knc_logger(c), KN_LOG_DEBUG, "Fetch from broker %d (session epoch %d) failed: %s",
               (int)req->node_id, (int)req->sent_epoch, kn_err_name(err));
        if (node)
            node->backoff_until_ms = now + c->cfg.retry_backoff_ms;
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
                    kn_log(knc_logger(c), KN_LOG_DEBUG, "%s [%d]: read-ahead Fetch at offset %lld: %s",
                           p->topic, (int)p->partition, (long long)rp->offset, kn_err_name(pd->error_code));
                    refresh |= act == KNC_ACT_REFRESH_METADATA;
                    p->retry_at_ms = now + c->cfg.retry_backoff_ms;
                    continue;
                }
                switch (act) {
                case KNC_ACT_OK:
                    if (pd->records.len <= 0) {
                        knc_metrics_partition(c, (c->cfg.read_committed ? pd->last_stable_offset
                                                                    : pd->high_watermark) - rp->offset,
                                              rp->offset, pd->log_start_offset, now);
                        break;
                    }
                    if (!buf) {
                        size_t size = resp->raw_len;
                        buf = knc_buf_from_resp(resp);
                        resp = NULL;
                        if (!buf)
                            goto done;
                        /* Counted against the fetch-buffer budget while
                         * any slice still points into it. */
                        buf->size = size;
                        knc_fetchbuf_track(&c->fbuf, buf);
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
                    if (f) {
                        knc_fetchbuf_learn(&c->fbuf, f->len, f->fetch_offset, f->end_offset);
                        /* The lag once these records are consumed (Java
                         * records it as they are returned). */
                        knc_metrics_partition(c, (c->cfg.read_committed ? pd->last_stable_offset
                                                                    : pd->high_watermark) - f->end_offset,
                                              f->end_offset, pd->log_start_offset, now);
                    }
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
                    kn_log(knc_logger(c), KN_LOG_DEBUG, "%s [%d]: Fetch at offset %lld from broker %d: %s",
                           p->topic, (int)p->partition, (long long)rp->offset, (int)req->node_id,
                           kn_err_name(pd->error_code));
                    p->retry_at_ms = now + c->cfg.retry_backoff_ms;
                    break;
                case KNC_ACT_RESET:
                    if (c->cfg.reset == KNC_RESET_NONE)
                        knc_part_fail(p, KN_ERR_OFFSET_OUT_OF_RANGE,
                                      "%s [%d]: fetch offset %lld is out of range (log end %lld) "
                                      "and auto.offset.reset=none",
                                      p->topic, (int)p->partition, (long long)rp->offset,
                                      (long long)pd->high_watermark);
                    else
                        knc_part_reset(p, c->cfg.reset);
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
    bool closed = knc_closed(c);
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

void knc_fetch_send(knw_client *client, knc_req *req) {
    /* Topic ids need v13+; without them stay at v12 (names). */
    int timeout = req->c->cfg.request_timeout_ms + req->u.fetch.max_wait_ms;
    knw_send(client, req->node_id, KP_API_FETCH, 4, req->ids_complete ? -1 : 12, &req->u.fetch, timeout,
             knc_fetch_done, req);
}
