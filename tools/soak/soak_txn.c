/*
 * soak_txn.c: the transactional consume-transform-produce loop of
 * tools/soak. A member of a consumer group (classic, cooperative-sticky)
 * reading the soak topic with isolation.level=read_committed. A poll that
 * returns records begins a transaction; it takes the records of further
 * polls until it holds TXN_MAX_RECORDS, TXN_WINDOW_MS have passed or a
 * poll returns nothing. Every record is written to the output topic (same
 * partition, value "<writer> <seq> <input partition> <input offset>
 * <member>") and the input offsets are committed inside the transaction
 * (send_offsets_to_transaction with the consumer's group metadata, so a
 * fenced member's offsets are refused). A read_committed reader of the
 * output must then see every input record exactly once, whatever faults
 * hit the run.
 *
 * Why several polls per transaction: a transaction costs a few replicated
 * writes (the records, the offsets, the markers) whatever its size: 1.5-3
 * s each on a loaded machine. A poll returns what is buffered, about one
 * partition's fetch (~500 records of 128 KiB), so one transaction per
 * poll moved ~330 records/s for two members, below the writers' 450: the
 * loop fell behind through the run and its lag could not drain in time.
 * A partition revoked or lost while a transaction is open aborts it (its
 * records may already be in it, and its next owner starts from the
 * committed offset).
 *
 * On a failed transaction it aborts (an abortable error) or, when the
 * producer is fenced or otherwise fatal, makes a new producer with the
 * same transactional.id (init_transactions fences the old one and ends
 * what it left open). Either way it then seeks every assigned partition
 * back to its committed offset (read with requireStable, so it waits
 * out a pending commit): that is the only truth after a commit whose
 * outcome is unknown. Log lines (besides soak_member.c's listener and
 * GEN lines), with CLOCK_REALTIME ms timestamps:
 *
 *   <ts> <member> START <group> <transactional.id>
 *   <ts> <member> OUT <txn> <out partition> <out offset> <writer> <seq>
 *   <ts> <member> OUT-FAILED <txn> <writer> <seq> <error>
 *   <ts> <member> COMMITTED <txn> <records>
 *   <ts> <member> ABORTED <txn> <error that caused it>
 *   <ts> <member> FATAL <txn> <error>        (outcome unknown; new producer)
 *   <ts> <member> REWOUND <partitions>
 *   <ts> <member> ERROR <where> <error>
 *   <ts> <member> CLOSED <consumer close> <producer close>
 *
 * <txn> counts this process's transactions from 1; OUT lines are the
 * delivery reports, written before the transaction's COMMITTED or
 * ABORTED line. Stops on SIGTERM / SIGINT (between transactions).
 *
 *   soak_txn --bootstrap B --input T --output T2 --group G --txn-id X
 *            --id NAME --log FILE [--session-ms N]
 */
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kafka_native.h"
#include "soak_member.h"

/* A transaction's bounds (see above); the window stays well inside
 * transaction.timeout.ms. */
#define TXN_MAX_RECORDS 2000
#define TXN_WINDOW_MS 1000

static volatile sig_atomic_t stop;
static FILE *out;
static const char *id = "t", *bootstrap, *txn_id;
static long long txn;
static int revoked; /* a partition was revoked or lost in the open transaction */

/* Writer names seen in the input, so a delivery report's opaque can
 * carry (transaction, writer, seq) without a per-record allocation. */
#define MAX_WRITERS 64
static char writers[MAX_WRITERS][64];
static int nwriters;

static void on_signal(int sig) {
    (void)sig;
    stop = 1;
}

/* soak_member's listener, which also notes a revocation mid-transaction. */
static int on_rebalance(kn_consumer *c, kn_rebalance_event ev, const kn_topic_partition_list *parts,
                        void *opaque) {
    if (ev != KN_REBALANCE_ASSIGNED && kn_topic_partition_list_count(parts))
        revoked = 1;
    return soak_member_on_rebalance(c, ev, parts, opaque);
}

