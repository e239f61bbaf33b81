/*
 * oauth_store.h: the OAUTHBEARER token of one client when the
 * application supplies it (kn_conf_set_oauthbearer_token_cb): the
 * current token and extensions, and the hand-over between the network
 * thread, which needs a token to authenticate, and the application's
 * thread, which alone runs the callback (inside its blocking calls).
 *
 *   network thread: knw_oauth_store_client_first() -> a client first
 *     message from the current unexpired token, or KNW_SASL_WAIT after
 *     raising "wanted" (the connection waits, sasl.c);
 *   application thread: knw_oauth_store_due() is a cheap check,
 *     knw_oauth_store_refresh() runs the callback (outside any lock),
 *     stores a copy and schedules the next refresh at Java's
 *     sasl.login.refresh.* point of the lifetime.
 *
 * Owns: copies of the token, principal and extensions (cleared before
 * they are freed: the token is a credential, never logged).
 */
#ifndef KNW_SASL_OAUTH_STORE_H
#define KNW_SASL_OAUTH_STORE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "kafka_native.h"
#include "wire/sasl/sasl.h"

typedef struct knw_oauth_store knw_oauth_store;

/* Java's sasl.login.refresh.* settings. */
typedef struct knw_oauth_refresh {
    double window_factor;  /* sasl.login.refresh.window.factor, 0.8 */
    double window_jitter;  /* sasl.login.refresh.window.jitter, 0.05 */
    int64_t min_period_ms; /* sasl.login.refresh.min.period.seconds, 60 s */
    int64_t buffer_ms;     /* sasl.login.refresh.buffer.seconds, 300 s */
} knw_oauth_refresh;

knw_oauth_store *knw_oauth_store_new(kn_oauthbearer_token_cb *fn, void *opaque, const knw_oauth_refresh *r);
void knw_oauth_store_free(knw_oauth_store *st);

/* Network thread: 0 with *out, KNW_SASL_WAIT (no unexpired token yet:
 * the application is asked for one), or KN_ERR__NOMEM. */
int knw_oauth_store_client_first(knw_oauth_store *st, knw_sasl_buf *out, char *errstr, size_t errstr_size);

/* A token source that is not the application's callback (the token
 * endpoint, oidc.h) names itself in errors: "<label>: <its errstr>".
 * label must outlive the store. */
void knw_oauth_store_set_label(knw_oauth_store *st, const char *label);
/* Asks for a token now (the first one, fetched when the client is built). */
void knw_oauth_store_want(knw_oauth_store *st);
/* A connection waits for a token; when the refresh is due (epoch ms,
 * INT64_MAX before the first token). For the refresher thread. */
bool knw_oauth_store_wanted(knw_oauth_store *st);
int64_t knw_oauth_store_refresh_at(knw_oauth_store *st);

/* Application thread: true when a token is wanted or a refresh is due. */
bool knw_oauth_store_due(knw_oauth_store *st);
/* Application thread: runs the callback if due. 0 (nothing to do, or a
 * token stored: *stored true) or KN_ERR__AUTHENTICATION with errstr
 * naming the callback and its reason. Callers serialize (one runs it at
 * a time; another returns at once). */
int knw_oauth_store_refresh(knw_oauth_store *st, bool *stored, char *errstr, size_t errstr_size);

/* When the refresh after a token obtained at now_ms (epoch) that
 * expires at expiry_ms is due, as Java's ExpiringCredentialRefreshingLogin
 * places it; rnd in [0, 1]. Exposed for the unit tests. */
int64_t knw_oauth_refresh_at(const knw_oauth_refresh *r, int64_t now_ms, int64_t expiry_ms, double rnd);

#endif
