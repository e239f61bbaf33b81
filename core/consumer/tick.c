/*
 * tick.c: the consumer's network side, run as a ticker on the
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
 * The requests themselves are request.c, fetch.c (Fetch, KIP-392) and
 * reset.c (ListOffsets); the commit and OffsetFetch plan is offsets.c,
 * KIP-320 validation validate.c.
 *
 * Requests are built under the lock and sent after it is released, so
 * a knw_send that fails (or completes) inline cannot deadlock.
 */
#include <stdlib.h>
#include <string.h>

#include "consumer/fetch.h"
#include "consumer/request.h"
#include "consumer/reset.h"
#include "consumer/offsets.h"
#include "consumer/tick.h"
#include "consumer/validate.h"
#include "kn_alloc.h"
#include "log.h"
#include "proto/generated/kp_apis.h"

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
        knc_node *kn = api_key == KP_API_FETCH ? knc_nodes_get(&c->nodes, node) : NULL;
        knc_req *req = api_key == KP_API_FETCH && !kn ? NULL : knc_req_build(c, md, node, api_key, group, m);
        int rc = req ? (api_key == KP_API_FETCH
                            ? knc_fill_fetch(&c->cfg, kn, md, req, max_wait_ms, max_bytes)
                            : knc_fill_list_offsets(&c->cfg, req))
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
        if (kn) {
            kn->fetch_inflight = true;
            kn->inflight_bytes = max_bytes;
            kn->sent_ms = now_ms;
            kn->overdue_warned = false;
            budget->avail -= max_bytes;
        }
        req->next = *out;
        *out = req;
    }
    kn_free(group);
}

/* This tick's budget: what the held slices and the Fetches in flight
 * leave of the fetch buffer's budget (fetched.h), and the per-Fetch size (half the budget, at
 * most fetch.max.bytes, so one Fetch can travel while one drains). */
static void knc_budget_init(const kn_consumer *c, knc_budget *b) {
    b->avail = knc_fetchbuf_avail(&c->fbuf, knc_nodes_inflight_bytes(&c->nodes));
    int64_t per = (int64_t)(knc_fetchbuf_budget(&c->fbuf) / 2);
    if (per > c->cfg.fetch_max_bytes)
        per = c->cfg.fetch_max_bytes;
    b->per_fetch = (int32_t)(per > 0 ? per : 1);
    b->low = b->per_fetch / 4 > 0 ? b->per_fetch / 4 : 1;
}

/* Cheap checks that only log (they change nothing, so they can never
 * cause a double delivery): a Fetch unanswered long past
 * fetch.max.wait.ms (the wire layer's request timeout recovers it), and
 * a partition left out of Fetches to its leader while it had nothing
 * buffered, nothing in flight and data known past its fetch offset. */
