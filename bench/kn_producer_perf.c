/*
 * kn_producer_perf.c: producer throughput/latency benchmark mirroring
 * Java's ProducerPerformance (kafka-producer-perf-test): same options
 * (--bootstrap-server, --topic, --num-records, --record-size,
 * --throughput, --producer-props k=v..., --command-property k=v), same
 * payload (one buffer of random upper-case letters), same per-5s window
 * lines and the same final line, followed by a line with peak RSS and
 * CPU seconds (getrusage) so runs can be compared with the JVM's.
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#include "kafka_native.h"

typedef struct perf {
    int64_t start_ms, window_start_ms;
    int64_t count, bytes, window_count, window_bytes;
    int64_t total_latency, window_total_latency;
    int max_latency, window_max_latency;
    int *latencies;
    int64_t sampling, index, nlat, iteration;
    int64_t errors;
} perf;

static int64_t wall_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void print_window(perf *st) {
    int64_t elapsed = wall_ms() - st->window_start_ms;
    if (elapsed <= 0)
        elapsed = 1;
    printf("%lld records sent, %.1f records/sec (%.2f MB/sec), %.1f ms avg latency, %.1f ms max "
           "latency.\n",
           (long long)st->window_count, 1000.0 * (double)st->window_count / (double)elapsed,
           1000.0 * (double)st->window_bytes / (double)elapsed / (1024.0 * 1024.0),
           st->window_count ? (double)st->window_total_latency / (double)st->window_count : 0.0,
           (double)st->window_max_latency);
    fflush(stdout);
    st->window_start_ms = wall_ms();
    st->window_count = st->window_bytes = st->window_total_latency = 0;
    st->window_max_latency = 0;
}

static void on_delivery(kn_producer *p, const kn_delivery *d, void *opaque) {
    perf *st = opaque;
    (void)p;
    int64_t now = wall_ms();
    if (kn_delivery_error(d)) {
        if (st->errors++ < 10)
            fprintf(stderr, "delivery failed: %s: %s\n", kn_err_name(kn_delivery_error(d)),
                    kn_delivery_errstr(d));
        return;
    }
    int latency = (int)(now - (int64_t)(intptr_t)kn_delivery_opaque(d));
    st->count++;
    st->window_count++;
    st->total_latency += latency;
    st->window_total_latency += latency;
    if (latency > st->max_latency)
        st->max_latency = latency;
    if (latency > st->window_max_latency)
        st->window_max_latency = latency;
    if (st->iteration % st->sampling == 0 && st->index < st->nlat)
        st->latencies[st->index++] = latency;
    st->iteration++;
    if (now - st->window_start_ms >= 5000)
        print_window(st);
}

static int cmp_int(const void *a, const void *b) {
    int x = *(const int *)a, y = *(const int *)b;
    return (x > y) - (x < y);
}

static void usage(void) {
    fprintf(stderr,
            "usage: kn_producer_perf --topic T --num-records N --record-size S --throughput R\n"
            "       (--producer-props k=v [k=v ...] | --command-property k=v ...)\n"
            "       [--bootstrap-server HOST:PORT] [--producer.config FILE]\n");
    exit(2);
}

int main(int argc, char **argv) {
    const char *topic = NULL, *bootstrap = NULL, *config_file = NULL;
    long long num_records = -1;
    int record_size = -1;
    double throughput = -1;
    char errstr[512];
    kn_conf *conf = kn_conf_new(KN_CLIENT_PRODUCER);
    if (!conf)
        return 1;
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
        else if (!strcmp(a, "--producer.config") && i + 1 < argc)
            config_file = argv[++i];
        else if (!strcmp(a, "--producer-props") || !strcmp(a, "--command-property")) {
            bool many = !strcmp(a, "--producer-props");
            do {
                if (i + 1 >= argc)
                    usage();
                char *kv = argv[++i];
                char *eq = strchr(kv, '=');
                if (!eq)
                    usage();
                *eq = '\0';
                if (kn_conf_set(conf, kv, eq + 1, errstr, sizeof errstr)) {
                    fprintf(stderr, "%s\n", errstr);
                    return 2;
                }
            } while (many && i + 1 < argc && strncmp(argv[i + 1], "--", 2) != 0);
        } else
            usage();
    }
    if (!topic || num_records <= 0 || record_size <= 0)
        usage();
    if (config_file && kn_conf_load_properties(conf, config_file, errstr, sizeof errstr)) {
        fprintf(stderr, "%s\n", errstr);
        return 2;
    }
    if (bootstrap && kn_conf_set(conf, "bootstrap.servers", bootstrap, errstr, sizeof errstr)) {
        fprintf(stderr, "%s\n", errstr);
        return 2;
    }

    perf st;
    memset(&st, 0, sizeof st);
    /* As Java: keep at most ~500,000 latency samples. */
    st.sampling = num_records / (num_records < 500000 ? num_records : 500000);
    st.nlat = num_records / st.sampling + 1;
    st.latencies = calloc((size_t)st.nlat, sizeof *st.latencies);
    kn_producer *p = kn_producer_new(conf, on_delivery, &st, errstr, sizeof errstr);
    kn_conf_destroy(conf);
    if (!p || !st.latencies) {
        fprintf(stderr, "cannot create the producer: %s\n", p ? "out of memory" : errstr);
        if (p) {
            kn_producer_close(p, 0);
            kn_producer_destroy(p);
        }
        free(st.latencies);
        return 1;
    }
    char *payload = malloc((size_t)record_size);
    srand((unsigned)time(NULL));
    for (int j = 0; j < record_size; j++)
        payload[j] = (char)(rand() % 26 + 65);

    st.start_ms = st.window_start_ms = wall_ms();
    kn_record_out rec = KN_RECORD_OUT_INIT;
    rec.topic = topic;
    rec.value = payload;
    rec.value_len = (size_t)record_size;
    int rc = 0;
    for (long long i = 0; i < num_records; i++) {
        int64_t send_start = wall_ms();
        if (throughput > 0) {
            /* Java's ThroughputThrottler, simplified: sleep until on schedule. */
            double due = (double)st.start_ms + 1000.0 * (double)i / throughput;
            while ((double)send_start < due) {
                kn_producer_poll(p, (int)(due - (double)send_start) + 1);
                send_start = wall_ms();
            }
        }
        rec.opaque = (void *)(intptr_t)send_start;
        rc = kn_producer_send(p, &rec, errstr, sizeof errstr);
        if (rc) {
            fprintf(stderr, "send failed: %s: %s\n", kn_err_name(rc), errstr);
            break;
        }
        st.bytes += record_size;
        st.window_bytes += record_size;
        if ((i & 1023) == 0)
            kn_producer_poll(p, 0);
    }
    if (kn_producer_flush(p, -1))
        fprintf(stderr, "flush did not complete\n");

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
           st.count ? (double)st.total_latency / (double)st.count : 0.0, (double)st.max_latency,
           pv[0], pv[1], pv[2], pv[3]);
    kn_producer_close(p, -1);
    kn_producer_destroy(p);
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    printf("peak RSS %.1f MB, CPU %.2f s user + %.2f s system\n", (double)ru.ru_maxrss / 1024.0,
           (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec / 1e6,
           (double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec / 1e6);
    free(payload);
    free(st.latencies);
    return rc || st.errors ? 1 : 0;
}
