/*
 * loop.h: the network thread's poll(2) primitive: a pollfd set rebuilt
 * every round (one entry per live broker socket, plus the wakeup
 * eventfd at index 0) and a wakeup any thread can trigger. Timers are
 * plain deadlines: every owner reports its next deadline and the round
 * waits for the earliest (see client.c), which keeps this file free of
 * callbacks and allocation in the steady state.
 */
#ifndef KNW_LOOP_H
#define KNW_LOOP_H

#include <poll.h>
#include <stddef.h>
#include <stdint.h>

typedef struct knw_loop {
    int wake_fd;        /* eventfd, -1 if closed */
    struct pollfd *fds; /* owned; fds[0] is wake_fd */
    int nfds, cap;
} knw_loop;

/* Returns 0, or KN_ERR__FAIL with errstr. */
int knw_loop_init(knw_loop *l, char *errstr, size_t errstr_size);
void knw_loop_destroy(knw_loop *l);
/* Starts a round: only the wakeup fd is in the set. */
void knw_loop_reset(knw_loop *l);
/* Adds fd with events; returns its index (> 0), or -1 on NOMEM. */
int knw_loop_add(knw_loop *l, int fd, short events);
/* Waits up to timeout_ms (-1 forever, 0 poll) for events; clears the
 * wakeup counter if it fired. Returns poll's count (>= 0) or -1. */
int knw_loop_wait(knw_loop *l, int timeout_ms);
static inline short knw_loop_revents(const knw_loop *l, int idx) {
    return idx > 0 && idx < l->nfds ? l->fds[idx].revents : 0;
}
/* Wakes a knw_loop_wait in progress (or makes the next one return).
 * Any thread. */
void knw_loop_wake(knw_loop *l);

#endif
