/*
 * writer.h: the one growable, capped writer for everything sent on the
 * wire. Errors are sticky like the reader's: a write past the cap, or a
 * failed allocation, sets err and later writes do nothing, so an encoder
 * checks once at the end. The writer owns its buffer until
 * kn_wr_detach() hands it to the caller.
 */
#ifndef KN_WRITER_H
#define KN_WRITER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "reader.h"

/* Bytes an encoder refers to instead of copying them (a Produce
 * request's record batches): they belong in the output right before the
 * writer's byte `at`, and whoever sends the output (a writev) must keep
 * them alive until it is written. */
typedef struct kn_wr_splice {
    size_t at;
    const uint8_t *ptr;
    size_t len;
} kn_wr_splice;

typedef struct kn_wr_splices {
    kn_wr_splice *items; /* owned by whoever set it up (kn_free) */
    int32_t count, cap;
    size_t bytes; /* sum of the lengths */
    size_t min;   /* kp_wr_bytes splices byte strings at least this long */
} kn_wr_splices;

typedef struct kn_wr {
    uint8_t *buf;
    size_t len;
    size_t cap;
    size_t max; /* hard cap on len */
    int err;    /* 0, KN_ERR__NOMEM or KN_ERR__INVALID_ARG (over the cap) */
    kn_wr_splices *splices; /* NULL (kn_wr_init): everything is copied */
} kn_wr;

/* Starts empty; max is the cap on the total size (0: 1 GiB). */
void kn_wr_init(kn_wr *w, size_t initial, size_t max);
/* Frees the buffer (if still owned). */
void kn_wr_free(kn_wr *w);
/* Hands the buffer to the caller (kn_free), leaves the writer empty. */
uint8_t *kn_wr_detach(kn_wr *w, size_t *len);
/* The slow half of kn_wr_grow: the cap, the sticky error, realloc. */
bool kn_wr_grow_slow(kn_wr *w, size_t n);
/* Grows so n more bytes fit; false (and err set) on failure. Inline for
 * the common case (room already there): every field an encoder writes
 * passes here, a call per byte written was measurable per record. */
static inline bool kn_wr_grow(kn_wr *w, size_t n) {
    if (!w->err && n <= w->cap - w->len && n <= w->max - w->len)
        return true;
    return kn_wr_grow_slow(w, n);
}

static inline bool kn_wr_ok(const kn_wr *w) { return w->err == 0; }

/* Records n bytes at p as a splice at the current position instead of
 * copying them (w->splices must be set); sets err on failure. */
void kn_wr_splice_add(kn_wr *w, const void *p, size_t n);

/* Reserves n bytes, returns their offset (for later patching), or
 * (size_t)-1 on failure. The bytes are zeroed. */
static inline size_t kn_wr_reserve(kn_wr *w, size_t n) {
    if (!kn_wr_grow(w, n))
        return (size_t)-1;
    size_t off = w->len;
    memset(w->buf + off, 0, n);
    w->len += n;
    return off;
}

