/*
 * test_share_fetch_fake.c: the share consumer's adaptive ShareFetch
 * (core/share/share_fetch.c, docs/share-groups.md "Fetching and share
 * sessions") against a fake broker, which logs every request: what a
 * real broker cannot show on demand or by inspection.
 *
 *  - MaxRecords starts at max.poll.records, doubles after an answer the
 *    application emptied within 50 ms of its landing, halves after one
 *    it took over 100 ms to empty, and never leaves 1..16 x
 *    max.poll.records; BatchSize stays max.poll.records;
 *  - share.acquire.mode=record_limit asks exactly max.poll.records
 *    however fast the application is;
 *  - acknowledgements made while a grown answer is being emptied ride on
 *    the fetch that follows it (a fast application sends next to no
 *    ShareAcknowledge), but wait for it at most 100 ms: a slow
 *    application's acknowledgements reach the broker within a second,
 *    while its next fetch is seconds away; close sends the last poll's
 *    acknowledgements and releases the buffered records in the
 *    session's final ShareAcknowledge;
 *  - a destroy from the acknowledgement-commit callback run inside poll
 *    is ignored and logged (kafka_native_share.h); it_share.c covers
 *    the same from commit_sync and close against the real broker.
 *
 * The fake is node 1 for everything: ApiVersions, Metadata (topic "t",
 * partition 0), FindCoordinator, ShareGroupHeartbeat (partition 0 at
 * once), ShareFetch (a queue at offsets 0, 1, 2, ...: each answer is one
 * batch of MaxRecords records, or of at most f->cap when set) and
 * ShareAcknowledge (all accepted). Time bounds are upper bounds with wide
 * slack, for a loaded machine; ordering carries the assertions.
 */
#include "kn_test.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "fake_broker.h"
#include "fake_metadata.h"
#include "kafka_native_share.h"
#include "kn_alloc.h"
#include "proto/generated/kp_apis.h"
#include "proto/generated/kp_find_coordinator.h"
#include "proto/generated/kp_metadata.h"
#include "proto/generated/kp_share_acknowledge.h"
#include "proto/generated/kp_share_fetch.h"
#include "proto/generated/kp_share_group_heartbeat.h"
#include "proto/record_batch.h"

#define MAX_FETCHES 4096
#define MAX_OFFSETS 60000
#define MPR 10 /* max.poll.records of every case */

/* One ShareFetch as the fake saw it. */
typedef struct fetch_seen {
    int64_t at_ms;
    int32_t max_records, batch_size;
    int8_t acquire_mode;
    int16_t ver;
    int32_t acks;  /* acknowledged offsets it carried */
    int32_t given; /* records in the answer */
} fetch_seen;

typedef struct fake {
    kn_fake_broker *fb;
    int port;
    pthread_mutex_t mu;
    int64_t next; /* next offset to hand out */
    int32_t cap;  /* records per answer at most; 0: as many as asked */
    fetch_seen fetch[MAX_FETCHES];
    int nfetch;
    int ack_reqs;   /* ShareAcknowledge requests, the final ones left out */
    int final_reqs; /* ShareAcknowledge with epoch -1 (close) */
    /* per offset: when its acknowledgement arrived (0: never), its type
     * and what carried it ('F' ShareFetch, 'A' ShareAcknowledge, 'C' the
     * final ShareAcknowledge) */
    int64_t *acked_at;
    int8_t *ack_type;
    char *ack_via;
} fake;

static const kn_uuid topic_id = {{4, 4, 4, 4, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12}};

