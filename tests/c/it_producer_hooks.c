/*
 * it_producer_hooks.c: the producer's C hooks against a real broker
 * (KAFKA_BOOTSTRAP): a custom partitioner and interceptors
 * (kn_producer_new_with_hooks).
 *
 *  - the custom partitioner places records sent with KN_PARTITION_ANY
 *    (checked from the delivery reports and by reading the partitions
 *    back), an explicit partition is kept without asking it, and an
 *    out-of-range answer fails the send with KN_ERR__INVALID_ARG naming
 *    the value, which the interceptors also observe;
 *  - interceptors: on_send rewrites records in chain order (what is
 *    read back is the rewritten record), a failing on_send is isolated
 *    (its change discarded, the record still sent), on_acknowledgement
 *    sees every outcome, before the delivery callback.
 */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kafka_native.h"
#include "kn_test.h"

#define N_PARTS 4
#define N_RECS  1000

typedef struct part_ctx {
    int calls;
    int32_t last_count;
    bool bad; /* answer out of range */
} part_ctx;

/* Partition = the value's first digit modulo the count. */
static int32_t my_partitioner(const char *topic, const void *key, size_t key_len, const void *value,
                              size_t value_len, int32_t partition_count, void *opaque) {
    part_ctx *c = opaque;
    (void)topic;
    (void)key;
    (void)key_len;
    c->calls++;
    c->last_count = partition_count;
    if (c->bad)
        return partition_count + 7;
    if (!value || value_len == 0)
        return 0;
    return (((const char *)value)[0] - '0') % partition_count;
}

typedef struct rep_ctx {
    int reports, errors, wrong_partition;
    int acks, ack_errors;
    int last_ack_err;
    void *last_ack_opaque;
    int ack_not_before_dr; /* dr called without its ack right before */
    int32_t want_part[N_RECS];
} rep_ctx;

static void on_dr(kn_producer *p, const kn_delivery *d, void *opaque) {
    rep_ctx *c = opaque;
    (void)p;
    c->reports++;
    if (kn_delivery_error(d)) {
        c->errors++;
        return;
    }
    if (c->last_ack_opaque != kn_delivery_opaque(d))
        c->ack_not_before_dr++;
    intptr_t idx = (intptr_t)kn_delivery_opaque(d) - 1;
    if (idx >= 0 && idx < N_RECS && c->want_part[idx] >= 0 && c->want_part[idx] != kn_delivery_partition(d))
        c->wrong_partition++;
}

static void on_ack(kn_producer *p, const kn_delivery *d, void *opaque) {
    rep_ctx *c = opaque;
    (void)p;
    c->acks++;
    c->last_ack_opaque = kn_delivery_opaque(d);
    if (kn_delivery_error(d)) {
        c->ack_errors++;
        c->last_ack_err = kn_delivery_error(d);
    }
}

static kn_consumer *read_all(const char *topic, int partitions, int want,
                             void (*each)(int32_t part, const char *value, size_t len, void *opaque),
                             void *opaque) {
    kn_conf *conf = kn_conf_new(KN_CLIENT_CONSUMER);
    kn_test_conf_set(conf, "bootstrap.servers", kn_test_bootstrap());
    kn_test_conf_set(conf, "auto.offset.reset", "earliest");
    char err[512];
    kn_consumer *c = kn_consumer_new(conf, err, sizeof err);
    kn_conf_destroy(conf);
    if (!c)
        fail_msg("kn_consumer_new: %s", err);
    kn_topic_partition_list *l = kn_topic_partition_list_new();
    for (int p = 0; p < partitions; p++)
        assert_true(kn_topic_partition_list_add(l, topic, p) >= 0);
    assert_int_equal(kn_consumer_assign(c, l), KN_OK);
    kn_topic_partition_list_destroy(l);
    int got = 0;
    int64_t deadline = kn_test_now_ms() + 60000;
    while (got < want && kn_test_now_ms() < deadline) {
        kn_records *r = NULL;
        int rc = kn_consumer_poll(c, 500, &r, err, sizeof err);
        if (rc)
            fail_msg("poll: %s: %s", kn_err_name(rc), err);
        for (size_t i = 0; i < kn_records_count(r); i++) {
            size_t len;
            const char *v = kn_records_value(r, i, &len);
            each(kn_records_partition(r, i), v, len, opaque);
        }
        got += (int)kn_records_count(r);
        kn_records_free(r);
    }
    assert_int_equal(got, want);
    return c;
}

static void close_consumer(kn_consumer *c) {
    assert_int_equal(kn_consumer_close(c, -1), KN_OK);
    kn_consumer_destroy(c);
}

typedef struct seen_ctx {
    int bad;
    int count;
} seen_ctx;

