/*
 * test_consumer_drain_resume.c: the drain (core/consumer/drain.c) when
 * the position moves while a batch is open half-read, with no broker.
 *
 * A small log (plain batches, one with compaction gaps and one with a
 * record only the checked reader takes, compressed ones, committed and
 * aborted transactions with their markers) is served as a broker serves
 * Fetch: from the batch holding the fetch offset, a few whole batches,
 * sometimes with a partial batch at the end, read-ahead slices included.
 * Polls of every size 1..12 drain it; once a poll left a batch open with
 * records still to read, the position is moved: a seek backwards or
 * forwards, inside or outside the open batch; the partition revoked and
 * assigned again from its committed offset; a reset (the
 * OFFSET_OUT_OF_RANGE path) to the log start or into the open batch; or
 * the next drains run out of memory. Every record must then come exactly
 * once from the right offset, in order, with its own key, value,
 * timestamp and header; none skipped, none twice, and never a record of
 * an aborted transaction or a control record under read_committed.
 * Then the record shapes the fast reader takes or hands to the checked
 * one: LogAppendTime, long lengths, a long timestamp delta, a record
 * that lies about its length.
 */
#include "kn_test.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "codec/codec.h"
#include "consumer/consumer_int.h"
#include "kn_alloc.h"

#define MAXB 32
#define MAXOFF 256

enum { PLAIN, TXN, COMMIT, ABORT };

typedef struct lbatch {
    int64_t base, last;
    int type;
    int64_t pid;
    size_t start, end; /* bytes in the log */
} lbatch;

typedef struct tlog {
    lbatch b[MAXB];
    int nb;
    uint8_t *mem;
    size_t len;
    knc_aborted ab[8];
    int64_t ab_marker[8]; /* the ABORT marker's offset of ab[i] */
    int nab;
    bool exists[MAXOFF]; /* a data record is at this offset */
    bool aborted[MAXOFF];
    int64_t end; /* one past the last offset */
} tlog;

/* Record contents, derived from the offset so any record can be checked:
 * key "k<off>" (null when off % 5 == 0), value "v<off>" (empty when
 * off % 7 == 0), header h="v<off>", timestamp 1000 + off, except the
 * record at offset SLOW_TS, whose timestamp delta needs a varint longer
 * than the fast reader takes. */
#define SLOW_TS 47
#define ABORTING_PID 9
static int64_t ts_of(int64_t off) { return 1000 + off + (off == SLOW_TS ? (int64_t)1 << 40 : 0); }

static void log_batch(tlog *L, kn_wr *w, int64_t base, const int *deltas, int n, int type,
                      int64_t pid, int codec) {
    kn_rb_builder_conf conf;
    kn_rb_builder_conf_init(&conf);
    conf.base_offset = base;
    conf.codec = codec;
    conf.partition_leader_epoch = 3;
    if (type != PLAIN) {
        conf.transactional = true;
        conf.producer_id = pid;
        conf.producer_epoch = 0;
        conf.base_sequence = 0;
        conf.control = type == COMMIT || type == ABORT;
    }
    kn_rb_builder b;
    kn_rb_builder_init(&b, &conf, 0);
    for (int i = 0; i < n; i++) {
        int64_t off = base + deltas[i];
        char k[32], v[32];
        snprintf(k, sizeof k, "k%lld", (long long)off);
        snprintf(v, sizeof v, "v%lld", (long long)off);
        if (conf.control) {
            uint8_t key[4] = {0, 0, 0, (uint8_t)(type == ABORT ? KN_RB_CONTROL_ABORT
                                                               : KN_RB_CONTROL_COMMIT)};
            uint8_t val[6] = {0};
            assert_int_equal(kn_rb_builder_append(&b, deltas[i], 1, (kn_bytes){key, 4},
                                                  (kn_bytes){val, 6}, NULL, 0),
                             0);
            continue;
        }
        kn_bytes key = off % 5 == 0 ? (kn_bytes){NULL, -1}
                                    : (kn_bytes){(const uint8_t *)k, (int32_t)strlen(k)};
        kn_bytes val = off % 7 == 0 ? (kn_bytes){(const uint8_t *)"", 0}
                                    : (kn_bytes){(const uint8_t *)v, (int32_t)strlen(v)};
        kn_rb_kv h = {{"h", 1}, {(const uint8_t *)v, (int32_t)strlen(v)}};
        assert_int_equal(kn_rb_builder_append(&b, deltas[i], ts_of(off), key, val, &h, 1), 0);
        L->exists[off] = true;
        L->aborted[off] = type == TXN && pid == ABORTING_PID;
    }
    char es[128];
    lbatch *lb = &L->b[L->nb++];
    lb->base = base;
    lb->last = base + deltas[n - 1];
    lb->type = type;
    lb->pid = pid;
    lb->start = w->len;
    assert_int_equal(kn_rb_builder_finish(&b, w, es, sizeof es), 0);
    lb->end = w->len;
    kn_rb_builder_free(&b);
    L->end = lb->last + 1;
}

