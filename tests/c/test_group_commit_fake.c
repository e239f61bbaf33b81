/*
 * test_group_commit_fake.c: the KIP-848 commit path against a fake group
 * coordinator on a loopback socket, for two behaviours a real broker
 * does not show on demand: STALE_MEMBER_EPOCH on an OffsetCommit (a 4.3
 * coordinator accepts an older epoch for partitions still assigned;
 * 4.0 - 4.2 coordinators demand the exact epoch). The real-broker side
 * of group commits is it_group.c / it_group_coordinator.c.
 *
 * The fake (a thread answering with the generated encoders) serves
 * ApiVersions, Metadata (topic "t", 2 partitions), FindCoordinator,
 * ConsumerGroupHeartbeat, OffsetFetch (committed offset 5) and
 * OffsetCommit. The member joins and owns t-0 and t-1 at epoch 1; the
 * next heartbeat's target drops t-1. Under enable.auto.commit the
 * revocation commits first; the fake (demanding the exact epoch, as a
 * 4.0 - 4.2 coordinator does) bumps the epoch to 2 just as that commit
 * arrives, refuses it with STALE_MEMBER_EPOCH, and tells the member the
 * new epoch in its next heartbeat answer:
 *  - the revocation's commit is sent again (refused while the member
 *    still has epoch 1) until it carries epoch 2, and succeeds before
 *    REVOKED runs (Java's auto-commit before a rebalance does the same);
 *  - a user's commit_sync refused with STALE_MEMBER_EPOCH returns that
 *    error after one attempt (Java: CommitFailedException, no retry).
 * And a coordinator that leaves the cluster metadata between two
 * commits, with no heartbeat due (a second fake is node 2): the next
 * commit_sync finds the new coordinator instead of timing out.
 */
#include "kn_test.h"

#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "fake_broker.h"
#include "kn_alloc.h"
#include "proto/generated/kp_api_versions.h"
#include "proto/generated/kp_apis.h"
#include "proto/generated/kp_consumer_group_heartbeat.h"
#include "proto/generated/kp_find_coordinator.h"
#include "proto/generated/kp_metadata.h"
#include "proto/generated/kp_offset_commit.h"
#include "proto/generated/kp_offset_fetch.h"

#define MAX_COMMITS 32

typedef struct fake {
    kn_fake_broker *fb;
    int port;
    pthread_mutex_t mu;
    /* group state (mu) */
    int32_t epoch;    /* the member's epoch at the coordinator */
    bool revoke_sent; /* the target without t-1 went out */
    int stale_left;   /* commits that still find the epoch bumped */
    int commits;
    int32_t commit_epoch[MAX_COMMITS];
    int commit_parts[MAX_COMMITS]; /* bit p: partition p was in it */
    int64_t commit_offset[MAX_COMMITS];
    bool commit_stale[MAX_COMMITS];
    /* the coordinator-move case: a second node (port2) that leads t;
     * node 1 coordinates until moved, then leaves the metadata */
    kn_fake_broker *fb2;
    int port2;
    bool moved;
    int md_after_move; /* Metadata answers (without node 1) since the move */
    /* a stalled coordinator: OffsetCommit answers wait while hold is set
     * (the connection, heartbeats included, stalls with them) */
    bool hold;
    int commits_arrived;
    pthread_cond_t cv;
} fake;

static const kn_uuid topic_id = {{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16}};

static void answer_heartbeat(fake *f, const kp_ConsumerGroupHeartbeatRequest *q,
                             kp_ConsumerGroupHeartbeatResponse *r, kn_arena *a) {
    r->member_id = q->member_id;
    /* The move case: no heartbeat between the join and the commits, so
     * only the commit path can notice the coordinator left. */
    r->heartbeat_interval_ms = f->port2 ? 60000 : 100;
    if (q->member_epoch < 0) {
        r->member_epoch = q->member_epoch; /* leaving */
        return;
    }
    int32_t owned = 0;
    for (int32_t i = 0; i < q->topic_partitions.count; i++)
        owned += q->topic_partitions.items[i].partitions.count;
    int32_t *parts = NULL, nparts = 0;
    if (q->member_epoch == 0) {
        f->epoch = 1; /* join: t-0 and t-1 */
        nparts = 2;
    } else if (!f->port2 && !f->revoke_sent && owned == 2) {
        f->revoke_sent = true; /* it owns both: take t-1 back */
        nparts = 1;
    }
    r->member_epoch = f->epoch;
    if (!nparts)
        return;
    parts = kn_arena_calloc(a, 2, sizeof(int32_t));
    parts[0] = 0;
    parts[1] = 1;
    kp_ConsumerGroupHeartbeatResponse_Assignment *as = kn_arena_calloc(a, 1, sizeof(*as));
    kp_ConsumerGroupHeartbeatResponse_TopicPartitions *tp = kn_arena_calloc(a, 1, sizeof(*tp));
    tp->topic_id = topic_id;
    tp->partitions.items = parts;
    tp->partitions.count = nparts;
    as->topic_partitions.items = tp;
    as->topic_partitions.count = 1;
    r->assignment = as;
}

