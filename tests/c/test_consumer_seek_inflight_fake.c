/*
 * test_consumer_seek_inflight_fake.c: a seek to the beginning or end
 * while the lookup of the partition's previous position is still in
 * flight. The seek bumps the partition's generation, so the old
 * answer is dropped; the consumer must then send the lookup the seek
 * asked for. It did not: the dropped answer left the partition's
 * in-flight mark set, so no ListOffsets was ever sent again and the
 * position stayed unknown for good (the CLI saw it as Lua's
 * assign({..., offset = "beginning"}), which is assign then seek, racing
 * the network thread's first ListOffsets for auto.offset.reset).
 *
 * The fake broker holds the first ListOffsets (or OffsetFetch) answer
 * until the test has seeked, so the race is taken every time. It serves
 * ApiVersions, Metadata (topic "t", 1 partition, leader node 1),
 * FindCoordinator, OffsetFetch (nothing committed), ListOffsets (earliest
 * 0, latest 10), OffsetForLeaderEpoch (the log end, 10, in every epoch:
 * no truncation) and Fetch (empty answers). The same holds for a
 * position validation (KIP-320) in flight when the seek lands.
 */
#include "kn_test.h"

#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "fake_broker.h"
#include "fake_metadata.h"
#include "kn_alloc.h"
#include "proto/generated/kp_apis.h"
#include "proto/generated/kp_find_coordinator.h"
#include "proto/generated/kp_list_offsets.h"
#include "proto/generated/kp_metadata.h"
#include "proto/generated/kp_offset_fetch.h"
#include "proto/generated/kp_offset_for_leader_epoch.h"

#define LOG_END 10

typedef struct fake {
    kn_fake_broker *fb;
    int port;
    pthread_mutex_t mu;
    pthread_cond_t cond;
    int16_t hold_key; /* the first request of this API waits for release */
    bool held;        /* it arrived (and waits) */
    bool released;
    int list_offsets; /* ListOffsets requests seen */
    int epoch_requests; /* OffsetForLeaderEpoch requests seen */
    int32_t leader_epoch; /* Metadata */
} fake;

static const kn_uuid topic_id = {{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16}};

static void answer_metadata(fake *f, kp_MetadataResponse *r, kn_arena *a) {
    pthread_mutex_lock(&f->mu);
    int32_t epoch = f->leader_epoch;
    pthread_mutex_unlock(&f->mu);
    kn_fake_metadata_one_partition(r, a, &f->port, 1, &topic_id, epoch);
}

/* Earliest (-2) is 0, latest (-1) is LOG_END. */
static void answer_list_offsets(const kp_ListOffsetsRequest *q, kp_ListOffsetsResponse *r, kn_arena *a) {
    r->topics.count = q->topics.count;
    r->topics.items = kn_arena_calloc(a, (size_t)q->topics.count + 1, sizeof(*r->topics.items));
    for (int32_t t = 0; t < q->topics.count; t++) {
        int32_t n = q->topics.items[t].partitions.count;
        kp_ListOffsetsResponse_ListOffsetsPartitionResponse *ps = kn_arena_calloc(a, (size_t)n + 1, sizeof(*ps));
        for (int32_t i = 0; i < n; i++) {
            const kp_ListOffsetsRequest_ListOffsetsPartition *qp = &q->topics.items[t].partitions.items[i];
            ps[i].partition_index = qp->partition_index;
            ps[i].timestamp = -1;
            ps[i].offset = qp->timestamp == -2 ? 0 : LOG_END;
            ps[i].leader_epoch = 0;
        }
        r->topics.items[t].name = q->topics.items[t].name;
        r->topics.items[t].partitions.items = ps;
        r->topics.items[t].partitions.count = n;
    }
}

