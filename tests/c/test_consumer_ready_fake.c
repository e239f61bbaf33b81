/*
 * test_consumer_ready_fake.c: the readiness hook (kn_consumer_set_ready_cb)
 * against a fake broker, for failures a real broker does not show on
 * demand. Each case drives the consumer the way an OpenResty or luv
 * loop does: it calls poll(0) only when the hook has fired (a byte on a
 * pipe), so a state change that wakes no one shows up as a loop that
 * never learns of it (issue #14 item 2). The real-broker cases (no
 * committed offset under auto.offset.reset=none, resume over buffered
 * records) are in it_consumer.c.
 *
 * Also the backoff of the blocking calls (issue #14 item 10): with the
 * coordinator answering COORDINATOR_NOT_AVAILABLE, committed() retries
 * after retry.backoff.ms; that wait ends at the call's deadline and at
 * kn_consumer_wakeup (it was a usleep that did neither).
 *
 * The fake serves ApiVersions, Metadata (topic "t", 1 partition, leader
 * node 1 at a leader epoch the test may raise), FindCoordinator,
 * OffsetFetch (per case: offset 5 at leader epoch 0, or an error),
 * OffsetForLeaderEpoch (end offset 3 for epoch 0: the log was truncated
 * below the position) and Fetch (empty answers).
 */
#include "kn_test.h"

#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "fake_broker.h"
#include "fake_metadata.h"
#include "kn_alloc.h"
#include "proto/generated/kp_apis.h"
#include "proto/generated/kp_find_coordinator.h"
#include "proto/generated/kp_metadata.h"
#include "proto/generated/kp_offset_fetch.h"
#include "proto/generated/kp_offset_for_leader_epoch.h"

typedef struct fake {
    kn_fake_broker *fb;
    int port;
    pthread_mutex_t mu;
    int16_t fetch_error; /* OffsetFetch: top-level error, or 0 */
    int64_t committed;   /* OffsetFetch: the committed offset (-1: none) */
    int32_t leader_epoch; /* Metadata */
    bool coord_unavailable; /* FindCoordinator: COORDINATOR_NOT_AVAILABLE */
} fake;

static const kn_uuid topic_id = {{9, 8, 7, 6, 5, 4, 3, 2, 1, 0, 1, 2, 3, 4, 5, 6}};

static void answer_metadata(fake *f, kp_MetadataResponse *r, kn_arena *a) {
    pthread_mutex_lock(&f->mu);
    int32_t epoch = f->leader_epoch;
    pthread_mutex_unlock(&f->mu);
    kn_fake_metadata_one_partition(r, a, &f->port, 1, &topic_id, epoch);
}

static void answer_offset_fetch(fake *f, const kp_OffsetFetchRequest *q, kp_OffsetFetchResponse *r,
                                kn_arena *a) {
    pthread_mutex_lock(&f->mu);
    r->error_code = f->fetch_error;
    int64_t committed = f->committed;
    pthread_mutex_unlock(&f->mu);
    if (r->error_code)
        return;
    r->topics.count = q->topics.count;
    r->topics.items = kn_arena_calloc(a, (size_t)q->topics.count + 1, sizeof(*r->topics.items));
    for (int32_t t = 0; t < q->topics.count; t++) {
        int32_t n = q->topics.items[t].partition_indexes.count;
        kp_OffsetFetchResponse_OffsetFetchResponsePartition *ps = kn_arena_calloc(a, (size_t)n + 1, sizeof(*ps));
        for (int32_t i = 0; i < n; i++) {
            kp_OffsetFetchResponse_OffsetFetchResponsePartition_init(&ps[i]);
            ps[i].partition_index = q->topics.items[t].partition_indexes.items[i];
            ps[i].committed_offset = committed;
            ps[i].committed_leader_epoch = committed >= 0 ? 0 : -1;
            ps[i].metadata = kn_str_c("");
        }
        r->topics.items[t].name = q->topics.items[t].name;
        r->topics.items[t].partitions.items = ps;
        r->topics.items[t].partitions.count = n;
    }
}

