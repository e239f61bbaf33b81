/*
 * test_wire_fake.c: the wire client against a fake broker on a loopback
 * socket (support/fake_broker.c listens; this test answers with bytes
 * built by the generated encoders, then damaged on purpose): handshake with the
 * client software name, KIP-511 ApiVersions fallback, garbled /
 * truncated responses, an unexpected correlation id, an oversized frame
 * size, a broker that never answers (request timeout), responses
 * arriving one byte at a time, random bodies, a refused connection,
 * rebootstrap (unreachable brokers, REBOOTSTRAP_REQUIRED), idle close, version
 * negotiation failure, shutdown with requests pending, tickers.
 * Every protocol error must fail the request with _PROTOCOL naming API,
 * version and offset, fail the other in-flight requests with
 * _TRANSPORT, and the next request must succeed on a new connection.
 */
#include "kn_test.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "fake_broker.h"
#include "kn_alloc.h"
#include "log.h"
#include "proto/generated/kp_api_versions.h"
#include "proto/generated/kp_apis.h"
#include "proto/generated/kp_list_groups.h"
#include "proto/generated/kp_metadata.h"
#include "proto/header.h"
#include "wire/wire_int.h"

enum fake_mode {
    FAKE_OK,
    FAKE_GARBLE,   /* truncate the body */
    FAKE_BADCORR,  /* answer with another correlation id */
    FAKE_OVERSIZE, /* a size prefix of ~2 GiB */
    FAKE_SILENT,   /* never answer */
    FAKE_DRIP,     /* answer one byte per write */
    FAKE_TRAILING, /* valid body plus garbage bytes */
    FAKE_RANDOM,   /* correct header, random body of random length */
};

typedef struct fake {
    kn_fake_broker *fb;
    int port;
    _Atomic int mode;      /* for ListGroups requests */
    _Atomic int mode_left; /* how many ListGroups get `mode`; then FAKE_OK */
    int av_max;            /* highest ApiVersions version served */
    int delay_ms;          /* before a damaged answer */
    _Atomic int md_port;   /* port advertised for broker 1 (0: ours) */
    _Atomic int md_error;  /* top-level Metadata error code (v13) */
    int av_versions[8];
    _Atomic int av_count;
    char sw_name[64];
} fake;

static uint8_t *answer(fake *f, int16_t key, int16_t ver, int32_t corr, const uint8_t *req, size_t req_len,
                       size_t *len) {
    kn_arena a;
    kn_arena_init(&a, 0);
    uint8_t *out = NULL;
    if (key == KP_API_API_VERSIONS) {
        int n = atomic_fetch_add(&f->av_count, 1);
        if (n < 8)
            f->av_versions[n] = ver;
        kp_ApiVersionsResponse r;
        kp_ApiVersionsResponse_init(&r);
        kp_ApiVersionsResponse_ApiVersion keys[3];
        if (ver > f->av_max) {
            /* KIP-511: answer in v0 with our range. */
            r.error_code = KN_ERR_UNSUPPORTED_VERSION;
            keys[0] = (kp_ApiVersionsResponse_ApiVersion){KP_API_API_VERSIONS, 0, (int16_t)f->av_max};
            r.api_keys.items = keys;
            r.api_keys.count = 1;
            out = kn_fake_frame_response(key, ver, corr, &r, 0, len);
        } else {
            if (ver >= 3) {
                /* Parse the request after the header to see the name. */
                kn_rd rd;
                kn_rd_init(&rd, req, req_len);
                kn_rd_skip(&rd, 8);
                kn_rd_string(&rd);
                kn_rd_uvarint(&rd); /* no tagged fields in the header */
                kp_ApiVersionsRequest q;
                kp_ApiVersionsRequest_init(&q);
                if (kp_ApiVersionsRequest_decode(&rd, &a, &q, ver) == 0)
                    snprintf(f->sw_name, sizeof f->sw_name, "%.*s/%.*s", q.client_software_name.len,
                             q.client_software_name.ptr, q.client_software_version.len,
                             q.client_software_version.ptr);
            }
            keys[0] = (kp_ApiVersionsResponse_ApiVersion){KP_API_API_VERSIONS, 0, (int16_t)f->av_max};
            keys[1] = (kp_ApiVersionsResponse_ApiVersion){KP_API_METADATA, 0, 13};
            keys[2] = (kp_ApiVersionsResponse_ApiVersion){KP_API_LIST_GROUPS, 0, 5};
            r.api_keys.items = keys;
            r.api_keys.count = 3;
            out = kn_fake_frame_response(key, ver, corr, &r, ver, len);
        }
    } else if (key == KP_API_METADATA) {
        kp_MetadataResponse r;
        kp_MetadataResponse_init(&r);
        int md_port = atomic_load(&f->md_port);
        kp_MetadataResponse_MetadataResponseBroker b = {
            1, kn_str_c("127.0.0.1"), md_port ? md_port : f->port, {NULL, -1}};
        r.brokers.items = &b;
        r.brokers.count = 1;
        r.cluster_id = kn_str_c("fake-cluster");
        r.error_code = (int16_t)atomic_load(&f->md_error);
        r.controller_id = 1;
        out = kn_fake_frame_response(key, ver, corr, &r, ver, len);
    } else {
        void *body = kn_arena_alloc(&a, kp_api_get(key)->resp_size);
        kp_api_get(key)->resp_init(body);
        out = kn_fake_frame_response(key, ver, corr, body, ver, len);
    }
    kn_arena_destroy(&a);
    return out;
}

