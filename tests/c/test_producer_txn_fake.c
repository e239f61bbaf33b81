/*
 * test_producer_txn_fake.c: a transactional producer under transaction
 * version 2 (KIP-890 part 2) against a fake broker, for the one case a
 * real broker cannot show in a test's time: the producer epoch running
 * out. A real coordinator bumps the epoch at every EndTxn v5 and, when
 * the bump would reach Short.MAX_VALUE, answers with a new producer id
 * at epoch 0; getting there takes 32,766 transactions. The fake starts
 * the producer at epoch 32766 (Short.MAX_VALUE - 1, InitProducerId) and
 * answers the first EndTxn with producer id 2000, epoch 0, as the
 * coordinator does at that point. The producer must take the new id:
 * the next transaction's batches and EndTxn carry (2000, 0), every
 * partition's sequences start at 0 again, and the id after that one
 * bumps as usual. The real-broker side of version 2 (the per-transaction
 * bump, the fenced late write) is it_producer_txn_v2.c.
 *
 * Also INVALID_PRODUCER_ID_MAPPING, which a real broker only sends once
 * the transactional id expired (transactional.id.expiration.ms, 7 days by
 * default): from Produce (version 2) or AddPartitionsToTxn (version 1)
 * it is fatal, as Java 4.x makes it (KAFKA-18019: recovering by a new
 * InitProducerId could process input twice); UNKNOWN_PRODUCER_ID from
 * AddPartitionsToTxn and INVALID_PRODUCER_EPOCH from Produce stay
 * abortable.
 *
 * The fake serves ApiVersions (with transaction.version finalized at 2,
 * or none: version 1), Metadata (topic "t", partition 0 on node 1),
 * FindCoordinator (node 1), InitProducerId, AddPartitionsToTxn (v3, the
 * partition error a case sets), Produce (records each batch's producer
 * id, epoch and base sequence; the partition error a case sets) and
 * EndTxn (scripted answers).
 */
#include "kn_test.h"

#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "fake_broker.h"
#include "fake_metadata.h"
#include "kn_alloc.h"
#include "proto/generated/kp_add_partitions_to_txn.h"
#include "proto/generated/kp_apis.h"
#include "proto/generated/kp_end_txn.h"
#include "proto/generated/kp_find_coordinator.h"
#include "proto/generated/kp_init_producer_id.h"
#include "proto/generated/kp_metadata.h"
#include "proto/generated/kp_produce.h"

#define MAX_SEEN 32

/* What one Produce batch or EndTxn carried. */
typedef struct seen {
    int64_t pid;
    int16_t epoch;
    int32_t seq;       /* Produce: base sequence; EndTxn: -1 */
    int16_t ver;       /* the request's version */
    bool commit;       /* EndTxn */
} seen;

typedef struct fake {
    kn_fake_broker *fb;
    int port;
    pthread_mutex_t mu;
    int64_t init_pid;
    int16_t init_epoch;
    /* EndTxn answers, in order; past the script: the same id, epoch+1. */
    int64_t end_pid[4];
    int16_t end_epoch[4];
    int nend_script;
    seen produce[MAX_SEEN];
    int nproduce;
    seen end[MAX_SEEN];
    int nend;
    int64_t next_offset;
    bool txn_v1;         /* ApiVersions without transaction.version: version 1 */
    int16_t produce_err; /* every Produce partition answers it (0: success) */
    int16_t add_err;     /* every AddPartitionsToTxn partition answers it */
    int nadd;            /* AddPartitionsToTxn requests */
} fake;

static const kn_uuid topic_id = {{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16}};

