/*
 * admin_streams_groups.c: the streams-group calls (KIP-1071), as Java's
 * KafkaAdminClient does them: describe_streams_groups
 * (StreamsGroupDescribe, routed and retried by kna_group_run) and the
 * offset and delete calls, which Java runs through its consumer-group
 * handlers (a streams group commits offsets like a consumer group) and
 * so do these.
 */
#include <string.h>

#include "admin/admin.h"
#include "error.h"
#include "kafka_native_consumer.h"
#include "kn_alloc.h"
#include "proto/generated/kp_apis.h"
#include "proto/generated/kp_streams_group_describe.h"

_Static_assert(sizeof(kp_StreamsGroupDescribeRequest) <= KNA_GROUP_REQ_MAX, "request room");

static kn_str kna_cstr(const char *s) {
    kn_str out = {s, s ? (int32_t)strlen(s) : -1};
    return out;
}

typedef struct kna_streams_ctx {
    kn_group_descriptions *desc;
    int flags;
} kna_streams_ctx;

/* Tasks as a list whose "topic" is the subtopology id. */
static kn_topic_partition_list *kna_tasks(const kp_StreamsGroupDescribeResponse_TaskIds_array *a) {
    kn_topic_partition_list *l = kn_topic_partition_list_new();
    for (int32_t t = 0; l && t < a->count; t++) {
        const kp_StreamsGroupDescribeResponse_TaskIds *ti = &a->items[t];
        char *sub = kn_strndup(ti->subtopology_id.ptr ? ti->subtopology_id.ptr : "",
                               ti->subtopology_id.len > 0 ? (size_t)ti->subtopology_id.len : 0);
        for (int32_t p = 0; sub && p < ti->partitions.count; p++)
            if (kn_topic_partition_list_add(l, sub, ti->partitions.items[p]) == KN_ERR__NOMEM) {
                kn_free(sub);
                sub = NULL;
            }
        if (!sub) {
            kn_topic_partition_list_destroy(l);
            return NULL;
        }
        kn_free(sub);
    }
    return l;
}

static int kna_streams_member(kna_group_member *mb, const kp_StreamsGroupDescribeResponse_Member *gm) {
    if (kna_member_copy(mb, gm->member_id, gm->instance_id, gm->client_id, gm->client_host, gm->member_epoch) ||
        !kna_set_str(&mb->process_id, gm->process_id))
        return KN_ERR__NOMEM;
    const kp_StreamsGroupDescribeResponse_TaskIds_array *kinds[6] = {
        &gm->assignment.active_tasks,        &gm->assignment.standby_tasks,
        &gm->assignment.warmup_tasks,        &gm->target_assignment.active_tasks,
        &gm->target_assignment.standby_tasks, &gm->target_assignment.warmup_tasks};
    for (int k = 0; k < 6; k++)
        if (!(mb->tasks[k] = kna_tasks(kinds[k])))
            return KN_ERR__NOMEM;
    /* The generic accessors show the active tasks. */
    if (!(mb->assignment = kn_topic_partition_list_copy(mb->tasks[KN_TASKS_ACTIVE])) ||
        !(mb->target = kn_topic_partition_list_copy(mb->tasks[KN_TASKS_TARGET_ACTIVE])))
        return KN_ERR__NOMEM;
    return 0;
}

static int kna_names_copy(char ***out, size_t *count, const kn_str *names, int32_t n) {
    if (n <= 0)
        return 0;
    if (!(*out = kn_calloc((size_t)n, sizeof(**out))))
        return KN_ERR__NOMEM;
    for (int32_t k = 0; k < n; k++) {
        bool ok = true;
        (*out)[(*count)++] = kna_strdup_str(names[k].len < 0 ? kna_cstr("") : names[k], &ok);
        if (!ok)
            return KN_ERR__NOMEM;
    }
    return 0;
}