static int64_t log_run(tlog *L, kn_wr *w, int64_t base, int n, int type, int64_t pid, int codec) {
    int d[64];
    for (int i = 0; i < n; i++)
        d[i] = i;
    log_batch(L, w, base, d, n, type, pid, codec);
    return base + n;
}

/* The log: offsets 0..~70, every kind of batch the drain meets. */
static void log_build(tlog *L) {
    memset(L, 0, sizeof *L);
    kn_wr w;
    kn_wr_init(&w, 0, 0);
    int64_t o = 0;
    o = log_run(L, &w, o, 5, PLAIN, 0, KN_CODEC_NONE);
    o = log_run(L, &w, o, 1, PLAIN, 0, KN_CODEC_NONE);
    o = log_run(L, &w, o, 9, PLAIN, 0, KN_CODEC_LZ4);
    /* A compacted batch: offsets 15, 17, 18, 21 (16, 19, 20 gone). */
    int gaps[] = {0, 2, 3, 6};
    log_batch(L, &w, o, gaps, 4, PLAIN, 0, KN_CODEC_NONE);
    o += 7;
    /* pid 7 commits, pid 9 aborts, interleaved. */
    o = log_run(L, &w, o, 4, TXN, 7, KN_CODEC_NONE);  /* 22..25 */
    int64_t ab_first = o;
    o = log_run(L, &w, o, 6, TXN, 9, KN_CODEC_NONE);  /* 26..31 aborted */
    o = log_run(L, &w, o, 3, TXN, 7, KN_CODEC_LZ4);   /* 32..34 */
    o = log_run(L, &w, o, 1, COMMIT, 7, KN_CODEC_NONE); /* 35 */
    o = log_run(L, &w, o, 5, TXN, 9, KN_CODEC_NONE);  /* 36..40 aborted */
    L->ab[0] = (knc_aborted){ABORTING_PID, ab_first};
    L->ab_marker[0] = o;
    L->nab = 1;
    o = log_run(L, &w, o, 1, ABORT, 9, KN_CODEC_NONE); /* 41 */
    /* Records 42..53 hold SLOW_TS: the fast reader hands it over. */
    o = log_run(L, &w, o, 12, PLAIN, 0, KN_CODEC_NONE);
    o = log_run(L, &w, o, 8, PLAIN, 0, KN_CODEC_ZSTD);
    o = log_run(L, &w, o, 3, PLAIN, 0, KN_CODEC_NONE);
    o = log_run(L, &w, o, 7, PLAIN, 0, KN_CODEC_NONE);
    (void)o;
    L->mem = kn_wr_detach(&w, &L->len);
    kn_wr_free(&w);
}

