/*
 * log.c: formatting and routing of log records (see log.h), the public
 * kn_conf_set_log_cb level checks, and kn_log_queue, the bounded FIFO a
 * binding installs as handler to bring records from network threads to
 * its own thread. A logger owns its mutex; a queue owns its records.
 */
#include "log.h"

#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "kn_alloc.h"

static pthread_once_t kn_log_once = PTHREAD_ONCE_INIT;
static int kn_log_proc_level = KN_LOG_WARN;

static void kn_log_read_env(void) {
    const char *v = getenv("KN_LOG_LEVEL");
    if (!v || !*v)
        return;
    static const char *names[] = {"error", "warn", "info", "debug"};
    for (int i = 0; i < 4; i++)
        if (!strcasecmp(v, names[i]))
            kn_log_proc_level = i;
    if (v[0] >= '0' && v[0] <= '3' && !v[1])
        kn_log_proc_level = v[0] - '0';
}

int kn_log_default_level(void) {
    pthread_once(&kn_log_once, kn_log_read_env);
    return kn_log_proc_level;
}

const char *kn_log_level_name(int level) {
    switch (level) {
    case KN_LOG_ERROR:
        return "ERROR";
    case KN_LOG_WARN:
        return "WARN";
    case KN_LOG_INFO:
        return "INFO";
    default:
        return "DEBUG";
    }
}

void kn_logger_init(kn_logger *lg, const char *prefix) {
    pthread_mutex_init(&lg->lock, NULL);
    pthread_cond_init(&lg->idle, NULL);
    lg->calls = 0;
    lg->fn = NULL;
    lg->opaque = NULL;
    lg->level = kn_log_default_level();
    snprintf(lg->prefix, sizeof lg->prefix, "%s", prefix ? prefix : "");
}

void kn_logger_destroy(kn_logger *lg) {
    pthread_cond_destroy(&lg->idle);
    pthread_mutex_destroy(&lg->lock);
}

void kn_logger_set_level(kn_logger *lg, int level) {
    if (level >= KN_LOG_ERROR && level <= KN_LOG_DEBUG)
        lg->level = level;
}

void kn_logger_set_handler(kn_logger *lg, kn_log_fn *fn, void *opaque) {
    pthread_mutex_lock(&lg->lock);
    lg->fn = fn;
    lg->opaque = opaque;
    /* A call of the old handler may be running on another thread (the
     * network thread): wait for it, so the caller may free its opaque. */
    while (lg->calls > 0)
        pthread_cond_wait(&lg->idle, &lg->lock);
    pthread_mutex_unlock(&lg->lock);
}

void kn_log(kn_logger *lg, int level, const char *fmt, ...) {
    if (!kn_log_enabled(lg, level))
        return;
    kn_log_fn *fn = NULL;
    void *opaque = NULL;
    if (lg) {
        pthread_mutex_lock(&lg->lock);
        fn = lg->fn;
        opaque = lg->opaque;
        if (fn)
            lg->calls++; /* kn_logger_set_handler waits for it */
        pthread_mutex_unlock(&lg->lock);
    }
    /* A handler's line says which client logged, as stderr lines do. */
    char line[KN_LOG_MESSAGE_MAX];
    size_t off = 0;
    if (fn && lg->prefix[0]) {
        int n = snprintf(line, sizeof line, "%s: ", lg->prefix);
        off = n > 0 && (size_t)n < sizeof line ? (size_t)n : 0;
    }
    char *msg = line + off;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof line - off, fmt, ap);
    va_end(ap);
    if (fn) {
        fn(level, line, opaque);
        pthread_mutex_lock(&lg->lock);
        if (--lg->calls == 0)
            pthread_cond_broadcast(&lg->idle);
        pthread_mutex_unlock(&lg->lock);
        return;
    }
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    struct tm tm;
    gmtime_r(&ts.tv_sec, &tm);
    /* One fprintf per record so concurrent clients don't interleave. */
    fprintf(stderr, "%04d-%02d-%02dT%02d:%02d:%02d.%03ldZ kafka-native %s %s%s%s\n", tm.tm_year + 1900,
            tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec, ts.tv_nsec / 1000000,
            kn_log_level_name(level), lg && lg->prefix[0] ? lg->prefix : "", lg && lg->prefix[0] ? ": " : "",
            msg);
}

/* ---- kn_log_queue --------------------------------------------------- */

typedef struct kn_log_rec {
    struct kn_log_rec *next;
    int level;
    char msg[]; /* NUL-terminated */
} kn_log_rec;

struct kn_log_queue {
    pthread_mutex_t lock;
    kn_log_rec *head, *tail;
    size_t count, capacity;
    atomic_size_t approx; /* count, readable without the lock */
    uint64_t dropped;     /* since the last take */
};

kn_log_queue *kn_log_queue_new(size_t capacity) {
    kn_log_queue *q = kn_calloc(1, sizeof *q);
    if (!q)
        return NULL;
    pthread_mutex_init(&q->lock, NULL);
    q->capacity = capacity ? capacity : 1;
    atomic_init(&q->approx, 0);
    return q;
}

void kn_log_queue_destroy(kn_log_queue *q) {
    if (!q)
        return;
    while (q->head) {
        kn_log_rec *r = q->head;
        q->head = r->next;
        kn_free(r);
    }
    pthread_mutex_destroy(&q->lock);
    kn_free(q);
}

void kn_log_queue_push(int level, const char *message, void *opaque) {
    kn_log_queue *q = opaque;
    if (!q || !message)
        return;
    size_t len = strnlen(message, KN_LOG_MESSAGE_MAX - 1);
    pthread_mutex_lock(&q->lock);
    /* Full: the newest records are the ones dropped, so what is queued
     * stays a contiguous prefix of what happened. */
    kn_log_rec *r = q->count < q->capacity ? kn_malloc(sizeof *r + len + 1) : NULL;
    if (!r) {
        q->dropped++;
        pthread_mutex_unlock(&q->lock);
        return;
    }
    r->next = NULL;
    r->level = level;
    memcpy(r->msg, message, len);
    r->msg[len] = '\0';
    if (q->tail)
        q->tail->next = r;
    else
        q->head = r;
    q->tail = r;
    q->count++;
    atomic_store(&q->approx, q->count);
    pthread_mutex_unlock(&q->lock);
}

int kn_log_queue_pop(kn_log_queue *q, int *level, char *buf, size_t size) {
    if (!q)
        return 0;
    pthread_mutex_lock(&q->lock);
    kn_log_rec *r = q->head;
    if (r) {
        q->head = r->next;
        if (!q->head)
            q->tail = NULL;
        q->count--;
        atomic_store(&q->approx, q->count);
    }
    pthread_mutex_unlock(&q->lock);
    if (!r)
        return 0;
    if (level)
        *level = r->level;
    if (buf && size)
        snprintf(buf, size, "%s", r->msg);
    kn_free(r);
    return 1;
}

size_t kn_log_queue_count(kn_log_queue *q) { return q ? atomic_load(&q->approx) : 0; }

uint64_t kn_log_queue_take_dropped(kn_log_queue *q) {
    if (!q)
        return 0;
    pthread_mutex_lock(&q->lock);
    uint64_t n = q->dropped;
    q->dropped = 0;
    pthread_mutex_unlock(&q->lock);
    return n;
}
