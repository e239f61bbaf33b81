/*
 * metadata.c: the cluster metadata cache: when to refresh (max age, on
 * request, after a disconnect; rate-limited by retry.backoff.ms with
 * exponential backoff after failures), the Metadata request (v12+, the
 * registered topics or all of them), turning a response into an
 * immutable refcounted snapshot, rebootstrap, and the thread-safe
 * readers of wire.h. The snapshot owns every string and array it holds
 * (one arena per snapshot).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "error.h"
#include "kn_alloc.h"
#include "proto/generated/kp_metadata.h"
#include "wire/wire_int.h"

#define KNW_MD_MIN_VERSION 12 /* topic ids in requests and responses */

typedef struct md_box {
    knw_metadata md; /* first: a knw_metadata* is a md_box* */
    kn_arena arena;
} md_box;

typedef struct md_req {
    kp_MetadataRequest body;
    kp_MetadataRequest_MetadataRequestTopic *items;
    char **names;
    int count;
    bool all;
    uint64_t topic_gen; /* the registered set when the request was built */
} md_req;

static void md_req_free(md_req *m) {
    if (!m)
        return;
    for (int i = 0; i < m->count; i++)
        kn_free(m->names[i]);
    kn_free(m->names);
    kn_free(m->items);
    kn_free(m);
}

void knw_md_free(knw_metadata *md) {
    md_box *box = (md_box *)md;
    kn_arena_destroy(&box->arena);
    kn_free(box);
}

void knw_metadata_retain(knw_metadata *md) {
    if (md)
        __atomic_add_fetch(&md->refcnt, 1, __ATOMIC_RELAXED);
}

void knw_metadata_release(knw_metadata *md) {
    if (md && __atomic_sub_fetch(&md->refcnt, 1, __ATOMIC_ACQ_REL) == 0)
        knw_md_free(md);
}

knw_metadata *knw_metadata_get(knw_client *c) {
    pthread_mutex_lock(&c->lock);
    knw_metadata *md = c->md.current;
    knw_metadata_retain(md);
    pthread_mutex_unlock(&c->lock);
    return md;
}

static int cmp_topic_name(const void *key, const void *elem) {
    return strcmp((const char *)key, ((const knw_topic *)elem)->name);
}

const knw_topic *knw_metadata_topic(const knw_metadata *md, const char *name) {
    /* bsearch on an empty (NULL) array is undefined behaviour (UBSan). */
    if (!md || !name || md->topic_count <= 0)
        return NULL;
    return bsearch(name, md->topics, (size_t)md->topic_count, sizeof *md->topics, cmp_topic_name);
}

const knw_topic *knw_metadata_topic_by_id(const knw_metadata *md, const kn_uuid *id) {
    if (!md || !id || kn_uuid_is_zero(id))
        return NULL;
    for (int32_t i = 0; i < md->topic_count; i++)
        if (!memcmp(md->topics[i].topic_id.b, id->b, 16))
            return &md->topics[i];
    return NULL;
}

static int cmp_broker_id(const void *key, const void *elem) {
    int32_t k = *(const int32_t *)key, e = ((const knw_broker *)elem)->node_id;
    return k < e ? -1 : k > e;
}

const knw_broker *knw_metadata_broker(const knw_metadata *md, int32_t node_id) {
    if (!md || md->broker_count <= 0)
        return NULL;
    return bsearch(&node_id, md->brokers, (size_t)md->broker_count, sizeof *md->brokers, cmp_broker_id);
}

/* ---- registered topics and refresh requests ---- */

void knw_metadata_add_topics(knw_client *c, const char *const *topics, int count) {
    bool added = false;
    pthread_mutex_lock(&c->lock);
    for (int i = 0; i < count; i++) {
        if (!topics[i])
            continue;
        bool have = false;
        for (int j = 0; j < c->md.topic_count && !have; j++)
            have = !strcmp(c->md.topics[j], topics[i]);
        if (have)
            continue;
        if (c->md.topic_count == c->md.topic_cap) {
            int ncap = c->md.topic_cap ? c->md.topic_cap * 2 : 8;
            char **n = kn_realloc(c->md.topics, (size_t)ncap * sizeof *n);
            if (!n)
                break;
            c->md.topics = n;
            c->md.topic_cap = ncap;
        }
        char *dup = kn_strdup(topics[i]);
        if (!dup)
            break;
        c->md.topics[c->md.topic_count++] = dup;
        added = true;
    }
    if (added) {
        c->md.want = true; /* a new topic needs its metadata now */
        c->md.topic_gen++; /* a request already in flight does not cover it */
    }
    pthread_mutex_unlock(&c->lock);
    if (added)
        knw_loop_wake(&c->loop);
}

