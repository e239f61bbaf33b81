/*
 * lk_ready.c: a client's readiness socket (consumer, producer, share
 * consumer), for event loops that can wait on a Unix-domain socket but
 * not on an arbitrary descriptor (OpenResty cosockets: ngx.socket.tcp()
 * connects to "unix:/path").
 *
 * Why a listening Unix stream socket bound to a file path: a cosocket
 * can only be created by connecting (stock lua-nginx-module has no way
 * to adopt a descriptor such as an eventfd or one end of a socketpair),
 * nginx parses "unix:" paths as file paths (no abstract namespace), and
 * a datagram cosocket stays unbound, so nothing could be sent back to
 * it. So the binding listens on a fresh path (ready_listen), the Lua
 * side connects its cosocket there (a Unix stream connect completes as
 * soon as the connection is queued), and ready_accept takes the
 * connection, closes the listener and removes the path: from then on
 * nothing is left on the file system and the pair is private.
 *
 * Who may connect: the path lives in a fresh directory made by
 * mkdtemp (mode 0700, owned by this process's user), so other users
 * cannot reach it; and ready_accept checks the peer with SO_PEERCRED:
 * a connection from any other process (same user included) is closed
 * and refused, the listener stays for the right one.
 *
 * Signalling: the client's readiness hook (kn_consumer_set_ready_cb,
 * kn_producer_set_ready_cb) runs on the network thread and writes one
 * byte, non-blocking, only when the socket is not already signalled
 * (armed flag); poll clears the flag before it drains, so whatever
 * lands during or after a poll is signalled again. An idle client
 * therefore writes nothing and its cosocket sleeps in the event loop:
 * no CPU, no timer. consumer:wakeup() signals too (kn_consumer_wakeup
 * fires the hook on the calling thread, the Lua thread here): a loop
 * waiting on the socket wakes, and its next poll(0) returns "_WAKEUP"
 * (the library keeps the wakeup pending for that poll).
 *
 * Threads: listen/accept/close run on the Lua thread; the hooks on the
 * network thread, or the Lua thread for wakeup, with the client's lock
 * held (the armed flag makes the two writers send one byte between
 * polls). Setting a hook takes the same lock, so fd is visible to it,
 * and once the hook is removed it is not running.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "lk.h"

void lk_ready_init(lk_ready *r) {
    r->listen_fd = -1;
    r->fd = -1;
    r->path[0] = '\0';
    r->dir[0] = '\0';
    atomic_init(&r->armed, 0);
}

void lk_ready_signal(lk_ready *r) {
    if (r->fd < 0)
        return; /* no connection (yet): nobody waits on it */
    if (atomic_exchange(&r->armed, 1))
        return; /* already signalled, not yet polled */
    char b = '!';
    /* A full buffer (EAGAIN) already reads as ready; a peer that went
     * away (EPIPE, no SIGPIPE) has nobody to tell. */
    ssize_t n = send(r->fd, &b, 1, MSG_DONTWAIT | MSG_NOSIGNAL);
    (void)n;
}

static void lk_ready_consumer_cb(kn_consumer *c, void *opaque) {
    (void)c;
    lk_ready_signal((lk_ready *)opaque);
}

static void lk_ready_producer_cb(kn_producer *p, void *opaque) {
    (void)p;
    lk_ready_signal((lk_ready *)opaque);
}

/* Removes the socket path and its private directory. */
static void lk_ready_unlink(lk_ready *r) {
    if (r->path[0])
        unlink(r->path);
    if (r->dir[0])
        rmdir(r->dir);
    r->path[0] = '\0';
    r->dir[0] = '\0';
}

int lk_ready_listen(lk_ready *r, const char *dir, char *errstr, size_t errstr_size) {
    if (r->listen_fd >= 0 || r->fd >= 0) {
        snprintf(errstr, errstr_size, "the readiness socket is already set up (%s)",
                 r->path[0] ? r->path : "connected");
        return KN_ERR__STATE;
    }
    struct sockaddr_un sa;
    memset(&sa, 0, sizeof sa);
    sa.sun_family = AF_UNIX;
    /* dir/kn-ready-XXXXXX/s must fit sun_path. */
    int n = snprintf(r->dir, sizeof r->dir, "%s/kn-ready-XXXXXX", dir);
    if (n < 0 || (size_t)n + 2 >= sizeof sa.sun_path || (size_t)n >= sizeof r->dir) {
        r->dir[0] = '\0';
        snprintf(errstr, errstr_size, "readiness socket directory '%s' is too long for a Unix socket path",
                 dir);
        return KN_ERR__INVALID_ARG;
    }
    if (!mkdtemp(r->dir)) { /* mode 0700: only this user can reach the socket */
        snprintf(errstr, errstr_size, "readiness socket directory in %s: %s", dir, strerror(errno));
        r->dir[0] = '\0';
        return KN_ERR__TRANSPORT;
    }
    size_t dl = strlen(r->dir); /* + "/s" fits: checked above */
    memcpy(sa.sun_path, r->dir, dl);
    memcpy(sa.sun_path + dl, "/s", 3);
    /* Non-blocking: ready_accept must never wait for a connection. */
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    if (fd < 0) {
        snprintf(errstr, errstr_size, "socket(AF_UNIX): %s", strerror(errno));
        rmdir(r->dir);
        r->dir[0] = '\0';
        return KN_ERR__TRANSPORT;
    }
    memcpy(r->path, sa.sun_path, sizeof r->path);
    if (bind(fd, (struct sockaddr *)&sa, sizeof sa) != 0 || listen(fd, 4) != 0) {
        snprintf(errstr, errstr_size, "readiness socket %s: %s", sa.sun_path, strerror(errno));
        close(fd);
        lk_ready_unlink(r);
        return KN_ERR__TRANSPORT;
    }
    r->listen_fd = fd;
    return KN_OK;
}