/* The log ends at LOG_END in every epoch: no truncation. */
static void answer_epoch(const kp_OffsetForLeaderEpochRequest *q, kp_OffsetForLeaderEpochResponse *r,
                         kn_arena *a) {
    r->topics.count = q->topics.count;
    r->topics.items = kn_arena_calloc(a, (size_t)q->topics.count + 1, sizeof(*r->topics.items));
    for (int32_t t = 0; t < q->topics.count; t++) {
        int32_t n = q->topics.items[t].partitions.count;
        kp_OffsetForLeaderEpochResponse_EpochEndOffset *eo = kn_arena_calloc(a, (size_t)n + 1, sizeof(*eo));
        for (int32_t i = 0; i < n; i++) {
            eo[i].partition = q->topics.items[t].partitions.items[i].partition;
            eo[i].leader_epoch = q->topics.items[t].partitions.items[i].leader_epoch;
            eo[i].end_offset = LOG_END;
        }
        r->topics.items[t].topic = q->topics.items[t].topic;
        r->topics.items[t].partitions.items = eo;
        r->topics.items[t].partitions.count = n;
    }
}

/* Nothing committed for any partition asked for. */
static void answer_offset_fetch(const kp_OffsetFetchRequest *q, kp_OffsetFetchResponse *r, kn_arena *a) {
    r->topics.count = q->topics.count;
    r->topics.items = kn_arena_calloc(a, (size_t)q->topics.count + 1, sizeof(*r->topics.items));
    for (int32_t t = 0; t < q->topics.count; t++) {
        int32_t n = q->topics.items[t].partition_indexes.count;
        kp_OffsetFetchResponse_OffsetFetchResponsePartition *ps = kn_arena_calloc(a, (size_t)n + 1, sizeof(*ps));
        for (int32_t i = 0; i < n; i++) {
            kp_OffsetFetchResponse_OffsetFetchResponsePartition_init(&ps[i]);
            ps[i].partition_index = q->topics.items[t].partition_indexes.items[i];
            ps[i].committed_offset = -1;
            ps[i].committed_leader_epoch = -1;
            ps[i].metadata = kn_str_c("");
        }
        r->topics.items[t].name = q->topics.items[t].name;
        r->topics.items[t].partitions.items = ps;
        r->topics.items[t].partitions.count = n;
    }
}

/* The first request of f->hold_key waits (on the listener thread, so
 * everything behind it waits too) until the test releases it, at most
 * 10 s. */
static void maybe_hold(fake *f, int16_t key) {
    pthread_mutex_lock(&f->mu);
    if (key == KP_API_LIST_OFFSETS)
        f->list_offsets++;
    if (key == KP_API_OFFSET_FOR_LEADER_EPOCH)
        f->epoch_requests++;
    if (key == f->hold_key && !f->held) {
        f->held = true;
        pthread_cond_broadcast(&f->cond);
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        ts.tv_sec += 10;
        while (!f->released)
            if (pthread_cond_timedwait(&f->cond, &f->mu, &ts) != 0)
                break;
    }
    pthread_mutex_unlock(&f->mu);
}

/* Node 1 coordinates every key, or err for all of them: v4+ (KIP-699)
 * answers per key asked for; below, in the top-level fields (which v4+
 * cannot encode: the frame would fail). */
static void answer_find_coordinator(fake *f, const kn_fake_request *rq, kp_FindCoordinatorResponse *r,
                                    kn_arena *a, int16_t err) {
    if (rq->ver < 4) {
        r->error_code = err;
        r->node_id = err ? -1 : 1;
        r->host = kn_str_c("127.0.0.1");
        r->port = f->port;
        return;
    }
    const kp_FindCoordinatorRequest *q = kn_fake_decode_request(a, rq);
    int32_t n = q->coordinator_keys.count;
    r->coordinators.items = kn_arena_calloc(a, (size_t)n + 1, sizeof(*r->coordinators.items));
    r->coordinators.count = n;
    for (int32_t i = 0; i < n; i++) {
        kp_FindCoordinatorResponse_Coordinator *co = &r->coordinators.items[i];
        co->key = q->coordinator_keys.items[i];
        co->error_code = err;
        co->node_id = err ? -1 : 1;
        co->host = kn_str_c("127.0.0.1");
        co->port = f->port;
        co->error_message.len = -1;
    }
}

