/*
 * drain.c: turning a partition's buffered Fetch data into records, on
 * the application's thread inside poll. The raw blob is walked lazily,
 * one batch at a time: only the batch being read is ever decompressed,
 * so memory holds the raw responses plus about one decoded batch.
 *
 * A partition holds up to two slices: the one being drained and the
 * read-ahead one fetched from where the first ends (tick.c, fetch.c), which
 * takes over when the first is used up.
 *
 * Also owns read_committed filtering: the response lists the aborted
 * transactions (producer id, first offset); a producer's transactional
 * batches are dropped from its first aborted offset up to its ABORT
 * control marker.
 */
#include <stdlib.h>
#include <string.h>

#include "consumer/drain.h"
#include "kn_alloc.h"

static bool knc_aborting_has(const knc_fetched *f, int64_t pid) {
    for (int32_t i = 0; i < f->aborting_count; i++)
        if (f->aborting_pids[i] == pid)
            return true;
    return false;
}

static void knc_aborting_remove(knc_fetched *f, int64_t pid) {
    for (int32_t i = 0; i < f->aborting_count; i++)
        if (f->aborting_pids[i] == pid) {
            f->aborting_pids[i] = f->aborting_pids[--f->aborting_count];
            return;
        }
}

static int knc_aborting_add(knc_fetched *f, int64_t pid) {
    if (knc_aborting_has(f, pid))
        return 0;
    if (f->aborting_count == f->aborting_cap) {
        int32_t cap = f->aborting_cap ? f->aborting_cap * 2 : 4;
        int64_t *n = kn_realloc(f->aborting_pids, (size_t)cap * sizeof(*n));
        if (!n)
            return KN_ERR__NOMEM;
        f->aborting_pids = n;
        f->aborting_cap = cap;
    }
    f->aborting_pids[f->aborting_count++] = pid;
    return 0;
}

/* The batch was consumed (or skipped) as a whole: the position moves
 * past its last offset, which is exact even when compaction removed
 * records from its end. */
static void knc_batch_done(knc_part *p, knc_fetched *f) {
    int64_t next = kn_rb_last_offset(&f->batch) + 1;
    if (next > p->position)
        p->position = next;
    f->in_batch = false;
    knc_buf_release(f->batch_buf);
    f->batch_buf = NULL;
}

/* Decides whether the batch just parsed is delivered. Returns 1 to read
 * its records, 0 to skip it, or an error. */
static int knc_batch_filter(knc_part *p, knc_fetched *f, const knc_drain_opts *opts) {
    kn_rb *b = &f->batch;
    if (kn_rb_last_offset(b) < p->position)
        return 0;
    if (opts->read_committed) {
        int64_t last = kn_rb_last_offset(b);
        while (f->aborted_next < f->aborted_count &&
               f->aborted[f->aborted_next].first_offset <= last) {
            if (knc_aborting_add(f, f->aborted[f->aborted_next].producer_id) != 0)
                return KN_ERR__NOMEM;
            f->aborted_next++;
        }
    }
    if (kn_rb_is_control(b)) {
        if (opts->read_committed && kn_rb_codec(b) == 0) {
            /* The marker ends the producer's aborted span. Control
             * batches are never compressed; one record each. */
            kn_rb cb = *b;
            kn_record rec;
            char es[8];
            if (kn_rb_records_begin(&cb, NULL, es, sizeof(es)) == 0 &&
                kn_rb_next(&cb, &rec, es, sizeof(es)) == 1 &&
                kn_record_control_type(&rec) == KN_RB_CONTROL_ABORT)
                knc_aborting_remove(f, b->h.producer_id);
        }
        return 0;
    }
    if (opts->read_committed && kn_rb_is_transactional(b) &&
        knc_aborting_has(f, b->h.producer_id))
        return 0;
    return 1;
}

/* Opens the records of f->batch, decompressing into a fresh buffer that
 * the delivered records will keep alive. */
