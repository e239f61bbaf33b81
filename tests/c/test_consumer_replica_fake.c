/*
 * test_consumer_replica_fake.c: closest-replica fetching (KIP-392)
 * against two fake brokers on loopback, for what a real cluster does not
 * show on demand: a read replica that is behind its leader answers
 * OFFSET_OUT_OF_RANGE for an offset the leader has. As Java does, the
 * consumer must go back to the leader without resetting its position
 * (it_consumer_replica.c shows the normal path on a real cluster).
 *
 * Node 1 leads partition t-0 (replicas 1 and 2) and serves offsets
 * 0..9; its first Fetch answer names node 2 as read replica, with no
 * records. Node 2 answers every Fetch with OFFSET_OUT_OF_RANGE.
 * ListOffsets (latest) answers 10, so a consumer that wrongly reset
 * (auto.offset.reset=latest) would skip all ten records. Expected: the
 * consumer, positioned at 0, fetches from node 2 once, is sent back to
 * node 1 and reads offsets 0..9, each once, in order.
 */
#include "kn_test.h"

#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "fake_broker.h"
#include "fake_metadata.h"
#include "kn_alloc.h"
#include "proto/generated/kp_api_versions.h"
#include "proto/generated/kp_apis.h"
#include "proto/generated/kp_fetch.h"
#include "proto/generated/kp_list_offsets.h"
#include "proto/generated/kp_metadata.h"
#include "proto/record_batch.h"
#include "writer.h"

typedef struct fake {
    kn_fake_broker *fb[2];
    int port[2];
    pthread_mutex_t mu;
    int fetches[2];      /* Fetches per node */
    bool named;          /* node 1 named node 2 once */
    int list_offsets;    /* ListOffsets seen (any node) */
    kn_wr batch;         /* offsets 0..9 */
} fake;

typedef struct node {
    fake *f;
    int id; /* 1 or 2 */
} node;

static const kn_uuid topic_id = {{9, 8, 7, 6, 5, 4, 3, 2, 1, 0, 1, 2, 3, 4, 5, 6}};

static void answer_metadata(fake *f, kp_MetadataResponse *r, kn_arena *a) {
    kn_fake_metadata_one_partition(r, a, f->port, 2, &topic_id, 0);
}

static void answer_fetch(node *n, const kn_fake_request *rq, kp_FetchResponse *r, kn_arena *a) {
    fake *f = n->f;
    const kp_FetchRequest *q = kn_fake_decode_request(a, rq);
    kp_FetchResponse_FetchableTopicResponse *tr = kn_arena_calloc(a, 1, sizeof(*tr));
    tr->topic = kn_str_c("t");
    tr->topic_id = topic_id;
    kp_FetchResponse_PartitionData *pd = kn_arena_calloc(a, 1, sizeof(*pd));
    kp_FetchResponse_PartitionData_init(pd);
    pd->partition_index = 0;
    pd->high_watermark = 10;
    pd->records = (kn_bytes){NULL, 0};
    int64_t offset = q->topics.count && q->topics.items[0].partitions.count
                         ? q->topics.items[0].partitions.items[0].fetch_offset
                         : -1;
    pthread_mutex_lock(&f->mu);
    f->fetches[n->id - 1]++;
    if (n->id == 2) {
        pd->error_code = KN_ERR_OFFSET_OUT_OF_RANGE; /* behind its leader */
        pd->high_watermark = -1;
    } else if (!f->named) {
        f->named = true;
        pd->preferred_read_replica = 2;
    } else if (offset == 0) {
        pd->records = (kn_bytes){f->batch.buf, (int32_t)f->batch.len};
    }
    pthread_mutex_unlock(&f->mu);
    tr->partitions.items = pd;
    tr->partitions.count = q->topics.count ? 1 : 0;
    r->responses.items = tr;
    r->responses.count = 1;
    r->session_id = 0; /* no session: every Fetch is full */
}

static void answer_list_offsets(fake *f, const kn_fake_request *rq, kp_ListOffsetsResponse *r, kn_arena *a) {
    const kp_ListOffsetsRequest *q = kn_fake_decode_request(a, rq);
    pthread_mutex_lock(&f->mu);
    f->list_offsets++;
    pthread_mutex_unlock(&f->mu);
    kp_ListOffsetsResponse_ListOffsetsTopicResponse *t = kn_arena_calloc(a, 1, sizeof(*t));
    kp_ListOffsetsResponse_ListOffsetsPartitionResponse *p = kn_arena_calloc(a, 1, sizeof(*p));
    kp_ListOffsetsResponse_ListOffsetsPartitionResponse_init(p);
    p->partition_index = 0;
    p->offset = 10; /* latest */
    p->leader_epoch = 0;
    t->name = q->topics.count ? q->topics.items[0].name : kn_str_c("t");
    t->partitions.items = p;
    t->partitions.count = 1;
    r->topics.items = t;
    r->topics.count = 1;
}