static int writer_index(const char *w) {
    for (int i = 0; i < nwriters; i++)
        if (strcmp(writers[i], w) == 0)
            return i;
    if (nwriters == MAX_WRITERS)
        return -1;
    snprintf(writers[nwriters], sizeof writers[0], "%s", w);
    return nwriters++;
}

/* opaque: transaction (20 bits) | writer index (8) | seq (32). */
static void *pack(long long t, int w, long long seq) {
    return (void *)(uintptr_t)(((uint64_t)(t & 0xfffff) << 40) | ((uint64_t)(w & 0xff) << 32) |
                               ((uint64_t)seq & 0xffffffffu));
}

static void on_delivery(kn_producer *p, const kn_delivery *d, void *opaque) {
    (void)p;
    (void)opaque;
    uint64_t v = (uint64_t)(uintptr_t)kn_delivery_opaque(d);
    long long t = (long long)(v >> 40), seq = (long long)(v & 0xffffffffu);
    int w = (int)((v >> 32) & 0xff);
    const char *wn = w < nwriters ? writers[w] : "?";
    int err = kn_delivery_error(d);
    if (err == KN_OK)
        fprintf(out, "%lld %s OUT %lld %d %lld %s %lld\n", soak_now_ms(), id, t, (int)kn_delivery_partition(d),
                (long long)kn_delivery_offset(d), wn, seq);
    else
        fprintf(out, "%lld %s OUT-FAILED %lld %s %lld %s\n", soak_now_ms(), id, t, wn, seq, kn_err_name(err));
}

static kn_producer *producer_try(void) {
    char es[512];
    kn_conf *conf = kn_conf_new(KN_CLIENT_PRODUCER);
    char cid[128];
    snprintf(cid, sizeof cid, "soak-%s", id);
    if (soak_conf_set(conf, id, "bootstrap.servers", bootstrap) || soak_conf_set(conf, id, "client.id", cid) ||
        soak_conf_set(conf, id, "transactional.id", txn_id) || soak_conf_set(conf, id, "acks", "all") ||
        soak_conf_set(conf, id, "linger.ms", "5") || soak_conf_set(conf, id, "transaction.timeout.ms", "30000")) {
        kn_conf_destroy(conf);
        return NULL;
    }
    kn_producer *p = kn_producer_new(conf, on_delivery, NULL, es, sizeof es);
    kn_conf_destroy(conf);
    if (!p)
        fprintf(out, "%lld %s ERROR producer_new %s\n", soak_now_ms(), id, es);
    return p;
}

/* A producer with transactions initialised: the coordinator may be down
 * or moving, so it tries until one answers (a producer that failed
 * fatally on the way is replaced). NULL when the member was stopped
 * first or the producer cannot be made at all. */
static kn_producer *producer_new(void) {
    char es[512];
    kn_producer *p = producer_try();
    while (p && !stop) {
        int rc = kn_producer_init_transactions(p, 30000, es, sizeof es);
        if (rc == KN_OK)
            return p;
        fprintf(out, "%lld %s ERROR init_transactions %s %s\n", soak_now_ms(), id, kn_err_name(rc), es);
        fflush(out);
        const char *st = kn_producer_transaction_state(p);
        if (rc != KN_ERR__TIMED_OUT && (!st || strcmp(st, "UNINITIALIZED") != 0)) {
            kn_producer_destroy(p);
            p = producer_try();
        }
    }
    kn_producer_destroy(p);
    return NULL;
}

/* Every assigned partition back to its committed offset (the start when
 * none is committed). Retries until it works or the member stops. */
