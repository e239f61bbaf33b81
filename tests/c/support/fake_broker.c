/*
 * fake_broker.c: a loopback listener thread for the fake-broker unit
 * tests. One thread polls the listener and every accepted connection and
 * calls the test's serve function per readable connection, so a fake
 * answers requests strictly in order, as a broker does per connection.
 */
#include "fake_broker.h"

#include "kn_test.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <sys/socket.h>
#include <unistd.h>

#include "kn_alloc.h"
#include "proto/generated/kp_api_versions.h"
#include "proto/generated/kp_apis.h"
#include "proto/header.h"
#include "reader.h"
#include "writer.h"

#define MAX_CONNS 16

struct kn_fake_broker {
    int lfd, port;
    pthread_t th;
    _Atomic bool stop;
    kn_fake_serve_fn serve;
    void *opaque;
    kn_fake_answer_fn answer; /* kn_fake_broker_start_answering's */
    void *answer_opaque;
};

static void *listener_main(void *arg) {
    kn_fake_broker *fb = arg;
    int fds[MAX_CONNS];
    int n = 0;
    while (!atomic_load(&fb->stop)) {
        struct pollfd p[MAX_CONNS + 1];
        p[0] = (struct pollfd){fb->lfd, POLLIN, 0};
        for (int i = 0; i < n; i++)
            p[i + 1] = (struct pollfd){fds[i], POLLIN, 0};
        /* A short timeout so that stop is seen promptly. */
        if (poll(p, (nfds_t)n + 1, 20) <= 0)
            continue;
        if (p[0].revents & POLLIN) {
            int fd = accept(fb->lfd, NULL, NULL);
            if (fd >= 0 && n < MAX_CONNS)
                fds[n++] = fd;
            else if (fd >= 0)
                close(fd);
        }
        for (int i = 0; i < n; i++) {
            if (!(p[i + 1].revents & (POLLIN | POLLHUP | POLLERR)))
                continue;
            if (!fb->serve(fds[i], fb->opaque)) {
                close(fds[i]);
                fds[i] = fds[--n];
                p[i + 1] = p[n + 1];
                i--;
            }
        }
    }
    for (int i = 0; i < n; i++)
        close(fds[i]);
    return NULL;
}

static kn_fake_broker *start(kn_fake_serve_fn serve, void *opaque, kn_fake_answer_fn answer,
                             void *answer_opaque) {
    kn_fake_broker *fb = kn_calloc(1, sizeof *fb);
    fb->serve = serve;
    fb->opaque = opaque ? opaque : fb;
    fb->answer = answer;
    fb->answer_opaque = answer_opaque;
    fb->lfd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    assert_true(fb->lfd >= 0);
    struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = 0};
    sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    assert_int_equal(bind(fb->lfd, (struct sockaddr *)&sa, sizeof sa), 0);
    assert_int_equal(listen(fb->lfd, MAX_CONNS), 0);
    socklen_t sl = sizeof sa;
    assert_int_equal(getsockname(fb->lfd, (struct sockaddr *)&sa, &sl), 0);
    fb->port = ntohs(sa.sin_port);
    assert_int_equal(pthread_create(&fb->th, NULL, listener_main, fb), 0);
    return fb;
}

kn_fake_broker *kn_fake_broker_start(kn_fake_serve_fn serve, void *opaque) {
    return start(serve, opaque, NULL, NULL);
}

/* One request in, the test's answer frame out. */
static bool serve_answer(int fd, void *opaque) {
    kn_fake_broker *fb = opaque;
    kn_fake_request rq;
    if (!kn_fake_read_request(fd, &rq))
        return false;
    size_t len;
    uint8_t *out = fb->answer(fb->answer_opaque, &rq, &len);
    kn_free(rq.buf);
    kn_fake_write_all(fd, out, len);
    kn_free(out);
    return true;
}

kn_fake_broker *kn_fake_broker_start_answering(kn_fake_answer_fn answer, void *opaque) {
    return start(serve_answer, NULL, answer, opaque);
}

