/*
 * admin_share_groups.c: the share-group calls (KIP-932), as Java's
 * KafkaAdminClient does them: describe_share_groups
 * (ShareGroupDescribe), list_share_group_offsets
 * (DescribeShareGroupOffsets, several groups per request),
 * alter_share_group_offsets (AlterShareGroupOffsets),
 * delete_share_group_offsets (DeleteShareGroupOffsets) and
 * delete_share_groups (DeleteGroups). Routing and coordinator retries are
 * kna_group_run's; the steps every group type shares are
 * admin_group_describe.c's (describe) and admin_group_offsets.c's
 * (offsets): this file holds the share requests and answers.
 */
#include <stdio.h>
#include <string.h>

#include "admin/admin.h"
#include "error.h"
#include "kafka_native_consumer.h"
#include "kn_alloc.h"
#include "proto/generated/kp_alter_share_group_offsets.h"
#include "proto/generated/kp_apis.h"
#include "proto/generated/kp_delete_share_group_offsets.h"
#include "proto/generated/kp_describe_share_group_offsets.h"
#include "proto/generated/kp_share_group_describe.h"

_Static_assert(sizeof(kp_ShareGroupDescribeRequest) <= KNA_GROUP_REQ_MAX, "request room");
_Static_assert(sizeof(kp_DescribeShareGroupOffsetsRequest) <= KNA_GROUP_REQ_MAX, "request room");
_Static_assert(sizeof(kp_AlterShareGroupOffsetsRequest) <= KNA_GROUP_REQ_MAX, "request room");
_Static_assert(sizeof(kp_DeleteShareGroupOffsetsRequest) <= KNA_GROUP_REQ_MAX, "request room");

static kn_str kna_cstr(const char *s) {
    kn_str out = {s, s ? (int32_t)strlen(s) : -1};
    return out;
}

static const kn_str kna_none = {NULL, -1};

/* A topic name slice as a new C string ("" for null); NULL on no memory. */
static char *kna_topic_dup(kn_str s) {
    return kn_strndup(s.ptr ? s.ptr : "", s.len > 0 ? (size_t)s.len : 0);
}

/* ---- describe_share_groups ------------------------------------------- */

static kn_topic_partition_list *kna_share_assignment(const kp_ShareGroupDescribeResponse_Assignment *a) {
    kn_topic_partition_list *l = kn_topic_partition_list_new();
    for (int32_t t = 0; l && t < a->topic_partitions.count; t++) {
        const kp_ShareGroupDescribeResponse_TopicPartitions *tp = &a->topic_partitions.items[t];
        if (kna_tplist_add_topic(l, tp->topic_name, &tp->partitions)) {
            kn_topic_partition_list_destroy(l);
            return NULL;
        }
    }
    return l;
}

KNA_DESCRIBE_BUILD(kna_sgd_build, kp_ShareGroupDescribeRequest)

static int kna_sgd_absorb(kna_group_call *call, const bool *sel, const knw_resp *resp) {
    const kp_ShareGroupDescribeResponse *body = resp->body;
    for (int32_t k = 0; k < body->groups.count; k++) {
        const kp_ShareGroupDescribeResponse_DescribedGroup *g = &body->groups.items[k];
        kna_described_group shared = {g->group_id, g->error_code, g->error_message,
                                      g->group_state, "share", g->group_epoch,
                                      g->assignment_epoch, g->authorized_operations, g->members.count};
        int err;
        kna_group_desc *d = kna_describe_start(call, sel, resp->node_id, &shared, &err);
        if (err)
            return err;
        if (!d)
            continue;
        if (!kna_set_str(&d->assignor, g->assignor_name))
            return KN_ERR__NOMEM;
        for (int32_t m = 0; m < g->members.count; m++) {
            const kp_ShareGroupDescribeResponse_Member *gm = &g->members.items[m];
            kna_group_member *mb = &d->members[d->member_count++];
            if (kna_member_copy(mb, gm->member_id, kna_none, gm->client_id, gm->client_host, gm->member_epoch) ||
                !(mb->assignment = kna_share_assignment(&gm->assignment)))
                return KN_ERR__NOMEM;
        }
    }
    return 0;
}

