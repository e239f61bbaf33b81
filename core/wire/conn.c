/*
 * conn.c: one broker connection's state machine:
 *   DOWN -> (RESOLVING on the resolver thread) -> (every address in turn)
 *   CONNECTING -> APIVERSIONS -> [SASL (conn_sasl.c)] -> READY -> (error,
 *   timeout, idle) BACKOFF/DOWN -> ...
 * It owns the socket (through the transport vtable), the receive
 * framer, the send queue, the in-flight table and the requests queued
 * for this node, which wait while a broker's quota throttle runs
 * (throttle.c). Network thread only.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "error.h"
#include "kn_alloc.h"
#include "proto/header.h"
#include "wire/bodybuf.h"
#include "wire/conn_sasl.h"
#include "wire/wire_int.h"

const char *knw_conn_name(const knw_conn *conn, char *buf, size_t size) {
    snprintf(buf, size, "broker %d (%s:%d%s)", conn->node_id, conn->host, conn->port,
             conn->bootstrap ? ", bootstrap" : "");
    return buf;
}

knw_conn *knw_conn_new(knw_client *c, int32_t node_id, bool bootstrap, const char *host, int port) {
    knw_conn *conn = kn_calloc(1, sizeof *conn);
    if (!conn)
        return NULL;
    conn->client = c;
    conn->node_id = node_id;
    conn->bootstrap = bootstrap;
    conn->port = port;
    conn->host = kn_strdup(host);
    conn->poll_idx = -1;
    knw_transport_init(&conn->tp, c->set.tls ? &knw_transport_tls : &knw_transport_tcp);
    knw_txq_init(&conn->tx);
    /* Staging reads of 64 KiB: many small responses per recv(). */
    /* With SASL the ring has one slot more than the in-flight limit: a
     * re-authentication request may join a full pipeline (conn_sasl.c). */
    if (!conn->host || knw_rx_init(&conn->rx, 65536, c->set.max_response_bytes) ||
        knw_iftab_init(&conn->inflight, c->set.max_in_flight + (c->set.sasl ? 1 : 0), 1)) {
        kn_free(conn->host);
        knw_rx_destroy(&conn->rx);
        knw_iftab_destroy(&conn->inflight);
        kn_free(conn);
        return NULL;
    }
    conn->inflight.limit = c->set.max_in_flight;
    for (int i = 0; i <= KP_API_KEY_MAX; i++)
        conn->vmin[i] = conn->vmax[i] = -1;
    kp_ApiVersionsRequest_init(&conn->hs_body);
    conn->hs_body.client_software_name = kn_str_c(KN_SOFTWARE_NAME);
    conn->hs_body.client_software_version = kn_str_c(KN_VERSION_STR);
    return conn;
}

static void fail_inflight(knw_conn *conn, int first_err, int err, const char *why) {
    knw_client *c = conn->client;
    char nb[128];
    knw_conn_name(conn, nb, sizeof nb);
    bool first = true;
    knw_req *r;
    while ((r = knw_iftab_pop(&conn->inflight))) {
        int e = first && first_err ? first_err : err;
        if (r->timed_out)
            knw_req_fail(c, r, KN_ERR__TIMED_OUT, "%s v%d request to %s timed out after %lld ms",
                         r->api->name, r->version, nb, (long long)((knw_now_us() - r->enqueued_us) / 1000));
        else if (e == KN_ERR__PROTOCOL && first)
            knw_req_fail(c, r, e, "%s (%s)", why, nb);
        else
            knw_req_fail(c, r, e, "%s: %s", nb, why);
        first = false;
    }
    atomic_store(&conn->inflight_n, 0);
}

/* Back to a closed socket with nothing in flight. */
static void teardown(knw_conn *conn) {
    if (conn->tp.fd >= 0)
        conn->tp.ops->close(&conn->tp);
    knw_rx_reset(&conn->rx);
    knw_txq_destroy(&conn->tx);
    knw_txq_init(&conn->tx);
    knw_addrs_free(&conn->addrs);
    atomic_store(&conn->ready, false);
    for (int i = 0; i <= KP_API_KEY_MAX; i++)
        conn->vmin[i] = conn->vmax[i] = -1;
    knw_sasl_reset(conn);
}