/* One request on fd (kn_fake_serve_fn): the answer, damaged as the
 * test asked for ListGroups. */
static bool serve_one(int fd, void *opaque) {
    fake *f = opaque;
    kn_fake_request rq;
    if (!kn_fake_read_request(fd, &rq))
        return false;
    int16_t key = rq.key, ver = rq.ver;
    int32_t corr = rq.corr;
    size_t len;
    uint8_t *out = answer(f, key, ver, corr, rq.buf, rq.len, &len);
    kn_free(rq.buf);
    int mode = FAKE_OK;
    if (key == KP_API_LIST_GROUPS && atomic_load(&f->mode_left) > 0) {
        atomic_fetch_sub(&f->mode_left, 1);
        mode = atomic_load(&f->mode);
        if (f->delay_ms)
            usleep((useconds_t)f->delay_ms * 1000);
    }
    switch (mode) {
    case FAKE_GARBLE:
        /* Drop the last 3 bytes and say so in the size prefix. */
        len -= 3;
        kn_wr_put_u32_at(out, (uint32_t)(len - 4));
        kn_fake_write_all(fd, out, len);
        break;
    case FAKE_TRAILING: {
        uint8_t *big = kn_malloc(len + 5);
        memcpy(big, out, len);
        memset(big + len, 0xab, 5);
        kn_wr_put_u32_at(big, (uint32_t)(len + 1));
        kn_fake_write_all(fd, big, len + 5);
        kn_free(big);
        break;
    }
    case FAKE_BADCORR:
        kn_wr_put_u32_at(out + 4, (uint32_t)corr + 1000);
        kn_fake_write_all(fd, out, len);
        break;
    case FAKE_OVERSIZE:
        kn_wr_put_u32_at(out, 0x7fffff00u);
        kn_fake_write_all(fd, out, len);
        break;
    case FAKE_SILENT:
        break;
    case FAKE_RANDOM: {
        /* Keep the size prefix and correlation id (and the header's
         * tag byte when flexible), randomize the body. */
        size_t keep = 8 + (kp_response_header_version(key, ver) >= 1 ? 1 : 0);
        size_t body = (size_t)(rand() % 48);
        uint8_t *rnd = kn_malloc(keep + body);
        memcpy(rnd, out, keep);
        for (size_t i = keep; i < keep + body; i++)
            rnd[i] = (uint8_t)(rand() % 4 == 0 ? 0xff : rand() % 8);
        kn_wr_put_u32_at(rnd, (uint32_t)(keep + body - 4));
        kn_fake_write_all(fd, rnd, keep + body);
        kn_free(rnd);
        break;
    }
    case FAKE_DRIP:
        for (size_t i = 0; i < len; i++) {
            kn_fake_write_all(fd, out + i, 1);
            usleep(200);
        }
        break;
    default:
        kn_fake_write_all(fd, out, len);
    }
    kn_free(out);
    return true;
}

static fake *fake_start(void) {
    fake *f = kn_calloc(1, sizeof *f);
    f->av_max = 4;
    f->fb = kn_fake_broker_start(serve_one, f);
    f->port = kn_fake_broker_port(f->fb);
    return f;
}

static void fake_stop(fake *f) {
    kn_fake_broker_stop(f->fb);
    kn_free(f);
}

