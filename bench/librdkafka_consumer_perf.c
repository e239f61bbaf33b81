/*
 * librdkafka_consumer_perf.c: the librdkafka side of the consumer
 * comparison, driven as librdkafka's maintainers drive it for speed
 * (issue #17): the batch consume API on the consumer queue
 * (rd_kafka_consume_batch_queue, up to 10,000 messages per call, the
 * call confluent-kafka-python's Consumer.consume() makes), no per-message
 * timing, and every key and value read into the checksum of
 * bench_check.h with its offsets checked per partition.
 *
 * Settings: auto.offset.reset earliest, check.crcs false, client.id
 * perf-consumer-client, enable.auto.commit false; everything else is
 * librdkafka's default unless --tuned (fetch.queue.backoff.ms=1 and
 * queued.min.messages=1000000, the two knobs INTRODUCTION.md names for
 * throughput: the defaults park a partition's fetching until the broker
 * thread's one-second timer once its local queue holds enough) or
 * --command-property k=v (security settings for the SASL_SSL scenario).
 * The library version in use (rd_kafka_version_str(), at run time, so a
 * newer librdkafka.so loaded with LD_LIBRARY_PATH shows) and the
 * effective values of the settings that shape a fetch are printed.
 *
 * --min-seconds S re-reads the topic from the beginning until S seconds
 * passed (bench_check.h, "Windows").
 *
 * Output: Java ConsumerPerformance's CSV header and line (MB = 1024^2
 * bytes), "peak RSS ..., CPU ...", and the checksum line.
 * --from-latest starts at the end instead (the idle-cost scenario).
 * --group G subscribes in group G instead of assigning every partition;
 * rebalance.time.ms is then the time until the first record, and the
 * fetch-phase figures exclude it, as ConsumerPerformance's do.
 */
#include <inttypes.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include <librdkafka/rdkafka.h>

#include "bench_check.h"

static int64_t wall_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void fmt_time(int64_t ms, char *buf, size_t n) {
    time_t s = (time_t)(ms / 1000);
    struct tm tm;
    localtime_r(&s, &tm);
    size_t len = strftime(buf, n, "%Y-%m-%d %H:%M:%S", &tm);
    snprintf(buf + len, n - len, ":%03d", (int)(ms % 1000));
}

static void usage(void) {
    fprintf(stderr, "usage: librdkafka_consumer_perf --bootstrap-server HOSTS --topic T "
                    "--num-records N\n"
                    "       [--fetch-size BYTES] [--timeout MS] [--from-latest]\n"
                    "       [--command-property k=v]... [--hide-header] [--group G] [--tuned]\n"
                    "       [--min-seconds S (re-read until S s passed)]\n");
    exit(2);
}

static void set(rd_kafka_conf_t *conf, const char *k, const char *v) {
    char es[512];
    if (rd_kafka_conf_set(conf, k, v, es, sizeof es) != RD_KAFKA_CONF_OK) {
        fprintf(stderr, "librdkafka_consumer_perf: %s=%s: %s\n", k, v, es);
        exit(2);
    }
}

static void print_setting(rd_kafka_conf_t *conf, const char *k) {
    char v[512];
    size_t n = sizeof v;
    if (rd_kafka_conf_get(conf, k, v, &n) == RD_KAFKA_CONF_OK)
        printf(" %s=%s", k, v);
}

