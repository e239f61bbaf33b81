/*
 * admin_offsets.c: list_offsets (ListOffsets) and delete_records
 * (DeleteRecords), both per partition leader, and their result object.
 *
 * Routing as Java's PartitionLeaderStrategy: a Metadata request for the
 * pending partitions' topics finds each leader; one ListOffsets goes to
 * each leader with all of its partitions; the answers are merged. A
 * partition answered with a retriable error (leader moved, epoch
 * fenced, no leader yet) goes round again, after a backoff, with fresh
 * metadata, until the deadline; a missing topic or partition and every
 * other error are final for that partition only.
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
#include "proto/generated/kp_metadata.h"

typedef struct kna_offset_item {
    char *topic;
    int32_t partition;
    int64_t spec;
    int32_t node; /* leader, -1 unknown */
    bool pending;
    int err;
    char *message;
    int64_t offset, timestamp;
    int32_t leader_epoch;
} kna_offset_item;

struct kn_offset_results {
    kna_offset_item *items;
    size_t count;
};

/* ---- the result object ----------------------------------------------- */

#define KNA_OFF(r, i) ((r) && (i) < (r)->count ? &(r)->items[i] : NULL)

size_t kn_offset_results_count(const kn_offset_results *r) { return r ? r->count : 0; }

const char *kn_offset_results_topic(const kn_offset_results *r, size_t i) {
    const kna_offset_item *x = KNA_OFF(r, i);
    return x ? x->topic : NULL;
}

int32_t kn_offset_results_partition(const kn_offset_results *r, size_t i) {
    const kna_offset_item *x = KNA_OFF(r, i);
    return x ? x->partition : -1;
}

int kn_offset_results_error(const kn_offset_results *r, size_t i) {
    const kna_offset_item *x = KNA_OFF(r, i);
    return x ? x->err : KN_ERR__INVALID_ARG;
}

const char *kn_offset_results_error_message(const kn_offset_results *r, size_t i) {
    const kna_offset_item *x = KNA_OFF(r, i);
    if (!x || !x->err)
        return NULL;
    return x->message ? x->message : kn_err_message(x->err);
}

int64_t kn_offset_results_offset(const kn_offset_results *r, size_t i) {
    const kna_offset_item *x = KNA_OFF(r, i);
    return x ? x->offset : -1;
}

int64_t kn_offset_results_timestamp(const kn_offset_results *r, size_t i) {
    const kna_offset_item *x = KNA_OFF(r, i);
    return x ? x->timestamp : -1;
}

int32_t kn_offset_results_leader_epoch(const kn_offset_results *r, size_t i) {
    const kna_offset_item *x = KNA_OFF(r, i);
    return x ? x->leader_epoch : -1;
}

void kn_offset_results_destroy(kn_offset_results *r) {
    if (!r)
        return;
    for (size_t i = 0; i < r->count; i++) {
        kn_free(r->items[i].topic);
        kn_free(r->items[i].message);
    }
    kn_free(r->items);
    kn_free(r);
}

/* ---- the call -------------------------------------------------------- */

static kn_str kna_cstr(const char *s) {
    kn_str out = {s, s ? (int32_t)strlen(s) : -1};
    return out;
}

static bool kna_is(kn_str s, const char *c) {
    return s.len >= 0 && strlen(c) == (size_t)s.len && memcmp(c, s.ptr, (size_t)s.len) == 0;
}

/* Ends item x with err (message copied, may be NULL). */
static int kna_offset_fail(kna_offset_item *x, int err, const char *message) {
    x->pending = false;
    x->err = err;
    kn_free(x->message);
    x->message = message ? kn_strdup(message) : NULL;
    return message && !x->message ? KN_ERR__NOMEM : 0;
}

/* Retried partition errors: the leader is elsewhere or not ready. */
static bool kna_offset_retriable(int err) {
    return err == KN_ERR_NOT_LEADER_OR_FOLLOWER || err == KN_ERR_LEADER_NOT_AVAILABLE ||
           err == KN_ERR_UNKNOWN_LEADER_EPOCH || err == KN_ERR_FENCED_LEADER_EPOCH ||
           err == KN_ERR_OFFSET_NOT_AVAILABLE || err == KN_ERR_REPLICA_NOT_AVAILABLE;
}

