/*
 * test_wire_resolver.c: host names are resolved off the network thread
 * (core/wire/resolver.h). A fake broker advertises two brokers on its
 * one listener: broker 1 as 127.0.0.1 (numeric, resolved inline) and
 * broker 2 as "slow.test", whose lookup an injected resolver holds
 * until the test releases it. While it is held, requests to broker 1
 * keep being answered; the answer wakes the loop and broker 2's request
 * completes; the answer is cached; a held lookup is bounded by
 * socket.connection.setup.timeout.ms; destroy joins the resolver thread
 * (the process has as many threads after each test as before).
 */
#include "kn_test.h"

#include <dirent.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "fake_broker.h"
#include "kn_alloc.h"
#include "proto/generated/kp_apis.h"
#include "proto/generated/kp_list_groups.h"
#include "proto/generated/kp_metadata.h"
#include "wire/wire_int.h"

typedef struct slow_dns {
    pthread_mutex_t m;
    pthread_cond_t cv;
    bool released;
    _Atomic int calls;    /* lookups of slow.test */
    _Atomic int blocking; /* a lookup of slow.test is being held */
    int port;
} slow_dns;

static int slow_resolve(const char *host, int port, knw_addrs *out, char *errstr, size_t errstr_size,
                        void *opaque) {
    slow_dns *d = opaque;
    if (strcmp(host, "slow.test") != 0)
        return knw_dns_resolve(host, port, out, errstr, errstr_size);
    atomic_fetch_add(&d->calls, 1);
    atomic_store(&d->blocking, 1);
    pthread_mutex_lock(&d->m);
    while (!d->released)
        pthread_cond_wait(&d->cv, &d->m);
    pthread_mutex_unlock(&d->m);
    atomic_store(&d->blocking, 0);
    return knw_dns_resolve("127.0.0.1", port, out, errstr, errstr_size);
}

static void release(slow_dns *d) {
    pthread_mutex_lock(&d->m);
    d->released = true;
    pthread_cond_broadcast(&d->cv);
    pthread_mutex_unlock(&d->m);
}

static int fake_port;