static knw_client *client_for(int port, int request_timeout_ms) {
    knw_settings s;
    knw_settings_defaults(&s, "producer");
    char bs[64], err[256];
    snprintf(bs, sizeof bs, "127.0.0.1:%d", port);
    assert_int_equal(knw_settings_set_bootstrap(&s, bs, err, sizeof err), 0);
    s.request_timeout_ms = request_timeout_ms;
    s.reconnect_backoff_ms = 10;
    s.reconnect_backoff_max_ms = 50;
    s.retry_backoff_ms = 10;
    s.client_id = kn_strdup("wire-test");
    knw_client *c = knw_client_new_settings(&s, err, sizeof err);
    knw_settings_free(&s);
    if (!c)
        fail_msg("%s", err);
    return c;
}

static kp_ListGroupsRequest lg_req;

static knw_resp *list_groups(knw_client *c, int timeout_ms) {
    kp_ListGroupsRequest_init(&lg_req);
    return knw_call(c, KNW_NODE_ANY, KP_API_LIST_GROUPS, -1, -1, &lg_req, timeout_ms);
}

static void test_happy_path_and_handshake(void **state) {
    fake *f = fake_start();
    knw_client *c = client_for(f->port, 5000);
    knw_resp *r = list_groups(c, -1);
    if (r->err)
        fail_msg("%s", r->errstr);
    assert_int_equal(r->api_version, 5);
    assert_non_null(r->body);
    assert_true(r->latency_us >= 0);
    knw_resp_free(r);
    int err;
    knw_metadata *md = knw_metadata_wait(c, false, 0, 5000, &err);
    assert_non_null(md);
    assert_int_equal(md->broker_count, 1);
    assert_int_equal(md->brokers[0].port, f->port);
    assert_string_equal(md->cluster_id, "fake-cluster");
    assert_int_equal(md->controller_id, 1);
    knw_metadata_release(md);
    /* ApiVersions v4 first, with our name and version. */
    assert_int_equal(f->av_versions[0], 4);
    assert_string_equal(f->sw_name, KN_SOFTWARE_NAME "/" KN_VERSION_STR);
    /* Routed by node id now that metadata names broker 1. */
    kp_ListGroupsRequest_init(&lg_req);
    r = knw_call(c, 1, KP_API_LIST_GROUPS, -1, 3, &lg_req, 5000);
    assert_int_equal(r->err, 0);
    assert_int_equal(r->node_id, 1);
    assert_int_equal(r->api_version, 3); /* capped by max_version */
    knw_resp_free(r);
    assert_int_equal(knw_api_version(c, 1, KP_API_LIST_GROUPS), 5);
    assert_int_equal(knw_api_version(c, 1, KP_API_PRODUCE), -1); /* fake does not serve it */
    knw_client_destroy(c);
    fake_stop(f);
}

static void test_kip511_fallback(void **state) {
    fake *f = fake_start();
    f->av_max = 2;
    knw_client *c = client_for(f->port, 5000);
    knw_resp *r = list_groups(c, -1);
    if (r->err)
        fail_msg("%s", r->errstr);
    knw_resp_free(r);
    assert_true(atomic_load(&f->av_count) >= 2);
    assert_int_equal(f->av_versions[0], 4);
    assert_int_equal(f->av_versions[1], 2);
    knw_client_destroy(c);
    fake_stop(f);
}

typedef struct multi {
    _Atomic int done;
    int errs[8];
    char errstr[8][256];
} multi;

static void multi_cb(knw_client *c, knw_resp *resp, void *opaque) {
    multi *m = opaque;
    int i = atomic_load(&m->done);
    m->errs[i] = resp->err;
    snprintf(m->errstr[i], sizeof m->errstr[i], "%s", resp->errstr);
    knw_resp_free(resp);
    atomic_fetch_add(&m->done, 1);
}

typedef struct log_capture {
    _Atomic int errors;
    char last[512];
} log_capture;

/* Runs on the network thread: only records (as a real handler queues). */
static void capture_log(int level, const char *msg, void *opaque) {
    log_capture *lc = opaque;
    if (level == KN_LOG_ERROR && strstr(msg, "protocol error")) {
        snprintf(lc->last, sizeof lc->last, "%s", msg);
        atomic_fetch_add(&lc->errors, 1);
    }
}

/* One damaged answer among three pipelined requests: the damaged one
 * fails with _PROTOCOL (message checked by the caller), the others
 * with _TRANSPORT, then the client reconnects and works. */
