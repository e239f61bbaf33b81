/*
 * share.c: the kn_share_consumer handle and its application-thread half:
 * construction and configuration, subscribe, poll, acknowledgements,
 * commit_sync / commit_async, the acknowledgement-commit callback,
 * wakeup and close. share_group.c (membership) and share_fetch.c
 * (ShareFetch / ShareAcknowledge) run on the network thread; both meet
 * this file under sc->lock.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "config/config.h"
#include "error.h"
#include "kn_alloc.h"
#include "log.h"
#include "proto/generated/kp_apis.h"
#include "share/share_int.h"
#include "share/share_metrics.h"

/* Java's ShareConsumerConfig refuses these: a share group has no
 * offsets to reset or commit, no static membership, no assignor. */
static const char *const kns_unsupported[] = {"auto.offset.reset",
                                              "enable.auto.commit",
                                              "group.instance.id",
                                              "isolation.level",
                                              "partition.assignment.strategy",
                                              "session.timeout.ms",
                                              "heartbeat.interval.ms",
                                              "group.protocol",
                                              "group.remote.assignor",
                                              NULL};

int kn_records_delivery_count(const kn_records *recs, size_t i) { return recs->recs[i].delivery_count; }

static int kns_int(const kn_conf *conf, const char *key) {
    int64_t v = kn_conf_get_int(conf, key);
    return v > 0x7fffffff ? 0x7fffffff : v < 0 ? 0 : (int)v;
}

static int kns_settings(kn_share_consumer *sc, kn_conf *conf, char *errstr, size_t n) {
    for (size_t i = 0; kns_unsupported[i]; i++)
        if (kn_conf_is_set(conf, kns_unsupported[i])) {
            kn_errstr_set(errstr, n,
                          "%s cannot be set for a share consumer (share groups do not use it; "
                          "the group config share.auto.offset.reset sets where a new share group starts)",
                          kns_unsupported[i]);
            return KN_ERR__CONFIG;
        }
    const char *group = kn_conf_get_str(conf, "group.id");
    if (!group || !*group) {
        kn_errstr_set(errstr, n, "group.id is required for a share consumer");
        return KN_ERR__CONFIG;
    }
    if (!(sc->group_id = kn_strdup(group)))
        return KN_ERR__NOMEM;
    const char *mode = kn_conf_get_str(conf, "share.acknowledgement.mode");
    sc->explicit_mode = mode && strcmp(mode, "explicit") == 0;
    const char *acq = kn_conf_get_str(conf, "share.acquire.mode");
    sc->record_limit = acq && strcmp(acq, "record_limit") == 0;
    sc->max_poll_records = kns_int(conf, "max.poll.records");
    if (sc->max_poll_records < 1)
        sc->max_poll_records = 1;
    sc->fetch_records = sc->max_poll_records;
    sc->fetch_max_wait_ms = kns_int(conf, "fetch.max.wait.ms");
    sc->fetch_min_bytes = kns_int(conf, "fetch.min.bytes");
    sc->fetch_max_bytes = kns_int(conf, "fetch.max.bytes");
    sc->retry_backoff_ms = kns_int(conf, "retry.backoff.ms");
    sc->request_timeout_ms = kns_int(conf, "request.timeout.ms");
    sc->default_api_timeout_ms = kns_int(conf, "default.api.timeout.ms");
    sc->verify_crc = kn_conf_get_bool(conf, "check.crcs") != 0;
    size_t cap = (size_t)sc->fetch_max_bytes * 2;
    sc->scratch_max = cap < ((size_t)64 << 20) ? ((size_t)64 << 20) : cap;
    sc->grp.heartbeat_interval_ms = 5000; /* group.share.heartbeat.interval.ms until the broker says */
    /* The consumer's cross-key rules refuse the share.* keys under the
     * classic protocol: they were read above, so the copy drops them. */
    if (kn_conf_set(conf, "share.acknowledgement.mode", NULL, errstr, n) != KN_OK ||
        kn_conf_set(conf, "share.acquire.mode", NULL, errstr, n) != KN_OK)
        return KN_ERR__CONFIG;
    return kn_conf_finalize(conf, errstr, n);
}

