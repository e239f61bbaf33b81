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
 *    timeout gets its partitions back, the other member sees no change;
 *  - a member that stops polling for longer than max.poll.interval.ms
 *    leaves (the other takes everything), reports its partitions lost on
 *    its next poll and rejoins, with a valid group identity;
 *  - a custom assignor (kn_consumer_add_assignor) decides the split;
 *  - a pattern subscription picks up a matching topic created later.
 *
 * Every wait is bounded; a member still running at the end is killed.
 */
#include "kn_test.h"

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

extern char **environ;

#define NPART       6
#define MAX_EVENTS  4096
#define MAX_MEMBERS 4
#define WAIT_MS     60000

/* ---- member processes ---------------------------------------------------- */

typedef struct member {
    char name[16];
    char log[256];
    char err[300]; /* stderr: library warnings, sanitizer reports */
    pid_t pid;
} member;

static char member_bin[4096];

/* Every member still running, so a failed test (cmocka leaves the test
 * function at the failed assertion) does not leave processes behind. */
static pid_t live[16];

static void live_add(pid_t pid) {
    for (size_t i = 0; i < sizeof live / sizeof live[0]; i++)
        if (!live[i]) {
            live[i] = pid;
            return;
        }
}

static void live_remove(pid_t pid) {
    for (size_t i = 0; i < sizeof live / sizeof live[0]; i++)
        if (live[i] == pid)
            live[i] = 0;
}

static int kill_leftovers(void **state) {
    (void)state;
    for (size_t i = 0; i < sizeof live / sizeof live[0]; i++)
        if (live[i]) {
            kill(live[i], SIGKILL);
            waitpid(live[i], NULL, 0);
            live[i] = 0;
        }
    return 0;
}

static const char *member_path(void) {
    if (!member_bin[0]) {
        ssize_t n = readlink("/proc/self/exe", member_bin, sizeof member_bin - 1);
        assert_true(n > 0);
        member_bin[n] = '\0';
        char *slash = strrchr(member_bin, '/');
        assert_non_null(slash);
        snprintf(slash + 1, sizeof member_bin - (size_t)(slash + 1 - member_bin), "kn_group_member");
        if (access(member_bin, X_OK) != 0)
            fail_msg("kn_group_member not found beside the test: %s", member_bin);
    }
    return member_bin;
}

/* Starts a member; extra: NULL-terminated further arguments. */
static void member_start(member *m, const char *name, const char *group, const char *first, ...) {
    snprintf(m->name, sizeof m->name, "%s", name);
    snprintf(m->log, sizeof m->log, "/tmp/kn-it-group-%d-%s-%s.log", (int)getpid(), group, name);
    const char *argv[40];
    int argc = 0;
    argv[argc++] = member_path();
    argv[argc++] = "--bootstrap";
    argv[argc++] = kn_test_bootstrap();
    argv[argc++] = "--group";
    argv[argc++] = group;
    argv[argc++] = "--id";
    argv[argc++] = name;
    va_list ap;
    va_start(ap, first);
    for (const char *a = first; a && argc < 38; a = va_arg(ap, const char *))
        argv[argc++] = a;
    va_end(ap);
    argv[argc] = NULL;
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_addopen(&fa, 1, m->log, O_WRONLY | O_CREAT | O_APPEND, 0644);
    snprintf(m->err, sizeof m->err, "%s.err", m->log);
    posix_spawn_file_actions_addopen(&fa, 2, m->err, O_WRONLY | O_CREAT | O_APPEND, 0644);
    int rc = posix_spawn(&m->pid, argv[0], &fa, NULL, (char *const *)argv, environ);
    posix_spawn_file_actions_destroy(&fa);
    if (rc != 0)
        fail_msg("posix_spawn %s: %s", argv[0], strerror(rc));
    live_add(m->pid);
}

/* Waits (bounded) for the member to exit; returns its status. */
static int member_wait(member *m, int timeout_ms) {
    int64_t end = kn_test_now_ms() + timeout_ms;
    int status = 0;
    while (m->pid > 0) {
        pid_t r = waitpid(m->pid, &status, WNOHANG);
        if (r == m->pid) {
            live_remove(m->pid);
            m->pid = 0;
            return status;
        }
        if (kn_test_now_ms() > end) {
            kill(m->pid, SIGKILL);
            waitpid(m->pid, &status, 0);
            live_remove(m->pid);
            m->pid = 0;
            fail_msg("member %s did not exit in %d ms", m->name, timeout_ms);
        }
        usleep(20000);
    }
    return status;
}