/* ApiVersions, Metadata naming both brokers, empty ListGroups. */
static bool serve(int fd, void *opaque) {
    (void)opaque;
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
        out = kn_fake_frame_response(rq.key, rq.ver, rq.corr, &r, rq.ver, &len);
    } else if (rq.key == KP_API_METADATA) {
        kp_MetadataResponse r;
        kp_MetadataResponse_init(&r);
        kp_MetadataResponse_MetadataResponseBroker b[2] = {
            {1, kn_str_c("127.0.0.1"), fake_port, {NULL, -1}},
            {2, kn_str_c("slow.test"), fake_port, {NULL, -1}},
        };
        r.brokers.items = b;
        r.brokers.count = 2;
        r.cluster_id = kn_str_c("fake-cluster");
        r.controller_id = 1;
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

static int thread_count(void) {
    DIR *d = opendir("/proc/self/task");
    int n = 0;
    struct dirent *e;
    while (d && (e = readdir(d)))
        n += e->d_name[0] != '.';
    if (d)
        closedir(d);
    return n;
}

static knw_client *client_for(slow_dns *d, int setup_timeout_ms) {
    knw_settings s;
    knw_settings_defaults(&s, "consumer");
    char bs[64], err[256];
    snprintf(bs, sizeof bs, "127.0.0.1:%d", fake_port);
    assert_int_equal(knw_settings_set_bootstrap(&s, bs, err, sizeof err), 0);
    s.setup_timeout_ms = s.setup_timeout_max_ms = setup_timeout_ms;
    s.reconnect_backoff_ms = 10;
    s.reconnect_backoff_max_ms = 50;
    s.retry_backoff_ms = 10;
    s.resolve_fn = slow_resolve;
    s.resolve_opaque = d;
    knw_client *c = knw_client_new_settings(&s, err, sizeof err);
    knw_settings_free(&s);
    if (!c)
        fail_msg("%s", err);
    return c;
}

typedef struct once {
    _Atomic int calls;
    int err;
    int32_t node_id;
    char errstr[256];
} once;

static void once_cb(knw_client *c, knw_resp *resp, void *opaque) {
    (void)c;
    once *o = opaque;
    o->err = resp->err;
    o->node_id = resp->node_id;
    snprintf(o->errstr, sizeof o->errstr, "%s", resp->errstr);
    knw_resp_free(resp);
    atomic_fetch_add(&o->calls, 1);
}

static kp_ListGroupsRequest lg;

static int call_node(knw_client *c, int32_t node) {
    kp_ListGroupsRequest req;
    kp_ListGroupsRequest_init(&req);
    knw_resp *r = knw_call(c, node, KP_API_LIST_GROUPS, -1, -1, &req, 5000);
    int err = r->err;
    if (err)
        fprintf(stderr, "broker %d: %s\n", node, r->errstr);
    knw_resp_free(r);
    return err;
}

static void wait_for(_Atomic int *v, int want) {
    for (int i = 0; i < 10000 && atomic_load(v) != want; i++)
        usleep(1000);
}

static slow_dns *dns_new(void) {
    slow_dns *d = kn_calloc(1, sizeof *d);
    pthread_mutex_init(&d->m, NULL);
    pthread_cond_init(&d->cv, NULL);
    return d;
}

static void dns_free(slow_dns *d) {
    pthread_mutex_destroy(&d->m);
    pthread_cond_destroy(&d->cv);
    kn_free(d);
}

static void test_slow_lookup_does_not_stall_others(void **state) {
    (void)state;
    int threads0 = thread_count();
    kn_fake_broker *fb = kn_fake_broker_start(serve, NULL);
    fake_port = kn_fake_broker_port(fb);
    slow_dns *d = dns_new();
    knw_client *c = client_for(d, 30000);
    int err;
    knw_metadata *md = knw_metadata_wait(c, false, 0, 10000, &err);
    assert_non_null(md);
    knw_metadata_release(md);
    assert_int_equal(call_node(c, 1), 0);

    /* Broker 2's connection waits for its name... */
    once slow = {0};
    kp_ListGroupsRequest_init(&lg);
    knw_send(c, 2, KP_API_LIST_GROUPS, -1, -1, &lg, 60000, once_cb, &slow);
    wait_for(&d->blocking, 1);
    assert_int_equal(atomic_load(&d->blocking), 1);
    /* ...while broker 1 keeps answering, one request after another. */
    for (int i = 0; i < 50; i++)
        assert_int_equal(call_node(c, 1), 0);
    assert_int_equal(atomic_load(&d->blocking), 1);
    assert_int_equal(atomic_load(&slow.calls), 0);

    /* The answer wakes the loop; broker 2's request goes out. */
    release(d);
    wait_for(&slow.calls, 1);
    assert_int_equal(atomic_load(&slow.calls), 1);
    assert_int_equal(slow.err, 0);
    assert_int_equal(slow.node_id, 2);
    assert_int_equal(atomic_load(&d->calls), 1);

    /* Cached: a new connection to broker 2 does not ask again. */
    knw_disconnect(c, 2);
    for (int i = 0; i < 2000 && knw_node_ready(c, 2); i++)
        usleep(1000);
    assert_int_equal(call_node(c, 2), 0);
    assert_int_equal(atomic_load(&d->calls), 1);

    knw_client_destroy(c);
    kn_fake_broker_stop(fb);
    dns_free(d);
    assert_int_equal(thread_count(), threads0);
}

typedef struct late_release {
    slow_dns *d;
    int after_ms;
} late_release;

static void *release_later(void *arg) {
    late_release *lr = arg;
    usleep((useconds_t)lr->after_ms * 1000);
    release(lr->d);
    return NULL;
}

static void test_slow_lookup_bounded_and_joined(void **state) {
    (void)state;
    int threads0 = thread_count();
    kn_fake_broker *fb = kn_fake_broker_start(serve, NULL);
    fake_port = kn_fake_broker_port(fb);
    slow_dns *d = dns_new();
    knw_client *c = client_for(d, 300);
    int err;
    knw_metadata *md = knw_metadata_wait(c, false, 0, 10000, &err);
    assert_non_null(md);
    knw_metadata_release(md);
    assert_int_equal(call_node(c, 1), 0); /* "any broker" goes to broker 1 */

    /* A held lookup fails the attempt after the setup timeout, as a
     * connect that never completes would. */
    once slow = {0};
    kp_ListGroupsRequest_init(&lg);
    knw_send(c, 2, KP_API_LIST_GROUPS, -1, -1, &lg, 20000, once_cb, &slow);
    wait_for(&slow.calls, 1);
    assert_int_equal(atomic_load(&slow.calls), 1);
    assert_int_equal(slow.err, KN_ERR__RESOLVE);
    assert_non_null(strstr(slow.errstr, "slow.test"));
    assert_non_null(strstr(slow.errstr, "no answer within"));
    assert_int_equal(atomic_load(&d->blocking), 1);
    assert_int_equal(call_node(c, 1), 0); /* the other broker is fine */

    /* A second lookup queues behind the held one; destroy fails its
     * request, waits for the held lookup and joins the resolver thread. */
    once second = {0};
    static kp_ListGroupsRequest lg2;
    kp_ListGroupsRequest_init(&lg2);
    knw_send(c, 2, KP_API_LIST_GROUPS, -1, -1, &lg2, 20000, once_cb, &second);
    usleep(100000); /* past the reconnect backoff: its lookup is queued */
    assert_int_equal(atomic_load(&second.calls), 0);
    pthread_t t;
    late_release lr = {d, 200};
    assert_int_equal(pthread_create(&t, NULL, release_later, &lr), 0);
    knw_client_destroy(c);
    pthread_join(t, NULL);
    assert_int_equal(atomic_load(&second.calls), 1);
    assert_int_equal(second.err, KN_ERR__CLOSED);
    kn_fake_broker_stop(fb);
    dns_free(d);
    assert_int_equal(thread_count(), threads0);
}

static void test_late_answer_is_cached(void **state) {
    (void)state;
    kn_fake_broker *fb = kn_fake_broker_start(serve, NULL);
    fake_port = kn_fake_broker_port(fb);
    slow_dns *d = dns_new();
    knw_client *c = client_for(d, 300);
    int err;
    knw_metadata *md = knw_metadata_wait(c, false, 0, 10000, &err);
    assert_non_null(md);
    knw_metadata_release(md);
    assert_int_equal(call_node(c, 1), 0);
    once slow = {0};
    kp_ListGroupsRequest_init(&lg);
    knw_send(c, 2, KP_API_LIST_GROUPS, -1, -1, &lg, 20000, once_cb, &slow);
    wait_for(&slow.calls, 1);
    assert_int_equal(slow.err, KN_ERR__RESOLVE);
    /* The answer that came too late serves the next attempt. */
    release(d);
    wait_for(&d->blocking, 0);
    int rc = KN_ERR__RESOLVE;
    for (int i = 0; i < 50 && rc; i++) {
        rc = call_node(c, 2);
        if (rc)
            usleep(20000);
    }
    assert_int_equal(rc, 0);
    assert_int_equal(atomic_load(&d->calls), 1);
    knw_client_destroy(c);
    kn_fake_broker_stop(fb);
    dns_free(d);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_slow_lookup_does_not_stall_others),
        cmocka_unit_test(test_slow_lookup_bounded_and_joined),
        cmocka_unit_test(test_late_answer_is_cached),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
