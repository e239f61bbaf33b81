/*
 * it_producer_txn.c: producer transactions against a real broker
 * (KAFKA_BOOTSTRAP).
 *
 *  - committed transactions are visible to a read_committed reader and
 *    an aborted one is not (our consumer with isolation.level=
 *    read_committed reads exactly the committed values; a
 *    read_uncommitted one sees the aborted records too);
 *  - a second producer with the same transactional.id fences the first:
 *    the first one's next transaction fails fatally (PRODUCER_FENCED /
 *    INVALID_PRODUCER_EPOCH), later sends fail with KN_ERR__FATAL, and the
 *    second one commits normally;
 *  - send_offsets_to_transaction commits the group's offsets with the
 *    transaction (kn_consumer_committed sees them) and not when aborted;
 *  - the state machine: send outside a transaction, commit without
 *    begin, a second init are refused with KN_ERR__STATE.
 */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "kafka_native.h"
#include "kn_test.h"

typedef struct tx_ctx {
    int ok, failed, first_err;
} tx_ctx;

static void on_dr(kn_producer *p, const kn_delivery *d, void *opaque) {
    tx_ctx *c = opaque;
    (void)p;
    if (kn_delivery_error(d)) {
        if (!c->failed++)
            c->first_err = kn_delivery_error(d);
    } else {
        c->ok++;
    }
}

static kn_producer *txn_producer(const char *tid, tx_ctx *ctx) {
    kn_conf *conf = kn_conf_new(KN_CLIENT_PRODUCER);
    kn_test_conf_set(conf, "bootstrap.servers", kn_test_bootstrap());
    kn_test_conf_set(conf, "transactional.id", tid);
    kn_test_conf_set(conf, "transaction.timeout.ms", "20000");
    char err[512];
    kn_producer *p = kn_producer_new(conf, on_dr, ctx, err, sizeof err);
    kn_conf_destroy(conf);
    if (!p)
        fail_msg("kn_producer_new: %s", err);
    return p;
}

static void send_values(kn_producer *p, const char *topic, const char *prefix, int from, int n) {
    char err[512];
    for (int i = from; i < from + n; i++) {
        char v[64];
        snprintf(v, sizeof v, "%s%d", prefix, i);
        kn_record_out r = KN_RECORD_OUT_INIT;
        r.topic = topic;
        r.value = v;
        r.value_len = strlen(v);
        int rc = kn_producer_send(p, &r, err, sizeof err);
        if (rc)
            fail_msg("send %s%d: %s: %s", prefix, i, kn_err_name(rc), err);
    }
}

static void must(int rc, const char *what, const char *err) {
    if (rc)
        fail_msg("%s: %s: %s", what, kn_err_name(rc), err);
}

static kn_consumer *consumer(const char *isolation, const char *group) {
    kn_conf *conf = kn_conf_new(KN_CLIENT_CONSUMER);
    kn_test_conf_set(conf, "bootstrap.servers", kn_test_bootstrap());
    kn_test_conf_set(conf, "auto.offset.reset", "earliest");
    kn_test_conf_set(conf, "enable.auto.commit", "false");
    kn_test_conf_set(conf, "isolation.level", isolation);
    if (group)
        kn_test_conf_set(conf, "group.id", group);
    char err[512];
    kn_consumer *c = kn_consumer_new(conf, err, sizeof err);
    kn_conf_destroy(conf);
    if (!c)
        fail_msg("kn_consumer_new: %s", err);
    return c;
}

/* Reads partitions 0..n-1 until `want` records came and 1.5 s passed
 * without more (to see records that should not be there). Counts values
 * starting with "C" (committed) and "A" (aborted). */
static void read_counts(const char *isolation, const char *topic, int parts, int want, int *committed,
                        int *aborted) {
    kn_consumer *c = consumer(isolation, NULL);
    kn_topic_partition_list *l = kn_topic_partition_list_new();
    for (int i = 0; i < parts; i++)
        assert_true(kn_topic_partition_list_add(l, topic, i) >= 0);
    assert_int_equal(kn_consumer_assign(c, l), KN_OK);
    kn_topic_partition_list_destroy(l);
    *committed = *aborted = 0;
    int64_t deadline = kn_test_now_ms() + 60000, quiet_since = -1;
    char err[512];
    while (kn_test_now_ms() < deadline) {
        kn_records *r = NULL;
        int rc = kn_consumer_poll(c, 300, &r, err, sizeof err);
        if (rc)
            fail_msg("poll: %s: %s", kn_err_name(rc), err);
        size_t n = kn_records_count(r);
        for (size_t i = 0; i < n; i++) {
            size_t len;
            const char *v = kn_records_value(r, i, &len);
            if (v && len && v[0] == 'C')
                (*committed)++;
            else if (v && len && v[0] == 'A')
                (*aborted)++;
        }
        kn_records_free(r);
        if (n == 0 && *committed + *aborted >= want) {
            if (quiet_since < 0)
                quiet_since = kn_test_now_ms();
            else if (kn_test_now_ms() - quiet_since > 1500)
                break;
        } else if (n) {
            quiet_since = -1;
        }
    }
    assert_int_equal(kn_consumer_close(c, -1), KN_OK);
    kn_consumer_destroy(c);
}

