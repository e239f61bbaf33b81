/*
 * it_admin_groups.c: the consumer-group admin calls against a real
 * broker (KAFKA_BOOTSTRAP), each routed to the group's coordinator:
 * offsets committed by the admin (a negative one failing alone), listed
 * for several groups at once, deleted per partition; list_groups with
 * type and state filters; describe of an empty simple group, of a live
 * KIP-848 group and of a live classic group (assignments decoded);
 * per-item errors (unknown group, NON_EMPTY_GROUP, offsets of a live
 * group); removing a static member; and a reset done by the admin (to
 * the start, to an offset, shifted by N) honoured by our consumer.
 */
#include "kn_test.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kafka_native.h"
#include "kafka_native_admin.h"

#define TIMEOUT_MS 30000
#define RECORDS    20

static char topic[200];

static kn_admin *new_admin(void) {
    char errstr[512] = "";
    kn_conf *conf = kn_conf_new(KN_CLIENT_ADMIN);
    kn_test_conf_set(conf, "bootstrap.servers", kn_test_bootstrap());
    kn_admin *admin = kn_admin_new(conf, errstr, sizeof(errstr));
    kn_conf_destroy(conf);
    if (!admin)
        fail_msg("kn_admin_new: %s", errstr);
    return admin;
}

/* A 3-partition topic with RECORDS records in partition 0. */
static int group_setup(void **state) {
    snprintf(topic, sizeof(topic), "%s", kn_test_topic("admin-groups"));
    kn_test_create_topic(topic, 3);
    char es[512];
    kn_conf *conf = kn_conf_new(KN_CLIENT_PRODUCER);
    kn_test_conf_set(conf, "bootstrap.servers", kn_test_bootstrap());
    kn_producer *p = kn_producer_new(conf, NULL, NULL, es, sizeof es);
    kn_conf_destroy(conf);
    if (!p)
        fail_msg("kn_producer_new: %s", es);
    for (int i = 0; i < RECORDS; i++) {
        char v[32];
        snprintf(v, sizeof v, "v%d", i);
        kn_record_out rec = KN_RECORD_OUT_INIT;
        rec.topic = topic;
        rec.partition = 0;
        rec.value = v;
        rec.value_len = strlen(v);
        if (kn_producer_send(p, &rec, es, sizeof es) != KN_OK)
            fail_msg("send: %s", es);
    }
    assert_int_equal(kn_producer_flush(p, TIMEOUT_MS), KN_OK);
    assert_int_equal(kn_producer_close(p, 10000), KN_OK);
    kn_producer_destroy(p);
    *state = new_admin();
    return 0;
}

static int group_teardown(void **state) {
    kn_admin_destroy(*state);
    return 0;
}

static char *group_name(const char *tag) {
    static char buf[4][200];
    static int k;
    char *out = buf[k++ % 4];
    snprintf(out, 200, "%s", kn_test_topic(tag));
    return out;
}

static kn_group_offsets *alter(kn_admin *admin, const char *group, const int64_t *offsets, int n) {
    kn_topic_partition_list *l = kn_topic_partition_list_new();
    for (int p = 0; p < n; p++) {
        int k = kn_topic_partition_list_add(l, topic, p);
        kn_topic_partition_list_set_offset(l, (size_t)k, offsets[p]);
    }
    char errstr[512] = "";
    kn_group_offsets *res = NULL;
    int err =
        kn_admin_alter_consumer_group_offsets(admin, group, l, TIMEOUT_MS, &res, errstr, sizeof(errstr));
    kn_topic_partition_list_destroy(l);
    if (err)
        fail_msg("alter_consumer_group_offsets: %s: %s", kn_err_name(err), errstr);
    assert_int_equal(kn_group_offsets_count(res), 1);
    return res;
}

/* The committed offset of (topic, p) in group, -1 if none, via the admin. */
static int64_t committed(kn_admin *admin, const char *group, int32_t p) {
    kn_topic_partition_list *l = kn_topic_partition_list_new();
    kn_topic_partition_list_add(l, topic, p);
    kn_group_offsets_spec spec = {group, l};
    kn_group_offsets *o = NULL;
    char errstr[512] = "";
    if (kn_admin_list_consumer_group_offsets(admin, &spec, 1, 0, TIMEOUT_MS, &o, errstr, sizeof(errstr)))
        fail_msg("list_consumer_group_offsets: %s", errstr);
    kn_topic_partition_list_destroy(l);
    assert_int_equal(kn_group_offsets_error(o, 0), KN_OK);
    const kn_topic_partition_list *got = kn_group_offsets_partitions(o, 0);
    assert_int_equal(kn_topic_partition_list_count(got), 1);
    int64_t off = kn_topic_partition_list_offset(got, 0);
    kn_group_offsets_destroy(o);
    return off;
}

