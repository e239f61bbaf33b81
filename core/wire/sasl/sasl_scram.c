/*
 * sasl_scram.c: SCRAM-SHA-256 and SCRAM-SHA-512 (RFC 5802, RFC 7677) on
 * OpenSSL 3, as Java's ScramSaslClient speaks it:
 *
 *   client-first  n,,n=<user>,r=<client nonce>[,tokenauth=true]
 *   server-first  r=<client nonce + server nonce>,s=<salt>,i=<iterations>
 *   client-final  c=biws,r=<nonce>,p=<proof>
 *   server-final  v=<server signature> | e=<error>
 *
 * Checked: the server nonce extends ours, the iteration count lies in
 * [4096 (Java's floor), 16384], the server signature matches (so a
 * server that does not hold the credential cannot pretend to). The user
 * name is escaped (',' as =2C, '=' as =3D); like Java, names and
 * passwords are sent as their UTF-8 bytes without SASLprep mapping.
 * Owns the per-connection exchange state; keys derived from the
 * password are cleared before they are freed.
 */
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/rand.h>

#include "error.h"
#include "kn_alloc.h"
#include "wire/sasl/sasl.h"

#define SCRAM_MAX_MD 64 /* SHA-512 */

typedef struct scram_state {
    const EVP_MD *(*md_fn)(void);
    const char *name; /* mechanism name for messages */
    const char *password;
    int stage;        /* 0: client-first sent, 1: client-final sent */
    char *first_bare; /* owned: client-first without the gs2 header */
    char nonce[64];
    uint8_t server_sig[SCRAM_MAX_MD];
    size_t md_len;
} scram_state;

static char test_nonce[64];

void knw_scram_set_test_nonce(const char *nonce) {
    snprintf(test_nonce, sizeof test_nonce, "%s", nonce ? nonce : "");
}

size_t knw_scram_escape_name(const char *name, char *out) {
    size_t o = 0;
    for (const char *p = name; *p; p++) {
        if (*p == ',') {
            memcpy(out + o, "=2C", 3);
            o += 3;
        } else if (*p == '=') {
            memcpy(out + o, "=3D", 3);
            o += 3;
        } else {
            out[o++] = *p;
        }
    }
    out[o] = 0;
    return o;
}

/* Standard base64 with padding, strictly: length a multiple of 4. */
static int b64_decode(const char *in, size_t len, uint8_t *out, size_t cap, size_t *out_len) {
    if (len == 0 || len % 4 != 0 || len / 4 * 3 > cap)
        return -1;
    for (size_t i = 0; i < len; i++) {
        char ch = in[i];
        bool ok = (ch >= 'A' && ch <= 'Z') || (ch >= 'a' && ch <= 'z') || (ch >= '0' && ch <= '9') ||
                  ch == '+' || ch == '/' ||
                  (ch == '=' && i >= len - 2 && (i == len - 1 || in[len - 1] == '='));
        if (!ok)
            return -1;
    }
    int n = EVP_DecodeBlock(out, (const unsigned char *)in, (int)len);
    if (n < 0)
        return -1;
    size_t pad = (in[len - 1] == '=') + (in[len - 2] == '=');
    *out_len = (size_t)n - pad;
    return 0;
}

/* One attribute "<name>=<value>" ending at ',' or the end: its value. */
static bool attr(const char **p, const char *end, char name, const char **v, size_t *vlen) {
    if (end - *p < 2 || (*p)[0] != name || (*p)[1] != '=')
        return false;
    const char *s = *p + 2, *e = s;
    while (e < end && *e != ',')
        e++;
    *v = s;
    *vlen = (size_t)(e - s);
    *p = e < end ? e + 1 : e;
    return true;
}

/* Extensions after the mandatory attributes: ",<letter>=<value>"... */
static bool valid_tail(const char *p, const char *end) {
    while (p < end) {
        if (end - p < 2 || !((p[0] >= 'a' && p[0] <= 'z') || (p[0] >= 'A' && p[0] <= 'Z')) || p[1] != '=')
            return false;
        while (p < end && *p != ',')
            p++;
        if (p < end)
            p++;
        else
            break;
    }
    return true;
}