/* What a broker answers to a Fetch at off: from the batch holding off,
 * nb whole batches, plus half of the next one when cut (a partial
 * trailing batch). NULL past the end of the log. */
static knc_fetched *log_slice(const tlog *L, int64_t off, int nb, bool cut) {
    int i = 0;
    while (i < L->nb && L->b[i].last < off)
        i++;
    if (i == L->nb)
        return NULL;
    int j = i + nb < L->nb ? i + nb : L->nb;
    size_t from = L->b[i].start, to = L->b[j - 1].end;
    if (cut && j < L->nb)
        to += (L->b[j].end - L->b[j].start) / 2;
    knc_aborted ab[8];
    int nab = 0;
    for (int k = 0; k < L->nab; k++)
        if (L->ab_marker[k] >= L->b[i].base && L->ab[k].first_offset <= L->b[j - 1].last)
            ab[nab++] = L->ab[k];
    uint8_t *mem = kn_malloc(to - from);
    assert_non_null(mem);
    memcpy(mem, L->mem + from, to - from);
    knc_buf *buf = knc_buf_from_mem(mem);
    assert_non_null(buf);
    knc_fetched *f = knc_fetched_new(buf, mem, to - from, off, ab, nab);
    assert_non_null(f);
    knc_buf_release(buf);
    return f;
}

typedef struct sim {
    tlog *L;
    knc_part *p;
    const knc_drain_opts *opts;
    int nb;
    bool cut;
    int64_t want; /* the next offset that must come (or L->end) */
    int polls;
    int nomem_left; /* drains still to run with failing allocations */
    int nomem_at;
} sim;

static bool deliverable(const sim *s, int64_t off) {
    return off >= 0 && off < s->L->end && s->L->exists[off] &&
           !(s->opts->read_committed && s->L->aborted[off]);
}

/* The first deliverable offset at or after off (L->end: none). */
static int64_t next_from(const sim *s, int64_t off) {
    while (off < s->L->end && !deliverable(s, off))
        off++;
    return off;
}

static void check_rec(const kn_records *r, size_t i, int64_t off) {
    char k[32], v[32];
    size_t len;
    snprintf(k, sizeof k, "k%lld", (long long)off);
    snprintf(v, sizeof v, "v%lld", (long long)off);
    assert_int_equal(kn_records_offset(r, i), off);
    assert_string_equal(kn_records_topic(r, i), "t");
    assert_int_equal(kn_records_partition(r, i), 4);
    assert_int_equal(kn_records_timestamp(r, i), ts_of(off));
    assert_int_equal(kn_records_leader_epoch(r, i), 3);
    const void *key = kn_records_key(r, i, &len);
    if (off % 5 == 0) {
        assert_null(key);
    } else {
        assert_non_null(key);
        assert_int_equal(len, strlen(k));
        assert_memory_equal(key, k, len);
    }
    const void *val = kn_records_value(r, i, &len);
    assert_non_null(val);
    assert_int_equal(len, off % 7 == 0 ? 0 : strlen(v));
    assert_memory_equal(val, v, len);
    const char *hk;
    const void *hv;
    size_t hkl, hvl;
    assert_int_equal(kn_records_header_count(r, i), 1);
    assert_int_equal(kn_records_header(r, i, 0, &hk, &hkl, &hv, &hvl), KN_OK);
    assert_int_equal(hvl, strlen(v));
    assert_memory_equal(hv, v, hvl);
}

static int nomem_countdown = -1;
static void *nomem_malloc(size_t n) { return nomem_countdown-- == 0 ? NULL : malloc(n); }
static void *nomem_realloc(void *q, size_t n) {
    return nomem_countdown-- == 0 ? NULL : realloc(q, n);
}

/* One poll as kn_consumer_poll makes it, the fetcher's part included:
 * a slice fetched at the fetch offset when nothing is buffered, and a
 * read-ahead one at its end. Returns the records drained. */
