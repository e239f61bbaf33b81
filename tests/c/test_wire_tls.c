/*
 * test_wire_tls.c: the TLS transport (transport_tls.c) against a TLS
 * server thread in this process (OpenSSL, the make-pki broker
 * certificate): the non-blocking handshake, pending() for records
 * OpenSSL already holds (the loop must not sleep in poll(2) on them),
 * partial writes of a send queue with EAGAIN in the middle (the retried
 * SSL_write gets the same bytes: the server checks every byte), a peer
 * that closes mid-handshake, and a write to a closed peer that must be
 * an error, not SIGPIPE.
 */
#include "kn_test.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <openssl/err.h>
#include <openssl/ssl.h>

#include "config/config.h"
#include "error.h"
#include "kn_alloc.h"
#include "wire/frame.h"
#include "tls/tls_ctx.h"
#include "wire/transport.h"

static char dir[256];

typedef enum { SRV_BURST, SRV_SINK, SRV_CLOSE_MID, SRV_CLOSE_AFTER } srv_mode;

typedef struct server {
    srv_mode mode;
    int lfd, port;
    pthread_t th;
    uint64_t got, sum; /* SINK: bytes received and their checksum */
    int handshake_ok;
} server;

static uint64_t mix(uint64_t h, uint8_t b) { return (h ^ b) * 1099511628211ull; }

static void *server_main(void *arg) {
    server *s = arg;
    int fd = accept(s->lfd, NULL, NULL);
    if (fd < 0)
        return NULL;
    if (s->mode == SRV_CLOSE_MID) {
        char buf[64];
        (void)!read(fd, buf, sizeof buf); /* part of the ClientHello */
        close(fd);
        return NULL;
    }
    SSL_CTX *ctx = SSL_CTX_new(TLS_server_method());
    char p[600];
    snprintf(p, sizeof p, "%s/broker-keystore.pem", dir);
    SSL_CTX_use_certificate_chain_file(ctx, p);
    SSL_CTX_use_PrivateKey_file(ctx, p, SSL_FILETYPE_PEM);
    SSL *ssl = SSL_new(ctx);
    SSL_set_fd(ssl, fd);
    if (SSL_accept(ssl) == 1) {
        s->handshake_ok = 1;
        if (s->mode == SRV_BURST) {
            /* Three records at once: the client reads them 100 bytes at a
             * time, long after the socket has gone quiet. */
            uint8_t rec[1000];
            for (int r = 0; r < 3; r++) {
                memset(rec, 'a' + r, sizeof rec);
                SSL_write(ssl, rec, sizeof rec);
            }
        }
        if (s->mode == SRV_SINK)
            usleep(300 * 1000); /* let the client's socket fill: EAGAIN */
        if (s->mode != SRV_CLOSE_AFTER) {
            uint8_t buf[16384];
            uint64_t h = 14695981039346656037ull;
            int n;
            while ((n = SSL_read(ssl, buf, sizeof buf)) > 0) {
                for (int i = 0; i < n; i++)
                    h = mix(h, buf[i]);
                s->got += (uint64_t)n;
            }
            s->sum = h;
        }
    }
    SSL_free(ssl);
    SSL_CTX_free(ctx);
    close(fd);
    return NULL;
}

static void server_start(server *s, srv_mode mode) {
    memset(s, 0, sizeof *s);
    s->mode = mode;
    s->lfd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in sa = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    assert_int_equal(bind(s->lfd, (struct sockaddr *)&sa, sizeof sa), 0);
    assert_int_equal(listen(s->lfd, 4), 0);
    socklen_t sl = sizeof sa;
    getsockname(s->lfd, (struct sockaddr *)&sa, &sl);
    s->port = ntohs(sa.sin_port);
    assert_int_equal(pthread_create(&s->th, NULL, server_main, s), 0);
}

static void server_join(server *s) {
    pthread_join(s->th, NULL);
    close(s->lfd);
}

