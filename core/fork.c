/*
 * fork.c: the fork generation behind kn_fork_changed (see fork.h).
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <unistd.h>

#include "error.h"
#include "fork.h"

atomic_uint_fast64_t kn_fork_generation;
static pthread_once_t kn_fork_once = PTHREAD_ONCE_INIT;

/* Runs in the child right after fork() (async-signal-safe: one atomic). */
static void kn_fork_child(void) { atomic_fetch_add(&kn_fork_generation, 1); }

static void kn_fork_register(void) { pthread_atfork(NULL, NULL, kn_fork_child); }

void kn_fork_stamp_now(kn_fork_stamp *st) {
    pthread_once(&kn_fork_once, kn_fork_register);
    st->gen = atomic_load(&kn_fork_generation);
    st->pid = getpid();
}

void kn_fork_errstr(const kn_fork_stamp *st, const char *what, char *errstr, size_t errstr_size) {
    kn_errstr_set(errstr, errstr_size,
                  "%s was created in process %ld before a fork; this is process %ld: create clients "
                  "after the fork (in each worker)",
                  what, (long)st->pid, (long)getpid());
}
