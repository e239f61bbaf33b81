/*
 * request.c: the life of one request: queueing from any thread
 * (knw_send), encoding at the negotiated version on the network thread,
 * decoding the response, completion (exactly one callback), and the
 * blocking knw_call wrapper. Routing, timeouts and connection failures
 * live in client.c and conn.c.
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "error.h"
#include "kn_alloc.h"
#include "proto/generated/kp_produce.h"
#include "proto/header.h"
#include "wire/bodybuf.h"
#include "wire/wire_int.h"

/* Byte strings at least this long are spliced into a Produce request
 * rather than copied (smaller ones cost less to copy than an iovec). */
#define KNW_SPLICE_MIN 256

void knw_reqq_push(knw_reqq *q, knw_req *r) {
    r->next = NULL;
    r->prev = q->tail;
    if (q->tail)
        q->tail->next = r;
    else
        q->head = r;
    q->tail = r;
    q->count++;
}

void knw_reqq_unlink(knw_reqq *q, knw_req *r) {
    if (r->prev)
        r->prev->next = r->next;
    else
        q->head = r->next;
    if (r->next)
        r->next->prev = r->prev;
    else
        q->tail = r->prev;
    r->next = r->prev = NULL;
    q->count--;
}

knw_req *knw_reqq_pop(knw_reqq *q) {
    knw_req *r = q->head;
    if (r)
        knw_reqq_unlink(q, r);
    return r;
}

/* The answer when not even the request or an error response could be
 * allocated: shared, read-only (callbacks only read a response), never
 * freed (knw_resp_free skips it). */
static knw_resp knw_resp_nomem = {
    .err = KN_ERR__NOMEM,
    .errstr = "out of memory queueing a request",
    .api_key = -1,
    .api_version = -1,
    .node_id = -1,
};

void knw_resp_free(knw_resp *resp) {
    if (!resp || resp == &knw_resp_nomem)
        return;
    kn_arena_destroy(&resp->arena);
    knw_body_free(resp->raw);
    kn_free(resp);
}

/* Takes the response preallocated at submission (so failing a request
 * never needs memory) and stamps it with the request's identity. */
static knw_resp *resp_take(knw_req *r) {
    knw_resp *resp = r->resp;
    r->resp = NULL;
    memset(resp, 0, sizeof *resp);
    kn_arena_init(&resp->arena, 0);
    resp->api_key = r->api_key;
    resp->api_version = r->version >= 0 ? r->version : -1;
    resp->node_id = r->conn ? r->conn->node_id : r->node_id;
    return resp;
}

knw_req *knw_req_new(knw_client *c, int32_t node_id, const kp_api *api, const void *body, int timeout_ms,
                     knw_cb *cb, void *opaque) {
    knw_req *r = kn_calloc(1, sizeof *r);
    if (!r)
        return NULL;
    r->resp = kn_calloc(1, sizeof *r->resp);
    if (!r->resp) {
        kn_free(r);
        return NULL;
    }
    r->node_id = node_id;
    r->api_key = api->key;
    r->api = api;
    r->min_version = -1;
    r->max_version = -1;
    r->version = -1;
    r->body = body;
    r->cb = cb;
    r->opaque = opaque;
    r->enqueued_us = knw_now_us();
    r->deadline_ms = r->enqueued_us / 1000 + (timeout_ms >= 0 ? timeout_ms : c->set.request_timeout_ms);
    return r;
}

void knw_req_free(knw_req *r) {
    if (!r)
        return;
    kn_free(r->resp);
    kn_free(r);
}

void knw_req_done(knw_client *c, knw_req *r, knw_resp *resp) {
    if (r->cb)
        r->cb(c, resp, r->opaque);
    else
        knw_resp_free(resp);
    knw_req_free(r);
}

void knw_req_fail(knw_client *c, knw_req *r, int err, const char *fmt, ...) {
    knw_resp *resp = resp_take(r);
    resp->err = err;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(resp->errstr, sizeof resp->errstr, fmt, ap);
    va_end(ap);
    if (r->sent_us)
        resp->latency_us = knw_now_us() - r->sent_us;
    knw_req_done(c, r, resp);
}

