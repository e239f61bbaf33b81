/*
 * silent_cluster.h: unreachable brokers for the bounded-close tests
 * (test_close_bounded.c, spec/close_bounded_spec.lua through the
 * kn_silent_cluster program). It owns three kinds of dead peer:
 *  - a closed port: nothing listens, every connect is refused;
 *  - a silent listener: the kernel completes the TCP handshake (the
 *    listen backlog), nobody ever accepts, reads or answers;
 *  - a half-alive cluster: a fake node 1 that answers ApiVersions,
 *    Metadata and FindCoordinator, and names node 2 -- a silent
 *    listener -- as the leader of every partition of topic "t" (2
 *    partitions), as every group and transaction coordinator and as the
 *    controller. Clients bootstrap, learn the cluster, then hang on
 *    node 2.
 */
#ifndef KN_TEST_SILENT_CLUSTER_H
#define KN_TEST_SILENT_CLUSTER_H

/* A loopback port nothing listens on (bound once, then closed). */
int kn_test_closed_port(void);

typedef struct kn_silent_listener kn_silent_listener;
/* Listens on 127.0.0.1 (a free port, a large backlog) and never accepts. */
kn_silent_listener *kn_silent_listener_start(void);
int kn_silent_listener_port(const kn_silent_listener *sl);
void kn_silent_listener_stop(kn_silent_listener *sl);

typedef struct kn_silent_cluster kn_silent_cluster;
kn_silent_cluster *kn_silent_cluster_start(void);
/* node 1's port: the bootstrap */
int kn_silent_cluster_port(const kn_silent_cluster *sc);
/* Stops node 1 (its thread and connections) and node 2; frees sc. */
void kn_silent_cluster_stop(kn_silent_cluster *sc);

#endif
