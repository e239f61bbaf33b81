/*
 * coordinator.c: the coordinator table of a client: cached answers per
 * (key type, key), batched FindCoordinator lookups with backoff, and
 * invalidation (see coordinator.h). Owns the table's entries and the
 * lookups in flight.
 */
#include "wire/coordinator.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "error.h"
#include "kn_alloc.h"
#include "proto/generated/kp_find_coordinator.h"
#include "wire/wire_int.h"

#define KNW_FIND_COORDINATOR_SINGLE_MAX 3 /* one key per request */
#define KNW_FIND_COORDINATOR_BATCH_MIN 4  /* coordinator_keys (KIP-699) */

/* One FindCoordinator in flight and the keys it asks for. */
typedef struct coord_lookup {
    knw_client *c;
    int8_t key_type;
    bool batch;
    int n;
    char **keys;  /* owned copies */
    kn_str *strs; /* the request's view of keys */
    kp_FindCoordinatorRequest req;
} coord_lookup;

void knw_coord_init(knw_coord_table *t) {
    memset(t, 0, sizeof *t);
    pthread_mutex_init(&t->lock, NULL);
    pthread_condattr_t ca;
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_cond_init(&t->cond, &ca);
    pthread_condattr_destroy(&ca);
}

void knw_coord_destroy(knw_coord_table *t) {
    for (int i = 0; i < t->count; i++)
        kn_free(t->entries[i].key);
    t->count = 0;
    pthread_cond_destroy(&t->cond);
    pthread_mutex_destroy(&t->lock);
}

/* Lock held. The entry of (key_type, key); created when add. */
static knw_coord_entry *entry_find(knw_coord_table *t, int8_t key_type, const char *key, bool add) {
    for (int i = 0; i < t->count; i++)
        if (t->entries[i].key_type == key_type && !strcmp(t->entries[i].key, key))
            return &t->entries[i];
    if (!add || t->count == KNW_COORD_MAX)
        return NULL;
    char *k = kn_strdup(key);
    if (!k)
        return NULL;
    knw_coord_entry *e = &t->entries[t->count++];
    memset(e, 0, sizeof *e);
    e->key_type = key_type;
    e->key = k;
    e->node = -1;
    return e;
}

static const char *type_name(int8_t key_type) { return key_type == KNW_COORD_TXN ? "transaction" : "group"; }

/* Lock held. Forgets e's coordinator (the next get looks it up again). */
static void entry_forget(knw_client *c, knw_coord_entry *e, const char *why) {
    if (e->node < 0)
        return;
    kn_log(&c->log, KN_LOG_DEBUG, "%s %s: coordinator %d forgotten: %s", type_name(e->key_type), e->key,
           (int)e->node, why);
    e->node = -1;
}

/* A snapshot newer than the answer that no longer lists the node: the
 * broker left the cluster, and a request queued for it would only wait
 * for its deadline (the wire layer holds requests for unknown nodes). */
static bool node_left(const knw_metadata *md, const knw_coord_entry *e) {
    return md && md->broker_count > 0 && md->fetched_at_ms > e->found_ms && !knw_metadata_broker(md, e->node);
}

int32_t knw_coord_known(knw_client *c, int8_t key_type, const char *key) {
    if (!c || !key)
        return -1;
    knw_metadata *md = knw_metadata_get(c);
    knw_coord_table *t = &c->coord;
    pthread_mutex_lock(&t->lock);
    knw_coord_entry *e = entry_find(t, key_type, key, false);
    if (e && e->node >= 0 && node_left(md, e))
        entry_forget(c, e, "no longer in the cluster metadata");
    int32_t node = e ? e->node : -1;
    pthread_mutex_unlock(&t->lock);
    if (md)
        knw_metadata_release(md);
    return node;
}

static void lookup_free(coord_lookup *l) {
    if (!l)
        return;
    for (int i = 0; i < l->n; i++)
        kn_free(l->keys[i]);
    kn_free(l->keys);
    kn_free(l->strs);
    kn_free(l);
}

