/*
 * it_admin_streams.c: the streams-group admin calls (KIP-1071) against
 * the real broker, checked against the Java Admin client
 * (tools/java/admin-oracle streams). A streams group exists without
 * Kafka Streams: this test is its one member, speaking
 * StreamsGroupHeartbeat itself (a topology of one subtopology reading a
 * 2-partition topic, with a state store's changelog declared with two
 * configs; a rack, a user endpoint, two client tags and task offsets).
 * While it is a member the group is listed by type and described
 * (state, epochs, topology with the changelog's declared partitions,
 * replication factor and configs, the member's process id, rack,
 * topology epoch, endpoint, tags, task offsets and tasks) line by line
 * as Java describes it, with an unknown group and a consumer group both
 * GROUP_ID_NOT_FOUND; once it left, offsets set by the admin are what
 * Java lists, one partition's offset deleted is gone for both, and the
 * deleted group (an unknown one failing alone) is GROUP_ID_NOT_FOUND
 * for both. Standby and warmup tasks, repartition topics and several
 * members are not exercised (one member).
 */
#include "kn_test.h"
#include "oracle_lines.h"
#include "streams_member.h"

#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "kafka_native.h"
#include "kafka_native_admin.h"

#define TIMEOUT_MS 30000

/* "0-0,0-1" style tasks of kind for member m, sorted. */
static void tasks_str(const kn_group_descriptions *d, size_t i, size_t m, int kind, char *out, size_t size) {
    oracle_tps(kn_group_descriptions_member_tasks(d, i, m, kind), out, size);
}

/* Sorted lines joined with "," into out. Empties l. */
static void join_sorted(lines *l, char *out, size_t size) {
    sort_lines(l);
    out[0] = '\0';
    for (size_t k = 0; k < l->n; k++) {
        size_t len = strlen(out);
        snprintf(out + len, size - len, "%s%s", k ? "," : "", l->v[k]);
    }
    free_lines(l);
}

/* "sub-p=offset,..." sorted. */
static void task_offsets_str(const kn_topic_partition_list *o, char *out, size_t size) {
    lines l = {0};
    for (size_t k = 0; k < kn_topic_partition_list_count(o); k++)
        add_line(&l, "%s-%d=%lld", kn_topic_partition_list_topic(o, k), (int)kn_topic_partition_list_partition(o, k),
                 (long long)kn_topic_partition_list_offset(o, k));
    join_sorted(&l, out, size);
}

/* One "sttopic" line per internal topic of subtopology s: its kind,
 * declared partitions and replication factor, and configs. */
static void internal_topic_lines(const kn_group_descriptions *d, size_t i, size_t s, const char *group,
                                 lines *out) {
    static const char *const names[2] = {"changelog", "repartition"};
    for (int k = KN_SUBTOPOLOGY_STATE_CHANGELOG; k <= KN_SUBTOPOLOGY_REPARTITION_SOURCE; k++)
        for (size_t t = 0; t < kn_group_descriptions_subtopology_topic_count(d, i, s, k); t++) {
            lines cl = {0};
            for (size_t c = 0; c < kn_group_descriptions_subtopology_topic_config_count(d, i, s, k, t); c++) {
                const char *v = NULL;
                const char *key = kn_group_descriptions_subtopology_topic_config(d, i, s, k, t, c, &v);
                add_line(&cl, "%s=%s", key, v);
            }
            char cfg[1024];
            join_sorted(&cl, cfg, sizeof cfg);
            add_line(out, "sttopic %s %s %s %s partitions=%d rf=%d configs=%s", group,
                     kn_group_descriptions_subtopology_id(d, i, s), names[k - KN_SUBTOPOLOGY_STATE_CHANGELOG],
                     kn_group_descriptions_subtopology_topic(d, i, s, k, t),
                     (int)kn_group_descriptions_subtopology_topic_partitions(d, i, s, k, t),
                     (int)kn_group_descriptions_subtopology_topic_replication_factor(d, i, s, k, t), cfg);
        }
}