static int knc_batch_open(knc_part *p, knc_fetched *f, const knc_drain_opts *opts) {
    char es[200];
    int rc;
    if (kn_rb_codec(&f->batch) == 0) {
        rc = kn_rb_records_begin(&f->batch, NULL, es, sizeof(es));
        if (rc == 0)
            f->batch_buf = knc_buf_retain(f->buf);
    } else {
        kn_wr scratch;
        size_t hint = f->batch.size * 4;
        kn_wr_init(&scratch, hint < 4096 ? 4096 : hint, opts->scratch_max);
        rc = kn_rb_records_begin(&f->batch, &scratch, es, sizeof(es));
        if (rc == 0) {
            size_t n;
            uint8_t *mem = kn_wr_detach(&scratch, &n);
            /* records points into mem; the detach kept the address. */
            if (!mem && n) {
                rc = KN_ERR__NOMEM;
            } else if (!(f->batch_buf = knc_buf_from_mem(mem))) {
                rc = KN_ERR__NOMEM;
            }
        }
        kn_wr_free(&scratch);
    }
    if (rc == KN_ERR__NOMEM)
        return rc;
    if (rc != 0) {
        knc_part_fail(p, KN_ERR__BAD_BATCH, "%s [%d] at offset %lld: %s", p->topic,
                      (int)p->partition, (long long)p->position, es);
        return rc;
    }
    f->in_batch = true;
    return 0;
}

/* The drained slice is used up: the read-ahead one takes its place if
 * it starts where the position now is (it was fetched at the drained
 * slice's end_offset, and draining to the end lands exactly there;
 * anything else would skip records, so it is dropped and re-fetched).
 * A failed partition keeps nothing. Returns the next slice or NULL. */
static knc_fetched *knc_next_slice(knc_part *p) {
    knc_fetched_free(p->fetched);
    p->fetched = NULL;
    p->slices_drained++;
    knc_fetched *next = p->ahead;
    p->ahead = NULL;
    if (next && (p->state != KNC_POS_VALID || next->fetch_offset > p->position)) {
        knc_fetched_free(next);
        next = NULL;
    }
    p->fetched = next;
    return next;
}

/* The usual records of the open batch, decoded inline (record_batch.h,
 * "the fast record reader") straight into out's slots: the buffer
 * reference, the topic and the room are taken once per run, and the
 * batch's reading position, the partition's position and the byte count
 * stay in locals until the run ends. Records below the position (a
 * fetch or a seek into the middle of a batch) are read past, as the
 * checked loop below does. Stops at max, at the batch's declared end or
 * at a record only kn_rb_next may judge, and gives the reading position
 * back to the batch, so the checked loop goes on exactly there. Returns
 * the records added (p->position moved past them), or KN_ERR__NOMEM
 * with the record that found no room left unread. */
static int knc_drain_run(knc_part *p, knc_fetched *f, kn_records *out, int max) {
    kn_rb *b = &f->batch;
    kn_rb_cursor cur;
    kn_record rec;
    if (!kn_rb_cursor_begin(b, &cur))
        return 0;
    /* The header in locals: the slot stores below could alias it for
     * all the compiler knows. */
    const uint64_t base = (uint64_t)b->h.base_offset;
    const bool log_append = (b->h.attributes & KN_RB_ATTR_LOG_APPEND_TIME) != 0;
    const uint64_t ts_base = (uint64_t)(log_append ? b->h.max_timestamp : b->h.base_timestamp);
    const uint64_t ts_mask = log_append ? 0 : ~(uint64_t)0;
    const int32_t epoch = b->h.partition_leader_epoch, partition = p->partition;
    const uint8_t ts_type = log_append ? KN_TIMESTAMP_LOG_APPEND_TIME : KN_TIMESTAMP_CREATE_TIME;
    int64_t pos = p->position;
    const uint8_t *at;
    do {
        at = cur.p;
        if (!kn_rb_cursor_next(&cur, &rec)) {
            kn_rb_cursor_end(b, &cur);
            return 0;
        }
    } while ((int64_t)(base + (uint64_t)(int64_t)rec.offset_delta) < pos);
    int room = cur.left + 1 < max ? cur.left + 1 : max;
    int t = knc_records_reserve(out, (size_t)room, p->topic, f->batch_buf);
    if (t < 0) {
        cur.p = at; /* rec stays unread */
        cur.left++;
        kn_rb_cursor_end(b, &cur);
        return KN_ERR__NOMEM;
    }
    knc_rec *dst = out->recs + out->count;
    int64_t bytes = 0;
    int n = 0;
    do {
        int64_t offset = (int64_t)(base + (uint64_t)(int64_t)rec.offset_delta);
        if (offset < pos)
            continue; /* to the loop's condition: the next record */
        knc_rec *r = &dst[n++];
        r->offset = offset;
        r->timestamp = (int64_t)(ts_base + ((uint64_t)rec.timestamp_delta & ts_mask));
        /* The fast reader keeps knc_rec's slice convention already:
         * null is NULL/-1, anything else a pointer into the record. */
        r->key = rec.key.ptr;
        r->key_len = rec.key.len;
        r->value = rec.value.ptr;
        r->value_len = rec.value.len;
        r->headers = rec.headers.ptr;
        r->headers_len = rec.headers.len;
        r->header_count = rec.header_count;
        r->partition = partition;
        r->leader_epoch = epoch;
        r->topic_idx = (uint16_t)t;
        r->ts_type = ts_type;
        r->delivery_count = 0;
        bytes += (rec.key.len > 0 ? rec.key.len : 0) + (rec.value.len > 0 ? rec.value.len : 0);
        pos = offset + 1;
    } while (n < room && kn_rb_cursor_next(&cur, &rec));
    kn_rb_cursor_end(b, &cur);
    knc_records_commit(out, t, (size_t)n, bytes);
    p->position = pos;
    if (epoch >= 0)
        p->position_epoch = epoch;
    return n;
}