static coord_lookup *lookup_new(knw_client *c, int8_t key_type, bool batch, int n) {
    coord_lookup *l = kn_calloc(1, sizeof *l);
    if (!l)
        return NULL;
    l->c = c;
    l->key_type = key_type;
    l->batch = batch;
    l->keys = kn_calloc((size_t)n, sizeof *l->keys);
    l->strs = kn_calloc((size_t)n, sizeof *l->strs);
    if (!l->keys || !l->strs) {
        lookup_free(l);
        return NULL;
    }
    kp_FindCoordinatorRequest_init(&l->req);
    l->req.key_type = key_type;
    return l;
}

static int lookup_add(coord_lookup *l, const char *key) {
    char *k = kn_strdup(key);
    if (!k)
        return KN_ERR__NOMEM;
    l->keys[l->n] = k;
    l->strs[l->n] = kn_str_c(k);
    l->n++;
    if (l->batch) {
        l->req.coordinator_keys.items = l->strs;
        l->req.coordinator_keys.count = l->n;
    } else {
        l->req.key = l->strs[0];
    }
    return 0;
}

/* The answer for one key of a lookup: 0 with *node, or an error. */
static int answer_for(const coord_lookup *l, const knw_resp *resp, const char *key, int32_t *node, char *errstr,
                      size_t n) {
    const kp_FindCoordinatorResponse *r = resp->body;
    if (resp->err) {
        kn_errstr_set(errstr, n, "%s", resp->errstr);
        return resp->err;
    }
    if (!r) {
        kn_errstr_set(errstr, n, "FindCoordinator: no response body");
        return KN_ERR__PROTOCOL;
    }
    int err;
    const kn_str *msg;
    if (l->batch) {
        const kp_FindCoordinatorResponse_Coordinator *co = NULL;
        for (int32_t i = 0; i < r->coordinators.count && !co; i++)
            if (kn_str_eq(r->coordinators.items[i].key, key))
                co = &r->coordinators.items[i];
        if (!co) {
            kn_errstr_set(errstr, n, "FindCoordinator v%d: the answer omits %s", resp->api_version, key);
            return KN_ERR__PROTOCOL;
        }
        err = co->error_code;
        *node = co->node_id;
        msg = &co->error_message;
    } else {
        err = r->error_code;
        *node = r->node_id;
        msg = &r->error_message;
    }
    if (!err && *node < 0)
        err = KN_ERR_COORDINATOR_NOT_AVAILABLE;
    if (err)
        kn_errstr_set(errstr, n, "FindCoordinator: %s%s%.*s", kn_err_name(err), msg->len > 0 ? ": " : "",
                      msg->len > 0 ? (int)msg->len : 0, msg->len > 0 ? msg->ptr : "");
    return err;
}

static void lookup_done(knw_client *c, knw_resp *resp, void *opaque) {
    coord_lookup *l = opaque;
    knw_coord_table *t = &l->c->coord;
    c = l->c;
    int64_t now = knw_now_ms();
    pthread_mutex_lock(&t->lock);
    if (l->batch && resp->err == KN_ERR__UNSUPPORTED_VERSION)
        t->no_batch = true; /* asked again at once, one key per request */
    for (int i = 0; i < l->n; i++) {
        knw_coord_entry *e = entry_find(t, l->key_type, l->keys[i], false);
        if (!e)
            continue;
        e->inflight = false;
        int32_t node = -1;
        char why[200];
        int err = answer_for(l, resp, l->keys[i], &node, why, sizeof why);
        if (!err) {
            e->node = node;
            e->found_ms = now;
            e->failures = 0;
            e->last_err = 0;
            e->last_errstr[0] = '\0';
            continue;
        }
        e->node = -1;
        e->last_err = err;
        snprintf(e->last_errstr, sizeof e->last_errstr, "%s", why);
        if (l->batch && resp->err == KN_ERR__UNSUPPORTED_VERSION) {
            e->retry_at_ms = now;
        } else {
            e->retry_at_ms = now + knw_backoff_ms(&c->retry_backoff, e->failures, -1);
            e->failures++;
        }
        kn_log(&c->log, e->failures > 1 ? KN_LOG_DEBUG : KN_LOG_INFO, "%s %s: %s", type_name(e->key_type), e->key,
               why);
    }
    pthread_cond_broadcast(&t->cond);
    pthread_mutex_unlock(&t->lock);
    knw_resp_free(resp);
    lookup_free(l);
    knw_wakeup(c); /* tickers waiting for a coordinator */
}