static void answer_epoch(const kp_OffsetForLeaderEpochRequest *q, kp_OffsetForLeaderEpochResponse *r,
                         kn_arena *a) {
    r->topics.count = q->topics.count;
    r->topics.items = kn_arena_calloc(a, (size_t)q->topics.count + 1, sizeof(*r->topics.items));
    for (int32_t t = 0; t < q->topics.count; t++) {
        int32_t n = q->topics.items[t].partitions.count;
        kp_OffsetForLeaderEpochResponse_EpochEndOffset *eo = kn_arena_calloc(a, (size_t)n + 1, sizeof(*eo));
        for (int32_t i = 0; i < n; i++) {
            eo[i].partition = q->topics.items[t].partitions.items[i].partition;
            eo[i].leader_epoch = 0;
            eo[i].end_offset = 3; /* below the position (5): truncated */
        }
        r->topics.items[t].topic = q->topics.items[t].topic;
        r->topics.items[t].partitions.items = eo;
        r->topics.items[t].partitions.count = n;
    }
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
    if (key == KP_API_API_VERSIONS) {
        kn_fake_api_versions(&a, body);
    } else if (key == KP_API_METADATA) {
        answer_metadata(f, body, &a);
    } else if (key == KP_API_FIND_COORDINATOR) {
        pthread_mutex_lock(&f->mu);
        int16_t err = f->coord_unavailable ? KN_ERR_COORDINATOR_NOT_AVAILABLE : 0;
        pthread_mutex_unlock(&f->mu);
        answer_find_coordinator(f, rq, body, &a, err);
    } else if (key == KP_API_OFFSET_FETCH) {
        answer_offset_fetch(f, kn_fake_decode_request(&a, rq), body, &a);
    } else if (key == KP_API_OFFSET_FOR_LEADER_EPOCH) {
        answer_epoch(kn_fake_decode_request(&a, rq), body, &a);
    } else if (key == KP_API_FETCH) {
        usleep(20 * 1000); /* an empty answer, not a busy loop */
    }
    uint8_t *out = kn_fake_frame_response(key, rq->ver, rq->corr, body, rq->ver, len);
    kn_arena_destroy(&a);
    return out;
}

/* ---- the event loop ----------------------------------------------------- */

typedef struct loop {
    int fds[2]; /* the hook writes a byte to fds[1] */
} loop;

static void on_ready(kn_consumer *c, void *opaque) {
    (void)c;
    loop *lp = opaque;
    char b = 1;
    ssize_t w = write(lp->fds[1], &b, 1);
    (void)w;
}

/* Waits for the hook (up to 10 s), then polls with timeout 0 until a
 * poll returns no records; returns the first error seen (errstr), or 0
 * when the hook did not fire in time. Only ever polls after a wake. */
static int wait_for_error(kn_consumer *c, loop *lp, char *errstr, size_t n) {
    int64_t end = kn_test_now_ms() + 10000;
    for (;;) {
        int left = (int)(end - kn_test_now_ms());
        if (left <= 0)
            return 0;
        struct pollfd pfd = {.fd = lp->fds[0], .events = POLLIN};
        if (poll(&pfd, 1, left) <= 0)
            continue;
        char buf[64];
        ssize_t r = read(lp->fds[0], buf, sizeof buf);
        (void)r;
        for (;;) {
            kn_records *recs = NULL;
            int rc = kn_consumer_poll(c, 0, &recs, errstr, n);
            if (rc != KN_OK)
                return rc;
            size_t got = kn_records_count(recs);
            kn_records_free(recs);
            if (got == 0)
                break;
        }
    }
}

typedef struct env {
    fake *f;
    loop lp;
    kn_consumer *c;
} env;

static void start_with(env *e, int16_t fetch_error, int64_t committed, const char *reset,
                       const char *backoff, bool assign);
static void start(env *e, int16_t fetch_error, int64_t committed, const char *reset) {
    start_with(e, fetch_error, committed, reset, "20", true);
}

static void start_with(env *e, int16_t fetch_error, int64_t committed, const char *reset,
                       const char *backoff, bool assign) {
    e->f = kn_calloc(1, sizeof *e->f);
    pthread_mutex_init(&e->f->mu, NULL);
    e->f->fetch_error = fetch_error;
    e->f->committed = committed;
    e->f->fb = kn_fake_broker_start_answering(answer, e->f);
    e->f->port = kn_fake_broker_port(e->f->fb);
    assert_int_equal(pipe(e->lp.fds), 0);
    kn_conf *conf = kn_conf_new(KN_CLIENT_CONSUMER);
    char bs[64], es[512];
    snprintf(bs, sizeof bs, "127.0.0.1:%d", e->f->port);
    kn_test_conf_set(conf, "bootstrap.servers", bs);
    kn_test_conf_set(conf, "group.id", "g-ready");
    kn_test_conf_set(conf, "enable.auto.commit", "false");
    kn_test_conf_set(conf, "auto.offset.reset", reset);
    kn_test_conf_set(conf, "retry.backoff.ms", backoff);
    kn_test_conf_set(conf, "retry.backoff.max.ms", backoff);
    kn_test_conf_set(conf, "metadata.max.age.ms", "200");
    e->c = kn_consumer_new(conf, es, sizeof es);
    kn_conf_destroy(conf);
    if (!e->c)
        fail_msg("kn_consumer_new: %s", es);
    kn_consumer_set_ready_cb(e->c, on_ready, &e->lp);
    if (!assign)
        return;
    kn_topic_partition_list *l = kn_topic_partition_list_new();
    kn_topic_partition_list_add(l, "t", 0);
    assert_int_equal(kn_consumer_assign(e->c, l), KN_OK);
    kn_topic_partition_list_destroy(l);
}

