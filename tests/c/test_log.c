/*
 * test_log.c: the log handler (kn_conf_set_log_cb) and the bounded log
 * queue: FIFO order, the capacity bound with its drop count, message
 * truncation, argument checks, concurrent pushers, and a real client's
 * network-thread records reaching a handler (an admin client pointed at
 * a closed loopback port logs its failed connects) with the client id
 * in front, copied through kn_conf_dup. And the handler swap: once
 * kn_logger_set_handler returns, the old handler is not running (so its
 * opaque may be freed), while another thread keeps logging.
 */
#include "kn_test.h"

#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "kafka_native.h"
#include "log.h"

#include <stdatomic.h>

static void test_queue_fifo_bound_and_drops(void **state) {
    (void)state;
    kn_log_queue *q = kn_log_queue_new(3);
    assert_non_null(q);
    int level;
    char buf[KN_LOG_MESSAGE_MAX];
    assert_int_equal(kn_log_queue_pop(q, &level, buf, sizeof buf), 0);
    kn_log_queue_push(KN_LOG_WARN, "one", q);
    kn_log_queue_push(KN_LOG_ERROR, "two", q);
    kn_log_queue_push(KN_LOG_DEBUG, "three", q);
    kn_log_queue_push(KN_LOG_INFO, "four (dropped)", q);
    kn_log_queue_push(KN_LOG_INFO, "five (dropped)", q);
    assert_int_equal(kn_log_queue_count(q), 3);
    assert_int_equal(kn_log_queue_take_dropped(q), 2);
    assert_int_equal(kn_log_queue_take_dropped(q), 0);
    assert_int_equal(kn_log_queue_pop(q, &level, buf, sizeof buf), 1);
    assert_int_equal(level, KN_LOG_WARN);
    assert_string_equal(buf, "one");
    kn_log_queue_push(KN_LOG_INFO, "six", q); /* room again */
    const char *want[] = {"two", "three", "six"};
    const int want_level[] = {KN_LOG_ERROR, KN_LOG_DEBUG, KN_LOG_INFO};
    for (int i = 0; i < 3; i++) {
        assert_int_equal(kn_log_queue_pop(q, &level, buf, sizeof buf), 1);
        assert_string_equal(buf, want[i]);
        assert_int_equal(level, want_level[i]);
    }
    assert_int_equal(kn_log_queue_count(q), 0);
    assert_int_equal(kn_log_queue_pop(q, &level, buf, sizeof buf), 0);
    /* Records still queued are freed with the queue (ASan: no leak). */
    kn_log_queue_push(KN_LOG_INFO, "left behind", q);
    kn_log_queue_destroy(q);
    kn_log_queue_destroy(NULL);
}

static void test_queue_truncates(void **state) {
    (void)state;
    kn_log_queue *q = kn_log_queue_new(2);
    assert_non_null(q);
    char big[3000];
    memset(big, 'x', sizeof big - 1);
    big[sizeof big - 1] = '\0';
    kn_log_queue_push(KN_LOG_INFO, big, q);
    kn_log_queue_push(KN_LOG_INFO, "short", q);
    char buf[KN_LOG_MESSAGE_MAX], small[4];
    int level;
    assert_int_equal(kn_log_queue_pop(q, &level, buf, sizeof buf), 1);
    assert_int_equal(strlen(buf), KN_LOG_MESSAGE_MAX - 1);
    assert_int_equal(kn_log_queue_pop(q, &level, small, sizeof small), 1);
    assert_string_equal(small, "sho");
    kn_log_queue_destroy(q);
}

static void *pusher(void *arg) {
    for (int i = 0; i < 1000; i++)
        kn_log_queue_push(KN_LOG_INFO, "concurrent", arg);
    return NULL;
}

/* Four threads push 4,000 records into room for 1,000: every record is
 * either queued or counted as dropped. */
static void test_queue_concurrent(void **state) {
    (void)state;
    kn_log_queue *q = kn_log_queue_new(1000);
    assert_non_null(q);
    pthread_t th[4];
    for (int i = 0; i < 4; i++)
        assert_int_equal(pthread_create(&th[i], NULL, pusher, q), 0);
    size_t popped = 0;
    char buf[64];
    for (int i = 0; i < 4; i++)
        assert_int_equal(pthread_join(th[i], NULL), 0);
    while (kn_log_queue_pop(q, NULL, buf, sizeof buf))
        popped++;
    assert_int_equal(popped + kn_log_queue_take_dropped(q), 4000);
    assert_int_equal(popped, 1000);
    kn_log_queue_destroy(q);
}

