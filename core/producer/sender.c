/*
 * sender.c: the producer's network-thread half (knp_sender). A knw
 * ticker that, each round (the state: sender_state.h; producer ids:
 * idempotence.c; partitions added to a transaction: txn_add.c; the
 * adaptive partitioner's input: adaptive.c):
 *  - applies new metadata to the accumulator's topics (partition
 *    counts, leaders, available partitions, adaptive load stats);
 *  - expires queued batches past delivery.timeout.ms;
 *  - gets a producer id (InitProducerId) when idempotent, and bumps the
 *    epoch locally after a sequence gap (a batch with a sequence failed
 *    or an unexpected OUT_OF_ORDER_SEQUENCE_NUMBER); each partition
 *    moves to the new epoch once its own in-flight batches answered;
 *  - for a transactional producer of transaction version 1, adds
 *    partitions to the transaction (FindCoordinator, AddPartitionsToTxn)
 *    before their first batch; under version 2 (KIP-890 part 2) Produce
 *    v12 lets the partition leader add them;
 *  - drains ready batches into one Produce request per leader broker
 *    (one batch per partition per request, split at max.request.size,
 *    at most max.in.flight.requests.per.connection per broker), and
 *    handles the responses: success, DUPLICATE_SEQUENCE_NUMBER (success),
 *    retriable errors with exponential backoff until delivery.timeout.ms,
 *    leader errors and dropped connections with a metadata refresh first.
 *
 * Ordering under idempotence: sequences are assigned when a batch is
 * first drained; a partition keeps all its in-flight batches on one
 * broker connection (requests on a connection are ordered) and, when a
 * batch comes back for a retry, nothing is sent for that partition until
 * every in-flight batch has answered; the retries then go out again in
 * sequence order from the oldest unacknowledged one.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "error.h"
#include "kn_alloc.h"
#include "log.h"
#include "producer/adaptive.h"
#include "producer/idempotence.h"
#include "producer/producer_metrics.h"
#include "producer/sender_state.h"
#include "producer/txn_add.h"
#include "proto/generated/kp_apis.h"
#include "proto/generated/kp_produce.h"

/* Produce v13 names topics by id only; v12 carries names, which is all
 * the response matching below needs. */
#define KNP_PRODUCE_MAX_VERSION 12
/* A transaction of version 1 (KIP-890 part 1) stays at Produce v11:
 * v12 tells the partition leader that the client relies on it to add
 * the partition to the transaction and that the epoch is bumped at
 * every transaction end (EndTxn v5), which is version 2's protocol. */
#define KNP_PRODUCE_TXN_V1_MAX_VERSION 11

typedef struct knp_req {
    knp_sender *s;
    int32_t node;
    kp_ProduceRequest req;
    kp_ProduceRequest_TopicProduceData *tds;
    kp_ProduceRequest_PartitionProduceData *pds;
    int32_t nbatches;
    knp_batch *batches[];
} knp_req;

/* ---- metadata ------------------------------------------------------- */

/* acc.lock held. */
static void apply_metadata(knp_sender *s, const knw_metadata *md, int64_t now_ms) {
    knp_acc *acc = s->acc;
    for (uint32_t bi = 0; bi < acc->nbuckets; bi++) {
        for (knp_topic *t = acc->buckets[bi]; t; t = t->hnext) {
            const knw_topic *kt = knw_metadata_topic(md, t->name);
            if (!kt)
                continue;
            t->metadata_error = kt->error;
            if (kt->error || kt->partition_count <= 0)
                continue;
            if (!knp_sender_scratch(s, kt->partition_count))
                continue;
            int32_t navail = 0;
            for (int32_t i = 0; i < kt->partition_count; i++)
                if (kt->partitions[i].leader >= 0)
                    s->scratch[navail++] = kt->partitions[i].partition;
            if (knp_acc_topic_update(acc, t, kt->partition_count, s->scratch, navail))
                continue;
            for (int32_t i = 0; i < kt->partition_count && i < t->partition_count; i++) {
                knp_partq *pq = t->parts[i];
                if (pq)
                    pq->leader = kt->partitions[i].leader;
            }
        }
    }
    (void)now_ms;
}

/* ---- completion and errors ---------------------------------------------- */

