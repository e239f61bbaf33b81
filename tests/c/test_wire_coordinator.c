/*
 * test_wire_coordinator.c: the coordinator table (core/wire/coordinator.h)
 * against a fake broker that answers FindCoordinator from a small script:
 * answers are cached per (key type, key); NOT_COORDINATOR and the other
 * errors kn_err_is_coordinator names forget the node (only the node that
 * failed), a lost connection forgets every key on it; keys due together
 * go in one FindCoordinator v4+ (KIP-699) and one key per request at v3
 * when the broker serves no more; a failing lookup backs off and gives up
 * at the caller's deadline; a non-retriable error returns at once.
 */
#include "kn_test.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "error.h"
#include "fake_broker.h"
#include "kn_alloc.h"
#include "proto/generated/kp_apis.h"
#include "proto/generated/kp_find_coordinator.h"
#include "proto/generated/kp_list_groups.h"
#include "proto/generated/kp_metadata.h"
#include "wire/coordinator.h"
#include "wire/wire_int.h"

typedef struct fake {
    kn_fake_broker *fb;
    int port;
    int fc_max;               /* highest FindCoordinator version served */
    _Atomic int node;         /* the coordinator answered */
    _Atomic int unavailable;  /* answer COORDINATOR_NOT_AVAILABLE */
    _Atomic int requests;     /* FindCoordinator requests */
    _Atomic int max_keys;     /* most keys in one request */
    _Atomic int last_version; /* of the last FindCoordinator */
} fake;

static int answer_key(fake *f, kn_str key, int32_t *node) {
    *node = -1;
    if (kn_str_eq(key, "denied"))
        return KN_ERR_GROUP_AUTHORIZATION_FAILED;
    if (atomic_load(&f->unavailable))
        return KN_ERR_COORDINATOR_NOT_AVAILABLE;
    *node = atomic_load(&f->node);
    return 0;
}

static bool serve(int fd, void *opaque) {
    fake *f = opaque;
    kn_fake_request rq;
    if (!kn_fake_read_request(fd, &rq))
        return false;
    kn_arena a;
    kn_arena_init(&a, 0);
    size_t len = 0;
    uint8_t *out;
    if (rq.key == KP_API_API_VERSIONS) {
        kp_ApiVersionsResponse r;
        kp_ApiVersionsResponse_init(&r);
        kn_fake_api_versions(&a, &r);
        for (int32_t i = 0; i < r.api_keys.count; i++)
            if (r.api_keys.items[i].api_key == KP_API_FIND_COORDINATOR)
                r.api_keys.items[i].max_version = (int16_t)f->fc_max;
        out = kn_fake_frame_response(rq.key, rq.ver, rq.corr, &r, rq.ver, &len);
    } else if (rq.key == KP_API_METADATA) {
        kp_MetadataResponse r;
        kp_MetadataResponse_init(&r);
        kp_MetadataResponse_MetadataResponseBroker b[2] = {
            {1, kn_str_c("127.0.0.1"), f->port, {NULL, -1}},
            {2, kn_str_c("127.0.0.1"), f->port, {NULL, -1}},
        };
        r.brokers.items = b;
        r.brokers.count = 2;
        r.cluster_id = kn_str_c("fake-cluster");
        r.controller_id = 1;
        out = kn_fake_frame_response(rq.key, rq.ver, rq.corr, &r, rq.ver, &len);
    } else if (rq.key == KP_API_FIND_COORDINATOR) {
        const kp_FindCoordinatorRequest *q = kn_fake_decode_request(&a, &rq);
        kp_FindCoordinatorResponse r;
        kp_FindCoordinatorResponse_init(&r);
        atomic_fetch_add(&f->requests, 1);
        atomic_store(&f->last_version, rq.ver);
        if (rq.ver >= 4) {
            int n = q->coordinator_keys.count;
            if (n > atomic_load(&f->max_keys))
                atomic_store(&f->max_keys, n);
            r.coordinators.items = kn_arena_calloc(&a, (size_t)(n ? n : 1), sizeof *r.coordinators.items);
            r.coordinators.count = n;
            for (int i = 0; i < n; i++) {
                kp_FindCoordinatorResponse_Coordinator *co = &r.coordinators.items[i];
                co->key = q->coordinator_keys.items[i];
                co->error_code = (int16_t)answer_key(f, co->key, &co->node_id);
                co->host = kn_str_c("127.0.0.1");
                co->port = f->port;
                co->error_message.len = -1;
            }
        } else {
            if (atomic_load(&f->max_keys) < 1)
                atomic_store(&f->max_keys, 1);
            r.error_code = (int16_t)answer_key(f, q->key, &r.node_id);
            r.host = kn_str_c("127.0.0.1");
            r.port = f->port;
            r.error_message.len = -1;
        }
        out = kn_fake_frame_response(rq.key, rq.ver, rq.corr, &r, rq.ver, &len);
    } else {
        void *body = kn_arena_alloc(&a, kp_api_get(rq.key)->resp_size);
        kp_api_get(rq.key)->resp_init(body);
        out = kn_fake_frame_response(rq.key, rq.ver, rq.corr, body, rq.ver, &len);
    }
    kn_fake_write_all(fd, out, len);
    kn_free(out);
    kn_free(rq.buf);
    kn_arena_destroy(&a);
    return true;
}

