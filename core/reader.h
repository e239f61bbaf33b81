/*
 * reader.h: the one bounds-checked reader for everything read off the
 * wire (responses, record batches, consumer-protocol blobs).
 *
 * Errors are sticky: the first failed read records its offset and a
 * static description, later reads return zero values and do nothing, so
 * a decoder checks kn_rd_ok() once at the end instead of after each
 * field. No length read from the wire is trusted: every variable-length
 * read is checked against what remains. The reader never owns memory;
 * slices it returns point into the caller's buffer.
 */
#ifndef KN_READER_H
#define KN_READER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "kafka_native.h"

/* A possibly-null string slice: len < 0 means null. Not NUL-terminated. */
typedef struct kn_str {
    const char *ptr;
    int32_t len;
} kn_str;

/* A possibly-null byte slice: len < 0 means null. */
typedef struct kn_bytes {
    const uint8_t *ptr;
    int32_t len;
} kn_bytes;

typedef struct kn_uuid {
    uint8_t b[16];
} kn_uuid;

typedef struct kn_rd {
    const uint8_t *buf;
    size_t len;
    size_t off;
    int err;              /* 0 or KN_ERR__PROTOCOL */
    size_t err_off;       /* offset of the first failed read */
    const char *err_what; /* static text: what failed there */
} kn_rd;

static inline void kn_rd_init(kn_rd *r, const void *buf, size_t len) {
    r->buf = (const uint8_t *)buf;
    r->len = len;
    r->off = 0;
    r->err = 0;
    r->err_off = 0;
    r->err_what = NULL;
}

static inline bool kn_rd_ok(const kn_rd *r) { return r->err == 0; }
static inline size_t kn_rd_remaining(const kn_rd *r) { return r->err ? 0 : r->len - r->off; }

/* Marks the reader failed (first failure wins). Always returns false. */
static inline bool kn_rd_fail(kn_rd *r, const char *what) {
    if (!r->err) {
        r->err = KN_ERR__PROTOCOL;
        r->err_off = r->off;
        r->err_what = what;
    }
    return false;
}

/* Returns a pointer to the next n bytes and advances, or NULL. */
static inline const uint8_t *kn_rd_take(kn_rd *r, size_t n, const char *what) {
    if (r->err)
        return NULL;
    if (n > r->len - r->off) {
        kn_rd_fail(r, what);
        return NULL;
    }
    const uint8_t *p = r->buf + r->off;
    r->off += n;
    return p;
}

static inline bool kn_rd_skip(kn_rd *r, size_t n) { return kn_rd_take(r, n, "skip past end") != NULL; }

static inline int8_t kn_rd_i8(kn_rd *r) {
    const uint8_t *p = kn_rd_take(r, 1, "int8 past end");
    return p ? (int8_t)p[0] : 0;
}
static inline int16_t kn_rd_i16(kn_rd *r) {
    const uint8_t *p = kn_rd_take(r, 2, "int16 past end");
    return p ? (int16_t)(((uint16_t)p[0] << 8) | p[1]) : 0;
}
static inline uint16_t kn_rd_u16(kn_rd *r) { return (uint16_t)kn_rd_i16(r); }
static inline uint32_t kn_rd_u32(kn_rd *r) {
    const uint8_t *p = kn_rd_take(r, 4, "int32 past end");
    return p ? ((uint32_t)p[0] << 24) | ((uint32_t)p[1] << 16) | ((uint32_t)p[2] << 8) | p[3] : 0;
}
static inline int32_t kn_rd_i32(kn_rd *r) { return (int32_t)kn_rd_u32(r); }
static inline uint64_t kn_rd_u64(kn_rd *r) {
    uint64_t hi = kn_rd_u32(r);
    return (hi << 32) | kn_rd_u32(r);
}
static inline int64_t kn_rd_i64(kn_rd *r) { return (int64_t)kn_rd_u64(r); }
static inline double kn_rd_f64(kn_rd *r) {
    uint64_t u = kn_rd_u64(r);
    double d;
    memcpy(&d, &u, sizeof d);
    return d;
}
static inline bool kn_rd_bool(kn_rd *r) { return kn_rd_i8(r) != 0; }