kn_share_consumer *kn_share_consumer_new(const kn_conf *conf, char *errstr, size_t errstr_size) {
    if (!conf || kn_conf_client_type(conf) != KN_CLIENT_CONSUMER) {
        kn_errstr_set(
            errstr, errstr_size,
            "kn_share_consumer_new: needs a consumer configuration (kn_conf_new(KN_CLIENT_CONSUMER))");
        kn_set_last_error(KN_ERR__INVALID_ARG);
        return NULL;
    }
    int err = KN_ERR__NOMEM; /* kn_last_error() on the fail path */
    kn_conf *copy = kn_conf_dup(conf);
    kn_share_consumer *sc = kn_calloc(1, sizeof(*sc));
    if (!copy || !sc) {
        kn_errstr_set(errstr, errstr_size, "out of memory");
        goto fail;
    }
    sc->ticker_id = -1;
    if (kns_settings(sc, copy, errstr, errstr_size) != 0) {
        err = KN_ERR__INVALID_ARG;
        goto fail;
    }
    pthread_condattr_t ca;
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_cond_init(&sc->cond, &ca);
    pthread_condattr_destroy(&ca);
    pthread_mutex_init(&sc->lock, NULL);
    sc->client = knw_client_new(copy, "share-consumer", errstr, errstr_size);
    if (!sc->client) {
        err = kn_last_error(); /* knw_client_new's reason */
        goto fail_sync;
    }
    if (kns_metrics_init(sc, knw_client_metrics(sc->client)) != 0) {
        kn_errstr_set(errstr, errstr_size, "out of memory");
        knw_client_destroy(sc->client);
        goto fail_sync;
    }
    sc->ticker_id = knw_ticker_add(sc->client, kns_tick, sc);
    if (sc->ticker_id < 0) {
        kn_errstr_set(errstr, errstr_size, "could not start the share fetcher");
        knw_client_destroy(sc->client);
        goto fail_sync;
    }
    kn_conf_destroy(copy);
    kn_set_last_error(KN_OK);
    return sc;
fail_sync:
    pthread_cond_destroy(&sc->cond);
    pthread_mutex_destroy(&sc->lock);
fail:
    kn_conf_destroy(copy);
    if (sc)
        kn_free(sc->group_id);
    kn_free(sc);
    kn_set_last_error(err);
    return NULL;
}

/* ---- shared helpers (sc->lock held) ---------------------------------- */

kns_part *kns_find_part(kn_share_consumer *sc, const char *topic, int32_t partition) {
    for (size_t i = 0; i < sc->part_count; i++)
        if (sc->parts[i]->partition == partition && strcmp(sc->parts[i]->topic, topic) == 0)
            return sc->parts[i];
    return NULL;
}

kns_part *kns_part_add(kn_share_consumer *sc, const char *topic, const kn_uuid *id, int32_t partition) {
    kns_part *p = kns_find_part(sc, topic, partition);
    if (p) {
        p->assigned = true;
        p->topic_id = *id;
        return p;
    }
    if (sc->part_count == sc->part_cap) {
        size_t cap = sc->part_cap ? sc->part_cap * 2 : 8;
        kns_part **n = kn_realloc(sc->parts, cap * sizeof(*n));
        if (!n)
            return NULL;
        sc->parts = n;
        sc->part_cap = cap;
    }
    p = kn_calloc(1, sizeof(*p));
    if (!p || !(p->topic = kn_strdup(topic))) {
        kn_free(p);
        return NULL;
    }
    p->topic_id = *id;
    p->partition = partition;
    p->assigned = true;
    p->leader = -1;
    sc->parts[sc->part_count++] = p;
    return p;
}

kns_node *kns_node_get(kn_share_consumer *sc, int32_t node_id) {
    for (size_t i = 0; i < sc->node_count; i++)
        if (sc->nodes[i].node_id == node_id)
            return &sc->nodes[i];
    if (sc->node_count == sc->node_cap) {
        size_t cap = sc->node_cap ? sc->node_cap * 2 : 4;
        kns_node *n = kn_realloc(sc->nodes, cap * sizeof(*n));
        if (!n)
            return NULL;
        sc->nodes = n;
        sc->node_cap = cap;
    }
    kns_node *node = &sc->nodes[sc->node_count++];
    memset(node, 0, sizeof(*node));
    node->node_id = node_id;
    return node;
}

