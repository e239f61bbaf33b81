/*
 * oauth_store.c: the application-supplied OAUTHBEARER token of one
 * client (see oauth_store.h).
 *
 * Thread hand-over: "wanted" and "refresh_at" are atomics so the
 * application's wait loops can check them without a lock; the token
 * copies are under the store's mutex; "running" keeps two application
 * threads from calling the callback at once.
 */
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <pthread.h>

#include <openssl/crypto.h>

#include "error.h"
#include "kn_alloc.h"
#include "wire/sasl/oauth_store.h"

#define MAX_TOKEN_BYTES (16 * 1024) /* a JWS larger than this is refused */
#define MAX_EXTENSIONS  32

struct knw_oauth_store {
    kn_oauthbearer_token_cb *fn;
    void *opaque;
    knw_oauth_refresh refresh;
    pthread_mutex_t lock;
    char *token;     /* owned, a secret */
    char **ext;      /* owned: key, value pairs */
    size_t ext_count;
    int64_t expiry_ms;              /* epoch */
    _Atomic int64_t refresh_at_ms;  /* epoch; INT64_MAX: no token yet */
    atomic_bool wanted;             /* a connection waits for a token */
    atomic_bool running;            /* the callback is being run */
    const char *label;              /* set_label's; NULL: the application's callback */
};

static int64_t epoch_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void free_secret(char *s) {
    if (s) {
        OPENSSL_cleanse(s, strlen(s));
        kn_free(s);
    }
}

static void clear_token(knw_oauth_store *st) {
    free_secret(st->token);
    st->token = NULL;
    for (size_t i = 0; i < st->ext_count * 2; i++)
        free_secret(st->ext[i]);
    kn_free(st->ext);
    st->ext = NULL;
    st->ext_count = 0;
}

knw_oauth_store *knw_oauth_store_new(kn_oauthbearer_token_cb *fn, void *opaque, const knw_oauth_refresh *r) {
    knw_oauth_store *st = kn_calloc(1, sizeof *st);
    if (!st)
        return NULL;
    st->fn = fn;
    st->opaque = opaque;
    st->refresh = *r;
    pthread_mutex_init(&st->lock, NULL);
    atomic_store(&st->refresh_at_ms, INT64_MAX);
    return st;
}

void knw_oauth_store_free(knw_oauth_store *st) {
    if (!st)
        return;
    clear_token(st);
    pthread_mutex_destroy(&st->lock);
    kn_free(st);
}

int64_t knw_oauth_refresh_at(const knw_oauth_refresh *r, int64_t now_ms, int64_t expiry_ms, double rnd) {
    double pct = r->window_factor + r->window_jitter * rnd;
    int64_t proposed = now_ms + (int64_t)((double)(expiry_ms - now_ms) * pct);
    /* Java: when the lifetime leaves no room for both the minimum
     * period and the buffer, the window factor alone decides. */
    if (now_ms + r->min_period_ms + r->buffer_ms > expiry_ms)
        return proposed;
    if (proposed > expiry_ms - r->buffer_ms)
        proposed = expiry_ms - r->buffer_ms;
    if (proposed < now_ms + r->min_period_ms)
        proposed = now_ms + r->min_period_ms;
    return proposed;
}

int knw_oauth_store_client_first(knw_oauth_store *st, knw_sasl_buf *out, char *errstr, size_t n) {
    int rc;
    pthread_mutex_lock(&st->lock);
    if (!st->token || st->expiry_ms <= epoch_ms()) {
        atomic_store(&st->wanted, true);
        rc = KNW_SASL_WAIT;
    } else {
        rc = knw_oauthbearer_message(st->token, (const char *const *)st->ext, st->ext_count, out, errstr, n);
    }
    pthread_mutex_unlock(&st->lock);
    return rc;
}

void knw_oauth_store_set_label(knw_oauth_store *st, const char *label) { st->label = label; }

void knw_oauth_store_want(knw_oauth_store *st) { atomic_store(&st->wanted, true); }

bool knw_oauth_store_wanted(knw_oauth_store *st) { return atomic_load(&st->wanted); }

int64_t knw_oauth_store_refresh_at(knw_oauth_store *st) { return atomic_load(&st->refresh_at_ms); }

bool knw_oauth_store_due(knw_oauth_store *st) {
    return st && (atomic_load(&st->wanted) || epoch_ms() >= atomic_load(&st->refresh_at_ms));
}

