/*
 * share_drain.c: turning a partition's ShareFetch answer into records on
 * the application thread (inside poll), and the acknowledgement ranges.
 *
 * A ShareFetch answer holds whole record batches plus the offset ranges
 * this member acquired, each with its delivery count. Batches may hold
 * records other members acquired: only acquired offsets are delivered.
 * Acquired offsets that hold no record inside the data (control
 * records, compacted-away offsets) are acknowledged as GAP; acquired
 * offsets past the data are released, so nothing acquired is left
 * without an acknowledgement. Decoding reuses the consumer's record
 * batch reader and knc_buf references (records point into the answer,
 * or into one decompressed batch).
 */
#include <stdlib.h>
#include <string.h>

#include "kn_alloc.h"
#include "log.h"
#include "share/share_int.h"

#define KNS_RANGES_MAX (1 << 20)

int kns_ranges_add(kns_ranges *r, int64_t first, int64_t last, int8_t type) {
    if (r->count > 0) {
        kns_range *l = &r->items[r->count - 1];
        if (l->type == type && l->last + 1 == first) {
            l->last = last;
            return 0;
        }
    }
    if (r->count == r->cap) {
        if (r->cap >= KNS_RANGES_MAX)
            return KN_ERR__NOMEM;
        int32_t cap = r->cap ? r->cap * 2 : 8;
        kns_range *n = kn_realloc(r->items, (size_t)cap * sizeof(*n));
        if (!n)
            return KN_ERR__NOMEM;
        r->items = n;
        r->cap = cap;
    }
    r->items[r->count++] = (kns_range){first, last, type};
    return 0;
}

void kns_ranges_free(kns_ranges *r) {
    kn_free(r->items);
    memset(r, 0, sizeof(*r));
}

static int kns_acq_cmp(const void *a, const void *b) {
    const kns_acq *x = a, *y = b;
    return x->first < y->first ? -1 : x->first > y->first;
}

int kns_part_take(kns_part *p, knc_buf *buf, const uint8_t *records, size_t len, const kns_acq *acq,
                  int32_t acq_count) {
    kns_acq *copy = NULL;
    if (acq_count > 0) {
        copy = kn_malloc((size_t)acq_count * sizeof(*copy));
        if (!copy)
            return KN_ERR__NOMEM;
        memcpy(copy, acq, (size_t)acq_count * sizeof(*copy));
        qsort(copy, (size_t)acq_count, sizeof(*copy), kns_acq_cmp);
        for (int32_t i = 0; i < acq_count; i++)
            if (copy[i].first < 0 || copy[i].last < copy[i].first ||
                (i > 0 && copy[i].first <= copy[i - 1].last)) {
                kn_free(copy);
                return KN_ERR__PROTOCOL;
            }
    }
    kns_part_drop(p, KN_SHARE_RELEASE);
    p->buf = knc_buf_retain(buf);
    p->records = records;
    p->len = len;
    p->acq = copy;
    p->acq_count = acq_count;
    p->acq_next = 0;
    p->cursor = acq_count > 0 ? copy[0].first : 0;
    p->data_end = -1;
    kn_records_iter_init(&p->it, records, len);
    p->in_batch = false;
    p->has_data = acq_count > 0;
    return 0;
}

/* Acknowledges every acquired offset from the cursor up to (excluding)
 * end with type, moving the cursor; end INT64_MAX: all that is left. */
static int kns_ack_until(kns_part *p, int64_t end, int8_t type) {
    while (p->acq_next < p->acq_count) {
        const kns_acq *a = &p->acq[p->acq_next];
        int64_t from = p->cursor > a->first ? p->cursor : a->first;
        int64_t to = a->last < end - 1 ? a->last : end - 1;
        if (from > to) {
            if (a->last < end) {
                p->acq_next++;
                continue;
            }
            break;
        }
        if (kns_ranges_add(&p->acks, from, to, type) != 0)
            return KN_ERR__NOMEM;
        p->cursor = to + 1;
        if (to == a->last)
            p->acq_next++;
        else
            break;
    }
    return 0;
}

void kns_part_drop(kns_part *p, int type) {
    if (p->has_data && type >= 0) {
        /* Inside the batches read to their end: gaps (no record there);
         * the rest, the batch being read included: released. */
        if (p->data_end > p->cursor)
            (void)kns_ack_until(p, p->data_end, KNS_ACK_GAP);
        (void)kns_ack_until(p, INT64_MAX, (int8_t)type);
    }
    knc_buf_release(p->batch_buf);
    p->batch_buf = NULL;
    knc_buf_release(p->buf);
    p->buf = NULL;
    kn_free(p->acq);
    p->acq = NULL;
    p->acq_count = p->acq_next = 0;
    p->records = NULL;
    p->len = 0;
    p->in_batch = false;
    p->has_data = false;
}

void kns_part_free(kns_part *p) {
    if (!p)
        return;
    kns_part_drop(p, -1);
    kns_ranges_free(&p->acks);
    kns_ranges_free(&p->sent);
    kns_ranges_free(&p->renews);
    kn_free(p->deliv);
    kn_free(p->topic);
    kn_free(p);
}

/* Opens p->batch's records (decompressing into a buffer the records
 * keep alive). */