void knw_conn_free(knw_conn *conn, int err, const char *why) {
    if (!conn)
        return;
    fail_inflight(conn, 0, err, why);
    knw_req *r;
    char nb[128];
    knw_conn_name(conn, nb, sizeof nb);
    while ((r = knw_reqq_pop(&conn->pending)))
        knw_req_fail(conn->client, r, err, "%s: %s", nb, why);
    teardown(conn);
    knw_sasl_free(conn);
    knw_txq_destroy(&conn->tx);
    knw_rx_destroy(&conn->rx);
    knw_iftab_destroy(&conn->inflight);
    kn_free(conn->host);
    kn_free(conn);
}

static void enter_backoff(knw_conn *conn, int64_t now_ms) {
    knw_client *c = conn->client;
    int attempts = conn->connect_failures > 0 ? conn->connect_failures - 1 : 0;
    conn->state = KNW_CS_BACKOFF;
    conn->state_deadline_ms = now_ms + knw_backoff_ms(&c->reconnect_backoff, attempts, -1);
}

/* Every address failed (or resolution did, or the handshake): count
 * the failure, back off, and fail what waits for this node so the
 * modules can re-route (a request for "any" broker keeps waiting in the
 * client's queue instead). */
static void connect_failed(knw_conn *conn, int err, const char *errstr, int64_t now_ms) {
    knw_client *c = conn->client;
    char nb[128];
    knw_conn_name(conn, nb, sizeof nb);
    teardown(conn);
    fail_inflight(conn, 0, KN_ERR__TRANSPORT, errstr);
    conn->connect_failures++;
    conn->last_err_code = err;
    snprintf(conn->last_err, sizeof conn->last_err, "%s (broker %d%s)", errstr, conn->node_id,
             conn->bootstrap ? ", bootstrap" : "");
    snprintf(c->last_connect_err, sizeof c->last_connect_err, "%s", conn->last_err);
    KNW_STAT_ADD(c, connect_failures, 1);
    kn_log(&c->log, conn->connect_failures == 1 ? KN_LOG_WARN : KN_LOG_DEBUG,
           "connection to %s could not be established: %s", nb, errstr);
    knw_req *r;
    while ((r = knw_reqq_pop(&conn->pending)))
        knw_req_fail(c, r,
                     err == KN_ERR__RESOLVE || err == KN_ERR__AUTHENTICATION || err == KN_ERR__SSL
                         ? err
                         : KN_ERR__TRANSPORT,
                     "%s", conn->last_err);
    enter_backoff(conn, now_ms);
    /* A TLS failure will not cure itself by waiting: requests for any
     * broker fail with it now instead of at their timeout. */
    if (err == KN_ERR__SSL)
        knw_client_connect_fatal(c, err, conn->last_err);
    knw_md_on_disconnect(c, conn);
}

static int64_t setup_timeout(knw_conn *conn) {
    return knw_backoff_ms(&conn->client->setup_backoff, conn->connect_failures, -1);
}

static void on_connected(knw_conn *conn, int64_t now_ms);

/* Tries addresses from addr_idx on; the first that starts connecting
 * wins. */
