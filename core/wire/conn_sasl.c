/*
 * conn_sasl.c: the SASL state machine of one connection (conn_sasl.h),
 * over the mechanisms of core/wire/sasl/.
 *
 *   APIVERSIONS done -> SaslHandshake v1(mechanism)
 *     -> SaslAuthenticate(token) -> ... -> mechanism says done -> READY
 *
 * Its requests are ordinary knw_req entries in the connection's
 * in-flight ring, sent straight on the connection (not through the
 * pending queue), completed through callbacks on the network thread.
 *
 * Failures: a broker's SaslAuthenticate error, a mechanism not enabled
 * on the broker, or a server that fails the mechanism's checks (SCRAM
 * nonce, signature, iteration count) is an authentication failure,
 * fatal for the client (knw_conn_auth_failed) as Java's
 * SaslAuthenticationException is; a malformed frame is a protocol error
 * (the connection is closed and retried after backoff, conn.c).
 *
 * Re-authentication (KIP-368): a SaslAuthenticate v1+ answer carries
 * session_lifetime_ms; the connection re-authenticates at a random 85 to
 * 95 % of it (Java's window), on the same connection, when it next has a
 * request to send. Requests already in flight keep their place in the
 * ring: Kafka answers in order, so their responses arrive (and complete
 * normally) before the SaslHandshake answer; new requests wait in the
 * pending queue until the exchange is done, so nothing is reordered or
 * failed.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <openssl/crypto.h>

#include "error.h"
#include "kn_alloc.h"
#include "proto/generated/kp_apis.h"
#include "wire/conn_sasl.h"
#include "wire/sasl/sasl.h"
#include "wire/wire_int.h"

/* ---- the exchange ---- */

static void clear_token(knw_sasl_session *s) {
    if (s->token.ptr) {
        OPENSSL_cleanse(s->token.ptr, s->token.len);
        kn_free(s->token.ptr);
    }
    s->token.ptr = NULL;
    s->token.len = 0;
}

static void drop_mech(knw_sasl_session *s) {
    if (s->mech && s->state)
        s->mech->free(s->state);
    s->state = NULL;
    clear_token(s);
}

void knw_sasl_reset(knw_conn *conn) {
    knw_sasl_session *s = conn->sasl;
    if (!s)
        return;
    drop_mech(s);
    s->active = s->reauth = s->waiting = false;
    s->reauth_at_ms = 0;
    s->rounds = 0;
}

void knw_sasl_free(knw_conn *conn) {
    knw_sasl_reset(conn);
    kn_free(conn->sasl);
    conn->sasl = NULL;
}

bool knw_sasl_reauth_active(const knw_conn *conn) {
    return conn->sasl && conn->sasl->active && conn->sasl->reauth;
}

int64_t knw_sasl_reauth_at(const knw_conn *conn) {
    const knw_sasl_session *s = conn->sasl;
    return s && !s->active && s->reauth_at_ms > 0 ? s->reauth_at_ms : INT64_MAX;
}

static void on_handshake(knw_client *c, knw_resp *resp, void *opaque);
static void on_authenticate(knw_client *c, knw_resp *resp, void *opaque);
static void start_mech(knw_conn *conn, int64_t now_ms);

static void auth_failed(knw_conn *conn, const char *what, const char *detail, int64_t now_ms) {
    char nb[128], msg[512];
    knw_conn_name(conn, nb, sizeof nb);
    snprintf(msg, sizeof msg, "%s (%s, %s): %.300s", what, conn->sasl->mech->name, nb, detail);
    knw_conn_auth_failed(conn, KN_ERR__AUTHENTICATION, msg, now_ms);
}

static bool send_req(knw_conn *conn, int16_t api_key, const void *body, knw_cb *cb, int64_t now_ms) {
    knw_client *c = conn->client;
    knw_req *r = knw_req_new(c, conn->node_id, kp_api_get(api_key), body, -1, cb, conn);
    if (!r) {
        knw_conn_close(conn, 0, KN_ERR__TRANSPORT, "out of memory starting SASL authentication", now_ms);
        return false;
    }
    /* v1 of both: v0 SaslHandshake means raw (unframed) tokens. */
    r->min_version = 1;
    /* The ring keeps one slot beyond the in-flight limit for this (see
     * knw_conn_new): a re-authentication must not wait for a full
     * pipeline to drain. One SASL request is in flight at a time. */
    conn->inflight.limit++;
    knw_req_send(c, conn, r, now_ms);
    conn->inflight.limit--;
    return true;
}

