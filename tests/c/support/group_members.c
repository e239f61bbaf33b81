/*
 * group_members.c: consumer group members as processes (kn_group_member,
 * built beside the tests) and the checks on their logs, shared by the
 * group integration tests (it_group*.c): start / stop / kill a member,
 * wait until the members own given partition counts, merge their
 * assignment events and fail if a partition is ever owned twice, read
 * the records they consumed (values checked, duplicates counted),
 * produce numbered records, create topics.
 */
#include "group_members.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

extern char **environ;

/* ---- member processes ---------------------------------------------------- */

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

int kill_leftovers(void **state) {
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
void member_start(member *m, const char *name, const char *group, const char *first, ...) {
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
int member_wait(member *m, int timeout_ms) {
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

void member_stop(member *m) {
    if (m->pid > 0)
        kill(m->pid, SIGTERM);
    int st = member_wait(m, 30000);
    /* A clean close exits 0 (also under ASan/UBSan: no leak, no report). */
    if (!WIFEXITED(st) || WEXITSTATUS(st) != 0)
        fail_msg("member %s exited with status %d (see %s)", m->name, st, m->err);
}

void member_kill(member *m) {
    if (m->pid > 0)
        kill(m->pid, SIGKILL);
    member_wait(m, 10000);
}

/* ---- log parsing ----------------------------------------------------------- */

/* Whether "t:p" is in a list "t:p,t:p" or "-". */
bool list_has(const char *list, const char *topic, int p) {
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

int list_count(const char *list) {
    if (strcmp(list, "-") == 0 || !*list)
        return 0;
    int n = 1;
    for (const char *s = list; *s; s++)
        n += *s == ',';
    return n;
}

/* The member's latest OWN list ("" before any event). */
void member_own(const member *m, char *out, size_t n) {
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
void wait_owns(member *ms, int count, const int *want) {
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
void read_events(member *ms, int count, logs *lg) {
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
void check_exclusive(logs *lg, int count, const char *const *topics, int ntopics, int nparts, int killed,
                     long long kill_ts) {
    qsort(lg->ev, (size_t)lg->nev, sizeof(event), ev_cmp);
    char own[MAX_MEMBERS][512] = {{0}};
    for (int i = 0; i < count; i++)
        snprintf(own[i], sizeof own[i], "-");
    for (int k = 0; k < lg->nev; k++) {
        const event *e = &lg->ev[k];
        if (killed >= 0 && e->ts >= kill_ts) {
            snprintf(own[killed], sizeof own[killed], "-");
            killed = -1; /* once: later events of that member count again */
        }
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

kn_producer *new_producer(void) {
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
void produce(kn_producer *pr, const char *topic, int nparts, int64_t *next, int n) {
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

void read_records(member *ms, int count, const char *topic, consumed *cs, int after_member,
                  long long after_ts, int commit_member) {
    for (int p = 0; p < NPART; p++) {
        memset(cs->seen[p], 0, (size_t)cs->cap);
        cs->first_after[p] = -1;
        cs->last_commit[p] = -1;
        cs->last_read[p] = -1;
    }
    cs->dups = 0;
    cs->first_dup[0] = '\0';
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
            if (cs->seen[part][off] && !cs->dups++)
                snprintf(cs->first_dup, sizeof cs->first_dup, "%s %d %lld", name, part, off);
            cs->seen[part][off] = 1;
            if (i == commit_member)
                cs->last_read[part] = off;
            if (i == after_member && ts >= after_ts && cs->first_after[part] < 0)
                cs->first_after[part] = off;
        }
        fclose(f);
    }
}

bool all_consumed(const consumed *cs, const int64_t *next, int nparts) {
    for (int p = 0; p < nparts; p++)
        for (int64_t o = 0; o < next[p]; o++)
            if (!cs->seen[p][o])
                return false;
    return true;
}

void wait_consumed(member *ms, int count, const char *topic, consumed *cs, const int64_t *next,
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

void consumed_init(consumed *cs) {
    cs->cap = 100000;
    for (int p = 0; p < NPART; p++)
        cs->seen[p] = calloc((size_t)cs->cap, 1);
}

void consumed_free(consumed *cs) {
    for (int p = 0; p < NPART; p++)
        free(cs->seen[p]);
}

/* ---- topics ------------------------------------------------------------------ */

void create_topic_rf(const char *topic, int partitions, int replication) {
    kn_conf *conf = kn_conf_new(KN_CLIENT_ADMIN);
    char es[512];
    assert_int_equal(kn_conf_set(conf, "bootstrap.servers", kn_test_bootstrap(), es, sizeof es), KN_OK);
    kn_admin *ad = kn_admin_new(conf, es, sizeof es);
    kn_conf_destroy(conf);
    if (!ad)
        fail_msg("kn_admin_new: %s", es);
    kn_new_topic *nt = kn_new_topic_new(topic, partitions, (int16_t)replication);
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

void create_topic(const char *topic, int partitions) { create_topic_rf(topic, partitions, 1); }

long long real_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

void scenario_begin(scenario *s, const char *topic_tag, const char *group_tag, int replication) {
    memset(s, 0, sizeof *s);
    snprintf(s->topic, sizeof s->topic, "%s", kn_test_topic(topic_tag));
    snprintf(s->group, sizeof s->group, "g-%s-%d", group_tag, (int)getpid());
    create_topic_rf(s->topic, NPART, replication);
    s->pr = new_producer();
    consumed_init(&s->cs);
}

void scenario_end(scenario *s, member *ms, int count) {
    consumed_free(&s->cs);
    kn_producer_close(s->pr, 10000);
    kn_producer_destroy(s->pr);
    remove_logs(ms, count);
}

void committed_offsets(const char *group, const char *topic, int64_t *out) {
    kn_conf *conf = kn_conf_new(KN_CLIENT_CONSUMER);
    kn_test_conf_set(conf, "bootstrap.servers", kn_test_bootstrap());
    kn_test_conf_set(conf, "group.id", group);
    char es[512];
    kn_consumer *c = kn_consumer_new(conf, es, sizeof es);
    kn_conf_destroy(conf);
    if (!c)
        fail_msg("kn_consumer_new: %s", es);
    kn_topic_partition_list *l = kn_topic_partition_list_new();
    for (int p = 0; p < NPART; p++)
        kn_topic_partition_list_add(l, topic, p);
    assert_int_equal(kn_consumer_committed(c, l, 30000), KN_OK);
    for (int p = 0; p < NPART; p++)
        out[p] = kn_topic_partition_list_offset(l, (size_t)kn_topic_partition_list_find(l, topic, p));
    kn_topic_partition_list_destroy(l);
    kn_consumer_close(c, -1);
    kn_consumer_destroy(c);
}

void assert_no_errors(const member *ms, int count) {
    for (int i = 0; i < count; i++) {
        FILE *f = fopen(ms[i].log, "r");
        assert_non_null(f);
        char line[4096];
        while (fgets(line, sizeof line, f))
            if (strstr(line, " ERROR "))
                fail_msg("member %s: %s", ms[i].name, line);
        fclose(f);
    }
}

void check_read_once_committed(member *ms, int count, const char *group, const char *topic, consumed *cs,
                               const int64_t *next) {
    assert_no_errors(ms, count);
    read_records(ms, count, topic, cs, -1, 0, -1);
    if (cs->dups)
        fail_msg("%lld records were read twice (first: %s)", (long long)cs->dups, cs->first_dup);
    int64_t committed[NPART];
    committed_offsets(group, topic, committed);
    for (int p = 0; p < NPART; p++)
        if (committed[p] != next[p])
            fail_msg("%s:%d committed %lld, end offset %lld", topic, p, (long long)committed[p],
                     (long long)next[p]);
}

void remove_logs(member *ms, int count) {
    for (int i = 0; i < count; i++) {
        unlink(ms[i].log);
        unlink(ms[i].err);
    }
}