/* A leader that did not answer: its pending partitions end with the
 * request's error (why). */
static int kna_offset_fail_node(kn_offset_results *res, int32_t node, int err, const char *why) {
    int rc = 0;
    for (size_t i = 0; i < res->count && !rc; i++)
        if (res->items[i].pending && res->items[i].node == node)
            rc = kna_offset_fail(&res->items[i], err, why);
    return rc;
}

/* The pending items node's answer for topic/partition settles. */
static bool kna_offset_answers(const kna_offset_item *x, int32_t node, kn_str topic, int32_t partition) {
    return x->pending && x->node == node && x->partition == partition && kna_is(topic, x->topic);
}

/* A partition's error code from its leader: a retriable one sends x
 * back to the leader lookup, another ends it. Returns 0 or
 * KN_ERR__NOMEM; *done says x still wants the answer's values. */
static int kna_offset_code(kna_offset_item *x, int16_t code, bool *done) {
    *done = false;
    if (kna_offset_retriable(code)) {
        x->err = code;
        x->node = -1; /* look the leader up again */
        return 0;
    }
    if (code)
        return kna_offset_fail(x, code, NULL);
    x->pending = false;
    x->err = 0;
    *done = true;
    return 0;
}

/* After a leader's answer: a partition it left out is asked again. */
static void kna_offset_requeue(kn_offset_results *res, int32_t node) {
    for (size_t i = 0; i < res->count; i++)
        if (res->items[i].pending && res->items[i].node == node)
            res->items[i].node = -1;
}

/* Finds the leaders of the pending partitions in one Metadata request.
 * Returns 0, KN_ERR__NOMEM, or the request's error (why set). */
static int kna_offset_leaders(kn_admin *admin, kn_offset_results *res, int64_t deadline, bool *answered,
                              char *why, size_t why_size) {
    const char **names = kn_calloc(res->count ? res->count : 1, sizeof(*names));
    if (!names)
        return KN_ERR__NOMEM;
    size_t n = 0;
    for (size_t i = 0; i < res->count; i++) {
        if (!res->items[i].pending)
            continue;
        bool seen = false;
        for (size_t j = 0; j < n && !seen; j++)
            seen = strcmp(names[j], res->items[i].topic) == 0;
        if (!seen)
            names[n++] = res->items[i].topic;
    }
    int err = 0;
    knw_resp *resp = kna_metadata(admin, names, n, deadline, &err, why, why_size);
    kn_free(names);
    if (!resp)
        return err;
    *answered = true;
    const kp_MetadataResponse *md = resp->body;
    int rc = 0;
    for (size_t i = 0; i < res->count && !rc; i++) {
        kna_offset_item *x = &res->items[i];
        if (!x->pending)
            continue;
        x->node = -1;
        const kp_MetadataResponse_MetadataResponseTopic *t = NULL;
        for (int32_t k = 0; k < md->topics.count && !t; k++)
            if (kna_is(md->topics.items[k].name, x->topic))
                t = &md->topics.items[k];
        int terr = t ? t->error_code : KN_ERR_UNKNOWN_TOPIC_OR_PARTITION;
        if (terr && !kna_offset_retriable(terr)) {
            rc = kna_offset_fail(x, terr, NULL);
            continue;
        }
        const kp_MetadataResponse_MetadataResponsePartition *p = NULL;
        for (int32_t k = 0; t && !terr && k < t->partitions.count && !p; k++)
            if (t->partitions.items[k].partition_index == x->partition)
                p = &t->partitions.items[k];
        if (t && !terr && !p) {
            char msg[160];
            snprintf(msg, sizeof(msg), "Partition %d of topic %.100s does not exist", (int)x->partition,
                     x->topic);
            rc = kna_offset_fail(x, KN_ERR_UNKNOWN_TOPIC_OR_PARTITION, msg);
            continue;
        }
        x->err = terr ? terr : KN_ERR_LEADER_NOT_AVAILABLE; /* until a leader answers */
        if (p && p->leader_id >= 0)
            x->node = p->leader_id;
    }
    knw_resp_free(resp);
    return rc;
}