/* Takes the connection made to r->path by this process: KN_OK with
 * r->fd set, the listener closed and the path removed. */
int lk_ready_push_listen(lua_State *L, lk_ready *r, int dir_arg) {
    const char *dir = luaL_optstring(L, dir_arg, NULL);
    if (!dir) {
        dir = getenv("TMPDIR");
        if (!dir || !*dir)
            dir = "/tmp";
    }
    char errstr[256] = "";
    int err = lk_ready_listen(r, dir, errstr, sizeof errstr);
    if (err)
        return lk_push_error(L, err, errstr);
    lua_pushstring(L, r->path);
    return 1;
}

int lk_ready_take(lk_ready *r, char *errstr, size_t errstr_size) {
    if (r->listen_fd < 0) {
        snprintf(errstr, errstr_size, "%s",
                 r->fd >= 0 ? "the readiness socket is already connected" : "call ready_listen() first");
        return KN_ERR__STATE;
    }
    int fd = accept4(r->listen_fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
    if (fd < 0) {
        int e = errno;
        snprintf(errstr, errstr_size, "no connection on readiness socket %s yet: %s", r->path,
                 e == EAGAIN || e == EWOULDBLOCK ? "connect to it before ready_accept()" : strerror(e));
        return e == EAGAIN || e == EWOULDBLOCK ? KN_ERR__STATE : KN_ERR__TRANSPORT;
    }
    struct ucred cred;
    socklen_t len = sizeof cred;
    if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) != 0 || len != sizeof cred) {
        snprintf(errstr, errstr_size, "readiness socket %s: SO_PEERCRED: %s", r->path, strerror(errno));
        close(fd);
        return KN_ERR__TRANSPORT;
    }
    if (cred.pid != getpid() || cred.uid != geteuid()) {
        /* The one connection must be this process's own (the cosocket):
         * anything else is refused and the listener waits on. */
        snprintf(errstr, errstr_size,
                 "refused a connection on readiness socket %s from process %ld (uid %ld): only "
                 "this process (%ld) may connect",
                 r->path, (long)cred.pid, (long)cred.uid, (long)getpid());
        close(fd);
        return KN_ERR__STATE;
    }
    close(r->listen_fd);
    r->listen_fd = -1;
    lk_ready_unlink(r);
    r->fd = fd;
    atomic_store(&r->armed, 0);
    return KN_OK;
}

int lk_ready_accept(lk_ready *r, kn_consumer *c, char *errstr, size_t errstr_size) {
    int err = lk_ready_take(r, errstr, errstr_size);
    if (!err)
        kn_consumer_set_ready_cb(c, lk_ready_consumer_cb, r);
    return err;
}

int lk_ready_accept_producer(lk_ready *r, kn_producer *p, char *errstr, size_t errstr_size) {
    int err = lk_ready_take(r, errstr, errstr_size);
    if (!err)
        kn_producer_set_ready_cb(p, lk_ready_producer_cb, r);
    return err;
}

void lk_ready_rearm(lk_ready *r) {
    if (r->fd >= 0)
        atomic_store(&r->armed, 0);
}

static void lk_ready_release(lk_ready *r) {
    if (r->fd >= 0)
        close(r->fd);
    if (r->listen_fd >= 0)
        close(r->listen_fd);
    lk_ready_unlink(r);
    lk_ready_init(r);
}

void lk_ready_close(lk_ready *r, kn_consumer *c) {
    if (r->fd >= 0 && c)
        kn_consumer_set_ready_cb(c, NULL, NULL); /* the hook is not running after this */
    lk_ready_release(r);
}

void lk_ready_close_producer(lk_ready *r, kn_producer *p) {
    if (r->fd >= 0 && p)
        kn_producer_set_ready_cb(p, NULL, NULL);
    lk_ready_release(r);
}
