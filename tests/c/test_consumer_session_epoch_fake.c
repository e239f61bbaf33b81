/*
 * test_consumer_session_epoch_fake.c: an incremental fetch session
 * (KIP-227) across a leader epoch bump, end to end through the real
 * consumer against a fake broker that keeps its session the way Kafka's
 * fetch session cache does. The unit case (test_consumer_drain.c,
 * test_fetch_session) shows the plan lists a re-led partition; this
 * shows why it must: the broker checks the current_leader_epoch it
 * holds in the session, not the one in metadata, so a partition the
 * client never lists again with the new epoch is fenced for ever (the
 * lua_nginx_resty stall after a broker restart, fixed by 7805c4b).
 *
 * The fake: topic "t", one partition led by node 1. A full Fetch
 * (session id 0, epoch 0) opens a session; the session remembers, per
 * partition, the fetch offset and current_leader_epoch last listed, and
 * an incremental Fetch must carry the session's id and next epoch.
 * Every answer reads from what the session holds: a remembered epoch
 * below the leader's answers FENCED_LEADER_EPOCH (partition error,
 * top-level 0, session kept, as Kafka); otherwise the records at the
 * remembered offset. An incremental answer leaves out a partition with
 * nothing new, as Kafka's does. OffsetForLeaderEpoch answers the end
 * offset of the epoch asked for (KIP-320 validation after the bump).
 *
 * Script: the log holds offsets 0..9 written at leader epoch 5 and
 * Metadata says epoch 5. The consumer (assign, no group) reads 0..9
 * and holds a session at epoch 5. Then the leader epoch becomes 6 and
 * offsets 10..19 are written under it. The consumer is fenced, refreshes
 * metadata (FENCED_LEADER_EPOCH asks for it), validates its position
 * (epoch 5 ends at offset 10: the position holds) and must read 10..19
 * within 5 s, through the same session, by listing the partition with
 * epoch 6 in an incremental Fetch.
 */
#include "kn_test.h"

#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "fake_broker.h"
#include "fake_metadata.h"
#include "kn_alloc.h"
#include "proto/generated/kp_apis.h"
#include "proto/generated/kp_fetch.h"
#include "proto/generated/kp_metadata.h"
#include "proto/generated/kp_offset_for_leader_epoch.h"
#include "proto/record_batch.h"
#include "writer.h"

#define OLD_EPOCH 5
#define NEW_EPOCH 6
#define PER_EPOCH 10 /* records written under each epoch */

typedef struct fake {
    kn_fake_broker *fb;
    int port;
    pthread_mutex_t mu;
    int32_t leader_epoch; /* the leader's epoch: Metadata says it, Fetch checks it */
    int64_t log_end;      /* PER_EPOCH, then 2 * PER_EPOCH after the bump */
    kn_wr batch[2];       /* offsets 0..9 at OLD_EPOCH, 10..19 at NEW_EPOCH */
    /* The one fetch session (Kafka's cache holds one per client here). */
    int32_t session_id;    /* 0: none */
    int32_t session_epoch; /* the epoch the next incremental Fetch must carry */
    bool in_session;       /* t-0 is in the session */
    int64_t sess_offset;   /* the fetch offset last listed for t-0 */
    int32_t sess_epoch;    /* the current_leader_epoch last listed for t-0 */
    /* What the test checks afterwards. */
    int full_fetches;
    int fenced;           /* FENCED_LEADER_EPOCH answers */
    int relisted_new;     /* incremental Fetches listing t-0 at NEW_EPOCH */
    int session_errors;   /* unknown session id or wrong session epoch */
    int odd_offsets;      /* fetch offsets the log has no batch for */
    int epoch_requests;   /* OffsetForLeaderEpoch partitions asked */
    int unexpected;       /* requests of other APIs */
} fake;

static const kn_uuid topic_id = {{7, 7, 7, 7, 5, 4, 3, 2, 1, 0, 1, 2, 3, 4, 5, 6}};

static bool is_t(const kn_fake_request *rq, kn_str name, const kn_uuid *id) {
    if (rq->ver >= 13)
        return memcmp(id->b, topic_id.b, sizeof topic_id.b) == 0;
    return name.len == 1 && name.ptr[0] == 't';
}