int knc_drain(knc_part *p, kn_records *out, int max, const knc_drain_opts *opts) {
    knc_fetched *f = p->fetched;
    int n = 0;
    char es[200];
    if (!f || p->state != KNC_POS_VALID)
        return 0;
    int flags = opts->verify_crc ? KN_RB_VERIFY_CRC : 0;
    int ts_type;
    while (n < max) {
        if (!f->in_batch) {
            if (!f->batch_ready) {
                int rc = kn_records_next(&f->it, &f->batch, flags, es, sizeof(es));
                if (rc == 0)
                    goto dry;
                if (rc < 0) {
                    knc_part_fail(p, rc == KN_ERR__UNSUPPORTED ? KN_ERR__UNSUPPORTED : KN_ERR__BAD_BATCH,
                                  "%s [%d] at offset %lld: %s", p->topic, (int)p->partition,
                                  (long long)p->position, es);
                    goto dry;
                }
                f->batch_ready = true;
            }
            /* filter and open are safe to repeat after NOMEM (the
             * aborted-producer set only grows idempotently) */
            int rc = knc_batch_filter(p, f, opts);
            if (rc < 0)
                return rc;
            if (rc == 0) {
                f->batch_ready = false;
                knc_batch_done(p, f);
                continue;
            }
            rc = knc_batch_open(p, f, opts);
            if (rc == KN_ERR__NOMEM)
                return rc;
            f->batch_ready = false;
            if (rc != 0)
                goto dry;
        }
        if (!f->has_pending) {
            int got = knc_drain_run(p, f, out, max - n);
            if (got < 0)
                return got;
            n += got;
            if (n >= max)
                break;
        }
        /* The batch's end, a record the fast reader left to the checked
         * one, or a record NOMEM held back. */
        kn_record rec;
        int rc;
        if (f->has_pending) {
            rec = f->pending;
            f->has_pending = false;
            rc = 1;
        } else {
            rc = kn_rb_next(&f->batch, &rec, es, sizeof(es));
        }
        if (rc == 0) {
            knc_batch_done(p, f);
            continue;
        }
        if (rc < 0) {
            knc_part_fail(p, KN_ERR__BAD_BATCH, "%s [%d] at offset %lld: %s", p->topic,
                          (int)p->partition, (long long)p->position, es);
            goto dry;
        }
        if (rec.offset < p->position)
            continue;
        ts_type = (f->batch.h.attributes & KN_RB_ATTR_LOG_APPEND_TIME) ? KN_TIMESTAMP_LOG_APPEND_TIME
                                                                       : KN_TIMESTAMP_CREATE_TIME;
        if (knc_records_add(out, p->topic, p->partition, f->batch.h.partition_leader_epoch,
                            ts_type, &rec, f->batch_buf) != 0) {
            f->pending = rec; /* its slices live in f->batch_buf, still held */
            f->has_pending = true;
            return KN_ERR__NOMEM;
        }
        p->position = rec.offset + 1;
        if (f->batch.h.partition_leader_epoch >= 0)
            p->position_epoch = f->batch.h.partition_leader_epoch;
        n++;
        continue;
    dry:
        if (!(f = knc_next_slice(p)))
            break;
    }
    return n;
}
