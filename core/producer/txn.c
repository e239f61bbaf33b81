/*
 * txn.c: transactions for a producer with transactional.id (Java's
 * TransactionManager), on the application thread.
 *
 * Owns the state machine (UNINIT -> READY -> IN_TXN -> COMMITTING /
 * ABORTING -> READY, with ABORTABLE and FATAL) and the blocking
 * coordinator calls of the public API: FindCoordinator (transaction and
 * group), InitProducerId with the transactional id, AddOffsetsToTxn,
 * TxnOffsetCommit and EndTxn. Adding partitions before their first batch
 * (AddPartitionsToTxn) happens on the network thread, in sender.c, from
 * the knp_txn_shared flags this file opens and closes.
 *
 * The transaction version (KIP-890) follows the cluster's finalized
 * feature transaction.version, as Java's TransactionManager decides it
 * (isTransactionV2Enabled): read when init_transactions completes and
 * again when each transaction ends, never in the middle of one.
 *  - version 1: partitions are added with AddPartitionsToTxn (sender),
 *    offsets with AddOffsetsToTxn; Produce <= v11, TxnOffsetCommit <= v4,
 *    EndTxn <= v4; the epoch changes only with InitProducerId.
 *  - version 2 (level >= 2): no AddPartitionsToTxn nor AddOffsetsToTxn:
 *    Produce v12+ makes the partition leader add the partition and
 *    TxnOffsetCommit v5 the group coordinator add the offsets; EndTxn v5
 *    bumps the epoch at every commit and abort and answers with the new
 *    producer id and epoch, which the next transaction uses (so a late
 *    write of an ended transaction is fenced by its old epoch). An abort
 *    needs no InitProducerId to bump the epoch after a sequence error.
 *  - moving from 1 to 2 between transactions bumps the epoch with
 *    InitProducerId first (Java: clientSideEpochBumpRequired), so no
 *    partition added under version 1 counts as added under version 2.
 *
 * Errors, as Java classifies them:
 *  - fatal (the producer must be closed): PRODUCER_FENCED,
 *    INVALID_PRODUCER_EPOCH (another producer took the transactional id),
 *    TRANSACTIONAL_ID_AUTHORIZATION_FAILED, INVALID_TXN_STATE, ...;
 *    INVALID_PRODUCER_ID_MAPPING from any broker (Java 4.x, KAFKA-18019;
 *    the sender's knp_is_fatal_err for Produce and AddPartitionsToTxn);
 *  - abortable (only abort_transaction is allowed): a record that failed,
 *    TRANSACTION_ABORTABLE, group/topic authorization, a consumer group
 *    generation that moved on;
 *  - retried until the call's timeout: CONCURRENT_TRANSACTIONS,
 *    COORDINATOR_LOAD_IN_PROGRESS, NOT_COORDINATOR (the coordinator is
 *    looked up again), lost connections.
 */
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "config/config.h"
#include "error.h"
#include "kn_alloc.h"
#include "log.h"
#include "producer/producer_int.h"
#include "producer/producer_metrics.h"
#include "proto/generated/kp_add_offsets_to_txn.h"
#include "proto/generated/kp_apis.h"
#include "proto/generated/kp_end_txn.h"
#include "proto/generated/kp_find_coordinator.h"
#include "wire/coordinator.h"
#include "proto/generated/kp_init_producer_id.h"
#include "proto/generated/kp_txn_offset_commit.h"

/* Version caps per transaction version (index 1 or 2). */
static const int16_t end_txn_max[3] = {0, 4, 5};
static const int16_t txn_offset_commit_max[3] = {0, 4, 5};
#define KNT_ADD_OFFSETS_MAX 4

static const char *state_name(int st) {
    switch (st) {
    case KNP_TXN_UNINIT:
        return "UNINITIALIZED";
    case KNP_TXN_READY:
        return "READY";
    case KNP_TXN_IN_TXN:
        return "IN_TRANSACTION";
    case KNP_TXN_COMMITTING:
        return "COMMITTING_TRANSACTION";
    case KNP_TXN_ABORTING:
        return "ABORTING_TRANSACTION";
    case KNP_TXN_ABORTABLE:
        return "ABORTABLE_ERROR";
    default:
        return "FATAL_ERROR";
    }
}

