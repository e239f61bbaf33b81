/*
 * admin_groups.c: the group-level calls: delete_consumer_groups
 * (DeleteGroups), describe_consumer_groups (ConsumerGroupDescribe, then
 * DescribeGroups for classic groups), remove_members_from_consumer_group
 * (LeaveGroup v3+), each routed and retried by kna_group_run, and
 * list_groups (ListGroups to every broker, merged), as Java's
 * KafkaAdminClient does them.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "admin/admin.h"
#include "consumer/assignor/consumer_protocol.h"
#include "error.h"
#include "kafka_native_consumer.h"
#include "kn_alloc.h"
#include "proto/generated/kp_apis.h"
#include "proto/generated/kp_consumer_group_describe.h"
#include "proto/generated/kp_delete_groups.h"
#include "proto/generated/kp_describe_groups.h"
#include "proto/generated/kp_leave_group.h"
#include "proto/generated/kp_list_groups.h"

_Static_assert(sizeof(kp_DeleteGroupsRequest) <= KNA_GROUP_REQ_MAX, "request room");
_Static_assert(sizeof(kp_DescribeGroupsRequest) <= KNA_GROUP_REQ_MAX, "request room");
_Static_assert(sizeof(kp_ConsumerGroupDescribeRequest) <= KNA_GROUP_REQ_MAX, "request room");
_Static_assert(sizeof(kp_LeaveGroupRequest) <= KNA_GROUP_REQ_MAX, "request room");

static kn_str kna_cstr(const char *s) {
    kn_str out = {s, s ? (int32_t)strlen(s) : -1};
    return out;
}

static const kn_str kna_no_message = {NULL, -1};

int kna_selected_names(const kna_group_call *call, const bool *sel, kp_str_array *out, void **bufp) {
    size_t n = 0;
    for (size_t i = 0; i < call->count; i++)
        n += sel[i];
    kn_str *names = kn_calloc(n ? n : 1, sizeof(*names));
    if (!names)
        return KN_ERR__NOMEM;
    size_t k = 0;
    for (size_t i = 0; i < call->count; i++)
        if (sel[i])
            names[k++] = kna_cstr(call->items[i].group);
    out->items = names;
    out->count = (int32_t)n;
    *bufp = names;
    return 0;
}

kna_group_item *kna_group_items(const char *const *in, size_t n, size_t *np) {
    const char **names = kn_calloc(n ? n : 1, sizeof(*names));
    kna_group_item *items = kn_calloc(n ? n : 1, sizeof(*items));
    if (!names || !items) {
        kn_free(names);
        kn_free(items);
        return NULL;
    }
    *np = kna_distinct(in, n, names);
    for (size_t i = 0; i < *np; i++) {
        items[i].group = names[i];
        items[i].node = -1;
        items[i].pending = true;
    }
    kn_free(names);
    return items;
}

bool kna_check_names(const char *const *names, size_t n, const char *fn, char *errstr,
                            size_t errstr_size) {
    if (n && !names) {
        kn_errstr_set(errstr, errstr_size, "%s: names is NULL", fn);
        return false;
    }
    for (size_t i = 0; i < n; i++)
        if (!names[i]) {
            kn_errstr_set(errstr, errstr_size, "%s: group %zu is NULL", fn, i);
            return false;
        }
    return true;
}

/* ---- delete_consumer_groups ------------------------------------------ */

static int kna_delete_groups_build(kna_group_call *call, const bool *sel, void *reqv, void **bufp) {
    kp_DeleteGroupsRequest *req = reqv;
    kp_DeleteGroupsRequest_init(req);
    return kna_selected_names(call, sel, &req->groups_names, bufp);
}

static int kna_delete_groups_absorb(kna_group_call *call, const bool *sel, const knw_resp *resp) {
    const kp_DeleteGroupsResponse *body = resp->body;
    for (int32_t k = 0; k < body->results.count; k++) {
        ptrdiff_t i = kna_group_find(call, sel, body->results.items[k].group_id);
        if (i >= 0 && kna_group_answer(call, (size_t)i, body->results.items[k].error_code, kna_no_message))
            return KN_ERR__NOMEM;
    }
    return 0;
}