static void damaged(int mode, const char *needle) {
    fake *f = fake_start();
    knw_client *c = client_for(f->port, 5000);
    log_capture lc = {0};
    knw_set_log_handler(c, capture_log, &lc);
    /* Warm up until requests go to broker 1 (after the first metadata
     * the bootstrap connection retires). */
    int err;
    knw_metadata *md = knw_metadata_wait(c, false, 0, 5000, &err);
    assert_non_null(md);
    knw_metadata_release(md);
    knw_resp *r = list_groups(c, -1);
    assert_int_equal(r->err, 0);
    assert_int_equal(r->node_id, 1);
    knw_resp_free(r);
    knw_stats s0;
    knw_get_stats(c, &s0);

    f->delay_ms = 100; /* let all three reach the wire first */
    atomic_store(&f->mode, mode);
    atomic_store(&f->mode_left, 1);
    static kp_ListGroupsRequest reqs[3];
    multi m = {0};
    for (int i = 0; i < 3; i++) {
        kp_ListGroupsRequest_init(&reqs[i]);
        knw_send(c, KNW_NODE_ANY, KP_API_LIST_GROUPS, -1, -1, &reqs[i], 5000, multi_cb, &m);
    }
    for (int i = 0; i < 5000 && atomic_load(&m.done) < 3; i++)
        usleep(1000);
    assert_int_equal(atomic_load(&m.done), 3);
    fprintf(stderr, "damaged(%d): [%s] [%s] [%s]\n", mode, m.errstr[0], m.errstr[1], m.errstr[2]);
    assert_int_equal(m.errs[0], KN_ERR__PROTOCOL);
    assert_non_null(strstr(m.errstr[0], "ListGroups v5"));
    assert_non_null(strstr(m.errstr[0], "byte offset"));
    assert_non_null(strstr(m.errstr[0], needle));
    assert_int_equal(m.errs[1], KN_ERR__TRANSPORT);
    assert_int_equal(m.errs[2], KN_ERR__TRANSPORT);
    assert_true(kn_err_is_retriable(KN_ERR__TRANSPORT));

    /* Re-established: the next request succeeds on a new connection. */
    r = list_groups(c, -1);
    if (r->err)
        fail_msg("after reconnect: %s", r->errstr);
    knw_resp_free(r);
    knw_stats s1;
    knw_get_stats(c, &s1);
    assert_int_equal(s1.protocol_errors - s0.protocol_errors, 1);
    assert_true(s1.connects > s0.connects);
    assert_true(s1.disconnects > s0.disconnects);
    /* The protocol error went to the client's log handler, not stderr. */
    for (int i = 0; i < 1000 && atomic_load(&lc.errors) == 0; i++)
        usleep(1000);
    assert_true(atomic_load(&lc.errors) >= 1);
    knw_client_destroy(c);
    assert_non_null(strstr(lc.last, "broker 1"));
    fake_stop(f);
}

static void test_garbled_response(void **state) { damaged(FAKE_GARBLE, "protocol error"); }
static void test_trailing_bytes(void **state) { damaged(FAKE_TRAILING, "trailing bytes"); }
static void test_unexpected_correlation_id(void **state) {
    damaged(FAKE_BADCORR, "unexpected correlation id");
}
static void test_oversized_frame(void **state) { damaged(FAKE_OVERSIZE, "invalid size 2147483392"); }

/* Random bodies never crash or read out of bounds (run under ASan):
 * each either decodes or fails with _PROTOCOL naming the offset, and
 * the client keeps working. */
static void test_random_bodies(void **state) {
    fake *f = fake_start();
    knw_client *c = client_for(f->port, 5000);
    srand(12345);
    atomic_store(&f->mode, FAKE_RANDOM);
    atomic_store(&f->mode_left, 200);
    int protocol = 0, ok = 0;
    for (int i = 0; i < 200; i++) {
        knw_resp *r = list_groups(c, -1);
        if (r->err == KN_ERR__PROTOCOL) {
            assert_non_null(strstr(r->errstr, "ListGroups v5 response"));
            assert_non_null(strstr(r->errstr, "byte offset"));
            protocol++;
        } else if (r->err == 0) {
            ok++;
        } else {
            fail_msg("unexpected %s: %s", kn_err_name(r->err), r->errstr);
        }
        knw_resp_free(r);
    }
    fprintf(stderr, "random bodies: %d protocol errors, %d decoded\n", protocol, ok);
    assert_true(protocol > 100);
    knw_resp *r = list_groups(c, -1);
    assert_int_equal(r->err, 0);
    knw_resp_free(r);
    knw_client_destroy(c);
    fake_stop(f);
}

