/*
 * sasl.h: SASL authentication of a broker connection (security.protocol
 * SASL_PLAINTEXT and SASL_SSL): the configuration read once per client,
 * the pluggable mechanism table; the per-connection exchange that
 * conn.c runs between ApiVersions and READY, and again on the same
 * connection before the broker's session expires (KIP-368), is
 * core/wire/conn_sasl.c.
 *
 * Exchange (conn_sasl.c): SaslHandshake v1 names the mechanism (the answer
 * lists the broker's enabled ones), then SaslAuthenticate rounds carry
 * the mechanism's tokens until it says done. Versions are negotiated
 * from the connection's ApiVersions answer like any request.
 *
 * Mechanisms (knw_sasl_mech): start() makes the first client token and
 * per-connection state, step() takes each server token and answers with
 * the next client token or "done", free() drops the state. Adding a
 * mechanism (OAUTHBEARER, GSSAPI) is a new table entry; the state
 * machine does not change.
 *
 * Threads: the network thread only (the configuration is read-only
 * after the client is built). Secrets (passwords, salted keys) are
 * cleared before their memory is freed and never logged.
 */
#ifndef KNW_SASL_H
#define KNW_SASL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "proto/generated/kp_sasl_authenticate.h"
#include "proto/generated/kp_sasl_handshake.h"
#include "kafka_native.h"
#include "wire/sasl/jaas.h"

typedef struct kn_conf kn_conf;
typedef struct knw_conn knw_conn;

/* The client's SASL settings (owned by knw_settings). */
typedef struct knw_sasl_conf {
    char *mechanism; /* sasl.mechanism, owned */
    knw_jaas jaas;   /* sasl.jaas.config, parsed */
    const struct knw_sasl_mech *mech;
    /* OAUTHBEARER from the application (kn_conf_set_oauthbearer_token_cb)
     * and Java's sasl.login.refresh.* settings for it. */
    kn_oauthbearer_token_cb *token_fn;
    void *token_opaque;
    double refresh_window_factor, refresh_window_jitter;
    int64_t refresh_min_period_ms, refresh_buffer_ms;
    struct knw_oauth_store *store; /* the client's (borrowed), set when it is built */
    /* GSSAPI: the broker's service name (JAAS serviceName or
     * sasl.kerberos.service.name, owned), Java's sasl.kerberos.* re-login
     * settings, and the client's Kerberos state (gssapi_worker.h;
     * borrowed, set when the client is built). */
    char *krb_service;
    double krb_renew_factor, krb_renew_jitter;
    int64_t krb_min_relogin_ms;
    struct knw_krb *krb;
    /* OAUTHBEARER from the token endpoint (oidc.h), shared by copies. */
    struct knw_oidc *oidc;
} knw_sasl_conf;

/* A token: owned bytes (kn_free; secrets are cleared by their maker). */
typedef struct knw_sasl_buf {
    uint8_t *ptr;
    size_t len;
} knw_sasl_buf;

/* step() results besides errors (KN_ERR__AUTHENTICATION, _NOMEM). */
#define KNW_SASL_DONE 0 /* authenticated: nothing more to send */
#define KNW_SASL_SEND 1 /* send *out in the next SaslAuthenticate */
#define KNW_SASL_WAIT 2 /* start(): no credential yet (OAUTHBEARER callback): try again later */

typedef struct knw_sasl_mech {
    const char *name;         /* as in sasl.mechanism: "SCRAM-SHA-256" */
    const char *login_module; /* the JAAS class its credentials come from */
    /* When the client is built: the JAAS options it needs are there.
     * Returns 0 or KN_ERR__CONFIG with errstr. */
    int (*check)(const knw_sasl_conf *conf, char *errstr, size_t errstr_size);
    /* A new exchange on a connection to host: *state and the first
     * client token. Returns 0 or an error with errstr. */
    int (*start)(const knw_sasl_conf *conf, const char *host, void **state, knw_sasl_buf *out, char *errstr,
                 size_t errstr_size);
    /* One server token in (the auth_bytes of a successful
     * SaslAuthenticate answer): KNW_SASL_SEND with *out, KNW_SASL_DONE,
     * or KN_ERR__AUTHENTICATION with errstr (bad server proof, nonce,
     * iteration count: the exchange cannot go on). */
    int (*step)(void *state, const uint8_t *in, size_t in_len, knw_sasl_buf *out, char *errstr,
                size_t errstr_size);
    void (*free)(void *state);
} knw_sasl_mech;