int kn_admin_describe_share_groups(kn_admin *admin, const char *const *groups, size_t count, int flags,
                                   int timeout_ms, kn_group_descriptions **descp, char *errstr,
                                   size_t errstr_size) {
    kna_describe_ctx ctx = {.flags = flags};
    kna_group_call call = {.what = "ShareGroupDescribe",
                           .api_key = KP_API_SHARE_GROUP_DESCRIBE,
                           .min_version = -1,
                           .max_version = -1,
                           .build = kna_sgd_build,
                           .absorb = kna_sgd_absorb};
    return kna_describe_groups_run(admin, "kn_admin_describe_share_groups", groups, count, timeout_ms, &call,
                                   &ctx, descp, errstr, errstr_size);
}

/* ---- list_share_group_offsets ---------------------------------------- */

static int kna_dsgo_build(kna_group_call *call, const bool *sel, void *reqv, void **bufp) {
    kp_DescribeShareGroupOffsetsRequest *req = reqv;
    const kna_offsets_query *ctx = call->ctx;
    size_t entries;
    size_t ng = kna_wanted_size(call, sel, &entries);
    typedef kp_DescribeShareGroupOffsetsRequest_DescribeShareGroupOffsetsRequestGroup group_t;
    typedef kp_DescribeShareGroupOffsetsRequest_DescribeShareGroupOffsetsRequestTopic topic_t;
    size_t size = ng * sizeof(group_t) + entries * (sizeof(topic_t) + sizeof(const char *) + sizeof(int32_t));
    char *buf = kn_calloc(1, size ? size : 1);
    if (!buf)
        return KN_ERR__NOMEM;
    *bufp = buf;
    /* Structs first, then pointers, then the 4-byte partitions: aligned. */
    group_t *groups = (void *)buf;
    topic_t *topics = (void *)(groups + ng);
    const char **names = (void *)(topics + entries);
    int32_t *parts = (void *)(names + entries);
    kp_DescribeShareGroupOffsetsRequest_init(req);
    req->groups.items = groups;
    req->groups.count = (int32_t)ng;
    for (size_t i = 0; i < call->count; i++) {
        if (!sel[i])
            continue;
        group_t *g = groups++;
        kp_DescribeShareGroupOffsetsRequest_DescribeShareGroupOffsetsRequestGroup_init(g);
        g->group_id = kna_cstr(call->items[i].group);
        const kn_topic_partition_list *l = ctx->wanted[i];
        if (!l) {
            g->topics.count = -1; /* null: every partition the group has state for */
            continue;
        }
        size_t nt = kna_topics_of(l, NULL, names);
        g->topics.items = topics;
        g->topics.count = (int32_t)nt;
        for (size_t t = 0; t < nt; t++) {
            kp_DescribeShareGroupOffsetsRequest_DescribeShareGroupOffsetsRequestTopic_init(&topics[t]);
            topics[t].topic_name = kna_cstr(names[t]);
            topics[t].partitions.items = parts;
            topics[t].partitions.count = kna_partitions_of(l, names[t], parts);
            parts += topics[t].partitions.count;
        }
        topics += nt;
        names += nt;
    }
    return 0;
}

