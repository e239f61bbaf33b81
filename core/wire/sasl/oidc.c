/*
 * oidc.c: the client-credentials token retriever (see oidc.h), with
 * libcurl for HTTP(S).
 *
 * Request (Java's ClientSecretRequestFormatter): POST, headers Accept:
 * application/json, Authorization: Basic base64(id ":" secret) (id and
 * secret form-encoded first when sasl.oauthbearer.header.urlencode),
 * Cache-Control: no-cache, Content-Type: application/x-www-form-urlencoded;
 * body grant_type=client_credentials[&scope=<form-encoded scope>].
 *
 * Retries (Java's Retry): a transport error or an unexpected status is
 * tried again after sasl.login.retry.backoff.ms, doubling, until
 * sasl.login.retry.backoff.max.ms have passed since the first attempt;
 * the 4xx/5xx statuses Java calls unretryable fail at once. Timeouts:
 * sasl.login.connect.timeout.ms for the connect, and the whole answer
 * within connect + sasl.login.read.timeout.ms (both 10 s when unset;
 * Java's JDK default would wait forever). Redirects are not followed;
 * only http and https are spoken.
 *
 * TLS: the ssl.* options of sasl.jaas.config (Java's JaasOptionsUtils)
 * are loaded by the same code as the broker connections' ssl.* keys
 * (tls_ctx.c) and handed to libcurl's OpenSSL context; without them the
 * system's CA store is used, as Java uses the JVM's.
 */
#include <ctype.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include <curl/curl.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/ssl.h>

#include "config/config.h"
#include "error.h"
#include "json.h"
#include "kn_alloc.h"
#include "wire/sasl/oidc.h"
#include "wire/sasl/sasl.h"
#include "wire/tls_ctx.h"

#define DEFAULT_TIMEOUT_MS    10000
#define RELOGIN_EXCERPT_BYTES 200

struct knw_oidc {
    atomic_int refs;
    atomic_bool cancel;
    char *url, *client_id, *client_secret, *scope; /* owned; the secret cleared */
    bool urlencode;
    long connect_ms, read_ms;
    int64_t backoff_ms, backoff_max_ms;
    char *sub_claim, *scope_claim;
    void *ssl_ctx; /* SSL_CTX from the ssl.* JAAS options, or NULL */
    bool verify_host;
    char **ext; /* extension_<name> options: name, value pairs */
    size_t ext_count;
    char *last_jwt; /* the token handed to the store; cleared when replaced */
    char principal[256];
};

static void free_secret(char *s) {
    if (s) {
        OPENSSL_cleanse(s, strlen(s));
        kn_free(s);
    }
}

static int64_t epoch_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static int64_t mono_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

void knw_oidc_ref(knw_oidc *o) {
    if (o)
        atomic_fetch_add(&o->refs, 1);
}

void knw_oidc_free(knw_oidc *o) {
    if (!o || atomic_fetch_sub(&o->refs, 1) != 1)
        return;
    kn_free(o->url);
    kn_free(o->client_id);
    free_secret(o->client_secret);
    kn_free(o->scope);
    kn_free(o->sub_claim);
    kn_free(o->scope_claim);
    knw_tls_ctx_free(o->ssl_ctx);
    for (size_t i = 0; i < o->ext_count * 2; i++)
        kn_free(o->ext[i]);
    kn_free(o->ext);
    free_secret(o->last_jwt);
    kn_free(o);
}

void knw_oidc_cancel(knw_oidc *o) {
    if (o)
        atomic_store(&o->cancel, true);
}

const char *knw_oidc_url(const knw_oidc *o) { return o->url; }

/* ---- settings ---- */

static bool has_prefix(const char *s, const char *p) { return !strncmp(s, p, strlen(p)); }

static bool has_unsecured_options(const knw_jaas *jaas) {
    for (int i = 0; i < jaas->option_count; i++)
        if (has_prefix(jaas->options[i].key, "unsecuredLogin"))
            return true;
    return false;
}