static void test_set_log_cb_arguments(void **state) {
    (void)state;
    kn_conf *conf = kn_conf_new(KN_CLIENT_ADMIN);
    assert_non_null(conf);
    assert_int_equal(kn_conf_set_log_cb(NULL, -1, kn_log_queue_push, NULL), KN_ERR__INVALID_ARG);
    assert_int_equal(kn_conf_set_log_cb(conf, 4, kn_log_queue_push, NULL), KN_ERR__INVALID_ARG);
    assert_int_equal(kn_conf_set_log_cb(conf, -2, kn_log_queue_push, NULL), KN_ERR__INVALID_ARG);
    assert_int_equal(kn_conf_set_log_cb(conf, KN_LOG_DEBUG, kn_log_queue_push, NULL), KN_OK);
    assert_int_equal(kn_conf_set_log_cb(conf, -1, NULL, NULL), KN_OK);
    assert_string_equal(kn_log_level_name(KN_LOG_ERROR), "ERROR");
    assert_string_equal(kn_log_level_name(KN_LOG_DEBUG), "DEBUG");
    kn_conf_destroy(conf);
}

/* A real client's network thread logs into the queue: an admin client
 * whose only bootstrap server refuses connections (a port nothing
 * listens on) logs its failed connects at WARN/DEBUG. */
static void test_client_logs_reach_the_handler(void **state) {
    (void)state;
    kn_log_queue *q = kn_log_queue_new(100);
    assert_non_null(q);
    kn_conf *conf = kn_conf_new(KN_CLIENT_ADMIN);
    char err[512] = "";
    assert_int_equal(kn_conf_set(conf, "bootstrap.servers", "127.0.0.1:1", err, sizeof err), KN_OK);
    assert_int_equal(kn_conf_set(conf, "client.id", "log-test", err, sizeof err), KN_OK);
    assert_int_equal(kn_conf_set_log_cb(conf, KN_LOG_DEBUG, kn_log_queue_push, q), KN_OK);
    /* The handler travels with copies of the conf (clients copy it). */
    kn_conf *copy = kn_conf_dup(conf);
    kn_conf_destroy(conf);
    kn_admin *admin = kn_admin_new(copy, err, sizeof err);
    kn_conf_destroy(copy);
    assert_non_null(admin);
    /* Bounded: up to 10 s for the first record. */
    struct timespec ts = {0, 10 * 1000 * 1000};
    for (int i = 0; i < 1000 && kn_log_queue_count(q) == 0; i++)
        nanosleep(&ts, NULL);
    kn_admin_destroy(admin);
    int level = -1;
    char buf[KN_LOG_MESSAGE_MAX];
    assert_int_equal(kn_log_queue_pop(q, &level, buf, sizeof buf), 1);
    assert_true(level >= KN_LOG_ERROR && level <= KN_LOG_DEBUG);
    if (strncmp(buf, "log-test: ", 10) != 0)
        fail_msg("record lacks the client id: %s", buf);
    kn_log_queue_destroy(q);
}

typedef struct swap_ctx {
    atomic_int valid; /* cleared as the opaque is "freed" */
    atomic_int bad;   /* calls that saw it freed */
    atomic_int calls;
} swap_ctx;

typedef struct swap_thread {
    kn_logger *lg;
    atomic_int stop;
} swap_thread;

static void slow_handler(int level, const char *msg, void *opaque) {
    (void)level;
    (void)msg;
    swap_ctx *x = opaque;
    atomic_fetch_add(&x->calls, 1);
    struct timespec ts = {0, 2 * 1000 * 1000};
    nanosleep(&ts, NULL); /* a handler busy when the swap comes */
    if (!atomic_load(&x->valid))
        atomic_fetch_add(&x->bad, 1);
}

static void *keep_logging(void *arg) {
    swap_thread *t = arg;
    while (!atomic_load(&t->stop))
        kn_log(t->lg, KN_LOG_ERROR, "swap test line");
    return NULL;
}

/* Issue #14 item 10: the swap is synchronised with calls in progress. */
static void test_handler_swap_waits_for_running_calls(void **state) {
    (void)state;
    kn_logger lg;
    kn_logger_init(&lg, "swap");
    int bad = 0, calls = 0;
    for (int round = 0; round < 10; round++) {
        swap_ctx x;
        atomic_init(&x.valid, 1);
        atomic_init(&x.bad, 0);
        atomic_init(&x.calls, 0);
        kn_logger_set_handler(&lg, slow_handler, &x);
        swap_thread t = {&lg, 0};
        pthread_t th;
        pthread_create(&th, NULL, keep_logging, &t);
        while (atomic_load(&x.calls) < 2)
            sched_yield();
        kn_logger_set_handler(&lg, NULL, NULL);
        atomic_store(&x.valid, 0); /* the caller frees the opaque now */
        atomic_store(&t.stop, 1);
        pthread_join(th, NULL);
        bad += atomic_load(&x.bad);
        calls += atomic_load(&x.calls);
    }
    kn_logger_destroy(&lg);
    print_message("%d handler calls, %d ran after the swap returned\n", calls, bad);
    assert_int_equal(bad, 0);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_queue_fifo_bound_and_drops),
        cmocka_unit_test(test_queue_truncates),
        cmocka_unit_test(test_queue_concurrent),
        cmocka_unit_test(test_set_log_cb_arguments),
        cmocka_unit_test(test_client_logs_reach_the_handler),
        cmocka_unit_test(test_handler_swap_waits_for_running_calls),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
