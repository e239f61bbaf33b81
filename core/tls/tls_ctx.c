/*
 * tls_ctx.c: ssl.* configuration -> SSL_CTX (see tls_ctx.h).
 *
 * Store types follow Java: ssl.truststore.type / ssl.keystore.type are
 * PEM or PKCS12 (JKS is Java's own format and is refused with the
 * keytool command that converts it). Java's default type is JKS; when
 * the type is left unset the file's own format is used instead (PEM
 * text or PKCS12 DER), and a real JKS file is still refused.
 */
#include "tls/tls_ctx.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include <openssl/err.h>
#include <openssl/pem.h>
#include <openssl/pkcs12.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>

#include "error.h"
#include "kn_alloc.h"

/* A key store or trust store is a few KiB; anything this large is not
 * one (and must not be read into memory whole). */
#define STORE_MAX_BYTES (16u << 20)

const char *knw_tls_reason(char *buf, size_t size) {
    unsigned long e = ERR_peek_last_error();
    const char *r = e ? ERR_reason_error_string(e) : NULL;
    if (r)
        snprintf(buf, size, "%s", r);
    else if (e)
        snprintf(buf, size, "OpenSSL error %lx", e);
    else
        snprintf(buf, size, "unknown error");
    ERR_clear_error();
    return buf;
}

void knw_tls_ctx_ref(void *ctx) {
    if (ctx)
        SSL_CTX_up_ref(ctx);
}

void knw_tls_ctx_free(void *ctx) { SSL_CTX_free(ctx); }

static const char *str_or_null(const kn_conf *conf, const char *key) {
    const char *v = kn_conf_get_str(conf, key);
    return v && *v ? v : NULL;
}

/* Reads path whole (capped). 0 or KN_ERR__CONFIG naming key. */
static int read_file(const char *key, const char *path, uint8_t **out, size_t *len, char *errstr, size_t n) {
    *out = NULL;
    *len = 0;
    FILE *f = fopen(path, "rb");
    if (!f) {
        kn_errstr_set(errstr, n, "%s: cannot open %s: %s", key, path, strerror(errno));
        return KN_ERR__SSL;
    }
    int rc = 0;
    size_t cap = 8192, got = 0;
    uint8_t *buf = kn_malloc(cap);
    while (buf) {
        if (got == cap) {
            if (cap >= STORE_MAX_BYTES) {
                kn_errstr_set(errstr, n, "%s: %s is larger than %u bytes: not a key or trust store", key,
                              path, STORE_MAX_BYTES);
                rc = KN_ERR__SSL;
                break;
            }
            uint8_t *nb = kn_realloc(buf, cap * 2);
            if (!nb)
                break;
            buf = nb;
            cap *= 2;
        }
        size_t r = fread(buf + got, 1, cap - got, f);
        got += r;
        if (r == 0) {
            if (ferror(f)) {
                kn_errstr_set(errstr, n, "%s: cannot read %s: %s", key, path, strerror(errno));
                rc = KN_ERR__SSL;
            }
            break;
        }
    }
    fclose(f);
    if (!buf) {
        kn_errstr_set(errstr, n, "out of memory reading %s", path);
        return KN_ERR__NOMEM;
    }
    if (!rc && got == 0) {
        kn_errstr_set(errstr, n, "%s: %s is empty", key, path);
        rc = KN_ERR__SSL;
    }
    if (rc) {
        kn_free(buf);
        return rc;
    }
    *out = buf;
    *len = got;
    return 0;
}

typedef enum { ST_PEM, ST_PKCS12, ST_JKS } store_type;

static bool looks_jks(const uint8_t *b, size_t len) {
    /* JKS magic 0xFEEDFEED, JCEKS 0xCECECECE */
    return len >= 4 && ((b[0] == 0xFE && b[1] == 0xED && b[2] == 0xFE && b[3] == 0xED) ||
                        (b[0] == 0xCE && b[1] == 0xCE && b[2] == 0xCE && b[3] == 0xCE));
}

static bool looks_pem(const uint8_t *b, size_t len) {
    static const char tag[] = "-----BEGIN ";
    for (size_t i = 0; i + sizeof tag - 1 <= len; i++)
        if (b[i] == '-' && !memcmp(b + i, tag, sizeof tag - 1))
            return true;
    return false;
}

