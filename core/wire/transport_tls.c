/*
 * transport_tls.c: TLS over the TCP transport (security.protocol SSL and
 * SASL_SSL), on OpenSSL. Owns one SSL object per connection; the
 * SSL_CTX is the client's (tls_ctx.c). connect_step drives the TCP
 * connect and then the non-blocking handshake: the connection counts as
 * connected only when both are done.
 *
 * The socket BIO is our own so every send uses MSG_NOSIGNAL (OpenSSL's
 * socket BIO calls write(2), which raises SIGPIPE in the host process
 * when the broker has gone). Writes coalesce small iovecs into one
 * record-sized stage; after EAGAIN the same bytes are offered again
 * (transport.h), so a retried SSL_write gets the same buffer. Reads
 * track whether OpenSSL holds bytes poll(2) cannot see (pending()).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>

#include <openssl/err.h>
#include <openssl/ssl.h>
#include <openssl/x509v3.h>

#include "error.h"
#include "kn_alloc.h"
#include "tls/tls_ctx.h"
#include "wire/transport.h"

/* One TLS record's worth: small requests go out as one record. */
#define TLS_STAGE 16384

typedef struct tls_state {
    knw_transport tcp; /* the layer below */
    SSL *ssl;
    BIO_METHOD *bio_method; /* ours, freed after ssl */
    bool want_write;        /* the handshake (or a read) needs POLLOUT */
    bool rd_blocked;        /* the last SSL_read wanted more from the socket */
    size_t wlen;            /* an SSL_write to repeat with these many bytes, 0 none */
    bool wstaged;           /* ... from stage (else from the caller's first iovec) */
    uint8_t stage[TLS_STAGE];
} tls_state;

/* ---- a socket BIO that never raises SIGPIPE ---- */

/* The BIO type index is global (OpenSSL has 127 of them); the method
 * itself is made per connection, so nothing outlives the clients (a Lua
 * module may be unloaded, and a static method would leak then). */
static int bio_index = -1;
static pthread_once_t bio_once = PTHREAD_ONCE_INIT;

static int bio_sock_write(BIO *b, const char *buf, int len) {
    int fd = (int)(intptr_t)BIO_get_data(b);
    ssize_t n;
    do
        n = send(fd, buf, (size_t)len, MSG_NOSIGNAL);
    while (n < 0 && errno == EINTR);
    BIO_clear_retry_flags(b);
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
        BIO_set_retry_write(b);
    return (int)n;
}

static int bio_sock_read(BIO *b, char *buf, int len) {
    int fd = (int)(intptr_t)BIO_get_data(b);
    ssize_t n;
    do
        n = recv(fd, buf, (size_t)len, 0);
    while (n < 0 && errno == EINTR);
    BIO_clear_retry_flags(b);
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
        BIO_set_retry_read(b);
    return (int)n;
}

static long bio_sock_ctrl(BIO *b, int cmd, long num, void *ptr) {
    (void)b, (void)num, (void)ptr;
    /* Writes go straight to the socket: nothing to flush. */
    return cmd == BIO_CTRL_FLUSH ? 1 : 0;
}

static int bio_sock_create(BIO *b) {
    BIO_set_init(b, 1);
    return 1;
}

static int bio_sock_destroy(BIO *b) {
    (void)b;
    return 1; /* the fd belongs to the TCP layer */
}

static void bio_init_once(void) { bio_index = BIO_get_new_index(); }

static BIO_METHOD *bio_method_new(void) {
    pthread_once(&bio_once, bio_init_once);
    if (bio_index < 0)
        return NULL;
    BIO_METHOD *m = BIO_meth_new(bio_index | BIO_TYPE_SOURCE_SINK, "kn_socket");
    if (m && BIO_meth_set_write(m, bio_sock_write) && BIO_meth_set_read(m, bio_sock_read) &&
        BIO_meth_set_ctrl(m, bio_sock_ctrl) && BIO_meth_set_create(m, bio_sock_create) &&
        BIO_meth_set_destroy(m, bio_sock_destroy))
        return m;
    BIO_meth_free(m);
    return NULL;
}

