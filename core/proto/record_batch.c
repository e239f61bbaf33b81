/*
 * record_batch.c: the record batch v2 decoder (kn_rb), the lazy record
 * iterator and the splitter of a Fetch `records` blob into batches (see
 * record_batch.h). Nothing here allocates: slices point into the
 * caller's buffer, or into the caller's scratch writer for compressed
 * batches.
 *
 * Checks follow the Java client's (DefaultRecordBatch, DefaultRecord,
 * ByteBufferLogInputStream): batch smaller than the 61-byte header,
 * negative record count, a record whose fields do not fill exactly its
 * declared length, records left over after recordCount, and a negative
 * header key length are all corrupt batches.
 */
#include "proto/record_batch.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "codec/codec.h"
#include "crc32c.h"
#include "error.h"

/* Fills errstr with "record batch at offset N: <message>" and returns
 * KN_ERR__BAD_BATCH. */
__attribute__((format(printf, 4, 5))) static int rb_bad(const kn_rb *b, char *errstr,
                                                        size_t errsize, const char *fmt, ...) {
    char msg[200];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    kn_errstr_set(errstr, errsize, "record batch at offset %" PRId64 ": %s", b->h.base_offset,
                  msg);
    return KN_ERR__BAD_BATCH;
}

int kn_rb_parse(kn_rb *b, const uint8_t *buf, size_t len, int flags, char *errstr,
                size_t errsize) {
    kn_rd r;
    kn_rd_init(&r, buf, len);
    memset(b, 0, sizeof *b);
    kn_rb_header *h = &b->h;
    h->base_offset = kn_rd_i64(&r);
    h->batch_length = kn_rd_i32(&r);
    h->partition_leader_epoch = kn_rd_i32(&r);
    h->magic = kn_rd_i8(&r);
    if (!kn_rd_ok(&r))
        return rb_bad(b, errstr, errsize, "truncated batch header (%zu of %d bytes)", len,
                      KN_RB_MAGIC_OFFSET + 1);
    if (h->magic != 2) {
        if (h->magic == 0 || h->magic == 1) {
            kn_errstr_set(errstr, errsize,
                          "record batch at offset %" PRId64
                          ": message format v%d (magic %d) is not supported; only record batch "
                          "v2 (Kafka >= 0.11) is",
                          h->base_offset, h->magic, h->magic);
            return KN_ERR__UNSUPPORTED;
        }
        return rb_bad(b, errstr, errsize, "unknown magic %d", h->magic);
    }
    if (h->batch_length < KN_RB_HEADER_SIZE - KN_RB_LOG_OVERHEAD)
        return rb_bad(b, errstr, errsize, "batch length %d is below the minimum %d",
                      h->batch_length, KN_RB_HEADER_SIZE - KN_RB_LOG_OVERHEAD);
    b->size = KN_RB_LOG_OVERHEAD + (size_t)h->batch_length;
    if (b->size > len)
        return rb_bad(b, errstr, errsize, "truncated: batch of %zu bytes, only %zu available",
                      b->size, len);
    h->crc = kn_rd_u32(&r);
    h->attributes = kn_rd_i16(&r);
    h->last_offset_delta = kn_rd_i32(&r);
    h->base_timestamp = kn_rd_i64(&r);
    h->max_timestamp = kn_rd_i64(&r);
    h->producer_id = kn_rd_i64(&r);
    h->producer_epoch = kn_rd_i16(&r);
    h->base_sequence = kn_rd_i32(&r);
    h->record_count = kn_rd_i32(&r);
    if (!kn_rd_ok(&r)) /* cannot happen: size >= header checked above */
        return rb_bad(b, errstr, errsize, "truncated header");
    b->batch = buf;
    if (flags & KN_RB_VERIFY_CRC) {
        uint32_t crc = kn_crc32c(0, buf + KN_RB_ATTRIBUTES_OFFSET,
                                 b->size - KN_RB_ATTRIBUTES_OFFSET);
        if (crc != h->crc) {
            kn_errstr_set(errstr, errsize,
                          "record batch at offset %" PRId64
                          ": CRC mismatch (stored 0x%08x, computed 0x%08x)",
                          h->base_offset, h->crc, crc);
            return KN_ERR__BAD_BATCH;
        }
    }
    if (h->record_count < 0)
        return rb_bad(b, errstr, errsize, "negative record count %d", h->record_count);
    if (!kn_codec_get(h->attributes & KN_RB_ATTR_CODEC_MASK))
        return rb_bad(b, errstr, errsize, "unknown compression codec %d",
                      h->attributes & KN_RB_ATTR_CODEC_MASK);
    b->records = buf + KN_RB_HEADER_SIZE;
    b->records_len = b->size - KN_RB_HEADER_SIZE;
    kn_rd_init(&b->rd, b->records, b->records_len);
    return 0;
}

int kn_rb_records_begin(kn_rb *b, kn_wr *scratch, char *errstr, size_t errsize) {
    const kn_codec *c = kn_codec_get(kn_rb_codec(b));
    b->index = 0;
    b->records = b->batch + KN_RB_HEADER_SIZE;
    b->records_len = b->size - KN_RB_HEADER_SIZE;
    if (c->id != KN_CODEC_NONE) {
        char cerr[160] = "";
        if (!scratch) {
            kn_errstr_set(errstr, errsize,
                          "record batch at offset %" PRId64 ": %s batch needs a scratch buffer",
                          b->h.base_offset, c->name);
            return KN_ERR__INVALID_ARG;
        }
        scratch->len = 0;
        scratch->err = 0;
        int err = c->decompress(b->records, b->records_len, scratch, cerr, sizeof cerr);
        if (err) {
            kn_errstr_set(errstr, errsize, "record batch at offset %" PRId64 ": %s",
                          b->h.base_offset, cerr);
            return err;
        }
        b->records = scratch->buf;
        b->records_len = scratch->len;
    }
    kn_rd_init(&b->rd, b->records, b->records_len);
    return 0;
}

