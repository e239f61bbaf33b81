/*
 * sender.c: the producer's network-thread half (knp_sender). A knw
 * ticker that, each round:
 *  - applies new metadata to the accumulator's topics (partition
 *    counts, leaders, available partitions, adaptive load stats);
 *  - expires queued batches past delivery.timeout.ms;
 *  - gets a producer id (InitProducerId) when idempotent, and bumps the
 *    epoch locally after a sequence gap (a batch with a sequence failed
 *    or an unexpected OUT_OF_ORDER_SEQUENCE_NUMBER); each partition
 *    moves to the new epoch once its own in-flight batches answered;
 *  - for a transactional producer, adds partitions to the transaction
 *    (FindCoordinator, AddPartitionsToTxn) before their first batch;
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
#include "wire/coordinator.h"
#include "kn_alloc.h"
#include "log.h"
#include "producer/producer_int.h"
#include "proto/generated/kp_add_partitions_to_txn.h"
#include "proto/generated/kp_apis.h"
#include "proto/generated/kp_init_producer_id.h"
#include "proto/generated/kp_produce.h"

/* Produce v13 names topics by id only; v12 carries names, which is all
 * the response matching below needs. */
#define KNP_PRODUCE_MAX_VERSION 12
/* A transactional producer speaks transaction version 1 (KIP-890 part
 * 1): partitions are added with AddPartitionsToTxn v3 (v4+ is
 * broker-to-broker), and Produce stays at v11, since v12 tells a TV2
 * broker that the client adds partitions implicitly and expects an
 * epoch bump per transaction (EndTxn v5), which this client does not do. */
#define KNP_PRODUCE_TXN_MAX_VERSION      11
#define KNP_ADD_PARTITIONS_MAX_VERSION   3

enum { PID_NONE, PID_REQUESTING, PID_READY };

typedef struct knp_node {
    int32_t id;
    int32_t inflight;   /* Produce requests not answered */
    int64_t ready_ms;   /* last time it had batches to send */
    int64_t drain_ms;   /* last time batches were drained to it */
} knp_node;

/* One node's request being assembled in a tick. */
typedef struct knp_draft {
    int32_t node;
    knp_batch *head, *tail;
    int32_t count;
    int64_t size;
} knp_draft;

typedef struct knp_req {
    knp_sender *s;
    int32_t node;
    kp_ProduceRequest req;
    kp_ProduceRequest_TopicProduceData *tds;
    kp_ProduceRequest_PartitionProduceData *pds;
    int32_t nbatches;
    knp_batch *batches[];
} knp_req;

struct knp_sender {
    knw_client *wire;
    knp_acc *acc;
    knp_sender_conf conf;
    int ticker;
    /* network thread only */
    int pid_state;
    int64_t producer_id;
    int16_t epoch;
    int64_t pid_retry_at_ms;
    int32_t pid_attempts;
    bool need_bump;
    uint32_t pid_gen; /* bumped with every new producer id or epoch */
    kp_InitProducerIdRequest pid_req;
    int64_t md_seen_ms;
    knw_metadata *md;
    knp_node *nodes;
    int32_t nnodes, nodes_cap;
    int32_t inflight_reqs;
    uint32_t gen;
    int32_t drain_start;
    int32_t *scratch; /* avail / queue sizes */
    int32_t *scratch2;
    int32_t scratch_cap;
    knp_draft *drafts;
    int32_t ndrafts, drafts_cap;
    bool want_add; /* transactions: a queued partition is not added yet */
    /* stats (acc.lock) */
    int64_t lat_sum_us, lat_max_us, lat_n, requests;
};

static knp_node *sender_node(knp_sender *s, int32_t id) {
    for (int32_t i = 0; i < s->nnodes; i++)
        if (s->nodes[i].id == id)
            return &s->nodes[i];
    if (s->nnodes == s->nodes_cap) {
        int32_t cap = s->nodes_cap ? s->nodes_cap * 2 : 8;
        knp_node *n = kn_realloc(s->nodes, (size_t)cap * sizeof *n);
        if (!n)
            return NULL;
        s->nodes = n;
        s->nodes_cap = cap;
    }
    knp_node *n = &s->nodes[s->nnodes++];
    memset(n, 0, sizeof *n);
    n->id = id;
    return n;
}