static void *client_ctx(void) {
    kn_conf *conf = kn_conf_new(KN_CLIENT_PRODUCER);
    char p[600], err[512];
    snprintf(p, sizeof p, "%s/ca.pem", dir);
    kn_test_conf_set(conf, "ssl.truststore.location", p);
    void *ctx = NULL;
    bool verify;
    if (knw_tls_ctx_new(conf, &ctx, &verify, err, sizeof err))
        fail_msg("%s", err);
    kn_conf_destroy(conf);
    return ctx;
}

/* Connects t (TLS) to the server and drives the handshake: 1 done, -1
 * failed (err filled). */
static int connect_tls(knw_transport *t, void *ctx, const server *s, int sndbuf, char *err, size_t n) {
    knw_transport_init(t, &knw_transport_tls);
    knw_addrs addrs;
    assert_int_equal(knw_dns_resolve("127.0.0.1", s->port, &addrs, err, n), 0);
    knw_transport_opts opts = {sndbuf, -1, false, "localhost", ctx, true};
    int rc = t->ops->connect(t, &addrs.addrs[0], &opts, err, n);
    knw_addrs_free(&addrs);
    if (rc)
        return -1;
    int64_t end = kn_test_now_ms() + 10000;
    while (kn_test_now_ms() < end) {
        rc = t->ops->connect_step(t, err, n);
        if (rc)
            return rc;
        struct pollfd pfd = {t->fd, t->ops->events(t, false), 0};
        poll(&pfd, 1, 500);
    }
    fail_msg("handshake did not finish");
    return -1;
}

static void test_pending_records(void **state) {
    (void)state;
    server s;
    server_start(&s, SRV_BURST);
    void *ctx = client_ctx();
    knw_transport t;
    char err[512];
    if (connect_tls(&t, ctx, &s, -1, err, sizeof err) != 1)
        fail_msg("connect: %s", err);
    assert_true(t.connected);
    /* Let all three records reach our socket before reading any. */
    usleep(200 * 1000);
    char buf[100];
    int got = 0, pending_seen = 0;
    int64_t end = kn_test_now_ms() + 10000;
    while (got < 3000 && kn_test_now_ms() < end) {
        if (knw_transport_pending(&t)) {
            pending_seen++;
        } else {
            /* What the network loop does: sleep in poll(2). If OpenSSL
             * held bytes that pending() did not report, this would time
             * out with the socket already drained. */
            struct pollfd pfd = {t.fd, POLLIN, 0};
            if (poll(&pfd, 1, 2000) != 1)
                fail_msg("stalled after %d of 3000 bytes: OpenSSL holds bytes poll(2) cannot see", got);
        }
        ssize_t n = t.ops->read(&t, buf, sizeof buf);
        if (n < 0 && errno == EAGAIN)
            continue;
        assert_true(n > 0);
        for (ssize_t i = 0; i < n; i++)
            assert_int_equal(buf[i], 'a' + (got + i) / 1000);
        got += (int)n;
    }
    assert_int_equal(got, 3000);
    assert_true(pending_seen > 0);
    assert_false(knw_transport_pending(&t));
    t.ops->close(&t);
    server_join(&s);
    knw_tls_ctx_free(ctx);
}

typedef struct wr_ctx {
    knw_transport *t;
    int eagain;
} wr_ctx;

static ssize_t counting_writev(void *ctx, const struct iovec *iov, int iovcnt) {
    wr_ctx *w = ctx;
    ssize_t n = w->t->ops->writev(w->t, iov, iovcnt);
    if (n < 0 && errno == EAGAIN)
        w->eagain++;
    return n;
}

