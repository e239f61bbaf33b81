/*
 * json.h: a small bounded JSON reader (RFC 8259) for the few JSON
 * documents the client reads that are not Kafka protocol: an OAuth token
 * endpoint's answer and a JWT's claims (core/wire/sasl/jwt.c).
 *
 * It validates a whole document strictly (no trailing commas, comments,
 * NaN, single quotes or unescaped control characters; nesting at most
 * KN_JSON_MAX_DEPTH) and finds a member of the top-level object. Values
 * are spans into the caller's text, decoded on demand. Nothing is
 * allocated; a malformed document gets "malformed JSON at byte N: why".
 */
#ifndef KN_JSON_H
#define KN_JSON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define KN_JSON_MAX_DEPTH 32

typedef enum kn_json_type {
    KN_JSON_NONE = 0, /* not present */
    KN_JSON_NULL,
    KN_JSON_BOOL,
    KN_JSON_NUMBER,
    KN_JSON_STRING,
    KN_JSON_ARRAY,
    KN_JSON_OBJECT
} kn_json_type;

/* A value's text inside the document (a string keeps its quotes). */
typedef struct kn_json_val {
    kn_json_type type;
    const char *ptr;
    size_t len;
} kn_json_val;

/* Checks doc[0..len) is one JSON value. 0, or -1 with errstr. */
int kn_json_check(const char *doc, size_t len, char *errstr, size_t errstr_size);

/* The top-level value's type after a successful kn_json_check. */
kn_json_type kn_json_root_type(const char *doc, size_t len);

/* Validates doc and finds member key of its top-level object (the last
 * one if repeated, as Jackson does). Returns 0 with *out (type
 * KN_JSON_NONE when absent), or -1 with errstr when doc is malformed or
 * not an object. */
int kn_json_get(const char *doc, size_t len, const char *key, kn_json_val *out, char *errstr,
                size_t errstr_size);

/* Decodes a KN_JSON_STRING value (escapes, \u surrogate pairs to UTF-8)
 * into out (cap bytes, NUL-terminated). 0, or -1 when it does not fit
 * or holds a NUL character. */
int kn_json_string(const kn_json_val *v, char *out, size_t cap, size_t *out_len);

/* A KN_JSON_NUMBER value as a double. 0 or -1. */
int kn_json_number(const kn_json_val *v, double *out);

/* Walks a KN_JSON_ARRAY value: *pos starts at 0; each call puts the
 * next element in *elem and returns true, false at the end. */
bool kn_json_array_next(const kn_json_val *arr, size_t *pos, kn_json_val *elem);

#endif
