/*
 * it_metrics.c: the Kafka-named metrics (kafka_native_metrics.h) against
 * a real broker (KAFKA_BOOTSTRAP). A producer sends N records, a group
 * consumer reads them back and commits; the walks must then report
 * Java's names with the counts that happened: record-send-total and
 * records-consumed-total equal to N (over all and per topic, with the
 * topic tag), rates above 0, plausible latencies, per-broker metrics
 * with a node-id tag, records-lag per partition (topic and partition
 * tags) at 0 and records-lag-max falling to 0 once the consumer caught
 * up, the coordinator's assignment, rebalance and commit; the admin
 * client's own network metrics; and every view tagged with the
 * client.id. Also record-size-*, flush-time-ns-total, the
 * bufferpool-wait-* of sends that waited for a small buffer.memory and
 * the txn-*-time-ns-total of a transaction. Windows are shortened
 * (metrics.sample.window.ms) so that old lag leaves the window while
 * the test waits. A consumer's walk answers until close and returns
 * KN_ERR__CLOSED after it, without calling the visitor, whatever the
 * close timeout was.
 */
#include "kn_test.h"

#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kafka_native.h"
#include "kafka_native_metrics.h"

#define N         1000
#define VALUE_LEN 100
#define PARTS     2

typedef struct metric {
    char group[64], name[64], tags[256];
    double value;
    kn_metric_kind kind;
} metric;

typedef struct mlist {
    metric *m;
    size_t n, cap;
    const char *client_id;
    int untagged; /* views whose first tag is not our client-id */
} mlist;

static void collect(void *ctx, const kn_metric_view *v) {
    mlist *l = ctx;
    if (l->n == l->cap) {
        l->cap = l->cap ? l->cap * 2 : 128;
        l->m = realloc(l->m, l->cap * sizeof *l->m);
        assert_non_null(l->m);
    }
    metric *m = &l->m[l->n++];
    snprintf(m->group, sizeof m->group, "%s", v->group);
    snprintf(m->name, sizeof m->name, "%s", v->name);
    m->tags[0] = '\0';
    for (size_t i = 0; i < v->n_tags; i++) {
        size_t len = strlen(m->tags);
        snprintf(m->tags + len, sizeof m->tags - len, "%s=%s;", v->tags[i].key, v->tags[i].value);
    }
    m->value = v->value;
    m->kind = v->kind;
    if (v->n_tags < 1 || strcmp(v->tags[0].key, "client-id") != 0 ||
        strcmp(v->tags[0].value, l->client_id) != 0)
        l->untagged++;
    assert_non_null(v->description);
}

/* The value of group/name whose tags contain every "k=v;" of want. */
static bool find(const mlist *l, const char *group, const char *name, const char *want, double *out) {
    for (size_t i = 0; i < l->n; i++) {
        const metric *m = &l->m[i];
        if (strcmp(m->group, group) || strcmp(m->name, name))
            continue;
        if (want && !strstr(m->tags, want))
            continue;
        *out = m->value;
        return true;
    }
    return false;
}

static double get(const mlist *l, const char *group, const char *name, const char *want) {
    double v = 0;
    if (!find(l, group, name, want, &v))
        fail_msg("no metric %s / %s%s%s", group, name, want ? " with " : "", want ? want : "");
    return v;
}

static void mlist_reset(mlist *l) { l->n = 0; l->untagged = 0; }

static kn_conf *conf_for(kn_client_type type, const char *client_id) {
    kn_conf *conf = kn_conf_new(type);
    kn_test_conf_set(conf, "bootstrap.servers", kn_test_bootstrap());
    kn_test_conf_set(conf, "client.id", client_id);
    kn_test_conf_set(conf, "metrics.sample.window.ms", "1000");
    kn_test_conf_set(conf, "metrics.num.samples", "2");
    return conf;
}

static void on_delivery(kn_producer *p, const kn_delivery *d, void *opaque) {
    (void)p;
    int *failed = opaque;
    if (kn_delivery_error(d))
        (*failed)++;
}

