/*
 * records.h: knc_buf, the reference-counted owner of fetched memory (a
 * raw Fetch response, or one decompressed batch), and the kn_records
 * layout (records.c). kn_records keep the buffers their records point
 * into alive, so records survive later polls, seeks and even close.
 * knc_buf reference counts are atomic because a buffer may be released
 * on either thread; kn_records are owned by one application thread at
 * a time.
 */
#ifndef KN_CONSUMER_RECORDS_H
#define KN_CONSUMER_RECORDS_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "kafka_native.h"
#include "proto/record_batch.h"
#include "wire/wire.h"

/* ---- reference-counted buffers (records.c) ---------------------------- */

typedef struct knc_buf {
    atomic_int refs;
    knw_resp *resp; /* a Fetch response (knw_resp_free), or NULL */
    uint8_t *mem;   /* kn_malloc'd bytes (kn_free), or NULL */
    /* Fetch-buffer accounting (fetch.c, fetched.c), under the consumer's lock:
     * while at least one knc_fetched slice points into this buffer, its
     * size counts in *held (the consumer's held bytes). held NULL: not
     * counted (decompressed batches, tests). */
    size_t size;
    uint32_t slices;
    size_t *held;
} knc_buf;

/* Both take ownership of what they wrap (freed when the last reference
 * goes, also on failure: then NULL is returned). One reference. */
knc_buf *knc_buf_from_resp(knw_resp *resp);
knc_buf *knc_buf_from_mem(uint8_t *mem);
static inline knc_buf *knc_buf_retain(knc_buf *buf) {
    atomic_fetch_add_explicit(&buf->refs, 1, memory_order_relaxed);
    return buf;
}
void knc_buf_release(knc_buf *buf);

/* ---- kn_records (records.c) -------------------------------------------- */

/* One record. Also the struct LuaJIT's batch:view() reads in place
 * (bindings/lua/lk_view.lua mirrors it and checks every offset it names
 * when the first view is made): a change here is a change there. */
typedef struct knc_rec {
    int64_t offset;
    int64_t timestamp;
    const uint8_t *key;     /* NULL: null; never NULL when key_len >= 0 */
    const uint8_t *value;   /* NULL: null; never NULL when value_len >= 0 */
    const uint8_t *headers; /* encoded headers (record_batch.h layout) */
    int32_t key_len;        /* -1: null */
    int32_t value_len;      /* -1: null */
    int32_t headers_len;
    int32_t header_count;
    int32_t partition;
    int32_t leader_epoch;
    uint16_t topic_idx;
    uint8_t ts_type;
    int16_t delivery_count; /* share consumers (core/share/); 0 otherwise */
} knc_rec;

struct kn_records {
    knc_rec *recs;
    size_t count, cap;
    char **topics; /* owned copies, indexed by knc_rec.topic_idx */
    size_t topic_count, topic_cap;
    const char *last_topic_src; /* interning cache: caller's pointer ... */
    uint16_t last_topic_idx;    /* ... and its index */
    knc_buf **bufs;             /* one reference each */
    size_t buf_count, buf_cap;
    /* Counted as records are added, for the poll's metrics (so they need
     * no second pass over the records): key + value bytes (null ones 0),
     * in all and per topic index (2 per topic: records, bytes). */
    int64_t bytes;
    int64_t *topic_counts; /* counts_cap * 2 */
    size_t counts_cap;
};

/* A new empty set with room for cap records. Owned by the caller
 * (kn_records_free). NULL on allocation failure. */
kn_records *knc_records_new(size_t cap);
/* Appends a record whose slices point into buf (retained once per
 * distinct consecutive buffer). topic is copied the first time it is
 * seen. Returns 0 or KN_ERR__NOMEM. */
int knc_records_add(kn_records *recs, const char *topic, int32_t partition, int32_t leader_epoch,
                    int ts_type, const kn_record *rec, knc_buf *buf);

/* The same for a run of records of one batch (drain.c), in two steps so
 * the per-run work is done once: knc_records_reserve makes room for n
 * more records, retains buf and interns topic, returning the topic's
 * index (or -1: out of memory, and recs is as it was apart from spare
 * room); the caller fills slots recs->recs[recs->count ...] itself,
 * keeping knc_rec's slice convention, then knc_records_commit counts
 * the n it filled with their key + value bytes (null ones 0). */
int knc_records_reserve(kn_records *recs, size_t n, const char *topic, knc_buf *buf);
static inline void knc_records_commit(kn_records *recs, int topic_idx, size_t n, int64_t bytes) {
    recs->count += n;
    recs->bytes += bytes;
    recs->topic_counts[2 * topic_idx] += (int64_t)n;
    recs->topic_counts[2 * topic_idx + 1] += bytes;
}

#endif