/* The mechanisms this build speaks; NULL if name is not one of them. */
const knw_sasl_mech *knw_sasl_mech_find(const char *name);
/* "PLAIN, SCRAM-SHA-256, SCRAM-SHA-512" into buf. */
const char *knw_sasl_mech_list(char *buf, size_t size);

extern const knw_sasl_mech knw_sasl_plain;
extern const knw_sasl_mech knw_sasl_scram_sha256;
extern const knw_sasl_mech knw_sasl_scram_sha512;
extern const knw_sasl_mech knw_sasl_oauthbearer;
extern const knw_sasl_mech knw_sasl_gssapi; /* in the table when built with Kerberos (KN_HAVE_GSSAPI) */

/* OAUTHBEARER's pieces (sasl_oauthbearer.c), exposed for the unit tests:
 * the unsecured JWS (alg none) from OAuthBearerLoginModule's
 * unsecuredLogin* options at now_s (seconds since the epoch) into
 * *token (kn_free, a secret), and the RFC 7628 client first message
 * carrying token and the unsecuredLoginExtension_* extensions. 0,
 * KN_ERR__CONFIG or KN_ERR__NOMEM with errstr. */
int knw_oauthbearer_unsecured_token(const knw_sasl_conf *conf, double now_s, char **token, char *errstr,
                                    size_t errstr_size);
/* The client first message for token with pairs key/value extensions. */
int knw_oauthbearer_message(const char *token, const char *const *kv, size_t pairs, knw_sasl_buf *out,
                            char *errstr, size_t errstr_size);
/* RFC 7628 extension syntax: wire/sasl/oauthbearer_ext.h. */
int knw_oauthbearer_client_first(const knw_sasl_conf *conf, const char *token, knw_sasl_buf *out, char *errstr,
                                 size_t errstr_size);

/* Reads sasl.mechanism and sasl.jaas.config into a new conf (*out), or
 * leaves *out NULL for a security.protocol without SASL. Returns 0,
 * KN_ERR__CONFIG (unknown mechanism, JAAS error, login module that does
 * not match the mechanism, missing username/password) or _NOMEM. */
int knw_sasl_conf_from(const kn_conf *conf, knw_sasl_conf **out, char *errstr, size_t errstr_size);
int knw_sasl_conf_copy(knw_sasl_conf **dst, const knw_sasl_conf *src);
void knw_sasl_conf_free(knw_sasl_conf *sc);

/* Bounds on a connection's exchange: the rounds one mechanism may take
 * and the largest server token accepted. */
#define KNW_SASL_MAX_ROUNDS      16
#define KNW_SASL_MAX_TOKEN_BYTES (64 * 1024)

/* The server-first / server-final parsers behind SCRAM, exposed for the
 * unit tests and the fuzz target (sasl_scram.c). */
typedef struct knw_scram_server_first {
    const char *nonce; /* into the caller's buffer, not NUL-terminated */
    size_t nonce_len;
    uint8_t salt[256];
    size_t salt_len;
    int64_t iterations;
} knw_scram_server_first;
int knw_scram_parse_server_first(const char *msg, size_t len, knw_scram_server_first *out, char *errstr,
                                 size_t errstr_size);
/* "v=" verifier into sig (up to 64 bytes) or the server's "e=" error
 * (returned as KN_ERR__AUTHENTICATION with the text in errstr). */
int knw_scram_parse_server_final(const char *msg, size_t len, uint8_t *sig, size_t *sig_len, char *errstr,
                                 size_t errstr_size);
/* RFC 5802 saslname: ',' -> "=2C", '=' -> "=3D". Returns the length
 * written (out needs 3 * len + 1), NUL-terminated. */
size_t knw_scram_escape_name(const char *name, char *out);
/* Iteration bounds: Java's floor, and a ceiling (Kafka's own maximum
 * for stored credentials) that keeps a hostile server from pinning the
 * network thread in PBKDF2. */
#define KNW_SCRAM_MIN_ITERATIONS 4096
#define KNW_SCRAM_MAX_ITERATIONS 16384

/* Test hook: the next SCRAM client nonce (NULL: random). */
void knw_scram_set_test_nonce(const char *nonce);

#endif
