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

#ifdef __cplusplus
extern "C" {
#endif

#define KN_VERSION_STR "0.1.0"
#define KN_SOFTWARE_NAME "kafka-native"

#define KN_OK 0

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
    X(-224, UNSUPPORTED, "not supported by this build or broker")

enum kn_own_err {
#define KN_OWN_ERR_ENUM(code, name, msg) KN_ERR__##name = (code),
    KN_OWN_ERRORS(KN_OWN_ERR_ENUM)
#undef KN_OWN_ERR_ENUM
};

/* Name of an error code ("UNKNOWN_TOPIC_OR_PARTITION", "_TIMED_OUT"):
 * static storage, never NULL. */
const char *kn_err_name(int code);
/* Short human description of an error code: static storage, never NULL. */
const char *kn_err_message(int code);
/* Non-zero if retrying the same operation may succeed. */
int kn_err_is_retriable(int code);

/* Replaceable allocator (set once, before any other call): lets tests
 * inject allocation failures. NULL members keep the libc function. */
typedef struct kn_allocator {
    void *(*malloc_fn)(size_t size);
    void *(*realloc_fn)(void *ptr, size_t size);
    void (*free_fn)(void *ptr);
} kn_allocator;
void kn_set_allocator(const kn_allocator *allocator);

#ifdef __cplusplus
}
#endif
#endif
