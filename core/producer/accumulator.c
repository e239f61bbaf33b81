/*
 * accumulator.c: per-partition batch queues, buffer.memory back-pressure
 * and the done queue; see accumulator.h for the locking rules.
 */
#include "producer/accumulator.h"

#include <stdio.h>
#include <string.h>
#include <time.h>

#include "codec/codec.h"
#include "crc32c.h"
#include "error.h"
#include "kn_alloc.h"

/* Header field offsets inside a v2 batch (see record_batch.h). */
#define KNP_PRODUCER_ID_OFFSET 43
#define KNP_PRODUCER_EPOCH_OFFSET 51
#define KNP_BASE_SEQUENCE_OFFSET 53

/* A pooled buffer holds a full batch's records and the header's room
 * kept in front of them (uncompressed batches are finished in place),
 * or, built, a compressed batch's wire form (the header, plus what a
 * codec may add to incompressible records). */
#define KNP_POOL_SLACK 64

/* Memory charged per batch on top of its records. */
#define KNP_BATCH_OVERHEAD ((int64_t)sizeof(knp_batch) + KN_RB_HEADER_SIZE)

static void acc_deadline_ts(int64_t deadline_ms, struct timespec *ts) {
    ts->tv_sec = (time_t)(deadline_ms / 1000);
    ts->tv_nsec = (long)(deadline_ms % 1000) * 1000000L;
}

static int64_t acc_now_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static int64_t acc_now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

int knp_acc_init(knp_acc *acc, const knp_acc_conf *conf, uint64_t seed) {
    memset(acc, 0, sizeof *acc);
    acc->conf = *conf;
    knp_rng_seed(&acc->rng, seed);
    /* Idle buffers kept: as many as buffer.memory holds (Java keeps its
     * free batch.size buffers up to buffer.memory too), at most 1,024. */
    size_t pool_size = (size_t)conf->batch_size + KNP_POOL_SLACK;
    int64_t idle = conf->buffer_memory / (int64_t)pool_size;
    if (knp_bufpool_init(&acc->pool, pool_size, (int32_t)(idle > 1024 ? 1024 : idle)))
        return KN_ERR__NOMEM;
    acc->nbuckets = 64;
    acc->buckets = kn_calloc(acc->nbuckets, sizeof *acc->buckets);
    if (!acc->buckets) {
        knp_bufpool_destroy(&acc->pool);
        return KN_ERR__NOMEM;
    }
    pthread_condattr_t ca;
    pthread_condattr_init(&ca);
    /* Deadlines are monotonic ms, as everywhere in the library. */
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_mutex_init(&acc->lock, NULL);
    pthread_cond_init(&acc->mem_cond, &ca);
    pthread_cond_init(&acc->done_cond, &ca);
    pthread_condattr_destroy(&ca);
    return 0;
}

void knp_batch_free(knp_batch *b) {
    if (!b)
        return;
    /* Both are safe to free twice (buffers reset to NULL). */
    kn_wr_free(&b->wire);
    kn_rb_builder_free(&b->b);
    kn_free(b->meta);
    kn_free(b);
}

static void batch_list_free(knp_batch *b) {
    while (b) {
        knp_batch *next = b->next;
        knp_batch_free(b);
        b = next;
    }
}

void knp_acc_destroy(knp_acc *acc) {
    if (!acc->buckets)
        return;
    for (int32_t i = 0; i < acc->npqs; i++) {
        batch_list_free(acc->pqs[i]->head);
        kn_free(acc->pqs[i]);
    }
    kn_free(acc->pqs);
    for (uint32_t i = 0; i < acc->nbuckets; i++) {
        knp_topic *t = acc->buckets[i];
        while (t) {
            knp_topic *next = t->hnext;
            kn_free(t->name);
            kn_free(t->parked_pq);
            kn_free(t->parts);
            kn_free(t->avail);
            knp_sticky_free(&t->sticky);
            kn_free(t);
            t = next;
        }
    }
    kn_free(acc->buckets);
    batch_list_free(acc->done_head);
    while (acc->parked_head) {
        knp_parked *pk = acc->parked_head;
        acc->parked_head = pk->next;
        kn_free(pk);
    }
    knp_bufpool_destroy(&acc->pool);
    pthread_mutex_destroy(&acc->lock);
    pthread_cond_destroy(&acc->mem_cond);
    pthread_cond_destroy(&acc->done_cond);
    memset(acc, 0, sizeof *acc);
}

