/*
 * kn_drain_cost.c: the consumer's per-record CPU cost without a broker,
 * made to be counted in instructions (valgrind --tool=callgrind) rather
 * than timed (issues #12, #17).
 *
 *   kn_drain_cost [--batches N] [--per-batch N] [--record-size BYTES]
 *                 [--poll N] [--slice-bytes N] [--no-crc]
 *
 * Builds the partition log a Java producer-perf run writes (batches of
 * --per-batch records, null key, --record-size byte values, no headers;
 * defaults 200 x 900 x 10 B), then consumes it as the consumer does:
 * the log is served in Fetch-sized slices (--slice-bytes, default 1 MiB,
 * whole batches from the fetch offset, a read-ahead slice behind the
 * drained one), each poll drains at most --poll records (default 500,
 * max.poll.records) through knc_drain into a fresh kn_records, and every
 * record goes through bench_check.h's checksum and offset check, as
 * kn_consumer_perf does. Divide an inclusive instruction count by the
 * records read:
 *
 *   valgrind --tool=callgrind --callgrind-out-file=cg.out \
 *     build/bench/kn_drain_cost
 *   callgrind_annotate --inclusive=yes cg.out
 *
 * The log is built before the first poll; callgrind's
 * --toggle-collect=kn_drain_cost_consume counts only the consuming.
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_check.h"
#include "consumer/consumer_int.h"
#include "kn_alloc.h"
#include "kafka_native.h"

typedef struct logbuf {
    uint8_t *mem;
    size_t len;
    size_t *starts; /* byte offset of each batch, and len at [batches] */
    int64_t *bases;
    int batches;
} logbuf;

static void build_log(logbuf *L, int batches, int per_batch, int size) {
    kn_wr w;
    kn_wr_init(&w, 0, 0);
    uint8_t *val = malloc((size_t)size + 1);
    L->starts = calloc((size_t)batches + 1, sizeof *L->starts);
    L->bases = calloc((size_t)batches + 1, sizeof *L->bases);
    if (!val || !L->starts || !L->bases)
        exit(2);
    int64_t off = 0;
    for (int b = 0; b < batches; b++) {
        kn_rb_builder_conf conf;
        kn_rb_builder_conf_init(&conf);
        conf.base_offset = off;
        conf.partition_leader_epoch = 0;
        kn_rb_builder rb;
        kn_rb_builder_init(&rb, &conf, 0);
        for (int i = 0; i < per_batch; i++) {
            for (int k = 0; k < size; k++)
                val[k] = (uint8_t)('A' + (off + i + k) % 26);
            if (kn_rb_builder_append(&rb, i, 1700000000000LL + off + i, (kn_bytes){NULL, -1},
                                     (kn_bytes){val, size}, NULL, 0) != 0)
                exit(2);
        }
        char es[128];
        L->starts[b] = w.len;
        L->bases[b] = off;
        if (kn_rb_builder_finish(&rb, &w, es, sizeof es) != 0) {
            fprintf(stderr, "build: %s\n", es);
            exit(2);
        }
        kn_rb_builder_free(&rb);
        off += per_batch;
    }
    L->starts[batches] = w.len;
    L->bases[batches] = off;
    L->batches = batches;
    L->mem = kn_wr_detach(&w, &L->len);
    kn_wr_free(&w);
    free(val);
}

/* A Fetch answer at off: whole batches from the one holding off, up to
 * slice_bytes (at least one batch). NULL at the log's end. */
static knc_fetched *slice_at(const logbuf *L, int64_t off, size_t slice_bytes) {
    int i = 0;
    while (i < L->batches && L->bases[i + 1] <= off)
        i++;
    if (i == L->batches)
        return NULL;
    int j = i + 1;
    while (j < L->batches && L->starts[j + 1] - L->starts[i] <= slice_bytes)
        j++;
    size_t n = L->starts[j] - L->starts[i];
    uint8_t *mem = malloc(n);
    if (!mem)
        exit(2);
    memcpy(mem, L->mem + L->starts[i], n);
    knc_buf *buf = knc_buf_from_mem(mem);
    knc_fetched *f = buf ? knc_fetched_new(buf, mem, n, off, NULL, 0) : NULL;
    knc_buf_release(buf);
    if (!f)
        exit(2);
    return f;
}

/* Everything callgrind should count (--toggle-collect). */
__attribute__((noinline)) int64_t kn_drain_cost_consume(const logbuf *L, int poll, size_t slice_bytes,
                                                        const knc_drain_opts *opts, bench_check *chk) {
    knc_part *p = knc_part_new("bench-topic", 0, 1, KNC_RESET_EARLIEST, false);
    if (!p)
        exit(2);
    knc_part_seek(p, 0, -1);
    int64_t polls = 0;
    for (;;) {
        if (!p->fetched)
            p->fetched = slice_at(L, knc_part_fetch_offset(p), slice_bytes);
        if (!p->fetched)
            break;
        if (!p->ahead && p->fetched->end_offset > p->fetched->fetch_offset)
            p->ahead = slice_at(L, p->fetched->end_offset, slice_bytes);
        kn_records *recs = knc_records_new((size_t)poll);
        int n = knc_drain(p, recs, poll, opts);
        if (n < 0 || p->state != KNC_POS_VALID) {
            fprintf(stderr, "drain failed: %d %s\n", n, p->errstr);
            exit(1);
        }
        size_t count = kn_records_count(recs);
        for (size_t i = 0; i < count; i++) {
            size_t klen, vlen;
            const void *k = kn_records_key(recs, i, &klen);
            const void *v = kn_records_value(recs, i, &vlen);
            bench_check_record(chk, kn_records_partition(recs, i), kn_records_offset(recs, i), k,
                               (int64_t)klen, v, (int64_t)vlen);
        }
        kn_records_free(recs);
        polls++;
    }
    knc_part_free(p);
    return polls;
}

int main(int argc, char **argv) {
    int batches = 200, per_batch = 900, size = 10, poll = 500;
    size_t slice_bytes = 1 << 20;
    knc_drain_opts opts = {true, false, (size_t)64 << 20};
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(a, "--no-crc")) {
            opts.verify_crc = false;
            continue;
        }
        if (!v) {
            fprintf(stderr, "usage: see the header of bench/kn_drain_cost.c\n");
            return 2;
        }
        i++;
        if (!strcmp(a, "--batches"))
            batches = atoi(v);
        else if (!strcmp(a, "--per-batch"))
            per_batch = atoi(v);
        else if (!strcmp(a, "--record-size"))
            size = atoi(v);
        else if (!strcmp(a, "--poll"))
            poll = atoi(v);
        else if (!strcmp(a, "--slice-bytes"))
            slice_bytes = (size_t)atol(v);
        else {
            fprintf(stderr, "unknown option %s\n", a);
            return 2;
        }
    }
    if (batches < 1 || per_batch < 1 || size < 0 || poll < 1) {
        fprintf(stderr, "bad arguments\n");
        return 2;
    }
    logbuf L;
    build_log(&L, batches, per_batch, size);
    static bench_check chk;
    int64_t polls = kn_drain_cost_consume(&L, poll, slice_bytes, &opts, &chk);
    printf("%lld polls, %d batches x %d records x %d B, crc %s\n", (long long)polls, batches,
           per_batch, size, opts.verify_crc ? "on" : "off");
    int rc = bench_check_report(&chk);
    if (chk.records != (int64_t)batches * per_batch) {
        printf("read %lld records of %lld\n", (long long)chk.records,
               (long long)batches * per_batch);
        rc = 1;
    }
    kn_free(L.mem);
    free(L.starts);
    free(L.bases);
    return rc;
}