int knw_scram_parse_server_first(const char *msg, size_t len, knw_scram_server_first *out, char *errstr,
                                 size_t n) {
    memset(out, 0, sizeof *out);
    const char *p = msg, *end = msg + len, *v;
    size_t vl;
    const char *nul = memchr(msg, 0, len);
    if (nul) {
        kn_errstr_set(errstr, n, "SCRAM server-first message: NUL byte at byte %zu", (size_t)(nul - msg));
        return KN_ERR__AUTHENTICATION;
    }
    if (len >= 2 && p[0] == 'm' && p[1] == '=') {
        kn_errstr_set(errstr, n, "SCRAM server-first message: unsupported mandatory extension (m=)");
        return KN_ERR__AUTHENTICATION;
    }
    if (!attr(&p, end, 'r', &v, &vl) || vl == 0) {
        kn_errstr_set(errstr, n, "SCRAM server-first message: no nonce (r=) at byte 0");
        return KN_ERR__AUTHENTICATION;
    }
    for (size_t i = 0; i < vl; i++)
        if ((unsigned char)v[i] < 0x21 || (unsigned char)v[i] > 0x7e) {
            kn_errstr_set(errstr, n, "SCRAM server-first message: invalid character in the nonce at byte %zu",
                          (size_t)(v - msg) + i);
            return KN_ERR__AUTHENTICATION;
        }
    out->nonce = v;
    out->nonce_len = vl;
    size_t off = (size_t)(p - msg);
    if (!attr(&p, end, 's', &v, &vl) || b64_decode(v, vl, out->salt, sizeof out->salt, &out->salt_len) ||
        out->salt_len == 0) {
        kn_errstr_set(errstr, n, "SCRAM server-first message: missing or invalid salt (s=) at byte %zu", off);
        return KN_ERR__AUTHENTICATION;
    }
    off = (size_t)(p - msg);
    if (!attr(&p, end, 'i', &v, &vl) || vl == 0 || vl > 10) {
        kn_errstr_set(errstr, n,
                      "SCRAM server-first message: missing or invalid iteration count (i=) at byte %zu", off);
        return KN_ERR__AUTHENTICATION;
    }
    int64_t it = 0;
    for (size_t i = 0; i < vl; i++) {
        if (v[i] < '0' || v[i] > '9') {
            kn_errstr_set(errstr, n, "SCRAM server-first message: invalid iteration count at byte %zu", off);
            return KN_ERR__AUTHENTICATION;
        }
        it = it * 10 + (v[i] - '0');
    }
    out->iterations = it;
    if (!valid_tail(p, end)) {
        kn_errstr_set(errstr, n, "SCRAM server-first message: malformed extension at byte %zu",
                      (size_t)(p - msg));
        return KN_ERR__AUTHENTICATION;
    }
    return 0;
}

int knw_scram_parse_server_final(const char *msg, size_t len, uint8_t *sig, size_t *sig_len, char *errstr,
                                 size_t n) {
    const char *p = msg, *end = msg + len, *v;
    size_t vl;
    if (attr(&p, end, 'e', &v, &vl)) {
        /* The server's own reason: printable text, shown as sent. */
        char reason[128];
        size_t k = 0;
        for (size_t i = 0; i < vl && k + 1 < sizeof reason; i++)
            reason[k++] = (v[i] >= 0x20 && v[i] < 0x7f) ? v[i] : '?';
        reason[k] = 0;
        kn_errstr_set(errstr, n, "SCRAM: the broker rejected the client proof: %s", reason);
        return KN_ERR__AUTHENTICATION;
    }
    uint8_t buf[96];
    size_t bl = 0;
    if (!attr(&p, end, 'v', &v, &vl) || b64_decode(v, vl, buf, sizeof buf, &bl) || bl > SCRAM_MAX_MD ||
        !valid_tail(p, end)) {
        kn_errstr_set(errstr, n,
                      "SCRAM server-final message: malformed (expected v=<signature> or e=<error>)");
        return KN_ERR__AUTHENTICATION;
    }
    memcpy(sig, buf, bl);
    *sig_len = bl;
    return 0;
}

static void scram_free(void *state) {
    scram_state *st = state;
    if (!st)
        return;
    kn_free(st->first_bare);
    OPENSSL_cleanse(st, sizeof *st);
    kn_free(st);
}

static int scram_check(const knw_sasl_conf *conf, char *errstr, size_t n) {
    const char *u = knw_jaas_get(&conf->jaas, "username"), *p = knw_jaas_get(&conf->jaas, "password");
    if (!u || !p) {
        kn_errstr_set(errstr, n, "sasl.jaas.config: %s needs the options username and password (%s missing)",
                      conf->mechanism, !u ? "username" : "password");
        return KN_ERR__CONFIG;
    }
    if (strlen(u) > 1024) {
        kn_errstr_set(errstr, n, "sasl.jaas.config: the SCRAM username is longer than 1024 bytes");
        return KN_ERR__CONFIG;
    }
    return 0;
}

