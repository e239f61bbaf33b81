/*
 * record_batch_build.c: the record batch v2 encoder (kn_rb_builder, see
 * record_batch.h). Records are encoded uncompressed into the builder's
 * buffer as they are appended (each record's size is computed first so
 * its length prefix is written once, without moving bytes); finish
 * writes the 61-byte header, the (compressed) records, then patches
 * batchLength and the CRC-32C over attributes..end. An uncompressed
 * batch can instead keep the header's room at the start of its buffer
 * and be finished in place: the producer's batches then reach the wire
 * with no copy of their records (docs/benchmarks.md, "Per-record cost").
 */
#include "proto/record_batch.h"

#include "codec/codec.h"
#include "crc32c.h"
#include "error.h"

void kn_rb_builder_conf_init(kn_rb_builder_conf *conf) {
    conf->base_offset = 0;
    conf->partition_leader_epoch = KN_RB_NO_PARTITION_LEADER_EPOCH;
    conf->codec = 0;
    conf->level = INT32_MIN; /* the codec's default */
    conf->log_append_time = false;
    conf->log_append_time_ms = KN_RB_NO_TIMESTAMP;
    conf->transactional = false;
    conf->control = false;
    conf->producer_id = KN_RB_NO_PRODUCER_ID;
    conf->producer_epoch = KN_RB_NO_PRODUCER_EPOCH;
    conf->base_sequence = KN_RB_NO_SEQUENCE;
}

void kn_rb_builder_init(kn_rb_builder *b, const kn_rb_builder_conf *conf,
                        size_t max_records_bytes) {
    b->conf = *conf;
    kn_wr_init(&b->records, 0, max_records_bytes);
    b->hdr_room = 0;
    b->count = 0;
    b->last_offset_delta = -1;
    b->base_timestamp = KN_RB_NO_TIMESTAMP;
    b->max_timestamp = KN_RB_NO_TIMESTAMP;
}

void kn_rb_builder_free(kn_rb_builder *b) {
    kn_wr_free(&b->records);
    b->hdr_room = 0;
}

int kn_rb_builder_keep_header(kn_rb_builder *b) {
    if (b->count || b->records.len || b->hdr_room || b->conf.codec != 0)
        return KN_ERR__INVALID_ARG;
    if (kn_wr_reserve(&b->records, KN_RB_HEADER_SIZE) == (size_t)-1)
        return b->records.err;
    b->hdr_room = KN_RB_HEADER_SIZE;
    return 0;
}

static size_t rb_bytes_size(kn_bytes v) {
    if (v.len < 0)
        return 1; /* -1 as a zigzag varint */
    return kn_varint_size(v.len) + (size_t)v.len;
}

/* Size of the record body (everything after the length varint). */
size_t kn_rb_record_body_size(int32_t offset_delta, int64_t timestamp_delta, kn_bytes key, kn_bytes value,
                              const kn_rb_kv *headers, size_t header_count) {
    size_t n = 1 + kn_varint_size(timestamp_delta) + kn_varint_size(offset_delta) + rb_bytes_size(key) +
               rb_bytes_size(value) + kn_varint_size((int64_t)header_count);
    for (size_t i = 0; i < header_count; i++) {
        kn_bytes k = {(const uint8_t *)headers[i].key.ptr, headers[i].key.len};
        n += rb_bytes_size(k) + rb_bytes_size(headers[i].value);
    }
    return n;
}

size_t kn_rb_record_size(int32_t offset_delta, int64_t timestamp_delta, kn_bytes key,
                         kn_bytes value, const kn_rb_kv *headers, size_t header_count) {
    size_t body = kn_rb_record_body_size(offset_delta, timestamp_delta, key, value, headers, header_count);
    return kn_varint_size((int64_t)body) + body;
}

/* The record's fields are written straight into room reserved once for
 * the whole record (its size is known before the first byte): no
 * capacity check and no staging copy per field, which were most of a
 * 100-byte record's encoding cost. */
static inline uint8_t *rb_uvarint_at(uint8_t *p, uint64_t v) {
    while (v >= 0x80) {
        *p++ = (uint8_t)(v | 0x80);
        v >>= 7;
    }
    *p++ = (uint8_t)v;
    return p;
}

