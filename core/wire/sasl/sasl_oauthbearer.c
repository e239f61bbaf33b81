/*
 * sasl_oauthbearer.c: the OAUTHBEARER mechanism (RFC 7628, KIP-255)
 * with the unsecured JWS login that Java's
 * OAuthBearerUnsecuredLoginCallbackHandler offers for development.
 *
 * Token: an unsigned JWT, base64url(header) "." base64url(claims) ".",
 * header {"alg":"none"}, claims "exp" and "iat" (seconds, fractional, as
 * Java writes them), then the claims from OAuthBearerLoginModule's
 * options: unsecuredLoginStringClaim_<name>, unsecuredLoginNumberClaim_
 * <name>, unsecuredLoginListClaim_<name> (first character is the
 * delimiter), with the principal claim (unsecuredLoginPrincipalClaimName,
 * default sub) required, lifetime unsecuredLoginLifetimeSeconds (default
 * 3600). A fresh token is made for every exchange, so a KIP-368
 * re-authentication always presents an unexpired one.
 *
 * Client first message (RFC 7628 section 3.1, GS2 header without authzid,
 * as Java's OAuthBearerClientInitialResponse):
 *   "n,," 0x01 "auth=Bearer " token 0x01 (key "=" value 0x01)* 0x01
 * with the extensions from unsecuredLoginExtension_<name> options.
 *
 * Error round (RFC 7628 section 3.2.2): a broker that rejects the token
 * answers with a JSON error ({"status":"invalid_token",...}) instead of
 * an empty token; the client answers with the single byte 0x01 and the
 * broker then fails the exchange with that JSON as its error message,
 * which sasl.c reports as the fatal KN_ERR__AUTHENTICATION.
 *
 * Secrets: the token is a bearer credential: it is cleared before its
 * memory is freed (sasl.c does that for the sent buffer) and never
 * logged or put into an error message.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <openssl/crypto.h>

#include "error.h"
#include "kn_alloc.h"
#include "wire/sasl/oauth_store.h"
#include "wire/sasl/sasl.h"

#define OPT_STRING     "unsecuredLoginStringClaim_"
#define OPT_NUMBER     "unsecuredLoginNumberClaim_"
#define OPT_LIST       "unsecuredLoginListClaim_"
#define OPT_EXTENSION  "unsecuredLoginExtension_"
#define OPT_PRINCIPAL  "unsecuredLoginPrincipalClaimName"
#define OPT_LIFETIME   "unsecuredLoginLifetimeSeconds"
#define MAX_TOKEN_TEXT (32 * 1024) /* cap on the JSON and token built */

typedef enum ob_phase { OB_SENT_TOKEN, OB_SENT_KVSEP } ob_phase;

typedef struct ob_state {
    ob_phase phase;
    char error[256]; /* the broker's JSON error, printable excerpt */
} ob_state;

/* ---- a bounded text buffer ---- */

typedef struct obuf {
    char *p;
    size_t len, cap;
    bool failed; /* out of memory or over MAX_TOKEN_TEXT */
} obuf;

static void ob_put(obuf *b, const char *s, size_t n) {
    if (b->failed)
        return;
    if (b->len + n + 1 > MAX_TOKEN_TEXT) {
        b->failed = true;
        return;
    }
    if (b->len + n + 1 > b->cap) {
        size_t cap = b->cap ? b->cap : 256;
        while (cap < b->len + n + 1)
            cap *= 2;
        char *np = kn_malloc(cap);
        if (!np) {
            b->failed = true;
            return;
        }
        if (b->p) {
            memcpy(np, b->p, b->len);
            OPENSSL_cleanse(b->p, b->cap);
            kn_free(b->p);
        }
        b->p = np;
        b->cap = cap;
    }
    memcpy(b->p + b->len, s, n);
    b->len += n;
    b->p[b->len] = 0;
}

static void ob_str(obuf *b, const char *s) { ob_put(b, s, strlen(s)); }

