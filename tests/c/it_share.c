/*
 * it_share.c: share groups (KIP-932) against the real broker: several
 * share consumers on a 2-partition topic (more members than
 * partitions) take every record exactly once; released records come
 * back with delivery count 2, rejected ones never; records a member
 * held when it was killed, or closed without acknowledging, go to the
 * others with delivery count 2; bad input (an acknowledgement for a
 * record not acquired, an expired acquisition lock, keys a share
 * consumer refuses) gets a clear error; a destroy from the consumer's
 * own callback, in commit_sync or in close, is ignored and logged
 * (test_share_fetch_fake.c: from poll). The
 * explicit-acknowledgement test also reads the share consumer's Kafka
 * metrics (consumer-share-fetch-manager-metrics, as Java's) after
 * consuming: every delivery, byte and acknowledgement counted.
 *
 * KN_SHARE_RECORDS sets the record count of the work-split test
 * (default 2000; the acceptance run uses 10000). About 90 s in all:
 * every new share group gets its first assignment with the member's
 * second heartbeat (group.share.heartbeat.interval.ms, 5 s), and
 * each test starts fresh groups (one per member lifetime it checks).
 */
#include "kn_test.h"

#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "kafka_native_share.h"

#define WAIT_MS 60000

static kn_producer *producer_new(void) {
    kn_conf *conf = kn_conf_new(KN_CLIENT_PRODUCER);
    kn_test_conf_set(conf, "bootstrap.servers", kn_test_bootstrap());
    kn_test_conf_set(conf, "linger.ms", "5");
    char es[512];
    kn_producer *p = kn_producer_new(conf, NULL, NULL, es, sizeof es);
    kn_conf_destroy(conf);
    if (!p)
        fail_msg("kn_producer_new: %s", es);
    return p;
}

/* Queues records from..from+n-1 (value: the number, partition: the
 * number modulo partitions) without waiting. */
static void send_values(kn_producer *p, const char *topic, int partitions, int from, int n) {
    char es[512];
    for (int i = from; i < from + n; i++) {
        char v[32];
        int len = snprintf(v, sizeof v, "%d", i);
        kn_record_out r = KN_RECORD_OUT_INIT;
        r.topic = topic;
        r.partition = i % partitions;
        r.value = v;
        r.value_len = (size_t)len;
        assert_int_equal(kn_producer_send(p, &r, es, sizeof es), KN_OK);
    }
}

static void produce(const char *topic, int from, int n) {
    kn_producer *p = producer_new();
    send_values(p, topic, 2, from, n);
    assert_int_equal(kn_producer_flush(p, 30000), KN_OK);
    kn_producer_close(p, 10000);
    kn_producer_destroy(p);
}

/* Sets share group configs (pairs of key, value; NULL ends) with the
 * admin client. */
static void group_config(const char *group, ...) {
    kn_conf *conf = kn_conf_new(KN_CLIENT_ADMIN);
    kn_test_conf_set(conf, "bootstrap.servers", kn_test_bootstrap());
    char es[512];
    kn_admin *a = kn_admin_new(conf, es, sizeof es);
    assert_non_null(a);
    kn_config_op ops[4];
    size_t n = 0;
    va_list ap;
    va_start(ap, group);
    const char *k;
    while ((k = va_arg(ap, const char *)) && n < 4) {
        ops[n].resource_type = KN_CONFIG_RESOURCE_GROUP;
        ops[n].resource_name = group;
        ops[n].op = KN_CONFIG_OP_SET;
        ops[n].name = k;
        ops[n].value = va_arg(ap, const char *);
        n++;
    }
    va_end(ap);
    kn_config_results *res = NULL;
    int rc = kn_admin_incremental_alter_configs(a, ops, n, 0, 30000, &res, es, sizeof es);
    if (rc != KN_OK || kn_config_results_error(res, 0) != 0)
        fail_msg("group config for %s: %s %s", group, es,
                 res && kn_config_results_error_message(res, 0) ? kn_config_results_error_message(res, 0)
                                                                : "");
    kn_config_results_destroy(res);
    /* The broker applies it from the metadata log a moment later: a
     * member joining first would start the group at the log end. */
    kn_config_resource rsrc = {KN_CONFIG_RESOURCE_GROUP, group};
    int64_t until = kn_test_now_ms() + 30000;
    bool applied = false;
    while (!applied && kn_test_now_ms() < until) {
        kn_config_descriptions *d = NULL;
        if (kn_admin_describe_configs(a, &rsrc, 1, 0, 10000, &d, es, sizeof es) == KN_OK) {
            applied = true;
            for (size_t i = 0; i < n; i++) {
                const kn_config_entry *e = kn_config_descriptions_find(d, 0, ops[i].name);
                if (!e || !kn_config_entry_value(e) || strcmp(kn_config_entry_value(e), ops[i].value) != 0)
                    applied = false;
            }
        }
        kn_config_descriptions_destroy(d);
        if (!applied)
            usleep(100 * 1000);
    }
    assert_true(applied);
    kn_admin_destroy(a);
    kn_conf_destroy(conf);
}