static void member_stop(member *m) {
    if (m->pid > 0)
        kill(m->pid, SIGTERM);
    int st = member_wait(m, 30000);
    /* A clean close exits 0 (also under ASan/UBSan: no leak, no report). */
    if (!WIFEXITED(st) || WEXITSTATUS(st) != 0)
        fail_msg("member %s exited with status %d (see %s)", m->name, st, m->err);
}

static void member_kill(member *m) {
    if (m->pid > 0)
        kill(m->pid, SIGKILL);
    member_wait(m, 10000);
}

/* ---- log parsing ----------------------------------------------------------- */

typedef enum { EV_ASSIGNED, EV_REVOKED, EV_LOST } ev_kind;

typedef struct event {
    long long ts;
    int member;
    int seq; /* order within the member's log */
    ev_kind kind;
    char changed[512];
    char own[512];
} event;

typedef struct logs {
    event ev[MAX_EVENTS];
    int nev;
    /* per topic-index/partition: consumed offsets bitmap and values ok */
    int nrec;
    int bad_values;
    char bad[256];
} logs;

/* Whether "t:p" is in a list "t:p,t:p" or "-". */
static bool list_has(const char *list, const char *topic, int p) {
    char want[300];
    snprintf(want, sizeof want, "%s:%d", topic, p);
    size_t wl = strlen(want);
    for (const char *s = list; *s;) {
        const char *e = strchr(s, ',');
        size_t len = e ? (size_t)(e - s) : strlen(s);
        if (len == wl && memcmp(s, want, wl) == 0)
            return true;
        s = e ? e + 1 : s + len;
    }
    return false;
}

static int list_count(const char *list) {
    if (strcmp(list, "-") == 0 || !*list)
        return 0;
    int n = 1;
    for (const char *s = list; *s; s++)
        n += *s == ',';
    return n;
}

/* The member's latest OWN list ("" before any event). */
static void member_own(const member *m, char *out, size_t n) {
    out[0] = '\0';
    FILE *f = fopen(m->log, "r");
    if (!f)
        return;
    char line[2048];
    while (fgets(line, sizeof line, f)) {
        char *own = strstr(line, " OWN ");
        if (!own || (!strstr(line, " ASSIGNED ") && !strstr(line, " REVOKED ") && !strstr(line, " LOST ")))
            continue;
        snprintf(out, n, "%s", own + 5);
        out[strcspn(out, "\n")] = '\0';
    }
    fclose(f);
}

/* Waits until every member i owns want[i] partitions (bounded). */
static void wait_owns(member *ms, int count, const int *want) {
    int64_t end = kn_test_now_ms() + WAIT_MS;
    char own[1024];
    for (;;) {
        bool ok = true;
        for (int i = 0; i < count && ok; i++) {
            member_own(&ms[i], own, sizeof own);
            ok = own[0] && list_count(own) == want[i];
        }
        if (ok)
            return;
        if (kn_test_now_ms() > end) {
            for (int i = 0; i < count; i++) {
                member_own(&ms[i], own, sizeof own);
                print_message("member %s owns [%s], want %d\n", ms[i].name, own, want[i]);
            }
            fail_msg("assignment did not settle within %d ms", WAIT_MS);
        }
        usleep(50000);
    }
}

/* Reads every member's events into lg (in per-member order). */
static void read_events(member *ms, int count, logs *lg) {
    lg->nev = 0;
    for (int i = 0; i < count; i++) {
        FILE *f = fopen(ms[i].log, "r");
        assert_non_null(f);
        char line[4096];
        int seq = 0;
        while (fgets(line, sizeof line, f) && lg->nev < MAX_EVENTS) {
            long long ts;
            char name[32], kind[32], changed[512], own[512];
            if (sscanf(line, "%lld %31s %31s %511s OWN %511s", &ts, name, kind, changed, own) != 5)
                continue;
            event *e = &lg->ev[lg->nev];
            if (strcmp(kind, "ASSIGNED") == 0)
                e->kind = EV_ASSIGNED;
            else if (strcmp(kind, "REVOKED") == 0)
                e->kind = EV_REVOKED;
            else if (strcmp(kind, "LOST") == 0)
                e->kind = EV_LOST;
            else
                continue;
            e->ts = ts;
            e->member = i;
            e->seq = seq++;
            snprintf(e->changed, sizeof e->changed, "%s", changed);
            snprintf(e->own, sizeof e->own, "%s", own);
            lg->nev++;
        }
        fclose(f);
    }
}

