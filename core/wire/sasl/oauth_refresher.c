/*
 * oauth_refresher.c: the token refresh thread (see oauth_refresher.h).
 * It looks at the store at most every 200 ms (a connection that starts
 * waiting for a token is served within that) and otherwise sleeps on a
 * condition variable that stop() signals.
 */
#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <string.h>
#include <time.h>

#include "error.h"
#include "kn_alloc.h"
#include "wire/sasl/oauth_refresher.h"

#define LOOK_MS 200

struct knw_oauth_refresher {
    knw_oauth_store *st;
    void (*wake)(void *);
    void *wake_opaque;
    void (*cancel)(void *);
    void *cancel_opaque;
    kn_logger *log;
    pthread_t thread;
    pthread_mutex_t lock;
    pthread_cond_t cond;
    bool stop;
};

static int64_t epoch_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void *run(void *arg) {
    knw_oauth_refresher *r = arg;
    int64_t not_before = 0; /* epoch ms: after a failure, Java's 10 s */
    pthread_mutex_lock(&r->lock);
    while (!r->stop) {
        int64_t now = epoch_ms();
        bool due = knw_oauth_store_wanted(r->st) || now >= knw_oauth_store_refresh_at(r->st);
        if (!due || now < not_before) {
            struct timespec ts;
            clock_gettime(CLOCK_MONOTONIC, &ts);
            ts.tv_nsec += LOOK_MS * 1000000L;
            ts.tv_sec += ts.tv_nsec / 1000000000L;
            ts.tv_nsec %= 1000000000L;
            pthread_cond_timedwait(&r->cond, &r->lock, &ts);
            continue;
        }
        pthread_mutex_unlock(&r->lock);
        bool stored = false;
        char err[1024];
        int rc = knw_oauth_store_refresh(r->st, &stored, err, sizeof err);
        if (rc) {
            kn_log(r->log, KN_LOG_WARN, "%s; the next attempt is in %d s", err,
                   KNW_OAUTH_RELOGIN_RETRY_MS / 1000);
            not_before = epoch_ms() + KNW_OAUTH_RELOGIN_RETRY_MS;
        } else if (stored) {
            kn_log(r->log, KN_LOG_DEBUG, "OAUTHBEARER: a new token from the token endpoint");
            not_before = 0;
            r->wake(r->wake_opaque);
        }
        pthread_mutex_lock(&r->lock);
    }
    pthread_mutex_unlock(&r->lock);
    return NULL;
}

knw_oauth_refresher *knw_oauth_refresher_start(knw_oauth_store *st, void (*wake)(void *), void *wake_opaque,
                                               void (*cancel)(void *), void *cancel_opaque, kn_logger *log,
                                               char *errstr, size_t n) {
    knw_oauth_refresher *r = kn_calloc(1, sizeof *r);
    if (!r) {
        kn_errstr_set(errstr, n, "out of memory");
        return NULL;
    }
    *r = (knw_oauth_refresher){.st = st,
                               .wake = wake,
                               .wake_opaque = wake_opaque,
                               .cancel = cancel,
                               .cancel_opaque = cancel_opaque,
                               .log = log};
    pthread_mutex_init(&r->lock, NULL);
    pthread_condattr_t ca;
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_cond_init(&r->cond, &ca);
    pthread_condattr_destroy(&ca);
    int rc = pthread_create(&r->thread, NULL, run, r);
    if (rc) {
        kn_errstr_set(errstr, n, "cannot start the OAUTHBEARER refresh thread: %s", strerror(rc));
        pthread_cond_destroy(&r->cond);
        pthread_mutex_destroy(&r->lock);
        kn_free(r);
        return NULL;
    }
    pthread_setname_np(r->thread, "kn-oauth");
    return r;
}

void knw_oauth_refresher_stop(knw_oauth_refresher *r) {
    if (!r)
        return;
    pthread_mutex_lock(&r->lock);
    r->stop = true;
    pthread_cond_signal(&r->cond);
    pthread_mutex_unlock(&r->lock);
    if (r->cancel)
        r->cancel(r->cancel_opaque);
    pthread_join(r->thread, NULL);
    pthread_cond_destroy(&r->cond);
    pthread_mutex_destroy(&r->lock);
    kn_free(r);
}
