/*
 * kn_test.c: see kn_test.h.
 */
#include "kn_test.h"

#include "kafka_native.h"

#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

const char *kn_test_bootstrap(void) {
    const char *b = getenv("KAFKA_BOOTSTRAP");
    if (!b || !*b) {
        fprintf(stderr, "KAFKA_BOOTSTRAP is not set: start a broker with tools/kafka/broker start\n");
        fail_msg("no broker (KAFKA_BOOTSTRAP unset)");
    }
    return b;
}

int kn_test_need_three_nodes(const char *test_name) {
    const char *nodes = getenv("KN_BROKER_NODES");
    if (nodes && strcmp(nodes, "3") == 0)
        return 0;
    fprintf(stderr,
            "%s needs the 3-node cluster (KN_BROKER_NODES=3, from `tools/kafka/broker env` "
            "after `start --nodes 3`); KN_BROKER_NODES=%s\n",
            test_name, nodes ? nodes : "(unset)");
    const char *require = getenv("KN_TEST_REQUIRE_NODES");
    return require && strcmp(require, "3") == 0 ? 1 : 77;
}

bool kn_test_broker_kip848(void) {
    static int known = -1;
    if (known >= 0)
        return known;
    const char *env = getenv("KN_TEST_KIP848");
    if (env && *env) {
        known = strcmp(env, "0") != 0;
        return known;
    }
    kn_conf *conf = kn_conf_new(KN_CLIENT_ADMIN);
    kn_test_conf_set(conf, "bootstrap.servers", kn_test_bootstrap());
    char es[512];
    kn_admin *a = kn_admin_new(conf, es, sizeof es);
    kn_conf_destroy(conf);
    if (!a)
        fail_msg("kn_admin_new: %s", es);
    kn_features *f = NULL;
    int rc = kn_admin_describe_features(a, 30000, &f, es, sizeof es);
    kn_admin_destroy(a);
    if (rc != KN_OK)
        fail_msg("describe_features: %s", es);
    known = 0;
    for (size_t i = 0; i < kn_features_finalized_count(f); i++)
        if (strcmp(kn_features_finalized_name(f, i), "group.version") == 0)
            known = kn_features_finalized_max_level(f, i) >= 1;
    kn_features_destroy(f);
    return known;
}

void kn_test_need_kip848(void) {
    if (kn_test_broker_kip848())
        return;
    print_message("skipped: the broker has no KIP-848 consumer groups (group.version 0)\n");
    skip();
}

const char *kn_test_source_path(const char *rel) {
    static char buf[4096];
    const char *root = getenv("KN_SOURCE_DIR");
    snprintf(buf, sizeof buf, "%s/%s", root && *root ? root : ".", rel);
    return buf;
}

const char *kn_test_topic(const char *tag) {
    static char buf[256];
    static int n;
    snprintf(buf, sizeof buf, "kn-test-%s-%d-%d-%lld", tag, (int)getpid(), ++n,
             (long long)(kn_test_now_ms() % 100000));
    return buf;
}

int64_t kn_test_now_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

void kn_test_run(const char *fmt, ...) {
    char cmd[4096];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(cmd, sizeof cmd, fmt, ap);
    va_end(ap);
    int rc = system(cmd);
    if (rc != 0)
        fail_msg("command failed (%d): %s", rc, cmd);
}

const char *kn_test_java_tool(void) {
    static char path[4096];
    snprintf(path, sizeof path, "%s", kn_test_source_path("tools/kafka/java-tool"));
    return path;
}

void kn_test_conf_set(kn_conf *conf, const char *key, const char *value) {
    char err[512];
    if (kn_conf_set(conf, key, value, err, sizeof err))
        fail_msg("%s", err);
}

void kn_test_create_topic(const char *topic, int partitions) {
    kn_test_run("%s topics --bootstrap-server %s --create --topic %s --partitions %d "
                ">/dev/null 2>&1",
                kn_test_java_tool(), kn_test_bootstrap(), topic, partitions);
}

/* Every thread of pid in state T (stopped) or t (traced): /proc/PID/task/TID/stat's
 * third field, after the parenthesised command name. */
static int all_threads_stopped(int pid) {
    char path[64];
    snprintf(path, sizeof path, "/proc/%d/task", pid);
    DIR *d = opendir(path);
    if (!d)
        return 0;
    int stopped = 1;
    struct dirent *e;
    while (stopped && (e = readdir(d)) != NULL) {
        if (e->d_name[0] == '.')
            continue;
        char stat_path[128], buf[512];
        if (snprintf(stat_path, sizeof stat_path, "/proc/%d/task/%.32s/stat", pid, e->d_name) >=
            (int)sizeof stat_path)
            continue;
        FILE *f = fopen(stat_path, "r");
        if (!f)
            continue; /* the thread ended */
        size_t n = fread(buf, 1, sizeof buf - 1, f);
        fclose(f);
        buf[n] = '\0';
        const char *close_paren = strrchr(buf, ')');
        if (!close_paren || close_paren[1] != ' ' || (close_paren[2] != 'T' && close_paren[2] != 't'))
            stopped = 0;
    }
    closedir(d);
    return stopped;
}

int kn_test_sigstop(int pid) {
    if (kill((pid_t)pid, SIGSTOP) != 0)
        return -1;
    int64_t deadline = kn_test_now_ms() + 5000;
    while (!all_threads_stopped(pid)) {
        if (kn_test_now_ms() >= deadline) {
            errno = ETIMEDOUT;
            return -1;
        }
        usleep(1000);
    }
    return 0;
}
