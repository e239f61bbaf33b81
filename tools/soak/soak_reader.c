/*
 * soak_reader.c: one consumer group member for tools/soak. It subscribes
 * to the soak topic (classic protocol with cooperative-sticky, or KIP-848
 * with --protocol consumer), consumes, commits synchronously after each
 * poll that returned records, and logs to its file (--log), one line per
 * event, each with a CLOCK_REALTIME ms timestamp so the files of all
 * members can be merged:
 *
 *   <ts> <member> START <group> <protocol>
 *   <ts> <member> ASSIGNED|REVOKED|LOST <changed> OWN <owned after>
 *   <ts> <member> REC <partition> <offset> <writer> <seq> <generation>
 *   <ts> <member> GEN <generation or epoch> <member id>
 *   <ts> <member> COMMIT-ERROR <error>
 *   <ts> <member> ERROR <where> <error>
 *   <ts> <member> CLOSED <close result>
 *
 * Partition lists are "p,p" ("-" when empty). The REVOKED / LOST line is
 * written inside the listener, before the partitions are released, so
 * its timestamp is a conservative end of ownership; ASSIGNED is written
 * once the partitions are ours. The log is block-buffered and flushed
 * before every commit and in the listener: whatever a commit covers is
 * in the file even if the process is SIGKILLed right after.
 *
 *   soak_reader --bootstrap B --topic T --group G --id NAME --log FILE
 *               [--protocol classic|consumer] [--session-ms N]
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "kafka_native.h"

static volatile sig_atomic_t stop;
static const char *id = "r";
static FILE *out;
static kn_topic_partition_list *owned;
static int generation = -1, steps, seen_steps;

static long long now_ms(void) {
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
    if (!n)
        fputs("-", out);
    for (size_t i = 0; i < n; i++)
        fprintf(out, "%s%d", i ? "," : "", (int)kn_topic_partition_list_partition(l, i));
}

static int on_rebalance(kn_consumer *c, kn_rebalance_event ev, const kn_topic_partition_list *parts,
                        void *opaque) {
    (void)c;
    (void)opaque;
    kn_topic_partition_list *next = kn_topic_partition_list_new();
    for (size_t i = 0; i < kn_topic_partition_list_count(owned); i++) {
        const char *t = kn_topic_partition_list_topic(owned, i);
        int32_t p = kn_topic_partition_list_partition(owned, i);
        if (ev == KN_REBALANCE_ASSIGNED || kn_topic_partition_list_find(parts, t, p) < 0)
            kn_topic_partition_list_add(next, t, p);
    }
    if (ev == KN_REBALANCE_ASSIGNED)
        for (size_t i = 0; i < kn_topic_partition_list_count(parts); i++)
            kn_topic_partition_list_add(next, kn_topic_partition_list_topic(parts, i),
                                        kn_topic_partition_list_partition(parts, i));
    fprintf(out, "%lld %s %s ", now_ms(), id,
            ev == KN_REBALANCE_ASSIGNED  ? "ASSIGNED"
            : ev == KN_REBALANCE_REVOKED ? "REVOKED"
                                         : "LOST");
    print_list(parts);
    fputs(" OWN ", out);
    print_list(next);
    fputc('\n', out);
    fflush(out);
    kn_topic_partition_list_destroy(owned);
    owned = next;
    steps++;
    return 0;
}

static int set(kn_conf *conf, const char *k, const char *v) {
    char es[512];
    if (kn_conf_set(conf, k, v, es, sizeof es) != KN_OK) {
        fprintf(stderr, "%s: conf %s\n", id, es);
        return -1;
    }
    return 0;
}

/* The generation (classic) or member epoch (KIP-848) after a step. */
static void log_generation(kn_consumer *c) {
    kn_group_metadata *gm = kn_consumer_group_metadata(c);
    if (!gm)
        return;
    generation = (int)kn_group_metadata_generation(gm);
    const char *mid = kn_group_metadata_member_id(gm);
    fprintf(out, "%lld %s GEN %d %s\n", now_ms(), id, generation, mid && *mid ? mid : "-");
    kn_group_metadata_destroy(gm);
}