void knw_metadata_remove_topics(knw_client *c, const char *const *topics, int count) {
    pthread_mutex_lock(&c->lock);
    for (int i = 0; i < count; i++)
        for (int j = 0; topics[i] && j < c->md.topic_count; j++)
            if (!strcmp(c->md.topics[j], topics[i])) {
                kn_free(c->md.topics[j]);
                c->md.topics[j] = c->md.topics[--c->md.topic_count];
                break;
            }
    pthread_mutex_unlock(&c->lock);
}

void knw_metadata_request_refresh(knw_client *c, bool all_topics, const char *reason) {
    pthread_mutex_lock(&c->lock);
    c->md.want = true;
    if (all_topics)
        c->md.want_all = true;
    pthread_mutex_unlock(&c->lock);
    kn_log(&c->log, KN_LOG_DEBUG, "metadata refresh requested%s: %s", all_topics ? " (all topics)" : "",
           reason ? reason : "");
    if (!knw_on_network_thread(c))
        knw_loop_wake(&c->loop);
}

void knw_md_on_disconnect(knw_client *c, knw_conn *conn) {
    /* The broker that went away may have led partitions: refresh so
     * retries route to the new leaders (the kacrab "burst wedge"). */
    pthread_mutex_lock(&c->lock);
    c->md.want = true;
    pthread_mutex_unlock(&c->lock);
    /* A coordinator behind a lost connection is looked up again (Java
     * marks it unknown on disconnect). */
    if (!conn->bootstrap)
        knw_coord_node_down(c, conn->node_id);
}

static bool snapshot_ok(const knw_metadata *md, bool all, int64_t base, int64_t min_fetched,
                        uint64_t topic_gen) {
    if (!md || md->topic_gen < topic_gen)
        return false;
    if (all && !md->all_topics)
        return false;
    if (min_fetched > 0)
        return md->fetched_at_ms >= min_fetched;
    return md->fetched_at_ms > base;
}

knw_metadata *knw_metadata_wait(knw_client *c, bool all_topics, int64_t min_fetched_at_ms, int timeout_ms,
                                int *err) {
    int dummy;
    if (!err)
        err = &dummy;
    if (knw_on_network_thread(c)) {
        *err = KN_ERR__STATE;
        return NULL;
    }
    int64_t deadline = knw_now_ms() + (timeout_ms < 0 ? 0 : timeout_ms);
    pthread_mutex_lock(&c->lock);
    int64_t base = c->md.current ? c->md.current->fetched_at_ms : -1;
    uint64_t gen = c->md.topic_gen;
    if (min_fetched_at_ms > 0 && snapshot_ok(c->md.current, all_topics, base, min_fetched_at_ms, gen)) {
        knw_metadata *md = c->md.current;
        knw_metadata_retain(md);
        pthread_mutex_unlock(&c->lock);
        *err = 0;
        return md;
    }
    c->md.want = true;
    if (all_topics)
        c->md.want_all = true;
    knw_loop_wake(&c->loop);
    for (;;) {
        if (c->stopping) {
            pthread_mutex_unlock(&c->lock);
            *err = KN_ERR__CLOSED;
            return NULL;
        }
        if (atomic_load(&c->fatal_err)) {
            /* No metadata will ever come (authentication failed). */
            pthread_mutex_unlock(&c->lock);
            *err = atomic_load(&c->fatal_err);
            return NULL;
        }
        if (snapshot_ok(c->md.current, all_topics, base, min_fetched_at_ms, gen)) {
            knw_metadata *md = c->md.current;
            knw_metadata_retain(md);
            pthread_mutex_unlock(&c->lock);
            *err = 0;
            return md;
        }
        int64_t now = knw_now_ms();
        if (now >= deadline) {
            pthread_mutex_unlock(&c->lock);
            *err = KN_ERR__TIMED_OUT;
            return NULL;
        }
        if (c->oauth) {
            /* A connection may be waiting for the application's token. */
            pthread_mutex_unlock(&c->lock);
            knw_client_app_service(c);
            pthread_mutex_lock(&c->lock);
        }
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        int64_t ns = (int64_t)ts.tv_nsec + (knw_client_app_wait_until(c, now, deadline) - now) * 1000000;
        ts.tv_sec += ns / 1000000000;
        ts.tv_nsec = ns % 1000000000;
        pthread_cond_timedwait(&c->cond, &c->lock, &ts);
    }
}

