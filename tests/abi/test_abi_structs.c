/*
 * test_abi_structs.c: the size-versioned public structs, exercised
 * through the shared library as a program built against an older or a
 * newer header would use them. Linked against libkafka-native.so (not
 * the static library), so it is also the proof that a program links and
 * runs against the .so with only the public API.
 *
 * "Older" structs are declared here the way a previous header would
 * have declared them (shorter), and placed at the very end of a heap
 * block of exactly their size followed by nothing, plus a canary copy in
 * a larger buffer: a library that wrote or read past the caller's size
 * would trip AddressSanitizer (in the ASan build) or the canary.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "kafka_native.h"

#define CANARY 0xA5

/* kn_consumer_stats as an older header had it: the first two counters. */
typedef struct old_consumer_stats {
    size_t size;
    int64_t polls;
    int64_t records;
} old_consumer_stats;

/* kn_producer_stats as an older header had it. */
typedef struct old_producer_stats {
    size_t size;
    int64_t records_sent;
} old_producer_stats;

/* kn_producer_hooks as an older header had it: no interceptors yet. */
typedef struct old_producer_hooks {
    size_t size;
    kn_partitioner_cb *partitioner;
    void *partitioner_opaque;
} old_producer_hooks;

static kn_conf *conf_for(kn_client_type type) {
    kn_conf *conf = kn_conf_new(type);
    assert_non_null(conf);
    char err[256];
    assert_int_equal(kn_conf_set(conf, "bootstrap.servers", "127.0.0.1:1", err, sizeof err), KN_OK);
    return conf;
}

static void assert_canary(const unsigned char *p, size_t n) {
    for (size_t i = 0; i < n; i++)
        if (p[i] != CANARY)
            fail_msg("byte %zu past the caller's struct was written", i);
}

static void test_stats_older_caller(void **state) {
    (void)state;
    kn_conf *conf = conf_for(KN_CLIENT_CONSUMER);
    char err[256];
    kn_consumer *c = kn_consumer_new(conf, err, sizeof err);
    assert_non_null(c);

    /* Exactly the old size on the heap: ASan sees any write past it. */
    old_consumer_stats *old = malloc(sizeof *old);
    assert_non_null(old);
    old->size = sizeof *old;
    old->polls = -1;
    assert_int_equal(kn_consumer_get_stats(c, (kn_consumer_stats *)old), KN_OK);
    assert_int_equal(old->size, sizeof *old);
    assert_int_equal(old->polls, 0); /* written: it was -1 */
    free(old);

    /* The same with a canary behind it (builds without ASan). */
    unsigned char buf[sizeof(old_consumer_stats) + 64];
    memset(buf, CANARY, sizeof buf);
    old_consumer_stats o2 = {.size = sizeof o2};
    memcpy(buf, &o2, sizeof o2);
    assert_int_equal(kn_consumer_get_stats(c, (kn_consumer_stats *)(void *)buf), KN_OK);
    assert_canary(buf + sizeof o2, sizeof buf - sizeof o2);

    /* Smaller than the size field itself: refused, nothing written. */
    size_t tiny = 4;
    assert_int_equal(kn_consumer_get_stats(c, (kn_consumer_stats *)(void *)&tiny), KN_ERR__INVALID_ARG);
    assert_int_equal(tiny, 4);
    kn_consumer_close(c, 0);
    kn_consumer_destroy(c);
    kn_conf_destroy(conf);

    conf = conf_for(KN_CLIENT_PRODUCER);
    kn_producer *p = kn_producer_new(conf, NULL, NULL, err, sizeof err);
    assert_non_null(p);
    old_producer_stats *op = malloc(sizeof *op);
    assert_non_null(op);
    op->size = sizeof *op;
    assert_int_equal(kn_producer_get_stats(p, (kn_producer_stats *)op), KN_OK);
    assert_int_equal(op->size, sizeof *op);
    assert_int_equal(op->records_sent, 0);
    free(op);
    kn_producer_close(p, 0);
    kn_producer_destroy(p);
    kn_conf_destroy(conf);
}

