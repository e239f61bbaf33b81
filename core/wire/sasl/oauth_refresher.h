/*
 * oauth_refresher.h: the thread that keeps a client's OAUTHBEARER token
 * fresh when the client itself fetches it (the token endpoint, oidc.h),
 * so the blocking HTTP runs neither on the network thread nor inside the
 * application's calls. It sleeps until the store's refresh point
 * (Java's sasl.login.refresh.* rules, oauth_store.c) or until a
 * connection waits for a token, runs the store's refresh, and wakes the
 * network thread when a new token is in. A failed refresh is logged
 * (without secrets) and tried again 10 s later, as Java's
 * ExpiringCredentialRefreshingLogin does; the current token stays in use
 * until it expires (connections then wait, bounded, in their SASL state).
 *
 * Owns: the thread. Borrows: the store, the logger, the wake function's
 * opaque (all outlive knw_oauth_refresher_stop).
 */
#ifndef KNW_SASL_OAUTH_REFRESHER_H
#define KNW_SASL_OAUTH_REFRESHER_H

#include <stddef.h>

#include "log.h"
#include "wire/sasl/oauth_store.h"

typedef struct knw_oauth_refresher knw_oauth_refresher;

/* Starts the thread. NULL with errstr on failure. */
knw_oauth_refresher *knw_oauth_refresher_start(knw_oauth_store *st, void (*wake)(void *), void *wake_opaque,
                                               void (*cancel)(void *), void *cancel_opaque, kn_logger *log,
                                               char *errstr, size_t errstr_size);
/* Stops (cancelling a fetch in progress through cancel) and joins it. */
void knw_oauth_refresher_stop(knw_oauth_refresher *r);

/* Tries after a failed refresh (ms), Java's DELAY_SECONDS_BEFORE_NEXT_RETRY_WHEN_RELOGIN_FAILS. */
#define KNW_OAUTH_RELOGIN_RETRY_MS 10000

#endif