static bool is_transport_err(int err) {
    return err == KN_ERR__TRANSPORT || err == KN_ERR__TIMED_OUT ||
           err == KN_ERR__ALL_BROKERS_DOWN || err == KN_ERR__RESOLVE;
}

/* acc.lock held. The outcome of one batch of a Produce request. */
static void batch_result(knp_sender *s, knp_batch *b, int err, int64_t base_offset,
                         int64_t log_append_time, const char *msg, int64_t now_ms) {
    knp_acc *acc = s->acc;
    knp_partq *pq = b->pq;
    pq->inflight--;
    if (err == 0 || (err == KN_ERR_DUPLICATE_SEQUENCE_NUMBER && s->conf.idempotent)) {
        if (b->base_seq >= 0) {
            /* Only forward: a late duplicate of an older batch must not
             * move it back. Sequences wrap at 2^31. */
            int32_t end = (int32_t)(((uint32_t)b->base_seq + (uint32_t)b->count) & 0x7fffffff);
            int32_t ahead = (int32_t)(((uint32_t)end - (uint32_t)pq->acked_next) & 0x7fffffff);
            if (ahead > 0 && ahead < 0x40000000)
                pq->acked_next = end;
            pq->acked_any = true;
        }
        acc->batches_sent++;
        acc->bytes_sent += (int64_t)b->wire.len;
        knp_acc_complete(acc, b, 0, base_offset, log_append_time, NULL);
        return;
    }
    char buf[300];
    kn_errstr_set(buf, sizeof buf, "%s-%d: %s%s%s", pq->topic->name, (int)pq->partition,
             kn_err_name(err), msg && *msg ? ": " : "", msg ? msg : "");
    if ((err == KN_ERR_MESSAGE_TOO_LARGE || err == KN_ERR_RECORD_LIST_TOO_LARGE) &&
        b->count > 1 && !acc->closing) {
        /* Java splits and retries; a single record too large fails alone. */
        char serr[200] = "";
        if (knp_acc_split(acc, b, s->producer_id, s->epoch, serr, sizeof serr) == 0) {
            knp_metrics_split(acc->pm, now_ms);
            return;
        }
    }
    if (knp_is_fatal_err(err)) {
        /* PRODUCER_FENCED (another producer took our transactional.id),
         * authorization: the producer cannot go on. */
        knp_fatal_locked(s, err, buf);
        knp_acc_complete(acc, b, err, -1, -1, buf);
        knp_fail_queued_locked(s, err, acc->fatal_errstr);
        return;
    }
    /* INVALID_PRODUCER_EPOCH from a partition leader: the transaction's
     * epoch moved on without us (the coordinator aborted it after
     * transaction.timeout.ms and bumped the epoch, or another producer
     * fenced us). Java 4.x makes it abortable, under both transaction
     * versions (InvalidProducerEpochException, not ProducerFenced): not
     * retried, the transaction fails below, abort_transaction ends it and
     * bumps the epoch (version 1: InitProducerId, KIP-360; version 2: the
     * EndTxn answer). Fenced for real, the abort's EndTxn gets
     * PRODUCER_FENCED, which is fatal there. An idempotent producer
     * without transactions retries it under a new epoch (seq_err). */
    bool seq_err = s->conf.idempotent && (err == KN_ERR_OUT_OF_ORDER_SEQUENCE_NUMBER ||
                                          err == KN_ERR_UNKNOWN_PRODUCER_ID ||
                                          (err == KN_ERR_INVALID_PRODUCER_EPOCH && !s->conf.txn));
    bool transport = is_transport_err(err);
    bool retriable = kn_err_is_retriable(err) || transport || seq_err;
    if (transport || (kn_err_flags(err) & KN_EF_METADATA)) {
        /* The leader we used is suspect: route only after fresh metadata. */
        pq->stale_before_ms = now_ms;
        knw_metadata_request_refresh(s->wire, false, "producer: leader error or connection lost");
    }
    if (seq_err && pq->inflight == 0 && !knp_idem_lower_seq_queued(pq, b->base_seq)) {
        /* Refused at the oldest unacknowledged batch of the partition
         * (nothing earlier in flight or waiting): this epoch cannot make
         * progress (e.g. the broker took later sequences after an earlier
         * batch failed), so a new epoch restarts sequences at 0. */
        knp_idem_request_bump(s, pq);
    }
    if (retriable && !acc->closing && b->attempts <= s->conf.retries && now_ms < b->deadline_ms) {
        b->retry_at_ms = now_ms + knp_backoff_ms(s, b->attempts);
        kn_log(knw_client_logger(s->wire), KN_LOG_WARN,
               "retrying a batch of %d record(s) (sequence %d, attempt %d): %s",
               (int)b->count, (int)b->base_seq, (int)b->attempts, buf);
        knp_metrics_retry(acc->pm, b, now_ms);
        knp_acc_requeue(acc, b);
        return;
    }
    if (retriable && now_ms >= b->deadline_ms) {
        char tmp[300];
        kn_errstr_set(tmp, sizeof tmp, "expiring %d record(s) for %s-%d: %lld ms has passed since "
                 "batch creation (last error %s)", (int)b->count, pq->topic->name,
                 (int)pq->partition, (long long)(now_ms - b->created_ms), buf);
        memcpy(buf, tmp, sizeof buf);
        buf[sizeof buf - 1] = '\0';
        err = KN_ERR__MSG_TIMED_OUT;
    }
    if (s->conf.idempotent && b->base_seq >= 0)
        knp_idem_request_bump(s, pq); /* a sequence gap: later batches need a new epoch */
    kn_log(knw_client_logger(s->wire), KN_LOG_WARN, "%d record(s) failed: %s", (int)b->count, buf);
    if (s->conf.txn && !s->conf.txn->abortable_err) {
        /* A lost record makes the transaction abortable (Java). */
        s->conf.txn->abortable_err = err;
        kn_errstr_set(s->conf.txn->abortable_errstr, sizeof s->conf.txn->abortable_errstr, "%s", buf);
    }
    knp_acc_complete(acc, b, err, -1, -1, buf);
}