static uint8_t *answer(void *opaque, const kn_fake_request *rq, size_t *len) {
    fake *f = opaque;
    int16_t key = rq->key;
    kn_arena a;
    kn_arena_init(&a, 0);
    void *body = kn_arena_alloc(&a, kp_api_get(key)->resp_size);
    kp_api_get(key)->resp_init(body);
    maybe_hold(f, key);
    if (key == KP_API_API_VERSIONS) {
        kn_fake_api_versions(&a, body);
    } else if (key == KP_API_METADATA) {
        answer_metadata(f, body, &a);
    } else if (key == KP_API_FIND_COORDINATOR) {
        answer_find_coordinator(f, rq, body, &a, 0);
    } else if (key == KP_API_OFFSET_FETCH) {
        answer_offset_fetch(kn_fake_decode_request(&a, rq), body, &a);
    } else if (key == KP_API_LIST_OFFSETS) {
        answer_list_offsets(kn_fake_decode_request(&a, rq), body, &a);
    } else if (key == KP_API_OFFSET_FOR_LEADER_EPOCH) {
        answer_epoch(kn_fake_decode_request(&a, rq), body, &a);
    } else if (key == KP_API_FETCH) {
        usleep(20 * 1000); /* an empty answer, not a busy loop */
    }
    uint8_t *out = kn_fake_frame_response(key, rq->ver, rq->corr, body, rq->ver, len);
    kn_arena_destroy(&a);
    return out;
}

typedef struct env {
    fake *f;
    kn_consumer *c;
} env;

static void start(env *e, int16_t hold_key, const char *reset, const char *group) {
    e->f = kn_calloc(1, sizeof *e->f);
    pthread_mutex_init(&e->f->mu, NULL);
    pthread_cond_init(&e->f->cond, NULL);
    e->f->hold_key = hold_key;
    e->f->fb = kn_fake_broker_start_answering(answer, e->f);
    e->f->port = kn_fake_broker_port(e->f->fb);
    kn_conf *conf = kn_conf_new(KN_CLIENT_CONSUMER);
    char bs[64], es[512];
    snprintf(bs, sizeof bs, "127.0.0.1:%d", e->f->port);
    kn_test_conf_set(conf, "bootstrap.servers", bs);
    kn_test_conf_set(conf, "auto.offset.reset", reset);
    kn_test_conf_set(conf, "retry.backoff.ms", "20");
    kn_test_conf_set(conf, "retry.backoff.max.ms", "20");
    kn_test_conf_set(conf, "metadata.max.age.ms", "200");
    if (group) {
        kn_test_conf_set(conf, "group.id", group);
        kn_test_conf_set(conf, "enable.auto.commit", "false");
    }
    e->c = kn_consumer_new(conf, es, sizeof es);
    kn_conf_destroy(conf);
    if (!e->c)
        fail_msg("kn_consumer_new: %s", es);
    kn_topic_partition_list *l = kn_topic_partition_list_new();
    kn_topic_partition_list_add(l, "t", 0);
    assert_int_equal(kn_consumer_assign(e->c, l), KN_OK);
    kn_topic_partition_list_destroy(l);
}

/* Waits (at most 10 s) until the held request has arrived at the fake. */
static void wait_held(fake *f) {
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    ts.tv_sec += 10;
    pthread_mutex_lock(&f->mu);
    while (!f->held)
        if (pthread_cond_timedwait(&f->cond, &f->mu, &ts) != 0)
            break;
    bool held = f->held;
    pthread_mutex_unlock(&f->mu);
    assert_true(held);
}

static void release(fake *f) {
    pthread_mutex_lock(&f->mu);
    f->released = true;
    pthread_cond_broadcast(&f->cond);
    pthread_mutex_unlock(&f->mu);
}

static void stop(env *e) {
    release(e->f);
    kn_consumer_close(e->c, -1);
    kn_consumer_destroy(e->c);
    kn_fake_broker_stop(e->f->fb);
    pthread_cond_destroy(&e->f->cond);
    pthread_mutex_destroy(&e->f->mu);
    kn_free(e->f);
}

/* assign, the first lookup held at the fake, seek(offset), release: the
 * position must come from the seek's lookup (position() waits 10 s). */