/* ---- building a snapshot ---- */

static char *arena_str(kn_arena *a, kn_str s) {
    if (s.len < 0)
        return NULL;
    char *p = kn_arena_alloc(a, (size_t)s.len + 1);
    if (p) {
        memcpy(p, s.ptr, (size_t)s.len);
        p[s.len] = 0;
    }
    return p;
}

static int32_t *arena_i32(kn_arena *a, const kp_int32_array *arr, int32_t *count) {
    *count = arr->count > 0 ? arr->count : 0;
    if (*count == 0)
        return NULL;
    int32_t *p = kn_arena_calloc(a, (size_t)*count, sizeof *p);
    if (p)
        memcpy(p, arr->items, (size_t)*count * sizeof *p);
    else
        *count = 0;
    return p;
}

static int cmp_brokers(const void *a, const void *b) {
    int32_t x = ((const knw_broker *)a)->node_id, y = ((const knw_broker *)b)->node_id;
    return x < y ? -1 : x > y;
}

static int cmp_topics(const void *a, const void *b) {
    return strcmp(((const knw_topic *)a)->name, ((const knw_topic *)b)->name);
}

/* Partition ids come from the wire: a table indexed by id is only
 * built for ids below this bound above the count. */
#define KNW_MD_PARTITION_SLACK 1024

static knw_metadata *build_snapshot(const kp_MetadataResponse *r, const md_req *mr, int64_t now_ms) {
    bool all = mr->all;
    md_box *box = kn_calloc(1, sizeof *box);
    if (!box)
        return NULL;
    kn_arena_init(&box->arena, 0);
    kn_arena *a = &box->arena;
    knw_metadata *md = &box->md;
    md->refcnt = 1;
    md->fetched_at_ms = now_ms;
    md->cluster_id = arena_str(a, r->cluster_id);
    md->controller_id = r->controller_id;
    md->all_topics = all;
    md->topic_gen = mr->topic_gen;
    if (r->brokers.count > 0) {
        md->brokers = kn_arena_calloc(a, (size_t)r->brokers.count, sizeof *md->brokers);
        if (!md->brokers)
            goto nomem;
        for (int32_t i = 0; i < r->brokers.count; i++) {
            const kp_MetadataResponse_MetadataResponseBroker *b = &r->brokers.items[i];
            knw_broker *o = &md->brokers[md->broker_count];
            o->node_id = b->node_id;
            o->host = arena_str(a, b->host);
            o->port = b->port;
            o->rack = arena_str(a, b->rack);
            if (!o->host)
                continue; /* a broker without a host cannot be used */
            md->broker_count++;
        }
        qsort(md->brokers, (size_t)md->broker_count, sizeof *md->brokers, cmp_brokers);
    }
    if (r->topics.count > 0) {
        md->topics = kn_arena_calloc(a, (size_t)r->topics.count, sizeof *md->topics);
        if (!md->topics)
            goto nomem;
        for (int32_t i = 0; i < r->topics.count; i++) {
            const kp_MetadataResponse_MetadataResponseTopic *t = &r->topics.items[i];
            if (t->name.len < 0)
                continue;
            knw_topic *o = &md->topics[md->topic_count];
            o->name = arena_str(a, t->name);
            if (!o->name)
                goto nomem;
            o->topic_id = t->topic_id;
            o->error = t->error_code;
            o->is_internal = t->is_internal;
            int32_t n = t->partitions.count > 0 ? t->partitions.count : 0, max_id = -1;
            for (int32_t p = 0; p < n; p++) {
                int32_t id = t->partitions.items[p].partition_index;
                if (id >= 0 && id < n + KNW_MD_PARTITION_SLACK && id > max_id)
                    max_id = id;
            }
            o->partition_count = max_id + 1;
            if (o->partition_count > 0) {
                o->partitions = kn_arena_calloc(a, (size_t)o->partition_count, sizeof *o->partitions);
                if (!o->partitions)
                    goto nomem;
                for (int32_t p = 0; p < o->partition_count; p++) {
                    /* Ids the broker skipped stay visible as unknown. */
                    o->partitions[p].partition = p;
                    o->partitions[p].error = KN_ERR_UNKNOWN_TOPIC_OR_PARTITION;
                    o->partitions[p].leader = -1;
                    o->partitions[p].leader_epoch = -1;
                }
                for (int32_t p = 0; p < n; p++) {
                    const kp_MetadataResponse_MetadataResponsePartition *src = &t->partitions.items[p];
                    if (src->partition_index < 0 || src->partition_index >= o->partition_count)
                        continue;
                    knw_partition *dst = &o->partitions[src->partition_index];
                    dst->error = src->error_code;
                    dst->leader = src->leader_id;
                    dst->leader_epoch = src->leader_epoch;
                    dst->replicas = arena_i32(a, &src->replica_nodes, &dst->replica_count);
                    dst->isr = arena_i32(a, &src->isr_nodes, &dst->isr_count);
                    dst->offline = arena_i32(a, &src->offline_replicas, &dst->offline_count);
                }
            }
            md->topic_count++;
        }
        qsort(md->topics, (size_t)md->topic_count, sizeof *md->topics, cmp_topics);
    }
    return md;
nomem:
    knw_md_free(md);
    return NULL;
}