static void on_produce(knw_client *c, knw_resp *resp, void *opaque) {
    knp_req *r = opaque;
    knp_sender *s = r->s;
    knp_acc *acc = s->acc;
    int64_t now_ms = knw_now_ms();
    pthread_mutex_lock(&acc->lock);
    s->inflight_reqs--;
    knp_node *nd = knp_sender_node(s, r->node);
    if (nd)
        nd->inflight--;
    s->requests++;
    if (resp->err == 0 && resp->body)
        knp_metrics_response(acc->pm, resp->latency_us,
                             ((const kp_ProduceResponse *)resp->body)->throttle_time_ms, now_ms);
    if (resp->err == 0) {
        s->lat_sum_us += resp->latency_us;
        s->lat_n++;
        if (resp->latency_us > s->lat_max_us)
            s->lat_max_us = resp->latency_us;
    }
    if (resp->err) {
        for (int32_t i = 0; i < r->nbatches; i++)
            batch_result(s, r->batches[i], resp->err, -1, -1, resp->errstr, now_ms);
    } else if (!resp->body) {
        /* acks=0: no response by design; offsets unknown. */
        for (int32_t i = 0; i < r->nbatches; i++)
            batch_result(s, r->batches[i], 0, -1, -1, NULL, now_ms);
    } else {
        const kp_ProduceResponse *pr = resp->body;
        for (int32_t i = 0; i < r->nbatches; i++) {
            knp_batch *b = r->batches[i];
            const kp_ProduceResponse_PartitionProduceResponse *pp = NULL;
            for (int32_t ti = 0; ti < pr->responses.count && !pp; ti++) {
                const kp_ProduceResponse_TopicProduceResponse *tr = &pr->responses.items[ti];
                if (!kn_str_eq(tr->name, b->pq->topic->name))
                    continue;
                for (int32_t pi = 0; pi < tr->partition_responses.count; pi++)
                    if (tr->partition_responses.items[pi].index == b->pq->partition) {
                        pp = &tr->partition_responses.items[pi];
                        break;
                    }
            }
            if (!pp) {
                batch_result(s, b, KN_ERR__PROTOCOL, -1, -1,
                             "the Produce response omitted this partition", now_ms);
                continue;
            }
            char msg[200] = "";
            if (pp->error_message.len > 0)
                kn_errstr_set(msg, sizeof msg, "%.*s", (int)pp->error_message.len,
                         pp->error_message.ptr);
            batch_result(s, b, pp->error_code, pp->base_offset, pp->log_append_time_ms, msg,
                         now_ms);
        }
    }
    pthread_mutex_unlock(&acc->lock);
    kn_free(r->tds);
    kn_free(r->pds);
    kn_free(r);
    knw_resp_free(resp);
    /* A freed in-flight slot or a retry may make batches sendable: the
     * ticker only runs when due or woken. */
    knw_wakeup(c);
}