/* Builds kn_group_results from finished items (messages moved). */
static kn_group_results *kna_results_from_items(kna_group_item *items, size_t n) {
    kn_group_results *res = kn_calloc(1, sizeof(*res));
    if (!res || !(res->items = kn_calloc(n ? n : 1, sizeof(*res->items)))) {
        kn_free(res);
        return NULL;
    }
    res->count = n;
    for (size_t i = 0; i < n; i++) {
        res->items[i].name = kn_strdup(items[i].group);
        if (!res->items[i].name) {
            kn_group_results_destroy(res);
            return NULL;
        }
        kna_take_item_error(&items[i], &res->items[i].err, &res->items[i].message);
    }
    return res;
}

int kn_admin_delete_consumer_groups(kn_admin *admin, const char *const *groups, size_t count, int timeout_ms,
                                    kn_group_results **resultsp, char *errstr, size_t errstr_size) {
    static const char fn[] = "kn_admin_delete_consumer_groups";
    if (!admin || !resultsp || !kna_check_names(groups, count, fn, errstr, errstr_size)) {
        if (!admin || !resultsp)
            kn_errstr_set(errstr, errstr_size, "%s: invalid argument", fn);
        return KN_ERR__INVALID_ARG;
    }
    *resultsp = NULL;
    size_t n = 0;
    kna_group_item *items = kna_group_items(groups, count, &n);
    if (!items) {
        kn_errstr_set(errstr, errstr_size, "%s: out of memory", fn);
        return KN_ERR__NOMEM;
    }
    kna_group_call call = {.admin = admin,
                           .deadline = kna_deadline(admin, timeout_ms),
                           .what = "DeleteGroups",
                           .api_key = KP_API_DELETE_GROUPS,
                           .min_version = -1,
                           .max_version = -1,
                           .batch = true,
                           .items = items,
                           .count = n,
                           .build = kna_delete_groups_build,
                           .absorb = kna_delete_groups_absorb};
    int err = kna_group_run(&call, errstr, errstr_size);
    if (!err) {
        *resultsp = kna_results_from_items(items, n);
        if (!*resultsp) {
            err = KN_ERR__NOMEM;
            kn_errstr_set(errstr, errstr_size, "%s: out of memory", fn);
        }
    }
    kna_group_items_clear(items, n);
    kn_free(items);
    return err;
}

/* ---- describe_consumer_groups ---------------------------------------- */

static kn_topic_partition_list *kna_tplist_848(const kp_ConsumerGroupDescribeResponse_Assignment *a) {
    kn_topic_partition_list *l = kn_topic_partition_list_new();
    for (int32_t t = 0; l && t < a->topic_partitions.count; t++) {
        const kp_ConsumerGroupDescribeResponse_TopicPartitions *tp = &a->topic_partitions.items[t];
        if (kna_tplist_add_topic(l, tp->topic_name, &tp->partitions)) {
            kn_topic_partition_list_destroy(l);
            return NULL;
        }
    }
    return l;
}

int kna_member_copy(kna_group_member *m, kn_str id, kn_str instance, kn_str client, kn_str host,
                           int32_t epoch) {
    bool ok = kna_set_str(&m->member_id, id) && kna_set_str(&m->instance_id, instance) &&
              kna_set_str(&m->client_id, client) && kna_set_str(&m->host, host);
    m->epoch = epoch;
    return ok ? 0 : KN_ERR__NOMEM;
}

KNA_DESCRIBE_BUILD(kna_cgd_build, kp_ConsumerGroupDescribeRequest)

static int kna_cgd_absorb(kna_group_call *call, const bool *sel, const knw_resp *resp) {
    const kp_ConsumerGroupDescribeResponse *body = resp->body;
    for (int32_t k = 0; k < body->groups.count; k++) {
        const kp_ConsumerGroupDescribeResponse_DescribedGroup *g = &body->groups.items[k];
        kna_described_group shared = {g->group_id, g->error_code, g->error_message,
                                      g->group_state, "consumer", g->group_epoch,
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
            const kp_ConsumerGroupDescribeResponse_Member *gm = &g->members.items[m];
            kna_group_member *mb = &d->members[d->member_count++];
            if (kna_member_copy(mb, gm->member_id, gm->instance_id, gm->client_id, gm->client_host,
                                gm->member_epoch) ||
                !(mb->assignment = kna_tplist_848(&gm->assignment)) ||
                !(mb->target = kna_tplist_848(&gm->target_assignment)))
                return KN_ERR__NOMEM;
        }
    }
    return 0;
}