/* ---- the refresh cycle (network thread) ---- */

static void md_failed(knw_client *c, int64_t now_ms, const char *why) {
    knw_md_state *m = &c->md;
    m->failures++;
    m->next_allowed_ms = now_ms + knw_backoff_ms(&c->retry_backoff, m->failures - 1, -1);
    pthread_mutex_lock(&c->lock);
    m->want = true;
    pthread_mutex_unlock(&c->lock);
    kn_log(&c->log, m->failures == 1 ? KN_LOG_INFO : KN_LOG_DEBUG, "metadata refresh failed: %s", why);
}

static void md_response(knw_client *c, knw_resp *resp, void *opaque) {
    md_req *mr = opaque;
    knw_md_state *m = &c->md;
    int64_t now = knw_now_ms();
    m->in_flight = false;
    if (resp->err) {
        md_failed(c, now, resp->errstr);
        goto out;
    }
    const kp_MetadataResponse *body = resp->body;
    if (body->error_code == KN_ERR_REBOOTSTRAP_REQUIRED) {
        md_failed(c, now, "REBOOTSTRAP_REQUIRED");
        if (c->set.rebootstrap)
            knw_client_rebootstrap(c, "the broker answered REBOOTSTRAP_REQUIRED");
        goto out;
    }
    if (body->error_code) {
        md_failed(c, now, kn_err_name(body->error_code));
        goto out;
    }
    if (body->brokers.count <= 0) {
        md_failed(c, now, "the response lists no broker");
        goto out;
    }
    knw_metadata *md = build_snapshot(body, mr, now);
    if (!md) {
        md_failed(c, now, "out of memory");
        goto out;
    }
    KNW_STAT_ADD(c, metadata_refreshes, 1);
    pthread_mutex_lock(&c->lock);
    knw_metadata *old = m->current;
    m->current = md;
    pthread_cond_broadcast(&c->cond);
    pthread_mutex_unlock(&c->lock);
    knw_metadata_release(old);
    m->failures = 0;
    m->last_success_ms = now;
    m->due_since_ms = 0;
    m->next_allowed_ms = now + c->set.retry_backoff_ms;
    knw_client_apply_brokers(c, md);
    /* Tickers waiting for leaders (fetcher, sender) run right away. */
    atomic_store(&c->woken, true);
    kn_log(&c->log, KN_LOG_DEBUG, "metadata: %d brokers, %d topics, controller %d", md->broker_count,
           md->topic_count, md->controller_id);
out:
    knw_resp_free(resp);
    md_req_free(mr);
}

