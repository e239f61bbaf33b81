/*
 * it_group.c: consumer groups against the real broker (KAFKA_BOOTSTRAP),
 * members in separate processes (kn_group_member, built beside this
 * test). Each member writes timestamped assignment / record / commit
 * lines; the test merges them and checks:
 *
 *  - the 6-partition handoff (one member gets 6; a second joins: 3/3;
 *    the first leaves: the second gets 6) for range, roundrobin, sticky,
 *    cooperative-sticky and KIP-848: every record produced throughout is
 *    consumed with its contents, and no partition is ever owned by two
 *    members at once; under cooperative-sticky the partitions a member
 *    keeps are never revoked;
 *  - a member killed with SIGKILL: its partitions move after
 *    session.timeout.ms and consumption resumes from its last commits;
 *  - a static member (group.instance.id) restarted within the session
 *    timeout gets its partitions back, the other member sees no change
 *    (classic and KIP-848);
 *  - KIP-848 commits across epoch bumps (members joining and leaving
 *    during a commit-heavy loop): no error, no record read twice,
 *    committed offsets at the end;
 *  - a KIP-848 member fenced for overrunning its rebalance timeout:
 *    LOST, rejoin with the same member id, every record read once;
 *  - a member that stops polling for longer than max.poll.interval.ms
 *    leaves (the other takes everything), reports its partitions lost on
 *    its next poll and rejoins, with a valid group identity;
 *  - a custom assignor (kn_consumer_add_assignor) decides the split;
 *  - a pattern subscription picks up a matching topic created later,
 *    and so does a broker-side regex (KIP-848 SubscribedTopicRegex);
 *  - a regex the broker rejects fails poll with INVALID_REGULAR_EXPRESSION;
 *    a broker-side regex under the classic protocol is unsupported.
 *
 * Every wait is bounded; a member still running at the end is killed.
 * The member and log helpers are in support/group_members.c.
 */
#include "group_members.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "kafka_native.h"

/* ---- the handoff ---------------------------------------------------------------- */

static void handoff(const char *strategy, const char *protocol) {
    scenario s;
    scenario_begin(&s, "group", strategy ? strategy : protocol, 1);
    member ms[2];
    const char *sopt = strategy ? "--strategy" : "--protocol";
    const char *sval = strategy ? strategy : protocol;
    /* KIP-848 takes its session and heartbeat from the broker. */
    const char *sess = strategy ? "--session-ms" : NULL;

    member_start(&ms[0], "A", s.group, "--topic", s.topic, sopt, sval, sess, "6000", NULL);
    wait_owns(ms, 1, (int[]){6});
    produce(s.pr, s.topic, NPART, s.next, 20);
    member_start(&ms[1], "B", s.group, "--topic", s.topic, sopt, sval, sess, "6000", NULL);
    produce(s.pr, s.topic, NPART, s.next, 20);
    wait_owns(ms, 2, (int[]){3, 3});
    produce(s.pr, s.topic, NPART, s.next, 20);
    wait_consumed(ms, 2, s.topic, &s.cs, s.next, -1, 0, -1);
    /* what A keeps through the handoff */
    char kept[1024];
    member_own(&ms[0], kept, sizeof kept);
    member_stop(&ms[0]);
    produce(s.pr, s.topic, NPART, s.next, 20);
    wait_owns(&ms[1], 1, (int[]){6});
    produce(s.pr, s.topic, NPART, s.next, 20);
    wait_consumed(ms, 2, s.topic, &s.cs, s.next, -1, 0, -1);
    member_stop(&ms[1]);

    logs *lg = calloc(1, sizeof *lg);
    read_events(ms, 2, lg);
    if (strategy && strcmp(strategy, "cooperative-sticky") == 0) {
        /* KIP-429: A's REVOKED events before it left never name a
         * partition it kept. */
        for (int k = 0; k < lg->nev; k++) {
            const event *e = &lg->ev[k];
            if (e->member != 0 || e->kind != EV_REVOKED || strcmp(e->own, "-") == 0)
                continue;
            for (int p = 0; p < NPART; p++)
                if (list_has(e->changed, s.topic, p) && list_has(kept, s.topic, p))
                    fail_msg("cooperative: A revoked %s:%d, which it kept", s.topic, p);
        }
    }
    const char *topics[] = {s.topic};
    check_exclusive(lg, 2, topics, 1, NPART, -1, 0);
    print_message("handoff %s: %d assignment events, %lld records per partition, all consumed\n", sval,
                  lg->nev, (long long)s.next[0]);
    free(lg);
    scenario_end(&s, ms, 2);
}

