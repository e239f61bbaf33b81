/*
 * it_reentrancy.c: user callbacks that call back into their own client
 * (issue #14 item 9), against the real broker, meant to run under the
 * ASan build too. A delivery callback that flushes, polls or closes its
 * producer (inside poll, flush and close), an interceptor that sends,
 * a rebalance listener that polls, unsubscribes, closes or destroys
 * its consumer, a commit callback that closes it: each such call
 * returns KN_ERR__STATE (destroy: does nothing) instead of recursing or
 * freeing the handle under the call that runs the callback, and the
 * client goes on working afterwards.
 */
#include "kn_test.h"

#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "kafka_native.h"

static char topic[256];

static int setup(void **state) {
    (void)state;
    snprintf(topic, sizeof topic, "%s", kn_test_topic("reentry"));
    kn_test_create_topic(topic, 1);
    return 0;
}

/* ---- producer ------------------------------------------------------------ */

typedef struct pctx {
    kn_producer *p;
    int reports;
    int flush_rc, poll_rc, close_rc;
    int send_rc; /* a send from the delivery callback (allowed) */
    bool sent_from_cb;
} pctx;

static void reenter_dr(kn_producer *p, const kn_delivery *d, void *opaque) {
    pctx *x = opaque;
    (void)d;
    x->reports++;
    x->flush_rc = kn_producer_flush(p, 1000);
    x->poll_rc = kn_producer_poll(p, 0);
    x->close_rc = kn_producer_close(p, 0);
    if (!x->sent_from_cb) {
        x->sent_from_cb = true;
        kn_record_out rec = KN_RECORD_OUT_INIT;
        rec.topic = topic;
        rec.value = "from-callback";
        rec.value_len = 13;
        char es[256];
        x->send_rc = kn_producer_send(p, &rec, es, sizeof es);
    }
}

static kn_producer *new_producer(kn_delivery_cb *dr, void *opaque, const kn_producer_hooks *hooks) {
    kn_conf *conf = kn_conf_new(KN_CLIENT_PRODUCER);
    kn_test_conf_set(conf, "bootstrap.servers", kn_test_bootstrap());
    kn_test_conf_set(conf, "linger.ms", "0");
    char es[512];
    kn_producer *p = kn_producer_new_with_hooks(conf, dr, opaque, hooks, es, sizeof es);
    kn_conf_destroy(conf);
    if (!p)
        fail_msg("kn_producer_new: %s", es);
    return p;
}

static void send_n(kn_producer *p, int n) {
    char es[256];
    for (int i = 0; i < n; i++) {
        kn_record_out rec = KN_RECORD_OUT_INIT;
        rec.topic = topic;
        rec.value = "v";
        rec.value_len = 1;
        int rc = kn_producer_send(p, &rec, es, sizeof es);
        if (rc)
            fail_msg("send: %s: %s", kn_err_name(rc), es);
    }
}

static void test_delivery_callback_reenters_flush_and_close(void **state) {
    (void)state;
    pctx x = {0};
    kn_producer *p = new_producer(reenter_dr, &x, NULL);
    x.p = p;
    send_n(p, 5);
    /* reports served by flush: the callback's flush / poll / close refuse */
    assert_int_equal(kn_producer_flush(p, 30000), 0);
    assert_int_equal(x.reports, 6); /* 5, plus the one sent from the callback */
    assert_int_equal(x.flush_rc, KN_ERR__STATE);
    assert_int_equal(x.poll_rc, KN_ERR__STATE);
    assert_int_equal(x.close_rc, KN_ERR__STATE);
    assert_int_equal(x.send_rc, 0);
    /* still usable; reports served by close: the same from inside close */
    x.flush_rc = x.poll_rc = x.close_rc = 0;
    send_n(p, 3);
    assert_int_equal(kn_producer_close(p, 30000), 0);
    kn_producer_destroy(p);
    assert_int_equal(x.reports, 9);
    assert_int_equal(x.flush_rc, KN_ERR__STATE);
    assert_int_equal(x.close_rc, KN_ERR__STATE);
}

typedef struct ictx {
    kn_producer *p;
    int calls, send_rc;
} ictx;

static int resend_on_send(kn_producer *p, const kn_record_out *in, kn_record_out *out, void *opaque) {
    ictx *x = opaque;
    (void)out;
    x->calls++;
    char es[256];
    x->send_rc = kn_producer_send(p, in, es, sizeof es);
    return 0;
}

static void test_interceptor_send_is_refused(void **state) {
    (void)state;
    ictx x = {0};
    kn_producer_interceptor ic = {sizeof ic, resend_on_send, NULL, &x};
    const kn_producer_interceptor *icp = &ic;
    kn_producer_hooks hooks = {.size = sizeof hooks};
    hooks.interceptors = &icp;
    hooks.interceptor_count = 1;
    kn_producer *p = new_producer(NULL, NULL, &hooks);
    send_n(p, 1);
    assert_int_equal(x.calls, 1); /* no recursion */
    assert_int_equal(x.send_rc, KN_ERR__STATE);
    assert_int_equal(kn_producer_flush(p, 30000), 0);
    assert_int_equal(kn_producer_close(p, 5000), 0);
    kn_producer_destroy(p);
}

