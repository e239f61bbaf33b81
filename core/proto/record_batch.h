/*
 * record_batch.h: Kafka record batch v2 (magic 2), the on-disk and
 * on-wire unit of Produce requests and Fetch responses.
 *
 *   baseOffset int64 | batchLength int32 | partitionLeaderEpoch int32 |
 *   magic int8 (2) | crc uint32 (CRC-32C of attributes..end) |
 *   attributes int16 | lastOffsetDelta int32 | baseTimestamp int64 |
 *   maxTimestamp int64 | producerId int64 | producerEpoch int16 |
 *   baseSequence int32 | recordCount int32 | records (maybe compressed)
 *
 * and each record:
 *
 *   length varint | attributes int8 | timestampDelta varlong |
 *   offsetDelta varint | key varint-length bytes (-1 null) |
 *   value varint-length bytes (-1 null) | headerCount varint |
 *   headers: key varint-length string, value varint-length bytes
 *
 * This module owns three things:
 *  - kn_rb_builder: the encoder. Records are appended uncompressed into
 *    the builder's own buffer; finish compresses them and writes the
 *    whole batch (length and CRC filled) into the caller's kn_wr.
 *  - kn_rb: the decoder of one batch. Parsing checks the header (never
 *    trusting a length), optionally the CRC, then decompresses into a
 *    caller-owned scratch writer whose cap bounds memory, and iterates
 *    records lazily without allocating: key, value and header slices
 *    point into the input buffer (uncompressed) or the scratch buffer.
 *  - kn_records_iter: splits a Fetch partition's `records` blob into
 *    batches; a partial batch at the end is normal and ends iteration.
 *
 * Old message formats (magic 0 and 1) are detected and refused with
 * KN_ERR__UNSUPPORTED. Every corruption is KN_ERR__BAD_BATCH with an
 * errstr naming the batch's base offset.
 */
#ifndef KN_RECORD_BATCH_H
#define KN_RECORD_BATCH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "reader.h"
#include "writer.h"

/* Sizes and offsets of the fixed batch header. */
#define KN_RB_LOG_OVERHEAD 12 /* baseOffset + batchLength */
#define KN_RB_HEADER_SIZE 61
#define KN_RB_MAGIC_OFFSET 16
#define KN_RB_CRC_OFFSET 17
#define KN_RB_ATTRIBUTES_OFFSET 21

/* Attribute bits. */
#define KN_RB_ATTR_CODEC_MASK 0x07
#define KN_RB_ATTR_LOG_APPEND_TIME 0x08
#define KN_RB_ATTR_TRANSACTIONAL 0x10
#define KN_RB_ATTR_CONTROL 0x20
#define KN_RB_ATTR_DELETE_HORIZON 0x40

/* Control record types (the key of a record in a control batch). */
#define KN_RB_CONTROL_ABORT 0
#define KN_RB_CONTROL_COMMIT 1

#define KN_RB_NO_TIMESTAMP (-1)
#define KN_RB_NO_PRODUCER_ID (-1)
#define KN_RB_NO_PRODUCER_EPOCH (-1)
#define KN_RB_NO_SEQUENCE (-1)
#define KN_RB_NO_PARTITION_LEADER_EPOCH (-1)

/* A record header as the application sees it: the key is never null,
 * the value may be (len < 0). */
typedef struct kn_rb_kv {
    kn_str key;
    kn_bytes value;
} kn_rb_kv;

/* ---- encoder ---------------------------------------------------------- */

typedef struct kn_rb_builder_conf {
    int64_t base_offset;            /* 0 for a Produce request */
    int32_t partition_leader_epoch; /* KN_RB_NO_PARTITION_LEADER_EPOCH */
    int codec;                      /* kn_codec_id */
    int level;                      /* codec level; the codec's default if unset */
    bool log_append_time;           /* timestamp type LogAppendTime */
    int64_t log_append_time_ms;     /* maxTimestamp when log_append_time */
    bool transactional;
    bool control;
    int64_t producer_id;
    int16_t producer_epoch;
    int32_t base_sequence;
} kn_rb_builder_conf;

typedef struct kn_rb_builder {
    kn_rb_builder_conf conf;
    kn_wr records; /* uncompressed record section (owned), after
                    * hdr_room bytes kept for the header */
    size_t hdr_room; /* KN_RB_HEADER_SIZE once kn_rb_builder_keep_header
                      * reserved them at the buffer's start, else 0 */
    int32_t count;
    int32_t last_offset_delta;
    int64_t base_timestamp;
    int64_t max_timestamp;
} kn_rb_builder;

/* Java's defaults: base offset 0, no leader epoch, no compression, create
 * time, not transactional, no producer id/epoch/sequence. */
void kn_rb_builder_conf_init(kn_rb_builder_conf *conf);

