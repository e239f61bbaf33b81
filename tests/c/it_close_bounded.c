/*
 * it_close_bounded.c: clients connected to a real broker, in the middle
 * of their work (records in flight, a transaction open, group members
 * owning partitions under enable.auto.commit), are closed after the
 * broker went away; each close returns within its timeout and leaves no
 * thread or file descriptor behind (issue #19, "bounded close").
 *
 * The test starts a broker of its own (tools/kafka/broker in a temporary
 * directory) so the shared broker of the other tests is never stopped,
 * and takes it away twice:
 *  - hung: SIGSTOP (a long GC pause, a frozen host): connections stay
 *    open and nothing answers -- the coordinator unreachable;
 *  - down: SIGKILL: every connection and reconnect is refused.
 * test_close_bounded.c covers brokers that were never reachable.
 */
#include "kn_test.h"

#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "resources.h"

#define CLOSE_MS 3000
/* What a loaded two-core machine may add before a close counts as
 * unbounded (request.timeout.ms is 30 s, the consumer's default close
 * 30 s, a classic session 45 s: all far beyond). */
#define SLACK_MS 750
#define PARTITIONS 2

static char broker_dir[256];
static char bootstrap[256];
static char topic[128];

static void broker(const char *verb) {
    kn_test_run("%s %s --dir %s >/dev/null", kn_test_source_path("tools/kafka/broker"), verb, broker_dir);
}

static int broker_pid(void) {
    char path[300];
    snprintf(path, sizeof path, "%s/node-1/pid", broker_dir);
    FILE *f = fopen(path, "r");
    assert_non_null(f);
    int pid = 0;
    assert_int_equal(fscanf(f, "%d", &pid), 1);
    fclose(f);
    return pid;
}

static int setup(void **state) {
    (void)state;
    snprintf(broker_dir, sizeof broker_dir, "/tmp/kn-close-bounded-XXXXXX");
    if (!mkdtemp(broker_dir))
        return -1;
    broker("start");
    char path[300];
    snprintf(path, sizeof path, "%s/bootstrap", broker_dir);
    FILE *f = fopen(path, "r");
    if (!f || !fgets(bootstrap, sizeof bootstrap, f))
        return -1;
    fclose(f);
    bootstrap[strcspn(bootstrap, "\r\n")] = 0;
    return 0;
}

static int teardown(void **state) {
    (void)state;
    kill(broker_pid(), SIGCONT); /* in case a case failed while it was stopped */
    broker("stop");
    kn_test_run("rm -rf %s", broker_dir);
    return 0;
}

static kn_conf *conf_for(kn_client_type type) {
    kn_conf *conf = kn_conf_new(type);
    kn_test_conf_set(conf, "bootstrap.servers", bootstrap);
    return conf;
}

static void create_topic(void) {
    snprintf(topic, sizeof topic, "%s", kn_test_topic("close-bounded"));
    kn_conf *conf = conf_for(KN_CLIENT_ADMIN);
    kn_admin *a = kn_admin_new(conf, NULL, 0);
    kn_conf_destroy(conf);
    assert_non_null(a);
    kn_new_topic *nt = kn_new_topic_new(topic, PARTITIONS, 1);
    kn_topic_results *res = NULL;
    char es[512];
    int rc = kn_admin_create_topics(a, &nt, 1, 0, 30000, &res, es, sizeof es);
    if (rc != KN_OK)
        fail_msg("create_topics: %s", es);
    kn_topic_results_destroy(res);
    kn_new_topic_destroy(nt);
    kn_admin_destroy(a);
}

static void on_delivery(kn_producer *p, const kn_delivery *d, void *opaque) {
    (void)p;
    (void)d;
    ++*(int *)opaque;
}

typedef struct member {
    kn_consumer *c;
    int owned;
} member;

static int on_rebalance(kn_consumer *c, kn_rebalance_event ev, const kn_topic_partition_list *parts, void *opaque) {
    (void)c;
    member *m = opaque;
    int n = (int)kn_topic_partition_list_count(parts);
    m->owned += ev == KN_REBALANCE_ASSIGNED ? n : -n;
    return 0;
}

