/*
 * jwt.c: the token endpoint answer and JWT claims reader (see jwt.h).
 */
#include <math.h>
#include <string.h>

#include <openssl/crypto.h>

#include "error.h"
#include "json.h"
#include "kn_alloc.h"
#include "wire/sasl/jwt.h"

static bool blank(const char *s) {
    for (; *s; s++)
        if (*s != ' ' && *s != '\t' && *s != '\r' && *s != '\n')
            return false;
    return true;
}

int knw_jwt_from_response(const char *body, size_t len, char **jwt, char *errstr, size_t n) {
    static const char *const names[] = {"access_token", "id_token"};
    char why[160];
    *jwt = NULL;
    if (len > KNW_JWT_MAX_RESPONSE) {
        kn_errstr_set(errstr, n, "the token endpoint's answer is over %d bytes", KNW_JWT_MAX_RESPONSE);
        return -1;
    }
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        kn_json_val v;
        if (kn_json_get(body, len, names[i], &v, why, sizeof why)) {
            /* No excerpt of the body: it may hold the token. */
            kn_errstr_set(errstr, n, "the token endpoint's answer is not a JSON object (%s)", why);
            return -1;
        }
        if (v.type == KN_JSON_NONE)
            continue;
        if (v.type != KN_JSON_STRING) {
            kn_errstr_set(errstr, n, "the token endpoint's answer has a %s that is not a string", names[i]);
            return -1;
        }
        if (v.len > KNW_JWT_MAX_TOKEN) {
            kn_errstr_set(errstr, n, "the token endpoint's %s is over %d bytes", names[i], KNW_JWT_MAX_TOKEN);
            return -1;
        }
        char *tok = kn_malloc(v.len + 1);
        if (!tok) {
            kn_errstr_set(errstr, n, "out of memory");
            return -1;
        }
        size_t tl;
        if (kn_json_string(&v, tok, v.len + 1, &tl) || blank(tok)) {
            OPENSSL_cleanse(tok, v.len + 1);
            kn_free(tok);
            kn_errstr_set(errstr, n, "the token endpoint's %s is empty or not text", names[i]);
            return -1;
        }
        *jwt = tok;
        return 0;
    }
    kn_errstr_set(errstr, n, "the token endpoint's answer has no access_token (nor id_token)");
    return -1;
}

/* base64url (RFC 4648 section 5), padding optional, into out (cap). */
static int b64url_decode(const char *s, size_t len, unsigned char *out, size_t cap, size_t *out_len) {
    uint32_t acc = 0;
    int bits = 0;
    size_t o = 0;
    while (len > 0 && s[len - 1] == '=')
        len--;
    for (size_t i = 0; i < len; i++) {
        char c = s[i];
        int v;
        if (c >= 'A' && c <= 'Z')
            v = c - 'A';
        else if (c >= 'a' && c <= 'z')
            v = c - 'a' + 26;
        else if (c >= '0' && c <= '9')
            v = c - '0' + 52;
        else if (c == '-')
            v = 62;
        else if (c == '_')
            v = 63;
        else
            return -1;
        acc = acc << 6 | (uint32_t)v;
        bits += 6;
        if (bits >= 8) {
            bits -= 8;
            if (o >= cap)
                return -1;
            out[o++] = (unsigned char)(acc >> bits & 0xFF);
        }
    }
    if (len % 4 == 1)
        return -1; /* a lone 6 bits is no byte */
    *out_len = o;
    return 0;
}

static bool trim_section(const char **s, size_t *len) {
    while (*len && (**s == ' ' || **s == '\t'))
        (*s)++, (*len)--;
    while (*len && ((*s)[*len - 1] == ' ' || (*s)[*len - 1] == '\t'))
        (*len)--;
    return *len > 0;
}

