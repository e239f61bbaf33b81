/*
 * test_close_bounded.c: every client closed while its brokers are
 * unreachable returns within its timeout and leaves no thread or file
 * descriptor behind (issue #19, "bounded close"). Three dead clusters
 * (support/silent_cluster.h):
 *  - refused: bootstrap.servers names a port nothing listens on;
 *  - silent: a listener that completes the TCP handshake and never
 *    answers (a hung broker, a black-holed network);
 *  - half: node 1 answers ApiVersions, Metadata and FindCoordinator and
 *    names node 2, silent, as every leader, coordinator and the
 *    controller (the group or transaction coordinator unreachable,
 *    the rest of the cluster alive).
 * For each: a producer with records accepted, a transactional producer,
 * a consumer with assigned partitions, a classic group member and a
 * KIP-848 member (both with enable.auto.commit, so close wants to
 * commit and leave), and an admin client with operations timed out.
 * The real-broker side (a broker of its own stopped under connected
 * clients) is it_close_bounded.c; the Lua binding's is
 * spec/close_bounded_spec.lua.
 */
#include "kn_test.h"

#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "resources.h"
#include "silent_cluster.h"

/* The close timeout every case passes, and what scheduling on a loaded
 * two-core machine may add to it before the call counts as unbounded
 * (the default request.timeout.ms, 30 s, is far beyond both). */
#define CLOSE_MS 1500
#define SLACK_MS 750

enum where { REFUSED, SILENT, HALF };
static const char *where_name[] = {"refused", "silent", "half"};

typedef struct dead {
    enum where where;
    kn_silent_listener *sl;
    kn_silent_cluster *sc;
    char bootstrap[64];
} dead;

static void dead_start(dead *d, enum where w) {
    memset(d, 0, sizeof *d);
    d->where = w;
    int port;
    if (w == REFUSED) {
        port = kn_test_closed_port();
    } else if (w == SILENT) {
        d->sl = kn_silent_listener_start();
        port = kn_silent_listener_port(d->sl);
    } else {
        d->sc = kn_silent_cluster_start();
        port = kn_silent_cluster_port(d->sc);
    }
    snprintf(d->bootstrap, sizeof d->bootstrap, "127.0.0.1:%d", port);
}

static void dead_stop(dead *d) {
    kn_silent_listener_stop(d->sl);
    kn_silent_cluster_stop(d->sc);
}

static void assert_bounded(int64_t took, int timeout_ms, const char *what) {
    print_message("%s: close returned after %lld ms (timeout %d)\n", what, (long long)took, timeout_ms);
    assert_true(took <= timeout_ms + SLACK_MS);
}

static kn_conf *conf_for(kn_client_type type, const dead *d) {
    kn_conf *conf = kn_conf_new(type);
    kn_test_conf_set(conf, "bootstrap.servers", d->bootstrap);
    /* Short waits everywhere but in close, so a case takes seconds; what
     * is measured is close, against its own timeout. */
    kn_test_conf_set(conf, "reconnect.backoff.ms", "20");
    kn_test_conf_set(conf, "reconnect.backoff.max.ms", "200");
    return conf;
}

/* ---- producer ------------------------------------------------------ */

static int delivered;

static void on_delivery(kn_producer *p, const kn_delivery *d, void *opaque) {
    (void)p;
    (void)d;
    (void)opaque;
    delivered++;
}

