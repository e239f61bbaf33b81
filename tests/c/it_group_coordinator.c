/*
 * it_group_coordinator.c: a consumer group whose coordinator moves, on a
 * real three-node cluster (ctest label broker3).
 *
 * The harness's 3-node cluster has __consumer_offsets with one partition
 * and replication factor 3, so the group coordinator is the leader of
 * __consumer_offsets-0 and moves to another node when that node stops.
 * For each protocol (classic, KIP-848): two members (processes,
 * kn_group_member, commit_sync after every poll) split a 6-partition
 * topic (replication 3); records are produced throughout; the
 * coordinator's node is stopped (SIGTERM: a controlled shutdown moves
 * the partition at once) or killed (SIGKILL: the members meet a dead
 * connection, and the partition moves only when the node's broker
 * session expires, ~10 s, longer than the classic members' 6 s session
 * timeout) while they consume and commit. Then:
 *  - the coordinator really moved (another node leads
 *    __consumer_offsets-0);
 *  - every record produced before, during and after is consumed with
 *    its value, none twice (the members commit after every poll, so a
 *    record read twice means a lost commit or a partition that moved
 *    without its offsets);
 *  - no error reached the application (every member log is free of
 *    ERROR lines: commits retry on NOT_COORDINATOR /
 *    COORDINATOR_NOT_AVAILABLE / a lost connection);
 *  - no partition was ever owned by two members, and the group's
 *    committed offsets end at the end of every partition;
 *  - the node is started again (also when the test fails), so the
 *    cluster is whole for whatever runs next.
 *
 * Needs the cluster of `tools/kafka/broker start --nodes 3` and its env
 * (KAFKA_BOOTSTRAP, KN_BROKER_DIR, KN_BROKER_NODES=3). Run by plain
 * ctest against one broker it exits 77 (skipped, never passed), unless
 * KN_TEST_REQUIRE_NODES=3 (tools/test phase 2), where that is a failure.
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "group_members.h"

static const char *broker_dir(void) {
    const char *d = getenv("KN_BROKER_DIR");
    return d && *d ? d : "/tmp/kafka-native-broker";
}

static int stopped_node = -1;

static void node_cmd(const char *verb, int node, bool kill) {
    kn_test_run("%s %s %d %s --dir %s", kn_test_source_path("tools/kafka/broker"), verb, node,
                kill ? "--kill" : "", broker_dir());
}

/* Teardown: members killed, the stopped node started again. */
static int teardown(void **state) {
    kill_leftovers(state);
    if (stopped_node > 0) {
        char cmd[1024];
        snprintf(cmd, sizeof cmd, "%s start-node %d --dir %s", kn_test_source_path("tools/kafka/broker"),
                 stopped_node, broker_dir());
        int rc = system(cmd);
        stopped_node = -1;
        if (rc != 0) {
            fprintf(stderr, "it_group_coordinator: could not restart the node\n");
            return -1;
        }
    }
    return 0;
}

/* The group coordinator: the leader of __consumer_offsets-0 (the harness
 * makes one partition), or -1 while it has none. */
static int coordinator_node(void) {
    kn_conf *conf = kn_conf_new(KN_CLIENT_ADMIN);
    kn_test_conf_set(conf, "bootstrap.servers", kn_test_bootstrap());
    char es[512];
    kn_admin *ad = kn_admin_new(conf, es, sizeof es);
    kn_conf_destroy(conf);
    if (!ad)
        fail_msg("kn_admin_new: %s", es);
    const char *name = "__consumer_offsets";
    kn_topic_descriptions *d = NULL;
    int leader = -1;
    if (kn_admin_describe_topics(ad, &name, 1, 10000, &d, es, sizeof es) == KN_OK) {
        if (kn_topic_descriptions_error(d, 0) == KN_OK && kn_topic_descriptions_partition_count(d, 0) == 1)
            leader = kn_partition_info_leader(kn_topic_descriptions_partition(d, 0, 0));
        kn_topic_descriptions_destroy(d);
    }
    kn_admin_destroy(ad);
    return leader;
}

/* Waits (bounded) until the coordinator is a node other than old. */
static int wait_new_coordinator(int old) {
    int64_t end = kn_test_now_ms() + WAIT_MS;
    for (;;) {
        int n = coordinator_node();
        if (n > 0 && n != old)
            return n;
        if (kn_test_now_ms() > end)
            fail_msg("__consumer_offsets-0 has no leader other than node %d after %d ms", old, WAIT_MS);
        usleep(200000);
    }
}

/* Assignment lines (ASSIGNED / REVOKED / LOST) in a member's log. */
static int count_events(const member *m, const char *kind) {
    FILE *f = fopen(m->log, "r");
    assert_non_null(f);
    char line[4096];
    int n = 0;
    while (fgets(line, sizeof line, f))
        n += strstr(line, " OWN ") && strstr(line, kind);
    fclose(f);
    return n;
}

