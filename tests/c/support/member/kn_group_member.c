/*
 * kn_group_member.c: one consumer group member as a process, for the
 * group integration tests (it_group.c) and by hand. It subscribes (to
 * topics or a pattern), consumes, commits, and writes one line per event
 * to stdout (line-buffered), each with a CLOCK_REALTIME ms timestamp so
 * the logs of several members can be merged:
 *
 *   <ts> <id> READY
 *   <ts> <id> ASSIGNED|REVOKED|LOST <changed> OWN <owned after>
 *   <ts> <id> REC <topic> <partition> <offset> <value>
 *   <ts> <id> COMMIT <topic> <partition> <offset>
 *   <ts> <id> META <generation> <member id> <instance id or -> <subscription>
 *   <ts> <id> STALL <ms>
 *   <ts> <id> STATS rebalances=<n> join_ms_last=<n>
 *   <ts> <id> ERROR <message>
 *   <ts> <id> CLOSED
 *
 * Partition lists are "topic:p,topic:p" ("-" when empty). In REVOKED /
 * LOST the owned set is what remains once the step completes (the
 * listener runs before the partitions are released, so the line is
 * written while they are still held: a conservative timestamp). It runs
 * until SIGTERM / SIGINT (a clean close: REVOKED, LeaveGroup) or
 * --duration-ms. Options:
 *
 *   --bootstrap B --group G --id NAME (--topic T[,T] | --pattern RE |
 *   --regex RE2J, the broker-side regex of KIP-848)
 *   [--strategy range|roundrobin|sticky|cooperative-sticky]
 *   [--protocol classic|consumer] [--instance ID] [--session-ms N]
 *   [--commit sync|auto] [--metadata-age-ms N] [--duration-ms N]
 *   [--quiet-records] [--max-poll-ms N] [--stall-ms N] [--custom-assignor]
 *   [--revoke-sleep-ms N] [--commit-timeout-ms N]
 *
 * --custom-assignor: offers "kn-first" (kn_consumer_add_assignor), which
 * gives every partition to the member with the smallest member id.
 *
 * --revoke-sleep-ms: once, in the first REVOKED that leaves partitions
 * owned (a rebalance, not the close), sleep N ms inside the listener:
 * time in poll counts as polling, so the client keeps its membership
 * while the coordinator's rebalance timeout (KIP-848) runs out.
 *
 * --stall-ms: once, after the first non-empty assignment, stop polling
 * for N ms (to exceed max.poll.interval.ms). META is written after each
 * ASSIGNED step, from the next poll.
 */
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "kafka_native.h"

static volatile sig_atomic_t stop;
static const char *id = "member";
static kn_topic_partition_list *owned;
static int assigned_steps, meta_steps;
static long revoke_sleep_ms;

static long long now_real_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void on_signal(int sig) {
    (void)sig;
    stop = 1;
}

static void print_list(const kn_topic_partition_list *l) {
    size_t n = l ? kn_topic_partition_list_count(l) : 0;
    if (!n) {
        fputs("-", stdout);
        return;
    }
    for (size_t i = 0; i < n; i++)
        printf("%s%s:%d", i ? "," : "", kn_topic_partition_list_topic(l, i),
               (int)kn_topic_partition_list_partition(l, i));
}