/* The ListOffsets version the pending specs of node need at least. */
static int16_t kna_offset_min_version(const kn_offset_results *res, int32_t node) {
    int16_t v = -1;
    for (size_t i = 0; i < res->count; i++) {
        const kna_offset_item *x = &res->items[i];
        if (!x->pending || x->node != node)
            continue;
        int16_t need = x->spec == KN_OFFSET_SPEC_MAX_TIMESTAMP    ? 7
                       : x->spec == KN_OFFSET_SPEC_EARLIEST_LOCAL ? 8
                       : x->spec == KN_OFFSET_SPEC_LATEST_TIERED  ? 9
                                                                  : -1;
        if (need > v)
            v = need;
    }
    return v;
}

/* Sends node's partitions; absorbs the answers. */
static int kna_offset_send(kn_admin *admin, kn_offset_results *res, int32_t node, int flags, int64_t deadline,
                           bool *answered, int *call_err, char *why, size_t why_size) {
    size_t n = 0;
    for (size_t i = 0; i < res->count; i++)
        n += res->items[i].pending && res->items[i].node == node;
    char *buf = kn_calloc(1, n * (sizeof(kp_ListOffsetsRequest_ListOffsetsTopic) +
                                  sizeof(kp_ListOffsetsRequest_ListOffsetsPartition)) +
                                 1);
    if (!buf)
        return KN_ERR__NOMEM;
    kp_ListOffsetsRequest_ListOffsetsTopic *topics = (void *)buf;
    kp_ListOffsetsRequest_ListOffsetsPartition *parts = (void *)(topics + n);
    kp_ListOffsetsRequest req;
    kp_ListOffsetsRequest_init(&req);
    req.replica_id = -1;
    req.isolation_level = (flags & KN_ADMIN_READ_COMMITTED) ? 1 : 0;
    req.timeout_ms = kna_remaining(deadline);
    req.topics.items = topics;
    for (size_t i = 0; i < res->count; i++) {
        const kna_offset_item *x = &res->items[i];
        if (!x->pending || x->node != node)
            continue;
        kp_ListOffsetsRequest_ListOffsetsTopic *t = NULL;
        for (int32_t k = 0; k < req.topics.count && !t; k++)
            if (strcmp(topics[k].name.ptr, x->topic) == 0)
                t = &topics[k];
        if (!t) {
            /* A topic's partitions are contiguous in parts: appended as
             * met, so gather them now. */
            t = &topics[req.topics.count++];
            kp_ListOffsetsRequest_ListOffsetsTopic_init(t);
            t->name = kna_cstr(x->topic);
            t->partitions.items = parts;
            for (size_t j = i; j < res->count; j++) {
                const kna_offset_item *y = &res->items[j];
                if (!y->pending || y->node != node || strcmp(y->topic, x->topic) != 0)
                    continue;
                kp_ListOffsetsRequest_ListOffsetsPartition_init(parts);
                parts->partition_index = y->partition;
                parts->current_leader_epoch = -1;
                (parts++)->timestamp = y->spec;
                t->partitions.count++;
            }
        }
    }
    int err = 0;
    knw_resp *resp = kna_call(admin, node, KP_API_LIST_OFFSETS, kna_offset_min_version(res, node), -1, &req,
                              deadline, "ListOffsets", &err, why, why_size);
    kn_free(buf);
    if (!resp) {
        *call_err = err;
        return kna_offset_fail_node(res, node, err, why);
    }
    int rc = 0;
    *answered = true;
    const kp_ListOffsetsResponse *body = resp->body;
    for (int32_t k = 0; k < body->topics.count && !rc; k++) {
        const kp_ListOffsetsResponse_ListOffsetsTopicResponse *t = &body->topics.items[k];
        for (int32_t p = 0; p < t->partitions.count && !rc; p++) {
            const kp_ListOffsetsResponse_ListOffsetsPartitionResponse *rp = &t->partitions.items[p];
            for (size_t i = 0; i < res->count && !rc; i++) {
                kna_offset_item *x = &res->items[i];
                bool done;
                if (!kna_offset_answers(x, node, t->name, rp->partition_index))
                    continue;
                rc = kna_offset_code(x, rp->error_code, &done);
                if (done) {
                    x->offset = rp->offset;
                    x->timestamp = rp->timestamp;
                    x->leader_epoch = rp->leader_epoch;
                }
            }
        }
    }
    knw_resp_free(resp);
    kna_offset_requeue(res, node);
    return rc;
}

