/*
 * it_admin_share.c: the share-group admin calls (KIP-932) against the
 * real broker, checked against the Java Admin client
 * (tools/java/admin-oracle share): a share group with a live member of
 * ours is listed by type, described (state, epochs, the member and its
 * assignment) and its start offsets listed, line by line equal to
 * Java's describeShareGroups and listShareGroupOffsets (with an unknown
 * group and a consumer group, both GROUP_ID_NOT_FOUND); altering offsets
 * of the live group is NON_EMPTY_GROUP; once the member left, start
 * offsets set by the admin (a negative one failing alone) are what Java
 * lists and where a new member of ours starts; deleting a topic's state
 * (an unknown topic failing alone) and then the group (an unknown one
 * failing alone) leave nothing for either client to list.
 */
#include "kn_test.h"
#include "oracle_lines.h"

#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "kafka_native.h"
#include "kafka_native_admin.h"
#include "kafka_native_share.h"

#define TIMEOUT_MS 30000
#define PER_PART   10

static void produce(const char *topic) {
    kn_conf *conf = kn_conf_new(KN_CLIENT_PRODUCER);
    kn_test_conf_set(conf, "bootstrap.servers", kn_test_bootstrap());
    char es[512];
    kn_producer *p = kn_producer_new(conf, NULL, NULL, es, sizeof es);
    kn_conf_destroy(conf);
    assert_non_null(p);
    for (int i = 0; i < 2 * PER_PART; i++) {
        kn_record_out r = KN_RECORD_OUT_INIT;
        r.topic = topic;
        r.partition = i % 2;
        r.value = "v";
        r.value_len = 1;
        assert_int_equal(kn_producer_send(p, &r, es, sizeof es), KN_OK);
    }
    assert_int_equal(kn_producer_flush(p, TIMEOUT_MS), KN_OK);
    kn_producer_close(p, 10000);
    kn_producer_destroy(p);
}

/* share.auto.offset.reset=earliest for group, waited until applied. */
static void earliest(kn_admin *a, const char *group) {
    char es[512];
    kn_config_op op = {KN_CONFIG_RESOURCE_GROUP, group, KN_CONFIG_OP_SET, "share.auto.offset.reset", "earliest"};
    kn_config_results *res = NULL;
    assert_int_equal(kn_admin_incremental_alter_configs(a, &op, 1, 0, TIMEOUT_MS, &res, es, sizeof es), KN_OK);
    assert_int_equal(kn_config_results_error(res, 0), 0);
    kn_config_results_destroy(res);
    kn_config_resource r = {KN_CONFIG_RESOURCE_GROUP, group};
    int64_t until = kn_test_now_ms() + TIMEOUT_MS;
    for (bool applied = false; !applied;) {
        kn_config_descriptions *d = NULL;
        if (kn_admin_describe_configs(a, &r, 1, 0, 10000, &d, es, sizeof es) == KN_OK) {
            const kn_config_entry *e = kn_config_descriptions_find(d, 0, "share.auto.offset.reset");
            applied = e && kn_config_entry_value(e) && !strcmp(kn_config_entry_value(e), "earliest");
        }
        kn_config_descriptions_destroy(d);
        if (kn_test_now_ms() > until)
            fail_msg("share.auto.offset.reset never applied");
        if (!applied)
            usleep(100 * 1000);
    }
}

static kn_share_consumer *share_new(const char *group, const char *topic) {
    kn_conf *conf = kn_conf_new(KN_CLIENT_CONSUMER);
    kn_test_conf_set(conf, "bootstrap.servers", kn_test_bootstrap());
    kn_test_conf_set(conf, "group.id", group);
    kn_test_conf_set(conf, "client.id", "share-admin-member");
    char es[512];
    kn_share_consumer *sc = kn_share_consumer_new(conf, es, sizeof es);
    kn_conf_destroy(conf);
    if (!sc)
        fail_msg("kn_share_consumer_new: %s", es);
    assert_int_equal(kn_share_consumer_subscribe(sc, &topic, 1), KN_OK);
    return sc;
}

/* Polls until `want` records came (implicitly acknowledged, committed);
 * first[p] gets the lowest offset seen in partition p. */
