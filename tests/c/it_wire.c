/*
 * it_wire.c: the wire layer against a real Kafka 4.3 broker
 * (KAFKA_BOOTSTRAP; KN_BROKER_DIR names the harness directory for the
 * restart test): ApiVersions negotiation, metadata (all topics, a
 * missing topic, a created topic's leader), 1000 pipelined requests, a
 * broker restart with reconnect, and a refused connection.
 */
#include "kn_test.h"

#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "config/config.h"
#include "kafka_native.h"
#include "proto/generated/kp_api_versions.h"
#include "proto/generated/kp_apis.h"
#include "proto/generated/kp_create_topics.h"
#include "proto/generated/kp_metadata.h"
#include "wire/wire.h"

static knw_client *new_client(const char *bootstrap, const char *kind, const char **kv) {
    kn_conf *conf = kn_conf_new(!strcmp(kind, "admin")      ? KN_CLIENT_ADMIN
                                : !strcmp(kind, "consumer") ? KN_CLIENT_CONSUMER
                                                            : KN_CLIENT_PRODUCER);
    assert_non_null(conf);
    char err[512];
    assert_int_equal(kn_conf_set(conf, "bootstrap.servers", bootstrap, err, sizeof err), 0);
    for (int i = 0; kv && kv[i]; i += 2) {
        if (kn_conf_set(conf, kv[i], kv[i + 1], err, sizeof err))
            fail_msg("%s", err);
    }
    knw_client *c = knw_client_new(conf, kind, err, sizeof err);
    if (!c)
        fail_msg("knw_client_new: %s", err);
    kn_conf_destroy(conf);
    return c;
}

static void test_apiversions_negotiated(void **state) {
    knw_client *c = new_client(kn_test_bootstrap(), "producer", NULL);
    int err = 0;
    knw_metadata *md = knw_metadata_wait(c, false, 0, 30000, &err);
    assert_int_equal(err, 0);
    assert_non_null(md);
    assert_true(md->broker_count >= 1);
    assert_non_null(md->cluster_id);
    int32_t node = md->brokers[0].node_id;
    knw_metadata_release(md);

    /* The node connection comes up on demand: send it something. */
    kp_ApiVersionsRequest avr;
    kp_ApiVersionsRequest_init(&avr);
    avr.client_software_name = kn_str_c("kafka-native");
    avr.client_software_version = kn_str_c(KN_VERSION_STR);
    knw_resp *resp = knw_call(c, node, KP_API_API_VERSIONS, -1, -1, &avr, 10000);
    assert_int_equal(resp->err, 0);
    assert_int_equal(resp->node_id, node);
    assert_true(resp->api_version >= 3);
    const kp_ApiVersionsResponse *av = resp->body;
    assert_int_equal(av->error_code, 0);
    assert_true(av->api_keys.count > 40);
    knw_resp_free(resp);

    int16_t mv = knw_api_version(c, node, KP_API_METADATA);
    int16_t pv = knw_api_version(c, node, KP_API_PRODUCE);
    int16_t fv = knw_api_version(c, node, KP_API_FETCH);
    /* Kafka 4.x serves Metadata 0-13, Produce 3-12+, Fetch 4-17+. */
    assert_true(mv >= 12 && mv <= kp_api_get(KP_API_METADATA)->max_version);
    assert_true(pv >= 9 && pv <= kp_api_get(KP_API_PRODUCE)->max_version);
    assert_true(fv >= 13 && fv <= kp_api_get(KP_API_FETCH)->max_version);
    assert_true(knw_node_ready(c, node));
    assert_int_equal(knw_api_version(c, 12345, KP_API_METADATA), -1);
    knw_client_destroy(c);
}

static const kp_MetadataResponse_MetadataResponseTopic *find_topic(const kp_MetadataResponse *m,
                                                                   const char *name) {
    for (int32_t i = 0; i < m->topics.count; i++)
        if (kn_str_eq(m->topics.items[i].name, name))
            return &m->topics.items[i];
    return NULL;
}

