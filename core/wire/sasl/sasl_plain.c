/*
 * sasl_plain.c: the PLAIN mechanism (RFC 4616): one token,
 * "\0username\0password" (no authorization id, as Java's PlainSaslClient
 * sends it), credentials from PlainLoginModule's username and password.
 */
#include <string.h>

#include <openssl/crypto.h>

#include "error.h"
#include "kn_alloc.h"
#include "wire/sasl/sasl.h"

typedef struct plain_state {
    bool sent;
} plain_state;

static int plain_check(const knw_sasl_conf *conf, char *errstr, size_t n) {
    const char *u = knw_jaas_get(&conf->jaas, "username"), *p = knw_jaas_get(&conf->jaas, "password");
    if (!u || !p) {
        kn_errstr_set(errstr, n,
                      "sasl.jaas.config: PLAIN needs the options username and password (%s missing)",
                      !u ? "username" : "password");
        return KN_ERR__CONFIG;
    }
    return 0;
}

static int plain_start(const knw_sasl_conf *conf, const char *host, void **state, knw_sasl_buf *out,
                       char *errstr, size_t n) {
    (void)host;
    const char *u = knw_jaas_get(&conf->jaas, "username"), *p = knw_jaas_get(&conf->jaas, "password");
    size_t ul = strlen(u), pl = strlen(p);
    plain_state *st = kn_calloc(1, sizeof *st);
    uint8_t *tok = kn_malloc(ul + pl + 2);
    if (!st || !tok) {
        kn_free(st);
        kn_free(tok);
        kn_errstr_set(errstr, n, "out of memory");
        return KN_ERR__NOMEM;
    }
    tok[0] = 0;
    memcpy(tok + 1, u, ul);
    tok[1 + ul] = 0;
    memcpy(tok + 2 + ul, p, pl);
    out->ptr = tok;
    out->len = ul + pl + 2;
    st->sent = true;
    *state = st;
    return 0;
}

static int plain_step(void *state, const uint8_t *in, size_t in_len, knw_sasl_buf *out, char *errstr,
                      size_t n) {
    (void)state;
    (void)in;
    (void)out;
    /* The broker answers PLAIN with an empty token; anything else means
     * the two sides disagree about the exchange. */
    if (in_len != 0) {
        kn_errstr_set(errstr, n, "PLAIN: unexpected server token of %zu bytes after the credentials", in_len);
        return KN_ERR__AUTHENTICATION;
    }
    return KNW_SASL_DONE;
}

static void plain_free(void *state) { kn_free(state); }

const knw_sasl_mech knw_sasl_plain = {
    .name = "PLAIN",
    .login_module = "org.apache.kafka.common.security.plain.PlainLoginModule",
    .check = plain_check,
    .start = plain_start,
    .step = plain_step,
    .free = plain_free,
};