static bool scratch_reserve(knp_sender *s, int32_t n) {
    if (n <= s->scratch_cap)
        return true;
    int32_t *a = kn_realloc(s->scratch, (size_t)n * sizeof *a);
    if (a)
        s->scratch = a;
    int32_t *b = kn_realloc(s->scratch2, (size_t)n * sizeof *b);
    if (b)
        s->scratch2 = b;
    if (!a || !b)
        return false;
    s->scratch_cap = n;
    return true;
}

static int64_t backoff_ms(const knp_sender *s, int32_t attempts) {
    int64_t b = s->conf.retry_backoff_ms;
    for (int32_t i = 1; i < attempts && b < s->conf.retry_backoff_max_ms; i++)
        b *= 2;
    if (b > s->conf.retry_backoff_max_ms)
        b = s->conf.retry_backoff_max_ms;
    /* +-20% jitter, as Java's ExponentialBackoff. */
    int64_t j = b / 5;
    if (j > 0)
        b += (rand() % (2 * j + 1)) - j;
    return b;
}

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
            if (!scratch_reserve(s, kt->partition_count))
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

/* acc.lock held. Java's adaptive partitioning input: queue depth per
 * partition with a leader whose broker keeps up. */
static void update_load_stats(knp_sender *s, int64_t now_ms) {
    knp_acc *acc = s->acc;
    for (uint32_t bi = 0; bi < acc->nbuckets; bi++) {
        for (knp_topic *t = acc->buckets[bi]; t; t = t->hnext) {
            int32_t n = t->partition_count;
            if (n <= 0)
                continue;
            bool all = true;
            for (int32_t i = 0; i < n && all; i++)
                all = t->parts[i] != NULL;
            if (!s->conf.adaptive || !all) {
                t->sticky.len = 0;
                continue;
            }
            if (!scratch_reserve(s, n))
                continue;
            int32_t len = 0;
            for (int32_t i = 0; i < n; i++) {
                knp_partq *pq = t->parts[i];
                if (pq->leader < 0)
                    continue;
                if (s->conf.availability_timeout_ms > 0) {
                    knp_node *nd = sender_node(s, pq->leader);
                    if (nd && nd->ready_ms - nd->drain_ms > s->conf.availability_timeout_ms)
                        continue;
                }
                s->scratch[len] = pq->depth;
                s->scratch2[len] = i;
                len++;
            }
            knp_sticky_load_stats(&t->sticky, s->scratch, s->scratch2, len, n);
        }
    }
    (void)now_ms;
}

/* ---- completion and errors ---------------------------------------------- */

static bool is_transport_err(int err) {
    return err == KN_ERR__TRANSPORT || err == KN_ERR__TIMED_OUT ||
           err == KN_ERR__ALL_BROKERS_DOWN || err == KN_ERR__RESOLVE;
}

static bool is_fatal_err(int err) {
    return err == KN_ERR__AUTHENTICATION || err == KN_ERR_PRODUCER_FENCED || err == KN_ERR_CLUSTER_AUTHORIZATION_FAILED ||
           err == KN_ERR_TRANSACTIONAL_ID_AUTHORIZATION_FAILED;
}

static void set_fatal(knp_sender *s, int err, const char *msg) {
    knp_acc *acc = s->acc;
    if (acc->fatal_err)
        return;
    acc->fatal_err = err;
    if (err == KN_ERR__AUTHENTICATION) /* the broker's reason, as is */
        kn_errstr_set(acc->fatal_errstr, sizeof acc->fatal_errstr, "%s", msg ? msg : kn_err_message(err));
    else
        kn_errstr_set(acc->fatal_errstr, sizeof acc->fatal_errstr, "fatal producer error %s: %s",
                      kn_err_name(err), msg ? msg : kn_err_message(err));
}

