/*
 * librdkafka_producer_perf.c: the librdkafka side of the producer
 * comparison, doing what bench/kn_producer_perf (and Java's
 * ProducerPerformance) do: --num-records values of --record-size random
 * upper-case letters (one buffer, copied per record), null keys, the
 * default partitioner, as fast as the client takes them (--throughput -1)
 * or paced; latency per record = delivery report time - send time,
 * sampled like Java (at most ~500,000 samples). Settings are librdkafka's
 * defaults plus --producer-props / --command-property k=v; the effective
 * values that shape batching and durability are printed.
 *
 * Output: Java's final line ("N records sent, R records/sec (M MB/sec),
 * ... 50th, 95th, 99th, 99.9th."; MB = 1024^2 bytes), then
 * "peak RSS ..., CPU ..." as kn_producer_perf prints it.
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#include <librdkafka/rdkafka.h>

typedef struct perf {
    int64_t start_ms;
    int64_t count, bytes, total_latency, errors;
    int max_latency;
    int *latencies;
    int64_t sampling, index, nlat, iteration;
} perf;

static int64_t wall_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Delivery report: runs inside rd_kafka_poll/flush on this thread. */
static void on_delivery(rd_kafka_t *rk, const rd_kafka_message_t *m, void *opaque) {
    perf *st = opaque;
    (void)rk;
    if (m->err) {
        if (st->errors++ < 10)
            fprintf(stderr, "delivery failed: %s\n", rd_kafka_err2str(m->err));
        return;
    }
    int latency = (int)(wall_ms() - (int64_t)(intptr_t)m->_private);
    st->count++;
    st->total_latency += latency;
    if (latency > st->max_latency)
        st->max_latency = latency;
    if (st->iteration % st->sampling == 0 && st->index < st->nlat)
        st->latencies[st->index++] = latency;
    st->iteration++;
}

static int cmp_int(const void *a, const void *b) {
    int x = *(const int *)a, y = *(const int *)b;
    return (x > y) - (x < y);
}

static void usage(void) {
    fprintf(stderr, "usage: librdkafka_producer_perf --bootstrap-server HOSTS --topic T --num-records N\n"
                    "       --record-size S --throughput R [--producer-props k=v [k=v ...]]\n"
                    "       [--command-property k=v]...\n");
    exit(2);
}