/* A numeric claim in seconds as ms (Java: Number.longValue() * 1000). */
static int seconds_claim(const char *payload, size_t plen, const char *name, bool required, int64_t *ms,
                         char *errstr, size_t n) {
    kn_json_val v;
    char why[160];
    double d;
    *ms = -1;
    if (kn_json_get(payload, plen, name, &v, why, sizeof why))
        return -1; /* checked by the caller already */
    if (v.type == KN_JSON_NONE && !required)
        return 0;
    if (v.type == KN_JSON_NONE) {
        kn_errstr_set(errstr, n, "the JWT has no %s claim", name);
        return -1;
    }
    if (v.type != KN_JSON_NUMBER || kn_json_number(&v, &d) || !isfinite(d) || d < 0 || d > 1e14) {
        kn_errstr_set(errstr, n, "the JWT's %s claim must be a non-negative number of seconds", name);
        return -1;
    }
    *ms = (int64_t)d * 1000;
    return 0;
}

int knw_jwt_read(const char *jwt, const char *sub_claim, const char *scope_claim, knw_jwt_claims *out,
                 char *errstr, size_t n) {
    memset(out, 0, sizeof *out);
    out->iat_ms = -1;
    size_t len = strlen(jwt);
    if (len > KNW_JWT_MAX_TOKEN) {
        kn_errstr_set(errstr, n, "the JWT is over %d bytes", KNW_JWT_MAX_TOKEN);
        return -1;
    }
    /* header.payload.signature: exactly two dots, no empty section. */
    const char *d1 = memchr(jwt, '.', len);
    const char *d2 = d1 ? memchr(d1 + 1, '.', len - (size_t)(d1 + 1 - jwt)) : NULL;
    const char *sec[3] = {jwt, d1 ? d1 + 1 : NULL, d2 ? d2 + 1 : NULL};
    size_t sl[3] = {d1 ? (size_t)(d1 - jwt) : 0, d2 ? (size_t)(d2 - d1 - 1) : 0,
                    d2 ? len - (size_t)(d2 + 1 - jwt) : 0};
    if (!d2 || memchr(d2 + 1, '.', sl[2]) || !trim_section(&sec[0], &sl[0]) ||
        !trim_section(&sec[1], &sl[1]) || !trim_section(&sec[2], &sl[2])) {
        kn_errstr_set(errstr, n, "malformed JWT: expected three sections (header, payload, and signature)");
        return -1;
    }
    unsigned char payload[KNW_JWT_MAX_TOKEN];
    size_t plen;
    if (b64url_decode(sec[1], sl[1], payload, sizeof payload, &plen)) {
        kn_errstr_set(errstr, n, "malformed JWT: the payload section is not base64url");
        return -1;
    }
    const char *p = (const char *)payload;
    char why[160];
    kn_json_val v;
    int rc = -1;
    if (kn_json_get(p, plen, sub_claim, &v, why, sizeof why)) {
        kn_errstr_set(errstr, n, "malformed JWT: the payload is not a JSON object (%s)", why);
        goto done;
    }
    if (v.type != KN_JSON_STRING || kn_json_string(&v, out->sub, sizeof out->sub, NULL) || blank(out->sub)) {
        kn_errstr_set(errstr, n, "the JWT's %s claim (sasl.oauthbearer.sub.claim.name) %s", sub_claim,
                      v.type == KN_JSON_NONE     ? "is missing"
                      : v.type != KN_JSON_STRING ? "is not a string"
                                                 : "is empty or over 255 bytes");
        goto done;
    }
    if (seconds_claim(p, plen, "exp", true, &out->exp_ms, errstr, n) ||
        seconds_claim(p, plen, "iat", false, &out->iat_ms, errstr, n))
        goto done;
    kn_json_get(p, plen, scope_claim, &v, why, sizeof why);
    if (v.type == KN_JSON_STRING) {
        out->scope_count = 1;
    } else if (v.type == KN_JSON_ARRAY) {
        size_t pos = 0;
        kn_json_val e;
        char s[256];
        while (kn_json_array_next(&v, &pos, &e)) {
            if (e.type != KN_JSON_STRING || kn_json_string(&e, s, sizeof s, NULL) || blank(s)) {
                kn_errstr_set(errstr, n,
                              "the JWT's %s claim (sasl.oauthbearer.scope.claim.name) has an entry "
                              "that is not a non-empty string",
                              scope_claim);
                goto done;
            }
            out->scope_count++;
        }
    }
    rc = 0;
done:
    OPENSSL_cleanse(payload, sizeof payload);
    return rc;
}
