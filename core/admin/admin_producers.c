/*
 * admin_producers.c: describe_producers (DescribeProducers) and
 * abort_transaction (WriteTxnMarkers with an ABORT marker), both sent to
 * the partitions' leaders through kna_leader_run (admin_leaders.c, as
 * Java's PartitionLeaderStrategy: a partition whose leader moved goes
 * round again until the deadline; a missing topic or partition and
 * every other error are final for that partition alone). Here: the
 * requests, the answers, and the result object kn_producer_states.
 */
#include <stdio.h>
#include <string.h>

#include "admin/admin.h"
#include "error.h"
#include "kafka_native_consumer.h"
#include "kn_alloc.h"
#include "proto/generated/kp_apis.h"
#include "proto/generated/kp_describe_producers.h"
#include "proto/generated/kp_write_txn_markers.h"

typedef struct kna_pstate {
    int64_t producer_id, last_timestamp, txn_start_offset;
    int32_t producer_epoch, last_sequence, coordinator_epoch;
} kna_pstate;

/* A partition's producers (parallel to the routing items). */
typedef struct kna_pstates {
    kna_pstate *states;
    size_t state_count;
} kna_pstates;

struct kn_producer_states {
    kna_part *parts;
    kna_pstates *vals;
    size_t count;
};

/* ---- the result object --------------------------------------------------- */

void kn_producer_states_destroy(kn_producer_states *s) {
    if (!s)
        return;
    for (size_t i = 0; s->vals && i < s->count; i++)
        kn_free(s->vals[i].states);
    kna_parts_free(s->parts, s->count);
    kn_free(s->vals);
    kn_free(s);
}

static const kna_part *kna_pi(const kn_producer_states *s, size_t i) {
    return s && i < s->count ? &s->parts[i] : NULL;
}

static const kna_pstate *kna_ps(const kn_producer_states *s, size_t i, size_t k) {
    const kna_pstates *x = s && i < s->count ? &s->vals[i] : NULL;
    return x && k < x->state_count ? &x->states[k] : NULL;
}

size_t kn_producer_states_count(const kn_producer_states *s) { return s ? s->count : 0; }

const char *kn_producer_states_topic(const kn_producer_states *s, size_t i) {
    const kna_part *x = kna_pi(s, i);
    return x ? x->topic : NULL;
}

int32_t kn_producer_states_partition(const kn_producer_states *s, size_t i) {
    const kna_part *x = kna_pi(s, i);
    return x ? x->partition : -1;
}

int kn_producer_states_error(const kn_producer_states *s, size_t i) {
    const kna_part *x = kna_pi(s, i);
    return x ? x->err : KN_ERR__INVALID_ARG;
}

const char *kn_producer_states_error_message(const kn_producer_states *s, size_t i) {
    return kna_part_message(kna_pi(s, i));
}

size_t kn_producer_states_producer_count(const kn_producer_states *s, size_t i) {
    return s && i < s->count ? s->vals[i].state_count : 0;
}

int64_t kn_producer_states_producer_id(const kn_producer_states *s, size_t i, size_t k) {
    const kna_pstate *p = kna_ps(s, i, k);
    return p ? p->producer_id : -1;
}

int32_t kn_producer_states_producer_epoch(const kn_producer_states *s, size_t i, size_t k) {
    const kna_pstate *p = kna_ps(s, i, k);
    return p ? p->producer_epoch : -1;
}

int32_t kn_producer_states_last_sequence(const kn_producer_states *s, size_t i, size_t k) {
    const kna_pstate *p = kna_ps(s, i, k);
    return p ? p->last_sequence : -1;
}

int64_t kn_producer_states_last_timestamp(const kn_producer_states *s, size_t i, size_t k) {
    const kna_pstate *p = kna_ps(s, i, k);
    return p ? p->last_timestamp : -1;
}

int32_t kn_producer_states_coordinator_epoch(const kn_producer_states *s, size_t i, size_t k) {
    const kna_pstate *p = kna_ps(s, i, k);
    return p ? p->coordinator_epoch : -1;
}

int64_t kn_producer_states_txn_start_offset(const kn_producer_states *s, size_t i, size_t k) {
    const kna_pstate *p = kna_ps(s, i, k);
    return p ? p->txn_start_offset : -1;
}


/* ---- the calls ------------------------------------------------------------ */

static kn_str kna_cstr(const char *s) {
    kn_str out = {s, s ? (int32_t)strlen(s) : -1};
    return out;
}

/* Partition errors that mean "the leader is elsewhere or not ready". */
static bool kna_pretriable(int err) {
    return err == KN_ERR_NOT_LEADER_OR_FOLLOWER || err == KN_ERR_LEADER_NOT_AVAILABLE ||
           err == KN_ERR_UNKNOWN_LEADER_EPOCH || err == KN_ERR_FENCED_LEADER_EPOCH ||
           err == KN_ERR_REPLICA_NOT_AVAILABLE;
}