static int poll_once(sim *s, int max) {
    knc_part *p = s->p;
    if (p->state == KNC_POS_VALID && !p->fetched)
        p->fetched = log_slice(s->L, knc_part_fetch_offset(p), s->nb, s->cut);
    if (p->fetched && !p->ahead && p->fetched->end_offset > p->fetched->fetch_offset)
        p->ahead = log_slice(s->L, p->fetched->end_offset, s->nb, s->cut);
    kn_records *r = knc_records_new((size_t)max);
    assert_non_null(r);
    kn_allocator a = {nomem_malloc, nomem_realloc, free};
    if (s->nomem_left > 0) {
        s->nomem_left--;
        nomem_countdown = s->nomem_at;
        kn_set_allocator(&a);
    }
    int n = knc_drain(p, r, max, s->opts);
    kn_set_allocator(NULL);
    nomem_countdown = -1;
    assert_true((n >= 0 && n <= max) || n == KN_ERR__NOMEM);
    size_t count = kn_records_count(r);
    if (n >= 0)
        assert_int_equal(count, (size_t)n);
    for (size_t i = 0; i < count; i++) {
        int64_t off = kn_records_offset(r, i);
        if (off != s->want)
            fail_msg("poll %d (max %d, %d-batch slices%s): offset %lld came, %lld expected",
                     s->polls, max, s->nb, s->cut ? ", cut" : "", (long long)off,
                     (long long)s->want);
        check_rec(r, i, off);
        s->want = next_from(s, off + 1);
    }
    /* The position is one past the last record returned when the poll
     * filled up, and never passes a record still to come. */
    if (count == (size_t)max)
        assert_int_equal(p->position, kn_records_offset(r, count - 1) + 1);
    if (p->position > s->want)
        fail_msg("poll %d (max %d): position %lld passed offset %lld", s->polls, max,
                 (long long)p->position, (long long)s->want);
    if (count)
        assert_int_equal(p->position_epoch, 3);
    assert_int_equal(p->state, KNC_POS_VALID);
    kn_records_free(r);
    s->polls++;
    return (int)count;
}

/* An open batch with records still unread past the position. */
static bool mid_batch(const knc_part *p) {
    return p->fetched && p->fetched->in_batch && p->position <= kn_rb_last_offset(&p->fetched->batch);
}

enum { OP_NONE, OP_SEEK_BACK_IN, OP_SEEK_FWD_IN, OP_SEEK_BACK_OUT, OP_SEEK_FWD_OUT, OP_REASSIGN,
       OP_RESET_START, OP_RESET_IN, OP_NOMEM, OP_COUNT };

static void apply_op(sim *s, int op, int variant) {
    knc_part *p = s->p;
    int64_t base = p->fetched->batch.h.base_offset, last = kn_rb_last_offset(&p->fetched->batch);
    int64_t pos = p->position, to = -1;
    switch (op) {
    case OP_SEEK_BACK_IN:
        to = base + (pos - base) / 2;
        break;
    case OP_SEEK_FWD_IN:
        to = pos + 1 <= last ? pos + 1 : last;
        break;
    case OP_SEEK_BACK_OUT:
        to = base > 3 ? base - 3 : 0;
        break;
    case OP_SEEK_FWD_OUT:
        to = last + 2 < s->L->end ? last + 2 : s->L->end;
        break;
    case OP_REASSIGN: {
        /* The partition goes with a commit of its position and comes
         * back from the committed offset. */
        int64_t committed = p->position;
        int32_t epoch = p->position_epoch;
        knc_part_free(p);
        s->p = p = knc_part_new("t", 4, 2, KNC_RESET_EARLIEST, true);
        assert_non_null(p);
        assert_true(knc_part_committed_done(p, p->gen, committed, epoch));
        return; /* the same records still come */
    }
    case OP_RESET_START:
    case OP_RESET_IN:
        knc_part_reset(p, KNC_RESET_EARLIEST);
        assert_int_equal(p->state, KNC_POS_NEED_RESET);
        assert_null(p->fetched);
        p->state = KNC_POS_RESETTING; /* as tick.c sends ListOffsets */
        to = op == OP_RESET_START ? 0 : base + 1;
        assert_true(knc_part_reset_done(p, p->gen, to, -1));
        s->want = next_from(s, to);
        return;
    case OP_NOMEM:
        s->nomem_left = 3;
        s->nomem_at = variant;
        return;
    default:
        return;
    }
    knc_part_seek(p, to, 3);
    assert_null(p->fetched);
    s->want = next_from(s, to);
}

