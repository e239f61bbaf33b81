/*
 * kn_share_perf.c: our side of Java's ShareConsumerPerformance (bench/run
 * scenario share-consume-10b). One share consumer (implicit
 * acknowledgement, every record accepted) reads --num-records records of
 * --topic in share group --group, and prints Java's CSV:
 *
 *   start.time, end.time, data.consumed.in.MB, MB.sec, nMsg.sec, data.consumed.in.nMsg, fetch.time.ms
 *
 * ("MB" = key + value bytes / 1024^2). The clock starts at subscribe, as
 * Java's tool measures (it cannot exclude the share group join); a
 * second line gives the rate from the first record:
 *
 *   from first record: N records, S s, R records/sec
 *
 * and a third the round trips, CPU-independent (from the client's own
 * metrics, read before close):
 *
 *   share fetches: F (R records/fetch), requests: Q, fetch-latency-avg: L ms, in poll: W s
 *
 * (requests: every request sent, acknowledgements, heartbeats and
 * metadata included; in poll: the time spent inside poll after the
 * first record, waiting for answers and decoding them).
 * --prepare-group only sets the group's share.auto.offset.reset to
 * earliest (a new share group starts at the log end) and exits: bench/run
 * runs it before Java's tool too.
 *
 *   kn_share_perf --bootstrap-server B --topic T --num-records N --group G
 *                 [--timeout MS] [--command-property k=v]... [--prepare-group]
 */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "kafka_native.h"
#include "kafka_native_share.h"

static double now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void wall(char *buf, size_t n) {
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    struct tm tm;
    localtime_r(&ts.tv_sec, &tm);
    size_t k = strftime(buf, n, "%Y-%m-%d %H:%M:%S", &tm);
    snprintf(buf + k, n - k, ":%03ld", ts.tv_nsec / 1000000);
}

static int prepare_group(const char *bootstrap, const char *group) {
    char es[512];
    kn_conf *conf = kn_conf_new(KN_CLIENT_ADMIN);
    if (kn_conf_set(conf, "bootstrap.servers", bootstrap, es, sizeof es)) {
        fprintf(stderr, "%s\n", es);
        kn_conf_destroy(conf);
        return 1;
    }
    kn_admin *a = kn_admin_new(conf, es, sizeof es);
    kn_conf_destroy(conf);
    if (!a) {
        fprintf(stderr, "admin: %s\n", es);
        return 1;
    }
    kn_config_op op = {KN_CONFIG_RESOURCE_GROUP, group, KN_CONFIG_OP_SET, "share.auto.offset.reset",
                       "earliest"};
    kn_config_results *res = NULL;
    int rc = kn_admin_incremental_alter_configs(a, &op, 1, 0, 30000, &res, es, sizeof es);
    if (!rc && kn_config_results_error(res, 0))
        rc = kn_config_results_error(res, 0);
    if (rc)
        fprintf(stderr, "share.auto.offset.reset for %s: %s\n", group, kn_err_name(rc));
    kn_config_results_destroy(res);
    /* The broker applies it from the metadata log a moment later; a
     * member joining before that would start the group at the log end. */
    kn_config_resource rsrc = {KN_CONFIG_RESOURCE_GROUP, group};
    double until = now_s() + 15;
    while (!rc) {
        kn_config_descriptions *d = NULL;
        int applied = 0;
        if (kn_admin_describe_configs(a, &rsrc, 1, 0, 10000, &d, es, sizeof es) == KN_OK) {
            const kn_config_entry *e = kn_config_descriptions_find(d, 0, "share.auto.offset.reset");
            applied = e && kn_config_entry_value(e) && !strcmp(kn_config_entry_value(e), "earliest");
        }
        kn_config_descriptions_destroy(d);
        if (applied)
            break;
        if (now_s() > until) {
            fprintf(stderr, "share.auto.offset.reset for %s: not applied within 15 s\n", group);
            rc = 1;
            break;
        }
        struct timespec ts = {0, 100 * 1000 * 1000};
        nanosleep(&ts, NULL);
    }
    kn_admin_destroy(a);
    return rc ? 1 : 0;
}

typedef struct perf_stats {
    double fetches, requests, latency_avg;
} perf_stats;

static void stat_visit(void *ctx, const kn_metric_view *m) {
    perf_stats *st = ctx;
    bool fm = !strcmp(m->group, "consumer-share-fetch-manager-metrics");
    if (fm && !strcmp(m->name, "fetch-total"))
        st->fetches = m->value;
    else if (fm && !strcmp(m->name, "fetch-latency-avg"))
        st->latency_avg = m->value;
    else if (!strcmp(m->group, "consumer-share-metrics") && !strcmp(m->name, "request-total"))
        st->requests = m->value;
}