/* Values "D..." must be on partition D % N_PARTS. */
static void check_placed(int32_t part, const char *v, size_t len, void *opaque) {
    seen_ctx *s = opaque;
    s->count++;
    if (!v || len == 0 || (v[0] - '0') % N_PARTS != part)
        s->bad++;
}

static void test_custom_partitioner(void **st) {
    (void)st;
    char topic[128];
    snprintf(topic, sizeof topic, "%s", kn_test_topic("hookpart"));
    kn_test_create_topic(topic, N_PARTS);
    kn_conf *conf = kn_conf_new(KN_CLIENT_PRODUCER);
    kn_test_conf_set(conf, "bootstrap.servers", kn_test_bootstrap());
    part_ctx pc = {0, 0, false};
    static rep_ctx rc;
    memset(&rc, 0, sizeof rc);
    kn_producer_interceptor ic = {sizeof ic, NULL, on_ack, &rc};
    const kn_producer_interceptor *icp = &ic;
    kn_producer_hooks hooks = {sizeof hooks, my_partitioner, &pc, &icp, 1};
    char err[512];
    kn_producer *p = kn_producer_new_with_hooks(conf, on_dr, &rc, &hooks, err, sizeof err);
    kn_conf_destroy(conf);
    if (!p)
        fail_msg("kn_producer_new_with_hooks: %s", err);
    for (int i = 0; i < N_RECS; i++) {
        char v[32];
        snprintf(v, sizeof v, "%d-%d", i % 10, i);
        kn_record_out r = KN_RECORD_OUT_INIT;
        r.topic = topic;
        r.key = "same-key"; /* would go to one partition without the hook */
        r.key_len = 8;
        r.value = v;
        r.value_len = strlen(v);
        r.opaque = (void *)(intptr_t)(i + 1);
        rc.want_part[i] = (i % 10) % N_PARTS;
        assert_int_equal(kn_producer_send(p, &r, err, sizeof err), 0);
    }
    assert_int_equal(pc.calls, N_RECS);
    assert_int_equal(pc.last_count, N_PARTS);
    /* An explicit partition is kept: the partitioner is not asked. */
    kn_record_out r = KN_RECORD_OUT_INIT;
    r.topic = topic;
    r.partition = 3;
    r.value = "3-explicit";
    r.value_len = 10;
    assert_int_equal(kn_producer_send(p, &r, err, sizeof err), 0);
    assert_int_equal(pc.calls, N_RECS);
    /* An answer out of range fails the send, naming the value. */
    pc.bad = true;
    r.partition = KN_PARTITION_ANY;
    r.value = "0-bad";
    r.value_len = 5;
    r.opaque = (void *)(intptr_t)77777;
    assert_int_equal(kn_producer_send(p, &r, err, sizeof err), KN_ERR__INVALID_ARG);
    assert_non_null(strstr(err, "partition 11"));
    assert_int_equal(rc.ack_errors, 1); /* Java's onSendError */
    assert_int_equal(rc.last_ack_err, KN_ERR__INVALID_ARG);
    assert_ptr_equal(rc.last_ack_opaque, (void *)(intptr_t)77777);
    assert_int_equal(kn_producer_flush(p, 30000), 0);
    assert_int_equal(kn_producer_close(p, 10000), 0);
    kn_producer_destroy(p);
    assert_int_equal(rc.reports, N_RECS + 1);
    assert_int_equal(rc.errors, 0);
    assert_int_equal(rc.wrong_partition, 0);
    assert_int_equal(rc.acks, N_RECS + 2);
    assert_int_equal(rc.ack_not_before_dr, 0);
    seen_ctx seen = {0, 0};
    close_consumer(read_all(topic, N_PARTS, N_RECS + 1, check_placed, &seen));
    assert_int_equal(seen.bad, 0);
}

/* Interceptor 1 turns value "x..." into "I1:x..." (its own buffer);
 * interceptor 2 fails on every odd record after pointing the value at
 * "BROKEN" (the change must be discarded) and otherwise appends "+I2"
 * to whatever interceptor 1 produced. */
typedef struct ic_state {
    char buf[64];
    int calls, fails;
} ic_state;

static int ic1_send(kn_producer *p, const kn_record_out *in, kn_record_out *out, void *opaque) {
    ic_state *s = opaque;
    (void)p;
    s->calls++;
    snprintf(s->buf, sizeof s->buf, "I1:%.*s", (int)in->value_len, (const char *)in->value);
    out->value = s->buf;
    out->value_len = strlen(s->buf);
    return 0;
}