static void answer_commit(fake *f, const kp_OffsetCommitRequest *q, kp_OffsetCommitResponse *r, kn_arena *a) {
    /* Like a 4.0 - 4.2 coordinator: the exact epoch or STALE_MEMBER_EPOCH.
     * The first commit after the revocation went out finds the epoch
     * moved on (as when the coordinator bumped it and the heartbeat
     * telling the member is still on its way). */
    if (f->revoke_sent && f->stale_left > 0) {
        f->stale_left--;
        f->epoch++;
    }
    bool stale = q->generation_id_or_member_epoch != f->epoch;
    if (f->commits < MAX_COMMITS) {
        int k = f->commits++;
        f->commit_epoch[k] = q->generation_id_or_member_epoch;
        f->commit_stale[k] = stale;
        for (int32_t t = 0; t < q->topics.count; t++)
            for (int32_t i = 0; i < q->topics.items[t].partitions.count; i++) {
                f->commit_parts[k] |= 1 << q->topics.items[t].partitions.items[i].partition_index;
                f->commit_offset[k] = q->topics.items[t].partitions.items[i].committed_offset;
            }
    }
    r->topics.count = q->topics.count;
    r->topics.items = kn_arena_calloc(a, (size_t)q->topics.count + 1, sizeof(*r->topics.items));
    for (int32_t t = 0; t < q->topics.count; t++) {
        r->topics.items[t].name = q->topics.items[t].name;
        int32_t n = q->topics.items[t].partitions.count;
        r->topics.items[t].partitions.count = n;
        r->topics.items[t].partitions.items =
            kn_arena_calloc(a, (size_t)n + 1, sizeof(*r->topics.items[t].partitions.items));
        for (int32_t i = 0; i < n; i++) {
            r->topics.items[t].partitions.items[i].partition_index =
                q->topics.items[t].partitions.items[i].partition_index;
            r->topics.items[t].partitions.items[i].error_code = stale ? KN_ERR_STALE_MEMBER_EPOCH : 0;
        }
    }
}