static void rewind_to_committed(kn_consumer *c) {
    kn_topic_partition_list *a = kn_consumer_assignment(c);
    if (!a)
        return;
    int rc = KN_OK;
    while (kn_topic_partition_list_count(a) && (rc = kn_consumer_committed(c, a, 15000)) != KN_OK && !stop) {
        fprintf(out, "%lld %s ERROR committed %s\n", soak_now_ms(), id, kn_err_name(rc));
        fflush(out);
        if (rc == KN_ERR__STATE || rc == KN_ERR__INVALID_ARG || rc == KN_ERR__CLOSED)
            break;
    }
    fprintf(out, "%lld %s REWOUND", soak_now_ms(), id);
    for (size_t i = 0; rc == KN_OK && i < kn_topic_partition_list_count(a); i++) {
        int64_t off = kn_topic_partition_list_offset(a, i);
        int32_t p = kn_topic_partition_list_partition(a, i);
        kn_consumer_seek(c, kn_topic_partition_list_topic(a, i), p, off >= 0 ? off : KN_OFFSET_BEGINNING);
        fprintf(out, "%s%d:%lld", i ? "," : " ", (int)p, (long long)off);
    }
    fputc('\n', out);
    fflush(out);
    kn_topic_partition_list_destroy(a);
}

static int fatal_code(int rc) {
    return rc == KN_ERR__FATAL || rc == KN_ERR_PRODUCER_FENCED || rc == KN_ERR_INVALID_PRODUCER_EPOCH ||
           rc == KN_ERR_TRANSACTIONAL_ID_AUTHORIZATION_FAILED;
}

/* After a failed transaction call: abort it, or replace a fatal producer;
 * then re-read from the committed offsets. */
static void recover(kn_producer **pp, kn_consumer *c, int rc, const char *es) {
    kn_producer *p = *pp;
    const char *st = kn_producer_transaction_state(p);
    int fatal = fatal_code(rc) || (st && strcmp(st, "FATAL_ERROR") == 0);
    char es2[512];
    if (!fatal) {
        int arc = KN_ERR__TIMED_OUT;
        for (int i = 0; i < 4 && arc == KN_ERR__TIMED_OUT; i++)
            arc = kn_producer_abort_transaction(p, 30000, es2, sizeof es2);
        if (arc == KN_OK)
            fprintf(out, "%lld %s ABORTED %lld %s %s\n", soak_now_ms(), id, txn, kn_err_name(rc), es);
        else {
            fprintf(out, "%lld %s ERROR abort %s %s\n", soak_now_ms(), id, kn_err_name(arc), es2);
            fatal = 1;
            rc = arc;
            es = es2;
        }
    }
    if (fatal) {
        fprintf(out, "%lld %s FATAL %lld %s %s\n", soak_now_ms(), id, txn, kn_err_name(rc), es);
        fflush(out);
        kn_producer_close(p, 0);
        kn_producer_destroy(p);
        *pp = producer_new();
    }
    fflush(out);
    rewind_to_committed(c);
}

/* Sends one poll's records into the open transaction, noting in next the
 * offset to commit for each partition (the next record to read). */
static int send_records(kn_producer *p, kn_records *recs, const char *output, kn_topic_partition_list *next,
                        char *es, size_t esz) {
    int rc = KN_OK;
    size_t n = kn_records_count(recs);
    for (size_t i = 0; i < n && rc == KN_OK; i++) {
        size_t vlen;
        const char *v = kn_records_value(recs, i, &vlen);
        char buf[128], w[64] = "?", value[256];
        long long seq = -1;
        size_t k = v ? (vlen < sizeof buf - 1 ? vlen : sizeof buf - 1) : 0;
        memcpy(buf, v ? v : "", k);
        buf[k] = 0;
        if (sscanf(buf, "%63s %lld", w, &seq) != 2)
            strcpy(w, "?");
        int32_t part = kn_records_partition(recs, i);
        long long off = kn_records_offset(recs, i);
        int vl = snprintf(value, sizeof value, "%s %lld %d %lld %s", w, seq, (int)part, off, id);
        kn_record_out rec = KN_RECORD_OUT_INIT;
        rec.topic = output;
        rec.partition = part;
        rec.key = w;
        rec.key_len = strlen(w);
        rec.value = value;
        rec.value_len = (size_t)vl;
        rec.opaque = pack(txn, writer_index(w), seq);
        while ((rc = kn_producer_send(p, &rec, es, esz)) == KN_ERR__QUEUE_FULL && !stop)
            kn_producer_poll(p, 50);
        int at = kn_topic_partition_list_find(next, kn_records_topic(recs, i), part);
        if (at < 0) {
            kn_topic_partition_list_add(next, kn_records_topic(recs, i), part);
            at = (int)kn_topic_partition_list_count(next) - 1;
        }
        kn_topic_partition_list_set_offset(next, (size_t)at, off + 1);
    }
    return rc;
}

