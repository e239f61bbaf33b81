/*
 * oidc.h: OAUTHBEARER tokens from an OAuth/OIDC token endpoint with the
 * client-credentials grant (KIP-768), as Java's
 * OAuthBearerLoginCallbackHandler gets them: an HTTP(S) POST to
 * sasl.oauthbearer.token.endpoint.url with the client id and secret
 * (HTTP Basic) and the scope, retried with sasl.login.retry.backoff.*,
 * bounded by sasl.login.connect/read.timeout.ms; the JWT read and
 * checked as Java's ClientJwtValidator does (jwt.h).
 *
 * knw_oidc holds the settings read once when the client is built (and
 * the TLS context for an https endpoint, from the ssl.* options of
 * sasl.jaas.config, as in Java). It is shared, reference-counted, by the
 * copies of a client's settings. knw_oidc_token_cb is the token source
 * behind the client's token store (oauth_store.h); it blocks on HTTP, so
 * it only ever runs on the client's constructor thread (the first token)
 * and on the refresher thread (oauth_refresher.h), never on the network
 * thread.
 *
 * Secrets: the client secret, the Authorization header and tokens are
 * cleared before their memory is freed and never logged or put in a
 * message (an HTTP error's body excerpt is from a failed answer, which
 * carries no token).
 */
#ifndef KNW_SASL_OIDC_H
#define KNW_SASL_OIDC_H

#include <stdbool.h>
#include <stddef.h>

#include "kafka_native.h"
#include "wire/sasl/jaas.h"
#include "wire/sasl/jwt.h"

typedef struct kn_conf kn_conf;
typedef struct knw_oidc knw_oidc;

#define KNW_OIDC_HANDLER "org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginCallbackHandler"

/* When the client uses the token endpoint: sasl.login.callback.handler.class
 * names OAuthBearerLoginCallbackHandler, or it is unset while
 * sasl.oauthbearer.token.endpoint.url is set and jaas has no unsecuredLogin*
 * option. Then reads and checks every setting into *out (owned:
 * knw_oidc_free); otherwise *out stays NULL. 0, KN_ERR__CONFIG (the key
 * or option named, never a secret's value) or KN_ERR__NOMEM. */
int knw_oidc_from(const kn_conf *conf, const knw_jaas *jaas, knw_oidc **out, char *errstr,
                  size_t errstr_size);
void knw_oidc_ref(knw_oidc *o);
void knw_oidc_free(knw_oidc *o); /* drops a reference; NULL is fine */

/* Asks a running fetch to give up soon (client closing); any thread. */
void knw_oidc_cancel(knw_oidc *o);

/* One token: POSTs to the endpoint (with retries), reads the JWT and its
 * claims. 0 with *jwt (kn_free after clearing) and *claims, or
 * KN_ERR__AUTHENTICATION with errstr naming the endpoint and cause (HTTP
 * status and body excerpt, connection or TLS error, timeout, malformed
 * JSON or JWT). Blocks: never call it on the network thread. */
int knw_oidc_fetch(knw_oidc *o, char **jwt, knw_jwt_claims *claims, char *errstr, size_t errstr_size);

/* knw_oidc_fetch as a kn_oauthbearer_token_cb (opaque: the knw_oidc),
 * with the extension_<name> options of sasl.jaas.config as extensions. */
int knw_oidc_token_cb(kn_oauthbearer_token *out, char *errstr, size_t errstr_size, void *opaque);

/* The endpoint URL (for messages). */
const char *knw_oidc_url(const knw_oidc *o);

#endif