static void try_addrs(knw_conn *conn, int64_t now_ms, const char *prev_err, int prev_code) {
    knw_client *c = conn->client;
    char err[300];
    snprintf(err, sizeof err, "%s", prev_err ? prev_err : "no address");
    knw_transport_opts opts = {c->set.send_buffer_bytes, c->set.receive_buffer_bytes,
                               c->set.keepalive,         conn->host,
                               c->set.tls_ctx,           c->set.tls_verify_host};
    for (; conn->addr_idx < conn->addrs.count; conn->addr_idx++) {
        const knw_addr *a = &conn->addrs.addrs[conn->addr_idx];
        if (conn->tp.ops->connect(&conn->tp, a, &opts, err, sizeof err) == 0) {
            conn->state = KNW_CS_CONNECTING;
            conn->state_deadline_ms = now_ms + setup_timeout(conn);
            if (conn->tp.connected)
                on_connected(conn, now_ms);
            return;
        }
        prev_code = 0; /* err now holds this address's own failure */
    }
    /* No address answered: the next attempt resolves the name again (a
     * broker that moved is found without waiting out the cache). */
    knw_resolver_forget(&c->resolver, conn->host, conn->port);
    connect_failed(conn, prev_code ? prev_code : KN_ERR__TRANSPORT, err, now_ms);
}

void knw_conn_connect(knw_conn *conn, int64_t now_ms) {
    char err[200];
    /* A client that failed authentication never connects again. */
    if (atomic_load(&conn->client->fatal_err))
        return;
    knw_addrs_free(&conn->addrs);
    /* Numeric and cached answers come back at once; anything else is
     * resolved on the resolver thread, never here (resolver.h). */
    int rc = knw_resolver_lookup(&conn->client->resolver, conn->host, conn->port, now_ms, &conn->addrs,
                                 &conn->resolve_id, err, sizeof err);
    if (rc == KNW_RESOLVE_PENDING) {
        conn->state = KNW_CS_RESOLVING;
        conn->state_deadline_ms = now_ms + setup_timeout(conn);
        return;
    }
    if (rc) {
        connect_failed(conn, rc, err, now_ms);
        return;
    }
    conn->addr_idx = 0;
    try_addrs(conn, now_ms, NULL, 0);
}

void knw_conn_resolved(knw_conn *conn, int err, const char *errstr, knw_addrs *addrs, int64_t now_ms) {
    conn->resolve_id = 0;
    if (err) {
        connect_failed(conn, err == KN_ERR__NOMEM ? KN_ERR__RESOLVE : err, errstr, now_ms);
        return;
    }
    knw_addrs_free(&conn->addrs);
    conn->addrs = *addrs;
    addrs->addrs = NULL;
    addrs->count = 0;
    conn->addr_idx = 0;
    try_addrs(conn, now_ms, NULL, 0);
}

static void send_handshake(knw_conn *conn, int64_t now_ms) {
    knw_client *c = conn->client;
    knw_req *r =
        knw_req_new(c, conn->node_id, kp_api_get(KP_API_API_VERSIONS), &conn->hs_body, -1, NULL, NULL);
    if (!r) {
        knw_conn_close(conn, 0, KN_ERR__TRANSPORT, "out of memory", now_ms);
        return;
    }
    r->handshake = true;
    r->version = conn->hs_version;
    knw_req_send(c, conn, r, now_ms);
}

static void on_connected(knw_conn *conn, int64_t now_ms) {
    knw_client *c = conn->client;
    KNW_STAT_ADD(c, connects, 1);
    knw_net_connection(c, true, now_ms);
    char nb[128], as[64];
    kn_log(&c->log, KN_LOG_DEBUG, "connected to %s at %s", knw_conn_name(conn, nb, sizeof nb),
           knw_addr_str(&conn->addrs.addrs[conn->addr_idx], as, sizeof as));
    conn->state = KNW_CS_APIVERSIONS;
    conn->last_active_ms = now_ms;
    const kp_api *av = kp_api_get(KP_API_API_VERSIONS);
    conn->hs_version = av->max_stable_version;
    send_handshake(conn, now_ms);
}