#define KNS_RESULT_OFFSETS_MAX (1 << 20)

void kns_result_add(kn_share_consumer *sc, kns_part *p, const kns_ranges *sent, int err, uint64_t commit_id) {
    (void)commit_id;
    size_t count = 0;
    for (int32_t i = 0; i < sent->count; i++)
        if (sent->items[i].type != KNS_ACK_GAP)
            count += (size_t)(sent->items[i].last - sent->items[i].first + 1);
    if (count == 0 && !err)
        return; /* gaps only: nothing the application acknowledged */
    if (count > KNS_RESULT_OFFSETS_MAX)
        count = KNS_RESULT_OFFSETS_MAX;
    kns_result *r = kn_calloc(1, sizeof(*r));
    if (!r)
        return;
    r->topic = kn_strdup(p->topic);
    r->offsets = kn_malloc((count ? count : 1) * sizeof(int64_t));
    if (!r->topic || !r->offsets) {
        kn_free(r->topic);
        kn_free(r->offsets);
        kn_free(r);
        return;
    }
    for (int32_t i = 0; i < sent->count && r->count < count; i++)
        if (sent->items[i].type != KNS_ACK_GAP)
            for (int64_t o = sent->items[i].first; o <= sent->items[i].last && r->count < count; o++)
                r->offsets[r->count++] = o;
    r->partition = p->partition;
    r->err = err;
    if (err)
        kns_metrics_acks_failed(sc, (int64_t)r->count, knw_now_ms());
    r->commit_id = ++sc->commit_seq;
    if (sc->res_tail)
        sc->res_tail->next = r;
    else
        sc->res_head = r;
    sc->res_tail = r;
    kns_signal(sc);
}

void kns_signal(kn_share_consumer *sc) {
    pthread_cond_broadcast(&sc->cond);
    if (!sc->ready_fn)
        return;
    bool ready = sc->wakeup || sc->res_head || sc->fatal_err;
    for (size_t i = 0; !ready && i < sc->part_count; i++)
        ready = sc->parts[i]->has_data;
    if (ready)
        sc->ready_fn(sc, sc->ready_opaque);
}

void kns_fail(kn_share_consumer *sc, int err, const char *fmt, ...) {
    if (sc->fatal_err)
        return;
    sc->fatal_err = err;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(sc->fatal_str, sizeof sc->fatal_str, fmt, ap);
    va_end(ap);
    kn_log(knw_client_logger(sc->client), KN_LOG_ERROR, "%s", sc->fatal_str);
    kns_signal(sc);
}

static void kns_free_result(kns_result *r) {
    kn_free(r->topic);
    kn_free(r->offsets);
    kn_free(r);
}

/* Runs the due callbacks (no lock held; application thread). If
 * results is given, results with commit_id > since are also added to
 * it (with their error). Returns the first error seen among those. */
static int kns_serve(kn_share_consumer *sc, uint64_t since, kn_topic_partition_list *results) {
    int first_err = 0;
    while (true) {
        pthread_mutex_lock(&sc->lock);
        kns_result *r = sc->res_head;
        if (r) {
            sc->res_head = r->next;
            if (!sc->res_head)
                sc->res_tail = NULL;
        }
        kn_share_ack_commit_cb *fn = sc->ack_cb;
        void *op = sc->ack_opaque;
        pthread_mutex_unlock(&sc->lock);
        if (!r)
            break;
        if (results && r->commit_id > since) {
            int i = kn_topic_partition_list_find(results, r->topic, r->partition);
            if (i < 0)
                i = kn_topic_partition_list_add(results, r->topic, r->partition);
            if (i >= 0 && r->err && !kn_topic_partition_list_err(results, (size_t)i))
                kn_topic_partition_list_set_err(results, (size_t)i, r->err);
            if (r->err && !first_err)
                first_err = r->err;
        }
        if (fn) {
            sc->cb_depth++;
            fn(sc, r->topic, r->partition, r->offsets, r->count, r->err, op);
            sc->cb_depth--;
        }
        kns_free_result(r);
    }
    return first_err;
}