/* Java's ConfigOrJaas: the configuration key first, then the option. */
static const char *config_or_jaas(const kn_conf *conf, const knw_jaas *jaas, const char *key,
                                  const char *opt) {
    const char *v = kn_conf_get_str(conf, key);
    if (v && *v)
        return v;
    v = knw_jaas_get(jaas, opt);
    return v && *v ? v : NULL;
}

static char *trimmed_dup(const char *s) {
    while (*s == ' ' || *s == '\t')
        s++;
    size_t n = strlen(s);
    while (n && (s[n - 1] == ' ' || s[n - 1] == '\t'))
        n--;
    char *d = kn_malloc(n + 1);
    if (d) {
        memcpy(d, s, n);
        d[n] = 0;
    }
    return d;
}

/* The ssl.* options of sasl.jaas.config, loaded as a client's ssl.* keys. */
static int load_tls(knw_oidc *o, const knw_jaas *jaas, char *errstr, size_t n) {
    kn_conf *tc = kn_conf_new(KN_CLIENT_PRODUCER);
    char why[512];
    int rc = tc ? 0 : KN_ERR__NOMEM;
    for (int i = 0; !rc && i < jaas->option_count; i++) {
        const char *k = jaas->options[i].key;
        if (!has_prefix(k, "ssl."))
            continue;
        if (kn_conf_set(tc, k, jaas->options[i].value, why, sizeof why)) {
            kn_errstr_set(errstr, n,
                          "sasl.jaas.config: OAuthBearerLoginModule option %s (for the token endpoint): %s",
                          k, why);
            rc = KN_ERR__CONFIG;
        }
    }
    if (!rc && knw_tls_ctx_new(tc, &o->ssl_ctx, &o->verify_host, why, sizeof why)) {
        kn_errstr_set(errstr, n,
                      "sasl.jaas.config: the token endpoint's TLS settings (OAuthBearerLoginModule "
                      "ssl.* options): %s",
                      why);
        rc = KN_ERR__CONFIG;
    }
    kn_conf_destroy(tc);
    return rc;
}

static int timeout_key(const kn_conf *conf, const char *key, long *out, char *errstr, size_t n) {
    *out = DEFAULT_TIMEOUT_MS;
    if (!kn_conf_is_set(conf, key))
        return 0;
    int64_t v = kn_conf_get_int(conf, key);
    if (v <= 0) {
        kn_errstr_set(errstr, n, "%s must be a positive number of milliseconds", key);
        return KN_ERR__CONFIG;
    }
    *out = (long)v;
    return 0;
}

