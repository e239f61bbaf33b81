/*
 * kn_send_cost.c: the producer's per-record CPU cost, made to be counted
 * in instructions (valgrind --tool=callgrind, bench/send-cost) rather
 * than timed. Sends records one at a time as a request handler does:
 * kn_producer_send then kn_producer_poll(0) per record, with a delivery
 * callback or without one.
 *
 *   kn_send_cost --bootstrap-server B --topic T --records N
 *                [--record-size BYTES] [--warmup N] [--callback]
 *                [--rate RECORDS_PER_S] [--producer-props k=v ...]
 *
 * The warm-up records are sent and flushed first (metadata, connection,
 * producer id), so what two runs with different --records differ by is
 * only the per-record work. Exits 1 when a record failed or fewer reports
 * came than records sent (with --callback). --rate paces the sends
 * (a sleep between records, as request arrivals space them; the sleeps'
 * own system calls are clock_nanosleep). The last line has the process's
 * CPU seconds and context switches (getrusage).
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#include "kafka_native.h"

typedef struct counts {
    int64_t ok, failed;
} counts;

static void on_delivery(kn_producer *p, const kn_delivery *d, void *opaque) {
    (void)p;
    counts *c = opaque;
    if (kn_delivery_error(d)) {
        if (c->failed++ < 5)
            fprintf(stderr, "delivery failed: %s: %s\n", kn_err_name(kn_delivery_error(d)), kn_delivery_errstr(d));
    } else {
        c->ok++;
    }
}

static long gap_ns; /* --rate: pause between records */

static int send_n(kn_producer *p, const char *topic, const char *value, size_t len, int64_t n) {
    char es[512];
    for (int64_t i = 0; i < n; i++) {
        if (gap_ns > 0) {
            struct timespec ts = {gap_ns / 1000000000L, gap_ns % 1000000000L};
            nanosleep(&ts, NULL);
        }
        kn_record_out rec = KN_RECORD_OUT_INIT;
        rec.topic = topic;
        rec.value = value;
        rec.value_len = len;
        int rc;
        while ((rc = kn_producer_send(p, &rec, es, sizeof es)) == KN_ERR__QUEUE_FULL)
            kn_producer_poll(p, 1);
        if (rc) {
            fprintf(stderr, "send: %s: %s\n", kn_err_name(rc), es);
            return 1;
        }
        kn_producer_poll(p, 0);
    }
    return 0;
}

int main(int argc, char **argv) {
    const char *bootstrap = NULL, *topic = NULL;
    int64_t records = 0, warmup = 200;
    size_t size = 100;
    bool callback = false;
    char es[512];
    kn_conf *conf = kn_conf_new(KN_CLIENT_PRODUCER);
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--bootstrap-server") && i + 1 < argc)
            bootstrap = argv[++i];
        else if (!strcmp(argv[i], "--topic") && i + 1 < argc)
            topic = argv[++i];
        else if (!strcmp(argv[i], "--records") && i + 1 < argc)
            records = atoll(argv[++i]);
        else if (!strcmp(argv[i], "--warmup") && i + 1 < argc)
            warmup = atoll(argv[++i]);
        else if (!strcmp(argv[i], "--record-size") && i + 1 < argc)
            size = (size_t)atoll(argv[++i]);
        else if (!strcmp(argv[i], "--rate") && i + 1 < argc)
            gap_ns = (long)(1e9 / atof(argv[++i]));
        else if (!strcmp(argv[i], "--callback"))
            callback = true;
        else if (!strcmp(argv[i], "--producer-props")) {
            while (i + 1 < argc && strchr(argv[i + 1], '=') && strncmp(argv[i + 1], "--", 2)) {
                char kv[512];
                snprintf(kv, sizeof kv, "%s", argv[++i]);
                char *eq = strchr(kv, '=');
                *eq = '\0';
                if (kn_conf_set(conf, kv, eq + 1, es, sizeof es)) {
                    fprintf(stderr, "%s\n", es);
                    return 2;
                }
            }
        } else {
            fprintf(stderr, "usage: kn_send_cost --bootstrap-server B --topic T --records N [--record-size BYTES] "
                            "[--warmup N] [--callback] [--producer-props k=v ...]\n");
            return 2;
        }
    }
    if (!bootstrap || !topic || records <= 0)
        return 2;
    if (kn_conf_set(conf, "bootstrap.servers", bootstrap, es, sizeof es)) {
        fprintf(stderr, "%s\n", es);
        return 2;
    }
    counts c = {0, 0};
    kn_producer *p = kn_producer_new(conf, callback ? on_delivery : NULL, &c, es, sizeof es);
    kn_conf_destroy(conf);
    if (!p) {
        fprintf(stderr, "producer: %s\n", es);
        return 1;
    }
    char *value = malloc(size ? size : 1);
    memset(value, 'x', size);
    int rc = send_n(p, topic, value, size, warmup);
    if (!rc && kn_producer_flush(p, 60000))
        rc = 1;
    if (!rc)
        rc = send_n(p, topic, value, size, records);
    if (!rc && kn_producer_flush(p, 60000)) {
        fprintf(stderr, "flush timed out\n");
        rc = 1;
    }
    kn_producer_stats st = {.size = sizeof st};
    kn_producer_get_stats(p, &st);
    kn_producer_close(p, 10000);
    kn_producer_destroy(p);
    free(value);
    if (st.records_failed > 0 || (callback && c.ok != warmup + records))
        rc = 1;
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    printf("records %lld failed %lld batches %lld requests %lld reports %lld\n",
           (long long)st.records_sent, (long long)st.records_failed, (long long)st.batches_sent,
           (long long)st.requests_sent, (long long)c.ok);
    printf("cpu %.3f user %.3f sys voluntary_switches %ld involuntary_switches %ld\n",
           (double)ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6, (double)ru.ru_stime.tv_sec + ru.ru_stime.tv_usec / 1e6,
           ru.ru_nvcsw, ru.ru_nivcsw);
    return rc;
}