static void our_lines(kn_admin *a, const char *const *groups, size_t n, lines *out) {
    char es[512];
    kn_group_descriptions *d = NULL;
    assert_int_equal(kn_admin_describe_streams_groups(a, groups, n, 0, TIMEOUT_MS, &d, es, sizeof es), KN_OK);
    kn_group_offsets_spec specs[8];
    assert_true(n <= 8);
    for (size_t i = 0; i < n; i++)
        specs[i] = (kn_group_offsets_spec){groups[i], NULL};
    kn_group_offsets *o = NULL;
    assert_int_equal(kn_admin_list_streams_group_offsets(a, specs, n, 0, TIMEOUT_MS, &o, es, sizeof es), KN_OK);
    for (size_t i = 0; i < n; i++) {
        if (kn_group_descriptions_error(d, i)) {
            add_line(out, "streams %s error=%s", groups[i], kn_err_name(kn_group_descriptions_error(d, i)));
        } else {
            assert_string_equal(kn_group_descriptions_type(d, i), "streams");
            lines subs = {0};
            for (size_t s = 0; s < kn_group_descriptions_subtopology_count(d, i); s++) {
                lines src = {0};
                for (size_t t = 0;
                     t < kn_group_descriptions_subtopology_topic_count(d, i, s, KN_SUBTOPOLOGY_SOURCE); t++)
                    add_line(&src, "%s", kn_group_descriptions_subtopology_topic(d, i, s, KN_SUBTOPOLOGY_SOURCE, t));
                sort_lines(&src);
                char buf[1024];
                snprintf(buf, sizeof buf, "%s:", kn_group_descriptions_subtopology_id(d, i, s));
                for (size_t t = 0; t < src.n; t++) {
                    size_t len = strlen(buf);
                    snprintf(buf + len, sizeof buf - len, "%s%s", t ? "+" : "", src.v[t]);
                }
                add_line(&subs, "%s", buf);
                free_lines(&src);
            }
            sort_lines(&subs);
            lines infos = {0};
            for (size_t s = 0; s < kn_group_descriptions_subtopology_count(d, i); s++)
                internal_topic_lines(d, i, s, groups[i], &infos);
            char all[2048] = "";
            for (size_t s = 0; s < subs.n; s++) {
                size_t len = strlen(all);
                snprintf(all + len, sizeof all - len, "%s%s", s ? ";" : "", subs.v[s]);
            }
            free_lines(&subs);
            add_line(out,
                     "streams %s state=%s coordinator=%d members=%zu epoch=%d assignment_epoch=%d "
                     "topology_epoch=%d subtopologies=%s",
                     groups[i], kn_group_descriptions_state(d, i), (int)kn_group_descriptions_coordinator(d, i),
                     kn_group_descriptions_member_count(d, i), (int)kn_group_descriptions_group_epoch(d, i),
                     (int)kn_group_descriptions_assignment_epoch(d, i),
                     (int)kn_group_descriptions_topology_epoch(d, i), all);
            move_sorted_lines(out, &infos);
            lines ms = {0};
            for (size_t m = 0; m < kn_group_descriptions_member_count(d, i); m++) {
                char act[512], sb[512], wu[512], ta[512];
                tasks_str(d, i, m, KN_TASKS_ACTIVE, act, sizeof act);
                tasks_str(d, i, m, KN_TASKS_STANDBY, sb, sizeof sb);
                tasks_str(d, i, m, KN_TASKS_WARMUP, wu, sizeof wu);
                tasks_str(d, i, m, KN_TASKS_TARGET_ACTIVE, ta, sizeof ta);
                const char *inst = kn_group_descriptions_member_instance_id(d, i, m);
                const char *rack = kn_group_descriptions_member_rack(d, i, m);
                int port = 0;
                const char *ep_host = kn_group_descriptions_member_user_endpoint(d, i, m, &port);
                char ep[300] = "-", tags[512] = "", offs[512], ends[512];
                if (ep_host)
                    snprintf(ep, sizeof ep, "%s:%d", ep_host, port);
                lines tl = {0};
                for (size_t k = 0; k < kn_group_descriptions_member_client_tag_count(d, i, m); k++) {
                    const char *v = NULL;
                    const char *key = kn_group_descriptions_member_client_tag(d, i, m, k, &v);
                    add_line(&tl, "%s=%s", key, v);
                }
                join_sorted(&tl, tags, sizeof tags);
                task_offsets_str(kn_group_descriptions_member_task_offsets(d, i, m, KN_TASK_OFFSETS), offs,
                                 sizeof offs);
                task_offsets_str(kn_group_descriptions_member_task_offsets(d, i, m, KN_TASK_END_OFFSETS), ends,
                                 sizeof ends);
                add_line(&ms,
                         "stmember %s id=%s instance=%s client=%s host=%s epoch=%d process=%s active=%s "
                         "standby=%s warmup=%s target_active=%s rack=%s topology_epoch=%d classic=%s endpoint=%s "
                         "tags=%s offsets=%s end_offsets=%s",
                         groups[i], kn_group_descriptions_member_id(d, i, m), inst ? inst : "null",
                         kn_group_descriptions_member_client_id(d, i, m), kn_group_descriptions_member_host(d, i, m),
                         (int)kn_group_descriptions_member_epoch(d, i, m),
                         kn_group_descriptions_member_process_id(d, i, m), act, sb, wu, ta, rack ? rack : "-",
                         (int)kn_group_descriptions_member_topology_epoch(d, i, m),
                         kn_group_descriptions_member_is_classic(d, i, m) ? "true" : "false", ep, tags, offs, ends);
            }
            move_sorted_lines(out, &ms);
        }
        if (kn_group_offsets_error(o, i)) {
            add_line(out, "stoffsets %s error=%s", groups[i], kn_err_name(kn_group_offsets_error(o, i)));
            continue;
        }
        const kn_topic_partition_list *l = kn_group_offsets_partitions(o, i);
        lines os = {0};
        for (size_t k = 0; k < kn_topic_partition_list_count(l); k++) {
            int64_t off = kn_topic_partition_list_offset(l, k);
            char s_off[24] = "null";
            if (off >= 0)
                snprintf(s_off, sizeof s_off, "%lld", (long long)off);
            add_line(&os, "stoffset %s %s-%d offset=%s", groups[i], kn_topic_partition_list_topic(l, k),
                     (int)kn_topic_partition_list_partition(l, k), s_off);
        }
        move_sorted_lines(out, &os);
    }
    kn_group_offsets_destroy(o);
    kn_group_descriptions_destroy(d);
}