static int ev_cmp(const void *a, const void *b) {
    const event *x = a, *y = b;
    if (x->ts != y->ts)
        return x->ts < y->ts ? -1 : 1;
    /* Same millisecond: a release is ordered before an acquisition
     * (the listener line of a release is written before the partitions
     * are handed back, so its true release time is even later). */
    int rx = x->kind != EV_ASSIGNED, ry = y->kind != EV_ASSIGNED;
    if (rx != ry)
        return rx ? -1 : 1;
    if (x->member != y->member)
        return x->member - y->member;
    return x->seq - y->seq;
}

/* Replays the merged events; fails if a partition of topic is ever owned
 * by two members. killed: a member whose ownership ends at kill_ts
 * (SIGKILL leaves no release line). */
static void check_exclusive(logs *lg, int count, const char *const *topics, int ntopics, int nparts,
                            int killed, long long kill_ts) {
    qsort(lg->ev, (size_t)lg->nev, sizeof(event), ev_cmp);
    char own[MAX_MEMBERS][512] = {{0}};
    for (int i = 0; i < count; i++)
        snprintf(own[i], sizeof own[i], "-");
    for (int k = 0; k < lg->nev; k++) {
        const event *e = &lg->ev[k];
        if (killed >= 0 && e->ts >= kill_ts)
            snprintf(own[killed], sizeof own[killed], "-");
        snprintf(own[e->member], sizeof own[e->member], "%s", e->own);
        for (int t = 0; t < ntopics; t++)
            for (int p = 0; p < nparts; p++) {
                int owners = 0;
                for (int i = 0; i < count; i++)
                    owners += list_has(own[i], topics[t], p);
                if (owners > 1)
                    fail_msg("%s:%d owned by %d members at %lld", topics[t], p, owners, e->ts);
            }
    }
}

/* ---- records ---------------------------------------------------------------- */

static kn_producer *new_producer(void) {
    kn_conf *conf = kn_conf_new(KN_CLIENT_PRODUCER);
    char es[512];
    assert_int_equal(kn_conf_set(conf, "bootstrap.servers", kn_test_bootstrap(), es, sizeof es), KN_OK);
    assert_int_equal(kn_conf_set(conf, "linger.ms", "1", es, sizeof es), KN_OK);
    kn_producer *p = kn_producer_new(conf, NULL, NULL, es, sizeof es);
    if (!p)
        fail_msg("kn_producer_new: %s", es);
    kn_conf_destroy(conf);
    return p;
}

/* Appends n records to each of nparts partitions of topic; the value of
 * offset o in partition p is "p<p>-<o>" (topics start empty). */
static void produce(kn_producer *pr, const char *topic, int nparts, int64_t *next, int n) {
    char es[512], val[64];
    for (int i = 0; i < n; i++)
        for (int p = 0; p < nparts; p++) {
            snprintf(val, sizeof val, "p%d-%lld", p, (long long)next[p]++);
            kn_record_out r = KN_RECORD_OUT_INIT;
            r.topic = topic;
            r.partition = p;
            r.value = val;
            r.value_len = strlen(val);
            if (kn_producer_send(pr, &r, es, sizeof es) != KN_OK)
                fail_msg("send: %s", es);
        }
    assert_int_equal(kn_producer_flush(pr, 30000), KN_OK);
}

/* Consumed offsets per partition across all members' logs. */
typedef struct consumed {
    unsigned char *seen[NPART];
    int64_t cap;
    int64_t first_after[NPART]; /* first offset member `after_member` read after `after_ts` */
    int64_t last_commit[NPART]; /* last COMMIT offset of `commit_member` */
    int64_t last_read[NPART];   /* last offset `commit_member` read */
} consumed;

