/*
 * kn_share_member.c: one share group member (KIP-932) as a process, for
 * spec/share_spec.lua's mixed C and Lua work queue, and by hand:
 *
 *   kn_share_member BOOTSTRAP TOPIC GROUP IDLE_S [DIE_AFTER]
 *
 * It accepts every record (explicit mode) and prints "done <value>
 * <delivery count>" once the broker confirmed the acknowledgement
 * (commit_sync after each poll), and stops after IDLE_S seconds without
 * records. With DIE_AFTER, once it has accepted that many it takes one
 * more batch, prints "held <value>" for each of its records and kills
 * itself with SIGKILL without acknowledging them: the broker must give
 * them to the other members with delivery count 2.
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "kafka_native.h"
#include "kafka_native_share.h"

static void value_str(const kn_records *r, size_t i, char *buf, size_t size) {
    size_t len;
    const char *v = kn_records_value(r, i, &len);
    if (!v || len >= size)
        len = 0;
    memcpy(buf, v ? v : "", len);
    buf[len] = 0;
}

int main(int argc, char **argv) {
    if (argc < 5) {
        fprintf(stderr, "usage: kn_share_member BOOTSTRAP TOPIC GROUP IDLE_S [DIE_AFTER]\n");
        return 2;
    }
    const char *topic = argv[2];
    int idle_s = atoi(argv[4]);
    long die_after = argc > 5 ? atol(argv[5]) : -1;
    char es[512];
    kn_conf *conf = kn_conf_new(KN_CLIENT_CONSUMER);
    if (kn_conf_set(conf, "bootstrap.servers", argv[1], es, sizeof es) ||
        kn_conf_set(conf, "group.id", argv[3], es, sizeof es) ||
        kn_conf_set(conf, "share.acknowledgement.mode", "explicit", es, sizeof es)) {
        fprintf(stderr, "config: %s\n", es);
        return 1;
    }
    kn_share_consumer *sc = kn_share_consumer_new(conf, es, sizeof es);
    kn_conf_destroy(conf);
    if (!sc || kn_share_consumer_subscribe(sc, &topic, 1) != KN_OK) {
        fprintf(stderr, "share consumer: %s\n", es);
        return 1;
    }
    long accepted = 0;
    int trace = getenv("KN_SHARE_MEMBER_TRACE") != NULL; /* "got" lines on stderr */
    int rc = 0;
    time_t last = time(NULL);
    while (time(NULL) - last < idle_s) {
        kn_records *r = NULL;
        if (kn_share_consumer_poll(sc, 500, &r, es, sizeof es) != KN_OK) {
            fprintf(stderr, "poll: %s\n", es);
            rc = 1;
            break;
        }
        size_t n = kn_records_count(r);
        char v[64];
        for (size_t i = 0; trace && i < n; i++) {
            value_str(r, i, v, sizeof v);
            fprintf(stderr, "got %s %d p%d o%lld\n", v, kn_records_delivery_count(r, i),
                    (int)kn_records_partition(r, i), (long long)kn_records_offset(r, i));
        }
        if (n && die_after >= 0 && accepted >= die_after) {
            for (size_t i = 0; i < n; i++) {
                value_str(r, i, v, sizeof v);
                printf("held %s\n", v);
            }
            fflush(stdout);
            raise(SIGKILL);
        }
        for (size_t i = 0; i < n; i++)
            kn_share_consumer_acknowledge(sc, r, i, KN_SHARE_ACCEPT);
        if (n) {
            kn_topic_partition_list *res = NULL;
            int err = kn_share_consumer_commit_sync(sc, 30000, &res, es, sizeof es);
            kn_topic_partition_list_destroy(res);
            if (err) {
                fprintf(stderr, "commit_sync: %s\n", es);
                rc = 1;
            } else {
                for (size_t i = 0; i < n; i++) {
                    value_str(r, i, v, sizeof v);
                    printf("done %s %d\n", v, kn_records_delivery_count(r, i));
                }
                accepted += (long)n;
            }
            fflush(stdout);
            last = time(NULL);
        }
        kn_records_free(r);
    }
    kn_share_consumer_close(sc, -1);
    kn_share_consumer_destroy(sc);
    return rc;
}