static inline uint8_t *rb_varint_at(uint8_t *p, int64_t v) {
    return rb_uvarint_at(p, ((uint64_t)v << 1) ^ (uint64_t)(v >> 63));
}

static inline uint8_t *rb_bytes_at(uint8_t *p, kn_bytes v) {
    if (v.len < 0)
        return rb_varint_at(p, -1);
    p = rb_varint_at(p, v.len);
    if (v.len > 0)
        memcpy(p, v.ptr, (size_t)v.len);
    return p + v.len;
}

int kn_rb_builder_append(kn_rb_builder *b, int32_t offset_delta, int64_t timestamp, kn_bytes key,
                         kn_bytes value, const kn_rb_kv *headers, size_t header_count) {
    int64_t base_ts = b->count ? b->base_timestamp : timestamp;
    int64_t ts_delta = (int64_t)((uint64_t)timestamp - (uint64_t)base_ts);
    size_t body = kn_rb_record_body_size(offset_delta, ts_delta, key, value, headers, header_count);
    return kn_rb_builder_append_body(b, offset_delta, timestamp, key, value, headers, header_count, body);
}

int kn_rb_builder_append_body(kn_rb_builder *b, int32_t offset_delta, int64_t timestamp, kn_bytes key,
                              kn_bytes value, const kn_rb_kv *headers, size_t header_count, size_t body) {
    if (offset_delta <= b->last_offset_delta || b->count == INT32_MAX ||
        header_count > INT32_MAX || (key.len > 0 && !key.ptr) || (value.len > 0 && !value.ptr))
        return KN_ERR__INVALID_ARG;
    for (size_t i = 0; i < header_count; i++)
        if (headers[i].key.len < 0 || (headers[i].key.len > 0 && !headers[i].key.ptr) ||
            (headers[i].value.len > 0 && !headers[i].value.ptr))
            return KN_ERR__INVALID_ARG;
    if (body > INT32_MAX)
        return KN_ERR__INVALID_ARG;
    int64_t base_ts = b->count ? b->base_timestamp : timestamp;
    int64_t ts_delta = (int64_t)((uint64_t)timestamp - (uint64_t)base_ts);

    kn_wr *w = &b->records;
    size_t total = kn_varint_size((int64_t)body) + body;
    if (!kn_wr_grow(w, total)) {
        /* Nothing written; the writer's sticky error is cleared so the
         * batch built so far stays usable. */
        int err = w->err;
        w->err = 0;
        return err;
    }
    uint8_t *p = w->buf + w->len;
    p = rb_varint_at(p, (int32_t)body);
    *p++ = 0; /* record attributes: unused, always 0 */
    p = rb_varint_at(p, ts_delta);
    p = rb_varint_at(p, offset_delta);
    p = rb_bytes_at(p, key);
    p = rb_bytes_at(p, value);
    p = rb_varint_at(p, (int64_t)header_count);
    for (size_t i = 0; i < header_count; i++) {
        kn_bytes k = {(const uint8_t *)headers[i].key.ptr, headers[i].key.len};
        p = rb_bytes_at(p, k);
        p = rb_bytes_at(p, headers[i].value);
    }
    w->len += total;
    if (b->count == 0)
        b->base_timestamp = timestamp;
    if (b->count == 0 || timestamp > b->max_timestamp)
        b->max_timestamp = timestamp;
    b->count++;
    b->last_offset_delta = offset_delta;
    return 0;
}

/* Writes the 61-byte header (batchLength and CRC zero, patched by
 * rb_seal) to out. */
