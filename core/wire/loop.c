/*
 * loop.c: pollfd set and eventfd wakeup (see loop.h).
 */
#include "wire/loop.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "error.h"
#include "kn_alloc.h"

int knw_loop_init(knw_loop *l, char *errstr, size_t errstr_size) {
    memset(l, 0, sizeof *l);
    l->wake_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
    if (l->wake_fd < 0) {
        kn_errstr_set(errstr, errstr_size, "eventfd: %s", strerror(errno));
        return KN_ERR__FAIL;
    }
    l->cap = 16;
    l->fds = kn_calloc((size_t)l->cap, sizeof *l->fds);
    if (!l->fds) {
        close(l->wake_fd);
        l->wake_fd = -1;
        kn_errstr_set(errstr, errstr_size, "out of memory");
        return KN_ERR__NOMEM;
    }
    knw_loop_reset(l);
    return 0;
}

void knw_loop_destroy(knw_loop *l) {
    if (l->wake_fd >= 0)
        close(l->wake_fd);
    l->wake_fd = -1;
    kn_free(l->fds);
    l->fds = NULL;
}

void knw_loop_reset(knw_loop *l) {
    l->fds[0].fd = l->wake_fd;
    l->fds[0].events = POLLIN;
    l->fds[0].revents = 0;
    l->nfds = 1;
}

int knw_loop_add(knw_loop *l, int fd, short events) {
    if (l->nfds == l->cap) {
        struct pollfd *n = kn_realloc(l->fds, (size_t)l->cap * 2 * sizeof *n);
        if (!n)
            return -1;
        l->fds = n;
        l->cap *= 2;
    }
    l->fds[l->nfds].fd = fd;
    l->fds[l->nfds].events = events;
    l->fds[l->nfds].revents = 0;
    return l->nfds++;
}

int knw_loop_wait(knw_loop *l, int timeout_ms) {
    int n = poll(l->fds, (nfds_t)l->nfds, timeout_ms);
    if (n < 0 && errno == EINTR)
        n = 0;
    if (n > 0 && (l->fds[0].revents & POLLIN)) {
        uint64_t v;
        /* Drain the counter; a racing wake just makes the next round
         * start immediately, which is harmless. */
        ssize_t r = read(l->wake_fd, &v, sizeof v);
        (void)r;
    }
    return n;
}

void knw_loop_wake(knw_loop *l) {
    uint64_t one = 1;
    ssize_t r = write(l->wake_fd, &one, sizeof one);
    (void)r;
}