/* Reads a varint-length byte field; any negative length is null, as in
 * Java's DefaultRecord. */
static inline kn_bytes rb_rd_field(kn_rd *r, const char *what) {
    int32_t n = kn_rd_varint(r);
    return kn_rd_slice(r, n < 0 ? -1 : n, what);
}

/* The fields a record takes from its batch header, once its own are
 * read (both paths of kn_rb_next); counts it read and returns 1. */
static inline int rb_record_done(kn_rb *b, kn_record *rec) {
    rec->offset = kn_rb_record_offset(&b->h, rec->offset_delta);
    rec->timestamp = kn_rb_record_timestamp(&b->h, rec->timestamp_delta);
    b->index++;
    return 1;
}

int kn_rb_next(kn_rb *b, kn_record *rec, char *errstr, size_t errsize) {
    kn_rb_cursor cur;
    if (kn_rb_cursor_begin(b, &cur) && kn_rb_cursor_next(&cur, rec)) {
        b->rd.off = (size_t)(cur.p - b->rd.buf); /* rb_record_done counts it */
        return rb_record_done(b, rec);
    }
    if (b->index >= b->h.record_count) {
        if (kn_rd_remaining(&b->rd) != 0 || !kn_rd_ok(&b->rd))
            return rb_bad(b, errstr, errsize, "%zu bytes of records left after the %d declared",
                          kn_rd_remaining(&b->rd), b->h.record_count);
        return 0;
    }
    kn_rd *r = &b->rd;
    size_t at = r->off;
    int32_t body_len = kn_rd_varint(r);
    if (!kn_rd_ok(r) || body_len < 0 || (size_t)body_len > kn_rd_remaining(r))
        return rb_bad(b, errstr, errsize,
                      "record %d: length runs past the records (%zu bytes left of %zu)",
                      b->index, b->records_len - at, b->records_len);
    kn_rd body;
    kn_rd_init(&body, r->buf + r->off, (size_t)body_len);
    r->off += (size_t)body_len;

    rec->attributes = kn_rd_i8(&body);
    rec->timestamp_delta = kn_rd_varlong(&body);
    rec->offset_delta = kn_rd_varint(&body);
    rec->key = rb_rd_field(&body, "record key");
    rec->value = rb_rd_field(&body, "record value");
    rec->header_count = kn_rd_varint(&body);
    if (!kn_rd_ok(&body) || rec->header_count < 0)
        return rb_bad(b, errstr, errsize, "record %d: malformed fields (%d-byte body: %s)",
                      b->index, body_len, body.err_what ? body.err_what : "negative header count");
    size_t hstart = body.off;
    for (int32_t i = 0; i < rec->header_count; i++) {
        int32_t klen = kn_rd_varint(&body);
        if (klen < 0)
            return rb_bad(b, errstr, errsize, "record %d: header %d has a negative key length",
                          b->index, i);
        kn_rd_skip(&body, (size_t)klen);
        int32_t vlen = kn_rd_varint(&body);
        if (vlen > 0)
            kn_rd_skip(&body, (size_t)vlen);
        if (!kn_rd_ok(&body))
            return rb_bad(b, errstr, errsize, "record %d: header %d runs past the record",
                          b->index, i);
    }
    if (kn_rd_remaining(&body) != 0)
        return rb_bad(b, errstr, errsize, "record %d: %zu unread bytes inside the record",
                      b->index, kn_rd_remaining(&body));
    rec->headers.ptr = body.buf + hstart;
    rec->headers.len = (int32_t)(body.off - hstart);
    return rb_record_done(b, rec);
}

int kn_record_control_type(const kn_record *rec) {
    /* key: version int16 (0), type int16 */
    if (rec->key.len < 4)
        return -1;
    kn_rd r;
    kn_rd_init(&r, rec->key.ptr, (size_t)rec->key.len);
    int16_t version = kn_rd_i16(&r);
    int16_t type = kn_rd_i16(&r);
    if (version < 0)
        return -1;
    return type;
}

int kn_records_next(kn_records_iter *it, kn_rb *b, int flags, char *errstr, size_t errsize) {
    size_t left = it->len - it->off;
    const uint8_t *p = it->buf + it->off;
    if (left == 0)
        return 0;
    /* Need the length and magic to judge the batch. */
    if (left < KN_RB_MAGIC_OFFSET + 1) {
        it->partial = true;
        return 0;
    }
    kn_rd r;
    kn_rd_init(&r, p, left);
    int64_t base = kn_rd_i64(&r);
    int32_t blen = kn_rd_i32(&r);
    kn_rd_skip(&r, 4);
    int8_t magic = kn_rd_i8(&r);
    if (magic == 2 && blen < KN_RB_HEADER_SIZE - KN_RB_LOG_OVERHEAD) {
        kn_errstr_set(errstr, errsize,
                      "record batch at offset %" PRId64
                      ": batch length %d is below the minimum %d",
                      base, blen, KN_RB_HEADER_SIZE - KN_RB_LOG_OVERHEAD);
        return KN_ERR__BAD_BATCH;
    }
    if (magic == 2 && (size_t)blen > left - KN_RB_LOG_OVERHEAD) {
        it->partial = true;
        return 0;
    }
    /* Magic 0/1 or unknown: kn_rb_parse reports it. */
    int err = kn_rb_parse(b, p, left, flags, errstr, errsize);
    if (err)
        return err;
    it->off += b->size;
    return 1;
}
