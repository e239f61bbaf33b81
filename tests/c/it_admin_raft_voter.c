/*
 * it_admin_raft_voter.c: a KRaft voter really added and removed
 * (KIP-853) by our admin. The shared test cluster has a static quorum
 * (kraft.version 0), where voters cannot change, so this test starts its
 * own one-node cluster with a dynamic quorum
 * (KN_BROKER_DYNAMIC_QUORUM=1 tools/kafka/broker start, in
 * "$KN_BROKER_DIR-voters") and one more controller-only node
 * (tools/kafka/broker add-controller: formatted
 * --no-initial-controllers, an observer), and stops both at the end.
 * The new controller is seen as an observer, added with add_raft_voter
 * (its id, directory id and CONTROLLER endpoint), seen as a voter,
 * removed with remove_raft_voter and seen as an observer again; each
 * quorum (leader, voters, observers) is compared with the Java Admin
 * client's describeMetadataQuorum (tools/java/admin-oracle quorum).
 */
#include "kn_test.h"
#include "oracle_lines.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "kafka_native.h"
#include "kafka_native_admin.h"

#define TIMEOUT_MS 30000

static char dir[512];
static char bootstrap[256];
static int32_t ctl_id = -1;
static char ctl_dir_id[256], ctl_host[256];
static int ctl_port;

static int cmp_i32(const void *a, const void *b) {
    int32_t x = *(const int32_t *)a, y = *(const int32_t *)b;
    return (x > y) - (x < y);
}

/* "quorum leader=L voters=a,b observers=c": the oracle's line. */
static void quorum_lines(kn_admin *a, const char *const *args, size_t n, lines *out) {
    (void)args;
    (void)n;
    char es[512], ids[2][256];
    kn_quorum_info *q = NULL;
    assert_int_equal(kn_admin_describe_metadata_quorum(a, TIMEOUT_MS, &q, es, sizeof es), KN_OK);
    for (int obs = 0; obs < 2; obs++) {
        int32_t v[16];
        size_t c = kn_quorum_info_replica_count(q, obs);
        assert_true(c <= 16);
        for (size_t k = 0; k < c; k++)
            v[k] = kn_quorum_info_replica_id(q, obs, k);
        qsort(v, c, sizeof v[0], cmp_i32);
        ids[obs][0] = '\0';
        for (size_t k = 0; k < c; k++) {
            size_t len = strlen(ids[obs]);
            snprintf(ids[obs] + len, sizeof ids[obs] - len, "%s%d", k ? "," : "", (int)v[k]);
        }
    }
    add_line(out, "quorum leader=%d voters=%s observers=%s", (int)kn_quorum_info_leader_id(q), ids[0], ids[1]);
    kn_quorum_info_destroy(q);
}

/* Whether the comma-separated ids after key in line include id. */
static bool lists(const char *line, const char *key, int32_t id) {
    const char *p = strstr(line, key);
    if (!p)
        return false;
    p += strlen(key);
    while (*p && *p != ' ') {
        if (atoi(p) == id)
            return true;
        p += strcspn(p, ", ");
        if (*p == ',')
            p++;
    }
    return false;
}

/* Polls our describe until the voters are exactly want and the extra
 * controller is (or is not) an observer (bounded). The observers are
 * not pinned further: the broker side of node 1 is one or not as the
 * broker version lists it, and Java sees the same. */
static void wait_quorum(kn_admin *a, const char *voters, bool observer) {
    int64_t until = kn_test_now_ms() + 60000;
    for (;;) {
        lines l = {0};
        quorum_lines(a, NULL, 0, &l);
        bool ok = has_line(&l, voters) && lists(l.v[0], " observers=", ctl_id) == observer;
        if (!ok && kn_test_now_ms() > until)
            fail_msg("the quorum never showed \"%s\" (observer %d): %s", voters, observer, l.v[0]);
        free_lines(&l);
        if (ok)
            return;
        usleep(300 * 1000);
    }
}

