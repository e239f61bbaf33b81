/*
 * txn_add.c: adding partitions to the open transaction (transaction
 * version 1), on the sender's network thread: the transaction coordinator comes from the
 * client's coordinator table, one AddPartitionsToTxn covers every
 * queued partition not yet added, and its answer decides between done,
 * retry (coordinator moved, CONCURRENT_TRANSACTIONS), abortable and
 * fatal. txn.c (application thread) owns the rest of the transaction.
 */
#include <stdlib.h>
#include <string.h>

#include "error.h"
#include "kn_alloc.h"
#include "producer/txn_add.h"
#include "proto/generated/kp_add_partitions_to_txn.h"
#include "proto/generated/kp_apis.h"
#include "wire/coordinator.h"

/* Transaction version 1 only (KIP-890 part 1): partitions are added
 * with AddPartitionsToTxn v3 (v4+ is broker-to-broker). Under version 2
 * the partition leader adds them when the first Produce (v12+) arrives
 * and nothing here runs (see sender.c's drain). */
#define KNP_ADD_PARTITIONS_MAX_VERSION 3

struct knp_add_req {
    knp_sender *s;
    kp_AddPartitionsToTxnRequest req;
    kp_AddPartitionsToTxnRequest_AddPartitionsToTxnTopic *topics;
    int32_t *parts;
    knp_partq **pqs;
    int32_t npqs;
    int32_t node; /* the coordinator it went to */
};

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
    s->conf.txn->add_partitions_sent++;
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
    knp_fail_queued_locked(s, err, msg);
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
            (!worst || knp_is_fatal_err(perr) || perr == KN_ERR_INVALID_PRODUCER_EPOCH)) {
            worst = perr;
            kn_errstr_set(msg, sizeof msg, "AddPartitionsToTxn %s-%d: %s", pq->topic->name,
                          (int)pq->partition, kn_err_name(perr));
        }
    }
    if (worst == 0) {
        /* done */
    } else if (knp_is_fatal_err(worst) || worst == KN_ERR_INVALID_PRODUCER_EPOCH ||
               worst == KN_ERR_INVALID_TXN_STATE || worst == KN_ERR_UNSUPPORTED_VERSION ||
               worst == KN_ERR__UNSUPPORTED_VERSION) {
        knp_fatal_locked(s, worst, msg);
        knp_fail_queued_locked(s, worst, acc->fatal_errstr);
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
void knp_txn_add_tick(knp_sender *s, int64_t now_ms, int64_t *next_ms, knp_add_req **add_req) {
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

void knp_txn_add_send(knp_sender *s, knp_add_req *ar) {
    knw_send(s->wire, ar->node, KP_API_ADD_PARTITIONS_TO_TXN, -1, KNP_ADD_PARTITIONS_MAX_VERSION, &ar->req, -1,
             on_add_partitions, ar);
}

void knp_sender_txn_reset(knp_sender *s) {
    knp_acc *acc = s->acc;
    pthread_mutex_lock(&acc->lock);
    for (int32_t i = 0; i < acc->npqs; i++)
        acc->pqs[i]->txn_added = false;
    pthread_mutex_unlock(&acc->lock);
}
