/*
 * kn_group_join.c: group join time, subscribe -> first ASSIGNED
 * listener call, for a fresh single-member group, with the classic
 * protocol and with KIP-848 (group.protocol=consumer). Comparable to
 * the rebalance.time.ms column of Java's ConsumerPerformance (which
 * measures from subscribe to the end of its onPartitionsAssigned).
 *
 *   kn_group_join --bootstrap-server B --topic T [--iterations N]
 *                 [--protocol classic|consumer|both]
 *                 [--strategy <Java assignor class>]
 *
 * Each iteration builds a consumer with a new group id, subscribes,
 * polls until the listener reports the assignment, and closes (leaving
 * the group). Prints, per protocol, min / median / max of the wall
 * time and of the library's own join_latency_ms_last (first JoinGroup
 * or epoch-0 heartbeat -> assignment applied).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "kafka_native.h"

static double now_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1000.0 + (double)ts.tv_nsec / 1e6;
}

typedef struct join_state {
    double assigned_at;
    int assigned;
} join_state;

static int on_rebalance(kn_consumer *c, kn_rebalance_event ev, const kn_topic_partition_list *parts,
                        void *opaque) {
    (void)c;
    (void)parts;
    join_state *js = opaque;
    if (ev == KN_REBALANCE_ASSIGNED && !js->assigned) {
        js->assigned = 1;
        js->assigned_at = now_ms();
    }
    return 0;
}

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* One join; returns the wall time in ms (< 0 on failure). */
static double join_once(const char *bootstrap, const char *topic, const char *protocol, const char *strategy,
                        int i, double *lib_ms) {
    char group[128], es[512];
    snprintf(group, sizeof group, "kn-join-%d-%s-%d", (int)getpid(), protocol, i);
    kn_conf *conf = kn_conf_new(KN_CLIENT_CONSUMER);
    if (kn_conf_set(conf, "bootstrap.servers", bootstrap, es, sizeof es) != KN_OK ||
        kn_conf_set(conf, "group.id", group, es, sizeof es) != KN_OK ||
        kn_conf_set(conf, "group.protocol", protocol, es, sizeof es) != KN_OK ||
        kn_conf_set(conf, "enable.auto.commit", "false", es, sizeof es) != KN_OK ||
        (strategy && strcmp(protocol, "classic") == 0 &&
         kn_conf_set(conf, "partition.assignment.strategy", strategy, es, sizeof es) != KN_OK)) {
        fprintf(stderr, "conf: %s\n", es);
        kn_conf_destroy(conf);
        return -1;
    }
    kn_consumer *c = kn_consumer_new(conf, es, sizeof es);
    kn_conf_destroy(conf);
    if (!c) {
        fprintf(stderr, "kn_consumer_new: %s\n", es);
        return -1;
    }
    join_state js = {0, 0};
    double start = now_ms();
    const char *topics[] = {topic};
    if (kn_consumer_subscribe(c, topics, 1, on_rebalance, &js) != KN_OK) {
        fprintf(stderr, "subscribe failed\n");
        kn_consumer_destroy(c);
        return -1;
    }
    while (!js.assigned && now_ms() - start < 60000) {
        kn_records *recs = NULL;
        if (kn_consumer_poll(c, 10, &recs, es, sizeof es) == KN_OK)
            kn_records_free(recs);
    }
    kn_consumer_stats st = {.size = sizeof st};
    kn_consumer_get_stats(c, &st);
    *lib_ms = (double)st.join_latency_ms_last;
    kn_consumer_close(c, -1);
    kn_consumer_destroy(c);
    return js.assigned ? js.assigned_at - start : -1;
}

static void run(const char *bootstrap, const char *topic, const char *protocol, const char *strategy, int n) {
    double *wall = calloc((size_t)n, sizeof *wall), *lib = calloc((size_t)n, sizeof *lib);
    int ok = 0;
    for (int i = 0; i < n; i++) {
        double l = 0, w = join_once(bootstrap, topic, protocol, strategy, i, &l);
        if (w < 0)
            continue;
        wall[ok] = w;
        lib[ok++] = l;
    }
    if (!ok) {
        printf("%s: no join succeeded\n", protocol);
    } else {
        qsort(wall, (size_t)ok, sizeof *wall, cmp_double);
        qsort(lib, (size_t)ok, sizeof *lib, cmp_double);
        printf("%s, %d joins, subscribe->assigned ms: min %.1f median %.1f max %.1f; "
               "library join latency ms: min %.0f median %.0f max %.0f\n",
               protocol, ok, wall[0], wall[ok / 2], wall[ok - 1], lib[0], lib[ok / 2], lib[ok - 1]);
        /* The line bench/run reads: the first number after "join time". */
        printf("%s join time ms: median %.1f\n", protocol, wall[ok / 2]);
    }
    free(wall);
    free(lib);
}

int main(int argc, char **argv) {
    const char *bootstrap = NULL, *topic = NULL, *protocol = "both", *strategy = NULL;
    int n = 10;
    for (int i = 1; i + 1 < argc; i += 2) {
        if (strcmp(argv[i], "--bootstrap-server") == 0)
            bootstrap = argv[i + 1];
        else if (strcmp(argv[i], "--topic") == 0)
            topic = argv[i + 1];
        else if (strcmp(argv[i], "--iterations") == 0)
            n = atoi(argv[i + 1]);
        else if (strcmp(argv[i], "--protocol") == 0)
            protocol = argv[i + 1];
        else if (strcmp(argv[i], "--strategy") == 0)
            strategy = argv[i + 1];
        else {
            fprintf(stderr, "unknown option %s\n", argv[i]);
            return 2;
        }
    }
    if (!bootstrap || !topic || n < 1) {
        fprintf(stderr,
                "usage: %s --bootstrap-server B --topic T [--iterations N] "
                "[--protocol classic|consumer|both] [--strategy CLASS]\n",
                argv[0]);
        return 2;
    }
    if (strcmp(protocol, "both") == 0 || strcmp(protocol, "classic") == 0)
        run(bootstrap, topic, "classic", strategy, n);
    if (strcmp(protocol, "both") == 0 || strcmp(protocol, "consumer") == 0)
        run(bootstrap, topic, "consumer", strategy, n);
    return 0;
}
