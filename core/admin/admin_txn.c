/*
 * admin_txn.c: describe_transactions (DescribeTransactions, ids batched
 * per transaction coordinator) and fence_producers (InitProducerId per
 * transactional id at its coordinator, as Java's FenceProducersHandler),
 * both driven by kna_group_run with the transactional-id key type, and
 * their result object kn_txn_descriptions.
 */
#include <string.h>

#include "admin/admin.h"
#include "error.h"
#include "kafka_native_consumer.h"
#include "kn_alloc.h"
#include "proto/generated/kp_apis.h"
#include "proto/generated/kp_describe_transactions.h"
#include "proto/generated/kp_init_producer_id.h"
#include "wire/coordinator.h"

_Static_assert(sizeof(kp_DescribeTransactionsRequest) <= KNA_GROUP_REQ_MAX, "request room");
_Static_assert(sizeof(kp_InitProducerIdRequest) <= KNA_GROUP_REQ_MAX, "request room");

typedef struct kna_txn_desc {
    char *id;
    int err;
    char *message;
    int32_t coordinator;
    char *state;
    int64_t producer_id;
    int32_t producer_epoch;
    int32_t timeout_ms;
    int64_t start_time_ms;
    kn_topic_partition_list *parts;
} kna_txn_desc;

struct kn_txn_descriptions {
    kna_txn_desc *items;
    size_t count;
};

/* ---- the result object --------------------------------------------------- */

void kn_txn_descriptions_destroy(kn_txn_descriptions *d) {
    if (!d)
        return;
    for (size_t i = 0; i < d->count; i++) {
        kn_free(d->items[i].id);
        kn_free(d->items[i].message);
        kn_free(d->items[i].state);
        kn_topic_partition_list_destroy(d->items[i].parts);
    }
    kn_free(d->items);
    kn_free(d);
}

static const kna_txn_desc *kna_td(const kn_txn_descriptions *d, size_t i) {
    return d && i < d->count ? &d->items[i] : NULL;
}

size_t kn_txn_descriptions_count(const kn_txn_descriptions *d) { return d ? d->count : 0; }

const char *kn_txn_descriptions_id(const kn_txn_descriptions *d, size_t i) {
    const kna_txn_desc *x = kna_td(d, i);
    return x ? x->id : NULL;
}

int kn_txn_descriptions_error(const kn_txn_descriptions *d, size_t i) {
    const kna_txn_desc *x = kna_td(d, i);
    return x ? x->err : KN_ERR__INVALID_ARG;
}

const char *kn_txn_descriptions_error_message(const kn_txn_descriptions *d, size_t i) {
    const kna_txn_desc *x = kna_td(d, i);
    if (!x || !x->err)
        return NULL;
    return x->message ? x->message : kn_err_message(x->err);
}

int32_t kn_txn_descriptions_coordinator(const kn_txn_descriptions *d, size_t i) {
    const kna_txn_desc *x = kna_td(d, i);
    return x ? x->coordinator : -1;
}

const char *kn_txn_descriptions_state(const kn_txn_descriptions *d, size_t i) {
    const kna_txn_desc *x = kna_td(d, i);
    return x ? x->state : NULL;
}

int64_t kn_txn_descriptions_producer_id(const kn_txn_descriptions *d, size_t i) {
    const kna_txn_desc *x = kna_td(d, i);
    return x ? x->producer_id : -1;
}

int32_t kn_txn_descriptions_producer_epoch(const kn_txn_descriptions *d, size_t i) {
    const kna_txn_desc *x = kna_td(d, i);
    return x ? x->producer_epoch : -1;
}

int32_t kn_txn_descriptions_timeout_ms(const kn_txn_descriptions *d, size_t i) {
    const kna_txn_desc *x = kna_td(d, i);
    return x ? x->timeout_ms : -1;
}

int64_t kn_txn_descriptions_start_time_ms(const kn_txn_descriptions *d, size_t i) {
    const kna_txn_desc *x = kna_td(d, i);
    return x ? x->start_time_ms : -1;
}

const kn_topic_partition_list *kn_txn_descriptions_partitions(const kn_txn_descriptions *d, size_t i) {
    const kna_txn_desc *x = kna_td(d, i);
    return x ? x->parts : NULL;
}

/* ---- shared ---------------------------------------------------------------- */

static kn_str kna_cstr(const char *s) {
    kn_str out = {s, s ? (int32_t)strlen(s) : -1};
    return out;
}

static bool kna_check_ids(const char *const *ids, size_t n, const char *fn, char *errstr,
                          size_t errstr_size) {
    if (n && !ids) {
        kn_errstr_set(errstr, errstr_size, "%s: ids is NULL", fn);
        return false;
    }
    for (size_t i = 0; i < n; i++)
        if (!ids[i] || !ids[i][0]) {
            kn_errstr_set(errstr, errstr_size, "%s: transactional id %zu is %s", fn, i,
                          ids[i] ? "empty" : "NULL");
            return false;
        }
    return true;
}