static uint8_t *answer(void *opaque, const kn_fake_request *rq, size_t *len) {
    fake *f = opaque;
    int16_t key = rq->key;
    kn_arena a;
    kn_arena_init(&a, 0);
    void *body = kn_arena_alloc(&a, kp_api_get(key)->resp_size);
    kp_api_get(key)->resp_init(body);
    if (key == KP_API_API_VERSIONS) {
        kn_fake_api_versions(&a, body);
    } else if (key == KP_API_METADATA) {
        kp_MetadataResponse *r = body;
        kp_MetadataResponse_MetadataResponseBroker *b = kn_arena_calloc(&a, 2, sizeof(*b));
        pthread_mutex_lock(&f->mu);
        bool moved = f->moved;
        f->md_after_move += moved;
        pthread_mutex_unlock(&f->mu);
        int nb = 0;
        if (!moved) /* node 1: gone from the metadata once moved */
            b[nb++] =
                (kp_MetadataResponse_MetadataResponseBroker){1, kn_str_c("127.0.0.1"), f->port, {NULL, -1}};
        if (f->port2)
            b[nb++] =
                (kp_MetadataResponse_MetadataResponseBroker){2, kn_str_c("127.0.0.1"), f->port2, {NULL, -1}};
        r->brokers.items = b;
        r->brokers.count = nb;
        r->cluster_id = kn_str_c("fake-cluster");
        int32_t leader = f->port2 ? 2 : 1;
        r->controller_id = leader;
        kp_MetadataResponse_MetadataResponseTopic *t = kn_arena_calloc(&a, 1, sizeof(*t));
        kp_MetadataResponse_MetadataResponseTopic_init(t);
        t->name = kn_str_c("t");
        t->topic_id = topic_id;
        kp_MetadataResponse_MetadataResponsePartition *ps = kn_arena_calloc(&a, 2, sizeof(*ps));
        int32_t *rep = kn_arena_calloc(&a, 1, sizeof(int32_t));
        *rep = leader;
        for (int p = 0; p < 2; p++) {
            kp_MetadataResponse_MetadataResponsePartition_init(&ps[p]);
            ps[p].partition_index = p;
            ps[p].leader_id = leader;
            ps[p].leader_epoch = 0;
            ps[p].replica_nodes = (kp_int32_array){rep, 1};
            ps[p].isr_nodes = (kp_int32_array){rep, 1};
        }
        t->partitions.items = ps;
        t->partitions.count = 2;
        r->topics.items = t;
        r->topics.count = 1;
    } else if (key == KP_API_FIND_COORDINATOR) {
        kp_FindCoordinatorResponse *r = body;
        pthread_mutex_lock(&f->mu);
        bool moved = f->moved;
        pthread_mutex_unlock(&f->mu);
        if (rq->ver >= 4) {
            /* KIP-699: one answer per key asked for. */
            const kp_FindCoordinatorRequest *q = kn_fake_decode_request(&a, rq);
            int32_t n = q->coordinator_keys.count;
            r->coordinators.items = kn_arena_calloc(&a, (size_t)n + 1, sizeof(*r->coordinators.items));
            r->coordinators.count = n;
            for (int32_t i = 0; i < n; i++) {
                kp_FindCoordinatorResponse_Coordinator *co = &r->coordinators.items[i];
                co->key = q->coordinator_keys.items[i];
                co->node_id = moved ? 2 : 1;
                co->host = kn_str_c("127.0.0.1");
                co->port = moved ? f->port2 : f->port;
                co->error_message.len = -1;
            }
        } else {
            r->node_id = moved ? 2 : 1;
            r->host = kn_str_c("127.0.0.1");
            r->port = moved ? f->port2 : f->port;
        }
    } else if (key == KP_API_CONSUMER_GROUP_HEARTBEAT) {
        pthread_mutex_lock(&f->mu);
        answer_heartbeat(f, kn_fake_decode_request(&a, rq), body, &a);
        pthread_mutex_unlock(&f->mu);
    } else if (key == KP_API_OFFSET_COMMIT) {
        pthread_mutex_lock(&f->mu);
        f->commits_arrived++;
        while (f->hold)
            pthread_cond_wait(&f->cv, &f->mu);
        answer_commit(f, kn_fake_decode_request(&a, rq), body, &a);
        pthread_mutex_unlock(&f->mu);
    } else if (key == KP_API_OFFSET_FETCH) {
        /* v7 or older (the client's cap): offset 5 for what was asked. */
        assert_true(rq->ver <= 7);
        const kp_OffsetFetchRequest *q = kn_fake_decode_request(&a, rq);
        kp_OffsetFetchResponse *r = body;
        r->topics.count = q->topics.count;
        r->topics.items = kn_arena_calloc(&a, (size_t)q->topics.count + 1, sizeof(*r->topics.items));
        for (int32_t t = 0; t < q->topics.count; t++) {
            int32_t n = q->topics.items[t].partition_indexes.count;
            kp_OffsetFetchResponse_OffsetFetchResponsePartition *ps =
                kn_arena_calloc(&a, (size_t)n + 1, sizeof(*ps));
            for (int32_t i = 0; i < n; i++) {
                kp_OffsetFetchResponse_OffsetFetchResponsePartition_init(&ps[i]);
                ps[i].partition_index = q->topics.items[t].partition_indexes.items[i];
                ps[i].committed_offset = 5;
                ps[i].metadata = kn_str_c("");
            }
            r->topics.items[t].name = q->topics.items[t].name;
            r->topics.items[t].partitions.items = ps;
            r->topics.items[t].partitions.count = n;
        }
    }
    uint8_t *out = kn_fake_frame_response(key, rq->ver, rq->corr, body, rq->ver, len);
    kn_arena_destroy(&a);
    return out;
}