/* Sends one leader's pending partitions and absorbs the answers. */
typedef int kna_leader_send_fn(kn_admin *admin, kn_offset_results *res, int32_t node, int flags,
                               int64_t deadline, bool *answered, int *call_err, char *why, size_t why_size);

/* A results object with one pending entry per distinct partition of
 * specs (the first entry wins), spec taken from the entry's offset. */
static kn_offset_results *kna_leader_items(const kn_topic_partition_list *specs) {
    size_t n = kn_topic_partition_list_count(specs);
    kn_offset_results *res = kn_calloc(1, sizeof(*res));
    if (!res || !(res->items = kn_calloc(n ? n : 1, sizeof(*res->items)))) {
        kn_free(res);
        return NULL;
    }
    for (size_t i = 0; i < n; i++) {
        const char *t = kn_topic_partition_list_topic(specs, i);
        int32_t p = kn_topic_partition_list_partition(specs, i);
        bool seen = false;
        for (size_t j = 0; j < res->count && !seen; j++)
            seen = res->items[j].partition == p && strcmp(res->items[j].topic, t) == 0;
        if (seen)
            continue;
        kna_offset_item *x = &res->items[res->count++];
        if (!(x->topic = kn_strdup(t))) {
            kn_offset_results_destroy(res);
            return NULL;
        }
        x->partition = p;
        x->spec = kn_topic_partition_list_offset(specs, i);
        x->node = -1;
        x->pending = true;
        x->offset = x->timestamp = -1;
        x->leader_epoch = -1;
    }
    return res;
}

/* The per-leader loop shared by list_offsets and delete_records: leaders
 * from metadata, one request per leader, retriable partitions round
 * again after a backoff until the deadline. Returns 0 or the whole
 * call's error (nothing answered) with errstr set. */
static int kna_leader_run(kn_admin *admin, kn_offset_results *res, int flags, int64_t deadline,
                          kna_leader_send_fn *send, const char *fn, char *errstr, size_t errstr_size) {
    bool answered = false;
    int call_err = 0, err = 0;
    char why[512] = "";
    for (int attempt = 0;; attempt++) {
        bool any = false;
        for (size_t i = 0; i < res->count; i++)
            any = any || res->items[i].pending;
        if (!any)
            break;
        if (kna_remaining(deadline) <= 0) {
            for (size_t i = 0; i < res->count; i++)
                if (res->items[i].pending) {
                    res->items[i].pending = false;
                    res->items[i].err = KN_ERR__TIMED_OUT;
                }
            break;
        }
        if (attempt > 0)
            kna_backoff(admin, attempt - 1, deadline);
        err = kna_offset_leaders(admin, res, deadline, &answered, why, sizeof(why));
        if (err == KN_ERR__NOMEM)
            goto nomem;
        if (err) {
            call_err = err;
            for (size_t i = 0; i < res->count; i++)
                if (res->items[i].pending && kna_offset_fail(&res->items[i], err, why))
                    goto nomem;
            break;
        }
        for (;;) {
            int32_t node = -1;
            for (size_t i = 0; i < res->count && node < 0; i++)
                if (res->items[i].pending && res->items[i].node >= 0)
                    node = res->items[i].node;
            if (node < 0)
                break;
            if (send(admin, res, node, flags, deadline, &answered, &call_err, why, sizeof(why)))
                goto nomem;
        }
    }
    if (!answered && call_err) {
        kn_errstr_set(errstr, errstr_size, "%s", why);
        return call_err;
    }
    return 0;
nomem:
    kn_errstr_set(errstr, errstr_size, "%s: out of memory", fn);
    return KN_ERR__NOMEM;
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
    int64_t deadline = kna_deadline(admin, timeout_ms);
    kn_offset_results *res = kna_leader_items(specs);
    if (!res) {
        kn_errstr_set(errstr, errstr_size, "%s: out of memory", fn);
        return KN_ERR__NOMEM;
    }
    int err = kna_leader_run(admin, res, flags, deadline, kna_offset_send, fn, errstr, errstr_size);
    if (err) {
        kn_offset_results_destroy(res);
        return err;
    }
    *resultsp = res;
    return KN_OK;
}