/* acc.lock held: fail every queued batch (fatal error or close). */
static void fail_all_queued(knp_sender *s, int err, const char *msg) {
    knp_acc *acc = s->acc;
    for (int32_t i = 0; i < acc->npqs; i++) {
        knp_batch *b;
        while ((b = knp_acc_pop(acc, acc->pqs[i])) != NULL)
            knp_acc_complete(acc, b, err, -1, -1, msg);
    }
    knp_acc_fail_parked(acc, err, msg);
}

/* acc.lock held. True if a queued retry of pq has a sequence before seq. */
static bool lower_seq_queued(const knp_partq *pq, int32_t seq) {
    for (const knp_batch *q = pq->head; q && q->built; q = q->next)
        if (q->base_seq >= 0 && (int32_t)(((uint32_t)q->base_seq - (uint32_t)seq) << 1) < 0)
            return true;
    return false;
}

/* acc.lock held. pq's sequences have a gap that the broker will never
 * fill: a new epoch is needed. Only for the current epoch: a batch of an
 * epoch already replaced is re-sequenced when its partition switches. */
static void request_bump(knp_sender *s, knp_partq *pq) {
    if (pq->pid_gen == s->pid_gen)
        s->need_bump = true;
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
        if (knp_acc_split(acc, b, s->producer_id, s->epoch, serr, sizeof serr) == 0)
            return;
    }
    if (is_fatal_err(err) || (s->conf.txn && err == KN_ERR_INVALID_PRODUCER_EPOCH)) {
        /* Transactional: an old epoch means another producer with our
         * transactional.id took over (Java: ProducerFencedException). */
        set_fatal(s, err, buf);
        knp_acc_complete(acc, b, err, -1, -1, buf);
        fail_all_queued(s, err, acc->fatal_errstr);
        return;
    }
    bool seq_err = s->conf.idempotent && (err == KN_ERR_OUT_OF_ORDER_SEQUENCE_NUMBER ||
                                          err == KN_ERR_UNKNOWN_PRODUCER_ID ||
                                          err == KN_ERR_INVALID_PRODUCER_EPOCH);
    bool transport = is_transport_err(err);
    bool retriable = kn_err_is_retriable(err) || transport || seq_err;
    if (transport || (kn_err_flags(err) & KN_EF_METADATA)) {
        /* The leader we used is suspect: route only after fresh metadata. */
        pq->stale_before_ms = now_ms;
        knw_metadata_request_refresh(s->wire, false, "producer: leader error or connection lost");
    }
    if (seq_err && pq->inflight == 0 && !lower_seq_queued(pq, b->base_seq)) {
        /* Refused at the oldest unacknowledged batch of the partition
         * (nothing earlier in flight or waiting): this epoch cannot make
         * progress (e.g. the broker took later sequences after an earlier
         * batch failed), so a new epoch restarts sequences at 0. */
        request_bump(s, pq);
    }
    if (retriable && !acc->closing && b->attempts <= s->conf.retries && now_ms < b->deadline_ms) {
        b->retry_at_ms = now_ms + backoff_ms(s, b->attempts);
        kn_log(knw_client_logger(s->wire), KN_LOG_WARN,
               "retrying a batch of %d record(s) (sequence %d, attempt %d): %s",
               (int)b->count, (int)b->base_seq, (int)b->attempts, buf);
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
        request_bump(s, pq); /* a sequence gap: later batches need a new epoch */
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
    knp_node *nd = sender_node(s, r->node);
    if (nd)
        nd->inflight--;
    s->requests++;
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

/* ---- producer id ---------------------------------------------------- */

static void on_init_pid(knw_client *c, knw_resp *resp, void *opaque) {
    knp_sender *s = opaque;
    knp_acc *acc = s->acc;
    int64_t now_ms = knw_now_ms();
    pthread_mutex_lock(&acc->lock);
    int err = resp->err;
    const kp_InitProducerIdResponse *ir = resp->body;
    if (!err && ir)
        err = ir->error_code;
    if (!err && ir) {
        s->producer_id = ir->producer_id;
        s->epoch = ir->producer_epoch;
        s->pid_state = PID_READY;
        s->pid_attempts = 0;
        /* New id/epoch: each partition restarts its sequences at 0 once
         * its in-flight batches have answered (see drain). */
        s->pid_gen++;
        s->need_bump = false;
    } else if (is_fatal_err(err) || err == KN_ERR__CLOSED) {
        if (err != KN_ERR__CLOSED) {
            set_fatal(s, err, resp->errstr[0] ? resp->errstr : "InitProducerId failed");
            fail_all_queued(s, err, acc->fatal_errstr);
        }
        s->pid_state = PID_NONE;
    } else {
        s->pid_attempts++;
        s->pid_state = s->producer_id >= 0 ? PID_READY : PID_NONE;
        s->pid_retry_at_ms = now_ms + backoff_ms(s, s->pid_attempts);
    }
    pthread_mutex_unlock(&acc->lock);
    knw_resp_free(resp);
    knw_wakeup(c);
}

/* acc.lock held. Starts InitProducerId if needed; true if a request is
 * to be sent (by the caller, outside the lock). */
static bool pid_needed(knp_sender *s, int64_t now_ms) {
    if (!s->conf.idempotent || s->acc->fatal_err || s->conf.txn)
        return false; /* a transactional id's InitProducerId is txn.c's */
    if (s->pid_state == PID_REQUESTING || now_ms < s->pid_retry_at_ms)
        return false;
    if (s->pid_state == PID_READY && !(s->need_bump && s->inflight_reqs == 0))
        return false;
    kp_InitProducerIdRequest_init(&s->pid_req);
    s->pid_req.transactional_id.ptr = NULL;
    s->pid_req.transactional_id.len = -1;
    s->pid_req.transaction_timeout_ms = s->conf.transaction_timeout_ms;
    if (s->pid_state == PID_READY) {
        /* Epoch bump (KIP-360): the current id and epoch ask for epoch+1. */
        s->pid_req.producer_id = s->producer_id;
        s->pid_req.producer_epoch = s->epoch;
    }
    s->pid_state = PID_REQUESTING;
    return true;
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
        if (s->conf.txn && !pq->txn_added) {
            /* AddPartitionsToTxn first (sent by the tick). */
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
        knp_node *nd = sender_node(s, pq->leader);
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
        if (d->count == 0 && nd->inflight >= s->conf.max_in_flight)
            continue; /* the broker has its fill of our requests */
        int64_t est = b->built ? (int64_t)b->wire.len : (int64_t)kn_rb_builder_size(&b->b);
        if (d->count > 0 && d->size + est > max_req)
            continue; /* next request */
        if (pq->drain_gen == s->gen)
            continue;
        pq->drain_gen = s->gen;
        knp_acc_pop(acc, pq);
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
    }
    pthread_mutex_lock(&acc->lock);
    for (knp_batch *b = failed, *next; b; b = next) {
        next = b->next;
        b->pq->inflight--;
        if (s->conf.idempotent && b->base_seq >= 0)
            request_bump(s, b->pq);
        knp_acc_complete(acc, b, b->err, -1, -1, errstr);
    }
    if (nb > 0) {
        s->inflight_reqs++;
        knp_node *nd = sender_node(s, d->node);
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
    knw_send(s->wire, d->node, KP_API_PRODUCE, -1,
             s->conf.txn ? KNP_PRODUCE_TXN_MAX_VERSION : KNP_PRODUCE_MAX_VERSION, &r->req, -1, on_produce, r);
}

/* ---- transactions: coordinator and AddPartitionsToTxn ---------------- */

typedef struct knp_add_req {
    knp_sender *s;
    kp_AddPartitionsToTxnRequest req;
    kp_AddPartitionsToTxnRequest_AddPartitionsToTxnTopic *topics;
    int32_t *parts;
    knp_partq **pqs;
    int32_t npqs;
    int32_t node; /* the coordinator it went to */
} knp_add_req;

static int cmp_pq_topic(const void *a, const void *b) {
    const knp_partq *x = *(knp_partq *const *)a, *y = *(knp_partq *const *)b;
    if (x->topic != y->topic)
        return x->topic < y->topic ? -1 : 1;
    return x->partition - y->partition;
}

/* acc.lock held. The AddPartitionsToTxn for every queued partition not
 * added yet (NULL if none or out of memory). */
static knp_add_req *build_add(knp_sender *s) {
    knp_acc *acc = s->acc;
    int32_t n = 0;
    for (int32_t i = 0; i < acc->npqs; i++)
        if (acc->pqs[i]->head && !acc->pqs[i]->txn_added && !acc->pqs[i]->txn_adding)
            n++;
    if (n == 0)
        return NULL;
    knp_add_req *ar = kn_calloc(1, sizeof *ar);
    if (!ar)
        return NULL;
    ar->pqs = kn_calloc((size_t)n, sizeof *ar->pqs);
    ar->parts = kn_calloc((size_t)n, sizeof *ar->parts);
    ar->topics = kn_calloc((size_t)n, sizeof *ar->topics);
    if (!ar->pqs || !ar->parts || !ar->topics) {
        kn_free(ar->pqs);
        kn_free(ar->parts);
        kn_free(ar->topics);
        kn_free(ar);
        return NULL;
    }
    for (int32_t i = 0; i < acc->npqs; i++) {
        knp_partq *pq = acc->pqs[i];
        if (pq->head && !pq->txn_added && !pq->txn_adding)
            ar->pqs[ar->npqs++] = pq;
    }
    qsort(ar->pqs, (size_t)ar->npqs, sizeof ar->pqs[0], cmp_pq_topic);
    int32_t nt = 0;
    for (int32_t i = 0; i < ar->npqs; i++) {
        knp_partq *pq = ar->pqs[i];
        pq->txn_adding = true;
        ar->parts[i] = pq->partition;
        if (nt == 0 || ar->pqs[i - 1]->topic != pq->topic) {
            ar->topics[nt].name = kn_str_c(pq->topic->name);
            ar->topics[nt].partitions.items = &ar->parts[i];
            ar->topics[nt].partitions.count = 0;
            nt++;
        }
        ar->topics[nt - 1].partitions.count++;
    }
    ar->s = s;
    kp_AddPartitionsToTxnRequest_init(&ar->req);
    ar->req.v3_and_below_transactional_id = kn_str_c(s->conf.txn->id);
    ar->req.v3_and_below_producer_id = s->producer_id;
    ar->req.v3_and_below_producer_epoch = s->epoch;
    ar->req.v3_and_below_topics.items = ar->topics;
    ar->req.v3_and_below_topics.count = nt;
    s->conf.txn->adding = true;
    return ar;
}

static void free_add(knp_add_req *ar) {
    kn_free(ar->pqs);
    kn_free(ar->parts);
    kn_free(ar->topics);
    kn_free(ar);
}

/* acc.lock held: the transaction can only be aborted now; its queued
 * records fail with the reason (they could never be committed). */
static void set_abortable(knp_sender *s, int err, const char *msg) {
    knp_txn_shared *tx = s->conf.txn;
    if (!tx->abortable_err) {
        tx->abortable_err = err;
        kn_errstr_set(tx->abortable_errstr, sizeof tx->abortable_errstr, "%s", msg);
    }
    fail_all_queued(s, err, msg);
}

static void on_add_partitions(knw_client *c, knw_resp *resp, void *opaque) {
    knp_add_req *ar = opaque;
    knp_sender *s = ar->s;
    knp_acc *acc = s->acc;
    knp_txn_shared *tx = s->conf.txn;
    const kp_AddPartitionsToTxnResponse *r = resp->body;
    int64_t now_ms = knw_now_ms();
    pthread_mutex_lock(&acc->lock);
    tx->adding = false;
    int worst = resp->err; /* the error that decides what happens next */
    char msg[300] = "";
    if (worst)
        kn_errstr_set(msg, sizeof msg, "AddPartitionsToTxn: %s", resp->errstr);
    for (int32_t i = 0; i < ar->npqs; i++) {
        knp_partq *pq = ar->pqs[i];
        pq->txn_adding = false;
        if (resp->err || !r)
            continue;
        int perr = KN_ERR__PROTOCOL;
        for (int32_t ti = 0; ti < r->results_by_topic_v3_and_below.count; ti++) {
            const kp_AddPartitionsToTxnResponse_AddPartitionsToTxnTopicResult *tr =
                &r->results_by_topic_v3_and_below.items[ti];
            if (!kn_str_eq(tr->name, pq->topic->name))
                continue;
            for (int32_t k = 0; k < tr->results_by_partition.count; k++)
                if (tr->results_by_partition.items[k].partition_index == pq->partition)
                    perr = tr->results_by_partition.items[k].partition_error_code;
        }
        if (perr == 0) {
            pq->txn_added = true;
            tx->started = true;
            continue;
        }
        /* OPERATION_NOT_ATTEMPTED only says another partition failed. */
        if (perr != KN_ERR_OPERATION_NOT_ATTEMPTED &&
            (!worst || is_fatal_err(perr) || perr == KN_ERR_INVALID_PRODUCER_EPOCH)) {
            worst = perr;
            kn_errstr_set(msg, sizeof msg, "AddPartitionsToTxn %s-%d: %s", pq->topic->name,
                          (int)pq->partition, kn_err_name(perr));
        }
    }
    if (worst == 0) {
        /* done */
    } else if (is_fatal_err(worst) || worst == KN_ERR_INVALID_PRODUCER_EPOCH ||
               worst == KN_ERR_INVALID_TXN_STATE || worst == KN_ERR_UNSUPPORTED_VERSION ||
               worst == KN_ERR__UNSUPPORTED_VERSION) {
        set_fatal(s, worst, msg);
        fail_all_queued(s, worst, acc->fatal_errstr);
    } else if (knw_coord_failed(s->wire, KNW_COORD_TXN, tx->id, ar->node, worst) || worst == KN_ERR__CLOSED) {
        tx->coord = -1; /* find it again (coordinator.h), then retry */
        tx->add_retry_at_ms = now_ms + s->conf.retry_backoff_ms;
    } else if (kn_err_is_retriable(worst) || worst == KN_ERR_CONCURRENT_TRANSACTIONS ||
               worst == KN_ERR_COORDINATOR_LOAD_IN_PROGRESS || worst == KN_ERR__NOMEM) {
        /* _NOMEM: the request could not even be queued; try again. */
        /* CONCURRENT_TRANSACTIONS: the previous transaction is still
         * being completed; Java retries it quickly (20 ms). */
        tx->add_retry_at_ms =
            now_ms + (worst == KN_ERR_CONCURRENT_TRANSACTIONS ? 20 : s->conf.retry_backoff_ms);
    } else {
        set_abortable(s, worst, msg);
    }
    pthread_mutex_unlock(&acc->lock);
    free_add(ar);
    knw_resp_free(resp);
    knw_wakeup(c);
}

/* acc.lock held. What the transaction needs sent this tick: an
 * AddPartitionsToTxn (*add_req), once its coordinator is known. */
static void txn_tick(knp_sender *s, int64_t now_ms, int64_t *next_ms, knp_add_req **add_req) {
    knp_txn_shared *tx = s->conf.txn;
    if (s->need_bump && !tx->abortable_err && tx->open) {
        /* A sequence failed for good: only an abort (and the epoch bump
         * that follows it) can go on. */
        set_abortable(s, KN_ERR_OUT_OF_ORDER_SEQUENCE_NUMBER,
                      "a batch with a sequence number failed: the transaction must be aborted");
    }
    if (!s->want_add || !tx->open || tx->adding || s->pid_state != PID_READY)
        return;
    if (now_ms < tx->add_retry_at_ms) {
        if (tx->add_retry_at_ms < *next_ms)
            *next_ms = tx->add_retry_at_ms;
        return;
    }
    /* The client's coordinator table looks it up (batched, with backoff)
     * and its answer wakes this ticker. */
    tx->coord = knw_coord_get(s->wire, KNW_COORD_TXN, tx->id, NULL, NULL, 0);
    if (tx->coord < 0)
        return;
    *add_req = build_add(s);
    if (*add_req)
        (*add_req)->node = tx->coord;
}

static void txn_send(knp_sender *s, knp_add_req *ar) {
    knw_send(s->wire, ar->node, KP_API_ADD_PARTITIONS_TO_TXN, -1, KNP_ADD_PARTITIONS_MAX_VERSION, &ar->req, -1,
             on_add_partitions, ar);
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
                request_bump(s, pq);
            knp_node *nd = pq->leader >= 0 ? sender_node(s, pq->leader) : NULL;
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
        set_fatal(s, ferr, fmsg);
        fail_all_queued(s, ferr, acc->fatal_errstr);
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
    if (s->need_bump && !s->conf.txn && s->pid_state == PID_READY && s->epoch >= 0 &&
        s->epoch < INT16_MAX - 1) {
        /* KIP-360 for the idempotent producer, as Java does it: bump the
         * epoch locally. The broker takes a higher epoch starting at
         * sequence 0 on each partition, so partitions switch one by one
         * as their in-flight batches answer, without a round trip and
         * without stopping the others. At the epoch's limit a new
         * producer id comes from InitProducerId instead (pid_needed). */
        s->epoch++;
        s->pid_gen++;
        s->need_bump = false;
        kn_log(knw_client_logger(s->wire), KN_LOG_WARN, "sequence gap: producer %lld bumps its epoch to %d",
               (long long)s->producer_id, (int)s->epoch);
    }
    send_pid = pid_needed(s, now_ms);
    if (s->conf.idempotent && s->pid_state != PID_READY && s->pid_retry_at_ms > now_ms &&
        s->pid_retry_at_ms < next)
        next = s->pid_retry_at_ms;
    s->want_add = false;
    drain(s, now_ms, &next, &need_md);
    knp_add_req *add_req = NULL;
    if (s->conf.txn)
        txn_tick(s, now_ms, &next, &add_req);
    if (s->conf.adaptive)
        update_load_stats(s, now_ms);
    pthread_mutex_unlock(&acc->lock);
    if (add_req)
        txn_send(s, add_req);
    if (md)
        knw_metadata_release(md);
    if (old)
        knw_metadata_release(old);
    if (send_pid) {
        knw_send(c, KNW_NODE_ANY, KP_API_INIT_PRODUCER_ID, -1, -1, &s->pid_req, -1, on_init_pid, s);
    }
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

void knp_sender_set_pid(knp_sender *s, int64_t producer_id, int16_t epoch) {
    knp_acc *acc = s->acc;
    pthread_mutex_lock(&acc->lock);
    if (producer_id != s->producer_id || epoch != s->epoch)
        s->pid_gen++; /* partitions restart their sequences (drain) */
    s->producer_id = producer_id;
    s->epoch = epoch;
    s->pid_state = PID_READY;
    s->need_bump = false;
    pthread_mutex_unlock(&acc->lock);
    knw_wakeup(s->wire);
}

void knp_sender_get_pid(knp_sender *s, int64_t *producer_id, int16_t *epoch, bool *need_bump) {
    pthread_mutex_lock(&s->acc->lock);
    *producer_id = s->producer_id;
    *epoch = s->epoch;
    *need_bump = s->need_bump;
    pthread_mutex_unlock(&s->acc->lock);
}

void knp_sender_set_fatal(knp_sender *s, int err, const char *msg) {
    pthread_mutex_lock(&s->acc->lock);
    set_fatal(s, err, msg);
    fail_all_queued(s, err, s->acc->fatal_errstr);
    pthread_mutex_unlock(&s->acc->lock);
}

void knp_sender_fail_queued(knp_sender *s, int err, const char *msg) {
    pthread_mutex_lock(&s->acc->lock);
    fail_all_queued(s, err, msg);
    pthread_mutex_unlock(&s->acc->lock);
}

void knp_sender_txn_reset(knp_sender *s) {
    knp_acc *acc = s->acc;
    pthread_mutex_lock(&acc->lock);
    for (int32_t i = 0; i < acc->npqs; i++)
        acc->pqs[i]->txn_added = false;
    pthread_mutex_unlock(&acc->lock);
}