static int kna_dg_build(kna_group_call *call, const bool *sel, void *reqv, void **bufp) {
    kp_DescribeGroupsRequest *req = reqv;
    const kna_describe_ctx *ctx = call->ctx;
    kp_DescribeGroupsRequest_init(req);
    req->include_authorized_operations = (ctx->flags & KN_ADMIN_GROUP_AUTHORIZED_OPERATIONS) != 0;
    return kna_selected_names(call, sel, &req->groups, bufp);
}

/* A classic member's assignment blob into a list; an empty blob (not yet
 * synced) is an empty list. */
static int kna_classic_assignment(kna_group_member *mb, kn_bytes blob, char *errstr, size_t errstr_size) {
    mb->assignment = kn_topic_partition_list_new();
    if (!mb->assignment)
        return KN_ERR__NOMEM;
    if (blob.len <= 0)
        return 0;
    kn_arena arena;
    kn_arena_init(&arena, 1024);
    kn_asg_tp *parts = NULL;
    int32_t count = 0, ud_len = 0;
    const uint8_t *ud = NULL;
    int16_t version = 0;
    int rc = kn_cp_assignment_decode(blob.ptr, (size_t)blob.len, &arena, &parts, &count, &ud, &ud_len,
                                     &version, errstr, errstr_size);
    for (int32_t p = 0; !rc && p < count; p++)
        if (kn_topic_partition_list_add(mb->assignment, parts[p].topic, parts[p].partition) == KN_ERR__NOMEM)
            rc = KN_ERR__NOMEM;
    kn_arena_destroy(&arena);
    return rc;
}

static int kna_dg_one(kna_group_call *call, size_t i, const kp_DescribeGroupsResponse_DescribedGroup *g,
                      int32_t node) {
    kna_describe_ctx *ctx = call->ctx;
    kna_group_desc *d = &ctx->desc->items[i];
    bool consumer = g->protocol_type.len == 0 ||
                    (g->protocol_type.len == 8 && memcmp(g->protocol_type.ptr, "consumer", 8) == 0);
    bool dead = g->group_state.len == 4 && memcmp(g->group_state.ptr, "Dead", 4) == 0;
    char msg[300];
    if (!g->error_code && dead) {
        /* DescribeGroups before v6 reports an unknown group as Dead. */
        snprintf(msg, sizeof(msg), "Group %s not found.", call->items[i].group);
        return kna_group_answer(call, i, KN_ERR_GROUP_ID_NOT_FOUND, kna_cstr(msg));
    }
    if (!g->error_code && !consumer && !ctx->classic) {
        snprintf(msg, sizeof(msg), "GroupId %s is not a consumer group (%.*s).", call->items[i].group,
                 (int)(g->protocol_type.len > 64 ? 64 : g->protocol_type.len), g->protocol_type.ptr);
        return kna_group_answer(call, i, KN_ERR__INVALID_ARG, kna_cstr(msg));
    }
    if (kna_group_answer(call, i, g->error_code, g->error_message))
        return KN_ERR__NOMEM;
    if (g->error_code)
        return 0;
    d->coordinator = node;
    d->group_epoch = -1;
    d->assignment_epoch = -1;
    d->authorized_ops = g->authorized_operations;
    d->is_simple = g->protocol_type.len == 0;
    if (!kna_set_str(&d->protocol_type, g->protocol_type))
        return KN_ERR__NOMEM;
    if (!kna_set_str(&d->state, g->group_state) || !kna_set_str(&d->assignor, g->protocol_data) ||
        !kna_set_str(&d->type, kna_cstr("classic")))
        return KN_ERR__NOMEM;
    if (d->assignor == NULL && !kna_set_str(&d->assignor, kna_cstr("")))
        return KN_ERR__NOMEM;
    if (g->members.count > 0 && !(d->members = kn_calloc((size_t)g->members.count, sizeof(*d->members))))
        return KN_ERR__NOMEM;
    for (int32_t m = 0; m < g->members.count; m++) {
        const kp_DescribeGroupsResponse_DescribedGroupMember *gm = &g->members.items[m];
        kna_group_member *mb = &d->members[d->member_count++];
        if (kna_member_copy(mb, gm->member_id, gm->group_instance_id, gm->client_id, gm->client_host, -1))
            return KN_ERR__NOMEM;
        char why[256] = "";
        int rc = consumer && !d->is_simple
                     ? kna_classic_assignment(mb, gm->member_assignment, why, sizeof(why))
                 : (mb->assignment = kn_topic_partition_list_new()) ? 0
                                                                    : KN_ERR__NOMEM;
        if (rc == KN_ERR__NOMEM)
            return rc;
        if (rc) { /* a blob the consumer protocol cannot read: the group fails, as in Java */
            call->items[i].err = rc;
            kn_free(call->items[i].message);
            call->items[i].message = kn_strdup(why);
            return 0;
        }
    }
    return 0;
}