static void answer_find_coordinator(fake *f, const kn_fake_request *rq, kp_FindCoordinatorResponse *r,
                                    kn_arena *a) {
    if (rq->ver < 4) {
        r->node_id = 1;
        r->host = kn_str_c("127.0.0.1");
        r->port = f->port;
        return;
    }
    const kp_FindCoordinatorRequest *q = kn_fake_decode_request(a, rq);
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

/* Joins at once with partition 0 of "t"; a leave (-1) is answered -1. */
static void answer_heartbeat(const kn_fake_request *rq, kp_ShareGroupHeartbeatResponse *r, kn_arena *a) {
    const kp_ShareGroupHeartbeatRequest *q = kn_fake_decode_request(a, rq);
    r->heartbeat_interval_ms = 5000;
    if (q->member_epoch < 0) {
        r->member_epoch = q->member_epoch;
        return;
    }
    r->member_epoch = q->member_epoch + 1;
    kp_ShareGroupHeartbeatResponse_Assignment *as = kn_arena_calloc(a, 1, sizeof(*as));
    kp_ShareGroupHeartbeatResponse_TopicPartitions *tp = kn_arena_calloc(a, 1, sizeof(*tp));
    int32_t *parts = kn_arena_calloc(a, 1, sizeof(int32_t));
    tp->topic_id = topic_id;
    tp->partitions = (kp_int32_array){parts, 1};
    as->topic_partitions.items = tp;
    as->topic_partitions.count = 1;
    r->assignment = as;
}

/* Notes the acknowledgements of one partition's batches (f->mu held).
 * Both APIs' batch structs have the same layout. */
static int32_t note_acks(fake *f, const kp_ShareFetchRequest_AcknowledgementBatch *b, int32_t n, char via) {
    int32_t count = 0;
    int64_t now = kn_test_now_ms();
    for (int32_t i = 0; i < n; i++)
        for (int64_t o = b[i].first_offset; o <= b[i].last_offset && o >= 0 && o < MAX_OFFSETS; o++) {
            int32_t k = b[i].acknowledge_types.count == 1 ? 0 : (int32_t)(o - b[i].first_offset);
            if (k >= b[i].acknowledge_types.count)
                break; /* malformed: the offset stays unacknowledged, the test fails on it */
            if (!f->acked_at[o]) {
                f->acked_at[o] = now;
                f->ack_type[o] = b[i].acknowledge_types.items[k];
                f->ack_via[o] = via;
            }
            count++;
        }
    return count;
}

/* One batch of the next records (values "v<offset>") for partition 0,
 * written to blob, the first at *base. Returns how many. */
static int32_t hand_out(fake *f, int32_t asked, kn_wr *blob, int64_t *base_out) {
    pthread_mutex_lock(&f->mu);
    int32_t n = f->cap > 0 && f->cap < asked ? f->cap : asked;
    if (f->next + n > MAX_OFFSETS)
        n = (int32_t)(MAX_OFFSETS - f->next);
    int64_t base = f->next;
    f->next += n > 0 ? n : 0;
    pthread_mutex_unlock(&f->mu);
    *base_out = base;
    if (n <= 0)
        return 0;
    kn_rb_builder_conf conf;
    kn_rb_builder_conf_init(&conf);
    conf.base_offset = base;
    kn_rb_builder b;
    kn_rb_builder_init(&b, &conf, 0);
    for (int32_t i = 0; i < n; i++) {
        char v[32];
        int len = snprintf(v, sizeof v, "v%lld", (long long)(base + i));
        assert_int_equal(kn_rb_builder_append(&b, i, 1000, (kn_bytes){NULL, -1},
                                              (kn_bytes){(const uint8_t *)v, len}, NULL, 0),
                         0);
    }
    char es[128];
    assert_int_equal(kn_rb_builder_finish(&b, blob, es, sizeof es), 0);
    kn_rb_builder_free(&b);
    return n;
}

static void answer_share_fetch(fake *f, const kn_fake_request *rq, kp_ShareFetchResponse *r, kn_arena *a,
                               kn_wr *blob) {
    const kp_ShareFetchRequest *q = kn_fake_decode_request(a, rq);
    fetch_seen s = {kn_test_now_ms(), q->max_records, q->batch_size, q->share_acquire_mode, rq->ver, 0, 0};
    pthread_mutex_lock(&f->mu);
    for (int32_t t = 0; t < q->topics.count; t++)
        for (int32_t p = 0; p < q->topics.items[t].partitions.count; p++) {
            const kp_ShareFetchRequest_FetchPartition *fp = &q->topics.items[t].partitions.items[p];
            s.acks += note_acks(f, fp->acknowledgement_batches.items, fp->acknowledgement_batches.count, 'F');
        }
    pthread_mutex_unlock(&f->mu);
    /* The session holds partition 0 whether or not this request lists
     * it: answer it every time (records, or none). */
    int64_t first = 0;
    s.given = hand_out(f, q->max_records, blob, &first);
    if (!s.given)
        usleep(20 * 1000); /* an empty answer after a while, not a busy loop */
    kp_ShareFetchResponse_ShareFetchableTopicResponse *tr = kn_arena_calloc(a, 1, sizeof(*tr));
    kp_ShareFetchResponse_PartitionData *pd = kn_arena_calloc(a, 1, sizeof(*pd));
    kp_ShareFetchResponse_PartitionData_init(pd);
    pd->partition_index = 0;
    pd->current_leader.leader_id = 1;
    pd->records = (kn_bytes){(const uint8_t *)"", 0}; /* not nullable */
    if (s.given) {
        kp_ShareFetchResponse_AcquiredRecords *ar = kn_arena_calloc(a, 1, sizeof(*ar));
        *ar = (kp_ShareFetchResponse_AcquiredRecords){first, first + s.given - 1, 1};
        pd->acquired_records.items = ar;
        pd->acquired_records.count = 1;
        pd->records = (kn_bytes){blob->buf, (int32_t)blob->len};
    }
    tr->topic_id = topic_id;
    tr->partitions.items = pd;
    tr->partitions.count = 1;
    r->responses.items = tr;
    r->responses.count = 1;
    r->acquisition_lock_timeout_ms = 30000;
    pthread_mutex_lock(&f->mu);
    if (f->nfetch < MAX_FETCHES)
        f->fetch[f->nfetch++] = s;
    pthread_mutex_unlock(&f->mu);
}

static void answer_share_ack(fake *f, const kn_fake_request *rq, kp_ShareAcknowledgeResponse *r,
                             kn_arena *a) {
    const kp_ShareAcknowledgeRequest *q = kn_fake_decode_request(a, rq);
    bool final = q->share_session_epoch == -1;
    r->responses.count = q->topics.count;
    r->responses.items = kn_arena_calloc(a, (size_t)q->topics.count + 1, sizeof(*r->responses.items));
    pthread_mutex_lock(&f->mu);
    if (final)
        f->final_reqs++;
    else
        f->ack_reqs++;
    for (int32_t t = 0; t < q->topics.count; t++) {
        const kp_ShareAcknowledgeRequest_AcknowledgeTopic *qt = &q->topics.items[t];
        kp_ShareAcknowledgeResponse_PartitionData *pd =
            kn_arena_calloc(a, (size_t)qt->partitions.count + 1, sizeof(*pd));
        for (int32_t p = 0; p < qt->partitions.count; p++) {
            kp_ShareAcknowledgeResponse_PartitionData_init(&pd[p]);
            const kp_ShareAcknowledgeRequest_AcknowledgePartition *qp = &qt->partitions.items[p];
            pd[p].partition_index = qp->partition_index;
            note_acks(f, (const kp_ShareFetchRequest_AcknowledgementBatch *)qp->acknowledgement_batches.items,
                      qp->acknowledgement_batches.count, final ? 'C' : 'A');
        }
        r->responses.items[t].topic_id = qt->topic_id;
        r->responses.items[t].partitions.items = pd;
        r->responses.items[t].partitions.count = qt->partitions.count;
    }
    pthread_mutex_unlock(&f->mu);
}

static uint8_t *answer(void *opaque, const kn_fake_request *rq, size_t *len) {
    fake *f = opaque;
    int16_t key = rq->key;
    kn_arena a;
    kn_arena_init(&a, 0);
    kn_wr blob;
    kn_wr_init(&blob, 1024, 0);
    void *body = kn_arena_alloc(&a, kp_api_get(key)->resp_size);
    kp_api_get(key)->resp_init(body);
    if (key == KP_API_API_VERSIONS)
        kn_fake_api_versions(&a, body);
    else if (key == KP_API_METADATA)
        kn_fake_metadata_one_partition(body, &a, &f->port, 1, &topic_id, 0);
    else if (key == KP_API_FIND_COORDINATOR)
        answer_find_coordinator(f, rq, body, &a);
    else if (key == KP_API_SHARE_GROUP_HEARTBEAT)
        answer_heartbeat(rq, body, &a);
    else if (key == KP_API_SHARE_FETCH)
        answer_share_fetch(f, rq, body, &a, &blob);
    else if (key == KP_API_SHARE_ACKNOWLEDGE)
        answer_share_ack(f, rq, body, &a);
    uint8_t *out = kn_fake_frame_response(key, rq->ver, rq->corr, body, rq->ver, len);
    kn_wr_free(&blob);
    kn_arena_destroy(&a);
    return out;
}

/* ---- the application side ---------------------------------------------- */

typedef struct env {
    fake *f;
    kn_share_consumer *sc;
    int64_t received; /* records polled so far (offsets 0..received-1, in order) */
    int64_t last_first, last_count; /* the last poll that returned records */
} env;

static void start_with(env *e, const char *acquire_mode, kn_log_cb *log_fn) {
    memset(e, 0, sizeof *e);
    e->f = kn_calloc(1, sizeof *e->f);
    e->f->acked_at = kn_calloc(MAX_OFFSETS, sizeof(int64_t));
    e->f->ack_type = kn_calloc(MAX_OFFSETS, 1);
    e->f->ack_via = kn_calloc(MAX_OFFSETS, 1);
    assert_non_null(e->f->acked_at);
    pthread_mutex_init(&e->f->mu, NULL);
    e->f->fb = kn_fake_broker_start_answering(answer, e->f);
    e->f->port = kn_fake_broker_port(e->f->fb);
    kn_conf *conf = kn_conf_new(KN_CLIENT_CONSUMER);
    char bs[64], es[512], mpr[16];
    snprintf(bs, sizeof bs, "127.0.0.1:%d", e->f->port);
    snprintf(mpr, sizeof mpr, "%d", MPR);
    kn_test_conf_set(conf, "bootstrap.servers", bs);
    kn_test_conf_set(conf, "group.id", "g-share-fake");
    kn_test_conf_set(conf, "max.poll.records", mpr);
    kn_test_conf_set(conf, "retry.backoff.ms", "20");
    if (acquire_mode)
        kn_test_conf_set(conf, "share.acquire.mode", acquire_mode);
    if (log_fn)
        assert_int_equal(kn_conf_set_log_cb(conf, KN_LOG_ERROR, log_fn, NULL), KN_OK);
    e->sc = kn_share_consumer_new(conf, es, sizeof es);
    kn_conf_destroy(conf);
    if (!e->sc)
        fail_msg("kn_share_consumer_new: %s", es);
    const char *topics[] = {"t"};
    assert_int_equal(kn_share_consumer_subscribe(e->sc, topics, 1), KN_OK);
}

static void start(env *e, const char *acquire_mode) { start_with(e, acquire_mode, NULL); }

static void stop(env *e) {
    kn_share_consumer_close(e->sc, 5000);
    kn_share_consumer_destroy(e->sc);
    kn_fake_broker_stop(e->f->fb);
    pthread_mutex_destroy(&e->f->mu);
    kn_free(e->f->acked_at);
    kn_free(e->f->ack_type);
    kn_free(e->f->ack_via);
    kn_free(e->f);
}

/* One poll (up to 2 s): at most max.poll.records records, the offsets
 * that follow the last ones, each delivered once. Returns the count. */
static int poll_once(env *e) {
    kn_records *r = NULL;
    char es[512];
    int rc = kn_share_consumer_poll(e->sc, 2000, &r, es, sizeof es);
    if (rc)
        fail_msg("poll: %s: %s", kn_err_name(rc), es);
    size_t n = kn_records_count(r);
    assert_true(n <= MPR);
    for (size_t i = 0; i < n; i++) {
        assert_int_equal(kn_records_offset(r, i), e->received + (int64_t)i);
        assert_int_equal(kn_records_delivery_count(r, i), 1);
    }
    if (n) {
        e->last_first = e->received;
        e->last_count = (int64_t)n;
    }
    e->received += (int64_t)n;
    kn_records_free(r);
    return (int)n;
}

static int fetches(env *e) {
    pthread_mutex_lock(&e->f->mu);
    int n = e->f->nfetch;
    pthread_mutex_unlock(&e->f->mu);
    return n;
}

/* How many ShareFetch requests from index `from` asked for max_records. */
static int count_asking(env *e, int from, int32_t max_records) {
    int c = 0;
    pthread_mutex_lock(&e->f->mu);
    for (int i = from; i < e->f->nfetch; i++)
        c += e->f->fetch[i].max_records == max_records;
    pthread_mutex_unlock(&e->f->mu);
    return c;
}

/* Records handed out and not yet polled: what waits in the buffer (or
 * in an answer on its way). */
static int64_t outstanding(env *e) {
    pthread_mutex_lock(&e->f->mu);
    int64_t n = e->f->next - e->received;
    pthread_mutex_unlock(&e->f->mu);
    return n;
}

/* The largest MaxRecords asked so far. */
static int32_t max_asked(env *e) {
    int32_t m = 0;
    pthread_mutex_lock(&e->f->mu);
    for (int i = 0; i < e->f->nfetch; i++)
        m = e->f->fetch[i].max_records > m ? e->f->fetch[i].max_records : m;
    pthread_mutex_unlock(&e->f->mu);
    return m;
}

/* Polls in a tight loop until `want` ShareFetch requests asked for the
 * most (16 polls), 20 s at most; stops early past the most (the caller's
 * checks then say so). */
static void drain_fast_until_grown(env *e, int want) {
    int64_t until = kn_test_now_ms() + 20000;
    while (count_asking(e, 0, 16 * MPR) < want && max_asked(e) <= 16 * MPR && kn_test_now_ms() < until)
        poll_once(e);
}

static void print_fetches(env *e, int from) {
    pthread_mutex_lock(&e->f->mu);
    char line[4096];
    size_t off = 0;
    line[0] = '\0';
    for (int i = from; i < e->f->nfetch && off < sizeof line - 16; i++)
        off += (size_t)snprintf(line + off, sizeof line - off, " %d/%d", (int)e->f->fetch[i].max_records,
                                (int)e->f->fetch[i].given);
    pthread_mutex_unlock(&e->f->mu);
    print_message("MaxRecords/given from fetch %d:%s\n", from, line);
}

/* Every ShareFetch: BatchSize max.poll.records, MaxRecords in
 * [max.poll.records, 16 x max.poll.records], and each MaxRecords the
 * one before it, twice it or half of it (bounded): one step per
 * answer. The first asks for max.poll.records. */
static void check_fetch_steps(env *e) {
    pthread_mutex_lock(&e->f->mu);
    assert_true(e->f->nfetch > 0);
    assert_int_equal(e->f->fetch[0].max_records, MPR);
    for (int i = 0; i < e->f->nfetch; i++) {
        const fetch_seen *s = &e->f->fetch[i];
        if (s->max_records < MPR || s->max_records > 16 * MPR || s->batch_size != MPR)
            fail_msg("ShareFetch %d asked MaxRecords %d BatchSize %d: outside %d..%d / not %d", i,
                     (int)s->max_records, (int)s->batch_size, MPR, 16 * MPR, MPR);
        if (i == 0)
            continue;
        int32_t prev = e->f->fetch[i - 1].max_records, up = prev * 2 > 16 * MPR ? 16 * MPR : prev * 2,
                down = prev / 2 < MPR ? MPR : prev / 2;
        if (s->max_records != prev && s->max_records != up && s->max_records != down)
            fail_msg("ShareFetch %d asked MaxRecords %d after %d: not a doubling or halving step", i,
                     (int)s->max_records, (int)prev);
    }
    pthread_mutex_unlock(&e->f->mu);
}

/* A tight loop grows MaxRecords to 16 polls and no further; a loop that
 * takes 300 ms per answer halves it back to max.poll.records and no
 * further. */
static void test_fetch_size_adapts_within_bounds(void **state) {
    (void)state;
    env e;
    start(&e, NULL);
    drain_fast_until_grown(&e, 4);
    print_fetches(&e, 0);
    check_fetch_steps(&e);
    assert_true(count_asking(&e, 0, 16 * MPR) >= 4);
    /* From now on each answer holds at most a poll; what is buffered
     * goes at the same pace, so the answers before the slow part are
     * small. */
    pthread_mutex_lock(&e.f->mu);
    e.f->cap = MPR;
    pthread_mutex_unlock(&e.f->mu);
    int64_t until = kn_test_now_ms() + 20000;
    while (outstanding(&e) > MPR && kn_test_now_ms() < until)
        poll_once(&e);
    int slow_from = fetches(&e);
    /* Slow: 300 ms between polls, each answer emptied 300 ms after it
     * landed (over 100 ms): 160 -> 80 -> 40 -> 20 -> 10, then it stays. */
    until = kn_test_now_ms() + 30000;
    while (count_asking(&e, slow_from, MPR) < 3 && kn_test_now_ms() < until)
        if (poll_once(&e))
            usleep(300 * 1000);
    print_fetches(&e, slow_from);
    assert_true(count_asking(&e, slow_from, MPR) >= 3);
    int asked_half = count_asking(&e, slow_from, 8 * MPR) + count_asking(&e, slow_from, 4 * MPR) +
                     count_asking(&e, slow_from, 2 * MPR);
    assert_true(asked_half >= 3); /* by halving steps, not a jump */
    check_fetch_steps(&e);
    stop(&e);
}

/* share.acquire.mode=record_limit: the same tight loop asks exactly
 * max.poll.records every time, in acquire mode 1 (ShareFetch v2). */
static void test_record_limit_asks_one_poll(void **state) {
    (void)state;
    env e;
    start(&e, "record_limit");
    int64_t until = kn_test_now_ms() + 20000;
    while (fetches(&e) < 40 && kn_test_now_ms() < until)
        poll_once(&e);
    print_fetches(&e, 0);
    pthread_mutex_lock(&e.f->mu);
    assert_true(e.f->nfetch >= 40);
    for (int i = 0; i < e.f->nfetch; i++) {
        assert_int_equal(e.f->fetch[i].max_records, MPR);
        assert_int_equal(e.f->fetch[i].batch_size, MPR);
        assert_int_equal(e.f->fetch[i].ver, 2);
        assert_int_equal(e.f->fetch[i].acquire_mode, 1);
    }
    pthread_mutex_unlock(&e.f->mu);
    stop(&e);
}

/* Every offset below `below` acknowledged (accepted) by now. */
static bool all_acked_below(env *e, int64_t below) {
    bool ok = true;
    pthread_mutex_lock(&e->f->mu);
    for (int64_t o = 0; o < below && ok; o++)
        ok = e->f->acked_at[o] != 0 && e->f->ack_type[o] == KN_SHARE_ACCEPT;
    pthread_mutex_unlock(&e->f->mu);
    return ok;
}

/* Acknowledgements while a grown answer is being emptied. A loop that
 * pauses 0.3 ms after each poll still empties each answer quickly
 * (MaxRecords stays above a poll), and the network thread sees every
 * poll's acknowledgements before the buffer is empty: they ride on the
 * next ShareFetch (hardly any ShareAcknowledge; sent alone, nearly every
 * poll would send one). With a slow loop (1 s between polls, 16 polls
 * buffered) each poll's acknowledgements reach the broker alone well
 * within that second, with no fetch sent. Then close: the final
 * ShareAcknowledge accepts the last poll and releases what was still
 * buffered. */
static void test_acks_wait_at_most_100ms(void **state) {
    (void)state;
    env e;
    start(&e, NULL);
    drain_fast_until_grown(&e, 2);
    pthread_mutex_lock(&e.f->mu);
    int from = e.f->nfetch, acks_before = e.f->ack_reqs;
    pthread_mutex_unlock(&e.f->mu);
    int64_t until = kn_test_now_ms() + 20000;
    while (fetches(&e) < from + 10 && kn_test_now_ms() < until)
        if (poll_once(&e))
            usleep(300);
    /* Stop right after a poll that left most of a 16-poll answer. */
    until = kn_test_now_ms() + 20000;
    while (outstanding(&e) < 12 * MPR && kn_test_now_ms() < until)
        poll_once(&e);
    assert_true(outstanding(&e) >= 12 * MPR);
    pthread_mutex_lock(&e.f->mu);
    int paced_fetches = e.f->nfetch - from, paced_acks = e.f->ack_reqs - acks_before, carried = 0, grown = 0;
    for (int i = from; i < e.f->nfetch; i++) {
        carried += e.f->fetch[i].acks > 0;
        grown += e.f->fetch[i].max_records > MPR;
    }
    int fast_fetches = e.f->nfetch;
    pthread_mutex_unlock(&e.f->mu);
    print_message("paced: %d ShareFetch (%d asking over a poll, %d carrying acknowledgements), "
                  "%d ShareAcknowledge\n",
                  paced_fetches, grown, carried, paced_acks);
    assert_true(paced_fetches >= 10);
    /* Grown answers are where the wait applies: the case must have some.
     * Not half of them: on a loaded machine (ASan beside two brokers in
     * CI) the paced loop is slow enough that MaxRecords adapts back down
     * for part of the window (8 of 22 once), which is the adaptation
     * working; the promise is the two checks below. */
    assert_true(grown >= 3);
    /* A stall over 100 ms (loaded machine) may send a few alone. */
    assert_true(carried >= paced_fetches / 2);
    assert_true(paced_acks <= paced_fetches / 4);

    /* Slow: 4 polls 1 s apart, out of the buffered answer. */
    for (int round = 0; round < 4; round++) {
        int64_t prev_end = e.received; /* the last poll's records, acknowledged by the next poll */
        int64_t t0 = kn_test_now_ms();
        assert_int_equal(poll_once(&e), MPR);
        int64_t wait_until = t0 + 1000;
        while (!all_acked_below(&e, prev_end) && kn_test_now_ms() < wait_until)
            usleep(10 * 1000);
        int64_t took = kn_test_now_ms() - t0;
        pthread_mutex_lock(&e.f->mu);
        char via = e.f->ack_via[prev_end - 1];
        int64_t at = e.f->acked_at[prev_end - 1];
        pthread_mutex_unlock(&e.f->mu);
        print_message("slow poll %d: offsets below %lld acknowledged %lld ms after the poll (via %c)\n",
                      round, (long long)prev_end, at ? (long long)(at - t0) : -1LL, via ? via : '-');
        assert_true(all_acked_below(&e, prev_end));
        assert_int_equal(via, 'A');
        if (took < 1000)
            usleep((useconds_t)(1000 - took) * 1000);
    }
    /* No fetch in those 4 s: the buffer was never empty. */
    assert_int_equal(fetches(&e), fast_fetches);
    assert_true(outstanding(&e) >= 8 * MPR);

    /* close: the last poll accepted, the buffered rest released, in the
     * session's final ShareAcknowledge */
    int64_t last_end = e.received;
    pthread_mutex_lock(&e.f->mu);
    int64_t handed = e.f->next;
    pthread_mutex_unlock(&e.f->mu);
    assert_int_equal(kn_share_consumer_close(e.sc, 5000), KN_OK);
    pthread_mutex_lock(&e.f->mu);
    assert_int_equal(e.f->final_reqs, 1);
    for (int64_t o = last_end - MPR; o < handed; o++) {
        if (e.f->ack_via[o] != 'C' || e.f->ack_type[o] != (o < last_end ? KN_SHARE_ACCEPT : KN_SHARE_RELEASE))
            fail_msg("offset %lld: acknowledged %d via %c at close", (long long)o, (int)e.f->ack_type[o],
                     e.f->ack_via[o] ? e.f->ack_via[o] : '-');
    }
    pthread_mutex_unlock(&e.f->mu);
    stop(&e);
}

/* ---- a destroy from the acknowledgement callback inside poll ------------ */

typedef struct reenter {
    kn_share_consumer *sc;
    int calls, offsets;
    int poll_rc, close_rc, commit_rc;
} reenter;

static atomic_int destroy_logged;

static void reenter_log(int level, const char *message, void *opaque) {
    (void)opaque;
    if (level == KN_LOG_ERROR && strstr(message, "destroy called from a callback of the same share consumer"))
        atomic_fetch_add(&destroy_logged, 1);
}

static void reenter_ack_cb(kn_share_consumer *sc, const char *topic, int32_t partition,
                           const int64_t *offsets, size_t count, int err, void *opaque) {
    (void)topic;
    (void)partition;
    (void)offsets;
    reenter *x = opaque;
    assert_ptr_equal(sc, x->sc);
    assert_int_equal(err, 0);
    x->calls++;
    x->offsets += (int)count;
    kn_records *r = NULL;
    char es[256];
    x->poll_rc = kn_share_consumer_poll(sc, 0, &r, es, sizeof es);
    kn_records_free(r);
    x->close_rc = kn_share_consumer_close(sc, 0);
    kn_share_consumer_destroy(sc); /* ignored: logged, nothing freed */
}

static void test_destroy_from_callback_in_poll(void **state) {
    (void)state;
    atomic_store(&destroy_logged, 0);
    env e;
    start_with(&e, NULL, reenter_log);
    reenter x = {.sc = e.sc};
    kn_share_consumer_set_ack_commit_cb(e.sc, reenter_ack_cb, &x);
    /* Each poll accepts the previous one's records; their answers reach
     * the callback from a later poll. */
    int64_t until = kn_test_now_ms() + 20000;
    while (x.calls < 3 && kn_test_now_ms() < until)
        poll_once(&e);
    print_message("callbacks from poll: %d (%d offsets), destroys logged %d\n", x.calls, x.offsets,
                  atomic_load(&destroy_logged));
    assert_true(x.calls >= 3);
    assert_int_equal(x.poll_rc, KN_ERR__STATE);
    assert_int_equal(x.close_rc, KN_ERR__STATE);
    assert_int_equal(atomic_load(&destroy_logged), x.calls);
    /* still working: more records, the handle alive */
    int64_t before = e.received;
    until = kn_test_now_ms() + 10000;
    while (e.received == before && kn_test_now_ms() < until)
        poll_once(&e);
    assert_true(e.received > before);
    /* close serves the rest of the answers (the last poll accepted, the
     * buffered records released): those destroys are ignored too */
    assert_int_equal(kn_share_consumer_close(e.sc, 5000), KN_OK);
    pthread_mutex_lock(&e.f->mu);
    int64_t handed = e.f->next;
    pthread_mutex_unlock(&e.f->mu);
    assert_int_equal(x.offsets, (int)handed);
    assert_int_equal(atomic_load(&destroy_logged), x.calls);
    kn_share_consumer_set_ack_commit_cb(e.sc, NULL, NULL);
    stop(&e);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_fetch_size_adapts_within_bounds),
        cmocka_unit_test(test_record_limit_asks_one_poll),
        cmocka_unit_test(test_acks_wait_at_most_100ms),
        cmocka_unit_test(test_destroy_from_callback_in_poll),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