/* ---- consumer ------------------------------------------------------------ */

typedef struct cctx {
    int assigned, revoked, commits;
    int poll_rc, unsub_rc, close_rc;
    int revoke_close_rc;
    int commit_close_rc, commit_poll_rc;
} cctx;

static int reenter_listener(kn_consumer *c, kn_rebalance_event ev, const kn_topic_partition_list *parts,
                            void *opaque) {
    cctx *x = opaque;
    (void)parts;
    kn_records *r = NULL;
    char es[256];
    if (ev == KN_REBALANCE_ASSIGNED && kn_topic_partition_list_count(parts) > 0) {
        x->assigned++;
        x->poll_rc = kn_consumer_poll(c, 0, &r, es, sizeof es);
        kn_records_free(r);
        x->unsub_rc = kn_consumer_unsubscribe(c);
        x->close_rc = kn_consumer_close(c, -1);
        kn_consumer_destroy(c); /* refused: logged, nothing freed */
    } else if (ev == KN_REBALANCE_REVOKED) {
        x->revoked++;
        x->revoke_close_rc = kn_consumer_close(c, -1);
    }
    return 0;
}

static void reenter_commit(kn_consumer *c, int err, const kn_topic_partition_list *offsets, void *opaque) {
    cctx *x = opaque;
    (void)err;
    (void)offsets;
    kn_records *r = NULL;
    char es[256];
    x->commits++;
    x->commit_close_rc = kn_consumer_close(c, -1);
    x->commit_poll_rc = kn_consumer_poll(c, 0, &r, es, sizeof es);
    kn_records_free(r);
}

static void test_listener_and_commit_callback_reenter(void **state) {
    (void)state;
    kn_conf *conf = kn_conf_new(KN_CLIENT_CONSUMER);
    kn_test_conf_set(conf, "bootstrap.servers", kn_test_bootstrap());
    kn_test_conf_set(conf, "group.id", kn_test_topic("reentry-group"));
    kn_test_conf_set(conf, "group.protocol", "consumer");
    kn_test_conf_set(conf, "enable.auto.commit", "false");
    char es[512];
    kn_consumer *c = kn_consumer_new(conf, es, sizeof es);
    kn_conf_destroy(conf);
    if (!c)
        fail_msg("kn_consumer_new: %s", es);
    cctx x = {0};
    const char *topics[] = {topic};
    assert_int_equal(kn_consumer_subscribe(c, topics, 1, reenter_listener, &x), KN_OK);
    int64_t end = kn_test_now_ms() + 30000;
    while (!x.assigned && kn_test_now_ms() < end) {
        kn_records *r = NULL;
        int rc = kn_consumer_poll(c, 200, &r, es, sizeof es);
        if (rc != KN_OK)
            fail_msg("poll: %s: %s", kn_err_name(rc), es);
        kn_records_free(r);
    }
    assert_int_equal(x.assigned, 1);
    assert_int_equal(x.poll_rc, KN_ERR__STATE);
    assert_int_equal(x.unsub_rc, KN_ERR__STATE);
    assert_int_equal(x.close_rc, KN_ERR__STATE);
    /* still a working member */
    kn_topic_partition_list *sub = kn_consumer_subscription(c);
    assert_non_null(sub);
    kn_topic_partition_list_destroy(sub);
    kn_topic_partition_list *l = kn_topic_partition_list_new();
    kn_topic_partition_list_set_offset(l, (size_t)kn_topic_partition_list_add(l, topic, 0), 0);
    assert_int_equal(kn_consumer_commit_async(c, l, reenter_commit, &x), KN_OK);
    kn_topic_partition_list_destroy(l);
    end = kn_test_now_ms() + 30000;
    while (!x.commits && kn_test_now_ms() < end) {
        kn_records *r = NULL;
        assert_int_equal(kn_consumer_poll(c, 200, &r, es, sizeof es), KN_OK);
        kn_records_free(r);
    }
    assert_int_equal(x.commits, 1);
    assert_int_equal(x.commit_close_rc, KN_ERR__STATE);
    assert_int_equal(x.commit_poll_rc, KN_ERR__STATE);
    /* close runs REVOKED, whose close is refused; close goes on */
    assert_int_equal(kn_consumer_close(c, -1), KN_OK);
    assert_int_equal(x.revoked, 1);
    assert_int_equal(x.revoke_close_rc, KN_ERR__STATE);
    kn_consumer_destroy(c);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_delivery_callback_reenters_flush_and_close),
        cmocka_unit_test(test_interceptor_send_is_refused),
        cmocka_unit_test(test_listener_and_commit_callback_reenter),
    };
    return cmocka_run_group_tests(tests, setup, NULL);
}