/* A share consumer of group on topic; key/value: one more setting
 * (NULL: none). */
static kn_share_consumer *share_new_with(const char *group, const char *mode, const char *topic,
                                         const char *key, const char *value) {
    kn_conf *conf = kn_conf_new(KN_CLIENT_CONSUMER);
    kn_test_conf_set(conf, "bootstrap.servers", kn_test_bootstrap());
    kn_test_conf_set(conf, "group.id", group);
    kn_test_conf_set(conf, "share.acknowledgement.mode", mode);
    kn_test_conf_set(conf, "max.poll.records", "200");
    if (key)
        kn_test_conf_set(conf, key, value);
    char es[512];
    kn_share_consumer *sc = kn_share_consumer_new(conf, es, sizeof es);
    if (!sc)
        fail_msg("kn_share_consumer_new: %s", es);
    kn_conf_destroy(conf);
    assert_int_equal(kn_share_consumer_subscribe(sc, &topic, 1), KN_OK);
    return sc;
}

static kn_share_consumer *share_new(const char *group, const char *mode, const char *topic) {
    return share_new_with(group, mode, topic, NULL, NULL);
}

static int value_of(const kn_records *r, size_t i) {
    size_t len;
    const char *v = kn_records_value(r, i, &len);
    char buf[32];
    assert_true(len < sizeof buf);
    memcpy(buf, v, len);
    buf[len] = 0;
    return atoi(buf);
}

/* Several members (3 C consumers, 2 partitions) take N records: each
 * exactly once. */
static void test_work_split(void **state) {
    (void)state;
    const char *env = getenv("KN_SHARE_RECORDS");
    int n = env ? atoi(env) : 2000;
    char topic[128], group[160];
    snprintf(topic, sizeof topic, "%s", kn_test_topic("share-split"));
    snprintf(group, sizeof group, "%s-g", topic);
    kn_test_create_topic(topic, 2);
    group_config(group, "share.auto.offset.reset", "earliest", NULL);
    produce(topic, 0, n);
    kn_share_consumer *sc[3];
    for (int i = 0; i < 3; i++)
        sc[i] = share_new(group, "implicit", topic);
    int *seen = calloc((size_t)n, sizeof(int));
    int total = 0, got[3] = {0, 0, 0};
    int64_t until = kn_test_now_ms() + WAIT_MS;
    while (total < n && kn_test_now_ms() < until) {
        for (int i = 0; i < 3; i++) {
            kn_records *r = NULL;
            char es[512];
            int rc = kn_share_consumer_poll(sc[i], 100, &r, es, sizeof es);
            if (rc)
                fail_msg("poll: %s", es);
            for (size_t k = 0; k < kn_records_count(r); k++) {
                int v = value_of(r, k);
                assert_true(v >= 0 && v < n);
                assert_int_equal(kn_records_delivery_count(r, k), 1);
                seen[v]++;
                total++;
                got[i]++;
            }
            kn_records_free(r);
        }
    }
    /* a little longer: nothing comes twice */
    for (int round = 0; round < 5; round++)
        for (int i = 0; i < 3; i++) {
            kn_records *r = NULL;
            char es[512];
            assert_int_equal(kn_share_consumer_poll(sc[i], 50, &r, es, sizeof es), KN_OK);
            total += (int)kn_records_count(r);
            kn_records_free(r);
        }
    for (int i = 0; i < 3; i++) {
        kn_topic_partition_list *res = NULL;
        char es[512];
        assert_int_equal(kn_share_consumer_commit_sync(sc[i], 30000, &res, es, sizeof es), KN_OK);
        kn_topic_partition_list_destroy(res);
    }
    print_message("share split: %d records, per member %d %d %d\n", total, got[0], got[1], got[2]);
    assert_int_equal(total, n);
    for (int v = 0; v < n; v++)
        if (seen[v] != 1)
            fail_msg("record %d seen %d times", v, seen[v]);
    int members_with_records = (got[0] > 0) + (got[1] > 0) + (got[2] > 0);
    assert_true(members_with_records >= 2);
    for (int i = 0; i < 3; i++) {
        assert_int_equal(kn_share_consumer_close(sc[i], -1), KN_OK);
        kn_share_consumer_destroy(sc[i]);
    }
    free(seen);
}

/* ---- metrics: Java's consumer-share-fetch-manager-metrics ---- */

typedef struct metric_find {
    const char *group, *name;
    double value;
    int found;
} metric_find;

static void find_metric(void *ctx, const kn_metric_view *m) {
    metric_find *f = ctx;
    if (!strcmp(m->group, f->group) && !strcmp(m->name, f->name)) {
        f->value = m->value;
        f->found++;
    }
}

/* The value of group/name in sc's metrics; fails the test when absent. */
static double metric(kn_share_consumer *sc, const char *group, const char *name) {
    metric_find f = {group, name, 0, 0};
    assert_int_equal(kn_share_consumer_metrics(sc, find_metric, &f), KN_OK);
    if (f.found != 1)
        fail_msg("metric %s %s: found %d times", group, name, f.found);
    return f.value;
}

#define FM "consumer-share-fetch-manager-metrics"