/* Results with one pending item per distinct partition of parts. */
static kn_producer_states *kna_pitems(const kn_topic_partition_list *parts) {
    size_t n = kn_topic_partition_list_count(parts);
    kn_producer_states *res = kn_calloc(1, sizeof(*res));
    if (!res || !(res->vals = kn_calloc(n ? n : 1, sizeof(*res->vals))) ||
        !(res->parts = kna_parts_of(parts, &res->count, NULL))) {
        kn_producer_states_destroy(res);
        return NULL;
    }
    return res;
}

/* Runs send over res's partitions; 0 or the whole call's error. */
static int kna_prun(kn_admin *admin, kn_producer_states *res, int (*send)(kna_leader_call *, int32_t, char *, size_t),
                    void *ctx, int timeout_ms, const char *fn, char *errstr, size_t errstr_size) {
    kna_leader_call call = {.admin = admin,
                            .deadline = kna_deadline(admin, timeout_ms),
                            .fn = fn,
                            .parts = res->parts,
                            .count = res->count,
                            .ctx = ctx,
                            .retriable = kna_pretriable,
                            .send = send};
    return kna_leader_run(&call, errstr, errstr_size);
}

/* ---- describe_producers ------------------------------------------------------ */

static int kna_dprod_send(kna_leader_call *call, int32_t node, char *why, size_t why_size) {
    kn_producer_states *res = call->ctx;
    kna_topic_groups g;
    if (kna_leader_groups(call, node, &g))
        return KN_ERR__NOMEM;
    kp_DescribeProducersRequest_TopicRequest *tr = kn_calloc(g.n ? g.n : 1, sizeof(*tr));
    if (!tr) {
        kna_topic_groups_free(&g);
        return KN_ERR__NOMEM;
    }
    for (size_t k = 0; k < g.n; k++) {
        kp_DescribeProducersRequest_TopicRequest_init(&tr[k]);
        tr[k].name = kna_cstr(g.topics[k]);
        tr[k].partition_indexes = (kp_int32_array){g.parts[k], g.pcount[k]};
    }
    kp_DescribeProducersRequest req;
    kp_DescribeProducersRequest_init(&req);
    req.topics.items = tr;
    req.topics.count = (int32_t)g.n;
    int err = 0;
    knw_resp *resp = kna_call(call->admin, node, KP_API_DESCRIBE_PRODUCERS, -1, -1, &req, call->deadline,
                              "DescribeProducers", &err, why, why_size);
    kn_free(tr);
    kna_topic_groups_free(&g);
    if (!resp)
        return kna_leader_failed(call, node, err, why);
    int rc = 0;
    call->answered = true;
    const kp_DescribeProducersResponse *body = resp->body;
    for (int32_t t = 0; t < body->topics.count && !rc; t++) {
        const kp_DescribeProducersResponse_TopicResponse *tp = &body->topics.items[t];
        for (int32_t p = 0; p < tp->partitions.count && !rc; p++) {
            const kp_DescribeProducersResponse_PartitionResponse *pr = &tp->partitions.items[p];
            ptrdiff_t i = kna_leader_find(call, node, tp->name, pr->partition_index);
            if (i < 0)
                continue;
            bool ok = true, done;
            char *msg = pr->error_code ? kna_strdup_str(pr->error_message, &ok) : NULL;
            rc = ok ? kna_leader_code(call, (size_t)i, pr->error_code, msg, &done) : KN_ERR__NOMEM;
            kn_free(msg);
            if (rc || !done)
                continue;
            kna_pstates *x = &res->vals[i];
            int32_t n = pr->active_producers.count > 0 ? pr->active_producers.count : 0;
            if (n && !(x->states = kn_calloc((size_t)n, sizeof(*x->states)))) {
                rc = KN_ERR__NOMEM;
                continue;
            }
            for (int32_t k = 0; k < n; k++) {
                const kp_DescribeProducersResponse_ProducerState *ps = &pr->active_producers.items[k];
                kna_pstate *st = &x->states[x->state_count++];
                st->producer_id = ps->producer_id;
                st->producer_epoch = ps->producer_epoch;
                st->last_sequence = ps->last_sequence;
                st->last_timestamp = ps->last_timestamp;
                st->coordinator_epoch = ps->coordinator_epoch;
                st->txn_start_offset = ps->current_txn_start_offset;
            }
        }
    }
    knw_resp_free(resp);
    return rc;
}