/* The store type for prefix ("ssl.truststore" / "ssl.keystore"): the
 * configured one, or when unset the file's format (buf may be NULL for
 * inline PEM). Refuses JKS with the conversion command. */
static int resolve_type(const kn_conf *conf, const char *prefix, const char *path, const uint8_t *buf,
                        size_t len, store_type *out, char *errstr, size_t n) {
    char key[64];
    snprintf(key, sizeof key, "%s.type", prefix);
    const char *t = kn_conf_get_str(conf, key);
    bool set = kn_conf_is_set(conf, key);
    bool jks = false;
    if (set && t && !strcasecmp(t, "PEM"))
        *out = ST_PEM;
    else if (set && t && (!strcasecmp(t, "PKCS12") || !strcasecmp(t, "PKCS#12")))
        *out = ST_PKCS12;
    else if (set && t && (!strcasecmp(t, "JKS") || !strcasecmp(t, "JCEKS")))
        jks = true;
    else if (set) {
        kn_errstr_set(errstr, n, "%s: unsupported store type \"%s\" (supported: PEM, PKCS12)", key,
                      t ? t : "");
        return KN_ERR__CONFIG;
    } else if (!buf || looks_pem(buf, len))
        *out = ST_PEM;
    else if (looks_jks(buf, len))
        jks = true;
    else
        *out = ST_PKCS12;
    if (jks || (buf && looks_jks(buf, len))) {
        const char *p = path ? path : "store.jks";
        kn_errstr_set(errstr, n,
                      "%s: JKS is a Java-only key store format and is not supported (%s): convert it to "
                      "PKCS12 with `keytool -importkeystore -srckeystore %s -srcstoretype JKS "
                      "-destkeystore %.200s.p12 -deststoretype PKCS12` and set %s=PKCS12 and %s.location to "
                      "the new file",
                      key, p, p, p, key, prefix);
        return KN_ERR__CONFIG;
    }
    return 0;
}

/* ---- PEM ---- */

/* Appends every certificate in the PEM text to *out (created if NULL).
 * Returns 0 or KN_ERR__CONFIG naming what. */
static int pem_certs(const char *what, const void *pem, size_t len, STACK_OF(X509) * *out, char *errstr,
                     size_t n) {
    char why[160];
    BIO *bio = BIO_new_mem_buf(pem, (int)len);
    if (!*out)
        *out = sk_X509_new_null();
    if (!bio || !*out) {
        BIO_free(bio);
        kn_errstr_set(errstr, n, "out of memory");
        return KN_ERR__NOMEM;
    }
    int rc = 0, count = 0;
    ERR_clear_error();
    for (;;) {
        X509 *x = PEM_read_bio_X509(bio, NULL, NULL, NULL);
        if (!x)
            break;
        if (!sk_X509_push(*out, x)) {
            X509_free(x);
            rc = KN_ERR__NOMEM;
            kn_errstr_set(errstr, n, "out of memory");
            goto done;
        }
        count++;
    }
    unsigned long e = ERR_peek_last_error();
    if (e && !(ERR_GET_LIB(e) == ERR_LIB_PEM && ERR_GET_REASON(e) == PEM_R_NO_START_LINE)) {
        kn_errstr_set(errstr, n, "%s: bad PEM certificate after %d good one(s): %s", what, count,
                      knw_tls_reason(why, sizeof why));
        rc = KN_ERR__SSL;
        goto done;
    }
    if (!count) {
        kn_errstr_set(errstr, n, "%s: no PEM certificate found (expected \"-----BEGIN CERTIFICATE-----\")",
                      what);
        rc = KN_ERR__SSL;
    }
done:
    ERR_clear_error();
    BIO_free(bio);
    return rc;
}

typedef struct pw_ctx {
    const char *pw;
    bool asked;
} pw_ctx;

static int pw_cb(char *buf, int size, int rwflag, void *u) {
    (void)rwflag;
    pw_ctx *p = u;
    p->asked = true;
    if (!p->pw)
        return -1;
    size_t l = strlen(p->pw);
    if (l > (size_t)size)
        l = (size_t)size;
    memcpy(buf, p->pw, l);
    return (int)l;
}