static void rb_put_header(const kn_rb_builder *b, kn_wr *out) {
    const kn_rb_builder_conf *c = &b->conf;
    int16_t attrs = (int16_t)(c->codec & KN_RB_ATTR_CODEC_MASK);
    if (c->log_append_time)
        attrs |= KN_RB_ATTR_LOG_APPEND_TIME;
    if (c->transactional)
        attrs |= KN_RB_ATTR_TRANSACTIONAL;
    if (c->control)
        attrs |= KN_RB_ATTR_CONTROL;
    int64_t max_ts = c->log_append_time ? c->log_append_time_ms : b->max_timestamp;
    kn_wr_i64(out, c->base_offset);
    kn_wr_i32(out, 0); /* batchLength, patched by rb_seal */
    kn_wr_i32(out, c->partition_leader_epoch);
    kn_wr_i8(out, 2);
    kn_wr_u32(out, 0); /* crc, patched by rb_seal */
    kn_wr_i16(out, attrs);
    /* Java writes lastOffsetDelta 0 for an empty batch too. */
    kn_wr_i32(out, b->count ? b->last_offset_delta : 0);
    kn_wr_i64(out, b->base_timestamp);
    kn_wr_i64(out, max_ts);
    kn_wr_i64(out, c->producer_id);
    kn_wr_i16(out, c->producer_epoch);
    kn_wr_i32(out, c->base_sequence);
    kn_wr_i32(out, b->count);
}

/* Fills batchLength and the CRC of the total bytes at p (header
 * included). */
static int rb_seal(uint8_t *p, size_t total, char *errstr, size_t errsize) {
    if (total - KN_RB_LOG_OVERHEAD > INT32_MAX) {
        kn_errstr_set(errstr, errsize, "record batch: %zu bytes is too large", total);
        return KN_ERR__INVALID_ARG;
    }
    kn_wr_put_u32_at(p + 8, (uint32_t)(total - KN_RB_LOG_OVERHEAD));
    kn_wr_put_u32_at(p + KN_RB_CRC_OFFSET,
                     kn_crc32c(0, p + KN_RB_ATTRIBUTES_OFFSET, total - KN_RB_ATTRIBUTES_OFFSET));
    return 0;
}

int kn_rb_builder_finish(kn_rb_builder *b, kn_wr *out, char *errstr, size_t errsize) {
    const kn_rb_builder_conf *c = &b->conf;
    const kn_codec *codec = kn_codec_get(c->codec);
    if (!codec) {
        kn_errstr_set(errstr, errsize, "record batch: unknown compression codec %d", c->codec);
        return KN_ERR__INVALID_ARG;
    }
    int level = c->level == INT32_MIN ? codec->level_default : c->level;
    if (!kn_codec_level_valid(codec, level)) {
        kn_errstr_set(errstr, errsize, "record batch: %s level %d out of range", codec->name,
                      level);
        return KN_ERR__INVALID_ARG;
    }
    size_t start = out->len;
    rb_put_header(b, out);
    if (!kn_wr_ok(out)) {
        kn_errstr_set(errstr, errsize, "record batch: output buffer full");
        return out->err;
    }
    int err = codec->compress(b->records.buf + b->hdr_room, b->records.len - b->hdr_room, level, out,
                              errstr, errsize);
    if (!err)
        err = rb_seal(out->buf + start, out->len - start, errstr, errsize);
    if (err)
        out->len = start;
    return err;
}

int kn_rb_builder_finish_in_place(kn_rb_builder *b, kn_wr *out, char *errstr, size_t errsize) {
    if (b->hdr_room != KN_RB_HEADER_SIZE || b->conf.codec != 0 || out->buf) {
        kn_errstr_set(errstr, errsize, "record batch: finish in place needs an uncompressed batch "
                                       "that kept its header's room and an empty output");
        return KN_ERR__INVALID_ARG;
    }
    if (b->records.err) {
        kn_errstr_set(errstr, errsize, "record batch: %s", kn_err_message(b->records.err));
        return b->records.err;
    }
    /* A writer over the reserved bytes: exactly the header's size, so it
     * never grows. */
    kn_wr hdr;
    kn_wr_init(&hdr, 0, KN_RB_HEADER_SIZE);
    hdr.buf = b->records.buf;
    hdr.cap = KN_RB_HEADER_SIZE;
    rb_put_header(b, &hdr);
    if (!kn_wr_ok(&hdr) || hdr.len != KN_RB_HEADER_SIZE) {
        kn_errstr_set(errstr, errsize, "record batch: internal: header is %zu bytes", hdr.len);
        return KN_ERR__FAIL;
    }
    int err = rb_seal(b->records.buf, b->records.len, errstr, errsize);
    if (err)
        return err;
    *out = b->records;
    kn_wr_init(&b->records, 0, out->max);
    b->hdr_room = 0;
    return 0;
}