/* ---- failures ---- */

static bool is_ip_literal(const char *host) {
    unsigned char b[16];
    return inet_pton(AF_INET, host, b) == 1 || inet_pton(AF_INET6, host, b) == 1;
}

/* Records the layer's failure (KN_ERR__SSL) and copies it to errstr. */
static void set_fatal(knw_transport *t, char *errstr, size_t errstr_size, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static void set_fatal(knw_transport *t, char *errstr, size_t errstr_size, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(t->err, sizeof t->err, fmt, ap);
    va_end(ap);
    t->err_code = KN_ERR__SSL;
    if (errstr)
        snprintf(errstr, errstr_size, "%s", t->err);
}

static bool eof_reason(unsigned long e) {
    return ERR_GET_LIB(e) == ERR_LIB_SSL && ERR_GET_REASON(e) == SSL_R_UNEXPECTED_EOF_WHILE_READING;
}

/* A hint for alerts that mean the broker refused our certificate. */
static const char *alert_hint(const char *reason) {
    if (strstr(reason, "certificate required"))
        return " (the broker requires a client certificate: set ssl.keystore.*)";
    if (strstr(reason, "alert bad certificate") || strstr(reason, "alert unknown ca") ||
        strstr(reason, "alert certificate unknown") || strstr(reason, "alert certificate expired"))
        return " (the broker refused the client certificate)";
    if (strstr(reason, "wrong version number") || strstr(reason, "packet length too long") ||
        strstr(reason, "record layer failure"))
        return " (not a TLS listener? then set security.protocol=PLAINTEXT)";
    return "";
}

static void describe_handshake_failure(knw_transport *t, const tls_state *st, int err, int saved_errno,
                                       char *errstr, size_t errstr_size) {
    long vr = SSL_get_verify_result(st->ssl);
    unsigned long e = ERR_peek_last_error();
    char why[160];
    if (vr != X509_V_OK) {
        ERR_clear_error();
        const char *hint = "";
        if (vr == X509_V_ERR_HOSTNAME_MISMATCH || vr == X509_V_ERR_IP_ADDRESS_MISMATCH)
            hint = " (the certificate does not name the host we connected to)";
        else if (vr == X509_V_ERR_UNABLE_TO_GET_ISSUER_CERT_LOCALLY ||
                 vr == X509_V_ERR_SELF_SIGNED_CERT_IN_CHAIN || vr == X509_V_ERR_DEPTH_ZERO_SELF_SIGNED_CERT ||
                 vr == X509_V_ERR_UNABLE_TO_GET_ISSUER_CERT)
            hint = " (no CA in ssl.truststore.* signed it)";
        set_fatal(t, errstr, errstr_size, "TLS handshake failed: certificate verify failed: %s%s",
                  X509_verify_cert_error_string(vr), hint);
    } else if (err == SSL_ERROR_ZERO_RETURN || (err == SSL_ERROR_SYSCALL && !e && saved_errno == 0) ||
               eof_reason(e)) {
        ERR_clear_error();
        set_fatal(t, errstr, errstr_size,
                  "TLS handshake failed: the broker closed the connection (a PLAINTEXT listener? then set "
                  "security.protocol=PLAINTEXT)");
    } else if (err == SSL_ERROR_SYSCALL && !e) {
        set_fatal(t, errstr, errstr_size,
                  "TLS handshake failed: %s (a PLAINTEXT listener? then set security.protocol=PLAINTEXT)",
                  strerror(saved_errno ? saved_errno : EPROTO));
    } else {
        knw_tls_reason(why, sizeof why);
        set_fatal(t, errstr, errstr_size, "TLS handshake failed: %s%s", why, alert_hint(why));
    }
}

/* ---- ops ---- */

static void tls_close(knw_transport *t) {
    tls_state *st = t->impl;
    if (st) {
        if (st->ssl) {
            if (t->connected) {
                /* close_notify, best effort: never waits. */
                SSL_shutdown(st->ssl);
                ERR_clear_error();
            }
            SSL_free(st->ssl);
        }
        BIO_meth_free(st->bio_method);
        if (st->tcp.fd >= 0)
            st->tcp.ops->close(&st->tcp);
        kn_free(st);
    }
    t->impl = NULL;
    t->fd = -1;
    t->connected = false;
}

static int tls_connect(knw_transport *t, const knw_addr *addr, const knw_transport_opts *opts, char *errstr,
                       size_t errstr_size) {
    char why[160];
    t->err_code = 0;
    t->err[0] = 0;
    if (!opts || !opts->tls_ctx) {
        kn_errstr_set(errstr, errstr_size, "TLS transport without a TLS context");
        return -1;
    }
    tls_state *st = kn_calloc(1, sizeof *st);
    if (!st) {
        kn_errstr_set(errstr, errstr_size, "out of memory");
        return -1;
    }
    const char *host = opts->host ? opts->host : "";
    knw_transport_init(&st->tcp, &knw_transport_tcp);
    if (st->tcp.ops->connect(&st->tcp, addr, opts, errstr, errstr_size)) {
        kn_free(st);
        return -1;
    }
    t->impl = st;
    t->fd = st->tcp.fd;
    t->connected = false;
    ERR_clear_error();
    BIO *bio = NULL;
    st->ssl = SSL_new(opts->tls_ctx);
    if (!st->ssl || !(st->bio_method = bio_method_new()) || !(bio = BIO_new(st->bio_method)))
        goto fail;
    BIO_set_data(bio, (void *)(intptr_t)st->tcp.fd);
    SSL_set_bio(st->ssl, bio, bio);
    SSL_set_connect_state(st->ssl);
    bool ip = is_ip_literal(host);
    /* SNI names a host, never an address (RFC 6066). */
    if (*host && !ip && !SSL_set_tlsext_host_name(st->ssl, host))
        goto fail;
    if (opts->tls_verify_host) {
        if (ip) {
            if (!X509_VERIFY_PARAM_set1_ip_asc(SSL_get0_param(st->ssl), host))
                goto fail;
        } else {
            /* As Java's HTTPS identification: no partial wildcards. */
            SSL_set_hostflags(st->ssl, X509_CHECK_FLAG_NO_PARTIAL_WILDCARDS);
            if (!SSL_set1_host(st->ssl, host))
                goto fail;
        }
    }
    return 0;
fail:
    kn_errstr_set(errstr, errstr_size, "TLS setup for %s: %s", host, knw_tls_reason(why, sizeof why));
    tls_close(t);
    return -1;
}

static int tls_connect_step(knw_transport *t, char *errstr, size_t errstr_size) {
    tls_state *st = t->impl;
    if (t->connected)
        return 1;
    if (!st->tcp.connected) {
        int rc = st->tcp.ops->connect_step(&st->tcp, errstr, errstr_size);
        if (rc <= 0)
            return rc;
    }
    ERR_clear_error();
    errno = 0;
    int r = SSL_do_handshake(st->ssl);
    int saved = errno;
    if (r == 1) {
        st->want_write = false;
        t->connected = true;
        return 1;
    }
    int err = SSL_get_error(st->ssl, r);
    if (err == SSL_ERROR_WANT_READ || err == SSL_ERROR_WANT_WRITE) {
        st->want_write = err == SSL_ERROR_WANT_WRITE;
        return 0;
    }
    describe_handshake_failure(t, st, err, saved, errstr, errstr_size);
    return -1;
}

static ssize_t tls_read(knw_transport *t, void *buf, size_t len) {
    tls_state *st = t->impl;
    ERR_clear_error();
    errno = 0;
    int n = SSL_read(st->ssl, buf, len > INT_MAX ? INT_MAX : (int)len);
    if (n > 0) {
        st->rd_blocked = false;
        return n;
    }
    int saved = errno;
    int err = SSL_get_error(st->ssl, n);
    unsigned long e = ERR_peek_last_error();
    switch (err) {
    case SSL_ERROR_WANT_READ:
        st->rd_blocked = true;
        errno = EAGAIN;
        return -1;
    case SSL_ERROR_WANT_WRITE:
        st->want_write = true;
        errno = EAGAIN;
        return -1;
    case SSL_ERROR_ZERO_RETURN:
        return 0;
    case SSL_ERROR_SYSCALL:
        ERR_clear_error();
        if (!saved)
            return 0; /* EOF without close_notify: a plain close */
        errno = saved;
        return -1;
    default:
        if (eof_reason(e)) {
            ERR_clear_error();
            return 0;
        }
        char why[160];
        knw_tls_reason(why, sizeof why);
        set_fatal(t, NULL, 0, "TLS error: %s%s", why, alert_hint(why));
        errno = EPROTO;
        return -1;
    }
}

static ssize_t tls_writev(knw_transport *t, const struct iovec *iov, int iovcnt) {
    tls_state *st = t->impl;
    const void *p;
    size_t len;
    if (st->wlen) {
        /* OpenSSL needs the same bytes again (the caller offers them from
         * the same first byte: transport.h). */
        len = st->wlen;
        p = st->wstaged ? st->stage : iov[0].iov_base;
    } else if (iovcnt == 1 || iov[0].iov_len >= TLS_STAGE) {
        p = iov[0].iov_base;
        len = iov[0].iov_len > INT_MAX ? INT_MAX : iov[0].iov_len;
        st->wstaged = false;
    } else {
        /* Many small requests: one record and one send instead of one
         * per request. */
        len = 0;
        for (int i = 0; i < iovcnt && len < TLS_STAGE; i++) {
            size_t take = iov[i].iov_len < TLS_STAGE - len ? iov[i].iov_len : TLS_STAGE - len;
            memcpy(st->stage + len, iov[i].iov_base, take);
            len += take;
        }
        p = st->stage;
        st->wstaged = true;
    }
    if (len == 0)
        return 0;
    ERR_clear_error();
    errno = 0;
    int n = SSL_write(st->ssl, p, (int)len);
    if (n > 0) {
        st->wlen = 0;
        return n;
    }
    int saved = errno;
    int err = SSL_get_error(st->ssl, n);
    switch (err) {
    case SSL_ERROR_WANT_WRITE:
    case SSL_ERROR_WANT_READ:
        st->wlen = len;
        st->want_write = err == SSL_ERROR_WANT_WRITE;
        errno = EAGAIN;
        return -1;
    case SSL_ERROR_SYSCALL:
        ERR_clear_error();
        errno = saved ? saved : EPIPE;
        return -1;
    default: {
        char why[160];
        knw_tls_reason(why, sizeof why);
        set_fatal(t, NULL, 0, "TLS error: %s%s", why, alert_hint(why));
        errno = EPROTO;
        return -1;
    }
    }
}

static short tls_events(knw_transport *t, bool want_write) {
    tls_state *st = t->impl;
    if (!st || !st->tcp.connected)
        return POLLOUT;
    if (!t->connected)
        return st->want_write ? POLLOUT : POLLIN;
    bool w = want_write || st->wlen || st->want_write;
    /* A read that wanted to write is retried by the next POLLIN (Kafka
     * answers only requests, so a read is coming whenever one is in
     * flight): ask for POLLOUT once, not forever. */
    st->want_write = false;
    return (short)(POLLIN | (w ? POLLOUT : 0));
}

static bool tls_pending(knw_transport *t) {
    tls_state *st = t->impl;
    if (!st || !t->connected)
        return false;
    /* Decrypted bytes, or (read-ahead) raw ones OpenSSL has not looked
     * at since its last read found the socket empty. */
    return SSL_pending(st->ssl) > 0 || (!st->rd_blocked && SSL_has_pending(st->ssl));
}

const knw_transport_ops knw_transport_tls = {
    .name = "tls",
    .connect = tls_connect,
    .connect_step = tls_connect_step,
    .read = tls_read,
    .writev = tls_writev,
    .events = tls_events,
    .pending = tls_pending,
    .close = tls_close,
};
