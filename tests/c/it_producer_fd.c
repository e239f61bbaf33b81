/*
 * it_producer_fd.c: kn_producer_fd against a real broker
 * (KAFKA_BOOTSTRAP). The descriptor is signalled only once asked for
 * (core/producer/producer.c), and its promise is that delivery reports
 * queued before the first kn_producer_fd call make it readable at once:
 * an event loop that asks for the descriptor late still wakes for the
 * reports already waiting. After kn_producer_poll(p, 0) has served
 * them it is no longer readable; a report queued later makes it
 * readable again.
 */
#include "kn_test.h"

#include <poll.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "kafka_native.h"

typedef struct ctx {
    int delivered, failed;
} ctx;

static void on_delivery(kn_producer *p, const kn_delivery *d, void *opaque) {
    (void)p;
    ctx *x = opaque;
    if (kn_delivery_error(d))
        x->failed++;
    else
        x->delivered++;
}

static atomic_int reports_ready;

/* The readiness hook: the report queue went from empty to not empty
 * (network thread, producer lock held: a flag only). */
static void on_ready(kn_producer *p, void *opaque) {
    (void)p;
    (void)opaque;
    atomic_store(&reports_ready, 1);
}

static bool readable(int fd, int timeout_ms) {
    struct pollfd pfd = {.fd = fd, .events = POLLIN};
    int n = poll(&pfd, 1, timeout_ms);
    assert_true(n >= 0);
    return n == 1 && (pfd.revents & POLLIN);
}

static void send_one(kn_producer *p, const char *topic) {
    char es[512] = "";
    kn_record_out rec = KN_RECORD_OUT_INIT;
    rec.topic = topic;
    rec.partition = 0;
    rec.value = "v";
    rec.value_len = 1;
    if (kn_producer_send(p, &rec, es, sizeof es) != KN_OK)
        fail_msg("send: %s", es);
}

/* Waits (without serving anything) until the hook says reports wait. */
static void wait_reports(void) {
    int64_t until = kn_test_now_ms() + 30000;
    while (!atomic_load(&reports_ready)) {
        if (kn_test_now_ms() > until)
            fail_msg("no delivery report queued within 30 s");
        struct timespec ts = {0, 5 * 1000 * 1000};
        nanosleep(&ts, NULL);
    }
}

static void test_fd_readable_for_reports_queued_before(void **state) {
    (void)state;
    char topic[200], es[512] = "";
    snprintf(topic, sizeof topic, "%s", kn_test_topic("producer-fd"));
    kn_test_create_topic(topic, 1);
    kn_conf *conf = kn_conf_new(KN_CLIENT_PRODUCER);
    kn_test_conf_set(conf, "bootstrap.servers", kn_test_bootstrap());
    kn_test_conf_set(conf, "linger.ms", "0");
    ctx x = {0, 0};
    kn_producer *p = kn_producer_new(conf, on_delivery, &x, es, sizeof es);
    kn_conf_destroy(conf);
    if (!p)
        fail_msg("kn_producer_new: %s", es);
    kn_producer_set_ready_cb(p, on_ready, NULL);

    /* Reports queued, the descriptor never asked for yet. */
    atomic_store(&reports_ready, 0);
    send_one(p, topic);
    wait_reports();
    int fd = kn_producer_fd(p);
    assert_true(fd >= 0);
    assert_true(readable(fd, 0)); /* now, without waiting */
    assert_int_equal(x.delivered, 0);
    assert_int_equal(kn_producer_poll(p, 0), 1);
    assert_int_equal(x.delivered, 1);
    assert_false(readable(fd, 0)); /* served: reset */

    /* Asked for already: the next report signals it again. */
    atomic_store(&reports_ready, 0);
    send_one(p, topic);
    assert_true(readable(fd, 30000));
    assert_int_equal(kn_producer_fd(p), fd); /* the same descriptor */
    assert_int_equal(kn_producer_poll(p, 0), 1);
    assert_int_equal(x.delivered, 2);
    assert_int_equal(x.failed, 0);
    assert_false(readable(fd, 0));

    assert_int_equal(kn_producer_close(p, 10000), KN_OK);
    kn_producer_destroy(p);
}

int main(void) {
    kn_test_bootstrap();
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_fd_readable_for_reports_queued_before),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