/* Drains the log from offset 0 with polls of max records, applying op at
 * the when-th poll that leaves a batch open half-read. */
static void run(tlog *L, const knc_drain_opts *opts, int max, int nb, bool cut, int op, int when) {
    sim s = {L, NULL, opts, nb, cut, 0, 0, 0, 0};
    s.p = knc_part_new("t", 4, 1, KNC_RESET_EARLIEST, false);
    assert_non_null(s.p);
    knc_part_seek(s.p, 0, -1);
    s.want = next_from(&s, 0);
    int seen_mid = 0;
    bool applied = op == OP_NONE;
    for (int guard = 0; guard < 2000; guard++) {
        int got = poll_once(&s, max);
        if (!applied && mid_batch(s.p) && seen_mid++ == when) {
            apply_op(&s, op, when);
            applied = true;
        }
        if (got == 0 && !s.p->fetched && knc_part_fetch_offset(s.p) >= L->end && s.nomem_left == 0)
            break;
    }
    if (op != OP_NONE && when == 0 && !applied) /* every run has a first chance */
        fail_msg("op %d (max %d, %d-batch slices%s): no poll left a batch open", op, max, nb,
                 cut ? ", cut" : "");
    if (s.want != L->end)
        fail_msg("op %d at %d (max %d, %d-batch slices%s): stopped before offset %lld", op, when,
                 max, nb, cut ? ", cut" : "", (long long)s.want);
    assert_int_equal(s.p->position, L->end);
    knc_part_free(s.p);
}

static void run_all(const knc_drain_opts *opts) {
    tlog L;
    log_build(&L);
    for (int max = 1; max <= 12; max++)
        for (int nb = 1; nb <= 3; nb++)
            for (int cut = 0; cut < 2; cut++)
                for (int op = 0; op < OP_COUNT; op++)
                    for (int when = 0; when < (op == OP_NONE ? 1 : 4); when++)
                        run(&L, opts, max, nb, cut != 0, op, when);
    kn_free(L.mem);
}

static void test_resume_uncommitted(void **state) {
    (void)state;
    knc_drain_opts o = {true, false, (size_t)16 << 20};
    run_all(&o);
}

static void test_resume_read_committed(void **state) {
    (void)state;
    knc_drain_opts o = {true, true, (size_t)16 << 20};
    run_all(&o);
}


/* Record shapes the fast reader meets or hands over, in polls of every
 * size: a LogAppendTime batch (every timestamp is the batch's max, type
 * log-append) with values long enough for two-byte lengths and one
 * record with a six-byte timestamp delta, then a batch whose fourth
 * record declares one byte more than its fields use: the records
 * before it come out, then the partition fails naming its offset. */