static void read_records(member *ms, int count, const char *topic, consumed *cs, int after_member,
                         long long after_ts, int commit_member) {
    for (int p = 0; p < NPART; p++) {
        memset(cs->seen[p], 0, (size_t)cs->cap);
        cs->first_after[p] = -1;
        cs->last_commit[p] = -1;
        cs->last_read[p] = -1;
    }
    for (int i = 0; i < count; i++) {
        FILE *f = fopen(ms[i].log, "r");
        assert_non_null(f);
        char line[4096];
        while (fgets(line, sizeof line, f)) {
            long long ts, off;
            int part;
            char name[32], kind[16], t[256], val[128];
            int n = sscanf(line, "%lld %31s %15s %255s %d %lld %127s", &ts, name, kind, t, &part, &off, val);
            if (n < 6 || strcmp(t, topic) != 0 || part < 0 || part >= NPART || off < 0 || off >= cs->cap)
                continue;
            if (strcmp(kind, "COMMIT") == 0) {
                if (i == commit_member)
                    cs->last_commit[part] = off;
                continue;
            }
            if (strcmp(kind, "REC") != 0 || n != 7)
                continue;
            char want[64];
            snprintf(want, sizeof want, "p%d-%lld", part, off);
            if (strcmp(val, want) != 0)
                fail_msg("%s:%d offset %lld has value %s, produced %s", topic, part, off, val, want);
            cs->seen[part][off] = 1;
            if (i == commit_member)
                cs->last_read[part] = off;
            if (i == after_member && ts >= after_ts && cs->first_after[part] < 0)
                cs->first_after[part] = off;
        }
        fclose(f);
    }
}

static bool all_consumed(const consumed *cs, const int64_t *next, int nparts) {
    for (int p = 0; p < nparts; p++)
        for (int64_t o = 0; o < next[p]; o++)
            if (!cs->seen[p][o])
                return false;
    return true;
}

static void wait_consumed(member *ms, int count, const char *topic, consumed *cs, const int64_t *next,
                          int after_member, long long after_ts, int commit_member) {
    int64_t end = kn_test_now_ms() + WAIT_MS;
    for (;;) {
        read_records(ms, count, topic, cs, after_member, after_ts, commit_member);
        if (all_consumed(cs, next, NPART))
            return;
        if (kn_test_now_ms() > end) {
            for (int p = 0; p < NPART; p++)
                for (int64_t o = 0; o < next[p]; o++)
                    if (!cs->seen[p][o])
                        fail_msg("%s:%d offset %lld (of %lld produced) was never consumed", topic, p,
                                 (long long)o, (long long)next[p]);
        }
        usleep(100000);
    }
}

static void consumed_init(consumed *cs) {
    cs->cap = 100000;
    for (int p = 0; p < NPART; p++)
        cs->seen[p] = calloc((size_t)cs->cap, 1);
}

static void consumed_free(consumed *cs) {
    for (int p = 0; p < NPART; p++)
        free(cs->seen[p]);
}

/* ---- topics ------------------------------------------------------------------ */

static void create_topic(const char *topic, int partitions) {
    kn_conf *conf = kn_conf_new(KN_CLIENT_ADMIN);
    char es[512];
    assert_int_equal(kn_conf_set(conf, "bootstrap.servers", kn_test_bootstrap(), es, sizeof es), KN_OK);
    kn_admin *ad = kn_admin_new(conf, es, sizeof es);
    kn_conf_destroy(conf);
    if (!ad)
        fail_msg("kn_admin_new: %s", es);
    kn_new_topic *nt = kn_new_topic_new(topic, partitions, 1);
    kn_topic_results *res = NULL;
    if (kn_admin_create_topics(ad, &nt, 1, 0, 30000, &res, es, sizeof es) != KN_OK)
        fail_msg("create_topics: %s", es);
    assert_int_equal(kn_topic_results_error(res, 0), KN_OK);
    kn_topic_results_destroy(res);
    kn_new_topic_destroy(nt);
    if (kn_admin_wait_for_topics(ad, &topic, 1, 30000, es, sizeof es) != KN_OK)
        fail_msg("wait_for_topics: %s", es);
    kn_admin_destroy(ad);
}

static long long real_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void remove_logs(member *ms, int count) {
    for (int i = 0; i < count; i++) {
        unlink(ms[i].log);
        unlink(ms[i].err);
    }
}