static fake *fake_start(int fc_max) {
    fake *f = kn_calloc(1, sizeof *f);
    f->fc_max = fc_max;
    atomic_store(&f->node, 1);
    f->fb = kn_fake_broker_start(serve, f);
    f->port = kn_fake_broker_port(f->fb);
    return f;
}

static void fake_stop(fake *f) {
    kn_fake_broker_stop(f->fb);
    kn_free(f);
}

/* A client with a ready connection (so the FindCoordinator version is
 * known) and metadata naming both brokers. */
static knw_client *client_for(fake *f) {
    knw_settings s;
    knw_settings_defaults(&s, "consumer");
    char bs[64], err[256];
    snprintf(bs, sizeof bs, "127.0.0.1:%d", f->port);
    assert_int_equal(knw_settings_set_bootstrap(&s, bs, err, sizeof err), 0);
    s.reconnect_backoff_ms = 10;
    s.reconnect_backoff_max_ms = 50;
    s.retry_backoff_ms = 50;
    s.retry_backoff_max_ms = 200;
    knw_client *c = knw_client_new_settings(&s, err, sizeof err);
    knw_settings_free(&s);
    if (!c)
        fail_msg("%s", err);
    int e;
    knw_metadata *md = knw_metadata_wait(c, false, 0, 10000, &e);
    assert_non_null(md);
    knw_metadata_release(md);
    kp_ListGroupsRequest lg;
    kp_ListGroupsRequest_init(&lg);
    knw_resp *r = knw_call(c, KNW_NODE_ANY, KP_API_LIST_GROUPS, -1, -1, &lg, 5000);
    assert_int_equal(r->err, 0);
    knw_resp_free(r);
    assert_true(knw_api_version(c, KNW_NODE_ANY, KP_API_FIND_COORDINATOR) >= 0);
    return c;
}

static int32_t wait_coord(knw_client *c, int8_t type, const char *key) {
    int32_t node = -1;
    char es[256];
    int rc = knw_coord_wait(c, type, key, knw_now_ms() + 10000, &node, es, sizeof es);
    if (rc)
        fail_msg("%s", es);
    return node;
}