/* The private key in the PEM text, decrypted with key_pw if encrypted. */
static int pem_key(const char *what, const void *pem, size_t len, const char *key_pw, EVP_PKEY **out,
                   char *errstr, size_t n) {
    char why[160];
    BIO *bio = BIO_new_mem_buf(pem, (int)len);
    if (!bio) {
        kn_errstr_set(errstr, n, "out of memory");
        return KN_ERR__NOMEM;
    }
    pw_ctx pw = {key_pw, false};
    ERR_clear_error();
    *out = PEM_read_bio_PrivateKey(bio, NULL, pw_cb, &pw);
    BIO_free(bio);
    if (*out) {
        ERR_clear_error();
        return 0;
    }
    if (pw.asked && !key_pw) {
        ERR_clear_error();
        kn_errstr_set(errstr, n, "%s: the private key is encrypted: set ssl.key.password", what);
    } else if (pw.asked) {
        kn_errstr_set(errstr, n,
                      "%s: cannot decrypt the private key with ssl.key.password (wrong password? %s)", what,
                      knw_tls_reason(why, sizeof why));
    } else if (!memmem(pem, len, "PRIVATE KEY-----", 16)) {
        ERR_clear_error();
        kn_errstr_set(errstr, n, "%s: no PEM private key found (expected \"-----BEGIN PRIVATE KEY-----\")",
                      what);
    } else {
        kn_errstr_set(errstr, n, "%s: bad PEM private key (%s)", what, knw_tls_reason(why, sizeof why));
    }
    return KN_ERR__SSL;
}

/* ---- PKCS12 ---- */

/* Parses a PKCS12 file with password pw_key's value. Outputs may be
 * NULL when the store holds none (a trust store has no key). */
static int p12_parse(const char *key, const char *path, const uint8_t *buf, size_t len, const char *pw_key,
                     const char *pw, EVP_PKEY **pkey, X509 **cert, STACK_OF(X509) * *ca, char *errstr,
                     size_t n) {
    char why[160];
    const unsigned char *p = buf;
    ERR_clear_error();
    PKCS12 *p12 = d2i_PKCS12(NULL, &p, (long)len);
    if (!p12) {
        kn_errstr_set(errstr, n, "%s: %s is not a PKCS12 file (%s)", key, path,
                      knw_tls_reason(why, sizeof why));
        return KN_ERR__SSL;
    }
    int rc = 0;
    if (PKCS12_mac_present(p12)) {
        bool ok = pw ? PKCS12_verify_mac(p12, pw, -1)
                     : PKCS12_verify_mac(p12, NULL, 0) || PKCS12_verify_mac(p12, "", 0);
        if (!ok) {
            ERR_clear_error();
            if (pw)
                kn_errstr_set(errstr, n, "%s: wrong %s for %s (the PKCS12 integrity check failed)", pw_key,
                              pw_key, path);
            else
                kn_errstr_set(errstr, n, "%s: %s is password-protected: set %s", key, path, pw_key);
            rc = KN_ERR__SSL;
            goto done;
        }
    }
    if (!PKCS12_parse(p12, pw, pkey, cert, ca)) {
        kn_errstr_set(errstr, n, "%s: cannot read %s (%s)", key, path, knw_tls_reason(why, sizeof why));
        rc = KN_ERR__SSL;
    }
done:
    PKCS12_free(p12);
    return rc;
}

/* ---- trust ---- */

static int add_trust(SSL_CTX *ctx, STACK_OF(X509) * certs, char *errstr, size_t n) {
    X509_STORE *st = SSL_CTX_get_cert_store(ctx);
    for (int i = 0; i < sk_X509_num(certs); i++)
        if (!X509_STORE_add_cert(st, sk_X509_value(certs, i))) {
            unsigned long e = ERR_peek_last_error();
            /* The same CA twice in a bundle is harmless. */
            if (ERR_GET_REASON(e) == X509_R_CERT_ALREADY_IN_HASH_TABLE) {
                ERR_clear_error();
                continue;
            }
            char why[160];
            kn_errstr_set(errstr, n, "trust store: %s", knw_tls_reason(why, sizeof why));
            return KN_ERR__SSL;
        }
    return 0;
}