/* One group's answer into a fresh list and lag array. */
static int kna_dsgo_group(kna_group_call *call, size_t i,
                          const kp_DescribeShareGroupOffsetsResponse_DescribeShareGroupOffsetsResponseGroup *g) {
    kna_offsets_query *ctx = call->ctx;
    if (kna_group_answer(call, i, g->error_code, g->error_message))
        return KN_ERR__NOMEM;
    if (g->error_code)
        return 0;
    size_t total = 0;
    for (int32_t t = 0; t < g->topics.count; t++)
        total += (size_t)g->topics.items[t].partitions.count;
    kn_topic_partition_list *l = kn_topic_partition_list_new();
    int64_t *lags = kn_calloc(total ? total : 1, sizeof(*lags));
    if (!l || !lags)
        goto nomem;
    for (int32_t t = 0; t < g->topics.count; t++) {
        const kp_DescribeShareGroupOffsetsResponse_DescribeShareGroupOffsetsResponseTopic *rt = &g->topics.items[t];
        char *topic = kna_topic_dup(rt->topic_name);
        if (!topic)
            goto nomem;
        for (int32_t p = 0; p < rt->partitions.count; p++) {
            const kp_DescribeShareGroupOffsetsResponse_DescribeShareGroupOffsetsResponsePartition *rp =
                &rt->partitions.items[p];
            int k = kn_topic_partition_list_add(l, topic, rp->partition_index);
            if (k == KN_ERR__NOMEM) {
                kn_free(topic);
                goto nomem;
            }
            if (k < 0)
                continue; /* a name the list refuses (empty): skip */
            kn_topic_partition_list_set_offset(l, (size_t)k, rp->start_offset < 0 ? -1 : rp->start_offset);
            kn_topic_partition_list_set_leader_epoch(l, (size_t)k, rp->leader_epoch);
            kn_topic_partition_list_set_err(l, (size_t)k, rp->error_code);
            lags[k] = rp->lag;
        }
        kn_free(topic);
    }
    kn_topic_partition_list_destroy(ctx->out->items[i].parts);
    kn_free(ctx->out->items[i].lags);
    ctx->out->items[i].parts = l;
    ctx->out->items[i].lags = lags;
    return 0;
nomem:
    kn_topic_partition_list_destroy(l);
    kn_free(lags);
    return KN_ERR__NOMEM;
}

static int kna_dsgo_absorb(kna_group_call *call, const bool *sel, const knw_resp *resp) {
    const kp_DescribeShareGroupOffsetsResponse *body = resp->body;
    for (int32_t k = 0; k < body->groups.count; k++) {
        ptrdiff_t i = kna_group_find(call, sel, body->groups.items[k].group_id);
        if (i >= 0 && kna_dsgo_group(call, (size_t)i, &body->groups.items[k]))
            return KN_ERR__NOMEM;
    }
    return 0;
}

int kn_admin_list_share_group_offsets(kn_admin *admin, const kn_group_offsets_spec *specs, size_t count,
                                      int timeout_ms, kn_group_offsets **offsetsp, char *errstr,
                                      size_t errstr_size) {
    kna_group_call call = {.what = "DescribeShareGroupOffsets",
                           .api_key = KP_API_DESCRIBE_SHARE_GROUP_OFFSETS,
                           .min_version = -1,
                           .max_version = -1,
                           .build = kna_dsgo_build,
                           .absorb = kna_dsgo_absorb};
    return kna_list_offsets_run(admin, "kn_admin_list_share_group_offsets", specs, count, false, timeout_ms,
                                &call, offsetsp, errstr, errstr_size);
}

/* ---- alter_share_group_offsets --------------------------------------- */

static int kna_asgo_build(kna_group_call *call, const bool *sel, void *reqv, void **bufp) {
    (void)sel;
    kp_AlterShareGroupOffsetsRequest *req = reqv;
    const kna_partitions_ctx *ctx = call->ctx;
    const kn_topic_partition_list *l = ctx->parts;
    size_t n = kn_topic_partition_list_count(l);
    typedef kp_AlterShareGroupOffsetsRequest_AlterShareGroupOffsetsRequestTopic topic_t;
    typedef kp_AlterShareGroupOffsetsRequest_AlterShareGroupOffsetsRequestPartition part_t;
    size_t size = n * (sizeof(const char *) + sizeof(topic_t) + sizeof(part_t));
    char *buf = kn_calloc(1, size ? size : 1);
    if (!buf)
        return KN_ERR__NOMEM;
    *bufp = buf;
    const char **names = (void *)buf;
    topic_t *topics = (void *)(names + n);
    part_t *parts = (void *)(topics + n);
    kp_AlterShareGroupOffsetsRequest_init(req);
    req->group_id = kna_cstr(call->items[0].group);
    size_t nt = kna_topics_of(l, ctx->skip, names);
    req->topics.items = topics;
    req->topics.count = (int32_t)nt;
    for (size_t t = 0; t < nt; t++) {
        kp_AlterShareGroupOffsetsRequest_AlterShareGroupOffsetsRequestTopic_init(&topics[t]);
        topics[t].topic_name = kna_cstr(names[t]);
        topics[t].partitions.items = parts;
        for (size_t e = 0; e < n; e++) {
            if (ctx->skip[e] || strcmp(kn_topic_partition_list_topic(l, e), names[t]) != 0)
                continue;
            part_t *p = parts++;
            kp_AlterShareGroupOffsetsRequest_AlterShareGroupOffsetsRequestPartition_init(p);
            p->partition_index = kn_topic_partition_list_partition(l, e);
            p->start_offset = kn_topic_partition_list_offset(l, e);
            topics[t].partitions.count++;
        }
    }
    return 0;
}

