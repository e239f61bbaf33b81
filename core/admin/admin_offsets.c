/*
 * admin_offsets.c: list_offsets (ListOffsets) and delete_records
 * (DeleteRecords), both per partition leader through kna_leader_run
 * (admin_leaders.c: leaders from metadata, one request per leader,
 * retriable partitions round again until the deadline), and their
 * result object. Here: the requests, the answers, and which partition
 * errors are retried (the leader moved, its epoch is fenced, no leader
 * or offset yet).
 */
#include <stdio.h>
#include <string.h>

#include "admin/admin.h"
#include "error.h"
#include "kafka_native_consumer.h"
#include "kn_alloc.h"
#include "proto/generated/kp_apis.h"
#include "proto/generated/kp_delete_records.h"
#include "proto/generated/kp_list_offsets.h"

/* A partition's values (parallel to the routing items). */
typedef struct kna_offset_val {
    int64_t spec; /* list_offsets: KN_OFFSET_SPEC_* or a timestamp; delete_records: the offset */
    int64_t offset, timestamp;
    int32_t leader_epoch;
} kna_offset_val;

struct kn_offset_results {
    kna_part *parts;
    kna_offset_val *vals;
    size_t count;
};

/* ---- the result object ----------------------------------------------- */

#define KNA_OFF(r, i) ((r) && (i) < (r)->count ? &(r)->parts[i] : NULL)
#define KNA_VAL(r, i) ((r) && (i) < (r)->count ? &(r)->vals[i] : NULL)

size_t kn_offset_results_count(const kn_offset_results *r) { return r ? r->count : 0; }

const char *kn_offset_results_topic(const kn_offset_results *r, size_t i) {
    const kna_part *x = KNA_OFF(r, i);
    return x ? x->topic : NULL;
}

int32_t kn_offset_results_partition(const kn_offset_results *r, size_t i) {
    const kna_part *x = KNA_OFF(r, i);
    return x ? x->partition : -1;
}

int kn_offset_results_error(const kn_offset_results *r, size_t i) {
    const kna_part *x = KNA_OFF(r, i);
    return x ? x->err : KN_ERR__INVALID_ARG;
}

const char *kn_offset_results_error_message(const kn_offset_results *r, size_t i) {
    return kna_part_message(KNA_OFF(r, i));
}

int64_t kn_offset_results_offset(const kn_offset_results *r, size_t i) {
    const kna_offset_val *x = KNA_VAL(r, i);
    return x ? x->offset : -1;
}

int64_t kn_offset_results_timestamp(const kn_offset_results *r, size_t i) {
    const kna_offset_val *x = KNA_VAL(r, i);
    return x ? x->timestamp : -1;
}

int32_t kn_offset_results_leader_epoch(const kn_offset_results *r, size_t i) {
    const kna_offset_val *x = KNA_VAL(r, i);
    return x ? x->leader_epoch : -1;
}

void kn_offset_results_destroy(kn_offset_results *r) {
    if (!r)
        return;
    kna_parts_free(r->parts, r->count);
    kn_free(r->vals);
    kn_free(r);
}

/* ---- the calls ------------------------------------------------------- */

static kn_str kna_cstr(const char *s) {
    kn_str out = {s, s ? (int32_t)strlen(s) : -1};
    return out;
}

/* Retried partition errors: the leader is elsewhere or not ready. */
static bool kna_offset_retriable(int err) {
    return err == KN_ERR_NOT_LEADER_OR_FOLLOWER || err == KN_ERR_LEADER_NOT_AVAILABLE ||
           err == KN_ERR_UNKNOWN_LEADER_EPOCH || err == KN_ERR_FENCED_LEADER_EPOCH ||
           err == KN_ERR_OFFSET_NOT_AVAILABLE || err == KN_ERR_REPLICA_NOT_AVAILABLE;
}

/* The calls' context: the results, and list_offsets' flags. */
typedef struct kna_list_ctx {
    kn_offset_results *res;
    int flags; /* KN_ADMIN_READ_COMMITTED */
} kna_list_ctx;

/* The ListOffsets version the pending specs of node need at least. */
static int16_t kna_offset_min_version(const kna_leader_call *call, int32_t node) {
    const kn_offset_results *res = ((const kna_list_ctx *)call->ctx)->res;
    int16_t v = -1;
    for (size_t i = 0; i < res->count; i++) {
        if (!res->parts[i].pending || res->parts[i].node != node)
            continue;
        int64_t spec = res->vals[i].spec;
        int16_t need = spec == KN_OFFSET_SPEC_MAX_TIMESTAMP    ? 7
                       : spec == KN_OFFSET_SPEC_EARLIEST_LOCAL ? 8
                       : spec == KN_OFFSET_SPEC_LATEST_TIERED  ? 9
                                                               : -1;
        if (need > v)
            v = need;
    }
    return v;
}

