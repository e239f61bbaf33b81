/*
 * test_proto_golden.c: generated codecs against bytes derived by hand
 * from the Kafka protocol guide (big-endian fixed ints, int16-length
 * strings, int32-length arrays; in flexible versions uvarint length+1
 * compact strings/arrays and a tagged-field section after every struct).
 * These catch mistakes a round trip cannot: a codec that is wrong the
 * same way in both directions.
 */
#include "kn_test.h"

#include <string.h>

#include "arena.h"
#include "proto/generated/kp_all.h"
#include "proto/header.h"

static void expect_bytes(const kn_wr *w, const uint8_t *want, size_t n) {
    if (w->len != n)
        fail_msg("encoded %zu bytes, expected %zu", w->len, n);
    for (size_t i = 0; i < n; i++)
        if (w->buf[i] != want[i])
            fail_msg("byte %zu: got 0x%02x, expected 0x%02x", i, w->buf[i], want[i]);
}

/* A full ApiVersions v3 request frame: size, header v2 (classic client
 * id even though the header is flexible), compact software name/version,
 * empty tag sections. */
static void test_api_versions_request_v3_frame(void **state) {
    static const uint8_t want[] = {
        0x00, 0x00, 0x00, 0x16,      /* size: 22 bytes follow */
        0x00, 0x12, 0x00, 0x03,      /* api key 18, version 3 */
        0x00, 0x00, 0x00, 0x07,      /* correlation id 7 */
        0x00, 0x03, 'c',  'l',  'i', /* client id: int16 length */
        0x00,                        /* header tagged fields */
        0x03, 'k',  'n',             /* ClientSoftwareName "kn" */
        0x04, '1',  '.',  '0',       /* ClientSoftwareVersion "1.0" */
        0x00,                        /* body tagged fields */
    };
    kn_wr w;
    kn_wr_init(&w, 0, 0);
    size_t off;
    assert_int_equal(kp_request_frame_begin(&w, KP_API_API_VERSIONS, 3, 7, kn_str_c("cli"), &off), 0);
    kp_ApiVersionsRequest req;
    kp_ApiVersionsRequest_init(&req);
    req.client_software_name = kn_str_c("kn");
    req.client_software_version = kn_str_c("1.0");
    assert_int_equal(kp_ApiVersionsRequest_encode(&w, &req, 3), 0);
    assert_int_equal(kp_request_frame_end(&w, off), 0);
    expect_bytes(&w, want, sizeof want);
    kn_wr_free(&w);
}

/* ApiVersions v0 has no fields and a v1 header (no tag section). */
static void test_api_versions_request_v0_frame(void **state) {
    static const uint8_t want[] = {
        0x00, 0x00, 0x00, 0x0a, 0x00, 0x12, 0x00, 0x00, 0x00, 0x00, 0x00, 0x01, 0xff, 0xff,
    };
    kn_wr w;
    kn_wr_init(&w, 0, 0);
    size_t off;
    assert_int_equal(kp_request_frame_begin(&w, KP_API_API_VERSIONS, 0, 1, (kn_str){NULL, -1}, &off), 0);
    kp_ApiVersionsRequest req;
    kp_ApiVersionsRequest_init(&req);
    assert_int_equal(kp_ApiVersionsRequest_encode(&w, &req, 0), 0);
    assert_int_equal(kp_request_frame_end(&w, off), 0);
    expect_bytes(&w, want, sizeof want);
    kn_wr_free(&w);
}

/* Metadata v12 with one topic by name. */
static const uint8_t metadata_v12[] = {
    0x02,                                                    /* topics: 1 (compact) */
    0,    0,   0,   0,   0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, /* topic id: zero */
    0x04, 'f', 'o', 'o',                                     /* name "foo" */
    0x00,                                                    /* topic tagged fields */
    0x01,                                                    /* allow auto topic creation */
    0x00,                                                    /* include topic authorized ops */
    0x00,                                                    /* tagged fields */
};