/* Copies what the callback returned, after checking it: a JWS of
 * printable ASCII without spaces (it goes into "auth=Bearer <token>"),
 * an expiry in the future, extensions with RFC 7628 names and values. */
static int take(knw_oauth_store *st, const kn_oauthbearer_token *t, int64_t now, char *errstr, size_t n) {
    if (!t->token || !*t->token || strlen(t->token) > MAX_TOKEN_BYTES) {
        kn_errstr_set(errstr, n, "the OAUTHBEARER token callback returned %s",
                      !t->token || !*t->token ? "no token" : "a token over 16 KiB");
        return KN_ERR__AUTHENTICATION;
    }
    for (const char *p = t->token; *p; p++)
        if (*p < 0x21 || *p > 0x7e) {
            kn_errstr_set(errstr, n, "the OAUTHBEARER token callback returned a token with a character that is "
                                     "not printable ASCII (at byte %zu)",
                          (size_t)(p - t->token));
            return KN_ERR__AUTHENTICATION;
        }
    if (t->lifetime_ms <= now) {
        kn_errstr_set(errstr, n, "the OAUTHBEARER token callback returned a token whose lifetime_ms (%lld) is "
                                 "not in the future (ms since the epoch, now %lld)",
                      (long long)t->lifetime_ms, (long long)now);
        return KN_ERR__AUTHENTICATION;
    }
    if (t->extension_count > MAX_EXTENSIONS || (t->extension_count && !t->extensions)) {
        kn_errstr_set(errstr, n, "the OAUTHBEARER token callback returned %zu extensions (at most %d)",
                      t->extension_count, MAX_EXTENSIONS);
        return KN_ERR__AUTHENTICATION;
    }
    for (size_t i = 0; i < t->extension_count; i++) {
        const char *k = t->extensions[2 * i], *v = t->extensions[2 * i + 1];
        if (!k || !v || !knw_oauthbearer_ext_ok(k, v)) {
            kn_errstr_set(errstr, n, "the OAUTHBEARER token callback returned an invalid extension %.64s (names: "
                                     "letters only, not \"auth\"; values: printable ASCII)",
                          k ? k : "(null)");
            return KN_ERR__AUTHENTICATION;
        }
    }
    char *tok = kn_strdup(t->token);
    char **ext = t->extension_count ? kn_calloc(t->extension_count * 2, sizeof *ext) : NULL;
    bool ok = tok && (ext || !t->extension_count);
    for (size_t i = 0; ok && i < t->extension_count * 2; i++)
        ok = (ext[i] = kn_strdup(t->extensions[i])) != NULL;
    if (!ok) {
        free_secret(tok);
        for (size_t i = 0; ext && i < t->extension_count * 2; i++)
            free_secret(ext[i]);
        kn_free(ext);
        kn_errstr_set(errstr, n, "out of memory storing the OAUTHBEARER token");
        return KN_ERR__AUTHENTICATION;
    }
    pthread_mutex_lock(&st->lock);
    clear_token(st);
    st->token = tok;
    st->ext = ext;
    st->ext_count = t->extension_count;
    st->expiry_ms = t->lifetime_ms;
    atomic_store(&st->refresh_at_ms,
                 knw_oauth_refresh_at(&st->refresh, now, t->lifetime_ms, (double)random() / (double)RAND_MAX));
    atomic_store(&st->wanted, false);
    pthread_mutex_unlock(&st->lock);
    return 0;
}

int knw_oauth_store_refresh(knw_oauth_store *st, bool *stored, char *errstr, size_t n) {
    *stored = false;
    if (!knw_oauth_store_due(st))
        return 0;
    bool expect = false;
    if (!atomic_compare_exchange_strong(&st->running, &expect, true))
        return 0; /* another application thread is at it */
    kn_oauthbearer_token t = {0};
    char cb_err[768] = "";
    int rc = st->fn(&t, cb_err, sizeof cb_err, st->opaque);
    if (rc && st->label) {
        kn_errstr_set(errstr, n, "%s: %s", st->label, cb_err[0] ? cb_err : "(no reason given)");
        rc = KN_ERR__AUTHENTICATION;
    } else if (rc) {
        kn_errstr_set(errstr, n, "the OAUTHBEARER token callback failed: %s",
                      cb_err[0] ? cb_err : "(no reason given)");
        rc = KN_ERR__AUTHENTICATION;
    } else {
        rc = take(st, &t, epoch_ms(), errstr, n);
        *stored = rc == 0;
    }
    atomic_store(&st->running, false);
    return rc;
}
