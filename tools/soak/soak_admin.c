/*
 * soak_admin.c: the cluster-side helpers of tools/soak, one per mode:
 *
 *   soak_admin create     --bootstrap B --topic T --partitions N
 *       creates T (replication factor 3, min.insync.replicas 2) and
 *       waits until every broker knows it;
 *   soak_admin controller --bootstrap B
 *       prints the node id of the active KRaft controller (the quorum
 *       leader);
 *   soak_admin lag        --bootstrap B --topic T --partitions N --group G
 *       prints "<total lag> <p>:<end>:<committed> ..." (a partition
 *       without a committed offset counts its whole end offset);
 *   soak_admin dump       --bootstrap B --topic T --partitions N
 *       reads every partition from offset 0 to its end offset with an
 *       assigned consumer (no group) and prints "<p> <offset> <writer>
 *       <seq>" per record: the log as it is, for the checker's
 *       no-duplicate, in-order and nothing-lost checks.
 *
 * lag and dump take --isolation read_committed: the end is then the last
 * stable offset, and dump prints only committed transactions' records
 * (a partition is read to its end once the position reaches it: the
 * last entries may be aborted records or transaction markers, which
 * poll never returns).
 *
 * Exit 0 on success, 1 on failure (the reason on stderr).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "kafka_native.h"

static const char *bootstrap, *topic, *group, *isolation = "read_uncommitted";
static long partitions;

static long long now_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static kn_conf *conf_for(kn_client_type type) {
    kn_conf *conf = kn_conf_new(type);
    char es[256];
    if (kn_conf_set(conf, "bootstrap.servers", bootstrap, es, sizeof es) != KN_OK) {
        fprintf(stderr, "soak_admin: %s\n", es);
        exit(1);
    }
    return conf;
}

static int cmd_create(void) {
    char es[512];
    kn_conf *conf = conf_for(KN_CLIENT_ADMIN);
    kn_admin *a = kn_admin_new(conf, es, sizeof es);
    kn_conf_destroy(conf);
    if (!a) {
        fprintf(stderr, "soak_admin: %s\n", es);
        return 1;
    }
    kn_new_topic *t = kn_new_topic_new(topic, (int32_t)partitions, 3);
    kn_new_topic_set_config(t, "min.insync.replicas", "2");
    kn_topic_results *res = NULL;
    int rc = kn_admin_create_topics(a, &t, 1, 0, 30000, &res, es, sizeof es);
    if (rc == KN_OK && kn_topic_results_error(res, 0) != KN_OK) {
        rc = kn_topic_results_error(res, 0);
        snprintf(es, sizeof es, "%s", kn_topic_results_error_message(res, 0) ? kn_topic_results_error_message(res, 0) : "");
    }
    if (rc == KN_OK) {
        const char *names[1] = {topic};
        rc = kn_admin_wait_for_topics(a, names, 1, 30000, es, sizeof es);
    }
    if (rc != KN_OK)
        fprintf(stderr, "soak_admin: create %s: %s %s\n", topic, kn_err_name(rc), es);
    kn_topic_results_destroy(res);
    kn_new_topic_destroy(t);
    kn_admin_close(a, 10000);
    kn_admin_destroy(a);
    return rc != KN_OK;
}

static int cmd_controller(void) {
    char es[512];
    kn_conf *conf = conf_for(KN_CLIENT_ADMIN);
    kn_admin *a = kn_admin_new(conf, es, sizeof es);
    kn_conf_destroy(conf);
    if (!a) {
        fprintf(stderr, "soak_admin: %s\n", es);
        return 1;
    }
    kn_quorum_info *q = NULL;
    int rc = kn_admin_describe_metadata_quorum(a, 15000, &q, es, sizeof es);
    if (rc == KN_OK)
        printf("%d\n", (int)kn_quorum_info_leader_id(q));
    else
        fprintf(stderr, "soak_admin: describe quorum: %s %s\n", kn_err_name(rc), es);
    kn_quorum_info_destroy(q);
    kn_admin_close(a, 10000);
    kn_admin_destroy(a);
    return rc != KN_OK;
}

static kn_topic_partition_list *all_partitions(void) {
    kn_topic_partition_list *l = kn_topic_partition_list_new();
    for (long p = 0; p < partitions; p++)
        kn_topic_partition_list_add(l, topic, (int32_t)p);
    return l;
}

static int cmd_lag(void) {
    char es[512];
    kn_conf *conf = conf_for(KN_CLIENT_CONSUMER);
    kn_conf_set(conf, "group.id", group, es, sizeof es);
    kn_conf_set(conf, "isolation.level", isolation, es, sizeof es);
    kn_consumer *c = kn_consumer_new(conf, es, sizeof es);
    kn_conf_destroy(conf);
    if (!c) {
        fprintf(stderr, "soak_admin: %s\n", es);
        return 1;
    }
    kn_topic_partition_list *end = all_partitions(), *done = all_partitions();
    int rc = kn_consumer_end_offsets(c, end, 15000);
    if (rc == KN_OK)
        rc = kn_consumer_committed(c, done, 15000);
    if (rc == KN_OK) {
        long long total = 0;
        for (size_t i = 0; i < (size_t)partitions; i++) {
            long long e = kn_topic_partition_list_offset(end, i), d = kn_topic_partition_list_offset(done, i);
            total += e - (d >= 0 ? d : 0);
        }
        printf("%lld", total);
        for (size_t i = 0; i < (size_t)partitions; i++)
            printf(" %d:%lld:%lld", (int)i, (long long)kn_topic_partition_list_offset(end, i),
                   (long long)kn_topic_partition_list_offset(done, i));
        printf("\n");
    } else {
        fprintf(stderr, "soak_admin: lag %s: %s\n", group, kn_err_name(rc));
    }
    kn_topic_partition_list_destroy(end);
    kn_topic_partition_list_destroy(done);
    kn_consumer_close(c, 10000);
    kn_consumer_destroy(c);
    return rc != KN_OK;
}

static int cmd_dump(void) {
    char es[512];
    kn_conf *conf = conf_for(KN_CLIENT_CONSUMER);
    kn_conf_set(conf, "auto.offset.reset", "earliest", es, sizeof es);
    kn_conf_set(conf, "isolation.level", isolation, es, sizeof es);
    kn_consumer *c = kn_consumer_new(conf, es, sizeof es);
    kn_conf_destroy(conf);
    if (!c) {
        fprintf(stderr, "soak_admin: %s\n", es);
        return 1;
    }
    kn_topic_partition_list *parts = all_partitions(), *end = all_partitions();
    int rc = kn_consumer_end_offsets(c, end, 30000);
    if (rc == KN_OK)
        rc = kn_consumer_assign(c, parts);
    if (rc == KN_OK)
        rc = kn_consumer_seek_to_beginning(c, parts);
    long long left = 0, deadline = now_ms() + 120000;
    while (rc == KN_OK) {
        /* Done once every partition's position reached its end offset. */
        left = 0;
        for (long p = 0; p < partitions; p++) {
            int64_t pos = -1, e = kn_topic_partition_list_offset(end, (size_t)p);
            if (e > 0 && (kn_consumer_position(c, topic, (int32_t)p, 0, &pos) != KN_OK || pos < e))
                left++;
        }
        if (!left)
            break;
        if (now_ms() > deadline) {
            rc = KN_ERR__TIMED_OUT;
            break;
        }
        kn_records *recs = NULL;
        rc = kn_consumer_poll(c, 500, &recs, es, sizeof es);
        if (rc != KN_OK)
            break;
        for (size_t i = 0; i < kn_records_count(recs); i++) {
            int32_t p = kn_records_partition(recs, i);
            long long off = kn_records_offset(recs, i), e = kn_topic_partition_list_offset(end, (size_t)p);
            if (off >= e)
                continue;
            size_t vlen;
            const char *v = kn_records_value(recs, i, &vlen);
            char buf[128], w[64] = "-";
            long long seq = -1;
            size_t k = v ? (vlen < sizeof buf - 1 ? vlen : sizeof buf - 1) : 0;
            memcpy(buf, v ? v : "", k);
            buf[k] = 0;
            if (sscanf(buf, "%63s %lld", w, &seq) != 2)
                strcpy(w, "?");
            printf("%d %lld %s %lld\n", (int)p, off, w, seq);
        }
        kn_records_free(recs);
    }
    if (rc != KN_OK)
        fprintf(stderr, "soak_admin: dump: %s %s (%lld partitions not read to the end)\n", kn_err_name(rc), es,
                left);
    for (long p = 0; p < partitions; p++)
        fprintf(stderr, "soak_admin: dump: partition %ld end %lld\n", p,
                (long long)kn_topic_partition_list_offset(end, (size_t)p));
    kn_topic_partition_list_destroy(parts);
    kn_topic_partition_list_destroy(end);
    kn_consumer_close(c, 10000);
    kn_consumer_destroy(c);
    return rc != KN_OK;
}