int main(int argc, char **argv) {
    if (argc == 2 && !strcmp(argv[1], "--version")) {
        /* the library loaded at run time (LD_LIBRARY_PATH may pick a newer one) */
        printf("%s\n", rd_kafka_version_str());
        return 0;
    }
    const char *bootstrap = NULL, *topic = NULL, *group_arg = NULL;
    int64_t num = -1, timeout_ms = 10000;
    bool from_latest = false, hide_header = false, tuned = false;
    double min_seconds = 0;
    const char *fetch_size = "1048576";
    rd_kafka_conf_t *conf = rd_kafka_conf_new();
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(a, "--bootstrap-server") && v) {
            bootstrap = v;
            i++;
        } else if (!strcmp(a, "--topic") && v) {
            topic = v;
            i++;
        } else if ((!strcmp(a, "--num-records") || !strcmp(a, "--messages")) && v) {
            num = strtoll(v, NULL, 10);
            i++;
        } else if (!strcmp(a, "--group") && v) {
            group_arg = v;
            i++;
        } else if (!strcmp(a, "--fetch-size") && v) {
            fetch_size = v;
            i++;
        } else if (!strcmp(a, "--timeout") && v) {
            timeout_ms = strtoll(v, NULL, 10);
            i++;
        } else if (!strcmp(a, "--command-property") && v) {
            char kv[1024];
            snprintf(kv, sizeof kv, "%s", v);
            char *eq = strchr(kv, '=');
            if (!eq)
                usage();
            *eq = '\0';
            set(conf, kv, eq + 1);
            i++;
        } else if (!strcmp(a, "--from-latest")) {
            from_latest = true;
        } else if (!strcmp(a, "--min-seconds") && v) {
            min_seconds = strtod(v, NULL);
            i++;
        } else if (!strcmp(a, "--tuned")) {
            tuned = true;
        } else if (!strcmp(a, "--hide-header")) {
            hide_header = true;
        } else if (!strcmp(a, "--assign")) {
            /* accepted for symmetry with kn_consumer_perf: always assigns */
        } else {
            usage();
        }
    }
    if (!bootstrap || !topic || num < 0)
        usage();
    char group[64];
    /* rd_kafka_consumer_poll needs a group handle even with manual
     * assignment; nothing is joined or committed. */
    snprintf(group, sizeof group, "librdkafka-perf-%d-%lld", (int)getpid(), (long long)wall_ms());
    if (group_arg)
        snprintf(group, sizeof group, "%s", group_arg);
    set(conf, "bootstrap.servers", bootstrap);
    set(conf, "group.id", group);
    set(conf, "enable.auto.commit", "false");
    set(conf, "max.partition.fetch.bytes", fetch_size);
    set(conf, "auto.offset.reset", from_latest ? "latest" : "earliest");
    set(conf, "check.crcs", "false");
    set(conf, "client.id", "perf-consumer-client");
    if (tuned) {
        char es[512];
        if (rd_kafka_conf_set(conf, "fetch.queue.backoff.ms", "1", es, sizeof es) != RD_KAFKA_CONF_OK) {
            fprintf(stderr,
                    "librdkafka_consumer_perf: --tuned needs fetch.queue.backoff.ms, which "
                    "librdkafka %s does not have (2.1 and later): %s\n",
                    rd_kafka_version_str(), es);
            exit(2);
        }
        set(conf, "queued.min.messages", "1000000");
    }
    printf("librdkafka %s%s settings:", rd_kafka_version_str(), tuned ? " (tuned)" : "");
    static const char *shown[] = {
        "fetch.max.bytes",      "max.partition.fetch.bytes",   "fetch.wait.max.ms",
        "fetch.min.bytes",      "queued.min.messages",         "queued.max.messages.kbytes",
        "check.crcs",           "auto.offset.reset",           "fetch.queue.backoff.ms",
        "receive.buffer.bytes", "socket.receive.buffer.bytes", "security.protocol"};
    for (size_t k = 0; k < sizeof shown / sizeof *shown; k++)
        print_setting(conf, shown[k]);
    printf("\n");

    char es[512];
    rd_kafka_t *rk = rd_kafka_new(RD_KAFKA_CONSUMER, conf, es, sizeof es);
    if (!rk) {
        fprintf(stderr, "rd_kafka_new: %s\n", es);
        return 1;
    }
    rd_kafka_poll_set_consumer(rk);
    if (!hide_header)
        printf("start.time, end.time, data.consumed.in.MB, MB.sec, data.consumed.in.nMsg, "
               "nMsg.sec, rebalance.time.ms, fetch.time.ms, fetch.MB.sec, fetch.nMsg.sec\n");
    int64_t start_ms = wall_ms(), rebalance_ms = 0;
    if (group_arg) {
        rd_kafka_topic_partition_list_t *subs = rd_kafka_topic_partition_list_new(1);
        rd_kafka_topic_partition_list_add(subs, topic, RD_KAFKA_PARTITION_UA);
        rd_kafka_resp_err_t serr = rd_kafka_subscribe(rk, subs);
        rd_kafka_topic_partition_list_destroy(subs);
        if (serr) {
            fprintf(stderr, "subscribe: %s\n", rd_kafka_err2str(serr));
            rd_kafka_destroy(rk);
            return 1;
        }
        goto consume;
    }

    rd_kafka_topic_t *rkt = rd_kafka_topic_new(rk, topic, NULL);
    const struct rd_kafka_metadata *md = NULL;
    rd_kafka_resp_err_t err = rd_kafka_metadata(rk, 0, rkt, &md, 30000);
    if (err || md->topic_cnt != 1 || md->topics[0].err || md->topics[0].partition_cnt <= 0) {
        fprintf(stderr, "partitions of %s: %s\n", topic,
                rd_kafka_err2str(err             ? err
                                 : md->topic_cnt ? md->topics[0].err
                                                 : 0));
        if (md)
            rd_kafka_metadata_destroy(md);
        rd_kafka_topic_destroy(rkt);
        rd_kafka_destroy(rk);
        return 1;
    }
    rd_kafka_topic_partition_list_t *parts = rd_kafka_topic_partition_list_new(md->topics[0].partition_cnt);
    for (int i = 0; i < md->topics[0].partition_cnt; i++)
        rd_kafka_topic_partition_list_add(parts, topic, md->topics[0].partitions[i].id)->offset =
            from_latest ? RD_KAFKA_OFFSET_END : RD_KAFKA_OFFSET_BEGINNING;
    rd_kafka_metadata_destroy(md);
    rd_kafka_topic_destroy(rkt);
    err = rd_kafka_assign(rk, parts);
    rd_kafka_topic_partition_list_destroy(parts);
    if (err) {
        fprintf(stderr, "assign: %s\n", rd_kafka_err2str(err));
        rd_kafka_destroy(rk);
        return 1;
    }