static void knc_safety_checks(kn_consumer *c, const knw_metadata *md, int64_t now_ms, const knc_req *sent) {
    for (size_t i = 0; i < knc_nodes_count(&c->nodes); i++) {
        knc_node *node = knc_nodes_at(&c->nodes, i);
        int64_t waited = now_ms - node->sent_ms;
        if (node->fetch_inflight && !node->overdue_warned && waited > (int64_t)c->cfg.fetch_max_wait_ms + 10000) {
            node->overdue_warned = true;
            kn_log(knc_logger(c), KN_LOG_WARN,
                   "Fetch to broker %d unanswered for %lld ms (fetch.max.wait.ms %d); "
                   "request.timeout.ms (%d) will fail and retry it",
                   (int)node->node_id, (long long)waited, c->cfg.fetch_max_wait_ms, c->cfg.request_timeout_ms);
        }
    }
    bool any = false;
    for (const knc_req *r = sent; r && !any; r = r->next)
        any = r->api_key == KP_API_FETCH;
    for (size_t i = 0; i < knc_table_count(&c->table); i++) {
        knc_part *p = knc_table_at(&c->table, i);
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
    if (knc_closed(c) || knw_client_fatal(client, NULL, 0)) {
        /* Fatal (authentication failed): wake a waiting poll to say so. */
        knc_signal(c);
        pthread_mutex_unlock(&c->lock);
        if (md)
            knw_metadata_release(md);
        return -1;
    }
    knc_offsets_tick(c, now_ms, &plan);
    if (knc_table_count(&c->table) == 0) {
        pthread_mutex_unlock(&c->lock);
        if (md)
            knw_metadata_release(md);
        knc_offsets_send(c, client, &plan);
        return c->cfg.group_id ? 100 : -1;
    }
    if (!md) {
        pthread_mutex_unlock(&c->lock);
        knc_offsets_send(c, client, &plan);
        knw_metadata_request_refresh(client, false, "consumer needs leaders");
        return 100;
    }
    size_t n = knc_table_count(&c->table);
    knc_part **chosen = kn_malloc(n * sizeof(*chosen));
    int32_t *leaders = kn_malloc(n * sizeof(*leaders));
    int32_t *gated = kn_malloc(n * sizeof(*gated));
    if (!chosen || !leaders || !gated)
        goto out;

    /* 1. Offset resets, one ListOffsets per leader. */
    int32_t m = 0;
    for (size_t i = 0; i < n; i++) {
        knc_part *p = knc_table_at(&c->table, i);
        if (!knc_part_wants_reset(p, now_ms))
            continue;
        int32_t epoch;
        int32_t leader = knc_leader(md, p, &epoch, NULL);
        if (leader < 0) {
            refresh = true;
            p->retry_at_ms = now_ms + c->cfg.retry_backoff_ms;
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
        const knc_part *p = knc_table_at(&c->table, i);
        drainable = p->fetched && !p->paused && p->state == KNC_POS_VALID;
    }
    bool ahead_ok = budget.avail >= budget.low;
    bool first_ok = ahead_ok || !drainable;
    int32_t ng = 0;
    for (size_t i = 0; i < n; i++) {
        knc_part *p = knc_table_at(&c->table, i);
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
    knc_nodes_window_reset(&c->nodes);
    int64_t window_target = 2 * (int64_t)budget.per_fetch;
    size_t cut = n; /* rotation index of the first partition left out */
    m = 0;
    size_t start = knc_table_fetch_start(&c->table);
    for (size_t k = 0; k < n; k++) {
        knc_part *p = knc_table_at(&c->table, (start + k) % n);
        p->windowed_out = false;
        if (!knc_part_fetchable(p) || now_ms < p->retry_at_ms || (p->fetched && !ahead_ok) ||
            (!p->fetched && !first_ok))
            continue;
        int32_t epoch;
        int32_t leader = knc_fetch_node(md, p, now_ms, &epoch);
        if (leader < 0) {
            refresh = true;
            p->retry_at_ms = now_ms + c->cfg.retry_backoff_ms;
            continue;
        }
        knc_node *node = knc_nodes_get(&c->nodes, leader);
        if (!node || node->fetch_inflight || now_ms < node->backoff_until_ms ||
            knc_node_gated(gated, ng, leader))
            continue;
        int64_t log_end = c->cfg.read_committed && p->last_stable_offset >= 0 ? p->last_stable_offset
                                                                          : p->high_watermark;
        int64_t backlog = knc_fetchbuf_backlog(&c->fbuf, knc_part_fetch_offset(p), log_end,
                                            c->cfg.max_partition_fetch_bytes);
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
        knc_table_fetch_from(&c->table, (start + (cut < n ? cut : 1)) % n);
        /* The full fetch.max.wait.ms always, as Java does: poll returns
         * at its own deadline without the Fetch, and an answer comes as
         * soon as data lands. Clamping it to poll's budget made an idle
         * consumer polling every 100 ms send ten Fetches a second. */
        knc_plan(c, md, KP_API_FETCH, chosen, leaders, m, c->cfg.fetch_max_wait_ms, &budget, now_ms, &reqs);
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
        if (req->api_key == KP_API_FETCH)
            knc_fetch_send(client, req);
        else
            knc_reset_send(client, req);
    }
    if (md)
        knw_metadata_release(md);
    if (refresh)
        knw_metadata_request_refresh(client, false, "consumer: partition leader unknown");
    return 50;
}
