/*
 * kn_consumer_perf.c: consumer throughput benchmark mirroring Java's
 * ConsumerPerformance (kafka-consumer-perf-test): the same options where
 * they apply (--bootstrap-server, --topic, --num-records/--messages,
 * --group, --fetch-size, --socket-buffer-size, --timeout, --from-latest,
 * --hide-header, --consumer.config/--command-config, --command-property
 * k=v), the same
 * poll(100 ms) loop counting key + value bytes, the same CSV header,
 * columns and units, then one line with peak RSS and CPU seconds
 * (getrusage) to compare with the JVM.
 *
 * Without --assign it subscribes with --group (a fresh group per run, as
 * ConsumerPerformance does) and, like Java, reports rebalance.time.ms as
 * subscribe -> the first partitions assigned, and fetch.time.ms as the
 * rest of the run. --assign (manual assignment of every partition, no
 * group) reports rebalance.time.ms 0 and fetch.time.ms the whole run.
 *
 * Every record's key and value go into the checksum of bench_check.h,
 * with its offsets checked per partition (issue #17): the checksum line
 * is printed last, and a skipped or repeated offset fails the run.
 * --min-seconds S re-reads the topic from the beginning until S seconds
 * passed since the first record (bench_check.h, "Windows"); --defaults
 * leaves fetch size, socket buffer and check.crcs at our defaults.
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#include "bench_check.h"
#include "bench_lat.h"
#include "kafka_native.h"

static int64_t wall_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Java's default date format: yyyy-MM-dd HH:mm:ss:SSS (local time). */
static void fmt_time(int64_t ms, char *buf, size_t n) {
    time_t s = (time_t)(ms / 1000);
    struct tm tm;
    localtime_r(&s, &tm);
    size_t len = strftime(buf, n, "%Y-%m-%d %H:%M:%S", &tm);
    snprintf(buf + len, n - len, ":%03d", (int)(ms % 1000));
}

/* Subscribe mode: when the first partitions were assigned (wall ms). */
static int64_t assigned_at_ms;

static int on_rebalance(kn_consumer *c, kn_rebalance_event ev, const kn_topic_partition_list *parts,
                        void *opaque) {
    (void)c;
    (void)parts;
    (void)opaque;
    if (ev == KN_REBALANCE_ASSIGNED && assigned_at_ms == 0)
        assigned_at_ms = wall_ms();
    return 0;
}

static int assign_all(kn_consumer *c, const char *topic) {
    kn_topic_partition_list *parts = NULL;
    int rc = kn_consumer_partitions_for(c, topic, 30000, &parts);
    if (rc != KN_OK)
        return rc;
    rc = kn_consumer_assign(c, parts);
    kn_topic_partition_list_destroy(parts);
    return rc;
}

static void usage(void) {
    fprintf(stderr, "usage: kn_consumer_perf --bootstrap-server HOSTS --topic T --num-records N\n"
                    "       (--assign | --group G) [--fetch-size BYTES] [--socket-buffer-size BYTES]\n"
                    "       [--timeout MS] [--from-latest]\n"
                    "       [--consumer.config FILE] [--command-property k=v]... [--hide-header]\n"
                    "       [--poll-latency (print poll-call latency percentiles, for bench/run)]\n"
                    "       [--defaults (our defaults, not ConsumerPerformance's fetch size, socket\n"
                    "        buffer and check.crcs)] [--min-seconds S (re-read until S s passed)]\n");
    exit(1);
}

static void set(kn_conf *conf, const char *k, const char *v) {
    char es[512];
    if (kn_conf_set(conf, k, v, es, sizeof es) != KN_OK) {
        fprintf(stderr, "%s\n", es);
        exit(1);
    }
}

