/*
 * it_producer_txn_v2.c: the transaction versions of KIP-890 against a
 * real broker (KAFKA_BOOTSTRAP). The cluster's finalized feature
 * transaction.version is set with our admin client (update_features)
 * and read back (describe_features) before each case; the level found
 * at the start is restored at the end. ctest runs the broker tests one
 * at a time, so no other test sees the changed level.
 *
 *  - A consume-transform-produce copy loop (one transaction per poll,
 *    send_offsets_to_transaction with the consumer's group metadata,
 *    every third transaction aborted and its input re-read) under
 *    version 2: no AddPartitionsToTxn nor AddOffsetsToTxn is sent and
 *    the producer epoch grows by one at every commit and abort (EndTxn
 *    v5); under version 1: both requests are sent and the epoch stays.
 *    Either way Java's read_committed console consumer reads every
 *    input value copied exactly once, a read_uncommitted one also reads
 *    the aborted copies, and the group's committed offsets are the
 *    input's end.
 *  - The KIP-890 protection (version 2): after a commit, a late write
 *    with the ended transaction's producer epoch (a raw Produce v12, as
 *    a zombie's delayed request would arrive) is refused with
 *    INVALID_PRODUCER_EPOCH or PRODUCER_FENCED, never becomes readable,
 *    and leaves no hanging transaction: the next transaction's records
 *    are read_committed-visible.
 *  - Version 2: a transaction whose only record the broker refused
 *    (MESSAGE_TOO_LARGE) can only be aborted, the abort succeeds and the
 *    next transaction commits.
 *  - The level changed under a running producer (1 -> 2, then 2 -> 1):
 *    as Java, the producer sees it at its next ApiVersions (a new
 *    connection; here connections.max.idle.ms closes the old ones) and
 *    switches when a transaction ends: 1 -> 2 with an epoch bump
 *    (InitProducerId), after which no AddPartitionsToTxn is sent and
 *    every EndTxn bumps the epoch; 2 -> 1 without a bump, after which
 *    AddPartitionsToTxn is sent again and the epoch stays. Java's
 *    read_committed consumer reads each committed record once.
 *  - Under both versions, a transaction the coordinator aborted after
 *    transaction.timeout.ms (it bumps the epoch): the next Produce gets
 *    INVALID_PRODUCER_EPOCH, which is abortable as in Java 4.x (not
 *    fatal): the state is ABORTABLE_ERROR, commit says
 *    TRANSACTION_ABORTABLE; the abort then succeeds under version 2 and
 *    the next transaction commits, while a version 1 coordinator
 *    answers the abort with PRODUCER_FENCED (fatal, as for Java).
 */
#include "kn_test.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "config/config.h"
#include "kafka_native.h"
#include "proto/generated/kp_apis.h"
#include "proto/generated/kp_produce.h"
#include "proto/record_batch.h"
#include "wire/wire.h"
#include "writer.h"

#define N_INPUT 600

static int16_t original_level = -1;

static void must(int rc, const char *what, const char *err) {
    if (rc)
        fail_msg("%s: %s: %s", what, kn_err_name(rc), err);
}

static kn_admin *admin_new(void) {
    kn_conf *conf = kn_conf_new(KN_CLIENT_ADMIN);
    kn_test_conf_set(conf, "bootstrap.servers", kn_test_bootstrap());
    char err[512];
    kn_admin *a = kn_admin_new(conf, err, sizeof err);
    kn_conf_destroy(conf);
    if (!a)
        fail_msg("kn_admin_new: %s", err);
    return a;
}

/* The finalized level of transaction.version (0 if not finalized) and
 * the highest one the broker supports. */
static int16_t txn_level(kn_admin *a, int16_t *supported_max) {
    kn_features *f = NULL;
    char err[512];
    must(kn_admin_describe_features(a, 30000, &f, err, sizeof err), "describe_features", err);
    int16_t level = 0;
    for (size_t i = 0; i < kn_features_finalized_count(f); i++)
        if (!strcmp(kn_features_finalized_name(f, i), "transaction.version"))
            level = kn_features_finalized_max_level(f, i);
    if (supported_max) {
        *supported_max = 0;
        for (size_t i = 0; i < kn_features_supported_count(f); i++)
            if (!strcmp(kn_features_supported_name(f, i), "transaction.version"))
                *supported_max = kn_features_supported_max_version(f, i);
    }
    kn_features_destroy(f);
    return level;
}

/* Sets transaction.version and waits until a broker answers with it
 * (the controller applies it first; brokers follow the metadata log). */