static void consume(kn_share_consumer *sc, int want, int64_t first[2]) {
    char es[512];
    int got = 0;
    first[0] = first[1] = -1;
    int64_t until = kn_test_now_ms() + 60000;
    while (got < want) {
        if (kn_test_now_ms() > until)
            fail_msg("%d of %d records within 60 s", got, want);
        kn_records *r = NULL;
        assert_int_equal(kn_share_consumer_poll(sc, 200, &r, es, sizeof es), KN_OK);
        for (size_t k = 0; k < kn_records_count(r); k++) {
            int32_t p = kn_records_partition(r, k);
            int64_t o = kn_records_offset(r, k);
            if (first[p] < 0 || o < first[p])
                first[p] = o;
            got++;
        }
        kn_records_free(r);
    }
    kn_topic_partition_list *res = NULL;
    assert_int_equal(kn_share_consumer_commit_sync(sc, TIMEOUT_MS, &res, es, sizeof es), KN_OK);
    kn_topic_partition_list_destroy(res);
    assert_int_equal(got, want);
}

/* Ours, in the oracle's lines: describe, then every partition's offsets. */
static void our_lines(kn_admin *a, const char *const *groups, size_t n, lines *out) {
    char es[512], as[1024];
    kn_group_descriptions *d = NULL;
    assert_int_equal(kn_admin_describe_share_groups(a, groups, n, 0, TIMEOUT_MS, &d, es, sizeof es), KN_OK);
    kn_group_offsets_spec specs[8];
    assert_true(n <= 8);
    for (size_t i = 0; i < n; i++)
        specs[i] = (kn_group_offsets_spec){groups[i], NULL};
    kn_group_offsets *o = NULL;
    assert_int_equal(kn_admin_list_share_group_offsets(a, specs, n, TIMEOUT_MS, &o, es, sizeof es), KN_OK);
    for (size_t i = 0; i < n; i++) {
        if (kn_group_descriptions_error(d, i)) {
            add_line(out, "share %s error=%s", groups[i], kn_err_name(kn_group_descriptions_error(d, i)));
        } else {
            assert_string_equal(kn_group_descriptions_type(d, i), "share");
            add_line(out, "share %s state=%s coordinator=%d members=%zu epoch=%d assignment_epoch=%d", groups[i],
                     kn_group_descriptions_state(d, i), (int)kn_group_descriptions_coordinator(d, i),
                     kn_group_descriptions_member_count(d, i), (int)kn_group_descriptions_group_epoch(d, i),
                     (int)kn_group_descriptions_assignment_epoch(d, i));
            lines ms = {0};
            for (size_t m = 0; m < kn_group_descriptions_member_count(d, i); m++) {
                oracle_tps(kn_group_descriptions_member_assignment(d, i, m), as, sizeof as);
                add_line(&ms, "smember %s id=%s client=%s host=%s epoch=%d assignment=%s", groups[i],
                         kn_group_descriptions_member_id(d, i, m), kn_group_descriptions_member_client_id(d, i, m),
                         kn_group_descriptions_member_host(d, i, m), (int)kn_group_descriptions_member_epoch(d, i, m),
                         as);
            }
            move_sorted_lines(out, &ms);
        }
        if (kn_group_offsets_error(o, i)) {
            add_line(out, "soffsets %s error=%s", groups[i], kn_err_name(kn_group_offsets_error(o, i)));
            continue;
        }
        const kn_topic_partition_list *l = kn_group_offsets_partitions(o, i);
        lines os = {0};
        for (size_t k = 0; k < kn_topic_partition_list_count(l); k++) {
            if (kn_topic_partition_list_err(l, k))
                continue; /* Java leaves these out */
            int64_t off = kn_topic_partition_list_offset(l, k), lag = kn_group_offsets_lag(o, i, k);
            int32_t ep = kn_topic_partition_list_leader_epoch(l, k);
            char s_off[24] = "null", s_ep[24] = "-", s_lag[24] = "-";
            if (off >= 0) {
                snprintf(s_off, sizeof s_off, "%lld", (long long)off);
                if (ep >= 0)
                    snprintf(s_ep, sizeof s_ep, "%d", (int)ep);
                if (lag >= 0)
                    snprintf(s_lag, sizeof s_lag, "%lld", (long long)lag);
            }
            add_line(&os, "soffset %s %s-%d start=%s epoch=%s lag=%s", groups[i], kn_topic_partition_list_topic(l, k),
                     (int)kn_topic_partition_list_partition(l, k), s_off, s_ep, s_lag);
        }
        move_sorted_lines(out, &os);
    }
    kn_group_offsets_destroy(o);
    kn_group_descriptions_destroy(d);
}