/* One request on fd (kn_fake_serve_fn). */
static fake *fake_start(void) {
    fake *f = kn_calloc(1, sizeof *f);
    pthread_mutex_init(&f->mu, NULL);
    pthread_cond_init(&f->cv, NULL);
    f->fb = kn_fake_broker_start_answering(answer, f);
    f->port = kn_fake_broker_port(f->fb);
    return f;
}

static void fake_stop(fake *f) {
    if (f->fb)
        kn_fake_broker_stop(f->fb);
    if (f->fb2)
        kn_fake_broker_stop(f->fb2);
    pthread_cond_destroy(&f->cv);
    pthread_mutex_destroy(&f->mu);
    kn_free(f);
}

typedef struct listener {
    int revoked, assigned;
    int commits_at_revoke; /* fake commits seen when REVOKED ran */
    fake *f;
} listener;

static int on_rebalance(kn_consumer *c, kn_rebalance_event ev, const kn_topic_partition_list *parts,
                        void *opaque) {
    listener *l = opaque;
    if (ev == KN_REBALANCE_ASSIGNED) {
        l->assigned++;
        /* No fetching: the fake serves no records (positions stay at
         * the committed offset 5). */
        kn_consumer_pause(c, parts);
    } else if (ev == KN_REBALANCE_REVOKED && kn_topic_partition_list_count(parts) == 1 &&
               kn_topic_partition_list_partition(parts, 0) == 1) {
        l->revoked++;
        pthread_mutex_lock(&l->f->mu);
        l->commits_at_revoke = l->f->commits;
        pthread_mutex_unlock(&l->f->mu);
    }
    return 0;
}

/* A KIP-848 member of a group on fake f, subscribed to "t" with l as
 * its listener; extra: NULL-terminated key, value pairs. */
static kn_consumer *fake_member(fake *f, const char *group, const char *const *extra, listener *l) {
    kn_conf *conf = kn_conf_new(KN_CLIENT_CONSUMER);
    char bs[64], es[512];
    snprintf(bs, sizeof bs, "127.0.0.1:%d", f->port);
    kn_test_conf_set(conf, "bootstrap.servers", bs);
    kn_test_conf_set(conf, "group.id", group);
    kn_test_conf_set(conf, "group.protocol", "consumer");
    kn_test_conf_set(conf, "retry.backoff.ms", "20");
    for (; extra && extra[0]; extra += 2)
        kn_test_conf_set(conf, extra[0], extra[1]);
    kn_consumer *c = kn_consumer_new(conf, es, sizeof es);
    kn_conf_destroy(conf);
    if (!c)
        fail_msg("kn_consumer_new: %s", es);
    const char *topics[] = {"t"};
    assert_int_equal(kn_consumer_subscribe(c, topics, 1, on_rebalance, l), KN_OK);
    return c;
}

/* Polls c until *flag (set by its listener, inside poll) or 20 s. */
static void poll_until_flag(kn_consumer *c, const int *flag) {
    char es[512];
    int64_t end = kn_test_now_ms() + 20000;
    while (!*flag && kn_test_now_ms() < end) {
        kn_records *recs = NULL;
        int rc = kn_consumer_poll(c, 50, &recs, es, sizeof es);
        if (rc != KN_OK)
            fail_msg("poll: %s: %s", kn_err_name(rc), es);
        kn_records_free(recs);
    }
}