static void set_txn_level(int16_t want) {
    kn_admin *a = admin_new();
    int16_t now = txn_level(a, NULL);
    if (now != want) {
        kn_feature_update u = {"transaction.version", want,
                               want > now ? KN_FEATURE_UPGRADE : KN_FEATURE_SAFE_DOWNGRADE};
        char err[512];
        must(kn_admin_update_features(a, &u, 1, 0, 30000, err, sizeof err), "update_features", err);
        int64_t deadline = kn_test_now_ms() + 30000;
        while ((now = txn_level(a, NULL)) != want && kn_test_now_ms() < deadline)
            usleep(100 * 1000);
    }
    print_message("transaction.version finalized at %d\n", (int)now);
    assert_int_equal(now, want);
    kn_admin_close(a, 10000);
    kn_admin_destroy(a);
}

/* extra: NULL-terminated key, value pairs set after the defaults. */
static kn_producer *producer_with(const char *tid, kn_delivery_cb *dr, void *opaque, const char *const *extra) {
    kn_conf *conf = kn_conf_new(KN_CLIENT_PRODUCER);
    kn_test_conf_set(conf, "bootstrap.servers", kn_test_bootstrap());
    if (tid) {
        kn_test_conf_set(conf, "transactional.id", tid);
        kn_test_conf_set(conf, "transaction.timeout.ms", "30000");
    }
    for (size_t i = 0; extra && extra[i]; i += 2)
        kn_test_conf_set(conf, extra[i], extra[i + 1]);
    char err[512];
    kn_producer *p = kn_producer_new(conf, dr, opaque, err, sizeof err);
    kn_conf_destroy(conf);
    if (!p)
        fail_msg("kn_producer_new: %s", err);
    return p;
}

static kn_producer *producer(const char *tid, kn_delivery_cb *dr, void *opaque) {
    return producer_with(tid, dr, opaque, NULL);
}

static kn_producer_stats stats_of(kn_producer *p) {
    kn_producer_stats st = {.size = sizeof st};
    assert_int_equal(kn_producer_get_stats(p, &st), KN_OK);
    return st;
}

static void send_value(kn_producer *p, const char *topic, int32_t partition, const char *v) {
    char err[512];
    kn_record_out r = KN_RECORD_OUT_INIT;
    r.topic = topic;
    r.partition = partition;
    r.value = v;
    r.value_len = strlen(v);
    must(kn_producer_send(p, &r, err, sizeof err), "send", err);
}

/* Runs Java's console consumer over topic until it read max records
 * (0: until it has been idle for 20 s, which shows nothing more is
 * readable); returns how many lines equal each expected value
 * (counts[i] for "<prefix><i>", i < n) and how many lines match none. */
static void java_read(const char *topic, const char *isolation, int max, const char *prefix, int n,
                      int *counts, int *others, int *total) {
    char out[256], cmd[2048], limit[64] = "";
    if (max > 0)
        snprintf(limit, sizeof limit, "--max-messages %d ", max);
    snprintf(out, sizeof out, "/tmp/kn-it-txn-v2-%d-%s.txt", (int)getpid(), isolation);
    snprintf(cmd, sizeof cmd,
             "timeout 180 %s console-consumer --bootstrap-server %s --topic %s --from-beginning "
             "--isolation-level %s %s--timeout-ms 20000 > %s 2>/dev/null",
             kn_test_java_tool(), kn_test_bootstrap(), topic, isolation, limit, out);
    int rc = system(cmd);
    (void)rc; /* the timeout ends the tool with a status; the output counts */
    FILE *f = fopen(out, "r");
    assert_non_null(f);
    memset(counts, 0, (size_t)n * sizeof *counts);
    *others = *total = 0;
    char line[256];
    size_t plen = strlen(prefix);
    while (fgets(line, sizeof line, f)) {
        line[strcspn(line, "\r\n")] = '\0';
        (*total)++;
        char *end = NULL;
        long i = !strncmp(line, prefix, plen) ? strtol(line + plen, &end, 10) : -1;
        if (i >= 0 && i < n && end && *end == '\0')
            counts[i]++;
        else
            (*others)++;
    }
    fclose(f);
    unlink(out);
}

static int64_t committed_offset(const char *group, const char *topic, int32_t part) {
    kn_conf *conf = kn_conf_new(KN_CLIENT_CONSUMER);
    kn_test_conf_set(conf, "bootstrap.servers", kn_test_bootstrap());
    kn_test_conf_set(conf, "group.id", group);
    char err[512];
    kn_consumer *c = kn_consumer_new(conf, err, sizeof err);
    kn_conf_destroy(conf);
    if (!c)
        fail_msg("kn_consumer_new: %s", err);
    kn_topic_partition_list *l = kn_topic_partition_list_new();
    assert_true(kn_topic_partition_list_add(l, topic, part) >= 0);
    must(kn_consumer_committed(c, l, 30000), "committed", "");
    int64_t off = kn_topic_partition_list_offset(l, 0);
    kn_topic_partition_list_destroy(l);
    assert_int_equal(kn_consumer_close(c, -1), KN_OK);
    kn_consumer_destroy(c);
    return off;
}