static void test_request_timeout(void **state) {
    fake *f = fake_start();
    knw_client *c = client_for(f->port, 5000);
    knw_resp *r = list_groups(c, -1);
    assert_int_equal(r->err, 0);
    knw_resp_free(r);
    atomic_store(&f->mode, FAKE_SILENT);
    atomic_store(&f->mode_left, 1);
    int64_t t0 = kn_test_now_ms();
    r = list_groups(c, 300);
    int64_t took = kn_test_now_ms() - t0;
    fprintf(stderr, "timeout: %s (%lld ms)\n", r->errstr, (long long)took);
    assert_int_equal(r->err, KN_ERR__TIMED_OUT);
    assert_non_null(strstr(r->errstr, "timed out"));
    assert_true(took >= 290 && took < 1500);
    knw_resp_free(r);
    knw_stats s;
    knw_get_stats(c, &s);
    assert_true(s.request_timeouts >= 1);
    assert_true(s.disconnects >= 1); /* closed as Java does */
    r = list_groups(c, -1);
    assert_int_equal(r->err, 0);
    knw_resp_free(r);
    knw_client_destroy(c);
    fake_stop(f);
}

static void test_one_byte_at_a_time(void **state) {
    fake *f = fake_start();
    knw_client *c = client_for(f->port, 5000);
    atomic_store(&f->mode, FAKE_DRIP);
    atomic_store(&f->mode_left, 3);
    for (int i = 0; i < 3; i++) {
        knw_resp *r = list_groups(c, -1);
        if (r->err)
            fail_msg("%s", r->errstr);
        const kp_ListGroupsResponse *body = r->body;
        assert_int_equal(body->error_code, 0);
        knw_resp_free(r);
    }
    knw_client_destroy(c);
    fake_stop(f);
}

/* A port nobody listens on: bind, read the port, close. */
static int dead_port(void) {
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in sa = {.sin_family = AF_INET};
    sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    bind(fd, (struct sockaddr *)&sa, sizeof sa);
    socklen_t sl = sizeof sa;
    getsockname(fd, (struct sockaddr *)&sa, &sl);
    int port = ntohs(sa.sin_port);
    close(fd);
    return port;
}

/* Metadata names a broker nobody can reach: once every known broker
 * fails, the client goes back to bootstrap.servers (rebootstrap) and
 * requests for "any" broker flow again. */
static void test_rebootstrap(void **state) {
    fake *f = fake_start();
    atomic_store(&f->md_port, dead_port());
    knw_client *c = client_for(f->port, 3000);
    int err;
    knw_metadata *md = knw_metadata_wait(c, false, 0, 3000, &err);
    assert_non_null(md);
    assert_int_equal(md->brokers[0].port, atomic_load(&f->md_port));
    knw_metadata_release(md);
    /* Goes to broker 1 (refused), then rebootstrap, then bootstrap. */
    knw_resp *r = list_groups(c, -1);
    if (r->err)
        fail_msg("%s", r->errstr);
    assert_true(r->node_id < 0);
    knw_resp_free(r);
    knw_stats s;
    knw_get_stats(c, &s);
    assert_true(s.rebootstraps >= 1);
    assert_true(s.connect_failures >= 1);
    knw_client_destroy(c);
    fake_stop(f);
}

static void test_rebootstrap_required(void **state) {
    fake *f = fake_start();
    atomic_store(&f->md_error, KN_ERR_REBOOTSTRAP_REQUIRED);
    knw_client *c = client_for(f->port, 3000);
    knw_stats s = {0};
    for (int i = 0; i < 3000 && s.rebootstraps == 0; i++) {
        usleep(1000);
        knw_get_stats(c, &s);
    }
    assert_true(s.rebootstraps >= 1);
    assert_null(knw_metadata_get(c)); /* the failed answer made no snapshot */
    /* Once the broker stops asking, metadata flows. */
    atomic_store(&f->md_error, 0);
    int err;
    knw_metadata *md = knw_metadata_wait(c, false, 0, 3000, &err);
    assert_non_null(md);
    knw_metadata_release(md);
    knw_client_destroy(c);
    fake_stop(f);
}

/* connections.max.idle.ms closes an idle connection; the next request
 * reconnects transparently. */