static int load_trust(SSL_CTX *ctx, const kn_conf *conf, char *errstr, size_t n) {
    const char *inl = str_or_null(conf, "ssl.truststore.certificates");
    const char *loc = str_or_null(conf, "ssl.truststore.location");
    const char *pw = str_or_null(conf, "ssl.truststore.password");
    STACK_OF(X509) *certs = NULL;
    uint8_t *buf = NULL;
    size_t len = 0;
    store_type type;
    int rc = 0;
    if (inl && loc) {
        kn_errstr_set(
            errstr, n,
            "ssl.truststore.certificates and ssl.truststore.location are both set: use one of them");
        return KN_ERR__CONFIG;
    }
    if (!inl && !loc) {
        /* As Java falls back to the JVM's trust store. */
        if (!SSL_CTX_set_default_verify_paths(ctx)) {
            char why[160];
            kn_errstr_set(errstr, n,
                          "the system trust store cannot be loaded (%s): set ssl.truststore.location",
                          knw_tls_reason(why, sizeof why));
            return KN_ERR__SSL;
        }
        return 0;
    }
    if (loc && (rc = read_file("ssl.truststore.location", loc, &buf, &len, errstr, n)))
        return rc;
    if ((rc = resolve_type(conf, "ssl.truststore", loc, buf, len, &type, errstr, n)))
        goto done;
    if (inl && type != ST_PEM) {
        kn_errstr_set(errstr, n, "ssl.truststore.certificates needs ssl.truststore.type=PEM");
        rc = KN_ERR__CONFIG;
        goto done;
    }
    if (type == ST_PEM) {
        if (pw) {
            /* Java refuses it too: a PEM trust store has no password. */
            kn_errstr_set(errstr, n, "ssl.truststore.password cannot be used with a PEM trust store");
            rc = KN_ERR__CONFIG;
            goto done;
        }
        rc = inl ? pem_certs("ssl.truststore.certificates", inl, strlen(inl), &certs, errstr, n)
                 : pem_certs("ssl.truststore.location", buf, len, &certs, errstr, n);
    } else {
        EVP_PKEY *k = NULL;
        X509 *x = NULL;
        rc = p12_parse("ssl.truststore.location", loc, buf, len, "ssl.truststore.password", pw, &k, &x,
                       &certs, errstr, n);
        if (!rc && x) {
            if (!certs)
                certs = sk_X509_new_null();
            if (!certs || !sk_X509_push(certs, x)) {
                X509_free(x);
                rc = KN_ERR__NOMEM;
            }
            x = NULL;
        }
        X509_free(x);
        EVP_PKEY_free(k);
        if (!rc && sk_X509_num(certs) <= 0) {
            kn_errstr_set(errstr, n, "ssl.truststore.location: %s holds no certificate", loc);
            rc = KN_ERR__SSL;
        }
    }
    if (!rc)
        rc = add_trust(ctx, certs, errstr, n);
done:
    sk_X509_pop_free(certs, X509_free);
    if (buf)
        OPENSSL_cleanse(buf, len);
    kn_free(buf);
    return rc;
}

/* ---- client certificate ---- */

static int use_identity(SSL_CTX *ctx, EVP_PKEY *key, X509 *cert, STACK_OF(X509) * chain, const char *what,
                        char *errstr, size_t n) {
    char why[160];
    ERR_clear_error();
    if (!SSL_CTX_use_certificate(ctx, cert)) {
        kn_errstr_set(errstr, n, "%s: %s", what, knw_tls_reason(why, sizeof why));
        return KN_ERR__SSL;
    }
    if (!SSL_CTX_use_PrivateKey(ctx, key)) {
        kn_errstr_set(errstr, n, "%s: the private key does not match the certificate (%s)", what,
                      knw_tls_reason(why, sizeof why));
        return KN_ERR__SSL;
    }
    for (int i = 0; chain && i < sk_X509_num(chain); i++)
        if (!SSL_CTX_add1_chain_cert(ctx, sk_X509_value(chain, i))) {
            kn_errstr_set(errstr, n, "%s: %s", what, knw_tls_reason(why, sizeof why));
            return KN_ERR__SSL;
        }
    if (!SSL_CTX_check_private_key(ctx)) {
        ERR_clear_error();
        kn_errstr_set(errstr, n, "%s: the private key does not match the certificate", what);
        return KN_ERR__SSL;
    }
    return 0;
}