/* The highest version both sides support within the caller's bounds. */
static int pick_version(const knw_conn *conn, const knw_req *r, int16_t *out) {
    int16_t lo = conn->vmin[r->api_key], hi = conn->vmax[r->api_key];
    if (hi < 0)
        return KN_ERR__UNSUPPORTED_VERSION;
    if (r->max_version >= 0 && r->max_version < hi)
        hi = r->max_version;
    if (r->min_version > lo)
        lo = r->min_version;
    if (lo > hi)
        return KN_ERR__UNSUPPORTED_VERSION;
    *out = hi;
    return 0;
}

int knw_req_send(knw_client *c, knw_conn *conn, knw_req *r, int64_t now_ms) {
    if (!r->handshake) {
        int rc = pick_version(conn, r, &r->version);
        if (rc) {
            char nb[128];
            knw_req_fail(c, r, KN_ERR__UNSUPPORTED_VERSION,
                         "%s: %s supports v%d..v%d, the request needs v%d..v%d", r->api->name,
                         knw_conn_name(conn, nb, sizeof nb), conn->vmin[r->api_key], conn->vmax[r->api_key],
                         r->min_version < 0 ? r->api->min_version : r->min_version,
                         r->max_version < 0 ? r->api->max_version : r->max_version);
            return 0;
        }
    }
    /* acks=0 Produce requests get no response: they complete once
     * written and never occupy an in-flight slot. */
    r->no_response = r->api_key == KP_API_PRODUCE && ((const kp_ProduceRequest *)r->body)->acks == 0;
    int32_t corr = conn->inflight.next_corr;
    kn_wr w;
    kn_wr_init(&w, 256, 0);
    /* A Produce request's record batches are written from where they
     * are (writev) instead of being copied into the request: the batches
     * live until the request's callback, which runs only after the
     * answer (so after every byte was written) or after the connection
     * was torn down, its queue with it (knw_conn_close, knw_conn_free,
     * the client's shutdown: no write happens after the callback). Not
     * under acks=0: that request completes as soon as it is queued. */
    kn_wr_splices splices = {.items = NULL, .count = 0, .cap = 0, .bytes = 0, .min = KNW_SPLICE_MIN};
    if (r->api_key == KP_API_PRODUCE && !r->no_response)
        w.splices = &splices;
    size_t size_off = 0;
    int rc = kp_request_frame_begin(&w, r->api_key, r->version, corr, kn_str_c(c->set.client_id), &size_off);
    if (!rc)
        rc = r->api->req_encode(&w, r->body, r->version);
    if (!rc)
        rc = kp_request_frame_end(&w, size_off);
    if (!rc && !kn_wr_ok(&w))
        rc = w.err;
    if (rc) {
        kn_wr_free(&w);
        kn_free(splices.items);
        knw_req_fail(c, r, rc == KN_ERR__NOMEM ? rc : KN_ERR__INVALID_ARG,
                     "%s v%d request could not be encoded: %s", r->api->name, r->version, kn_err_name(rc));
        return 0;
    }
    size_t len;
    uint8_t *buf = kn_wr_detach(&w, &len);
    if (!r->no_response && knw_iftab_push(&conn->inflight, r) < 0) {
        /* Callers check for a slot first; never lose a request anyway. */
        kn_free(buf);
        kn_free(splices.items);
        knw_req_fail(c, r, KN_ERR__QUEUE_FULL, "%s: no in-flight slot", r->api->name);
        return 0;
    }
    rc = knw_txq_push_spliced(&conn->tx, buf, len, splices.items, splices.count);
    size_t wire_len = len + splices.bytes; /* the spliced batches go out too */
    kn_free(splices.items);
    if (rc) {
        /* Leave it in flight: the connection is closed below and the
         * request fails with the others. */
        knw_conn_close(conn, 0, KN_ERR__TRANSPORT, "out of memory queueing a request", now_ms);
        return 0;
    }
    r->conn = conn;
    r->sent_us = knw_now_us();
    atomic_store(&conn->inflight_n, conn->inflight.count);
    KNW_STAT_ADD(c, requests_sent, 1);
    knw_net_sent(conn, wire_len, now_ms);
    if (r->no_response) {
        knw_req_done(c, r, resp_take(r));
    }
    return 0;
}