static int read_settings(knw_oidc *o, const kn_conf *conf, const knw_jaas *jaas, char *errstr, size_t n) {
    const char *url = kn_conf_get_str(conf, "sasl.oauthbearer.token.endpoint.url");
    if (!url || !*url) {
        kn_errstr_set(errstr, n,
                      "sasl.oauthbearer.token.endpoint.url is required with "
                      "sasl.login.callback.handler.class=%s",
                      KNW_OIDC_HANDLER);
        return KN_ERR__CONFIG;
    }
    bool https = !strncasecmp(url, "https://", 8);
    if (!https && strncasecmp(url, "http://", 7)) {
        kn_errstr_set(errstr, n, "sasl.oauthbearer.token.endpoint.url must be an http:// or https:// URL%s",
                      !strncasecmp(url, "file:", 5)
                          ? " (a file: token, Java's FileJwtRetriever, is not supported: "
                            "use kn_conf_set_oauthbearer_token_cb)"
                          : "");
        return KN_ERR__CONFIG;
    }
    const char *id = config_or_jaas(conf, jaas, "sasl.oauthbearer.client.credentials.client.id", "clientId");
    const char *secret =
        config_or_jaas(conf, jaas, "sasl.oauthbearer.client.credentials.client.secret", "clientSecret");
    if (!id || !secret) {
        const char *what = !id ? "sasl.oauthbearer.client.credentials.client.id"
                               : "sasl.oauthbearer.client.credentials.client.secret";
        kn_errstr_set(errstr, n,
                      "the token endpoint needs %s (or the %s option of sasl.jaas.config's "
                      "OAuthBearerLoginModule)",
                      what, !id ? "clientId" : "clientSecret");
        return KN_ERR__CONFIG;
    }
    const char *scope = config_or_jaas(conf, jaas, "sasl.oauthbearer.scope", "scope");
    const char *sub = kn_conf_get_str(conf, "sasl.oauthbearer.sub.claim.name");
    const char *scl = kn_conf_get_str(conf, "sasl.oauthbearer.scope.claim.name");
    o->urlencode = kn_conf_get_bool(conf, "sasl.oauthbearer.header.urlencode") == 1;
    o->backoff_ms = kn_conf_get_int(conf, "sasl.login.retry.backoff.ms");
    o->backoff_max_ms = kn_conf_get_int(conf, "sasl.login.retry.backoff.max.ms");
    if (o->backoff_ms < 0 || o->backoff_max_ms < 0 || o->backoff_max_ms < o->backoff_ms) {
        kn_errstr_set(errstr, n,
                      "sasl.login.retry.backoff.ms (%lld) and sasl.login.retry.backoff.max.ms (%lld) "
                      "must be non-negative, the maximum not below the first",
                      (long long)o->backoff_ms, (long long)o->backoff_max_ms);
        return KN_ERR__CONFIG;
    }
    int rc = timeout_key(conf, "sasl.login.connect.timeout.ms", &o->connect_ms, errstr, n);
    if (!rc)
        rc = timeout_key(conf, "sasl.login.read.timeout.ms", &o->read_ms, errstr, n);
    if (rc)
        return rc;
    if (!(o->url = kn_strdup(url)) || !(o->client_id = kn_strdup(id)) ||
        !(o->client_secret = kn_strdup(secret)) || (scope && !(o->scope = trimmed_dup(scope))) ||
        !(o->sub_claim = trimmed_dup(sub && *sub ? sub : "sub")) ||
        !(o->scope_claim = trimmed_dup(scl && *scl ? scl : "scope")))
        return KN_ERR__NOMEM;
    if (!*o->sub_claim || !*o->scope_claim) {
        kn_errstr_set(errstr, n, "sasl.oauthbearer.%s.claim.name must not be blank",
                      !*o->sub_claim ? "sub" : "scope");
        return KN_ERR__CONFIG;
    }
    /* extension_<name>: SASL extensions, as Java's handler sends them. */
    for (int i = 0; i < jaas->option_count; i++) {
        const char *k = jaas->options[i].key, *v = jaas->options[i].value;
        if (!has_prefix(k, "extension_"))
            continue;
        if (!knw_oauthbearer_ext_ok(k + 10, v)) {
            kn_errstr_set(errstr, n,
                          "sasl.jaas.config: OAuthBearerLoginModule option %s: an extension name must "
                          "be letters only and not \"auth\", its value printable ASCII (RFC 7628)",
                          k);
            return KN_ERR__CONFIG;
        }
        char **ext = kn_realloc(o->ext, (o->ext_count + 1) * 2 * sizeof *ext);
        if (!ext)
            return KN_ERR__NOMEM;
        o->ext = ext;
        ext[o->ext_count * 2] = kn_strdup(k + 10);
        ext[o->ext_count * 2 + 1] = kn_strdup(v);
        o->ext_count++;
        if (!ext[o->ext_count * 2 - 2] || !ext[o->ext_count * 2 - 1])
            return KN_ERR__NOMEM;
    }
    return https ? load_tls(o, jaas, errstr, n) : 0;
}

