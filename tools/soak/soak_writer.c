/*
 * soak_writer.c: an idempotent producer for tools/soak. It sends records
 * at a steady rate to explicit partitions (seq % partitions), each value
 * "<writer> <seq> <padding>", and appends every acknowledged record to
 * its ledger file, one line each:
 *
 *   A <writer> <seq> <partition> <offset> <ack ms>
 *   F <writer> <seq> <partition> <error name>     (delivery failed)
 *
 * The checker (tools/soak/check) replays the ledger against what the
 * group readers consumed and what the log holds. It runs until SIGTERM /
 * SIGINT or --duration-ms, then flushes and closes within --close-ms;
 * exit 0 on a clean close, 1 when the producer failed or close timed out.
 *
 *   soak_writer --bootstrap B --topic T --partitions N --id W --ledger FILE
 *               [--rate RECORDS_PER_S] [--value-bytes N] [--duration-ms N]
 *               [--close-ms N]
 */
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "kafka_native.h"

static volatile sig_atomic_t stop;
static FILE *ledger;
static const char *id = "w";
static long long acked, failed;

static long long now_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void on_signal(int sig) {
    (void)sig;
    stop = 1;
}

/* The record's opaque is its sequence number. */
static void on_delivery(kn_producer *p, const kn_delivery *d, void *opaque) {
    (void)p;
    (void)opaque;
    long long seq = (long long)(uintptr_t)kn_delivery_opaque(d);
    int err = kn_delivery_error(d);
    if (err == KN_OK) {
        fprintf(ledger, "A %s %lld %d %lld %lld\n", id, seq, (int)kn_delivery_partition(d),
                (long long)kn_delivery_offset(d), now_ms());
        acked++;
    } else {
        fprintf(ledger, "F %s %lld %d %s\n", id, seq, (int)kn_delivery_partition(d), kn_err_name(err));
        fprintf(stderr, "%lld %s delivery of %lld failed: %s\n", now_ms(), id, seq,
                kn_delivery_errstr(d) ? kn_delivery_errstr(d) : kn_err_name(err));
        failed++;
    }
}

static int set(kn_conf *conf, const char *k, const char *v) {
    char es[512];
    if (kn_conf_set(conf, k, v, es, sizeof es) != KN_OK) {
        fprintf(stderr, "%s: conf %s\n", id, es);
        return -1;
    }
    return 0;
}

int main(int argc, char **argv) {
    const char *bootstrap = NULL, *topic = NULL, *ledger_path = NULL;
    long partitions = 0, rate = 200, value_bytes = 100, duration_ms = -1, close_ms = 60000;
    for (int i = 1; i + 1 < argc; i += 2) {
        const char *a = argv[i], *v = argv[i + 1];
        if (strcmp(a, "--bootstrap") == 0)
            bootstrap = v;
        else if (strcmp(a, "--topic") == 0)
            topic = v;
        else if (strcmp(a, "--partitions") == 0)
            partitions = atol(v);
        else if (strcmp(a, "--id") == 0)
            id = v;
        else if (strcmp(a, "--ledger") == 0)
            ledger_path = v;
        else if (strcmp(a, "--rate") == 0)
            rate = atol(v);
        else if (strcmp(a, "--value-bytes") == 0)
            value_bytes = atol(v);
        else if (strcmp(a, "--duration-ms") == 0)
            duration_ms = atol(v);
        else if (strcmp(a, "--close-ms") == 0)
            close_ms = atol(v);
        else {
            fprintf(stderr, "unknown option %s\n", a);
            return 2;
        }
    }
    if (!bootstrap || !topic || !ledger_path || partitions <= 0 || rate <= 0) {
        fprintf(stderr, "usage: %s --bootstrap B --topic T --partitions N --id W --ledger FILE "
                        "[--rate N] [--value-bytes N] [--duration-ms N] [--close-ms N]\n",
                argv[0]);
        return 2;
    }
    if (!(ledger = fopen(ledger_path, "a"))) {
        perror(ledger_path);
        return 2;
    }
    signal(SIGTERM, on_signal);
    signal(SIGINT, on_signal);

    kn_conf *conf = kn_conf_new(KN_CLIENT_PRODUCER);
    char cid[128];
    snprintf(cid, sizeof cid, "soak-%s", id);
    if (set(conf, "bootstrap.servers", bootstrap) || set(conf, "client.id", cid) ||
        set(conf, "enable.idempotence", "true") || set(conf, "acks", "all") || set(conf, "linger.ms", "5"))
        return 2;
    char es[512];
    kn_producer *p = kn_producer_new(conf, on_delivery, NULL, es, sizeof es);
    kn_conf_destroy(conf);
    if (!p) {
        fprintf(stderr, "%s: kn_producer_new: %s\n", id, es);
        return 1;
    }
    char *value = malloc((size_t)value_bytes + 64);
    long long start = now_ms(), end = duration_ms >= 0 ? start + duration_ms : -1, seq = 0;
    int status = 0;
    while (!stop && (end < 0 || now_ms() < end)) {
        /* Send what the rate allows by now, but never more than ~10 s of
         * records outstanding: a long outage must not grow the buffer
         * without bound (the soak measures memory). */
        long long due = (now_ms() - start) * rate / 1000;
        while (seq < due && kn_producer_outstanding(p) < rate * 10) {
            int n = snprintf(value, 64, "%s %lld ", id, seq);
            memset(value + n, 'x', (size_t)value_bytes > (size_t)n ? (size_t)value_bytes - (size_t)n : 0);
            kn_record_out rec = KN_RECORD_OUT_INIT;
            rec.topic = topic;
            rec.partition = (int32_t)(seq % partitions);
            rec.key = id;
            rec.key_len = strlen(id);
            rec.value = value;
            rec.value_len = (size_t)(value_bytes > n ? value_bytes : n);
            rec.opaque = (void *)(uintptr_t)seq;
            int rc = kn_producer_send(p, &rec, es, sizeof es);
            if (rc == KN_ERR__QUEUE_FULL || rc == KN_ERR__TIMED_OUT)
                break; /* the same seq again on the next turn */
            if (rc != KN_OK) {
                fprintf(stderr, "%lld %s send %lld: %s: %s\n", now_ms(), id, seq, kn_err_name(rc), es);
                status = 1;
                stop = 1;
                break;
            }
            seq++;
        }
        kn_producer_poll(p, 10);
        fflush(ledger);
        if (kn_producer_fatal_error(p, es, sizeof es)) {
            fprintf(stderr, "%lld %s fatal: %s\n", now_ms(), id, es);
            status = 1;
            break;
        }
    }
    long long t0 = now_ms();
    int frc = kn_producer_flush(p, (int)close_ms);
    int crc = kn_producer_close(p, (int)close_ms);
    fprintf(stderr, "%lld %s sent=%lld acked=%lld failed=%lld flush=%s close=%s in %lld ms\n", now_ms(), id,
            seq, acked, failed, kn_err_name(frc), kn_err_name(crc), now_ms() - t0);
    kn_producer_destroy(p);
    free(value);
    fclose(ledger);
    if (frc != KN_OK || crc != KN_OK)
        status = 1;
    return status;
}