/* ---- the copy loop ------------------------------------------------------ */

#define IN_PARTS  2
#define OUT_PARTS 3

static void copy_loop(int version) {
    set_txn_level((int16_t)version);
    char in[128], out[128], tid[128], group[128], err[512];
    snprintf(in, sizeof in, "%s", kn_test_topic("txnv-in"));
    snprintf(out, sizeof out, "%s", kn_test_topic("txnv-out"));
    snprintf(tid, sizeof tid, "%s", kn_test_topic("txnv-tid"));
    snprintf(group, sizeof group, "%s", kn_test_topic("txnv-grp"));
    kn_test_create_topic(in, IN_PARTS);
    kn_test_create_topic(out, OUT_PARTS);

    /* The input: N_INPUT values "v<i>", plain idempotent producer. */
    kn_producer *feed = producer(NULL, NULL, NULL);
    for (int i = 0; i < N_INPUT; i++) {
        char v[32];
        snprintf(v, sizeof v, "v%d", i);
        send_value(feed, in, i % IN_PARTS, v);
    }
    assert_int_equal(kn_producer_flush(feed, 60000), 0);
    assert_int_equal(kn_producer_close(feed, 10000), 0);
    kn_producer_destroy(feed);

    kn_conf *conf = kn_conf_new(KN_CLIENT_CONSUMER);
    kn_test_conf_set(conf, "bootstrap.servers", kn_test_bootstrap());
    kn_test_conf_set(conf, "group.id", group);
    kn_test_conf_set(conf, "enable.auto.commit", "false");
    kn_test_conf_set(conf, "isolation.level", "read_committed");
    kn_test_conf_set(conf, "auto.offset.reset", "earliest");
    kn_test_conf_set(conf, "max.poll.records", "70");
    kn_consumer *c = kn_consumer_new(conf, err, sizeof err);
    kn_conf_destroy(conf);
    if (!c)
        fail_msg("kn_consumer_new: %s", err);
    const char *topics[] = {in};
    must(kn_consumer_subscribe(c, topics, 1, NULL, NULL), "subscribe", "");

    kn_producer *p = producer(tid, NULL, NULL);
    must(kn_producer_init_transactions(p, 60000, err, sizeof err), "init_transactions", err);
    kn_producer_stats st = stats_of(p);
    assert_int_equal(st.transaction_version, version);
    assert_true(st.producer_id >= 0 && st.producer_epoch >= 0);
    int64_t pid0 = st.producer_id, epoch0 = st.producer_epoch;

    int committed = 0, aborted = 0, ends = 0;
    int64_t deadline = kn_test_now_ms() + 180000;
    while (committed < N_INPUT && kn_test_now_ms() < deadline) {
        kn_records *r = NULL;
        must(kn_consumer_poll(c, 500, &r, err, sizeof err), "poll", err);
        size_t n = kn_records_count(r);
        if (n == 0) {
            kn_records_free(r);
            continue;
        }
        /* The next offset per input partition, and where this batch
         * started (to re-read it after an abort). */
        int64_t first[IN_PARTS], next[IN_PARTS];
        for (int i = 0; i < IN_PARTS; i++)
            first[i] = next[i] = -1;
        must(kn_producer_begin_transaction(p, err, sizeof err), "begin", err);
        for (size_t i = 0; i < n; i++) {
            int32_t part = kn_records_partition(r, i);
            int64_t off = kn_records_offset(r, i);
            assert_true(part >= 0 && part < IN_PARTS);
            if (first[part] < 0)
                first[part] = off;
            next[part] = off + 1;
            size_t len;
            const char *v = kn_records_value(r, i, &len);
            char copy[64];
            snprintf(copy, sizeof copy, "c-%.*s", (int)len, v);
            send_value(p, out, -1, copy);
        }
        kn_records_free(r);
        kn_topic_partition_list *offs = kn_topic_partition_list_new();
        for (int i = 0; i < IN_PARTS; i++)
            if (next[i] >= 0) {
                int idx = kn_topic_partition_list_add(offs, in, i);
                assert_true(idx >= 0);
                kn_topic_partition_list_set_offset(offs, (size_t)idx, next[i]);
            }
        kn_group_metadata *gm = kn_consumer_group_metadata(c);
        assert_non_null(gm);
        must(kn_producer_send_offsets_to_transaction(p, offs, gm, 60000, err, sizeof err), "send_offsets",
             err);
        kn_group_metadata_destroy(gm);
        kn_topic_partition_list_destroy(offs);
        if (ends % 3 == 1) {
            /* Aborted: its copies stay invisible to read_committed and
             * the input is read again from where the batch started. */
            must(kn_producer_flush(p, 60000), "flush", "");
            must(kn_producer_abort_transaction(p, 60000, err, sizeof err), "abort", err);
            for (int i = 0; i < IN_PARTS; i++)
                if (first[i] >= 0)
                    assert_int_equal(kn_consumer_seek(c, in, i, first[i]), KN_OK);
            aborted += (int)n;
        } else {
            must(kn_producer_commit_transaction(p, 60000, err, sizeof err), "commit", err);
            committed += (int)n;
        }
        ends++;
        st = stats_of(p);
        /* Version 2: EndTxn v5 bumped the epoch of every transaction;
         * version 1: the epoch of init_transactions stays. */
        assert_int_equal(st.producer_id, pid0);
        assert_int_equal(st.producer_epoch, version == 2 ? epoch0 + ends : epoch0);
    }
    st = stats_of(p);
    print_message("version %d: %d transactions (%d records committed, %d aborted), epoch %lld -> %lld, "
                  "AddPartitionsToTxn %lld, AddOffsetsToTxn %lld\n",
                  version, ends, committed, aborted, (long long)epoch0, (long long)st.producer_epoch,
                  (long long)st.txn_add_partitions_requests, (long long)st.txn_add_offsets_requests);
    assert_int_equal(committed, N_INPUT);
    assert_true(aborted > 0);
    assert_int_equal(st.transaction_version, version);
    if (version == 2) {
        /* The partitions and the offsets were added by the broker. */
        assert_int_equal(st.txn_add_partitions_requests, 0);
        assert_int_equal(st.txn_add_offsets_requests, 0);
    } else {
        assert_true(st.txn_add_partitions_requests >= ends);
        assert_int_equal(st.txn_add_offsets_requests, ends);
    }
    assert_int_equal(kn_producer_close(p, 10000), 0);
    kn_producer_destroy(p);
    assert_int_equal(kn_consumer_close(c, 10000), KN_OK);
    kn_consumer_destroy(c);

    /* The group's offsets moved with the committed transactions only. */
    assert_int_equal(committed_offset(group, in, 0) + committed_offset(group, in, 1), N_INPUT);

    /* Java's read_committed consumer: each input copied exactly once. */
    static int counts[N_INPUT];
    int others, total;
    java_read(out, "read_committed", 0, "c-v", N_INPUT, counts, &others, &total);
    int once = 0;
    for (int i = 0; i < N_INPUT; i++)
        once += counts[i] == 1;
    print_message("Java read_committed: %d records, %d inputs exactly once, %d others\n", total, once,
                  others);
    assert_int_equal(once, N_INPUT);
    assert_int_equal(total, N_INPUT);
    /* ... while the log also holds the aborted copies. */
    java_read(out, "read_uncommitted", N_INPUT + aborted, "c-v", N_INPUT, counts, &others, &total);
    print_message("Java read_uncommitted: %d records\n", total);
    assert_int_equal(total, N_INPUT + aborted);
}