static int kna_topic_infos_copy(char ***out, size_t *count, const kp_StreamsGroupDescribeResponse_TopicInfo_array *a) {
    if (a->count <= 0)
        return 0;
    if (!(*out = kn_calloc((size_t)a->count, sizeof(**out))))
        return KN_ERR__NOMEM;
    for (int32_t k = 0; k < a->count; k++) {
        bool ok = true;
        (*out)[(*count)++] = kna_strdup_str(a->items[k].name.len < 0 ? kna_cstr("") : a->items[k].name, &ok);
        if (!ok)
            return KN_ERR__NOMEM;
    }
    return 0;
}

static int kna_topology(kna_group_desc *d, const kp_StreamsGroupDescribeResponse_Topology *tp) {
    if (!tp)
        return 0;
    d->topology_epoch = tp->epoch;
    int32_t n = tp->subtopologies.count;
    if (n <= 0)
        return 0;
    if (!(d->subtopologies = kn_calloc((size_t)n, sizeof(*d->subtopologies))))
        return KN_ERR__NOMEM;
    for (int32_t s = 0; s < n; s++) {
        const kp_StreamsGroupDescribeResponse_Subtopology *st = &tp->subtopologies.items[s];
        kna_subtopology *x = &d->subtopologies[d->subtopology_count++];
        if (!kna_set_str(&x->id, st->subtopology_id) ||
            kna_names_copy(&x->topics[KN_SUBTOPOLOGY_SOURCE], &x->topic_count[KN_SUBTOPOLOGY_SOURCE],
                           st->source_topics.items, st->source_topics.count) ||
            kna_names_copy(&x->topics[KN_SUBTOPOLOGY_REPARTITION_SINK],
                           &x->topic_count[KN_SUBTOPOLOGY_REPARTITION_SINK], st->repartition_sink_topics.items,
                           st->repartition_sink_topics.count) ||
            kna_topic_infos_copy(&x->topics[KN_SUBTOPOLOGY_STATE_CHANGELOG],
                                 &x->topic_count[KN_SUBTOPOLOGY_STATE_CHANGELOG], &st->state_changelog_topics) ||
            kna_topic_infos_copy(&x->topics[KN_SUBTOPOLOGY_REPARTITION_SOURCE],
                                 &x->topic_count[KN_SUBTOPOLOGY_REPARTITION_SOURCE], &st->repartition_source_topics))
            return KN_ERR__NOMEM;
    }
    return 0;
}

static int kna_sgdesc_build(kna_group_call *call, const bool *sel, void *reqv, void **bufp) {
    kp_StreamsGroupDescribeRequest *req = reqv;
    const kna_streams_ctx *ctx = call->ctx;
    kp_StreamsGroupDescribeRequest_init(req);
    req->include_authorized_operations = (ctx->flags & KN_ADMIN_GROUP_AUTHORIZED_OPERATIONS) != 0;
    return kna_selected_names(call, sel, &req->group_ids, bufp);
}

static int kna_sgdesc_absorb(kna_group_call *call, const bool *sel, const knw_resp *resp) {
    const kp_StreamsGroupDescribeResponse *body = resp->body;
    kna_streams_ctx *ctx = call->ctx;
    for (int32_t k = 0; k < body->groups.count; k++) {
        const kp_StreamsGroupDescribeResponse_DescribedGroup *g = &body->groups.items[k];
        ptrdiff_t i = kna_group_find(call, sel, g->group_id);
        if (i < 0)
            continue;
        if (kna_group_answer(call, (size_t)i, g->error_code, g->error_message))
            return KN_ERR__NOMEM;
        if (g->error_code)
            continue;
        kna_group_desc *d = &ctx->desc->items[i];
        d->coordinator = resp->node_id;
        d->group_epoch = g->group_epoch;
        d->assignment_epoch = g->assignment_epoch;
        d->authorized_ops = g->authorized_operations;
        if (!kna_set_str(&d->state, g->group_state) || !kna_set_str(&d->type, kna_cstr("streams")) ||
            kna_topology(d, g->topology))
            return KN_ERR__NOMEM;
        if (g->members.count > 0 && !(d->members = kn_calloc((size_t)g->members.count, sizeof(*d->members))))
            return KN_ERR__NOMEM;
        for (int32_t m = 0; m < g->members.count; m++)
            if (kna_streams_member(&d->members[d->member_count++], &g->members.items[m]))
                return KN_ERR__NOMEM;
    }
    return 0;
}