static int set(rd_kafka_conf_t *conf, const char *k, const char *v) {
    char es[512];
    if (rd_kafka_conf_set(conf, k, v, es, sizeof es) != RD_KAFKA_CONF_OK) {
        fprintf(stderr, "librdkafka_producer_perf: %s=%s: %s\n", k, v, es);
        return -1;
    }
    return 0;
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
    const char *topic = NULL, *bootstrap = NULL;
    long long num_records = -1;
    int record_size = -1;
    double throughput = -1;
    rd_kafka_conf_t *conf = rd_kafka_conf_new();
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "--topic") && i + 1 < argc)
            topic = argv[++i];
        else if (!strcmp(a, "--bootstrap-server") && i + 1 < argc)
            bootstrap = argv[++i];
        else if (!strcmp(a, "--num-records") && i + 1 < argc)
            num_records = atoll(argv[++i]);
        else if (!strcmp(a, "--record-size") && i + 1 < argc)
            record_size = atoi(argv[++i]);
        else if (!strcmp(a, "--throughput") && i + 1 < argc)
            throughput = atof(argv[++i]);
        else if (!strcmp(a, "--producer-props") || !strcmp(a, "--command-property")) {
            bool many = !strcmp(a, "--producer-props");
            do {
                if (i + 1 >= argc)
                    usage();
                char kv[1024];
                snprintf(kv, sizeof kv, "%s", argv[++i]);
                char *eq = strchr(kv, '=');
                if (!eq)
                    usage();
                *eq = '\0';
                if (set(conf, kv, eq + 1))
                    return 2;
            } while (many && i + 1 < argc && strncmp(argv[i + 1], "--", 2) != 0);
        } else
            usage();
    }
    if (!topic || !bootstrap || num_records <= 0 || record_size <= 0)
        usage();
    if (set(conf, "bootstrap.servers", bootstrap))
        return 2;

    perf st;
    memset(&st, 0, sizeof st);
    st.sampling = num_records / (num_records < 500000 ? num_records : 500000);
    st.nlat = num_records / st.sampling + 1;
    st.latencies = calloc((size_t)st.nlat, sizeof *st.latencies);
    char *payload = malloc((size_t)record_size);
    if (!st.latencies || !payload) {
        fprintf(stderr, "out of memory\n");
        return 1;
    }
    srand((unsigned)time(NULL));
    for (int j = 0; j < record_size; j++)
        payload[j] = (char)(rand() % 26 + 65);
    rd_kafka_conf_set_dr_msg_cb(conf, on_delivery);
    rd_kafka_conf_set_opaque(conf, &st);
    printf("librdkafka %s settings:", rd_kafka_version_str());
    static const char *shown[] = {"acks",
                                  "enable.idempotence",
                                  "linger.ms",
                                  "batch.size",
                                  "batch.num.messages",
                                  "compression.type",
                                  "max.in.flight.requests.per.connection",
                                  "queue.buffering.max.messages",
                                  "queue.buffering.max.kbytes",
                                  "sticky.partitioning.linger.ms",
                                  "partitioner"};
    for (size_t k = 0; k < sizeof shown / sizeof *shown; k++)
        print_setting(conf, shown[k]);
    printf("\n");
    fflush(stdout);

    char es[512];
    rd_kafka_t *rk = rd_kafka_new(RD_KAFKA_PRODUCER, conf, es, sizeof es);
    if (!rk) {
        fprintf(stderr, "rd_kafka_new: %s\n", es);
        return 1;
    }
    st.start_ms = wall_ms();
    int rc = 0;
    for (long long i = 0; i < num_records; i++) {
        int64_t send_start = wall_ms();
        if (throughput > 0) {
            double due = (double)st.start_ms + 1000.0 * (double)i / throughput;
            while ((double)send_start < due) {
                rd_kafka_poll(rk, (int)(due - (double)send_start) + 1);
                send_start = wall_ms();
            }
        }
        rd_kafka_resp_err_t err;
        /* A full local queue is back-pressure, as Java's send blocks on
         * buffer.memory: serve reports and retry. */
        while ((err = rd_kafka_producev(rk, RD_KAFKA_V_TOPIC(topic), RD_KAFKA_V_MSGFLAGS(RD_KAFKA_MSG_F_COPY),
                                        RD_KAFKA_V_VALUE(payload, (size_t)record_size),
                                        RD_KAFKA_V_OPAQUE((void *)(intptr_t)send_start), RD_KAFKA_V_END)) ==
               RD_KAFKA_RESP_ERR__QUEUE_FULL)
            rd_kafka_poll(rk, 10);
        if (err) {
            fprintf(stderr, "send failed: %s\n", rd_kafka_err2str(err));
            rc = 1;
            break;
        }
        st.bytes += record_size;
        if ((i & 1023) == 0)
            rd_kafka_poll(rk, 0);
    }
    if (rd_kafka_flush(rk, 600000) != RD_KAFKA_RESP_ERR_NO_ERROR) {
        fprintf(stderr, "flush did not complete\n");
        rc = 1;
    }
    int64_t elapsed = wall_ms() - st.start_ms;
    if (elapsed <= 0)
        elapsed = 1;
    qsort(st.latencies, (size_t)st.index, sizeof *st.latencies, cmp_int);
    double pct[4] = {0.5, 0.95, 0.99, 0.999};
    int pv[4] = {0, 0, 0, 0};
    for (int k = 0; k < 4 && st.index > 0; k++)
        pv[k] = st.latencies[(int64_t)(pct[k] * (double)st.index)];
    printf("%lld records sent, %f records/sec (%.2f MB/sec), %.2f ms avg latency, %.2f ms max "
           "latency, %d ms 50th, %d ms 95th, %d ms 99th, %d ms 99.9th.\n",
           (long long)st.count, 1000.0 * (double)st.count / (double)elapsed,
           1000.0 * (double)st.bytes / (double)elapsed / (1024.0 * 1024.0),
           st.count ? (double)st.total_latency / (double)st.count : 0.0, (double)st.max_latency, pv[0], pv[1],
           pv[2], pv[3]);
    rd_kafka_destroy(rk);
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    printf("peak RSS %.1f MB, CPU %.2f s user + %.2f s system\n", (double)ru.ru_maxrss / 1024.0,
           (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec / 1e6,
           (double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec / 1e6);
    free(payload);
    free(st.latencies);
    return rc || st.errors || st.count < num_records ? 1 : 0;
}