/* Sends node's partitions; absorbs the answers. */
static int kna_offset_send(kna_leader_call *call, int32_t node, char *why, size_t why_size) {
    const kna_list_ctx *ctx = call->ctx;
    kn_offset_results *res = ctx->res;
    kna_topic_groups g;
    if (kna_leader_groups(call, node, &g))
        return KN_ERR__NOMEM;
    size_t n = 0;
    for (size_t k = 0; k < g.n; k++)
        n += (size_t)g.pcount[k];
    char *buf = kn_calloc(1, n * (sizeof(kp_ListOffsetsRequest_ListOffsetsTopic) +
                                  sizeof(kp_ListOffsetsRequest_ListOffsetsPartition)) +
                                 1);
    if (!buf) {
        kna_topic_groups_free(&g);
        return KN_ERR__NOMEM;
    }
    kp_ListOffsetsRequest_ListOffsetsTopic *topics = (void *)buf;
    kp_ListOffsetsRequest_ListOffsetsPartition *parts = (void *)(topics + n);
    kp_ListOffsetsRequest req;
    kp_ListOffsetsRequest_init(&req);
    req.replica_id = -1;
    req.isolation_level = (ctx->flags & KN_ADMIN_READ_COMMITTED) ? 1 : 0;
    req.timeout_ms = kna_remaining(call->deadline);
    req.topics.items = topics;
    req.topics.count = (int32_t)g.n;
    for (size_t k = 0; k < g.n; k++) {
        kp_ListOffsetsRequest_ListOffsetsTopic *t = &topics[k];
        kp_ListOffsetsRequest_ListOffsetsTopic_init(t);
        t->name = kna_cstr(g.topics[k]);
        t->partitions.items = parts;
        t->partitions.count = g.pcount[k];
        for (int32_t j = 0; j < g.pcount[k]; j++) {
            kp_ListOffsetsRequest_ListOffsetsPartition_init(parts);
            parts->partition_index = g.parts[k][j];
            parts->current_leader_epoch = -1;
            (parts++)->timestamp = res->vals[g.items[k][j]].spec;
        }
    }
    int err = 0;
    knw_resp *resp = kna_call(call->admin, node, KP_API_LIST_OFFSETS, kna_offset_min_version(call, node), -1,
                              &req, call->deadline, "ListOffsets", &err, why, why_size);
    kn_free(buf);
    kna_topic_groups_free(&g);
    if (!resp)
        return kna_leader_failed(call, node, err, why);
    int rc = 0;
    call->answered = true;
    const kp_ListOffsetsResponse *body = resp->body;
    for (int32_t k = 0; k < body->topics.count && !rc; k++) {
        const kp_ListOffsetsResponse_ListOffsetsTopicResponse *t = &body->topics.items[k];
        for (int32_t p = 0; p < t->partitions.count && !rc; p++) {
            const kp_ListOffsetsResponse_ListOffsetsPartitionResponse *rp = &t->partitions.items[p];
            ptrdiff_t i = kna_leader_find(call, node, t->name, rp->partition_index);
            bool done;
            if (i < 0 || (rc = kna_leader_code(call, (size_t)i, rp->error_code, NULL, &done)) != 0 || !done)
                continue;
            res->vals[i].offset = rp->offset;
            res->vals[i].timestamp = rp->timestamp;
            res->vals[i].leader_epoch = rp->leader_epoch;
        }
    }
    knw_resp_free(resp);
    return rc;
}

/* A results object with one pending entry per distinct partition of
 * specs (the first entry wins), spec taken from the entry's offset. */
static kn_offset_results *kna_offset_items(const kn_topic_partition_list *specs) {
    size_t n = kn_topic_partition_list_count(specs);
    kn_offset_results *res = kn_calloc(1, sizeof(*res));
    size_t *src = kn_calloc(n ? n : 1, sizeof(*src));
    if (!res || !src || !(res->vals = kn_calloc(n ? n : 1, sizeof(*res->vals))) ||
        !(res->parts = kna_parts_of(specs, &res->count, src))) {
        kn_free(src);
        kn_offset_results_destroy(res);
        return NULL;
    }
    for (size_t i = 0; i < res->count; i++) {
        res->vals[i].spec = kn_topic_partition_list_offset(specs, src[i]);
        res->vals[i].offset = res->vals[i].timestamp = -1;
        res->vals[i].leader_epoch = -1;
    }
    kn_free(src);
    return res;
}

/* Runs the call over specs' partitions with send; *resultsp on success. */
static int kna_offsets_call(kn_admin *admin, const char *fn, const kn_topic_partition_list *specs, int timeout_ms,
                            int (*send)(kna_leader_call *, int32_t, char *, size_t), int flags,
                            kn_offset_results **resultsp, char *errstr, size_t errstr_size) {
    int64_t deadline = kna_deadline(admin, timeout_ms);
    kn_offset_results *res = kna_offset_items(specs);
    if (!res) {
        kn_errstr_set(errstr, errstr_size, "%s: out of memory", fn);
        return KN_ERR__NOMEM;
    }
    kna_list_ctx ctx = {res, flags};
    kna_leader_call call = {.admin = admin,
                            .deadline = deadline,
                            .fn = fn,
                            .parts = res->parts,
                            .count = res->count,
                            .ctx = &ctx,
                            .retriable = kna_offset_retriable,
                            .send = send};
    int err = kna_leader_run(&call, errstr, errstr_size);
    if (err) {
        kn_offset_results_destroy(res);
        return err;
    }
    *resultsp = res;
    return KN_OK;
}