static void test_partial_writes(void **state) {
    (void)state;
    server s;
    server_start(&s, SRV_SINK);
    void *ctx = client_ctx();
    knw_transport t;
    char err[512];
    if (connect_tls(&t, ctx, &s, 65536, err, sizeof err) != 1)
        fail_msg("connect: %s", err);
    /* Buffers of mixed sizes: small ones coalesce into the stage, large
     * ones go straight from the queue. */
    knw_txq q;
    knw_txq_init(&q);
    uint64_t h = 14695981039346656037ull, total = 0;
    unsigned seed = 7;
    for (int b = 0; b < 300; b++) {
        seed = seed * 1103515245u + 12345u;
        size_t len = b % 3 == 0 ? 20000 + seed % 60000 : 1 + seed % 900;
        uint8_t *buf = kn_malloc(len);
        for (size_t i = 0; i < len; i++) {
            buf[i] = (uint8_t)(b * 31 + i * 7);
            h = mix(h, buf[i]);
        }
        total += len;
        assert_int_equal(knw_txq_push(&q, buf, len), 0);
    }
    wr_ctx w = {&t, 0};
    int64_t end = kn_test_now_ms() + 30000;
    while (!knw_txq_empty(&q) && kn_test_now_ms() < end) {
        size_t n = 0;
        if (knw_txq_flush(&q, counting_writev, &w, &n, err, sizeof err))
            fail_msg("flush: %s", err);
        if (!knw_txq_empty(&q)) {
            /* Only POLLOUT: this test never reads (the server's session
             * tickets would keep POLLIN ready). */
            struct pollfd pfd = {t.fd, POLLOUT, 0};
            poll(&pfd, 1, 1000);
        }
    }
    if (!knw_txq_empty(&q))
        fail_msg("stuck with %zu bytes queued after %d EAGAINs, server got %llu", (size_t)q.bytes, w.eagain,
                 (unsigned long long)s.got);
    assert_true(w.eagain > 0); /* the retry path really ran */
    knw_txq_destroy(&q);
    /* Read the server's session tickets first: closing a socket with
     * unread bytes sends a reset, which can drop our tail at the server. */
    char sink[256];
    while (t.ops->read(&t, sink, sizeof sink) > 0) {
    }
    t.ops->close(&t); /* close_notify: the server reads to the end */
    server_join(&s);
    assert_int_equal(s.got, total);
    assert_true(s.sum == h);
    knw_tls_ctx_free(ctx);
}

static void test_peer_closes_mid_handshake(void **state) {
    (void)state;
    server s;
    server_start(&s, SRV_CLOSE_MID);
    void *ctx = client_ctx();
    knw_transport t;
    char err[512] = "";
    assert_int_equal(connect_tls(&t, ctx, &s, -1, err, sizeof err), -1);
    printf("# %s\n", err);
    assert_int_equal(t.err_code, KN_ERR__SSL);
    /* EOF, or a reset when the server closed with our hello unread. */
    assert_true(strstr(err, "closed the connection") || strstr(err, "reset"));
    assert_non_null(strstr(err, "TLS handshake failed"));
    assert_non_null(strstr(err, "security.protocol=PLAINTEXT"));
    t.ops->close(&t);
    server_join(&s);
    knw_tls_ctx_free(ctx);
}

static void test_no_sigpipe(void **state) {
    (void)state;
    signal(SIGPIPE, SIG_DFL); /* SIGPIPE would end this process */
    server s;
    server_start(&s, SRV_CLOSE_AFTER);
    void *ctx = client_ctx();
    knw_transport t;
    char err[512];
    if (connect_tls(&t, ctx, &s, -1, err, sizeof err) != 1)
        fail_msg("connect: %s", err);
    server_join(&s);
    usleep(100 * 1000);
    static uint8_t big[65536];
    struct iovec iov = {big, sizeof big};
    ssize_t n = 0;
    for (int i = 0; i < 200; i++) {
        n = t.ops->writev(&t, &iov, 1);
        if (n < 0 && errno != EAGAIN)
            break;
        usleep(5 * 1000);
    }
    assert_true(n < 0);
    assert_true(errno == EPIPE || errno == ECONNRESET || errno == EPROTO);
    t.ops->close(&t);
    knw_tls_ctx_free(ctx);
}

static int setup(void **state) {
    (void)state;
    snprintf(dir, sizeof dir, "/tmp/kn-test-wire-tls-XXXXXX");
    assert_non_null(mkdtemp(dir));
    kn_test_run("'%s' '%s' >/dev/null 2>&1", kn_test_source_path("tools/kafka/make-pki"), dir);
    return 0;
}

static int teardown(void **state) {
    (void)state;
    kn_test_run("rm -rf '%s'", dir);
    return 0;
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_pending_records),
        cmocka_unit_test(test_partial_writes),
        cmocka_unit_test(test_peer_closes_mid_handshake),
        cmocka_unit_test(test_no_sigpipe),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