static void test_stats_newer_caller(void **state) {
    (void)state;
    /* A newer header with one more counter: the library fills what it
     * knows, leaves the rest, and says how much it wrote. */
    struct newer {
        kn_consumer_stats known;
        int64_t future_counter;
    } st;
    memset(&st, 0, sizeof st);
    st.known.size = sizeof st;
    st.future_counter = 12345;
    kn_conf *conf = conf_for(KN_CLIENT_CONSUMER);
    char err[256];
    kn_consumer *c = kn_consumer_new(conf, err, sizeof err);
    assert_non_null(c);
    assert_int_equal(kn_consumer_get_stats(c, &st.known), KN_OK);
    assert_int_equal(st.known.size, sizeof(kn_consumer_stats));
    assert_int_equal(st.future_counter, 12345);
    assert_true(KN_STRUCT_HAS(&st.known, kn_consumer_stats, reauthentications));
    kn_consumer_destroy(c);
    kn_conf_destroy(conf);
}

static void test_hooks_older_caller(void **state) {
    (void)state;
    kn_conf *conf = conf_for(KN_CLIENT_PRODUCER);
    char err[256];
    /* Heap block of exactly the old size: a library reading the newer
     * fields (interceptors, interceptor_count) would read past it. */
    old_producer_hooks *old = malloc(sizeof *old);
    assert_non_null(old);
    old->size = sizeof *old;
    old->partitioner = NULL;
    old->partitioner_opaque = NULL;
    kn_producer *p = kn_producer_new_with_hooks(conf, NULL, NULL, (const kn_producer_hooks *)old, err, sizeof err);
    if (!p)
        fail_msg("old hooks refused: %s (%s)", kn_err_name(kn_last_error()), err);
    kn_producer_destroy(p);
    free(old);

    /* And with garbage where the newer fields would be: not read. */
    unsigned char buf[sizeof(kn_producer_hooks) + 16];
    memset(buf, CANARY, sizeof buf);
    old_producer_hooks o2 = {.size = sizeof o2};
    memcpy(buf, &o2, sizeof o2);
    p = kn_producer_new_with_hooks(conf, NULL, NULL, (const kn_producer_hooks *)(void *)buf, err, sizeof err);
    if (!p)
        fail_msg("old hooks with garbage behind refused: %s (%s)", kn_err_name(kn_last_error()), err);
    kn_producer_destroy(p);
    kn_conf_destroy(conf);
}

static void test_hooks_newer_caller(void **state) {
    (void)state;
    kn_conf *conf = conf_for(KN_CLIENT_PRODUCER);
    char err[256];
    struct newer {
        kn_producer_hooks known;
        void *future_hook;
    } h;
    memset(&h, 0, sizeof h);
    h.known.size = sizeof h;
    /* An unknown field left at zero (its default): accepted. */
    kn_producer *p = kn_producer_new_with_hooks(conf, NULL, NULL, &h.known, err, sizeof err);
    assert_non_null(p);
    kn_producer_destroy(p);
    /* Set: this library cannot honour it, and says so. */
    h.future_hook = &h;
    assert_null(kn_producer_new_with_hooks(conf, NULL, NULL, &h.known, err, sizeof err));
    assert_int_equal(kn_last_error(), KN_ERR__UNSUPPORTED);
    assert_non_null(strstr(err, "kn_producer_hooks"));
    /* An unset (zero) size is refused, not guessed. */
    kn_producer_hooks zero;
    memset(&zero, 0, sizeof zero);
    assert_null(kn_producer_new_with_hooks(conf, NULL, NULL, &zero, err, sizeof err));
    assert_int_equal(kn_last_error(), KN_ERR__INVALID_ARG);
    /* An interceptor with an unset size too. */
    kn_producer_interceptor ic;
    memset(&ic, 0, sizeof ic);
    const kn_producer_interceptor *icp = &ic;
    kn_producer_hooks hooks = {.size = sizeof hooks, .interceptors = &icp, .interceptor_count = 1};
    assert_null(kn_producer_new_with_hooks(conf, NULL, NULL, &hooks, err, sizeof err));
    assert_int_equal(kn_last_error(), KN_ERR__INVALID_ARG);
    assert_non_null(strstr(err, "kn_producer_interceptor"));
    ic.size = sizeof ic;
    p = kn_producer_new_with_hooks(conf, NULL, NULL, &hooks, err, sizeof err);
    assert_non_null(p);
    kn_producer_destroy(p);
    kn_conf_destroy(conf);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_stats_older_caller),
        cmocka_unit_test(test_stats_newer_caller),
        cmocka_unit_test(test_hooks_older_caller),
        cmocka_unit_test(test_hooks_newer_caller),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