void knw_sasl_begin(knw_conn *conn, bool reauth, int64_t now_ms) {
    knw_client *c = conn->client;
    char err[256];
    if (!conn->sasl && !(conn->sasl = kn_calloc(1, sizeof *conn->sasl))) {
        knw_conn_close(conn, 0, KN_ERR__TRANSPORT, "out of memory starting SASL authentication", now_ms);
        return;
    }
    knw_sasl_session *s = conn->sasl;
    drop_mech(s);
    s->mech = c->set.sasl->mech;
    s->active = true;
    s->reauth = reauth;
    s->rounds = 0;
    s->started_ms = now_ms;
    s->waiting = false;
    if (conn->vmax[KP_API_SASL_HANDSHAKE] < 1 || conn->vmax[KP_API_SASL_AUTHENTICATE] < 1) {
        /* Checked here rather than failing inside knw_req_send, whose
         * error would reach a callback that cannot tell it apart from a
         * closing connection. */
        snprintf(err, sizeof err, "the broker does not support SaslHandshake v1 and SaslAuthenticate v1");
        knw_conn_close(conn, 0, KN_ERR__UNSUPPORTED_VERSION, err, now_ms);
        return;
    }
    kp_SaslHandshakeRequest_init(&s->hs);
    s->hs.mechanism = kn_str_c(s->mech->name);
    char nb[128];
    kn_log(&c->log, KN_LOG_DEBUG, "%s: %s with SASL %s", knw_conn_name(conn, nb, sizeof nb),
           reauth ? "re-authenticating" : "authenticating", s->mech->name);
    send_req(conn, KP_API_SASL_HANDSHAKE, &s->hs, on_handshake, now_ms);
}

/* Callbacks are for this session only while it is the exchange in
 * progress; an error response means the connection is closing (its
 * in-flight requests fail), which conn.c already handles. */
static bool live(knw_conn *conn, knw_resp *resp) {
    return !resp->err && conn->sasl && conn->sasl->active &&
           (conn->state == KNW_CS_SASL || (conn->state == KNW_CS_READY && conn->sasl->reauth));
}

static void send_token(knw_conn *conn, int64_t now_ms) {
    knw_sasl_session *s = conn->sasl;
    kp_SaslAuthenticateRequest_init(&s->auth);
    s->auth.auth_bytes.ptr = s->token.ptr;
    s->auth.auth_bytes.len = (int32_t)s->token.len;
    s->rounds++;
    send_req(conn, KP_API_SASL_AUTHENTICATE, &s->auth, on_authenticate, now_ms);
}

static void on_handshake(knw_client *c, knw_resp *resp, void *opaque) {
    knw_conn *conn = opaque;
    int64_t now_ms = knw_now_ms();
    if (!live(conn, resp)) {
        knw_resp_free(resp);
        return;
    }
    knw_sasl_session *s = conn->sasl;
    const kp_SaslHandshakeResponse *hr = resp->body;
    char err[512];
    if (hr->error_code) {
        /* The broker's enabled mechanisms, as Java lists them. */
        char list[256];
        size_t off = 0;
        list[0] = 0;
        for (int32_t i = 0; i < hr->mechanisms.count && off + 1 < sizeof list; i++)
            off += (size_t)snprintf(list + off, sizeof list - off, "%s%.*s", i ? ", " : "",
                                    (int)hr->mechanisms.items[i].len, hr->mechanisms.items[i].ptr);
        if (hr->error_code == KN_ERR_UNSUPPORTED_SASL_MECHANISM)
            snprintf(err, sizeof err,
                     "Client SASL mechanism '%s' not enabled in the server, enabled mechanisms are [%s]",
                     s->mech->name, list);
        else
            snprintf(err, sizeof err, "SaslHandshake failed: %s (enabled mechanisms [%s])",
                     kn_err_name(hr->error_code), list);
        knw_resp_free(resp);
        auth_failed(conn, "SASL handshake failed", err, now_ms);
        return;
    }
    knw_resp_free(resp);
    s->wait_deadline_ms = now_ms + c->set.setup_timeout_max_ms;
    start_mech(conn, now_ms);
}

/* The mechanism's first token; an OAUTHBEARER token from the
 * application may not be there yet: the exchange then waits
 * (knw_sasl_service) and the application's next blocking call runs the
 * callback and wakes the network thread. */
static void start_mech(knw_conn *conn, int64_t now_ms) {
    knw_client *c = conn->client;
    knw_sasl_session *s = conn->sasl;
    char err[512];
    /* After KNW_SASL_WAIT the mechanism gets its own state back. */
    if (!s->waiting)
        drop_mech(s);
    int rc = s->mech->start(c->set.sasl, conn->host, &s->state, &s->token, err, sizeof err);
    s->waiting = rc == KNW_SASL_WAIT;
    if (s->waiting)
        return;
    if (rc) {
        if (rc == KN_ERR__NOMEM)
            knw_conn_close(conn, 0, KN_ERR__TRANSPORT, err, now_ms);
        else
            auth_failed(conn, "SASL authentication failed", err, now_ms);
        return;
    }
    send_token(conn, now_ms);
}