static void test_commit_visible_abort_not(void **st) {
    (void)st;
    char topic[128], tid[128];
    snprintf(topic, sizeof topic, "%s", kn_test_topic("txn"));
    snprintf(tid, sizeof tid, "%s", kn_test_topic("tid"));
    kn_test_create_topic(topic, 3);
    tx_ctx ctx = {0, 0, 0};
    kn_producer *p = txn_producer(tid, &ctx);
    char err[512];
    kn_record_out r = KN_RECORD_OUT_INIT;
    r.topic = topic;
    r.value = "x";
    r.value_len = 1;
    /* The state machine refuses out-of-order calls. */
    assert_int_equal(kn_producer_send(p, &r, err, sizeof err), KN_ERR__STATE);
    assert_non_null(strstr(err, "init_transactions"));
    assert_int_equal(kn_producer_begin_transaction(p, err, sizeof err), KN_ERR__STATE);
    must(kn_producer_init_transactions(p, 30000, err, sizeof err), "init", err);
    assert_int_equal(kn_producer_init_transactions(p, 30000, err, sizeof err), KN_ERR__STATE);
    assert_int_equal(kn_producer_send(p, &r, err, sizeof err), KN_ERR__STATE);
    assert_int_equal(kn_producer_commit_transaction(p, 1000, err, sizeof err), KN_ERR__STATE);

    must(kn_producer_begin_transaction(p, err, sizeof err), "begin", err);
    send_values(p, topic, "C", 0, 1000);
    must(kn_producer_commit_transaction(p, 30000, err, sizeof err), "commit 1", err);
    assert_int_equal(ctx.ok, 1000);

    must(kn_producer_begin_transaction(p, err, sizeof err), "begin", err);
    send_values(p, topic, "A", 0, 500);
    must(kn_producer_flush(p, 30000), "flush", "");
    assert_int_equal(ctx.ok, 1500); /* written to the log, then aborted */
    must(kn_producer_abort_transaction(p, 30000, err, sizeof err), "abort", err);

    must(kn_producer_begin_transaction(p, err, sizeof err), "begin", err);
    send_values(p, topic, "A", 500, 300);
    /* Aborted before being sent (maybe): those fail, the others abort. */
    must(kn_producer_abort_transaction(p, 30000, err, sizeof err), "abort 2", err);

    must(kn_producer_begin_transaction(p, err, sizeof err), "begin", err);
    send_values(p, topic, "C", 1000, 700);
    must(kn_producer_commit_transaction(p, 30000, err, sizeof err), "commit 2", err);
    assert_int_equal(kn_producer_close(p, 10000), 0);
    kn_producer_destroy(p);
    assert_int_equal(ctx.ok + ctx.failed, 2500);

    int c, a;
    read_counts("read_committed", topic, 3, 1700, &c, &a);
    print_message("read_committed: %d committed, %d aborted records\n", c, a);
    assert_int_equal(c, 1700);
    assert_int_equal(a, 0);
    read_counts("read_uncommitted", topic, 3, 1700 + 500, &c, &a);
    print_message("read_uncommitted: %d committed, %d aborted records\n", c, a);
    assert_int_equal(c, 1700);
    assert_true(a >= 500); /* the first aborted transaction was fully written */
}

