/*
 * kafka_native.h: the public C API of kafka-native.
 *
 * Everything public is prefixed kn_ / KN_. Handles are opaque; memory
 * ownership is stated on each function. Errors are int return codes:
 * Kafka's broker error codes as Kafka numbers them (KN_ERR_<NAME>, from
 * -1 up), and the library's own in the reserved range -200..-299
 * (KN_ERR__<NAME>, double underscore). 0 (KN_OK) is success.
 */
#ifndef KAFKA_NATIVE_H
#define KAFKA_NATIVE_H

#include <stddef.h>
#include <stdint.h>

#include "kafka_native_export.h"

#ifdef __cplusplus
extern "C" {
#endif

#define KN_VERSION_STR "0.1.0"
#define KN_SOFTWARE_NAME "kafka-native"

#define KN_OK 0

/* Whether a size-versioned struct s (leading size_t size: the stats
 * structs, kn_producer_hooks, kn_producer_interceptor,
 * kn_oauthbearer_token) reaches field: true when the side that set
 * s->size knew that field. See "ABI policy" in docs/architecture.md. */
#define KN_STRUCT_HAS(s, type, field)                                                                  \
    (offsetof(type, field) + sizeof(((type *)0)->field) <= (s)->size)

/* Kafka's own error codes: KN_ERR_OFFSET_OUT_OF_RANGE == 1, ... */
enum kn_kafka_err {
#define KN_KAFKA_ERR(code, name, flags) KN_ERR_##name = (code),
#include "kafka_native_errors.def"
#undef KN_KAFKA_ERR
};

/* The library's own error codes (never sent by a broker). */
#define KN_OWN_ERRORS(X)                                                      \
    X(-200, FAIL, "unspecified failure")                                      \
    X(-201, NOMEM, "out of memory")                                           \
    X(-202, INVALID_ARG, "invalid argument")                                  \
    X(-203, CONFIG, "invalid configuration")                                  \
    X(-204, PROTOCOL, "malformed or unexpected protocol data")                \
    X(-205, TRANSPORT, "broker connection failed")                            \
    X(-206, TIMED_OUT, "operation timed out")                                 \
    X(-207, RESOLVE, "host name resolution failed")                           \
    X(-208, ALL_BROKERS_DOWN, "no broker is reachable")                       \
    X(-209, UNSUPPORTED_VERSION, "no API version in common with the broker") \
    X(-210, CLOSED, "the client is closed")                                   \
    X(-211, WAKEUP, "woken up by wakeup()")                                   \
    X(-212, QUEUE_FULL, "local queue is full")                                \
    X(-213, BAD_BATCH, "record batch is corrupt")                             \
    X(-214, NO_OFFSET, "no committed offset and auto.offset.reset=none")     \
    X(-215, STATE, "operation not valid in the current state")                \
    X(-216, AUTHENTICATION, "authentication failed")                          \
    X(-217, SSL, "TLS failure")                                               \
    X(-218, CALLBACK, "an application callback raised an error")             \
    X(-219, UNKNOWN_TOPIC, "topic not in the cluster metadata")              \
    X(-220, MSG_TIMED_OUT, "record not delivered within delivery.timeout.ms") \
    X(-221, FATAL, "fatal client error: the client must be closed")          \
    X(-222, NOT_FOUND, "not found")                                           \
    X(-223, PARTIAL, "some items failed; see per-item errors")               \
    X(-224, UNSUPPORTED, "not supported by this build or broker")            \
    X(-225, FORKED, "the client was created in another process (before a fork)")

enum kn_own_err {
#define KN_OWN_ERR_ENUM(code, name, msg) KN_ERR__##name = (code),
    KN_OWN_ERRORS(KN_OWN_ERR_ENUM)
#undef KN_OWN_ERR_ENUM
};

/* Name of an error code ("UNKNOWN_TOPIC_OR_PARTITION", "_TIMED_OUT"):
 * static storage, never NULL. */
KN_API const char *kn_err_name(int code);
/* Short human description of an error code: static storage, never NULL. */
KN_API const char *kn_err_message(int code);
/* Non-zero if retrying the same operation may succeed. */
KN_API int kn_err_is_retriable(int code);

/* The error code of the last client constructor (kn_producer_new,
 * kn_producer_new_with_hooks, kn_consumer_new, kn_admin_new) called on
 * this thread: KN_OK after one that succeeded, else why it returned
 * NULL: KN_ERR__CONFIG (an invalid value or combination: errstr names
 * the key), KN_ERR__SSL (a truststore, keystore or key that cannot be
 * loaded), KN_ERR__INVALID_ARG (NULL or wrong-type conf, bad hooks),
 * KN_ERR__UNSUPPORTED (a setting this build cannot serve),
 * KN_ERR__NOMEM, or KN_ERR__FAIL (a thread or descriptor could not be
 * created). Per thread, like errno. */
KN_API int kn_last_error(void);

/* Replaceable allocator (set once, before any other call): lets tests
 * inject allocation failures. NULL members keep the libc function. */
typedef struct kn_allocator {
    void *(*malloc_fn)(size_t size);
    void *(*realloc_fn)(void *ptr, size_t size);
    void (*free_fn)(void *ptr);
} kn_allocator;
KN_API void kn_set_allocator(const kn_allocator *allocator);

/* ===================================================================
 * Configuration (core/config/)
 *
 * Kafka's own property names, types, defaults and validation, from the
 * Java client 4.3 catalog. A kn_conf holds the settings of one client
 * of one type; a value is validated when it is set, and the rules that
 * span several keys are checked by kn_conf_finalize when a client is
 * built. See docs/configuration.md.
 * =================================================================== */

typedef struct kn_conf kn_conf;

/* Which client a configuration is for; also used as a bitmask in the
 * catalog (a key may belong to several client types). */
typedef enum kn_client_type {
    KN_CLIENT_PRODUCER = 1,
    KN_CLIENT_CONSUMER = 2,
    KN_CLIENT_ADMIN = 4
} kn_client_type;

/* A new configuration holding every default for that client type.
 * Owned by the caller: kn_conf_destroy. NULL on allocation failure or
 * an invalid type. */
KN_API kn_conf *kn_conf_new(kn_client_type type);
/* Deep copy (values and which keys were set explicitly). Owned by the
 * caller: kn_conf_destroy. NULL on allocation failure or NULL conf.
 * A kn_conf is not locked: use one from one thread at a time (copies
 * are independent). */
KN_API kn_conf *kn_conf_dup(const kn_conf *conf);
/* Frees conf and everything it holds. NULL is a no-op. */
KN_API void kn_conf_destroy(kn_conf *conf);

/* Sets key to value after validating it for this client type.
 * value == NULL resets the key to its default (and forgets that it was
 * set). Both strings are copied. Returns KN_OK, or KN_ERR__CONFIG with
 * a message in errstr naming the key and what is accepted, e.g.
 *   invalid value "fast" for acks: expected one of all, -1, 0, 1
 *   unknown configuration key "bootstrap.server" for a consumer
 *     (did you mean "bootstrap.servers"?)
 * conf is unchanged on error. */
KN_API int kn_conf_set(kn_conf *conf, const char *key, const char *value, char *errstr,
                       size_t errstr_size);

/* Reads a Java .properties file (# and ! comments, key=value, key: value
 * or key value, backslash continuation lines, \uXXXX and \t \n \r \f
 * escapes) and kn_conf_set()s every entry. Errors name the file and
 * line. Stops at the first error; entries before it stay set. */
KN_API int kn_conf_load_properties(kn_conf *conf, const char *path, char *errstr,
                                   size_t errstr_size);

/* Copies the current value of key (or its default) into buf as the
 * string a user would write, NUL-terminated. On entry *sizep is the
 * size of buf; on return it is the size needed including the NUL (if
 * that is larger than the size given, buf holds a truncated value).
 * buf may be NULL to query the size. Returns KN_OK, KN_ERR__CONFIG for
 * a key unknown to this client type, or KN_ERR__NOT_FOUND when the
 * value is null (no default and not set; *sizep is then 0). */
KN_API int kn_conf_get(const kn_conf *conf, const char *key, char *buf, size_t *sizep);

/* Cross-key validation, run by every client constructor (and callable
 * earlier): bootstrap.servers present and well-formed, the producer's
 * idempotence rules, delivery.timeout.ms >= linger.ms +
 * request.timeout.ms, the consumer's group.protocol rules, ... Like
 * Java, may adjust values the user did not set explicitly (e.g.
 * disables the default idempotence when acks=1 was set). Returns KN_OK
 * or KN_ERR__CONFIG with errstr. */
KN_API int kn_conf_finalize(kn_conf *conf, char *errstr, size_t errstr_size);

/* Calls fn for every key of this client type in name order with its
 * effective value (NULL for a null value), and is_default = 1 when the
 * key was not set explicitly. Password values are passed as
 * "[hidden]". The strings are valid only during the call. Returns
 * KN_OK, or KN_ERR__INVALID_ARG for a NULL conf or fn. */
KN_API int kn_conf_dump(const kn_conf *conf,
                        void (*fn)(const char *key, const char *value, int is_default, void *opaque),
                        void *opaque);

/* The client type a configuration was created for. */
KN_API kn_client_type kn_conf_client_type(const kn_conf *conf);

/* ============================== Logging ============================ */

/* Log levels, most severe first. A client logs records up to its
 * threshold: the process default (env KN_LOG_LEVEL: error|warn|info|
 * debug or 0..3, else warn) or the one given to kn_conf_set_log_cb. */
enum { KN_LOG_ERROR = 0, KN_LOG_WARN = 1, KN_LOG_INFO = 2, KN_LOG_DEBUG = 3 };

/* A log handler. message is NUL-terminated, one line, valid only during
 * the call. Called on the thread that logs, usually a client's network
 * thread: it must be thread-safe, must not block and must not call into
 * the client (kn_log_queue_push below is such a handler). */
typedef void kn_log_cb(int level, const char *message, void *opaque);

/* Routes the log records of every client built from conf to fn
 * (instead of stderr, the default), up to max_level (KN_LOG_*; -1: the
 * process default). fn NULL restores stderr. opaque must outlive those
 * clients. Returns KN_OK, or KN_ERR__INVALID_ARG for a NULL conf or a
 * level outside -1..KN_LOG_DEBUG. */
KN_API int kn_conf_set_log_cb(kn_conf *conf, int max_level, kn_log_cb *fn, void *opaque);

/* "ERROR", "WARN", "INFO" or "DEBUG". */
KN_API const char *kn_log_level_name(int level);

/* ====================== SASL OAUTHBEARER tokens ==================== */

/* What a token callback hands over. The strings are the callback's:
 * the client copies them as soon as the callback returns.
 * Size-versioned the other way round: the library allocates it zeroed
 * and sets size to the size it knows; the callback writes a field only
 * when KN_STRUCT_HAS(out, kn_oauthbearer_token, field) (a callback built
 * against a newer header then never writes past an older library's
 * struct). The fields here are in every version. */
typedef struct kn_oauthbearer_token {
    size_t size;           /* set by the library: sizeof the struct it allocated (see below) */
    const char *token;     /* the compact JWS the broker validates */
    int64_t lifetime_ms;   /* when it expires, ms since the epoch (Java's OAuthBearerToken.lifetimeMs) */
    const char *principal; /* the principal it names (for logs), may be NULL */
    const char *const *extensions; /* key, value, key, value, ... (RFC 7628 extensions), may be NULL */
    size_t extension_count;        /* number of key/value pairs */
} kn_oauthbearer_token;

/* The application's token source for sasl.mechanism OAUTHBEARER: fills
 * *out and returns 0, or returns non-zero with a reason in errstr (the
 * client then fails with KN_ERR__AUTHENTICATION naming the callback).
 * Called on the application's thread, inside the client's blocking
 * calls (producer send/poll/flush, consumer poll, admin calls), never on
 * the network thread: when a connection needs a token the first time,
 * and again at sasl.login.refresh.window.factor (plus up to
 * sasl.login.refresh.window.jitter) of the token's lifetime, no sooner
 * than sasl.login.refresh.min.period.seconds after the last one; the
 * next KIP-368 re-authentication presents the new token. A connection
 * waiting for a token waits (up to socket.connection.setup.timeout.ms)
 * until one of those calls runs the callback. It must not call into
 * the client. */
typedef int kn_oauthbearer_token_cb(kn_oauthbearer_token *out, char *errstr, size_t errstr_size, void *opaque);

/* Installs fn for every client built from conf (NULL removes it). With
 * a callback, sasl.jaas.config is optional for OAUTHBEARER and its
 * unsecuredLogin* options are not used. opaque must outlive those
 * clients. KN_OK or KN_ERR__INVALID_ARG for a NULL conf. */
KN_API int kn_conf_set_oauthbearer_token_cb(kn_conf *conf, kn_oauthbearer_token_cb *fn, void *opaque);

/* A bounded, thread-safe FIFO of log records, so that records logged on
 * a network thread can be handed to application code (a Lua function,
 * a logger that is not thread-safe) on the application's own thread:
 * install kn_log_queue_push as the handler with the queue as opaque,
 * and pop from poll loops. When full, new records are dropped and
 * counted. */
typedef struct kn_log_queue kn_log_queue;
/* capacity: records held at most (>= 1). Owned by the caller:
 * kn_log_queue_destroy (after every client logging into it is closed).
 * NULL on allocation failure. */
KN_API kn_log_queue *kn_log_queue_new(size_t capacity);
KN_API void kn_log_queue_destroy(kn_log_queue *q);
/* A kn_log_cb: opaque is the queue. Copies message. */
KN_API void kn_log_queue_push(int level, const char *message, void *opaque);
/* Takes the oldest record: returns 1 with *level set and its message
 * copied into buf (NUL-terminated, cut to size - 1 bytes; records are
 * at most KN_LOG_MESSAGE_MAX - 1 bytes), or 0 when empty. Any thread. */
#define KN_LOG_MESSAGE_MAX 1024
KN_API int kn_log_queue_pop(kn_log_queue *q, int *level, char *buf, size_t size);
/* Records queued now (a cheap check before popping). */
KN_API size_t kn_log_queue_count(kn_log_queue *q);
/* Records dropped because the queue was full (or memory ran out) since
 * the last call; resets the count. */
KN_API uint64_t kn_log_queue_take_dropped(kn_log_queue *q);

/* ======================= end of Configuration ====================== */

#ifdef __cplusplus
}
#endif
#include "kafka_native_producer.h"
#include "kafka_native_consumer.h"
#include "kafka_native_admin.h"
#include "kafka_native_telemetry.h"
#include "kafka_native_metrics.h"
#endif