/* One transaction: the records of the poll that began it (first) and of
 * the polls after it (see the top of the file). 0, or the failing call's
 * error with es filled; *count: the records in it. */
static int transform(kn_producer *p, kn_consumer *c, soak_member *m, kn_records *first, const char *output,
                     size_t *count, char *es, size_t esz) {
    *count = 0;
    int rc = kn_producer_begin_transaction(p, es, esz);
    if (rc != KN_OK)
        return rc;
    kn_topic_partition_list *next = kn_topic_partition_list_new();
    rc = send_records(p, first, output, next, es, esz);
    *count = kn_records_count(first);
    long long deadline = soak_now_ms() + TXN_WINDOW_MS;
    while (rc == KN_OK && *count < TXN_MAX_RECORDS && !stop) {
        long long left = deadline - soak_now_ms();
        if (left <= 0)
            break;
        kn_records *recs = NULL;
        rc = kn_consumer_poll(c, left < 100 ? (int)left : 100, &recs, es, esz);
        soak_member_after_poll(m, c);
        if (rc == KN_OK && revoked) {
            snprintf(es, esz, "a partition was revoked or lost in the open transaction");
            rc = KN_ERR__STATE;
        }
        size_t n = rc == KN_OK ? kn_records_count(recs) : 0;
        if (n) {
            rc = send_records(p, recs, output, next, es, esz);
            *count += n;
        }
        kn_records_free(recs);
        if (!n)
            break; /* nothing buffered (or an error): commit what there is */
    }
    if (rc == KN_OK) {
        kn_group_metadata *gm = kn_consumer_group_metadata(c);
        rc = kn_producer_send_offsets_to_transaction(p, next, gm, 30000, es, esz);
        kn_group_metadata_destroy(gm);
    }
    kn_topic_partition_list_destroy(next);
    /* A commit that timed out may be repeated. */
    for (int i = 0; i < 4 && rc == KN_OK;) {
        rc = kn_producer_commit_transaction(p, 30000, es, esz);
        if (rc != KN_ERR__TIMED_OUT || ++i == 4)
            break;
        rc = KN_OK;
    }
    return rc;
}