/* ---- delete_records -------------------------------------------------- */

static int kna_delete_send(kn_admin *admin, kn_offset_results *res, int32_t node, int flags, int64_t deadline,
                           bool *answered, int *call_err, char *why, size_t why_size) {
    (void)flags;
    size_t n = 0;
    for (size_t i = 0; i < res->count; i++)
        n += res->items[i].pending && res->items[i].node == node;
    char *buf = kn_calloc(1, n * (sizeof(kp_DeleteRecordsRequest_DeleteRecordsTopic) +
                                  sizeof(kp_DeleteRecordsRequest_DeleteRecordsPartition)) +
                                 1);
    if (!buf)
        return KN_ERR__NOMEM;
    kp_DeleteRecordsRequest_DeleteRecordsTopic *topics = (void *)buf;
    kp_DeleteRecordsRequest_DeleteRecordsPartition *parts = (void *)(topics + n);
    kp_DeleteRecordsRequest req;
    kp_DeleteRecordsRequest_init(&req);
    req.timeout_ms = kna_remaining(deadline);
    req.topics.items = topics;
    for (size_t i = 0; i < res->count; i++) {
        const kna_offset_item *x = &res->items[i];
        if (!x->pending || x->node != node)
            continue;
        bool seen = false;
        for (int32_t k = 0; k < req.topics.count && !seen; k++)
            seen = strcmp(topics[k].name.ptr, x->topic) == 0;
        if (seen)
            continue;
        kp_DeleteRecordsRequest_DeleteRecordsTopic *t = &topics[req.topics.count++];
        kp_DeleteRecordsRequest_DeleteRecordsTopic_init(t);
        t->name = kna_cstr(x->topic);
        t->partitions.items = parts;
        for (size_t j = i; j < res->count; j++) {
            const kna_offset_item *y = &res->items[j];
            if (!y->pending || y->node != node || strcmp(y->topic, x->topic) != 0)
                continue;
            kp_DeleteRecordsRequest_DeleteRecordsPartition_init(parts);
            parts->partition_index = y->partition;
            (parts++)->offset = y->spec;
            t->partitions.count++;
        }
    }
    int err = 0;
    knw_resp *resp = kna_call(admin, node, KP_API_DELETE_RECORDS, -1, -1, &req, deadline, "DeleteRecords",
                              &err, why, why_size);
    kn_free(buf);
    if (!resp) {
        *call_err = err;
        return kna_offset_fail_node(res, node, err, why);
    }
    int rc = 0;
    *answered = true;
    const kp_DeleteRecordsResponse *body = resp->body;
    for (int32_t k = 0; k < body->topics.count && !rc; k++) {
        const kp_DeleteRecordsResponse_DeleteRecordsTopicResult *t = &body->topics.items[k];
        for (int32_t p = 0; p < t->partitions.count && !rc; p++) {
            const kp_DeleteRecordsResponse_DeleteRecordsPartitionResult *rp = &t->partitions.items[p];
            for (size_t i = 0; i < res->count && !rc; i++) {
                kna_offset_item *x = &res->items[i];
                bool done;
                if (!kna_offset_answers(x, node, t->name, rp->partition_index))
                    continue;
                rc = kna_offset_code(x, rp->error_code, &done);
                if (done)
                    x->offset = rp->low_watermark;
            }
        }
    }
    knw_resp_free(resp);
    kna_offset_requeue(res, node);
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
    kn_offset_results *res = kna_leader_items(before);
    if (!res) {
        kn_errstr_set(errstr, errstr_size, "%s: out of memory", fn);
        return KN_ERR__NOMEM;
    }
    int err = kna_leader_run(admin, res, 0, kna_deadline(admin, timeout_ms), kna_delete_send, fn, errstr,
                             errstr_size);
    if (err) {
        kn_offset_results_destroy(res);
        return err;
    }
    *resultsp = res;
    return KN_OK;
}