static void coordinator_moves(const char *protocol, bool kill) {
    /* One group per case: the member logs are named after the group
     * (opened O_APPEND), so a shared name would let a case read the
     * lines (an ERROR) of an earlier one, whose logs a failure keeps. */
    char group_tag[48];
    snprintf(group_tag, sizeof group_tag, "coord-%s-%s", protocol, kill ? "killed" : "stopped");
    scenario s;
    scenario_begin(&s, "group-coord", group_tag, 3);
    member ms[2];
    bool classic = strcmp(protocol, "classic") == 0;
    /* classic: session 6000 ms, heartbeat every 1000 ms; KIP-848 takes
     * both from the coordinator. commit_sync waits up to 30 s (Java's
     * default.api.timeout.ms is 60 s): after a SIGKILL the controller
     * moves __consumer_offsets-0 only once the dead node's broker
     * session (9 s) has expired, and a commit must outlive that. */
    const char *sess = classic ? "--session-ms" : NULL;
    member_start(&ms[0], "A", s.group, "--topic", s.topic, "--protocol", protocol, "--commit-timeout-ms",
                 "30000", sess, "6000", NULL);
    member_start(&ms[1], "B", s.group, "--topic", s.topic, "--protocol", protocol, "--commit-timeout-ms",
                 "30000", sess, "6000", NULL);
    wait_owns(ms, 2, (int[]){3, 3});
    produce(s.pr, s.topic, NPART, s.next, 30);
    wait_consumed(ms, 2, s.topic, &s.cs, s.next, -1, 0, -1);
    int events_before = count_events(&ms[0], " ") + count_events(&ms[1], " ");

    int coord = coordinator_node();
    assert_true(coord >= 1 && coord <= 3);
    int64_t t0 = kn_test_now_ms();
    stopped_node = coord;
    node_cmd("stop-node", coord, kill);
    int moved_to = wait_new_coordinator(coord);
    int64_t moved_ms = kn_test_now_ms() - t0;
    /* Records while the node is down: the members must commit them
     * through the new coordinator. */
    for (int i = 0; i < 3; i++) {
        produce(s.pr, s.topic, NPART, s.next, 20);
        usleep(300000);
    }
    wait_consumed(ms, 2, s.topic, &s.cs, s.next, -1, 0, -1);
    int64_t consumed_ms = kn_test_now_ms() - t0;
    node_cmd("start-node", coord, false);
    stopped_node = -1;
    produce(s.pr, s.topic, NPART, s.next, 20);
    wait_consumed(ms, 2, s.topic, &s.cs, s.next, -1, 0, -1);
    int events_after = count_events(&ms[0], " ") + count_events(&ms[1], " ");
    int lost = count_events(&ms[0], " LOST ") + count_events(&ms[1], " LOST ");
    member_stop(&ms[0]);
    member_stop(&ms[1]);

    check_read_once_committed(ms, 2, s.group, s.topic, &s.cs, s.next);
    logs *lg = calloc(1, sizeof *lg);
    read_events(ms, 2, lg);
    const char *topics[] = {s.topic};
    check_exclusive(lg, 2, topics, 1, NPART, -1, 0);
    free(lg);
    print_message("%s: coordinator node %d %s, node %d took over after %lld ms; records produced "
                  "meanwhile all consumed %lld ms after the stop; assignment events during the move: "
                  "%d (LOST: %d); %lld records per partition, each read once, committed at the end\n",
                  protocol, coord, kill ? "killed" : "stopped", moved_to, (long long)moved_ms,
                  (long long)consumed_ms, events_after - events_before, lost, (long long)s.next[0]);
    scenario_end(&s, ms, 2);
}

static void test_coordinator_stopped_classic(void **state) {
    (void)state;
    coordinator_moves("classic", false);
}

static void test_coordinator_killed_classic(void **state) {
    (void)state;
    coordinator_moves("classic", true);
}

static void test_coordinator_stopped_kip848(void **state) {
    (void)state;
    coordinator_moves("consumer", false);
}

static void test_coordinator_killed_kip848(void **state) {
    (void)state;
    coordinator_moves("consumer", true);
}

int main(void) {
    kn_test_bootstrap();
    int gate = kn_test_need_three_nodes("it_group_coordinator");
    if (gate)
        return gate;
    signal(SIGPIPE, SIG_IGN);
    if (getenv("KN_TEST_FILTER"))
        cmocka_set_test_filter(getenv("KN_TEST_FILTER"));
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_teardown(test_coordinator_stopped_classic, teardown),
        cmocka_unit_test_teardown(test_coordinator_killed_classic, teardown),
        cmocka_unit_test_teardown(test_coordinator_stopped_kip848, teardown),
        cmocka_unit_test_teardown(test_coordinator_killed_kip848, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