static void test_metadata_all_and_missing(void **state) {
    knw_client *c = new_client(kn_test_bootstrap(), "consumer",
                               (const char *[]){"allow.auto.create.topics", "false", NULL});
    int err = 0;
    knw_metadata *md = knw_metadata_wait(c, true, 0, 30000, &err);
    assert_int_equal(err, 0);
    assert_true(md->all_topics);
    assert_true(md->broker_count >= 1);
    assert_true(md->controller_id >= 0);
    for (int32_t i = 1; i < md->topic_count; i++)
        assert_true(strcmp(md->topics[i - 1].name, md->topics[i].name) < 0);
    knw_metadata_release(md);

    /* A named topic that does not exist: per-topic error, not created. */
    const char *missing = kn_test_topic("missing");
    kp_MetadataRequest_MetadataRequestTopic t = {.name = kn_str_c(missing)};
    kp_MetadataRequest req;
    kp_MetadataRequest_init(&req);
    req.topics.items = &t;
    req.topics.count = 1;
    req.allow_auto_topic_creation = false;
    knw_resp *resp = knw_call(c, KNW_NODE_ANY, KP_API_METADATA, 12, -1, &req, 10000);
    assert_int_equal(resp->err, 0);
    const kp_MetadataResponse_MetadataResponseTopic *mt = find_topic(resp->body, missing);
    assert_non_null(mt);
    assert_int_equal(mt->error_code, KN_ERR_UNKNOWN_TOPIC_OR_PARTITION);
    knw_resp_free(resp);

    /* Through the cache: register it and wait for a fresh snapshot. */
    knw_metadata_add_topics(c, &missing, 1);
    md = knw_metadata_wait(c, false, knw_now_ms(), 30000, &err);
    assert_int_equal(err, 0);
    const knw_topic *kt = knw_metadata_topic(md, missing);
    assert_non_null(kt);
    assert_int_equal(kt->error, KN_ERR_UNKNOWN_TOPIC_OR_PARTITION);
    assert_false(md->all_topics);
    knw_metadata_release(md);
    knw_client_destroy(c);
}

static void test_create_topic_and_leader(void **state) {
    knw_client *c = new_client(kn_test_bootstrap(), "admin", NULL);
    const char *name = kn_test_topic("wire");
    char topic[128];
    snprintf(topic, sizeof topic, "%s", name);
    kp_CreateTopicsRequest_CreatableTopic ct = {
        .name = kn_str_c(topic), .num_partitions = 3, .replication_factor = 1};
    kp_CreateTopicsRequest req;
    kp_CreateTopicsRequest_init(&req);
    req.topics.items = &ct;
    req.topics.count = 1;
    req.timeout_ms = 30000;
    knw_resp *resp = knw_call(c, KNW_NODE_CONTROLLER, KP_API_CREATE_TOPICS, -1, -1, &req, 40000);
    if (resp->err)
        fail_msg("CreateTopics: %s", resp->errstr);
    knw_resp_free(resp);

    knw_metadata_add_topics(c, (const char *[]){topic}, 1);
    /* Leaders are elected right after creation; poll briefly. */
    const knw_topic *kt = NULL;
    knw_metadata *md = NULL;
    int64_t deadline = kn_test_now_ms() + 30000;
    while (kn_test_now_ms() < deadline) {
        int err;
        knw_metadata_release(md);
        md = knw_metadata_wait(c, false, knw_now_ms(), 5000, &err);
        kt = md ? knw_metadata_topic(md, topic) : NULL;
        if (kt && kt->error == 0 && kt->partition_count == 3 && kt->partitions[2].leader >= 0)
            break;
        usleep(200000);
    }
    assert_non_null(kt);
    assert_int_equal(kt->error, 0);
    assert_int_equal(kt->partition_count, 3);
    assert_false(kn_uuid_is_zero(&kt->topic_id));
    assert_ptr_equal(knw_metadata_topic_by_id(md, &kt->topic_id), kt);
    for (int p = 0; p < 3; p++) {
        assert_int_equal(kt->partitions[p].partition, p);
        const knw_broker *b = knw_metadata_broker(md, kt->partitions[p].leader);
        assert_non_null(b);
        assert_true(b->port > 0);
        assert_true(kt->partitions[p].replica_count >= 1);
        assert_true(kt->partitions[p].leader_epoch >= 0);
    }
    knw_metadata_release(md);
    knw_client_destroy(c);
}

typedef struct pipe_state {
    _Atomic int done, ok;
    _Atomic int max_inflight;
} pipe_state;

static void pipe_cb(knw_client *c, knw_resp *resp, void *opaque) {
    pipe_state *ps = opaque;
    if (resp->err == 0 && resp->body)
        atomic_fetch_add(&ps->ok, 1);
    else
        fprintf(stderr, "pipelined request failed: %s\n", resp->errstr);
    int n = knw_inflight(c, resp->node_id);
    int m = atomic_load(&ps->max_inflight);
    while (n > m && !atomic_compare_exchange_weak(&ps->max_inflight, &m, n))
        ;
    knw_resp_free(resp);
    atomic_fetch_add(&ps->done, 1);
}