static uint32_t topic_hash(const char *s) {
    uint32_t h = 2166136261u;
    for (; *s; s++)
        h = (h ^ (uint8_t)*s) * 16777619u;
    return h;
}

/* knp_acc_topic's slow half: not the last topic used. */
knp_topic *knp_acc_topic_find(knp_acc *acc, const char *name, bool create) {
    uint32_t h = topic_hash(name);
    for (knp_topic *t = acc->buckets[h % acc->nbuckets]; t; t = t->hnext)
        if (strcmp(t->name, name) == 0)
            return acc->last_topic = t;
    if (!create)
        return NULL;
    if ((uint32_t)acc->ntopics >= acc->nbuckets * 2) {
        uint32_t nb = acc->nbuckets * 4;
        knp_topic **nbk = kn_calloc(nb, sizeof *nbk);
        if (nbk) {
            for (uint32_t i = 0; i < acc->nbuckets; i++) {
                knp_topic *t = acc->buckets[i];
                while (t) {
                    knp_topic *next = t->hnext;
                    uint32_t j = topic_hash(t->name) % nb;
                    t->hnext = nbk[j];
                    nbk[j] = t;
                    t = next;
                }
            }
            kn_free(acc->buckets);
            acc->buckets = nbk;
            acc->nbuckets = nb;
        } /* else: keep the longer chains */
    }
    knp_topic *t = kn_calloc(1, sizeof *t);
    if (!t)
        return NULL;
    t->name = kn_strdup(name);
    if (!t->name) {
        kn_free(t);
        return NULL;
    }
    knp_sticky_init(&t->sticky);
    knp_topic_metrics_init(acc->metrics, &t->metrics, t->name);
    uint32_t j = h % acc->nbuckets;
    t->hnext = acc->buckets[j];
    acc->buckets[j] = t;
    acc->ntopics++;
    acc->last_topic = t;
    return t;
}

int knp_acc_topic_update(knp_acc *acc, knp_topic *t, int32_t count, const int32_t *avail,
                         int32_t navail) {
    if (count > t->partition_count) {
        knp_partq **parts = kn_realloc(t->parts, (size_t)count * sizeof *parts);
        if (!parts)
            return KN_ERR__NOMEM;
        for (int32_t i = t->partition_count; i < count; i++)
            parts[i] = NULL;
        t->parts = parts;
        t->partition_count = count;
    }
    if (navail > t->navail || !t->avail) {
        int32_t *a = kn_realloc(t->avail, (size_t)(navail > 0 ? navail : 1) * sizeof *a);
        if (!a)
            return KN_ERR__NOMEM;
        t->avail = a;
    }
    int32_t n = 0;
    for (int32_t i = 0; i < navail; i++)
        if (avail[i] >= 0 && avail[i] < t->partition_count)
            t->avail[n++] = avail[i];
    t->navail = n;
    return 0;
}

/* knp_acc_partq's slow half: the queue does not exist yet. */
knp_partq *knp_acc_partq_new(knp_acc *acc, knp_topic *t, int32_t p) {
    if (p < 0 || p >= t->partition_count)
        return NULL;
    if (t->parts[p])
        return t->parts[p];
    if (acc->npqs == acc->pqs_cap) {
        int32_t cap = acc->pqs_cap ? acc->pqs_cap * 2 : 64;
        knp_partq **pqs = kn_realloc(acc->pqs, (size_t)cap * sizeof *pqs);
        if (!pqs)
            return NULL;
        acc->pqs = pqs;
        acc->pqs_cap = cap;
    }
    knp_partq *pq = kn_calloc(1, sizeof *pq);
    if (!pq)
        return NULL;
    pq->topic = t;
    pq->partition = p;
    pq->leader = -1;
    pq->inflight_node = -1;
    acc->pqs[acc->npqs++] = pq;
    t->parts[p] = pq;
    return pq;
}