/* Moves the last poll's records to the pending acknowledgements: their
 * own ack, or ACCEPT (implicit mode; and_unacked: the rest with
 * or_type). Returns how many are left unacknowledged (explicit). */
static int32_t kns_collect_acks(kn_share_consumer *sc, int8_t or_type) {
    int32_t left = 0;
    for (size_t i = 0; i < sc->part_count; i++) {
        kns_part *p = sc->parts[i];
        for (int32_t k = 0; k < p->deliv_count; k++) {
            int8_t t = p->deliv[k].ack ? p->deliv[k].ack : or_type;
            if (!t) {
                left++;
                continue;
            }
            (void)kns_ranges_add(&p->acks, p->deliv[k].offset, p->deliv[k].offset, t);
        }
    }
    if (left)
        return left;
    for (size_t i = 0; i < sc->part_count; i++)
        sc->parts[i]->deliv_count = 0;
    return 0;
}

/* The acknowledgement moves happen only when nothing is left
 * unacknowledged (explicit mode), so a failed poll changes nothing. */
static int32_t kns_unacked(const kn_share_consumer *sc) {
    int32_t left = 0;
    for (size_t i = 0; i < sc->part_count; i++)
        for (int32_t k = 0; k < sc->parts[i]->deliv_count; k++)
            left += sc->parts[i]->deliv[k].ack == 0;
    return left;
}

static void kns_deadline_ts(struct timespec *ts, int64_t wait_ms) {
    clock_gettime(CLOCK_MONOTONIC, ts);
    ts->tv_sec += wait_ms / 1000;
    ts->tv_nsec += (wait_ms % 1000) * 1000000;
    if (ts->tv_nsec >= 1000000000) {
        ts->tv_sec++;
        ts->tv_nsec -= 1000000000;
    }
}

int kn_share_consumer_subscribe(kn_share_consumer *sc, const char *const *topics, size_t count) {
    if (!sc || !topics || count == 0 || count > 100000)
        return KN_ERR__INVALID_ARG;
    for (size_t i = 0; i < count; i++)
        if (!topics[i] || !*topics[i])
            return KN_ERR__INVALID_ARG;
    char **copy = kn_calloc(count, sizeof(*copy));
    if (!copy)
        return KN_ERR__NOMEM;
    for (size_t i = 0; i < count; i++)
        if (!(copy[i] = kn_strdup(topics[i]))) {
            for (size_t k = 0; k < i; k++)
                kn_free(copy[k]);
            kn_free(copy);
            return KN_ERR__NOMEM;
        }
    pthread_mutex_lock(&sc->lock);
    if (sc->closed || sc->closing) {
        pthread_mutex_unlock(&sc->lock);
        for (size_t k = 0; k < count; k++)
            kn_free(copy[k]);
        kn_free(copy);
        return KN_ERR__CLOSED;
    }
    for (int32_t i = 0; i < sc->grp.topic_cnt; i++)
        kn_free(sc->grp.topics[i]);
    kn_free(sc->grp.topics);
    sc->grp.topics = copy;
    sc->grp.topic_cnt = (int32_t)count;
    sc->grp.subscribed = true;
    sc->grp.leaving = false;
    sc->grp.send_topics = true;
    sc->grp.next_hb_ms = 0;
    /* the first batch is fetched once assigned, before the first poll
     * (an event loop may wait on the readiness hook first) */
    sc->want_fetch = true;
    pthread_mutex_unlock(&sc->lock);
    knw_metadata_add_topics(sc->client, topics, (int)count);
    knw_wakeup(sc->client);
    return KN_OK;
}