static void test_handoff_range(void **state) {
    (void)state;
    handoff("range", NULL);
}
static void test_handoff_roundrobin(void **state) {
    (void)state;
    handoff("roundrobin", NULL);
}
static void test_handoff_sticky(void **state) {
    (void)state;
    handoff("sticky", NULL);
}
static void test_handoff_cooperative(void **state) {
    (void)state;
    handoff("cooperative-sticky", NULL);
}
static void test_handoff_kip848(void **state) {
    (void)state;
    kn_test_need_kip848();
    handoff(NULL, "consumer");
}

/* ---- SIGKILL ------------------------------------------------------------------------ */

static void test_kill(void **state) {
    (void)state;
    scenario s;
    scenario_begin(&s, "group-kill", "kill", 1);
    member ms[2];
    member_start(&ms[0], "A", s.group, "--topic", s.topic, "--strategy", "range", "--session-ms", "6000",
                 NULL);
    member_start(&ms[1], "B", s.group, "--topic", s.topic, "--strategy", "range", "--session-ms", "6000",
                 NULL);
    wait_owns(ms, 2, (int[]){3, 3});
    produce(s.pr, s.topic, NPART, s.next, 30);
    wait_consumed(ms, 2, s.topic, &s.cs, s.next, -1, 0, 1);
    char b_owned[1024];
    member_own(&ms[1], b_owned, sizeof b_owned);
    /* B commits after each poll: let its last commit land, so the kill
     * below is a crash after a commit, not in the middle of one. */
    int64_t end = kn_test_now_ms() + WAIT_MS;
    for (bool settled = false; !settled;) {
        read_records(ms, 2, s.topic, &s.cs, -1, 0, 1);
        settled = true;
        for (int p = 0; p < NPART; p++)
            if (list_has(b_owned, s.topic, p) && s.cs.last_commit[p] != s.next[p])
                settled = false;
        if (!settled && kn_test_now_ms() > end)
            fail_msg("B's commits did not reach the end of its partitions");
        if (!settled)
            usleep(50000);
    }
    long long kill_ts = real_ms();
    int64_t killed_at = kn_test_now_ms();
    member_kill(&ms[1]);
    produce(s.pr, s.topic, NPART, s.next, 30);
    wait_owns(ms, 1, (int[]){6});
    int64_t moved_ms = kn_test_now_ms() - killed_at;
    produce(s.pr, s.topic, NPART, s.next, 10);
    wait_consumed(ms, 2, s.topic, &s.cs, s.next, 0, kill_ts, 1);
    /* A resumed each of B's partitions at B's last commit (B commits
     * after every poll, so that is B's last read + 1, or a commit the
     * kill cut off before it was logged). */
    for (int p = 0; p < NPART; p++) {
        if (!list_has(b_owned, s.topic, p))
            continue;
        int64_t first = s.cs.first_after[p], committed = s.cs.last_commit[p];
        print_message("%s:%d: B committed %lld, read up to %lld; A resumed at %lld\n", s.topic, p,
                      (long long)committed, (long long)s.cs.last_read[p], (long long)first);
        assert_true(committed >= 0);
        assert_true(first >= committed);
        assert_true(first <= s.cs.last_read[p] + 1);
    }
    member_stop(&ms[0]);
    logs *lg = calloc(1, sizeof *lg);
    read_events(ms, 2, lg);
    const char *topics[] = {s.topic};
    check_exclusive(lg, 2, topics, 1, NPART, 1, kill_ts);
    print_message("SIGKILL: B's partitions moved to A %lld ms after the kill (session.timeout.ms 6000)\n",
                  (long long)moved_ms);
    free(lg);
    scenario_end(&s, ms, 2);
}