static ptrdiff_t list_find(const kn_group_list *l, const char *group) {
    for (size_t i = 0; i < kn_group_list_count(l); i++)
        if (strcmp(kn_group_list_group_id(l, i), group) == 0)
            return (ptrdiff_t)i;
    return -1;
}

static kn_group_list *list_groups(kn_admin *admin, const char *type, const char *state) {
    char errstr[512] = "";
    kn_group_list *l = NULL;
    int err = kn_admin_list_groups(admin, type ? &type : NULL, type ? 1 : 0, state ? &state : NULL,
                                   state ? 1 : 0, TIMEOUT_MS, &l, errstr, sizeof(errstr));
    if (err)
        fail_msg("list_groups: %s: %s", kn_err_name(err), errstr);
    assert_int_equal(kn_group_list_error(l), KN_OK);
    return l;
}

static void test_offsets_of_simple_groups(void **state) {
    kn_admin *admin = *state;
    char *a = group_name("grp-a"), *b = group_name("grp-b"), *unknown = group_name("grp-none");
    char errstr[512] = "";

    /* A negative offset fails its own entry; the others are committed. */
    int64_t offs[3] = {5, 7, -3};
    kn_group_offsets *res = alter(admin, a, offs, 3);
    assert_int_equal(kn_group_offsets_error(res, 0), KN_OK);
    const kn_topic_partition_list *l = kn_group_offsets_partitions(res, 0);
    assert_int_equal(kn_topic_partition_list_count(l), 3);
    assert_int_equal(kn_topic_partition_list_err(l, 0), KN_OK);
    assert_int_equal(kn_topic_partition_list_err(l, 1), KN_OK);
    assert_int_equal(kn_topic_partition_list_err(l, 2), KN_ERR__INVALID_ARG);
    kn_group_offsets_destroy(res);
    int64_t offs_b[1] = {3};
    kn_group_offsets_destroy(alter(admin, b, offs_b, 1));

    /* Several groups in one call (OffsetFetch v8+): all, some, none. */
    kn_topic_partition_list *want = kn_topic_partition_list_new();
    kn_topic_partition_list_add(want, topic, 0);
    kn_topic_partition_list_add(want, topic, 2);
    kn_group_offsets_spec specs[3] = {{a, NULL}, {b, want}, {unknown, NULL}};
    kn_group_offsets *o = NULL;
    assert_int_equal(
        kn_admin_list_consumer_group_offsets(admin, specs, 3, 0, TIMEOUT_MS, &o, errstr, sizeof(errstr)),
        KN_OK);
    kn_topic_partition_list_destroy(want);
    assert_int_equal(kn_group_offsets_count(o), 3);
    assert_string_equal(kn_group_offsets_group(o, 0), a);
    l = kn_group_offsets_partitions(o, 0);
    assert_int_equal(kn_topic_partition_list_count(l), 2); /* partition 2 was never committed */
    for (size_t i = 0; i < 2; i++) {
        int32_t p = kn_topic_partition_list_partition(l, i);
        assert_int_equal(kn_topic_partition_list_offset(l, i), p == 0 ? 5 : 7);
        assert_string_equal(kn_topic_partition_list_topic(l, i), topic);
    }
    l = kn_group_offsets_partitions(o, 1);
    assert_int_equal(kn_topic_partition_list_count(l), 2);
    assert_int_equal(kn_topic_partition_list_offset(l, (size_t)kn_topic_partition_list_find(l, topic, 0)), 3);
    assert_int_equal(kn_topic_partition_list_offset(l, (size_t)kn_topic_partition_list_find(l, topic, 2)),
                     -1);
    assert_int_equal(kn_group_offsets_error(o, 2), KN_OK);
    assert_int_equal(kn_topic_partition_list_count(kn_group_offsets_partitions(o, 2)), 0);
    kn_group_offsets_destroy(o);

    /* list_groups: simple groups are classic, protocol "", Empty. */
    kn_group_list *gl = list_groups(admin, NULL, NULL);
    ptrdiff_t k = list_find(gl, a);
    assert_true(k >= 0);
    assert_string_equal(kn_group_list_protocol_type(gl, (size_t)k), "");
    assert_string_equal(kn_group_list_state(gl, (size_t)k), "Empty");
    assert_string_equal(kn_group_list_type(gl, (size_t)k), "classic");
    assert_true(list_find(gl, b) >= 0);
    for (size_t i = 1; i < kn_group_list_count(gl); i++)
        assert_true(strcmp(kn_group_list_group_id(gl, i - 1), kn_group_list_group_id(gl, i)) < 0);
    kn_group_list_destroy(gl);
    gl = list_groups(admin, "consumer", NULL); /* KIP-848 groups only */
    assert_true(list_find(gl, a) < 0);
    kn_group_list_destroy(gl);
    gl = list_groups(admin, NULL, "Empty");
    assert_true(list_find(gl, a) >= 0);
    kn_group_list_destroy(gl);
    gl = list_groups(admin, NULL, "Stable");
    assert_true(list_find(gl, a) < 0);
    kn_group_list_destroy(gl);

    /* describe: the simple group, and an unknown one failing alone. */
    const char *both[2] = {a, unknown};
    kn_group_descriptions *d = NULL;
    assert_int_equal(
        kn_admin_describe_consumer_groups(admin, both, 2, 0, TIMEOUT_MS, &d, errstr, sizeof(errstr)), KN_OK);
    assert_int_equal(kn_group_descriptions_error(d, 0), KN_OK);
    assert_string_equal(kn_group_descriptions_type(d, 0), "classic");
    assert_string_equal(kn_group_descriptions_state(d, 0), "Empty");
    assert_true(kn_group_descriptions_is_simple(d, 0));
    assert_int_equal(kn_group_descriptions_member_count(d, 0), 0);
    assert_true(kn_group_descriptions_coordinator(d, 0) >= 0);
    assert_int_equal(kn_group_descriptions_error(d, 1), KN_ERR_GROUP_ID_NOT_FOUND);
    assert_non_null(kn_group_descriptions_error_message(d, 1));
    kn_group_descriptions_destroy(d);

    /* Offsets deleted per partition. */
    kn_topic_partition_list *del = kn_topic_partition_list_new();
    kn_topic_partition_list_add(del, topic, 1);
    assert_int_equal(
        kn_admin_delete_consumer_group_offsets(admin, a, del, TIMEOUT_MS, &res, errstr, sizeof(errstr)),
        KN_OK);
    assert_int_equal(kn_group_offsets_error(res, 0), KN_OK);
    assert_int_equal(kn_topic_partition_list_err(kn_group_offsets_partitions(res, 0), 0), KN_OK);
    kn_group_offsets_destroy(res);
    assert_int_equal(committed(admin, a, 1), -1);
    assert_int_equal(committed(admin, a, 0), 5);
    /* ... of an unknown group: the group's error. */
    assert_int_equal(
        kn_admin_delete_consumer_group_offsets(admin, unknown, del, TIMEOUT_MS, &res, errstr, sizeof(errstr)),
        KN_OK);
    assert_int_equal(kn_group_offsets_error(res, 0), KN_ERR_GROUP_ID_NOT_FOUND);
    kn_group_offsets_destroy(res);
    kn_topic_partition_list_destroy(del);

    /* Groups deleted; the unknown one fails alone. */
    const char *three[3] = {a, unknown, b};
    kn_group_results *gr = NULL;
    assert_int_equal(
        kn_admin_delete_consumer_groups(admin, three, 3, TIMEOUT_MS, &gr, errstr, sizeof(errstr)), KN_OK);
    assert_int_equal(kn_group_results_count(gr), 3);
    assert_string_equal(kn_group_results_name(gr, 1), unknown);
    assert_int_equal(kn_group_results_error(gr, 0), KN_OK);
    assert_int_equal(kn_group_results_error(gr, 1), KN_ERR_GROUP_ID_NOT_FOUND);
    assert_int_equal(kn_group_results_error(gr, 2), KN_OK);
    kn_group_results_destroy(gr);
    gl = list_groups(admin, NULL, NULL);
    assert_true(list_find(gl, a) < 0);
    kn_group_list_destroy(gl);
}