static void producer_case(enum where w, bool transactional) {
    dead d;
    dead_start(&d, w);
    char what[96];
    snprintf(what, sizeof what, "%sproducer, %s", transactional ? "transactional " : "", where_name[w]);
    kn_test_resources before = kn_test_resources_now();
    kn_conf *conf = conf_for(KN_CLIENT_PRODUCER, &d);
    kn_test_conf_set(conf, "max.block.ms", "500");
    if (transactional)
        kn_test_conf_set(conf, "transactional.id", "close-bounded");
    char es[512];
    kn_producer *p = kn_producer_new(conf, on_delivery, NULL, es, sizeof es);
    kn_conf_destroy(conf);
    if (!p)
        fail_msg("kn_producer_new: %s", es);
    delivered = 0;
    int accepted = 0;
    if (transactional) {
        /* The coordinator never answers: init times out. */
        int rc = kn_producer_init_transactions(p, 500, es, sizeof es);
        print_message("%s: init_transactions: %s %s\n", what, kn_err_name(rc), es);
        assert_int_not_equal(rc, KN_OK);
    } else {
        int n = w == HALF ? 5 : 1; /* a refused / silent send blocks max.block.ms */
        for (int i = 0; i < n; i++) {
            kn_record_out r = KN_RECORD_OUT_INIT;
            r.topic = "t";
            r.value = "v";
            r.value_len = 1;
            /* refused / silent: no metadata, the send gives up after
             * max.block.ms; half: accepted, its leader never answers */
            if (kn_producer_send(p, &r, es, sizeof es) == KN_OK)
                accepted++;
        }
        if (w == HALF)
            assert_int_equal(accepted, 5);
    }
    int64_t t0 = kn_test_now_ms();
    int rc = kn_producer_close(p, CLOSE_MS);
    assert_bounded(kn_test_now_ms() - t0, CLOSE_MS, what);
    if (accepted) /* records had to be failed */
        assert_int_equal(rc, KN_ERR__TIMED_OUT);
    assert_int_equal(delivered, accepted); /* every report, once */
    kn_producer_destroy(p);
    kn_test_resources_assert_back(before, what);
    dead_stop(&d);
}

static void test_producer_refused(void **s) { (void)s; producer_case(REFUSED, false); }
static void test_producer_silent(void **s) { (void)s; producer_case(SILENT, false); }
static void test_producer_half(void **s) { (void)s; producer_case(HALF, false); }
static void test_txn_producer_refused(void **s) { (void)s; producer_case(REFUSED, true); }
static void test_txn_producer_silent(void **s) { (void)s; producer_case(SILENT, true); }
static void test_txn_producer_half(void **s) { (void)s; producer_case(HALF, true); }

/* ---- consumer ------------------------------------------------------ */

enum consumer_kind { ASSIGNED, CLASSIC, KIP848 };
static const char *kind_name[] = {"assigned consumer", "classic member", "KIP-848 member"};

static void consumer_case(enum where w, enum consumer_kind kind) {
    dead d;
    dead_start(&d, w);
    char what[96];
    snprintf(what, sizeof what, "%s, %s", kind_name[kind], where_name[w]);
    kn_test_resources before = kn_test_resources_now();
    kn_conf *conf = conf_for(KN_CLIENT_CONSUMER, &d);
    kn_test_conf_set(conf, "group.id", "close-bounded");
    kn_test_conf_set(conf, "enable.auto.commit", "true");
    kn_test_conf_set(conf, "auto.commit.interval.ms", "100");
    if (kind != ASSIGNED)
        kn_test_conf_set(conf, "group.protocol", kind == CLASSIC ? "classic" : "consumer");
    char es[512];
    kn_consumer *c = kn_consumer_new(conf, es, sizeof es);
    kn_conf_destroy(conf);
    if (!c)
        fail_msg("kn_consumer_new: %s", es);
    if (kind == ASSIGNED) {
        kn_topic_partition_list *l = kn_topic_partition_list_new();
        kn_topic_partition_list_add(l, "t", 0);
        kn_topic_partition_list_add(l, "t", 1);
        assert_int_equal(kn_consumer_assign(c, l), KN_OK);
        kn_topic_partition_list_destroy(l);
    } else {
        const char *topics[] = {"t"};
        assert_int_equal(kn_consumer_subscribe(c, topics, 1, NULL, NULL), KN_OK);
    }
    /* Long enough for the half cluster's metadata and coordinator
     * answers to arrive, so requests are in flight to node 2. */
    for (int i = 0; i < 4; i++) {
        kn_records *recs = NULL;
        kn_consumer_poll(c, 200, &recs, es, sizeof es);
        kn_records_free(recs);
    }
    int64_t t0 = kn_test_now_ms();
    int rc = kn_consumer_close(c, CLOSE_MS);
    assert_bounded(kn_test_now_ms() - t0, CLOSE_MS, what);
    assert_int_equal(rc, KN_OK);
    kn_consumer_destroy(c);
    kn_test_resources_assert_back(before, what);
    dead_stop(&d);
}