/* ---- static membership ------------------------------------------------------------ */

static int count_events(const member *m) {
    FILE *f = fopen(m->log, "r");
    assert_non_null(f);
    char line[4096];
    int n = 0;
    while (fgets(line, sizeof line, f))
        n += strstr(line, " OWN ") != NULL;
    fclose(f);
    return n;
}

/* A static member stopped and restarted with the same group.instance.id
 * within the session timeout gets its partitions back; the other member
 * sees no change. KIP-848: the stop sends member epoch -2 (a static
 * leave: the coordinator keeps the assignment for the session timeout,
 * 45 s by default) and the new process joins at epoch 0 with a new
 * member id under the same instance id. */
static void static_restart(const char *protocol) {
    char topic[256], group[64];
    snprintf(topic, sizeof topic, "%s", kn_test_topic("group-static"));
    snprintf(group, sizeof group, "g-static-%s-%d", protocol, (int)getpid());
    create_topic(topic, NPART);
    member ms[3];
    bool classic = strcmp(protocol, "classic") == 0;
    const char *sopt = classic ? "--strategy" : NULL, *sess = classic ? "--session-ms" : NULL;
    member_start(&ms[0], "A", group, "--topic", topic, "--protocol", protocol, "--instance", "ia",
                 "--quiet-records", sopt, "range", sess, "15000", NULL);
    member_start(&ms[1], "B", group, "--topic", topic, "--protocol", protocol, "--instance", "ib",
                 "--quiet-records", sopt, "range", sess, "15000", NULL);
    wait_owns(ms, 2, (int[]){3, 3});
    char a_before[1024];
    member_own(&ms[0], a_before, sizeof a_before);
    int b_events = count_events(&ms[1]);
    member_stop(&ms[0]); /* static: no LeaveGroup (classic) / epoch -2 (KIP-848) */
    member_start(&ms[2], "A2", group, "--topic", topic, "--protocol", protocol, "--instance", "ia",
                 "--quiet-records", sopt, "range", sess, "15000", NULL);
    wait_owns(&ms[2], 1, (int[]){3});
    char a_after[1024];
    member_own(&ms[2], a_after, sizeof a_after);
    assert_string_equal(a_before, a_after);
    /* B stays untouched for a few heartbeats (heartbeat.interval.ms is
     * 2500 here, 5000 under KIP-848): a rebalance would show as
     * REVOKED/ASSIGNED lines. */
    usleep(6000 * 1000);
    assert_int_equal(count_events(&ms[1]), b_events);
    member_stop(&ms[2]);
    member_stop(&ms[1]);
    remove_logs(ms, 3);
}

static void test_static_restart(void **state) {
    (void)state;
    static_restart("classic");
}

static void test_static_restart_kip848(void **state) {
    (void)state;
    kn_test_need_kip848();
    static_restart("consumer");
}

/* ---- max.poll.interval.ms ----------------------------------------------------------- */

/* The ts of the first line of m's log containing word at or after
 * after_ts (copied to line_out), or -1. */
static long long first_line(const member *m, const char *word, long long after_ts, char *line_out, size_t n) {
    FILE *f = fopen(m->log, "r");
    assert_non_null(f);
    char line[4096];
    long long found = -1;
    while (fgets(line, sizeof line, f)) {
        long long ts;
        if (sscanf(line, "%lld", &ts) != 1 || ts < after_ts || !strstr(line, word))
            continue;
        found = ts;
        if (line_out)
            snprintf(line_out, n, "%s", line);
        break;
    }
    fclose(f);
    return found;
}