static void test_copy_loop_v2(void **st) {
    (void)st;
    copy_loop(2);
}

static void test_copy_loop_v1(void **st) {
    (void)st;
    copy_loop(1);
}

/* ---- a late write of an ended transaction -------------------------------- */

/* Sends one transactional record as a raw Produce v12 to the leader of
 * topic-0, with the given producer id, epoch and sequence: what a
 * delayed request of an earlier transaction looks like to the broker.
 * Returns the partition's error code. */
static int late_produce(const char *tid, const char *topic, int64_t pid, int16_t epoch, int32_t seq) {
    kn_conf *conf = kn_conf_new(KN_CLIENT_PRODUCER);
    kn_test_conf_set(conf, "bootstrap.servers", kn_test_bootstrap());
    char err[512];
    knw_client *w = knw_client_new(conf, "producer", err, sizeof err);
    kn_conf_destroy(conf);
    if (!w)
        fail_msg("knw_client_new: %s", err);
    const char *names[] = {topic};
    knw_metadata_add_topics(w, names, 1);
    int32_t leader = -1;
    int64_t deadline = kn_test_now_ms() + 30000;
    while (leader < 0 && kn_test_now_ms() < deadline) {
        int merr = 0;
        knw_metadata *md = knw_metadata_wait(w, false, kn_test_now_ms(), 5000, &merr);
        const knw_topic *t = md ? knw_metadata_topic(md, topic) : NULL;
        if (t && t->partition_count > 0)
            leader = t->partitions[0].leader;
        if (md)
            knw_metadata_release(md);
    }
    assert_true(leader >= 0);

    kn_rb_builder_conf bc;
    kn_rb_builder_conf_init(&bc);
    bc.transactional = true;
    bc.producer_id = pid;
    bc.producer_epoch = epoch;
    bc.base_sequence = seq;
    kn_rb_builder b;
    kn_rb_builder_init(&b, &bc, 0);
    kn_bytes key = {NULL, -1}, value = {(const uint8_t *)"LATE", 4};
    assert_int_equal(kn_rb_builder_append(&b, 0, 1700000000000LL, key, value, NULL, 0), 0);
    kn_wr batch;
    kn_wr_init(&batch, 256, 0);
    assert_int_equal(kn_rb_builder_finish(&b, &batch, err, sizeof err), 0);

    kp_ProduceRequest req;
    kp_ProduceRequest_init(&req);
    kp_ProduceRequest_TopicProduceData td;
    kp_ProduceRequest_TopicProduceData_init(&td);
    kp_ProduceRequest_PartitionProduceData pd;
    kp_ProduceRequest_PartitionProduceData_init(&pd);
    req.transactional_id = kn_str_c(tid);
    req.acks = -1;
    req.timeout_ms = 30000;
    td.name = kn_str_c(topic);
    pd.index = 0;
    pd.records.ptr = batch.buf;
    pd.records.len = (int32_t)batch.len;
    td.partition_data.items = &pd;
    td.partition_data.count = 1;
    req.topic_data.items = &td;
    req.topic_data.count = 1;
    knw_resp *r = knw_call(w, leader, KP_API_PRODUCE, 12, 12, &req, 30000);
    int code;
    if (r->err) {
        code = r->err;
        print_message("late Produce: %s: %s\n", kn_err_name(r->err), r->errstr);
    } else {
        const kp_ProduceResponse *pr = r->body;
        assert_int_equal(pr->responses.count, 1);
        assert_int_equal(pr->responses.items[0].partition_responses.count, 1);
        const kp_ProduceResponse_PartitionProduceResponse *pp =
            &pr->responses.items[0].partition_responses.items[0];
        code = pp->error_code;
        int mlen = pp->error_message.len > 0 ? (int)pp->error_message.len : 0;
        print_message("late Produce v%d (producer %lld, epoch %d, sequence %d): %s%s%.*s\n",
                      (int)r->api_version, (long long)pid, (int)epoch, (int)seq, kn_err_name(code),
                      mlen ? ": " : "", mlen, mlen ? pp->error_message.ptr : "");
    }
    knw_resp_free(r);
    kn_wr_free(&batch);
    kn_rb_builder_free(&b);
    knw_client_stop(w);
    knw_client_destroy(w);
    return code;
}