static void run_case(int16_t hold_key, const char *reset, const char *group, int64_t seek_to,
                     int64_t want) {
    env e;
    start(&e, hold_key, reset, group);
    wait_held(e.f);
    assert_int_equal(kn_consumer_seek(e.c, "t", 0, seek_to), KN_OK);
    release(e.f);
    int64_t pos = -1;
    int rc = kn_consumer_position(e.c, "t", 0, 10000, &pos);
    pthread_mutex_lock(&e.f->mu);
    int sent = e.f->list_offsets;
    pthread_mutex_unlock(&e.f->mu);
    print_message("reset=%s group=%s seek %lld during the held %s: %s, position %lld, %d ListOffsets\n",
                  reset, group ? group : "-", (long long)seek_to,
                  hold_key == KP_API_LIST_OFFSETS ? "ListOffsets" : "OffsetFetch", kn_err_name(rc),
                  (long long)pos, sent);
    assert_int_equal(rc, KN_OK);
    assert_int_equal(pos, want);
    stop(&e);
}

/* Lua's assign({..., offset = "beginning"}) under the default reset. */
static void test_seek_beginning_while_reset_latest_inflight(void **state) {
    (void)state;
    run_case(KP_API_LIST_OFFSETS, "latest", NULL, KN_OFFSET_BEGINNING, 0);
}

/* ... and offset = "end" under auto.offset.reset=earliest. */
static void test_seek_end_while_reset_earliest_inflight(void **state) {
    (void)state;
    run_case(KP_API_LIST_OFFSETS, "earliest", NULL, KN_OFFSET_END, LOG_END);
}

/* A seek to the same end as the reset in flight: still a new lookup. */
static void test_seek_beginning_while_reset_earliest_inflight(void **state) {
    (void)state;
    run_case(KP_API_LIST_OFFSETS, "earliest", NULL, KN_OFFSET_BEGINNING, 0);
}

/* With group.id: the seek lands while the committed-offset lookup
 * (OffsetFetch) is in flight, as a seek in an assignment callback can. */
static void test_seek_beginning_while_offset_fetch_inflight(void **state) {
    (void)state;
    run_case(KP_API_OFFSET_FETCH, "latest", "g-seek-inflight", KN_OFFSET_BEGINNING, 0);
}

/* KIP-320: the seek lands while a position is being validated after a
 * leader change (OffsetForLeaderEpoch in flight). The new position,
 * looked up under the old epoch, needs validating in its turn: the
 * consumer must send OffsetForLeaderEpoch again (the dropped answer left
 * validate_inflight set, so it never did). */
static void test_seek_while_validation_inflight(void **state) {
    (void)state;
    env e;
    start(&e, KP_API_OFFSET_FOR_LEADER_EPOCH, "earliest", NULL);
    int64_t pos = -1;
    assert_int_equal(kn_consumer_position(e.c, "t", 0, 10000, &pos), KN_OK);
    assert_int_equal(pos, 0);
    usleep(600 * 1000); /* a metadata refresh records epoch 0 as checked */
    pthread_mutex_lock(&e.f->mu);
    e.f->leader_epoch = 1; /* the leader changed: the position is suspect */
    pthread_mutex_unlock(&e.f->mu);
    wait_held(e.f);
    assert_int_equal(kn_consumer_seek(e.c, "t", 0, KN_OFFSET_BEGINNING), KN_OK);
    release(e.f);
    int64_t end = kn_test_now_ms() + 10000;
    int asked = 0;
    while (kn_test_now_ms() < end) {
        pthread_mutex_lock(&e.f->mu);
        asked = e.f->epoch_requests;
        pthread_mutex_unlock(&e.f->mu);
        if (asked >= 2)
            break;
        usleep(20 * 1000);
    }
    int rc = kn_consumer_position(e.c, "t", 0, 10000, &pos);
    print_message("seek during the held OffsetForLeaderEpoch: %d OffsetForLeaderEpoch sent, position %s %lld\n",
                  asked, kn_err_name(rc), (long long)pos);
    assert_true(asked >= 2);
    assert_int_equal(rc, KN_OK);
    assert_int_equal(pos, 0);
    stop(&e);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_seek_beginning_while_reset_latest_inflight),
        cmocka_unit_test(test_seek_end_while_reset_earliest_inflight),
        cmocka_unit_test(test_seek_beginning_while_reset_earliest_inflight),
        cmocka_unit_test(test_seek_beginning_while_offset_fetch_inflight),
        cmocka_unit_test(test_seek_while_validation_inflight),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