/* Unsigned LEB128 varint of at most 5 bytes (32 bits). */
static inline uint32_t kn_rd_uvarint(kn_rd *r) {
    uint32_t v = 0;
    for (int shift = 0; shift < 35; shift += 7) {
        const uint8_t *p = kn_rd_take(r, 1, "varint past end");
        if (!p)
            return 0;
        v |= (uint32_t)(p[0] & 0x7f) << shift;
        if (!(p[0] & 0x80))
            return v;
    }
    kn_rd_fail(r, "varint longer than 5 bytes");
    return 0;
}
/* Unsigned LEB128 of at most 10 bytes (64 bits). */
static inline uint64_t kn_rd_uvarlong(kn_rd *r) {
    uint64_t v = 0;
    for (int shift = 0; shift < 70; shift += 7) {
        const uint8_t *p = kn_rd_take(r, 1, "varlong past end");
        if (!p)
            return 0;
        v |= (uint64_t)(p[0] & 0x7f) << shift;
        if (!(p[0] & 0x80))
            return v;
    }
    kn_rd_fail(r, "varlong longer than 10 bytes");
    return 0;
}
/* Zigzag-encoded signed varints (record fields). */
static inline int32_t kn_rd_varint(kn_rd *r) {
    uint32_t u = kn_rd_uvarint(r);
    return (int32_t)(u >> 1) ^ -(int32_t)(u & 1);
}
static inline int64_t kn_rd_varlong(kn_rd *r) {
    uint64_t u = kn_rd_uvarlong(r);
    return (int64_t)(u >> 1) ^ -(int64_t)(u & 1);
}

static inline kn_uuid kn_rd_uuid(kn_rd *r) {
    kn_uuid u;
    const uint8_t *p = kn_rd_take(r, 16, "uuid past end");
    if (p)
        memcpy(u.b, p, 16);
    else
        memset(u.b, 0, 16);
    return u;
}

/* A slice of n bytes at the cursor (n < 0 yields a null slice). */
static inline kn_bytes kn_rd_slice(kn_rd *r, int64_t n, const char *what) {
    kn_bytes b = {NULL, -1};
    if (n < 0)
        return b;
    if (n > INT32_MAX) {
        kn_rd_fail(r, what);
        return b;
    }
    b.ptr = kn_rd_take(r, (size_t)n, what);
    b.len = b.ptr ? (int32_t)n : -1;
    return b;
}

/* Classic encodings: int16 length (string) / int32 length (bytes), -1 null. */
static inline kn_str kn_rd_string(kn_rd *r) {
    kn_bytes b = kn_rd_slice(r, kn_rd_i16(r), "string past end");
    kn_str s = {(const char *)b.ptr, b.len};
    return s;
}
static inline kn_bytes kn_rd_bytes(kn_rd *r) { return kn_rd_slice(r, kn_rd_i32(r), "bytes past end"); }
/* Compact encodings: uvarint length+1, 0 null. */
static inline kn_str kn_rd_compact_string(kn_rd *r) {
    kn_bytes b = kn_rd_slice(r, (int64_t)kn_rd_uvarint(r) - 1, "compact string past end");
    kn_str s = {(const char *)b.ptr, b.len};
    return s;
}
static inline kn_bytes kn_rd_compact_bytes(kn_rd *r) {
    return kn_rd_slice(r, (int64_t)kn_rd_uvarint(r) - 1, "compact bytes past end");
}

/* Compares a slice with a C string. */
static inline bool kn_str_eq(kn_str s, const char *c) {
    size_t n = strlen(c);
    return s.len >= 0 && (size_t)s.len == n && memcmp(s.ptr, c, n) == 0;
}
static inline kn_str kn_str_c(const char *c) {
    kn_str s = {c, c ? (int32_t)strlen(c) : -1};
    return s;
}
static inline bool kn_uuid_is_zero(const kn_uuid *u) {
    static const kn_uuid zero;
    return memcmp(u->b, zero.b, 16) == 0;
}

#endif