static int load_keystore(SSL_CTX *ctx, const kn_conf *conf, char *errstr, size_t n) {
    const char *chain_inl = str_or_null(conf, "ssl.keystore.certificate.chain");
    const char *key_inl = str_or_null(conf, "ssl.keystore.key");
    const char *loc = str_or_null(conf, "ssl.keystore.location");
    const char *store_pw = str_or_null(conf, "ssl.keystore.password");
    const char *key_pw = str_or_null(conf, "ssl.key.password");
    if (!chain_inl && !key_inl && !loc)
        return 0; /* no client certificate */
    EVP_PKEY *key = NULL;
    X509 *cert = NULL;
    STACK_OF(X509) *chain = NULL;
    uint8_t *buf = NULL;
    size_t len = 0;
    store_type type;
    const char *what = loc ? "ssl.keystore.location" : "ssl.keystore.key";
    int rc = 0;
    if ((chain_inl || key_inl) && loc) {
        kn_errstr_set(
            errstr, n,
            "ssl.keystore.location and ssl.keystore.key/ssl.keystore.certificate.chain are both set: "
            "use one of them");
        return KN_ERR__CONFIG;
    }
    if (!loc && (!chain_inl || !key_inl)) {
        kn_errstr_set(errstr, n, "%s is set without %s: both are needed for a client certificate",
                      key_inl ? "ssl.keystore.key" : "ssl.keystore.certificate.chain",
                      key_inl ? "ssl.keystore.certificate.chain" : "ssl.keystore.key");
        return KN_ERR__CONFIG;
    }
    if (loc && (rc = read_file("ssl.keystore.location", loc, &buf, &len, errstr, n)))
        return rc;
    if ((rc = resolve_type(conf, "ssl.keystore", loc, buf, len, &type, errstr, n)))
        goto done;
    if (!loc && type != ST_PEM) {
        kn_errstr_set(errstr, n,
                      "ssl.keystore.key and ssl.keystore.certificate.chain need ssl.keystore.type=PEM");
        rc = KN_ERR__CONFIG;
        goto done;
    }
    if (type == ST_PEM) {
        if (store_pw) {
            /* As Java: a PEM key store has only the key's password. */
            kn_errstr_set(errstr, n,
                          "ssl.keystore.password cannot be used with a PEM key store: an encrypted key's "
                          "password goes in ssl.key.password");
            rc = KN_ERR__CONFIG;
            goto done;
        }
        if (loc)
            rc = pem_key(what, buf, len, key_pw, &key, errstr, n);
        else
            rc = pem_key("ssl.keystore.key", key_inl, strlen(key_inl), key_pw, &key, errstr, n);
        if (!rc)
            rc = loc ? pem_certs(what, buf, len, &chain, errstr, n)
                     : pem_certs("ssl.keystore.certificate.chain", chain_inl, strlen(chain_inl), &chain,
                                 errstr, n);
        if (!rc) {
            cert = sk_X509_shift(chain);
        }
    } else {
        rc =
            p12_parse(what, loc, buf, len, "ssl.keystore.password", store_pw, &key, &cert, &chain, errstr, n);
        if (!rc && (!key || !cert)) {
            kn_errstr_set(errstr, n, "ssl.keystore.location: %s holds no private key with its certificate",
                          loc);
            rc = KN_ERR__SSL;
        }
    }
    if (!rc)
        rc = use_identity(ctx, key, cert, chain, what, errstr, n);
done:
    EVP_PKEY_free(key);
    X509_free(cert);
    sk_X509_pop_free(chain, X509_free);
    if (buf)
        OPENSSL_cleanse(buf, len);
    kn_free(buf);
    return rc;
}

/* ---- protocols and ciphers ---- */

static int proto_version(const char *name) {
    if (!strcasecmp(name, "TLSv1.2"))
        return TLS1_2_VERSION;
    if (!strcasecmp(name, "TLSv1.3"))
        return TLS1_3_VERSION;
    return 0;
}