/* ---- draining --------------------------------------------------------- */

static knp_draft *draft_for(knp_sender *s, int32_t node) {
    for (int32_t i = 0; i < s->ndrafts; i++)
        if (s->drafts[i].node == node)
            return &s->drafts[i];
    if (s->ndrafts == s->drafts_cap) {
        int32_t cap = s->drafts_cap ? s->drafts_cap * 2 : 8;
        knp_draft *d = kn_realloc(s->drafts, (size_t)cap * sizeof *d);
        if (!d)
            return NULL;
        s->drafts = d;
        s->drafts_cap = cap;
    }
    knp_draft *d = &s->drafts[s->ndrafts++];
    memset(d, 0, sizeof *d);
    d->node = node;
    return d;
}

/* acc.lock held. Fills s->drafts with batches to send now; returns the
 * earliest time something else becomes sendable in *next_ms, and whether
 * a leader is missing. */
static void drain(knp_sender *s, int64_t now_ms, int64_t *next_ms, bool *need_md) {
    knp_acc *acc = s->acc;
    int64_t md_at = s->md ? s->md->fetched_at_ms : -1;
    int32_t max_req = acc->conf.max_request_size;
    s->gen++;
    s->ndrafts = 0;
    int32_t n = acc->npqs;
    if (n == 0)
        return;
    int32_t start = s->drain_start % n;
    s->drain_start = start + 1;
    for (int32_t k = 0; k < n; k++) {
        knp_partq *pq = acc->pqs[(start + k) % n];
        knp_batch *b = pq->head;
        if (!b)
            continue;
        if (s->conf.txn && !s->conf.txn->v2 && !pq->txn_added) {
            /* Version 1: AddPartitionsToTxn first (sent by the tick).
             * Version 2: the leader adds the partition itself. */
            if (s->conf.txn->open && !pq->txn_adding)
                s->want_add = true;
            continue;
        }
        if (pq->leader < 0 && s->md && md_at >= pq->stale_before_ms) {
            /* A queue created after this snapshot was applied. */
            const knw_topic *kt = knw_metadata_topic(s->md, pq->topic->name);
            if (kt && pq->partition < kt->partition_count)
                pq->leader = kt->partitions[pq->partition].leader;
        }
        if (pq->leader < 0 || md_at < pq->stale_before_ms) {
            *need_md = true;
            continue;
        }
        if (!knp_acc_head_ready(acc, pq, now_ms, next_ms))
            continue;
        knp_node *nd = knp_sender_node(s, pq->leader);
        if (!nd)
            continue;
        nd->ready_ms = now_ms;
        if (b->retry_at_ms > now_ms) {
            if (b->retry_at_ms < *next_ms)
                *next_ms = b->retry_at_ms;
            continue;
        }
        if (s->conf.idempotent) {
            if (s->pid_state != PID_READY || s->need_bump)
                continue;
            if (pq->pid_gen != s->pid_gen) {
                /* A new epoch (or id) since this partition's sequences
                 * began: its batches still in flight finish under the
                 * old one first, then it restarts at sequence 0 and its
                 * waiting retries get new sequences (Java's
                 * hasStaleProducerIdAndEpoch). Other partitions are not
                 * held up by this one. */
                if (pq->inflight > 0)
                    continue;
                pq->pid_gen = s->pid_gen;
                pq->next_seq = 0;
                pq->acked_next = 0;
                pq->acked_any = false;
                for (knp_batch *q = pq->head; q; q = q->next)
                    q->base_seq = -1;
            }
            if (b->built && pq->inflight > 0)
                continue; /* a retry waits for every earlier answer */
            if (pq->inflight > 0 && pq->inflight_node != pq->leader)
                continue; /* keep one connection per partition in flight */
            if (pq->inflight > 0 && !pq->acked_any)
                continue; /* a broker takes any first sequence from a new
                           * producer: pipeline only after one is acked */
        }
        if (pq->inflight >= s->conf.max_in_flight)
            continue;
        knp_draft *d = draft_for(s, pq->leader);
        if (!d)
            continue;
        d->produce_max = s->conf.txn && !s->conf.txn->v2 ? KNP_PRODUCE_TXN_V1_MAX_VERSION
                                                          : KNP_PRODUCE_MAX_VERSION;
        if (d->count == 0 && nd->inflight >= s->conf.max_in_flight)
            continue; /* the broker has its fill of our requests */
        int64_t est = b->built ? (int64_t)b->wire.len : (int64_t)kn_rb_builder_size(&b->b);
        if (d->count > 0 && d->size + est > max_req)
            continue; /* next request */
        if (pq->drain_gen == s->gen)
            continue;
        pq->drain_gen = s->gen;
        knp_acc_pop(acc, pq);
        if (s->conf.txn && s->conf.txn->v2)
            s->conf.txn->started = true; /* EndTxn is due from now on */
        if (s->conf.idempotent && b->base_seq < 0) {
            b->base_seq = pq->next_seq;
            pq->next_seq = (int32_t)(((uint32_t)pq->next_seq + (uint32_t)b->count) & 0x7fffffff);
        }
        b->attempts++;
        pq->inflight++;
        pq->inflight_node = pq->leader;
        nd->drain_ms = now_ms;
        if (d->tail)
            d->tail->next = b;
        else
            d->head = b;
        d->tail = b;
        d->count++;
        d->size += est;
    }
}