static int scram_start(const knw_sasl_conf *conf, const char *host, void **state, knw_sasl_buf *out,
                       const EVP_MD *(*md_fn)(void), const char *name, char *errstr, size_t n) {
    (void)host;
    const char *user = knw_jaas_get(&conf->jaas, "username");
    const char *tokenauth = knw_jaas_get(&conf->jaas, "tokenauth");
    scram_state *st = kn_calloc(1, sizeof *st);
    char *esc = kn_malloc(strlen(user) * 3 + 1);
    if (!st || !esc)
        goto nomem;
    st->md_fn = md_fn;
    st->name = name;
    st->password = knw_jaas_get(&conf->jaas, "password");
    st->md_len = (size_t)EVP_MD_get_size(md_fn());
    if (test_nonce[0]) {
        snprintf(st->nonce, sizeof st->nonce, "%s", test_nonce);
    } else {
        /* 24 random bytes as 32 base64 characters: printable, no ','. */
        uint8_t rnd[24];
        if (RAND_bytes(rnd, sizeof rnd) != 1) {
            kn_errstr_set(errstr, n, "%s: the random generator failed", name);
            kn_free(esc);
            scram_free(st);
            return KN_ERR__AUTHENTICATION;
        }
        EVP_EncodeBlock((unsigned char *)st->nonce, rnd, sizeof rnd);
    }
    knw_scram_escape_name(user, esc);
    bool ext = tokenauth && !strcasecmp(tokenauth, "true");
    size_t bl = strlen(esc) + strlen(st->nonce) + 32;
    st->first_bare = kn_malloc(bl);
    out->ptr = kn_malloc(bl + 3);
    if (!st->first_bare || !out->ptr)
        goto nomem;
    snprintf(st->first_bare, bl, "n=%s,r=%s%s", esc, st->nonce, ext ? ",tokenauth=true" : "");
    out->len = (size_t)snprintf((char *)out->ptr, bl + 3, "n,,%s", st->first_bare);
    kn_free(esc);
    *state = st;
    return 0;
nomem:
    kn_free(esc);
    if (out->ptr)
        kn_free(out->ptr);
    out->ptr = NULL;
    scram_free(st);
    kn_errstr_set(errstr, n, "out of memory");
    return KN_ERR__NOMEM;
}

static int start256(const knw_sasl_conf *conf, const char *host, void **state, knw_sasl_buf *out,
                    char *errstr, size_t n) {
    return scram_start(conf, host, state, out, EVP_sha256, "SCRAM-SHA-256", errstr, n);
}

static int start512(const knw_sasl_conf *conf, const char *host, void **state, knw_sasl_buf *out,
                    char *errstr, size_t n) {
    return scram_start(conf, host, state, out, EVP_sha512, "SCRAM-SHA-512", errstr, n);
}

static bool hmac(const EVP_MD *md, const uint8_t *key, size_t klen, const void *data, size_t dlen,
                 uint8_t *out) {
    unsigned int ol = 0;
    return HMAC(md, key, (int)klen, data, dlen, out, &ol) != NULL;
}

/* server-first in: the client-final message out, the expected server
 * signature kept. */
