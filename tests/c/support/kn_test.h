/*
 * kn_test.h: helpers shared by the cmocka tests: where the real broker
 * is (KAFKA_BOOTSTRAP), where test data lives, unique topic names.
 */
#ifndef KN_TEST_H
#define KN_TEST_H
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "kafka_native.h"

/* The broker's bootstrap list. An integration test calls this first; it
 * fails the test (not skips it) when KAFKA_BOOTSTRAP is unset, so a
 * missing broker can never count as a pass. */
const char *kn_test_bootstrap(void);
/* Gate for the 3-node tests (label broker3): returns 0 when the broker
 * env says 3 nodes (KN_BROKER_NODES=3, from `tools/kafka/broker env`
 * after `start --nodes 3`). Otherwise prints what is missing and returns
 * the exit status main should return: 1 when KN_TEST_REQUIRE_NODES=3
 * (tools/test phase 2, where a missing cluster is a failure), else 77
 * (ctest: skipped, never passed). */
int kn_test_need_three_nodes(const char *test_name);
/* Whether the test broker runs KIP-848 consumer groups: KN_TEST_KIP848
 * (0 or 1) when set, else the broker's answer -- its finalized
 * group.version feature is 1 or more (Kafka 4.0+; a 3.9 broker has it
 * at 0) -- asked once with describe_features on KAFKA_BOOTSTRAP. */
bool kn_test_broker_kip848(void);
/* Skips the calling test (cmocka skip(): reported as skipped, never
 * passed) when the broker has no KIP-848 groups; the broker version
 * matrix (tools/test-versions) runs a 3.9 broker. */
void kn_test_need_kip848(void);
/* Path of a file under the source tree, e.g. "tests/data/x.txt".
 * Returns a static buffer. */
const char *kn_test_source_path(const char *rel);
/* A topic name unique to this process and call: "kn-test-<tag>-<pid>-<n>".
 * Returns a static buffer overwritten by the next call. */
const char *kn_test_topic(const char *tag);
/* Runs a shell command (printf-style); a non-zero exit fails the test
 * with the command line. */
void kn_test_run(const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 1, 2)))
#endif
    ;
/* Path of tools/kafka/java-tool (the Java reference tools). Static buffer. */
const char *kn_test_java_tool(void);
/* kn_conf_set that fails the test with the library's message. */
void kn_test_conf_set(kn_conf *conf, const char *key, const char *value);
/* Creates topic with the Java topics tool (replication 1); fails the
 * test if it cannot. */
void kn_test_create_topic(const char *topic, int partitions);
/* Monotonic milliseconds. */
int64_t kn_test_now_ms(void);

/* kill(pid, SIGSTOP) and wait (at most 5 s) until every thread of pid
 * shows as stopped in /proc: the signal only queues the stop, and a JVM
 * thread already running can still answer a request (seen under load:
 * records acknowledged "while the broker was paused"). 0, or -1 with
 * errno when the kill failed or the threads did not all stop in time. */
int kn_test_sigstop(int pid);

#endif