static void test_record_shapes(void **state) {
    (void)state;
    const knc_drain_opts no_crc = {false, false, (size_t)16 << 20}; /* the edit breaks the CRC */
    static uint8_t big[300];
    memset(big, 'x', sizeof big);
    for (int max = 1; max <= 12; max++) {
        kn_wr blob;
        kn_wr_init(&blob, 0, 0);
        kn_rb_builder_conf conf;
        kn_rb_builder_conf_init(&conf);
        conf.log_append_time = true;
        conf.log_append_time_ms = 5555;
        kn_rb_builder b;
        kn_rb_builder_init(&b, &conf, 0);
        for (int i = 0; i < 10; i++) {
            int64_t ts = 1000 + i + (i == 4 ? (int64_t)1 << 40 : 0);
            assert_int_equal(kn_rb_builder_append(&b, i, ts, (kn_bytes){NULL, -1},
                                                  (kn_bytes){big, i * 30}, NULL, 0),
                             0);
        }
        char es[128];
        assert_int_equal(kn_rb_builder_finish(&b, &blob, es, sizeof es), 0);
        kn_rb_builder_free(&b);
        size_t second = blob.len;
        kn_rb_builder_conf_init(&conf);
        conf.base_offset = 10;
        kn_rb_builder_init(&b, &conf, 0);
        for (int i = 0; i < 6; i++)
            assert_int_equal(kn_rb_builder_append(&b, i, 2000 + i, (kn_bytes){NULL, -1},
                                                  (kn_bytes){big, 5}, NULL, 0),
                             0);
        assert_int_equal(kn_rb_builder_finish(&b, &blob, es, sizeof es), 0);
        kn_rb_builder_free(&b);
        {
            kn_rb rb;
            kn_record rec;
            assert_int_equal(kn_rb_parse(&rb, blob.buf + second, blob.len - second, 0, es, sizeof es), 0);
            assert_int_equal(kn_rb_records_begin(&rb, NULL, es, sizeof es), 0);
            for (int i = 0; i < 3; i++)
                assert_int_equal(kn_rb_next(&rb, &rec, es, sizeof es), 1);
            uint8_t *len_byte = blob.buf + second + KN_RB_HEADER_SIZE + rb.rd.off;
            assert_true(*len_byte < 0x7e);
            *len_byte += 2; /* zigzag: one more byte */
        }
        size_t len;
        uint8_t *mem = kn_wr_detach(&blob, &len);
        kn_wr_free(&blob);
        knc_buf *buf = knc_buf_from_mem(mem);
        knc_part *p = knc_part_new("t", 4, 1, KNC_RESET_EARLIEST, false);
        knc_part_seek(p, 1, -1); /* the first record is below the position */
        p->fetched = knc_fetched_new(buf, mem, len, 1, NULL, 0);
        knc_buf_release(buf);
        int64_t next = 1;
        for (int round = 0; round < 40 && p->fetched && p->state == KNC_POS_VALID; round++) {
            kn_records *r = knc_records_new((size_t)max);
            int n = knc_drain(p, r, max, &no_crc);
            assert_true(n >= 0 && n <= max);
            for (size_t i = 0; i < kn_records_count(r); i++, next++) {
                assert_int_equal(kn_records_offset(r, i), next);
                size_t kl, vl;
                assert_null(kn_records_key(r, i, &kl));
                assert_non_null(kn_records_value(r, i, &vl));
                if (next < 10) {
                    assert_int_equal(vl, (size_t)next * 30);
                    assert_int_equal(kn_records_timestamp(r, i), 5555);
                    assert_int_equal(kn_records_timestamp_type(r, i), KN_TIMESTAMP_LOG_APPEND_TIME);
                } else {
                    assert_int_equal(vl, 5);
                    assert_int_equal(kn_records_timestamp(r, i), 2000 + next - 10);
                    assert_int_equal(kn_records_timestamp_type(r, i), KN_TIMESTAMP_CREATE_TIME);
                }
            }
            assert_int_equal(p->position, next);
            kn_records_free(r);
        }
        assert_int_equal(next, 13);
        assert_int_equal(p->state, KNC_POS_FAILED);
        assert_int_equal(p->err, KN_ERR__BAD_BATCH);
        assert_non_null(strstr(p->errstr, "t [4] at offset 13"));
        knc_part_free(p);
    }
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_resume_uncommitted),
        cmocka_unit_test(test_resume_read_committed),
        cmocka_unit_test(test_record_shapes),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