static void ob_free(obuf *b) {
    if (b->p) {
        OPENSSL_cleanse(b->p, b->cap);
        kn_free(b->p);
    }
    memset(b, 0, sizeof *b);
}

/* A JSON string literal. */
static void ob_json_str(obuf *b, const char *s, size_t n) {
    ob_put(b, "\"", 1);
    for (size_t i = 0; i < n; i++) {
        unsigned char ch = (unsigned char)s[i];
        char esc[8];
        if (ch == '"' || ch == '\\') {
            esc[0] = '\\';
            esc[1] = (char)ch;
            ob_put(b, esc, 2);
        } else if (ch < 0x20) {
            snprintf(esc, sizeof esc, "\\u%04x", ch);
            ob_put(b, esc, 6);
        } else {
            ob_put(b, (const char *)&ch, 1);
        }
    }
    ob_put(b, "\"", 1);
}

/* base64url without padding (RFC 7515 section 2). */
static void ob_b64url(obuf *b, const char *s, size_t n) {
    static const char tab[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
    const unsigned char *u = (const unsigned char *)s;
    char q[4];
    size_t i = 0;
    for (; i + 3 <= n; i += 3) {
        uint32_t v = (uint32_t)u[i] << 16 | (uint32_t)u[i + 1] << 8 | u[i + 2];
        q[0] = tab[v >> 18 & 63];
        q[1] = tab[v >> 12 & 63];
        q[2] = tab[v >> 6 & 63];
        q[3] = tab[v & 63];
        ob_put(b, q, 4);
    }
    if (n - i == 1) {
        uint32_t v = (uint32_t)u[i] << 16;
        q[0] = tab[v >> 18 & 63];
        q[1] = tab[v >> 12 & 63];
        ob_put(b, q, 2);
    } else if (n - i == 2) {
        uint32_t v = (uint32_t)u[i] << 16 | (uint32_t)u[i + 1] << 8;
        q[0] = tab[v >> 18 & 63];
        q[1] = tab[v >> 12 & 63];
        q[2] = tab[v >> 6 & 63];
        ob_put(b, q, 3);
    }
}

/* ---- options ---- */

static bool has_prefix(const char *s, const char *prefix) { return !strncmp(s, prefix, strlen(prefix)); }

static const char *principal_claim(const knw_sasl_conf *conf) {
    const char *p = knw_jaas_get(&conf->jaas, OPT_PRINCIPAL);
    return p && *p ? p : "sub";
}

/* RFC 7628 section 3.1 key and value syntax, as Java checks them. */
static bool ext_key_ok(const char *k) {
    if (!*k || !strcmp(k, "auth"))
        return false;
    for (; *k; k++)
        if (!((*k >= 'a' && *k <= 'z') || (*k >= 'A' && *k <= 'Z')))
            return false;
    return true;
}

static bool ext_value_ok(const char *v) {
    if (!*v)
        return false;
    for (; *v; v++) {
        unsigned char c = (unsigned char)*v;
        if (!((c >= 0x21 && c <= 0x7e) || c == ' ' || c == '\t' || c == '\r' || c == '\n'))
            return false;
    }
    return true;
}

bool knw_oauthbearer_ext_ok(const char *key, const char *value) { return ext_key_ok(key) && ext_value_ok(value); }

static bool number_ok(const char *v) {
    char *end;
    errno = 0;
    double d = strtod(v, &end);
    (void)d;
    /* JSON numbers only: no hex, inf or nan that strtod would take. */
    if (!*v || *end || errno)
        return false;
    for (const char *p = v; *p; p++)
        if (!strchr("0123456789+-.eE", *p))
            return false;
    return true;
}

static int lifetime_seconds(const knw_sasl_conf *conf, int64_t *out, char *errstr, size_t n) {
    const char *v = knw_jaas_get(&conf->jaas, OPT_LIFETIME);
    *out = 3600;
    if (!v)
        return 0;
    char *end;
    errno = 0;
    long long ll = strtoll(v, &end, 10);
    if (!*v || *end || errno || ll > 100LL * 365 * 24 * 3600 || ll < -100LL * 365 * 24 * 3600) {
        kn_errstr_set(errstr, n, "sasl.jaas.config: OAuthBearerLoginModule option %s must be a whole number of "
                                 "seconds", OPT_LIFETIME);
        return KN_ERR__CONFIG;
    }
    *out = ll;
    return 0;
}

static int ob_check(const knw_sasl_conf *conf, char *errstr, size_t n) {
    if (conf->token_fn || conf->oidc)
        return 0; /* the application's callback or the token endpoint supplies the token */
    int64_t life;
    int rc = lifetime_seconds(conf, &life, errstr, n);
    if (rc)
        return rc;
    bool have_principal = false;
    const char *pc = principal_claim(conf);
    for (int i = 0; i < conf->jaas.option_count; i++) {
        const char *k = conf->jaas.options[i].key, *v = conf->jaas.options[i].value;
        const char *claim = NULL;
        if (has_prefix(k, OPT_STRING))
            claim = k + strlen(OPT_STRING);
        else if (has_prefix(k, OPT_NUMBER))
            claim = k + strlen(OPT_NUMBER);
        else if (has_prefix(k, OPT_LIST))
            claim = k + strlen(OPT_LIST);
        if (claim) {
            if (!*claim || !strcmp(claim, "iat") || !strcmp(claim, "exp")) {
                kn_errstr_set(errstr, n, "sasl.jaas.config: OAuthBearerLoginModule option %s: %s", k,
                              *claim ? "the iat and exp claims are set from the lifetime and cannot be given"
                                     : "the claim name is empty");
                return KN_ERR__CONFIG;
            }
            if (has_prefix(k, OPT_NUMBER) && !number_ok(v)) {
                kn_errstr_set(errstr, n, "sasl.jaas.config: OAuthBearerLoginModule option %s must be a number", k);
                return KN_ERR__CONFIG;
            }
            if (has_prefix(k, OPT_LIST) && strlen(v) < 1) {
                kn_errstr_set(errstr, n, "sasl.jaas.config: OAuthBearerLoginModule option %s must start with "
                                         "its delimiter character",
                              k);
                return KN_ERR__CONFIG;
            }
            if (!strcmp(claim, pc)) {
                if (!has_prefix(k, OPT_STRING) || !*v) {
                    kn_errstr_set(errstr, n, "sasl.jaas.config: the principal claim %s must be a non-empty "
                                             "%s%s option",
                                  pc, OPT_STRING, pc);
                    return KN_ERR__CONFIG;
                }
                have_principal = true;
            }
        } else if (has_prefix(k, OPT_EXTENSION)) {
            const char *name = k + strlen(OPT_EXTENSION);
            if (!ext_key_ok(name)) {
                kn_errstr_set(errstr, n, "sasl.jaas.config: OAuthBearerLoginModule option %s: an extension name "
                                         "must be letters only and not \"auth\" (RFC 7628)",
                              k);
                return KN_ERR__CONFIG;
            }
            if (!ext_value_ok(v)) {
                kn_errstr_set(errstr, n, "sasl.jaas.config: OAuthBearerLoginModule option %s: an extension value "
                                         "must be non-empty printable ASCII (RFC 7628)",
                              k);
                return KN_ERR__CONFIG;
            }
        }
    }
    if (!have_principal) {
        kn_errstr_set(errstr, n, "sasl.jaas.config: OAUTHBEARER's unsecured login needs the principal claim: "
                                 "OAuthBearerLoginModule required %s%s=\"<name>\";",
                      OPT_STRING, pc);
        return KN_ERR__CONFIG;
    }
    return 0;
}

/* ---- the token and the client first message ---- */

static double now_seconds(void) {
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (double)ts.tv_sec + (double)(ts.tv_nsec / 1000000) / 1000.0;
}

static void claims_json(const knw_sasl_conf *conf, double now, int64_t life, obuf *b) {
    char num[64];
    snprintf(num, sizeof num, "{\"exp\":%.3f,\"iat\":%.3f", now + (double)life, now);
    ob_str(b, num);
    for (int i = 0; i < conf->jaas.option_count; i++) {
        const char *k = conf->jaas.options[i].key, *v = conf->jaas.options[i].value;
        if (has_prefix(k, OPT_STRING)) {
            const char *c = k + strlen(OPT_STRING);
            ob_put(b, ",", 1);
            ob_json_str(b, c, strlen(c));
            ob_put(b, ":", 1);
            ob_json_str(b, v, strlen(v));
        } else if (has_prefix(k, OPT_NUMBER)) {
            const char *c = k + strlen(OPT_NUMBER);
            ob_put(b, ",", 1);
            ob_json_str(b, c, strlen(c));
            ob_put(b, ":", 1);
            ob_str(b, v);
        } else if (has_prefix(k, OPT_LIST)) {
            const char *c = k + strlen(OPT_LIST);
            char delim = v[0];
            ob_put(b, ",", 1);
            ob_json_str(b, c, strlen(c));
            ob_put(b, ":[", 2);
            bool first = true;
            const char *p = v + 1;
            while (*p) {
                const char *e = strchr(p, delim);
                size_t len = e ? (size_t)(e - p) : strlen(p);
                if (len > 0) {
                    if (!first)
                        ob_put(b, ",", 1);
                    ob_json_str(b, p, len);
                    first = false;
                }
                p += len + (e ? 1 : 0);
            }
            ob_put(b, "]", 1);
        }
    }
    ob_put(b, "}", 1);
}

int knw_oauthbearer_unsecured_token(const knw_sasl_conf *conf, double now_s, char **token, char *errstr,
                                    size_t n) {
    obuf claims = {0}, tok = {0};
    int64_t life;
    int rc = lifetime_seconds(conf, &life, errstr, n);
    *token = NULL;
    if (rc)
        return rc;
    static const char header[] = "{\"alg\":\"none\"}";
    claims_json(conf, now_s, life, &claims);
    ob_b64url(&tok, header, sizeof header - 1);
    ob_put(&tok, ".", 1);
    if (!claims.failed)
        ob_b64url(&tok, claims.p, claims.len);
    ob_put(&tok, ".", 1);
    if (claims.failed || tok.failed) {
        kn_errstr_set(errstr, n, "OAUTHBEARER: the unsecured token is too large or memory ran out");
        rc = KN_ERR__NOMEM;
        ob_free(&tok);
    } else {
        *token = tok.p; /* ownership moves to the caller */
    }
    ob_free(&claims);
    return rc;
}

int knw_oauthbearer_client_first(const knw_sasl_conf *conf, const char *token, knw_sasl_buf *out, char *errstr,
                                 size_t n) {
    obuf b = {0};
    ob_str(&b, "n,,\x01" "auth=Bearer ");
    ob_str(&b, token);
    ob_put(&b, "\x01", 1);
    for (int i = 0; i < conf->jaas.option_count; i++) {
        const char *k = conf->jaas.options[i].key, *v = conf->jaas.options[i].value;
        if (!has_prefix(k, OPT_EXTENSION))
            continue;
        ob_str(&b, k + strlen(OPT_EXTENSION));
        ob_put(&b, "=", 1);
        ob_str(&b, v);
        ob_put(&b, "\x01", 1);
    }
    ob_put(&b, "\x01", 1);
    if (b.failed) {
        ob_free(&b);
        kn_errstr_set(errstr, n, "OAUTHBEARER: the client first message is too large or memory ran out");
        return KN_ERR__NOMEM;
    }
    out->ptr = (uint8_t *)b.p;
    out->len = b.len;
    return 0;
}

int knw_oauthbearer_message(const char *token, const char *const *kv, size_t pairs, knw_sasl_buf *out,
                            char *errstr, size_t n) {
    obuf b = {0};
    ob_str(&b, "n,,\x01" "auth=Bearer ");
    ob_str(&b, token);
    ob_put(&b, "\x01", 1);
    for (size_t i = 0; i < pairs; i++) {
        ob_str(&b, kv[2 * i]);
        ob_put(&b, "=", 1);
        ob_str(&b, kv[2 * i + 1]);
        ob_put(&b, "\x01", 1);
    }
    ob_put(&b, "\x01", 1);
    if (b.failed) {
        ob_free(&b);
        kn_errstr_set(errstr, n, "OAUTHBEARER: the client first message is too large or memory ran out");
        return KN_ERR__NOMEM;
    }
    out->ptr = (uint8_t *)b.p;
    out->len = b.len;
    return 0;
}

static int ob_start(const knw_sasl_conf *conf, const char *host, void **state, knw_sasl_buf *out, char *errstr,
                    size_t n) {
    (void)host;
    if (conf->store) {
        /* The application's token (oauth_store.c), or wait for one. */
        int src = knw_oauth_store_client_first(conf->store, out, errstr, n);
        if (src)
            return src;
        ob_state *st = kn_calloc(1, sizeof *st);
        if (!st) {
            OPENSSL_cleanse(out->ptr, out->len);
            kn_free(out->ptr);
            out->ptr = NULL;
            kn_errstr_set(errstr, n, "out of memory");
            return KN_ERR__NOMEM;
        }
        *state = st;
        return 0;
    }
    char *token = NULL;
    ob_state *st = kn_calloc(1, sizeof *st);
    int rc = 0;
    if (!st) {
        kn_errstr_set(errstr, n, "out of memory");
        rc = KN_ERR__NOMEM;
    }
    if (!rc)
        rc = knw_oauthbearer_unsecured_token(conf, now_seconds(), &token, errstr, n);
    if (!rc)
        rc = knw_oauthbearer_client_first(conf, token, out, errstr, n);
    if (token) {
        OPENSSL_cleanse(token, strlen(token));
        kn_free(token);
    }
    if (rc) {
        kn_free(st);
        return rc;
    }
    st->phase = OB_SENT_TOKEN;
    *state = st;
    return 0;
}

static int ob_step(void *state, const uint8_t *in, size_t in_len, knw_sasl_buf *out, char *errstr, size_t n) {
    ob_state *st = state;
    if (st->phase == OB_SENT_TOKEN) {
        if (in_len == 0)
            return KNW_SASL_DONE; /* the token was accepted */
        /* RFC 7628 3.2.2: the server's error; keep a printable excerpt
         * in case the broker does not repeat it, and answer %x01. */
        size_t k = 0;
        for (size_t i = 0; i < in_len && k + 1 < sizeof st->error; i++)
            st->error[k++] = in[i] >= 0x20 && in[i] < 0x7f ? (char)in[i] : '?';
        st->error[k] = 0;
        uint8_t *kv = kn_malloc(1);
        if (!kv) {
            kn_errstr_set(errstr, n, "out of memory");
            return KN_ERR__NOMEM;
        }
        kv[0] = 0x01;
        out->ptr = kv;
        out->len = 1;
        st->phase = OB_SENT_KVSEP;
        return KNW_SASL_SEND;
    }
    /* After %x01 the broker must fail the exchange; a success answer
     * is a server that does not follow RFC 7628: still a rejection. */
    kn_errstr_set(errstr, n, "the broker rejected the token: %s", st->error);
    return KN_ERR__AUTHENTICATION;
}

static void ob_free_state(void *state) { kn_free(state); }

const knw_sasl_mech knw_sasl_oauthbearer = {
    .name = "OAUTHBEARER",
    .login_module = "org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule",
    .check = ob_check,
    .start = ob_start,
    .step = ob_step,
    .free = ob_free_state,
};