static int ic2_send(kn_producer *p, const kn_record_out *in, kn_record_out *out, void *opaque) {
    ic_state *s = opaque;
    (void)p;
    s->calls++;
    intptr_t idx = (intptr_t)in->opaque - 1;
    if (idx % 2) {
        out->value = "BROKEN";
        out->value_len = 6;
        out->partition = 99;
        s->fails++;
        return -1;
    }
    snprintf(s->buf, sizeof s->buf, "%.*s+I2", (int)in->value_len, (const char *)in->value);
    out->value = s->buf;
    out->value_len = strlen(s->buf);
    return 0;
}

typedef struct ic_seen {
    int count, bad;
} ic_seen;

static void check_intercepted(int32_t part, const char *v, size_t len, void *opaque) {
    ic_seen *s = opaque;
    (void)part;
    s->count++;
    char buf[64];
    if (!v || len >= sizeof buf) {
        s->bad++;
        return;
    }
    memcpy(buf, v, len);
    buf[len] = '\0';
    int idx = -1;
    char tail[16] = "";
    if (sscanf(buf, "I1:v%d%15s", &idx, tail) < 1 || idx < 0 || idx >= N_RECS) {
        s->bad++;
        return;
    }
    const char *want = idx % 2 ? "" : "+I2";
    if (strcmp(tail, want) != 0)
        s->bad++;
}

static void test_interceptors(void **st) {
    (void)st;
    char topic[128];
    snprintf(topic, sizeof topic, "%s", kn_test_topic("hookic"));
    kn_test_create_topic(topic, 2);
    kn_conf *conf = kn_conf_new(KN_CLIENT_PRODUCER);
    kn_test_conf_set(conf, "bootstrap.servers", kn_test_bootstrap());
    static rep_ctx rc;
    memset(&rc, 0, sizeof rc);
    for (int i = 0; i < N_RECS; i++)
        rc.want_part[i] = -1;
    ic_state s1, s2;
    memset(&s1, 0, sizeof s1);
    memset(&s2, 0, sizeof s2);
    kn_producer_interceptor ics[3] = {
        {sizeof(kn_producer_interceptor), ic1_send, NULL, &s1},
        {sizeof(kn_producer_interceptor), ic2_send, NULL, &s2},
        {sizeof(kn_producer_interceptor), NULL, on_ack, &rc},
    };
    const kn_producer_interceptor *icp[3] = {&ics[0], &ics[1], &ics[2]};
    kn_producer_hooks hooks = {sizeof hooks, NULL, NULL, icp, 3};
    char err[512];
    /* No delivery callback: the interceptors still see every outcome. */
    kn_producer *p = kn_producer_new_with_hooks(conf, NULL, NULL, &hooks, err, sizeof err);
    kn_conf_destroy(conf);
    if (!p)
        fail_msg("kn_producer_new_with_hooks: %s", err);
    for (int i = 0; i < N_RECS; i++) {
        char v[32];
        snprintf(v, sizeof v, "v%d", i);
        kn_record_out r = KN_RECORD_OUT_INIT;
        r.topic = topic;
        r.value = v;
        r.value_len = strlen(v);
        r.opaque = (void *)(intptr_t)(i + 1);
        assert_int_equal(kn_producer_send(p, &r, err, sizeof err), 0);
    }
    assert_int_equal(kn_producer_flush(p, 30000), 0);
    assert_int_equal(kn_producer_close(p, 10000), 0);
    kn_producer_destroy(p);
    assert_int_equal(s1.calls, N_RECS);
    assert_int_equal(s2.calls, N_RECS);
    assert_int_equal(s2.fails, N_RECS / 2);
    assert_int_equal(rc.acks, N_RECS);
    assert_int_equal(rc.ack_errors, 0);
    ic_seen seen = {0, 0};
    close_consumer(read_all(topic, 2, N_RECS, check_intercepted, &seen));
    assert_int_equal(seen.bad, 0);
    assert_int_equal(seen.count, N_RECS);
}

/* Bad hook arguments are refused at creation with a clear message. */
static void test_hooks_bad_args(void **st) {
    (void)st;
    kn_conf *conf = kn_conf_new(KN_CLIENT_PRODUCER);
    kn_test_conf_set(conf, "bootstrap.servers", kn_test_bootstrap());
    kn_producer_hooks hooks = {sizeof hooks, NULL, NULL, NULL, 2};
    char err[512] = "";
    kn_producer *p = kn_producer_new_with_hooks(conf, NULL, NULL, &hooks, err, sizeof err);
    kn_conf_destroy(conf);
    assert_null(p);
    assert_non_null(strstr(err, "interceptor_count"));
}

int main(void) {
    kn_test_bootstrap();
    const char *filter = getenv("KN_TEST_FILTER");
    if (filter && *filter)
        cmocka_set_test_filter(filter);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_custom_partitioner),
        cmocka_unit_test(test_interceptors),
        cmocka_unit_test(test_hooks_bad_args),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
