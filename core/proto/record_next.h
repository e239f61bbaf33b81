/*
 * record_next.h: the fast path of kn_rb_next (record_batch.h), inline
 * so a caller's record loop (the consumer's drain) decodes each record
 * straight into its own structure, with the reading position in
 * registers (kn_rb_cursor): a consumer of small records spends a
 * quarter of its time decoding, and a call per record, a kn_record
 * copied out of it and the position stored back per record were a
 * good part of that.
 *
 * One record is decoded with plain pointers for the usual shape (every
 * varint at most 4 bytes, every field inside the record). Anything else
 * -- a longer varint, a field past the end, a header that does not fit,
 * bytes left over, the batch's declared count reached -- returns false
 * with the batch untouched, and kn_rb_next's checked reader decodes the
 * record again and names the fault (or ends the batch); so both paths
 * accept exactly the same records.
 */
#ifndef KN_RECORD_NEXT_H
#define KN_RECORD_NEXT_H

#include <stdbool.h>
#include <stdint.h>

#include "proto/record_batch.h"

static inline bool kn_rb_fast_varint(const uint8_t **pp, const uint8_t *end, int32_t *out) {
    const uint8_t *p = *pp;
    uint32_t u = 0;
    for (int shift = 0; shift < 28 && p < end; shift += 7) {
        uint8_t c = *p++;
        u |= (uint32_t)(c & 0x7f) << shift;
        if (!(c & 0x80)) {
            *out = (int32_t)(u >> 1) ^ -(int32_t)(u & 1);
            *pp = p;
            return true;
        }
    }
    return false;
}

/* A varint-length field at *pp inside [*pp, end): negative lengths are
 * null, as the checked reader reads them. */
static inline bool kn_rb_fast_field(const uint8_t **pp, const uint8_t *end, kn_bytes *out) {
    int32_t n;
    if (!kn_rb_fast_varint(pp, end, &n))
        return false;
    if (n < 0) {
        out->ptr = NULL;
        out->len = -1;
        return true;
    }
    if (n > end - *pp)
        return false;
    out->ptr = *pp;
    out->len = n;
    *pp += n;
    return true;
}

/* A batch's reading position held in plain pointers, so a loop over
 * records keeps it in registers (the kn_rb it came from is written back
 * once, by kn_rb_cursor_end). */
typedef struct kn_rb_cursor {
    const uint8_t *p;   /* the next record */
    const uint8_t *lim; /* the end of the record section */
    int32_t left;       /* records the batch still declares */
} kn_rb_cursor;

/* Takes b's reading position (after kn_rb_records_begin): false when
 * nothing is left to read fast (the declared count reached, or no bytes
 * left: an empty decompressed body has buf NULL, and NULL + 0 is
 * undefined), and then kn_rb_next says what comes. */
static inline bool kn_rb_cursor_begin(const kn_rb *b, kn_rb_cursor *c) {
    const kn_rd *r = &b->rd;
    if (b->index >= b->h.record_count || r->err || r->off >= r->len)
        return false;
    c->p = r->buf + r->off;
    c->lim = r->buf + r->len;
    c->left = b->h.record_count - b->index;
    return true;
}

/* Gives the position back to b after `read` records of kn_rb_cursor_next. */
static inline void kn_rb_cursor_end(kn_rb *b, const kn_rb_cursor *c, int32_t read) {
    b->rd.off = (size_t)(c->p - b->rd.buf);
    b->index += read;
}

/* The next record's own fields into *rec (not offset and timestamp:
 * those take the batch header, kn_rb_record_finish): true, or false with
 * nothing read when kn_rb_next's checked reader must take over. */
static inline bool kn_rb_cursor_next(kn_rb_cursor *c, kn_record *rec) {
    if (c->left <= 0 || c->p >= c->lim)
        return false;
    const uint8_t *p = c->p, *lim = c->lim;
    int32_t body_len, ts_delta, offset_delta, header_count;
    kn_bytes key, value;
    if (!kn_rb_fast_varint(&p, lim, &body_len) || body_len < 1 || body_len > lim - p)
        return false;
    const uint8_t *end = p + body_len;
    int8_t attributes = (int8_t)*p++;
    if (!kn_rb_fast_varint(&p, end, &ts_delta) || !kn_rb_fast_varint(&p, end, &offset_delta) ||
        !kn_rb_fast_field(&p, end, &key) || !kn_rb_fast_field(&p, end, &value) ||
        !kn_rb_fast_varint(&p, end, &header_count) || header_count < 0)
        return false;
    const uint8_t *hstart = p;
    for (int32_t i = 0; i < header_count; i++) {
        kn_bytes k, v;
        if (!kn_rb_fast_field(&p, end, &k) || k.len < 0 || !kn_rb_fast_field(&p, end, &v))
            return false;
    }
    if (p != end)
        return false;
    rec->attributes = attributes;
    rec->timestamp_delta = ts_delta;
    rec->offset_delta = offset_delta;
    rec->key = key;
    rec->value = value;
    rec->header_count = header_count;
    rec->headers.ptr = hstart;
    rec->headers.len = (int32_t)(end - hstart);
    c->p = end;
    c->left--;
    return true;
}

/* The record's offset and timestamp from its deltas and the batch
 * header. Wraps like Java's long arithmetic on hostile input. */
static inline int64_t kn_rb_record_offset(const kn_rb_header *h, int32_t offset_delta) {
    return (int64_t)((uint64_t)h->base_offset + (uint64_t)(int64_t)offset_delta);
}
static inline int64_t kn_rb_record_timestamp(const kn_rb_header *h, int64_t timestamp_delta) {
    if (h->attributes & KN_RB_ATTR_LOG_APPEND_TIME)
        return h->max_timestamp;
    return (int64_t)((uint64_t)h->base_timestamp + (uint64_t)timestamp_delta);
}

/* Fills the fields a record takes from its batch header, once its own
 * are read (both paths of kn_rb_next), and counts it read. */
static inline void kn_rb_record_finish(kn_rb *b, kn_record *rec) {
    rec->offset = kn_rb_record_offset(&b->h, rec->offset_delta);
    rec->timestamp = kn_rb_record_timestamp(&b->h, rec->timestamp_delta);
    b->index++;
}

/* kn_rb_next's fast path for one record: true with *rec filled, false
 * (nothing read) when the checked reader must take over. */
static inline bool kn_rb_next_fast(kn_rb *b, kn_record *rec) {
    kn_rb_cursor c;
    if (!kn_rb_cursor_begin(b, &c) || !kn_rb_cursor_next(&c, rec))
        return false;
    kn_rb_cursor_end(b, &c, 0); /* kn_rb_record_finish counts it */
    kn_rb_record_finish(b, rec);
    return true;
}

#endif