static int cmp_batch_topic(const void *a, const void *b) {
    const knp_batch *x = *(knp_batch *const *)a, *y = *(knp_batch *const *)b;
    if (x->pq->topic != y->pq->topic)
        return x->pq->topic < y->pq->topic ? -1 : 1;
    return x->pq->partition - y->pq->partition;
}

/* Outside the lock: builds and sends one draft. The batches belong to
 * the sender until then. */
static void send_draft(knp_sender *s, knp_draft *d, int64_t now_ms) {
    knp_acc *acc = s->acc;
    size_t sz = sizeof(knp_req) + (size_t)d->count * sizeof(knp_batch *);
    knp_req *r = kn_calloc(1, sz);
    kp_ProduceRequest_TopicProduceData *tds = kn_calloc((size_t)d->count, sizeof *tds);
    kp_ProduceRequest_PartitionProduceData *pds = kn_calloc((size_t)d->count, sizeof *pds);
    int err = 0;
    char errstr[256] = "";
    if (!r || !tds || !pds) {
        err = KN_ERR__NOMEM;
        kn_errstr_set(errstr, sizeof errstr, "out of memory building a Produce request");
    }
    int32_t nb = 0;
    knp_batch *failed = NULL;
    for (knp_batch *b = d->head, *next; b; b = next) {
        next = b->next;
        b->next = NULL;
        size_t raw = b->built ? 0 : kn_rb_builder_size(&b->b);
        int rc = err ? err
                     : knp_batch_build(acc, b, s->conf.idempotent ? s->producer_id : -1,
                                       s->conf.idempotent ? s->epoch : -1, errstr,
                                       sizeof errstr);
        if (rc) {
            b->err = rc;
            b->next = failed;
            failed = b;
            continue;
        }
        r->batches[nb++] = b;
        knp_metrics_batch_sent(acc->pm, b, raw, now_ms);
    }
    if (nb > 0) {
        qsort(r->batches, (size_t)nb, sizeof r->batches[0], cmp_batch_topic);
        r->s = s;
        r->node = d->node;
        r->nbatches = nb;
        r->tds = tds;
        r->pds = pds;
        kp_ProduceRequest_init(&r->req);
        r->req.transactional_id.ptr = NULL;
        r->req.transactional_id.len = -1;
        if (s->conf.txn)
            r->req.transactional_id = kn_str_c(s->conf.txn->id);
        r->req.acks = s->conf.acks;
        r->req.timeout_ms = s->conf.request_timeout_ms;
        int32_t nt = 0;
        for (int32_t i = 0; i < nb; i++) {
            knp_batch *b = r->batches[i];
            if (nt == 0 || tds[nt - 1].name.ptr != b->pq->topic->name) {
                tds[nt].name = kn_str_c(b->pq->topic->name);
                tds[nt].partition_data.items = &pds[i];
                tds[nt].partition_data.count = 0;
                nt++;
            }
            pds[i].index = b->pq->partition;
            pds[i].records.ptr = b->wire.buf;
            pds[i].records.len = (int32_t)b->wire.len;
            tds[nt - 1].partition_data.count++;
        }
        r->req.topic_data.items = tds;
        r->req.topic_data.count = nt;
        int64_t records = 0;
        for (int32_t i = 0; i < nb; i++)
            records += r->batches[i]->count;
        knp_metrics_request(acc->pm, records, now_ms);
    }
    pthread_mutex_lock(&acc->lock);
    for (knp_batch *b = failed, *next; b; b = next) {
        next = b->next;
        b->pq->inflight--;
        if (s->conf.idempotent && b->base_seq >= 0)
            knp_idem_request_bump(s, b->pq);
        knp_acc_complete(acc, b, b->err, -1, -1, errstr);
    }
    if (nb > 0) {
        s->inflight_reqs++;
        knp_node *nd = knp_sender_node(s, d->node);
        if (nd)
            nd->inflight++;
    }
    pthread_mutex_unlock(&acc->lock);
    if (nb == 0) {
        kn_free(r);
        kn_free(tds);
        kn_free(pds);
        return;
    }
    /* tds/pds live with the request: freed with it (see on_produce). */
    /* on_produce runs once, failures to queue included. */
    knw_send(s->wire, d->node, KP_API_PRODUCE, -1, d->produce_max, &r->req, -1, on_produce, r);
}

