/*
 * it_share_fetch.c: the share consumer's fetch size against the real
 * broker (share_fetch.c, kns_fetch_adapt). A member that empties each
 * answer at once gets more than max.poll.records per ShareFetch (fewer
 * round trips), while no poll returns more than max.poll.records and
 * every record comes once; a member that works slowly keeps asking for
 * about a poll, so the records waiting in its buffer never outlive
 * their acquisition lock (1 s here): each is delivered once, and every
 * acknowledgement is accepted by the broker.
 *
 * Records are produced one per batch: in the default batch_optimized
 * acquire mode the broker rounds an answer up to whole batches, which
 * would hide the size the member asked for.
 */
#include "kn_test.h"

#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "kafka_native_share.h"

#define WAIT_MS 60000
#define FM "consumer-share-fetch-manager-metrics"

/* n records, values 0..n-1, one batch each (a flush after every send). */
static void produce_single_batches(const char *topic, int n) {
    kn_conf *conf = kn_conf_new(KN_CLIENT_PRODUCER);
    kn_test_conf_set(conf, "bootstrap.servers", kn_test_bootstrap());
    kn_test_conf_set(conf, "linger.ms", "0");
    char es[512];
    kn_producer *p = kn_producer_new(conf, NULL, NULL, es, sizeof es);
    kn_conf_destroy(conf);
    if (!p)
        fail_msg("kn_producer_new: %s", es);
    for (int i = 0; i < n; i++) {
        char v[32];
        int len = snprintf(v, sizeof v, "%d", i);
        kn_record_out r = KN_RECORD_OUT_INIT;
        r.topic = topic;
        r.partition = 0;
        r.value = v;
        r.value_len = (size_t)len;
        assert_int_equal(kn_producer_send(p, &r, es, sizeof es), KN_OK);
        assert_int_equal(kn_producer_flush(p, 30000), KN_OK);
    }
    kn_producer_close(p, 10000);
    kn_producer_destroy(p);
}

/* Sets one share group config and waits until the broker applies it. */
static void group_config(const char *group, const char *key, const char *value) {
    kn_conf *conf = kn_conf_new(KN_CLIENT_ADMIN);
    kn_test_conf_set(conf, "bootstrap.servers", kn_test_bootstrap());
    char es[512];
    kn_admin *a = kn_admin_new(conf, es, sizeof es);
    kn_conf_destroy(conf);
    assert_non_null(a);
    kn_config_op op = {KN_CONFIG_RESOURCE_GROUP, group, KN_CONFIG_OP_SET, key, value};
    kn_config_results *res = NULL;
    int rc = kn_admin_incremental_alter_configs(a, &op, 1, 0, 30000, &res, es, sizeof es);
    if (rc != KN_OK || kn_config_results_error(res, 0) != 0)
        fail_msg("group config %s for %s: %s", key, group, es);
    kn_config_results_destroy(res);
    kn_config_resource rsrc = {KN_CONFIG_RESOURCE_GROUP, group};
    int64_t until = kn_test_now_ms() + 30000;
    bool applied = false;
    while (!applied && kn_test_now_ms() < until) {
        kn_config_descriptions *d = NULL;
        if (kn_admin_describe_configs(a, &rsrc, 1, 0, 10000, &d, es, sizeof es) == KN_OK) {
            const kn_config_entry *e = kn_config_descriptions_find(d, 0, key);
            applied = e && kn_config_entry_value(e) && !strcmp(kn_config_entry_value(e), value);
        }
        kn_config_descriptions_destroy(d);
        if (!applied)
            usleep(100 * 1000);
    }
    assert_true(applied);
    kn_admin_destroy(a);
}

static kn_share_consumer *member(const char *group, const char *topic, const char *max_poll) {
    kn_conf *conf = kn_conf_new(KN_CLIENT_CONSUMER);
    kn_test_conf_set(conf, "bootstrap.servers", kn_test_bootstrap());
    kn_test_conf_set(conf, "group.id", group);
    kn_test_conf_set(conf, "max.poll.records", max_poll);
    char es[512];
    kn_share_consumer *sc = kn_share_consumer_new(conf, es, sizeof es);
    kn_conf_destroy(conf);
    if (!sc)
        fail_msg("kn_share_consumer_new: %s", es);
    assert_int_equal(kn_share_consumer_subscribe(sc, &topic, 1), KN_OK);
    return sc;
}

typedef struct metric_find {
    const char *name;
    double value;
    int found;
} metric_find;

static void find_metric(void *ctx, const kn_metric_view *m) {
    metric_find *f = ctx;
    if (!strcmp(m->group, FM) && !strcmp(m->name, f->name)) {
        f->value = m->value;
        f->found++;
    }
}