/* Starts a batch. max_records_bytes caps the uncompressed record section
 * (0: 1 GiB). The builder owns memory until kn_rb_builder_free. */
void kn_rb_builder_init(kn_rb_builder *b, const kn_rb_builder_conf *conf,
                        size_t max_records_bytes);
void kn_rb_builder_free(kn_rb_builder *b);
/* The record buffer, for a caller that recycles buffers (the producer's
 * pool): a freshly initialised builder may be given an empty writer to
 * fill instead of growing its own, and a finished one's writer may be
 * taken back (the builder is then empty, as after kn_rb_builder_free). */
static inline kn_wr *kn_rb_builder_buffer(kn_rb_builder *b) { return &b->records; }

/* For a batch without compression, before the first append: keeps the
 * header's 61 bytes at the start of the record buffer, so
 * kn_rb_builder_finish_in_place can write the header there and hand the
 * buffer over as the finished batch, instead of copying every record
 * after a header in another buffer. Returns 0 or the writer's error. */
int kn_rb_builder_keep_header(kn_rb_builder *b);

/* Appends one record. offset_delta must exceed the previous one (first:
 * >= 0). timestamp is absolute (ms); the first record's becomes the base
 * timestamp. key/value with len < 0 are null (distinct from empty);
 * headers[i].key must not be null. Copies everything. Returns 0,
 * KN_ERR__INVALID_ARG (bad argument, or over the cap) or KN_ERR__NOMEM. */
int kn_rb_builder_append(kn_rb_builder *b, int32_t offset_delta, int64_t timestamp, kn_bytes key,
                         kn_bytes value, const kn_rb_kv *headers, size_t header_count);

/* kn_rb_builder_append with the record's body size already known:
 * body must be what kn_rb_record_body_size returns for the same record
 * with timestamp_delta = timestamp - the batch's base timestamp (0 for
 * the first record). The record is encoded into that many bytes plus
 * its length varint, so a wrong body corrupts the batch. For a caller
 * that sized the record anyway (the producer checks it against
 * batch.size before appending). */
int kn_rb_builder_append_body(kn_rb_builder *b, int32_t offset_delta, int64_t timestamp, kn_bytes key,
                              kn_bytes value, const kn_rb_kv *headers, size_t header_count, size_t body);

/* Size of a record's body: everything after its length varint. */
size_t kn_rb_record_body_size(int32_t offset_delta, int64_t timestamp_delta, kn_bytes key, kn_bytes value,
                              const kn_rb_kv *headers, size_t header_count);

/* Size the record would add to the uncompressed section. */
size_t kn_rb_record_size(int32_t offset_delta, int64_t timestamp_delta, kn_bytes key,
                         kn_bytes value, const kn_rb_kv *headers, size_t header_count);

/* Uncompressed bytes so far (header + records): what a producer compares
 * with batch.size. */
static inline size_t kn_rb_builder_size(const kn_rb_builder *b) {
    return KN_RB_HEADER_SIZE + b->records.len - b->hdr_room;
}

/* Appends the finished batch to out (compressing the records, filling
 * batchLength and the CRC). The builder stays valid (finish can be
 * called again, e.g. after changing base_offset). Returns 0 or an error
 * with errstr filled. */
int kn_rb_builder_finish(kn_rb_builder *b, kn_wr *out, char *errstr, size_t errsize);
/* For a builder that kept the header's room (codec none): writes the
 * header in place and moves the record buffer, now the whole batch, into
 * *out (which must be empty; the caller owns it). The same bytes as
 * kn_rb_builder_finish into an empty writer; the builder is empty
 * afterwards (as after kn_rb_builder_free). Returns 0 or an error with
 * errstr filled (the builder then keeps its records). */
int kn_rb_builder_finish_in_place(kn_rb_builder *b, kn_wr *out, char *errstr, size_t errsize);

/* ---- decoder ---------------------------------------------------------- */

typedef struct kn_rb_header {
    int64_t base_offset;
    int32_t batch_length;
    int32_t partition_leader_epoch;
    int8_t magic;
    uint32_t crc;
    int16_t attributes;
    int32_t last_offset_delta;
    int64_t base_timestamp;
    int64_t max_timestamp;
    int64_t producer_id;
    int16_t producer_epoch;
    int32_t base_sequence;
    int32_t record_count;
} kn_rb_header;

typedef struct kn_record {
    int64_t offset;    /* base offset + offset delta */
    int64_t timestamp; /* base + delta, or maxTimestamp for LogAppendTime */
    int32_t offset_delta;
    int64_t timestamp_delta;
    int8_t attributes;
    kn_bytes key;   /* len < 0: null */
    kn_bytes value; /* len < 0: null */
    int32_t header_count;
    kn_bytes headers; /* the encoded headers; read with kn_record_headers */
} kn_record;