int kn_share_consumer_unsubscribe(kn_share_consumer *sc) {
    if (!sc)
        return KN_ERR__INVALID_ARG;
    if (sc->cb_depth)
        return KN_ERR__STATE;
    if (sc->closed || sc->closing)
        return KN_ERR__CLOSED;
    kn_share_consumer_commit_sync(sc, -1, NULL, NULL, 0);
    kns_group_leave(sc, sc->request_timeout_ms);
    pthread_mutex_lock(&sc->lock);
    sc->grp.subscribed = false;
    sc->grp.epoch = 0;
    for (size_t i = 0; i < sc->part_count; i++) {
        sc->parts[i]->assigned = false;
        kns_part_drop(sc->parts[i], KN_SHARE_RELEASE);
    }
    pthread_mutex_unlock(&sc->lock);
    knw_wakeup(sc->client);
    return KN_OK;
}

int kn_share_consumer_poll(kn_share_consumer *sc, int timeout_ms, kn_records **recs, char *errstr,
                           size_t errstr_size) {
    if (!sc || !recs)
        return KN_ERR__INVALID_ARG;
    *recs = NULL;
    if (sc->cb_depth) {
        kn_errstr_set(errstr, errstr_size, "poll called from a callback of the same share consumer");
        return KN_ERR__STATE;
    }
    kns_serve(sc, 0, NULL);
    int64_t deadline = timeout_ms < 0 ? INT64_MAX : knw_now_ms() + timeout_ms;
    kn_records *out = knc_records_new((size_t)sc->max_poll_records);
    if (!out)
        return KN_ERR__NOMEM;
    int rc = KN_OK;
    pthread_mutex_lock(&sc->lock);
    if (sc->closed) {
        rc = KN_ERR__CLOSED;
        kn_errstr_set(errstr, errstr_size, "the share consumer is closed");
        goto out;
    }
    kns_metrics_poll_start(sc, knw_now_ms());
    if (sc->explicit_mode) {
        int32_t left = kns_unacked(sc);
        if (left) {
            rc = KN_ERR__STATE;
            kn_errstr_set(errstr, errstr_size,
                          "%d record(s) of the previous poll are not acknowledged: every record must be "
                          "acknowledged before the next poll with share.acknowledgement.mode=explicit",
                          (int)left);
            goto out;
        }
    }
    kns_collect_acks(sc, KN_SHARE_ACCEPT);
    while (true) {
        if (sc->fatal_err) {
            rc = sc->fatal_err;
            kn_errstr_set(errstr, errstr_size, "%s", sc->fatal_str);
            break;
        }
        size_t n = sc->part_count;
        for (size_t k = 0; k < n && (int)out->count < sc->max_poll_records; k++) {
            kns_part *p = sc->parts[(sc->drain_next + k) % n];
            if (!p->has_data || !p->assigned)
                continue;
            int got = kns_drain(sc, p, out, sc->max_poll_records - (int)out->count);
            if (got < 0 && !out->count) {
                rc = got;
                break;
            }
        }
        if (n)
            sc->drain_next = (sc->drain_next + 1) % n;
        bool buffered = false;
        for (size_t k = 0; k < sc->part_count; k++)
            buffered |= sc->parts[k]->has_data && sc->parts[k]->assigned;
        /* Room for the next batch: fetch it while the application works
         * on this one. */
        sc->want_fetch = !buffered;
        if (!buffered && sc->landed_ms)
            kns_fetch_adapt(sc, knw_now_ms());
        if (rc || out->count)
            break;
        if (sc->wakeup) {
            sc->wakeup = false;
            rc = KN_ERR__WAKEUP;
            kn_errstr_set(errstr, errstr_size, "woken up by wakeup()");
            break;
        }
        if (sc->res_head) {
            /* an acknowledgement answer landed: serve its callback */
            pthread_mutex_unlock(&sc->lock);
            kns_serve(sc, 0, NULL);
            pthread_mutex_lock(&sc->lock);
            continue;
        }
        int64_t now = knw_now_ms();
        if (now >= deadline)
            break;
        knw_wakeup(sc->client);
        struct timespec ts;
        kns_deadline_ts(&ts, deadline - now < 200 ? deadline - now : 200);
        pthread_mutex_unlock(&sc->lock);
        knw_client_app_service(sc->client);
        pthread_mutex_lock(&sc->lock);
        pthread_cond_timedwait(&sc->cond, &sc->lock, &ts);
    }
    kns_metrics_poll_end(sc, rc ? NULL : out, knw_now_ms());
out:
    pthread_mutex_unlock(&sc->lock);
    knw_wakeup(sc->client);
    if (rc) {
        kn_records_free(out);
        return rc;
    }
    *recs = out;
    return KN_OK;
}

