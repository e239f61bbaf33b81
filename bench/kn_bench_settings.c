/*
 * kn_bench_settings.c: prints our client's effective values of the
 * settings that shape a benchmark, for bench/run's effective-settings
 * page (the perf programs themselves print figures only):
 *   kn_bench_settings consumer|producer [k=v ...]
 * The k=v pairs are the ones the perf program sets; the configuration is
 * finalized as a client constructor would (Java's cross-key rules), so
 * the values are the ones a client built from it runs with.
 */
#include <stdio.h>
#include <string.h>

#include "kafka_native.h"

static const char *const consumer_keys[] = {"fetch.max.bytes",
                                            "max.partition.fetch.bytes",
                                            "fetch.max.wait.ms",
                                            "fetch.min.bytes",
                                            "max.poll.records",
                                            "receive.buffer.bytes",
                                            "check.crcs",
                                            "auto.offset.reset",
                                            "isolation.level",
                                            "client.id",
                                            NULL};
static const char *const producer_keys[] = {"acks",
                                            "enable.idempotence",
                                            "linger.ms",
                                            "batch.size",
                                            "compression.type",
                                            "max.in.flight.requests.per.connection",
                                            "buffer.memory",
                                            "send.buffer.bytes",
                                            "partitioner.ignore.keys",
                                            NULL};

int main(int argc, char **argv) {
    if (argc < 2 || (strcmp(argv[1], "consumer") != 0 && strcmp(argv[1], "producer") != 0)) {
        fprintf(stderr, "usage: kn_bench_settings consumer|producer [k=v ...]\n");
        return 2;
    }
    int producer = strcmp(argv[1], "producer") == 0;
    char es[512];
    kn_conf *conf = kn_conf_new(producer ? KN_CLIENT_PRODUCER : KN_CLIENT_CONSUMER);
    if (!conf)
        return 1;
    int rc = kn_conf_set(conf, "bootstrap.servers", "127.0.0.1:9092", es, sizeof es);
    for (int i = 2; rc == KN_OK && i < argc; i++) {
        char kv[1024];
        snprintf(kv, sizeof kv, "%s", argv[i]);
        char *eq = strchr(kv, '=');
        if (!eq) {
            fprintf(stderr, "kn_bench_settings: not k=v: %s\n", argv[i]);
            kn_conf_destroy(conf);
            return 2;
        }
        *eq = '\0';
        rc = kn_conf_set(conf, kv, eq + 1, es, sizeof es);
    }
    if (rc == KN_OK)
        rc = kn_conf_finalize(conf, es, sizeof es);
    if (rc != KN_OK) {
        fprintf(stderr, "kn_bench_settings: %s\n", es);
        kn_conf_destroy(conf);
        return 1;
    }
    printf("kafka-native settings:");
    for (const char *const *k = producer ? producer_keys : consumer_keys; *k; k++) {
        char v[256];
        size_t n = sizeof v;
        if (kn_conf_get(conf, *k, v, &n) == KN_OK)
            printf(" %s=%s", *k, v);
    }
    printf("\n");
    kn_conf_destroy(conf);
    return 0;
}
