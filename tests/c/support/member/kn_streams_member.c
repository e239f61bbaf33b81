/*
 * kn_streams_member.c: one streams group member (KIP-1071) as a
 * process, for spec/admin_share_spec.lua (Lua has no raw
 * StreamsGroupHeartbeat to make a live streams group with):
 *
 *   kn_streams_member BOOTSTRAP TOPIC GROUP SECONDS
 *
 * It joins GROUP with streams_member.c's topology and member fields
 * (TOPIC and TOPIC-store-changelog must exist, both with 2 partitions),
 * acknowledges its tasks until it owns both and the group is Stable,
 * prints "stable <pid>", then keeps heartbeating until SECONDS passed or
 * a SIGTERM came, leaves the group and exits 0.
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "kafka_native.h"
#include "kafka_native_admin.h"
#include "streams_member.h"

static volatile sig_atomic_t stop;

static void on_term(int sig) {
    (void)sig;
    stop = 1;
}

static int stable(kn_admin *a, const char *group) {
    char es[512];
    kn_group_descriptions *d = NULL;
    if (kn_admin_describe_streams_groups(a, &group, 1, 0, 30000, &d, es, sizeof es) != KN_OK)
        return 0;
    const char *st = kn_group_descriptions_error(d, 0) ? NULL : kn_group_descriptions_state(d, 0);
    int ok = st && (!strcmp(st, "Stable") || !strcmp(st, "stable"));
    kn_group_descriptions_destroy(d);
    return ok;
}

int main(int argc, char **argv) {
    if (argc != 5) {
        fprintf(stderr, "usage: kn_streams_member BOOTSTRAP TOPIC GROUP SECONDS\n");
        return 2;
    }
    const char *topic = argv[2], *group = argv[3];
    time_t end = time(NULL) + atoi(argv[4]);
    signal(SIGTERM, on_term);
    char es[512], member[64];
    snprintf(member, sizeof member, "kn-streams-member-%d", (int)getpid());
    kn_conf *conf = kn_conf_new(KN_CLIENT_ADMIN);
    if (kn_conf_set(conf, "bootstrap.servers", argv[1], es, sizeof es)) {
        fprintf(stderr, "config: %s\n", es);
        return 1;
    }
    kn_admin *a = kn_admin_new(conf, es, sizeof es);
    kn_conf_destroy(conf);
    if (!a) {
        fprintf(stderr, "admin: %s\n", es);
        return 1;
    }
    int32_t tasks[8];
    int task_n = 0, announced = 0;
    int32_t epoch = streams_heartbeat(a, group, member, 0, topic, NULL, 0, tasks, &task_n);
    while (!stop && time(NULL) < end) {
        usleep(300 * 1000);
        epoch = streams_heartbeat(a, group, member, epoch, topic, tasks, task_n, tasks, &task_n);
        if (!announced && task_n == 2 && stable(a, group)) {
            printf("stable %d\n", (int)getpid());
            fflush(stdout);
            announced = 1;
        }
    }
    streams_heartbeat(a, group, member, -1, topic, NULL, 0, NULL, NULL);
    kn_admin_destroy(a);
    return announced ? 0 : 1;
}