static void test_metadata_request_v12(void **state) {
    kp_MetadataRequest req;
    kp_MetadataRequest_init(&req);
    kp_MetadataRequest_MetadataRequestTopic topic;
    memset(&topic, 0, sizeof topic);
    topic.name = kn_str_c("foo");
    req.topics.items = &topic;
    req.topics.count = 1;
    kn_wr w;
    kn_wr_init(&w, 0, 0);
    assert_int_equal(kp_MetadataRequest_encode(&w, &req, 12), 0);
    expect_bytes(&w, metadata_v12, sizeof metadata_v12);
    kn_wr_free(&w);

    kn_arena a;
    kn_arena_init(&a, 0);
    kn_rd r;
    kn_rd_init(&r, metadata_v12, sizeof metadata_v12);
    kp_MetadataRequest back;
    assert_int_equal(kp_MetadataRequest_decode(&r, &a, &back, 12), 0);
    assert_int_equal(back.topics.count, 1);
    assert_true(kn_str_eq(back.topics.items[0].name, "foo"));
    assert_true(back.allow_auto_topic_creation);
    assert_false(back.include_topic_authorized_operations);
    kn_arena_destroy(&a);
}

/* Metadata v1 "all topics" is a null array; v0 cannot say that. */
static void test_metadata_request_null_topics(void **state) {
    static const uint8_t want[] = {0xff, 0xff, 0xff, 0xff};
    kp_MetadataRequest req;
    kp_MetadataRequest_init(&req);
    req.topics.count = -1;
    kn_wr w;
    kn_wr_init(&w, 0, 0);
    assert_int_equal(kp_MetadataRequest_encode(&w, &req, 1), 0);
    expect_bytes(&w, want, sizeof want);
    kn_wr_free(&w);
    kn_wr_init(&w, 0, 0);
    assert_int_equal(kp_MetadataRequest_encode(&w, &req, 0), KN_ERR__INVALID_ARG);
    kn_wr_free(&w);
}

/* ApiVersions v3 response with two tagged fields set (tags 1 and 3),
 * written in tag order, each as tag, size, value. */
static const uint8_t api_versions_resp_v3[] = {
    0x00, 0x00,                                           /* error code */
    0x02,                                                 /* api keys: 1 */
    0x00, 0x03, 0x00, 0x00, 0x00, 0x0d, 0x00,             /* Metadata 0-13, tags */
    0x00, 0x00, 0x00, 0x00,                               /* throttle time */
    0x02,                                                 /* two tagged fields */
    0x01, 0x08, 0,    0,    0,    0,    0,    0, 0, 0x05, /* tag 1: epoch 5 */
    0x03, 0x01, 0x01,                                     /* tag 3: zk ready */
};

static void test_api_versions_response_tagged(void **state) {
    kp_ApiVersionsResponse resp;
    kp_ApiVersionsResponse_init(&resp);
    assert_true(resp.finalized_features_epoch == -1);
    kp_ApiVersionsResponse_ApiVersion k = {3, 0, 13};
    resp.api_keys.items = &k;
    resp.api_keys.count = 1;
    resp.finalized_features_epoch = 5;
    resp.zk_migration_ready = true;
    kn_wr w;
    kn_wr_init(&w, 0, 0);
    assert_int_equal(kp_ApiVersionsResponse_encode(&w, &resp, 3), 0);
    expect_bytes(&w, api_versions_resp_v3, sizeof api_versions_resp_v3);
    kn_wr_free(&w);

    kn_arena a;
    kn_arena_init(&a, 0);
    kn_rd r;
    kn_rd_init(&r, api_versions_resp_v3, sizeof api_versions_resp_v3);
    kp_ApiVersionsResponse back;
    assert_int_equal(kp_ApiVersionsResponse_decode(&r, &a, &back, 3), 0);
    assert_int_equal(back.api_keys.count, 1);
    assert_int_equal(back.api_keys.items[0].max_version, 13);
    assert_true(back.finalized_features_epoch == 5);
    assert_true(back.zk_migration_ready);
    assert_int_equal(back.supported_features.count, 0);
    kn_arena_destroy(&a);
}