static void test_assigned_refused(void **s) { (void)s; consumer_case(REFUSED, ASSIGNED); }
static void test_assigned_silent(void **s) { (void)s; consumer_case(SILENT, ASSIGNED); }
static void test_assigned_half(void **s) { (void)s; consumer_case(HALF, ASSIGNED); }
static void test_classic_refused(void **s) { (void)s; consumer_case(REFUSED, CLASSIC); }
static void test_classic_silent(void **s) { (void)s; consumer_case(SILENT, CLASSIC); }
static void test_classic_half(void **s) { (void)s; consumer_case(HALF, CLASSIC); }
static void test_kip848_refused(void **s) { (void)s; consumer_case(REFUSED, KIP848); }
static void test_kip848_silent(void **s) { (void)s; consumer_case(SILENT, KIP848); }
static void test_kip848_half(void **s) { (void)s; consumer_case(HALF, KIP848); }

/* ---- admin ----------------------------------------------------------
 * An admin client's operations are synchronous, so nothing is in flight
 * at close: kn_admin_close must not wait on the network at all, and is
 * held to the slack alone. */

static void admin_case(enum where w) {
    dead d;
    dead_start(&d, w);
    char what[96];
    snprintf(what, sizeof what, "admin, %s", where_name[w]);
    kn_test_resources before = kn_test_resources_now();
    kn_conf *conf = conf_for(KN_CLIENT_ADMIN, &d);
    char es[512];
    kn_admin *a = kn_admin_new(conf, es, sizeof es);
    kn_conf_destroy(conf);
    if (!a)
        fail_msg("kn_admin_new: %s", es);
    kn_cluster_description *desc = NULL;
    int rc = kn_admin_describe_cluster(a, 500, &desc, es, sizeof es);
    print_message("%s: describe_cluster: %s %s\n", what, kn_err_name(rc), es);
    kn_cluster_description_destroy(desc);
    kn_new_topic *nt = kn_new_topic_new("close-bounded", 1, 1);
    kn_topic_results *res = NULL;
    rc = kn_admin_create_topics(a, &nt, 1, 0, 500, &res, es, sizeof es);
    print_message("%s: create_topics: %s %s\n", what, kn_err_name(rc), es);
    assert_int_not_equal(rc, KN_OK); /* the controller never answers */
    kn_topic_results_destroy(res);
    kn_new_topic_destroy(nt);
    int64_t t0 = kn_test_now_ms();
    assert_int_equal(kn_admin_close(a, CLOSE_MS), KN_OK);
    assert_bounded(kn_test_now_ms() - t0, 0, what);
    kn_admin_destroy(a);
    kn_test_resources_assert_back(before, what);
    dead_stop(&d);
}

static void test_admin_refused(void **s) { (void)s; admin_case(REFUSED); }
static void test_admin_silent(void **s) { (void)s; admin_case(SILENT); }
static void test_admin_half(void **s) { (void)s; admin_case(HALF); }

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_producer_refused),    cmocka_unit_test(test_producer_silent),
        cmocka_unit_test(test_producer_half),       cmocka_unit_test(test_txn_producer_refused),
        cmocka_unit_test(test_txn_producer_silent), cmocka_unit_test(test_txn_producer_half),
        cmocka_unit_test(test_assigned_refused),    cmocka_unit_test(test_assigned_silent),
        cmocka_unit_test(test_assigned_half),       cmocka_unit_test(test_classic_refused),
        cmocka_unit_test(test_classic_silent),      cmocka_unit_test(test_classic_half),
        cmocka_unit_test(test_kip848_refused),      cmocka_unit_test(test_kip848_silent),
        cmocka_unit_test(test_kip848_half),         cmocka_unit_test(test_admin_refused),
        cmocka_unit_test(test_admin_silent),        cmocka_unit_test(test_admin_half),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