/* Iterates a record's headers (validated already by kn_rb_next). */
typedef struct kn_record_hdr_iter {
    kn_rd rd;
    int32_t left;
} kn_record_hdr_iter;

typedef struct kn_rb {
    kn_rb_header h;
    const uint8_t *batch; /* the whole batch in the caller's buffer */
    size_t size;          /* KN_RB_LOG_OVERHEAD + batch_length */
    /* After kn_rb_records_begin: the uncompressed record section. */
    const uint8_t *records;
    size_t records_len;
    kn_rd rd;      /* cursor in records */
    int32_t index; /* records read so far */
} kn_rb;

#define KN_RB_VERIFY_CRC 0x1

/* Parses the batch at buf (at least the whole batch; extra bytes after
 * it are ignored). Checks magic, lengths and (with KN_RB_VERIFY_CRC) the
 * CRC. Returns 0, KN_ERR__BAD_BATCH, or KN_ERR__UNSUPPORTED for magic 0/1.
 * b points into buf afterwards; nothing is allocated. */
int kn_rb_parse(kn_rb *b, const uint8_t *buf, size_t len, int flags, char *errstr, size_t errsize);

static inline int kn_rb_codec(const kn_rb *b) { return b->h.attributes & KN_RB_ATTR_CODEC_MASK; }
static inline bool kn_rb_is_control(const kn_rb *b) {
    return (b->h.attributes & KN_RB_ATTR_CONTROL) != 0;
}
static inline bool kn_rb_is_transactional(const kn_rb *b) {
    return (b->h.attributes & KN_RB_ATTR_TRANSACTIONAL) != 0;
}
/* Wraps like Java's long arithmetic on hostile input instead of
 * overflowing (undefined in C). */
static inline int64_t kn_rb_last_offset(const kn_rb *b) {
    return (int64_t)((uint64_t)b->h.base_offset + (uint64_t)(int64_t)b->h.last_offset_delta);
}

/* Prepares record iteration: for a compressed batch, resets scratch
 * (len = 0) and decompresses into it, bounded by scratch->max; record
 * slices then point into scratch->buf and stay valid until scratch is
 * reused or freed. Uncompressed batches do not touch scratch (it may be
 * NULL for them; NULL with a compressed batch is KN_ERR__INVALID_ARG).
 * Returns 0, KN_ERR__BAD_BATCH (corrupt or over scratch->max),
 * KN_ERR__NOMEM or KN_ERR__INVALID_ARG. */
int kn_rb_records_begin(kn_rb *b, kn_wr *scratch, char *errstr, size_t errsize);

/* Reads the next record: returns 1 with *rec filled, 0 after the last
 * one (having checked that recordCount records used exactly the whole
 * section), or KN_ERR__BAD_BATCH. No allocation. */
int kn_rb_next(kn_rb *b, kn_record *rec, char *errstr, size_t errsize);

static inline void kn_record_headers(const kn_record *rec, kn_record_hdr_iter *it) {
    kn_rd_init(&it->rd, rec->headers.ptr, rec->headers.len > 0 ? (size_t)rec->headers.len : 0);
    it->left = rec->header_count;
}
/* Next header: true with *kv filled, false at the end. */
static inline bool kn_record_hdr_next(kn_record_hdr_iter *it, kn_rb_kv *kv) {
    if (it->left <= 0)
        return false;
    it->left--;
    kn_bytes k = kn_rd_slice(&it->rd, kn_rd_varint(&it->rd), "header key");
    kv->key.ptr = (const char *)k.ptr;
    kv->key.len = k.len;
    kv->value = kn_rd_slice(&it->rd, kn_rd_varint(&it->rd), "header value");
    return kn_rd_ok(&it->rd);
}

/* The type of a control record (KN_RB_CONTROL_ABORT/COMMIT, or another
 * type Kafka defines) read from its key, or -1 if the key is malformed. */
int kn_record_control_type(const kn_record *rec);

/* ---- the fast record reader ------------------------------------------ */

/* kn_rb_next's fast path, inline so that a loop over many records (the
 * consumer's drain) decodes each one straight into its own structure
 * with the reading position in registers: with small records a consumer
 * spends much of its time here, and a call, a kn_record copied out and
 * the position stored back per record were a good part of it.
 *
 * Only the usual shape is decoded (every varint at most 4 bytes, every
 * field inside its record, nothing left over). Anything else -- and the
 * batch's declared end -- is refused with nothing read, and
 * kn_rb_next's checked reader decodes that record again and names the
 * fault: both paths accept exactly the same records. */
/* Always inlined (GCC and clang otherwise call these out of line in a
 * record loop): a call per field, and the record stored to memory and
 * read back, cost as much as the decoding. */