/* ---- the ticker ------------------------------------------------------ */

/* acc.lock held. Fails queued batches past delivery.timeout.ms (in-flight
 * ones are bounded by the request timeout and judged on their answer). */
static void expire(knp_sender *s, int64_t now_ms, int64_t *next_ms) {
    knp_acc *acc = s->acc;
    for (int32_t i = 0; i < acc->npqs; i++) {
        knp_partq *pq = acc->pqs[i];
        knp_batch *b;
        while ((b = pq->head) != NULL && b->deadline_ms <= now_ms) {
            knp_acc_pop(acc, pq);
            char msg[200];
            kn_errstr_set(msg, sizeof msg,
                     "expiring %d record(s) for %s-%d: %lld ms has passed since batch creation",
                     (int)b->count, pq->topic->name, (int)pq->partition,
                     (long long)(now_ms - b->created_ms));
            if (s->conf.idempotent && b->base_seq >= 0)
                knp_idem_request_bump(s, pq);
            knp_node *nd = pq->leader >= 0 ? knp_sender_node(s, pq->leader) : NULL;
            kn_log(knw_client_logger(s->wire), KN_LOG_WARN,
                   "%s (queue depth %d, in flight %d on node %d, leader %d, "
                   "stale since %lld, metadata at %lld, node requests %d, requests %d, "
                   "pid state %d, epoch bump %d, attempts %d, sequence %d)",
                   msg, (int)pq->depth, (int)pq->inflight, (int)pq->inflight_node,
                   (int)pq->leader, (long long)pq->stale_before_ms,
                   (long long)(s->md ? s->md->fetched_at_ms : -1), nd ? (int)nd->inflight : -1,
                   (int)s->inflight_reqs, s->pid_state, (int)s->need_bump, (int)b->attempts,
                   (int)b->base_seq);
            knp_acc_complete(acc, b, KN_ERR__MSG_TIMED_OUT, -1, -1, msg);
        }
        if (b && b->deadline_ms < *next_ms)
            *next_ms = b->deadline_ms;
    }
}