static void produce(const char *topic) {
    char es[512] = "", pid[200];
    snprintf(pid, sizeof pid, "%s", kn_test_topic("metrics-producer"));
    kn_conf *conf = conf_for(KN_CLIENT_PRODUCER, pid);
    int failed = 0;
    kn_producer *p = kn_producer_new(conf, on_delivery, &failed, es, sizeof es);
    kn_conf_destroy(conf);
    if (!p)
        fail_msg("kn_producer_new: %s", es);
    char value[VALUE_LEN];
    memset(value, 'v', sizeof value);
    for (int i = 0; i < N; i++) {
        kn_record_out rec = KN_RECORD_OUT_INIT;
        rec.topic = topic;
        rec.partition = i % PARTS;
        rec.value = value;
        rec.value_len = sizeof value;
        if (kn_producer_send(p, &rec, es, sizeof es) != KN_OK)
            fail_msg("send: %s", es);
    }
    assert_int_equal(kn_producer_flush(p, 60000), KN_OK);
    assert_int_equal(failed, 0);

    mlist l = {.client_id = pid};
    assert_int_equal(kn_producer_metrics(p, collect, &l), KN_OK);
    assert_int_equal(l.untagged, 0);
    const char *g = "producer-metrics";
    /* As Java counts them, sends are per attempt: a retried record (a
     * fresh topic's leader not elected yet: NOT_LEADER_OR_FOLLOWER) is
     * sent twice and counted in record-retry-total too. */
    double retried = get(&l, g, "record-retry-total", NULL);
    assert_true(get(&l, g, "record-send-total", NULL) == N + retried);
    assert_true(get(&l, g, "record-send-rate", NULL) > 0);
    assert_true(get(&l, g, "record-error-total", NULL) == 0);
    double lat = get(&l, g, "request-latency-avg", NULL);
    double lat_max = get(&l, g, "request-latency-max", NULL);
    print_message("request-latency-avg %.3f ms, max %.3f ms\n", lat, lat_max);
    assert_true(lat > 0 && lat <= lat_max && lat_max < 30000);
    assert_true(get(&l, g, "batch-size-avg", NULL) > VALUE_LEN);
    double cr = get(&l, g, "compression-rate-avg", NULL);
    assert_true(cr > 0 && cr <= 1.5);
    assert_true(get(&l, g, "record-queue-time-max", NULL) >= 0);
    assert_true(get(&l, g, "records-per-request-avg", NULL) >= 1);
    /* The largest record of each batch: the value plus its few bytes of
     * record framing (lengths, deltas, attributes as varints). */
    double rs_avg = get(&l, g, "record-size-avg", NULL), rs_max = get(&l, g, "record-size-max", NULL);
    print_message("record-size-avg %.1f, max %.1f\n", rs_avg, rs_max);
    assert_true(rs_max > VALUE_LEN && rs_max < VALUE_LEN + 32);
    assert_true(rs_avg > VALUE_LEN && rs_avg <= rs_max);
    /* Plenty of buffer.memory: no send waited; the flush took time. */
    assert_true(get(&l, g, "bufferpool-wait-ratio", NULL) == 0);
    assert_true(get(&l, g, "bufferpool-wait-time-ns-total", NULL) == 0);
    assert_true(get(&l, g, "buffer-exhausted-total", NULL) == 0);
    assert_true(get(&l, g, "flush-time-ns-total", NULL) > 0);
    assert_true(get(&l, g, "txn-commit-time-ns-total", NULL) == 0);
    /* The first send waited for the topic's metadata. */
    assert_true(get(&l, g, "metadata-wait-time-ns-total", NULL) > 0);
    assert_true(get(&l, g, "produce-throttle-time-max", NULL) == 0);
    assert_true(get(&l, g, "buffer-available-bytes", NULL) == get(&l, g, "buffer-total-bytes", NULL));
    assert_true(get(&l, g, "outgoing-byte-rate", NULL) > 0);
    assert_true(get(&l, g, "incoming-byte-rate", NULL) > 0);
    assert_true(get(&l, g, "request-rate", NULL) > 0);
    assert_true(get(&l, g, "response-rate", NULL) > 0);
    assert_true(get(&l, g, "outgoing-byte-total", NULL) > (double)N * VALUE_LEN);
    assert_true(get(&l, g, "connection-count", NULL) >= 1);
    assert_true(get(&l, g, "connection-creation-total", NULL) >= 1);
    /* Per topic, with its tag; per broker, with node-id. */
    char tt[256];
    snprintf(tt, sizeof tt, "topic=%s;", topic);
    assert_true(get(&l, "producer-topic-metrics", "record-send-total", tt) ==
                N + get(&l, "producer-topic-metrics", "record-retry-total", tt));
    assert_true(get(&l, "producer-topic-metrics", "byte-total", tt) > (double)N * VALUE_LEN);
    assert_true(get(&l, "producer-topic-metrics", "record-send-rate", tt) > 0);
    assert_true(get(&l, "producer-node-metrics", "request-total", "node-id=node-") > 0);
    double nlat = get(&l, "producer-node-metrics", "request-latency-avg", "node-id=node-");
    assert_true(nlat > 0 && nlat < 30000);
    /* The older counters agree. */
    kn_producer_stats st = {.size = sizeof st};
    assert_int_equal(kn_producer_get_stats(p, &st), KN_OK);
    assert_true(st.records_sent == N);
    /* Still readable after close, until destroy. */
    assert_int_equal(kn_producer_close(p, 10000), KN_OK);
    mlist_reset(&l);
    assert_int_equal(kn_producer_metrics(p, collect, &l), KN_OK);
    assert_true(get(&l, g, "record-send-total", NULL) == N + retried);
    assert_int_equal(kn_producer_metrics(NULL, collect, &l), KN_ERR__INVALID_ARG);
    assert_int_equal(kn_producer_metrics(p, NULL, &l), KN_ERR__INVALID_ARG);
    kn_producer_destroy(p);
    free(l.m);
}