static void stop(env *e) {
    kn_consumer_set_ready_cb(e->c, NULL, NULL);
    kn_consumer_close(e->c, -1);
    kn_consumer_destroy(e->c);
    kn_fake_broker_stop(e->f->fb);
    pthread_mutex_destroy(&e->f->mu);
    kn_free(e->f);
    close(e->lp.fds[0]);
    close(e->lp.fds[1]);
}

/* No committed offset and auto.offset.reset=none: the partition fails
 * on the network thread (OffsetFetch answered -1). */
static void test_no_committed_offset_wakes(void **state) {
    (void)state;
    env e;
    start(&e, 0, -1, "none");
    char es[512] = "";
    int rc = wait_for_error(e.c, &e.lp, es, sizeof es);
    print_message("reset=none, nothing committed: %s: %s\n", kn_err_name(rc), es);
    assert_int_equal(rc, KN_ERR__NO_OFFSET);
    stop(&e);
}

/* OffsetFetch refused as a whole (GROUP_AUTHORIZATION_FAILED). */
static void test_offset_fetch_error_wakes(void **state) {
    (void)state;
    env e;
    start(&e, KN_ERR_GROUP_AUTHORIZATION_FAILED, 5, "earliest");
    char es[512] = "";
    int rc = wait_for_error(e.c, &e.lp, es, sizeof es);
    print_message("OffsetFetch refused: %s: %s\n", kn_err_name(rc), es);
    assert_int_equal(rc, KN_ERR_GROUP_AUTHORIZATION_FAILED);
    stop(&e);
}

/* Truncation detected under auto.offset.reset=none (KIP-320): the
 * position 5 (epoch 0) is past the new leader's end offset 3. */
static void test_truncation_wakes(void **state) {
    (void)state;
    env e;
    start(&e, 0, 5, "none");
    /* positioned at 5 under epoch 0 first */
    int64_t pos = -1;
    assert_int_equal(kn_consumer_position(e.c, "t", 0, 10000, &pos), KN_OK);
    assert_int_equal(pos, 5);
    usleep(500 * 1000); /* a metadata refresh records epoch 0 as checked */
    pthread_mutex_lock(&e.f->mu);
    e.f->leader_epoch = 1; /* the leader changed: the position is suspect */
    pthread_mutex_unlock(&e.f->mu);
    char es[512] = "";
    int rc = wait_for_error(e.c, &e.lp, es, sizeof es);
    print_message("truncation under reset=none: %s: %s\n", kn_err_name(rc), es);
    assert_int_equal(rc, KN_ERR_OFFSET_OUT_OF_RANGE);
    assert_non_null(strstr(es, "truncation"));
    stop(&e);
}

static void *wake_later(void *arg) {
    usleep(300 * 1000);
    kn_consumer_wakeup(arg);
    return NULL;
}

static void test_backoff_honours_deadline_and_wakeup(void **state) {
    (void)state;
    env e;
    e.f = NULL;
    start_with(&e, 0, 5, "earliest", "5000", false);
    pthread_mutex_lock(&e.f->mu);
    e.f->coord_unavailable = true;
    pthread_mutex_unlock(&e.f->mu);
    kn_topic_partition_list *l = kn_topic_partition_list_new();
    kn_topic_partition_list_add(l, "t", 0);
    /* the deadline (500 ms) ends the 5 s backoff */
    int64_t t0 = kn_test_now_ms();
    int rc = kn_consumer_committed(e.c, l, 500);
    int64_t took = kn_test_now_ms() - t0;
    print_message("committed(500 ms) with a 5 s backoff: %s after %lld ms\n", kn_err_name(rc), (long long)took);
    assert_int_equal(rc, KN_ERR__TIMED_OUT);
    assert_true(took < 3000); /* generous; the backoff alone was 5 s */
    /* wakeup() ends it too */
    pthread_t th;
    pthread_create(&th, NULL, wake_later, e.c);
    t0 = kn_test_now_ms();
    rc = kn_consumer_committed(e.c, l, 20000);
    took = kn_test_now_ms() - t0;
    pthread_join(th, NULL);
    print_message("committed(20 s) woken after 300 ms: %s after %lld ms\n", kn_err_name(rc), (long long)took);
    assert_int_equal(rc, KN_ERR__WAKEUP);
    assert_true(took < 4000);
    kn_topic_partition_list_destroy(l);
    stop(&e);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_no_committed_offset_wakes),
        cmocka_unit_test(test_offset_fetch_error_wakes),
        cmocka_unit_test(test_truncation_wakes),
        cmocka_unit_test(test_backoff_honours_deadline_and_wakeup),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
