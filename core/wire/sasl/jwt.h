/*
 * jwt.h: reading what an OAuth/OIDC token endpoint returns, as Java's
 * client does before it uses a token (JwtResponseParser, SerializedJwt,
 * ClientJwtValidator): the access token from the endpoint's JSON answer,
 * and the claims of that JWT the client needs (exp, the subject claim,
 * iat, the scope claim). The signature is not checked: that is the
 * broker's job (it holds the provider's keys).
 *
 * Bounded: answers over KNW_JWT_MAX_RESPONSE and tokens over
 * KNW_JWT_MAX_TOKEN are refused. Errors say what is wrong and where
 * (byte offsets), never the token's text. No allocation except the
 * returned token copy.
 */
#ifndef KNW_SASL_JWT_H
#define KNW_SASL_JWT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define KNW_JWT_MAX_RESPONSE (64 * 1024)
#define KNW_JWT_MAX_TOKEN    (16 * 1024)

/* The JWT in a token endpoint answer: "access_token", else "id_token"
 * (Java's order), a non-blank string. Returns 0 with *jwt (kn_free it,
 * after clearing: a secret), or -1 with errstr. */
int knw_jwt_from_response(const char *body, size_t len, char **jwt, char *errstr, size_t errstr_size);

typedef struct knw_jwt_claims {
    int64_t exp_ms;  /* exp, seconds in the token, here ms since the epoch */
    int64_t iat_ms;  /* -1: no iat claim */
    char sub[256];   /* the subject claim (sasl.oauthbearer.sub.claim.name) */
    int scope_count; /* entries in the scope claim */
} knw_jwt_claims;

/* Checks a compact JWS (header.payload.signature, base64url) and reads
 * its claims: exp (a number, required, >= 0), the subject claim (a
 * non-blank string, required), iat (a number >= 0, optional), the scope
 * claim (a string or a list of non-blank strings, optional). 0 or -1
 * with errstr. */
int knw_jwt_read(const char *jwt, const char *sub_claim, const char *scope_claim, knw_jwt_claims *out,
                 char *errstr, size_t errstr_size);

#endif