static kn_consumer *member(const char *group, const char *protocol, const char *instance) {
    char es[512];
    kn_conf *conf = kn_conf_new(KN_CLIENT_CONSUMER);
    kn_test_conf_set(conf, "bootstrap.servers", kn_test_bootstrap());
    kn_test_conf_set(conf, "group.id", group);
    kn_test_conf_set(conf, "group.protocol", protocol);
    kn_test_conf_set(conf, "client.id", "admin-groups-member");
    kn_test_conf_set(conf, "auto.offset.reset", "earliest");
    if (instance)
        kn_test_conf_set(conf, "group.instance.id", instance);
    kn_consumer *c = kn_consumer_new(conf, es, sizeof es);
    kn_conf_destroy(conf);
    if (!c)
        fail_msg("kn_consumer_new: %s", es);
    const char *topics[1] = {topic};
    assert_int_equal(kn_consumer_subscribe(c, topics, 1, NULL, NULL), KN_OK);
    return c;
}

/* Polls every consumer until each owns all 3 partitions. */
static void wait_assigned(kn_consumer **cs, int n) {
    int64_t deadline = kn_test_now_ms() + 60000;
    char es[512];
    for (;;) {
        int ready = 0;
        for (int i = 0; i < n; i++) {
            kn_records *r = NULL;
            if (kn_consumer_poll(cs[i], 100, &r, es, sizeof es) != KN_OK)
                fail_msg("poll: %s", es);
            kn_records_free(r);
            kn_topic_partition_list *l = kn_consumer_assignment(cs[i]);
            ready += kn_topic_partition_list_count(l) == 3;
            kn_topic_partition_list_destroy(l);
        }
        if (ready == n)
            return;
        if (kn_test_now_ms() > deadline)
            fail_msg("the members did not get their partitions within 60 s");
    }
}

