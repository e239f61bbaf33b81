/*
 * it_admin_txn.c: the transaction and producer operations against a real
 * broker, around a transaction of our own transactional producer left
 * open on purpose: describe_transactions (Ongoing, its partition, an
 * unknown id failing alone), list_transactions (unfiltered, by state,
 * producer id and id pattern), describe_producers (the open
 * transaction's first offset and coordinator epoch; a missing partition
 * failing alone), abort_transaction with those values (the partition's
 * transaction is gone), and fence_producers: the epoch is bumped, the
 * coordinator ends the transaction, and our producer's commit then
 * fails as fenced. While the transaction is open, describe_transactions
 * (with the unknown id), list_transactions (by id pattern) and
 * describe_producers are compared line by line with the Java Admin
 * client's answers (tools/java/admin-oracle txn).
 */
#include "kn_test.h"
#include "oracle_lines.h"

#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "kafka_native.h"
#include "kafka_native_admin.h"

#define TIMEOUT_MS 30000

static void sleep_ms(long ms) {
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

static void must(int rc, const char *what, const char *err) {
    if (rc)
        fail_msg("%s: %s: %s", what, kn_err_name(rc), err);
}

static bool listed(const kn_txn_list *l, const char *id, const char *state) {
    for (size_t i = 0; i < kn_txn_list_count(l); i++)
        if (strcmp(kn_txn_list_id(l, i), id) == 0)
            return !state || strcmp(kn_txn_list_state(l, i), state) == 0;
    return false;
}

static kn_txn_list *list_txns(kn_admin *admin, const kn_txn_list_filter *f) {
    char es[512] = "";
    kn_txn_list *l = NULL;
    must(kn_admin_list_transactions(admin, f, TIMEOUT_MS, &l, es, sizeof es), "list_transactions", es);
    assert_int_equal(kn_txn_list_error(l), KN_OK);
    return l;
}

/* describe_producers of topic-0 (and of a partition that does not
 * exist, which fails alone); the producer pid's entry index or -1. */
static kn_producer_states *producers(kn_admin *admin, const char *topic, int64_t pid, ptrdiff_t *kp) {
    char es[512] = "";
    kn_topic_partition_list *l = kn_topic_partition_list_new();
    kn_topic_partition_list_add(l, topic, 0);
    kn_topic_partition_list_add(l, topic, 7);
    kn_producer_states *s = NULL;
    must(kn_admin_describe_producers(admin, l, TIMEOUT_MS, &s, es, sizeof es), "describe_producers", es);
    kn_topic_partition_list_destroy(l);
    assert_int_equal(kn_producer_states_count(s), 2);
    if (kn_producer_states_error(s, 0))
        fail_msg("describe_producers: %s", kn_producer_states_error_message(s, 0));
    assert_int_equal(kn_producer_states_error(s, 1), KN_ERR_UNKNOWN_TOPIC_OR_PARTITION);
    *kp = -1;
    for (size_t k = 0; k < kn_producer_states_producer_count(s, 0); k++)
        if (kn_producer_states_producer_id(s, 0, k) == pid)
            *kp = (ptrdiff_t)k;
    return s;
}

static void opt_i64(int64_t v, char *out, size_t size) {
    if (v < 0)
        snprintf(out, size, "-");
    else
        snprintf(out, size, "%lld", (long long)v);
}

/* args: id, unknown id, topic (the oracle's order). */
static void txn_lines(kn_admin *a, const char *const *args, size_t n, lines *out) {
    assert_int_equal(n, 3);
    char es[512] = "", start[24];
    kn_txn_descriptions *d = NULL;
    must(kn_admin_describe_transactions(a, args, 2, TIMEOUT_MS, &d, es, sizeof es), "describe_transactions", es);
    for (size_t i = 0; i < kn_txn_descriptions_count(d); i++) {
        if (kn_txn_descriptions_error(d, i)) {
            add_line(out, "txn %s error=%s", kn_txn_descriptions_id(d, i), kn_err_name(kn_txn_descriptions_error(d, i)));
            continue;
        }
        char parts[1024];
        oracle_tps(kn_txn_descriptions_partitions(d, i), parts, sizeof parts);
        opt_i64(kn_txn_descriptions_start_time_ms(d, i), start, sizeof start);
        add_line(out, "txn %s state=%s coordinator=%d producer=%lld epoch=%d timeout=%d start=%s partitions=%s",
                 kn_txn_descriptions_id(d, i), kn_txn_descriptions_state(d, i),
                 (int)kn_txn_descriptions_coordinator(d, i), (long long)kn_txn_descriptions_producer_id(d, i),
                 (int)kn_txn_descriptions_producer_epoch(d, i), (int)kn_txn_descriptions_timeout_ms(d, i), start,
                 parts);
    }
    kn_txn_descriptions_destroy(d);
    kn_txn_list_filter bypat = {.id_pattern = args[0]};
    kn_txn_list *l = list_txns(a, &bypat);
    lines ll = {0};
    for (size_t i = 0; i < kn_txn_list_count(l); i++)
        add_line(&ll, "listed %s producer=%lld state=%s", kn_txn_list_id(l, i), (long long)kn_txn_list_producer_id(l, i),
                 kn_txn_list_state(l, i));
    move_sorted_lines(out, &ll);
    kn_txn_list_destroy(l);
    kn_topic_partition_list *p0 = kn_topic_partition_list_new();
    kn_topic_partition_list_add(p0, args[2], 0);
    kn_producer_states *s = NULL;
    must(kn_admin_describe_producers(a, p0, TIMEOUT_MS, &s, es, sizeof es), "describe_producers", es);
    kn_topic_partition_list_destroy(p0);
    lines pl = {0};
    for (size_t k = 0; k < kn_producer_states_producer_count(s, 0); k++) {
        char ce[24], ts0[24];
        opt_i64(kn_producer_states_coordinator_epoch(s, 0, k), ce, sizeof ce);
        opt_i64(kn_producer_states_txn_start_offset(s, 0, k), ts0, sizeof ts0);
        add_line(&pl, "producer %s-0 id=%lld epoch=%d last_seq=%d last_ts=%lld coordinator_epoch=%s txn_start=%s",
                 args[2], (long long)kn_producer_states_producer_id(s, 0, k),
                 (int)kn_producer_states_producer_epoch(s, 0, k), (int)kn_producer_states_last_sequence(s, 0, k),
                 (long long)kn_producer_states_last_timestamp(s, 0, k), ce, ts0);
    }
    move_sorted_lines(out, &pl);
    kn_producer_states_destroy(s);
}

static void test_txn_admin(void **state) {
    (void)state;
    char es[512] = "", topic[200], tid[200], none[200];
    snprintf(topic, sizeof topic, "%s", kn_test_topic("admin-txn"));
    snprintf(tid, sizeof tid, "%s", kn_test_topic("admin-txn-id"));
    snprintf(none, sizeof none, "%s", kn_test_topic("admin-txn-none"));
    kn_test_create_topic(topic, 2);

    kn_conf *conf = kn_conf_new(KN_CLIENT_ADMIN);
    kn_test_conf_set(conf, "bootstrap.servers", kn_test_bootstrap());
    kn_admin *admin = kn_admin_new(conf, es, sizeof es);
    kn_conf_destroy(conf);
    assert_non_null(admin);

    /* Our transactional producer, its transaction left open. */
    conf = kn_conf_new(KN_CLIENT_PRODUCER);
    kn_test_conf_set(conf, "bootstrap.servers", kn_test_bootstrap());
    kn_test_conf_set(conf, "transactional.id", tid);
    kn_test_conf_set(conf, "transaction.timeout.ms", "60000");
    kn_producer *p = kn_producer_new(conf, NULL, NULL, es, sizeof es);
    kn_conf_destroy(conf);
    assert_non_null(p);
    must(kn_producer_init_transactions(p, TIMEOUT_MS, es, sizeof es), "init_transactions", es);
    must(kn_producer_begin_transaction(p, es, sizeof es), "begin", es);
    kn_record_out r = KN_RECORD_OUT_INIT;
    r.topic = topic;
    r.partition = 0;
    r.value = "open";
    r.value_len = 4;
    must(kn_producer_send(p, &r, es, sizeof es), "send", es);
    r.partition = 1;
    must(kn_producer_send(p, &r, es, sizeof es), "send", es);
    must(kn_producer_flush(p, TIMEOUT_MS), "flush", "");

    /* describe_transactions: ours Ongoing on both partitions; an unknown id alone. */
    const char *ids[] = {tid, none, tid};
    kn_txn_descriptions *d = NULL;
    must(kn_admin_describe_transactions(admin, ids, 3, TIMEOUT_MS, &d, es, sizeof es),
         "describe_transactions", es);
    assert_int_equal(kn_txn_descriptions_count(d), 2);
    assert_string_equal(kn_txn_descriptions_id(d, 0), tid);
    if (kn_txn_descriptions_error(d, 0))
        fail_msg("describe %s: %s", tid, kn_txn_descriptions_error_message(d, 0));
    assert_string_equal(kn_txn_descriptions_state(d, 0), "Ongoing");
    int64_t pid = kn_txn_descriptions_producer_id(d, 0);
    int32_t epoch = kn_txn_descriptions_producer_epoch(d, 0);
    assert_true(pid >= 0 && epoch >= 0);
    assert_int_equal(kn_txn_descriptions_timeout_ms(d, 0), 60000);
    assert_true(kn_txn_descriptions_start_time_ms(d, 0) > 0);
    assert_true(kn_txn_descriptions_coordinator(d, 0) >= 0);
    const kn_topic_partition_list *parts = kn_txn_descriptions_partitions(d, 0);
    assert_int_equal(kn_topic_partition_list_count(parts), 2);
    assert_true(kn_topic_partition_list_find(parts, topic, 0) >= 0);
    assert_true(kn_topic_partition_list_find(parts, topic, 1) >= 0);
    assert_int_equal(kn_txn_descriptions_error(d, 1), KN_ERR_TRANSACTIONAL_ID_NOT_FOUND);
    kn_txn_descriptions_destroy(d);

    /* list_transactions: unfiltered, by state, by producer id, by pattern. */
    kn_txn_list *l = list_txns(admin, NULL);
    assert_true(listed(l, tid, "Ongoing"));
    kn_txn_list_destroy(l);
    const char *ongoing[] = {"Ongoing"}, *committed[] = {"CompleteCommit"};
    kn_txn_list_filter f = {.states = ongoing, .state_count = 1};
    l = list_txns(admin, &f);
    assert_true(listed(l, tid, NULL));
    kn_txn_list_destroy(l);
    f.states = committed;
    l = list_txns(admin, &f);
    assert_false(listed(l, tid, NULL));
    kn_txn_list_destroy(l);
    kn_txn_list_filter byid = {.producer_ids = &pid, .producer_id_count = 1};
    l = list_txns(admin, &byid);
    assert_int_equal(kn_txn_list_count(l), 1);
    assert_string_equal(kn_txn_list_id(l, 0), tid);
    assert_int_equal(kn_txn_list_producer_id(l, 0), pid);
    kn_txn_list_destroy(l);
    kn_txn_list_filter bypat = {.id_pattern = tid};
    l = list_txns(admin, &bypat);
    assert_int_equal(kn_txn_list_count(l), 1);
    assert_string_equal(kn_txn_list_id(l, 0), tid);
    kn_txn_list_destroy(l);

    /* The same, as Java sees it. */
    const char *oargs[3] = {tid, none, topic};
    lines ours = {0};
    oracle_same_as_java(admin, "txn", oargs, 3, txn_lines, &ours);
    char want[512];
    snprintf(want, sizeof want, "txn %s state=Ongoing ", tid);
    assert_true(has_line(&ours, want));
    snprintf(want, sizeof want, "txn %s error=TRANSACTIONAL_ID_NOT_FOUND", none);
    assert_true(has_line(&ours, want));
    snprintf(want, sizeof want, "listed %s producer=%lld state=Ongoing", tid, (long long)pid);
    assert_true(has_line(&ours, want));
    assert_true(has_line(&ours, " txn_start=0"));
    free_lines(&ours);

    /* describe_producers: the open transaction on topic-0. */
    ptrdiff_t k;
    kn_producer_states *s = producers(admin, topic, pid, &k);
    assert_true(k >= 0);
    assert_int_equal(kn_producer_states_producer_epoch(s, 0, (size_t)k), epoch);
    assert_int_equal(kn_producer_states_txn_start_offset(s, 0, (size_t)k), 0);
    /* -1 until a marker was written for the producer: then 0 is what
     * an abort passes (as kafka-transactions.sh does). */
    int32_t coord_epoch = kn_producer_states_coordinator_epoch(s, 0, (size_t)k);
    assert_true(coord_epoch >= -1);
    if (coord_epoch < 0)
        coord_epoch = 0;
    assert_true(kn_producer_states_last_sequence(s, 0, (size_t)k) >= 0);
    kn_producer_states_destroy(s);

    /* abort_transaction with a stale coordinator epoch is refused; with
     * the right values the partition's transaction is ended. */
    if (coord_epoch > 0)
        assert_int_equal(kn_admin_abort_transaction(admin, topic, 0, pid, (int16_t)epoch, coord_epoch - 1,
                                                    TIMEOUT_MS, es, sizeof es),
                         KN_ERR_TRANSACTION_COORDINATOR_FENCED);
    must(kn_admin_abort_transaction(admin, topic, 0, pid, (int16_t)epoch, coord_epoch, TIMEOUT_MS, es,
                                    sizeof es),
         "abort_transaction", es);
    s = producers(admin, topic, pid, &k);
    assert_true(k >= 0);
    assert_int_equal(kn_producer_states_txn_start_offset(s, 0, (size_t)k), -1);
    kn_producer_states_destroy(s);

    /* fence_producers: a new epoch; the coordinator ends the transaction. */
    const char *fence_ids[] = {tid};
    must(kn_admin_fence_producers(admin, fence_ids, 1, 0, TIMEOUT_MS, &d, es, sizeof es), "fence_producers",
         es);
    assert_int_equal(kn_txn_descriptions_count(d), 1);
    if (kn_txn_descriptions_error(d, 0))
        fail_msg("fence: %s", kn_txn_descriptions_error_message(d, 0));
    assert_int_equal(kn_txn_descriptions_producer_id(d, 0), pid);
    assert_true(kn_txn_descriptions_producer_epoch(d, 0) > epoch);
    kn_txn_descriptions_destroy(d);
    int64_t until = kn_test_now_ms() + TIMEOUT_MS;
    for (;;) {
        must(kn_admin_describe_transactions(admin, fence_ids, 1, TIMEOUT_MS, &d, es, sizeof es), "describe",
             es);
        bool ended =
            !kn_txn_descriptions_error(d, 0) && (!strcmp(kn_txn_descriptions_state(d, 0), "CompleteAbort") ||
                                                 !strcmp(kn_txn_descriptions_state(d, 0), "Empty"));
        kn_txn_descriptions_destroy(d);
        if (ended)
            break;
        if (kn_test_now_ms() > until)
            fail_msg("the fenced transaction did not end");
        sleep_ms(100);
    }
    int rc = kn_producer_commit_transaction(p, TIMEOUT_MS, es, sizeof es);
    if (rc != KN_ERR_PRODUCER_FENCED && rc != KN_ERR_INVALID_PRODUCER_EPOCH && rc != KN_ERR__FATAL)
        fail_msg("commit after the fence: %s (%s), want fenced", kn_err_name(rc), es);
    kn_producer_close(p, 5000);
    kn_producer_destroy(p);

    /* Bad input is refused before sending. */
    const char *empty[] = {""};
    assert_int_equal(kn_admin_describe_transactions(admin, empty, 1, TIMEOUT_MS, &d, es, sizeof es),
                     KN_ERR__INVALID_ARG);
    assert_int_equal(kn_admin_abort_transaction(admin, topic, -1, pid, 0, 0, TIMEOUT_MS, es, sizeof es),
                     KN_ERR__INVALID_ARG);
    kn_admin_destroy(admin);
}

int main(void) {
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_txn_admin)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}