/* Lock held. Marks every entry of key_type that is due and joins them
 * into lookups (one batched, or one per key); returns them as a list
 * through *out (linked by a small array the caller sends and frees). */
static int plan_lookups(knw_client *c, int8_t key_type, bool batch, int64_t now, coord_lookup **out, int cap) {
    knw_coord_table *t = &c->coord;
    int n = 0;
    coord_lookup *b = NULL;
    for (int i = 0; i < t->count; i++) {
        knw_coord_entry *e = &t->entries[i];
        if (e->key_type != key_type || e->node >= 0 || e->inflight || now < e->retry_at_ms)
            continue;
        if (batch) {
            if (!b && !(b = lookup_new(c, key_type, true, t->count)))
                break;
            if (lookup_add(b, e->key))
                break;
        } else {
            if (n == cap)
                break;
            coord_lookup *l = lookup_new(c, key_type, false, 1);
            if (!l || lookup_add(l, e->key)) {
                lookup_free(l);
                break;
            }
            out[n++] = l;
        }
        e->inflight = true;
        e->last_err = 0;
        e->last_errstr[0] = '\0';
    }
    if (b) {
        if (b->n == 0) {
            lookup_free(b);
        } else {
            out[n++] = b;
        }
    }
    return n;
}

int32_t knw_coord_get(knw_client *c, int8_t key_type, const char *key, int *err, char *errstr,
                      size_t errstr_size) {
    if (err)
        *err = 0;
    if (!c || !key)
        return -1;
    knw_metadata *md = knw_metadata_get(c);
    /* Read before the table lock: it takes the client's lock. */
    int16_t v = knw_api_version(c, KNW_NODE_ANY, KP_API_FIND_COORDINATOR);
    knw_coord_table *t = &c->coord;
    coord_lookup *send[8];
    int nsend = 0;
    int64_t now = knw_now_ms();
    pthread_mutex_lock(&t->lock);
    knw_coord_entry *e = entry_find(t, key_type, key, true);
    int32_t node = -1;
    if (!e) {
        if (err)
            *err = KN_ERR__NOMEM;
        kn_errstr_set(errstr, errstr_size, "coordinator table full or out of memory");
    } else {
        if (e->node >= 0 && node_left(md, e))
            entry_forget(c, e, "no longer in the cluster metadata");
        node = e->node;
        if (node < 0 && !e->inflight && now >= e->retry_at_ms) {
            bool batch = v >= KNW_FIND_COORDINATOR_BATCH_MIN && !t->no_batch;
            nsend = plan_lookups(c, key_type, batch, now, send, (int)(sizeof send / sizeof send[0]));
            t->lookups += nsend;
            for (int i = 0; i < nsend; i++)
                t->batched += send[i]->batch;
        }
        if (node < 0 && !e->inflight && e->last_err) {
            if (err)
                *err = e->last_err;
            kn_errstr_set(errstr, errstr_size, "%s", e->last_errstr);
        }
    }
    pthread_mutex_unlock(&t->lock);
    if (md)
        knw_metadata_release(md);
    /* Sent without the lock: a lookup that cannot be queued completes
     * here, through lookup_done, which takes it. */
    for (int i = 0; i < nsend; i++) {
        coord_lookup *l = send[i];
        knw_send(c, KNW_NODE_ANY, KP_API_FIND_COORDINATOR, l->batch ? KNW_FIND_COORDINATOR_BATCH_MIN : -1,
                 l->batch ? -1 : KNW_FIND_COORDINATOR_SINGLE_MAX, &l->req, -1, lookup_done, l);
    }
    return node;
}