static void test_fencing(void **st) {
    (void)st;
    char topic[128], tid[128];
    snprintf(topic, sizeof topic, "%s", kn_test_topic("txnfence"));
    snprintf(tid, sizeof tid, "%s", kn_test_topic("tidfence"));
    kn_test_create_topic(topic, 2);
    tx_ctx c1 = {0, 0, 0}, c2 = {0, 0, 0};
    char err[512];
    kn_producer *p1 = txn_producer(tid, &c1);
    must(kn_producer_init_transactions(p1, 30000, err, sizeof err), "init p1", err);
    must(kn_producer_begin_transaction(p1, err, sizeof err), "begin p1", err);
    send_values(p1, topic, "A", 0, 100);
    must(kn_producer_flush(p1, 30000), "flush p1", "");
    /* p2 takes over the transactional id: p1's open transaction is
     * aborted by the coordinator and p1's epoch is fenced. */
    kn_producer *p2 = txn_producer(tid, &c2);
    must(kn_producer_init_transactions(p2, 60000, err, sizeof err), "init p2", err);
    int rc = kn_producer_commit_transaction(p1, 30000, err, sizeof err);
    print_message("p1 commit after fencing: %s: %s\n", kn_err_name(rc), err);
    assert_true(rc == KN_ERR_PRODUCER_FENCED || rc == KN_ERR_INVALID_PRODUCER_EPOCH || rc == KN_ERR__FATAL);
    kn_record_out r = KN_RECORD_OUT_INIT;
    r.topic = topic;
    r.value = "A-late";
    r.value_len = 6;
    assert_int_equal(kn_producer_send(p1, &r, err, sizeof err), KN_ERR__FATAL);
    assert_int_equal(kn_producer_begin_transaction(p1, err, sizeof err), KN_ERR__FATAL);
    kn_producer_close(p1, 5000);
    kn_producer_destroy(p1);

    must(kn_producer_begin_transaction(p2, err, sizeof err), "begin p2", err);
    send_values(p2, topic, "C", 0, 200);
    must(kn_producer_commit_transaction(p2, 30000, err, sizeof err), "commit p2", err);
    assert_int_equal(kn_producer_close(p2, 10000), 0);
    kn_producer_destroy(p2);
    assert_int_equal(c2.ok, 200);
    int c, a;
    read_counts("read_committed", topic, 2, 200, &c, &a);
    assert_int_equal(c, 200);
    assert_int_equal(a, 0);
}

static int64_t committed_offset(const char *group, const char *topic, int32_t part) {
    kn_consumer *c = consumer("read_committed", group);
    kn_topic_partition_list *l = kn_topic_partition_list_new();
    assert_true(kn_topic_partition_list_add(l, topic, part) >= 0);
    int rc = kn_consumer_committed(c, l, 30000);
    if (rc)
        fail_msg("committed: %s", kn_err_name(rc));
    int64_t off = kn_topic_partition_list_offset(l, 0);
    kn_topic_partition_list_destroy(l);
    assert_int_equal(kn_consumer_close(c, -1), KN_OK);
    kn_consumer_destroy(c);
    return off;
}

static void test_send_offsets(void **st) {
    (void)st;
    char topic[128], tid[128], group[128];
    snprintf(topic, sizeof topic, "%s", kn_test_topic("txnoff"));
    snprintf(tid, sizeof tid, "%s", kn_test_topic("tidoff"));
    snprintf(group, sizeof group, "%s", kn_test_topic("grpoff"));
    kn_test_create_topic(topic, 2);
    tx_ctx ctx = {0, 0, 0};
    char err[512];
    kn_producer *p = txn_producer(tid, &ctx);
    must(kn_producer_init_transactions(p, 30000, err, sizeof err), "init", err);
    kn_group_metadata *gm = kn_group_metadata_new(group, -1, "", NULL);
    assert_non_null(gm);
    kn_topic_partition_list *offs = kn_topic_partition_list_new();
    assert_true(kn_topic_partition_list_add(offs, topic, 0) >= 0);
    assert_true(kn_topic_partition_list_add(offs, topic, 1) >= 0);

    /* Committed with the transaction. */
    must(kn_producer_begin_transaction(p, err, sizeof err), "begin", err);
    send_values(p, topic, "C", 0, 10);
    kn_topic_partition_list_set_offset(offs, 0, 42);
    kn_topic_partition_list_set_offset(offs, 1, 7);
    must(kn_producer_send_offsets_to_transaction(p, offs, gm, 30000, err, sizeof err), "send_offsets", err);
    must(kn_producer_commit_transaction(p, 30000, err, sizeof err), "commit", err);
    assert_int_equal(committed_offset(group, topic, 0), 42);
    assert_int_equal(committed_offset(group, topic, 1), 7);

    /* Aborted: the group's offsets stay. */
    must(kn_producer_begin_transaction(p, err, sizeof err), "begin", err);
    kn_topic_partition_list_set_offset(offs, 0, 99);
    kn_topic_partition_list_set_offset(offs, 1, 98);
    must(kn_producer_send_offsets_to_transaction(p, offs, gm, 30000, err, sizeof err), "send_offsets 2", err);
    must(kn_producer_abort_transaction(p, 30000, err, sizeof err), "abort", err);
    assert_int_equal(committed_offset(group, topic, 0), 42);
    assert_int_equal(committed_offset(group, topic, 1), 7);

    /* Offsets alone (no record) commit too. */
    must(kn_producer_begin_transaction(p, err, sizeof err), "begin", err);
    kn_topic_partition_list_set_offset(offs, 0, 50);
    kn_topic_partition_list_set_offset(offs, 1, 51);
    must(kn_producer_send_offsets_to_transaction(p, offs, gm, 30000, err, sizeof err), "send_offsets 3", err);
    must(kn_producer_commit_transaction(p, 30000, err, sizeof err), "commit 3", err);
    assert_int_equal(committed_offset(group, topic, 0), 50);
    assert_int_equal(committed_offset(group, topic, 1), 51);

    kn_topic_partition_list_destroy(offs);
    kn_group_metadata_destroy(gm);
    assert_int_equal(kn_producer_close(p, 10000), 0);
    kn_producer_destroy(p);
}

