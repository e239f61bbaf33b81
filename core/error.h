/*
 * error.h: internal error helpers. Codes are in kafka_native.h; this adds
 * the per-code flags (retriable, needs metadata refresh) and a helper to
 * fill a caller's errstr buffer.
 */
#ifndef KN_ERROR_H
#define KN_ERROR_H
#include <stdarg.h>
#include <stddef.h>

#include "kafka_native.h"

#define KN_EF_RETRIABLE 0x1
#define KN_EF_METADATA 0x2
#define KN_EF_COORDINATOR 0x4

/* True when err means "find the coordinator again": a Kafka code flagged
 * KN_EF_COORDINATOR (NOT_COORDINATOR, COORDINATOR_NOT_AVAILABLE,
 * REQUEST_TIMED_OUT, as Java's coordinator handlers treat them) or the
 * library's own connection errors (_TRANSPORT, _TIMED_OUT, _RESOLVE,
 * _ALL_BROKERS_DOWN: the coordinator could not be reached). The one
 * answer for the consumer's offsets and group and the transactional
 * producer. */
int kn_err_is_coordinator(int code);

/* Flags of a Kafka error code (0 for unknown codes and the library's own). */
int kn_err_flags(int code);

/* Records code as the calling thread's kn_last_error(): the public
 * constructors (and knw_client_new, which they share) call it on every
 * failure, so the code a NULL return lost is still there to read. */
void kn_set_last_error(int code);

/* Copies a size-versioned public struct (leading size_t size, set by the
 * caller to the size it was built with) out of the library's full copy
 * full (full_size bytes): min(out's size, full_size) bytes, so a caller
 * built against an older, smaller struct is never written past, and
 * sets out's size to the bytes written (a newer, larger caller learns
 * which fields it got). The caller checked size >= sizeof(size_t). */
void kn_stats_copy_out(void *out, const void *full, size_t full_size);

/* snprintf into errstr (if non-NULL and size > 0). */
void kn_errstr_set(char *errstr, size_t size, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

#endif