/* ---- the handoff ---------------------------------------------------------------- */

static void handoff(const char *strategy, const char *protocol) {
    char topic[256], group[64];
    snprintf(topic, sizeof topic, "%s", kn_test_topic("group"));
    snprintf(group, sizeof group, "g-%s-%d", strategy ? strategy : protocol, (int)getpid());
    create_topic(topic, NPART);
    kn_producer *pr = new_producer();
    int64_t next[NPART] = {0};
    consumed cs;
    consumed_init(&cs);
    member ms[2];
    const char *sopt = strategy ? "--strategy" : "--protocol";
    const char *sval = strategy ? strategy : protocol;
    /* KIP-848 takes its session and heartbeat from the broker. */
    const char *sess = strategy ? "--session-ms" : NULL;

    member_start(&ms[0], "A", group, "--topic", topic, sopt, sval, sess, "6000", NULL);
    wait_owns(ms, 1, (int[]){6});
    produce(pr, topic, NPART, next, 20);
    member_start(&ms[1], "B", group, "--topic", topic, sopt, sval, sess, "6000", NULL);
    produce(pr, topic, NPART, next, 20);
    wait_owns(ms, 2, (int[]){3, 3});
    produce(pr, topic, NPART, next, 20);
    wait_consumed(ms, 2, topic, &cs, next, -1, 0, -1);
    /* what A keeps through the handoff */
    char kept[1024];
    member_own(&ms[0], kept, sizeof kept);
    member_stop(&ms[0]);
    produce(pr, topic, NPART, next, 20);
    wait_owns(&ms[1], 1, (int[]){6});
    produce(pr, topic, NPART, next, 20);
    wait_consumed(ms, 2, topic, &cs, next, -1, 0, -1);
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
                if (list_has(e->changed, topic, p) && list_has(kept, topic, p))
                    fail_msg("cooperative: A revoked %s:%d, which it kept", topic, p);
        }
    }
    const char *topics[] = {topic};
    check_exclusive(lg, 2, topics, 1, NPART, -1, 0);
    print_message("handoff %s: %d assignment events, %lld records per partition, all consumed\n", sval,
                  lg->nev, (long long)next[0]);
    free(lg);
    consumed_free(&cs);
    kn_producer_close(pr, 10000);
    remove_logs(ms, 2);
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
    handoff(NULL, "consumer");
}

/* ---- SIGKILL ------------------------------------------------------------------------ */