static int sender_tick(knw_client *c, int64_t now_ms, void *opaque) {
    knp_sender *s = opaque;
    knp_acc *acc = s->acc;
    knw_metadata *md = knw_metadata_get(c), *old = NULL;
    int64_t next = now_ms + 1000;
    bool need_md = false, send_pid;
    char fmsg[512];
    int ferr = knw_client_fatal(c, fmsg, sizeof fmsg);
    pthread_mutex_lock(&acc->lock);
    acc->wake_pending = false;
    if (ferr && !acc->fatal_err) {
        /* Authentication failed: no record can be delivered any more. */
        knp_fatal_locked(s, ferr, fmsg);
        knp_fail_queued_locked(s, ferr, acc->fatal_errstr);
    }
    if (md && md != s->md) {
        old = s->md;
        s->md = md;
        md = NULL;
        apply_metadata(s, s->md, now_ms);
    }
    /* Records sent before their topic's metadata (max.block.ms = 0). */
    if (acc->parked_head && knp_acc_place_parked(acc, now_ms, &next))
        need_md = true;
    expire(s, now_ms, &next);
    send_pid = knp_idem_tick(s, now_ms, &next);
    s->want_add = false;
    drain(s, now_ms, &next, &need_md);
    knp_add_req *add_req = NULL;
    if (s->conf.txn)
        knp_txn_add_tick(s, now_ms, &next, &add_req);
    if (s->conf.adaptive)
        knp_adaptive_update(s, now_ms);
    pthread_mutex_unlock(&acc->lock);
    if (add_req)
        knp_txn_add_send(s, add_req);
    if (md)
        knw_metadata_release(md);
    if (old)
        knw_metadata_release(old);
    if (send_pid)
        knp_idem_send(s);
    int32_t sent = s->ndrafts;
    for (int32_t i = 0; i < s->ndrafts; i++)
        if (s->drafts[i].count > 0)
            send_draft(s, &s->drafts[i], now_ms);
    s->ndrafts = 0;
    if (need_md)
        knw_metadata_request_refresh(c, false, "producer: partition leader unknown");
    if (sent > 0)
        return 0; /* more may be sendable right away */
    int64_t wait = next - now_ms;
    if (wait < 0)
        wait = 0;
    return wait > 1000 ? 1000 : (int)wait;
}

knp_sender *knp_sender_new(knw_client *wire, knp_acc *acc, const knp_sender_conf *conf) {
    knp_sender *s = kn_calloc(1, sizeof *s);
    if (!s)
        return NULL;
    s->wire = wire;
    s->acc = acc;
    s->conf = *conf;
    if (s->conf.max_in_flight < 1)
        s->conf.max_in_flight = 1;
    s->producer_id = -1;
    s->epoch = -1;
    s->pid_state = PID_NONE;
    s->ticker = knw_ticker_add(wire, sender_tick, s);
    if (s->ticker < 0) {
        kn_free(s);
        return NULL;
    }
    return s;
}

void knp_sender_stop(knp_sender *s) {
    if (s && s->ticker >= 0) {
        knw_ticker_remove(s->wire, s->ticker);
        s->ticker = -1;
    }
}

void knp_sender_destroy(knp_sender *s) {
    if (!s)
        return;
    if (s->md)
        knw_metadata_release(s->md);
    kn_free(s->nodes);
    kn_free(s->scratch);
    kn_free(s->scratch2);
    kn_free(s->drafts);
    kn_free(s);
}

int knp_sender_fatal(knp_sender *s, char *errstr, size_t errsize) {
    pthread_mutex_lock(&s->acc->lock);
    int err = s->acc->fatal_err;
    if (err)
        kn_errstr_set(errstr, errsize, "%s", s->acc->fatal_errstr);
    pthread_mutex_unlock(&s->acc->lock);
    return err;
}

void knp_sender_latency(knp_sender *s, int64_t *avg_us, int64_t *max_us, int64_t *requests) {
    pthread_mutex_lock(&s->acc->lock);
    *avg_us = s->lat_n ? s->lat_sum_us / s->lat_n : 0;
    *max_us = s->lat_max_us;
    *requests = s->requests;
    pthread_mutex_unlock(&s->acc->lock);
}

void knp_sender_set_fatal(knp_sender *s, int err, const char *msg) {
    pthread_mutex_lock(&s->acc->lock);
    knp_fatal_locked(s, err, msg);
    knp_fail_queued_locked(s, err, s->acc->fatal_errstr);
    pthread_mutex_unlock(&s->acc->lock);
}

void knp_sender_fail_queued(knp_sender *s, int err, const char *msg) {
    pthread_mutex_lock(&s->acc->lock);
    knp_fail_queued_locked(s, err, msg);
    pthread_mutex_unlock(&s->acc->lock);
}