static inline void kn_wr_raw(kn_wr *w, const void *p, size_t n) {
    if (n && kn_wr_grow(w, n)) {
        memcpy(w->buf + w->len, p, n);
        w->len += n;
    }
}
static inline void kn_wr_i8(kn_wr *w, int8_t v) {
    if (kn_wr_grow(w, 1))
        w->buf[w->len++] = (uint8_t)v;
}
static inline void kn_wr_bool(kn_wr *w, bool v) { kn_wr_i8(w, v ? 1 : 0); }
static inline void kn_wr_put_u16_at(uint8_t *p, uint16_t v) {
    p[0] = (uint8_t)(v >> 8);
    p[1] = (uint8_t)v;
}
static inline void kn_wr_put_u32_at(uint8_t *p, uint32_t v) {
    p[0] = (uint8_t)(v >> 24);
    p[1] = (uint8_t)(v >> 16);
    p[2] = (uint8_t)(v >> 8);
    p[3] = (uint8_t)v;
}
static inline void kn_wr_i16(kn_wr *w, int16_t v) {
    if (kn_wr_grow(w, 2)) {
        kn_wr_put_u16_at(w->buf + w->len, (uint16_t)v);
        w->len += 2;
    }
}
static inline void kn_wr_u32(kn_wr *w, uint32_t v) {
    if (kn_wr_grow(w, 4)) {
        kn_wr_put_u32_at(w->buf + w->len, v);
        w->len += 4;
    }
}
static inline void kn_wr_i32(kn_wr *w, int32_t v) { kn_wr_u32(w, (uint32_t)v); }
static inline void kn_wr_u64(kn_wr *w, uint64_t v) {
    kn_wr_u32(w, (uint32_t)(v >> 32));
    kn_wr_u32(w, (uint32_t)v);
}
static inline void kn_wr_i64(kn_wr *w, int64_t v) { kn_wr_u64(w, (uint64_t)v); }
static inline void kn_wr_f64(kn_wr *w, double d) {
    uint64_t u;
    memcpy(&u, &d, sizeof u);
    kn_wr_u64(w, u);
}
static inline void kn_wr_uvarlong(kn_wr *w, uint64_t v) {
    uint8_t tmp[10];
    size_t n = 0;
    do {
        tmp[n] = (uint8_t)(v & 0x7f);
        v >>= 7;
        if (v)
            tmp[n] |= 0x80;
        n++;
    } while (v);
    kn_wr_raw(w, tmp, n);
}
static inline void kn_wr_uvarint(kn_wr *w, uint32_t v) { kn_wr_uvarlong(w, v); }
static inline void kn_wr_varint(kn_wr *w, int32_t v) {
    kn_wr_uvarint(w, ((uint32_t)v << 1) ^ (uint32_t)(v >> 31));
}
static inline void kn_wr_varlong(kn_wr *w, int64_t v) {
    kn_wr_uvarlong(w, ((uint64_t)v << 1) ^ (uint64_t)(v >> 63));
}
/* Size in bytes of v as an unsigned varint / zigzag varint. */
static inline size_t kn_uvarint_size(uint64_t v) {
    /* 7 bits a byte: the bit length rounded up to sevens, no loop;
     * most record fields (deltas, counts, null lengths) take one. */
    if (v < 0x80)
        return 1;
    return (size_t)(70 - __builtin_clzll(v)) / 7;
}
static inline size_t kn_varint_size(int64_t v) {
    return kn_uvarint_size(((uint64_t)v << 1) ^ (uint64_t)(v >> 63));
}
static inline void kn_wr_uuid(kn_wr *w, const kn_uuid *u) { kn_wr_raw(w, u->b, 16); }

/* Classic string (int16 length, -1 null) and bytes (int32 length). */
static inline void kn_wr_string(kn_wr *w, kn_str s) {
    if (s.len < 0 || !s.ptr) {
        kn_wr_i16(w, -1);
        return;
    }
    if (s.len > INT16_MAX) {
        w->err = w->err ? w->err : KN_ERR__INVALID_ARG;
        return;
    }
    kn_wr_i16(w, (int16_t)s.len);
    kn_wr_raw(w, s.ptr, (size_t)s.len);
}
static inline void kn_wr_bytes(kn_wr *w, kn_bytes b) {
    if (b.len < 0 || (!b.ptr && b.len)) {
        kn_wr_i32(w, -1);
        return;
    }
    kn_wr_i32(w, b.len);
    kn_wr_raw(w, b.ptr, (size_t)b.len);
}
/* Compact string/bytes: uvarint length+1, 0 for null. */
static inline void kn_wr_compact_string(kn_wr *w, kn_str s) {
    if (s.len < 0 || !s.ptr) {
        kn_wr_uvarint(w, 0);
        return;
    }
    kn_wr_uvarint(w, (uint32_t)s.len + 1);
    kn_wr_raw(w, s.ptr, (size_t)s.len);
}
static inline void kn_wr_compact_bytes(kn_wr *w, kn_bytes b) {
    if (b.len < 0 || (!b.ptr && b.len)) {
        kn_wr_uvarint(w, 0);
        return;
    }
    kn_wr_uvarint(w, (uint32_t)b.len + 1);
    kn_wr_raw(w, b.ptr, (size_t)b.len);
}

#endif