#if defined(__GNUC__)
#define KN_RB_ALWAYS_INLINE __attribute__((always_inline))
#else
#define KN_RB_ALWAYS_INLINE
#endif
static inline KN_RB_ALWAYS_INLINE bool kn_rb_fast_varint(const uint8_t **pp, const uint8_t *end, int32_t *out) {
    /* Unrolled: records' lengths and deltas are one or two bytes, and a
     * loop costs a branch and a shift per byte more. */
    const uint8_t *p = *pp;
    uint32_t u;
    if (p >= end)
        return false;
    u = p[0];
    if (u < 0x80) {
        p += 1;
    } else {
        if (end - p < 2)
            return false;
        u = (u & 0x7f) | (uint32_t)p[1] << 7;
        if (p[1] < 0x80) {
            p += 2;
        } else {
            if (end - p < 3)
                return false;
            u = (u & 0x3fff) | (uint32_t)p[2] << 14;
            if (p[2] < 0x80) {
                p += 3;
            } else {
                if (end - p < 4 || p[3] >= 0x80)
                    return false; /* five bytes: the checked reader's */
                u = (u & 0x1fffff) | (uint32_t)p[3] << 21;
                p += 4;
            }
        }
    }
    *out = (int32_t)(u >> 1) ^ -(int32_t)(u & 1);
    *pp = p;
    return true;
}

/* A varint-length field inside [*pp, end): a negative length is null
 * (NULL, -1), as the checked reader reads it; otherwise ptr is never
 * NULL (it points into the record). */
static inline KN_RB_ALWAYS_INLINE bool kn_rb_fast_field(const uint8_t **pp, const uint8_t *end, kn_bytes *out) {
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

/* A batch's reading position as plain pointers (kn_rb_cursor_begin),
 * given back to the kn_rb once at the end (kn_rb_cursor_end). */
typedef struct kn_rb_cursor {
    const uint8_t *p;   /* the next record */
    const uint8_t *lim; /* the end of the record section */
    int32_t left;       /* records the batch still declares */
} kn_rb_cursor;

/* Takes b's reading position (after kn_rb_records_begin). False when
 * nothing is left to read fast -- the declared count reached, no bytes
 * left (an empty decompressed section has buf NULL, and NULL + 0 is
 * undefined), a reader error -- and then kn_rb_next says what comes. */
static inline bool kn_rb_cursor_begin(const kn_rb *b, kn_rb_cursor *c) {
    const kn_rd *r = &b->rd;
    if (b->index >= b->h.record_count || r->err || r->off >= r->len)
        return false;
    c->p = r->buf + r->off;
    c->lim = r->buf + r->len;
    c->left = b->h.record_count - b->index;
    return true;
}

/* Gives the position back to b: every record kn_rb_cursor_next returned
 * counts as read. */
static inline void kn_rb_cursor_end(kn_rb *b, const kn_rb_cursor *c) {
    b->rd.off = (size_t)(c->p - b->rd.buf);
    b->index = b->h.record_count - c->left;
}

/* The next record's own fields into *rec (offset and timestamp come
 * from the batch header: kn_rb_record_offset, kn_rb_record_timestamp):
 * true, or false with nothing read when the checked reader must take
 * over. */
static inline KN_RB_ALWAYS_INLINE bool kn_rb_cursor_next(kn_rb_cursor *c, kn_record *rec) {
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

/* A record's offset and timestamp from its deltas and the batch header,
 * wrapping like Java's long arithmetic on hostile input. */
static inline int64_t kn_rb_record_offset(const kn_rb_header *h, int32_t offset_delta) {
    return (int64_t)((uint64_t)h->base_offset + (uint64_t)(int64_t)offset_delta);
}
static inline int64_t kn_rb_record_timestamp(const kn_rb_header *h, int64_t timestamp_delta) {
    if (h->attributes & KN_RB_ATTR_LOG_APPEND_TIME)
        return h->max_timestamp;
    return (int64_t)((uint64_t)h->base_timestamp + (uint64_t)timestamp_delta);
}

/* ---- many batches: a Fetch partition's records ------------------------ */

typedef struct kn_records_iter {
    const uint8_t *buf;
    size_t len;
    size_t off;   /* bytes consumed: whole batches returned so far */
    bool partial; /* iteration ended on an incomplete trailing batch */
} kn_records_iter;

static inline void kn_records_iter_init(kn_records_iter *it, const void *buf, size_t len) {
    it->buf = (const uint8_t *)buf;
    it->len = len;
    it->off = 0;
    it->partial = false;
}

/* Next complete batch (parsed into *b with `flags`): returns 1; 0 when
 * the blob is used up or only a partial batch remains (it->partial then
 * tells, it->off says how many bytes were whole batches); or an error
 * from kn_rb_parse (a declared size below the batch minimum is
 * KN_ERR__BAD_BATCH even when truncated). */
int kn_records_next(kn_records_iter *it, kn_rb *b, int flags, char *errstr, size_t errsize);

#endif