static knp_batch *batch_new(knp_acc *acc, knp_partq *pq, int64_t now_ms) {
    knp_batch *b = kn_calloc(1, sizeof *b);
    if (!b)
        return NULL;
    kn_rb_builder_conf bc;
    kn_rb_builder_conf_init(&bc);
    bc.codec = acc->conf.codec;
    bc.level = acc->conf.level;
    bc.transactional = acc->conf.transactional;
    /* A single record may exceed batch.size (it then travels alone), up
     * to max.request.size. */
    kn_rb_builder_init(&b->b, &bc, (size_t)acc->conf.max_request_size);
    knp_bufpool_wr_init(&acc->pool, kn_rb_builder_buffer(&b->b), 0, (size_t)acc->conf.max_request_size);
    /* Uncompressed: the buffer becomes the batch itself (its header
     * written in front at build time), no copy of the records. Failing,
     * the writer's sticky error fails the first append. */
    if (bc.codec == KN_CODEC_NONE)
        (void)kn_rb_builder_keep_header(&b->b);
    b->pq = pq;
    b->created_ms = now_ms;
    b->deadline_ms = now_ms + acc->conf.delivery_timeout_ms;
    b->base_seq = -1;
    b->base_offset = -1;
    b->log_append_time = -1;
    return b;
}

/* rec's size as the next record of b (NULL: a new batch's first), and
 * its body's size for kn_rb_builder_append_body: the record is sized
 * once, for the batch.size check and for its encoding. The deltas are
 * the ones the builder derives (its record count and base timestamp). */
static int32_t rec_size_in(const knp_rec *rec, const knp_batch *b, size_t *body) {
    int32_t od = b ? b->b.count : 0;
    int64_t td = b && b->b.count ? (int64_t)((uint64_t)rec->timestamp - (uint64_t)b->b.base_timestamp) : 0;
    *body = kn_rb_record_body_size(od, td, rec->key, rec->value, rec->headers, rec->header_count);
    size_t n = kn_varint_size((int64_t)*body) + *body;
    return n > INT32_MAX ? INT32_MAX : (int32_t)n;
}

static bool batch_open(const knp_batch *b) { return b && !b->full && !b->built; }

