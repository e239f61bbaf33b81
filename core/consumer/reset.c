/*
 * reset.c: ListOffsets for positions, on the network thread. Each part
 * carries its partition's reset strategy as the timestamp (-2
 * earliest, -1 latest, now - duration for by_duration); an answer for
 * the same generation positions the partition, a retriable error backs
 * it off, anything else fails it.
 */
#include <stdlib.h>
#include <string.h>

#include "consumer/reset.h"
#include "error.h"
#include "kn_alloc.h"
#include "proto/generated/kp_apis.h"

int knc_fill_list_offsets(const knc_config *cfg, knc_req *req) {
    kp_ListOffsetsRequest *r = &req->u.list_offsets;
    kp_ListOffsetsRequest_init(r);
    r->replica_id = -1;
    r->isolation_level = cfg->read_committed ? 1 : 0;
    r->timeout_ms = cfg->request_timeout_ms;
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

static void knc_list_offsets_done(knw_client *client, knw_resp *resp, void *opaque) {
    knc_req *req = opaque;
    kn_consumer *c = req->c;
    bool refresh = false;
    int64_t now = knw_now_ms();
    const kp_ListOffsetsResponse *r = resp->body;

    pthread_mutex_lock(&c->lock);
    if (!resp->err && r && !knc_closed(c)) {
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
                    p->retry_at_ms = now + c->cfg.retry_backoff_ms;
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
            p->retry_at_ms = now + c->cfg.retry_backoff_ms;
            refresh = true;
        }
    }
    bool closed = knc_closed(c);
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

void knc_reset_send(knw_client *client, knc_req *req) {
    knw_send(client, req->node_id, KP_API_LIST_OFFSETS, 1, -1, &req->u.list_offsets, -1,
             knc_list_offsets_done, req);
}