static kn_consumer *new_consumer(const char *protocol, const char *group) {
    kn_conf *conf = conf_for(KN_CLIENT_CONSUMER);
    kn_test_conf_set(conf, "group.id", group);
    kn_test_conf_set(conf, "enable.auto.commit", "true");
    kn_test_conf_set(conf, "auto.offset.reset", "earliest");
    if (protocol)
        kn_test_conf_set(conf, "group.protocol", protocol);
    char es[512];
    kn_consumer *c = kn_consumer_new(conf, es, sizeof es);
    kn_conf_destroy(conf);
    if (!c)
        fail_msg("kn_consumer_new: %s", es);
    return c;
}

typedef struct clients {
    kn_producer *prod, *txn;
    int delivered, accepted, txn_delivered;
    member classic, kip848;
    kn_consumer *assigned;
    kn_admin *admin;
} clients;

static void send_some(kn_producer *p, int n, int *accepted) {
    char es[512];
    for (int i = 0; i < n; i++) {
        kn_record_out r = KN_RECORD_OUT_INIT;
        r.topic = topic;
        r.value = "close-bounded";
        r.value_len = 13;
        int rc = kn_producer_send(p, &r, es, sizeof es);
        if (rc != KN_OK)
            fail_msg("send: %s", es);
        if (accepted)
            ++*accepted;
    }
}

/* Everything connected and busy: records produced, a transaction open
 * with records in it, two members (classic, KIP-848) owning partitions
 * and having consumed, an assigned consumer fetching, an admin client
 * that has talked to the cluster. */
static void clients_start(clients *cl, const char *tag) {
    memset(cl, 0, sizeof *cl);
    char es[512], group[160];
    kn_conf *conf = conf_for(KN_CLIENT_PRODUCER);
    kn_test_conf_set(conf, "linger.ms", "0");
    cl->prod = kn_producer_new(conf, on_delivery, &cl->delivered, es, sizeof es);
    kn_conf_destroy(conf);
    assert_non_null(cl->prod);
    send_some(cl->prod, 20, &cl->accepted);
    assert_int_equal(kn_producer_flush(cl->prod, 30000), KN_OK);

    conf = conf_for(KN_CLIENT_PRODUCER);
    snprintf(group, sizeof group, "%s-%s-txn", topic, tag);
    kn_test_conf_set(conf, "transactional.id", group);
    cl->txn = kn_producer_new(conf, on_delivery, &cl->txn_delivered, es, sizeof es);
    kn_conf_destroy(conf);
    assert_non_null(cl->txn);
    if (kn_producer_init_transactions(cl->txn, 30000, es, sizeof es) != KN_OK)
        fail_msg("init_transactions: %s", es);
    assert_int_equal(kn_producer_begin_transaction(cl->txn, es, sizeof es), KN_OK);
    send_some(cl->txn, 5, NULL);
    assert_int_equal(kn_producer_flush(cl->txn, 30000), KN_OK);

    const char *topics[] = {topic};
    snprintf(group, sizeof group, "%s-%s-classic", topic, tag);
    cl->classic.c = new_consumer("classic", group);
    assert_int_equal(kn_consumer_subscribe(cl->classic.c, topics, 1, on_rebalance, &cl->classic), KN_OK);
    snprintf(group, sizeof group, "%s-%s-848", topic, tag);
    cl->kip848.c = new_consumer("consumer", group);
    assert_int_equal(kn_consumer_subscribe(cl->kip848.c, topics, 1, on_rebalance, &cl->kip848), KN_OK);
    snprintf(group, sizeof group, "%s-%s-assigned", topic, tag);
    cl->assigned = new_consumer(NULL, group);
    kn_topic_partition_list *l = kn_topic_partition_list_new();
    for (int p = 0; p < PARTITIONS; p++)
        kn_topic_partition_list_add(l, topic, p);
    assert_int_equal(kn_consumer_assign(cl->assigned, l), KN_OK);
    kn_topic_partition_list_destroy(l);
    /* Until both members own every partition and each consumer has read
     * records (so positions exist for auto-commit to commit). */
    int got[3] = {0, 0, 0};
    kn_consumer *cs[3] = {cl->classic.c, cl->kip848.c, cl->assigned};
    int64_t end = kn_test_now_ms() + 60000;
    while (kn_test_now_ms() < end &&
           (cl->classic.owned < PARTITIONS || cl->kip848.owned < PARTITIONS || !got[0] || !got[1] || !got[2])) {
        for (int i = 0; i < 3; i++) {
            kn_records *recs = NULL;
            if (kn_consumer_poll(cs[i], 100, &recs, es, sizeof es) == KN_OK)
                got[i] += (int)kn_records_count(recs);
            kn_records_free(recs);
        }
    }
    print_message("%s: classic owns %d, KIP-848 owns %d; read %d/%d/%d\n", tag, cl->classic.owned,
                  cl->kip848.owned, got[0], got[1], got[2]);
    assert_int_equal(cl->classic.owned, PARTITIONS);
    assert_int_equal(cl->kip848.owned, PARTITIONS);
    assert_true(got[0] && got[1] && got[2]);

    conf = conf_for(KN_CLIENT_ADMIN);
    cl->admin = kn_admin_new(conf, es, sizeof es);
    kn_conf_destroy(conf);
    assert_non_null(cl->admin);
    kn_cluster_description *desc = NULL;
    assert_int_equal(kn_admin_describe_cluster(cl->admin, 30000, &desc, es, sizeof es), KN_OK);
    kn_cluster_description_destroy(desc);
}