static void test_error_policy(void **state) {
    (void)state;
    assert_true(kn_err_is_coordinator(KN_ERR_NOT_COORDINATOR));
    assert_true(kn_err_is_coordinator(KN_ERR_COORDINATOR_NOT_AVAILABLE));
    assert_true(kn_err_is_coordinator(KN_ERR_REQUEST_TIMED_OUT));
    assert_true(kn_err_is_coordinator(KN_ERR__TRANSPORT));
    assert_true(kn_err_is_coordinator(KN_ERR__TIMED_OUT));
    assert_true(kn_err_is_coordinator(KN_ERR__RESOLVE));
    assert_true(kn_err_is_coordinator(KN_ERR__ALL_BROKERS_DOWN));
    assert_false(kn_err_is_coordinator(KN_ERR_COORDINATOR_LOAD_IN_PROGRESS)); /* same node, later */
    assert_false(kn_err_is_coordinator(KN_ERR_UNKNOWN_MEMBER_ID));
    assert_false(kn_err_is_coordinator(KN_ERR_GROUP_AUTHORIZATION_FAILED));
    assert_false(kn_err_is_coordinator(0));
}

static void test_cache_and_invalidation(void **state) {
    (void)state;
    fake *f = fake_start(6);
    knw_client *c = client_for(f);
    assert_int_equal(knw_coord_known(c, KNW_COORD_GROUP, "g1"), -1);
    assert_int_equal(wait_coord(c, KNW_COORD_GROUP, "g1"), 1);
    assert_int_equal(atomic_load(&f->requests), 1);
    assert_int_equal(atomic_load(&f->last_version), 6);
    /* Cached: no second lookup. */
    assert_int_equal(wait_coord(c, KNW_COORD_GROUP, "g1"), 1);
    assert_int_equal(knw_coord_get(c, KNW_COORD_GROUP, "g1", NULL, NULL, 0), 1);
    assert_int_equal(atomic_load(&f->requests), 1);
    /* A failure of another node, or an error that is not about the
     * coordinator, keeps the answer. */
    assert_true(knw_coord_failed(c, KNW_COORD_GROUP, "g1", 2, KN_ERR_NOT_COORDINATOR));
    assert_false(knw_coord_failed(c, KNW_COORD_GROUP, "g1", 1, KN_ERR_UNKNOWN_MEMBER_ID));
    assert_int_equal(knw_coord_known(c, KNW_COORD_GROUP, "g1"), 1);
    /* The same key as a transactional id is another entry. */
    assert_int_equal(knw_coord_known(c, KNW_COORD_TXN, "g1"), -1);
    /* NOT_COORDINATOR from node 1: found again (now node 2). */
    atomic_store(&f->node, 2);
    assert_true(knw_coord_failed(c, KNW_COORD_GROUP, "g1", 1, KN_ERR_NOT_COORDINATOR));
    assert_int_equal(knw_coord_known(c, KNW_COORD_GROUP, "g1"), -1);
    assert_int_equal(wait_coord(c, KNW_COORD_GROUP, "g1"), 2);
    assert_int_equal(atomic_load(&f->requests), 2);
    knw_client_destroy(c);
    fake_stop(f);
}

static void test_disconnect_and_batching(void **state) {
    (void)state;
    fake *f = fake_start(6);
    knw_client *c = client_for(f);
    atomic_store(&f->node, 2);
    assert_int_equal(wait_coord(c, KNW_COORD_GROUP, "g1"), 2);
    assert_int_equal(wait_coord(c, KNW_COORD_GROUP, "g2"), 2);
    assert_int_equal(wait_coord(c, KNW_COORD_TXN, "t1"), 2);
    int before = atomic_load(&f->requests);
    assert_int_equal(atomic_load(&f->max_keys), 1);
    /* Node 2's connection drops: every key on it is forgotten... */
    kp_ListGroupsRequest lg;
    kp_ListGroupsRequest_init(&lg);
    knw_resp *r = knw_call(c, 2, KP_API_LIST_GROUPS, -1, -1, &lg, 5000);
    assert_int_equal(r->err, 0);
    knw_resp_free(r);
    knw_disconnect(c, 2);
    for (int i = 0; i < 5000 && knw_coord_known(c, KNW_COORD_GROUP, "g2") >= 0; i++)
        usleep(1000);
    assert_int_equal(knw_coord_known(c, KNW_COORD_GROUP, "g1"), -1);
    assert_int_equal(knw_coord_known(c, KNW_COORD_GROUP, "g2"), -1);
    assert_int_equal(knw_coord_known(c, KNW_COORD_TXN, "t1"), -1);
    /* ...and the group keys, due together, go in one v4+ request. */
    atomic_store(&f->node, 1);
    assert_int_equal(wait_coord(c, KNW_COORD_GROUP, "g1"), 1);
    assert_int_equal(atomic_load(&f->requests), before + 1);
    assert_int_equal(atomic_load(&f->max_keys), 2);
    assert_int_equal(knw_coord_known(c, KNW_COORD_GROUP, "g2"), 1);
    int64_t lookups, batched;
    knw_coord_stats(c, &lookups, &batched);
    assert_int_equal(lookups, batched); /* every one at v4+ */
    knw_client_destroy(c);
    fake_stop(f);
}

