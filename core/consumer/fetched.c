/*
 * fetched.c: the life of a knc_fetched slice (fetched.h): made from one
 * partition's records blob in a Fetch response, with its aborted
 * transactions sorted for read_committed and its end offset found from
 * the batch headers; counted in the fetch buffer's held bytes while it
 * points into the response.
 */
#include <stdlib.h>
#include <string.h>

#include "consumer/fetched.h"
#include "kn_alloc.h"

static int knc_aborted_cmp(const void *a, const void *b) {
    const knc_aborted *x = a, *y = b;
    return x->first_offset < y->first_offset ? -1 : x->first_offset > y->first_offset;
}

/* One past the last offset of the last whole v2 batch in records, found
 * from the batch headers alone (no CRC, no decompression), so the
 * read-ahead fetch can start there before anything is decoded. A
 * trailing partial batch, or anything that is not a plain v2 batch
 * (the drain reports those), ends the walk. */
static int64_t knc_records_end(const uint8_t *records, size_t len, int64_t fetch_offset) {
    int64_t end = fetch_offset;
    size_t off = 0;
    while (len - off >= KN_RB_HEADER_SIZE) {
        kn_rd r;
        kn_rd_init(&r, records + off, len - off);
        int64_t base = kn_rd_i64(&r);
        int32_t blen = kn_rd_i32(&r);
        kn_rd_skip(&r, 4); /* partitionLeaderEpoch */
        int8_t magic = kn_rd_i8(&r);
        kn_rd_skip(&r, 4 + 2); /* crc, attributes */
        int32_t last_delta = kn_rd_i32(&r);
        if (magic != 2 || blen < KN_RB_HEADER_SIZE - KN_RB_LOG_OVERHEAD ||
            (size_t)blen > len - off - KN_RB_LOG_OVERHEAD || last_delta < 0)
            break;
        if (base + last_delta + 1 > end)
            end = base + last_delta + 1;
        off += KN_RB_LOG_OVERHEAD + (size_t)blen;
    }
    return end;
}

knc_fetched *knc_fetched_new(knc_buf *buf, const uint8_t *records, size_t len,
                             int64_t fetch_offset, const knc_aborted *aborted,
                             int32_t aborted_count) {
    knc_fetched *f = kn_calloc(1, sizeof(*f));
    if (!f)
        return NULL;
    if (aborted_count > 0) {
        f->aborted = kn_malloc((size_t)aborted_count * sizeof(*f->aborted));
        if (!f->aborted) {
            kn_free(f);
            return NULL;
        }
        memcpy(f->aborted, aborted, (size_t)aborted_count * sizeof(*f->aborted));
        qsort(f->aborted, (size_t)aborted_count, sizeof(*f->aborted), knc_aborted_cmp);
        f->aborted_count = aborted_count;
    }
    f->buf = knc_buf_retain(buf);
    if (buf->slices++ == 0 && buf->held)
        *buf->held += buf->size;
    f->records = records;
    f->len = len;
    f->fetch_offset = fetch_offset;
    f->end_offset = knc_records_end(records, len, fetch_offset);
    kn_records_iter_init(&f->it, records, len);
    return f;
}

void knc_fetched_free(knc_fetched *f) {
    if (!f)
        return;
    knc_buf_release(f->batch_buf);
    if (--f->buf->slices == 0 && f->buf->held)
        *f->buf->held -= f->buf->size;
    knc_buf_release(f->buf);
    kn_free(f->aborted);
    kn_free(f->aborting_pids);
    kn_free(f);
}

void knc_fetchbuf_init(knc_fetchbuf *fb, int max_partition_fetch_bytes) {
    /* Six partition-sized slices: a Fetch of three (half the budget)
     * travels while the previous one drains. Measured on loopback (see
     * docs/consumer.md): four slices cost throughput, eight only memory. */
    size_t b = (size_t)(max_partition_fetch_bytes > 0 ? max_partition_fetch_bytes : 1) * 6;
    fb->budget = b > (size_t)INT32_MAX ? (size_t)INT32_MAX : b;
    fb->held = 0;
    fb->bpo = (knc_bpo){0, 0};
}
