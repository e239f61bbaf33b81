/*
 * kp_codec.h: the small inline helpers the generated codecs
 * (core/proto/generated/) are written in: classic/compact strings, bytes
 * and array lengths with the schema's nullability rules, tagged-field
 * sections, and arena allocation of decoded arrays. Internal to the
 * protocol layer; hand-written code uses the typed kp_<Message>_*
 * functions instead.
 *
 * Conventions: a kn_str/kn_bytes with len < 0 is null; {NULL, 0} is an
 * empty value (a zeroed struct encodes as empty, not as null). Readers
 * fail sticky (kn_rd_fail) so decoders check once; writers return an
 * error code for caller mistakes (KN_ERR__INVALID_ARG).
 */
#ifndef KP_CODEC_H
#define KP_CODEC_H

#include <string.h>

#include "proto/kp_types.h"

/* ---- decoding ---- */

/* A string in classic (int16 length) or compact (uvarint length+1)
 * form; a null where the schema does not allow one fails the reader. */
static inline kn_str kp_rd_str(kn_rd *r, bool compact, bool nullable) {
    kn_str s = compact ? kn_rd_compact_string(r) : kn_rd_string(r);
    if (s.len < 0 && !nullable)
        kn_rd_fail(r, "null in a non-nullable string");
    return s;
}

static inline kn_bytes kp_rd_bytes(kn_rd *r, bool compact, bool nullable) {
    kn_bytes b = compact ? kn_rd_compact_bytes(r) : kn_rd_bytes(r);
    if (b.len < 0 && !nullable)
        kn_rd_fail(r, "null in non-nullable bytes");
    return b;
}

/* An array's element count (-1: null). The count is never trusted: each
 * element takes at least min_size bytes, so a count that cannot fit in
 * what remains fails the reader before anything is allocated. */
static inline int32_t kp_rd_array_len(kn_rd *r, bool compact, bool nullable, size_t min_size) {
    int64_t n;
    if (compact) {
        n = (int64_t)kn_rd_uvarint(r) - 1;
    } else {
        n = kn_rd_i32(r);
        if (n < -1) {
            kn_rd_fail(r, "negative array length");
            return -1;
        }
    }
    if (!kn_rd_ok(r))
        return -1;
    if (n < 0) {
        if (!nullable)
            kn_rd_fail(r, "null in a non-nullable array");
        return -1;
    }
    if ((uint64_t)n * (min_size ? min_size : 1) > kn_rd_remaining(r)) {
        kn_rd_fail(r, "array length exceeds remaining bytes");
        return -1;
    }
    return (int32_t)n;
}

/* Zeroed storage for n decoded elements, owned by the arena; NULL when
 * n <= 0 (callers treat n > 0 && NULL as out of memory). */
static inline void *kp_arena_items(kn_arena *a, int32_t n, size_t size) {
    return n > 0 ? kn_arena_calloc(a, (size_t)n, size) : NULL;
}

/* Skips a whole tagged-field section (a struct with no tagged field this
 * version knows). Each field is skipped by its declared size. */
static inline void kp_rd_skip_tags(kn_rd *r) {
    uint32_t n = kn_rd_uvarint(r);
    for (uint32_t i = 0; i < n && kn_rd_ok(r); i++) {
        (void)kn_rd_uvarint(r);
        (void)kn_rd_skip(r, kn_rd_uvarint(r));
    }
}

/* Reads one tagged field's size and carves its bytes out of r into sub,
 * which keeps r's buffer (so error offsets stay absolute) but ends where
 * the field ends. r moves past the field. */
static inline bool kp_rd_tagged(kn_rd *r, kn_rd *sub) {
    uint32_t size = kn_rd_uvarint(r);
    *sub = *r;
    if (!kn_rd_skip(r, size))
        return false;
    sub->len = sub->off + size;
    return true;
}

/* After decoding a known tagged field from sub: propagates sub's error
 * to r and insists the field used exactly its declared size. */