static void test_late_write_fenced(void **st) {
    (void)st;
    set_txn_level(2);
    char topic[128], tid[128], err[512];
    snprintf(topic, sizeof topic, "%s", kn_test_topic("txnv-late"));
    snprintf(tid, sizeof tid, "%s", kn_test_topic("txnv-late-tid"));
    kn_test_create_topic(topic, 1);
    kn_producer *p = producer(tid, NULL, NULL);
    must(kn_producer_init_transactions(p, 60000, err, sizeof err), "init_transactions", err);

    must(kn_producer_begin_transaction(p, err, sizeof err), "begin 1", err);
    send_value(p, topic, 0, "C0");
    send_value(p, topic, 0, "C1");
    send_value(p, topic, 0, "C2");
    must(kn_producer_flush(p, 60000), "flush", "");
    kn_producer_stats s1 = stats_of(p);
    must(kn_producer_commit_transaction(p, 60000, err, sizeof err), "commit 1", err);
    kn_producer_stats s2 = stats_of(p);
    assert_int_equal(s2.producer_id, s1.producer_id);
    assert_int_equal(s2.producer_epoch, s1.producer_epoch + 1);

    /* Transaction 1's epoch, its next sequence: refused, since the
     * commit moved the epoch on (Java reports the same codes as
     * InvalidProducerEpochException / ProducerFencedException). */
    int code = late_produce(tid, topic, s1.producer_id, (int16_t)s1.producer_epoch, 3);
    assert_true(code == KN_ERR_INVALID_PRODUCER_EPOCH || code == KN_ERR_PRODUCER_FENCED);

    /* The producer goes on: the partition is not left hanging. */
    must(kn_producer_begin_transaction(p, err, sizeof err), "begin 2", err);
    send_value(p, topic, 0, "C3");
    send_value(p, topic, 0, "C4");
    must(kn_producer_commit_transaction(p, 60000, err, sizeof err), "commit 2", err);
    assert_int_equal(stats_of(p).producer_epoch, s1.producer_epoch + 2);
    assert_int_equal(kn_producer_close(p, 10000), 0);
    kn_producer_destroy(p);

    int counts[5], others, total;
    java_read(topic, "read_committed", 0, "C", 5, counts, &others, &total);
    print_message("Java read_committed: %d records, %d others\n", total, others);
    for (int i = 0; i < 5; i++)
        assert_int_equal(counts[i], 1);
    assert_int_equal(others, 0);
    /* Its first five records: "LATE" would be among them had it been
     * appended after transaction 1. */
    java_read(topic, "read_uncommitted", 5, "C", 5, counts, &others, &total);
    assert_int_equal(total, 5);
    assert_int_equal(others, 0);
}

