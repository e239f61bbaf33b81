/*
 * records.c: kn_records, the result of one poll, and knc_buf, the
 * reference-counted fetched memory its records point into. A record is
 * a small fixed struct of slices: building one costs no copy of its
 * key, value or headers, and reading it (C or Lua) is pointer access.
 */
#include <string.h>

#include "consumer/records.h"
#include "kn_alloc.h"

knc_buf *knc_buf_from_resp(knw_resp *resp) {
    knc_buf *buf = kn_calloc(1, sizeof(*buf));
    if (!buf) {
        knw_resp_free(resp);
        return NULL;
    }
    atomic_init(&buf->refs, 1);
    buf->resp = resp;
    return buf;
}

knc_buf *knc_buf_from_mem(uint8_t *mem) {
    knc_buf *buf = kn_calloc(1, sizeof(*buf));
    if (!buf) {
        kn_free(mem);
        return NULL;
    }
    atomic_init(&buf->refs, 1);
    buf->mem = mem;
    return buf;
}

void knc_buf_release(knc_buf *buf) {
    if (!buf || atomic_fetch_sub_explicit(&buf->refs, 1, memory_order_acq_rel) != 1)
        return;
    knw_resp_free(buf->resp);
    kn_free(buf->mem);
    kn_free(buf);
}

kn_records *knc_records_new(size_t cap) {
    kn_records *recs = kn_calloc(1, sizeof(*recs));
    if (!recs)
        return NULL;
    if (cap) {
        recs->recs = kn_malloc(cap * sizeof(*recs->recs));
        if (!recs->recs) {
            kn_free(recs);
            return NULL;
        }
        recs->cap = cap;
    }
    return recs;
}

static bool knc_grow(void **arr, size_t *cap, size_t need, size_t elem) {
    if (need <= *cap)
        return true;
    size_t ncap = *cap ? *cap * 2 : 8;
    while (ncap < need)
        ncap *= 2;
    void *n = kn_realloc(*arr, ncap * elem);
    if (!n)
        return false;
    *arr = n;
    *cap = ncap;
    return true;
}

/* Index of topic in recs->topics, adding a copy when new; -1 on NOMEM. */
static int knc_records_topic(kn_records *recs, const char *topic) {
    if (recs->last_topic_src == topic)
        return recs->last_topic_idx;
    size_t i;
    for (i = 0; i < recs->topic_count; i++)
        if (strcmp(recs->topics[i], topic) == 0)
            break;
    if (i == recs->topic_count) {
        if (i >= 0xffff || !knc_grow((void **)&recs->topics, &recs->topic_cap, i + 1,
                                     sizeof(char *)))
            return -1;
        if (recs->counts_cap < recs->topic_cap) {
            int64_t *tc = kn_realloc(recs->topic_counts, recs->topic_cap * 2 * sizeof *tc);
            if (!tc)
                return -1;
            memset(tc + recs->counts_cap * 2, 0, (recs->topic_cap - recs->counts_cap) * 2 * sizeof *tc);
            recs->topic_counts = tc;
            recs->counts_cap = recs->topic_cap;
        }
        if (!(recs->topics[i] = kn_strdup(topic)))
            return -1;
        recs->topic_count++;
    }
    recs->last_topic_src = topic;
    recs->last_topic_idx = (uint16_t)i;
    return (int)i;
}

/* knc_rec's slice convention, which LuaJIT reads in place
 * (records.h): null is NULL with length -1, empty a valid non-NULL
 * pointer with length 0, whatever the decoder left in ptr. */
static const uint8_t knc_empty[1];
static inline const uint8_t *knc_slice_ptr(kn_bytes b, int32_t *len) {
    if (b.len < 0) {
        *len = -1;
        return NULL;
    }
    *len = b.len;
    return b.ptr ? b.ptr : knc_empty;
}

int knc_records_reserve(kn_records *recs, size_t n, const char *topic, knc_buf *buf) {
    if (!knc_grow((void **)&recs->recs, &recs->cap, recs->count + n, sizeof(knc_rec)))
        return -1;
    if (!recs->buf_count || recs->bufs[recs->buf_count - 1] != buf) {
        if (!knc_grow((void **)&recs->bufs, &recs->buf_cap, recs->buf_count + 1,
                      sizeof(knc_buf *)))
            return -1;
        recs->bufs[recs->buf_count++] = knc_buf_retain(buf);
    }
    return knc_records_topic(recs, topic);
}