static void test_revoke_commit_retries_stale_epoch(void **state) {
    (void)state;
    fake *f = fake_start();
    f->stale_left = 1;
    listener l = {.f = f};
    const char *extra[] = {"enable.auto.commit", "true", "auto.commit.interval.ms", "600000", NULL};
    kn_consumer *c = fake_member(f, "g", extra, &l);
    poll_until_flag(c, &l.revoked);
    assert_int_equal(l.revoked, 1);
    pthread_mutex_lock(&f->mu);
    /* the revocation's commit: refused at epoch 1, sent again at epoch 2
     * and accepted, both before REVOKED ran */
    assert_true(f->commits >= 2);
    assert_int_equal(l.commits_at_revoke, f->commits);
    assert_int_equal(f->commit_epoch[0], 1);
    assert_true(f->commit_stale[0]);
    assert_int_equal(f->commit_parts[0], 1 << 1);
    assert_int_equal(f->commit_offset[0], 5);
    int last = f->commits - 1;
    assert_int_equal(f->commit_epoch[last], 2);
    assert_false(f->commit_stale[last]);
    assert_int_equal(f->commit_parts[last], 1 << 1);
    int before = f->commits;
    /* a user's commit_sync refused with STALE_MEMBER_EPOCH: one attempt,
     * the error comes back */
    f->stale_left = 1;
    pthread_mutex_unlock(&f->mu);
    kn_topic_partition_list *l0 = kn_topic_partition_list_new();
    kn_topic_partition_list_set_offset(l0, (size_t)kn_topic_partition_list_add(l0, "t", 0), 7);
    assert_int_equal(kn_consumer_commit_sync(c, l0, 5000), KN_ERR_STALE_MEMBER_EPOCH);
    kn_topic_partition_list_destroy(l0);
    pthread_mutex_lock(&f->mu);
    assert_int_equal(f->commits, before + 1);
    assert_true(f->commit_stale[before]);
    pthread_mutex_unlock(&f->mu);
    print_message("revocation commit: %d attempts (epoch 1 refused, epoch 2 accepted); user commit_sync: "
                  "STALE_MEMBER_EPOCH after 1 attempt\n",
                  before);
    kn_consumer_close(c, -1);
    kn_consumer_destroy(c);
    fake_stop(f);
}

/* The coordinator (node 1) shuts down and leaves the cluster metadata
 * (as a KRaft broker does) while no heartbeat is due; node 2 takes over.
 * A commit_sync made then must find node 2, not wait on node 1 until it
 * times out: the wire layer holds a request for a node missing from the
 * metadata until request.timeout.ms, here as long as the commit's own
 * timeout (the it_group_coordinator failure: two 30 s timeouts in a
 * row). */
static void test_commit_finds_coordinator_that_moved(void **state) {
    (void)state;
    fake *f = fake_start();
    f->fb2 = kn_fake_broker_start_answering(answer, f);
    f->port2 = kn_fake_broker_port(f->fb2);
    listener l = {.f = f};
    const char *extra[] = {"enable.auto.commit", "false", "metadata.max.age.ms", "100",
                           "request.timeout.ms", "3000", NULL};
    kn_consumer *c = fake_member(f, "g-move", extra, &l);
    poll_until_flag(c, &l.assigned);
    assert_int_equal(l.assigned, 1);
    kn_topic_partition_list *l0 = kn_topic_partition_list_new();
    kn_topic_partition_list_set_offset(l0, (size_t)kn_topic_partition_list_add(l0, "t", 0), 7);
    assert_int_equal(kn_consumer_commit_sync(c, l0, 3000), KN_OK); /* at node 1 */
    /* The move: node 1 stops (its connections close, new ones are
     * refused) and the next Metadata answers leave it out. */
    pthread_mutex_lock(&f->mu);
    f->moved = true;
    int commits_before = f->commits;
    pthread_mutex_unlock(&f->mu);
    kn_fake_broker_stop(f->fb);
    f->fb = NULL;
    char es[512];
    int64_t end = kn_test_now_ms() + 10000;
    for (;;) { /* two refreshes since: the client has applied one */
        pthread_mutex_lock(&f->mu);
        int n = f->md_after_move;
        pthread_mutex_unlock(&f->mu);
        if (n >= 2)
            break;
        if (kn_test_now_ms() > end)
            fail_msg("no Metadata request after the move within 10 s");
        kn_records *recs = NULL;
        assert_int_equal(kn_consumer_poll(c, 50, &recs, es, sizeof es), KN_OK);
        kn_records_free(recs);
    }
    kn_topic_partition_list_set_offset(l0, 0, 9);
    int rc = kn_consumer_commit_sync(c, l0, 3000);
    if (rc != KN_OK)
        fail_msg("commit_sync after the coordinator moved: %s", kn_err_name(rc));
    pthread_mutex_lock(&f->mu);
    assert_int_equal(f->commits, commits_before + 1);
    assert_int_equal(f->commit_offset[commits_before], 9);
    pthread_mutex_unlock(&f->mu);
    kn_topic_partition_list_destroy(l0);
    kn_consumer_close(c, -1);
    kn_consumer_destroy(c);
    fake_stop(f);
}