/* Version 2: a transaction whose only record the broker refused (too
 * large for the topic) is aborted, and the producer goes on. */
static void test_abort_refused_only(void **st) {
    (void)st;
    set_txn_level(2);
    char topic[128], tid[128], cmd[1024], err[512];
    snprintf(topic, sizeof topic, "%s", kn_test_topic("txnv-big"));
    snprintf(tid, sizeof tid, "%s", kn_test_topic("txnv-big-tid"));
    snprintf(cmd, sizeof cmd,
             "%s topics --bootstrap-server %s --create --topic %s --partitions 1 "
             "--config max.message.bytes=2000 >/dev/null 2>&1",
             kn_test_java_tool(), kn_test_bootstrap(), topic);
    if (system(cmd) != 0)
        fail_msg("cannot create topic %s", topic);
    kn_producer *p = producer(tid, NULL, NULL);
    must(kn_producer_init_transactions(p, 60000, err, sizeof err), "init_transactions", err);
    static char big[5000];
    memset(big, 'B', sizeof big - 1);
    must(kn_producer_begin_transaction(p, err, sizeof err), "begin 1", err);
    send_value(p, topic, 0, big);
    int rc = kn_producer_commit_transaction(p, 60000, err, sizeof err);
    print_message("commit with only a refused record: %s: %s\n", kn_err_name(rc), err);
    assert_int_equal(rc, KN_ERR_TRANSACTION_ABORTABLE);
    must(kn_producer_abort_transaction(p, 60000, err, sizeof err), "abort", err);
    assert_string_equal(kn_producer_transaction_state(p), "READY");
    must(kn_producer_begin_transaction(p, err, sizeof err), "begin 2", err);
    send_value(p, topic, 0, "C0");
    must(kn_producer_commit_transaction(p, 60000, err, sizeof err), "commit 2", err);
    assert_int_equal(kn_producer_close(p, 10000), 0);
    kn_producer_destroy(p);
}

/* ---- the level changed under a running producer ---------------------- */

/* Records "<prefix><i>" for i in [from, to) in one transaction on
 * topic-0 and topic-1; commits (or aborts). */
static void one_txn(kn_producer *p, const char *topic, const char *prefix, int from, int to, bool commit) {
    char err[512], v[32];
    must(kn_producer_begin_transaction(p, err, sizeof err), "begin", err);
    for (int i = from; i < to; i++) {
        snprintf(v, sizeof v, "%s%d", prefix, i);
        send_value(p, topic, i % 2, v);
    }
    if (commit) {
        must(kn_producer_commit_transaction(p, 60000, err, sizeof err), "commit", err);
        return;
    }
    /* Written first, so the abort has something to mark (and, under
     * version 2, an EndTxn to send). */
    must(kn_producer_flush(p, 60000), "flush", "");
    must(kn_producer_abort_transaction(p, 60000, err, sizeof err), "abort", err);
}

/* Idle connections close after IDLE_MS: sleeping past it makes the
 * next request open a new connection, whose ApiVersions answer carries
 * the new finalized level (neither Java nor we ask again otherwise). */
#define IDLE_MS "1500"

static void level_changed(int16_t level) {
    set_txn_level(level);
    usleep(4000 * 1000);
}