typedef struct cbstate {
    int calls, errs, offsets;
    int last_err;
} cbstate;

static void ack_cb(kn_share_consumer *sc, const char *topic, int32_t partition, const int64_t *offsets,
                   size_t count, int err, void *opaque) {
    (void)sc;
    (void)topic;
    (void)partition;
    (void)offsets;
    cbstate *s = opaque;
    s->calls++;
    s->offsets += (int)count;
    if (err) {
        s->errs++;
        s->last_err = err;
    }
}

/* Explicit mode: release -> delivery count 2, reject -> never again,
 * accept -> done; the callback sees every acknowledgement. */
static void test_explicit_acks(void **state) {
    (void)state;
    const int n = 200;
    char topic[128], group[160];
    snprintf(topic, sizeof topic, "%s", kn_test_topic("share-acks"));
    snprintf(group, sizeof group, "%s-g", topic);
    kn_test_create_topic(topic, 2);
    group_config(group, "share.auto.offset.reset", "earliest", NULL);
    produce(topic, 0, n);
    kn_share_consumer *sc = share_new(group, "explicit", topic);
    cbstate cbs = {0};
    kn_share_consumer_set_ack_commit_cb(sc, ack_cb, &cbs);
    int *dc = calloc((size_t)n, sizeof(int)), *accepted = calloc((size_t)n, sizeof(int));
    int *released = calloc((size_t)n, sizeof(int)), *rejected = calloc((size_t)n, sizeof(int));
    int done = 0, nrel = 0, nrej = 0, deliveries = 0;
    int64_t bytes = 0;
    int64_t until = kn_test_now_ms() + WAIT_MS;
    while (done < n && kn_test_now_ms() < until) {
        kn_records *r = NULL;
        char es[512];
        int rc = kn_share_consumer_poll(sc, 200, &r, es, sizeof es);
        if (rc)
            fail_msg("poll: %s", es);
        for (size_t k = 0; k < kn_records_count(r); k++) {
            int v = value_of(r, k);
            size_t vlen;
            (void)kn_records_value(r, k, &vlen);
            deliveries++;
            bytes += (int64_t)vlen;
            assert_false(rejected[v]);
            assert_false(accepted[v]);
            int d = kn_records_delivery_count(r, k);
            int type = KN_SHARE_ACCEPT;
            if (d == 1 && v % 4 == 0) {
                type = KN_SHARE_RELEASE;
                released[v] = 1;
                nrel++;
            } else if (d == 1 && v % 4 == 1) {
                type = KN_SHARE_REJECT;
                rejected[v] = 1;
                nrej++;
                done++;
            } else {
                if (released[v])
                    assert_int_equal(d, 2);
                else
                    assert_int_equal(d, 1);
                accepted[v] = 1;
                done++;
            }
            dc[v] = d;
            assert_int_equal(kn_share_consumer_acknowledge(sc, r, k, type), KN_OK);
        }
        if (kn_records_count(r)) {
            kn_topic_partition_list *res = NULL;
            assert_int_equal(kn_share_consumer_commit_sync(sc, 30000, &res, es, sizeof es), KN_OK);
            assert_true(kn_topic_partition_list_count(res) >= 1);
            kn_topic_partition_list_destroy(res);
        }
        kn_records_free(r);
    }
    assert_int_equal(done, n);
    assert_int_equal(nrel, n / 4);
    assert_int_equal(nrej, n / 4);
    for (int v = 0; v < n; v++)
        if (released[v])
            assert_int_equal(dc[v], 2);
    /* rejected ones never come back */
    kn_records *r = NULL;
    char es[512];
    assert_int_equal(kn_share_consumer_poll(sc, 1000, &r, es, sizeof es), KN_OK);
    assert_int_equal(kn_records_count(r), 0);
    kn_records_free(r);
    assert_int_equal(cbs.errs, 0);
    assert_int_equal(cbs.offsets, n + n / 4); /* every acknowledgement, released ones twice */
    /* The metrics Java's KafkaShareConsumer keeps, read after
     * consuming: every delivery and its bytes, every acknowledgement
     * sent (the released ones twice), none failed. */
    assert_int_equal(deliveries, n + n / 4);
    assert_true(metric(sc, FM, "records-consumed-total") == deliveries);
    assert_true(metric(sc, FM, "bytes-consumed-total") == (double)bytes);
    assert_true(metric(sc, FM, "records-consumed-rate") > 0);
    assert_true(metric(sc, FM, "records-per-request-max") >= 1);
    assert_true(metric(sc, FM, "records-per-request-max") <= 200); /* max.poll.records */
    assert_true(metric(sc, FM, "acknowledgements-send-total") == n + n / 4);
    assert_true(metric(sc, FM, "acknowledgements-send-rate") > 0);
    assert_true(metric(sc, FM, "acknowledgements-error-total") == 0);
    double fetches = metric(sc, FM, "fetch-total");
    assert_true(fetches >= 1);
    assert_true(metric(sc, FM, "fetch-latency-max") >= 0); /* NaN (no fetch in the window) fails */
    assert_true(metric(sc, FM, "fetch-size-max") > 0);
    assert_true(metric(sc, FM, "fetch-throttle-time-max") == 0); /* no quota on this client */
    assert_true(metric(sc, "consumer-share-metrics", "time-between-poll-max") >= 0);
    double idle = metric(sc, "consumer-share-metrics", "poll-idle-ratio-avg");
    assert_true(idle >= 0 && idle <= 1);
    assert_true(metric(sc, "consumer-share-metrics", "last-poll-seconds-ago") >= 0);
    print_message("share metrics: %.0f fetches, %.0f records, %.0f acknowledgements sent\n", fetches,
                  metric(sc, FM, "records-consumed-total"), metric(sc, FM, "acknowledgements-send-total"));
    assert_int_equal(kn_share_consumer_close(sc, -1), KN_OK);
    kn_share_consumer_destroy(sc);
    free(dc);
    free(accepted);
    free(released);
    free(rejected);
}