int main(int argc, char **argv) {
    const char *bootstrap = NULL, *topic = NULL, *group = NULL, *log_path = NULL;
    const char *protocol = "classic", *session = "10000";
    for (int i = 1; i + 1 < argc; i += 2) {
        const char *a = argv[i], *v = argv[i + 1];
        if (strcmp(a, "--bootstrap") == 0)
            bootstrap = v;
        else if (strcmp(a, "--topic") == 0)
            topic = v;
        else if (strcmp(a, "--group") == 0)
            group = v;
        else if (strcmp(a, "--id") == 0)
            id = v;
        else if (strcmp(a, "--log") == 0)
            log_path = v;
        else if (strcmp(a, "--protocol") == 0)
            protocol = v;
        else if (strcmp(a, "--session-ms") == 0)
            session = v;
        else {
            fprintf(stderr, "unknown option %s\n", a);
            return 2;
        }
    }
    if (!bootstrap || !topic || !group || !log_path) {
        fprintf(stderr, "usage: %s --bootstrap B --topic T --group G --id NAME --log FILE "
                        "[--protocol classic|consumer] [--session-ms N]\n",
                argv[0]);
        return 2;
    }
    if (!(out = fopen(log_path, "a"))) {
        perror(log_path);
        return 2;
    }
    setvbuf(out, NULL, _IOFBF, 1 << 16);
    signal(SIGTERM, on_signal);
    signal(SIGINT, on_signal);
    owned = kn_topic_partition_list_new();

    kn_conf *conf = kn_conf_new(KN_CLIENT_CONSUMER);
    int classic = strcmp(protocol, "classic") == 0;
    if (set(conf, "bootstrap.servers", bootstrap) || set(conf, "group.id", group) || set(conf, "client.id", id) ||
        set(conf, "auto.offset.reset", "earliest") || set(conf, "enable.auto.commit", "false") ||
        set(conf, "group.protocol", protocol))
        return 2;
    if (classic) {
        char hb[32];
        snprintf(hb, sizeof hb, "%ld", atol(session) / 5);
        if (set(conf, "partition.assignment.strategy",
                "org.apache.kafka.clients.consumer.CooperativeStickyAssignor") ||
            set(conf, "session.timeout.ms", session) || set(conf, "heartbeat.interval.ms", hb))
            return 2;
    }
    char es[512];
    kn_consumer *c = kn_consumer_new(conf, es, sizeof es);
    kn_conf_destroy(conf);
    if (!c) {
        fprintf(out, "%lld %s ERROR new %s\n", now_ms(), id, es);
        fclose(out);
        return 1;
    }
    const char *topics[1] = {topic};
    int rc = kn_consumer_subscribe(c, topics, 1, on_rebalance, NULL);
    if (rc != KN_OK) {
        fprintf(out, "%lld %s ERROR subscribe %s\n", now_ms(), id, kn_err_name(rc));
        fclose(out);
        return 1;
    }
    fprintf(out, "%lld %s START %s %s\n", now_ms(), id, group, protocol);
    fflush(out);
    int status = 0;
    while (!stop) {
        kn_records *recs = NULL;
        rc = kn_consumer_poll(c, 200, &recs, es, sizeof es);
        if (steps != seen_steps) {
            seen_steps = steps;
            log_generation(c);
        }
        if (rc != KN_OK) {
            fprintf(out, "%lld %s ERROR poll %s %s\n", now_ms(), id, kn_err_name(rc), es);
            fflush(out);
            if (rc == KN_ERR__FATAL || rc == KN_ERR__CLOSED) {
                status = 1;
                break;
            }
            continue;
        }
        size_t n = kn_records_count(recs);
        for (size_t i = 0; i < n; i++) {
            size_t vlen;
            const char *v = kn_records_value(recs, i, &vlen);
            char w[64] = "-";
            long long seq = -1;
            if (v) {
                char buf[128];
                size_t k = vlen < sizeof buf - 1 ? vlen : sizeof buf - 1;
                memcpy(buf, v, k);
                buf[k] = 0;
                if (sscanf(buf, "%63s %lld", w, &seq) != 2)
                    strcpy(w, "?");
            }
            fprintf(out, "%lld %s REC %d %lld %s %lld %d\n", now_ms(), id, (int)kn_records_partition(recs, i),
                    (long long)kn_records_offset(recs, i), w, seq, generation);
        }
        if (n) {
            fflush(out);
            int crc = kn_consumer_commit_sync(c, NULL, 10000);
            if (crc != KN_OK)
                fprintf(out, "%lld %s COMMIT-ERROR %s\n", now_ms(), id, kn_err_name(crc));
        }
        kn_records_free(recs);
    }
    rc = kn_consumer_close(c, 30000);
    fprintf(out, "%lld %s CLOSED %s\n", now_ms(), id, kn_err_name(rc));
    kn_consumer_destroy(c);
    kn_topic_partition_list_destroy(owned);
    fclose(out);
    return status || rc != KN_OK;
}