/* A record that fails inside a transaction makes it abortable: commit
 * refuses with KN_ERR_TRANSACTION_ABORTABLE, so do later sends; abort
 * works and the next transaction commits. The failing record is larger
 * than the topic's max.message.bytes (MESSAGE_TOO_LARGE, alone). */
static void test_abortable_error(void **st) {
    (void)st;
    char topic[128], tid[128], cmd[1024];
    snprintf(topic, sizeof topic, "%s", kn_test_topic("txnabortable"));
    snprintf(tid, sizeof tid, "%s", kn_test_topic("tidabortable"));
    snprintf(cmd, sizeof cmd,
             "%s topics --bootstrap-server %s --create --topic %s --partitions 1 "
             "--config max.message.bytes=2000 >/dev/null 2>&1",
             kn_test_source_path("tools/kafka/java-tool"), kn_test_bootstrap(), topic);
    if (system(cmd) != 0)
        fail_msg("cannot create topic %s", topic);
    tx_ctx ctx = {0, 0, 0};
    char err[512];
    kn_producer *p = txn_producer(tid, &ctx);
    must(kn_producer_init_transactions(p, 30000, err, sizeof err), "init", err);
    must(kn_producer_begin_transaction(p, err, sizeof err), "begin", err);
    send_values(p, topic, "A", 0, 5);
    static char big[5000];
    memset(big, 'A', sizeof big);
    kn_record_out r = KN_RECORD_OUT_INIT;
    r.topic = topic;
    r.value = big;
    r.value_len = sizeof big;
    must(kn_producer_send(p, &r, err, sizeof err), "send big", err);
    int rc = kn_producer_commit_transaction(p, 30000, err, sizeof err);
    print_message("commit with a failed record: %s: %s\n", kn_err_name(rc), err);
    assert_int_equal(rc, KN_ERR_TRANSACTION_ABORTABLE);
    assert_int_equal(ctx.failed, 1);
    assert_int_equal(ctx.first_err, KN_ERR_MESSAGE_TOO_LARGE);
    assert_int_equal(kn_producer_send(p, &r, err, sizeof err), KN_ERR_TRANSACTION_ABORTABLE);
    assert_int_equal(kn_producer_begin_transaction(p, err, sizeof err), KN_ERR__STATE);
    must(kn_producer_abort_transaction(p, 30000, err, sizeof err), "abort", err);
    must(kn_producer_begin_transaction(p, err, sizeof err), "begin 2", err);
    send_values(p, topic, "C", 0, 20);
    must(kn_producer_commit_transaction(p, 30000, err, sizeof err), "commit 2", err);
    assert_int_equal(kn_producer_close(p, 10000), 0);
    kn_producer_destroy(p);
    int c, a;
    read_counts("read_committed", topic, 1, 20, &c, &a);
    assert_int_equal(c, 20);
    assert_int_equal(a, 0);
}

/* Two-phase commit (KIP-939) is refused at creation, not ignored. */
static void test_two_phase_commit_refused(void **st) {
    (void)st;
    kn_conf *conf = kn_conf_new(KN_CLIENT_PRODUCER);
    kn_test_conf_set(conf, "bootstrap.servers", kn_test_bootstrap());
    kn_test_conf_set(conf, "transactional.id", "kn-2pc");
    kn_test_conf_set(conf, "transaction.two.phase.commit.enable", "true");
    char err[512] = "";
    kn_producer *p = kn_producer_new(conf, NULL, NULL, err, sizeof err);
    kn_conf_destroy(conf);
    assert_null(p);
    assert_non_null(strstr(err, "transaction.two.phase.commit.enable"));
}

int main(void) {
    kn_test_bootstrap();
    const char *filter = getenv("KN_TEST_FILTER");
    if (filter && *filter)
        cmocka_set_test_filter(filter);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_commit_visible_abort_not),
        cmocka_unit_test(test_fencing),
        cmocka_unit_test(test_send_offsets),
        cmocka_unit_test(test_abortable_error),
        cmocka_unit_test(test_two_phase_commit_refused),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