bool knw_coord_failed(knw_client *c, int8_t key_type, const char *key, int32_t node, int err) {
    if (!c || !key || !kn_err_is_coordinator(err))
        return false;
    knw_coord_table *t = &c->coord;
    pthread_mutex_lock(&t->lock);
    knw_coord_entry *e = entry_find(t, key_type, key, false);
    if (e && e->node >= 0 && (node < 0 || e->node == node)) {
        char why[64];
        snprintf(why, sizeof why, "a request failed with %s", kn_err_name(err));
        entry_forget(c, e, why);
    }
    pthread_mutex_unlock(&t->lock);
    return true;
}

void knw_coord_node_down(knw_client *c, int32_t node) {
    knw_coord_table *t = &c->coord;
    pthread_mutex_lock(&t->lock);
    for (int i = 0; i < t->count; i++)
        if (t->entries[i].node == node)
            entry_forget(c, &t->entries[i], "its connection was lost");
    pthread_mutex_unlock(&t->lock);
}

int knw_coord_wait(knw_client *c, int8_t key_type, const char *key, int64_t deadline_ms, int32_t *node,
                   char *errstr, size_t errstr_size) {
    if (!c || !key)
        return KN_ERR__INVALID_ARG;
    if (knw_on_network_thread(c)) {
        kn_errstr_set(errstr, errstr_size, "knw_coord_wait on the network thread would deadlock");
        return KN_ERR__STATE;
    }
    char last[200] = "";
    knw_coord_table *t = &c->coord;
    for (;;) {
        int err = 0;
        char why[200] = "";
        *node = knw_coord_get(c, key_type, key, &err, why, sizeof why);
        if (*node >= 0)
            return 0;
        if (err) {
            snprintf(last, sizeof last, "%s", why);
            if (!kn_err_is_retriable(err) && !kn_err_is_coordinator(err) && err != KN_ERR__UNSUPPORTED_VERSION) {
                kn_errstr_set(errstr, errstr_size, "%s", last);
                return err;
            }
        }
        int64_t now = knw_now_ms();
        if (now >= deadline_ms)
            break;
        /* Until an answer, the next retry, or the deadline. */
        pthread_mutex_lock(&t->lock);
        knw_coord_entry *e = entry_find(t, key_type, key, false);
        int64_t until = deadline_ms;
        if (e && !e->inflight && e->node < 0 && e->retry_at_ms < until)
            until = e->retry_at_ms;
        if (e && (e->node >= 0 || (!e->inflight && e->last_err && e->retry_at_ms <= now))) {
            /* Answered since the look above: read it. */
        } else {
            /* (10 ms when nothing is pending: a lookup that could not
             * even be planned is tried again soon, not in a spin.) */
            int64_t wait = e && (e->inflight || until > now) ? until - now : 10;
            if (wait < 1)
                wait = 1;
            struct timespec ts;
            clock_gettime(CLOCK_MONOTONIC, &ts);
            ts.tv_sec += wait / 1000;
            ts.tv_nsec += (wait % 1000) * 1000000;
            if (ts.tv_nsec >= 1000000000) {
                ts.tv_sec++;
                ts.tv_nsec -= 1000000000;
            }
            pthread_cond_timedwait(&t->cond, &t->lock, &ts);
        }
        pthread_mutex_unlock(&t->lock);
    }
    kn_errstr_set(errstr, errstr_size, "%s coordinator for %s not found in time%s%s", type_name(key_type), key,
                  last[0] ? ": " : "", last);
    return KN_ERR__TIMED_OUT;
}

void knw_coord_stats(knw_client *c, int64_t *lookups, int64_t *batched) {
    pthread_mutex_lock(&c->coord.lock);
    *lookups = c->coord.lookups;
    *batched = c->coord.batched;
    pthread_mutex_unlock(&c->coord.lock);
}
