/*
 * transport.h: the byte-stream layer under a broker connection, as a
 * small vtable so layers stack (the way Redis ConnectionType and curl
 * connection filters layer transports): plain TCP (transport_tcp.c) and
 * TLS over TCP (transport_tls.c). SASL is not a transport: it runs
 * Kafka requests over whichever of these the connection has.
 *
 * Conventions (POSIX-like so a layer can pass its lower layer's answers
 * through): read/writev return bytes moved (> 0), 0 from read on EOF,
 * -1 with errno set on error; errno EAGAIN means "try again when
 * events() says so". Everything is non-blocking; nothing here
 * blocks the network thread except name resolution (dns.h).
 *
 * writev may move fewer bytes than offered; the caller keeps the rest
 * and offers it again, from the same first byte, the next time (a TLS
 * layer that got EAGAIN must be offered the same bytes again).
 * A layer that fails for its own reason (TLS alert, certificate) sets
 * err_code/err on the transport so the connection reports that reason
 * rather than a bare errno.
 */
#ifndef KNW_TRANSPORT_H
#define KNW_TRANSPORT_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>
#include <sys/uio.h>

#include "wire/dns.h"

typedef struct knw_transport knw_transport;

typedef struct knw_transport_opts {
    int send_buffer_bytes;    /* SO_SNDBUF, -1 = OS default */
    int receive_buffer_bytes; /* SO_RCVBUF, -1 = OS default */
    bool keepalive;           /* SO_KEEPALIVE */
    const char *host;         /* the broker's name as configured: SNI and
                                 certificate verification (TLS) */
    void *tls_ctx;            /* SSL_CTX (tls_ctx.h), not owned; TLS only */
    bool tls_verify_host;     /* ssl.endpoint.identification.algorithm=https */
} knw_transport_opts;

typedef struct knw_transport_ops {
    const char *name; /* "tcp", later "tls", "sasl" */
    /* Starts a non-blocking connect. Returns 0 (connected or in
     * progress: see connect_step) or -1 with errstr. */
    int (*connect)(knw_transport *t, const knw_addr *addr, const knw_transport_opts *opts, char *errstr,
                   size_t errstr_size);
    /* Drives a pending connect/handshake after poll reported events:
     * 1 established, 0 still in progress, -1 failed (errstr). */
    int (*connect_step)(knw_transport *t, char *errstr, size_t errstr_size);
    ssize_t (*read)(knw_transport *t, void *buf, size_t len);
    ssize_t (*writev)(knw_transport *t, const struct iovec *iov, int iovcnt);
    /* poll(2) events this layer needs; want_write says whether the
     * caller has bytes to send (a TLS layer may need POLLIN to write). */
    short (*events)(knw_transport *t, bool want_write);
    /* True when read() would return bytes without the socket becoming
     * readable (TLS records already decrypted in the layer): the loop
     * must not sleep in poll(2) then. NULL: never (TCP). */
    bool (*pending)(knw_transport *t);
    /* Closes the socket and frees the layer's state (not t itself). */
    void (*close)(knw_transport *t);
} knw_transport_ops;

struct knw_transport {
    const knw_transport_ops *ops;
    int fd;         /* -1 when closed */
    bool connected; /* connect_step returned 1 */
    void *impl;     /* layer state (NULL for TCP) */
    int err_code;   /* the layer's own failure (KN_ERR__SSL), 0 = none */
    char err[256];  /* ... and its reason (never holds secrets) */
};

extern const knw_transport_ops knw_transport_tcp;
extern const knw_transport_ops knw_transport_tls;

/* See knw_transport_ops.pending; one pointer test on plain TCP. */
static inline bool knw_transport_pending(knw_transport *t) {
    return t->ops->pending && t->fd >= 0 && t->ops->pending(t);
}

/* Zeroes t and binds it to ops (fd -1). */
void knw_transport_init(knw_transport *t, const knw_transport_ops *ops);

#endif