consume:;
    rd_kafka_queue_t *queue = rd_kafka_queue_get_consumer(rk);
    enum { BATCH = 10000 };
    static rd_kafka_message_t *msgs[BATCH];
    static bench_window win;
    int64_t messages = 0, bytes = 0;
    int64_t now = wall_ms(), last_consumed = now;
    int failed = 0, done = num == 0, seek = 0;
    while (!failed && !done && now - last_consumed <= timeout_ms) {
        ssize_t got = rd_kafka_consume_batch_queue(queue, 100, msgs, BATCH);
        now = wall_ms();
        if (got < 0) {
            fprintf(stderr, "consume: %s\n", rd_kafka_err2str(rd_kafka_last_error()));
            failed = 1;
            break;
        }
        for (ssize_t i = 0; i < got; i++) {
            rd_kafka_message_t *m = msgs[i];
            if (m->err) {
                if (m->err != RD_KAFKA_RESP_ERR__PARTITION_EOF) {
                    fprintf(stderr, "consume: %s\n", rd_kafka_message_errstr(m));
                    failed = 1;
                }
            } else if (!done && !seek) {
                if (group_arg && messages == 0)
                    rebalance_ms = now - start_ms; /* first record: assignment done */
                last_consumed = now;
                messages++;
                bytes += (int64_t)m->key_len + (int64_t)m->len;
                bench_window_record(&win, m->partition, m->offset, m->key, (int64_t)m->key_len, m->payload,
                                    (int64_t)m->len);
                if (win.cur.records == num) {
                    if (bench_window_pass_done(&win, min_seconds))
                        done = 1;
                    else
                        seek = 1; /* the rest of this batch is before the seek */
                }
            }
            rd_kafka_message_destroy(m);
        }
        if (seek) {
            /* another pass: every assigned partition back to its beginning */
            rd_kafka_topic_partition_list_t *own = NULL;
            rd_kafka_resp_err_t aerr = rd_kafka_assignment(rk, &own);
            rd_kafka_error_t *serr = NULL;
            if (!aerr) {
                for (int p = 0; p < own->cnt; p++)
                    own->elems[p].offset = RD_KAFKA_OFFSET_BEGINNING;
                serr = rd_kafka_seek_partitions(rk, own, 10000);
            }
            if (aerr || serr) {
                fprintf(stderr, "seek to beginning: %s\n",
                        aerr ? rd_kafka_err2str(aerr) : rd_kafka_error_string(serr));
                failed = 1;
            }
            if (serr)
                rd_kafka_error_destroy(serr);
            if (own)
                rd_kafka_topic_partition_list_destroy(own);
            seek = 0;
        }
    }
    rd_kafka_queue_destroy(queue);
    if (!win.passes)
        printf("WARNING: Exiting before consuming the expected number of messages: timeout (%lld "
               "ms) exceeded. You can use the --timeout option to increase the timeout.\n",
               (long long)timeout_ms);
    int64_t end_ms = wall_ms();
    rd_kafka_consumer_close(rk);
    rd_kafka_destroy(rk);

    double elapsed_s = (double)(end_ms - start_ms) / 1000.0;
    if (elapsed_s <= 0)
        elapsed_s = 0.001;
    double mb = (double)bytes / (1024.0 * 1024.0);
    char t0[64], t1[64];
    fmt_time(start_ms, t0, sizeof t0);
    fmt_time(end_ms, t1, sizeof t1);
    double fetch_s = (double)(end_ms - start_ms - rebalance_ms) / 1000.0;
    if (fetch_s <= 0)
        fetch_s = 0.001;
    printf("%s, %s, %.4f, %.4f, %lld, %.4f, %lld, %lld, %.4f, %.4f\n", t0, t1, mb, mb / elapsed_s,
           (long long)messages, (double)messages / elapsed_s, (long long)rebalance_ms,
           (long long)(end_ms - start_ms - rebalance_ms), mb / fetch_s, (double)messages / fetch_s);
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    printf("peak RSS %.1f MB, CPU %.2f s user + %.2f s system\n", (double)ru.ru_maxrss / 1024.0,
           (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec / 1e6,
           (double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec / 1e6);
    if (bench_window_report(&win))
        failed = 1;
    return failed || !win.passes ? 1 : 0;
}
