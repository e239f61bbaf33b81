/*
 * resources.h: what a client leaves behind in the test process -- its
 * threads (/proc/self/task) and file descriptors (/proc/self/fd) -- for
 * the tests that prove close leaks neither (test_close_bounded.c,
 * it_close_bounded.c).
 */
#ifndef KN_TEST_RESOURCES_H
#define KN_TEST_RESOURCES_H

typedef struct kn_test_resources {
    int threads, fds;
} kn_test_resources;

kn_test_resources kn_test_resources_now(void);
/* Fails the test unless threads and fds are back to before, waiting up
 * to 5 s first (a fake peer in this process closes its end of a
 * connection on its own thread, a moment after the client's close).
 * Prints both counts with what; lists /proc/self/fd on a mismatch. */
void kn_test_resources_assert_back(kn_test_resources before, const char *what);

#endif