int kn_admin_describe_streams_groups(kn_admin *admin, const char *const *groups, size_t count, int flags,
                                     int timeout_ms, kn_group_descriptions **descp, char *errstr,
                                     size_t errstr_size) {
    static const char fn[] = "kn_admin_describe_streams_groups";
    if (!admin || !descp || !kna_check_names(groups, count, fn, errstr, errstr_size)) {
        if (!admin || !descp)
            kn_errstr_set(errstr, errstr_size, "%s: invalid argument", fn);
        return KN_ERR__INVALID_ARG;
    }
    *descp = NULL;
    size_t n = 0;
    kna_group_item *items = kna_group_items(groups, count, &n);
    kn_group_descriptions *desc = items ? kna_descriptions_new(items, n) : NULL;
    int err = KN_ERR__NOMEM;
    if (!items || !desc) {
        kn_errstr_set(errstr, errstr_size, "%s: out of memory", fn);
        goto out;
    }
    kna_streams_ctx ctx = {desc, flags};
    kna_group_call call = {.admin = admin,
                           .deadline = kna_deadline(admin, timeout_ms),
                           .what = "StreamsGroupDescribe",
                           .api_key = KP_API_STREAMS_GROUP_DESCRIBE,
                           .min_version = -1,
                           .max_version = -1,
                           .batch = true,
                           .items = items,
                           .count = n,
                           .ctx = &ctx,
                           .build = kna_sgdesc_build,
                           .absorb = kna_sgdesc_absorb};
    if ((err = kna_group_run(&call, errstr, errstr_size)) != 0)
        goto out;
    for (size_t i = 0; i < n; i++)
        kna_take_item_error(&items[i], &desc->items[i].err, &desc->items[i].message);
    *descp = desc;
    desc = NULL;
out:
    kna_group_items_clear(items, n);
    kn_free(items);
    kn_group_descriptions_destroy(desc);
    return err;
}

/* Java's list/alter/deleteStreamsGroupOffsets and deleteStreamsGroups
 * use its consumer-group handlers: the same requests, the same answers. */

int kn_admin_list_streams_group_offsets(kn_admin *admin, const kn_group_offsets_spec *specs, size_t count,
                                        int flags, int timeout_ms, kn_group_offsets **offsetsp, char *errstr,
                                        size_t errstr_size) {
    return kn_admin_list_consumer_group_offsets(admin, specs, count, flags, timeout_ms, offsetsp, errstr,
                                                errstr_size);
}

int kn_admin_alter_streams_group_offsets(kn_admin *admin, const char *group, const kn_topic_partition_list *offsets,
                                         int timeout_ms, kn_group_offsets **resultp, char *errstr,
                                         size_t errstr_size) {
    return kn_admin_alter_consumer_group_offsets(admin, group, offsets, timeout_ms, resultp, errstr, errstr_size);
}

int kn_admin_delete_streams_group_offsets(kn_admin *admin, const char *group,
                                          const kn_topic_partition_list *partitions, int timeout_ms,
                                          kn_group_offsets **resultp, char *errstr, size_t errstr_size) {
    return kn_admin_delete_consumer_group_offsets(admin, group, partitions, timeout_ms, resultp, errstr,
                                                  errstr_size);
}

int kn_admin_delete_streams_groups(kn_admin *admin, const char *const *groups, size_t count, int timeout_ms,
                                   kn_group_results **resultsp, char *errstr, size_t errstr_size) {
    return kn_admin_delete_consumer_groups(admin, groups, count, timeout_ms, resultsp, errstr, errstr_size);
}
