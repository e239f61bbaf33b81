/*
 * test_lifecycle.c: the one lifecycle every client shares (docs/
 * architecture.md, "Lifecycle"): kn_<client>_new, kn_<client>_close(h,
 * timeout_ms) (idempotent; the handle stays valid and later calls fail
 * with KN_ERR__CLOSED), kn_<client>_destroy(h) (frees; closes first when
 * that was not done); NULL is a no-op for both. And the deprecated old
 * name kn_consumer_close_timeout still works. No broker: the clients
 * point at a closed port and close with nothing sent.
 */
#include "kn_test.h"

#include <string.h>

static kn_conf *conf_for(kn_client_type type) {
    kn_conf *conf = kn_conf_new(type);
    assert_non_null(conf);
    kn_test_conf_set(conf, "bootstrap.servers", "127.0.0.1:1");
    if (type == KN_CLIENT_CONSUMER)
        kn_test_conf_set(conf, "group.id", "kn-test-lifecycle");
    return conf;
}

static void test_null_is_a_noop(void **state) {
    (void)state;
    assert_int_equal(kn_producer_close(NULL, 0), KN_OK);
    assert_int_equal(kn_consumer_close(NULL, 0), KN_OK);
    assert_int_equal(kn_admin_close(NULL, 0), KN_OK);
    kn_producer_destroy(NULL);
    kn_consumer_destroy(NULL);
    kn_admin_destroy(NULL);
}

static void test_producer(void **state) {
    (void)state;
    kn_conf *conf = conf_for(KN_CLIENT_PRODUCER);
    char err[256];
    kn_producer *p = kn_producer_new(conf, NULL, NULL, err, sizeof err);
    assert_non_null(p);
    assert_int_equal(kn_producer_close(p, 0), KN_OK);
    assert_int_equal(kn_producer_close(p, 0), KN_OK); /* idempotent */
    /* Still a valid handle: reads work, actions say closed. */
    kn_record_out rec = KN_RECORD_OUT_INIT;
    rec.topic = "t";
    assert_int_equal(kn_producer_send(p, &rec, err, sizeof err), KN_ERR__CLOSED);
    assert_int_equal(kn_producer_poll(p, 0), KN_ERR__CLOSED);
    assert_int_equal(kn_producer_flush(p, 0), KN_ERR__CLOSED);
    assert_int_equal(kn_producer_outstanding(p), 0);
    kn_producer_stats st = {.size = sizeof st};
    assert_int_equal(kn_producer_get_stats(p, &st), KN_OK);
    assert_int_equal(kn_producer_fatal_error(p, err, sizeof err), 0);
    kn_producer_destroy(p);

    /* destroy alone closes first. */
    p = kn_producer_new(conf, NULL, NULL, err, sizeof err);
    assert_non_null(p);
    kn_producer_destroy(p);
    kn_conf_destroy(conf);
}

static void test_consumer(void **state) {
    (void)state;
    kn_conf *conf = conf_for(KN_CLIENT_CONSUMER);
    char err[256];
    kn_consumer *c = kn_consumer_new(conf, err, sizeof err);
    assert_non_null(c);
    assert_int_equal(kn_consumer_close(c, 0), KN_OK);
    assert_int_equal(kn_consumer_close(c, 0), KN_OK);
    kn_records *recs = NULL;
    assert_int_equal(kn_consumer_poll(c, 0, &recs, err, sizeof err), KN_ERR__CLOSED);
    assert_null(recs);
    kn_consumer_wakeup(c); /* any thread, any time before destroy */
    kn_consumer_stats st = {.size = sizeof st};
    assert_int_equal(kn_consumer_get_stats(c, &st), KN_OK);
    kn_consumer_destroy(c);

    c = kn_consumer_new(conf, err, sizeof err);
    assert_non_null(c);
    kn_consumer_destroy(c);

    /* The deprecated old name is the same call. */
    c = kn_consumer_new(conf, err, sizeof err);
    assert_non_null(c);
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
    assert_int_equal(kn_consumer_close_timeout(c, 0), KN_OK);
#pragma GCC diagnostic pop
    assert_int_equal(kn_consumer_poll(c, 0, &recs, err, sizeof err), KN_ERR__CLOSED);
    kn_consumer_destroy(c);
    kn_conf_destroy(conf);
}

static void test_admin(void **state) {
    (void)state;
    kn_conf *conf = conf_for(KN_CLIENT_ADMIN);
    char err[256];
    kn_admin *a = kn_admin_new(conf, err, sizeof err);
    assert_non_null(a);
    assert_int_equal(kn_admin_close(a, 0), KN_OK);
    assert_int_equal(kn_admin_close(a, 0), KN_OK);
    kn_topic_list *list = NULL;
    int64_t t0 = kn_test_now_ms();
    int rc = kn_admin_list_topics(a, 0, 30000, &list, err, sizeof err);
    if (rc != KN_ERR__CLOSED)
        fail_msg("list_topics after close: %s (%s), expected _CLOSED", kn_err_name(rc), err);
    assert_null(list);
    /* At once, not after the 30 s budget (a generous bound). */
    assert_true(kn_test_now_ms() - t0 < 20000);
    kn_admin_destroy(a);

    a = kn_admin_new(conf, err, sizeof err);
    assert_non_null(a);
    kn_admin_destroy(a);
    kn_conf_destroy(conf);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_null_is_a_noop),
        cmocka_unit_test(test_producer),
        cmocka_unit_test(test_consumer),
        cmocka_unit_test(test_admin),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