/* Items (and a descriptions object with one entry per item, ids copied)
 * for the distinct ids; NULL on no memory. */
static kna_group_item *kna_txn_items(const char *const *ids, size_t n, size_t *np, kn_txn_descriptions **dp) {
    const char **names = kn_calloc(n ? n : 1, sizeof(*names));
    kna_group_item *items = kn_calloc(n ? n : 1, sizeof(*items));
    kn_txn_descriptions *d = kn_calloc(1, sizeof(*d));
    if (!names || !items || !d || !(d->items = kn_calloc(n ? n : 1, sizeof(*d->items))))
        goto fail;
    *np = kna_distinct(ids, n, names);
    for (size_t i = 0; i < *np; i++) {
        kna_txn_desc *x = &d->items[d->count++];
        x->coordinator = -1;
        x->producer_id = x->start_time_ms = -1;
        x->producer_epoch = x->timeout_ms = -1;
        if (!(x->id = kn_strdup(names[i])))
            goto fail;
        items[i].group = x->id;
        items[i].node = -1;
        items[i].pending = true;
    }
    kn_free(names);
    *dp = d;
    return items;
fail:
    kn_free(names);
    kn_free(items);
    kn_txn_descriptions_destroy(d);
    return NULL;
}

/* Runs call over items and moves each item's outcome into d. */
static int kna_txn_finish(kna_group_call *call, kn_txn_descriptions *d, char *errstr, size_t errstr_size) {
    int err = kna_group_run(call, errstr, errstr_size);
    for (size_t i = 0; i < call->count; i++)
        kna_take_item_error(&call->items[i], &d->items[i].err, &d->items[i].message);
    kna_group_items_clear(call->items, call->count);
    return err;
}

/* ---- describe_transactions -------------------------------------------------- */

static int kna_dtxn_build(kna_group_call *call, const bool *sel, void *reqv, void **bufp) {
    kp_DescribeTransactionsRequest *req = reqv;
    kp_DescribeTransactionsRequest_init(req);
    size_t n = 0;
    for (size_t i = 0; i < call->count; i++)
        n += sel[i];
    kn_str *ids = kn_calloc(n ? n : 1, sizeof(*ids));
    if (!ids)
        return KN_ERR__NOMEM;
    size_t k = 0;
    for (size_t i = 0; i < call->count; i++)
        if (sel[i])
            ids[k++] = kna_cstr(call->items[i].group);
    req->transactional_ids.items = ids;
    req->transactional_ids.count = (int32_t)n;
    *bufp = ids;
    return 0;
}

static int kna_dtxn_absorb(kna_group_call *call, const bool *sel, const knw_resp *resp) {
    kn_txn_descriptions *d = call->ctx;
    const kp_DescribeTransactionsResponse *body = resp->body;
    for (int32_t k = 0; k < body->transaction_states.count; k++) {
        const kp_DescribeTransactionsResponse_TransactionState *ts = &body->transaction_states.items[k];
        ptrdiff_t i = kna_group_find(call, sel, ts->transactional_id);
        if (i < 0)
            continue;
        kn_str none = {NULL, -1};
        if (kna_group_answer(call, (size_t)i, ts->error_code, none))
            return KN_ERR__NOMEM;
        if (ts->error_code)
            continue;
        kna_txn_desc *x = &d->items[i];
        bool ok = true;
        kn_free(x->state);
        x->state = kna_strdup_str(ts->transaction_state, &ok);
        x->coordinator = call->items[i].node;
        x->producer_id = ts->producer_id;
        x->producer_epoch = ts->producer_epoch;
        x->timeout_ms = ts->transaction_timeout_ms;
        x->start_time_ms = ts->transaction_start_time_ms;
        kn_topic_partition_list_destroy(x->parts);
        if (!ok || !(x->parts = kn_topic_partition_list_new()))
            return KN_ERR__NOMEM;
        for (int32_t t = 0; t < ts->topics.count; t++) {
            const kp_DescribeTransactionsResponse_TopicData *td = &ts->topics.items[t];
            char *topic = kna_strdup_str(td->topic, &ok);
            for (int32_t p = 0; ok && topic && p < td->partitions.count; p++)
                ok = kn_topic_partition_list_add(x->parts, topic, td->partitions.items[p]) >= 0;
            kn_free(topic);
            if (!ok)
                return KN_ERR__NOMEM;
        }
    }
    return 0;
}