int knw_oidc_from(const kn_conf *conf, const knw_jaas *jaas, knw_oidc **out, char *errstr, size_t n) {
    *out = NULL;
    const char *cls = kn_conf_get_str(conf, "sasl.login.callback.handler.class");
    const char *url = kn_conf_get_str(conf, "sasl.oauthbearer.token.endpoint.url");
    bool use;
    if (cls && *cls)
        use = !strcmp(cls, KNW_OIDC_HANDLER);
    else /* Java would make an unsecured token here; nothing accepts it where an endpoint is configured */
        use = url && *url && !has_unsecured_options(jaas);
    if (!use)
        return 0;
    knw_oidc *o = kn_calloc(1, sizeof *o);
    if (!o)
        return KN_ERR__NOMEM;
    atomic_init(&o->refs, 1);
    int rc = read_settings(o, conf, jaas, errstr, n);
    if (rc == KN_ERR__NOMEM)
        kn_errstr_set(errstr, n, "out of memory");
    if (rc) {
        knw_oidc_free(o);
        return rc;
    }
    *out = o;
    return 0;
}

/* ---- one HTTP exchange ---- */

typedef struct body_buf {
    char *p;
    size_t len, cap;
    bool too_big;
} body_buf;

static size_t on_body(char *ptr, size_t size, size_t nmemb, void *ud) {
    body_buf *b = ud;
    size_t n = size * nmemb;
    if (b->len + n + 1 > KNW_JWT_MAX_RESPONSE + 1) {
        b->too_big = true;
        return 0; /* curl fails the transfer */
    }
    if (b->len + n + 1 > b->cap) {
        size_t cap = b->cap ? b->cap : 4096;
        while (cap < b->len + n + 1)
            cap *= 2;
        char *np = kn_malloc(cap);
        if (!np)
            return 0;
        if (b->p) {
            memcpy(np, b->p, b->len);
            OPENSSL_cleanse(b->p, b->cap);
            kn_free(b->p);
        }
        b->p = np;
        b->cap = cap;
    }
    memcpy(b->p + b->len, ptr, n);
    b->len += n;
    b->p[b->len] = 0;
    return n;
}

static void body_free(body_buf *b) {
    if (b->p) {
        OPENSSL_cleanse(b->p, b->cap);
        kn_free(b->p);
    }
    memset(b, 0, sizeof *b);
}

static int on_progress(void *ud, curl_off_t dt, curl_off_t dn, curl_off_t ut, curl_off_t un) {
    (void)dt, (void)dn, (void)ut, (void)un;
    return atomic_load(&((knw_oidc *)ud)->cancel) ? 1 : 0;
}

/* Our trust store (and client certificate, protocol bounds) into the
 * context libcurl made for this connection. */
static CURLcode on_ssl_ctx(CURL *curl, void *sslctx, void *parm) {
    (void)curl;
    SSL_CTX *ours = parm, *theirs = sslctx;
    SSL_CTX_set1_cert_store(theirs, SSL_CTX_get_cert_store(ours));
    X509 *cert = SSL_CTX_get0_certificate(ours);
    EVP_PKEY *key = SSL_CTX_get0_privatekey(ours);
    if (cert && key) {
        STACK_OF(X509) *chain = NULL;
        SSL_CTX_get0_chain_certs(ours, &chain);
        if (SSL_CTX_use_certificate(theirs, cert) != 1 || SSL_CTX_use_PrivateKey(theirs, key) != 1 ||
            (chain && SSL_CTX_set1_chain(theirs, chain) != 1))
            return CURLE_SSL_CERTPROBLEM;
    }
    SSL_CTX_set_min_proto_version(theirs, SSL_CTX_get_min_proto_version(ours));
    SSL_CTX_set_max_proto_version(theirs, SSL_CTX_get_max_proto_version(ours));
    return CURLE_OK;
}