int knp_acc_append(knp_acc *acc, knp_topic *t, int32_t partition, const knp_rec *rec,
                   int64_t now_ms, int64_t block_deadline_ms, int32_t *out_partition,
                   char *errstr, size_t errsize) {
    const knp_acc_conf *c = &acc->conf;
    int32_t n = t->partition_count;
    if (n <= 0) {
        kn_errstr_set(errstr, errsize, "topic %s has no known partitions", t->name);
        return KN_ERR__INVALID_ARG;
    }
    if (partition >= n) {
        kn_errstr_set(errstr, errsize,
                      "invalid partition given with record: %d is not in the range [0...%d] "
                      "of topic %s",
                      (int)partition, (int)n - 1, t->name);
        return KN_ERR__INVALID_ARG;
    }
    for (;;) {
        if (acc->closing) {
            kn_errstr_set(errstr, errsize, "producer is closing");
            return KN_ERR__CLOSED;
        }
        bool sticky = false;
        int32_t p = partition;
        if (p < 0) {
            if (rec->key.len >= 0 && !c->ignore_keys) {
                p = knp_part_keyed(rec->key.ptr, (size_t)rec->key.len, n);
            } else if (c->round_robin) {
                p = knp_part_round_robin(&t->rr_counter, t->avail, t->navail, n);
            } else {
                p = knp_sticky_peek(&t->sticky, &acc->rng, t->avail, t->navail, n);
                sticky = true;
            }
        }
        knp_partq *pq = knp_acc_partq(acc, t, p);
        if (!pq)
            return KN_ERR__NOMEM;
        knp_batch *b = batch_open(pq->tail) ? pq->tail : NULL;
        size_t body;
        int32_t rsize = rec_size_in(rec, b, &body);
        int64_t alone = KN_RB_HEADER_SIZE + (int64_t)rsize;
        if (alone > c->max_request_size) {
            kn_errstr_set(errstr, errsize,
                          "the message is %lld bytes when serialized which is larger than "
                          "max.request.size (%d)",
                          (long long)alone, (int)c->max_request_size);
            return KN_ERR_MESSAGE_TOO_LARGE;
        }
        if (b && b->count > 0 &&
            (int64_t)kn_rb_builder_size(&b->b) + rsize > (int64_t)c->batch_size) {
            /* Does not fit: close this batch for appends, start another. */
            b->full = true;
            if (acc->wake)
                acc->wake(acc->hook_opaque);
            b = NULL;
            rsize = rec_size_in(rec, NULL, &body);
        }
        int64_t charge = rsize + (int64_t)sizeof(knp_rec_meta) + (b ? 0 : KNP_BATCH_OVERHEAD);
        if (charge > c->buffer_memory) {
            kn_errstr_set(errstr, errsize,
                          "the message is %lld bytes when serialized which is larger than the "
                          "total memory buffer (buffer.memory %lld)",
                          (long long)charge, (long long)c->buffer_memory);
            return KN_ERR_MESSAGE_TOO_LARGE;
        }
        if (acc->mem_used + charge > c->buffer_memory) {
            if (!now_ms)
                now_ms = acc_now_ms();
            if (!block_deadline_ms)
                block_deadline_ms = now_ms + c->max_block_ms;
            if (acc_now_ms() >= block_deadline_ms) {
                kn_errstr_set(errstr, errsize,
                              "buffer.memory (%lld bytes) stayed full until max.block.ms: "
                              "%lld bytes in use, %lld needed; records are not being "
                              "delivered fast enough (broker down or too slow?)",
                              (long long)c->buffer_memory, (long long)acc->mem_used,
                              (long long)charge);
                if (acc->metrics)
                    knm_record(acc->metrics, acc->m_exhausted, 1, acc_now_ms());
                return KN_ERR__QUEUE_FULL;
            }
            /* Waiters make every batch sendable (Java: "exhausted"). */
            acc->mem_waiters++;
            if (acc->wake)
                acc->wake(acc->hook_opaque);
            struct timespec ts;
            acc_deadline_ts(block_deadline_ms, &ts);
            int64_t wait_from = acc_now_ns();
            pthread_cond_timedwait(&acc->mem_cond, &acc->lock, &ts);
            acc->mem_waiters--;
            if (acc->metrics) {
                /* Seconds waited per second is the ratio (Java: a Rate
                 * of nanoseconds over nanoseconds). */
                double waited = (double)(acc_now_ns() - wait_from);
                knm_record(acc->metrics, acc->m_wait_ratio, waited / 1e9, acc_now_ms());
                knm_record(acc->metrics, acc->m_wait_total, waited, acc_now_ms());
            }
            continue; /* the queues may have changed: start over */
        }
        bool fresh = false;
        if (!b) {
            if (!now_ms)
                now_ms = acc_now_ms();
            b = batch_new(acc, pq, now_ms);
            if (!b)
                return KN_ERR__NOMEM;
            fresh = true;
        }
        if (b->count == b->meta_cap) {
            int32_t cap = b->meta_cap ? b->meta_cap * 2 : 16;
            knp_rec_meta *m = kn_realloc(b->meta, (size_t)cap * sizeof *m);
            if (!m) {
                if (fresh)
                    knp_batch_free(b);
                return KN_ERR__NOMEM;
            }
            b->meta = m;
            b->meta_cap = cap;
        }
        int rc = kn_rb_builder_append_body(&b->b, b->b.count, rec->timestamp, rec->key, rec->value,
                                           rec->headers, rec->header_count, body);
        if (rc) {
            if (fresh)
                knp_batch_free(b);
            kn_errstr_set(errstr, errsize, "cannot append the record: %s", kn_err_message(rc));
            return rc;
        }
        if (fresh) {
            if (pq->tail)
                pq->tail->next = b;
            else
                pq->head = b;
            pq->tail = b;
            pq->depth++;
        }
        b->meta[b->count].dr = rec->dr;
        b->meta[b->count].opaque = rec->opaque;
        b->meta[b->count].timestamp = rec->timestamp;
        b->count++;
        if (rsize > b->max_rec_size)
            b->max_rec_size = (int32_t)rsize;
        if (rec->dr)
            b->has_dr = true;
        b->mem += (size_t)charge;
        acc->mem_used += charge;
        acc->outstanding++;
        bool became_full = (int64_t)kn_rb_builder_size(&b->b) >= (int64_t)c->batch_size;
        if (became_full)
            b->full = true;
        if ((became_full || fresh) && acc->wake)
            acc->wake(acc->hook_opaque);
        if (sticky)
            knp_sticky_update(&t->sticky, &acc->rng, rsize, c->batch_size, !batch_open(pq->tail),
                              t->avail, t->navail, n);
        *out_partition = p;
        return 0;
    }
}