static void test_poll_timeout(void **state) {
    (void)state;
    char topic[256], group[64];
    snprintf(topic, sizeof topic, "%s", kn_test_topic("group-poll"));
    snprintf(group, sizeof group, "g-poll-%d", (int)getpid());
    create_topic(topic, NPART);
    member ms[2];
    member_start(&ms[1], "B", group, "--topic", topic, "--session-ms", "6000", "--quiet-records", NULL);
    wait_owns(&ms[1], 1, (int[]){6});
    /* A stops polling for 9 s right after its first assignment, with
     * max.poll.interval.ms 4000: it must leave, B takes everything,
     * and A's next poll reports its partitions lost and rejoins. */
    member_start(&ms[0], "A", group, "--topic", topic, "--session-ms", "6000", "--max-poll-ms", "4000",
                 "--stall-ms", "9000", "--quiet-records", NULL);
    int64_t end = kn_test_now_ms() + WAIT_MS;
    long long lost_ts;
    while ((lost_ts = first_line(&ms[0], " LOST ", 0, NULL, 0)) < 0) {
        if (kn_test_now_ms() > end)
            fail_msg("A never reported its partitions lost");
        usleep(100000);
    }
    long long stall_ts = first_line(&ms[0], " STALL ", 0, NULL, 0);
    assert_true(stall_ts > 0 && stall_ts < lost_ts);
    /* B owned all 6 again while A was stalled */
    FILE *f = fopen(ms[1].log, "r");
    assert_non_null(f);
    char line[4096];
    bool took_all = false;
    while (fgets(line, sizeof line, f)) {
        long long ts;
        char *own = strstr(line, " OWN ");
        if (own && sscanf(line, "%lld", &ts) == 1 && ts > stall_ts && ts < lost_ts) {
            own[5 + strcspn(own + 5, "\n")] = '\0';
            if (list_count(own + 5) == NPART)
                took_all = true;
        }
    }
    fclose(f);
    assert_true(took_all);
    wait_owns(ms, 2, (int[]){3, 3});
    /* the identity the member reports after rejoining */
    char meta[4096];
    end = kn_test_now_ms() + WAIT_MS; /* META follows ASSIGNED from the next poll */
    while (first_line(&ms[0], " META ", lost_ts, meta, sizeof meta) < 0) {
        if (kn_test_now_ms() > end)
            fail_msg("A wrote no META line after rejoining");
        usleep(50000);
    }
    long long ts;
    char name[32], word[32], member_id[512], instance[256], sub[512];
    int gen;
    assert_int_equal(
        sscanf(meta, "%lld %31s %31s %d %511s %255s %511s", &ts, name, word, &gen, member_id, instance, sub),
        7);
    assert_true(gen >= 1);
    assert_string_not_equal(member_id, "-");
    assert_string_equal(instance, "-");
    char want_sub[300];
    snprintf(want_sub, sizeof want_sub, "%s:-1", topic);
    assert_string_equal(sub, want_sub);
    member_stop(&ms[0]);
    member_stop(&ms[1]);
    remove_logs(ms, 2);
}

/* ---- KIP-848 fencing ------------------------------------------------------------------ */

/* The member id of the first META line at or after after_ts that has a
 * valid epoch (>= 1), "" if none yet. */
static void meta_member_id(const member *m, long long after_ts, char *out, size_t n) {
    out[0] = '\0';
    FILE *f = fopen(m->log, "r");
    assert_non_null(f);
    char line[4096];
    while (fgets(line, sizeof line, f)) {
        long long ts;
        char name[32], word[32], id[512];
        int gen;
        if (sscanf(line, "%lld %31s %31s %d %511s", &ts, name, word, &gen, id) == 5 && ts >= after_ts &&
            strcmp(word, "META") == 0 && gen >= 1) {
            snprintf(out, n, "%s", id);
            break;
        }
    }
    fclose(f);
}

/* A KIP-848 member that does not finish a revocation within its
 * rebalance timeout (max.poll.interval.ms, 5000 here) is fenced by the
 * coordinator: B owns all 6; A joins; B's REVOKED listener (3 to give
 * up) sleeps 10 s inside poll, so B's own poll timer never expires and
 * its network thread keeps heartbeating until the coordinator answers
 * FENCED_MEMBER_EPOCH / UNKNOWN_MEMBER_ID and hands everything to A.
 * When the listener returns, B reports its partitions LOST, rejoins
 * with the same member id at epoch 0, gets its share back (3/3), and
 * every record is read exactly once: each partition resumes at the last
 * committed offset (the members commit after every poll). */