static int on_rebalance(kn_consumer *c, kn_rebalance_event ev, const kn_topic_partition_list *parts,
                        void *opaque) {
    (void)c;
    (void)opaque;
    size_t n = kn_topic_partition_list_count(parts);
    kn_topic_partition_list *next = kn_topic_partition_list_new();
    if (ev == KN_REBALANCE_ASSIGNED) {
        assigned_steps++;
        for (size_t i = 0; i < kn_topic_partition_list_count(owned); i++)
            kn_topic_partition_list_add(next, kn_topic_partition_list_topic(owned, i),
                                        kn_topic_partition_list_partition(owned, i));
        for (size_t i = 0; i < n; i++)
            kn_topic_partition_list_add(next, kn_topic_partition_list_topic(parts, i),
                                        kn_topic_partition_list_partition(parts, i));
    } else {
        for (size_t i = 0; i < kn_topic_partition_list_count(owned); i++) {
            const char *t = kn_topic_partition_list_topic(owned, i);
            int32_t p = kn_topic_partition_list_partition(owned, i);
            if (kn_topic_partition_list_find(parts, t, p) < 0)
                kn_topic_partition_list_add(next, t, p);
        }
    }
    printf("%lld %s %s ", now_real_ms(), id,
           ev == KN_REBALANCE_ASSIGNED  ? "ASSIGNED"
           : ev == KN_REBALANCE_REVOKED ? "REVOKED"
                                        : "LOST");
    print_list(parts);
    fputs(" OWN ", stdout);
    print_list(next);
    fputc('\n', stdout);
    kn_topic_partition_list_destroy(owned);
    owned = next;
    if (ev == KN_REBALANCE_REVOKED && revoke_sleep_ms > 0 && kn_topic_partition_list_count(owned) > 0) {
        printf("%lld %s REVOKE-SLEEP %ld\n", now_real_ms(), id, revoke_sleep_ms);
        struct timespec ts = {revoke_sleep_ms / 1000, (revoke_sleep_ms % 1000) * 1000000L};
        nanosleep(&ts, NULL);
        revoke_sleep_ms = 0;
    }
    return 0;
}

/* "kn-first": everything to the member with the smallest member id. */
static int assign_first(kn_consumer *c, kn_assignor_ctx *ctx, void *opaque) {
    (void)c;
    (void)opaque;
    int32_t first = 0;
    for (int32_t m = 1; m < kn_assignor_ctx_member_count(ctx); m++)
        if (strcmp(kn_assignor_ctx_member_id(ctx, m), kn_assignor_ctx_member_id(ctx, first)) < 0)
            first = m;
    for (int32_t m = 0; m < kn_assignor_ctx_member_count(ctx); m++)
        for (int32_t i = 0; i < kn_assignor_ctx_member_topic_count(ctx, m); i++) {
            const char *t = kn_assignor_ctx_member_topic(ctx, m, i);
            for (int32_t p = 0; p < kn_assignor_ctx_partition_count(ctx, t); p++)
                if (m == first && kn_assignor_ctx_assign(ctx, first, t, p) != KN_OK)
                    return KN_ERR__FAIL;
        }
    printf("%lld %s CUSTOM-ASSIGNED %d members\n", now_real_ms(), id, (int)kn_assignor_ctx_member_count(ctx));
    return 0;
}

static void set(kn_conf *conf, const char *k, const char *v) {
    char es[512];
    if (kn_conf_set(conf, k, v, es, sizeof es) != KN_OK) {
        printf("%lld %s ERROR conf %s\n", now_real_ms(), id, es);
        exit(2);
    }
}