static int set_protocols(SSL_CTX *ctx, const kn_conf *conf, char *errstr, size_t n) {
    const char *proto = str_or_null(conf, "ssl.protocol");
    int minv = TLS1_2_VERSION, maxv = TLS1_3_VERSION;
    if (proto && strcasecmp(proto, "TLS") && !proto_version(proto)) {
        kn_errstr_set(errstr, n, "ssl.protocol: \"%s\" is not supported (TLSv1.3, TLSv1.2 or TLS)", proto);
        return KN_ERR__CONFIG;
    }
    char **items = NULL;
    int count = 0;
    int rc = kn_conf_get_list(conf, "ssl.enabled.protocols", &items, &count);
    if (rc)
        return rc;
    if (count) {
        minv = maxv = 0;
        for (int i = 0; i < count; i++) {
            int v = proto_version(items[i]);
            if (!v) {
                kn_errstr_set(errstr, n, "ssl.enabled.protocols: \"%s\" is not supported (TLSv1.2, TLSv1.3)",
                              items[i]);
                rc = KN_ERR__CONFIG;
                break;
            }
            minv = !minv || v < minv ? v : minv;
            maxv = v > maxv ? v : maxv;
        }
    } else if (proto && !strcasecmp(proto, "TLSv1.2")) {
        /* No enabled list: the protocol's own defaults, as Java's
         * SSLContext for that protocol. */
        maxv = TLS1_2_VERSION;
    }
    kn_conf_list_free(items, count);
    if (rc)
        return rc;
    if (!SSL_CTX_set_min_proto_version(ctx, minv) || !SSL_CTX_set_max_proto_version(ctx, maxv)) {
        char why[160];
        kn_errstr_set(errstr, n, "ssl.enabled.protocols: %s", knw_tls_reason(why, sizeof why));
        return KN_ERR__CONFIG;
    }
    return 0;
}

/* Appends s to a ':'-separated list (bounded). */
static bool list_add(char *list, size_t cap, const char *s) {
    size_t l = strlen(list), sl = strlen(s);
    if (l + sl + 2 > cap)
        return false;
    if (l)
        list[l++] = ':';
    memcpy(list + l, s, sl + 1);
    return true;
}

/* ssl.cipher.suites takes Java's (IANA) names, e.g.
 * TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256 or TLS_AES_128_GCM_SHA256;
 * OpenSSL's own names are accepted too. TLS 1.3 suites and older ones
 * are configured separately in OpenSSL; a list that names only one kind
 * limits the protocol versions to that kind, as Java would by finding
 * no usable suite for the other. */
static int set_ciphers(SSL_CTX *ctx, const kn_conf *conf, char *errstr, size_t n) {
    char **items = NULL;
    int count = 0;
    int rc = kn_conf_get_list(conf, "ssl.cipher.suites", &items, &count);
    if (rc || !count) {
        kn_conf_list_free(items, count);
        return rc;
    }
    char tls12[4096] = "", tls13[1024] = "", why[160];
    SSL_CTX *all = SSL_CTX_new(TLS_client_method());
    STACK_OF(SSL_CIPHER) *sk = NULL;
    if (!all || !SSL_CTX_set_cipher_list(all, "ALL:COMPLEMENTOFALL") || !(sk = SSL_CTX_get_ciphers(all))) {
        kn_errstr_set(errstr, n, "ssl.cipher.suites: %s", knw_tls_reason(why, sizeof why));
        rc = KN_ERR__CONFIG;
        goto done;
    }
    for (int i = 0; i < count && !rc; i++) {
        const SSL_CIPHER *found = NULL;
        for (int j = 0; j < sk_SSL_CIPHER_num(sk) && !found; j++) {
            const SSL_CIPHER *c = sk_SSL_CIPHER_value(sk, j);
            const char *std = SSL_CIPHER_standard_name(c);
            if ((std && !strcasecmp(std, items[i])) || !strcasecmp(SSL_CIPHER_get_name(c), items[i]))
                found = c;
        }
        if (!found) {
            kn_errstr_set(errstr, n, "ssl.cipher.suites: unknown or unavailable cipher suite \"%s\"",
                          items[i]);
            rc = KN_ERR__CONFIG;
        } else if (!strcmp(SSL_CIPHER_get_version(found), "TLSv1.3")) {
            if (!list_add(tls13, sizeof tls13, SSL_CIPHER_get_name(found)))
                rc = KN_ERR__CONFIG;
        } else if (!list_add(tls12, sizeof tls12, SSL_CIPHER_get_name(found))) {
            rc = KN_ERR__CONFIG;
        }
        if (rc && found)
            kn_errstr_set(errstr, n, "ssl.cipher.suites: the list is too long");
    }
    if (rc)
        goto done;
    if ((tls12[0] && !SSL_CTX_set_cipher_list(ctx, tls12)) ||
        (tls13[0] && !SSL_CTX_set_ciphersuites(ctx, tls13))) {
        kn_errstr_set(errstr, n, "ssl.cipher.suites: %s", knw_tls_reason(why, sizeof why));
        rc = KN_ERR__CONFIG;
        goto done;
    }
    if (!tls13[0] && SSL_CTX_get_max_proto_version(ctx) != TLS1_2_VERSION) {
        if (SSL_CTX_get_min_proto_version(ctx) == TLS1_3_VERSION) {
            kn_errstr_set(errstr, n, "ssl.cipher.suites names no TLS 1.3 suite but only TLSv1.3 is enabled");
            rc = KN_ERR__CONFIG;
            goto done;
        }
        SSL_CTX_set_max_proto_version(ctx, TLS1_2_VERSION);
    }
    if (!tls12[0]) {
        if (SSL_CTX_get_max_proto_version(ctx) == TLS1_2_VERSION) {
            kn_errstr_set(errstr, n,
                          "ssl.cipher.suites names only TLS 1.3 suites but TLSv1.3 is not enabled");
            rc = KN_ERR__CONFIG;
            goto done;
        }
        SSL_CTX_set_min_proto_version(ctx, TLS1_3_VERSION);
    }
done:
    SSL_CTX_free(all);
    kn_conf_list_free(items, count);
    return rc;
}

