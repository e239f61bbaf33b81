/*
 * log.h: the library's logging entry point.
 *
 * A kn_logger is embedded in whatever owns a log context (a knw_client
 * today, module clients later). Records go to the logger's handler when
 * one is set (called on whatever thread logs, usually the network
 * thread: the handler must only queue the record, e.g. for the Lua
 * binding to hand it to ngx.log from poll), otherwise to stderr. The
 * threshold defaults to warn and is read once per process from the env
 * variable KN_LOG_LEVEL (error|warn|info|debug or 0..3), or set per
 * client through kn_conf_set_log_cb.
 *
 * Also the bounded log queue (kn_log_queue, kafka_native.h) that moves
 * records from network threads to the application's thread.
 */
#ifndef KN_LOG_H
#define KN_LOG_H

#include <pthread.h>
#include <stdbool.h>

#include "kafka_native.h" /* KN_LOG_* levels, kn_log_cb, kn_log_queue */

/* msg is NUL-terminated and only valid during the call. */
typedef kn_log_cb kn_log_fn;

typedef struct kn_logger {
    pthread_mutex_t lock; /* guards fn/opaque/calls against a concurrent set */
    pthread_cond_t idle;  /* signalled when calls drops to 0 */
    kn_log_fn *fn;
    void *opaque;
    int calls; /* handler calls in progress (any thread) */
    int level;       /* records above this level are dropped */
    char prefix[64]; /* e.g. "producer-1": prepended to stderr and handler lines */
} kn_logger;

/* Initialises with no handler and the process default level. */
void kn_logger_init(kn_logger *lg, const char *prefix);
void kn_logger_destroy(kn_logger *lg);
/* Sets (or clears with fn NULL) the handler; thread-safe. Once it
 * returns, no call of the old handler is running or will start, so its
 * opaque may be freed. Must not be called from inside the handler. */
void kn_logger_set_handler(kn_logger *lg, kn_log_fn *fn, void *opaque);
/* The process default threshold (KN_LOG_LEVEL, else warn). */
int kn_log_default_level(void);
/* kn_log_level_name(): public, in kafka_native.h. */
/* Sets the threshold (KN_LOG_*); call before other threads log. */
void kn_logger_set_level(kn_logger *lg, int level);

static inline bool kn_log_enabled(const kn_logger *lg, int level) {
    return level <= (lg ? lg->level : kn_log_default_level());
}

/* Formats and emits one record. lg NULL logs to stderr at the process
 * level. */
void kn_log(kn_logger *lg, int level, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

#endif