static md_req *md_req_build(knw_client *c, bool all) {
    md_req *mr = kn_calloc(1, sizeof *mr);
    if (!mr)
        return NULL;
    kp_MetadataRequest_init(&mr->body);
    mr->all = all;
    mr->body.allow_auto_topic_creation = c->set.allow_auto_topic_creation;
    pthread_mutex_lock(&c->lock);
    mr->topic_gen = c->md.topic_gen; /* all topics covers the registered ones too */
    if (all) {
        pthread_mutex_unlock(&c->lock);
        mr->body.topics.count = -1; /* null: every topic */
        return mr;
    }
    int n = c->md.topic_count;
    mr->names = kn_calloc((size_t)(n ? n : 1), sizeof *mr->names);
    mr->items = kn_calloc((size_t)(n ? n : 1), sizeof *mr->items);
    bool ok = mr->names && mr->items;
    for (int i = 0; ok && i < n; i++) {
        mr->names[i] = kn_strdup(c->md.topics[i]);
        ok = mr->names[i] != NULL;
        if (ok)
            mr->count++;
    }
    pthread_mutex_unlock(&c->lock);
    if (!ok) {
        md_req_free(mr);
        return NULL;
    }
    for (int i = 0; i < mr->count; i++)
        mr->items[i].name = kn_str_c(mr->names[i]);
    mr->body.topics.items = mr->items;
    mr->body.topics.count = mr->count; /* empty: brokers only */
    return mr;
}

/* True when no known broker can be tried: every candidate connection
 * is backing off after failures (Java's "no node available"). */
static bool all_brokers_down(knw_client *c) {
    bool any = false;
    for (int i = 0; i < c->conn_count; i++) {
        knw_conn *conn = c->conns[i];
        if (conn->retired || conn->bootstrap)
            continue;
        any = true;
        if (conn->state != KNW_CS_BACKOFF || conn->connect_failures == 0)
            return false;
    }
    return any;
}

int64_t knw_md_tick(knw_client *c, int64_t now_ms) {
    knw_md_state *m = &c->md;
    if (atomic_load(&c->fatal_err))
        return INT64_MAX; /* no broker will answer this client again */
    pthread_mutex_lock(&c->lock);
    bool want = m->want, want_all = m->want_all;
    bool have = m->current != NULL;
    pthread_mutex_unlock(&c->lock);
    int64_t expires = m->last_success_ms + c->set.metadata_max_age_ms;
    if (!want && have && now_ms < expires) {
        m->due_since_ms = 0;
        return expires;
    }
    if (m->due_since_ms == 0)
        m->due_since_ms = now_ms;
    if (m->in_flight)
        return INT64_MAX;
    if (c->set.rebootstrap && !c->use_bootstrap && have) {
        if (now_ms - m->due_since_ms >= c->set.rebootstrap_trigger_ms)
            knw_client_rebootstrap(c, "no metadata from any known broker within "
                                      "metadata.recovery.rebootstrap.trigger.ms");
        else if (all_brokers_down(c))
            knw_client_rebootstrap(c, "every known broker is unreachable");
    }
    if (now_ms < m->next_allowed_ms)
        return m->next_allowed_ms;
    /* Take the wishes and clear them in one step, before the topic list
     * is copied: a waiter asking for all topics (or a topic added) after
     * this point raises them again and gets the next request, never lost. */
    pthread_mutex_lock(&c->lock);
    want_all = m->want_all;
    m->want = false;
    m->want_all = false;
    pthread_mutex_unlock(&c->lock);
    md_req *mr = md_req_build(c, want_all);
    knw_req *r = mr ? knw_req_new(c, KNW_NODE_ANY, kp_api_get(KP_API_METADATA), &mr->body, -1, md_response, mr)
                    : NULL;
    if (!r) {
        md_req_free(mr);
        pthread_mutex_lock(&c->lock);
        m->want = true;
        m->want_all |= want_all;
        pthread_mutex_unlock(&c->lock);
        return now_ms + 100;
    }
    r->min_version = KNW_MD_MIN_VERSION;
    m->in_flight = true;
    knw_client_enqueue(c, r);
    return INT64_MAX;
}

void knw_md_destroy(knw_client *c) {
    knw_metadata_release(c->md.current);
    c->md.current = NULL;
    for (int i = 0; i < c->md.topic_count; i++)
        kn_free(c->md.topics[i]);
    kn_free(c->md.topics);
    c->md.topics = NULL;
    c->md.topic_count = 0;
}