static int client_final(scram_state *st, const char *in, size_t in_len, knw_sasl_buf *out, char *errstr,
                        size_t n) {
    knw_scram_server_first sf;
    int rc = knw_scram_parse_server_first(in, in_len, &sf, errstr, n);
    if (rc)
        return rc;
    size_t cl = strlen(st->nonce);
    if (sf.nonce_len <= cl || memcmp(sf.nonce, st->nonce, cl) != 0) {
        kn_errstr_set(errstr, n, "%s: the server nonce does not extend the client nonce", st->name);
        return KN_ERR__AUTHENTICATION;
    }
    if (sf.iterations < KNW_SCRAM_MIN_ITERATIONS || sf.iterations > KNW_SCRAM_MAX_ITERATIONS) {
        kn_errstr_set(errstr, n, "%s: iteration count %lld is outside [%d, %d]", st->name,
                      (long long)sf.iterations, KNW_SCRAM_MIN_ITERATIONS, KNW_SCRAM_MAX_ITERATIONS);
        return KN_ERR__AUTHENTICATION;
    }
    const EVP_MD *md = st->md_fn();
    size_t ml = st->md_len;
    uint8_t salted[SCRAM_MAX_MD], ckey[SCRAM_MAX_MD], stored[SCRAM_MAX_MD], skey[SCRAM_MAX_MD];
    uint8_t csig[SCRAM_MAX_MD], proof[SCRAM_MAX_MD];
    char *auth_msg = NULL;
    rc = KN_ERR__AUTHENTICATION;
    /* client-final-without-proof, then ",p=" and the proof in base64 */
    size_t wl = 9 + sf.nonce_len;
    size_t fl = wl + 3 + 4 * ((ml + 2) / 3) + 1;
    char *final = kn_malloc(fl);
    size_t al = strlen(st->first_bare) + 1 + in_len + 1 + wl;
    auth_msg = kn_malloc(al + 1);
    if (!final || !auth_msg) {
        kn_errstr_set(errstr, n, "out of memory");
        rc = KN_ERR__NOMEM;
        goto done;
    }
    int w = snprintf(final, fl, "c=biws,r=%.*s", (int)sf.nonce_len, sf.nonce);
    snprintf(auth_msg, al + 1, "%s,%.*s,%s", st->first_bare, (int)in_len, in, final);
    unsigned int dl = 0;
    if (PKCS5_PBKDF2_HMAC(st->password, (int)strlen(st->password), sf.salt, (int)sf.salt_len,
                          (int)sf.iterations, md, (int)ml, salted) != 1 ||
        !hmac(md, salted, ml, "Client Key", 10, ckey) || EVP_Digest(ckey, ml, stored, &dl, md, NULL) != 1 ||
        !hmac(md, stored, ml, auth_msg, strlen(auth_msg), csig) ||
        !hmac(md, salted, ml, "Server Key", 10, skey) ||
        !hmac(md, skey, ml, auth_msg, strlen(auth_msg), st->server_sig)) {
        kn_errstr_set(errstr, n, "%s: the key derivation failed in OpenSSL", st->name);
        goto done;
    }
    for (size_t i = 0; i < ml; i++)
        proof[i] = ckey[i] ^ csig[i];
    memcpy(final + w, ",p=", 3);
    int pl = EVP_EncodeBlock((unsigned char *) final + w + 3, proof, (int)ml);
    out->ptr = (uint8_t *) final;
    out->len = (size_t)w + 3 + (size_t)pl;
    final = NULL;
    st->stage = 1;
    rc = KNW_SASL_SEND;
done:
    OPENSSL_cleanse(salted, sizeof salted);
    OPENSSL_cleanse(ckey, sizeof ckey);
    OPENSSL_cleanse(stored, sizeof stored);
    OPENSSL_cleanse(skey, sizeof skey);
    OPENSSL_cleanse(csig, sizeof csig);
    OPENSSL_cleanse(proof, sizeof proof);
    kn_free(final);
    kn_free(auth_msg);
    return rc;
}

static int scram_step(void *state, const uint8_t *in, size_t in_len, knw_sasl_buf *out, char *errstr,
                      size_t n) {
    scram_state *st = state;
    if (st->stage == 0)
        return client_final(st, (const char *)in, in_len, out, errstr, n);
    if (st->stage == 1) {
        uint8_t sig[SCRAM_MAX_MD];
        size_t sl = 0;
        int rc = knw_scram_parse_server_final((const char *)in, in_len, sig, &sl, errstr, n);
        if (rc)
            return rc;
        if (sl != st->md_len || CRYPTO_memcmp(sig, st->server_sig, sl) != 0) {
            kn_errstr_set(errstr, n,
                          "%s: invalid server signature (the broker did not prove it knows the credential)",
                          st->name);
            return KN_ERR__AUTHENTICATION;
        }
        st->stage = 2;
        return KNW_SASL_DONE;
    }
    kn_errstr_set(errstr, n, "%s: unexpected server message after the exchange completed", st->name);
    return KN_ERR__AUTHENTICATION;
}

const knw_sasl_mech knw_sasl_scram_sha256 = {
    .name = "SCRAM-SHA-256",
    .login_module = "org.apache.kafka.common.security.scram.ScramLoginModule",
    .check = scram_check,
    .start = start256,
    .step = scram_step,
    .free = scram_free,
};

const knw_sasl_mech knw_sasl_scram_sha512 = {
    .name = "SCRAM-SHA-512",
    .login_module = "org.apache.kafka.common.security.scram.ScramLoginModule",
    .check = scram_check,
    .start = start512,
    .step = scram_step,
    .free = scram_free,
};