static int kns_batch_open(kn_share_consumer *sc, kns_part *p, char *es, size_t esz) {
    int rc;
    if (kn_rb_codec(&p->batch) == 0) {
        rc = kn_rb_records_begin(&p->batch, NULL, es, esz);
        if (rc == 0)
            p->batch_buf = knc_buf_retain(p->buf);
        return rc;
    }
    kn_wr scratch;
    size_t hint = p->batch.size * 4;
    kn_wr_init(&scratch, hint < 4096 ? 4096 : hint, sc->scratch_max);
    rc = kn_rb_records_begin(&p->batch, &scratch, es, esz);
    if (rc == 0) {
        size_t n;
        uint8_t *mem = kn_wr_detach(&scratch, &n);
        if ((!mem && n) || !(p->batch_buf = knc_buf_from_mem(mem)))
            rc = KN_ERR__NOMEM;
    }
    kn_wr_free(&scratch);
    return rc;
}

static int kns_deliv_add(kns_part *p, int64_t offset) {
    if (p->deliv_count == p->deliv_cap) {
        int32_t cap = p->deliv_cap ? p->deliv_cap * 2 : 64;
        kns_deliv *n = kn_realloc(p->deliv, (size_t)cap * sizeof(*n));
        if (!n)
            return KN_ERR__NOMEM;
        p->deliv = n;
        p->deliv_cap = cap;
    }
    p->deliv[p->deliv_count++] = (kns_deliv){offset, 0};
    return 0;
}

/* The acquired range holding offset o at or after the cursor, or NULL
 * (o was not acquired by this member, or is already handled). Offsets
 * skipped on the way are gaps. */
static const kns_acq *kns_acquired(kns_part *p, int64_t o) {
    if (o < p->cursor)
        return NULL;
    while (p->acq_next < p->acq_count && p->acq[p->acq_next].last < o)
        if (kns_ack_until(p, p->acq[p->acq_next].last + 1, KNS_ACK_GAP) != 0)
            return NULL;
    if (p->acq_next >= p->acq_count || o < p->acq[p->acq_next].first)
        return NULL;
    if (p->cursor < o && kns_ack_until(p, o, KNS_ACK_GAP) != 0)
        return NULL;
    return &p->acq[p->acq_next];
}

int kns_drain(kn_share_consumer *sc, kns_part *p, kn_records *out, int max) {
    char es[200];
    int n = 0;
    int flags = sc->verify_crc ? KN_RB_VERIFY_CRC : 0;
    while (p->has_data && n < max) {
        if (!p->in_batch) {
            if (p->acq_next >= p->acq_count) {
                kns_part_drop(p, KN_SHARE_RELEASE);
                break;
            }
            int rc = kn_records_next(&p->it, &p->batch, flags, es, sizeof(es));
            if (rc == 0) {
                kns_part_drop(p, KN_SHARE_RELEASE);
                break;
            }
            if (rc < 0)
                goto bad;
            int64_t last = kn_rb_last_offset(&p->batch);
            if (kn_rb_is_control(&p->batch) || last < p->cursor) {
                /* nothing to deliver: its acquired offsets are gaps */
                if (last + 1 > p->data_end)
                    p->data_end = last + 1;
                continue;
            }
            rc = kns_batch_open(sc, p, es, sizeof(es));
            if (rc == KN_ERR__NOMEM)
                return n ? n : rc;
            if (rc != 0)
                goto bad;
            p->in_batch = true;
        }
        kn_record rec;
        int rc = kn_rb_next(&p->batch, &rec, es, sizeof(es));
        if (rc == 0) {
            int64_t last = kn_rb_last_offset(&p->batch);
            if (last + 1 > p->data_end)
                p->data_end = last + 1;
            p->in_batch = false;
            knc_buf_release(p->batch_buf);
            p->batch_buf = NULL;
            continue;
        }
        if (rc < 0)
            goto bad;
        const kns_acq *a = kns_acquired(p, rec.offset);
        if (!a)
            continue;
        int ts_type = (p->batch.h.attributes & KN_RB_ATTR_LOG_APPEND_TIME) ? KN_TIMESTAMP_LOG_APPEND_TIME
                                                                           : KN_TIMESTAMP_CREATE_TIME;
        if (kns_deliv_add(p, rec.offset) != 0 ||
            knc_records_add(out, p->topic, p->partition, p->batch.h.partition_leader_epoch, ts_type, &rec,
                            p->batch_buf) != 0) {
            /* Not handed out: release it with the rest. */
            if (p->deliv_count > 0 && p->deliv[p->deliv_count - 1].offset == rec.offset)
                p->deliv_count--;
            kns_part_drop(p, KN_SHARE_RELEASE);
            return n ? n : KN_ERR__NOMEM;
        }
        out->recs[out->count - 1].delivery_count = a->delivery_count;
        p->cursor = rec.offset + 1;
        n++;
    }
    return n;
bad:
    kn_log(knw_client_logger(sc->client), KN_LOG_WARN,
           "share fetch of %s [%d] at offset %lld does not decode (%s): its acquired records are released",
           p->topic, (int)p->partition, (long long)p->cursor, es);
    kns_part_drop(p, KN_SHARE_RELEASE);
    return n;
}