bool knp_acc_head_ready(knp_acc *acc, knp_partq *pq, int64_t now_ms, int64_t *next_ms) {
    knp_batch *b = pq->head;
    if (!b)
        return false;
    if (b->full || b->built || pq->depth > 1 || acc->flushing > 0 || acc->closing ||
        acc->mem_waiters > 0)
        return true;
    int64_t at = b->created_ms + acc->conf.linger_ms;
    if (at <= now_ms)
        return true;
    if (at < *next_ms)
        *next_ms = at;
    return false;
}

knp_batch *knp_acc_pop(knp_acc *acc, knp_partq *pq) {
    knp_batch *b = pq->head;
    if (!b)
        return NULL;
    pq->head = b->next;
    if (!pq->head)
        pq->tail = NULL;
    pq->depth--;
    b->next = NULL;
    b->full = true; /* no appends once the sender took it */
    return b;
}

void knp_acc_requeue(knp_acc *acc, knp_batch *b) {
    knp_partq *pq = b->pq;
    knp_batch **pp = &pq->head, *prev = NULL;
    /* Retries (built, with a sequence) go first, in sequence order; a
     * sequence can wrap, so compare by distance. */
    while (*pp && (*pp)->built &&
           (b->base_seq < 0 || (*pp)->base_seq < 0 ||
            (int32_t)((uint32_t)(*pp)->base_seq - (uint32_t)b->base_seq) < 0)) {
        prev = *pp;
        pp = &(*pp)->next;
    }
    b->next = *pp;
    *pp = b;
    if (!b->next)
        pq->tail = b;
    (void)prev;
    pq->depth++;
    acc->retries++;
}

int knp_batch_build(knp_acc *acc, knp_batch *b, int64_t producer_id, int16_t epoch,
                    char *errstr, size_t errsize) {
    if (!b->built) {
        b->b.conf.producer_id = producer_id;
        b->b.conf.producer_epoch = epoch;
        b->b.conf.base_sequence = b->base_seq;
        if (b->b.hdr_room) {
            /* Built where it was appended: the record buffer (pooled)
             * becomes the wire form. */
            int rc = kn_rb_builder_finish_in_place(&b->b, &b->wire, errstr, errsize);
            if (rc)
                return rc;
            b->built = true;
            return 0;
        }
        knp_bufpool_wr_init(&acc->pool, &b->wire, kn_rb_builder_size(&b->b) + KNP_POOL_SLACK, 0);
        int rc = kn_rb_builder_finish(&b->b, &b->wire, errstr, errsize);
        if (rc) {
            knp_bufpool_wr_release(&acc->pool, &b->wire);
            return rc;
        }
        knp_bufpool_wr_release(&acc->pool, kn_rb_builder_buffer(&b->b));
        b->built = true;
        return 0;
    }
    /* A retry: same records, maybe a new epoch or sequence. */
    uint8_t *p = b->wire.buf;
    if (b->wire.len < KN_RB_HEADER_SIZE) {
        kn_errstr_set(errstr, errsize, "internal: built batch too short");
        return KN_ERR__FAIL;
    }
    kn_wr_put_u32_at(p + KNP_PRODUCER_ID_OFFSET, (uint32_t)((uint64_t)producer_id >> 32));
    kn_wr_put_u32_at(p + KNP_PRODUCER_ID_OFFSET + 4, (uint32_t)producer_id);
    kn_wr_put_u16_at(p + KNP_PRODUCER_EPOCH_OFFSET, (uint16_t)epoch);
    kn_wr_put_u32_at(p + KNP_BASE_SEQUENCE_OFFSET, (uint32_t)b->base_seq);
    kn_wr_put_u32_at(p + KN_RB_CRC_OFFSET,
                     kn_crc32c(0, p + KN_RB_ATTRIBUTES_OFFSET,
                               b->wire.len - KN_RB_ATTRIBUTES_OFFSET));
    return 0;
}