static void test_pipelining_1000(void **state) {
    knw_client *c = new_client(kn_test_bootstrap(), "producer",
                               (const char *[]){"max.in.flight.requests.per.connection", "5", NULL});
    int err;
    knw_metadata *md = knw_metadata_wait(c, false, 0, 30000, &err);
    assert_non_null(md);
    int32_t node = md->brokers[0].node_id;
    knw_metadata_release(md);
    kp_ApiVersionsRequest avr;
    kp_ApiVersionsRequest_init(&avr);
    kp_MetadataRequest mreq;
    kp_MetadataRequest_init(&mreq);
    mreq.topics.count = 0;
    mreq.allow_auto_topic_creation = false;
    pipe_state ps = {0};
    knw_stats before;
    knw_get_stats(c, &before);
    int64_t t0 = kn_test_now_ms();
    for (int i = 0; i < 1000; i++) {
        bool md_req = i % 2;
        int32_t dest = i % 4 < 2 ? node : KNW_NODE_ANY;
        knw_send(c, dest, md_req ? KP_API_METADATA : KP_API_API_VERSIONS, -1, -1,
                 md_req ? (const void *)&mreq : (const void *)&avr, 30000, pipe_cb, &ps);
    }
    while (atomic_load(&ps.done) < 1000 && kn_test_now_ms() - t0 < 60000)
        usleep(1000);
    assert_int_equal(atomic_load(&ps.done), 1000);
    assert_int_equal(atomic_load(&ps.ok), 1000);
    assert_true(atomic_load(&ps.max_inflight) <= 5);
    knw_stats after;
    knw_get_stats(c, &after);
    assert_true(after.responses_received - before.responses_received >= 1000);
    assert_int_equal(after.protocol_errors, 0);
    fprintf(stderr, "1000 pipelined requests in %lld ms\n", (long long)(kn_test_now_ms() - t0));
    knw_client_destroy(c);
}

static int broker_cmd(const char *what) {
    const char *dir = getenv("KN_BROKER_DIR");
    if (!dir || !*dir)
        dir = "/tmp/kafka-native-broker";
    char cmd[1024];
    snprintf(cmd, sizeof cmd, "%s %s 1 --dir %s >&2", kn_test_source_path("tools/kafka/broker"), what, dir);
    return system(cmd);
}

static void test_broker_restart(void **state) {
    knw_client *c = new_client(kn_test_bootstrap(), "producer",
                               (const char *[]){"reconnect.backoff.max.ms", "500", NULL});
    int err;
    knw_metadata *md = knw_metadata_wait(c, false, 0, 30000, &err);
    assert_non_null(md);
    int32_t node = md->brokers[0].node_id;
    knw_metadata_release(md);
    kp_MetadataRequest mreq;
    kp_MetadataRequest_init(&mreq);
    mreq.topics.count = 0;
    knw_resp *resp = knw_call(c, node, KP_API_METADATA, 12, -1, &mreq, 10000);
    assert_int_equal(resp->err, 0);
    knw_resp_free(resp);
    knw_stats s0;
    knw_get_stats(c, &s0);

    assert_int_equal(broker_cmd("stop-node"), 0);
    /* While it is down, a request fails (quickly, with a transport
     * error) instead of hanging. */
    resp = knw_call(c, node, KP_API_METADATA, 12, -1, &mreq, 5000);
    assert_int_not_equal(resp->err, 0);
    fprintf(stderr, "while down: %s: %s\n", kn_err_name(resp->err), resp->errstr);
    knw_resp_free(resp);
    assert_false(knw_node_ready(c, node));

    assert_int_equal(broker_cmd("start-node"), 0);
    int64_t deadline = kn_test_now_ms() + 120000;
    bool ok = false;
    while (!ok && kn_test_now_ms() < deadline) {
        resp = knw_call(c, KNW_NODE_ANY, KP_API_METADATA, 12, -1, &mreq, 5000);
        ok = resp->err == 0;
        knw_resp_free(resp);
        if (!ok)
            usleep(200000);
    }
    assert_true(ok);
    knw_stats s1;
    knw_get_stats(c, &s1);
    assert_true(s1.connects > s0.connects);
    assert_true(s1.disconnects > s0.disconnects);
    /* The cache also recovers. */
    md = knw_metadata_wait(c, false, knw_now_ms(), 30000, &err);
    assert_non_null(md);
    assert_true(md->broker_count >= 1);
    knw_metadata_release(md);
    knw_client_destroy(c);
}

static void test_refused_connection(void **state) {
    (void)kn_test_bootstrap();
    knw_client *c =
        new_client("127.0.0.1:1", "producer", (const char *[]){"request.timeout.ms", "1500", NULL});
    kp_ApiVersionsRequest avr;
    kp_ApiVersionsRequest_init(&avr);
    int64_t t0 = kn_test_now_ms();
    knw_resp *resp = knw_call(c, KNW_NODE_ANY, KP_API_API_VERSIONS, -1, -1, &avr, -1);
    int64_t took = kn_test_now_ms() - t0;
    fprintf(stderr, "refused: %s: %s (%lld ms)\n", kn_err_name(resp->err), resp->errstr, (long long)took);
    assert_int_not_equal(resp->err, 0);
    assert_true(took < 1500 + 1000);
    assert_non_null(strstr(resp->errstr, "127.0.0.1:1"));
    assert_non_null(strstr(resp->errstr, "refused"));
    knw_resp_free(resp);
    knw_stats s;
    knw_get_stats(c, &s);
    assert_true(s.connect_failures >= 1);
    assert_int_equal(s.connects, 0);
    knw_client_destroy(c);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_apiversions_negotiated),  cmocka_unit_test(test_metadata_all_and_missing),
        cmocka_unit_test(test_create_topic_and_leader), cmocka_unit_test(test_pipelining_1000),
        cmocka_unit_test(test_refused_connection),      cmocka_unit_test(test_broker_restart),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