int main(int argc, char **argv) {
    const char *bootstrap = NULL, *topic = NULL, *group = "perf-share-consumer";
    long long n = 0;
    int timeout_ms = 10000, prepare_only = 0;
    const char *props[64];
    int nprops = 0;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(a, "--prepare-group")) {
            prepare_only = 1;
            continue;
        }
        if (!v) {
            fprintf(stderr, "kn_share_perf: %s needs a value\n", a);
            return 2;
        }
        i++;
        if (!strcmp(a, "--bootstrap-server"))
            bootstrap = v;
        else if (!strcmp(a, "--topic"))
            topic = v;
        else if (!strcmp(a, "--num-records"))
            n = atoll(v);
        else if (!strcmp(a, "--group"))
            group = v;
        else if (!strcmp(a, "--timeout"))
            timeout_ms = atoi(v);
        else if (!strcmp(a, "--command-property") && nprops < 64)
            props[nprops++] = v;
        else {
            fprintf(stderr, "kn_share_perf: unknown option %s\n", a);
            return 2;
        }
    }
    if (!bootstrap || (!prepare_only && (!topic || n <= 0))) {
        fprintf(stderr, "usage: kn_share_perf --bootstrap-server B --topic T --num-records N --group G "
                        "[--timeout MS] [--command-property k=v]... [--prepare-group]\n");
        return 2;
    }
    if (prepare_group(bootstrap, group))
        return 1;
    if (prepare_only)
        return 0;
    char es[512];
    kn_conf *conf = kn_conf_new(KN_CLIENT_CONSUMER);
    kn_conf_set(conf, "bootstrap.servers", bootstrap, es, sizeof es);
    kn_conf_set(conf, "group.id", group, es, sizeof es);
    for (int i = 0; i < nprops; i++) {
        char kv[512];
        snprintf(kv, sizeof kv, "%s", props[i]);
        char *eq = strchr(kv, '=');
        if (!eq || kn_conf_set(conf, kv, (*eq = 0, eq + 1), es, sizeof es)) {
            fprintf(stderr, "kn_share_perf: --command-property %s: %s\n", props[i], eq ? es : "k=v expected");
            return 2;
        }
    }
    kn_share_consumer *sc = kn_share_consumer_new(conf, es, sizeof es);
    kn_conf_destroy(conf);
    char start_wall[64] = "", end_wall[64];
    double t0 = now_s(), t_first = 0, last = t0, t_end = 0;
    wall(start_wall, sizeof start_wall);
    if (!sc || kn_share_consumer_subscribe(sc, &topic, 1)) {
        fprintf(stderr, "kn_share_perf: %s\n", es);
        return 1;
    }
    long long count = 0, bytes = 0;
    int rc = 0;
    double waited = 0;
    while (count < n) {
        kn_records *r = NULL;
        double p0 = now_s();
        int prc = kn_share_consumer_poll(sc, 100, &r, es, sizeof es);
        if (!prc && count)
            waited += now_s() - p0;
        if (prc) {
            fprintf(stderr, "kn_share_perf: poll: %s\n", es);
            rc = 1;
            break;
        }
        size_t k = kn_records_count(r);
        if (k) {
            if (!count)
                t_first = now_s();
            for (size_t i = 0; i < k; i++) {
                size_t kl = 0, vl = 0;
                kn_records_key(r, i, &kl);
                kn_records_value(r, i, &vl);
                bytes += (long long)(kl + vl);
            }
            count += (long long)k;
            last = now_s();
        } else if ((now_s() - last) * 1000 > timeout_ms) {
            kn_records_free(r);
            printf("WARNING: Exiting before consuming the expected number of records: timeout (%d ms) "
                   "exceeded.\n",
                   timeout_ms);
            rc = 1;
            break;
        }
        kn_records_free(r);
    }
    t_end = now_s();
    wall(end_wall, sizeof end_wall);
    perf_stats st = {0, 0, 0};
    kn_share_consumer_metrics(sc, stat_visit, &st);
    kn_share_consumer_close(sc, -1);
    kn_share_consumer_destroy(sc);
    double secs = count && t_end > t0 ? t_end - t0 : 1e-9;
    double mb = (double)bytes / (1024.0 * 1024.0);
    printf("start.time, end.time, data.consumed.in.MB, MB.sec, nMsg.sec, data.consumed.in.nMsg, "
           "fetch.time.ms\n");
    printf("%s, %s, %.4f, %.4f, %.4f, %lld, %.0f\n", start_wall, end_wall, mb, mb / secs,
           (double)count / secs, count, secs * 1000);
    if (count && t_end > t_first)
        printf("from first record: %lld records, %.3f s, %.1f records/sec\n", count, t_end - t_first,
               (double)count / (t_end - t_first));
    printf("share fetches: %.0f (%.1f records/fetch), requests: %.0f, fetch-latency-avg: %.2f ms, "
           "in poll: %.3f s\n",
           st.fetches, st.fetches > 0 ? (double)count / st.fetches : 0.0, st.requests, st.latency_avg,
           waited);
    return rc;
}
