/*
 * secure.h: what the tests against the broker's secured listeners
 * (it_sasl, it_oauthbearer, it_oauthbearer_cb) share: the env gate,
 * the PEM trust store, the "v<i>" produce / group consume round trip
 * and the producer thread that runs through re-authentications while
 * the test consumes.
 */
#ifndef KN_TEST_SECURE_H
#define KN_TEST_SECURE_H
#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "kafka_native.h"

/* getenv, with an empty value read as unset. */
const char *kn_secure_env(const char *name);
/* Gate for main: 0 when every name in the NULL-terminated list is set;
 * else prints which are missing (as test) and returns the exit status:
 * 1 when KN_TEST_REQUIRE_SECURE=1 (a missing listener is a failure),
 * else 77 (skipped, never passed). */
int kn_secure_need(const char *test, const char *const *names);
/* Sets the harness CA (KN_TLS_DIR/ca.pem) as the PEM trust store. */
void kn_secure_conf_trust(kn_conf *conf);

/* A producer from conf (destroyed here) whose credentials the broker
 * or the token source refuses: its first send, to topic, must fail with
 * KN_ERR__AUTHENTICATION within 2 s of creating it. es gets the
 * message, *tookp the ms it took. Returns the producer (the caller's). */
kn_producer *kn_secure_denied_send(kn_conf *conf, const char *topic, char *es, size_t esn, int64_t *tookp);

/* Delivery counts; atomics because a producer thread's counts are read
 * by the test's thread. */
typedef struct kn_secure_dr {
    atomic_int ok, failed;
} kn_secure_dr;
/* Delivery callback counting into a kn_secure_dr (the opaque). */
void kn_secure_on_dr(kn_producer *p, const kn_delivery *d, void *opaque);
/* Sends value "v<i>" to topic partition 0; returns send's code. */
int kn_secure_send(kn_producer *p, const char *topic, int i, char *es, size_t esn);
/* Checks records against v<*next>, v<*next+1>, ...; fails the test on
 * a record lost, duplicated or reordered. */
void kn_secure_check_records(kn_records *r, int *next);
/* Sets group.id, auto.offset.reset=earliest, enable.auto.commit=false,
 * creates the consumer and subscribes it to topic; fails the test if
 * either fails. conf stays the caller's. */
kn_consumer *kn_secure_group_consumer(kn_conf *conf, const char *group, const char *topic);
/* Round trip: a producer made from pconf sends v<from>..v<from+n-1>
 * (all acknowledged), a group member made from cconf reads them in
 * order within 60 s, commits, and saw no failed connect. The confs
 * stay the caller's. */
void kn_secure_roundtrip(kn_conf *pconf, kn_conf *cconf, const char *topic, const char *group, int from,
                         int n);

/* A producer on its own thread (that thread is its application thread):
 * make_conf(ctx) runs there; the producer is idempotent with linger.ms=5
 * and sends bursts of burst records every pause_ms for run_ms, then
 * flushes. err is set when it could not. */
typedef struct kn_secure_prod {
    kn_conf *(*make_conf)(void *ctx);
    void *ctx;
    const char *topic;
    int64_t run_ms;
    int burst, pause_ms;
    int sent;
    kn_secure_dr st;
    kn_producer_stats stats;
    char err[512];
} kn_secure_prod;
/* Runs prod on a new thread while c consumes (polls of 200 ms) for at
 * most cap_ms: the thread is joined after join_ms, and consuming ends
 * once past min_ms with every sent record read. Fails the test on a
 * poll error, a record out of order or a producer error. Returns how
 * many records were read. */
int kn_secure_consume_while_producing(kn_consumer *c, kn_secure_prod *prod, int64_t cap_ms, int64_t join_ms,
                                      int64_t min_ms);

#endif