/* The last poll's delivery of offset in p, or NULL (sc->lock held). */
static kns_deliv *kns_find_deliv(kns_part *p, int64_t offset) {
    /* deliv is ascending: binary search */
    int32_t lo = 0, hi = p ? p->deliv_count - 1 : -1;
    while (lo <= hi) {
        int32_t mid = lo + (hi - lo) / 2;
        if (p->deliv[mid].offset == offset)
            return &p->deliv[mid];
        if (p->deliv[mid].offset < offset)
            lo = mid + 1;
        else
            hi = mid - 1;
    }
    return NULL;
}

static int kns_range_cmp(const void *a, const void *b) {
    const kns_range *x = a, *y = b;
    return (x->first > y->first) - (x->first < y->first);
}

/* Adds offset to the renewals waiting to be sent, once, keeping them
 * ascending: the broker wants ascending, non-overlapping batches, and
 * the application may renew in any order and more often than they go. */
static int kns_renew_add(kns_part *p, int64_t offset) {
    for (int32_t i = 0; i < p->renews.count; i++)
        if (p->renews.items[i].first <= offset && offset <= p->renews.items[i].last)
            return KN_OK;
    int rc = kns_ranges_add(&p->renews, offset, offset, KN_SHARE_RENEW);
    int32_t c = p->renews.count;
    if (rc == KN_OK && c > 1 && p->renews.items[c - 2].first > p->renews.items[c - 1].first)
        qsort(p->renews.items, (size_t)c, sizeof(*p->renews.items), kns_range_cmp);
    return rc;
}

/* KN_SHARE_RENEW (KIP-1222): queues a renewal of an unacknowledged
 * record's lock and wakes the network thread, which sends it alone in a
 * ShareAcknowledge (share_fetch.c). */
static int kns_renew(kn_share_consumer *sc, const char *topic, int32_t partition, int64_t offset) {
    pthread_mutex_lock(&sc->lock);
    kns_part *p = kns_find_part(sc, topic, partition);
    kns_deliv *d = kns_find_deliv(p, offset);
    int32_t leader = p ? p->leader : -1;
    pthread_mutex_unlock(&sc->lock);
    if (!d || d->ack)
        return KN_ERR__STATE;
    /* Asked with no share lock held: the wire layer has its own. */
    if (leader < 0 || knw_api_version(sc->client, leader, KP_API_SHARE_ACKNOWLEDGE) < 2)
        return KN_ERR__UNSUPPORTED_VERSION;
    int rc = KN_ERR__STATE;
    pthread_mutex_lock(&sc->lock);
    p = kns_find_part(sc, topic, partition);
    d = kns_find_deliv(p, offset);
    if (d && !d->ack)
        rc = kns_renew_add(p, offset);
    pthread_mutex_unlock(&sc->lock);
    if (rc == KN_OK)
        knw_wakeup(sc->client);
    return rc;
}

static int kns_ack(kn_share_consumer *sc, const char *topic, int32_t partition, int64_t offset, int type) {
    if (!sc || !topic || type < KN_SHARE_ACCEPT || type > KN_SHARE_RENEW)
        return KN_ERR__INVALID_ARG;
    if (!sc->explicit_mode)
        return KN_ERR__STATE;
    if (type == KN_SHARE_RENEW)
        return kns_renew(sc, topic, partition, offset);
    int rc = KN_ERR__STATE;
    pthread_mutex_lock(&sc->lock);
    kns_deliv *d = kns_find_deliv(kns_find_part(sc, topic, partition), offset);
    if (d) {
        d->ack = (int8_t)type;
        rc = KN_OK;
    }
    pthread_mutex_unlock(&sc->lock);
    return rc;
}

