/*
 * kn_silent_cluster: the unreachable brokers of support/silent_cluster.h
 * as a process, for spec/close_bounded_spec.lua (the Lua binding has
 * no sockets of its own). Prints one line,
 *   refused=PORT silent=PORT half=PORT pid=PID
 * then serves until SIGTERM, or exits on its own after 600 s so a spec
 * that died never leaves it behind for long.
 */
#include "kn_test.h"

#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <unistd.h>

#include "silent_cluster.h"

int main(void) {
    /* Blocked before the fake's thread starts, so it inherits the mask
     * and sigwait below takes the signal. */
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGTERM);
    sigaddset(&set, SIGALRM);
    pthread_sigmask(SIG_BLOCK, &set, NULL);
    kn_silent_listener *sl = kn_silent_listener_start();
    kn_silent_cluster *sc = kn_silent_cluster_start();
    printf("refused=%d silent=%d half=%d pid=%d\n", kn_test_closed_port(), kn_silent_listener_port(sl),
           kn_silent_cluster_port(sc), (int)getpid());
    fflush(stdout);
    alarm(600);
    int sig;
    sigwait(&set, &sig);
    kn_silent_cluster_stop(sc);
    kn_silent_listener_stop(sl);
    return 0;
}