static void test_kill(void **state) {
    (void)state;
    char topic[256], group[64];
    snprintf(topic, sizeof topic, "%s", kn_test_topic("group-kill"));
    snprintf(group, sizeof group, "g-kill-%d", (int)getpid());
    create_topic(topic, NPART);
    kn_producer *pr = new_producer();
    int64_t next[NPART] = {0};
    consumed cs;
    consumed_init(&cs);
    member ms[2];
    member_start(&ms[0], "A", group, "--topic", topic, "--strategy", "range", "--session-ms", "6000", NULL);
    member_start(&ms[1], "B", group, "--topic", topic, "--strategy", "range", "--session-ms", "6000", NULL);
    wait_owns(ms, 2, (int[]){3, 3});
    produce(pr, topic, NPART, next, 30);
    wait_consumed(ms, 2, topic, &cs, next, -1, 0, 1);
    char b_owned[1024];
    member_own(&ms[1], b_owned, sizeof b_owned);
    /* B commits after each poll: let its last commit land, so the kill
     * below is a crash after a commit, not in the middle of one. */
    int64_t end = kn_test_now_ms() + WAIT_MS;
    for (bool settled = false; !settled;) {
        read_records(ms, 2, topic, &cs, -1, 0, 1);
        settled = true;
        for (int p = 0; p < NPART; p++)
            if (list_has(b_owned, topic, p) && cs.last_commit[p] != next[p])
                settled = false;
        if (!settled && kn_test_now_ms() > end)
            fail_msg("B's commits did not reach the end of its partitions");
        if (!settled)
            usleep(50000);
    }
    long long kill_ts = real_ms();
    int64_t killed_at = kn_test_now_ms();
    member_kill(&ms[1]);
    produce(pr, topic, NPART, next, 30);
    wait_owns(ms, 1, (int[]){6});
    int64_t moved_ms = kn_test_now_ms() - killed_at;
    produce(pr, topic, NPART, next, 10);
    wait_consumed(ms, 2, topic, &cs, next, 0, kill_ts, 1);
    /* A resumed each of B's partitions at B's last commit (B commits
     * after every poll, so that is B's last read + 1, or a commit the
     * kill cut off before it was logged). */
    for (int p = 0; p < NPART; p++) {
        if (!list_has(b_owned, topic, p))
            continue;
        int64_t first = cs.first_after[p], committed = cs.last_commit[p];
        print_message("%s:%d: B committed %lld, read up to %lld; A resumed at %lld\n", topic, p,
                      (long long)committed, (long long)cs.last_read[p], (long long)first);
        assert_true(committed >= 0);
        assert_true(first >= committed);
        assert_true(first <= cs.last_read[p] + 1);
    }
    member_stop(&ms[0]);
    logs *lg = calloc(1, sizeof *lg);
    read_events(ms, 2, lg);
    const char *topics[] = {topic};
    check_exclusive(lg, 2, topics, 1, NPART, 1, kill_ts);
    print_message("SIGKILL: B's partitions moved to A %lld ms after the kill (session.timeout.ms 6000)\n",
                  (long long)moved_ms);
    free(lg);
    consumed_free(&cs);
    kn_producer_close(pr, 10000);
    remove_logs(ms, 2);
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

static void test_static_restart(void **state) {
    (void)state;
    char topic[256], group[64];
    snprintf(topic, sizeof topic, "%s", kn_test_topic("group-static"));
    snprintf(group, sizeof group, "g-static-%d", (int)getpid());
    create_topic(topic, NPART);
    member ms[3];
    member_start(&ms[0], "A", group, "--topic", topic, "--strategy", "range", "--instance", "ia",
                 "--session-ms", "15000", "--quiet-records", NULL);
    member_start(&ms[1], "B", group, "--topic", topic, "--strategy", "range", "--instance", "ib",
                 "--session-ms", "15000", "--quiet-records", NULL);
    wait_owns(ms, 2, (int[]){3, 3});
    char a_before[1024];
    member_own(&ms[0], a_before, sizeof a_before);
    int b_events = count_events(&ms[1]);
    member_stop(&ms[0]); /* static: no LeaveGroup */
    member_start(&ms[2], "A2", group, "--topic", topic, "--strategy", "range", "--instance", "ia",
                 "--session-ms", "15000", "--quiet-records", NULL);
    wait_owns(&ms[2], 1, (int[]){3});
    char a_after[1024];
    member_own(&ms[2], a_after, sizeof a_after);
    assert_string_equal(a_before, a_after);
    /* B stays untouched for a few heartbeats (heartbeat.interval.ms is
     * 2500 here): a rebalance would show as REVOKED/ASSIGNED lines. */
    usleep(6000 * 1000);
    assert_int_equal(count_events(&ms[1]), b_events);
    member_stop(&ms[2]);
    member_stop(&ms[1]);
    remove_logs(ms, 3);
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

static void pattern(const char *protocol) {
    char prefix[128], t1[256], t2[256], group[64], re[300];
    snprintf(prefix, sizeof prefix, "kn-pat-%s-%d", protocol, (int)getpid());
    snprintf(t1, sizeof t1, "%s-one", prefix);
    snprintf(t2, sizeof t2, "%s-two", prefix);
    snprintf(re, sizeof re, "%s-.*", prefix);
    snprintf(group, sizeof group, "g-pattern-%s-%d", protocol, (int)getpid());
    create_topic(t1, 2);
    member ms[1];
    member_start(&ms[0], "A", group, "--pattern", re, "--metadata-age-ms", "1000", "--protocol", protocol,
                 NULL);
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
    member_stop(&ms[0]);
    remove_logs(ms, 1);
}

static void test_pattern(void **state) {
    (void)state;
    pattern("classic");
}

static void test_pattern_kip848(void **state) {
    (void)state;
    pattern("consumer");
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
        cmocka_unit_test_teardown(test_poll_timeout, kill_leftovers),
        cmocka_unit_test_teardown(test_custom_assignor, kill_leftovers),
        cmocka_unit_test_teardown(test_pattern, kill_leftovers),
        cmocka_unit_test_teardown(test_pattern_kip848, kill_leftovers),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
