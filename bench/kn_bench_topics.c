/*
 * kn_bench_topics.c: topic housekeeping for bench/run, through our admin
 * client (a JVM start per create/delete would cost seconds per run):
 *   kn_bench_topics --bootstrap-server B create NAME PARTITIONS
 *       creates the topic and waits until every partition has a leader
 *   kn_bench_topics --bootstrap-server B delete NAME...
 *       deletes topics; an unknown one is not an error
 *   kn_bench_topics --bootstrap-server B exists NAME
 *       exit 0 if the topic exists, 3 if not
 * Errors name the topic and the broker's error.
 */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kafka_native.h"

static int usage(void) {
    fprintf(stderr, "usage: kn_bench_topics --bootstrap-server B create NAME PARTITIONS\n"
                    "       kn_bench_topics --bootstrap-server B delete NAME...\n"
                    "       kn_bench_topics --bootstrap-server B exists NAME\n");
    return 2;
}

static int create(kn_admin *admin, const char *name, int partitions) {
    char es[512];
    kn_new_topic *t = kn_new_topic_new(name, partitions, -1);
    if (!t)
        return 1;
    kn_topic_results *res = NULL;
    int rc = kn_admin_create_topics(admin, &t, 1, 0, 60000, &res, es, sizeof es);
    kn_new_topic_destroy(t);
    if (rc != KN_OK) {
        fprintf(stderr, "create %s: %s: %s\n", name, kn_err_name(rc), es);
        return 1;
    }
    int err = kn_topic_results_error(res, 0);
    if (err) {
        fprintf(stderr, "create %s: %s: %s\n", name, kn_err_name(err),
                kn_topic_results_error_message(res, 0));
        kn_topic_results_destroy(res);
        return 1;
    }
    kn_topic_results_destroy(res);
    rc = kn_admin_wait_for_topics(admin, &name, 1, 120000, es, sizeof es);
    if (rc != KN_OK) {
        fprintf(stderr, "create %s: waiting for leaders: %s\n", name, es);
        return 1;
    }
    return 0;
}

static int delete_topics(kn_admin *admin, char **names, int n) {
    char es[512];
    kn_topic_results *res = NULL;
    int rc = kn_admin_delete_topics(admin, (const char *const *)names, (size_t)n, 60000, &res, es, sizeof es);
    if (rc != KN_OK) {
        fprintf(stderr, "delete: %s: %s\n", kn_err_name(rc), es);
        return 1;
    }
    int status = 0;
    for (size_t i = 0; i < kn_topic_results_count(res); i++) {
        int err = kn_topic_results_error(res, i);
        if (err && err != KN_ERR_UNKNOWN_TOPIC_OR_PARTITION) {
            fprintf(stderr, "delete %s: %s: %s\n", kn_topic_results_name(res, i), kn_err_name(err),
                    kn_topic_results_error_message(res, i));
            status = 1;
        }
    }
    kn_topic_results_destroy(res);
    return status;
}

static int exists(kn_admin *admin, const char *name) {
    char es[512];
    kn_topic_list *list = NULL;
    int rc = kn_admin_list_topics(admin, 0, 60000, &list, es, sizeof es);
    if (rc != KN_OK) {
        fprintf(stderr, "list topics: %s: %s\n", kn_err_name(rc), es);
        return 1;
    }
    int found = 3;
    for (size_t i = 0; i < kn_topic_list_count(list); i++)
        if (strcmp(kn_topic_list_name(list, i), name) == 0)
            found = 0;
    kn_topic_list_destroy(list);
    return found;
}

int main(int argc, char **argv) {
    if (argc < 4 || strcmp(argv[1], "--bootstrap-server") != 0)
        return usage();
    char es[512];
    kn_conf *conf = kn_conf_new(KN_CLIENT_ADMIN);
    if (!conf || kn_conf_set(conf, "bootstrap.servers", argv[2], es, sizeof es) != KN_OK) {
        fprintf(stderr, "kn_bench_topics: %s\n", conf ? es : "out of memory");
        kn_conf_destroy(conf);
        return 2;
    }
    const char *cmd = argv[3];
    bool ok_args = (!strcmp(cmd, "create") && argc == 6 && atoi(argv[5]) > 0) ||
                   (!strcmp(cmd, "delete") && argc >= 5) || (!strcmp(cmd, "exists") && argc == 5);
    if (!ok_args) {
        kn_conf_destroy(conf);
        return usage();
    }
    kn_admin *admin = kn_admin_new(conf, es, sizeof es);
    kn_conf_destroy(conf);
    if (!admin) {
        fprintf(stderr, "kn_bench_topics: %s\n", es);
        return 1;
    }
    int rc;
    if (!strcmp(cmd, "create"))
        rc = create(admin, argv[4], atoi(argv[5]));
    else if (!strcmp(cmd, "delete"))
        rc = delete_topics(admin, argv + 4, argc - 4);
    else
        rc = exists(admin, argv[4]);
    kn_admin_destroy(admin);
    return rc;
}