static void test_fenced_kip848(void **state) {
    (void)state;
    kn_test_need_kip848();
    scenario s;
    scenario_begin(&s, "group-fenced", "fenced", 1);
    member ms[2];
    member_start(&ms[1], "B", s.group, "--topic", s.topic, "--protocol", "consumer", "--max-poll-ms", "5000",
                 "--revoke-sleep-ms", "10000", NULL);
    wait_owns(&ms[1], 1, (int[]){6});
    produce(s.pr, s.topic, NPART, s.next, 30);
    wait_consumed(ms + 1, 1, s.topic, &s.cs, s.next, -1, 0, -1);
    char id_before[512];
    meta_member_id(&ms[1], 0, id_before, sizeof id_before);
    assert_true(id_before[0]);
    long long join_ts = real_ms();
    member_start(&ms[0], "A", s.group, "--topic", s.topic, "--protocol", "consumer", "--max-poll-ms", "5000",
                 NULL);
    int64_t end = kn_test_now_ms() + WAIT_MS;
    long long sleep_ts;
    while ((sleep_ts = first_line(&ms[1], " REVOKE-SLEEP ", 0, NULL, 0)) < 0) {
        if (kn_test_now_ms() > end)
            fail_msg("B never started revoking");
        usleep(50000);
    }
    wait_owns(ms, 1, (int[]){6}); /* B was fenced: A has everything */
    long long took_ts = real_ms();
    produce(s.pr, s.topic, NPART, s.next, 20);
    end = kn_test_now_ms() + WAIT_MS;
    long long lost_ts;
    while ((lost_ts = first_line(&ms[1], " LOST ", 0, NULL, 0)) < 0) {
        if (kn_test_now_ms() > end)
            fail_msg("B never reported its partitions lost");
        usleep(100000);
    }
    assert_true(lost_ts >= sleep_ts);
    wait_owns(ms, 2, (int[]){3, 3});
    produce(s.pr, s.topic, NPART, s.next, 20);
    wait_consumed(ms, 2, s.topic, &s.cs, s.next, -1, 0, -1);
    /* the same member id, at a new epoch (META has epoch >= 1) */
    end = kn_test_now_ms() + WAIT_MS;
    char id_after[512] = "";
    while (meta_member_id(&ms[1], lost_ts, id_after, sizeof id_after), !id_after[0]) {
        if (kn_test_now_ms() > end)
            fail_msg("B wrote no META line after rejoining");
        usleep(50000);
    }
    assert_string_equal(id_before, id_after);
    member_stop(&ms[0]);
    member_stop(&ms[1]);
    read_records(ms, 2, s.topic, &s.cs, -1, 0, -1);
    if (s.cs.dups)
        fail_msg("%lld records were read twice (first: %s)", (long long)s.cs.dups, s.cs.first_dup);
    logs *lg = calloc(1, sizeof *lg);
    read_events(ms, 2, lg);
    const char *topics[] = {s.topic};
    /* B read nothing from its listener's sleep on (its REVOKED line,
     * same millisecond, is the last it applied), and the coordinator
     * fenced it before A got B's partitions; B's log says so only at
     * LOST. */
    check_exclusive(lg, 2, topics, 1, NPART, 1, sleep_ts + 1);
    print_message("fenced: A joined, B started revoking %lld ms later and slept; A had all 6 "
                  "%lld ms after A joined; B reported LOST %lld ms after its sleep began, rejoined "
                  "as %s; every record read once\n",
                  sleep_ts - join_ts, took_ts - join_ts, lost_ts - sleep_ts, id_after);
    free(lg);
    scenario_end(&s, ms, 2);
}

/* ---- commits across member epochs (KIP-848) ------------------------------------------ */