/* Polls sc until it returns records (explicit mode leaves them
 * unacknowledged); returns them. */
static kn_records *poll_some(kn_share_consumer *sc) {
    int64_t until = kn_test_now_ms() + WAIT_MS;
    while (kn_test_now_ms() < until) {
        kn_records *r = NULL;
        char es[512];
        int rc = kn_share_consumer_poll(sc, 200, &r, es, sizeof es);
        if (rc)
            fail_msg("poll: %s", es);
        if (kn_records_count(r))
            return r;
        kn_records_free(r);
    }
    fail_msg("no records within %d ms", WAIT_MS);
    return NULL;
}

/* Takes every record left, accepting; checks each value's delivery
 * count against want (indexed by value: the deliveries the test saw),
 * returns how many. */
static int drain_all(kn_share_consumer *sc, int n, const int *want_dc, int expect) {
    int total = 0;
    int64_t until = kn_test_now_ms() + WAIT_MS;
    while (total < expect && kn_test_now_ms() < until) {
        kn_records *r = NULL;
        char es[512];
        if (kn_share_consumer_poll(sc, 200, &r, es, sizeof es))
            fail_msg("poll: %s", es);
        for (size_t k = 0; k < kn_records_count(r); k++) {
            int v = value_of(r, k);
            assert_true(v >= 0 && v < n);
            /* want_dc counts the deliveries the test saw; a member that
             * left may also have held a batch fetched ahead of its last
             * poll (released with it: one more each, at most two
             * members) */
            int d = kn_records_delivery_count(r, k);
            if (d < want_dc[v] || d > want_dc[v] + 2)
                fail_msg("record %d: delivery count %d, want %d (+ up to 2)", v, d, want_dc[v]);
            assert_int_equal(kn_share_consumer_acknowledge(sc, r, k, KN_SHARE_ACCEPT), KN_OK);
            total++;
        }
        kn_records_free(r);
    }
    return total;
}

/* Records held by a member that closes without acknowledging, and by a
 * member killed with SIGKILL, are redelivered with delivery count 2. */