void knw_conn_close(knw_conn *conn, int first_err, int err, const char *why, int64_t now_ms) {
    knw_client *c = conn->client;
    bool was_up =
        conn->state == KNW_CS_READY || conn->state == KNW_CS_APIVERSIONS || conn->state == KNW_CS_SASL;
    char nb[128];
    knw_conn_name(conn, nb, sizeof nb);
    if (conn->state == KNW_CS_APIVERSIONS || conn->state == KNW_CS_SASL) {
        /* A broker that cannot finish the handshake is treated like one
         * that refuses connections: backoff grows, waiters fail. */
        KNW_STAT_ADD(c, disconnects, 1);
        fail_inflight(conn, first_err, err, why);
        connect_failed(conn, err, why, now_ms);
        return;
    }
    /* Counted before the callbacks run, so a caller woken by one sees
     * the disconnect in the stats. */
    if (was_up) {
        KNW_STAT_ADD(c, disconnects, 1);
        knw_net_connection(c, false, now_ms);
    }
    teardown(conn);
    fail_inflight(conn, first_err, err, why);
    if (was_up) {
        kn_log(&c->log, first_err == KN_ERR__PROTOCOL ? KN_LOG_ERROR : KN_LOG_INFO,
               "disconnected from %s: %s", nb, why);
        snprintf(conn->last_err, sizeof conn->last_err, "%s", why);
        knw_md_on_disconnect(c, conn);
    }
    enter_backoff(conn, now_ms);
}

/* Closes an idle connection without backoff (connections.max.idle.ms,
 * retired bootstrap entries). */
static void close_idle(knw_conn *conn) {
    char nb[128];
    kn_log(&conn->client->log, KN_LOG_DEBUG, "closing idle connection to %s",
           knw_conn_name(conn, nb, sizeof nb));
    teardown(conn);
    conn->state = KNW_CS_DOWN;
}

static void protocol_error(knw_conn *conn, const char *msg, int64_t now_ms) {
    KNW_STAT_ADD(conn->client, protocol_errors, 1);
    knw_conn_close(conn, KN_ERR__PROTOCOL, KN_ERR__TRANSPORT, msg, now_ms);
}

/* The ApiVersions answer: negotiate every API, or retry with the
 * version the broker says it supports (KIP-511), or give up. */