int kn_fake_broker_port(const kn_fake_broker *fb) { return fb->port; }

void kn_fake_broker_stop(kn_fake_broker *fb) {
    atomic_store(&fb->stop, true);
    pthread_join(fb->th, NULL);
    close(fb->lfd);
    kn_free(fb);
}

void kn_fake_write_all(int fd, const uint8_t *p, size_t n) {
    while (n) {
        ssize_t w = send(fd, p, n, MSG_NOSIGNAL);
        if (w <= 0)
            return;
        p += w;
        n -= (size_t)w;
    }
}

static bool read_all(int fd, uint8_t *p, size_t n) {
    while (n) {
        ssize_t r = recv(fd, p, n, 0);
        if (r <= 0)
            return false;
        p += r;
        n -= (size_t)r;
    }
    return true;
}

bool kn_fake_read_request(int fd, kn_fake_request *rq) {
    uint8_t szb[4];
    if (!read_all(fd, szb, 4))
        return false;
    uint32_t sz = ((uint32_t)szb[0] << 24) | ((uint32_t)szb[1] << 16) | ((uint32_t)szb[2] << 8) | szb[3];
    assert_true(sz >= 8 && sz < (1u << 20));
    uint8_t *req = kn_malloc(sz);
    if (!read_all(fd, req, sz)) {
        kn_free(req);
        return false;
    }
    rq->key = (int16_t)((req[0] << 8) | req[1]);
    rq->ver = (int16_t)((req[2] << 8) | req[3]);
    rq->corr =
        (int32_t)(((uint32_t)req[4] << 24) | ((uint32_t)req[5] << 16) | ((uint32_t)req[6] << 8) | req[7]);
    rq->buf = req;
    rq->len = sz;
    return true;
}

uint8_t *kn_fake_frame_response(int16_t key, int16_t ver, int32_t corr, const void *body, int16_t body_ver,
                                size_t *len) {
    kn_wr w;
    kn_wr_init(&w, 256, 0);
    size_t off = kn_wr_reserve(&w, 4);
    kn_wr_i32(&w, corr);
    if (kp_response_header_version(key, ver) >= 1)
        kn_wr_uvarint(&w, 0);
    assert_int_equal(kp_api_get(key)->resp_encode(&w, body, body_ver), 0);
    kn_wr_put_u32_at(w.buf + off, (uint32_t)(w.len - 4));
    return kn_wr_detach(&w, len);
}

void *kn_fake_decode_request(kn_arena *a, const kn_fake_request *rq) {
    kn_rd rd;
    kn_rd_init(&rd, rq->buf, rq->len);
    kn_rd_skip(&rd, 8);
    kn_rd_string(&rd); /* client id */
    if (kp_request_header_version(rq->key, rq->ver) >= 2)
        kn_rd_uvarint(&rd); /* no tagged fields */
    const kp_api *api = kp_api_get(rq->key);
    void *m = kn_arena_alloc(a, api->req_size);
    api->req_init(m);
    assert_int_equal(api->req_decode(&rd, a, m, rq->ver), 0);
    return m;
}

void kn_fake_api_versions(kn_arena *a, kp_ApiVersionsResponse *r) {
    kp_ApiVersionsResponse_ApiVersion *keys = kn_arena_calloc(a, KP_API_KEY_MAX + 1, sizeof(*keys));
    int32_t n = 0;
    for (int16_t k = 0; keys && k <= KP_API_KEY_MAX; k++) {
        const kp_api *api = kp_api_get(k);
        /* Without the telemetry APIs, as a real broker without a client
         * telemetry plugin: clients then never send them (KIP-714), and
         * the fakes see only the requests their tests script. */
        if (k == KP_API_GET_TELEMETRY_SUBSCRIPTIONS || k == KP_API_PUSH_TELEMETRY)
            continue;
        if (api && (api->listeners & KP_LISTENER_BROKER))
            keys[n++] = (kp_ApiVersionsResponse_ApiVersion){k, api->min_version, api->max_stable_version};
    }
    r->api_keys.items = keys;
    r->api_keys.count = n;
}