int kn_admin_list_offsets(kn_admin *admin, const kn_topic_partition_list *specs, int flags, int timeout_ms,
                          kn_offset_results **resultsp, char *errstr, size_t errstr_size) {
    static const char fn[] = "kn_admin_list_offsets";
    if (!admin || !specs || !resultsp) {
        kn_errstr_set(errstr, errstr_size, "%s: invalid argument", fn);
        return KN_ERR__INVALID_ARG;
    }
    *resultsp = NULL;
    size_t n = kn_topic_partition_list_count(specs);
    for (size_t i = 0; i < n; i++)
        if (kn_topic_partition_list_offset(specs, i) < KN_OFFSET_SPEC_LATEST_TIERED) {
            kn_errstr_set(
                errstr, errstr_size, "%s: %s-%d: %lld is neither a KN_OFFSET_SPEC_* nor a timestamp", fn,
                kn_topic_partition_list_topic(specs, i), (int)kn_topic_partition_list_partition(specs, i),
                (long long)kn_topic_partition_list_offset(specs, i));
            return KN_ERR__INVALID_ARG;
        }
    return kna_offsets_call(admin, fn, specs, timeout_ms, kna_offset_send, flags, resultsp, errstr, errstr_size);
}

/* ---- delete_records -------------------------------------------------- */

static int kna_delete_send(kna_leader_call *call, int32_t node, char *why, size_t why_size) {
    const kna_list_ctx *ctx = call->ctx;
    kn_offset_results *res = ctx->res;
    kna_topic_groups g;
    if (kna_leader_groups(call, node, &g))
        return KN_ERR__NOMEM;
    size_t n = 0;
    for (size_t k = 0; k < g.n; k++)
        n += (size_t)g.pcount[k];
    char *buf = kn_calloc(1, n * (sizeof(kp_DeleteRecordsRequest_DeleteRecordsTopic) +
                                  sizeof(kp_DeleteRecordsRequest_DeleteRecordsPartition)) +
                                 1);
    if (!buf) {
        kna_topic_groups_free(&g);
        return KN_ERR__NOMEM;
    }
    kp_DeleteRecordsRequest_DeleteRecordsTopic *topics = (void *)buf;
    kp_DeleteRecordsRequest_DeleteRecordsPartition *parts = (void *)(topics + n);
    kp_DeleteRecordsRequest req;
    kp_DeleteRecordsRequest_init(&req);
    req.timeout_ms = kna_remaining(call->deadline);
    req.topics.items = topics;
    req.topics.count = (int32_t)g.n;
    for (size_t k = 0; k < g.n; k++) {
        kp_DeleteRecordsRequest_DeleteRecordsTopic *t = &topics[k];
        kp_DeleteRecordsRequest_DeleteRecordsTopic_init(t);
        t->name = kna_cstr(g.topics[k]);
        t->partitions.items = parts;
        t->partitions.count = g.pcount[k];
        for (int32_t j = 0; j < g.pcount[k]; j++) {
            kp_DeleteRecordsRequest_DeleteRecordsPartition_init(parts);
            parts->partition_index = g.parts[k][j];
            (parts++)->offset = res->vals[g.items[k][j]].spec;
        }
    }
    int err = 0;
    knw_resp *resp = kna_call(call->admin, node, KP_API_DELETE_RECORDS, -1, -1, &req, call->deadline,
                              "DeleteRecords", &err, why, why_size);
    kn_free(buf);
    kna_topic_groups_free(&g);
    if (!resp)
        return kna_leader_failed(call, node, err, why);
    int rc = 0;
    call->answered = true;
    const kp_DeleteRecordsResponse *body = resp->body;
    for (int32_t k = 0; k < body->topics.count && !rc; k++) {
        const kp_DeleteRecordsResponse_DeleteRecordsTopicResult *t = &body->topics.items[k];
        for (int32_t p = 0; p < t->partitions.count && !rc; p++) {
            const kp_DeleteRecordsResponse_DeleteRecordsPartitionResult *rp = &t->partitions.items[p];
            ptrdiff_t i = kna_leader_find(call, node, t->name, rp->partition_index);
            bool done;
            if (i < 0 || (rc = kna_leader_code(call, (size_t)i, rp->error_code, NULL, &done)) != 0 || !done)
                continue;
            res->vals[i].offset = rp->low_watermark;
        }
    }
    knw_resp_free(resp);
    return rc;
}

int kn_admin_delete_records(kn_admin *admin, const kn_topic_partition_list *before, int timeout_ms,
                            kn_offset_results **resultsp, char *errstr, size_t errstr_size) {
    static const char fn[] = "kn_admin_delete_records";
    if (!admin || !before || !resultsp) {
        kn_errstr_set(errstr, errstr_size, "%s: invalid argument", fn);
        return KN_ERR__INVALID_ARG;
    }
    *resultsp = NULL;
    return kna_offsets_call(admin, fn, before, timeout_ms, kna_delete_send, 0, resultsp, errstr, errstr_size);
}
