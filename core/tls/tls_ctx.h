/*
 * tls_ctx.h: a client's TLS configuration. Turns the ssl.* keys of a
 * kn_conf (Java's names and meanings) into one OpenSSL SSL_CTX: trust
 * store (PEM or PKCS12 file, inline PEM, or the system's), client
 * certificate and key (PEM or PKCS12 file, inline PEM, encrypted keys),
 * protocol versions and cipher suites. Built once when the client is
 * created and shared, reference-counted, by all its connections
 * (transport_tls.c). Errors name the key and OpenSSL's reason; no
 * password or key material ever appears in a message.
 */
#ifndef KNW_TLS_CTX_H
#define KNW_TLS_CTX_H

#include <stdbool.h>
#include <stddef.h>

#include "config/config.h"

/* Builds the SSL_CTX for conf. On success returns 0, *ctx (owned by the
 * caller: knw_tls_ctx_free) and *verify_host (hostname verification,
 * ssl.endpoint.identification.algorithm). Otherwise, with errstr:
 * KN_ERR__SSL when a store or key cannot be loaded (file missing or
 * unreadable, wrong password, bad PEM or PKCS12 content, a key that does
 * not match its certificate: Java's "Failed to load SSL keystore"),
 * KN_ERR__CONFIG when the settings are wrong on their face (unsupported
 * or mismatched store type, JKS, keys that exclude each other,
 * protocols, cipher suites), or KN_ERR__NOMEM. */
int knw_tls_ctx_new(const kn_conf *conf, void **ctx, bool *verify_host, char *errstr, size_t errstr_size);
/* Adds a reference to ctx (NULL is fine). */
void knw_tls_ctx_ref(void *ctx);
/* Drops a reference (NULL is fine). */
void knw_tls_ctx_free(void *ctx);
/* Copies OpenSSL's reason for the last error on this thread into buf
 * and clears the thread's error queue; "unknown error" if none. */
const char *knw_tls_reason(char *buf, size_t size);

#endif