static uint32_t be32(const uint8_t *p) {
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

/* ApiVersions with transaction.version finalized at 2 (a 4.x cluster),
 * or without the feature (version 1). */
static void answer_api_versions(fake *f, kp_ApiVersionsResponse *r, kn_arena *a) {
    kn_fake_api_versions(a, r);
    pthread_mutex_lock(&f->mu);
    bool v1 = f->txn_v1;
    pthread_mutex_unlock(&f->mu);
    if (v1)
        return;
    kp_ApiVersionsResponse_FinalizedFeatureKey *ff = kn_arena_calloc(a, 1, sizeof *ff);
    ff->name = kn_str_c("transaction.version");
    ff->max_version_level = 2;
    ff->min_version_level = 2;
    r->finalized_features.items = ff;
    r->finalized_features.count = 1;
    r->finalized_features_epoch = 7;
}

static void answer_find_coordinator(fake *f, const kn_fake_request *rq, kp_FindCoordinatorResponse *r,
                                    kn_arena *a) {
    const kp_FindCoordinatorRequest *q = kn_fake_decode_request(a, rq);
    if (rq->ver < 4) {
        r->node_id = 1;
        r->host = kn_str_c("127.0.0.1");
        r->port = f->port;
        return;
    }
    int32_t n = q->coordinator_keys.count;
    r->coordinators.items = kn_arena_calloc(a, (size_t)n + 1, sizeof(*r->coordinators.items));
    r->coordinators.count = n;
    for (int32_t i = 0; i < n; i++) {
        kp_FindCoordinatorResponse_Coordinator *co = &r->coordinators.items[i];
        co->key = q->coordinator_keys.items[i];
        co->node_id = 1;
        co->host = kn_str_c("127.0.0.1");
        co->port = f->port;
        co->error_message.len = -1;
    }
}

/* Every batch accepted; its producer id, epoch and sequence noted
 * (record batch v2: producerId at byte 43, epoch 51, sequence 53). */
static void answer_produce(fake *f, const kn_fake_request *rq, kp_ProduceResponse *r, kn_arena *a) {
    const kp_ProduceRequest *q = kn_fake_decode_request(a, rq);
    r->responses.count = q->topic_data.count;
    r->responses.items = kn_arena_calloc(a, (size_t)q->topic_data.count + 1, sizeof(*r->responses.items));
    pthread_mutex_lock(&f->mu);
    for (int32_t t = 0; t < q->topic_data.count; t++) {
        const kp_ProduceRequest_TopicProduceData *td = &q->topic_data.items[t];
        int32_t n = td->partition_data.count;
        kp_ProduceResponse_PartitionProduceResponse *ps = kn_arena_calloc(a, (size_t)n + 1, sizeof(*ps));
        for (int32_t i = 0; i < n; i++) {
            const kn_bytes *rec = &td->partition_data.items[i].records;
            kp_ProduceResponse_PartitionProduceResponse_init(&ps[i]);
            ps[i].index = td->partition_data.items[i].index;
            ps[i].base_offset = f->produce_err ? -1 : f->next_offset;
            ps[i].error_code = f->produce_err;
            if (rec->ptr && rec->len >= 61 && f->nproduce < MAX_SEEN) {
                const uint8_t *b = rec->ptr;
                seen *s = &f->produce[f->nproduce++];
                s->pid = (int64_t)((uint64_t)be32(b + 43) << 32 | be32(b + 47));
                s->epoch = (int16_t)(b[51] << 8 | b[52]);
                s->seq = (int32_t)be32(b + 53);
                s->ver = rq->ver;
                f->next_offset += (int64_t)be32(b + 57);
            }
        }
        r->responses.items[t].name = td->name;
        r->responses.items[t].partition_responses.items = ps;
        r->responses.items[t].partition_responses.count = n;
    }
    pthread_mutex_unlock(&f->mu);
}

/* Every partition answered with f->add_err (v3 and below). */
static void answer_add_partitions(fake *f, const kn_fake_request *rq, kp_AddPartitionsToTxnResponse *r,
                                  kn_arena *a) {
    const kp_AddPartitionsToTxnRequest *q = kn_fake_decode_request(a, rq);
    pthread_mutex_lock(&f->mu);
    f->nadd++;
    int16_t err = f->add_err;
    pthread_mutex_unlock(&f->mu);
    int32_t nt = q->v3_and_below_topics.count;
    kp_AddPartitionsToTxnResponse_AddPartitionsToTxnTopicResult *tr =
        kn_arena_calloc(a, (size_t)nt + 1, sizeof(*tr));
    for (int32_t t = 0; t < nt; t++) {
        const kp_AddPartitionsToTxnRequest_AddPartitionsToTxnTopic *qt = &q->v3_and_below_topics.items[t];
        kp_AddPartitionsToTxnResponse_AddPartitionsToTxnPartitionResult *pr =
            kn_arena_calloc(a, (size_t)qt->partitions.count + 1, sizeof(*pr));
        for (int32_t i = 0; i < qt->partitions.count; i++) {
            pr[i].partition_index = qt->partitions.items[i];
            pr[i].partition_error_code = err;
        }
        tr[t].name = qt->name;
        tr[t].results_by_partition.items = pr;
        tr[t].results_by_partition.count = qt->partitions.count;
    }
    r->results_by_topic_v3_and_below.items = tr;
    r->results_by_topic_v3_and_below.count = nt;
}

static void answer_end_txn(fake *f, const kn_fake_request *rq, kp_EndTxnResponse *r, kn_arena *a) {
    const kp_EndTxnRequest *q = kn_fake_decode_request(a, rq);
    pthread_mutex_lock(&f->mu);
    int i = f->nend;
    if (f->nend < MAX_SEEN)
        f->end[f->nend++] = (seen){q->producer_id, q->producer_epoch, -1, rq->ver, q->committed};
    if (rq->ver < 5) {
        /* no producer id nor epoch in the answer before v5 */
    } else if (i < f->nend_script) {
        r->producer_id = f->end_pid[i];
        r->producer_epoch = f->end_epoch[i];
    } else {
        r->producer_id = q->producer_id;
        r->producer_epoch = (int16_t)(q->producer_epoch + 1);
    }
    pthread_mutex_unlock(&f->mu);
}

static uint8_t *answer(void *opaque, const kn_fake_request *rq, size_t *len) {
    fake *f = opaque;
    int16_t key = rq->key;
    kn_arena a;
    kn_arena_init(&a, 0);
    void *body = kn_arena_alloc(&a, kp_api_get(key)->resp_size);
    kp_api_get(key)->resp_init(body);
    if (key == KP_API_API_VERSIONS) {
        answer_api_versions(f, body, &a);
    } else if (key == KP_API_METADATA) {
        kn_fake_metadata_one_partition(body, &a, &f->port, 1, &topic_id, 0);
    } else if (key == KP_API_FIND_COORDINATOR) {
        answer_find_coordinator(f, rq, body, &a);
    } else if (key == KP_API_INIT_PRODUCER_ID) {
        kp_InitProducerIdResponse *r = body;
        pthread_mutex_lock(&f->mu);
        r->producer_id = f->init_pid;
        r->producer_epoch = f->init_epoch;
        pthread_mutex_unlock(&f->mu);
    } else if (key == KP_API_PRODUCE) {
        answer_produce(f, rq, body, &a);
    } else if (key == KP_API_END_TXN) {
        answer_end_txn(f, rq, body, &a);
    } else if (key == KP_API_ADD_PARTITIONS_TO_TXN) {
        answer_add_partitions(f, rq, body, &a);
    }
    uint8_t *out = kn_fake_frame_response(key, rq->ver, rq->corr, body, rq->ver, len);
    kn_arena_destroy(&a);
    return out;
}

static void must(int rc, const char *what, const char *err) {
    if (rc)
        fail_msg("%s: %s: %s", what, kn_err_name(rc), err);
}

static void send_value(kn_producer *p, const char *v) {
    char err[512];
    kn_record_out r = KN_RECORD_OUT_INIT;
    r.topic = "t";
    r.partition = 0;
    r.value = v;
    r.value_len = strlen(v);
    must(kn_producer_send(p, &r, err, sizeof err), "send", err);
}

static kn_producer_stats stats_of(kn_producer *p) {
    kn_producer_stats st = {.size = sizeof st};
    assert_int_equal(kn_producer_get_stats(p, &st), KN_OK);
    return st;
}

/* One transaction: records sent and flushed one by one (one batch
 * each), then committed or aborted. */
static void one_txn(kn_producer *p, int nrec, bool commit) {
    char err[512];
    must(kn_producer_begin_transaction(p, err, sizeof err), "begin", err);
    for (int i = 0; i < nrec; i++) {
        send_value(p, "v");
        must(kn_producer_flush(p, 10000), "flush", "");
    }
    if (commit)
        must(kn_producer_commit_transaction(p, 10000, err, sizeof err), "commit", err);
    else
        must(kn_producer_abort_transaction(p, 10000, err, sizeof err), "abort", err);
}

static void test_epoch_exhausted_new_producer_id(void **st) {
    (void)st;
    fake *f = kn_calloc(1, sizeof *f);
    pthread_mutex_init(&f->mu, NULL);
    f->init_pid = 1000;
    f->init_epoch = INT16_MAX - 1; /* the last epoch a producer id has */
    f->end_pid[0] = 2000;          /* the coordinator's new id ... */
    f->end_epoch[0] = 0;           /* ... at epoch 0 */
    f->nend_script = 1;
    f->fb = kn_fake_broker_start_answering(answer, f);
    f->port = kn_fake_broker_port(f->fb);

    kn_conf *conf = kn_conf_new(KN_CLIENT_PRODUCER);
    char bs[64], err[512];
    snprintf(bs, sizeof bs, "127.0.0.1:%d", f->port);
    kn_test_conf_set(conf, "bootstrap.servers", bs);
    kn_test_conf_set(conf, "transactional.id", "tid-exhaust");
    kn_test_conf_set(conf, "linger.ms", "0");
    kn_test_conf_set(conf, "retry.backoff.ms", "20");
    kn_producer *p = kn_producer_new(conf, NULL, NULL, err, sizeof err);
    kn_conf_destroy(conf);
    if (!p)
        fail_msg("kn_producer_new: %s", err);
    must(kn_producer_init_transactions(p, 10000, err, sizeof err), "init_transactions", err);
    kn_producer_stats s = stats_of(p);
    assert_int_equal(s.transaction_version, 2);
    assert_int_equal(s.producer_id, 1000);
    assert_int_equal(s.producer_epoch, INT16_MAX - 1);

    one_txn(p, 2, true); /* T0 at (1000, 32766); EndTxn answers (2000, 0) */
    s = stats_of(p);
    print_message("after the last epoch: producer %lld epoch %lld\n", (long long)s.producer_id,
                  (long long)s.producer_epoch);
    assert_int_equal(s.producer_id, 2000);
    assert_int_equal(s.producer_epoch, 0);
    one_txn(p, 2, false); /* T1 (aborted) at (2000, 0); EndTxn: (2000, 1) */
    one_txn(p, 1, true);  /* T2 at (2000, 1) */
    s = stats_of(p);
    assert_int_equal(s.producer_id, 2000);
    assert_int_equal(s.producer_epoch, 2);
    assert_int_equal(kn_producer_close(p, 10000), 0);
    kn_producer_destroy(p);

    pthread_mutex_lock(&f->mu);
    for (int i = 0; i < f->nproduce; i++)
        print_message("Produce v%d: producer %lld epoch %d sequence %d\n", (int)f->produce[i].ver,
                      (long long)f->produce[i].pid, (int)f->produce[i].epoch, (int)f->produce[i].seq);
    for (int i = 0; i < f->nend; i++)
        print_message("EndTxn v%d %s: producer %lld epoch %d\n", (int)f->end[i].ver,
                      f->end[i].commit ? "commit" : "abort", (long long)f->end[i].pid, (int)f->end[i].epoch);
    /* The batches: T0 under the old id, then the new id from sequence 0. */
    const seen want[] = {{1000, INT16_MAX - 1, 0, 0, false}, {1000, INT16_MAX - 1, 1, 0, false},
                         {2000, 0, 0, 0, false},             {2000, 0, 1, 0, false},
                         {2000, 1, 0, 0, false}};
    assert_int_equal(f->nproduce, 5);
    for (int i = 0; i < 5; i++) {
        assert_int_equal(f->produce[i].pid, want[i].pid);
        assert_int_equal(f->produce[i].epoch, want[i].epoch);
        assert_int_equal(f->produce[i].seq, want[i].seq);
        assert_true(f->produce[i].ver >= 12); /* version 2: the leader adds the partition */
    }
    /* The EndTxns: v5, each with the id and epoch the previous answered. */
    assert_int_equal(f->nend, 3);
    assert_int_equal(f->end[0].pid, 1000);
    assert_int_equal(f->end[0].epoch, INT16_MAX - 1);
    assert_true(f->end[0].commit);
    assert_int_equal(f->end[1].pid, 2000);
    assert_int_equal(f->end[1].epoch, 0);
    assert_false(f->end[1].commit);
    assert_int_equal(f->end[2].pid, 2000);
    assert_int_equal(f->end[2].epoch, 1);
    for (int i = 0; i < 3; i++)
        assert_int_equal(f->end[i].ver, 5);
    pthread_mutex_unlock(&f->mu);

    kn_fake_broker_stop(f->fb);
    pthread_mutex_destroy(&f->mu);
    kn_free(f);
}

/* ---- one failing partition answer: fatal or abortable ------------------ */

static void record_error(kn_producer *p, const kn_delivery *d, void *opaque) {
    (void)p;
    int *err = opaque;
    if (!*err)
        *err = kn_delivery_error(d);
}

/* A transaction whose one record gets err from Produce (produce_err) or
 * from AddPartitionsToTxn (add_err, version 1). Checks the record's
 * error, then what the producer allows: fatal, every transactional call
 * returns KN_ERR__FATAL and the state is FATAL_ERROR; abortable, commit
 * returns KN_ERR_TRANSACTION_ABORTABLE, the abort succeeds and the next
 * transaction commits. */
static void run_failing_partition(bool txn_v1, int16_t produce_err, int16_t add_err, bool want_fatal) {
    fake *f = kn_calloc(1, sizeof *f);
    pthread_mutex_init(&f->mu, NULL);
    f->init_pid = 1000;
    f->init_epoch = 3;
    f->txn_v1 = txn_v1;
    f->produce_err = produce_err;
    f->add_err = add_err;
    f->fb = kn_fake_broker_start_answering(answer, f);
    f->port = kn_fake_broker_port(f->fb);
    kn_conf *conf = kn_conf_new(KN_CLIENT_PRODUCER);
    char bs[64], err[512];
    snprintf(bs, sizeof bs, "127.0.0.1:%d", f->port);
    kn_test_conf_set(conf, "bootstrap.servers", bs);
    kn_test_conf_set(conf, "transactional.id", "tid-pid-mapping");
    kn_test_conf_set(conf, "linger.ms", "0");
    kn_test_conf_set(conf, "retry.backoff.ms", "20");
    int rec_err = 0;
    kn_producer *p = kn_producer_new(conf, record_error, &rec_err, err, sizeof err);
    kn_conf_destroy(conf);
    if (!p)
        fail_msg("kn_producer_new: %s", err);
    must(kn_producer_init_transactions(p, 10000, err, sizeof err), "init_transactions", err);
    assert_int_equal(stats_of(p).transaction_version, txn_v1 ? 1 : 2);
    must(kn_producer_begin_transaction(p, err, sizeof err), "begin", err);
    send_value(p, "v");
    assert_int_equal(kn_producer_flush(p, 10000), 0);
    int want_err = produce_err ? produce_err : add_err;
    print_message("version %d, %s %s: record failed with %s, state %s\n", txn_v1 ? 1 : 2,
                  produce_err ? "Produce" : "AddPartitionsToTxn", kn_err_name(want_err), kn_err_name(rec_err),
                  kn_producer_transaction_state(p));
    assert_int_equal(rec_err, want_err);
    if (add_err) {
        pthread_mutex_lock(&f->mu);
        assert_true(f->nadd >= 1);
        assert_int_equal(f->nproduce, 0); /* never sent: the partition was not added */
        pthread_mutex_unlock(&f->mu);
    }
    int rc = kn_producer_commit_transaction(p, 10000, err, sizeof err);
    print_message("commit: %s (%s), state %s\n", kn_err_name(rc), err, kn_producer_transaction_state(p));
    if (want_fatal) {
        assert_int_equal(rc, KN_ERR__FATAL);
        assert_string_equal(kn_producer_transaction_state(p), "FATAL_ERROR");
        assert_int_equal(kn_producer_abort_transaction(p, 10000, err, sizeof err), KN_ERR__FATAL);
        assert_int_equal(kn_producer_begin_transaction(p, err, sizeof err), KN_ERR__FATAL);
        kn_record_out r = KN_RECORD_OUT_INIT;
        r.topic = "t";
        r.value = "w";
        r.value_len = 1;
        assert_int_equal(kn_producer_send(p, &r, err, sizeof err), KN_ERR__FATAL);
        pthread_mutex_lock(&f->mu);
        assert_int_equal(f->nend, 0); /* no EndTxn: the producer is done */
        pthread_mutex_unlock(&f->mu);
    } else {
        assert_int_equal(rc, KN_ERR_TRANSACTION_ABORTABLE);
        assert_string_equal(kn_producer_transaction_state(p), "ABORTABLE_ERROR");
        must(kn_producer_abort_transaction(p, 10000, err, sizeof err), "abort", err);
        pthread_mutex_lock(&f->mu);
        f->produce_err = 0;
        f->add_err = 0;
        pthread_mutex_unlock(&f->mu);
        one_txn(p, 1, true); /* the producer goes on */
        assert_string_equal(kn_producer_transaction_state(p), "READY");
    }
    kn_producer_close(p, 10000);
    kn_producer_destroy(p);
    kn_fake_broker_stop(f->fb);
    pthread_mutex_destroy(&f->mu);
    kn_free(f);
}

static void test_produce_invalid_pid_mapping_is_fatal(void **st) {
    (void)st;
    run_failing_partition(false, KN_ERR_INVALID_PRODUCER_ID_MAPPING, 0, true);
}

static void test_add_partitions_invalid_pid_mapping_is_fatal(void **st) {
    (void)st;
    run_failing_partition(true, 0, KN_ERR_INVALID_PRODUCER_ID_MAPPING, true);
}

/* The neighbours that stay abortable, so the cases above can tell. */
static void test_produce_invalid_epoch_is_abortable(void **st) {
    (void)st;
    run_failing_partition(false, KN_ERR_INVALID_PRODUCER_EPOCH, 0, false);
}

static void test_add_partitions_unknown_pid_is_abortable(void **st) {
    (void)st;
    run_failing_partition(true, 0, KN_ERR_UNKNOWN_PRODUCER_ID, false);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_epoch_exhausted_new_producer_id),
        cmocka_unit_test(test_produce_invalid_pid_mapping_is_fatal),
        cmocka_unit_test(test_add_partitions_invalid_pid_mapping_is_fatal),
        cmocka_unit_test(test_produce_invalid_epoch_is_abortable),
        cmocka_unit_test(test_add_partitions_unknown_pid_is_abortable),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