int kn_share_consumer_acknowledge(kn_share_consumer *sc, const kn_records *recs, size_t i, int type) {
    if (!recs || i >= kn_records_count(recs))
        return KN_ERR__INVALID_ARG;
    return kns_ack(sc, kn_records_topic(recs, i), kn_records_partition(recs, i), kn_records_offset(recs, i),
                   type);
}

int kn_share_consumer_acknowledge_offset(kn_share_consumer *sc, const char *topic, int32_t partition,
                                         int64_t offset, int type) {
    return kns_ack(sc, topic, partition, offset, type);
}

void kn_share_consumer_set_ack_commit_cb(kn_share_consumer *sc, kn_share_ack_commit_cb *fn, void *opaque) {
    if (!sc)
        return;
    pthread_mutex_lock(&sc->lock);
    sc->ack_cb = fn;
    sc->ack_opaque = opaque;
    pthread_mutex_unlock(&sc->lock);
}

/* Queues every acknowledgement made so far (implicit: the last poll's
 * records accepted) for sending now. sc->lock held. */
static void kns_flush(kn_share_consumer *sc) {
    if (sc->explicit_mode) {
        /* only the acknowledged ones; the rest stay for the app */
        for (size_t i = 0; i < sc->part_count; i++) {
            kns_part *p = sc->parts[i];
            int32_t m = 0;
            for (int32_t k = 0; k < p->deliv_count; k++) {
                if (p->deliv[k].ack)
                    (void)kns_ranges_add(&p->acks, p->deliv[k].offset, p->deliv[k].offset, p->deliv[k].ack);
                else
                    p->deliv[m++] = p->deliv[k];
            }
            p->deliv_count = m;
        }
    } else {
        kns_collect_acks(sc, KN_SHARE_ACCEPT);
    }
    sc->flush_acks = true;
}

static bool kns_acks_outstanding(const kn_share_consumer *sc) {
    if (sc->inflight_acks > 0)
        return true;
    for (size_t i = 0; i < sc->part_count; i++)
        if (sc->parts[i]->acks.count || sc->parts[i]->sent.count)
            return true;
    return false;
}

int kn_share_consumer_commit_sync(kn_share_consumer *sc, int timeout_ms, kn_topic_partition_list **results,
                                  char *errstr, size_t errstr_size) {
    if (results)
        *results = NULL;
    if (!sc)
        return KN_ERR__INVALID_ARG;
    int64_t deadline = knw_now_ms() + (timeout_ms < 0 ? sc->default_api_timeout_ms : timeout_ms);
    kn_topic_partition_list *res = kn_topic_partition_list_new();
    if (!res)
        return KN_ERR__NOMEM;
    int rc = KN_OK;
    pthread_mutex_lock(&sc->lock);
    if (sc->closed) {
        pthread_mutex_unlock(&sc->lock);
        kn_topic_partition_list_destroy(res);
        kn_errstr_set(errstr, errstr_size, "the share consumer is closed");
        return KN_ERR__CLOSED;
    }
    uint64_t since = sc->commit_seq;
    kns_flush(sc);
    while (kns_acks_outstanding(sc)) {
        int64_t now = knw_now_ms();
        if (sc->wakeup) {
            sc->wakeup = false;
            rc = KN_ERR__WAKEUP;
            break;
        }
        if (now >= deadline) {
            rc = KN_ERR__TIMED_OUT;
            break;
        }
        sc->flush_acks = true;
        knw_wakeup(sc->client);
        struct timespec ts;
        kns_deadline_ts(&ts, deadline - now < 100 ? deadline - now : 100);
        pthread_cond_timedwait(&sc->cond, &sc->lock, &ts);
    }
    pthread_mutex_unlock(&sc->lock);
    int err = kns_serve(sc, since, res);
    if (!rc)
        rc = err;
    if (rc)
        kn_errstr_set(errstr, errstr_size, "commit of acknowledgements: %s", kn_err_name(rc));
    if (results)
        *results = res;
    else
        kn_topic_partition_list_destroy(res);
    return rc;
}

