/*
 * fork.h: tells a client that it is being used in a process other than
 * the one that created it (kn_fork_ prefix).
 *
 * A client's network and resolver threads exist only in the process that
 * created it: after fork() the child has a copy of the client's memory
 * (locks possibly held by threads that are not there) and no threads.
 * Every client records the fork generation and pid at creation; a
 * generation that changed means "another process". The generation is a
 * counter bumped by a pthread_atfork child handler, so the check is one
 * atomic load (no getpid() system call per send).
 */
#ifndef KN_FORK_H
#define KN_FORK_H

#include <stdatomic.h>
#include <stdint.h>
#include <sys/types.h>

/* What a client records at creation. */
typedef struct kn_fork_stamp {
    uint64_t gen;
    pid_t pid;
} kn_fork_stamp;

/* Fills *st for the current process (registers the atfork handler on
 * the first call; any thread). */
void kn_fork_stamp_now(kn_fork_stamp *st);
/* The fork generation (fork.c). Read only through kn_fork_changed. */
extern atomic_uint_fast64_t kn_fork_generation;

/* Non-zero when st was taken in another process (an ancestor). Inline:
 * every send and poll checks it, and a call was most of its cost. */
static inline int kn_fork_changed(const kn_fork_stamp *st) {
    return atomic_load_explicit(&kn_fork_generation, memory_order_relaxed) != st->gen;
}
/* Fills errstr with the error every call on such a client returns:
 * "<what> was created in process N before a fork; this is process M: ..." */
void kn_fork_errstr(const kn_fork_stamp *st, const char *what, char *errstr, size_t errstr_size);

#endif