int knc_records_add(kn_records *recs, const char *topic, int32_t partition, int32_t leader_epoch,
                    int ts_type, const kn_record *rec, knc_buf *buf) {
    int t = knc_records_reserve(recs, 1, topic, buf);
    if (t < 0)
        return KN_ERR__NOMEM;
    knc_rec *r = &recs->recs[recs->count++];
    r->offset = rec->offset;
    r->timestamp = rec->timestamp;
    r->key = knc_slice_ptr(rec->key, &r->key_len);
    r->value = knc_slice_ptr(rec->value, &r->value_len);
    r->headers = rec->headers.ptr;
    r->headers_len = rec->headers.len;
    r->header_count = rec->header_count;
    r->partition = partition;
    r->leader_epoch = leader_epoch;
    r->topic_idx = (uint16_t)t;
    r->ts_type = (uint8_t)ts_type;
    r->delivery_count = 0;
    int64_t b = (rec->key.len > 0 ? rec->key.len : 0) + (rec->value.len > 0 ? rec->value.len : 0);
    recs->bytes += b;
    recs->topic_counts[2 * t]++;
    recs->topic_counts[2 * t + 1] += b;
    return 0;
}

void kn_records_free(kn_records *recs) {
    if (!recs)
        return;
    for (size_t i = 0; i < recs->buf_count; i++)
        knc_buf_release(recs->bufs[i]);
    for (size_t i = 0; i < recs->topic_count; i++)
        kn_free(recs->topics[i]);
    kn_free(recs->bufs);
    kn_free(recs->topics);
    kn_free(recs->topic_counts);
    kn_free(recs->recs);
    kn_free(recs);
}

size_t kn_records_count(const kn_records *recs) { return recs ? recs->count : 0; }

const char *kn_records_topic(const kn_records *recs, size_t i) {
    return recs->topics[recs->recs[i].topic_idx];
}

int32_t kn_records_partition(const kn_records *recs, size_t i) {
    return recs->recs[i].partition;
}

int64_t kn_records_offset(const kn_records *recs, size_t i) { return recs->recs[i].offset; }

int64_t kn_records_timestamp(const kn_records *recs, size_t i) {
    return recs->recs[i].timestamp;
}

int kn_records_timestamp_type(const kn_records *recs, size_t i) { return recs->recs[i].ts_type; }

int32_t kn_records_leader_epoch(const kn_records *recs, size_t i) {
    return recs->recs[i].leader_epoch;
}

/* A null slice is NULL; an empty one a valid non-NULL pointer, even if
 * the decoder left ptr NULL for zero bytes. */
static const void *knc_slice(const uint8_t *ptr, int32_t n, size_t *len) {
    static const uint8_t empty[1];
    if (len)
        *len = n > 0 ? (size_t)n : 0;
    if (n < 0)
        return NULL;
    return n == 0 || !ptr ? empty : ptr;
}

/* Every knc_rec keeps the slice convention from the moment it is added
 * (knc_slice_ptr, and drain.c's fast reader), so key and value are
 * handed out as they are: these run once per record in most loops. */
const void *kn_records_key(const kn_records *recs, size_t i, size_t *len) {
    const knc_rec *r = &recs->recs[i];
    if (len)
        *len = r->key_len > 0 ? (size_t)r->key_len : 0;
    return r->key;
}

const void *kn_records_value(const kn_records *recs, size_t i, size_t *len) {
    const knc_rec *r = &recs->recs[i];
    if (len)
        *len = r->value_len > 0 ? (size_t)r->value_len : 0;
    return r->value;
}

size_t kn_records_header_count(const kn_records *recs, size_t i) {
    return recs->recs[i].header_count > 0 ? (size_t)recs->recs[i].header_count : 0;
}

int kn_records_header(const kn_records *recs, size_t i, size_t h, const char **key,
                      size_t *key_len, const void **value, size_t *value_len) {
    const knc_rec *r = &recs->recs[i];
    if (h >= kn_records_header_count(recs, i))
        return KN_ERR__INVALID_ARG;
    /* Headers were validated when the record was decoded. */
    kn_record_hdr_iter it;
    kn_rd_init(&it.rd, r->headers, r->headers_len > 0 ? (size_t)r->headers_len : 0);
    it.left = r->header_count;
    kn_rb_kv kv;
    for (size_t k = 0; k <= h; k++)
        if (!kn_record_hdr_next(&it, &kv))
            return KN_ERR__INVALID_ARG;
    size_t klen;
    *key = knc_slice((const uint8_t *)kv.key.ptr, kv.key.len < 0 ? 0 : kv.key.len, &klen);
    if (key_len)
        *key_len = klen;
    *value = knc_slice(kv.value.ptr, kv.value.len, value_len);
    return KN_OK;
}