static void handle_apiversions(knw_conn *conn, knw_req *r, uint8_t *frame, size_t len, int64_t now_ms) {
    knw_client *c = conn->client;
    const kp_api *av = r->api;
    char err[256];
    kn_arena arena;
    kn_arena_init(&arena, 0);
    kp_ApiVersionsResponse resp;
    kp_ApiVersionsResponse_init(&resp);
    kn_rd rd;
    kn_rd_init(&rd, frame, len);
    int32_t corr;
    int rc = kp_response_header_decode(&rd, KP_API_API_VERSIONS, r->version, &corr);
    size_t body_off = rd.off;
    if (!rc)
        rc = kp_ApiVersionsResponse_decode(&rd, &arena, &resp, r->version);
    if ((rc && rc != KN_ERR__NOMEM) || resp.error_code == KN_ERR_UNSUPPORTED_VERSION) {
        /* A broker that does not know our version answers in v0 with
         * UNSUPPORTED_VERSION and its own ApiVersions range. */
        kn_rd r0;
        kn_rd_init(&r0, frame + body_off, len - body_off);
        kp_ApiVersionsResponse v0;
        kp_ApiVersionsResponse_init(&v0);
        if (kp_ApiVersionsResponse_decode(&r0, &arena, &v0, 0) == 0 && kn_rd_remaining(&r0) == 0 &&
            v0.error_code == KN_ERR_UNSUPPORTED_VERSION) {
            int16_t theirs = -1;
            for (int32_t i = 0; i < v0.api_keys.count; i++)
                if (v0.api_keys.items[i].api_key == KP_API_API_VERSIONS)
                    theirs = v0.api_keys.items[i].max_version;
            kn_arena_destroy(&arena);
            knw_body_free(frame);
            int16_t next = theirs < av->max_stable_version ? theirs : av->max_stable_version;
            if (theirs >= 0 && next < r->version && next >= av->min_version) {
                knw_req_free(r);
                conn->hs_version = next;
                send_handshake(conn, now_ms);
                return;
            }
            knw_req_free(r);
            snprintf(err, sizeof err, "ApiVersions: the broker supports up to v%d, we need v%d..v%d", theirs,
                     av->min_version, av->max_stable_version);
            knw_conn_close(conn, 0, KN_ERR__UNSUPPORTED_VERSION, err, now_ms);
            return;
        }
    }
    if (rc) {
        if (rd.err)
            kp_proto_errstr(err, sizeof err, av->name, r->version, "response", &rd);
        else
            snprintf(err, sizeof err, "ApiVersions v%d response: %s", r->version, kn_err_name(rc));
        kn_arena_destroy(&arena);
        knw_body_free(frame);
        knw_req_free(r);
        protocol_error(conn, err, now_ms);
        return;
    }
    if (resp.error_code) {
        snprintf(err, sizeof err, "ApiVersions failed: %s", kn_err_name(resp.error_code));
        kn_arena_destroy(&arena);
        knw_body_free(frame);
        knw_req_free(r);
        knw_conn_close(conn, 0, KN_ERR__TRANSPORT, err, now_ms);
        return;
    }
    for (int i = 0; i <= KP_API_KEY_MAX; i++)
        conn->vmin[i] = conn->vmax[i] = -1;
    for (int32_t i = 0; i < resp.api_keys.count; i++) {
        const kp_ApiVersionsResponse_ApiVersion *v = &resp.api_keys.items[i];
        const kp_api *api = v->api_key >= 0 && v->api_key <= KP_API_KEY_MAX ? kp_api_get(v->api_key) : NULL;
        if (!api)
            continue;
        int16_t lo = v->min_version > api->min_version ? v->min_version : api->min_version;
        int16_t hi = v->max_version < api->max_stable_version ? v->max_version : api->max_stable_version;
        if (lo <= hi) {
            conn->vmin[v->api_key] = lo;
            conn->vmax[v->api_key] = hi;
        }
    }
    knw_features_update(c, &resp);
    kn_arena_destroy(&arena);
    knw_body_free(frame);
    knw_req_free(r);
    if (c->set.sasl) {
        conn->state = KNW_CS_SASL;
        knw_sasl_begin(conn, false, now_ms);
        return;
    }
    knw_conn_ready(conn, now_ms);
}

void knw_conn_auth_failed(knw_conn *conn, int err, const char *why, int64_t now_ms) {
    /* Closed (and counted in the stats) before the client turns fatal,
     * so whoever sees the fatal error sees the failed connect too. */
    knw_client *c = conn->client;
    knw_conn_close(conn, 0, err, why, now_ms);
    knw_client_set_fatal(c, err, why);
}

void knw_conn_ready(knw_conn *conn, int64_t now_ms) {
    knw_client *c = conn->client;
    conn->state = KNW_CS_READY;
    conn->connect_failures = 0;
    conn->ready_since_ms = conn->last_active_ms = now_ms;
    conn->last_err[0] = 0;
    atomic_store(&conn->ready, true);
    char nb[128];
    kn_log(&c->log, KN_LOG_DEBUG, "%s ready (Metadata v%d, Produce v%d, Fetch v%d)",
           knw_conn_name(conn, nb, sizeof nb), conn->vmax[KP_API_METADATA], conn->vmax[KP_API_PRODUCE],
           conn->vmax[KP_API_FETCH]);
}

typedef struct frame_ctx {
    knw_conn *conn;
    int64_t now_ms;
} frame_ctx;

