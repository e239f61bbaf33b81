/*
 * conn_sasl.h: the SASL exchange of one connection (conn_sasl.c), on
 * the network thread: SaslHandshake, then SaslAuthenticate rounds of
 * the mechanism (core/wire/sasl/), and KIP-368 re-authentication.
 */
#ifndef KN_WIRE_CONN_SASL_H
#define KN_WIRE_CONN_SASL_H

#include <stdbool.h>
#include <stdint.h>

#include "wire/sasl/sasl.h"

typedef struct knw_sasl_session {
    const knw_sasl_mech *mech;
    void *state;                /* the mechanism's */
    kp_SaslHandshakeRequest hs; /* bodies of the requests in flight */
    kp_SaslAuthenticateRequest auth;
    knw_sasl_buf token;          /* bytes auth points to */
    bool active;                 /* an exchange is in progress */
    bool reauth;                 /* ... and it is a re-authentication */
    bool waiting;                /* start() said KNW_SASL_WAIT: no token yet */
    int64_t wait_deadline_ms;
    int rounds;
    int64_t started_ms;
    int64_t reauth_at_ms;        /* 0: the broker set no session lifetime */
    int64_t session_lifetime_ms; /* last SaslAuthenticate answer's */
    int64_t reauths;             /* completed re-authentications */
} knw_sasl_session;

/* Starts authenticating conn (first time after ApiVersions, or a
 * re-authentication of a READY connection). On failure the connection
 * has been closed. */
void knw_sasl_begin(knw_conn *conn, bool reauth, int64_t now_ms);
/* True while a re-authentication holds back new requests. */
bool knw_sasl_reauth_active(const knw_conn *conn);
/* When conn should re-authenticate (INT64_MAX: never). */
int64_t knw_sasl_reauth_at(const knw_conn *conn);
/* Network thread, from knw_conn_service: an exchange waiting for the
 * application's OAUTHBEARER token goes on once there is one, or closes
 * the connection after socket.connection.setup.timeout.max.ms. Returns
 * when to look again (INT64_MAX: nothing waits). */
int64_t knw_sasl_service(knw_conn *conn, int64_t now_ms);
/* Drops the exchange state (connection closed). */
void knw_sasl_reset(knw_conn *conn);
void knw_sasl_free(knw_conn *conn);

#endif