static void consume(const char *topic) {
    char es[512] = "", cid[200], group[200];
    snprintf(cid, sizeof cid, "%s", kn_test_topic("metrics-consumer"));
    snprintf(group, sizeof group, "%s", kn_test_topic("metrics-group"));
    kn_conf *conf = conf_for(KN_CLIENT_CONSUMER, cid);
    kn_test_conf_set(conf, "group.id", group);
    kn_test_conf_set(conf, "auto.offset.reset", "earliest");
    kn_test_conf_set(conf, "enable.auto.commit", "false");
    kn_test_conf_set(conf, "fetch.max.wait.ms", "100");
    kn_consumer *c = kn_consumer_new(conf, es, sizeof es);
    kn_conf_destroy(conf);
    if (!c)
        fail_msg("kn_consumer_new: %s", es);
    const char *topics[] = {topic};
    assert_int_equal(kn_consumer_subscribe(c, topics, 1, NULL, NULL), KN_OK);
    int64_t got = 0, until = kn_test_now_ms() + 60000;
    while (got < N) {
        if (kn_test_now_ms() > until)
            fail_msg("consumed %lld of %d records", (long long)got, N);
        kn_records *recs = NULL;
        int rc = kn_consumer_poll(c, 500, &recs, es, sizeof es);
        if (rc != KN_OK)
            fail_msg("poll: %s", es);
        got += (int64_t)kn_records_count(recs);
        kn_records_free(recs);
    }
    assert_int_equal(got, N);
    assert_int_equal(kn_consumer_commit_sync(c, NULL, 30000), KN_OK);

    /* Caught up: the lag recorded while reading leaves the 2 x 1 s
     * window while empty fetches record 0. */
    mlist l = {.client_id = cid};
    const char *fm = "consumer-fetch-manager-metrics";
    until = kn_test_now_ms() + 30000;
    for (;;) {
        kn_records *recs = NULL;
        assert_int_equal(kn_consumer_poll(c, 200, &recs, es, sizeof es), KN_OK);
        assert_int_equal(kn_records_count(recs), 0);
        kn_records_free(recs);
        mlist_reset(&l);
        assert_int_equal(kn_consumer_metrics(c, collect, &l), KN_OK);
        double lag_max = get(&l, fm, "records-lag-max", NULL);
        double hb = get(&l, "consumer-coordinator-metrics", "last-heartbeat-seconds-ago", NULL);
        if (lag_max == 0 && hb >= 0)
            break;
        if (kn_test_now_ms() > until)
            fail_msg("records-lag-max stayed at %g (last heartbeat %g s ago)", lag_max, hb);
    }
    assert_int_equal(l.untagged, 0);
    assert_true(get(&l, fm, "records-consumed-total", NULL) == N);
    assert_true(get(&l, fm, "bytes-consumed-total", NULL) == (double)N * VALUE_LEN);
    assert_true(get(&l, fm, "fetch-total", NULL) >= 1);
    assert_true(get(&l, fm, "fetch-rate", NULL) > 0);
    double fl = get(&l, fm, "fetch-latency-avg", NULL);
    assert_true(fl >= 0 && fl < 30000);
    assert_true(get(&l, fm, "fetch-throttle-time-max", NULL) == 0);
    assert_true(get(&l, fm, "records-lead-min", NULL) >= N / PARTS);
    char tt[256];
    snprintf(tt, sizeof tt, "topic=%s;", topic);
    assert_true(get(&l, fm, "records-consumed-total", tt) == N);
    assert_true(get(&l, fm, "bytes-consumed-total", tt) == (double)N * VALUE_LEN);
    for (int p = 0; p < PARTS; p++) {
        char pt[300];
        snprintf(pt, sizeof pt, "topic=%s;partition=%d;", topic, p);
        assert_true(get(&l, fm, "records-lag", pt) == 0);
    }
    const char *cm = "consumer-coordinator-metrics";
    assert_true(get(&l, cm, "assigned-partitions", NULL) == PARTS);
    assert_true(get(&l, cm, "rebalance-total", NULL) >= 1);
    assert_true(get(&l, cm, "last-rebalance-seconds-ago", NULL) >= 0);
    assert_true(get(&l, cm, "last-heartbeat-seconds-ago", NULL) >= 0);
    assert_true(get(&l, cm, "commit-total", NULL) >= 1);
    double cl = get(&l, cm, "commit-latency-max", NULL);
    assert_true(isnan(cl) || (cl > 0 && cl < 30000)); /* NaN once the commit left the window */
    assert_true(get(&l, "consumer-metrics", "last-poll-seconds-ago", NULL) >= 0);
    assert_true(get(&l, "consumer-metrics", "incoming-byte-total", NULL) > (double)N * VALUE_LEN);
    assert_true(get(&l, "consumer-node-metrics", "response-total", "node-id=node-") > 0);
    assert_int_equal(kn_consumer_close(c, 10000), KN_OK);
    assert_int_equal(kn_consumer_metrics(c, collect, &l), KN_ERR__CLOSED);
    kn_consumer_destroy(c);
    free(l.m);
}