static void test_idle_close(void **state) {
    fake *f = fake_start();
    knw_settings s;
    knw_settings_defaults(&s, "producer");
    char bs[64], err[256];
    snprintf(bs, sizeof bs, "127.0.0.1:%d", f->port);
    assert_int_equal(knw_settings_set_bootstrap(&s, bs, err, sizeof err), 0);
    s.connections_max_idle_ms = 150;
    knw_client *c = knw_client_new_settings(&s, err, sizeof err);
    knw_settings_free(&s);
    assert_non_null(c);
    int e;
    knw_metadata *md = knw_metadata_wait(c, false, 0, 3000, &e);
    assert_non_null(md);
    knw_metadata_release(md);
    kp_ListGroupsRequest_init(&lg_req);
    knw_resp *r = knw_call(c, 1, KP_API_LIST_GROUPS, -1, -1, &lg_req, 3000);
    assert_int_equal(r->err, 0);
    knw_resp_free(r);
    assert_true(knw_node_ready(c, 1));
    for (int i = 0; i < 2000 && knw_node_ready(c, 1); i++)
        usleep(1000);
    assert_false(knw_node_ready(c, 1));
    r = knw_call(c, 1, KP_API_LIST_GROUPS, -1, -1, &lg_req, 3000);
    assert_int_equal(r->err, 0);
    knw_resp_free(r);
    knw_client_destroy(c);
    fake_stop(f);
}

static void test_refused(void **state) {
    int port = dead_port();
    knw_client *c = client_for(port, 400);
    int64_t t0 = kn_test_now_ms();
    knw_resp *r = list_groups(c, -1);
    int64_t took = kn_test_now_ms() - t0;
    fprintf(stderr, "refused: %s (%lld ms)\n", r->errstr, (long long)took);
    assert_int_equal(r->err, KN_ERR__TRANSPORT);
    assert_non_null(strstr(r->errstr, "Connection refused"));
    assert_non_null(strstr(r->errstr, "bootstrap"));
    assert_true(took < 1400);
    knw_resp_free(r);
    knw_stats s;
    knw_get_stats(c, &s);
    assert_true(s.connect_failures >= 2); /* retried with backoff */
    /* A node that is not in the metadata fails at its deadline. */
    kp_ListGroupsRequest_init(&lg_req);
    r = knw_call(c, 7, KP_API_LIST_GROUPS, -1, -1, &lg_req, 200);
    assert_int_equal(r->err, KN_ERR__TIMED_OUT);
    assert_non_null(strstr(r->errstr, "broker 7"));
    knw_resp_free(r);
    knw_client_destroy(c);
}

static void test_unsupported_version(void **state) {
    fake *f = fake_start();
    knw_client *c = client_for(f->port, 5000);
    kp_ListGroupsRequest_init(&lg_req);
    knw_resp *r = knw_call(c, KNW_NODE_ANY, KP_API_LIST_GROUPS, 6, -1, &lg_req, 2000);
    assert_int_equal(r->err, KN_ERR__UNSUPPORTED_VERSION);
    assert_non_null(strstr(r->errstr, "ListGroups"));
    knw_resp_free(r);
    /* A bad call with no callback frees its own answer (ASan checks). */
    knw_send(c, KNW_NODE_ANY, 9999, -1, -1, &lg_req, -1, NULL, NULL);
    knw_client_destroy(c);
    fake_stop(f);
}

static void test_destroy_fails_pending(void **state) {
    fake *f = fake_start();
    knw_client *c = client_for(f->port, 60000);
    knw_resp *r = list_groups(c, -1);
    assert_int_equal(r->err, 0);
    knw_resp_free(r);
    atomic_store(&f->mode, FAKE_SILENT);
    atomic_store(&f->mode_left, 100);
    static kp_ListGroupsRequest reqs[8];
    multi m = {0};
    for (int i = 0; i < 8; i++) {
        kp_ListGroupsRequest_init(&reqs[i]);
        knw_send(c, KNW_NODE_ANY, KP_API_LIST_GROUPS, -1, -1, &reqs[i], 60000, multi_cb, &m);
    }
    usleep(100000);
    knw_client_destroy(c);
    assert_int_equal(atomic_load(&m.done), 8);
    for (int i = 0; i < 8; i++)
        assert_int_equal(m.errs[i], KN_ERR__CLOSED);
    fake_stop(f);
}

typedef struct tick_state {
    _Atomic int runs;
} tick_state;

static int tick_fn(knw_client *c, int64_t now_ms, void *opaque) {
    tick_state *t = opaque;
    atomic_fetch_add(&t->runs, 1);
    return -1; /* only when woken */
}