/* Issue #14 item 10: close under enable.auto.commit commits once (the
 * revoke's), not a commit_sync of the positions and then the revoke's
 * commit again. */
static void test_close_commits_once(void **state) {
    (void)state;
    fake *f = fake_start();
    listener l = {.f = f};
    const char *extra[] = {"enable.auto.commit", "true", "auto.commit.interval.ms", "600000", NULL};
    kn_consumer *c = fake_member(f, "g-close", extra, &l);
    poll_until_flag(c, &l.revoked); /* settled: owns t-0 */
    pthread_mutex_lock(&f->mu);
    int before = f->commits;
    pthread_mutex_unlock(&f->mu);
    assert_int_equal(kn_consumer_close(c, -1), KN_OK);
    pthread_mutex_lock(&f->mu);
    int at_close = f->commits - before;
    int last = f->commits - 1;
    pthread_mutex_unlock(&f->mu);
    print_message("OffsetCommit requests sent by close: %d\n", at_close);
    assert_int_equal(at_close, 1);
    assert_int_equal(f->commit_parts[last], 1 << 0);
    assert_int_equal(f->commit_offset[last], 5);
    kn_consumer_destroy(c);
    fake_stop(f);
}

static void *release_later(void *arg) {
    fake *f = arg;
    usleep(4000 * 1000);
    pthread_mutex_lock(&f->mu);
    f->hold = false;
    pthread_cond_broadcast(&f->cv);
    pthread_mutex_unlock(&f->mu);
    return NULL;
}

/* Issue #14 item 3: the auto-commit before a revoke does not block
 * poll. The coordinator stalls (OffsetCommit unanswered for 4 s, the
 * connection with it); poll(0) keeps returning at once meanwhile, the
 * revoke waits, and once the commit is answered a later poll runs
 * REVOKED after it. */
static void test_revoke_commit_does_not_block_poll(void **state) {
    (void)state;
    fake *f = fake_start();
    f->hold = true;
    listener l = {.f = f};
    const char *extra[] = {"enable.auto.commit", "true", "auto.commit.interval.ms", "600000",
                           "default.api.timeout.ms", "20000", NULL};
    kn_consumer *c = fake_member(f, "g-stall", extra, &l);
    pthread_t th;
    pthread_create(&th, NULL, release_later, f);
    char es[512];
    int64_t end = kn_test_now_ms() + 20000, worst = 0, stalled_polls = 0;
    for (;;) {
        pthread_mutex_lock(&f->mu);
        bool held = f->hold, arrived = f->commits_arrived > 0;
        pthread_mutex_unlock(&f->mu);
        if (!held || kn_test_now_ms() > end)
            break;
        int64_t t0 = kn_test_now_ms();
        kn_records *recs = NULL;
        int rc = kn_consumer_poll(c, 0, &recs, es, sizeof es);
        int64_t took = kn_test_now_ms() - t0;
        if (rc != KN_OK)
            fail_msg("poll: %s: %s", kn_err_name(rc), es);
        kn_records_free(recs);
        if (took > worst)
            worst = took;
        stalled_polls += arrived;
        usleep(10 * 1000);
    }
    pthread_join(th, NULL);
    print_message("poll(0) while the commit before the revoke was unanswered: %lld polls, the slowest %lld ms\n",
                  (long long)stalled_polls, (long long)worst);
    assert_true(stalled_polls > 0);
    assert_true(worst < 1000); /* generous: poll(0) never waits on the network */
    assert_int_equal(l.revoked, 0); /* the revoke waited for the commit */
    poll_until_flag(c, &l.revoked);
    assert_int_equal(l.revoked, 1);
    pthread_mutex_lock(&f->mu);
    assert_true(f->commits >= 1);
    assert_int_equal(l.commits_at_revoke, f->commits); /* committed before REVOKED */
    assert_int_equal(f->commit_parts[0], 1 << 1);
    assert_int_equal(f->commit_offset[0], 5);
    pthread_mutex_unlock(&f->mu);
    kn_consumer_close(c, -1);
    kn_consumer_destroy(c);
    fake_stop(f);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_revoke_commit_retries_stale_epoch),
        cmocka_unit_test(test_commit_finds_coordinator_that_moved),
        cmocka_unit_test(test_revoke_commit_does_not_block_poll),
        cmocka_unit_test(test_close_commits_once),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