/* Unknown tags are skipped by their size; a known tag whose size does
 * not match its value is an error at that field. */
static void test_tagged_unknown_and_mismatch(void **state) {
    static const uint8_t unknown[] = {
        0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x00, 0x02, 0x09, 0x02, 0xaa, 0xbb, /* tag 9: unknown */
        0x03, 0x01, 0x01,                                                       /* tag 3 */
    };
    kn_arena a;
    kn_arena_init(&a, 0);
    kn_rd r;
    kn_rd_init(&r, unknown, sizeof unknown);
    kp_ApiVersionsResponse back;
    assert_int_equal(kp_ApiVersionsResponse_decode(&r, &a, &back, 3), 0);
    assert_true(back.zk_migration_ready);
    assert_int_equal(r.off, sizeof unknown);

    static const uint8_t mismatch[] = {
        0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x00, 0x01, 0x01, 0x09,
        0,    0,    0,    0,    0,    0,    0,    0x05, 0x00, /* int64 in 9 bytes */
    };
    kn_rd_init(&r, mismatch, sizeof mismatch);
    assert_int_equal(kp_ApiVersionsResponse_decode(&r, &a, &back, 3), KN_ERR__PROTOCOL);
    assert_string_equal(r.err_what, "tagged field size mismatch");
    assert_int_equal(r.err_off, 18);
    kn_arena_destroy(&a);
}

/* Consumer protocol subscription v0 (never flexible): topics as an
 * int32 array of int16 strings, user data as int32 bytes (null). */
static void test_consumer_subscription_v0(void **state) {
    static const uint8_t want[] = {
        0x00, 0x00, 0x00, 0x02, 0x00, 0x01, 'a', 0x00, 0x02, 'b', 'c', 0xff, 0xff, 0xff, 0xff,
    };
    kp_ConsumerProtocolSubscription sub;
    kp_ConsumerProtocolSubscription_init(&sub);
    assert_true(sub.user_data.len < 0);
    kn_str topics[2] = {kn_str_c("a"), kn_str_c("bc")};
    sub.topics.items = topics;
    sub.topics.count = 2;
    kn_wr w;
    kn_wr_init(&w, 0, 0);
    assert_int_equal(kp_ConsumerProtocolSubscription_encode(&w, &sub, 0), 0);
    expect_bytes(&w, want, sizeof want);
    kn_wr_free(&w);
}

/* A non-ignorable field the version cannot carry is a caller error, an
 * ignorable one is dropped silently (as the Java client does). */
static void test_encode_rejects_unsendable(void **state) {
    kn_wr w;
    kp_MetadataRequest req;
    kp_MetadataRequest_init(&req);
    req.include_cluster_authorized_operations = true; /* v8-10 only */
    kn_wr_init(&w, 0, 0);
    assert_int_equal(kp_MetadataRequest_encode(&w, &req, 11), KN_ERR__INVALID_ARG);
    kn_wr_free(&w);
    kn_wr_init(&w, 0, 0);
    assert_int_equal(kp_MetadataRequest_encode(&w, &req, 10), 0);
    kn_wr_free(&w);

    kp_ApiVersionsRequest av;
    kp_ApiVersionsRequest_init(&av);
    av.client_software_name = kn_str_c("kn"); /* v3+, ignorable */
    kn_wr_init(&w, 0, 0);
    assert_int_equal(kp_ApiVersionsRequest_encode(&w, &av, 2), 0);
    assert_int_equal(w.len, 0);
    kn_wr_free(&w);

    /* Null in a non-nullable string. */
    av.client_software_name = (kn_str){NULL, -1};
    kn_wr_init(&w, 0, 0);
    assert_int_equal(kp_ApiVersionsRequest_encode(&w, &av, 3), KN_ERR__INVALID_ARG);
    kn_wr_free(&w);
}

/* A nullable struct field is a pointer; on the wire an int8 marker
 * precedes it: -1 null, 1 present. */