static void test_single_key_before_v4(void **state) {
    (void)state;
    fake *f = fake_start(3);
    knw_client *c = client_for(f);
    assert_int_equal(wait_coord(c, KNW_COORD_GROUP, "g1"), 1);
    assert_int_equal(wait_coord(c, KNW_COORD_TXN, "t1"), 1);
    assert_int_equal(atomic_load(&f->last_version), 3);
    assert_int_equal(atomic_load(&f->max_keys), 1);
    int64_t lookups, batched;
    knw_coord_stats(c, &lookups, &batched);
    assert_int_equal(lookups, 2);
    assert_int_equal(batched, 0);
    knw_client_destroy(c);
    fake_stop(f);
}

static void test_backoff_until_deadline(void **state) {
    (void)state;
    fake *f = fake_start(6);
    knw_client *c = client_for(f);
    atomic_store(&f->unavailable, 1);
    int32_t node = 7;
    char es[256] = "";
    int64_t t0 = knw_now_ms();
    int rc = knw_coord_wait(c, KNW_COORD_GROUP, "g1", t0 + 600, &node, es, sizeof es);
    int64_t took = knw_now_ms() - t0;
    assert_int_equal(rc, KN_ERR__TIMED_OUT);
    assert_int_equal(node, -1);
    assert_non_null(strstr(es, "COORDINATOR_NOT_AVAILABLE"));
    assert_true(took >= 600);
    /* Retried, with backoff (50 ms growing to 200 ms): not in a spin. */
    int n = atomic_load(&f->requests);
    assert_true(n >= 2);
    assert_true(n <= 12);
    /* Available again: the next wait finds it. */
    atomic_store(&f->unavailable, 0);
    assert_int_equal(wait_coord(c, KNW_COORD_GROUP, "g1"), 1);
    knw_client_destroy(c);
    fake_stop(f);
}

static void test_fatal_error_returns(void **state) {
    (void)state;
    fake *f = fake_start(6);
    knw_client *c = client_for(f);
    int32_t node;
    char es[256] = "";
    int rc = knw_coord_wait(c, KNW_COORD_GROUP, "denied", knw_now_ms() + 60000, &node, es, sizeof es);
    assert_int_equal(rc, KN_ERR_GROUP_AUTHORIZATION_FAILED);
    assert_non_null(strstr(es, "GROUP_AUTHORIZATION_FAILED"));
    /* The async form reports it to its caller too (no lookup in flight). */
    int err = 0;
    for (int i = 0; i < 5000; i++) {
        knw_coord_get(c, KNW_COORD_GROUP, "denied", &err, es, sizeof es);
        if (err)
            break;
        usleep(1000);
    }
    assert_int_equal(err, KN_ERR_GROUP_AUTHORIZATION_FAILED);
    knw_client_destroy(c);
    fake_stop(f);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_error_policy),
        cmocka_unit_test(test_cache_and_invalidation),
        cmocka_unit_test(test_disconnect_and_batching),
        cmocka_unit_test(test_single_key_before_v4),
        cmocka_unit_test(test_backoff_until_deadline),
        cmocka_unit_test(test_fatal_error_returns),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
