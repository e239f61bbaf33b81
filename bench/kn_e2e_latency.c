/*
 * kn_e2e_latency.c: end-to-end latency of our client at a fixed rate
 * (issue #17), as bench_e2e.h describes: a producer thread sends
 * --num-records 100-byte records at --throughput records/s to partition 0
 * of --topic (--producer-props k=v... for its settings), while the main
 * thread's consumer, assigned partition 0 from the beginning at our
 * defaults, reads them; latency = receipt - send time carried in the
 * value. Each handle is used by one thread only (docs/architecture.md).
 *
 *   kn_e2e_latency --bootstrap-server H --topic T --num-records N
 *                  --throughput R [--timeout MS] [--producer-props k=v ...]
 */
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_e2e.h"
#include "kafka_native.h"

typedef struct sender {
    kn_producer *p;
    const char *topic;
    int64_t num;
    double rate;
    int64_t start_us;
    int failed;
    char errstr[512];
} sender;

static void on_delivery(kn_producer *p, const kn_delivery *d, void *opaque) {
    (void)p;
    sender *s = opaque;
    if (kn_delivery_error(d) && !s->failed) {
        s->failed = 1;
        snprintf(s->errstr, sizeof s->errstr, "delivery: %s", kn_delivery_errstr(d));
    }
}

static void *send_all(void *arg) {
    sender *s = arg;
    char value[BENCH_E2E_SIZE];
    kn_record_out rec = KN_RECORD_OUT_INIT;
    rec.topic = s->topic;
    rec.partition = 0;
    rec.value = value;
    rec.value_len = sizeof value;
    for (int64_t i = 0; i < s->num && !s->failed; i++) {
        bench_e2e_stamp(value, bench_e2e_pace(s->start_us, i, s->rate));
        int rc = kn_producer_send(s->p, &rec, s->errstr, sizeof s->errstr);
        if (rc) {
            s->failed = 1;
            break;
        }
        kn_producer_poll(s->p, 0);
    }
    if (kn_producer_flush(s->p, 30000) && !s->failed) {
        s->failed = 1;
        snprintf(s->errstr, sizeof s->errstr, "flush did not complete in 30 s");
    }
    return NULL;
}

static void usage(void) {
    fprintf(stderr, "usage: kn_e2e_latency --bootstrap-server H --topic T --num-records N "
                    "--throughput R [--timeout MS] [--producer-props k=v ...]\n");
    exit(2);
}

static int set(kn_conf *conf, const char *kv) {
    char k[256], es[512];
    const char *eq = strchr(kv, '=');
    if (!eq || (size_t)(eq - kv) >= sizeof k)
        return -1;
    memcpy(k, kv, (size_t)(eq - kv));
    k[eq - kv] = '\0';
    if (kn_conf_set(conf, k, eq + 1, es, sizeof es) != KN_OK) {
        fprintf(stderr, "kn_e2e_latency: %s\n", es);
        return -1;
    }
    return 0;
}

int main(int argc, char **argv) {
    const char *bootstrap = NULL, *topic = NULL;
    int64_t num = -1, timeout_ms = 30000;
    double rate = 0;
    char es[512];
    kn_conf *pconf = kn_conf_new(KN_CLIENT_PRODUCER);
    kn_conf *cconf = kn_conf_new(KN_CLIENT_CONSUMER);
    int rc = 1;
    kn_producer *p = NULL;
    kn_consumer *c = NULL;
    kn_topic_partition_list *parts = NULL;
    bench_e2e e2e = {0};
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(a, "--bootstrap-server") && v)
            bootstrap = argv[++i];
        else if (!strcmp(a, "--topic") && v)
            topic = argv[++i];
        else if (!strcmp(a, "--num-records") && v)
            num = strtoll(argv[++i], NULL, 10);
        else if (!strcmp(a, "--throughput") && v)
            rate = strtod(argv[++i], NULL);
        else if (!strcmp(a, "--timeout") && v)
            timeout_ms = strtoll(argv[++i], NULL, 10);
        else if (!strcmp(a, "--producer-props")) {
            while (i + 1 < argc && strncmp(argv[i + 1], "--", 2) != 0)
                if (set(pconf, argv[++i]))
                    return 2;
        } else
            usage();
    }
    if (!bootstrap || !topic || num <= 0 || rate <= 0)
        usage();
    if (set(pconf, "client.id=e2e-producer") || set(cconf, "client.id=e2e-consumer") ||
        set(cconf, "auto.offset.reset=earliest") || set(cconf, "enable.auto.commit=false") ||
        kn_conf_set(pconf, "bootstrap.servers", bootstrap, es, sizeof es) ||
        kn_conf_set(cconf, "bootstrap.servers", bootstrap, es, sizeof es))
        goto done;
    sender s = {.topic = topic, .num = num, .rate = rate};
    p = kn_producer_new(pconf, on_delivery, &s, es, sizeof es);
    c = kn_consumer_new(cconf, es, sizeof es);
    if (!p || !c || bench_e2e_init(&e2e, num, rate)) {
        fprintf(stderr, "kn_e2e_latency: %s\n", p && c ? "out of memory" : es);
        goto done;
    }
    parts = kn_topic_partition_list_new();
    if (!parts || kn_topic_partition_list_add(parts, topic, 0) < 0 || kn_consumer_assign(c, parts)) {
        fprintf(stderr, "kn_e2e_latency: cannot assign %s-0\n", topic);
        goto done;
    }
    /* The consumer is ready (its first Fetch parked at the empty log)
     * before the first record is sent. */
    kn_records *recs = NULL;
    if (kn_consumer_poll(c, 1000, &recs, es, sizeof es) == KN_OK)
        kn_records_free(recs);
    s.p = p;
    s.start_us = bench_e2e_now_us();
    pthread_t th;
    if (pthread_create(&th, NULL, send_all, &s)) {
        fprintf(stderr, "kn_e2e_latency: cannot start the producer thread\n");
        goto done;
    }
    int64_t last = bench_e2e_now_us();
    while (e2e.received < num && bench_e2e_now_us() - last <= timeout_ms * 1000) {
        recs = NULL;
        if (kn_consumer_poll(c, 100, &recs, es, sizeof es) != KN_OK) {
            fprintf(stderr, "kn_e2e_latency: poll: %s\n", es);
            break;
        }
        int64_t now = bench_e2e_now_us();
        size_t n = kn_records_count(recs);
        for (size_t i = 0; i < n; i++) {
            size_t len = 0;
            const void *v = kn_records_value(recs, i, &len);
            bench_e2e_received(&e2e, v, v ? len : 0, now);
        }
        if (n)
            last = now;
        kn_records_free(recs);
    }
    pthread_join(th, NULL);
    if (s.failed)
        fprintf(stderr, "kn_e2e_latency: producer: %s\n", s.errstr);
    else if (e2e.received < num)
        fprintf(stderr, "kn_e2e_latency: %lld of %lld records arrived\n", (long long)e2e.received,
                (long long)num);
    else {
        bench_e2e_report(&e2e, rate);
        rc = 0;
    }
done:
    kn_topic_partition_list_destroy(parts);
    if (c) {
        kn_consumer_close(c, -1);
        kn_consumer_destroy(c);
    }
    if (p) {
        kn_producer_close(p, 10000);
        kn_producer_destroy(p);
    }
    kn_conf_destroy(pconf);
    kn_conf_destroy(cconf);
    free(e2e.lat_us);
    return rc;
}