static void test_tickers(void **state) {
    fake *f = fake_start();
    knw_client *c = client_for(f->port, 5000);
    int err;
    knw_metadata *md = knw_metadata_wait(c, false, 0, 5000, &err);
    assert_non_null(md);
    knw_metadata_release(md);
    usleep(20000);
    tick_state t = {0};
    int id = knw_ticker_add(c, tick_fn, &t);
    assert_true(id >= 0);
    for (int i = 0; i < 2000 && atomic_load(&t.runs) < 1; i++)
        usleep(1000);
    assert_int_equal(atomic_load(&t.runs), 1);
    knw_wakeup(c);
    for (int i = 0; i < 2000 && atomic_load(&t.runs) < 2; i++)
        usleep(1000);
    assert_int_equal(atomic_load(&t.runs), 2);
    /* A new metadata snapshot wakes the tickers (modules waiting for
     * leaders react at once). */
    md = knw_metadata_wait(c, false, 0, 5000, &err);
    assert_non_null(md);
    knw_metadata_release(md);
    for (int i = 0; i < 2000 && atomic_load(&t.runs) < 3; i++)
        usleep(1000);
    assert_int_equal(atomic_load(&t.runs), 3);
    knw_ticker_remove(c, id);
    knw_wakeup(c);
    usleep(50000);
    assert_int_equal(atomic_load(&t.runs), 3);
    knw_client_destroy(c);
    fake_stop(f);
}

/* ---- one completion per request (wire.h: knw_send) ---- */

/* Allocation failures for the test thread only (the network thread and
 * the fake broker allocate normally): -1 never fails; n lets n more
 * allocations through, then fails every one. */
static _Thread_local int fail_after = -1;

static bool alloc_fails(void) {
    if (fail_after < 0)
        return false;
    if (fail_after == 0)
        return true;
    fail_after--;
    return false;
}
static void *t_malloc(size_t n) { return alloc_fails() ? NULL : malloc(n); }
static void *t_realloc(void *p, size_t n) { return alloc_fails() ? NULL : realloc(p, n); }
static const kn_allocator thread_failing = {t_malloc, t_realloc, free};

typedef struct once {
    _Atomic int calls;
    int err;
    char errstr[256];
    knw_client *resend_on; /* resend once from the callback (closing path) */
    struct once *resend_to;
} once;

static kp_ListGroupsRequest once_reqs[8];

static void once_cb(knw_client *c, knw_resp *resp, void *opaque) {
    once *o = opaque;
    o->err = resp->err;
    snprintf(o->errstr, sizeof o->errstr, "%s", resp->errstr);
    knw_resp_free(resp);
    atomic_fetch_add(&o->calls, 1);
    if (o->resend_on) {
        knw_client *rc = o->resend_on;
        o->resend_on = NULL;
        kp_ListGroupsRequest_init(&once_reqs[7]);
        knw_send(rc, KNW_NODE_ANY, KP_API_LIST_GROUPS, -1, -1, &once_reqs[7], 5000, once_cb, o->resend_to);
    }
}

static void wait_calls(once *o, int n) {
    for (int i = 0; i < 5000 && atomic_load(&o->calls) < n; i++)
        usleep(1000);
}

/* Every failure path of knw_send completes the request exactly once
 * through its callback: bad arguments and allocation failures before
 * knw_send returns, no common version and encode errors on the network
 * thread, and a send from a callback run while the client closes. */