static pthread_once_t curl_once = PTHREAD_ONCE_INIT;
static CURLcode curl_init_rc;
static void curl_init(void) { curl_init_rc = curl_global_init(CURL_GLOBAL_DEFAULT); }

/* application/x-www-form-urlencoded, as Java's URLEncoder. */
static char *form_encode(const char *s) {
    size_t n = strlen(s);
    char *o = kn_malloc(3 * n + 1), *p = o;
    if (!o)
        return NULL;
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        if (isalnum(c) || c == '.' || c == '-' || c == '*' || c == '_')
            *p++ = (char)c;
        else if (c == ' ')
            *p++ = '+';
        else
            p += sprintf(p, "%%%02X", c);
    }
    *p = 0;
    return o;
}

static char *basic_auth(const knw_oidc *o) {
    char *id = o->urlencode ? form_encode(o->client_id) : kn_strdup(o->client_id);
    char *secret = o->urlencode ? form_encode(o->client_secret) : kn_strdup(o->client_secret);
    char *pair = NULL, *hdr = NULL;
    if (id && secret && (pair = kn_malloc(strlen(id) + strlen(secret) + 2))) {
        size_t pl = (size_t)sprintf(pair, "%s:%s", id, secret);
        size_t b64 = 4 * ((pl + 2) / 3);
        if ((hdr = kn_malloc(b64 + 32))) {
            int w = sprintf(hdr, "Authorization: Basic ");
            EVP_EncodeBlock((unsigned char *)hdr + w, (const unsigned char *)pair, (int)pl);
        }
    }
    free_secret(id);
    free_secret(secret);
    free_secret(pair);
    return hdr;
}

/* A short, printable excerpt of a failed answer; Java's shape for an
 * OAuth error ({error - error_description}) when it is one. */
static void excerpt(const body_buf *b, char *out, size_t cap) {
    kn_json_val e, d;
    char why[64], es[96], ds[160];
    if (b->len && !kn_json_get(b->p, b->len, "error", &e, why, sizeof why) && e.type == KN_JSON_STRING &&
        !kn_json_string(&e, es, sizeof es, NULL)) {
        if (kn_json_get(b->p, b->len, "error_description", &d, why, sizeof why) || d.type != KN_JSON_STRING ||
            kn_json_string(&d, ds, sizeof ds, NULL))
            ds[0] = 0;
        snprintf(out, cap, "{%s - %s}", es, ds);
        return;
    }
    size_t k = 0;
    for (size_t i = 0; i < b->len && i < RELOGIN_EXCERPT_BYTES && k + 1 < cap; i++) {
        unsigned char c = (unsigned char)b->p[i];
        out[k++] = c >= 0x20 && c < 0x7f ? (char)c : ' ';
    }
    out[k] = 0;
    if (!k)
        snprintf(out, cap, "(empty body)");
}

/* Java's unretryable statuses (HttpJwtRetriever). */
static bool fatal_status(long s) {
    static const long codes[] = {400, 401, 402, 403, 404, 405, 406, 407, 409,
                                 410, 411, 412, 413, 414, 415, 501, 505};
    for (size_t i = 0; i < sizeof codes / sizeof codes[0]; i++)
        if (codes[i] == s)
            return true;
    return false;
}

enum { ATT_OK = 0, ATT_RETRY = 1, ATT_FATAL = 2 };