static int on_frame(void *ctx, uint8_t *frame, size_t len) {
    frame_ctx *fc = ctx;
    knw_conn *conn = fc->conn;
    knw_client *c = conn->client;
    int32_t corr = (int32_t)(((uint32_t)frame[0] << 24) | ((uint32_t)frame[1] << 16) |
                             ((uint32_t)frame[2] << 8) | frame[3]);
    int32_t expected;
    knw_req *r = knw_iftab_take(&conn->inflight, corr, &expected);
    conn->last_active_ms = fc->now_ms;
    if (!r) {
        char msg[256];
        const knw_req *head = knw_iftab_at(&conn->inflight, 0);
        if (head)
            snprintf(msg, sizeof msg,
                     "protocol error: %s v%d response: unexpected correlation id %d (expected %d) at "
                     "byte offset 0",
                     head->api->name, head->version, corr, expected);
        else
            snprintf(msg, sizeof msg,
                     "protocol error: response with correlation id %d but no request in flight", corr);
        knw_body_free(frame);
        protocol_error(conn, msg, fc->now_ms);
        return 1;
    }
    atomic_store(&conn->inflight_n, conn->inflight.count);
    if (r->handshake) {
        handle_apiversions(conn, r, frame, len, fc->now_ms);
        return conn->state == KNW_CS_READY || conn->state == KNW_CS_APIVERSIONS || conn->state == KNW_CS_SASL
                   ? 0
                   : 1;
    }
    char err[256];
    int rc = knw_req_handle_response(c, conn, r, frame, len, err, sizeof err);
    if (rc) {
        KNW_STAT_ADD(c, protocol_errors, 1);
        char nb[128];
        kn_log(&c->log, KN_LOG_ERROR, "%s from %s", err, knw_conn_name(conn, nb, sizeof nb));
        knw_req_fail(c, r, KN_ERR__PROTOCOL, "%s", err);
        char why[300];
        snprintf(why, sizeof why, "closing after a malformed response: %s", err);
        knw_conn_close(conn, 0, KN_ERR__TRANSPORT, why, fc->now_ms);
        return 1;
    }
    /* The callback may have closed this connection (e.g. metadata moved
     * the broker, or SASL failed): stop reading from it. */
    return conn->state == KNW_CS_READY || conn->state == KNW_CS_SASL ? 0 : 1;
}

static ssize_t conn_read(void *ctx, void *buf, size_t len) {
    knw_transport *tp = ctx;
    return tp->ops->read(tp, buf, len);
}

static ssize_t conn_writev(void *ctx, const struct iovec *iov, int iovcnt) {
    knw_transport *tp = ctx;
    return tp->ops->writev(tp, iov, iovcnt);
}

static void flush(knw_conn *conn, int64_t now_ms) {
    if (knw_txq_empty(&conn->tx))
        return;
    char err[200];
    size_t n = 0;
    int rc = knw_txq_flush(&conn->tx, conn_writev, &conn->tp, &n, err, sizeof err);
    KNW_STAT_ADD(conn->client, bytes_sent, n);
    if (n)
        conn->last_active_ms = now_ms;
    if (rc && conn->tp.err_code)
        knw_conn_close(conn, 0, conn->tp.err_code, conn->tp.err, now_ms); /* e.g. a TLS alert */
    else if (rc)
        knw_conn_close(conn, 0, KN_ERR__TRANSPORT, err, now_ms);
}

/* A plaintext connection whose first response starts like a TLS
 * record (alert 0x15 or handshake 0x16, version 3.x): the port is a TLS
 * listener. Its "size" is then absurd, so the framer stops at once. */
static bool tls_answer(const knw_conn *conn) {
    return !conn->client->set.tls && conn->state == KNW_CS_APIVERSIONS && conn->rx.frame_no == 0 &&
           conn->rx.hdr_got >= 2 && (conn->rx.hdr[0] == 0x15 || conn->rx.hdr[0] == 0x16) &&
           conn->rx.hdr[1] == 0x03;
}