/* KIP-848 members commit while the member epochs move: A commits after
 * every poll (commit_sync) and B and C auto-commit (every 200 ms, and
 * before each revocation). B joins, C joins, B leaves, C leaves, while
 * records are produced throughout: every epoch bump of A and every
 * revocation happens in the middle of a commit-heavy loop. No commit or
 * poll error may reach the application, no record may be read twice
 * (each revocation commits before the partitions move, so the next
 * owner starts exactly there), and the group's committed offsets end at
 * the end of every partition. */
static void test_commit_epochs_kip848(void **state) {
    (void)state;
    kn_test_need_kip848();
    scenario s;
    scenario_begin(&s, "group-epochs", "epochs", 1);
    member ms[3];
    member_start(&ms[0], "A", s.group, "--topic", s.topic, "--protocol", "consumer", "--commit", "sync",
                 NULL);
    wait_owns(ms, 1, (int[]){6});
    produce(s.pr, s.topic, NPART, s.next, 50);
    member_start(&ms[1], "B", s.group, "--topic", s.topic, "--protocol", "consumer", "--commit", "auto",
                 NULL);
    produce(s.pr, s.topic, NPART, s.next, 50);
    wait_owns(ms, 2, (int[]){3, 3});
    produce(s.pr, s.topic, NPART, s.next, 50);
    member_start(&ms[2], "C", s.group, "--topic", s.topic, "--protocol", "consumer", "--commit", "auto",
                 NULL);
    produce(s.pr, s.topic, NPART, s.next, 50);
    wait_owns(ms, 3, (int[]){2, 2, 2});
    produce(s.pr, s.topic, NPART, s.next, 50);
    wait_consumed(ms, 3, s.topic, &s.cs, s.next, -1, 0, -1);
    member_stop(&ms[1]);
    produce(s.pr, s.topic, NPART, s.next, 50);
    wait_owns((member[]){ms[0], ms[2]}, 2, (int[]){3, 3});
    produce(s.pr, s.topic, NPART, s.next, 50);
    wait_consumed(ms, 3, s.topic, &s.cs, s.next, -1, 0, -1);
    member_stop(&ms[2]);
    produce(s.pr, s.topic, NPART, s.next, 50);
    wait_owns(ms, 1, (int[]){6});
    produce(s.pr, s.topic, NPART, s.next, 50);
    wait_consumed(ms, 3, s.topic, &s.cs, s.next, -1, 0, -1);
    member_stop(&ms[0]);
    check_read_once_committed(ms, 3, s.group, s.topic, &s.cs, s.next);
    logs *lg = calloc(1, sizeof *lg);
    read_events(ms, 3, lg);
    const char *topics[] = {s.topic};
    check_exclusive(lg, 3, topics, 1, NPART, -1, 0);
    print_message("epochs: %d assignment events, %lld records per partition, each read once, "
                  "committed offsets at the end\n",
                  lg->nev, (long long)s.next[0]);
    free(lg);
    scenario_end(&s, ms, 3);
}

/* ---- custom assignor ------------------------------------------------------------------ */

static void test_custom_assignor(void **state) {
    (void)state;
    char topic[256], group[64];
    snprintf(topic, sizeof topic, "%s", kn_test_topic("group-custom"));
    snprintf(group, sizeof group, "g-custom-%d", (int)getpid());
    create_topic(topic, NPART);
    member ms[2];
    member_start(&ms[0], "A", group, "--topic", topic, "--session-ms", "6000", "--custom-assignor",
                 "--quiet-records", NULL);
    wait_owns(ms, 1, (int[]){6});
    member_start(&ms[1], "B", group, "--topic", topic, "--session-ms", "6000", "--custom-assignor",
                 "--quiet-records", NULL);
    /* "kn-first" gives everything to the smallest member id: one member
     * has 6, the other none, once both are in (the leader ran it in
     * poll: CUSTOM-ASSIGNED names 2 members). */
    int64_t end = kn_test_now_ms() + WAIT_MS;
    for (;;) {
        char a[1024], b[1024];
        member_own(&ms[0], a, sizeof a);
        member_own(&ms[1], b, sizeof b);
        bool two = first_line(&ms[0], "CUSTOM-ASSIGNED 2", 0, NULL, 0) > 0 ||
                   first_line(&ms[1], "CUSTOM-ASSIGNED 2", 0, NULL, 0) > 0;
        if (two && a[0] && b[0] && list_count(a) + list_count(b) == NPART &&
            (list_count(a) == 0 || list_count(b) == 0))
            break;
        if (kn_test_now_ms() > end)
            fail_msg("custom assignment not seen: A [%s] B [%s]", a, b);
        usleep(50000);
    }
    member_stop(&ms[1]);
    member_stop(&ms[0]);
    remove_logs(ms, 2);
}

