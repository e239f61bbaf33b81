/*
 * transport_tcp.c: the plain TCP transport (PLAINTEXT listeners):
 * non-blocking connect, TCP_NODELAY, buffer sizes, keepalive.
 */
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "error.h"
#include "wire/transport.h"

void knw_transport_init(knw_transport *t, const knw_transport_ops *ops) {
    memset(t, 0, sizeof *t);
    t->ops = ops;
    t->fd = -1;
}

static int tcp_connect(knw_transport *t, const knw_addr *addr, const knw_transport_opts *opts, char *errstr,
                       size_t errstr_size) {
    char as[64];
    int fd = socket(addr->family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd < 0) {
        kn_errstr_set(errstr, errstr_size, "socket: %s", strerror(errno));
        return -1;
    }
    int one = 1;
    /* Requests are written whole; Nagle would only add latency. */
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    if (opts && opts->keepalive)
        setsockopt(fd, SOL_SOCKET, SO_KEEPALIVE, &one, sizeof one);
    if (opts && opts->send_buffer_bytes > 0)
        setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &opts->send_buffer_bytes, sizeof(int));
    if (opts && opts->receive_buffer_bytes > 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &opts->receive_buffer_bytes, sizeof(int));
    t->fd = fd;
    t->connected = false;
    if (connect(fd, (const struct sockaddr *)&addr->sa, addr->len) == 0) {
        t->connected = true;
        return 0;
    }
    if (errno == EINPROGRESS)
        return 0;
    kn_errstr_set(errstr, errstr_size, "connect to %s: %s", knw_addr_str(addr, as, sizeof as),
                  strerror(errno));
    close(fd);
    t->fd = -1;
    return -1;
}

static int tcp_connect_step(knw_transport *t, char *errstr, size_t errstr_size) {
    if (t->connected)
        return 1;
    int err = 0;
    socklen_t len = sizeof err;
    if (getsockopt(t->fd, SOL_SOCKET, SO_ERROR, &err, &len) < 0)
        err = errno;
    if (err == EINPROGRESS || err == EALREADY)
        return 0;
    if (err) {
        kn_errstr_set(errstr, errstr_size, "%s", strerror(err));
        return -1;
    }
    /* SO_ERROR 0 before the handshake finished is possible on a
     * spurious wakeup: check that we really have a peer. */
    struct sockaddr_storage ss;
    socklen_t sl = sizeof ss;
    if (getpeername(t->fd, (struct sockaddr *)&ss, &sl) < 0) {
        if (errno == ENOTCONN) {
            char c;
            /* read() reports the real connect error (ECONNREFUSED). */
            if (read(t->fd, &c, 1) < 0 && errno != EAGAIN) {
                kn_errstr_set(errstr, errstr_size, "%s", strerror(errno));
                return -1;
            }
            return 0;
        }
        kn_errstr_set(errstr, errstr_size, "%s", strerror(errno));
        return -1;
    }
    t->connected = true;
    return 1;
}

static ssize_t tcp_read(knw_transport *t, void *buf, size_t len) {
    ssize_t n;
    do
        n = recv(t->fd, buf, len, 0);
    while (n < 0 && errno == EINTR);
    if (n < 0 && errno == EWOULDBLOCK)
        errno = EAGAIN;
    return n;
}

static ssize_t tcp_writev(knw_transport *t, const struct iovec *iov, int iovcnt) {
    struct msghdr msg;
    memset(&msg, 0, sizeof msg);
    msg.msg_iov = (struct iovec *)iov;
    msg.msg_iovlen = (size_t)iovcnt;
    ssize_t n;
    /* sendmsg rather than writev for MSG_NOSIGNAL: a peer reset must be
     * an error return, never SIGPIPE in the host process. */
    do
        n = sendmsg(t->fd, &msg, MSG_NOSIGNAL);
    while (n < 0 && errno == EINTR);
    if (n < 0 && errno == EWOULDBLOCK)
        errno = EAGAIN;
    return n;
}

static short tcp_events(knw_transport *t, bool want_write) {
    if (!t->connected)
        return POLLOUT;
    return (short)(POLLIN | (want_write ? POLLOUT : 0));
}

static void tcp_close(knw_transport *t) {
    if (t->fd >= 0)
        close(t->fd);
    t->fd = -1;
    t->connected = false;
}

const knw_transport_ops knw_transport_tcp = {
    .name = "tcp",
    .connect = tcp_connect,
    .connect_step = tcp_connect_step,
    .read = tcp_read,
    .writev = tcp_writev,
    .events = tcp_events,
    .close = tcp_close,
};
