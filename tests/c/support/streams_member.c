/*
 * streams_member.c: see streams_member.h.
 */
#include "streams_member.h"

#include <stdio.h>
#include <string.h>

#include "admin/admin.h"
#include "kn_test.h"
#include "proto/generated/kp_apis.h"
#include "proto/generated/kp_streams_group_heartbeat.h"
#include "wire/coordinator.h"
#include "wire/wire.h"

#define STREAMS_TIMEOUT_MS 30000

int32_t streams_heartbeat(kn_admin *a, const char *group, const char *member, int32_t epoch, const char *topic,
                         const int32_t *owned, int owned_n, int32_t *tasks, int *task_n) {
    char why[256] = "";
    int32_t node = -1;
    assert_int_equal(knw_coord_wait(a->client, 0, group, knw_now_ms() + STREAMS_TIMEOUT_MS, &node, why, sizeof why), 0);
    kp_StreamsGroupHeartbeatRequest req;
    kp_StreamsGroupHeartbeatRequest_init(&req);
    req.group_id = (kn_str){group, (int32_t)strlen(group)};
    req.member_id = (kn_str){member, (int32_t)strlen(member)};
    req.member_epoch = epoch;
    req.rebalance_timeout_ms = 30000;
    kn_str src = {topic, (int32_t)strlen(topic)};
    kp_StreamsGroupHeartbeatRequest_Subtopology sub;
    kp_StreamsGroupHeartbeatRequest_Subtopology_init(&sub);
    sub.subtopology_id = (kn_str){"0", 1};
    sub.source_topics = (kp_str_array){&src, 1};
    /* A state store's changelog (the test created it, with the source
     * topic's partition count), declared with a config, as Kafka
     * Streams declares its stores. */
    char changelog[256];
    snprintf(changelog, sizeof changelog, "%s-store-changelog", topic);
    kp_StreamsGroupHeartbeatRequest_KeyValue cfg[2] = {{{"cleanup.policy", 14}, {"compact", 7}},
                                                      {{"min.compaction.lag.ms", 21}, {"1000", 4}}};
    kp_StreamsGroupHeartbeatRequest_TopicInfo store;
    kp_StreamsGroupHeartbeatRequest_TopicInfo_init(&store);
    store.name = (kn_str){changelog, (int32_t)strlen(changelog)};
    store.replication_factor = 1;
    store.topic_configs = (kp_StreamsGroupHeartbeatRequest_KeyValue_array){cfg, 2};
    sub.state_changelog_topics = (kp_StreamsGroupHeartbeatRequest_TopicInfo_array){&store, 1};
    kp_StreamsGroupHeartbeatRequest_Topology topo = {0, {&sub, 1}};
    kp_StreamsGroupHeartbeatRequest_TaskIds mine = {{"0", 1}, {(int32_t *)owned, owned_n}};
    kp_StreamsGroupHeartbeatRequest_KeyValue tags[2] = {{{"zone", 4}, {"z1", 2}}, {{"tier", 4}, {"gold", 4}}};
    kp_StreamsGroupHeartbeatRequest_Endpoint endpoint = {{"iq.kn.example", 13}, 8080};
    kp_StreamsGroupHeartbeatRequest_TaskOffset offs[1] = {{{"0", 1}, 0, 7}};
    if (epoch == 0) {
        req.topology = &topo;
        req.process_id = (kn_str){"kn-process-1", 12};
        req.rack_id = (kn_str){"kn-rack-a", 9};
        req.user_endpoint = &endpoint;
        req.client_tags = (kp_StreamsGroupHeartbeatRequest_KeyValue_array){tags, 2};
    }
    if (epoch > 0 && owned_n) {
        /* What Kafka Streams reports of its stores' progress. */
        req.task_offsets = (kp_StreamsGroupHeartbeatRequest_TaskOffset_array){offs, 1};
        req.task_end_offsets = (kp_StreamsGroupHeartbeatRequest_TaskOffset_array){offs, 1};
    }
    if (epoch >= 0) {
        req.active_tasks = (kp_StreamsGroupHeartbeatRequest_TaskIds_array){owned_n ? &mine : NULL, owned_n ? 1 : 0};
        req.standby_tasks = (kp_StreamsGroupHeartbeatRequest_TaskIds_array){NULL, 0};
        req.warmup_tasks = (kp_StreamsGroupHeartbeatRequest_TaskIds_array){NULL, 0};
    }
    knw_resp *resp = knw_call(a->client, node, KP_API_STREAMS_GROUP_HEARTBEAT, -1, -1, &req, STREAMS_TIMEOUT_MS);
    assert_non_null(resp);
    if (resp->err)
        fail_msg("StreamsGroupHeartbeat: %s", kn_err_name(resp->err));
    const kp_StreamsGroupHeartbeatResponse *body = resp->body;
    if (body->error_code)
        fail_msg("StreamsGroupHeartbeat: %s: %.*s", kn_err_name(body->error_code), (int)body->error_message.len,
                 body->error_message.ptr ? body->error_message.ptr : "");
    static int last_status = -1; /* each status once, not every heartbeat */
    for (int32_t s = 0; s < body->status.count; s++)
        if (body->status.items[s].status_code != last_status) {
            last_status = body->status.items[s].status_code;
            print_message("streams status %d: %.*s\n", last_status, (int)body->status.items[s].status_detail.len,
                          body->status.items[s].status_detail.ptr);
        }
    if (tasks && body->active_tasks.count >= 0) {
        *task_n = 0;
        for (int32_t t = 0; t < body->active_tasks.count; t++)
            for (int32_t p = 0; p < body->active_tasks.items[t].partitions.count && *task_n < 8; p++)
                tasks[(*task_n)++] = body->active_tasks.items[t].partitions.items[p];
    }
    int32_t out = body->member_epoch;
    knw_resp_free(resp);
    return out;
}