int kn_admin_describe_producers(kn_admin *admin, const kn_topic_partition_list *parts, int timeout_ms,
                                kn_producer_states **statesp, char *errstr, size_t errstr_size) {
    static const char fn[] = "kn_admin_describe_producers";
    if (!admin || !parts || !statesp) {
        kn_errstr_set(errstr, errstr_size, "%s: invalid argument", fn);
        return KN_ERR__INVALID_ARG;
    }
    *statesp = NULL;
    kn_producer_states *res = kna_pitems(parts);
    if (!res) {
        kn_errstr_set(errstr, errstr_size, "%s: out of memory", fn);
        return KN_ERR__NOMEM;
    }
    int err = kna_prun(admin, res, kna_dprod_send, res, timeout_ms, fn, errstr, errstr_size);
    if (err) {
        kn_producer_states_destroy(res);
        return err;
    }
    *statesp = res;
    return KN_OK;
}

/* ---- abort_transaction ---------------------------------------------------------- */

typedef struct kna_abort_ctx {
    int64_t producer_id;
    int16_t producer_epoch;
    int32_t coordinator_epoch;
} kna_abort_ctx;

static int kna_abort_send(kna_leader_call *call, int32_t node, char *why, size_t why_size) {
    const kna_abort_ctx *ctx = call->ctx;
    kna_part *x = &call->parts[0]; /* exactly one partition */
    kp_WriteTxnMarkersRequest_WritableTxnMarkerTopic topic;
    kp_WriteTxnMarkersRequest_WritableTxnMarkerTopic_init(&topic);
    topic.name = kna_cstr(x->topic);
    topic.partition_indexes = (kp_int32_array){&x->partition, 1};
    kp_WriteTxnMarkersRequest_WritableTxnMarker marker;
    kp_WriteTxnMarkersRequest_WritableTxnMarker_init(&marker);
    marker.producer_id = ctx->producer_id;
    marker.producer_epoch = ctx->producer_epoch;
    marker.coordinator_epoch = ctx->coordinator_epoch;
    marker.transaction_result = false; /* abort */
    marker.topics.items = &topic;
    marker.topics.count = 1;
    kp_WriteTxnMarkersRequest req;
    kp_WriteTxnMarkersRequest_init(&req);
    req.markers.items = &marker;
    req.markers.count = 1;
    int err = 0;
    knw_resp *resp = kna_call(call->admin, node, KP_API_WRITE_TXN_MARKERS, -1, -1, &req, call->deadline,
                              "WriteTxnMarkers", &err, why, why_size);
    if (!resp)
        return kna_leader_failed(call, node, err, why);
    call->answered = true;
    const kp_WriteTxnMarkersResponse *body = resp->body;
    int code = KN_ERR_UNKNOWN_SERVER_ERROR; /* unless the answer names the partition */
    for (int32_t m = 0; m < body->markers.count; m++)
        for (int32_t t = 0; t < body->markers.items[m].topics.count; t++) {
            const kp_WriteTxnMarkersResponse_WritableTxnMarkerTopicResult *tr =
                &body->markers.items[m].topics.items[t];
            for (int32_t p = 0; kna_slice_is(tr->name, x->topic) && p < tr->partitions.count; p++)
                if (tr->partitions.items[p].partition_index == x->partition)
                    code = tr->partitions.items[p].error_code;
        }
    knw_resp_free(resp);
    bool done;
    return kna_leader_code(call, 0, code,
                           code == KN_ERR_UNKNOWN_SERVER_ERROR
                               ? "The WriteTxnMarkers response did not contain a result for this partition"
                               : NULL,
                           &done);
}

int kn_admin_abort_transaction(kn_admin *admin, const char *topic, int32_t partition, int64_t producer_id,
                               int16_t producer_epoch, int32_t coordinator_epoch, int timeout_ms,
                               char *errstr, size_t errstr_size) {
    static const char fn[] = "kn_admin_abort_transaction";
    if (!admin || !topic || partition < 0 || producer_id < 0 || producer_epoch < 0) {
        kn_errstr_set(errstr, errstr_size,
                      "%s: invalid argument (topic, partition >= 0, producer id and epoch >= 0)", fn);
        return KN_ERR__INVALID_ARG;
    }
    kn_topic_partition_list *l = kn_topic_partition_list_new();
    if (!l || kn_topic_partition_list_add(l, topic, partition) < 0) {
        kn_topic_partition_list_destroy(l);
        kn_errstr_set(errstr, errstr_size, "%s: out of memory", fn);
        return KN_ERR__NOMEM;
    }
    kn_producer_states *res = kna_pitems(l);
    kn_topic_partition_list_destroy(l);
    if (!res) {
        kn_errstr_set(errstr, errstr_size, "%s: out of memory", fn);
        return KN_ERR__NOMEM;
    }
    kna_abort_ctx ctx = {producer_id, producer_epoch, coordinator_epoch};
    int err = kna_prun(admin, res, kna_abort_send, &ctx, timeout_ms, fn, errstr, errstr_size);
    if (!err && res->parts[0].err) {
        err = res->parts[0].err;
        kn_errstr_set(errstr, errstr_size, "%s: %s-%d: %s", fn, topic, (int)partition,
                      kn_producer_states_error_message(res, 0));
    }
    kn_producer_states_destroy(res);
    return err;
}
