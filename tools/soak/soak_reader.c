/*
 * soak_reader.c: one consumer group member for tools/soak. It subscribes
 * to a topic (classic protocol with cooperative-sticky, or KIP-848 with
 * --protocol consumer), consumes, commits synchronously after each poll
 * that returned records (and, with --commit-idle-ms, every N ms while
 * idle: a read_committed reader's position moves past transaction
 * markers without returning a record, and its lag only drains once that
 * position is committed), and logs to its file (--log), one line per
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
 * The listener lines are soak_member.c's. The log is block-buffered and
 * flushed before every commit and in the listener: whatever a commit
 * covers is in the file even if the process is SIGKILLed right after.
 *
 *   soak_reader --bootstrap B --topic T --group G --id NAME --log FILE
 *               [--protocol classic|consumer] [--session-ms N]
 *               [--isolation read_committed] [--commit-idle-ms N]
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kafka_native.h"
#include "soak_member.h"

static volatile sig_atomic_t stop;

static void on_signal(int sig) {
    (void)sig;
    stop = 1;
}

int main(int argc, char **argv) {
    const char *bootstrap = NULL, *topic = NULL, *group = NULL, *log_path = NULL, *id = "r";
    const char *protocol = "classic", *session = "10000", *isolation = "read_uncommitted";
    long commit_idle_ms = 0;
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
        else if (strcmp(a, "--isolation") == 0)
            isolation = v;
        else if (strcmp(a, "--commit-idle-ms") == 0)
            commit_idle_ms = atol(v);
        else {
            fprintf(stderr, "unknown option %s\n", a);
            return 2;
        }
    }
    if (!bootstrap || !topic || !group || !log_path) {
        fprintf(stderr, "usage: %s --bootstrap B --topic T --group G --id NAME --log FILE "
                        "[--protocol classic|consumer] [--session-ms N] [--isolation read_committed] "
                        "[--commit-idle-ms N]\n",
                argv[0]);
        return 2;
    }
    FILE *out = fopen(log_path, "a");
    if (!out) {
        perror(log_path);
        return 2;
    }
    setvbuf(out, NULL, _IOFBF, 1 << 16);
    signal(SIGTERM, on_signal);
    signal(SIGINT, on_signal);
    soak_member m;
    soak_member_init(&m, out, id);

    kn_conf *conf = kn_conf_new(KN_CLIENT_CONSUMER);
    int classic = strcmp(protocol, "classic") == 0;
    if (soak_conf_set(conf, id, "bootstrap.servers", bootstrap) || soak_conf_set(conf, id, "group.id", group) ||
        soak_conf_set(conf, id, "client.id", id) || soak_conf_set(conf, id, "auto.offset.reset", "earliest") ||
        soak_conf_set(conf, id, "enable.auto.commit", "false") ||
        soak_conf_set(conf, id, "group.protocol", protocol) ||
        soak_conf_set(conf, id, "isolation.level", isolation))
        return 2;
    if (classic) {
        char hb[32];
        snprintf(hb, sizeof hb, "%ld", atol(session) / 5);
        if (soak_conf_set(conf, id, "partition.assignment.strategy",
                          "org.apache.kafka.clients.consumer.CooperativeStickyAssignor") ||
            soak_conf_set(conf, id, "session.timeout.ms", session) ||
            soak_conf_set(conf, id, "heartbeat.interval.ms", hb))
            return 2;
    }
    char es[512];
    kn_consumer *c = kn_consumer_new(conf, es, sizeof es);
    kn_conf_destroy(conf);
    if (!c) {
        fprintf(out, "%lld %s ERROR new %s\n", soak_now_ms(), id, es);
        fclose(out);
        return 1;
    }
    const char *topics[1] = {topic};
    int rc = kn_consumer_subscribe(c, topics, 1, soak_member_on_rebalance, &m);
    if (rc != KN_OK) {
        fprintf(out, "%lld %s ERROR subscribe %s\n", soak_now_ms(), id, kn_err_name(rc));
        fclose(out);
        return 1;
    }
    fprintf(out, "%lld %s START %s %s\n", soak_now_ms(), id, group, protocol);
    fflush(out);
    int status = 0;
    long long last_commit = soak_now_ms();
    while (!stop) {
        kn_records *recs = NULL;
        rc = kn_consumer_poll(c, 200, &recs, es, sizeof es);
        soak_member_after_poll(&m, c);
        if (rc != KN_OK) {
            fprintf(out, "%lld %s ERROR poll %s %s\n", soak_now_ms(), id, kn_err_name(rc), es);
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
            fprintf(out, "%lld %s REC %d %lld %s %lld %d\n", soak_now_ms(), id, (int)kn_records_partition(recs, i),
                    (long long)kn_records_offset(recs, i), w, seq, m.generation);
        }
        if (n || (commit_idle_ms > 0 && soak_now_ms() - last_commit >= commit_idle_ms)) {
            fflush(out);
            int crc = kn_consumer_commit_sync(c, NULL, 10000);
            if (crc != KN_OK && n)
                fprintf(out, "%lld %s COMMIT-ERROR %s\n", soak_now_ms(), id, kn_err_name(crc));
            last_commit = soak_now_ms();
        }
        kn_records_free(recs);
    }
    rc = kn_consumer_close(c, 30000);
    fprintf(out, "%lld %s CLOSED %s\n", soak_now_ms(), id, kn_err_name(rc));
    kn_consumer_destroy(c);
    soak_member_free(&m);
    fclose(out);
    return status || rc != KN_OK;
}