int main(int argc, char **argv) {
    const char *input = NULL, *output = NULL, *group = NULL, *log_path = NULL, *session = "10000";
    for (int i = 1; i + 1 < argc; i += 2) {
        const char *a = argv[i], *v = argv[i + 1];
        if (strcmp(a, "--bootstrap") == 0)
            bootstrap = v;
        else if (strcmp(a, "--input") == 0)
            input = v;
        else if (strcmp(a, "--output") == 0)
            output = v;
        else if (strcmp(a, "--group") == 0)
            group = v;
        else if (strcmp(a, "--txn-id") == 0)
            txn_id = v;
        else if (strcmp(a, "--id") == 0)
            id = v;
        else if (strcmp(a, "--log") == 0)
            log_path = v;
        else if (strcmp(a, "--session-ms") == 0)
            session = v;
        else {
            fprintf(stderr, "unknown option %s\n", a);
            return 2;
        }
    }
    if (!bootstrap || !input || !output || !group || !txn_id || !log_path) {
        fprintf(stderr, "usage: %s --bootstrap B --input T --output T2 --group G --txn-id X --id NAME --log FILE "
                        "[--session-ms N]\n",
                argv[0]);
        return 2;
    }
    if (!(out = fopen(log_path, "a"))) {
        perror(log_path);
        return 2;
    }
    setvbuf(out, NULL, _IOFBF, 1 << 16);
    signal(SIGTERM, on_signal);
    signal(SIGINT, on_signal);
    soak_member m;
    soak_member_init(&m, out, id);

    kn_conf *conf = kn_conf_new(KN_CLIENT_CONSUMER);
    char hb[32];
    snprintf(hb, sizeof hb, "%ld", atol(session) / 5);
    if (soak_conf_set(conf, id, "bootstrap.servers", bootstrap) || soak_conf_set(conf, id, "group.id", group) ||
        soak_conf_set(conf, id, "client.id", id) || soak_conf_set(conf, id, "auto.offset.reset", "earliest") ||
        soak_conf_set(conf, id, "enable.auto.commit", "false") ||
        soak_conf_set(conf, id, "isolation.level", "read_committed") ||
        soak_conf_set(conf, id, "partition.assignment.strategy",
                      "org.apache.kafka.clients.consumer.CooperativeStickyAssignor") ||
        soak_conf_set(conf, id, "session.timeout.ms", session) || soak_conf_set(conf, id, "heartbeat.interval.ms", hb) ||
        /* A poll returns what is buffered, at most a transaction's worth.
         * 128 KiB per partition (~500 records) is enough for a
         * transaction gathered over several polls, where the default 1
         * MiB filled with backlog after a fault (RSS growing with the
         * lag). */
        soak_conf_set(conf, id, "max.poll.records", "2000") ||
        soak_conf_set(conf, id, "max.partition.fetch.bytes", "131072"))
        return 2;
    char es[512];
    kn_consumer *c = kn_consumer_new(conf, es, sizeof es);
    kn_conf_destroy(conf);
    if (!c) {
        fprintf(out, "%lld %s ERROR new %s\n", soak_now_ms(), id, es);
        fclose(out);
        return 1;
    }
    kn_producer *p = producer_new();
    if (!p) {
        fclose(out);
        kn_consumer_destroy(c);
        return 1;
    }
    const char *topics[1] = {input};
    int rc = kn_consumer_subscribe(c, topics, 1, on_rebalance, &m);
    if (rc != KN_OK) {
        fprintf(out, "%lld %s ERROR subscribe %s\n", soak_now_ms(), id, kn_err_name(rc));
        fclose(out);
        return 1;
    }
    fprintf(out, "%lld %s START %s %s\n", soak_now_ms(), id, group, txn_id);
    fflush(out);
    int status = 0;
    while (!stop && p) {
        kn_records *recs = NULL;
        rc = kn_consumer_poll(c, 200, &recs, es, sizeof es);
        soak_member_after_poll(&m, c);
        if (rc != KN_OK) {
            fprintf(out, "%lld %s ERROR poll %s %s\n", soak_now_ms(), id, kn_err_name(rc), es);
            fflush(out);
            if (rc == KN_ERR__FATAL || rc == KN_ERR__CLOSED) {
                status = 1;
                break;
            }
            continue;
        }
        /* The records of this poll never belong to a partition it
         * revoked: a rebalance step runs before any record is drained. */
        revoked = 0;
        if (kn_records_count(recs)) {
            size_t n;
            txn++;
            rc = transform(p, c, &m, recs, output, &n, es, sizeof es);
            if (rc == KN_OK)
                fprintf(out, "%lld %s COMMITTED %lld %zu\n", soak_now_ms(), id, txn, n);
            else
                recover(&p, c, rc, es);
            fflush(out);
        } else {
            kn_producer_poll(p, 0);
        }
        kn_records_free(recs);
    }
    if (!p && !stop)
        status = 1;
    rc = kn_consumer_close(c, 30000);
    int prc = p ? kn_producer_close(p, 30000) : KN_OK;
    fprintf(out, "%lld %s CLOSED %s %s\n", soak_now_ms(), id, kn_err_name(rc), kn_err_name(prc));
    kn_consumer_destroy(c);
    kn_producer_destroy(p);
    soak_member_free(&m);
    fclose(out);
    return status || rc != KN_OK || prc != KN_OK;
}