static void sleep_ms(int64_t ms) {
    struct timespec ts = {(time_t)(ms / 1000), (long)(ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

static int64_t deadline_of(kn_producer *p, int timeout_ms) {
    int64_t t = timeout_ms < 0 ? p->max_block_ms : timeout_ms;
    return knw_now_ms() + t;
}

/* The producer's fatal error, if any (state FATAL follows). */
static int check_fatal(kn_producer *p, char *errstr, size_t n) {
    int err = knp_sender_fatal(p->sender, errstr, n);
    if (err) {
        p->txn_state = KNP_TXN_FATAL;
        return KN_ERR__FATAL;
    }
    return 0;
}

/* Common entry checks: a transactional producer, not fatal. */
static int enter(kn_producer *p, const char *what, char *errstr, size_t n) {
    if (!p) {
        kn_errstr_set(errstr, n, "%s: NULL producer", what);
        return KN_ERR__INVALID_ARG;
    }
    if (kn_producer_forked(p)) {
        kn_fork_errstr(&p->fork, "the producer", errstr, n);
        return KN_ERR__FORKED;
    }
    if (!p->transactional) {
        kn_errstr_set(errstr, n, "%s: the producer has no transactional.id", what);
        return KN_ERR__STATE;
    }
    if (p->closed) {
        kn_errstr_set(errstr, n, "%s: the producer is closed", what);
        return KN_ERR__CLOSED;
    }
    return check_fatal(p, errstr, n);
}

static int wrong_state(kn_producer *p, const char *what, char *errstr, size_t n) {
    kn_errstr_set(errstr, n, "%s: invalid transition in state %s", what, state_name(p->txn_state));
    return KN_ERR__STATE;
}

static bool is_fatal_txn_err(int err) {
    return err == KN_ERR_PRODUCER_FENCED || err == KN_ERR_INVALID_PRODUCER_EPOCH ||
           err == KN_ERR_TRANSACTIONAL_ID_AUTHORIZATION_FAILED ||
           err == KN_ERR_CLUSTER_AUTHORIZATION_FAILED || err == KN_ERR_INVALID_TXN_STATE ||
           err == KN_ERR_UNSUPPORTED_VERSION || err == KN_ERR__UNSUPPORTED_VERSION ||
           err == KN_ERR_TRANSACTION_COORDINATOR_FENCED || err == KN_ERR_UNSUPPORTED_FOR_MESSAGE_FORMAT ||
           err == KN_ERR_INVALID_PRODUCER_ID_MAPPING || err == KN_ERR_INVALID_TRANSACTION_TIMEOUT;
}

/* The transaction version the cluster's finalized features call for:
 * 2 from transaction.version level 2, else 1 (no feature set known, or
 * a cluster that never finalized it). */
static int cluster_txn_version(kn_producer *p) {
    return knw_feature_level(p->wire, "transaction.version", NULL) >= 2 ? 2 : 1;
}

static bool txn_v2(kn_producer *p) {
    pthread_mutex_lock(&p->acc.lock);
    bool v2 = p->txs.v2;
    pthread_mutex_unlock(&p->acc.lock);
    return v2;
}

static void set_txn_v2(kn_producer *p, bool v2) {
    pthread_mutex_lock(&p->acc.lock);
    bool was = p->txs.v2;
    p->txs.v2 = v2;
    pthread_mutex_unlock(&p->acc.lock);
    if (was != v2 || p->txn_state == KNP_TXN_UNINIT)
        kn_log(knw_client_logger(p->wire), KN_LOG_INFO, "transactional.id %s: transaction version %d",
               p->txs.id, v2 ? 2 : 1);
}

/* ---- blocking coordinator calls ---------------------------------------- */

/* The coordinator of key (key_type 0 group, 1 transaction) from the
 * client's coordinator table (core/wire/coordinator.h): cached, looked
 * up with backoff until deadline. */
static int find_coordinator(kn_producer *p, int8_t key_type, const char *key, int64_t deadline, int32_t *node,
                            char *errstr, size_t n) {
    return knw_coord_wait(p->wire, key_type, key, deadline, node, errstr, n);
}

/* The first error of a response body (top level or per item). */
typedef int knt_err_fn(const void *body);

static int err_init_pid(const void *b) { return ((const kp_InitProducerIdResponse *)b)->error_code; }
static int err_end_txn(const void *b) { return ((const kp_EndTxnResponse *)b)->error_code; }
static int err_add_offsets(const void *b) { return ((const kp_AddOffsetsToTxnResponse *)b)->error_code; }
static int err_txn_offset_commit(const void *b) {
    const kp_TxnOffsetCommitResponse *r = b;
    for (int32_t t = 0; t < r->topics.count; t++)
        for (int32_t i = 0; i < r->topics.items[t].partitions.count; i++)
            if (r->topics.items[t].partitions.items[i].error_code)
                return r->topics.items[t].partitions.items[i].error_code;
    return 0;
}

/* Sends req to the coordinator of (key_type, key), cached in *coord,
 * until it answers without a retriable error or deadline passes.
 * Returns 0 with *out (caller frees), or the error with errstr. */
static int coord_call(kn_producer *p, int32_t *coord, int8_t key_type, const char *key, int16_t api,
                      int16_t max_version, const void *req, knt_err_fn *errof, int64_t deadline,
                      knw_resp **out, char *errstr, size_t n) {
    int attempts = 0;
    char last[300] = "no answer";
    for (;;) {
        if (attempts++ > 0) {
            int64_t wait = kn_conf_get_int(p->conf, "retry.backoff.ms");
            if (knw_now_ms() + wait >= deadline)
                break;
            sleep_ms(wait);
        }
        if (*coord >= 0 && knw_coord_known(p->wire, key_type, key) != *coord)
            *coord = -1; /* forgotten meanwhile (lost connection, metadata) */
        if (*coord < 0) {
            int rc = find_coordinator(p, key_type, key, deadline, coord, last, sizeof last);
            if (rc == KN_ERR__TIMED_OUT && knw_now_ms() >= deadline)
                break;
            if (rc && !kn_err_is_coordinator(rc) && !kn_err_is_retriable(rc)) {
                kn_errstr_set(errstr, n, "%s", last);
                return rc;
            }
            if (rc)
                continue;
        }
        int64_t left = deadline - knw_now_ms();
        if (left <= 0)
            break;
        knw_resp *r = knw_call(p->wire, *coord, api, -1, max_version, req, (int)left);
        int err = r->err ? r->err : r->body ? errof(r->body) : KN_ERR__PROTOCOL;
        if (!err) {
            *out = r;
            return 0;
        }
        const kp_api *ap = kp_api_get(api);
        kn_errstr_set(last, sizeof last, "%s from node %d: %s%s%s", ap ? ap->name : "?", (int)*coord,
                      kn_err_name(err), r->err ? ": " : "", r->err ? r->errstr : "");
        knw_resp_free(r);
        if (knw_coord_failed(p->wire, key_type, key, *coord, err)) {
            *coord = -1;
            continue;
        }
        if (err == KN_ERR_CONCURRENT_TRANSACTIONS || err == KN_ERR_COORDINATOR_LOAD_IN_PROGRESS ||
            err == KN_ERR_UNKNOWN_TOPIC_OR_PARTITION || kn_err_is_retriable(err))
            continue;
        kn_errstr_set(errstr, n, "%s", last);
        return err;
    }
    kn_errstr_set(errstr, n, "timed out (last: %s)", last);
    return KN_ERR__TIMED_OUT;
}

static int32_t txn_coord(kn_producer *p) {
    pthread_mutex_lock(&p->acc.lock);
    int32_t c = p->txs.coord;
    pthread_mutex_unlock(&p->acc.lock);
    return c;
}

static void set_txn_coord(kn_producer *p, int32_t c) {
    pthread_mutex_lock(&p->acc.lock);
    p->txs.coord = c;
    pthread_mutex_unlock(&p->acc.lock);
}

/* An error from a transactional call: fatal ones end the producer,
 * others make the transaction abortable (when one is open). */
static int classify(kn_producer *p, int err, char *errstr, size_t n) {
    if (err == KN_ERR__TIMED_OUT)
        return err;
    if (is_fatal_txn_err(err)) {
        knp_sender_set_fatal(p->sender, err, errstr);
        p->txn_state = KNP_TXN_FATAL;
        return err;
    }
    if (p->txn_state == KNP_TXN_IN_TXN) {
        pthread_mutex_lock(&p->acc.lock);
        if (!p->txs.abortable_err) {
            p->txs.abortable_err = err;
            kn_errstr_set(p->txs.abortable_errstr, sizeof p->txs.abortable_errstr, "%s", errstr);
        }
        pthread_mutex_unlock(&p->acc.lock);
        p->txn_state = KNP_TXN_ABORTABLE;
    }
    (void)n;
    return err;
}

/* InitProducerId with the transactional id; with a current id and epoch
 * (KIP-360) it bumps the epoch instead of fencing ourselves. */
static int init_pid(kn_producer *p, int64_t deadline, bool bump, char *errstr, size_t n) {
    kp_InitProducerIdRequest req;
    kp_InitProducerIdRequest_init(&req);
    req.transactional_id = kn_str_c(p->txs.id);
    req.transaction_timeout_ms = (int32_t)kn_conf_get_int(p->conf, "transaction.timeout.ms");
    req.producer_id = -1;
    req.producer_epoch = -1;
    if (bump) {
        bool nb;
        knp_sender_get_pid(p->sender, &req.producer_id, &req.producer_epoch, &nb);
    }
    int32_t coord = txn_coord(p);
    knw_resp *r = NULL;
    int rc = coord_call(p, &coord, 1, p->txs.id, KP_API_INIT_PRODUCER_ID, -1, &req, err_init_pid, deadline,
                        &r, errstr, n);
    set_txn_coord(p, coord);
    if (rc)
        return rc;
    const kp_InitProducerIdResponse *ir = r->body;
    knp_sender_set_pid(p->sender, ir->producer_id, ir->producer_epoch);
    knw_resp_free(r);
    return 0;
}

/* Waits (bounded) until the sender has no AddPartitionsToTxn in flight,
 * so no late answer marks a partition of the next transaction. */
static int wait_adds(kn_producer *p, int64_t deadline) {
    for (;;) {
        pthread_mutex_lock(&p->acc.lock);
        bool busy = p->txs.adding;
        pthread_mutex_unlock(&p->acc.lock);
        if (!busy)
            return 0;
        if (knw_now_ms() >= deadline)
            return KN_ERR__TIMED_OUT;
        sleep_ms(5);
    }
}

/* After EndTxn (or when nothing reached the coordinator): a fresh state
 * for the next transaction. */
static void end_local(kn_producer *p) {
    pthread_mutex_lock(&p->acc.lock);
    p->txs.open = false;
    p->txs.started = false;
    p->txs.abortable_err = 0;
    p->txs.abortable_errstr[0] = '\0';
    pthread_mutex_unlock(&p->acc.lock);
    knp_sender_txn_reset(p->sender);
    p->txn_failed = 0;
    p->txn_first_err = 0;
    p->txn_first_errstr[0] = '\0';
    p->txn_state = KNP_TXN_READY;
}

static int end_txn(kn_producer *p, bool commit, int64_t deadline, char *errstr, size_t n) {
    pthread_mutex_lock(&p->acc.lock);
    bool started = p->txs.started;
    pthread_mutex_unlock(&p->acc.lock);
    if (!started)
        return 0; /* the coordinator never heard of it: nothing to end */
    kp_EndTxnRequest req;
    kp_EndTxnRequest_init(&req);
    req.transactional_id = kn_str_c(p->txs.id);
    bool nb;
    knp_sender_get_pid(p->sender, &req.producer_id, &req.producer_epoch, &nb);
    req.committed = commit;
    bool v2 = txn_v2(p);
    int32_t coord = txn_coord(p);
    knw_resp *r = NULL;
    int rc = coord_call(p, &coord, 1, p->txs.id, KP_API_END_TXN, end_txn_max[v2 ? 2 : 1], &req, err_end_txn,
                        deadline, &r, errstr, n);
    set_txn_coord(p, coord);
    if (!rc && v2) {
        /* EndTxn v5: the epoch the coordinator bumped (or a new id when
         * the epoch ran out) for the next transaction; every partition
         * restarts its sequences. A v4 answer (an older broker) has -1. */
        const kp_EndTxnResponse *er = r->body;
        if (r->api_version >= 5 && er->producer_id >= 0 && er->producer_epoch >= 0)
            knp_sender_set_pid(p->sender, er->producer_id, er->producer_epoch);
        else if (r->api_version < 5)
            kn_log(knw_client_logger(p->wire), KN_LOG_WARN,
                   "transaction version 2 but the coordinator answered EndTxn v%d: the epoch stays",
                   (int)r->api_version);
    }
    knw_resp_free(r);
    return rc;
}

/* Between two transactions (the previous one ended): the next one's
 * version from the cluster's features, and an epoch bump by
 * InitProducerId when a sequence failed for good in the ended
 * transaction (KIP-360; a version 2 EndTxn already bumped it and cleared
 * the flag) or when moving from version 1 to 2 (Java's
 * clientSideEpochBumpRequired). */
static int next_txn_version(kn_producer *p, int64_t deadline, char *errstr, size_t n) {
    int64_t pid;
    int16_t epoch;
    bool need_bump;
    knp_sender_get_pid(p->sender, &pid, &epoch, &need_bump);
    bool was_v2 = txn_v2(p);
    bool v2 = cluster_txn_version(p) == 2;
    if (need_bump || (v2 && !was_v2)) {
        int rc = init_pid(p, deadline, true, errstr, n);
        if (rc)
            return rc;
    }
    set_txn_v2(p, v2);
    return 0;
}

/* ---- public API ---------------------------------------------------------- */

static int init_transactions(kn_producer *p, int timeout_ms, char *errstr, size_t n) {
    int rc = enter(p, "init_transactions", errstr, n);
    if (rc)
        return rc;
    if (p->txn_state != KNP_TXN_UNINIT)
        return wrong_state(p, "init_transactions", errstr, n);
    /* A timeout leaves the state UNINIT: calling again starts over (a
     * late InitProducerId answer only fences an epoch we never used). */
    rc = init_pid(p, deadline_of(p, timeout_ms), false, errstr, n);
    if (rc)
        return classify(p, rc, errstr, n);
    /* After InitProducerId a coordinator connection has told the
     * cluster's features (Java decides here too). */
    set_txn_v2(p, cluster_txn_version(p) == 2);
    p->txn_state = KNP_TXN_READY;
    return 0;
}

static int begin_transaction(kn_producer *p, char *errstr, size_t n) {
    int rc = enter(p, "begin_transaction", errstr, n);
    if (rc)
        return rc;
    if (p->txn_state != KNP_TXN_READY)
        return wrong_state(p, "begin_transaction", errstr, n);
    pthread_mutex_lock(&p->acc.lock);
    p->txs.open = true;
    pthread_mutex_unlock(&p->acc.lock);
    p->txn_state = KNP_TXN_IN_TXN;
    return 0;
}

/* AddOffsetsToTxn (transaction version 1). */
static int add_offsets(kn_producer *p, const char *group, int64_t pid, int16_t epoch, int64_t deadline,
                       char *errstr, size_t n) {
    kp_AddOffsetsToTxnRequest areq;
    kp_AddOffsetsToTxnRequest_init(&areq);
    areq.transactional_id = kn_str_c(p->txs.id);
    areq.producer_id = pid;
    areq.producer_epoch = epoch;
    areq.group_id = kn_str_c(group);
    int32_t coord = txn_coord(p);
    knw_resp *r = NULL;
    pthread_mutex_lock(&p->acc.lock);
    p->txs.add_offsets_sent++;
    pthread_mutex_unlock(&p->acc.lock);
    int rc = coord_call(p, &coord, 1, p->txs.id, KP_API_ADD_OFFSETS_TO_TXN, KNT_ADD_OFFSETS_MAX, &areq,
                        err_add_offsets, deadline, &r, errstr, n);
    set_txn_coord(p, coord);
    knw_resp_free(r);
    if (rc)
        return rc;
    pthread_mutex_lock(&p->acc.lock);
    p->txs.started = true;
    pthread_mutex_unlock(&p->acc.lock);
    return 0;
}

/* TxnOffsetCommit to the group's coordinator: v5 under version 2
 * (it adds the offsets partition to the transaction), else <= v4. */
static int txn_offset_commit(kn_producer *p, const kn_topic_partition_list *offsets, size_t count,
                             const kn_group_metadata *gm, int64_t pid, int16_t epoch, bool v2,
                             int64_t deadline, char *errstr, size_t n) {
    const char *group = kn_group_metadata_group_id(gm);
    kp_TxnOffsetCommitRequest_TxnOffsetCommitRequestTopic *topics = kn_calloc(count, sizeof *topics);
    kp_TxnOffsetCommitRequest_TxnOffsetCommitRequestPartition *parts = kn_calloc(count, sizeof *parts);
    if (!topics || !parts) {
        kn_free(topics);
        kn_free(parts);
        kn_errstr_set(errstr, n, "out of memory");
        return KN_ERR__NOMEM;
    }
    for (size_t i = 0; i < count; i++) {
        topics[i].name = kn_str_c(kn_topic_partition_list_topic(offsets, i));
        topics[i].partitions.items = &parts[i];
        topics[i].partitions.count = 1;
        parts[i].partition_index = kn_topic_partition_list_partition(offsets, i);
        parts[i].committed_offset = kn_topic_partition_list_offset(offsets, i);
        parts[i].committed_leader_epoch = kn_topic_partition_list_leader_epoch(offsets, i);
        const char *md = kn_topic_partition_list_metadata(offsets, i);
        parts[i].committed_metadata = kn_str_c(md ? md : "");
    }
    kp_TxnOffsetCommitRequest creq;
    kp_TxnOffsetCommitRequest_init(&creq);
    creq.transactional_id = kn_str_c(p->txs.id);
    creq.group_id = kn_str_c(group);
    creq.producer_id = pid;
    creq.producer_epoch = epoch;
    creq.generation_id = kn_group_metadata_generation(gm);
    creq.member_id = kn_str_c(kn_group_metadata_member_id(gm));
    const char *inst = kn_group_metadata_group_instance_id(gm);
    creq.group_instance_id.ptr = inst;
    creq.group_instance_id.len = inst ? (int32_t)strlen(inst) : -1;
    creq.topics.items = topics;
    creq.topics.count = (int32_t)count;
    int32_t gcoord = -1;
    knw_resp *r = NULL;
    int rc = coord_call(p, &gcoord, 0, group, KP_API_TXN_OFFSET_COMMIT, txn_offset_commit_max[v2 ? 2 : 1],
                        &creq, err_txn_offset_commit, deadline, &r, errstr, n);
    knw_resp_free(r);
    kn_free(topics);
    kn_free(parts);
    if (rc)
        return classify(p, rc, errstr, n);
    return 0;
}

static int send_offsets_to_transaction(kn_producer *p, const kn_topic_partition_list *offsets,
                                       const kn_group_metadata *gm, int timeout_ms, char *errstr, size_t n) {
    int rc = enter(p, "send_offsets_to_transaction", errstr, n);
    if (rc)
        return rc;
    if (!offsets || !gm) {
        kn_errstr_set(errstr, n,
                      "send_offsets_to_transaction: offsets and group metadata "
                      "are required");
        return KN_ERR__INVALID_ARG;
    }
    if (p->txn_state != KNP_TXN_IN_TXN)
        return wrong_state(p, "send_offsets_to_transaction", errstr, n);
    size_t count = kn_topic_partition_list_count(offsets);
    if (count == 0)
        return 0; /* Java: nothing to commit, nothing sent */
    for (size_t i = 0; i < count; i++)
        if (kn_topic_partition_list_offset(offsets, i) < 0) {
            kn_errstr_set(errstr, n, "send_offsets_to_transaction: %s-%d has no offset (%lld)",
                          kn_topic_partition_list_topic(offsets, i),
                          (int)kn_topic_partition_list_partition(offsets, i),
                          (long long)kn_topic_partition_list_offset(offsets, i));
            return KN_ERR__INVALID_ARG;
        }
    int64_t deadline = deadline_of(p, timeout_ms);
    const char *group = kn_group_metadata_group_id(gm);
    int64_t pid;
    int16_t epoch;
    bool nb;
    knp_sender_get_pid(p->sender, &pid, &epoch, &nb);

    bool v2 = txn_v2(p);
    /* 1. Version 1: the transaction coordinator records the group's
     * offsets partition as part of the transaction. Version 2: the group
     * coordinator adds it when TxnOffsetCommit v5 arrives. */
    if (v2) {
        pthread_mutex_lock(&p->acc.lock);
        p->txs.started = true; /* EndTxn is due from now on (Java) */
        pthread_mutex_unlock(&p->acc.lock);
    } else {
        rc = add_offsets(p, group, pid, epoch, deadline, errstr, n);
        if (rc)
            return classify(p, rc, errstr, n);
    }

    /* 2. The group coordinator stages the offsets until EndTxn. One
     * topic entry per list entry (the broker accepts repeated names). */
    return txn_offset_commit(p, offsets, count, gm, pid, epoch, v2, deadline, errstr, n);
}


static int commit_transaction(kn_producer *p, int timeout_ms, char *errstr, size_t n) {
    int rc = enter(p, "commit_transaction", errstr, n);
    if (rc)
        return rc;
    if (p->txn_state == KNP_TXN_ABORTABLE) {
        pthread_mutex_lock(&p->acc.lock);
        kn_errstr_set(errstr, n, "commit_transaction: the transaction must be aborted: %s",
                      p->txs.abortable_errstr);
        pthread_mutex_unlock(&p->acc.lock);
        return KN_ERR_TRANSACTION_ABORTABLE;
    }
    if (p->txn_state != KNP_TXN_IN_TXN && p->txn_state != KNP_TXN_COMMITTING)
        return wrong_state(p, "commit_transaction", errstr, n);
    int64_t deadline = deadline_of(p, timeout_ms);
    if (p->txn_state == KNP_TXN_IN_TXN) {
        /* Every record of the transaction must be acknowledged first. */
        int64_t left = deadline - knw_now_ms();
        if (knp_flush(p, left > 0 ? (int)left : 0)) {
            kn_errstr_set(errstr, n,
                          "commit_transaction: records still unacknowledged after "
                          "the timeout (call commit again, or abort)");
            return KN_ERR__TIMED_OUT;
        }
        rc = check_fatal(p, errstr, n);
        if (rc)
            return rc;
        pthread_mutex_lock(&p->acc.lock);
        int aerr = p->txs.abortable_err;
        if (aerr)
            kn_errstr_set(errstr, n, "commit_transaction: the transaction must be aborted: %s",
                          p->txs.abortable_errstr);
        pthread_mutex_unlock(&p->acc.lock);
        if (!aerr && p->txn_failed > 0) {
            aerr = p->txn_first_err;
            kn_errstr_set(errstr, n,
                          "commit_transaction: %lld record(s) of the transaction failed "
                          "(first: %s): the transaction must be aborted",
                          (long long)p->txn_failed, p->txn_first_errstr);
        }
        if (aerr) {
            p->txn_state = KNP_TXN_ABORTABLE;
            return KN_ERR_TRANSACTION_ABORTABLE;
        }
        if (wait_adds(p, deadline)) {
            kn_errstr_set(errstr, n, "commit_transaction: timed out");
            return KN_ERR__TIMED_OUT;
        }
        pthread_mutex_lock(&p->acc.lock);
        p->txs.open = false;
        pthread_mutex_unlock(&p->acc.lock);
        p->txn_state = KNP_TXN_COMMITTING;
    }
    /* COMMITTING: EndTxn again after a timeout is safe (the coordinator
     * answers a repeated commit of a completed transaction with OK). */
    rc = end_txn(p, true, deadline, errstr, n);
    if (rc) {
        if (rc == KN_ERR__TIMED_OUT)
            return rc;
        if (is_fatal_txn_err(rc)) {
            knp_sender_set_fatal(p->sender, rc, errstr);
            p->txn_state = KNP_TXN_FATAL;
        } else {
            p->txn_state = KNP_TXN_ABORTABLE;
        }
        return rc;
    }
    rc = next_txn_version(p, deadline, errstr, n);
    if (rc) {
        /* Committed, but the epoch bump for version 2 failed: commit
         * again repeats the (completed) EndTxn, then the bump. */
        if (is_fatal_txn_err(rc)) {
            knp_sender_set_fatal(p->sender, rc, errstr);
            p->txn_state = KNP_TXN_FATAL;
        }
        return rc;
    }
    end_local(p);
    return 0;
}

static int abort_transaction(kn_producer *p, int timeout_ms, char *errstr, size_t n) {
    int rc = enter(p, "abort_transaction", errstr, n);
    if (rc)
        return rc;
    if (p->txn_state != KNP_TXN_IN_TXN && p->txn_state != KNP_TXN_ABORTABLE &&
        p->txn_state != KNP_TXN_ABORTING)
        return wrong_state(p, "abort_transaction", errstr, n);
    int64_t deadline = deadline_of(p, timeout_ms);
    if (p->txn_state != KNP_TXN_ABORTING) {
        /* Records not sent yet are dropped (Java fails them with
         * TransactionAbortedException); sent ones must answer first. */
        pthread_mutex_lock(&p->acc.lock);
        p->txs.open = false;
        pthread_mutex_unlock(&p->acc.lock);
        knp_sender_fail_queued(p->sender, KN_ERR__STATE,
                               "the transaction was aborted before the record was sent");
        p->txn_state = KNP_TXN_ABORTING;
    }
    int64_t left = deadline - knw_now_ms();
    if (knp_flush(p, left > 0 ? (int)left : 0) || wait_adds(p, deadline)) {
        kn_errstr_set(errstr, n,
                      "abort_transaction: in-flight records still unanswered after "
                      "the timeout (call abort again)");
        return KN_ERR__TIMED_OUT;
    }
    rc = check_fatal(p, errstr, n);
    if (rc)
        return rc;
    rc = end_txn(p, false, deadline, errstr, n);
    if (rc) {
        if (rc != KN_ERR__TIMED_OUT && is_fatal_txn_err(rc)) {
            knp_sender_set_fatal(p->sender, rc, errstr);
            p->txn_state = KNP_TXN_FATAL;
        }
        return rc;
    }
    /* A sequence failed for good in this epoch: it is bumped so the
     * next transaction's sequences start clean (next_txn_version). */
    rc = next_txn_version(p, deadline, errstr, n);
    if (rc) {
        if (is_fatal_txn_err(rc)) {
            knp_sender_set_fatal(p->sender, rc, errstr);
            p->txn_state = KNP_TXN_FATAL;
        }
        return rc;
    }
    end_local(p);
    return 0;
}

const char *kn_producer_transaction_state(kn_producer *p) {
    if (!p || !p->transactional)
        return NULL;
    /* A fatal error the sender hit (e.g. fenced while producing) shows
     * before the next transaction call notices it. */
    if (!p->closed && p->txn_state != KNP_TXN_FATAL)
        check_fatal(p, NULL, 0);
    /* So does a record of the transaction that failed (Java's sender
     * moves the state to ABORTABLE_ERROR when the batch fails). */
    if (p->txn_state == KNP_TXN_IN_TXN) {
        pthread_mutex_lock(&p->acc.lock);
        if (p->txs.abortable_err)
            p->txn_state = KNP_TXN_ABORTABLE;
        pthread_mutex_unlock(&p->acc.lock);
    }
    return state_name(p->txn_state);
}

/* ---- the public calls, timed (Java's txn-*-time-ns-total count the
 * calls that returned without an error) ---------------------------- */

int kn_producer_init_transactions(kn_producer *p, int timeout_ms, char *errstr, size_t n) {
    int64_t t0 = knp_metrics_now_ns();
    int rc = init_transactions(p, timeout_ms, errstr, n);
    if (!rc)
        knp_metrics_api_time(p->metrics, KNP_T_TXN_INIT, knp_metrics_now_ns() - t0);
    return rc;
}

int kn_producer_begin_transaction(kn_producer *p, char *errstr, size_t n) {
    int64_t t0 = knp_metrics_now_ns();
    int rc = begin_transaction(p, errstr, n);
    if (!rc)
        knp_metrics_api_time(p->metrics, KNP_T_TXN_BEGIN, knp_metrics_now_ns() - t0);
    return rc;
}

int kn_producer_commit_transaction(kn_producer *p, int timeout_ms, char *errstr, size_t n) {
    int64_t t0 = knp_metrics_now_ns();
    int rc = commit_transaction(p, timeout_ms, errstr, n);
    if (!rc)
        knp_metrics_api_time(p->metrics, KNP_T_TXN_COMMIT, knp_metrics_now_ns() - t0);
    return rc;
}

int kn_producer_abort_transaction(kn_producer *p, int timeout_ms, char *errstr, size_t n) {
    int64_t t0 = knp_metrics_now_ns();
    int rc = abort_transaction(p, timeout_ms, errstr, n);
    if (!rc)
        knp_metrics_api_time(p->metrics, KNP_T_TXN_ABORT, knp_metrics_now_ns() - t0);
    return rc;
}

int kn_producer_send_offsets_to_transaction(kn_producer *p, const kn_topic_partition_list *offsets,
                                            const kn_group_metadata *gm, int timeout_ms, char *errstr,
                                            size_t n) {
    int64_t t0 = knp_metrics_now_ns();
    int rc = send_offsets_to_transaction(p, offsets, gm, timeout_ms, errstr, n);
    if (!rc)
        knp_metrics_api_time(p->metrics, KNP_T_TXN_SEND_OFFSETS, knp_metrics_now_ns() - t0);
    return rc;
}

/* ---- hooks for producer.c ------------------------------------------------ */

int knp_txn_check_send(kn_producer *p, char *errstr, size_t n) {
    if (p->txn_state == KNP_TXN_FATAL && check_fatal(p, errstr, n))
        return KN_ERR__FATAL;
    if (p->txn_state == KNP_TXN_IN_TXN) {
        pthread_mutex_lock(&p->acc.lock);
        int aerr = p->txs.abortable_err;
        if (aerr)
            kn_errstr_set(errstr, n, "send: the transaction must be aborted: %s", p->txs.abortable_errstr);
        pthread_mutex_unlock(&p->acc.lock);
        if (aerr) {
            p->txn_state = KNP_TXN_ABORTABLE;
            return KN_ERR_TRANSACTION_ABORTABLE;
        }
        return 0;
    }
    if (p->txn_state == KNP_TXN_ABORTABLE) {
        kn_errstr_set(errstr, n, "send: the transaction must be aborted: %s", p->txs.abortable_errstr);
        return KN_ERR_TRANSACTION_ABORTABLE;
    }
    if (p->txn_state == KNP_TXN_UNINIT) {
        kn_errstr_set(errstr, n,
                      "send: a transactional producer needs "
                      "kn_producer_init_transactions first");
        return KN_ERR__STATE;
    }
    return wrong_state(p, "send (call kn_producer_begin_transaction first)", errstr, n);
}

void knp_txn_on_report(kn_producer *p, int err, const char *errstr, int64_t records) {
    if (!err)
        return;
    int64_t before = p->txn_failed;
    p->txn_failed += records;
    if (before == 0) {
        p->txn_first_err = err;
        kn_errstr_set(p->txn_first_errstr, sizeof p->txn_first_errstr, "%s: %s", kn_err_name(err),
                      errstr ? errstr : "");
    }
}