static void admin_metrics(void) {
    char es[512] = "", aid[200];
    snprintf(aid, sizeof aid, "%s", kn_test_topic("metrics-admin"));
    kn_conf *conf = conf_for(KN_CLIENT_ADMIN, aid);
    kn_admin *a = kn_admin_new(conf, es, sizeof es);
    kn_conf_destroy(conf);
    if (!a)
        fail_msg("kn_admin_new: %s", es);
    kn_cluster_description *d = NULL;
    if (kn_admin_describe_cluster(a, 30000, &d, es, sizeof es) != KN_OK)
        fail_msg("describe_cluster: %s", es);
    kn_cluster_description_destroy(d);
    mlist l = {.client_id = aid};
    assert_int_equal(kn_admin_metrics(a, collect, &l), KN_OK);
    assert_int_equal(l.untagged, 0);
    assert_true(get(&l, "admin-client-metrics", "request-total", NULL) >= 1);
    assert_true(get(&l, "admin-client-metrics", "response-total", NULL) >= 1);
    assert_true(get(&l, "admin-client-node-metrics", "request-latency-max", "node-id=node-") > 0);
    kn_admin_close(a, 10000);
    kn_admin_destroy(a);
    free(l.m);
}

/* A small buffer.memory makes sends wait for the sender to free it
 * (bufferpool-wait-*); a transaction times its calls (txn-*-time). */