void knw_conn_io(knw_conn *conn, short revents, int64_t now_ms) {
    if (!revents && !knw_transport_pending(&conn->tp))
        return;
    if (conn->state == KNW_CS_CONNECTING) {
        char err[256];
        int rc = conn->tp.ops->connect_step(&conn->tp, err, sizeof err);
        if (rc == 1) {
            on_connected(conn, now_ms);
        } else if (rc < 0) {
            char full[300], as[64];
            int code = conn->tp.err_code; /* KN_ERR__SSL from the TLS handshake */
            snprintf(full, sizeof full, "connect to %s: %s",
                     knw_addr_str(&conn->addrs.addrs[conn->addr_idx], as, sizeof as), err);
            conn->tp.ops->close(&conn->tp);
            if (code == KN_ERR__SSL) {
                /* The broker was reached and the TLS handshake failed
                 * (an untrusted or misnamed certificate, a refused
                 * client certificate): decisive, as in Java. Trying the
                 * name's other addresses would only replace that reason
                 * with theirs (localhost's ::1 refusing, say) and wait
                 * out the request timeout instead of failing fast. */
                connect_failed(conn, code, full, now_ms);
                return;
            }
            conn->addr_idx++;
            try_addrs(conn, now_ms, full, code);
        }
        return;
    }
    if (conn->state != KNW_CS_READY && conn->state != KNW_CS_APIVERSIONS && conn->state != KNW_CS_SASL)
        return;
    /* Bytes a TLS layer already decrypted are invisible to poll(2). */
    if ((revents & (POLLIN | POLLHUP | POLLERR)) || knw_transport_pending(&conn->tp)) {
        char err[256];
        size_t n = 0;
        frame_ctx fc = {conn, now_ms};
        int rc = knw_rx_pump(&conn->rx, conn_read, &conn->tp, on_frame, &fc, &n, err, sizeof err);
        KNW_STAT_ADD(conn->client, bytes_received, n);
        if (rc == KNW_RX_STOPPED)
            return; /* on_frame closed the connection */
        if (rc == KNW_RX_EOF) {
            knw_conn_close(conn, 0, KN_ERR__TRANSPORT, "connection closed by the broker", now_ms);
            return;
        }
        if (rc != KNW_RX_STOPPED && tls_answer(conn)) {
            knw_conn_close(
                conn, 0, KN_ERR__SSL,
                "the broker answered with TLS: this listener needs security.protocol=SSL (or SASL_SSL)",
                now_ms);
            return;
        }
        if (rc && conn->tp.err_code) {
            /* The transport's own reason (TLS alert, e.g. a client
             * certificate the broker refused). */
            knw_conn_close(conn, 0, conn->tp.err_code, conn->tp.err, now_ms);
            return;
        }
        if (rc == KN_ERR__PROTOCOL) {
            char msg[400];
            const knw_req *head = knw_iftab_at(&conn->inflight, 0);
            snprintf(msg, sizeof msg, "protocol error: %s v%d response: %s",
                     head ? head->api->name : "(none in flight)", head ? head->version : -1, err);
            protocol_error(conn, msg, now_ms);
            return;
        }
        if (rc) {
            knw_conn_close(conn, 0, KN_ERR__TRANSPORT, err, now_ms);
            return;
        }
    }
    if ((revents & POLLOUT) &&
        (conn->state == KNW_CS_READY || conn->state == KNW_CS_APIVERSIONS || conn->state == KNW_CS_SASL))
        flush(conn, now_ms);
}

short knw_conn_events(knw_conn *conn) {
    switch (conn->state) {
    case KNW_CS_CONNECTING:
        return conn->tp.ops->events(&conn->tp, false);
    case KNW_CS_APIVERSIONS:
    case KNW_CS_SASL:
    case KNW_CS_READY:
        return conn->tp.ops->events(&conn->tp, !knw_txq_empty(&conn->tx));
    default:
        return 0;
    }
}

static int64_t service(knw_conn *conn, int64_t now_ms);

int64_t knw_conn_service(knw_conn *conn, int64_t now_ms) {
    /* An exchange waiting for the application's OAUTHBEARER token. */
    int64_t sasl_at = conn->state == KNW_CS_SASL || conn->state == KNW_CS_READY ? knw_sasl_service(conn, now_ms)
                                                                                 : INT64_MAX;
    int64_t at = service(conn, now_ms);
    return sasl_at < at ? sasl_at : at;
}