/* ---- pattern --------------------------------------------------------------------------- */

/* The member's last META line (its subscription()), malloc'd or NULL. */
static void read_member_meta(const member *m, char **out) {
    *out = NULL;
    FILE *f = fopen(m->log, "r");
    if (!f)
        return;
    char line[2048];
    while (fgets(line, sizeof line, f))
        if (strstr(line, " META ")) {
            free(*out);
            *out = strdup(line);
        }
    fclose(f);
}

/* flag: "--pattern" (matched here) or "--regex" (matched by the broker) */
static void pattern(const char *protocol, const char *flag) {
    char prefix[128], t1[256], t2[256], group[64], re[300];
    bool broker = strcmp(flag, "--regex") == 0;
    snprintf(prefix, sizeof prefix, "kn-%s-%s-%d", broker ? "re2j" : "pat", protocol, (int)getpid());
    snprintf(t1, sizeof t1, "%s-one", prefix);
    snprintf(t2, sizeof t2, "%s-two", prefix);
    snprintf(re, sizeof re, "%s-.*", prefix);
    snprintf(group, sizeof group, "g-%s-%s-%d", flag + 2, protocol, (int)getpid());
    create_topic(t1, 2);
    member ms[1];
    member_start(&ms[0], "A", group, flag, re, "--metadata-age-ms", "1000", "--protocol", protocol, NULL);
    wait_owns(ms, 1, (int[]){2});
    create_topic(t2, 2);
    wait_owns(ms, 1, (int[]){4});
    char own[1024];
    member_own(&ms[0], own, sizeof own);
    assert_true(list_has(own, t2, 0) && list_has(own, t2, 1));
    /* and it reads the new topic */
    kn_producer *pr = new_producer();
    int64_t next[NPART] = {0};
    produce(pr, t2, 2, next, 5);
    kn_producer_close(pr, 10000);
    kn_producer_destroy(pr);
    consumed cs;
    consumed_init(&cs);
    int64_t end = kn_test_now_ms() + WAIT_MS;
    for (;;) {
        read_records(ms, 1, t2, &cs, -1, 0, -1);
        if (all_consumed(&cs, next, 2))
            break;
        if (kn_test_now_ms() > end)
            fail_msg("records of %s not consumed", t2);
        usleep(100000);
    }
    consumed_free(&cs);
    if (broker) {
        /* subscription() names what the broker's regex matched */
        char *line = NULL;
        read_member_meta(&ms[0], &line);
        assert_non_null(line);
        assert_non_null(strstr(line, t1));
        assert_non_null(strstr(line, t2));
        free(line);
    }
    member_stop(&ms[0]);
    remove_logs(ms, 1);
}

static void test_pattern(void **state) {
    (void)state;
    pattern("classic", "--pattern");
}

static void test_pattern_kip848(void **state) {
    (void)state;
    kn_test_need_kip848();
    pattern("consumer", "--pattern");
}

static void test_regex_kip848(void **state) {
    (void)state;
    kn_test_need_kip848();
    pattern("consumer", "--regex");
}

static kn_consumer *regex_consumer(const char *protocol, const char *group) {
    char es[512];
    kn_conf *conf = kn_conf_new(KN_CLIENT_CONSUMER);
    kn_test_conf_set(conf, "bootstrap.servers", kn_test_bootstrap());
    kn_test_conf_set(conf, "group.id", group);
    kn_test_conf_set(conf, "group.protocol", protocol);
    kn_consumer *c = kn_consumer_new(conf, es, sizeof es);
    kn_conf_destroy(conf);
    if (!c)
        fail_msg("kn_consumer_new: %s", es);
    return c;
}