int knw_req_handle_response(knw_client *c, knw_conn *conn, knw_req *r, uint8_t *frame, size_t len,
                            char *errstr, size_t errstr_size) {
    knw_resp *resp = resp_take(r);
    resp->raw = frame;
    resp->raw_len = len;
    resp->latency_us = knw_now_us() - r->sent_us;
    kn_rd rd;
    kn_rd_init(&rd, frame, len);
    int32_t corr;
    int rc = kp_response_header_decode(&rd, r->api_key, r->version, &corr);
    if (!rc) {
        void *body = kn_arena_alloc(&resp->arena, r->api->resp_size);
        if (!body) {
            rc = KN_ERR__NOMEM;
        } else {
            r->api->resp_init(body);
            rc = r->api->resp_decode(&rd, &resp->arena, body, r->version);
            if (!rc && kn_rd_remaining(&rd) != 0) {
                /* A response longer than its schema is as wrong as a
                 * short one: the two sides disagree on the layout. */
                kn_rd_fail(&rd, "trailing bytes after the response body");
                rc = KN_ERR__PROTOCOL;
            }
            if (!rc)
                resp->body = body;
        }
    }
    if (rc == KN_ERR__NOMEM) {
        kn_arena_destroy(&resp->arena);
        knw_body_free(resp->raw);
        r->resp = resp; /* reused by knw_req_fail */
        knw_req_fail(c, r, KN_ERR__NOMEM, "out of memory decoding %s v%d response", r->api->name, r->version);
        return 0;
    }
    if (rc) {
        if (rd.err)
            kp_proto_errstr(errstr, errstr_size, r->api->name, r->version, "response", &rd);
        else
            kn_errstr_set(errstr, errstr_size, "protocol error: %s v%d response: %s", r->api->name,
                          r->version, kn_err_name(rc));
        kn_arena_destroy(&resp->arena);
        knw_body_free(resp->raw);
        r->resp = resp; /* the caller fails r with knw_req_fail */
        return KN_ERR__PROTOCOL;
    }
    KNW_STAT_ADD(c, responses_received, 1);
    knw_net_received(conn, len, resp->latency_us, knw_now_ms());
    /* Every answer passes here: its quota throttle first (KIP-219). */
    knw_throttle_note(c, conn, r, resp->body, knw_now_ms());
    knw_req_done(c, r, resp);
    return 0;
}

/* Completes a request knw_send could not queue, on the calling thread,
 * before knw_send returns. */
static void complete_now(knw_client *c, int16_t api_key, int32_t node_id, knw_cb *cb, void *opaque, int err,
                         const char *fmt, ...) __attribute__((format(printf, 7, 8)));
static void complete_now(knw_client *c, int16_t api_key, int32_t node_id, knw_cb *cb, void *opaque, int err,
                         const char *fmt, ...) {
    knw_resp *resp = err == KN_ERR__NOMEM ? NULL : kn_calloc(1, sizeof *resp);
    if (resp) {
        kn_arena_init(&resp->arena, 0);
        resp->err = err;
        resp->api_key = api_key;
        resp->api_version = -1;
        resp->node_id = node_id;
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(resp->errstr, sizeof resp->errstr, fmt, ap);
        va_end(ap);
    } else {
        resp = &knw_resp_nomem;
    }
    if (cb)
        cb(c, resp, opaque);
    else
        knw_resp_free(resp);
}