static void test_streams_admin(void **state) {
    (void)state;
    char topic[200], group[220], unknown[220], cgroup[220], member[64], es[512], want[512];
    snprintf(topic, sizeof topic, "%s", kn_test_topic("admin-streams"));
    snprintf(group, sizeof group, "%s-g", topic);
    snprintf(unknown, sizeof unknown, "%s-none", topic);
    snprintf(cgroup, sizeof cgroup, "%s-cg", topic);
    snprintf(member, sizeof member, "kn-streams-member-%d", (int)getpid());
    kn_test_create_topic(topic, 2);
    char changelog[256];
    snprintf(changelog, sizeof changelog, "%s-store-changelog", topic);
    kn_test_create_topic(changelog, 2);
    kn_admin *a = oracle_admin_new();

    kn_topic_partition_list *l = kn_topic_partition_list_new();
    kn_topic_partition_list_add(l, topic, 0);
    kn_topic_partition_list_set_offset(l, 0, 1);
    kn_group_offsets *go = NULL;
    assert_int_equal(kn_admin_alter_consumer_group_offsets(a, cgroup, l, TIMEOUT_MS, &go, es, sizeof es), KN_OK);
    kn_group_offsets_destroy(go);
    kn_topic_partition_list_destroy(l);

    /* Join, then acknowledge what was assigned until the group is stable. */
    int32_t tasks[8];
    int task_n = 0;
    int32_t epoch = streams_heartbeat(a, group, member, 0, topic, NULL, 0, tasks, &task_n);
    const char *groups[3] = {group, unknown, cgroup};
    lines ours = {0};
    int64_t until = kn_test_now_ms() + TIMEOUT_MS;
    for (;;) {
        epoch = streams_heartbeat(a, group, member, epoch, topic, tasks, task_n, tasks, &task_n);
        our_lines(a, groups, 1, &ours);
        snprintf(want, sizeof want, "active=0-0,0-1 ");
        bool done = has_line(&ours, want) && has_line(&ours, "target_active=0-0,0-1") &&
                    (has_line(&ours, "state=Stable") || has_line(&ours, "state=stable"));
        if (!done && kn_test_now_ms() > until) {
            for (size_t i = 0; i < ours.n; i++)
                print_message("  %s\n", ours.v[i]);
            fail_msg("the streams group never became stable with both tasks");
        }
        free_lines(&ours);
        if (done)
            break;
        usleep(300 * 1000);
    }
    const char *types[1] = {"streams"};
    kn_group_list *gl = NULL;
    assert_int_equal(kn_admin_list_groups(a, types, 1, NULL, 0, TIMEOUT_MS, &gl, es, sizeof es), KN_OK);
    bool listed = false;
    for (size_t i = 0; i < kn_group_list_count(gl); i++)
        listed |= !strcmp(kn_group_list_group_id(gl, i), group);
    assert_true(listed);
    kn_group_list_destroy(gl);

    oracle_same_as_java(a, "streams", groups, 3, our_lines, &ours);
    snprintf(want, sizeof want, "subtopologies=0:%s", topic);
    assert_true(has_line(&ours, want));
    assert_true(has_line(&ours, "process=kn-process-1 "));
    assert_true(has_line(&ours, " rack=kn-rack-a topology_epoch=0 classic=false endpoint=iq.kn.example:8080 "
                                "tags=tier=gold,zone=z1 "));
    snprintf(want, sizeof want, "sttopic %s 0 changelog %s partitions=", group, changelog);
    assert_true(has_line(&ours, want));
    assert_true(has_line(&ours, " rf=1 configs=cleanup.policy=compact,min.compaction.lag.ms=1000"));
    snprintf(want, sizeof want, "streams %s error=GROUP_ID_NOT_FOUND", unknown);
    assert_true(has_line(&ours, want));
    snprintf(want, sizeof want, "streams %s error=GROUP_ID_NOT_FOUND", cgroup);
    assert_true(has_line(&ours, want));
    free_lines(&ours);

    /* Leave; then the admin sets offsets of the empty group. */
    streams_heartbeat(a, group, member, -1, topic, NULL, 0, NULL, NULL);
    l = kn_topic_partition_list_new();
    kn_topic_partition_list_add(l, topic, 0);
    kn_topic_partition_list_set_offset(l, 0, 4);
    kn_topic_partition_list_add(l, topic, 1);
    kn_topic_partition_list_set_offset(l, 1, 6);
    assert_int_equal(kn_admin_alter_streams_group_offsets(a, group, l, TIMEOUT_MS, &go, es, sizeof es), KN_OK);
    assert_int_equal(kn_group_offsets_error(go, 0), 0);
    for (size_t k = 0; k < 2; k++)
        if (kn_topic_partition_list_err(kn_group_offsets_partitions(go, 0), k))
            fail_msg("alter %zu: %s", k,
                     kn_err_name(kn_topic_partition_list_err(kn_group_offsets_partitions(go, 0), k)));
    kn_group_offsets_destroy(go);
    oracle_same_as_java(a, "streams", groups, 1, our_lines, &ours);
    snprintf(want, sizeof want, "stoffset %s %s-0 offset=4", group, topic);
    assert_true(has_line(&ours, want));
    snprintf(want, sizeof want, "stoffset %s %s-1 offset=6", group, topic);
    assert_true(has_line(&ours, want));
    assert_true(has_line(&ours, "members=0 "));
    free_lines(&ours);

    /* Delete partition 1's offset. */
    kn_topic_partition_list *one = kn_topic_partition_list_new();
    kn_topic_partition_list_add(one, topic, 1);
    assert_int_equal(kn_admin_delete_streams_group_offsets(a, group, one, TIMEOUT_MS, &go, es, sizeof es), KN_OK);
    assert_int_equal(kn_group_offsets_error(go, 0), 0);
    assert_int_equal(kn_topic_partition_list_err(kn_group_offsets_partitions(go, 0), 0), 0);
    kn_group_offsets_destroy(go);
    kn_topic_partition_list_destroy(one);
    kn_topic_partition_list_destroy(l);
    oracle_same_as_java(a, "streams", groups, 1, our_lines, &ours);
    snprintf(want, sizeof want, "stoffset %s %s-1 ", group, topic);
    assert_false(has_line(&ours, want));
    free_lines(&ours);

    /* Delete the group (an unknown one failing alone). */
    const char *del[2] = {group, unknown};
    kn_group_results *gr = NULL;
    assert_int_equal(kn_admin_delete_streams_groups(a, del, 2, TIMEOUT_MS, &gr, es, sizeof es), KN_OK);
    assert_int_equal(kn_group_results_error(gr, 0), 0);
    assert_int_equal(kn_group_results_error(gr, 1), KN_ERR_GROUP_ID_NOT_FOUND);
    kn_group_results_destroy(gr);
    oracle_same_as_java(a, "streams", groups, 1, our_lines, &ours);
    snprintf(want, sizeof want, "streams %s error=GROUP_ID_NOT_FOUND", group);
    assert_true(has_line(&ours, want));
    free_lines(&ours);
    kn_admin_destroy(a);
}

int main(void) {
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_streams_admin)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}