/* A regex RE2J rejects: the coordinator answers the heartbeat with
 * INVALID_REGULAR_EXPRESSION and poll reports it (Java: poll throws
 * InvalidRegularExpression). */
static void test_regex_invalid_kip848(void **state) {
    (void)state;
    kn_test_need_kip848();
    char group[64], es[512] = "";
    snprintf(group, sizeof group, "g-re2j-bad-%d", (int)getpid());
    kn_consumer *c = regex_consumer("consumer", group);
    assert_int_equal(kn_consumer_subscribe_regex(c, "kn-bad-(unclosed", NULL, NULL), KN_OK);
    int rc = KN_OK;
    int64_t end = kn_test_now_ms() + WAIT_MS;
    while (rc == KN_OK && kn_test_now_ms() < end) {
        kn_records *recs = NULL;
        rc = kn_consumer_poll(c, 200, &recs, es, sizeof es);
        kn_records_free(recs);
    }
    print_message("poll: %s: %s\n", kn_err_name(rc), es);
    assert_int_equal(rc, KN_ERR_INVALID_REGULAR_EXPRESSION);
    assert_non_null(strstr(es, "Invalid RE2J SubscriptionPattern"));
    kn_consumer_close(c, 5000);
    kn_consumer_destroy(c);
}

/* Java's ClassicKafkaConsumer.subscribe(SubscriptionPattern) throws. */
static void test_regex_classic(void **state) {
    (void)state;
    char group[64];
    snprintf(group, sizeof group, "g-re2j-classic-%d", (int)getpid());
    kn_consumer *c = regex_consumer("classic", group);
    assert_int_equal(kn_consumer_subscribe_regex(c, "kn-.*", NULL, NULL), KN_ERR__UNSUPPORTED);
    assert_int_equal(kn_consumer_subscribe_regex(c, "", NULL, NULL), KN_ERR__INVALID_ARG);
    kn_topic_partition_list *sub = kn_consumer_subscription(c);
    assert_null(sub); /* still not subscribed */
    kn_consumer_close(c, 5000);
    kn_consumer_destroy(c);
}

int main(void) {
    kn_test_bootstrap();
    signal(SIGPIPE, SIG_IGN);
    if (getenv("KN_TEST_FILTER"))
        cmocka_set_test_filter(getenv("KN_TEST_FILTER"));
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_teardown(test_handoff_range, kill_leftovers),
        cmocka_unit_test_teardown(test_handoff_roundrobin, kill_leftovers),
        cmocka_unit_test_teardown(test_handoff_sticky, kill_leftovers),
        cmocka_unit_test_teardown(test_handoff_cooperative, kill_leftovers),
        cmocka_unit_test_teardown(test_handoff_kip848, kill_leftovers),
        cmocka_unit_test_teardown(test_kill, kill_leftovers),
        cmocka_unit_test_teardown(test_static_restart, kill_leftovers),
        cmocka_unit_test_teardown(test_static_restart_kip848, kill_leftovers),
        cmocka_unit_test_teardown(test_poll_timeout, kill_leftovers),
        cmocka_unit_test_teardown(test_commit_epochs_kip848, kill_leftovers),
        cmocka_unit_test_teardown(test_fenced_kip848, kill_leftovers),
        cmocka_unit_test_teardown(test_custom_assignor, kill_leftovers),
        cmocka_unit_test_teardown(test_pattern, kill_leftovers),
        cmocka_unit_test_teardown(test_pattern_kip848, kill_leftovers),
        cmocka_unit_test_teardown(test_regex_kip848, kill_leftovers),
        cmocka_unit_test_teardown(test_regex_invalid_kip848, kill_leftovers),
        cmocka_unit_test_teardown(test_regex_classic, kill_leftovers),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