static int kna_asgo_absorb(kna_group_call *call, const bool *sel, const knw_resp *resp) {
    (void)sel;
    const kp_AlterShareGroupOffsetsResponse *body = resp->body;
    kna_partitions_ctx *ctx = call->ctx;
    if (body->error_code)
        return kna_group_answer(call, 0, body->error_code, body->error_message);
    size_t n = kn_topic_partition_list_count(ctx->parts);
    for (int32_t t = 0; t < body->responses.count; t++) {
        const kp_AlterShareGroupOffsetsResponse_AlterShareGroupOffsetsResponseTopic *rt = &body->responses.items[t];
        for (int32_t p = 0; p < rt->partitions.count; p++)
            for (size_t e = 0; e < n; e++)
                if (kn_topic_partition_list_partition(ctx->parts, e) == rt->partitions.items[p].partition_index &&
                    kna_slice_is(rt->topic_name, kn_topic_partition_list_topic(ctx->parts, e)))
                    kn_topic_partition_list_set_err(ctx->parts, e, rt->partitions.items[p].error_code);
    }
    return kna_group_answer(call, 0, 0, kna_none);
}

int kn_admin_alter_share_group_offsets(kn_admin *admin, const char *group, const kn_topic_partition_list *offsets,
                                       int timeout_ms, kn_group_offsets **resultp, char *errstr,
                                       size_t errstr_size) {
    static const char fn[] = "kn_admin_alter_share_group_offsets";
    if (!admin || !group || !resultp || !offsets) {
        kn_errstr_set(errstr, errstr_size, "%s: invalid argument", fn);
        return KN_ERR__INVALID_ARG;
    }
    /* Java refuses a negative start offset before sending; here it fails
     * only its own entry. */
    kna_group_call call = {.what = "AlterShareGroupOffsets",
                           .api_key = KP_API_ALTER_SHARE_GROUP_OFFSETS,
                           .min_version = -1,
                           .max_version = -1,
                           .build = kna_asgo_build,
                           .absorb = kna_asgo_absorb};
    return kna_partition_offsets_run(admin, fn, group, offsets, true, timeout_ms, &call, resultp, errstr,
                                     errstr_size);
}

/* ---- delete_share_group_offsets -------------------------------------- */

static int kna_dlsgo_build(kna_group_call *call, const bool *sel, void *reqv, void **bufp) {
    (void)sel;
    kp_DeleteShareGroupOffsetsRequest *req = reqv;
    const kn_group_results *res = call->ctx;
    typedef kp_DeleteShareGroupOffsetsRequest_DeleteShareGroupOffsetsRequestTopic topic_t;
    topic_t *topics = kn_calloc(res->count ? res->count : 1, sizeof(*topics));
    if (!topics)
        return KN_ERR__NOMEM;
    *bufp = topics;
    kp_DeleteShareGroupOffsetsRequest_init(req);
    req->group_id = kna_cstr(call->items[0].group);
    req->topics.items = topics;
    req->topics.count = (int32_t)res->count;
    for (size_t t = 0; t < res->count; t++) {
        kp_DeleteShareGroupOffsetsRequest_DeleteShareGroupOffsetsRequestTopic_init(&topics[t]);
        topics[t].topic_name = kna_cstr(res->items[t].name);
    }
    return 0;
}