int64_t knw_sasl_service(knw_conn *conn, int64_t now_ms) {
    knw_sasl_session *s = conn->sasl;
    if (!s || !s->active || !s->waiting)
        return INT64_MAX;
    start_mech(conn, now_ms);
    if (!conn->sasl || !s->waiting)
        return INT64_MAX;
    if (now_ms >= s->wait_deadline_ms) {
        char msg[300];
        if (s->mech == &knw_sasl_gssapi)
            snprintf(msg, sizeof msg, "GSSAPI: no Kerberos ticket after %lld ms (is the KDC answering?)",
                     (long long)conn->client->set.setup_timeout_max_ms);
        else
            snprintf(msg, sizeof msg,
                     "no OAUTHBEARER token after %lld ms: the token callback runs inside the application's poll, "
                     "flush, send and admin calls, and none ran it",
                     (long long)conn->client->set.setup_timeout_max_ms);
        knw_conn_close(conn, 0, KN_ERR__TRANSPORT, msg, now_ms);
        return INT64_MAX;
    }
    return s->wait_deadline_ms;
}

static void on_authenticate(knw_client *c, knw_resp *resp, void *opaque) {
    knw_conn *conn = opaque;
    int64_t now_ms = knw_now_ms();
    if (!live(conn, resp)) {
        knw_resp_free(resp);
        return;
    }
    knw_sasl_session *s = conn->sasl;
    const kp_SaslAuthenticateResponse *ar = resp->body;
    char err[512];
    clear_token(s);
    if (ar->error_code) {
        /* The broker's own reason, as Java surfaces it. */
        if (ar->error_message.len > 0)
            snprintf(err, sizeof err, "%.*s", (int)ar->error_message.len, ar->error_message.ptr);
        else
            snprintf(err, sizeof err, "%s", kn_err_name(ar->error_code));
        knw_resp_free(resp);
        auth_failed(conn, "SASL authentication failed", err, now_ms);
        return;
    }
    if (ar->auth_bytes.len > KNW_SASL_MAX_TOKEN_BYTES || s->rounds > KNW_SASL_MAX_ROUNDS) {
        snprintf(err, sizeof err, "protocol error: SaslAuthenticate v%d response: %s", resp->api_version,
                 s->rounds > KNW_SASL_MAX_ROUNDS ? "too many SASL rounds" : "server token too large");
        knw_resp_free(resp);
        KNW_STAT_ADD(c, protocol_errors, 1);
        knw_conn_close(conn, KN_ERR__PROTOCOL, KN_ERR__TRANSPORT, err, now_ms);
        return;
    }
    int64_t lifetime = ar->session_lifetime_ms;
    int rc =
        s->mech->step(s->state, ar->auth_bytes.len > 0 ? ar->auth_bytes.ptr : (const uint8_t *)"",
                      ar->auth_bytes.len > 0 ? (size_t)ar->auth_bytes.len : 0, &s->token, err, sizeof err);
    knw_resp_free(resp);
    if (rc == KNW_SASL_SEND) {
        send_token(conn, now_ms);
        return;
    }
    if (rc != KNW_SASL_DONE) {
        if (rc == KN_ERR__NOMEM)
            knw_conn_close(conn, 0, KN_ERR__TRANSPORT, err, now_ms);
        else
            auth_failed(conn, "SASL authentication failed", err, now_ms);
        return;
    }
    drop_mech(s);
    bool reauth = s->reauth;
    s->active = s->reauth = false;
    s->session_lifetime_ms = lifetime;
    /* Java: re-authenticate at a random 85..95 % of the session. */
    s->reauth_at_ms =
        lifetime > 0
            ? now_ms + (int64_t)((double)lifetime * (0.85 + 0.10 * (double)random() / (double)RAND_MAX))
            : 0;
    char nb[128];
    kn_log(&c->log, KN_LOG_DEBUG, "%s: %s as SASL %s in %lld ms (session lifetime %lld ms)",
           knw_conn_name(conn, nb, sizeof nb), reauth ? "re-authenticated" : "authenticated", s->mech->name,
           (long long)(now_ms - s->started_ms), (long long)lifetime);
    if (reauth) {
        s->reauths++;
        KNW_STAT_ADD(c, reauthentications, 1);
        /* The requests held back go out from knw_conn_service, which
         * the loop runs right after this round of I/O. */
    } else {
        knw_conn_ready(conn, now_ms);
    }
}