static int kna_dg_absorb(kna_group_call *call, const bool *sel, const knw_resp *resp) {
    const kp_DescribeGroupsResponse *body = resp->body;
    for (int32_t k = 0; k < body->groups.count; k++) {
        ptrdiff_t i = kna_group_find(call, sel, body->groups.items[k].group_id);
        if (i >= 0 && kna_dg_one(call, (size_t)i, &body->groups.items[k], resp->node_id))
            return KN_ERR__NOMEM;
    }
    return 0;
}

/* Clears what a first (ConsumerGroupDescribe) answer left in d. */
static void kna_desc_reset(kna_group_desc *d) {
    kn_free(d->state);
    kn_free(d->type);
    kn_free(d->assignor);
    d->state = d->type = d->assignor = NULL;
}

int kn_admin_describe_consumer_groups(kn_admin *admin, const char *const *groups, size_t count, int flags,
                                      int timeout_ms, kn_group_descriptions **descp, char *errstr,
                                      size_t errstr_size) {
    static const char fn[] = "kn_admin_describe_consumer_groups";
    if (!admin || !descp || !kna_check_names(groups, count, fn, errstr, errstr_size)) {
        if (!admin || !descp)
            kn_errstr_set(errstr, errstr_size, "%s: invalid argument", fn);
        return KN_ERR__INVALID_ARG;
    }
    *descp = NULL;
    size_t n = 0;
    int err = KN_ERR__NOMEM;
    kna_group_item *items = kna_group_items(groups, count, &n);
    kn_group_descriptions *desc = items ? kna_descriptions_new(items, n) : NULL;
    if (!items || !desc)
        goto nomem;
    kna_describe_ctx ctx = {desc, flags, false};
    kna_group_call call = {.admin = admin,
                           .deadline = kna_deadline(admin, timeout_ms),
                           .what = "ConsumerGroupDescribe",
                           .api_key = KP_API_CONSUMER_GROUP_DESCRIBE,
                           .min_version = -1,
                           .max_version = -1,
                           .batch = true,
                           .items = items,
                           .count = n,
                           .ctx = &ctx,
                           .build = kna_cgd_build,
                           .absorb = kna_cgd_absorb};
    err = kna_group_run(&call, errstr, errstr_size);
    if (err && err != KN_ERR__UNSUPPORTED_VERSION)
        goto fail;
    /* Classic groups (and unknown ones) are not consumer groups to the new
     * API: ask DescribeGroups, at the coordinator already found. */
    bool classic = false;
    for (size_t i = 0; i < n; i++) {
        kna_group_item *it = &items[i];
        if (err == KN_ERR__UNSUPPORTED_VERSION || it->err == KN_ERR_GROUP_ID_NOT_FOUND ||
            it->err == KN_ERR__UNSUPPORTED_VERSION) {
            it->pending = true;
            it->err = 0;
            kna_desc_reset(&desc->items[i]);
            classic = true;
        }
    }
    if (classic) {
        call.what = "DescribeGroups";
        call.api_key = KP_API_DESCRIBE_GROUPS;
        call.build = kna_dg_build;
        call.absorb = kna_dg_absorb;
        if ((err = kna_group_run(&call, errstr, errstr_size)) != 0)
            goto fail;
    }
    for (size_t i = 0; i < n; i++)
        kna_take_item_error(&items[i], &desc->items[i].err, &desc->items[i].message);
    kna_group_items_clear(items, n);
    kn_free(items);
    *descp = desc;
    return KN_OK;
nomem:
    err = KN_ERR__NOMEM;
    kn_errstr_set(errstr, errstr_size, "%s: out of memory", fn);
fail:
    kna_group_items_clear(items, n);
    kn_free(items);
    kn_group_descriptions_destroy(desc);
    return err;
}

