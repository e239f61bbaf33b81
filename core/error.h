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

/* Flags of a Kafka error code (0 for unknown codes and the library's own). */
int kn_err_flags(int code);

/* snprintf into errstr (if non-NULL and size > 0). */
void kn_errstr_set(char *errstr, size_t size, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

#endif