/* Applies the request to the session; returns the top-level error. */
static int16_t fetch_session_update(fake *f, const kn_fake_request *rq, const kp_FetchRequest *q,
                                    bool *full) {
    *full = q->session_id == 0;
    if (*full) {
        /* Epoch 0 opens a session; -1 is a sessionless full fetch. */
        f->full_fetches++;
        f->in_session = false;
        f->session_id = q->session_epoch == 0 ? f->session_id + 1 : 0;
        f->session_epoch = 1;
    } else if (q->session_id != f->session_id) {
        f->session_errors++;
        return KN_ERR_FETCH_SESSION_ID_NOT_FOUND;
    } else if (q->session_epoch != f->session_epoch) {
        f->session_errors++;
        return KN_ERR_INVALID_FETCH_SESSION_EPOCH;
    } else {
        f->session_epoch++;
    }
    for (int32_t t = 0; t < q->forgotten_topics_data.count; t++) {
        const kp_FetchRequest_ForgottenTopic *ft = &q->forgotten_topics_data.items[t];
        for (int32_t i = 0; i < ft->partitions.count; i++)
            if (is_t(rq, ft->topic, &ft->topic_id) && ft->partitions.items[i] == 0)
                f->in_session = false;
    }
    for (int32_t t = 0; t < q->topics.count; t++) {
        const kp_FetchRequest_FetchTopic *ft = &q->topics.items[t];
        for (int32_t i = 0; i < ft->partitions.count; i++) {
            const kp_FetchRequest_FetchPartition *fp = &ft->partitions.items[i];
            if (!is_t(rq, ft->topic, &ft->topic_id) || fp->partition != 0)
                continue;
            /* What Kafka's CachedPartition keeps from the request. */
            f->in_session = true;
            f->sess_offset = fp->fetch_offset;
            f->sess_epoch = fp->current_leader_epoch;
            if (!*full && fp->current_leader_epoch == NEW_EPOCH)
                f->relisted_new++;
        }
    }
    return 0;
}

/* Fills pd for t-0 from the session; false when an incremental answer
 * leaves it out (nothing new). */
static bool fetch_partition(fake *f, bool full, kp_FetchResponse_PartitionData *pd) {
    kp_FetchResponse_PartitionData_init(pd);
    pd->partition_index = 0;
    pd->high_watermark = f->log_end;
    pd->last_stable_offset = f->log_end;
    pd->log_start_offset = 0;
    pd->records = (kn_bytes){NULL, 0};
    if (f->sess_epoch >= 0 && f->sess_epoch < f->leader_epoch) {
        /* The broker checks the epoch its session holds. */
        f->fenced++;
        pd->error_code = KN_ERR_FENCED_LEADER_EPOCH;
        pd->high_watermark = pd->last_stable_offset = pd->log_start_offset = -1;
        return true;
    }
    if (f->sess_offset == f->log_end)
        return full;
    int b = f->sess_offset == 0 ? 0 : f->sess_offset == PER_EPOCH ? 1 : -1;
    if (b < 0 || f->sess_offset > f->log_end) {
        f->odd_offsets++;
        pd->error_code = KN_ERR_OFFSET_OUT_OF_RANGE;
        return true;
    }
    pd->records = (kn_bytes){f->batch[b].buf, (int32_t)f->batch[b].len};
    return true;
}

static void answer_fetch(fake *f, const kn_fake_request *rq, kp_FetchResponse *r, kn_arena *a) {
    const kp_FetchRequest *q = kn_fake_decode_request(a, rq);
    kp_FetchResponse_FetchableTopicResponse *tr = kn_arena_calloc(a, 1, sizeof(*tr));
    kp_FetchResponse_PartitionData *pd = kn_arena_calloc(a, 1, sizeof(*pd));
    bool full = false, listed = false;
    pthread_mutex_lock(&f->mu);
    r->error_code = fetch_session_update(f, rq, q, &full);
    if (r->error_code == 0) {
        r->session_id = f->session_id;
        listed = f->in_session && fetch_partition(f, full, pd);
    }
    pthread_mutex_unlock(&f->mu);
    if (listed) {
        tr->topic = kn_str_c("t");
        tr->topic_id = topic_id;
        tr->partitions.items = pd;
        tr->partitions.count = 1;
        r->responses.items = tr;
        r->responses.count = 1;
    }
    if (!listed || pd->error_code)
        /* Nothing to return: wait a little, as a broker waits up to
         * max_wait_ms, so that the consumer does not spin. */
        usleep((useconds_t)(q->max_wait_ms < 50 ? q->max_wait_ms : 50) * 1000);
}

/* The end offset of epoch e: epoch 5 starts at 0 and, once epoch 6
 * began, ends at 10 where epoch 6 starts. */
