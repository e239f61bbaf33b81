/*
 * oauthbearer_ext.h: the RFC 7628 (section 3.1) syntax of OAUTHBEARER
 * SASL extensions, checked as Java checks it. Its own small unit so the
 * mechanism (sasl_oauthbearer.c) and the token-endpoint login (oidc.c)
 * share it without the endpoint depending on the mechanism table.
 */
#ifndef KNW_OAUTHBEARER_EXT_H
#define KNW_OAUTHBEARER_EXT_H

#include <stdbool.h>

/* A key of letters only, never "auth". */
bool knw_oauthbearer_ext_key_ok(const char *key);
/* A non-empty value of printable ASCII, space, tab, CR or LF. */
bool knw_oauthbearer_ext_value_ok(const char *value);
/* Both. */
bool knw_oauthbearer_ext_ok(const char *key, const char *value);

#endif
