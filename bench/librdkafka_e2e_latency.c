/*
 * librdkafka_e2e_latency.c: the librdkafka side of the end-to-end
 * latency comparison, the same measurement as bench/kn_e2e_latency.c
 * (bench_e2e.h): a producer thread sends --num-records 100-byte records
 * at --throughput records/s to partition 0 (rd_kafka_producev, then
 * rd_kafka_poll(0) for delivery reports, as librdkafka's examples do),
 * settings from --producer-props k=v...; the main thread's consumer,
 * partition 0 assigned from the beginning at librdkafka's defaults, reads
 * with the batch API (rd_kafka_consume_batch_queue). The library version
 * loaded at run time is printed.
 *
 *   librdkafka_e2e_latency --bootstrap-server H --topic T --num-records N
 *                          --throughput R [--timeout MS] [--producer-props k=v ...]
 */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <librdkafka/rdkafka.h>

#include "bench_e2e.h"

typedef struct sender {
    rd_kafka_t *rk;
    const char *topic;
    int64_t num;
    double rate;
    int64_t start_us;
    volatile int failed;
    char errstr[512];
} sender;

static void on_delivery(rd_kafka_t *rk, const rd_kafka_message_t *m, void *opaque) {
    (void)rk;
    sender *s = opaque;
    if (m->err && !s->failed) {
        s->failed = 1;
        snprintf(s->errstr, sizeof s->errstr, "delivery: %s", rd_kafka_err2str(m->err));
    }
}

static void *send_all(void *arg) {
    sender *s = arg;
    char value[BENCH_E2E_SIZE];
    for (int64_t i = 0; i < s->num && !s->failed; i++) {
        bench_e2e_stamp(value, bench_e2e_pace(s->start_us, i, s->rate));
        rd_kafka_resp_err_t err = rd_kafka_producev(
            s->rk, RD_KAFKA_V_TOPIC(s->topic), RD_KAFKA_V_PARTITION(0), RD_KAFKA_V_VALUE(value, sizeof value),
            RD_KAFKA_V_MSGFLAGS(RD_KAFKA_MSG_F_COPY), RD_KAFKA_V_END);
        if (err) {
            s->failed = 1;
            snprintf(s->errstr, sizeof s->errstr, "produce: %s", rd_kafka_err2str(err));
            break;
        }
        rd_kafka_poll(s->rk, 0);
    }
    if (rd_kafka_flush(s->rk, 30000) && !s->failed) {
        s->failed = 1;
        snprintf(s->errstr, sizeof s->errstr, "flush did not complete in 30 s");
    }
    return NULL;
}

static void usage(void) {
    fprintf(stderr, "usage: librdkafka_e2e_latency --bootstrap-server H --topic T --num-records N "
                    "--throughput R [--timeout MS] [--producer-props k=v ...]\n");
    exit(2);
}

static int set(rd_kafka_conf_t *conf, const char *kv) {
    char k[256], es[512];
    const char *eq = strchr(kv, '=');
    if (!eq || (size_t)(eq - kv) >= sizeof k)
        return -1;
    memcpy(k, kv, (size_t)(eq - kv));
    k[eq - kv] = '\0';
    if (rd_kafka_conf_set(conf, k, eq + 1, es, sizeof es) != RD_KAFKA_CONF_OK) {
        fprintf(stderr, "librdkafka_e2e_latency: %s: %s\n", kv, es);
        return -1;
    }
    return 0;
}

int main(int argc, char **argv) {
    const char *bootstrap = NULL, *topic = NULL;
    int64_t num = -1, timeout_ms = 30000;
    double rate = 0;
    char es[512];
    rd_kafka_conf_t *pconf = rd_kafka_conf_new(), *cconf = rd_kafka_conf_new();
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
    char group[64];
    snprintf(group, sizeof group, "group.id=e2e-%d", (int)getpid());
    sender s = {.topic = topic, .num = num, .rate = rate};
    rd_kafka_conf_set_dr_msg_cb(pconf, on_delivery);
    rd_kafka_conf_set_opaque(pconf, &s);
    char bs[512];
    snprintf(bs, sizeof bs, "bootstrap.servers=%s", bootstrap);
    if (set(pconf, bs) || set(cconf, bs) || set(cconf, group) || set(cconf, "enable.auto.commit=false") ||
        set(cconf, "auto.offset.reset=earliest"))
        return 2;
    printf("librdkafka %s\n", rd_kafka_version_str());
    rd_kafka_t *prod = rd_kafka_new(RD_KAFKA_PRODUCER, pconf, es, sizeof es);
    if (!prod) {
        fprintf(stderr, "librdkafka_e2e_latency: producer: %s\n", es);
        return 1;
    }
    rd_kafka_t *cons = rd_kafka_new(RD_KAFKA_CONSUMER, cconf, es, sizeof es);
    if (!cons) {
        fprintf(stderr, "librdkafka_e2e_latency: consumer: %s\n", es);
        rd_kafka_destroy(prod);
        return 1;
    }
    rd_kafka_poll_set_consumer(cons);
    rd_kafka_topic_partition_list_t *parts = rd_kafka_topic_partition_list_new(1);
    rd_kafka_topic_partition_list_add(parts, topic, 0)->offset = RD_KAFKA_OFFSET_BEGINNING;
    rd_kafka_resp_err_t err = rd_kafka_assign(cons, parts);
    rd_kafka_topic_partition_list_destroy(parts);
    bench_e2e e2e = {0};
    int rc = 1;
    if (err || bench_e2e_init(&e2e, num, rate)) {
        fprintf(stderr, "librdkafka_e2e_latency: assign: %s\n", rd_kafka_err2str(err));
        goto done_early;
    }
    rd_kafka_queue_t *q = rd_kafka_queue_get_consumer(cons);
    enum { BATCH = 1000 };
    static rd_kafka_message_t *msgs[BATCH];
    /* Let the consumer start fetching before the first record is sent. */
    ssize_t got = rd_kafka_consume_batch_queue(q, 1000, msgs, BATCH);
    for (ssize_t i = 0; i < got; i++)
        rd_kafka_message_destroy(msgs[i]);
    s.rk = prod;
    s.start_us = bench_e2e_now_us();
    pthread_t th;
    if (pthread_create(&th, NULL, send_all, &s)) {
        fprintf(stderr, "librdkafka_e2e_latency: cannot start the producer thread\n");
        rd_kafka_queue_destroy(q);
        goto done_early;
    }
    int64_t last = bench_e2e_now_us();
    while (e2e.received < num && bench_e2e_now_us() - last <= timeout_ms * 1000) {
        got = rd_kafka_consume_batch_queue(q, 100, msgs, BATCH);
        int64_t now = bench_e2e_now_us();
        for (ssize_t i = 0; i < got; i++) {
            if (!msgs[i]->err) {
                bench_e2e_received(&e2e, msgs[i]->payload, msgs[i]->len, now);
                last = now;
            }
            rd_kafka_message_destroy(msgs[i]);
        }
    }
    pthread_join(th, NULL);
    rd_kafka_queue_destroy(q);
    if (s.failed)
        fprintf(stderr, "librdkafka_e2e_latency: producer: %s\n", s.errstr);
    else if (e2e.received < num)
        fprintf(stderr, "librdkafka_e2e_latency: %lld of %lld records arrived\n", (long long)e2e.received,
                (long long)num);
    else {
        bench_e2e_report(&e2e, rate);
        rc = 0;
    }
done_early:
    free(e2e.lat_us);
    rd_kafka_consumer_close(cons);
    rd_kafka_destroy(cons);
    rd_kafka_destroy(prod);
    return rc;
}