static int attempt(knw_oidc *o, body_buf *body, char *errstr, size_t n) {
    char cerr[CURL_ERROR_SIZE] = "";
    struct curl_slist *hdrs = NULL;
    char *auth = basic_auth(o), *scope = o->scope && *o->scope ? form_encode(o->scope) : NULL;
    char *post = NULL;
    int rc = ATT_FATAL;
    CURL *h = curl_easy_init();
    if (!h || !auth || (o->scope && *o->scope && !scope) ||
        !(post = kn_malloc(64 + (scope ? strlen(scope) : 0)))) {
        kn_errstr_set(errstr, n, "out of memory");
        goto done;
    }
    sprintf(post, "grant_type=client_credentials%s%s", scope ? "&scope=" : "", scope ? scope : "");
    struct curl_slist *t;
    const char *fixed[] = {"Accept: application/json", "Cache-Control: no-cache",
                           "Content-Type: application/x-www-form-urlencoded", auth};
    for (size_t i = 0; i < 4; i++) {
        if (!(t = curl_slist_append(hdrs, fixed[i]))) {
            kn_errstr_set(errstr, n, "out of memory");
            goto done;
        }
        hdrs = t;
    }
    curl_easy_setopt(h, CURLOPT_URL, o->url);
    curl_easy_setopt(h, CURLOPT_PROTOCOLS_STR, "http,https");
    curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(h, CURLOPT_FOLLOWLOCATION, 0L);
    curl_easy_setopt(h, CURLOPT_HTTPHEADER, hdrs);
    curl_easy_setopt(h, CURLOPT_POSTFIELDS, post);
    curl_easy_setopt(h, CURLOPT_CONNECTTIMEOUT_MS, o->connect_ms);
    curl_easy_setopt(h, CURLOPT_TIMEOUT_MS, o->connect_ms + o->read_ms);
    curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, on_body);
    curl_easy_setopt(h, CURLOPT_WRITEDATA, body);
    curl_easy_setopt(h, CURLOPT_NOPROGRESS, 0L);
    curl_easy_setopt(h, CURLOPT_XFERINFOFUNCTION, on_progress);
    curl_easy_setopt(h, CURLOPT_XFERINFODATA, o);
    curl_easy_setopt(h, CURLOPT_ERRORBUFFER, cerr);
    curl_easy_setopt(h, CURLOPT_USERAGENT, "kafka-native");
    if (o->ssl_ctx) {
        curl_easy_setopt(h, CURLOPT_SSL_VERIFYPEER, 1L);
        curl_easy_setopt(h, CURLOPT_SSL_VERIFYHOST, o->verify_host ? 2L : 0L);
        curl_easy_setopt(h, CURLOPT_SSL_CTX_FUNCTION, on_ssl_ctx);
        curl_easy_setopt(h, CURLOPT_SSL_CTX_DATA, o->ssl_ctx);
    }
    CURLcode cc = curl_easy_perform(h);
    if (cc != CURLE_OK) {
        if (body->too_big) {
            kn_errstr_set(errstr, n, "the token endpoint %s answered with over %d bytes", o->url,
                          KNW_JWT_MAX_RESPONSE);
        } else if (cc == CURLE_ABORTED_BY_CALLBACK) {
            kn_errstr_set(errstr, n,
                          "the request to the token endpoint %s was cancelled (the client is closing)",
                          o->url);
        } else if (cc == CURLE_OPERATION_TIMEDOUT) {
            kn_errstr_set(errstr, n,
                          "the token endpoint %s did not answer in time (sasl.login.connect.timeout.ms "
                          "%ld, sasl.login.read.timeout.ms %ld): %s",
                          o->url, o->connect_ms, o->read_ms, cerr[0] ? cerr : curl_easy_strerror(cc));
            rc = ATT_RETRY;
        } else {
            long os_errno = 0;
            curl_easy_getinfo(h, CURLINFO_OS_ERRNO, &os_errno);
            kn_errstr_set(errstr, n, "cannot get a token from %s: %s%s%s%s", o->url,
                          cerr[0] ? cerr : curl_easy_strerror(cc), os_errno ? " (" : "",
                          os_errno ? strerror((int)os_errno) : "", os_errno ? ")" : "");
            rc = ATT_RETRY;
        }
        goto done;
    }
    long status = 0;
    curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &status);
    if (status == 200 || status == 201) {
        rc = ATT_OK;
        goto done;
    }
    char ex[RELOGIN_EXCERPT_BYTES + 8];
    excerpt(body, ex, sizeof ex);
    kn_errstr_set(errstr, n, "the token endpoint %s answered HTTP %ld: %s", o->url, status, ex);
    rc = fatal_status(status) ? ATT_FATAL : ATT_RETRY;
