/*
 * log.c: formatting and routing of log records (see log.h). Owns nothing
 * beyond the logger's mutex.
 */
#include "log.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

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
    lg->fn = NULL;
    lg->opaque = NULL;
    lg->level = kn_log_default_level();
    snprintf(lg->prefix, sizeof lg->prefix, "%s", prefix ? prefix : "");
}

void kn_logger_destroy(kn_logger *lg) { pthread_mutex_destroy(&lg->lock); }

void kn_logger_set_handler(kn_logger *lg, kn_log_fn *fn, void *opaque) {
    pthread_mutex_lock(&lg->lock);
    lg->fn = fn;
    lg->opaque = opaque;
    pthread_mutex_unlock(&lg->lock);
}

void kn_log(kn_logger *lg, int level, const char *fmt, ...) {
    if (!kn_log_enabled(lg, level))
        return;
    char msg[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);

    kn_log_fn *fn = NULL;
    void *opaque = NULL;
    if (lg) {
        pthread_mutex_lock(&lg->lock);
        fn = lg->fn;
        opaque = lg->opaque;
        pthread_mutex_unlock(&lg->lock);
    }
    if (fn) {
        fn(level, msg, opaque);
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