static int setup(void **state) {
    (void)state;
    const char *base = getenv("KN_BROKER_DIR");
    if (base && *base)
        snprintf(dir, sizeof dir, "%s-voters", base);
    else
        snprintf(dir, sizeof dir, "/tmp/kafka-native-voters-%d", (int)getpid());
    char broker[600]; /* kn_test_source_path's buffer is shared */
    snprintf(broker, sizeof broker, "%s", kn_test_source_path("tools/kafka/broker"));
    kn_test_run("KN_BROKER_DYNAMIC_QUORUM=1 %s start --dir %s >&2", broker, dir);
    char path[600], cmd[1200], line[256];
    snprintf(path, sizeof path, "%s/bootstrap", dir);
    FILE *f = fopen(path, "r");
    assert_non_null(f);
    assert_non_null(fgets(bootstrap, sizeof bootstrap, f));
    fclose(f);
    bootstrap[strcspn(bootstrap, "\n")] = '\0';
    /* The oracle helpers (and Java) talk to this cluster. */
    setenv("KAFKA_BOOTSTRAP", bootstrap, 1);
    snprintf(cmd, sizeof cmd, "%s add-controller --dir %s", broker, dir);
    FILE *p = popen(cmd, "r");
    assert_non_null(p);
    while (fgets(line, sizeof line, p)) {
        line[strcspn(line, "\n")] = '\0';
        if (!strncmp(line, "KN_CONTROLLER_ID=", 17))
            ctl_id = atoi(line + 17);
        else if (!strncmp(line, "KN_CONTROLLER_DIRECTORY_ID=", 27))
            snprintf(ctl_dir_id, sizeof ctl_dir_id, "%s", line + 27);
        else if (!strncmp(line, "KN_CONTROLLER_HOST=", 19))
            snprintf(ctl_host, sizeof ctl_host, "%s", line + 19);
        else if (!strncmp(line, "KN_CONTROLLER_PORT=", 19))
            ctl_port = atoi(line + 19);
    }
    if (pclose(p) != 0 || ctl_id < 0 || !ctl_dir_id[0] || !ctl_port) {
        /* No teardown after a failed setup: stop the cluster here. */
        kn_test_run("%s stop --dir %s >&2", broker, dir);
        fail_msg("%s failed", cmd);
    }
    return 0;
}

static int teardown(void **state) {
    (void)state;
    kn_test_run("%s stop --dir %s >&2", kn_test_source_path("tools/kafka/broker"), dir);
    return 0;
}

static void test_voter_added_and_removed(void **state) {
    (void)state;
    char es[512], want[256];
    kn_conf *conf = kn_conf_new(KN_CLIENT_ADMIN);
    kn_test_conf_set(conf, "bootstrap.servers", bootstrap);
    kn_admin *a = kn_admin_new(conf, es, sizeof es);
    kn_conf_destroy(conf);
    assert_non_null(a);

    /* Formatted without initial controllers: an observer first. */
    wait_quorum(a, " voters=1 ", true);
    lines ours = {0};
    oracle_same_as_java(a, "quorum", NULL, 0, quorum_lines, &ours);
    free_lines(&ours);

    /* The leader takes a voter only once it has caught up: until then it
     * answers REQUEST_TIMED_OUT, which a caller retries (as
     * kafka-metadata-quorum add-controller's users do). */
    kn_raft_voter_endpoint ep = {"CONTROLLER", ctl_host, ctl_port};
    int64_t until = kn_test_now_ms() + 60000;
    int err;
    while ((err = kn_admin_add_raft_voter(a, ctl_id, ctl_dir_id, &ep, 1, NULL, TIMEOUT_MS, es, sizeof es)) !=
           KN_OK) {
        print_message("add_raft_voter: %s (%s)\n", kn_err_name(err), es);
        if (err != KN_ERR_REQUEST_TIMED_OUT || kn_test_now_ms() > until)
            fail_msg("add_raft_voter %d: %s: %s", (int)ctl_id, kn_err_name(err), es);
        usleep(500 * 1000);
    }
    snprintf(want, sizeof want, " voters=1,%d ", (int)ctl_id);
    wait_quorum(a, want, false);
    oracle_same_as_java(a, "quorum", NULL, 0, quorum_lines, &ours);
    assert_true(has_line(&ours, want));
    free_lines(&ours);

    /* Added twice: the controller says so, as it says to Java. */
    assert_int_equal(kn_admin_add_raft_voter(a, ctl_id, ctl_dir_id, &ep, 1, NULL, TIMEOUT_MS, es, sizeof es),
                     KN_ERR_DUPLICATE_VOTER);

    assert_int_equal(kn_admin_remove_raft_voter(a, ctl_id, ctl_dir_id, NULL, TIMEOUT_MS, es, sizeof es), KN_OK);
    /* Removed, it keeps fetching: an observer again. */
    wait_quorum(a, " voters=1 ", true);
    oracle_same_as_java(a, "quorum", NULL, 0, quorum_lines, &ours);
    assert_true(has_line(&ours, " voters=1 "));
    free_lines(&ours);
    assert_int_equal(kn_admin_remove_raft_voter(a, ctl_id, ctl_dir_id, NULL, TIMEOUT_MS, es, sizeof es),
                     KN_ERR_VOTER_NOT_FOUND);
    kn_admin_destroy(a);
}

int main(void) {
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_voter_added_and_removed)};
    return cmocka_run_group_tests(tests, setup, teardown);
}