static void answer_epoch(fake *f, const kp_OffsetForLeaderEpochRequest *q, kp_OffsetForLeaderEpochResponse *r,
                         kn_arena *a) {
    r->topics.count = q->topics.count;
    r->topics.items = kn_arena_calloc(a, (size_t)q->topics.count + 1, sizeof(*r->topics.items));
    pthread_mutex_lock(&f->mu);
    for (int32_t t = 0; t < q->topics.count; t++) {
        int32_t n = q->topics.items[t].partitions.count;
        kp_OffsetForLeaderEpochResponse_EpochEndOffset *eo = kn_arena_calloc(a, (size_t)n + 1, sizeof(*eo));
        for (int32_t i = 0; i < n; i++) {
            const kp_OffsetForLeaderEpochRequest_OffsetForLeaderPartition *qp =
                &q->topics.items[t].partitions.items[i];
            f->epoch_requests++;
            eo[i].partition = qp->partition;
            eo[i].leader_epoch = -1;
            eo[i].end_offset = -1;
            if (qp->current_leader_epoch >= 0 && qp->current_leader_epoch < f->leader_epoch) {
                eo[i].error_code = KN_ERR_FENCED_LEADER_EPOCH;
            } else if (qp->leader_epoch >= NEW_EPOCH && f->leader_epoch >= NEW_EPOCH) {
                eo[i].leader_epoch = NEW_EPOCH;
                eo[i].end_offset = f->log_end;
            } else if (qp->leader_epoch >= OLD_EPOCH) {
                eo[i].leader_epoch = OLD_EPOCH;
                eo[i].end_offset = f->leader_epoch >= NEW_EPOCH ? PER_EPOCH : f->log_end;
            }
        }
        r->topics.items[t].topic = q->topics.items[t].topic;
        r->topics.items[t].partitions.items = eo;
        r->topics.items[t].partitions.count = n;
    }
    pthread_mutex_unlock(&f->mu);
}

static uint8_t *answer(void *opaque, const kn_fake_request *rq, size_t *len) {
    fake *f = opaque;
    kn_arena a;
    kn_arena_init(&a, 0);
    void *body = kn_arena_alloc(&a, kp_api_get(rq->key)->resp_size);
    kp_api_get(rq->key)->resp_init(body);
    if (rq->key == KP_API_API_VERSIONS) {
        kn_fake_api_versions(&a, body);
    } else if (rq->key == KP_API_METADATA) {
        pthread_mutex_lock(&f->mu);
        int32_t epoch = f->leader_epoch;
        pthread_mutex_unlock(&f->mu);
        kn_fake_metadata_one_partition(body, &a, &f->port, 1, &topic_id, epoch);
    } else if (rq->key == KP_API_FETCH) {
        answer_fetch(f, rq, body, &a);
    } else if (rq->key == KP_API_OFFSET_FOR_LEADER_EPOCH) {
        answer_epoch(f, kn_fake_decode_request(&a, rq), body, &a);
    } else {
        /* Counted, not failed here: this is the listener thread. */
        pthread_mutex_lock(&f->mu);
        f->unexpected++;
        pthread_mutex_unlock(&f->mu);
    }
    uint8_t *out = kn_fake_frame_response(rq->key, rq->ver, rq->corr, body, rq->ver, len);
    kn_arena_destroy(&a);
    return out;
}

/* PER_EPOCH records from base, written at leader epoch epoch. */
static void build_batch(kn_wr *out, int64_t base, int32_t epoch) {
    kn_wr_init(out, 0, 0);
    kn_rb_builder_conf conf;
    kn_rb_builder_conf_init(&conf);
    conf.base_offset = base;
    conf.partition_leader_epoch = epoch;
    kn_rb_builder b;
    kn_rb_builder_init(&b, &conf, 0);
    for (int i = 0; i < PER_EPOCH; i++) {
        char v[16];
        snprintf(v, sizeof v, "v%lld", (long long)(base + i));
        kn_bytes val = {(const uint8_t *)v, (int32_t)strlen(v)};
        assert_int_equal(kn_rb_builder_append(&b, i, 1000 + base + i, (kn_bytes){NULL, -1}, val, NULL, 0), 0);
    }
    char es[128];
    assert_int_equal(kn_rb_builder_finish(&b, out, es, sizeof es), 0);
    kn_rb_builder_free(&b);
}

/* Polls until offset `until` was returned or timeout_ms passed; checks
 * every record comes once, in order, from *next on. */
static void poll_until(kn_consumer *c, int64_t *next, int64_t until, int64_t timeout_ms) {
    char es[512];
    int64_t end = kn_test_now_ms() + timeout_ms;
    while (*next < until && kn_test_now_ms() < end) {
        kn_records *r = NULL;
        int rc = kn_consumer_poll(c, 100, &r, es, sizeof es);
        if (rc != KN_OK)
            fail_msg("poll: %s: %s", kn_err_name(rc), es);
        for (size_t i = 0; r && i < kn_records_count(r); i++)
            assert_int_equal(kn_records_offset(r, i), (*next)++);
        kn_records_free(r);
    }
}