static void test_close_and_kill_redeliver(void **state) {
    (void)state;
    const int n = 100;
    char topic[128], group[160];
    snprintf(topic, sizeof topic, "%s", kn_test_topic("share-redeliver"));
    snprintf(group, sizeof group, "%s-g", topic);
    kn_test_create_topic(topic, 2);
    group_config(group, "share.auto.offset.reset", "earliest", NULL);
    produce(topic, 0, n);
    int want[100];
    for (int i = 0; i < n; i++)
        want[i] = 1;
    /* close without acknowledging */
    kn_share_consumer *a = share_new(group, "explicit", topic);
    kn_records *r = poll_some(a);
    size_t held = kn_records_count(r);
    for (size_t k = 0; k < held; k++)
        want[value_of(r, k)] = 2;
    kn_records_free(r);
    assert_int_equal(kn_share_consumer_close(a, -1), KN_OK);
    kn_share_consumer_destroy(a);
    /* a killed member: a child process polls, reports, dies */
    int fds[2];
    assert_int_equal(pipe(fds), 0);
    pid_t pid = fork();
    if (pid == 0) {
        close(fds[0]);
        kn_share_consumer *c = share_new(group, "explicit", topic);
        kn_records *cr = poll_some(c);
        for (size_t k = 0; k < kn_records_count(cr); k++) {
            int v = value_of(cr, k);
            if (write(fds[1], &v, sizeof v) != sizeof v)
                _exit(3);
        }
        close(fds[1]);
        raise(SIGKILL);
        _exit(4);
    }
    close(fds[1]);
    int v, killed_held = 0;
    while (read(fds[0], &v, sizeof v) == sizeof v) {
        assert_true(v >= 0 && v < n);
        want[v]++; /* 2 for a fresh one, 3 when a closed member held it too */
        killed_held++;
    }
    close(fds[0]);
    int status;
    waitpid(pid, &status, 0);
    assert_true(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
    print_message("close released %zu, kill released %d\n", held, killed_held);
    assert_true(held > 0 && killed_held > 0);
    kn_share_consumer *b = share_new(group, "explicit", topic);
    assert_int_equal(drain_all(b, n, want, n), n);
    kn_topic_partition_list *res = NULL;
    char es[512];
    assert_int_equal(kn_share_consumer_commit_sync(b, 30000, &res, es, sizeof es), KN_OK);
    kn_topic_partition_list_destroy(res);
    assert_int_equal(kn_share_consumer_close(b, -1), KN_OK);
    kn_share_consumer_destroy(b);
}

/* Bad input: acknowledgements for records not acquired, the wrong mode,
 * a poll with records unacknowledged, an expired acquisition lock,
 * keys a share consumer refuses. */
static void test_bad_input(void **state) {
    (void)state;
    char es[512];
    kn_conf *conf = kn_conf_new(KN_CLIENT_CONSUMER);
    kn_test_conf_set(conf, "bootstrap.servers", kn_test_bootstrap());
    assert_null(kn_share_consumer_new(conf, es, sizeof es));
    assert_non_null(strstr(es, "group.id"));
    kn_test_conf_set(conf, "group.id", "g");
    kn_test_conf_set(conf, "auto.offset.reset", "earliest");
    assert_null(kn_share_consumer_new(conf, es, sizeof es));
    assert_non_null(strstr(es, "auto.offset.reset"));
    kn_conf_destroy(conf);

    const int n = 20;
    char topic[128], group[160];
    snprintf(topic, sizeof topic, "%s", kn_test_topic("share-bad"));
    snprintf(group, sizeof group, "%s-g", topic);
    kn_test_create_topic(topic, 2);
    group_config(group, "share.auto.offset.reset", "earliest", "share.record.lock.duration.ms", "1000", NULL);
    produce(topic, 0, n);

    kn_share_consumer *im = share_new(group, "implicit", topic);
    assert_int_equal(kn_share_consumer_acknowledge_offset(im, topic, 0, 0, KN_SHARE_ACCEPT), KN_ERR__STATE);
    kn_share_consumer_close(im, -1);
    kn_share_consumer_destroy(im);

    kn_share_consumer *sc = share_new(group, "explicit", topic);
    cbstate cbs = {0};
    kn_share_consumer_set_ack_commit_cb(sc, ack_cb, &cbs);
    kn_records *r = poll_some(sc);
    size_t cnt = kn_records_count(r);
    /* not acquired: an offset this member was never given */
    assert_int_equal(kn_share_consumer_acknowledge_offset(sc, topic, 0, 1000000, KN_SHARE_ACCEPT),
                     KN_ERR__STATE);
    assert_int_equal(kn_share_consumer_acknowledge_offset(sc, "no-such-topic", 0, 0, KN_SHARE_ACCEPT),
                     KN_ERR__STATE);
    assert_int_equal(kn_share_consumer_acknowledge(sc, r, 0, 7), KN_ERR__INVALID_ARG);
    assert_int_equal(kn_share_consumer_acknowledge(sc, r, cnt, KN_SHARE_ACCEPT), KN_ERR__INVALID_ARG);
    /* unacknowledged: the next poll refuses */
    kn_records *r2 = NULL;
    assert_int_equal(kn_share_consumer_poll(sc, 0, &r2, es, sizeof es), KN_ERR__STATE);
    assert_non_null(strstr(es, "explicit"));
    /* the lock (1 s) expires before the acknowledgement is sent */
    usleep(3000 * 1000);
    for (size_t k = 0; k < cnt; k++)
        assert_int_equal(kn_share_consumer_acknowledge(sc, r, k, KN_SHARE_ACCEPT), KN_OK);
    kn_topic_partition_list *res = NULL;
    int rc = kn_share_consumer_commit_sync(sc, 30000, &res, es, sizeof es);
    assert_int_equal(rc, KN_ERR_INVALID_RECORD_STATE);
    assert_non_null(res);
    assert_int_equal(kn_topic_partition_list_err(res, 0), KN_ERR_INVALID_RECORD_STATE);
    kn_topic_partition_list_destroy(res);
    assert_true(cbs.errs >= 1);
    assert_int_equal(cbs.last_err, KN_ERR_INVALID_RECORD_STATE);
    /* sent once: no longer acknowledgeable */
    assert_int_equal(kn_share_consumer_acknowledge(sc, r, 0, KN_SHARE_ACCEPT), KN_ERR__STATE);
    /* those records come again, delivery count 2 */
    int64_t first = kn_records_offset(r, 0);
    int32_t part = kn_records_partition(r, 0);
    kn_records_free(r);
    bool again = false;
    int64_t until = kn_test_now_ms() + WAIT_MS;
    while (!again && kn_test_now_ms() < until) {
        r = poll_some(sc);
        for (size_t k = 0; k < kn_records_count(r); k++) {
            if (kn_records_offset(r, k) == first && kn_records_partition(r, k) == part) {
                assert_true(kn_records_delivery_count(r, k) >= 2);
                again = true;
            }
            kn_share_consumer_acknowledge(sc, r, k, KN_SHARE_ACCEPT);
        }
        kn_records_free(r);
    }
    assert_true(again);
    kn_share_consumer_close(sc, -1);
    kn_share_consumer_destroy(sc);
}

/* ---- KIP-1222: acquisition lock renewal ---- */

#define LOCK_MS 1000 /* the group's share.record.lock.duration.ms (the harness minimum) */

/* Whether b's records (accepted at once) include one of held's,
 * delivered again after held's delivery (a higher delivery count: b may
 * first hand out a stale copy it fetched ahead, whose lock is gone). */
static bool took_any_of(kn_share_consumer *b, const kn_records *held, int *delivery_count) {
    kn_records *r = NULL;
    char es[512];
    if (kn_share_consumer_poll(b, 100, &r, es, sizeof es))
        fail_msg("poll: %s", es);
    bool hit = false;
    for (size_t k = 0; k < kn_records_count(r); k++) {
        for (size_t h = 0; h < kn_records_count(held); h++)
            if (kn_records_offset(r, k) == kn_records_offset(held, h) &&
                kn_records_partition(r, k) == kn_records_partition(held, h) &&
                kn_records_delivery_count(r, k) > kn_records_delivery_count(held, h)) {
                hit = true;
                *delivery_count = kn_records_delivery_count(r, k);
            }
        assert_int_equal(kn_share_consumer_acknowledge(b, r, k, KN_SHARE_ACCEPT), KN_OK);
    }
    size_t got = kn_records_count(r);
    kn_records_free(r);
    if (got) {
        kn_topic_partition_list *res = NULL;
        (void)kn_share_consumer_commit_sync(b, 30000, &res, es, sizeof es);
        kn_topic_partition_list_destroy(res);
    }
    return hit;
}

/* A member holds the records of one poll for many lock durations,
 * renewing their locks (KN_SHARE_RENEW) while a second member of the
 * group (both assigned the topic's one partition) polls: the second
 * never gets them, and the first accepts them afterwards without
 * error. Then a batch held without renewal: the second member gets it
 * (delivery count above the first's). Renewal is refused in implicit
 * mode and for a record already acknowledged. */
static void test_renew_lock(void **state) {
    (void)state;
    char topic[128], group[160], es[512], ms[16];
    snprintf(topic, sizeof topic, "%s", kn_test_topic("share-renew"));
    snprintf(group, sizeof group, "%s-g", topic);
    snprintf(ms, sizeof ms, "%d", LOCK_MS);
    /* One partition: both members are assigned it (a share group gives
     * each member its own partitions while there are enough), so the
     * second can take whatever lock lapses. */
    kn_test_create_topic(topic, 1);
    group_config(group, "share.auto.offset.reset", "earliest", "share.record.lock.duration.ms", ms, NULL);
    kn_producer *prod = producer_new();
    send_values(prod, topic, 1, 0, 10);
    assert_int_equal(kn_producer_flush(prod, 30000), KN_OK);

    /* a short fetch wait: a renewal never queues long behind a fetch */
    kn_share_consumer *a = share_new_with(group, "explicit", topic, "fetch.max.wait.ms", "100");
    cbstate cbs = {0};
    kn_share_consumer_set_ack_commit_cb(a, ack_cb, &cbs);
    kn_records *held = poll_some(a);
    size_t n = kn_records_count(held);
    kn_share_consumer *b = NULL;
    int dc = 0, b_took = 0;
    int64_t start = kn_test_now_ms(), proved = 0, renewals = 0;
    while (kn_test_now_ms() < start + WAIT_MS) {
        for (size_t k = 0; k < n; k++) {
            int rc = kn_share_consumer_acknowledge(a, held, k, KN_SHARE_RENEW);
            if (rc == KN_ERR__UNSUPPORTED_VERSION && renewals == 0 && k == 0) {
                /* a broker before 4.3: refused, as promised, nothing sent */
                print_message("skipped: the broker has no ShareAcknowledge v2 (KIP-1222): "
                              "renewal refused with _UNSUPPORTED_VERSION\n");
                for (size_t j = 0; j < n; j++)
                    kn_share_consumer_acknowledge(a, held, j, KN_SHARE_RELEASE);
                kn_records_free(held);
                kn_share_consumer_close(a, -1);
                kn_share_consumer_destroy(a);
                kn_producer_close(prod, 10000);
                kn_producer_destroy(prod);
                skip();
            }
            if (rc != KN_OK)
                fail_msg("renew: %s", kn_err_name(rc));
        }
        renewals++;
        if (!b) {
            /* b proves it is assigned and fetching by taking records
             * produced now (or, if a fetched them ahead, once a's
             * unpolled locks on them expire). Nothing here waits on
             * the network: the next renewal is due. */
            b = share_new(group, "explicit", topic);
            send_values(prod, topic, 1, 100, 10);
            continue;
        }
        int64_t until = kn_test_now_ms() + LOCK_MS / 4;
        while (kn_test_now_ms() < until) {
            kn_records *r = NULL;
            if (kn_share_consumer_poll(b, 50, &r, es, sizeof es))
                fail_msg("poll: %s", es);
            for (size_t k = 0; k < kn_records_count(r); k++) {
                for (size_t h = 0; h < n; h++)
                    if (kn_records_offset(r, k) == kn_records_offset(held, h) &&
                        kn_records_partition(r, k) == kn_records_partition(held, h))
                        fail_msg("offset %lld of partition %d went to the other member while renewed",
                                 (long long)kn_records_offset(r, k), (int)kn_records_partition(r, k));
                assert_int_equal(kn_share_consumer_acknowledge(b, r, k, KN_SHARE_ACCEPT), KN_OK);
                b_took++;
            }
            kn_records_free(r);
        }
        if (b_took && !proved)
            proved = kn_test_now_ms();
        /* held on for 4 lock durations after b showed it was fetching */
        if (proved && kn_test_now_ms() > proved + 4 * LOCK_MS)
            break;
    }
    assert_true(proved > 0);
    int64_t held_ms = kn_test_now_ms() - start;
    print_message("held %zu records %lld ms (lock %d ms) with %lld renewals; the other member took %d others\n",
                  n, (long long)held_ms, LOCK_MS, (long long)renewals, b_took);
    assert_true(held_ms > 4 * LOCK_MS);
    /* still a's: the accept succeeds */
    for (size_t k = 0; k < n; k++)
        assert_int_equal(kn_share_consumer_acknowledge(a, held, k, KN_SHARE_ACCEPT), KN_OK);
    /* accepted (not sent yet): no renewal any more */
    assert_int_equal(kn_share_consumer_acknowledge(a, held, 0, KN_SHARE_RENEW), KN_ERR__STATE);
    kn_topic_partition_list *res = NULL;
    int rc = kn_share_consumer_commit_sync(a, 30000, &res, es, sizeof es);
    if (rc != KN_OK)
        fail_msg("commit after renewals: %s %s", kn_err_name(rc), es);
    kn_topic_partition_list_destroy(res);
    if (cbs.errs)
        fail_msg("%d acknowledgement answer(s) with an error, the last %s", cbs.errs, kn_err_name(cbs.last_err));
    kn_records_free(held);

    /* Without renewal: the next batch a takes goes to b once its lock
     * expires, and a's late accept fails. a may first return records it
     * fetched ahead while holding (their locks long gone, b has them):
     * passed over until a batch holds one produced now (value 200+). */
    send_values(prod, topic, 1, 200, 10);
    assert_int_equal(kn_producer_flush(prod, 30000), KN_OK);
    for (;;) {
        held = poll_some(a);
        bool fresh = false;
        for (size_t k = 0; k < kn_records_count(held); k++)
            fresh |= value_of(held, k) >= 200;
        if (fresh)
            break;
        for (size_t k = 0; k < kn_records_count(held); k++)
            assert_int_equal(kn_share_consumer_acknowledge(a, held, k, KN_SHARE_ACCEPT), KN_OK);
        kn_topic_partition_list *stale = NULL;
        (void)kn_share_consumer_commit_sync(a, 30000, &stale, es, sizeof es); /* INVALID_RECORD_STATE */
        kn_topic_partition_list_destroy(stale);
        kn_records_free(held);
    }
    n = kn_records_count(held);
    bool taken = false;
    int64_t until = kn_test_now_ms() + WAIT_MS;
    while (!taken && kn_test_now_ms() < until)
        taken = took_any_of(b, held, &dc);
    assert_true(taken);
    assert_true(dc >= 2);
    /* a's late accept: test_bad_input checks its INVALID_RECORD_STATE
     * (here a may have fetched some of them again meanwhile) */
    for (size_t k = 0; k < n; k++)
        assert_int_equal(kn_share_consumer_acknowledge(a, held, k, KN_SHARE_ACCEPT), KN_OK);
    (void)kn_share_consumer_commit_sync(a, 30000, &res, es, sizeof es);
    kn_topic_partition_list_destroy(res);
    kn_records_free(held);

    /* implicit mode: no renewal */
    kn_share_consumer *im = share_new(group, "implicit", topic);
    assert_int_equal(kn_share_consumer_acknowledge_offset(im, topic, 0, 0, KN_SHARE_RENEW), KN_ERR__STATE);
    kn_share_consumer_close(im, -1);
    kn_share_consumer_destroy(im);
    kn_share_consumer_close(b, -1);
    kn_share_consumer_destroy(b);
    kn_share_consumer_close(a, -1);
    kn_share_consumer_destroy(a);
    kn_producer_close(prod, 10000);
    kn_producer_destroy(prod);
}

/* A share consumer destroyed from one of its own callbacks: the
 * header promises the call is ignored and logged (through the client's
 * log handler), in commit_sync and in close alike; the consumer goes on
 * working, and the real destroy after close frees it (ASan: no use
 * after free, no leak). Re-entering poll or close from the callback is
 * refused with KN_ERR__STATE. */
typedef struct reenter {
    kn_share_consumer *sc;
    int calls, offsets;
    int poll_rc, close_rc;
    atomic_int destroy_logged;
} reenter;

static reenter *reenter_log_target;

static void reenter_log(int level, const char *message, void *opaque) {
    (void)opaque;
    if (level == KN_LOG_ERROR && strstr(message, "destroy called from a callback of the same share consumer"))
        atomic_fetch_add(&reenter_log_target->destroy_logged, 1);
}

static void reenter_ack_cb(kn_share_consumer *sc, const char *topic, int32_t partition, const int64_t *offsets,
                           size_t count, int err, void *opaque) {
    (void)topic;
    (void)partition;
    (void)offsets;
    (void)err;
    reenter *x = opaque;
    assert_ptr_equal(sc, x->sc);
    x->calls++;
    x->offsets += (int)count;
    kn_records *r = NULL;
    char es[256];
    x->poll_rc = kn_share_consumer_poll(sc, 0, &r, es, sizeof es);
    kn_records_free(r);
    x->close_rc = kn_share_consumer_close(sc, 0);
    kn_share_consumer_destroy(sc); /* ignored: logged, nothing freed */
}

static void test_destroy_from_callback(void **state) {
    (void)state;
    const int n = 20;
    char topic[128], group[160];
    snprintf(topic, sizeof topic, "%s", kn_test_topic("share-reenter"));
    snprintf(group, sizeof group, "%s-g", topic);
    kn_test_create_topic(topic, 2);
    group_config(group, "share.auto.offset.reset", "earliest", NULL);
    produce(topic, 0, n);
    static reenter x;
    memset(&x, 0, sizeof x);
    reenter_log_target = &x;
    kn_conf *conf = kn_conf_new(KN_CLIENT_CONSUMER);
    kn_test_conf_set(conf, "bootstrap.servers", kn_test_bootstrap());
    kn_test_conf_set(conf, "group.id", group);
    kn_test_conf_set(conf, "share.acknowledgement.mode", "implicit");
    kn_test_conf_set(conf, "max.poll.records", "5");
    assert_int_equal(kn_conf_set_log_cb(conf, KN_LOG_ERROR, reenter_log, NULL), KN_OK);
    char es[512];
    kn_share_consumer *sc = kn_share_consumer_new(conf, es, sizeof es);
    kn_conf_destroy(conf);
    if (!sc)
        fail_msg("kn_share_consumer_new: %s", es);
    x.sc = sc;
    kn_share_consumer_set_ack_commit_cb(sc, reenter_ack_cb, &x);
    const char *topics[] = {topic};
    assert_int_equal(kn_share_consumer_subscribe(sc, topics, 1), KN_OK);

    /* In commit_sync: the callback's destroy is ignored. */
    kn_records *r = poll_some(sc);
    int got = (int)kn_records_count(r);
    kn_records_free(r);
    assert_int_equal(kn_share_consumer_commit_sync(sc, 30000, NULL, es, sizeof es), KN_OK);
    assert_true(x.calls >= 1);
    assert_int_equal(x.offsets, got);
    assert_int_equal(x.poll_rc, KN_ERR__STATE);
    assert_int_equal(x.close_rc, KN_ERR__STATE);
    assert_int_equal(atomic_load(&x.destroy_logged), x.calls);
    /* still a working member: it takes more records */
    r = poll_some(sc);
    got += (int)kn_records_count(r);
    kn_records_free(r);

    /* In close: the last poll's records are accepted with the session's
     * end, and their callback's destroy is ignored too. */
    int calls = x.calls;
    assert_int_equal(kn_share_consumer_close(sc, -1), KN_OK);
    assert_true(x.calls > calls);
    assert_int_equal(x.offsets, got);
    assert_int_equal(x.close_rc, KN_ERR__STATE);
    assert_int_equal(atomic_load(&x.destroy_logged), x.calls);
    /* the handle is still valid: reads work, actions are refused */
    assert_int_equal(kn_share_consumer_poll(sc, 0, &r, es, sizeof es), KN_ERR__CLOSED);
    kn_share_consumer_destroy(sc);
}

/* wakeup interrupts a waiting poll */
static void test_wakeup(void **state) {
    (void)state;
    char topic[128], group[160];
    snprintf(topic, sizeof topic, "%s", kn_test_topic("share-wakeup"));
    snprintf(group, sizeof group, "%s-g", topic);
    kn_test_create_topic(topic, 2);
    kn_share_consumer *sc = share_new(group, "implicit", topic);
    kn_share_consumer_wakeup(sc);
    kn_records *r = NULL;
    char es[256];
    int64_t t0 = kn_test_now_ms();
    assert_int_equal(kn_share_consumer_poll(sc, 30000, &r, es, sizeof es), KN_ERR__WAKEUP);
    assert_true(kn_test_now_ms() - t0 < 20000);
    assert_int_equal(kn_share_consumer_close(sc, -1), KN_OK);
    assert_int_equal(kn_share_consumer_poll(sc, 0, &r, es, sizeof es), KN_ERR__CLOSED);
    kn_share_consumer_destroy(sc);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_wakeup),        cmocka_unit_test(test_bad_input),
        cmocka_unit_test(test_explicit_acks), cmocka_unit_test(test_close_and_kill_redeliver),
        cmocka_unit_test(test_work_split),    cmocka_unit_test(test_destroy_from_callback),
        cmocka_unit_test(test_renew_lock),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