static inline int kp_rd_tagged_end(kn_rd *r, const kn_rd *sub) {
    if (r->err)
        return KN_ERR__PROTOCOL;
    if (sub->err) {
        r->err = sub->err;
        r->err_off = sub->err_off;
        r->err_what = sub->err_what;
        return KN_ERR__PROTOCOL;
    }
    if (sub->off != sub->len) {
        r->err = KN_ERR__PROTOCOL;
        r->err_off = sub->off;
        r->err_what = "tagged field size mismatch";
        return KN_ERR__PROTOCOL;
    }
    return 0;
}

/* A decode inside a tagged field failed with rc: hands the sub-reader's
 * error (if it has one) to r so the caller sees where, returns rc. */
static inline int kp_rd_sub_fail(kn_rd *r, const kn_rd *sub, int rc) {
    if (!r->err && sub->err) {
        r->err = sub->err;
        r->err_off = sub->err_off;
        r->err_what = sub->err_what;
    }
    return rc;
}

/* ---- encoding ---- */

static inline int kp_wr_str(kn_wr *w, kn_str s, bool compact, bool nullable) {
    if (s.len < 0) {
        if (!nullable)
            return KN_ERR__INVALID_ARG;
        if (compact)
            kn_wr_uvarint(w, 0);
        else
            kn_wr_i16(w, -1);
        return 0;
    }
    if (s.len > 0 && !s.ptr)
        return KN_ERR__INVALID_ARG;
    if (compact) {
        kn_wr_uvarint(w, (uint32_t)s.len + 1);
    } else {
        if (s.len > INT16_MAX)
            return KN_ERR__INVALID_ARG;
        kn_wr_i16(w, (int16_t)s.len);
    }
    kn_wr_raw(w, s.ptr, (size_t)s.len);
    return 0;
}

static inline int kp_wr_bytes(kn_wr *w, kn_bytes b, bool compact, bool nullable) {
    if (b.len < 0) {
        if (!nullable)
            return KN_ERR__INVALID_ARG;
        if (compact)
            kn_wr_uvarint(w, 0);
        else
            kn_wr_i32(w, -1);
        return 0;
    }
    if (b.len > 0 && !b.ptr)
        return KN_ERR__INVALID_ARG;
    if (compact)
        kn_wr_uvarint(w, (uint32_t)b.len + 1);
    else
        kn_wr_i32(w, b.len);
    if (w->splices && (size_t)b.len >= w->splices->min)
        kn_wr_splice_add(w, b.ptr, (size_t)b.len); /* written by writev from where it is */
    else
        kn_wr_raw(w, b.ptr, (size_t)b.len);
    return 0;
}

/* An array's length; rejects null where not nullable and a positive
 * count without items. */
static inline int kp_wr_array_len(kn_wr *w, int32_t count, const void *items, bool compact, bool nullable) {
    if (count < 0) {
        if (!nullable)
            return KN_ERR__INVALID_ARG;
        if (compact)
            kn_wr_uvarint(w, 0);
        else
            kn_wr_i32(w, -1);
        return 0;
    }
    if (count > 0 && !items)
        return KN_ERR__INVALID_ARG;
    if (compact)
        kn_wr_uvarint(w, (uint32_t)count + 1);
    else
        kn_wr_i32(w, count);
    return 0;
}

/* A tagged field is tag, size, value; the size is only known after the
 * value is written, so begin writes the tag and returns where the value
 * starts, and end slides the value up to insert its size before it. */
static inline size_t kp_wr_tag_begin(kn_wr *w, uint32_t tag) {
    kn_wr_uvarint(w, tag);
    return w->len;
}

static inline void kp_wr_tag_end(kn_wr *w, size_t start) {
    if (w->err)
        return;
    size_t n = w->len - start;
    size_t vs = kn_uvarint_size(n);
    if (n > UINT32_MAX) {
        w->err = KN_ERR__INVALID_ARG;
        return;
    }
    if (!kn_wr_grow(w, vs))
        return;
    memmove(w->buf + start + vs, w->buf + start, n);
    size_t end = w->len + vs;
    w->len = start;
    kn_wr_uvarint(w, (uint32_t)n);
    w->len = end;
}

/* ---- defaults ---- */

/* Equality of a string with a schema default (not null). */
static inline bool kp_str_is(kn_str s, const char *lit, int32_t n) {
    return s.len == n && (n == 0 || memcmp(s.ptr, lit, (size_t)n) == 0);
}

#endif