static void test_live_groups(void **state) {
    kn_admin *admin = *state;
    char *g848 = group_name("grp-848"), *gclassic = group_name("grp-classic");
    char errstr[512] = "";
    kn_consumer *cs[2] = {member(g848, "consumer", NULL), member(gclassic, "classic", "inst-1")};
    wait_assigned(cs, 2);

    const char *both[2] = {g848, gclassic};
    kn_group_descriptions *d = NULL;
    assert_int_equal(kn_admin_describe_consumer_groups(admin, both, 2, KN_ADMIN_GROUP_AUTHORIZED_OPERATIONS,
                                                       TIMEOUT_MS, &d, errstr, sizeof(errstr)),
                     KN_OK);
    for (size_t i = 0; i < 2; i++) {
        if (kn_group_descriptions_error(d, i))
            fail_msg("%s: %s", both[i], kn_group_descriptions_error_message(d, i));
        assert_string_equal(kn_group_descriptions_state(d, i), "Stable");
        assert_false(kn_group_descriptions_is_simple(d, i));
        assert_int_equal(kn_group_descriptions_member_count(d, i), 1);
        assert_string_equal(kn_group_descriptions_member_client_id(d, i, 0), "admin-groups-member");
        assert_non_null(kn_group_descriptions_member_host(d, i, 0));
        const kn_topic_partition_list *as = kn_group_descriptions_member_assignment(d, i, 0);
        assert_int_equal(kn_topic_partition_list_count(as), 3);
        for (int32_t p = 0; p < 3; p++)
            assert_true(kn_topic_partition_list_find(as, topic, p) >= 0);
    }
    /* KIP-848: epochs, the broker's assignor, a target assignment. */
    assert_string_equal(kn_group_descriptions_type(d, 0), "consumer");
    assert_true(kn_group_descriptions_group_epoch(d, 0) > 0);
    assert_true(kn_group_descriptions_member_epoch(d, 0, 0) > 0);
    assert_string_equal(kn_group_descriptions_assignor(d, 0), "uniform");
    assert_int_equal(kn_topic_partition_list_count(kn_group_descriptions_member_target_assignment(d, 0, 0)),
                     3);
    assert_null(kn_group_descriptions_member_instance_id(d, 0, 0));
    /* Classic: protocol data is the assignor; static member named. */
    assert_string_equal(kn_group_descriptions_type(d, 1), "classic");
    assert_int_equal(kn_group_descriptions_group_epoch(d, 1), -1);
    assert_true(strlen(kn_group_descriptions_assignor(d, 1)) > 0);
    assert_string_equal(kn_group_descriptions_member_instance_id(d, 1, 0), "inst-1");
    assert_null(kn_group_descriptions_member_target_assignment(d, 1, 0));
    kn_group_descriptions_destroy(d);

    /* list_groups sees both, with their types; the filter by type works. */
    kn_group_list *gl = list_groups(admin, "consumer", NULL);
    ptrdiff_t k = list_find(gl, g848);
    assert_true(k >= 0);
    assert_string_equal(kn_group_list_type(gl, (size_t)k), "consumer");
    assert_string_equal(kn_group_list_protocol_type(gl, (size_t)k), "consumer");
    assert_true(list_find(gl, gclassic) < 0);
    kn_group_list_destroy(gl);

    /* A live group cannot be deleted, nor its offsets reset or deleted. */
    kn_group_results *gr = NULL;
    assert_int_equal(kn_admin_delete_consumer_groups(admin, both, 2, TIMEOUT_MS, &gr, errstr, sizeof(errstr)),
                     KN_OK);
    assert_int_equal(kn_group_results_error(gr, 0), KN_ERR_NON_EMPTY_GROUP);
    assert_int_equal(kn_group_results_error(gr, 1), KN_ERR_NON_EMPTY_GROUP);
    kn_group_results_destroy(gr);
    int64_t offs[1] = {1};
    for (size_t i = 0; i < 2; i++) {
        kn_group_offsets *res = alter(admin, both[i], offs, 1);
        int perr = kn_topic_partition_list_err(kn_group_offsets_partitions(res, 0), 0);
        if (perr == KN_OK)
            fail_msg("%s: an admin commit to a live group succeeded", both[i]);
        kn_group_offsets_destroy(res);
        kn_topic_partition_list *del = kn_topic_partition_list_new();
        kn_topic_partition_list_add(del, topic, 0);
        assert_int_equal(kn_admin_delete_consumer_group_offsets(admin, both[i], del, TIMEOUT_MS, &res, errstr,
                                                                sizeof(errstr)),
                         KN_OK);
        kn_topic_partition_list_destroy(del);
        int gerr = kn_group_offsets_error(res, 0);
        int derr = gerr ? gerr : kn_topic_partition_list_err(kn_group_offsets_partitions(res, 0), 0);
        assert_int_equal(derr, KN_ERR_GROUP_SUBSCRIBED_TO_TOPIC);
        kn_group_offsets_destroy(res);
    }

    /* Removing the static member by instance id; an unknown one fails alone. */
    const char *ids[2] = {"inst-1", "inst-nobody"};
    assert_int_equal(kn_admin_remove_members_from_consumer_group(admin, gclassic, ids, 2, "test", TIMEOUT_MS,
                                                                 &gr, errstr, sizeof(errstr)),
                     KN_OK);
    assert_int_equal(kn_group_results_count(gr), 2);
    assert_string_equal(kn_group_results_name(gr, 0), "inst-1");
    assert_int_equal(kn_group_results_error(gr, 0), KN_OK);
    assert_int_equal(kn_group_results_error(gr, 1), KN_ERR_UNKNOWN_MEMBER_ID);
    kn_group_results_destroy(gr);
    d = NULL;
    assert_int_equal(
        kn_admin_describe_consumer_groups(admin, &both[1], 1, 0, TIMEOUT_MS, &d, errstr, sizeof(errstr)),
        KN_OK);
    assert_int_equal(kn_group_descriptions_member_count(d, 0), 0);
    kn_group_descriptions_destroy(d);

    for (int i = 0; i < 2; i++) {
        kn_consumer_close(cs[i], -1);
        kn_consumer_destroy(cs[i]);
    }
}