static int64_t service(knw_conn *conn, int64_t now_ms) {
    knw_client *c = conn->client;
    if (atomic_exchange(&conn->disconnect_requested, false) &&
        (conn->state == KNW_CS_READY || conn->state == KNW_CS_APIVERSIONS || conn->state == KNW_CS_SASL ||
         conn->state == KNW_CS_CONNECTING || conn->state == KNW_CS_RESOLVING)) {
        if (conn->state == KNW_CS_CONNECTING || conn->state == KNW_CS_RESOLVING) {
            teardown(conn);
            conn->resolve_id = 0; /* a late answer is only cached */
            conn->state = KNW_CS_DOWN;
        } else {
            knw_conn_close(conn, 0, KN_ERR__TRANSPORT, "disconnect requested", now_ms);
        }
    }
    switch (conn->state) {
    case KNW_CS_BACKOFF:
        if (now_ms < conn->state_deadline_ms)
            return conn->state_deadline_ms;
        conn->state = KNW_CS_DOWN;
        /* fall through */
    case KNW_CS_DOWN:
        if (conn->pending.count)
            knw_conn_connect(conn, now_ms);
        break;
    case KNW_CS_RESOLVING:
        if (now_ms >= conn->state_deadline_ms) {
            /* Bounded like a connect; the lookup goes on and its answer
             * is cached for the next attempt. */
            char err[200];
            snprintf(err, sizeof err, "resolve %s:%d: no answer within %lld ms", conn->host, conn->port,
                     (long long)setup_timeout(conn));
            conn->resolve_id = 0;
            connect_failed(conn, KN_ERR__RESOLVE, err, now_ms);
        }
        break;
    case KNW_CS_CONNECTING:
        if (now_ms >= conn->state_deadline_ms) {
            char err[200], as[64];
            snprintf(err, sizeof err, "connect to %s: connection setup timed out after %lld ms",
                     knw_addr_str(&conn->addrs.addrs[conn->addr_idx], as, sizeof as),
                     (long long)setup_timeout(conn));
            conn->tp.ops->close(&conn->tp);
            conn->addr_idx++;
            try_addrs(conn, now_ms, err, 0);
        }
        break;
    default:
        break;
    }
    if (conn->state == KNW_CS_READY) {
        /* KIP-368: once the session nears its end, the next request
         * waits for a re-authentication on this connection (as Java's
         * client begins one before its next send). */
        if (conn->pending.count && now_ms >= knw_sasl_reauth_at(conn))
            knw_sasl_begin(conn, true, now_ms);
        /* KIP-219: a broker that asked for a pause (throttle.c) gets no
         * new request until it is over; the queue waits. */
        bool throttled = now_ms < conn->throttle_until_ms;
        while (!throttled && conn->pending.count && !knw_iftab_full(&conn->inflight) &&
               conn->state == KNW_CS_READY && !knw_sasl_reauth_active(conn))
            knw_req_send(c, conn, knw_reqq_pop(&conn->pending), now_ms);
        if (conn->state == KNW_CS_READY)
            flush(conn, now_ms);
        if (throttled && conn->pending.count && conn->state == KNW_CS_READY)
            return conn->throttle_until_ms;
    }
    if (conn->state == KNW_CS_READY && conn->inflight.count == 0 && conn->pending.count == 0 &&
        knw_txq_empty(&conn->tx)) {
        if (conn->retired) {
            close_idle(conn);
        } else if (c->set.connections_max_idle_ms > 0) {
            int64_t idle_at = conn->last_active_ms + c->set.connections_max_idle_ms;
            if (now_ms >= idle_at)
                close_idle(conn);
            else
                return idle_at;
        }
    }
    if (conn->state == KNW_CS_CONNECTING || conn->state == KNW_CS_BACKOFF || conn->state == KNW_CS_RESOLVING)
        return conn->state_deadline_ms;
    return INT64_MAX;
}