void knw_send(knw_client *c, int32_t node_id, int16_t api_key, int16_t min_version, int16_t max_version,
              const void *req, int timeout_ms, knw_cb *cb, void *opaque) {
    const kp_api *api = kp_api_get(api_key);
    if (!c || !req || node_id < KNW_NODE_CONTROLLER || !api ||
        (max_version >= 0 && min_version > max_version)) {
        complete_now(c, api_key, node_id, cb, opaque, KN_ERR__INVALID_ARG,
                     "invalid request: %s%s%s%s", !c ? "no client " : "", !req ? "no body " : "",
                     !api ? "unknown API key " : "",
                     node_id < KNW_NODE_CONTROLLER || (max_version >= 0 && min_version > max_version)
                         ? "bad node or version range"
                         : "");
        return;
    }
    knw_req *r = knw_req_new(c, node_id, api, req, timeout_ms, cb, opaque);
    if (!r) {
        complete_now(c, api_key, node_id, cb, opaque, KN_ERR__NOMEM, "out of memory queueing a request");
        return;
    }
    r->min_version = min_version;
    r->max_version = max_version;
    pthread_mutex_lock(&c->lock);
    if (c->stopping) {
        pthread_mutex_unlock(&c->lock);
        knw_req_fail(c, r, KN_ERR__CLOSED, "%s request: the client is closing", api->name);
        return;
    }
    knw_reqq_push(&c->submit, r);
    pthread_mutex_unlock(&c->lock);
    /* From the network thread (tickers, callbacks) the loop takes the
     * submit queue before it sleeps again: no eventfd write needed. */
    if (!knw_on_network_thread(c))
        knw_loop_wake(&c->loop);
}

typedef struct call_wait {
    pthread_mutex_t lock;
    pthread_cond_t cond;
    knw_resp *resp;
    bool done;
} call_wait;

/* knw_call's answer without the lock (nothing waits on another thread). */
static void call_cb_direct(knw_client *c, knw_resp *resp, void *opaque) {
    (void)c;
    call_wait *w = opaque;
    w->resp = resp;
    w->done = true;
}

static void call_cb(knw_client *c, knw_resp *resp, void *opaque) {
    call_wait *w = opaque;
    pthread_mutex_lock(&w->lock);
    w->resp = resp;
    w->done = true;
    pthread_cond_signal(&w->cond);
    pthread_mutex_unlock(&w->lock);
}

knw_resp *knw_call(knw_client *c, int32_t node_id, int16_t api_key, int16_t min_version, int16_t max_version,
                   const void *req, int timeout_ms) {
    call_wait w = {.resp = NULL, .done = false};
    if (c && knw_on_network_thread(c)) {
        complete_now(c, api_key, node_id, call_cb_direct, &w, KN_ERR__STATE,
                     "knw_call on the network thread would deadlock (use knw_send)");
        return w.resp;
    }
    pthread_mutex_init(&w.lock, NULL);
    pthread_cond_init(&w.cond, NULL);
    /* Failures found by knw_send complete here, before it returns; the
     * rest by the request's deadline (or at close): the wait is bounded. */
    knw_send(c, node_id, api_key, min_version, max_version, req, timeout_ms, call_cb, &w);
    pthread_mutex_lock(&w.lock);
    while (!w.done) {
        if (c && c->oauth) {
            /* The application's OAUTHBEARER token callback runs here, on
             * this thread, while the call waits. */
            pthread_mutex_unlock(&w.lock);
            knw_client_app_service(c);
            pthread_mutex_lock(&w.lock);
            if (w.done)
                break;
            struct timespec ts;
            clock_gettime(CLOCK_REALTIME, &ts);
            ts.tv_nsec += 100 * 1000000L;
            if (ts.tv_nsec >= 1000000000L) {
                ts.tv_sec++;
                ts.tv_nsec -= 1000000000L;
            }
            pthread_cond_timedwait(&w.cond, &w.lock, &ts);
        } else {
            pthread_cond_wait(&w.cond, &w.lock);
        }
    }
    pthread_mutex_unlock(&w.lock);
    pthread_mutex_destroy(&w.lock);
    pthread_cond_destroy(&w.cond);
    return w.resp;
}