static bool serve_one(int fd, void *opaque) {
    node *n = opaque;
    kn_fake_request rq;
    if (!kn_fake_read_request(fd, &rq))
        return false;
    kn_arena a;
    kn_arena_init(&a, 0);
    void *body = kn_arena_alloc(&a, kp_api_get(rq.key)->resp_size);
    kp_api_get(rq.key)->resp_init(body);
    if (rq.key == KP_API_API_VERSIONS) {
        kn_fake_api_versions(&a, body);
    } else if (rq.key == KP_API_METADATA) {
        answer_metadata(n->f, body, &a);
    } else if (rq.key == KP_API_FETCH) {
        answer_fetch(n, &rq, body, &a);
    } else if (rq.key == KP_API_LIST_OFFSETS) {
        answer_list_offsets(n->f, &rq, body, &a);
    }
    size_t len;
    uint8_t *out = kn_fake_frame_response(rq.key, rq.ver, rq.corr, body, rq.ver, &len);
    kn_arena_destroy(&a);
    kn_free(rq.buf);
    kn_fake_write_all(fd, out, len);
    kn_free(out);
    return true;
}

static void build_batch(kn_wr *out) {
    kn_rb_builder_conf conf;
    kn_rb_builder_conf_init(&conf);
    conf.base_offset = 0;
    kn_rb_builder b;
    kn_rb_builder_init(&b, &conf, 0);
    for (int i = 0; i < 10; i++) {
        char v[16];
        snprintf(v, sizeof v, "v%d", i);
        kn_bytes val = {(const uint8_t *)v, (int32_t)strlen(v)};
        assert_int_equal(kn_rb_builder_append(&b, i, 1000 + i, (kn_bytes){NULL, -1}, val, NULL, 0), 0);
    }
    char es[128];
    assert_int_equal(kn_rb_builder_finish(&b, out, es, sizeof es), 0);
    kn_rb_builder_free(&b);
}

static void test_replica_out_of_range_goes_back_to_the_leader(void **state) {
    (void)state;
    fake f;
    memset(&f, 0, sizeof f);
    pthread_mutex_init(&f.mu, NULL);
    kn_wr_init(&f.batch, 0, 0);
    build_batch(&f.batch);
    node n1 = {&f, 1}, n2 = {&f, 2};
    f.fb[0] = kn_fake_broker_start(serve_one, &n1);
    f.fb[1] = kn_fake_broker_start(serve_one, &n2);
    f.port[0] = kn_fake_broker_port(f.fb[0]);
    f.port[1] = kn_fake_broker_port(f.fb[1]);

    kn_conf *conf = kn_conf_new(KN_CLIENT_CONSUMER);
    char bs[64], es[512];
    snprintf(bs, sizeof bs, "127.0.0.1:%d", f.port[0]);
    kn_test_conf_set(conf, "bootstrap.servers", bs);
    kn_test_conf_set(conf, "client.rack", "rack2");
    kn_test_conf_set(conf, "auto.offset.reset", "latest");
    kn_test_conf_set(conf, "retry.backoff.ms", "20");
    kn_test_conf_set(conf, "fetch.max.wait.ms", "50");
    kn_consumer *c = kn_consumer_new(conf, es, sizeof es);
    kn_conf_destroy(conf);
    if (!c)
        fail_msg("kn_consumer_new: %s", es);
    kn_topic_partition_list *l = kn_topic_partition_list_new();
    assert_true(kn_topic_partition_list_add(l, "t", 0) >= 0);
    assert_int_equal(kn_consumer_assign(c, l), KN_OK);
    kn_topic_partition_list_destroy(l);
    assert_int_equal(kn_consumer_seek(c, "t", 0, 0), KN_OK);

    int64_t next = 0, end = kn_test_now_ms() + 20000;
    while (next < 10 && kn_test_now_ms() < end) {
        kn_records *r = NULL;
        int rc = kn_consumer_poll(c, 100, &r, es, sizeof es);
        if (rc != KN_OK)
            fail_msg("poll: %s: %s", kn_err_name(rc), es);
        for (size_t i = 0; r && i < kn_records_count(r); i++)
            assert_int_equal(kn_records_offset(r, i), next++);
        kn_records_free(r);
    }
    int32_t replica = 0;
    assert_int_equal(kn_consumer_read_replica(c, "t", 0, &replica), KN_OK);
    kn_consumer_stats st;
    kn_consumer_get_stats(c, &st);
    pthread_mutex_lock(&f.mu);
    int f1 = f.fetches[0], f2 = f.fetches[1], lo = f.list_offsets;
    pthread_mutex_unlock(&f.mu);
    print_message("fetches: leader %d, replica %d; ListOffsets %d; read replica now %d\n", f1, f2, lo,
                  (int)replica);
    assert_int_equal(next, 10);       /* nothing skipped: no reset to latest */
    assert_int_equal(lo, 0);          /* the position was never looked up again */
    assert_int_equal(f2, 1);          /* one Fetch to the replica, then back */
    assert_true(f1 >= 2);             /* named the replica, then served the records */
    assert_int_equal(replica, -1);
    assert_int_equal(st.fetch_read_replica, 1);
    assert_int_equal(kn_consumer_close(c), KN_OK);
    kn_consumer_destroy(c);
    kn_fake_broker_stop(f.fb[0]);
    kn_fake_broker_stop(f.fb[1]);
    kn_wr_free(&f.batch);
    pthread_mutex_destroy(&f.mu);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_replica_out_of_range_goes_back_to_the_leader),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