int kn_admin_describe_classic_groups(kn_admin *admin, const char *const *groups, size_t count, int flags,
                                     int timeout_ms, kn_group_descriptions **descp, char *errstr,
                                     size_t errstr_size) {
    kna_describe_ctx ctx = {.flags = flags, .classic = true};
    kna_group_call call = {.what = "DescribeGroups",
                           .api_key = KP_API_DESCRIBE_GROUPS,
                           .min_version = -1,
                           .max_version = -1,
                           .build = kna_dg_build,
                           .absorb = kna_dg_absorb};
    return kna_describe_groups_run(admin, "kn_admin_describe_classic_groups", groups, count, timeout_ms, &call,
                                   &ctx, descp, errstr, errstr_size);
}

/* ---- remove_members_from_consumer_group ------------------------------ */

typedef struct kna_leave_ctx {
    kn_group_results *res;     /* one per member */
    const char **member_ids;   /* per member ("" for static-only) */
    const char **instance_ids; /* per member, NULL for none */
    const char *reason;
} kna_leave_ctx;

static int kna_leave_build(kna_group_call *call, const bool *sel, void *reqv, void **bufp) {
    (void)sel;
    kp_LeaveGroupRequest *req = reqv;
    kna_leave_ctx *ctx = call->ctx;
    size_t n = ctx->res->count;
    kp_LeaveGroupRequest_MemberIdentity *ids = kn_calloc(n ? n : 1, sizeof(*ids));
    if (!ids)
        return KN_ERR__NOMEM;
    *bufp = ids;
    kp_LeaveGroupRequest_init(req);
    req->group_id = kna_cstr(call->items[0].group);
    req->members.items = ids;
    req->members.count = (int32_t)n;
    for (size_t m = 0; m < n; m++) {
        kp_LeaveGroupRequest_MemberIdentity_init(&ids[m]);
        ids[m].member_id = kna_cstr(ctx->member_ids[m]);
        ids[m].group_instance_id = kna_cstr(ctx->instance_ids[m]);
        ids[m].reason = kna_cstr(ctx->reason);
    }
    return 0;
}

static int kna_leave_absorb(kna_group_call *call, const bool *sel, const knw_resp *resp) {
    (void)sel;
    const kp_LeaveGroupResponse *body = resp->body;
    kna_leave_ctx *ctx = call->ctx;
    if (kna_group_answer(call, 0, body->error_code, kna_no_message))
        return KN_ERR__NOMEM;
    if (body->error_code)
        return 0; /* retried, or given to every member at the end */
    for (size_t m = 0; m < ctx->res->count; m++)
        ctx->res->items[m].err = KN_ERR_UNKNOWN_SERVER_ERROR; /* until the broker names it */
    for (int32_t k = 0; k < body->members.count; k++) {
        const kp_LeaveGroupResponse_MemberResponse *mr = &body->members.items[k];
        for (size_t m = 0; m < ctx->res->count; m++)
            if (kna_slice_is(mr->group_instance_id, ctx->instance_ids[m]) &&
                (ctx->instance_ids[m] || kna_slice_is(mr->member_id, ctx->member_ids[m])))
                ctx->res->items[m].err = mr->error_code;
    }
    return 0;
}