static double fetch_metric(kn_share_consumer *sc, const char *name) {
    metric_find f = {name, 0, 0};
    assert_int_equal(kn_share_consumer_metrics(sc, find_metric, &f), KN_OK);
    assert_int_equal(f.found, 1);
    return f.value;
}

static void count_errors(kn_share_consumer *sc, const char *topic, int32_t partition, const int64_t *offsets,
                         size_t count, int err, void *opaque) {
    (void)sc;
    (void)topic;
    (void)partition;
    (void)offsets;
    if (err)
        *(int *)opaque += (int)count;
}

/* Consumes n records with max.poll.records max_poll, sleeping pause_ms
 * after each poll that returned records; checks each poll's size, that
 * every record comes once with delivery count 1 and that no
 * acknowledgement fails. Returns the ShareFetch requests it took. */
static int consume_all(kn_share_consumer *sc, int n, int max_poll, int pause_ms) {
    int ack_errors = 0;
    kn_share_consumer_set_ack_commit_cb(sc, count_errors, &ack_errors);
    int *seen = calloc((size_t)n, sizeof(int));
    assert_non_null(seen);
    int total = 0;
    int64_t until = kn_test_now_ms() + WAIT_MS;
    while (total < n && kn_test_now_ms() < until) {
        kn_records *r = NULL;
        char es[512];
        if (kn_share_consumer_poll(sc, 100, &r, es, sizeof es))
            fail_msg("poll: %s", es);
        size_t k = kn_records_count(r);
        assert_true(k <= (size_t)max_poll);
        for (size_t i = 0; i < k; i++) {
            size_t len;
            const char *v = kn_records_value(r, i, &len);
            char buf[32];
            assert_true(len < sizeof buf);
            memcpy(buf, v, len);
            buf[len] = 0;
            int x = atoi(buf);
            assert_true(x >= 0 && x < n);
            if (kn_records_delivery_count(r, i) != 1)
                fail_msg("record %d delivered with count %d: its lock expired while it waited",
                         x, kn_records_delivery_count(r, i));
            seen[x]++;
            total++;
        }
        kn_records_free(r);
        if (k && pause_ms)
            usleep((useconds_t)pause_ms * 1000);
    }
    int fetches = (int)fetch_metric(sc, "fetch-total");
    char es[512];
    assert_int_equal(kn_share_consumer_commit_sync(sc, 30000, NULL, es, sizeof es), KN_OK);
    kn_share_consumer_set_ack_commit_cb(sc, NULL, NULL); /* ack_errors is about to go */
    assert_int_equal(total, n);
    for (int v = 0; v < n; v++)
        if (seen[v] != 1)
            fail_msg("record %d seen %d times", v, seen[v]);
    assert_int_equal(ack_errors, 0);
    free(seen);
    return fetches;
}

/* A member that polls in a tight loop: answers grow past a poll. */
static void test_fast_member_fetches_ahead(void **state) {
    (void)state;
    const int n = 600, max_poll = 10;
    char topic[128], group[160];
    snprintf(topic, sizeof topic, "%s", kn_test_topic("share-fetch-fast"));
    snprintf(group, sizeof group, "%s-g", topic);
    kn_test_create_topic(topic, 1);
    group_config(group, "share.auto.offset.reset", "earliest");
    produce_single_batches(topic, n);
    kn_share_consumer *sc = member(group, topic, "10");
    int fetches = consume_all(sc, n, max_poll, 0);
    print_message("fast member: %d records in %d ShareFetch requests (max.poll.records %d)\n", n, fetches,
                  max_poll);
    /* One poll per fetch would take n / max_poll = 60. */
    assert_true(fetches > 0 && fetches <= n / max_poll / 2);
    assert_int_equal(kn_share_consumer_close(sc, -1), KN_OK);
    kn_share_consumer_destroy(sc);
}

/* A member that works 200 ms per poll under a 1 s lock: asking for 16
 * polls would leave records in its buffer for over 3 s. */
static void test_slow_member_keeps_its_locks(void **state) {
    (void)state;
    const int n = 80, max_poll = 10;
    char topic[128], group[160];
    snprintf(topic, sizeof topic, "%s", kn_test_topic("share-fetch-slow"));
    snprintf(group, sizeof group, "%s-g", topic);
    kn_test_create_topic(topic, 1);
    group_config(group, "share.auto.offset.reset", "earliest");
    group_config(group, "share.record.lock.duration.ms", "1000");
    produce_single_batches(topic, n);
    kn_share_consumer *sc = member(group, topic, "10");
    int fetches = consume_all(sc, n, max_poll, 200);
    print_message("slow member: %d records in %d ShareFetch requests\n", n, fetches);
    assert_true(fetches >= n / (2 * max_poll));
    assert_int_equal(kn_share_consumer_close(sc, -1), KN_OK);
    kn_share_consumer_destroy(sc);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_fast_member_fetches_ahead),
        cmocka_unit_test(test_slow_member_keeps_its_locks),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