static void assert_bounded(int64_t t0, int timeout_ms, const char *what, const char *tag) {
    int64_t took = kn_test_now_ms() - t0;
    print_message("%s, %s: close returned after %lld ms (timeout %d)\n", what, tag, (long long)took, timeout_ms);
    assert_true(took <= timeout_ms + SLACK_MS);
}

/* The broker is gone: more records (accepted into the accumulator, or
 * in flight), then every client is closed. */
static void clients_close(clients *cl, const char *tag) {
    send_some(cl->prod, 20, &cl->accepted);
    send_some(cl->txn, 5, NULL);
    int64_t t0 = kn_test_now_ms();
    kn_producer_close(cl->prod, CLOSE_MS);
    assert_bounded(t0, CLOSE_MS, "producer", tag);
    assert_int_equal(cl->delivered, cl->accepted); /* every report ran, once */
    kn_producer_destroy(cl->prod);
    t0 = kn_test_now_ms();
    kn_producer_close(cl->txn, CLOSE_MS);
    assert_bounded(t0, CLOSE_MS, "transactional producer", tag);
    assert_int_equal(cl->txn_delivered, 10);
    kn_producer_destroy(cl->txn);
    const char *names[] = {"classic member", "KIP-848 member", "assigned consumer"};
    kn_consumer *cs[3] = {cl->classic.c, cl->kip848.c, cl->assigned};
    for (int i = 0; i < 3; i++) {
        t0 = kn_test_now_ms();
        assert_int_equal(kn_consumer_close(cs[i], CLOSE_MS), KN_OK);
        assert_bounded(t0, CLOSE_MS, names[i], tag);
        kn_consumer_destroy(cs[i]);
    }
    /* nothing is in flight at an admin client's close: held to the slack alone */
    t0 = kn_test_now_ms();
    assert_int_equal(kn_admin_close(cl->admin, CLOSE_MS), KN_OK);
    assert_bounded(t0, 0, "admin", tag);
    kn_admin_destroy(cl->admin);
}

static void test_close_with_broker_hung(void **state) {
    (void)state;
    create_topic();
    kn_test_resources before = kn_test_resources_now();
    clients cl;
    clients_start(&cl, "hung");
    int pid = broker_pid();
    assert_int_equal(kill(pid, SIGSTOP), 0);
    clients_close(&cl, "hung");
    kn_test_resources_assert_back(before, "broker hung");
    assert_int_equal(kill(pid, SIGCONT), 0);
}

static void test_close_with_broker_down(void **state) {
    (void)state;
    create_topic();
    kn_test_resources before = kn_test_resources_now();
    clients cl;
    clients_start(&cl, "down");
    kn_test_run("%s stop-node 1 --kill --dir %s >/dev/null", kn_test_source_path("tools/kafka/broker"), broker_dir);
    clients_close(&cl, "down");
    kn_test_resources_assert_back(before, "broker down");
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_close_with_broker_hung),
        cmocka_unit_test(test_close_with_broker_down),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
