/*
 * idempotence.c: the producer id and epoch of an idempotent producer,
 * on the sender's network thread: InitProducerId (and its retries), the
 * local epoch bump after a sequence gap (KIP-360, as Java: partitions
 * move to the new epoch one by one, once their in-flight batches
 * answered), and knp_sender_set_pid / get_pid for txn.c.
 */
#include <stdint.h>

#include "error.h"
#include "kn_alloc.h"
#include "log.h"
#include "producer/idempotence.h"
#include "proto/generated/kp_apis.h"

/* acc.lock held. True if a queued retry of pq has a sequence before seq. */
bool knp_idem_lower_seq_queued(const knp_partq *pq, int32_t seq) {
    for (const knp_batch *q = pq->head; q && q->built; q = q->next)
        if (q->base_seq >= 0 && (int32_t)(((uint32_t)q->base_seq - (uint32_t)seq) << 1) < 0)
            return true;
    return false;
}

/* acc.lock held. pq's sequences have a gap that the broker will never
 * fill: a new epoch is needed. Only for the current epoch: a batch of an
 * epoch already replaced is re-sequenced when its partition switches. */
void knp_idem_request_bump(knp_sender *s, knp_partq *pq) {
    if (pq->pid_gen == s->pid_gen)
        s->need_bump = true;
}

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
    } else if (knp_is_fatal_err(err) || err == KN_ERR__CLOSED) {
        if (err != KN_ERR__CLOSED) {
            knp_fatal_locked(s, err, resp->errstr[0] ? resp->errstr : "InitProducerId failed");
            knp_fail_queued_locked(s, err, acc->fatal_errstr);
        }
        s->pid_state = PID_NONE;
    } else {
        s->pid_attempts++;
        s->pid_state = s->producer_id >= 0 ? PID_READY : PID_NONE;
        s->pid_retry_at_ms = now_ms + knp_backoff_ms(s, s->pid_attempts);
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

/* acc.lock held. The idempotence part of a sender tick: a local epoch
 * bump after a sequence gap, then whether InitProducerId is due (true:
 * the caller sends it with knp_idem_send after the lock). */
bool knp_idem_tick(knp_sender *s, int64_t now_ms, int64_t *next_ms) {
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
    bool send_pid = pid_needed(s, now_ms);
    if (s->conf.idempotent && s->pid_state != PID_READY && s->pid_retry_at_ms > now_ms &&
        s->pid_retry_at_ms < *next_ms)
        *next_ms = s->pid_retry_at_ms;
    return send_pid;
}

void knp_idem_send(knp_sender *s) {
    knw_send(s->wire, KNW_NODE_ANY, KP_API_INIT_PRODUCER_ID, -1, -1, &s->pid_req, -1, on_init_pid, s);
}