int kn_share_consumer_commit_async(kn_share_consumer *sc) {
    if (!sc)
        return KN_ERR__INVALID_ARG;
    pthread_mutex_lock(&sc->lock);
    int rc = sc->closed ? KN_ERR__CLOSED : KN_OK;
    if (!rc)
        kns_flush(sc);
    pthread_mutex_unlock(&sc->lock);
    if (!rc)
        knw_wakeup(sc->client);
    return rc;
}

int32_t kn_share_consumer_member(kn_share_consumer *sc, char *buf, size_t size) {
    if (!sc)
        return -1;
    pthread_mutex_lock(&sc->lock);
    if (buf && size)
        snprintf(buf, size, "%s", sc->grp.member_id);
    int32_t e = sc->grp.leaving ? -1 : sc->grp.joined ? sc->grp.epoch : 0;
    pthread_mutex_unlock(&sc->lock);
    return e;
}

void kn_share_consumer_wakeup(kn_share_consumer *sc) {
    if (!sc)
        return;
    pthread_mutex_lock(&sc->lock);
    sc->wakeup = true;
    kns_signal(sc);
    pthread_mutex_unlock(&sc->lock);
}

void kn_share_consumer_set_ready_cb(kn_share_consumer *sc, kn_share_ready_cb *fn, void *opaque) {
    if (!sc)
        return;
    pthread_mutex_lock(&sc->lock);
    sc->ready_fn = fn;
    sc->ready_opaque = opaque;
    pthread_mutex_unlock(&sc->lock);
}

int kn_share_consumer_close(kn_share_consumer *sc, int timeout_ms) {
    if (!sc)
        return KN_OK;
    if (sc->cb_depth)
        return KN_ERR__STATE;
    pthread_mutex_lock(&sc->lock);
    if (sc->closed || sc->closing) {
        pthread_mutex_unlock(&sc->lock);
        return KN_OK;
    }
    sc->closing = true;
    sc->want_fetch = false;
    /* implicit: the last poll's records are accepted; explicit: what the
     * application acknowledged goes, the rest is released by the
     * session's end */
    kns_flush(sc);
    pthread_mutex_unlock(&sc->lock);
    int64_t deadline = knw_now_ms() + (timeout_ms < 0 ? 30000 : timeout_ms);
    if (timeout_ms != 0) {
        kns_close_sessions(sc, deadline);
        int64_t left = deadline - knw_now_ms();
        kns_group_leave(sc, (int)(left > 0 ? left : 0));
    }
    knw_ticker_remove(sc->client, sc->ticker_id);
    /* Stopped, not freed: what is still in flight fails (callbacks
     * queued, run below), and the client's logger lives until destroy,
     * so those callbacks' log lines (a destroy they refuse) still reach
     * the application's log handler. */
    knw_client_stop(sc->client);
    pthread_mutex_lock(&sc->lock);
    sc->closed = true;
    for (size_t i = 0; i < sc->part_count; i++) {
        kns_part *p = sc->parts[i];
        kns_part_drop(p, -1);
        kns_ranges_free(&p->renews); /* the session's end released those records */
        if (p->acks.count)
            kns_result_add(sc, p, &p->acks, KN_ERR__CLOSED, 0);
        kns_ranges_free(&p->acks);
    }
    pthread_mutex_unlock(&sc->lock);
    kns_serve(sc, 0, NULL);
    return KN_OK;
}

void kn_share_consumer_destroy(kn_share_consumer *sc) {
    if (!sc)
        return;
    if (sc->cb_depth) {
        kn_log(knw_client_logger(sc->client), KN_LOG_ERROR,
               "destroy called from a callback of the same share consumer: ignored");
        return;
    }
    kn_share_consumer_close(sc, -1);
    knw_client_destroy(sc->client);
    for (size_t i = 0; i < sc->part_count; i++)
        kns_part_free(sc->parts[i]);
    kn_free(sc->parts);
    kn_free(sc->nodes);
    kns_group_free(&sc->grp);
    while (sc->res_head) {
        kns_result *r = sc->res_head;
        sc->res_head = r->next;
        kns_free_result(r);
    }
    kn_free(sc->group_id);
    pthread_cond_destroy(&sc->cond);
    pthread_mutex_destroy(&sc->lock);
    kn_free(sc);
}
