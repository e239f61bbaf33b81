/*
 * admin_streams_groups.c: the streams-group calls (KIP-1071), as Java's
 * KafkaAdminClient does them: describe_streams_groups
 * (StreamsGroupDescribe, routed and retried by kna_group_run) and the
 * offset and delete calls, which Java runs through its consumer-group
 * handlers (a streams group commits offsets like a consumer group) and
 * so do these. The describe steps every group type shares are
 * admin_group_describe.c's.
 */
#include <stddef.h>
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

/* Tasks as a list whose "topic" is the subtopology id. */
static kn_topic_partition_list *kna_tasks(const kp_StreamsGroupDescribeResponse_TaskIds_array *a) {
    kn_topic_partition_list *l = kn_topic_partition_list_new();
    for (int32_t t = 0; l && t < a->count; t++)
        if (kna_tplist_add_topic(l, a->items[t].subtopology_id, &a->items[t].partitions)) {
            kn_topic_partition_list_destroy(l);
            return NULL;
        }
    return l;
}

/* Task offsets as a list whose "topic" is the subtopology id. */
static kn_topic_partition_list *kna_task_offsets(const kp_StreamsGroupDescribeResponse_TaskOffset_array *a) {
    kn_topic_partition_list *l = kn_topic_partition_list_new();
    for (int32_t t = 0; l && t < a->count; t++) {
        const kp_StreamsGroupDescribeResponse_TaskOffset *to = &a->items[t];
        char *id = NULL;
        int at = KN_ERR__NOMEM;
        if (kna_set_str(&id, to->subtopology_id.len < 0 ? kna_cstr("") : to->subtopology_id))
            at = kn_topic_partition_list_add(l, id, to->partition);
        kn_free(id);
        if (at == KN_ERR__NOMEM) {
            kn_topic_partition_list_destroy(l);
            return NULL;
        }
        /* An entry the list refuses (empty id, negative partition), as
         * kna_tasks does, is left out. */
        if (at >= 0)
            kn_topic_partition_list_set_offset(l, (size_t)at, to->offset);
    }
    return l;
}

/* The member fields only StreamsGroupDescribe has (kna_streams_member). */
static int kna_streams_extra(kna_group_member *mb, const kp_StreamsGroupDescribeResponse_Member *gm) {
    kna_streams_member *sm = kn_calloc(1, sizeof(*sm));
    if (!(mb->streams = sm))
        return KN_ERR__NOMEM;
    sm->topology_epoch = gm->topology_epoch;
    sm->is_classic = gm->is_classic;
    if (!kna_set_str(&sm->rack, gm->rack_id))
        return KN_ERR__NOMEM;
    if (gm->user_endpoint) {
        if (!kna_set_str(&sm->endpoint_host,
                         gm->user_endpoint->host.len < 0 ? kna_cstr("") : gm->user_endpoint->host))
            return KN_ERR__NOMEM;
        sm->endpoint_port = gm->user_endpoint->port;
    }
    if (kna_kvs_copy(&sm->tags, &sm->tag_count, gm->client_tags.items, gm->client_tags.count,
                     sizeof(*gm->client_tags.items), offsetof(kp_StreamsGroupDescribeResponse_KeyValue, key),
                     offsetof(kp_StreamsGroupDescribeResponse_KeyValue, value)) ||
        !(sm->task_offsets[KN_TASK_OFFSETS] = kna_task_offsets(&gm->task_offsets)) ||
        !(sm->task_offsets[KN_TASK_END_OFFSETS] = kna_task_offsets(&gm->task_end_offsets)))
        return KN_ERR__NOMEM;
    return 0;
}

static int kna_streams_member_copy(kna_group_member *mb, const kp_StreamsGroupDescribeResponse_Member *gm) {
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
    if (kna_streams_extra(mb, gm))
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

/* The names of an internal-topic list, and beside them (infos) what was
 * declared for each: partitions, replication factor, configs. */
static int kna_topic_infos_copy(char ***out, kna_topic_info **infos, size_t *count,
                                const kp_StreamsGroupDescribeResponse_TopicInfo_array *a) {
    if (a->count <= 0)
        return 0;
    if (!(*out = kn_calloc((size_t)a->count, sizeof(**out))) || !(*infos = kn_calloc((size_t)a->count, sizeof(**infos))))
        return KN_ERR__NOMEM;
    for (int32_t k = 0; k < a->count; k++) {
        const kp_StreamsGroupDescribeResponse_TopicInfo *ti = &a->items[k];
        bool ok = true;
        kna_topic_info *x = &(*infos)[*count];
        (*out)[(*count)++] = kna_strdup_str(ti->name.len < 0 ? kna_cstr("") : ti->name, &ok);
        x->partitions = ti->partitions;
        x->replication_factor = ti->replication_factor;
        if (!ok || kna_kvs_copy(&x->configs, &x->config_count, ti->topic_configs.items, ti->topic_configs.count,
                                sizeof(*ti->topic_configs.items),
                                offsetof(kp_StreamsGroupDescribeResponse_KeyValue, key),
                                offsetof(kp_StreamsGroupDescribeResponse_KeyValue, value)))
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
            kna_topic_infos_copy(&x->topics[KN_SUBTOPOLOGY_STATE_CHANGELOG], &x->infos[0],
                                 &x->topic_count[KN_SUBTOPOLOGY_STATE_CHANGELOG], &st->state_changelog_topics) ||
            kna_topic_infos_copy(&x->topics[KN_SUBTOPOLOGY_REPARTITION_SOURCE], &x->infos[1],
                                 &x->topic_count[KN_SUBTOPOLOGY_REPARTITION_SOURCE], &st->repartition_source_topics))
            return KN_ERR__NOMEM;
    }
    return 0;
}

KNA_DESCRIBE_BUILD(kna_sgdesc_build, kp_StreamsGroupDescribeRequest)

static int kna_sgdesc_absorb(kna_group_call *call, const bool *sel, const knw_resp *resp) {
    const kp_StreamsGroupDescribeResponse *body = resp->body;
    for (int32_t k = 0; k < body->groups.count; k++) {
        const kp_StreamsGroupDescribeResponse_DescribedGroup *g = &body->groups.items[k];
        kna_described_group shared = {g->group_id, g->error_code, g->error_message,
                                      g->group_state, "streams", g->group_epoch,
                                      g->assignment_epoch, g->authorized_operations, g->members.count};
        int err;
        kna_group_desc *d = kna_describe_start(call, sel, resp->node_id, &shared, &err);
        if (err)
            return err;
        if (!d)
            continue;
        if (kna_topology(d, g->topology))
            return KN_ERR__NOMEM;
        for (int32_t m = 0; m < g->members.count; m++)
            if (kna_streams_member_copy(&d->members[d->member_count++], &g->members.items[m]))
                return KN_ERR__NOMEM;
    }
    return 0;
}

int kn_admin_describe_streams_groups(kn_admin *admin, const char *const *groups, size_t count, int flags,
                                     int timeout_ms, kn_group_descriptions **descp, char *errstr,
                                     size_t errstr_size) {
    kna_describe_ctx ctx = {.flags = flags};
    kna_group_call call = {.what = "StreamsGroupDescribe",
                           .api_key = KP_API_STREAMS_GROUP_DESCRIBE,
                           .min_version = -1,
                           .max_version = -1,
                           .build = kna_sgdesc_build,
                           .absorb = kna_sgdesc_absorb};
    return kna_describe_groups_run(admin, "kn_admin_describe_streams_groups", groups, count, timeout_ms, &call,
                                   &ctx, descp, errstr, errstr_size);
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