static int kna_dlsgo_absorb(kna_group_call *call, const bool *sel, const knw_resp *resp) {
    (void)sel;
    const kp_DeleteShareGroupOffsetsResponse *body = resp->body;
    kn_group_results *res = call->ctx;
    if (body->error_code)
        return kna_group_answer(call, 0, body->error_code, body->error_message);
    for (int32_t t = 0; t < body->responses.count; t++) {
        const kp_DeleteShareGroupOffsetsResponse_DeleteShareGroupOffsetsResponseTopic *rt = &body->responses.items[t];
        for (size_t k = 0; k < res->count; k++) {
            kna_named_result *x = &res->items[k];
            if (!kna_slice_is(rt->topic_name, x->name))
                continue;
            x->err = rt->error_code;
            if (rt->error_code && !kna_set_str(&x->message, rt->error_message))
                return KN_ERR__NOMEM;
        }
    }
    return kna_group_answer(call, 0, 0, kna_none);
}

int kn_admin_delete_share_group_offsets(kn_admin *admin, const char *group, const char *const *topics,
                                        size_t topic_count, int timeout_ms, kn_group_results **resultsp,
                                        char *errstr, size_t errstr_size) {
    static const char fn[] = "kn_admin_delete_share_group_offsets";
    if (!admin || !group || !resultsp || !kna_check_names(topics, topic_count, fn, errstr, errstr_size)) {
        if (!admin || !group || !resultsp)
            kn_errstr_set(errstr, errstr_size, "%s: invalid argument", fn);
        return KN_ERR__INVALID_ARG;
    }
    *resultsp = NULL;
    int err = KN_ERR__NOMEM;
    kna_group_item item = {.group = group, .node = -1, .pending = true};
    const char **names = kn_calloc(topic_count ? topic_count : 1, sizeof(*names));
    kn_group_results *res = kn_calloc(1, sizeof(*res));
    if (!names || !res || !(res->items = kn_calloc(topic_count ? topic_count : 1, sizeof(*res->items))))
        goto nomem;
    res->count = kna_distinct(topics, topic_count, names);
    for (size_t t = 0; t < res->count; t++)
        if (!(res->items[t].name = kn_strdup(names[t])))
            goto nomem;
    if (res->count) {
        kna_group_call call = {.admin = admin,
                               .deadline = kna_deadline(admin, timeout_ms),
                               .what = "DeleteShareGroupOffsets",
                               .api_key = KP_API_DELETE_SHARE_GROUP_OFFSETS,
                               .min_version = -1,
                               .max_version = -1,
                               .items = &item,
                               .count = 1,
                               .ctx = res,
                               .build = kna_dlsgo_build,
                               .absorb = kna_dlsgo_absorb};
        if ((err = kna_group_run(&call, errstr, errstr_size)) != 0)
            goto fail;
        if (item.err) /* the group's error is every topic's */
            for (size_t t = 0; t < res->count; t++) {
                res->items[t].err = item.err;
                if (item.message && !kna_set_str(&res->items[t].message, kna_cstr(item.message)))
                    goto nomem;
            }
    }
    kna_group_items_clear(&item, 1);
    kn_free(names);
    *resultsp = res;
    return KN_OK;
nomem:
    err = KN_ERR__NOMEM;
    kn_errstr_set(errstr, errstr_size, "%s: out of memory", fn);
fail:
    kna_group_items_clear(&item, 1);
    kn_free(names);
    kn_group_results_destroy(res);
    return err;
}

/* ---- delete_share_groups --------------------------------------------- */

int kn_admin_delete_share_groups(kn_admin *admin, const char *const *groups, size_t count, int timeout_ms,
                                 kn_group_results **resultsp, char *errstr, size_t errstr_size) {
    /* Java's DeleteShareGroupsHandler is the consumer one under another
     * name: DeleteGroups deletes a group of any type. */
    return kn_admin_delete_consumer_groups(admin, groups, count, timeout_ms, resultsp, errstr, errstr_size);
}