void knp_acc_complete(knp_acc *acc, knp_batch *b, int err, int64_t base_offset,
                      int64_t log_append_time, const char *errstr) {
    b->err = err;
    b->base_offset = err ? -1 : base_offset;
    b->log_append_time = log_append_time;
    if (err) {
        int64_t now = knm_now_ms();
        knm_record(acc->metrics, acc->m_error, b->count, now);
        if (b->pq && b->pq->topic)
            knm_record(acc->metrics, b->pq->topic->metrics.error, b->count, now);
    }
    if (err)
        snprintf(b->errstr, sizeof b->errstr, "%s",
                 errstr && *errstr ? errstr : kn_err_message(err));
    else
        b->errstr[0] = '\0';
    /* Record bytes are not needed for the reports: recycle them now. */
    knp_bufpool_wr_release(&acc->pool, &b->wire);
    knp_bufpool_wr_release(&acc->pool, kn_rb_builder_buffer(&b->b));
    acc->mem_used -= (int64_t)b->mem;
    b->mem = 0;
    if (acc->mem_waiters > 0)
        pthread_cond_broadcast(&acc->mem_cond);
    if (err)
        acc->records_failed += b->count;
    else
        acc->records_sent += b->count;
    b->next = NULL;
    if (!acc->conf.has_global_dr && !b->has_dr) {
        /* Nobody reads these reports: done now. */
        acc->outstanding -= b->count;
        knp_batch_free(b);
        pthread_cond_broadcast(&acc->done_cond);
        return;
    }
    bool was_empty = acc->done_head == NULL;
    if (acc->done_tail)
        acc->done_tail->next = b;
    else
        acc->done_head = b;
    acc->done_tail = b;
    if (was_empty && acc->on_done)
        acc->on_done(acc->hook_opaque);
    pthread_cond_broadcast(&acc->done_cond);
}

knp_batch *knp_acc_take_done(knp_acc *acc) {
    knp_batch *b = acc->done_head;
    acc->done_head = acc->done_tail = NULL;
    return b;
}

int knp_acc_split(knp_acc *acc, knp_batch *b, int64_t producer_id, int16_t epoch, char *errstr,
                  size_t errsize) {
    if (!b->built || b->count < 2) {
        kn_errstr_set(errstr, errsize, "batch cannot be split");
        return KN_ERR__INVALID_ARG;
    }
    kn_rb rb;
    int rc = kn_rb_parse(&rb, b->wire.buf, b->wire.len, 0, errstr, errsize);
    if (rc)
        return rc;
    kn_wr scratch;
    kn_wr_init(&scratch, 0, 0);
    knp_batch *half[2] = {NULL, NULL};
    kn_rb_kv *hv = NULL;
    int32_t hv_cap = 0;
    int32_t first = b->count / 2;
    rc = kn_rb_records_begin(&rb, &scratch, errstr, errsize);
    for (int k = 0; k < 2 && !rc; k++) {
        half[k] = batch_new(acc, b->pq, b->created_ms);
        int32_t n = k == 0 ? first : b->count - first;
        if (half[k])
            half[k]->meta = kn_malloc((size_t)n * sizeof *half[k]->meta);
        if (!half[k] || !half[k]->meta) {
            rc = KN_ERR__NOMEM;
            break;
        }
        half[k]->meta_cap = n;
    }
    kn_record rec;
    int32_t i = 0;
    while (!rc && (rc = kn_rb_next(&rb, &rec, errstr, errsize)) == 1) {
        rc = 0;
        if (i >= b->count) {
            rc = KN_ERR__BAD_BATCH;
            break;
        }
        knp_batch *h = half[i < first ? 0 : 1];
        if (rec.header_count > hv_cap) {
            kn_rb_kv *nh = kn_realloc(hv, (size_t)rec.header_count * sizeof *nh);
            if (!nh) {
                rc = KN_ERR__NOMEM;
                break;
            }
            hv = nh;
            hv_cap = rec.header_count;
        }
        kn_record_hdr_iter it;
        kn_record_headers(&rec, &it);
        int32_t nh = 0;
        while (nh < rec.header_count && kn_record_hdr_next(&it, &hv[nh]))
            nh++;
        rc = kn_rb_builder_append(&h->b, h->count, rec.timestamp, rec.key, rec.value, hv,
                                  (size_t)nh);
        if (rc)
            break;
        h->meta[h->count++] = b->meta[i++];
    }
    if (!rc && i != b->count)
        rc = KN_ERR__BAD_BATCH;
    for (int k = 0; k < 2 && !rc; k++) {
        knp_batch *h = half[k];
        h->full = true;
        h->has_dr = b->has_dr;
        h->max_rec_size = b->max_rec_size; /* an upper bound for each half */
        h->deadline_ms = b->deadline_ms;
        h->attempts = b->attempts;
        h->base_seq = b->base_seq < 0 ? -1
                      : k == 0    ? b->base_seq
                                  : (int32_t)(((uint32_t)b->base_seq + (uint32_t)first) & 0x7fffffff);
        rc = knp_batch_build(acc, h, producer_id, epoch, errstr, errsize);
    }
    kn_wr_free(&scratch);
    kn_free(hv);
    if (rc) {
        if (!errstr || !*errstr)
            kn_errstr_set(errstr, errsize, "cannot split the batch: %s", kn_err_message(rc));
        knp_batch_free(half[0]);
        knp_batch_free(half[1]);
        return rc;
    }
    half[0]->mem = b->mem / 2;
    half[1]->mem = b->mem - half[0]->mem;
    b->mem = 0;
    knp_acc_requeue(acc, half[0]);
    knp_acc_requeue(acc, half[1]);
    knp_batch_free(b);
    return 0;
}