static void test_share_admin(void **state) {
    (void)state;
    char topic[200], group[220], unknown[220], consumer_group[220], es[512], want[512];
    snprintf(topic, sizeof topic, "%s", kn_test_topic("admin-share"));
    snprintf(group, sizeof group, "%s-g", topic);
    snprintf(unknown, sizeof unknown, "%s-none", topic);
    snprintf(consumer_group, sizeof consumer_group, "%s-cg", topic);
    kn_test_create_topic(topic, 2);
    produce(topic);
    kn_admin *a = oracle_admin_new();
    earliest(a, group);

    /* A consumer (simple) group of the same name family: not a share group. */
    kn_topic_partition_list *cl = kn_topic_partition_list_new();
    kn_topic_partition_list_add(cl, topic, 0);
    kn_topic_partition_list_set_offset(cl, 0, 1);
    kn_group_offsets *go = NULL;
    assert_int_equal(kn_admin_alter_consumer_group_offsets(a, consumer_group, cl, TIMEOUT_MS, &go, es, sizeof es),
                     KN_OK);
    assert_int_equal(kn_group_offsets_error(go, 0), 0);
    kn_group_offsets_destroy(go);
    kn_topic_partition_list_destroy(cl);

    /* A live member that took and acknowledged every record. */
    kn_share_consumer *sc = share_new(group, topic);
    int64_t first[2];
    consume(sc, 2 * PER_PART, first);
    assert_int_equal(first[0], 0);
    assert_int_equal(first[1], 0);

    const char *types[1] = {"share"};
    kn_group_list *gl = NULL;
    assert_int_equal(kn_admin_list_groups(a, types, 1, NULL, 0, TIMEOUT_MS, &gl, es, sizeof es), KN_OK);
    bool listed = false;
    for (size_t i = 0; i < kn_group_list_count(gl); i++)
        if (!strcmp(kn_group_list_group_id(gl, i), group)) {
            listed = true;
            assert_string_equal(kn_group_list_type(gl, i), "share");
        } else {
            assert_string_not_equal(kn_group_list_group_id(gl, i), consumer_group);
        }
    assert_true(listed);
    kn_group_list_destroy(gl);

    /* Every record acknowledged: no lag once the share coordinator
     * wrote the state (a moment after the commit). The persisted start
     * offset itself may lag behind (the broker writes it lazily). */
    const char *groups[3] = {group, unknown, consumer_group};
    lines ours = {0};
    snprintf(want, sizeof want, "soffset %s %s-1 start=", group, topic);
    int64_t until = kn_test_now_ms() + TIMEOUT_MS;
    for (;;) {
        our_lines(a, groups, 1, &ours);
        bool done = has_line(&ours, want) && has_line(&ours, "lag=0") && has_line(&ours, "members=1 ") &&
                    has_line(&ours, "state=Stable");
        if (!done && kn_test_now_ms() > until) {
            for (size_t i = 0; i < ours.n; i++)
                print_message("  %s\n", ours.v[i]);
            fail_msg("the live group never showed its state");
        }
        free_lines(&ours);
        if (done)
            break;
        usleep(200 * 1000);
    }
    oracle_same_as_java(a, "share", groups, 3, our_lines, &ours);
    snprintf(want, sizeof want, "smember %s ", group);
    assert_true(has_line(&ours, want));
    snprintf(want, sizeof want, "assignment=%s-0,%s-1", topic, topic);
    assert_true(has_line(&ours, want));
    snprintf(want, sizeof want, "share %s error=GROUP_ID_NOT_FOUND", consumer_group);
    assert_true(has_line(&ours, want));
    free_lines(&ours);

    /* Altering a live group's offsets is refused as a whole. */
    kn_topic_partition_list *l = kn_topic_partition_list_new();
    kn_topic_partition_list_add(l, topic, 0);
    kn_topic_partition_list_set_offset(l, 0, 3);
    kn_topic_partition_list_add(l, topic, 1);
    kn_topic_partition_list_set_offset(l, 1, 5);
    assert_int_equal(kn_admin_alter_share_group_offsets(a, group, l, TIMEOUT_MS, &go, es, sizeof es), KN_OK);
    assert_int_equal(kn_group_offsets_error(go, 0), KN_ERR_NON_EMPTY_GROUP);
    print_message("alter on a live group: %s\n", kn_group_offsets_error_message(go, 0));
    kn_group_offsets_destroy(go);
    assert_int_equal(kn_share_consumer_close(sc, -1), KN_OK);
    kn_share_consumer_destroy(sc);

    /* Once empty: set, a negative offset failing alone. */
    kn_topic_partition_list_add(l, topic, 7);
    kn_topic_partition_list_set_offset(l, 2, -4);
    until = kn_test_now_ms() + TIMEOUT_MS;
    for (;;) { /* the member's leave reaches the coordinator a moment later */
        assert_int_equal(kn_admin_alter_share_group_offsets(a, group, l, TIMEOUT_MS, &go, es, sizeof es), KN_OK);
        if (kn_group_offsets_error(go, 0) != KN_ERR_NON_EMPTY_GROUP || kn_test_now_ms() > until)
            break;
        kn_group_offsets_destroy(go);
        usleep(200 * 1000);
    }
    assert_int_equal(kn_group_offsets_error(go, 0), 0);
    const kn_topic_partition_list *r = kn_group_offsets_partitions(go, 0);
    assert_int_equal(kn_topic_partition_list_count(r), 3);
    assert_int_equal(kn_topic_partition_list_err(r, 0), 0);
    assert_int_equal(kn_topic_partition_list_err(r, 1), 0);
    assert_int_equal(kn_topic_partition_list_err(r, 2), KN_ERR__INVALID_ARG);
    kn_group_offsets_destroy(go);
    kn_topic_partition_list_destroy(l);

    oracle_same_as_java(a, "share", groups, 1, our_lines, &ours);
    snprintf(want, sizeof want, "share %s state=Empty", group);
    assert_true(has_line(&ours, want));
    snprintf(want, sizeof want, "soffset %s %s-0 start=3 ", group, topic);
    assert_true(has_line(&ours, want));
    snprintf(want, sizeof want, "soffset %s %s-1 start=5 ", group, topic);
    assert_true(has_line(&ours, want));
    free_lines(&ours);

    /* A new member starts where the admin said. */
    sc = share_new(group, topic);
    consume(sc, (PER_PART - 3) + (PER_PART - 5), first);
    assert_int_equal(first[0], 3);
    assert_int_equal(first[1], 5);
    assert_int_equal(kn_share_consumer_close(sc, -1), KN_OK);
    kn_share_consumer_destroy(sc);

    /* Forget the topic's state (an unknown topic failing alone). */
    const char *topics[3] = {topic, "no-such-share-topic", topic};
    kn_group_results *gr = NULL;
    until = kn_test_now_ms() + TIMEOUT_MS;
    for (;;) {
        assert_int_equal(kn_admin_delete_share_group_offsets(a, group, topics, 3, TIMEOUT_MS, &gr, es, sizeof es),
                         KN_OK);
        if (kn_group_results_error(gr, 0) != KN_ERR_NON_EMPTY_GROUP || kn_test_now_ms() > until)
            break;
        kn_group_results_destroy(gr);
        usleep(200 * 1000);
    }
    assert_int_equal(kn_group_results_count(gr), 2);
    assert_string_equal(kn_group_results_name(gr, 0), topic);
    assert_int_equal(kn_group_results_error(gr, 0), 0);
    assert_int_not_equal(kn_group_results_error(gr, 1), 0);
    print_message("delete offsets of an unknown topic: %s: %s\n", kn_err_name(kn_group_results_error(gr, 1)),
                  kn_group_results_error_message(gr, 1));
    kn_group_results_destroy(gr);
    oracle_same_as_java(a, "share", groups, 1, our_lines, &ours);
    snprintf(want, sizeof want, "soffset %s ", group);
    assert_false(has_line(&ours, want));
    free_lines(&ours);

    /* Delete the group (an unknown one failing alone). */
    const char *del[2] = {group, unknown};
    assert_int_equal(kn_admin_delete_share_groups(a, del, 2, TIMEOUT_MS, &gr, es, sizeof es), KN_OK);
    assert_int_equal(kn_group_results_error(gr, 0), 0);
    assert_int_equal(kn_group_results_error(gr, 1), KN_ERR_GROUP_ID_NOT_FOUND);
    kn_group_results_destroy(gr);
    oracle_same_as_java(a, "share", groups, 1, our_lines, &ours);
    snprintf(want, sizeof want, "share %s error=GROUP_ID_NOT_FOUND", group);
    assert_true(has_line(&ours, want));
    free_lines(&ours);

    /* Bad input is refused unsent. */
    assert_int_equal(kn_admin_delete_share_group_offsets(a, NULL, topics, 1, TIMEOUT_MS, &gr, es, sizeof es),
                     KN_ERR__INVALID_ARG);
    assert_int_equal(kn_admin_alter_share_group_offsets(a, group, NULL, TIMEOUT_MS, &go, es, sizeof es),
                     KN_ERR__INVALID_ARG);
    kn_admin_destroy(a);
}

int main(void) {
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_share_admin)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}