static void test_version_change_between_txns(void **st) {
    (void)st;
    set_txn_level(1);
    char topic[128], tid[128], err[512];
    snprintf(topic, sizeof topic, "%s", kn_test_topic("txnv-move"));
    snprintf(tid, sizeof tid, "%s", kn_test_topic("txnv-move-tid"));
    kn_test_create_topic(topic, 2);
    const char *extra[] = {"connections.max.idle.ms", IDLE_MS, NULL};
    kn_producer *p = producer_with(tid, NULL, NULL, extra);
    must(kn_producer_init_transactions(p, 60000, err, sizeof err), "init_transactions", err);
    kn_producer_stats s0 = stats_of(p);
    assert_int_equal(s0.transaction_version, 1);

    /* T0 under version 1: partitions added explicitly, epoch kept. */
    one_txn(p, topic, "M", 0, 10, true);
    kn_producer_stats s1 = stats_of(p);
    assert_int_equal(s1.transaction_version, 1);
    assert_true(s1.txn_add_partitions_requests >= 1);
    assert_int_equal(s1.producer_epoch, s0.producer_epoch);

    /* Upgrade. T1 began under version 1 and ends under it (Java fixes
     * the version of a transaction when it starts); its end reads the
     * new level and bumps the epoch with InitProducerId, so nothing
     * added under version 1 counts as added under version 2. */
    level_changed(2);
    one_txn(p, topic, "M", 10, 20, true);
    kn_producer_stats s2 = stats_of(p);
    print_message("1 -> 2: after T1 version %lld, epoch %lld -> %lld, AddPartitionsToTxn %lld\n",
                  (long long)s2.transaction_version, (long long)s1.producer_epoch,
                  (long long)s2.producer_epoch, (long long)s2.txn_add_partitions_requests);
    assert_int_equal(s2.transaction_version, 2);
    assert_int_equal(s2.producer_id, s0.producer_id);
    assert_int_equal(s2.producer_epoch, s1.producer_epoch + 1);

    /* T2, T3 (aborted), T4 under version 2: no AddPartitionsToTxn, the
     * epoch one higher after each EndTxn. */
    one_txn(p, topic, "M", 20, 30, true);
    one_txn(p, topic, "X", 0, 10, false);
    one_txn(p, topic, "M", 30, 40, true);
    kn_producer_stats s3 = stats_of(p);
    assert_int_equal(s3.transaction_version, 2);
    assert_int_equal(s3.txn_add_partitions_requests, s2.txn_add_partitions_requests);
    assert_int_equal(s3.producer_epoch, s2.producer_epoch + 3);

    /* Downgrade: T5 (begun under version 2) ends with its EndTxn v5
     * bump; from T6 on, version 1: AddPartitionsToTxn again, the epoch
     * stays, and no InitProducerId is needed (Java bumps only upwards). */
    level_changed(1);
    one_txn(p, topic, "M", 40, 50, true);
    kn_producer_stats s4 = stats_of(p);
    assert_int_equal(s4.transaction_version, 1);
    assert_int_equal(s4.producer_epoch, s3.producer_epoch + 1);
    assert_int_equal(s4.txn_add_partitions_requests, s3.txn_add_partitions_requests);
    one_txn(p, topic, "M", 50, 60, true);
    kn_producer_stats s5 = stats_of(p);
    print_message("2 -> 1: version %lld, epoch %lld, AddPartitionsToTxn %lld -> %lld\n",
                  (long long)s5.transaction_version, (long long)s5.producer_epoch,
                  (long long)s4.txn_add_partitions_requests, (long long)s5.txn_add_partitions_requests);
    assert_int_equal(s5.transaction_version, 1);
    assert_int_equal(s5.producer_epoch, s4.producer_epoch);
    assert_true(s5.txn_add_partitions_requests > s4.txn_add_partitions_requests);
    assert_int_equal(kn_producer_close(p, 10000), 0);
    kn_producer_destroy(p);

    /* Nothing lost, nothing twice, nothing of the aborted T3. */
    int counts[60], others, total;
    java_read(topic, "read_committed", 0, "M", 60, counts, &others, &total);
    print_message("Java read_committed: %d records, %d others\n", total, others);
    for (int i = 0; i < 60; i++)
        assert_int_equal(counts[i], 1);
    assert_int_equal(others, 0);
}

/* ---- a transaction the coordinator aborted after its timeout ---------- */

typedef struct dr_seen {
    int err;      /* the first failed record's error */
    int failed;   /* records reported failed */
} dr_seen;

static void on_dr(kn_producer *p, const kn_delivery *d, void *opaque) {
    (void)p;
    dr_seen *seen = opaque;
    if (kn_delivery_error(d)) {
        if (!seen->failed)
            seen->err = kn_delivery_error(d);
        seen->failed++;
        print_message("record failed: %s: %s\n", kn_err_name(kn_delivery_error(d)), kn_delivery_errstr(d));
    }
}