/* ---- records parked until their topic's metadata arrives ---------------- */

int knp_acc_park(knp_acc *acc, knp_topic *t, int32_t partition, const knp_rec *rec, int64_t deadline_ms,
                 char *errstr, size_t errsize) {
    size_t bytes = (rec->key.len > 0 ? (size_t)rec->key.len : 0) + (rec->value.len > 0 ? (size_t)rec->value.len : 0);
    for (size_t i = 0; i < rec->header_count; i++)
        bytes += (size_t)rec->headers[i].key.len + (rec->headers[i].value.len > 0 ? (size_t)rec->headers[i].value.len : 0);
    size_t size = sizeof(knp_parked) + rec->header_count * sizeof(kn_rb_kv) + bytes;
    if ((int64_t)size > acc->conf.buffer_memory) {
        kn_errstr_set(errstr, errsize,
                      "the message is %zu bytes, larger than the total memory buffer (buffer.memory %lld)", size,
                      (long long)acc->conf.buffer_memory);
        return KN_ERR_MESSAGE_TOO_LARGE;
    }
    if (acc->mem_used + (int64_t)size > acc->conf.buffer_memory) {
        kn_errstr_set(errstr, errsize,
                      "buffer.memory (%lld bytes) is full (%lld in use) and max.block.ms is 0",
                      (long long)acc->conf.buffer_memory, (long long)acc->mem_used);
        return KN_ERR__QUEUE_FULL;
    }
    knp_parked *pk = kn_malloc(size);
    if (!pk) {
        kn_errstr_set(errstr, errsize, "out of memory");
        return KN_ERR__NOMEM;
    }
    memset(pk, 0, sizeof *pk);
    pk->t = t;
    pk->partition = partition;
    pk->deadline_ms = deadline_ms;
    pk->timestamp = rec->timestamp;
    pk->dr = rec->dr;
    pk->opaque = rec->opaque;
    pk->mem = (int64_t)size;
    pk->header_count = rec->header_count;
    pk->headers = (kn_rb_kv *)pk->data;
    char *at = pk->data + rec->header_count * sizeof(kn_rb_kv);
    for (size_t i = 0; i < rec->header_count; i++) {
        const kn_rb_kv *h = &rec->headers[i];
        memcpy(at, h->key.ptr, (size_t)h->key.len);
        pk->headers[i].key.ptr = at;
        pk->headers[i].key.len = h->key.len;
        at += h->key.len;
        pk->headers[i].value.len = h->value.len;
        pk->headers[i].value.ptr = h->value.len >= 0 ? (const uint8_t *)at : NULL;
        if (h->value.len > 0) {
            memcpy(at, h->value.ptr, (size_t)h->value.len);
            at += h->value.len;
        }
    }
    pk->key.len = rec->key.len;
    pk->key.ptr = rec->key.len >= 0 ? (const uint8_t *)at : NULL;
    if (rec->key.len > 0) {
        memcpy(at, rec->key.ptr, (size_t)rec->key.len);
        at += rec->key.len;
    }
    pk->value.len = rec->value.len;
    pk->value.ptr = rec->value.len >= 0 ? (const uint8_t *)at : NULL;
    if (rec->value.len > 0)
        memcpy(at, rec->value.ptr, (size_t)rec->value.len);
    acc->mem_used += pk->mem;
    acc->outstanding++;
    if (acc->parked_tail)
        acc->parked_tail->next = pk;
    else
        acc->parked_head = pk;
    acc->parked_tail = pk;
    return 0;
}