static void test_send_completes_once(void **state) {
    fake *f = fake_start();
    knw_client *c = client_for(f->port, 5000);

    /* Bad arguments: answered before knw_send returns. */
    once bad = {0};
    kp_ListGroupsRequest_init(&once_reqs[0]);
    knw_send(c, KNW_NODE_ANY, 9999, -1, -1, &once_reqs[0], -1, once_cb, &bad);
    assert_int_equal(atomic_load(&bad.calls), 1);
    assert_int_equal(bad.err, KN_ERR__INVALID_ARG);
    knw_send(c, KNW_NODE_ANY, KP_API_LIST_GROUPS, -1, -1, NULL, -1, once_cb, &bad);
    assert_int_equal(atomic_load(&bad.calls), 2);
    assert_int_equal(bad.err, KN_ERR__INVALID_ARG);

    /* Allocation failures: the first, the second, then none (queued and
     * answered by the broker). */
    for (int k = 0; k <= 2; k++) {
        once o = {0};
        kp_ListGroupsRequest_init(&once_reqs[1]);
        fail_after = k;
        knw_send(c, KNW_NODE_ANY, KP_API_LIST_GROUPS, -1, -1, &once_reqs[1], 5000, once_cb, &o);
        fail_after = -1;
        if (k < 2) {
            assert_int_equal(atomic_load(&o.calls), 1);
            assert_int_equal(o.err, KN_ERR__NOMEM);
            assert_non_null(strstr(o.errstr, "out of memory"));
        } else {
            wait_calls(&o, 1);
            assert_int_equal(atomic_load(&o.calls), 1);
            assert_int_equal(o.err, 0);
        }
        usleep(20000);
        assert_int_equal(atomic_load(&o.calls), 1);
    }
    /* knw_call through the same path never returns NULL. */
    kp_ListGroupsRequest_init(&once_reqs[1]);
    fail_after = 0;
    knw_resp *r = knw_call(c, KNW_NODE_ANY, KP_API_LIST_GROUPS, -1, -1, &once_reqs[1], 5000);
    fail_after = -1;
    assert_non_null(r);
    assert_int_equal(r->err, KN_ERR__NOMEM);
    knw_resp_free(r);

    /* No version in common (the fake serves ListGroups up to v5). */
    once nover = {0};
    kp_ListGroupsRequest_init(&once_reqs[2]);
    knw_send(c, KNW_NODE_ANY, KP_API_LIST_GROUPS, 6, -1, &once_reqs[2], 5000, once_cb, &nover);
    wait_calls(&nover, 1);
    assert_int_equal(nover.err, KN_ERR__UNSUPPORTED_VERSION);

    /* An encode error: a v5 field asked of a request capped at v4. */
    once enc = {0};
    kp_ListGroupsRequest_init(&once_reqs[3]);
    static kn_str types[1];
    types[0] = kn_str_c("consumer");
    once_reqs[3].types_filter.items = types;
    once_reqs[3].types_filter.count = 1;
    knw_send(c, KNW_NODE_ANY, KP_API_LIST_GROUPS, -1, 4, &once_reqs[3], 5000, once_cb, &enc);
    wait_calls(&enc, 1);
    assert_int_equal(enc.err, KN_ERR__INVALID_ARG);
    assert_non_null(strstr(enc.errstr, "could not be encoded"));

    /* Closing: a request pending at destroy fails _CLOSED, and the one
     * its callback sends then is answered _CLOSED at once. */
    atomic_store(&f->mode, FAKE_SILENT);
    atomic_store(&f->mode_left, 1);
    once second = {0};
    once first = {.resend_on = c, .resend_to = &second};
    kp_ListGroupsRequest_init(&once_reqs[4]);
    knw_send(c, KNW_NODE_ANY, KP_API_LIST_GROUPS, -1, -1, &once_reqs[4], 60000, once_cb, &first);
    usleep(100000);
    assert_int_equal(atomic_load(&first.calls), 0);
    knw_client_destroy(c);
    assert_int_equal(atomic_load(&first.calls), 1);
    assert_int_equal(first.err, KN_ERR__CLOSED);
    assert_int_equal(atomic_load(&second.calls), 1);
    assert_int_equal(second.err, KN_ERR__CLOSED);

    /* Nothing completes twice later on. */
    usleep(50000);
    assert_int_equal(atomic_load(&bad.calls), 2);
    assert_int_equal(atomic_load(&nover.calls), 1);
    assert_int_equal(atomic_load(&enc.calls), 1);
    assert_int_equal(atomic_load(&first.calls), 1);
    assert_int_equal(atomic_load(&second.calls), 1);
    fake_stop(f);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_happy_path_and_handshake),
        cmocka_unit_test(test_kip511_fallback),
        cmocka_unit_test(test_garbled_response),
        cmocka_unit_test(test_trailing_bytes),
        cmocka_unit_test(test_unexpected_correlation_id),
        cmocka_unit_test(test_oversized_frame),
        cmocka_unit_test(test_random_bodies),
        cmocka_unit_test(test_request_timeout),
        cmocka_unit_test(test_one_byte_at_a_time),
        cmocka_unit_test(test_refused),
        cmocka_unit_test(test_rebootstrap),
        cmocka_unit_test(test_rebootstrap_required),
        cmocka_unit_test(test_idle_close),
        cmocka_unit_test(test_unsupported_version),
        cmocka_unit_test(test_destroy_fails_pending),
        cmocka_unit_test(test_tickers),
        cmocka_unit_test(test_send_completes_once),
    };
    kn_set_allocator(&thread_failing); /* fails only where a test asks */
    return cmocka_run_group_tests(tests, NULL, NULL);
}