int main(int argc, char **argv) {
    const char *bootstrap = NULL, *topic = NULL, *group = NULL, *config_file = NULL;
    int64_t num = -1, timeout_ms = 10000;
    bool assign = false, from_latest = false, hide_header = false, poll_latency = false;
    bool defaults = false;
    double min_seconds = 0;
    bench_lat polls = {0};
    char fetch_size[32] = "1048576";
    char socket_buffer[32] = "2097152"; /* ConsumerPerformance's default */
    kn_conf *conf = kn_conf_new(KN_CLIENT_CONSUMER);
    char es[512];
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        const char *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (strcmp(a, "--bootstrap-server") == 0 && v) {
            bootstrap = v;
            i++;
        } else if (strcmp(a, "--topic") == 0 && v) {
            topic = v;
            i++;
        } else if ((strcmp(a, "--num-records") == 0 || strcmp(a, "--messages") == 0) && v) {
            num = strtoll(v, NULL, 10);
            i++;
        } else if (strcmp(a, "--group") == 0 && v) {
            group = v;
            i++;
        } else if (strcmp(a, "--fetch-size") == 0 && v) {
            snprintf(fetch_size, sizeof fetch_size, "%s", v);
            i++;
        } else if (strcmp(a, "--socket-buffer-size") == 0 && v) {
            snprintf(socket_buffer, sizeof socket_buffer, "%s", v);
            i++;
        } else if (strcmp(a, "--timeout") == 0 && v) {
            timeout_ms = strtoll(v, NULL, 10);
            i++;
        } else if ((strcmp(a, "--consumer.config") == 0 || strcmp(a, "--command-config") == 0) && v) {
            config_file = v;
            i++;
        } else if (strcmp(a, "--command-property") == 0 && v) {
            char kv[1024];
            snprintf(kv, sizeof kv, "%s", v);
            char *eq = strchr(kv, '=');
            if (!eq)
                usage();
            *eq = '\0';
            set(conf, kv, eq + 1);
            i++;
        } else if (strcmp(a, "--min-seconds") == 0 && v) {
            min_seconds = strtod(v, NULL);
            i++;
        } else if (strcmp(a, "--defaults") == 0) {
            defaults = true;
        } else if (strcmp(a, "--assign") == 0) {
            assign = true;
        } else if (strcmp(a, "--from-latest") == 0) {
            from_latest = true;
        } else if (strcmp(a, "--poll-latency") == 0) {
            poll_latency = true;
        } else if (strcmp(a, "--hide-header") == 0) {
            hide_header = true;
        } else {
            usage();
        }
    }
    if (!bootstrap || !topic || num < 0)
        usage();
    if (!assign && !group) {
        fprintf(stderr, "kn_consumer_perf: give --group G (subscribe) or --assign (manual "
                        "assignment of every partition)\n");
        return 1;
    }
    if (assign && group)
        fprintf(stderr, "kn_consumer_perf: --group %s ignored: --assign uses no group\n", group);
    if (!assign)
        set(conf, "group.id", group);
    if (config_file && kn_conf_load_properties(conf, config_file, es, sizeof es) != KN_OK) {
        fprintf(stderr, "%s\n", es);
        return 1;
    }
    set(conf, "bootstrap.servers", bootstrap);
    set(conf, "auto.offset.reset", from_latest ? "latest" : "earliest");
    set(conf, "client.id", "perf-consumer-client");
    set(conf, "enable.auto.commit", "false"); /* a benchmark commits nothing */
    if (defaults)
        goto configured; /* the client's own defaults otherwise (issue #17) */
    set(conf, "max.partition.fetch.bytes", fetch_size);
    /* ConsumerPerformance sets receive.buffer.bytes from this flag (2 MiB
     * unless given), over the consumer's 64 KiB default: with 64 KiB the
     * TCP window, not the client, bounds large fetches on loopback. */
    set(conf, "receive.buffer.bytes", socket_buffer);
    set(conf, "check.crcs", "false"); /* as ConsumerPerformance does */