/* Fails one parked record (unlinked by the caller): its report comes as
 * a one-record batch of the topic's stand-in partition -1. */
static void parked_fail(knp_acc *acc, knp_parked *pk, int err, const char *msg) {
    knp_topic *t = pk->t;
    knp_batch *b = kn_calloc(1, sizeof *b);
    if (b)
        b->meta = kn_calloc(1, sizeof *b->meta);
    if (!t->parked_pq) {
        t->parked_pq = kn_calloc(1, sizeof *t->parked_pq);
        if (t->parked_pq) {
            t->parked_pq->topic = t;
            t->parked_pq->partition = -1;
            t->parked_pq->leader = -1;
        }
    }
    if (!b || !b->meta || !t->parked_pq) {
        /* No memory for a report: the record is lost without one (the
         * only way out; counted as failed). */
        if (b)
            kn_free(b->meta);
        kn_free(b);
        acc->mem_used -= pk->mem;
        acc->outstanding--;
        acc->records_failed++;
        kn_free(pk);
        pthread_cond_broadcast(&acc->done_cond);
        return;
    }
    b->pq = t->parked_pq;
    b->count = 1;
    b->meta_cap = 1;
    b->meta[0].dr = pk->dr;
    b->meta[0].opaque = pk->opaque;
    b->meta[0].timestamp = pk->timestamp;
    b->has_dr = pk->dr != NULL;
    b->mem = (size_t)pk->mem; /* released by complete */
    b->base_seq = -1;
    kn_free(pk);
    knp_acc_complete(acc, b, err, -1, -1, msg);
}

bool knp_acc_place_parked(knp_acc *acc, int64_t now_ms, int64_t *next_ms) {
    knp_parked *keep_head = NULL, *keep_tail = NULL;
    knp_parked *pk = acc->parked_head;
    acc->parked_head = acc->parked_tail = NULL;
    while (pk) {
        knp_parked *next = pk->next;
        pk->next = NULL;
        if (pk->t->partition_count > 0) {
            knp_rec r;
            r.key = pk->key;
            r.value = pk->value;
            r.headers = pk->headers;
            r.header_count = pk->header_count;
            r.timestamp = pk->timestamp;
            r.dr = pk->dr;
            r.opaque = pk->opaque;
            /* The append charges memory and counts the record itself. */
            acc->mem_used -= pk->mem;
            acc->outstanding--;
            char why[160];
            int32_t chosen;
            int rc = knp_acc_append(acc, pk->t, pk->partition, &r, now_ms, now_ms, &chosen, why, sizeof why);
            if (!rc) {
                kn_free(pk);
            } else {
                acc->mem_used += pk->mem;
                acc->outstanding++;
                parked_fail(acc, pk, rc, why);
            }
        } else if (now_ms >= pk->deadline_ms) {
            char why[200];
            snprintf(why, sizeof why,
                     "topic %s not present in metadata within delivery.timeout.ms (%lld ms)%s%s", pk->t->name,
                     (long long)acc->conf.delivery_timeout_ms, pk->t->metadata_error ? ": " : "",
                     pk->t->metadata_error ? kn_err_name((int)pk->t->metadata_error) : "");
            parked_fail(acc, pk, KN_ERR__MSG_TIMED_OUT, why);
        } else {
            if (pk->deadline_ms < *next_ms)
                *next_ms = pk->deadline_ms;
            if (keep_tail)
                keep_tail->next = pk;
            else
                keep_head = pk;
            keep_tail = pk;
        }
        pk = next;
    }
    /* Records parked while we worked (none: the lock is held) go after. */
    acc->parked_head = keep_head;
    acc->parked_tail = keep_tail;
    return keep_head != NULL;
}

void knp_acc_fail_parked(knp_acc *acc, int err, const char *msg) {
    knp_parked *pk = acc->parked_head;
    acc->parked_head = acc->parked_tail = NULL;
    while (pk) {
        knp_parked *next = pk->next;
        parked_fail(acc, pk, err, msg);
        pk = next;
    }
}