static void test_session_relists_partition_after_epoch_bump(void **state) {
    (void)state;
    fake f;
    memset(&f, 0, sizeof f);
    pthread_mutex_init(&f.mu, NULL);
    f.leader_epoch = OLD_EPOCH;
    f.log_end = PER_EPOCH;
    build_batch(&f.batch[0], 0, OLD_EPOCH);
    build_batch(&f.batch[1], PER_EPOCH, NEW_EPOCH);
    f.fb = kn_fake_broker_start_answering(answer, &f);
    f.port = kn_fake_broker_port(f.fb);

    kn_conf *conf = kn_conf_new(KN_CLIENT_CONSUMER);
    char bs[64], es[512];
    snprintf(bs, sizeof bs, "127.0.0.1:%d", f.port);
    kn_test_conf_set(conf, "bootstrap.servers", bs);
    kn_test_conf_set(conf, "retry.backoff.ms", "20");
    kn_test_conf_set(conf, "retry.backoff.max.ms", "20");
    kn_test_conf_set(conf, "fetch.max.wait.ms", "50");
    /* metadata.max.age.ms stays at its 5 minutes: only the fencing may
     * bring the consumer the new epoch. */
    kn_consumer *c = kn_consumer_new(conf, es, sizeof es);
    kn_conf_destroy(conf);
    if (!c)
        fail_msg("kn_consumer_new: %s", es);
    kn_topic_partition_list *l = kn_topic_partition_list_new();
    assert_true(kn_topic_partition_list_add(l, "t", 0) >= 0);
    assert_int_equal(kn_consumer_assign(c, l), KN_OK);
    kn_topic_partition_list_destroy(l);
    assert_int_equal(kn_consumer_seek(c, "t", 0, 0), KN_OK);

    /* Epoch 5: the session opens and serves offsets 0..9. */
    int64_t next = 0;
    poll_until(c, &next, PER_EPOCH, 20000);
    assert_int_equal(next, PER_EPOCH);
    pthread_mutex_lock(&f.mu);
    int32_t sid = f.session_id;
    int32_t held = f.sess_epoch;
    /* The leader changes: epoch 6, which writes offsets 10..19. */
    f.leader_epoch = NEW_EPOCH;
    f.log_end = 2 * PER_EPOCH;
    pthread_mutex_unlock(&f.mu);
    assert_true(sid != 0);
    assert_int_equal(held, OLD_EPOCH);

    int64_t t0 = kn_test_now_ms();
    poll_until(c, &next, 2 * PER_EPOCH, 5000);
    int64_t took = kn_test_now_ms() - t0;

    kn_consumer_stats st = {.size = sizeof st};
    kn_consumer_get_stats(c, &st);
    pthread_mutex_lock(&f.mu);
    fake seen = f;
    pthread_mutex_unlock(&f.mu);
    print_message("after the bump: next offset %lld after %lld ms; full Fetches %d, FENCED answers %d, "
                  "incremental Fetches listing epoch 6: %d, session held epoch %d, OffsetForLeaderEpoch %d, "
                  "validations %lld, truncations %lld, session errors %d\n",
                  (long long)next, (long long)took, seen.full_fetches, seen.fenced, seen.relisted_new,
                  (int)seen.sess_epoch, seen.epoch_requests, (long long)st.validations,
                  (long long)st.truncations, seen.session_errors);
    assert_int_equal(next, 2 * PER_EPOCH); /* records again, each once */
    assert_true(seen.fenced >= 1);         /* the session did hold the stale epoch */
    assert_true(seen.relisted_new >= 1);   /* ... and was told the new one */
    assert_int_equal(seen.sess_epoch, NEW_EPOCH);
    assert_int_equal(seen.full_fetches, 1); /* one session throughout */
    assert_int_equal(seen.session_id, sid);
    assert_int_equal(seen.session_errors, 0);
    assert_int_equal(seen.odd_offsets, 0);
    assert_int_equal(seen.unexpected, 0);
    assert_true(seen.epoch_requests >= 1); /* KIP-320: validated ... */
    assert_true(st.validations >= 1);
    assert_int_equal(st.truncations, 0); /* ... and the position held */

    assert_int_equal(kn_consumer_close(c, -1), KN_OK);
    kn_consumer_destroy(c);
    kn_fake_broker_stop(f.fb);
    kn_wr_free(&f.batch[0]);
    kn_wr_free(&f.batch[1]);
    pthread_mutex_destroy(&f.mu);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_session_relists_partition_after_epoch_bump),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