int kn_admin_describe_transactions(kn_admin *admin, const char *const *ids, size_t count, int timeout_ms,
                                   kn_txn_descriptions **descp, char *errstr, size_t errstr_size) {
    static const char fn[] = "kn_admin_describe_transactions";
    if (!admin || !descp || !kna_check_ids(ids, count, fn, errstr, errstr_size)) {
        if (!admin || !descp)
            kn_errstr_set(errstr, errstr_size, "%s: invalid argument", fn);
        return KN_ERR__INVALID_ARG;
    }
    *descp = NULL;
    size_t n = 0;
    kn_txn_descriptions *d = NULL;
    kna_group_item *items = kna_txn_items(ids, count, &n, &d);
    if (!items) {
        kn_errstr_set(errstr, errstr_size, "%s: out of memory", fn);
        return KN_ERR__NOMEM;
    }
    kna_group_call call = {.admin = admin,
                           .key_type = KNW_COORD_TXN,
                           .deadline = kna_deadline(admin, timeout_ms),
                           .what = "DescribeTransactions",
                           .api_key = KP_API_DESCRIBE_TRANSACTIONS,
                           .min_version = -1,
                           .max_version = -1,
                           .batch = true,
                           .items = items,
                           .count = n,
                           .ctx = d,
                           .build = kna_dtxn_build,
                           .absorb = kna_dtxn_absorb};
    int err = kna_txn_finish(&call, d, errstr, errstr_size);
    kn_free(items);
    if (err) {
        kn_txn_descriptions_destroy(d);
        return err;
    }
    *descp = d;
    return KN_OK;
}

/* ---- fence_producers ---------------------------------------------------------- */

typedef struct kna_fence_ctx {
    kn_txn_descriptions *d;
    int32_t txn_timeout_ms;
} kna_fence_ctx;

static int kna_fence_build(kna_group_call *call, const bool *sel, void *reqv, void **bufp) {
    kna_fence_ctx *ctx = call->ctx;
    kp_InitProducerIdRequest *req = reqv;
    kp_InitProducerIdRequest_init(req);
    *bufp = NULL;
    for (size_t i = 0; i < call->count; i++)
        if (sel[i]) {
            req->transactional_id = kna_cstr(call->items[i].group);
            break;
        }
    /* No producer id and epoch: the coordinator bumps the epoch of
     * whatever producer holds the id, fencing it. */
    req->producer_id = -1;
    req->producer_epoch = -1;
    req->transaction_timeout_ms = ctx->txn_timeout_ms;
    return 0;
}

static int kna_fence_absorb(kna_group_call *call, const bool *sel, const knw_resp *resp) {
    kna_fence_ctx *ctx = call->ctx;
    const kp_InitProducerIdResponse *body = resp->body;
    for (size_t i = 0; i < call->count; i++) {
        if (!sel[i])
            continue;
        kn_str none = {NULL, -1};
        if (kna_group_answer(call, i, body->error_code, none))
            return KN_ERR__NOMEM;
        if (!body->error_code) {
            ctx->d->items[i].coordinator = call->items[i].node;
            ctx->d->items[i].producer_id = body->producer_id;
            ctx->d->items[i].producer_epoch = body->producer_epoch;
        }
        break;
    }
    return 0;
}

int kn_admin_fence_producers(kn_admin *admin, const char *const *ids, size_t count,
                             int transaction_timeout_ms, int timeout_ms, kn_txn_descriptions **resultsp,
                             char *errstr, size_t errstr_size) {
    static const char fn[] = "kn_admin_fence_producers";
    if (!admin || !resultsp || !kna_check_ids(ids, count, fn, errstr, errstr_size)) {
        if (!admin || !resultsp)
            kn_errstr_set(errstr, errstr_size, "%s: invalid argument", fn);
        return KN_ERR__INVALID_ARG;
    }
    *resultsp = NULL;
    size_t n = 0;
    kn_txn_descriptions *d = NULL;
    kna_group_item *items = kna_txn_items(ids, count, &n, &d);
    if (!items) {
        kn_errstr_set(errstr, errstr_size, "%s: out of memory", fn);
        return KN_ERR__NOMEM;
    }
    kna_fence_ctx ctx = {d, transaction_timeout_ms > 0 ? transaction_timeout_ms
                            : timeout_ms > 0           ? timeout_ms
                                                       : admin->default_timeout_ms};
    kna_group_call call = {.admin = admin,
                           .key_type = KNW_COORD_TXN,
                           .deadline = kna_deadline(admin, timeout_ms),
                           .what = "InitProducerId",
                           .api_key = KP_API_INIT_PRODUCER_ID,
                           .min_version = -1,
                           .max_version = -1,
                           .batch = false,
                           .items = items,
                           .count = n,
                           .ctx = &ctx,
                           .build = kna_fence_build,
                           .absorb = kna_fence_absorb};
    int err = kna_txn_finish(&call, d, errstr, errstr_size);
    kn_free(items);
    if (err) {
        kn_txn_descriptions_destroy(d);
        return err;
    }
    *resultsp = d;
    return KN_OK;
}