configured:;

    kn_consumer *c = kn_consumer_new(conf, es, sizeof es);
    kn_conf_destroy(conf);
    if (!c) {
        fprintf(stderr, "kn_consumer_new: %s\n", es);
        return 1;
    }
    if (!hide_header)
        printf("start.time, end.time, data.consumed.in.MB, MB.sec, data.consumed.in.nMsg, "
               "nMsg.sec, rebalance.time.ms, fetch.time.ms, fetch.MB.sec, fetch.nMsg.sec\n");
    int64_t start_ms = wall_ms();
    int rc = assign ? assign_all(c, topic) : kn_consumer_subscribe(c, &topic, 1, on_rebalance, NULL);
    if (rc != KN_OK) {
        fprintf(stderr, "%s: %s\n", assign ? "assign" : "subscribe", kn_err_name(rc));
        kn_consumer_destroy(c);
        return 1;
    }
    int64_t messages = 0, bytes = 0;
    int64_t now = wall_ms(), last_consumed = now;
    static bench_window win;
    bool done = num == 0;
    while (!done && now - last_consumed <= timeout_ms) {
        kn_records *recs = NULL;
        int64_t poll_start_us = poll_latency ? bench_lat_now_us() : 0;
        rc = kn_consumer_poll(c, 100, &recs, es, sizeof es);
        if (poll_latency)
            bench_lat_add(&polls, bench_lat_now_us() - poll_start_us);
        now = wall_ms();
        if (rc != KN_OK) {
            fprintf(stderr, "poll: %s: %s\n", kn_err_name(rc), es);
            break;
        }
        size_t n = kn_records_count(recs);
        if (n)
            last_consumed = now;
        for (size_t i = 0; i < n; i++) {
            size_t klen = 0, vlen = 0;
            messages++;
            const void *k = kn_records_key(recs, i, &klen);
            const void *v = kn_records_value(recs, i, &vlen);
            bytes += (int64_t)(k ? klen : 0) + (int64_t)(v ? vlen : 0);
            bench_window_record(&win, kn_records_partition(recs, i), kn_records_offset(recs, i), k,
                                (int64_t)klen, v, (int64_t)vlen);
            if (win.cur.records == num) {
                if (bench_window_pass_done(&win, min_seconds)) {
                    done = true;
                    break;
                }
                /* another pass: the rest of this batch is before the seek */
                kn_topic_partition_list *own = kn_consumer_assignment(c);
                rc = own ? kn_consumer_seek_to_beginning(c, own) : KN_ERR__STATE;
                kn_topic_partition_list_destroy(own);
                if (rc != KN_OK) {
                    fprintf(stderr, "seek to beginning: %s\n", kn_err_name(rc));
                    done = true;
                }
                break;
            }
        }
        kn_records_free(recs);
    }
    if (!win.passes)
        printf("WARNING: Exiting before consuming the expected number of messages: timeout (%lld "
               "ms) exceeded. You can use the --timeout option to increase the timeout.\n",
               (long long)timeout_ms);
    int64_t end_ms = wall_ms();
    kn_consumer_stats st = {.size = sizeof st};
    kn_consumer_get_stats(c, &st);
    kn_consumer_close(c, -1);
    kn_consumer_destroy(c);

    double elapsed_s = (double)(end_ms - start_ms) / 1000.0;
    int64_t rebalance_ms = assigned_at_ms > 0 ? assigned_at_ms - start_ms : 0;
    int64_t fetch_ms = (end_ms - start_ms) - rebalance_ms;
    double mb = (double)bytes / (1024.0 * 1024.0);
    char t0[64], t1[64];
    fmt_time(start_ms, t0, sizeof t0);
    fmt_time(end_ms, t1, sizeof t1);
    printf("%s, %s, %.4f, %.4f, %lld, %.4f, %lld, %lld, %.4f, %.4f\n", t0, t1, mb, mb / elapsed_s,
           (long long)messages, (double)messages / elapsed_s, (long long)rebalance_ms, (long long)fetch_ms,
           mb / ((double)fetch_ms / 1000.0), (double)messages / ((double)fetch_ms / 1000.0));
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    printf("peak RSS %.1f MB, CPU %.2f s user + %.2f s system\n", (double)ru.ru_maxrss / 1024.0,
           (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec / 1e6,
           (double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec / 1e6);
    printf("fetches %lld (%lld incremental, %lld failed), avg fetch latency %.2f ms, max %.2f ms, "
           "%.1f MB fetched, %lld polls\n",
           (long long)st.fetch_requests, (long long)st.fetch_incremental, (long long)st.fetch_errors,
           st.fetch_requests ? (double)st.fetch_latency_us_total / (double)st.fetch_requests / 1000.0 : 0.0,
           (double)st.fetch_latency_us_max / 1000.0, (double)st.fetch_response_bytes / (1024.0 * 1024.0),
           (long long)st.polls);
    if (poll_latency)
        bench_lat_report(&polls);
    int bad = bench_window_report(&win);
    return !win.passes || bad ? 1 : 0;
}