/* A fresh member of group reads partition 0 from where the group's
 * committed offset says; returns the first offset it got. */
static int64_t first_offset_read(const char *group) {
    kn_consumer *c = member(group, "consumer", NULL);
    char es[512];
    int64_t deadline = kn_test_now_ms() + 60000, first = -1;
    while (first < 0 && kn_test_now_ms() < deadline) {
        kn_records *r = NULL;
        if (kn_consumer_poll(c, 200, &r, es, sizeof es) != KN_OK)
            fail_msg("poll: %s", es);
        for (size_t i = 0; i < kn_records_count(r) && first < 0; i++)
            if (kn_records_partition(r, i) == 0)
                first = kn_records_offset(r, i);
        kn_records_free(r);
    }
    kn_consumer_close(c, -1);
    kn_consumer_destroy(c);
    if (first < 0)
        fail_msg("no record from partition 0 within 60 s");
    return first;
}

/* An alter that must succeed for every partition. */
static void alter_ok(kn_admin *admin, const char *group, const int64_t *offsets, int n) {
    kn_group_offsets *res = alter(admin, group, offsets, n);
    const kn_topic_partition_list *l = kn_group_offsets_partitions(res, 0);
    if (kn_group_offsets_error(res, 0))
        fail_msg("alter %s: %s", group, kn_group_offsets_error_message(res, 0));
    for (size_t i = 0; i < kn_topic_partition_list_count(l); i++)
        if (kn_topic_partition_list_err(l, i))
            fail_msg("alter %s partition %d: %s", group, (int)kn_topic_partition_list_partition(l, i),
                     kn_err_name(kn_topic_partition_list_err(l, i)));
    kn_group_offsets_destroy(res);
}