done:
    if (h)
        curl_easy_cleanup(h);
    curl_slist_free_all(hdrs);
    free_secret(auth);
    kn_free(scope);
    kn_free(post);
    return rc;
}

/* Sleeps ms unless cancelled; false when cancelled. */
static bool nap(knw_oidc *o, int64_t ms) {
    int64_t end = mono_ms() + ms;
    while (!atomic_load(&o->cancel)) {
        int64_t left = end - mono_ms();
        if (left <= 0)
            return true;
        struct timespec ts = {0, (left > 50 ? 50 : left) * 1000000L};
        nanosleep(&ts, NULL);
    }
    return false;
}

int knw_oidc_fetch(knw_oidc *o, char **jwt, knw_jwt_claims *claims, char *errstr, size_t n) {
    *jwt = NULL;
    pthread_once(&curl_once, curl_init);
    if (curl_init_rc != CURLE_OK) {
        kn_errstr_set(errstr, n, "libcurl failed to initialize: %s", curl_easy_strerror(curl_init_rc));
        return KN_ERR__AUTHENTICATION;
    }
    int64_t start = mono_ms();
    int tries = 0, rc;
    body_buf body = {0};
    char err[600] = "";
    for (;;) {
        tries++;
        body_free(&body);
        rc = attempt(o, &body, err, sizeof err);
        if (rc != ATT_RETRY)
            break;
        int64_t elapsed = mono_ms() - start;
        int64_t wait = o->backoff_ms;
        for (int i = 1; i < tries && wait < o->backoff_max_ms; i++)
            wait *= 2;
        if (wait > o->backoff_max_ms - elapsed)
            wait = o->backoff_max_ms - elapsed;
        if (wait <= 0 || !nap(o, wait))
            break;
    }
    if (rc != ATT_OK) {
        kn_errstr_set(errstr, n, "%s (%d attempt%s in %lld ms)", err, tries, tries == 1 ? "" : "s",
                      (long long)(mono_ms() - start));
        body_free(&body);
        return KN_ERR__AUTHENTICATION;
    }
    char why[300];
    rc = knw_jwt_from_response(body.p ? body.p : "", body.len, jwt, why, sizeof why);
    body_free(&body);
    if (!rc && (rc = knw_jwt_read(*jwt, o->sub_claim, o->scope_claim, claims, why, sizeof why)) == 0 &&
        claims->exp_ms <= epoch_ms()) {
        snprintf(why, sizeof why, "the JWT has already expired (its exp is %lld s ago)",
                 (long long)((epoch_ms() - claims->exp_ms) / 1000));
        rc = -1;
    }
    if (rc) {
        kn_errstr_set(errstr, n, "the token from %s is unusable: %s", o->url, why);
        free_secret(*jwt);
        *jwt = NULL;
        return KN_ERR__AUTHENTICATION;
    }
    return 0;
}

int knw_oidc_token_cb(kn_oauthbearer_token *out, char *errstr, size_t n, void *opaque) {
    knw_oidc *o = opaque;
    char *jwt;
    knw_jwt_claims cl;
    int rc = knw_oidc_fetch(o, &jwt, &cl, errstr, n);
    if (rc)
        return rc;
    /* The store copies the token once this returns; only the store's
     * one refresh at a time calls here, so replacing is safe. */
    free_secret(o->last_jwt);
    o->last_jwt = jwt;
    snprintf(o->principal, sizeof o->principal, "%s", cl.sub);
    out->token = o->last_jwt;
    out->lifetime_ms = cl.exp_ms;
    out->principal = o->principal;
    out->extensions = (const char *const *)o->ext;
    out->extension_count = o->ext_count;
    return 0;
}