/* Java-only knobs: accepted at the values that mean what OpenSSL does
 * anyway, refused otherwise rather than silently ignored. */
static int check_java_only(const kn_conf *conf, char *errstr, size_t n) {
    static const char *const no_value[] = {"ssl.provider", "ssl.secure.random.implementation"};
    for (size_t i = 0; i < sizeof no_value / sizeof *no_value; i++)
        if (str_or_null(conf, no_value[i])) {
            kn_errstr_set(errstr, n, "%s is a Java security provider setting and is not supported",
                          no_value[i]);
            return KN_ERR__CONFIG;
        }
    const char *km = str_or_null(conf, "ssl.keymanager.algorithm");
    if (km && strcasecmp(km, "SunX509") && strcasecmp(km, "NewSunX509") && strcasecmp(km, "PKIX")) {
        kn_errstr_set(errstr, n, "ssl.keymanager.algorithm: \"%s\" is not supported (SunX509, PKIX)", km);
        return KN_ERR__CONFIG;
    }
    const char *tm = str_or_null(conf, "ssl.trustmanager.algorithm");
    if (tm && strcasecmp(tm, "PKIX") && strcasecmp(tm, "SunX509")) {
        kn_errstr_set(errstr, n, "ssl.trustmanager.algorithm: \"%s\" is not supported (PKIX)", tm);
        return KN_ERR__CONFIG;
    }
    return 0;
}

int knw_tls_ctx_new(const kn_conf *conf, void **out, bool *verify_host, char *errstr, size_t n) {
    *out = NULL;
    char why[160];
    const char *alg = kn_conf_get_str(conf, "ssl.endpoint.identification.algorithm");
    if (alg && *alg && strcasecmp(alg, "https")) {
        kn_errstr_set(
            errstr, n,
            "ssl.endpoint.identification.algorithm: \"%s\" is not supported (\"https\", or empty to "
            "turn hostname verification off)",
            alg);
        return KN_ERR__CONFIG;
    }
    *verify_host = alg && *alg;
    int rc = check_java_only(conf, errstr, n);
    if (rc)
        return rc;
    ERR_clear_error();
    SSL_CTX *ctx = SSL_CTX_new(TLS_client_method());
    if (!ctx) {
        kn_errstr_set(errstr, n, "TLS: %s", knw_tls_reason(why, sizeof why));
        return KN_ERR__NOMEM;
    }
    SSL_CTX_set_verify(ctx, SSL_VERIFY_PEER, NULL);
    /* The send queue offers the same bytes again after EAGAIN, but
     * rebuilds the iovec: the buffer may move (transport.h). */
    SSL_CTX_set_mode(ctx, SSL_MODE_ENABLE_PARTIAL_WRITE | SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER);
    /* Fewer recv calls per record; transport_tls.c's pending() copes with
     * the raw bytes this keeps buffered. */
    SSL_CTX_set_read_ahead(ctx, 1);
    if ((rc = set_protocols(ctx, conf, errstr, n)) || (rc = set_ciphers(ctx, conf, errstr, n)) ||
        (rc = load_trust(ctx, conf, errstr, n)) || (rc = load_keystore(ctx, conf, errstr, n))) {
        SSL_CTX_free(ctx);
        ERR_clear_error();
        return rc;
    }
    *out = ctx;
    return 0;
}