int kn_admin_remove_members_from_consumer_group(kn_admin *admin, const char *group,
                                                const char *const *instance_ids, size_t instance_count,
                                                const char *reason, int timeout_ms,
                                                kn_group_results **resultsp, char *errstr,
                                                size_t errstr_size) {
    static const char fn[] = "kn_admin_remove_members_from_consumer_group";
    if (!admin || !group || !resultsp ||
        !kna_check_names(instance_ids, instance_count, fn, errstr, errstr_size)) {
        if (!admin || !group || !resultsp)
            kn_errstr_set(errstr, errstr_size, "%s: invalid argument", fn);
        return KN_ERR__INVALID_ARG;
    }
    *resultsp = NULL;
    int64_t deadline = kna_deadline(admin, timeout_ms);
    kn_group_descriptions *desc = NULL;
    kn_group_results *res = NULL;
    int err = 0;
    size_t n = instance_count;
    if (n == 0) { /* removeAll(): every current member */
        if ((err = kn_admin_describe_consumer_groups(admin, &group, 1, 0, kna_remaining(deadline), &desc,
                                                     errstr, errstr_size)) != 0)
            return err;
        if (kn_group_descriptions_error(desc, 0)) {
            /* The group's own error, for the call's one (absent) member set. */
            res = kn_calloc(1, sizeof(*res));
            if (res && (res->items = kn_calloc(1, sizeof(*res->items))) &&
                (res->items[0].name = kn_strdup(group)) &&
                (!kn_group_descriptions_error_message(desc, 0) ||
                 (res->items[0].message = kn_strdup(kn_group_descriptions_error_message(desc, 0))))) {
                res->count = 1;
                res->items[0].err = kn_group_descriptions_error(desc, 0);
                kn_group_descriptions_destroy(desc);
                *resultsp = res;
                return KN_OK;
            }
            goto nomem;
        }
        n = kn_group_descriptions_member_count(desc, 0);
    }
    char full_reason[300];
    snprintf(full_reason, sizeof(full_reason), "member was removed by an admin%s%.250s", reason ? ": " : "",
             reason ? reason : "");
    const char **mids = kn_calloc(n ? n : 1, sizeof(*mids));
    const char **iids = kn_calloc(n ? n : 1, sizeof(*iids));
    res = kn_calloc(1, sizeof(*res));
    if (!mids || !iids || !res || !(res->items = kn_calloc(n ? n : 1, sizeof(*res->items))))
        goto nomem_arrays;
    res->count = n;
    for (size_t m = 0; m < n; m++) {
        mids[m] = desc ? kn_group_descriptions_member_id(desc, 0, m) : "";
        iids[m] = desc ? kn_group_descriptions_member_instance_id(desc, 0, m) : instance_ids[m];
        if (!(res->items[m].name = kn_strdup(iids[m] ? iids[m] : mids[m])))
            goto nomem_arrays;
    }
    if (n > 0) {
        kna_group_item item = {.group = group, .node = -1, .pending = true};
        kna_leave_ctx ctx = {res, mids, iids, full_reason};
        kna_group_call call = {.admin = admin,
                               .deadline = deadline,
                               .what = "LeaveGroup",
                               .api_key = KP_API_LEAVE_GROUP,
                               .min_version = 3,
                               .max_version = -1,
                               .items = &item,
                               .count = 1,
                               .ctx = &ctx,
                               .build = kna_leave_build,
                               .absorb = kna_leave_absorb};
        err = kna_group_run(&call, errstr, errstr_size);
        if (!err && item.err) /* the group's error is every member's */
            for (size_t m = 0; m < n; m++) {
                res->items[m].err = item.err;
                if (item.message && !res->items[m].message)
                    res->items[m].message = kn_strdup(item.message);
            }
        kna_group_items_clear(&item, 1);
        if (err)
            goto fail;
    }
    kn_free(mids);
    kn_free(iids);
    kn_group_descriptions_destroy(desc);
    *resultsp = res;
    return KN_OK;
nomem_arrays:
    err = KN_ERR__NOMEM;
    kn_errstr_set(errstr, errstr_size, "%s: out of memory", fn);
fail:
    kn_free(mids);
    kn_free(iids);
    kn_group_results_destroy(res);
    kn_group_descriptions_destroy(desc);
    return err;
nomem:
    kn_group_results_destroy(res);
    kn_group_descriptions_destroy(desc);
    kn_errstr_set(errstr, errstr_size, "%s: out of memory", fn);
    return KN_ERR__NOMEM;
}

/* ---- list_groups ----------------------------------------------------- */

static int kna_group_cmp(const void *a, const void *b) {
    return strcmp(((const kna_listed_group *)a)->group_id, ((const kna_listed_group *)b)->group_id);
}

/* Adds one broker's groups to the listing (a group listed twice is
 * kept once). */
typedef struct kna_list_ctx {
    kn_group_list *list;
    size_t cap;
} kna_list_ctx;