static void produce_waits_and_txn(const char *topic) {
    char es[512] = "", pid[200], tid[200];
    snprintf(pid, sizeof pid, "%s", kn_test_topic("metrics-txn-producer"));
    snprintf(tid, sizeof tid, "%s", kn_test_topic("metrics-tid"));
    kn_conf *conf = conf_for(KN_CLIENT_PRODUCER, pid);
    kn_test_conf_set(conf, "buffer.memory", "32768");
    kn_test_conf_set(conf, "batch.size", "8192");
    kn_test_conf_set(conf, "transactional.id", tid);
    kn_producer *p = kn_producer_new(conf, NULL, NULL, es, sizeof es);
    kn_conf_destroy(conf);
    if (!p)
        fail_msg("kn_producer_new: %s", es);
    assert_int_equal(kn_producer_init_transactions(p, 60000, es, sizeof es), KN_OK);
    assert_int_equal(kn_producer_begin_transaction(p, es, sizeof es), KN_OK);
    char value[VALUE_LEN];
    memset(value, 'w', sizeof value);
    /* 200 KB of records through a 32 KB buffer. */
    for (int i = 0; i < 2000; i++) {
        kn_record_out rec = KN_RECORD_OUT_INIT;
        rec.topic = topic;
        rec.partition = i % PARTS;
        rec.value = value;
        rec.value_len = sizeof value;
        if (kn_producer_send(p, &rec, es, sizeof es) != KN_OK)
            fail_msg("send: %s", es);
    }
    assert_int_equal(kn_producer_commit_transaction(p, 60000, es, sizeof es), KN_OK);
    mlist l = {.client_id = pid};
    assert_int_equal(kn_producer_metrics(p, collect, &l), KN_OK);
    const char *g = "producer-metrics";
    double wait_ns = get(&l, g, "bufferpool-wait-time-ns-total", NULL);
    double ratio = get(&l, g, "bufferpool-wait-ratio", NULL);
    print_message("bufferpool-wait-time-ns-total %.0f, bufferpool-wait-ratio %.4f\n", wait_ns, ratio);
    assert_true(wait_ns > 0);
    assert_true(ratio > 0 && ratio <= 1.01);
    assert_true(get(&l, g, "buffer-exhausted-total", NULL) == 0);
    assert_true(get(&l, g, "txn-init-time-ns-total", NULL) > 0);
    assert_true(get(&l, g, "txn-begin-time-ns-total", NULL) > 0);
    assert_true(get(&l, g, "txn-commit-time-ns-total", NULL) > 0);
    assert_true(get(&l, g, "txn-abort-time-ns-total", NULL) == 0);
    assert_true(get(&l, g, "txn-send-offsets-time-ns-total", NULL) == 0);
    /* commit's own flush is not the application's. */
    assert_true(get(&l, g, "flush-time-ns-total", NULL) == 0);
    assert_int_equal(kn_producer_close(p, 10000), KN_OK);
    kn_producer_destroy(p);
    free(l.m);
}

static void test_metrics(void **state) {
    (void)state;
    char topic[200];
    snprintf(topic, sizeof topic, "%s", kn_test_topic("metrics"));
    kn_test_create_topic(topic, PARTS);
    produce(topic);
    consume(topic);
    admin_metrics();
    produce_waits_and_txn(topic);
}

/* kafka_native_metrics.h: "KN_ERR__CLOSED for a consumer ... after
 * close (its network client is gone)": the visitor is not called, and
 * it stays so on a second close, after a close with timeout 0 too. */
static void consumer_metrics_closed(const char *topic, int close_timeout_ms) {
    char es[512] = "", cid[200];
    snprintf(cid, sizeof cid, "%s", kn_test_topic("metrics-closed"));
    kn_conf *conf = conf_for(KN_CLIENT_CONSUMER, cid);
    kn_test_conf_set(conf, "auto.offset.reset", "earliest");
    kn_consumer *c = kn_consumer_new(conf, es, sizeof es);
    kn_conf_destroy(conf);
    if (!c)
        fail_msg("kn_consumer_new: %s", es);
    kn_topic_partition_list *tp = kn_topic_partition_list_new();
    assert_true(kn_topic_partition_list_add(tp, topic, 0) >= 0);
    assert_int_equal(kn_consumer_assign(c, tp), KN_OK);
    kn_topic_partition_list_destroy(tp);
    kn_records *recs = NULL;
    assert_int_equal(kn_consumer_poll(c, 100, &recs, es, sizeof es), KN_OK);
    kn_records_free(recs);
    mlist l = {.client_id = cid};
    assert_int_equal(kn_consumer_metrics(c, collect, &l), KN_OK);
    assert_true(l.n > 0);
    assert_int_equal(l.untagged, 0);
    assert_int_equal(kn_consumer_close(c, close_timeout_ms), KN_OK);
    mlist_reset(&l);
    assert_int_equal(kn_consumer_metrics(c, collect, &l), KN_ERR__CLOSED);
    assert_int_equal(l.n, 0); /* fn never ran */
    assert_int_equal(kn_consumer_close(c, close_timeout_ms), KN_OK);
    assert_int_equal(kn_consumer_metrics(c, collect, &l), KN_ERR__CLOSED);
    assert_int_equal(l.n, 0);
    kn_consumer_destroy(c);
    free(l.m);
}

static void test_consumer_metrics_after_close(void **state) {
    (void)state;
    char topic[200];
    snprintf(topic, sizeof topic, "%s", kn_test_topic("metrics-closed"));
    kn_test_create_topic(topic, 1);
    consumer_metrics_closed(topic, 10000);
    consumer_metrics_closed(topic, 0);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_metrics),
        cmocka_unit_test(test_consumer_metrics_after_close),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