int main(int argc, char **argv) {
    const char *bootstrap = NULL, *group = NULL, *topic = NULL, *pattern = NULL, *regex = NULL;
    const char *strategy = NULL, *protocol = "classic", *instance = NULL, *session = NULL;
    const char *commit = "sync", *md_age = NULL;
    long duration_ms = -1, stall_ms = 0, commit_timeout_ms = 10000;
    const char *max_poll = NULL;
    int quiet = 0, custom = 0;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (strcmp(a, "--quiet-records") == 0) {
            quiet = 1;
            continue;
        }
        if (strcmp(a, "--custom-assignor") == 0) {
            custom = 1;
            continue;
        }
        if (!v) {
            fprintf(stderr, "%s needs a value\n", a);
            return 2;
        }
        i++;
        if (strcmp(a, "--bootstrap") == 0)
            bootstrap = v;
        else if (strcmp(a, "--group") == 0)
            group = v;
        else if (strcmp(a, "--id") == 0)
            id = v;
        else if (strcmp(a, "--topic") == 0)
            topic = v;
        else if (strcmp(a, "--pattern") == 0)
            pattern = v;
        else if (strcmp(a, "--regex") == 0)
            regex = v;
        else if (strcmp(a, "--strategy") == 0)
            strategy = v;
        else if (strcmp(a, "--protocol") == 0)
            protocol = v;
        else if (strcmp(a, "--instance") == 0)
            instance = v;
        else if (strcmp(a, "--session-ms") == 0)
            session = v;
        else if (strcmp(a, "--commit") == 0)
            commit = v;
        else if (strcmp(a, "--metadata-age-ms") == 0)
            md_age = v;
        else if (strcmp(a, "--duration-ms") == 0)
            duration_ms = atol(v);
        else if (strcmp(a, "--commit-timeout-ms") == 0)
            commit_timeout_ms = atol(v);
        else if (strcmp(a, "--revoke-sleep-ms") == 0)
            revoke_sleep_ms = atol(v);
        else if (strcmp(a, "--stall-ms") == 0)
            stall_ms = atol(v);
        else if (strcmp(a, "--max-poll-ms") == 0)
            max_poll = v;
        else {
            fprintf(stderr, "unknown option %s\n", a);
            return 2;
        }
    }
    if (!bootstrap || !group || (!topic && !pattern && !regex)) {
        fprintf(stderr, "usage: %s --bootstrap B --group G --id NAME (--topic T | --pattern RE | --regex RE2J) ...\n",
                argv[0]);
        return 2;
    }
    setvbuf(stdout, NULL, _IOLBF, 0);
    signal(SIGTERM, on_signal);
    signal(SIGINT, on_signal);
    owned = kn_topic_partition_list_new();

    kn_conf *conf = kn_conf_new(KN_CLIENT_CONSUMER);
    set(conf, "bootstrap.servers", bootstrap);
    set(conf, "group.id", group);
    set(conf, "auto.offset.reset", "earliest");
    set(conf, "group.protocol", protocol);
    bool auto_commit = strcmp(commit, "auto") == 0;
    set(conf, "enable.auto.commit", auto_commit ? "true" : "false");
    if (auto_commit)
        set(conf, "auto.commit.interval.ms", "200");
    if (strategy) {
        static const char *const map[][2] = {
            {"range", "org.apache.kafka.clients.consumer.RangeAssignor"},
            {"roundrobin", "org.apache.kafka.clients.consumer.RoundRobinAssignor"},
            {"sticky", "org.apache.kafka.clients.consumer.StickyAssignor"},
            {"cooperative-sticky", "org.apache.kafka.clients.consumer.CooperativeStickyAssignor"}};
        for (size_t i = 0; i < 4; i++)
            if (strcmp(strategy, map[i][0]) == 0)
                strategy = map[i][1];
        set(conf, "partition.assignment.strategy", strategy);
    }
    if (instance)
        set(conf, "group.instance.id", instance);
    if (session) {
        set(conf, "session.timeout.ms", session);
        char hb[32];
        snprintf(hb, sizeof hb, "%ld", atol(session) / 6 > 0 ? atol(session) / 6 : 1);
        set(conf, "heartbeat.interval.ms", hb);
    }
    if (max_poll)
        set(conf, "max.poll.interval.ms", max_poll);
    if (md_age) {
        set(conf, "metadata.max.age.ms", md_age);
    }
    char es[512];
    kn_consumer *c = kn_consumer_new(conf, es, sizeof es);
    kn_conf_destroy(conf);
    if (!c) {
        printf("%lld %s ERROR kn_consumer_new: %s\n", now_real_ms(), id, es);
        return 1;
    }
    int rc;
    if (custom && (rc = kn_consumer_add_assignor(c, "kn-first", 0, assign_first, NULL)) != KN_OK) {
        printf("%lld %s ERROR add_assignor: %s\n", now_real_ms(), id, kn_err_name(rc));
        return 1;
    }
    if (regex) {
        rc = kn_consumer_subscribe_regex(c, regex, on_rebalance, NULL);
    } else if (pattern) {
        rc = kn_consumer_subscribe_pattern(c, pattern, on_rebalance, NULL);
    } else {
        char *copy = strdup(topic);
        const char *topics[16];
        size_t n = 0;
        for (char *t = strtok(copy, ","); t && n < 16; t = strtok(NULL, ","))
            topics[n++] = t;
        rc = kn_consumer_subscribe(c, topics, n, on_rebalance, NULL);
        free(copy);
    }
    if (rc != KN_OK) {
        printf("%lld %s ERROR subscribe: %s\n", now_real_ms(), id, kn_err_name(rc));
        return 1;
    }
    printf("%lld %s READY\n", now_real_ms(), id);
    long long end = duration_ms >= 0 ? now_real_ms() + duration_ms : -1;
    int status = 0;
    while (!stop && (end < 0 || now_real_ms() < end)) {
        kn_records *recs = NULL;
        rc = kn_consumer_poll(c, 100, &recs, es, sizeof es);
        if (rc != KN_OK) {
            printf("%lld %s ERROR poll %s: %s\n", now_real_ms(), id, kn_err_name(rc), es);
            if (rc == KN_ERR__FATAL || rc == KN_ERR__CLOSED || rc == KN_ERR_FENCED_INSTANCE_ID) {
                status = 1;
                break;
            }
            continue;
        }
        if (assigned_steps != meta_steps) {
            meta_steps = assigned_steps;
            kn_group_metadata *gm = kn_consumer_group_metadata(c);
            kn_topic_partition_list *sub = kn_consumer_subscription(c);
            const char *inst = gm ? kn_group_metadata_group_instance_id(gm) : NULL;
            printf("%lld %s META %d %s %s ", now_real_ms(), id,
                   gm ? (int)kn_group_metadata_generation(gm) : -2,
                   gm && *kn_group_metadata_member_id(gm) ? kn_group_metadata_member_id(gm) : "-",
                   inst ? inst : "-");
            for (size_t i = 0; sub && i < kn_topic_partition_list_count(sub); i++)
                printf("%s%s:%d", i ? "," : "", kn_topic_partition_list_topic(sub, i),
                       (int)kn_topic_partition_list_partition(sub, i));
            fputc('\n', stdout);
            kn_topic_partition_list_destroy(sub);
            kn_group_metadata_destroy(gm);
        }
        if (stall_ms > 0 && kn_topic_partition_list_count(owned) > 0) {
            printf("%lld %s STALL %ld\n", now_real_ms(), id, stall_ms);
            struct timespec ts = {stall_ms / 1000, (stall_ms % 1000) * 1000000L};
            nanosleep(&ts, NULL);
            stall_ms = 0;
        }
        size_t n = kn_records_count(recs);
        for (size_t i = 0; i < n && !quiet; i++) {
            size_t vlen;
            const char *v = kn_records_value(recs, i, &vlen);
            printf("%lld %s REC %s %d %lld %.*s\n", now_real_ms(), id, kn_records_topic(recs, i),
                   (int)kn_records_partition(recs, i), (long long)kn_records_offset(recs, i),
                   v ? (int)vlen : 0, v ? v : "");
        }
        if (n && !auto_commit) {
            kn_topic_partition_list *pos = kn_consumer_assignment(c);
            int crc = kn_consumer_commit_sync(c, pos, (int)commit_timeout_ms);
            if (crc == KN_OK) {
                for (size_t i = 0; i < kn_topic_partition_list_count(pos); i++)
                    if (kn_topic_partition_list_offset(pos, i) >= 0)
                        printf("%lld %s COMMIT %s %d %lld\n", now_real_ms(), id,
                               kn_topic_partition_list_topic(pos, i),
                               (int)kn_topic_partition_list_partition(pos, i),
                               (long long)kn_topic_partition_list_offset(pos, i));
            } else {
                printf("%lld %s ERROR commit %s\n", now_real_ms(), id, kn_err_name(crc));
            }
            kn_topic_partition_list_destroy(pos);
        }
        kn_records_free(recs);
    }
    kn_consumer_stats st = {.size = sizeof st};
    kn_consumer_get_stats(c, &st);
    printf("%lld %s STATS rebalances=%lld join_ms_last=%lld revoked=%lld lost=%lld\n", now_real_ms(), id,
           (long long)st.rebalances, (long long)st.join_latency_ms_last, (long long)st.partitions_revoked,
           (long long)st.partitions_lost);
    kn_consumer_close(c, -1);
    kn_consumer_destroy(c);
    kn_topic_partition_list_destroy(owned);
    printf("%lld %s CLOSED\n", now_real_ms(), id);
    return status;
}