int main(int argc, char **argv) {
    if (argc < 2) {
        fprintf(stderr, "usage: %s create|controller|lag|dump --bootstrap B [--topic T] [--partitions N] "
                        "[--group G] [--isolation read_committed]\n",
                argv[0]);
        return 2;
    }
    for (int i = 2; i + 1 < argc; i += 2) {
        const char *a = argv[i], *v = argv[i + 1];
        if (strcmp(a, "--bootstrap") == 0)
            bootstrap = v;
        else if (strcmp(a, "--topic") == 0)
            topic = v;
        else if (strcmp(a, "--partitions") == 0)
            partitions = atol(v);
        else if (strcmp(a, "--group") == 0)
            group = v;
        else if (strcmp(a, "--isolation") == 0)
            isolation = v;
        else {
            fprintf(stderr, "unknown option %s\n", a);
            return 2;
        }
    }
    if (!bootstrap)
        return 2;
    if (strcmp(argv[1], "controller") == 0)
        return cmd_controller();
    if (!topic || partitions <= 0)
        return 2;
    if (strcmp(argv[1], "create") == 0)
        return cmd_create();
    if (strcmp(argv[1], "lag") == 0)
        return group ? cmd_lag() : 2;
    if (strcmp(argv[1], "dump") == 0)
        return cmd_dump();
    return 2;
}