static void timed_out_txn(int version) {
    set_txn_level((int16_t)version);
    char topic[128], tid[128], err[512];
    snprintf(topic, sizeof topic, "%s", kn_test_topic("txnv-expire"));
    snprintf(tid, sizeof tid, "%s", kn_test_topic("txnv-expire-tid"));
    kn_test_create_topic(topic, 1);
    dr_seen seen = {0, 0};
    const char *extra[] = {"transaction.timeout.ms", "2000", NULL};
    kn_producer *p = producer_with(tid, on_dr, &seen, extra);
    must(kn_producer_init_transactions(p, 60000, err, sizeof err), "init_transactions", err);
    kn_producer_stats s0 = stats_of(p);
    assert_int_equal(s0.transaction_version, version);

    must(kn_producer_begin_transaction(p, err, sizeof err), "begin 1", err);
    send_value(p, topic, 0, "E0");
    must(kn_producer_flush(p, 60000), "flush", "");
    assert_int_equal(seen.failed, 0);
    /* The coordinator aborts it after 2 s, at its next check (the
     * broker's transaction.abort.timed.out.transaction.cleanup.interval.ms,
     * 10 s by default), and bumps the epoch. */
    usleep(15000 * 1000);
    send_value(p, topic, 0, "E1");
    must(kn_producer_flush(p, 60000), "flush", "");
    kn_producer_poll(p, 0);
    print_message("version %d: the late record: %s, state %s\n", version, kn_err_name(seen.err),
                  kn_producer_transaction_state(p));
    assert_int_equal(seen.failed, 1);
    assert_int_equal(seen.err, KN_ERR_INVALID_PRODUCER_EPOCH);
    /* Abortable, not fatal (Java 4.x: InvalidProducerEpochException);
     * before, the producer was fatal here already. */
    assert_string_equal(kn_producer_transaction_state(p), "ABORTABLE_ERROR");
    int rc = kn_producer_commit_transaction(p, 60000, err, sizeof err);
    print_message("commit: %s: %s\n", kn_err_name(rc), err);
    assert_int_equal(rc, KN_ERR_TRANSACTION_ABORTABLE);
    assert_string_equal(kn_producer_transaction_state(p), "ABORTABLE_ERROR");
    /* The abort's EndTxn carries the old epoch; the coordinator's
     * answer decides, as for Java. Version 1: it counts the timed-out
     * transaction's epoch as fenced (strict epoch equality): the abort
     * gets PRODUCER_FENCED, fatal. Version 2: it takes the abort as a
     * retry of the one it made, answers with the bumped epoch, and the
     * producer goes on. */
    rc = kn_producer_abort_transaction(p, 60000, err, sizeof err);
    print_message("abort: %s: %s, state %s\n", kn_err_name(rc), rc ? err : "", kn_producer_transaction_state(p));
    bool goes_on = version == 2;
    assert_int_equal(rc, goes_on ? 0 : KN_ERR_PRODUCER_FENCED);
    if (goes_on) {
        assert_string_equal(kn_producer_transaction_state(p), "READY");
        kn_producer_stats s1 = stats_of(p);
        print_message("epoch %lld -> %lld\n", (long long)s0.producer_epoch, (long long)s1.producer_epoch);
        assert_true(s1.producer_epoch > s0.producer_epoch || s1.producer_id != s0.producer_id);
        must(kn_producer_begin_transaction(p, err, sizeof err), "begin 2", err);
        send_value(p, topic, 0, "E2");
        must(kn_producer_commit_transaction(p, 60000, err, sizeof err), "commit 2", err);
        assert_int_equal(seen.failed, 1);
    } else {
        assert_int_equal(rc, KN_ERR_PRODUCER_FENCED);
        assert_string_equal(kn_producer_transaction_state(p), "FATAL_ERROR");
    }
    int crc = kn_producer_close(p, 10000);
    if (goes_on)
        assert_int_equal(crc, 0);
    kn_producer_destroy(p);

    int counts[3], others, total;
    java_read(topic, "read_committed", 0, "E", 3, counts, &others, &total);
    print_message("Java read_committed: %d records (E0 %d, E1 %d, E2 %d)\n", total, counts[0], counts[1],
                  counts[2]);
    assert_int_equal(counts[0], 0);
    assert_int_equal(counts[1], 0);
    assert_int_equal(counts[2], goes_on ? 1 : 0);
    assert_int_equal(others, 0);
}

static void test_timed_out_abortable_v1(void **st) {
    (void)st;
    timed_out_txn(1);
}

static void test_timed_out_abortable_v2(void **st) {
    (void)st;
    timed_out_txn(2);
}

static int group_setup(void **st) {
    (void)st;
    kn_admin *a = admin_new();
    int16_t supported = 0;
    original_level = txn_level(a, &supported);
    kn_admin_close(a, 10000);
    kn_admin_destroy(a);
    print_message("transaction.version: finalized %d, supported up to %d\n", (int)original_level,
                  (int)supported);
    if (supported < 2) {
        print_message("the broker does not support transaction.version 2: skipped\n");
        exit(77);
    }
    return 0;
}

static int group_teardown(void **st) {
    (void)st;
    if (original_level >= 1)
        set_txn_level(original_level);
    return 0;
}

int main(void) {
    kn_test_bootstrap();
    const char *filter = getenv("KN_TEST_FILTER");
    if (filter && *filter)
        cmocka_set_test_filter(filter);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_copy_loop_v2),
        cmocka_unit_test(test_late_write_fenced),
        cmocka_unit_test(test_abort_refused_only),
        cmocka_unit_test(test_copy_loop_v1),
        cmocka_unit_test(test_version_change_between_txns),
        cmocka_unit_test(test_timed_out_abortable_v1),
        cmocka_unit_test(test_timed_out_abortable_v2),
    };
    return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