static void test_reset_honoured(void **state) {
    kn_admin *admin = *state;
    char *g = group_name("grp-reset");
    /* To an offset. */
    int64_t to[3] = {12, 0, 0};
    alter_ok(admin, g, to, 3);
    assert_int_equal(first_offset_read(g), 12);
    /* To the start ("earliest": the log start offset, 0 here). */
    int64_t start[1] = {0};
    alter_ok(admin, g, start, 1);
    assert_int_equal(first_offset_read(g), 0);
    /* Shift by N: the committed offset plus N, computed from the admin's
     * own listing (Java's --shift-by). */
    alter_ok(admin, g, to, 1);
    int64_t shifted[1] = {committed(admin, g, 0) - 5};
    assert_int_equal(shifted[0], 7);
    alter_ok(admin, g, shifted, 1);
    assert_int_equal(first_offset_read(g), 7);
}

/* Nothing answers: each kind of call fails as a whole (no result), with
 * the timeout named, rather than per item. */
static void test_whole_call_failure(void **state) {
    (void)state;
    char errstr[512] = "";
    kn_conf *conf = kn_conf_new(KN_CLIENT_ADMIN);
    kn_test_conf_set(conf, "bootstrap.servers", "127.0.0.1:1");
    kn_test_conf_set(conf, "reconnect.backoff.max.ms", "200");
    kn_admin *admin = kn_admin_new(conf, errstr, sizeof(errstr));
    kn_conf_destroy(conf);
    assert_non_null(admin);
    const char *g = "never-seen";
    kn_group_results *gr = NULL;
    int err = kn_admin_delete_consumer_groups(admin, &g, 1, 1000, &gr, errstr, sizeof(errstr));
    assert_true(err == KN_ERR__TIMED_OUT || err == KN_ERR__TRANSPORT);
    assert_null(gr);
    assert_true(strlen(errstr) > 0);
    kn_group_list *gl = NULL;
    err = kn_admin_list_groups(admin, NULL, 0, NULL, 0, 1000, &gl, errstr, sizeof(errstr));
    assert_int_not_equal(err, KN_OK);
    assert_null(gl);
    kn_topic_partition_list *l = kn_topic_partition_list_new();
    kn_topic_partition_list_add(l, "t", 0);
    kn_offset_results *orr = NULL;
    err = kn_admin_list_offsets(admin, l, 0, 1000, &orr, errstr, sizeof(errstr));
    assert_int_not_equal(err, KN_OK);
    assert_null(orr);
    kn_topic_partition_list_destroy(l);
    kn_config_resource r = {KN_CONFIG_RESOURCE_TOPIC, "t"};
    kn_config_descriptions *cd = NULL;
    err = kn_admin_describe_configs(admin, &r, 1, 0, 1000, &cd, errstr, sizeof(errstr));
    assert_int_not_equal(err, KN_OK);
    assert_null(cd);
    kn_admin_destroy(admin);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_offsets_of_simple_groups),
        cmocka_unit_test(test_live_groups),
        cmocka_unit_test(test_reset_honoured),
        cmocka_unit_test(test_whole_call_failure),
    };
    return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