static int kna_list_absorb(void *ctxv, const void *bodyv, char *errstr, size_t errstr_size) {
    (void)errstr;
    (void)errstr_size;
    kna_list_ctx *ctx = ctxv;
    kn_group_list *list = ctx->list;
    const kp_ListGroupsResponse *body = bodyv;
    for (int32_t k = 0; k < body->groups.count; k++) {
        const kp_ListGroupsResponse_ListedGroup *g = &body->groups.items[k];
        bool seen = false;
        for (size_t i = 0; i < list->count && !seen; i++)
            seen = kna_slice_is(g->group_id, list->items[i].group_id);
        if (seen || g->group_id.len < 0)
            continue;
        if (list->count == ctx->cap) {
            size_t ncap = ctx->cap ? ctx->cap * 2 : 16;
            kna_listed_group *grown = kn_realloc(list->items, ncap * sizeof(*grown));
            if (!grown)
                return KN_ERR__NOMEM;
            list->items = grown;
            ctx->cap = ncap;
        }
        kna_listed_group *x = &list->items[list->count++];
        memset(x, 0, sizeof(*x));
        if (!kna_set_str(&x->group_id, g->group_id) ||
            !kna_set_str(&x->protocol_type, g->protocol_type.len < 0 ? kna_cstr("") : g->protocol_type) ||
            !kna_set_str(&x->state, g->group_state.len > 0 ? g->group_state : kna_no_message) ||
            !kna_set_str(&x->type, g->group_type.len > 0 ? g->group_type : kna_no_message))
            return KN_ERR__NOMEM;
    }
    return 0;
}

static int16_t kna_list_top_error(const void *body) { return ((const kp_ListGroupsResponse *)body)->error_code; }

static kna_broker_answer kna_list_classify(int code) {
    return code == 0                                  ? KNA_BROKER_ABSORB
           : kna_group_error_action(code) != KNA_GROUP_DONE ? KNA_BROKER_RETRY
                                                            : KNA_BROKER_FAILED;
}

static kn_str *kna_str_list(const char *const *in, size_t n) {
    kn_str *out = kn_calloc(n ? n : 1, sizeof(*out));
    for (size_t i = 0; out && i < n; i++)
        out[i] = kna_cstr(in[i]);
    return out;
}

int kn_admin_list_groups(kn_admin *admin, const char *const *types, size_t type_count,
                         const char *const *states, size_t state_count, int timeout_ms, kn_group_list **listp,
                         char *errstr, size_t errstr_size) {
    static const char fn[] = "kn_admin_list_groups";
    if (!admin || !listp || !kna_check_names(types, type_count, fn, errstr, errstr_size) ||
        !kna_check_names(states, state_count, fn, errstr, errstr_size)) {
        if (!admin || !listp)
            kn_errstr_set(errstr, errstr_size, "%s: invalid argument", fn);
        return KN_ERR__INVALID_ARG;
    }
    *listp = NULL;
    kn_group_list *list = kn_calloc(1, sizeof(*list));
    kn_str *tf = kna_str_list(types, type_count);
    kn_str *sf = kna_str_list(states, state_count);
    int err = KN_ERR__NOMEM;
    if (!list || !tf || !sf) {
        kn_errstr_set(errstr, errstr_size, "%s: out of memory", fn);
        goto out;
    }
    kp_ListGroupsRequest req;
    kp_ListGroupsRequest_init(&req);
    req.types_filter = (kp_str_array){tf, (int32_t)type_count};
    req.states_filter = (kp_str_array){sf, (int32_t)state_count};
    /* Every broker coordinates some groups: ask them all, from fresh
     * metadata, as Java does. */
    kna_list_ctx ctx = {list, 0};
    kna_broker_call call = {.admin = admin,
                            .deadline = kna_deadline(admin, timeout_ms),
                            .fn = fn,
                            .reason = "admin: list_groups",
                            .what = "ListGroups",
                            .api_key = KP_API_LIST_GROUPS,
                            .min_version = type_count ? 5 : state_count ? 4 : -1,
                            .req = &req,
                            .top_error = kna_list_top_error,
                            .classify = kna_list_classify,
                            .absorb = kna_list_absorb,
                            .ctx = &ctx};
    if ((err = kna_each_broker(&call, &list->err, &list->message, errstr, errstr_size)) != 0)
        goto out;
    if (list->count > 1)
        qsort(list->items, list->count, sizeof(*list->items), kna_group_cmp);
    *listp = list;
    list = NULL;
out:
    kn_free(tf);
    kn_free(sf);
    kn_group_list_destroy(list);
    return err;
}