static void test_nullable_struct(void **state) {
    static const uint8_t null_assignment[] = {
        0x00, 0x00, 0x00, 0x00, /* throttle */
        0x00, 0x00,             /* error code */
        0x00,                   /* error message: null */
        0x02, 'm',              /* member id "m" */
        0x00, 0x00, 0x00, 0x05, /* member epoch */
        0x00, 0x00, 0x13, 0x88, /* heartbeat interval 5000 */
        0xff,                   /* assignment: null */
        0x00,                   /* tagged fields */
    };
    static const uint8_t with_assignment[] =
        {
            0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x02, 'm',
            0x00, 0x00, 0x00, 0x05, 0x00, 0x00, 0x13, 0x88, 0x01, /* assignment present */
            0x02,                                                 /* topic partitions: 1 */
            1,    2,    3,    4,    5,    6,    7,    8,    9,
            10,   11,   12,   13,   14,   15,   16,               /* topic id */
            0x03, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x01, /* partitions [0, 1] */
            0x00,                                                 /* topic partitions tags */
            0x00,                                                 /* assignment tags */
            0x00,                                                 /* tagged fields */
        };
    kp_ConsumerGroupHeartbeatResponse m;
    kp_ConsumerGroupHeartbeatResponse_init(&m);
    assert_null(m.assignment);
    m.member_id = kn_str_c("m");
    m.member_epoch = 5;
    m.heartbeat_interval_ms = 5000;
    kn_wr w;
    kn_wr_init(&w, 0, 0);
    assert_int_equal(kp_ConsumerGroupHeartbeatResponse_encode(&w, &m, 0), 0);
    expect_bytes(&w, null_assignment, sizeof null_assignment);
    kn_wr_free(&w);

    int32_t parts[2] = {0, 1};
    kp_ConsumerGroupHeartbeatResponse_TopicPartitions tp;
    kp_ConsumerGroupHeartbeatResponse_TopicPartitions_init(&tp);
    for (int i = 0; i < 16; i++)
        tp.topic_id.b[i] = (uint8_t)(i + 1);
    tp.partitions.items = parts;
    tp.partitions.count = 2;
    kp_ConsumerGroupHeartbeatResponse_Assignment as;
    kp_ConsumerGroupHeartbeatResponse_Assignment_init(&as);
    as.topic_partitions.items = &tp;
    as.topic_partitions.count = 1;
    m.assignment = &as;
    kn_wr_init(&w, 0, 0);
    assert_int_equal(kp_ConsumerGroupHeartbeatResponse_encode(&w, &m, 0), 0);
    expect_bytes(&w, with_assignment, sizeof with_assignment);
    kn_wr_free(&w);

    kn_arena a;
    kn_arena_init(&a, 0);
    kn_rd r;
    kn_rd_init(&r, null_assignment, sizeof null_assignment);
    assert_int_equal(kp_ConsumerGroupHeartbeatResponse_decode(&r, &a, &m, 0), 0);
    assert_null(m.assignment);
    assert_true(m.error_message.len < 0);
    kn_rd_init(&r, with_assignment, sizeof with_assignment);
    assert_int_equal(kp_ConsumerGroupHeartbeatResponse_decode(&r, &a, &m, 0), 0);
    assert_non_null(m.assignment);
    assert_int_equal(m.assignment->topic_partitions.count, 1);
    assert_int_equal(m.assignment->topic_partitions.items[0].partitions.items[1], 1);
    kn_arena_destroy(&a);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_api_versions_request_v3_frame),
        cmocka_unit_test(test_api_versions_request_v0_frame),
        cmocka_unit_test(test_metadata_request_v12),
        cmocka_unit_test(test_metadata_request_null_topics),
        cmocka_unit_test(test_api_versions_response_tagged),
        cmocka_unit_test(test_tagged_unknown_and_mismatch),
        cmocka_unit_test(test_consumer_subscription_v0),
        cmocka_unit_test(test_encode_rejects_unsendable),
        cmocka_unit_test(test_nullable_struct),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
